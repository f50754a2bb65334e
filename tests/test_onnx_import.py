"""Reading other tools' ONNX graphs (docs/onnx.md, "Import"): the forms ``torch.onnx.export``
writes, and graphs that must be refused in one line rather than crash the reader."""

from dataclasses import replace
from fractions import Fraction
import json
import random
import re
import math
import struct
import time
import tracemalloc

import pytest

from tinyadder import build
from tinyadder.modelfile import dump
from tinyadder.numbers.rounding import single_of
from tinyadder.onnx import Attribute, AttributeType, Node, OnnxError, Tensor, serialize
from tinyadder.onnx.export import export
from tinyadder.onnx.read import loads


def _published(length=6):
    return export(build("published"), length=length)


def _graph(onnx_model, **changes):
    return replace(onnx_model, graph=replace(onnx_model.graph, **changes))


def _refusal(onnx_model):
    with pytest.raises(OnnxError) as caught:
        loads(serialize(onnx_model))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_weight_that_no_node_or_initializer_defines_is_refused():
    m = _published()
    nodes = tuple(replace(n, input=(n.input[0], "blocks.0.attn.W_Qx"))
                  if n.name == "blocks.0.attn.hook_q.matmul" else n for n in m.graph.node)
    assert _refusal(_graph(m, node=nodes)) == (
        "node 'blocks.0.attn.hook_q.matmul' (MatMul): input 'blocks.0.attn.W_Qx' is defined by "
        "no initializer, graph input or earlier node (the nodes of a graph are in the order "
        "they compute)")


def test_a_cycle_is_refused():
    m = _published()
    first, second = m.graph.node[0], m.graph.node[1]
    nodes = (replace(first, input=(first.input[0], second.output[0])),) + m.graph.node[1:]
    assert "is defined by no initializer, graph input or earlier node" in \
        _refusal(_graph(m, node=nodes))


def test_exact_metadata_nested_past_the_stack_is_refused():
    m = _published()
    deep = "[" * 100_000 + "]" * 100_000
    props = tuple((k, deep if k == "tinyadder.exact.blocks.0.attn.slopes" else v)
                  for k, v in m.metadata_props)
    assert _refusal(replace(m, metadata_props=props)).startswith(
        "metadata 'tinyadder.exact.blocks.0.attn.slopes': a JSON object of {flat index: "
        "constant}")


def test_gemm_with_transb_reads_as_nn_linear_writes_it():
    m = _published()
    W_Q = next(t for t in m.graph.initializer if t.name == "blocks.0.attn.W_Q")
    rows, cols = W_Q.dims
    flipped = Tensor("W_Q_out_in", W_Q.data_type, (cols, rows),
                     tuple(W_Q.values[r * cols + c] for c in range(cols) for r in range(rows)))
    matmul = next(n for n in m.graph.node if n.name == "blocks.0.attn.hook_q.matmul")
    gemm = Node((matmul.input[0], "W_Q_out_in", "blocks.0.attn.b_Q"), ("blocks.0.attn.hook_q",),
                "Gemm", "q", (Attribute("transB", AttributeType.INT, 1),))
    nodes = tuple(gemm if n.output == gemm.output else n for n in m.graph.node
                  if n is not matmul)
    inits = m.graph.initializer + (flipped,)
    inits = tuple(t for t in inits if t.name != "blocks.0.attn.W_Q")
    assert dump(loads(serialize(_graph(m, node=nodes, initializer=inits)))) == \
        dump(build("published"))


def test_metadata_tinyadder_does_not_write_is_refused():
    m = _published()
    extra = replace(m, metadata_props=m.metadata_props + (("flavour", "vanilla"),))
    assert _refusal(extra) == ("metadata 'flavour': not one tinyadder writes (tinyadder.model, "
                               "tinyadder.exact.<initializer>, tinyadder.floats, "
                               "tinyadder.softmax1)")


def test_a_graph_whose_weights_are_not_its_model_files_is_refused():
    m = _published()
    props = tuple((k, dump(build("repaired")) if k == "tinyadder.model" else v)
                  for k, v in m.metadata_props)
    assert _refusal(replace(m, metadata_props=props)) == (
        "the graph does not fit the model file in its metadata: its weights are not those of "
        "'tinyadder36-repaired'")


# ---- real submissions, exported by torch.onnx.export (tests/fixtures/onnx) ----------------
#
# tools/export/adderboard.py made these in a scratch environment: each AdderBoard submission's
# forward pass at the fixed length of a whole addition, by the TorchScript exporter and by
# dynamo=True, and the TorchScript graph after onnxscript's optimizer and after onnxruntime's
# basic optimisation (each file gzipped), with the submission's own answers on 200 pairs.

import gzip
import io
from pathlib import Path

from tinyadder import add
from tinyadder.cli import main
from tinyadder.onnx import layout as layouts
from tinyadder.onnx.read import load

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "onnx"
ALL_GRAPHS = sorted(p.name[:-len(".onnx.gz")] for p in FIXTURES.glob("*.onnx.gz"))
FORMS = ("torchscript", "dynamo", "torchscript.onnxscript", "torchscript.ort")
# the graphs that import (their entry has a layout); the others are refused (below):
# yinglunz-456's and rezabyt-311's dynamo and onnxscript graphs have no norm eps (onnxscript's
# optimizer drops an Add of 1e-8 as an Add of 0)
IMPORTS = {**{entry: FORMS for entry in ("fblissjr-33", "kswain98-8", "yieldthought-20",
                                          "jacobli99-28", "jacobli99-93")},
           **{entry: ("torchscript", "torchscript.ort") for entry in ("yinglunz-456",
                                                                      "rezabyt-311")},
           # torch.export refuses evindor's models (a guard on data: its positions' boolean
           # masks), so there is no dynamo graph
           **{entry: ("torchscript", "torchscript.onnxscript", "torchscript.ort")
              for entry in ("evindor-57", "evindor-67")},
           "vijec-52": FORMS,
           # dimopep-140's TorchScript graph computes its rotary frequencies by a float Pow
           # (3 ** (-[0, 1/2])) and its tables by Cos and Sin of positions * frequencies
           "dimopep-140": FORMS,
           "lokimorty-39": FORMS,
           # LayerNorm (a LayerNormalization node in every form, and its decomposition in
           # the TorchScript graph at opset 16, tools/export/decomposed.py); yinglunz-512's
           # q, k and v split from one projection by Slice or Split
           "yinglunz-512": FORMS + ("torchscript16",),
           # torch.export refuses jackcai1206-234 too (a guard on data: its positions' .item())
           "jackcai1206-234": ("torchscript", "torchscript.onnxscript", "torchscript.ort"),
           # rotary halves written into zeros by ScatterND, key/value heads repeated by Tile,
           # q and k each scaled by d^-1/4 (nino-116's shipped file)
           # (dynamo: the rotary halves by Transpose, ScatterND of rows, Transpose back; the
           # heads repeated by Expand; k^T through a Reshape that drops the batch)
           "prasannakotyal-116": FORMS,
           # a forward written with torch operations on lanes, ending in the argmin of its
           # errors (the layout's output "token_ids")
           "alexlitz-36": FORMS,
           # the readout of the last position only; a parabolic head; q and k each scaled by
           # the float32 of 2^-1/4
           # (dynamo: the lanes and the last position indexed by GatherND between Transposes)
           "cosminscn-66": FORMS, "cosminscn-130": FORMS}
GRAPHS = [f"{entry}.{k}" for entry, forms in IMPORTS.items() for k in forms]
REFUSED = [g for g in ALL_GRAPHS if g not in GRAPHS]
# the default suite reads fblissjr-33's four and the others' TorchScript graphs (CPU budget)
# (each other entry's first form that imports: its TorchScript graph where that one does)
CHEAP = [pytest.param(f"{entry}.{k}", marks=() if entry == "fblissjr-33" or k == forms[0]
                      else pytest.mark.slow) for entry, forms in IMPORTS.items() for k in forms]


def test_no_graph_carries_a_line_of_the_submissions_source():
    """The dynamo exporter records a stack trace per node, quoting the submission's source;
    the fixtures keep what the graphs compute and none of their authors' code."""
    quoted = [p.name for p in sorted(FIXTURES.rglob("*.onnx*"))
              if b'File "' in (gzip.decompress(p.read_bytes()) if p.suffix == ".gz"
                               else p.read_bytes())]
    assert quoted == []


# the shipped model file of the same model, where there is one: Kiguli/AdderBoard's
# kswain98_8p.py, which the kswain98-8 fixtures export, is byte for byte the 2p file
SHIPPED = {"fblissjr-33": "fblissjr-33", "kswain98-8": "kswain98-2",
           "yieldthought-20": "yieldthought-20", "jacobli99-28": "jacobli99-28",
           "jacobli99-93": "jacobli99-93", "yinglunz-456": "yinglunz-456",
           "rezabyt-311": "rezabyt-311", "evindor-57": "evindor-57",
           "evindor-67": "evindor-67", "vijec-52": "vijec-52", "dimopep-140": "dimopep-140",
           "lokimorty-39": "lokimorty-39", "yinglunz-512": "yinglunz-512",
           "jackcai1206-234": "jackcai1206-234", "prasannakotyal-116": "nino-116",
           "alexlitz-36": "alexlitz-36", "cosminscn-66": "cosminscn-66",
           "cosminscn-130": "cosminscn-130"}
