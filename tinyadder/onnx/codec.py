"""ONNX messages to bytes and back: onnx.proto's field numbers for the supported subset, one
writer and one strict reader over them.

The writer puts fields in field-number order, as protobuf's own serializers do, repeated
scalars packed where onnx.proto says ``[packed = true]`` (tensor data) and one by one elsewhere
(``dims``, ``floats``, ``ints``). A string or number field is written when it is not empty or
zero, except the ones ``onnx.helper`` always sets (names, types, an attribute's value, opset
ids, metadata entries), which are always written: for models built as ``onnx.helper`` builds
them, the bytes are the same.

The reader's rule for fields: a field this subset decodes must have its field's wire type (a
repeated scalar packed or not) and, if singular, appear once; any other field is refused,
by name if onnx.proto defines it, by number if not. Nothing is skipped.

>>> from .messages import OperatorSetId
>>> serialize(OperatorSetId("", 21)).hex()
'0a001015'
>>> parse(bytes.fromhex("0a001015"), OperatorSetId)
OperatorSetId(domain='', version=21)
>>> parse(bytes.fromhex("1095"), OperatorSetId)
Traceback (most recent call last):
tinyadder.onnx.wire.OnnxError: OperatorSetIdProto: byte 2: varint cut short by the end ...
"""

import math
import os
import struct
from dataclasses import dataclass, field as dataclass_field

from .limits import LIMITS, Limits
from .messages import (INT32_RANGE, Attribute, AttributeType, DataType, Graph, Model, Node,
                       OperatorSetId, Tensor, ValueInfo, attribute_type, data_type)
from .wire import I32, I64, LEN, VARINT, OnnxError, fields, key, length_delimited, varint
from .wire import read_varint


def _signed64(value):
    return value - (1 << 64) if value >> 63 else value


def _int32(value):
    value = _signed64(value)
    if not INT32_RANGE[0] <= value <= INT32_RANGE[1]:
        raise OnnxError(f"int32 field holds {value}")
    return value


def _utf8(payload):
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as err:
        raise OnnxError(f"string is not UTF-8 (byte {err.start} of it)") from None


@dataclass(frozen=True)
class Scalar:
    """A protobuf scalar type: its wire type, its struct code if fixed-width, and how a value
    becomes a payload and back (``decode`` takes a varint's int or a fixed or length-delimited
    field's bytes), and its value when absent."""

    name: str
    wire: int
    encode: object
    decode: object
    empty: object
    code: str = ""


INT64 = Scalar("int64", VARINT, varint, _signed64, 0)
INT32 = Scalar("int32", VARINT, varint, _int32, 0)
FLOAT = Scalar("float", I32, lambda v: struct.pack("<f", v),
               lambda b: struct.unpack("<f", b)[0], 0.0, "f")
DOUBLE = Scalar("double", I64, lambda v: struct.pack("<d", v),
                lambda b: struct.unpack("<d", b)[0], 0.0, "d")
STRING = Scalar("string", LEN, lambda v: v.encode("utf-8"), _utf8, "")
BYTES = Scalar("bytes", LEN, bytes, bytes, b"")


@dataclass(frozen=True)
class Field:
    """A field of a message: its number, its name in onnx.proto, its type (a Scalar or a
    Schema), for a repeated field the Limits attribute that caps its count, whether the writer
    packs it, and whether the writer writes it when it is empty or zero. ``wire``: the wire
    type of one value (a message's is length-delimited)."""

    number: int
    name: str
    kind: object
    limit: str = ""
    packed: bool = False
    always: bool = False

    def __post_init__(self):
        object.__setattr__(self, "wire", LEN if isinstance(self.kind, Schema) else
                           self.kind.wire)

    def empty(self):
        """What the field reads as when absent: no items, no message, the scalar's zero."""
        if self.limit:
            return ()
        return None if isinstance(self.kind, Schema) else self.kind.empty


