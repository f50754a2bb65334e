"""AdderBoard's entries as model files (tinyadder/models/board/NAME.json), against the answers
their original programs gave (tests/fixtures/board/NAME.json.gz, docs/models.md), and the
``tinyadder board`` command.

Every test is generic over the board files present: a new file and its fixture are tested
here with nothing to edit but the golden list (and REPLAYED, if the file brings a family or a
dtype the default run's replays do not have yet).
"""

import gzip
import hashlib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tinyadder import models
from tinyadder.addition import add
from tinyadder.analysis import board, ledger
from tinyadder.proof.kernel import floatcheck
from tinyadder.proof import reading
from tinyadder.cli import board as cli_board, main
from tinyadder.modelfile import dump, load
from tinyadder.numbers import number_system

ROOT = Path(__file__).resolve().parent.parent
FILES = ROOT / "tinyadder" / "models" / "board"
FIXTURES = ROOT / "tests" / "fixtures" / "board"
NAMES = sorted(p.name[:-len(".json")] for p in FILES.glob("*.json"))
SUITE_OF = {"adderboard": "adderboard", "carries": "carries", "edge": "edges"}
PER_SUITE = 2  # sampled pairs per suite in the default run, besides two the original got wrong
ABOUT = ("title", "author", "params_claimed", "dtype", "family", "source")
FAMILIES = ("rope-19", "rope-10000", "sinusoid-11", "fixed-bias", "qwen-svd", "trained")
# the files whose replays the default run checks: one of each family in each of its dtypes
REPLAYED = ("kswain98-2", "zcbtrak-6", "jacobli99-28", "lichengliu03-50", "alexlitz-36",
            "bingbangboom-lab-87", "rezabyt-311",
            # qwen-svd's other originals, each run on its own (torch; MLX; MLX, full head)
            "bingbangboom-lab-148", "xangma-177", "xangma-197")


def fixture(name):
    with gzip.open(FIXTURES / f"{name}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def original_answers(fx, suite):
    """[(a, b, the original's answer)] for every pair of the suite, in order."""
    wrong = {(a, b): got for a, b, got in fx["suites"][suite]["wrong"]}
    return [(a, b, wrong.get((a, b), a + b)) for a, b in board.suite_pairs(SUITE_OF[suite])]


def replayed_names():
    """Every file's name; those not in REPLAYED run under -m slow."""
    return [name if name in REPLAYED else pytest.param(name, marks=pytest.mark.slow)
            for name in NAMES]


def run_cli(*argv):
    import io
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_every_board_file_has_a_fixture_and_a_name():
    assert NAMES and NAMES == list(models.board_names())
    assert sorted(p.name[:-len(".json.gz")] for p in FIXTURES.glob("*.json.gz")) == NAMES
    assert set(NAMES) <= set(models.names())
    kinds = {name: (models.build(name).about["family"], models.build(name).about["dtype"])
             for name in NAMES}
    assert {kinds[name] for name in REPLAYED} == set(kinds.values())  # each family, each dtype


@pytest.mark.parametrize("name", NAMES)
def test_file_reads_back_as_written(name):
    text = (FILES / f"{name}.json").read_text(encoding="utf-8")
    model = load(FILES / f"{name}.json")
    assert dump(model) == text and model.name == name
    assert models.build(name).name == name


@pytest.mark.parametrize("name", NAMES)
def test_about_names_the_entry_and_its_source(name):
    about = models.build(name).about
    assert set(ABOUT) <= set(about) and about["family"] in FAMILIES
    author, claimed = re.fullmatch(r"(.+)-(\d+)", name).groups()
    assert about["author"].lower() == author and about["params_claimed"] == int(claimed)
    source = about["source"]
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]) and "/" in source["repo"]
    assert source["path"] and source["url"].startswith("https://")
    fx = fixture(name)
    assert fx["model"] == name and fx["dtype"] in (about["dtype"], "float")


@pytest.mark.parametrize("name", NAMES)
def test_parameters_counted_from_the_file(name):
    counted = ledger.totals(ledger.ledger(models.build(name))).params
    assert counted == fixture(name)["pins"]["params_counted"]


@pytest.mark.parametrize("suite", sorted(SUITE_OF))
def test_fixture_pairs_are_the_generated_cases(suite):
    pairs = board.suite_pairs(SUITE_OF[suite])
    digest = hashlib.sha256("".join(f"{a}+{b}\n" for a, b in pairs).encode()).hexdigest()
    for name in NAMES:
        held = fixture(name)["suites"][suite]
        assert (held["count"], held["sha256"]) == (len(pairs), digest), name
        assert all(got != a + b for a, b, got in held["wrong"])


def replayed(name, rows):
    model = models.build(name)
    ns = board.native(model)
    return [(a, b, add(model, ns, a, b)) for a, b, _ in rows]


@pytest.mark.parametrize("name", replayed_names())
def test_sampled_pairs_give_the_originals_answers(name):
    """A few pairs of each suite, and the first two the original got wrong, in the original's
    dtype: the same answers, right or wrong. The default run replays REPLAYED, one file of
    each family in each of its dtypes; -m slow adds the other files."""
    fx = fixture(name)
    rows = []
    for suite in SUITE_OF:
        rows += board.sample(original_answers(fx, suite), PER_SUITE)
        rows += [tuple(r) for r in fx["suites"][suite]["wrong"][:2]]
    assert replayed(name, rows) == rows


