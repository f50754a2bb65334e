"""The fraction system: exact rationals, e^x rounded once per argument and recorded."""

from contextlib import nullcontext
from dataclasses import dataclass
from fractions import Fraction

from ..constants import ExpTerm, Ln
from .enclosures import enclosure
from .protocol import (DEFAULT_EXP_DIGITS, EXP_GUARD_DIGITS, MAX_CERTIFIED_DIGITS, Rounding,
                       Undecided, _exp_rounded, _Fits)


@dataclass(frozen=True)
class LogScore:
    """``rational + ln_coef * ln(base)`` exactly, with an integer ln_coef: an ALiBi slope ln b
    and the attention scores it makes (fraction system only). It adds and subtracts
    rationals and its like, and multiplies by integers (distances); a result with no ln part
    is a plain Fraction, so e^(q k - d ln b) = e^(q k) b^-d stays exact in its ln part.

    Its text, '-40 - 23*ln 10', is what the tracer shows and the JSON trace stores.

    >>> slope = LogScore(Fraction(0), 1, Fraction(10))
    >>> Fraction(-40) - slope * 23
    LogScore(rational=Fraction(-40, 1), ln_coef=-23, base=Fraction(10, 1))
    >>> Fraction(7) - slope * 0
    Fraction(7, 1)
    """

    rational: Fraction
    ln_coef: int
    base: Fraction

    def __str__(self):
        sign = "-" if self.ln_coef < 0 else "+"
        return f"{self.rational} {sign} {abs(self.ln_coef)}*ln {self.base}"

    @staticmethod
    def of(rational, ln_coef, base):
        """The value ``rational + ln_coef * ln(base)``: a Fraction when the ln part is 0."""
        if ln_coef == 0 or base == 1:
            return Fraction(rational)
        return LogScore(Fraction(rational), ln_coef, base)

    def _rational(self, other):
        if isinstance(other, (int, Fraction)) and not isinstance(other, bool):
            return Fraction(other)
        return None

    def __add__(self, other):
        if isinstance(other, LogScore) and other.base == self.base:
            return LogScore.of(self.rational + other.rational, self.ln_coef + other.ln_coef,
                               self.base)
        r = self._rational(other)
        return NotImplemented if r is None else LogScore.of(self.rational + r, self.ln_coef,
                                                            self.base)

    __radd__ = __add__

    def __neg__(self):
        return LogScore.of(-self.rational, -self.ln_coef, self.base)

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented  # only integer multiples keep e^(c ln b) = b^c rational
        return LogScore.of(self.rational * other, self.ln_coef * other, self.base)

    __rmul__ = __mul__



class FractionSystem(_Fits):
    """Exact rationals; e**x for rational x != 0 rounded to ``exp_digits`` digits once per x.

    Without ``exp_digits`` it is 50, or a model's precision + 10 after ``fit``. Its tokens are
    decided over intervals (``decider``) and certified for the real-number model.
    """

    name = "fraction"
    exact = True  # products may be regrouped (forward, rule 5): the values do not change

    def __init__(self, exp_digits=None, picked=""):
        self.explicit = exp_digits is not None
        self.exp_digits = DEFAULT_EXP_DIGITS if exp_digits is None else exp_digits
        self.picked = picked
        self._exp = {}
        self._decider = None
        self.zero = Fraction(0)
        self.one = Fraction(1)

    def __repr__(self):
        return f"FractionSystem(exp_digits={self.exp_digits})"

    @property
    def spec(self):
        return self.name

    def describe(self):
        why = f"; picked: {self.picked}" if self.picked else ""
        return (f"fraction (exact; e^x rounded to {self.exp_digits} digits once per "
                f"argument x{why})")

    def _at(self, need):
        digits = need.digits + EXP_GUARD_DIGITS
        why = f"{EXP_GUARD_DIGITS} more than the model's precision, {need.why}"
        return FractionSystem(digits, picked=why if digits != DEFAULT_EXP_DIGITS else "")

    @property
    def roundings(self):
        """Every value this system has rounded, in the order it first did so."""
        return list(self._exp.values())

    def arithmetic(self):
        return nullcontext()

    def const(self, c):
        if isinstance(c, ExpTerm):
            return c.coef * self.exp(c.power)
        if isinstance(c, Ln):
            raise TypeError(f"{c} is irrational; it can only be an ALiBi slope")
        return Fraction(c)

    def slope(self, c):
        """Kept symbolic: ln b is the :class:`LogScore` 0 + 1 ln b."""
        return LogScore.of(0, 1, c.base) if isinstance(c, Ln) else Fraction(c)

    def exp(self, x):
        """e**x: exactly 1 for x == 0; for x < 0 correctly rounded to exp_digits digits (once
        per x, memoised, recorded); for x > 0 exactly 1 / e**-x; e^(r + c ln b) = e^r b^c."""
        if isinstance(x, LogScore):
            return self.exp(x.rational) * x.base ** x.ln_coef
        x = Fraction(x)
        if x == 0:
            return self.one
        if x > 0:
            return 1 / self.exp(-x)
        hit = self._exp.get(x)
        if hit is None:
            value = Fraction(_exp_rounded(x, self.exp_digits))
            hit = self._exp[x] = Rounding(f"exp({x})", self.exp_digits, value)
        return hit.value

    def decider(self):
        """Intervals at ``exp_digits`` digits that contain this system's values and the real
        model's (memoised: the interval model compiles once)."""
        if self._decider is None:
            self._decider = enclosure(self.exp_digits)
        return self._decider

    def refined(self):
        """The same system with twice the exp digits (``explicit``, so ``fit`` keeps them)."""
        digits = 2 * self.exp_digits
        if digits > MAX_CERTIFIED_DIGITS:
            raise Undecided(f"no decision certified with e^x rounded to up to "
                            f"{self.exp_digits} digits (a tie in the real-number model?)")
        return FractionSystem(digits, picked=f"raised from {self.exp_digits} digits to "
                                             f"certify every decision")


