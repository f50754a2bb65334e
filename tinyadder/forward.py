"""The forward pass, the model's definition: each operation a short function whose body is its
formula, in any number system.

    x = embed(tokens)                                    hook_embed
    for each block:
        x = x + attention(x)                             blocks.i.hook_resid_mid
        x = widen(x) + mlp(x)                            blocks.i.hook_resid_post
    logits = readout(x)                                  unembed.hook_out

    attention   q, k, v = W_Q x + b_Q, W_K x + b_K, W_V x + b_V       (head dimension 1)
                score_ij = q_i k_j - slope (i - j)                     ALiBi
                pattern_ij = e^score_ij / (1 + sum_l e^score_il)       softmax1: a sink at 0
                z_i = sum_j pattern_ij v_j;  attn_out = W_O z + b_O
    mlp         post = relu(W_gate x + b_gate) * (W_in x + b_in)       ReGLU
                mlp_out = W_out post + b_out;  new slots (the stream widens) start at 0
    readout     logit_t = -x[slot of t]: the slot holds an error, the smallest error wins

Every sum is added left to right in the order written, an affine map's over its non-zero
weights in source order; in a rounding system that order defines the model's values. What
the weights leave out is left out: an absent weight is no term, a slot that no term of a
half-layer reaches keeps its value (no + 0), and a head with no value map or no output map
adds no term (``plan``).

A *carried* head (``plan``, rule 1: constant query, slope 0 or ln b) keeps running sums
instead of attending to every position: O(1) per position, exactly the textbook value in
exact arithmetic; in a rounding system the carried order defines that head. It stands beside
the textbook head as nanoGPT puts flash attention beside its manual implementation.

Every trace, patch and ``run_with_cache`` runs this pass. An untraced call (no ``record``,
no ``patch``) runs the straight-line code ``codegen`` writes from ``plan`` instead: the same
operations in the same order on the same operands, less what the plan shows cannot matter
(tests check the two bit for bit in every number system).

Trace points use TransformerLens names (n: positions in this call, t: all positions):

    hook_embed, blocks.i.hook_resid_pre / hook_resid_mid / hook_resid_post,
    blocks.i.hook_attn_out, blocks.i.hook_mlp_out          [n][slot]
    blocks.i.attn.hook_q / hook_k / hook_v / hook_z        [n][head]
    blocks.i.attn.hook_attn_scores / hook_pattern          [head][n][t] (None where masked)
    blocks.i.mlp.hook_pre / hook_pre_linear / hook_post    [n][unit]
    unembed.hook_out                                       [n][readout token]

``record(name, value)`` receives each point for this call's positions; ``patch={name: fn}``
replaces a value by ``fn(value)`` before it is used, in this call only. A patch is an
intervention and always takes effect: while a call patches a block's q, scores or pattern,
every head of that block attends in full (textbook); with any patch, every head's z reaches
W_O and every slot adds its half-layer's output. Scores and patterns are built only when recorded, patched or needed by a
textbook head; a carried head's pattern is shown as e^score_ij / (1 + D_i), its own
denominator.
"""

from dataclasses import dataclass, field
from functools import reduce
import operator
from types import SimpleNamespace
from typing import Dict, List, Tuple

from . import codegen

__all__ = ["KVCache", "derive", "forward"]


# ---- the operations ------------------------------------------------------------------------

def add_up(terms, zero):
    """t_1 + t_2 + ..., left to right; no terms: 0."""
    return reduce(operator.add, terms) if terms else zero


def linear(x, W, zero):
    """y_t = b_t + sum_s W[s, t] x_s: in source order over the non-zero weights (an absent
    bias is no term, so that y_t is exactly the sum of its terms)."""
    return [add_up(([b] if b is not None else []) + [w * x[s] for s, w in column], zero)
            for column, b in zip(W.columns, W.bias)]


def score(q, k, slope, i, j):
    """ALiBi: the query at i against the key at j, less the slope times their distance."""
    return q * k - slope * (i - j)


def softmax1(scores, ns):
    """pattern_j = e^s_j / (1 + sum_l e^s_l): softmax with a sink, an extra logit fixed at 0,
    so the weights may sum to less than 1 (to nearly 0 when every score is very negative)."""
    e = [ns.exp(s) for s in scores]
    sink = ns.one + add_up(e, ns.zero)
    return [w / sink for w in e]


def attend(pattern, values, zero):
    """z = sum_j pattern_j v_j."""
    return add_up([p * v for p, v in zip(pattern, values)], zero)


def carry(head, sums, e, v, ns):
    """A carried head's z_i = N_i / (1 + D_i) from N_i = r N_(i-1) + e_i v_i and
    D_i = r D_(i-1) + e_i, with e_i = e^(q k_i) (r = 1: no product); appends (N_i, D_i)."""
    n, d = sums[-1] if sums else (ns.zero, ns.zero)
    r = head.decay
    n, d = (n + e * v, d + e) if r is None else (r * n + e * v, r * d + e)
    sums.append((n, d))
    return n / (ns.one + d)


