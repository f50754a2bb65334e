"""The forward pass, the model's definition: each operation a short function whose body is its
formula, in any number system.

    x = embed(tokens) + positions                        hook_embed, hook_pos_embed
    for each block:
        x = x + attention(ln1(x))                        blocks.i.hook_resid_mid
        x = widen(x) + mlp(ln2(x))                       blocks.i.hook_resid_post
    [x = mix(h_first, x, gain)]                          hook_mix
    logits = readout(ln_final(x))                        unembed.hook_out

    attention   q, k, v = W_Q x + b_Q, W_K x + b_K, W_V x + b_V (per lane; a head has
                head_dim lanes, key/value heads may be shared by groups of query heads);
                q, k = rope(norm(q)), rope(norm(k)) where the model has them
                score_ij = (q_i . k_j) * scale + bias_h[i][j] - slope (i - j)   ALiBi
                pattern_ij = e^score_ij / (1 + sum_l e^score_il)   softmax1: a sink at 0
                  (or softmax: e^(s - max) / sum e^(s - max))
                z_i = sum_j pattern_ij v_j;  attn_out = W_O z + b_O
    mlp         post = act(W_gate x + b_gate) * (W_in x + b_in)    ReGLU with relu, SwiGLU
                  with silu (or, not gated, post = act(W_in x + b_in));
                mlp_out = W_out post + b_out;  new slots (the stream widens) start at 0
    norm        RMSNorm: y = w x / sqrt(mean(x^2) + eps); or LayerNorm:
                y = w (x - m) / sqrt(v + eps) + b, m = mean(x), v = mean((x - m)^2)
    mix         a block applied again (a later block that is the same one) and mixed with its
                first application: x = h + gain (x - h), h that block's resid_post
    readout     negative error: logit_t = -x[slot of t] (the slot holds an error, the
                smallest error wins); or linear: W_U x + b_U; or tied: W_E (scale x) + b_U

Every sum is added left to right in the order written, an affine map's over its non-zero
weights in source order and then its bias; in a rounding system that order defines the
model's values. What the weights leave out is left out: an absent weight is no term, a slot
that no term of a half-layer reaches keeps its value (no + 0), and a head with no value map or
no output map adds no term (``plan``).

A *carried* head (``plan``, rule 1: constant query, slope 0 or ln b, softmax1) keeps running
sums instead of attending to every position: O(1) per position, exactly the textbook value in
exact arithmetic; in a rounding system the carried order defines that head. It stands beside
the textbook head as nanoGPT puts flash attention beside its manual implementation.

Every trace, patch and ``run_with_cache`` runs this pass. An untraced call (no ``record``,
no ``patch``) of a model whose operations are all TinyAdder-36's runs the straight-line code
``codegen`` writes from ``plan`` instead: the same operations in the same order on the same
operands, less what the plan shows cannot matter (tests check the two bit for bit in every
number system); any other model runs this pass as written.

Trace points use TransformerLens names (n: positions in this call, t: all positions); the
ones in brackets only where the model has that operation:

    hook_embed, [hook_pos_embed], blocks.i.hook_resid_pre / hook_resid_mid / hook_resid_post,
    blocks.i.hook_attn_out, blocks.i.hook_mlp_out          [n][slot]
    [blocks.i.ln1.hook_normalized, blocks.i.ln2.hook_normalized, ln_final.hook_normalized]
                                                           [n][slot]
    blocks.i.attn.hook_q, [hook_rot_q]                     [n][query lane]
    blocks.i.attn.hook_k / hook_v, [hook_rot_k]            [n][key/value lane]
    blocks.i.attn.hook_z                                   [n][query lane]
    blocks.i.attn.hook_attn_scores / hook_pattern          [head][n][t] (None where masked)
    blocks.i.mlp.hook_pre / [hook_pre_linear] / hook_post  [n][unit]
    unembed.hook_out                                       [n][readout token]

``record(name, value)`` receives each point for this call's positions; ``patch={name: fn}``
replaces a value by ``fn(value)`` before it is used, in this call only. A patch is an
intervention and always takes effect: while a call patches a block's q, scores or pattern,
every head of that block attends in full (textbook); with any patch, every head's z reaches
W_O and every slot adds its half-layer's output. Scores and patterns are built only when
recorded, patched or needed by a textbook head; a carried head's pattern is shown as
e^score_ij / (1 + D_i), its own denominator.
"""

