"""The fast untraced forward pass: the same model, the same numbers, less work.

``forward.forward`` is the reference: it computes every trace point at every position, and the
tracer uses it. ``generate`` uses this engine when nothing is recorded or patched. The engine
computes exactly the same values wherever it computes a value (in the fraction system: the same
rationals, tested slot by slot against the reference); it only avoids work, by general rules
read off the compiled weights, never off what the model is for:

1. Carried softmax1 sums. A head whose query has no weights (q = b_Q, the same at every
   position) and whose ALiBi slope m is 0 or ln b has
       exp(score_ij) = exp(q k_j - m (i - j)) = exp(q k_j) r^(i-j),  r = exp(-m) (= 1/b, exact),
   so its softmax1 numerator and denominator obey
       N_i = r N_{i-1} + exp(q k_i) v_i,   D_i = r D_{i-1} + exp(q k_i),   z_i = N_i / (1 + D_i),
   O(1) per position instead of O(i). Other heads keep their keys and values and attend fully.
2. Dead heads and units. A head whose value (row and bias) or output column is all zero adds
   nothing, nor does an FFN unit with an empty output row: they are dropped at planning time.
3. Liveness. At a position whose logits are not wanted (every position of a call but the
   last), only what later positions read is computed: the keys and values of every block, and
   whatever slots feed them. A backward pass over the blocks finds, per block, the heads whose
   output and the FFN units whose output is read later; the rest (in the last block: the
   whole FFN and the readout) is skipped there.
4. The first block's keys and values (and exp(q k) of carried heads) depend only on the token,
   because its input is the embedding: they are computed once per token id.

In the fraction system the engine's numbers are ``exact.Rational``s: exact rationals that put
off big-integer work (a running sum with a thousands-of-digits denominator is kept as a sum of
its terms; comparisons are decided from certified approximations). Elsewhere the values are
whatever the number system's operators give; in ``float`` and ``decimal`` the carried sums round
in a different order than the reference, so results may differ in the last places there (tests:
never less accurate than the reference against the exact values).

``generate`` drives it: ``Sequence(plan_model(model, ns))``, then ``feed(tokens)`` per step.
"""

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Optional, Tuple

from .exact import lift
from .forward import Linear, compile_model
from .numbers import FractionSystem, Ln


def _affine(row, bias):
    """x -> bias + sum_{(i, w) in row} w x_i, as the cheapest function for its sparsity."""
    if not row:
        return lambda x: bias
    if len(row) == 1 and bias == 0:
        (i, w), = row
        return lambda x: w * x[i]

    def dot(x):
        acc = bias
        for i, w in row:
            acc = acc + w * x[i]
        return acc
    return dot


@dataclass(frozen=True)
class HeadPlan:
    """One live head: q/k/v maps with the rows they read, out = ((slot, weight), ...).

    A carried head (rule 1) has ``decay`` r = exp(-slope) (None when r = 1) and, if its key
    has no weights either, the constant ``exp_qk``; other heads attend over kept keys.
    """

    q: object
    k: object
    v: object
    reads_q: frozenset
    reads_kv: frozenset
    q_bias: object
    slope: object
    out: Tuple[Tuple[int, object], ...]
    carried: bool
    decay: object
    exp_qk: object


@dataclass(frozen=True)
class UnitPlan:
    """One live ReGLU unit: hidden = relu(gate(x)) * up(x), out = ((slot, weight), ...)."""

    gate: object
    up: object
    reads: frozenset
    out: Tuple[Tuple[int, object], ...]


@dataclass(frozen=True)
class BlockPlan:
    """A block's live heads and units. ``hist``: per head, whether its output is needed at
    positions whose logits are not wanted; ``units_hist``: the units needed there (rule 3).
    ``token_kv``: {token id: ((k, v, exp(q k)) per head)} when the block reads the embedding
    (rule 4; at most one entry per vocabulary token), else None."""

    heads: Tuple[HeadPlan, ...]
    hist: Tuple[bool, ...]
    attn_bias: Tuple[Tuple[int, object], ...]
    units: Tuple[UnitPlan, ...]
    units_hist: Tuple[UnitPlan, ...]
    mlp_bias: Tuple[Tuple[int, object], ...]
    pad: int
    token_kv: Optional[dict]


@dataclass(frozen=True)
class Plan:
    """What the engine runs: the (lifted) compiled model and a BlockPlan per block."""

    compiled: object
    embed: tuple
    blocks: Tuple[BlockPlan, ...]
    readout: Tuple[int, ...]
    zero: object
    one: object


def _nonzero(row):
    return tuple((i, w) for i, w in row if w != 0)


