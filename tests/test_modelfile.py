"""Model files: the constant grammar, load and dump, the shipped files, a model written by
hand, and every refusal of a bad file (docs/model-format.md)."""

import copy
from fractions import Fraction
import io
import json
from pathlib import Path
import random

import pytest

from tinyadder import add, build, construction, run_with_cache
from tinyadder.analysis import trace_json
from tinyadder.analysis.ledger import ledger, totals
from tinyadder.cli import main
from tinyadder.constants import (NEG_INF, PI, ConstantError, Expr, ExpTerm, Ln, cos, exp,
                                 exp_of, f32, f64, ln, parse, sin, sqrt, text)
from tinyadder.modelfile import MAX_BYTES, MAX_ROWS, ModelFileError, dump, load, loads
from tinyadder.models import names
from tinyadder.weights import MLP, Attention, Block, Model, Norm, Prompt, Unembed, with_entry

ROOT = Path(__file__).resolve().parent.parent
ADDER1 = ROOT / "tests" / "models" / "adder1.json"
PUBLISHED = (ROOT / "tinyadder" / "models" / "published.json").read_text(encoding="utf-8")


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO())
    return status, out.getvalue(), err.getvalue()


# ---- the constant grammar -------------------------------------------------------------------

@pytest.mark.parametrize("source, value", [
    ("-1000", Fraction(-1000)),
    ("11/10", Fraction(11, 10)),
    ("1e-6", Fraction(1, 10 ** 6)),
    ("0.390625", Fraction(25, 64)),
    ("1.5E3", Fraction(1500)),
    ("0x1.52a170p-2", Fraction(0x152a170, 2 ** 26)),
    ("-0x1.8p1", Fraction(-3)),
    ("10^10", Fraction(10 ** 10)),
    ("2^-3", Fraction(1, 8)),
    ("-(3 - 1)^2", Fraction(-4)),
    ("exp(40)", ExpTerm(Fraction(1), Fraction(40))),
    ("exp(-40)/10", ExpTerm(Fraction(1, 10), Fraction(-40))),
    ("1/(exp(-40)/10)", ExpTerm(Fraction(10), Fraction(40))),
    ("exp(1)*exp(2)^2", ExpTerm(Fraction(1), Fraction(5))),
    ("-exp(40)", ExpTerm(Fraction(-1), Fraction(40))),
    ("ln(10)", Ln(Fraction(10))),
    ("ln(1/2)", Ln(Fraction(1, 2))),
    ("2*pi/19", Expr("div", (Expr("mul", (Fraction(2), PI)), Fraction(19)))),
    ("-ln(10)", Expr("neg", (Ln(Fraction(10)),))),
    ("sqrt(2)", Expr("sqrt", (Fraction(2),))),
    ("f32(0.1)", Expr("f32", (Fraction(1, 10),))),
    ("exp(pi)", Expr("exp", (PI,))),
    ("-inf", NEG_INF),
])
def test_each_form_reads_exactly(source, value):
    assert parse(source) == value
    assert type(parse(source)) is type(value)


def test_names_are_earlier_constants():
    names_ = {"S": parse("exp(-40)/10"), "P": parse("10^10")}
    assert parse("(1/10)/S", names_) == exp_of(40)
    assert parse("-(11/10)/S", names_) == exp_of(40) * -11
    assert parse("P*100 + P/2", names_) == Fraction(10 ** 12 + 5 * 10 ** 9)


def _random_constant(rng, depth=0):
    """A constant built with Python's operators, as the package builds them."""
    r = rng.random()
    if depth > 3 or r < 0.3:
        return Fraction(rng.randint(-30, 30), rng.randint(1, 7))
    if r < 0.4:
        return exp_of(Fraction(rng.randint(-50, 50), rng.randint(1, 3))) * rng.randint(1, 4)
    if r < 0.45:
        return Ln(Fraction(rng.randint(1, 20), rng.randint(1, 4)))
    if r < 0.5:
        return PI
    a, b = _random_constant(rng, depth + 1), _random_constant(rng, depth + 1)
    for make in rng.sample([lambda: a + b, lambda: a - b, lambda: a * b, lambda: a / b,
                            lambda: -a, lambda: a ** rng.randint(-2, 3), lambda: exp(a),
                            lambda: ln(a), lambda: sqrt(a), lambda: sin(a), lambda: cos(a),
                            lambda: f32(a), lambda: f64(a)], 13):
        try:
            return make()
        except (TypeError, ZeroDivisionError):
            continue
    return a


