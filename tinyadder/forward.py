"""The forward pass: one pass for every use (generation, traces, patches), in any number system.

``compile_model(model, ns)`` turns a model's weight tensors (``weights.tensors``) into numbers
of ``ns`` and plans what can be skipped; ``forward(compiled, tokens, past)`` runs the positions
after ``past`` (a KV cache) and returns their logits and the extended cache. Nothing here
knows what the model computes.

Every value is computed by one formula, in one order of operations, whatever is recorded,
patched or skipped; in a rounding system that order is the definition of the model's values:

    affine map   y_t = b_t + w_1 x_{s_1} + w_2 x_{s_2} + ...  over the non-zero weights in
                 source order (a zero bias is left out, and so is a weight of exactly 1);
    attention    score_ij = q_i k_j - slope (i - j), e_ij = exp(score_ij),
                 pattern_ij = e_ij / (1 + e_i0 + e_i1 + ... + e_ii),
                 z_i = 0 + pattern_i0 v_0 + pattern_i1 v_1 + ...;
                 a carried head (rule 1) instead: N_i = r N_(i-1) + e_i v_i,
                 D_i = r D_(i-1) + e_i (r = 1: no product), z_i = N_i / (1 + D_i);
    attn_out     b_O + W_O z over the live heads (rule 2); resid_mid = resid_pre + attn_out
                 in the slots attention writes (the others are resid_pre's);
    FFN          post_u = relu(gate_u) up_u, i.e. gate_u * up_u if gate_u > 0, else 0;
                 resid_post = resid_mid + mlp_out in the slots the FFN writes, and a new
                 slot (the stream widens) is mlp_out's value, or 0 if nothing writes it;
    logits       logit_t = -resid_post[readout slot of t].

Rules read off the weights (never off what the model is for) decide what is skipped:

1. Carried softmax1 sums. A live head whose query has no weights (q = b_Q at every position)
   and whose ALiBi slope m is 0 or ln b has e_ij = exp(q k_j) r^(i-j) with r = exp(-m) = 1/b,
   so z_i = N_i / (1 + D_i) with the sums above: O(1) per position instead of O(i). In exact
   arithmetic this is the textbook value (tests/oracle.py); other heads attend in full.
2. Dead heads and units. A head with no value map or no output map (``weights.live_heads``)
   and an FFN unit with no output row add nothing: they are computed only for a trace.
3. Liveness. With ``logits="last"`` only the last position of a call needs logits; a backward
   pass over the blocks finds what the other positions must still compute (keys, values and
   whatever slots later positions read).
4. The first block reads the embedding, so its keys, values, exp(q k) and e v depend only on
   the token: they are computed once per token id.
5. Shared products, in an exact system only (``ns.exact``: the fraction system and the
   enclosures that decide it, where a product's grouping does not change its value). FFN units
   with the same gate whose up map is one weight on the same slot x share one product:
   post_u = w_u (g x) instead of g (w_u x) (layer 0's ten candidates: one long product
   instead of ten). A rounding system keeps the order above.

A traced call runs block by block over all its positions, so that every trace point holds the
whole call; an untraced call runs position by position through two straight-line functions
written from the plan (``_step_source``: one for a position whose logits are wanted, one for
the others). Both perform the same operations on the same operands; tests/test_one_answer.py
checks them bit for bit, tests/test_one_pass.py against the textbook oracle.

Trace points use TransformerLens names. An untraced call (no ``record``, no ``patch``)
materialises none; a traced one computes every head and unit, and the O(t^2) scores and
patterns only when ``record`` wants them (``names``) or ``patch`` changes them.
``record(name, value)`` is called at each one with the value for the positions of this call;
``patch={name: fn}`` replaces a value by ``fn(value)`` before it is used, in this call only. Shapes (n = positions in this call, t = all positions):

    hook_embed, blocks.{i}.hook_resid_pre / hook_resid_mid / hook_resid_post,
    blocks.{i}.hook_attn_out, blocks.{i}.hook_mlp_out          [n][slot]
    blocks.{i}.attn.hook_q / hook_k / hook_v / hook_z          [n][head]
    blocks.{i}.attn.hook_attn_scores / hook_pattern            [head][n][t] (None where masked)
    blocks.{i}.mlp.hook_pre / hook_pre_linear / hook_post      [n][unit]
    unembed.hook_out                                           [n][readout token]

A trace shows a carried head's pattern as e_ij / (1 + D_i). A patch is an intervention: while
a call patches a layer's q, scores or pattern, that layer's z is sum_j pattern_ij v_j over the
(patched) pattern; with any patch, W_O includes the dead heads and every slot adds its
attention and FFN output.
"""

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from .numbers import Ln, NumberSystem
from .weights import live_heads, tensors


