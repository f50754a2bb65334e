"""A number system whose values are sets: affine forms in the digits plus an interval, over a
:class:`~.sets.Region` of operand pairs (the generic prover's, ``generic``).

A value is a :class:`SetValue`  k + sum_v c_v x_v + [lo, hi]: exact ``Fraction`` coefficients
on the variables of ``sets`` (the digits a_j, b_j and the carries c_j of a pair) and an
interval that holds the rest. It stands for a function of the pair: at every pair of the
region the real-number model's value (every exponential, root, sine exact) and the fraction
system's value lie in  F(x) + [lo, hi],  F(x) the form at the pair. The rules keep that true:

- sums and rational multiples are exact on the form and add or scale the interval;
- a product of two values keeps the linear terms k_f G + k_g F and bounds the rest,
  (F - k_f + I_f)(G - k_g + I_g), by the product of its factors' ranges over the region's box
  (a square's rest by the square of its factor's range, never below 0);
- a quotient multiplies by the reciprocal of the divisor's range (refused, by
  :class:`Split`, when that range holds 0);
- e^x, sqrt, erf (increasing) take the range of x over the box and enclose the function at
  its ends; sin and cos enclose the function at the middle of the range and widen by half its
  width (both are 1-Lipschitz). Enclosures are ``numbers.IntervalSystem``'s at the fraction
  system's digits, so they hold its roundings too (docs/exactness.md).

A ReLU is relaxed rather than decided (``relu``: the prover patches every ReLU block's
``hook_pre`` so that each gate arrives as relu(g) itself): g where g >= 0 over the region, 0
where g <= 0, else its chord. A comparison met otherwise (``g > 0``) is decided when the
sign, g >= 0 or g <= 0, holds at every pair of the region (both ReLU branches agree at 0): first
over the box, then exactly by the region's walk over the columns (``Region.bound``); otherwise
it raises :class:`Split`, which carries the form, so that the prover splits the region there.
"""

from fractions import Fraction

from ...numbers import for_model, number_system
from ...numbers.enclosures import IntervalSystem
from ...numbers.protocol import OverSets, Undecided

ZERO, ONE = Fraction(0), Fraction(1)
TIDY_BITS = 600      # a coefficient whose denominator passes this many bits is rounded ...
KEEP_BITS = 400       # ... to a multiple of 2^-(bits its error may take), at least this many


def round_up(x):
    """A rational of 64 significant bits at least x >= 0."""
    if not x:
        return ZERO
    e = 64 - (x.numerator.bit_length() - x.denominator.bit_length())
    scaled = x * 2 ** e if e >= 0 else x / 2 ** -e
    top = -(-scaled.numerator // scaled.denominator)
    return Fraction(top) / 2 ** e if e >= 0 else Fraction(top * 2 ** -e)


class Split(Undecided):
    """A sign that the region does not decide: ``value`` is the undecided form."""

    def __init__(self, value, what):
        super().__init__(what)
        self.value = value


def _frac(d):
    return Fraction(d)


class SetValue:
    """k + sum_v coefs[v] x_v + [lo, hi] (see the module docstring)."""

    __slots__ = ("system", "k", "coefs", "lo", "hi")

    def __init__(self, system, k, coefs=None, lo=ZERO, hi=ZERO):
        self.system, self.k, self.coefs, self.lo, self.hi = system, k, coefs or {}, lo, hi

    def __repr__(self):
        terms = " + ".join(f"{c}*{v[0]}{v[1]}" for v, c in sorted(self.coefs.items()))
        return f"SetValue({self.k}{' + ' + terms if terms else ''} + [{self.lo}, {self.hi}])"

    @property
    def point(self):
        return not self.coefs and not self.lo and not self.hi

    def _lift(self, x):
        return x if isinstance(x, SetValue) else SetValue(self.system, Fraction(x))

    def __add__(self, other):
        o = self._lift(other)
        coefs = dict(self.coefs)
        for v, c in o.coefs.items():
            c = coefs.get(v, ZERO) + c
            if c:
                coefs[v] = c
            else:
                del coefs[v]
        return SetValue(self.system, self.k + o.k, coefs, self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self):
        return SetValue(self.system, -self.k, {v: -c for v, c in self.coefs.items()},
                        -self.hi, -self.lo)

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) + (-self)

    def scaled(self, r):
        """r times this value, r rational."""
        if not r:
            return SetValue(self.system, ZERO)
        lo, hi = (self.lo * r, self.hi * r) if r > 0 else (self.hi * r, self.lo * r)
        return SetValue(self.system, self.k * r, {v: c * r for v, c in self.coefs.items()},
                        lo, hi)

    def __mul__(self, other):
        o = self._lift(other)
        if o.point:
            return self.scaled(o.k)
        if self.point:
            return o.scaled(self.k)
        # f g = k_f k_g + k_f (g - k_g) + k_g (f - k_f) + (f - k_f)(g - k_g)
        lin = self.system.centred(self).scaled(o.k) + self.system.centred(o).scaled(self.k)
        a, b = self.system.box(self, self.k)
        if o is self:  # a square: (f - k)^2 lies in [0 or the nearer end squared, the farther]
            low = ZERO if a <= 0 <= b else min(a * a, b * b)
            rest = SetValue(self.system, self.k * o.k, {}, low, max(a * a, b * b))
            return self.system.tidy(lin + rest)
        c, d = self.system.box(o, o.k)
        ends = (a * c, a * d, b * c, b * d)
        rest = SetValue(self.system, self.k * o.k, {}, min(ends), max(ends))
        return self.system.tidy(lin + rest)

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self._lift(other)
        if o.point:
            if not o.k:
                raise ZeroDivisionError("division by 0")
            return self.scaled(1 / o.k)
        lo, hi = self.system.box(o)
        if lo <= 0 <= hi:
            raise Split(o, "a division by a value that may be 0")
        return self * self.system.interval(1 / hi, 1 / lo)

    def __rtruediv__(self, other):
        return self._lift(other) / self

    def __gt__(self, other):
        return self.system.positive(self - self._lift(other))

    def __lt__(self, other):
        return self.system.positive(self._lift(other) - self)



