"""Sets that hold the float program's values: the generic prover (``generic``) for a model as
its IEEE float32 or float64 program computes it (``prove --number float32``).

A :class:`FloatValue` is a :class:`~.setsystem.SetValue`  k + sum_v c_v x_v + [lo, hi]  on
the setsystem's grid (every number an integer times 2^-SCALE) whose variables are the pair's
digits, carries and indicators and *rounding symbols* r_i = ("r", i), each an unknown in
[0, 1] (non-negative, as ``SetValue.times`` rounds for). It stands for the program's value: at
every pair of the region, and for every rounding the bounds below allow, the value is the form
at some r in [0, 1]^n. A value's interval [lo, hi] and an operation's rounding bound e become
one fresh symbol, lo - e + (hi - lo + 2e) r_new, so that a rounding shared by two values (the
readout's scale, say) cancels in their difference; a value keeps its ``KEEP_SYMBOLS`` largest
symbols (the others join its fresh one: c r lies in [min(0, c), max(0, c)]). A symbol is no
digit: a value with one is never taken digit by digit (``column_of``, ``near_column``), and
the region's exact walk sees it folded into the interval. With p = 24 or 53 bits and
h(M) = half an ulp at magnitude M (2^(e - p) for 2^e <= M < 2^(e + 1), never below half the
subnormal spacing):

- x * y and x / y: the exact result of the two sets (``SetValue``), plus [-h(M), h(M)], M the
  greatest |result| over the region's box: IEEE rounds to nearest, |fl(z) - z| <= h(|z|). A
  product that may be fused into a following add (FMA) is covered, since its error may be 0. A
  result that is one point is rounded exactly instead (a quotient, a product in a
  constant expression; in the pass a product of points only where exact, since a fused
  product is not rounded).
- sums are order-free: a chain of n adds and subtracts is held as its exact sum with the
  count n and the mass m = sum |terms|, and bounded when used by n h(m (1 + n 2^(1 - p))):
  in any order or grouping (BLAS blocking, a vectorised reduction) each partial sum is at
  most that large and each add rounds once. One add of two points is rounded exactly (one
  order). Terms that are all multiples of 2^-g (integers, short dyadics) with m < 2^(p - g)
  add exactly in any order: no bound.
- x - x is 0 and x + 0 is x (IEEE, exactly); a comparison compares the values, unrounded.
- exp, sin, cos, erf: the real function's enclosure over the box (``SetSystem``), plus
  ``LIBRARY_ULPS`` ulps of the greatest result: a trusted premise about the library the
  original ran (PyTorch's CPU kernels call SLEEF's u10 functions, 1.0 ulp; docs/proof.md);
  sqrt is correctly rounded (IEEE), half an ulp; exp(0) = 1 exactly, and e^x below half the
  least subnormal is between 0 and the least subnormal.
- softmax's max: the program subtracts the largest score; where one score's box lies above
  every other's, that score is the max, and s - max is 0 for it.
- constants: a rational is rounded as the program stores it (to double, then to float32:
  a Python number cast to a float32 tensor), exactly; a constant expression is evaluated by
  these rules (its ``f64`` parts in Python's double, as the source computes them); e^c and
  ln b are the stored values between the roundings of their enclosure's ends, widened by
  ``CONSTANT_SLACK`` for the double computation. A float64 finer than the grid (below
  2^-SCALE in its last bit) is held as the grid's two neighbours around it.

- e^x past the range: where x > (emax + 1) ln 2 over the whole region, e^x > 2^(emax + 1),
  more than an ulp beyond the largest float, so a library within 1 ulp returns +inf (as
  IEEE's overflow does): the value :data:`INFINITE`. inf + x is inf and x / inf is 0 for a
  finite x (IEEE; SiLU's x / (1 + e^-x) at a very negative x, as PyTorch's kernel computes
  it); any other use of it raises :class:`Undecided`.

Comparisons and decisions fold the symbols into the interval (each in [0, 1]). Any other
overflow (a magnitude past the largest float) is not bounded: it raises :class:`Undecided`.
"""

from fractions import Fraction

from ...constants import PI, Expr, ExpTerm, Ln
from ...modelfile import dump
from ...numbers import Undecided
from ...numbers.rounding import evaluate
from .generic import Prover
from .setsystem import ONE, SCALE, SetSystem, SetValue, down, rational, up
from ..kernel.floatcheck import (CONSTANT_SLACK, FORMATS, LIBRARY_ULPS, _grid_bits, _symbol,
                                 exp_case, half_ulp, log2_floor, on_grid, single_bound,
                                 sum_bound, to_nearest, with_symbol)

