"""tinyadder.onnx: the protobuf wire format, the onnx.proto subset, the strict reader and its
limits, the writer, the GraphBuilder, and a fuzzer (issue 22).

The comparisons with the real ``onnx`` and ``onnxruntime`` packages (test-only dependencies,
installed by .ci/run) skip where they are absent; everything else is standard library."""

import math
import random
import struct
import time
import tracemalloc
from fractions import Fraction

import pytest

from tinyadder.onnx import (LIMITS, Attribute, AttributeType, DataType, Graph, GraphBuilder,
                            Limits, Model, Node, OnnxError, OperatorSetId, Tensor, ValueInfo,
                            attribute, float32, load, parse, save, serialize)
from tinyadder.onnx.wire import LEN, VARINT, fields, key, length_delimited, read_varint, varint

F, D, I32, I64, B = (DataType.FLOAT, DataType.DOUBLE, DataType.INT32, DataType.INT64,
                     DataType.BOOL)
# onnx.helper's bytes (onnx 1.23) for: make_model(make_graph([make_node("Add", ["x", "w"],
# ["y"], name="add")], "g", [x], [y], [w]), opset_imports=[make_opsetid("", 21)],
# ir_version=10, producer_name="onnx.helper") with x, y FLOAT ["N", 2], w FLOAT [2] =
# raw_data of (0.5, 0.1) as float32, and metadata {"tinyadder.exact.w": "1/2 1/10"}
HELPER_MODEL = bytes.fromhex(
    "080a120b6f6e6e782e68656c7065723a570a130a01780a01771201791a0361646422034164641201672a1108"
    "0210014201774a080000003fcdcccc3d5a140a0178120f0a0d080112090a0312014e0a02080262140a017912"
    "0f0a0d080112090a0312014e0a02080242040a001015721d0a1174696e7961646465722e65786163742e7712"
    "08312f3220312f3130")


def f_varint(number, value):
    return key(number, VARINT) + varint(value)


def f_len(number, payload):
    return length_delimited(number, payload)


def model_bytes(graph=b"\x12\x01g", opset=b"\x0a\x00\x10\x15", extra=b""):
    """A ModelProto of IR 10 around the bytes of a GraphProto, importing ai.onnx 21."""
    return f_varint(1, 10) + f_len(7, graph) + f_len(8, opset) + extra


def graph_with(*fields_):
    return b"".join(fields_) + b"\x12\x01g"


def node_bytes(*extra):
    return f_len(1, f_len(4, b"Add") + b"".join(extra))


def tensor_bytes(dims=(2,), data_type=1, *extra):
    return b"".join(f_varint(1, d) for d in dims) + f_varint(2, data_type) + f_len(8, b"w") + \
        b"".join(extra)


def input_bytes(*dims, elem_type=1):
    """A graph input 'x' (GraphProto field 11) whose shape has these Dimension payloads."""
    shape = b"".join(f_len(1, d) for d in dims)
    return f_len(11, f_len(1, b"x") + f_len(2, f_len(1, f_varint(1, elem_type) +
                                                    f_len(2, shape))))


def every_tensor():
    """A tensor of every data type, in its typed field and in raw_data."""
    data = {F: [0.5, -2.0, float32(0.1), float("inf"), 0.0, -0.0],
            D: [0.1, -1e300, 5e-324, float("-inf"), 2.0 ** 52 + 1, -0.0],
            I32: [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 7],
            I64: [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 40],
            B: [True, False, True, True, False, False]}
    return [Tensor(f"{kind.name.lower()}_{raw}", kind, (2, 3), values, raw)
            for kind, values in data.items() for raw in (False, True)]


def every_attribute():
    t = Tensor("t", D, (1,), [0.25])
    return [Attribute("f", AttributeType.FLOAT, float32(0.3)),
            Attribute("i", AttributeType.INT, -5),
            Attribute("s", AttributeType.STRING, "ünï".encode()),
            Attribute("t", AttributeType.TENSOR, t),
            Attribute("floats", AttributeType.FLOATS, [1.5, float32(-0.7)]),
            Attribute("ints", AttributeType.INTS, [2 ** 62, -3, 0]),
            Attribute("strings", AttributeType.STRINGS, [b"a", b""]),
            Attribute("tensors", AttributeType.TENSORS, [t, Tensor("u", I64, (), [3])],
                      doc_string="two tensors")]


def rich_model():
    """A model using every message and field of the subset."""
    x = ValueInfo("x", D, (1, "N", None), doc_string="input", metadata_props=[("k", "v")])
    y = ValueInfo("y", D, None)
    node = Node(["x", "", "w"], ["y"], "Custom", "custom", every_attribute(), "a node",
                metadata_props=[("pkg.torch.onnx.stack_trace", "line 1")])
    graph = Graph([node, Node(["y"], ["z"], "Relu")], "rich", every_tensor(), "the graph",
                  [x], [y], [ValueInfo("z", F, ())], [("g", "1")])
    return Model(10, graph, [OperatorSetId("", 21)], "tinyadder", "0.1.0", "ai.tinyadder", 3,
                 "a model", [("tinyadder.exact.w", "ln(10)"), ("empty", "")])


