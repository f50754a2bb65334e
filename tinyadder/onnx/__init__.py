"""ONNX in and out, standard library only: a writer and a strict reader of the subset of
onnx.proto that a model with initializers needs (docs/onnx.md).

``wire`` is the protobuf wire format and :class:`OnnxError`, ``messages`` the messages as
frozen dataclasses, ``codec`` their field numbers with :func:`serialize` and :func:`parse`,
``limits`` the reader's limits, ``builder`` a :class:`GraphBuilder` for exporters. On top of
them: ``values`` (the floats of exact constants), ``export`` (a model as an ONNX graph) and
``read`` (a graph back into a model).
"""

from importlib import import_module

from . import wire

OnnxError = wire.OnnxError

_MODULE = {"GraphBuilder": "builder", "attribute": "builder", "LIMITS": "limits",
           "Limits": "limits", **dict.fromkeys(("load", "parse", "save", "serialize"), "codec"),
           **dict.fromkeys(("Attribute", "AttributeType", "DataType", "Graph", "Model", "Node",
                            "OperatorSetId", "Tensor", "ValueInfo", "float32"), "messages")}

__all__ = sorted([*_MODULE, "OnnxError"])


def __getattr__(name):
    """The package's other names, each from its module on first use: a command that reads
    or writes no ONNX file (the plain addition) does not import them."""
    if name not in _MODULE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE[name]}", __name__), name)
