"""tests/slow_for_budget.txt names the cases the default run leaves to -m slow. A line whose
test was renamed or removed would match nothing and its case, renamed, would run by default
again: every line must name a test function that exists."""
import re

from conftest import BUDGET

ROOT = BUDGET.parent.parent


def _listed():
    return [line.strip() for line in BUDGET.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def _test_functions(path):
    return set(re.findall(r"^\s*def (test\w*)\(", path.read_text(), re.M))


def test_every_listed_case_names_a_test_that_exists():
    functions = {}
    missing = []
    for nodeid in _listed():
        path, _, name = nodeid.partition("::")
        name = name.split("[")[0]
        file = ROOT / path
        if file not in functions:
            functions[file] = _test_functions(file) if file.exists() else set()
        if name not in functions[file]:
            missing.append(nodeid)
    assert missing == []


def test_no_case_is_listed_twice():
    listed = _listed()
    assert len(listed) == len(set(listed))