# what an optimiser made other than the original computes it: onnxscript's (numpy's) float32
# sin of yieldthought-20's q_phase, 1 ulp from the correctly rounded one torch's graph leaves
# to the runtime; onnxruntime's norms x / root where yieldthought-20 multiplies by 1 / root
# (so the export's constant one is not written)
# jacobli99-28's q directions S (cos, -sin) of its offsets, which both exporters fold with
# torch's or numpy's float32 sin: one of them 1 ulp from the correctly rounded value
FOLDED_OTHERWISE = {"yieldthought-20.dynamo": {"blocks.0.attn.W_Q.B"},
                    **{f"jacobli99-28.{k}": {"blocks.0.attn.W_Q"} for k in (
                        "dynamo", "torchscript", "torchscript.onnxscript",
                        "torchscript.ort")},
                    "yieldthought-20.torchscript.onnxscript": {"blocks.0.attn.W_Q.B"},
                    "yieldthought-20.torchscript.ort": {"one"},
                    # evindor's token arc and sinusoidal positions, which the optimisers
                    # fold with numpy's or onnxruntime's float32 cos and sin, torch's run
                    # computes with its own: some a float apart
                    # (and their TorchScript graphs' Cos and Sin, which the import folds
                    # correctly rounded)
                    **{f"evindor-57.torchscript.{k}": {"W_E", "W_pos", "unembed.W_U.B"}
                       for k in ("onnxscript", "ort")},
                    "evindor-57.torchscript": {"W_pos"},
                    **{f"evindor-67.{k}": {"W_pos"} for k in FORMS if k != "dynamo"},
                    # vijec-52's and lokimorty-39's token arcs, likewise (their TorchScript
                    # graphs' Cos and Sin, which the import folds correctly rounded)
                    **{f"{e}.{k}": {"W_E"} for e in ("vijec-52", "lokimorty-39")
                       for k in FORMS},
                    # onnxruntime folds factored positions A B into one table W_pos
                    **{f"{e}.torchscript.ort": {"W_pos", "W_pos.A", "W_pos.B"}
                       for e in ("yinglunz-456", "rezabyt-311")},
                    # and so do onnxscript's optimizer (which the dynamo exporter runs)
                    # and onnxruntime for yinglunz-512
                    **{f"yinglunz-512.{k}": {"W_pos", "W_pos.A", "W_pos.B"}
                       for k in ("dynamo", "torchscript.onnxscript", "torchscript.ort")},
                    # jackcai1206-234's spiral positions amp cos(2 pi i / 10 + phase): its
                    # graphs' Cos and Sin, folded correctly rounded by the import or by an
                    # optimiser's float32 kernel, where torch's run computes its own; times
                    # the amplitude (about 1.9), a float apart in cos is up to two in W_pos
                    **{f"jackcai1206-234.{k}": {"W_pos"} for k in FORMS},
                    # prasannakotyal-116's scale: a b, its q's and k's scales (each the float32
                    # of 2^-1/4) multiplied exactly, one float from the file's 1/sqrt(2)
                    **{f"prasannakotyal-116.{k}": {"blocks.0.attn.scale"} for k in FORMS},
                    # cosminscn-66's too (q and k each by the float32 of 2^-1/4); onnxscript
                    # folds its positional table with numpy's float32 sin and cos
                    "cosminscn-66.torchscript": {"blocks.0.attn.scale"},
                    "cosminscn-66.torchscript.onnxscript": {"blocks.0.attn.scale", "W_pos"},
                    "cosminscn-130.torchscript": {"blocks.0.attn.scale"},
                    # (from dynamo their masks above the diagonal are the float32 minimum)
                    **{f"cosminscn-{n}.dynamo": {"blocks.0.attn.scale", "blocks.0.attn.mask",
                                                 "W_pos"} for n in (66, 130)},
                    **{f"cosminscn-130.torchscript.{k}": {"blocks.0.attn.scale", "W_pos"}
                       for k in ("onnxscript", "ort")},
                    # onnxruntime folds its head's factors A B into one W_U (a test below)
                    "cosminscn-66.torchscript.ort": {"blocks.0.attn.scale", "W_pos",
                                                     "unembed.W_U", "unembed.W_U.A",
                                                     "unembed.W_U.B"},
                    # and its dynamo graph masks with the float32 minimum, -3.4e38, not -inf
                    # (the graph's float program: the import keeps it)
                    "prasannakotyal-116.dynamo": {"blocks.0.attn.scale", "blocks.0.attn.mask"},
                    # the decomposed LayerNorm divides by its root (DECOMPOSED), so the
                    # import's export is the decomposition too: these are its constants
                    "yinglunz-512.torchscript16": {"axes.last", "blocks.0.ln1.eps",
                                                   "blocks.0.ln1.n", "blocks.0.ln2.eps",
                                                   "blocks.0.ln2.n", "ln_final.eps",
                                                   "ln_final.n"}}
# graphs whose LayerNorms are decomposed as torch writes them (x - m) / sqrt(v + eps): the
# import's norms divide by the root, where torch's kernel (the shipped file) multiplies by
# 1 / root
# alexlitz-36's original, as its graphs compute it: its embedding leaves <eos> (id 12, never
# an input of an addition) a row of zeros, where the shipped file gives it special = 1
# (docs/spec.md); its v weights are 0.1 / S and -1.1 / S of the Python float
# S = exp(-40 - ln 10), 18 and 11 floats from the e^40 and -11 e^40 the file states exactly
_S = math.exp(-40.0 - math.log(10))
THE_ORIGINALS = {"alexlitz-36": {"W_E": {61: 0.0},
                                 "blocks.0.attn.W_V": {3: -1.1 / _S, 8: 0.1 / _S}}}
DECOMPOSED = {"yinglunz-512.torchscript16"}
# how many floats of the type apart a FOLDED_OTHERWISE value may be (default 1)
FLOATS_APART = {"jackcai1206-234": 2}


def _entry(graph):
    return graph.split(".")[0]


def _graph_file(graph, tmp_path):
    path = tmp_path / f"{graph}.onnx"
    path.write_bytes(gzip.decompress((FIXTURES / f"{graph}.onnx.gz").read_bytes()))
    return path


def _answers(entry):
    return json.loads(gzip.decompress((FIXTURES / f"{entry}.answers.json.gz").read_bytes()))


def _imported(graph, tmp_path):
    return load(_graph_file(graph, tmp_path),
                layouts.load(FIXTURES / f"{_entry(graph)}.layout.json"))


def _weights(model, T, dtype="float64"):
    """Every tensor of the model as tinyadder's exporter writes it at length T in ``dtype``,
    by TransformerLens name: the model's exact values as the floats they are, whatever the
    slots and tokens are called; a fixed bias on and below the diagonal only."""
    out = {}
    if model.mix is not None:  # which the exporter does not write: compared as it is
        out["mix"] = (model.mix.first, model.mix.gain)
        model = replace(model, mix=None)
    for t in export(model, length=T, dtype=dtype).graph.initializer:
        values = t.values
        if t.name.endswith("attn.bias"):
            H, P, _ = t.dims
            values = tuple(values[(h * P + i) * P + j] for h in range(H) for i in range(T)
                           for j in range(i + 1))
        elif ".bias_T." in t.name or t.name.startswith("hook_pos_embed."):
            continue  # the slice of a longer table to T
        elif t.name == "W_pos":  # rows beyond T: no position of the graph reads them
            values = values[:T * t.dims[1]]
        out[t.name] = values
    return out


def _adjacent(a, b, dtype, apart=1):
    """a and b are floats of the type of one sign, ``apart`` (or fewer, but not 0) apart."""
    fmt, bits = ("<f", "<i") if dtype == "float32" else ("<d", "<q")
    return 1 <= abs(struct.unpack(bits, struct.pack(fmt, a))[0] -
                    struct.unpack(bits, struct.pack(fmt, b))[0]) <= apart and \
        (a > 0) == (b > 0)


def _norms(model, dtype):
    """(where, kind, eps as the float of the type) of each norm: a LayerNormalization's eps
    is an attribute, not an initializer ``_weights`` holds."""
    from tinyadder.onnx.messages import DataType
    from tinyadder.onnx.values import stored
    kind = DataType.FLOAT if dtype == "float32" else DataType.DOUBLE
    norms = [("ln_final", model.ln_final)] + [
        (f"{i}.{k}", getattr(b, k, None) or getattr(b.attn, k, None))
        for i, b in enumerate(model.blocks) for k in ("ln1", "ln2", "q_norm", "k_norm")]
    return [(where, n.kind, stored(n.eps, kind)) for where, n in norms if n is not None]


def _applies(model):
    """(where, how) of each RMSNorm: 'divide' or None (multiply by 1 / root)."""
    doc = json.loads(dump(model))
    norms = [("ln_final", doc.get("ln_final"))]
    for i, block in enumerate(doc["blocks"]):
        block = doc["blocks"][block["same_as"]] if "same_as" in block else block
        norms += [(f"{i}.{k}", block.get(k)) for k in ("ln1", "ln2")]
        norms += [(f"{i}.{k}", block["attn"].get(k)) for k in ("q_norm", "k_norm")]
    return [(k, v.get("apply")) for k, v in norms if isinstance(v, dict)]


