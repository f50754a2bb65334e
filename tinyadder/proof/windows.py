"""The failing set of a model as windows of the sum, read off its digit formulas.

From ``formulas.digit_formulas`` (the model's own forward pass, symbolically): with the higher
digits of the sum s = a + b right, the digit of place p is right exactly when

    lo(sigma, y) < r + o(x) <= hi(sigma, y),     r = s mod 10^p,

sigma the true digit there, y the one above it, o(x) the offset: an exact affine form in the
digits of a, b and the (true) digits of s above p. A pair fails iff this fails at some place
(the first place it fails is where the model goes wrong), so the failing set is the union,
over places, of *windows*:

- a whole window: sigma in a set of digits, y in a set, r in [r_lo, r_hi]: a condition on s
  alone. Every pair with such a sum fails.
- a boundary window: the same with one residue r_lo = r_hi, where r + o(x) is within the
  offset's range of the threshold: the pair fails iff o(x) > c (or o(x) <= c), which depends
  on the digits of a and b themselves.

``windows`` lists them, whole windows first; ``census`` counts their union.
"""

from dataclasses import dataclass
from fractions import Fraction
from math import floor
from typing import FrozenSet, Optional, Tuple


@dataclass(frozen=True)
class Window:
    """Pairs whose sum s has digit in ``digits`` at place p = ``place``, the digit above it in
    ``above`` (None: no condition, at the first decision), and r = s mod 10^p in
    [r_lo, r_hi]; a boundary window also needs o(x) ``cond[0]`` ``cond[1]`` ('>' or '<='),
    o the offset of the formula ``t``. ``side``: 'high' (the model's digit is too high: a
    false carry) or 'low'."""

    t: int
    place: int
    digits: FrozenSet[int]
    above: Optional[FrozenSet[int]]
    r_lo: int
    r_hi: int
    cond: Optional[Tuple[str, Fraction]]
    side: str

    def describe(self, bias=0):
        """One line; a boundary condition is on the offset bias + o(x) (as ``prove`` shows
        it), bias being the formula's."""
        p = self.place
        ds = _digit_set(self.digits)
        r = (f"s mod 10^{p} = {self.r_lo}" if self.r_lo == self.r_hi else
             f"s mod 10^{p} in [{self.r_lo}, {self.r_hi}]")
        above = "" if self.above is None or len(self.above) == 10 else \
            f", digit above {_digit_set(self.above)}"
        cond = ("" if self.cond is None else
                f", offset {self.cond[0]} {float(self.cond[1] + bias):.6g}")
        side = "" if self.side == "high" else " (too low)"
        return f"place 10^{p}{side}: digit {ds}{above}, {r}{cond}"

    def holds_for(self, s, n):
        """Whether the sum s (of two n-digit numbers) has this window's digit pattern."""
        p = self.place
        digit = s // 10 ** n if p == n else (s // 10 ** p) % 10
        if digit not in self.digits:
            return False
        if self.above is not None and (s // 10 ** (p + 1)) % 10 not in self.above:
            return False
        return self.r_lo <= s % 10 ** p <= self.r_hi

    def digits_at(self, c):
        """The digits s may have at column c (10^c) in this window (None: any)."""
        p = self.place
        if c == p + 1:
            return self.above
        if c == p:
            return self.digits
        if c < p and self.r_lo == self.r_hi:
            return {(self.r_lo // 10 ** c) % 10}
        return None


def _digit_set(ds):
    ds = sorted(ds)
    if len(ds) > 2 and ds == list(range(ds[0], ds[-1] + 1)):
        return f"{ds[0]}..{ds[-1]}"
    return ",".join(map(str, ds))


def compatible(v, w):
    """Whether windows v and w can share a sum (their fixed digits do not conflict)."""
    for c in range(min(v.place, w.place) + 2):
        dv, dw = v.digits_at(c), w.digits_at(c)
        if dv is not None and dw is not None and not dv & dw:
            return False
    return True


def windows(formulas):
    """The failing set as windows, whole windows first."""
    found = {}
    for f in formulas:
        P = 10 ** f.place
        top = 1 if f.t == 0 else 9
        g = f.guard
        for y in f.lo:
            omin, omax = f.offset_range(y)
            for sigma in range(top + 1):
                r_max = P - 1 if not (f.t == 0 and sigma == 1) else P - 2
                hi, lo = f.hi[y][sigma], f.lo[y][sigma]
                if hi is not None:  # fails when r + o > hi
                    full = max(floor(hi - omin + g) + 1, 0)
                    if full <= r_max:
                        _add(found, f, sigma, y, full, r_max, None, "high")
                    for r in range(max(floor(hi - omax - g) + 1, 0), min(full, r_max + 1)):
                        _add(found, f, sigma, y, r, r, (">", hi - r), "high")
                if lo is not None:  # fails when r + o <= lo
                    full = min(floor(lo - omax - g), r_max)
                    if full >= 0:
                        _add(found, f, sigma, y, 0, full, None, "low")
                    for r in range(max(full + 1, 0), min(floor(lo - omin + g), r_max) + 1):
                        _add(found, f, sigma, y, r, r, ("<=", lo - r), "low")
    merged = {}
    for (t, place, sigma, r_lo, r_hi, cond, side), ys in found.items():
        above = None if ys == {None} else frozenset(ys)
        merged.setdefault((t, place, above, r_lo, r_hi, cond, side), set()).add(sigma)
    out = [Window(t, place, frozenset(ds), above, r_lo, r_hi, cond, side)
           for (t, place, above, r_lo, r_hi, cond, side), ds in merged.items()]
    out.sort(key=lambda w: (w.cond is not None, w.t, w.side, min(w.digits), w.r_lo))
    return out


def _add(found, f, sigma, y, r_lo, r_hi, cond, side):
    found.setdefault((f.t, f.place, sigma, r_lo, r_hi, cond, side), set()).add(y)
