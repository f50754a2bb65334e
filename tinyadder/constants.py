"""Exact constants a model is written with: :class:`Ln` (ln of a rational) and :class:`ExpTerm`
(a rational times e to a rational power). A leaf module: a model's data does not depend on the
arithmetic that runs it.

Like ``fractions.Fraction``, they keep inexactness visible: arithmetic with a float is not
defined (``NotImplemented``), so a float never turns silently into a constant.

>>> exp_of(40) / 10
ExpTerm(coef=Fraction(1, 10), power=Fraction(40, 1))
>>> exp_of(40) * 0.1
Traceback (most recent call last):
    ...
TypeError: unsupported operand type(s) for *: 'ExpTerm' and 'float'
"""

from dataclasses import dataclass
from fractions import Fraction


def is_rational(x):
    """Whether x is an exact rational: an int (not a bool) or a Fraction."""
    return isinstance(x, (int, Fraction)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Ln:
    """ln(base) for a positive rational base: a slope whose decay per position is exact."""

    base: Fraction

    def __str__(self):
        return f"ln {self.base}"


@dataclass(frozen=True)
class ExpTerm:
    """coef * e**power with rational coef and power; closed under * and / by rationals."""

    coef: Fraction
    power: Fraction

    def __mul__(self, other):
        if isinstance(other, ExpTerm):
            return ExpTerm(self.coef * other.coef, self.power + other.power)
        if not is_rational(other):
            return NotImplemented
        return ExpTerm(self.coef * other, self.power)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, ExpTerm):
            return ExpTerm(self.coef / other.coef, self.power - other.power)
        if not is_rational(other):
            return NotImplemented
        return ExpTerm(self.coef / Fraction(other), self.power)

    def __rtruediv__(self, other):
        if not is_rational(other):
            return NotImplemented
        return ExpTerm(Fraction(other) / self.coef, -self.power)

    def __neg__(self):
        return ExpTerm(-self.coef, self.power)

    def __str__(self):
        coef = "" if self.coef == 1 else f"{self.coef}*"
        return f"{coef}e^{self.power}"


def exp_of(power):
    """e**power as a symbolic constant."""
    return ExpTerm(Fraction(1), Fraction(power))


def is_zero(c):
    """Whether a construction constant is zero (an ExpTerm is zero when its coef is)."""
    return c.coef == 0 if isinstance(c, ExpTerm) else c == 0


