"""tinyadder/adderboard.py as AdderBoard's verify.py uses it: imported by file path."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinyadder.cases import COUNTEREXAMPLE, EDGE_CASES

ROOT = Path(__file__).resolve().parent.parent
SUBMISSION = ROOT / "tinyadder" / "adderboard.py"


def load_submission(path):
    """What verify.py does: a module named 'submission' from a file path."""
    spec = importlib.util.spec_from_file_location("submission", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_interface_and_metadata():
    module = load_submission(SUBMISSION)
    assert callable(module.build_model) and callable(module.add)
    model, metadata = module.build_model()
    assert set(metadata) >= {"name", "author", "params", "architecture", "tricks"}
    assert metadata["params"] == 36
    assert isinstance(metadata["tricks"], list)
    assert all(isinstance(trick, str) for trick in metadata["tricks"])
    assert ", ".join(metadata["tricks"])  # verify.py prints them joined


def test_adds_with_the_model_in_exact_arithmetic():
    module = load_submission(SUBMISSION)
    model, _ = module.build_model()
    for a, b in EDGE_CASES[4:7]:
        result = module.add(model, a, b)
        assert type(result) is int and result == a + b
    # The model's own digits, flaw included: not Python's a + b.
    assert module.add(model, *COUNTEREXAMPLE) == 7000000000


def test_loads_from_a_clone_that_is_not_installed(tmp_path):
    """verify.py runs in its own directory; the module finds the package next to itself."""
    driver = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('submission', sys.argv[1])\n"
        "mod = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mod)\n"
        "model, meta = mod.build_model()\n"
        "print(meta['params'], mod.add(model, 9999999999, 1))\n")
    done = subprocess.run([sys.executable, "-c", driver, str(SUBMISSION)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert (done.stdout, done.stderr) == ("36 10000000000\n", "")


VERIFY = (  # what AdderBoard's verify.py does with a submission, in its own directory
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('submission', sys.argv[1])\n"
    "mod = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(mod)\n"
    "model, meta = mod.build_model()\n"
    "print(meta['params'], mod.add(model, 9999999999, 1))\n"
    "print(sys.modules['tinyadder'].__file__)\n")


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """An AdderBoard directory with a clone inside it (board/tinyadder/tinyadder/...), a clone
    next to it (clone/tinyadder/...), and a different tinyadder installed in a site directory:
    a copy whose add answers -1."""
    root = tmp_path_factory.mktemp("adderboard")
    board, site = root / "board", root / "site"
    board.mkdir()
    (board / "verify.py").write_text(VERIFY)
    for clone in (root / "clone", board / "tinyadder"):
        shutil.copytree(ROOT / "tinyadder", clone / "tinyadder",
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tinyadder", site / "tinyadder",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(site / "tinyadder" / "addition.py", "a") as f:
        f.write("\n\ndef add(model, ns, a, b, reference=False):\n    return -1\n")
    return root


@pytest.mark.parametrize("submission", ["../clone/tinyadder/adderboard.py",
                                        "tinyadder/tinyadder/adderboard.py"])
@pytest.mark.parametrize("installed", [False, True])
def test_verify_runs_the_package_next_to_the_file(layouts, submission, installed):
    """Run from the AdderBoard directory, with the clone next to it or inside it (where
    'import tinyadder' finds the clone's root, a namespace package), with or without another
    tinyadder importable: the submission always runs the package it sits in."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if installed:
        env["PYTHONPATH"] = str(layouts / "site")
    board = layouts / "board"
    done = subprocess.run([sys.executable, "verify.py", submission], cwd=board,
                          capture_output=True, text=True, timeout=120, env=env)
    package = (board / submission).resolve().parent / "__init__.py"
    assert (done.stdout, done.stderr) == (f"36 10000000000\n{package}\n", "")


def test_a_different_tinyadder_already_imported_is_named(layouts):
    driver = ("import sys; sys.path.insert(0, sys.argv[2]); import tinyadder\n" + VERIFY)
    done = subprocess.run([sys.executable, "-c", driver,
                           str(layouts / "clone" / "tinyadder" / "adderboard.py"),
                           str(layouts / "site")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"ImportError: another tinyadder ({layouts / 'site' / 'tinyadder' / '__init__.py'}) "
        f"is already imported; this submission runs the one next to it "
        f"({layouts / 'clone' / 'tinyadder'})")
