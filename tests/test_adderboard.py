"""tinyadder/adderboard.py as AdderBoard's verify.py uses it: imported by file path."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

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
