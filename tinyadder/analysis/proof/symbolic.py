"""A number system whose values are affine forms in the digits, for running the model's own
forward pass symbolically (``tinyadder.forward``), and bounds that cover the real-number model.

A value is a :class:`Ball`: an affine form  c_0 + sum_v c_v x_v  in digit variables x_v (each
in 0..9; a variable is the position of the digit in the sequence), with exact ``Fraction``
coefficients, and a radius rho >= 0. The form (the *centre*) is exactly what the fraction
system computes for those digits: every exponential is the fraction system's own rounding
(``numbers.FractionSystem``). The radius bounds, uniformly over the digit box, how far the
real-number model (every exponential exact) can be from the centre:

    |f_real(x) - f_centre(x)| <= rho   for every x in [0, 9]^vars.

Rules: (f + g) has radius rho_f + rho_g; k f (k digit-free, k = k_c +- rho_k) has radius
(|k_c| + rho_k) rho_f + rho_k max|f_c| (max over the box); 1/k has radius
rho_k / (|k_c| (|k_c| - rho_k)). An exponential's radius is its distance from a 20-digits-more
evaluation plus that evaluation's own half ulp. Radii are rounded up to powers of two, so
they stay short.

Only what the forward pass does is supported: products and quotients where one side is free
of digits (else :class:`NotAffine`: the method does not reach that model), attention scores
free of digits, and comparisons with 0 (the ReLUs). A comparison is decided over the whole
region (the digit box, narrowed by the driver's assumptions): ``g > 0`` is True when g >= 0
everywhere (then relu(g) u = g u there), False when g <= 0 everywhere; otherwise the active
``oracle(g)`` decides it (the driver's class), and raises if there is none. An oracle may
also decide a gate the box decides (to read a formula on a stretch of L the digits do not
reach), or return None to leave it to the box.
"""

from contextlib import contextmanager
from fractions import Fraction
import decimal

from ...numbers import LogScore, for_model, number_system

DIGIT_MAX = 9


class NotAffine(ValueError):
    """The forward pass did something the affine method cannot follow (say what, where)."""


def round_up(r):
    """A power of two >= r (r a non-negative Fraction); 0 stays 0."""
    if not r:
        return Fraction(0)
    e = r.numerator.bit_length() - r.denominator.bit_length() + 1
    return Fraction(2) ** e


_ACTIVE = []  # the system whose arithmetic() is running: Ball comparisons consult it


class Ball:
    """c_0 + sum c_v x_v (exact centre) with radius rho covering the real-number model."""

    __slots__ = ("coefs", "const", "rad")

    def __init__(self, const=Fraction(0), coefs=None, rad=Fraction(0)):
        self.const = const
        self.coefs = coefs or {}
        self.rad = rad

    def __repr__(self):
        terms = " + ".join(f"{c}*x{v}" for v, c in sorted(self.coefs.items()))
        return f"Ball({self.const}{' + ' + terms if terms else ''} +- {float(self.rad):.3g})"

    # --- reading ---------------------------------------------------------------------------
    @property
    def is_constant(self):
        return not self.coefs

    def bounds(self, fixed=None):
        """(min, max) of the centre over the digit box (variables in ``fixed`` set to values)."""
        lo = hi = self.const
        for v, c in self.coefs.items():
            if fixed and v in fixed:
                lo += c * fixed[v]
                hi += c * fixed[v]
            elif c > 0:
                hi += c * DIGIT_MAX
            else:
                lo += c * DIGIT_MAX
        return lo, hi

    def magnitude(self):
        lo, hi = self.bounds()
        return max(abs(lo), abs(hi))

    def at(self, values):
        """The centre at a full assignment {variable: digit}."""
        return self.const + sum(c * values[v] for v, c in self.coefs.items())

    # --- arithmetic ------------------------------------------------------------------------
    def __add__(self, other):
        if isinstance(other, LogScore):  # an ALiBi score: q k (digit-free) + c ln b
            if not self.is_constant or self.rad:
                raise NotAffine("an attention score that depends on the digits")
            return self.const + other
        other = lift(other)
        coefs = dict(self.coefs)
        for v, c in other.coefs.items():
            s = coefs.get(v, 0) + c
            if s:
                coefs[v] = s
            else:
                coefs.pop(v, None)
        return Ball(self.const + other.const, coefs, self.rad + other.rad)

    __radd__ = __add__

    def __neg__(self):
        return Ball(-self.const, {v: -c for v, c in self.coefs.items()}, self.rad)

    def __sub__(self, other):
        return self + (-other if isinstance(other, LogScore) else -lift(other))

    def __rsub__(self, other):
        return lift(other) + (-self)

    def scale(self, k, rad=Fraction(0)):
        """(k +- rad) * self for a digit-free k."""
        if not k and not rad:
            return Ball()
        r = (abs(k) + rad) * self.rad
        if rad:
            r += rad * self.magnitude()
        coefs = {v: c * k for v, c in self.coefs.items()} if k else {}
        return Ball(self.const * k, coefs, round_up(r))

    def __mul__(self, other):
        other = lift(other)
        if other.is_constant:
            return self.scale(other.const, other.rad)
        if self.is_constant:
            return other.scale(self.const, self.rad)
        raise NotAffine("a product of two digit-dependent values")

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = lift(other)
        if not other.is_constant:
            raise NotAffine("a division by a digit-dependent value")
        k, r = other.const, other.rad
        if abs(k) <= r:
            raise NotAffine("a division by a value that may be 0")
        return self.scale(1 / k, round_up(r / (abs(k) * (abs(k) - r))))

    def __rtruediv__(self, other):
        return lift(other) / self

    # --- the ReLUs -------------------------------------------------------------------------
    def _sign(self, other):
        g = self - lift(other)
        system = _ACTIVE[-1] if _ACTIVE else None
        if system is None:
            raise NotAffine("a comparison outside a symbolic forward pass")
        return system.decide(g)

    def __gt__(self, other):
        return self._sign(other)

    def __lt__(self, other):
        return lift(other)._sign(self)


