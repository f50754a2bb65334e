"""``tinyadder explore --compare A B EXPR``: two designs on one sum, side by side; the slots
both name alike compared position by position, matched by role. ``--compare`` writes A's
explorer page with a compare mode (test_browser draws it); ``--static`` the page without
script."""

import io
from pathlib import Path
import json
import re

import pytest

from tinyadder.cli import explore

ADDER1 = Path(__file__).resolve().parent / "models" / "adder1.json"


def compare(tmp_path, *argv):
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "cmp.html"
    status = explore.main(["--compare", *argv, "-o", str(path)], out, err, None)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    rows = re.findall(r"<tr><td>(.*?)</td><td><code>(.*?)</code></td><td>(.*?)</td></tr>",
                      text)
    return status, text, {(stage, slot): verdict for stage, slot, verdict in rows}, err.getvalue()


def test_published_against_repaired(tmp_path):
    """The two readouts differ only in layer 1's FFN: the published one writes each digit's
    error into the slots eq .. cand4, which still hold what they held."""
    status, text, rows, err = compare(tmp_path, "published", "repaired", "--digits", "3",
                                      "599+400", "--static")
    assert (status, err) == (0, "")
    assert "<h1>tinyadder36-published and tinyadder36-repaired add 599 + 400</h1>" in text
    assert rows[("L1.attn", "count")] == "the same at all 13 positions"
    assert rows[("L1.mlp", "eq")] == ("the same at 0 of 13; first differs at &lt;bos&gt;: "
                                      "41000041/2 against 41/2")
    assert rows[("readout", "logit 0")].startswith("the same at 7 of 13;")
    assert text.count('<section class="stage"') == 6 + 2  # six stages, two layers' heads
    assert "<script" not in text
    assert ("Each model is drawn at the position its own page opens at: tinyadder36-published "
            "at position 8 (the first that predicts a digit); tinyadder36-repaired at position "
            "8 (the first that predicts a digit).") in text


def test_the_explorer_page_carries_the_second_model(tmp_path):
    """The compare mode's data: the second run's positions by role, its heads and its lanes as
    the tracer prints them; the agreement over all positions as a table in the page."""
    status, text, _, err = compare(tmp_path, "published", "repaired", "--digits", "3",
                                   "599+400")
    assert (status, err) == (0, "")
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                                text, re.S).group(1))
    c = data["compare"]
    assert c["model"] == "tinyadder36-repaired" and c["answer"] == "0999"
    assert c["labels"] == c["own_labels"] == {label: pos for pos, label in enumerate(
        ["<bos>", "a2", "a1", "a0", "'+'", "b2", "b1", "b0", "'='", "s3", "s2", "s1", "s0"])}
    assert sorted(c["heads"]) == ["L0.h3", "L0.h4", "L1.h0"]
    mine = {stage: {slot: row["cells"] for slot, row in r["rows"].items()}
            for stage, r in data["residual"].items()}
    assert c["residual"]["L1.attn"]["count"] == [x[2] for x in mine["L1.attn"]["count"]]
    assert c["residual"]["L1.mlp"]["eq"][0] == "41/2" != mine["L1.mlp"]["eq"][0][2]
    # the lanes print a fraction as the grid does, its decimal (JSON's keys are text)
    assert c["dec"]["L1.mlp"]["eq"]["0"] == "20.5"
    assert data["residual"]["L1.mlp"]["rows"]["eq"]["dec"]["0"] == "~2.05·10⁷"
    assert 'id="view-compare"' in text and 'id="compare"' in text
    assert "<td>L1.mlp</td><td><code>eq</code></td><td>0 of 13</td>" in text
    with pytest.raises(SystemExit):  # --static is a form of --compare
        explore.main(["--static", "1+2"], io.StringIO(), io.StringIO(), None)


def test_models_of_different_n_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        compare(tmp_path, "published", str(ADDER1), "1+2")
    assert exit_.value.code == 2
    assert ("tinyadder explore: error: published adds 10-digit numbers and "
            f"{ADDER1} 1-digit ones; compare two models of one N") in capsys.readouterr().err


@pytest.mark.slow
def test_three_rope_19_designs_compute_the_same_x1(tmp_path):
    """zcbtrak-6 and lokimorty-10 hold the same x0 and x1 at every stage and position;
    yieldthought-20's layer-0 attention computes another x1."""
    expr = "7650676663+0149460439"
    status, _, rows, _ = compare(tmp_path, "zcbtrak-6", "lokimorty-10", expr, "--static")
    assert status == 0 and rows and all(v.startswith("the same at all 42") for v in rows.values())
    status, _, rows, _ = compare(tmp_path, "zcbtrak-6", "yieldthought-20", expr, "--static")
    assert rows[("L0.attn", "x1")] == ("the same at 17 of 42; first differs at a0: ~60.9710 "
                                       "against ~60.9719")