def _affine_source(linear, t, var, const):
    """The text of target t of a Linear, b_t + w_1 x_1 + w_2 x_2 + ..., with ``var(i)``
    naming source i and ``const(w)`` naming a constant. A zero bias is left out, and so is a
    weight of exactly 1 (1 x is x in every number system); no terms at all: the zero bias."""
    terms = [const(linear.bias[t])] if linear.given[t] else []
    terms += [var(i) if i in linear.unit[t] else f"{const(w)} * {var(i)}"
              for i, w in linear.rows[t]]
    return " + ".join(terms) or const(linear.bias[t])  # the bias, zero


class _Constants(dict):
    """An environment for generated code: ``name(value)`` binds a constant to a fresh name."""

    def name(self, value):
        key = f"c{len(self)}"
        self[key] = value
        return key


@dataclass(frozen=True)
class Linear:
    """A sparse affine map: out_t = bias_t + sum over (i, w) in rows[t] of w x_i."""

    rows: Tuple[Tuple[Tuple[int, object], ...], ...]  # non-zero weights, in source order
    bias: Tuple[object, ...]
    given: Tuple[bool, ...] = ()    # per target: the bias is not zero
    unit: Tuple[frozenset, ...] = ()  # per target: the sources whose weight is exactly 1
    fns: Tuple[object, ...] = field(init=False, default=())  # out_t as compiled functions

    def __post_init__(self):
        n = len(self.rows)
        object.__setattr__(self, "given", self.given or (True,) * n)
        object.__setattr__(self, "unit", self.unit or (frozenset(),) * n)
        fns = []
        for t in range(n):
            env = _Constants()
            source = _affine_source(self, t, "x[{}]".format, env.name)
            fns.append(eval(f"lambda x: {source}", env))  # noqa: S307 (built from weights)
        object.__setattr__(self, "fns", tuple(fns))

    def __call__(self, x):
        return [f(x) for f in self.fns]

    def writes(self):
        """Targets with a term or a bias."""
        return tuple(t for t, (row, b) in enumerate(zip(self.rows, self.given)) if row or b)


def _linear(ns, weight, bias, keep=None):
    """A Linear from a weight tensor and its bias vector (``keep``: only these sources)."""
    columns = [[(i, w) for i, w in weight.column(col) if keep is None or i in keep]
               for col in weight.cols]
    return Linear(rows=tuple(tuple((i, ns.const(w)) for i, w in column) for column in columns),
                  bias=tuple(ns.const(bias.entries.get((None, col), 0)) for col in weight.cols),
                  given=tuple((None, col) in bias.entries for col in weight.cols),
                  unit=tuple(frozenset(i for i, w in column if w == 1) for column in columns))


@dataclass(frozen=True)
class Head:
    """One head: ``slope`` as ``ns.score`` takes it; a carried head (rule 1) has ``decay`` r
    (None when r = 1) and, if its key has no weights either, the constant ``exp_qk``."""

    q_const: object                 # b_Q when the query has no weights, else None
    slope: object
    carried: bool
    decay: object
    exp_qk: object


@dataclass(frozen=True)
class CompiledBlock:
    q: Linear
    k: Linear
    v: Linear
    o: Linear                       # W_O over every head (used with a patch)
    o_live: Linear                  # W_O over the live heads
    gate: Linear
    up: Linear
    down: Linear
    heads: Tuple[Head, ...]
    live: Tuple[int, ...]           # rule 2
    units: Tuple[int, ...]          # rule 2: units with an output row
    hist_heads: Tuple[int, ...]     # rule 3: what positions without logits compute
    hist_units: Tuple[int, ...]
    attn_writes: Tuple[int, ...]    # slots o_live writes
    mlp_writes: Tuple[int, ...]     # slots the FFN writes
    hist_mid: Tuple[int, ...]       # ... and which of them positions without logits need
    hist_post: Tuple[int, ...]
    width_in: int
    width_out: int
    token_kv: Optional[Dict[int, tuple]]  # rule 4 (first block only), filled on first use

    @property
    def slopes(self):
        return tuple(h.slope for h in self.heads)


