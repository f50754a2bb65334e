"""tinyadder: the exact, inspectable reference interpreter of hand-wired transformers.

>>> from tinyadder import build, number_system, run
>>> run(build("published"), number_system("fraction"), 7650676663, 149460439)
'7650676663+0149460439=07800137102'

The package is layered. The core sits here: the model as data (``weights``, ``constants``),
its construction, the number systems (``numbers``), the forward pass, generation, the task
(``addition``) and the activation cache (``cache.run_with_cache``). ``tinyadder.analysis``
reads runs of it; ``tinyadder.cli`` is the command line. Nothing imports upward.
"""

from .addition import add, run
from .cache import ActivationCache, patch_slot, run_with_cache
from .models import build
from .numbers import number_system
from .weights import with_entry

__all__ = ["ActivationCache", "add", "build", "number_system", "patch_slot", "run", "run_with_cache",
           "with_entry"]
__version__ = "0.1.0"
