"""The census: the exact number of pairs (a, b), of all 10^(2N), that the model adds wrongly.

The failing set is a union of windows of the sum s = a + b (``windows``). ``Census.count_union``
adds, window by window, the pairs in the window and in none of the windows before it (whole
windows first). Both kinds are counted over the digit columns of a and b, from the most
significant down, the state being the carry the lower columns must deliver and each window's
progress along s's digits (digit sets, then r's digits against r_lo and r_hi):

- a whole window depends on s alone: the count is memoised on that state, and a settled
  subtree counts its completions in closed form (M(M - 1)/2 or M(M + 1)/2 pairs of numbers
  below M = 10^c, as the carry out is 1 or 0).
- a boundary window also needs its offset o(x) past a threshold, and so does every boundary
  window it must be told apart from. o(x) is a sum over columns of alpha_c a_c + beta_c b_c +
  gamma_c s_c, kept exactly (integers over one denominator per formula) as a partial sum v
  from the top. A subtree is settled when v plus the least (or the most) the lower columns can
  add is past the threshold; otherwise its count is a non-decreasing step function of v, so a
  count computed at v holds on the whole interval of v around it that every branch's count
  holds on (the intersection of the branches' intervals, shifted; a settled branch holds on a
  half-line). Counts are memoised on (column, carry, the windows' progress) with these
  intervals: a later v in a known interval is answered at once. Because the offset's columns
  are nearly place values, few intervals cover every v that occurs, and the cost grows
  polynomially in N.

The real-number model: a pair is *uncertain* when moving the thresholds by the formulas'
guards (their rounding bounds) could change whether it fails. The census counts the failing
pairs with every threshold moved so as to count the most, and so as to count the least; when
the two agree, no pair is uncertain and the count holds for the real-number model as well as
for the fraction model that ``tinyadder.run`` computes.
"""

from dataclasses import dataclass
from fractions import Fraction
from bisect import bisect_right
from functools import partial
from math import floor, gcd
from typing import Tuple

from .formulas import digit_formulas, layout
from .parallel import run_shares, shares
from .windows import compatible, windows

ADDERBOARD_RANDOM = 10_000


