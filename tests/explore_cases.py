"""Traced runs shared by the explorer's tests (test_explore, test_figures, test_browser) and
by every test that reads an exact run of these additions (test_trace, test_cache, test_text,
...): each is traced once per test session. The tests read them and change nothing."""

import functools

from tinyadder.analysis.pictures.explore import page
from tinyadder.cache import run_with_cache
from tinyadder.analysis.pictures.views import build_views
from tinyadder.construction import build

EXAMPLE = "7650676663+0149460439"   # the walkthrough's sum
FLAW = "5193798811+1806201129"      # the published readout picks 7 at position 23


def exact_run(expr, model="published", digits=10):
    """run_with_cache's (logits, cache) of one addition, exact."""
    return _exact_run(expr, model, digits)  # one cache entry however the defaults are given


def traced(expr, model="published", digits=10):
    """(cache, views) of one addition, exact."""
    return _traced(expr, model, digits)


@functools.lru_cache(maxsize=None)
def _exact_run(expr, model, digits):
    return run_with_cache(build(model, digits), expr)


@functools.lru_cache(maxsize=None)
def _traced(expr, model, digits):
    a, b = map(int, expr.split("+"))
    cache = exact_run(expr, model, digits)[1]
    return cache, build_views(cache, a, b)


@functools.lru_cache(maxsize=None)
def page_text(expr):
    """The explorer page of one addition (published model, exact)."""
    return page(traced(expr)[1])


@functools.lru_cache(maxsize=None)
def float_views(model, expr=EXAMPLE, digits=None):
    """The views of one addition in float (a board model by name, or a construction at
    ``digits``), without the extra runs of "change one thing": cheap, for the compare
    mode's tests."""
    from tinyadder import models
    from tinyadder.addition import encode
    m = build(model, digits) if digits else models.build(model, None)
    a, b = map(int, expr.split("+"))
    cache = run_with_cache(m, encode(m, a, b), ns="float")[1]
    return build_views(cache, a, b, changes=False)
