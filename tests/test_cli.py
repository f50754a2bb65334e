"""The command as a user runs it: golden output, bad input, batches, the flaw's warning."""

import io
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tinyadder.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO(stdin))
    return status, out.getvalue(), err.getvalue()


def test_padding_and_spaces():
    assert run_cli("12 + 34") == (0, "0000000012+0000000034=00000000046\n", "")


def test_several_expressions_one_line_each():
    status, out, _ = run_cli("1+2", "  99+1 ", "--number", "float")
    assert status == 0
    assert out == "0000000001+0000000002=00000000003\n0000000099+0000000001=00000000100\n"


@pytest.mark.parametrize("number", ["fraction", "decimal", "decimal:30", "float"])
@pytest.mark.parametrize("model", ["published", "repaired"])
def test_number_and_model_options(number, model):
    assert run_cli("7650676663+0149460439", "--number", number, "--model", model) == (
        0, "7650676663+0149460439=07800137102\n", "")


BAD = {
    "12345678901+1": "more than 10 digits",
    "-5+3": "signs are not accepted",
    "1+2+3": "more than two operands",
    "12a+3": "not an addition",
    "abc": "not an addition",
    "": "empty expression",
    "   ": "empty expression",
    "+5": "missing operand",
    "5+": "missing operand",
    "１２+３": "non-ASCII digits",
    "١٢+٣": "non-ASCII digits",
}


@pytest.mark.parametrize("expr", sorted(BAD))
def test_bad_expression_is_one_line_exit_2(expr):
    status, out, err = run_cli(expr)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and BAD[expr] in err
    # what was wrong; what is accepted
    assert err.startswith("tinyadder: error: ") and "; " in err and len(err) <= 90


