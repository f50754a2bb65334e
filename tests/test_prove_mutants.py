"""Mutation tests of the generic prover on 10-digit board models (issue 20's validation):
perturb one weight of a shipped model file until the model adds a known pair wrong; the
prover must then find counterexamples, each confirmed by an exact run, and never say
"proved"."""

import json
import random

import pytest

from tinyadder import cases, modelfile
from tinyadder.addition import add
from tinyadder.proof.kernel import floatcheck, setcheck
from tinyadder.proof.search import floatsets, generic
from tinyadder.proof.search.floatsets import FloatProver

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


# Thin mutants (issue 36): one weight of a small model moved 10^-10 or 10^-11 to either side
# of where the model starts to add a pair wrong (found by bisection over every pair), with
# the number of pairs an exact run adds wrong there: a carry step (adder1's lower ramp of
# the carry, moved from -37/4 to 10^-10 around -369/40), a readout bias shifted by less than
# its margin and by a hair more (rope1's b_U for 5, around -24 - 6.5957 10^-8: the margin
# left 10^-11), one positional amplitude scaled at one place (rope1's position 5 flag, around
# 1.499999996908).
E10 = "1/10000000000"
THIN = [
    ("tests/models/adder1.json", ("blocks", 0, "mlp", "b_gate", "s9"), f"-369/40-{E10}", 0),
    ("tests/models/adder1.json", ("blocks", 0, "mlp", "b_gate", "s9"), f"-369/40+{E10}", 45),
    ("tests/models/rope1.json", ("unembed", "b_U", "5"), "-2400000006596/100000000000", 0),
    ("tests/models/rope1.json", ("unembed", "b_U", "5"), "-2400000006595/100000000000", 3),
    ("tests/models/rope1.json", ("embed", "W_pos", "5", "f5"), "1499999996908/1000000000000", 0),
    ("tests/models/rope1.json", ("embed", "W_pos", "5", "f5"), "1499999996909/1000000000000", 8),
]


def with_entry(path, keys, value):
    """The model file at ``path`` with the entry at ``keys`` set to ``value``."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    node = data
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return modelfile.loads(json.dumps(data))


@pytest.mark.parametrize("path, keys, value, wrong", THIN)
def test_a_thin_mutant_is_proved_exactly_when_every_pair_runs_right(path, keys, value, wrong):
    """Every pair run exactly is the ground truth: a mutant an exact run shows wrong is never
    "proved" and is "fails" with counterexamples from the wrong pairs; one right everywhere,
    10^-10 away, is "proved", never "fails"."""
    model = with_entry(path, keys, value)
    n = model.prompt.digits
    bad = {(a, b) for a in range(10 ** n) for b in range(10 ** n)
           if add(model, "fraction", a, b) != a + b}
    assert len(bad) == wrong
    outcome = generic.prove(model, max_sets=2000, examples=3)
    assert outcome.verdict == ("fails" if bad else "proved")
    for a, b, wrote in outcome.counterexamples:
        assert (a, b) in bad and add(model, "fraction", a, b) == wrote
    if not bad:   # "proved" is a certificate the kernel accepts
        assert setcheck.check(generic.certificate(outcome, model, "thin")).startswith(
            "certificate valid: 'thin' model")


# The thin mutants' float programs (issue 36: the rule for the float prover too): the ground
# truth is every pair run by the float replay, which for float64 keeps the real-number
# model's failing set and for float32 need not (the 10^-10 moves fall inside a float32 ulp,
# so both sides of a pair of mutants add alike there).
FLOAT_WRONG = {("float", 0): 0, ("float", 1): 45, ("float", 2): 0, ("float", 3): 3,
               ("float", 4): 0, ("float", 5): 8, ("float32", 0): 10, ("float32", 1): 10,
               ("float32", 2): 10, ("float32", 3): 10, ("float32", 4): 0, ("float32", 5): 0}


@pytest.mark.parametrize("program, i", [
    pytest.param(p, i, marks=[] if (p, i) in (("float", 0), ("float", 1)) else [pytest.mark.slow])
    for p, i in sorted(FLOAT_WRONG)])
def test_a_thin_mutants_float_program_is_proved_exactly_when_its_replay_adds_every_pair(
        program, i):
    """"proved" (with a certificate the float kernel accepts) exactly when the replay adds
    every pair right; else "fails" with counterexamples among the pairs it adds wrong."""
    path, keys, value, _ = THIN[i]
    model = with_entry(path, keys, value)
    bad = {(a, b) for a in range(10) for b in range(10) if add(model, program, a, b) != a + b}
    assert len(bad) == FLOAT_WRONG[program, i]
    outcome = FloatProver(model, program, max_sets=2000, examples=3).run()
    assert outcome.verdict == ("fails" if bad else "proved")
    for a, b, wrote in outcome.counterexamples:
        assert (a, b) in bad and add(model, program, a, b) == wrote
    if not bad:
        assert floatcheck.check(floatsets.certificate(outcome, model, "thin", program)).startswith(
            "certificate valid: 'thin' model")
