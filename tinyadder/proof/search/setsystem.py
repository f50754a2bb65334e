"""A number system whose values are sets: affine forms in the digits plus an interval, over a
:class:`~.sets.Region` of operand pairs (the generic prover's, ``generic``).

A value is a :class:`SetValue`  k + sum_v c_v x_v + [lo, hi]  on the variables of ``sets``:
the digits a_j, b_j and the carries c_j of a pair, and the indicators [a_j = d], [b_j = d],
[s_j = d] (1 when the digit is d, else 0), with which any function of one digit is an exact
affine form. Every number in it (k, each c_v, lo, hi) is an integer times 2^-SCALE, one binary
scale shared by every value, so the arithmetic is on integers and takes no gcd. It stands for
a function of the pair: at every pair of the region the real-number model's value (every
exponential, root, sine exact) and the fraction system's value lie in F(x) + [lo, hi], F(x)
the form at the pair. The rules keep that true:

- sums are exact, and x - x is 0 (the same value at every pair, however wide its
  interval); a multiple r c of a number c that is not on the grid is rounded down to
  it, and the rounding, less than one step of the grid times the variable's greatest value
  (9 for a digit, 1 for a carry or an indicator), is added to hi;
- a product of two values f, g keeps the linear terms m_g f + m_f g - m_f m_g, m the middle
  of a value's box, and bounds the rest, (f - m_f)(g - m_g), by the product of its factors'
  ranges over the region's box (a square's rest by the square of its factor's range, never
  below 0);
- a quotient multiplies by the reciprocal of the divisor's range (refused, by :class:`Split`,
  when that range holds 0);
- e^x, sqrt, erf (increasing) take the range of x over the box and enclose the function at
  its ends; sin and cos enclose the function over the range. Enclosures are
  ``numbers.IntervalSystem``'s at the fraction system's digits, so they hold its roundings
  too (docs/exactness.md), and their ends are rounded outward to the grid; where it is
  narrower, the mean-value form alpha x + f(m) - alpha m + [-rad, rad] (alpha the middle of
  f's slope over the range, m the range's middle) keeps x's terms, unless its box leaves the
  strict sign of the enclosure (``setcheck.keeps_sign``);
- a value that depends on one digit only (one *column*: a_j, b_j, s_j or a carry c_j, its
  linear term and its indicators) is a table of at most 10 numbers: a product, a quotient or
  a function of such values is taken digit by digit, each entry enclosed on its own, and the
  result is the indicator form of the table (an affine form in a carry) plus the widest
  entry's interval. Nothing of the digit is lost.

The box of a value groups each column's terms: alpha x + sum_d w_d [x = d] lies between the
least and the greatest of alpha d + w_d over the digits d the region allows.

A ReLU is relaxed rather than decided (``relu``: the prover patches every ReLU block's
``hook_pre`` so that each gate arrives as relu(g) itself): g where g >= 0 over the region, 0
where g <= 0, else its chord. A comparison met otherwise (``g > 0``) is decided when the
sign, g >= 0 or g <= 0, holds at every pair of the region (both ReLU branches agree at 0): first
over the box, then exactly by the region's walk over the columns (``Region.bound``); otherwise
it raises :class:`Split`, which carries the form, so that the prover splits the region there.

The public methods (``box``, ``interval``, ``variable``, ``const``, ``exact_range``,
``scaled``) take and give rationals; a value's own fields are on the grid.
"""

from fractions import Fraction

from ...numbers import for_model, number_system
from ...numbers.enclosures import IntervalSystem
from ...numbers.protocol import OverSets, Undecided
from ..kernel.setcheck import (FOLD_BITS, ONE, SCALE, _col, _floor_of,
                               _floor_rational, _inverse, _over, _times, _top, chord,
                               inverse_slope, keeps_sign, mean_value, middles, root_slope,
                               scaled)

MAX_ENDS = 1 << 16   # enclosures remembered (``_grid_ends``)
# the grid's rounding rules are the kernel's (``kernel.setcheck``): one rule, one place
down = _floor_rational


def up(x):
    """The grid's integer at or above the rational x (times 2^SCALE)."""
    return -_floor_rational(-Fraction(x))


def grid_floor(x):
    """The grid's integer at or below a Decimal enclosure end (``setcheck._floor_of``);
    Split for an end no decision can use."""
    return _floor_of(x, lambda what: Split(None, what))