@pytest.mark.parametrize("name", replayed_names())
def test_recorded_logits(name):
    """At every recorded step the argmax is the original's; the largest difference from the
    original's logits, and the steps where every logit is the same float, are as pinned.
    REPLAYED's files by default, every file under -m slow."""
    fx = fixture(name)
    steps = board.recorded_steps(models.build(name), fx["logits"])
    assert [(a, b, mine) for a, b, mine, _, _ in steps] == [
        (a, b, want) for a, b, _, want, _ in steps]
    worst = max(diff for *_, diff in steps)
    same, steps = sum(diff == 0 for *_, diff in steps), len(steps)
    pins = fx["pins"]
    assert (steps, same, worst.hex()) == (
        pins["logits_steps"], pins["logits_identical_steps"], pins["logits_max_diff"])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("suite", sorted(SUITE_OF))
def test_whole_suite_gives_the_originals_answers(name, suite):
    rows = original_answers(fixture(name), suite)
    assert replayed(name, rows) == rows


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_one_exact_pair(name):
    """The real-number model of the file adds 7650676663 + 0149460439, every digit certified."""
    assert add(models.build(name), number_system("fraction"), 7650676663, 149460439) == \
        7650676663 + 149460439


# ---- tinyadder board --------------------------------------------------------------------

BOARD_LIST = """\
model                 category         family       author            claimed  counted  rule     ledger
kswain98-2            hand-coded       rope-19      kswain98                2        2  free         29
kswain98-4            hand-coded       rope-19      kswain98                4        4  free         30
zcbtrak-6             hand-coded       rope-19      zcbtrak                 6        6  free         47
kswain98-8            hand-coded       rope-19      kswain98                8        8  free         30
lokimorty-10          hand-coded       rope-19      Lokimorty              10       10  free         30
lokimorty-12          hand-coded       rope-19      Lokimorty              12       12  free         31
yieldthought-20       hand-coded       rope-19      yieldthought           20       10  free         34
variant-22            tinyadder's own  tinyadder    tinyadder              22       22  seed000      22
wonderfall-27         hand-coded       rope-19      Wonderfall             27       10  free         30
jacobli99-28          hand-coded       rope-10000   jacobli99              28       90  numel        22
variant-28            tinyadder's own  tinyadder    tinyadder              28       28  seed000      28
fblissjr-33           hand-coded       fixed-bias   fblissjr               33      123  numel        41
alexlitz-36           hand-coded       fixed-bias   alexlitz               36       36  seed000      36
published             tinyadder's own  tinyadder    tinyadder              36       36  seed000      36
repaired              tinyadder's own  tinyadder    tinyadder              36       36  seed000      36
lokimorty-39          trained          trained      Lokimorty              39       90  unique       70
lichengliu03-50       hand-coded       sinusoid-11  lichengliu03           50      148  numel        45
vijec-52              trained          trained      vijec                  52       79  unique       79
evindor-57            trained          trained      evindor                57      313  unique      170
cosminscn-66          hand-coded       sinusoid-11  cosminscn              66      156  numel        48
evindor-67            trained          trained      evindor                67      323  unique      180
bingbangboom-lab-87   hand-coded       qwen-svd     bingbangboom-lab       87      283  numel        94
jacobli99-93          hand-coded       rope-10000   jacobli99              93       90  numel        44
nino-116              hand-coded       rope-10000   nino                  116      116  unique       52
wonderfall-121        hand-coded       rope-10000   Wonderfall            121      121  numel        53
staghado-122          trained          trained      staghado              122      122  unique      122
cosminscn-130         hand-coded       sinusoid-11  cosminscn             130      156  numel        47
wonderfall-130        hand-coded       rope-10000   Wonderfall            130      130  numel        56
wonderfall-139        hand-coded       rope-10000   Wonderfall            139      139  numel        57
dimopep-140           trained          trained      dimopep               140      140  unique      140
bingbangboom-lab-148  hand-coded       qwen-svd     bingbangboom-lab      148      283  numel        94
xangma-177            hand-coded       qwen-svd     xangma                177      283  numel        94
xangma-197            hand-coded       qwen-svd     xangma                197      303  numel       114
jackcai1206-234       trained          trained      JackCai1206           234      518  unique      319
rezabyt-311           trained          trained      rezabyt               311      311  unique      311
yinglunz-456          trained          trained      yinglunz              456      456  unique      456
yinglunz-512          trained          trained      yinglunz              512      512  unique      512

model                 dtype     suite  prove                     program
kswain98-2            float32    100%  proved                    proved
kswain98-4            float32    100%  proved                    proved
zcbtrak-6             float64    100%  proved                    proved
kswain98-8            float32    100%  proved                    proved
lokimorty-10          float32    100%  proved                    proved
lokimorty-12          float32    100%  proved                    proved
yieldthought-20       float32    100%  proved                    proved
variant-22            float64    100%  proved                    proved
wonderfall-27         float32    100%  proved                    proved
jacobli99-28          float32    100%  proved                    proved
variant-28            float64    100%  proved                    undecided
fblissjr-33           float64    100%  proved                    proved
alexlitz-36           float64    100%  fails 74,318,182,169,594  fails
published             float64    100%  fails 74,318,182,169,594  fails
repaired              float64    100%  proved                    undecided
lokimorty-39          float32  99.91%  fails [448, 10^20]        fails
lichengliu03-50       float32    100%  proved                    proved
vijec-52              float32    100%  undecided [0, 10^20]      undecided
evindor-57            float32    100%  undecided [0, 10^20]      undecided
cosminscn-66          float32    100%  proved                    undecided
evindor-67            float32    100%  undecided [0, 10^20]      undecided
bingbangboom-lab-87   float32    100%  undecided [0, 10^20]      undecided
jacobli99-93          float32    100%  proved                    proved
nino-116              float32    100%  proved                    undecided
wonderfall-121        float32    100%  proved                    undecided
staghado-122          float32  99.95%  fails [1.20e15, 10^20]    fails
cosminscn-130         float32    100%  proved                    undecided
wonderfall-130        float32    100%  proved                    proved
wonderfall-139        float32    100%  proved                    proved
dimopep-140           float32    100%  undecided [0, 10^20]      undecided
bingbangboom-lab-148  float32    100%  undecided [0, 10^20]      undecided
xangma-177            float32    100%  undecided [0, 10^20]      undecided
xangma-197            float32    100%  undecided [0, 10^20]      undecided
jackcai1206-234       float32  99.91%  fails [4.99e15, 10^20]    fails
rezabyt-311           float32    100%  fails [2.00e14, 10^20]    fails
yinglunz-456          float32    100%  undecided [0, 10^20]      undecided
yinglunz-512          float32  99.98%  fails [4.50e13, 10^20]    fails
"""


