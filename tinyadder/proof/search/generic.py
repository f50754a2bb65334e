"""The generic prover: does a model add every pair of N-digit numbers right? For any model
file, from its own forward pass run over sets of pairs (``setsystem``, ``sets``).

Induction on a correct prefix: at answer position k (the digit of place q, or the stop token),
suppose the tokens already written are the true sum's. For a region R of pairs, run the pass
once over the whole region: the operands' digits are the variables a_j, b_j; a written digit of
place j is the affine form a_j + b_j + c_j - 10 c_(j+1) in the digits and carries (its token
fixed where R fixes s_j); an embedding that is affine in the digit (checked exactly) embeds the
form, another the indicator form sum_d row_d [x = d] of its rows (exact at every digit: the
pass then takes any function of one digit digit by digit, ``setsystem``). R is *decided* when the target token's logit beats every
other at every pair of R (strictly: a tie is not counted a win). Otherwise it is split: on the
first open carry that decides the first relaxed ReLU's sign in both parts (``deciding``), else
where the undecided form varies most (``choose``: the sum's digit at a place, a carry, a digit
range in two), or, where its width is mostly its interval (what a sharp gate lost, which no
digit's term points at), along the carry chain into the target's column (``chain``: c_(q+1),
c_q, c_(q-1), ...), and each part is tried; the target must be one token over R, so a region
first splits on the sum's digit at q. A region of one pair is run exactly (``addition.add`` in
the fraction system, decided over enclosures): a right answer decides it, a wrong one is a
counterexample. A form whose least value, at the pair attaining it, is below 0 by more than its
interval gives a candidate counterexample at once, which the exact run confirms.

Where the budget stops a position's search short of ``examples`` counterexamples, a probe
(``Prover.probe``) searches it again, least margin first, for counterexamples only.

Each answer position is searched on its own budget (``max_sets`` regions, ``max_seconds``)
and its own exact runs, so the positions can be the parts of ``parallel.each_share`` and the
outcome is the same for any number of processes. If every position's regions are decided,
every pair is added right by induction (each position emits the true token given the true
prefix), in exact arithmetic and for the real-number model. The result records the split
tree of every position: the certificate (``setcheck`` re-checks it with its own evaluator).
"""

from dataclasses import dataclass, field, replace
from fractions import Fraction
from heapq import heappop, heappush
import itertools
import time
from typing import List, Optional

from ...addition import add, answer_length, digits_of, encode, system_of
from ...forward import forward
from ...generate import generate
from ...modelfile import dump
from ...numbers import Undecided, for_model
from ...plan import compile_model
from ...analysis.parallel import each_share
from ..kernel.claim import short_answer
from ..kernel.setcheck import COUNT_FORMAT, ffn_map, final_point, gap, layout
from .sets import Region, a_var, b_var, c_var
from .setsystem import SetSystem, rational

FORMAT = "tinyadder-sets-certificate"
MAX_SETS = 20000
MAX_SECONDS = 600.0
EXAMPLES = 3


@dataclass
class Open:
    """A region left undecided: the answer position, the region, the worst margin found."""

    position: int
    region: Region
    margin: Optional[Fraction]
    why: str


@dataclass
class Outcome:
    verdict: str                 # "proved", "fails" or "undecided"
    digits: int
    positions: List[dict]        # the split tree of each answer position (certificate)
    counterexamples: List[tuple] = field(default_factory=list)   # (a, b, what the model wrote)
    open: List[Open] = field(default_factory=list)
    sets: int = 0                # regions evaluated
    passes: int = 0              # forward passes over regions
    runs: int = 0                # exact runs of single pairs
    seconds: float = 0.0
    margins: List[Optional[Fraction]] = field(default_factory=list)  # least margin per position
    wrong: List[int] = field(default_factory=list)  # counting: pairs shown wrong, per position


class _Stop(Exception):
    """The budget is spent or enough counterexamples are found."""


def targets(model):
    """Per answer position (in the model's order): ("digit", place) or ("token", id)
    (``setcheck.layout``)."""
    return layout(model)[1]


def prompt_slots(model):
    """The prompt's tokens: ("token", id), ("a", j) or ("b", j) per position
    (``setcheck.layout``)."""
    return layout(model)[0]