def grid_ceil(x):
    """The grid's integer at or above a Decimal enclosure end (``grid_floor``)."""
    return -grid_floor(-x)


def rational(n):
    """The rational of a grid integer."""
    return Fraction(n, ONE)


class Split(Undecided):
    """A sign that the region does not decide: ``value`` is the undecided form."""

    def __init__(self, value, what):
        super().__init__(what)
        self.value = value


column = _col  # the column a variable belongs to: ("a", j), ("b", j), ("s", j) or ("c", j)


class SetValue:
    """k + sum_v coefs[v] x_v + [lo, hi], every number times 2^-SCALE (see the module
    docstring)."""

    __slots__ = ("system", "k", "coefs", "lo", "hi")

    def __init__(self, system, k, coefs=None, lo=0, hi=0):
        self.system, self.k, self.coefs, self.lo, self.hi = system, k, coefs or {}, lo, hi

    def __repr__(self):
        terms = " + ".join(f"{rational(c)}*{'_'.join(map(str, v))}"
                           for v, c in sorted(self.coefs.items()))
        return (f"SetValue({rational(self.k)}{' + ' + terms if terms else ''} + "
                f"[{rational(self.lo)}, {rational(self.hi)}])")

    @property
    def point(self):
        return not self.coefs and not self.lo and not self.hi

    def _lift(self, x):
        return x if isinstance(x, SetValue) else self.system.const(x)

    def __add__(self, other):
        o = self._lift(other)
        coefs = dict(self.coefs)
        for v, c in o.coefs.items():
            c += coefs.get(v, 0)
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
        """self - other; x - x is 0 exactly: one value stands for one function of the pair,
        whatever its interval (softmax's s - m where m is s)."""
        if other is self:
            return SetValue(self.system, 0)
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) + (-self)

    def scaled(self, r):
        """r times this value, r rational."""
        r = Fraction(r)
        return self.times(r.numerator, r.denominator)

    def times(self, num, den):
        """num/den times this value (integers, den > 0; ``setcheck.scaled``)."""
        if not num:
            return SetValue(self.system, 0)
        return SetValue(self.system, *scaled(self.k, self.coefs, self.lo, self.hi, num, den))

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
        # f g = m_f g + m_g f + (f - m_f)(g - m_g) - m_f m_g (``setcheck.middles``)
        m_f, m_g, rest = middles(ns.grid_box(self), None if o is self else ns.grid_box(o))
        lin = self.times(m_g, ONE) + o.times(m_f, ONE)
        rest = SetValue(ns, rest[0], {}, *rest[1:])
        return _non_negative(lin + rest) if o is self else lin + rest

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self._lift(other)
        if o.point:
            if not o.k:
                raise ZeroDivisionError("division by 0")
            return self.times(ONE, o.k) if o.k > 0 else self.times(-ONE, -o.k)
        ns = self.system
        table = ns.tabulate2(self, o, _over)
        if table is not None:
            return table
        return self * ns.reciprocal(o)

    def __rtruediv__(self, other):
        return self._lift(other) / self

    def __gt__(self, other):
        return self.system.positive(self - self._lift(other))

    def __lt__(self, other):
        return self.system.positive(self._lift(other) - self)


def _column_values(terms, j, steps, digits):
    """The value of column j's ``terms`` (a_j, b_j, their and s_j's indicators, the carry
    out c_(j+1)) at each of the column's steps; at each of its digit pairs ``digits`` (a_j,
    b_j) where no term reads the sum's digit or the carry, which take the same values."""
    get = terms.get
    alpha, beta, gamma = get(("a", j), 0), get(("b", j), 0), get(("c", j + 1), 0)
    ta = [get(("a", j, d), 0) for d in range(10)]
    tb = [get(("b", j, d), 0) for d in range(10)]
    ts = [get(("s", j, d), 0) for d in range(10)]
    if not gamma and not any(ts):
        return [alpha * x + beta * y + ta[x] + tb[y] for x, y in digits]
    return [alpha * x + beta * y + gamma * out + ta[x] + tb[y] + ts[(c + x + y) % 10]
            for c, x, y, out in steps]


