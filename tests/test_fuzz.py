"""A small fuzzer (standard library, fixed seeds, a few seconds) over the command line, the
trace loader, the certificate checker, the Python API (operands and token-id prompts), the
standard streams (closed, full) and the size limits. It asserts what issues 10 and 24 promise
whatever the input: no traceback, an exit status in {0, 1, 2}, one error line per bad input,
every good line of a batch answered, in order, with Python's sum (or the model's warned-about
wrong one); no forged certificate accepted; standard output the same whatever happens to
standard error; nothing refused that fits, nothing run that does not."""

import copy
from dataclasses import replace
import io
import json
import random
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tinyadder import add, build, number_system, run, run_with_cache
from tinyadder.analysis import trace_json
from tinyadder.cli import main

ROOT = Path(__file__).resolve().parent.parent
# Characters that make any expression bad wherever they go (no whitespace, digit 0-9 or '+').
POISON = list("xX=*/-.,;:_'\"()[]{}<>|&!?#$%^~`@\\") + ["\x00", "٣", "１", "é", "\u200b"]


def good_line(rng, digits=10):
    a, b = rng.randrange(10 ** rng.randint(1, digits)), rng.randrange(10 ** digits)
    pad = "0" * rng.choice([0, 0, 1, 5000])  # past int()'s 4300 digits, still valid
    space = lambda: rng.choice(["", " ", "  ", "\t"])  # noqa: E731
    return (a, b), f"{space()}{pad}{a}{space()}+{space()}{b}{space()}"


def bad_line(rng):
    """Bytes that are not an addition: a good line with poison, invalid UTF-8 or junk."""
    _, text = good_line(rng)
    kind = rng.randrange(4)
    if kind == 0:
        at = rng.randrange(len(text) + 1)
        return (text[:at] + rng.choice(POISON) + text[at:]).encode("utf-8")
    if kind == 1:
        return text.encode() + b"+" + text.encode()
    if kind == 2:
        return bytes(rng.randrange(128, 256) for _ in range(rng.randint(1, 8))) + text.encode()
    return b"x" * rng.choice([1, 100, 100_000])


def run_cli(argv, stdin=b""):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err,
                  stdin=io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8",
                                         errors="surrogateescape"))
    return status, out.getvalue(), err.getvalue()


def check_batch(status, out, err, pairs, n_bad, digits=10):
    assert status in (0, 1, 2) and "Traceback" not in err
    lines = out.splitlines()
    assert len(lines) == len(pairs)
    for line, (a, b) in zip(lines, pairs):
        prompt, _, answer = line.partition("=")
        assert prompt == f"{a:0{digits}d}+{b:0{digits}d}"
        assert int(answer) == a + b or f"is wrong: {a} + {b} = {a + b}" in err
    errors = [e for e in err.splitlines() if ": error: " in e]
    assert len(errors) == n_bad and all(len(e) < 160 for e in errors)
    assert status == (2 if n_bad else max([0] + [1 for e in err.splitlines() if "warning" in e]))


def batch(rng, n):
    """(stdin bytes, good pairs in order, number of bad lines)."""
    lines, pairs, bad = [], [], 0
    for _ in range(n):
        if rng.random() < 0.5:
            pair, text = good_line(rng)
            pairs.append(pair)
            lines.append(text.encode())
        else:
            lines.append(bad_line(rng))
            bad += 1
    stdin = b"\n".join(lines) + b"\n"
    if rng.random() < 0.3:
        stdin = b"\xef\xbb\xbf" + stdin  # a byte order mark opening the first line
    return stdin, pairs, bad


@pytest.mark.parametrize("seed", range(8))
def test_batches_from_stdin(seed):
    rng = random.Random(seed)
    stdin, pairs, bad = batch(rng, 12)
    check_batch(*run_cli(["--number", "float", "-"], stdin), pairs, bad)


# option -> (good values, bad values); a bad value is drawn one time in six
OPTIONS = {
    "--number": (["float", "decimal:20", "float32", "decimal", "float64"],
                 ["decimal:0", "decimal:-5", "decimal:٣", "double", "decimal:99999999", ""]),
    "--model": (["published", "repaired"], ["fixed", ""]),
    "--digits": (["1", "2", "3"], ["0", "٣", "-1", "5000", "x", "0" * 5000 + "2"]),
    "--pos": (["0", "3-5", "2,4-6", "8"], ["5-3", "0-999999999", "x", "", "9" * 40, "99"]),
    "--slots": (["scale", "count,digit", "cand0"], ["count,nosuch", ",", ""]),
    "--layer": (["0", "1"], ["7", "-1", "٣"]),
    "--sig": (["1", "12", "40"], ["41", "0", "٣"]),
}
MODES = ["--trace", "--json", "--step"]
FILTERS = ["--check", "--exact", "--pos", "--slots", "--layer", "--sig"]


