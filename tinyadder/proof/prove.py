"""The proof: does the model add every one of the 10^(2N) pairs right?

By induction on the digits emitted, most significant first. Suppose the digits above place p
are right. ``digit_formulas`` gives the digit emitted at place p exactly: it is the true digit
sigma iff  lo(sigma, y) < r + o(x) <= hi(sigma, y)  with r = s mod 10^p in [0, 10^p - 1] and
o(x) the offset, an exact affine form in the digits (y the digit above). So the digit is right
for every pair when, for every previous digit y and every sigma,

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

from ..modelfile import dump
from ..numbers import for_model, number_system
from .closedform_check import FORMAT  # the format's name only: the checker shares no logic
from .formulas import digit_formulas, layout
from .symbolic import NotAffine


@dataclass(frozen=True)
class Row:
    """One deciding position: the offset's range and the interval it must stay in (both
    shifted by the formula's bias, in units of the sum), and whether it does."""

    t: int
    position: int
    place: int
    low: float         # min of bias + o(x) (to a float's precision: ``proved`` is exact)
    high: float        # max of bias + o(x)
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
    formulas: list      # the DigitFormula of each deciding position
    refusal: Optional[str] = None
    exp_digits: int = 0

    @property
    def proved(self):
        return self.refusal is None and all(r.proved for r in self.rows)


def row(formula):
    """The Row of one deciding position (see the module docstring)."""
    P = 10 ** formula.place
    top = 1 if formula.t == 0 else 9  # the first digit of a sum of two N-digit numbers is 0 or 1
    g, bias = formula.guard, formula.bias
    lows, highs, safe_lo, safe_hi, ok = [], [], [], [], True
    for y in formula.lo:
        omin, omax = formula.offset_range(y)
        lows.append(float(omin))
        highs.append(float(omax))
        for sigma in range(top + 1):
            lo, hi = formula.lo[y][sigma], formula.hi[y][sigma]
            if lo is not None:
                safe_lo.append(lo + g)
                ok = ok and omin > safe_lo[-1]
            if hi is not None:
                safe_hi.append(hi - g - (P - 1))
                ok = ok and omax <= safe_hi[-1]
    return Row(formula.t, formula.position, formula.place, min(lows) + float(bias),
               max(highs) + float(bias), max(safe_lo) + bias, min(safe_hi) + bias, ok)


def prove(model, progress=None, formulas=None, jobs=1):
    """The Proof for ``model``; ``refusal`` set (and nothing proved) where the method does
    not reach: the symbolic pass or a condition it checks failed. ``jobs``: processes for
    the symbolic pass (``digit_formulas``)."""
    try:
        lay = layout(model)
        formulas = formulas if formulas is not None else digit_formulas(model, progress, jobs)
    except NotAffine as why:
        return Proof(model.name, model.prompt.digits, [], [], refusal=str(why))
    bad = [f for f in formulas if f.tilt_ratio >= 1]
    if bad:
        f = bad[0]
        return Proof(model.name, lay.digits, [], formulas, refusal=(
            f"at position {f.position} neighbouring tilts differ by {float(f.tilt_ratio):.3g}"
            f" times the gain: the digit is not the number of thresholds passed"))
    exp_digits = for_model(number_system("fraction"), model).exp_digits
    return Proof(model.name, lay.digits, [row(f) for f in formulas], formulas,
                 exp_digits=exp_digits)


def certificate(proof, model, name):
    """The proof's data for ``tinyadder check-certificate``: exact rationals as strings, the
    model's file text (what the certificate is about) and its ``name`` (a label)."""
    q = str
    return {
        "format": FORMAT,
        "variant": name,
        "model": dump(model),
        "digits": proof.digits,
        "exp_digits": proof.exp_digits,
        "claim": "every pair of N-digit numbers is added right",
        "decisions": [{
            "t": f.t, "position": f.position, "place": f.place,
            "L": {str(v): q(c) for v, c in sorted(f.L.coefs().items())},
            "marks": [q(m) for m in f.marks],
            "gain": q(f.gain), "guard": q(f.guard),
            "tilts": {("-" if y is None else str(y)): [q(x) for x in row]
                      for y, row in f.tilts.items()},
        } for f in proof.formulas],
    }
