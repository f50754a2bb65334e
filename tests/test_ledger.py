"""The parameter ledger: 36 under the spec's rules, computed from weights and declared roles."""

import json
from fractions import Fraction

import pytest

from tinyadder.cli import main as cli_main
from tinyadder.construction import build
from tinyadder.analysis.ledger import count, ledger, tensors, totals
from tinyadder.weights import WeightError, with_entry

SPEC_TABLE = {"embedding": 13, "layer 0 attention": 6, "layer 0 FFN": 12,
              "layer 1 attention": 2, "layer 1 FFN": 3, "readout": 0}


def by_name(model):
    return {line.tensor.name: line for line in ledger(model)}


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_totals_match_the_spec_table(variant):
    t = totals(ledger(build(variant)))
    assert t.parts == SPEC_TABLE
    assert t.params == 36
    assert t.dense_nonzero == 150
    assert t.distinct_constants == 29


def test_each_rule_where_the_spec_names_it(published):
    lines = by_name(published)
    assert (lines["W_E"].params, lines["W_E"].role) == (13, "embedding")
    q = lines["blocks.0.attn.b_Q"]  # 1 on all five heads
    assert (q.params, q.rule) == (1, "one value broadcast to 5 places: 1")
    gate = lines["blocks.0.mlp.W_gate"]  # 1 on scale -> cand0..9 and on digit -> digit_pos
    assert (gate.params, len(gate.tensor.entries)) == (1, 11)
    assert lines["blocks.0.mlp.W_in"].params == 11
    assert lines["blocks.0.attn.W_V"].params == 3
    broadcast = lines["blocks.1.attn.W_O"]  # the one head into all 16 slots: a copy map
    assert (broadcast.params, len(broadcast.tensor.entries)) == (0, 16)
    assert broadcast.rule == "copy map, one source to 16 places: free"
    assert lines["blocks.1.mlp.W_gate"].params == 2
    assert lines["blocks.1.mlp.b_in"].params == 1
    assert lines["blocks.0.attn.slopes"].params == 0
    assert lines["readout"].params == 0 and lines["readout"].tensor.shape == (16, 10)
    assert by_name(build("repaired"))["readout"].tensor.shape == (26, 10)


def test_embedding_counts_per_token_row(published):
    line = by_name(published)["W_E"]
    assert line.tensor.shape == (14, 5)
    assert line.tensor.entries[("=", "eq")] == line.tensor.entries[("=", "special")] == 1
    # Tensor-wide the embedding would be 10 (9 digit values and one shared 1).
    assert count(line.tensor, "weight")[0] == 10


def test_changing_a_weight_changes_the_ledger():
    model = build("published")
    up = model.blocks[0].mlp.W_in["count"]
    # P_3 := P_2: one distinct value fewer
    model = with_entry(model, "blocks.0.mlp.W_in", ("count", "cand3"), up["cand2"])
    assert totals(ledger(model)).parts["layer 0 FFN"] == 11
    # the broadcast query bias is no longer one value
    model = with_entry(model, "blocks.0.attn.b_Q", ("h0",), 2)
    assert totals(ledger(model)).parts["layer 0 attention"] == 7
    model = with_entry(model, "blocks.0.attn.W_K", ("special", "h3"), Fraction(0))  # zero: free
    assert totals(ledger(model)).parts["layer 0 attention"] == 6
    # rows are counted separately: still one value in row "5"
    model = with_entry(model, "W_E", ("5", "digit"), 10)
    assert totals(ledger(model)).parts["embedding"] == 13
    model = with_entry(model, "W_E", ("5", "eq"), 1)  # a second value in row "5"
    assert totals(ledger(model)).parts["embedding"] == 14
    assert totals(ledger(model)).parts == dict(SPEC_TABLE, **{"layer 0 FFN": 11,
                                                               "embedding": 14})


def test_a_copy_map_is_free_only_while_its_values_are_1():
    model = with_entry(build("published"), "blocks.1.attn.W_O", ("h0", "eq"), 2)
    line = by_name(model)["blocks.1.attn.W_O"]
    assert (line.params, line.rule) == (2, "declared copy but not all 1, so: "
                                           "2 distinct values (broadcast): 2")