@dataclass(frozen=True)
class Compiled:
    """A model's weights as numbers of one number system, indexed for the forward pass."""

    model: object
    ns: object
    embed: Tuple[Tuple[object, ...], ...]
    blocks: Tuple[CompiledBlock, ...]
    readout: Tuple[int, ...]
    readout_tokens: Tuple[int, ...]


def _slope(ns, raw):
    """A slope as ``ns.score`` takes it, converted once: ``ns.slope(raw)``, or the raw
    constant for a number system written before the interface had ``slope``."""
    convert = getattr(ns, "slope", None)
    return convert(raw) if convert else raw


def _head(ns, raw_slope, q_row, q_bias, k_row, k_bias, live):
    """Rule 1: carried when live, the query has no weights and the slope is 0 or ln b."""
    slope = _slope(ns, raw_slope if raw_slope is not None else 0)
    q_const = q_bias if not q_row else None
    carried = live and q_const is not None and (raw_slope is None or isinstance(raw_slope, Ln))
    decay = exp_qk = None
    if carried:
        if raw_slope is not None and raw_slope.base != 1:
            decay = ns.const(1 / Fraction(raw_slope.base))
        if not k_row:
            exp_qk = ns.exp_score(ns.score(q_const * k_bias, slope, 0))
    return Head(q_const, slope, carried, decay, exp_qk)


def _reads(linear, targets):
    """The sources that ``targets`` of a Linear read."""
    return {i for t in targets for i, _ in linear.rows[t]}


@lru_cache(maxsize=64)
def compile_model(model, ns: NumberSystem):
    """The model's weights converted to ``ns`` and the plan of rules 1-4 (memoised per model
    and number system)."""
    t = {tensor.name: tensor for tensor in tensors(model)}
    vocab_embed = t["W_E"]
    embed = []
    for token in model.vocab:
        row = [ns.zero] * model.width_embed
        for j, slot in enumerate(vocab_embed.cols):
            if (token, slot) in vocab_embed.entries:
                row[j] = ns.const(vocab_embed.entries[token, slot])
        embed.append(tuple(row))

    raw = []
    for i, block in enumerate(model.blocks):
        a, m = f"blocks.{i}.attn", f"blocks.{i}.mlp"
        names = block.attn.heads
        live = tuple(names.index(h) for h in live_heads(block.attn))
        q, k, v = (_linear(ns, t[f"{a}.W_{x}"], t[f"{a}.b_{x}"]) for x in "QKV")
        slopes = t[f"{a}.slopes"].entries
        heads = tuple(_head(ns, slopes.get((None, h)), q.rows[j], q.bias[j], k.rows[j],
                            k.bias[j], j in live) for j, h in enumerate(names))
        down = _linear(ns, t[f"{m}.W_out"], t[f"{m}.b_out"])
        units = tuple(sorted({u for row in down.rows for u, _ in row}))
        raw.append(dict(q=q, k=k, v=v, heads=heads, live=live, units=units, down=down,
                        o=_linear(ns, t[f"{a}.W_O"], t[f"{a}.b_O"]),
                        o_live=_linear(ns, t[f"{a}.W_O"], t[f"{a}.b_O"], keep=set(live)),
                        gate=_linear(ns, t[f"{m}.W_gate"], t[f"{m}.b_gate"]),
                        up=_linear(ns, t[f"{m}.W_in"], t[f"{m}.b_in"]),
                        width_in=block.width_in, width_out=block.width_out))

    # Rule 3, backward over the blocks: what do positions without logits need?
    needed = set()  # slots of a block's output that later positions read
    for b in reversed(raw):
        b["attn_writes"], b["mlp_writes"] = b["o_live"].writes(), b["down"].writes()
        b["hist_post"] = tuple(s for s in b["mlp_writes"] if s in needed)
        b["hist_units"] = tuple(u for u in b["units"]
                                if any(u == w for s in needed for w, _ in b["down"].rows[s]))
        mid = {s for s in needed if s < b["width_in"]}
        mid |= _reads(b["gate"], b["hist_units"]) | _reads(b["up"], b["hist_units"])
        b["hist_mid"] = tuple(s for s in b["attn_writes"] if s in mid)
        b["hist_heads"] = tuple(h for h in b["live"]
                                if any(h == j for s in mid for j, _ in b["o_live"].rows[s]))
        hist_q = [h for h in b["hist_heads"] if not b["heads"][h].carried]
        needed = (mid | _reads(b["k"], b["live"]) | _reads(b["v"], b["live"])
                  | _reads(b["q"], hist_q))
    blocks = tuple(CompiledBlock(token_kv={} if i == 0 else None, **b)
                   for i, b in enumerate(raw))
    tokens = tuple(model.readout)
    return Compiled(model, ns, tuple(embed), blocks,
                    tuple(model.slots.index(model.readout[tok]) for tok in tokens),
                    tuple(model.vocab.index(tok) for tok in tokens))


