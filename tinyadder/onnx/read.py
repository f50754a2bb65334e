"""An ONNX graph read back into a Model: the exporter's patterns matched from the logits back
to the tokens (docs/onnx.md).

The match is strict: every node must be of a known operator and take part in one of the
patterns ``export`` writes (or an equivalent one listed in docs/onnx.md), every constant
must have the shape its place needs, and nothing may be left over. What breaks the pattern is
refused in one line naming its node: :class:`~tinyadder.onnx.wire.OnnxError`.

Floats are read as the exact binary rationals they are, unless ``metadata_props`` names an
exact constant for them (``tinyadder.exact.<initializer>``) that stores as that float. Names
(tokens, slots, heads, units), the prompt and the facts for people come from the model file
in ``tinyadder.model`` when there is one; the graph must then fit it. Without one, slots are
s0, s1, ..., tokens t0, t1, ..., heads h0, ..., units u0, ... and the model has no prompt.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
import json
import math
import os
import struct
from typing import Optional

from .. import modelfile
from ..constants import NEG_INF, is_zero, sqrt
from ..weights import (MLP, Attention, Block, Factored, Mix, Model, Norm, Unembed, WeightError)
from .codec import load as load_file, parse
from .messages import AttributeType, DataType, float32
from .rewrite import canonical
from .values import exact_of, stored
from .wire import OnnxError

OPSETS = range(13, 24)  # ReduceSum's axes as an input from 13; 23 is the newest read
KNOWN = ("Add", "Concat", "Constant", "Cos", "Div", "Erf", "Exp", "Gather", "Gemm", "Identity",
         "LayerNormalization", "MatMul", "Mul", "Neg", "Pow", "ReduceMax", "ReduceMean",
         "ReduceSum", "Relu", "Reshape", "Sigmoid", "Sin", "Slice", "Softmax", "Sqrt", "Sub",
         "Transpose")
ACTIVATION_OPS = ("Relu", "Identity", "Div", "Mul")
# (fewest, most) inputs of each operator as tinyadder reads it; every node has one output
ARITY = {"Add": (2, 2), "Concat": (1, 4), "Constant": (0, 0), "Div": (2, 2), "Gather": (2, 2),
         "Gemm": (2, 3), "LayerNormalization": (2, 3), "MatMul": (2, 2), "Mul": (2, 2),
         "Pow": (2, 2), "ReduceMax": (1, 2), "ReduceMean": (1, 2), "ReduceSum": (2, 2),
         "Reshape": (2, 2), "Slice": (3, 5), "Sub": (2, 2)}


def load(path, layout=None):
    """The Model in the ONNX file at ``path`` (named and prompted by ``layout``, a
    ``layout.Layout``, if given); an OnnxError (one line, naming the file) if it cannot be
    read or does not match."""
    where = os.fspath(path)
    try:
        onnx_model = load_file(where)
    except OSError as why:
        raise OnnxError(f"{where}: cannot read it: {why.strerror or why}") from None
    except OnnxError as err:
        raise OnnxError(f"{where}: {err}" if not str(err).startswith(where) else str(err)) \
            from None
    try:
        model = read(onnx_model, layout)
    except OnnxError as err:
        raise OnnxError(f"{where}: {err}") from None
    if "tinyadder.model" in dict(onnx_model.metadata_props):
        return model
    # another tool's graph: the model is named after its file (printable: names reach the
    # terminal), if that is a name a model takes
    stem = os.path.basename(where)[:-len(".onnx")] if where.endswith(".onnx") else where
    if not stem or not stem.isprintable():
        return model
    try:
        return replace(model, name=stem)
    except (WeightError, ValueError):
        return model


def loads(data, layout=None):
    """The Model in ONNX bytes."""
    return read(parse(data), layout)


def read(onnx_model, layout=None):
    """The Model an ONNX ``messages.Model`` computes: the graph as it is, or else rewritten
    into the forms the patterns match (``rewrite.canonical``: what torch.onnx.export and the
    optimisers write). ``layout`` (``layout.Layout``) names the tokens and gives the prompt of
    a graph without a model file in its metadata."""
    _output_fits(onnx_model, layout)
    try:
        return _read(onnx_model, layout)
    except OnnxError as first:
        metadata = dict(onnx_model.metadata_props)
        if "tinyadder.model" not in metadata:
            return _read(canonical(onnx_model), layout)
        # tinyadder's graph after an optimiser, which renames, shares and folds initializers
        # (so tinyadder.exact.* may name some that are gone) and writes default attributes:
        # read as another tool's graph, it must store the model of its metadata weight for
        # weight. The refusal is the graph's as written, unless an optimiser renamed what
        # its metadata names.
        names = {t.name for t in onnx_model.graph.initializer} | {
            n.output[0] for n in onnx_model.graph.node if n.op_type == "Constant"}
        renamed = any(k.startswith("tinyadder.exact.") and k[len("tinyadder.exact."):] not in
                      names for k in metadata)
        # the metadata itself is checked as always: its keys, its JSON, its model file, and
        # each exact constant of an initializer still there stores as that initializer's float
        view = _View(onnx_model, renamed=True)
        for name, entries in view.exact.items():
            view.floats(name, name)
        foreign = replace(onnx_model, metadata_props=tuple(
            (k, v) for k, v in onnx_model.metadata_props if not k.startswith("tinyadder.")))
        try:
            graph_model = _read(canonical(foreign), None, _rotary_floats(view.file, view.dtype))
        except OnnxError as second:
            raise (second if renamed else first) from None
        if layout is not None:
            _fits(view, layout, len(graph_model.vocab))
        ours, theirs = _stored_weights(graph_model, view), _stored_weights(view.file, view)
        if ours != theirs and str(first).startswith("the graph does not fit"):
            raise first from None  # the graph as written already said how
        if ours != theirs:
            differ = ", ".join(sorted((ours.keys() ^ theirs.keys()) | {
                k for k in ours.keys() & theirs.keys() if ours[k] != theirs[k]}))
            raise OnnxError(f"the graph does not fit the model file in its metadata: its "
                            f"weights are not those of {ascii(view.file.name)} (they differ "
                            f"in {ascii(differ[:80])})") from None
        return view.file


def _output_fits(onnx_model, layout):
    """A layout reads the output the graph has: "token_ids" an integer output (ArgMax or
    ArgMin, which the rewrite turns into the logits they take the first maximum of),
    "logits" a float one."""
    outputs = onnx_model.graph.output
    if layout is None or len(outputs) != 1:
        return
    out = outputs[0]
    ids = out.elem_type in (DataType.INT64, DataType.INT32)
    if ids != (layout.output == "token_ids"):
        has = "token ids" if ids else "logits"
        raise OnnxError(f"{layout.where}: output {ascii(layout.output)}, but the graph's "
                        f"output {ascii(out.name)[:40]} is {out.elem_type.name}, {has}: the "
                        f"layout says output \"{'token_ids' if ids else 'logits'}\"")


def _read(onnx_model, layout, known_freqs=()):
    view = _View(onnx_model)
    view.layout = layout
    view.known_freqs = known_freqs
    unembed, x = view.readout(view.output)
    ln_final, x = view.maybe_norm(x, 2)
    gain, first, x = view.maybe_mix(x)
    blocks, outputs = [], []
    while not view.is_embedding(x):
        outputs.append(x)
        block, x = view.block(x)
        blocks.append(block)
    embed = view.embedding(x)
    view.all_used()
    mix = None
    if first is not None:
        outputs = outputs[::-1]
        if first not in outputs[:-1]:
            raise OnnxError(f"value {first!r}: a mix of the last block's output with "
                            f"another block's")
        mix = Mix(outputs.index(first), gain)
    return _assemble(view, embed, tuple(reversed(blocks)), ln_final, unembed, mix)


# ---- what the match finds, before names ---------------------------------------------------

@dataclass
class Affine:
    """x @ W + b: ``W`` [rows][cols] of exact values, or ``A`` and ``B`` (W = A B)."""

    W: Optional[list]
    b: Optional[list]
    A: Optional[list] = None
    B: Optional[list] = None

    @property
    def rows(self):
        return len(self.W if self.A is None else self.A)

    @property
    def cols(self):
        return len(self.b) if self.b is not None else _cols(self.W if self.A is None else self.B)


def _widened(affine, heads, d, width):
    """The Affine's heads of d columns each made ``width`` wide by zero columns after them."""
    def wide(rows):
        return [[x for h in range(heads) for x in row[h * d:(h + 1) * d] + [0] * (width - d)]
                for row in rows]
    b = wide([affine.b])[0] if affine.b is not None else None
    if affine.A is None:
        return Affine(wide(affine.W), b)
    return Affine(None, b, affine.A, wide(affine.B))


def _cols(matrix):
    return len(matrix[0]) if matrix else 0


@dataclass
class NormMatch:
    eps: object
    w: Optional[list]
    mean: str
    apply: str
    n: int
    kind: str = "rms"
    b: Optional[list] = None
    eps_float: Optional[tuple] = None  # (float, DataType) of an eps written as an attribute


@dataclass
class AttnMatch:
    q: Affine
    k: Affine
    v: Affine
    o: Affine
    heads: int
    groups: int
    d: int
    q_norm: Optional[NormMatch]
    k_norm: Optional[NormMatch]
    freqs: tuple
    scale: object
    scale_op: Optional[str]
    bias: Optional[list]
    slopes: Optional[list]
    mask: object
    softmax: str
    normalise: str = "before"


@dataclass
class MlpMatch:
    gated: bool
    act: str
    gate: Optional[Affine]
    up: Affine
    down: Affine


@dataclass
class BlockMatch:
    ln1: Optional[NormMatch]
    attn: AttnMatch
    ln2: Optional[NormMatch]
    mlp: MlpMatch
    width_in: int
    width_out: int


@dataclass
class EmbedMatch:
    W_E: list
    W_pos: Optional[list] = None
    A: Optional[list] = None
    B: Optional[list] = None


@dataclass
class ReadoutMatch:
    kind: str
    slots: Optional[list] = None      # negative error: the slot index of each logit
    W: Optional[Affine] = None        # linear
    ids: Optional[list] = None        # tied: the token id of each logit (None: every token)
    scale: Optional[list] = None
    b: Optional[list] = None


# ---- the graph --------------------------------------------------------------------------

