"""The data a model is: named slots, named units and sparse weight tables between them.

Tables use TransformerLens weight names and read "from -> to": ``W_Q[slot][head]`` is the
weight from residual slot ``slot`` into head ``head``'s query, ``W_O[head][slot]`` from a head's
output into a slot, ``W_out[unit][slot]`` from an FFN hidden unit into a slot. A bias table maps
an output name to its bias. An absent entry is a zero. Heads have dimension 1.

Values are exact construction constants: ``int``, ``Fraction`` or ``constants.ExpTerm``, and an
ALiBi slope a rational or ``constants.Ln``; a number system turns them into numbers when a model
is run. Anything else (a float, a string, a bool, NaN) is refused when the model is built or
changed, with a :class:`WeightError` naming the entry.

A model is immutable once built: its tables are read-only mappings, because a run's compiled
weights are cached per model. A changed model is a new model: ``with_entry`` (or
``dataclasses.replace``) derives one.
"""

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Mapping, Optional, Tuple

from .constants import (NEG_INF, ConstantError, Expr, ExpTerm, Ln, MinusInfinity, is_rational,
                        is_zero, names_in, parse, text)

Table = Mapping[str, Mapping[str, object]]
Bias = Mapping[str, object]


def _frozen(table):
    """A read-only copy of a table (one or two levels of mappings)."""
    return MappingProxyType({k: _frozen(v) if isinstance(v, Mapping) else v
                             for k, v in table.items()})


def _freeze_fields(obj):
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, Mapping):
            object.__setattr__(obj, f.name, _frozen(value))


@dataclass(frozen=True, eq=False)
class Factored:
    """A weight the program stores as a product of low-rank factors, W = A B: ``A`` from the
    sources to the ``inner`` lanes, ``B`` from them to the targets. The model computes
    (x A) B, in that order, as the program does. It stands wherever a table does."""

    inner: Tuple[str, ...]
    A: Table
    B: Table

    def __post_init__(self):
        _freeze_fields(self)


@dataclass(frozen=True, eq=False)
class Norm:
    """RMSNorm (``kind`` 'rms'): y_s = w_s x_s / sqrt(mean_s x_s^2 + eps), over the slots (or
    lanes) it reads; LayerNorm ('layer'): y_s = w_s (x_s - m) / sqrt(v + eps) + b_s, m the
    mean of x and v the mean of (x - m)^2.

    ``w`` absent: no weight; ``b`` (LayerNorm only) absent: no bias. ``mean`` and ``apply``
    say how the program forms the mean of the squares ('divide': sum / n; 'multiply':
    sum * (1/n)) and applies the root ('rsqrt': x * (1/sqrt(.)); 'divide': x / sqrt(.)): the
    same real number, other roundings.
    """

    eps: object
    w: Bias = field(default_factory=dict)
    mean: str = "divide"
    apply: str = "rsqrt"
    kind: str = "rms"
    b: Bias = field(default_factory=dict)

    def __post_init__(self):
        _freeze_fields(self)


@dataclass(frozen=True, eq=False)
class Attention:
    """Causal attention over heads of dimension ``head_dim``.

    q = W_Q x + b_Q over the query heads' lanes, k = W_K x + b_K and v = W_V x + b_V over the
    key/value heads' lanes (``kv_heads``; empty: the query heads); optional ``q_norm``/``k_norm``
    per head, then rotary positions (``rope_freqs``: angle p * f per lane pair (c, c + d/2));
    score_ij = (q_i . k_j) * scale + bias_h[i][j] - slope_h (i - j) for j <= i;
    pattern = softmax1 (e^s / (1 + sum e^s)) or softmax; z_i = sum_j pattern_ij v_j (or, with
    ``normalise`` 'after', as a fused kernel orders it: (sum_j e_ij v_j) * (1 / sum_j e_ij));
    out_s = sum_lane W_O[lane][s] z_lane + b_O[s]. Query head h reads key/value head
    floor(h * len(kv_heads) / len(heads)).
    """

    heads: Tuple[str, ...]
    W_Q: Table = field(default_factory=dict)
    b_Q: Bias = field(default_factory=dict)
    W_K: Table = field(default_factory=dict)
    b_K: Bias = field(default_factory=dict)
    W_V: Table = field(default_factory=dict)
    b_V: Bias = field(default_factory=dict)
    W_O: Table = field(default_factory=dict)
    b_O: Bias = field(default_factory=dict)
    slopes: Bias = field(default_factory=dict)
    head_dim: int = 1
    kv_heads: Tuple[str, ...] = ()
    q_norm: Optional[Norm] = None
    k_norm: Optional[Norm] = None
    rope_freqs: Tuple[object, ...] = ()
    scale: object = 1
    scale_op: str = "multiply"
    bias: Mapping[str, Mapping[int, Mapping[int, object]]] = field(default_factory=dict)
    bias_default: object = 0
    softmax: str = "softmax1"
    mask: object = NEG_INF
    normalise: str = "before"

    tables = ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O")

    def __post_init__(self):
        _freeze_fields(self)

    @property
    def groups(self):
        """The key/value heads (the query heads when none are given)."""
        return self.kv_heads or self.heads

    def lanes(self, heads):
        """The lanes of ``heads``: a head's name at dimension 1, else 'h.0' .. 'h.(d-1)'."""
        if self.head_dim == 1:
            return tuple(heads)
        return tuple(f"{h}.{c}" for h in heads for c in range(self.head_dim))

    def kv_of(self, h):
        """The index of the key/value head query head ``h`` (an index) reads."""
        return h * len(self.groups) // len(self.heads)