def _columns(linear, n_sources):
    """A Linear's rows transposed: per source, ((target, weight), ...) with nonzero weights."""
    cols = [[] for _ in range(n_sources)]
    for t, row in enumerate(linear.rows):
        for s, w in row:
            if w != 0:
                cols[s].append((t, w))
    return [tuple(c) for c in cols]


def _bias(linear):
    return tuple((t, b) for t, b in enumerate(linear.bias) if b != 0)


def _reads(*rows):
    return frozenset(i for row in rows for i, _ in row)


def _decay(ns, slope):
    """r = exp(-slope) if exp(q k - slope d) == exp(q k) r^d exactly for integer d, else None.

    True for slope 0 (r = 1) and slope ln b (r = 1/b: numbers.py keeps b**-d exact).
    """
    if slope == 0:
        return 1
    if isinstance(slope, Ln):
        return _lift(ns, ns.exp_score(ns.score(ns.zero, slope, 1)))
    return None


def _head(ns, cb, h, out):
    q_row, k_row, v_row = (_nonzero(m.rows[h]) for m in (cb.q, cb.k, cb.v))
    q_bias, slope = cb.q.bias[h], cb.slopes[h]
    decay = None if q_row else _decay(ns, slope)
    carried = decay is not None
    exp_qk = _exp_score(ns, q_bias * cb.k.bias[h], slope, 0) if carried and not k_row else None
    return HeadPlan(_affine(q_row, q_bias), _affine(k_row, cb.k.bias[h]),
                    _affine(v_row, cb.v.bias[h]), _reads(q_row), _reads(k_row, v_row), q_bias,
                    slope, out, carried, None if decay == 1 else decay, exp_qk)


@lru_cache(maxsize=64)
def plan_model(model, ns):
    """The engine's plan for a model in ``ns``: live heads and units, carried heads, liveness
    (memoised per model and number system, like ``compile_model``).

    In the fraction system every weight is lifted to an ``exact.Rational`` (see there)."""
    compiled = _lifted(compile_model(model, ns))
    raw = []
    for cb in compiled.blocks:
        o_cols = _columns(cb.o, len(cb.slopes))
        heads = [_head(ns, cb, h, o_cols[h]) for h in range(len(cb.slopes))
                 if (_nonzero(cb.v.rows[h]) or cb.v.bias[h] != 0) and o_cols[h]]  # rule 2
        units = [UnitPlan(_affine(_nonzero(cb.gate.rows[u]), cb.gate.bias[u]),
                          _affine(_nonzero(cb.up.rows[u]), cb.up.bias[u]),
                          _reads(_nonzero(cb.gate.rows[u]), _nonzero(cb.up.rows[u])), out)
                 for u, out in enumerate(_columns(cb.down, len(cb.gate.rows)))
                 if out]  # rule 2: a unit with no output row adds nothing
        raw.append((cb, heads, units))

    # Rule 3, backward over the blocks: which slots do positions without logits need?
    blocks = []
    needed = set()  # slots of the block's output that later positions read
    for cb, heads, units in reversed(raw):
        units_hist = tuple(u for u in units if any(t in needed for t, _ in u.out))
        needed_mid = {s for s in needed if s < cb.width_in}.union(*(u.reads for u in units_hist))
        hist = tuple(any(t in needed_mid for t, _ in h.out) for h in heads)
        needed = needed_mid.union(*(h.reads_kv for h in heads),  # keys, values: every position
                                  *(h.reads_q for h, w in zip(heads, hist) if w))
        blocks.append((cb, heads, hist, units, units_hist))
    blocks.reverse()

    plans = []
    for layer, (cb, heads, hist, units, units_hist) in enumerate(blocks):
        # rule 4: the first block's input is the token's embedding row; filled on first use
        # (so the number system rounds its exponentials in the reference's order)
        token_kv = {} if layer == 0 else None
        plans.append(BlockPlan(tuple(heads), hist, _bias(cb.o), tuple(units), units_hist,
                               _bias(cb.down), cb.width_out - cb.width_in, token_kv))
    return Plan(compiled, compiled.embed, tuple(plans), compiled.readout,
                _lift(ns, ns.zero), _lift(ns, ns.one))


def _exp_score(ns, qk, slope, dist):
    """exp(qk - slope dist), by the number system's own rules (its memo takes Fractions)."""
    if isinstance(ns, FractionSystem):
        return lift(ns.exp_score(ns.score(lift(qk).fraction(), slope, dist)))
    return ns.exp_score(ns.score(qk, slope, dist))


def _lift(ns, value):
    return lift(value) if isinstance(ns, FractionSystem) else value