def messages_of(model):
    """Every message inside the model, the model too."""
    graph = model.graph
    found = [model, graph, *model.opset_import, *graph.node, *graph.initializer, *graph.input,
             *graph.output, *graph.value_info]
    for node in graph.node:
        found += node.attribute
    return found


# The wire format --------------------------------------------------------------------------

@pytest.mark.parametrize("n, hexed", [
    (0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"),
    (2 ** 63 - 1, "ffffffffffffffff7f"), (-1, "ffffffffffffffffff01"),
    (-2 ** 63, "80808080808080808001"), (2 ** 64 - 1, "ffffffffffffffffff01")])
def test_varint_both_ways(n, hexed):
    assert varint(n).hex() == hexed
    data = bytes.fromhex(hexed)
    assert read_varint(data, 0, len(data)) == (n % 2 ** 64, len(data))


@pytest.mark.parametrize("hexed, message", [
    ("", "byte 0: varint cut short"), ("80", "byte 1: varint cut short"),
    ("ff" * 9, "byte 9: varint cut short"), ("ff" * 10 + "01", "longer than 10 bytes"),
    ("ff" * 9 + "02", "byte 9: varint over 64 bits"), ("80" * 20, "longer than 10 bytes")])
def test_bad_varints(hexed, message):
    data = bytes.fromhex(hexed)
    with pytest.raises(OnnxError, match=message):
        read_varint(data, 0, len(data))


def test_varint_out_of_64_bits():
    for n in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(OnnxError, match="does not fit in 64 bits"):
            varint(n)


def test_fields_and_their_spans():
    data = f_varint(1, 150) + f_len(2, b"abc") + key(3, 5) + b"1234" + key(4, 1) + b"8" * 8
    assert list(fields(data, 0, len(data))) == [
        (0, 1, VARINT, 150), (3, 2, LEN, (5, 8)), (8, 3, 5, (9, 13)), (13, 4, 1, (14, 22))]


@pytest.mark.parametrize("data, message", [
    (key(1, 3) + b"\x00", "wire type 3, which ONNX does not use"),
    (key(1, 4), "wire type 4"), (key(1, 6), "wire type 6"), (key(1, 7), "wire type 7"),
    (b"\x00\x00", "field number 0 is out of protobuf's range"),
    (varint(2 ** 29 << 3), "field number 536870912"),
    (key(1, LEN) + varint(2 ** 62), "declares 4611686018427387904 bytes, past the end"),
    (key(1, LEN) + b"\x05abcd",
     "byte 0: field 1 declares 5 bytes, past the end of its message \\(4 left\\)"),
    (key(1, 1) + b"1234567", "declares 8 bytes"), (key(1, 5) + b"123", "declares 4 bytes")])
def test_bad_fields(data, message):
    with pytest.raises(OnnxError, match=message):
        list(fields(data, 0, len(data)))


# The messages: values and their checks ----------------------------------------------------

def test_float_data_is_exact_binary_rationals():
    t = Tensor("w", F, (3,), [float32(0.1), 0.5, -0.0])
    assert t.fractions() == (Fraction(13421773, 134217728), Fraction(1, 2), 0)
    d = Tensor("w", D, (2,), [0.1, 5e-324])
    assert d.fractions() == (Fraction(3602879701896397, 2 ** 55), Fraction(1, 2 ** 1074))
    assert Tensor("n", I64, (2,), [-2 ** 63, 5]).fractions() == (-2 ** 63, 5)
    with pytest.raises(OnnxError, match="'w': value 1 is inf, not a rational"):
        Tensor("w", F, (2,), [1.0, float("inf")]).fractions()


def test_float32_rounds_to_nearest_even():
    assert float32(0.1) == 13421773 / 2 ** 27
    assert float32(1 + 2 ** -24) == 1.0 and float32(1 + 3 * 2 ** -24) == 1 + 2 ** -22
    with pytest.raises(OnnxError, match="has no float32 value"):
        float32(1e300)
    with pytest.raises(OnnxError, match="float32\\(\\) takes a float, not Fraction"):
        float32(Fraction(1, 3))


@pytest.mark.parametrize("build, message", [
    (lambda: Tensor("w", F, (2, 2), [1.0, 2.0, 3.0]),
     "tensor 'w' has 3 values for dims \\[2, 2\\] \\(4 elements\\)"),
    (lambda: Tensor("w", F, (1,), [0.1]), "value 0, 0.1, is not a float32 value"),
    (lambda: Tensor("w", F, (1,), [1e300]), "value 0, 1e\\+300, is not a float32 value"),
    (lambda: Tensor("w", D, (1,), [1]), "value 0 is a int, not a float"),
    (lambda: Tensor("w", I64, (1,), [True]), "value 0 is a bool, not a int"),
    (lambda: Tensor("w", I32, (2,), [0, 2 ** 31]), "value 1, 2147483648, is outside INT32"),
    (lambda: Tensor("w", I64, (1,), [2 ** 63]), "is outside INT64's range"),
    (lambda: Tensor("w", B, (1,), [1]), "value 0 is a int, not a bool"),
    (lambda: Tensor("w", 10, (1,), [1.0]), "data type 10 \\(FLOAT16\\) is not supported"),
    (lambda: Tensor("w", F, (-1,), []), "dims\\[0\\] is -1, outside"),
    (lambda: Tensor("w", F, 2, [1.0]), "dims must be a list or tuple, not int"),
    (lambda: Tensor(1, F, (), [1.0]), "Tensor.name must be a str, not int"),
    (lambda: Tensor("\ud800", F, (), [1.0]), "cannot be encoded as UTF-8"),
    (lambda: Tensor("w", F, (), [1.0], raw=1), "raw must be a bool"),
    (lambda: Attribute("a", AttributeType.FLOAT, 0.1), "is not a float32 value"),
    (lambda: Attribute("a", 5, None), "attribute type 5 \\(GRAPH \\(subgraphs are not"),
    (lambda: Attribute("a", AttributeType.INTS, [1, 2.0]), "value\\[1\\] must be an int"),
    (lambda: Attribute("", AttributeType.INT, 1), "Attribute.name must not be empty"),
    (lambda: Attribute("a", AttributeType.STRING, "x"), "value must be bytes, not str"),
    (lambda: Node(["x"], ["y"], "Add", domain="com.microsoft"),
     "domain 'com.microsoft' is not supported"),
    (lambda: Node(["x"], ["y"], ""), "op_type must not be empty"),
    (lambda: Node(["x"], ["y"], "Add", "n", [attribute("a", 1), attribute("a", 2)]),
     "node 'n' attribute 'a' appears twice"),
    (lambda: ValueInfo("x", F, (-3,)), "shape\\[0\\] is -3"),
    (lambda: ValueInfo("x", F, ("",)), "shape\\[0\\] must not be empty"),
    (lambda: ValueInfo("x", 8, ()), "data type 8 \\(STRING\\) is not supported"),
    (lambda: Graph([], "g", [Tensor("w", F, (), [1.0])] * 2), "initializer 'w' appears twice"),
    (lambda: Graph([], "g", [Tensor("", F, (), [1.0])]), "initializer name must not be empty"),
    (lambda: Graph([1], "g"), "node\\[0\\] must be a Node, not int"),
    (lambda: Model(10, Graph([], "g"), [OperatorSetId("ai.onnx.ml", 3)]),
     "imports 0 opsets of domain ''"),
    (lambda: Model(10, Graph([], "g"), []), "imports 0 opsets"),
    (lambda: Model(10, Graph([], "g"), [OperatorSetId("", 1)] * 2), "imports 2 opsets"),
    (lambda: Model(2, Graph([], "g"), [OperatorSetId("", 1)]), "ir_version is 2, outside"),
    (lambda: Model(10, None, [OperatorSetId("", 1)]), "the model has no graph"),
    (lambda: Model(10, Graph([], "g"), [OperatorSetId("", 1)], metadata_props=[("a", "1"),
                                                                              ("a", "2")]),
     "metadata_props key 'a' appears twice"),
    (lambda: Model(10, Graph([], "g"), [OperatorSetId("", 1)], metadata_props=[["a", "1"]]),
     "must be a \\(key, value\\) pair"),
    (lambda: OperatorSetId("", 0), "version is 0, outside"),
])
def test_messages_validate_what_they_are_given(build, message):
    with pytest.raises(OnnxError, match=message) as err:
        build()
    assert "\n" not in str(err.value)


def test_messages_hold_tuples_and_enums():
    t = Tensor("w", 11, [2], [1.0, 2.0])
    assert t.data_type is D and t.dims == (2,) and t.values == (1.0, 2.0)
    n = Node(["a"], ["b"], "Relu", attribute=[attribute("alpha", 0.5)])
    assert n.input == ("a",) and n.attribute[0].type is AttributeType.FLOAT
    assert hash(t) == hash(Tensor("w", D, (2,), (1.0, 2.0)))


# Round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("message", messages_of(rich_model()),
                         ids=lambda m: type(m).__name__)