from dataclasses import dataclass, field
from functools import reduce
import operator
from types import SimpleNamespace
from typing import Dict, List, Tuple

from . import codegen
from .constants import MinusInfinity
from .numbers import Undecided

__all__ = ["KVCache", "derive", "forward", "greedy"]


# ---- the operations ------------------------------------------------------------------------

def add_up(terms, zero):
    """t_1 + t_2 + ..., left to right; no terms: 0."""
    return reduce(operator.add, terms) if terms else zero


def linear(x, W, zero):
    """y_t = sum_s W[s, t] x_s + b_t: in source order over the non-zero weights, then the bias
    (an absent bias is no term, so that y_t is exactly the sum of its terms). A factored
    weight W = A B maps x A first."""
    if W.first is not None:
        x = linear(x, W.first, zero)
    return [add_up([w * x[s] for s, w in column] + ([b] if b is not None else []), zero)
            for column, b in zip(W.columns, W.bias)]


def rms_norm(x, norm, ns):
    """RMSNorm: y_s = w_s x_s / sqrt(mean(x^2) + eps) (the mean as the program forms it)."""
    squares = add_up([v * v for v in x], ns.zero)
    mean = squares * norm.inv_n if norm.inv_n is not None else squares / norm.n
    root = ns.sqrt(mean + norm.eps)
    if norm.rsqrt:
        r = ns.one / root
        y = [v * r for v in x]
    else:
        y = [v / root for v in x]
    return y if norm.w is None else [v * w if w is not None else ns.zero
                                     for v, w in zip(y, norm.w)]


def layer_norm(x, norm, ns):
    """LayerNorm: y_s = w_s (x_s - m) / sqrt(v + eps) + b_s, (m, v) = ``moments(x)``, each
    w_s (.) + b_s one rounding (``fused``), as torch's CPU kernel applies it."""
    m, v = moments(x, norm, ns)
    root = ns.sqrt(v + norm.eps)
    r = ns.one / root if norm.rsqrt else None
    y = [(u - m) * r if r is not None else (u - m) / root for u in x]
    w, b = norm.w or (ns.one,) * norm.n, norm.b or (None,) * norm.n
    return [fused(y_s, ns.zero if w_s is None else w_s, ns.zero if b_s is None else b_s, ns)
            for y_s, w_s, b_s in zip(y, w, b)]


def moments(x, norm, ns):
    """(m, v): the mean m of x and v = mean((x - m)^2). A rounding system forms them in
    Welford's order, as torch's CPU kernel does (d = x_k - m; m = m + d / k;
    M = M + d (x_k - m); v = M / n); an exact one as written (the same real numbers, each
    square a square)."""
    if ns.exact:
        m = add_up(x, ns.zero) / norm.n
        squares = add_up([c * c for c in (u - m for u in x)], ns.zero)
    else:
        m = squares = ns.zero
        for k, u in enumerate(x, 1):
            d = u - m
            m = m + d / k
            squares = squares + d * (u - m)
    return m, squares * norm.inv_n if norm.inv_n is not None else squares / norm.n


def fused(a, w, b, ns):
    """a w + b rounded once (a fused multiply-add) in a system with ``fma`` (float, float32);
    elsewhere a w + b: exact in an exact system, and in an enclosure the product's error may
    be 0, so it holds the fused value too (decimal rounds twice)."""
    fma = getattr(ns, "fma", None)
    return fma(a, w, b) if fma is not None else a * w + b


def normalize(x, norm, ns):
    """x after its norm: ``layer_norm`` or ``rms_norm``."""
    return (layer_norm if norm.layer else rms_norm)(x, norm, ns)


def rope(x, p, freqs, ns):
    """Rotary positions: each lane pair (x_c, x_(c + d/2)) turned by the angle a = p f_c,
    to (x_c cos a - x_(c + d/2) sin a, x_c sin a + x_(c + d/2) cos a)."""
    half, out = len(x) // 2, list(x)
    for c, f in enumerate(freqs):
        a = p * f
        cos, sin = ns.cos(a), ns.sin(a)
        out[c] = x[c] * cos - x[c + half] * sin
        out[c + half] = x[c] * sin + x[c + half] * cos
    return out