def seeds(default, slow):
    """Seeds 0 .. default - 1, and up to slow - 1 under -m slow."""
    return [*range(default), *(pytest.param(s, marks=pytest.mark.slow)
                               for s in range(default, slow))]


@pytest.mark.parametrize("seed", seeds(30, 60))
def test_random_option_combinations(seed):
    """30 random command lines by default; -m slow adds 30."""
    rng = random.Random(1000 + seed)
    argv = []
    mode = rng.choice(MODES + [None, None])
    options = ["--number", "--model", "--digits"] + (FILTERS if mode else [])
    for option in rng.sample(options, rng.randint(0, min(4, len(options)))):
        if option.startswith("--") and option not in OPTIONS:
            argv.append(option)
            continue
        good, bad = OPTIONS[option]
        argv += [option, rng.choice(bad if rng.random() < 1 / 6 else good)]
    if mode:
        argv.append(mode)
    if rng.random() < 0.05:
        argv.append("--version")
    if "--digits" not in argv:
        argv += ["--digits", "2"]  # keep traces small and fast
    if "--number" not in argv:
        argv += ["--number", "float"]
    digits = int(argv[argv.index("--digits") + 1]) if argv[argv.index("--digits") + 1] in (
        "1", "2", "3") else 2
    exprs = [good_line(rng, digits)[1].replace("0" * 5000, "")
             for _ in range(1 if mode in ("--json", "--step") else rng.randint(1, 3))]
    if rng.random() < 0.2:
        exprs.append(bad_line(rng).decode("utf-8", "replace")[:200])
    rng.shuffle(exprs)
    status, out, err = run_cli(argv + exprs, stdin=b"n\nn\nq\n")
    assert status in (0, 1, 2), (argv, exprs)
    assert "Traceback" not in err
    assert all(line.startswith("tinyadder") for line in err.splitlines()), err
    if "--version" in argv and status == 0:
        assert out == "tinyadder 0.1.0\n"
        return
    if status in (0, 1):
        assert out
    if mode == "--json" and status in (0, 1):
        assert trace_json.load(io.StringIO(out)).text.startswith("<bos>")


SUBCOMMANDS = {
    "verify": [["--suite", "edges"], ["--suite", "carries"], ["--cases", "1"], ["--cases", "0"],
               ["--seed", "7"], ["--seed", "x"], ["--digits", "2"], ["--digits", "٣"],
               ["--number", "float"], ["--model", "repaired"], ["--bogus"]],
    "params": [["--json"], ["--digits", "3"], ["--model", "repaired"], ["--digits", ""]],
    "program": [["--digits", "2"], ["--model", "repaired"], ["--model", "x" * 5000]],
    "precision": [["--digits", "1,2"], ["--digits", "1,x"], ["--systems", "float"],
                  ["--systems", ""], ["--systems", "float,nosuch"], ["--pairs", "0"],
                  ["--pairs", "-1"], ["--scan", ""], ["--number", "float"], ["3+4"],
                  ["1+2+3"]],
}


OUTPUT = "@OUT@"  # replaced by a file in the test's temporary folder
GARBAGE = "@GARBAGE@"  # a file of random bytes there
SUBCOMMANDS.update({
    "explain": [["1+2"], ["1 + 2"], ["12+345"], ["--model", "repaired"], ["--digits", "٣"],
                ["--number", "float32"], ["x" * 5000]],
    "explore": [["1+2"], ["99+1"], ["--model", "repaired"], ["--number", "decimal:12"],
                ["--digits", "0"], ["-o", "/nonexistent/dir/page.html"]],
    "figure": [["attention"], ["ruler"], ["flaw"], ["nosuch"], ["1+2"], ["--pos", "5"],
               ["--pos", "x"], ["--softmax"], ["--stage", "L9.mlp"]],
    "prove": [["--model", "repaired"], ["--digits", "x"], ["--certificate", OUTPUT],
              ["--bogus"]],
    "census": [["--model", "repaired"], ["--digits", "٣"], ["--bogus"]],
    "hunt": [["--model", "zcbtrak-6"], ["--number", "float32"], ["--seed", "x"],
             ["--keep", "0"], ["--seconds", "1"], ["--bogus"]],
    "check-certificate": [[OUTPUT], [GARBAGE], ["/nonexistent/cert.json"], ["--bogus"]],
    "export": [["published"], ["repaired"], [GARBAGE], ["nosuch"], ["--digits", "2"],
               ["--digits", "0"], ["-o", OUTPUT], ["-o", "/nonexistent/dir/m.json"]],
})
for name in ("verify", "params", "program", "prove", "census", "explain", "hunt"):
    SUBCOMMANDS[name].append(["--model", GARBAGE])