def test_text_reads_back_to_the_same_value():
    rng = random.Random(18)
    checked = 0
    for _ in range(3000):
        value = _random_constant(rng)
        try:
            back = parse(text(value))
        except ConstantError as err:  # a domain the grammar refuses: ln(-2), exp(10^5)...
            assert any(w in str(err) for w in ("ln of", "sqrt of", "exp of", "division")), err
            continue
        assert back == value, text(value)
        checked += 1
    assert checked > 2500


@pytest.mark.parametrize("source, problem", [
    ("1e999999", "'1e999999': the exponent of '1e999999' is outside -10000..10000"),
    ("1" * 10 ** 6, "longer than 10,000 characters"),
    ("9" * 5000, "a number of 5,000 digits; at most 4,300"),
    ("exp(10^9)", "'exp(10^9)': exp of 1000000000: its argument must be within -10000..10000"),
    ("exp(10**9)", "'exp(10**9)': '**' at character 7: write ^ for a power"),
    ("10^10^10", "the exponent 10000000000 is outside -10000..10000"),
    ("(10^9000)^9", "a rational of more than 70,000 bits"),
    ("(2^9999)*(2^9999)*(2^9999)*(2^9999)*(2^9999)*(2^9999)*(2^9999)*(2^9999)",
     "a rational of more than 70,000 bits"),
    ("NaN", "'NaN': NaN is not an exact constant"),
    ("inf", "'-inf' alone marks a masked entry"),
    ("-inf + 1", "inf at character 2: '-inf' alone marks a masked entry"),
    ("1/0", "'1/0': division by zero"),
    ("0^-1", "division by zero"),
    ("ln(0)", "ln of 0: ln takes a positive argument"),
    ("sqrt(-2)", "sqrt of -2: sqrt takes a non-negative argument"),
    ("2^(1/2)", "the exponent 1/2 is not an integer"),
    ("2pi", "'2pi' is not a number"),
    ("1.", "'1.' is not a number"),
    ("P", "unknown name 'P' at character 1; no constant is declared before it"),
    ("P(2)", "'P' is not a function"),
    ("exp", "exp takes its argument in parentheses"),
    ("exp(1, 2)", "unexpected character ','"),
    ("(1", "ends too early: ')' expected"),
    ("1 2", "unexpected '2' at character 3"),
    ("", "empty"),
    ("(" * 41 + "1" + ")" * 41, "nested more than 40 levels deep"),
    ("١", "unexpected character '١'"),
])
def test_refusals_are_one_line(source, problem):
    with pytest.raises(ConstantError) as caught:
        parse(source)
    message = str(caught.value)
    assert problem in message and "\n" not in message and len(message) < 300


def test_large_arithmetic_is_budgeted_across_a_file():
    from tinyadder.constants import Budget
    budget, big = Budget(), {"c": parse("7^9000")}
    parse("c*c", big, budget)  # 2 * 25,000 bits of operands: allowed
    with pytest.raises(ConstantError, match="more arithmetic on large numbers than one file"):
        for _ in range(100):
            parse("c*c", big, budget)


# ---- load and dump ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["published", "repaired", "variant-28"])
def test_shipped_files_are_what_the_construction_writes(name):
    shipped = (ROOT / "tinyadder" / "models" / f"{name}.json").read_text(encoding="utf-8")
    assert shipped == dump(construction.build(name))
    assert name in names()


@pytest.mark.parametrize("name, digits", [("published", 1), ("repaired", 3),
                                          ("published", 2000)])
def test_round_trip(name, digits):
    text_ = dump(construction.build(name, digits))
    assert dump(loads(text_)) == text_


def _facts(x):
    """A model as nested tuples of its fields, for ==."""
    if hasattr(x, "__dataclass_fields__"):
        return (type(x).__name__,) + tuple((f, _facts(getattr(x, f)))
                                           for f in x.__dataclass_fields__)
    if isinstance(x, dict) or hasattr(x, "items"):
        return tuple((k, _facts(v)) for k, v in x.items())
    if isinstance(x, (tuple, list)):
        return tuple(_facts(v) for v in x)
    return x


def test_a_loaded_model_is_the_construction():
    for name in ("published", "repaired"):
        assert _facts(build(name)) == _facts(construction.build(name))
    assert build("published") is build("published")  # read once
    assert build("published", 12).prompt.digits == 12


@pytest.mark.parametrize("ns", [pytest.param("fraction", marks=pytest.mark.slow), "decimal",
                                "float", "float32"])
