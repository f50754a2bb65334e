"""The float certificate checker (proof/kernel/floatcheck.py): it accepts the float prover's
certificates, refuses tampered ones, refuses a proof whose model adds in real numbers but not
as a float32 program, and imports nothing of the search."""

import ast
from fractions import Fraction
import json
import random

import pytest

from tinyadder import build, models
from tinyadder.analysis import board
from tinyadder.proof.kernel import floatcheck, setcheck
from tinyadder.proof import reading
from tinyadder.proof.search import floatsets, generic
from tinyadder.proof.kernel.claim import Invalid, Malformed
from tinyadder.proof.kernel.claim import model_hash
from tinyadder.proof.search.sets import Region
from tinyadder.cli import main
from tinyadder.forward import activation
from tinyadder.modelfile import dump, load

from test_board import program_certificate
from test_prove_float import single

ADDER1 = "tests/models/adder1.json"
OFFSET = "tests/models/adder1-offset.json"


@pytest.fixture(scope="module")
def adder1():
    """adder1's float32 certificate (JSON round trip)."""
    model = load(ADDER1)
    outcome = floatsets.prove(model, "float32")
    return json.loads(json.dumps(floatsets.certificate(outcome, model, "adder1", "float32")))


def test_adder1_float32_certificate_checks(adder1):
    assert floatcheck.check(adder1) == (f"certificate valid: 'adder1' model (sha256 "
                                        f"{model_hash(adder1['model'])}) as a float32 "
                                        f"program, N = 1: every pair is added right (21 leaves "
                                        f"re-decided)")


def test_the_cli_writes_and_checks_a_float32_certificate(tmp_path, capsys):
    path = tmp_path / "adder1.float32.cert.json"
    assert main(["prove", "--model", ADDER1, "--number", "float32",
                 "--certificate", str(path)]) == 0
    capsys.readouterr()
    assert json.loads(path.read_text())["number"] == "float32"
    assert main(["check-certificate", str(path)]) == 0
    assert capsys.readouterr().out == (f"certificate valid: '{ADDER1}' model (sha256 "
                                       f"{model_hash(dump(load(ADDER1)))}) as a float32 "
                                       f"program, N = 1: every pair is added right (21 leaves "
                                       f"re-decided)\n")


def test_a_tampered_float_certificate_is_refused(adder1, tmp_path, capsys):
    """A tree cut short, a leaf claimed without its splits, another model's weights: the
    certificate does not check (exit 1); a float16 program: no certificate at all (one
    line, exit 2)."""
    first = adder1["positions"][0]
    for change in ({"split": ["c", 1], "children": first["children"][:1]}, {"leaf": "bound"},
                   {"leaf": "pair", "pair": [0, 0]}):
        with pytest.raises(Invalid):
            floatcheck.check(dict(adder1, positions=[change] + adder1["positions"][1:]))
    with pytest.raises(Malformed):
        floatcheck.check(dict(adder1, number="float16"))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(dict(adder1, number="float16")))
    assert main(["check-certificate", str(path)]) == 2
    assert capsys.readouterr().err == (
        "tinyadder: error: number: 'float16' is not float32 or float; give a file written by "
        "'tinyadder prove --certificate'\n")
    path.write_text(json.dumps(dict(adder1, model=dump(load(OFFSET)))))
    assert main(["check-certificate", str(path)]) == 1
    assert capsys.readouterr().out == ("certificate invalid: at position 0, token 1's logit "
                                       "may reach the target's\n")


def test_no_float32_certificate_for_a_model_right_only_in_real_numbers(tmp_path, capsys):
    """adder1-offset adds every pair in real numbers (its real-number certificate checks)
    but its float32 program fails: prove writes no float32 certificate, and the real-number
    proof's trees, given as a float32 certificate, do not check."""
    model = load(OFFSET)
    real = generic.prove(model)
    cert = json.loads(json.dumps(generic.certificate(real, model, "offset")))
    assert setcheck.check(cert).startswith("certificate valid")
    path = tmp_path / "offset.json"
    assert main(["prove", "--model", OFFSET, "--number", "float32",
                 "--certificate", str(path)]) == 1
    assert "no certificate written: the verdict is fails" in capsys.readouterr().err
    assert not path.exists()
    forged = dict(cert, format=floatcheck.FORMAT, number="float32")
    with pytest.raises(Invalid, match="logit may reach the target's|adds .* wrong"):
        floatcheck.check(forged)
    assert floatcheck.check(dict(forged, number="float")).startswith("certificate valid")


def test_the_checker_rounds_as_ieee():
    rng = random.Random(7)
    for _ in range(300):
        d = float(rng.random() * 2.0 ** rng.randint(-140, 100))
        assert floatcheck.to_nearest(Fraction(d), 24, -126, 128) == single(d)
    ns = floatcheck.FloatFormSystem(load(ADDER1), "float32")
    assert ns.half_ulp(Fraction(1000)) == Fraction(1, 2 ** 15)
    assert ns.half_ulp(Fraction(0)) == Fraction(1, 2 ** 150)