# bounded work: few cases, small N, no long scans; files go to the temporary folder
BOUNDED = {"verify": ["--suite", "edges", "--digits", "2", "--number", "float"],
           "precision": ["--digits", "2", "--scan", "", "--pairs", "0", "--systems", "float"],
           "explain": ["--digits", "2", "--number", "float"],
           "explore": ["--digits", "2", "--number", "float", "-o", OUTPUT],
           "figure": ["--digits", "2", "-o", OUTPUT],
           "prove": ["--digits", "2"], "census": ["--digits", "2"], "hunt": ["--evals", "3"]}


@pytest.mark.parametrize("seed", range(36))
def test_random_subcommand_options(seed, tmp_path):
    rng = random.Random(2000 + seed)
    name = sorted(SUBCOMMANDS)[seed % len(SUBCOMMANDS)]
    argv = [name]
    for option in rng.sample(SUBCOMMANDS[name], rng.randint(0, 3)):
        argv += option
    argv += BOUNDED.get(name, [])
    (tmp_path / "garbage").write_bytes(bytes(rng.randrange(256) for _ in range(200)))
    files = {OUTPUT: str(tmp_path / "out"), GARBAGE: str(tmp_path / "garbage")}
    argv = [files.get(a, a) for a in argv]
    status, out, err = run_cli(argv)
    assert status in (0, 1, 2), argv
    assert "Traceback" not in err
    errors = [e for e in err.splitlines() if ": error: " in e]
    assert (status == 2) == bool(errors) and len(errors) <= 1, (argv, err)


@pytest.fixture(scope="module")
def small_trace():
    return trace_json.to_json(run_with_cache(build("repaired", 1), "3+4", ns="float")[1])


def mutate(rng, doc):
    """One random change somewhere in the document."""
    node, path = doc, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(sorted(node) if isinstance(node, dict) else range(len(node)))
        path.append(key)
        node = node[key]
    replacement = rng.choice([None, True, -1, 0, 10 ** 30, 1.5, "", "x", "1/0", "nan", "inf",
                              "-0", [], {}, ["1"], "1" * 5000])
    if not path:
        return replacement
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    return doc


@pytest.mark.parametrize("seed", seeds(30, 60))
def test_loader_takes_mutated_traces(small_trace, seed):
    """30 mutated traces by default; -m slow adds 30."""
    rng = random.Random(3000 + seed)
    doc = mutate(rng, copy.deepcopy(small_trace))
    text = json.dumps(doc)
    if rng.random() < 0.2:
        text = text[:rng.randrange(len(text))]  # cut short
    try:
        trace_json.load(io.StringIO(text))
    except trace_json.TraceFormatError as err:
        assert str(err).startswith("not a tinyadder trace: ") and len(str(err)) < 400


@pytest.mark.parametrize("seed", range(20))
def test_loader_takes_random_bytes(seed):
    rng = random.Random(4000 + seed)
    data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    with pytest.raises(trace_json.TraceFormatError):
        trace_json.load(io.BytesIO(data))


def test_api_operands():
    rng = random.Random(5)
    model, ns = build("published", 3), number_system("float")
    values = [0, 7, 999, 1000, -1, 10 ** 5000, 2.0, True, "12", None, [1]]
    for _ in range(40):
        a, b = rng.choice(values), rng.choice(values)
        try:
            got = add(model, ns, a, b)
        except (TypeError, ValueError):
            ok = all(type(x) is int and 0 <= x < 1000 for x in (a, b))
            assert not ok, (a, b)
        else:
            assert got == a + b


@pytest.mark.parametrize("seed", seeds(1, 3))
def test_real_process_stdin_stdout_and_status(seed):
    """Runs as a user makes them: real standard streams and exit status. One batch by default
    (test_batches_from_stdin takes eight in process); -m slow adds two."""
    rng = random.Random(6000 + seed)
    stdin, pairs, bad = batch(rng, 8)
    done = subprocess.run([sys.executable, "-m", "tinyadder", "--number", "float", "-"],
                          cwd=ROOT, input=stdin, capture_output=True, timeout=120)
    check_batch(done.returncode, done.stdout.decode(), done.stderr.decode(), pairs, bad)