ACTIVATIONS = ("relu", "silu", "gelu", "identity")


@dataclass(frozen=True, eq=False)
class MLP:
    """The feed-forward half: gated, post_u = act(gate_u) * up_u (ReGLU with relu, SwiGLU with
    silu), gate_u = sum_s W_gate[s][u] x_s + b_gate[u], up_u = sum_s W_in[s][u] x_s + b_in[u];
    or plain (``gated`` false), post_u = act(up_u). out_s = sum_u W_out[u][s] post_u + b_out[s].
    """

    units: Tuple[str, ...]
    W_gate: Table = field(default_factory=dict)
    b_gate: Bias = field(default_factory=dict)
    W_in: Table = field(default_factory=dict)
    b_in: Bias = field(default_factory=dict)
    W_out: Table = field(default_factory=dict)
    b_out: Bias = field(default_factory=dict)
    act: str = "relu"
    gated: bool = True

    tables = ("W_gate", "b_gate", "W_in", "b_in", "W_out", "b_out")

    def __post_init__(self):
        _freeze_fields(self)


@dataclass(frozen=True, eq=False)
class Block:
    """One layer: resid_mid = resid_pre + attn(ln1(resid_pre)), then
    resid_post = resid_mid + mlp(ln2(resid_mid)) (no norm where ``ln1``/``ln2`` is None).

    The stream enters ``width_in`` slots wide; the FFN may write slots up to ``width_out``
    (the stream widens, new slots start at zero).
    """

    attn: Attention
    mlp: MLP
    width_in: int
    width_out: int
    ln1: Optional[Norm] = None
    ln2: Optional[Norm] = None


@dataclass(frozen=True, eq=False)
class Mix:
    """After the last block, x = h + gain (x - h), h the resid_post of block ``first``: a
    block applied again (a later block that is the same Block) and mixed with its first
    application, per slot."""

    first: int
    gain: object


UNEMBED_KINDS = ("negative_error", "linear", "tied")


@dataclass(frozen=True, eq=False)
class Unembed:
    """The readout, from the last resid_post to the logits of its tokens:

    - ``negative_error``: logit_t = -x[slots[t]] (each slot holds an error; the smallest wins);
    - ``linear``: logit_t = sum_s W_U[s][t] x_s + b_U[t], over ``tokens``;
    - ``tied``: logit_t = sum_s (scale_s x_s) W_E[t][s] + b_U[t], over ``tokens``.
    """

    kind: str
    tokens: Tuple[str, ...]
    slots: Mapping[str, str] = field(default_factory=dict)
    W_U: Table = field(default_factory=dict)
    b_U: Bias = field(default_factory=dict)
    scale: Bias = field(default_factory=dict)

    def __post_init__(self):
        _freeze_fields(self)


def negative_error(slots):
    """The negative-absolute-error readout over ``{token: slot}``."""
    return Unembed("negative_error", tuple(slots), slots=dict(slots))


@dataclass(frozen=True, eq=False)
class Prompt:
    """A question's layout: ``question`` lists its tokens, 'a' and 'b' standing for the operands'
    ``digits`` digits (zero-padded, most significant first when ``operands`` is 'msb', least when
    'lsb'); the model then writes ``answer_digits`` digits, ordered as ``answer`` says, then the
    token ``stop`` if one is named."""

    digits: int
    question: Tuple[str, ...]
    operands: str = "msb"
    answer: str = "msb"
    answer_digits: int = 0
    stop: Optional[str] = None

    def __post_init__(self):
        if not self.answer_digits:
            object.__setattr__(self, "answer_digits", self.digits + 1)


