"""The proof: does the model add every one of the 10^(2N) pairs right?

By induction on the digits emitted, most significant first. Suppose the digits above place p
are right. ``decisions`` gives the digit emitted at place p exactly: it is the true digit sigma
iff  lo(sigma, y) < r + o(x) <= hi(sigma, y)  with r = s mod 10^p in [0, 10^p - 1] and o(x)
the offset, an exact affine form in the digits (y the digit above). So the digit is right for
every pair when, for every previous digit y and every sigma,

    min o(x) > lo(sigma, y) + guard        (r = 0, the lowest remainder)
    max o(x) + 10^p - 1 <= hi(sigma, y) - guard   (r = 10^p - 1, the highest)

over the digit box (every digit of a, b and of the answer in 0..9, the previous one set to y:
a superset of the pairs, so the bounds are safe). ``guard`` covers the real-number model: every
rounded exponential of the fraction system replaced by an interval that contains the exact
value. If this holds at every place, every pair is added right, in exact arithmetic and for
the real-number model; where it fails the census counts the pairs that fail.

The report gives, per deciding position, the offset in units of the sum, shifted by the mean
threshold shift ``bias`` (for the published construction, b_i + leakage of docs/digits.md),
and the interval it must stay in.
"""

from dataclasses import dataclass
from fractions import Fraction
from typing import List, Optional

from .decisions import decisions, layout


@dataclass(frozen=True)
class Row:
    """One deciding position: the offset's range and the interval it must stay in (both
    shifted by the decision's bias, in units of the sum), and whether it does."""

    t: int
    position: int
    place: int
    low: Fraction      # min of bias + o(x)
    high: Fraction     # max of bias + o(x)
    safe_lo: Fraction  # bias + o must exceed this (open) ...
    safe_hi: Fraction  # ... and stay at or below this, at every remainder
    proved: bool

    @property
    def margin(self):
        return min(self.low - self.safe_lo, self.safe_hi - self.high)


@dataclass
class Proof:
    model: str
    digits: int
    rows: List[Row]
    decisions: list
    refusal: Optional[str] = None
    exp_digits: int = 0

    @property
    def proved(self):
        return self.refusal is None and all(r.proved for r in self.rows)


def offset_range(decision, fixed):
    """(min, max) of o(x) over the digit box, with the variables in ``fixed`` set."""
    lo = hi = decision.offset0
    for v, k in decision.offset.items():
        if v in fixed:
            lo += k * fixed[v]
            hi += k * fixed[v]
        elif k > 0:
            hi += 9 * k
        else:
            lo += 9 * k
    return lo, hi


def check(decision):
    """The Row of one decision (see the module docstring)."""
    P = 10 ** decision.place
    top = 1 if decision.t == 0 else 9  # the first digit of a sum of two N-digit numbers is 0 or 1
    g, bias = decision.guard, decision.bias
    low = high = None
    safe_lo, safe_hi, ok = None, None, True
    for y in decision.lo:
        fixed = {} if y is None else {decision.previous: y}
        omin, omax = offset_range(decision, fixed)
        low = omin if low is None else min(low, omin)
        high = omax if high is None else max(high, omax)
        for sigma in range(top + 1):
            lo, hi = decision.lo[y][sigma], decision.hi[y][sigma]
            if lo is not None:
                ok = ok and omin > lo + g
                safe_lo = lo + g if safe_lo is None else max(safe_lo, lo + g)
            if hi is not None:
                ok = ok and omax + P - 1 <= hi - g
                edge = hi - g - (P - 1)
                safe_hi = edge if safe_hi is None else min(safe_hi, edge)
    return Row(decision.t, decision.position, decision.place, low + bias, high + bias,
               safe_lo + bias, safe_hi + bias, ok)


def prove(model, progress=None, decs=None):
    """The Proof for ``model``; ``refusal`` set (and nothing proved) where the method does
    not reach: the symbolic pass or a condition it checks failed."""
    from .symbolic import NotAffine
    lay = layout(model)
    try:
        decs = decs if decs is not None else decisions(model, progress=progress)
    except NotAffine as why:
        return Proof(model.name, lay.digits, [], [], refusal=str(why))
    bad = [d for d in decs if d.tilt_ratio >= 1]
    if bad:
        d = bad[0]
        return Proof(model.name, lay.digits, [], decs, refusal=(
            f"at position {d.position} neighbouring tilts differ by {float(d.tilt_ratio):.3g}"
            f" times the gain: the digit is not the number of thresholds passed"))
    from ...numbers import for_model, number_system
    exp_digits = for_model(number_system("fraction"), model).exp_digits
    return Proof(model.name, lay.digits, [check(d) for d in decs], decs, exp_digits=exp_digits)


def certificate(proof, variant):
    """The proof's data for ``tinyadder check-certificate``: exact rationals as strings."""
    from .certificate import FORMAT  # the format's name only: the checker shares no logic
    q = str
    return {
        "format": FORMAT,
        "variant": variant,
        "digits": proof.digits,
        "exp_digits": proof.exp_digits,
        "claim": "every pair of N-digit numbers is added right",
        "decisions": [{
            "t": d.t, "position": d.position, "place": d.place,
            "L": {str(v): q(c) for v, c in sorted(d.L.items())},
            "marks": [q(m) for m in d.marks],
            "gain": q(d.gain), "guard": q(d.guard),
            "tilts": {("-" if y is None else str(y)): [q(x) for x in row]
                      for y, row in d.tilts.items()},
        } for d in proof.decisions],
    }