@dataclass(frozen=True)
class Schema:
    """A message: its onnx.proto name, its fields, the fields it refuses by number (with
    why), and how its Python value is made from {field name: value} and split back into it
    (a missing name or None: absent). Without ``build`` the value is ``cls(**values)``, every
    field given, absent ones empty; without ``split`` it is read back by attribute names."""

    name: str
    fields: tuple
    refused: dict = dataclass_field(default_factory=dict)
    cls: type = None
    build: object = None
    split: object = None

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(sorted(self.fields, key=lambda f: f.number)))
        object.__setattr__(self, "by_number", {f.number: f for f in self.fields})

    def make(self, values, limits):
        """The Python value of a message whose fields read as values."""
        if self.build:
            return self.build(values, limits)
        return self.cls(**{f.name: values.get(f.name, f.empty()) for f in self.fields})

    def parts(self, message):
        """{field name: value} of a Python value, for the writer."""
        if self.split:
            return self.split(message)
        return {f.name: getattr(message, f.name) for f in self.fields}


ENTRY = Schema(
    "StringStringEntryProto",
    (Field(1, "key", STRING, always=True), Field(2, "value", STRING, always=True)),
    build=lambda values, limits: (values.get("key", ""), values.get("value", "")),
    split=lambda pair: {"key": pair[0], "value": pair[1]})


def _metadata(number):
    return Field(number, "metadata_props", ENTRY, "items")


# Tensors ---------------------------------------------------------------------------------

TYPED_FIELD = {DataType.FLOAT: "float_data", DataType.DOUBLE: "double_data",
               DataType.INT32: "int32_data", DataType.INT64: "int64_data",
               DataType.BOOL: "int32_data"}
RAW_CODE = {DataType.FLOAT: "f", DataType.DOUBLE: "d", DataType.INT32: "i",
            DataType.INT64: "q", DataType.BOOL: "?"}
DATA_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "raw_data")


def _from_raw(kind, raw, count, what):
    """The values of raw_data: count little-endian values of DataType kind (BOOL: bytes 0, 1)."""
    size = struct.calcsize("<" + RAW_CODE[kind])
    if len(raw) != count * size:
        raise OnnxError(f"{what}: raw_data has {len(raw)} bytes for {count} elements of "
                        f"{size} bytes")
    if kind is DataType.BOOL and raw.translate(None, b"\x00\x01"):
        raise OnnxError(f"{what}: a BOOL byte of raw_data is neither 0 nor 1")
    return struct.unpack(f"<{count}{RAW_CODE[kind]}", raw)


def _tensor(values, limits):
    name = values.get("name", "")
    what = f"tensor {name!r}"
    kind = data_type(values.get("data_type", 0), what)
    location = values.pop("data_location", 0)
    if location:
        raise OnnxError(f"{what}: data_location {location} "
                        f"({'EXTERNAL: external data' if location == 1 else 'unknown'}) "
                        "is not supported")
    dims = values.get("dims", [])
    if any(d < 0 for d in dims):
        raise OnnxError(f"{what}: dims {dims} has a negative dim")
    count = math.prod(dims)
    if count > limits.elements:
        raise OnnxError(f"{what}: dims {dims} make {count} elements, over the limit of "
                        f"{limits.elements} (limit elements)")
    present = [f for f in DATA_FIELDS if f in values]
    if len(present) > 1:
        raise OnnxError(f"{what}: data in both {present[0]} and {present[1]}")
    if present and present[0] not in (TYPED_FIELD[kind], "raw_data"):
        raise OnnxError(f"{what}: a {kind.name} tensor with {present[0]}")
    raw = present == ["raw_data"]
    if raw:
        data = _from_raw(kind, values["raw_data"], count, what)
    else:
        data = values.get(TYPED_FIELD[kind], ())
        if kind is DataType.BOOL:
            if any(v not in (0, 1) for v in data):
                raise OnnxError(f"{what}: a BOOL value of int32_data is neither 0 nor 1")
            data = [bool(v) for v in data]
    return Tensor(name, kind, dims, data, raw, values.get("doc_string", ""),
                  values.get("metadata_props", ()))


