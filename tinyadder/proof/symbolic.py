"""A number system whose values are affine forms in input variables with a certified radius,
for running a model's own forward pass symbolically (``tinyadder.forward``).

A value is an :class:`Affine`: a form  c_0 + sum_v c_v x_v  in variables x_v, each ranging
over [0, TOP] (TOP = 9: the variables are digits), with exact ``Fraction`` coefficients, and a
radius rho >= 0. The form (the *centre*) is exactly what the fraction system computes for
those values of the variables: every exponential is the fraction system's own rounding
(``numbers.FractionSystem``). The radius bounds, uniformly over the box, how far the
real-number model (every exponential exact) can be from the centre:

    |f_real(x) - f_centre(x)| <= rho   for every x in [0, TOP]^vars.

Rules: (f + g) has radius rho_f + rho_g; k f (k free of variables, k = k_c +- rho_k) has
radius (|k_c| + rho_k) rho_f + rho_k M, M >= max|f_c| over the box (to a float's
precision: ``magnitude``); 1/k has radius
rho_k / (|k_c| (|k_c| - rho_k)). An exponential's radius is its distance from a
20-digits-more evaluation plus that evaluation's own half ulp. Radii are rounded up to
powers of two, so they stay short.

Only what an affine method can follow is supported: products and quotients where one side is
free of variables (else :class:`NotAffine`), attention scores free of variables, and
comparisons (the ReLUs). A value compares through its own system: ``g > h`` asks the system
for the sign of g - h over the region, True when g - h >= 0 everywhere (then relu(g - h) u =
(g - h) u there), False when g - h <= 0 everywhere. An assumption may decide it instead
(``with ns.assuming(oracle) as met``: ``oracle(gate)`` returns the sign assumed, or None to
leave it to the box; ``met`` lists every gate met and the answer given); a sign that neither
decides raises NotAffine.

Representation. The coefficients are stored as c_v = s w_v: a scale s and a :class:`Vector` w,
immutable and shared. Scaling a value is O(1), and so is adding two values that share a
vector; otherwise the longer vector is copied and the shorter folded into it (O(shorter)
rational operations), and the result remembers that it is base + k delta, so that
subtracting the base again costs O(len(delta)). A value's bounds over the box come from its
vector's sums of positive and of negative entries, kept as :class:`~.reals.Real`: a float
enclosure at once, the exact sum only when a question needs it. A forward pass mostly
rescales and re-adds one running sum, so a position costs O(1) rational operations on long
coefficients plus a copy.
"""

from contextlib import contextmanager
from fractions import Fraction
from math import isfinite
import decimal

from ..constants import ExpTerm, text
from ..numbers import LogScore, for_model, number_system
from ..numbers.protocol import OverSets
from .reals import Real

TOP = 9  # every variable ranges over 0..TOP: a digit
ZERO, ONE = Fraction(0), Fraction(1)


class NotAffine(ValueError):
    """The forward pass did something the affine method cannot follow (say what, where)."""


def round_up(r):
    """A power of two >= r (r a non-negative Fraction); 0 stays 0."""
    if not r:
        return ZERO
    e = r.numerator.bit_length() - r.denominator.bit_length() + 1
    return Fraction(2) ** e


class Vector:
    """An immutable sparse vector {variable: non-zero Fraction}. Its sums of positive and of
    negative entries are formed when first asked for (``sums``), as :class:`~.reals.Real`.
    A vector made by ``plus`` remembers that it is base + k delta, so that subtracting the base
    again costs O(len(delta))."""

    __slots__ = ("entries", "base", "delta", "k", "_sums")

    def __init__(self, entries, base=None, delta=None, k=None):
        self.entries, self.base, self.delta, self.k = entries, base, delta, k
        self._sums = None

    @classmethod
    def of(cls, entries):
        return cls({v: c for v, c in entries.items() if c})

    def __len__(self):
        return len(self.entries)

    def __reduce__(self):  # pickled for --jobs: the entries alone
        return Vector, (self.entries,)

    def sums(self):
        """(sum of the negative entries, sum of the positive ones), as Reals."""
        if self._sums is None:
            values = list(self.entries.values())
            self._sums = (Real.sum([c for c in values if c < 0]),
                          Real.sum([c for c in values if c > 0]))
        return self._sums

    def plus(self, other, k):
        """self + k other (None when every entry cancels): a copy of self, O(len(other))
        rational operations."""
        entries = dict(self.entries)
        for v, c in other.entries.items():
            new = entries.get(v, 0) + k * c
            if new:
                entries[v] = new
            else:
                del entries[v]
        return Vector(entries, self, other, k) if entries else None