@dataclass
class _Layer:
    """One block's memory of the positions run: keys[pos][head], values[pos][head], and per
    carried head h, sums[h][pos] = (N_pos, D_pos)."""

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

    def _extend(self, compiled):
        if not self.layers:
            return [_Layer(sums={h: [] for h, head in enumerate(b.heads) if head.carried})
                    for b in compiled.blocks]
        return [layer if len(layer.keys) == self.length else layer.prefix(self.length)
                for layer in self.layers]


def _kve(ns, block, row, k=None):
    """(k, v, e, e v) of every head at one position: e = exp(q k) for carried heads, else
    None. Given ``k`` (keys computed already), only e."""
    keys = block.k(row) if k is None else k
    e = [None] * len(keys)
    for j, h in enumerate(block.heads):
        if h.carried:
            e[j] = h.exp_qk if h.exp_qk is not None else ns.exp_score(
                ns.score(h.q_const * keys[j], h.slope, 0))
    if k is not None:
        return e
    values = block.v(row)  # and e v, the carried sums' term, once per token too
    return keys, values, e, [x * y if x is not None else None for x, y in zip(e, values)]


def _carry(ns, head, sums, e, v):
    """Rule 1: append (N_i, D_i) from (N_(i-1), D_(i-1)); return z_i = N_i / (1 + D_i)."""
    n, d = sums[-1] if sums else (ns.zero, ns.zero)
    r = head.decay
    if r is None:
        n, d = n + e * v, d + e
    else:
        n, d = r * n + e * v, r * d + e
    sums.append((n, d))
    return n / (ns.one + d)


def _weights(ns, head, q, keys, h, pos):
    """e_ij = exp(q k_j - slope (pos - j)) for j = 0..pos."""
    return [ns.exp_score(ns.score(q * keys[j][h], head.slope, pos - j))
            for j in range(pos + 1)]


def _attend(ns, weights, values, h):
    """z = sum_j pattern_j v_j with pattern_j = e_j / (1 + sum_l e_l) (softmax1)."""
    denom = sum(weights, ns.one)
    return sum((w / denom * values[j][h] for j, w in enumerate(weights)), ns.zero)


