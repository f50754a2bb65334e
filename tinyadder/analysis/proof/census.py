"""The census: the exact number of pairs (a, b), of all 10^(2N), that the model adds wrongly.

From ``decisions`` (the model's own forward pass, symbolically): with the higher digits of the
sum s = a + b right, the digit of place p is right exactly when

    lo(sigma, y) < r + o(x) <= hi(sigma, y),     r = s mod 10^p,

sigma the true digit there, y the one above it, o(x) the offset: an exact affine form in the
digits of a, b and the (true) digits of s above p. A pair fails iff this fails at some place
(the first place it fails is where the model goes wrong), so the failing set is the union,
over places, of *windows*:

- a whole window: sigma in a set of digits, y in a set, r in [r_lo, r_hi]: a condition on s
  alone. Every pair with such a sum fails.
- a boundary window: the same with one residue r_lo = r_hi, where r + o(x) is within the
  offset's range of the threshold: the pair fails iff o(x) > c (or o(x) <= c), which depends
  on the digits of a and b themselves.

Counting. ``count_union`` adds, window by window, the pairs in the window and in none of the
windows before it (whole windows first). A whole window is one count over the digit columns
of a and b, from the most significant down, with the carry the lower columns must deliver as
the state and each window's progress (digit sets, then r's digits against r_lo and r_hi) as
the rest; it is memoised, and a settled subtree counts its completions in closed form (the
pairs of c-column numbers with a given carry out). A boundary window fixes the low digits of
s, so it has few sums: for each sum not in a whole window, a count over the digits of a
(b = s - a, with borrows) sums o(x) from the top and settles a subtree as soon as its smallest
and largest completions lie on one side of the threshold (in floats, with a slack far above
their error; the pairs left at the bottom are evaluated exactly). ``count_by_sum`` is the
second, independent method: it walks every sum s that lies in a window (only feasible for
small N), adds the pairs of a whole window by their number, s + 1 or 2 10^N - 1 - s, and
tries every pair of a boundary sum one by one.

The real-number model: a pair counts as *uncertain* when o(x) is within the decision's guard
(its rounding bound) of a threshold; when none is, the count holds for the real-number model
as well as for the fraction model that ``tinyadder.run`` computes.
"""

from dataclasses import dataclass
from fractions import Fraction
from math import floor
from typing import FrozenSet, Optional, Tuple

from .decisions import decisions, layout

ADDERBOARD_RANDOM = 10_000


@dataclass(frozen=True)
class Window:
    """Pairs whose sum s has digit in ``digits`` at place p = ``place``, the digit above it in
    ``above`` (None: no condition, at the first decision), and r = s mod 10^p in
    [r_lo, r_hi]; a boundary window also needs o(x) ``cond[0]`` ``cond[1]`` ('>' or '<=').
    ``side``: 'high' (the model's digit is too high: a false carry) or 'low'."""

    t: int
    place: int
    digits: FrozenSet[int]
    above: Optional[FrozenSet[int]]
    r_lo: int
    r_hi: int
    cond: Optional[Tuple[str, Fraction]]
    side: str

    def describe(self, bias=0):
        """One line; a boundary condition is on the offset bias + o(x) (as ``prove`` shows
        it), bias being the decision's."""
        p = self.place
        ds = _digit_set(self.digits)
        r = (f"s mod 10^{p} = {self.r_lo}" if self.r_lo == self.r_hi else
             f"s mod 10^{p} in [{self.r_lo}, {self.r_hi}]")
        above = "" if self.above is None or len(self.above) == 10 else \
            f", digit above {_digit_set(self.above)}"
        cond = ("" if self.cond is None else
                f", offset {self.cond[0]} {float(self.cond[1] + bias):.6g}")
        side = "" if self.side == "high" else " (too low)"
        return f"place 10^{p}{side}: digit {ds}{above}, {r}{cond}"


def _digit_set(ds):
    ds = sorted(ds)
    if len(ds) > 2 and ds == list(range(ds[0], ds[-1] + 1)):
        return f"{ds[0]}..{ds[-1]}"
    return ",".join(map(str, ds))


