"""The checker of the float prover's certificates: does the split tree cover every pair
exactly once, and does every leaf hold for the model's IEEE float32 or float64 program?

The partition and the leaf pass are ``setcheck``'s; the values are its :class:`~.setcheck.Form`
with *rounding symbols* ("r", i), each an unknown in [0, 1], kept out of every per-digit table
and folded into the interval wherever a range is taken. The rounding rules (docs/proof.md,
"Float programs") are stated at the operations that apply them. A ``pair`` leaf is run by the
float replay (``addition.add``), trusted to answer as the original program does
(tests/test_board.py). It imports nothing of the search.
"""

from fractions import Fraction
from functools import partialmethod

from ...addition import add
from ...constants import PI, Expr, ExpTerm, Ln
from ...numbers.rounding import evaluate
from .claim import Invalid, Malformed
from .setcheck import (ONE, SCALE, Form, FormSystem, Leaves, Open, count, down, live_steps,
                       up, verdict)

FORMAT = "tinyadder-float-certificate"
# (significant bits p, least normal exponent, overflow exponent) per program
FORMATS = {"float32": (24, -126, 128), "float": (53, -1022, 1024)}
LIBRARY_ULPS = {"exp": 1, "sin": 1, "cos": 1, "erf": 1}   # the trusted premise
CONSTANT_SLACK = Fraction(1, 2 ** 50)
LN2_ABOVE = Fraction(6932, 10000)   # > ln 2
KEEP_SYMBOLS = 32  # the prover's rule: a value keeps its 32 largest rounding symbols


# ---- IEEE rounding of rationals ----------------------------------------------------------

