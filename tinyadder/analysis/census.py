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
windows before it (whole windows first): each term is one exact count over the digit columns
of a and b, from the most significant down, with the carry the lower columns must deliver as
the state. A window's condition on s is followed column by column (digit sets, then r's
digits against r_lo and r_hi); a boundary window's o(x) is summed column by column, and a
subtree is settled as soon as the largest and smallest completions agree (the offset's
coefficients shrink tenfold per column, so few subtrees stay open); a settled subtree counts
its completions in closed form: the pairs of c-column numbers with a given carry out.
``count_by_sum`` is the second, independent method: it walks every sum s that lies in a
window (only feasible for small N), adds the pairs of a whole window by their number, s + 1
or 2 10^N - 1 - s, and tries every pair of a boundary sum one by one.

The real-number model: a pair counts as *uncertain* when o(x) is within the decision's guard
(its rounding bound) of a threshold; when none is, the count holds for the real-number model
as well as for the fraction model that ``tinyadder.run`` computes.
"""

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
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

    def describe(self):
        p = self.place
        ds = _digit_set(self.digits)
        r = (f"s mod 10^{p} = {self.r_lo}" if self.r_lo == self.r_hi else
             f"s mod 10^{p} in [{self.r_lo}, {self.r_hi}]")
        above = "" if self.above is None or len(self.above) == 10 else \
            f", digit above {_digit_set(self.above)}"
        cond = "" if self.cond is None else f", offset {self.cond[0]} {float(self.cond[1]):.6g}"
        return f"place 10^{p}: digit {ds}{above}, {r}{cond}"


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

    def rest(self, c):
        """(min, max) of the columns below c, each digit free in 0..9."""
        return _rest(self, c)


@lru_cache(maxsize=None)
def _rest_table(offset):
    lo, hi = [Fraction(0)], [Fraction(0)]
    for al, be, ga in offset.columns:
        lo.append(lo[-1] + sum(min(0, 9 * k) for k in (al, be, ga)))
        hi.append(hi[-1] + sum(max(0, 9 * k) for k in (al, be, ga)))
    return lo, hi


def _rest(offset, c):
    lo, hi = _rest_table(offset)
    return lo[c], hi[c]


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


# (a_c, b_c) pairs by cin: {(s_c, cout): count} and the pairs themselves
_SPLIT = {cin: {} for cin in (0, 1)}
_PAIRS = {cin: {} for cin in (0, 1)}
for _cin in (0, 1):
    for _a in range(10):
        for _b in range(10):
            _key = ((_a + _b + _cin) % 10, (_a + _b + _cin) // 10)
            _SPLIT[_cin][_key] = _SPLIT[_cin].get(_key, 0) + 1
            _PAIRS[_cin].setdefault(_key, []).append((_a, _b))

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
                progress(k, len(self.windows))
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

        With s fixed, o = kappa_a a + kappa_b b + (s's digits' part) + e, where kappa_a and
        kappa_b are a's and b's units coefficients and |e| <= E (``_linear``: every other
        coefficient is kappa times its place value, up to the exponentials' tiny leaks). So
        a window's condition holds for a on one side of a threshold, except for the a within
        E / |kappa_a - kappa_b| of it, which are evaluated exactly, one by one."""
        n = self.n
        top = 10 ** n
        a_lo, a_hi = max(0, s - top + 1), min(s, top - 1)
        uniform = self._uniform(s, ws, a_lo, a_hi)
        if uniform is not None:
            return (a_hi - a_lo + 1 if uniform else 0), 0
        sides = []     # per window: (delta, X): the condition is delta * a > X (or <=)
        close = set()  # the a to evaluate exactly
        for w in ws:
            off = self.offsets[w.t]
            ka, kb, E = _linear(off)
            rhs = w.cond[1] - kb * s - _s_part(off, n, s)
            delta = ka - kb
            sides.append((delta, rhs))
            if delta == 0:
                raise CensusRefusal("the offset does not depend on how a sum is split")
            x, y = sorted(((rhs - E - off.guard) / delta, (rhs + E + off.guard) / delta))
            lo, hi = max(a_lo, _ceil(x)), min(a_hi, floor(y))
            if hi - lo > 10 ** 5:
                raise CensusRefusal("the offset is too far from linear in a and b")
            close.update(range(lo, hi + 1))
        breaks = sorted({a_lo, a_hi + 1} | {min(max(_ceil(r / d) if d else a_lo, a_lo),
                                                  a_hi + 1)
                                            for d, r in sides} |
                        {min(max(floor(r / d) + 1, a_lo), a_hi + 1) for d, r in sides if d})
        got = unsure = 0
        for start, stop in zip(breaks, breaks[1:]):
            if start >= stop:
                continue
            inside = []
            for w, (d, r) in zip(ws, sides):
                mid = Fraction(start + stop - 1, 2)  # no threshold strictly inside a segment
                v = d * mid
                inside.append(v > r if w.cond[0] == ">" else v <= r)
            if inside[0] and not any(inside[1:]):
                got += stop - start - sum(1 for a in close if start <= a < stop)
        quick = [(_floats(self.offsets[w.t]), float(w.cond[1]),
                  float(_s_part(self.offsets[w.t], n, s))) for w in ws]
        for a in close:
            b = s - a
            inside = []
            for w, (fl, thr_f, s_f) in zip(ws, quick):
                op, thr = w.cond
                # a float evaluation (error < 1e-14 here) settles all but near ties
                x = sum(al * ((a // 10 ** c) % 10) + be * ((b // 10 ** c) % 10)
                        for c, (al, be) in enumerate(fl)) + s_f
                if abs(x - thr_f) > FLOAT_SLACK * (1 + abs(thr_f)):
                    inside.append(x > thr_f if op == ">" else x <= thr_f)
                    continue
                off = self.offsets[w.t]
                x = offset_at(off, n, a, b, s)
                if abs(x - thr) <= off.guard:
                    unsure += 1
                inside.append(x > thr if op == ">" else x <= thr)
            got += inside[0] and not any(inside[1:])
        return got, unsure

    def _uniform(self, s, ws, a_lo, a_hi):
        """In floats: when every window's threshold band lies clear of a_lo..a_hi, whether
        all of those a are in ws[0] and none of ws[1:] (else None: count exactly)."""
        inside = []
        for w in ws:
            d, kb, band0, const, gammas, thr = _quick(self.offsets[w.t], w.cond[1])
            sp = const + sum(g * ((s // 10 ** c) % 10) for c, g in gammas)
            star = (thr - kb * s - sp) / d
            band = band0 + 2 + 1e-6 * abs(star)
            if star + band >= a_lo and star - band <= a_hi:
                return None
            v = d * (a_lo + a_hi) / 2 - d * star  # delta a - rhs, far from 0 on the range
            inside.append(v > 0 if w.cond[0] == ">" else v <= 0)
        return inside[0] and not any(inside[1:])

    def count(self, ws):
        """(count, uncertain) of pairs in ws[0] and in none of ws[1:]."""
        n = self.n
        memo = {}
        offs = [self.offsets[w.t] if w.cond else None for w in ws]

        def resolve(states, partial, c):
            """Open offset conditions (Fractions: partial sums) that every completion below
            column c settles become True/False (with the guard: certain for the real model)."""
            out = []
            for k, (w, st, x) in enumerate(zip(ws, states, partial)):
                if x is None or x is True or x is False or st == DEAD:
                    out.append(x if st != DEAD or x is None else False)
                    continue
                lo, hi = offs[k].rest(c)
                op, thr = w.cond
                g = offs[k].guard
                if op == ">":
                    x = True if x + lo > thr + g else False if x + hi <= thr - g else x
                else:
                    x = True if x + hi <= thr - g else False if x + lo > thr + g else x
                out.append(x)
            return tuple(out)

        def settled(states, partial):
            """True/False when every completion is in ws[0] and in none of the rest / is
            not; None when it depends on the columns below."""
            results = []
            for st, x in zip(states, partial):
                if st == DEAD or x is False:
                    results.append(False)
                elif st == SURE and (x is None or x is True):
                    results.append(True)
                else:
                    results.append(None)
            first, rest = results[0], results[1:]
            if first is False or any(r is True for r in rest):
                return False
            if first is True and all(r is False for r in rest):
                return True
            return None

        def go(c, need, states, partial):
            # c: the column to choose next (its carry out must be ``need``)
            partial = resolve(states, partial, c + 1)
            verdict = settled(states, partial)
            if verdict is not None:
                return (free_pairs(c + 1, need), 0) if verdict else (0, 0)
            if c < 0:
                return self._leaf(ws, states, partial, need)
            exact = any(type(x) is Fraction for x in partial)
            key = None
            if not exact:
                key = (c, need, states, partial)
                if key in memo:
                    return memo[key]
            got = unsure = 0
            for cin in (0, 1):
                if c == 0 and cin:
                    continue
                for (s, cout), mult in _SPLIT[cin].items():
                    if cout != need:
                        continue
                    new = tuple(_step(w, st, c, s) for w, st in zip(ws, states))
                    if exact:
                        for a, b in _PAIRS[cin][s, cout]:
                            part = tuple(p + _col(off, c, a, b, s) if type(p) is Fraction
                                         else p for off, p in zip(offs, partial))
                            x, y = go(c - 1, cin, new, part)
                            got += x
                            unsure += y
                    else:
                        x, y = go(c - 1, cin, new, partial)
                        got += mult * x
                        unsure += mult * y
            if key is not None:
                memo[key] = (got, unsure)
            return got, unsure

        total = unsure = 0
        for top in (0, 1):  # s's digit at column n: the carry out of the operands
            states = tuple(_step(w, 3, n, top) for w in ws)
            partial = tuple(None if off is None else off.const + off.columns[n][2] * top
                            for off in offs)
            x, y = go(n - 1, top, states, partial)
            total += x
            unsure += y
        return total, unsure

    def _leaf(self, ws, states, partial, need):
        """All digits chosen, some offset condition within its guard: decide it exactly (the
        fraction model) and count the pair as uncertain for the real-number model."""
        if need:
            return 0, 0
        inside = []
        for w, st, x in zip(ws, states, partial):
            if st == DEAD or x is False:
                inside.append(False)
            elif x is None or x is True:
                inside.append(True)
            else:
                op, thr = w.cond
                inside.append(x > thr if op == ">" else x <= thr)
        return (1 if inside[0] and not any(inside[1:]) else 0), 1


@lru_cache(maxsize=None)
def _ab_rest(off, c):
    """(min, max) of the a and b digits' part of o below column c (digits free)."""
    lo = hi = Fraction(0)
    for al, be, _ in off.columns[:c]:
        lo += min(0, 9 * al) + min(0, 9 * be)
        hi += max(0, 9 * al) + max(0, 9 * be)
    return lo, hi


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


class CensusRefusal(ValueError):
    """The census's counting does not reach this model (the message says why)."""


def _ceil(x):
    return -floor(-x)


@lru_cache(maxsize=None)
def _linear(off):
    """(kappa_a, kappa_b, E): o's a and b parts are kappa_a a + kappa_b b within E."""
    ka, kb = off.columns[0][0], off.columns[0][1]
    E = Fraction(0)
    for c, (al, be, _) in enumerate(off.columns[:-1]):  # the top column has no operand digit
        E += 9 * abs(al - ka * 10 ** c) + 9 * abs(be - kb * 10 ** c)
    return ka, kb, E


FLOAT_SLACK = 1e-9  # far above a float sum's error over these few terms, far below o's steps


@lru_cache(maxsize=None)
def _floats(off):
    """o's a and b coefficients per column as floats (the s part is added apart)."""
    return tuple((float(al), float(be)) for al, be, _ in off.columns[:-1])


@lru_cache(maxsize=None)
def _quick(off, thr):
    """Floats for ``_uniform``: kappa_a - kappa_b, kappa_b, the band's half-width in a, o's
    constant, the s digits' coefficients ((column, gamma), ...) and the threshold."""
    ka, kb, E = _linear(off)
    gammas = tuple((c, float(ga)) for c, (_, _, ga) in enumerate(off.columns) if ga)
    return (float(ka - kb), float(kb), float((E + off.guard) / abs(ka - kb)), float(off.const),
            gammas, float(thr))


def _s_part(off, n, s):
    x = off.const
    for c, (_, _, ga) in enumerate(off.columns):
        if ga:
            x += ga * ((s // 10 ** c) % 10 if c < n else s // 10 ** n)
    return x


def _col(off, c, a, b, s):
    al, be, ga = off.columns[c]
    return al * a + be * b + ga * s


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

    @property
    def total(self):
        return 10 ** (2 * self.digits)

    @property
    def fraction(self):
        return Fraction(self.count, self.total)

    def hit_probability(self, draws=ADDERBOARD_RANDOM):
        """P(at least one of ``draws`` uniform random pairs fails) = 1 - (1 - f)^draws."""
        return 1 - (1 - self.fraction) ** draws


def census(model, progress=None, decs=None):
    """The exact census of ``model`` (see the module docstring)."""
    lay = layout(model)
    decs = decs if decs is not None else decisions(model, progress=progress)
    wins, offsets = windows(decs, lay)
    c = Census(lay.digits, wins, offsets)
    count, uncertain = c.count_union()
    return Result(lay.digits, wins, offsets, count, uncertain)
