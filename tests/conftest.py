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
