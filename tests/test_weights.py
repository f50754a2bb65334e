"""A model is immutable once built: a run can never reuse stale compiled weights."""

from dataclasses import replace
from fractions import Fraction

import pytest

from tinyadder import build, number_system, run
from tinyadder.weights import with_entry


def test_tables_refuse_changes():
    model = build("published")
    with pytest.raises(TypeError):
        model.blocks[1].attn.W_V["digit_pos"]["h0"] = 50
    with pytest.raises(TypeError):
        model.blocks[0].mlp.W_in["count"] = {}
    with pytest.raises(TypeError):
        model.W_E["5"]["digit"] = 0
    with pytest.raises(TypeError):
        model.meta["precision"] = 3
    with pytest.raises(TypeError):
        model.roles["W_E"] = "copy"


def test_a_changed_model_runs_with_its_own_weights():
    ns = number_system("fraction")
    model = build("published")
    assert run(model, ns, 12, 34).endswith("=00000000046")
    halved = with_entry(model, "blocks.1.attn.W_V", ("digit_pos", "h0"), 50)
    assert run(halved, ns, 12, 34).endswith("=00000000029")  # sees the new weight at once
    assert run(model, ns, 12, 34).endswith("=00000000046")  # and the original is untouched


def test_replace_freezes_the_new_tables_too():
    model = build("published")
    block = replace(model.blocks[1], attn=replace(model.blocks[1].attn, b_V={"h0": 0}))
    changed = replace(model, blocks=(model.blocks[0], block))
    with pytest.raises(TypeError):
        changed.blocks[1].attn.b_V["h0"] = 15


def test_with_entry_is_checked_like_a_built_model():
    with pytest.raises(ValueError, match="unknown target 'nosuch'"):
        with_entry(build(), "blocks.0.attn.W_K", ("special", "nosuch"), 1)
    with pytest.raises(ValueError, match="no table named"):
        with_entry(build(), "blocks.0.W_K", ("special", "h3"), 1)


@pytest.mark.parametrize("value, kind", [
    (15.0000001, "a float"), (15.0, "a float"), ("15", "a str"), (True, "a bool"),
    (float("nan"), "a float"), (float("inf"), "a float"), (None, "a NoneType"),
    (1 + 2j, "a complex")])
def test_an_inexact_weight_is_refused_at_the_door(value, kind):
    """Exact means exact: nothing but an exact value becomes a weight, in any table."""
    from tinyadder.weights import WeightError
    with pytest.raises(WeightError) as refused:
        with_entry(build(), "blocks.1.attn.b_V", ("h0",), value)
    message = str(refused.value)
    assert message.startswith("blocks.1.attn.b_V['h0'] = ") and f"is {kind}, not exact" in message
    assert "\n" not in message


def test_refusals_name_the_entry_and_what_is_accepted():
    from tinyadder.weights import WeightError
    with pytest.raises(WeightError, match=r"^blocks\.0\.attn\.W_K\['special'\]\['h3'\] = 960\.0 "
                                          r"is a float, not exact: a weight is int, Fraction or "
                                          r"an exact constant \(ExpTerm, Ln, Expr\); for the "
                                          r"decimal you mean write Fraction\('960\.0'\)$"):
        with_entry(build(), "blocks.0.attn.W_K", ("special", "h3"), 960.0)
    with pytest.raises(WeightError, match=r"slopes\['h3'\] = 0\.5 is a float, not exact: a "
                                          r"weight is a rational, Ln\(b\) or an exact expression"):
        with_entry(build(), "blocks.0.attn.slopes", ("h3",), 0.5)
    from tinyadder.constants import ExpTerm
    with pytest.raises(WeightError, match="is an ExpTerm.*its coef and power must be int or Fraction"):  # an inexact coefficient inside
        with_entry(build(), "blocks.1.attn.b_V", ("h0",), ExpTerm(0.5, Fraction(1)))
    with pytest.raises(WeightError, match=r"W_E\['5'\]\['digit'\] = '50'"):
        with_entry(build(), "W_E", ("5", "digit"), "50")


def test_exact_values_are_accepted_and_run():
    from tinyadder.constants import exp_of
    ns = number_system("fraction")
    for value in (15, Fraction(15), Fraction("15.0"), exp_of(0) * 15):
        assert run(with_entry(build(), "blocks.1.attn.b_V", ("h0",), value), ns, 12, 34) == \
            "0000000012+0000000034=00000000046"


def test_constants_keep_floats_out():
    from tinyadder.constants import exp_of
    with pytest.raises(TypeError):
        exp_of(40) * 0.1
    with pytest.raises(TypeError):
        0.1 / exp_of(40)
    assert exp_of(40) / 10 == exp_of(40) * Fraction(1, 10)


def test_live_heads_reads_factored_value_and_output_maps_through_their_inner_lanes():
    """A head is live when its value map reaches its lanes and its output map reaches a slot,
    a factored map (W = A B) through A then B: here head g's value factor feeds only head h,
    so g is dead, and the model computes the product maps' values."""
    from tinyadder.forward import forward
    from tinyadder.plan import compile_model
    from tinyadder.weights import Attention, Block, Factored, MLP, Model, Unembed, live_heads

    def model(W_V, W_O):
        attn = Attention(heads=("h", "g"), W_K={"x": {"h": 1, "g": 1}}, W_V=W_V, W_O=W_O)
        return Model(name="f", vocab=("0", "1"), slots=("x", "y"), W_E={"1": {"x": 1}},
                     width_embed=2, blocks=(Block(attn, MLP(units=()), 2, 2),),
                     unembed=Unembed("linear", ("0", "1"), W_U={"y": {"1": 1}}))
    factored = model(Factored(("r",), {"x": {"r": 2}}, {"r": {"h": 3}}),
                     Factored(("s", "t"), {"h": {"s": 5}, "g": {"t": 1}}, {"s": {"y": 7}}))
    product = model({"x": {"h": 6}}, {"h": {"y": 35}})
    assert live_heads(factored.blocks[0].attn) == ("h",)
    ns = number_system("fraction")
    assert forward(compile_model(factored, ns), [1, 1])[0] == \
        forward(compile_model(product, ns), [1, 1])[0]
