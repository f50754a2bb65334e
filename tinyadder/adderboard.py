"""AdderBoard submission interface: ``python verify.py tinyadder/adderboard.py``.

AdderBoard's verify.py imports this file by path (``importlib.util.spec_from_file_location``,
as a module named ``submission``), requires ``build_model`` and ``add``, calls
``build_model()`` once, prints the metadata's name, author, params, architecture and tricks
(a list of strings), then calls ``add(model, a, b)`` on its 10 edge cases and 10,000 pairs from
``random.Random(2025)`` and qualifies a model at 99%. The sum comes from the model's generated
digits: on the published model's counterexample it is the model's wrong sum, not a + b.
"""

import importlib.util
from pathlib import Path
import sys


def _package_next_to_this_file():
    """Import the tinyadder package this file sits in, as ``tinyadder``, by its path: never
    an installed copy (another version), nor the namespace package that a folder named
    ``tinyadder`` in the working directory (a clone's root) would give ``import tinyadder``.
    If a different tinyadder is already imported, say so rather than run it."""
    here = Path(__file__).resolve().parent
    loaded = sys.modules.get("tinyadder")
    if getattr(loaded, "__file__", None):  # a namespace package has none: not a tinyadder
        if Path(loaded.__file__).resolve().parent != here:
            raise ImportError(f"another tinyadder ({loaded.__file__}) is already imported; "
                              f"this submission runs the one next to it ({here})")
        return
    spec = importlib.util.spec_from_file_location(
        "tinyadder", here / "__init__.py", submodule_search_locations=[str(here)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["tinyadder"] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules["tinyadder"]
        raise


_package_next_to_this_file()

from tinyadder.addition import add as model_add  # noqa: E402 (the package loaded above)
from tinyadder.construction import DIGITS  # noqa: E402
from tinyadder.models import build  # noqa: E402
from tinyadder.analysis.ledger import ledger, totals  # noqa: E402
from tinyadder.numbers import for_model, number_system  # noqa: E402

METADATA = {
    "name": "TinyAdder-36 (tinyadder reference interpreter)",
    "author": "tinyadder (construction: the published 36-parameter hand-wired adder)",
    "architecture": "2-layer decoder, d_model 5 -> 16, layer 0: 5 heads, layer 1: 1 head, "
                    "head dim 1, ReGLU FFNs, softmax1, no lm_head",
    "tricks": ["ALiBi slope ln 10 gives place values", "softmax1 (+1 in the denominator)",
               "ReGLU", "negative-absolute-error logits", "hand-wired weights",
               "exact rational arithmetic"],
}


def build_model(variant="published", number="fraction", digits=DIGITS):
    """(model, metadata); the model is the construction for N-digit operands together with its
    number system (at the precision the construction needs, unless ``number`` gives one).

    metadata["params"] is counted by the parameter ledger (``python -m tinyadder params``).
    """
    weights = build(variant, digits)
    metadata = dict(METADATA, params=totals(ledger(weights)).params)
    return (weights, for_model(number_system(number), weights)), metadata


def add(model, a, b):
    """a + b as computed by the model's greedy decoding; a and b are checked as everywhere
    (non-negative ints of at most N digits: ``addition.check_operands``)."""
    if not (isinstance(model, tuple) and len(model) == 2):
        raise TypeError(f"expected the model that build_model() returns, a (weights, number "
                        f"system) pair, got {type(model).__name__}")
    weights, ns = model
    return model_add(weights, ns, a, b)
