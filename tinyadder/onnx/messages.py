"""The supported subset of onnx.proto as frozen dataclasses that validate what they are given.

Field names are onnx.proto's (``Node.input``, ``Graph.initializer``), so whoever knows ONNX
finds them. Three messages are flattened: a tensor's data is one tuple ``values`` whatever field
held it (``raw`` says whether it was ``raw_data``); an attribute's value is ``value``, of the
kind its ``type`` names; a ValueInfo carries its TypeProto's ``elem_type`` and ``shape`` (None:
no shape; else a tuple of dims, each an int ``dim_value``, a str ``dim_param`` or None, neither).
metadata_props are tuples of (key, value) pairs.

Every check here holds for a value read from a file and one built in Python alike.

>>> t = Tensor("w", DataType.FLOAT, (2,), (0.5, float32(0.1)))
>>> t.values[1], t.fractions()[1]
(0.10000000149011612, Fraction(13421773, 134217728))
>>> Tensor("w", DataType.FLOAT, (2,), (0.5, 0.1))
Traceback (most recent call last):
tinyadder.onnx.wire.OnnxError: tensor 'w': value 1, 0.1, is not a float32 value ...
"""

import math
import struct
from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction

from .wire import OnnxError

INT64_RANGE = (-(1 << 63), (1 << 63) - 1)
INT32_RANGE = (-(1 << 31), (1 << 31) - 1)
# TensorProto.DataType's names by number, for naming the unsupported ones
ONNX_TYPE_NAMES = ("UNDEFINED FLOAT UINT8 INT8 UINT16 INT16 INT32 INT64 STRING BOOL FLOAT16 "
                   "DOUBLE UINT32 UINT64 COMPLEX64 COMPLEX128 BFLOAT16 FLOAT8E4M3FN "
                   "FLOAT8E4M3FNUZ FLOAT8E5M2 FLOAT8E5M2FNUZ UINT4 INT4 FLOAT4E2M1 FLOAT8E8M0 "
                   "UINT2 INT2").split()


class DataType(IntEnum):
    """The supported element types, by their TensorProto.DataType numbers."""

    FLOAT = 1
    INT32 = 6
    INT64 = 7
    BOOL = 9
    DOUBLE = 11


class AttributeType(IntEnum):
    """The supported AttributeProto.AttributeType values (no GRAPH, SPARSE_TENSOR, TYPE_PROTO)."""

    FLOAT = 1
    INT = 2
    STRING = 3
    TENSOR = 4
    FLOATS = 6
    INTS = 7
    STRINGS = 8
    TENSORS = 9


UNSUPPORTED_ATTRIBUTES = {0: "UNDEFINED", 5: "GRAPH (subgraphs are not supported)",
                          10: "GRAPHS (subgraphs are not supported)", 11: "SPARSE_TENSOR",
                          12: "SPARSE_TENSORS", 13: "TYPE_PROTO", 14: "TYPE_PROTOS"}


def float32(x):
    """The float32 nearest to the float x (ties to even), as a Python float. Only a float: a
    rational rounded to a float first could round twice."""
    if type(x) is not float:
        raise OnnxError(f"float32() takes a float, not {type(x).__name__}")
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        raise OnnxError(f"{x!r} has no float32 value") from None


def _member(enum, number):
    """enum(number) for an int number that names a member, else None."""
    if isinstance(number, int) and not isinstance(number, bool):
        return enum._value2member_map_.get(number)
    return None


def data_type(number, what):
    """The DataType numbered ``number``, or an OnnxError naming it and the supported ones."""
    member = _member(DataType, number)
    if member is not None:
        return member
    known = (f" ({ONNX_TYPE_NAMES[number]})" if isinstance(number, int) and
             0 <= number < len(ONNX_TYPE_NAMES) else "")
    raise OnnxError(f"{what}: data type {number!r}{known} is not supported; "
                    f"supported: {', '.join(t.name for t in DataType)}")


