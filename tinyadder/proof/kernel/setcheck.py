"""The checker of the generic prover's certificates: does the split tree cover every pair
exactly once, and does every leaf hold? It imports nothing of the search.

Per answer position the tree is rebuilt from the root, every pair of N-digit numbers, each
split's children derived from its name (``cut``): disjoint, their union their parent. Every
leaf is re-decided (``_node``, ``Leaves.holds``) by the reference pass over its region in
:class:`Form` values: affine forms, not intervals, for a model that adds subtracts a written
digit of the sum from the operands' digits, and intervals lose that cancellation.
"""

from fractions import Fraction
from functools import partial

from ...forward import add_up, forward
from ...modelfile import loads
from ...numbers import for_model, number_system
from ...numbers.enclosures import IntervalSystem
from ...numbers.protocol import OverSets, Undecided
from ...plan import compile_model
from ...analysis.parallel import each_share
from .claim import Invalid, Malformed, named, short_answer

FORMAT = "tinyadder-sets-certificate"
MAX_DEPTH = 900  # a split tree deeper than this is refused (far below the recursion limit)


# ---- regions: constraints on the pairs, counted and bounded by a walk over the columns ----

def steps(region, n, j):
    """(carry in, a_j, b_j, carry out) allowed in column j."""
    (alo, ahi), (blo, bhi), (slo, shi) = region["a"][j], region["b"][j], region["s"][j]
    cin, cout = region["c"][j], region["c"][j + 1]
    for c in (0, 1):
        for x in range(alo, ahi + 1):
            for y in range(blo, bhi + 1):
                t = x + y + c
                if c in cin and t // 10 in cout and slo <= t % 10 <= shi:
                    yield c, x, y, t // 10


def count(region, n):
    ways = {0: 1}
    for j in range(n):
        new = {}
        for c, _, _, out in steps(region, n, j):
            new[out] = new.get(out, 0) + ways.get(c, 0)
        ways = new
    return sum(ways.values())


def extreme(columns, coefs, pick):
    """The least (pick=min) or greatest value over a region of sum coefs[v] v (v: ("a", j),
    ("b", j), ("c", j) the carry into column j, or an indicator ("a", j, d), ("b", j, d),
    ("s", j, d): 1 when a_j, b_j or the sum's digit s_j is d), by the walk over its columns'
    steps ``columns`` (``steps``, or ``live_steps``: the same walks); None if it is empty."""
    best = {0: 0}
    get = coefs.get
    for j, st in enumerate(columns):
        new = {}
        ka, kb, kc = get(("a", j), 0), get(("b", j), 0), get(("c", j), 0)
        for c, x, y, out in st:
            if c in best:
                v = best[c] + ka * x + kb * y + kc * c \
                    + get(("a", j, x), 0) + get(("b", j, y), 0) + get(("s", j, (c + x + y) % 10), 0)
                new[out] = v if out not in new else pick(v, new[out])
        best = new
    values = [v + coefs.get(("c", len(columns)), 0) * c for c, v in best.items()]
    return pick(values) if values else None


def live_steps(region, n):
    """Per column, the steps on a whole walk: carry in reachable from column 0, carry out
    continued up to the top."""
    raw = [list(steps(region, n, j)) for j in range(n)]
    reach = [{0}]
    for j in range(n):
        reach.append({out for c, _, _, out in raw[j] if c in reach[j]})
    done = [set() for _ in range(n)] + [reach[n]]
    for j in reversed(range(n)):
        done[j] = {c for c, _, _, out in raw[j] if c in reach[j] and out in done[j + 1]}
    return [[t for t in raw[j] if t[0] in done[j] and t[3] in done[j + 1]] for j in range(n)]


def root(n):
    return {"a": [(0, 9)] * n, "b": [(0, 9)] * n, "s": [(0, 9)] * n,
            "c": [{0}] + [{0, 1}] * n}


def cut(region, n, split):
    """The children of a split, derived from its name: ["c", j] fixes the carry into column
    j to 0 and to 1; [x, j, mid] cuts the range lo..hi of a_j, b_j or s_j (x "a", "b", "s")
    into lo..mid and mid + 1..hi; Invalid if it names no split of ``region``."""
    kind = split[0] if isinstance(split, list) and split else None
    if kind == "c" and len(split) == 2 and type(split[1]) is int and 1 <= split[1] <= n \
            and region["c"][split[1]] == {0, 1}:
        j, parts = split[1], ({0}, {1})
    elif kind in ("a", "b", "s") and len(split) == 3 and {type(x) for x in split[1:]} == {int} \
            and 0 <= split[1] < n and region[kind][split[1]][0] <= split[2] \
            and split[2] < region[kind][split[1]][1]:
        (j, mid), (lo, hi) = split[1:], region[kind][split[1]]
        parts = ((lo, mid), (mid + 1, hi))
    else:
        raise Invalid(f"unknown split {split!r}")
    out = []
    for part in parts:
        child = dict(region)
        child[kind] = list(region[kind])
        child[kind][j] = part
        out.append(child)
    return out


# ---- the values: affine forms plus an interval, on a binary grid -------------------------

SCALE = 200            # every number of a Form is an integer times 2^-SCALE
ONE = 1 << SCALE
CHORD_BITS = 32        # a ReLU chord's slope is a multiple of 2^-CHORD_BITS
FOLD_BITS = 40         # the prover's rule for folding other columns into an interval
MAX_DIGITS = 10000     # an enclosure end beyond 10^MAX_DIGITS does not hold a leaf


