"""The generic prover (proof/search/generic.py) and its checker (setcheck.py) on the
rope-10000 family (nino-116, wonderfall-121, -130, -139): the rules their proofs need."""

from fractions import Fraction

import pytest

from tinyadder import build, models
from tinyadder.proof.kernel import setcheck
from tinyadder.proof.search import generic
from tinyadder.proof.search.sets import a_var
from tinyadder.forward import activation

from proof_systems import both_systems, cut_regions


def test_a_mean_value_form_that_loses_the_sign_is_not_taken():
    """e^x over x = (a_0 + a_1) / 10 in [0, 9/5] (two columns: no table): the mean-value
    form's box reaches below 0 (its slope varies e^1.8-fold), so e^x is its enclosure
    [1, e^1.8], in the prover and the checker; the SiLU of a gate far below 0 over that width,
    g / (1 + e^-g), is then all but 0 (a divisor whose box holds 0 stopped the pass). Over
    half that width the form keeps the sign and is kept."""
    for ns, form, box in both_systems(build("published", 2), 2):
        def x(c):
            return form(a_var(0), c) + form(a_var(1), c)
        wide = ns.exp(x(Fraction(1, 10)))
        assert not wide.coefs and box(wide)[0] > Fraction(99, 100)
        lo, hi = box(activation("silu", x(Fraction(1, 10)) - 2560, ns))
        assert -Fraction(1, 10 ** 50) < lo <= hi <= Fraction(1, 10 ** 50)
        narrow = ns.exp(x(Fraction(1, 20)))
        assert narrow.coefs and box(narrow)[0] > 0


@pytest.mark.slow
def test_nino_116_decides_its_second_digit_under_fixed_carries():
    """nino-116 at answer position 1 over s_1 = 3, c_2 = c_1 = 0: its SiLU gates lie near
    -2559 over a range 1.8 wide (0.2 s_0), which the sign rule above takes to all but 0;
    the region is decided, by the prover and by the checker."""
    model = models.build("nino-116")
    cuts = [(("s", 1, 3), 0), (("s", 1, 2), 1), (("c", 2), 0), (("c", 1), 0)]
    prover = generic.Prover(model)
    region, checked = cut_regions(cuts)
    assert region.sum_digit(1) == 3
    assert prover.decide(prover.logits(1, region), prover.target(1, region))[0] == "decided"
    assert setcheck.Leaves(model).holds(1, checked)
