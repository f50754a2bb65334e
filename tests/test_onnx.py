"""ONNX export and import of every model (docs/onnx.md): round trips to the same model, the
floats and exact constants of the file, its names, the real packages (``onnx.checker``,
onnxruntime's logits against tinyadder's float64 replay and certified enclosures on
AdderBoard's cases; skipped where the packages are absent), a graph written by onnx.helper,
every refusal in one line, and a fuzzer of graph-level mutations."""

from dataclasses import replace
from decimal import Decimal, localcontext
from fractions import Fraction
import io
import json
import math
import random
import re
from pathlib import Path
import time

import pytest

from tinyadder import add, build, run_with_cache
from tinyadder.addition import answer, answer_length, encode
from tinyadder.cases import COUNTEREXAMPLE, edge_cases, verify_cases
from tinyadder.cli import main
from tinyadder.cli.options import MESSAGE
from tinyadder.constants import Ln, exp_of, parse
from tinyadder.forward import forward
from tinyadder.generate import argmax, generate
from tinyadder.modelfile import dump
from tinyadder.models import names
from tinyadder.numbers import for_model, number_system
from tinyadder.onnx import (Attribute, AttributeType, DataType, Node, OnnxError, Tensor,
                            parse as parse_onnx, serialize)
from tinyadder.onnx.export import default_length, export
from tinyadder.onnx.read import loads
from tinyadder.onnx.values import nearest, stored
from tinyadder.plan import compile_model
from tinyadder.weights import MLP, Attention, Block, Factored, Model, Norm, Unembed

from test_modelfile import _rich_model

ROOT = Path(__file__).resolve().parent.parent
ADDER1 = ROOT / "tests" / "models" / "adder1.json"
MIXED = ("lokimorty-39",)  # a mixed block, which the export refuses (test below)
SHIPPED = [name for name in names() if name not in MIXED] + [str(ADDER1)]
TINYADDER = ("published", "repaired", "variant-28")  # TinyAdder-36's files
OTHERS = [name for name in names() if name not in TINYADDER]  # the board's entries


def _one_per_family(models):
    """The first model of each family (``about.family``; a model without one is its own)."""
    first = {}
    for name in models:
        first.setdefault(build(name).about.get("family", name), name)
    return list(first.values())


FAMILIES = _one_per_family(OTHERS)
# onnxruntime's float64 logits are within TOLERANCE times M of tinyadder's float64 replay and
# of the certified enclosures, M the largest finite |value| at any trace point of the replay of
# that sequence: the float error of a sum scales with its largest term, not with its result
# (TinyAdder-36 carries values near 16 e^40 = 3.8e18 through its attention, while its last
# logits are near 1e8). Measured: at most 10.3 ulps of M (2.3e-15 M) on the first 200 cases
# of each of TinyAdder-36's files.
TOLERANCE = 2.0 ** -40


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO())
    return status, out.getvalue(), err.getvalue()


def round_trip(model, **options):
    return loads(serialize(export(model, **options)))


def _factored_model():
    """Factored W_Q, W_out and W_pos, ALiBi slopes (ln 2 and a rational), a plain relu FFN,
    softmax1, both norms' knobs and a linear readout without a prompt."""
    vocab, slots = ("a", "b", "c"), ("x", "y", "z")
    attn = Attention(heads=("h0", "h1"),
                     W_Q=Factored(("r",), {"x": {"r": Fraction(1, 3)}}, {"r": {"h0": 2, "h1": 5}}),
                     W_K={"y": {"h0": Fraction(3, 2), "h1": 1}}, W_V={"x": {"h0": 1, "h1": 2}},
                     W_O={"h0": {"y": 1}, "h1": {"x": exp_of(-2)}}, b_K={"h1": Fraction(1, 10)},
                     slopes={"h0": Ln(Fraction(2)), "h1": Fraction(1, 4)})
    mlp = MLP(units=("u", "v"), gated=False, W_in={"x": {"u": 1}, "y": {"v": -2}},
              b_in={"u": Fraction(1, 2)},
              W_out=Factored(("d",), {"u": {"d": 1}, "v": {"d": -1}}, {"d": {"z": 3}}))
    return Model(name="factored", vocab=vocab, slots=slots, width_embed=2,
                 W_E={"a": {"x": 1}, "b": {"y": 1}, "c": {"x": -1, "y": Fraction(1, 7)}},
                 W_pos=Factored(("p",), {0: {"p": 1}, 2: {"p": Fraction(-1, 2)}},
                                {"p": {"x": Fraction(1, 5)}}),
                 blocks=(Block(attn, mlp, 2, 3,
                               ln1=Norm(eps=Fraction(1, 10 ** 6), mean="multiply"),
                               ln2=Norm(eps=Fraction(1, 10 ** 5), apply="divide",
                                        w={"y": Fraction(3)})),),
                 unembed=Unembed("linear", vocab, W_U={"z": {"a": 1, "c": -1}},
                                 b_U={"b": Fraction(1, 3)}))