class Prover:
    """The search over one model (see the module docstring)."""

    def __init__(self, model, max_sets=MAX_SETS, max_seconds=MAX_SECONDS, examples=EXAMPLES,
                 progress=None, system=SetSystem, replay="fraction", carries_first=False,
                 counting=False, seeds=()):
        """``system(model)`` is the number system of the sets; ``replay`` the one that runs
        a single pair (``addition.add``).

        ``carries_first``: at the answer digit of place q, split a region first on the
        carries c_(q+1) and c_q (out of and into column q), then on the sum's digit s_q (the
        target), and, where the region is still undecided, on s_(q-1) (cut at its middle)
        and c_(q-1), before the rule's own choice (``chain``, ``choose``): ``carry_split``.
        Any order partitions the pairs; this one follows where a digit's decision lives when
        the model reads column q's digits and the carry state (jacobli99-28: every region
        with c_q, c_(q+1) and s_q fixed decides), which the open form does not always show
        (its width in digit terms, or in a float program's rounding symbols).

        ``counting``: count rather than prove (``failure_count``): a region where another
        token's logit beats the target's at every pair is a leaf of wrong pairs, the search
        goes on past every counterexample, and no probe runs. ``seeds``: pairs (a, b) the
        model adds wrong; at the position where each first goes wrong, the count first grows
        the largest region around it that is wrong at every pair (``grow``) and the search
        splits its way to that region (``toward``), a leaf of wrong pairs."""
        self.model, self.n = model, digits_of(model)
        self.counting = counting
        self.seeds = tuple(seeds)
        self._focus = []
        self.carries_first = carries_first
        self.ns = system(model)
        self.replay = replay
        self.compiled = compile_model(model, self.ns)
        self.digit_ids = [model.vocab.index(str(d)) for d in range(10)]
        self.readout = list(self.compiled.readout_tokens)
        # the kernel's rule (``Leaves``): a real-number model's digit rows are affine only
        # where all ten rows are exactly affine in the digit; a float program's column by column
        self.line = not self.ns.exact or self._affine_embedding()
        # an exact system's logit differences are formed from the final row (``difference``)
        self._readout = self.compiled.readout_map() if self.ns.exact else None
        self._final = None
        self._dense = {}   # block: its FFN's maps multiplied out (``_through_relus``)
        self.max_sets, self.max_seconds, self.examples = max_sets, max_seconds, examples
        self.progress = progress
        self.slots = prompt_slots(model)
        self.targets = targets(model)
        self.outcome = Outcome("proved", self.n, [])
        self._exact = {}
        self._prompt = None

    # ---- the embedding of a set of tokens -------------------------------------------------
    def _affine_embedding(self):
        """Whether the digits' rows are exactly affine in the digit (every entry a rational)."""
        rows = [self.compiled.embed[t] for t in self.digit_ids]
        return all(v.point for row in rows for v in row) and all(
            v.k == e.k + d * (o.k - e.k) for d, row in enumerate(rows)
            for v, e, o in zip(row, rows[0], rows[1]))

    def _digit_row(self, form, col, lo, hi):
        """The kernel's embedding of a digit token whose value is ``form`` in lo..hi, the
        digit of column ``col`` (``FormSystem.digit_row``)."""
        return self.ns.digit_row([self.compiled.embed[self.digit_ids[d]]
                                  for d in range(lo, hi + 1)], form, col, lo, self.line)

    def _row(self, slot, region):
        kind, j = slot
        ns = self.ns
        if kind == "token":
            return list(self.compiled.embed[j])
        if kind in ("a", "b"):
            lo, hi = getattr(region, kind)[j]
            return self._digit_row(ns.variable((kind, j)), (kind, j), lo, hi)
        q = j  # a written digit of the sum, place q
        lo, hi = region.sum_range(q) if q <= self.n else (0, 0)
        if q == self.n:
            return self._digit_row(ns.variable(c_var(q)), c_var(q), lo, hi)
        form = ns.variable(a_var(q)) + ns.variable(b_var(q)) - ns.variable(c_var(q + 1), 10)
        if q:
            form = form + ns.variable(c_var(q))
        return self._digit_row(form, ("s", q), lo, hi)

    # ---- one region -----------------------------------------------------------------------
    def logits(self, k, region):
        """The logits at answer position k over ``region`` (SetValues); raises Split. The
        last block runs for the last position only (``last_row``): the other positions give
        it their keys and values, and their rows after it feed nothing."""
        past, start = self._cached_prompt()
        self.ns.at(region)
        slots = self.slots + [("sum", q) for _, q in self.targets[:k]]
        rows = [self._row(s, region) for s in slots[start:]]
        self.outcome.passes += 1
        self._final = None
        out, _ = forward(self.compiled, [0] * len(rows), past, patch=self._patch(rows),
                         logits="last", last_row=True)
        return out[-1]

    def _patch(self, rows, last=True):
        """The embedding's rows replaced by ``rows``; every ReLU taken as relu(g) whole; the
        last block's rows after its attention zero unless (``last``) the pass runs that block
        for its last position only (``forward``'s ``last_row``); in an
        exact system, a ReLU FFN that is not gated taken as one affine map
        (``_through_relus``) and the final row kept (``decide``)."""
        relu, zero = self.ns.relu, self.ns.zero
        patch = {"hook_embed": lambda _: rows}
        for i, block in enumerate(self.model.blocks):
            if block.mlp is not None and block.mlp.act == "relu":
                patch[f"blocks.{i}.mlp.hook_pre"] = lambda pre: [[relu(g) for g in row]
                                                                 for row in pre]
        # nothing reads the other positions' rows there (their keys and values are made
        # before it), and a range of theirs that no enclosure takes (a root of a range
        # through 0) would stop the pass for nothing: a region's pass runs the block for its
        # last position only (``logits``), the prompt's pass keeps none
        if not last:
            patch[f"blocks.{len(self.model.blocks) - 1}.hook_resid_mid"] = \
                lambda x: [[zero] * len(row) for row in x]
        if self._readout is not None:
            for i, block in enumerate(self.model.blocks):
                if block.mlp is not None and block.mlp.act == "relu" and \
                        not self.compiled.blocks[i].gated:
                    self._through_relus(patch, i)
            patch[_final_point(self.compiled)] = self._keep_final
        return patch

    def _through_relus(self, patch, i):
        """Block i's FFN, mlp_out = D relu(U x + b_U) + b_D, taken as one affine map of its
        input x (``through_relus``): its rows are replaced by that map's at the input rows
        and the ReLU values the pass made of them."""
        block, kept = self.compiled.blocks[i], {}
        if i not in self._dense:
            self._dense[i] = block.up.multiplied_out(), block.down.multiplied_out()
        where = (f"blocks.{i}.ln2.hook_normalized" if block.ln2 is not None else
                 f"blocks.{i}.hook_resid_mid")
        before, gates = patch.get(where, lambda x: x), patch[f"blocks.{i}.mlp.hook_pre"]

        def keep_input(x):
            kept["x"] = x = before(x)
            return x

        def keep_gates(pre):
            kept["post"] = post = gates(pre)
            return post

        patch[where], patch[f"blocks.{i}.mlp.hook_pre"] = keep_input, keep_gates
        patch[f"blocks.{i}.hook_mlp_out"] = lambda _: [
            through_relus(*self._dense[i], x, post, self.ns)
            for x, post in zip(kept["x"], kept["post"])]

    def _keep_final(self, rows):
        """The last position's final row kept for ``decide`` (the readout's input)."""
        self._final = rows[-1]
        return rows

    def _cached_prompt(self):
        """The prompt's first positions run over every pair (valid for every region), or
        nothing when that pass meets an undecided sign."""
        if self._prompt is None:
            root = Region.every(self.n)
            self.ns.at(root)
            rows = [self._row(s, root) for s in self.slots[:-1]]
            # only the keys and values are kept: what the last block adds after its attention
            # is replaced by zeros, so that no range of it can stop the pass
            try:
                _, past = forward(self.compiled, [0] * len(rows), None,
                                  patch=self._patch(rows, last=False), logits="last")
                self._prompt = (past, len(rows))
            except Undecided:
                self._prompt = (None, 0)
        return self._prompt

    def target(self, k, region):
        """The readout index of the true token at position k over ``region``, or None when it
        differs between the region's pairs."""
        kind, q = self.targets[k]
        if kind == "token":
            return self.readout.index(q)
        d = region.sum_digit(q) if q <= self.n else 0
        return None if d is None else self.readout.index(self.digit_ids[d])

    def decide(self, logits, t):
        """("decided", margin) | ("fails", pair, difference) | ("open", the worst
        difference, margin, the pair where its form is least); margins rational. In an exact
        system each difference is formed from the last pass's final row (``difference``)."""
        ns, worst, margin, corner = self.ns, None, None, None
        for d in self._differences(logits, t):
            low, at = ns.grid_box(d)[0], None
            if low <= 0:
                found = ns.grid_range(d)
                if found is None:
                    return "decided", None
                low, _, at = found
                if low - d.lo + d.hi < 0:
                    return "fails", at, d
            if margin is None or low < margin:
                margin = low
                if low <= 0:
                    worst, corner = d, at
        margin = None if margin is None else rational(margin)
        return ("decided", margin) if worst is None else ("open", worst, margin, corner)

    def _differences(self, logits, t):
        """logit_t - logit_u for every other token u, in order (in an exact system formed
        from the last pass's final row: ``difference``)."""
        for u, other in enumerate(logits):
            if u != t:
                yield (logits[t] - other if self._final is None else
                       difference(self._readout, self._final, t, u, self.ns.zero))

    def _all_wrong(self, t):
        """Whether some other token's logit exceeds the target's at every pair of the region
        of the last pass (its difference's greatest value over the region's pairs below 0):
        every pair of it is added wrong."""
        ns = self.ns
        for d in self._differences(self._logits, t):
            if ns.grid_box(d)[1] < 0:
                return True
            found = ns.grid_range(d)
            if found is not None and found[1] < 0:
                return True
        return False

    def exact(self, a, b):
        """Whether the model adds a + b right (exact run), and what it wrote."""
        if (a, b) not in self._exact:
            self.outcome.runs += 1
            wrote = add(self.model, self.replay, a, b)
            self._exact[(a, b)] = (wrote == a + b, wrote)
        return self._exact[(a, b)]

    # ---- the search -----------------------------------------------------------------------
    def explore(self, k, region):
        """The split tree of ``region`` at position k (raises _Stop; a count keeps going
        where the budget is spent, each region then an open leaf, a pair its exact run, so
        that its tree is whole: ``count_certificate``)."""
        count = region.count()
        if self.counting and self._spent():
            if count > 1:
                self.outcome.open.append(Open(k, region, None, "budget"))
                return {"leaf": "open"}
        else:
            self._tick(k, region)
        if count == 0:
            return {"leaf": "empty"}
        t = self.target(k, region)
        path = next((toward(region, f) for f in self._focus if f != region and inside(f, region)),
                    None)
        if path is not None:  # the way to a grown region of wrong pairs (``grow``)
            return self._split(k, region, path, forced=True)
        if t is None:  # even at one pair: a leaf's target is one token (setcheck re-decides it)
            return self._split(k, region, self._target_split(k, region))
        if count == 1:
            return self._pair(region)
        result = self._pass(k, region, t)
        if result[0] == "decided":
            self._margin(k, result[1])
            return {"leaf": "bound"}
        if result[0] == "fails" and self.counting and self._all_wrong(t):
            self.outcome.wrong[-1] += count
            return {"leaf": "wrong"}
        split = self._next(k, region, result)
        if result[0] == "fails":
            # more counterexamples wanted: the rest of the region is searched too
            if split is None:
                if self.counting:  # the rest is not known: the region stays open
                    self.outcome.open.append(Open(k, region, None, "no split narrows it"))
                    return {"leaf": "open"}
                return {"leaf": "fails", "pair": list(result[1])}
            return self._split(k, region, split)
        if split is None:
            return self._pair_split(k, region)
        return self._split(k, region, split, result[2])

    def _target_split(self, k, region):
        """The cut of the sum's digit at the target's place q (the carry c_N at q = N)."""
        q = self.targets[k][1]
        lo, hi = region.sum_range(q)
        return ("c", q) if q == self.n else ("s", q, (lo + hi) // 2)

    def _pass(self, k, region, t):
        """``decide`` over the region's pass (an Undecided pass is open, with no margin); a
        failing form's pair confirmed by its exact run and recorded."""
        self.outcome.sets += 1
        try:
            self._logits = self.logits(k, region)
            result = self.decide(self._logits, t)
        except Undecided as why:  # a Split, or an enclosure (a root, say) out of its domain
            result = ("open", getattr(why, "value", None), None, None)
        if result[0] == "fails":
            a, b = result[1]
            right, wrote = self.exact(a, b)
            if right:
                raise AssertionError(f"a failing form at {a} + {b}, which the exact run adds "
                                     f"right")
            self._counterexample(a, b, wrote)
        return result

    def _next(self, k, region, result):
        """The split of a region ``_pass`` left failing or open (None if none narrows it): a
        failing form's own choice; else the first gate the pass relaxed, which is where the
        region stops deciding (``deciding``), else the carry chain where the open form's
        width is its interval (``chain``), else the open difference's (``choose``)."""
        if result[0] == "fails":
            return choose(region, result[2].coefs, self.targets[k])
        relaxed = self.ns.relaxed
        form = relaxed[0] if relaxed else result[1]
        split = deciding(region, form, self.targets[k]) if relaxed else None
        if split is None and self._loose(form):
            split = chain(region, self.targets[k])
        if split is None:
            split = choose(region, form.coefs if form is not None else {}, self.targets[k])
        return split

    def _loose(self, form):
        """Whether the open form's width is mostly its interval (what a nonlinearity lost,
        which no digit's term points at): no form, or an interval wider than its terms'
        spread over the box."""
        if form is None:
            return True
        lo, hi = self.ns.grid_box(form)
        return form.hi - form.lo > hi - lo - (form.hi - form.lo)

    def _split(self, k, region, split, margin=None, forced=False):
        """The node of ``region`` cut by ``split`` (by the carries-first split instead,
        where one is open and the option is on, unless ``forced``), its children explored."""
        kind, q = self.targets[k]
        if self.carries_first and kind == "digit" and not forced:
            split = carry_split(region, q, self.target(k, region) is not None) or split
        children = region.children(split)
        # the part on the way to a grown region first, so that no budget stops short of it
        order = sorted(range(len(children)), key=lambda i: not any(
            inside(f, children[i]) for f in self._focus)) if forced else range(len(children))
        found = [{"leaf": "open"}] * len(children)
        for m, i in enumerate(order):
            try:
                found[i] = self.explore(k, children[i])
            except _Stop:  # this child recorded itself; its later siblings are left open
                self.outcome.open += [Open(k, children[j], margin, "budget")
                                      for j in list(order)[m + 1:] if children[j].count()]
                raise
        return {"split": list(split), "children": found}

    def probe(self, k, region):
        """Least margin first: counterexamples at position k over ``region``, searched on a
        budget of its own (``max_sets`` regions, ``max_seconds``) where the depth-first
        search spent its budget. Each region is run through the pass (a decided one is
        dropped) and so is one pair of it, its *sample*: the corner where the open
        difference's form is least (``decide``), else the pair of the region nearest its
        parent's sample (``nearest``). The sample's margin (target logit less the best other,
        at that pair) orders the frontier, least first, and the region of least is split
        next, by the depth-first search's rule (``_next``): the search follows the pairs the
        model most nearly gets wrong, wherever they lie in the depth-first order. It adds
        counterexamples only, each confirmed by its exact run (raises _Stop at
        ``examples``); what it decides is not recorded."""
        out, order, frontier = self.outcome, itertools.count(), []
        limit, start = out.sets + self.max_sets, time.perf_counter()
        self._probe_push(frontier, order, k, region, None)
        while frontier:
            _, _, region, split, sample = heappop(frontier)
            for child in region.children(split):
                if out.sets >= limit or time.perf_counter() - start > self.max_seconds:
                    return
                if self.progress and out.sets % 50 == 0:
                    self.progress(out.sets, None, f" sets, position {k} (probe)")
                self._probe_push(frontier, order, k, child, sample)

    def _probe_push(self, frontier, order, k, region, near):
        """``region`` and its sample run through the pass (a single pair exactly), and put on
        ``frontier`` by the sample's margin (one with none, or failing, first) where the
        region stays open."""
        size = region.count()
        if size == 0:
            return
        if size == 1:
            self._pair(region)
            return
        t, corner = self.target(k, region), None
        if t is None:
            split = self._target_split(k, region)
        else:
            result = self._pass(k, region, t)
            if result[0] == "decided":
                return
            split = self._next(k, region, result)
            corner = result[3] if result[0] == "open" else result[1]
        sample = corner or nearest(region, near)
        margin = self._sample(k, sample)
        if split is not None:
            heappush(frontier, ((0, 0) if margin is None else (1, margin), next(order),
                                region, split, sample))

    def _sample(self, k, pair):
        """The margin at position k of one pair, from the pass over it (None where it fails or
        is open, the exact run then deciding it: a wrong answer is a counterexample)."""
        one = point(self.n, *pair)
        result = self._pass(k, one, self.target(k, one))
        if result[0] == "decided":
            return result[1]
        if result[0] == "open":
            right, wrote = self.exact(*pair)
            if not right:
                self._counterexample(*pair, wrote)
        return None

    def _pair_split(self, k, region):
        """A region no split narrows (should not happen: every variable is fixed)."""
        self.outcome.open.append(Open(k, region, None, "no split narrows it"))
        return {"leaf": "open"}

    def _pair(self, region):
        (a, b), = region.pairs(1)
        right, wrote = self.exact(a, b)
        if right:
            return {"leaf": "pair", "pair": [a, b]}
        if self.counting:  # a leaf of one wrong pair
            self.outcome.wrong[-1] += 1
            self._counterexample(a, b, wrote)
            return {"leaf": "wrong"}
        self._counterexample(a, b, wrote)
        return {"leaf": "fails", "pair": [a, b]}

    def _counterexample(self, a, b, wrote):
        out = self.outcome
        if all((a, b) != c[:2] for c in out.counterexamples):
            out.counterexamples.append((a, b, wrote))
        out.verdict = "fails"
        if len(out.counterexamples) >= self.examples:
            raise _Stop()

    def _margin(self, k, m):
        """The least margin of the position searched (the outcome's one margin)."""
        ms = self.outcome.margins
        if m is not None and (ms[-1] is None or m < ms[-1]):
            ms[-1] = m

    def first_wrong(self, a, b):
        """The answer position where the exact run of a + b first writes a wrong token (the
        earlier ones the true sum's), or None where it adds the pair right."""
        right, _ = self.exact(a, b)
        if right:
            return None
        prompt = encode(self.model, a, b)
        written = generate(self.model, for_model(system_of(self.replay), self.model), prompt,
                           answer_length(self.model))[len(prompt):]
        for k, ((kind, q), token) in enumerate(zip(self.targets, written)):
            if token != (q if kind == "token" else self.digit_ids[(a + b) // 10 ** q % 10]):
                return k
        return None

    def grow(self, k, a, b):
        """The region about the pair (a, b), wrong at every pair at position k (``_all_wrong``),
        from the pair itself, each column's digits and then each carry freed in turn, the
        farthest from the target's place first, where the region stays wrong: None if the
        pair does not first go wrong at k or its own region is not shown wrong."""
        if self.first_wrong(a, b) != k or self.targets[k][0] != "digit":
            return None
        q, n = self.targets[k][1], self.n
        here = point(self.n, a, b)
        keep, carries = set(range(n)), set(range(1, n + 1))
        far = sorted(range(n + 1), key=lambda j: -abs(j - q))

        def region(keep, carries):
            return Region(n, tuple(here.a[j] if j in keep else (0, 9) for j in range(n)),
                          tuple(here.b[j] if j in keep else (0, 9) for j in range(n)),
                          tuple((j, here.carry(j)) for j in sorted(carries)),
                          tuple((j, lo, hi) for j, lo, hi in here.sums if j == q))

        if not self._wrong_at(k, region(keep, carries)):
            return None
        for drop in [("column", j) for j in far if j < n] + [("carry", j) for j in far if j]:
            trial = (keep - {drop[1]}, carries) if drop[0] == "column" else \
                (keep, carries - {drop[1]})
            if self._wrong_at(k, region(*trial)):
                keep, carries = trial
        return self._widen(k, region(keep, carries))

    def _widen(self, k, region):
        """``region`` with each fixed digit's range widened a digit at a time, down and up,
        while the region stays wrong at every pair (``_wrong_at``)."""
        for j in range(self.n):
            for kind in ("a", "b"):
                for step in (-1, 1):
                    while True:
                        lo, hi = getattr(region, kind)[j]
                        if (lo, hi) == (0, 9) or not 0 <= (lo, hi)[step > 0] + step <= 9:
                            break
                        wide = (lo + step, hi) if step < 0 else (lo, hi + step)
                        ranges = getattr(region, kind)[:j] + (wide,) + getattr(region, kind)[j + 1:]
                        trial = replace(region, **{kind: ranges})
                        if not self._wrong_at(k, trial):
                            break
                        region = trial
        return region

    def _wrong_at(self, k, region):
        """Whether the pass over ``region`` at position k shows every pair of it wrong."""
        t = self.target(k, region)
        try:
            self._logits = self.logits(k, region)
            return t is not None and self.decide(self._logits, t)[0] == "fails" and \
                self._all_wrong(t)
        except Undecided:
            return False

    def _spent(self):
        """Whether the position's budget (``max_sets`` regions, ``max_seconds``) is spent."""
        return self.outcome.sets >= self.max_sets or \
            time.perf_counter() - self._start > self.max_seconds

    def _tick(self, k, region):
        out = self.outcome
        if self._spent():
            if region.count():
                out.open.append(Open(k, region, None, "budget"))
            raise _Stop()
        if self.progress and out.sets % 50 == 0:
            self.progress(out.sets, None, f" sets, position {k}")

    def position(self, k, region=None):
        """Answer position k searched on its own over ``region`` (every pair by default): an
        Outcome of one position (its tree, or none where the budget or the counterexamples
        stopped it), on its own budget and its own exact runs, so that it is the same
        whichever process runs it and after what."""
        self.outcome = Outcome("proved", self.n, [], margins=[None], wrong=[0])
        self._exact = {}
        self._start = time.perf_counter()
        region = region or Region.every(self.n)
        try:
            self._focus = [f for f in (self.grow(k, a, b) for a, b in self.seeds)
                           if f is not None and inside(f, region)] if self.counting else []
            self.outcome.positions.append(self.explore(k, region))
        except _Stop:
            if self.counting:
                self._settle_single_pairs()
            elif len(self.outcome.counterexamples) < self.examples:
                try:  # the budget stopped it: the probe's own search for counterexamples
                    self.probe(k, region)
                except _Stop:
                    pass
            if self.outcome.verdict != "fails":  # a failing verdict lists no open region
                self._settle_single_pairs()
            if self.outcome.verdict != "fails":
                self.outcome.verdict = "undecided"
        return self.outcome

    def _settle_single_pairs(self):
        """The open regions of one pair, settled by their exact runs: a wrong one is a
        counterexample, a right one is settled (an undecided verdict lists only what
        a run of one pair cannot settle)."""
        still = []
        for o in self.outcome.open:
            if o.region.count() != 1:
                still.append(o)
                continue
            (a, b), = o.region.pairs(1)
            right, wrote = self.exact(a, b)
            if not right and self.counting:
                self.outcome.wrong[-1] += 1
            if not right and len(self.outcome.counterexamples) < self.examples:
                try:
                    self._counterexample(a, b, wrote)
                except _Stop:
                    pass
        self.outcome.open = still

    def run(self, jobs=1):
        """Every answer position (each a part of ``parallel.each_share``, on its own budget);
        the parts merged in their order, up to the position whose counterexamples reach
        ``examples`` (the later ones are not read, or not run). The prompt's pass, which
        every position reads, is run once, before the processes fork."""
        start = time.perf_counter()
        if short_answer(self.model):  # a sum it cannot write: no search, one confirmed pair
            a, b = 10 ** self.n - 1, 1  # (10^N - 1) + 1 = 10^N: place N is 1
            wrote = add(self.model, self.replay, a, b)
            assert wrote != a + b, "a short answer wrote the whole sum"
            return Outcome("fails", self.n, [], counterexamples=[(a, b, wrote)], runs=1,
                           seconds=time.perf_counter() - start)
        self._cached_prompt()
        merged = Outcome("proved", self.n, [])
        for part in each_share(self.position, list(range(len(self.targets))), jobs):
            _merge(merged, part)
            if len(merged.counterexamples) >= self.examples:
                del merged.counterexamples[self.examples:]
                break
        if merged.verdict == "proved" and merged.open:
            merged.verdict = "undecided"
        merged.seconds = time.perf_counter() - start
        return merged


def _merge(merged, part):
    """Position ``part`` (an Outcome of one position) appended to ``merged``."""
    merged.positions += part.positions or [{"leaf": "open"}]
    merged.counterexamples += [c for c in part.counterexamples
                               if all(c[:2] != d[:2] for d in merged.counterexamples)]
    merged.open += part.open
    merged.margins += part.margins
    merged.wrong += part.wrong
    merged.sets += part.sets
    merged.passes += part.passes
    merged.runs += part.runs
    if part.verdict == "fails" or merged.counterexamples:
        merged.verdict = "fails"
    elif part.verdict == "undecided" and merged.verdict == "proved":
        merged.verdict = "undecided"


def point(n, a, b):
    """The region of the one pair (a, b): its digits, its sum's digits and its carries."""
    s = a + b
    return Region(n, tuple((a // 10 ** j % 10,) * 2 for j in range(n)),
                  tuple((b // 10 ** j % 10,) * 2 for j in range(n)),
                  tuple((j, (a % 10 ** j + b % 10 ** j) // 10 ** j) for j in range(1, n + 1)),
                  tuple((j, s // 10 ** j % 10, s // 10 ** j % 10) for j in range(n)))


def nearest(region, pair):
    """The region's pair nearest ``pair`` in the digits, sum_j |a_j - x_j| + |b_j - y_j| (the
    least of that form over the region: an indicator form, ``Region.bound``); with no
    ``pair``, the pair the walk takes first."""
    coefs = {}
    if pair is not None:
        for j in range(region.digits):
            for kind, x in (("a", pair[0]), ("b", pair[1])):
                for d in range(10):
                    if d != x // 10 ** j % 10:
                        coefs[(kind, j, d)] = Fraction(abs(d - x // 10 ** j % 10))
    return region.bound(coefs)[2]


# one row's FFN as one affine map, a logit difference from the final row, the readout's
# input: the kernel's (``setcheck.ffn_map``, ``gap``, ``final_point``), so that the search
# forms each leaf's numbers as the checker re-forms them
through_relus, difference, _final_point = ffn_map, gap, final_point


def choose(region, coefs, target):
    """The split that most narrows a form (its ``coefs``) over ``region`` (None if none does).

    Column j's terms alpha a_j + beta b_j (alpha, beta with the trend of the column's
    indicator terms, ``_trend``) are ((alpha + beta)/2)(a_j + b_j) +
    ((alpha - beta)/2)(a_j - b_j): the sum part is narrowed by fixing the sum's digit at j and
    the carries into j and j + 1, the difference part by cutting the wider digit range; a
    carry's term by fixing it. Each candidate is weighed by how much of the form's range it
    can remove; a column's indicator terms by cutting its digit's range in two (weighed by
    their spread over the region); with no variable left to narrow (the interval is the
    rest), the digits nearest the target's place are cut."""
    n = region.digits
    best, weight = None, Fraction(0)

    def offer(split, w):
        nonlocal best, weight
        if split is not None and w > weight:
            best, weight = split, w

    for j in range(n):
        (alo, ahi), (blo, bhi) = region.a[j], region.b[j]
        alpha = coefs.get(a_var(j), 0) + _trend(coefs, ("a", j), alo, ahi)
        beta = coefs.get(b_var(j), 0) + _trend(coefs, ("b", j), blo, bhi)
        offer(_sum_split(region, j), abs(alpha + beta) / 2 * (ahi - alo + bhi - blo))
        wider = ("a", j, (alo + ahi) // 2) if ahi - alo >= bhi - blo else ("b", j, (blo + bhi) // 2)
        if max(ahi - alo, bhi - blo) > 0:
            offer(wider, abs(alpha - beta) / 2 * (ahi - alo + bhi - blo) / 2)
    for j in range(1, n + 1):
        if _open_carry(region, j):
            offer(("c", j), abs(coefs.get(c_var(j), 0)))
    for (kind, j), spread in _indicator_spreads(region, coefs).items():
        lo, hi = region.sum_range(j) if kind == "s" else getattr(region, kind)[j]
        offer((kind, j, (lo + hi) // 2) if hi > lo else None, spread)
    if best is not None:
        return best
    place = target[1] if target[0] == "digit" else 0
    for j in sorted(range(n), key=lambda j: (abs(min(place, n - 1) - j), -j)):
        for kind in ("a", "b"):
            lo, hi = getattr(region, kind)[j]
            if hi > lo:
                return (kind, j, (lo + hi) // 2)
    return None


def inside(small, region):
    """Whether every pair of ``small`` lies in ``region`` (by their constraints)."""
    n = region.digits
    return all(lo <= slo and shi <= hi for ranges, sranges in ((region.a, small.a),
                                                                (region.b, small.b))
               for (lo, hi), (slo, shi) in zip(ranges, sranges)) and \
        all(region.carry(j) in (None, small.carry(j)) for j in range(1, n + 1)) and \
        all(lo <= small.sum_range(j)[0] and small.sum_range(j)[1] <= hi
            for j in range(n) for lo, hi in [region.sum_range(j)])


def toward(region, small):
    """The split of ``region`` that one of its parts holds all of ``small`` (``inside``) and
    is nearer it: a carry ``small`` fixes, else a cut at the middle of a digit's or a sum's
    range wider than ``small``'s."""
    n = region.digits
    for j in range(1, n + 1):
        if region.carry(j) is None and small.carry(j) is not None:
            return ("c", j)
    for j in range(n):
        for kind in ("a", "b"):
            (lo, hi), (slo, shi) = getattr(region, kind)[j], getattr(small, kind)[j]
            if (lo, hi) != (slo, shi):
                return (kind, j, (lo + hi) // 2 if shi <= (lo + hi) // 2 or slo > (lo + hi) // 2
                        else (slo - 1 if slo > lo else shi))
        (lo, hi), (slo, shi) = region.sum_range(j), small.sum_range(j)
        if (lo, hi) != (slo, shi):
            return ("s", j, (lo + hi) // 2 if shi <= (lo + hi) // 2 or slo > (lo + hi) // 2
                    else (slo - 1 if slo > lo else shi))
    return None


def chain(region, target):
    """The first carry of the target's column and the columns below it that the region
    leaves open: c_(q+1), c_q, c_(q-1), ..., c_1 for the digit of place q (None if all are
    fixed, or for a token); a carry the region implies (one value at all its pairs) is not
    open. An adder's digit at q is s_q's column plus the carry into it, which the model reads
    off the column below and the digit written there, so where the width is no digit's term
    it is the carry chain's."""
    if target[0] != "digit":
        return None
    for j in range(min(target[1] + 1, region.digits), 0, -1):
        if _open_carry(region, j):
            return ("c", j)
    return None


def deciding(region, gate, target):
    """The first open carry, in the carry chain's order (``chain``: c_(q+1), c_q, ..., c_1,
    then c_(q+2), ..., c_N), whose every value decides the sign of ``gate`` (a relaxed ReLU's
    input) at every pair of its part of the region (the exact walk, its interval included),
    or None. A gate read off a sum of digits (a carry's or a wrap's: a_j + b_j + ... >= 10)
    is decided by the carry it computes, which a cut of the sum's digit leaves open."""
    place = target[1] if target[0] == "digit" else 0
    first = min(place + 1, region.digits)
    for j in list(range(first, 0, -1)) + list(range(first + 1, region.digits + 1)):
        if _open_carry(region, j) and all(_one_sign(child, gate)
                                          for child in region.children(("c", j))):
            return ("c", j)
    return None


def _one_sign(region, gate):
    """Whether ``gate`` (a SetValue) is >= 0 at every pair of ``region`` or <= 0 at every
    pair."""
    found = region.bound(gate.coefs, gate.k)
    return found is None or found[0] + gate.lo >= 0 or found[1] + gate.hi <= 0


def carry_split(region, q, target_fixed):
    """The first of c_(q+1) and c_q, then (once the target s_q is fixed) s_(q-1) and c_(q-1),
    that ``region`` leaves open, as a split (None if all are fixed): the carries-first order
    at the answer digit of place q (``Prover``)."""
    n = region.digits
    for j in (q + 1, q):
        if 1 <= j <= n and region.carry(j) is None:
            return ("c", j)
    if q >= 1 and target_fixed:
        lo, hi = region.sum_range(q - 1)
        if lo < hi:
            return ("s", q - 1, (lo + hi) // 2)
        if q >= 2 and region.carry(q - 1) is None:
            return ("c", q - 1)
    return None


def _open_carry(region, j):
    """Whether the carry into column j takes both values over the region."""
    return region.carry(j) is None and len({s[3] for s in region.column_steps(j - 1)}) > 1


def _trend(coefs, col, lo, hi):
    """The slope (w_hi - w_lo) / (hi - lo) of column ``col``'s indicator terms w_d = coefs[col
    + (d,)] between the ends of its digit range lo..hi (0 for one digit): a function of one
    digit arrives as a table (a product by an enclosed weight, say), and a table that rises
    with the digit in a_j and in b_j is a sum a_j + b_j, which the sum's digit and the carries
    narrow, not a cut of either range."""
    if hi == lo:
        return 0
    return Fraction(coefs.get(col + (hi,), 0) - coefs.get(col + (lo,), 0), hi - lo)


def _indicator_spreads(region, coefs):
    """{(kind, j): the greatest less the least of alpha d + sum_d w_d [x = d] over the digits d
    the region allows}, for each column x (a_j, b_j or s_j) with indicator terms."""
    tables = {}
    for v, c in coefs.items():
        if len(v) == 3:
            tables.setdefault(v[:2], {})[v[2]] = c
    out = {}
    for (kind, j), w in tables.items():
        lo, hi = region.sum_range(j) if kind == "s" else getattr(region, kind)[j]
        lin = coefs.get((kind, j), 0)
        values = [lin * d + w.get(d, 0) for d in range(lo, hi + 1)]
        out[(kind, j)] = max(values) - min(values)
    return out


def _sum_split(region, j):
    """The first unfixed of the sum's digit at j and the carries into j + 1 and j."""
    lo, hi = region.sum_range(j)
    if lo < hi:
        return ("s", j, (lo + hi) // 2)
    if j + 1 <= region.digits and _open_carry(region, j + 1):
        return ("c", j + 1)
    if j and _open_carry(region, j):
        return ("c", j)
    return None


def prove(model, max_sets=MAX_SETS, max_seconds=MAX_SECONDS, examples=EXAMPLES, progress=None,
          jobs=1, carries_first=False):
    """The generic prover's :class:`Outcome` for ``model`` (``max_sets`` regions and
    ``max_seconds`` per answer position; the positions in ``jobs`` processes; the split order
    ``carries_first``: ``Prover``)."""
    return Prover(model, max_sets, max_seconds, examples, progress,
                  carries_first=carries_first).run(jobs)


@dataclass(frozen=True)
class FailureCount:
    """Certified bounds on the number of pairs of N-digit numbers the model adds wrong."""

    digits: int
    low: int
    high: int
    counterexamples: List[tuple]   # (a, b, what the model wrote), each from an exact run
    sets: int
    runs: int
    positions: List[dict] = field(default_factory=list)  # each position's split tree


def failure_count(model, max_sets=MAX_SETS, max_seconds=MAX_SECONDS, progress=None, jobs=1,
                  carries_first=False, seeds=()):
    """The :class:`FailureCount` of ``model``: at each answer position k (the digits before
    it the true sum's), W_k pairs shown wrong (regions where another token's logit beats the
    target's at every pair, single pairs an exact run adds wrong) and O_k pairs left open on
    the budget. A pair is added wrong exactly when its digit at some position is wrong after
    a right prefix, so  max_k W_k <= failures <= min(10^(2N), sum_k (W_k + O_k)).
    ``seeds``: pairs the model adds wrong, each grown into a region of wrong pairs first
    (``Prover.grow``). ValueError for a model whose answer leaves out a place of the sum
    (``claim``)."""
    short = short_answer(model)
    if short:
        raise ValueError(f"the model cannot add every pair: {short}")
    prover = Prover(model, max_sets, max_seconds, examples=10 ** 30, progress=progress,
                    carries_first=carries_first, counting=True, seeds=seeds)
    outcome = prover.run(jobs)
    n = outcome.digits
    open_by = [0] * len(outcome.wrong)
    for o in outcome.open:
        open_by[o.position] += o.region.count()
    high = min(10 ** (2 * n), sum(w + o for w, o in zip(outcome.wrong, open_by)))
    return FailureCount(n, max(outcome.wrong, default=0), high, outcome.counterexamples,
                        outcome.sets, outcome.runs, outcome.positions)


def count_certificate(found, model, name):
    """The certificate of a :class:`FailureCount` (JSON-ready): the model file's text, the
    split tree of every answer position (leaves ``bound``, ``pair``, ``empty``, ``wrong``,
    ``open``) and the bounds [low, high], which ``setcheck.count_check`` derives again."""
    return {"format": COUNT_FORMAT, "version": 1, "name": name, "digits": found.digits,
            "model": dump(model), "positions": found.positions,
            "count": [found.low, found.high]}


def certificate(outcome, model, name):
    """The certificate of a proved outcome (JSON-ready): the model file's text and the split
    tree of every answer position, for ``setcheck.check``."""
    if outcome.verdict != "proved":
        raise ValueError(f"no certificate for a verdict of {outcome.verdict!r}")
    return {"format": FORMAT, "version": 1, "name": name, "digits": outcome.digits,
            "model": dump(model), "positions": outcome.positions}
