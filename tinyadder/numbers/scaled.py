"""Scaled integer intervals: the fraction system's certified decisions as integer arithmetic.

A :class:`ScaledSystem` is an :class:`~.enclosures.IntervalSystem` whose forward pass, where
``codegen`` writes it out, runs on **unboxed** intervals: a value v is two Python ints lo and
hi at one binary scale F (``scale``) with lo / 2^F <= v <= hi / 2^F. The generated code adds
them as ints, multiplies them by exact constants (k x: k lo, k hi; x / q: floor(lo / q),
ceil(hi / q)) and rounds a product of two intervals or a quotient once, down for lo and up for
hi, so every value's interval contains every value the operation can take on its operands: by
induction, the fraction system's value (e^x rounded to ``digits`` digits) and the real-number
model's. Its constants, e^x and the first block's per-token keys and values are the interval
system's (relative precision, so e^-40 times 10 e^40 still encloses 1), turned into ints
outward (:meth:`ScaledSystem.ints`).

F is ``digits`` decimal digits (F = ceil(digits log2 10)): an absolute precision, so a small
value is a short int and the integer code's cost follows the size of its values.

A comparison the ints do not settle raises ``numbers.Undecided``, and decoding refines the
fraction system as for any decider (docs/exactness.md).
"""

from fractions import Fraction
from functools import lru_cache

from .enclosures import IntervalSystem
from .protocol import Undecided


