"""The rounding systems: decimal at P digits, IEEE double (float) and single (float32, emulated).
Each decides its own tokens: its rounded values are its answer."""

from contextlib import nullcontext
import decimal
from fractions import Fraction
import math
import operator
import struct

from ..constants import MARKERS, Expr, ExpTerm, Ln
from . import elementary
from .elementary import exact_value
from .protocol import (DEFAULT_DECIMAL_DIGITS, _decimal_context, _decimal_of, _Decides, _Fits,
                       correctly_rounded)


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
        self._values = {}

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
        if isinstance(c, Expr):
            with self.arithmetic():
                return evaluate(self, c)
        if isinstance(c, ExpTerm):
            return ctx.multiply(_decimal_of(c.coef, ctx), ctx.exp(_decimal_of(c.power, ctx)))
        if isinstance(c, Ln):
            return ctx.ln(_decimal_of(c.base, ctx))
        return _decimal_of(c, ctx)

    slope = const

    def exp(self, x):
        return self._memo("exp", x)

    def ln(self, x):
        return self.context.ln(x)

    def sqrt(self, x):
        return self.context.sqrt(x)

    def sin(self, x):
        """sin x correctly rounded to the context (:meth:`_correctly_rounded`)."""
        return self._memo("sin", x)

    def cos(self, x):
        """cos x correctly rounded to the context (:meth:`_correctly_rounded`)."""
        return self._memo("cos", x)

    def erf(self, x):
        """erf x correctly rounded to the context (:meth:`_correctly_rounded`)."""
        return self._memo("erf", x)

    def pi(self):
        """pi correctly rounded to the context."""
        return self._memo("pi", None)

    def largest(self, values):
        """The first of the largest values, as a program's max returns it."""
        return max(values)

    def single(self, x):
        """x rounded to IEEE single (the program's float32 cast), then to the context."""
        return self.context.plus(decimal.Decimal(single_of(Fraction(x))))

    def _memo(self, op, x):
        """op(x), computed once per argument (scores and angles repeat across positions):
        decimal's own exp (correctly rounded), the others by :meth:`_correctly_rounded`."""
        hit = self._values.get((op, x))
        if hit is None:
            hit = self.context.exp(x) if op == "exp" else self._correctly_rounded(op, x)
            if len(self._values) < 4096:  # bound the memo
                self._values[op, x] = hit
        return hit

    def _correctly_rounded(self, op, x):
        """op(x) (pi for op 'pi') correctly rounded to the context's digits, half even: the
        series of ``elementary`` at more digits until the enclosure's ends round alike
        (``protocol.correctly_rounded``)."""
        digits = self.digits
        if op == "pi":
            return correctly_rounded(lambda extra: elementary.pi(elementary.bits(digits + extra)),
                                     digits, "pi")
        x = Fraction(x)
        exact = exact_value(op, x)
        if exact is not None:
            return _decimal_of(exact, self.context)
        f = getattr(elementary, op)
        return correctly_rounded(lambda extra: f(x, elementary.bits(digits + extra)), digits,
                                 f"{op}({x})")


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
        if isinstance(c, Expr):
            return evaluate(self, c)
        if isinstance(c, ExpTerm):
            return _to_float(c.coef) * _exp(_to_float(c.power))
        if isinstance(c, Ln):
            return math.log(float(c.base))
        return _to_float(c)

    slope = const

    def exp(self, x):
        return _exp(x)

    def ln(self, x):
        return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan

    def sqrt(self, x):
        return math.sqrt(x) if x >= 0 else math.nan

    def sin(self, x):
        return math.sin(x)

    def cos(self, x):
        return math.cos(x)

    def erf(self, x):
        return math.erf(x)

    def pi(self):
        return math.pi

    def largest(self, values):
        """The first of the largest values, as a program's max returns it."""
        return max(values)

    def single(self, x):
        """x rounded to IEEE single (the program's float32 cast), kept as a double."""
        return to_float32(x)

    def fma(self, a, w, b):
        """a w + b rounded once (a fused multiply-add)."""
        return float(Fraction(a) * Fraction(w) + Fraction(b))


_SINGLE = struct.Struct("<f")


