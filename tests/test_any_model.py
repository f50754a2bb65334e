"""Every command that takes --model on models other than TinyAdder-36: the two hand-written
one-digit adders of tests/models (adder1: softmax1, a fixed attention bias, ReGLU, a
negative-error readout; rope1: ordinary softmax, RoPE at head dimension 2 with a q RMSNorm, a
fixed -inf bias, positional rows, SwiGLU, a parabolic linear readout, the answer least
significant digit first and a stop token), and float overflow in TinyAdder-36 at N = 26."""

import io
import json
import re

import pytest

from tinyadder import build, number_system, run
from tinyadder.addition import add, encode
from tinyadder.analysis import explain, heat, ledger, probes, program, show, trace_json
from tinyadder.analysis.verify import check
from tinyadder.cache import run_with_cache
from tinyadder.cli import main
from tinyadder.numbers import for_model

ADDER1, ROPE1 = "tests/models/adder1.json", "tests/models/rope1.json"


def cli(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO(stdin))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def rope1():
    return build(ROPE1)


@pytest.fixture(scope="module")
def adder1():
    return build(ADDER1)


def test_rope1_adds_every_pair(rope1):
    """The hand-written model is an adder (so the views below trace a working model)."""
    assert all(add(rope1, "float", a, b) == a + b for a in range(10) for b in range(10))
    assert add(rope1, "fraction", 9, 9) == 18 and add(rope1, "fraction", 0, 9) == 9


# --- one answer per input -------------------------------------------------------------------

@pytest.mark.parametrize("path, spec, a, b", [
    (ADDER1, "fraction", 7, 8), (ADDER1, "float32", 9, 9),
    (ROPE1, "fraction", 7, 8), (ROPE1, "float", 5, 5), (ROPE1, "float32", 9, 0)])
def test_every_path_gives_the_same_digits(path, spec, a, b):
    """plain, --trace, --json, --step, verify and the API read the same sum, also where the
    tokens hold the answer least significant digit first, then '<eos>'."""
    line = f"{a}+{b}={a + b:02d}"
    options = ["--model", path, "--number", spec]
    assert cli(*options, f"{a}+{b}") == (0, line + "\n", "")
    traced = cli(*options, "--trace", f"{a}+{b}")[1].splitlines()
    stepped = cli(*options, "--step", f"{a}+{b}", stdin="q\n")[1].splitlines()
    dumped = json.loads(cli(*options, "--json", f"{a}+{b}")[1])
    model = build(path)
    ns = for_model(number_system(spec), model)
    _, cache = run_with_cache(model, encode(model, a, b), ns=ns)
    tokens = cache.text
    read = [] if line in tokens else [f"as an addition: {line}"]
    assert traced[:1 + len(read)] == stepped[:1 + len(read)] == [tokens] + read
    assert dumped["text"] == tokens and dumped["addition"] == line
    assert run(model, ns, a, b) == run(model, ns, a, b, cache=False) == line
    assert add(model, ns, a, b) == a + b
    assert check(model, ns, {"x": [(a, b)]}).failures == []
    assert cli("verify", *options, "--cases", "3")[0] == 0


def test_rope1_writes_its_answer_reversed_then_stops(rope1):
    _, cache = run_with_cache(rope1, "7+8", ns="float")
    assert cache.text == "<bos>7+8=51<eos>"
    assert show.render(cache).splitlines()[1] == "as an addition: 7+8=15"


def test_a_model_that_writes_no_number_gets_a_warning_not_a_traceback(tmp_path):
    """A readout that picks '<eos>' where a digit belongs: the main command prints what the
    model wrote and warns, exit status 1."""
    text = open(ROPE1).read().replace('"<eos>": "-50"', '"<eos>": "50"')
    path = tmp_path / "stops.json"
    path.write_text(text)
    status, out, err = cli("--model", str(path), "--number", "float", "7+8")
    assert (status, out) == (1, "7+8=<eos><eos><eos>\n")
    assert err.startswith(f"tinyadder: warning: the {path} model's sum <eos><eos><eos> is wrong")