def _after_model():
    """A rich model whose two attentions are softmaxes normalised after the weighted sum."""
    model = _rich_model(random.Random(2))
    blocks = tuple(replace(b, attn=replace(b.attn, softmax="softmax", normalise="after"))
                   for b in model.blocks)
    return replace(model, name="after", blocks=blocks)


FAMILY = {f"rich{seed}": (lambda seed=seed: _rich_model(random.Random(seed)))
          for seed in range(12)}
FAMILY["factored"] = _factored_model
FAMILY["after"] = _after_model


# ---- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    name if name in (*TINYADDER, *FAMILIES, str(ADDER1)) else
    pytest.param(name, marks=pytest.mark.slow) for name in SHIPPED])
def test_every_shipped_model_comes_back_the_same(name):
    """In float64 and float32. The default run takes TinyAdder-36's files, the first board
    model of each family and adder1; -m slow adds the other board models."""
    model = build(name)
    for dtype in ("float64", "float32"):
        assert dump(round_trip(model, dtype=dtype)) == dump(model)


@pytest.mark.parametrize("name", list(TINYADDER) + FAMILIES + [str(ADDER1)])
def test_a_model_of_each_family_traces_the_same_after_a_round_trip(name):
    model = build(name)
    back = round_trip(model)
    expression = f"{10 ** model.prompt.digits - 1}+1"
    assert run_with_cache(back, expression, ns="float")[1].values == \
        run_with_cache(model, expression, ns="float")[1].values


@pytest.mark.parametrize("name", TINYADDER)
def test_tinyadders_exact_answers_come_back(name):
    model = build(name)
    back = round_trip(model)
    pairs = edge_cases(model.prompt.digits)[2:4]
    assert [add(back, "fraction", a, b) for a, b in pairs] == \
        [add(model, "fraction", a, b) for a, b in pairs]


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_every_operation_comes_back_the_same(name):
    model = FAMILY[name]()
    for dtype in ("float64", "float32"):
        assert dump(round_trip(model, length=6, dtype=dtype)) == dump(model)


def test_a_round_trip_through_the_command_line(tmp_path):
    path = tmp_path / "published.onnx"
    assert run_cli(["export", "published", "--onnx", "-o", str(path)]) == \
        (0, f"wrote {path}\n", "")
    status, out, err = run_cli(["--model", str(path), "7650676663+0149460439"])
    assert (status, out) == (0, "7650676663+0149460439=07800137102\n")
    status, out, _ = run_cli(["export", str(path)])
    assert out == (ROOT / "tinyadder" / "models" / "published.json").read_text()
    assert build(path).name == "tinyadder36-published"


# ---- what the file holds ------------------------------------------------------------------

def test_the_floats_are_the_correctly_rounded_constants(published):
    onnx_model = export(published)
    tensors = {t.name: t for t in onnx_model.graph.initializer}
    with localcontext() as ctx:
        ctx.prec = 60
        e40 = Fraction(Decimal(40).exp())  # 60 digits: far closer than half an ulp
    W_V = tensors["blocks.0.attn.W_V"]  # rows: eq, special, ...; columns: heads h0 .. h4
    assert W_V.values[1 * 5 + 3] == nearest(e40, DataType.DOUBLE) == 2.3538526683702e+17
    assert W_V.values[0 * 5 + 3] == nearest(-11 * e40, DataType.DOUBLE)
    assert tensors["blocks.0.attn.slopes"].values[3] == 2.302585092994046
    metadata = dict(onnx_model.metadata_props)
    assert json.loads(metadata["tinyadder.exact.blocks.0.attn.W_V"]) == \
        {"3": "(-11)*exp(40)", "8": "exp(40)"}
    assert json.loads(metadata["tinyadder.exact.blocks.0.attn.slopes"]) == {"3": "ln(10)"}
    assert metadata["tinyadder.model"] == dump(published)
    # an exact float (an integer, a dyadic rational) needs no metadata
    assert "tinyadder.exact.W_E" not in metadata


def test_float32_holds_each_constant_rounded_once():
    model = _factored_model()
    tensors = {t.name: t for t in export(model, length=4, dtype="float32").graph.initializer}
    assert tensors["W_E"].values[5] == nearest(Fraction(1, 7), DataType.FLOAT)
    assert tensors["blocks.0.attn.W_O"].values[2] == stored(exp_of(-2), DataType.FLOAT)
    assert stored(parse("f32(f64(1/10))"), DataType.DOUBLE) == 0.10000000149011612


