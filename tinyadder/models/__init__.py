"""The models that ship with tinyadder, as model files, and ``build``: a model by name or by
the path of a model file.

``tinyadder/models/NAME.json``: TinyAdder-36 at N = 10 (``published``, ``repaired``), as
``modelfile.dump(construction.build(name))`` writes it (a test keeps them so; for another N
the construction builds them from Python), and ``variant-28``.
``tinyadder/models/board/NAME.json``: AdderBoard's hand-coded entries and one trained entry,
named ``author-params`` as on the leaderboard (docs/models.md; ``board_names()``).
``tinyadder/models/programs/NAME.json``: models compiled from the program beside them
(``NAME.tap``, docs/program.md; ``program_names()``): ``seed003-lookup`` (which does not
add) and ``variant-22`` (docs/variant-22.md).

>>> build("published")
<Model tinyadder36-published: 2 blocks, 16 slots, 14 tokens>
>>> build("published", 12).prompt.digits
12
>>> build("zcbtrak-6").about["params_claimed"]
6
>>> build("tiny")
Traceback (most recent call last):
    ...
ValueError: unknown model 'tiny': use published, repaired, variant-28, a board model (tinyadder board lists them) or the path of a model file
"""

from functools import lru_cache
from importlib import resources
import os

from .. import construction
from ..addition import excerpt
from ..modelfile import load, loads


BOARD = "board"  # the folder of the AdderBoard entries' files
PROGRAMS = "programs"  # the folder of the models compiled from programs


def _json_names(folder):
    return sorted(f.name[:-len(".json")] for f in folder.iterdir() if f.name.endswith(".json"))


@lru_cache(maxsize=None)
def board_names():
    """The AdderBoard entries' names (``tinyadder/models/board/NAME.json``), sorted."""
    return _json_names(resources.files(__name__).joinpath(BOARD))


@lru_cache(maxsize=None)
def program_names():
    """The shipped models compiled from programs (``programs/NAME.json``)."""
    return _json_names(resources.files(__name__).joinpath(PROGRAMS))


@lru_cache(maxsize=None)
def names():
    """Every shipped model's name: TinyAdder-36's files, then the board's, each sorted."""
    return _json_names(resources.files(__name__)) + board_names()


def others():
    """The shipped models that are not the board's, as a list in words: 'a, b, c'."""
    return ", ".join(n for n in names() if n not in board_names())


@lru_cache(maxsize=None)
def shipped(name):
    """The shipped model ``name``, read from its file once."""
    folder = resources.files(__name__)
    if name in board_names():
        folder = folder.joinpath(BOARD)
    elif name in program_names():
        folder = folder.joinpath(PROGRAMS)
    return loads(folder.joinpath(f"{name}.json").read_bytes())


def build(model="published", digits=None):
    """The model ``model`` names, for N-digit operands.

    ``model`` is a shipped model's name (``names()``) or the path of a model file, or of an
    ONNX file (``.onnx``: ``onnx.read.load``). A shipped model is read from its file at the N
    it is written for (10 for TinyAdder-36: ``digits`` None or 10); the construction builds
    ``published`` and ``repaired`` for any other N up to ``construction.MAX_DIGITS``. A file
    is read as it is: ``digits`` must be its prompt's N or None. A bad file raises
    ``modelfile.ModelFileError`` or ``onnx.OnnxError``, a ValueError naming what is wrong.
    """
    if digits is not None:
        construction.check_digits(digits)
    if isinstance(model, str) and (model in names() or model in program_names()):
        found = shipped(model)
        if digits is not None and model in construction.VARIANTS \
                and digits != found.prompt.digits:
            return construction.build(model, digits)
        return at_digits(found, digits, model)
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(f"a model is a name such as 'published' or the path of a model file, "
                        f"not {type(model).__name__}")
    if os.path.isfile(model):
        return at_digits(read_file(model), digits, os.fspath(model))
    raise ValueError(f"unknown model {excerpt(os.fspath(model))}: use {others()}, a board "
                     f"model (tinyadder board lists them) or the path of a model file")


def read_file(path):
    """The model in a model file, or in an ONNX file if its name ends in .onnx."""
    if os.fspath(path).endswith(".onnx"):
        from ..onnx.read import load as onnx_load  # here: most runs read no ONNX file
        return onnx_load(path)
    return load(path)


def at_digits(model, digits, where):
    """``model``, if it is for ``digits`` operand digits (None: whatever it is for)."""
    n = model.prompt.digits if model.prompt is not None else None
    if digits is not None and n is None:
        raise ValueError(f"the model {where} has no operands (it does not add); leave the "
                         f"digits out")
    if digits is not None and digits != n:
        raise ValueError(f"the model {where} is written for N = {n}, not {digits}; leave the "
                         f"digits out or give {n}")
    return model
