"""Counting pairs (a, b) of N-digit numbers over the digit columns of a and b, for the census.

A count runs from the most significant column down. Its state is the carry the lower columns
must deliver and each window's progress along the digits of s = a + b (digit sets, then the
digits of r = s mod 10^p against r_lo and r_hi): ``ColumnCount.pattern`` memoises on it, and a
settled subtree counts its completions in closed form (``free_pairs``).

A boundary window also needs its offset o(x) past a threshold. o(x) is a sum over columns of
alpha_c a_c + beta_c b_c + gamma_c s_c, kept exactly as integers (``Scaled``: times one
denominator per formula) in a partial sum v from the top. A subtree is settled when v plus
the least (or the most) the lower columns can add is past the threshold. Otherwise its count
is a non-decreasing step function of v, so the count computed at one v holds on the whole
interval of v that every branch's count holds on (the intersection of the branches' intervals,
shifted; a settled branch holds on a half-line). Counts are memoised on (column, carry,
progress) together with these intervals (``Boxes``): a later v inside a known interval is
answered at once (a box is kept rounded inwards to ``KEPT_BITS`` bits: the scaled partial
sums have tens of thousands). With one threshold, the digit pairs of a column that leave the
same progress and are settled the same way are counted through one of them.

The cost is set by how many intervals the partial sums hit. Besides place values, the
columns' coefficients carry leaks: the emitted digits' gamma, unrelated to the place values,
and the operand digits' departures from exact place values. At the top columns the leaks
exceed the spacing of the steps of the lower columns' counts, so down to a few columns above
the decision place every prefix of the sum's digits puts v on an interval of its own: their
number, and the cost, grow exponentially in N (docs/proof.md gives the figures).
"""

from bisect import bisect_left, bisect_right
from math import floor, gcd


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
_SPLIT = {key: {s: len(ab) for s, ab in by.items()} for key, by in _BY_DIGIT.items()}

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


class Scaled:
    """A formula's offset in integers, for one direction: X = sign * D * o(x), D clearing
    every denominator of its coefficients, as a start (the constant and s's top digit) and
    per column c the 10 values of each of a_c, b_c, s_c times their weights; ``least[c + 1]``
    and ``most[c + 1]``: the least and most columns 0..c can add; ``sorted_adds[c][cin,
    cout][s]``: what the digit pairs of column c with s's digit s add, in increasing order."""

    def __init__(self, offset, sign):
        D = 1
        for q in [offset.const] + [k for col in offset.columns for k in col]:
            D = D * q.denominator // gcd(D, q.denominator)
        self.D, self.sign = D, sign
        scaled = lambda q: sign * (D * q).numerator  # noqa: E731 (an integer: D clears q)
        self.start = (scaled(offset.const), scaled(offset.columns[-1][2]))  # + top * s_N
        self.cols = [tuple(tuple(scaled(k) * d for d in range(10)) for k in col)
                     for col in offset.columns[:-1]]
        self.sorted_adds = [{key: {s: sorted(A[a] + B[b] + G[s] for a, b in pairs)
                                   for s, pairs in by.items()} for key, by in _BY_DIGIT.items()}
                            for A, B, G in self.cols]
        self.least, self.most = [0], [0]
        for A, B, G in self.cols:
            adds = [A[a] + B[b] + G[(a + b + cin) % 10] for a in range(10) for b in range(10)
                    for cin in (0, 1)]
            self.least.append(self.least[-1] + min(adds))
            self.most.append(self.most[-1] + max(adds))


class Threshold:
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