def score(q, k, head, i, j):
    """The query at i against the key at j: (q . k) * scale + bias[i][j] - slope (i - j), the
    scale and the fixed bias only where the head has them (ALiBi's slope is 0 without one)."""
    s = add_up([a * b for a, b in zip(q, k)], None)  # a head has at least one lane
    if head.scale is not None:
        s = s / head.scale if head.divide else s * head.scale
    if head.bias is not None:
        s = s + head.bias.get((i, j), head.bias_default)
    return s - head.slope * (i - j)


def masked(head, i, j):
    """Whether key j is hidden from query i: a later key, or a fixed bias of -inf."""
    return j > i or (head.bias is not None
                     and isinstance(head.bias.get((i, j), head.bias_default), MinusInfinity))


def softmax1(scores, ns):
    """pattern_j = e^s_j / (1 + sum_l e^s_l): softmax with a sink, an extra logit fixed at 0,
    so the weights may sum to less than 1 (to nearly 0 when every score is very negative)."""
    e = [ns.exp(s) for s in scores]
    sink = ns.one + add_up(e, ns.zero)
    return [w / sink for w in e]


def softmax(scores, ns):
    """pattern_j = e^(s_j - m) / sum_l e^(s_l - m) with m the largest score (``ns.largest``,
    which a program subtracts against overflow; the pattern is the same for any m)."""
    m = ns.largest(scores)
    e = [ns.exp(s - m) for s in scores]
    total = add_up(e, ns.zero)
    return [w / total for w in e]


def softmax_parts(scores, ns):
    """The parts of a softmax that normalises after the weighted sum (as a fused attention
    kernel does): e_j = e^(s_j - m), m the largest score, and 1 / sum_l e_l; then
    z = (sum_j e_j v_j) * (1 / sum e)."""
    m = ns.largest(scores)
    e = [ns.exp(s - m) for s in scores]
    return e, ns.one / add_up(e, ns.zero)


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


def relu(x, zero):
    """max(x, 0). An enclosure around 0 (a hinge met exactly in the real-number model, up to
    what the enclosure cannot resolve) is not asked its sign: max is monotone, so the
    enclosure of [max(lo, 0), max(hi, 0)] holds every value (``clamped``)."""
    try:
        return x if x > 0 else zero
    except Undecided:
        return x.clamped()


def activation(name, x, ns):
    """relu(x) = max(x, 0); silu(x) = x / (1 + e^-x); gelu(x) = x (1 + erf(x / sqrt 2)) / 2."""
    if name == "relu":
        return relu(x, ns.zero)
    if name == "silu":
        return x / (ns.one + ns.exp(-x))
    if name == "gelu":
        return x * (ns.one + ns.erf(x / ns.sqrt(ns.const(2)))) / 2
    return x


def gated(name, gate, up, ns):
    """post_u = act(g_u) u_u; ReGLU is g u where g > 0, else 0 (no product with the zero),
    and relu(g) u for an enclosure of g around 0."""
    if name == "relu":
        return [_reglu(g, u, ns.zero) for g, u in zip(gate, up)]
    return [activation(name, g, ns) * u for g, u in zip(gate, up)]


def _reglu(g, u, zero):
    try:
        return g * u if g > 0 else zero
    except Undecided:
        return g.clamped() * u


def mix(first, second, gain):
    """x = first + (second - first) * gain, per slot: a block applied again, mixed with its
    first application."""
    return [f + (s - f) * gain for f, s in zip(first, second)]


def readout(x, slots):
    """Negative-absolute-error logits: logit_t = -x[slot of t]."""
    return [-x[s] for s in slots]


# ---- the memory of positions run (the KV cache) -------------------------------------------

@dataclass
class _Layer:
    """One block's memory: keys[pos][lane], values[pos][lane] (as scored: after any q/k norm
    and rotary positions), and per carried head h, sums[h][pos] = (N_pos, D_pos)."""

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


def _heads_of(rows, norm, freqs, heads, lanes, start, ns):
    """q or k rows as scored: each head's lanes normed (``norm``) and turned (``freqs``)."""
    out = []
    for a, row in enumerate(rows):
        row = list(row)
        for head in heads:
            part = [row[c] for c in lanes(head)]
            if norm is not None:
                part = normalize(part, norm, ns)
            if freqs:
                part = rope(part, start + a, freqs, ns)
            for c, value in zip(lanes(head), part):
                row[c] = value
        out.append(row)
    return out