def test_traces_of_the_file_are_the_constructions_bit_for_bit(ns):
    loaded, built = build("published"), construction.build("published")
    expression = "5193798811+1806201129"
    _, a = run_with_cache(loaded, expression, ns=ns)
    _, b = run_with_cache(built, expression, ns=ns)
    assert a.tokens == b.tokens and a.values == b.values
    out = [io.StringIO(), io.StringIO()]
    trace_json.dump(a, out[0])
    trace_json.dump(b, out[1])
    assert out[0].getvalue() == out[1].getvalue()


def _rich_model(rng):
    """A model with every part the format has: norms, head dimensions, shared key/value heads,
    rotary frequencies, a scale, a fixed attention bias, plain and gated FFNs, positions, a
    linear or tied readout, named and fixed constants, ties, about and a precision."""
    from tinyadder.numbers import Precision
    vocab = tuple(str(d) for d in range(10)) + ("+", "=")
    slots = tuple(f"x{i}" for i in range(6))
    values = [parse("2*pi/19"), parse("f32(1/3)"), parse("sqrt(2)/2"), exp_of(-2) * 3]

    def table(rows, cols):
        rows = {r: {c: rng.choice(values + [Fraction(rng.randint(1, 9), rng.randint(1, 4))])
                    for c in cols if rng.random() < 0.5} for r in rows}
        return {r: row for r, row in rows.items() if row}
    lanes = ("h0.0", "h0.1", "h1.0", "h1.1")
    attn = Attention(heads=("h0", "h1"), head_dim=2, kv_heads=("k",),
                     W_Q=table(slots[:4], lanes), W_K=table(slots[:4], ("k.0", "k.1")),
                     W_V=table(slots[:4], ("k.0", "k.1")), W_O=table(lanes, slots[:4]),
                     b_O={"x0": Fraction(1, 2)},
                     q_norm=Norm(eps=Fraction(1, 10 ** 6), w={"0": parse("50*sqrt(2)")}),
                     k_norm=Norm(eps=Fraction(1, 10 ** 5), mean="multiply", apply="divide"),
                     rope_freqs=(parse("2*pi/19"),), scale=parse("1/sqrt(2)"),
                     scale_op="divide", bias={"h1": {3: {0: NEG_INF, 2: Fraction(80)}}},
                     bias_default=Fraction(0), softmax=rng.choice(["softmax", "softmax1"]))
    mlp = MLP(units=("u0", "u1"), act=rng.choice(["relu", "silu", "gelu", "identity"]),
              gated=rng.random() < 0.5, W_in=table(slots[:4], ("u0", "u1")),
              W_out=table(("u0", "u1"), slots), b_out={"x5": Fraction(1)})
    if mlp.gated:
        mlp = MLP(units=mlp.units, act=mlp.act, W_gate={"x0": {"u0": Fraction(1)}},
                  W_in=mlp.W_in, W_out=mlp.W_out, b_out=mlp.b_out)
    last = Attention(heads=("h",), W_V={"x5": {"h": Fraction(3)}}, W_O={"h": {"x1": 1}},
                     mask=Fraction(-10 ** 9), softmax="softmax")
    kind = rng.choice(["linear", "tied"])
    unembed = (Unembed("linear", vocab, W_U={"x1": {"3": Fraction(2)}}, b_U={"4": -1})
               if kind == "linear" else
               Unembed("tied", vocab, scale={"x0": Fraction(1, 2)}, b_U={"=": -1}))
    return Model(
        name="rich", vocab=vocab, slots=slots, width_embed=4,
        W_E={"1": {"x0": Fraction(1)}, "2": {"x0": Fraction(2), "x1": Fraction(1)}},
        W_pos={0: {"x2": Fraction(1)}, 3: {"x3": parse("cos(2*pi/19)")}},
        pos_role=rng.choice(["fixed", "learned"]),
        blocks=(Block(attn, mlp, 4, 6, ln1=Norm(eps=Fraction(1, 10 ** 6))),
                Block(last, MLP(units=("w",), W_in={"x1": {"w": Fraction(1)}}), 6, 6,
                      ln2=Norm(eps=Fraction(1, 10 ** 5), w={"x1": Fraction(2)}))),
        ln_final=Norm(eps=Fraction(1, 10 ** 6)),
        unembed=unembed,
        prompt=Prompt(2, ("a", "+", "b", "="), operands="lsb", answer="lsb", stop="="),
        roles={"W_E": "embedding"},
        meta={"precision": Precision(45, "a test")},
        about={"title": "rich", "params_claimed": 3, "dtype": "float32",
               "source": {"repo": "r", "url": "u"}, "notes": "n"},
        constants={"one": Fraction(1), "F": parse("2*pi/19")}, fixed=("F",),
        ties=(("W_E[1][x0]", "W_E[2][x1]"),))


