"""A model's weights as numbers of one number system, and the plan of what a pass may skip.

``compile_model(model, ns)`` reads the model's weight tensors (``weights.tensors``) once per
number system (memoised) and returns a :class:`Compiled`. ``forward`` reads its weights and
what they leave out; ``codegen`` also reads the plan: the fields below marked *plan*, each
derived from the weights by one of the rules below, never from what the model is for.

What the weights leave out is part of the model: an absent weight is no term, a slot that no
term of a half-layer reaches is not written (it keeps its value, with no + 0), and a head
with no value map or no output map (``weights.live_heads``) adds no term to the stream.

1. Carried softmax1 sums (``Head.carried``). A live head whose query has no weights (q = b_Q
   at every position) and whose ALiBi slope m is 0 or ln b has e_ij = exp(q k_j) r^(i-j), with
   r = exp(-m) = 1/b, so z_i = N_i / (1 + D_i) with running sums N_i = r N_(i-1) + e_i v_i and
   D_i = r D_(i-1) + e_i: O(1) per position instead of O(i). In exact arithmetic this is the
   textbook value; in a rounding system its order of operations defines the head.
2. Dead heads and units (``live``, ``units``). A head that adds no term and an FFN unit with
   no output row need not be computed at all.
3. Liveness (``prefix_*``, ``logits_*``). A position whose logits are not wanted computes only
   what later positions read: keys, values, carried sums and the slots they depend on; one
   whose logits are wanted, that and what the readout reads. A value nothing reads cannot
   change a token, in any number system.
4. Per-token first-block keys (``token_kv``). The first block reads the embedding, so its keys,
   values, exp(q k) and e v depend only on the token: computed once per token id.
5. Shared products, in an exact system only (``ns.exact``). FFN units with the same gate whose
   up map is one weight on the same slot x share one product: post_u = w_u (g x), not
   g (w_u x). A rounding system keeps the textbook grouping.
6. The first block as a function of its state (``Block.memoised``). Where every live head of
   the first block is carried and the model adds no positional embedding, what the block
   writes at a position depends only on the token and the carried sums before it (rule 1;
   rule 4 gives its keys per token): greedy decoding records it per (sums, token) and looks it
   up when the pair recurs, the sums compared by their exact representation; the second
   block's keys and values, which depend on the first block's outputs alone, with it. Across the
   additions of one run it recurs at every position of TinyAdder-36, whose first-block sums
   follow the layout, not the digits.

7. Opposite gates, in a system that rounds to nearest with ties to even (decimal, float):
   two FFN units whose gate rows are exact negatives of each other (the same sources, each
   weight and the bias negated) have gates g and -g bit for bit, since such rounding is
   symmetric in sign, so at most one is open: g is computed once and the second unit's post
   is (-g) up, or g (-c) where its up map is a constant c (``codegen._opposite_gates``, read
   off ``Block.gate``). On the scaled ints of the fraction system's decider, where a gate
   is k x (one integer weight, no bias) and both up maps are integer constants c and c',
   the pair is decided on x's ends and the posts are (c k) x and (-c' k) x, the same ints
   as c (k x) and c' (-k x), in one name where they go out alike (one of them is 0)
   (``codegen._Ints.opposite``).
8. Denominators by position (``Head.exp_qk``). A carried head whose key has no weights has
   one e = exp(q k) at every position, so its D_i = r D_(i-1) + e from D_(-1) = 0 takes the
   same operations on the same operands whatever the tokens: D_i is a function of i alone,
   in every number system, a rounding one included (no exactness is needed: the same
   operations round alike). Greedy decoding, which starts each call at position 0, computes
   1 + D_i once per position by those operations (``codegen._Denominators``) and carries N
   alone. Where e depends on a position's key, D depends on the tokens and is carried.

9. The first block per (token, position), for every other model (``codegen.greedy_general``).
   The first block reads embed[token] + pos[p], so its stream, ln1, q, k and v as scored
   (after any q/k norm and rotary turn, whose cos and sin are then taken once per position)
   are a function of (token, p), and a score of two such pairs: greedy decoding computes each
   once, with the readable pass's own functions, and a position whose logits are not wanted
   computes only what later positions read: the last block's key and value (every block
   before it in full; a later block's rows depend on the prefix, and its rotary cos and sin
   are memoised by the number system). In an interval system the head's z is the
   real-number (sum e^s v) / (sum e^s) with e^s and e^s v per pair, and a term whose score
   lies far enough below the largest (2.31 (digits + 11)) is bounded, not expanded.

10. A common term left out of the readout, in an exact system (``codegen._common_term``).
   Where the last block's attention adds one term t to every readout slot (the same weights
   on the same lanes, the same bias), the first largest of the logits -(y_s + t) is the
   first largest of -y_s, t being one real number: the integer decoder leaves t out of the
   readout's slots (the FFN still reads its own slots with t). A rounding system keeps it:
   there the sum is the value its order defines.

Field glossary of :class:`Block` (indices are positions in the model's slot, lane and unit
orders; a head of dimension d has d lanes):

    q              AffineMap: resid_pre slots (after ln1) -> query lanes
    k, v           AffineMap: resid_pre slots (after ln1) -> key/value lanes
    o              AffineMap: query lanes -> resid_pre slots (W_O, b_O), every head (used with
                   a patch)
    o_live         the same over the live heads' lanes only: the heads that add terms
    gate, up       AffineMap: resid_mid slots (after ln2) -> units (W_gate, b_gate; W_in, b_in)
    down           AffineMap: units -> resid_post slots (W_out, b_out)
    heads          per query head: its lanes, its key/value lanes, slope, scale, fixed bias
                   and, for rule 1, its carried constants
    ln1, ln2       Norm or None; q_norm, k_norm: Norm over one head's lanes, or None
    rope           the rotary frequencies, one per lane pair (empty: none)
    softmax, act, gated   the attention's normalisation and the FFN's kind
    live           heads whose output reaches the stream
    attn_writes    slots the live heads (or b_O) write
    mlp_writes     slots the FFN writes
    units          plan, rule 2: units with an output row
    prefix_heads   plan, rule 3: live heads whose z a position without logits needs
    prefix_units   plan, rule 3: units such a position computes
    prefix_mid     plan, rule 3: attention-written slots such a position needs
    prefix_post    plan, rule 3: FFN-written slots such a position needs
    logits_*       plan, rule 3: the same for a position whose logits are wanted: what the
                   readout reads and what later positions read
    token_kv       plan, rule 4: {token id: (k, v, e, e v)}, first block only, filled on use
    memoised       plan, rule 6: the first block, its live heads all carried, no positions

Rules 1, 3 to 8 and 10 serve the code generator, which writes out TinyAdder-36's family of
operations (``Compiled.fast``); any other model's untraced calls run ``forward`` as written,
and its greedy decoding rule 9.
"""

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Dict, Optional, Tuple