@dataclass(frozen=True, eq=False)
class Task:
    """What a model that does not add computes, over a finite set of inputs: its prompt is
    ``before``, one input token, ``after``; it then writes the tokens ``cases[input]``, every
    answer of the same length."""

    before: Tuple[str, ...]
    cases: Mapping[str, Tuple[str, ...]]
    after: Tuple[str, ...] = ()

    def __post_init__(self):
        _freeze_fields(self)


@dataclass(frozen=True, eq=False)
class Model:
    """A decoder: embedding (and fixed or learned positions), blocks, an optional final norm,
    and a readout (``unembed``).

    ``meta`` holds facts about the model for the code that uses it (the forward pass ignores
    it): e.g. ``precision`` (a ``numbers.Precision``) for a number system whose precision was
    not given. ``about`` (title, author, claimed parameters, the published dtype, the source),
    ``constants`` (the named constants a file writes entries with), ``fixed`` (those that are
    structure), ``ties`` and ``derived`` (entries written as expressions of named constants:
    {'blocks.0.mlp.W_in[count][cand3]': 's*E3 + o'}, counted as the constants they use) are
    facts for people and for the parameter ledger.
    """

    name: str
    vocab: Tuple[str, ...]
    slots: Tuple[str, ...]
    W_E: Table
    width_embed: int
    blocks: Tuple[Block, ...]
    unembed: Unembed
    prompt: Optional[Prompt] = None
    W_pos: Mapping[int, Mapping[str, object]] = field(default_factory=dict)
    pos_role: str = "fixed"
    ln_final: Optional[Norm] = None
    roles: Mapping[str, str] = field(default_factory=dict)  # tensor name -> role (see ledger)
    meta: Mapping[str, object] = field(default_factory=dict)
    about: Mapping[str, object] = field(default_factory=dict)
    constants: Mapping[str, object] = field(default_factory=dict)
    fixed: Tuple[str, ...] = ()
    ties: Tuple[Tuple[str, ...], ...] = ()
    derived: Mapping[str, str] = field(default_factory=dict)
    mix: Optional[Mix] = None
    task: Optional[Task] = None

    def __post_init__(self):
        _freeze_fields(self)
        check_model(self)

    def __repr__(self):
        blocks = len(self.blocks)
        return (f"<Model {self.name}: {blocks} block{'s' * (blocks != 1)}, "
                f"{len(self.slots)} slots, {len(self.vocab)} tokens>")

    @property
    def readout(self):
        """{token: slot} of a negative-error readout (empty for the other kinds)."""
        return self.unembed.slots if self.unembed.kind == "negative_error" else {}

    @property
    def width_out(self):
        """The stream's width after the last block."""
        return self.blocks[-1].width_out if self.blocks else self.width_embed


def _set(table, keys, value):
    """A plain-dict copy of ``table`` with ``table[k0][k1]... = value``."""
    out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in table.items()}
    if len(keys) == 1:
        out[keys[0]] = value
    else:
        out[keys[0]] = _set(table.get(keys[0], {}), keys[1:], value)
    return out


def with_entry(model, name, keys, value):
    """A new model equal to ``model`` but for one entry: ``name[keys[0]][keys[1]] = value``.

    ``name`` is a table's TransformerLens name (``W_E``, ``blocks.0.attn.W_K``,
    ``blocks.1.mlp.b_in``, ``blocks.0.ln1.w``, ``unembed.W_U``, ...) or ``roles``, ``meta``,
    ``readout`` (a negative-error readout's slots); ``keys`` is the row and column of a weight
    table, or the one key of a bias or of a model mapping. The model is checked again, so an
    entry naming an unknown slot, or a value that is not exact, is refused.

    >>> from tinyadder import build
    >>> m = with_entry(build(), "blocks.1.attn.W_V", ("digit_pos", "h0"), 50)
    >>> m.blocks[1].attn.W_V["digit_pos"]["h0"], build().blocks[1].attn.W_V["digit_pos"]["h0"]
    (50, Fraction(100, 1))
    """
    parts = ["unembed", "slots"] if name == "readout" else name.split(".")
    return _with(model, parts, tuple(keys), value, name)


def _with(obj, parts, keys, value, name):
    head, rest = parts[0], parts[1:]
    if isinstance(obj, tuple):  # the blocks
        if not head.isdigit() or int(head) >= len(obj):
            raise WeightError(f"no table named {name!r}: block {head} does not exist")
        i = int(head)
        return obj[:i] + (_with(obj[i], rest, keys, value, name),) + obj[i + 1:]
    fields_ = {f.name for f in fields(obj)}
    attr = getattr(obj, head, None) if head in fields_ else None
    if attr is None or (not rest) != isinstance(attr, Mapping):
        raise WeightError(f"no table named {name!r}: use W_E, W_pos, roles, meta, readout, "
                          f"unembed.<table> or blocks.<i>.attn.<table>, blocks.<i>.mlp.<table>, "
                          f"blocks.<i>.ln1.w, ...")
    if not rest:
        return replace(obj, **{head: _set(attr, keys, value)})
    return replace(obj, **{head: _with(attr, rest, keys, value, name)})