@dataclass(frozen=True)
class Offset:
    """o(x) of one decision by columns: per column c, (alpha, beta, gamma) for a_c, b_c, s_c."""

    const: Fraction
    columns: Tuple[Tuple[Fraction, Fraction, Fraction], ...]   # index c = 0..N
    guard: Fraction


def offset_columns(decision, lay):
    """The decision's offset o(x) regrouped by digit column (a's, b's and s's digits)."""
    n = lay.digits
    cols = [[Fraction(0)] * 3 for _ in range(n + 1)]
    for v, k in decision.offset.items():
        if v in lay.a:
            cols[n - 1 - lay.a.index(v)][0] += k
        elif v in lay.b:
            cols[n - 1 - lay.b.index(v)][1] += k
        else:  # an emitted digit: the sum's digit of its place
            cols[n - lay.answer.index(v)][2] += k
    return Offset(decision.offset0, tuple(tuple(c) for c in cols), decision.guard)


def _range(offset, above_column, y):
    """(min, max) of o(x) over the digit box, with s's digit in ``above_column`` set to y."""
    lo, hi = offset.const, offset.const
    for c, ks in enumerate(offset.columns):
        for j, k in enumerate(ks):
            if j == 2 and c == above_column and y is not None:
                lo += k * y
                hi += k * y
            elif k > 0:
                hi += 9 * k
            else:
                lo += 9 * k
    return lo, hi


def windows(decs, lay):
    """The failing set as windows (whole windows first), and each decision's Offset."""
    n = lay.digits
    found, offsets = {}, {}
    for d in decs:
        P = 10 ** d.place
        off = offset_columns(d, lay)
        offsets[d.t] = off
        top = 1 if d.t == 0 else 9
        for y in d.lo:
            omin, omax = _range(off, d.place + 1, y)
            g = off.guard
            for sigma in range(top + 1):
                r_max = P - 1 if not (d.t == 0 and sigma == 1) else P - 2
                hi, lo = d.hi[y][sigma], d.lo[y][sigma]
                if hi is not None:  # fails when r + o > hi
                    full = max(floor(hi - omin + g) + 1, 0)
                    if full <= r_max:
                        _add(found, d, sigma, y, full, r_max, None, "high")
                    for r in range(max(floor(hi - omax - g) + 1, 0), min(full, r_max + 1)):
                        _add(found, d, sigma, y, r, r, (">", hi - r), "high")
                if lo is not None:  # fails when r + o <= lo
                    full = min(floor(lo - omax - g), r_max)
                    if full >= 0:
                        _add(found, d, sigma, y, 0, full, None, "low")
                    for r in range(max(full + 1, 0), min(floor(lo - omin + g), r_max) + 1):
                        _add(found, d, sigma, y, r, r, ("<=", lo - r), "low")
    merged = {}
    for (t, place, sigma, r_lo, r_hi, cond, side), ys in found.items():
        above = None if ys == {None} else frozenset(ys)
        merged.setdefault((t, place, above, r_lo, r_hi, cond, side), set()).add(sigma)
    out = [Window(t, place, frozenset(ds), above, r_lo, r_hi, cond, side)
           for (t, place, above, r_lo, r_hi, cond, side), ds in merged.items()]
    out.sort(key=lambda w: (w.cond is not None, w.t, w.side, min(w.digits), w.r_lo))
    return out, offsets


def _add(found, d, sigma, y, r_lo, r_hi, cond, side):
    found.setdefault((d.t, d.place, sigma, r_lo, r_hi, cond, side), set()).add(y)


# --- method 1: by digit columns -------------------------------------------------------------

def free_pairs(columns, carry):
    """Pairs of numbers of ``columns`` digits whose sum carries ``carry`` out of them."""
    M = 10 ** columns
    return M * (M - 1) // 2 if carry else M * (M + 1) // 2