from .constants import Ln, MinusInfinity
from .weights import Factored, Tensor, live_heads, tensors


@dataclass(frozen=True)
class AffineMap:
    """A sparse affine map as numbers: out_t = (sum of w x_s over columns[t]) + bias_t.

    ``columns[t]`` lists target t's non-zero weights as (source index, weight) in source order;
    ``bias[t]`` is None when the bias is absent (zero), so that out_t is exactly the sum of its
    terms; ``unit[t]`` holds the sources whose weight is exactly 1.
    """

    columns: Tuple[Tuple[Tuple[int, object], ...], ...]
    bias: Tuple[Optional[object], ...]
    unit: Tuple[frozenset, ...]
    first: Optional["AffineMap"] = None  # a factored weight: this map applies to first(x)

    def writes(self):
        """Targets with a term or a bias."""
        return tuple(t for t, (column, b) in enumerate(zip(self.columns, self.bias))
                     if column or b is not None)

    def reads(self, targets):
        """The sources that ``targets`` read."""
        inner = {s for t in targets for s, _ in self.columns[t]}
        return inner if self.first is None else self.first.reads(inner)

    def multiplied_out(self):
        """[(weights {source: w}, bias or None)] per target; a factored map (B applied to
        A x) as the one map w_ts = sum_d B_td A_ds, bias_t = b_t + sum_d B_td a_d. In an
        exact system the regrouped sum is the same number at every input."""
        rows = [(dict(column), bias) for column, bias in zip(self.columns, self.bias)]
        if self.first is None:
            return rows
        inner, out = self.first.multiplied_out(), []
        for weights, bias in rows:
            through = {}
            for d, w in weights.items():
                first, b = inner[d]
                for s, a in first.items():
                    through[s] = through[s] + w * a if s in through else w * a
                if b is not None:
                    bias = w * b if bias is None else bias + w * b
            out.append((through, bias))
        return out