def test_an_undeclared_tensor_counts_as_weights():
    model = with_entry(build("published"), "blocks.1.attn.W_Q", ("digit", "h0"), 1)
    assert by_name(model)["blocks.1.attn.W_Q"].role == "weight"
    assert totals(ledger(model)).params == 37


def test_roles_must_name_real_tensors_and_known_rules():
    with pytest.raises(WeightError, match="^roles: unknown tensor 'blocks.0.attn.W_Z'$"):
        with_entry(build("published"), "roles", ("blocks.0.attn.W_Z",), "copy")
    with pytest.raises(WeightError, match=r"^roles\['W_E'\] = 'free': use 'embedding', "
                                          r"'weight', 'copy', 'position'$"):
        with_entry(build("published"), "roles", ("W_E",), "free")


def test_every_table_of_the_model_is_a_tensor(published):
    names = [t.name for t in tensors(published)]
    assert len(names) == len(set(names)) == 1 + 2 * (9 + 6) + 1
    assert names[0] == "W_E" and names[-1] == "readout"


def test_json(capsys):
    assert cli_main(["params", "--json", "--model", "repaired"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "tinyadder36-repaired"
    assert (data["total"], data["parts"]) == (36, SPEC_TABLE)
    assert sum(t["params"] for t in data["tensors"]) == 36
    assert sum(t["nonzero"] for t in data["tensors"] if t["role"] != "position") == 150
    q = next(t for t in data["tensors"] if t["name"] == "blocks.0.attn.b_Q")
    assert q["entries"] == [[None, h, "1"] for h in ("h0", "h1", "h2", "h3", "h4")]


def test_text_output_through_the_cli(capsys):
    assert cli_main(["params"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("parameter ledger of tinyadder36-published\n")
    assert "\ntotal               36\n" in out


def test_bad_option_is_one_line(capsys):
    assert cli_main(["params", "--model", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("tinyadder params: error: argument --model: unknown model 'tiny'")


def rule_counts(name, embedding=True):
    from tinyadder import models
    from tinyadder.analysis.ledger import rules
    return {k: r.params for k, r in rules(models.build(name), embedding).items()}


def test_rules_side_by_side_on_the_36p():
    assert rule_counts("published") == {"numel": 1294, "unique": 1294, "distinct": 29,
                                        "nonzero": 88, "seed000": 36, "free": None}
    # seed 000's count without the embedding: the 36 less the embedding's 13
    assert rule_counts("published", embedding=False)["seed000"] == 23


def test_free_constants_count_the_files_free_names():
    assert rule_counts("kswain98-2")["free"] == 2  # c and g
    assert rule_counts("zcbtrak-6")["free"] == 6
    # without the embedding, c (used only there) goes with it
    assert rule_counts("kswain98-2", embedding=False)["free"] == 1


def test_unique_counts_a_repeated_tensor_once():
    counts = rule_counts("yieldthought-20")  # W_out.B = W_O.B, 2 entries; 4 ties
    assert (counts["numel"], counts["unique"]) == (50, 44)  # and its 4 ties


def test_nonzero_counts_a_tie_once():
    from tinyadder import models
    from tinyadder.analysis.ledger import rules
    model = models.build("kswain98-2")
    assert rules(model)["nonzero"].params == 29
    untied = replace_model(model, ties=())
    assert rules(untied)["nonzero"].params == 30


def replace_model(model, **changes):
    from dataclasses import replace
    return replace(model, **changes)


def test_rules_through_the_cli(capsys):
    assert cli_main(["params", "--rules", "--no-embedding"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("tinyadder36-published: counting rules, the embedding "
                                   "left out:")
    assert "seed000       23  the ledger's total less the embedding" in out
    assert cli_main(["params", "--json", "--model", "kswain98-2"]) == 0
    rules_json = json.loads(capsys.readouterr().out)["counting_rules"]
    assert rules_json["free"]["params"] == 2 and rules_json["seed000"]["params"] == 29