@pytest.mark.parametrize("seed", range(12))
def test_every_part_of_the_format_round_trips(seed):
    model = _rich_model(random.Random(seed))
    text_ = dump(model)
    back = loads(text_)
    assert dump(back) == text_
    assert _facts(back) == _facts(model)
    assert '"x0": "one"' in text_ and '"freq": "F"' in text_  # entries named by their constant


def test_dump_leaves_zeros_out():
    model = with_entry(construction.build("published"), "blocks.0.attn.W_K", ("special", "h3"),
                       0)
    text_ = dump(model)
    assert '"W_K"' not in text_ and dump(loads(text_)) == text_


def test_a_model_without_a_prompt_is_counted_but_does_not_add(tmp_path):
    doc = json.loads(ADDER1.read_text(encoding="utf-8"))
    del doc["prompt"]
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert load(path).prompt is None
    status, out, _ = run_cli(["params", "--model", str(path)])
    assert status == 0 and f"read from {path}\n" in out
    status, _, err = run_cli(["--model", str(path), "1+2"])
    assert (status, err) == (2, f"tinyadder: error: the model {path} does not add: it has no "
                                f"prompt\n")
    with pytest.raises(TypeError, match="a model is a name such as 'published' or the path"):
        build(3)


# ---- a model written by hand ----------------------------------------------------------------

@pytest.fixture(scope="module")
def adder1():
    return load(ADDER1)


def test_the_hand_written_adder_adds_every_pair(adder1):
    assert [add(adder1, "fraction", a, b) for a in range(10) for b in range(10)] == \
        [a + b for a in range(10) for b in range(10)]
    assert add(adder1, "float32", 9, 9) == 18


def test_the_hand_written_adder_traces_and_verifies():
    status, out, err = run_cli(["--model", str(ADDER1), "7+8", "--trace", "--pos", "5"])
    assert status == 0 and out.startswith("<bos>7+8=15\n")
    assert "0:masked  1:1/3  2:masked  3:1/3  4-5:masked  sink:1/3" in out
    assert "    s                     15  *T                      5" in out
    status, out, err = run_cli(["verify", "--model", str(ADDER1), "--digits", "1",
                                "--cases", "40", "--number", "float"])
    assert status == 0 and "passed 50/50 (100.00%)" in out
    status, out, err = run_cli(["--model", str(ADDER1), "--json", "9+9"])
    assert trace_json.load(io.StringIO(out), load(ADDER1)).text == "<bos>9+9=18"


def test_the_hand_written_adder_is_counted_rule_by_rule(adder1):
    lines = {line.tensor.name: line for line in ledger(adder1)}
    assert totals(ledger(adder1)).params == 44  # 45 values, two of them tied
    assert lines["blocks.0.mlp.b_in"].rule == "ties[0]: 1"
    assert (lines["blocks.1.mlp.b_in"].params, lines["blocks.1.mlp.b_in"].rule) == \
        (0, "ties[0] counted at blocks.0.mlp.b_in")
    assert lines["blocks.0.attn.W_O"].rule == "identity map: free"
    status, out, _ = run_cli(["params", "--model", str(ADDER1)])
    assert status == 0 and "\ntotal               44\n" in out
    assert f"read from {ADDER1}, N = 1 digit\n" in out


@pytest.mark.parametrize("argv, problem", [
    (["7+8", "--trace", "--check"], "--check reads TinyAdder-36's slots"),
    (["bench", "--number", "float"], "bench times AdderBoard's 10-digit cases; the model "),
    (["precision"], "the table builds the model for each N; a model file is written for one N"),
])
def test_views_of_tinyadder_refuse_another_model_in_one_line(argv, problem):
    status, out, err = run_cli(argv + ["--model", str(ADDER1)])
    assert (status, out) == (2, "") and problem in err and err.count("\n") == 1, err


def test_a_perturbed_36p_file_is_the_perturbed_model():
    text_ = PUBLISHED.replace('"b_V": {"h0": "15"}', '"b_V": {"h0": "29/2"}')
    assert text_ != PUBLISHED
    model = loads(text_)
    want = with_entry(construction.build("published"), "blocks.1.attn.b_V", ("h0",),
                      Fraction(29, 2))
    assert dump(model) == dump(want)
    assert add(model, "fraction", 5193798811, 1806201129) == \
        add(want, "fraction", 5193798811, 1806201129)
    assert totals(ledger(model)).params == 36