class WeightError(ValueError):
    """A weight entry that is not exact, or names no declared slot, head, unit or token."""


def _exact(value, kind):
    """Whether a value is exact for an entry of ``kind`` ('weight', 'slope', 'bias')."""
    if is_rational(value) or isinstance(value, (Ln, Expr)):
        return True
    if isinstance(value, ExpTerm):
        return is_rational(value.coef) and is_rational(value.power) and kind != "slope"
    return isinstance(value, MinusInfinity) and kind == "bias"


def _check_value(entry, value, kind="weight"):
    if _exact(value, kind):
        return
    kinds = {"slope": "a rational, Ln(b) or an exact expression",
             "bias": "int, Fraction, an exact constant or -inf"}.get(
        kind, "int, Fraction or an exact constant (ExpTerm, Ln, Expr)")
    what = type(value).__name__
    hint = ""
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        hint = f"; for the decimal you mean write Fraction({repr(value)!r})"
    elif isinstance(value, str):
        hint = f"; for a number write Fraction({value!r})"
    if isinstance(value, ExpTerm):
        hint = "; its coef and power must be int or Fraction"
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
    article = "an" if what[0] in "AEIOU" else "a"
    raise WeightError(f"{entry} = {shown} is {article} {what}, not exact: a weight is "
                      f"{kinds}{hint}")


def _check_table(where, table, sources, targets, kind="weight"):
    if isinstance(table, Factored):
        if len(set(table.inner)) != len(table.inner) or not table.inner:
            raise WeightError(f"{where}.inner: one or more distinct lane names")
        _check_table(f"{where}.A", table.A, sources, table.inner, kind)
        _check_table(f"{where}.B", table.B, table.inner, targets, kind)
        return
    for src, row in table.items():
        if src not in sources:
            raise WeightError(f"{where}: unknown source {src!r}")
        for dst, value in row.items():
            if dst not in targets:
                raise WeightError(f"{where}: unknown target {dst!r} (from {src!r})")
            entry = f"{where}[{dst!r}]" if src is None else f"{where}[{src!r}][{dst!r}]"
            _check_value(entry, value, kind)


def _check_vector(where, vector, targets, kind="weight"):
    _check_table(where, {None: vector}, {None}, targets, kind)


def _check_choice(where, value, choices):
    if value not in choices:
        raise WeightError(f"{where} = {value!r}: use {', '.join(map(repr, choices))}")


def _check_norm(where, norm, targets):
    if norm is None:
        return
    _check_value(f"{where}.eps", norm.eps)
    _check_vector(f"{where}.w", norm.w, targets)
    _check_choice(f"{where}.mean", norm.mean, ("divide", "multiply"))
    _check_choice(f"{where}.apply", norm.apply, ("rsqrt", "divide"))
    _check_choice(f"{where}.kind", norm.kind, ("rms", "layer"))
    _check_vector(f"{where}.b", norm.b, targets)
    if norm.b and norm.kind != "layer":
        raise WeightError(f"{where}.b: an RMS norm has no bias (LayerNorm, kind 'layer', has)")