def _affine(ns, weight, bias, keep=None):
    """The AffineMap of a weight tensor and its bias vector (``keep``: only these sources)."""
    columns = [tuple((i, w) for i, w in weight.column(col) if keep is None or i in keep)
               for col in weight.cols]
    return AffineMap(
        columns=tuple(tuple((i, ns.const(w)) for i, w in column) for column in columns),
        bias=tuple(ns.const(bias.entries[None, col]) if (None, col) in bias.entries else None
                   for col in weight.cols),
        unit=tuple(frozenset(i for i, w in column if w == 1) for column in columns))


def _map(ns, t, name, bias, keep=None):
    """The AffineMap of weight ``name`` and its bias, from the tensors ``t``; a factored weight
    (``name.A``, ``name.B``) as B's map applied to A's."""
    if name in t:
        return _affine(ns, t[name], t[bias], keep)
    first = _affine(ns, t[f"{name}.A"], _NO_BIAS, keep)
    return replace(_affine(ns, t[f"{name}.B"], t[bias]), first=first)


_NO_BIAS = Tensor("", "", (None,), (), {})


@dataclass(frozen=True)
class Norm:
    """A compiled RMSNorm, or LayerNorm where ``layer``: ``eps``, the weight and bias per slot
    or lane (``w``, ``b``: None without one), how the program forms the mean (``inv_n``: 1/n
    as a value when it multiplies) and applies it (``rsqrt``: x * (1/sqrt(.)), else
    x / sqrt(.))."""

    eps: object
    w: Optional[Tuple[Optional[object], ...]]
    n: int
    inv_n: Optional[object]
    rsqrt: bool
    layer: bool = False
    b: Optional[Tuple[Optional[object], ...]] = None


@dataclass(frozen=True)
class Head:
    """One query head: its lanes in q and its key/value head's lanes in k and v; its ALiBi
    ``slope`` (``ns.slope`` of it; 0 without one), score ``scale`` (None: 1) and whether it
    divides by it, its fixed attention bias (``bias``: {(i, j): value}, ``bias_default`` for
    the rest; ``constants.NEG_INF`` masks a key out) and, when it is carried (rule 1),
    ``decay`` r (None when r = 1), ``q_const`` (its constant query) and, if its key has no
    weights either, the constant ``exp_qk`` = exp(q k)."""

    q_lanes: Tuple[int, ...]
    kv_lanes: Tuple[int, ...]
    slope: object
    scale: object
    divide: bool
    bias: Optional[Dict[Tuple[int, int], object]]
    bias_default: object
    carried: bool
    decay: object
    q_const: object
    exp_qk: object


@dataclass(frozen=True)
class Block:
    """One block's weights as numbers, and its plan (the module docstring's glossary)."""

    q: AffineMap
    k: AffineMap
    v: AffineMap
    o: AffineMap
    o_live: AffineMap
    gate: AffineMap
    up: AffineMap
    down: AffineMap
    heads: Tuple[Head, ...]
    width_in: int
    width_out: int
    live: Tuple[int, ...]
    units: Tuple[int, ...]
    attn_writes: Tuple[int, ...]
    mlp_writes: Tuple[int, ...]
    prefix_heads: Tuple[int, ...]
    prefix_units: Tuple[int, ...]
    prefix_mid: Tuple[int, ...]
    prefix_post: Tuple[int, ...]
    logits_heads: Tuple[int, ...]
    logits_units: Tuple[int, ...]
    logits_mid: Tuple[int, ...]
    logits_post: Tuple[int, ...]
    token_kv: Optional[Dict[int, tuple]]
    memoised: bool = False
    ln1: Optional[Norm] = None
    ln2: Optional[Norm] = None
    q_norm: Optional[Norm] = None
    k_norm: Optional[Norm] = None
    rope: Tuple[object, ...] = ()
    softmax: str = "softmax1"
    normalise: str = "before"
    act: str = "relu"
    gated: bool = True


