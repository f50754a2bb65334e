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

from .constants import ExpTerm, Ln, is_rational, is_zero

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
class Attention:
    """Causal softmax1 attention with per-head ALiBi slopes, head dimension 1.

    q_h = sum_s W_Q[s][h] x_s + b_Q[h] (likewise k, v); score_ij = q_i k_j - slope_h (i - j);
    pattern_ij = exp(score_ij) / (1 + sum_{l <= i} exp(score_il));
    out_s = sum_h W_O[h][s] sum_j pattern_ij v_j + b_O[s].
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

    tables = ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O")

    def __post_init__(self):
        _freeze_fields(self)


@dataclass(frozen=True, eq=False)
class MLP:
    """ReGLU feed-forward: hidden_u = relu(gate_u) * up_u; out_s = sum_u W_out[u][s] hidden_u + b_out[s].

    gate_u = sum_s W_gate[s][u] x_s + b_gate[u]; up_u = sum_s W_in[s][u] x_s + b_in[u].
    """

    units: Tuple[str, ...]
    W_gate: Table = field(default_factory=dict)
    b_gate: Bias = field(default_factory=dict)
    W_in: Table = field(default_factory=dict)
    b_in: Bias = field(default_factory=dict)
    W_out: Table = field(default_factory=dict)
    b_out: Bias = field(default_factory=dict)

    tables = ("W_gate", "b_gate", "W_in", "b_in", "W_out", "b_out")

    def __post_init__(self):
        _freeze_fields(self)


@dataclass(frozen=True, eq=False)
class Block:
    """One layer: an attention half then an FFN half, each added into the residual stream.

    The stream enters ``width_in`` slots wide; the FFN may write slots up to ``width_out``
    (the stream widens, new slots start at zero).
    """

    attn: Attention
    mlp: MLP
    width_in: int
    width_out: int


@dataclass(frozen=True, eq=False)
class Model:
    """A decoder: embedding, blocks, and a negative-absolute-error readout.

    The readout maps each output token to one slot: logit_t = -resid_post[readout[t]] of the
    last block (the slot holds an error; the smallest error wins).

    ``meta`` holds facts about the model for the code that uses it (the forward pass ignores
    it): e.g. ``digits`` for a task's sequence layout, ``precision`` (a ``numbers.Precision``)
    for a number system whose precision was not given.
    """

    name: str
    vocab: Tuple[str, ...]
    slots: Tuple[str, ...]
    W_E: Table
    width_embed: int
    blocks: Tuple[Block, ...]
    readout: Mapping[str, str]
    roles: Mapping[str, str] = field(default_factory=dict)  # tensor name -> role (see ledger)
    meta: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):
        _freeze_fields(self)
        check_model(self)

    def __repr__(self):
        blocks = len(self.blocks)
        return (f"<Model {self.name}: {blocks} block{'s' * (blocks != 1)}, "
                f"{len(self.slots)} slots, {len(self.vocab)} tokens>")


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
    ``blocks.1.mlp.b_in``, ...) or ``roles``, ``meta``, ``readout``; ``keys`` is the row and
    column of a weight table, or the one key of a bias or of a model mapping. The model is
    checked again, so an entry naming an unknown slot is refused.

    >>> from tinyadder import build
    >>> m = with_entry(build(), "blocks.1.attn.W_V", ("digit_pos", "h0"), 50)
    >>> m.blocks[1].attn.W_V["digit_pos"]["h0"], build().blocks[1].attn.W_V["digit_pos"]["h0"]
    (50, 100)
    """
    keys = tuple(keys)
    parts = name.split(".")
    if len(parts) == 1:
        return replace(model, **{name: _set(getattr(model, name), keys, value)})
    if len(parts) != 4 or parts[0] != "blocks" or parts[2] not in ("attn", "mlp"):
        raise ValueError(f"no table named {name!r}: use W_E, roles, meta, readout or "
                         f"blocks.<i>.attn.<table> / blocks.<i>.mlp.<table>")
    i, half, table = int(parts[1]), parts[2], parts[3]
    block = model.blocks[i]
    sub = getattr(block, half)
    sub = replace(sub, **{table: _set(getattr(sub, table), keys, value)})
    blocks = model.blocks[:i] + (replace(block, **{half: sub}),) + model.blocks[i + 1:]
    return replace(model, blocks=blocks)


class WeightError(ValueError):
    """A weight entry that is not exact, or names no declared slot, head, unit or token."""


def _exact(value, slope):
    """Whether a value is an exact weight (``slope``: an ALiBi slope's kinds)."""
    if is_rational(value):
        return True
    if slope:
        return isinstance(value, Ln) and is_rational(value.base) and value.base > 0
    return isinstance(value, ExpTerm) and is_rational(value.coef) and is_rational(value.power)


def _check_value(entry, value, slope=False):
    if _exact(value, slope):
        return
    kinds = "a rational or Ln(b)" if slope else "int, Fraction or ExpTerm"
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


