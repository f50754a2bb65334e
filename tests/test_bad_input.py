"""Issue 10, walked item by item (and the siblings found on other paths): every bad input gets
a clear one-line error (or the right answer) with the documented exit status, no traceback;
every good line of a batch is still answered; nothing runs away in time or memory."""

import copy
import io
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tinyadder import adderboard, add, build, number_system, run, run_with_cache
from tinyadder.analysis import trace_json, verify
from tinyadder.cli import main

ROOT = Path(__file__).resolve().parent.parent
SUM = "0000000001+0000000002=00000000003\n"


def run_cli(*argv, stdin=""):
    """(status, stdout, stderr) of the command line, in process; ``stdin`` as text or bytes."""
    out, err = io.StringIO(), io.StringIO()
    raw = stdin if isinstance(stdin, bytes) else stdin.encode("utf-8")
    status = main(list(argv), out=out, err=err,
                  stdin=io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8",
                                         errors="surrogateescape"))
    return status, out.getvalue(), err.getvalue()


def one_error(err, *parts):
    """One line, 'tinyadder...: error: ...', containing each part."""
    assert err.count("\n") == 1 and ": error: " in err and "Traceback" not in err, err
    for part in parts:
        assert part in err, err


def subprocess_run(*argv, stdin=b"", stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "tinyadder", *argv], cwd=ROOT, input=stdin,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=120)


# --- the Python API validates as the command line does ------------------------------------

@pytest.fixture(scope="module")
def model():
    return build("published")


@pytest.mark.parametrize("call", [
    lambda m: add(m, number_system("fraction"), 10 ** 10, 5),
    lambda m: run(m, number_system("fraction"), 99999999999, 1),
    lambda m: adderboard.add((m, number_system("fraction")), 10 ** 10, 1),
    lambda m: run(m, "fraction", 1, 10 ** 5000),  # too long even to print
])
def test_api_refuses_operands_longer_than_n(model, call):
    with pytest.raises(ValueError, match="more than 10 digits"):
        call(model)


@pytest.mark.parametrize("a, error, message", [
    (-5, ValueError, "operand a = -5 is negative"),
    (1.0, TypeError, "operand a must be an int, got float"),
    (True, TypeError, "operand a must be an int, got the bool True"),
    ("12", TypeError, "operand a must be an int, got str"),
])
def test_api_names_a_bad_operand(model, a, error, message):
    with pytest.raises(error, match=message):
        run(model, number_system("fraction"), a, 3)


def test_api_takes_a_number_system_by_name(model):
    assert run(model, "float", 1, 2) == SUM[:-1]
    assert add(model, "decimal:30", 12, 34) == 46
    assert run_with_cache(model, "12+34", ns="float32")[1].ns.name == "float32"
    with pytest.raises(TypeError, match="expected a number system or its name"):
        run(model, 3, 1, 2)
    with pytest.raises(ValueError, match="unknown number system 'nosuch'"):
        add(model, "nosuch", 1, 2)


def test_run_with_cache_names_a_bad_expression(model):
    with pytest.raises(TypeError, match=r"got the pair \(12, 34\)"):
        run_with_cache(model, (12, 34))
    with pytest.raises(ValueError, match="99 is not a token id of this model"):
        run_with_cache(model, [11, 99])
    with pytest.raises(ValueError, match="empty prompt"):
        run_with_cache(model, [])


def test_cache_lookups_name_the_trace_point(model):
    _, cache = run_with_cache(model, "12+34", ns="float")
    with pytest.raises(KeyError, match="no trace point 'nosuch'.*hook_embed"):
        cache.view("nosuch", 3)
    with pytest.raises(KeyError, match="no trace point 'blocks.7.hook_resid_mid'"):
        cache["resid_mid", 7]
    with pytest.raises(IndexError, match="position 99 is outside the sequence; use 0 to 33"):
        cache.view(("resid_mid", 0), 99)
    with pytest.raises(KeyError, match=r"indexed \[head\]\[pos\]\[pos\]"):
        cache.view(("pattern", 0), 3)


def test_adderboard_add_names_a_bare_model(model):
    with pytest.raises(TypeError, match="the model that build_model\\(\\) returns"):
        adderboard.add(model, 1, 2)


# --- operands past CPython's 4300-digit int() limit ---------------------------------------

def test_zero_padded_operand_over_4300_characters_is_answered():
    long = "0" * 5000 + "1+2"
    assert run_cli("1+2", long, "3+4", "--number", "float") == (
        0, SUM + SUM + "0000000003+0000000004=00000000007\n", "")
    assert run_cli("-", "--number", "float", stdin=f"1+2\n{long}\n") == (0, SUM + SUM, "")