def test_every_message_round_trips(message):
    data = serialize(message)
    back = parse(data, type(message))
    assert back == message and serialize(back) == data


def test_a_tensor_remembers_where_its_data_was():
    for tensor in every_tensor():
        data = serialize(tensor)
        field = 9 if tensor.raw else {F: 4, D: 10, I32: 5, I64: 7, B: 5}[tensor.data_type]
        assert [n for _, n, _, _ in fields(data, 0, len(data))] == sorted([1, 1, 2, field, 8])
        assert parse(data, Tensor).raw is tensor.raw


def test_signed_zero_and_nan_bytes_survive():
    t = Tensor("w", F, (3,), [-0.0, float("nan"), float("-inf")], raw=True)
    zero, nan, inf = parse(serialize(t), Tensor).values
    assert math.copysign(1, zero) == -1 and nan != nan and inf == -math.inf
    assert serialize(parse(serialize(t), Tensor)) == serialize(t)
    assert struct.pack("<3f", -0.0, float("nan"), float("-inf")) in serialize(t)


def test_the_writer_leaves_out_empty_fields_onnx_helper_leaves_unset():
    assert serialize(Node([], [], "Relu")) == f_len(4, b"Relu")
    assert serialize(Graph([], "")) == b"\x12\x00"  # the name is always set
    assert serialize(OperatorSetId("", 1)) == b"\x0a\x00\x10\x01"
    assert serialize(ValueInfo("x", F, ())) == bytes.fromhex("0a01781206 0a04080112 00")
    assert serialize(Attribute("a", AttributeType.INT, 0)) == bytes.fromhex("0a016118 00a00102")