def scale_bits(digits):
    """The binary scale F of ``digits`` decimal digits: ceil(digits * 3.322) >= digits log2 10.

    >>> scale_bits(50)
    167
    """
    return -(-digits * 3322 // 1000)


def _ratio(x):
    """(p, q) with x = p / q, exactly, for an int, Fraction or Decimal (no context rounds)."""
    return (x, 1) if isinstance(x, int) else x.as_integer_ratio()


def floor_scaled(x, scale):
    """floor(x 2^scale) for a rational x (an int, Fraction or Decimal)."""
    p, q = _ratio(x)
    return (p << scale) // q


def ceil_scaled(x, scale):
    """ceil(x 2^scale) for a rational x; from x's exact ratio, since -x of a Decimal would
    round to the current context's precision.

    >>> from decimal import Decimal
    >>> x = Decimal("0.12345678901234567890123456781")  # 29 digits
    >>> Fraction(ceil_scaled(x, 200), 2 ** 200) >= x
    True
    """
    p, q = _ratio(x)
    return -((-p << scale) // q)


def _short(n):
    """An int as text, or its sign and bit length when its digits would be long."""
    return str(n) if n.bit_length() < 256 else f"{'-' if n < 0 else ''}<{n.bit_length()} bits>"


class Scaled:
    """A value of the integer code, boxed (its logits): lo / 2^F <= v <= hi / 2^F.

    ``x > y`` is True when x.lo > y.hi and False when x.hi <= y.lo (then x <= y at every
    point); otherwise it raises :class:`Undecided`. Both operands have one scale.
    """

    __slots__ = ("lo", "hi")
    SCALE = 0  # set per system

    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi

    def __repr__(self):
        return f"Scaled({_short(self.lo)}, {_short(self.hi)}) / 2**{self.SCALE}"

    def ends(self):
        """(lo, hi) as rationals."""
        one = 1 << self.SCALE
        return Fraction(self.lo, one), Fraction(self.hi, one)

    def contains(self, x):
        """Whether the rational x lies in the interval (for tests)."""
        lo, hi = self.ends()
        return lo <= Fraction(x) <= hi

    def __gt__(self, other):
        if self.lo > other.hi:
            return True
        if self.hi <= other.lo:
            return False
        raise Undecided(f"cannot order {self!r} and {other!r}")

    def __lt__(self, other):
        return other.__gt__(self)

    def __ge__(self, other):
        if self.lo >= other.hi:
            return True
        if self.hi < other.lo:
            return False
        raise Undecided(f"cannot order {self!r} and {other!r}")

    def __le__(self, other):
        return other.__ge__(self)


def open_gate(lo, hi):
    """A ReGLU gate whose interval holds 0 and a positive number: raise Undecided."""
    raise Undecided(f"cannot tell whether the gate [{_short(lo)}, {_short(hi)}] / 2^F is "
                    f"positive")


class ScaledSystem(IntervalSystem):
    """:class:`IntervalSystem`, run by the generated code as ints at scale 2^-F
    (F = ``scale_bits(digits)``): it decides the fraction system's tokens (``generate``).

    The boxed values (constants, e^x, per-token keys and values, and every value of a pass
    that ``codegen`` does not write out) are the interval system's; ``ints`` turns them into
    the integer code's (lo, hi), ``box`` its results into :class:`Scaled`, and ``divide``
    and ``product`` are the two operations it calls instead of writing out.
    """

    name = "scaled"
    open_gate = staticmethod(open_gate)

    def __init__(self, digits):
        super().__init__(digits)
        self.spec = f"scaled:{digits}"
        self.scale = scale_bits(digits)
        self.box = type(f"Scaled{digits}", (Scaled,), {"__slots__": (), "SCALE": self.scale})
        self.divide = _divider(self.scale)
        self.product = _multiplier(self.scale)

    def __repr__(self):
        return f"ScaledSystem(digits={self.digits})"

    @staticmethod
    def around(decider):
        """The scaled system of an interval (or ball) system's digits, one per digits, so that
        a model compiles once; any other system itself."""
        if not isinstance(decider, IntervalSystem):
            return decider
        return _scaled(decider.digits)

    def describe(self):
        return (f"scaled integers ({self.digits} digits: 2^-{self.scale}, outward "
                f"rounding)")

    def ints(self, value):
        """(lo, hi) at scale 2^-F around a boxed value: an Interval, or an exact rational."""
        if hasattr(value, "lo"):
            lo, hi = value.lo, value.hi
        else:
            lo = hi = Fraction(value)
        return floor_scaled(lo, self.scale), ceil_scaled(hi, self.scale)

    def interval(self, lo, hi):
        """The boxed Interval around the ints (lo, hi) at scale 2^-F, rounded outward."""
        one = 1 << self.scale
        box = self.value
        return box(box.DOWN.divide(lo, one), box.UP.divide(hi, one))


def _divider(scale):
    """``divide(n_lo, n_hi, d_lo, d_hi)``: the ints of [n] / [d] at 2^-scale, rounded outward.

    Three cases, each an enclosure of every quotient of points: d an exact integer k (floor
    and ceiling of n / k); d = 1 + x with 0 <= x < 2^-(F/2), where 1 - x <= 1 / (1 + x) <=
    1 - x + x^2 < 1 - x + 2^-F, so n / d is n (1 - x) up to one unit: two products with the
    short x instead of a long division; and the long division of n 2^F by the end of d that
    bounds it. A d that holds 0 raises Undecided.
    """
    one, mask, half = 1 << scale, (1 << scale) - 1, scale // 2

    def divide(n_lo, n_hi, d_lo, d_hi):
        if d_lo <= 0:
            if d_hi >= 0:
                raise Undecided("division by an interval that contains 0")
            lo, hi = divide(n_lo, n_hi, -d_hi, -d_lo)
            return -hi, -lo
        if d_lo == d_hi and not d_lo & mask:
            k = d_lo >> scale
            return n_lo // k, -(-n_hi // k)
        x_lo, x_hi = d_lo - one, d_hi - one
        if x_lo >= 0 and x_hi.bit_length() <= half:
            lo = n_lo + ((-n_lo * x_hi) >> scale if n_lo >= 0 else (n_lo * (1 - x_lo)) >> scale)
            hi = n_hi - ((-n_hi * (1 - x_lo)) >> scale if n_hi >= 0 else (n_hi * x_hi) >> scale)
            return lo, hi
        return ((n_lo << scale) // (d_hi if n_lo >= 0 else d_lo),
                -((-n_hi << scale) // (d_lo if n_hi >= 0 else d_hi)))

    return divide


def _multiplier(scale):
    """``product(a, b, c, d)``: the ints of [a, b] [c, d] at 2^-scale, rounded outward: the
    least and the greatest of the four products of ends, each written as a c plus products
    with the widths b - a and d - c, so that long ends take one long product."""

    def product(a, b, c, d):
        ac = a * c
        ad = ac + a * (d - c)
        bc = ac + (b - a) * c
        bd = ad + (b - a) * d
        return min(ac, ad, bc, bd) >> scale, -(-max(ac, ad, bc, bd) >> scale)

    return product


@lru_cache(maxsize=16)
def _scaled(digits):
    return ScaledSystem(digits)
