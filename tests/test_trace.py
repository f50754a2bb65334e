"""The tracer: cache API and identities, trace-point docs, JSON round trip, the text trace,
the step-through, the program view and the semantic probes."""

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
import io
import json
from pathlib import Path
import re

import pytest

from explore_cases import exact_run
from tinyadder.analysis import probes, program, show, trace_json
from tinyadder.cases import COUNTEREXAMPLE
from tinyadder.cli import main
from tinyadder.construction import SLOTS
from tinyadder.numbers import DecimalSystem, FloatSystem, LogScore
from tinyadder.analysis.step import session
from tinyadder.cache import run_with_cache, stages
from tinyadder.weights import Model

ROOT = Path(__file__).resolve().parent.parent
EXPR, A, B = "7650676663+0149460439", 7650676663, 149460439


@pytest.fixture(scope="module")
def exact():
    return exact_run(EXPR)[1]


@pytest.fixture(scope="module")
def flawed():
    return exact_run("%d+%d" % COUNTEREXAMPLE)[1]


def run_cli(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO(stdin))
    return status, out.getvalue(), err.getvalue()


# --- the cache ---------------------------------------------------------------------------

def test_cache_knows_prompt_and_stages(exact, published):
    assert exact.prompt_len == 23 and list(exact.predicting) == list(range(22, 33))
    assert [s.short for s in stages(published)] == [
        "embed", "L0.attn", "L0.mlp", "L1.attn", "L1.mlp"]
    assert exact["resid_mid", 0] is exact["blocks.0.hook_resid_mid"]
    assert [r.what for r in exact.roundings] == ["exp(-40)", "exp(-1000)"]


def test_names_filter_takes_a_list(published):
    _, cache = run_with_cache(published, "1+2", ns=FloatSystem(),
                              names=["hook_embed", "unembed.hook_out"])
    assert sorted(cache) == ["hook_embed", "unembed.hook_out"]


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_exact_identities_at_the_cache_level(variant):
    cache = exact_run("%d+%d" % COUNTEREXAMPLE, variant)[1]
    model = cache.model
    for i in range(2):
        for pos in range(len(cache.tokens)):
            pre, attn = cache.view(("resid_pre", i), pos), cache.view(("attn_out", i), pos)
            mid, mlp = cache.view(("resid_mid", i), pos), cache.view(("mlp_out", i), pos)
            post = cache.view(("resid_post", i), pos)
            assert {s: pre[s] + attn[s] for s in pre} == mid
            assert {s: mid.get(s, 0) + mlp[s] for s in mlp} == post
    assert cache["embed"] == cache["resid_pre", 0]
    post0, pre1 = cache["resid_post", 0], cache["resid_pre", 1]
    assert [row[:len(r)] for row, r in zip(post0, pre1)] == pre1
    readout = [model.slots.index(model.readout[t]) for t in cache.labels("logits")]
    assert cache["logits"] == [[-row[s] for s in readout] for row in cache["resid_post", 1]]


def test_scores_are_exact_log_scores(exact):
    row = exact["attn_scores", 0][3][22]
    assert row[0] == LogScore(Fraction(-40), -22, Fraction(10))
    assert row[21] == LogScore(Fraction(-1000), -1, Fraction(10))
    assert row[22] == Fraction(-40)  # distance 0: the ln part vanishes
    assert show.fmt(row[0]) == "-40 - 22*ln 10"


# --- the trace-point page ----------------------------------------------------------------

def test_docs_list_exactly_the_recorded_names(exact):
    page = (ROOT / "docs" / "trace-points.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([^`]+)` \|", page, re.M))
    recorded = {re.sub(r"^blocks\.[0-9]+\.", "blocks.{i}.", name) for name in exact}
    assert documented == recorded


# --- JSON --------------------------------------------------------------------------------

def round_trip(cache):
    text = io.StringIO()
    trace_json.dump(cache, text)
    return text.getvalue(), trace_json.load(io.StringIO(text.getvalue()))


