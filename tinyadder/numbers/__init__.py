"""Number systems: the arithmetic a forward pass runs in.

A forward pass uses plain Python operators (+, -, *, /, comparisons) on the values a number
system hands it, so the same code runs exactly (``Fraction``), in ``decimal`` at a chosen
precision, in IEEE double (``float``) or single (``float32``), or over certified intervals.
What differs between systems is the :class:`NumberSystem` interface below: how exact constants
become values (``const``, ``slope``), the elementary functions (``exp``, ``sqrt``, ``sin``,
``cos``, ``erf``), the value softmax measures scores from (``largest``), the context a pass
runs in (``arithmetic``), the precision a model asks for (``fit``), and which system decides
the generated tokens (``decider``, ``refined``). Constants are ``int``, ``Fraction``,
:class:`ExpTerm` (``coef * e**power``, for weights such as 1/S), :class:`Ln` (``ln(base)``, for
ALiBi slopes) and ``constants.Expr`` trees (pi, sqrt, sin, cos, ... of them).

In the fraction system everything is exact except irrational values, each rounded to
``exp_digits`` significant digits once (e^x and run-time sqrt, sin, cos, erf once per argument;
a constant Expr once as a whole) and recorded in ``roundings``; e^x for x > 0 is 1/e^-x, so
that e^x * e^-x == 1 exactly, as the construction's cancellation of 1/S against e^-40 needs.
Kept exact by construction: ``exp(0) == 1``; ``ln b`` and any rational + k ln b
(:class:`LogScore`: ALiBi slopes, fixed attention biases), whose e^(r + k ln b) = e^r b^k is
exact in its ln part. Its tokens are decided over :class:`IntervalSystem` intervals that
contain both its own values and those of the real-number model (``enclosures``,
docs/exactness.md); ``elementary`` holds the certified series they use.
"""

from ..constants import ExpTerm, Ln, exp_of, is_zero
from .fraction import FractionSystem, LogScore, first_largest, ordered
from .protocol import (DEFAULT_DECIMAL_DIGITS, DEFAULT_EXP_DIGITS, NumberSystem, Precision,
                       Rounding, Undecided)
from .rounding import (DecimalSystem, Float32, Float32System, FloatSystem, to_float32)

__all__ = ["DEFAULT_DECIMAL_DIGITS", "DEFAULT_EXP_DIGITS", "DecimalSystem", "ExpTerm", "Float32", "Float32System", "FloatSystem",
           "FractionSystem", "Ln", "LogScore", "NUMBER_CHOICES", "NUMBER_NAMES", "NumberSystem",
           "Precision", "Rounding", "Undecided", "exp_of", "first_largest", "for_model", "is_zero",
           "number_system", "ordered", "to_float32"]


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