def test_board_lists_every_file_with_its_counts():
    """The list is two tables, each about 100 columns wide (the parameters, the verdicts),
    every column of board.COLUMNS in one of them."""
    status, out, err = run_cli("board")
    lead, params, start, verdicts, rest = out.split("\n\n", 4)
    assert (status, f"{params}\n\n{verdicts}\n", err) == (0, BOARD_LIST, "")
    assert start == "\n".join(textwrap.wrap(board.START_SHORT, 88))
    heads = params.split("\n", 1)[0].split() + verdicts.split("\n", 1)[0].split()[1:]
    assert heads == list(board.COLUMNS)
    assert max(map(len, f"{params}\n{verdicts}".splitlines())) <= 104
    width = max(map(len, board.names()))
    assert (f"  {'zcbtrak-6':<{width}}  Kiguli/AdderBoard submissions/hand_coded/zcbtrak_6p.py @ "
            f"e5167440c8e9\n  {'':<{width}}  https://gist.github.com/zcbtrak/") in rest
    status, out, _ = run_cli("board", "--json")
    rows = json.loads(out)
    assert [r["model"] for r in rows] == [line.split()[0] for line in
                                          BOARD_LIST.split("\n\n")[0].splitlines()[1:]]
    assert rows[2]["source"]["commit"] == "e5167440c8e9d0ba167f54e0882bc525f8d06a84"
    status, out, _ = run_cli("board", "--markdown")
    assert out.splitlines()[4] == (
        "| zcbtrak-6 | hand-coded | rope-19 | zcbtrak | 6 | 6 | free | 47 | float64 | 100% | "
        "proved | proved | 100% on the test suite; fails on none of 10^20 pairs (proved: "
        "tinyadder prove --model zcbtrak-6 --carries-first) | used by no entry: embed_w1, v_proj_w, gate_w0, gate_w1, carry_w (no "
        "tensor entry names or equals one: the file holds literals in their place); 47 other "
        "non-zero entries are literals, not derived from a named constant (the original's constants "
        "outside its count) | Kiguli/AdderBoard "
        "submissions/hand_coded/zcbtrak_6p.py @ e5167440c8e9d0ba167f54e0882bc525f8d06a84 "
        "(https://gist.github.com/zcbtrak/b9af065d6395a3ecd72e3b8d2e867ae9) |")
    assert [(r["model"], r["params_rule"], r["params_under_rule"]) for r in rows
            if r["params_claimed"] != r["params_under_rule"]] == [
        ('yieldthought-20', 'free', 10),
        ('wonderfall-27', 'free', 10),
        ('jacobli99-28', 'numel', 90),
        ('fblissjr-33', 'numel', 123),
        ('lokimorty-39', 'unique', 90),
        ('lichengliu03-50', 'numel', 148),
        ('vijec-52', 'unique', 79),
        ('evindor-57', 'unique', 313),
        ('cosminscn-66', 'numel', 156),
        ('evindor-67', 'unique', 323),
        ('bingbangboom-lab-87', 'numel', 283),
        ('jacobli99-93', 'numel', 90),
        ('cosminscn-130', 'numel', 156),
        ('bingbangboom-lab-148', 'numel', 283),
        ('xangma-177', 'numel', 283),
        ('xangma-197', 'numel', 303),
        ('jackcai1206-234', 'unique', 518)]


# a pair each "fails" of the program column is added wrong by its float replay
PROGRAM_FAILS = {"alexlitz-36": (2999999999, 1999999999),
                 "rezabyt-311": (9399137648, 9500813250),
                 **{name: pair[:2] for name, pair in board.WITNESSES.items()}}


@pytest.mark.parametrize("name", sorted(board.WITNESSES))
def test_a_witness_fails_in_the_real_number_model_and_the_original(name):
    """A trained entry's "fails": the original got the pair wrong (its fixture), and the
    exact run of the real-number model writes the wrong sum recorded."""
    a, b, wrote = board.WITNESSES[name]
    assert board.verdict(name) == board.program_verdict(name) == "fails"
    assert [a, b, wrote] in fixture(name)["suites"]["adderboard"]["wrong"]
    assert add(models.build(name), number_system("fraction"), a, b) == wrote != a + b