def _step_source(compiled, full):
    """Straight-line Python for one position of an untraced call, written from the plan.

    ``full``: everything up to the logits (returned); else only what later positions read
    (rule 3; returns None). Each line is the same operation, on the same operands, as the
    traced pass performs (tests/test_one_answer.py checks them bit for bit); slots are local
    variables, constants are bound by name.
    """
    exact = getattr(compiled.ns, "exact", False)  # rule 5 regroups products: exact systems only
    env = _Constants(zero=compiled.ns.zero, one=compiled.ns.one, ns=compiled.ns,
                     embed=compiled.embed, kve=_kve, attend=_attend, weights=_weights)
    c = env.name
    lines = ["def step(token, pos, layers):", "    x = embed[token]"]
    row = [f"x[{j}]" for j in range(len(compiled.embed[0]))]
    for i, block in enumerate(compiled.blocks):
        n_heads = len(block.heads)
        lines.append(f"    # block {i}: attention")
        lines.append(f"    L = layers[{i}]")
        if block.token_kv is not None:  # rule 4
            memo = c(block.token_kv)
            lines += [f"    k, v, e, ev = {memo}.get(token) or "
                      f"{memo}.setdefault(token, kve(ns, {c(block)}, x))"]
        else:
            src = lambda lin, h: _affine_source(lin, h, row.__getitem__, c)  # noqa: E731
            lines.append(f"    k = [{', '.join(src(block.k, h) for h in range(n_heads))}]")
            lines.append(f"    v = [{', '.join(src(block.v, h) for h in range(n_heads))}]")
            if all(h.exp_qk is not None for h in block.heads if h.carried):
                lines.append(f"    e = {c([h.exp_qk for h in block.heads])}")  # constants
            else:
                lines.append(f"    e = kve(ns, {c(block)}, None, k)")
            ev = [f"e[{h}] * v[{h}]" if block.heads[h].carried else "None"
                  for h in range(n_heads)]
            lines.append(f"    ev = [{', '.join(ev)}]")
        lines += ["    L.keys.append(k)", "    L.values.append(v)"]
        heads = block.live if full else block.hist_heads
        for h in block.live:
            head = block.heads[h]
            if head.carried:  # rule 1, as _carry
                lines.append(f"    s = L.sums[{h}]")
                lines.append("    n, d = s[-1] if s else (zero, zero)")
                if head.decay is None:
                    lines.append(f"    n, d = n + ev[{h}], d + e[{h}]")
                else:
                    r = c(head.decay)
                    lines.append(f"    n, d = {r} * n + ev[{h}], {r} * d + e[{h}]")
                lines.append("    s.append((n, d))")
                if h in heads:
                    lines.append(f"    z{h} = n / (one + d)")
            elif h in heads:
                q = _affine_source(block.q, h, row.__getitem__, c)
                lines.append(f"    z{h} = attend(ns, weights(ns, {c(head)}, {q}, L.keys, {h}, "
                             f"pos), L.values, {h})")
        mid = list(row)
        for s in (block.attn_writes if full else block.hist_mid):
            out = _affine_source(block.o_live, s, "z{}".format, c)
            lines.append(f"    m{i}_{s} = {row[s]} + ({out})")
            mid[s] = f"m{i}_{s}"
        lines.append(f"    # block {i}: FFN")
        shared = {}  # rule 5: (gate text, up's source) -> units whose up is one weight on it
        for u in (block.units if full else block.hist_units):
            gate = _affine_source(block.gate, u, mid.__getitem__, c)
            up_row = block.up.rows[u]
            if exact and len(up_row) == 1 and not block.up.given[u]:
                shared.setdefault((gate, up_row[0][0]), []).append(u)
                continue
            up = _affine_source(block.up, u, mid.__getitem__, c)
            lines.append(f"    g = {gate}")
            lines.append(f"    p{u} = g * ({up}) if g > zero else zero")  # 0, in ns
        for (gate, source), units in shared.items():
            lines.append(f"    g = {gate}")
            lines.append(f"    t = g * {mid[source]} if g > zero else zero")
            for u in units:
                weight = block.up.rows[u][0][1]
                lines.append(f"    p{u} = t" if source in block.up.unit[u] else
                             f"    p{u} = {c(weight)} * t")
        post = mid + ["zero"] * (block.width_out - block.width_in)
        for s in (block.mlp_writes if full else block.hist_post):
            out = _affine_source(block.down, s, "p{}".format, c)
            new = s >= block.width_in  # a new slot is the FFN's output alone
            lines.append(f"    y{i}_{s} = {out}" if new else f"    y{i}_{s} = {post[s]} + ({out})")
            post[s] = f"y{i}_{s}"
        row = post
    lines.append(f"    return [{', '.join('-' + row[s] for s in compiled.readout)}]"
                 if full else "    return None")
    # constants become default arguments: local names are the fastest in CPython
    lines[0] = "def step(token, pos, layers, " + ", ".join(f"{k}={k}" for k in env) + "):"
    return "\n".join(lines) + "\n", env


def _step(compiled, full):
    """The compiled step function (memoised on the compiled model)."""
    key = "_step_full" if full else "_step_hist"
    fn = compiled.__dict__.get(key)
    if fn is None:
        source, env = _step_source(compiled, full)
        exec(compile(source, f"<tinyadder step, {key[6:]}>", "exec"), env)  # noqa: S102
        fn = env["step"]
        object.__setattr__(compiled, key, fn)
        object.__setattr__(compiled, key + "_source", source)
    return fn