def to_float32(x):
    """The IEEE single nearest to the double x (round-half-even; +-inf beyond the range)."""
    try:
        return _SINGLE.unpack(_SINGLE.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def single_of(x):
    """The IEEE single nearest to the rational x, as a float (round-half-even, subnormals
    included; +-inf from 2^128 - 2^103 on, the midpoint above the largest single): x is
    rounded once, with no double rounding through a double.

    >>> single_of(Fraction(1, 3)) == to_float32(1 / 3), single_of(Fraction(2) ** 128)
    (True, inf)
    """
    x = Fraction(x)
    if x == 0:
        return 0.0
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # floor(log2 a) or one more
    if a < Fraction(2) ** e:
        e -= 1
    ulp = max(e, -126) - 23  # 24 bits, or the subnormals' fixed spacing 2^-149
    m = round(a / Fraction(2) ** ulp)  # half even
    value = math.inf if m.bit_length() + ulp > 128 else math.ldexp(m, ulp)  # m 2^ulp >= 2^128
    return math.copysign(value, x)


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
        return _single(float(x))

    def __add__(self, other):
        return _single(_add(self, other) if type(other) in _FLOATS else float(self) + float(other))

    __radd__ = __add__

    def __sub__(self, other):
        return _single(_sub(self, other) if type(other) in _FLOATS else float(self) - float(other))

    def __rsub__(self, other):
        return _single(float(other) - float(self))

    def __mul__(self, other):
        return _single(_mul(self, other) if type(other) in _FLOATS else float(self) * float(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _single(float(self) / float(other))

    def __rtruediv__(self, other):
        return _single(float(other) / float(self))

    def __neg__(self):
        return _single(-float(self))

    def __abs__(self):
        return _single(abs(float(self)))


# The double operations of two floats, called on a Float32 and a float or Float32 directly: a
# single's operations are the hot path of a float32 trace, and float(x) would copy each operand.
_add, _sub, _mul = float.__add__, float.__sub__, float.__mul__
_FLOATS = (Float32, float)
_pack, _unpack, _new = _SINGLE.pack, _SINGLE.unpack, float.__new__


def _single(x):
    """The double x rounded to single, as a Float32 (``to_float32``, inlined for speed)."""
    try:
        return _new(Float32, _unpack(_pack(x))[0])
    except OverflowError:
        return _new(Float32, math.copysign(math.inf, x))


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
        if isinstance(c, Expr):
            return evaluate(self, c)
        return Float32(super().const(c))

    slope = const

    def exp(self, x):
        return Float32(_exp(x))

    def ln(self, x):
        return Float32(super().ln(x))

    def sqrt(self, x):
        return Float32(super().sqrt(x))

    def sin(self, x):
        return Float32(math.sin(x))

    def cos(self, x):
        return Float32(math.cos(x))

    def erf(self, x):
        return Float32(math.erf(x))

    def pi(self):
        return Float32(math.pi)

    def single(self, x):
        return x

    def fma(self, a, w, b):
        return Float32(single_of(Fraction(a) * Fraction(w) + Fraction(b)))




def evaluate(ns, c):
    """An exact constant's value in a number system, operation by operation in the system's
    own arithmetic. A rounding system honours the float markers, as a program computed:
    inside ``f64(...)`` IEEE double (as Python computes it), then rounded once to the system;
    ``f32(...)`` rounds to IEEE single. An exact system (``ns.exact``: the fraction system's
    enclosures) reads a marker as the identity, the real-number model."""
    if not isinstance(c, Expr):
        return ns.const(c)
    op, args = c.op, c.args
    if op == "pi":
        return ns.pi()
    if op in MARKERS and ns.exact:
        return evaluate(ns, args[0])
    if op == "f64":
        return ns.const(Fraction(evaluate(DOUBLE, args[0])))
    x = evaluate(ns, args[0])
    if op == "f32":
        return ns.single(x)
    if op == "neg":
        return -x
    if op == "pow":
        return _power(x, args[1], ns)
    if op in _OPERATORS:
        y = evaluate(ns, args[1])
        if op == "div" and isinstance(y, float) and y == 0:
            return _ieee_quotient(x, y)
        return _OPERATORS[op](x, y)
    return getattr(ns, op)(x)  # exp, ln, sqrt, sin, cos


def _ieee_quotient(x, y):
    """x / y for a float zero y as IEEE arithmetic has it, where Python raises
    ZeroDivisionError: NaN for 0/0 and NaN/0, else infinity signed by x and by the zero. A
    constant whose exact divisor is not zero (``evaluable``) may still round to a zero in a
    float system: 1/sqrt(1e-300) in float32."""
    fx = float(x)
    value = math.nan if fx == 0 or math.isnan(fx) else \
        math.copysign(math.inf, fx) * math.copysign(1.0, y)
    return type(x)(value)


_OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "div": operator.truediv}
DOUBLE = FloatSystem()


def _power(x, k, ns):
    """x^k for an integer k, by repeated multiplication left to right (1/x^-k for k < 0)."""
    out = ns.one
    for _ in range(abs(k)):
        out = out * x
    if k < 0 and isinstance(out, float) and out == 0:
        return _ieee_quotient(ns.one, out)
    return out if k >= 0 else ns.one / out