def _check_attention(where, a, slots, last_block):
    if len(set(a.heads)) != len(a.heads) or not a.heads:
        raise WeightError(f"{where}.heads: give one or more distinct head names")
    if isinstance(a.head_dim, bool) or not isinstance(a.head_dim, int) or a.head_dim < 1:
        raise WeightError(f"{where}.head_dim = {a.head_dim!r}: a positive integer")
    if len(a.heads) % len(a.groups):
        raise WeightError(f"{where}.kv_heads: {len(a.groups)} key/value heads do not divide "
                          f"{len(a.heads)} query heads into equal groups")
    q, kv = a.lanes(a.heads), a.lanes(a.groups)
    if len(set(q) | set(kv)) != len(set(q)) + len(set(kv)) - len(set(q) & set(kv)):
        raise WeightError(f"{where}: lane names must be unique")
    _check_table(f"{where}.W_Q", a.W_Q, slots, q)
    _check_table(f"{where}.W_K", a.W_K, slots, kv)
    _check_table(f"{where}.W_V", a.W_V, slots, kv)
    _check_table(f"{where}.W_O", a.W_O, q, slots)
    _check_vector(f"{where}.b_Q", a.b_Q, q)
    _check_vector(f"{where}.b_K", a.b_K, kv)
    _check_vector(f"{where}.b_V", a.b_V, kv)
    _check_vector(f"{where}.b_O", a.b_O, slots)
    _check_vector(f"{where}.slopes", a.slopes, a.heads, "slope")
    components = tuple(str(c) for c in range(a.head_dim))
    _check_norm(f"{where}.q_norm", a.q_norm, components)
    _check_norm(f"{where}.k_norm", a.k_norm, components)
    if a.rope_freqs:
        if a.head_dim % 2 or len(a.rope_freqs) != a.head_dim // 2:
            raise WeightError(f"{where}.rope: an even head_dim and one frequency per pair "
                              f"({a.head_dim // 2 or 'none'} here)")
        for c, f in enumerate(a.rope_freqs):
            _check_value(f"{where}.rope.freqs[{c}]", f)
    _check_value(f"{where}.scale", a.scale)
    _check_choice(f"{where}.scale_op", a.scale_op, ("multiply", "divide"))
    _check_choice(f"{where}.softmax", a.softmax, ("softmax1", "softmax"))
    _check_choice(f"{where}.normalise", a.normalise, ("before", "after"))
    if a.normalise == "after" and a.softmax != "softmax":
        raise WeightError(f"{where}.normalise: 'after' is an ordinary softmax's order (as a "
                          f"fused attention kernel computes it); softmax1 normalises before")
    _check_value(f"{where}.bias.default", a.bias_default, "bias")
    for h, rows in a.bias.items():
        if h not in a.heads:
            raise WeightError(f"{where}.bias: unknown head {h!r}")
        for i, row in rows.items():
            for j, value in row.items():
                if not (isinstance(i, int) and isinstance(j, int) and 0 <= j <= i):
                    raise WeightError(f"{where}.bias[{h!r}][{i!r}][{j!r}]: a query position "
                                      f"i and a key position 0 <= j <= i")
                _check_value(f"{where}.bias[{h!r}][{i}][{j}]", value, "bias")
    _check_value(f"{where}.mask", a.mask, "bias")
    if not isinstance(a.mask, MinusInfinity) and not last_block:
        raise WeightError(f"{where}.mask = {a.mask}: a finite mask lets an earlier position "
                          f"see later ones, which a later block would read; tinyadder attends "
                          f"causally, so it accepts a finite mask only in the last block")


def check_model(model):
    """Every table entry names a declared slot, head lane, unit or token within the layer's
    width, every choice is known, and every value is exact (:class:`WeightError`)."""
    if len(set(model.slots)) != len(model.slots):
        raise WeightError("slot names must be unique")
    if len(set(model.vocab)) != len(model.vocab):
        raise WeightError("token names must be unique")
    embedded = model.slots[:model.width_embed]
    _check_table("W_E", model.W_E, model.vocab, embedded)
    positions = model.W_pos.A if isinstance(model.W_pos, Factored) else model.W_pos
    for pos in positions:
        if isinstance(pos, bool) or not isinstance(pos, int) or pos < 0:
            raise WeightError(f"W_pos: position {pos!r} is not a non-negative integer")
    _check_table("W_pos", model.W_pos, set(positions), embedded)
    _check_choice("pos_role", model.pos_role, ("fixed", "learned"))
    width = model.width_embed
    for i, block in enumerate(model.blocks):
        where = f"blocks.{i}"
        if block.width_in != width:
            raise WeightError(f"{where} expects width {block.width_in}, stream has {width}")
        if block.width_out < block.width_in or block.width_out > len(model.slots):
            raise WeightError(f"{where}.width_out = {block.width_out}: at least width_in "
                              f"({block.width_in}), at most the {len(model.slots)} slots")
        slots, m = model.slots[:width], block.mlp
        _check_norm(f"{where}.ln1", block.ln1, slots)
        _check_attention(f"{where}.attn", block.attn, slots, i == len(model.blocks) - 1)
        _check_norm(f"{where}.ln2", block.ln2, slots)
        if len(set(m.units)) != len(m.units):
            raise WeightError(f"{where}.mlp.units: unit names must be unique")
        _check_choice(f"{where}.mlp.act", m.act, ACTIVATIONS)
        wide = model.slots[:block.width_out]
        for name in ("W_gate", "W_in"):
            _check_table(f"{where}.mlp.{name}", getattr(m, name), slots, m.units)
        for name in ("b_gate", "b_in"):
            _check_vector(f"{where}.mlp.{name}", getattr(m, name), m.units)
        if not m.gated and (m.W_gate or m.b_gate):
            raise WeightError(f"{where}.mlp: a plain (gated: false) FFN has no W_gate or b_gate")
        _check_table(f"{where}.mlp.W_out", m.W_out, m.units, wide)
        _check_vector(f"{where}.mlp.b_out", m.b_out, wide)
        width = block.width_out
    if model.mix is not None:
        last = len(model.blocks) - 1
        if not 0 <= model.mix.first < last:
            raise WeightError(f"mix.first = {model.mix.first}: a block before the last "
                              f"(0 to {last - 1})")
        _check_value("mix.gain", model.mix.gain, "weight")
    final = model.slots[:width]
    _check_norm("ln_final", model.ln_final, final)
    _check_unembed(model, final)
    _check_prompt(model)
    _check_task(model)
    _check_counting(model)