def reglu(gate, up, zero):
    """ReGLU: relu(g) u, i.e. g u where g > 0, else 0."""
    return [g * u if g > 0 else zero for g, u in zip(gate, up)]


def readout(x, slots):
    """Negative-absolute-error logits: logit_t = -x[slot of t]."""
    return [-x[s] for s in slots]


# ---- the memory of positions run (the KV cache) -------------------------------------------

@dataclass
class _Layer:
    """One block's memory: keys[pos][head], values[pos][head], and per carried head h,
    sums[h][pos] = (N_pos, D_pos)."""

    keys: List[list] = field(default_factory=list)
    values: List[list] = field(default_factory=list)
    sums: Dict[int, list] = field(default_factory=dict)

    def prefix(self, n):
        return _Layer(self.keys[:n], self.values[:n], {h: s[:n] for h, s in self.sums.items()})


@dataclass(frozen=True)
class KVCache:
    """The first ``length`` positions' keys, values and carried sums, per block.

    Extending a cache appends to its lists when nothing else has (so a sequence fed step by
    step costs O(1) per step) and copies them otherwise, so an old cache stays valid."""

    length: int = 0
    layers: Tuple[_Layer, ...] = ()

    def __len__(self):
        return self.length

    def __repr__(self):
        return f"KVCache(length={self.length})"

    def _extend(self, compiled):
        if not self.layers:
            return [_Layer(sums={h: [] for h, head in enumerate(b.heads) if head.carried})
                    for b in compiled.blocks]
        return [layer if len(layer.keys) == self.length else layer.prefix(self.length)
                for layer in self.layers]


# ---- one block -----------------------------------------------------------------------------

class _Hooks:
    """Where a traced call records and patches its trace points."""

    def __init__(self, record, patch, names):
        self.record, self.patch = record, patch or {}
        self.keep = names or (lambda name: True)

    def __call__(self, name, value):
        if name in self.patch:
            value = self.patch[name](value)
        if self.record is not None and self.keep(name):
            self.record(name, value)
        return value

    def wants(self, name):
        return name in self.patch or (self.record is not None and self.keep(name))


def attention(ns, block, x, start, memory, hook, name):
    """The attention half over positions start, start + 1, ... (x: their resid_pre rows):
    attn_out's rows."""
    q = hook(f"{name}.hook_q", [linear(row, block.q, ns.zero) for row in x])
    k = hook(f"{name}.hook_k", [linear(row, block.k, ns.zero) for row in x])
    v = hook(f"{name}.hook_v", [linear(row, block.v, ns.zero) for row in x])
    memory.keys.extend(k)
    memory.values.extend(v)
    keys, values = memory.keys, memory.values
    positions = range(start, start + len(x))
    scores_name, pattern_name = f"{name}.hook_attn_scores", f"{name}.hook_pattern"
    textbook = any(p in hook.patch for p in (f"{name}.hook_q", scores_name, pattern_name))
    z = [[ns.zero] * len(block.heads) for _ in x]
    for h, head in enumerate(block.heads):
        if head.carried:  # the cache carries the sums even while a patch overrides z
            sums = memory.sums[h]
            for a, i in enumerate(positions):
                e = ns.exp(score(head.q_const, k[a][h], head.slope, i, i))
                z[a][h] = carry(head, sums, e, v[a][h], ns)

    def textbook_head(h):
        return textbook or not block.heads[h].carried

    shown = hook.wants(scores_name) or hook.wants(pattern_name)
    heads = [h for h in range(len(block.heads)) if shown or textbook_head(h)]
    scores = [[[score(q[a][h], keys[j][h], block.heads[h].slope, i, j) if j <= i else None
                for j in range(positions.stop)] for a, i in enumerate(positions)]
              if h in heads else None for h in range(len(block.heads))]
    if shown or textbook:
        scores = hook(scores_name, scores)
    pattern = [None] * len(block.heads)
    for h in heads:
        if textbook_head(h):
            pattern[h] = [softmax1(row[:i + 1], ns) + row[i + 1:]
                          for row, i in zip(scores[h], positions)]
        else:  # shown only: e^score over the carried denominator
            pattern[h] = [[ns.exp(s) / (ns.one + memory.sums[h][i][1]) for s in row[:i + 1]]
                          + row[i + 1:] for row, i in zip(scores[h], positions)]
    if shown or textbook:
        pattern = hook(pattern_name, pattern)
    for h in heads:
        if textbook_head(h):
            for a, i in enumerate(positions):
                z[a][h] = attend(pattern[h][a][:i + 1], [row[h] for row in values[:i + 1]],
                                 ns.zero)
    z = hook(f"{name}.hook_z", z)
    o = block.o if hook.patch else block.o_live
    return [linear(row, o, ns.zero) for row in z]


def mlp(ns, block, x, hook, name):
    """The FFN half (x: resid_mid rows): mlp_out's rows, over the widened stream."""
    gate = hook(f"{name}.hook_pre", [linear(row, block.gate, ns.zero) for row in x])
    up = hook(f"{name}.hook_pre_linear", [linear(row, block.up, ns.zero) for row in x])
    post = hook(f"{name}.hook_post", [reglu(g, u, ns.zero) for g, u in zip(gate, up)])
    return [linear(row, block.down, ns.zero) for row in post]


