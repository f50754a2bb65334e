"""The forward pass, written out by hand over lists, in any number system.

``compile_model(model, ns)`` turns a model's named tables into index lists of numbers in ``ns``;
``forward(compiled, tokens, past)`` runs the positions after ``past`` (a KV cache) and returns
their logits and the extended cache. Nothing here knows what the model computes.

Trace points use TransformerLens names. ``record(name, value)`` is called at each one with the
value for the positions of this call; ``patch={name: fn}`` replaces a value by ``fn(value)``
before it is used, in this call only. Shapes (n = positions in this call, t = all positions):

    hook_embed, blocks.{i}.hook_resid_pre / hook_resid_mid / hook_resid_post,
    blocks.{i}.hook_attn_out, blocks.{i}.hook_mlp_out          [n][slot]
    blocks.{i}.attn.hook_q / hook_k / hook_v / hook_z          [n][head]
    blocks.{i}.attn.hook_attn_scores / hook_pattern            [head][n][t] (None where masked)
    blocks.{i}.mlp.hook_pre / hook_pre_linear / hook_post      [n][unit]
    unembed.hook_out                                           [n][readout token]
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import List, Tuple


@dataclass(frozen=True)
class Linear:
    """A sparse map: out_j = sum_{(i, w) in rows[j]} w x_i + bias[j]."""

    rows: Tuple[Tuple[Tuple[int, object], ...], ...]
    bias: Tuple[object, ...]

    def __call__(self, x):
        return [sum((w * x[i] for i, w in row), b) for row, b in zip(self.rows, self.bias)]


@dataclass(frozen=True)
class CompiledBlock:
    q: Linear
    k: Linear
    v: Linear
    o: Linear
    slopes: Tuple[object, ...]
    gate: Linear
    up: Linear
    down: Linear
    width_in: int
    width_out: int


@dataclass(frozen=True)
class Compiled:
    """A model's weights as numbers of one number system, indexed for the forward pass."""

    model: object
    ns: object
    embed: Tuple[Tuple[object, ...], ...]
    blocks: Tuple[CompiledBlock, ...]
    readout: Tuple[int, ...]
    readout_tokens: Tuple[int, ...]


def _linear(ns, table, bias, sources, targets):
    """Index a from->to table as one row of (source index, weight) per target."""
    rows = {t: [] for t in targets}
    for s, row in table.items():
        for t, w in row.items():
            rows[t].append((sources.index(s), ns.const(w)))
    return Linear(tuple(tuple(rows[t]) for t in targets),
                  tuple(ns.const(bias.get(t, 0)) for t in targets))


@lru_cache(maxsize=64)
def compile_model(model, ns):
    """The model's weights converted to ``ns`` (memoised per model and number system)."""
    slots = model.slots
    embed = []
    for token in model.vocab:
        row = [ns.zero] * model.width_embed
        for s, w in model.W_E.get(token, {}).items():
            row[slots.index(s)] = ns.const(w)
        embed.append(tuple(row))
    blocks = []
    for b in model.blocks:
        a, m = b.attn, b.mlp
        inp, wide = slots[:b.width_in], slots[:b.width_out]
        blocks.append(CompiledBlock(
            q=_linear(ns, a.W_Q, a.b_Q, inp, a.heads),
            k=_linear(ns, a.W_K, a.b_K, inp, a.heads),
            v=_linear(ns, a.W_V, a.b_V, inp, a.heads),
            o=_linear(ns, a.W_O, a.b_O, a.heads, inp),
            slopes=tuple(a.slopes.get(h, 0) for h in a.heads),
            gate=_linear(ns, m.W_gate, m.b_gate, inp, m.units),
            up=_linear(ns, m.W_in, m.b_in, inp, m.units),
            down=_linear(ns, m.W_out, m.b_out, m.units, wide),
            width_in=b.width_in, width_out=b.width_out))
    tokens = tuple(model.readout)
    return Compiled(model, ns, tuple(embed), tuple(blocks),
                    tuple(slots.index(model.readout[t]) for t in tokens),
                    tuple(model.vocab.index(t) for t in tokens))


