"""variant-28 (docs/variant-28.md): the repaired model with its ten candidate weights written
from the embedding's digit values, P_u = s E_u + o; 28 parameters, and every pair added."""

import pytest

from tinyadder import build, construction
from tinyadder.analysis.ledger import ledger, totals
from tinyadder.proof.prove import prove
from tinyadder.analysis.verify import check
from tinyadder.cases import adderboard_suite
from tinyadder.numbers import number_system
from tinyadder.weights import tensors


def test_it_counts_28_rule_by_rule():
    t = totals(ledger(build("variant-28")))
    assert t.params == 28
    assert t.parts == {"embedding": 13, "layer 0 attention": 6, "layer 0 FFN": 4,
                       "layer 1 attention": 2, "layer 1 FFN": 3, "readout": 0}
    assert totals(ledger(build("repaired"))).params == 36


@pytest.mark.parametrize("digits", [1, 2, 5, 10, 12])
def test_every_weight_is_the_repaired_models(digits):
    v28, rep = construction.build("variant-28", digits), construction.build("repaired", digits)
    assert [(t.name, dict(t.entries)) for t in tensors(v28)] == \
        [(t.name, dict(t.entries)) for t in tensors(rep)]
    assert v28.derived["blocks.0.mlp.W_in[count][cand3]"] == "s*E3 + o"


@pytest.mark.parametrize("digits", [1, 3, 10, pytest.param(12, marks=pytest.mark.slow)])
def test_it_is_proved(digits):
    """N = 1, 3 and the published 10 by default; slow adds N = 12."""
    proof = prove(construction.build("variant-28", digits))
    assert proof.refusal is None and proof.proved


def test_the_flaws_example_is_added_right():
    from tinyadder import add
    assert add(build("variant-28"), "fraction", 5193798811, 1806201129) == 6999999940


@pytest.mark.slow
def test_adderboard_protocol_exactly():
    outcome = check(build("variant-28"), number_system("fraction"), adderboard_suite())
    assert outcome.failures == [] and outcome.total == 10_010