@pytest.mark.parametrize("name", sorted(board.COUNT_SEEDS))
def test_the_count_seeds_are_the_originals_wrong_pairs(name):
    """``board --count``'s seeds beyond the witness: the pairs the original got wrong on
    AdderBoard's cases and the near-carry pairs (its fixture), each once."""
    wrong = [tuple(w[:2]) for suite in ("adderboard", "carries")
             for w in fixture(name)["suites"][suite]["wrong"]]
    assert sorted(board.seeds(name)) == sorted(set(wrong))


def program_certificate(name):
    """The path of a board model's float program certificate, NAME.DTYPE.cert.json, gzip
    compressed (.gz) where large."""
    path = Path(f"tests/fixtures/proofs/{name}.{board.entry(name).dtype}.cert.json")
    return path if path.exists() else path.with_name(path.name + ".gz")


def test_the_program_column_is_backed_by_a_certificate_or_a_wrong_pair():
    """A float program's "proved" has its certificate of the shipped file's text, in the
    model's dtype (tests/test_floatcheck.py re-checks them, slow); a "fails" a pair that the
    float replay, in the model's dtype, adds wrong."""
    fails = {n for n, v in board.PROGRAM_VERDICTS.items() if v == "fails"}
    assert fails == set(PROGRAM_FAILS)
    assert {board.PROGRAM_VERDICTS[n] for n in board.PROGRAM_OPTIONS} == {"proved"}
    for name, v in board.PROGRAM_VERDICTS.items():
        system = board.entry(name).program
        if v == "proved":
            cert = reading.load(program_certificate(name), floatcheck.FORMAT)
            assert cert["model"] == dump(models.build(name)) and cert["number"] == system
        else:
            a, b = PROGRAM_FAILS[name]
            assert add(models.build(name), number_system(system), a, b) != a + b


def test_board_run_reports_wrong_sums_and_exit_status():
    """alexlitz-36 (TinyAdder-36 as published) gives false carries near a carry boundary."""
    status, out, err = run_cli("board", "--run", "alexlitz-36", "--suite", "carries",
                               "--sample", "40")
    assert status == 1 and err.startswith("alexlitz-36: time ")
    assert out == ("alexlitz-36: carries 40 pairs in float64: 5 wrong\n"
                   "  3035644063+0524355936=03560000000, not 03559999999\n"
                   "  8383353069+0116646929=08500000000, not 08499999998\n"
                   "  0108520864+6591479126=06700000000, not 06699999990\n"
                   "  ... and 2 more\n")
    status, out, _ = run_cli("board", "--run", "zcbtrak-6", "--sample", "3", "--number",
                             "fraction")
    assert (status, out) == (0, "zcbtrak-6: adderboard 3 pairs in fraction: 0 wrong\n")


@pytest.mark.parametrize("argv, message", [
    (["--run", "tiny"], "argument --run: unknown board model 'tiny'; use all or a name "
                        "'tinyadder board' lists"),
    (["--sample", "3"], "--suite, --sample and --number go with --run NAME|all"),
    (["--run", "all", "--json"], "--json and --markdown print the list or the table; leave "
                                 "out --run"),
    (["--table", "--run", "all"], "--table and --run are two commands; give one"),
    (["--jobs", "2"], "--jobs goes with --table or --run"),
    (["--cases", "3"], "--cases, --models and --systems go with --table"),
    (["--run", "all", "--systems", "float"], "--cases, --models and --systems go with --table"),
    (["--table", "--sample", "3"], "--suite, --sample and --number go with --run NAME|all"),
    (["--table", "--json", "--markdown"], "--json and --markdown are two formats; give one"),
    (["--table", "--cases", "0"], "argument --cases: expected an integer from 1 to 10010, "
                                  "got '0'"),
    (["--table", "--cases", "10011"], "argument --cases: expected an integer from 1 to "
                                      "10010, got '10011'"),
    (["--table", "--models", "zcbtrak-6,tiny"], "argument --models: unknown board model "
                                                "'tiny'; use names 'tinyadder board' lists"),
    (["--table", "--models", "zcbtrak-6,zcbtrak-6"], "argument --models: a model is named "
                                                     "twice in 'zcbtrak-6,zcbtrak-6'"),
    (["--table", "--systems", "fraction,double"], "argument --systems: "),
    (["--table", "--systems", "float,float64"], "argument --systems: a number system is "
                                                "named twice in 'float,float64'"),
    (["--run", "all", "--sample", "0"], "argument --sample: "),
    (["--run", "all", "--suite", "edge"], "argument --suite: invalid choice: 'edge'"),
])
def test_board_bad_input_is_one_line_exit_2(argv, message):
    status, out, err = run_cli("board", *argv)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"tinyadder board: error: {message}")