# --- certificates -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_certificate(tmp_path_factory):
    path = tmp_path_factory.mktemp("cert") / "repaired1.json"
    assert main(["prove", "--model", "repaired", "--digits", "1", "--certificate", str(path)],
                out=io.StringIO(), err=io.StringIO()) == 0
    return json.loads(path.read_text())


HOSTILE = [None, True, -1, 0, 41, 10 ** 30, 1.5, "", "x", "1/0", "-0", "0", "1e1000000000",
           "1" * 5000, "1/" + "3" * 5000, [], {}, ["1"], {"0": "1"}, [[[[]]]]]
TEXT_ATTACKS = [lambda t: t[:len(t) // 2], lambda t: t.replace('"1"', "Infinity", 1),
                lambda t: t.replace('"digits": 1', '"digits": ' + "1" * 5000),
                lambda t: '{"format": "tinyadder-proof-1", "x": ' + "[" * 50000 + "}",
                lambda t: t.replace('"', "'", 3)]


@pytest.mark.parametrize("seed", seeds(12, 24))
def test_checker_takes_mutated_certificates(small_certificate, seed, tmp_path):
    """Whatever is changed: a one-line verdict or error, exit 0, 1 or 2; and a certificate that
    still checks says what the original says (nothing forged is accepted). 12 mutations by
    default; -m slow adds 12."""
    from tinyadder.proof import closedform_check as checker
    rng = random.Random(7000 + seed)
    doc = copy.deepcopy(small_certificate)
    node, path = doc, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.85:
        key = rng.choice(sorted(node) if isinstance(node, dict) else range(len(node)))
        path.append(key)
        node = node[key]
    if path:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = rng.choice(HOSTILE)
    text = json.dumps(doc)
    if rng.random() < 0.25:
        text = rng.choice(TEXT_ATTACKS)(text)
    (tmp_path / "c.json").write_text(text)
    status, out, err = run_cli(["check-certificate", str(tmp_path / "c.json")])
    assert "Traceback" not in err + out
    if status == 0:  # the name is a label (printed quoted, beside the model text's hash)
        assert replace(checker.parse(json.loads(text)), variant="") == replace(
            checker.parse(small_certificate), variant="")
    elif status == 1:
        assert out.startswith("certificate invalid: ") and out.count("\n") == 1 and not err
    else:
        assert status == 2 and not out
        assert err.count("\n") == 1 and err.startswith("tinyadder: error: ")


# --- token-id prompts ---------------------------------------------------------------------

def _layout_prefix(tokens, digits, vocab):
    """Independently of the package: whether ``tokens`` starts a sequence <bos>, N digits, '+',
    N digits, '=', N + 1 digits."""
    n = digits
    want = (["<bos>"] + ["d"] * n + ["+"] + ["d"] * n + ["="] + ["d"] * (n + 1))
    if not tokens or len(tokens) > len(want):
        return False
    for t, w in zip(tokens, want):
        if not (isinstance(t, int) and not isinstance(t, bool) and 0 <= t < len(vocab)):
            return False
        if vocab[t] != w and not (w == "d" and vocab[t].isdigit()):
            return False
    return True


@pytest.mark.parametrize("seed", range(30))
def test_token_id_prompts(seed):
    """A token list is traced exactly when it starts a sequence the layout can produce; a whole
    prompt is answered as the same addition as text; the given tokens are kept."""
    rng = random.Random(8000 + seed)
    digits = rng.choice([1, 2])
    model = build("published", digits)
    a, b = rng.randrange(10 ** digits), rng.randrange(10 ** digits)
    whole = [model.vocab.index(ch) for ch in ["<bos>"]] + [
        model.vocab.index(ch) for ch in f"{a:0{digits}d}+{b:0{digits}d}={a + b:0{digits + 1}d}"]
    tokens = whole[:rng.randint(0, len(whole) + 2)] + ([0] if rng.random() < 0.1 else [])
    if tokens and rng.random() < 0.5:
        at = rng.randrange(len(tokens))
        tokens[at] = rng.choice([*range(len(model.vocab)), -1, 14, 99, True, 1.0, "1", None])
    fits = _layout_prefix(tokens, digits, model.vocab)
    try:
        _, cache = run_with_cache(model, tokens, ns="float")
    except (TypeError, ValueError) as err:
        assert not fits and "\n" not in str(err), (tokens, err)
        return
    assert fits, tokens
    assert cache.tokens[:len(tokens)] == tokens
    if len(tokens) == 2 * digits + 3:  # the whole prompt, up to '='
        assert cache.text == "<bos>" + run(model, number_system("float"), a, b)
    if len(tokens) >= 2 * digits + 3:
        assert len(cache.tokens) == 3 * digits + 4
    else:
        assert cache.tokens == tokens


# --- closed and full standard streams -----------------------------------------------------

STREAM_COMMANDS = [
    ["--number", "float", "1+2", "abc", "5193798811+1806201129", "3+4"],
    ["--json", "--number", "float", "--digits", "2", "12+34"],
    ["params"],
    ["verify", "--suite", "edges", "--digits", "2", "--number", "float"],
    ["explain", "--digits", "2", "--number", "float", "12+34"],
    ["precision", "--digits", "2", "--pairs", "0", "--scan", "", "--systems", "float"],
]
REDIRECT = {"pipe": "", "closed": "&-", "full": "/dev/full"}


def _bash(argv, stdout, stderr):
    command = " ".join(["exec", f'"{sys.executable}"', "-m", "tinyadder",
                        *(shlex.quote(a) for a in argv)])
    for fd, how in ((1, stdout), (2, stderr)):
        if how != "pipe":
            command += f" {fd}>{REDIRECT[how]}"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, timeout=120)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.fixture(scope="module")
