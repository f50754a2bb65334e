"""The qwen-svd family's four files (docs/models.md): bingbangboom-lab-148 and xangma-177 hold
bingbangboom-lab-87's weights (one SVD run's head factors included), xangma-197 the full head
whose factors they are; and an exact run of each new file on a few pairs. tests/test_board.py
replays every file against its original's answers."""

import json
from fractions import Fraction
from pathlib import Path

import pytest

from tinyadder import models
from tinyadder.addition import add
from tinyadder.analysis import board
from tinyadder.numbers import number_system

FILES = Path(__file__).resolve().parent.parent / "tinyadder" / "models" / "board"
MLX = {"mean": "multiply"}  # mx.fast.rms_norm's mean: sum * f32(1/n)


def weights(name):
    """The file's model, without its name and about."""
    doc = json.loads((FILES / f"{name}.json").read_text(encoding="utf-8"))
    return {k: v for k, v in doc.items() if k not in ("name", "about")}


def as_torch(doc):
    """An MLX file's model as a torch program writes it: every norm's mean sum / n, the
    scores divided by f32(sqrt(2)) instead of scaled by f32(2^-1/2)."""
    text = json.dumps(doc).replace(', "mean": "multiply"', "")
    return json.loads(text.replace('"scale": "f32(f64(1/sqrt(2)))"',
                                   '"scale": "f32(f64(sqrt(2)))", "scale_op": "divide"'))


def test_bingbangboom_148_is_87s_model():
    assert weights("bingbangboom-lab-148") == weights("bingbangboom-lab-87")


def test_xangma_177_is_87s_model_in_mlx():
    mlx = weights("xangma-177")
    norms = [mlx["ln_final"]] + [b[k] for b in mlx["blocks"] for k in ("ln1", "ln2")] + [
        b["attn"][k] for b in mlx["blocks"] for k in ("q_norm", "k_norm")]
    assert len(norms) == 9 and all(n.items() >= MLX.items() for n in norms)
    assert as_torch(mlx) == weights("bingbangboom-lab-87")


def test_xangma_197_is_177_with_the_full_head():
    full, low = weights("xangma-197"), weights("xangma-177")
    head, factors = full.pop("unembed")["W_U"], low.pop("unembed")["W_U"]
    assert full == low
    slots, tokens = low["slots"], [str(t) for t in range(10)]

    def entry(table, row, col):
        return Fraction(table.get(row, {}).get(col, "0"))

    product = {(s, t): sum(entry(factors["A"], s, r) * entry(factors["B"], r, t)
                           for r in factors["inner"]) for s in slots for t in tokens}
    # the rank-2 factors approximate the full head: its largest entry is about 404
    worst = max(abs(product[s, t] - entry(head, s, t)) for s in slots for t in tokens)
    assert Fraction(1, 1000) < worst < Fraction(1, 400)


@pytest.mark.parametrize("name", ["bingbangboom-lab-148", "xangma-177", "xangma-197"])
def test_exact_run_on_a_carry_pair(name):
    """The real-number model, every digit certified, on a pair with a long carry."""
    a, b = 9999999999, 1
    assert add(models.build(name), number_system("fraction"), a, b) == a + b


def test_the_list_says_why_the_count_is_not_the_claim():
    """The claims count the rank-1 factors; the files hold the tables (numel counts them)."""
    why = ("more under numel: the file writes each rank-1 map (x . v) u as its table u v^T "
           "and the factorized embedding as its 10x5 rows; the original counts the factors")
    assert {name: (e.claimed, e.rule, e.own, e.why) for name in board.STORED
            for e in [board.entry(name)]} == {
        "bingbangboom-lab-148": (148, "numel", 283, f"135 {why}"),
        "xangma-177": (177, "numel", 283, f"106 {why}"),
        "xangma-197": (197, "numel", 303, f"106 {why}")}
