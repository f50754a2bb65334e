"""Whether every number system can evaluate an exact constant: the bounds a model file's
constants are checked against before any system evaluates them (docs/model-format.md).

The constant grammar bounds what it computes itself (rationals, exp of a rational); an
``Expr`` (pi, sqrt, sin, ... of constants) is evaluated by each number system, and some
cannot be: exp(exp(100)) is a number of 10^43 digits, exp(pi*10^9) takes forever, sqrt(1 - pi)
and 1/(pi - pi) are outside their functions' domain. ``check(c)`` encloses ``c`` step by step
in intervals of ``DIGITS`` digits (more if a step is too near zero to tell), each step's
size bounded before the next is taken, and raises :class:`Unevaluable` naming the step that
no system can take:

- exp, sin and cos of an argument within -MAX_ARGUMENT..MAX_ARGUMENT;
- sqrt of a value >= 0, ln of a value > 0, division by a value != 0, each shown by its
  enclosure (a value too near zero to tell at ``MORE`` digits is refused as if it were zero);
- every step's size within 10^-MAX_DIGITS..10^MAX_DIGITS (or an enclosure of zero), a size
  an exact rational of the grammar may have too;
- f32(x) and f64(x) of x within the format's range, and every step inside f64(...), which
  rounding systems evaluate in IEEE double, within double's range.

>>> from tinyadder.constants import parse
>>> check(parse("2*pi/19")).lo > 0
True
>>> check(parse("1/(pi - pi)"))
Traceback (most recent call last):
    ...
tinyadder.numbers.evaluable.Unevaluable: 1/(pi - pi): divides by pi - pi, which is zero or too near zero to tell
"""

import decimal

from ..constants import Expr, text
from .enclosures import interval_at
from .rounding import _power

DIGITS = 40             # the enclosures' digits
MORE = 400              # the digits of a second try, for a step too near zero to tell
MAX_ARGUMENT = 10_000   # |x| of exp(x), sin(x), cos(x): the grammar's bound on exp(rational)
MAX_DIGITS = 21_000     # decimal digits of a step's size either way (a rational's: 70,000 bits)
FLOAT_MAX = {"f32": decimal.Decimal("3.4028234663852886e38"),
             "f64": decimal.Decimal("1.7976931348623157e308")}
DOUBLE_TINY = decimal.Decimal("2.2250738585072014e-308")  # the least normal double


class Unevaluable(ValueError):
    """A constant some number system cannot evaluate: one line naming the step."""


class _NearZero(Unevaluable):
    """A step that may be zero at these digits: tried again at ``MORE``."""


def check(c):
    """An enclosure of the exact constant ``c`` (an Interval), or :class:`Unevaluable`."""
    if not isinstance(c, Expr):
        return None
    try:
        return _Check(DIGITS).of(c, c)
    except _NearZero:
        try:
            return _Check(MORE).of(c, c)
        except _NearZero as why:
            raise Unevaluable(str(why)) from None


class _Check:
    def __init__(self, digits):
        self.ns = interval_at(digits)

    def of(self, c, whole, double=False):
        """An enclosure of ``c``, a step of ``whole``; ``double``: inside f64(...)."""
        ns = self.ns
        if not isinstance(c, Expr):
            box = ns.const(c)
        elif c.op == "pi":
            box = ns.pi()
        else:
            inner = double or c.op == "f64"
            x = self.of(c.args[0], whole, inner)
            if c.op in FLOAT_MAX:
                if max(abs(x.lo), abs(x.hi)) > FLOAT_MAX[c.op]:
                    self.fail(whole, f"{c.op}({_text(c.args[0])}) is beyond the range of IEEE "
                                     f"{'single' if c.op == 'f32' else 'double'}")
                box = x
            elif c.op == "neg":
                box = -x
            elif c.op in ("add", "sub", "mul"):
                y = self.of(c.args[1], whole, inner)
                box = x + y if c.op == "add" else x - y if c.op == "sub" else x * y
            elif c.op == "div":
                y = self.of(c.args[1], whole, inner)
                self.nonzero(y, c.args[1], whole, "divides by")
                box = x / y
            elif c.op == "pow":
                box = self.power(x, c.args[1], c, whole)
            elif c.op in ("exp", "sin", "cos"):
                if max(abs(x.lo), abs(x.hi)) > MAX_ARGUMENT:
                    self.fail(whole, f"{c.op} of {_text(c.args[0])}, about {_about(x)}: its "
                                     f"argument must be within -{MAX_ARGUMENT}..{MAX_ARGUMENT}")
                box = getattr(ns, c.op)(x)
            elif c.op in ("sqrt", "ln"):
                inside = x.lo >= 0 if c.op == "sqrt" else x.lo > 0
                if not inside:
                    why = f"{c.op} of {_text(c.args[0])}, which is " + (
                        "negative" if c.op == "sqrt" else "not positive")
                    if (x.hi >= 0 if c.op == "sqrt" else x.hi > 0):
                        raise _NearZero(f"{_text(whole)}: {why} or too near 0 to tell")
                    self.fail(whole, why)
                box = getattr(ns, c.op)(x)
            else:
                raise AssertionError(c.op)
        self.sized(box, c, whole, double)
        return box

    def power(self, x, k, c, whole):
        """x^k, its size bounded first: |x|^|k| within 10^MAX_DIGITS either way."""
        if k < 0:
            self.nonzero(x, c.args[0], whole, "takes a negative power of")
        big, small = max(abs(x.lo), abs(x.hi)), min(abs(x.lo), abs(x.hi))
        if big and abs(k) * max(big.adjusted() + 1, 0) > MAX_DIGITS or (
                small and x.lo * x.hi > 0 and abs(k) * max(-small.adjusted(), 0) > MAX_DIGITS):
            self.fail(whole, f"{_text(c)} has more than {MAX_DIGITS:,} digits before or after "
                             f"the point")
        return _power(x, k, self.ns)

    def nonzero(self, y, what, whole, doing):
        if y.lo <= 0 <= y.hi:
            raise _NearZero(f"{_text(whole)}: {doing} {_text(what)}, which is zero or too "
                            f"near zero to tell")

    def sized(self, box, c, whole, double):
        big = max(abs(box.lo), abs(box.hi))
        small = min(abs(box.lo), abs(box.hi)) if box.lo * box.hi > 0 else None
        if big and big.adjusted() >= MAX_DIGITS or small and small.adjusted() < -MAX_DIGITS:
            self.fail(whole, f"{_text(c)}, about {_about(box)}, is outside "
                             f"10^-{MAX_DIGITS:,}..10^{MAX_DIGITS:,}")
        if double and (big > FLOAT_MAX["f64"] or small is not None and small < DOUBLE_TINY):
            self.fail(whole, f"{_text(c)}, about {_about(box)}, is computed in IEEE double "
                             f"(inside f64) and is outside its range")

    def fail(self, whole, problem):
        shown = _text(whole)
        raise Unevaluable(problem if problem.startswith(shown) else f"{shown}: {problem}")


def _text(c, width=30):
    """A constant's text, cut to ``width`` characters."""
    shown = text(c)
    return shown if len(shown) <= width else f"{shown[:width]}... ({len(shown):,} characters)"


def _about(box):
    """A box's midpoint in 3 significant digits."""
    return f"{(box.lo + box.hi) / 2:.3g}"