class Affine:
    """const + scale * sum_v vector[v] x_v (exact centre) with radius ``rad`` covering the
    real-number model; ``vector`` None: a constant."""

    __slots__ = ("system", "const", "scale", "vector", "rad")

    def __init__(self, system, const, scale=ONE, vector=None, rad=ZERO):
        self.system, self.const, self.scale, self.vector, self.rad = \
            system, const, scale, vector, rad

    def __repr__(self):
        terms = " + ".join(f"{c}*x{v}" for v, c in sorted(self.coefs().items()))
        return f"Affine({self.const}{' + ' + terms if terms else ''} +- {float(self.rad):.3g})"

    # --- reading ---------------------------------------------------------------------------
    @property
    def is_constant(self):
        return self.vector is None

    def coef(self, v):
        """The coefficient of x_v (0 when x_v does not occur)."""
        if self.vector is None:
            return ZERO
        return self.scale * self.vector.entries.get(v, 0)

    def variables(self):
        return () if self.vector is None else self.vector.entries.keys()

    def coefs(self):
        """{variable: coefficient}, every non-zero coefficient (O(variables))."""
        if self.vector is None:
            return {}
        s = self.scale
        return {v: s * c for v, c in self.vector.entries.items()}

    def range(self, fixed=None):
        """(min, max) of the centre over the box, the variables in ``fixed`` set to values,
        as Reals (exact on demand)."""
        if self.vector is None:
            return Real.of(self.const), Real.of(self.const)
        neg, pos = self.vector.sums()
        lo, hi = neg * TOP, pos * TOP
        for v, x in (fixed or {}).items():
            c = self.vector.entries.get(v, 0)
            lo, hi = lo + (c * x - TOP * min(c, 0)), hi + (c * x - TOP * max(c, 0))
        s = self.scale
        lo, hi = (lo * s, hi * s) if s > 0 else (hi * s, lo * s)
        return lo + self.const, hi + self.const

    def bounds(self, fixed=None):
        """(min, max) of the centre over the box, exactly (see ``range``)."""
        lo, hi = self.range(fixed)
        return lo.exact(), hi.exact()

    def magnitude(self):
        """An upper bound on max |centre| over the box, within a float's precision of it."""
        lo, hi = self.range()
        ends = (abs(lo.lo), abs(lo.hi), abs(hi.lo), abs(hi.hi))
        if all(isfinite(e) for e in ends):
            return Fraction(max(ends))
        return max(abs(lo.exact()), abs(hi.exact()))

    def at(self, values):
        """The centre at a full assignment {variable: value}."""
        if self.vector is None:
            return self.const
        return self.const + self.scale * sum(c * values[v] for v, c in self.vector.entries.items())

    def multiple_of(self, other):
        """lambda with self - lambda other free of variables, or None (other not constant)."""
        if self.vector is None or other.vector is None:
            return None
        if self.vector is other.vector:
            return self.scale / other.scale
        if len(self.vector) != len(other.vector):
            return None
        v0 = next(iter(other.vector.entries))
        lam = self.coef(v0) / other.coef(v0)
        k = lam * other.scale / self.scale
        mine = self.vector.entries
        if all(mine.get(v) == k * c for v, c in other.vector.entries.items()):
            return lam
        return None

    # --- arithmetic ------------------------------------------------------------------------
    def _lift(self, x):
        return x if isinstance(x, Affine) else Affine(self.system, Fraction(x))

    def __add__(self, other):
        if isinstance(other, LogScore):  # an ALiBi score: q k (free of variables) + c ln b
            if self.vector is not None or self.rad:
                raise NotAffine("an attention score that depends on the digits")
            return self.const + other
        other = self._lift(other)
        scale, vector = _sum(self, other)
        return Affine(self.system, self.const + other.const, scale, vector,
                      self.rad + other.rad if other.rad else self.rad)

    __radd__ = __add__

    def __neg__(self):
        return Affine(self.system, -self.const, -self.scale, self.vector, self.rad)

    def __sub__(self, other):
        return self + (-other if isinstance(other, LogScore) else -self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) + (-self)

    def times(self, k, rad=ZERO):
        """(k +- rad) self for a k free of variables."""
        if not k and not rad:
            return Affine(self.system, ZERO)
        r = (abs(k) + rad) * self.rad if self.rad else ZERO
        if rad:
            r += rad * self.magnitude()
        if not k:
            return Affine(self.system, ZERO, rad=round_up(r))
        return Affine(self.system, self.const * k, self.scale * k, self.vector, round_up(r))

    def __mul__(self, other):
        other = self._lift(other)
        if other.vector is None:
            return self.times(other.const, other.rad)
        if self.vector is None:
            return other.times(self.const, self.rad)
        raise NotAffine("a product of two values that depend on the variables")

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = self._lift(other)
        if other.vector is not None:
            raise NotAffine("a division by a value that depends on the variables")
        k, r = other.const, other.rad
        if abs(k) <= r:
            raise NotAffine("a division by a value that may be 0")
        return self.times(1 / k, round_up(r / (abs(k) * (abs(k) - r))) if r else ZERO)

    def __rtruediv__(self, other):
        return self._lift(other) / self

    # --- comparisons: through the value's own system ---------------------------------------
    def __gt__(self, other):
        return self.system.sign(self - self._lift(other))

    def __lt__(self, other):
        return self.system.sign(self._lift(other) - self)


