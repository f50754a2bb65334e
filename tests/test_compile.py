"""The compiler (programs to model files, ``tinyadder compile``) and the program view that
prints what it reads (``tinyadder program``): round trips, seed 003's lookup, errors."""

from dataclasses import replace
import io
import json
import re
from pathlib import Path

import pytest

from tinyadder import build, number_system
from tinyadder.analysis.program import not_expressible, real_view, source
from tinyadder.cli import main
from tinyadder.compiler import ProgramError, compile_model, compile_program, difference
from tinyadder.forward import forward
from tinyadder.generate import generate
from tinyadder.modelfile import dump, loads
from tinyadder.models import names, program_names
from tinyadder.numbers import for_model
from tinyadder.plan import compile_model as runnable
from tinyadder.weights import with_entry

ROOT = Path(__file__).resolve().parent.parent
LOOKUP = ROOT / "tinyadder" / "models" / "programs" / "seed003-lookup.tap"
# every shipped model (docs/program.md), and the test models
ROUND_TRIP = (list(names()) + list(program_names())
              + sorted(str(p) for p in (ROOT / "tests" / "models").glob("*.json")))


def run_cli(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err, stdin=io.StringIO(stdin))
    return status, out.getvalue(), err.getvalue()


def sorted_keys(data):
    """JSON data with every object's keys sorted (a table's order is not part of a model)."""
    if isinstance(data, dict):
        return {k: sorted_keys(data[k]) for k in sorted(data)}
    return [sorted_keys(x) for x in data] if isinstance(data, list) else data


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_program_then_compile_gives_the_model_back(name):
    model = build(name)
    back = compile_model(source(model))
    assert difference(model, back) is None
    assert back.derived == model.derived and back.roles == model.roles
    assert sorted_keys(json.loads(dump(back))) == sorted_keys(json.loads(dump(model)))
    assert source(back) == source(model)


def test_every_program_in_the_docs_compiles():
    text = (ROOT / "docs" / "program.md").read_text()
    blocks = re.findall(r"```tap\n(.*?)```", text, re.S)
    assert blocks and blocks[0] == LOOKUP.read_text()
    for block in blocks:
        compile_program(block)


def test_every_listing_printed_in_the_docs_compiles_to_its_model():
    """The pages' `program --model M` outputs (test_docs keeps them what the command prints)
    compile to M's weights, every one exact: the 36p's listing is the published model."""
    text = (ROOT / "docs" / "program.md").read_text()
    listings = re.findall(r"```console\n\$ python -m tinyadder program --model (\S+)( --real)?"
                          r"\n(.*?)```", text, re.S)
    assert [name for name, *_ in listings] == ["published", "zcbtrak-6"]
    for name, real, listing in listings:
        model = real_view(build(name)) if real else build(name)
        assert difference(compile_model(listing), model) is None
    # and the published weights are AdderBoard's 36p entry's, every one (its facts aside)
    board = build("alexlitz-36")
    facts = ("name", "about", "meta", "roles", "ties", "derived", "constants", "fixed")
    compiled = compile_model(listings[0][2])
    assert difference(replace(compiled, **{f: getattr(board, f) for f in facts}), board) is None


@pytest.mark.parametrize("digits", [1, 3])
def test_the_construction_round_trips_at_other_n(digits):
    for variant in ("published", "repaired"):
        model = build(variant, digits)
        assert difference(model, compile_model(source(model))) is None


def test_every_shipped_program_is_its_model():
    """tinyadder/models/programs/NAME.json is what compile writes from NAME.tap."""
    folder = ROOT / "tinyadder" / "models" / "programs"
    taps = sorted(folder.glob("*.tap"))
    assert [p.stem for p in taps] == sorted(p.stem for p in folder.glob("*.json"))
    for tap in taps:
        data = dump(loads(json.dumps(compile_program(tap.read_text()))))
        assert data == tap.with_suffix(".json").read_text(), tap.name


def test_difference_sees_one_changed_weight():
    model = build("published")
    changed = with_entry(model, "blocks.0.attn.W_K", ("special", "h3"), 961)
    assert difference(model, changed) == \
        "model.blocks[0].attn.W_K[special][h3]: Fraction(960, 1) != 961"
    assert difference(model, compile_model(source(changed))) is not None


def test_a_derived_entry_keeps_its_text():
    """variant-28's candidate weights are written s*E3 + o: the program says so, and the
    compiled file writes that text (the ledger counts the constants it uses)."""
    text = source(build("variant-28"))
    assert "  cand3 += relu(scale)*((s*E3 + o)*count)" in text
    data = compile_program(text)
    assert data["blocks"][0]["mlp"]["W_in"]["count"]["cand3"] == "s*E3 + o"