# --- the program listing -------------------------------------------------------------------

def test_program_lists_a_rope_softmax_swiglu_model(rope1):
    text = program.listing(rope1)
    for line in [
            "    f4, f5, f6 += W_pos[p] at position p (a table, positions 4..6)",
            "  L0.attn  (softmax over j <= i of q_i.k_j/sqrt(2) + bias[i][j]; x += W_O z)",
            "    q_norm: x/sqrt(mean(x^2) + 1/1000000) over each head's q lanes (RMSNorm)",
            "    rotary: q and k lanes (c, c + 1) turn by p*freq_c at position p, freq = 1",
            "    h = attend(q = (1, 0), k = (sep, sep), v = (2*x, 0))",
            "    s += h.0",
            "  L0.mlp  (SwiGLU: unit = silu(gate)*(up)); the stream widens from 6 to 7 slots",
            "    T += -1/2*silu(20*s - 180)*(f4) + 1/2*silu(20*s - 200)*(f4)",
            "  readout  (logit_t = W_U x + b_U; the first largest logit wins)"]:
        assert line in text.splitlines(), line
    assert "'9' = 18*T - 81  '<eos>' = 100*f6 - 50" in text
    table = {row.split()[0]: row.split()[1:] for row in program.slot_table(rope1)[1:]}
    assert table["f6"] == ["embed", "readout", "readout"]   # W_pos writes it, the head reads it
    assert table["sep"] == ["embed", "L0.attn", "L0.attn"]  # the keys


def test_program_shows_a_fixed_attention_bias(adder1):
    text = program.listing(adder1)
    assert "    bias[h0] = -inf except 4->1: 0, 4->3: 0, 5->1: 0, 5->3: 0" in text
    assert "  L0.attn  (softmax1 over j <= i of q_i*k_j + bias[i][j]; x += W_O z)" in text
    assert "    x = d on digit d" in text


# --- attention rows, heat, the parameter ledger --------------------------------------------

def test_attention_rows_show_a_sink_only_for_softmax1(adder1, rope1):
    _, one = run_with_cache(adder1, "7+8")
    assert show.attention_row(one, 0, "h0", 4)[1].split() == [
        "0:masked", "1:1/3", "2:masked", "3:1/3", "4:masked", "sink:1/3"]
    _, plain = run_with_cache(rope1, "7+8", ns="float")
    assert show.attention_row(plain, 0, "h", 4)[1].split() == [
        "0:masked", "1:0.5", "2:masked", "3:0.5", "4:masked"]
    assert heat.heat_lines(one, 0, "h0", 4)[0].split() == ["L0.h0", "0-4", "_@_@_", "sink", "@"]
    assert heat.heat_lines(plain, 0, "h", 4)[0].split() == ["L0.h", "0-4", "_@_@_"]


def test_the_ledger_lists_a_fixed_attention_bias_as_its_file_writes_it(adder1):
    (line,) = [x for x in ledger.ledger(adder1) if x.tensor.name == "blocks.0.attn.bias"]
    assert dict(line.tensor.entries) == {("h0@4", "1"): 0, ("h0@4", "3"): 0,
                                         ("h0@5", "1"): 0, ("h0@5", "3"): 0}
    assert line.rule.endswith("; -inf at every entry it does not list") and line.params == 0
    assert ledger.totals(ledger.ledger(adder1)).params == 44


# --- JSON traces ----------------------------------------------------------------------------

def test_a_json_trace_with_positions_loads_back(rope1):
    """hook_pos_embed holds null where the positional table has no entry (no term)."""
    _, cache = run_with_cache(rope1, "7+8", ns="float")
    text = io.StringIO()
    trace_json.dump(cache, text)
    again = trace_json.load(io.StringIO(text.getvalue()), rope1)
    assert again.values == cache.values and again.text == "<bos>7+8=51<eos>"
    doc = json.loads(text.getvalue())
    assert doc["trace_points"]["hook_pos_embed"]["value"][4] == [
        None, None, "1.0", None, None, None]
    doc["addition"] = "7+8=51"
    with pytest.raises(trace_json.TraceFormatError, match="'addition' is not what 'tokens'"):
        trace_json.from_json(doc, rope1)
    doc["tokens"][5] = rope1.vocab.index("+")
    with pytest.raises(trace_json.TraceFormatError,
                       match="'tokens': '[+]' after the prompt, which the readout cannot write"):
        trace_json.from_json(doc, rope1)


