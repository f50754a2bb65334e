"""Sums against Python's a + b, in every number system, for both variants."""

import pytest

from tinyadder.addition import add, run
from tinyadder.cases import COUNTEREXAMPLE, EDGE_CASES, random_pairs, verify_cases
from tinyadder.numbers import DecimalSystem, FloatSystem, FractionSystem

PAIRS = 1000
# Exact mode runs the same 1000 pairs (about 7 s per model on the engine; AdderBoard's whole
# 10,000-pair list: -m slow).
FRACTION_PAIRS = 1000

CASES = {"float": PAIRS, "decimal": PAIRS, "fraction": FRACTION_PAIRS}


def cases_for(ns):
    return list(EDGE_CASES) + random_pairs(CASES[ns.name])


def test_repaired_is_right(repaired, ns):
    wrong = [(a, b, got) for a, b in cases_for(ns) if (got := add(repaired, ns, a, b)) != a + b]
    assert wrong == []


def test_published_is_right_on_the_verify_pairs(published, ns):
    wrong = [(a, b, got) for a, b in cases_for(ns) if (got := add(published, ns, a, b)) != a + b]
    assert wrong == []


def test_published_flaw_reproduced_in_every_system(published, ns):
    a, b = COUNTEREXAMPLE
    assert run(published, ns, a, b) == "5193798811+1806201129=07000000000"


def test_repaired_fixes_the_counterexample(repaired, ns):
    a, b = COUNTEREXAMPLE
    assert run(repaired, ns, a, b) == "5193798811+1806201129=06999999940"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_fraction_on_the_whole_verify_list(variant, published, repaired):
    """AdderBoard's full list (10 edge cases + 10,000 seeded pairs), exactly."""
    model = {"published": published, "repaired": repaired}[variant]
    ns = FractionSystem()
    wrong = [(a, b) for a, b in verify_cases() if add(model, ns, a, b) != a + b]
    assert wrong == []


def test_readme_example(published, ns):
    assert run(published, ns, 7650676663, 149460439) == "7650676663+0149460439=07800137102"


def test_low_decimal_precision_breaks_it(published):
    # Sanity check that the number system really matters: 8 digits cannot hold the
    # layer-1 running sum of about 10^14 to the unit.
    a, b = 7650676663, 149460439
    assert add(published, DecimalSystem(8), a, b) != a + b
    assert add(published, FloatSystem(), a, b) == a + b