def attention(ns, block, x, start, memory, hook, name, rows=None):
    """The attention half over positions start, start + 1, ... (x: their rows, after ln1):
    attn_out's rows. Every position's key and value enter the cache; ``rows`` (indices into
    x; None: all) are the positions whose output is wanted."""
    q = hook(f"{name}.hook_q", [linear(row, block.q, ns.zero) for row in x])
    k = hook(f"{name}.hook_k", [linear(row, block.k, ns.zero) for row in x])
    v = hook(f"{name}.hook_v", [linear(row, block.v, ns.zero) for row in x])
    if block.rope or block.q_norm is not None or block.k_norm is not None:
        heads = block.heads
        q = hook(f"{name}.hook_rot_q", _heads_of(q, block.q_norm, block.rope, heads,
                                                 lambda head: head.q_lanes, start, ns))
        k = hook(f"{name}.hook_rot_k", _heads_of(k, block.k_norm, block.rope, _groups(heads),
                                                 lambda head: head.kv_lanes, start, ns))
    memory.keys.extend(k)
    memory.values.extend(v)
    keys, values = memory.keys, memory.values
    rows = range(len(x)) if rows is None else rows
    positions = [start + a for a in rows]
    scores_name, pattern_name = f"{name}.hook_attn_scores", f"{name}.hook_pattern"
    textbook = any(p in hook.patch for p in (f"{name}.hook_q", scores_name, pattern_name))
    z = [[ns.zero] * len(block.q.columns) for _ in rows]
    wanted = {a: r for r, a in enumerate(rows)}
    for h, head in enumerate(block.heads):
        if head.carried:  # the cache carries the sums even while a patch overrides z
            sums = memory.sums[h]
            for a in range(len(x)):
                i = start + a
                e = ns.exp(score([head.q_const], [k[a][h]], head, i, i))
                value = carry(head, sums, e, v[a][h], ns)
                if a in wanted:
                    z[wanted[a]][h] = value

    def textbook_head(h):
        return textbook or not block.heads[h].carried

    def lanes(row, of):
        return [row[c] for c in of]

    shown = hook.wants(scores_name) or hook.wants(pattern_name)
    heads = [h for h in range(len(block.heads)) if shown or textbook_head(h)]
    stop = start + len(x)
    scores = [[[None if masked(head, i, j) else
                score(lanes(q[a], head.q_lanes), lanes(keys[j], head.kv_lanes), head, i, j)
                for j in range(stop)] for a, i in zip(rows, positions)]
              if h in heads else None for h, head in enumerate(block.heads)]
    if shown or textbook:
        scores = hook(scores_name, scores)
    normalise = softmax1 if block.softmax == "softmax1" else softmax
    after = block.normalise == "after" and pattern_name not in hook.patch
    pattern, parts = [None] * len(block.heads), {}
    for h in heads:
        if textbook_head(h) and after:
            parts[h] = [softmax_parts([s for s in row if s is not None], ns)
                        for row in scores[h]]
            pattern[h] = [_spread([w * inv for w in e], row)
                          for (e, inv), row in zip(parts[h], scores[h])]
        elif textbook_head(h):
            pattern[h] = [_spread(normalise([s for s in row if s is not None], ns), row)
                          for row in scores[h]]
        else:  # shown only: e^score over the carried denominator
            pattern[h] = [[ns.exp(s) / (ns.one + memory.sums[h][i][1]) if s is not None
                           else None for s in row] for row, i in zip(scores[h], positions)]
    if shown or textbook:
        pattern = hook(pattern_name, pattern)
    for h in heads:
        if textbook_head(h):
            head = block.heads[h]
            for a in range(len(rows)):
                seen = [(p, values[j]) for j, p in enumerate(pattern[h][a]) if p is not None]
                weights = parts[h][a][0] if h in parts else [p for p, _ in seen]
                for c, lane in zip(head.q_lanes, head.kv_lanes):
                    z[a][c] = attend(weights, [row[lane] for _, row in seen], ns.zero)
                    if h in parts:
                        z[a][c] = z[a][c] * parts[h][a][1]
    z = hook(f"{name}.hook_z", z)
    o = block.o if hook.patch else block.o_live
    return [linear(row, o, ns.zero) for row in z]


def _groups(heads):
    """One head per key/value head (the first query head that reads it)."""
    seen, out = set(), []
    for head in heads:
        if head.kv_lanes not in seen:
            seen.add(head.kv_lanes)
            out.append(head)
    return out