def _traced_attention(ns, block, x, start, layer, hook, wanted, name, patched):
    """Attention for a traced or patched call, every head and trace point."""
    n, heads = len(x), block.heads
    q = hook(f"{name}.hook_q", [block.q(row) for row in x])
    k = hook(f"{name}.hook_k", [block.k(row) for row in x])
    v = hook(f"{name}.hook_v", [block.v(row) for row in x])
    layer.keys.extend(k)
    layer.values.extend(v)
    total = start + n
    scores_name, pattern_name = f"{name}.hook_attn_scores", f"{name}.hook_pattern"
    textbook = any(p in patched for p in (f"{name}.hook_q", scores_name, pattern_name))
    z = [[None] * len(heads) for _ in range(n)]
    for h, head in enumerate(heads):
        if head.carried:  # the cache carries the sums even while a patch overrides z
            sums = layer.sums.setdefault(h, [])
            for a in range(n):
                e = head.exp_qk if head.exp_qk is not None else ns.exp_score(
                    ns.score(head.q_const * k[a][h], head.slope, 0))
                z[a][h] = _carry(ns, head, sums, e, v[a][h])
    materialise = textbook or wanted(scores_name) or wanted(pattern_name)
    if materialise:
        scores = hook(scores_name, [[[ns.score(q[a][h] * layer.keys[j][h], head.slope,
                                               start + a - j)
                                      if j <= start + a else None for j in range(total)]
                                     for a in range(n)] for h, head in enumerate(heads)])
        pattern = []
        for h, head in enumerate(heads):
            rows = []
            for a in range(n):
                e = [ns.exp_score(s) if s is not None else None for s in scores[h][a]]
                if head.carried and not textbook:
                    denom = ns.one + layer.sums[h][start + a][1]
                else:
                    denom = sum((w for w in e if w is not None), ns.one)
                rows.append([w / denom if w is not None else None for w in e])
            pattern.append(rows)
        pattern = hook(pattern_name, pattern)
    for h, head in enumerate(heads):
        if head.carried and not textbook:
            continue
        for a in range(n):
            if materialise:
                z[a][h] = sum((p * layer.values[j][h] for j, p in enumerate(pattern[h][a])
                               if p is not None), ns.zero)
            else:
                z[a][h] = _attend(ns, _weights(ns, head, q[a][h], layer.keys, h, start + a),
                                  layer.values, h)
    z = hook(f"{name}.hook_z", z)
    attn_out = hook(name.replace(".attn", ".hook_attn_out"), _attn_out(block, z, patched))
    return _resid_mid(block, x, attn_out, patched)


# The half-layers' formulas after z, shared by the traced pass and ``derive``.
def _attn_out(block, z, patched=False):
    o = block.o if patched else block.o_live
    return [o(row) for row in z]


def _resid_mid(block, x, attn_out, patched=False):
    writes = set(range(block.width_in)) if patched else set(block.attn_writes)
    return [[r + d if s in writes else r for s, (r, d) in enumerate(zip(row, out))]
            for row, out in zip(x, attn_out)]


def _post(ns, gate, up):
    return [[g * u if g > 0 else ns.zero for g, u in zip(gr, ur)] for gr, ur in zip(gate, up)]


def _resid_post(ns, block, x, mlp_out, patched=False):
    pad = [ns.zero] * (block.width_out - block.width_in)
    writes = set(range(block.width_out)) if patched else set(block.mlp_writes)
    return [[d if s >= block.width_in else r + d if s in writes else r
             for s, (r, d) in enumerate(zip(row + pad, out))] for row, out in zip(x, mlp_out)]


def _traced_mlp(ns, block, x, hook, name, patched):
    """The FFN for a traced or patched call, every unit and trace point."""
    gate = hook(f"{name}.mlp.hook_pre", [block.gate(row) for row in x])
    up = hook(f"{name}.mlp.hook_pre_linear", [block.up(row) for row in x])
    post = hook(f"{name}.mlp.hook_post", _post(ns, gate, up))
    mlp_out = hook(f"{name}.hook_mlp_out", [block.down(row) for row in post])
    return _resid_post(ns, block, x, mlp_out, patched)