def _lifted(compiled):
    """In the fraction system, the compiled weights as ``exact.Rational``s; else unchanged."""
    if not isinstance(compiled.ns, FractionSystem):
        return compiled

    def linear(lin):
        return Linear(tuple(tuple((i, lift(w)) for i, w in row) for row in lin.rows),
                      tuple(lift(b) for b in lin.bias))

    blocks = tuple(replace(b, **{name: linear(getattr(b, name)) for name in
                                 ("q", "k", "v", "o", "gate", "up", "down")})
                   for b in compiled.blocks)
    embed = tuple(tuple(lift(w) for w in row) for row in compiled.embed)
    return replace(compiled, embed=embed, blocks=blocks)


class Sequence:
    """One sequence being run by the engine: feed it tokens, get the last position's logits.

    Per block and live head it keeps [N, D] for a carried head, or [keys, values] for any
    other head (the engine's KV cache).
    """

    def __init__(self, plan):
        self.plan = plan
        self.ns = plan.compiled.ns
        self.length = 0
        self.state = [[[plan.zero, plan.zero] if h.carried else [[], []] for h in b.heads]
                      for b in plan.blocks]

    def feed(self, tokens, every=False):
        """Run ``tokens`` at the next positions; return the logits of the last one.

        With ``every=True`` nothing is skipped (rule 3 off) and the result is, per position,
        [resid_mid, resid_post] of every block, then the logits: for comparing with the
        reference value by value.
        """
        rows = []
        with self.ns.arithmetic():
            last = len(tokens) - 1
            for n, token in enumerate(tokens):
                out = self._position(token, every or n == last, every)
                if every:
                    rows.append(out)
        return rows if every else out

    def _position(self, token, full, every):
        """One position through every block: all of it (``full``: its logits are wanted) or
        only what later positions read."""
        plan, i = self.plan, self.length
        self.length += 1
        x = plan.embed[token]
        kept = []
        for bp, state in zip(plan.blocks, self.state):
            # attention: every live head takes in this position's key and value; the outputs
            # needed here are added once all heads have read the same resid_pre
            if bp.token_kv is None:
                kv = self._kv(bp, x)
            else:
                kv = bp.token_kv.get(token)
                if kv is None:
                    kv = bp.token_kv[token] = self._kv(bp, x)
            mid = list(x)
            for h, s, (k, v, e), wanted in zip(bp.heads, state, kv, bp.hist):
                if h.carried:  # N_i = r N_{i-1} + e v_i,  D_i = r D_{i-1} + e
                    r = h.decay
                    if r is None:
                        s[0], s[1] = s[0] + e * v, s[1] + e
                    else:
                        s[0], s[1] = r * s[0] + e * v, r * s[1] + e
                else:
                    s[0].append(k)
                    s[1].append(v)
                if full or wanted:
                    if h.carried:
                        z = s[0] / (plan.one + s[1])  # z_i = N_i / (1 + D_i)
                    else:
                        z = self._attend(h, x, s, i)
                    for t, w in h.out:
                        mid[t] = mid[t] + w * z
            for t, b in bp.attn_bias:
                mid[t] = mid[t] + b
            # FFN (ReGLU): hidden = relu(gate) up, added into the (widened) stream
            post = mid + [plan.zero] * bp.pad if bp.pad else list(mid)
            for u in (bp.units if full else bp.units_hist):
                g = u.gate(mid)
                if g > 0:
                    hidden = g * u.up(mid)
                    for t, w in u.out:
                        post[t] = post[t] + w * hidden
            for t, b in bp.mlp_bias:
                post[t] = post[t] + b
            x = post
            if every:
                kept += [mid, post]
        if not full:
            return None
        logits = [-x[s] for s in plan.readout]
        return kept + [logits] if every else logits

    def _kv(self, bp, x):
        """(k, v, exp(q k) or None) per head, from this position's resid_pre."""
        out = []
        for h in bp.heads:
            k, e = h.k(x), None
            if h.carried:
                e = h.exp_qk if h.exp_qk is not None else _exp_score(self.ns, h.q_bias * k,
                                                                      h.slope, 0)
            out.append((k, h.v(x), e))
        return out

    def _attend(self, h, x, state, i):
        """z_i of a head whose query depends on the position: full causal softmax1 over the
        kept keys and values, as in the reference."""
        q = h.q(x)
        keys, values = state
        e = [_exp_score(self.ns, q * keys[j], h.slope, i - j) for j in range(i + 1)]
        denom = sum(e, self.plan.one)
        return sum((w / denom * v for w, v in zip(e, values)), self.plan.zero)
