"""``tinyadder hunt``: the margin it descends on is the true digit's lead, a pair it flags is run
again by the generation loop in float and exactly, a seed gives the same search, and what it
finds on a failing board model is a counterexample of the real-number model."""

import io
import json

import pytest

from tinyadder import build, modelfile, number_system, run_with_cache
from tinyadder.addition import add, encode_answer
from tinyadder.analysis.hunt import chains, hunt, margins
from tinyadder.cli import main
from tinyadder.modelfile import dump
from tinyadder.numbers import for_model
from tinyadder.plan import compile_model


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO())
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def zcbtrak():
    return build("zcbtrak-6")


def compiled(model, number="float"):
    return compile_model(model, for_model(number_system(number), model))


def test_a_margin_is_the_true_digits_lead_over_the_best_other(zcbtrak):
    """margins() from one pass over prompt and true answer equals, position by position, the
    traced run's logit of the sum's digit less the largest other one."""
    a, b = 7650676663, 149460439
    logits, _ = run_with_cache(zcbtrak, f"{a}+{b}", ns=number_system("float"), names=[])
    digits = f"{a + b:011d}"[::-1]  # zcbtrak-6 writes the sum units first
    start = len(logits) - 12
    expected = []
    for k, d in enumerate(digits):
        row = [float(v) for v in logits[start + k]]
        expected.append(row[int(d)] - max(v for t, v in enumerate(row) if t != int(d)))
    assert margins(zcbtrak, compiled(zcbtrak), a, b) == expected
    assert all(m > 0 for m in expected)


def test_the_true_answer_is_written_in_the_models_answer_order(zcbtrak):
    published = build("published")
    ids = encode_answer(zcbtrak, 7800137102)  # zcbtrak-6 writes the units digit first
    assert [zcbtrak.vocab[t] for t in ids] == list("20173100870")
    assert [published.vocab[t] for t in encode_answer(published, 46)] == list("00000000046")


def test_a_seed_gives_the_same_search_and_the_kept_pairs_are_its_least(zcbtrak):
    first = hunt(zcbtrak, evals=40, seed=3)
    assert first == hunt(zcbtrak, evals=40, seed=3)
    assert first.evals == 40 and first.flagged == () and not first.timed_out
    kept = [p.margin for p in first.kept]
    assert kept == sorted(kept) and len(set(kept)) == len(kept) == 8
    c = compiled(zcbtrak)
    for p in first.kept:
        row = margins(zcbtrak, c, p.a, p.b)
        assert p.margin == min(row)
        k = row.index(p.margin)
        assert p.place == k  # units first: the k-th token writes 10^k
    other = hunt(zcbtrak, evals=40, seed=4).kept[0]
    assert (first.kept[0].a, first.kept[0].b) != (other.a, other.b)


def test_the_starts_are_carry_chains_of_the_models_n():
    assert chains(10) == [(9999999999, 1), (4999999999, 5000000001),
                          (9999999999, 9999999999)]
    assert chains(1) == [(9, 1), (4, 6), (9, 9)]


def test_an_answer_too_short_for_the_sum_is_flagged_at_the_first_chain(zcbtrak):
    """zcbtrak-6 edited to write 10 digits: the first start's sum, 10^10, has 11; both runs
    write what the model writes, and neither is a + b."""
    data = json.loads(dump(zcbtrak))
    data["prompt"]["answer_digits"] = 10
    short = modelfile.loads(json.dumps(data))
    found = hunt(short, evals=1)
    [p] = found.flagged
    assert (p.a, p.b, p.margin, p.place) == (9999999999, 1, float("-inf"), 10)
    assert p.float_sum == p.exact_sum == add(short, "fraction", 9999999999, 1) == 0
    assert p.fails and p.float_fails


def test_rezabyt_311s_pair_the_search_meets_is_wrong_in_the_exact_run():
    """The pair seed 1 meets after 5,363 passes (test_the_search_finds_rezabyt_311s_pair):
    its least margin is below zero at 10^4, and the exact run writes 8 there for 7."""
    model = build("rezabyt-311")
    a, b = 8990989798, 9991989901
    row = margins(model, compiled(model), a, b)
    assert min(row) < 0 and row.index(min(row)) == 4
    assert add(model, "fraction", a, b) == 18982989699 != a + b == 18982979699


@pytest.mark.slow
def test_the_search_finds_rezabyt_311s_pair():
    status, out, err = run_cli("hunt", "--model", "rezabyt-311", "--seed", "1", "--evals",
                               "6000", "--examples", "1")
    assert status == 1
    assert out.splitlines()[0] == ("hunt: rezabyt-311 model, its float64 program, 5,363 "
                                   "passes (seed 1): a search of single pairs led by the "
                                   "margin, not a proof")
    assert out.splitlines()[-1] == (
        "8990989798 + 9991989901 = 18982979699: float64 writes 18982989699, the exact run "
        "18982989699 (wrong in the real-number model too: a counterexample)")


def test_the_command_prints_the_least_margins_and_says_it_is_no_proof():
    status, out, err = run_cli("hunt", "--model", "zcbtrak-6", "--evals", "12", "--keep", "3")
    assert (status, err) == (0, "")
    assert out == (
        "hunt: zcbtrak-6 model, its float64 program, 12 passes (seed 0): a search of single "
        "pairs led by the margin, not a proof\n"
        "least margins met (the true digit's logit less the best other's):\n"
        + "".join(f"  {line}\n" for line in GOLDEN) +
        "no pair added wrong among the 12 searched\n")


GOLDEN = [
    "9999994999 + 800000961     0.0436122 at place 10^8",
    "9999994999 + 961           0.0497979 at place 10^1",
    "9993914999 + 6080361       0.0499343 at place 10^1",
]


@pytest.mark.parametrize("argv, says", [
    (["--evals", "0"], "argument --evals: expected an integer from 1 to 1000000000, got '0'"),
    (["--number", "fraction"], "argument --number: invalid choice: 'fraction'"),
    (["--seed", "-1"], "argument --seed: expected a non-negative integer"),
    (["--model", "nosuch"], "--model"),
])
def test_bad_options_are_one_line_and_exit_2(argv, says):
    status, out, err = run_cli("hunt", *argv)
    assert status == 2 and out == "" and "Traceback" not in err
    [line] = [e for e in err.splitlines() if ": error: " in e]
    assert says in line


@pytest.mark.parametrize("kwargs, says", [
    ({"number": "fraction"}, "the search runs a float program"),
    ({"evals": 0}, "evals must be a whole number >= 1"),
    ({"keep": True}, "keep must be a whole number >= 1"),
    ({"patience": 1.5}, "patience must be a whole number >= 1"),
])
def test_the_api_validates_as_the_command_line(zcbtrak, kwargs, says):
    with pytest.raises(ValueError, match=says):
        hunt(zcbtrak, **kwargs)