def piped_runs():
    return {}


@pytest.mark.parametrize("seed", [1, 3, *(pytest.param(s, marks=pytest.mark.slow)
                                       for s in (0, 2, 4, 5, 6, 7))])
def test_closed_and_full_standard_streams(seed, piped_runs):
    """Standard output closed or full: one line on standard error, exit 2. Standard error
    closed or full: standard output and the exit status are those of a run with both piped.
    Seeds 1 and 3 by default (standard output closed beside a piped standard error, a batch;
    full beside a closed standard error, explain); slow adds 0 and 2 (the same streams,
    params) and 4-7 (standard output full beside a piped standard error, and standard error
    closed beside a piped output, which test_bad_input checks by default)."""
    rng = random.Random(9000 + seed)
    argv = rng.choice(STREAM_COMMANDS)
    stdout, stderr = rng.choice([("pipe", "closed"), ("pipe", "full"), ("closed", "pipe"),
                                 ("full", "pipe"), ("closed", "full"), ("full", "closed")])
    key = tuple(argv)
    if key not in piped_runs:
        piped_runs[key] = _bash(argv, "pipe", "pipe")
    status, out, err = _bash(argv, stdout, stderr)
    reference = piped_runs[key]
    assert "Traceback" not in reference[2] + err and "Exception ignored" not in err
    if stdout == "pipe":
        assert (status, out) == reference[:2]
    else:
        assert status == 2
    if stderr == "pipe":
        assert err.endswith("tinyadder: error: cannot write standard output: " +
                            ("it is closed\n" if stdout == "closed" else
                             "No space left on device\n"))
    else:
        assert err == ""


# --- sizes --------------------------------------------------------------------------------

# command -> (the name its refusal starts with, copies of its traces: cli.tracing, precision)
TRACING = {"--trace": ("--trace", 1.25), "--json": ("--json", 2.5), "--step": ("--step", 1.25),
           "explain": ("explain", 1.25), "figure": ("figure", 1.25),
           "explore": ("explore", 1.25), "precision": ("comparing traces", 1.5)}


@pytest.mark.parametrize("seed", range(16))
def test_size_limits(seed, tmp_path):
    """A command whose traces would not fit is refused up front, in one line that names the
    largest N that fits, which fits while the next does not; one that fits runs (at small N)."""
    from tinyadder.cli.options import ModelChoice
    from tinyadder.cli.tracing import size_problem
    from tinyadder.numbers import FractionSystem
    rng = random.Random(10000 + seed)
    command = rng.choice(sorted(TRACING))
    what, copies = TRACING[command]
    spec = rng.choice(["fraction", "float", "float32", "decimal", "decimal:300"])
    top = 100 if command == "explore" else 2000  # explore's page stops at N = 100 first
    digits = rng.choice([rng.randint(40, top), rng.randint(1, 3)])
    systems = ([FractionSystem()] if command == "precision" else []) + [number_system(spec)]
    variant = ModelChoice("repaired" if command == "precision" else "published")  # defaults
    refusal = size_problem(what, variant, variant.build(digits), systems, copies)
    argv = ([command] if command[0] != "-" else []) + (["flaw"] if command == "figure" else [])
    argv += ["--digits", str(digits), "--number", spec, "1+2"]
    argv += [command] if command[0] == "-" else []
    argv += ["-o", str(tmp_path / "out")] if command in ("figure", "explore") else []
    if refusal is None and digits > 3:
        return  # fits, and would take long: running such N is other tests' job
    status, out, err = run_cli(argv, stdin=b"q\n")
    if refusal is None:
        assert status in (0, 1) and "Traceback" not in err, (argv, err)
        return
    assert (status, out) == (2, "") and err.count("\n") == 1 and refusal in err, argv
    assert not (tmp_path / "out").exists()
    largest = int(refusal.split("use --digits ")[1].split()[0])
    assert size_problem(what, variant, variant.build(largest), systems, copies) is None
    assert size_problem(what, variant, variant.build(largest + 1), systems, copies) is not None


# ---- model files: constants by number system, names with control characters (issue 38) ----

ADDER1 = ROOT / "tests" / "models" / "adder1.json"
ATOMS = ["pi", "2", "1/3", "-5", "exp(1)", "exp(40)", "10^9", "10^-9", "10^4000", "ln(2)",
         "sqrt(2)", "0", "(pi - pi)", "1e-300"]
FUNCTIONS = ["exp", "ln", "sqrt", "sin", "cos", "f32", "f64", "-"]