def _check_unembed(model, final):
    u = model.unembed
    _check_choice("unembed.kind", u.kind, UNEMBED_KINDS)
    if not u.tokens or len(set(u.tokens)) != len(u.tokens):
        raise WeightError("unembed.tokens: one or more distinct tokens")
    for token in u.tokens:
        if token not in model.vocab:
            raise WeightError(f"unembed: unknown token {token!r}")
    if u.kind == "negative_error":
        if set(u.slots) != set(u.tokens):
            raise WeightError("unembed.slots: one slot per readout token")
        for token, slot in u.slots.items():
            if slot not in final:
                raise WeightError(f"readout: unknown target {slot!r} (from {token!r})")
    _check_table("unembed.W_U", u.W_U, final, u.tokens)
    _check_vector("unembed.b_U", u.b_U, u.tokens)
    _check_vector("unembed.scale", u.scale, final)
    if u.kind != "linear" and u.W_U:
        raise WeightError(f"unembed.W_U: only a linear readout has one ({u.kind} here)")
    if u.kind == "tied" and any(s not in model.slots[:model.width_embed] for s in u.scale):
        raise WeightError("unembed.scale: a tied readout scales the embedded slots only")


def _check_prompt(model):
    p = model.prompt
    if p is None:
        return
    if isinstance(p.digits, bool) or not isinstance(p.digits, int) or p.digits < 1:
        raise WeightError(f"prompt.digits = {p.digits!r}: a positive integer")
    _check_choice("prompt.operands", p.operands, ("msb", "lsb"))
    _check_choice("prompt.answer", p.answer, ("msb", "lsb"))
    if list(p.question).count("a") != 1 or list(p.question).count("b") != 1:
        raise WeightError("prompt.question: 'a' and 'b' once each")
    digits = [str(d) for d in range(10)]
    for item in p.question:
        if item not in ("a", "b") and item not in model.vocab:
            raise WeightError(f"prompt.question: {item!r} is neither 'a', 'b' nor a token")
    for d in digits:
        if d not in model.vocab:
            raise WeightError(f"vocab: the digit {d!r} is missing; the prompt needs 0-9")
        if d not in model.unembed.tokens:
            raise WeightError(f"unembed: the digit {d!r} is not a readout token")
    if p.stop is not None and p.stop not in model.unembed.tokens:
        raise WeightError(f"prompt.stop: {p.stop!r} is not a readout token")