def test_the_reader_takes_packed_and_unpacked_repeated_scalars():
    unpacked = f_varint(1, 2) + f_varint(1, 3) + f_varint(2, 7) + f_varint(7, 5) + \
        f_varint(7, 2 ** 64 - 1) + f_varint(7, 0) + f_varint(7, 1) + f_varint(7, 2) + \
        f_varint(7, 3)
    packed = f_len(1, b"\x02\x03") + f_varint(2, 7) + f_len(7, b"\x05" + varint(-1) + b"\x00") \
        + f_len(7, b"\x01\x02\x03")
    for data in (unpacked, packed):
        assert parse(data, Tensor) == Tensor("", I64, (2, 3), [5, -1, 0, 1, 2, 3])
    ints = f_len(1, b"a") + f_len(8, b"\x01\x02") + f_varint(8, 3) + f_varint(20, 7)
    assert parse(ints, Attribute).value == (1, 2, 3)


def test_fields_may_come_in_any_order():
    t = Tensor("w", F, (2,), [1.0, 2.0])
    data = serialize(t)
    dims, data_type, float_data, name = data[:2], data[2:4], data[4:14], data[14:]
    assert parse(name + float_data + data_type + dims, Tensor) == t


def test_save_and_load(tmp_path):
    model = rich_model()
    save(model, tmp_path / "m.onnx")
    assert load(tmp_path / "m.onnx") == model


# Refusals: one line each, saying what was wrong ------------------------------------------

NODES = b"".join([node_bytes()] * 10 ** 6)