def test_names_are_transformerlens_names(published):
    graph = export(published).graph
    initializers = {t.name for t in graph.initializer}
    outputs = {o for node in graph.node for o in node.output}
    assert {"W_E", "blocks.0.attn.W_K", "blocks.0.attn.b_K", "blocks.0.attn.slopes",
            "blocks.1.mlp.W_out", "readout"} <= initializers
    assert {"hook_embed", "blocks.0.attn.hook_q", "blocks.0.attn.hook_attn_scores",
            "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z", "blocks.0.hook_attn_out",
            "blocks.0.hook_resid_mid", "blocks.0.mlp.hook_post", "blocks.1.hook_resid_post",
            "logits"} <= outputs
    W_K = next(t for t in graph.initializer if t.name == "blocks.0.attn.W_K")
    assert W_K.doc_string.startswith("blocks.0.attn.W_K; rows: eq, special, digit, count, "
                                     "scale; columns: h0, h1, h2, h3, h4")
    assert graph.input[0].shape == (33,) and graph.output[0].shape == (33, 10)


def test_the_default_length_is_a_whole_addition(published):
    # 23 prompt tokens and 11 answer digits; the last digit is written, never read
    assert default_length(published) == 33
    with pytest.raises(OnnxError, match="has no prompt: give the sequence length"):
        export(_factored_model())


# ---- refusals -------------------------------------------------------------------------------

def _published_onnx(length=6):
    return export(build("published"), length=length)


def _edit_node(onnx_model, name, **changes):
    nodes = tuple(replace(n, **changes) if n.name == name else n
                  for n in onnx_model.graph.node)
    return replace(onnx_model, graph=replace(onnx_model.graph, node=nodes))


def _drop_metadata(onnx_model, key):
    return replace(onnx_model, metadata_props=tuple(
        (k, v) for k, v in onnx_model.metadata_props if k != key))


def _set_metadata(onnx_model, key, value):
    return replace(onnx_model, metadata_props=tuple(
        (k, value if k == key else v) for k, v in onnx_model.metadata_props))


def _extra_node(onnx_model):
    node = Node(["hook_embed"], ["unused"], "Relu", "dangling")
    return replace(onnx_model, graph=replace(onnx_model.graph,
                                             node=onnx_model.graph.node + (node,)))


def _mask_with_a_hole(onnx_model):
    def hole(t):
        if t.name != "blocks.0.attn.mask":
            return t
        values = list(t.values)
        values[6] = -1.0  # row 1, column 0: below the diagonal
        return replace(t, values=tuple(values))
    return replace(onnx_model, graph=replace(onnx_model.graph, initializer=tuple(
        hole(t) for t in onnx_model.graph.initializer)))