def _cdiv(a, b):
    return -(-a // b)


def _floor_of(x, fail=Invalid):
    """The grid integer at or below a Decimal, exactly (below 10^-62 in size: 0 or -1);
    ``fail(why)`` for no number or one past 10^MAX_DIGITS, which no decision can use."""
    if not x.is_finite() or x.adjusted() >= MAX_DIGITS:
        raise fail(f"an enclosure end {x} (none beyond 10^{MAX_DIGITS})")
    if x.adjusted() < -(SCALE * 3 // 10 + 3):
        return -1 if x < 0 else 0
    return down(Fraction(x))


def _ceil_of(x, fail=Invalid):
    return -_floor_of(x.copy_negate(), fail)   # copy_negate is exact; -x rounds


def down(x):
    """The grid integer at or below the rational x."""
    x = Fraction(x)
    return (x.numerator << SCALE) // x.denominator


def up(x):
    """The grid integer at or above the rational x."""
    return -down(-Fraction(x))


def _top(v):
    """The greatest value of a variable: 9 for a digit, 1 for a carry or an indicator."""
    return 9 if len(v) == 2 and v[0] in "ab" else 1


def _col(v):
    return v if len(v) == 2 else v[:2]


class Open(Invalid, Undecided):
    """What the region does not settle (a sign, a divisor away from 0, a root's slope): to
    the checker the leaf does not hold, to the search the region is to be split."""


class Form:
    """k + sum coefs[v] v + [lo, hi], every number an integer times 2^-SCALE, over the
    system's current region: at every pair of it the value lies in the form at the pair plus
    [lo, hi]."""

    __slots__ = ("system", "k", "coefs", "lo", "hi")

    def __init__(self, system, k, coefs=None, lo=0, hi=0):
        self.system, self.k, self.coefs, self.lo, self.hi = system, k, coefs or {}, lo, hi

    @property
    def point(self):
        """Whether the form is one number (no variable, no width)."""
        return not self.coefs and not self.lo and not self.hi

    def _lift(self, x):
        return x if isinstance(x, Form) else self.system.const(x)

    def __add__(self, other):
        o = self._lift(other)
        coefs = dict(self.coefs)
        for v, c in o.coefs.items():
            c += coefs.get(v, 0)
            if c:
                coefs[v] = c
            else:
                del coefs[v]
        return Form(self.system, self.k + o.k, coefs, self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self):
        return Form(self.system, -self.k, {v: -c for v, c in self.coefs.items()}, -self.hi,
                    -self.lo)

    def __sub__(self, other):
        """x - x is 0: one form stands for one value at each pair, whatever its interval."""
        if other is self:
            return Form(self.system, 0)
        return self + -self._lift(other)

    def times(self, num, den=1):
        """num/den times this form (den > 0)."""
        return Form(self.system, *scaled(self.k, self.coefs, self.lo, self.hi, num, den))

    def __mul__(self, other):
        o = self._lift(other)
        if o.point:
            return self.times(o.k, ONE)
        if self.point:
            return o.times(self.k, ONE)
        ns = self.system
        table = ns.tabulate2(self, o, _times)
        if table is not None:
            return table
        mf, mg, rest = middles(ns.grid_box(self), None if o is self else ns.grid_box(o))
        product = self.times(mg, ONE) + o.times(mf, ONE) + Form(ns, rest[0], None, *rest[1:])
        if o is self:  # a square is at least 0: where the form's box says less, [0, its top]
            low, high = ns.grid_box(product)
            if low < 0:
                return Form(ns, 0, None, 0, high)
        return product

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self._lift(other)
        if o.point:
            if not o.k:
                raise Open("a division by 0")
            return self.times(ONE, o.k) if o.k > 0 else self.times(-ONE, -o.k)
        table = self.system.tabulate2(self, o, _over)
        if table is not None:
            return table
        return self * self.system.recall("1/x", o, self.system.reciprocal)

    def __gt__(self, other):
        """A ReLU's ``g > 0`` (``FormSystem.positive``). The pass (``forward``) compares values
        only so, and puts a value left of every - and /: no other comparison or reflected
        operator is needed."""
        return self.system.positive(self - self._lift(other))


def scaled(k, coefs, lo, hi, num, den):
    """(k, coefs, lo, hi) of num/den (den > 0) times k + sum coefs[v] v + [lo, hi]: each
    number rounded down to the grid, hi raised by the roundings times the variables' greatest
    values (``_top``)."""
    coefs_out, slack = {}, 0
    for v, c in coefs.items():
        q, r = divmod(c * num, den)
        if q:
            coefs_out[v] = q
        slack += _top(v) if r else 0
    k, r = divmod(k * num, den)
    slack += 1 if r else 0
    lo, hi = (lo, hi) if num > 0 else (hi, lo)
    return k, coefs_out, lo * num // den, _cdiv(hi * num, den) + slack


def middles(f_box, g_box=None):
    """(m_f, m_g, (k, lo, hi)): f g = m_g f + m_f g + k + [lo, hi], m the middle of a box:
    k + [lo, hi] holds (f - m_f)(g - m_g) - m_f m_g over the boxes, a square's (g_box None)
    (f - m_f)^2 at or above 0."""
    a, b = f_box
    mf = (a + b) // 2
    a, b = a - mf, b - mf
    if g_box is None:
        mg = mf
        ends = [0 if a <= 0 <= b else min(a * a, b * b), max(a * a, b * b)]
    else:
        mg = (g_box[0] + g_box[1]) // 2
        c, d = g_box[0] - mg, g_box[1] - mg
        ends = [a * c, a * d, b * c, b * d]
    mm = mf * mg
    return mf, mg, (-(mm >> SCALE), (min(ends) >> SCALE) - (1 if mm % ONE else 0),
                    _cdiv(max(ends), ONE))


def chord(lo, hi):
    """(lam, 2^CHORD_BITS, w): relu(g) lies in lam / 2^CHORD_BITS g + [0, w] for g in [lo, hi],
    lo < 0 < hi, lam near hi / (hi - lo), w >= max(-lam lo, (1 - lam) hi)."""
    unit = 1 << CHORD_BITS
    lam = (hi << CHORD_BITS) // (hi - lo)
    return lam, unit, _cdiv(max(-lam * lo, (unit - lam) * hi), unit)


def _times(a, b, c, d):
    """[a, b] [c, d] on the grid, ends rounded outward."""
    ends = (a * c, a * d, b * c, b * d)
    return min(ends) >> SCALE, _cdiv(max(ends), ONE)


def _inverse(lo, hi):
    """1 / [lo, hi] on the grid (0 not in it)."""
    return (ONE * ONE) // hi, _cdiv(ONE * ONE, lo)


def _over(a, b, c, d):
    """[a, b] / [c, d] on the grid; None where [c, d] holds 0."""
    return None if c <= 0 <= d else _times(a, b, *_inverse(c, d))


class Relu(Form):
    """relu(g), in (num/den) g + [0, gap] over the region (``slope`` = (num, den)); its ``> 0``
    is True, so the pass's ``g if g > 0 else 0`` and ``g u if g > 0 else 0`` take it whole."""

    __slots__ = ("slope", "gap")

    def __init__(self, system, k, coefs=None, lo=0, hi=0, slope=(1, 1), gap=0):
        super().__init__(system, k, coefs, lo, hi)
        self.slope, self.gap = slope, gap

    def __gt__(self, other):
        return True


class FormSystem(OverSets):
    """The number system of :class:`Form` values (what ``forward`` needs of one)."""

    name = spec = "check"
    exact = True    # an enclosure of exact values: any grouping of a product is as sound
    roundings = ()

    def __init__(self, model):
        self.enclose = IntervalSystem(for_model(number_system("fraction"), model).exp_digits)
        self.zero, self.one = Form(self, 0), Form(self, ONE)
        self.live = None   # no region yet: constants only
        self.allowed, self.tied, self.points, self.recent, self.ends = {}, {}, {}, {}, {}

    def at(self, region, n):
        """Take ranges over ``region`` from now on: each column's digits and carries as the
        steps on a whole walk over the columns allow them."""
        self.live = live = live_steps(region, n)
        self.allowed, self.tied, self.points, self.recent = {}, {}, {}, {}
        for j, st in enumerate(live):
            self.allowed[("a", j)] = sorted({x for _, x, _, _ in st}) or [0]
            self.allowed[("b", j)] = sorted({y for _, _, y, _ in st}) or [0]
            self.allowed[("s", j)] = sorted({(c + x + y) % 10 for c, x, y, _ in st}) or [0]
            self.allowed[("c", j + 1)] = sorted({o for _, _, _, o in st}) or [0]
            if len(st) < (200 if j else 100):
                self.tied[j] = st

    def undecided(self, value, why):
        """The exception for what the region does not settle about ``value`` (or None)."""
        return Open(why)

    def recall(self, what, x, compute):
        """compute(x), remembered for the last 64 x over this region (a softmax's one sum);
        x is kept beside its result, so that its id names it while remembered."""
        key = (what, id(x))
        hit = self.recent.get(key)
        if hit is not None and hit[0] is x:
            return hit[1]
        if len(self.recent) >= 64:
            self.recent.clear()
        result = compute(x)
        self.recent[key] = (x, result)
        return result

    def grid_box(self, f):
        """(least, greatest) of f over the region's box: the sum over its units (``unit``)
        of each unit's terms' range (grid integers)."""
        if not f.coefs:
            return f.k + f.lo, f.k + f.hi
        return self.recall("box", f, self._box)

    def _box(self, f):
        lo = hi = f.k
        for unit, terms in self.units(f.coefs).items():
            least, most = self.unit_box(unit, terms)
            lo, hi = lo + least, hi + most
        return lo + f.lo, hi + f.hi

    def unit(self, col):
        """The unit of the box that holds column ``col``'s terms: a constrained column j
        (an int: its digits', sum's and carry-out's terms together, over its steps), else the
        column itself (a variable over its digits, with its indicators)."""
        j = col[1] - 1 if col[0] == "c" else col[1]
        return j if j in self.tied else col

    def units(self, coefs, by_column=None):
        """The terms by unit (and, into ``by_column``, by column)."""
        by = {}
        for v, c in coefs.items():
            col = _col(v)
            by.setdefault(self.unit(col), {})[v] = c
            if by_column is not None:
                by_column.setdefault(col, {})[v] = c
        return by

    def unit_box(self, unit, terms):
        """(least, greatest) of a unit's terms: over a constrained column's steps
        (``tied_span``; none: 0), else lin d + [x = d]'s coefficient over the column's digits."""
        if isinstance(unit, int):
            return self.tied_span(unit, terms) if self.tied[unit] else (0, 0)
        lin = terms.get(unit, 0)
        values = [lin * d + terms.get(unit + (d,), 0) for d in self.allowed[unit]]
        return min(values), max(values)

    def tied_span(self, j, terms):
        """(least, greatest) over column j's steps (c, x, y, o) of its terms: A x + B y + C o
        + [a_j = x] + [b_j = y] + [s_j = (c + x + y) mod 10] terms, taken over the distinct
        (x, y, o, s) of the steps in the coordinates the terms read (x alone: its digits)."""
        tables = {"a": [0] * 10, "b": [0] * 10, "s": [0] * 10}
        lin = {"a": 0, "b": 0, "c": 0}
        for v, c in terms.items():
            if len(v) == 3:
                tables[v[0]][v[2]] += c
            else:
                lin[v[0]] += c
        fa = [lin["a"] * x + t for x, t in enumerate(tables["a"])]
        fb = [lin["b"] * y + t for y, t in enumerate(tables["b"])]
        fo, fs = (0, lin["c"]), tables["s"]
        key = (j, any(fa), any(fb), any(fo), any(fs))
        points = self.points.get(key)
        if points is None:
            _, ra, rb, ro, rs = key
            points = self.points[key] = sorted({(x * ra, y * rb, o * ro, (c + x + y) % 10 * rs)
                                                for c, x, y, o in self.tied[j]})
        values = [fa[x] + fb[y] + fo[o] + fs[s] for x, y, o, s in points]
        return min(values), max(values)

    def range(self, f, least=False):
        """(least, greatest) of f over the region's pairs, by the walk (an empty region:
        (0, 0); ``least``: the greatest not taken, None); grid integers."""
        if not f.coefs:
            return f.k + f.lo, f.k + f.hi
        lo = extreme(self.live, f.coefs, min)
        if lo is None:
            return 0, 0
        return f.k + lo + f.lo, None if least else f.k + extreme(self.live, f.coefs, max) + f.hi

    def sign_range(self, f):
        """f's box, else (where it holds 0 inside) its range by the walk."""
        lo, hi = self.grid_box(f)
        return self.range(f) if lo < 0 < hi else (lo, hi)

    def positive(self, f):
        """``f > 0`` as a ReLU asks it (its branches agree at 0): True when f >= 0 at every
        pair of the region, False when f <= 0 (``sign_range``); else what the region does
        not settle (``undecided``)."""
        lo, hi = self.sign_range(f)
        if lo >= 0:
            return True
        if hi <= 0:
            return False
        raise self.undecided(f, "a sign that depends on the pair")

    def relu(self, g):
        """relu(g) over the region: g if g >= 0 there, 0 if g <= 0, else the chord
        lam g + [0, w] (``chord``), [l, u] the range of g (``sign_range``)."""
        lo, hi = self.sign_range(g)
        if lo >= 0:
            return Relu(self, g.k, g.coefs, g.lo, g.hi)
        if hi <= 0:
            return Relu(self, 0, slope=(0, 1))
        self.chorded(g)
        lam, unit, w = chord(lo, hi)
        line = g.times(lam, unit)
        return Relu(self, line.k, line.coefs, line.lo, line.hi + w, (lam, unit), w)

    def chorded(self, g):
        """Told of a gate g that ``relu`` relaxes to its chord (the search lists them)."""

    # ---- a value of one column, digit by digit -------------------------------------------
    def column_of(self, *forms):
        """The one column every variable of ``forms`` belongs to, else None."""
        cols = {_col(v) for f in forms for v in f.coefs}
        return cols.pop() if len(cols) == 1 else None

    def entries(self, f, col):
        """[(d, least, greatest)] of f at each digit d of column ``col``."""
        lin, get = f.coefs.get(col, 0), f.coefs.get
        values = [(d, f.k + lin * d + get(col + (d,), 0)) for d in self.allowed[col]]
        return [(d, v + f.lo, v + f.hi) for d, v in values]

    def table(self, col, rows):
        """The form that is in [lo_d, hi_d] at digit d (rows: (d, lo_d, hi_d)): indicators
        [x = d] (a carry's: affine in it) plus [0, the widest]."""
        width = max(h - lo for _, lo, h in rows)
        base = rows[0][1]
        if len(rows) == 1:
            return Form(self, base, None, 0, width)
        if col[0] == "c":
            return Form(self, base, {col: rows[1][1] - base}, 0, width)
        return Form(self, base, {col + (d,): lo - base for d, lo, _ in rows[1:] if lo != base},
                    0, width)

    def near_column(self, f):
        """(column, f with the terms of every other column in its interval) where those terms
        vary less than 2^-FOLD_BITS of the column's that varies most; else (None, f)."""
        return self.recall("fold", f, self._near_column)

    def _near_column(self, f):
        """``near_column``: each column's span and the others' box from the box's units, a
        constrained column's own terms and the rest of its unit taken apart."""
        by = {}
        units = self.units(f.coefs, by)
        if len(by) < 2:
            return (next(iter(by)) if by else None), f
        boxes = {u: self.unit_box(u, terms) for u, terms in units.items()}
        spans = {col: boxes[col] if col in boxes else self.unit_box(self.unit(col), terms)
                 for col, terms in by.items()}
        col = max(spans, key=lambda c: spans[c][1] - spans[c][0])
        own = self.unit(col)
        lo = sum(b[0] for u, b in boxes.items() if u != own)
        hi = sum(b[1] for u, b in boxes.items() if u != own)
        rest = {v: c for v, c in units[own].items() if _col(v) != col}
        if rest:
            least, most = self.unit_box(own, rest)
            lo, hi = lo + least, hi + most
        if (hi - lo) << FOLD_BITS > spans[col][1] - spans[col][0]:
            return None, f
        return col, Form(self, f.k, by[col], f.lo + lo, f.hi + hi)

    def tabulate2(self, f, g, op):
        """op(f, g) digit by digit where f and g depend on one column (up to terms folded by
        ``near_column``), else None; ``op`` takes two ranges' ends, gives the result's."""
        col = self.column_of(f, g)
        if col is None:
            (cf, f), (cg, g) = self.near_column(f), self.near_column(g)
            col = cf if cf == cg or not g.coefs else cg if not f.coefs else None
            if col is None:
                return None
        rows = []
        for (d, a, b), (_, c, e) in zip(self.entries(f, col), self.entries(g, col)):
            ends = op(a, b, c, e)
            if ends is None:
                return None
            rows.append((d,) + ends)
        return self.table(col, rows)

    def reciprocal(self, f):
        """1 / f: over the box, or by the mean value (slope -1/t^2 between -1/near^2 and
        -1/far^2) where narrower."""
        lo, hi = self.grid_box(f)
        if lo <= 0 <= hi:
            raise self.undecided(f, "a division by a value that may be 0")
        r_lo, r_hi = _inverse(lo, hi)
        if not f.coefs or lo == hi:
            return self.grid_interval(r_lo, r_hi)
        near, far = sorted((abs(lo), abs(hi)))
        slope = (-_cdiv(ONE ** 3, near * near), -((ONE ** 3) // (far * far)))
        return self._mean_value(f, lo, hi, (r_lo, r_hi), slope, lambda m: _inverse(m, m))

    def _mean_value(self, f, lo, hi, whole, slope, at):
        """fn(f), f in [lo, hi]: the narrower of fn's enclosure ``whole`` and alpha f + fn(m)
        - alpha m + [-r, r] (m the middle, at(m) fn(m)'s enclosure, alpha the middle of fn's
        ``slope``, r its spread times the half width); ``whole`` where that form's box reaches
        0 or past it and ``whole`` does not (a steep function's form can)."""
        flat = self.grid_interval(*whole)
        m, alpha = (lo + hi) // 2, (slope[0] + slope[1]) // 2
        rad = _cdiv(max(slope[1] - alpha, alpha - slope[0]) * max(hi - m, m - lo), ONE)
        if 2 * rad >= whole[1] - whole[0]:
            return flat
        (v_lo, v_hi), am = at(m), alpha * m
        k = v_lo - _cdiv(am, ONE)
        form = f.times(alpha, ONE) + Form(self, k, None, -rad, v_hi - (am >> SCALE) - k + rad)
        b_lo, b_hi = self.grid_box(form)
        return flat if whole[0] > 0 >= b_lo or whole[1] < 0 <= b_hi else form

    def grid_ends(self, fn, lo, hi):
        """fn's enclosure over [lo, hi] (grid integers), its ends rounded outward to the grid;
        remembered across regions (a function of fn, lo and hi alone; at most 2^16)."""
        key = (fn, lo, hi)
        found = self.ends.get(key)
        if found is None:
            p = self.enclose.point
            iv = fn(self.enclose.value(p(Fraction(lo, ONE)).lo, p(Fraction(hi, ONE)).hi))
            fail = partial(self.undecided, None)
            if len(self.ends) >= 1 << 16:
                self.ends.clear()
            found = self.ends[key] = _floor_of(iv.lo, fail), _ceil_of(iv.hi, fail)
        return found

    def function(self, fn, f, slope=None):
        """fn(f): digit by digit where f depends on one column; else over f's box, or by the
        mean value where narrower (``slope(lo, hi)``: fn's slope over [lo, hi])."""
        col, f = self.near_column(f)
        if col is not None:
            return self.table(col, [(d,) + self.grid_ends(fn, a, b)
                                    for d, a, b in self.entries(f, col)])
        lo, hi = self.grid_box(f)
        whole = self.grid_ends(fn, lo, hi)
        if slope is None or lo == hi or not f.coefs:
            return self.grid_interval(*whole)
        return self._mean_value(f, lo, hi, whole, slope(lo, hi),
                                lambda m: self.grid_ends(fn, m, m))

    def digit_row(self, embeds, form, col, lo, affine=True):
        """The embedding of a digit token whose value is ``form``, the digit of column ``col``
        from lo on (``embeds``: the digits' rows), column by column: e + (d - lo) s where
        ``affine`` and the column's entries are points exactly affine in the digit d, else
        the table of its entries (exact at every digit)."""
        if len(embeds) == 1:
            return list(embeds[0])
        out = []
        for column in zip(*embeds):
            e, s = column[0].k, column[1].k - column[0].k
            if affine and all(v.point and v.k == e + i * s for i, v in enumerate(column)):
                out.append(form.times(s, ONE) + self.grid_interval(e - lo * s, e - lo * s))
            else:
                out.append(self.table(col, [(lo + i, *self.grid_box(v))
                                            for i, v in enumerate(column)]))
        return out

    def grid_interval(self, lo, hi):
        """The constant interval [lo, hi] (grid integers)."""
        return Form(self, lo, None, 0, hi - lo)

    def const(self, c):
        if isinstance(c, (int, Fraction)):
            return self.grid_interval(down(c), up(c))
        iv = self.enclose.const(c)
        fail = partial(self.undecided, None)
        return self.grid_interval(_floor_of(iv.lo, fail), _ceil_of(iv.hi, fail))

    slope = const

    def exp(self, x):
        if x.point and not x.k:
            return self.one
        return self.function(self.enclose.exp, x,
                             lambda lo, hi: self.grid_ends(self.enclose.exp, lo, hi))

    def sqrt(self, x):
        def slope(lo, hi):
            """1 / (2 sqrt t) over [lo, hi]."""
            r_lo, r_hi = self.grid_ends(self.enclose.sqrt, lo, hi)
            if r_lo <= 0:
                raise self.undecided(None, "a root near 0")
            return (ONE * ONE) // (2 * r_hi), _cdiv(ONE * ONE, 2 * r_lo)
        return self.function(self.enclose.sqrt, x, slope)

    def erf(self, x):
        return self.function(self.enclose.erf, x)

    def sin(self, x):
        return self.function(self.enclose.sin, x,
                             lambda lo, hi: self.grid_ends(self.enclose.cos, lo, hi))

    def cos(self, x):
        def slope(lo, hi):
            a, b = self.grid_ends(self.enclose.sin, lo, hi)
            return -b, -a
        return self.function(self.enclose.cos, x, slope)

    def largest(self, values):
        """The value with the greatest least end (a softmax's pattern is the same for any m
        subtracted, so s - m is exactly 0 for it)."""
        return max(values, key=lambda v: self.grid_box(v)[0])

    def describe(self):
        return f"{self.name} values: affine forms over a region on a 2^-{SCALE} grid (the kernel)"


# ---- one leaf -----------------------------------------------------------------------------

def layout(model):
    """(the prompt's slots, the answer's targets): a slot is ("token", id), ("a", j) or
    ("b", j); a target ("digit", place) or ("token", id)."""
    p = model.prompt
    slots = []
    for item in p.question:
        if item in ("a", "b"):
            order = range(p.digits - 1, -1, -1) if p.operands == "msb" else range(p.digits)
            slots += [(item, j) for j in order]
        else:
            slots.append(("token", model.vocab.index(item)))
    places = range(p.answer_digits - 1, -1, -1) if p.answer == "msb" else range(p.answer_digits)
    targets = [("digit", q) for q in places]
    if p.stop is not None:
        targets.append(("token", model.vocab.index(p.stop)))
    return slots, targets


class Leaves:
    """Re-decides leaves of one model, in the number system ``ns`` (by default the
    real-number model's, :class:`FormSystem`)."""

    def __init__(self, model, ns=None):
        self.model, self.n = model, model.prompt.digits
        self.ns = ns = ns or FormSystem(model)
        self.compiled = compile_model(model, ns)
        self.ids = [model.vocab.index(str(d)) for d in range(10)]
        self.slots, self.targets = layout(model)
        # the real-number model's digit rows are affine only where all ten rows are exactly
        # affine in the digit; a float program's column by column (``digit_row``)
        rows = [[v.k if v.point else None for v in self.compiled.embed[t]] for t in self.ids]
        self.line = not ns.exact or all(None not in r for r in rows) and all(
            rows[d][s] == rows[0][s] + d * (rows[1][s] - rows[0][s])
            for d in range(10) for s in range(len(rows[0])))
        # the readout and a ReLU FFN regrouped: the same numbers in exact arithmetic only
        self.readout = self.compiled.readout_map() if ns.exact else None
        self.ffns = {i: (b.up.multiplied_out(), b.down.multiplied_out())
                     for i, b in enumerate(self.compiled.blocks)
                     if model.blocks[i].mlp is not None and model.blocks[i].mlp.act == "relu"
                     and not b.gated and ns.exact}
        self._prompt = None
        self.prompt()  # once, before the leaves (in every process of ``walk``) continue from it

    def digit(self, form, col, lo, hi):
        """A digit token's embedding: its value is ``form``, in lo..hi, the digit of column
        ``col`` (("a", j), ("b", j), ("s", j) or the carry ("c", N)), by ``digit_row``."""
        return self.ns.digit_row([self.compiled.embed[self.ids[d]] for d in range(lo, hi + 1)],
                                 form, col, lo, self.line)

    def row(self, slot, region):
        kind, j = slot
        ns = self.ns
        if kind == "token":
            return list(self.compiled.embed[j])
        if kind in ("a", "b"):
            lo, hi = region[kind][j]
            return self.digit(Form(ns, 0, {(kind, j): ONE}), (kind, j), lo, hi)
        if j > self.n:
            return list(self.compiled.embed[self.ids[0]])
        if j == self.n:
            c = region["c"][j]
            return self.digit(Form(ns, 0, {("c", j): ONE}), ("c", j), min(c), max(c))
        coefs = {("a", j): ONE, ("b", j): ONE, ("c", j + 1): -10 * ONE}
        if j:
            coefs[("c", j)] = ONE
        return self.digit(Form(ns, 0, coefs), ("s", j), *region["s"][j])

    def failure(self, leaf):
        """None if the leaf (k, region) holds, or (k, region, True) is wrong at every pair
        (``holds``), else why not (a line)."""
        try:
            self.holds(*leaf)
        except Invalid as why:
            return str(why)
        return None

    def token(self, k, region):
        """The target token at position k: one digit over the region, or Invalid."""
        kind, q = self.targets[k]
        if kind == "token":
            return q
        if q > self.n:
            return self.ids[0]
        lo, hi = (min(region["c"][q]), max(region["c"][q])) if q == self.n else region["s"][q]
        if lo != hi:
            raise Invalid(f"a leaf at position {k} whose target digit is not one digit")
        return self.ids[lo]

    def patch(self, rows, last=True):
        """The embedding's rows replaced by ``rows``; every ReLU taken whole; the last block's
        rows after its attention, which feed no later row, zero but (``last``) the last
        position's; a ReLU FFN that is not gated as one affine map (``one_map``)."""
        relu, zero = self.ns.relu, self.ns.zero
        patch = {"hook_embed": lambda _: rows}
        for i, block in enumerate(self.model.blocks):
            if block.mlp is not None and block.mlp.act == "relu":
                patch[f"blocks.{i}.mlp.hook_pre"] = lambda pre: [[relu(g) for g in r]
                                                                 for r in pre]
        keep = 1 if last else 0
        patch[f"blocks.{len(self.model.blocks) - 1}.hook_resid_mid"] = \
            lambda x: [[zero] * len(r) for r in x[:len(x) - keep]] + x[len(x) - keep:]
        for i in self.ffns:
            self.one_map(patch, i)
        return patch

    def prompt(self):
        """(keys and values, positions) of the prompt but its last token, run once over every
        pair (they hold at every pair of any leaf; the last block's rows after its attention
        are zeros); (None, 0) where that pass meets a sign it cannot decide."""
        if self._prompt is None:
            whole = root(self.n)
            self.ns.at(whole, self.n)
            rows = [self.row(s, whole) for s in self.slots[:-1]]
            try:
                past = forward(self.compiled, [0] * len(rows), patch=self.patch(rows, False),
                               logits="last")[1]
                self._prompt = (past, len(rows))
            except Invalid:
                self._prompt = (None, 0)
        return self._prompt

    def holds(self, k, region, wrong=False):
        """Whether the target token's logit beats every other over the region (Invalid: why
        not), the pass continuing from ``prompt``'s, the differences by ``difference``;
        ``wrong`` (a count's leaf): whether one other token's beats it at every pair instead."""
        token = self.token(k, region)
        past, start = self.prompt()
        self.ns.at(region, self.n)
        slots = self.slots + [("sum", p) for _, p in self.targets[:k]]
        rows = [self.row(s, region) for s in slots[start:]]
        patch, final = self.patch(rows), []
        patch[final_point(self.compiled)] = lambda x: final.append(x[-1]) or x
        logits = forward(self.compiled, [0] * len(rows), past, patch=patch, logits="last",
                         last_row=True)[0][-1]
        t, ns = list(self.compiled.readout_tokens).index(token), self.ns
        gaps = [(u, self.difference(final[-1], logits, t, u)) for u in range(len(logits))
                if u != t]
        if wrong:
            if all(ns.range(d)[1] >= 0 for _, d in gaps):
                raise Invalid(f"at position {k}, no token's logit beats the target's at every "
                              f"pair of a 'wrong' leaf")
            return True
        for u, d in gaps:
            # the box is below every pair's value: above 0, no walk is needed
            if ns.grid_box(d)[0] <= 0 and ns.range(d, least=True)[0] <= 0:
                raise Invalid(f"at position {k}, token {u}'s logit may reach the target's")
        return True

    def difference(self, y, logits, t, u):
        """logit_t - logit_u, formed from the final row y (``gap``)."""
        return gap(self.readout, y, t, u, self.ns.zero)

    def one_map(self, patch, i):
        """Block i's ReLU FFN (not gated) as one affine map of its input (``ffn_map``)."""
        block, seen = self.compiled.blocks[i], {}
        where = (f"blocks.{i}.ln2.hook_normalized" if block.ln2 is not None else
                 f"blocks.{i}.hook_resid_mid")
        before, gates = patch.get(where, lambda x: x), patch[f"blocks.{i}.mlp.hook_pre"]

        def keep(name, f):
            return lambda value: seen.__setitem__(name, f(value)) or seen[name]

        patch[where] = keep("x", before)
        patch[f"blocks.{i}.mlp.hook_pre"] = keep("post", gates)
        patch[f"blocks.{i}.hook_mlp_out"] = lambda _: [
            ffn_map(*self.ffns[i], x, post, self.ns) for x, post in zip(seen["x"], seen["post"])]


def ffn_map(up, down, x, post, ns):
    """mlp_out_t of one row, D relu(U x + b_U) + b_D, as sum_s (sum_u D_tu lam_u U_us) x_s +
    sum_u D_tu (lam_u b_u + [0, w_u]) + b_t, relu(g_u) in lam_u g_u + [0, w_u] (``post``'s
    slope and gap): the same number in exact arithmetic, each x_s's interval entering once."""
    out = []
    for weights, bias in down:
        coef, terms = {}, []
        for u, w in weights.items():
            (num, den), gap = post[u].slope, post[u].gap
            if num:
                wl = w.times(num, den)
                for s, a in up[u][0].items():
                    coef[s] = coef[s] + wl * a if s in coef else wl * a
                if up[u][1] is not None:
                    terms.append(wl * up[u][1])
            if gap:
                terms.append(w * Form(ns, 0, None, 0, gap))
        terms = [c * x[s] for s, c in sorted(coef.items())] + terms
        out.append(add_up(terms + ([bias] if bias is not None else []), ns.zero))
    return out


def gap(rows, y, t, u, zero):
    """logit_t - logit_u at the final row y, formed as sum_s (w_ts - w_us) y_s + b_t - b_u
    (the interval of y_s once, not once per logit)."""
    (wt, bt), (wu, bu) = rows[t], rows[u]
    terms = [(wt.get(s, zero) - wu.get(s, zero)) * y[s] for s in sorted(set(wt) | set(wu))]
    return add_up(terms + [b for b in (bt, None if bu is None else -bu) if b is not None],
                  zero)


def final_point(compiled):
    """The readout's input: ln_final's output, else the last block's output."""
    if compiled.ln_final is not None:
        return "ln_final.hook_normalized"
    return f"blocks.{len(compiled.blocks) - 1}.hook_resid_post"


# ---- the certificate ----------------------------------------------------------------------

def check(cert, progress=None, jobs=1):
    """A one-line verdict if ``cert`` proves its model adds every pair; Invalid otherwise
    (the same verdict and message for every number of processes ``jobs``: ``walk``)."""
    return verdict(cert, FORMAT, Leaves, "", progress, jobs)


def verdict(cert, kind, leaves, what, progress, jobs):
    """The verdict on a certificate of format ``kind`` whose leaves ``leaves(model)``
    re-decides (``what``: the program, where not the real-number model)."""
    model, n = model_of(cert, kind)
    done = walk(leaves(model), cert, progress, jobs)
    return (f"certificate valid: {named(cert.get('name', ''), cert['model'])}{what}, N = {n}: "
            f"every pair is added right ({done} leaves re-decided)")


def model_of(cert, kind):
    """(the model of a certificate of format ``kind``, version 1, its N), checked against its
    "digits"."""
    if not isinstance(cert, dict) or cert.get("format") != kind or cert.get("version") != 1:
        raise Malformed(f"format: not a {kind} of version 1")
    if not isinstance(cert.get("model"), str):
        raise Malformed("model: not the text of a model file")
    try:
        model = loads(cert["model"])
    except ValueError as why:
        raise Malformed(f"model: {why}") from None
    n = model.prompt.digits if model.prompt is not None else None
    if cert.get("digits") != n:
        raise Malformed(f"digits: not the model's N ({n})")
    return model, n


def walk(leaves, cert, progress=None, jobs=1, tally=None):
    """The number of leaves re-decided by ``leaves`` over the trees, one per answer token,
    each rebuilt from the root (``_node``, ``tally`` a count's); Invalid at the first, in the
    trees' order, that does not hold, whatever the processes ``jobs`` (leaf i by process
    i mod jobs, ``parallel.each_share``)."""
    n = leaves.n
    short = short_answer(leaves.model)
    if short:
        raise Invalid(f"the model cannot add every pair: {short}")
    trees = cert.get("positions")
    if not isinstance(trees, list) or len(trees) != len(leaves.targets):
        raise Invalid(f"positions: {len(leaves.targets)} trees expected, one per answer token")
    found, broken = [], None
    try:
        for k, tree in enumerate(trees):
            _node(k, tree, root(n), n, found, 0, tally)
    except Invalid as why:  # raised once the leaves before it are re-decided
        broken = why
    results = zip(found, each_share(leaves.failure, found, jobs))
    for done, (leaf, failure) in enumerate(results, 1):
        if failure is not None:
            raise Invalid(failure)
        if progress:
            progress(done, None, f" leaves, position {leaf[0]}")
    if broken is not None:
        raise broken
    return len(found)


def _node(k, node, region, n, found, depth=0, tally=None):
    """Appends (k, region) to ``found`` for each leaf of ``node`` to re-decide, in order;
    Invalid at an unknown split or a leaf not ``empty`` (0 pairs), ``pair`` (1) or ``bound``;
    with ``tally`` (a count), a ``wrong`` or ``open`` leaf goes there as (k, leaf, its size),
    a ``wrong`` one also to ``found`` as (k, region, True)."""
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        raise Invalid("a tree node that is not an object (or a tree too deep)")
    if "split" in node:
        kids = node.get("children")
        parts = cut(region, n, node["split"])
        if not isinstance(kids, list) or len(kids) != len(parts):
            raise Invalid(f"split {node['split']!r}: {len(parts)} children expected")
        for kid, part in zip(kids, parts):
            _node(k, kid, part, n, found, depth + 1, tally)
        return
    leaf = node.get("leaf")
    size = count(region, n)
    if tally is not None and leaf in ("wrong", "open"):
        tally.append((k, leaf, size))
        if leaf == "wrong":
            found.append((k, region, True))
        return
    if leaf == "empty":
        if size:
            raise Invalid(f"an 'empty' leaf of {size} pairs")
        return
    if leaf not in ("bound", "pair"):
        raise Invalid(f"a leaf {leaf!r} at position {k}: the certificate proves nothing")
    if leaf == "pair" and size != 1:
        raise Invalid(f"a 'pair' leaf of {size} pairs")
    found.append((k, region))


# ---- a count: certified bounds on the pairs added wrong -----------------------------------

COUNT_FORMAT = "tinyadder-count-certificate"


def count_check(cert, jobs=1):
    """A one-line verdict if ``cert``'s trees derive its bounds [low, high] on the pairs its
    model adds wrong; Invalid otherwise. Per answer position k the tree partitions every
    pair (``walk``); its ``bound`` and ``pair`` leaves are re-decided right, its ``wrong``
    leaves wrong at every pair (``Leaves.holds``), W_k pairs, and its ``open`` leaves hold
    O_k. A pair is added wrong exactly when its first wrong token is wrong after a right
    prefix, so  low = max_k W_k  and  high = min(10^(2N), sum_k (W_k + O_k))."""
    model, n = model_of(cert, COUNT_FORMAT)
    leaves, tally = Leaves(model), []
    done = walk(leaves, cert, None, jobs, tally)
    w, o = [0] * len(leaves.targets), [0] * len(leaves.targets)
    for k, leaf, size in tally:
        (w if leaf == "wrong" else o)[k] += size
    low, high = max(w), min(10 ** (2 * n), sum(w) + sum(o))
    if cert.get("count") != [low, high]:
        raise Invalid(f"count: the trees derive [{low}, {high}], not {cert.get('count')!r}")
    return (f"certificate valid: {named(cert.get('name', ''), cert['model'])}, N = {n}: "
            f"fails on between {low:,} and {high:,} of 10^{2 * n} pairs "
            f"({done} leaves re-decided)")