def test_named_constants_and_ties_count_once():
    top = PUBLISHED.index('"vocab"')
    text_ = (PUBLISHED[:top] + '"constants": {"P": "10^10", "K": "960"},\n  "fixed": ["K"],\n  '
             + PUBLISHED[top:])
    text_ = text_.replace('"digit_pos": "10000000000"', '"digit_pos": "P"')
    text_ = text_.replace('"b_V": {"h0": "15"}', '"b_V": {"h0": "P"}')
    text_ = text_.replace('"readout": "copy"\n  }', '"readout": "copy"\n  },\n  "ties": '
                          '[["blocks.0.attn.b_Q[h0]", "blocks.0.mlp.W_gate[scale][cand0]"]]')
    model = loads(text_)
    lines = {line.tensor.name: line for line in ledger(model)}
    assert (lines["blocks.0.attn.W_K"].params, lines["blocks.0.attn.W_K"].rule) == \
        (0, "K fixed: free")
    assert lines["blocks.0.mlp.W_in"].rule == "10 distinct values: 10; named constant P: 1"
    assert lines["blocks.1.attn.b_V"].rule == "P counted at blocks.0.mlp.W_in"
    assert lines["blocks.0.attn.b_Q"].rule == "ties[0]: 1"
    assert lines["blocks.0.mlp.W_gate"].rule == "ties[0] counted at blocks.0.attn.b_Q"
    assert lines["blocks.1.mlp.b_in"].rule == "one value broadcast to 20 places: 1"
    # 36 - 1 (960 is fixed) - 1 (b_V is P, counted in W_in) - 1 (the gate's 1 is b_Q's 1)
    assert totals(ledger(model)).params == 33
    assert dump(loads(dump(model))) == dump(model)


# ---- refusals ------------------------------------------------------------------------------

def _edit(old, new, text_=PUBLISHED):
    assert old in text_
    return text_.replace(old, new, 1)


def _without(*path):
    doc = json.loads(PUBLISHED)
    node = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return json.dumps(doc)


REFUSALS = {
    "missing tensor": (_without("embed", "W_E"),
                       "embed: the field 'W_E' is missing; width, W_E are required"),
    "renamed tensor": (_edit('"W_E": {', '"W_F": {'),
                       "embed: unknown field 'W_F'; the fields are width, W_E, W_pos, pos_role"),
    "JSON NaN": (_edit('"960"', "NaN"),
                 "blocks.0.attn.W_K['special']['h3']: NaN is not an exact constant"),
    "NaN text": (_edit('"960"', '"NaN"'), "blocks.0.attn.W_K['special']['h3']: 'NaN': NaN is "
                                          "not an exact constant"),
    "1e999999": (_edit('"960"', '"1e999999"'), "the exponent of '1e999999' is outside"),
    "JSON 1e999999": (_edit('"960"', "1e999999"), "1e999999 is a JSON number"),
    "huge integer": (_edit('"960"', '"' + "9" * 10 ** 6 + '"'),
                     "(1,000,000 characters): longer than 10,000 characters"),
    "JSON huge integer": (_edit('"960"', "9" * 10 ** 6), "is a JSON number"),
    "does not parse": (_edit('"960"', '"96 0"'), "unexpected '0' at character 4"),
    "exp(10**9)": (_edit('"exp(40)"', '"exp(10**9)"'), "write ^ for a power"),
    "exp(10^9)": (_edit('"exp(40)"', '"exp(10^9)"'), "exp of 1000000000"),
    "nesting": (_edit('"960"', "[" * 10 ** 5 + "]" * 10 ** 5),
                "JSON nested 17 levels deep or more; a model file nests at most 16"),
    "duplicated key": (_edit('"b_K": {"h3": "-1000"}', '"b_K": {"h3": "-1000", "h3": "1"}'),
                       "blocks.0.attn.b_K: the key 'h3' appears twice"),
    "tie of different values": (
        _edit('"readout": "copy"\n  }', '"readout": "copy"\n  },\n  "ties": '
              '[["blocks.0.attn.b_Q[h0]", "blocks.1.mlp.b_in[cand0+]"]]'),
        "ties[0]: blocks.0.attn.b_Q[h0] = 1 and blocks.1.mlp.b_in[cand0+] = 100 differ"),
    "undeclared slot": (_edit('"W_K": {"special": {"h3": "960"}}',
                              '"W_K": {"special": {"h9": "960"}}'),
                        "blocks.0.attn.W_K: unknown target 'h9' (from 'special')"),
    "undeclared token": (_edit('"<eos>": {"special": "1"}', '"<eof>": {"special": "1"}'),
                         "W_E: unknown source '<eof>'"),
    "zero written": (_edit('"960"', '"0"'), "'0' is zero; a zero is left out of a table"),
    "unknown operation": (_edit('"softmax": "softmax1"', '"softmax": "sparsemax"'),
                          "blocks.0.attn.softmax: \"sparsemax\"; use \"softmax1\", \"softmax\""),
    "unknown field": (_edit('"softmax": "softmax1"', '"softmax": "softmax1", "alibi": "yes"'),
                      "blocks.0.attn: unknown field 'alibi'"),
    "version": (_edit('"version": 1', '"version": 2'), "version: 2; this tinyadder reads "
                                                       "version 1"),
    "-inf as a weight": (_edit('"960"', '"-inf"'), "-inf is accepted only as a mask"),
    "not JSON": (PUBLISHED[:500], "not JSON: "),
    "slot named twice": (_edit('"slots": [\n    "eq", "special",', '"slots": [\n    "eq", "eq",'),
                         "slots: 'eq' appears twice"),
}