REFUSALS = {
    "an unknown operator": (
        lambda m: _edit_node(m, "blocks.0.attn.hook_pattern", op_type="Hardmax"),
        "node 'blocks.0.attn.hook_pattern' (Hardmax): operator Hardmax is not one tinyadder "
        "reads"),
    "a Softmax where softmax1's sink belongs": (
        lambda m: _edit_node(_edit_node(m, "blocks.1.attn.sink", op_type="Softmax", input=(
            "blocks.1.attn.hook_attn_scores",), attribute=(Attribute(
                "axis", AttributeType.INT, 0),)), "blocks.1.attn.hook_pattern", op_type="Div"),
        "node 'blocks.1.attn.sink' (Softmax) where softmax1's sink needs Add"),
    "a node left over": (_extra_node, "node 'dangling' (Relu) is not part of any pattern"),
    "a mask with a hole": (_mask_with_a_hole, "node 'blocks.0.attn.hook_attn_scores' (Add): "
                                              "the causal mask is 0 where j <= i"),
    "a wrong exact constant": (
        lambda m: _set_metadata(m, "tinyadder.exact.blocks.0.attn.slopes", '{"3": "ln(9)"}'),
        "blocks.0.attn.slopes[3]: the file names the constant ln(9) for 2.302585092994046, "
        "which stores as 2.1972245773362196"),
    "an unknown metadata key": (
        lambda m: replace(m, metadata_props=m.metadata_props + (("tinyadder.flavour", "x"),)),
        "metadata 'tinyadder.flavour': not one tinyadder writes"),
    "a model file that does not fit": (
        lambda m: _set_metadata(m, "tinyadder.model", dump(_factored_model())),
        "the graph does not fit the model file in its metadata: 2 blocks in the graph, 1 in "
        "the file"),
    "an old opset": (lambda m: replace(m, opset_import=(replace(m.opset_import[0],
                                                                 version=11),)),
                     "opset 11: tinyadder reads opsets 13 to 23"),
    "a MatMul of one input": (
        lambda m: _edit_node(m, "blocks.0.attn.qk", input=("blocks.0.attn.q_heads",)),
        "node 'blocks.0.attn.qk' (MatMul): MatMul takes 2 inputs and one output here; this "
        "node has 1 and 1"),
    "a swapped residual": (
        lambda m: _edit_node(m, "blocks.0.hook_resid_mid",
                             input=("blocks.0.hook_attn_out", "blocks.0.hook_attn_out")),
        "node 'blocks.0.hook_resid_mid' (Add): a block's resid_mid adds the stream and one "
        "affine map's output"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_graph_that_breaks_the_pattern_is_refused_in_one_line(case, tmp_path):
    edit, message = REFUSALS[case]
    data = serialize(edit(_published_onnx()))
    with pytest.raises(OnnxError) as caught:
        loads(data)
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    status, out, err = run_cli(["params", "--model", str(path)])
    assert (status, out) == (2, "")
    line = f"argument --model: {path}: {caught.value}"
    if len(line) > MESSAGE:  # the command line's one line quotes a long message's start
        line = line[:MESSAGE - 20] + f"... ({len(line)} characters)"
    assert err == f"tinyadder params: error: {line}\n"


@pytest.mark.parametrize("name, value, message", [
    ("blocks.0.ln1.n", float("inf"), "divides by a count, not inf"),
    ("blocks.0.ln1.n", 2.5, "divides by a count, not 2.5"),
    ("blocks.0.attn.k_norm.inv_n", 5e-324, "multiplies by 1/n, not 5e-324"),
    ("blocks.0.attn.k_norm.inv_n", float("nan"), "multiplies by 1/n, not nan")])
def test_an_rmsnorm_by_another_count_is_refused(name, value, message):
    onnx_model = export(FAMILY["rich0"](), length=4)
    inits = tuple(replace(t, values=(value,)) if t.name == name else t
                  for t in onnx_model.graph.initializer)
    assert any(t.name == name for t in inits)
    with pytest.raises(OnnxError, match=re.escape(message)):
        loads(serialize(replace(onnx_model, graph=replace(onnx_model.graph, initializer=inits))))


def test_subgraphs_and_external_data_are_refused_by_the_reader():
    model = _published_onnx()
    sub = Attribute("then_branch", AttributeType.TENSOR, model.graph.initializer[0])
    data = bytearray(serialize(_edit_node(model, "logits", attribute=(sub,))))
    # the tensor (field 5) made a graph (field 6), and the attribute's type TENSOR made GRAPH
    data = bytes(data).replace(b"then_branch*", b"then_branch2").replace(b"\xa0\x01\x04",
                                                                         b"\xa0\x01\x05")
    with pytest.raises(OnnxError, match="AttributeProto.g: subgraphs are not supported"):
        loads(data)
    tensor = serialize(Tensor("w", DataType.DOUBLE, (1,), (1.0,)))
    with pytest.raises(OnnxError, match="data_location"):
        parse_onnx(tensor + b"\x70\x01", Tensor)  # data_location = EXTERNAL


def test_the_export_refuses_what_the_reader_would():
    with pytest.raises(OnnxError, match="sequence length 0: an integer from 1 to 1024"):
        export(build("published"), length=0)
    with pytest.raises(OnnxError, match="dtype 'float16': use float64 or float32"):
        export(build("published"), dtype="float16")
    status, out, err = run_cli(["export", "published", "--onnx"])
    assert (status, out) == (2, "")
    assert err == ("tinyadder export: error: --onnx writes a binary file: give it with -o "
                   "FILE.onnx\n")


# ---- the fuzzer: graph-level mutations --------------------------------------------------------

def _mutate(onnx_model, rng):
    """One random edit of a valid graph: a node's operator, an input, an attribute, a node
    dropped or doubled, an initializer's values or dims, a metadata entry."""
    g = onnx_model.graph
    nodes, inits = list(g.node), list(g.initializer)
    values = [o for n in nodes for o in n.output] + [t.name for t in inits]
    kind = rng.randrange(7)
    i = rng.randrange(len(nodes))
    if kind == 0:
        nodes[i] = replace(nodes[i], op_type=rng.choice(["Add", "Mul", "Sub", "Div", "MatMul",
                                                         "Relu", "Exp", "Neg", "Softmax"]))
    elif kind == 1 and nodes[i].input:
        inputs = list(nodes[i].input)
        inputs[rng.randrange(len(inputs))] = rng.choice(values[:values.index(
            nodes[i].output[0])] or values)
        nodes[i] = replace(nodes[i], input=tuple(inputs))
    elif kind == 2:
        nodes[i] = replace(nodes[i], attribute=(Attribute(
            rng.choice(["axis", "perm", "keepdims"]), AttributeType.INT,
            rng.choice([-1, 0, 1, 2, 5])),))
    elif kind == 3 or (kind in (4, 5) and not inits):  # a graph of Constant nodes only
        del nodes[i]
    elif kind == 4:
        j = rng.randrange(len(inits))
        t = inits[j]
        if t.values and t.data_type == DataType.DOUBLE:
            vals = list(t.values)
            vals[rng.randrange(len(vals))] = rng.choice([0.0, 1.0, -1.0, 0.5, 1e300,
                                                         float("-inf"), float("inf")])
            inits[j] = replace(t, values=tuple(vals))
        elif t.values:
            vals = list(t.values)
            vals[rng.randrange(len(vals))] = rng.choice([0, 1, -1, 7, 10 ** 9])
            inits[j] = replace(t, values=tuple(vals))
    elif kind == 5:
        j = rng.randrange(len(inits))
        t = inits[j]
        if len(t.dims) == 2:
            inits[j] = replace(t, dims=(t.dims[1], t.dims[0]))
    elif onnx_model.metadata_props:
        props = list(onnx_model.metadata_props)
        k = rng.randrange(len(props))
        key, value = props[k]
        props[k] = (key, rng.choice(["", "1/3", '{"0": "exp(40)"}', value[:len(value) // 2],
                                     "{}"]))
        return replace(onnx_model, metadata_props=tuple(props))
    else:  # a graph without metadata, a node without inputs: drop it
        del nodes[i]
    return replace(onnx_model, graph=replace(g, node=tuple(nodes), initializer=tuple(inits)))


def _fuzz(seeds, onnx_model, rng_class=random.Random):
    outcomes = {"read": 0, "refused": 0}
    for seed in seeds:
        rng = rng_class(seed)
        mutated = onnx_model
        started = time.perf_counter()
        try:
            for _ in range(rng.randint(1, 3)):
                mutated = _mutate(mutated, rng)
            data = serialize(mutated)
        except OnnxError:
            continue  # the messages refuse it before it is a file
        try:
            assert isinstance(loads(data), Model)
            outcomes["read"] += 1
        except OnnxError as err:
            assert "\n" not in str(err)
            outcomes["refused"] += 1
        assert time.perf_counter() - started < 2
    return outcomes


def test_the_reader_survives_graph_mutations():
    outcomes = _fuzz(range(40), export(build("published"), length=4))
    assert outcomes["refused"] > 25 and outcomes["read"] > 0, outcomes


@pytest.mark.slow
def test_the_reader_survives_many_graph_mutations():
    for name in ("published", "rich3", "factored"):
        model = build(name) if name == "published" else FAMILY[name]()
        _fuzz(range(40, 2000), export(model, length=5))


# ---- the real packages ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def onnx():
    return pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def ort():
    return pytest.importorskip("onnxruntime")


@pytest.mark.slow  # 1.8 s of CPU; test_onnx_wire runs onnx.checker on a graph by default
def test_the_checker_accepts_every_exported_file(onnx):
    models = [build(name) for name in SHIPPED] + [make() for make in FAMILY.values()]
    for model in models:
        for dtype in ("float64", "float32") if model.name in ("factored", "rich", "after") else \
                ("float64",):
            data = serialize(export(model, length=None if model.prompt else 6, dtype=dtype))
            onnx.checker.check_model(onnx.load_from_string(data), full_check=True)


def _certified_rows(compiled, tokens, start):
    """The certified enclosures of the logits at positions start - 1 ... len(tokens) - 1,
    position by position with the KV cache, as generation decides tokens."""
    logits, past = forward(compiled, tokens[:start], logits="last")
    rows = [logits[-1]]
    for token in tokens[start:]:
        logits, past = forward(compiled, [token], past, logits="last")
        rows.append(logits[-1])
    return rows


def _replay(compiled, tokens):
    """(tinyadder's float logits of every position, M: the largest finite |value| at any trace
    point of that pass, whether every value but the scores (where a bias may be -inf) is
    finite)."""
    largest, finite = [0.0], [True]

    def record(name, value):
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, (list, tuple)):
                stack.extend(v)
            elif v is not None and math.isfinite(float(v)):
                largest[0] = max(largest[0], abs(float(v)))
            elif v is not None and not name.endswith("hook_attn_scores"):
                finite[0] = False
    logits, _ = forward(compiled, tokens, record=record)
    return logits, largest[0], finite[0]


def _check_adderboard(model, pairs, ort):
    """onnxruntime's float64 logits, position by position, are within TOLERANCE M of the
    float64 replay and of the certified enclosures, and pick the certified digit wherever its
    certified margin is larger than twice that: returns (how many digits it decided so, how
    many it was given)."""
    import numpy as np
    session = ort.InferenceSession(serialize(export(model)))
    T = default_length(model)
    ns = for_model(number_system("fraction"), model)
    floats = compile_model(model, number_system("float"))
    certified = compile_model(model, ns.decider())
    decided = 0
    for a, b in pairs:
        prompt = encode(model, a, b)
        tokens = generate(model, ns, prompt, answer_length(model))[:T]
        got = session.run(None, {"tokens": np.array(tokens, dtype=np.int64)})[0].tolist()
        replay, M, _ = _replay(floats, tokens)
        tol = TOLERANCE * M
        for row, ref in zip(got, replay):
            assert max(abs(g - r) for g, r in zip(row, ref)) <= tol, (a, b)
        for k, box in enumerate(_certified_rows(certified, tokens, len(prompt))):
            row = got[len(prompt) - 1 + k]
            assert all(float(v.lo) - tol <= g <= float(v.hi) + tol for g, v in zip(row, box))
            top = max(range(len(box)), key=lambda t: box[t].lo)
            margin = float(box[top].lo) - max(float(box[t].hi) for t in range(len(box))
                                              if t != top)
            if margin > 2 * tol:
                assert argmax(row) == top, (a, b, k)
                decided += 1
    return decided, answer_length(model) * len(pairs)


@pytest.mark.parametrize("name", TINYADDER)
def test_onnxruntime_gives_tinyadders_logits_on_a_sample(name, ort):
    # all nines twice, the rising and falling carry chain, and the published
    # readout's counterexample (every model's certified digits)
    pairs = [verify_cases()[i] for i in (4, 7)] + [COUNTEREXAMPLE]
    decided, digits = _check_adderboard(build(name), pairs, ort)
    assert decided == digits, (decided, digits)


def test_a_mixed_block_is_refused_not_left_out():
    """x = h + g (x - h) is not in the graph the export writes: refused in one line."""
    for name in MIXED:
        assert build(name).mix is not None
        with pytest.raises(OnnxError, match="mixes two blocks' outputs"):
            export(build(name))


@pytest.mark.slow  # onnxruntime has no float64 Erf: the GELU models are not run here
@pytest.mark.parametrize("name", [name for name in names() if name not in MIXED and not any(
    block.mlp.act == "gelu" for block in build(name).blocks)])
def test_onnxruntime_gives_tinyadders_logits_on_all_adderboard_cases(name, ort):
    pairs = verify_cases()
    decided, digits = _check_adderboard(build(name), pairs, ort)
    assert decided == digits, (decided, digits)


def _greedy(run, model, a, b):
    """The sum the graph (``run``: a feed's logits) writes for a + b, token by token (position
    i reads tokens 0..i only, so the positions not yet written may hold anything)."""
    import numpy as np
    prompt = encode(model, a, b)
    T = default_length(model)
    tokens = list(prompt) + [0] * (T + 1 - len(prompt))
    for i in range(len(prompt) - 1, T):
        tokens[i + 1] = int(np.argmax(run({"tokens": np.array(tokens[:T])})[i]))
    return answer(model, tokens)


def _writes_tinyadders_sums(name, onnx, ort):
    """The model, run by onnxruntime alone, writes the sum tinyadder's float64 replay writes
    for all nines plus 1 (logits are not compared here: a model whose FFN cancels terms of
    10^46 differs from the replay there by the sums' order, docs/onnx.md)."""
    model = build(name)
    run = _runner(onnx, ort, serialize(export(model)), model, "float64")
    nines = 10 ** model.prompt.digits - 1
    assert _greedy(run, model, nines, 1) == add(model, "float", nines, 1)


@pytest.mark.parametrize("name", FAMILIES)
def test_onnxruntime_writes_the_sums_of_a_model_of_each_family(name, onnx, ort):
    _writes_tinyadders_sums(name, onnx, ort)


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in OTHERS if name not in MIXED])
def test_onnxruntime_writes_the_sums_of_every_other_model(name, onnx, ort):
    _writes_tinyadders_sums(name, onnx, ort)


