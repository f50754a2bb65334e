"""Certified enclosures: the number systems that decide the fraction system's tokens.

An :class:`IntervalSystem` runs the forward pass on intervals of decimals whose ends are
rounded outward; a :class:`BallSystem` on balls, a decimal mid with a short radius rounded up.
Either way every value contains the fraction system's value (its irrational values rounded
to as many digits) and the real-number model's (exact e^x, sqrt, sin, cos, erf, ln, pi), so a
comparison that the enclosures settle is settled for both; one they cannot settle raises
``numbers.Undecided`` (docs/exactness.md).

An irrational value is enclosed in two steps: the real value at more digits (decimal's
correctly rounded exp, ln and sqrt; the series of ``elementary`` for pi, sin, cos and erf),
then widened by 10^(2 - digits) of each end, which adds the fraction system's rounding of it
(within 10^(1 - digits) / 2 of the value, whatever its sign: :meth:`IntervalSystem._spread`).
"""

from contextlib import nullcontext
import decimal
from fractions import Fraction
from functools import lru_cache
import math

from ..constants import Expr, ExpTerm, Ln
from . import elementary
from .protocol import Undecided, _decimal_context, _Decides, correctly_rounded
from .rounding import evaluate

_D0 = decimal.Decimal(0)  # sign tests against a Decimal are faster than against the int 0
_D1 = decimal.Decimal(1)


def enclosure(digits):
    """The enclosing system for a fraction system rounding e^x to ``digits`` digits: balls
    from BALL_DIGITS on (one long product per product), intervals below (fewer operations)."""
    return IntervalSystem(digits) if digits < BALL_DIGITS else BallSystem(digits)


class _Ordered:
    """Comparisons of an enclosure (``ends()`` gives its (lo, hi)) with another or a number:
    answered when the ends settle them for every point inside, else :class:`Undecided`."""

    __slots__ = ()

    def _order(self, other):
        """-1, 0 or 1: self below, equal to (both the same point) or above other."""
        lo, hi = self.ends()
        if isinstance(other, _Ordered):
            c, d = other.ends()
        else:  # an int or Fraction: Decimals compare with them exactly
            c = d = other
        if lo > d:
            return 1
        if hi < c:
            return -1
        if lo == hi == c == d:
            return 0
        raise Undecided(f"cannot order {self!r} and {other!r}")

    def __gt__(self, other):
        return self._order(other) > 0

    def __ge__(self, other):
        return self._order(other) >= 0

    def __lt__(self, other):
        return self._order(other) < 0

    def __le__(self, other):
        return self._order(other) <= 0

    def contains(self, x):
        """Whether the rational x lies in the enclosure (for tests)."""
        lo, hi = self.ends()
        return Fraction(lo) <= Fraction(x) <= Fraction(hi)