def _check_table(where, table, sources, targets, slope=False):
    for src, row in table.items():
        if src not in sources:
            raise WeightError(f"{where}: unknown source {src!r}")
        for dst, value in row.items():
            if dst not in targets:
                raise WeightError(f"{where}: unknown target {dst!r} (from {src!r})")
            entry = f"{where}[{dst!r}]" if src is None else f"{where}[{src!r}][{dst!r}]"
            _check_value(entry, value, slope)


def _check_vector(where, vector, targets, slope=False):
    _check_table(where, {None: vector}, {None}, targets, slope)


def check_model(model):
    """Every table entry names a declared slot, unit, head or token within the layer's width,
    and every value is exact (:class:`WeightError` otherwise)."""
    if len(set(model.slots)) != len(model.slots):
        raise WeightError("slot names must be unique")
    _check_table("W_E", model.W_E, model.vocab, model.slots[:model.width_embed])
    width = model.width_embed
    for i, block in enumerate(model.blocks):
        if block.width_in != width:
            raise WeightError(f"block {i} expects width {block.width_in}, stream has {width}")
        slots, heads = model.slots[:width], block.attn.heads
        a, m = block.attn, block.mlp
        for name in ("W_Q", "W_K", "W_V"):
            _check_table(f"blocks.{i}.attn.{name}", getattr(a, name), slots, heads)
        _check_table(f"blocks.{i}.attn.W_O", a.W_O, heads, slots)
        for name in ("b_Q", "b_K", "b_V"):
            _check_vector(f"blocks.{i}.attn.{name}", getattr(a, name), heads)
        _check_vector(f"blocks.{i}.attn.slopes", a.slopes, heads, slope=True)
        _check_vector(f"blocks.{i}.attn.b_O", a.b_O, slots)
        wide = model.slots[:block.width_out]
        for name in ("W_gate", "W_in"):
            _check_table(f"blocks.{i}.mlp.{name}", getattr(m, name), slots, m.units)
        for name in ("b_gate", "b_in"):
            _check_vector(f"blocks.{i}.mlp.{name}", getattr(m, name), m.units)
        _check_table(f"blocks.{i}.mlp.W_out", m.W_out, m.units, wide)
        _check_vector(f"blocks.{i}.mlp.b_out", m.b_out, wide)
        width = block.width_out
    _check_table("readout", {t: {s: 1} for t, s in model.readout.items()},
                 model.vocab, model.slots[:width])


def live_heads(attn):
    """Heads whose output reaches the stream: a non-zero value map (weights or bias) and a
    non-zero output map. The others add nothing, whatever the input (the dead-head rule)."""
    valued = {h for row in attn.W_V.values() for h, w in row.items() if not is_zero(w)}
    valued |= {h for h, w in attn.b_V.items() if not is_zero(w)}
    return tuple(h for h in attn.heads if h in valued
                 and any(not is_zero(w) for w in attn.W_O.get(h, {}).values()))


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
    entries = {(r, c): v for r, row in table.items() for c, v in row.items()
               if not is_zero(v)}  # in the table's order, as the ledger lists them
    return Tensor(name, part, tuple(rows), tuple(cols), MappingProxyType(entries))


def _vector(name, part, bias, cols):
    return _tensor(name, part, {None: bias}, (None,), cols)


def tensors(model):
    """Every weight tensor, in model order: embedding, each block's attention and FFN, readout.

    Names follow TransformerLens (``blocks.0.attn.W_Q``); shapes are the dense ones. This is
    the one walk over the weight tables: the forward pass, the ledger and the program listing
    read the model through it.
    """
    slots = model.slots
    out = [_tensor("W_E", "embedding", model.W_E, model.vocab, slots[:model.width_embed])]
    width = model.width_embed
    for i, block in enumerate(model.blocks):
        a, m = block.attn, block.mlp
        inp, wide = slots[:block.width_in], slots[:block.width_out]
        where, part = f"blocks.{i}.attn", f"layer {i} attention"
        for w, b in (("W_Q", "b_Q"), ("W_K", "b_K"), ("W_V", "b_V")):
            out.append(_tensor(f"{where}.{w}", part, getattr(a, w), inp, a.heads))
            out.append(_vector(f"{where}.{b}", part, getattr(a, b), a.heads))
        out.append(_tensor(f"{where}.W_O", part, a.W_O, a.heads, inp))
        out.append(_vector(f"{where}.b_O", part, a.b_O, inp))
        out.append(_vector(f"{where}.slopes", part, a.slopes, a.heads))
        where, part = f"blocks.{i}.mlp", f"layer {i} FFN"
        for w, b in (("W_gate", "b_gate"), ("W_in", "b_in")):
            out.append(_tensor(f"{where}.{w}", part, getattr(m, w), inp, m.units))
            out.append(_vector(f"{where}.{b}", part, getattr(m, b), m.units))
        out.append(_tensor(f"{where}.W_out", part, m.W_out, m.units, wide))
        out.append(_vector(f"{where}.b_out", part, m.b_out, wide))
        width = block.width_out
    # logit_t = -resid[readout[t]]: the readout is a 0/1 map from slots to output tokens.
    out.append(_tensor("readout", "readout", {s: {t: 1} for t, s in model.readout.items()},
                       slots[:width], tuple(model.readout)))
    return out
