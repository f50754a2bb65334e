"""tinyadder prove and check-certificate: the proof, its refusals, and the certificate."""

import json
from dataclasses import replace
from fractions import Fraction

import pytest

from tinyadder import build
from tinyadder.analysis.proof import certificate as checker
from tinyadder.analysis.proof.formulas import digit_formulas
from tinyadder.analysis.proof.prove import prove
from tinyadder.analysis.proof.stress import stress_model
from tinyadder.cli import main
from tinyadder.construction import constants


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_small_n_is_proved_for_both_models(variant):
    proof = prove(build(variant, 3))
    assert proof.proved and all(row.margin > Fraction(1, 3) for row in proof.rows)


def test_the_offset_is_the_rounding_bias_plus_a_small_leak():
    """docs/digits.md: at position i the layer-1 bias adds round_bias (i + 1) / 1000 of a
    unit; the construction's leakage adds less than 0.32. The proof's offset holds both."""
    n = 4
    bias = constants(n)["round_bias"]
    for row in prove(build("repaired", n)).rows:
        b_i = bias * (row.position + 1) / 1000
        assert abs(row.low - b_i) < Fraction(1, 10 ** 6)
        assert b_i < row.high < b_i + Fraction(32, 100)


@pytest.mark.slow
def test_the_published_flaw_is_not_proved_at_n10():
    proof = prove(build("published"))
    failing = [row.place for row in proof.rows if not row.proved]
    assert not proof.proved and failing == [9, 8, 7, 6]


def test_the_tilts_are_the_readout_slots():
    """Published: digit 5's logit also holds cand0, so neighbouring tilts (in units of the
    gain times the marks' spacing) are 10^-6 apart from digit 5 on; repaired: none."""
    pub, rep = (digit_formulas(build(v, 2))[1] for v in ("published", "repaired"))
    assert rep.tilt_ratio == 0
    assert Fraction(1, 10 ** 6) <= pub.tilt_ratio < Fraction(2, 10 ** 6)


def test_refuses_when_tilts_reach_the_gain():
    proof = prove(stress_model(Fraction(1, 100), 2))
    assert not proof.proved and "tilts differ by" in proof.refusal


def test_refuses_a_model_whose_scores_read_the_digits():
    model = build("repaired", 2)
    block = model.blocks[0]
    attn = replace(block.attn, W_K={**block.attn.W_K, "digit": {"h3": 1}})
    model = replace(model, blocks=(replace(block, attn=attn),) + model.blocks[1:])
    proof = prove(model)
    assert proof.refusal == "an attention score that depends on the digits"


@pytest.fixture(scope="module")
def cert3(tmp_path_factory):
    path = tmp_path_factory.mktemp("cert") / "repaired3.json"
    assert main(["prove", "--model", "repaired", "--digits", "3",
                 "--certificate", str(path)]) == 0
    return path


def test_certificate_round_trips(cert3, capsys):
    assert main(["check-certificate", str(cert3)]) == 0
    assert capsys.readouterr().out == (
        "certificate valid: repaired model, N = 3: every pair is added right\n")


def test_a_tampered_certificate_is_invalid(cert3, tmp_path, capsys):
    data = json.loads(cert3.read_text())
    data["decisions"][2]["marks"][4] = str(Fraction(data["decisions"][2]["marks"][4]) + 1)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["check-certificate", str(bad)]) == 1
    assert capsys.readouterr().out.startswith("certificate invalid: ")


def test_a_certificate_claiming_the_published_model_does_not_check(cert3):
    data = json.loads(cert3.read_text())
    data["variant"] = "published"
    with pytest.raises(checker.Invalid):
        checker.check(data)


@pytest.mark.parametrize("content", ["not json", "{}", '{"format": "tinyadder-proof-1"}'])
def test_bad_certificate_files_exit_2(tmp_path, capsys, content):
    path = tmp_path / "c.json"
    path.write_text(content)
    assert main(["check-certificate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinyadder: error: ")


def test_missing_certificate_file(capsys):
    assert main(["check-certificate", "/nonexistent/cert.json"]) == 2
    assert capsys.readouterr().err.startswith("tinyadder: error: cannot read ")


def test_prove_command_exit_status(capsys):
    assert main(["prove", "--digits", "2"]) == 0
    out = capsys.readouterr().out
    assert "proved: the published model adds all 10^4 pairs" in out
    assert main(["prove", "--digits", "x"]) == 2
    assert main(["prove", "--model", "nope"]) == 2
