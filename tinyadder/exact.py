"""Exact rationals that put off big-number work: the engine's values in the fraction system.

``Fraction`` reduces every result with a gcd. That is cheap for the model's small values but
not once a running sum collects terms whose denominators differ at every position: its
denominator grows to thousands of digits, and then every slot it is added into, and every
comparison, costs big-integer multiplications and gcds.

A :class:`Rational` is exactly one rational number, held in one of two forms:

- plain: a ``Fraction``, used while operands stay small (denominators up to ``LIMIT`` bits);
- a weighted sum  x = sum_k c_k x_k  of other Rationals with small plain weights c_k, built
  instead of a plain result when the plain one would be big. Sums share their terms, so adding
  a term to a running sum, scaling it, or adding it into many slots is O(1).

Comparisons are exact decisions made cheaply: both sides are approximated at a scale 2^-E as
integers with a certified error bound (for a plain p/q: floor(p 2^E / q), error < 1; for a
sum: sum of floor(c_k A_k), error sum |c_k| e_k + 1), and the sign is read off when the
difference exceeds the bounds; otherwise E grows, and if that is still not enough (a tie, or a
difference below 2^-4096) the two are compared exactly, as cross-multiplied integers.
``pair()`` evaluates a sum exactly as an unreduced integer pair (memoised),
``fraction()`` reduces that once; ``==`` compares exactly. So a Rational is the very rational
the reference forward pass computes, in another representation.
"""

from fractions import Fraction
from math import gcd

LIMIT = 8192          # bits: a plain result whose denominators add up to more becomes a sum
COEF_BITS = 256       # bits: a plain value this small may weight a sum
SCALES = (64, 512, 4096)  # approximation scales tried before evaluating exactly


def _bits(f):
    return f.denominator.bit_length()


def _sign(a, b):
    """Sign of a - b for Fractions, by cross-multiplied integers (no gcd)."""
    x, y = a.numerator * b.denominator, b.numerator * a.denominator
    return (x > y) - (x < y)


def _small(f):
    return f.numerator.bit_length() + f.denominator.bit_length() <= COEF_BITS


class Rational:
    """One exact rational: ``plain`` (a Fraction) or ``terms`` ((weight, Rational), ...)."""

    __slots__ = ("plain", "terms", "_approx", "_pair")

    def __init__(self, plain=None, terms=None):
        self.plain = plain if plain is None or type(plain) is Fraction else Fraction(plain)
        self.terms = terms
        self._approx = None
        self._pair = None

    def __repr__(self):
        if self.plain is not None:
            return f"Rational({self.plain!r})"
        return f"Rational(<sum of {len(self.terms)} terms>)"

    def _bottom_up(self, done):
        """The sum nodes under (and including) self that are not ``done``, each after all of
        its terms: the order to evaluate them in, without recursion (sums nest deeply)."""
        stack = [self]
        while stack:
            node = stack[-1]
            if done(node):  # a shared term, evaluated meanwhile
                stack.pop()
                continue
            todo = [t for _, t in node.terms if t.plain is None and not done(t)]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            yield node  # the caller evaluates it, so it is done when the walk resumes

    # --- exact value -------------------------------------------------------------------
    def pair(self):
        """(n, d), d > 0, with value n / d, not reduced: a sum is evaluated bottom-up
        (memoised, without recursion) over the lcm of its terms' denominators."""
        if self.plain is not None:
            return self.plain.numerator, self.plain.denominator
        for node in self._bottom_up(lambda n: n._pair is not None):
            num, den = 0, 1
            for c, t in node.terms:
                n, d = t.pair()
                n, d = n * c.numerator, d * c.denominator
                if d == den:
                    num += n
                else:  # over lcm(den, d), so common factors (powers of ten) do not pile up
                    g = gcd(den, d)
                    num, den = num * (d // g) + n * (den // g), den * (d // g)
            node._pair = num, den
        return self._pair

    def fraction(self):
        """The exact value as a (reduced) Fraction."""
        if self.plain is None:
            self.plain = Fraction(*self.pair())
            self.terms = self._approx = self._pair = None  # the value replaces the sum
        return self.plain

    # --- certified approximation -------------------------------------------------------
    def approx(self, scale):
        """(A, e): an integer A with |x 2^scale - A| <= e."""
        if self.plain is not None:
            f = self.plain
            return (f.numerator << scale) // f.denominator, 1
        memo = self._approx
        if memo is not None and scale in memo:
            return memo[scale]
        for node in self._bottom_up(lambda n: n._approx is not None and scale in n._approx):
            total, error = 0, 0
            for c, t in node.terms:
                a, e = t.approx(scale)
                if c.denominator == 1:
                    total += c.numerator * a
                    error += abs(c.numerator) * e
                else:
                    total += (c.numerator * a) // c.denominator
                    error += -(-abs(c.numerator) * e // c.denominator) + 1
            if node._approx is None:
                node._approx = {}
            node._approx[scale] = (total, error)
        return self._approx[scale]

    def _cmp(self, other):
        """Sign of self - other, exactly."""
        other = lift(other)
        if self.plain is not None and other.plain is not None:
            return _sign(self.plain, other.plain)
        for scale in SCALES:
            a, ea = self.approx(scale)
            b, eb = other.approx(scale)
            if a - b > ea + eb:
                return 1
            if b - a > ea + eb:
                return -1
        (a, b), (c, d) = self.pair(), other.pair()
        x, y = a * d, c * b  # b, d > 0
        return (x > y) - (x < y)

    # --- arithmetic --------------------------------------------------------------------
    def __add__(self, other):
        other = lift(other)
        a, b = self.plain, other.plain
        if a is not None and b is not None and _bits(a) + _bits(b) <= LIMIT:
            return Rational(a + b)
        return Rational(terms=((_ONE, self), (_ONE, other)))

    __radd__ = __add__

    def __neg__(self):
        if self.plain is not None:
            return Rational(-self.plain)
        return Rational(terms=((-_ONE, self),))

    def __sub__(self, other):
        return self + (-lift(other))

    def __rsub__(self, other):
        return lift(other) + (-self)

    def __mul__(self, other):
        other = lift(other)
        a, b = self.plain, other.plain
        if a is not None and b is not None and _bits(a) + _bits(b) <= LIMIT:
            return Rational(a * b)
        if b is not None and _small(b):
            return Rational(terms=((b, self),)) if b else _ZERO
        if a is not None and _small(a):
            return Rational(terms=((a, other),)) if a else _ZERO
        return Rational(self.fraction() * other.fraction())  # reduced: no growth along chains

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = lift(other)
        b = other.plain
        if b is not None and (self.plain is not None or _small(b)):
            return self * Rational(1 / b)
        return Rational(self.fraction() / other.fraction())

    def __rtruediv__(self, other):
        return lift(other) / self

    def __eq__(self, other):
        if isinstance(other, (Rational, Fraction, int)):
            (a, b), (c, d) = self.pair(), lift(other).pair()
            return a * d == c * b
        return NotImplemented

    __hash__ = None  # mutable representation; compare with ==

    def __bool__(self):
        return self._cmp(_ZERO) != 0

    def __lt__(self, other):
        return self._cmp(other) < 0

    def __le__(self, other):
        return self._cmp(other) <= 0

    def __gt__(self, other):
        return self._cmp(other) > 0

    def __ge__(self, other):
        return self._cmp(other) >= 0


def lift(x):
    """x as a Rational (ints and Fractions are wrapped)."""
    return x if isinstance(x, Rational) else Rational(Fraction(x))


_ONE = Fraction(1)
_ZERO = Rational(Fraction(0))