def test_the_checker_takes_e_to_the_x_past_the_range_as_infinite():
    """The prover's rule, mirrored: e^x > 2^129 at every pair is +inf, 1 + inf = inf,
    x / inf = 0; a possible overflow, or any other use of inf, is Invalid."""
    ns = floatcheck.FloatFormSystem(load(ADDER1), "float32")
    ns.at(setcheck.root(1), 1)
    x = ns.lift(ns.interval(Fraction(-200), Fraction(-90)))
    assert ns.one + ns.exp(-x) is floatcheck.INFINITE
    silu = activation("silu", x, ns)
    assert silu.point and silu.k == 0
    with pytest.raises(Invalid, match="may overflow"):
        ns.exp(ns.lift(ns.interval(Fraction(80), Fraction(100))))
    for use in (lambda v: v * x, lambda v: v / x, lambda v: -v, lambda v: ns.close(v)):
        with pytest.raises(Invalid, match="infinite value"):
            use(floatcheck.INFINITE)


def test_the_float_checker_imports_nothing_of_the_search():
    tree = ast.parse(open(floatcheck.__file__).read())
    names = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    names |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
              for a in node.names}
    assert not {m for m in names if m and m.split(".")[-1] in
                ("generic", "sets", "setsystem", "floatsets", "symbolic", "census")}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_36p_float32_certificates_check_at_n2(variant):
    model = build(variant, 2)
    outcome = floatsets.prove(model, "float32")
    assert outcome.verdict == "proved"
    cert = json.loads(json.dumps(floatsets.certificate(outcome, model, variant)))
    assert floatcheck.check(cert).startswith(f"certificate valid: '{variant}' model (sha256 "
                                              f"{model_hash(dump(model))}) as a float32 "
                                              f"program, N = 2")
    assert dump(model) == cert["model"]


# every board model whose float program is proved (board.PROGRAM_VERDICTS)
PROVED_PROGRAMS = [n for n, v in board.PROGRAM_VERDICTS.items() if v == "proved"]


@pytest.mark.slow
@pytest.mark.parametrize("name", PROVED_PROGRAMS)
def test_the_board_float_program_certificates_check(name):
    """The committed certificate of each proved float program (written by ``prove --model
    NAME --number float32``, float for a float64 entry; jacobli99-28 with
    ``--carries-first``) checks, its leaves in two processes, and its model text is the
    shipped file's."""
    cert = reading.load(program_certificate(name), floatcheck.FORMAT)
    assert cert["model"] == dump(models.build(name))
    system = board.entry(name).program
    line = floatcheck.check(cert, jobs=2)
    assert line.startswith(f"certificate valid: '{name}' model (sha256 "
                           f"{model_hash(cert['model'])}) as a {system} program, N = 10: "
                           f"every pair is added right")


@pytest.mark.slow
def test_rope19_regions_decide_where_silu_saturates():
    """kswain98-2's SiLU gates reach x < -89, where e^-x is +inf in float32 and SiLU is -0
    (PyTorch's x / (1 + e^-x)): the region s_0 = 0, c_1 = 0 of its first answer digit
    decides in float32, by the prover and by the checker, with a margin below the
    real-number model's; and s_9 = 0, c_10 = 0 of its tenth, where the checker, as the
    prover, runs the last block's last row only after its attention (another row's gate
    input there spans its overflow)."""
    model = models.build("kswain98-2")
    leaves = floatcheck.FloatLeaves(model, "float32")
    for k, q, digit in ((0, 0, [4, 1, 0]), (9, 9, [4, 1, 0])):
        region, box = Region.every(10), setcheck.root(10)
        for split in [("s", q, cut) for cut in digit] + [("c", q + 1)]:
            region, box = region.children(split)[0], setcheck.cut(box, 10, list(split))[0]
        assert region.describe() == f"s_{q} = 0, c_{q + 1} = 0"
        assert leaves.holds(k, box)
        if k:
            continue
        margins = []
        for prover in (generic.Prover(model), floatsets.FloatProver(model, "float32")):
            verdict, margin = prover.decide(prover.logits(k, region), prover.target(k, region))
            assert verdict == "decided"
            margins.append(margin)
        assert 0 < margins[1] < margins[0]


def test_infinity_refuses_its_form_but_answers_protocol_probes():
    """The program's +inf (prover's and checker's) has no form: a look at one is undecided
    (the checker: invalid); a protocol's probe of a dunder (doctest's, inspect's) is an
    AttributeError, as for any object without it, so tools can walk the modules."""
    import inspect
    from tinyadder.numbers import Undecided
    for module, refusal in ((floatsets, Undecided), (floatcheck, Invalid)):
        assert not hasattr(module.INFINITE, "__wrapped__")
        assert inspect.unwrap(module.INFINITE) is module.INFINITE
        with pytest.raises(refusal):
            module.INFINITE.coefs
