import gc
from pathlib import Path

import pytest

from tinyadder import build
from tinyadder.numbers import DecimalSystem, FloatSystem, FractionSystem


@pytest.fixture(scope="session")
def published():
    return build("published")


@pytest.fixture(scope="session")
def repaired():
    return build("repaired")


SYSTEMS = {"fraction": FractionSystem, "decimal": DecimalSystem, "float": FloatSystem}


@pytest.fixture(scope="session", params=sorted(SYSTEMS))
def ns(request):
    return SYSTEMS[request.param]()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """What outlives a test (session fixtures, cached runs: hundreds of MB of exact values) is
    moved out of the collector's reach once the test's own garbage is collected: Python's full
    collections would otherwise walk it all again and again (a tenth of the suite's CPU). The
    price: a module's fixtures caught in reference cycles are not freed when torn down (the
    run's peak memory is some 150 MB higher)."""
    gc.collect()
    gc.freeze()


BUDGET = Path(__file__).with_name("slow_for_budget.txt")


def pytest_collection_modifyitems(config, items):
    """The cases tests/slow_for_budget.txt lists run with -m slow, not by default."""
    listed = {line.strip() for line in BUDGET.read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
