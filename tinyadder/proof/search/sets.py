"""Sets of operand pairs: the regions the generic prover splits (``generic``).

A :class:`Region` of N-digit pairs (a, b) is a box of digit ranges, a_j in [alo_j, ahi_j] and
b_j in [blo_j, bhi_j] for each column j (place 10^j), cut by two kinds of constraints on the
sum s = a + b: the carry c_j into column j fixed (c_0 = 0; c_N is the sum's top digit), and
the digit s_j of the sum at place j held in a range [lo, hi]. Every question about a region is answered exactly by
one walk over the columns from the lowest, whose state is the carry:

    count      the number of pairs in the region;
    bound(F)   the least and the greatest value over the region's pairs of an affine form
               F = k + sum_j (alpha_j a_j + beta_j b_j) + sum_j gamma_j c_j  (c_j the carry
               into column j, a function of the pair) + sum_(j, d) (w_jd [a_j = d] +
               w'_jd [b_j = d] + w''_jd [s_j = d])  (indicators, the variables ("a", j, d),
               ("b", j, d), ("s", j, d): 1 when the digit is d, else 0; each is known at
               every step of the walk), with a pair that attains each.

Splits make children that partition their parent: a digit range cut in two at ``mid``
(``("a", j, mid)``: [lo, mid] and [mid + 1, hi]), the carry into column j (``("c", j)``: children c_j = 0, 1) or the range of the sum's digit at place j (``("s", j, mid)``: s_j in
[lo, mid] and in [mid + 1, hi]).
A child with no pair is kept (its count is 0), so a child's index names its constraint.
"""

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from math import gcd
from typing import Tuple

from ..kernel.setcheck import live_steps, steps

ZERO = Fraction(0)


def a_var(j):
    return ("a", j)


def b_var(j):
    return ("b", j)


def c_var(j):
    """The carry into column j (1 <= j <= N)."""
    return ("c", j)


