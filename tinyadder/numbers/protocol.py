"""What every number system offers a forward pass (the :class:`NumberSystem` Protocol),
and the pieces the systems share: :class:`Precision`, :class:`Rounding`, :class:`Undecided`
and decimal contexts."""

from contextlib import nullcontext
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
        """An exact constant as a value: int, Fraction, ExpTerm, Ln or an Expr tree
        (``constants``); a rounding system evaluates an Expr as a program would, the fraction
        system keeps it exact where it can and rounds it once otherwise."""

    def slope(self, c) -> object:
        """An ALiBi slope (0, a rational, Ln or an Expr) as a value that ``slope * distance``
        and ``score - slope * distance`` take (the fraction system keeps ln b symbolic)."""

    def exp(self, x) -> object:
        """e**x of a value of this system (an attention score, say)."""

    def sqrt(self, x) -> object:
        """The square root of a value of this system (RMSNorm's root mean square)."""

    def sin(self, x) -> object:
        """sin x of a value of this system (a rotary angle)."""

    def cos(self, x) -> object:
        """cos x of a value of this system (a rotary angle)."""

    def erf(self, x) -> object:
        """erf x of a value of this system (GELU)."""

    def largest(self, values) -> object:
        """A value every softmax score is measured from: a rounding system's max as a program
        takes it; an exact system any value near the largest, since the pattern does not
        depend on it. Never raises :class:`Undecided`."""

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


class OverSets:
    """A system whose values each hold a whole set of inputs (the provers'): no precision to
    fit, no arithmetic context, it decides its own comparisons, and an open one is not refined
    (the set is split instead)."""

    exact = True

    def fit(self, need):
        return self

    def arithmetic(self):
        return nullcontext()

    def decider(self):
        return self

    def refined(self):
        raise Undecided(f"the {self.name} system decides over its whole set of inputs or not "
                        f"at all")


class _Decides:
    """A rounding system decides its own tokens: its rounded values are its answer."""

    exact = False  # its order of operations defines its values

    def decider(self):
        return self

    def refined(self):
        raise Undecided(f"{self.name} compares its own values; nothing to refine")


@dataclass(frozen=True)
class Rounding:
    """One value the fraction system rounded: ``what`` to ``digits`` significant digits (a
    value of 0 to the absolute grid 10^-(2 digits): ``correctly_rounded``)."""

    what: str
    digits: int
    value: object

    def __str__(self):
        if self.value == 0:
            return f"{self.what} rounded to 0 (within 10^-{2 * self.digits} of 0)"
        return f"{self.what} rounded to {self.digits} significant digits"


def _decimal_context(digits, rounding=decimal.ROUND_HALF_EVEN):
    return decimal.Context(prec=digits, rounding=rounding,
                           Emin=-decimal.MAX_EMAX, Emax=decimal.MAX_EMAX, traps=[
                               decimal.InvalidOperation, decimal.DivisionByZero,
                               decimal.Overflow])


def _decimal_of(x, ctx):
    """A rational as a Decimal rounded in ctx (exact when the rational is a short decimal).

    A long rational n/d is first cut to q = floor(|n/d| 10^k), of ctx.prec + 3 digits or more,
    with a sticky digit 1 after q where the cut dropped something: that decimal rounds in every
    rounding mode as n/d does, and one integer division of n by d costs far less than
    converting both to Decimals (quadratic in their length)."""
    x = Fraction(x)
    n, d = abs(x.numerator), x.denominator
    # and below 14,000 bits (4,215 digits): a pure-Python decimal (PyPy's) reads an int
    # through str(), which refuses ints of over 4,300 digits
    if n.bit_length() + d.bit_length() < min(32 * ctx.prec + 4096, 14_000):
        return ctx.divide(decimal.Decimal(x.numerator), decimal.Decimal(d))
    # |x| >= 2^(b - 1) for b the difference of bit lengths, and log10 2 < 0.30103
    k = ctx.prec + 4 - (n.bit_length() - d.bit_length() - 1) * 30103 // 100000
    q, r = divmod(n * 10 ** k, d) if k >= 0 else divmod(n, d * 10 ** -k)
    cut = decimal.Decimal((int(x < 0), tuple(map(int, str(10 * q + (r > 0)))), -k - 1))
    return ctx.plus(cut)


def _rounded(x, ctx):
    """A Decimal or a rational rounded in ctx: a Decimal directly (its exact value, without
    expanding m 10^k into a rational of |k| digits), a rational by ``_decimal_of``."""
    return ctx.plus(x) if isinstance(x, decimal.Decimal) else _decimal_of(x, ctx)


def correctly_rounded(enclose, digits, what):
    """A real number correctly rounded to ``digits`` significant digits (half even), from
    ``enclose(extra)``: rationals lo <= value <= hi, known to about digits + extra digits.

    extra = 10, 20, 40, ... until both ends round alike: rounding is monotone, so the value
    rounds as they do. Past 4 digits + 64 extra digits (the value within 10^-(4 digits) of a
    rounding midpoint or of 0), an enclosure narrower than 10^-(digits + 1) of its ends gives
    the rounding of its centre, within an ulp of the value; an enclosure of 0 within half of
    10^-(2 digits) gives 0, the value correctly rounded to the absolute grid 10^-(2 digits)
    (sin(pi) is 0: no enclosure separates it from 0, and none needs to); a wider one raises
    ValueError (``what`` names the value).
    """
    ctx = _decimal_context(digits)
    extra = 10
    while True:
        ends = enclose(extra)
        down, up = (_rounded(end, ctx) for end in ends)
        if down == up:
            return down
        if extra > 4 * digits + 64:
            break
        extra *= 2
    lo, hi = (Fraction(end) for end in ends)
    if (hi - lo) * 10 ** (digits + 1) <= min(abs(lo), abs(hi)) and (lo > 0 or hi < 0):
        return _decimal_of((lo + hi) / 2, ctx)
    if lo <= 0 <= hi and 2 * max(-lo, hi) * 10 ** (2 * digits) < 1:
        return decimal.Decimal(0)
    reach = _decimal_of(max(abs(lo), abs(hi)), _decimal_context(2))
    raise ValueError(f"cannot round {what} to {digits} significant digits: its enclosures "
                     f"still reach {reach:.1E} around 0; write it exactly")