def constant(rng, depth=3):
    """A random text of the constant grammar, built from pieces near the edges: huge and tiny
    values, cancellations, functions outside their domain."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(ATOMS)
    kind = rng.randrange(3)
    if kind == 0:
        f = rng.choice(FUNCTIONS)
        return f"{f}({constant(rng, depth - 1)})" if f != "-" else f"-({constant(rng, depth - 1)})"
    if kind == 1:
        return f"({constant(rng, depth - 1)}){rng.choice('+-*/')}({constant(rng, depth - 1)})"
    return f"({constant(rng, depth - 1)})^{rng.choice([2, -1, 3, 50, -300, 10000])}"


@pytest.mark.parametrize("seed", seeds(6, 64))
def test_model_file_constants_in_every_number_system(seed, tmp_path):
    """A constant the loader takes runs in every number system (an answer, right or wrong:
    status 0 or 1); one it refuses is one line naming the entry. Never a traceback or a run
    without end (today: exp(exp(100)), exp(pi*10^9), sqrt(1 - pi), 1/(pi - pi))."""
    from tinyadder.modelfile import ModelFileError, loads
    rng = random.Random(7000 + seed)
    text = constant(rng)
    source = ADDER1.read_text(encoding="utf-8").replace('"W_V": {"x": {"h0": "3"}}',
                                                        f'"W_V": {{"x": {{"h0": "{text}"}}}}')
    try:
        loads(source)
    except ModelFileError as err:
        assert "\n" not in str(err) and str(err).startswith(
            "blocks.0.attn.W_V['x']['h0']: "), (text, str(err))
        return
    path = tmp_path / "m.json"
    path.write_text(source, encoding="utf-8")
    for ns in ("fraction", "decimal", "float", "float32"):
        out, err = io.StringIO(), io.StringIO()
        status = main(["--model", str(path), "--number", ns, "1+2"], out=out, err=err,
                      stdin=io.StringIO())
        assert status in (0, 1), (text, ns, err.getvalue())
        assert "1+2=" in out.getvalue() or status == 1, (text, ns)
        assert "Traceback" not in err.getvalue()


CONTROL = ["\x1b[2J", "\x1b]0;title\x07", "\n", "\r", "\x00", "\u202e", "\x7f", "\t", "\x9b"]


@pytest.mark.parametrize("seed", seeds(3, 24))
def test_model_names_with_control_characters_reach_no_terminal_raw(seed, tmp_path):
    """A model file's name is printed quoted (ascii()) wherever a command prints it: params,
    program, explain, the trace; explore prints no name, only where its page went."""
    rng = random.Random(8000 + seed)
    name = "".join(rng.choice(CONTROL + ["adder", "1", " ", "é"]) for _ in range(6))
    name = name if not name.isprintable() else name + "\x1b[0m"
    doc = json.loads(ADDER1.read_text(encoding="utf-8"))
    doc["name"] = name
    path = tmp_path / "named.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for argv in (["params"], ["program"], ["explain", "1+2"],
                 ["explore", "1+2", "-o", str(tmp_path / "page.html")], ["1+2", "--trace"]):
        out, err = io.StringIO(), io.StringIO()
        status = main([*argv, "--model", str(path)], out=out, err=err, stdin=io.StringIO())
        shown = out.getvalue() + err.getvalue()
        assert status in (0, 2), (argv, shown)
        assert all(ch.isprintable() or ch == "\n" for ch in shown), (argv, shown)
        quoted = " ".join(ascii(name).split())[:12]  # a one-line error collapses spaces
        assert quoted in " ".join(shown.split()) or argv[0] in ("explore", "1+2"), (argv, shown)
# ---- graphs other tools write, projections lane by lane (docs/onnx.md) --------------------

def _lane_graph():
    """kswain98-8's dynamo graph (its projections are Gathers of lanes, Muls and Concats; no
    Constant node, whose missing inputs would send _mutate to the metadata)."""
    import gzip
    from tinyadder.onnx import parse
    fixture = Path(__file__).resolve().parent / "fixtures" / "onnx"
    return parse(gzip.decompress((fixture / "kswain98-8.dynamo.onnx.gz").read_bytes()))


def _wide_projection(graph):
    """A lane-by-lane map of 4096 lanes to 4096: a table of 2^24 weights."""
    from dataclasses import replace
    from tinyadder.onnx.messages import DataType, Node, Tensor
    nodes = (Node(("wide.W_E", "tokens"), ("wide.x",), "Gather", "wide.embed"),
             Node(("wide.x", "wide.start", "wide.end", "wide.axis"), ("wide.lanes",), "Slice",
                  "wide.slice"),
             Node(("wide.lanes", "wide.two"), ("wide.q",), "Mul", "wide.scale"),
             Node(("wide.q",), ("wide.r",), "Relu", "wide.relu"))
    inits = (Tensor("wide.W_E", DataType.FLOAT, (10, 4096), (0.0,) * 40960),
             Tensor("wide.start", DataType.INT64, (1,), (0,)),
             Tensor("wide.end", DataType.INT64, (1,), (4096,)),
             Tensor("wide.axis", DataType.INT64, (1,), (-1,)),
             Tensor("wide.two", DataType.FLOAT, (), (2.0,)))
    return replace(graph, graph=replace(graph.graph, node=nodes + graph.graph.node,
                                        initializer=graph.graph.initializer + inits))


def test_lane_by_lane_graphs_survive_mutations_and_size():
    """Mutations of a graph whose projections the rewrite writes as MatMuls read or are
    refused in one line; a lane-by-lane map too large to write is refused before it is made."""
    from test_onnx import _fuzz
    from test_onnx_import import NoMetadata
    from tinyadder.onnx import OnnxError, serialize
    from tinyadder.onnx.read import loads
    graph = _lane_graph()
    outcomes = _fuzz(range(6, 16), graph, NoMetadata)
    assert outcomes["refused"] > 4 and outcomes["read"] > 0, outcomes
    with pytest.raises(OnnxError) as caught:
        loads(serialize(_wide_projection(graph)))
    assert str(caught.value) == "node 'wide.scale' (Mul): a projection of 4,096 x 4,096 " \
        "lanes (limit elements, 4,194,304)"


def _real_graph(name):
    import gzip
    from tinyadder.onnx import parse
    fixture = Path(__file__).resolve().parent / "fixtures" / "onnx"
    return parse(gzip.decompress((fixture / f"{name}.onnx.gz").read_bytes()))


# real exports with the operators and patterns the rewrite added (Einsum, Expand of heads, a
# Gemm of onnxruntime's, ScatterND, Where, Trilu, Unsqueeze, Cast, ConstantOfShape, Equal,
# NonZero, lanes assigned by ScatterND, [tok | pos], a head of one, interleaved rotary, a
# mix, gelu by 0.5, LayerNormalization, its decomposition, Split, rotary lanes written by
# ScatterND, heads repeated by Tile, q and k scaled apart, ScatterElements; a forward written
# with torch operations on lanes, ending in ArgMin: alexlitz-36's; the last position's
# readout indexed by GatherND between Transposes: cosminscn-66's):
# lichengliu03-50 and bingbangboom-lab-87 are refused, the others import (docs/onnx.md,
# "What imports, entry by entry")
REAL_GRAPHS = ("jacobli99-28.torchscript", "jacobli99-28.dynamo", "jacobli99-93.torchscript.ort",
               "lichengliu03-50.dynamo", "prasannakotyal-116.torchscript",
               "dimopep-140.torchscript", "lokimorty-39.torchscript.onnxscript",
               "evindor-57.torchscript.ort", "evindor-57.torchscript", "vijec-52.dynamo",
               "dimopep-140.torchscript.ort", "yinglunz-456.torchscript", "vijec-52.torchscript",
               "yinglunz-512.dynamo", "yinglunz-512.torchscript16",
               "jackcai1206-234.torchscript.ort", "bingbangboom-lab-87.dynamo",
               "alexlitz-36.torchscript", "alexlitz-36.dynamo", "cosminscn-66.dynamo")


def test_real_graphs_with_the_new_operators_survive_mutations():
    """Mutations of jacobli99-28's graph after onnxruntime (Einsum, Expand, a Gemm between
    Reshapes, ScatterND, Where) read or are refused in one line, each within 2 s (_fuzz)."""
    from test_onnx import _fuzz
    from test_onnx_import import NoMetadata
    outcomes = _fuzz(range(4), _real_graph("jacobli99-28.torchscript.ort"), NoMetadata)
    assert outcomes["refused"] >= 2, outcomes


@pytest.mark.parametrize("name", ["vijec-52.dynamo", "lokimorty-39.torchscript.ort",
                                  "yinglunz-512.dynamo", "yinglunz-512.torchscript16",
                                  "prasannakotyal-116.torchscript.ort",
                                  "alexlitz-36.dynamo"])
def test_real_graphs_with_the_new_patterns_survive_mutations(name):
    """Two mutations each of graphs that need interleaved rotary (vijec-52), a mix and a
    unit correction (lokimorty-39), LayerNormalization and a Split projection (yinglunz-512's
    dynamo graph), a decomposed LayerNorm (its TorchScript graph at opset 16), rotary lanes
    by ScatterND, heads by Tile and q and k scaled apart (prasannakotyal-116), lanes by
    ScatterElements and token ids by ArgMin (alexlitz-36's dynamo graph): read or refused in
    one line, each within 2 s (_fuzz);
    evindor-57's (NonZero, ScatterND lanes, [tok | pos], a head of one) under -m slow."""
    from test_onnx import _fuzz
    from test_onnx_import import NoMetadata
    outcomes = _fuzz(range(2), _real_graph(name), NoMetadata)
    assert sum(outcomes.values()) >= 1, outcomes


HOSTILE_OUTPUTS = [5, None, "TOKEN_IDS", {"token_ids": 1}, "x" * 10 ** 4, "\x1b[31m"]


def test_token_id_graphs_and_hostile_outputs_get_a_model_or_one_line(tmp_path, monkeypatch):
    """A graph that outputs token ids (ArgMin of the readout's errors), mutated (its operator,
    inputs, attributes such as axis and keepdims, nodes, initializers): a model or a one-line
    refusal within 2 s (_fuzz); a layout's ``output`` of any other value, or "token_ids" for a
    graph of logits, or "logits" for a graph of token ids: one line, exit 2."""
    from test_onnx import _fuzz
    from test_onnx_import import NoMetadata, _token_id_graph
    from tinyadder.onnx import serialize
    outcomes = _fuzz(range(8), _token_id_graph(length=4), NoMetadata)
    assert outcomes["refused"] > 3 and outcomes["read"] > 0, outcomes
    monkeypatch.chdir(tmp_path)
    Path("ids.onnx").write_bytes(serialize(_token_id_graph(length=33)))
    layout = json.loads((ROOT / "tests/fixtures/onnx/alexlitz-36.layout.json").read_text())
    for graph, output in [("ids.onnx", o) for o in HOSTILE_OUTPUTS + ["logits"]] + \
            [(str(ROOT / "tests/fixtures/onnx/fblissjr-33.torchscript.onnx"), "token_ids")]:
        Path("layout.json").write_text(json.dumps({**layout, "output": output}))
        status, out, err = run_cli(["--model", graph, "--layout", "layout.json", "1+1"])
        assert (status, out) == (2, "") and err.count("\n") == 1 and "layout" in err and \
            "Traceback" not in err and "\x1b" not in err, (output, err)


@pytest.mark.slow
@pytest.mark.parametrize("name", REAL_GRAPHS)
def test_real_graphs_survive_many_mutations(name):
    from test_onnx import _fuzz
    from test_onnx_import import NoMetadata
    outcomes = _fuzz(range(200), _real_graph(name), NoMetadata)
    assert outcomes["refused"] > 100, outcomes
