"""The generic prover on the board's sinusoid-11 family (lichengliu03-50, cosminscn-66,
cosminscn-130) and fixed-bias model (fblissjr-33): the rules their proofs need."""

from tinyadder import models
from tinyadder.proof.search import generic
from tinyadder.proof.search.setsystem import ONE

from proof_systems import cut_regions


def test_tables_that_rise_with_both_digits_split_on_the_carry():
    """A gate [a_0 = d] d + [b_0 = d] d - 1/2 over s_0 = 0 (a digit sum that an attention
    weight, enclosed, made a table): a sum a_0 + b_0 in {0, 10}, which the carry c_1 decides;
    cutting a_0's range leaves it open in both halves."""
    region = cut_regions([(("s", 0, 0), 0)], 2)[0]
    coefs = {(kind, 0, d): d * ONE for kind in "ab" for d in range(1, 10)}
    assert generic.choose(region, coefs, ("digit", 1)) == ("c", 1)


def test_a_sinusoid_digit_is_decided_once_its_carries_are_fixed():
    """lichengliu03-50 at position 1 over s_1 = 0: the carry gate reads a_0 + b_0 - s_0 and
    the wrap gate 1000 (a_1 + b_1); split on c_1, then c_2 where c_1 = 0, every part is
    decided, margins near 1: 5 regions (cutting the digits' ranges, where the tables' spread
    pointed, took 109)."""
    model = models.build("lichengliu03-50")
    outcome = generic.Prover(model, max_sets=20).position(
        1, cut_regions([(("s", 1, 0), 0)])[0])
    tree, = outcome.positions
    assert tree["split"] == ["c", 1]
    assert tree["children"][0]["split"] == ["c", 2]
    assert tree["children"][1] == {"leaf": "bound"}
    assert outcome.verdict == "proved" and outcome.sets == 5
    assert 0.999 < outcome.margins[0] < 1


def test_a_gate_that_one_carry_decides_is_split_on_that_carry():
    """fblissjr-33 at position 8 over s_8 = 0: the carry gate reads the prefix sum
    (a mod 10^8 + b mod 10^8) / 10^8 against 1 - 10^-11, which c_8 decides and no cut of
    s_7 does; then the wrap gate, a_8 + b_8 + the prefix against 10 - 10^-11, which c_9
    decides: 5 regions, margins near 1 (cutting the sum's digits first took 59)."""
    model = models.build("fblissjr-33")
    outcome = generic.Prover(model, max_sets=20).position(
        8, cut_regions([(("s", 8, 0), 0)])[0])
    assert outcome.positions == [{"split": ["c", 8], "children": [
        {"split": ["c", 9], "children": [{"leaf": "bound"}, {"leaf": "bound"}]},
        {"leaf": "bound"}]}]
    assert outcome.verdict == "proved" and outcome.sets == 5
    assert 1 - outcome.margins[0] < 10 ** -9