ZERO = Fraction(0)
CERTIFICATE = "tinyadder-float-certificate"

# The formats, the library's ulps (trusted), the constants' slack and the rounding symbols
# a value keeps are the kernel's (``kernel.floatcheck``): one rule, one place. KEEP_SYMBOLS:
# a logit holds its residual's symbols and its own; where a cap merges symbols two logits
# share into each one's fresh symbol, they do not cancel in the difference (jacobli99-28: 12
# cost up to 8e-5 of a 2.1e-4 margin; 32 costs nothing).
floor_log2 = log2_floor
is_symbol = _symbol


def round_to(x, bits, emin, emax):
    """The rational x rounded to nearest (ties to even) in binary floating point of ``bits``
    significant bits, least normal exponent ``emin``; Undecided past 2^emax
    (``floatcheck.to_nearest``)."""
    return to_nearest(x, bits, emin, emax, Undecided)


def _magnitude(lo, hi):
    return max(abs(lo), abs(hi))


def _has_symbol(x):
    return any(is_symbol(v) for v in x.coefs)


class FloatValue(SetValue):
    """A set of the program's values (module docstring). ``adds`` and ``mass``: a pending
    sum's count of adds and sum of |terms| (0 and None once bounded); ``grid``: g when every
    value is a multiple of 2^-g (None when unknown)."""

    __slots__ = ("adds", "mass", "grid", "closed")

    def __init__(self, system, k, coefs=None, lo=0, hi=0, adds=0, mass=None, grid=None):
        super().__init__(system, k, coefs, lo, hi)
        self.adds, self.mass, self.grid, self.closed = adds, mass, grid, None

    def _lift(self, x):
        return self.system.lift(x)

    def __add__(self, other):
        return self.system.add(self, self._lift(other))

    __radd__ = __add__

    def __neg__(self):
        return FloatValue(self.system, -self.k, {v: -c for v, c in self.coefs.items()},
                          -self.hi, -self.lo, self.adds, self.mass, self.grid)

    def __sub__(self, other):
        o = self._lift(other)
        if _same(self, o):
            return self.system.exact_zero()
        return self.system.add(self, -o)

    def __rsub__(self, other):
        return self._lift(other) - self

    def __mul__(self, other):
        return self.system.mul(self, self._lift(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self.system.div(self, self._lift(other))

    def __rtruediv__(self, other):
        return self.system.div(self._lift(other), self)

    def __gt__(self, other):
        return self.system.positive(self.system.difference(self, self._lift(other)))

    def __lt__(self, other):
        return self.system.positive(self.system.difference(self._lift(other), self))


class FloatRelu(FloatValue):
    """relu(g) of the program (exact in floating point); ``> 0`` is True, as ``Relu``'s."""

    __slots__ = ()

    def __gt__(self, other):
        return True


def _infinite_use(*_):
    raise Undecided("an infinite value of the program used other than in inf + x or x / inf")


class Infinite:
    """+inf of the program (e^x past the range): inf + x = inf and x / inf = 0, x finite
    (``FloatSets.add``, ``FloatSets.div``); any other operation on it, or a look at its
    form, raises Undecided."""

    __slots__ = ()

    def __add__(self, other):
        return self

    __radd__ = __add__
    __neg__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = \
        __gt__ = __lt__ = __ge__ = __le__ = _infinite_use

    def __getattr__(self, name):
        if name.startswith("__"):   # a protocol's probe (copy, doctest, inspect): none here
            raise AttributeError(name)
        _infinite_use()


INFINITE = Infinite()


class FloatSets(SetSystem):
    """The number system of :class:`FloatValue` for one model and one program format
    (``float32`` or ``float``)."""

    exact = False   # constants follow the program's float markers (``evaluate``)

    def __init__(self, model, program="float32"):
        if program not in FORMATS:
            raise ValueError(f"unknown float program {program!r}; use float32 or float")
        super().__init__(model)
        self.name = self.spec = program
        self.bits, self.emin, self.emax = FORMATS[program]
        self.symbols = 0
        self._constant = False   # evaluating a constant expression: no fused products
        self.zero = self.exact_zero()
        self.one = self.point(Fraction(1))

    def describe(self):
        return (f"sets of the {self.name} program's values (affine forms in the digits and "
                f"rounding symbols on a 2^-{SCALE} grid; {self.digits}-digit enclosures)")

    # ---- rounding bounds ------------------------------------------------------------------
    def half_ulp(self, m):
        """h(m): half the spacing of the format at magnitude m (Undecided past its range;
        ``floatcheck.half_ulp``)."""
        return half_ulp(m, self.bits, self.emin, self.emax,
                        lambda why: Undecided(f"a value of the {self.name} program {why}"))

    def _fits_grid(self, grid, m):
        """Whether every multiple of 2^-grid up to m is a float of the format."""
        return on_grid(grid, m, self.bits, self.emin)

    # ---- building values ------------------------------------------------------------------
    def exact_zero(self):
        return FloatValue(self, 0, grid=0)

    def point(self, x):
        """The exact value x (a float of the format); a float of the format below the grid
        (a float64 past 2^-SCALE) is its grid enclosure."""
        lo, hi = down(x), up(x)
        if lo == hi:
            return FloatValue(self, lo, grid=_grid_of(lo, {}))
        return self.symbolize(self.grid_interval(lo, hi), ZERO)

    def lift(self, x):
        """x as a FloatValue: a rational as the exact value, a plain set as it is (and
        INFINITE as itself)."""
        if isinstance(x, (FloatValue, Infinite)):
            return x
        if isinstance(x, SetValue):
            return self.symbolize(x, ZERO)
        return self.point(Fraction(x))

    def symbolize(self, x, bound, grid=None):
        """x plus [-bound, bound] (a rational), its interval and that bound as one fresh
        symbol r in [0, 1]: x's form + (lo - bound) + (hi - lo + 2 bound) r, on the grid
        (bound rounded up). Past ``KEEP_SYMBOLS`` rounding symbols the smallest join it too
        (a term c r lies between min(0, c) and max(0, c))."""
        low, coefs = with_symbol(self, x.k, x.coefs, x.lo, x.hi, up(bound))
        if grid is None and not any(is_symbol(v) for v in coefs):
            grid = _grid_of(low, coefs)
        return FloatValue(self, low, coefs, grid=grid)

    def plain(self, x):
        """x's form as a SetValue, bounded first if it is a pending sum."""
        x = self.close(x)
        return SetValue(self, x.k, x.coefs, x.lo, x.hi)

    def folded(self, x):
        """x with its rounding symbols folded into its interval (a plain SetValue)."""
        coefs, lo, hi = {}, x.lo, x.hi
        for v, c in x.coefs.items():
            if is_symbol(v):
                lo, hi = lo + min(c, 0), hi + max(c, 0)
            else:
                coefs[v] = c
        return SetValue(self, x.k, coefs, lo, hi)

    def magnitude(self, x):
        return _magnitude(*self.box(x))

    # ---- the operations -------------------------------------------------------------------
    def add(self, x, y):
        """x + y as a pending sum (bounded by ``close`` when used); inf where one is inf."""
        if isinstance(x, Infinite) or isinstance(y, Infinite):
            return INFINITE
        if y.point and not y.k and not y.adds:
            return x
        if x.point and not x.k and not x.adds:
            return y
        terms = [(v.adds, v.mass, v.grid) if v.adds else (0, self.magnitude(v), v.grid)
                 for v in (x, y)]
        form = self._exact(x) + self._exact(y)
        grid = None if None in (terms[0][2], terms[1][2]) else max(terms[0][2], terms[1][2])
        return FloatValue(self, form.k, form.coefs, form.lo, form.hi,
                          terms[0][0] + terms[1][0] + 1, terms[0][1] + terms[1][1], grid)

    def _exact(self, x):
        """x's form, unbounded (a pending sum's exact sum)."""
        return SetValue(self, x.k, x.coefs, x.lo, x.hi)

    def close(self, x):
        """x with its pending sum bounded (module docstring); memoised, so that a score and
        the max chosen from it stay one value."""
        if not x.adds:
            return x
        if x.closed is None:
            form, n, m = self._exact(x), x.adds, x.mass
            if self._fits_grid(x.grid, m):
                x.closed = self.symbolize(form, ZERO, x.grid)
            elif form.point and n == 1:
                x.closed = self.point(self.round(rational(form.k)))
            else:
                x.closed = self.symbolize(form, sum_bound(n, m, self.bits, self.half_ulp))
        return x.closed

    def round(self, x):
        """The rational x rounded to the format."""
        return round_to(x, self.bits, self.emin, self.emax)

    def difference(self, x, y):
        """x - y exactly (a comparison's, not the program's): a plain SetValue."""
        return self.plain(x) - self.plain(y)

    def mul(self, x, y):
        x, y = self.close(x), self.close(y)
        for a, b in ((x, y), (y, x)):
            if a.point and a.k == ONE:
                return b
            if a.point and not a.k:
                return self.exact_zero()
        if x.point and y.point:
            return self._rounded_point(rational(x.k) * rational(y.k))
        px = self.plain(x)
        form = px * (px if y is x else self.plain(y))
        grid = None if None in (x.grid, y.grid) else x.grid + y.grid
        return self._rounded(form, grid)

    def div(self, x, y):
        """x / y rounded; x / inf = 0 (x finite)."""
        x = self.close(x)
        if isinstance(y, Infinite):
            return self.exact_zero()
        y = self.close(y)
        if y.point and y.k == ONE:
            return x
        if x.point and y.point:
            if not y.k:
                raise ZeroDivisionError("division by 0")
            return self.point(self.round(rational(x.k) / rational(y.k)))
        return self._rounded(self.plain(x) / self.plain(y), None)

    def _rounded_point(self, z):
        """A product of two floats z (a rational), rounded: exactly where z is a float or in
        a constant expression, else (a product that may be fused) z plus its half ulp."""
        rounded = self.round(z)
        if rounded == z or self._constant:
            return self.point(rounded)
        return self.symbolize(self.interval(z, z), self.half_ulp(abs(z)))

    def _rounded(self, form, grid):
        """A product's or quotient's exact set, plus its rounding (none where every value
        is a float: on a grid within range)."""
        m = self.magnitude(form)
        if self._fits_grid(grid, m):
            return self.symbolize(form, ZERO, grid)
        return self.symbolize(form, self.half_ulp(m))

    # ---- ranges: a rounding symbol is no digit --------------------------------------------
    def grid_box(self, x, minus=0):
        """``SetSystem.grid_box`` of x's digit terms, each symbol's term c r adding
        [min(0, c), max(0, c)]; a constant's box needs no region (constants are computed
        before any)."""
        x = self.folded(x) if _has_symbol(x) else x
        if not x.coefs:
            return x.k + x.lo - minus, x.k + x.hi - minus
        return super().grid_box(x, minus)

    def grid_range(self, x):
        """``SetSystem.grid_range`` with the symbols folded (a symbol is no variable of the
        region)."""
        return super().grid_range(self.folded(x))

    def column_of(self, *values):
        """None for a value with a rounding symbol (no table of one digit holds it)."""
        if any(_has_symbol(x) for x in values):
            return None
        return super().column_of(*values)

    def near_column(self, x):
        """(None, x) for a value with a rounding symbol (``column_of``)."""
        if _has_symbol(x):
            return None, x
        return super().near_column(x)

    # ---- constants and functions ----------------------------------------------------------
    def const(self, c):
        """The program's value of constant c (module docstring)."""
        if isinstance(c, Expr):
            self._constant = True
            try:
                return self.close(self.lift(evaluate(self, c)))
            finally:
                self._constant = False
        if isinstance(c, (ExpTerm, Ln)):
            slack = CONSTANT_SLACK * (1 + abs(Fraction(c.power))) if isinstance(c, ExpTerm) \
                else CONSTANT_SLACK
            return self._computed(super().const(c), slack)
        return self.point(self.stored(Fraction(c)))

    slope = const

    def _computed(self, v, slack):
        """The program's value of a real constant enclosed by v, computed in double within
        ``slack`` of its value (relative) and stored: the format's values between the
        roundings of the widened ends (rounding is monotone), one point where they agree."""
        lo, hi = self.box(v)
        lo, hi = lo - abs(lo) * slack, hi + abs(hi) * slack
        lo, hi = self.stored(lo), self.stored(hi)
        if lo == hi:
            return self.point(lo)
        return self.symbolize(self.interval(lo, hi), ZERO)

    def stored(self, x):
        """A rational as a float32 (or double) program stores it: to double, then to the
        format (a Python number cast to a float32 tensor)."""
        return self.round(round_to(x, 53, -1022, 1024))

    def single(self, x):
        """An ``f32(...)`` marker: x rounded to float32."""
        x = self.close(self.lift(x))
        if x.point:
            return self.point(round_to(rational(x.k), 24, -126, 128))
        m = self.magnitude(x)
        return self.symbolize(x, single_bound(m))

    def pi(self):
        """Python's math.pi (the double nearest pi), stored."""
        return self._computed(SetSystem.const(self, PI), ZERO)

    def _library(self, f, x, ulps):
        x = self.close(self.lift(x))
        v = f(self.plain(x))
        return self.symbolize(v, 2 * ulps * self.half_ulp(self.magnitude(v)))

    def exp(self, x):
        """e^x; 1 at 0; [0, the least subnormal] where e^x is below half of it (no enclosure
        of e^-10^8 is computed: 1 ulp there is the least subnormal, whatever the library);
        INFINITE where x > (emax + 1) ln 2."""
        x = self.close(self.lift(x))
        if x.point and not x.k:
            return self.one
        case = exp_case(*self.box(x), self.bits, self.emin, self.emax)
        if case == "inf":
            return INFINITE
        if case == "tiny":
            return self.symbolize(self.interval(ZERO, Fraction(2) ** (self.emin - self.bits + 1)),
                                  ZERO)
        if case:
            raise Undecided(f"e^x of the {self.name} program may overflow")
        return self._library(super().exp, x, LIBRARY_ULPS["exp"])

    def sqrt(self, x):
        return self._library(super().sqrt, x, Fraction(1, 2))

    def erf(self, x):
        return self._library(super().erf, x, LIBRARY_ULPS["erf"])

    def sin(self, x):
        return self._library(super().sin, x, LIBRARY_ULPS["sin"])

    def cos(self, x):
        return self._library(super().cos, x, LIBRARY_ULPS["cos"])

    def largest(self, values):
        """The program's max: the score whose box lies above every other's, where one does
        (so that s - max is exactly 0 for it), else the hull of the boxes' tops."""
        values = [self.close(v) for v in values]
        boxes = [self.grid_box(v) for v in values]
        top = max(range(len(values)), key=lambda i: boxes[i][0])
        if all(boxes[top][0] > hi for i, (_, hi) in enumerate(boxes) if i != top):
            return values[top]
        return self.symbolize(self.grid_interval(boxes[top][0], max(hi for _, hi in boxes)),
                              ZERO)

    def relu(self, g):
        r = super().relu(self.plain(g))
        v = self.symbolize(r, ZERO)
        return FloatRelu(self, v.k, v.coefs, v.lo, v.hi, grid=v.grid)


def _same(x, y):
    """Whether x and y are one value of the program (a pending sum and its bound alike)."""
    return x is y or x.closed is y or y.closed is x or (x.closed is not None
                                                        and x.closed is y.closed)


_grid_of = _grid_bits


class FloatProver(Prover):
    """The generic prover over the float program: its sets hold the program's values
    (:class:`FloatSets`), a decision is taken on target - other with the roundings they share
    cancelled, and a single pair is run by the float replay (``addition.add`` in float32 or
    float, bit-faithful to the originals: tests/test_board.py). ``carries_first`` is the
    generic prover's split order (``Prover``): a form whose rest is rounding symbols points
    the generic rule at no carry."""

    def __init__(self, model, program="float32", **options):
        super().__init__(model, system=lambda m: FloatSets(m, program), replay=program,
                         **options)

    def _row(self, slot, region):
        return [self.ns.lift(v) for v in super()._row(slot, region)]

    def _digit_row(self, form, col, lo, hi):
        """The embedding of a digit token whose value is ``form``, in lo..hi, the digit of
        column ``col``, column by column of the embedding: e + (d - lo) s as a form where the
        entries are exactly affine in the digit d over lo..hi (a parabola's linear
        coordinate, say), else the indicator form sum_d e_d [x = d] of the entries (exact at
        every digit)."""
        rows = [self.compiled.embed[self.digit_ids[d]] for d in range(lo, hi + 1)]
        if lo == hi:
            return list(rows[0])
        ns, out = self.ns, []
        for column in zip(*rows):
            e, s = column[0].k, column[1].k - column[0].k
            if all(v.point and v.k == e + i * s for i, v in enumerate(column)):
                out.append(form.times(s, ONE) + ns.grid_interval(e - lo * s, e - lo * s))
            else:
                out.append(ns.indicators(col, [(d, ns.folded(v))
                                               for d, v in zip(range(lo, hi + 1), column)]))
        return out

    def logits(self, k, region):
        return [self.ns.close(v) for v in super().logits(k, region)]

    def decide(self, logits, t):
        """``Prover.decide`` on the differences logit_t - logit_u, each formed exactly and its
        rounding symbols folded after the difference."""
        ns = self.ns
        zero = SetValue(ns, 0)
        return super().decide([zero if u == t else ns.folded(ns.difference(other, logits[t]))
                               for u, other in enumerate(logits)], t)


def prove(model, program="float32", **options):
    """The generic prover's :class:`~.generic.Outcome` for ``model``'s float program."""
    return FloatProver(model, program, **options).run()


def certificate(outcome, model, name, program="float32"):
    """The certificate of a proved float outcome (JSON-ready): the model file's text, the
    program's format and the split tree of every answer position, for ``floatcheck.check``."""
    if outcome.verdict != "proved":
        raise ValueError(f"no certificate for a verdict of {outcome.verdict!r}")
    return {"format": CERTIFICATE, "version": 1, "name": name, "digits": outcome.digits,
            "number": program, "model": dump(model), "positions": outcome.positions}
