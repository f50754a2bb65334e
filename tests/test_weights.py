"""A model is immutable once built: a run can never reuse stale compiled weights."""

from dataclasses import replace

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
        model.meta["digits"] = 3
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