@dataclass(frozen=True)
class Offset:
    """o(x) of one formula by columns: per column c, (alpha, beta, gamma) for a_c, b_c, s_c."""

    const: Fraction
    columns: Tuple[Tuple[Fraction, Fraction, Fraction], ...]   # index c = 0..N
    guard: Fraction

    def at(self, a, b, s):
        """o(x) for the pair (a, b), the emitted digits being those of s."""
        x = self.const
        for c, (al, be, ga) in enumerate(self.columns):
            x += al * ((a // 10 ** c) % 10) + be * ((b // 10 ** c) % 10)
            if ga:
                x += ga * (s // 10 ** c if c == len(self.columns) - 1 else (s // 10 ** c) % 10)
        return x


def offset_columns(formula, lay):
    """The formula's offset o(x) regrouped by digit column (a's, b's and s's digits)."""
    n = lay.digits
    cols = [[Fraction(0)] * 3 for _ in range(n + 1)]
    for v, k in formula.offset.coefs().items():
        if v in lay.a:
            cols[n - 1 - lay.a.index(v)][0] += k
        elif v in lay.b:
            cols[n - 1 - lay.b.index(v)][1] += k
        else:  # an emitted digit: the sum's digit of its place
            cols[n - lay.answer.index(v)][2] += k
    return Offset(formula.offset.const, tuple(tuple(c) for c in cols), formula.guard)


def in_failing_set(wins, offsets, n, a, b):
    """Whether the pair lies in some window (what the census says about one pair)."""
    s = a + b
    for w in wins:
        if w.holds_for(s, n):
            if w.cond is None:
                return True
            op, thr = w.cond
            x = offsets[w.t].at(a, b, s)
            if (x > thr if op == ">" else x <= thr):
                return True
    return False


def free_pairs(columns, carry):
    """Pairs of numbers of ``columns`` digits whose sum carries ``carry`` out of them."""
    M = 10 ** columns
    return M * (M - 1) // 2 if carry else M * (M + 1) // 2


# the digit pairs of one column: by carry in and carry out, (a_c, b_c, s_c)
_PAIRS = {(cin, cout): [(a, b, (a + b + cin) % 10) for a in range(10) for b in range(10)
                        if (a + b + cin) // 10 == cout] for cin in (0, 1) for cout in (0, 1)}
# the same by s_c: {(cin, cout): {s_c: [(a_c, b_c), ...]}}, and how many
_BY_DIGIT = {key: {} for key in _PAIRS}
for _key, _pairs in _PAIRS.items():
    for _a, _b, _s in _pairs:
        _BY_DIGIT[_key].setdefault(_s, []).append((_a, _b))
# {(cin, cout): {s_c: how many}}
_SPLIT = {key: {} for key in _PAIRS}
for _key, _pairs in _PAIRS.items():
    for _a, _b, _s in _pairs:
        _SPLIT[_key][_s] = _SPLIT[_key].get(_s, 0) + 1

DEAD, SURE = -1, 4   # window states; 0..3: alive, bit 1 = r still equal to r_lo's digits so
# far, bit 2 = equal to r_hi's
ALIVE = 3


def _step(w, state, c, s):
    """A window's state after s's digit at column c."""
    if state in (DEAD, SURE):
        return state
    p = w.place
    if c > p + 1:
        return state
    if c == p + 1:
        return state if w.above is None or s in w.above else DEAD
    if c == p:
        if s not in w.digits:
            return DEAD
        return SURE if p == 0 else state
    lo_d, hi_d = (w.r_lo // 10 ** c) % 10, (w.r_hi // 10 ** c) % 10
    if state & 1:
        if s < lo_d:
            return DEAD
        if s > lo_d:
            state &= ~1
    if state & 2:
        if s > hi_d:
            return DEAD
        if s < hi_d:
            state &= ~2
    if state == 0 or c == 0:
        return SURE
    return state


class _Scaled:
    """A formula's offset in integers, for one direction: X = sign * D * o(x), D clearing
    every denominator of its coefficients, as a start (the constant and s's top digit) and
    per column c the 10 values of each of a_c, b_c, s_c times their weights; ``least[c + 1]``
    and ``most[c + 1]``: the least and most columns 0..c can add."""

    def __init__(self, offset, sign):
        D = 1
        for q in [offset.const] + [k for col in offset.columns for k in col]:
            D = D * q.denominator // gcd(D, q.denominator)
        self.D, self.sign = D, sign
        scaled = lambda q: sign * (D * q).numerator  # noqa: E731 (an integer: D clears q)
        self.start = (scaled(offset.const), scaled(offset.columns[-1][2]))  # + top * s_N
        self.cols = [tuple(tuple(scaled(k) * d for d in range(10)) for k in col)
                     for col in offset.columns[:-1]]
        self.least, self.most = [0], [0]
        for A, B, G in self.cols:
            adds = [A[a] + B[b] + G[(a + b + cin) % 10] for a in range(10) for b in range(10)
                    for cin in (0, 1)]
            self.least.append(self.least[-1] + min(adds))
            self.most.append(self.most[-1] + max(adds))


class _Threshold:
    """One boundary window's condition on its scaled offset X: the pair is in the window
    iff X >= T. Moving the threshold by the formula's guard makes it T_most (the most pairs
    in) or T_least; between them the real-number model may differ."""

    def __init__(self, scaled, op, thr, guard):
        self.scaled = scaled
        D = scaled.D
        if op == ">":  # o > thr  <=>  D o >= floor(D thr) + 1
            at = lambda q: floor(D * q) + 1  # noqa: E731
            self.T, self.T_most, self.T_least = at(thr), at(thr - guard), at(thr + guard)
        else:          # o <= thr  <=>  -D o >= -floor(D thr)
            at = lambda q: -floor(D * q)  # noqa: E731
            self.T, self.T_most, self.T_least = at(thr), at(thr + guard), at(thr - guard)


class Census:
    """Counts for one model's windows (see the module docstring)."""

    def __init__(self, n, wins, offsets):
        self.n, self.windows, self.offsets = n, wins, offsets
        self._scaled = {}

    def count_union(self, progress=None, jobs=1):
        """(pairs in some window, uncertain pairs): window by window, minus earlier windows.
        When some pair is within a guard of its threshold, the union is counted again with
        every threshold moved by its guard towards failing and the other way: the pairs
        that differ are uncertain. ``jobs``: the windows split over that many processes."""
        total, close = self._union(0, progress, jobs)
        if not close:
            return total, 0
        return total, self._union(+1, progress, jobs)[0] - self._union(-1, progress, jobs)[0]

    def _union(self, widen, progress, jobs):
        """(the union's count, whether some pair is within a guard of a threshold)."""
        parts = shares(list(range(len(self.windows))), jobs)
        counts = run_shares(partial(self._exclusive, widen), parts, jobs, progress)
        return sum(c for part in counts for c, _ in part), any(
            near for part in counts for _, near in part)

    def _exclusive(self, widen, indices):
        """count(...) of each window k in ``indices``: its pairs in no earlier window."""
        return [self.count(self.windows[k], [v for v in self.windows[:k]
                                             if compatible(v, self.windows[k])], widen)
                for k in indices]

    def count(self, w, negs, widen=0):
        """(pairs in window w and in none of ``negs``, whether some pair is within a guard
        of a threshold); the boundary windows' thresholds moved by ``widen`` guards towards
        failing."""
        ws = (w,) + tuple(negs)
        return _Count(ws, self._thresholds(ws, widen)).total(self.n)

    def _thresholds(self, ws, widen):
        """(index in ws, _Threshold) of every boundary window in ws."""
        out = []
        for k, v in enumerate(ws):
            if v.cond is not None:
                op, thr = v.cond
                off = self.offsets[v.t]
                sign = 1 if op == ">" else -1
                if (v.t, sign) not in self._scaled:
                    self._scaled[v.t, sign] = _Scaled(off, sign)
                thr = thr - sign * widen * off.guard
                out.append((k, _Threshold(self._scaled[v.t, sign], op, thr, off.guard)))
        return tuple(out)


class _Count:
    """One count: the pairs in ws[0] and in none of ws[1:], each boundary window's condition
    a _Threshold (see the module docstring), with its memo tables."""

    def __init__(self, ws, thresholds):
        self.ws = ws
        self.owners = [k for k, _ in thresholds]   # threshold j is window owners[j]'s
        self.coord = {k: j for j, k in enumerate(self.owners)}
        self.ths = [th for _, th in thresholds]
        self.patterns, self.known, self.moves = {}, {}, {}

    def total(self, n):
        """(count, whether a pair is within a guard of a threshold)."""
        total, close = 0, False
        for top in (0, 1):  # s's digit at column n: the carry out of the operands
            states = tuple(_step(v, ALIVE, n, top) for v in self.ws)
            if self.ths:
                start = tuple(th.scaled.start[0] + th.scaled.start[1] * top for th in self.ths)
                got, _, near = self.node(n - 1, top, states, start)
                total, close = total + got, close or near
            else:
                total += self.pattern(n - 1, top, states)
        return total, close

    def after(self, c, s, states):
        """Every window's state after s's digit s at column c (memoised)."""
        key = (c, s, states)
        if key not in self.moves:
            self.moves[key] = tuple(_step(v, st, c, s) for v, st in zip(self.ws, states))
        return self.moves[key]

    def pattern(self, c, need, states):
        """Completions of columns c..0 (carry out ``need``) in states[0] and no other, the
        windows' offsets left aside (memoised)."""
        first = states[0]
        if first == DEAD or SURE in states[1:]:
            return 0
        if first == SURE and all(st == DEAD for st in states[1:]):
            return free_pairs(c + 1, need)
        if c < 0:
            return 0
        key = (c, need, states)
        if key not in self.patterns:
            got = 0
            for cin in ((0,) if c == 0 else (0, 1)):
                for s, mult in _SPLIT[cin, need].items():
                    got += mult * self.pattern(c - 1, cin, self.after(c, s, states))
            self.patterns[key] = got
        return self.patterns[key]

    def _settle(self, c, part):
        """Per threshold: True / False once X is past it (or short of it) whatever columns
        c..0 add, else the partial sum; the interval of partial sums where that holds; and
        whether a completed X lies within the guard of T."""
        flags, box, close = list(part), [None] * len(part), False
        for j, (x, th) in enumerate(zip(part, self.ths)):
            if x is True or x is False:
                continue
            least, most = th.scaled.least[c + 1], th.scaled.most[c + 1]
            if x + least >= th.T_least:
                flags[j], box[j] = True, (th.T_least - least, INF)
            elif x + most < th.T_most:
                flags[j], box[j] = False, (-INF, th.T_most - most - 1)
            elif c < 0:  # X = x, within the guard of T
                close = True
                flags[j], box[j] = ((True, (th.T, th.T_least - 1)) if x >= th.T
                                    else (False, (th.T_most, th.T - 1)))
            else:
                box[j] = ANY
        return flags, box, close

    def node(self, c, need, states, part):
        """(count, box, close) for columns c..0: ``part`` per threshold the partial sum of X
        (an int) or True / False once settled; ``box`` per threshold the interval [lo, hi] of
        the partial sum on which count and close are the same (None: settled above)."""
        coord = self.coord
        # a boundary window whose digits cannot occur needs no offset
        part = tuple(False if k and states[k] == DEAD else x
                     for k, x in zip(self.owners, part))
        flags, box, close = self._settle(c, part)
        # a window whose offset fails is no condition; the rest are conditions on s
        if 0 in coord and flags[coord[0]] is False:
            return 0, _only(box, coord[0]), close
        states = tuple(DEAD if k in coord and flags[coord[k]] is False else st
                       for k, st in enumerate(states))
        for k, st in enumerate(states):
            if k and st == SURE and (k not in coord or flags[coord[k]] is True):
                return 0, _only(box, coord.get(k)), close
        if states[0] == DEAD:
            return 0, tuple(None if b is None else ANY for b in box), close
        live = [j for j, x in enumerate(flags) if not (x is True or x is False)]
        if not live:
            return self.pattern(c, need, states), tuple(box), close
        key = (c, need, states, tuple(j in live for j in range(len(flags))))
        known = self.known.setdefault(key, _Boxes())
        hit = known.find([flags[j] for j in live])
        if hit is None:
            hit = (self._one if len(live) == 1 else self._every)(c, need, states, flags, live)
            known.add(*hit)
        inner, got, near = hit
        return got, _merge(box, live, inner), close or near

    def _every(self, c, need, states, flags, live):
        """(box of the live thresholds, count, close) over every digit pair of column c."""
        got, inner, close = 0, [ANY] * len(live), False
        for cin in ((0,) if c == 0 else (0, 1)):
            for a, b, s in _PAIRS[cin, need]:
                adds = [self.ths[j].scaled.cols[c][0][a] + self.ths[j].scaled.cols[c][1][b]
                        + self.ths[j].scaled.cols[c][2][s] for j in live]
                child = list(flags)
                for j, add in zip(live, adds):
                    child[j] = flags[j] + add
                count, cbox, near = self.node(c - 1, cin, self.after(c, s, states),
                                              tuple(child))
                got, close = got + count, close or near
                for m, (j, add) in enumerate(zip(live, adds)):
                    inner[m] = _meet(inner[m], cbox[j], add)
        return tuple(inner), got, close

    def _one(self, c, need, states, flags, live):
        """``_every`` for one live threshold: the pairs of a digit s_c (which leave the same
        states) whose partial sums are past the threshold, or short of it, whatever the
        lower columns add are counted by one of them; only the others recurse."""
        j = live[0]
        th, x = self.ths[j], flags[j]
        A, B, G = th.scaled.cols[c]
        sure = th.T_least - th.scaled.least[c]   # the child is in at x + add >= sure
        never = th.T_most - th.scaled.most[c]    # and out at x + add < never
        got, inner, close = 0, ANY, False
        for cin in ((0,) if c == 0 else (0, 1)):
            for s, pairs in _BY_DIGIT[cin, need].items():
                new = self.after(c, s, states)
                if new[0] == DEAD:
                    continue
                adds = sorted(A[a] + B[b] + G[s] for a, b in pairs)
                ins = [add for add in adds if x + add >= sure]
                outs = [add for add in adds if x + add < never]
                middle = [add for add in adds if never <= x + add < sure]
                for add, times in ([(ins[0], len(ins))] if ins else []) + \
                        ([(outs[-1], len(outs))] if outs else []) + [(m, 1) for m in middle]:
                    child = list(flags)
                    child[j] = x + add
                    count, cbox, near = self.node(c - 1, cin, new, tuple(child))
                    got, close = got + count * times, close or near
                    inner = _meet(inner, cbox[j], add)
        return (inner,), got, close


INF = float("inf")  # an unbounded end of an interval of integers (compared, never added)
ANY = (-INF, INF)


class _Boxes:
    """Counts known on boxes of partial sums (one interval [lo, hi] per live threshold), as
    (box, count, close). With one threshold the boxes are kept sorted by lo and found by
    bisection."""

    def __init__(self):
        self.los, self.entries = [], []

    def find(self, values):
        """The entry of a known box that holds ``values``, or None."""
        if len(values) == 1:
            k = bisect_right(self.los, values[0]) - 1
            if k >= 0 and values[0] <= self.entries[k][0][0][1]:
                return self.entries[k]
            return None
        for entry in self.entries:
            if all(lo <= x <= hi for x, (lo, hi) in zip(values, entry[0])):
                return entry
        return None

    def add(self, box, count, close):
        if len(box) == 1:
            k = bisect_right(self.los, box[0][0])
            self.los.insert(k, box[0][0])
            self.entries.insert(k, (box, count, close))
        else:
            self.entries.append((box, count, close))


def _meet(box, child, add):
    """box intersected with the child's box shifted back by ``add`` (child None: a settled
    threshold, any partial sum)."""
    if child is None:
        return box
    lo, hi = box
    clo, chi = child
    if clo != -INF:
        lo = max(lo, clo - add)
    if chi != INF:
        hi = min(hi, chi - add)
    return lo, hi


def _merge(box, live, inner):
    """The node's box: settled thresholds keep theirs, the live ones take ``inner``."""
    out = list(box)
    for j, b in zip(live, inner):
        out[j] = b
    return tuple(out)


def _only(box, j):
    """A box that bounds only threshold j (a count that is 0 whatever the others)."""
    return tuple(None if b is None else (b if i == j else ANY) for i, b in enumerate(box))


@dataclass
class Result:
    """A census: the windows, the count, and what it means for random tests."""

    digits: int
    windows: list
    offsets: dict
    count: int
    uncertain: int
    formulas: list = ()

    def describe(self, window):
        return window.describe(self.formulas[window.t].bias if self.formulas else 0)

    @property
    def total(self):
        return 10 ** (2 * self.digits)

    @property
    def fraction(self):
        return Fraction(self.count, self.total)

    def hit_probability(self, draws=ADDERBOARD_RANDOM):
        """P(at least one of ``draws`` uniform random pairs fails) = 1 - (1 - f)^draws."""
        return 1 - (1 - self.fraction) ** draws


def census(model, progress=None, formulas=None, before_count=None, counting=None, jobs=1):
    """The exact census of ``model`` (see the module docstring). ``before_count(windows)``
    is called once the windows are known (for a time estimate), ``counting(k, total)``
    as windows are counted; ``jobs``: processes for the symbolic pass and the counting."""
    lay = layout(model)
    formulas = formulas if formulas is not None else digit_formulas(model, progress, jobs)
    wins = windows(formulas)
    offsets = {f.t: offset_columns(f, lay) for f in formulas}
    if before_count:
        before_count(wins)
    count, uncertain = Census(lay.digits, wins, offsets).count_union(counting, jobs)
    return Result(lay.digits, wins, offsets, count, uncertain, formulas)


def examples(result, window, count=2, seed=2025):
    """Up to ``count`` pairs in ``window`` that the census says fail (seeded search)."""
    import random
    rng = random.Random(seed)
    n, top = result.digits, 10 ** result.digits
    p = window.place
    found = []
    for _ in range(400):
        if len(found) == count:
            break
        high = rng.randrange(0, max(1, (2 * top - 1) // 10 ** (p + 2) + 1))
        above = rng.choice(sorted(window.above)) if window.above is not None else None
        sigma = rng.choice(sorted(window.digits))
        r = rng.randint(window.r_lo, window.r_hi)
        s = sigma * 10 ** p + r
        if above is not None:
            s += (high * 10 + above) * 10 ** (p + 1)
        if s > 2 * top - 2:
            continue
        a = rng.randint(max(0, s - top + 1), min(s, top - 1))
        if (a, s - a) not in found and in_failing_set([window], result.offsets, n, a, s - a):
            found.append((a, s - a))
    return found


def estimate_seconds(result_windows, n):
    """A rough time for ``count_union`` on this machine (re-measured below)."""
    return 0.5 * len(result_windows)