def test_a_long_bad_line_is_quoted_as_a_short_excerpt():
    status, out, err = run_cli("-", "--number", "float", stdin="x" * 10 ** 6 + "\n1+2\n")
    assert (status, out) == (2, SUM)
    one_error(err, "line 1: not an addition: 'xxxx", "(1000000 characters)")
    assert len(err) < 120


# --- output that cannot be written, and readers who leave --------------------------------

@pytest.mark.parametrize("argv", [
    ["12+34"], ["--json", "12+34"], ["--trace", "--pos", "22", "12+34"], ["program"],
    ["verify", "--suite", "edges", "--number", "float"], ["params"], ["--help"],
    ["precision", "--digits", "2", "--pairs", "0", "--scan", "", "--systems", "float"],
    ["bench", "--long", "1", "--number", "float"], ["verify", "--help"],
])
def test_a_full_device_is_one_line_and_exit_2(argv):
    with open("/dev/full", "w") as full:
        done = subprocess_run(*argv, stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode() .endswith(
        "tinyadder: error: cannot write standard output: No space left on device\n")
    assert b"Traceback" not in done.stderr and b"Exception ignored" not in done.stderr


def test_a_closed_pipe_keeps_the_warning_and_exit_1():
    proc = subprocess.Popen([sys.executable, "-m", "tinyadder", "--json", "--number", "float",
                             "5193798811+1806201129"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.read(10) == b'{"format":'
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ("tinyadder: warning: the published model's sum 7000000000 is wrong: "
                   "5193798811 + 1806201129 = 6999999940 (try --model repaired)\n")
    # and an endless batch ends when its reader leaves (no runaway after the pipe closes)
    proc = subprocess.Popen([sys.executable, "-m", "tinyadder", "--number", "float", "-"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)

    def feed():
        try:
            while True:
                proc.stdin.write(b"1+2\n" * 1000)
        except (BrokenPipeError, ValueError, OSError):
            pass
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert proc.stdout.readline() == SUM.encode()
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in proc.stderr.read()


# --- the precision lab, verify, bench -----------------------------------------------------

def test_precision_without_systems_is_refused():
    status, out, err = run_cli("precision", "--systems", "")
    assert (status, out) == (2, "")
    one_error(err, "--systems: no number system in ''")


def test_precision_shows_progress_on_stderr():
    status, out, err = run_cli("precision", "--digits", "2", "--pairs", "0", "--scan", "",
                               "--systems", "float")
    assert status == 0 and out.endswith("float64     10/10\n")
    assert err.startswith("progress: 0/1: float64 at N = 2 [")


@pytest.mark.parametrize("argv, message", [
    (["verify", "--cases", "1000000000000"], "1,000,000,000,010 cases; at most 1,000,000"),
    (["verify", "--suite", "edges", "--digits", "2000"], "2,001,012 cases; at most"),
    (["precision", "--pairs", "1" * 30], "--pairs: expected an integer from 0 to 1000"),
    (["bench", "--repeats", "1" * 30], "--repeats: expected an integer from 1 to 100"),
])
def test_counts_that_would_run_for_days_are_refused(argv, message):
    status, out, err = run_cli(*argv)
    assert (status, out) == (2, "")
    one_error(err, message)


def test_verify_refuses_zero_cases():
    status, _, err = run_cli("verify", "--cases", "0")
    assert status == 2
    one_error(err, "--cases: expected a positive integer, got '0'")


def test_verify_prints_what_it_checked_when_interrupted(monkeypatch):
    real, calls = verify.addition.add, []

    def add_then_interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(verify.addition, "add", add_then_interrupt)
    status, out, err = run_cli("verify", "--number", "float", "--cases", "100")
    assert status == 130
    assert "interrupted (Ctrl-C) after 4 cases: the counts are of those\npassed 4/4" in out
    assert "  edge cases  4/4\ninterrupted" in out


@pytest.mark.parametrize("argv, message", [
    (["verify", "--seed", "٣"], "--seed: expected an integer, got '٣'"),
    (["verify", "--cases", "1" * 5000], "expected a positive integer, got '1111"),
    (["precision", "--pairs", "٣"], "--pairs: expected an integer from 0 to 1000"),
    (["bench", "--repeats", "٣"], "--repeats: expected an integer from 1 to 100"),
    (["bench", "--scale", "١"], "--scale: expected a number in (0, 100]"),
    (["bench", "--scale", "nan"], "--scale: expected a number in (0, 100]"),
    (["--digits", "٣", "1+2"], "N must be a whole number of digits, 1 to 2000; got '٣'"),
    (["--digits", "0" * 5000 + "3", "1+2"], "N must be a whole number of digits"),
    (["--trace", "--layer", "٣", "1+2"], "--layer: expected a non-negative integer"),
    (["--trace", "--sig", "٣", "1+2"], "--sig takes 1 to 40 significant digits"),
    (["--trace", "--slots", ",", "1+2"], "--slots: no slot named"),
    (["--number", "decimal:-5", "1+2"], "decimal precision P must be a whole number from 1 "
                                        "to 2100, got '-5'"),
    (["verify", "--number", "decimal:99999999"], "got '99999999'"),
    (["--trace", "--pos", "30-22", "1+2"], "reversed range 30-22; write the smaller "
                                           "position first: 22-30"),
    (["--trace", "--pos", "0-999999999", "1+2"], "position 999999999 is past every sequence"),
    (["--trace", "--pos", "9" * 5000, "1+2"], "bad position '9999"),
])
def test_bad_option_values_are_one_line_exit_2(argv, message):
    status, out, err = run_cli(*argv)
    assert (status, out) == (2, "")
    one_error(err, message)
    assert len(err) < 200


@pytest.mark.parametrize("argv, message", [
    (["--digits", "300", "--number", "decimal", "--trace", "--pos", "902", "1+2"],
     "--trace at N = 300 needs about 1.0 GB; use --digits 100 or less"),
    (["--digits", "2000", "--json", "1+2"], "--json at N = 2000 needs about"),
    (["--digits", "150", "--step", "1+2"], "--step at N = 150 needs about"),
    (["precision", "1+2", "--digits", "2000"], "comparing traces at N = 2000 needs about"),
])
def test_tracing_beyond_its_means_is_refused_up_front(argv, message):
    status, out, err = run_cli(*argv)
    assert (status, out) == (2, "")
    one_error(err, message)


# --- trace_json.load: TraceFormatError on anything it did not write -----------------------

@pytest.fixture(scope="module")
def trace_doc(model):
    return trace_json.to_json(run_with_cache(model, "12+34")[1])


def load(text):
    fp = io.BytesIO(text) if isinstance(text, bytes) else io.StringIO(text)
    return trace_json.load(fp)


@pytest.mark.parametrize("text, message", [
    ("[" * 100000, "JSON nested too deeply"),
    (b"\xff\xfe\x00\x81", "not UTF-8"),
    ("[NaN]", "NaN is not JSON"),
    ("1" * 5000, "invalid JSON"),
])
def test_load_refuses_what_is_not_a_trace(text, message):
    with pytest.raises(trace_json.TraceFormatError, match=message):
        load(text)


def _set(path, value):
    def change(doc):
        *inner, last = path
        for key in inner:
            doc = doc[key]
        doc[last] = value
    return change


HOOK = ["trace_points", "hook_embed", "value"]


@pytest.mark.parametrize("change, message", [
    (_set(HOOK + [3, 0], "1/0"), r"bad value '1/0' at .*\[3\]\[0\]: zero denominator"),
    (_set(["prompt_len"], -1), "field 'prompt_len' is -1, expected 1 to 34"),
    (_set(["prompt_len"], True), "field 'prompt_len' should be an int"),
    (_set(["tokens", 0], True), "'tokens' must be token ids"),
    (_set(HOOK + [3], ["0", "1"]), r"\[3\] should be a list of 5 values"),
    (_set(HOOK, []), "should have a row for each of the 34 positions"),
    (_set(["trace_points", "blocks.7.hook_x"], {"labels": [], "value": []}),
     "unknown trace point 'blocks.7.hook_x'"),
    (_set(["trace_points", "blocks.0.attn.hook_pattern", "value", 0, 0, 5], "1"),
     "expected null \\(masked\\)"),
    (_set(["number_system", "exp_digits"], 10 ** 9), "field 'exp_digits' is 1000000000"),
    (_set(["digits"], 3), "a model for N = 3 generates 4"),
])
def test_load_names_what_is_wrong(trace_doc, change, message):
    doc = copy.deepcopy(trace_doc)
    change(doc)
    with pytest.raises(trace_json.TraceFormatError, match=message):
        load(json.dumps(doc))


@pytest.mark.parametrize("argv", [["--number", "float32"], ["--digits", "3"],
                                  ["--digits", "3", "--number", "decimal"]])
def test_every_trace_the_tool_writes_loads_back(argv):
    status, out, _ = run_cli("--json", "1+2", *argv)
    assert status == 0
    cache = load(out)
    digits = 3 if "3" in argv else 10
    assert cache.model.prompt.digits == digits
    assert json.loads(out)["digits"] == digits
    again, written = trace_json.to_json(cache), json.loads(out)
    for doc in (again, written):  # the reason a precision was picked is not kept
        doc["number_system"].pop("describe")
    assert again == written
    if digits == 3:
        with pytest.raises(trace_json.TraceFormatError, match="the trace is of N = 3 digits"):
            trace_json.load(io.StringIO(out), build("published"))


def test_nan_and_inf_load_only_where_the_model_computes_them():
    """float32 overflows at N = 26 (10^28 * 100 > 3.4e38): its trace holds "nan" and "-inf",
    as computed, and loads back; in the exact systems they cannot occur and are refused."""
    status, out, _ = run_cli("--json", "1+2", "--digits", "26", "--number", "float32")
    assert status == 1 and '"nan"' in out and '"-inf"' in out
    cache = load(out)
    assert cache.ns.name == "float32" and cache.model.prompt.digits == 26
    doc = json.loads(out)
    doc["number_system"] = {"name": "decimal", "digits": 60}
    with pytest.raises(trace_json.TraceFormatError, match="bad value .*expected a finite"):
        load(json.dumps(doc))


# --- small things a user trips on ---------------------------------------------------------

def test_help_states_each_commands_own_defaults(capsys):
    assert main(["precision", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "repaired (default)" in text and "Default: float32" in text
    assert "published (default)" not in text and "fraction (default)" not in text
    assert main(["bench", "--help"]) == 0
    text = capsys.readouterr().out
    assert "``" not in text and "Additions per second" in text


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == "tinyadder 0.1.0\n"


def test_program_and_params_take_digits():
    status, out, _ = run_cli("program", "--digits", "3")
    assert status == 0 and "cand0 += relu(scale)*(50000*count)" in out
    status, out, _ = run_cli("params", "--digits", "3")
    assert status == 0
    assert out.splitlines()[1] == "built for N = 3 digits (the count is the same for every N)"
    status, out, _ = run_cli("params", "--json", "--digits", "3")
    assert json.loads(out)["digits"] == 3


@pytest.mark.parametrize("argv", [
    ["params"], ["params", "--model", "repaired"], ["program"],
    ["verify", "--suite", "edges", "--number", "float", "--digits", "3"],
    ["precision", "7650676663+0149460439"],
])
def test_output_lines_fit_80_columns(argv):
    status, out, _ = run_cli(*argv)
    assert status == 0
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("expr", ["1+2+3", "abc", "+5", " ", "-5+3", "١٢+٣", "1+2=3"])
def test_expression_errors_fit_80_columns(expr):
    status, _, err = run_cli(expr)
    assert status == 2 and err.count("\n") == 1
    assert len(err.rstrip("\n")) <= 80 - len("line 1: "), err


def test_a_byte_order_mark_and_invalid_utf8_on_stdin():
    status, out, err = run_cli("-", "--number", "float",
                               stdin=b"\xef\xbb\xbf1+2\n\xff+1\n3+4\n")
    assert status == 2
    assert out == SUM + "0000000003+0000000004=00000000007\n"
    assert err == "tinyadder: error: line 2: invalid UTF-8\n"


def test_invalid_utf8_from_the_real_stdin():
    done = subprocess_run("--number", "float", "-", stdin=b"\xef\xbb\xbf1+2\n\xff+1\n")
    assert (done.returncode, done.stdout) == (2, SUM.encode())
    assert done.stderr == b"tinyadder: error: line 2: invalid UTF-8\n"


def test_an_unquoted_expression_gets_a_hint():
    status, out, err = run_cli("1", "+", "2", "3+4", "--number", "float")
    assert (status, out) == (2, "0000000003+0000000004=00000000007\n")
    assert err == ("tinyadder: error: the shell split '1 + 2' into several arguments; "
                   "quote it: \"1 + 2\"\n")
    status, out, err = run_cli("--json", "1", "+", "2")
    assert (status, out) == (2, "")
    one_error(err, "the shell split '1 + 2' into several arguments; quote it")
    # arguments that do not make one addition together are reported each
    status, out, err = run_cli("1+2", "+3", "--number", "float")
    assert status == 2 and out == SUM
    one_error(err, "missing operand in '+3'")


def test_api_names_a_missing_model():
    with pytest.raises(TypeError, match="expected a model, such as build\\('published'\\), "
                                        "got str"):
        run("published", "fraction", 1, 2)
    with pytest.raises(TypeError, match="expected a model"):
        run_with_cache(None, "1+2")


def test_standard_input_that_cannot_be_read():
    done = subprocess.run([sys.executable, "-c", "import os, runpy; os.close(0); "
                           "runpy.run_module('tinyadder', run_name='__main__')", "-"],
                          cwd=ROOT, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == (b"tinyadder: error: line 1: cannot read standard input: "
                           b"Bad file descriptor\n")
    assert run_cli("-", stdin=b"") == (0, "", "")


def test_explore_to_a_full_device_is_one_line_and_keeps_the_device():
    status, out, err = run_cli("explore", "1+2", "--digits", "1", "--number", "float",
                               "-o", "/dev/full")
    assert (status, out) == (2, "")
    one_error(err, "cannot write /dev/full: No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # not removed as a half-written page
