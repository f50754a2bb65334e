"""Every shipped certificate (tests/fixtures/proofs/) re-checks through the kernel
(``proof.kernel``): the two smallest by default, every one under -m slow. A certificate of a
board model holds that model's text, so its verdict is about the shipped model."""

from pathlib import Path

import pytest

from tinyadder import models
from tinyadder.analysis import board
from tinyadder.proof.kernel import floatcheck, setcheck
from tinyadder.proof import reading
from tinyadder.proof.kernel.claim import differs, model_hash

PROOFS = Path("tests/fixtures/proofs")
FILES = sorted(p.name for p in PROOFS.glob("*.cert.json*"))
SMALL = ["adder1.float32.cert.json", "adder1_squares.cert.json"]
BOARD = set(board.VERDICTS) | set(board.PROGRAM_VERDICTS)


def kernel_check(name):
    """The kernel's verdict line on the shipped certificate ``name`` (its format's checker)."""
    cert = reading.read(PROOFS / name)
    check = {setcheck.FORMAT: setcheck.check, floatcheck.FORMAT: floatcheck.check}
    return cert, check[cert["format"]](cert)


def expected_start(cert):
    """How the verdict line of ``cert`` starts: its name and the hash of the model it holds."""
    name = cert.get("name", "")
    return f"certificate valid: '{name}' model (sha256 {model_hash(cert['model'])})"


def test_every_shipped_certificate_is_of_a_kernel_format():
    """No shipped certificate is of a format the kernel does not check (the closed form's
    among them), and each of a board model holds the board's model text."""
    assert len(FILES) >= 30
    for name in FILES:
        cert = reading.read(PROOFS / name)
        assert cert["format"] in (setcheck.FORMAT, floatcheck.FORMAT), name
        model = name.split(".")[0]
        if model in BOARD:
            assert cert["name"] == model and differs(cert["model"], models.build(model)) is None


@pytest.mark.parametrize("name", SMALL)
def test_a_small_shipped_certificate_checks(name):
    cert, line = kernel_check(name)
    assert line.startswith(expected_start(cert)) and "N = 1: every pair is added right" in line


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
def test_every_shipped_certificate_checks(name):
    cert, line = kernel_check(name)
    assert line.startswith(expected_start(cert))
    model = name.split(".")[0]
    if model in BOARD:
        assert differs(cert["model"], models.build(model)) is None
        assert "N = 10: every pair is added right" in line