def lookup_run(model, x):
    """(the tokens written, x, y, z at the input's position) of one exact run."""
    ns = for_model(number_system("fraction"), model)
    tokens = generate(model, ns, [model.vocab.index("<bos>"), model.vocab.index(x)], 2)
    cache = {}
    forward(runnable(model, ns), tokens, record=cache.__setitem__)
    state = cache["blocks.0.hook_resid_post"][1]
    return "".join(model.vocab[t] for t in tokens[2:]), tuple(state[3:6])


def test_the_lookup_model_runs_the_seeds_program_on_every_input():
    model = build("seed003-lookup")
    assert model.slots[3:6] == ("x", "y", "z")
    table = {"A": 2, "B": 5, "C": 9}
    for k, (x, y) in enumerate(table.items()):
        assert lookup_run(model, x) == ("%02d" % (y + 1), (k + 1, y, y + 1))


def test_the_lookup_follows_its_table():
    text = LOOKUP.read_text().replace("v = 2*keyA + 5*keyB + 9*keyC",
                                      "v = 2*keyA + 7*keyB + 9*keyC")
    assert lookup_run(compile_model(text), "B") == ("08", (2, 7, 8))


def test_compile_on_the_command_line(tmp_path):
    out = tmp_path / "lookup.json"
    assert run_cli("compile", str(LOOKUP), "-o", str(out)) == (0, f"wrote {out}\n", "")
    assert difference(build(str(out)), build("seed003-lookup")) is None
    status, text, err = run_cli("program", "--model", "published")
    assert (status, err) == (0, "")
    status, data, err = run_cli("compile", "-", stdin=text)
    assert (status, err) == (0, "")
    assert difference(loads(data), build("published")) is None


@pytest.mark.parametrize("change, message", [
    (("z += relu(1)*(y + 1)", "z += relu(1)*(w + 1)"),
     "line 39, column 17: unknown slot 'w'"),
    (("z += relu(1)*(y + 1)", "z += relu(1)*(out + 1)"),
     "line 39, column 17: the slot 'out' is read in L0.mlp before it is written"),
    (("L0.mlp relu gated", "L0.mlp relu gated width 3"),
     "line 38, column 25: width 3: the stream must hold 7 slots"),
    (("relu(z)*(1 - first)", "relu(z)*(z*first)"),
     "line 47, column 26: a product of two slots is not linear"),
    (("keyA = 1 on 'A'", "keyA = 1 on 'D'"), "line 25, column 15: unknown token 'D'"),
    (("L1.attn softmax", "L2.attn softmax"), "line 41, column 1: L2.attn: the half-layers "
                                            "come in order; L1.attn is next"),
    (("nine = relu", "nine = silu"), "line 48, column 15: this FFN's activation is relu"),
    (("v = 2*keyA", "w = 2*keyA"), "line 36, column 29: 'w': attend takes q, k, v, slope"),
    (("model seed003-lookup", "modle seed003-lookup"), "line 13, column 1: unknown directive"),
    (("bias h0:", "bias h1:"), "line 35, column 8: bias for the head 'h1', which L0.attn does "
                               "not have; its heads are h0"),
    (("1->1 = 0", "1->1 = x"), "line 35, column 21: 'x': unknown name 'x'"),
    (("task case C -> 1 0", "task case C -> 1 0 0"), "line 21, column 16: an answer of 3 "
                                                     "tokens; every answer has one length, "
                                                     "here 2"),
    (("task case B -> 0 6", "task case D -> 0 6"), "line 20, column 11: unknown token 'D'"),
    (("task case C -> 1 0", "task case C -> 1 X"), "line 21, column 18: unknown token 'X'"),
    (("task case B", "task cas B"), "line 20, column 6: 'cas': write task before ..."),
    (("task case C -> 1 0", "task case A -> 1 0"), "line 21, column 11: the input 'A' has a "
                                                   "case already"),
    (("L0.attn softmax\n", "L0.attn softmax2\n"), "line 31, column 9: L0.attn: say softmax or "
                                                 "softmax1"),
])
def test_a_bad_program_is_one_line_with_its_line_and_column(change, message):
    text = LOOKUP.read_text()
    assert change[0] in text
    with pytest.raises(ProgramError) as error:
        compile_program(text.replace(change[0], change[1], 1))
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
    status, out, err = run_cli("compile", "-", stdin=text.replace(change[0], change[1], 1))
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"tinyadder compile: error: -, {message}")