@pytest.mark.parametrize("graph", CHEAP)
def test_a_real_export_imports_as_the_shipped_model(graph, tmp_path):
    entry = _entry(graph)
    imported = _imported(graph, tmp_path)
    assert imported.name == graph and imported.prompt is not None
    if entry in SHIPPED:
        T, dtype = _answers(entry)["T"], imported.about["dtype"]
        ours, theirs = _weights(imported, T, dtype), _weights(build(SHIPPED[entry]), T, dtype)
        for k, entries in THE_ORIGINALS.get(entry, {}).items():
            theirs[k] = tuple(entries.get(i, v) for i, v in enumerate(theirs[k]))
        differ = (ours.keys() ^ theirs.keys()) | {
            k for k in ours.keys() & theirs.keys() if ours[k] != theirs[k]}
        assert differ == FOLDED_OTHERWISE.get(graph, set())
        apart = FLOATS_APART.get(entry, 1)
        for k in differ & ours.keys() & theirs.keys():  # each a float of the type apart
            assert all(a == b or _adjacent(a, b, dtype, apart)
                       for a, b in zip(ours[k], theirs[k]))
        assert _norms(imported, dtype) == _norms(build(SHIPPED[entry]), dtype)
        # onnxruntime applies every norm as x / root (its fusion of x * (1 / root))
        theirs = {k: v if v != "multiply" else None for k, v in _applies(build(SHIPPED[entry]))}
        # (a LayerNormalization node stays one)
        layer = {where for where, kind, _ in _norms(imported, dtype) if kind == "layer"}
        expected = {k: "divide" if graph.endswith(".ort") and k not in layer or
                    graph in DECOMPOSED else v for k, v in theirs.items()}
        assert dict(_applies(imported)) == expected


def test_onnxruntime_folds_cosminscns_head_into_one_table(tmp_path):
    """cosminscn-66's head (x_acc dim_w) lin, dim_w = 1: onnxruntime folds dim_w lin into one
    row, the shipped file's factors A B multiplied, exactly (x 1 is x: the same floats)."""
    imported, model = _imported("cosminscn-66.torchscript.ort", tmp_path), build("cosminscn-66")
    named = dict(zip(imported.slots, model.slots))  # s0, s1, ...: the file's slots in order
    shipped = model.unembed.W_U
    product = {s: {t: sum(a * shipped.B[z].get(t, 0) for z, a in row.items())
                   for t in shipped.B[shipped.inner[0]]} for s, row in shipped.A.items()}
    assert {named[s]: dict(row) for s, row in imported.unembed.W_U.items()} == product and \
        product["acc"]["9"] == 18


@pytest.mark.parametrize("graph", ["yinglunz-456.torchscript.ort",
                                   "rezabyt-311.torchscript.ort",
                                   "yinglunz-512.torchscript.ort",
                                   pytest.param("yinglunz-512.torchscript.onnxscript",
                                                marks=pytest.mark.slow),
                                   pytest.param("yinglunz-512.dynamo", marks=pytest.mark.slow)])
def test_onnxruntime_folds_factored_positions_by_fused_multiply_adds(graph, tmp_path):
    """onnxruntime's basic optimisation (and onnxscript's optimizer) folds the constant
    product A B of factored positions into one table: each entry the fused multiply-adds
    s = a_k b_k + s (one rounding each) in index order, not the MatMul a run takes (products
    and sums rounded apart); the import reads that table as the graph holds it."""
    entry = _entry(graph)
    T = _answers(entry)["T"]
    ours = _weights(_imported(graph, tmp_path), T, "float32")
    theirs = _weights(build(SHIPPED[entry]), T, "float32")
    A, B = theirs["W_pos.A"], theirs["W_pos.B"]
    r, n = len(A) // T, len(B) * T // len(A)
    fused = []
    for i in range(T):
        for j in range(n):
            total = 0.0
            for k in range(r):
                total = single_of(Fraction(A[i * r + k]) * Fraction(B[k * n + j]) + total)
            fused.append(total)
    assert list(ours["W_pos"]) == fused


@pytest.mark.parametrize("graph", CHEAP)
def test_a_real_export_adds_as_the_original_did(graph, tmp_path):
    record = _answers(_entry(graph))
    imported = _imported(graph, tmp_path)
    number = "float32" if imported.about["dtype"] == "float32" else "float"
    for a, b, total in record["answers"][:3]:
        assert add(imported, number, a, b) == total, (a, b)


@pytest.mark.slow
@pytest.mark.parametrize("graph", GRAPHS)
def test_a_real_export_adds_as_the_original_did_on_every_recorded_pair(graph, tmp_path):
    record = _answers(_entry(graph))
    imported = _imported(graph, tmp_path)
    number = "float32" if imported.about["dtype"] == "float32" else "float"
    assert [add(imported, number, a, b) for a, b, _ in record["answers"]] == \
        [total for _, _, total in record["answers"]]


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_import_writes_a_model_file_every_command_takes(tmp_path):
    graph = _graph_file("fblissjr-33.dynamo", tmp_path)
    layout = str(FIXTURES / "fblissjr-33.layout.json")
    target = tmp_path / "theirs.json"
    assert _cli("import", str(graph), "--layout", layout, "-o", str(target)) == (
        0, f"wrote {target} (fblissjr-33.dynamo: 1 block, 3 slots, 11 tokens)\n", "")
    assert _cli("--model", str(target), "1234567890+9876543210") == (
        0, "1234567890+9876543210=11111111100\n", "")
    assert _cli("--model", str(graph), "--layout", layout, "--number", "float",
                "9999999999+1") == (0, "9999999999+0000000001=10000000000\n", "")
    status, out, err = _cli("--model", str(graph), "1+2")
    assert (status, out) == (2, "") and err.endswith(
        "does not add: it has no prompt; give its layout with --layout FILE.json "
        "(docs/onnx.md)\n")


LAYOUT_REFUSALS = {
    "too few tokens": ({"vocab": [str(d) for d in range(10)], "prompt": {
        "digits": 10, "question": ["a", "0", "b", "0"]}},
        "10 tokens in its vocab; the graph's embedding has 11"),
    "a prompt longer than the graph": ({"vocab": [str(d) for d in range(10)] + ["SEP"],
                                        "prompt": {"digits": 12, "question": ["a", "b"]}},
                                       "its prompt and answer take 36 positions; the graph "
                                       "was exported at 32"),
    "a field of no layout": ({"vocab": ["0"], "prompt": {}, "slots": []},
                             "a JSON object of vocab, prompt and optionally output"),
    "another output": ({"vocab": ["0"], "prompt": {}, "output": "ids"},
                       "output 'ids'; tinyadder reads \"logits\""),
    "output not a string": ({"vocab": ["0"], "prompt": {}, "output": ["token_ids"]},
                            "output ['token_ids']; tinyadder reads \"logits\""),
    "token ids of a graph of logits": (
        {"vocab": [str(d) for d in range(10)] + ["SEP"], "prompt": {
            "digits": 10, "question": ["a", "SEP", "b", "SEP"]}, "output": "token_ids"},
        "output 'token_ids', but the graph's output 'logits' is DOUBLE, logits: the layout "
        "says output \"logits\""),
    "a token not in the vocab": ({"vocab": [str(d) for d in range(10)] + ["SEP"], "prompt": {
        "digits": 10, "question": ["a", "+", "b"]}},
        "prompt.question names '+', not a token of the vocab"),
}


@pytest.mark.parametrize("case", sorted(LAYOUT_REFUSALS))
def test_a_layout_that_does_not_fit_is_refused_in_one_line(case, tmp_path, monkeypatch):
    document, message = LAYOUT_REFUSALS[case]
    monkeypatch.chdir(tmp_path)
    Path("layout.json").write_text(json.dumps(document))
    _graph_file("fblissjr-33.torchscript", tmp_path)
    status, out, err = _cli("import", "fblissjr-33.torchscript.onnx", "--layout", "layout.json")
    assert (status, out) == (2, "") and message in err and err.count("\n") == 1, err


def _token_id_graph(name="published", op="ArgMin", length=4, **attributes):
    """``name``'s export without metadata whose output is token ids: ArgMin of the
    negative-error readout's errors (in place of its Neg), else ``op`` of the logits."""
    from tinyadder.onnx import DataType
    from tinyadder.onnx.builder import attribute
    from tinyadder.onnx.messages import ValueInfo
    graph = replace(export(build(name), length=length), metadata_props=())
    nodes, last = list(graph.graph.node), graph.graph.node[-1]
    attrs = tuple(attribute(k, v) for k, v in {"axis": -1, **attributes}.items()
                  if v is not None)
    if op == "ArgMin" and last.op_type == "Neg":
        nodes[-1] = Node(last.input, ("ids",), "ArgMin", "argmin", attrs)
    else:
        nodes.append(Node((last.output[0],), ("ids",), op, "arg", attrs))
    return _graph(graph, node=tuple(nodes), output=(ValueInfo("ids", DataType.INT64,
                                                              (length, 1)),))


