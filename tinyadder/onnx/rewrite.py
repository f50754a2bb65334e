"""An exported graph rewritten into the forms ``read`` matches (docs/onnx.md, "Graphs other
tools write").

``torch.onnx.export`` and the optimisers after it write the same computation in other forms
than tinyadder's exporter: shape arithmetic and constant weights as nodes, a leading batch
dimension of 1, a projection shared by two uses, two transposes fused into one, the causal
mask and a fixed bias in one table, or a mask applied by ``Where``. :func:`canonical` rewrites
those, and only those, into the exporter's forms, each rewrite exact:

- **fold**: a node whose inputs are all constants (or the static shape of a value) becomes
  the constant it computes. Only operators whose result IEEE arithmetic defines are folded:
  data movement (Identity, Cast between the types read, Reshape, Transpose, Unsqueeze,
  Squeeze, Concat, Slice, Gather, GatherND, ScatterND, Expand, Tile, Shape, ConstantOfShape,
  Range, Trilu),
  comparisons and Where, and Add, Sub, Mul, Div, Neg, Reciprocal, Sqrt in the constant's
  type: a float32 constant's fold is the float32 program's value (a float32 operation done in
  float64 and rounded once is correctly rounded: 53 >= 2 x 24 + 2). Pow folds for integer
  exponents (the exact power, rounded once) and 1/2 (the root); Cos and Sin of a constant
  that no computation with the tokens reads fold correctly rounded (``_correct_trig``), and a
  rotary table's Cos, which q and k read, stays for the reader to match with its angles. Exp
  and the like are left to the patterns that read them;
- **casts**: a Cast to the type its input has is its input;
- **batch**: an input [1, T] becomes [T], and every axis, perm, shape and constant that
  counts the batch axis follows;
- **shared**: a projection (MatMul by a constant, its bias, Reshape, Transpose) whose output
  two patterns read is written once for each;
- **transposes**: a heads split transposed straight to [heads, d, T] becomes the two
  transposes of [heads, T, d] and k^T;
- **mask**: Where(causal, scores, -inf) (or with its branches the other way round) becomes
  scores + (0 or -inf), and one table that holds both a fixed bias and the causal mask
  becomes the two Adds of the exporter;
- **attributes**: attributes written out at their default values are dropped;
- **lookups**: GatherND(W_E, Unsqueeze(ids, -1)) is Gather(W_E, ids), Reciprocal(x) is
  Div(1, x), and Cos (or Sin) of a constant, reshaped (or transposed across axes of 1), is
  Cos of the constant as [T, n];
- **linear maps**: a projection written lane by lane (Slices and Gathers of the last axis,
  Muls by constants, Adds, Subs, Unsqueezes, Expands, Concats with zeros) is the chain of
  MatMuls that computes the same float program (``_linear``);
- **columns**: a Slice or Split of the last axis of x @ W is x @ W' (``_column_slices``); a
  strided Slice that skips nothing it keeps is step 1 (``_contiguous_slices``);
- **repeated heads**: Reshape(Tile or Expand(Unsqueeze(k))) is a Gather of the heads
  (``_tiled_heads``);
- **scattered lanes**: lanes (or runs of them) written by ScatterND or ScatterElements, or
  by torch.export's slice_scatter between Transposes, are a Concat (``_scattered_lanes``,
  ``_transposed_scatters``); Reshape without the batch, Transpose, Reshape back is one
  Transpose (``_unbatched_transposes``);
- **token ids**: an output ArgMax(s) or ArgMin(s) is the logits s or -s (``_token_ids``);
- **broadcasts**: Reshapes of leading axes of 1 and Expands are one Expand; an Expand or
  Slice that keeps its input is its input (``_broadcasts``);
- **hand-written forwards**: Slices of Concats, widened writes, heads merged without W_O,
  dot-product projections, ALiBi added as slopes (j - i), constant q or k heads and folded
  patterns of zero scores, two-sided hinges, a narrowed stream (``_hand_written``), one lane
  times a row (``_lane_products``).

What does not fit stays as it is, and the reader refuses it in one line naming the node.
"""

from dataclasses import replace
from fractions import Fraction
import math

from ..numbers import elementary
from ..numbers.rounding import single_of
from .limits import LIMITS
from .messages import Attribute, AttributeType, DataType, Node, Tensor, float32
from .wire import OnnxError

FLOATS = (DataType.FLOAT, DataType.DOUBLE)
INTS = (DataType.INT32, DataType.INT64)


def canonical(onnx_model):
    """``onnx_model`` in the forms ``read`` matches (the module docstring)."""
    g = _Graph(onnx_model)
    try:
        g.fold()
        _token_ids(g)
        _broadcasts(g)
        _column_slices(g)
        _contiguous_slices(g)
        _tiled_heads(g)
        _scattered_lanes(g)
        _transposed_scatters(g)
        _transposed_gathers(g)
        _unbatched_transposes(g)
        _same_type_casts(g)
        _einsums(g)
        _heads_transposes(g)
        _lookups(g)
        _token_tables(g)
        _linear(g)
        _trig_tables(g)
        _flattened_gemms(g)
        _broadcast_heads(g)
        _trig_tables(g)
        _batched_factors(g)
        g.unbatch()
        _hand_written(g)
        _concat_embedding(g)
        _sliced_projections(g)
        _joined_projections(g)
        _unit_corrections(g)
        _lane_products(g)
        _heads_of_one(g)
        g.split_mask()
        g.unshare()
        if _interleaved_rotary(g):
            _heads_transposes(g)
            _trig_tables(g)
        g.split_transposes()
        g.drop_defaults()
        return g.model()
    except OnnxError:
        raise
    except (ValueError, IndexError, KeyError, TypeError, AttributeError, ZeroDivisionError,
            OverflowError, MemoryError, RecursionError) as why:  # a graph whose shapes do not add up
        raise OnnxError(f"the graph does not compute as its shapes say: {str(why)[:120]}") \
            from None


# ---- tensors as (type, dims, flat values) -------------------------------------------------

def _round(dtype, x):
    return float32(x) if dtype == DataType.FLOAT else x


def _strides(dims):
    out, step = [], 1
    for d in reversed(dims):
        out.append(step)
        step *= d
    return out[::-1]


def _broadcast(*shapes):
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for sizes in zip(*padded):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            raise ValueError(f"shapes {[list(s) for s in shapes]} do not broadcast")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _index(flat_index, dims):
    out = []
    for d in reversed(dims):
        out.append(flat_index % d)
        flat_index //= d
    return out[::-1]


def _take(values, dims, out_dims):
    """``values`` of shape ``dims`` broadcast to ``out_dims``."""
    pad = (1,) * (len(out_dims) - len(dims)) + tuple(dims)
    strides = _strides(pad)
    total = math.prod(out_dims)
    result = []
    for i in range(total):
        idx = _index(i, out_dims)
        result.append(values[sum((0 if p == 1 else k) * s for k, p, s in zip(idx, pad, strides))])
    return result


def _transpose(values, dims, perm):
    out_dims = tuple(dims[p] for p in perm)
    strides = _strides(dims)
    result = []
    for i in range(math.prod(out_dims)):
        idx = _index(i, out_dims)
        result.append(values[sum(idx[k] * strides[p] for k, p in enumerate(perm))])
    return out_dims, result


class _Const:
    def __init__(self, dtype, dims, values):
        dims = tuple(int(d) for d in dims)
        if math.prod(dims) > LIMITS.elements:
            raise OnnxError(f"a folded constant of {math.prod(dims):,} elements "
                            f"(limit elements, {LIMITS.elements:,})")
        self.dtype, self.dims, self.values = dtype, dims, list(values)


def _elementwise(dtype, fn, *consts):
    dims = _broadcast(*(c.dims for c in consts))
    if math.prod(dims) > LIMITS.elements:
        raise OnnxError(f"a folded constant of {math.prod(dims):,} elements (limit elements)")
    columns = [_take(c.values, c.dims, dims) for c in consts]
    return _Const(dtype, dims, [fn(*xs) for xs in zip(*columns)])


def _div(dtype, a, b):
    if dtype in INTS:
        if b == 0:
            raise ValueError("an integer division by 0")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if b == 0:
        return math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan
    return _round(dtype, a / b)


def _arith(op):
    def fn(dtype, a, b):
        if dtype in INTS:
            return {"Add": a + b, "Sub": a - b, "Mul": a * b}[op]
        r = {"Add": lambda: a + b, "Sub": lambda: a - b, "Mul": lambda: a * b}[op]()
        return _round(dtype, r)
    return fn


def _axis(axis, rank, what):
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{what} {axis} outside a rank of {rank}")
    return axis % rank if rank else 0


# ---- the graph --------------------------------------------------------------------------

class _Graph:
    def __init__(self, model):
        self.model_in = model
        g = model.graph
        self.nodes = list(g.node)
        self.consts = {t.name: _Const(t.data_type, t.dims, t.values) for t in g.initializer}
        self.tensors = {t.name: t for t in g.initializer}
        self.shapes = {v.name: tuple(v.shape) if v.shape is not None and all(
            isinstance(d, int) for d in v.shape) else None for v in g.input}
        for name, dims in self.shapes.items():
            if dims is not None and math.prod(dims) > LIMITS.elements:
                raise OnnxError(f"graph input {name!r}: shape {list(dims)} makes "
                                f"{math.prod(dims):,} elements (limit elements, "
                                f"{LIMITS.elements:,})")
        _in_order(self.nodes, set(self.consts) | set(self.shapes))
        self.types = {v.name: v.elem_type for v in g.input}
        self.inputs = list(g.input)
        self.outputs = list(g.output)
        self.counter = 0
        self.unbatched = {}
        self.meets_data = _meeting_data(self.nodes, self.shapes)

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}.{self.counter}"

    def add_const(self, name, const):
        self.consts[name] = const
        self.tensors.pop(name, None)

    # ---- fold ----------------------------------------------------------------------

    def fold(self):
        kept = []
        for node in self.nodes:
            value = None
            if node.op_type == "Constant" and len(node.attribute) == 1 and \
                    node.attribute[0].name == "value":
                t = node.attribute[0].value
                value = _Const(t.data_type, t.dims, t.values)
            elif node.op_type == "Shape" and node.input and \
                    self.shapes.get(node.input[0]) is not None:
                dims = self.shapes[node.input[0]]
                attrs = _attrs(node)
                start, end = attrs.get("start", 0), attrs.get("end", len(dims))
                dims = dims[slice(start, end)]
                value = _Const(DataType.INT64, (len(dims),), dims)
            elif node.op_type in FOLD and node.input and \
                    all(not x or x in self.consts for x in node.input) and \
                    len(node.output) == 1:
                try:
                    value = FOLD[node.op_type](self, node, [self.consts.get(x) for x in
                                                            node.input])
                except OnnxError as why:
                    if str(why).startswith(_what(node)):
                        raise
                    raise OnnxError(f"{_what(node)}: cannot be folded: {why}") from None
                except KeyError as why:
                    raise OnnxError(f"{_what(node)}: cannot be folded: attribute {why} is "
                                    f"missing") from None
                except (ValueError, IndexError, KeyError, ZeroDivisionError, TypeError,
                        AttributeError, OverflowError) as why:
                    raise OnnxError(f"{_what(node)}: cannot be folded: {why}") from None
            if value is not None and len(node.output) == 1:
                self.add_const(node.output[0], value)
                self.shapes[node.output[0]] = value.dims
                continue
            kept.append(node)
            self.infer(node)
        self.nodes = _pruned(self, kept)  # a value read only by a folded Shape goes too

    def infer(self, node):
        """Record the static shape of the node's output where its inputs' are known."""
        try:
            shape = _SHAPE.get(node.op_type, lambda g, n: None)(self, node)
        except (ValueError, IndexError, KeyError, TypeError, AttributeError):
            shape = None  # unknown: an input's shape or a constant it needs is not known
        for out in node.output:
            self.shapes.setdefault(out, None)
        if shape is not None and len(node.output) == 1:
            self.shapes[node.output[0]] = tuple(shape)
        if node.op_type == "Split":
            for out, dims in zip(node.output, _split_shapes(self, node) or ()):
                self.shapes[out] = dims

    def shape(self, value):
        if value in self.consts:
            return self.consts[value].dims
        return self.shapes.get(value)

    # ---- batch ---------------------------------------------------------------------

    def unbatch(self):
        """[1, T] token ids to [T]: every value that descends from them loses its axis 0."""
        if len(self.inputs) != 1 or self.shapes.get(self.inputs[0].name) is None or \
                len(self.shapes[self.inputs[0].name]) != 2 or \
                self.shapes[self.inputs[0].name][0] != 1:
            return
        batched = {self.inputs[0].name}
        nodes = []
        for node in self.nodes:
            if not any(x in batched for x in node.input):
                nodes.append(node)
                continue
            out_shape = self.shapes.get(node.output[0]) if len(node.output) == 1 else None
            if node.op_type != "Gather" or node.input[1] not in batched:
                if out_shape is None:
                    raise OnnxError(f"{_what(node)}: the shape of its output is not known "
                                    f"(tinyadder does not follow shapes through {node.op_type}"
                                    f" or what comes before it), so the batch axis cannot be "
                                    f"dropped")
                if not out_shape or out_shape[0] != 1:
                    raise OnnxError(f"{_what(node)}: its output {list(out_shape)} has no "
                                    f"batch of one first")
            node = self._unbatched(node, batched)
            for out in node.output:
                batched.add(out)
                if self.shapes.get(out):
                    self.shapes[out] = self.shapes[out][1:]
            nodes.append(node)
        self.nodes = nodes
        self.inputs = [replace(v, shape=tuple(v.shape[1:])) for v in self.inputs]
        self.outputs = [replace(v, shape=tuple(v.shape[1:]))
                        if v.name in batched and v.shape and v.shape[0] == 1 else v
                        for v in self.outputs]

    def _unbatched_const(self, x, rank, node):
        """A constant of the batched rank without its batch axis of one; another value as
        it is."""
        c = self.consts.get(x)
        if c is None or len(c.dims) != rank or not rank:
            return x
        if c.dims[0] != 1:
            raise OnnxError(f"{_what(node)}: constant {x!r} has a batch axis of {c.dims[0]}")
        if x not in self.unbatched:  # one constant read twice stays one
            self.unbatched[x] = self.fresh(f"{x}.unbatched")
            self.add_const(self.unbatched[x], _Const(c.dtype, c.dims[1:], c.values))
        return self.unbatched[x]

    def _unbatched(self, node, batched):
        op, attrs = node.op_type, _attrs(node)
        rank = len(self.shapes.get(node.output[0]) or ()) if len(node.output) == 1 else 0
        # the rank with the batch axis (a batched input's shape has already lost it)
        in_rank = len(self.shape(node.input[0]) or ()) + (node.input[0] in batched) \
            if node.input else 0
        if op == "Gather":
            if node.input[1] in batched and node.input[0] not in batched:
                return node
            return _with(node, axis=_less(_axis(attrs.get("axis", 0), in_rank, "axis"), node))
        if op == "Transpose":
            perm = attrs.get("perm", tuple(reversed(range(in_rank))))
            if perm[0] != 0:
                raise OnnxError(f"{_what(node)}: a Transpose that moves the batch axis")
            return _with(node, perm=tuple(p - 1 for p in perm[1:]))
        if op == "Reshape":
            shape = self.consts.get(node.input[1])
            if shape is None or not shape.values or shape.values[0] not in (1, 0, -1):
                raise OnnxError(f"{_what(node)}: a Reshape whose shape keeps a batch of one "
                                f"first")
            name = self.fresh(f"{node.input[1]}.unbatched")
            self.add_const(name, _Const(shape.dtype, (len(shape.values) - 1,),
                                        shape.values[1:]))
            return replace(node, input=(node.input[0], name))
        if op == "Concat":  # its constant parts lose their batch of one too
            node = replace(node, input=tuple(self._unbatched_const(x, rank, node)
                                             for x in node.input))
        if op in ("Softmax", "LogSoftmax", "Concat", "ArgMax", "ArgMin", "Split", "Flatten",
                  "LayerNormalization"):
            axis = attrs.get("axis", -1 if op in ("Softmax", "LayerNormalization") else 0)
            return _with(node, axis=axis if axis < 0 else _less(axis, node))
        if op.startswith("Reduce"):
            if len(node.input) > 1 and node.input[1]:
                axes = self.consts.get(node.input[1])
                if axes is None:
                    raise OnnxError(f"{_what(node)}: axes must be a constant")
                name = self.fresh(f"{node.input[1]}.unbatched")
                self.add_const(name, _Const(axes.dtype, axes.dims, [
                    a if a < 0 else _less(a, node) for a in axes.values]))
                return replace(node, input=(node.input[0], name) + tuple(node.input[2:]))
            if "axes" in attrs:
                return _with(node, axes=tuple(a if a < 0 else _less(a, node)
                                              for a in attrs["axes"]))
            return node
        if op in ("Unsqueeze", "Squeeze"):
            axes = self.consts.get(node.input[1]) if len(node.input) > 1 else None
            if axes is None:
                raise OnnxError(f"{_what(node)}: axes must be a constant")
            r = rank if op == "Unsqueeze" else in_rank
            name = self.fresh(f"{node.input[1]}.unbatched")
            self.add_const(name, _Const(axes.dtype, axes.dims, [
                _less(a % r, node) for a in axes.values]))
            return replace(node, input=(node.input[0], name))
        if op == "Slice":
            axes = self.consts.get(node.input[3]) if len(node.input) > 3 else None
            if axes is None:
                raise OnnxError(f"{_what(node)}: a Slice of a batch names its axes")
            name = self.fresh(f"{node.input[3]}.unbatched")
            self.add_const(name, _Const(axes.dtype, axes.dims, [
                _less(a % in_rank, node) for a in axes.values]))
            return replace(node, input=node.input[:3] + (name,) + tuple(node.input[4:]))
        if op in ELEMENTWISE or op == "MatMul":
            return replace(node, input=tuple(self._unbatched_const(x, rank, node)
                                             for x in node.input))
        if op == "Expand" and node.input[0] in batched:
            shape = self.consts.get(node.input[1])
            if shape is None or len(shape.values) != rank or shape.values[0] != 1:
                raise OnnxError(f"{_what(node)}: an Expand of a batch to a constant shape "
                                f"with a batch of one first")
            name = self.fresh(f"{node.input[1]}.unbatched")
            self.add_const(name, _Const(shape.dtype, (rank - 1,), shape.values[1:]))
            return replace(node, input=(node.input[0], name))
        if op in SAME_SHAPE:
            return node
        raise OnnxError(f"{_what(node)}: operator {op} on a batch of one is not one tinyadder "
                        f"rewrites")

    # ---- the causal mask -------------------------------------------------------------

    def split_mask(self):
        """Where(c, s, -inf) as s + mask; one [heads, T, T] table of bias and mask as two."""
        nodes = []
        for node in self.nodes:
            if node.op_type == "Where" and node.input[0] in self.consts and \
                    (node.input[1] in self.consts) != (node.input[2] in self.consts):
                # Where(c, s, -inf) or Where(c, -inf, s): s where it is kept, -inf elsewhere
                keep_when = node.input[1] not in self.consts
                scores, fill = node.input[1:] if keep_when else node.input[2:0:-1]
                cond, fill = self.consts[node.input[0]], self.consts[fill]
                if fill.dtype in FLOATS and set(fill.values) == {-math.inf}:
                    dims = _broadcast(cond.dims, fill.dims)
                    flags = _take(cond.values, cond.dims, dims)
                    name = self.fresh(f"{node.output[0]}.mask")
                    self.add_const(name, _Const(fill.dtype, dims, [
                        0.0 if bool(f) == keep_when else -math.inf for f in flags]))
                    node = Node((scores, name), node.output, "Add", node.name)
            nodes.append(node)
        self.nodes, nodes = nodes, []
        readers = self.readers()
        for node in self.nodes:
            masked = any(n.op_type == "Add" and any(x in self.consts for x in n.input)
                         for n in readers.get(node.output[0], ()))
            if node.op_type == "Add" and self.is_scores(node) and not masked:
                nodes.extend(self._mask_split(node))
                continue
            nodes.append(node)
        self.nodes = nodes

    def producers(self):
        """{value: the node that writes it}, of the nodes as they are now."""
        return {o: n for n in self.nodes for o in n.output}

    def readers(self):
        """{value: the nodes that read it}, of the nodes as they are now."""
        out = {}
        for n in self.nodes:
            for x in n.input:
                out.setdefault(x, []).append(n)
        return out

    def is_scores(self, node):
        """An Add of a constant [.., T, T] table to a value of shape [heads, T, T]."""
        shape = self.shapes.get(node.output[0])
        const = [x for x in node.input if x in self.consts]
        return (shape is not None and len(shape) == 3 and shape[1] == shape[2] and
                len(const) == 1 and self.consts[const[0]].dtype in FLOATS and
                len(self.consts[const[0]].dims) >= 2 and
                tuple(self.consts[const[0]].dims[-2:]) == shape[1:])

    def _mask_split(self, node):
        scores, table = node.input if node.input[1] in self.consts else node.input[::-1]
        H, T, _ = self.shapes[node.output[0]]
        c = self.consts[table]
        if math.prod(c.dims[:-2]) not in (1, H):
            return [node]
        rows = math.prod(c.dims[:-2])
        flat = c.values
        above = {flat[(h * T + r) * T + k] for h in range(rows) for r in range(T)
                 for k in range(r + 1, T)}
        below = {flat[(h * T + r) * T + k] for h in range(rows) for r in range(T)
                 for k in range(r + 1)}
        if len(above) > 1:
            return [node]  # not causal: the reader refuses it
        fill = above.pop() if above else -math.inf
        mask = [0.0 if k <= r else fill for r in range(T) for k in range(T)]
        mask_name = self.fresh(f"{node.output[0]}.causal_mask")
        self.add_const(mask_name, _Const(c.dtype, (T, T), mask))
        if below == {0.0}:
            return [Node((scores, mask_name), node.output, "Add", node.name)]
        bias = [0.0 if k > r else flat[((h % rows) * T + r) * T + k]
                for h in range(H) for r in range(T) for k in range(T)]
        bias_name = self.fresh(f"{node.output[0]}.bias")
        self.add_const(bias_name, _Const(c.dtype, (H, T, T), bias))
        biased = self.fresh(f"{node.output[0]}.biased")
        self.shapes[biased] = (H, T, T)
        return [Node((scores, bias_name), (biased,), "Add", f"{node.name}.bias"),
                Node((biased, mask_name), node.output, "Add", node.name)]

    # ---- shared projections ------------------------------------------------------------

    def unshare(self):
        """A value read twice, made by a projection step, made once for each reader."""
        CLONED = ("MatMul", "Gemm", "Reshape", "Transpose", "Add")
        for _ in range(8):
            readers = self.readers()
            self.producer = self.producers()
            position = {id(n): i for i, n in enumerate(self.nodes)}
            changed = False
            out = []
            for node in self.nodes:
                out.append(node)
                value = node.output[0]
                distinct = list({id(r): r for r in readers.get(value, ())}.values())
                # heads split from one projection: q and k (or k and v) of the same weights;
                # or a factor A of q, k and v, each its own B after it (x A B_q, x A B_k)
                if len(distinct) < 2 or len(distinct) != len(readers[value]) or \
                        node.op_type not in CLONED or not self.projection_step(node) or \
                        any(r.op_type not in ("Reshape", "Transpose") and not (
                            r.op_type == "MatMul" and self.projection_step(r))
                            for r in distinct):
                    continue
                for reader in distinct[1:]:
                    copy = self.fresh(value)
                    self.shapes[copy] = self.shapes.get(value)
                    out.append(replace(node, output=(copy,), name=self.fresh(node.name or
                                                                             node.op_type)))
                    index = position[id(reader)]
                    current = self.nodes[index]  # an earlier copy may have rewritten it
                    self.nodes[index] = replace(current, input=tuple(
                        copy if x == value else x for x in current.input))
                changed = True
            # keep the order topological: a reader rewritten above comes after its copy
            self.nodes = _topological(out, self.consts, {v.name for v in self.inputs})
            if not changed:
                return

    def projection_step(self, node):
        if node.op_type in ("Reshape", "Transpose"):
            return True
        if node.op_type in ("MatMul", "Gemm"):
            return node.input[1] in self.consts
        return node.op_type == "Add" and any(x in self.consts for x in node.input) and \
            self.op_of(next(x for x in node.input if x not in self.consts)) in ("MatMul",)

    def op_of(self, value):
        node = self.producer.get(value)
        return node.op_type if node is not None else None

    # ---- fused transposes --------------------------------------------------------------

    def split_transposes(self):
        self.producer = self.producers()
        nodes = []
        for node in self.nodes:
            attrs = _attrs(node)
            if node.op_type == "Transpose" and tuple(attrs.get("perm", ())) == (1, 2, 0) and \
                    self.op_of(node.input[0]) == "Reshape":
                heads = self.fresh(f"{node.output[0]}.heads")
                s = self.shapes.get(node.input[0])
                self.shapes[heads] = (s[1], s[0], s[2]) if s else None
                nodes.append(Node((node.input[0],), (heads,), "Transpose", f"{node.name}.heads",
                                  (Attribute("perm", AttributeType.INTS, (1, 0, 2)),)))
                node = Node((heads,), node.output, "Transpose", node.name,
                            (Attribute("perm", AttributeType.INTS, (0, 2, 1)),))
            nodes.append(node)
        self.nodes = nodes

    # ---- defaults ----------------------------------------------------------------------

    def drop_defaults(self):
        def keep(node, a):
            if node.op_type == "Reshape" and a.name == "allowzero":
                shape = self.consts.get(node.input[1])
                return a.value != 0 and (shape is None or 0 in shape.values)
            if node.op_type == "Gather" and a.name == "axis":
                return a.value != 0
            if node.op_type.startswith("Reduce") and a.name in ("keepdims",
                                                               "noop_with_empty_axes"):
                return a.value != {"keepdims": 1, "noop_with_empty_axes": 0}[a.name]
            if node.op_type in ("Gemm",) and a.name in ("alpha", "beta"):
                return a.value != 1.0
            if node.op_type == "Gemm" and a.name in ("transA", "transB"):
                return a.value != 0
            return True
        self.nodes = [replace(n, attribute=tuple(a for a in n.attribute if keep(n, a)))
                      for n in self.nodes]

    # ---- out ---------------------------------------------------------------------------

    def model(self):
        used = {x for n in self.nodes for x in n.input} | {v.name for v in self.outputs}
        initializers = []
        for name, c in self.consts.items():
            if name not in used:
                continue
            t = self.tensors.get(name)
            if t is None or tuple(t.dims) != c.dims:
                t = Tensor(name, c.dtype, c.dims, tuple(c.values))
            initializers.append(t)
        graph = replace(self.model_in.graph, node=tuple(self.nodes),
                        initializer=tuple(initializers), input=tuple(self.inputs),
                        output=tuple(self.outputs), value_info=())
        return replace(self.model_in, graph=graph)