def test_compile_refuses_a_file_it_cannot_read():
    status, out, err = run_cli("compile", "no/such.tap")
    assert (status, out) == (2, "")
    assert err.startswith("tinyadder compile: error: cannot read no/such.tap: ")


def test_program_prints_a_listing_where_the_language_cannot_state_the_model(tmp_path):
    text = (ROOT / "tests" / "models" / "adder1.json").read_text().replace('"eq"', '"e\'q"')
    odd = loads(text)
    assert not_expressible(odd) == "a name holds a quote, a '#' or blanks"
    with pytest.raises(ValueError, match="the program language cannot state it"):
        source(odd)
    path = tmp_path / "odd.json"
    path.write_text(text)
    status, out, _ = run_cli("program", "--model", str(path))
    assert status == 0 and out.startswith("adder1: ") and "e'q" in out
    status, out, _ = run_cli("program", "--model", "published", "--listing")
    assert status == 0 and out.startswith("tinyadder36-published: 16 slots")


def test_program_real_drops_the_float_markers_and_writes_rows_in_closed_form():
    status, out, _ = run_cli("program", "--model", "zcbtrak-6", "--real")
    assert status == 0 and not re.search(r"f(32|64)\(", out)
    assert "  x0 = 1000 - d^2/1000 on digit d" in out.splitlines()
    status, out, _ = run_cli("program", "--model", "zcbtrak-6", "--real", "--listing")
    assert status == 0 and "    x0 = 1000 - d^2/1000 on digit d" in out.splitlines()
    status, out, _ = run_cli("program", "--model", "zcbtrak-6")
    assert "f64(" in out


def test_the_real_program_compiles_to_the_real_number_model():
    from tinyadder.analysis.program import real_view
    model = real_view(build("zcbtrak-6"))
    assert difference(model, compile_model(source(model))) is None


def test_a_long_statement_continues_on_deeper_lines_and_errors_name_the_line():
    text = source(build("published"))
    assert max(len(line) for line in text.splitlines() if not line.startswith("#")) <= 80
    lines = text.replace("exp(40)*special, slope", "exp(40)*specal, slope").splitlines()
    at = next(k for k, line in enumerate(lines) if "specal" in line)
    assert lines[at].startswith("      + exp(40)*specal")  # a continuation line
    with pytest.raises(ProgramError) as error:
        compile_program("\n".join(lines))
    assert str(error.value).startswith(f"line {at + 1}, column 17: unknown slot 'specal'")


def test_a_comment_ends_at_its_line_and_a_json_string_may_hold_a_hash():
    text = LOOKUP.read_text().replace(
        'about notes "', 'about notes "a # in a string, ').replace(
        "  y += attend(q = 0, k = 0,", "  y += attend(q = 0,  # a comment\n      k = 0,")
    model = compile_model(text)
    assert model.about["notes"].startswith("a # in a string, lookup")
    assert difference(model.blocks, build("seed003-lookup").blocks) is None


# ---- variant-22 (docs/variant-22.md) ------------------------------------------------------

PROOF = ROOT / "tests" / "fixtures" / "proofs" / "variant-22.cert.json.gz"
FLOAT_PROOF = ROOT / "tests" / "fixtures" / "proofs" / "variant-22.float64.cert.json.gz"
SHIPPED = ROOT / "tinyadder" / "models" / "programs"


def test_variant22_counts_22_rule_by_rule():
    from tinyadder.analysis.ledger import ledger, totals
    t = totals(ledger(build("variant-22")))
    assert t.params == 22 and t.params - t.parts["embedding"] == 10
    assert t.parts == {"embedding": 12, "layer 0 attention": 5, "layer 0 FFN": 4,
                       "layer 1 attention": 1, "layer 1 FFN": 0, "readout": 0}


def test_variant22s_count_head_selects_by_its_values():
    attn = build("variant-22").blocks[0].attn
    assert dict(attn.W_K) == {} and dict(attn.b_K) == {"h3": -100}
    assert {s for s, row in attn.W_V.items() if "h3" in row} == {"eq", "special"}


def test_variant22_is_proved_and_without_its_rounding_offset_is_not():
    from tinyadder.proof.prove import prove
    model = build("variant-22")
    proof = prove(model)
    assert proof.refusal is None and proof.proved
    assert not prove(with_entry(model, "blocks.1.attn.b_V", ("h0",), 0)).proved


def test_variant22s_certificates_are_of_the_shipped_file():
    """The real-number model's and the float64 program's."""
    from tinyadder.proof.kernel import floatcheck
    from tinyadder.proof import reading
    cert = reading.load(PROOF)
    assert cert["model"] == (SHIPPED / "variant-22.json").read_text()
    cert = reading.load(FLOAT_PROOF, floatcheck.FORMAT)
    assert cert["model"] == (SHIPPED / "variant-22.json").read_text()
    assert cert["number"] == "float"