@pytest.mark.parametrize("name, op", [("published", "ArgMin"), ("fblissjr-33", "ArgMax"),
                                      ("fblissjr-33", "ArgMin"), ("kswain98-2", "ArgMax")])
def test_a_graph_that_outputs_token_ids_reads_as_the_logits_they_are_the_first_maximum_of(
        name, op):
    """ArgMax(s) is the readout s; ArgMin(s) the readout -s (exact, and s's first minimum is
    -s's first maximum): of a negative-error readout's errors, that readout; of x @ W + b,
    x @ (-W) + (-b)."""
    from tinyadder.onnx.rewrite import canonical
    from tinyadder.onnx.read import read
    graph = export(build(name), length=4)
    logits = read(canonical(replace(graph, metadata_props=())))
    ids = loads(serialize(_token_id_graph(name, op, keepdims=0)))
    if op == "ArgMin" and logits.unembed.kind == "linear":
        def negated(table):
            return {k: {j: -v for j, v in row.items()} for k, row in table.items()}
        logits = replace(logits, unembed=replace(
            logits.unembed, W_U=negated(logits.unembed.W_U),
            b_U=negated({0: logits.unembed.b_U})[0]))
        assert ids.unembed.W_U["s0"]["t9"] == -18
    assert dump(ids) == dump(logits)


@pytest.mark.parametrize("attributes, message", [
    ({"select_last_index": 1}, "node 'argmin' (ArgMin): select_last_index 1 takes the last "
                               "minimum; the model format's readout takes the first"),
    ({"axis": 0}, "node 'argmin' (ArgMin): token ids over axis 0 of scores [4, 10]; the "
                  "model format's readout is the first maximum over the last axis"),
    ({"axis": 5}, "node 'argmin' (ArgMin): token ids over axis 5 of scores [4, 10]"),
    ({"axis": "-1"}, "node 'argmin' (ArgMin): attribute 'axis' is STRING, where INT goes"),
    ({"keepdims": 0, "noop": 1}, "token ids over axis -1 of scores [4, 10]"),
])
def test_token_ids_the_model_format_cannot_state_are_refused(attributes, message):
    assert message in _refusal(_token_id_graph(**attributes))


def test_a_layout_of_logits_for_a_graph_of_token_ids_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("ids.onnx").write_bytes(serialize(_token_id_graph(length=33)))
    layout = json.loads(Path(FIXTURES / "alexlitz-36.layout.json").read_text())
    Path("logits.json").write_text(json.dumps({**layout, "output": "logits"}))
    Path("ids.json").write_text(json.dumps(layout))
    status, out, err = _cli("import", "ids.onnx", "--layout", "logits.json")
    assert (status, out, err) == (2, "", "tinyadder import: error: ids.onnx: layout "
                                  "logits.json: output 'logits', but the graph's output "
                                  "'ids' is INT64, token ids: the layout says output "
                                  "\"token_ids\"\n")
    status, out, err = _cli("--model", "ids.onnx", "--layout", "ids.json", "--number",
                            "fraction", "9999999999+1")
    assert (status, out, err) == (0, "9999999999+0000000001=10000000000\n", "")


@pytest.mark.parametrize("graph", [  # by default each entry's first refused graph (CPU)
    g if g == min(r for r in REFUSED if _entry(r) == _entry(g)) else
    pytest.param(g, marks=pytest.mark.slow) for g in REFUSED])
def test_a_real_export_the_patterns_do_not_reach_is_refused_in_one_line(graph, tmp_path):
    """What these graphs need (docs/onnx.md, "What imports, entry by entry"): ScatterND of
    non-constants, heads stacked by Concat and Expand, Unsqueeze outside folding, interleaved
    RoPE, transposes an optimiser moved through a head's slices, the last position only."""
    with pytest.raises(OnnxError) as caught:
        load(_graph_file(graph, tmp_path))
    message = str(caught.value)
    assert "\n" not in message and ("node " in message or "operator" in message), message


# ---- tinyadder's own exports after an optimiser (tests/fixtures/onnx/own) -----------------
#
# tools/export/optimise_own.py: ``tinyadder export NAME --onnx --length 8`` rewritten by
# onnxscript.optimizer.optimize and by onnxruntime's ORT_ENABLE_BASIC. The optimisers rename,
# share and fold initializers, so tinyadder.exact.* names none; such a graph is read as
# another tool's, and must store the model in its metadata weight for weight.

OWN = FIXTURES / "own"
OWN_ALL = sorted(p.name[:-len(".onnx.gz")] for p in OWN.glob("*.onnx.gz"))
# onnxruntime applies yieldthought-20's and wonderfall-27's norms as x / root, where they
# multiply by 1 / root (another float program: the model file says which); onnxscript drops
# rezabyt-311's final norm's Add of eps (10^-8)
# and yinglunz-456's (likewise); onnxscript folds yinglunz-512's factored positions A B into
# one table (by fused multiply-adds, as
# test_onnxruntime_folds_factored_positions_by_fused_multiply_adds shows); onnxruntime folds
# the rotary cos and sin of bingbangboom-lab's and xangma's with its float64 Cos, which puts
# cos(11) 494 floats from the correctly rounded value (not the model's cos)
ROTARY_ORT = [f"{n}.ort" for n in ("bingbangboom-lab-148", "bingbangboom-lab-87",
                                   "xangma-177", "xangma-197")]
OWN_REFUSED = ["rezabyt-311.onnxscript", "wonderfall-27.ort", "yieldthought-20.ort",
               "yinglunz-456.onnxscript", "yinglunz-512.onnxscript"] + ROTARY_ORT
# the default suite reads the optimisers' forms of four models (two with rotary tables)
OWN_CHEAP = {f"{name}.{optimiser}" for name in ("published", "fblissjr-33", "kswain98-2",
                                                 "jacobli99-28")
             for optimiser in ("onnxscript", "ort")} | {"jackcai1206-234.onnxscript"}
OWN_READ = [pytest.param(g, marks=() if g in OWN_CHEAP else pytest.mark.slow)
            for g in OWN_ALL if g not in OWN_REFUSED]


def test_the_optimised_exports_are_every_shipped_models():
    """Every shipped model's export after onnxscript (35: lokimorty-39's mixed block is not
    exported) and after onnxruntime (29: it has no float64 Erf for the GELU of evindor-57,
    -67, rezabyt-311, yinglunz-456, yinglunz-512 and jackcai1206-234): 55 of 64 read back."""
    from tinyadder.models import names
    exported = [n for n in names() if n != "lokimorty-39"]
    no_ort = {"evindor-57", "evindor-67", "rezabyt-311", "yinglunz-456", "yinglunz-512",
              "jackcai1206-234"}
    assert OWN_ALL == sorted([f"{n}.onnxscript" for n in exported] +
                             [f"{n}.ort" for n in exported if n not in no_ort])
    assert (len(exported), len(OWN_ALL), len(OWN_READ)) == (35, 64, 55)


def _own(name, tmp_path):
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(gzip.decompress((OWN / f"{name}.onnx.gz").read_bytes()))
    return path


@pytest.mark.parametrize("graph", OWN_READ)
def test_an_optimised_export_reads_back_to_the_same_model(graph, tmp_path):
    assert dump(load(_own(graph, tmp_path))) == dump(build(graph.split(".")[0]))


@pytest.mark.parametrize("graph", [g if g in OWN_REFUSED[:3] + ["yinglunz-512.onnxscript"]
                                   else pytest.param(g, marks=pytest.mark.slow)
                                   for g in OWN_REFUSED])
def test_an_optimised_export_not_read_yet_is_refused_in_one_line(graph, tmp_path):
    """Another float program than the model file in their metadata (OWN_REFUSED)."""
    with pytest.raises(OnnxError) as caught:
        load(_own(graph, tmp_path))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("steps, read", [(5, True), (9, False)])
def test_a_folded_rotary_table_is_read_within_eight_floats_of_cos(steps, read, tmp_path):
    """onnxruntime folds kswain98-2's Cos and Sin with its own kernels, up to 5 floats from
    the correctly rounded values; the import takes a table within RUNTIME_ULPS (8) of cos and
    sin of p f for a frequency f of the model in its metadata, and no further."""
    from tinyadder.onnx import parse, serialize as write
    from tinyadder.onnx.read import RUNTIME_ULPS
    graph = parse(_own("kswain98-2.ort", tmp_path).read_bytes())
    cos = next(t for t in graph.graph.initializer if t.name == "blocks.0.attn.rope_cos")
    moved = list(cos.values)
    for _ in range(steps):
        moved[3] = math.nextafter(moved[3], math.inf)
    # both copies of the table: q's as folded, k's as the transpose optimiser left it
    inits = tuple(replace(t, values=tuple(moved)) if t.values == cos.values else t
                  for t in graph.graph.initializer)
    assert sum(t.values == tuple(moved) for t in inits) == 2
    data = write(replace(graph, graph=replace(graph.graph, initializer=inits)))
    assert RUNTIME_ULPS == 8
    if read:
        assert dump(loads(data)) == dump(build("kswain98-2"))
    else:
        with pytest.raises(OnnxError, match="rotary table column 0 is not cos and sin"):
            loads(data)