def test_the_first_state_of_a_model_with_positions_includes_them(rope1):
    _, cache = run_with_cache(rope1, "7+8", ns="float")
    lines = show.stage_lines(cache, 0, 4)
    assert lines[0] == "  embedding and positions (blocks.0.hook_resid_pre)"
    assert re.search(r" f4 +1\.0", "\n".join(lines))


# --- float overflow -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def overflowed():
    """TinyAdder-36 at N = 26 in float32: the place values overflow to inf, then nan."""
    a, b = 10 ** 26 - 1, int("1" * 26)
    return run_with_cache(build("published", 26), f"{a}+{b}", ns="float32")[1], a, b


def test_probes_report_a_value_that_is_not_finite(overflowed):
    cache, a, b = overflowed
    found = probes.check(cache, a, b, 26)
    assert (found.first.pos, found.first.slot) == (0, "count")
    assert found.verdict().endswith("slot count: nan, intended 1 +- ~0.00000476837")
    assert probes.overflow(cache) == "blocks.0.attn.hook_v h3 is nan at position 0"


def test_explain_narrates_the_positions_that_overflowed(overflowed):
    cache, a, b = overflowed
    found = explain.decisions(cache)
    assert all(isinstance(d, explain.Overflow) for d in found) and found[0].pos == 54
    text = explain.narrate(cache, a, b)
    assert "positions 54 to 80: write '000000000000000000000000000'; the figures cannot be" in text
    assert text.endswith("written at position 55: the\n  number system overflowed\n")


@pytest.mark.parametrize("command", [["explore", "-o"], ["figure", "flaw", "-o"]])
def test_the_pictures_refuse_a_run_that_overflowed(command, overflowed, tmp_path):
    cache, a, b = overflowed
    path = tmp_path / "out"
    status, out, err = cli(*command, str(path), "--digits", "26", "--number", "float32",
                           f"{a}+{b}")
    assert (status, out) == (2, "") and not path.exists()
    assert err == (f"tinyadder {command[0]}: error: the run in float32 overflows "
                   f"(blocks.0.attn.hook_v h3 is nan at position 0): the figures are read "
                   f"from finite values; use --number decimal or fraction\n")


def test_precision_finds_where_a_linear_readout_model_first_rounds_wrong(tmp_path):
    """rope1 with its T lifted by 1/2 + 10^-7: exactly it writes 18 for 7 + 0 (T = 7.5 +
    ~10^-7), float32 rounds T to 7.5, a tie between 7 and 8 that the first maximum breaks.
    The first answer token is the units digit (least significant first)."""
    text = open(ROPE1).read().replace('"W_out": {"lo4"',
                                      '"b_out": {"T": "1/2 + 1e-7"}, "W_out": {"lo4"')
    path = tmp_path / "lifted.json"
    path.write_text(text)
    status, out, err = cli("precision", "--model", str(path), "--number", "float32", "7+0")
    assert status == 1 and out.splitlines()[:2] == ["exact (fraction): 7+0=18",
                                                    "float32: 7+0=17"]
    assert " ".join(out.split()).startswith(
        "exact (fraction): 7+0=18 float32: 7+0=17 first wrong digit: sum digit 1 of 2 "
        "(place 10^0), decided at position 4: float32 7, exact 8; exact margin there: the "
        "runner-up's logit is below the winner's by 1.711e-07 in float32 the logit of 7 is "
        "above that of 8 there by 0.000e+00")
    assert out.splitlines()[-1] == ("first half-layer whose rounding error exceeds the "
                                    "margin: layer 0 FFN; slot: T")