KSWAIN = (ROOT / "tinyadder" / "models" / "board" / "kswain98-2.json").read_text(encoding="utf-8")
W_V = '"W_V": {"special": {"h3": "exp(40)"}'
LN1 = '"ln1": {"kind": "rms", "eps": "f32(f64(1/1000000))"}'


def _w_v(value):
    """The published file with ``value`` for the entry W_V[special][h3]."""
    return _edit(W_V, W_V.replace("exp(40)", value))


def _eps(value):
    """kswain98-2's file with ``value`` for the eps of block 0's first norm."""
    return _edit(LN1, LN1.replace("f32(f64(1/1000000))", value), KSWAIN)


UNEVALUABLE = {  # constants the grammar reads but no number system can evaluate
    "exp(exp(100))": (_w_v("exp(exp(100))"),
                      "exp of exp(100), about 2.69e+43: its argument must be within "
                      "-10000..10000"),
    "exp(pi*10^9)": (_w_v("exp(pi*10^9)"),
                     "exp of pi*1000000000, about 3.14e+9: its argument must be within"),
    "sqrt(1 - pi)": (_w_v("sqrt(1 - pi)"),
                     "sqrt(1 - pi): sqrt of 1 - pi, which is negative"),
    "1/(pi - pi)": (_w_v("1/(pi - pi)"),
                    "1/(pi - pi): divides by pi - pi, which is zero or too near zero to tell"),
    "ln(3 - pi)": (_w_v("ln(3 - pi)"),
                   "ln of 3 - pi, which is not positive"),
    "(pi^10000)^10000": (_w_v("(pi^10000)^10000"),
                         "(pi^10000)^10000 has more than 21,000 digits"),
    "sin(10^4000)": (_w_v("sin(10^4000)"),
                     "about 1.00e+4000: its argument must be within -10000..10000"),
    "f32(10^50)": (_w_v("f32(10^50)"),
                   "is beyond the range of IEEE single"),
    "eps -1": (_eps("-1"),
               "blocks.0.ln1.eps: \"-1\"; an RMS norm's eps is positive"),
    "eps 1 - pi": (_eps("1 - pi"),
                   "an RMS norm's eps is positive"),
}
REFUSALS.update({f"unevaluable {k}": v for k, v in UNEVALUABLE.items()})


@pytest.mark.parametrize("number", ["fraction", "decimal", "float", "float32"])
@pytest.mark.parametrize("case", sorted(UNEVALUABLE))
def test_constants_no_number_system_can_evaluate_are_refused(case, number, tmp_path):
    """Every number system gets the loader's one line and exit 2, before any run (today: a
    traceback, a run that never ends, or a sum printed and then a traceback)."""
    source, problem = UNEVALUABLE[case]
    with pytest.raises(ModelFileError) as caught:
        loads(source)
    assert problem in str(caught.value)
    path = tmp_path / "bad.json"
    path.write_text(source, encoding="utf-8")
    status, out, err = run_cli(["--model", str(path), "--number", number, "1+2"])
    assert (status, out, err.count("\n")) == (2, "", 1), err
    assert str(caught.value)[:40] in err