def test_an_optimised_export_whose_weights_were_changed_is_refused(tmp_path):
    from tinyadder.onnx import parse, serialize as write
    graph = parse(_own("fblissjr-33.ort", tmp_path).read_bytes())
    inits = tuple(replace(t, values=(t.values[0] + 1,) + tuple(t.values[1:]))
                  if t.dims == (3, 11) else t for t in graph.graph.initializer)
    assert any(t.dims == (3, 11) for t in inits)
    with pytest.raises(OnnxError, match="its weights are not those of 'fblissjr-33'"):
        loads(write(replace(graph, graph=replace(graph.graph, initializer=inits))))


# ---- hostile graphs through the rewrite ---------------------------------------------------

from tinyadder.onnx import DataType, parse


def _torch_graph(tmp_path):
    return parse(_graph_file("fblissjr-33.torchscript", tmp_path).read_bytes())


def _prepend(graph, *nodes, inits=()):
    return replace(graph, graph=replace(graph.graph, node=tuple(nodes) + graph.graph.node,
                                        initializer=graph.graph.initializer + tuple(inits)))


def _int64(name, values, dims=None):
    return Tensor(name, DataType.INT64, (len(values),) if dims is None else dims,
                  tuple(values))


HOSTILE = {
    "a constant of 10^9 elements, by ConstantOfShape": (
        lambda g: _prepend(g, Node(("huge.shape",), ("huge",), "ConstantOfShape", "huge"),
                           inits=(_int64("huge.shape", [1000, 1000, 1000]),)),
        "node 'huge' (ConstantOfShape): a constant of shape [1000, 1000, 1000] (limit "
        "elements"),
    "an Expand to 10^10 elements": (
        lambda g: _prepend(g, Node(("one", "big.shape"), ("big",), "Expand", "big"),
                           inits=(_int64("one", [1]), _int64("big.shape", [10 ** 5, 10 ** 5]))),
        "node 'big' (Expand): a folded constant of 10,000,000,000 elements"),
    "a Range of 10^12 steps": (
        lambda g: _prepend(g, Node(("r0", "r1", "r2"), ("r",), "Range", "range"),
                           inits=(_int64("r0", [0], ()), _int64("r1", [10 ** 12], ()),
                                  _int64("r2", [1], ()))),
        "node 'range' (Range): a Range of 1,000,000,000,000 elements"),
    "a Cast to strings": (
        lambda g: _prepend(g, Node(("c0",), ("c",), "Cast", "cast", (
            Attribute("to", AttributeType.INT, 8),)), inits=(_int64("c0", [1]),)),
        "node 'cast' (Cast): cannot be folded: a Cast to type 8"),
    "a Reshape to a shape of floats": (
        lambda g: _prepend(g, Node(("c0", "s"), ("c",), "Reshape", "reshape"),
                           inits=(_int64("c0", [1, 2]),
                                  Tensor("s", DataType.DOUBLE, (1,), (0.5,)))),
        "node 'reshape' (Reshape): cannot be folded: DOUBLE values where integers go"),
    "an unknown opset": (
        lambda g: replace(g, opset_import=(replace(g.opset_import[0], version=99),)),
        "opset 99: tinyadder reads opsets 13 to 23"),
    "a cycle": (
        lambda g: replace(g, graph=replace(g.graph, node=(replace(
            g.graph.node[0], input=(g.graph.node[3].output[0],)),) + g.graph.node[1:])),
        "node 'Identity_4' (Identity): input '/block/Constant_output_0' is defined by no "
        "initializer, graph input or earlier node"),
    "tokens of 10^12 positions": (
        lambda g: replace(g, graph=replace(g.graph, input=(replace(
            g.graph.input[0], shape=(1, 10 ** 12)),))),
        "graph input 'tokens': shape [1, 1000000000000] makes 1,000,000,000,000 elements "
        "(limit elements, 4,194,304)"),
    "a string where an integer goes": (
        lambda g: _prepend(g, Node(("c0", "i0"), ("c",), "Gather", "gather", (
            Attribute("axis", AttributeType.STRING, b"0"),)),
            inits=(_int64("c0", [1, 2]), _int64("i0", [0]))),
        "node 'gather' (Gather): attribute 'axis' is STRING, where INT goes"),
    "a ScatterND outside its data": (
        lambda g: _prepend(g, Node(("d0", "i0", "u0"), ("s",), "ScatterND", "scatter"),
                           inits=(_int64("d0", [1, 2, 3]), _int64("i0", [7], (1, 1)),
                                  _int64("u0", [5]))),
        "node 'scatter' (ScatterND): cannot be folded: index [7] outside dims [3]"),
    "a GatherND outside its data": (
        lambda g: _prepend(g, Node(("d0", "i0"), ("s",), "GatherND", "gather"),
                           inits=(_int64("d0", [1, 2, 3, 4], (2, 2)),
                                  _int64("i0", [-3, 0], (1, 2)))),
        "node 'gather' (GatherND): cannot be folded: index [-3, 0] outside dims [2, 2]"),
    "a Squeeze of an axis of 3": (
        lambda g: _prepend(g, Node(("d0", "a0"), ("s",), "Squeeze", "squeeze"),
                           inits=(_int64("d0", [1, 2, 3]), _int64("a0", [0]))),
        "node 'squeeze' (Squeeze): cannot be folded: a Squeeze of an axis of length other "
        "than 1 (dims [3])"),
    "an Unsqueeze past the rank": (
        lambda g: _prepend(g, Node(("d0", "a0"), ("s",), "Unsqueeze", "unsqueeze"),
                           inits=(_int64("d0", [1, 2, 3]), _int64("a0", [99]))),
        "node 'unsqueeze' (Unsqueeze): cannot be folded: axis 99 outside a rank of 2"),
    "a Concat of two ranks": (
        lambda g: _prepend(g, Node(("d0", "d1"), ("s",), "Concat", "concat", (
            Attribute("axis", AttributeType.INT, 0),)),
            inits=(_int64("d0", [1, 2, 3, 4], (2, 2)), _int64("d1", [1, 2]))),
        "node 'concat' (Concat): cannot be folded: a Concat of [[2, 2], [2]] on axis 0"),
    "a Transpose by no permutation": (
        lambda g: _prepend(g, Node(("d0",), ("s",), "Transpose", "transpose", (
            Attribute("perm", AttributeType.INTS, (0, 0)),)),
            inits=(_int64("d0", [1, 2, 3, 4], (2, 2)),)),
        "node 'transpose' (Transpose): cannot be folded: perm [0, 0] is not a permutation of "
        "2 axes"),
    "a Tile by -3": (
        lambda g: _prepend(g, Node(("d0", "r0"), ("s",), "Tile", "tile"),
                           inits=(_int64("d0", [1, 2]), _int64("r0", [-3]))),
        "node 'tile' (Tile): cannot be folded: a Tile of [2] by [-3]"),
    "a Range of infinitely many steps": (
        lambda g: _prepend(g, Node(("r0", "r1", "r2"), ("r",), "Range", "range"), inits=(
            Tensor("r0", DataType.DOUBLE, (), (0.0,)), Tensor("r1", DataType.DOUBLE, (), (1e300,)),
            Tensor("r2", DataType.DOUBLE, (), (1e-300,)))),
        "node 'range' (Range): a Range of inf elements (limit elements, 4,194,304)"),
    "an Einsum with an ellipsis": (
        lambda g: _prepend(g, Node(("e0", "e0"), ("e",), "Einsum", "einsum", (
            Attribute("equation", AttributeType.STRING, b"...i,...i->..."),)),
            inits=(Tensor("e0", DataType.DOUBLE, (2,), (1.0, 2.0)),)),
        "node 'einsum' (Einsum): cannot be folded: an Einsum of 2 operands written "
        "'...i,...i->...' (tinyadder takes words of distinct letters, no '...')"),
    "an Einsum of values with an ellipsis": (
        lambda g: _prepend(g, Node(("tokens", "tokens"), ("e",), "Einsum", "einsum", (
            Attribute("equation", AttributeType.STRING, b"...i,...i->..."),))),
        "node 'einsum' (Einsum): the shape of its output is not known"),
    "an Einsum of too many products": (
        lambda g: _prepend(g, Node(("e0", "e0"), ("e",), "Einsum", "einsum", (
            Attribute("equation", AttributeType.STRING, b"i,j->ij"),)),
            inits=(Tensor("e0", DataType.DOUBLE, (4096,), (1.0,) * 4096),)),
        "node 'einsum' (Einsum): an Einsum of more products than the limit"),
}


def _tensor_edited(graph, old, new):
    """The graph's bytes with one more initializer 'huge' whose own bytes ``old`` (dims
    [1, 1, 1], DOUBLE, doc_string 'xx') are ``new``: what the message classes will not make."""
    tensor = Tensor("huge", DataType.DOUBLE, (1, 1, 1), (0.0,), raw=True, doc_string="xx")
    data = serialize(replace(graph, graph=replace(
        graph.graph, initializer=graph.graph.initializer + (tensor,))))
    assert len(old) == len(new) and serialize(tensor).count(old) == 1
    return data.replace(serialize(tensor), serialize(tensor).replace(old, new))