@dataclass(frozen=True)
class Region:
    """A set of N-digit pairs: digit ranges per column and fixed carries and sum digits."""

    digits: int
    a: Tuple[Tuple[int, int], ...]   # (lo, hi) per column, column 0 first
    b: Tuple[Tuple[int, int], ...]
    carries: Tuple[Tuple[int, int], ...] = ()   # (column j, c_j), sorted
    sums: Tuple[Tuple[int, int, int], ...] = ()  # (place j, lo, hi): lo <= s_j <= hi, sorted

    @classmethod
    def every(cls, digits):
        """All 10^(2N) pairs."""
        full = ((0, 9),) * digits
        return cls(digits, full, full)

    def carry(self, j):
        """The fixed carry into column j, or None (column 0's is 0)."""
        return 0 if j == 0 else dict(self.carries).get(j)

    def sum_range(self, j):
        """(lo, hi): the sum's digit at place j lies in lo..hi (place N's is the carry c_N)."""
        if j == self.digits:
            c = self.carry(j)
            return (0, 1) if c is None else (c, c)
        for place, lo, hi in self.sums:
            if place == j:
                return lo, hi
        return 0, 9

    def sum_digit(self, j):
        """The sum's digit at place j where the region fixes it, else None."""
        lo, hi = self.sum_range(j)
        return lo if lo == hi else None

    def ranges(self):
        """{variable: (lo, hi)}: a box around the region (carries in 0..1 unless fixed)."""
        out = {}
        for j in range(self.digits):
            out[a_var(j)], out[b_var(j)] = self.a[j], self.b[j]
        for j in range(1, self.digits + 1):
            c = self.carry(j)
            out[c_var(j)] = (0, 1) if c is None else (c, c)
        return out

    # ---- the walk over the columns --------------------------------------------------------
    def count(self):
        """How many pairs the region holds."""
        ways = {0: 1}
        for j in range(self.digits):
            new = {}
            for c, _, _, out in _steps(self, j):
                if c in ways:
                    new[out] = new.get(out, 0) + ways[c]
            ways = new
        return sum(ways.values())

    def bound(self, coefs, const=ZERO):
        """(least, greatest, pair attaining the least, pair attaining the greatest) of
        const + sum coefs[v] v over the region's pairs (None for an empty region)."""
        low = self._extreme(coefs, const, min)
        if low is None:
            return None
        high = self._extreme(coefs, const, max)
        return low[0], high[0], low[1], high[1]

    def _extreme(self, coefs, const, pick):
        # over one common denominator D the walk adds integers only (D = 1 for integers)
        n = self.digits
        D = 1
        for c in coefs.values():
            if c.denominator != 1:
                D = D * c.denominator // gcd(D, c.denominator)
        whole = {v: int(c * D) for v, c in coefs.items()} if D != 1 else coefs
        columns = _by_column(whole, n)
        best = {0: (0, 0, 0)}   # carry -> (value so far times D, a so far, b so far)
        for j in range(n):
            alpha, beta, gamma, ta, tb, ts = columns[j]
            new = {}
            place = 10 ** j
            for c, x, y, out in _steps(self, j):
                if c not in best:
                    continue
                v, pa, pb = best[c]
                value = v + alpha * x + beta * y + gamma * c
                if ta is not None:
                    value += ta[x]
                if tb is not None:
                    value += tb[y]
                if ts is not None:
                    value += ts[(x + y + c) % 10]
                if out not in new or pick(value, new[out][0]) != new[out][0]:
                    new[out] = (value, pa + x * place, pb + y * place)
            best = new
        if not best:
            return None
        top = whole.get(c_var(n), 0)
        value, pa, pb = pick(((v + top * c, pa, pb) for c, (v, pa, pb) in best.items()),
                             key=lambda t: t[0])
        return const + (value if D == 1 else Fraction(value, D)), (pa, pb)

    def column_steps(self, j):
        """(carry in, a_j, b_j, carry out) of column j at some pair of the region: allowed by
        the column's constraints, its carry in reachable from column 0 and its carry out
        continued by the columns above."""
        return _live(self)[j]

    def pairs(self, limit):
        """The region's pairs (a, b), if there are at most ``limit``; else None."""
        if self.count() > limit:
            return None
        found = [(0, 0, 0)]  # (carry, a so far, b so far)
        for j in range(self.digits):
            steps = _steps(self, j)
            found = [(out, pa + x * 10 ** j, pb + y * 10 ** j) for c0, pa, pb in found
                     for c, x, y, out in steps if c == c0]
        return sorted((pa, pb) for _, pa, pb in found)

    # ---- splits ---------------------------------------------------------------------------
    def children(self, split):
        """The regions ``split`` cuts this one into (see the module docstring)."""
        kind, j = split[0], split[1]
        if kind in ("a", "b"):
            mid = split[2]
            lo, hi = getattr(self, kind)[j]
            if not lo <= mid < hi:
                raise ValueError(f"cannot cut {kind}_{j} in [{lo}, {hi}] at {mid}")
            cut = [getattr(self, kind)[:j] + ((lo, mid),) + getattr(self, kind)[j + 1:],
                   getattr(self, kind)[:j] + ((mid + 1, hi),) + getattr(self, kind)[j + 1:]]
            return [replace(self, **{kind: ranges}) for ranges in cut]
        if kind == "c":
            if not 1 <= j <= self.digits or self.carry(j) is not None:
                raise ValueError(f"cannot split on the carry into column {j}")
            return [replace(self, carries=tuple(sorted(self.carries + ((j, c),))))
                    for c in (0, 1)]
        if kind == "s":
            lo, hi = self.sum_range(j) if 0 <= j < self.digits else (0, 0)
            mid = split[2]
            if not lo <= mid < hi:
                raise ValueError(f"cannot cut the sum's digit at place {j} in [{lo}, {hi}] "
                                 f"at {mid}")
            rest = tuple(s for s in self.sums if s[0] != j)
            return [replace(self, sums=tuple(sorted(rest + (cut,))))
                    for cut in ((j, lo, mid), (j, mid + 1, hi))]
        raise ValueError(f"unknown split {split!r}")

    def describe(self):
        """'a_1 in 0..4, s_0 = 7, c_1 = 1' (what is not full), or 'every pair'."""
        parts = []
        for name, ranges in (("a", self.a), ("b", self.b)):
            for j in reversed(range(self.digits)):
                lo, hi = ranges[j]
                if (lo, hi) != (0, 9):
                    parts.append(f"{name}_{j} = {lo}" if lo == hi else f"{name}_{j} in {lo}..{hi}")
        parts += [f"s_{j} = {lo}" if lo == hi else f"s_{j} in {lo}..{hi}"
                  for j, lo, hi in reversed(self.sums)]
        parts += [f"c_{j} = {c}" for j, c in reversed(self.carries)]
        return ", ".join(parts) or "every pair"


def _by_column(coefs, n):
    """Per column j: (alpha, beta, gamma, the tables of [a_j = d], [b_j = d], [s_j = d] by d
    or None), alpha, beta, gamma the coefficients of a_j, b_j and the carry into j."""
    tables = {}
    for v, c in coefs.items():
        if len(v) == 3:
            tables.setdefault(v[:2], [0] * 10)[v[2]] = c
    get = coefs.get
    return [(get(a_var(j), 0), get(b_var(j), 0), get(c_var(j), 0) if j else 0,
             tables.get(("a", j)), tables.get(("b", j)), tables.get(("s", j)))
            for j in range(n)]


def walk_region(region):
    """The region as the kernel's walk reads it (``setcheck.steps``): digit ranges, the sum's
    digit ranges and the carries' allowed values by column."""
    n = region.digits
    carries = [{0}] + [{0, 1} if region.carry(j) is None else {region.carry(j)}
                       for j in range(1, n + 1)]
    return {"a": region.a, "b": region.b, "s": [region.sum_range(j) for j in range(n)],
            "c": carries}


@lru_cache(maxsize=1 << 12)
def _live(region):
    """Each column's steps that lie on a whole walk (``Region.column_steps``): the kernel's
    ``setcheck.live_steps``."""
    return [tuple(st) for st in live_steps(walk_region(region), region.digits)]


@lru_cache(maxsize=1 << 14)
def _steps(region, j):
    """(carry in, a_j, b_j, carry out) of column j that the region's constraints allow (the
    kernel's ``setcheck.steps``)."""
    return tuple(steps(walk_region(region), region.digits, j))