def _runner(onnx, ort, data, model, dtype):
    """onnxruntime; for a float64 Erf, which onnxruntime has no kernel for, onnx's reference
    evaluator with math.erf in float64 (its own Erf rounds to float32)."""
    import numpy as np
    if dtype == "float64" and any(block.mlp.act == "gelu" for block in model.blocks):
        from onnx.reference import ReferenceEvaluator
        from onnx.reference.op_run import OpRun

        class Erf(OpRun):
            op_domain = ""

            def _run(self, x):
                return (np.vectorize(math.erf, otypes=[x.dtype])(x),)

        class LayerNormalization(OpRun):  # its own takes stash_type 1 (float32) only
            op_domain = ""

            def _run(self, x, w, b=None, axis=-1, epsilon=1e-5, stash_type=11):
                d = x - x.mean(axis=-1, keepdims=True)
                y = d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + epsilon) * w
                return (y if b is None else y + b,)
        evaluator = ReferenceEvaluator(onnx.load_from_string(data),
                                       new_ops=[Erf, LayerNormalization])
        return lambda feed: evaluator.run(None, feed)[0]
    session = ort.InferenceSession(data)
    return lambda feed: session.run(None, feed)[0]


def _scaled_everywhere(model):
    """The model, its tied readout (if any) scaling every embedded slot: forward._scaled
    builds the scaled row only up to the last scaled slot, so a W_E entry past it raises
    IndexError in tinyadder's own replay."""
    u = model.unembed
    if u.kind != "tied":
        return model
    scale = {s: u.scale.get(s, 1) for s in model.slots[:model.width_embed]}
    return replace(model, unembed=replace(u, scale=scale))