class Relu(SetValue):
    """relu(g) as a value (``SetSystem.relu``); its ``> 0`` is True, so that the pass's
    ``g if g > 0 else 0`` and ``g u if g > 0 else 0`` take it whole. ``slope`` (num, den)
    and ``gap`` (a grid integer): relu(g) lies in (num/den) g + [0, gap] over the region."""

    __slots__ = ("slope", "gap")

    def __init__(self, system, k, coefs=None, lo=0, hi=0, slope=(1, 1), gap=0):
        super().__init__(system, k, coefs, lo, hi)
        self.slope, self.gap = slope, gap

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
        self.zero = SetValue(self, 0)
        self.one = SetValue(self, ONE)
        self.top = _Top()
        self.region = None
        self._allowed, self._joint, self._digit_pairs = None, {}, {}   # set by ``at``
        self._unit = _Units({}, {})
        self.relaxed = []   # the gates ``relu`` relaxed since ``at``
        self._recent = {}   # (what, id(x)) -> (x, result): see ``_recall``
        self._ends = {}     # (f, lo, hi) -> f's enclosure's grid ends: see ``_grid_ends``

    def at(self, region):
        """Decide comparisons over ``region`` from now on. Its box: for each column, the
        digits a_j, b_j, s_j and the carries that one of the column's steps at a pair of the
        region has (``Region.column_steps``)."""
        self.region = region
        allowed = {}
        for j in range(region.digits):
            steps = region.column_steps(j)
            allowed[("a", j)] = sorted({x for _, x, _, _ in steps}) or [0]
            allowed[("b", j)] = sorted({y for _, _, y, _ in steps}) or [0]
            allowed[("s", j)] = sorted({(c + x + y) % 10 for c, x, y, _ in steps}) or [0]
            allowed[("c", j + 1)] = sorted({out for _, _, _, out in steps}) or [0]
        self._allowed = allowed
        # a column with fewer than all its steps (2 x 10 x 10; column 0's carry in is 0: 100)
        # ties a_j to b_j: its terms are bounded together, over its steps
        self._joint = {j: region.column_steps(j) for j in range(region.digits)
                       if len(region.column_steps(j)) < (200 if j else 100)}
        self._digit_pairs = {j: sorted({(x, y) for _, x, y, _ in steps})
                             for j, steps in self._joint.items()}
        self._unit = _Units(self._joint, allowed)
        self.relaxed = []
        self._recent = {}
        return self

    def describe(self):
        return (f"sets (affine forms in the digits and intervals on a 2^-{SCALE} grid; "
                f"{self.digits}-digit enclosures)")

    # ---- building values ------------------------------------------------------------------
    def variable(self, v, coef=1, const=0):
        """const + coef v (rationals; rounded outward to the grid)."""
        return self.const(const) + SetValue(self, 0, {v: ONE}).scaled(coef)

    def interval(self, lo, hi):
        """The constant interval [lo, hi] (rationals)."""
        return self.grid_interval(down(lo), up(hi))

    def grid_interval(self, lo, hi):
        """The constant interval [lo, hi] (grid integers)."""
        return SetValue(self, lo, {}, 0, hi - lo)

    def indicators(self, col, entries):
        """sum_d value_d [x = d] over ``entries`` (d, SetValue without variables) of column
        ``col``: exact while x is one of those digits."""
        return self._table(col, [(d, e.k + e.lo, e.k + e.hi) for d, e in entries])

    # ---- ranges ---------------------------------------------------------------------------
    def _recall(self, what, x, compute):
        """compute(x), remembered for the last few x over this region: a softmax divides
        every e_j by one normaliser, whose box, fold and reciprocal are then taken once (x is
        kept with its result, so its id names it while remembered)."""
        key = (what, id(x))
        hit = self._recent.get(key)
        if hit is not None and hit[0] is x:
            return hit[1]
        if len(self._recent) >= 64:
            self._recent.clear()
        result = compute(x)
        self._recent[key] = (x, result)
        return result

    def grid_box(self, x, minus=0):
        """(least, greatest) of x - minus over the region's box, grid integers: each variable
        over its digits, a column's indicators together, and the terms of a constrained
        column (a_j, b_j, s_j and the carry out of it) together over its steps."""
        if not x.coefs:
            return x.k + x.lo - minus, x.k + x.hi - minus
        lo, hi = self._recall("box", x, self._box)
        return lo - minus, hi - minus

    def _box(self, x):
        coefs, unit_box = x.coefs, self._unit_box
        lo, hi = x.k + x.lo, x.k + x.hi
        for unit in {self._unit[v] for v in coefs}:
            least, most = unit_box(unit, coefs)
            lo, hi = lo + least, hi + most
        return lo, hi

    def _unit_box(self, unit, coefs):
        """(least, greatest) of the terms of ``coefs`` in ``unit`` (``_Units``): a
        constrained column's over its steps, else a column's variable and indicators over
        its digits."""
        if unit.__class__ is int:
            values = _column_values(coefs, unit, self._joint[unit], self._digit_pairs[unit])
            return (min(values), max(values)) if values else (0, 0)
        lin, get = coefs.get(unit, 0), coefs.get
        values = [lin * d + get(key, 0) for d, key in self._unit.digits(unit)]
        return min(values), max(values)

    def box(self, x, minus=0):
        """(least, greatest) of x - minus over the region's box (a superset of its pairs),
        rationals."""
        lo, hi = self.grid_box(x, down(minus) if minus else 0)
        return rational(lo), rational(hi)

    def _entry(self, x, col, d, lin):
        """The terms of column ``col`` at digit d: lin d + the indicator's coefficient."""
        return lin * d + x.coefs.get(col + (d,), 0)

    def grid_range(self, x):
        """(least, greatest, pair at the least) of x over the region's pairs, grid integers
        (None for an empty region)."""
        found = self.region.bound(x.coefs, x.k)
        if found is None:
            return None
        low, high, at_low, _ = found
        return low + x.lo, high + x.hi, at_low

    def exact_range(self, x):
        """(least, greatest, pair at the least) of x's form over the region's pairs, plus its
        interval, rationals (None for an empty region)."""
        found = self.grid_range(x)
        return None if found is None else (rational(found[0]), rational(found[1]), found[2])

    def positive(self, x):
        """``x > 0`` as the pass's ReLUs ask it (``g if g > 0 else 0``, ``g u if g > 0 else
        0``, whose branches agree at g = 0): True when x >= 0 at every pair of the region,
        False when x <= 0 at every pair."""
        lo, hi = self.grid_box(x)
        if lo >= 0:
            return True
        if hi <= 0:
            return False
        found = self.grid_range(x)
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
        chord-like  lam g + [0, w]  with l < 0 < u the range of g, lam in [0, 1] a multiple
        of 2^-CHORD_BITS near u / (u - l) and w >= max(-lam l, (1 - lam) u): relu(g) - lam g
        is -lam g on [l, 0] and (1 - lam) g on [0, u] (the value's ``slope`` lam, ``gap`` w; 1
        and 0, or 0 and 0, where the sign is decided). The undecided gates are listed in
        ``relaxed``."""
        lo, hi = self.grid_box(g)
        if lo < 0 < hi:
            found = self.grid_range(g)
            lo, hi = found[:2] if found is not None else (0, 0)
        if lo >= 0:
            return Relu(self, g.k, g.coefs, g.lo, g.hi)
        if hi <= 0:
            return Relu(self, 0, slope=(0, 1))
        self.relaxed.append(g)
        lam, unit, w = chord(lo, hi)
        line = g.times(lam, unit)
        return Relu(self, line.k, line.coefs, line.lo, line.hi + w, (lam, unit), w)

    # ---- values of one column, digit by digit ---------------------------------------------
    def column_of(self, *values):
        """The one column every variable of ``values`` belongs to, or None (more than one,
        or none)."""
        found = None
        for x in values:
            for v in x.coefs:
                col = column(v)
                if found is None:
                    found = col
                elif col != found:
                    return None
        return found

    def entries(self, x, col):
        """[(d, least, greatest)]: x's range at each digit d of column ``col`` the region
        allows (grid integers)."""
        lin = x.coefs.get(col, 0)
        return [(d, x.k + self._entry(x, col, d, lin) + x.lo,
                 x.k + self._entry(x, col, d, lin) + x.hi) for d in self._allowed[col]]

    def _table(self, col, table):
        """The value that is in [lo_d, hi_d] at digit d of column ``col`` (``table``: (d, lo_d,
        hi_d)): the indicator form of the lo_d (affine in a carry) plus [0, the widest]."""
        width = max(h - lo for _, lo, h in table)
        if len(table) == 1:
            return SetValue(self, table[0][1], {}, 0, width)
        base = table[0][1]
        if col[0] == "c":   # two digits, 0 and 1: a + (b - a) c
            return SetValue(self, base, {col: table[1][1] - base}, 0, width)
        coefs = {col + (d,): lo - base for d, lo, _ in table[1:] if lo != base}
        return SetValue(self, base, coefs, 0, width)

    def near_column(self, x):
        """(column, x'): x' holds x's terms of the one column whose terms vary most, the rest
        of x folded into its interval, where that rest varies less than 2^-FOLD_BITS of the
        column's part (attention's leaks from other positions, say); else (None, x). x'
        holds every value x does, so a function of x' digit by digit holds f(x)."""
        return self._recall("fold", x, self._near_column)

    def _near_column(self, x):
        parts = {}
        for v, c in x.coefs.items():
            parts.setdefault(v if len(v) == 2 else v[:2], {})[v] = c
        if len(parts) < 2:
            return (next(iter(parts)) if parts else None), x
        widths = {col: self._spread(col, terms) for col, terms in parts.items()}
        col = max(widths, key=widths.get)
        lo, hi = self._box(SetValue(self, 0, {v: c for part, terms in parts.items()
                                              if part != col for v, c in terms.items()}))
        if (hi - lo) << FOLD_BITS > widths[col]:
            return None, x
        return col, SetValue(self, x.k, parts[col], x.lo + lo, x.hi + hi)

    def _spread(self, col, terms):
        """max - min over the region's box of ``terms``, all of one column ``col`` (its
        variable and indicators): ``grid_box``'s width, over the column's digits alone, since
        a constrained column's steps take every digit the box allows (``at``)."""
        lin = terms.get(col, 0)
        values = [lin * d + terms.get(col + (d,), 0) for d in self._allowed[col]]
        return max(values) - min(values)

    def tabulate2(self, x, y, op):
        """op(x, y) digit by digit when x and y depend on one column only, up to terms
        negligible next to it (``near_column``; else None); ``op`` takes the two ranges'
        ends and gives the result's (None: not defined)."""
        col = self.column_of(x, y)
        if col is None:
            (cx, x), (cy, y) = self.near_column(x), self.near_column(y)
            col = cx if cx == cy or y.point else cy if x.point else None
            if col is None:
                return None
        table = []
        for (d, a, b), (_, c, e) in zip(self.entries(x, col), self.entries(y, col)):
            ends = op(a, b, c, e)
            if ends is None:
                return None
            table.append((d,) + ends)
        return self._table(col, table)

    def _function(self, f, x, slope=None):
        """f over x: digit by digit when x depends on one column; else over x's box, or, with
        ``slope`` (the ends of f' over an interval: grid integers), by the mean value
        f(x) = f(m) + f'(t)(x - m) for m the box's middle, whichever is narrower (f: an
        IntervalSystem function)."""
        col, x = self.near_column(x)
        if col is not None:
            return self._table(col, [(d,) + self._grid_ends(f, a, b)
                                     for d, a, b in self.entries(x, col)])
        lo, hi = self.grid_box(x)
        whole = self._enclosed(f, lo, hi)
        if slope is None or lo == hi or not x.coefs:
            return whole
        return self._mean_value(x, lo, hi, whole, slope(lo, hi),
                                lambda m: self._grid_ends(f, m, m))

    def _mean_value(self, x, lo, hi, whole, slope, at):
        """The narrower of ``whole`` and the mean-value form  alpha x + f(m) - alpha m +
        [-rad, rad]  of a function f whose slope lies in ``slope`` over x's box [lo, hi] and
        whose value at a point m lies in ``at(m)`` (grid integers), m the box's middle;
        ``whole`` where the form's box reaches 0 or past it and ``whole`` does not (``keeps_sign``)."""
        parts = mean_value(lo, hi, slope, whole.hi - whole.lo, at)
        if parts is None:
            return whole
        alpha, k, low, high = parts
        form = x.times(alpha, ONE) + SetValue(self, k, {}, low, high)
        return form if keeps_sign(self.grid_box(form), (whole.k + whole.lo, whole.k + whole.hi)) \
            else whole

    def _grid_ends(self, f, lo, hi):
        """f's enclosure over [lo, hi] (grid integers), its ends rounded outward to the grid;
        remembered across regions, since it is a function of f, lo and hi alone and the
        same entries recur in every region (the prompt's rows, a norm's digit tables)."""
        key = (f, lo, hi)
        found = self._ends.get(key)
        if found is None:
            iv = f(self.enclose.value(self.enclose.point(rational(lo)).lo,
                                      self.enclose.point(rational(hi)).hi))
            if len(self._ends) >= MAX_ENDS:
                self._ends.clear()
            found = self._ends[key] = grid_floor(iv.lo), grid_ceil(iv.hi)
        return found

    def _enclosed(self, f, lo, hi):
        return self.grid_interval(*self._grid_ends(f, lo, hi))

    def _exp_slope(self, lo, hi):
        return self._grid_ends(self.enclose.exp, lo, hi)

    def _sqrt_slope(self, lo, hi):
        """1 / (2 sqrt x) over [lo, hi] (lo > 0)."""
        r_lo, r_hi = self._grid_ends(self.enclose.sqrt, lo, hi)
        if r_lo <= 0:
            raise Split(None, "a root near 0")
        return root_slope(r_lo, r_hi)

    def _sin_slope(self, lo, hi):
        return self._grid_ends(self.enclose.cos, lo, hi)

    def _cos_slope(self, lo, hi):
        a, b = self._grid_ends(self.enclose.sin, lo, hi)
        return -b, -a

    def reciprocal(self, x):
        """1 / x over the box (0 not in it), by the mean value where that is narrower:
        the slope -1/t^2 lies between -1/lo^2 and -1/hi^2 (same signs)."""
        return self._recall("1/x", x, self._inverse)

    def _inverse(self, x):
        lo, hi = self.grid_box(x)
        if lo <= 0 <= hi:
            raise Split(x, "a division by a value that may be 0")
        r_lo, r_hi = _inverse(lo, hi)
        whole = self.grid_interval(r_lo, r_hi)
        if not x.coefs or lo == hi:
            return whole
        return self._mean_value(x, lo, hi, whole, inverse_slope(lo, hi),
                                lambda m: _inverse(m, m))

    # ---- constants and functions ----------------------------------------------------------
    def const(self, c):
        if isinstance(c, (int, Fraction)):
            return self.interval(c, c)
        iv = self.enclose.const(c)
        return self.grid_interval(grid_floor(iv.lo), grid_ceil(iv.hi))

    slope = const

    def exp(self, x):
        if x.point and not x.k:
            return self.one
        return self._function(self.enclose.exp, x, self._exp_slope)

    def sqrt(self, x):
        return self._function(self.enclose.sqrt, x, self._sqrt_slope)

    def erf(self, x):
        return self._function(self.enclose.erf, x)

    def sin(self, x):
        return self._function(self.enclose.sin, x, self._sin_slope)

    def cos(self, x):
        return self._function(self.enclose.cos, x, self._cos_slope)

    def largest(self, values):
        """The value whose least value over the box is the greatest, as a form: a softmax's
        pattern is the same for any m subtracted at a pair, a function of the pair included,
        and where that value is the largest score at every pair, s - m is exactly 0 for it and
        below 0 for the others, so no e^(s - m) is taken of a wide positive range."""
        return max(values, key=lambda v: self.grid_box(v)[0])


