"""The generic prover's rules for a sharp ReLU hinge read through a tied readout
(yieldthought-20, wonderfall-27): the regrouped linear maps of generic.py, mirrored in
setcheck.py."""

from tinyadder import models
from tinyadder.analysis.proof import generic, setcheck
from tinyadder.analysis.proof.sets import Region
from tinyadder.analysis.proof.setsystem import rational

# a_1 = 1, b_1 = 9, s_1 = 0, c_1 = 0: column 1 adds to 10 with no carry in
COLUMN_1_TEN = ((("a", 1, 0), 1), (("a", 1, 1), 0), (("b", 1, 8), 1), (("s", 1, 0), 0),
                (("c", 1), 0))


def regions(cuts, n=10):
    """The prover's and the checker's region of every pair cut by ``cuts``."""
    region, checked = Region.every(n), setcheck.root(n)
    for split, child in cuts:
        region = region.children(split)[child]
        checked = setcheck.cut(checked, n, list(split))[child]
    return region, checked


def width(value):
    return rational(value.hi - value.lo)


def test_a_logit_difference_is_formed_from_the_final_row():
    """yieldthought-20 at answer position 1 over a_1 = 1, b_1 = 9, s_1 = 0, c_1 = 0: each tied
    logit (near 10^5) holds the final row's interval times ~10^3; logit_0 - logit_1 formed
    from that row holds it once, times the two weights' difference, so its interval is 0.156
    where the two logits' difference holds 2.19, and the region is decided, by the prover
    and by the checker."""
    model = models.build("yieldthought-20")
    region, checked = regions(COLUMN_1_TEN)
    prover = generic.Prover(model)
    logits = prover.logits(1, region)
    t = prover.target(1, region)
    formed = generic.difference(prover._readout, prover._final, t, 1, prover.ns.zero)
    assert width(formed) < 0.16 and width(logits[t] - logits[1]) > 2
    assert prover.decide(logits, t)[0] == "decided"
    assert setcheck.Leaves(model).holds(1, checked)