@pytest.mark.parametrize("seed", range(6))
def test_every_view_of_a_model_with_every_part_of_the_format(seed):
    """test_modelfile's rich random model (norms, head dimension 2 with a shared key/value
    head, RoPE, a scale, a fixed bias with -inf, positions, plain or gated FFNs of every
    activation, a linear or tied readout, the answer reversed with a stop token): the
    listing, the text trace with heat, the step-through, a JSON round trip of a trace whose
    answer is not a sum, and one answer."""
    import random
    from test_modelfile import _rich_model
    model = _rich_model(random.Random(seed))
    text = program.listing(model)
    lines = text.splitlines()
    assert {"    bias[h0] = 0", "    bias[h1] = 0 except 3->0: -inf, 3->2: 80",
            "    x2, x3 += W_pos[p] at position p (a table, positions 0..3)",
            "    ln1: x/sqrt(mean(x^2) + 1/1000000) over x0..x3 (RMSNorm)",
            "    no effect (no output map)"} <= set(lines)
    assert "    x1 = 1 on '2'" in lines  # one digit's entry: not k*d on every digit
    assert f"  L0.attn  ({model.blocks[0].attn.softmax} over j <= i of q_i.k_j/(1/sqrt(2)) " \
        f"+ bias[i][j]; x += W_O z)" in lines
    assert "    h0 = attend(q = (" in text and "    h1 = attend(q = (" in text
    _, cache = run_with_cache(model, "12+34", ns="float")
    line = run(model, "float", 12, 34)
    assert show.addition_line(cache) == line
    rendered = show.render(cache, heat=True)
    assert rendered.splitlines()[1] == f"as an addition: {line}"
    assert ("sink" in rendered) == (model.blocks[0].attn.softmax == "softmax1")
    out = io.StringIO()
    from tinyadder.analysis import step
    step.session(cache, io.StringIO("a h0\na 1.h\nc\n"), out)
    assert out.getvalue().endswith("end of trace\n")
    dumped = io.StringIO()
    trace_json.dump(cache, dumped)
    assert trace_json.load(io.StringIO(dumped.getvalue()), model).values == cache.values


def test_the_census_says_in_one_line_that_it_does_not_reach_another_layout():
    """... and gives the generic method's certified bounds instead (0: rope1 adds every
    pair)."""
    status, out, err = cli("census", "--model", ROPE1)
    assert status == 0 and "failing pairs: 0 " in out
    assert err.startswith("tinyadder: census: the method does not reach this model: the "
                          "prompt is not TinyAdder-36's (a token, a, a token, b, a token; the "
                          "sum's N + 1 digits, most significant first); the generic method's "
                          "certified bounds\n")


def test_prove_takes_a_model_the_closed_form_does_not_reach_by_the_generic_method():
    status, out, err = cli("prove", "--model", ROPE1)
    assert status == 0 and "generic method" in out
    assert f"proved: the {ROPE1} model adds all 10^2 pairs of 1-digit numbers right" in out
    assert "the closed form does not reach this model (the prompt is not TinyAdder-36's" in err


def test_a_json_trace_of_a_board_model_loads_by_its_name():
    """The trace names its model; a shipped AdderBoard model is found by that name."""
    model = build("zcbtrak-6")
    _, cache = run_with_cache(model, "1234567891+9876543219", ns="float")
    text = io.StringIO()
    trace_json.dump(cache, text)
    again = trace_json.load(io.StringIO(text.getvalue()))
    assert again.model is model and again.values == cache.values
    assert json.loads(text.getvalue())["addition"] == "1234567891+9876543219=11111111110"


@pytest.mark.parametrize("argv, what", [(["precision"], "the table"),
                                        (["bench", "--long", "20"], "--long")])
def test_views_that_build_each_n_refuse_a_board_model_in_one_line(argv, what):
    status, out, err = cli(*argv, "--model", "zcbtrak-6")
    assert (status, out) == (2, "")
    assert err == (f"tinyadder {argv[0]}: error: {what} builds the model for each N; "
                   f"zcbtrak-6 is written for one N: use published, repaired, variant-28\n")