def test_json_round_trip_fraction(published):
    keep = lambda n: n.startswith("blocks.0") or n == "unembed.hook_out"  # noqa: E731
    _, cache = run_with_cache(published, "12+34", names=keep)
    text, again = round_trip(cache)
    assert again.values == cache.values and again.tokens == cache.tokens
    assert again.roundings == cache.roundings and again.prompt_len == 23
    doc = json.loads(text)
    assert doc["number_system"] == {"name": "fraction", "exp_digits": 50,
                                    "describe": cache.ns.describe()}
    assert doc["trace_points"]["blocks.0.hook_resid_mid"]["value"][22][4] == "1/24"
    assert doc["trace_points"]["blocks.0.attn.hook_attn_scores"]["value"][3][22][0] == \
        "-40 - 22*ln 10"
    assert doc["trace_points"]["blocks.0.attn.hook_pattern"]["value"][3][0][1] is None
    assert doc["slots"] == list(SLOTS) and doc["text"] == cache.text


@pytest.mark.parametrize("ns", [DecimalSystem(30), FloatSystem()], ids=["decimal", "float"])
def test_json_round_trip_decimal_and_float(published, ns):
    _, cache = run_with_cache(published, EXPR, ns=ns)
    text, again = round_trip(cache)
    assert again.values == cache.values
    value = cache["z", 1][32][0]
    doc = json.loads(text)
    assert doc["trace_points"]["blocks.1.attn.hook_z"]["value"][32][0] == (
        repr(value) if isinstance(value, float) else str(value))
    assert "blocks.1.hook_resid_post" in doc["derived"]  # recomputed exactly on loading
    if isinstance(value, Decimal):
        assert type(again["resid_post", 1][32][5]) is Decimal and again.ns.digits == 30


@pytest.mark.slow
def test_json_round_trip_whole_exact_trace(exact):
    assert round_trip(exact)[1].values == exact.values


