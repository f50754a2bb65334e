"""AdderBoard submission interface: ``python verify.py tinyadder/adderboard.py``.

AdderBoard's verify.py loads this file by path, calls ``build_model()`` once and then
``add(model, a, b)`` for every pair. The sum comes from the model's generated digits.
"""

from pathlib import Path
import sys

try:
    import tinyadder  # noqa: F401
except ImportError:  # loaded by path from a clone that was not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tinyadder.addition import add as model_add
from tinyadder.construction import DIGITS, build
from tinyadder.numbers import for_model, number_system

METADATA = {
    "name": "TinyAdder-36 (tinyadder reference interpreter)",
    "author": "tinyadder (construction: the published 36-parameter hand-wired adder)",
    "params": 36,
    "architecture": "2-layer decoder, d_model 5 -> 16, layer 0: 5 heads, layer 1: 1 head, "
                    "head dim 1, ReGLU FFNs, softmax1, no lm_head",
    "tricks": ["ALiBi slope ln 10 gives place values", "softmax1 (+1 in the denominator)",
               "ReGLU", "negative-absolute-error logits", "hand-wired weights",
               "exact rational arithmetic"],
}


def build_model(variant="published", number="fraction", digits=DIGITS):
    """(model, metadata); the model is the construction for N-digit operands together with its
    number system (at the precision the construction needs, unless ``number`` gives one)."""
    weights = build(variant, digits)
    return (weights, for_model(number_system(number), weights)), dict(METADATA)


def add(model, a, b):
    """a + b as computed by the model's greedy decoding."""
    weights, ns = model
    return model_add(weights, ns, a, b)
