"""Number systems: the arithmetic a forward pass runs in.

A forward pass uses plain Python operators (+, -, *, /, comparisons) on the values a number
system hands it, so the same code runs exactly (``Fraction``), in ``decimal`` at a chosen
precision, in IEEE double (``float``) or single (``float32``), or over certified intervals.
What differs between systems is the :class:`NumberSystem` interface below: how construction
constants become values (``const``, ``slope``), how attention scores and their exponentials
are formed (``score``, ``exp_score``), the context a pass runs in (``arithmetic``), the
precision a model asks for (``fit``), and which system decides the generated tokens
(``decider``, ``refined``). Constants are ``int``, ``Fraction``, :class:`ExpTerm`
(``coef * e**power``, for weights such as 1/S) and :class:`Ln` (``ln(base)``, for ALiBi slopes).

In the fraction system everything is exact except e^x for a rational x != 0, which is rounded
to ``exp_digits`` significant digits once per argument x and recorded in ``roundings``; e^x for
x > 0 is 1/e^-x, so that e^x * e^-x == 1 exactly, as the construction's cancellation of 1/S
against e^-40 needs. Two cases are exact by construction: ``exp(0) == 1``, and an ALiBi slope
of ``ln b`` at integer distance d, whose factor ``exp(-d ln b) == b**-d`` is rational. Its
tokens are decided over :class:`IntervalSystem` intervals that contain both its own values and
those of the real-number model (``enclosures``, docs/exactness.md).
"""

from contextlib import nullcontext
from dataclasses import dataclass
from fractions import Fraction
import decimal
import math
import re
import struct
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
        """An ALiBi slope (0, a rational or Ln) as ``score`` takes it (converted once)."""

    def score(self, qk, slope, dist: int) -> object:
        """The attention score qk - slope * dist (``slope`` from ``slope``)."""

    def exp_score(self, score) -> object:
        """e**score."""

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


@dataclass(frozen=True)
class LogScore:
    """An exact attention score ``rational + ln_coef * ln(base)`` (fraction system only).

    Its text, '-40 - 23*ln 10', is what the tracer shows and the JSON trace stores."""

    rational: Fraction
    ln_coef: int
    base: Fraction

    def __str__(self):
        sign = "-" if self.ln_coef < 0 else "+"
        return f"{self.rational} {sign} {abs(self.ln_coef)}*ln {self.base}"


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
        """Kept symbolic: a score with slope ln b is a :class:`LogScore`."""
        return c if isinstance(c, Ln) else Fraction(c)

    def exp(self, x):
        """e**x: exactly 1 for x == 0; for x < 0 correctly rounded to exp_digits digits (once
        per x, memoised, recorded); for x > 0 exactly 1 / e**-x."""
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

    def score(self, qk, slope, dist):
        """qk - slope*dist (slope None: 0), kept symbolic when the slope is ln(base)."""
        if slope is None:
            return Fraction(qk)
        if isinstance(slope, Ln):
            if dist == 0 or slope.base == 1:
                return Fraction(qk)
            return LogScore(Fraction(qk), -dist, slope.base)
        return Fraction(qk) - slope * dist

    def exp_score(self, score):
        """exp(score); exp(r + c ln b) = exp(r) * b**c, exact in the ln part."""
        if isinstance(score, LogScore):
            return self.exp(score.rational) * score.base ** score.ln_coef
        return self.exp(score)

    def decider(self):
        """Intervals at ``exp_digits`` digits that contain this system's values and the real
        model's (memoised: the interval model compiles once)."""
        if self._decider is None:
            from .enclosures import enclosure  # enclosures builds on this module
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


class DecimalSystem(_Fits, _Decides):
    """Python decimal at ``digits`` significant digits; every operation rounds to that.

    Without ``digits`` it is 40, or a model's precision after ``fit``.
    """

    name = "decimal"

    def __init__(self, digits=None, picked=""):
        self.explicit = digits is not None
        digits = DEFAULT_DECIMAL_DIGITS if digits is None else digits
        if digits < 1:
            raise ValueError("decimal precision must be at least 1 digit")
        self.digits = digits
        self.picked = picked
        self.context = _decimal_context(digits)
        self.zero = decimal.Decimal(0)
        self.one = decimal.Decimal(1)
        self._exp = {}

    def __repr__(self):
        return f"DecimalSystem(digits={self.digits})"

    @property
    def spec(self):
        return f"decimal:{self.digits}"

    def describe(self):
        why = f"; picked: {self.picked}" if self.picked else ""
        return f"decimal ({self.digits} significant digits, round-half-even{why})"

    def _at(self, need):
        return DecimalSystem(need.digits,
                             picked=need.why if need.digits != DEFAULT_DECIMAL_DIGITS else "")

    roundings = ()

    def arithmetic(self):
        return decimal.localcontext(self.context)

    def const(self, c):
        ctx = self.context
        if isinstance(c, ExpTerm):
            return ctx.multiply(_decimal_of(c.coef, ctx), ctx.exp(_decimal_of(c.power, ctx)))
        if isinstance(c, Ln):
            return ctx.ln(_decimal_of(c.base, ctx))
        return _decimal_of(c, ctx)

    slope = const

    def score(self, qk, slope, dist):
        ctx = self.context
        return ctx.subtract(qk, ctx.multiply(slope, dist)) if slope else qk

    def exp_score(self, score):
        hit = self._exp.get(score)
        if hit is None:
            hit = self.context.exp(score)
            if len(self._exp) < 4096:  # scores repeat across positions; bound the memo
                self._exp[score] = hit
        return hit

    exp = exp_score