def _scaled(x, digits):
    """(q, k) with q = floor(x 10^k) of digits + 3 or more digits, for a rational x whose
    numerator and denominator are far longer than ``digits`` (then x is no short decimal, and
    this integer division is cheaper than a decimal one of the whole numbers); else None."""
    n, d = x.numerator, x.denominator
    if n.bit_length() + d.bit_length() < 32 * digits + 4096:
        return None
    # |x| >= 2^(b - 1) for b the difference of bit lengths, and log10 2 < 0.30103
    k = digits + 4 - (n.bit_length() - d.bit_length() - 1) * 30103 // 100000
    return (n * 10 ** k // d if k >= 0 else n // (d * 10 ** -k)), k


class Interval(_Ordered):
    """A closed interval [lo, hi] of Decimals: the value lies in it.

    Every operation rounds its lower end down and its upper end up (``DOWN``, ``UP``: decimal
    contexts of one precision, set by :class:`IntervalSystem`), so the result contains every
    value the operation can take on points of its operands. A comparison is answered when the
    intervals settle it for every such point, and raises :class:`Undecided` otherwise.
    """

    __slots__ = ("lo", "hi")
    DOWN = UP = None

    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi

    def __repr__(self):
        return f"Interval({self.lo}, {self.hi})"

    @classmethod
    def point(cls, x):
        """The smallest interval of this precision around the rational x."""
        x = Fraction(x)
        scaled = _scaled(x, cls.DOWN.prec)
        if scaled is not None:  # q <= x 10^k < q + 1
            q, k = scaled
            return cls(decimal.Decimal(q).scaleb(-k, cls.DOWN),
                       decimal.Decimal(q + 1).scaleb(-k, cls.UP))
        n, d = decimal.Decimal(x.numerator), decimal.Decimal(x.denominator)
        lo, hi = cls.DOWN.divide(n, d), cls.UP.divide(n, d)
        return cls(lo, lo if lo == hi else hi)  # an exact point: one object (see __mul__)

    def _lift(self, x):
        return x if isinstance(x, Interval) else self.point(x)

    # The operators are written for speed: they run once per operation of a forward pass.
    def __add__(self, other):
        try:
            return self.__class__(self.DOWN.add(self.lo, other.lo), self.UP.add(self.hi, other.hi))
        except AttributeError:
            return self + self.point(other)

    __radd__ = __add__

    def __neg__(self):
        return self.__class__(self.hi.copy_negate(), self.lo.copy_negate())  # exact

    def __sub__(self, other):
        other = self._lift(other)
        return self.__class__(self.DOWN.subtract(self.lo, other.hi),
                              self.UP.subtract(self.hi, other.lo))

    def __rsub__(self, other):
        return self._lift(other) - self

    def __mul__(self, other):
        try:
            c, d = other.lo, other.hi
        except AttributeError:
            return self * self.point(other)
        a, b = self.lo, self.hi
        down, up = self.DOWN.multiply, self.UP.multiply
        if a is b:  # an exact point, as most weights are: one sign test
            if a >= _D0:
                return self.__class__(down(a, c), up(a, d))
            return self.__class__(down(a, d), up(a, c))
        if a >= _D0:
            if c >= _D0:
                return self.__class__(down(a, c), up(b, d))
            if d <= _D0:
                return self.__class__(down(b, c), up(a, d))
            return self.__class__(down(b, c), up(b, d))
        if b <= _D0:
            if c >= _D0:
                return self.__class__(down(a, d), up(b, c))
            if d <= _D0:
                return self.__class__(down(b, d), up(a, c))
            return self.__class__(down(a, d), up(a, c))
        if c >= _D0:
            return self.__class__(down(a, d), up(b, d))
        if d <= _D0:
            return self.__class__(down(b, c), up(a, c))
        return self.__class__(min(down(a, d), down(b, c)), max(up(a, c), up(b, d)))

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = self._lift(other)
        c, d = other.lo, other.hi
        if c <= _D0 <= d:
            raise Undecided("division by an interval that contains 0")
        a, b = self.lo, self.hi
        down, up = self.DOWN.divide, self.UP.divide
        if c > _D0:  # a positive divisor: the smallest quotient divides by d if a >= 0, else c
            return self.__class__(down(a, d) if a >= _D0 else down(a, c),
                                  up(b, c) if b >= _D0 else up(b, d))
        return self.__class__(down(b, d) if b >= _D0 else down(b, c),  # a negative divisor
                              up(a, c) if a >= _D0 else up(a, d))

    def __rtruediv__(self, other):
        return self._lift(other) / self

    def ends(self):
        return self.lo, self.hi

    def clamped(self):
        """max(x, 0) for every x inside: [max(lo, 0), max(hi, 0)] (max is monotone, so no
        sign need be decided)."""
        return self.__class__(max(self.lo, _D0), max(self.hi, _D0))


class IntervalSystem(_Decides):
    """Certified enclosures at ``digits`` significant digits: decides the fraction system.

    Every value is an :class:`Interval` that contains the value the fraction system with
    ``exp_digits = digits`` computes and the value of the real-number model, so a comparison
    it settles is settled for both. Rationals are enclosed by their directed roundings; e^x by
    the correctly rounded e^x widened by 10^(2 - digits) of itself, which covers the true value
    and the fraction system's rounding (each within 10^(1 - digits) of it); an Expr constant,
    sqrt, ln, sin, cos and erf as the module docstring says.
    """

    name = "interval"
    exact = True  # an enclosure of the exact values: any grouping is as sound

    def __init__(self, digits):
        self.digits = digits
        self.spec = f"interval:{digits}"
        down = _decimal_context(digits, decimal.ROUND_FLOOR)
        up = _decimal_context(digits, decimal.ROUND_CEILING)
        self.value = type(f"Interval{digits}", (Interval,), {"__slots__": (), "DOWN": down,
                                                              "UP": up})
        self._nearest = _decimal_context(digits + 5)
        self._bits = elementary.bits(digits + 5)  # the series' enclosures, as near as that
        self._narrow = Fraction(1, 10 ** (digits // 2))
        widen = decimal.Decimal(1).scaleb(2 - digits)  # exact
        self._below, self._above = down.subtract(1, widen), up.add(1, widen)  # exact
        self.point = self.value.point
        self.zero = self.point(0)
        self.one = self.point(1)
        self.roundings = ()
        self._exp = {}
        self._trig = {}
        self._constants = {}

    def __repr__(self):
        return f"IntervalSystem(digits={self.digits})"

    def describe(self):
        return f"interval ({self.digits} digits, outward rounding)"

    def fit(self, need):
        return self

    def arithmetic(self):
        return nullcontext()

    def _spread(self, lo, hi):
        """[lo - w |lo|, hi + w |hi|] for Decimals lo <= hi, w = 10^(2 - digits), rounded
        outward. If [lo, hi] holds f(v) for every v of an argument, this holds round(f(v)) too,
        for any rounding within u |f(v)| of f(v), u <= w: if f(v) >= 0, f(v)(1 - u) >= lo - w|lo|
        (lo >= 0: lo (1 - w) <= f(v)(1 - u); lo < 0: lo (1 + w) < 0), and if f(v) < 0,
        f(v)(1 + u) >= lo (1 + w); the upper end alike."""
        down, up = self.value.DOWN, self.value.UP
        return self.value(down.multiply(lo, self._below if lo >= 0 else self._above),
                          up.multiply(hi, self._above if hi >= 0 else self._below))

    def _around(self, nearest):
        """A value correctly rounded at digits + 5, widened: within 10^-(digits+4) of the true
        value, so [x (1 - w), x (1 + w)] holds it and its rounding to ``digits``."""
        return self._spread(nearest, nearest)

    def _bounded(self, lo, hi):
        """The rationals [lo, hi] rounded outward and spread, cut to [-1, 1] (the range of sin,
        cos and erf, which holds their values and the fraction system's roundings)."""
        down, up = self.value.DOWN, self.value.UP
        box = self._spread(down.divide(lo.numerator, lo.denominator),
                           up.divide(hi.numerator, hi.denominator))
        return self.value(max(box.lo, -_D1), min(box.hi, _D1))

    def _exp_below(self, x):
        """An enclosure of e^x (and of the fraction system's rounding of it), x a Decimal."""
        hit = self._exp.get(x)
        if hit is None:
            if x > 0:  # as the fraction system does: 1 / e^-x (-x would round in the
                # thread's decimal context; copy_negate is exact)
                hit = self.point(1) / self._exp_below(x.copy_negate())
            else:
                hit = self._around(self._nearest_exp(x))
            if len(self._exp) < 4096:
                self._exp[x] = hit
        return hit

    def _nearest_exp(self, x):
        """e^x correctly rounded at digits + 5, x <= 0 a Decimal: for an integer n with
        |n| <= 8 (digits + 5), from the enclosures of ``elementary.exp_integer``
        (``correctly_rounded``); otherwise by decimal's own exp, correctly rounded too but in
        a time that grows about as the cube of the digits (a twentieth of a second at
        2,045)."""
        digits = self.digits + 5
        # past 8 (digits + 5), e^|n| as an integer (1.44 |n| bits) outgrows what decimal's exp
        # spends on the digits kept (e^-10^8: 144 million bits)
        if x == 0 or x != x.to_integral_value() or -x > 8 * digits:
            return self._nearest.exp(x)
        n = int(x)
        return correctly_rounded(
            lambda extra: elementary.exp_integer(n, elementary.bits(digits + extra)), digits,
            f"e^{n}")

    def const(self, c):
        if isinstance(c, Expr):
            return self._constant(c)
        if isinstance(c, ExpTerm):
            if c.power == 0:
                return self.point(c.coef)
            exact = Fraction(c.power)
            if exact.denominator == 1:
                power = decimal.Decimal(exact.numerator)
            else:  # not a short decimal: enclose the power first
                power = self.point(exact)
                return self.point(c.coef) * IntervalSystem.exp(self, power)
            return self.point(c.coef) * self._exp_below(power)
        if isinstance(c, Ln):
            return IntervalSystem.ln(self, self.point(c.base))
        return self.point(c)

    slope = const

    def _constant(self, c):
        """An Expr, enclosed as a whole at digits + 5 digits (markers are the identity), then
        rounded outward and spread: it holds the real value and the fraction system's rounding
        of it, which rounds the Expr once (memoised per Expr)."""
        hit = self._constants.get(c)
        if hit is None:
            box = evaluate(interval_at(self.digits + 5), c)
            hit = self._constants[c] = self._spread(box.lo, box.hi)
        return hit

    def pi(self):
        """pi enclosed (the real number: a constant made with it is spread as a whole)."""
        lo, hi = elementary.pi(self._bits)
        return self.value(self.value.DOWN.divide(lo.numerator, lo.denominator),
                          self.value.UP.divide(hi.numerator, hi.denominator))

    def exp(self, x):
        return self.value(*self._exp_ends(x.lo, x.hi))

    def _exp_ends(self, lo, hi):
        """Ends of an enclosure of e^[lo, hi] (e^x is increasing). A narrow argument takes one
        exponential: e^hi = e^lo e^w <= e^lo (1 + 2 w) for 0 <= w = hi - lo <= 1."""
        if lo == hi == 0:
            return _D1, _D1
        below = self._exp_below(lo)
        up = self.value.UP
        width = up.subtract(hi, lo)
        if width <= 1:
            return below.lo, up.multiply(below.hi, up.add(1, up.multiply(2, width)))
        return below.lo, self._exp_below(hi).hi

    def sqrt(self, x):
        """sqrt over [lo, hi], lo >= 0: increasing, so its ends, correctly rounded at digits
        + 5 and spread."""
        lo, hi = self._domain(x, "sqrt", lambda lo: lo >= 0)
        return self._spread(self._nearest.sqrt(lo), self._nearest.sqrt(hi))

    def ln(self, x):
        """ln over [lo, hi], lo > 0: increasing, so its ends, correctly rounded at digits + 5
        and spread."""
        lo, hi = self._domain(x, "ln", lambda lo: lo > 0)
        at_lo = self._nearest_ln(lo)
        return self._spread(at_lo, at_lo if hi == lo else self._nearest_ln(hi))

    def _nearest_ln(self, x):
        """ln x correctly rounded at digits + 5, x > 0 a Decimal: for an integer, from the
        enclosures of ``elementary.ln_integer``; otherwise by decimal's own ln, correctly
        rounded too but slow at thousands of digits (ln 10: a twentieth of a second at
        2,045)."""
        if x == 1 or x != x.to_integral_value():
            return self._nearest.ln(x)
        n, digits = int(x), self.digits + 5
        return correctly_rounded(
            lambda extra: elementary.ln_integer(n, elementary.bits(digits + extra)), digits,
            f"ln {n}")

    def _domain(self, x, op, inside):
        """x's ends, when every point of x is in op's domain (``inside(lo)``). An interval
        wholly outside is a ValueError; one across the domain's edge is Undecided (more
        digits may settle it)."""
        if inside(x.lo):
            return x.lo, x.hi
        if not inside(x.hi):
            raise ValueError(f"{op} of {x!r}: outside its domain")
        raise Undecided(f"{op} of {x!r}, which reaches outside its domain")

    def erf(self, x):
        """erf over [lo, hi]: increasing, so its ends' enclosures (``elementary.erf``); a
        narrow interval takes one, plus (2/sqrt pi < 1.13) (hi - lo)."""
        lo, hi = Fraction(x.lo), Fraction(x.hi)
        a, b = elementary.erf(lo, self._bits)
        if hi - lo <= self._narrow:
            slack = Fraction(113, 100) * (hi - lo)
            return self._bounded(a - slack, b + slack)
        return self._bounded(a, elementary.erf(hi, self._bits)[1])

    def sin(self, x):
        """sin over [lo, hi] (:meth:`_periodic`; extrema at (k + 1/2) pi, of value (-1)^k)."""
        return self._turn("sin", x, elementary.sin, Fraction(1, 2))

    def cos(self, x):
        """cos over [lo, hi] (:meth:`_periodic`; extrema at k pi, of value (-1)^k)."""
        return self._turn("cos", x, elementary.cos, Fraction(0))

    def _turn(self, op, x, f, phase):
        """:meth:`_periodic`, memoised per op and ends (a rotary angle recurs at every addition;
        the result is a function of the ends' values)."""
        key = (op, x.lo, x.hi)
        hit = self._trig.get(key)
        if hit is None:
            hit = self._periodic(x, f, phase)
            if len(self._trig) < 4096:
                self._trig[key] = hit
        return hit

    def _periodic(self, x, f, phase):
        """sin or cos (``f``) over [lo, hi]. Narrow: f(lo)'s enclosure plus hi - lo (f is
        1-Lipschitz). Wider than 2 pi: [-1, 1]. Otherwise f is monotone between its
        extrema, so its range is the hull of f(lo), f(hi) and the extrema (k + phase) pi that
        may lie in [lo, hi] (pi enclosed: an extremum that might lie in it is counted)."""
        lo, hi = Fraction(x.lo), Fraction(x.hi)
        a, b = f(lo, self._bits)
        width = hi - lo
        if width <= self._narrow:
            return self._bounded(a - width, b + width)
        pi_lo, pi_hi = elementary.pi(self._bits)
        if width >= 2 * pi_lo:
            return self.value(-_D1, _D1)
        c, d = f(hi, self._bits)
        a, b = min(a, c), max(b, d)
        first = math.floor(min(lo / pi_lo, lo / pi_hi) - phase) - 1
        last = math.ceil(max(hi / pi_lo, hi / pi_hi) - phase) + 1
        for k in range(first, last + 1):
            near, far = sorted(((k + phase) * pi_lo, (k + phase) * pi_hi))
            if near <= hi and far >= lo:
                a, b = min(a, Fraction((-1) ** k)), max(b, Fraction((-1) ** k))
        return self._bounded(a, b)

    def largest(self, values):
        """The value with the largest midpoint, as is (the pattern does not depend on it)."""
        up = self.value.UP
        return max(values, key=lambda v: up.add(v.lo, v.hi))


@lru_cache(maxsize=16)
def interval_at(digits):
    """The IntervalSystem at ``digits`` digits (one per precision: its memos are shared)."""
    return IntervalSystem(digits)


class Ball(_Ordered):
    """A ball mid ± rad: the value lies in [mid - rad, mid + rad].

    ``mid`` is a decimal rounded to nearest at the system's precision, ``rad`` a short decimal
    rounded up that bounds every error so far: the operands' radii carried through the
    operation, plus the rounding of mid (at most 10^(e + 1 - P) for a mid of exponent e at P
    digits). One long operation per operation instead of an interval's two, so it is the
    cheaper enclosure for long numbers (:class:`BallSystem`).
    """

    __slots__ = ("mid", "rad")
    NEAR = RAD = LOW = DOWN = UP = None  # contexts, set by BallSystem
    DIGITS = 0

    def __init__(self, mid, rad):
        self.mid = mid
        self.rad = rad

    def __repr__(self):
        return f"Ball({self.mid} +- {self.rad})"

    @classmethod
    def _ulp(cls, m):
        """A bound on the rounding error of a mid m rounded to nearest."""
        return _ONE.scaleb(m.adjusted() + 1 - cls.DIGITS, cls.RAD) if m else m

    @classmethod
    def point(cls, x):
        x = Fraction(x)
        scaled = _scaled(x, cls.DIGITS)
        if scaled is not None:  # |x - mid| <= half an ulp of mid + 10^-k, below one ulp
            q, k = scaled
            mid = decimal.Decimal(q).scaleb(-k, cls.NEAR)
            return cls(mid, cls._ulp(mid))
        mid = cls.NEAR.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
        exact = Fraction(mid) == x
        return cls(mid, _ZERO if exact else cls._ulp(mid))

    @classmethod
    def around(cls, lo, hi):
        """The ball around [lo, hi]."""
        mid = cls.NEAR.divide(cls.NEAR.add(lo, hi), 2)
        return cls(mid, max(cls.RAD.subtract(hi, mid), cls.RAD.subtract(mid, lo)))

    def ends(self):
        """(lo, hi) of the ball, rounded outward."""
        return self.DOWN.subtract(self.mid, self.rad), self.UP.add(self.mid, self.rad)

    def clamped(self):
        """max(x, 0) for every x inside: the ball around [max(lo, 0), max(hi, 0)]."""
        lo, hi = self.ends()
        return self.around(max(lo, _ZERO), max(hi, _ZERO))

    def _lift(self, x):
        return x if isinstance(x, Ball) else self.point(x)

    def __add__(self, other):
        other = self._lift(other)
        m = self.NEAR.add(self.mid, other.mid)
        rad = self.RAD
        return self.__class__(m, rad.add(rad.add(self.rad, other.rad), self._ulp(m)))

    __radd__ = __add__

    def __neg__(self):
        return self.__class__(self.mid.copy_negate(), self.rad)

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) + (-self)

    def __mul__(self, other):
        other = self._lift(other)
        m = self.NEAR.multiply(self.mid, other.mid)
        rad, r = self.RAD, self._ulp(m)
        if self.rad:
            r = rad.add(r, rad.multiply(other.mid.copy_abs(), self.rad))
            if other.rad:
                r = rad.add(r, rad.multiply(self.rad, other.rad))
        if other.rad:
            r = rad.add(r, rad.multiply(self.mid.copy_abs(), other.rad))
        return self.__class__(m, r)

    __rmul__ = __mul__

    def __truediv__(self, other):
        """|a'/b' - a/b| <= (ra |b| + |a| rb) / (|b| (|b| - rb)) for a' in a ± ra and b' in
        b ± rb."""
        other = self._lift(other)
        b = other.mid.copy_abs()
        gap = self.LOW.subtract(b, other.rad)
        if gap <= 0:
            raise Undecided("division by a ball that contains 0")
        m = self.NEAR.divide(self.mid, other.mid)
        rad = self.RAD
        error = rad.add(rad.multiply(self.rad, b), rad.multiply(self.mid.copy_abs(), other.rad))
        return self.__class__(m, rad.add(rad.divide(error, self.LOW.multiply(b, gap)),
                                         self._ulp(m)))

    def __rtruediv__(self, other):
        return self._lift(other) / self


_ONE, _ZERO = decimal.Decimal(1), decimal.Decimal(0)
BALL_DIGITS = 200  # from this many digits on, the fraction system decides over balls


class BallSystem(IntervalSystem):
    """:class:`IntervalSystem`'s enclosures as balls: constants and exponentials are enclosed
    as intervals, then turned into balls; the forward pass runs on balls."""

    name = "ball"

    def __init__(self, digits):
        super().__init__(digits)
        self.spec = f"ball:{digits}"
        near = _decimal_context(digits)
        self.ball = type(f"Ball{digits}", (Ball,), {
            "__slots__": (), "NEAR": near, "DIGITS": digits,
            "RAD": _decimal_context(6, decimal.ROUND_CEILING),
            "LOW": _decimal_context(6, decimal.ROUND_FLOOR),
            "DOWN": self.value.DOWN, "UP": self.value.UP})
        self.zero = self.ball.point(0)
        self.one = self.ball.point(1)

    def __repr__(self):
        return f"BallSystem(digits={self.digits})"

    def describe(self):
        return f"ball ({self.digits} digits, radius rounded up)"

    def _ball(self, box):
        return self.ball.around(box.lo, box.hi)

    def const(self, c):
        return self._ball(super().const(c))

    slope = const

    def pi(self):
        return self._ball(super().pi())

    def _through(self, f, x):
        """The interval function f on the ball x's ends, as a ball."""
        return self._ball(f(self, self.value(*x.ends())))

    def exp(self, x):
        return self._through(IntervalSystem.exp, x)

    def sqrt(self, x):
        return self._through(IntervalSystem.sqrt, x)

    def ln(self, x):
        return self._through(IntervalSystem.ln, x)

    def sin(self, x):
        return self._through(IntervalSystem.sin, x)

    def cos(self, x):
        return self._through(IntervalSystem.cos, x)

    def erf(self, x):
        return self._through(IntervalSystem.erf, x)

    def largest(self, values):
        """The value with the largest mid, as is."""
        return max(values, key=lambda v: v.mid)