class ColumnCount:
    """One count: the pairs in ws[0] and in none of ws[1:], each boundary window's condition
    a Threshold (see the module docstring), with its memo tables."""

    def __init__(self, ws, thresholds):
        self.ws = ws
        self.owners = [k for k, _ in thresholds]   # threshold j is window owners[j]'s
        self.coord = {k: j for j, k in enumerate(self.owners)}
        self.ths = [th for _, th in thresholds]
        self.patterns, self.known, self.moves, self.decided = {}, {}, {}, {}
        self.shifts = [max(0, max(abs(th.T_most), abs(th.T_least)).bit_length() - KEPT_BITS)
                       for th in self.ths]

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
        known = self.known.get(key)
        if known is None:
            known = self.known[key] = _Boxes([self.shifts[j] for j in live])
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
        lower columns add are counted at once, each group through one settled child; only
        the others recurse. A column's adds for one digit are sorted, so both groups are
        found by bisection."""
        j = live[0]
        th, x = self.ths[j], flags[j]
        adds_of = th.scaled.sorted_adds[c]
        sure = th.T_least - th.scaled.least[c]   # the child is in at x + add >= sure
        never = th.T_most - th.scaled.most[c]    # and out at x + add < never
        got, inner, close = 0, ANY, False
        for cin in ((0,) if c == 0 else (0, 1)):
            for s, adds in adds_of[cin, need].items():
                new = self.after(c, s, states)
                if new[0] == DEAD:
                    continue
                outs, ins = bisect_left(adds, never - x), bisect_left(adds, sure - x)
                if ins < len(adds):  # the least add bounds the interval of x where all stay in
                    got += (len(adds) - ins) * self._decided(c - 1, cin, new, flags, j, True)
                    inner = _meet(inner, (sure, INF), adds[ins])
                if outs:  # and the most, where all stay out
                    got += outs * self._decided(c - 1, cin, new, flags, j, False)
                    inner = _meet(inner, (-INF, never - 1), adds[outs - 1])
                for add in adds[outs:ins]:
                    child = list(flags)
                    child[j] = x + add
                    count, cbox, near = self.node(c - 1, cin, new, tuple(child))
                    got, close = got + count, close or near
                    inner = _meet(inner, cbox[j], add)
        return (inner,), got, close

    def _decided(self, c, need, states, flags, j, past):
        """The count of columns c..0 once threshold j is settled as ``past``, every other
        threshold being settled already (memoised; the box is the caller's: settled children
        add the half-line they are settled on)."""
        child = list(flags)
        child[j] = past
        key = (c, need, states, tuple(child))
        if key not in self.decided:
            self.decided[key] = self.node(c, need, states, key[3])[0]
        return self.decided[key]


INF = float("inf")  # an unbounded end of an interval of integers (compared, never added)
ANY = (-INF, INF)


class _Boxes:
    """Counts known on boxes of partial sums (one interval [lo, hi] per live threshold), as
    (box, count, close). A box is kept with its ends rounded inwards to multiples of 2^shift
    (one shift per threshold, ``KEPT_BITS`` below the threshold's size): a sub-box of one
    where the count holds holds it too, and its ends take a few words where the exact sums
    take thousands of bits (D clears every denominator of a formula's offset). With one
    threshold the boxes are kept sorted by lo and found by bisection."""

    def __init__(self, shifts):
        self.shifts, self.los, self.entries = shifts, [], []

    def find(self, values):
        """The entry of a known box that holds ``values`` (its box at full scale), or None."""
        qs = [x >> s for x, s in zip(values, self.shifts)]
        if len(qs) == 1:
            k = bisect_right(self.los, qs[0]) - 1
            if k >= 0 and qs[0] <= self.entries[k][0][0][1]:
                return self._full(self.entries[k])
            return None
        for entry in self.entries:
            if all(lo <= q <= hi for q, (lo, hi) in zip(qs, entry[0])):
                return self._full(entry)
        return None

    def add(self, box, count, close):
        """Keep (box, count, close), the box rounded inwards; an empty one is not kept."""
        short = tuple(_inwards(lo, hi, s) for (lo, hi), s in zip(box, self.shifts))
        if any(lo > hi for lo, hi in short):
            return
        if len(short) == 1:
            k = bisect_right(self.los, short[0][0])
            self.los.insert(k, short[0][0])
            self.entries.insert(k, (short, count, close))
        else:
            self.entries.append((short, count, close))

    def _full(self, entry):
        """An entry with its box at full scale: [lo 2^s, (hi + 1) 2^s - 1]."""
        short, count, close = entry
        box = tuple((lo if lo == -INF else lo << s, hi if hi == INF else ((hi + 1) << s) - 1)
                    for (lo, hi), s in zip(short, self.shifts))
        return box, count, close


KEPT_BITS = 256  # a box's ends are kept to 2^-256 of its threshold (the guard is ~2^-110 of it)


def _inwards(lo, hi, s):
    """[lo', hi'] with [lo' 2^s, (hi' + 1) 2^s - 1] the largest such interval in [lo, hi]."""
    return (lo if lo == -INF else -((-lo) >> s)), (hi if hi == INF else ((hi + 1) >> s) - 1)


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