@dataclass(frozen=True)
class Compiled:
    """A model's weights as numbers of one number system, indexed for the forward pass.

    The readout is one of: ``readout`` (the slot each logit negates: negative error), or
    ``unembed`` (an AffineMap from the final stream to the logits; a tied one reads the embedded
    slots, first multiplied by ``unembed_scale``). ``fast``: every operation is one the code
    generator writes out (TinyAdder-36's family); otherwise untraced calls run the pass as
    written.
    """

    model: object
    ns: object
    embed: Tuple[Tuple[object, ...], ...]   # per token id, its resid row
    blocks: Tuple[Block, ...]
    readout: Optional[Tuple[int, ...]]      # per readout token, the slot its logit negates
    readout_tokens: Tuple[int, ...]         # the token ids of the logits, in readout order
    pos: object = None  # per position ((slot, value), ...), or (rows of A, B) if factored
    ln_final: Optional[Norm] = None
    unembed: Optional[AffineMap] = None
    unembed_scale: Optional[Tuple[Tuple[int, object], ...]] = None
    fast: bool = True

    def __repr__(self):
        return f"<{self.model.name} compiled for {self.ns.describe()}>"

    def readout_map(self):
        """The logits as affine maps of the final row y, [(weights {slot: w}, bias or None)]
        per readout token: -y[slot] (negative error), W_U y + b_U, or W_E (scale y) + b_U
        (tied: the scale taken into the weights)."""
        if self.readout is not None:
            return [({s: -self.ns.one}, None) for s in self.readout]
        rows = self.unembed.multiplied_out()
        if self.unembed_scale is None:
            return rows
        scale = dict(self.unembed_scale)
        return [({s: w * scale[s] for s, w in weights.items() if s in scale}, bias)
                for weights, bias in rows]


def _norm(ns, norm, names):
    """A weights.Norm over ``names`` (slots or lane components) as a compiled Norm."""
    if norm is None:
        return None
    w, b = (tuple(ns.const(v[s]) if s in v else None for s in names) if v else None
            for v in (norm.w, norm.b))
    n = len(names)
    return Norm(ns.const(norm.eps), w, n,
                ns.const(Fraction(1, n)) if norm.mean == "multiply" else None,
                norm.apply == "rsqrt", norm.kind == "layer", b)


def _head(ns, attn, h, q, k, live):
    """Query head h of a block; carried (rule 1) when live, at head dimension 1 with neither
    rotary positions, a q/k norm, a scale nor a fixed bias, a query with no weights and a
    slope of 0 or ln b, in softmax1."""
    raw_slope = attn.slopes.get(attn.heads[h])
    slope = ns.slope(raw_slope if raw_slope is not None else 0)
    d = attn.head_dim
    q_lanes = tuple(range(h * d, (h + 1) * d))
    g = attn.kv_of(h)
    kv_lanes = tuple(range(g * d, (g + 1) * d))
    table = attn.bias.get(attn.heads[h])
    bias = None
    if attn.bias:
        bias = {(i, j): _masked(ns, value) for i, row in (table or {}).items()
                for j, value in row.items()}
    plain = (d == 1 and not attn.kv_heads and not attn.rope_freqs and attn.q_norm is None
             and attn.k_norm is None and attn.scale == 1 and not attn.bias
             and attn.softmax == "softmax1")
    carried = (plain and live and not q.columns[h]
               and (raw_slope is None or isinstance(raw_slope, Ln)))
    decay = q_const = exp_qk = None
    if carried:
        q_const = q.bias[h] if q.bias[h] is not None else ns.zero
        if raw_slope is not None and raw_slope.base != 1:
            decay = ns.const(1 / Fraction(raw_slope.base))
        if not k.columns[h]:
            k_const = k.bias[h] if k.bias[h] is not None else ns.zero
            exp_qk = ns.exp(q_const * k_const - slope * 0)
    return Head(q_lanes, kv_lanes, slope, None if attn.scale == 1 else ns.const(attn.scale),
                attn.scale_op == "divide", bias, _masked(ns, attn.bias_default) if bias is not
                None else None, carried, decay, q_const, exp_qk)


