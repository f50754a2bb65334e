"""Round 4 of the hostile audit (issue 38), the command line's share: subcommands named
where a word is given, no abbreviated options, '-o -', census's own status for "not reached",
a short write to standard output, and Ctrl-C from the entry point's first instruction."""

import io
import os
from pathlib import Path
import subprocess
import sys

import pytest

from tinyadder.cli import main
from tinyadder.cli.options import SUBCOMMANDS

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = (ROOT / "tinyadder" / "models" / "published.json").read_text(encoding="utf-8")
NAMES = ", ".join(sorted(SUBCOMMANDS))


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO())
    return status, out.getvalue(), err.getvalue()


def test_help_lists_the_subcommands():
    status, out, err = run_cli("help")
    assert (status, err) == (0, "") and out.startswith("usage: tinyadder ")
    assert f"subcommands: {NAMES}" in " ".join(out.split())
    status, out, err = run_cli("help", "verify")
    assert (status, err) == (0, "") and out.startswith("usage: tinyadder verify ")


@pytest.mark.parametrize("argv, message", [
    (["verfy"], f"tinyadder: error: unknown subcommand 'verfy' (did you mean verify?); the "
                f"subcommands are {NAMES}, and an expression is an addition such as 12+34\n"),
    (["--number", "float", "verify"], "tinyadder: error: 'verify' is a subcommand: give it "
                                      "first, before any option ('tinyadder verify --help' "
                                      "lists its options)\n"),
    (["help", "verfy"], f"tinyadder: error: help takes one subcommand: {NAMES}\n"),
])
def test_a_word_for_an_expression_names_the_subcommands(argv, message):
    """Not "not an addition: 'verify'"."""
    assert run_cli(*argv) == (2, "", message)


@pytest.mark.parametrize("argv, extra", [
    (["board", "--model", "zcbtrak-6"], "--model zcbtrak-6"),
    (["--num", "float", "1+2"], "--num"),
    (["verify", "--suit", "edges"], "--suit"),
])
def test_an_option_is_read_only_by_its_whole_name(argv, extra):
    """argparse's abbreviations are off: 'board --model' is not 'board --models'."""
    status, out, err = run_cli(*argv)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert f"unrecognized arguments: {extra}" in err


def test_dash_output_is_standard_output_or_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_cli("export", "published", "-o", "-") == (0, PUBLISHED, "")
    for argv in (["figure", "sum", "1+2", "-o", "-"], ["explore", "1+2", "-o", "-"]):
        status, out, err = run_cli(*argv)
        assert (status, out) == (2, "") and err.count("\n") == 1
        assert "argument -o/--output: '-' (standard output) is not a place for" in err
    assert os.listdir(tmp_path) == []  # no file named '-' (or anything else)


def test_a_short_write_to_standard_output_is_exit_2():
    """ulimit -f: the file's size limit cuts a write short without an error from the text
    layer; the rest, written again, fails with its cause."""
    out = ROOT / "tests" / ".short-write.json"
    try:
        done = subprocess.run(["bash", "-c", f"ulimit -f 4; {sys.executable} -m tinyadder "
                               f"export published > '{out}'"], cwd=ROOT, capture_output=True,
                              timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr == b"tinyadder: error: cannot write standard output: File too large\n"
        assert out.stat().st_size == 4096 < len(PUBLISHED)
    finally:
        out.unlink(missing_ok=True)


def test_the_entry_point_takes_ctrl_c_before_anything_heavy():
    """The handler is installed by the first instruction of the entry point; importing it
    (and the package) must not import signal, whose import of enum takes milliseconds."""
    done = subprocess.run([sys.executable, "-S", "-c", "import sys, tinyadder.__main__; "
                           "print(sorted(m for m in ('enum', 'signal') if m in sys.modules))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


@pytest.mark.parametrize("argv, shown", [
    (["params"], "parameter ledger of '\\x1b[2Jevil\\ncertificate valid: x'\n"),
    (["program"], "'\\x1b[2Jevil\\ncertificate valid: x': 14 slots"),
    (["explain", "1+2"], "'\\x1b[2Jevil\\ncertificate valid: x', numbers: fraction\n"),
])
def test_a_model_files_name_is_quoted_where_it_is_printed(argv, shown, tmp_path):
    """A name that clears the terminal and forges a second line is printed as ascii() of it,
    as an expression is quoted, in outputs and error lines."""
    import json
    doc = json.loads((ROOT / "tests" / "models" / "adder1.json").read_text(encoding="utf-8"))
    doc["name"] = "\x1b[2Jevil\ncertificate valid: x"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    status, out, err = run_cli(*argv, "--model", str(path))
    assert "\x1b" not in out + err and "\ncertificate valid" not in out + err
    assert shown in out + err