def log2_floor(x):
    """floor(log2 x), x > 0 rational."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if (x.numerator << max(-e, 0)) < (x.denominator << max(e, 0)) else e


def to_nearest(x, bits, emin, emax, fail=Open):
    """x rounded to nearest, ties to even, in ``bits`` significant bits (least normal
    exponent ``emin``); ``fail`` raised past 2^emax."""
    if not x:
        return Fraction(0)
    q = max(log2_floor(abs(x)), emin) - bits + 1
    v = round(x / Fraction(2) ** q) * Fraction(2) ** q
    if abs(v) >= Fraction(2) ** emax:
        raise fail(f"a constant {x} overflows the float format")
    return v


def _symbol(v):
    """Whether the variable v is a rounding symbol (("r", i), in [0, 1])."""
    return v[0] == "r"


def _grid_bits(k, coefs):
    """g when k and every coefficient are multiples of 2^-g (g >= 0), else None (a rounding
    symbol is no integer)."""
    if any(_symbol(v) for v in coefs):
        return None
    bits = 0
    for c in [k, *coefs.values()]:
        bits |= c
    return max(SCALE - ((bits & -bits).bit_length() - 1), 0) if bits else 0


# ---- the program's values --------------------------------------------------------------

class FloatForm(Form):
    """A set of the program's values: the Form at some symbols in [0, 1]. ``adds``, ``mass``:
    a pending sum's count of adds and sum of |terms|; ``grid``: g when every value is a
    multiple of 2^-g; ``closed``: the pending sum bounded (memoised)."""

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
        return FloatForm(self.system, -self.k, {v: -c for v, c in self.coefs.items()}, -self.hi,
                         -self.lo, self.adds, self.mass, self.grid)

    def __sub__(self, other):
        o = self._lift(other)
        # one value at each pair: the same form, or a pending sum and its bound
        if o is self or self.closed is o or o.closed is self or \
                self.closed is not None and self.closed is o.closed:
            return self.system.zero
        return self.system.add(self, -o)

    def __mul__(self, other):
        return self.system.mul(self, self._lift(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self.system.div(self, self._lift(other))

    def __gt__(self, other):
        return self.system.positive(self.system.difference(self, self._lift(other)))


class FloatRelu(FloatForm):
    """relu(g) of the program, exact; ``> 0`` is True (``setcheck.Relu``)."""

    __slots__ = ()

    def __gt__(self, other):
        return True


def _infinite_use(*_):
    raise Open("an infinite value of the program used other than in inf + x or x / inf")


class Infinite:
    """The program's +inf: inf + x = inf, x / inf = 0 (``FloatFormSystem.add``, ``div``);
    any other operation on it, or a look at its form, is Invalid."""

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


class FloatFormSystem(FormSystem):
    """FloatForm's number system for one model and one format (float32 or float)."""

    exact = False

    def __init__(self, model, program):
        super().__init__(model)
        self.name = self.spec = program
        self.bits, self.emin, self.emax = FORMATS[program]
        self.symbols, self._constant = 0, False
        self.zero, self.one = FloatForm(self, 0, grid=0), self.point(Fraction(1))

    # ---- bounds ---------------------------------------------------------------------------
    def half_ulp(self, m):
        """Half the format's spacing at magnitude m; Open past 2^emax (it may overflow)."""
        if m and log2_floor(m) >= self.emax:
            raise Open(f"a value of the {self.name} program may overflow")
        return Fraction(2) ** ((max(log2_floor(m), self.emin) if m else self.emin) - self.bits)

    def _fits_grid(self, grid, m):
        """Whether every multiple of 2^-grid up to m is a float of the format."""
        return grid is not None and m < Fraction(2) ** (self.bits - grid) \
            and grid <= self.bits - 1 - self.emin

    def magnitude(self, f):
        lo, hi = self.grid_box(f)
        return Fraction(max(abs(lo), abs(hi)), ONE)

    # ---- values ---------------------------------------------------------------------------
    def point(self, x):
        lo, hi = down(x), up(x)
        if lo == hi:
            return FloatForm(self, lo, grid=_grid_bits(lo, {}))
        return self.symbolize(self.grid_interval(lo, hi), Fraction(0))

    def lift(self, x):
        if isinstance(x, (FloatForm, Infinite)):
            return x
        if isinstance(x, Form):
            return self.symbolize(x, Fraction(0))
        return self.point(Fraction(x))

    def interval(self, lo, hi):
        return self.grid_interval(down(lo), up(hi))

    def symbolize(self, f, bound, grid=None):
        """f + [-bound, bound] with f's interval and the bound one new symbol ("r", i) (none
        where the width is 0); past KEEP_SYMBOLS symbols the smallest join the interval (c r
        lies in [min(0, c), max(0, c)])."""
        b, coefs = up(bound), dict(f.coefs)
        low, width = f.k + f.lo - b, f.hi - f.lo + 2 * b
        noise = [v for v in coefs if _symbol(v)]
        if len(noise) > KEEP_SYMBOLS:
            noise.sort(key=lambda v: abs(coefs[v]))
            for v in noise[:len(noise) - KEEP_SYMBOLS + 1]:
                c = coefs.pop(v)
                low, width = low + min(c, 0), width + abs(c)
        if width:
            self.symbols += 1
            coefs[("r", self.symbols)] = width
        if grid is None and not any(_symbol(v) for v in coefs):
            grid = _grid_bits(low, coefs)
        return FloatForm(self, low, coefs, grid=grid)

    def plain(self, f):
        """f bounded (a pending sum) as a plain Form, symbols kept."""
        f = self.close(f)
        return Form(self, f.k, f.coefs, f.lo, f.hi)

    def folded(self, f):
        """f with its symbols folded into its interval (a plain Form)."""
        coefs, lo, hi = {}, f.lo, f.hi
        for v, c in f.coefs.items():
            if _symbol(v):
                lo, hi = lo + min(c, 0), hi + max(c, 0)
            else:
                coefs[v] = c
        return Form(self, f.k, coefs, lo, hi)

    def difference(self, x, y):
        """x - y exactly (a comparison's): a plain Form."""
        return self.plain(x) - self.plain(y)

    # ---- ranges: a symbol is no digit ---------------------------------------------------------
    def grid_box(self, f):
        return super().grid_box(self.folded(f) if any(map(_symbol, f.coefs)) else f)

    def range(self, f, least=False):
        return super().range(self.folded(f), least)

    def column_of(self, *forms):
        if any(_symbol(v) for f in forms for v in f.coefs):
            return None
        return super().column_of(*forms)

    def near_column(self, f):
        if any(_symbol(v) for v in f.coefs):
            return None, f
        return super().near_column(f)

    # ---- operations -----------------------------------------------------------------------
    def add(self, x, y):
        """x + y, pending (close where used); inf where one is inf."""
        if isinstance(x, Infinite) or isinstance(y, Infinite):
            return INFINITE
        if y.point and not y.k and not y.adds:
            return x
        if x.point and not x.k and not x.adds:
            return y
        mass = sum(v.mass if v.adds else self.magnitude(v) for v in (x, y))
        grid = None if None in (x.grid, y.grid) else max(x.grid, y.grid)
        f = Form(self, x.k, x.coefs, x.lo, x.hi) + Form(self, y.k, y.coefs, y.lo, y.hi)
        return FloatForm(self, f.k, f.coefs, f.lo, f.hi, x.adds + y.adds + 1, mass, grid)

    def close(self, x):
        """A pending chain of n adds of mass m = sum |terms|, bounded for any order: its exact
        sum plus [-e, e], e = n h(m (1 + n 2^(1 - p))); none where the terms are multiples of
        2^-g and m < 2^(p - g); one add of two points rounded exactly."""
        if not x.adds:
            return x
        if x.closed is None:
            f, n, m = Form(self, x.k, x.coefs, x.lo, x.hi), x.adds, x.mass
            if self._fits_grid(x.grid, m):
                x.closed = self.symbolize(f, Fraction(0), x.grid)
            elif f.point and n == 1:
                x.closed = self.point(self.round(Fraction(f.k, ONE)))
            else:
                x.closed = self.symbolize(f, n * self.half_ulp(
                    m * (1 + n * Fraction(2) ** (1 - self.bits))))
        return x.closed

    def round(self, x):
        return to_nearest(x, self.bits, self.emin, self.emax)

    def mul(self, x, y):
        """x y: the exact product plus [-h(M), h(M)] (``_rounded``); of two points, rounded
        where the result is a float or in a constant expression, else (it may be fused) h."""
        x, y = self.close(x), self.close(y)
        for a, b in ((x, y), (y, x)):
            if a.point and a.k == ONE:
                return b
            if a.point and not a.k:
                return self.zero
        if x.point and y.point:
            z = Fraction(x.k, ONE) * Fraction(y.k, ONE)
            r = self.round(z)
            if r == z or self._constant:
                return self.point(r)
            return self.symbolize(self.interval(z, z), self.half_ulp(abs(z)))
        px = self.plain(x)
        f = px * (px if y is x else self.plain(y))
        return self._rounded(f, None if None in (x.grid, y.grid) else x.grid + y.grid)

    def div(self, x, y):
        """x / y: the exact quotient plus [-h(M), h(M)]; of two points, rounded; x / inf = 0."""
        x = self.close(x)
        if isinstance(y, Infinite):
            return self.zero
        y = self.close(y)
        if y.point and y.k == ONE:
            return x
        if x.point and y.point:
            if not y.k:
                raise Open("a division by 0")
            return self.point(self.round(Fraction(x.k, y.k)))
        return self._rounded(self.plain(x) / self.plain(y), None)

    def _rounded(self, f, grid):
        """f plus [-h(M), h(M)], M the largest |f| over the box; none where every value is a
        float on the grid 2^-grid."""
        m = self.magnitude(f)
        if self._fits_grid(grid, m):
            return self.symbolize(f, Fraction(0), grid)
        return self.symbolize(f, self.half_ulp(m))

    # ---- constants and functions ----------------------------------------------------------
    def const(self, c):
        """A constant as the program stores it: rounded to double, then to the format; an
        expression evaluated by these rules; e^c and ln b enclosed, widened by
        CONSTANT_SLACK for their double computation, then stored."""
        if isinstance(c, Expr):
            self._constant = True
            try:
                return self.close(self.lift(evaluate(self, c)))
            finally:
                self._constant = False
        if isinstance(c, (ExpTerm, Ln)):
            slack = CONSTANT_SLACK * (1 + abs(Fraction(c.power))) if isinstance(c, ExpTerm) \
                else CONSTANT_SLACK
            return self._computed(FormSystem.const(self, c), slack)
        return self.point(self.stored(Fraction(c)))

    slope = const

    def _computed(self, v, slack):
        """A real constant (enclosed by v) computed in double within ``slack`` and stored."""
        lo, hi = (Fraction(e, ONE) for e in self.grid_box(v))
        lo, hi = self.stored(lo - abs(lo) * slack), self.stored(hi + abs(hi) * slack)
        return self.point(lo) if lo == hi else self.symbolize(self.interval(lo, hi), Fraction(0))

    def stored(self, x):
        return self.round(to_nearest(x, 53, -1022, 1024))

    def single(self, x):
        x = self.close(self.lift(x))
        if x.point:
            return self.point(to_nearest(Fraction(x.k, ONE), 24, -126, 128))
        m = self.magnitude(x)
        return self.symbolize(x, Fraction(2) ** (max(log2_floor(m), -126) - 24 if m else -150))

    def pi(self):
        return self._computed(FormSystem.const(self, PI), Fraction(0))

    def _library(self, name, x):
        """A library function: the real function's enclosure plus its ulps (LIBRARY_ULPS, the
        trusted premise); sqrt, correctly rounded, half an ulp."""
        v = getattr(FormSystem, name)(self, self.plain(self.close(self.lift(x))))
        return self.symbolize(v, 2 * LIBRARY_ULPS.get(name, Fraction(1, 2))
                              * self.half_ulp(self.magnitude(v)))

    def exp(self, x):
        """e^x: exp(0) = 1; +inf past (emax + 1) ln 2 (more than an ulp past the largest
        float); [0, the least subnormal] below half of it; else the enclosure plus the
        library's ulps."""
        x = self.close(self.lift(x))
        if x.point and not x.k:
            return self.one
        lo, hi = (Fraction(e, ONE) for e in self.grid_box(x))
        if lo > (self.emax + 1) * LN2_ABOVE:   # more than an ulp past the largest float
            return INFINITE
        if hi < (self.emin - self.bits) * LN2_ABOVE:   # below half the least subnormal
            return self.symbolize(self.interval(0, Fraction(2) ** (self.emin - self.bits + 1)),
                                  Fraction(0))
        if hi > self.emax * LN2_ABOVE:
            raise Open(f"e^x of the {self.name} program may overflow")
        return self._library("exp", x)

    sqrt = partialmethod(_library, "sqrt")
    erf = partialmethod(_library, "erf")
    sin = partialmethod(_library, "sin")
    cos = partialmethod(_library, "cos")

    def largest(self, values):
        """The score whose box lies above every other's, else the hull of the tops."""
        values = [self.close(v) for v in values]
        boxes = [self.grid_box(v) for v in values]
        top = max(range(len(values)), key=lambda i: boxes[i][0])
        if all(boxes[top][0] > hi for i, (_, hi) in enumerate(boxes) if i != top):
            return values[top]
        return self.symbolize(self.grid_interval(boxes[top][0], max(hi for _, hi in boxes)),
                              Fraction(0))

    def relu(self, g):
        r = super().relu(self.plain(g))
        v = self.symbolize(r, Fraction(0))
        return FloatRelu(self, v.k, v.coefs, v.lo, v.hi, grid=v.grid)


