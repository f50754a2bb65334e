"""Mutation tests of the generic prover on 10-digit board models (issue 20's validation):
perturb one weight of a shipped model file until the model adds a known pair wrong; the
prover must then find counterexamples, each confirmed by an exact run, and never say
"proved"."""

import json
import random

import pytest

from tinyadder import cases, modelfile
from tinyadder.addition import add
from tinyadder.proof.search import generic

FACTORS = ["1001/1000", "101/100", "11/10", "999/1000", "99/100", "9/10"]


def known_pairs():
    """AdderBoard's edge cases and 40 seeded random pairs."""
    r = random.Random(1)
    return list(cases.EDGE_CASES) + [(r.randrange(10 ** 10), r.randrange(10 ** 10))
                                     for _ in range(40)]


def perturbed(name, path):
    """The board model ``name`` with the weight at ``path`` (keys into its file) scaled by the
    first of FACTORS at which it adds a known pair wrong: (model, factor, that pair)."""
    with open(f"tinyadder/models/board/{name}.json", encoding="utf-8") as f:
        text = json.load(f)
    for factor in FACTORS:
        data = json.loads(json.dumps(text))
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = f"({node[path[-1]]})*({factor})"
        model = modelfile.loads(json.dumps(data))
        for a, b in known_pairs():
            if add(model, "float", a, b) != a + b and add(model, "fraction", a, b) != a + b:
                return model, factor, (a, b)
    raise AssertionError(f"no factor of {FACTORS} makes {name} fail at {path}")


MUTANTS = [
    ("zcbtrak-6", ("blocks", 0, "mlp", "W_out", "B", "d", "x1")),   # the carry's weight
    ("zcbtrak-6", ("blocks", 0, "attn", "W_V", "x1", "h.0")),
    ("jacobli99-28", ("blocks", 0, "mlp", "b_in", "u0")),
    ("jacobli99-28", ("blocks", 0, "attn", "rope", "freq")),
    ("lichengliu03-50", ("blocks", 0, "attn", "W_O", "h1.0", "pe_sin")),   # the column below
    ("lichengliu03-50", ("blocks", 0, "mlp", "W_in", "digit", "carry_lo")),
    ("fblissjr-33", ("blocks", 0, "attn", "W_O", "h0", "pair")),          # the column's sum
    ("fblissjr-33", ("blocks", 0, "attn", "W_O", "h1", "prefix")),        # the prefix sum
]


@pytest.mark.parametrize("name, path", [pytest.param(*m, marks=[pytest.mark.slow] if i else [])
                                        for i, m in enumerate(MUTANTS)])
def test_a_mutant_that_fails_a_known_pair_is_found_failing(name, path):
    model, factor, (a, b) = perturbed(name, path)
    outcome = generic.prove(model, max_sets=2000, examples=2)
    assert outcome.verdict == "fails", (factor, outcome.verdict, outcome.sets)
    assert outcome.counterexamples
    for x, y, wrote in outcome.counterexamples:
        assert add(model, "fraction", x, y) == wrote != x + y