@pytest.mark.parametrize("data, message, limits", [
    (b"\x08", "ModelProto: byte 1: varint cut short", LIMITS),
    (b"\x08" + b"\xff" * 10 + b"\x01", "ModelProto: byte 1: varint longer than 10 bytes", LIMITS),
    (b"\x08" + b"\xff" * 9 + b"\x7f", "varint over 64 bits", LIMITS),
    (model_bytes(extra=key(7, LEN) + varint(2 ** 62)), "declares 4611686018427387904 bytes",
     LIMITS),
    (model_bytes(graph_with(f_len(5, key(1, LEN) + b"\x7f"))),
     "ModelProto.graph.initializer\\[0\\]: byte 6: field 1 declares 127 bytes, past the end",
     LIMITS),
    (key(1, LEN) + b"\x00", "ModelProto.ir_version \\(field 1\\) has wire type 2, not 0", LIMITS),
    (model_bytes(f_varint(2, 1)), "GraphProto.name \\(field 2\\) has wire type 0, not 2",
     LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2 ** 63,), 1)))),
     "tensor 'w': dims \\[-9223372036854775808\\] has a negative dim", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2 ** 62, 4), 1)))),
     "dims \\[4611686018427387904, 4\\] make 18446744073709551616 elements, over the limit "
     "of 4194304 \\(limit elements\\)", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((3,), 1, f_len(4, b"\x00" * 8))))),
     "tensor 'w' has 2 values for dims \\[3\\] \\(3 elements\\)", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((3,), 1, f_len(9, b"\x00" * 8))))),
     "tensor 'w': raw_data has 8 bytes for 3 elements of 4 bytes", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"a") + f_varint(20, 2))))),
     "messages nested more than 3 deep \\(limit depth\\)", Limits(depth=3)),
    (model_bytes(graph_with(NODES)),
     "ModelProto.graph: byte 70007: GraphProto.node \\(field 1\\) has more than 10000 items "
     "\\(limit nodes\\)",
     LIMITS),
    (model_bytes(graph_with(*[f_len(5, tensor_bytes((), 1, f_len(4, b"\x00" * 4)))] * 3)),
     "GraphProto.initializer \\(field 5\\) has more than 2 items", Limits(initializers=2)),
    (model_bytes(graph_with(node_bytes(*[f_len(5, f_len(1, n) + f_varint(20, 2))
                                         for n in (b"a", b"b")]))),
     "NodeProto.attribute \\(field 5\\) has more than 1 items \\(limit attributes\\)",
     Limits(attributes=1)),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1, 1, 1), 1)))),
     "TensorProto.dims \\(field 1\\) has more than 2 items \\(limit rank\\)", Limits(rank=2)),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2,), 1, f_len(4, b"\x00" * 12))))),
     "TensorProto.float_data \\(field 4\\) has more than 2 items \\(limit elements\\)",
     Limits(elements=2)),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2,), 7, f_len(7, b"\x01\x02\x03"))))),
     "TensorProto.int64_data \\(field 7\\) has more than 2 items \\(limit elements\\)",
     Limits(elements=2)),
    (model_bytes(extra=f_len(14, b"") * 3), "metadata_props \\(field 14\\) has more than 2 "
     "items \\(limit items\\)", Limits(items=2)),
    (model_bytes(graph_with(node_bytes(), node_bytes())),
     "more than 5 fields in the file \\(limit fields\\)", Limits(fields=5)),
    (model_bytes(graph_with(f_len(5, tensor_bytes((5,), 7, f_len(7, b"\x01" * 5))))),
     "more than 9 fields in the file", Limits(fields=9)),
    (model_bytes(), f"^{len(model_bytes())} bytes, over the limit of 12 \\(limit file_bytes\\)$",
     Limits(file_bytes=12)),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"body") + f_len(6, b"") +
                                            f_varint(20, 5))))),
     "AttributeProto.g: subgraphs are not supported", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"body") + f_len(11, b""))))),
     "AttributeProto.graphs: subgraphs are not supported", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"body") + f_varint(20, 5))))),
     "attribute 'body': attribute type 5 \\(GRAPH \\(subgraphs are not supported\\)\\)", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"s") + f_len(22, b""))))),
     "sparse_tensor \\(SPARSE_TENSOR attributes\\) is not supported", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2,), 1, f_varint(14, 1))))),
     "tensor 'w': data_location 1 \\(EXTERNAL: external data\\) is not supported", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2,), 1, f_len(13, b""))))),
     "TensorProto.external_data: external data is not supported", LIMITS),
    (model_bytes(graph_with(f_len(15, b""))),
     "GraphProto.sparse_initializer: sparse initializers are not supported", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 10, f_len(5, b"\x00"))))),
     "tensor 'w': data type 10 \\(FLOAT16\\) is not supported; supported: FLOAT, INT32, "
     "INT64, BOOL, DOUBLE", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 8, f_len(6, b"abc"))))),
     "TensorProto.string_data \\(STRING tensors\\) is not supported", LIMITS),
    (model_bytes(graph_with(input_bytes(elem_type=99))),
     "value 'x': data type 99 is not supported", LIMITS),
    (model_bytes(opset=f_len(1, b"com.microsoft") + f_varint(2, 1)),
     "the model imports 0 opsets of domain ''", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(7, b"com.microsoft")))),
     "ModelProto.graph.node\\[0\\]: node '': domain 'com.microsoft' is not supported", LIMITS),
    (model_bytes(extra=f_varint(1, 10)), "ModelProto.ir_version \\(field 1\\) appears twice",
     LIMITS),
    (model_bytes(extra=f_varint(99, 1)), "ModelProto has field 99, which this reader does "
     "not know", LIMITS),
    (model_bytes(extra=f_len(25, b"")), "ModelProto.functions \\(model-local functions\\) are "
     "not supported", LIMITS),
    (model_bytes(b"\x12\x02\xc3\x28"), "string is not UTF-8 \\(byte 0 of it\\)", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 9, f_len(5, b"\x02"))))),
     "a BOOL value of int32_data is neither 0 nor 1", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((2,), 9, f_len(9, b"\x01\x03"))))),
     "a BOOL byte of raw_data is neither 0 nor 1", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 2 ** 40)))), "int32 field holds "
     "1099511627776", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 1, f_len(4, b"\x00" * 3))))),
     "TensorProto.float_data \\(field 4\\) is packed in 3 bytes, not a multiple of 4", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 1, f_len(4, b"\x00" * 4),
                                                  f_len(9, b"\x00" * 4))))),
     "data in both float_data and raw_data", LIMITS),
    (model_bytes(graph_with(f_len(5, tensor_bytes((1,), 1, f_len(10, b"\x00" * 8))))),
     "a FLOAT tensor with double_data", LIMITS),
    (f_varint(1, 10) + f_len(8, b"\x10\x15"), "the model has no graph", LIMITS),
    (model_bytes(graph_with(f_len(11, f_len(1, b"x")))), "value 'x' has no type", LIMITS),
    (model_bytes(graph_with(f_len(11, f_len(1, b"x") + f_len(2, f_len(4, b""))))),
     "TypeProto.sequence_type is not supported", LIMITS),
    (model_bytes(graph_with(input_bytes(f_varint(1, 2) + f_len(2, b"N")))),
     "a dimension with both dim_value and dim_param", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"a") + f_varint(20, 1) +
                                            f_varint(8, 3))))),
     "attribute 'a' of type FLOAT also carries ints", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"a") + f_varint(20, 4))))),
     "attribute 'a' of type TENSOR has no t", LIMITS),
    (model_bytes(graph_with(node_bytes(f_len(5, f_len(1, b"a"))))),
     "attribute 'a': attribute type 0 \\(UNDEFINED\\) is not supported", LIMITS),
    (model_bytes(extra=key(3, 3)), "wire type 3, which ONNX does not use", LIMITS),
    (b"", "ModelProto: the model has no graph", LIMITS),
])
def test_bad_files_are_refused_in_one_line(data, message, limits):
    with pytest.raises(OnnxError, match=message) as err:
        parse(data, limits=limits)
    assert "\n" not in str(err.value) and len(str(err.value)) < 200
    assert type(err.value) is OnnxError and isinstance(err.value, ValueError)