def derive(compiled, values):
    """Add to ``values`` (trace points over whole positions, by name) the points that follow
    from others by the pass's own formulas, where those are present and the point is not:
    resid_pre from the embedding or the previous resid_post; attn_out from z; resid_mid;
    the FFN's pre, pre_linear, post and mlp_out; resid_post; the logits. The same functions
    as the traced pass, so the values are identical to an unpatched trace's (a compact JSON
    trace stores the rest: ``analysis.trace_json``)."""
    ns = compiled.ns

    def put(name, make, *needs):
        if name not in values and all(n in values for n in needs):
            values[name] = make(*(values[n] for n in needs))

    with ns.arithmetic():
        before = "hook_embed"
        for i, block in enumerate(compiled.blocks):
            n = f"blocks.{i}"
            put(f"{n}.hook_resid_pre", lambda x: x, before)
            put(f"{n}.hook_attn_out", lambda z: _attn_out(block, z), f"{n}.attn.hook_z")
            put(f"{n}.hook_resid_mid", lambda x, a: _resid_mid(block, x, a),
                f"{n}.hook_resid_pre", f"{n}.hook_attn_out")
            put(f"{n}.mlp.hook_pre", lambda x: [block.gate(r) for r in x], f"{n}.hook_resid_mid")
            put(f"{n}.mlp.hook_pre_linear", lambda x: [block.up(r) for r in x],
                f"{n}.hook_resid_mid")
            put(f"{n}.mlp.hook_post", lambda g, u: _post(ns, g, u), f"{n}.mlp.hook_pre",
                f"{n}.mlp.hook_pre_linear")
            put(f"{n}.hook_mlp_out", lambda p: [block.down(r) for r in p], f"{n}.mlp.hook_post")
            put(f"{n}.hook_resid_post", lambda x, m: _resid_post(ns, block, x, m),
                f"{n}.hook_resid_mid", f"{n}.hook_mlp_out")
            before = f"{n}.hook_resid_post"
        put("unembed.hook_out", lambda x: [[-r[s] for s in compiled.readout] for r in x], before)
    return values


DERIVED = ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "mlp.hook_pre",
           "mlp.hook_pre_linear", "mlp.hook_post", "hook_mlp_out", "hook_resid_post")


def forward(compiled, tokens, past=None, record=None, patch=None, logits="all", names=None):
    """Run ``tokens`` (ids) at the positions after ``past``: (logits, new cache).

    ``logits="all"``: the logits of every position of this call; ``"last"``: of the last
    only (a list of one row), computing at the other positions only what later positions read.
    Logits are over the readout tokens, in readout order: logit_t = -resid[readout slot of t].
    ``names`` (a predicate on trace-point names) limits what ``record`` receives and so what
    is materialised; by default every trace point.
    """
    past = _EMPTY if past is None else past
    if record is None and not patch:
        return _untraced(compiled, tokens, past, logits)
    ns = compiled.ns
    keep = names or (lambda name: True)
    patch = patch or {}

    def wanted(name):
        return name in patch or (record is not None and keep(name))

    def hook(name, value):
        if name in patch:
            value = patch[name](value)
        if record is not None and keep(name):
            record(name, value)
        return value

    start, layers = len(past), past._extend(compiled)
    with ns.arithmetic():
        x = hook("hook_embed", [list(compiled.embed[t]) for t in tokens])
        for i, (block, layer) in enumerate(zip(compiled.blocks, layers)):
            name = f"blocks.{i}"
            x = hook(f"{name}.hook_resid_pre", x)
            x = hook(f"{name}.hook_resid_mid", _traced_attention(
                ns, block, x, start, layer, hook, wanted, f"{name}.attn", patch))
            x = hook(f"{name}.hook_resid_post", _traced_mlp(ns, block, x, hook, name, patch))
        out = hook("unembed.hook_out", [[-row[s] for s in compiled.readout] for row in x])
    return out, KVCache(start + len(tokens), tuple(layers))


def _untraced(compiled, tokens, past, logits):
    """An untraced call: position by position through the step functions (``_step``)."""
    start, layers = len(past), past._extend(compiled)
    hist, every = _step(compiled, False), _step(compiled, True)
    with compiled.ns.arithmetic():
        if logits == "all" or not tokens:
            out = [every(t, start + a, layers) for a, t in enumerate(tokens)]
        else:
            for a in range(len(tokens) - 1):
                hist(tokens[a], start + a, layers)
            out = [every(tokens[-1], start + len(tokens) - 1, layers)]
    return out, KVCache(start + len(tokens), tuple(layers))


_EMPTY = KVCache()