class Relu(SetValue):
    """relu(g) as a value (``SetSystem.relu``); its ``> 0`` is True, so that the pass's
    ``g if g > 0 else 0`` and ``g u if g > 0 else 0`` take it whole."""

    __slots__ = ()

    def __gt__(self, other):
        return True


class SetSystem(OverSets):
    """The number system of :class:`SetValue` for one model; ``region`` (set by the prover
    before each pass) is where comparisons are decided and boxes taken."""

    name = "sets"
    spec = "sets"   # built from a model, not parsed
    exact = True    # an enclosure of exact values: any grouping of a product is as sound
    roundings = ()

    def __init__(self, model):
        self.digits = for_model(number_system("fraction"), model).exp_digits
        self.enclose = IntervalSystem(self.digits)
        self.zero = SetValue(self, ZERO)
        self.one = SetValue(self, ONE)
        self.region = None
        self._ranges = None
        self.relaxed = []   # the gates ``relu`` relaxed since ``at``

    def at(self, region):
        """Decide comparisons over ``region`` from now on."""
        self.region, self._ranges = region, region.ranges()
        self.relaxed = []
        return self

    def describe(self):
        return f"sets (affine forms in the digits and intervals; {self.digits}-digit enclosures)"

    # ---- building values ------------------------------------------------------------------
    def variable(self, v, coef=1, const=0):
        return SetValue(self, Fraction(const), {v: Fraction(coef)})

    def interval(self, lo, hi):
        """The constant interval [lo, hi] (rationals), centred."""
        mid = (lo + hi) / 2
        return SetValue(self, mid, {}, lo - mid, hi - mid)

    def _from(self, iv):
        return self.interval(_frac(iv.lo), _frac(iv.hi))

    def _to(self, lo, hi):
        point = self.enclose.point
        return self.enclose.value(point(lo).lo, point(hi).hi)

    def centred(self, x):
        """x minus its constant k (its linear part and interval)."""
        return SetValue(self, ZERO, x.coefs, x.lo, x.hi)

    # ---- ranges ---------------------------------------------------------------------------
    def box(self, x, minus=ZERO):
        """(least, greatest) of x - minus over the region's box (a superset of its pairs)."""
        lo = hi = x.k - minus
        ranges = self._ranges
        for v, c in x.coefs.items():
            a, b = ranges[v]
            if c > 0:
                lo, hi = lo + c * a, hi + c * b
            else:
                lo, hi = lo + c * b, hi + c * a
        return lo + x.lo, hi + x.hi

    def exact_range(self, x):
        """(least, greatest, pair at the least) of x's form over the region's pairs, plus its
        interval (None for an empty region)."""
        found = self.region.bound(x.coefs, x.k)
        if found is None:
            return None
        low, high, at_low, _ = found
        return low + x.lo, high + x.hi, at_low

    def positive(self, x):
        """``x > 0`` as the pass's ReLUs ask it (``g if g > 0 else 0``, ``g u if g > 0 else
        0``, whose branches agree at g = 0): True when x >= 0 at every pair of the region,
        False when x <= 0 at every pair."""
        lo, hi = self.box(x)
        if lo >= 0:
            return True
        if hi <= 0:
            return False
        found = self.exact_range(x)
        if found is None:
            return False   # an empty region: any answer holds
        lo, hi, _ = found
        if lo >= 0:
            return True
        if hi <= 0:
            return False
        raise Split(x, "a sign that depends on the pair")

    def relu(self, g):
        """relu(g) over the region: g where g >= 0 at every pair, 0 where g <= 0, else the
        chord-like  lam g + [0, w]  with l < 0 < u the range of g, lam in [0, 1] a short
        rational near u / (u - l) and w >= max(-lam l, (1 - lam) u): relu(g) - lam g is -lam g
        on [l, 0] and (1 - lam) g on [0, u]. The undecided gates are listed in ``relaxed``."""
        lo, hi = self.box(g)
        if lo < 0 < hi:
            found = self.exact_range(g)
            lo, hi = found[:2] if found is not None else (ZERO, ZERO)
        if lo >= 0:
            return Relu(self, g.k, g.coefs, g.lo, g.hi)
        if hi <= 0:
            return Relu(self, ZERO)
        self.relaxed.append(g)
        lam = Fraction(int(hi / (hi - lo) * (1 << 32)), 1 << 32)
        chord = g.scaled(lam) if lam else Relu(self, ZERO)
        w = round_up(max(-lam * lo, (1 - lam) * hi))
        return self.tidy(Relu(self, chord.k, chord.coefs, chord.lo, chord.hi + w))

    def tidy(self, x):
        """x with coefficients of very long denominators rounded, the rounding moved into
        the interval (each coefficient off by at most 2^-bits times its variable's range)."""
        if all(c.denominator.bit_length() < TIDY_BITS for c in x.coefs.values()) and \
                x.k.denominator.bit_length() < TIDY_BITS:
            return x
        width = x.hi - x.lo
        bits = KEEP_BITS if not width else max(KEEP_BITS, 40 - (width.numerator.bit_length()
                                                                 - width.denominator.bit_length()))
        unit = Fraction(1, 1 << bits)
        coefs, slack = {}, unit
        for v, c in x.coefs.items():
            r = Fraction(round(c / unit)) * unit
            if r:
                coefs[v] = r
            slack += unit * max(abs(e) for e in self._ranges[v])
        k = Fraction(round(x.k / unit)) * unit
        return type(x)(self, k, coefs, x.lo - slack, x.hi + slack)

    # ---- constants and functions ----------------------------------------------------------
    def const(self, c):
        if isinstance(c, (int, Fraction)):
            return SetValue(self, Fraction(c))
        return self._from(self.enclose.const(c))

    slope = const

    def _monotone(self, f, x):
        lo, hi = self.box(x)
        return self._from(f(self._to(lo, hi)))

    def exp(self, x):
        if x.point and not x.k:
            return self.one
        return self._monotone(self.enclose.exp, x)

    def sqrt(self, x):
        return self._monotone(self.enclose.sqrt, x)

    def erf(self, x):
        return self._monotone(self.enclose.erf, x)

    def _lipschitz(self, f, x):
        lo, hi = self.box(x)
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        at = self._from(f(self._to(mid, mid)))
        return at + self.interval(-half, half)

    def sin(self, x):
        return self._lipschitz(self.enclose.sin, x)

    def cos(self, x):
        return self._lipschitz(self.enclose.cos, x)

    def largest(self, values):
        """The middle of the greatest value's box: any real does (the pattern is the same)."""
        return SetValue(self, max(sum(self.box(v)) / 2 for v in values))
