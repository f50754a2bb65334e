"""run_with_cache: names, shorthands, filters, views and patches."""

from fractions import Fraction

import pytest

from explore_cases import exact_run
from tinyadder.construction import SLOTS
from tinyadder.numbers import FloatSystem
from tinyadder import build
from tinyadder.cache import act_name, run_with_cache

EXPR = "7650676663+0149460439"


@pytest.fixture(scope="module")
def traced():
    return exact_run(EXPR)


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
    _, clean = run_with_cache(published, "12+34")  # after the patched run, not shared
    assert patched.text.endswith("=00000000042")  # 12 + 30: the 4 no longer counts
    assert clean.text.endswith("=00000000046")
    assert patched["resid_mid", 0][21][count] == 0 != clean["resid_mid", 0][21][count]


# --- token ids: only what the model's layout can produce (issue 24, item 6) ---------------

def test_check_tokens_takes_the_prefixes_of_the_layout(published):
    from tinyadder.addition import check_tokens, encode
    whole = encode(published, 12, 34) + [0] * 9 + [4, 6]
    for k in range(1, len(whole) + 1):
        assert check_tokens(published, whole[:k]) == whole[:k]


@pytest.mark.parametrize("tokens, message", [
    ([1, 2], "token 0 is '1' where <bos> belongs; a sequence of tinyadder36-published is "
             "<bos>, 10 digits of a, '\\+', 10 digits of b, '=', then at most 11 digits of "
             "the sum"),
    ([11, 1, 13, 2, 10], "token 2 is '\\+' where a digit of a belongs"),
    ([11] + [0] * 10 + [10], "token 11 is '=' where '\\+' belongs"),
    ([11] + [0] * 21 + [10], "token 11 is '0' where '\\+' belongs"),
    ([11, 12], "token 1 is '<eos>' where a digit of a belongs"),
    ([11] + [0] * 10 + [13] + [0] * 10 + [10] + [0] * 12, "35 tokens, more than the 34"),
    ([], "empty prompt"),
    ([11, True], "bool 'True' is not a token id of this model"),
    ([11, 10 ** 30], "an int of more than 24 digits is not a token id"),
])
def test_check_tokens_refuses_the_rest_in_one_line(published, tokens, message):
    from tinyadder.addition import check_tokens
    with pytest.raises(ValueError, match=message) as caught:
        check_tokens(published, tokens)
    assert "\n" not in str(caught.value)


def test_run_with_cache_refuses_token_ids_the_layout_cannot_produce(published):
    """No <bos>, or an unpadded prompt: refused at once (they ran for minutes, or were decoded
    as the sum '1+2=03023053284')."""
    from tinyadder.addition import check_tokens
    assert check_tokens(published, [11]) == [11]
    for tokens in ([1, 2], [11, 1, 13, 2, 10]):
        with pytest.raises(ValueError, match="where .* belongs; a sequence of"):
            run_with_cache(published, tokens, ns=FloatSystem())


def test_run_with_cache_completes_a_prefix_of_the_sum(published):
    """A whole prompt is answered; given sum digits are kept and the rest generated; a prompt
    cut before '=' is recorded as given."""
    from tinyadder.addition import encode
    prompt = encode(published, 12, 34)
    assert run_with_cache(published, prompt)[1].text == "<bos>0000000012+0000000034=" \
                                                        "00000000046"
    _, forced = run_with_cache(published, prompt + [0, 9], ns=FloatSystem())
    assert forced.text.startswith("<bos>0000000012+0000000034=09")
    assert len(forced.tokens) == 34 and forced.prompt_len == 25
    _, cut = run_with_cache(published, prompt[:5], ns=FloatSystem())
    assert (cut.text, list(cut.predicting)) == ("<bos>0000", [])


# --- the size of a trace (item 8) --------------------------------------------------------

@pytest.mark.parametrize("digits, spec", [(10, "fraction")] + [
    pytest.param(40, s, marks=pytest.mark.slow) for s in ("decimal", "float", "float32")])
def test_the_size_estimate_bounds_the_memory_a_trace_takes(digits, spec):
    """trace_bytes is at least the memory a whole run_with_cache allocates at its peak (decoding
    and the recorded trace; tracemalloc: exact and repeatable) and at most twice it, for
    operands whose every digit counts."""
    import tracemalloc
    from tinyadder.cache import trace_bytes
    from tinyadder.construction import build
    from tinyadder.numbers import for_model, number_system
    model = build("published", digits)
    ns = for_model(number_system(spec), model)
    tracemalloc.start()
    try:
        run_with_cache(model, "1" * digits + "+" + "2" * digits, ns=ns)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= trace_bytes(model, ns) <= 2 * peak


# ---- what run_with_cache refuses before it runs (issue 38) ---------------------------------

def test_a_pass_over_the_budget_is_refused_whatever_names_keeps():
    """names= keeps one small point, but the pass over 6,004 positions still computes every
    attention entry: refused at once, not a run that grows past gigabytes."""
    from tinyadder.cache import TraceTooLarge
    with pytest.raises(TraceTooLarge, match=r"^the recorded pass of tinyadder36-published at "
                                            r"N = 2000 computes 108,162,060 attention entries "
                                            r"\(heads times pairs of positions\) whatever "
                                            r"names= keeps"):
        run_with_cache(build("published", 2000), "1+2", names="hook_embed")


@pytest.mark.parametrize("option, wrong", [
    ({"names": "hook_embd"}, "'hook_embd' in a run of tinyadder36-published (names=)"),
    ({"names": ["hook_embed", "blocks.0.hook_resid_mdi"]},
     "'blocks.0.hook_resid_mdi' in a run of tinyadder36-published (names=)"),
    ({"patch": {"blocks.2.hook_resid_mid": lambda rows: rows}},
     "'blocks.2.hook_resid_mid' in a run of tinyadder36-published (patch=)"),
])
def test_a_misspelled_trace_point_is_refused_with_the_right_ones(option, wrong):
    """Not a run that records nothing, or runs unpatched."""
    with pytest.raises(KeyError) as caught:
        run_with_cache(build("published"), "1+2", **option)
    message = caught.value.args[0]
    assert message.startswith(f"no trace point {wrong}; the trace points are "
                              f"blocks.0.attn.hook_attn_scores, blocks.0.attn.hook_k, ")
    assert "hook_embed" in message and "unembed.hook_out" in message