def test_board_as_a_process():
    done = subprocess.run([sys.executable, "-m", "tinyadder", "board", "--run", "x"],
                          cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("tinyadder board: error: argument --run: unknown board model 'x'; "
                           "use all or a name 'tinyadder board' lists\n")


BOARD_TABLE = """\
AdderBoard's protocol (verify.py: 10 edge cases, then 10,000 pairs from
  random.Random(2025)): a sample: the first 12 of its 10,010 cases

model            category         claimed  counted  dtype      exact  float64  float32                     prove    program       time
alexlitz-36      hand-coded            36       36  float64    12/12   12/12*     2/12  fails 74,318,182,169,594      fails      T s
lichengliu03-50  hand-coded            50      148  float32    12/12    12/12   12/12*                    proved     proved      T s

exact: the fraction system, every digit certified for the real-number model; ?:
some pairs open, their digits not certified at any precision tried; *: the dtype
the entry was published in; time: the row's runs, wall seconds; prove: the
prover's verdict on all 10^20 pairs of the real-number model, with the pairs it
adds wrong where counted (exact, or [lo, hi]: certified bounds, lo shown wrong,
hi = lo + those left open), program: the verdict on the float program in its
dtype (proved: a certificate; fails: a pair an exact or float run adds wrong;
undecided: why below)
first wrong case:
  alexlitz-36 float32  9999999999+0000000000=10000001048, not 09999999999 (10 wrong)
sources:
  alexlitz-36      Kiguli/AdderBoard submissions/hand_coded/alexlitz_36p.py @ e5167440c8e9
  lichengliu03-50  Kiguli/AdderBoard submissions/hand_coded/lichengliu03_50p.py @ e5167440c8e9
"""


def timeless(text):
    return re.sub(r"\d+\.\d s( \|)", r"T s\1", re.sub(r"\d+\.\d s$", "T s", text, flags=re.M))


def test_board_table_runs_the_protocol_in_each_system():
    """The first 12 of AdderBoard's cases (its 10 edge cases first): exact and float64 add
    them all; float32 breaks alexlitz-36, whose float64 constants (e^80-scale logits) do not
    survive single precision. Exit status 1: a sum was wrong."""
    status, out, err = run_cli("board", "--table", "--cases", "12", "--models",
                               "alexlitz-36,lichengliu03-50")
    assert (status, timeless(out)) == (1, BOARD_TABLE)
    assert err.startswith("progress: alexlitz-36 exact: ") or err == ""
    status, out, _ = run_cli("board", "--table", "--cases", "12", "--models",
                             "alexlitz-36,lichengliu03-50", "--markdown")
    lines = timeless(out).splitlines()
    assert lines[2:6] == [
        '| model | category | claimed | counted | dtype | exact | float64 | float32 | prove | program | first wrong | time | source |',
        '|---|---|---:|---:|---|---:|---:|---:|---|---|---|---:|---|',
        '| alexlitz-36 | hand-coded | 36 | 36 | float64 | 12/12 | 12/12\\* | 2/12 | fails 74,318,182,169,594 | fails | float32: 9999999999+0000000000=10000001048, not 09999999999 (10 wrong) | T s | Kiguli/AdderBoard submissions/hand_coded/alexlitz_36p.py @ e5167440c8e9d0ba167f54e0882bc525f8d06a84 |',
        '| lichengliu03-50 | hand-coded | 50 | 148 | float32 | 12/12 | 12/12 | 12/12\\* | proved | proved |  | T s | Kiguli/AdderBoard submissions/hand_coded/lichengliu03_50p.py @ e5167440c8e9d0ba167f54e0882bc525f8d06a84 |',
    ]
    assert lines[0].endswith("the first 12 of its 10,010 cases.")


@pytest.mark.slow  # 1.6 s of CPU: over the default suite's budget for one option
def test_jobs_split_the_models_and_change_nothing_else():
    """--jobs 2: the rows and the replays in the list's order, as one process prints them
    (progress, written by one process only, is left out)."""
    table = ["board", "--table", "--cases", "11", "--systems", "float,float32", "--models",
             "alexlitz-36,zcbtrak-6,lichengliu03-50"]
    one, two = run_cli(*table), run_cli(*table, "--jobs", "2")
    assert (one[0], timeless(one[1])) == (two[0], timeless(two[1])) and one[0] == 1
    assert two[2] == ""
    replay = ["board", "--run", "all", "--sample", "2", "--number", "float"]
    one, two = run_cli(*replay), run_cli(*replay, "--jobs", "3")
    assert one[:2] == two[:2] and one[1].count("\n") >= len(NAMES)
    assert [line.split(":")[0] for line in two[2].splitlines()] == board.names()


def test_board_table_as_json():
    status, out, _ = run_cli("board", "--table", "--json", "--cases", "11", "--models",
                             "alexlitz-36", "--systems", "float32,fraction")
    table = json.loads(out)
    assert status == 1 and (table["cases"], table["of"], table["seed"]) == (11, 10010, 2025)
    assert table["systems"] == ["float32", "fraction"]
    [row] = table["models"]
    assert {k: row[k] for k in ("model", "family", "params_claimed", "params_counted",
                                "dtype")} == {
        "model": "alexlitz-36", "family": "fixed-bias", "params_claimed": 36,
        "params_counted": 36, "dtype": "float64"}
    single, exact = row["runs"]
    assert single["first_wrong"] == {"a": 9999999999, "b": 0, "answer": 10000001048}
    assert {k: single[k] for k in ("system", "published", "checked", "passed", "wrong",
                                   "interrupted")} == {
        "system": "float32", "published": False, "checked": 11, "passed": 2, "wrong": 9,
        "interrupted": False}
    assert exact["system"] == "fraction" and (exact["passed"], exact["wrong"]) == (11, 0)
    assert exact["first_wrong"] is None and exact["seconds"] >= 0
    status, out, _ = run_cli("board", "--table", "--json", "--cases", "2", "--models",
                             "alexlitz-36", "--systems", "float")
    assert status == 0 and json.loads(out)["models"][0]["runs"][0]["published"] is True


def test_board_table_stops_at_ctrl_c_with_what_it_checked(monkeypatch):
    import tinyadder.cli.board as command

    class Stop(command.Progress):
        def __call__(self, done, total=None, note=""):
            if done == 3:
                raise KeyboardInterrupt

    monkeypatch.setattr(command, "Progress", Stop)
    status, out, _ = run_cli("board", "--table", "--cases", "5", "--models",
                             "alexlitz-36,fblissjr-33", "--systems", "float")
    lines = timeless(out).splitlines()
    assert status == 130 and lines[4] == ('alexlitz-36  hand-coded            36       36  float64     3/3*  '
                                     'fails 74,318,182,169,594      fails      T s')
    assert len(lines) == 18 and lines[-1] == (
        "interrupted (Ctrl-C): the last row counts the cases checked until then")


def test_board_table_ends_when_its_reader_leaves(monkeypatch):
    """A closed pipe (``board --table | head``) stops the run after the row at hand."""
    import io
    ran = []
    real_run = board.run
    monkeypatch.setattr(board, "run", lambda model, *rest: ran.append(model.name) or
                        real_run(model, *rest))

    class Closes(io.StringIO):
        def write(self, text):
            if "alexlitz-36" in text:
                raise BrokenPipeError
            return super().write(text)

    out = Closes()
    status = main(["board", "--table", "--cases", "2", "--systems", "float", "--models",
                   "alexlitz-36,fblissjr-33"], out, io.StringIO())
    assert (status, ran) == (0, ["alexlitz-36"]) and out.getvalue().endswith("time\n")


def test_board_keeps_open_pairs_apart(monkeypatch):
    """A pair whose digits the fraction system cannot certify (numbers.Undecided) is open:
    neither passed nor wrong, marked '?', listed, and the exit status is 1."""
    from tinyadder.numbers import Undecided
    real_add = board.add

    def add_or_give_up(model, ns, a, b):
        if (a, b) == (9_999_999_999, 1) and ns.name == "fraction":
            raise Undecided("cannot order the logits")
        return real_add(model, ns, a, b)

    monkeypatch.setattr(board, "add", add_or_give_up)
    status, out, _ = run_cli("board", "--table", "--cases", "5", "--models", "alexlitz-36",
                             "--systems", "fraction,float")
    lines = timeless(out).splitlines()
    assert status == 1 and lines[4] == ("alexlitz-36  hand-coded            36       36  "
                                        "float64   4/5?     5/5*  fails 74,318,182,169,594  "
                                        "    fails      T s")
    assert "  alexlitz-36 exact  1 open (not certified), the first 9999999999+0000000001" \
        in lines
    status, out, _ = run_cli("board", "--table", "--cases", "5", "--models", "alexlitz-36",
                             "--systems", "fraction", "--json")
    [run] = json.loads(out)["models"][0]["runs"]
    assert (run["passed"], run["wrong"], run["open"], run["first_open"]) == (
        4, 0, 1, {"a": 9999999999, "b": 1})
    status, out, _ = run_cli("board", "--run", "alexlitz-36", "--suite", "edges", "--number",
                             "fraction")
    assert (status, out) == (1, "alexlitz-36: edges 67 pairs in fraction: 0 wrong, 1 open "
                                "(not certified), the first 9999999999+0000000001\n")


LISTED = {"alexlitz-36"}  # the board's models of TinyAdder-36's kind


@pytest.mark.parametrize("name", NAMES)
def test_program_lists_the_model_and_its_code_or_says_why_not(name):
    """The register machine states every model, as the program `compile` reads back (its
    listing with --listing); the fast path's code runs TinyAdder-36's kind of model, and for
    another kind it says so in one line."""
    status, out, err = run_cli("program", "--model", name)
    assert (status, err) == (0, "") and out.startswith(f"# {name}: ")
    status, out, err = run_cli("program", "--model", name, "--listing")
    assert (status, err) == (0, "") and out.startswith(f"{name}: ")
    status, out, err = run_cli("program", "--model", name, "--python", "--number", "float")
    if name in LISTED:
        assert (status, err) == (0, "") and out.startswith("# ")
    else:
        assert (status, out, err.count("\n")) == (2, "", 1)
        assert err.startswith("tinyadder program: error: ") and name in err


def test_program_lists_a_model_with_norms_and_a_linear_readout():
    status, out, _ = run_cli("program", "--model", "yieldthought-20", "--listing")
    lines = out.splitlines()
    assert status == 0 and "    '0' = 1000*x0" in lines
    assert any(line.startswith("  readout  (tied: logit_t = ") for line in lines)
    assert any(line.startswith("    ln_final: x/sqrt(mean(x^2) + ") for line in lines)


def test_proof_options_name_proved_models_and_the_provers_options():
    """Each model whose proof needs options other than the defaults is a proved one, and the
    prover takes them (``bench --only board`` proves it again so)."""
    from tinyadder.proof.search import generic
    assert board.PROOF_OPTIONS
    for name, options in board.PROOF_OPTIONS.items():
        assert board.verdict(name) == "proved"
        assert generic.Prover(models.build(name), **options).carries_first


# ---- verdicts and counts ----------------------------------------------------------------

def test_the_suite_column_is_the_originals_wrong_answers():
    """ORIGINAL_WRONG holds what each fixture records of the original on AdderBoard's 10,010
    cases; the column floors the accuracy, so a wrong case never reads 100%."""
    held = {name: len(fixture(name)["suites"]["adderboard"]["wrong"]) for name in NAMES}
    assert {n: k for n, k in held.items() if k} == board.ORIGINAL_WRONG
    assert [board.suite_text(n) for n in ("lokimorty-39", "staghado-122", "zcbtrak-6")] == [
        "99.91%", "99.95%", "100%"]
    assert board.suite_text("published") == "100%"


def test_counts_round_outwards():
    assert [board.rounded(74_318_182_169_594, up) for up in (False, True)] == [
        "7.43e13", "7.44e13"]
    assert [board.rounded(999_501, up) for up in (False, True)] == ["9.99e5", "1.00e6"]
    assert (board.rounded(9999, True), board.rounded(0, False)) == ("9999", "0")
    assert board.rounded(10 ** 20, True) == "10^20" and board.rounded(10 ** 20 - 1, True) == \
        "1.00e20"
    assert board.interval_text(board.Count(0, 10 ** 20, "")) == "[0, 10^20]"
    assert board.interval_text(board.Count(5, 5, "")) == "5"


def test_every_count_fits_its_verdict():
    """A recorded count lies in [0, 10^20]; a "fails" count shows a pair wrong (lo >= 1), an
    "undecided" one none (lo = 0, else it would fail) and leaves some open; a "proved" model
    counts [0, 0] by its proof, never a record."""
    assert set(board.COUNTS) <= set(board.names())
    for name in board.COUNTS:
        c = board.count(name)
        assert 0 <= c.low <= c.high <= board.TOTAL, name
        v = board.verdict(name)
        assert (v, c.low > 0) in (("fails", True), ("undecided", False)), name
        assert v == "fails" or c.high > 0
    for name in board.names():
        if board.verdict(name) == "proved":
            assert name not in board.COUNTS and board.count(name).high == 0


def test_rate_lines_state_the_suite_beside_the_count():
    assert board.rate_line("alexlitz-36") == (
        "100% on the test suite; fails on 74,318,182,169,594 of 10^20 pairs (certified: "
        "tinyadder census --model alexlitz-36)")
    assert board.rate_line("zcbtrak-6") == (
        "100% on the test suite; fails on none of 10^20 pairs (proved: tinyadder prove "
        "--model zcbtrak-6 --carries-first)")
    assert board.rate_line("lokimorty-39").startswith(
        "99.91% on the test suite (9 of 10,010 wrong); fails on ")
    assert board.prove_cell("alexlitz-36") == "fails 74,318,182,169,594"
    assert board.prove_cell("staghado-122") == "fails [1.20e15, 10^20]"
    # a high bound of all 10^20 pairs says nothing: the line says so, not "between ... and"
    assert board.rate_line("staghado-122") == (
        "99.95% on the test suite (5 of 10,010 wrong); fails on at least 1,200,000,000,000,000 "
        "of 10^20 pairs (certified: tinyadder board --count staghado-122 --sets 1); no upper "
        "bound at the prover's budget")
    assert board.rate_line("vijec-52") == (
        "100% on the test suite; undecided: not bounded by the prover at its budget (tinyadder "
        "board --count vijec-52; docs/models.md, \"Verdicts and counts\")")
    assert "## Verdicts and counts\n" in (ROOT / "docs" / "models.md").read_text("utf-8")
    wide = [n for n, c in board.COUNTS.items() if c.high == board.TOTAL]
    assert not any("between" in board.rate_line(n) for n in wide)


def test_the_list_ends_where_a_learner_starts():
    """The last lines name a tour and the pages' real sections (the list of one entry: the
    whole list is test_board_lists_every_file_with_its_counts's, a slow test)."""
    out = "\n".join(board.table([board.any_entry("zcbtrak-6")])) + "\n"
    assert out.endswith(
        "\nto learn a design: tinyadder explore --model zcbtrak-6 7650676663+0149460439 (a "
        "guided\ntour; every model opens in the explorer), docs/walkthrough.md (\"Another "
        "design:\nzcbtrak-6, one layer and RoPE\") and docs/models.md (\"Worked examples, one "
        "per family\": a\ntraced position of each family)\n")
    # and in short right under the first table, where the lead points
    assert out.split("\n\n")[1] == (
        "to learn a design: tinyadder explore --model zcbtrak-6 7650676663+0149460439 (a "
        "guided\ntour; more in the last lines)")
    assert "start with the line under the first table" in " ".join(cli_board.lead())
    assert "\n## Another design: zcbtrak-6, one layer and RoPE\n" in (
        ROOT / "docs" / "walkthrough.md").read_text("utf-8")
    assert "\n## Worked examples, one per family\n" in (
        ROOT / "docs" / "models.md").read_text("utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["published", "alexlitz-36"])
def test_the_census_gives_the_recorded_count(name):
    """The closed-form census counts what the list records (about 2 s each)."""
    from tinyadder.proof.census import census
    c = board.COUNTS[name]
    assert census(models.build(name)).count == c.low == c.high


def test_board_count_reports_the_bounds_beside_the_record(monkeypatch):
    """``board --count`` runs the generic method's failure_count with the list's budget and
    says whether it derives the record (failure_count stubbed: the real runs are slow)."""
    from tinyadder.proof.search import generic
    calls = []

    def stub(model, **kw):
        calls.append((model.name, kw["max_sets"], kw["carries_first"], kw["seeds"]))
        return generic.FailureCount(10, 3, 12, [(1, 2, 4)], 40, 7)

    monkeypatch.setattr(generic, "failure_count", stub)
    status, out, err = run_cli("board", "--count", "vijec-52")
    held = board.COUNTS.get("vijec-52")
    assert status == 1 and calls == [("vijec-52", board.COUNT_SETS, False, [])]
    assert out.splitlines()[:2] == [
        f"vijec-52: fails on between 3 and 12 of 10^20 pairs (certified: the generic method, "
        f"{board.COUNT_SETS} regions per answer position; 40 regions, 7 exact runs)",
        "  1 + 2 = 3, model 4"]
    assert out.splitlines()[2] == ("the list holds no count of it" if held is None else
                                   f"the list's record: [{held.low:,}, {held.high:,}] "
                                   f"(tinyadder board --count vijec-52): different")
    def overflows(model, **kw):
        import decimal
        raise decimal.Overflow("an exp enclosure overflows")

    monkeypatch.setattr(generic, "failure_count", overflows)
    status, out, err = run_cli("board", "--count", "lokimorty-39")
    assert board.seeds("lokimorty-39")[0] == board.WITNESSES["lokimorty-39"][:2]
    assert board.seeds("rezabyt-311") == [board.SEARCHED["rezabyt-311"][:2]]
    assert (status, out) == (3, "") and err == (
        "tinyadder: board: --count lokimorty-39: the generic method does not reach this model: "
        "Overflow: an exp enclosure overflows\n")
    status, out, err = run_cli("board", "--count", "vijec-52", "--table")
    assert (status, out) == (2, "") and "--count is a command of its own" in err


COUNTED = sorted(n for n, c in board.COUNTS.items() if c.low and c.how.startswith("board"))


def count_certificate(name):
    """The shipped certificate of ``name``'s count (``board --count NAME --certificate``)."""
    from tinyadder.proof import reading
    return reading.read(Path(f"tests/fixtures/proofs/{name}.count.json.gz"))


@pytest.mark.parametrize("name", COUNTED)
def test_a_count_with_pairs_shown_wrong_ships_its_certificate(name):
    """Each count that shows pairs wrong has its certificate: of the shipped model's text,
    its bounds the list's record (the checker derives them again: the slow test below)."""
    from tinyadder.modelfile import dump
    cert, c = count_certificate(name), board.COUNTS[name]
    assert cert["format"] == "tinyadder-count-certificate" and cert["name"] == name
    assert cert["model"] == dump(models.build(name)) and cert["count"] == [c.low, c.high]


@pytest.mark.slow
@pytest.mark.parametrize("name", COUNTED)
def test_a_count_certificate_checks(name):
    """The kernel re-decides the certificate's leaves and derives the list's bounds (1.5 to
    3 s of CPU each)."""
    from tinyadder.proof.kernel import setcheck
    c = board.COUNTS[name]
    line = setcheck.count_check(count_certificate(name))
    assert f"N = 10: fails on between {c.low:,} and {c.high:,} of 10^20 pairs (" in line


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, c in board.COUNTS.items()
                                        if c.how.startswith("board --count")))
