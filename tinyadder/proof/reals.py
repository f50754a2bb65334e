"""Exact rationals that are costly to form, known at once by a certified float enclosure.

A box bound of an affine form is a sum of one rational per variable, and each has its own
denominator hundreds of digits long, so the exact sum has a denominator as long as all of them
together (10^4 digits at N = 10, 10^5 at N = 100) and forming it costs seconds. Nearly every
question asked of such a bound (is it positive? is it above a threshold? what is its floor?)
is settled by an enclosure lo <= x <= hi in floats, rounded outward: each rational is rounded
to the nearest float (correctly rounded) and widened by one ulp, and every sum or product of
the enclosure is widened by one ulp again. A :class:`Real` answers from its enclosure when the
enclosure decides, and otherwise from the exact value, formed once, when first needed. So
every answer is exact; only its cost depends on the enclosure.
"""

from fractions import Fraction
from math import floor, fsum, inf, isfinite, nextafter


def _down(x):
    return -inf if x != x else nextafter(x, -inf)  # NaN (inf - inf): no information


def _up(x):
    return inf if x != x else nextafter(x, inf)


def enclose(q):
    """(lo, hi): floats with lo <= q <= hi for a rational q."""
    try:
        f = float(q)
    except OverflowError:
        return (-inf, inf)
    return _down(f), _up(f)


def enclose_sum(qs):
    """(lo, hi) around the sum of the rationals qs."""
    ends = [enclose(q) for q in qs]
    try:
        return _down(fsum(lo for lo, _ in ends)), _up(fsum(hi for _, hi in ends))
    except (OverflowError, ValueError):  # an overflow, or inf - inf
        return (-inf, inf)


class Real:
    """A rational x known by floats lo <= x <= hi, and exactly by ``exact()`` (computed once,
    by the function given, only when the enclosure cannot answer)."""

    __slots__ = ("lo", "hi", "_make", "_value")

    def __init__(self, lo, hi, make):
        self.lo, self.hi, self._make, self._value = lo, hi, make, None

    @classmethod
    def of(cls, q):
        """The rational q itself."""
        q = Fraction(q)
        real = cls(*enclose(q), None)
        real._value = q
        return real

    @classmethod
    def sum(cls, qs):
        """The sum of the rationals qs (a list)."""
        return cls(*enclose_sum(qs), lambda: sum(qs, Fraction(0)))

    def exact(self):
        if self._value is None:
            self._value = self._make()
            self._make = None
        return self._value

    def __repr__(self):
        return f"Real({self.lo!r} .. {self.hi!r})"

    def __float__(self):
        if isfinite(self.lo) and isfinite(self.hi):
            return (self.lo + self.hi) / 2
        return float(self.exact())

    def __floor__(self):
        if isfinite(self.lo) and isfinite(self.hi) and floor(self.lo) == floor(self.hi):
            return floor(self.lo)
        return floor(self.exact())

    # --- comparisons -----------------------------------------------------------------------
    def _sign(self, other):
        """The sign of self - other (other a Real or a rational)."""
        if not isinstance(other, Real):
            other = Real.of(other)
        if self.lo > other.hi:
            return 1
        if self.hi < other.lo:
            return -1
        d = self.exact() - other.exact()
        return (d > 0) - (d < 0)

    def __gt__(self, other):
        return self._sign(other) > 0

    def __ge__(self, other):
        return self._sign(other) >= 0

    def __lt__(self, other):
        return self._sign(other) < 0

    def __le__(self, other):
        return self._sign(other) <= 0

    # --- arithmetic with rationals and Reals -----------------------------------------------
    def __add__(self, other):
        if not isinstance(other, Real):
            other = Real.of(other)
        return Real(_down(self.lo + other.lo), _up(self.hi + other.hi),
                    lambda: self.exact() + other.exact())

    __radd__ = __add__

    def __neg__(self):
        return Real(-self.hi, -self.lo, lambda: -self.exact())

    def __sub__(self, other):
        return self + (-other if isinstance(other, Real) else -Fraction(other))

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, k):
        """self * k for a rational k."""
        k = Fraction(k)
        klo, khi = enclose(k)
        corners = [a * b for a in (self.lo, self.hi) for b in (klo, khi)]
        if any(c != c for c in corners):  # 0 * inf
            corners = [-inf, inf]
        return Real(_down(min(corners)), _up(max(corners)), lambda: self.exact() * k)

    __rmul__ = __mul__