def test_deeply_nested_subgraphs_are_refused_at_the_first():
    body = b""
    for _ in range(2_000):  # a graph in an attribute of a node of a graph ... 2,000 deep
        body = f_len(1, f_len(4, b"If") + f_len(5, f_len(1, b"then") + f_varint(20, 5) +
                                              f_len(6, body)))
    with pytest.raises(OnnxError, match="graph.node\\[0\\].attribute\\[0\\]: byte 27: "
                                        "AttributeProto.g: subgraphs are not supported"):
        parse(model_bytes(graph_with(body)))


def test_the_file_size_is_checked_before_reading(tmp_path):
    path = tmp_path / "huge.onnx"
    with open(path, "wb") as file:
        file.truncate(2 ** 40)  # a sparse terabyte: reading it would not end in time
    with pytest.raises(OnnxError, match="1099511627776 bytes, over the limit of 33554432"):
        load(path)
    with pytest.raises(OnnxError, match="an ONNX file is bytes, not str"):
        parse("080a")


def test_the_limits_are_stated_in_docs():
    from pathlib import Path
    doc = (Path(__file__).resolve().parent.parent / "docs" / "onnx.md").read_text()
    for name, value in vars(LIMITS).items():
        assert f"`{name}` | {value:,}" in doc, name


# The real onnx package, both ways -------------------------------------------------------

@pytest.fixture(scope="module")
def onnx():
    return pytest.importorskip("onnx")


def test_the_stored_helper_file_reads_to_its_values():
    model = parse(HELPER_MODEL)
    w = model.graph.initializer[0]
    assert (w.name, w.data_type, w.dims, w.raw) == ("w", F, (2,), True)
    assert w.fractions() == (Fraction(1, 2), Fraction(13421773, 134217728))
    assert model.graph.input[0] == ValueInfo("x", F, ("N", 2))
    assert model.graph.node == (Node(["x", "w"], ["y"], "Add", "add"),)
    assert model.metadata_props == (("tinyadder.exact.w", "1/2 1/10"),)
    assert (model.ir_version, model.opset_import, model.producer_name) == (
        10, (OperatorSetId("", 21),), "onnx.helper")
    assert serialize(model) == HELPER_MODEL


def test_the_stored_helper_file_is_what_onnx_helper_writes(onnx):
    h = onnx.helper
    T = onnx.TensorProto
    w = h.make_tensor("w", T.FLOAT, [2], struct.pack("<2f", 0.5, 0.1), raw=True)
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N", 2])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", 2])], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)], ir_version=10,
                     producer_name="onnx.helper")
    h.set_model_props(m, {"tinyadder.exact.w": "1/2 1/10"})
    assert m.SerializeToString() == HELPER_MODEL


def helper_tensor(onnx, tensor):
    """onnx.helper.make_tensor of the same tensor."""
    values = tensor.values
    if tensor.raw:
        code = {F: "f", D: "d", I32: "i", I64: "q", B: "?"}[tensor.data_type]
        values = struct.pack(f"<{len(values)}{code}", *values)
    return onnx.helper.make_tensor(tensor.name, int(tensor.data_type), tensor.dims, values,
                                   raw=tensor.raw)


@pytest.mark.parametrize("tensor", every_tensor(), ids=lambda t: t.name)
def test_tensors_are_byte_for_byte_onnx_helpers(onnx, tensor):
    theirs = helper_tensor(onnx, tensor).SerializeToString()
    assert serialize(tensor) == theirs
    assert parse(theirs, Tensor) == tensor
    back = onnx.numpy_helper.to_array(onnx.load_tensor_from_string(serialize(tensor)))
    assert back.shape == tensor.dims and back.flatten().tolist() == list(tensor.values)


