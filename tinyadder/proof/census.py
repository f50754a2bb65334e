"""The census: the exact number of pairs (a, b), of all 10^(2N), that the model adds wrongly.

The failing set is a union of windows of the sum s = a + b (``windows``). ``Census.count_union``
adds, window by window, the pairs in the window and in none of the windows before it (whole
windows first), each a count over the digit columns of a and b (``columns``).

The real-number model: a pair is *uncertain* when moving every threshold by its formula's
guard (the rounding bound) towards failing, or the other way, changes whether it fails. The
count notes whether any pair comes that close; only then is the union counted again with the
thresholds moved both ways, and the difference is the number of uncertain pairs. When there
is none, the count holds for the real-number model as well as for the fraction model that
``tinyadder.run`` computes.
"""

from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Tuple
import random

from .columns import ColumnCount, Scaled, Threshold
from .formulas import digit_formulas, layout
from ..analysis.parallel import run_shares, shares
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
        indices = list(range(len(self.windows)))
        parts = shares(indices, jobs) if jobs > 1 else [[k] for k in indices]
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
        return ColumnCount(ws, self._thresholds(ws, widen)).total(self.n)

    def _thresholds(self, ws, widen):
        """(index in ws, Threshold) of every boundary window in ws."""
        out = []
        for k, v in enumerate(ws):
            if v.cond is not None:
                op, thr = v.cond
                off = self.offsets[v.t]
                sign = 1 if op == ">" else -1
                if (v.t, sign) not in self._scaled:
                    self._scaled[v.t, sign] = Scaled(off, sign)
                thr = thr - sign * widen * off.guard
                out.append((k, Threshold(self._scaled[v.t, sign], op, thr, off.guard)))
        return tuple(out)


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


def estimate_seconds(wins, n):
    """A rough time for ``count_union`` on this machine: a few hundredths of a second per
    whole window, and for the boundary windows 0.6 s of CPU at N = 10 times 3.4 per digit
    (the fit over N = 10..14, docs/proof.md)."""
    boundary = any(w.cond is not None for w in wins)
    return 0.05 * len(wins) + (0.6 * 3.4 ** (n - 10) if boundary else 0)


def estimate_bytes(wins, n):
    """A rough peak memory of the census on this machine: the process's 45 MB, and for the
    boundary windows the count's memo tables, 70 MB at N = 14 times 1.8 per digit (peak
    resident sizes measured at N = 12..14: 67, 84, 115 MB; a box's ends are kept in
    ``columns.KEPT_BITS`` bits, not in the offsets' thousands)."""
    boundary = any(w.cond is not None for w in wins)
    return int(45e6 + (70e6 * 1.8 ** (n - 14) if boundary else 0))