@pytest.mark.slow
def test_variant22s_certificate_is_valid():
    """The generic method's certificate, re-decided by the independent checker (about 16 s
    of CPU)."""
    from tinyadder.proof.kernel import setcheck
    from tinyadder.proof import reading
    assert setcheck.check(reading.load(PROOF)).startswith("certificate valid")


@pytest.mark.slow
def test_variant22s_float64_program_certificate_is_valid():
    """The float64 program's certificate (`prove --model variant-22 --number float`: 104
    regions, 13.5 s), re-decided by the float checker (about 18 s of CPU)."""
    from tinyadder.proof.kernel import floatcheck
    from tinyadder.proof import reading
    assert floatcheck.check(reading.load(FLOAT_PROOF, floatcheck.FORMAT)).startswith(
        "certificate valid: 'variant-22' model")


def test_a_statement_that_ends_too_early_is_one_line():
    text = LOOKUP.read_text().replace("out += units + nine + ten", "out += units + nine -")
    with pytest.raises(ProgramError, match="^line 50, column 24: a term expected after the "
                                           "sign$"):
        compile_program(text)


# ---- a layer applied again, its mix, a slot held at 0 (lokimorty-39, vijec-52) -----------

def test_a_layer_applied_again_and_mixed_is_one_block_in_the_file():
    model = build("lokimorty-39")
    text = source(model)
    assert "\nrepeat L1 = L0\nmix L0 gain = -13311/1073741824\n" in text
    back = compile_model(text)
    assert back.blocks[1] is back.blocks[0] and dump(back) == dump(model)
    assert compile_program(text)["blocks"][1] == {"same_as": 0}
    assert compile_program(text)["mix"] == {"first": 0, "gain": "-13311/1073741824"}
    assert difference(compile_model(text.replace("\nmix L0 gain", "\n# mix L0 gain")),
                      model) == f"model.mix: None != {model.mix!r}"


@pytest.mark.parametrize("change, message", [
    (("repeat L1 = L0", "repeat L0 = L1"), "column 8: write repeat Li = Lj"),
    (("repeat L1 = L0", "repeat L2 = L0"), "column 8: repeat L2: the program has layers L0 "
                                           "to L1"),
    (("mix L0 gain", "mix L1 gain"), "column 5: mix L1: the stream mixed with is an earlier "
                                     "layer's, L0 to L0"),
    (("mix L0 gain = ", "mix L0 gain = q"), "column 15: "),
])
def test_a_bad_repeat_or_mix_is_one_line(change, message):
    text = source(build("lokimorty-39"))
    line = text[:text.index(change[0])].count("\n") + 1
    with pytest.raises(ProgramError, match=f"^line {line}, {message}"):
        compile_program(text.replace(change[0], change[1], 1))


def test_a_repeated_layer_must_be_written_again_the_same():
    text = source(build("lokimorty-39"))
    last = text.rindex("L1.mlp")
    changed = text[:last] + text[last:].replace("14764475/4194304*u0", "14764476/4194304*u0", 1)
    with pytest.raises(ProgramError, match="repeat L1 = L0: L1's sections are not L0's written "
                                           "again"):
        compile_program(changed)


def test_a_slot_read_before_a_layer_writes_it_is_held_at_zero_by_the_embedding():
    model = build("vijec-52")
    text = source(model)
    zero = "  x2 = 0  # on every token: read before a half-layer writes it"
    assert zero in text.splitlines()
    assert dump(compile_model(text)) == dump(model)
    with pytest.raises(ProgramError, match="the slot 'x2' is read in L0.attn before it is "
                                           "written"):
        compile_program(text.replace(zero + "\n", ""))


def test_the_readmes_parameter_table_is_what_its_commands_print():
    """README's table of seed 000's path, 36 / 28 / 22 and without the embedding 23 / 15 /
    10: each row's command prints the first figure on its seed000 line, and with
    --no-embedding the second."""
    readme = (ROOT / "README.md").read_text()
    rows = re.findall(r"^  \| [^|]+ \| (\d+) \| (\d+)[^|]* \| `tinyadder (params[^`]*)` \|$",
                      readme, re.M)
    assert [row[:2] for row in rows] == [("36", "23"), ("28", "15"), ("22", "10")]
    for whole, bare, command in rows:
        for flags, figure in (([], whole), (["--no-embedding"], bare)):
            status, out, _ = run_cli(*command.split(), *flags)
            assert status == 0 and re.search(r"^seed000 +(\d+) ", out, re.M).group(1) == figure
