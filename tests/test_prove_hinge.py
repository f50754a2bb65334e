"""The generic prover's rules for a sharp ReLU hinge read through a tied readout
(yieldthought-20, wonderfall-27): the regrouped linear maps of generic.py, mirrored in
setcheck.py."""

import pytest

from tinyadder import models
from tinyadder.proof.kernel import setcheck
from tinyadder.proof.search import generic
from tinyadder.proof.search.setsystem import rational

from proof_systems import cut_regions

# a_1 = 1, b_1 = 9, s_1 = 0, c_1 = 0: column 1 adds to 10 with no carry in
COLUMN_1_TEN = ((("a", 1, 0), 1), (("a", 1, 1), 0), (("b", 1, 8), 1), (("s", 1, 0), 0),
                (("c", 1), 0))


@pytest.fixture(scope="module")
def checker():
    """The checker's leaves of yieldthought-20 (its prompt's pass, once)."""
    return setcheck.Leaves(models.build("yieldthought-20"))


def width(value):
    return rational(value.hi - value.lo)


def test_a_logit_difference_is_formed_from_the_final_row(checker):
    """yieldthought-20 at answer position 1 over a_1 = 1, b_1 = 9, s_1 = 0, c_1 = 0: each tied
    logit (near 10^5) holds the final row's interval times ~10^3; logit_0 - logit_1 formed
    from that row holds it once, times the two weights' difference, so its interval is less
    than a fifth of the two logits' difference's (0.156 and 2.19 with the FFN's units taken
    one by one), and the region is decided, by the prover and by the checker."""
    model = models.build("yieldthought-20")
    region, checked = cut_regions(COLUMN_1_TEN)
    prover = generic.Prover(model)
    logits = prover.logits(1, region)
    t = prover.target(1, region)
    formed = generic.difference(prover._readout, prover._final, t, 1, prover.ns.zero)
    assert 5 * width(formed) < width(logits[t] - logits[1])
    assert prover.decide(logits, t)[0] == "decided"
    assert checker.holds(1, checked)


# a_1 in 0..4, b_1 in 5..9, s_1 = 0, c_1 = 1: column 1 adds to 9 and the carry in
COLUMN_1_CARRIED = ((("a", 1, 4), 0), (("b", 1, 4), 1), (("s", 1, 0), 0), (("c", 1), 1))


def test_a_relu_ffn_is_one_affine_map_of_its_input(checker):
    """yieldthought-20's FFN is the two-hinge step vo (relu(g - h) - relu(g)), g = 128000 x_1
    + w x_0 after ln2: where both units pass, its output is -vo h, whatever x_1. Taken as
    one affine map of its input, the interval of x_1 cancels with the units: at a_1 in 0..4,
    b_1 in 5..9, s_1 = 0, c_1 = 1 (both units pass) the output's interval is 0.0013, where
    the two units' difference holds 128000 times it twice, 48; the region is decided (margin
    0.088, not -0.178), by the prover and by the checker."""
    model = models.build("yieldthought-20")
    region, checked = cut_regions(COLUMN_1_CARRIED)
    seen = {}
    prover = generic.Prover(model)
    plain = prover._patch

    def keep(name, f=lambda x: x):
        def kept(value):
            seen[name] = value = f(value)   # the last pass's (after the prompt's)
            return value
        return kept

    def patch(rows, last=True):
        out = plain(rows, last)
        out["blocks.0.mlp.hook_post"] = keep("post")
        out["blocks.0.hook_mlp_out"] = keep("out", out["blocks.0.hook_mlp_out"])
        return out

    prover._patch = patch
    logits = prover.logits(1, region)
    g0, g1 = seen["post"][-1]
    assert g0.slope == g1.slope == (1, 1)
    assert width(g1 - g0) > 40 and width(seen["out"][-1][1]) < 0.002
    assert prover.decide(logits, prover.target(1, region))[0] == "decided"
    assert checker.holds(1, checked)