def _split_tensor(tensor):
    out = {"dims": tensor.dims, "data_type": tensor.data_type, "name": tensor.name,
           "doc_string": tensor.doc_string, "metadata_props": tensor.metadata_props}
    if tensor.raw:
        code = RAW_CODE[tensor.data_type]
        out["raw_data"] = struct.pack(f"<{len(tensor.values)}{code}", *tensor.values)
    elif tensor.data_type is DataType.BOOL:
        out["int32_data"] = [int(v) for v in tensor.values]
    else:
        out[TYPED_FIELD[tensor.data_type]] = tensor.values
    return out


TENSOR = Schema("TensorProto", (
    Field(1, "dims", INT64, "rank"),
    Field(2, "data_type", INT32, always=True),
    Field(4, "float_data", FLOAT, "elements", packed=True),
    Field(5, "int32_data", INT32, "elements", packed=True),
    Field(7, "int64_data", INT64, "elements", packed=True),
    Field(8, "name", STRING, always=True),
    Field(9, "raw_data", BYTES, always=True),
    Field(10, "double_data", DOUBLE, "elements", packed=True),
    Field(12, "doc_string", STRING),
    Field(14, "data_location", INT32),
    _metadata(16),
), build=_tensor, split=_split_tensor, refused={
    3: "segment is not supported",
    6: "string_data (STRING tensors) is not supported",
    11: "uint64_data (UINT32, UINT64 tensors) is not supported",
    13: "external_data: external data is not supported",
})


# Attributes ------------------------------------------------------------------------------

VALUE_FIELD = {AttributeType.FLOAT: "f", AttributeType.INT: "i", AttributeType.STRING: "s",
               AttributeType.TENSOR: "t", AttributeType.FLOATS: "floats",
               AttributeType.INTS: "ints", AttributeType.STRINGS: "strings",
               AttributeType.TENSORS: "tensors"}
ABSENT_VALUE = {AttributeType.FLOAT: 0.0, AttributeType.INT: 0, AttributeType.STRING: b"",
                AttributeType.FLOATS: (), AttributeType.INTS: (), AttributeType.STRINGS: (),
                AttributeType.TENSORS: ()}


def _attribute(values, limits):
    name = values.get("name", "")
    what = f"attribute {name!r}"
    kind = attribute_type(values.get("type", 0), what)
    field = VALUE_FIELD[kind]
    others = [f for f in VALUE_FIELD.values() if f in values and f != field]
    if others:
        raise OnnxError(f"{what} of type {kind.name} also carries {others[0]}")
    if kind is AttributeType.TENSOR and "t" not in values:
        raise OnnxError(f"{what} of type TENSOR has no t")
    return Attribute(name, kind, values.get(field, ABSENT_VALUE.get(kind)),
                     values.get("doc_string", ""))


ATTRIBUTE = Schema("AttributeProto", (
    Field(1, "name", STRING, always=True),
    Field(2, "f", FLOAT, always=True),
    Field(3, "i", INT64, always=True),
    Field(4, "s", BYTES, always=True),
    Field(5, "t", TENSOR),
    Field(7, "floats", FLOAT, "items"),
    Field(8, "ints", INT64, "items"),
    Field(9, "strings", BYTES, "items"),
    Field(10, "tensors", TENSOR, "items"),
    Field(13, "doc_string", STRING),
    Field(20, "type", INT32, always=True),
), build=_attribute, split=lambda a: {"name": a.name, "type": a.type,
                                      VALUE_FIELD[a.type]: a.value,
                                      "doc_string": a.doc_string}, refused={
    6: "g: subgraphs are not supported",
    11: "graphs: subgraphs are not supported",
    14: "tp (TYPE_PROTO attributes) is not supported",
    15: "type_protos (TYPE_PROTOS attributes) is not supported",
    21: "ref_attr_name (attribute references in functions) is not supported",
    22: "sparse_tensor (SPARSE_TENSOR attributes) is not supported",
    23: "sparse_tensors (SPARSE_TENSORS attributes) is not supported",
})