# ---- leaves ---------------------------------------------------------------------------------

class FloatLeaves(Leaves):
    """Re-decides leaves of one model's float program."""

    def __init__(self, model, program):
        if program not in FORMATS:
            raise Malformed(f"number: {program!r} is not float32 or float")
        self.program = program
        super().__init__(model, FloatFormSystem(model, program))

    def row(self, slot, region):
        return [self.ns.lift(v) for v in super().row(slot, region)]

    def holds(self, k, region):
        """``Leaves.holds``; a region of one pair: whether the float replay adds it right (its
        digits: the one step of each column on the region's one walk)."""
        if count(region, self.n) != 1:
            return super().holds(k, region)
        live = live_steps(region, self.n)
        a, b = (sum(st[0][i] * 10 ** j for j, st in enumerate(live)) for i in (1, 2))
        if add(self.model, self.program, a, b) != a + b:
            raise Invalid(f"the {self.program} replay adds {a} + {b} wrong")
        return True

    def difference(self, y, logits, t, u):
        """logit_t - logit_u formed exactly from the close logits, its symbols folded."""
        ns = self.ns
        return ns.folded(ns.difference(ns.close(logits[t]), ns.close(logits[u])))


# ---- the certificate ----------------------------------------------------------------------

def check(cert, progress=None, jobs=1):
    """A one-line verdict if ``cert`` proves its model's float program adds every pair;
    Invalid (Malformed: not a readable certificate) otherwise (``setcheck.verdict``)."""
    program = cert.get("number") if isinstance(cert, dict) else None
    return verdict(cert, FORMAT, lambda model: FloatLeaves(model, program),
                   f" as a {program} program", progress, jobs)