# softmax and softmax1, every activation (relu in factored), gated and plain FFNs, linear
# and tied readouts, fixed and learned positions, a factored model, normalise 'after'
RUNTIME = ("rich0", "rich1", "rich3", "rich4", "rich9", "factored", "after")


@pytest.mark.parametrize("name", RUNTIME)
def test_every_operation_runs_to_tinyadders_logits(name, onnx, ort):
    _runs_to_tinyadders_logits(name, onnx, ort)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(FAMILY) - set(RUNTIME)))
def test_the_other_random_models_run_to_tinyadders_logits(name, onnx, ort):
    _runs_to_tinyadders_logits(name, onnx, ort)


def _runs_to_tinyadders_logits(name, onnx, ort):
    """onnxruntime's logits within TOLERANCE M (float64) or 2^-16 M (float32) of the replay in
    that float, wherever the replay stays finite (a dense MatMul makes inf * 0 NaN where
    tinyadder's sparse tables leave a zero weight out)."""
    import numpy as np
    model = _scaled_everywhere(FAMILY[name]())
    T = 6
    tokens = [(3 * i + 1) % len(model.vocab) for i in range(T)]
    compared = 0
    for dtype, system, tolerance in (("float64", "float", TOLERANCE),
                                     ("float32", "float32", 2.0 ** -16)):
        replay, M, finite = _replay(compile_model(model, number_system(system)), tokens)
        if not finite:
            continue
        data = serialize(export(model, length=T, dtype=dtype))
        got = _runner(onnx, ort, data, model, dtype)({"tokens": np.array(tokens)}).tolist()
        for row, ref in zip(got, replay):
            assert max(abs(g - float(r)) for g, r in zip(row, ref)) <= tolerance * M, \
                (dtype, row, ref, M)
        compared += 1
    assert compared >= 1