@pytest.mark.parametrize("number", ["float", "float32"])
def test_a_divisor_that_rounds_to_zero_in_a_float_system_is_ieee_infinity(number, tmp_path):
    """1/(1e-300*pi) is a number (10^299.5); float32 rounds 1e-300 to 0 and divides by it:
    infinity, as IEEE arithmetic has it, not Python's ZeroDivisionError. The model then adds
    wrongly, with a warning."""
    path = tmp_path / "m.json"
    path.write_text(_w_v("1/(1e-300*pi)"), encoding="utf-8")
    status, out, err = run_cli(["--model", str(path), "--number", number, "1+2"])
    assert status == 1 and "Traceback" not in err and err.count("\n") == 1
    assert "model's sum 0 is wrong: 1 + 2 = 3" in err


def test_a_question_may_repeat_a_token():
    """A prompt such as '0 a 0 0 b 0' repeats a token; slots, tokens and heads may not."""
    text = PUBLISHED.replace('"question": ["<bos>", "a", "+", "b", "="]',
                             '"question": ["<bos>", "a", "+", "+", "b", "=", "="]')
    assert loads(text).prompt.question == ("<bos>", "a", "+", "+", "b", "=", "=")


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_bad_files_are_refused_in_one_line(case, tmp_path):
    source, problem = REFUSALS[case]
    with pytest.raises(ModelFileError) as caught:
        loads(source)
    assert problem in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
    path = tmp_path / "bad.json"
    path.write_text(source, encoding="utf-8")
    status, out, err = run_cli(["params", "--model", str(path)])
    assert status == 2 and out == ""
    assert err.startswith(f"tinyadder params: error: argument --model: {path}: ")
    assert err.count("\n") == 1


def test_a_table_of_more_rows_than_the_limit_is_refused():
    """The rows of a table are read in linear time (a 200,000-row W_pos used to take minutes
    to load, each key tested against a tuple of all of them), up to MAX_ROWS."""
    doc = json.loads(ADDER1.read_text(encoding="utf-8"))
    doc["embed"]["W_pos"] = {str(p): {"x": "1"} for p in range(MAX_ROWS + 1)}
    with pytest.raises(ModelFileError, match=r"^W_pos: 100,001 entries; a table has at most "
                                             r"100,000 rows"):
        loads(json.dumps(doc))


@pytest.mark.parametrize("edit, problem", [
    (('"digits": 1,', '"digits": 4400,'), "prompt.digits: 4400; give a JSON integer from 1 to "
                                         "2000 (the limit of --digits)"),
    (('"answer_digits": 2', '"answer_digits": 5000'), "prompt.answer_digits: 5000; give a JSON "
                                                     "integer from 1 to 2001"),
])
def test_prompt_digits_beyond_the_limit_of_digits_are_refused(edit, problem):
    """Not a traceback (integer string conversion) or minutes of work and an out-of-memory
    message about a --digits the file does not have."""
    with pytest.raises(ModelFileError) as caught:
        loads(ADDER1.read_text(encoding="utf-8").replace(*edit))
    assert str(caught.value).startswith(problem)


