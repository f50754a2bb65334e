"""Traced runs shared by the explorer's tests (test_explore, test_figures, test_browser):
each expression is traced once per test session."""

import functools

from tinyadder.analysis.pictures.explore import page
from tinyadder.cache import run_with_cache
from tinyadder.analysis.pictures.views import build_views
from tinyadder.construction import build

EXAMPLE = "7650676663+0149460439"   # the walkthrough's sum
FLAW = "5193798811+1806201129"      # the published readout picks 7 at position 23


@functools.lru_cache(maxsize=None)
def traced(expr, model="published", digits=10):
    """(cache, views) of one addition, exact."""
    a, b = map(int, expr.split("+"))
    _, cache = run_with_cache(build(model, digits), expr)
    return cache, build_views(cache, a, b)


@functools.lru_cache(maxsize=None)
def page_text(expr):
    """The explorer page of one addition (published model, exact)."""
    return page(traced(expr)[1])