def _masked(ns, value):
    """A fixed attention bias as a value, or NEG_INF (a masked key) as itself."""
    return value if isinstance(value, MinusInfinity) else ns.const(value)


@lru_cache(maxsize=64)
def compile_model(model, ns):
    """The model's weights converted to ``ns``, and the plan of the rules above (memoised per
    model and number system)."""
    with ns.arithmetic():  # decimal rounds every product at its own precision, here too
        return _compile(model, ns)


def _fast(model):
    """Whether every operation of the model is one ``codegen`` writes out."""
    for block in model.blocks:
        a, m = block.attn, block.mlp
        tables = [getattr(a, n) for n in ("W_Q", "W_K", "W_V", "W_O")]
        if any(isinstance(table, Factored) for table in tables + [m.W_gate, m.W_in, m.W_out]):
            return False
        if (a.head_dim != 1 or a.kv_heads or a.rope_freqs or a.q_norm or a.k_norm or a.bias
                or a.scale != 1 or a.softmax != "softmax1" or block.ln1 or block.ln2
                or m.act != "relu" or not m.gated):
            return False
    return (not model.W_pos and model.ln_final is None and model.mix is None
            and model.unembed.kind == "negative_error")


def _compile(model, ns):
    t = {tensor.name: tensor for tensor in tensors(model)}
    embed = []
    for token in model.vocab:
        row = [ns.zero] * model.width_embed
        for j, slot in enumerate(t["W_E"].cols):
            if (token, slot) in t["W_E"].entries:
                row[j] = ns.const(t["W_E"].entries[token, slot])
        embed.append(tuple(row))
    embedded = model.slots[:model.width_embed]
    pos = _positions(ns, model, t)

    raw = []
    for i, block in enumerate(model.blocks):
        a, m = f"blocks.{i}.attn", f"blocks.{i}.mlp"
        attn, inp = block.attn, model.slots[:block.width_in]
        live = tuple(attn.heads.index(h) for h in live_heads(attn))
        q, k, v = (_map(ns, t, f"{a}.W_{x}", f"{a}.b_{x}") for x in "QKV")
        heads = tuple(_head(ns, attn, h, q, k, h in live) for h in range(len(attn.heads)))
        lanes_live = {lane for h in live for lane in heads[h].q_lanes}
        down = _map(ns, t, f"{m}.W_out", f"{m}.b_out")
        components = tuple(str(c) for c in range(attn.head_dim))
        raw.append(dict(
            q=q, k=k, v=v, heads=heads, live=live, down=down,
            units=tuple(sorted(down.reads(range(len(down.columns))))),
            o=_map(ns, t, f"{a}.W_O", f"{a}.b_O"),
            o_live=_map(ns, t, f"{a}.W_O", f"{a}.b_O", keep=lanes_live),
            gate=_map(ns, t, f"{m}.W_gate", f"{m}.b_gate"),
            up=_map(ns, t, f"{m}.W_in", f"{m}.b_in"),
            width_in=block.width_in, width_out=block.width_out,
            ln1=_norm(ns, block.ln1, inp), ln2=_norm(ns, block.ln2, inp),
            q_norm=_norm(ns, attn.q_norm, components), k_norm=_norm(ns, attn.k_norm, components),
            rope=tuple(ns.const(f) for f in attn.rope_freqs), softmax=attn.softmax,
            normalise=attn.normalise,
            act=block.mlp.act, gated=block.mlp.gated))

    # Rule 3, backward over the blocks: what do positions without logits need, and what do
    # positions with logits need beyond the readout's slots?
    u = model.unembed
    _live(raw, "prefix", set())
    reads = (set(range(model.width_out)) if u.kind != "negative_error" or model.ln_final
             else {model.slots.index(u.slots[tok]) for tok in u.tokens})
    _live(raw, "logits", reads)
    blocks = tuple(Block(token_kv={} if i == 0 else None, memoised=i == 0 and not model.W_pos
                         and all(b["heads"][h].carried for h in b["live"]), **b)
                   for i, b in enumerate(raw))
    final = model.slots[:model.width_out]
    readout = unembed = scale = None
    if u.kind == "negative_error":
        readout = tuple(model.slots.index(u.slots[tok]) for tok in u.tokens)
    elif u.kind == "linear":
        unembed = _map(ns, t, "unembed.W_U", "unembed.b_U")
    else:  # tied: the embedding's rows as the readout's columns
        W = _tensor_of(t["W_E"], u.tokens)
        unembed = _affine(ns, W, t["unembed.b_U"])
        scale = tuple((embedded.index(s), ns.const(w)) for s, w in u.scale.items()) or None
    return Compiled(model, ns, tuple(embed), blocks, readout,
                    tuple(model.vocab.index(tok) for tok in u.tokens), pos=pos,
                    ln_final=_norm(ns, model.ln_final, final), unembed=unembed,
                    unembed_scale=scale, fast=_fast(model))


