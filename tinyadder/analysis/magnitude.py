"""Magnitudes of exact values: log10 |x| from a value's own digits, and a float that may
underflow to 0 without losing the magnitude.

A softmax1 weight such as e^-1000 * 10^-23 is a Fraction with thousand-digit numerator and
denominator; ``float()`` of it is 0.0, but its log10 is an ordinary number:

>>> from fractions import Fraction
>>> x = Fraction(3, 10 ** 460)
>>> to_float(x), round(log10_abs(x), 9)
(0.0, -459.522878745)
"""

from decimal import Decimal
from fractions import Fraction
import math

LOG10_2 = math.log10(2)


def _log10_int(n):
    """log10 of a positive int of any size: its top 60 bits as a float, plus the shift."""
    shift = max(0, n.bit_length() - 60)
    return math.log10(n >> shift) + shift * LOG10_2


def log10_abs(x):
    """log10 |x| of a non-zero value from its exact digits (None for zero).

    A Fraction n/d gives log10 n - log10 d from the integers themselves; a Decimal its digits
    and exponent; a float math.log10. Absolute error about 10^-13 for any size of x.
    """
    if x == 0:
        return None
    if isinstance(x, Fraction):
        return _log10_int(abs(x.numerator)) - _log10_int(x.denominator)
    if isinstance(x, Decimal):
        _, digits, exponent = x.as_tuple()
        return _log10_int(int("".join(map(str, digits)))) + exponent
    if isinstance(x, int):
        return _log10_int(abs(x))
    return math.log10(abs(x))


def to_float(x):
    """x as a double: 0.0 below the range (the log10 still holds it), +-inf above."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf
