"""Issue 10, walked item by item (and the siblings found on other paths): every bad input gets
a clear one-line error (or the right answer) with the documented exit status, no traceback;
every good line of a batch is still answered; nothing runs away in time or memory."""

import contextlib
import copy
import io
import json
import os
import select
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cli_runs import cli_once
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


RUN_EACH = """import io, json, sys
from tinyadder.cli import main
done = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    done.append((main(argv, out, err, io.StringIO()), out.getvalue(), err.getvalue()))
print(json.dumps(done))
"""


def cli_in_one_child(runs, **options):
    """[(status, stdout, stderr)] of cli.main over each command line of ``runs``, one after
    the other in one child process, stopped after 120 s (``options``: subprocess.run's)."""
    done = subprocess.run([sys.executable, "-c", RUN_EACH, json.dumps(runs)], cwd=ROOT,
                          capture_output=True, timeout=120, **options)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return json.loads(done.stdout)


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

FULL = "tinyadder: error: cannot write standard output: No space left on device\n"


@pytest.mark.parametrize("argv", [["12+34"], ["--help"], ["verify", "--help"]])
def test_a_full_device_is_one_line_and_exit_2(argv):
    """The process: what is still buffered when the command ends is flushed by the entry point
    (argparse's --help swallows a failed write of its own)."""
    with open("/dev/full", "w") as full:
        done = subprocess_run(*argv, stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode() .endswith(FULL)
    assert b"Traceback" not in done.stderr and b"Exception ignored" not in done.stderr


@pytest.mark.parametrize("argv", [
    ["--json", "12+34"], ["--trace", "--pos", "22", "12+34"], ["program"],
    ["verify", "--suite", "edges", "--number", "float"], ["params"],
    ["precision", "--digits", "2", "--pairs", "0", "--scan", "", "--systems", "float"],
    ["bench", "--long", "1", "--number", "float"],
])
def test_each_command_to_a_full_device_is_one_line_and_exit_2(argv):
    """Each command writing to /dev/full (a buffered file of the device, as standard output
    is when it is not a terminal), in process."""
    err = io.StringIO()
    full = open("/dev/full", "w")
    try:
        status = main(argv, out=full, err=err)
    finally:
        with contextlib.suppress(OSError):
            full.close()  # what the command could not write may still be buffered
    assert status == 2 and full.closed
    assert err.getvalue().endswith(FULL) and err.getvalue().count("error") == 1
    assert "Traceback" not in err.getvalue()


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
     "--trace at N = 300 in decimal:330 needs about 1.7 GB, over the 1.0 GB limit; use "
     "--digits 240 or less"),
    (["--digits", "2000", "--json", "1+2"], "--json at N = 2000 in fraction needs about"),
    (["--digits", "150", "--step", "1+2"], "--step at N = 150 in fraction needs about"),
    (["precision", "1+2", "--digits", "2000"], "comparing traces at N = 2000 in fraction and "
                                               "float32 needs about"),
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
    (_set(["digits"], 3), "'tokens': 34 tokens, more than the 13 of a whole sequence"),
    (_set(["prompt_len"], 20), "14 generated tokens after a prompt of 20; a model for N = 10 "
                               "generates 0 there"),
])
def test_load_names_what_is_wrong(trace_doc, change, message):
    doc = copy.deepcopy(trace_doc)
    change(doc)
    with pytest.raises(trace_json.TraceFormatError, match=message):
        load(json.dumps(doc))


@pytest.mark.parametrize("changes, message", [
    ({33: 7}, "token 33 is '7', but the recorded logits at position 32 pick '6'"),
    ({23: 1}, "token 23 is '1', but the recorded logits at position 22 pick '0'"),
    ({10: 13}, "'tokens': token 10 is '\\+' where a digit of a belongs"),
])
def test_load_checks_the_tokens_against_the_logits(trace_doc, changes, message):
    """A trace whose tokens say 12+34=47 while its own logits say 6 is not a trace; nor one
    whose text is not its tokens'."""
    doc = copy.deepcopy(trace_doc)
    for pos, token in changes.items():
        doc["tokens"][pos] = token
    doc["text"] = "".join(doc["vocab"][t] for t in doc["tokens"])
    with pytest.raises(trace_json.TraceFormatError, match=message):
        load(json.dumps(doc))
    with pytest.raises(trace_json.TraceFormatError, match="'text' is not the text of 'tokens'"):
        load(json.dumps(dict(trace_doc, text=doc["text"])))


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
    ["precision", "7650676663+0149460439", "--number", "float32"],  # docs/precision.md's
])
def test_output_lines_fit_80_columns(argv):
    status, out, _ = cli_once(*argv)
    assert status == (1 if argv[0] == "precision" else 0)  # float32's sum there is wrong
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


# --- issue 24: operands past 4300 digits, certificates, streams, limits --------------------

LONG = "1" * 4301 + "+2"  # past int()'s 4300 digits, and far past N


@pytest.mark.parametrize("argv, answered", [
    (["1+2", LONG, "3+4", "--number", "float"], SUM + "0000000003+0000000004=00000000007\n"),
    (["--json", LONG], ""),
    (["--digits", "2000", "--number", "float", LONG], ""),
])
def test_an_operand_past_4300_digits_loses_nothing_else(argv, answered):
    status, out, err = run_cli(*argv)
    assert (status, out) == (2, answered)
    one_error(err, "operand 111111111111111111111111... has more than")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A certificate of the repaired model at N = 1 (positions: 0 <bos>, 1 a, 2 '+', 3 b,
    4 '=', 5 and 6 the sum), as JSON data."""
    path = tmp_path_factory.mktemp("cert") / "repaired1.json"
    assert main(["prove", "--model", "repaired", "--digits", "1",
                 "--certificate", str(path)], out=io.StringIO(), err=io.StringIO()) == 0
    return json.loads(path.read_text())


def _tampered(data, path, value=None, text=None):
    """Write ``data`` with ``path`` set to ``value`` (or ``text`` as given) to a file."""
    doc = copy.deepcopy(data)
    if path:
        _set(path, value)(doc)
    return text if text is not None else json.dumps(doc)


def check_file(tmp_path, text):
    path = tmp_path / "cert.json"
    path.write_text(text)
    return run_cli("check-certificate", str(path))


@pytest.mark.parametrize("path, value, message", [
    (["decisions", 1, "L", "0"], "0", "decisions[1].L has position '0', which holds no digit"),
    (["decisions", 1, "L", "2"], "0", "decisions[1].L has position '2', which holds no digit"),
    (["decisions", 1, "L", "4"], "0", "decisions[1].L has position '4', which holds no digit"),
    (["exp_digits"], 0, "exp_digits is 0; expected 41, the digits the fraction system rounds"),
    (["exp_digits"], -1, "exp_digits is -1; expected 41"),
    (["decisions", 0, "gain"], "1e1000000000", "decisions[0].gain is '1e1000000000'; expected "
                                               "an exact rational"),
    (["decisions", 0, "gain"], 1.5, "decisions[0].gain is 1.5; expected an exact rational"),
    (["decisions", 0, "guard"], "-1/2", "decisions[0].guard is -1/2; it must be at least 0"),
    (["decisions", 0, "t"], True, "decisions[0].t is True; expected 0"),
    (["decisions", 0, "marks"], "0123456789", "decisions[0].marks should be a list of 10"),
    (["decisions", 1, "tilts"], {"x": []}, "decisions[1].tilts should have the keys 0, 1,"),
    (["digits"], 41, "digits is 41; expected an integer from 1 to 40"),
    (["variant"], ["published"], "variant is \"['published']\"; expected published or"),
])
def test_a_tampered_certificate_field_is_one_line_exit_2(certificate, tmp_path, path, value,
                                                         message):
    status, out, err = check_file(tmp_path, _tampered(certificate, path, value))
    assert (status, out) == (2, "")
    one_error(err, message)


@pytest.mark.parametrize("literal, message", [
    ('"gain": Infinity', "Infinity is not JSON"),
    ('"digits": Infinity', "Infinity is not JSON"),
    ('"digits": ' + "1" * 5000, "an integer literal of 5000 characters"),
])
def test_a_certificate_with_numbers_json_should_not_hold(certificate, tmp_path, literal,
                                                          message):
    text = json.dumps(certificate)
    key = literal.split(":")[0]
    start = text.index(key)
    end = text.index(",", start)
    status, out, err = check_file(tmp_path, text[:start] + literal + text[end:])
    assert (status, out) == (2, "")
    one_error(err, message)


def test_a_deeply_nested_certificate(tmp_path):
    text = '{"format": "tinyadder-proof-1", "x": ' + "[" * 100000 + "]" * 100000 + "}"
    status, out, err = check_file(tmp_path, text)
    assert (status, out) == (2, "")
    one_error(err, "JSON nested too deeply")


STALLS = [(["exp_digits"], 10000), (["exp_digits"], 100000),
          (["decisions", 0, "gain"], "1e1000000000")]


@pytest.fixture(scope="module")
def stall_runs(certificate, tmp_path_factory):
    """check-certificate of the certificate with each of STALLS's changes, in one child."""
    where, runs = tmp_path_factory.mktemp("stalls"), []
    for k, (path, value) in enumerate(STALLS):
        (where / f"cert{k}.json").write_text(_tampered(certificate, path, value))
        runs.append(["check-certificate", str(where / f"cert{k}.json")])
    return cli_in_one_child(runs)


@pytest.mark.parametrize("index", range(len(STALLS)), ids=[str(v) for _, v in STALLS])
def test_no_number_in_a_certificate_stalls_the_checker(stall_runs, index):
    """Nothing the file says sets a precision or a size: refused at once (the unbounded
    checker spent 66 s at exp_digits 10000, hours at 100000; the child is stopped after
    120 s)."""
    status, out, err = stall_runs[index]
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and ": error: " in err


def test_a_certificate_too_large_to_be_one_is_not_read(tmp_path):
    from tinyadder.proof.closedform_check import MAX_BYTES
    path = tmp_path / "big.json"
    with open(path, "w") as f:
        f.write('{"format": "tinyadder-proof-1", "x": "')
        f.write("0" * MAX_BYTES)
        f.write('"}')
    status, out, err = run_cli("check-certificate", str(path))
    assert (status, out) == (2, "")
    one_error(err, f"is larger than {MAX_BYTES:,} bytes")


def test_a_zero_guard_does_not_cover_the_rounded_exponentials(certificate, tmp_path):
    doc = copy.deepcopy(certificate)
    for d in doc["decisions"]:
        d["guard"] = "0"
    status, out, err = check_file(tmp_path, json.dumps(doc))
    assert (status, err) == (1, "")
    assert out == ("certificate invalid: decision 0: guard 0, but the model's exponentials "
                   "are rounded: the real-number model is not covered\n")
    status, out, err = check_file(tmp_path, json.dumps(certificate))
    assert (status, err) == (0, "") and out.startswith("certificate valid: 'repaired' model (")


@pytest.mark.parametrize("digits", [1, 3, 10, 40])
def test_the_checker_rounds_exponentials_as_the_fraction_system(digits):
    from tinyadder.proof.closedform_check import exp_digits_of
    from tinyadder.numbers import FractionSystem, for_model
    model = build("repaired", digits)
    assert exp_digits_of(model) == for_model(FractionSystem(), model).exp_digits == digits + 40


def test_a_closed_standard_output_is_one_line_exit_2():
    assert _shell("exec TINYADDER 1+2 >&-") == (
        2, "", "tinyadder: error: cannot write standard output: it is closed\n")


def test_figure_to_a_full_device_is_one_line_and_keeps_the_device():
    status, out, err = run_cli("figure", "flaw", "1+2", "--digits", "1", "--number", "float",
                               "-o", "/dev/full")
    assert (status, out) == (2, "")
    one_error(err, "tinyadder figure: error: cannot write /dev/full: No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_failed_page_is_removed_only_if_this_run_created_it(tmp_path, monkeypatch):
    """A page that could not be written whole is removed if the run created it; a file that
    was there before is left (truncated: it was opened for writing), never removed."""
    from tinyadder.cli import explore
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(explore, "page", fail)
    new, old = tmp_path / "new.html", tmp_path / "old.html"
    old.write_text("the user's file")
    for path in (new, old):
        status, _, err = run_cli("explore", "1+2", "--digits", "1", "--number", "float",
                                 "-o", str(path))
        assert status == 2
        one_error(err, f"cannot write {path}: No space left on device")
    assert not new.exists() and old.exists()


def _limited(limit_bytes):
    """A preexec_fn capping a child's address space (a runaway fails fast, not the box)."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    return cap


SIZE_FIRST = [
    (["explain", "--digits", "2000", "--number", "float", "1+2"],
     "tinyadder: error: explain at N = 2000 in float needs about"),
    (["figure", "flaw", "--digits", "2000", "--number", "float", "1+2", "-o", "@OUT@"],
     "tinyadder figure: error: figure at N = 2000 in float needs about"),
    (["explore", "--digits", "100", "1+2", "-o", "@OUT@"],
     "tinyadder explore: error: explore at N = 100 in fraction needs about"),
    (["precision", "1+2", "--digits", "100"],
     "tinyadder precision: error: comparing traces at N = 100 in fraction and float32"),
    (["--json", "--digits", "100", "1+2"], "tinyadder: error: --json at N = 100 in fraction"),
]


@pytest.fixture(scope="module")
def size_first_runs(tmp_path_factory):
    """(the written file's path, [(status, stdout, stderr)]) of SIZE_FIRST's command lines,
    run in one child whose memory is capped at 1 GB."""
    path = tmp_path_factory.mktemp("size") / "out"
    runs = [[str(path) if a == "@OUT@" else a for a in argv] for argv, _ in SIZE_FIRST]
    return path, cli_in_one_child(runs, preexec_fn=_limited(10 ** 9))


@pytest.mark.parametrize("index", range(len(SIZE_FIRST)), ids=[a[0] for a, _ in SIZE_FIRST])
def test_every_command_that_traces_checks_its_size_first(index, size_first_runs):
    """Refused in a second, in a child whose memory is capped at 1 GB (the commands without the
    check filled 3 GB, or ran 143 s)."""
    path, runs = size_first_runs
    status, out, err = runs[index]
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(SIZE_FIRST[index][1])
    assert "over the 1.0 GB limit; use --digits " in err
    assert not path.exists()


def test_run_with_cache_checks_its_size_first():
    from tinyadder.cache import TRACE_BUDGET, TraceTooLarge, trace_bytes
    model = build("published", 2000)
    assert trace_bytes(model, number_system("float")) > TRACE_BUDGET
    with pytest.raises(TraceTooLarge, match="a trace of tinyadder36-published at N = 2000 in "
                                            "float would take about 13.9 GB, over the 1.0 GB"):
        run_with_cache(model, "1+2", ns="float")


@pytest.mark.slow
def test_run_with_cache_keeps_only_the_points_asked_for_under_the_size_limit():
    model = build("published", 600)  # 1.3 GB whole: only the embedding is kept
    _, cache = run_with_cache(model, "1+2", ns="float", names="hook_embed")
    assert list(cache) == ["hook_embed"] and len(cache["hook_embed"]) == 3 * 600 + 4


def test_an_overlong_stdin_line_is_refused_and_the_rest_answered():
    from tinyadder.cli.options import MAX_LINE
    stdin = "1+2\n" + "0" * MAX_LINE + "1+1\n3+4\n" + "0" * MAX_LINE + "\n"
    status, out, err = run_cli("-", "--number", "float", stdin=stdin)
    assert (status, out) == (2, SUM + "0000000003+0000000004=00000000007\n")
    assert err == (f"tinyadder: error: line 2: longer than {MAX_LINE:,} characters; an "
                   f"expression is two operands of at most N digits\n"
                   f"tinyadder: error: line 4: not an addition: '{'0' * 24}'... ({MAX_LINE} "
                   f"characters); use A+B, e.g. 12+34\n")  # MAX_LINE itself is read


CAP = 200 * 2 ** 20  # the children's address space (a run needs under 100 MB)


@pytest.mark.parametrize("argv, status, stderr", [
    (["-"], 2, b"tinyadder: error: line 1: longer than 1,048,576 characters; an expression is "
               b"two operands of at most N digits\n"),
    (["--step", "1+2"], 0, b""),
])
def test_a_line_longer_than_the_memory_cap_keeps_memory_bounded(argv, status, stderr,
                                                                 tmp_path):
    """A line of zeros with no newline, longer than the child's address space (capped at
    200 MB): read and dropped in bounded chunks to its end (reading it whole runs out of
    memory). The line never ending (/dev/zero) is test_endless_stdin_..., under slow."""
    zeros = tmp_path / "zeros"
    with open(zeros, "wb") as f:
        f.truncate(CAP + 2 ** 25)  # sparse: no disk is written
    with open(zeros, "rb") as line:
        done = subprocess.run([sys.executable, "-m", "tinyadder", "--number", "float", *argv],
                              cwd=ROOT, stdin=line, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=120, preexec_fn=_limited(CAP))
    assert (done.returncode, done.stderr) == (status, stderr)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["-"], ["--step", "1+2"]])
def test_endless_stdin_without_a_newline_keeps_memory_bounded(argv):
    """``- < /dev/zero`` (a line that never ends): refused once, then read and dropped in
    bounded chunks, in a child capped at 200 MB (reading it whole ran out of memory)."""
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.Popen([sys.executable, "-m", "tinyadder", "--number", "float", *argv],
                                cwd=ROOT, stdin=zero, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, preexec_fn=_limited(CAP))
    try:
        if argv == ["-"]:
            assert select.select([proc.stderr], [], [], 60)[0], "no error line in 60 s"
            line = proc.stderr.readline()
            assert line.startswith(b"tinyadder: error: line 1: longer than 1,048,576 ")
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=5)  # still reading, within its 200 MB
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()


def _shell(command):
    """(status, stdout, stderr) of a bash command line; TINYADDER runs this checkout's."""
    done = subprocess.run(["bash", "-c", command.replace(
        "TINYADDER", f'"{sys.executable}" -m tinyadder')], cwd=ROOT, capture_output=True,
        timeout=120)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


FLAW = "5193798811+1806201129"


def test_a_closed_standard_error_leaves_standard_output_clean():
    status, out, _ = _shell(f"exec TINYADDER --json --number float {FLAW} 2>&-")
    assert status == 1
    assert json.loads(out)["text"] == "<bos>" + FLAW + "=07000000000"


def test_a_full_standard_error_changes_nothing_but_the_lost_messages():
    batch = f"1+2 abc {FLAW} 3+4"
    full = _shell(f"exec TINYADDER --number float {batch} 2>/dev/full")
    piped = _shell(f"exec TINYADDER --number float {batch}")
    assert full[:2] == piped[:2] == (2, SUM + f"{FLAW}=07000000000\n"
                                             "0000000003+0000000004=00000000007\n")
    assert full[2] == ""
    assert _shell("exec TINYADDER abc 2>/dev/full")[:2] == (2, "")


def test_precision_warns_and_exits_1_on_a_wrong_sum():
    """The runs are docs/precision.md's (computed once for both)."""
    status, out, err = cli_once("precision", "7650676663+0149460439", "--number", "float32")
    assert status == 1
    assert "float32: 7650676663+0149460439=07800136314\n" in out
    assert err == ("tinyadder: warning: the repaired model's sum 7800136314 (float32) is "
                   "wrong: 7650676663 + 149460439 = 7800137102\n")
    assert cli_once("precision", "7650676663+0149460439", "--number", "float64")[0] == 0


@pytest.mark.slow
def test_bench_warns_when_a_sum_is_wrong():
    status, out, err = run_cli("bench", "--number", "float32", "--scale", "0.01",
                               "--repeats", "1")
    assert status == 1 and "WRONG" in out
    assert err.startswith("tinyadder: warning: the published model's sum is wrong on ")
    assert "of 10 cases in float32, cache on (marked WRONG above)\n" in err


@pytest.mark.parametrize("argv", [
    ["explore", "1", "+", "2"], ["figure", "flaw", "1", "+", "2"], ["explain", "1", "+", "2"],
    ["precision", "1", "+", "2"], ["explain", "1+", "2"],
])
def test_subcommands_give_the_quoting_hint(argv):
    status, out, err = run_cli(*argv)
    assert (status, out) == (2, "")
    text = " ".join(argv[-3:]) if argv[-2] == "+" else "1+ 2"
    one_error(err, f"error: the shell split '{text}' into several arguments; quote it: "
                   f"\"{text}\"")


def tie_at(pair, function):
    """``function`` (model, ns, a, b), but a tie no precision settles (Undecided) at ``pair``."""
    from tinyadder.numbers import Undecided

    def tie(model, ns, a, b):
        if (a, b) == pair:
            raise Undecided("no decision certified with e^x rounded to up to 6400 digits")
        return function(model, ns, a, b)
    return tie


def test_an_answer_no_precision_certifies_is_a_one_line_warning_and_the_batch_goes_on(
        monkeypatch):
    """A real tie (decoding refined to its limit and still open) is the model's, not the
    input's: one warning line, exit status 1, the other expressions answered."""
    from tinyadder import addition
    monkeypatch.setattr(addition, "run", tie_at((3, 4), addition.run))
    status, out, err = run_cli("1+2", "3+4", "5+6")
    assert status == 1
    assert out == "0000000001+0000000002=00000000003\n0000000005+0000000006=00000000011\n"
    assert err == ("tinyadder: warning: no answer certified for 3+4: no decision certified "
                   "with e^x rounded to up to 6400 digits\n")


def test_a_wrong_float_line_whose_exact_check_ties_is_a_one_line_warning(monkeypatch):
    """The warning on a wrong float32 line asks the real-number model; a tie there is said in
    the warning's hint, not raised: one line each, exit status 1, the batch going on."""
    from tinyadder import addition
    monkeypatch.setattr(addition, "add", tie_at((7650676663, 149460439), addition.add))
    status, out, err = run_cli("--number", "float32", "7650676663+0149460439",
                               "1234567890+9876543210")
    assert status == 1
    assert out == ("7650676663+0149460439=07800136314\n"
                   "1234567890+9876543210=11111110973\n")
    assert err.splitlines() == [
        "tinyadder: warning: the published model's sum 7800136314 is wrong: 7650676663 + "
        "149460439 = 7800137102 (the real-number model certifies no answer here either: no "
        "decision certified with e^x rounded to up to 6400 digits)",
        "tinyadder: warning: the published model's sum 11111110973 is wrong: 1234567890 + "
        "9876543210 = 11111111100 (a rounding error of float32: fraction is right; see "
        "'tinyadder precision')"]
