"""tinyadder: the exact, inspectable reference interpreter of TinyAdder-36.

>>> from tinyadder import build, number_system, run
>>> run(build("published"), number_system("fraction"), 7650676663, 149460439)
'7650676663+0149460439=07800137102'

The package is layered: the core (model as data, construction, number systems, the forward
pass, generation, the task) sits here; ``tinyadder.analysis`` reads runs of it (trace cache,
display, ledger, verify, ...); ``tinyadder.cli`` is the command line. Nothing imports upward.
``run_with_cache`` (from ``tinyadder.analysis.trace``) is also offered here, loaded on first
use, so that importing the core does not load the analyses.
"""

from .addition import add, run
from .construction import build
from .numbers import number_system

__all__ = ["add", "build", "number_system", "run", "run_with_cache"]
__version__ = "0.1.0"


def __getattr__(name):
    if name == "run_with_cache":
        from .analysis.trace import run_with_cache
        return run_with_cache
    raise AttributeError(f"module 'tinyadder' has no attribute {name!r}")
