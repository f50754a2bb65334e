"""A model as an ONNX graph for a fixed sequence length T: one call maps T token ids to the
logits of every position (docs/onnx.md).

Every operation of ``forward`` becomes standard operators in the order of its formula, over
dense tensors: the stream is [T, width] (``hook_embed``, ``blocks.i.hook_resid_mid``, ...), a
block's heads [heads, T, head_dim], its scores and pattern [heads, T, T]:

    embed       Gather(W_E, tokens) [+ Slice(W_pos) or Slice(W_pos.A) @ W_pos.B]
    norm        x / sqrt(ReduceSum(x x) / n + eps) as Div(1, Sqrt) and Mul (rsqrt) or Div, the
                mean as Div by n or Mul by 1/n, then Mul by w
    attention   q, k, v = x @ W + b (factored: (x @ A) @ B); Reshape and Transpose to heads;
                q/k norms; rotary positions (Cos and Sin of positions * freqs, each lane pair
                turned by Mul, Sub, Add, joined by Concat); grouped key/value heads by Gather;
                scores = q @ k^T, * or / scale, + Slice(bias), - slopes * (i - j), + the causal
                mask (0 on and below the diagonal, the model's mask value above);
                Softmax, or softmax1 as Exp / (Add(1, ReduceSum(Exp))); z = pattern @ v, or
                normalised after the sum: (Exp(s - ReduceMax s) @ v) * (1 / ReduceSum Exp)
    FFN         act(x @ W_gate + b_gate) * (x @ W_in + b_in), or act(x @ W_in + b_in); relu
                Relu, identity Identity, silu x / (1 + Exp(Neg x)), gelu
                x (1 + Erf(x / sqrt 2)) / 2; a wider output stream by Concat with zeros
    readout     Neg(Gather(x, slots)); x @ W_U + b_U; or (Slice(x) * scale) @ W_E^T + b_U

Initializers and node outputs carry the TransformerLens names (``blocks.0.attn.W_K``,
``blocks.0.hook_resid_mid``); a weight's doc_string names its rows and columns. Floats are
``values.stored`` of the exact constants; where a float is not its constant,
``metadata_props`` holds ``tinyadder.exact.<initializer>``: the constant's text (a scalar) or
a JSON object of {flat row-major index: text}. ``tinyadder.model`` holds the model file.
"""

from fractions import Fraction
import json

from .. import modelfile
from ..addition import sequence_length
from ..constants import is_zero, sqrt, text
from ..weights import Factored
from .builder import GraphBuilder
from .codec import serialize
from .limits import LIMITS
from .messages import DataType, float32
from .values import is_stored_exactly, stored
from .wire import OnnxError

OPSET = 21
IR_VERSION = 10
DTYPES = {"float64": DataType.DOUBLE, "float32": DataType.FLOAT}
MAX_LENGTH = 1024  # positions: a [T, T] mask of doubles is 8 MiB
SOFTMAX1 = ("Exp/ReduceSum/Add(1)/Div: pattern = Exp(s) / (1 + ReduceSum(Exp(s))), the sink's "
            "logit 0 as the 1")
FLOATS = ("float initializers: rationals, exp(r) and ln(r) correctly rounded; an expression "
          "evaluated as the model format's float replay does, operation by operation; "
          "tinyadder.exact.<initializer> holds each constant that is not its float")


def default_length(model):
    """T: the tokens a whole addition feeds (its prompt and every written token but the
    last), for a model with a prompt."""
    if model.prompt is None:
        raise OnnxError(f"the model {model.name} has no prompt: give the sequence length")
    return sequence_length(model) - 1


