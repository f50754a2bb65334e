"""tinyadder: the exact, inspectable reference interpreter of TinyAdder-36.

>>> from tinyadder import build, number_system, run
>>> run(build("published"), number_system("fraction"), 7650676663, 149460439)
'7650676663+0149460439=07800137102'
"""

from .addition import add, run
from .construction import build
from .numbers import number_system

__all__ = ["add", "build", "number_system", "run"]
__version__ = "0.1.0"
