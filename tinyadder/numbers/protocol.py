"""What every number system offers a forward pass (the :class:`NumberSystem` Protocol),
and the pieces the systems share: :class:`Precision`, :class:`Rounding`, :class:`Undecided`
and decimal contexts."""

from dataclasses import dataclass
from fractions import Fraction
import decimal
from typing import ContextManager, Protocol, Sequence, runtime_checkable

DEFAULT_EXP_DIGITS = 50
DEFAULT_DECIMAL_DIGITS = 40
EXP_GUARD_DIGITS = 10  # fraction rounds exp to this many digits beyond a model's precision
MAX_CERTIFIED_DIGITS = 100_000  # refined() gives up beyond this (never reached by the adder)


@runtime_checkable
class NumberSystem(Protocol):
    """What a forward pass and ``generate`` use of a number system (``isinstance`` checks
    that the members are there)."""

    name: str        # 'fraction', 'decimal', 'float', 'float32', 'interval'
    spec: str        # the text ``number_system`` parses back to this system (not interval)
    zero: object
    one: object
    roundings: Sequence["Rounding"]  # irrational values rounded so far (fraction only)
    exact: bool      # no rounding to respect (fraction, enclosures): products may be regrouped

    def describe(self) -> str:
        """One line for people: the system and its precision."""

    def fit(self, need: "Precision") -> "NumberSystem":
        """This system at the precision a model needs, unless its precision was given."""

    def arithmetic(self) -> ContextManager:
        """The context a forward pass runs in (decimal's precision and rounding)."""

    def const(self, c) -> object:
        """A construction constant (int, Fraction, ExpTerm) as a value."""

    def slope(self, c) -> object:
        """An ALiBi slope (0, a rational or Ln) as a value that ``slope * distance`` and
        ``score - slope * distance`` take (the fraction system keeps ln b symbolic)."""

    def exp(self, x) -> object:
        """e**x of a value of this system (an attention score, say)."""

    def decider(self) -> "NumberSystem":
        """The system whose comparisons pick this system's tokens (itself, or intervals
        around its values); its comparisons may raise :class:`Undecided`."""

    def refined(self) -> "NumberSystem":
        """This system at a higher precision, for a decision ``decider`` left open."""


class Undecided(ArithmeticError):
    """A comparison of intervals that overlap: the precision does not settle it."""


@dataclass(frozen=True)
class Precision:
    """Significant digits a model's arithmetic needs, and why (shown by ``describe()``)."""

    digits: int
    why: str = ""


class _Fits:
    """``fit(need)`` for systems with a precision: memoised, so a model compiles once per need.

    ``describe()`` names the reason for a pick that differs from the default precision.
    """

    def fit(self, need):
        """This system at ``need.digits`` digits, unless its precision was given explicitly."""
        if need is None or self.explicit:
            return self
        fits = self.__dict__.setdefault("_fits", {})
        if need not in fits:
            fits[need] = self._at(need)
        return fits[need]


class _Decides:
    """A rounding system decides its own tokens: its rounded values are its answer."""

    exact = False  # its order of operations defines its values

    def decider(self):
        return self

    def refined(self):
        raise Undecided(f"{self.name} compares its own values; nothing to refine")


@dataclass(frozen=True)
class Rounding:
    """One value the fraction system rounded: ``what`` to ``digits`` significant digits."""

    what: str
    digits: int
    value: object

    def __str__(self):
        return f"{self.what} rounded to {self.digits} significant digits"


def _decimal_context(digits, rounding=decimal.ROUND_HALF_EVEN):
    return decimal.Context(prec=digits, rounding=rounding,
                           Emin=-decimal.MAX_EMAX, Emax=decimal.MAX_EMAX, traps=[
                               decimal.InvalidOperation, decimal.DivisionByZero,
                               decimal.Overflow])


def _decimal_of(x, ctx):
    """A rational as a Decimal rounded in ctx (exact when the rational is a short decimal)."""
    x = Fraction(x)
    return ctx.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))


def _exp_rounded(x, digits):
    """e**x for a rational x < 0, correctly rounded to ``digits`` significant digits (x not a
    short decimal: evaluated with 20 guard digits first, then rounded)."""
    ctx = _decimal_context(digits)
    if x.denominator == 1:
        return ctx.exp(decimal.Decimal(x.numerator))
    guard = _decimal_context(digits + 20)
    return ctx.plus(guard.exp(_decimal_of(x, guard)))