def export(model, length=None, dtype="float64"):
    """The ONNX ``messages.Model`` of ``model`` for ``length`` positions (default
    ``default_length``), its floats of ``dtype`` ('float64' or 'float32')."""
    if dtype not in DTYPES:
        raise OnnxError(f"dtype {dtype!r}: use float64 or float32")
    if model.mix is not None:  # the graph would leave it out: another model, not this one
        raise OnnxError(f"the model {model.name} mixes two blocks' outputs (x = h + g (x - h), "
                        f"'mix' in its file), which the ONNX export does not write")
    T = default_length(model) if length is None else length
    if isinstance(T, bool) or not isinstance(T, int) or not 1 <= T <= MAX_LENGTH:
        raise OnnxError(f"sequence length {T!r}: an integer from 1 to {MAX_LENGTH}")
    graph = _Graph(model, T, DTYPES[dtype])
    onnx_model = graph.finish()
    size = len(serialize(onnx_model))
    if size > LIMITS.file_bytes:
        raise OnnxError(f"the file would be {size:,} bytes, over the reader's limit of "
                        f"{LIMITS.file_bytes:,} (limit file_bytes): give a shorter length")
    return onnx_model


def _names(names):
    shown = ", ".join(map(str, names))
    return shown if len(shown) <= 300 else shown[:300] + ", ..."