# Value infos: ValueInfoProto > TypeProto > TypeProto.Tensor > TensorShapeProto > Dimension -

def _dimension(values, limits):
    if "dim_value" in values and "dim_param" in values:
        raise OnnxError("a dimension with both dim_value and dim_param")
    return values.get("dim_value", values.get("dim_param"))


DIMENSION = Schema("TensorShapeProto.Dimension", (
    Field(1, "dim_value", INT64, always=True),
    Field(2, "dim_param", STRING, always=True),
), refused={3: "denotation is not supported"}, build=_dimension,
    split=lambda dim: {"dim_param" if isinstance(dim, str) else "dim_value": dim})
SHAPE = Schema("TensorShapeProto", (Field(1, "dim", DIMENSION, "rank"),),
               build=lambda values, limits: tuple(values.get("dim", ())),
               split=lambda dims: {"dim": dims})
TENSOR_TYPE = Schema("TypeProto.Tensor", (
    Field(1, "elem_type", INT32, always=True),
    Field(2, "shape", SHAPE),
), build=lambda values, limits: (values.get("elem_type", 0), values.get("shape")),
    split=lambda pair: {"elem_type": pair[0], "shape": pair[1]})


def _type(values, limits):
    if "tensor_type" not in values:
        raise OnnxError("a TypeProto without tensor_type")
    return values["tensor_type"]


TYPE = Schema("TypeProto", (Field(1, "tensor_type", TENSOR_TYPE),), build=_type,
              split=lambda pair: {"tensor_type": pair}, refused={
    4: "sequence_type is not supported", 5: "map_type is not supported",
    6: "denotation is not supported", 7: "opaque_type is not supported",
    8: "sparse_tensor_type is not supported", 9: "optional_type is not supported"})


def _value_info(values, limits):
    name = values.get("name", "")
    if "type" not in values:
        raise OnnxError(f"value {name!r} has no type")
    elem_type, shape = values["type"]
    return ValueInfo(name, data_type(elem_type, f"value {name!r}"), shape,
                     values.get("doc_string", ""), values.get("metadata_props", ()))


VALUE_INFO = Schema("ValueInfoProto", (
    Field(1, "name", STRING, always=True),
    Field(2, "type", TYPE),
    Field(3, "doc_string", STRING),
    _metadata(4),
), build=_value_info, split=lambda v: {"name": v.name, "type": (v.elem_type, v.shape),
                                       "doc_string": v.doc_string,
                                       "metadata_props": v.metadata_props})


# Nodes, graphs, models -------------------------------------------------------------------

NODE = Schema("NodeProto", (
    Field(1, "input", STRING, "items"),
    Field(2, "output", STRING, "items"),
    Field(3, "name", STRING),
    Field(4, "op_type", STRING),
    Field(5, "attribute", ATTRIBUTE, "attributes"),
    Field(6, "doc_string", STRING),
    Field(7, "domain", STRING),
    _metadata(9),
), {8: "overload (function overloads) is not supported",
    10: "device_configurations is not supported"}, Node)
GRAPH = Schema("GraphProto", (
    Field(1, "node", NODE, "nodes"),
    Field(2, "name", STRING, always=True),
    Field(5, "initializer", TENSOR, "initializers"),
    Field(10, "doc_string", STRING),
    Field(11, "input", VALUE_INFO, "items"),
    Field(12, "output", VALUE_INFO, "items"),
    Field(13, "value_info", VALUE_INFO, "items"),
    _metadata(16),
), {15: "sparse_initializer: sparse initializers are not supported",
    14: "quantization_annotation is not supported"}, Graph)
