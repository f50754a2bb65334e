"""A square is never below 0 (issue 34: an RMSNorm's mean of squares enclosed below zero left
rezabyt-311's regions with no bound, its sqrt taken of a range through 0)."""

from fractions import Fraction

import pytest

from tinyadder import models
from tinyadder.proof.search import generic
from tinyadder.proof.search.sets import Region, a_var

from proof_systems import both_systems


@pytest.mark.parametrize("side", ["prover", "checker"])
def test_a_square_of_a_form_across_zero_is_at_least_zero(side):
    """f = a_0 + a_1 - 4 over every pair: f^2 as m-centred form 2 m f - m^2 + (f - m)^2 has
    a box from -85 (its affine part at f = -4); the square's enclosure starts at 0 in the
    prover's system and in the checker's, and still holds f^2's greatest value, 196."""
    systems = dict(zip(("prover", "checker"), both_systems(models.build("zcbtrak-6"), 10)))
    ns, variable, box = systems[side]
    f = variable(a_var(0), 1) + variable(a_var(1), 1) - ns.const(4) if side == "prover" else \
        variable(a_var(0), 1) + variable(a_var(1), 1) + ns.const(-4)
    low, high = box(f * f)
    assert low == 0 and Fraction(196) <= high


@pytest.mark.slow
def test_rezabyt_311s_pass_over_every_pair_has_a_bound():
    """The pass over every pair at answer position 1 gives logits (it stopped on the sqrt of
    the final norm's mean, enclosed below 0)."""
    logits = generic.Prover(models.build("rezabyt-311")).logits(1, Region.every(10))
    assert len(logits) == len(models.build("rezabyt-311").vocab)
