"""Certificates as files (issue 38, items 3 and 4): prove --certificate writes what
check-certificate reads, gzip or not; every gzip problem is named; the path is checked before
the proof runs; the write is atomic."""

import gzip
import io
import os
import subprocess
import sys

import pytest

from tinyadder.cli import main
from tinyadder.proof import reading


def run(*argv):
    """(status, stdout, stderr) of the command line, in process."""
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The closed form's certificate of the repaired model at N = 1, as JSON bytes."""
    path = tmp_path_factory.mktemp("cert") / "r1.json"
    assert run("prove", "--model", "repaired", "--digits", "1", "--certificate", str(path))[0] == 0
    return path.read_bytes()


def test_a_closed_form_certificate_named_gz_checks(tmp_path):
    """prove --certificate X.json.gz writes gzip, which check-certificate reads (it said
    "not JSON: 'utf-8' codec can't decode byte 0x8b")."""
    path = tmp_path / "r1.json.gz"
    assert run("prove", "--digits", "1", "--certificate", str(path))[0] == 0
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    status, out, err = run("check-certificate", str(path))
    assert (status, err) == (0, "") and out.startswith("certificate valid: 'published' model")


def _member(data):
    return gzip.compress(data, mtime=0)


def _bad_crc(data):
    packed = bytearray(_member(data))
    packed[-8] ^= 0xFF  # the trailer's CRC-32
    return bytes(packed)


GZIP_PROBLEMS = {
    "truncated": (lambda d: _member(d)[:len(_member(d)) // 2], "is a truncated gzip stream"),
    "bad crc": (_bad_crc, "is a broken gzip stream (Error -3 while decompressing data: "
                          "incorrect data check)"),
    "two members": (lambda d: _member(d) + _member(d), "has data after its gzip stream"),
    "gz of gz": (lambda d: _member(_member(d)), "is gzip-compressed twice"),
    "garbage": (lambda d: b"\x1f\x8b" + os.urandom(40), "is a broken gzip stream"),
}


@pytest.mark.parametrize("problem", sorted(GZIP_PROBLEMS))
def test_every_gzip_problem_is_named(plain, tmp_path, problem):
    make, says = GZIP_PROBLEMS[problem]
    path = tmp_path / "c.json.gz"
    path.write_bytes(make(plain))
    status, out, err = run("check-certificate", str(path))
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"{path} {says}" in err


def test_a_gzip_bomb_is_stopped_at_the_limit(plain, tmp_path, monkeypatch):
    """A stream that decompresses past the limit is refused once the limit is reached (the
    limit lowered here to 4 KB, for speed)."""
    monkeypatch.setattr(reading, "MAX_BYTES", 4096)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(_member(b" " * 10 ** 6 + b"{}"))  # 1 MB in about 1 KB
    status, out, err = run("check-certificate", str(path))
    assert (status, out) == (2, "")
    assert f"{path} decompresses to more than 4,096 bytes" in err


def test_the_certificate_path_is_checked_before_the_proof(tmp_path, monkeypatch):
    """An empty name, a directory, a missing folder: one line, exit 2, before any proof
    runs (it was found after the whole proof; the empty name proved and wrote nothing)."""
    import tinyadder.cli.prove as cli_prove

    def no_proof(*args, **kwargs):
        raise AssertionError("the proof ran")
    monkeypatch.setattr(cli_prove, "prove", no_proof)
    for path, says in [("", "an empty file name"), (str(tmp_path), "is a directory"),
                       (str(tmp_path / "no" / "c.json"), "no folder")]:
        status, out, err = run("prove", "--digits", "1", "--certificate", path)
        assert (status, out) == (2, "") and err.count("\n") == 1 and says in err


def test_a_failed_write_leaves_the_old_file(tmp_path):
    """A write cut short (ulimit -f: 2 KB of a certificate of about 5 KB) leaves the file as it was and no temporary file
    (it left a truncated certificate)."""
    path = tmp_path / "c.json"
    path.write_text("old")
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.run(["sh", "-c", f"ulimit -f 2; exec {sys.executable} -m tinyadder prove "
                                       f"--model repaired --digits 1 --certificate {path}"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and "File too large" in proc.stderr
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["c.json"]


def test_a_certificate_is_written_whole_with_the_usual_mode(plain, tmp_path):
    path = tmp_path / "c.json"
    assert run("prove", "--model", "repaired", "--digits", "1", "--certificate", str(path))[0] == 0
    umask = os.umask(0o22)
    os.umask(umask)
    assert path.read_bytes() == plain and (path.stat().st_mode & 0o777) == 0o666 & ~umask


def test_a_generic_certificate_is_bound_to_its_model_by_model():
    """check-certificate --model M: exit 0 for the model the certificate holds (the file it
    was written from), exit 1 and one line naming both hashes for another."""
    from tinyadder.modelfile import dump, load
    from tinyadder.proof.kernel.claim import model_hash
    path = "tests/fixtures/proofs/adder1_squares.cert.json"
    status, out, err = run("check-certificate", path, "--model", "tests/models/adder1_squares.json")
    assert (status, err) == (0, "") and out.startswith("certificate valid: ")
    status, out, err = run("check-certificate", path, "--model", "tests/models/adder1.json")
    theirs = model_hash(reading.load(path)["model"])
    assert (status, err) == (1, "") and out == (
        f"certificate not about the given model: it holds the model of sha256 {theirs}; the "
        f"given model is sha256 {model_hash(dump(load('tests/models/adder1.json')))}\n")