class _Graph:
    """The graph of one model, built operation by operation (``_Graph.finish``)."""

    def __init__(self, model, T, dtype):
        self.model, self.T, self.dtype = model, T, dtype
        self.b = GraphBuilder(model.name)
        self.exact = {}
        self.shared = set()

    # ---- initializers ----------------------------------------------------------------

    def floats(self, name, values, dims, doc=""):
        """A float initializer of exact constants (row-major), recording the inexact ones."""
        data = [stored(v, self.dtype) for v in values]
        inexact = {i: text(v) for i, (v, x) in enumerate(zip(values, data))
                   if not is_stored_exactly(v, x)}
        if len(data) > LIMITS.elements:
            raise OnnxError(f"{name} would have {len(data):,} values, over the reader's "
                            f"limit of {LIMITS.elements:,} (limit elements)")
        if inexact:
            self.exact[name] = (inexact[0] if not dims else
                                json.dumps({str(i): t for i, t in inexact.items()}))
        self.b.initializer(name, data, tuple(dims), self.dtype, raw=True, doc_string=doc)
        return name

    def ints(self, name, values, dims=None):
        self.b.initializer(name, list(values), (len(values),) if dims is None else dims,
                           DataType.INT64, raw=True)
        return name

    def constant(self, name, value):
        """A scalar shared by the whole graph (1, 2, sqrt 2, the last axis)."""
        if name not in self.shared:
            self.shared.add(name)
            if name == "axes.last":
                self.ints(name, [-1])
            else:
                self.floats(name, [value], ())
        return name

    def table(self, name, table, rows, cols, what):
        """A weight table as a [rows, cols] initializer (absent entries are 0)."""
        values = [table.get(r, {}).get(c, 0) for r in rows for c in cols]
        return self.floats(name, values, (len(rows), len(cols)),
                           f"{what}; rows: {_names(rows)}; columns: {_names(cols)}")

    def vector(self, name, bias, cols):
        return self.floats(name, [bias.get(c, 0) for c in cols], (len(cols),),
                           f"columns: {_names(cols)}")

    def op(self, op_type, inputs, out, **attributes):
        """A node named after its output; returns the output."""
        self.b.node(op_type, list(inputs), [out], out, **attributes)
        return out

    def slice(self, x, name, ends, axes):
        """x[0:end] along each axis (a no-op is left out)."""
        self.ints(f"{name}.starts", [0] * len(ends))
        self.ints(f"{name}.ends", ends)
        self.ints(f"{name}.axes", axes)
        return self.op("Slice", [x, f"{name}.starts", f"{name}.ends", f"{name}.axes"], name)

    # ---- operations --------------------------------------------------------------------

    def affine(self, x, name, table, bias, rows, cols, out):
        """x @ W + b (W = A B: (x @ A) @ B); no Add without a bias."""
        y = x
        if isinstance(table, Factored):
            self.table(f"{name}.A", table.A, rows, table.inner, f"{name} = A B, A")
            y = self.op("MatMul", [x, f"{name}.A"], f"{out}.inner")
            self.table(f"{name}.B", table.B, table.inner, cols, f"{name} = A B, B")
            weight = f"{name}.B"
        else:
            weight = self.table(name, table, rows, cols, name)
        if not any(not is_zero(v) for v in bias.values()):
            return self.op("MatMul", [y, weight], out)
        product = self.op("MatMul", [y, weight], f"{out}.matmul")
        return self.op("Add", [product, self.vector(_bias_name(name), bias, cols)], out)

    def norm(self, x, norm, name, cols):
        """RMSNorm over the last axis: w x / sqrt(mean(x^2) + eps); LayerNorm
        (``layer_norm``): w (x - m) / sqrt(mean((x - m)^2) + eps) + b."""
        if norm.kind == "layer":
            return self.layer_norm(x, norm, name, cols)
        return self.normalised(x, x, norm, name, cols, f"{name}.hook_normalized")

    def mean(self, x, norm, name, n, what):
        """ReduceSum over the last axis, then Div by n or Mul by 1/n (the model's ``mean``;
        one constant for the norm's every mean)."""
        total = self.op("ReduceSum", [x, self.constant("axes.last", None)],
                        f"{name}.{what}_sum", keepdims=1)
        op, count, value = (("Div", f"{name}.n", n) if norm.mean == "divide" else
                            ("Mul", f"{name}.inv_n", Fraction(1, n)))
        if count not in self.shared:
            self.shared.add(count)
            self.floats(count, [value], ())
        return self.op(op, [total, count], f"{name}.{what}")

    def normalised(self, x, centred, norm, name, cols, out):
        """w c / sqrt(mean(c^2) + eps), c = ``centred``: Mul(c, c), the mean, Add eps, Sqrt,
        then Mul by Div(1, root) or Div by the root, then Mul by w (absent: no Mul)."""
        squares = self.op("Mul", [centred, centred], f"{name}.squares")
        mean = self.mean(squares, norm, name, len(cols), "mean")
        shifted = self.op("Add", [mean, self.floats(f"{name}.eps", [norm.eps], ())],
                          f"{name}.mean_eps")
        root = self.op("Sqrt", [shifted], f"{name}.root")
        y = out if not norm.w else f"{name}.unweighted"
        if norm.apply == "rsqrt":
            inverse = self.op("Div", [self.constant("one", 1), root], f"{name}.rsqrt")
            self.op("Mul", [centred, inverse], y)
        else:
            self.op("Div", [centred, root], y)
        if norm.w:
            self.op("Mul", [y, self.vector(f"{name}.w", norm.w, cols)], out)
        return out

    def layer_norm(self, x, norm, name, cols):
        """LayerNorm over the last axis. One LayerNormalization node (Scale w, or ones; B b)
        where the norm is that node's: its eps's float a float32 (a float attribute; the
        exact constant is the model file's, in the metadata) and its order
        torch's kernel's, x - m times 1 / root (``apply`` 'rsqrt', ``mean`` 'divide'); its
        moments in the graph's type (stash_type). Otherwise the decomposition:
        c = x - ReduceSum(x) / n, ``normalised(c)``, then Add b."""
        out = f"{name}.hook_normalized"
        eps = stored(norm.eps, self.dtype)
        if norm.apply == "rsqrt" and norm.mean == "divide" and float32(eps) == eps:
            w = self.vector(f"{name}.w", norm.w or {c: 1 for c in cols}, cols)
            inputs = [x, w] + ([self.vector(f"{name}.b", norm.b, cols)] if norm.b else [])
            stash = 1 if self.dtype == DataType.FLOAT else 11
            return self.op("LayerNormalization", inputs, out, axis=-1, epsilon=eps,
                           stash_type=stash)
        centre = self.mean(x, norm, name, len(cols), "centre")
        centred = self.op("Sub", [x, centre], f"{name}.centred")
        y = out if not norm.b else f"{name}.scaled"
        self.normalised(x, centred, norm, name, cols, y)
        if norm.b:
            self.op("Add", [y, self.vector(f"{name}.b", norm.b, cols)], out)
        return out

    def maybe_norm(self, x, norm, name, cols):
        return x if norm is None else self.norm(x, norm, name, cols)

    def heads(self, x, count, d, name):
        """[T, count * d] -> [count, T, d]."""
        shape = self.ints(f"{name}.shape", [self.T, count, d])
        split = self.op("Reshape", [x, shape], f"{name}.split")
        return self.op("Transpose", [split], name, perm=[1, 0, 2])

    def rope(self, x, freqs, d, angle, name):
        """Lane pairs (c, c + d/2), c < len(freqs), turned by the angle p f_c."""
        n, half = len(freqs), d // 2
        cos, sin = angle

        def part(start, end, what):
            return self.slice_lanes(x, start, end, f"{name}.{what}")

        a, b = part(0, n, "first"), part(half, half + n, "second")
        turned_a = self.op("Sub", [self.op("Mul", [a, cos], f"{name}.first_cos"),
                                   self.op("Mul", [b, sin], f"{name}.second_sin")],
                           f"{name}.first_turned")
        turned_b = self.op("Add", [self.op("Mul", [a, sin], f"{name}.first_sin"),
                                   self.op("Mul", [b, cos], f"{name}.second_cos")],
                           f"{name}.second_turned")
        pieces = [turned_a]
        if n < half:
            pieces.append(part(n, half, "first_rest"))
        pieces.append(turned_b)
        if n < half:
            pieces.append(part(half + n, d, "second_rest"))
        return self.op("Concat", pieces, name, axis=-1)

    def slice_lanes(self, x, start, end, name):
        self.ints(f"{name}.starts", [start])
        self.ints(f"{name}.ends", [end])
        return self.op("Slice", [x, f"{name}.starts", f"{name}.ends",
                                 self.constant("axes.last", None)], name)

    def angle(self, freqs, name):
        """(Cos, Sin) of positions * freqs: [T, len(freqs)]."""
        if "positions" not in self.shared:
            self.shared.add("positions")
            self.floats("positions", list(range(self.T)), (self.T, 1), "p = 0 .. T-1")
        self.floats(f"{name}.rope_freqs", list(freqs), (len(freqs),), "one per lane pair")
        turn = self.op("Mul", ["positions", f"{name}.rope_freqs"], f"{name}.rope_angle")
        return (self.op("Cos", [turn], f"{name}.rope_cos"),
                self.op("Sin", [turn], f"{name}.rope_sin"))

    def attention(self, i, attn, x, width):
        m, T, a = self.model, self.T, f"blocks.{i}.attn"
        inp, d = m.slots[:width], attn.head_dim
        H, G = len(attn.heads), len(attn.groups)
        q_lanes, kv_lanes = attn.lanes(attn.heads), attn.lanes(attn.groups)
        q = self.affine(x, f"{a}.W_Q", attn.W_Q, attn.b_Q, inp, q_lanes, f"{a}.hook_q")
        k = self.affine(x, f"{a}.W_K", attn.W_K, attn.b_K, inp, kv_lanes, f"{a}.hook_k")
        v = self.affine(x, f"{a}.W_V", attn.W_V, attn.b_V, inp, kv_lanes, f"{a}.hook_v")
        q, k, v = (self.heads(q, H, d, f"{a}.q_heads"), self.heads(k, G, d, f"{a}.k_heads"),
                   self.heads(v, G, d, f"{a}.v_heads"))
        components = tuple(str(c) for c in range(d))
        q = self.maybe_norm(q, attn.q_norm, f"{a}.q_norm", components)
        k = self.maybe_norm(k, attn.k_norm, f"{a}.k_norm", components)
        if attn.rope_freqs:
            angle = self.angle(attn.rope_freqs, a)
            q = self.rope(q, attn.rope_freqs, d, angle, f"{a}.hook_rot_q")
            k = self.rope(k, attn.rope_freqs, d, angle, f"{a}.hook_rot_k")
        if G != H:
            shared = self.ints(f"{a}.kv_of", [attn.kv_of(h) for h in range(H)])
            k = self.op("Gather", [k, shared], f"{a}.k_shared", axis=0)
            v = self.op("Gather", [v, shared], f"{a}.v_shared", axis=0)
        keys = self.op("Transpose", [k], f"{a}.k_transposed", perm=[0, 2, 1])
        s = self.op("MatMul", [q, keys], f"{a}.qk")
        if attn.scale != 1:
            kind = "Div" if attn.scale_op == "divide" else "Mul"
            s = self.op(kind, [s, self.floats(f"{a}.scale", [attn.scale], ())], f"{a}.scaled")
        if attn.bias:
            s = self.op("Add", [s, self.bias(attn, a)], f"{a}.biased")
        if attn.slopes:
            self.floats(f"{a}.slopes", [attn.slopes.get(h, 0) for h in attn.heads],
                        (H, 1, 1), f"ALiBi slopes; heads: {_names(attn.heads)}")
            if "distance" not in self.shared:
                self.shared.add("distance")
                self.floats("distance", [r - c for r in range(T) for c in range(T)], (T, T),
                            "i - j, query position i, key position j")
            tilt = self.op("Mul", [f"{a}.slopes", "distance"], f"{a}.alibi")
            s = self.op("Sub", [s, tilt], f"{a}.tilted")
        mask = [0 if c <= r else attn.mask for r in range(T) for c in range(T)]
        self.floats(f"{a}.mask", mask, (T, T), "causal: 0 where j <= i, the mask above")
        s = self.op("Add", [s, f"{a}.mask"], f"{a}.hook_attn_scores")
        pattern = f"{a}.hook_pattern"
        if attn.normalise == "after":
            z = self.normalised_after(s, v, a)
        elif attn.softmax == "softmax":
            self.op("Softmax", [s], pattern, axis=-1)
        else:
            e = self.op("Exp", [s], f"{a}.exp")
            total = self.op("ReduceSum", [e, self.constant("axes.last", None)],
                            f"{a}.exp_sum", keepdims=1)
            sink = self.op("Add", [self.constant("one", 1), total], f"{a}.sink")
            self.op("Div", [e, sink], pattern)
        if attn.normalise != "after":
            z = self.op("MatMul", [pattern, v], f"{a}.z_heads")
        z = self.op("Transpose", [z], f"{a}.z_positions", perm=[1, 0, 2])
        z = self.op("Reshape", [z, self.ints(f"{a}.z_shape", [T, H * d])], f"{a}.hook_z")
        return self.affine(z, f"{a}.W_O", attn.W_O, attn.b_O, q_lanes, inp,
                           f"blocks.{i}.hook_attn_out")

    def normalised_after(self, s, v, a):
        """z = (e @ v) * (1 / sum e), e = Exp(s - ReduceMax(s)): a fused kernel's order."""
        last = self.constant("axes.last", None)
        top = self.op("ReduceMax", [s, last], f"{a}.max", keepdims=1)
        e = self.op("Exp", [self.op("Sub", [s, top], f"{a}.shifted")], f"{a}.exp")
        total = self.op("ReduceSum", [e, last], f"{a}.exp_sum", keepdims=1)
        inverse = self.op("Div", [self.constant("one", 1), total], f"{a}.inv_sum")
        weighted = self.op("MatMul", [e, v], f"{a}.weighted")
        return self.op("Mul", [weighted, inverse], f"{a}.z_heads")

    def bias(self, attn, a):
        """The fixed attention bias [heads, P, P] (P covers T and every listed position),
        sliced to [heads, T, T]; entries above the diagonal are 0 (the mask hides them)."""
        listed = [p for rows in attn.bias.values() for i, row in rows.items()
                  for p in (i, *row)]
        P = max([self.T] + [p + 1 for p in listed])
        values = [attn.bias.get(h, {}).get(r, {}).get(c, attn.bias_default) if c <= r else 0
                  for h in attn.heads for r in range(P) for c in range(P)]
        name = self.floats(f"{a}.bias", values, (len(attn.heads), P, P),
                           f"heads: {_names(attn.heads)}; [query position][key position]")
        if P == self.T:
            return name
        return self.slice(name, f"{a}.bias_T", [self.T, self.T], [1, 2])

    def activation(self, act, x, out):
        if act == "relu":
            return self.op("Relu", [x], out)
        if act == "identity":
            return self.op("Identity", [x], out)
        one = self.constant("one", 1)
        if act == "silu":
            e = self.op("Exp", [self.op("Neg", [x], f"{out}.neg")], f"{out}.exp")
            return self.op("Div", [x, self.op("Add", [one, e], f"{out}.denominator")], out)
        scaled = self.op("Div", [x, self.constant("sqrt2", sqrt(2))], f"{out}.scaled")
        erf = self.op("Add", [one, self.op("Erf", [scaled], f"{out}.erf")], f"{out}.erf1")
        doubled = self.op("Mul", [x, erf], f"{out}.doubled")
        return self.op("Div", [doubled, self.constant("two", 2)], out)

    def mlp(self, i, mlp, x, block):
        slots, p = self.model.slots, f"blocks.{i}.mlp"
        inp, wide, units = slots[:block.width_in], slots[:block.width_out], mlp.units
        if mlp.gated:
            gate = self.affine(x, f"{p}.W_gate", mlp.W_gate, mlp.b_gate, inp, units,
                               f"{p}.hook_pre")
            up = self.affine(x, f"{p}.W_in", mlp.W_in, mlp.b_in, inp, units,
                             f"{p}.hook_pre_linear")
            post = self.op("Mul", [self.activation(mlp.act, gate, f"{p}.act"), up],
                           f"{p}.hook_post")
        else:
            pre = self.affine(x, f"{p}.W_in", mlp.W_in, mlp.b_in, inp, units, f"{p}.hook_pre")
            post = self.activation(mlp.act, pre, f"{p}.hook_post")
        return self.affine(post, f"{p}.W_out", mlp.W_out, mlp.b_out, units, wide,
                           f"blocks.{i}.hook_mlp_out")

    def embed(self):
        m, T = self.model, self.T
        embedded = m.slots[:m.width_embed]
        self.table("W_E", m.W_E, m.vocab, embedded, "W_E")
        x = self.op("Gather", ["W_E", "tokens"], "hook_embed", axis=0)
        if not m.W_pos:
            return x
        rows_of = m.W_pos.A if isinstance(m.W_pos, Factored) else m.W_pos
        P = max([T] + [p + 1 for p in rows_of])
        positions = tuple(range(P))
        if isinstance(m.W_pos, Factored):
            self.table("W_pos.A", m.W_pos.A, positions, m.W_pos.inner, "W_pos = A B, A")
            self.table("W_pos.B", m.W_pos.B, m.W_pos.inner, embedded, "W_pos = A B, B")
            rows = "W_pos.A" if P == T else self.slice("W_pos.A", "W_pos.A_T", [T], [0])
            pos = self.op("MatMul", [rows, "W_pos.B"], "hook_pos_embed")
        else:
            self.table("W_pos", m.W_pos, positions, embedded, "W_pos")
            pos = "W_pos" if P == T else self.slice("W_pos", "hook_pos_embed", [T], [0])
        return self.op("Add", [x, pos], "blocks.0.hook_resid_pre" if m.blocks else "embed")

    def readout(self, x):
        m, u = self.model, self.model.unembed
        final = m.slots[:m.width_out]
        if u.kind == "negative_error":
            self.ints("readout", [final.index(u.slots[t]) for t in u.tokens])
            picked = self.op("Gather", [x, "readout"], "unembed.errors", axis=1)
            return self.op("Neg", [picked], "logits")
        if u.kind == "linear":
            return self.affine(x, "unembed.W_U", u.W_U, u.b_U, final, u.tokens, "logits")
        embedded = m.slots[:m.width_embed]
        if len(final) > len(embedded):
            x = self.slice(x, "unembed.embedded", [len(embedded)], [1])
        if u.scale:
            x = self.op("Mul", [x, self.vector("unembed.scale", u.scale, embedded)],
                        "unembed.scaled")
        rows = "W_E"
        if u.tokens != m.vocab:
            ids = self.ints("unembed.tokens", [m.vocab.index(t) for t in u.tokens])
            rows = self.op("Gather", ["W_E", ids], "unembed.W_E_rows", axis=0)
        W = self.op("Transpose", [rows], "unembed.W_E_T", perm=[1, 0])
        if not any(not is_zero(v) for v in u.b_U.values()):
            return self.op("MatMul", [x, W], "logits")
        product = self.op("MatMul", [x, W], "logits.matmul")
        return self.op("Add", [product, self.vector("unembed.b_U", u.b_U, u.tokens)],
                       "logits")

    def finish(self):
        m, T, b = self.model, self.T, self.b
        b.input("tokens", DataType.INT64, (T,),
                f"token ids, 0 .. {len(m.vocab) - 1}: {_names(m.vocab)}")
        x = self.embed()
        for i, block in enumerate(m.blocks):
            attn_out = self.attention(
                i, block.attn, self.maybe_norm(x, block.ln1, f"blocks.{i}.ln1",
                                               m.slots[:block.width_in]), block.width_in)
            mid = self.op("Add", [x, attn_out], f"blocks.{i}.hook_resid_mid")
            normed = self.maybe_norm(mid, block.ln2, f"blocks.{i}.ln2",
                                     m.slots[:block.width_in])
            out = self.mlp(i, block.mlp, normed, block)
            if block.width_out > block.width_in:
                zeros = self.floats(f"blocks.{i}.new_slots",
                                    [0] * (T * (block.width_out - block.width_in)),
                                    (T, block.width_out - block.width_in),
                                    "the slots the FFN adds start at 0")
                mid = self.op("Concat", [mid, zeros], f"blocks.{i}.hook_resid_mid.widened",
                              axis=1)
            x = self.op("Add", [mid, out], f"blocks.{i}.hook_resid_post")
        x = self.maybe_norm(x, m.ln_final, "ln_final", m.slots[:m.width_out])
        self.readout(x)
        tokens = m.unembed.tokens
        b.output("logits", self.dtype, (T, len(tokens)),
                 f"logits of every position over the readout's tokens: {_names(tokens)}")
        metadata = {"tinyadder.model": modelfile.dump(m), "tinyadder.floats": FLOATS}
        if any(block.attn.softmax == "softmax1" for block in m.blocks):
            metadata["tinyadder.softmax1"] = SOFTMAX1
        metadata.update((f"tinyadder.exact.{k}", v) for k, v in self.exact.items())
        return b.model(OPSET, IR_VERSION, "tinyadder", metadata=metadata,
                       doc_string=f"{m.name}: the logits of every position of {T} tokens")


def _bias_name(weight):
    """blocks.0.attn.W_Q -> blocks.0.attn.b_Q; unembed.W_U -> unembed.b_U."""
    head, _, tail = weight.rpartition(".W_")
    return f"{head}.b_{tail}"