@pytest.mark.parametrize("argv, message", [
    (["--number", "decimal:0", "1+1"], "decimal precision P must be a whole number from 1 "
                                       "to 2100, got '0'"),
    (["--number", "double", "1+1"], "unknown number system 'double'"),
    (["--model", "fixed", "1+1"], "unknown model 'fixed'; use published, repaired, variant-28, "
                                  "a board model (tinyadder board lists them) or a model file"),
    ([], "no expression given"),
])
def test_bad_options_are_one_line_exit_2(argv, message):
    status, out, err = run_cli(*argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_stdin_batch_keeps_going_after_a_bad_line():
    status, out, err = run_cli("-", "--number", "float", stdin="1+2\n\n1+2+3\n3+4\n")
    assert status == 2
    assert out == "0000000001+0000000002=00000000003\n0000000003+0000000004=00000000007\n"
    assert err == ("tinyadder: error: line 3: more than two operands in '1+2+3'; use A+B, "
                   "e.g. 12+34\n")


def test_bad_argument_among_good_ones():
    status, out, err = run_cli("1+2", "x", "3+4", "--number", "float")
    assert status == 2 and out.count("\n") == 2 and err.count("\n") == 1


def test_published_flaw_warns_and_exits_1():
    status, out, err = run_cli("5193798811+1806201129")
    assert status == 1
    assert out == "5193798811+1806201129=07000000000\n"
    assert err == ("tinyadder: warning: the published model's sum 7000000000 is wrong: "
                   "5193798811 + 1806201129 = 6999999940 (try --model repaired)\n")


def test_repaired_has_no_warning():
    assert run_cli("5193798811+1806201129", "--model", "repaired") == (
        0, "5193798811+1806201129=06999999940\n", "")


def test_help_names_the_decimal_default(capsys):
    assert main(["--help"]) == 0
    assert "P = 40" in " ".join(capsys.readouterr().out.split())


def test_digits_option_builds_the_n_digit_model():
    assert run_cli("--digits", "20", "--model", "repaired", "--number", "decimal",
                   "99999999999999999999+1") == (
        0, "99999999999999999999+00000000000000000001=100000000000000000000\n", "")
    assert run_cli("--digits", "1", "9+9") == (0, "9+9=18\n", "")


def test_operand_limit_follows_digits():
    status, out, err = run_cli("--digits", "3", "1234+1", "12+3")
    assert (status, out) == (2, "012+003=0015\n")
    assert err == ("tinyadder: error: operand 1234 has more than 3 digits; at most 3 ASCII "
                   "digits\n")


@pytest.mark.parametrize("value, message", [
    ("5000", "N = 5000 digits is outside 1..2000: the constants are derived and verified "
             "for N <= 2000"),
    ("0", "N = 0 digits is outside 1..2000"),
    ("ten", "N must be a whole number of digits, 1 to 2000; got 'ten'"),
])
def test_digits_out_of_range_is_refused(value, message):
    status, out, err = run_cli("--digits", value, "1+1")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_float32_is_accepted_and_its_error_is_called_rounding():
    status, out, err = run_cli("7650676663+0149460439", "--number", "float32")
    assert (status, out) == (1, "7650676663+0149460439=07800136314\n")
    assert "a rounding error of float32: fraction is right; see 'tinyadder precision'" in err


@pytest.mark.parametrize("kept, runs", [(4096, 2), (1, 3)])
def test_a_repeated_wrong_line_is_run_exactly_once(monkeypatch, kept, runs):
    """Within the verdicts kept (KNOWN_PAIRS), a repeated wrong line is run exactly once."""
    from tinyadder import addition
    from tinyadder.cli import main_command
    systems, add = [], addition.add
    monkeypatch.setattr(addition, "add",
                        lambda m, ns, a, b: systems.append(ns) or add(m, ns, a, b))
    monkeypatch.setattr(main_command, "KNOWN_PAIRS", kept)
    lines = "7650676663+0149460439\n" * 2 + "9999999999+1\n" + "7650676663+0149460439\n"
    status, out, err = run_cli("--number", "float32", "-", stdin=lines)
    assert status == 1 and out.count("\n") == 4
    assert err.count("a rounding error of float32: fraction is right") == 4
    assert systems == ["fraction"] * runs


def test_help_names_the_precision_picked_from_n(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "decimal without P picks P = N + 30 significant digits" in text
    assert "--digits N" in text and "1 <= N <= 2000" in text


def test_options_may_come_between_expressions():
    status, out, _ = run_cli("1+2", "--number", "float", "5+5", "--model", "repaired", "7+0")
    assert status == 0
    assert out.splitlines() == ["0000000001+0000000002=00000000003",
                                "0000000005+0000000005=00000000010",
                                "0000000007+0000000000=00000000007"]


def test_bench_prints_a_rate_per_system(capsys):
    status = main(["bench", "--only", "rates", "--scale", "0.01", "--repeats", "2"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("tinyadder bench: published model") and "Python 3." in lines[1]
    assert all(len(line) <= 80 for line in lines)
    header = next(i for i, line in enumerate(lines) if line.startswith("system"))
    rows = [line.split() for line in lines[header + 1:header + 5]]
    assert [(r[0], r[1]) for r in rows] == [("fraction", "6"), ("decimal", "8"),
                                            ("float", "20"), ("float32", "10")]
    # the published model's float32 sums are wrong (its own flaw, not the bench's)
    assert status == 1 and "WRONG" in rows[3] and not any("WRONG" in r for r in rows[:3])
    assert "min / median / max of 2 repeats" in out
    assert any(line.startswith(("PyTorch comparison skipped", "x torch A, B")) for line in lines)


@pytest.mark.parametrize("argv, message", [
    (["--repeats", "0"], "expected an integer from 1 to 100, got '0'"),
    (["--scale", "x"], "expected a number in (0, 100], got 'x'"),
])
def test_bench_bad_options(argv, message, capsys):
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_bench_long_times_one_addition_per_length(capsys):
    assert main(["bench", "--long", "5,20", "--number", "fraction", "--model", "repaired"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].startswith("one seeded random N-digit addition, repaired model")
    assert [line.split()[:3] + line.split()[4:5] for line in lines[5:7]] == [
        ["fraction", "5", "19", "right"], ["fraction", "20", "64", "right"]]


def _sigint_default():
    """A child's SIGINT as a terminal gives it, even when this run of the tests ignores it (a
    background job of a non-interactive shell starts with SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_start_up_is_one_line_and_exit_130():
    """SIGINT while the package's modules are still being imported (the child reports each
    import as it completes: -X importtime) ends the run with one line and status 130, not a
    KeyboardInterrupt traceback; so does one that comes later, while it reads."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "tinyadder", "-"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,  # then it waits for standard input
                            preexec_fn=_sigint_default)
    watchdog = threading.Timer(60, proc.kill)  # the loop below must not wait forever
    watchdog.start()
    try:
        for line in proc.stderr:  # 'import time: 465 |  465 |   tinyadder.numbers'
            if line.split(b"|")[-1].strip() == b"tinyadder.numbers":  # one of the first
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()
    lines = [e for e in err.decode().splitlines() if not e.startswith("import time:")]
    assert (proc.returncode, out, lines) == (130, b"", ["tinyadder: interrupted"])


def test_ctrl_c_is_left_alone_where_it_is_ignored():
    """A run started with SIGINT ignored (nohup, a background job) keeps it ignored."""
    done = subprocess.run([sys.executable, "-c", "import signal, subprocess, sys; "
                           "signal.signal(signal.SIGINT, signal.SIG_IGN); "
                           "p = subprocess.Popen([sys.executable, '-c', 'import signal, "
                           "tinyadder.__main__ as m, sys; sys.argv = [\"tinyadder\", \"1+2\"]; "
                           "signal.raise_signal(signal.SIGINT); m.entry()']); "
                           "sys.exit(p.wait())"], cwd=ROOT, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, b"0000000001+0000000002=00000000003\n", b"")


def test_readme_shows_the_flaw_its_warning_and_exit_status():
    """The flaw example shows what a terminal shows: the sum, the warning, the status 1 (run
    and compared by tests/test_docs.py)."""
    readme = (ROOT / "README.md").read_text()
    assert ("$ python -m tinyadder 5193798811+1806201129\n"
            "5193798811+1806201129=07000000000\n"
            "tinyadder: warning: the published model's sum 7000000000 is wrong: "
            "5193798811 + 1806201129 = 6999999940 (try --model repaired)\n"
            "$ echo $?\n1\n") in readme


def test_bench_board_proves_each_proved_board_model_again(monkeypatch, capsys):
    """--only board: a line per model the board lists as proved, its verdict and regions from
    a real run (here adder1 stands in for the board, with --jobs 2), then the totals; then
    the same of each float program it lists as proved, in its dtype."""
    from tinyadder import build
    from tinyadder.analysis import board
    from tinyadder.cli import bench
    stand_in = board.Entry("adder1", "", "", None, 0, "float32", {})
    other = board.Entry("other", "", "", None, 0, "float32", {})
    monkeypatch.setattr(board, "entries", lambda: [stand_in, other])

    def proved(name):
        return "proved" if name == "adder1" else "undecided"

    monkeypatch.setattr(board, "verdict", proved)
    monkeypatch.setattr(board, "program_verdict", proved)
    monkeypatch.setattr(bench, "build", lambda name: build(str(ROOT / "tests/models/adder1.json")))
    assert main(["bench", "--only", "board", "--jobs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3] == "prove --generic --max-sets 1000 --jobs 2, each board model proved " \
                       "(CPU: all processes)"
    assert lines[4].split()[:4] == ["adder1", "proved", "28", "regions"]
    assert lines[5].startswith("board proofs: ") and lines[6] == ""
    assert lines[7] == "prove --number DTYPE --max-sets 1000 --jobs 2, each board program proved"
    assert lines[8].split()[:4] == ["adder1", "proved", "28", "regions"]
    assert lines[9].startswith("program proofs: ") and lines[11].startswith("bench: ")


@pytest.mark.parametrize("path", ["tinyadder", "tinyadder/__main__.py"])
def test_the_package_folder_runs_as_a_path(tmp_path, path):
    """``python path/to/tinyadder`` runs the package in that folder (Python puts the folder
    itself first on the path, where tinyadder/numbers would hide the library's numbers), with
    the same answer as ``python -m tinyadder``, and bad input stays one line."""
    done = subprocess.run([sys.executable, str(ROOT / path), "7650676663+0149460439", "1+"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "7650676663+0149460439=07800137102\n")
    assert done.stderr == "tinyadder: error: missing operand in '1+'; use A+B, e.g. 12+34\n"