def _check_task(model):
    t = model.task
    if t is None:
        return
    if model.prompt is not None:
        raise WeightError("task: a model has an addition prompt or a task, not both")
    if not t.cases:
        raise WeightError("task.cases: give one or more inputs")
    for item in t.before + t.after:
        if item not in model.vocab:
            raise WeightError(f"task: {item!r} is not a token")
    lengths = {len(answer) for answer in t.cases.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise WeightError("task.cases: every answer is one or more tokens, all of one length")
    for x, answer in t.cases.items():
        if x not in model.vocab:
            raise WeightError(f"task.cases: the input {x!r} is not a token")
        for token in answer:
            if token not in model.unembed.tokens:
                raise WeightError(f"task.cases[{x!r}]: {token!r} is not a readout token")


def reaches(table):
    """{source: the targets it has a non-zero weight to}; a factored table's through its
    inner lanes (a product's support, cancellation aside)."""
    if isinstance(table, Factored):
        inner = reaches(table.B)
        return {s: {t for r in rs for t in inner.get(r, ())}
                for s, rs in reaches(table.A).items()}
    return {s: {t for t, w in row.items() if not is_zero(w)} for s, row in table.items()}


# What a tensor is for the parameter ledger (``Model.roles``; the rules: analysis.ledger).
ROLES = ("embedding", "weight", "copy", "position")


def _check_counting(model):
    """Roles name tensors and known roles; ``fixed`` names constants; ties join existing,
    equal entries (a tie names its entries as ``tied_entry`` reads them)."""
    if not (model.roles or model.ties or model.fixed or model.constants or model.derived):
        return
    found = {t.name: t for t in tensors(model)}
    for name, role in model.roles.items():
        if name not in found:
            raise WeightError(f"roles: unknown tensor {name!r}")
        _check_choice(f"roles[{name!r}]", role, ROLES)
    for name, value in model.constants.items():
        _check_value(f"constants[{name!r}]", value, "bias")
    for name in model.fixed:
        if name not in model.constants:
            raise WeightError(f"fixed: {name!r} is not a named constant")
    for entry, written in model.derived.items():
        name, key = tied_entry(found, entry, "derived")
        try:
            used = names_in(written, model.constants)
            value = parse(written, model.constants)
        except ConstantError as why:
            raise WeightError(f"derived[{entry!r}]: {why}") from None
        if not used:
            raise WeightError(f"derived[{entry!r}]: {written!r} uses no named constant")
        if value != found[name].entries[key]:
            raise WeightError(f"derived[{entry!r}]: {written!r} is {text(value)}, not the "
                              f"entry's {text(found[name].entries[key])}")
    for i, tie in enumerate(model.ties):
        if len(tie) < 2:
            raise WeightError(f"ties[{i}]: a tie joins two or more entries")
        values = [(entry, found[name].entries[key])
                  for entry in tie for name, key in [tied_entry(found, entry, f"ties[{i}]")]]
        for entry, value in values[1:]:
            if value != values[0][1]:
                raise WeightError(f"ties[{i}]: {values[0][0]} = {values[0][1]} and {entry} = "
                                  f"{value} differ; a tie joins entries of one value")


def tied_entry(found, entry, where="ties"):
    """(tensor name, key) of an entry written 'W_E[=][eq]' or 'blocks.0.attn.b_Q[h0]': the
    tensor's name, then its row and column (a vector: its column) in brackets, as
    ``tensors`` names them. The entry must be non-zero (a zero is no parameter)."""
    name, bracket, rest = entry.partition("[")
    tensor = found.get(name)
    if tensor is None or not bracket:
        raise WeightError(f"{where}: {entry!r} names no tensor entry; write it as "
                          f"W_E[token][slot] or blocks.0.attn.b_Q[head]")
    keys = [(r, c) for (r, c) in tensor.entries
            if "[" + (f"{r}][" if r is not None else "") + f"{c}]" == "[" + rest]
    if not keys:
        raise WeightError(f"{where}: {entry!r} is not a non-zero entry of {name}")
    return name, keys[0]


def live_heads(attn):
    """Heads whose output reaches the stream: a non-zero value map (weights or bias) into the
    key/value head they read, and a non-zero output map from their lanes. The others add
    nothing, whatever the input (the dead-head rule)."""
    valued = {lane for targets in reaches(attn.W_V).values() for lane in targets}
    valued |= {lane for lane, w in attn.b_V.items() if not is_zero(w)}
    out = reaches(attn.W_O)
    live = []
    for h, head in enumerate(attn.heads):
        kv_lanes = attn.lanes([attn.groups[attn.kv_of(h)]])
        if any(out.get(lane) for lane in attn.lanes([head])) and valued & set(kv_lanes):
            live.append(head)
    return tuple(live)


@dataclass(frozen=True)
class Tensor:
    """One weight tensor as a sparse matrix: ``entries[(row, col)]`` for its non-zeros.

    ``rows`` are the sources and ``cols`` the targets, in the model's order; a bias or a slope
    vector has one row, named None.
    """

    name: str
    part: str
    rows: Tuple[Optional[str], ...]
    cols: Tuple[str, ...]
    entries: Mapping[Tuple[Optional[str], str], object]

    @property
    def shape(self):
        return (len(self.cols),) if self.rows == (None,) else (len(self.rows), len(self.cols))

    def column(self, col):
        """((row index, value), ...) of one target's non-zero entries, in row order."""
        return tuple((i, self.entries[r, col]) for i, r in enumerate(self.rows)
                     if (r, col) in self.entries)


def _tensor(name, part, table, rows, cols):
    if isinstance(table, Factored):
        raise TypeError(f"{name} is factored: walk it with _tensors")
    entries = {(r, c): v for r, row in table.items() for c, v in row.items()
               if not is_zero(v)}  # in the table's order, as the ledger lists them
    return Tensor(name, part, tuple(rows), tuple(cols), MappingProxyType(entries))


def _tensors(name, part, table, rows, cols):
    """A table as its tensor, or a factored one as its two factors ``name.A``, ``name.B``."""
    if isinstance(table, Factored):
        return [_tensor(f"{name}.A", part, table.A, rows, table.inner),
                _tensor(f"{name}.B", part, table.B, table.inner, cols)]
    return [_tensor(name, part, table, rows, cols)]


def _vector(name, part, bias, cols):
    return _tensor(name, part, {None: bias}, (None,), cols)


def tensors(model):
    """Every weight tensor, in model order: embedding, each block's norms, attention and FFN,
    the final norm, the readout; the optional ones (positions, norms, rotary frequencies, a
    fixed attention bias) only where the model has them.

    Names follow TransformerLens (``blocks.0.attn.W_Q``, ``blocks.0.ln1.w``); shapes are the
    dense ones. This is the one walk over the weight tables: the forward pass, the ledger and
    the program listing read the model through it.
    """
    slots = model.slots
    embedded = slots[:model.width_embed]
    out = [_tensor("W_E", "embedding", model.W_E, model.vocab, embedded)]
    if model.W_pos:
        positions = model.W_pos.A if isinstance(model.W_pos, Factored) else model.W_pos
        out += _tensors("W_pos", "embedding", model.W_pos, tuple(sorted(positions)), embedded)
    for i, block in enumerate(model.blocks):
        a, m = block.attn, block.mlp
        inp, wide = slots[:block.width_in], slots[:block.width_out]
        q, kv = a.lanes(a.heads), a.lanes(a.groups)
        where, part = f"blocks.{i}", f"layer {i} attention"
        out += _norm(f"{where}.ln1", part, block.ln1, inp)
        where = f"blocks.{i}.attn"
        for w, b, lanes in (("W_Q", "b_Q", q), ("W_K", "b_K", kv), ("W_V", "b_V", kv)):
            out += _tensors(f"{where}.{w}", part, getattr(a, w), inp, lanes)
            out.append(_vector(f"{where}.{b}", part, getattr(a, b), lanes))
        components = tuple(str(c) for c in range(a.head_dim))
        out += _norm(f"{where}.q_norm", part, a.q_norm, components)
        out += _norm(f"{where}.k_norm", part, a.k_norm, components)
        out += _tensors(f"{where}.W_O", part, a.W_O, q, inp)
        out.append(_vector(f"{where}.b_O", part, a.b_O, inp))
        out.append(_vector(f"{where}.slopes", part, a.slopes, a.heads))
        if a.rope_freqs:
            pairs = tuple(str(c) for c in range(len(a.rope_freqs)))
            out.append(_vector(f"{where}.rope_freqs", part, dict(zip(pairs, a.rope_freqs)),
                               pairs))
        if a.bias:
            rows = {f"{h}@{pos}": {str(j): v for j, v in row.items()}
                    for h, table in a.bias.items() for pos, row in table.items()}
            keys = sorted({j for row in rows.values() for j in row}, key=int)
            out.append(_tensor(f"{where}.bias", part, rows, tuple(rows), tuple(keys)))
        where, part = f"blocks.{i}", f"layer {i} FFN"
        out += _norm(f"{where}.ln2", part, block.ln2, inp)
        where = f"blocks.{i}.mlp"
        for w, b in (("W_gate", "b_gate"), ("W_in", "b_in")):
            out += _tensors(f"{where}.{w}", part, getattr(m, w), inp, m.units)
            out.append(_vector(f"{where}.{b}", part, getattr(m, b), m.units))
        out += _tensors(f"{where}.W_out", part, m.W_out, m.units, wide)
        out.append(_vector(f"{where}.b_out", part, m.b_out, wide))
    if model.mix is not None:
        out.append(_vector("mix.gain", "mix", {"gain": model.mix.gain}, ("gain",)))
    final = slots[:model.width_out]
    out += _norm("ln_final", "readout", model.ln_final, final)
    u = model.unembed
    if u.kind == "negative_error":
        # logit_t = -resid[readout[t]]: the readout is a 0/1 map from slots to output tokens.
        out.append(_tensor("readout", "readout", {s: {t: 1} for t, s in u.slots.items()},
                           final, u.tokens))
    else:
        if u.kind == "linear":
            out += _tensors("unembed.W_U", "readout", u.W_U, final, u.tokens)
        else:
            out.append(_vector("unembed.scale", "readout", u.scale, embedded))
        out.append(_vector("unembed.b_U", "readout", u.b_U, u.tokens))
    return out


def _norm(name, part, norm, cols):
    """A norm's weight and bias vectors as tensors (none without a norm, a weight, a bias)."""
    if norm is None:
        return []
    return [_vector(f"{name}.{v}", part, getattr(norm, v), cols)
            for v in ("w", "b") if getattr(norm, v)]