OPSET = Schema("OperatorSetIdProto", (
    Field(1, "domain", STRING, always=True),
    Field(2, "version", INT64, always=True),
), cls=OperatorSetId)
MODEL = Schema("ModelProto", (
    Field(1, "ir_version", INT64, always=True),
    Field(2, "producer_name", STRING),
    Field(3, "producer_version", STRING),
    Field(4, "domain", STRING),
    Field(5, "model_version", INT64),
    Field(6, "doc_string", STRING),
    Field(7, "graph", GRAPH),
    Field(8, "opset_import", OPSET, "items"),
    _metadata(14),
), {20: "training_info is not supported",
    25: "functions (model-local functions) are not supported",
    26: "configuration (device configurations) is not supported"}, Model)

SCHEMAS = {Model: MODEL, Graph: GRAPH, Node: NODE, Attribute: ATTRIBUTE, Tensor: TENSOR,
           ValueInfo: VALUE_INFO, OperatorSetId: OPSET}


# The writer ------------------------------------------------------------------------------

def serialize(message):
    """The bytes of a Model (or of any other message of the subset)."""
    schema = SCHEMAS.get(type(message))
    if schema is None:
        raise OnnxError(f"cannot serialize a {type(message).__name__}; serializable: "
                        f"{', '.join(cls.__name__ for cls in SCHEMAS)}")
    return _write(message, schema)


def _write(message, schema):
    values = schema.parts(message)
    out = bytearray()
    for field in schema.fields:
        value = values.get(field.name)
        if field.limit:
            if not value:
                continue
            if field.packed:
                out += length_delimited(field.number, _pack(field.kind, value))
            else:
                for item in value:
                    out += _field(field, item)
        elif value is not None and (field.always or isinstance(field.kind, Schema)
                                    or value != field.kind.empty):
            out += _field(field, value)
    return bytes(out)


def _pack(kind, values):
    if kind.code:
        return struct.pack(f"<{len(values)}{kind.code}", *values)
    return b"".join(map(kind.encode, values))


def _field(field, value):
    kind = field.kind
    if isinstance(kind, Schema):
        return length_delimited(field.number, _write(value, kind))
    if kind.wire == LEN:
        return length_delimited(field.number, kind.encode(value))
    return key(field.number, kind.wire) + kind.encode(value)


# The reader ------------------------------------------------------------------------------

class _Located(OnnxError):
    """An OnnxError whose message already says where in the file it happened."""


def parse(data, kind=Model, limits=LIMITS):
    """The message of type kind (a Model unless said) that data, bytes, holds; OnnxError if
    data is not one of the supported subset or breaks one of the limits."""
    schema = SCHEMAS.get(kind) if isinstance(kind, type) else None
    if schema is None:
        raise OnnxError(f"cannot parse a {kind!r}; parseable: "
                        f"{', '.join(cls.__name__ for cls in SCHEMAS)}")
    if not isinstance(limits, Limits):
        raise OnnxError(f"limits must be a Limits, not {type(limits).__name__}")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise OnnxError(f"an ONNX file is bytes, not {type(data).__name__}")
    if len(data) > limits.file_bytes:
        raise OnnxError(f"{len(data)} bytes, over the limit of {limits.file_bytes} "
                        "(limit file_bytes)")
    try:
        return _Reader(bytes(data), limits).read(0, len(data), schema, 1, schema.name)
    except _Located as err:
        raise OnnxError(str(err)) from None