def _to_float(x):
    """float(x), overflowing to +-inf as IEEE arithmetic does (not OverflowError)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


class FloatSystem(_Decides):
    """IEEE 754 double precision, as the published PyTorch float64 model runs."""

    name = "float"
    zero = 0.0
    one = 1.0
    roundings = ()

    def __repr__(self):
        return "FloatSystem()"

    spec = "float"

    def describe(self):
        return "float (IEEE 754 double)"

    def fit(self, need):
        return self

    def arithmetic(self):
        return nullcontext()

    def const(self, c):
        if isinstance(c, ExpTerm):
            return _to_float(c.coef) * _exp(_to_float(c.power))
        if isinstance(c, Ln):
            return math.log(float(c.base))
        return _to_float(c)

    slope = const

    def score(self, qk, slope, dist):
        return qk - slope * dist if slope else qk

    def exp_score(self, score):
        return _exp(score)

    exp = exp_score


_SINGLE = struct.Struct("<f")


def to_float32(x):
    """The IEEE single nearest to the double x (round-half-even; +-inf beyond the range)."""
    try:
        return _SINGLE.unpack(_SINGLE.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


class Float32(float):
    """An IEEE single: every +, -, *, / and exp result is rounded to single precision.

    The operation is done in double, then rounded: for +, -, *, / of singles that double
    rounding gives the correctly rounded single (53 >= 2 * 24 + 2 bits), so this is IEEE
    float32 arithmetic exactly; exp is rounded from the double result.

    >>> x = Float32(0.1)
    >>> x == 0.1, x == 0.100000001490116119384765625
    (False, True)
    >>> Float32(2 ** 24) + 1 == 2 ** 24
    True
    """

    __slots__ = ()

    def __new__(cls, x=0.0):
        return float.__new__(cls, to_float32(float(x)))

    def __add__(self, other):
        return Float32(float(self) + float(other))

    __radd__ = __add__

    def __sub__(self, other):
        return Float32(float(self) - float(other))

    def __rsub__(self, other):
        return Float32(float(other) - float(self))

    def __mul__(self, other):
        return Float32(float(self) * float(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return Float32(float(self) / float(other))

    def __rtruediv__(self, other):
        return Float32(float(other) / float(self))

    def __neg__(self):
        return Float32(-float(self))

    def __abs__(self):
        return Float32(abs(float(self)))


class Float32System(FloatSystem):
    """IEEE 754 single precision, emulated: weights are stored as singles (computed in double,
    then rounded, as a float32 PyTorch model would hold them) and every result is rounded."""

    name = "float32"
    spec = "float32"
    zero = Float32(0)
    one = Float32(1)

    def __repr__(self):
        return "Float32System()"

    def describe(self):
        return "float32 (IEEE 754 single, emulated: every result rounded to 24 bits)"

    def const(self, c):
        return Float32(super().const(c))

    slope = const

    def exp_score(self, score):
        return Float32(_exp(score))

    exp = exp_score


def for_model(ns, model):
    """``ns`` at the precision ``model.meta["precision"]`` asks for (see ``fit``)."""
    return ns.fit(model.meta.get("precision"))


# decimal:P is bounded: the construction needs about N + 4 digits and N <= 2000, so P = 2100
# covers the default N + 30 at every N; more digits only cost time (exp at P = 10^4 takes 40 s,
# at P = 10^8 hours, and a C-level decimal computation cannot be interrupted).
MAX_DECIMAL_DIGITS = 2100
NUMBER_CHOICES = (f"fraction, decimal, decimal:P (1 <= P <= {MAX_DECIMAL_DIGITS} significant "
                  f"digits), float (IEEE double; also float64) or float32 (IEEE single, "
                  f"emulated)")
NUMBER_NAMES = "fraction, decimal, decimal:P, float or float32"  # for one-line errors


def number_system(spec):
    """Parse ``fraction``, ``decimal``, ``decimal:P``, ``float``/``float64`` or ``float32``.

    ``fraction`` and ``decimal`` without P take a model's precision when ``fit`` to it.
    """
    if not isinstance(spec, str):
        raise TypeError(f"a number system name is text such as 'fraction', got "
                        f"{type(spec).__name__}")
    spec = spec.strip()
    if spec == "fraction":
        return FractionSystem()
    if spec in ("float", "float64"):
        return FloatSystem()
    if spec == "float32":
        return Float32System()
    if spec == "decimal":
        return DecimalSystem()
    name, colon, digits = spec.partition(":")
    if name.strip() != "decimal" or not colon:
        shown = repr(spec) if len(spec) <= 24 else f"{spec[:24]!r}..."
        raise ValueError(f"unknown number system {shown}; use {NUMBER_NAMES}")
    digits = digits.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 6
            and 1 <= int(digits) <= MAX_DECIMAL_DIGITS):
        shown = repr(digits) if len(digits) <= 24 else f"{digits[:24]!r}..."
        raise ValueError(f"decimal precision P must be a whole number from 1 to "
                         f"{MAX_DECIMAL_DIGITS}, got {shown}")
    return DecimalSystem(int(digits))