def test_a_1_gb_file_is_refused_by_its_size(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:  # sparse: nothing is written but the last byte
        f.seek(2 ** 30 - 1)
        f.write(b"}")
    with pytest.raises(ModelFileError, match=f"a file of 1,073,741,824 bytes; a model file has "
                                             f"at most {MAX_BYTES:,}"):
        load(path)
    status, _, err = run_cli(["--model", str(path), "1+2"])
    assert status == 2 and err.count("\n") == 1 and "1,073,741,824 bytes" in err
    with open(path, "rb") as f:
        with pytest.raises(ModelFileError, match="at most 8,388,608"):
            load(f)  # an open file: read no further than the limit


def test_build_takes_names_and_paths_and_refuses_the_rest(tmp_path):
    assert build(str(ADDER1)).name == build(ADDER1).name == "adder1"
    with pytest.raises(ValueError, match="written for N = 1, not 2; leave the digits out"):
        build(ADDER1, 2)
    with pytest.raises(ValueError, match=r"^unknown model 'adder2': use published, repaired, "
                                         r"variant-28, a board model \(tinyadder board lists "
                                         r"them\) or the path of a model file$"):
        build("adder2")
    status, _, err = run_cli(["--model", str(ADDER1), "--digits", "2", "1+2"])
    assert status == 2 and "written for N = 1, not 2" in err


def test_export(tmp_path):
    status, out, _ = run_cli(["export", "published"])
    assert status == 0 and out == PUBLISHED
    status, out, _ = run_cli(["export", "repaired", "--digits", "2", "-o",
                              str(tmp_path / "r2.json")])
    assert status == 0 and out == f"wrote {tmp_path / 'r2.json'}\n"
    assert (tmp_path / "r2.json").read_text(encoding="utf-8") == \
        dump(construction.build("repaired", 2))
    status, out, _ = run_cli(["export", str(ADDER1)])
    assert status == 0 and dump(loads(out)) == out and loads(out).name == "adder1"
    status, _, err = run_cli(["export", "published", "-o", "/nonexistent/dir/m.json"])
    assert status == 2 and err.count("\n") == 1 and "cannot write /nonexistent/dir/m.json" in err


# ---- the loader's fuzzer --------------------------------------------------------------------

JUNK = [None, True, -1, 0, 10 ** 30, 1.5, "", "x", "0", "1/0", "NaN", "-inf", "exp(99999)",
        "1" * 5000, [], {}, ["1"], {"x": "1"}, json.loads("[" * 20 + "]" * 20)]


def _mutated(rng, doc):
    """One random change somewhere in a parsed model file: a value replaced, a field removed,
    renamed or added."""
    node, path = doc, []
    while isinstance(node, (dict, list)) and node and (not path or rng.random() < 0.85):
        key = rng.choice(list(node) if isinstance(node, dict) else range(len(node)))
        path.append(key)
        node = node[key]
    if not path:
        return copy.deepcopy(rng.choice(JUNK))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, kind = path[-1], rng.randrange(4)
    if kind == 0 or isinstance(parent, list):
        parent[key] = copy.deepcopy(rng.choice(JUNK))
    elif kind == 1:
        del parent[key]
    elif kind == 2:
        parent[key + "x"] = parent.pop(key)
    else:
        parent[rng.choice(["W_Z", "heads", "0", "eq", "x" * 300])] = copy.deepcopy(rng.choice(JUNK))
    return doc


@pytest.mark.parametrize("seed", range(80))
def test_loader_takes_mutated_files(seed):
    rng = random.Random(18000 + seed)
    base = ADDER1.read_text(encoding="utf-8") if seed % 2 else PUBLISHED
    doc = json.loads(base)
    for _ in range(rng.randint(1, 3)):
        doc = _mutated(rng, doc)
    data = json.dumps(doc)
    if rng.random() < 0.2:
        data = data[:rng.randrange(len(data))]
    if rng.random() < 0.2:
        at = rng.randrange(len(data) + 1)
        data = data[:at] + rng.choice(['"', "{", "]", ",", "\\", "\x00", "é"]) + data[at:]
    try:
        model = loads(data)
    except ModelFileError as err:
        assert "\n" not in str(err) and len(str(err)) < 1000
    else:
        assert dump(loads(dump(model))) == dump(model)


@pytest.mark.parametrize("seed", range(10))
def test_loader_takes_random_bytes(seed):
    rng = random.Random(19000 + seed)
    data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 400)))
    with pytest.raises(ModelFileError):
        loads(data)


def test_a_factored_weight_is_its_product_and_reads_back():
    """W = A B, stored as its two factors (a low-rank program), computes (x A) B: the value
    of the product map in exact arithmetic, and the file keeps the factors."""
    from tinyadder.forward import forward
    from tinyadder.numbers import number_system
    from tinyadder.plan import compile_model
    from tinyadder.weights import Attention, Block, Factored, MLP, Model, Unembed

    def model(W_V, W_pos):
        attn = Attention(heads=("h",), W_Q={"x": {"h": 1}}, W_K={"x": {"h": 1}}, W_V=W_V,
                         W_O={"h": {"x": 3}})
        return Model(name="t", vocab=tuple("0123456789"), slots=("x",),
                     W_E={"1": {"x": 1}, "2": {"x": 2}}, width_embed=1, W_pos=W_pos,
                     blocks=(Block(attn, MLP(units=()), 1, 1),),
                     unembed=Unembed("linear", tuple("0123456789"), W_U={"x": {"1": 1}}))
    factored = model(Factored(inner=("r", "s"), A={"x": {"r": Fraction(1, 3), "s": 2}},
                              B={"r": {"h": 6}, "s": {"h": -1}}),
                     Factored(inner=("p",), A={0: {"p": 1}, 1: {"p": 2}, 2: {"p": 7}},
                              B={"p": {"x": Fraction(1, 2)}}))
    product = model({"x": {"h": Fraction(1, 3) * 6 - 2}},
                    {0: {"x": Fraction(1, 2)}, 1: {"x": 1}, 2: {"x": Fraction(7, 2)}})
    text = dump(factored)
    assert '"inner": ["r", "s"]' in text and dump(loads(text)) == text
    ns = number_system("fraction")
    tokens = [1, 2, 1]
    assert forward(compile_model(loads(text), ns), tokens)[0] == \
        forward(compile_model(product, ns), tokens)[0]
