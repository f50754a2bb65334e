"""A graph built node by node, for exporters: every value defined once, before it is used.

>>> from tinyadder.onnx import DataType, GraphBuilder
>>> b = GraphBuilder("affine")
>>> b.input("x", DataType.DOUBLE, (1, 2))
>>> b.initializer("W", [1.0, 0.0, 0.0, 1.0], (2, 2), DataType.DOUBLE)
>>> b.node("MatMul", ["x", "W"], ["y"], "matmul")
>>> b.node("Add", ["y", "nosuch"], ["z"], "add")
Traceback (most recent call last):
tinyadder.onnx.wire.OnnxError: node 'add': input 'nosuch' is not defined before it
"""

from .messages import (Attribute, AttributeType, Graph, Model, Node, OperatorSetId, Tensor,
                       ValueInfo)
from .wire import OnnxError


LIST_OF = {AttributeType.FLOAT: AttributeType.FLOATS, AttributeType.INT: AttributeType.INTS,
           AttributeType.STRING: AttributeType.STRINGS, AttributeType.TENSOR: AttributeType.TENSORS}


def attribute(name, value):
    """The Attribute of a Python value: float FLOAT (a float32 value), int INT, str (UTF-8) or
    bytes STRING, Tensor TENSOR, and a non-empty list or tuple of one of those the list type."""
    kind = _scalar_type(value)
    if kind is not None:
        return Attribute(name, kind, value.encode("utf-8") if isinstance(value, str) else value)
    kinds = {_scalar_type(v) for v in value} if isinstance(value, (list, tuple)) else set()
    if len(kinds) != 1 or None in kinds:
        raise OnnxError(f"attribute {name!r}: cannot tell an ONNX type for {value!r:.60} (give "
                        "a float, int, str, bytes or Tensor, or a non-empty list of one)")
    kind = LIST_OF[kinds.pop()]
    return Attribute(name, kind, [v.encode("utf-8") if isinstance(v, str) else v for v in value])


def _scalar_type(value):
    if isinstance(value, bool):
        return None
    for python, kind in ((float, AttributeType.FLOAT), (int, AttributeType.INT),
                         ((str, bytes), AttributeType.STRING), (Tensor, AttributeType.TENSOR)):
        if isinstance(value, python):
            return kind
    return None


class GraphBuilder:
    """Collects inputs, initializers, nodes and outputs into a :class:`Graph` (:meth:`graph`)
    or a :class:`Model` (:meth:`model`); refuses a value defined twice, a node input or a graph
    output not defined before, and a node name used twice."""

    def __init__(self, name):
        self.name = name
        self._inputs, self._initializers, self._nodes, self._outputs = [], [], [], []
        self._defined, self._node_names = set(), set()

    def _define(self, name, what):
        if name in self._defined:
            raise OnnxError(f"{what}: value {name!r} is defined twice")
        self._defined.add(name)

    def input(self, name, dtype, dims, doc_string=""):
        """A graph input of element type dtype and shape dims (ints, str names or None)."""
        value = ValueInfo(name, dtype, dims, doc_string)
        self._define(name, f"input {name!r}")
        self._inputs.append(value)

    def initializer(self, name, values, dims, dtype, raw=False, doc_string=""):
        """A constant tensor: values in row-major order; raw: stored as raw_data."""
        tensor = Tensor(name, dtype, dims, values, raw, doc_string)
        self._define(name, f"initializer {name!r}")
        self._initializers.append(tensor)

    def node(self, op_type, inputs, outputs, name, **attributes):
        """A node of the default domain; attributes by name, typed as :func:`attribute` says,
        written in sorted order as onnx.helper.make_node writes them."""
        node = Node(inputs, outputs, op_type, name,
                    [attribute(k, v) for k, v in sorted(attributes.items())])
        what = f"node {name!r}"
        if not name or name in self._node_names:
            raise OnnxError(f"{what}: node names must be unique and not empty")
        for value in node.input:
            if value and value not in self._defined:
                raise OnnxError(f"{what}: input {value!r} is not defined before it")
        for value in node.output:
            if value:
                self._define(value, what)
        self._node_names.add(name)
        self._nodes.append(node)

    def output(self, name, dtype, dims, doc_string=""):
        """A graph output: a value defined before, of element type dtype and shape dims."""
        value = ValueInfo(name, dtype, dims, doc_string)
        if name not in self._defined:
            raise OnnxError(f"output {name!r} is not defined")
        self._outputs.append(value)

    def graph(self, doc_string=""):
        """The Graph built so far."""
        return Graph(self._nodes, self.name, self._initializers, doc_string, self._inputs,
                     self._outputs)

    def model(self, opset, ir_version, producer_name="", producer_version="", metadata=(),
              doc_string=""):
        """A Model of the graph importing ai.onnx at version opset; metadata: (key, value)
        pairs or a dict, in the order given."""
        pairs = list(metadata.items()) if isinstance(metadata, dict) else metadata
        return Model(ir_version, self.graph(), [OperatorSetId("", opset)], producer_name,
                     producer_version, doc_string=doc_string, metadata_props=pairs)