@pytest.mark.parametrize("text, message", [
    ("{", "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ("[]", 'expected a JSON object with "format": "tinyadder-trace/1"'),
    ('{"format": "tinyadder-trace/1"}', "missing field 'model'"),
])
def test_malformed_json_is_a_clear_error(text, message):
    with pytest.raises(trace_json.TraceFormatError, match=re.escape(message)):
        trace_json.load(io.StringIO(text))


def test_bad_value_names_where(published):
    _, cache = run_with_cache(published, "1+2", ns=FloatSystem(), names="hook_embed")
    doc = trace_json.to_json(cache)
    doc["trace_points"]["hook_embed"]["value"][3][2] = "ten"
    with pytest.raises(trace_json.TraceFormatError) as info:
        trace_json.from_json(doc)
    assert str(info.value) == ("not a tinyadder trace: bad value 'ten' at "
                               "trace_points['hook_embed'][3][2]: could not convert string "
                               "to float: 'ten'")


@pytest.fixture(scope="module")
def small_traces():
    """Traces of the repaired model at N = 1 (cheap to recompute): fraction and float."""
    from tinyadder.construction import build
    model = build("repaired", 1)
    return {ns: trace_json.to_json(run_with_cache(model, "3+4", ns=ns)[1])
            for ns in ("fraction", "float")}


def _without(key):
    def edit(doc):
        del doc[key]
    return edit


def _set_value(name, value, at=(3, 4)):
    def edit(doc):
        doc["trace_points"][name]["value"][at[0]][at[1]] = value
    return edit


def _exp_digits(doc):
    doc["number_system"]["exp_digits"] += 1


def _dropped_slot(doc):
    doc["slots"] = doc["slots"][:-1]


TRACE_EDITS = {  # (number system, edit, message)
    "no vocab": ("float", _without("vocab"), "missing field 'vocab'"),
    "no text": ("float", _without("text"), "missing field 'text'"),
    "no addition": ("float", _without("addition"), "missing field 'addition'"),
    "no slots": ("float", _without("slots"), "missing field 'slots'"),
    "a slot dropped": ("float", _dropped_slot, "its slots are not the model's"),
    "exp_digits changed": ("fraction", _exp_digits, "is not what tinyadder36-repaired "
                                                    "computes on these tokens in fraction ("),
    "inf": ("float", _set_value("hook_embed", "inf", (2, 0)),
            "trace_points['hook_embed'][2][0] is not what tinyadder36-repaired computes on "
            "these tokens in float (IEEE"),
    "nan": ("float", _set_value("blocks.0.attn.hook_z", "nan", (4, 0)),
            "trace_points['blocks.0.attn.hook_z'][4][0] is not what"),
    "10,001 digits": ("fraction", _set_value("hook_embed", "1" + "0" * 10000, (2, 0)),
                      "trace_points['hook_embed'][2][0] is not what"),
}


@pytest.mark.parametrize("case", sorted(TRACE_EDITS))
def test_a_trace_that_contradicts_itself_or_the_model_is_refused(small_traces, case):
    """Stored points are checked against a recomputation, not only the derived ones; the
    fields the docstring calls required are."""
    ns, edit, message = TRACE_EDITS[case]
    doc = json.loads(json.dumps(small_traces[ns]))
    edit(doc)
    with pytest.raises(trace_json.TraceFormatError) as caught:
        trace_json.load(io.StringIO(json.dumps(doc)))
    assert message in str(caught.value)


def test_cli_json_is_the_whole_trace():
    status, out, err = run_cli("1+2", "--json", "--number", "float")
    assert status == 0 and err == ""
    doc = json.loads(out)
    assert doc["text"] == "<bos>0000000001+0000000002=00000000003"
    assert len(doc["trace_points"]) + len(doc["derived"]) == 30


# --- the text trace ----------------------------------------------------------------------

GOLDEN = """\
position 32 (s1): '0', predicts s0 '2' at 33
  layer 1 attention (blocks.1.hook_resid_mid)
    L1.h0 attends from 32 to 0..32:
      0-32:1/34  sink:1/34
   *cand1           ~29.5381  *cand2          ~0.126316
   *cand3          ~-29.2854
  layer 1 FFN (blocks.1.hook_resid_post)
   *cand1        ~1.17521e+8  *cand2        ~1.46933e+8
   *cand3        ~1.76344e+8
  readout: logits (> marks the winner)
    0: ~-5.89499e+7   1: ~-2.95382e+7  >2: ~-126390   3: ~-2.92855e+7
    4: ~-5.86973e+7   5: ~-8.81090e+7   6: ~-1.17521e+8   7: ~-1.46933e+8
    8: ~-1.76344e+8   9: ~-2.05756e+8
    winner '2', lead ~2.91591e+7 over runner-up '3'
"""


def test_golden_excerpt():
    status, out, _ = run_cli(EXPR, "--trace", "--pos", "32", "--layer", "1",
                             "--slots", "cand1,cand2,cand3")
    assert status == 0
    assert out == ("<bos>7650676663+0149460439=07800137102\n"
                   "numbers: fraction (exact; e^x rounded to 50 digits once per argument x)\n"
                   "rounded: exp(-40), exp(-1000)\n"
                   "values exact when short; ~ = rounded to 6 significant digits for display\n"
                   "* = changed by this half-layer\n\n" + GOLDEN)


def test_default_trace_covers_sum_positions_within_80_columns(exact):
    text = show.render(exact)
    assert re.findall(r"^position (\d+)", text, re.M) == [str(p) for p in range(22, 33)]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.count("  embedding (hook_embed)") == 11
    assert "\x1b" not in text
    # exact when short, rounded and marked otherwise
    assert "*scale               1/24" in text and "~-10.0000" in text


def test_exact_prints_full_rationals(exact):
    lines = show.slot_lines(exact, 1, 23, slots=["count"], exact=True)
    count = exact.view(("resid_mid", 0), 23)["count"]
    assert lines == [f"    *count = {show.rational_text(count)}"]
    n, d = lines[0].split(" = ")[1].split("/")
    assert Fraction(trace_json._int(n), trace_json._int(d)) == exact["resid_mid", 0][23][3]


@pytest.mark.parametrize("argv, message", [
    (["--trace", "--pos", "34"], "position 34 is outside the sequence; use 0 to 33"),
    (["--trace", "--slots", "count,carry"], "unknown slot 'carry'"),
    (["--trace", "--layer", "2"], "no layer 2; use 0 to 1"),
    (["--pos", "3"], "--pos needs --trace or --step"),
    (["--json", "--trace"], "choose one of --trace, --json and --step"),
    (["-", "--step"], "--step takes exactly one expression (not '-')"),
    (["--json", "--check"], "--check needs --trace, not --json"),
    (["--step", "--layer", "0"], "--layer needs --trace, not --step"),
    (["--layer", "0"], "--layer needs --trace"),
    (["--slots", "count"], "--slots needs --trace or --step"),
])
def test_bad_trace_options_are_one_line_exit_2(argv, message):
    status, out, err = run_cli("1+2", *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("tinyadder: error: ")


def test_bad_position_list(capsys):
    assert main(["1+2", "--trace", "--pos", "2x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad position '2x'; use numbers and ranges" in err


# --- step-through ------------------------------------------------------------------------

def test_piped_step_session(published):
    _, cache = run_with_cache(published, "12+34", ns=FloatSystem())
    out = io.StringIO()
    session(cache, io.StringIO("n\ns scale\na h4\np\nj 9\nzz\nq\n"), out, positions=[22],
            slots=["scale"])
    text = out.getvalue()
    assert "[1/6] position 22: '=', predicts s10 '0' at 23\n  embedding (hook_embed)" in text
    assert "(step) n\n[2/6] position 22" in text
    assert "(step) s scale\nscale ~ 0.0416667, exactly:\n0.041666666666666664\n" in text
    assert "(step) a h4\n    L0.h4 attends from 22 to 0..22:\n      0-22:" in text
    assert "(step) p\n[1/6]" in text
    assert "(step) j 9\nno position '9' here; positions 22 to 22\n" in text
    assert "(step) zz\nunknown command 'zz'; n next, p prev" in text
    assert text.endswith("(step) q\n")


def test_step_ctrl_c_ends_quietly(published):
    class Interrupted(io.StringIO):
        def readline(self, *args):
            raise KeyboardInterrupt

    _, cache = run_with_cache(published, "1+2", ns=FloatSystem())
    out = io.StringIO()
    session(cache, Interrupted(), out, positions=[22])
    assert out.getvalue().endswith("(step) \n")


def test_step_continue_and_end_of_input():
    """Through the command line, in process (the session on a real standard input is
    test_bad_input's --step, under a memory cap)."""
    status, out, err = run_cli("12+34", "--step", "--number", "float", "--pos", "31,32",
                               stdin="c\n")
    assert status == 0 and err == ""
    assert out.count("readout: logits") == 2 and out.endswith("end of trace\n")
    status, out, err = run_cli("12+34", "--step", "--number", "float", stdin="n\n")
    assert status == 0 and err == "" and "[2/66]" in out
    assert out.endswith("(step) n\n" + out.split("(step) n\n")[1])


# --- the program view --------------------------------------------------------------------

def test_program_view_of_the_published_model(published):
    text = program.listing(published)
    assert "  count += attend(q = 1, k = 960*special - 1000, slope = ln 10," in text
    assert "    cand3 += relu(scale)*(3500000000000*count)" in text
    assert "    eq += relu(10000*cand0)*(100) + relu(-10000*cand0)*(100)" in text
    assert "    every slot (16) += attend(q = 0, k = 0, v = 100*digit_pos + 15)" in text
    assert "    h0, h1, h2: no effect" in text
    table = {line.split()[0]: line for line in program.slot_table(published)}
    assert table["cand0"].split() == ["cand0", "L0.mlp,", "L1.attn,", "L1.mlp", "L1.mlp,",
                                      "readout", "readout"]
    assert table["digit_pos"].split()[-1] == "L1.attn"
    assert max(len(line) for line in text.splitlines()) <= 80
    assert run_cli("program")[0] == 0  # the CLI dispatches the subcommand


def with_layer0_attention(model, **tables):
    l0 = model.blocks[0]
    block = replace(l0, attn=replace(l0.attn, **tables))
    return Model(**{**model.__dict__, "name": "changed", "blocks": (block,) + model.blocks[1:]})


def test_program_view_follows_the_weights(published):
    before = program.listing(published)
    after = program.listing(with_layer0_attention(published, W_K={"special": {"h3": 961}}))
    assert "961*special - 1000" in after and "961" not in before
    # without its value map head 3 is dead: count loses its layer-0 writer
    dead = with_layer0_attention(published, W_V={"eq": {"h4": 1}})
    assert "h0, h1, h2, h3: no effect" in program.listing(dead)
    table = {line.split()[0]: line for line in program.slot_table(dead)}
    assert table["count"].split()[1] == "L1.attn,"
    assert table["special"].split()[-1] == "readout"  # still read by h3's key? no: h3 is dead
    assert "L0.attn" not in table["special"]


def test_program_view_of_the_repaired_readout(repaired):
    text = program.listing(repaired)
    assert "    err0 += relu(10000*cand0)*(100) + relu(-10000*cand0)*(100)" in text
    table = {line.split()[0]: line for line in program.slot_table(repaired)}
    assert table["eq"].split()[-1] == "L0.attn" and table["err9"].split()[-1] == "readout"


# --- probes ------------------------------------------------------------------------------

def test_intended_values_are_the_spec(published, exact):
    rows, tokens = probes.intended(published, A, B)
    assert "".join(tokens[1:]) == "7650676663+0149460439=07800137102"
    mid0, mid1 = rows["blocks.0.hook_resid_mid"], rows["blocks.1.hook_resid_mid"]
    for i in range(34):
        assert mid0[i]["scale"].value == (Fraction(1, i + 2) if i >= 22 else 0)
        assert mid0[i]["scale"].slack == 0
    assert mid0[1]["count"].value == Fraction(1, 10)  # place value 10^9, scaled by 10^-10
    assert abs(mid0[23]["count"].value + 1) < Fraction(1, 10 ** 11)  # 10^10, to subtract
    # from '=' on, the layer-1 average is 1000 * (remaining value) / (i+2) plus the bias
    for i in range(22, 33):
        remaining = (A + B) % 10 ** (33 - i)
        avg = mid1[i]["eq"].value - rows["blocks.0.hook_resid_post"][i]["eq"].value
        unit = Fraction(1000, i + 2)  # one unit of the digit predicted at i
        # the prompt's digit_pos sum is 10 (a + b) plus an error below 1 (spec)
        assert 0 <= avg - Fraction(1000 * remaining + 15 * (i + 1), i + 2) < unit / 10
        assert mid1[i]["cand0"].slack < unit / 1000  # the probe is tight
    for u in range(10):  # cand_u tracks (remaining value) - (u + 1/2) * place, within a unit
        want = Fraction(1000 * ((A + B) - (2 * u + 1) * 10 ** 10 // 2) + 15 * 23, 24)
        assert abs(mid1[22][f"cand{u}"].value - want) < Fraction(1000, 24) / 10


def test_check_passes_a_correct_run(exact):
    result = probes.check(exact, A, B)
    assert result.first is None and result.checked == 34 * (5 + 5 + 16 * 3) + 11
    assert result.verdict().startswith("check: all 1983 probed values within tolerance")


def test_check_points_at_the_readout_of_the_counterexample(flawed):
    result = probes.check(flawed, *COUNTEREXAMPLE)
    first = result.first
    assert (first.pos, first.stage, first.actual, first.intended) == (
        23, "unembed.hook_out", "7", "6")
    assert result.verdict() == ("check: first departure at position 23, readout: the model "
                                "picks '7', intended '6' (a + b = 6999999940)")


@pytest.mark.parametrize("spec, factor", [
    ("float", 1 + 1e-6),
    pytest.param("fraction", 1 + Fraction(1, 10 ** 6), marks=pytest.mark.slow)])
def test_check_finds_a_patched_slot(published, spec, factor):
    """In float by default; exactly under slow (the patched exact run takes seconds: every
    later value carries the nudge's denominator)."""
    count = SLOTS.index("count")

    def nudge(rows):  # position 15: a digit of b, count off by one part in a million
        return [[x * factor if (pos, j) == (15, count) else x
                 for j, x in enumerate(row)] for pos, row in enumerate(rows)]

    _, cache = run_with_cache(published, EXPR, ns=spec,
                              patch={"blocks.0.hook_resid_mid": nudge})
    first = probes.check(cache, A, B).first
    assert (first.pos, first.stage, first.slot) == (15, "blocks.0.hook_resid_mid", "count")


def test_cli_check_marks_the_readout():
    status, out, err = run_cli("%d+%d" % COUNTEREXAMPLE, "--trace", "--check", "--pos", "23",
                               "--number", "float")
    assert status == 1 and "wrong" in err
    assert "! = departs from its intended value" in out
    assert "    ! intended '6'" in out
    assert out.endswith("check: first departure at position 23, readout: the model picks "
                        "'7', intended\n  '6' (a + b = 6999999940)\n")


def test_a_patched_trace_names_its_patch_and_still_checks_the_rest():
    """A patched run's trace lists the points its patch replaced; loading takes those as given
    and recomputes the rest from them, so an edit elsewhere is still refused."""
    import io
    import json
    from tinyadder import build, run_with_cache
    from tinyadder.analysis.trace_json import TraceFormatError, dump, load
    shifted = {"blocks.1.hook_resid_mid": lambda rows: [[x + 1 for x in r] for r in rows]}
    _, patched = run_with_cache(build("published"), "12+34", ns="float", patch=shifted)
    text = io.StringIO()
    dump(patched, text)
    doc = json.loads(text.getvalue())
    assert doc["patched"] == ["blocks.1.hook_resid_mid"]
    assert load(io.StringIO(text.getvalue())).values == patched.values
    del doc["patched"]
    with pytest.raises(TraceFormatError, match="blocks.1.hook_resid_mid"):
        load(io.StringIO(json.dumps(doc)))