def lift(x):
    if isinstance(x, Ball):
        return x
    return Ball(Fraction(x))


def variable(v, coef=1):
    return Ball(Fraction(0), {v: Fraction(coef)})


class SymbolicSystem:
    """The number system of affine forms (see the module docstring), for one model.

    ``oracle``: called with every gate; returns the sign assumed (True: positive), or None to
    let the digit box decide it. ``comparisons``: the gates of every ReLU met, in order, with the
    answer given, since the last ``clear()``.
    """

    name = "symbolic"
    exact = False  # its radii depend on how products are grouped: keep the textbook grouping

    def __init__(self, model):
        self.fraction = for_model(number_system("fraction"), model)
        self.zero = Ball()
        self.one = Ball(Fraction(1))
        self.oracle = None
        self.comparisons = []
        self._exp = {}

    def __repr__(self):
        return f"SymbolicSystem({self.fraction!r})"

    def describe(self):
        return f"symbolic (affine forms in the digits; centres in {self.fraction.describe()})"

    def fit(self, need):
        return self

    @contextmanager
    def arithmetic(self):
        _ACTIVE.append(self)
        try:
            yield
        finally:
            _ACTIVE.pop()

    def clear(self):
        self.comparisons = []

    def decide(self, g):
        answer = self.oracle(g) if self.oracle else None
        if answer is None:
            lo, hi = g.bounds()
            if lo >= 0:
                answer = True
            elif hi <= 0:
                answer = False
            else:
                raise NotAffine("a ReLU whose sign depends on the digits")
        self.comparisons.append((g, answer))
        return answer

    # --- constants and exponentials ----------------------------------------------------------
    def const(self, c):
        if isinstance(c, (int, Fraction)):
            return Ball(Fraction(c))
        centre = self.fraction.const(c)  # an ExpTerm: coef * e^power, rounded as the fraction system
        return Ball(centre, rad=self._exp_radius(centre, c.power, c.coef))

    def slope(self, c):
        """As the fraction system keeps it: ln b symbolic, so that its scores stay exact."""
        return self.fraction.slope(c)

    def exp(self, x):
        """e^x of a digit-free score (a Fraction, or q k - d ln b as a LogScore)."""
        if isinstance(x, Ball):
            if not x.is_constant or x.rad:
                raise NotAffine("an attention score that depends on the digits")
            x = x.const
        hit = self._exp.get(x)
        if hit is None:
            f = self.fraction
            centre = f.exp(x)
            # exp(r - d ln b) = exp(r) * b**-d: only exp(r) is rounded (the fraction system
            # keeps b**-d exact for a slope ln b, and exp(0) = 1)
            r = x.rational if isinstance(x, LogScore) else Fraction(x)
            factor = centre / f.exp(r) if r else Fraction(1)
            rad = self._exp_radius(centre, r, factor) if r else Fraction(0)
            hit = self._exp[x] = Ball(centre, rad=rad)
        return hit

    def _exp_radius(self, centre, power, factor):
        """A bound on |factor * e**power - centre| from a 20-digits-more evaluation."""
        power = Fraction(power)
        if power == 0:
            return abs(Fraction(factor) - centre)
        digits = self.fraction.exp_digits + 20
        ctx = decimal.Context(prec=digits, Emin=-decimal.MAX_EMAX, Emax=decimal.MAX_EMAX)
        x = ctx.divide(decimal.Decimal(power.numerator), decimal.Decimal(power.denominator))
        value = ctx.exp(x)  # correctly rounded: |value - e^x| <= half an ulp (x itself exact
        # when power is an integer, as every score and weight of this construction is)
        if power.denominator != 1:
            raise NotAffine("an exponential of a non-integer argument")
        ulp = Fraction(10) ** (value.adjusted() - digits + 1)
        err = abs(Fraction(value) * Fraction(factor) - centre) + ulp * abs(Fraction(factor))
        return round_up(err)
