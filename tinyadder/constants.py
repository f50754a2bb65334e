"""Exact constants a model is written with: :class:`Ln` (ln of a rational) and :class:`ExpTerm`
(a rational times e to a rational power). A leaf module: a model's data does not depend on the
arithmetic that runs it."""

from dataclasses import dataclass
from fractions import Fraction


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
        return ExpTerm(self.coef * Fraction(other), self.power)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, ExpTerm):
            return ExpTerm(self.coef / other.coef, self.power - other.power)
        return ExpTerm(self.coef / Fraction(other), self.power)

    def __rtruediv__(self, other):
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