def _sum(a, b):
    """(scale, vector) of the coefficients of a + b."""
    if b.vector is None:
        return a.scale, a.vector
    if a.vector is None:
        return b.scale, b.vector
    if a.vector is b.vector:
        scale = a.scale + b.scale
        return (scale, a.vector) if scale else (ONE, None)
    if b.vector.base is a.vector:
        a, b = b, a
    if a.vector.base is b.vector:  # s_a (B + k D) + s_b B = (s_a + s_b) B + s_a k D
        scale, tail = a.scale + b.scale, a.scale * a.vector.k
        if not scale:
            return tail, a.vector.delta
        return scale, b.vector.plus(a.vector.delta, tail / scale)
    if len(a.vector) < len(b.vector):
        a, b = b, a
    return a.scale, a.vector.plus(b.vector, b.scale / a.scale)


def box_sign(g):
    """True when g >= 0 over the whole box, False when g <= 0 there, else None."""
    lo, hi = g.range()
    if lo >= 0:
        return True
    if hi <= 0:
        return False
    return None


class SymbolicSystem(OverSets):
    """The number system of affine forms (see the module docstring), for one model: centres
    are the fraction system's values at the model's precision (``fraction``)."""

    name = "symbolic"
    spec = "symbolic"  # built from a model (``SymbolicSystem(model)``), not parsed
    exact = True       # centres are exact rationals; radii bound any grouping of a product

    def __init__(self, model):
        self.fraction = for_model(number_system("fraction"), model)
        self.zero = Affine(self, ZERO)
        self.one = Affine(self, ONE)
        self._assumptions = []  # (oracle, gates met) of the ``assuming`` blocks now open
        self._exp = {}

    def __repr__(self):
        return f"SymbolicSystem({self.fraction!r})"

    @property
    def roundings(self):
        """The fraction system's roundings: the centres' exponentials."""
        return self.fraction.roundings

    def describe(self):
        return f"symbolic (affine forms in the digits; centres in {self.fraction.describe()})"

    def affine(self, coefs, const=0):
        """const + sum_v coefs[v] x_v, exact."""
        vector = Vector.of({v: Fraction(c) for v, c in coefs.items()})
        return Affine(self, Fraction(const), ONE, vector if len(vector) else None)

    def variable(self, v, coef=1):
        """coef x_v."""
        return self.affine({v: coef})

    # --- signs -----------------------------------------------------------------------------
    @contextmanager
    def assuming(self, oracle):
        """Signs decided by ``oracle(gate)`` (True, False, or None: by the box) inside the
        block; yields the list of (gate, answer) of every comparison met there."""
        met = []
        self._assumptions.append((oracle, met))
        try:
            yield met
        finally:
            self._assumptions.pop()

    def sign(self, g):
        """Whether g > 0, decided by the innermost assumption or over the whole box."""
        oracle, met = self._assumptions[-1] if self._assumptions else (None, None)
        answer = oracle(g) if oracle else None
        if answer is None:
            answer = box_sign(g)
        if answer is None:
            raise NotAffine("a ReLU whose sign depends on the variables")
        if met is not None:
            met.append((g, answer))
        return answer

    # --- constants and exponentials --------------------------------------------------------
    def const(self, c):
        if isinstance(c, (int, Fraction)):
            return Affine(self, Fraction(c))
        if not isinstance(c, ExpTerm):
            raise NotAffine(f"a constant that is neither rational nor e^x: {text(c)}")
        centre = self.fraction.const(c)  # an ExpTerm: coef e^power, rounded as the fraction system
        return Affine(self, centre, rad=self._exp_radius(centre, c.power, c.coef))

    def slope(self, c):
        return self.fraction.slope(c)

    def exp(self, x):
        """e^x of a score free of variables (a Fraction, or q k - d ln b as a LogScore)."""
        if isinstance(x, Affine):
            if x.vector is not None or x.rad:
                raise NotAffine("an attention score that depends on the digits")
            x = x.const
        hit = self._exp.get(x)
        if hit is None:
            f = self.fraction
            centre = f.exp(x)
            # exp(r - d ln b) = exp(r) * b**-d: only exp(r) is rounded (the fraction system
            # keeps b**-d exact for a slope ln b, and exp(0) = 1)
            r = x.rational if isinstance(x, LogScore) else Fraction(x)
            factor = centre / f.exp(r) if r else ONE
            rad = self._exp_radius(centre, r, factor) if r else ZERO
            hit = self._exp[x] = Affine(self, centre, rad=rad)
        return hit

    def largest(self, values):
        """The largest of scores free of variables (the pattern does not depend on it)."""
        if any(isinstance(v, Affine) and (v.vector is not None or v.rad) for v in values):
            raise NotAffine("an attention score that depends on the digits")
        return max(values, key=lambda v: v.const if isinstance(v, Affine) else v)

    def _not_affine(name):
        def f(self, x):
            raise NotAffine(f"{name}() of a value: this family's closed-form proof covers "
                            f"affine maps, ReLUs and exponentials of constant scores")
        f.__name__ = name
        return f

    sqrt, sin, cos, erf = _not_affine("sqrt"), _not_affine("sin"), _not_affine("cos"), \
        _not_affine("erf")

    def _exp_radius(self, centre, power, factor):
        """A bound on |factor * e**power - centre| from a 20-digits-more evaluation."""
        power = Fraction(power)
        if power == 0:
            return abs(Fraction(factor) - centre)
        if power.denominator != 1:
            raise NotAffine("an exponential of a non-integer argument")
        digits = self.fraction.exp_digits + 20
        ctx = decimal.Context(prec=digits, Emin=-decimal.MAX_EMAX, Emax=decimal.MAX_EMAX)
        value = ctx.exp(decimal.Decimal(power.numerator))  # correctly rounded: within half an
        # ulp of e^power (the argument, an integer, is exact)
        ulp = Fraction(10) ** (value.adjusted() - digits + 1)
        err = abs(Fraction(value) * Fraction(factor) - centre) + ulp * abs(Fraction(factor))
        return round_up(err)