def load(path, limits=LIMITS):
    """The Model in the file at path, its size checked against the limit before reading."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > limits.file_bytes:
            raise OnnxError(f"{path}: {size} bytes, over the limit of {limits.file_bytes} "
                            "(limit file_bytes)")
        return parse(file.read(limits.file_bytes + 1), Model, limits)


def save(model, path):
    """Write the Model to the file at path."""
    data = serialize(model)
    with open(path, "wb") as file:
        file.write(data)


def _name(schema, field):
    return f"{schema.name}.{field.name} (field {field.number})"


def _over(schema, field, at, cap):
    return OnnxError(f"byte {at}: {_name(schema, field)} has more than {cap} items "
                     f"(limit {field.limit})")


class _Reader:
    """Reads the messages of one file, counting its fields against ``limits.fields``."""

    def __init__(self, data, limits):
        self.data, self.limits, self.fields_left = data, limits, limits.fields

    def read(self, start, end, schema, depth, where):
        """schema.make of the fields of data[start:end]; where names the message."""
        try:
            if depth > self.limits.depth:
                raise OnnxError(f"messages nested more than {self.limits.depth} deep "
                                "(limit depth)")
            values = {}
            for at, number, wire, raw in fields(self.data, start, end):
                self.count(at)
                field = schema.by_number.get(number) or _refuse(schema, number, at)
                self.take(at, wire, raw, schema, field, values, depth, where)
            return schema.make(values, self.limits)
        except _Located:
            raise
        except OnnxError as err:
            raise _Located(f"{where}: {err}") from None

    def take(self, at, wire, raw, schema, field, values, depth, where):
        """Decode one occurrence of field into values[field.name]."""
        packed = field.limit and wire == LEN and field.wire != LEN
        if wire != field.wire and not packed:
            raise OnnxError(f"byte {at}: {_name(schema, field)} has wire type {wire}, not "
                            f"{field.wire}")
        if not field.limit:
            if field.name in values:
                raise OnnxError(f"byte {at}: {_name(schema, field)} appears twice")
            values[field.name] = self.value(raw, field, depth, where)
            return
        items = values.setdefault(field.name, [])
        cap = getattr(self.limits, field.limit)
        if packed:
            items.extend(self.unpack(raw, schema, field, at, cap - len(items), cap))
            return
        if len(items) >= cap:
            raise _over(schema, field, at, cap)
        items.append(self.value(raw, field, depth, where, len(items)))

    def value(self, raw, field, depth, where, index=None):
        """The value of one occurrence of field; a message's is read as where.name[index]."""
        kind = field.kind
        if field.wire == VARINT:
            return kind.decode(raw)
        if not isinstance(kind, Schema):
            return kind.decode(self.data[raw[0]:raw[1]])
        inner = f"{where}.{field.name}" + ("" if index is None else f"[{index}]")
        return self.read(raw[0], raw[1], kind, depth + 1, inner)

    def unpack(self, span, schema, field, at, room, cap):
        """The values of a packed repeated scalar field, at most room of them."""
        start, end = span
        kind = field.kind
        if kind.code:
            size = struct.calcsize(kind.code)
            if (end - start) % size:
                raise OnnxError(f"byte {at}: {_name(schema, field)} is packed in "
                                f"{end - start} bytes, not a multiple of {size}")
            count = (end - start) // size
            if count > room:
                raise _over(schema, field, at, cap)
            return struct.unpack_from(f"<{count}{kind.code}", self.data, start)
        out, pos = [], start
        while pos < end:
            if len(out) >= room:
                raise _over(schema, field, at, cap)
            self.count(at)
            value, pos = read_varint(self.data, pos, end)
            out.append(kind.decode(value))
        return out

    def count(self, at):
        """Take one field (or one varint of a packed run) from the file's budget."""
        self.fields_left -= 1
        if self.fields_left < 0:
            raise OnnxError(f"byte {at}: more than {self.limits.fields} fields in the file "
                            "(limit fields)")


def _refuse(schema, number, at):
    reason = schema.refused.get(number)
    if reason:
        raise OnnxError(f"byte {at}: {schema.name}.{reason}")
    raise OnnxError(f"byte {at}: {schema.name} has field {number}, which this reader does "
                    "not know")
