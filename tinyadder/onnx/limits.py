"""The reader's limits, all in one place (docs/onnx.md states them too).

A file over any of them is refused with an :class:`~tinyadder.onnx.wire.OnnxError` that names
the limit. They bound the reader's time and memory by the file's actual bytes: a count or a
length the file declares is checked against what is there before anything is allocated for it.
"""

from dataclasses import dataclass, fields

from .wire import OnnxError


@dataclass(frozen=True)
class Limits:
    """What :func:`tinyadder.onnx.parse` accepts at most.

    ``file_bytes``: the size of the file, checked before it is read; ``depth``: nesting of
    messages, the outermost counting 1 (the supported subset nests 7 deep at most, as it has
    no recursive message); ``nodes`` and ``initializers``: per graph; ``attributes``: per node;
    ``rank``: dims of one tensor or shape; ``elements``: values of one tensor (the product of
    its dims); ``items``: any other repeated field of one message (graph inputs, outputs and
    value_info, a node's inputs and outputs, the items of a list attribute, metadata entries,
    opset imports); ``fields``: field occurrences in the whole file, each varint of a packed
    run counting as one and a packed run of fixed-width numbers as one in all, which bounds
    the time reading takes."""

    file_bytes: int = 32 * 2 ** 20
    depth: int = 8
    nodes: int = 10_000
    initializers: int = 10_000
    attributes: int = 100
    rank: int = 64
    elements: int = 2 ** 22
    items: int = 100_000
    fields: int = 250_000

    def __post_init__(self):
        for limit in fields(self):
            value = getattr(self, limit.name)
            if type(value) is not int or value < 1:
                raise OnnxError(f"limit {limit.name} must be a positive int, not {value!r}")


LIMITS = Limits()
