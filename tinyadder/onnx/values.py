"""An exact constant as the float an ONNX initializer stores, and the stored float back.

:func:`stored` gives the float of a constant in IEEE double or single (``DOUBLE``, ``FLOAT``):

- a rational, ``exp(r)`` times a rational (an ``ExpTerm``) and ``ln(r)``: correctly rounded
  (to nearest, ties to even), a rational by integer arithmetic, the others from certified
  enclosures narrowed until both ends round to the same float;
- an expression (``Expr``): as the model format defines it for a program in that precision,
  operation by operation, with its ``f64``/``f32`` markers (``rounding.evaluate``);
- ``-inf``: the float -inf.

:func:`exact_of` reads a stored float back: the constant a file names for it when that
constant's stored float is this one, else the binary rational the float is.

>>> stored(Fraction(1, 10), DataType.DOUBLE), stored(Fraction(1, 10), DataType.FLOAT)
(0.1, 0.10000000149011612)
>>> from tinyadder.constants import exp_of
>>> stored(exp_of(40), DataType.DOUBLE), stored(Ln(Fraction(10)), DataType.DOUBLE)
(2.3538526683702e+17, 2.302585092994046)
>>> exact_of(0.1, DataType.DOUBLE, "1/10", "W"), exact_of(0.1, DataType.DOUBLE, None, "W")
(Fraction(1, 10), Fraction(3602879701896397, 36028797018963968))
>>> exact_of(0.5, DataType.DOUBLE, "1/10", "W[3]")
Traceback (most recent call last):
tinyadder.onnx.wire.OnnxError: W[3]: the file names the constant 1/10 for 0.5, which stores as 0.1
"""

from fractions import Fraction
from functools import lru_cache
import math

from ..constants import ConstantError, Expr, ExpTerm, Ln, MinusInfinity, NEG_INF, is_rational
from ..constants import parse, text
from ..numbers.enclosures import IntervalSystem
from ..numbers.rounding import Float32System, FloatSystem, evaluate
from .messages import DataType
from .wire import OnnxError

# (significand bits, least normal exponent, greatest exponent) of each float type
FORMATS = {DataType.DOUBLE: (53, -1022, 1023), DataType.FLOAT: (24, -126, 127)}
_SYSTEMS = {DataType.DOUBLE: FloatSystem(), DataType.FLOAT: Float32System()}
_DIGITS = (40, 80, 160, 320, 640, 1280)  # enclosure precisions tried, in decimal digits


def nearest(q, dtype):
    """The float of type ``dtype`` nearest to the rational q (ties to even; +-inf beyond the
    largest finite value, as IEEE rounding overflows)."""
    bits, emin, emax = FORMATS[dtype]
    q = Fraction(q)
    if q == 0:
        return 0.0
    sign, q = (-1.0 if q < 0 else 1.0), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1  # now 2^e <= q < 2^(e+1)
    unit = Fraction(2) ** (max(e, emin) - bits + 1)  # the spacing of floats around q
    m = q / unit
    whole = math.floor(m)
    rest = m - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    if whole * unit >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * float(whole * unit)  # exact: whole has at most ``bits`` bits


@lru_cache(maxsize=4096)
def stored(value, dtype):
    """The float of type ``dtype`` an initializer holds for the exact constant ``value``."""
    if isinstance(value, MinusInfinity):
        return -math.inf
    if isinstance(value, Expr):
        return float(evaluate(_SYSTEMS[dtype], value))
    if is_rational(value):
        return nearest(value, dtype)
    if isinstance(value, ExpTerm) and (value.coef == 0 or value.power == 0):
        return nearest(value.coef, dtype)
    for digits in _DIGITS:
        system = IntervalSystem(digits)
        box = system.slope(value) if isinstance(value, Ln) else system.const(value)
        lo, hi = (nearest(Fraction(end), dtype) for end in (box.lo, box.hi))
        if lo == hi:
            return lo
    raise OnnxError(f"{text(value)} is too close to halfway between two floats to round "
                    f"at {_DIGITS[-1]} digits")


def is_stored_exactly(value, x):
    """Whether the float x is the constant ``value`` itself (no metadata needed for it)."""
    return isinstance(value, MinusInfinity) if math.isinf(x) else (
        is_rational(value) and math.isfinite(x) and Fraction(x) == value)


def exact_of(x, dtype, named, where, infinite=False):
    """The exact value of the stored float x: the constant ``named`` (its text, or None) if
    it stores as x, else x as a binary rational; -inf as ``NEG_INF`` where ``infinite``
    allows one. Anything else is an OnnxError naming ``where``."""
    if named is not None:
        try:
            value = parse(named)
        except ConstantError as err:
            raise OnnxError(f"{where}: the file's exact constant does not read: {err}") from None
        if isinstance(value, MinusInfinity) and not infinite:
            raise OnnxError(f"{where}: -inf is only a mask or a fixed attention bias")
        if stored(value, dtype) != x:
            raise OnnxError(f"{where}: the file names the constant {named} for {x!r}, which "
                            f"stores as {stored(value, dtype)!r}")
        return value
    if x == -math.inf and infinite:
        return NEG_INF
    if not math.isfinite(x):
        raise OnnxError(f"{where} is {x}, not a number tinyadder reads (finite, or -inf as "
                        f"a mask)")
    return Fraction(x)
