"""The stated API (docs/api.md): keyword-only options, TransformerLens's names_filter, short
reprs, the slot-named patch helper, and the code the fast path runs, printable."""

import ast
from pathlib import Path

import pytest

from tinyadder import (ActivationCache, number_system, patch_slot, run,
                       run_with_cache)
from tinyadder.analysis.program import python_source
from tinyadder.cli import main

PACKAGE = Path(__file__).resolve().parent.parent / "tinyadder"


def test_options_are_keyword_only(published):
    with pytest.raises(TypeError):
        run_with_cache(published, "12+34", "float")
    with pytest.raises(TypeError):
        run(published, "float", 12, 34, False)


def test_names_filter_is_names(published):
    _, by_names = run_with_cache(published, "12+34", ns="float", names="hook_embed")
    _, by_filter = run_with_cache(published, "12+34", ns="float", names_filter="hook_embed")
    assert list(by_names) == list(by_filter) == ["hook_embed"]
    assert by_names["hook_embed"] == by_filter["hook_embed"]
    with pytest.raises(TypeError, match="not both"):
        run_with_cache(published, "12+34", names="hook_embed", names_filter="hook_embed")


def test_short_reprs(published):
    _, cache = run_with_cache(published, "1+2", ns="float", names="hook_embed")
    assert repr(published) == "<Model tinyadder36-published: 2 blocks, 16 slots, 14 tokens>"
    assert repr(cache) == ("<ActivationCache of tinyadder36-published on "
                           "'<bos>0000000001+0000000002=00000000003': 34 positions, 1 trace "
                           "points, float (IEEE 754 double)>")
    assert isinstance(cache, ActivationCache)
    assert repr(number_system("fraction")) == "FractionSystem(exp_digits=50)"


@pytest.mark.parametrize("ns", ["float", pytest.param("fraction", marks=pytest.mark.slow)])
def test_patch_slot_sets_one_slot_where_asked(published, ns):
    """In float by default; exactly under slow (patched exact runs take seconds)."""
    forget = patch_slot(published, ("resid_mid", 0), "count", 0, positions=[21])
    _, patched = run_with_cache(published, "12+34", ns=ns, patch=forget)
    _, clean = run_with_cache(published, "12+34", ns=ns)
    count = published.slots.index("count")
    assert patched.text.endswith("=00000000042") and clean.text.endswith("=00000000046")
    mid, was = patched["resid_mid", 0], clean["resid_mid", 0]
    assert mid[21][count] == 0 != was[21][count]
    prompt = range(len(patched.tokens) - 11)  # after it the generated digits differ
    assert [mid[p] for p in prompt if p != 21] == [was[p] for p in prompt if p != 21]
    # a function of the old value: b's units digit (position 21) weighed as a tens digit
    tens = patch_slot(published, ("resid_mid", 0), "count", lambda c: 10 * c, positions=[21])
    assert run_with_cache(published, "12+34", ns=ns, patch=tens)[1].text.endswith(
        "=00000000082")
    same = patch_slot(published, ("resid_mid", 0), "count", lambda c: c)
    assert run_with_cache(published, "12+34", ns=ns, patch=same)[1].values == clean.values
    with pytest.raises(KeyError, match="has no 'nosuch'"):
        patch_slot(published, ("resid_mid", 0), "nosuch", 0)
    with pytest.raises(KeyError, match="patch it with a function"):
        patch_slot(published, "blocks.0.attn.hook_pattern", "h3", 0)


def test_forward_writes_no_code():
    """forward.py is the model's definition: no eval or exec in it (codegen.py has the one)."""
    def calls(path):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return {n.func.id for n in ast.walk(tree)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not {"eval", "exec"} & calls(PACKAGE / "forward.py")
    assert "exec" in calls(PACKAGE / "codegen.py")


def test_the_printed_code_is_the_code_that_runs(published):
    from tinyadder.plan import compile_model
    from tinyadder.codegen import decoder_source, source
    ns = number_system("float")
    text = python_source(published, ns)
    parts = text.split("\n# ")
    steps = [part for part in parts if "def step(" in part]
    assert len(steps) == 2
    for logits, step in zip((True, False), steps):
        code = step[step.index("def step("):]
        assert code == source(compile_model(published, ns), logits)[0]
        compile(code, "<printed>", "exec")
    decoder = parts[-1][parts[-1].index("def decode("):]  # what add, run and verify run
    assert decoder == decoder_source(compile_model(published, ns))[0]
    compile(decoder, "<printed>", "exec")
    assert "    L0_attn_count = count + (L0_z_h3)\n" in text
    assert text.count("#   L0_W_in_count_cand3 = 3500000000000.0\n") == 1


def test_program_python_on_the_command_line(capsys):
    assert main(["program", "--python", "--number", "float", "--digits", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# tinyadder36-published in float (IEEE 754 double): the step of a "
                          "position whose logits are wanted\n")
    assert out.count("def step(") == 2 and out.count("def decode(") == 1


def test_a_system_named_by_text_compiles_the_model_once(published):
    """``run(model, 'decimal', a, b)`` in a loop: a name is one system each time it is given,
    so the model is compiled once (compiling it per call would cost about 50 additions' time),
    and its sums are Python's; other names are other systems."""
    from tinyadder.addition import system_of
    from tinyadder.plan import compile_model
    run(published, "decimal", 1, 2)
    before = compile_model.cache_info().misses
    for a in range(5):
        assert run(published, "decimal", 10 ** 9 + a, 2) == f"{10 ** 9 + a:010d}+0000000002" \
                                                            f"={10 ** 9 + a + 2:011d}"
    assert compile_model.cache_info().misses == before
    assert system_of("decimal:12") is not system_of("decimal")
    assert system_of("decimal:12").digits == 12


def test_a_trace_by_name_lists_its_own_roundings_alone(published):
    """``run_with_cache(..., ns='fraction')`` takes a new system: its ``roundings`` are the
    values that trace rounded, not also those of an earlier trace of another model."""
    from tinyadder import build, with_entry
    other = with_entry(published, "blocks.0.attn.b_K", ("h4",), -3)  # e^-3 rounded besides
    names = "blocks.0.hook_resid_mid"
    _, before = run_with_cache(other, "12+34", ns="fraction", names=names)
    _, cache = run_with_cache(published, "12+34", ns="fraction", names=names)
    _, fresh = run_with_cache(build("published"), "12+34", names=names)
    assert len(before.roundings) == len(fresh.roundings) + 1
    assert [r.what for r in cache.roundings] == [r.what for r in fresh.roundings]