_VIEWS = ("Reshape", "Unsqueeze", "Squeeze", "Transpose", "Expand", "Cast", "Identity")


def _meeting_data(nodes, inputs):
    """The values computed before the graph's inputs (not from them) that a node computing
    with the inputs reads, directly or through views: a rotary table's Cos meets q and k."""
    data = set(inputs)
    for n in nodes:
        if n.op_type != "Shape" and any(x in data for x in n.input):
            data.update(n.output)
    meets = set()
    for n in reversed(nodes):
        if n.op_type in _VIEWS and n.input and n.input[0] not in data:
            if any(o in meets for o in n.output):
                meets.add(n.input[0])
        elif any(x in data for x in n.input):
            meets.update(x for x in n.input if x not in data)
    return meets


def _in_order(nodes, known):
    """Refuse a node that reads a value no initializer, graph input or earlier node defines
    (a cycle among them): ONNX writes a graph's nodes in the order they compute."""
    known = set(known)
    for node in nodes:
        for value in node.input:
            if value and value not in known:
                raise OnnxError(f"{_what(node)}: input {value!r} is defined by no initializer, "
                                f"graph input or earlier node (the nodes of a graph are in "
                                f"the order they compute)")
        known.update(node.output)


def _topological(nodes, consts, inputs):
    done = set(consts) | set(inputs) | {""}
    out, waiting = [], list(nodes)
    while waiting:
        rest = []
        for n in waiting:
            if all(x in done for x in n.input):
                out.append(n)
                done.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(waiting):
            return out + rest  # undefined inputs: the reader names them
        waiting = rest
    return out


# the type of each attribute the rewrite reads: a string where an integer goes is refused
ATTRIBUTE_TYPES = {
    "axis": AttributeType.INT, "axes": AttributeType.INTS, "perm": AttributeType.INTS,
    "to": AttributeType.INT, "keepdims": AttributeType.INT, "upper": AttributeType.INT,
    "batch_dims": AttributeType.INT, "start": AttributeType.INT, "end": AttributeType.INT,
    "allowzero": AttributeType.INT, "noop_with_empty_axes": AttributeType.INT,
    "transA": AttributeType.INT, "transB": AttributeType.INT, "alpha": AttributeType.FLOAT,
    "beta": AttributeType.FLOAT, "epsilon": AttributeType.FLOAT,
    "equation": AttributeType.STRING, "reduction": AttributeType.STRING,
    "value": AttributeType.TENSOR}


def _attrs(node):
    """{name: value} of the node's attributes, each of the type ATTRIBUTE_TYPES says."""
    for a in node.attribute:
        expected = ATTRIBUTE_TYPES.get(a.name)
        if expected is not None and a.type != expected:
            raise OnnxError(f"{_what(node)}: attribute {a.name!r} is {a.type.name}, where "
                            f"{expected.name} goes")
    return {a.name: a.value for a in node.attribute}


def _with(node, **values):
    kinds = {int: AttributeType.INT, tuple: AttributeType.INTS}
    attrs = [a for a in node.attribute if a.name not in values]
    attrs += [Attribute(k, kinds[type(v)], v) for k, v in values.items()]
    return replace(node, attribute=tuple(attrs))


def _less(axis, node):
    """The axis after the batch axis is gone (axis >= 0 counted with it)."""
    if axis == 0:
        raise OnnxError(f"{_what(node)}: an operation across the batch axis")
    return axis - 1


def _what(node):
    return f"node {node.name!r} ({node.op_type})" if node.name else f"a {node.op_type} node"


# ---- folding, operator by operator --------------------------------------------------------

ELEMENTWISE = ("Add", "Sub", "Mul", "Div", "Pow", "Where", "Equal", "Less", "LessOrEqual",
               "Greater", "GreaterOrEqual", "And", "Or", "Not", "Max", "Min")
SAME_SHAPE = ("Relu", "Sigmoid", "Exp", "Neg", "Sqrt", "Reciprocal", "Softmax", "Identity",
              "Cast", "Cos", "Sin", "Erf", "Tanh", "Abs")


def _ints(c):
    """A shape, axes or indices: integers, never floats or booleans read as integers."""
    if c.dtype not in INTS:
        raise ValueError(f"{c.dtype.name} values where integers go")
    return [int(v) for v in c.values]


def _fold_cast(g, node, xs):
    to = _attrs(node)["to"]
    if to not in (1, 6, 7, 9, 11):
        raise ValueError(f"a Cast to type {to}")
    to = DataType(to)
    x = xs[0]
    if to in FLOATS:
        vals = [_round(to, float(v)) for v in x.values]
    elif to == DataType.BOOL:
        vals = [bool(v) for v in x.values]
    else:
        if x.dtype in FLOATS and any(not math.isfinite(v) for v in x.values):
            raise ValueError("a Cast of a non-finite float to an integer")
        vals = [int(v) for v in x.values]
    return _Const(to, x.dims, vals)


def _reshaped(dims, target):
    """The dims a Reshape of ``dims`` to ``target`` makes (0 keeps a dim, -1 is the rest)."""
    out = [dims[i] if d == 0 and i < len(dims) else d for i, d in enumerate(target)]
    if out.count(-1) == 1:
        known = math.prod(d for d in out if d != -1)
        out[out.index(-1)] = math.prod(dims) // known if known else 0
    if any(d < 0 for d in out) or math.prod(out) != math.prod(dims):
        raise ValueError(f"a Reshape of {list(dims)} to {target}")
    return out


def _fold_reshape(g, node, xs):
    x, shape = xs
    return _Const(x.dtype, _reshaped(x.dims, _ints(shape)), x.values)


def _fold_transpose(g, node, xs):
    x = xs[0]
    perm = _attrs(node).get("perm", tuple(reversed(range(len(x.dims)))))
    if sorted(perm) != list(range(len(x.dims))):
        raise ValueError(f"perm {list(perm)} is not a permutation of {len(x.dims)} axes")
    dims, vals = _transpose(x.values, x.dims, perm)
    return _Const(x.dtype, dims, vals)