# declared in the file's bytes: a tensor of 10^9 elements (dims [10^9], 8 bytes of data), one
# whose data is in another file (data_location EXTERNAL), one of strings (data_type STRING)
HOSTILE_BYTES = {
    "a tensor of 10^9 elements": (
        bytes.fromhex("080108010801"), bytes.fromhex("088094ebdc03"),
        "tensor 'huge': dims [1000000000] make 1000000000 elements, over the limit of "
        "4194304 (limit elements)"),
    "external data": (bytes.fromhex("62027878"), bytes.fromhex("70016200"),
                      "data_location 1 (EXTERNAL: external data) is not supported"),
    "strings where numbers go": (
        bytes.fromhex("100b"), bytes.fromhex("1008"),
        "tensor 'huge': data type 8 (STRING) is not supported"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_graph_is_refused_in_one_line(case, tmp_path):
    edit, message = HOSTILE[case]
    graph = edit(_torch_graph(tmp_path))
    path = tmp_path / "hostile.onnx"
    path.write_bytes(serialize(graph))
    with pytest.raises(OnnxError) as caught:
        loads(serialize(graph))
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def _hostile_files(tmp_path):
    graph = _torch_graph(tmp_path)
    for case, (edit, message) in HOSTILE.items():
        yield case, serialize(edit(graph)), message
    for case, (old, new, message) in HOSTILE_BYTES.items():
        yield case, _tensor_edited(graph, old, new), message


def test_hostile_graphs_on_the_command_line_exit_2_in_one_line(tmp_path, monkeypatch):
    """Each hostile graph: exit 2, one line, within 1 s of CPU; two that declare sizes, in
    under 64 MB of Python memory (the clean graph's import peaks at 35 MB traced): what a file
    declares is never allocated."""
    monkeypatch.chdir(tmp_path)
    sizes = {"a constant of 10^9 elements, by ConstantOfShape", "tokens of 10^12 positions"}
    for case, data, message in _hostile_files(tmp_path):
        Path("hostile.onnx").write_bytes(data)
        started = time.process_time()
        if case in sizes:
            tracemalloc.start()
        try:
            status, out, err = _cli("import", "hostile.onnx", "--layout",
                                    str(FIXTURES / "fblissjr-33.layout.json"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (status, out) == (2, "") and err.count("\n") == 1 and message in err, (case, err)
        assert time.process_time() - started < 1 and peak < 64 * 2 ** 20, (case, peak)


class NoMetadata(random.Random):
    """The graph has no metadata to edit (_mutate's kind 6): edit something else."""

    def randrange(self, *args):
        return super().randrange(*args) % 6 if args == (7,) else super().randrange(*args)


def test_a_torch_graph_survives_mutations(tmp_path):
    from test_onnx import _fuzz

    # the dynamo graph: no Constant node, whose missing inputs would send _mutate to kind 6
    graph = parse(_graph_file("fblissjr-33.dynamo", tmp_path).read_bytes())
    outcomes = _fuzz(range(40), graph, NoMetadata)
    assert outcomes["refused"] > 20 and outcomes["read"] > 0, outcomes


# the hand-coded entries, which prove; the trained ones do not within the board's budget
PROVED = ("fblissjr-33", "kswain98-8", "yieldthought-20", "jacobli99-28", "jacobli99-93",
          "cosminscn-66", "cosminscn-130")
# an import whose real-number model is not its shipped file's: prasannakotyal-116's scale is
# a b (the float32 scales of q and k) and its eps the float32 of 10^-6, where nino-116's file
# states 1/sqrt(2) and 10^-6 (the same floats, not the same reals); its digits are decided by
# two float32 ulps of logits near 1000, so the undecided regions at a budget differ too
OTHER_REGIONS = {"prasannakotyal-116"}


@pytest.mark.slow
@pytest.mark.parametrize("entry", PROVED)
def test_the_import_proves_as_the_shipped_file_does(entry, tmp_path):
    """An entry's import (its first form that imports) and its shipped file: the same
    verdict over all 10^20 pairs."""
    verdicts = []
    for model in (str(_graph_file(f"{entry}.{IMPORTS[entry][0]}", tmp_path)), SHIPPED[entry]):
        extra = ["--layout", str(FIXTURES / f"{entry}.layout.json")] * model.endswith(".onnx")
        status, out, err = _cli("prove", "--carries-first", "--model", model, *extra)
        verdicts.append((status, [line.split(":")[0] for line in out.splitlines()
                                  if line.startswith(("proved", "fails"))]))
    assert verdicts[0] == verdicts[1] == (0, ["proved"]), verdicts


@pytest.mark.slow
def test_an_import_that_fails_fails_as_the_shipped_file_does(tmp_path):
    """alexlitz-36's import (its TorchScript graph, read as the float values it holds) and
    its shipped file: both verdicts 'fails', and each pair the import's proof names is added
    wrong by the shipped file too, to the same sum (exact runs)."""
    graph = _graph_file("alexlitz-36.torchscript", tmp_path)
    runs = [_cli("prove", "--model", str(graph), "--layout",
                 str(FIXTURES / "alexlitz-36.layout.json")), _cli("prove", "--model",
                                                                  "alexlitz-36")]
    assert [(status, "\nfails: " in out) for status, out, _ in runs] == [(1, True)] * 2, runs
    pairs = re.findall(r"^ +(\d+)\+(\d+)=(\d+)", runs[0][1], re.M)
    shipped = build("alexlitz-36")
    assert pairs and all(add(shipped, "fraction", int(a), int(b)) == int(c) != int(a) + int(b)
                         for a, b, c in pairs), pairs


@pytest.mark.slow
@pytest.mark.parametrize("entry", [e for e in SHIPPED if e not in PROVED + ("alexlitz-36",)])
def test_a_trained_import_proves_at_a_budget_as_the_shipped_file_does(entry, tmp_path):
    """A trained entry's import (its first form that imports) and its shipped file, by the
    generic method at a budget of 3 sets: the same status and the same undecided regions."""
    runs = []
    graph = _graph_file(f"{entry}.{IMPORTS[entry][0]}", tmp_path)
    for model in (str(graph), SHIPPED[entry]):
        extra = ["--layout", str(FIXTURES / f"{entry}.layout.json")] * model.endswith(".onnx")
        status, out, err = _cli("prove", "--max-sets", "3", "--model", model, *extra)
        runs.append((status, [line for line in out.splitlines()
                              if line.lstrip().startswith(("answer position", "proved",
                                                           "fails"))]))
    if entry in OTHER_REGIONS:
        assert runs[0][0] == runs[1][0] == 3 and runs[0][1] and runs[1][1], runs
    else:
        assert runs[0] == runs[1] and runs[0][0] == 3 and runs[0][1], runs


def test_an_einsum_of_constants_folds_in_the_graphs_type():
    """An outer product (rotary positions times frequencies, as lokimorty-39 writes it) and a
    contraction, each product and partial sum rounded once in float32, in index order."""
    from tinyadder.onnx.messages import float32
    from tinyadder.onnx.rewrite import _Const, _fold_einsum

    def einsum(equation, a, b):
        node = Node(("a", "b"), ("c",), "Einsum", "e",
                    (Attribute("equation", AttributeType.STRING, equation),))
        c = _fold_einsum(None, node, [_Const(DataType.FLOAT, *a), _Const(DataType.FLOAT, *b)])
        return list(c.dims), list(c.values)
    third = float32(1 / 3)
    assert einsum(b"i,j->ij", ((2,), [1.0, 2.0]), ((3,), [0.5, third, 3.0])) == (
        [2, 3], [0.5, third, 3.0, 1.0, float32(2 * third), 6.0])
    big, tiny = 2.0 ** 24, 1.0
    # (2^24 + 1) + 1 in float32 is 2^24 twice over: the sum's order is the graph's
    assert einsum(b"ij,jk->ik", ((1, 3), [big, tiny, tiny]), ((3, 1), [1.0, 1.0, 1.0])) == (
        [1, 1], [big])


def test_a_computed_embedding_and_einsum_attention_are_rewritten(tmp_path):
    """jacobli99-28 computes its embedding per token ([C - (eps/2) d^2, d] of
    digit_values[tokens]) and attends by Einsum: the rewrite makes the embedding one table,
    equal to the shipped file's W_E in float32, and the Einsums q @ k^T and p @ v."""
    from tinyadder.onnx.rewrite import _einsums, _Graph, _token_tables
    g = _Graph(parse(_graph_file("jacobli99-28.torchscript", tmp_path).read_bytes()))
    g.fold()
    _token_tables(g)
    _einsums(g)
    embed = g.nodes[0]
    assert (embed.op_type, embed.input[1]) == ("Gather", "tokens")
    table = g.consts[embed.input[0]]
    W_E = next(t for t in export(build("jacobli99-28"), length=34, dtype="float32")
               .graph.initializer if t.name == "W_E")
    assert (tuple(table.dims), tuple(table.values)) == (W_E.dims, W_E.values)
    assert not any(n.op_type == "Einsum" for n in g.nodes)
    scores, z = [n for n in g.nodes if n.op_type == "MatMul"][:2]
    k_T = next(n for n in g.nodes if n.output[0] == scores.input[1])
    assert (k_T.op_type, k_T.attribute[0].value, z.input[0]) == (
        "Transpose", (0, 1, 3, 2), "/Softmax_output_0")


def test_the_rewrite_folds_shape_arithmetic_exactly():
    """A causal mask built from shapes as exporters write it (Shape, Range, Unsqueeze, Trilu,
    Equal, Where, ScatterND, GatherND, Cast) folds to constants, float32 in float32."""
    from tinyadder.onnx import Graph, Model, OperatorSetId, ValueInfo
    from tinyadder.onnx.rewrite import canonical
    f32 = DataType.FLOAT
    nodes = (
        Node(("x",), ("shape",), "Shape", "shape"),
        Node(("shape", "zero"), ("T",), "Gather", "T", (Attribute("axis", AttributeType.INT,
                                                                  0),)),
        Node(("start", "T", "step"), ("range",), "Range", "range"),
        Node(("ones", "tri_k"), ("upper",), "Trilu", "upper"),
        Node(("upper", "ones"), ("same",), "Equal", "same"),
        Node(("same", "neg", "pos"), ("where",), "Where", "where"),
        Node(("where", "ij", "upd"), ("scattered",), "ScatterND", "scatter"),
        Node(("scattered", "ij"), ("gathered",), "GatherND", "gather"),
        Node(("third", "three"), ("tenth",), "Div", "tenth"),
        Node(("gathered", "tenth"), ("sum",), "Add", "sum"),
        Node(("x", "sum"), ("y",), "Add", "y"),
    )
    inits = (
        Tensor("zero", DataType.INT64, (), (0,)), Tensor("start", DataType.INT64, (), (0,)),
        Tensor("step", DataType.INT64, (), (1,)), Tensor("tri_k", DataType.INT64, (), (1,)),
        Tensor("ones", f32, (2, 2), (1.0,) * 4), Tensor("neg", f32, (), (-2.0,)),
        Tensor("pos", f32, (), (3.0,)),
        Tensor("ij", DataType.INT64, (1, 2), (1, 0)), Tensor("upd", f32, (1,), (5.0,)),
        Tensor("third", f32, (), (1.0,)), Tensor("three", f32, (), (3.0,)),
    )
    graph = Graph(nodes, "g", inits, input=(ValueInfo("x", f32, (2, 2)),),
                  output=(ValueInfo("y", f32, (2, 2)),))
    out = canonical(Model(8, graph, (OperatorSetId("", 18),))).graph
    assert [n.op_type for n in out.node] == ["Add"]
    folded = {t.name: t for t in out.initializer}[out.node[0].input[1]]
    # where = [[3, -2], [3, 3]] (Equal of Trilu(ones, 1) and ones); scatter puts 5 at (1, 0);
    # GatherND reads it back; 1/3 in float32 is 0.3333333432674408, and 5 + it rounds to
    # float32 as 5.333333492279053
    third = struct.unpack("<f", struct.pack("<f", 1 / 3))[0]
    assert folded.dims == (1,) and folded.values == (
        struct.unpack("<f", struct.pack("<f", 5.0 + third))[0],)


@pytest.mark.parametrize("order", ["scores first", "fill first"])
def test_a_where_mask_is_the_causal_mask(order, tmp_path):
    """fblissjr-33's torch graph with its mask written as Where(causal, scores, -inf), in
    either order of Where's branches, reads as the same model."""
    graph = _torch_graph(tmp_path)
    table = next(t for t in graph.graph.initializer if t.dims == (1, 3, 32, 32))
    add = next(n for n in graph.graph.node if table.name in n.input)
    scores = next(x for x in add.input if x != table.name)
    T = 32
    keep = tuple(j <= i for i in range(T) for j in range(T))
    bias = Tensor("bias", table.data_type, table.dims, tuple(
        v if keep[k % (T * T)] else 0.0 for k, v in enumerate(table.values)))
    flags = Tensor("causal", DataType.BOOL, (T, T),
                   keep if order == "scores first" else tuple(not k for k in keep))
    fill = Tensor("fill", table.data_type, (), (-math.inf,))
    branches = (scores + ".biased", "fill") if order == "scores first" else \
        ("fill", scores + ".biased")
    nodes = []
    for n in graph.graph.node:
        if n is add:
            nodes.append(Node((scores, "bias"), (scores + ".biased",), "Add", "biased"))
            n = Node(("causal",) + branches, add.output, "Where", "where")
        nodes.append(n)
    edited = replace(graph, graph=replace(graph.graph, node=tuple(nodes), initializer=tuple(
        t for t in graph.graph.initializer if t is not table) + (bias, flags, fill)))
    layout = layouts.load(FIXTURES / "fblissjr-33.layout.json")
    assert dump(loads(serialize(edited), layout)) == dump(loads(serialize(graph), layout))


@pytest.mark.parametrize("width", [2, 3])
def test_a_weighted_norm_with_reducemean_reads_and_its_weight_fits(width):
    """An RMSNorm whose mean is ReduceMean (torch's) states no count: with a weight it was
    refused ("a weight of 2 values over None"); its weight must have one value per slot."""
    from tinyadder.onnx import Graph, Model, OperatorSetId, ValueInfo
    D = DataType.DOUBLE
    nodes = (
        Node(("W_E", "tokens"), ("x",), "Gather", "embed"),
        Node(("x", "x"), ("sq",), "Mul", "sq"),
        Node(("sq", "axes"), ("mean",), "ReduceMean", "mean"),
        Node(("mean", "eps"), ("shifted",), "Add", "shifted"),
        Node(("shifted",), ("root",), "Sqrt", "root"),
        Node(("x", "root"), ("normed",), "Div", "normed"),
        Node(("normed", "w"), ("scaled",), "Mul", "scaled"),
        Node(("scaled", "W_U"), ("logits",), "MatMul", "logits"),
    )
    inits = (Tensor("W_E", D, (3, 2), (0.0, 1.0, 1.0, 0.0, 1.0, 1.0)),
             Tensor("axes", DataType.INT64, (1,), (-1,)), Tensor("eps", D, (), (0.5,)),
             Tensor("w", D, (width,), (1.0, 2.0, 3.0)[:width]),
             Tensor("W_U", D, (2, 3), (1.0,) * 6))
    graph = Graph(nodes, "g", inits, input=(ValueInfo("tokens", DataType.INT64, (4,)),),
                  output=(ValueInfo("logits", D, (4, 3)),))
    data = serialize(Model(8, graph, (OperatorSetId("", 18),)))
    if width == 3:
        with pytest.raises(OnnxError, match="an RMSNorm weight of 3 values over 2 lanes"):
            loads(data)
    else:
        model = loads(data)
        assert model.ln_final.mean == "divide" and model.ln_final.w == {"s0": 1, "s1": 2}


def test_a_sum_lane_by_lane_is_a_matmul_only_in_the_graphs_order():
    """(x0 a + x1 b) + x2 c is the MatMul's order, one stage; x2 c + (x0 a + x1 b) rounds
    x0 a + x1 b first: two inner lanes, summed by a second MatMul; (x1 - x0) c rounds the
    difference first: a stage of its own (W = A B); x0 a + x0 b two inner lanes; a sum whose
    second term is itself a sum is made first, a stage before."""
    from tinyadder.onnx.rewrite import _add, _Lin

    def lane(i, w):
        return _Lin("x", 3, [[((i, w),)]])

    inner = _add(lane(0, 2.0), lane(1, 3.0), 1)
    assert _add(inner, lane(2, 5.0), 1).stages == [[((0, 2.0), (1, 3.0), (2, 5.0))]]
    assert _add(lane(2, 5.0), inner, 1).stages == [
        [((2, 5.0),), ((0, 2.0), (1, 3.0))], [((0, 1.0), (1, 1.0))]]
    difference = _add(lane(1, 1.0), lane(0, 1.0), -1)
    assert difference.stages == [[((0, -1.0), (1, 1.0))]]
    scaled = difference.scale([0.5])
    assert scaled.stages == [[((0, -1.0), (1, 1.0))], [((0, 0.5),)]]
    assert _add(lane(0, 2.0), lane(0, 3.0), 1).stages == [
        [((0, 2.0),), ((0, 3.0),)], [((0, 1.0), (1, 1.0))]]
    assert _add(lane(0, 2.0), _add(scaled, lane(2, 5.0), 1), 1).stages == [
        [((0, 2.0),), ((0, -1.0), (1, 1.0)), ((2, 5.0),)],
        [((0, 1.0),), ((1, 0.5), (2, 1.0))],
        [((0, 1.0), (1, 1.0))]]
    assert _add(lane(0, 2.0), _Lin("y", 3, [[((0, 1.0),)]]), 1) is None


def _folded(nodes, inits, x_type=DataType.FLOAT):
    """The graph's values after the fold: {name: values} of its constants, and its nodes."""
    from tinyadder.onnx import Graph, Model, OperatorSetId, ValueInfo
    from tinyadder.onnx.rewrite import _Graph
    graph = Graph(nodes, "g", inits, input=(ValueInfo("x", x_type, (2,)),),
                  output=(ValueInfo("y", DataType.FLOAT, (2,)),))
    g = _Graph(Model(8, graph, (OperatorSetId("", 18),)))
    g.fold()
    return {k: c.values for k, c in g.consts.items()}, [n.op_type for n in g.nodes]


def test_a_pow_of_constants_folds_only_where_its_value_is_certified():
    """dimopep-140's 3 ** [0, 1/2] (its rotary frequencies' denominators): an integer power
    is the float's exact power rounded once, 1/2 the correctly rounded root; 3 ** (1/4) has
    no certified value here and stays a Pow."""
    from tinyadder.onnx.messages import float32
    f32 = DataType.FLOAT
    nodes = (Node(("three", "exps"), ("powers",), "Pow", "powers"),
             Node(("three", "quarter"), ("root4",), "Pow", "root4"),
             Node(("x", "root4"), ("y",), "Mul", "y"))
    inits = (Tensor("three", f32, (), (3.0,)), Tensor("exps", f32, (4,), (0.0, 0.5, 2.0, -1.0)),
             Tensor("quarter", f32, (), (0.25,)))
    consts, ops = _folded(nodes, inits)
    assert consts["powers"] == [1.0, float32(math.sqrt(3.0)), 9.0, single_of(Fraction(1, 3))]
    assert "root4" not in consts and ops == ["Pow", "Mul"]


def test_cos_and_sin_fold_correctly_rounded_unless_the_data_reads_them():
    """A token arc's cos and sin of constant angles (vijec-52, evindor's) fold, each value the
    float32 nearest the true cos or sin (single_of of a 200-bit enclosure whose ends agree);
    Cos of angles that q reads through an Unsqueeze (a rotary table) stays a Cos, for the
    reader to match with its angles. A Cast of x to the type x has is x itself."""
    from tinyadder.numbers import elementary
    f32 = DataType.FLOAT
    nodes = (Node(("angles",), ("cos",), "Cos", "cos"),
             Node(("angles",), ("sin",), "Sin", "sin"),
             Node(("cos", "sin"), ("arc",), "Add", "arc"),
             Node(("rotary_angles",), ("table",), "Cos", "table"),
             Node(("table", "axis"), ("table1",), "Unsqueeze", "table1"),
             Node(("x",), ("x32",), "Cast", "x32", (Attribute("to", AttributeType.INT, 1),)),
             Node(("x32", "table1"), ("turned",), "Mul", "turned"),
             Node(("turned", "arc"), ("y",), "Add", "y"))
    angles = (1.0, 0.7853981852531433)  # 1 and pi/4 in float32
    inits = (Tensor("angles", f32, (2,), angles), Tensor("rotary_angles", f32, (2,), (0.0, 1.0)),
             Tensor("axis", DataType.INT64, (1,), (0,)))
    consts, ops = _folded(nodes, inits)

    def nearest(op, a):
        lo, hi = getattr(elementary, op)(Fraction(a), 200)
        assert single_of(lo) == single_of(hi)
        return single_of(lo)
    assert consts["cos"] == [nearest("cos", a) for a in angles]
    assert consts["sin"] == [nearest("sin", a) for a in angles]
    assert consts["cos"][0] == 0.5403022766113281
    assert "table" not in consts and ops == ["Cos", "Unsqueeze", "Cast", "Mul", "Add"]
    from tinyadder.onnx import Graph, Model, OperatorSetId, ValueInfo
    from tinyadder.onnx.rewrite import canonical
    graph = Graph(nodes, "g", inits, input=(ValueInfo("x", f32, (2,)),),
                  output=(ValueInfo("y", f32, (2,)),))
    out = canonical(Model(8, graph, (OperatorSetId("", 18),))).graph
    assert "Cast" not in [n.op_type for n in out.node]


def _with_constant(graph, name, values):
    """``graph`` with the Constant node that writes ``name`` writing ``values`` instead."""
    def edited(node):
        if node.op_type != "Constant" or node.output != (name,):
            return node
        t = node.attribute[0].value
        return replace(node, attribute=(replace(node.attribute[0], value=Tensor(
            t.name, t.data_type, t.dims, tuple(values))),))
    return replace(graph, graph=replace(graph.graph, node=tuple(
        edited(n) for n in graph.graph.node)))


@pytest.mark.parametrize("name, values, refusal", [
    # position 5 at 5.5: the angles are no longer p * f at every p
    ("/Constant_8_output_0", [p + (p == 5) / 2 for p in range(34)],
     "folded rotary angles are p * f, each product rounded once"),
    # 3 ** (1/4): a power with no certified value is not folded, nor the Unsqueeze after it
    ("/Constant_5_output_0", [0.0, 0.25], "node '/Unsqueeze' (Unsqueeze): operator Unsqueeze "
                                          "is not one tinyadder reads")])
def test_a_computed_rotary_that_is_not_positions_times_frequencies_is_refused(
        name, values, refusal, tmp_path):
    """dimopep-140's TorchScript graph computes its rotary tables as Cos and Sin of
    positions [T, 1] times 1 / 3 ** [0, 1/2]; changed, it is refused in one line."""
    graph = parse(_graph_file("dimopep-140.torchscript", tmp_path).read_bytes())
    message = _refusal(_with_constant(graph, name, values))
    assert refusal in message, message


# ---- LayerNorm ----------------------------------------------------------------------------

def _layer_graph(dtype="float32", **norm):
    """yinglunz-512's own export at 4 positions in ``dtype``, its norms changed by
    ``norm``."""
    model = build("yinglunz-512")
    if norm:
        model = replace(model, ln_final=replace(model.ln_final, **norm), blocks=tuple(
            replace(b, ln1=replace(b.ln1, **norm), ln2=replace(b.ln2, **norm))
            for b in model.blocks))
    return model, export(model, length=4, dtype=dtype)


@pytest.mark.parametrize("dtype, norm, node", [
    ("float64", {}, True), ("float32", {"b": {}}, True),
    ("float32", {"apply": "divide", "mean": "multiply"}, False),
    ("float32", {"eps": Fraction(1, 3)}, True), ("float64", {"eps": Fraction(1, 3)}, False)])
def test_a_layer_norm_comes_back_from_its_node_or_its_decomposition(dtype, norm, node):
    """LayerNormalization where the node states the norm (x - m times 1 / root, the mean a
    division, its eps's float a float32); the decomposition otherwise, read back as written.
    Without the model file, eps is the float the graph holds."""
    from tinyadder.onnx.messages import DataType
    from tinyadder.onnx.values import stored
    model, graph = _layer_graph(dtype, **norm)
    ops = [n.op_type for n in graph.graph.node]
    assert (ops.count("LayerNormalization"), ops.count("Sub")) == ((3, 0) if node else (0, 3))
    assert dump(loads(serialize(graph))) == dump(model)
    foreign = loads(serialize(replace(graph, metadata_props=())))
    kind = DataType.FLOAT if dtype == "float32" else DataType.DOUBLE
    assert foreign.ln_final.eps == Fraction(stored(model.ln_final.eps, kind))
    assert (foreign.ln_final.kind, foreign.ln_final.apply, foreign.ln_final.mean) == \
        (model.ln_final.kind, model.ln_final.apply, model.ln_final.mean)


def _with_layer_node(graph, **attributes):
    """The graph with its first LayerNormalization's attributes (None: left out)."""
    from tinyadder.onnx.builder import attribute
    node = next(n for n in graph.graph.node if n.op_type == "LayerNormalization")
    attrs = {a.name: a for a in node.attribute}
    attrs.update({k: attribute(k, v) for k, v in attributes.items() if v is not None})
    for k in [k for k, v in attributes.items() if v is None]:
        attrs.pop(k)
    changed = replace(node, attribute=tuple(attrs.values()))
    return _graph(graph, node=tuple(changed if n is node else n for n in graph.graph.node))


@pytest.mark.parametrize("attributes, message", [
    ({"stash_type": 11}, "a LayerNorm forms its moments in float32, the graph's type "
                         "(stash_type 1)"),
    ({"axis": 0}, "attribute axis = 0; tinyadder reads (-1, 1)"),
    ({"epsilon": -1.0}, "a LayerNorm's epsilon -1.0: a finite float from 0"),
    ({"epsilon": math.inf}, "a LayerNorm's epsilon inf: a finite float from 0"),
    ({"epsilon": "1e-5"}, "attribute 'epsilon' is STRING, where FLOAT goes"),
    ({"epsilon": 1}, "attribute 'epsilon' is INT, where FLOAT goes"),
    ({"momentum": 1}, "attribute 'momentum' is not read here"),
])
def test_a_layer_normalization_the_model_format_cannot_state_is_refused(attributes, message):
    graph = replace(_layer_graph()[1], metadata_props=())
    assert message in _refusal(_with_layer_node(graph, **attributes))


def test_a_layer_normalization_without_its_epsilon_takes_the_default():
    """ONNX's default epsilon, 1e-5 as a float32: the graph without the attribute is the
    same model."""
    graph = replace(_layer_graph()[1], metadata_props=())
    assert dump(loads(serialize(_with_layer_node(graph, epsilon=None)))) == \
        dump(loads(serialize(graph)))