def test_attributes_and_nodes_are_byte_for_byte_onnx_helpers(onnx):
    h = onnx.helper
    t = helper_tensor(onnx, Tensor("t", D, (1,), [0.25]))
    u = helper_tensor(onnx, Tensor("u", I64, (), [3]))
    plain = {"f": float32(0.3), "i": -5, "s": "ünï", "floats": [1.5, float32(-0.7)],
             "ints": [2 ** 62, -3, 0], "strings": [b"a", b""]}
    attributes = [h.make_attribute(k, v) for k, v in plain.items()] + [
        h.make_attribute("t", t), h.make_attribute("tensors", [t, u], doc_string="two tensors")]
    theirs = h.make_node("Custom", ["a", "b"], ["c"], name="n")
    theirs.attribute.extend(sorted(attributes, key=lambda a: a.name))
    ours = Node(["a", "b"], ["c"], "Custom", "n", sorted(every_attribute(), key=lambda a: a.name))
    assert serialize(ours) == theirs.SerializeToString()
    assert parse(theirs.SerializeToString(), Node) == ours
    for attribute_ in every_attribute():
        (same,) = [a for a in attributes if a.name == attribute_.name]
        assert serialize(attribute_) == same.SerializeToString()
    built = GraphBuilder("g")
    built.input("a", D, ())
    built.input("b", D, ())
    built.node("Custom", ["a", "b"], ["c"], "n", **plain)
    assert serialize(built.graph().node[0]) == h.make_node(
        "Custom", ["a", "b"], ["c"], name="n", **plain).SerializeToString()


@pytest.mark.parametrize("shape", [None, (), (1, "N", None), (0, 2 ** 63 - 1)])
def test_value_infos_are_byte_for_byte_onnx_helpers(onnx, shape):
    theirs = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, shape)
    assert serialize(ValueInfo("x", D, shape)) == theirs.SerializeToString()
    assert parse(theirs.SerializeToString(), ValueInfo) == ValueInfo("x", D, shape)


def affine(raw):
    """x (1, 2) float64 -> x @ W + b, every number a dyadic rational, so exact in float64."""
    b = GraphBuilder("affine")
    b.input("x", D, (1, 2))
    b.initializer("W", [0.25, 3.0, 1.0, -0.5], (2, 2), D, raw)
    b.initializer("b", [0.125, 10.0], (2,), D, raw)
    b.node("MatMul", ["x", "W"], ["xW"], "matmul")
    b.node("Add", ["xW", "b"], ["y"], "add")
    b.output("y", D, (1, 2))
    return b.model(21, 10, "tinyadder", "0.1.0", {"tinyadder.exact.W": "1/4 3 1 -1/2"},
                   doc_string="x W + b")


@pytest.mark.parametrize("raw", [False, True])
def test_a_model_is_byte_for_byte_onnx_helpers_and_passes_the_checker(onnx, raw):
    h, T = onnx.helper, onnx.TensorProto
    values = {"W": [0.25, 3.0, 1.0, -0.5], "b": [0.125, 10.0]}
    dims = {"W": [2, 2], "b": [2]}
    inits = [h.make_tensor(n, T.DOUBLE, dims[n], struct.pack(f"<{len(v)}d", *v) if raw else v,
                           raw=raw) for n, v in values.items()]
    graph = h.make_graph([h.make_node("MatMul", ["x", "W"], ["xW"], name="matmul"),
                          h.make_node("Add", ["xW", "b"], ["y"], name="add")], "affine",
                         [h.make_tensor_value_info("x", T.DOUBLE, [1, 2])],
                         [h.make_tensor_value_info("y", T.DOUBLE, [1, 2])], inits)
    theirs = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10,
                          producer_name="tinyadder", producer_version="0.1.0",
                          doc_string="x W + b")
    h.set_model_props(theirs, {"tinyadder.exact.W": "1/4 3 1 -1/2"})
    ours = serialize(affine(raw))
    assert ours == theirs.SerializeToString()
    assert parse(theirs.SerializeToString()) == affine(raw)
    loaded = onnx.load_from_string(ours)
    onnx.checker.check_model(loaded, full_check=True)
    assert loaded == theirs


def test_the_rich_model_loads_in_onnx(onnx):
    loaded = onnx.load_from_string(serialize(rich_model()))
    assert loaded.SerializeToString() == serialize(rich_model())
    assert [a.name for a in loaded.graph.node[0].attribute] == [
        a.name for a in every_attribute()]
    assert onnx.numpy_helper.to_array(loaded.graph.initializer[2]).tolist() == [
        [0.1, -1e300, 5e-324], [float("-inf"), 2.0 ** 52 + 1, -0.0]]


def test_onnxruntime_runs_a_built_graph_to_the_exact_numbers():
    ort = pytest.importorskip("onnxruntime")
    np = pytest.importorskip("numpy")
    for raw in (False, True):
        session = ort.InferenceSession(serialize(affine(raw)),
                                       providers=["CPUExecutionProvider"])
        (y,) = session.run(None, {"x": np.array([[1.5, -2.0]], dtype=np.float64)})
        assert y.dtype == np.float64 and y.tolist() == [[-1.5, 15.5]]
        # (1.5, -2) (1/4 3; 1 -1/2) + (1/8, 10) = (3/8 - 2 + 1/8, 9/2 + 1 + 10)
        assert [Fraction(v) for v in y[0]] == [Fraction(-3, 2), Fraction(31, 2)]