def _fold_unsqueeze(g, node, xs):
    x = xs[0]
    axes = _ints(xs[1]) if len(xs) > 1 else list(_attrs(node).get("axes", ()))
    rank = len(x.dims) + len(axes)
    axes = sorted(_axis(a, rank, "axis") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes {axes} name an axis twice")
    dims = list(x.dims)
    for a in axes:
        dims.insert(a, 1)
    return _Const(x.dtype, dims, x.values)


def _fold_squeeze(g, node, xs):
    x = xs[0]
    axes = _ints(xs[1]) if len(xs) > 1 and xs[1] is not None else \
        list(_attrs(node).get("axes", [i for i, d in enumerate(x.dims) if d == 1]))
    axes = {_axis(a, len(x.dims), "axis") for a in axes}
    if any(x.dims[a] != 1 for a in axes):
        raise ValueError(f"a Squeeze of an axis of length other than 1 (dims {list(x.dims)})")
    return _Const(x.dtype, [d for i, d in enumerate(x.dims) if i not in axes], x.values)


def _fold_concat(g, node, xs):
    axis = _axis(_attrs(node)["axis"], len(xs[0].dims), "axis")
    dims = list(xs[0].dims)
    for x in xs:
        if x.dtype != xs[0].dtype or len(x.dims) != len(dims) or \
                any(d != e for i, (d, e) in enumerate(zip(x.dims, dims)) if i != axis):
            raise ValueError(f"a Concat of {[list(x.dims) for x in xs]} on axis {axis}")
    dims[axis] = sum(x.dims[axis] for x in xs)
    outer = math.prod(dims[:axis])
    vals = []
    for o in range(outer):
        for x in xs:
            inner = math.prod(x.dims[axis:])
            vals.extend(x.values[o * inner:(o + 1) * inner])
    return _Const(xs[0].dtype, dims, vals)


def _fold_slice(g, node, xs):
    x, starts, ends = xs[:3]
    rank = len(x.dims)
    axes = _ints(xs[3]) if len(xs) > 3 and xs[3] is not None else list(range(len(starts.values)))
    steps = _ints(xs[4]) if len(xs) > 4 and xs[4] is not None else [1] * len(axes)
    ranges = [range(d) for d in x.dims]
    for a, s, e, st in zip(axes, _ints(starts), _ints(ends), steps):
        a = _axis(a, rank, "axis")
        ranges[a] = range(ranges[a].stop)[slice(s, e, st)]
    dims = [len(r) for r in ranges]
    strides = _strides(x.dims)
    vals = []
    for i in range(math.prod(dims)):
        idx = _index(i, dims)
        vals.append(x.values[sum(ranges[k][j] * strides[k] for k, j in enumerate(idx))])
    return _Const(x.dtype, dims, vals)


def _fold_gather(g, node, xs):
    x, ind = xs
    axis = _axis(_attrs(node).get("axis", 0), len(x.dims), "axis")
    idx = [i % x.dims[axis] if -x.dims[axis] <= i < x.dims[axis] else None
           for i in _ints(ind)]
    if None in idx:
        raise ValueError("an index outside the axis")
    outer, inner = math.prod(x.dims[:axis]), math.prod(x.dims[axis + 1:])
    vals = []
    for o in range(outer):
        for i in idx:
            start = (o * x.dims[axis] + i) * inner
            vals.extend(x.values[start:start + inner])
    return _Const(x.dtype, list(x.dims[:axis]) + list(ind.dims) + list(x.dims[axis + 1:]),
                  vals)


def _fold_expand(g, node, xs):
    x, shape = xs
    dims = _broadcast(x.dims, _ints(shape))
    if math.prod(dims) > LIMITS.elements:
        raise OnnxError(f"{_what(node)}: a folded constant of {math.prod(dims):,} elements "
                        f"(limit elements, {LIMITS.elements:,})")
    return _Const(x.dtype, dims, _take(x.values, x.dims, dims))


def _fold_constant_of_shape(g, node, xs):
    dims = _ints(xs[0])
    if any(d < 0 for d in dims) or math.prod(dims) > LIMITS.elements:
        raise OnnxError(f"{_what(node)}: a constant of shape {dims[:8]} (limit elements, "
                        f"{LIMITS.elements:,})")
    t = _attrs(node).get("value")
    dtype, v = (t.data_type, t.values[0]) if t is not None else (DataType.FLOAT, 0.0)
    return _Const(dtype, dims, [v] * math.prod(dims))


def _fold_range(g, node, xs):
    start, limit, delta = (x.values[0] for x in xs)
    if not all(math.isfinite(v) for v in (start, limit, delta)):
        raise ValueError(f"a Range from {start} to {limit} by {delta}")
    if delta == 0:
        raise ValueError("a Range of step 0")
    steps = (limit - start) / delta
    n = max(math.ceil(steps), 0) if math.isfinite(steps) else math.inf
    if n > LIMITS.elements:
        raise OnnxError(f"{_what(node)}: a Range of {n:,} elements (limit elements, "
                        f"{LIMITS.elements:,})")
    return _Const(xs[0].dtype, (n,), [start + i * delta for i in range(n)])


def _fold_trilu(g, node, xs):
    x = xs[0]
    k = xs[1].values[0] if len(xs) > 1 and xs[1] is not None else 0
    upper = _attrs(node).get("upper", 1)
    R, C = x.dims[-2:]
    zero = 0.0 if x.dtype in FLOATS else (False if x.dtype == DataType.BOOL else 0)
    vals = list(x.values)
    for i in range(len(vals)):
        r, c = (i // C) % R, i % C
        if (upper and c - r < k) or (not upper and c - r > k):
            vals[i] = zero
    return _Const(x.dtype, x.dims, vals)


def _fold_nonzero(g, node, xs):
    """The indices of the nonzero entries, [rank, count], in row-major order."""
    x = xs[0]
    hits = [_index(i, x.dims) for i, v in enumerate(x.values) if v]
    return _Const(DataType.INT64, (len(x.dims), len(hits)),
                  [idx[axis] for axis in range(len(x.dims)) for idx in hits])


def _fold_tile(g, node, xs):
    x, reps = xs
    reps = _ints(reps)
    if len(reps) != len(x.dims) or any(r < 0 for r in reps):
        raise ValueError(f"a Tile of {list(x.dims)} by {reps}")
    dims = [d * r for d, r in zip(x.dims, reps)]
    if math.prod(dims) > LIMITS.elements:
        raise OnnxError(f"{_what(node)}: a folded constant of {math.prod(dims):,} elements")
    strides = _strides(x.dims)
    vals = []
    for i in range(math.prod(dims)):
        idx = _index(i, dims)
        vals.append(x.values[sum((j % d) * s for j, d, s in zip(idx, x.dims, strides))])
    return _Const(x.dtype, dims, vals)


def _binary(op):
    def fold(g, node, xs):
        a, b = xs
        if a.dtype != b.dtype:
            raise ValueError(f"{op} of {a.dtype.name} and {b.dtype.name}")
        dtype = a.dtype
        if op == "Div":
            fn = lambda x, y: _div(dtype, x, y)  # noqa: E731
        else:
            f = _arith(op)
            fn = lambda x, y: f(dtype, x, y)  # noqa: E731
        return _elementwise(dtype, fn, a, b)
    return fold


def _compare(fn):
    def fold(g, node, xs):
        return _elementwise(DataType.BOOL, fn, *xs)
    return fold


def _unary(fn):
    def fold(g, node, xs):
        x = xs[0]
        if x.dtype not in FLOATS and fn is not _neg:
            raise ValueError("a float operation on integers")
        return _Const(x.dtype, x.dims, [fn(x.dtype, v) for v in x.values])
    return fold


def _neg(dtype, v):
    return -v


def _sqrt(dtype, v):
    if v < 0:
        return math.nan
    return _round(dtype, math.sqrt(v))  # correctly rounded in float64, so in float32 too


def _reciprocal(dtype, v):
    return _div(dtype, 1.0, v)


def _pow(dtype, a, b):
    """a ** b rounded once: b an integer (the exact power of the float a) or 1/2 (a's root)."""
    if b == 0.5:
        return _sqrt(dtype, a)
    exact = Fraction(a) ** int(b)
    if dtype == DataType.FLOAT:
        return single_of(exact)
    try:
        return float(exact)
    except OverflowError:
        return math.copysign(math.inf, exact)


def _certified_powers(bases, exponents):
    """Every exponent 1/2 or an integer up to 64, and none negative if a base is 0."""
    return all(b == 0.5 or (b == int(b) and abs(b) <= 64) for b in exponents) and \
        (0 not in bases or all(b >= 0 for b in exponents))


def _fold_pow(g, node, xs):
    """Pow of finite float constants where every power has a certified value (an integer
    exponent up to 64, not 0 ** -k; exponent 1/2); otherwise the node stays a Pow."""
    a, b = xs
    if a.dtype not in FLOATS or b.dtype != a.dtype or \
            not all(map(math.isfinite, a.values + b.values)) or \
            not _certified_powers(a.values, b.values):
        return None
    return _elementwise(a.dtype, lambda x, y: _pow(a.dtype, x, y), a, b)


# the most values a Cos or Sin fold computes (about 60 us each): a larger table stays a node
TRIG_FOLDED = 65536


def _correct_trig(op, dtype, v):
    """cos v or sin v correctly rounded to the type: the ends of ``elementary``'s enclosure,
    at more bits until both round to one float (a value no 1024 bits settle is not folded)."""
    if not math.isfinite(v):
        return math.nan
    rnd = single_of if dtype == DataType.FLOAT else float
    for bits in (64, 128, 256, 1024):
        lo, hi = (rnd(end) for end in getattr(elementary, op)(Fraction(v), bits))
        if lo == hi:
            return lo
    raise ValueError(f"{op}({v!r}) is not settled at 1024 bits")


def _fold_trig(op):
    """Cos or Sin of a constant that only constants read (not a rotary table, which the
    reader matches with its angles): each value correctly rounded, the model's own cos."""
    def fold(g, node, xs):
        if node.output[0] in g.meets_data or xs[0].dtype not in FLOATS or \
                len(xs[0].values) > TRIG_FOLDED:
            return None
        return _Const(xs[0].dtype, xs[0].dims,
                      [_correct_trig(op, xs[0].dtype, v) for v in xs[0].values])
    return fold


def _fold_where(g, node, xs):
    c, a, b = xs
    return _elementwise(a.dtype, lambda f, x, y: x if f else y, c, a, b)


def _at(index, dims):
    """An index of ScatterND or GatherND, each entry in [-d, d - 1]."""
    if any(not -d <= i < d for i, d in zip(index, dims)):
        raise ValueError(f"index {index} outside dims {list(dims)}")
    return [i % d for i, d in zip(index, dims)]


def _fold_scatter_nd(g, node, xs):
    data, indices, updates = xs
    if _attrs(node).get("reduction", b"none") not in (b"none", "none"):
        raise ValueError("a ScatterND with a reduction")
    vals = list(data.values)
    k = indices.dims[-1]
    inner = math.prod(data.dims[k:])
    if k > len(data.dims) or len(updates.values) != math.prod(indices.dims[:-1]) * inner:
        raise ValueError(f"a ScatterND of {list(updates.dims)} into {list(data.dims)} at "
                         f"{list(indices.dims)}")
    strides = _strides(data.dims)
    idx = _ints(indices)
    for n in range(len(idx) // k if k else 0):
        at = _at(idx[n * k:(n + 1) * k], data.dims)
        start = sum(i * s for i, s in zip(at, strides))
        vals[start:start + inner] = updates.values[n * inner:(n + 1) * inner]
    return _Const(data.dtype, data.dims, vals)


def _fold_scatter_elements(g, node, xs):
    """data with data[..., index, ...] (on the axis) = the update at each update's place."""
    data, indices, updates = xs
    if _attrs(node).get("reduction", b"none") not in (b"none", "none"):
        raise ValueError("a ScatterElements with a reduction")
    rank = len(data.dims)
    axis = _axis(_attrs(node).get("axis", 0), rank, "axis")
    if tuple(indices.dims) != tuple(updates.dims) or len(indices.dims) != rank or \
            any(i > d for i, d in zip(indices.dims, data.dims)):
        raise ValueError(f"a ScatterElements of {list(updates.dims)} into "
                         f"{list(data.dims)} at {list(indices.dims)}")
    vals, strides, idx = list(data.values), _strides(data.dims), _ints(indices)
    for n, i in enumerate(idx):
        at = _index(n, indices.dims)
        at[axis] = _at([i], (data.dims[axis],))[0]
        vals[sum(a * s for a, s in zip(at, strides))] = updates.values[n]
    return _Const(data.dtype, data.dims, vals)


def _fold_gather_nd(g, node, xs):
    data, indices = xs
    if _attrs(node).get("batch_dims", 0):
        raise ValueError("a GatherND with batch_dims")
    k = indices.dims[-1]
    if k > len(data.dims):
        raise ValueError(f"a GatherND of {list(data.dims)} at {list(indices.dims)}")
    inner = math.prod(data.dims[k:])
    strides = _strides(data.dims)
    idx = _ints(indices)
    vals = []
    for n in range(len(idx) // k if k else 0):
        at = _at(idx[n * k:(n + 1) * k], data.dims)
        start = sum(i * s for i, s in zip(at, strides))
        vals.extend(data.values[start:start + inner])
    return _Const(data.dtype, tuple(indices.dims[:-1]) + tuple(data.dims[k:]), vals)


def _equation(node, count):
    """The Einsum's equation as (input letters, output letters): ``count`` operands, each a
    word of distinct letters, no ellipsis, every output letter one of the inputs'."""
    text = _attrs(node)["equation"]
    text = text.decode("ascii", "replace") if isinstance(text, bytes) else str(text)
    left, arrow, right = text.replace(" ", "").partition("->")
    words = left.split(",")
    if not arrow or len(words) != count or "." in text or any(
            not w.isalpha() or len(set(w)) != len(w) for w in words + [right]) or \
            len(set(right)) != len(right) or not set(right) <= set("".join(words)):
        raise ValueError(f"an Einsum of {count} operands written {text[:40]!r} (tinyadder "
                         f"takes words of distinct letters, no '...')")
    return words, right


def _fold_einsum(g, node, xs):
    """Two constants contracted, each product and each partial sum rounded once in the type,
    the sum over the letters not in the output in index order (a MatMul's order)."""
    (a_word, b_word), out = _equation(node, 2)
    a, b = xs
    if a.dtype != b.dtype or len(a_word) != len(a.dims) or len(b_word) != len(b.dims):
        raise ValueError(f"an Einsum of {list(a.dims)} and {list(b.dims)}")
    size = {}
    for word, dims in ((a_word, a.dims), (b_word, b.dims)):
        for letter, d in zip(word, dims):
            if size.setdefault(letter, d) != d:
                raise ValueError(f"letter {letter!r} of lengths {size[letter]} and {d}")
    summed = [c for c in dict.fromkeys(a_word + b_word) if c not in out]
    dims = [size[c] for c in out]
    if math.prod(dims) * max(math.prod(size[c] for c in summed), 1) > LIMITS.elements:
        raise OnnxError(f"{_what(node)}: an Einsum of more products than the limit "
                        f"(limit elements, {LIMITS.elements:,})")
    sa, sb = _strides(a.dims), _strides(b.dims)
    mul, add = _arith("Mul"), _arith("Add")
    vals = []
    for i in range(math.prod(dims)):
        at = dict(zip(out, _index(i, dims)))
        total = None
        for j in range(math.prod(size[c] for c in summed)):
            at.update(zip(summed, _index(j, [size[c] for c in summed])))
            x = a.values[sum(at[c] * s for c, s in zip(a_word, sa))]
            y = b.values[sum(at[c] * s for c, s in zip(b_word, sb))]
            term = mul(a.dtype, x, y)
            total = term if total is None else add(a.dtype, total, term)
        vals.append(total)
    return _Const(a.dtype, dims, vals)


def _einsums(g):
    """An Einsum that is a MatMul: ``P ij, P kj -> P ik`` is q @ k^T (a Transpose of k's last
    two axes, then MatMul), ``P ij, P jk -> P ik`` is p @ v, P the same batch letters."""
    nodes = []
    for node in g.nodes:
        if node.op_type != "Einsum":
            nodes.append(node)
            continue
        try:
            (a, b), out = _equation(node, 2) if len(node.input) == 2 else ((None, None), None)
        except (ValueError, KeyError):  # the reader refuses it: Einsum is not one it reads
            a, b, out = None, None, None
        batch = out[:-2] if out else None
        if a is None or len(out) < 2 or a[:-2] != batch or b[:-2] != batch:
            nodes.append(node)  # the reader refuses it: Einsum is not one it reads
            continue
        i, j, k = a[-2], a[-1], out[-1]
        if out[-2] != i or len({i, j, k}) != 3 or b[-2:] not in (k + j, j + k):
            nodes.append(node)
            continue
        right = node.input[1]
        if b[-2:] == k + j:
            rank = len(out)
            right = g.fresh(f"{node.output[0]}.kT")
            nodes.append(Node((node.input[1],), (right,), "Transpose", g.fresh(
                node.name or "Einsum"), (Attribute("perm", AttributeType.INTS, tuple(
                    range(rank - 2)) + (rank - 1, rank - 2)),)))
            g.infer(nodes[-1])
        nodes.append(Node((node.input[0], right), node.output, "MatMul", node.name))
        g.infer(nodes[-1])
    g.nodes = nodes


FOLD = {
    "Einsum": _fold_einsum,
    "ScatterND": _fold_scatter_nd,
    "ScatterElements": _fold_scatter_elements,
    "GatherND": _fold_gather_nd,
    "Identity": lambda g, n, xs: xs[0],
    "Cast": _fold_cast,
    "Reshape": _fold_reshape,
    "Transpose": _fold_transpose,
    "Unsqueeze": _fold_unsqueeze,
    "Squeeze": _fold_squeeze,
    "Concat": _fold_concat,
    "Slice": _fold_slice,
    "Gather": _fold_gather,
    "Expand": _fold_expand,
    "Tile": _fold_tile,
    "NonZero": _fold_nonzero,
    "ConstantOfShape": _fold_constant_of_shape,
    "Range": _fold_range,
    "Trilu": _fold_trilu,
    "Where": _fold_where,
    "Equal": _compare(lambda x, y: x == y),
    "Less": _compare(lambda x, y: x < y),
    "LessOrEqual": _compare(lambda x, y: x <= y),
    "Greater": _compare(lambda x, y: x > y),
    "GreaterOrEqual": _compare(lambda x, y: x >= y),
    "Not": lambda g, n, xs: _Const(DataType.BOOL, xs[0].dims, [not v for v in xs[0].values]),
    "And": _compare(lambda x, y: bool(x and y)),
    "Or": _compare(lambda x, y: bool(x or y)),
    "Add": _binary("Add"),
    "Sub": _binary("Sub"),
    "Mul": _binary("Mul"),
    "Div": _binary("Div"),
    "Neg": _unary(_neg),
    "Sqrt": _unary(_sqrt),
    "Reciprocal": _unary(_reciprocal),
    "Pow": _fold_pow,
    "Cos": _fold_trig("cos"),
    "Sin": _fold_trig("sin"),
}


# ---- static shapes ------------------------------------------------------------------------

def _shape_same(g, n):
    return g.shape(n.input[0])


def _shape_broadcast(g, n):
    shapes = [g.shape(x) for x in n.input if x]
    return None if any(s is None for s in shapes) else _broadcast(*shapes)


def _shape_gather(g, n):
    x, i = g.shape(n.input[0]), g.shape(n.input[1])
    axis = _axis(_attrs(n).get("axis", 0), len(x), "axis")
    return tuple(x[:axis]) + tuple(i) + tuple(x[axis + 1:])


def _shape_matmul(g, n):
    a, b = g.shape(n.input[0]), g.shape(n.input[1])
    if len(a) < 2 or len(b) < 2:
        return None
    return _broadcast(a[:-2], b[:-2]) + (a[-2], b[-1])


def _shape_gemm(g, n):
    a, b = g.shape(n.input[0]), g.shape(n.input[1])
    attrs = _attrs(n)
    rows = a[1] if attrs.get("transA", 0) else a[0]
    cols = b[0] if attrs.get("transB", 0) else b[1]
    return (rows, cols)


def _shape_reshape(g, n):
    x, shape = g.shape(n.input[0]), g.consts.get(n.input[1])
    return _reshaped(x, _ints(shape))


def _shape_transpose(g, n):
    x = g.shape(n.input[0])
    perm = _attrs(n).get("perm", tuple(reversed(range(len(x)))))
    return tuple(x[p] for p in perm)


def _shape_reduce(g, n):
    x = g.shape(n.input[0])
    attrs = _attrs(n)
    if len(n.input) > 1 and n.input[1]:
        axes = _ints(g.consts[n.input[1]])
    else:
        axes = list(attrs.get("axes", range(len(x))))
    axes = {a % len(x) for a in axes}
    if attrs.get("keepdims", 1):
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def _shape_concat(g, n):
    shapes = [g.shape(x) for x in n.input]
    axis = _axis(_attrs(n)["axis"], len(shapes[0]), "axis")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return tuple(out)


def _shape_slice(g, n):
    x = g.shape(n.input[0])
    consts = [g.consts.get(v) if v else None for v in n.input[1:]]
    probe = _Const(DataType.INT64, x, range(math.prod(x)))
    return _fold_slice(g, n, [probe] + consts).dims


def _shape_axes(fold):
    def shape(g, n):
        x = g.shape(n.input[0])
        consts = [g.consts.get(v) if v else None for v in n.input[1:]]
        return fold(g, n, [_Const(DataType.INT64, x, [0] * math.prod(x))] + consts).dims
    return shape


def _split_shapes(g, n):
    """The shapes of a Split's outputs, where its input's shape and its sizes are known (the
    sizes given, or equal parts), or None."""
    try:
        x = g.shape(n.input[0])
        attrs = _attrs(n)
        axis = _axis(attrs.get("axis", 0), len(x), "axis")
        sizes = _ints(g.consts[n.input[1]]) if len(n.input) > 1 and n.input[1] else \
            list(attrs.get("split", ())) or [x[axis] // len(n.output)] * len(n.output)
    except (TypeError, KeyError, ValueError, IndexError, ZeroDivisionError):
        return None
    if len(sizes) != len(n.output) or sum(sizes) != x[axis] or min(sizes) < 0:
        return None
    return [tuple(x[:axis]) + (k,) + tuple(x[axis + 1:]) for k in sizes]


def _shape_gather_nd(g, n):
    data, indices = g.shape(n.input[0]), g.shape(n.input[1])
    if _attrs(n).get("batch_dims", 0):
        return None
    return tuple(indices[:-1]) + tuple(data[indices[-1]:])


def _shape_arg(g, n):
    x = g.shape(n.input[0])
    attrs = _attrs(n)
    axis = _axis(attrs.get("axis", 0), len(x), "axis")
    if attrs.get("keepdims", 1):
        return tuple(1 if i == axis else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i != axis)


_SHAPE = {
    **dict.fromkeys(SAME_SHAPE, _shape_same), "LayerNormalization": _shape_same,
    **dict.fromkeys(ELEMENTWISE, _shape_broadcast),
    "Gather": _shape_gather, "MatMul": _shape_matmul, "Gemm": _shape_gemm,
    "Reshape": _shape_reshape, "Transpose": _shape_transpose, "Concat": _shape_concat,
    "Slice": _shape_slice, "Expand": _shape_axes(_fold_expand), "ScatterND": _shape_same,
    "ScatterElements": _shape_same, "GatherND": _shape_gather_nd,
    "Tile": _shape_axes(_fold_tile), "Unsqueeze": _shape_axes(_fold_unsqueeze),
    "Squeeze": _shape_axes(_fold_squeeze), "ArgMax": _shape_arg, "ArgMin": _shape_arg,
    **{op: _shape_reduce for op in ("ReduceSum", "ReduceMean", "ReduceMax")},
}


# ---- linear maps written lane by lane ------------------------------------------------------
#
# A projection written as Slices or Gathers of single lanes, Muls by constants, Adds, Subs,
# Unsqueezes, Expands and Concats (x[..., 0:1] * q_scale, torch.cat([x0 * a, zeros], -1)) is
# a linear map of one value x. _Lin holds it as the chain of MatMuls that computes the same
# float program: x @ S_1 @ S_2 ..., each stage one rounding of each product and of each sum
# in index order, so a Mul after a sum (a rounding the sum already made) is a stage of its own
# (a factored weight), and a sum is kept only where the MatMul's order is the graph's.

class _Lin:
    """x @ stages[0] @ stages[1] ...: a stage is a list of columns, a column the tuple of its
    nonzero terms (row, coefficient) in row order; ``scalar`` when the last axis is gone (a
    Gather of one lane); ``steps`` counts the operations beyond one selection; ``bias`` the
    constant added to each column after the last stage (an Add the last operation), or
    None."""

    def __init__(self, src, width, stages, scalar=False, steps=0, bias=None):
        self.src, self.width, self.stages, self.scalar, self.steps, self.bias = \
            src, width, stages, scalar, steps, bias

    def select(self, idx, scalar=False):
        last = self.stages[-1]
        bias = None if self.bias is None else [self.bias[i] for i in idx]
        return _Lin(self.src, self.width, self.stages[:-1] + [[last[i] for i in idx]],
                    scalar, self.steps, bias)

    def moved(self, scalar):
        """The same map with its last axis dropped (``scalar``) or made again."""
        return _Lin(self.src, self.width, self.stages, scalar, self.steps, self.bias)

    def biased(self, cs):
        """The map plus the constants cs, one per column (None if it adds one already)."""
        if self.bias is not None:
            return None
        return _Lin(self.src, self.width, self.stages, self.scalar, self.steps + 1, list(cs))

    def scale(self, cs):
        if self.bias is not None:
            return None  # a product after the Add: not the map's float program
        last = self.stages[-1]
        steps = self.steps + 1
        if len(self.stages) == 1 and all(len(c) <= 1 and all(w in (1, -1) for _, w in c)
                                         for c in last):
            return _Lin(self.src, self.width, [[tuple((r, w * cs[j]) for r, w in c if cs[j])
                                               for j, c in enumerate(last)]], self.scalar, steps)
        diag = [((j, cs[j]),) if cs[j] else () for j in range(len(last))]
        return _Lin(self.src, self.width, self.stages + [diag], self.scalar, steps)

    def deepened(self, depth):
        stages = list(self.stages)
        while len(stages) < depth:
            stages.append([((j, 1.0),) for j in range(len(stages[-1]))])
        return stages


def _concat(parts):
    """Lins (or ints: that many zero columns) side by side."""
    lins = [p for p in parts if isinstance(p, _Lin)]
    depth = max(len(p.stages) for p in lins)
    chains = [p.deepened(depth) if isinstance(p, _Lin) else p for p in parts]
    stages = [[] for _ in range(depth)]
    offsets = [0] * depth
    for chain in chains:
        if isinstance(chain, int):
            stages[-1].extend(() for _ in range(chain))
            continue
        for k, stage in enumerate(chain):
            shift = offsets[k - 1] if k else 0
            stages[k].extend(tuple((r + shift, w) for r, w in c) for c in stage)
        for k, stage in enumerate(chain):
            offsets[k] += len(stage)
        # a zero part has no inner lanes: later parts' rows count only the lins' lanes
    bias = None
    if any(p.bias is not None for p in lins):
        bias = [b for p in parts for b in (
            [0.0] * p if isinstance(p, int) else
            p.bias if p.bias is not None else [0.0] * len(p.stages[-1]))]
    return _Lin(lins[0].src, lins[0].width, stages, False, sum(p.steps for p in lins) + 1,
                bias)


def _add(a, b, sign):
    """a + sign * b as a chain of MatMuls that sums in the graph's order (None for two
    values)."""
    if a.src != b.src or a.scalar != b.scalar or len(a.stages[-1]) != len(b.stages[-1]) or \
            a.bias is not None or b.bias is not None:
        return None
    steps = a.steps + b.steps + 1
    if len(a.stages) == len(b.stages) == 1:
        cols = []
        for ca, cb in zip(a.stages[0], b.stages[0]):
            cb = tuple((r, sign * w) for r, w in cb)
            rows = [r for r, _ in ca + cb]
            if len(set(rows)) != len(rows) or len(cb) > 1 and len(ca) > 0:
                break
            if len(ca) > 1 and cb and cb[0][0] < ca[-1][0]:
                break
            cols.append(tuple(sorted(ca + cb)))
        else:
            return _Lin(a.src, a.width, [cols], a.scalar, steps)
    # b's sums are made a stage before they are added (b + 0 by an identity stage)
    depth = max(len(a.stages), len(b.stages) + any(len(c) > 1 for c in b.stages[-1]), 2)
    sa, sb = a.deepened(depth), b.deepened(depth)
    stages = [sa[0] + sb[0]]
    for k in range(1, depth - 1):
        n = len(sa[k - 1])
        stages.append(sa[k] + [tuple((r + n, w) for r, w in c) for c in sb[k]])
    n = len(sa[-2])
    stages.append([ca + tuple((r + n, sign * w) for r, w in cb)
                   for ca, cb in zip(sa[-1], sb[-1])])
    return _Lin(a.src, a.width, stages, a.scalar, steps)


def _simplified(stages):
    """The same float program in fewer inner lanes: a lane that is 0 or that nothing reads
    dropped, two lanes computed alike made one where no sum after them changes order."""
    stages = [list(s) for s in stages]
    changed = True
    while changed:
        changed = False
        for k in range(len(stages) - 1):
            cols, nxt = stages[k], stages[k + 1]
            read = {r for c in nxt for r, _ in c}
            keep = [i for i, c in enumerate(cols) if c and i in read]
            seen = {}
            for i in list(keep):
                first = seen.get(cols[i])
                if first is None:
                    seen[cols[i]] = i
                    continue
                rows = [c for c in nxt if any(r in (first, i) for r, _ in c)]
                if all(len(c) <= 2 and not ({first, i} <= {r for r, _ in c}) for c in rows):
                    nxt = [tuple(sorted((first if r == i else r, w) for r, w in c))
                           for c in nxt]
                    keep.remove(i)
            if len(keep) < len(cols):
                new = {old: j for j, old in enumerate(keep)}
                stages[k] = [cols[i] for i in keep]
                stages[k + 1] = [tuple((new[r], w) for r, w in c if r in new) for c in nxt]
                changed = True
        # a stage of lanes copied (each column one term of 1) folds into the one before it
        for k in range(1, len(stages)):
            if all(len(c) == 1 and c[0][1] == 1 for c in stages[k]):
                stages[k - 1] = [stages[k - 1][c[0][0]] for c in stages[k]]
                del stages[k]
                changed = True
                break
    return stages


def _linear(g):
    """Rewrite each linear map written lane by lane as its chain of MatMuls."""
    dtype = g.outputs[0].elem_type if g.outputs else DataType.FLOAT
    if dtype not in FLOATS:
        return
    lins = {}
    consumers = g.readers()
    made_by = g.producers()

    def const_lanes(name, lin, shape):
        """The per-lane factors of a constant Mul, or None."""
        c = g.consts.get(name)
        trig = made_by.get(name)
        if c is None and trig is not None and trig.op_type in ("Cos", "Sin") and \
                trig.input[0] in g.consts:
            # cos or sin of a constant, correctly rounded (what docs/onnx.md assumes of a
            # runtime's Cos and Sin)
            c = g.consts[trig.input[0]]
            fn = math.cos if trig.op_type == "Cos" else math.sin
            c = _Const(c.dtype, c.dims, [_round(c.dtype, fn(v)) for v in c.values])
        if c is None or c.dtype not in FLOATS:
            return None
        width = 1 if lin.scalar else len(lin.stages[-1])
        if math.prod(c.dims) == 1 and len(c.dims) <= len(shape):
            return [c.values[0]] * width
        if lin.scalar or len(c.dims) > len(shape) or any(d != 1 for d in c.dims[:-1]) or \
                c.dims[-1] != width:
            return None
        return list(c.values)

    for node in g.nodes:
        if len(node.output) != 1:
            continue
        out, op, attrs = node.output[0], node.op_type, _attrs(node)
        shape = g.shapes.get(out)
        if not shape:
            continue
        x = node.input[0] if node.input else None
        lin = lins.get(x)
        if lin is None and x not in g.consts and op in ("Slice", "Gather", "Expand",
                                                        "ScatterND") and \
                g.shape(x) and g.shape(x)[-1] and g.shape(x)[-1] <= 4096:
            n = g.shape(x)[-1]
            lin = _Lin(x, n, [[((i, 1.0),) for i in range(n)]])
        result = None
        if op == "Gather" and lin is not None and not lin.scalar and \
                node.input[1] in g.consts and \
                _axis(attrs.get("axis", 0), len(g.shape(x)), "axis") == len(g.shape(x)) - 1:
            ind, w = g.consts[node.input[1]], len(lin.stages[-1])
            if len(ind.dims) <= 1 and all(-w <= i < w for i in ind.values):
                result = lin.select([i % w for i in ind.values], scalar=not ind.dims)
        elif op == "Slice" and lin is not None and not lin.scalar:
            rank = len(g.shape(x))
            args = [g.consts.get(v) if v else None for v in node.input[1:]]
            if len(args) >= 3 and all(a is not None for a in args[:3]) and \
                    len(args[2].values) == 1 and \
                    args[2].values[0] % rank == rank - 1 and \
                    (len(args) < 4 or args[3] is None or list(args[3].values) == [1]):
                w = len(lin.stages[-1])
                result = lin.select(list(range(w))[slice(int(args[0].values[0]),
                                                          int(args[1].values[0]))])
        elif op in ("Unsqueeze", "Squeeze") and lin is not None and \
                node.input[1:] and node.input[1] in g.consts:
            axes = g.consts[node.input[1]].values
            rank = len(shape)
            if len(axes) == 1 and axes[0] % rank == rank - 1 and shape[-1] == 1 and \
                    lin.scalar == (op == "Unsqueeze"):
                result = lin.moved(not lin.scalar)
            elif len(axes) == 1 and op == "Squeeze" and axes[0] % len(g.shape(x)) == \
                    len(g.shape(x)) - 1 and not lin.scalar and len(lin.stages[-1]) == 1:
                result = lin.moved(True)
        elif op == "Expand" and lin is not None and not lin.scalar and \
                len(lin.stages[-1]) == 1 and tuple(g.shape(x)[:-1]) == tuple(shape[:-1]):
            result = lin.select([0] * shape[-1])
            result.steps += 1
        elif op == "Mul" and len(node.input) == 2:
            # (Neg of a Gather is the negative-error readout the reader matches as it is)
            ins = list(node.input)
            for i, name in enumerate(ins):
                other = lins.get(name)
                if other is None:
                    continue
                cs = const_lanes(ins[1 - i], other, shape)
                if cs is not None:
                    result = other.scale(cs)
                break
        elif op in ("Reshape", "Expand") and x in lins and g.shape(x) == tuple(shape):
            result = lin  # to the shape it has
        elif op == "Reshape" and lin is not None and lin.scalar and \
                tuple(g.shape(x)) + (1,) == tuple(shape):  # a lane made a last axis of 1
            result = lin.moved(False)
        elif op == "ScatterND" and lin is not None and not lin.scalar and \
                len(node.input) == 3 and node.input[2] in lins and \
                _attrs(node).get("reduction", b"none") in (b"none", "none"):
            # q[..., l] = u (an assignment to one lane): the lanes of q with u for lane l
            lane = _lane_written(g.consts.get(node.input[1]), shape)
            u = lins[node.input[2]]
            if lane is not None and u.src == lin.src and \
                    (u.scalar or len(u.stages[-1]) == 1):
                w = len(lin.stages[-1])
                parts = [lin.select(list(range(lane))) if lane else None,
                         u.moved(False),
                         lin.select(list(range(lane + 1, w))) if lane + 1 < w else None]
                result = _concat([part for part in parts if part is not None])
        elif op in ("Add", "Sub") and len(node.input) == 2 and \
                all(v in lins for v in node.input):
            result = _add(lins[node.input[0]], lins[node.input[1]], -1 if op == "Sub" else 1)
        elif op == "Add" and len(node.input) == 2 and lin is not None and \
                node.input[1] in g.consts:
            # a constant added last: the map's bias (x @ W + b, the sum rounded, then b)
            c = g.consts[node.input[1]]
            width = 1 if lin.scalar else len(lin.stages[-1])
            if c.dtype == dtype and math.prod(c.dims) == 1 and len(c.dims) <= len(shape):
                result = lin.biased([c.values[0]] * width)
            elif c.dtype == dtype and not lin.scalar and len(c.dims) <= len(shape) and \
                    c.dims and all(d == 1 for d in c.dims[:-1]) and c.dims[-1] == width:
                result = lin.biased(c.values)
        elif op == "Concat" and _axis(attrs.get("axis", 0), len(shape), "axis") == \
                len(shape) - 1:
            parts = []
            for v in node.input:
                c = g.consts.get(v)
                if v in lins and not lins[v].scalar:
                    parts.append(lins[v])
                elif c is not None and not any(c.values) and c.dims and \
                        tuple(c.dims[:-1]) == tuple(shape[:-1]):
                    parts.append(c.dims[-1])
                else:
                    break
            else:
                if any(isinstance(p, _Lin) for p in parts) and \
                        len({p.src for p in parts if isinstance(p, _Lin)}) == 1:
                    result = _concat(parts)
        if result is not None and result.stages and \
                sum(len(c) for s in result.stages for c in s) <= LIMITS.elements:
            lins[out] = result

    # write each map a reader outside the maps needs as MatMuls, once
    producer = g.producers()
    outputs = {v.name for v in g.outputs}
    nodes = []
    for node in g.nodes:
        out = node.output[0] if len(node.output) == 1 else None
        lin = lins.get(out)
        needed = lin is not None and (out in outputs or any(
            r.output[0] not in lins if len(r.output) == 1 else True
            for r in consumers.get(out, ())))
        if not needed or lin.scalar or lin.steps < 1:
            nodes.append(node)
            continue
        stages = _simplified(lin.stages)
        value, rows = lin.src, lin.width
        src_shape = g.shape(lin.src)
        for k, stage in enumerate(stages):
            cols = len(stage)
            if rows * cols > LIMITS.elements:
                raise OnnxError(f"{_what(node)}: a projection of {rows:,} x {cols:,} lanes "
                                f"(limit elements, {LIMITS.elements:,})")
            table = [0.0] * (rows * cols)
            for j, c in enumerate(stage):
                for r, w in c:
                    table[r * cols + j] = w
            weight = g.fresh(f"{out}.W{k}")
            g.add_const(weight, _Const(dtype, (rows, cols), table))
            target = out if k == len(stages) - 1 else g.fresh(f"{out}.x{k}")
            g.shapes[target] = tuple(src_shape[:-1]) + (cols,)
            if lin.bias is not None and k == len(stages) - 1:
                target = g.fresh(f"{out}.x{k}")
                g.shapes[target] = tuple(src_shape[:-1]) + (cols,)
            nodes.append(Node((value, weight), (target,), "MatMul",
                              g.fresh(f"{node.name or out}.linear"), ()))
            value, rows = target, cols
        if lin.bias is not None:
            bias = g.fresh(f"{out}.b")
            g.add_const(bias, _Const(dtype, (len(lin.bias),), list(lin.bias)))
            nodes.append(Node((value, bias), (out,), "Add", g.fresh(f"{node.name or out}.bias")))
        del producer[out]
    g.nodes = _pruned(g, nodes)


def _lane_written(indices, shape):
    """l if ScatterND's indices write lane l of the last axis at every position of
    ``shape`` in row-major order (``q[..., l] = u`` or ``q[..., l:l+1] = u``), else None."""
    if indices is None or not shape or tuple(indices.dims) not in (
            tuple(shape[:-1]) + (len(shape),), tuple(shape[:-1]) + (1, len(shape))):
        return None
    rank, lane = len(shape), indices.values[len(shape) - 1] if indices.values else None
    if not isinstance(lane, int) or not 0 <= lane < shape[-1]:
        return None
    for i in range(math.prod(shape[:-1])):
        if list(indices.values[i * rank:(i + 1) * rank]) != _index(i, shape[:-1]) + [lane]:
            return None
    return lane


def _live(nodes, outputs):
    """The nodes an output depends on, in order."""
    need, kept = set(outputs), []
    for node in reversed(nodes):
        if any(o in need for o in node.output):
            kept.append(node)
            need.update(x for x in node.input if x)
    return kept[::-1]


def _pruned(g, nodes):
    """``nodes`` without those a rewrite left unread; a node no output read before the
    rewrite stays, for the reader to refuse."""
    outputs = {v.name for v in g.outputs}
    live_before = {id(n) for n in _live(g.nodes, outputs)}
    live = {id(n) for n in _live(nodes, outputs)}
    before = {id(n) for n in g.nodes}
    return [n for n in nodes if id(n) in live or id(n) in before and id(n) not in live_before]


def _trig_tables(g):
    """Cos(c) (or Sin), reshaped or not, as Cos of c shaped [T, n] (its leading axes of 1
    dropped): the rotary table the reader matches, computed by the same Cos."""
    producer = g.producers()
    tables = {}

    def table(name, shape):
        dims = list(shape)
        while len(dims) > 2 and dims[0] == 1:
            dims.pop(0)
        key = (name, tuple(dims))
        if key not in tables:
            c = g.consts[name]
            tables[key] = g.fresh(f"{name}.table")
            g.add_const(tables[key], _Const(c.dtype, dims, c.values))
        return tables[key], tuple(dims)

    nodes, nodes_by_output = [], {}  # a table reshaped twice: the second reads the first
    for node in g.nodes:
        trig = producer.get(node.input[0]) if node.input else None
        trig = nodes_by_output.get(node.input[0], trig) if node.input else None
        shape = g.shapes.get(node.output[0]) if len(node.output) == 1 else None
        if (node.op_type in ("Reshape", "Unsqueeze") or _moves_ones(g, node)) and \
                trig is not None and trig.op_type in ("Cos", "Sin") and \
                trig.input[0] in g.consts and shape:
            name, dims = table(trig.input[0], shape)
            node = replace(trig, input=(name,), output=node.output,
                           name=g.fresh(trig.name or trig.op_type))
        elif node.op_type in ("Cos", "Sin") and node.input[0] in g.consts and shape and \
                len(shape) > 2 and shape[0] == 1:
            name, dims = table(node.input[0], shape)
            node = replace(node, input=(name,))
        else:
            nodes.append(node)
            continue
        g.shapes[node.output[0]] = dims
        nodes.append(node)
        nodes_by_output[node.output[0]] = node
    g.nodes = _pruned(g, nodes)


def _moves_ones(g, node):
    """A Transpose that moves only axes of 1: a reshape of the values in their order."""
    dims = g.shapes.get(node.input[0]) if node.op_type == "Transpose" else None
    perm = _attrs(node).get("perm") if dims is not None else None
    return perm is not None and [p for p in perm if dims[p] != 1] == \
        [p for p in range(len(dims)) if dims[p] != 1]


_TYPE_OF_FIRST = ("Reshape", "Unsqueeze", "Squeeze", "Transpose", "Expand", "Identity",
                  "Gather", "Slice", "Concat", "Mul", "Add", "Sub", "Div", "Neg", "Sqrt", "Pow",
                  "MatMul", "Gemm", "ReduceMean", "ReduceSum", "ReduceMax", "Softmax", "Exp",
                  "Cos", "Sin", "Erf", "Relu", "Sigmoid", "Tanh", "Reciprocal", "ScatterND",
                  "GatherND", "ScatterElements")


def _typed(types, node):
    """Record the type of the node's output in ``types`` where it is known: a Cast's ``to``,
    else the first input's type through the operators whose result has it."""
    first = types.get(node.input[0]) if node.input else None
    if node.op_type == "Cast" and len(node.output) == 1:
        types[node.output[0]] = _attrs(node).get("to")
    elif node.op_type == "Where" and len(node.input) == 3 and len(node.output) == 1:
        types[node.output[0]] = types.get(node.input[1])
    elif node.op_type in _TYPE_OF_FIRST and len(node.output) == 1:
        types[node.output[0]] = first


def _types(g):
    """The known type of each value: the graph's inputs and constants, then ``_typed``."""
    types = dict(g.types)
    types.update((name, c.dtype) for name, c in g.consts.items())
    for node in g.nodes:
        _typed(types, node)
    return types


def _same_type_casts(g):
    """Cast(x, to) of an x already of type ``to`` (torch's ``.float()`` in a float32 model)
    is x: no rounding, no node. A type is known from the graph's inputs and constants, through
    operators whose result has their first input's type."""
    types = dict(g.types)
    types.update((name, c.dtype) for name, c in g.consts.items())
    rename = {}
    nodes = []
    for node in g.nodes:
        inputs = tuple(rename.get(x, x) for x in node.input)
        node = replace(node, input=inputs) if inputs != node.input else node
        first = types.get(inputs[0]) if inputs else None
        if node.op_type == "Cast" and len(node.output) == 1 and first is not None and \
                _attrs(node).get("to") == first:
            rename[node.output[0]] = inputs[0]
            continue
        _typed(types, node)
        nodes.append(node)
    if rename:
        g.outputs = [replace(v, name=rename.get(v.name, v.name)) for v in g.outputs]
        g.nodes = nodes


def _token_ids(g):
    """A graph that outputs token ids, ``ArgMax(s)`` or ``ArgMin(s)`` over the last axis of
    float scores s (the first maximum or minimum: ``select_last_index`` 0), outputs the logits
    whose first maximum is that id: s for ArgMax, -s for ArgMin (negation is exact and keeps
    every tie, so s's first minimum is -s's first maximum). -s of lanes of the stream (a Slice
    of its last axis, a Gather of it, or the stream itself) is the negative-error readout
    Neg(Gather(x, lanes)); -(x @ W + b) is x @ (-W) + (-b), each product and sum the negated
    float (rounding to nearest is symmetric)."""
    out = g.outputs[0] if len(g.outputs) == 1 else None
    node = next((n for n in g.nodes if out is not None and out.name in n.output), None)
    if out is None or out.elem_type not in INTS or node is None or \
            node.op_type not in ("ArgMax", "ArgMin"):
        return  # the reader refuses an output it does not read
    attrs, scores = _attrs(node), node.input[0]
    dims, dtype = g.shape(scores), _types(g).get(scores)
    least = "minimum" if node.op_type == "ArgMin" else "maximum"
    if dims is None or len(dims) < 2 or dtype not in FLOATS:
        raise OnnxError(f"{_what(node)}: token ids of scores whose float type and shape "
                        f"[..., T, tokens] are not known")
    axis, rank = attrs.get("axis", 0), len(dims)
    if not set(attrs) <= {"axis", "keepdims", "select_last_index"} or \
            not isinstance(axis, int) or not -rank <= axis < rank or axis % rank != rank - 1:
        raise OnnxError(f"{_what(node)}: token ids over axis {ascii(axis)[:20]} of "
                        f"scores {list(dims)}; the model format's readout is the first "
                        f"maximum over the last axis (attributes axis -1, keepdims, "
                        f"select_last_index 0)")
    if attrs.get("select_last_index", 0) != 0:
        raise OnnxError(f"{_what(node)}: select_last_index {attrs['select_last_index']} "
                        f"takes the last {least}; the model format's readout takes the "
                        f"first")
    if any(out.name in n.input for n in g.nodes):
        raise OnnxError(f"{_what(node)}: its token ids are read by another node; tinyadder "
                        f"reads them as the graph's output only")
    nodes = [n for n in g.nodes if n is not node]
    logits = scores
    if node.op_type == "ArgMin":
        logits = g.fresh("logits")
        nodes += _negated(g, scores, logits, len(dims) - 1)
    before = {id(n) for n in _live(g.nodes, [out.name])}
    live = {id(n) for n in _live(nodes, [logits])}
    g.nodes = [n for n in nodes if id(n) in live or id(n) not in before]
    g.outputs = [replace(out, name=logits, elem_type=dtype, shape=tuple(dims))]


def _negated(g, scores, logits, last):
    """The nodes that compute ``logits`` = -``scores`` in a form the reader matches."""
    p = next((n for n in g.nodes if scores in n.output), None)
    op = p.op_type if p is not None else None
    consts = [g.consts.get(x) for x in p.input] if p is not None else []

    def negative(c):
        name = g.fresh(f"{scores}.negated")
        g.add_const(name, _Const(c.dtype, c.dims, [-v for v in c.values]))
        return name

    def neg_of_lanes(x, lanes):
        index, picked = g.fresh(f"{scores}.lanes"), g.fresh(f"{scores}.picked")
        g.add_const(index, _Const(DataType.INT64, (len(lanes),), list(lanes)))
        return [Node((x, index), (picked,), "Gather", picked,
                     (Attribute("axis", AttributeType.INT, last),)),
                Node((picked,), (logits,), "Neg", logits)]

    if op == "Slice" and all(c is not None for c in consts[1:]) and \
            g.shape(p.input[0]) is not None:
        width = g.shape(p.input[0])[-1]
        starts, ends = _ints(consts[1]), _ints(consts[2])
        axes = _ints(consts[3]) if len(consts) > 3 else list(range(len(starts)))
        steps = _ints(consts[4]) if len(consts) > 4 else [1] * len(starts)
        if len(axes) == 1 and axes[0] % (last + 1) == last and steps == [1]:
            return neg_of_lanes(p.input[0], range(width)[slice(starts[0], ends[0])])
    if op == "Gather" and _axis(_attrs(p).get("axis", 0), last + 1, "axis") == last:
        return [Node((scores,), (logits,), "Neg", logits)]
    if op in ("MatMul", "Gemm") and consts[1] is not None and \
            all(c is not None for c in consts[2:]):
        inputs = (p.input[0],) + tuple(negative(c) for c in consts[1:])
        return [replace(p, input=inputs, output=(logits,), name=logits)]
    if op == "Add" and consts[1] is not None and any(
            p.input[0] in n.output and n.op_type in ("MatMul", "Gemm") for n in g.nodes):
        product = p.input[0]
        return _negated(g, product, f"{logits}.product", last) + [
            replace(p, input=(f"{logits}.product", negative(consts[1])), output=(logits,),
                    name=logits)]
    return neg_of_lanes(scores, range(g.shape(scores)[-1]))


def _leading_ones_only(a, b):
    """Whether shapes a and b differ only in leading axes of 1."""
    strip = lambda dims: tuple(dims)[next((i for i, d in enumerate(dims) if d != 1),  # noqa: E731
                                          len(dims)):]
    return strip(a) == strip(b)


def _identity_view(g, node):
    """Whether the node's output is its input: an Expand to the shape it has, or a Slice of
    steps 1 whose output has its input's shape (it keeps every value, in order)."""
    x, out = g.shape(node.input[0]), g.shape(node.output[0])
    if x is None or tuple(x) != tuple(out or ()) or node.input[0] in g.consts:
        return False
    if node.op_type == "Slice":
        steps = g.consts.get(node.input[4]) if len(node.input) > 4 and node.input[4] else None
        return len(node.input) <= 4 or not node.input[4] or \
            steps is not None and set(_ints(steps)) == {1}
    return node.op_type == "Expand"


def _broadcasts(g):
    """A chain of Reshapes that only add or drop leading axes of 1 and Expands (torch's
    ``h[..., :k] = x[..., l:l+1]``: the lane reshaped, expanded, reshaped) is one Expand of
    its source to the chain's shape: broadcasting aligns the last axes, so each value is the
    source's value at the same position of its own axes."""
    producer = g.producers()
    nodes, same = list(g.nodes), {}
    for i, node in enumerate(g.nodes):
        out = g.shape(node.output[0]) if len(node.output) == 1 else None
        if node.op_type not in ("Reshape", "Expand", "Slice") or out is None:
            continue
        if _identity_view(g, node) and node.output[0] not in {v.name for v in g.outputs}:
            same[node.output[0]] = node.input[0]  # to the shape it has: the value itself
            continue
        if node.op_type == "Slice":
            continue
        x, steps = node, 0
        while x is not None and x.op_type in ("Reshape", "Expand") and \
                g.shape(x.input[0]) is not None and (
                    x.op_type == "Expand" or
                    _leading_ones_only(g.shape(x.input[0]), g.shape(x.output[0]))):
            source, x, steps = x.input[0], producer.get(x.input[0]), steps + 1
        if steps < 2 or source in g.consts:
            continue
        try:
            if _broadcast(g.shape(source), out) != tuple(out):
                continue
        except ValueError:
            continue
        name = g.fresh(f"{node.output[0]}.shape")
        g.add_const(name, _Const(DataType.INT64, (len(out),), list(out)))
        nodes[i] = Node((source, name), node.output, "Expand", node.name)
    g.nodes = _pruned(g, _renamed(nodes, same))


def _lookups(g):
    """GatherND(table, Unsqueeze(ids, -1)) as Gather(table, ids) (an embedding lookup, as the
    dynamo exporter writes it), and Reciprocal(x) as Div(1, x) (the same one rounding)."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        if node.op_type == "GatherND" and node.input[0] in g.consts and \
                not _attrs(node).get("batch_dims", 0):
            index = producer.get(node.input[1])
            axes = g.consts.get(index.input[1]) if index is not None and \
                index.op_type == "Unsqueeze" and len(index.input) > 1 else None
            ids = index.input[0] if axes is not None else None
            if axes is not None and len(axes.values) == 1 and g.shape(ids) is not None and \
                    axes.values[0] % (len(g.shape(ids)) + 1) == len(g.shape(ids)):
                node = Node((node.input[0], ids), node.output, "Gather", node.name, ())
        elif node.op_type == "Reciprocal" and len(node.input) == 1:
            one = g.fresh(f"{node.output[0]}.one")
            dtype = g.outputs[0].elem_type if g.outputs else DataType.FLOAT
            g.add_const(one, _Const(dtype, (), [1.0]))
            node = Node((one, node.input[0]), node.output, "Div", node.name, ())
        nodes.append(node)
    g.nodes = _pruned(g, nodes)
    for node in g.nodes:  # the shapes after a lookup the fold could not follow
        g.infer(node)


def _token_tables(g):
    """An embedding computed per token from lookups: Gather(C, ids) of a table C [V] of one
    value per token, Add, Sub, Mul, Div, Neg of such lookups and of single constants, each
    Unsqueezed on a last axis of 1 and joined by a Concat on the last axis, is Gather(E, ids)
    of the table E [V, n] those operations make, entry by entry in the graph's type (the same
    roundings, token by token). Only the Concat is replaced: the lookups it reads stay where
    another node reads them."""
    if len(g.inputs) != 1:
        return
    ids = g.inputs[0].name
    per_token = {}  # value: (dtype, V values), one per token id
    columns = {}  # value: the same, Unsqueezed on a new last axis
    nodes = []
    for node in g.nodes:
        op = node.op_type
        if op == "Gather" and node.input[1] == ids and node.input[0] in g.consts and \
                _attrs(node).get("axis", 0) == 0 and len(g.consts[node.input[0]].dims) == 1:
            c = g.consts[node.input[0]]
            per_token[node.output[0]] = (c.dtype, list(c.values))
        elif op in ("Add", "Sub", "Mul", "Div", "Neg") and \
                any(x in per_token for x in node.input) and \
                all(x in per_token or (x in g.consts and len(g.consts[x].values) == 1 and
                                       g.consts[x].dtype in FLOATS) for x in node.input):
            dtype = next(per_token[x][0] for x in node.input if x in per_token)
            V = next(len(per_token[x][1]) for x in node.input if x in per_token)
            rows = [per_token[x][1] if x in per_token else [g.consts[x].values[0]] * V
                    for x in node.input]
            if dtype in FLOATS and all(g.consts[x].dtype == dtype for x in node.input
                                       if x not in per_token):
                if op == "Neg":
                    values = [-v for v in rows[0]]
                elif op == "Div":
                    values = [_div(dtype, a, b) for a, b in zip(*rows)]
                else:
                    values = [_arith(op)(dtype, a, b) for a, b in zip(*rows)]
                per_token[node.output[0]] = (dtype, values)
        elif op == "Unsqueeze" and node.input[0] in per_token and len(node.input) > 1 and \
                node.input[1] in g.consts and g.shape(node.input[0]) is not None and \
                [a % (len(g.shape(node.input[0])) + 1) for a in g.consts[node.input[1]].values]\
                == [len(g.shape(node.input[0]))]:
            columns[node.output[0]] = per_token[node.input[0]]
        elif op == "Concat" and node.input and all(x in columns for x in node.input) and \
                _attrs(node).get("axis") in (-1, len(g.shape(node.input[0]) or ()) - 1) and \
                len({columns[x][0] for x in node.input}) == 1:
            dtype = columns[node.input[0]][0]
            table = g.fresh(f"{node.output[0]}.table")
            V, n = len(columns[node.input[0]][1]), len(node.input)
            g.add_const(table, _Const(dtype, (V, n), [columns[x][1][v] for v in range(V)
                                                      for x in node.input]))
            node = Node((table, ids), node.output, "Gather", node.name, ())
        nodes.append(node)
    g.nodes = _pruned(g, nodes)


def _flattened_gemms(g):
    """onnxruntime's MatMul and Add fused to a Gemm, which takes matrices: Reshape(x [1, ..., n]
    to [m, n]), Gemm(., B, C), Reshape back to [1, ..., k], is MatMul(x, B) then Add C (B^T
    for transB 1; alpha = beta = 1, transA 0), the same product, sum and bias."""
    producer = g.producers()
    readers = {}
    for n in g.nodes:
        for x in n.input:
            readers.setdefault(x, []).append(n)
    replaced, nodes = {}, []
    for node in g.nodes:
        if id(node) in replaced:
            nodes.extend(replaced[id(node)])
            continue
        if node.op_type == "Gemm" and len(node.input) in (2, 3) and \
                node.input[1] in g.consts:
            flat = producer.get(node.input[0])
            back = readers.get(node.output[0], [])
            attrs = _attrs(node)
            if flat is not None and flat.op_type == "Reshape" and len(back) == 1 and \
                    back[0].op_type == "Reshape" and len(readers[flat.output[0]]) == 1 and \
                    attrs.get("alpha", 1.0) == 1.0 and attrs.get("beta", 1.0) == 1.0 and \
                    not attrs.get("transA", 0) and g.shape(flat.input[0]) is not None and \
                    g.shape(back[0].output[0]) is not None and \
                    g.shape(flat.input[0])[:-1] == g.shape(back[0].output[0])[:-1]:
                B = g.consts[node.input[1]]
                weights = node.input[1]
                if attrs.get("transB", 0):
                    weights = g.fresh(f"{node.input[1]}.T")
                    g.add_const(weights, _Const(B.dtype, *_transpose(B.values, B.dims, (1, 0))))
                out = back[0].output[0]
                made = [Node((flat.input[0], weights), (out if len(node.input) == 2 else
                                                        g.fresh(f"{out}.matmul"),),
                             "MatMul", g.fresh(node.name or "Gemm"))]
                if len(node.input) == 3:
                    made.append(Node((made[0].output[0], node.input[2]), (out,), "Add",
                                     g.fresh(node.name or "Gemm")))
                replaced[id(back[0])] = made
                continue
        nodes.append(node)
    if replaced:
        g.nodes = _pruned(g, nodes)
        for node in g.nodes:
            g.infer(node)


def _batched_factors(g):
    """A MatMul of two constants, the first with a batch of one ([1, T, r] @ [r, n]: factored
    positions, F.embedding(arange(T)[None], A) @ B) is left a product (the model's factors),
    of the first without its leading 1s: the same values, [T, n] for the batch to drop."""
    for i, node in enumerate(g.nodes):
        A = g.consts.get(node.input[0]) if node.op_type == "MatMul" else None
        if A is None or node.input[1] not in g.consts or len(A.dims) < 3 or \
                any(d != 1 for d in A.dims[:-2]):
            continue
        name = g.fresh(node.input[0])
        g.add_const(name, _Const(A.dtype, A.dims[-2:], A.values))
        g.nodes[i] = replace(node, input=(name, node.input[1]))
        g.shapes[node.output[0]] = None
        g.infer(g.nodes[i])


def _concat_embedding(g):
    """[E[t] | P[p]] (a token table and a positional table side by side: Concat on the last
    axis of Gather(E, tokens) and a constant [T, b]) is E'[t] + P'[p], E' = [E | 0] and
    P' = [0 | P]: each lane one value plus 0, the same value (but -0 + 0, which is +0)."""
    tokens = {v.name for v in g.inputs}
    producer = g.producers()
    for i, node in enumerate(g.nodes):
        if node.op_type != "Concat" or len(node.input) != 2 or \
                _attrs(node).get("axis") not in (-1, 1):
            continue
        lookup, table = producer.get(node.input[0]), g.consts.get(node.input[1])
        E = g.consts.get(lookup.input[0]) if lookup is not None and \
            lookup.op_type == "Gather" and lookup.input[1] in tokens and \
            not _attrs(lookup).get("axis", 0) else None
        if E is None or table is None or len(E.dims) != 2 or len(table.dims) < 2 or \
                table.dtype != E.dtype or any(d != 1 for d in table.dims[:-2]) or \
                g.shape(lookup.output[0]) != (table.dims[-2], E.dims[1]):
            continue
        T = table.dims[-2]
        a, b = E.dims[1], table.dims[-1]
        padded = [v for r in range(E.dims[0]) for v in
                  list(E.values[r * a:(r + 1) * a]) + [0.0] * b]
        positions = [v for r in range(T) for v in
                     [0.0] * a + list(table.values[r * b:(r + 1) * b])]
        E2, P2, looked = g.fresh(lookup.input[0]), g.fresh(node.input[1]), g.fresh(node.output[0])
        g.add_const(E2, _Const(E.dtype, (E.dims[0], a + b), padded))
        g.add_const(P2, _Const(E.dtype, (T, a + b), positions))
        g.nodes = _pruned(g, g.nodes[:i] + [
            Node((E2, lookup.input[1]), (looked,), "Gather", g.fresh(lookup.name or "Gather")),
            Node((looked, P2), (node.output[0],), "Add", node.name)] + g.nodes[i + 1:])
        g.shapes[looked] = g.shapes[node.output[0]] = (T, a + b)
        return


def _sliced_projections(g):
    """x[..., a:b] @ W (a Slice of the last axis, or a Gather of lanes in increasing order,
    read by a MatMul by a constant) is x @ W',
    W' = W with zero rows for the lanes the slice leaves out: each other lane adds 0 x,
    which is 0 unless that lane is infinite (as the lane-by-lane maps)."""
    producer = g.producers()
    nodes = list(g.nodes)
    for i, node in enumerate(g.nodes):
        cut = producer.get(node.input[0]) if node.op_type == "MatMul" else None
        W = g.consts.get(node.input[1]) if cut is not None else None
        if W is None or cut.op_type not in ("Slice", "Gather") or len(W.dims) != 2 or \
                g.shape(cut.input[0]) is None:
            continue
        n, rank = g.shape(cut.input[0])[-1], len(g.shape(cut.input[0]))
        args = [g.consts.get(v) if v else None for v in cut.input[1:]]
        if cut.op_type == "Gather":  # lanes in increasing order: the sum's order kept
            lanes = [i % n for i in _ints(args[0])] if args[0] is not None and \
                len(args[0].dims) == 1 and all(-n <= i < n for i in _ints(args[0])) else []
            if not lanes or lanes != sorted(set(lanes)) or \
                    _attrs(cut).get("axis", 0) % rank != rank - 1:
                continue
        elif len(args) < 3 or any(a is None or len(a.values) != 1 for a in args[:3]) or \
                args[2].values[0] % rank != rank - 1 or \
                (len(args) > 3 and args[3] is not None and list(args[3].values) != [1]):
            continue
        else:
            lanes = list(range(n))[slice(int(args[0].values[0]), int(args[1].values[0]))]
        if len(lanes) != W.dims[0]:
            continue
        rows = {lane: k for k, lane in enumerate(lanes)}
        cols = W.dims[1]
        values = [W.values[rows[r] * cols + c] if r in rows else 0.0
                  for r in range(n) for c in range(cols)]
        name = g.fresh(node.input[1])
        g.add_const(name, _Const(W.dtype, (n, cols), values))
        nodes[i] = replace(node, input=(cut.input[0], name))
    g.nodes = _pruned(g, nodes)


def _column_slices(g):
    """A Slice (step 1) or Split of the last axis of x @ W (W a constant matrix) is x @ W',
    W' the columns it keeps: each column its own sum, the same. (A qkv projection split
    into q, k and v.)"""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        parts = _column_parts(g, node, producer.get(node.input[0]) if node.input else None)
        if parts is None:
            nodes.append(node)
            continue
        product = producer[node.input[0]]
        W = g.consts[product.input[1]]
        shape = g.shape(node.input[0])
        for out, cols in zip(node.output, parts):
            name = g.fresh(product.input[1])
            g.add_const(name, _Const(W.dtype, (W.dims[0], len(cols)), [
                W.values[r * W.dims[1] + c] for r in range(W.dims[0]) for c in cols]))
            nodes.append(Node((product.input[0], name), (out,), "MatMul", f"{node.name}.{out}"))
            g.shapes[out] = tuple(shape[:-1]) + (len(cols),)
    g.nodes = _pruned(g, nodes)


def _contiguous_slices(g):
    """A Slice whose step skips nothing it keeps (x[..., 0::2] of two lanes is x[..., 0:1])
    is that Slice with step 1."""
    nodes = []
    for node in g.nodes:
        args = [g.consts.get(v) if v else None for v in node.input[1:]]
        shape = g.shape(node.input[0]) if node.input else None
        if node.op_type != "Slice" or len(args) < 4 or shape is None or \
                any(a is None or a.dtype not in INTS for a in args[:4]):
            nodes.append(node)
            continue
        starts, ends, axes, steps = (_ints(a) for a in args[:4])
        kept = [range(shape[a % len(shape)])[slice(b, e, st)] if st else None
                for b, e, a, st in zip(starts, ends, axes, steps)]
        if len({len(starts), len(ends), len(axes), len(steps)}) != 1 or \
                any(r is None or len(r) == 0 or list(r) != list(range(r[0], r[-1] + 1))
                    for r in kept) or steps == [1] * len(steps):
            nodes.append(node)
            continue
        names = []
        for what, values in (("starts", [r[0] for r in kept]),
                             ("ends", [r[-1] + 1 for r in kept])):
            names.append(g.fresh(f"{node.input[0]}.{what}"))
            g.add_const(names[-1], _Const(DataType.INT64, (len(kept),), values))
        nodes.append(replace(node, input=(node.input[0], *names, node.input[3])))
    g.nodes = nodes


def _tiled_heads(g):
    """Key/value heads repeated by Tile, torch's repeat_kv: Reshape(Tile(Unsqueeze(x, a),
    r at a), x's shape with axis a - 1 times r) is Gather(x, [0]*r + [1]*r + ..., a - 1),
    the exporter's grouped heads (and Reshape to that shape without its batch of one, the
    Gather's Reshape); an Expand to 1s but r at a is that Tile (the new axis has size 1)."""
    producer = g.producers()
    nodes = list(g.nodes)
    for i, node in enumerate(g.nodes):
        tile = producer.get(node.input[0]) if node.op_type == "Reshape" else None
        up = producer.get(tile.input[0]) if tile is not None and \
            tile.op_type in ("Tile", "Expand") else None
        if up is None or up.op_type != "Unsqueeze" or len(up.input) < 2 or \
                g.shape(up.input[0]) is None or g.shape(node.output[0]) is None or \
                any(v not in g.consts or g.consts[v].dtype not in INTS
                    for v in (up.input[1], tile.input[1])):
            continue
        shape, axes, reps = g.shape(up.input[0]), _ints(g.consts[up.input[1]]), \
            _ints(g.consts[tile.input[1]])
        a = axes[0] % (len(shape) + 1) if len(axes) == 1 else 0
        r = reps[a] if len(reps) == len(shape) + 1 and a > 0 else 0
        gathered = tuple(shape[:a - 1]) + (shape[a - 1] * r,) + tuple(shape[a:])
        out = tuple(g.shape(node.output[0]))
        if r < 1 or reps != [r if k == a else 1 for k in range(len(reps))] or \
                out not in (gathered, gathered[1:] if gathered[:1] == (1,) else None):
            continue
        index = g.fresh(f"{node.output[0]}.heads")
        g.add_const(index, _Const(DataType.INT64, (shape[a - 1] * r,),
                                  [h for h in range(shape[a - 1]) for _ in range(r)]))
        gather = Node((up.input[0], index), node.output, "Gather", node.name,
                      (Attribute("axis", AttributeType.INT, a - 1),))
        if out != gathered:  # then without the batch: a Reshape of the Gather
            heads = g.fresh(f"{node.output[0]}.gathered")
            g.shapes[heads] = gathered
            gather = replace(gather, output=(heads,))
            nodes[i] = [gather, replace(node, input=(heads, node.input[1]))]
        else:
            nodes[i] = gather
    g.nodes = _pruned(g, [n for x in nodes for n in (x if isinstance(x, list) else [x])])


SCATTERS = ("ScatterND", "ScatterElements")


def _scattered_lanes(g):
    """Lanes written by ScatterND (out[..., a:a+k] = u, the indices every position of the
    other axes, one lane or a run of them): Concat on the last axis of the u in lane order,
    a lane none writes the base's (zeros, or a Slice of the value written into). The same
    values, moved."""
    producer = g.producers()
    readers = {}
    for node in g.nodes:
        for x in node.input:
            readers.setdefault(x, []).append(node)
    nodes = [[n] for n in g.nodes]
    for i, node in enumerate(g.nodes):
        if node.op_type not in SCATTERS or any(
                r.op_type in SCATTERS and r.input[0] == node.output[0]
                for r in readers.get(node.output[0], ())):
            continue
        lanes, written, chain, x = {}, set(), [], node
        while x is not None and x.op_type in SCATTERS and \
                _attrs(x).get("reduction", b"none") in (b"none", "none"):
            block = _scattered_block(g, x)
            if block is None or written & set(range(*block)):
                break
            update = x.input[2]  # an identity Reshape or Expand of it: the value itself
            while producer.get(update) is not None and \
                    producer[update].op_type in ("Reshape", "Expand") and \
                    g.shape(producer[update].input[0]) == g.shape(update):
                update = producer[update].input[0]
            lanes[block[0]] = (update, block[1] - block[0])
            written |= set(range(*block))
            chain.append(x)
            x = producer.get(x.input[0])
        base = chain[-1].input[0] if chain else None
        dims = g.shape(node.output[0])
        zeros = g.consts.get(base)
        if not chain or dims is None or tuple(g.shape(base) or ()) != tuple(dims) or \
                any(len(readers.get(c.output[0], ())) != 1 for c in chain[1:]) or \
                (zeros is not None and any(v != 0 for v in zeros.values)):
            continue
        dtype = zeros.dtype if zeros is not None else None
        nodes[i] = _lanes_concat(g, node, lanes, dims[-1], dims, base, dtype)
    g.nodes = _pruned(g, [n for part in nodes for n in part])


def _lanes_concat(g, node, lanes, count, dims, base, dtype):
    """The nodes of a Concat on the last axis of lanes 0 .. count − 1 ({first lane: (value,
    lanes)}), each run of lanes none writes zeros of shape dims[:-1] + (run,) (``dtype``
    given) or a Slice of ``base``: ``node``'s output, of shape ``dims``."""
    parts, made, lane = [], [], 0
    while lane < count:
        if lane in lanes:
            value, width = lanes[lane]
            parts.append(value)
            lane += width
            continue
        run = next((k for k in range(lane, count) if k in lanes), count) - lane
        name = g.fresh(f"{base}.lanes")
        if dtype is not None:
            g.add_const(name, _Const(dtype, tuple(dims[:-1]) + (run,),
                                     [0.0] * (math.prod(dims[:-1]) * run)))
        else:
            bounds = []
            for v in (lane, lane + run, len(dims) - 1):
                bounds.append(g.fresh(f"{name}.bound"))
                g.add_const(bounds[-1], _Const(DataType.INT64, (1,), [v]))
            made.append(Node((base, *bounds), (name,), "Slice", name))
            g.shapes[name] = tuple(dims[:-1]) + (run,)
        parts.append(name)
        lane += run
    g.shapes[node.output[0]] = tuple(dims)
    return made + [Node(tuple(parts), node.output, "Concat", node.name,
                        (Attribute("axis", AttributeType.INT, -1),))]


def _transposed_scatters(g):
    """torch.export's slice_scatter of lanes: Transpose(S, p), p swapping the first and last
    axes, S zeros (or Transpose(B, p)) whose rows l .. l + k - 1 ScatterND writes (indices
    [[l], ..., [l + k - 1]]) from Transpose(u, p) (through Identity): Concat of the u in
    lane order on the last axis (a lane none writes: zeros, or B's). The same values,
    moved."""
    producer = g.producers()
    nodes = [[n] for n in g.nodes]
    for i, node in enumerate(g.nodes):
        perm = tuple(_attrs(node).get("perm", ())) if node.op_type == "Transpose" else ()
        n = len(perm)
        if n < 2 or perm != (n - 1,) + tuple(range(1, n - 1)) + (0,):
            continue
        lanes, written, x = {}, set(), producer.get(node.input[0])
        while x is not None and x.op_type in ("Identity", "ScatterND"):
            if x.op_type == "ScatterND":
                index, update = g.consts.get(x.input[1]), producer.get(x.input[2])
                rows = _ints(index) if index is not None and index.dtype in INTS else []
                if not rows or len(index.dims) != 2 or index.dims[1] != 1 or \
                        rows != list(range(rows[0], rows[0] + len(rows))) or \
                        update is None or update.op_type != "Transpose" or \
                        tuple(_attrs(update).get("perm", ())) != perm or \
                        _attrs(x).get("reduction", b"none") not in (b"none", "none") or \
                        written & set(rows):
                    break
                lanes[rows[0]] = (update.input[0], len(rows))
                written |= set(rows)
            x = producer.get(x.input[0]) if x.input[0] not in g.consts else None
        base = _scatter_base(producer, node.input[0])
        zeros, turned = g.consts.get(base), producer.get(base)
        dims = g.shape(node.output[0])
        if zeros is None and turned is not None and turned.op_type == "Transpose" and \
                tuple(_attrs(turned).get("perm", ())) == perm and dims is not None and \
                g.shape(turned.input[0]) == tuple(dims):
            base = turned.input[0]  # S = Transpose(B, p): B's lanes where none is written
        elif zeros is None or len(zeros.dims) != n or any(v != 0 for v in zeros.values):
            continue
        count = zeros.dims[0] if zeros is not None else dims[-1]
        if not lanes or any(not (0 <= l and l + k <= count) for l, (_, k) in lanes.items()):
            continue
        if zeros is not None:
            dims = tuple(zeros.dims[p] for p in perm)
        nodes[i] = _lanes_concat(g, node, lanes, count, dims, base,
                                 zeros.dtype if zeros is not None else None)
    g.nodes = _pruned(g, [n for part in nodes for n in part])


def _transposed_gathers(g):
    """torch.export's indexing by a list, x[..., [l1, l2, ...]] or x[:, [-1], :]:
    Transpose(GatherND(Transpose(x, p), [[l1], [l2], ...]), q), p moving axis a first and q
    moving it back: Gather(x, [l1, l2, ...]) of axis a. The same values, moved."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        gathered = producer.get(node.input[0]) if node.op_type == "Transpose" else None
        first = producer.get(gathered.input[0]) if gathered is not None and \
            gathered.op_type == "GatherND" else None
        index = g.consts.get(gathered.input[1]) if first is not None else None
        dims = g.shape(first.input[0]) if first is not None else None
        if index is None or first.op_type != "Transpose" or dims is None or \
                _attrs(gathered).get("batch_dims", 0) or len(index.dims) != 2 or \
                index.dims[1] != 1 or index.dtype not in INTS:
            nodes.append(node)
            continue
        n = len(dims)
        p, q = tuple(_attrs(first).get("perm", ())), tuple(_attrs(node).get("perm", ()))
        a = p[0] if p else -1
        if not 0 <= a < n or p != (a,) + tuple(k for k in range(n) if k != a) or \
                len(q) != n or tuple(p[k] for k in q) != tuple(range(n)) or \
                any(not -dims[a] <= i < dims[a] for i in _ints(index)):
            nodes.append(node)
            continue
        lanes = _const_node(g, f"{node.output[0]}.lanes", DataType.INT64, (index.dims[0],),
                            [i % dims[a] for i in _ints(index)])
        nodes.append(Node((first.input[0], lanes), node.output, "Gather", node.name,
                          (Attribute("axis", AttributeType.INT, a),)))
    g.nodes = _pruned(g, nodes)


def _scatter_base(producer, value):
    """The data a chain of ScatterND (and Identity) nodes starts from."""
    node = producer.get(value)
    while node is not None and node.op_type in ("Identity", "ScatterND"):
        value = node.input[0]
        node = producer.get(value)
    return value


def _unbatched_transposes(g):
    """Reshape(x, its shape without the batch of one), Transpose(perm), Reshape back to a
    batch of one first (torch.export's k^T of a batch): Transpose(x, [0] + (perm + 1))."""
    producer = g.producers()
    nodes = list(g.nodes)
    for i, node in enumerate(g.nodes):
        turn = producer.get(node.input[0]) if node.op_type == "Reshape" else None
        flat = producer.get(turn.input[0]) if turn is not None and \
            turn.op_type == "Transpose" else None
        if flat is None or flat.op_type != "Reshape":
            continue
        x, perm = flat.input[0], tuple(_attrs(turn).get("perm", ()))
        shape, inner, out = g.shape(x), g.shape(flat.output[0]), g.shape(node.output[0])
        if None in (shape, inner, out) or tuple(shape) != (1,) + tuple(inner) or \
                sorted(perm) != list(range(len(inner))) or \
                tuple(out) != (1,) + tuple(inner[p] for p in perm):
            continue
        nodes[i] = Node((x,), node.output, "Transpose", node.name, (Attribute(
            "perm", AttributeType.INTS, (0,) + tuple(p + 1 for p in perm)),))
    g.nodes = _pruned(g, nodes)


def _scattered_elements(g, node, data, indices, updates):
    """(a, b) if a ScatterElements on the last axis writes lanes a .. b - 1 at every position
    (torch.export's select_scatter: indices a, a + 1, ... in each row), or None."""
    if data is None or indices is None or indices.dtype not in INTS or updates is None or \
            not data or _axis(_attrs(node).get("axis", 0), len(data), "axis") != len(data) - 1 \
            or tuple(indices.dims) != tuple(updates) or \
            tuple(indices.dims[:-1]) != tuple(data[:-1]) or not indices.values:
        return None
    k, values = indices.dims[-1], _ints(indices)
    first = values[0] % data[-1] if -data[-1] <= values[0] < data[-1] else -1
    expected = [first + j for _ in range(math.prod(data[:-1])) for j in range(k)]
    return (first, first + k) if values == expected and 0 <= first and \
        first + k <= data[-1] else None


def _scattered_block(g, node):
    """(a, b) if a ScatterND writes lanes a .. b − 1 of data[..., :] at every position of
    the other axes from updates of their shape by b − a (constant indices, row-major), or
    None."""
    data, indices = g.shape(node.input[0]), g.consts.get(node.input[1])
    updates = g.shape(node.input[2])
    if node.op_type == "ScatterElements":
        return _scattered_elements(g, node, data, indices, updates)
    if data is None or indices is None or indices.dtype not in INTS or updates is None or \
            len(indices.dims) != len(data) + 1 or indices.dims[-1] != len(data) or \
            tuple(indices.dims[:-2]) != tuple(data[:-1]) or \
            tuple(updates) != tuple(indices.dims[:-1]) or not indices.values:
        return None
    k, rank = indices.dims[-2], len(data)
    values = _ints(indices)
    first = values[rank - 1]
    expected = [v for p in range(math.prod(data[:-1])) for j in range(k)
                for v in list(_index(p, data[:-1])) + [first + j]]
    return (first, first + k) if values == expected and 0 <= first and \
        first + k <= data[-1] else None


def _column_parts(g, node, product):
    """The columns each output of a Slice or Split of the last axis of x @ W keeps, or
    None."""
    if node.op_type not in ("Slice", "Split") or product is None or \
            product.op_type != "MatMul" or product.input[1] not in g.consts or \
            len(g.consts[product.input[1]].dims) != 2 or g.shape(node.input[0]) is None:
        return None
    shape, n = g.shape(node.input[0]), g.consts[product.input[1]].dims[1]
    if node.op_type == "Slice":
        args = [g.consts.get(v) if v else None for v in node.input[1:]]
        if len(args) < 3 or any(a is None or a.dtype not in INTS or len(a.values) != 1
                                for a in args[:3]) or \
                int(args[2].values[0]) % len(shape) != len(shape) - 1 or \
                (len(args) > 3 and (args[3] is None or list(args[3].values) != [1])):
            return None
        return [list(range(n))[slice(int(args[0].values[0]), int(args[1].values[0]))]]
    attrs = _attrs(node)
    if attrs.get("axis", 0) % len(shape) != len(shape) - 1:
        return None
    if len(node.input) > 1 and node.input[1]:
        sizes = g.consts.get(node.input[1])
        if sizes is None or sizes.dtype not in INTS or sum(sizes.values) != n or \
                len(sizes.values) != len(node.output) or min(sizes.values) < 0:
            return None
        sizes = [int(v) for v in sizes.values]
    else:
        k = len(node.output)
        if attrs.get("num_outputs", k) != k:
            return None
        step = -(-n // k)
        sizes = [min(step, n - i * step) for i in range(k)]
        if min(sizes) < 0:
            return None
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [list(range(a, a + size)) for a, size in zip(starts, sizes)]


def _joined_projections(g):
    """Concat(x @ A, x @ B) on the last axis (constants A and B) is x @ [A | B]: each column
    its own sum, the same."""
    producer = g.producers()
    nodes = list(g.nodes)
    for i, node in enumerate(g.nodes):
        if node.op_type != "Concat" or len(node.input) < 2 or \
                _attrs(node).get("axis") not in (-1, len(g.shapes.get(node.output[0]) or ()) - 1):
            continue
        parts = [producer.get(v) for v in node.input]
        if any(p is None or p.op_type != "MatMul" or p.input[1] not in g.consts or
               len(g.consts[p.input[1]].dims) != 2 for p in parts) or \
                len({p.input[0] for p in parts}) != 1 or \
                len({g.consts[p.input[1]].dims[0] for p in parts}) != 1:
            continue
        Ws = [g.consts[p.input[1]] for p in parts]
        rows, cols = Ws[0].dims[0], sum(W.dims[1] for W in Ws)
        values = [v for r in range(rows) for W in Ws
                  for v in W.values[r * W.dims[1]:(r + 1) * W.dims[1]]]
        name = g.fresh(parts[0].input[1])
        g.add_const(name, _Const(Ws[0].dtype, (rows, cols), values))
        nodes[i] = Node((parts[0].input[0], name), node.output, "MatMul", node.name)
    g.nodes = _pruned(g, nodes)


def _unit_corrections(g):
    """h @ D + h[..., k:k+1] * c (an FFN's down map plus one unit's output times a row c) is
    the FFN with unit k made twice, the copy's down row c: [h | h_k] @ [D; c], the same
    products summed in the same order (D's sum, then + h_k c). The copy is made by the
    gate's and the up map's columns k again (the same unit, the same value)."""
    producer = g.producers()
    readers = g.readers()
    for node in g.nodes:
        if node.op_type != "Add":
            continue
        for down_out, corr_out in (node.input, node.input[::-1]):
            down, corr = producer.get(down_out), producer.get(corr_out)
            if down is None or corr is None or down.op_type != "MatMul" or \
                    corr.op_type != "Mul" or down.input[1] not in g.consts:
                continue
            cut_v, c = corr.input if corr.input[1] in g.consts else corr.input[::-1]
            cut = producer.get(cut_v)
            C, D = g.consts.get(c), g.consts[down.input[1]]
            if cut is None or cut.op_type != "Slice" or cut.input[0] != down.input[0] or \
                    C is None or len(D.dims) != 2 or tuple(C.dims) not in (
                        (D.dims[1],), (1, D.dims[1])) or \
                    any(v not in g.consts for v in cut.input[1:4]):
                continue
            units, rank = D.dims[0], len(g.shape(cut.input[0]) or ())
            steps = g.consts[cut.input[4]].values[0] if len(cut.input) > 4 else 1
            lanes = list(range(units))[slice(g.consts[cut.input[1]].values[0],
                                             g.consts[cut.input[2]].values[0], steps)]
            if len(lanes) != 1 or not rank or \
                    g.consts[cut.input[3]].values[0] % rank != rank - 1:
                continue
            start = lanes[0]
            if len(readers.get(down.input[0], ())) != 2:
                continue
            hidden = producer.get(down.input[0])  # act(gate) * up
            made = _unit_again(g, producer, hidden, start)
            if made is None:
                continue
            name = g.fresh(down.input[1])
            g.add_const(name, _Const(D.dtype, (units + 1, D.dims[1]),
                                     list(D.values) + list(C.values)))
            g.nodes = [n for n in g.nodes if n is not corr and n is not cut]
            g.nodes = [Node((made, name), node.output, "MatMul", node.name) if n is node
                       else (n if n is not down else None) for n in g.nodes]
            g.nodes = [n for n in g.nodes if n is not None]
            g.nodes = _topological(g.nodes, g.consts, {v.name for v in g.inputs})
            return _unit_corrections(g)


def _unit_again(g, producer, hidden, k):
    """The FFN's hidden value with unit k made again at its end: the gate's and the up map's
    weights with column k appended (act(x @ G') * (x @ U')); its name, or None."""
    if hidden is None or hidden.op_type != "Mul":
        return None
    maps = []
    for v in hidden.input:
        n = producer.get(v)
        if n is not None and n.op_type == "Mul":  # silu: g * Sigmoid(g)
            g_in = next((x for x in n.input if getattr(producer.get(x), "op_type", None) ==
                         "MatMul"), None)
            n = producer.get(g_in) if g_in is not None else None
        if n is None or n.op_type != "MatMul" or n.input[1] not in g.consts:
            return None
        maps.append(n)
    for n in maps:
        W = g.consts[n.input[1]]
        if len(W.dims) != 2:
            return None
        rows, cols = W.dims
        name = g.fresh(n.input[1])
        g.add_const(name, _Const(W.dtype, (rows, cols + 1), [
            v for r in range(rows) for v in list(W.values[r * cols:(r + 1) * cols]) +
            [W.values[r * cols + k]]]))
        g.nodes = [replace(m, input=(m.input[0], name)) if m is n else m for m in g.nodes]
        x = g.shape(n.input[0])
        wide = tuple(x[:-1]) + (cols + 1,) if x else None
        changed = {n.output[0]}
        for m in g.nodes:  # the maps' outputs, the activation, the product: one unit more
            if m.output[0] in changed or any(v in changed for v in m.input) and \
                    m.op_type in ("Sigmoid", "Mul") and \
                    _reaches(g, producer, m, hidden.output[0]):
                changed.add(m.output[0])
                g.shapes[m.output[0]] = wide
    return hidden.output[0]


def _heads_of_one(g):
    """A head axis of one made by Unsqueeze(x [T, d], 0) (torch's q.unsqueeze(1)) is the
    heads' Reshape to [T, 1, d] and Transpose to [1, T, d]; a MatMul by a constant after it
    is done before it (the same products and sums, row by row); Squeeze(y [1, T, d], 0) is
    the heads' merge, Transpose to [T, 1, d] and Reshape to [T, d]."""
    for _ in range(8):
        readers = g.readers()
        nodes, changed = [], False
        moved = {}  # a MatMul read through an Unsqueeze: (its new output, the Unsqueeze's)
        for node in g.nodes:
            if id(node) in moved:
                nodes.extend(moved[id(node)])
                continue
            axes = g.consts.get(node.input[1]) if node.op_type in ("Unsqueeze", "Squeeze") \
                and len(node.input) == 2 else None
            shape = g.shape(node.input[0]) if axes is not None else None
            rank = len(shape or ()) + (node.op_type == "Unsqueeze")
            if shape is None or list(axes.values) not in ([0], [-rank]):
                nodes.append(node)
                continue
            if node.op_type == "Squeeze" and len(shape) == 3 and shape[0] == 1:
                mid = g.fresh(node.output[0])
                dims = g.fresh(f"{node.output[0]}.shape")
                g.add_const(dims, _Const(DataType.INT64, (2,), shape[1:]))
                nodes += [Node((node.input[0],), (mid,), "Transpose", g.fresh(node.name),
                               (Attribute("perm", AttributeType.INTS, (1, 0, 2)),)),
                          Node((mid, dims), node.output, "Reshape", node.name)]
                g.shapes[mid] = (shape[1], 1, shape[2])
                changed = True
                continue
            if node.op_type != "Unsqueeze" or len(shape) != 2:
                nodes.append(node)
                continue
            out = readers.get(node.output[0], [])
            by_const = [r for r in out if r.op_type == "MatMul" and r.input[0] ==
                        node.output[0] and r.input[1] in g.consts and
                        len(g.consts[r.input[1]].dims) == 2]
            for r in by_const:  # MatMul(Unsqueeze(x), W) = Unsqueeze(MatMul(x, W))
                inner = g.fresh(r.output[0])
                moved[id(r)] = [Node((node.input[0], r.input[1]), (inner,), "MatMul",
                                     g.fresh(r.name)),
                                Node((inner, node.input[1]), r.output, "Unsqueeze",
                                     g.fresh(node.name))]
                g.shapes[inner] = (shape[0], g.consts[r.input[1]].dims[1])
            if len(by_const) < len(out):
                mid = g.fresh(node.output[0])
                dims = g.fresh(f"{node.output[0]}.shape")
                g.add_const(dims, _Const(DataType.INT64, (3,), (shape[0], 1, shape[1])))
                nodes += [Node((node.input[0], dims), (mid,), "Reshape", g.fresh(node.name)),
                          Node((mid,), node.output, "Transpose", node.name,
                               (Attribute("perm", AttributeType.INTS, (1, 0, 2)),))]
                g.shapes[mid] = (shape[0], 1, shape[1])
            changed = True
        g.nodes = _topological(nodes, g.consts, {v.name for v in g.inputs})
        if not changed:
            return


def _interleaved_rotary(g):
    """Rotary positions on interleaved pairs (lanes 2i, 2i + 1: x[..., 0::2] and x[..., 1::2]
    turned, stacked on a new last axis and flattened) are the half-split rotary the reader
    matches, of the head's lanes in the order 0, 2, ..., 1, 3, ...: the projection's columns
    and every per-lane constant from it to the rotation (a q/k norm's weight) permuted so,
    head by head. The rotated q and k are then that permutation of the graph's, and their
    products are summed in that order (as the norm's mean of squares): the same terms, summed
    in another order, as a model file with interleaved rotary writes them."""
    changed = False
    while True:
        producer = g.producers()
        found = next((f for f in map(lambda n: _interleaved_at(g, producer, n), g.nodes)
                      if f is not None), None)
        if found is None:
            return changed
        changed = True
        flatten, pieces, cuts, y, chain, d = found
        perm = list(range(0, d, 2)) + list(range(1, d, 2))
        renamed, made = {}, []
        for node in chain:  # y's chain from the projection, made again on permuted lanes
            inputs = []
            for x in node.input:
                if x in renamed:
                    inputs.append(renamed[x])
                elif x in g.consts and node.op_type in ("MatMul", "Add", "Mul") and \
                        g.consts[x].dims and g.consts[x].dims[-1] % d == 0 and \
                        g.consts[x].dims[-1] > 1:
                    c = g.consts[x]
                    n = c.dims[-1]
                    cols = [h * d + perm[j] for h in range(n // d) for j in range(d)]
                    name = g.fresh(f"{x}.interleaved")
                    g.add_const(name, _Const(c.dtype, c.dims, [
                        c.values[r * n + cols[j]] for r in range(len(c.values) // n)
                        for j in range(n)]))
                    inputs.append(name)
                else:
                    inputs.append(x)
            renamed[node.output[0]] = g.fresh(node.output[0])
            g.shapes[renamed[node.output[0]]] = g.shapes.get(node.output[0])
            made.append(replace(node, input=tuple(inputs), output=(renamed[node.output[0]],),
                                name=g.fresh(node.name or node.op_type)))
        half, new = d // 2, {}
        for cut, start in zip(cuts, (0, half)):
            bounds = [g.fresh(f"{cut.output[0]}.{k}") for k in ("starts", "ends", "axes")]
            g.add_const(bounds[0], _Const(DataType.INT64, (1,), (start,)))
            g.add_const(bounds[1], _Const(DataType.INT64, (1,), (start + half,)))
            g.add_const(bounds[2], _Const(DataType.INT64, (1,), (-1,)))
            new[id(cut)] = Node((renamed[y], *bounds), cut.output, "Slice", cut.name)
        joined = Node(pieces, flatten.output, "Concat", flatten.name,
                      (Attribute("axis", AttributeType.INT, -1),))
        nodes = []
        for node in g.nodes:
            if node is flatten:
                nodes.append(joined)
            else:
                nodes.append(new.get(id(node), node))
        g.nodes = _pruned(g, _topological(made + nodes, g.consts,
                                          {v.name for v in g.inputs}))


def _interleaved_at(g, producer, flatten):
    """(the Reshape, the two rotated halves, the two strided Slices, the value they cut, the
    chain from its projection, the head width) of an interleaved rotary at ``flatten``."""
    if flatten.op_type != "Reshape":
        return None
    stack = producer.get(flatten.input[0])
    shape = g.shapes.get(flatten.output[0])
    if stack is None or stack.op_type != "Concat" or len(stack.input) != 2 or not shape or \
            _attrs(stack).get("axis") not in (-1, len(shape)):
        return None
    ups = [producer.get(v) for v in stack.input]
    if any(u is None or u.op_type != "Unsqueeze" or u.input[1] not in g.consts or
           list(g.consts[u.input[1]].values) not in ([-1], [len(shape)]) for u in ups):
        return None
    d = shape[-1]
    if g.shapes.get(stack.output[0]) != tuple(shape[:-1]) + (d // 2, 2) or d % 2:
        return None
    pieces = tuple(u.input[0] for u in ups)
    # the Slices of step 2 the rotated halves read (through their Muls)
    cuts = {}
    for piece in pieces:
        for m in producer[piece].input if piece in producer else ():
            mul = producer.get(m)
            for x in mul.input if mul is not None and mul.op_type == "Mul" else ():
                cut = producer.get(x)
                if cut is not None and cut.op_type == "Slice" and len(cut.input) == 5 and \
                        all(v in g.consts for v in cut.input[1:]) and \
                        list(g.consts[cut.input[4]].values) == [2]:
                    cuts[list(g.consts[cut.input[1]].values)[0]] = (cut, cut.input[0])
                pairs = producer.get(cut.input[0]) if cut is not None and \
                    cut.op_type == "Gather" and cut.input[1] in g.consts else None
                if pairs is not None and pairs.op_type == "Reshape" and \
                        _attrs(cut).get("axis") in (-1, len(shape)) and \
                        g.shapes.get(pairs.output[0]) == tuple(shape[:-1]) + (d // 2, 2) and \
                        list(g.consts[cut.input[1]].values) in ([0], [1]) and \
                        not g.consts[cut.input[1]].dims:  # x.view(..., d/2, 2)[..., i]
                    cuts[g.consts[cut.input[1]].values[0]] = (cut, pairs.input[0])
    if sorted(cuts) != [0, 1] or cuts[0][1] != cuts[1][1] or \
            g.shapes.get(cuts[0][1]) != tuple(shape):
        return None
    y = cuts[0][1]
    cuts = {k: cut for k, (cut, _) in cuts.items()}
    chain, value = [], y
    while True:  # back through the norm, the heads' Transpose and Reshape, to the MatMul
        node = producer.get(value)
        if node is None or node.op_type not in ("Mul", "Div", "Transpose", "Reshape", "Add",
                                                 "MatMul"):
            return None
        chain.append(node)
        if node.op_type == "MatMul":
            if node.input[1] not in g.consts:
                return None
            break
        value = next((x for x in node.input if x not in g.consts), None)
    top = chain[-1]
    inside = {top.output[0]}
    ordered = []
    for node in g.nodes:  # every node between the projection and y, in order
        if node is top:
            ordered.append(node)
        elif any(x in inside for x in node.input) and _reaches(g, producer, node, y):
            inside.add(node.output[0])
            ordered.append(node)
    return flatten, pieces, (cuts[0], cuts[1]), y, ordered, d


def _reaches(g, producer, node, target):
    """Whether target depends on node's output."""
    need, seen = [target], set()
    while need:
        v = need.pop()
        if v in seen:
            continue
        seen.add(v)
        if v == node.output[0]:
            return True
        n = producer.get(v)
        if n is not None:
            need.extend(n.input)
    return False


def _broadcast_heads(g):
    """Heads made by broadcasting, as a batched graph [1, heads, T, d] writes them:

    - ``Unsqueeze(Unsqueeze(x[..., l], heads axis), -1) * C``, C [1, H, 1, d], is q = x @ W
      with W[l, h d + j] = C[h, j] (0 elsewhere: each other lane adds 0 x, which is 0 unless
      that lane is infinite), Reshaped to [1, T, H, d] and Transposed to [1, H, T, d];
    - ``Expand(Unsqueeze(y, heads axis), [1, H, T, d])`` of y [1, T, d] is one key/value head
      (Reshape and Transpose) read by all H, and so is the Expand of a head [1, 1, T, d]: its operations that are the same for every head
      (Slices, Concats on the last axis, Mul, Add, Sub, Neg with tables of one head) are done
      on the one head, and a Gather of it, head 0 H times, is put where another operation
      reads it (the grouped heads of the export)."""
    producer = g.producers()
    nodes, one, gathered = [], {}, set()

    def const_ints(value):
        c = g.consts.get(value)
        return [int(v) for v in c.values] if c is not None and c.dtype in INTS else None

    def lane_of(value):
        """(x, l) when value is Gather(x, scalar l, last axis), else None."""
        n = producer.get(value)
        if n is None or n.op_type != "Gather" or g.shape(n.input[0]) is None:
            return None
        rank = len(g.shape(n.input[0]))
        index = g.consts.get(n.input[1])
        if index is None or index.dims != () or _attrs(n).get("axis", 0) % rank != rank - 1:
            return None
        return n.input[0], int(index.values[0]) % g.shape(n.input[0])[-1]

    def emit(node):
        nodes.append(node)
        g.infer(node)

    def to_heads(value, y, T, H, d, stem):
        """Nodes making ``value`` [1, H, T, d] of y [1, T, H d]."""
        shape = g.fresh(f"{stem}.shape")
        g.add_const(shape, _Const(DataType.INT64, (4,), [1, T, H, d]))
        split = g.fresh(f"{stem}.split")
        emit(Node((y, shape), (split,), "Reshape", g.fresh(f"{stem}.reshape")))
        emit(Node((split,), (value,), "Transpose", g.fresh(f"{stem}.heads"),
                  (Attribute("perm", AttributeType.INTS, (0, 2, 1, 3)),)))

    def head_uniform(node):
        op, rank = node.op_type, len(g.shape(node.output[0]) or ())
        if rank != 4:
            return False
        if op in ("Concat",):
            return _attrs(node).get("axis", 0) % 4 == 3
        if op == "Slice":
            axes = const_ints(node.input[3]) if len(node.input) > 3 else None
            return axes is not None and all(a % 4 == 3 for a in axes)
        if op in ("Mul", "Add", "Sub", "Neg"):
            for x in node.input:
                if x in one:
                    continue
                shape = g.shape(x)
                if shape is None or (len(shape) >= 3 and shape[len(shape) - 3] != 1):
                    return False
            return True
        return False

    def single(value):
        """The one head a value read by an operation that is not the same per head."""
        name, H = one[value]
        if value not in gathered:
            gathered.add(value)
            index = g.fresh(f"{value}.kv_of")
            g.add_const(index, _Const(DataType.INT64, (H,), [0] * H))
            emit(Node((name, index), (value,), "Gather", g.fresh(f"{value}.shared"),
                      (Attribute("axis", AttributeType.INT, 1),)))
        return value

    for node in g.nodes:
        out_shape = g.shape(node.output[0]) if len(node.output) == 1 else None
        if node.op_type == "Mul" and out_shape is not None and len(out_shape) == 4:
            a, c = node.input
            C = g.consts.get(c)
            u1 = producer.get(a)
            u0 = producer.get(u1.input[0]) if u1 is not None and \
                u1.op_type == "Unsqueeze" else None
            lane = lane_of(u0.input[0]) if u0 is not None and u0.op_type == "Unsqueeze" \
                else None
            if C is not None and C.dtype in FLOATS and len(C.dims) == 4 and \
                    C.dims[0] == C.dims[2] == 1 and lane is not None and \
                    g.shape(a) == (1, 1, out_shape[2], 1):
                x, l = lane
                (_, H, _, d), width, T = C.dims, g.shape(x)[-1], out_shape[2]
                W = [0.0] * (width * H * d)
                for h in range(H):
                    for j in range(d):
                        W[l * H * d + h * d + j] = C.values[h * d + j]
                weights = g.fresh(f"{node.output[0]}.W")
                g.add_const(weights, _Const(C.dtype, (width, H * d), W))
                flat = g.fresh(f"{node.output[0]}.flat")
                emit(Node((x, weights), (flat,), "MatMul", g.fresh(node.name or "q")))
                to_heads(node.output[0], flat, T, H, d, node.output[0])
                continue
        if node.op_type == "Expand" and out_shape is not None and len(out_shape) == 4:
            u = producer.get(node.input[0])
            y = u.input[0] if u is not None and u.op_type == "Unsqueeze" else None
            if y is not None and g.shape(y) is not None and len(g.shape(y)) == 3 and \
                    g.shape(node.input[0]) == (1, 1) + g.shape(y)[1:] and \
                    out_shape[2:] == g.shape(y)[1:]:
                T, d, H = g.shape(y)[1], g.shape(y)[2], out_shape[1]
                name = g.fresh(f"{node.output[0]}.head")
                to_heads(name, y, T, 1, d, node.output[0])
                one[node.output[0]] = (name, H)
                continue
            if g.shape(node.input[0]) == (1, 1) + out_shape[2:]:  # one head already
                one[node.output[0]] = (node.input[0], out_shape[1])
                continue
        if any(x in one for x in node.input):
            if head_uniform(node):
                name = g.fresh(f"{node.output[0]}.head")
                H = next(one[x][1] for x in node.input if x in one)
                inputs = tuple(one[x][0] if x in one else x for x in node.input)
                emit(replace(node, input=inputs, output=(name,)))
                one[node.output[0]] = (name, H)
                continue
            node = replace(node, input=tuple(single(x) if x in one else x
                                             for x in node.input))
        nodes.append(node)
    for v in g.outputs:
        if v.name in one:
            single(v.name)
    g.nodes = _pruned(g, _topological(nodes, g.consts, {v.name for v in g.inputs}))


# [T, heads, d] <-> [heads, T, d], with a batch axis or not: each its own inverse; and the
# Transpose straight to k^T [heads, d, T], as the heads' Transpose and then k^T's
_SWAPS = {3: (1, 0, 2), 4: (0, 2, 1, 3)}
_TO_KT = {3: ((1, 2, 0), (0, 2, 1)), 4: ((0, 2, 3, 1), (0, 1, 3, 2))}
_HOISTED = ("Mul", "Add", "Sub", "Div", "Sqrt", "Neg", "Reciprocal", "Identity", "Concat",
            "Slice", "ReduceMean", "ReduceSum", "Cos", "Sin")


def _heads_transposes(g):
    """Transposes an optimiser moved below a head's norm and rotary slices (onnxruntime's
    transpose optimiser) moved back up to the heads' Reshape: Transpose(op(x, ...)) is
    op(Transpose(x), ...) for an operation on the last axis, a constant transposed with it;
    k^T in one Transpose (0, 2, 3, 1) is the heads' Transpose then (0, 1, 3, 2)."""
    producer = g.producers()
    memo = {}
    for n in g.nodes:  # the heads' Transposes already there are the ones to share
        if n.op_type == "Transpose" and \
                tuple(_attrs(n).get("perm", ())) in _SWAPS.values() and \
                n.input[0] not in memo and \
                getattr(producer.get(n.input[0]), "op_type", None) not in _HOISTED:
            memo[n.input[0]] = n.output[0]
    made = []

    def last_axis_only(node, rank):
        attrs = _attrs(node)
        if node.op_type == "Concat":
            return attrs.get("axis") is not None and attrs["axis"] % rank == rank - 1
        if node.op_type == "Slice":
            axes = g.consts.get(node.input[3]) if len(node.input) > 3 else None
            return axes is not None and all(a % rank == rank - 1 for a in axes.values)
        if node.op_type.startswith("Reduce"):
            axes = g.consts.get(node.input[1]) if len(node.input) > 1 else None
            return axes is not None and all(a % rank == rank - 1 for a in axes.values) and \
                attrs.get("keepdims", 1) == 1
        return True

    def swapped(value, rank):
        if value in memo:
            return memo[value]
        swap = _SWAPS[rank]
        shape = g.shape(value)
        node = producer.get(value)
        if shape and len(shape) < rank and value not in g.consts:
            found = _what(node) if node is not None else f"value {value!r}"
            raise OnnxError(f"{found}: its output {list(shape)} is read as heads of rank "
                            f"{rank} by a Transpose that swaps its heads and positions")
        out = g.fresh(f"{value}.heads")
        if value in g.consts:
            c = g.consts[value]
            dims = (1,) * (rank - len(c.dims)) + tuple(c.dims)
            if len(c.dims) > rank or dims[rank - 3] == dims[rank - 2] == 1:
                memo[value] = value  # a constant the same either way round, as it is
                return value
            g.add_const(out, _Const(c.dtype, *_transpose(c.values, dims, swap)))
            shape = dims  # the constant's shape, its leading axes of 1 written out
        elif node is not None and node.op_type in _HOISTED and shape and \
                len(shape) == rank and last_axis_only(node, rank):
            inputs = list(node.input)
            arity = 1 if node.op_type in ("Slice",) or node.op_type.startswith("Reduce") \
                else len(inputs)
            inputs[:arity] = [swapped(x, rank) if x else x for x in inputs[:arity]]
            made.append(replace(node, input=tuple(inputs), output=(out,),
                                name=g.fresh(node.name or node.op_type)))
        else:
            made.append(Node((value,), (out,), "Transpose", g.fresh(f"{value}.heads"),
                             (Attribute("perm", AttributeType.INTS, swap),)))
        if shape:
            g.shapes[out] = tuple(shape[p] for p in swap)
        memo[value] = out
        return out

    rename = {}
    nodes = []
    for node in g.nodes:
        perm = tuple(_attrs(node).get("perm", ())) if node.op_type == "Transpose" else ()
        source = producer.get(node.input[0]) if perm else None
        rank = len(perm)
        if rank in _SWAPS and perm in (_SWAPS[rank], _TO_KT[rank][0]) and \
                source is not None and source.op_type in _HOISTED and \
                len(g.shape(node.input[0]) or ()) == rank:
            made.clear()
            heads = swapped(node.input[0], rank)
            nodes.extend(made)
            if perm == _SWAPS[rank]:
                rename[node.output[0]] = heads
            else:
                nodes.append(Node((heads,), node.output, "Transpose", node.name,
                                  (Attribute("perm", AttributeType.INTS, _TO_KT[rank][1]),)))
            continue
        nodes.append(node)
    if not rename and len(nodes) == len(g.nodes):
        return
    nodes = [replace(n, input=tuple(rename.get(x, x) for x in n.input)) for n in nodes]
    g.outputs = [replace(v, name=rename.get(v.name, v.name)) for v in g.outputs]
    g.nodes = _pruned(g, _topological(nodes, g.consts, {v.name for v in g.inputs}))


# ---- hand-written forwards (alexlitz-36's TinyAdder: torch ops on lanes, not nn.Linear) ----


def _const_node(g, stem, dtype, dims, values):
    name = g.fresh(stem)
    g.add_const(name, _Const(dtype, tuple(dims), list(values)))
    return name


def _slice_bounds(g, node):
    """(start, stop) of a Slice of the last axis, step 1, constant bounds, or None."""
    dims = g.shape(node.input[0])
    args = [g.consts.get(v) if v else None for v in node.input[1:]]
    if dims is None or len(args) < 2 or any(a is None or len(a.values) != 1 for a in args[:2]):
        return None
    rank = len(dims)
    axis = args[2].values[0] if len(args) > 2 and args[2] is not None else 0
    if len(args) > 2 and args[2] is None or axis % rank != rank - 1 or \
            len(args) > 3 and args[3] is not None and list(args[3].values) != [1]:
        return None
    lanes = range(dims[-1])[slice(int(args[0].values[0]), int(args[1].values[0]))]
    return (lanes.start, lanes.stop) if len(lanes) else None


def _sliced_concats(g):
    """A Slice (step 1) of the last axis of a Concat on that axis that keeps whole parts is
    the Concat of those parts (one part: the part); one inside a constant part is that
    constant's slice. The same values."""
    producer = g.producers()
    nodes, same = [], {}
    for node in g.nodes:
        joined = producer.get(node.input[0]) if node.op_type == "Slice" else None
        bounds = _slice_bounds(g, node) if joined is not None else None
        rank = len(g.shape(node.input[0]) or ())
        if bounds is None or joined.op_type != "Concat" or \
                _attrs(joined).get("axis", 0) % rank != rank - 1 or \
                any(g.shape(x) is None for x in joined.input):
            nodes.append(node)
            continue
        starts, at = [], 0
        for x in joined.input:
            starts.append(at)
            at += g.shape(x)[-1]
        a, b = bounds
        whole = [x for x, s in zip(joined.input, starts) if a <= s and s + g.shape(x)[-1] <= b]
        if whole and sum(g.shape(x)[-1] for x in whole) == b - a:
            if len(whole) == 1:
                same[node.output[0]] = whole[0]
                continue
            nodes.append(Node(tuple(whole), node.output, "Concat", node.name,
                              (Attribute("axis", AttributeType.INT, -1),)))
            continue
        part = next((x for x, s in zip(joined.input, starts)
                     if s <= a and b <= s + g.shape(x)[-1] and x in g.consts), None)
        if part is None:
            nodes.append(node)
            continue
        c, s = g.consts[part], starts[joined.input.index(part)]
        dims = tuple(c.dims)
        values = [c.values[k] for k in range(len(c.values)) if a - s <= k % dims[-1] < b - s]
        g.add_const(node.output[0], _Const(c.dtype, dims[:-1] + (b - a,), values))
    g.nodes = _pruned(g, _renamed(nodes, same))


def _renamed(nodes, same):
    def value(x):
        while x in same:
            x = same[x]
        return x
    return [replace(n, input=tuple(value(x) for x in n.input)) for n in nodes] if same \
        else nodes


def _widened_writes(g):
    """Concat(x, Z + h) on the last axis, Z zeros (``pad_to(x, n)`` then ``x[..., m:] += h``):
    Concat(x, Z) + h @ E, E the [k, m + k] copy of h's lanes into the new ones: each new lane
    0 + h, as written; each old lane x + 0, x (but that -0 + 0 is +0)."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        parts = node.input if node.op_type == "Concat" and len(node.input) == 2 else ()
        added = producer.get(parts[1]) if parts else None
        dims = g.shape(node.output[0])
        if added is None or added.op_type != "Add" or dims is None or \
                _attrs(node).get("axis", 0) % len(dims) != len(dims) - 1:
            nodes.append(node)
            continue
        z, h = added.input if added.input[0] in g.consts else added.input[::-1]
        c = g.consts.get(z)
        if c is None or any(c.values) or tuple(c.dims) != tuple(g.shape(parts[1]) or ()) or \
                g.shape(h) != tuple(c.dims):
            nodes.append(node)
            continue
        m, k = dims[-1] - c.dims[-1], c.dims[-1]
        E = _const_node(g, f"{node.output[0]}.copy", c.dtype, (k, m + k),
                        [1.0 if col == m + row else 0.0 for row in range(k)
                         for col in range(m + k)])
        wide, written = g.fresh(f"{node.output[0]}.widened"), g.fresh(f"{node.output[0]}.h")
        g.shapes[wide] = g.shapes[written] = tuple(dims)
        nodes += [replace(node, input=(parts[0], z), output=(wide,)),
                  Node((h, E), (written,), "MatMul", written),
                  Node((wide, written), node.output, "Add", node.name)]
    g.nodes = _pruned(g, nodes)


def _is_merged_heads(g, producer, value):
    """Whether value is heads merged: Reshape(Transpose(MatMul(pattern, v), (1, 0, 2)))."""
    merge = producer.get(value)
    turn = producer.get(merge.input[0]) if merge is not None and \
        merge.op_type == "Reshape" else None
    return turn is not None and turn.op_type == "Transpose" and \
        tuple(_attrs(turn).get("perm", ())) == (1, 0, 2) and \
        getattr(producer.get(turn.input[0]), "op_type", None) in ("MatMul", "Mul")


def _unprojected_heads(g):
    """The stream plus heads merged with no output projection (x + z, or x + z broadcast
    from one lane): x + z @ E, E the identity (or a row of ones), each lane one product by
    1, the same float."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        if node.op_type != "Add" or len(node.input) != 2:
            nodes.append(node)
            continue
        x, z = node.input
        if not _is_merged_heads(g, producer, z):
            x, z = z, x
        dims, zd = g.shape(node.output[0]), g.shape(z)
        if not _is_merged_heads(g, producer, z) or dims is None or zd is None or \
                _is_merged_heads(g, producer, x) or g.shape(x) != tuple(dims) or \
                zd[-1] not in (1, dims[-1]):
            nodes.append(node)
            continue
        m, w = zd[-1], dims[-1]
        E = _const_node(g, f"{node.output[0]}.W_O", _types(g)[x], (m, w),
                        [1.0 if m == 1 or r == c else 0.0 for r in range(m) for c in range(w)])
        out = g.fresh(f"{node.output[0]}.attn_out")
        g.shapes[out] = tuple(dims)
        nodes += [Node((z, E), (out,), "MatMul", out), replace(node, input=(x, out))]
    g.nodes = _pruned(g, nodes)


def _reduced_products(g):
    """ReduceSum(x * c) over the last axis, keeping it, c a constant vector (a projection
    written as a dot product): x @ c as a column, the same products summed in index order."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        product = producer.get(node.input[0]) if node.op_type == "ReduceSum" else None
        dims = g.shape(node.input[0])
        axes = g.consts.get(node.input[1]) if len(node.input) > 1 else None
        if product is None or product.op_type != "Mul" or dims is None or axes is None or \
                [a % len(dims) for a in _ints(axes)] != [len(dims) - 1] or \
                not _attrs(node).get("keepdims", 1):
            nodes.append(node)
            continue
        x, c = product.input if product.input[1] in g.consts else product.input[::-1]
        c = g.consts.get(c)
        if c is None or c.dtype not in FLOATS or c.dims[-1:] != (dims[-1],) or \
                any(d != 1 for d in c.dims[:-1]) or g.shape(x) != tuple(dims):
            nodes.append(node)
            continue
        W = _const_node(g, f"{node.output[0]}.W", c.dtype, (dims[-1], 1), c.values)
        nodes.append(Node((x, W), node.output, "MatMul", node.name))
    g.nodes = _pruned(g, nodes)


def _negated_alibi(g):
    """scores + C, C [heads, T, T] whose negation is ALiBi's slope_h (i - j) each product
    rounded once (torch's slopes * (j - i)): scores - (-C), the same float (a + b = a - (-b)),
    the ALiBi the reader matches."""
    nodes = []
    for node in g.nodes:
        c = g.consts.get(node.input[1]) if node.op_type == "Add" and \
            len(node.input) == 2 else None
        if c is None or len(c.dims) != 3 or c.dims[1] != c.dims[2] or c.dims[1] < 2 or \
                c.dtype not in FLOATS:
            nodes.append(node)
            continue
        H, T = c.dims[0], c.dims[1]
        neg = [-v for v in c.values]
        ok = all(neg[(h * T + i) * T + j] == _round(c.dtype, neg[(h * T + 1) * T] * (i - j))
                 for h in range(H) for i in range(T) for j in range(T))
        if not ok or not any(neg):
            nodes.append(node)
            continue
        N = _const_node(g, f"{node.input[1]}.negated", c.dtype, c.dims, neg)
        nodes.append(replace(node, op_type="Sub", input=(node.input[0], N)))
    g.nodes = nodes


def _attention_input(g, producer, qk):
    """The stream an attention whose scores are ``qk`` reads through its v: x of
    v = x @ W [+ b], split into heads, read by pattern @ v; or None."""
    readers = g.readers()
    value = qk.output[0]
    for _ in range(8):
        after = readers.get(value, [])
        if len(after) != 1 and not (len(after) == 2 and {n.op_type for n in after} <= {
                "Div", "ReduceSum"}):
            return None
        node = next((n for n in after if n.op_type != "ReduceSum"), after[0])
        if node.op_type == "MatMul" and node.input[0] == value:
            turn = producer.get(node.input[1])
            split = producer.get(turn.input[0]) if turn is not None and \
                turn.op_type == "Transpose" else None
            v = producer.get(split.input[0]) if split is not None and \
                split.op_type == "Reshape" else None
            if v is not None and v.op_type == "Add" and v.input[1] in g.consts:
                v = producer.get(v.input[0])
            return v.input[0] if v is not None and v.op_type == "MatMul" and \
                v.input[1] in g.consts else None
        if node.op_type not in ("Add", "Sub", "Where", "Cast", "Exp", "Div", "Softmax", "Mul"):
            return None
        value = node.output[0]
    return None


def _row_of(c, transposed):
    """(heads, d, the bias per head and lane) of constant heads [..., H, T, d] (k^T: [..., G,
    d, T]) equal at every position, or None."""
    dims = list(c.dims)
    while len(dims) > 3 and dims[0] == 1:
        dims.pop(0)
    dims = [1] * (3 - len(dims)) + dims  # one head, its axis dropped
    if len(dims) != 3:
        return None
    H, a, b = dims
    T, d = (b, a) if transposed else (a, b)
    at = (lambda h, t, j: c.values[(h * d + j) * T + t]) if transposed else \
        (lambda h, t, j: c.values[(h * T + t) * d + j])
    row = [at(h, 0, j) for h in range(H) for j in range(d)]
    if any(at(h, t, j) != row[h * d + j] for h in range(H) for t in range(T) for j in range(d)):
        return None
    return H, d, row


def _constant_patterns(g):
    """A constant pattern [heads, T, T] read by pattern @ v (an optimiser's fold of scores of
    zeros: q and k of zeros) that is softmax1 (or softmax) of zero scores under the causal
    mask, 1 / (i + 2) (or 1 / (i + 1)) where j <= i, correctly rounded, and 0 above: the
    pattern of zero q and k heads, masked, so computed (Exp(0) = 1, sums of ones exact, the
    division rounded once: the same floats)."""
    nodes = []
    for node in g.nodes:
        P = g.consts.get(node.input[0]) if node.op_type == "MatMul" else None
        vd = g.shape(node.input[1]) if P is not None else None
        dims = list(P.dims) if P is not None else []
        while len(dims) > 3 and dims[0] == 1:
            dims.pop(0)
        if P is None or vd is None or len(dims) != 3 or dims[1] != dims[2] or \
                P.dtype not in FLOATS or len(vd) != 3 or vd[0] != dims[0]:
            nodes.append(node)
            continue
        H, T, _ = dims
        kind = next((k for k, extra in (("softmax1", 2), ("softmax", 1)) if all(
            P.values[(h * T + i) * T + j] == (_round(P.dtype, 1 / (i + extra)) if j <= i
                                              else 0.0)
            for h in range(H) for i in range(T) for j in range(T))), None)
        if kind is None:
            nodes.append(node)
            continue
        stem, d = node.input[0], vd[-1]
        q = _const_node(g, f"{stem}.q", P.dtype, (H, T, d), [0.0] * (H * T * d))
        kt = _const_node(g, f"{stem}.kT", P.dtype, (H, d, T), [0.0] * (H * T * d))
        mask = _const_node(g, f"{stem}.mask", P.dtype, (T, T),
                           [0.0 if j <= i else -math.inf for i in range(T) for j in range(T)])
        axes = _const_node(g, f"{stem}.axes", DataType.INT64, (1,), (-1,))
        one = _const_node(g, f"{stem}.one", P.dtype, (), (1.0,))
        s, m, e, total, sink, p = (g.fresh(f"{stem}.{x}") for x in
                                   ("scores", "masked", "exp", "sum", "sink", "pattern"))
        for v in (s, m, e, p):
            g.shapes[v] = (H, T, T)
        g.shapes[total] = g.shapes[sink] = (H, T, 1)
        made = [Node((q, kt), (s,), "MatMul", s), Node((s, mask), (m,), "Add", m)]
        if kind == "softmax":
            made.append(Node((m,), (p,), "Softmax", p,
                             (Attribute("axis", AttributeType.INT, -1),)))
        else:
            made += [Node((m,), (e,), "Exp", e), Node((e, axes), (total,), "ReduceSum", total),
                     Node((total, one), (sink,), "Add", sink),
                     Node((e, sink), (p,), "Div", p)]
        nodes += made + [replace(node, input=(p, node.input[1]))]
    g.nodes = nodes


def _constant_heads(g):
    """q (or k^T) a constant the same at every position (alexlitz-36's ``q = ones``, q and k
    of zeros): the heads of x @ 0 + b, b that row, each lane 0 x + b = b (unless x is
    infinite)."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        if node.op_type != "MatMul" or not any(x in g.consts for x in node.input):
            nodes.append(node)
            continue
        x = _attention_input(g, producer, node)
        dims = g.shape(x) if x is not None else None
        rows = [_row_of(g.consts[v], k == 1) if v in g.consts else None
                for k, v in enumerate(node.input)]
        if dims is None or len(dims) != 2 or all(r is None for r in rows) or \
                any(r is None and v in g.consts for r, v in zip(rows, node.input)):
            nodes.append(node)
            continue
        T, W = dims
        dtype = _types(g)[x]
        inputs = list(node.input)
        for k, r in enumerate(rows):
            if r is None:
                continue
            H, d, row = r
            stem = f"{node.output[0]}.{'qk'[k]}"
            Wz = _const_node(g, f"{stem}.W", dtype, (W, H * d), [0.0] * (W * H * d))
            shape = _const_node(g, f"{stem}.shape", DataType.INT64, (3,), (T, H, d))
            made, split, heads = g.fresh(stem), g.fresh(f"{stem}.split"), g.fresh(f"{stem}.heads")
            nodes.append(Node((x, Wz), (made,), "MatMul", made))
            if any(row):
                b = _const_node(g, f"{stem}.b", dtype, (H * d,), row)
                biased = g.fresh(f"{stem}.biased")
                nodes.append(Node((made, b), (biased,), "Add", biased))
                made = biased
            nodes += [Node((made, shape), (split,), "Reshape", split),
                      Node((split,), (heads,), "Transpose", heads,
                           (Attribute("perm", AttributeType.INTS, (1, 0, 2)),))]
            g.shapes[heads] = (H, T, d)
            if k == 1:
                kt = g.fresh(f"{stem}.transposed")
                nodes.append(Node((heads,), (kt,), "Transpose", kt,
                                  (Attribute("perm", AttributeType.INTS, (0, 2, 1)),)))
                heads = kt
            inputs[k] = heads
        nodes.append(replace(node, input=tuple(inputs)))
    g.nodes = _pruned(g, nodes)


def _two_sided_hinges(g):
    """(Relu(x @ W) + Relu(x @ -W)) * k, k a constant (a V-shaped FFN, |x W| k): a gated
    FFN of two units per column, gates W and -W, up 0 x + k, down the sum of the pair. Of
    Relu(a) and Relu(-a) one at most is not 0, so (r1 + r2) k is r1 k + r2 k, the same
    float."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        pair = producer.get(node.input[0]) if node.op_type == "Mul" else None
        k = g.consts.get(node.input[1]) if pair is not None else None
        hinges = [producer.get(v) for v in pair.input] if pair is not None and \
            pair.op_type == "Add" else []
        maps = [producer.get(h.input[0]) if h is not None and h.op_type == "Relu" else None
                for h in hinges]
        Ws = [g.consts.get(m.input[1]) if m is not None and m.op_type == "MatMul" else None
              for m in maps]
        if k is None or math.prod(k.dims) != 1 or len(Ws) != 2 or None in Ws or \
                maps[0].input[0] != maps[1].input[0] or Ws[0].dims != Ws[1].dims or \
                len(Ws[0].dims) != 2 or any(a != -b for a, b in zip(Ws[0].values,
                                                                    Ws[1].values)):
            nodes.append(node)
            continue
        x, (W, n), A = maps[0].input[0], Ws[0].dims, Ws[0]
        stem, dtype = node.output[0], A.dtype
        Wg = _const_node(g, f"{stem}.W_gate", dtype, (W, 2 * n),
                         [A.values[r * n + c // 2] * (1 if c % 2 == 0 else -1)
                          for r in range(W) for c in range(2 * n)])
        Wz = _const_node(g, f"{stem}.W_in", dtype, (W, 2 * n), [0.0] * (W * 2 * n))
        b = _const_node(g, f"{stem}.b_in", dtype, (2 * n,), [k.values[0]] * (2 * n))
        D = _const_node(g, f"{stem}.W_out", dtype, (2 * n, n),
                        [1.0 if r // 2 == c else 0.0 for r in range(2 * n) for c in range(n)])
        gate, act, up0, up, post = (g.fresh(f"{stem}.{s}") for s in
                                    ("gate", "act", "up0", "up", "post"))
        nodes += [Node((x, Wg), (gate,), "MatMul", gate), Node((gate,), (act,), "Relu", act),
                  Node((x, Wz), (up0,), "MatMul", up0), Node((up0, b), (up,), "Add", up),
                  Node((act, up), (post,), "Mul", post),
                  Node((post, D), node.output, "MatMul", node.name)]
    g.nodes = _pruned(g, nodes)


def _narrowed_stream(g):
    """x[..., a:b] + h @ D read only by Gathers of its last axis (``pad_to(x, n) + out``
    before an argmin of those lanes): the Gathers, lanes shifted by a, of x + h @ D', D' the
    columns of D at a .. b - 1 of x's width, zeros elsewhere (lanes the Gathers do not
    read gain 0 h)."""
    producer, readers = g.producers(), g.readers()
    nodes, moved = [], {}
    for node in g.nodes:
        node = moved.get(id(node), node)
        parts = node.input if node.op_type == "Add" and len(node.input) == 2 else ()
        cut = producer.get(parts[0]) if parts else None
        proj = producer.get(parts[1]) if parts else None
        bounds = _slice_bounds(g, cut) if cut is not None and cut.op_type == "Slice" else None
        D = g.consts.get(proj.input[1]) if proj is not None and \
            proj.op_type == "MatMul" else None
        after = readers.get(node.output[0], [])
        dims = g.shape(cut.input[0]) if bounds is not None else None
        if bounds is None or D is None or dims is None or len(D.dims) != 2 or \
                D.dims[1] != bounds[1] - bounds[0] or not after or any(
                    r.op_type != "Gather" or r.input[0] != node.output[0] or
                    r.input[1] not in g.consts or
                    _attrs(r).get("axis", 0) % len(dims) != len(dims) - 1 for r in after):
            nodes.append(node)
            continue
        a, w, (n, m) = bounds[0], dims[-1], D.dims
        Dw = _const_node(g, f"{node.output[0]}.D", D.dtype, (n, w),
                         [D.values[r * m + c - a] if a <= c < a + m else 0.0
                          for r in range(n) for c in range(w)])
        wide, out = g.fresh(f"{node.output[0]}.out"), g.fresh(f"{node.output[0]}.wide")
        g.shapes[wide] = g.shapes[out] = tuple(dims)
        nodes += [Node((proj.input[0], Dw), (wide,), "MatMul", wide),
                  Node((cut.input[0], wide), (out,), "Add", out)]
        for r in after:
            idx = g.consts[r.input[1]]
            shifted = _const_node(g, f"{r.input[1]}.shifted", idx.dtype, idx.dims,
                                  [int(i) % m + a for i in idx.values])
            moved[id(r)] = replace(r, input=(out, shifted))
    g.nodes = _pruned(g, nodes)


def _lane_products(g):
    """y * c, y of one lane, c a constant vector of n > 1 (one lane times a row: alexlitz-36's
    up projection, cosminscn's parabolic head): y @ c as a row; x[..., k:k+1] * c is x @ W,
    W's row k c and its other rows 0. Each column one product."""
    producer = g.producers()
    nodes = []
    for node in g.nodes:
        lane = c = None
        if node.op_type == "Mul" and len(node.input) == 2:
            lane, c = node.input if node.input[1] in g.consts else node.input[::-1]
            c = g.consts.get(c)
        dims, out = g.shape(lane) if c is not None else None, g.shape(node.output[0])
        n = c.dims[-1] if c is not None and c.dims else 0
        if c is None or dims is None or not dims or dims[-1] != 1 or lane in g.consts or \
                c.dtype not in FLOATS or n < 2 or any(d != 1 for d in c.dims[:-1]) or \
                len(c.dims) > len(dims) or out != tuple(dims[:-1]) + (n,):
            nodes.append(node)
            continue
        cut = producer.get(lane)
        bounds = _slice_bounds(g, cut) if cut is not None and cut.op_type == "Slice" else None
        if bounds is not None:
            width, k = g.shape(cut.input[0])[-1], bounds[0]
            W = _const_node(g, f"{node.output[0]}.W", c.dtype, (width, n),
                            [c.values[j] if r == k else 0.0 for r in range(width)
                             for j in range(n)])
            nodes.append(Node((cut.input[0], W), node.output, "MatMul", node.name))
            continue
        W = _const_node(g, f"{node.output[0]}.W", c.dtype, (1, n), c.values)
        nodes.append(Node((lane, W), node.output, "MatMul", node.name))
    g.nodes = _pruned(g, nodes)


def _gathered_products(g):
    """Gather(C, tokens) @ W, C and W constants, the lookup read by nothing else (a token's
    value times a direction: cosminscn's ``wte``): Gather(C @ W, tokens), the table as the
    graph computes each row (each product and each partial sum rounded once, in index
    order)."""
    producer, readers = g.producers(), g.readers()
    token_ids = {v.name for v in g.inputs}
    nodes = []
    for node in g.nodes:
        looked = producer.get(node.input[0]) if node.op_type == "MatMul" else None
        C = g.consts.get(looked.input[0]) if looked is not None and \
            looked.op_type == "Gather" and looked.input[1] in token_ids and \
            not _attrs(looked).get("axis", 0) and \
            len(readers.get(looked.output[0], [])) == 1 else None  # else the stream itself
        W = g.consts.get(node.input[1]) if C is not None else None
        if W is None or len(C.dims) != 2 or len(W.dims) != 2 or C.dims[1] != W.dims[0] or \
                C.dtype != W.dtype or C.dtype not in FLOATS:
            nodes.append(node)
            continue
        (V, k), n = C.dims, W.dims[1]
        table = []
        for t in range(V):
            for j in range(n):
                total = None
                for i in range(k):
                    term = _round(C.dtype, C.values[t * k + i] * W.values[i * n + j])
                    total = term if total is None else _round(C.dtype, total + term)
                table.append(total)
        E = _const_node(g, f"{node.output[0]}.table", C.dtype, (V, n), table)
        nodes.append(Node((E, looked.input[1]), node.output, "Gather", node.name))
    g.nodes = _pruned(g, nodes)


def _copied_factors(g):
    """x @ A @ B split into heads, A copying lanes (each column one 1, their rows
    increasing: cosminscn's v of one lane made two): x @ (A B), the same products summed in
    the same order (each lane copied exactly)."""
    producer, readers = g.producers(), g.readers()
    nodes = []
    for node in g.nodes:
        inner = producer.get(node.input[0]) if node.op_type == "MatMul" else None
        A = g.consts.get(inner.input[1]) if inner is not None and \
            inner.op_type == "MatMul" else None
        B = g.consts.get(node.input[1]) if A is not None else None
        if B is None or len(A.dims) != 2 or len(B.dims) != 2 or A.dims[1] != B.dims[0] or \
                len(readers.get(inner.output[0], [])) != 1 or \
                not all(r.op_type == "Reshape" for r in readers.get(node.output[0], [])):
            nodes.append(node)
            continue
        (rows, k), n = A.dims, B.dims[1]
        picked = []
        for i in range(k):
            column = [(r, A.values[r * k + i]) for r in range(rows) if A.values[r * k + i]]
            picked.append(column[0][0] if len(column) == 1 and column[0][1] == 1 else None)
        if None in picked or picked != sorted(set(picked)):
            nodes.append(node)
            continue
        values = [0.0] * (rows * n)
        for i, r in enumerate(picked):
            values[r * n:(r + 1) * n] = B.values[i * n:(i + 1) * n]
        W = _const_node(g, f"{node.input[1]}.copied", B.dtype, (rows, n), values)
        nodes.append(replace(node, input=(inner.input[0], W)))
    g.nodes = _pruned(g, nodes)


def _last_position(g):
    """The readout of the last position only (``lm_head(x[:, [-1], :])``): a Gather of
    position T - 1 whose every reader up to the output works row by row (MatMul by a
    constant, operations with constants of one row) is dropped: the logits of every
    position, the last of them the graph's."""
    readers = g.readers()
    outputs = {v.name for v in g.outputs}
    row_wise = ("MatMul", "Mul", "Add", "Sub", "Div", "Neg", "Relu", "Gather", "Slice")
    for node in g.nodes:
        idx = g.consts.get(node.input[1]) if node.op_type == "Gather" and \
            len(node.input) == 2 else None
        dims = g.shape(node.input[0])
        if idx is None or dims is None or len(dims) != 2 or _attrs(node).get("axis", 0) != 0 \
                or _ints(idx) not in ([-1], [dims[0] - 1]) or len(idx.dims) != 1:
            continue
        seen, todo, ok = set(), [node.output[0]], True
        while todo and ok:
            value = todo.pop()
            for r in readers.get(value, []):
                others = [g.consts.get(x) for x in r.input if x != value]
                if r.op_type == "MatMul":  # x @ W: each row its own
                    ok = r.input[0] == value and others[0] is not None
                elif r.op_type == "Slice":  # of the last axis
                    ok = r.input[0] == value and _slice_bounds(g, r) is not None
                elif r.op_type == "Gather":  # of lanes
                    ok = r.input[0] == value and others[0] is not None and \
                        _attrs(r).get("axis", 0) != 0
                else:
                    ok = r.op_type in row_wise and all(
                        c is not None and (len(c.dims) < 2 or c.dims[0] == 1) for c in others)
                if not ok:
                    break
                if r.output[0] not in seen:
                    seen.add(r.output[0])
                    todo.append(r.output[0])
        if not ok or not (seen & outputs):
            continue
        nodes = _renamed([n for n in g.nodes if n is not node], {node.output[0]: node.input[0]})
        for value in seen:
            shape = g.shapes.get(value)
            if shape and shape[0] == 1:
                g.shapes[value] = (dims[0],) + tuple(shape[1:])
        g.outputs = [replace(v, shape=(dims[0],) + tuple(v.shape[1:])) if v.name in seen and
                     v.shape else v for v in g.outputs]
        g.nodes = nodes
        return


def _hand_written(g):
    """The forms of a forward written with torch operations on lanes (alexlitz-36's)."""
    for step in (_gathered_products, _last_position, _copied_factors, _sliced_concats, _widened_writes, _reduced_products,
                 _unprojected_heads,
                 _negated_alibi, _constant_patterns, _constant_heads, _two_sided_hinges,
                 _narrowed_stream):
        step(g)
