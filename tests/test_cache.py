"""run_with_cache: names, shorthands, filters, views and patches."""

from fractions import Fraction

import pytest

from tinyadder.construction import SLOTS
from tinyadder.numbers import FloatSystem
from tinyadder.cache import act_name, run_with_cache

EXPR = "7650676663+0149460439"


@pytest.fixture(scope="module")
def traced(published):
    return run_with_cache(published, EXPR)


def test_covers_the_whole_sequence(traced):
    logits, cache = traced
    assert cache.text == "<bos>7650676663+0149460439=07800137102"
    assert len(logits) == 34 and logits == cache["logits"]
    assert cache["resid_post", 1] is cache["blocks.1.hook_resid_post"]


def test_short_names():
    assert act_name("pattern", 0) == "blocks.0.attn.hook_pattern"
    assert act_name("pre", 1) == "blocks.1.mlp.hook_pre"
    assert act_name("embed") == "hook_embed"
    with pytest.raises(KeyError):
        act_name("resid_mid")


def test_view_names_every_slot(traced):
    _, cache = traced
    view = cache.view("blocks.0.hook_resid_post", 23)
    assert tuple(view) == SLOTS
    assert view["scale"] == Fraction(1, 25)
    assert set(cache.view(("q", 0), 5)) == {"h0", "h1", "h2", "h3", "h4"}
    assert tuple(cache.view("logits", 32)) == tuple("0123456789")


def test_names_filter(published):
    _, only = run_with_cache(published, EXPR, ns=FloatSystem(), names="hook_embed")
    assert list(only) == ["hook_embed"]
    _, some = run_with_cache(published, EXPR, ns=FloatSystem(),
                             names=lambda n: n.endswith("resid_post"))
    assert sorted(some) == ["blocks.0.hook_resid_post", "blocks.1.hook_resid_post"]


def test_patch_changes_the_answer_in_that_run_only(published):
    count = SLOTS.index("count")

    def forget_units_of_b(rows):  # position 21 holds b's units digit; erase its place value
        return [[0 if (pos, j) == (21, count) else x for j, x in enumerate(row)]
                for pos, row in enumerate(rows)]

    _, patched = run_with_cache(published, "12+34",
                                patch={"blocks.0.hook_resid_mid": forget_units_of_b})
    _, clean = run_with_cache(published, "12+34")
    assert patched.text.endswith("=00000000042")  # 12 + 30: the 4 no longer counts
    assert clean.text.endswith("=00000000046")
    assert patched["resid_mid", 0][21][count] == 0 != clean["resid_mid", 0][21][count]