def _live(raw, kind, needed):
    """Rule 3, backward over the blocks ``raw`` (dicts of their fields): what a position must
    compute when what it reads of the last block's output is ``needed`` (slot indices) and
    later positions read every live head's key and value and the slots those depend on. Sets
    ``{kind}_heads``, ``_units``, ``_mid`` and ``_post`` of each block (``attn_writes`` and
    ``mlp_writes`` too)."""
    for b in reversed(raw):
        b["attn_writes"], b["mlp_writes"] = b["o_live"].writes(), b["down"].writes()
        b[f"{kind}_post"] = tuple(s for s in b["mlp_writes"] if s in needed)
        units = b[f"{kind}_units"] = tuple(u for u in b["units"] if u in b["down"].reads(needed))
        mid = {s for s in needed if s < b["width_in"]}
        mid |= b["gate"].reads(units) | b["up"].reads(units)
        b[f"{kind}_mid"] = tuple(s for s in b["attn_writes"] if s in mid)
        heads, written_from = b["heads"], b["o_live"].reads(mid)
        b[f"{kind}_heads"] = tuple(h for h in b["live"] if written_from & set(heads[h].q_lanes))
        queried = [h for h in b[f"{kind}_heads"] if not heads[h].carried]
        kv = _lanes(heads, b["live"], "kv_lanes")
        needed = (mid | b["k"].reads(kv) | b["v"].reads(kv)
                  | b["q"].reads(_lanes(heads, queried, "q_lanes")))


def _lanes(heads, which, kind):
    """The lanes (``kind``: 'q_lanes' or 'kv_lanes') of the heads numbered ``which``: the
    columns of q, or of k and v, that those heads read."""
    return {lane for h in which for lane in getattr(heads[h], kind)}


def _positions(ns, model, t):
    """The positional embedding: {position: ((slot index, value), ...)}; a factored one
    (W_pos = A B, learned low-rank positions) as ({position: its row of A}, B's map)."""
    if not model.W_pos:
        return {}
    if "W_pos" in t:
        table = t["W_pos"]
        return {p: tuple((j, ns.const(table.entries[p, s])) for j, s in enumerate(table.cols)
                         if (p, s) in table.entries) for p in table.rows}
    first = t["W_pos.A"]
    rows = {p: [ns.const(first.entries[p, r]) if (p, r) in first.entries else ns.zero
                for r in first.cols] for p in first.rows}
    return rows, _affine(ns, t["W_pos.B"], _NO_BIAS)


def _tensor_of(W_E, tokens):
    """The embedding W_E[token][slot] as a readout tensor W[slot][token] over ``tokens``."""
    return Tensor("unembed.W_E", "readout", W_E.cols, tuple(tokens),
                  {(s, tok): w for (tok, s), w in W_E.entries.items() if tok in tokens})