def _spread(weights, row):
    """``weights`` over the row's unmasked entries, placed back among its Nones."""
    it = iter(weights)
    return [next(it) if s is not None else None for s in row]


def mlp(ns, block, x, hook, name):
    """The FFN half (x: its rows, after ln2): mlp_out's rows, over the widened stream."""
    if block.gated:
        gate = hook(f"{name}.hook_pre", [linear(row, block.gate, ns.zero) for row in x])
        up = hook(f"{name}.hook_pre_linear", [linear(row, block.up, ns.zero) for row in x])
        post = [gated(block.act, g, u, ns) for g, u in zip(gate, up)]
    else:
        pre = hook(f"{name}.hook_pre", [linear(row, block.up, ns.zero) for row in x])
        post = [[activation(block.act, u, ns) for u in row] for row in pre]
    post = hook(f"{name}.hook_post", post)
    return [linear(row, block.down, ns.zero) for row in post]


def residual(x, out, writes):
    """x + out in the slots the half-layer writes (``writes``; None: every slot); the others
    keep x's value. A slot beyond x's width (the stream widens) is out's value alone."""
    width = len(x[0]) if x else 0
    return [[row[s] + d[s] if writes is None or s in writes else row[s] for s in range(width)]
            + d[width:] for row, d in zip(x, out)]


def _normed(rows, norm, hook, name, ns):
    """rows after a norm (recorded as ``name.hook_normalized``), or rows without one."""
    if norm is None:
        return rows
    return hook(f"{name}.hook_normalized", [normalize(row, norm, ns) for row in rows])


def logits(compiled, rows, ns):
    """The readout of the final rows (after ln_final)."""
    if compiled.readout is not None:
        return [readout(row, compiled.readout) for row in rows]
    if compiled.unembed_scale is not None:  # tied: the embedded slots, scaled
        rows = [_scaled(row, compiled.unembed_scale, ns) for row in rows]
    return [linear(row, compiled.unembed, ns.zero) for row in rows]


def _scaled(row, scale, ns):
    """A tied readout's input: each embedded slot times its scale (a slot without one: 0)."""
    out = [ns.zero] * len(row)
    for s, w in scale:
        out[s] = row[s] * w
    return out


# ---- the pass ------------------------------------------------------------------------------

def forward(compiled, tokens, past=None, record=None, patch=None, logits="all", names=None,
            last_row=False):
    """Run ``tokens`` (ids) at the positions after ``past`` (a KVCache): (logits, new cache).

    ``logits="all"``: the logits of every position of this call; ``"last"``: of the last only
    (a list of one row; the other positions compute only what later positions read). Logits
    are over the readout tokens, in readout order. ``names`` (a predicate on trace-point
    names) limits what ``record`` receives and so what is built; by default every point.
    ``last_row`` (with ``logits="last"``): the last block's attention and what follows it
    for the last position only, also under a patch or a record (their trace points there
    hold that one row), as an untraced pass does.
    """
    past = _EMPTY if past is None else past
    start, layers = len(past), past._extend(compiled)
    ns = compiled.ns
    with ns.arithmetic():
        if record is None and not patch and compiled.fast:
            # the fast path: straight-line code for these weights (codegen, plan)
            out = codegen.run(compiled, tokens, start, layers, logits, _OPS)
        elif codegen.on_ints(compiled):
            raise ValueError(f"{compiled.ns.describe()} decides tokens untraced (its cache "
                             f"holds integers); trace in the fraction system")
        else:
            # untraced, only the last position's logits wanted: the last block computes the
            # other positions' keys and values only, since nothing later reads their rows
            last = logits == "last" and (last_row or record is None and not patch)
            out = _traced(compiled, tokens, start, layers, _Hooks(record, patch, names), last)
            if logits == "last":
                out = out[-1:]
    return out, KVCache(start + len(tokens), tuple(layers))


def greedy(compiled, tokens, n_new, pick):
    """Greedy decoding with the KV cache on the fast path: the untraced calls ``forward`` makes
    for it (the prompt with ``logits="last"``, then each new token), fused into one memory of
    positions; ``pick(logits)`` is the index of the readout token to append. Appends to
    ``tokens`` and returns it. Only for a model ``codegen.decodes``."""
    with compiled.ns.arithmetic():
        return codegen.greedy(compiled, tokens, n_new, lambda: _EMPTY._extend(compiled), pick,
                              _OPS)