def test_board_count_derives_the_record(name):
    """Each count the list holds from ``board --count`` is derived again by the command its
    record names, the same (100 regions a position: about 3 to 15 minutes of CPU each; one
    region and the seeds: 18 s to 5 minutes)."""
    status, out, _ = run_cli(*board.COUNTS[name].how.split())
    assert out.rstrip().endswith("the same as the list's record")


def test_tinyadder_own_entries_are_listed_and_marked():
    """TinyAdder-36 (published, repaired) and seed 000's variants join the list as
    tinyadder's own, counted by the same rules; the published float64 program writes a wrong
    sum, the others' right."""
    own = {e.name: e for e in board.listed() if e.category == "tinyadder's own"}
    assert sorted(own) == sorted(board.OWN)
    assert [(own[n].claimed, own[n].own, own[n].rule) for n in board.OWN] == [
        (36, 36, "seed000"), (36, 36, "seed000"), (28, 28, "seed000"), (22, 22, "seed000")]
    assert [board.verdict(n) for n in board.OWN] == ["fails", "proved", "proved", "proved"]
    float64 = number_system("float")
    a, b = 2999999999, 1999999999
    assert [add(models.build(n), float64, a, b) for n in board.OWN] == [
        5000000000, a + b, a + b, a + b]
    assert board.program_verdict("published") == "fails"
    assert Path("tests/fixtures/proofs/variant-22.float64.cert.json.gz").exists()
    assert board.program_verdict("variant-22") == board.verdict("variant-22") == "proved"


def test_learner13_the_board_opens_with_a_short_legend():
    """A learner reads, before the tables, what ledger, prove and suite mean, why 100% on
    the suite and "fails" agree (the published flaw's count, board.PUBLISHED_FAILURES), and
    where to start (learner13 9)."""
    status, out, _ = run_cli("board")
    lead = out.split("\n\n", 1)[0]
    assert status == 0 and lead.startswith("AdderBoard's entries as model files, one row each.")
    said = " ".join(lead.split())
    assert ("ledger counts every entry's parameters under one rule (seed 000's); prove is the "
            "verdict on all 10^20 pairs, exact; suite is the accuracy on AdderBoard's 10,010 "
            "test cases") in said
    assert f"published fails on {board.PUBLISHED_FAILURES:,} pairs" in said
    assert "published" in out.split("\n\n")[1] and " ".join(out.split()).endswith(
        "a traced position of each family)")  # the last lines the legend points to
    assert max(map(len, lead.splitlines())) <= 88