def test_a_graph_written_by_onnx_helper_reads(onnx, ort):
    """A two-token-type model written by hand with onnx.helper in the same style, other
    names, a Constant node, Gemm, ReduceMean and x * Sigmoid(x): no tinyadder metadata."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    D = TensorProto.DOUBLE
    T = 3

    def init(name, array):
        return numpy_helper.from_array(np.array(array, dtype=np.float64 if isinstance(
            np.array(array).flat[0], float) else np.int64), name)
    lower = [[0.0 if c <= r else -np.inf for c in range(T)] for r in range(T)]
    inits = [
        init("emb", [[1.0, 0.5], [-1.0, 2.0]]), init("wq", [[0.25], [1.0]]),
        init("wk", [[1.0], [0.0]]), init("wv", [[0.0], [3.0]]), init("wo", [[1.0, -0.5]]),
        init("hshape", [T, 1, 1]), init("zshape", [T, 1]), init("causal", lower),
        init("w1", [[1.0, 0.0, 2.0], [0.5, 1.0, 0.0]]), init("b1", [0.0, 0.125, -1.0]),
        init("w2", [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), init("eps", 1e-6),
        init("axes", [-1]), init("wu", [[1.0, -1.0], [2.0, 0.0]])]
    n = helper.make_node
    nodes = [
        n("Gather", ["emb", "ids"], ["x"], name="embed", axis=0),
        n("Constant", [], ["one"], name="one", value=numpy_helper.from_array(
            np.array(1.0), "one")),
        n("Mul", ["x", "x"], ["sq"], name="sq"),
        n("ReduceMean", ["sq", "axes"], ["ms"], name="ms", keepdims=1),
        n("Add", ["ms", "eps"], ["mse"], name="mse"), n("Sqrt", ["mse"], ["rt"], name="rt"),
        n("Div", ["one", "rt"], ["inv"], name="inv"), n("Mul", ["x", "inv"], ["xn"], name="xn"),
    ]
    for w in "qkv":
        nodes += [n("MatMul", ["xn", f"w{w}"], [w], name=w),
                  n("Reshape", [w, "hshape"], [f"{w}r"], name=f"{w}r"),
                  n("Transpose", [f"{w}r"], [f"{w}h"], name=f"{w}h", perm=[1, 0, 2])]
    nodes += [
        n("Transpose", ["kh"], ["kt"], name="kt", perm=[0, 2, 1]),
        n("MatMul", ["qh", "kt"], ["s"], name="s"),
        n("Add", ["s", "causal"], ["sm"], name="sm"),
        n("Softmax", ["sm"], ["p"], name="p", axis=-1),
        n("MatMul", ["p", "vh"], ["zh"], name="zh"),
        n("Transpose", ["zh"], ["zt"], name="zt", perm=[1, 0, 2]),
        n("Reshape", ["zt", "zshape"], ["z"], name="z"),
        n("MatMul", ["z", "wo"], ["ao"], name="ao"), n("Add", ["x", "ao"], ["mid"], name="mid"),
        n("Gemm", ["mid", "w1", "b1"], ["h"], name="h"),
        n("Sigmoid", ["h"], ["sg"], name="sg"), n("Mul", ["h", "sg"], ["act"], name="act"),
        n("MatMul", ["act", "w2"], ["mo"], name="mo"),
        n("Add", ["mid", "mo"], ["post"], name="post"),
        n("MatMul", ["post", "wu"], ["logits"], name="unembed")]
    graph = helper.make_graph(nodes, "by hand", [helper.make_tensor_value_info(
        "ids", TensorProto.INT64, [T])], [helper.make_tensor_value_info("logits", D, [T, 2])],
        inits)
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                             ir_version=8).SerializeToString()
    model = loads(data)
    assert (model.slots, model.vocab, model.blocks[0].attn.heads) == (("s0", "s1"),
                                                                      ("t0", "t1"), ("h0",))
    assert model.W_E == {"t0": {"s0": 1, "s1": Fraction(1, 2)}, "t1": {"s0": -1, "s1": 2}}
    assert model.blocks[0].ln1.eps == Fraction(1e-6)  # the binary rational the file holds
    assert (model.blocks[0].mlp.act, model.blocks[0].mlp.gated) == ("silu", False)
    tokens = [0, 1, 1]
    got = ort.InferenceSession(data).run(None, {"ids": np.array(tokens)})[0].tolist()
    replay, _ = forward(compile_model(model, number_system("float")), tokens)
    for row, ref in zip(got, replay):
        assert max(abs(g - r) for g, r in zip(row, ref)) <= 1e-12


def test_our_file_renamed_and_rewritten_by_protobuf_reads_the_same(onnx):
    """Every node and value renamed as an exporter of another framework names them, the doc
    strings dropped, the bytes written by protobuf's own serializer."""
    model = build("published")
    proto = onnx.load_from_string(serialize(export(model)))
    renamed = {}
    for i, node in enumerate(proto.graph.node):
        node.name = f"/{node.op_type}_{i}"
        for j, out in enumerate(node.output):
            renamed[out] = f"onnx::{node.op_type}_{i}_{j}" if out != "logits" else out
    for t in proto.graph.initializer:
        renamed[t.name] = f"onnx::init_{len(renamed)}"
        t.doc_string = ""
    for node in proto.graph.node:
        node.input[:] = [renamed.get(v, v) for v in node.input]
        node.output[:] = [renamed.get(v, v) for v in node.output]
    exact = [(p.key, p.value) for p in proto.metadata_props]
    del proto.metadata_props[:]
    for key, value in exact:
        if key.startswith("tinyadder.exact."):
            key = "tinyadder.exact." + renamed[key[len("tinyadder.exact."):]]
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    for t in proto.graph.initializer:
        t.name = renamed[t.name]
    assert dump(loads(proto.SerializeToString())) == dump(model)