def attribute_type(number, what):
    """The AttributeType numbered ``number``, or an OnnxError naming it."""
    member = _member(AttributeType, number)
    if member is not None:
        return member
    known = UNSUPPORTED_ATTRIBUTES.get(number, "unknown") if isinstance(number, int) else "?"
    raise OnnxError(f"{what}: attribute type {number!r} ({known}) is not supported")


def _text(value, what, empty=True):
    if type(value) is not str:
        raise OnnxError(f"{what} must be a str, not {type(value).__name__}")
    if not empty and not value:
        raise OnnxError(f"{what} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise OnnxError(f"{what} cannot be encoded as UTF-8") from None
    return value


def _integer(value, what, low=INT64_RANGE[0], high=INT64_RANGE[1]):
    if not isinstance(value, int) or isinstance(value, bool):
        raise OnnxError(f"{what} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise OnnxError(f"{what} is {value}, outside [{low}, {high}]")
    return int(value)


def _items(value, what, check):
    """value as a tuple, each item passed through check(item, what of it)."""
    if not isinstance(value, (list, tuple)):
        raise OnnxError(f"{what} must be a list or tuple, not {type(value).__name__}")
    try:
        return tuple(check(item, what) for item in value)
    except OnnxError:  # name the item: check it again, one by one, under its own name
        for i, item in enumerate(value):
            check(item, f"{what}[{i}]")
        raise


def _instances(cls):
    def check(item, what):
        if not isinstance(item, cls):
            raise OnnxError(f"{what} must be a {cls.__name__}, not {type(item).__name__}")
        return item
    return check


def _bytes(value, what):
    if type(value) is not bytes:
        raise OnnxError(f"{what} must be bytes, not {type(value).__name__}")
    return value


def _is_float32(x):
    """Whether the float x is a float32 value (infinities and NaN are)."""
    if not math.isfinite(x):
        return True
    try:
        return float32(x) == x
    except OnnxError:
        return False


def _float32_value(value, what):
    if type(value) is not float:
        raise OnnxError(f"{what} must be a float, not {type(value).__name__}")
    if not _is_float32(value):
        raise OnnxError(f"{what} = {value!r} is not a float32 value (round it with float32())")
    return value


def _metadata(value, what):
    def pair(item, where):
        if not isinstance(item, tuple) or len(item) != 2:
            raise OnnxError(f"{where} must be a (key, value) pair of str")
        return _text(item[0], f"{where} key"), _text(item[1], f"{where} value")
    pairs = _items(value, what, pair)
    _unique([k for k, _ in pairs], f"{what} key")
    return pairs


def _unique(names, what):
    seen = set()
    for name in names:
        if name in seen:
            raise OnnxError(f"{what} {name!r} appears twice")
        seen.add(name)


def _set(message, **values):
    for name, value in values.items():
        object.__setattr__(message, name, value)


_PYTHON_TYPE = {DataType.FLOAT: float, DataType.DOUBLE: float, DataType.INT32: int,
                DataType.INT64: int, DataType.BOOL: bool}
_RANGE = {DataType.INT32: INT32_RANGE, DataType.INT64: INT64_RANGE}


def _values(kind, values, what):
    """values as a tuple of Python values of DataType kind: floats (float32 ones for FLOAT),
    ints in the type's range, bools."""
    if not isinstance(values, (list, tuple)):
        raise OnnxError(f"{what}: values must be a list or tuple, not {type(values).__name__}")
    values = tuple(values)
    python = _PYTHON_TYPE[kind]
    if set(map(type, values)) - {python}:
        i = next(i for i, v in enumerate(values) if type(v) is not python)
        raise OnnxError(f"{what}: value {i} is a {type(values[i]).__name__}, not a "
                        f"{python.__name__} ({kind.name})")
    low, high = _RANGE.get(kind, (None, None))
    if low is not None and values and not low <= min(values) <= max(values) <= high:
        i = next(i for i, v in enumerate(values) if not low <= v <= high)
        raise OnnxError(f"{what}: value {i}, {values[i]}, is outside {kind.name}'s range")
    if kind is DataType.FLOAT and not _all_float32(values):
        i = next(i for i, v in enumerate(values) if not _is_float32(v))
        raise OnnxError(f"{what}: value {i}, {values[i]!r}, is not a float32 value "
                        "(round it with float32())")
    return values


def _all_float32(values):
    """Whether every float in values is a float32 value: one pack and unpack of them all, and
    one by one only where that differs (a NaN is never equal to itself)."""
    code = f"<{len(values)}f"
    try:
        if struct.unpack(code, struct.pack(code, *values)) == values:
            return True
    except OverflowError:
        return False
    return all(map(_is_float32, values))


@dataclass(frozen=True)
class Tensor:
    """TensorProto: ``values`` in row-major order, as many as the product of ``dims``."""

    name: str
    data_type: DataType
    dims: tuple
    values: tuple
    raw: bool = False
    doc_string: str = ""
    metadata_props: tuple = ()

    def __post_init__(self):
        name = _text(self.name, "Tensor.name")
        what = f"tensor {name!r}"
        kind = data_type(self.data_type, what)
        dims = _items(self.dims, f"{what} dims", lambda d, w: _integer(d, w, 0))
        values = _values(kind, self.values, what)
        if len(values) != math.prod(dims):
            raise OnnxError(f"{what} has {len(values)} values for dims {list(dims)} "
                            f"({math.prod(dims)} elements)")
        if type(self.raw) is not bool:
            raise OnnxError(f"{what}: raw must be a bool")
        _set(self, data_type=kind, dims=dims, values=values,
             doc_string=_text(self.doc_string, f"{what} doc_string"),
             metadata_props=_metadata(self.metadata_props, f"{what} metadata_props"))

    def fractions(self):
        """The values as exact rationals: Fraction(x) of a binary float is x exactly."""
        for i, v in enumerate(self.values):
            if isinstance(v, float) and not math.isfinite(v):
                raise OnnxError(f"tensor {self.name!r}: value {i} is {v}, not a rational")
        return tuple(Fraction(v) for v in self.values)


_ATTRIBUTE_VALUE = {
    AttributeType.FLOAT: _float32_value,
    AttributeType.INT: _integer,
    AttributeType.STRING: _bytes,
    AttributeType.TENSOR: _instances(Tensor),
    AttributeType.FLOATS: lambda v, w: _items(v, w, _float32_value),
    AttributeType.INTS: lambda v, w: _items(v, w, _integer),
    AttributeType.STRINGS: lambda v, w: _items(v, w, _bytes),
    AttributeType.TENSORS: lambda v, w: _items(v, w, _instances(Tensor)),
}


@dataclass(frozen=True)
class Attribute:
    """AttributeProto: ``value`` is a float (a float32 value), an int, bytes, a Tensor, or a
    tuple of one of those, as ``type`` says."""

    name: str
    type: AttributeType
    value: object
    doc_string: str = ""

    def __post_init__(self):
        what = f"attribute {_text(self.name, 'Attribute.name', empty=False)!r}"
        kind = attribute_type(self.type, what)
        _set(self, type=kind, value=_ATTRIBUTE_VALUE[kind](self.value, f"{what} value"),
             doc_string=_text(self.doc_string, f"{what} doc_string"))


@dataclass(frozen=True)
class Node:
    """NodeProto of the default domain (ai.onnx, written "")."""

    input: tuple
    output: tuple
    op_type: str
    name: str = ""
    attribute: tuple = ()
    doc_string: str = ""
    domain: str = ""
    metadata_props: tuple = ()

    def __post_init__(self):
        what = f"node {_text(self.name, 'Node.name')!r}"
        _text(self.op_type, f"{what} op_type", empty=False)
        if _text(self.domain, f"{what} domain"):
            raise OnnxError(f"{what}: domain {self.domain!r} is not supported (only '', ai.onnx)")
        attributes = _items(self.attribute, f"{what} attribute", _instances(Attribute))
        _unique([a.name for a in attributes], f"{what} attribute")
        _set(self, input=_items(self.input, f"{what} input", _text),
             output=_items(self.output, f"{what} output", _text), attribute=attributes,
             doc_string=_text(self.doc_string, f"{what} doc_string"),
             metadata_props=_metadata(self.metadata_props, f"{what} metadata_props"))


def _dim(value, what):
    if value is None:
        return None
    if isinstance(value, str):
        return _text(value, what, empty=False)
    return _integer(value, what, 0)


@dataclass(frozen=True)
class ValueInfo:
    """ValueInfoProto of a tensor: its TypeProto.Tensor's ``elem_type`` and ``shape``."""

    name: str
    elem_type: DataType
    shape: object = None
    doc_string: str = ""
    metadata_props: tuple = ()

    def __post_init__(self):
        what = f"value {_text(self.name, 'ValueInfo.name', empty=False)!r}"
        shape = None if self.shape is None else _items(self.shape, f"{what} shape", _dim)
        _set(self, elem_type=data_type(self.elem_type, what), shape=shape,
             doc_string=_text(self.doc_string, f"{what} doc_string"),
             metadata_props=_metadata(self.metadata_props, f"{what} metadata_props"))


@dataclass(frozen=True)
class OperatorSetId:
    """OperatorSetIdProto: an operator set's domain and version."""

    domain: str
    version: int

    def __post_init__(self):
        _text(self.domain, "OperatorSetId.domain")
        _set(self, version=_integer(self.version, "OperatorSetId.version", 1))


@dataclass(frozen=True)
class Graph:
    """GraphProto: nodes in topological order, initializers with unique non-empty names."""

    node: tuple
    name: str
    initializer: tuple = ()
    doc_string: str = ""
    input: tuple = ()
    output: tuple = ()
    value_info: tuple = ()
    metadata_props: tuple = ()

    def __post_init__(self):
        what = f"graph {_text(self.name, 'Graph.name')!r}"
        initializers = _items(self.initializer, f"{what} initializer", _instances(Tensor))
        for tensor in initializers:
            _text(tensor.name, f"{what} initializer name", empty=False)
        _unique([t.name for t in initializers], f"{what} initializer")
        values = _instances(ValueInfo)
        _set(self, node=_items(self.node, f"{what} node", _instances(Node)),
             initializer=initializers, doc_string=_text(self.doc_string, f"{what} doc_string"),
             input=_items(self.input, f"{what} input", values),
             output=_items(self.output, f"{what} output", values),
             value_info=_items(self.value_info, f"{what} value_info", values),
             metadata_props=_metadata(self.metadata_props, f"{what} metadata_props"))


@dataclass(frozen=True)
class Model:
    """ModelProto: IR version 3 or later, importing the default opset (domain "") only."""

    ir_version: int
    graph: Graph
    opset_import: tuple
    producer_name: str = ""
    producer_version: str = ""
    domain: str = ""
    model_version: int = 0
    doc_string: str = ""
    metadata_props: tuple = ()

    def __post_init__(self):
        if self.graph is None:
            raise OnnxError("the model has no graph")
        if not isinstance(self.graph, Graph):
            raise OnnxError(f"Model.graph must be a Graph, not {type(self.graph).__name__}")
        _integer(self.ir_version, "Model.ir_version", 3)
        opsets = _items(self.opset_import, "Model.opset_import", _instances(OperatorSetId))
        # another domain's import is harmless while no node uses it (a node of another domain
        # is refused): onnxruntime's optimiser writes ai.onnx.ml and com.microsoft imports
        default = [opset for opset in opsets if opset.domain in ("", "ai.onnx")]
        if len(default) != 1:
            raise OnnxError(f"the model imports {len(default)} opsets of domain ''; it must "
                            "import exactly one")
        opsets = tuple(default) + tuple(o for o in opsets if o not in default)
        for name in ("producer_name", "producer_version", "domain", "doc_string"):
            _text(getattr(self, name), f"Model.{name}")
        _integer(self.model_version, "Model.model_version")
        _set(self, opset_import=opsets,
             metadata_props=_metadata(self.metadata_props, "Model.metadata_props"))