class _View:
    """The graph's nodes by the value they define, its constants, and what the match used."""

    def __init__(self, model, renamed=False):
        self.renamed = renamed  # an optimiser's graph: tinyadder.exact.* may name what is gone
        opset = model.opset_import[0].version
        if opset not in OPSETS:
            raise OnnxError(f"opset {opset}: tinyadder reads opsets {OPSETS[0]} to "
                            f"{OPSETS[-1]}")
        g = model.graph
        self.metadata = dict(model.metadata_props)
        self.graph_name = g.name
        self.producer, self.used, self.consumers = {}, set(), Counter()
        self.constants = {t.name: t for t in g.initializer}
        inputs = {v.name for v in g.input}
        for node in g.node:
            what = _what(node)
            if node.op_type not in KNOWN:
                raise OnnxError(f"{what}: operator {node.op_type} is not one tinyadder reads "
                                f"({', '.join(KNOWN)})")
            low, high = ARITY.get(node.op_type, (1, 1))
            if not low <= len(node.input) <= high or len(node.output) != 1 or \
                    not all(node.input[:low]) or not node.output[0]:
                inputs = f"{low}" if low == high else f"{low} to {high}"
                raise OnnxError(f"{what}: {node.op_type} takes {inputs} inputs and one "
                                f"output here; this node has {len(node.input)} and "
                                f"{len(node.output)}")
            for value in node.input:
                if value and value not in self.producer and value not in self.constants \
                        and value not in inputs:
                    raise OnnxError(f"{what}: input {value!r} is defined by no initializer, "
                                    f"graph input or earlier node (the nodes of a graph are "
                                    f"in the order they compute)")
            for value in node.output:
                if value in self.producer or value in self.constants:
                    raise OnnxError(f"{what}: value {value!r} is defined twice")
                self.producer[value] = node
            self.consumers.update(node.input)
            if node.op_type == "Constant":
                self.constants[node.output[0]] = self._constant_node(node)
        if len(g.input) != 1 or len(g.output) != 1:
            raise OnnxError(f"the graph has {len(g.input)} inputs and {len(g.output)} "
                            f"outputs; tinyadder reads one of each (token ids -> logits)")
        tokens, out = g.input[0], g.output[0]
        if tokens.elem_type not in (DataType.INT64, DataType.INT32) or tokens.shape is None \
                or len(tokens.shape) != 1 or not isinstance(tokens.shape[0], int):
            raise OnnxError(f"input {tokens.name!r}: token ids of shape [T] (INT64 or INT32, "
                            f"T fixed)")
        if out.elem_type not in (DataType.DOUBLE, DataType.FLOAT):
            raise OnnxError(f"output {out.name!r}: logits of type DOUBLE or FLOAT, or token "
                            f"ids as ArgMax or ArgMin of them")
        self.tokens, self.T, self.output = tokens.name, tokens.shape[0], out.name
        self.dtype = out.elem_type
        self.exact = self._exact_metadata()
        self._seen_angles = {}
        self.file = _file_model(self)

    @staticmethod
    def _constant_node(node):
        names = [a.name for a in node.attribute]
        if names != ["value"] or node.attribute[0].type != AttributeType.TENSOR:
            raise OnnxError(f"{_what(node)}: a Constant is read with its 'value' tensor only")
        return node.attribute[0].value

    def _exact_metadata(self):
        exact = {}
        for key, value in self.metadata.items():
            if key in ("tinyadder.model", "tinyadder.floats", "tinyadder.softmax1"):
                continue
            name = key[len("tinyadder.exact."):]
            if key.startswith("tinyadder.exact.") and name not in self.constants and \
                    self.renamed:
                continue
            if not key.startswith("tinyadder.exact.") or name not in self.constants:
                raise OnnxError(f"metadata {ascii(key)}: not one tinyadder writes "
                                f"(tinyadder.model, tinyadder.exact.<initializer>, "
                                f"tinyadder.floats, tinyadder.softmax1)")
            tensor = self.constants[name]
            if not tensor.dims:
                exact[name] = {0: value}
                continue
            try:
                entries = json.loads(value)
                ok = isinstance(entries, dict) and all(
                    isinstance(t, str) and k.isdigit() and int(k) < len(tensor.values)
                    for k, t in entries.items())
            except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
                ok = False
            if not ok:
                raise OnnxError(f"metadata {key!r}: a JSON object of {{flat index: constant}} "
                                f"with indices below {len(tensor.values)}")
            exact[name] = {int(k): t for k, t in entries.items()}
        return exact

    # ---- nodes and constants ---------------------------------------------------------

    def node(self, value, ops, what):
        """The node defining ``value``, which must be one of ``ops``; marked used."""
        node = self.producer.get(value)
        if node is None or node.op_type not in ops:
            found = (f"{_what(node)}" if node is not None else
                     "a constant" if value in self.constants else f"the input {value!r}")
            raise OnnxError(f"{found} where {what} needs {' or '.join(ops)} (value {value!r})")
        self.used.add(id(node))
        return node

    def op(self, value):
        node = self.producer.get(value)
        return node.op_type if node is not None else None

    def is_const(self, value):
        return value in self.constants

    def const(self, value, what, dims=None):
        """The constant tensor ``value`` (an initializer or a Constant's output)."""
        tensor = self.constants.get(value)
        if tensor is None:
            node = self.producer.get(value)
            found = _what(node) if node is not None else f"the input {value!r}"
            raise OnnxError(f"{found} where {what} needs a constant (value {value!r})")
        if value in self.producer:
            self.used.add(id(self.producer[value]))
        if dims is not None and tuple(tensor.dims) != tuple(dims):
            raise OnnxError(f"{what}: constant {value!r} has dims {list(tensor.dims)}, "
                            f"not {list(dims)}")
        return tensor

    def ints(self, value, what, dims=None):
        tensor = self.const(value, what, dims)
        if tensor.data_type not in (DataType.INT64, DataType.INT32):
            raise OnnxError(f"{what}: constant {value!r} must hold integers")
        return list(tensor.values)

    def floats(self, value, what, dims=None, infinite=False):
        """A float constant's exact values, flat, in row-major order."""
        tensor = self.const(value, what, dims)
        if tensor.data_type != self.dtype:
            raise OnnxError(f"{what}: constant {value!r} is {tensor.data_type.name}; the graph "
                            f"computes in {self.dtype.name}")
        named = self.exact.get(value, {})
        return [exact_of(x, self.dtype, named.get(i), f"{value}[{i}]", infinite)
                for i, x in enumerate(tensor.values)]

    def matrix(self, value, what, rows=None):
        tensor = self.const(value, what)
        if len(tensor.dims) != 2 or (rows is not None and tensor.dims[0] != rows):
            raise OnnxError(f"{what}: constant {value!r} has dims {list(tensor.dims)}; a "
                            f"matrix{'' if rows is None else f' of {rows} rows'} is needed")
        flat, cols = self.floats(value, what), tensor.dims[1]
        return [flat[r * cols:(r + 1) * cols] for r in range(tensor.dims[0])]

    def scalar(self, value, what):
        tensor = self.const(value, what)
        if math.prod(tensor.dims) != 1 or len(tensor.dims) > 1:
            raise OnnxError(f"{what}: constant {value!r} must be a scalar")
        return self.floats(value, what)[0]

    def attributes(self, node, **expected):
        """The node's attributes must be exactly those named, with the values given (a
        tuple: any of them; None: absent or any value)."""
        got = {a.name: a.value for a in node.attribute}
        for name, value in got.items():
            if name not in expected:
                raise OnnxError(f"{_what(node)}: attribute {name!r} is not read here")
            allowed = expected[name]
            if allowed is not None and value not in (allowed if isinstance(allowed, tuple)
                                                     else (allowed,)):
                raise OnnxError(f"{_what(node)}: attribute {name} = {_shown(value)}; "
                                f"tinyadder reads {_shown(allowed)}")
        return got

    def stored_scalar(self, value, what):
        """The float a scalar constant stores (for the constants of the operations)."""
        tensor = self.const(value, what)
        if math.prod(tensor.dims) != 1 or len(tensor.dims) > 1 or \
                tensor.data_type != self.dtype:
            raise OnnxError(f"{what}: constant {value!r} must be a {self.dtype.name} scalar")
        return tensor.values[0]

    def is_one(self, value, what):
        return self.is_const(value) and self.stored_scalar(value, what) == 1

    def all_used(self):
        for node in self.producer.values():
            if id(node) not in self.used:
                raise OnnxError(f"{_what(node)} is not part of any pattern tinyadder reads")

    def single_use(self, value, what):
        if self.consumers[value] != 1:
            raise OnnxError(f"value {value!r} of {what} is read {self.consumers[value]} "
                            f"times; tinyadder reads it once")

    # ---- affine maps -------------------------------------------------------------------

    def looks_affine(self, value):
        """Whether ``value`` is an affine map's output: MatMul or Gemm, or a MatMul plus a
        constant."""
        op = self.op(value)
        if op in ("MatMul", "Gemm"):
            return True
        if op == "Add":
            a, b = self.producer[value].input
            return ((self.is_const(b) and self.op(a) == "MatMul")
                    or (self.is_const(a) and self.op(b) == "MatMul"))
        return False

    def linear(self, value, what):
        """(x, weight value, bias value or None, whether the weight is stored [out, in]) of
        x @ W + b written as MatMul [+ Add] or Gemm (transB = 1: x @ W^T, nn.Linear's way)."""
        node = self.node(value, ("Add", "MatMul", "Gemm"), what)
        if node.op_type == "Gemm":
            attrs = self.attributes(node, alpha=1.0, beta=1.0, transA=0, transB=(0, 1))
            x, W, *bias = node.input
            return x, W, (bias[0] if bias and bias[0] else None), bool(attrs.get("transB", 0))
        if node.op_type == "Add":
            a, b = node.input
            product, bias = (a, b) if self.is_const(b) else (b, a)
            if not self.is_const(bias):
                raise OnnxError(f"{_what(node)}: {what} adds a constant bias to a MatMul")
            node = self.node(product, ("MatMul",), what)
            return node.input[0], node.input[1], bias, False
        return node.input[0], node.input[1], None, False

    def affine(self, value, what):
        """(x, Affine) of value = x @ W + b, W a constant or a product of two."""
        x, W, bias, transposed = self.linear(value, what)
        if not self.is_const(W):
            raise OnnxError(f"{_what(self.producer.get(W))} where {what}'s weight must be a "
                            f"constant (value {W!r})")
        b = self.floats(bias, f"{what} bias") if bias is not None else None
        if self.op(x) == "MatMul" and self.is_const(self.producer[x].input[1]):
            self.single_use(x, what)
            inner = self.node(x, ("MatMul",), what)
            A = self.matrix(inner.input[1], f"{what} factor A")
            B = self.matrix(W, f"{what} factor B", rows=None if transposed else _cols(A))
            B = _transposed(B) if transposed else B
            if len(B) != _cols(A):
                raise OnnxError(f"{what} factor B: {len(B)} rows for {_cols(A)} columns of A")
            result = Affine(None, b, A, B)
            x = inner.input[0]
        else:
            W = self.matrix(W, what)
            result = Affine(_transposed(W) if transposed else W, b)
        if b is not None and len(b) != result.cols:
            raise OnnxError(f"{what}: bias {bias!r} has {len(b)} values for "
                            f"{result.cols} columns")
        return x, result

    # ---- a block applied again, mixed with its first application ------------------------

    def maybe_mix(self, value):
        """(gain, h, x) of value = h + (x - h) * gain (a constant gain), else (None, None,
        value)."""
        node = self.producer.get(value)
        if node is None or node.op_type != "Add":
            return None, None, value
        for h, scaled in (node.input, node.input[::-1]):
            mul = self.producer.get(scaled)
            if mul is None or mul.op_type != "Mul" or not any(map(self.is_const, mul.input)):
                continue
            diff, gain = mul.input if self.is_const(mul.input[1]) else mul.input[::-1]
            sub = self.producer.get(diff)
            if sub is None or sub.op_type != "Sub" or sub.input[1] != h:
                continue
            self.node(value, ("Add",), "a mix")
            self.node(scaled, ("Mul",), "a mix")
            self.node(diff, ("Sub",), "a mix")
            return self.scalar(gain, "the mix's gain"), h, sub.input[0]
        return None, None, value

    # ---- norms -------------------------------------------------------------------------

    def maybe_norm(self, value, rank):
        """(NormMatch or None, its input) if value is an RMSNorm's or a LayerNorm's
        output."""
        if self.op(value) == "LayerNormalization" or self.is_layer_decomposition(value):
            return self.layer_norm(value, rank)
        if self.op(value) not in ("Mul", "Div"):
            return None, value
        return self.norm(value, rank)

    def is_layer_decomposition(self, value):
        """Whether value is [Add b of] [Mul w of] c / root or c * inverse, c = Sub(...)."""
        node = self.producer.get(value)
        for op in ("Add", "Mul"):
            if node is not None and node.op_type == op and \
                    sum(map(self.is_const, node.input)) == 1:
                node = self.producer.get(next(x for x in node.input if not self.is_const(x)))
        return node is not None and node.op_type in ("Mul", "Div") and any(
            self.op(x) == "Sub" for x in node.input[:2 if node.op_type == "Mul" else 1])

    def weight(self, node, what):
        """(y, w) of Mul(y, w), w a constant of not only zeros; else (node, None)."""
        if node.op_type != "Mul" or not any(map(self.is_const, node.input)):
            return node, None
        y, weight = node.input if self.is_const(node.input[1]) else node.input[::-1]
        w = self.floats(weight, f"{what}'s weight")
        if all(map(is_zero, w)):
            raise OnnxError(f"{_what(node)}: a norm weight of zeros is no norm tinyadder has")
        return self.node(y, ("Mul", "Div"), what), w

    def layer_norm(self, value, rank):
        """A LayerNormalization node over the last axis (epsilon read as the float32 it
        is; the moments in the graph's type), or its decomposition
        [Add b] [Mul w] (c * Div(1, root) or c / root), root = Sqrt(mean(c^2) + eps),
        c = x - mean(x), each mean a ReduceMean or ReduceSum by n or by 1/n."""
        what = "a LayerNorm"
        node = self.node(value, ("LayerNormalization", "Add", "Mul", "Div"), what)
        if node.op_type == "LayerNormalization":
            return self.layer_node(node, rank, what)
        b = None
        if node.op_type == "Add":
            y, bias = node.input if self.is_const(node.input[1]) else node.input[::-1]
            b = self.floats(bias, f"{what}'s bias")
            node = self.node(y, ("Mul", "Div"), what)
        node, w = self.weight(node, what)
        centred, root, apply = self.applied(node, what)
        eps, kind, n = self.shifted_mean(root, centred, rank, what)
        sub = self.node(centred, ("Sub",), f"{what}'s x - mean(x)")
        x, centre = sub.input
        n_x, _, of = self.mean(centre, rank, f"{what}'s mean of x")
        if of != x or None not in (n, n_x) and n != n_x:
            raise OnnxError(f"{_what(sub)}: {what} subtracts another value than the mean of "
                            f"x (value {x!r})")
        n = n or n_x
        if any(v is not None and len(v) != (n or len(v)) for v in (w, b)) or \
                None not in (w, b) and len(w) != len(b):
            raise OnnxError(f"{_what(sub)}: {what}'s weight and bias have one value per "
                            f"lane")
        return NormMatch(eps, w, kind, apply, n, "layer", b), x

    def layer_node(self, node, rank, what):
        attrs = self.attributes(node, axis=(-1, rank - 1), epsilon=None, stash_type=None)
        stash = 1 if self.dtype == DataType.FLOAT else 11
        if attrs.get("stash_type", 1) != stash:
            raise OnnxError(f"{_what(node)}: {what} forms its moments in "
                            f"{'float32' if stash == 1 else 'float64'}, the graph's type "
                            f"(stash_type {stash})")
        eps = attrs.get("epsilon", float32(1e-5))
        if not isinstance(eps, float) or not math.isfinite(eps) or eps < 0:
            raise OnnxError(f"{_what(node)}: {what}'s epsilon {_shown(eps)}: a finite float "
                            f"from 0")
        x, scale, *bias = node.input
        w = self.floats(scale, f"{what}'s scale")
        b = self.floats(bias[0], f"{what}'s bias") if bias and bias[0] else None
        if len(self.constants[scale].dims) != 1 or (b is not None and len(b) != len(w)):
            raise OnnxError(f"{_what(node)}: {what}'s scale and bias are vectors of one "
                            f"length")
        return NormMatch(Fraction(eps), w, "divide", "rsqrt", len(w), "layer", b,
                         (eps, self.dtype)), x

    def applied(self, node, what):
        """(x, root, apply) of x * Div(1, root) ('rsqrt') or x / root ('divide')."""
        if node.op_type == "Mul":
            x, inverse = node.input
            if self.op(inverse) != "Div":
                x, inverse = inverse, x
            reciprocal = self.node(inverse, ("Div",), f"{what}'s 1/sqrt")
            if not self.is_one(reciprocal.input[0], f"{what}'s 1/sqrt"):
                raise OnnxError(f"{_what(reciprocal)}: {what} divides 1 by the root")
            root, apply = reciprocal.input[1], "rsqrt"
        else:
            x, root, apply = node.input[0], node.input[1], "divide"
        return x, root, apply

    def norm(self, value, rank):
        what = "an RMSNorm"
        node, w = self.weight(self.node(value, ("Mul", "Div"), what), what)
        x, root, apply = self.applied(node, what)
        eps, kind, n = self.shifted_mean(root, x, rank, what)
        if w is not None and n is not None and len(w) != n:
            raise OnnxError(f"{what}: a weight of {len(w)} values over {n}")
        return NormMatch(eps, w, kind, apply, n), x

    def shifted_mean(self, root, x, rank, what):
        """(eps, 'divide' or 'multiply', n or None) of root = Sqrt(mean(x^2) + eps)."""
        mean = self.node(root, ("Sqrt",), what).input[0]
        if self.op(mean) in ("ReduceMean", "ReduceSum") or (
                self.op(mean) in ("Mul", "Div") and self.op(self.producer[mean].input[0]) in
                ("ReduceSum",)):
            raise OnnxError(f"{_what(self.producer[mean])}: an RMSNorm of no eps (the root of "
                            f"the mean itself), which a model file cannot state (onnxscript's "
                            f"optimizer drops an Add of an eps within 1e-8 of 0)")
        shifted = self.node(mean, ("Add",), what)
        mean, eps = shifted.input if self.is_const(shifted.input[1]) else shifted.input[::-1]
        eps = self.scalar(eps, f"{what}'s eps")
        n, kind, squares = self.mean(mean, rank, what)
        if self.square_of(squares, what) != x:
            raise OnnxError(f"{_what(self.producer[squares])}: {what} squares another value "
                            f"than it normalises")
        return eps, kind, n

    def mean(self, value, rank, what):
        """(n or None, 'divide' or 'multiply', the squares) of mean(x^2) over the last axis:
        ReduceSum / n, ReduceSum * (1/n) or ReduceMean."""
        node = self.node(value, ("Div", "Mul", "ReduceMean"), f"{what}'s mean")
        if node.op_type == "ReduceMean":
            self.axes_last(node, rank, what)
            return None, "divide", node.input[0]
        total, by = node.input
        total_node = self.node(total, ("ReduceSum",), f"{what}'s sum of squares")
        self.axes_last(total_node, rank, what)
        x = self.stored_scalar(by, f"{what}'s mean")
        if node.op_type == "Div":
            if not (math.isfinite(x) and x >= 1 and x == int(x)):
                raise OnnxError(f"{_what(node)}: {what} divides by a count, not {x!r}")
            return int(x), "divide", total_node.input[0]
        n = round(1 / x) if 0 < x <= 1 and math.isfinite(1 / x) else 0
        if n < 1 or stored(Fraction(1, n), self.dtype) != x:
            raise OnnxError(f"{_what(node)}: {what} multiplies by 1/n, not {x!r}")
        return n, "multiply", total_node.input[0]

    def axes_last(self, node, rank, what):
        """A reduction over the last axis, keeping it (axes an input, or before opset 18 a
        ReduceMean's attribute)."""
        attrs = self.attributes(node, keepdims=1, axes=None)
        axes = (self.ints(node.input[1], f"{what}'s axes") if len(node.input) > 1
                else list(attrs.get("axes", ())))
        if axes not in ([-1], [rank - 1]):
            raise OnnxError(f"{_what(node)}: {what} reduces over axes {axes}, not the last")

    def square_of(self, value, what):
        node = self.node(value, ("Mul", "Pow"), f"{what}'s squares")
        a, b = node.input
        if node.op_type == "Pow":
            if not (self.is_const(b) and self.stored_scalar(b, f"{what}'s power") == 2):
                raise OnnxError(f"{_what(node)}: {what} squares (Pow by 2)")
            return a
        if a != b:
            raise OnnxError(f"{_what(node)}: {what} squares x as Mul(x, x)")
        return a

    # ---- blocks ------------------------------------------------------------------------

    def split_residual(self, value, what):
        """(the stream, the half-layer's output) of stream + output."""
        node = self.node(value, ("Add",), what)
        a, b = node.input
        if self.looks_affine(b) and not self.looks_affine(a):
            return a, b
        if self.looks_affine(a) and not self.looks_affine(b):
            return b, a
        raise OnnxError(f"{_what(node)}: {what} adds the stream and one affine map's "
                        f"output; this node adds {a!r} and {b!r}")

    def block(self, value):
        stream, mlp_out = self.split_residual(value, "a block's resid_post")
        mlp, normed = self.mlp(mlp_out)
        extra = 0
        if self.op(stream) == "Concat":
            node = self.node(stream, ("Concat",), "a widening stream")
            self.attributes(node, axis=(1, -1))
            if len(node.input) != 2:
                raise OnnxError(f"{_what(node)}: the stream widens by Concat(x, zeros)")
            stream, zeros = node.input
            values = self.floats(zeros, "the new slots")
            dims = self.constants[zeros].dims
            if any(not is_zero(v) for v in values) or len(dims) != 2 or dims[0] != self.T:
                raise OnnxError(f"{_what(node)}: the new slots start at 0 ([T, k] zeros)")
            extra = dims[1]
        ln2, x2 = self.maybe_norm(normed, 2)
        if x2 != stream:
            raise OnnxError(f"value {normed!r}: the FFN reads another value than the stream "
                            f"{stream!r} it adds to")
        x, attn_out = self.split_residual(stream, "a block's resid_mid")
        attn, normed = self.attention(attn_out)
        ln1, x1 = self.maybe_norm(normed, 2)
        if x1 != x:
            raise OnnxError(f"value {normed!r}: the attention reads another value than the "
                            f"stream {x!r} it adds to")
        width = attn.q.rows
        if mlp.down.cols != width + extra:
            raise OnnxError(f"value {mlp_out!r}: the FFN writes {mlp.down.cols} slots into a "
                            f"stream of {width + extra}")
        for part, affine in (("W_K", attn.k), ("W_V", attn.v), ("FFN", mlp.up)):
            if affine.rows != width:
                raise OnnxError(f"value {attn_out!r}: {part} reads {affine.rows} slots, W_Q "
                                f"{width}")
        if attn.o.cols != width:
            raise OnnxError(f"value {attn_out!r}: W_O writes {attn.o.cols} slots of {width}")
        for norm, n in ((ln1, width), (ln2, width)):
            if norm is not None and norm.n not in (None, n):
                raise OnnxError(f"value {value!r}: an RMSNorm over {norm.n} of {n} slots")
        return BlockMatch(_sized(ln1, width), attn, _sized(ln2, width), mlp, width,
                          width + extra), x

    def mlp(self, value):
        what = "the FFN"
        post, down = self.affine(value, f"{what}'s W_out")
        gate = None
        node = self.node(post, ACTIVATION_OPS, f"{what}'s hook_post")
        act = self.activation(post) if node.op_type != "Mul" or self.is_silu(post) or \
            self.gelu_halves(post) is not None else None
        if act is None:  # gated: Mul(act(gate), up)
            a, b = node.input
            if self.activation(a, peek=True) is None:
                a, b = b, a
            act = self.activation(a)
            if act is None:
                raise OnnxError(f"{_what(node)}: a gated FFN multiplies an activation "
                                f"(Relu, Identity, silu, gelu) by the up projection")
            kind, g = act
            x, gate = self.affine(g, f"{what}'s W_gate")
            x_up, up = self.affine(b, f"{what}'s W_in")
            if x_up != x:
                raise OnnxError(f"{_what(node)}: the gate and the up projection read "
                                f"different values")
            gated = True
        else:
            kind, g = act
            x, up = self.affine(g, f"{what}'s W_in")
            gated = False
        if down.rows != up.cols or (gate is not None and gate.cols != up.cols):
            raise OnnxError(f"value {value!r}: the FFN's maps disagree on its units")
        return MlpMatch(gated, kind, gate, up, down), x

    def is_silu(self, value):
        node = self.producer[value]
        return node.op_type == "Mul" and any(self.op(v) == "Sigmoid" for v in node.input)

    def activation(self, value, peek=False):
        """(kind, input) of an activation's output, or None (``peek``: nothing marked)."""
        node = self.producer.get(value)
        op = node.op_type if node is not None else None
        if op in ("Relu", "Identity"):
            if not peek:
                self.node(value, (op,), "an activation")
                self.attributes(node)
            return op.lower(), node.input[0]
        if op == "Mul" and self.is_silu(value):
            g, s = node.input if self.op(node.input[1]) == "Sigmoid" else node.input[::-1]
            if peek:
                return "silu", g
            self.node(value, ("Mul",), "silu")
            if self.node(s, ("Sigmoid",), "silu").input[0] != g:
                raise OnnxError(f"{_what(node)}: silu is x * Sigmoid(x) of one x")
            return "silu", g
        if op == "Mul" and self.gelu_halves(value) is not None:
            return self.gelu(value, *self.gelu_halves(value), peek)
        if op != "Div":
            return None
        x, by = node.input
        if self.op(by) == "Add":  # silu: x / (1 + Exp(Neg(x)))
            if peek:
                return "silu", x
            self.node(value, ("Div",), "silu")
            one, e = self._one_plus(by, "silu")
            neg = self.node(self.node(e, ("Exp",), "silu").input[0], ("Neg",), "silu")
            if neg.input[0] != x:
                raise OnnxError(f"{_what(node)}: silu is x / (1 + Exp(Neg(x))) of one x")
            return "silu", x
        if self.op(x) == "Mul" and self.is_const(by):  # gelu: x (1 + Erf(x / sqrt 2)) / 2
            if peek:
                return "gelu", self.producer[x].input[0]
            self.node(value, ("Div",), "gelu")
            if self.stored_scalar(by, "gelu's 2") != 2:
                raise OnnxError(f"{_what(node)}: gelu divides by 2")
            product = self.node(x, ("Mul",), "gelu")
            g, erf1 = product.input
            _, erf = self._one_plus(erf1, "gelu")
            scaled = self.node(self.node(erf, ("Erf",), "gelu").input[0], ("Div",), "gelu")
            root = self.stored_scalar(scaled.input[1], "gelu's sqrt 2")
            if scaled.input[0] != g or root != stored(sqrt(2), self.dtype):
                raise OnnxError(f"{_what(scaled)}: gelu is x (1 + Erf(x / sqrt 2)) / 2 of "
                                f"one x")
            return "gelu", g
        return None

    def gelu_halves(self, value):
        """(x, erf + 1, 0.5) of torch's gelu, (x (erf + 1)) 0.5 (TorchScript) or
        x (0.5 (erf + 1)) (dynamo), or None."""
        node = self.producer.get(value)
        for half, rest in (node.input, node.input[::-1]):
            if self.is_const(half) and self.op(rest) == "Mul":  # (x (erf + 1)) 0.5
                g, erf1 = self.producer[rest].input
                if self.op(erf1) != "Add":
                    g, erf1 = erf1, g
                return (g, erf1, half, rest) if self.op(erf1) == "Add" else None
            if self.op(half) == "Mul" and any(map(self.is_const, self.producer[half].input)):
                h, erf1 = self.producer[half].input  # x (0.5 (erf + 1))
                if not self.is_const(h):
                    h, erf1 = erf1, h
                return (rest, erf1, h, half) if self.op(erf1) == "Add" else None
        return None

    def gelu(self, value, g, erf1, half, inner, peek):
        """gelu as torch writes it: a product by 0.5 is the division by 2 of x (1 + Erf(x /
        sqrt 2)) the pattern reads (the same float: both are x (1 + erf) / 2 correctly
        rounded; dynamo's x (0.5 (1 + erf)) also, but where x (1 + erf) / 2 is subnormal)."""
        if peek:
            return "gelu", g
        self.node(value, ("Mul",), "gelu")
        self.node(inner, ("Mul",), "gelu")
        if self.stored_scalar(half, "gelu's 0.5") != 0.5:
            raise OnnxError(f"{_what(self.producer[value])}: gelu multiplies by 0.5")
        _, erf = self._one_plus(erf1, "gelu")
        scaled = self.node(self.node(erf, ("Erf",), "gelu").input[0], ("Div",), "gelu")
        root = self.stored_scalar(scaled.input[1], "gelu's sqrt 2")
        if scaled.input[0] != g or root != stored(sqrt(2), self.dtype):
            raise OnnxError(f"{_what(scaled)}: gelu is x (1 + Erf(x / sqrt 2)) / 2 of one x")
        return "gelu", g

    def _one_plus(self, value, what):
        node = self.node(value, ("Add",), what)
        one, rest = node.input if self.is_const(node.input[0]) else node.input[::-1]
        if not self.is_one(one, f"{what}'s 1"):
            raise OnnxError(f"{_what(node)}: {what} adds 1")
        return one, rest

    # ---- attention ---------------------------------------------------------------------

    def attention(self, value):
        what = "the attention"
        z, o = self.affine(value, f"{what}'s W_O")
        reshape = self.node(z, ("Reshape",), f"{what}'s hook_z")
        self.attributes(reshape)
        zt = self.node(reshape.input[0], ("Transpose",), f"{what}'s z")
        self.attributes(zt, perm=((1, 0, 2),))
        if self.op(zt.input[0]) == "Mul":
            (scores, vh), softmax, normalise = self.normalised_after(zt.input[0]), "softmax", \
                "after"
            zh = self.producer[zt.input[0]]
        else:
            zh = self.node(zt.input[0], ("MatMul",), f"{what}'s pattern @ v")
            pattern, vh = zh.input
            (softmax, scores), normalise = self.softmax(pattern), "before"
        scores, mask = self.mask(scores)
        scores, slopes = self.alibi(scores)
        scores, bias = self.fixed_bias(scores)
        scores, scale, scale_op = self.scale(scores)
        qk = self.node(scores, ("MatMul",), f"{what}'s q @ k^T")
        qh, kt = qk.input
        if scale_op is None:
            qh, kt, scale, scale_op = self.scaled_operands(qh, kt)
        kt_node = self.node(kt, ("Transpose",), f"{what}'s k^T")
        self.attributes(kt_node, perm=((0, 2, 1),))
        kh, kv_of = self.shared_heads(kt_node.input[0])
        vh, kv_of_v = self.shared_heads(vh)
        if kv_of != kv_of_v:
            raise OnnxError(f"{_what(zh)}: keys and values are shared by different heads")
        (x, q, H, d, q_norm, freqs_q) = self.head_input(qh, "q")
        (x_k, k, G, d_k, k_norm, freqs_k) = self.head_input(kh, "k")
        v_node = self.node(vh, ("Transpose",), f"{what}'s v heads")
        x_v, v, G_v, d_v = self.heads(v_node, "v")
        if not (x == x_k == x_v):
            raise OnnxError(f"{_what(qk)}: q, k and v read different values")
        if d == d_k < d_v and not freqs_q and not freqs_k and q_norm is None and \
                k_norm is None:
            # q and k narrower than v: a head of v's width whose q and k lanes past theirs are
            # zero (each score gains 0 * 0 terms, +0)
            q, k, d, d_k = _widened(q, H, d, d_v), _widened(k, G, d, d_v), d_v, d_v
        if (G, d) != (G_v, d_k) or d != d_v or freqs_q != freqs_k:
            raise OnnxError(f"{_what(qk)}: q, k and v disagree on heads or rotary positions")
        if kv_of is None:
            if G != H:
                raise OnnxError(f"{_what(qk)}: {H} query heads and {G} key/value heads need "
                                f"a Gather that shares them")
        elif kv_of != [h * G // H for h in range(H)]:
            raise OnnxError(f"{_what(qk)}: query head h reads key/value head floor(h G / H) "
                            f"in tinyadder, not {kv_of}")
        if o.rows != H * d:
            raise OnnxError(f"value {value!r}: W_O reads {o.rows} lanes of {H * d}")
        for norm in (q_norm, k_norm):
            if norm is not None and norm.n not in (None, d):
                raise OnnxError(f"value {value!r}: a q/k norm over {norm.n} of {d} lanes")
        for table, rows in ((bias, H), (slopes, H)):
            if table is not None and len(table) != rows:
                raise OnnxError(f"value {value!r}: {len(table)} heads in a table of {rows}")
        return AttnMatch(q, k, v, o, H, G, d, _sized(q_norm, d), _sized(k_norm, d), freqs_q,
                         scale, scale_op, bias, slopes, mask, softmax, normalise), x

    def normalised_after(self, value):
        """(the scores, v) of z = (e @ v) * Div(1, ReduceSum(e)), e = Exp(Sub(s, ReduceMax(s))):
        a softmax normalised after the weighted sum."""
        what = "a softmax normalised after the sum"
        node = self.node(value, ("Mul",), what)
        weighted, inverse = node.input
        if self.op(weighted) != "MatMul":
            weighted, inverse = inverse, weighted
        e, vh = self.node(weighted, ("MatMul",), what).input
        reciprocal = self.node(inverse, ("Div",), what)
        if not self.is_one(reciprocal.input[0], f"{what}'s 1 / sum"):
            raise OnnxError(f"{_what(reciprocal)}: {what} divides 1 by the sum")
        total = self.node(reciprocal.input[1], ("ReduceSum",), what)
        self.axes_last(total, 3, what)
        exp = self.node(e, ("Exp",), what)
        shifted = self.node(exp.input[0], ("Sub",), what)
        scores, top = shifted.input
        largest = self.node(top, ("ReduceMax",), what)
        self.axes_last(largest, 3, what)
        if total.input[0] != e or largest.input[0] != scores:
            raise OnnxError(f"{_what(node)}: {what} sums the Exp it weights, of the scores "
                            f"less their largest")
        return scores, vh

    def softmax(self, value):
        node = self.node(value, ("Softmax", "Div"), "the attention's pattern")
        if node.op_type == "Softmax":
            self.attributes(node, axis=(-1, 2))
            return "softmax", node.input[0]
        e, sink = node.input
        _, total = self._one_plus(sink, "softmax1's sink")
        reduce = self.node(total, ("ReduceSum",), "softmax1's sum")
        self.axes_last(reduce, 3, "softmax1")
        if reduce.input[0] != e:
            raise OnnxError(f"{_what(reduce)}: softmax1 sums the Exp it divides")
        return "softmax1", self.node(e, ("Exp",), "softmax1").input[0]

    def mask(self, value):
        """(the scores, the mask value above the diagonal; None if T = 1)."""
        node = self.node(value, ("Add",), "the causal mask")
        scores, table = node.input if self.is_const(node.input[1]) else node.input[::-1]
        T = self.T
        values = self.floats(table, "the causal mask", (T, T), infinite=True)
        above = {values[r * T + c] for r in range(T) for c in range(r + 1, T)}
        below = {values[r * T + c] for r in range(T) for c in range(r + 1)}
        if below != {0} or len(above) > 1:
            raise OnnxError(f"{_what(node)}: the causal mask is 0 where j <= i and one value "
                            f"above the diagonal")
        return scores, (above.pop() if above else None)

    def alibi(self, value):
        if self.op(value) != "Sub":
            return value, None
        node = self.node(value, ("Sub",), "ALiBi")
        scores, tilt = node.input
        if self.is_const(tilt):
            return scores, self.folded_alibi(node, tilt)
        product = self.node(tilt, ("Mul",), "ALiBi's slopes * (i - j)")
        slopes, distance = product.input
        T = self.T
        if getattr(self.constants.get(slopes), "dims", None) == (T, T):
            slopes, distance = distance, slopes
        if self.floats(distance, "ALiBi's distances", (T, T)) != \
                [r - c for r in range(T) for c in range(T)]:
            raise OnnxError(f"{_what(product)}: ALiBi's distances are i - j")
        tensor = self.const(slopes, "ALiBi's slopes")
        if len(tensor.dims) != 3 or tuple(tensor.dims[1:]) != (1, 1):
            raise OnnxError(f"{_what(product)}: ALiBi's slopes are [heads, 1, 1]")
        return scores, self.floats(slopes, "ALiBi's slopes")

    def folded_alibi(self, node, tilt):
        """The slopes of an ALiBi table an optimiser folded: [heads, T, T] of
        slope_h * (i - j), each product rounded once in the graph's type."""
        T = self.T
        tensor = self.const(tilt, "ALiBi's folded table")
        if len(tensor.dims) != 3 or tuple(tensor.dims[1:]) != (T, T) or T < 2:
            raise OnnxError(f"{_what(node)}: a folded ALiBi table is [heads, T, T], T > 1")
        flat = tensor.values
        slopes = [flat[(h * T + 1) * T] for h in range(tensor.dims[0])]  # i - j = 1: exact
        product = (lambda s, d: float32(s * d)) if self.dtype == DataType.FLOAT else \
            (lambda s, d: s * d)
        for h, s in enumerate(slopes):
            if any(flat[(h * T + i) * T + j] != product(s, i - j)
                   for i in range(T) for j in range(T)):
                raise OnnxError(f"{_what(node)}: a folded ALiBi table holds slope_h * (i - j) "
                                f"(head {h} does not)")
        return [exact_of(s, self.dtype, None, f"{tilt}[{h}]") for h, s in enumerate(slopes)]

    def fixed_bias(self, value):
        if self.op(value) != "Add":
            return value, None
        node = self.node(value, ("Add",), "a fixed attention bias")
        scores, table = node.input
        if not (self.is_const(table) or self.op(table) == "Slice"):
            scores, table = table, scores
        T = self.T
        if self.is_const(table):
            dims = self.constants[table].dims
            if len(dims) != 3 or dims[1:] != (T, T):
                raise OnnxError(f"{_what(node)}: a fixed bias is [heads, T, T]")
            P = T
        else:
            cut = self.node(table, ("Slice",), "a fixed bias")
            self.attributes(cut)
            table, *bounds = cut.input
            dims = self.const(table, "a fixed bias").dims
            if len(dims) != 3 or dims[1] != dims[2] or len(bounds) not in (3, 4) or \
                    self.ints(bounds[0], "its starts") != [0, 0] or \
                    self.ints(bounds[1], "its ends") != [T, T] or \
                    self.ints(bounds[2], "its axes") != [1, 2] or \
                    (len(bounds) == 4 and self.ints(bounds[3], "its steps") != [1, 1]):
                raise OnnxError(f"{_what(cut)}: a fixed bias [heads, P, P] is sliced to "
                                f"[heads, T, T] on axes 1 and 2 from 0")
            P = dims[1]
        flat = self.floats(table, "a fixed bias", infinite=True)
        return scores, [[flat[(h * P + r) * P:(h * P + r + 1) * P] for r in range(P)]
                        for h in range(dims[0])]

    def scaled_operands(self, qh, kt):
        """(q, k^T, scale, 'multiply') of (q * a) @ (k^T * b), a and b scalar constants
        (torch's scaled_dot_product_attention in its math form scales each by sqrt(scale)):
        scale = a b exactly, one scale of the scores (the same real number; its float program
        rounds the sum once, docs/onnx.md); else (q, k^T, 1, None)."""
        operands = []
        for value in (qh, kt):
            node = self.producer.get(value)
            if node is None or node.op_type != "Mul" or \
                    [self.is_const(v) for v in node.input].count(True) != 1:
                return qh, kt, 1, None
            operands.append(node.input if self.is_const(node.input[1]) else node.input[::-1])
            if math.prod(self.constants[operands[-1][1]].dims) != 1:
                return qh, kt, 1, None
        (q, a), (k, b) = operands
        for value in (qh, kt):
            self.node(value, ("Mul",), "a scaled q or k")
            self.single_use(value, "a scaled q or k")
        return q, k, self.scalar(a, "q's scale") * self.scalar(b, "k's scale"), "multiply"

    def scale(self, value):
        if self.op(value) not in ("Mul", "Div"):
            return value, 1, None
        node = self.node(value, ("Mul", "Div"), "the score scale")
        scores, c = node.input
        if node.op_type == "Mul" and self.is_const(scores):
            scores, c = c, scores
        return scores, self.scalar(c, "the score scale"), \
            "divide" if node.op_type == "Div" else "multiply"

    def shared_heads(self, value):
        """(heads before a Gather that shares them, its indices or None)."""
        if self.op(value) != "Gather":
            return value, None
        node = self.node(value, ("Gather",), "grouped key/value heads")
        self.attributes(node, axis=0)
        return node.input[0], self.ints(node.input[1], "the key/value head of each head")

    def head_input(self, value, which):
        """(x, Affine, heads, head_dim, norm, freqs) of q or k as scored."""
        freqs = ()
        if self.op(value) == "Concat":
            value, freqs = self.rope(value)
        norm, value = (self.maybe_norm(value, 3) if self.op(value) in ("Mul", "Div")
                       else (None, value))
        node = self.node(value, ("Transpose",), f"the {which} heads")
        x, affine, count, d = self.heads(node, which)
        if freqs and len(freqs) > d // 2:
            raise OnnxError(f"{_what(node)}: {len(freqs)} rotary pairs in a head of {d}")
        return x, affine, count, d, norm, freqs

    def heads(self, transpose, which):
        """(x, Affine, heads, head_dim) of Transpose(Reshape(x @ W + b, [T, heads, d]))."""
        self.attributes(transpose, perm=((1, 0, 2),))
        reshape = self.node(transpose.input[0], ("Reshape",), f"the {which} heads")
        self.attributes(reshape)
        shape = self.ints(reshape.input[1], f"the {which} heads' shape", (3,))
        if shape[0] not in (self.T, -1) or min(shape[1:]) < 1:
            raise OnnxError(f"{_what(reshape)}: the {which} heads are [T, heads, head_dim]")
        x, affine = self.affine(reshape.input[0], f"W_{which.upper()}")
        if affine.cols != shape[1] * shape[2]:
            raise OnnxError(f"{_what(reshape)}: {affine.cols} lanes are not "
                            f"{shape[1]} heads of {shape[2]}")
        return x, affine, shape[1], shape[2]

    def rope(self, value):
        """(the heads before rotary positions, the frequencies)."""
        what = "rotary positions"
        node = self.node(value, ("Concat",), what)
        self.attributes(node, axis=(-1, 2))
        pieces = list(node.input)
        first = self.node(pieces[0], ("Sub",), what)
        second_at = 2 if len(pieces) == 4 else 1
        if len(pieces) not in (2, 4):
            raise OnnxError(f"{_what(node)}: {what} join 2 or 4 pieces")
        second = self.node(pieces[second_at], ("Add",), what)
        # each product lane * table, in either order
        a_cos, b_sin, a_sin, b_cos = (
            tuple(sorted(self.node(v, ("Mul",), what).input, key=self.is_table))
            for v in first.input + second.input)
        (a, cos), (b, sin) = a_cos, b_sin
        if (a_sin[0], b_cos[0]) != (a, b) or not self.same_table(a_sin[1], sin) or \
                not self.same_table(b_cos[1], cos):
            raise OnnxError(f"{_what(node)}: {what} are (a cos - b sin, a sin + b cos)")
        x, start_a, n = self.lanes(a)
        x_b, half, n_b = self.lanes(b)
        if x_b != x or start_a != 0 or n_b != n:
            raise OnnxError(f"{_what(node)}: {what} turn lanes (c, c + d/2) from c = 0")
        if len(pieces) == 4:
            for piece, start, end in ((pieces[1], n, half), (pieces[3], half + n, None)):
                x_r, s, m = self.lanes(piece)
                if x_r != x or s != start or (end is not None and s + m != end):
                    raise OnnxError(f"{_what(node)}: {what} keep the lanes they do not turn")
        elif n != half:
            raise OnnxError(f"{_what(node)}: {what} of {n} pairs keep the other lanes")
        if self.is_const(cos) and self.is_const(sin):  # an optimiser folded Cos and Sin
            return x, self.tabled_freqs(node, cos, sin, n)
        angle_cos = self.node(cos, ("Cos",), what).input[0]
        angle_sin = self.node(sin, ("Sin",), what).input[0]
        if angle_cos != angle_sin:
            raise OnnxError(f"{_what(node)}: Cos and Sin of one angle")
        return x, self.freqs(angle_cos, n)

    def same_table(self, value, other):
        """One table read twice: one value, or two constants of the same values whose dims
        differ only by leading 1s (an optimiser transposed one of them)."""
        if value == other or not (self.is_const(value) and self.is_const(other)):
            return value == other
        x, y = self.constants[value], self.constants[other]

        def core(dims):
            dims = list(dims)
            while dims and dims[0] == 1:
                dims.pop(0)
            return dims
        return core(x.dims) == core(y.dims) and x.values == y.values

    def is_table(self, value):
        """A rotary table: a constant, or Cos or Sin."""
        return self.is_const(value) or self.op(value) in ("Cos", "Sin")

    def known_freq(self, tables, n, c):
        """A rotary frequency of the model file in the graph's metadata whose cos and sin of
        p * f the tables hold, each within RUNTIME_ULPS floats of the correctly rounded value:
        onnxruntime folds Cos and Sin of a tinyadder export with its own kernels."""
        for f in getattr(self, "known_freqs", ()):
            rnd = float32 if self.dtype == DataType.FLOAT else float
            if all(_ulp_distance(rnd(fn(rnd(p * f))), table[p * n + c], self.dtype)
                   <= RUNTIME_ULPS for p in range(self.T)
                   for fn, table in ((math.cos, tables[0]), (math.sin, tables[1]))):
                return f
        return None

    def tabled_freqs(self, node, cos, sin, n):
        """The frequencies of cos and sin tables [T, n]: f_c the float (within 4 steps of
        atan2 at p = 1) whose angles p * f_c, each product rounded once, have these values as
        cos and sin faithfully rounded to the graph's type, at every p; a table no such f
        gives is refused. The model computes them correctly rounded, as it does a Cos node's."""
        T = self.T
        tables = [self.const(v, "a rotary table").values for v in (cos, sin)]
        if any(len(t) != T * n for t in tables) or T < 2:
            raise OnnxError(f"{_what(node)}: rotary cos and sin tables are [T, {n}], T > 1")
        rnd = float32 if self.dtype == DataType.FLOAT else float
        freqs = []
        for c in range(n):
            guess = rnd(math.atan2(tables[1][n + c], tables[0][n + c]))
            found = self.known_freq(tables, n, c)
            if found is not None:
                freqs.append(exact_of(found, self.dtype, None, f"{cos}[{c}]"))
                continue
            for k in range(-4, 5):
                f = _ulps(guess, k, self.dtype)
                if all(self.faithful(math.cos(rnd(p * f)), tables[0][p * n + c]) and
                       self.faithful(math.sin(rnd(p * f)), tables[1][p * n + c])
                       for p in range(T)):
                    found = f
                    break
            if found is None:
                raise OnnxError(f"{_what(node)}: rotary table column {c} is not cos and sin "
                                f"of p * f, faithfully rounded, for any f near {guess!r}")
            freqs.append(exact_of(found, self.dtype, None, f"{cos}[{c}]"))
        return tuple(freqs)

    def faithful(self, value, stored):
        """``stored`` is ``value`` faithfully rounded to the graph's type: one of the two
        floats around it (an optimiser's own cos and sin, numpy's float32 or a runtime's, are
        that, a few entries from correctly rounded)."""
        near = float32(value) if self.dtype == DataType.FLOAT else float(value)
        if stored == near or near == value:
            return stored == near
        return stored == _next(near, value > near, self.dtype)

    def freqs(self, value, n):
        if value in self._seen_angles:
            return self._seen_angles[value]
        if self.is_const(value):  # an optimiser folded positions * freqs: [T, n]
            flat, T = self.floats(value, "the rotary angles", (self.T, n)), self.T
            freqs = tuple(flat[n + c] for c in range(n)) if T > 1 else ()
            rnd = float32 if self.dtype == DataType.FLOAT else float
            if T < 2 or any(flat[p * n + c] != Fraction(rnd(p * float(freqs[c])))
                            for p in range(T) for c in range(n)):
                raise OnnxError(f"value {value!r}: folded rotary angles are p * f, each "
                                f"product rounded once")
            self._seen_angles[value] = freqs
            return freqs
        node = self.node(value, ("Mul",), "the rotary angle")
        positions, freqs = node.input
        if len(getattr(self.constants.get(positions), "dims", ())) != 2:
            positions, freqs = freqs, positions
        if self.floats(positions, "the positions", (self.T, 1)) != list(range(self.T)):
            raise OnnxError(f"{_what(node)}: the positions are 0 .. T-1, as [T, 1]")
        result = tuple(self.floats(freqs, "the rotary frequencies", (n,)))
        self._seen_angles[value] = result
        return result

    def lanes(self, value):
        """(x, start, count) of Slice(x, [start], [end], [-1])."""
        node = self.node(value, ("Slice",), "a slice of a head's lanes")
        self.attributes(node)
        x, starts, ends, *rest = node.input
        if len(rest) < 1 or self.ints(rest[0], "its axes") not in ([-1], [2]) or \
                (len(rest) > 1 and self.ints(rest[1], "its steps") != [1]):
            raise OnnxError(f"{_what(node)}: a slice of a head's lanes, on the last axis")
        start, end = self.ints(starts, "its start", (1,))[0], self.ints(ends, "its end", (1,))[0]
        if not 0 <= start < end:
            raise OnnxError(f"{_what(node)}: lanes {start} to {end}")
        return x, start, end - start

    # ---- embedding and readout -----------------------------------------------------------

    def gather_tokens(self, value):
        node = self.producer.get(value)
        return (node is not None and node.op_type == "Gather" and len(node.input) == 2
                and node.input[1] == self.tokens and self.is_const(node.input[0]))

    def is_embedding(self, value):
        if self.gather_tokens(value):
            return True
        node = self.producer.get(value)
        return (node is not None and node.op_type == "Add"
                and any(self.gather_tokens(v) for v in node.input))

    def embedding(self, value):
        pos = None
        if not self.gather_tokens(value):
            node = self.node(value, ("Add",), "the embedding")
            value, pos = node.input if self.gather_tokens(node.input[0]) else node.input[::-1]
        gather = self.node(value, ("Gather",), "the embedding")
        self.attributes(gather, axis=0)
        self.embedding_name = gather.input[0]
        W_E = self.matrix(gather.input[0], "W_E")
        embed = EmbedMatch(W_E)
        if pos is None:
            return embed
        if self.op(pos) == "MatMul":
            node = self.node(pos, ("MatMul",), "factored positions")
            embed.A = self.matrix(self.rows_T(node.input[0], "W_pos.A"), "W_pos.A")
            embed.B = self.matrix(node.input[1], "W_pos.B", rows=_cols(embed.A))
            width = _cols(embed.B)
        else:
            embed.W_pos = self.matrix(self.rows_T(pos, "W_pos"), "W_pos")
            width = _cols(embed.W_pos)
        if width != _cols(W_E):
            raise OnnxError(f"value {pos!r}: positions of {width} slots for an embedding of "
                            f"{_cols(W_E)}")
        return embed

    def rows_T(self, value, what):
        """The constant behind value = table[0:T] (a Slice) or value itself, of >= T rows."""
        if self.is_const(value):
            table = value
        else:
            cut = self.node(value, ("Slice",), what)
            self.attributes(cut)
            table, *bounds = cut.input
            if len(bounds) not in (3, 4) or self.ints(bounds[0], "its starts") != [0] or \
                    self.ints(bounds[1], "its ends") != [self.T] or \
                    self.ints(bounds[2], "its axes") != [0] or \
                    (len(bounds) == 4 and self.ints(bounds[3], "its steps") != [1]):
                raise OnnxError(f"{_what(cut)}: {what} is sliced to rows 0 .. T-1")
        dims = self.const(table, what).dims
        if len(dims) != 2 or dims[0] < self.T or (table == value and dims[0] != self.T):
            raise OnnxError(f"{what}: {list(dims)} rows for {self.T} positions")
        return table

    def readout(self, value):
        """(ReadoutMatch, the final stream)."""
        if self.op(value) == "Neg":
            neg = self.node(value, ("Neg",), "the readout")
            gather = self.node(neg.input[0], ("Gather",), "the negative-error readout")
            self.attributes(gather, axis=1)
            return ReadoutMatch("negative_error", slots=self.ints(
                gather.input[1], "the readout's slots")), gather.input[0]
        x, W, bias, transposed = self.linear(value, "the readout")
        folded = self.is_const(W) and not transposed and self.folded_tie(W)
        if self.is_const(W) and not folded:
            x, affine = self.affine(value, "the readout")
            return ReadoutMatch("linear", W=affine), x
        b = self.floats(bias, "the readout's b_U") if bias is not None else None
        if folded:  # W_E^T folded into a constant by an optimiser
            rows = folded
            self.const(W, "a tied readout's W_E^T")
        elif transposed:  # Gemm(x, W_E, transB = 1)
            rows = W
        else:
            transpose = self.node(W, ("Transpose",), "a tied readout's W_E^T")
            self.attributes(transpose, perm=((1, 0),))
            rows = transpose.input[0]
        ids = None
        if not self.is_const(rows):
            gather = self.node(rows, ("Gather",), "a tied readout's tokens")
            self.attributes(gather, axis=0)
            rows, ids = gather.input[0], self.ints(gather.input[1], "the readout's tokens")
        self.tied_to = rows
        scale = None
        if self.op(x) == "Mul" and not self.norm_weight(x):
            node = self.node(x, ("Mul",), "a tied readout's scale")
            x, s = node.input if self.is_const(node.input[1]) else node.input[::-1]
            scale = self.floats(s, "unembed.scale")
            if all(map(is_zero, scale)):
                raise OnnxError(f"{_what(node)}: a tied readout's scale of zeros")
        if self.op(x) == "Slice":
            x, self.tied_width = self.embedded(x)
        return ReadoutMatch("tied", ids=ids, scale=scale, b=b), x

    def folded_tie(self, W):
        """The embedding's table if the constant W is exactly its transpose, else None."""
        embedding = next((n.input[0] for n in self.producer.values()
                          if n.op_type == "Gather" and n.input[1:] == (self.tokens,) and
                          self.is_const(n.input[0])), None)
        if embedding is None:
            return None
        E, t = self.constants[embedding], self.constants[W]
        if len(E.dims) != 2 or tuple(t.dims) != (E.dims[1], E.dims[0]):
            return None
        V, width = E.dims
        same = all(t.values[c * V + v] == E.values[v * width + c]
                   for v in range(V) for c in range(width))
        return embedding if same and E.data_type == t.data_type else None

    def norm_weight(self, value):
        """Whether Mul(y, c) before a tied readout is a norm's weight rather than the
        readout's scale: the same product, told apart by the file's model (which has a scale
        or not), else read as the norm's weight when y is a norm's."""
        if self.file is not None:
            return not self.file.unembed.scale
        node = self.producer[value]
        return any(self.op(v) in ("Mul", "Div") and not self.is_const(v) for v in node.input)

    def embedded(self, value):
        cut = self.node(value, ("Slice",), "a tied readout's embedded slots")
        self.attributes(cut)
        x, *bounds = cut.input
        if len(bounds) < 3 or self.ints(bounds[0], "its starts") != [0] or \
                self.ints(bounds[2], "its axes") not in ([1], [-1]) or \
                (len(bounds) == 4 and self.ints(bounds[3], "its steps") != [1]):
            raise OnnxError(f"{_what(cut)}: a tied readout reads slots 0 .. width-1")
        return x, self.ints(bounds[1], "its ends", (1,))[0]

    tied_to = None
    tied_width = None
    embedding_name = None


def _what(node):
    return f"node {node.name!r} ({node.op_type})" if node.name else f"a {node.op_type} node"


# how far (in floats of the graph's type) a folded rotary table of tinyadder's own export may
# be from the correctly rounded cos and sin: onnxruntime 1.32's float64 kernels, measured on
# the shipped models' exports, are up to 5 floats off
RUNTIME_ULPS = 8


def _rotary_floats(model, dtype):
    """Every rotary frequency of the model, as the float the export stores."""
    return tuple(dict.fromkeys(float(stored(f, dtype)) for b in model.blocks
                               for f in (b.attn.rope_freqs or ())))


def _ulp_distance(a, b, dtype):
    """How many floats of the type lie from a to b (0 when equal; -0 and 0 are one)."""
    fmt, bits = ("<f", "<i") if dtype == DataType.FLOAT else ("<d", "<q")
    sign = 2 ** 31 if dtype == DataType.FLOAT else 2 ** 63

    def ordinal(x):
        i = struct.unpack(bits, struct.pack(fmt, x))[0]
        return i if i >= 0 else -(i + sign)
    return abs(ordinal(a) - ordinal(b))


def _next(x, up, dtype):
    """The float of the type next to x, above it if ``up``, else below."""
    if dtype != DataType.FLOAT:
        return math.nextafter(x, math.inf if up else -math.inf)
    if x == 0:
        x = math.copysign(0.0, 1.0 if up else -1.0)
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits += 1 if (x > 0 or math.copysign(1, x) > 0) == up else -1
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _ulps(x, k, dtype):
    """The float k steps of the type away from x."""
    if dtype == DataType.FLOAT:
        bits = struct.unpack("<i", struct.pack("<f", x))[0]
        return struct.unpack("<f", struct.pack("<i", bits + (k if x >= 0 else -k)))[0]
    for _ in range(abs(k)):
        x = math.nextafter(x, math.inf if k > 0 else -math.inf)
    return x


def _transposed(matrix):
    return [list(column) for column in zip(*matrix)]


def _shown(value):
    return repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."


def _sized(norm, n):
    """The norm over n lanes; its weight, if any, has one value per lane."""
    if norm is not None and norm.w is not None and len(norm.w) != n:
        what = "an RMSNorm" if norm.kind == "rms" else "a LayerNorm"
        raise OnnxError(f"{what} weight of {len(norm.w)} values over {n} lanes")
    return None if norm is None else replace(norm, n=n)


# ---- the Model, with names ----------------------------------------------------------------

def _stored_weights(model, view):
    """The model's every tensor as tinyadder's exporter stores it, at the graph's length and
    in its type, by name; a fixed bias on and below the diagonal only (above it, the mask
    decides)."""
    from .export import export  # here: only an optimised graph needs it
    T = view.T
    out = {}
    try:
        graph = export(model, length=T, dtype="float32" if view.dtype == DataType.FLOAT
                       else "float64").graph
    except OnnxError as err:
        raise OnnxError(f"the graph's model does not export again: {err}") from None
    for t in graph.initializer:
        values = t.values
        if t.name.endswith("attn.bias"):
            H, P, _ = t.dims
            values = tuple(values[(h * P + i) * P + j] for h in range(H) for i in range(T)
                           for j in range(i + 1))
        elif t.name == "W_pos":
            values = values[:T * t.dims[1]]
        elif t.name.endswith((".starts", ".ends", ".axes", ".steps")):
            continue  # the slices of longer tables to T
        out[t.name] = values
    return out


def _fits(view, layout, tokens):
    """Refuse a layout that does not fit the graph, in one line."""
    where = layout.where
    if view.file is not None:
        raise OnnxError(f"{where}: the graph names its tokens and prompt itself (metadata "
                        f"tinyadder.model); give no layout")
    if len(layout.vocab) != tokens:
        raise OnnxError(f"{where}: {len(layout.vocab)} tokens in its vocab; the graph's "
                        f"embedding has {tokens}")
    p = layout.prompt
    length = sum(p.digits if t in ("a", "b") else 1 for t in p.question) + p.answer_digits - 1
    if length > view.T:
        raise OnnxError(f"{where}: its prompt and answer take {length} positions; the graph "
                        f"was exported at {view.T}")


def _file_model(view):
    """The model file in the metadata (``tinyadder.model``), or None."""
    text = view.metadata.get("tinyadder.model")
    if text is None:
        return None
    try:
        return modelfile.loads(text)
    except modelfile.ModelFileError as err:
        raise OnnxError(f"metadata 'tinyadder.model': {err}") from None


def _names(file_names, count, prefix, what):
    """The file's names for ``count`` things (it must have that many), or prefix0, ..."""
    if file_names is None:
        return tuple(f"{prefix}{i}" for i in range(count))
    if len(file_names) != count:
        raise OnnxError(f"the graph does not fit the model file in its metadata: {what} has "
                        f"{count} in the graph, {len(file_names)} in the file")
    return tuple(file_names)


def _table(matrix, rows, cols, like=None):
    """{row: {col: value}} of a dense matrix's non-zero entries, in the order of the file's
    table ``like`` where it has one (the model's order of entries is the file's)."""
    out = {}
    for r, row in zip(rows, matrix):
        entries = {c: v for c, v in zip(cols, row) if not is_zero(v)}
        if entries:
            out[r] = entries
    like = like if isinstance(like, Mapping) else {}
    return {r: _like(out[r], like.get(r)) for r in _like(out, like)}


def _vector(values, cols, like=None):
    return {} if values is None else _like(
        {c: v for c, v in zip(cols, values) if not is_zero(v)}, like)


def _like(mapping, like):
    """``mapping`` with the keys ``like`` has first, in its order."""
    if not isinstance(like, Mapping):
        return mapping
    return {k: mapping[k] for k in [k for k in like if k in mapping] +
            [k for k in mapping if k not in like]}


def _weight(affine, rows, cols, file_table, what):
    """An Affine's weight as a table, or as a Factored one (its inner lanes named by the
    file's, if it has them)."""
    if affine.A is None:
        if isinstance(file_table, Factored):
            raise OnnxError(f"the graph does not fit the model file in its metadata: {what} "
                            f"is factored in the file, not in the graph")
        return _table(affine.W, rows, cols, file_table)
    known = file_table.inner if isinstance(file_table, Factored) else None
    if file_table is not None and known is None:
        raise OnnxError(f"the graph does not fit the model file in its metadata: {what} is "
                        f"factored in the graph, not in the file")
    inner = _names(known, _cols(affine.A), "r", f"{what}'s inner lanes")
    return Factored(inner, _table(affine.A, rows, inner, known and file_table.A),
                    _table(affine.B, inner, cols, known and file_table.B))


def _norm(match, cols, file_norm=None):
    """The Norm; a LayerNorm's eps written as a float attribute is the file's constant if
    that stores as the float (as ``tinyadder.exact.*`` names an initializer's), and a scale
    of ones is the file's absent weight."""
    if match is None:
        return None
    eps, w = match.eps, match.w
    if match.kind == "layer" and file_norm is not None and file_norm.kind == "layer":
        if match.eps_float is not None and stored(file_norm.eps, match.eps_float[1]) == \
                match.eps_float[0]:
            eps = file_norm.eps
        if not file_norm.w and w is not None and all(v == 1 for v in w):
            w = None
    return Norm(eps, _vector(w, cols, file_norm and file_norm.w), match.mean, match.apply,
                match.kind, _vector(match.b, cols, file_norm and file_norm.b))


def _bias(match, heads, file_attn):
    """The fixed bias table and its default: entries on and below the diagonal, those that
    differ from the default listed (and those the file lists)."""
    if match.bias is None:
        return {}, 0
    values = [v for table in match.bias for r, row in enumerate(table) for v in row[:r + 1]]
    listed = {}
    if file_attn is not None and file_attn.bias:
        default = file_attn.bias_default
        listed = {(h, i, j) for h, rows in file_attn.bias.items() for i, row in rows.items()
                  for j in row}
    else:
        default = Counter(values).most_common(1)[0][0]
    out = {}
    for h, table in zip(heads, match.bias):
        for i, row in enumerate(table):
            for j, v in enumerate(row[:i + 1]):
                if v != default or (h, i, j) in listed:
                    out.setdefault(h, {}).setdefault(i, {})[j] = v
    like = file_attn.bias if file_attn is not None else {}
    return {h: {i: _like(out[h][i], like.get(h, {}).get(i)) for i in _like(out[h], like.get(h))}
            for h in _like(out, like)}, default


def _attention(match, inp, file_attn, where):
    f = file_attn
    heads = _names(f and f.heads, match.heads, "h", f"{where}.attn heads")
    if f is not None and f.kv_heads:
        kv = _names(f.kv_heads, match.groups, "kv", f"{where}.attn kv_heads")
    else:
        kv = () if match.groups == match.heads else _names(None, match.groups, "kv", "")
    if f is None and match.groups == match.heads:
        kv = ()
    probe = Attention(heads=heads, head_dim=match.d, kv_heads=kv)
    q_lanes, kv_lanes = probe.lanes(heads), probe.lanes(probe.groups)
    components = tuple(str(c) for c in range(match.d))
    bias, default = _bias(match, heads, f)
    tables = {}
    for name, affine, rows, cols in (("Q", match.q, inp, q_lanes), ("K", match.k, inp, kv_lanes),
                                     ("V", match.v, inp, kv_lanes), ("O", match.o, q_lanes, inp)):
        tables[f"W_{name}"] = _weight(affine, rows, cols, f and getattr(f, f"W_{name}"),
                                      f"{where}.attn.W_{name}")
        tables[f"b_{name}"] = _vector(affine.b, cols, f and getattr(f, f"b_{name}"))
    mask = match.mask if match.mask is not None else (f.mask if f is not None else NEG_INF)
    scale_op = match.scale_op or (f.scale_op if f is not None else "multiply")
    return Attention(heads=heads, **tables, slopes=_vector(match.slopes, heads, f and f.slopes),
                     head_dim=match.d, kv_heads=kv,
                     q_norm=_norm(match.q_norm, components, f and f.q_norm),
                     k_norm=_norm(match.k_norm, components, f and f.k_norm),
                     rope_freqs=match.freqs,
                     scale=match.scale, scale_op=scale_op, bias=bias, bias_default=default,
                     softmax=match.softmax, mask=mask, normalise=match.normalise)


def _mlp(match, inp, wide, file_mlp, where):
    units = _names(file_mlp and file_mlp.units, match.up.cols, "u", f"{where}.mlp units")
    tables = {}
    parts = [("W_in", "b_in", match.up, inp, units)]
    if match.gated:
        parts.append(("W_gate", "b_gate", match.gate, inp, units))
    parts.append(("W_out", "b_out", match.down, units, wide))
    for w, b, affine, rows, cols in parts:
        tables[w] = _weight(affine, rows, cols, file_mlp and getattr(file_mlp, w),
                            f"{where}.mlp.{w}")
        tables[b] = _vector(affine.b, cols, file_mlp and getattr(file_mlp, b))
    return MLP(units=units, act=match.act, gated=match.gated, **tables)


def _unembed(match, vocab, final, embedded, view, file_model):
    file_tokens = file_model.unembed.tokens if file_model is not None else None
    if match.kind == "tied":
        if view.tied_to != view.embedding_name:
            raise OnnxError(f"a tied readout reads {view.tied_to!r}, not the embedding "
                            f"{view.embedding_name!r}")
        if view.tied_width not in (None, len(embedded)) or \
                (view.tied_width is None and len(final) != len(embedded)):
            raise OnnxError("a tied readout reads the embedded slots")
        ids = match.ids if match.ids is not None else range(len(vocab))
        if any(not 0 <= i < len(vocab) for i in ids):
            raise OnnxError("a tied readout's token ids are outside the vocabulary")
        tokens = tuple(vocab[i] for i in ids)
        if file_tokens is not None and tuple(file_tokens) != tokens:
            raise OnnxError("the graph does not fit the model file in its metadata: the "
                            "tied readout's tokens differ")
        u = file_model.unembed if file_model is not None else None
        return Unembed("tied", tokens, scale=_vector(match.scale, embedded, u and u.scale),
                       b_U=_vector(match.b, tokens, u and u.b_U))
    count = len(match.slots) if match.kind == "negative_error" else match.W.cols
    if file_tokens is None and count > len(vocab):
        raise OnnxError(f"the readout has {count} logits for {len(vocab)} tokens")
    tokens = _names(file_tokens, count, "", "the readout's tokens") if file_tokens else \
        tuple(vocab[:count])
    if match.kind == "negative_error":
        if any(not 0 <= s < len(final) for s in match.slots):
            raise OnnxError("the readout's slots are outside the final stream")
        return Unembed("negative_error", tokens,
                       slots={t: final[s] for t, s in zip(tokens, match.slots)})
    return Unembed("linear", tokens, W_U=_weight(match.W, final, tokens, file_model and
                                                 file_model.unembed.W_U, "unembed.W_U"),
                   b_U=_vector(match.W.b, tokens, file_model and file_model.unembed.b_U))


def _assemble(view, embed, blocks, ln_final, readout, mix=None):
    f = view.file
    if f is not None and len(f.blocks) != len(blocks):
        raise OnnxError(f"the graph does not fit the model file in its metadata: "
                        f"{len(blocks)} blocks in the graph, {len(f.blocks)} in the file")
    layout = view.layout
    if layout is not None:
        _fits(view, layout, len(embed.W_E))
    vocab = (layout.vocab if layout is not None else
             _names(f and f.vocab, len(embed.W_E), "t", "the vocabulary"))
    width_embed = _cols(embed.W_E)
    final_width = blocks[-1].width_out if blocks else width_embed
    if blocks and blocks[0].width_in != width_embed:
        raise OnnxError(f"block 0 reads {blocks[0].width_in} slots; the embedding writes "
                        f"{width_embed}")
    for i in range(1, len(blocks)):
        if blocks[i].width_in != blocks[i - 1].width_out:
            raise OnnxError(f"block {i} reads {blocks[i].width_in} slots; block {i - 1} "
                            f"writes {blocks[i - 1].width_out}")
    if f is not None and len(f.slots) < final_width:
        raise OnnxError(f"the graph does not fit the model file in its metadata: a stream of "
                        f"{final_width} slots, {len(f.slots)} in the file")
    slots = f.slots if f is not None else _names(None, final_width, "s", "")
    embedded = slots[:width_embed]
    W_pos = {}
    if embed.W_pos is not None:
        W_pos = _table(embed.W_pos, range(len(embed.W_pos)), embedded, f and f.W_pos)
    elif embed.A is not None:
        known = f.W_pos.inner if f is not None and isinstance(f.W_pos, Factored) else None
        inner = _names(known, _cols(embed.A), "r", "W_pos's inner lanes")
        W_pos = Factored(inner, _table(embed.A, range(len(embed.A)), inner, known and f.W_pos.A),
                         _table(embed.B, inner, embedded, known and f.W_pos.B))
    built = []
    for i, b in enumerate(blocks):
        fb = f.blocks[i] if f is not None else None
        inp, wide = slots[:b.width_in], slots[:b.width_out]
        built.append(Block(
            _attention(b.attn, inp, fb and fb.attn, f"blocks.{i}"),
            _mlp(b.mlp, inp, wide, fb and fb.mlp, f"blocks.{i}"), b.width_in, b.width_out,
            ln1=_norm(b.ln1, inp, fb and fb.ln1), ln2=_norm(b.ln2, inp, fb and fb.ln2)))
    final = slots[:final_width]
    ln_final = _sized(ln_final, final_width)
    dtype = "float32" if view.dtype == DataType.FLOAT else "float64"
    extras = dict(about={"dtype": dtype}, prompt=layout and layout.prompt)
    extras = extras if f is None else dict(
        prompt=f.prompt, pos_role=f.pos_role, roles=f.roles, meta=f.meta, about=f.about,
        constants=f.constants, fixed=f.fixed, ties=f.ties, derived=f.derived)
    try:
        model = Model(
            name=f.name if f is not None else (view.graph_name or "onnx"), vocab=vocab,
            slots=slots, W_E=_table(embed.W_E, vocab, embedded, f and f.W_E),
            width_embed=width_embed,
            blocks=tuple(built), unembed=_unembed(readout, vocab, final, embedded, view, f),
            W_pos=W_pos, ln_final=_norm(ln_final, final, f and f.ln_final), mix=mix,
            **extras)
    except WeightError as err:
        raise OnnxError(f"the graph's model is not one tinyadder runs: {err}") from None
    # the file's name and facts are the graph's only if its weights are the graph's too
    if f is not None and modelfile.dump(model) != modelfile.dump(f):
        raise OnnxError(f"the graph does not fit the model file in its metadata: its weights "
                        f"are not those of {ascii(f.name)}")
    return model