# The builder's own checks -----------------------------------------------------------------

def test_builder_refuses_what_onnx_would_refuse_later():
    b = GraphBuilder("g")
    b.input("x", D, (1,))
    with pytest.raises(OnnxError, match="input 'x': value 'x' is defined twice"):
        b.input("x", D, (1,))
    with pytest.raises(OnnxError, match="initializer 'x': value 'x' is defined twice"):
        b.initializer("x", [1.0], (1,), D)
    b.node("Relu", ["x"], ["y"], "relu")
    with pytest.raises(OnnxError, match="node 'relu': node names must be unique"):
        b.node("Relu", ["y"], ["z"], "relu")
    with pytest.raises(OnnxError, match="node 'n': value 'y' is defined twice"):
        b.node("Relu", ["x"], ["y"], "n")
    with pytest.raises(OnnxError, match="output 'z' is not defined"):
        b.output("z", D, (1,))
    with pytest.raises(OnnxError, match="attribute 'axes': cannot tell an ONNX type for \\[\\]"):
        b.node("ReduceSum", ["x"], ["s"], "sum", axes=[])
    with pytest.raises(OnnxError, match="cannot tell an ONNX type for \\[1, 2.0\\]"):
        b.node("ReduceSum", ["x"], ["s"], "sum", axes=[1, 2.0])
    with pytest.raises(OnnxError, match="cannot tell an ONNX type for True"):
        b.node("ReduceSum", ["x"], ["s"], "sum", keepdims=True)
    b.node("Clip", ["x", "", ""], ["c"], "clip")  # "" is an omitted optional input
    b.output("c", D, (1,))
    assert [n.name for n in b.graph().node] == ["relu", "clip"]
    assert b.graph().output == (ValueInfo("c", D, (1,)),)


def test_attribute_types_from_python_values():
    t = Tensor("t", D, (), [1.0])
    assert [attribute("a", v).type.name for v in (0.5, 3, "s", b"s", t, [0.5], (1, 2),
                                                 ["s", b"t"], [t])] == [
        "FLOAT", "INT", "STRING", "STRING", "TENSOR", "FLOATS", "INTS", "STRINGS", "TENSORS"]
    assert attribute("a", ["é"]).value == ("é".encode(),)


# A fuzzer: fixed seeds, mutated valid files ---------------------------------------------

def mutate(rng, data):
    """One hostile change: a flipped byte, a cut, an inserted field with a huge or wrong
    length, a deleted run, a duplicated run."""
    if not data:
        return bytes([rng.randrange(256)])
    data = bytearray(data)
    kind = rng.randrange(6)
    at = rng.randrange(len(data))
    if kind == 0:
        data[at] = rng.randrange(256)
    elif kind == 1:
        del data[at:]
    elif kind == 2:
        junk = key(rng.randrange(1, 30), LEN) + varint(rng.choice([2 ** 31, 2 ** 62, 2 ** 64 - 1,
                                                                   rng.randrange(1000)]))
        data[at:at] = junk
    elif kind == 3:
        del data[at:at + rng.randrange(1, 16)]
    elif kind == 4:
        data[at:at] = data[at:at + rng.randrange(1, 64)]
    else:
        data[at:at] = varint(rng.choice([2 ** 63, 2 ** 64 - 1, -1, 10 ** 6]))
    return bytes(data)


FUZZ_SOURCES = [serialize(rich_model()), serialize(affine(True)), HELPER_MODEL]


@pytest.mark.parametrize("seed", range(24))
def test_mutated_files_are_read_or_refused_quickly_in_bounded_memory(seed):
    rng = random.Random(7000 + seed)
    for _ in range(25):
        data = rng.choice(FUZZ_SOURCES)
        for _ in range(rng.choice([1, 1, 2, 5])):
            data = mutate(rng, data)
        started = time.process_time()
        tracemalloc.start()
        try:
            model = parse(data)
        except OnnxError as err:
            assert "\n" not in str(err) and len(str(err)) < 400
        else:  # a mutation that still reads is a model the writer writes back the same
            assert serialize(parse(serialize(model))) == serialize(model)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < 2 ** 16 + 64 * len(data), (seed, peak)
        assert time.process_time() - started < 1


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_are_refused(seed):
    rng = random.Random(8000 + seed)
    for _ in range(50):
        with pytest.raises(OnnxError):
            parse(bytes(rng.randrange(256) for _ in range(rng.randrange(300))))


def test_the_api_refuses_what_it_cannot_take():
    with pytest.raises(OnnxError, match="cannot parse a <class 'list'>; parseable: Model, "):
        parse(HELPER_MODEL, list)
    with pytest.raises(OnnxError, match="cannot serialize a dict"):
        serialize({})
    with pytest.raises(OnnxError, match="limits must be a Limits, not dict"):
        parse(HELPER_MODEL, limits={})
    for bad in (0, -1, 1.5, "8", True):
        with pytest.raises(OnnxError, match="limit depth must be a positive int"):
            Limits(depth=bad)
