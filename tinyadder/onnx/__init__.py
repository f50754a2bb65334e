"""ONNX in and out, standard library only: a writer and a strict reader of the subset of
onnx.proto that a model with initializers needs (docs/onnx.md).

``wire`` is the protobuf wire format and :class:`OnnxError`, ``messages`` the messages as
frozen dataclasses, ``codec`` their field numbers with :func:`serialize` and :func:`parse`,
``limits`` the reader's limits, ``builder`` a :class:`GraphBuilder` for exporters. On top of
them: ``values`` (the floats of exact constants), ``export`` (a model as an ONNX graph) and
``read`` (a graph back into a model).
"""

from .builder import GraphBuilder, attribute
from .codec import load, parse, save, serialize
from .limits import LIMITS, Limits
from .messages import (Attribute, AttributeType, DataType, Graph, Model, Node, OperatorSetId,
                       Tensor, ValueInfo, float32)
from .wire import OnnxError

__all__ = ["Attribute", "AttributeType", "DataType", "Graph", "GraphBuilder", "LIMITS",
           "Limits", "Model", "Node", "OnnxError", "OperatorSetId", "Tensor", "ValueInfo",
           "attribute", "float32", "load", "parse", "save", "serialize"]
