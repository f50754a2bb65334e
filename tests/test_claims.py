"""The claim is the whole sum: a model whose answer leaves out the sum's top place adds every
pair with a carry out of place N − 1 wrong, so nothing may call it proved (issue 36's false
proof: zcbtrak-6 with ``answer_digits`` 10 was "proved", and fblissjr-33's certificate edited
to that model and its last tree dropped was "valid")."""

import gzip
import json

import pytest

from tinyadder import modelfile
from tinyadder.addition import add
from tinyadder.proof.kernel import floatcheck, setcheck
from tinyadder.proof.search import generic
from tinyadder.proof.census import census
from tinyadder.proof.search.floatsets import FloatProver
from tinyadder.proof.kernel.claim import Invalid
from tinyadder.proof.prove import prove
from tinyadder.proof.symbolic import NotAffine
from tinyadder.cli import main

from cli_runs import ROOT


def short(text):
    """A model file's text with its answer cut to N digits."""
    data = json.loads(text)
    data["prompt"]["answer_digits"] = data["prompt"]["digits"]
    return json.dumps(data)


def board_text(name):
    return (ROOT / "tinyadder" / "models" / "board" / f"{name}.json").read_text("utf-8")


@pytest.fixture(scope="module")
def zcbtrak10():
    return modelfile.loads(short(board_text("zcbtrak-6")))


def test_the_short_model_adds_the_witness_wrong(zcbtrak10):
    assert add(zcbtrak10, "fraction", 9999999999, 1) == 0 != 9999999999 + 1


@pytest.mark.parametrize("program", ["fraction", "float32"])
def test_the_generic_prover_says_fails_with_a_confirmed_pair(zcbtrak10, program):
    prover = (generic.Prover(zcbtrak10) if program == "fraction" else
              FloatProver(zcbtrak10, program))
    outcome = prover.run()
    assert outcome.verdict == "fails"
    assert outcome.positions == [] and outcome.sets == 0
    [(a, b, wrote)] = outcome.counterexamples
    assert (a, b) == (9999999999, 1)
    assert wrote == add(zcbtrak10, program, a, b) != a + b


def test_the_closed_form_and_the_census_refuse_a_short_answer():
    text = short((ROOT / "tinyadder" / "models" / "repaired.json").read_text("utf-8"))
    model = modelfile.loads(text)
    proof = prove(model)
    assert not proof.proved and "place 10 is never written" in proof.refusal
    with pytest.raises(NotAffine, match="place 10 is never written"):
        census(model)


def test_the_closed_form_refuses_another_layout():
    data = json.loads((ROOT / "tinyadder" / "models" / "repaired.json").read_text("utf-8"))
    data["prompt"]["operands"] = "lsb"
    proof = prove(modelfile.loads(json.dumps(data)))
    assert not proof.proved and "not TinyAdder-36's" in proof.refusal


@pytest.mark.parametrize("name, check", [("fblissjr-33.cert.json.gz", setcheck.check),
                                         ("fblissjr-33.float64.cert.json.gz", floatcheck.check)])
def test_an_edited_certificate_of_a_short_model_is_refused(name, check):
    with gzip.open(ROOT / "tests" / "fixtures" / "proofs" / name) as f:
        cert = json.load(f)
    cert["model"] = short(cert["model"])
    cert["positions"] = cert["positions"][:-1]   # one tree per written token
    with pytest.raises(Invalid, match="place 10 is never written"):
        check(cert)


def test_prove_on_the_command_line_says_fails(tmp_path, capsys):
    path = tmp_path / "zc10.json"
    path.write_text(short(board_text("zcbtrak-6")), "utf-8")
    status = main(["prove", "--model", str(path)])
    out = capsys.readouterr().out
    assert status == 1
    assert "9999999999+0000000001=00000000000  (right: 10000000000)" in out
    assert "proved" not in out