@dataclass(frozen=True)
class KVCache:
    """Keys and values of the positions already run: keys[layer][pos][head]."""

    keys: Tuple[Tuple[List, ...], ...] = ()
    values: Tuple[Tuple[List, ...], ...] = ()

    def __len__(self):
        return len(self.keys[0]) if self.keys else 0


def attention(ns, block, x, start, past_k, past_v, hook, name):
    """Causal softmax1 attention with ALiBi for the positions start .. start+len(x)-1.

    score_ij = q_i k_j - slope (i - j) for j <= i;
    pattern_ij = exp(score_ij) / (1 + sum_l exp(score_il)); z_i = sum_j pattern_ij v_j.
    """
    q = hook(f"{name}.hook_q", [block.q(row) for row in x])
    k = hook(f"{name}.hook_k", [block.k(row) for row in x])
    v = hook(f"{name}.hook_v", [block.v(row) for row in x])
    keys, values = past_k + tuple(k), past_v + tuple(v)
    total = len(keys)
    scores = [[[ns.score(q[a][h] * keys[j][h], slope, start + a - j) if j <= start + a
                else None for j in range(total)]
               for a in range(len(x))]
              for h, slope in enumerate(block.slopes)]
    scores = hook(f"{name}.hook_attn_scores", scores)
    pattern = []
    for head_scores in scores:
        rows = []
        for row in head_scores:
            e = [ns.exp_score(s) if s is not None else None for s in row]
            denom = sum((w for w in e if w is not None), ns.one)  # softmax1: the +1
            rows.append([w / denom if w is not None else None for w in e])
        pattern.append(rows)
    pattern = hook(f"{name}.hook_pattern", pattern)
    z = hook(f"{name}.hook_z", [
        [sum((p * values[j][h] for j, p in enumerate(pattern[h][a]) if p is not None), ns.zero)
         for h in range(len(block.slopes))]
        for a in range(len(x))])
    return [block.o(row) for row in z], keys, values


def forward(compiled, tokens, past=KVCache(), record=None, patch=None):
    """Run ``tokens`` (ids) at the positions after ``past``: (logits per position, new cache).

    Logits are over the readout tokens, in readout order: logit_t = -resid[readout slot of t].
    """
    ns = compiled.ns
    start = len(past)

    def hook(name, value):
        if patch and name in patch:
            value = patch[name](value)
        if record is not None:
            record(name, value)
        return value

    new_keys, new_values = [], []
    with ns.arithmetic():
        x = hook("hook_embed", [list(compiled.embed[t]) for t in tokens])
        for i, block in enumerate(compiled.blocks):
            name = f"blocks.{i}"
            x = hook(f"{name}.hook_resid_pre", x)
            past_k = past.keys[i] if past.keys else ()
            past_v = past.values[i] if past.values else ()
            out, keys, values = attention(ns, block, x, start, past_k, past_v, hook,
                                          f"{name}.attn")
            new_keys.append(keys)
            new_values.append(values)
            attn_out = hook(f"{name}.hook_attn_out", out)
            x = hook(f"{name}.hook_resid_mid",
                     [[r + o for r, o in zip(row, orow)] for row, orow in zip(x, attn_out)])
            gate = hook(f"{name}.mlp.hook_pre", [block.gate(row) for row in x])
            up = hook(f"{name}.mlp.hook_pre_linear", [block.up(row) for row in x])
            post = hook(f"{name}.mlp.hook_post",
                        [[g * u if g > 0 else ns.zero for g, u in zip(grow, urow)]
                         for grow, urow in zip(gate, up)])
            mlp_out = hook(f"{name}.hook_mlp_out", [block.down(row) for row in post])
            pad = [ns.zero] * (block.width_out - block.width_in)
            x = hook(f"{name}.hook_resid_post",
                     [[r + o for r, o in zip(row + pad, orow)] for row, orow in zip(x, mlp_out)])
        logits = hook("unembed.hook_out",
                      [[-row[s] for s in compiled.readout] for row in x])
    return logits, KVCache(tuple(new_keys), tuple(new_values))
