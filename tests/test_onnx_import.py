"""Reading other tools' ONNX graphs (docs/onnx.md, "Import"): the forms ``torch.onnx.export``
writes, and graphs that must be refused in one line rather than crash the reader."""

from dataclasses import replace
import json

import pytest

from tinyadder import build
from tinyadder.modelfile import dump
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
