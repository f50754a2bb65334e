"""tinyadder: the exact, inspectable reference interpreter of hand-wired transformers.

>>> from tinyadder import build, number_system, run
>>> run(build("published"), number_system("fraction"), 7650676663, 149460439)
'7650676663+0149460439=07800137102'

The package is layered. The core sits here: the model as data (``weights``, ``constants``),
its construction, the number systems (``numbers``), the forward pass, generation, the task
(``addition``) and the activation cache (``cache.run_with_cache``). ``tinyadder.analysis``
reads runs of it; ``tinyadder.cli`` is the command line. Nothing imports upward.

The names below are imported when first used, so that importing the package costs nothing
before the command line's entry point (``tinyadder.__main__``) has taken charge of Ctrl-C.
"""

import importlib

# public name -> the core module that defines it
_EXPORTS = {"add": "addition", "run": "addition", "ActivationCache": "cache",
            "patch_slot": "cache", "run_with_cache": "cache", "build": "models",
            "number_system": "numbers", "with_entry": "weights"}
__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