def _traced(compiled, tokens, start, layers, hook, last_only=False):
    """The pass above over this call's positions, block by block, every trace point
    (``last_only``: the last block's rows for the last position only)."""
    ns = compiled.ns
    x = hook("hook_embed", [list(compiled.embed[t]) for t in tokens])
    if compiled.pos:
        pos = hook("hook_pos_embed", [_position(compiled, start + a, ns) for a in range(len(x))])
        x = [[e + p if p is not None else e for e, p in zip(row, prow)]
             for row, prow in zip(x, pos)]
    for i, (block, memory) in enumerate(zip(compiled.blocks, layers)):
        name = f"blocks.{i}"
        x = hook(f"{name}.hook_resid_pre", x)
        rows = [len(x) - 1] if last_only and i == len(compiled.blocks) - 1 and x else None
        attn_out = hook(f"{name}.hook_attn_out", attention(
            ns, block, _normed(x, block.ln1, hook, f"{name}.ln1", ns), start, memory, hook,
            f"{name}.attn", rows))
        if rows is not None:
            x = x[-1:]
        x = hook(f"{name}.hook_resid_mid",
                 residual(x, attn_out, None if hook.patch else set(block.attn_writes)))
        mlp_out = hook(f"{name}.hook_mlp_out", mlp(
            ns, block, _normed(x, block.ln2, hook, f"{name}.ln2", ns), hook, f"{name}.mlp"))
        x = hook(f"{name}.hook_resid_post",
                 residual(x, mlp_out, None if hook.patch else set(block.mlp_writes)))
        if compiled.model.mix is not None and i == compiled.model.mix.first:
            first = x
    if compiled.model.mix is not None:
        gain = ns.const(compiled.model.mix.gain)
        x = hook("hook_mix", [mix(f, s, gain) for f, s in zip(first[-len(x):], x)])
    x = _normed(x, compiled.ln_final, hook, "ln_final", ns)
    return hook("unembed.hook_out", logits(compiled, x, ns))


def _position(compiled, p, ns):
    """The positional embedding's row at position p (None where it adds nothing); a factored
    one is the row A[p] times B, as a program computes F.embedding(p, A) @ B."""
    if isinstance(compiled.pos, tuple):
        rows, B = compiled.pos
        return linear(rows[p], B, ns.zero) if p in rows else [None] * compiled.model.width_embed
    row = [None] * compiled.model.width_embed
    for s, value in compiled.pos.get(p, ()):
        row[s] = value
    return row


_EMPTY = KVCache()
# what the generated code calls of this module (it does not import it: no circle)
_OPS = SimpleNamespace(linear=linear, score=score, softmax1=softmax1, attend=attend,
                       softmax=softmax, softmax_parts=softmax_parts, masked=masked,
                       normalize=normalize, heads_of=_heads_of, groups=_groups,
                       position=_position, residual=residual, mlp=mlp, normed=_normed,
                       logits=logits, hooks=_Hooks, mix=mix)


# ---- trace points that follow from others ---------------------------------------------------

DERIVED = ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "mlp.hook_pre",
           "mlp.hook_pre_linear", "mlp.hook_post", "hook_mlp_out", "hook_resid_post")


def derive(compiled, values):
    """Add to ``values`` (trace points over whole positions, by name) the points that follow
    from others by the pass's own formulas, where those are present and the point is not:
    resid_pre from the embedding or the previous resid_post; attn_out from z; resid_mid; the
    FFN's points; resid_post; the logits. The values are identical to an unpatched trace's (a
    compact JSON trace stores the rest: ``analysis.trace_json``). Only for the models whose
    blocks have no norms and whose readout is negative error (``compiled.fast``)."""
    if not compiled.fast:
        return values
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
            put(f"{n}.mlp.hook_post", lambda g, u: [gated(b.act, *r, ns) for r in zip(g, u)],
                f"{n}.mlp.hook_pre", f"{n}.mlp.hook_pre_linear")
            put(f"{n}.hook_mlp_out", lambda p: [linear(r, b.down, zero) for r in p],
                f"{n}.mlp.hook_post")
            put(f"{n}.hook_resid_post", lambda x, m: residual(x, m, set(b.mlp_writes)),
                f"{n}.hook_resid_mid", f"{n}.hook_mlp_out")
            before = f"{n}.hook_resid_post"
        put("unembed.hook_out", lambda x: [readout(r, compiled.readout) for r in x], before)
    return values
