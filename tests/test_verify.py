"""tinyadder verify: AdderBoard's protocol, the carries and edges suites, report and exits."""

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tinyadder import addition, cases
from tinyadder.cli import main as cli_main
from tinyadder.construction import build
from tinyadder.numbers import number_system
from tinyadder.cli.options import Progress
from tinyadder.cli.verify import main

ROOT = Path(__file__).resolve().parent.parent


def verify(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err, None)
    return status, out.getvalue(), err.getvalue()


GOLDEN_20 = """\
suite adderboard: AdderBoard's 10 edge cases + 20 pairs from random.Random(2025)
model published, number float (IEEE 754 double)
  edge cases    10/10
  random pairs  20/20
passed 30/30 (100.00%)
failures: none
"""


def test_adderboard_golden_output():
    status, out, err = verify("--number", "float", "--cases", "20")
    assert (status, out) == (0, GOLDEN_20)
    assert err.startswith("time ") and err.endswith(" additions/s\n")  # not a TTY: no bar


def test_through_the_command_line_as_a_subprocess():
    done = subprocess.run(
        [sys.executable, "-m", "tinyadder", "verify", "--number", "float", "--cases", "20"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, GOLDEN_20)


def test_adderboard_cases_are_drawn_as_verify_py_draws_them():
    groups = cases.adderboard_suite(3)
    rng = random.Random(2025)
    drawn = [(rng.randint(0, 9_999_999_999), rng.randint(0, 9_999_999_999)) for _ in range(3)]
    assert groups == {"edge cases": list(cases.EDGE_CASES), "random pairs": drawn}
    assert len(cases.EDGE_CASES) == 10


def false_carry(a, b, got):
    """The published flaw's signature: a carry into some column, then zeros below it."""
    return any(got % 10 ** k == 0 and 0 < got - (a + b) < 10 ** k for k in range(1, 11))


def test_carries_finds_the_published_failures():
    status, out, _ = verify("--suite", "carries", "--number", "float", "--cases", "2")
    assert status == 1
    lines = out.splitlines()
    assert lines[3] == "   m\\g     1     2     5    10    20    50   100   200   500  1000"
    assert lines[4].split() == ["1", ".", ".", "."]  # g >= 10^m: no such cell
    assert lines[13].split() == ["10"] + ["."] * 10
    count = int(next(line for line in lines if line.startswith("failures: ")).split()[1]
                .rstrip(","))
    assert count > 0
    listed = [line.split() for line in lines if line.startswith("  ") and " + " in line]
    assert len(listed) == min(count, 20)
    for a, _, b, _, total, _, got in listed:
        a, b, total, got = int(a), int(b), int(total.rstrip(",")), int(got)
        assert total == a + b and got != total and false_carry(a, b, got)


@pytest.mark.parametrize("number", ["float", "decimal"])
def test_carries_finds_none_for_the_repaired_model(number):
    status, out, _ = verify("--suite", "carries", "--number", number, "--cases", "1",
                            "--model", "repaired")
    assert status == 0 and out.endswith("passed 88/88 (100.00%)\nfailures: none\n")


def test_carries_failures_are_exact_arithmetic_failures_too():
    """The readout flaw is not a float effect: the float failures fail in fractions too."""
    status, out, _ = verify("--suite", "carries", "--number", "decimal", "--cases", "1")
    assert status == 1
    failures = [line.split() for line in out.splitlines() if line.startswith("  ") and "+" in line]
    fraction = number_system("fraction")
    for a, _, b, _, _, _, got in failures[:2]:
        assert addition.add(build("published"), fraction, int(a), int(b)) == int(got)


def test_suites_are_reproducible_and_seeded():
    for suite in ("carries", "edges"):
        first = verify("--suite", suite, "--number", "float", "--cases", "1")
        assert verify("--suite", suite, "--number", "float", "--cases", "1")[:2] == first[:2]
    assert cases.carry_pairs(2, seed=7) == cases.carry_pairs(2, seed=7)
    assert cases.carry_pairs(2, seed=7) != cases.carry_pairs(2, seed=8)
    assert cases.edge_suite(1, seed=7) != cases.edge_suite(1, seed=8)


def test_carry_pairs_sit_just_below_a_power_of_ten():
    cells = cases.carry_pairs(3, digits=10)
    assert (1, 10) not in cells and (3, 500) in cells and (10, 1000) in cells
    assert len(cells) == 3 + 6 + 9 + 7 * 10  # g < 10^m
    for (m, g), pairs in cells.items():
        assert len(pairs) == 3
        for a, b in pairs:
            assert a % 10 ** m + b % 10 ** m == 10 ** m - g
            assert 0 <= a < 10 ** 10 and 0 <= b < 10 ** 10


def carry_columns(a, b, digits):
    """Columns (units = 0) that send a carry on, by schoolbook addition."""
    carry, out = 0, []
    for c in range(digits):
        s = (a // 10 ** c) % 10 + (b // 10 ** c) % 10 + carry
        carry = s >= 10
        if carry:
            out.append(c)
    return out


@pytest.mark.parametrize("digits", [10, 6])
def test_each_chain_is_one_run_of_exactly_its_length(digits):
    groups = cases.edge_suite(2, digits=digits)
    for length in range(1, digits + 1):
        pairs = groups[f"carry chain {length}"]
        assert len(pairs) == 2 * (digits - length + 1)
        starts = set()
        for a, b in pairs:
            columns = carry_columns(a, b, digits)
            assert columns == list(range(columns[0], columns[0] + length))
            starts.add(columns[0])
        assert starts == set(range(digits - length + 1))


def test_edges_suite_structure_and_both_models_pass():
    groups = cases.edge_suite()
    assert groups["all nines"][0] == (9_999_999_999, 9_999_999_999)
    assert (0, 0) in groups["all zeros"]
    assert carry_columns(5050505050, 5050505050, 10) == [1, 3, 5, 7, 9]
    assert carry_columns(*groups["alternating carries"][2], 10) == list(range(10))
    for model in ("published", "repaired"):
        status, out, _ = verify("--suite", "edges", "--number", "float", "--model", model)
        assert status == 0
        assert "  carry chain 10       1/1\n" in out
        assert out.endswith("passed 67/67 (100.00%)\nfailures: none\n")


def test_more_than_20_failures_shows_the_first_20_and_the_count():
    status, out, _ = verify("--suite", "carries", "--number", "float", "--cases", "4")
    count = int(out.split("failures: ")[1].split(",")[0])
    assert status == 1 and count > 20
    assert f"failures: {count}, first 20 shown\n" in out
    assert len(out.split("first 20 shown\n")[1].splitlines()) == 20


@pytest.mark.parametrize("suite, cases", [("carries", "3"), ("adderboard", "450")])
def test_jobs_give_the_report_of_one_process(suite, cases):
    """Split over 3 processes (parts of analysis.verify.CHUNK pairs: the last one short, the
    carries suite's failures spread over several), the report is the text of --jobs 1."""
    argv = ["--suite", suite, "--number", "float", "--cases", cases]
    one, three = verify(*argv), verify(*argv, "--jobs", "3")
    assert three[:2] == one[:2] and one[0] == (1 if suite == "carries" else 0)
    assert ("failures: " in one[1]) and (suite != "carries" or "first 20 shown" in one[1])


def test_an_interrupted_split_run_counts_the_parts_it_finished():
    from tinyadder.analysis import verify as analysis

    def progress(done, total, note):  # Ctrl-C once two parts are in
        if done == 2 * analysis.CHUNK:
            raise KeyboardInterrupt
    groups = analysis.suite_groups("adderboard", 600)
    outcome = analysis.check(build("published"), number_system("float"), groups, progress, 2)
    assert outcome.interrupted and outcome.total == 2 * analysis.CHUNK
    assert outcome.groups == {"edge cases": (10, 10), "random pairs": (390, 390)}


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_plain_lines_otherwise():
    tty = Terminal()
    bar = Progress(tty, bar=8)
    for done in range(1, 5):
        bar(done, 4, f" ({done} passed)")
    assert tty.getvalue().count("\r[") == 4
    assert "\r[########] 4/4 (4 passed) [" in tty.getvalue()
    bar.done()
    assert tty.getvalue().endswith("\r")
    plain = io.StringIO()
    lines = Progress(plain, every=2, seconds=1e9, at_once=False)
    for done in range(1, 6):
        lines(done, 5, f" ({done - 1} passed)")
    assert [line.split(" [")[0] for line in plain.getvalue().splitlines()] == [
        "progress: 2/5 (1 passed)", "progress: 4/5 (3 passed)"]


@pytest.mark.parametrize("argv, message", [
    (["--cases", "-1"], "argument --cases: expected a positive integer, got '-1'"),
    (["--cases", "ten"], "argument --cases: expected a positive integer, got 'ten'"),
    (["--seed", "x"], "argument --seed: expected an integer, got 'x'"),
    (["--suite", "all"], "argument --suite: invalid choice: 'all'"),
    (["--number", "double"], "argument --number: "),
    (["--model", "big"], "argument --model: unknown model 'big'"),
    (["extra"], "unrecognized arguments: extra"),
])
def test_bad_options_are_one_line_and_exit_2(argv, message, capsys):
    assert cli_main(["verify", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"tinyadder verify: error: {message}")


@pytest.mark.slow
@pytest.mark.parametrize("number", ["float", "decimal", "fraction"])
@pytest.mark.parametrize("model", ["published", "repaired"])
def test_full_adderboard_protocol(number, model):
    status, out, _ = verify("--number", number, "--model", model)
    assert (status, out.splitlines()[-2:]) == (0, ["passed 10010/10010 (100.00%)",
                                                   "failures: none"])


def test_a_pair_no_precision_certifies_does_not_pass_and_is_named(monkeypatch):
    """A tie the enclosures never settle (Undecided after refining) is a failure of that pair,
    named as such, and the run goes on."""
    from tinyadder.numbers import Undecided
    add = addition.add

    def tie(model, ns, a, b):
        if (a, b) == (9999999999, 9999999999):
            raise Undecided("no decision certified with e^x rounded to up to 6400 digits")
        return add(model, ns, a, b)
    monkeypatch.setattr(addition, "add", tie)
    out, err = io.StringIO(), io.StringIO()
    status = main(["--model", "repaired", "--cases", "1", "--number", "float"], out, err,
                  io.StringIO())
    assert status == 1
    text = out.getvalue()
    line = "  9999999999 + 9999999999 = 19999999998, model no answer certified\n"
    assert "passed 9/11 (81.82%)" in text  # AdderBoard lists that edge case twice
    assert f"failures: 2\n{line}{line}" in text