def test_the_five_lines_of_docs_run(ort, tmp_path, monkeypatch):
    text = (ROOT / "docs" / "onnx.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- onnxruntime -->\n```python\n(.*?)```", text, re.S).group(1)
    assert len(block.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    assert run_cli(["export", "published", "--onnx", "-o", "published.onnx"])[0] == 0
    printed = io.StringIO()
    monkeypatch.setattr("sys.stdout", printed)
    exec(block, {})
    assert printed.getvalue() == "[0, 7, 8, 0, 0, 1, 3, 7, 1, 0, 2]\n"


def test_a_verifier_cut_at_the_embedding_gives_the_same_logits(onnx, ort, tmp_path):
    """docs/onnx.md's cut for a verifier: the graph from hook_embed (a float input, the rows
    of W_E for the prompt's tokens) to the logits computes the same logits."""
    import numpy as np
    from onnx import numpy_helper, utils
    whole, cut = tmp_path / "published.onnx", tmp_path / "stream.onnx"
    whole.write_bytes(serialize(export(build("published"))))
    utils.extract_model(str(whole), str(cut), ["hook_embed"], ["logits"])
    W_E = next(numpy_helper.to_array(t) for t in onnx.load(str(whole)).graph.initializer
               if t.name == "W_E")
    tokens = encode(build("published"), 7650676663, 149460439) + [0, 7, 8, 0, 0, 1, 3, 7, 1, 0]
    stream = ort.InferenceSession(str(cut)).run(None, {"hook_embed": W_E[tokens]})[0]
    logits = ort.InferenceSession(str(whole)).run(None, {"tokens": np.array(tokens)})[0]
    assert np.array_equal(stream, logits)
    assert logits[22:].argmax(axis=1).tolist() == [0, 7, 8, 0, 0, 1, 3, 7, 1, 0, 2]