def residual(x, out, writes):
    """x + out in the slots the half-layer writes (``writes``; None: every slot); the others
    keep x's value. A slot beyond x's width (the stream widens) is out's value alone."""
    width = len(x[0]) if x else 0
    return [[row[s] + d[s] if writes is None or s in writes else row[s] for s in range(width)]
            + d[width:] for row, d in zip(x, out)]


# ---- the pass ------------------------------------------------------------------------------

def forward(compiled, tokens, past=None, record=None, patch=None, logits="all", names=None):
    """Run ``tokens`` (ids) at the positions after ``past`` (a KVCache): (logits, new cache).

    ``logits="all"``: the logits of every position of this call; ``"last"``: of the last only
    (a list of one row; the other positions compute only what later positions read). Logits
    are over the readout tokens, in readout order. ``names`` (a predicate on trace-point
    names) limits what ``record`` receives and so what is built; by default every point.
    """
    past = _EMPTY if past is None else past
    start, layers = len(past), past._extend(compiled)
    ns = compiled.ns
    with ns.arithmetic():
        if record is None and not patch:
            # the fast path: straight-line code for these weights (codegen, plan)
            out = codegen.run(compiled, tokens, start, layers, logits, _OPS)
        else:
            out = _traced(compiled, tokens, start, layers, _Hooks(record, patch, names))
    return out, KVCache(start + len(tokens), tuple(layers))


def _traced(compiled, tokens, start, layers, hook):
    """The pass above over this call's positions, block by block, every trace point."""
    ns = compiled.ns
    x = hook("hook_embed", [list(compiled.embed[t]) for t in tokens])
    for i, (block, memory) in enumerate(zip(compiled.blocks, layers)):
        name = f"blocks.{i}"
        x = hook(f"{name}.hook_resid_pre", x)
        attn_out = hook(f"{name}.hook_attn_out",
                        attention(ns, block, x, start, memory, hook, f"{name}.attn"))
        x = hook(f"{name}.hook_resid_mid",
                 residual(x, attn_out, None if hook.patch else set(block.attn_writes)))
        mlp_out = hook(f"{name}.hook_mlp_out", mlp(ns, block, x, hook, f"{name}.mlp"))
        x = hook(f"{name}.hook_resid_post",
                 residual(x, mlp_out, None if hook.patch else set(block.mlp_writes)))
    return hook("unembed.hook_out", [readout(row, compiled.readout) for row in x])


_EMPTY = KVCache()
# what the generated code calls of this module (it does not import it: no circle)
_OPS = SimpleNamespace(linear=linear, score=score, softmax1=softmax1, attend=attend)


# ---- trace points that follow from others ---------------------------------------------------

DERIVED = ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "mlp.hook_pre",
           "mlp.hook_pre_linear", "mlp.hook_post", "hook_mlp_out", "hook_resid_post")


def derive(compiled, values):
    """Add to ``values`` (trace points over whole positions, by name) the points that follow
    from others by the pass's own formulas, where those are present and the point is not:
    resid_pre from the embedding or the previous resid_post; attn_out from z; resid_mid; the
    FFN's points; resid_post; the logits. The values are identical to an unpatched trace's (a
    compact JSON trace stores the rest: ``analysis.trace_json``)."""
    ns, zero = compiled.ns, compiled.ns.zero

    def put(name, make, *needs):
        if name not in values and all(n in values for n in needs):
            values[name] = make(*(values[n] for n in needs))

    with ns.arithmetic():
        before = "hook_embed"
        for i, b in enumerate(compiled.blocks):
            n = f"blocks.{i}"
            put(f"{n}.hook_resid_pre", lambda x: x, before)
            put(f"{n}.hook_attn_out", lambda z: [linear(r, b.o_live, zero) for r in z],
                f"{n}.attn.hook_z")
            put(f"{n}.hook_resid_mid", lambda x, a: residual(x, a, set(b.attn_writes)),
                f"{n}.hook_resid_pre", f"{n}.hook_attn_out")
            put(f"{n}.mlp.hook_pre", lambda x: [linear(r, b.gate, zero) for r in x],
                f"{n}.hook_resid_mid")
            put(f"{n}.mlp.hook_pre_linear", lambda x: [linear(r, b.up, zero) for r in x],
                f"{n}.hook_resid_mid")
            put(f"{n}.mlp.hook_post", lambda g, u: [reglu(*r, zero) for r in zip(g, u)],
                f"{n}.mlp.hook_pre", f"{n}.mlp.hook_pre_linear")
            put(f"{n}.hook_mlp_out", lambda p: [linear(r, b.down, zero) for r in p],
                f"{n}.mlp.hook_post")
            put(f"{n}.hook_resid_post", lambda x, m: residual(x, m, set(b.mlp_writes)),
                f"{n}.hook_resid_mid", f"{n}.hook_mlp_out")
            before = f"{n}.hook_resid_post"
        put("unembed.hook_out", lambda x: [readout(r, compiled.readout) for r in x], before)
    return values