class _Top(dict):
    """The greatest value of each variable (``setcheck._top``), remembered."""

    def __missing__(self, v):
        top = self[v] = _top(v)
        return top


class _Units(dict):
    """The unit of the box each variable's term is bounded in, over one region: a constrained
    column j (an int: a_j, b_j, s_j's indicators and the carry out c_(j+1) together, over the
    column's steps), else the variable's column (its digit and indicators, over its digits)."""

    def __init__(self, joint, allowed):
        super().__init__()
        self.joint, self.allowed, self._digits = joint, allowed, {}

    def __missing__(self, v):
        j = v[1] - 1 if v[0] == "c" else v[1]
        unit = self[v] = j if j in self.joint else column(v)
        return unit

    def digits(self, col):
        """[(d, the indicator of column ``col`` at d)] for each digit d the region allows."""
        found = self._digits.get(col)
        if found is None:
            found = self._digits[col] = [(d, col + (d,)) for d in self.allowed[col]]
        return found


def _non_negative(square):
    """A square, never below 0: where its form's box reaches below 0 (the affine part 2 m f -
    m^2 can), the interval [0, its box's upper end] instead, so that a sum of squares (an
    RMSNorm's mean) is enclosed at or above 0 and its sqrt has a bound."""
    low, high = square.system.grid_box(square)
    return square if low >= 0 else SetValue(square.system, 0, {}, 0, high)