# digit pairs (a_c, b_c) by carry in: {(s_c, carry out): how many}
_SPLIT = {cin: {} for cin in (0, 1)}
for _cin in (0, 1):
    for _a in range(10):
        for _b in range(10):
            _key = ((_a + _b + _cin) % 10, (_a + _b + _cin) // 10)
            _SPLIT[_cin][_key] = _SPLIT[_cin].get(_key, 0) + 1

DEAD, SURE = -1, 4   # window states; 0..3: alive, bit 1 = r still equal to r_lo's digits so
# far, bit 2 = equal to r_hi's


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


class Census:
    """Counts for one model's windows (see the module docstring)."""

    def __init__(self, n, wins, offsets):
        self.n, self.windows, self.offsets = n, wins, offsets

    def count_union(self, progress=None):
        """(pairs in some window, uncertain pairs): window by window, minus earlier windows.

        Whole windows: one column count each. Boundary windows: sum by sum (their low
        digits are fixed, so there are few sums), pairs by the digits of a."""
        total = uncertain = 0
        whole = [w for w in self.windows if w.cond is None]
        for k, w in enumerate(self.windows):
            if progress:
                progress(k, len(self.windows), f", window {k + 1}")
            negs = [v for v in self.windows[:k] if _compatible(v, w)]
            if w.cond is None:
                got, unsure = self.count([w] + negs)
            else:
                got, unsure = self.count_boundary(w, [v for v in negs if v.cond], whole)
            total += got
            uncertain += unsure
        return total, uncertain

    def count_boundary(self, w, negs, whole):
        """Pairs in boundary window w and in none of ``negs`` (boundary windows) or ``whole``."""
        n = self.n
        total = unsure = 0
        for s in _window_sums(w, n):
            if any(_sum_in(v, s, n) for v in whole):
                continue  # every pair of this sum is counted already
            rivals = [v for v in negs if _sum_in(v, s, n)]
            got, un = self._pairs_of_sum(s, [w] + rivals)
            total += got
            unsure += un
        return total, unsure

    def _pairs_of_sum(self, s, ws):
        """(count, uncertain) of a (b = s - a; a, b < 10^N) in ws[0] and in none of ws[1:].

        A count over a's digits from the top (b's digits follow, with borrows), summing each
        window's o(x) in floats: a subtree is settled when its smallest and largest
        completions (column by column bounds for this s) lie on one side of every threshold
        by more than FLOAT_SLACK; the pairs left at the bottom (o within FLOAT_SLACK of a
        threshold) are evaluated exactly."""
        n = self.n
        sd = [(s // 10 ** c) % 10 for c in range(n)] + [s // 10 ** n]
        offs = [self.offsets[w.t] for w in ws]
        fl = [self._floats(w.t) for w in ws]
        thr = [float(w.cond[1]) for w in ws]
        gt = [w.cond[0] == ">" for w in ws]
        start = [fl[k][-1] + sum(g * sd[c] for c, g in enumerate(fl[k][-2]))
                 for k in range(len(ws))]
        # With b = s - a: sum_c beta_c b_c = sum_c beta_c (s_c - a_c) + sum_c k_c (10 beta_c -
        # beta_{c+1}), k_c the borrow out of column c (the borrows telescope), so column c adds
        # (alpha_c - beta_c) a_c + beta_c s_c + k_c (10 beta_c - beta_{c+1}): tight bounds.
        cols, rest = [], []
        for f in fl:
            col, lo, hi, table = [], 0.0, 0.0, [(0.0, 0.0)]
            for c in range(n):
                al, be = f[c]
                nxt = f[c + 1][1] if c + 1 < n else 0.0
                A, S, K = al - be, be * sd[c], 10 * be - nxt
                col.append((A, S, K))
                vals = [A * a + K * k for a in (0, 9) for k in (0, 1)]
                lo, hi = lo + S + min(vals), hi + S + max(vals)
                table.append((lo, hi))
            cols.append(col)
            rest.append(table)
        slack = [FLOAT_SLACK * (1 + abs(x)) for x in thr]

        def state(partial, c):
            out = []
            for k, x in enumerate(partial):
                if x is True or x is False:
                    out.append(x)
                    continue
                lo, hi = rest[k][c]
                if x + lo > thr[k] + slack[k]:
                    out.append(gt[k])
                elif x + hi < thr[k] - slack[k]:
                    out.append(not gt[k])
                else:
                    out.append(x)
            return out

        def go(c, need, partial, digits):
            partial = state(partial, c + 1)
            if partial[0] is False or any(x is True for x in partial[1:]):
                return 0, 0
            if partial[0] is True and all(x is False for x in partial[1:]):
                low = s % 10 ** (c + 1)
                return ((10 ** (c + 1) - 1 - low) if need else (low + 1)), 0
            if c < 0:
                return (0, 0) if need else self._exact(s, ws, digits)
            got = unsure = 0
            for a in range(10):
                for bin_ in ((0,) if c == 0 else (0, 1)):
                    x = sd[c] - a - bin_
                    if (x < 0) != bool(need):
                        continue
                    part = [p + cols[k][c][0] * a + cols[k][c][1] + cols[k][c][2] * need
                            if not (p is True or p is False) else p
                            for k, p in enumerate(partial)]
                    g, u = go(c - 1, bin_, part, digits + a * 10 ** c)
                    got += g
                    unsure += u
            return got, unsure

        return go(n - 1, sd[n], start, 0)

    def _floats(self, t):
        """Decision t's offset as floats: per column (alpha, beta), then the gammas, then
        the constant (memoised per decision: hashing exact offsets is slow)."""
        memo = self.__dict__.setdefault("_float_memo", {})
        if t not in memo:
            off = self.offsets[t]
            memo[t] = (tuple((float(al), float(be)) for al, be, _ in off.columns[:-1])
                       + (tuple(float(ga) for _, _, ga in off.columns), float(off.const)))
        return memo[t]

    def _exact(self, s, ws, a):
        """(in ws[0] and none of ws[1:], within the guard of a threshold) for one pair."""
        inside, unsure = [], 0
        for w in ws:
            off = self.offsets[w.t]
            x = offset_at(off, self.n, a, s - a, s)
            op, thr = w.cond
            if abs(x - thr) <= off.guard:
                unsure = 1
            inside.append(x > thr if op == ">" else x <= thr)
        return (1 if inside[0] and not any(inside[1:]) else 0), unsure

    def count(self, ws):
        """(count, 0): pairs in whole window ws[0] and in none of the whole windows ws[1:]."""
        n = self.n
        memo = {}

        def verdict(states):
            first, rest = states[0], states[1:]
            if first == DEAD or SURE in rest:
                return False
            if first == SURE and all(st == DEAD for st in rest):
                return True
            return None

        def go(c, need, states):
            # c: the column to choose next (its carry out must be ``need``)
            settled = verdict(states)
            if settled is not None:
                return free_pairs(c + 1, need) if settled else 0
            if c < 0:
                return 0
            key = (c, need, states)
            if key not in memo:
                got = 0
                for cin in ((0,) if c == 0 else (0, 1)):
                    for (s, cout), mult in _SPLIT[cin].items():
                        if cout == need:
                            new = tuple(_step(w, st, c, s) for w, st in zip(ws, states))
                            got += mult * go(c - 1, cin, new)
                memo[key] = got
            return memo[key]

        total = 0
        for top in (0, 1):  # s's digit at column n: the carry out of the operands
            total += go(n - 1, top, tuple(_step(w, 3, n, top) for w in ws))
        return total, 0


def _window_sums(w, n):
    """Every sum s < 2 10^N - 1 in window w's digit pattern (a boundary window: r fixed)."""
    p = w.place
    aboves = [None] if w.above is None else sorted(w.above)
    highs = range(0, (2 * 10 ** n - 1) // 10 ** (p + 2) + 1) if p + 2 <= n else [0]
    for h in highs:
        for y in aboves:
            for sigma in sorted(w.digits):
                for r in range(w.r_lo, w.r_hi + 1):
                    if y is None:
                        s = h * 10 ** (p + 1) + sigma * 10 ** p + r
                    else:
                        s = (h * 10 + y) * 10 ** (p + 1) + sigma * 10 ** p + r
                    if s < 2 * 10 ** n - 1 and _sum_in(w, s, n):
                        yield s


FLOAT_SLACK = 1e-13  # a float sum of these few terms (o < 1) errs by < 1e-15; far below o's steps


def _compatible(v, w):
    """Whether windows v and w can share a sum (their fixed digits do not conflict)."""
    for c in range(min(v.place, w.place) + 2):
        dv, dw = _fixed_digits(v, c), _fixed_digits(w, c)
        if dv is not None and dw is not None and not dv & dw:
            return False
    return True


def _fixed_digits(w, c):
    """The digits s may have at column c in window w (None: any)."""
    p = w.place
    if c == p + 1:
        return w.above
    if c == p:
        return w.digits
    if c < p and w.r_lo == w.r_hi:
        return {(w.r_lo // 10 ** c) % 10}
    return None


# --- method 2: by sums ------------------------------------------------------------------------

def count_by_sum(n, wins, offsets, lay, decs):
    """The same count, sum by sum (small N only): (count, uncertain)."""
    total = uncertain = 0
    top = 10 ** n
    for s in range(2 * top - 1):
        hit = [w for w in wins if _sum_in(w, s, n)]
        if not hit:
            continue
        if any(w.cond is None for w in hit):
            total += s + 1 if s < top else 2 * top - 1 - s
            continue
        for a in range(max(0, s - top + 1), min(s, top - 1) + 1):
            b = s - a
            bad = False
            for w in hit:
                x = offset_at(offsets[w.t], n, a, b, s)
                op, thr = w.cond
                if abs(x - thr) <= offsets[w.t].guard:
                    uncertain += 1
                bad = bad or (x > thr if op == ">" else x <= thr)
            total += bad
    return total, uncertain


def _sum_in(w, s, n):
    p = w.place
    digit = (s // 10 ** p) % 10
    if p == n:
        digit = s // 10 ** n
    if digit not in w.digits:
        return False
    if w.above is not None and (s // 10 ** (p + 1)) % 10 not in w.above:
        return False
    return w.r_lo <= s % 10 ** p <= w.r_hi


def offset_at(off, n, a, b, s):
    """o(x) for the pair (a, b), the emitted digits being those of s."""
    x = off.const
    for c, (al, be, ga) in enumerate(off.columns):
        x += al * ((a // 10 ** c) % 10) + be * ((b // 10 ** c) % 10)
        if ga:
            x += ga * ((s // 10 ** c) % 10 if c < n else s // 10 ** n)
    return x


def in_failing_set(wins, offsets, n, a, b):
    """Whether the pair lies in some window (what the census says about one pair)."""
    s = a + b
    for w in wins:
        if _sum_in(w, s, n):
            if w.cond is None:
                return True
            op, thr = w.cond
            x = offset_at(offsets[w.t], n, a, b, s)
            if (x > thr if op == ">" else x <= thr):
                return True
    return False


@dataclass
class Result:
    """A census: the windows, the count, and what it means for random tests."""

    digits: int
    windows: list
    offsets: dict
    count: int
    uncertain: int
    decisions: list = ()

    def describe(self, window):
        return window.describe(self.decisions[window.t].bias if self.decisions else 0)

    @property
    def total(self):
        return 10 ** (2 * self.digits)

    @property
    def fraction(self):
        return Fraction(self.count, self.total)

    def hit_probability(self, draws=ADDERBOARD_RANDOM):
        """P(at least one of ``draws`` uniform random pairs fails) = 1 - (1 - f)^draws."""
        return 1 - (1 - self.fraction) ** draws


def census(model, progress=None, decs=None, before_count=None, counting=None):
    """The exact census of ``model`` (see the module docstring). ``before_count(windows)``
    is called once the windows are known (for a time estimate), ``counting(k, total)``
    before each window is counted."""
    lay = layout(model)
    decs = decs if decs is not None else decisions(model, progress=progress)
    wins, offsets = windows(decs, lay)
    if before_count:
        before_count(wins)
    c = Census(lay.digits, wins, offsets)
    count, uncertain = c.count_union(progress=counting)
    return Result(lay.digits, wins, offsets, count, uncertain, decs)


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
    """A rough time for ``count_union``: about 1 ms per boundary sum on this machine."""
    sums = 0
    for w in result_windows:
        if w.cond is not None:
            highs = max(1, (2 * 10 ** n) // 10 ** (w.place + 2))
            sums += highs * len(w.digits) * (len(w.above) if w.above else 1)
    return sums / 1000 + 0.5 * len(result_windows)
