"""``tinyadder explore --compare A B EXPR``: two designs on one sum, side by side; the slots
both name alike compared position by position, matched by role. ``--compare`` writes A's
explorer page with a compare mode (test_browser draws it); ``--static`` the page without
script."""

from fractions import Fraction
import io
from pathlib import Path
import json
import re

import pytest

from html import escape

from explore_cases import float_views
from tinyadder.analysis.pictures import compare as pairs, explore as explore_page
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
    # eq means another quantity in the two readouts from L1.mlp on: not counted (learner7 4)
    assert rows[("L1.mlp", "eq")] == "another quantity in each design: not compared"
    # one scale: each logit by its gap to the winner (learner8 3)
    assert rows[("readout", "logit 0")].startswith(
        "its gap to the winner: the same at 12 of 13; first differs at 10 (holds s2, "
        "predicts s1): ")
    # one position, one name (learner14 4): the token as the strip shows it, then its job
    assert rows[("readout", "logit 1")].endswith(
        "first differs at &lt;bos&gt; (0, the separator before a; a prompt position: its "
        "prediction is not used; the first that predicts a digit of the sum: 9 (holds s3, "
        "predicts s2), \u2248 \u22127.27266·10¹⁰ against \u2248 \u22127.27265·10¹⁰): \u22121 against 0")
    assert text.count('<section class="stage"') == 6 + 2  # six stages, two layers' heads
    assert "<script" not in text
    assert ("tinyadder36-published is drawn at position 8 (the first that predicts a digit: it "
            "predicts s3); tinyadder36-repaired at the position that predicts s3, position 8.")\
        in text


def test_learner14_one_position_has_one_name():
    """A separator is named as the token strip shows it, then its position and job, in every
    sentence of the comparison: the table's first difference and where each is drawn."""
    published, repaired = (float_views(n, "599+400", 3) for n in ("published", "repaired"))
    assert [pairs.called(published, p) for p in (0, 3, 8, 9)] == [
        "<bos> (0, the separator before a)", "a0", "'=' (8, the separator before the answer)",
        "s3"]
    assert pairs._opening(published, repaired, 0) == (
        "tinyadder36-published is drawn at position 0 (the one asked for: it holds &lt;bos&gt; "
        "(0, the separator before a)); tinyadder36-repaired at position 0, which holds "
        "&lt;bos&gt; (0, the separator before a).")
    firsts = {r["first"][0] for r in pairs.agreement(published, repaired) if r["first"]}
    assert any(f.startswith("<bos> (0, the separator before a; a prompt position: its "
                            "prediction is not used; ") for f in firsts)
    assert not any(f.startswith("the separator") for f in firsts)


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
    # a separator by its job (learner9 4): <bos> before a, '+' before b, '=' before the answer
    assert c["labels"] == c["own_labels"] == {label: pos for pos, label in enumerate(
        ["the separator before a", "a2", "a1", "a0", "the separator before b", "b2", "b1",
         "b0", "the separator before the answer", "s3", "s2", "s1", "s0"])}
    assert sorted(c["heads"]) == ["L0.h3", "L0.h4", "L1.h0"]
    mine = {stage: {slot: row["cells"] for slot, row in r["rows"].items()}
            for stage, r in data["residual"].items()}
    assert c["residual"]["L1.attn"]["count"] == [x[2] for x in mine["L1.attn"]["count"]]
    assert c["residual"]["L1.mlp"]["eq"][0] == "41/2" != mine["L1.mlp"]["eq"][0][2]
    # the lanes print a fraction as the grid does, its decimal (JSON's keys are text)
    assert c["dec"]["L1.mlp"]["eq"]["0"] == "20.5"
    assert data["residual"]["L1.mlp"]["rows"]["eq"]["dec"]["0"] == "~2.05000·10⁷"
    assert 'id="view-compare"' in text and 'id="compare"' in text
    assert ("<td>L1.mlp</td><td><code>eq \u2026 cand4 (10 slots)</code></td><td>another "
            "quantity in each design: not compared</td><td></td>") in text
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
    winner = rows.pop(("readout", "winner"))
    gaps = {k: rows.pop(k) for k in list(rows) if k[1].startswith("logit ")}
    assert status == 0 and rows and all(v.startswith("the same at all 42") for v in rows.values())
    # logits near 10^5 by their gap to the winner: float runs part in its sixth digit
    assert len(gaps) == 10 and all(v.startswith("its gap to the winner: the same at ")
                                   for v in gaps.values())
    assert winner == "the same at all 11 positions"  # the positions that predict a digit
    status, _, rows, _ = compare(tmp_path, "zcbtrak-6", "yieldthought-20", expr, "--static")
    assert rows[("L0.attn", "x1")] == (
        "the same at 17 of 42; first differs at a0 (a prompt position: its prediction is not "
        "used; the first that predicts a digit of the sum: &#x27;0&#x27; (30, the separator "
        "before the answer; predicts s0), ~\u2009120.002 against ~\u2009119.862): "
        "~\u200960.9710 against ~\u200960.9719")


def test_slots_named_alike_that_mean_apart_are_said_so():
    """zcbtrak-6's x1 after the attention is 10·(a_k + b_k + c_k) − c_(k−1), jacobli99-28's
    a_k + b_k (its x0 adds the carry): the page says they are named alike but hold different
    quantities, and each lane's hover gives its own design's formula; two rope-19 models
    (zcbtrak-6, lokimorty-10) mean the same by x0 and x1, and nothing is said."""
    zc, jl, loki = (float_views(n) for n in ("zcbtrak-6", "jacobli99-28", "lokimorty-10"))
    assert pairs.homonyms(zc, jl) == {s: ["x0", "x1"]
                                        for s in ("embed", "L0.attn", "L0.mlp", "readout")}
    assert pairs.homonym_line(zc, jl).startswith(
        "Named alike, meant apart: zcbtrak-6 and jacobli99-28 both have x0 and x1, but they "
        "hold different quantities in the two designs from embed on: 'another quantity', "
        "equal numbers or not, never 'same'")
    # the static page has no hovers, and does not promise one (learner7 13)
    assert pairs.homonym_line(zc, jl).endswith("and in a lane value's hover).")
    # and its folded table stands above the sentence (learner9 3)
    assert pairs.homonym_line(zc, jl, False).endswith("in the table folded above).")
    assert pairs.homonyms(zc, loki) == {} and pairs.homonym_line(zc, loki) == ""
    # the published readout's slots hold its error plus what they held from L1.mlp on, the
    # repaired one's the error alone: the same names, apart from that stage only
    published, repaired = (float_views(n, "599+400", 3) for n in ("published", "repaired"))
    slots = ["eq", "special", "digit", "count", "scale"] + [f"cand{u}" for u in range(5)]
    assert pairs.homonyms(published, repaired) == {"L1.mlp": slots, "readout": slots}
    assert "in the two designs from L1.mlp on" in pairs.homonym_line(published, repaired)
    # the repaired FFN does not write eq: it holds what layer 1's attention left there
    assert ("<tr><td>L1.mlp</td><td><code>eq</code></td><td>err0 = (10^9/(i + 2))·|x − 0.5|·P "
            "+ what eq held before (that added part is the published readout&#x27;s tilt)"
            "</td><td>as after L1.attn: what it held before + layer 1&#x27;s running average (1000/(i + 2))·(R + b + ℓ)"
            "</td></tr>") in pairs.homonym_table(published, repaired)
    assert pairs.meaning(zc, "L0.attn", "x1", 31).startswith(
        "10·(a_k + b_k + c_k) − c_(k−1): ten times the column sum")
    assert pairs.meaning(jl, "L0.attn", "x1", 24).startswith("a_k + b_k: two heads")
    table = pairs.homonym_table(zc, jl)
    assert ("<tr><td>L0.attn</td><td><code>x1</code></td><td>10·(a_k + b_k + c_k) − c_(k−1): "
            "ten times") in table
    page = explore_page._compare_section(zc, jl)
    assert table in page
    # said once on the live page, in the lanes note the script writes (learner10 8): not as a
    # paragraph, nor as the fold's title, and no promise of slots compared when none is
    assert "Named alike, meant apart" not in page
    assert "Slots both models name alike come first" not in page
    assert "<summary>What the slots named alike mean in each design" in table
    assert "Slots both models name alike come first" in explore_page._compare_section(
        published, repaired)
    static = pairs.page(zc, jl, 31)
    assert "the digit each readout picks, compared position by position" in static
    assert "the slots both name alike, compared position by position" not in static
    assert static.count("Named alike, meant apart") == 1


def test_logits_on_different_scales_compare_by_winner_and_lead():
    """zcbtrak-6's logits sit near 10^5, jacobli99-28's near 1000 (neighbours 2.5·10^-4
    apart): the logits are not compared, the winners are (the same digit at all 11
    positions that predict one), and each run's winner is the digit it writes."""
    zc, jl, loki = (float_views(n) for n in ("zcbtrak-6", "jacobli99-28", "lokimorty-10"))
    assert pairs.scales_differ(zc, jl) and not pairs.scales_differ(zc, loki)
    line = pairs.scale_line(zc, jl)
    assert line.startswith("The logits are on different scales (over all the positions that "
                           "predict a digit of the sum, zcbtrak-6's largest |logit| is about "
                           "1.0·10⁵, at position 40, jacobli99-28's about 1.0·10³, at position "
                           "32): compare the winner and the lead")
    # where, and at the positions drawn (learner14 2: published's 3.6·10¹⁸ is position 22's)
    published = float_views("published", digits=10)
    assert pairs.scale_line(published, zc, (31, 31)).startswith(
        "The logits are on different scales (over all the positions that predict a digit of "
        "the sum, tinyadder36-published's largest |logit| is about 3.6·10¹⁸, at position 22, "
        "zcbtrak-6's about 1.0·10⁵, at position 40; at the positions drawn here "
        "(tinyadder36-published's 31, zcbtrak-6's 31) about 2.8·10⁹ and 1.0·10⁵): ")
    assert line.endswith("The same digit wins at 11 of the 11 positions that predict a digit "
                         "of the sum.")
    rows = pairs.table_rows(zc, jl)
    assert not [r for r in rows if r["slot"].startswith("logit ")]
    assert rows[-1] == {"stage": "readout", "slot": "winner", "same": 11, "compared": 11,
                        "first": None}
    for views in (zc, jl):
        won = pairs.winners(views)
        assert [won[p][0] for p in views["predicting"]] == [
            views["tokens"][p]["predicts"] for p in views["predicting"]]
    assert pairs.winners(zc)[31] == ("0", "~0.0801490")
    assert pairs.winners(jl)[24] == ("0", "~0.000247500")
    # two rope-19 models on one scale: their logits still compare, value by value
    assert [r for r in pairs.table_rows(zc, loki) if r["slot"] == "logit 0"]
    data = explore_page.compare_data(zc, jl)
    assert data["scales_differ"] and data["own_winners"][31] == ("0", "~0.0801490")


def test_jacobli99_28s_key_quantities_carry_its_carry():
    """jacobli99-28's key quantities: x1 = a_k + b_k after the attention, and x0, which adds
    D = c_(k−1) − 10·c_k (the carry, as ``explain --model jacobli99-28`` prints it); exact
    dust (not 0, too small for a float) reads '≈ 0 (exact dust)', its text in the hover."""
    jl = float_views("jacobli99-28")
    (sums, values), (carry, carries) = pairs.key_quantities(jl)
    assert sums == "x1 after the attention ≈ a_k + b_k (within 0.001)"
    # D is no carry: it is −10 or −9 where the column below carries (learner26 10)
    assert carry == ("x0 after the attention ≈ embedded + D, D = c_(k−1) − 10·c_k, which the "
                     "FFN reads (−10 or −9 exactly where the column below carries) "
                     "(within 0.001; c_k the carry into place k); embedded = 1000 − "
                     "2.5·10⁻⁴·d² on the digit d the position holds (the readout's parabola)")
    assert carries["s1"] == ("~\u2009989.999; ~\u2009999.999 + 0 − 10·1", None)
    for k in range(11):  # each printed to 6 significant digits: within 0.005 of the truth
        value, filled = carries[f"s{k}"][0].split("; ")
        assert abs(float(value.lstrip("~\u2009")) - eval(
            filled.replace("~\u2009", "").replace("·", "*").replace("−", "-"))) <= 0.01
    stage = next(s for s in jl["residual"] if s["short"] == "L0.attn")
    x1 = next(r for r in stage["slots"] if r["slot"] == "x1")["cells"]
    q = next(p for p in jl["predicting"] if jl["tokens"][p]["next_place"] == 10)
    assert pairs.key_quantities(jl)[0][1]["s10"] == ("0.0; 0 + 0", None)  # a float's 0
    kept, x1[q] = x1[q], [0.0, -176924827.69, "~2.02542e-176924828"]  # as the exact run
    try:
        assert pairs.key_quantities(jl)[0][1]["s10"] == (
            "≈ 0 (exact dust); 0 + 0", "~2.02542·10⁻¹⁷⁶⁹²⁴⁸²⁸")
        assert ('<td class="mono" title="~2.02542·10⁻¹⁷⁶⁹²⁴⁸²⁸">≈ 0 (exact dust); 0 + 0</td>'
                in pairs.key_table(float_views("zcbtrak-6"), jl))
    finally:
        x1[q] = kept


def test_learner23_the_key_headers_say_what_embedded_is_and_why_rope_19s_formula_holds():
    """The key table's header said "x0 ≈ embedded + D" without saying what embedded is, and
    gave rope-19's 10·(a_k + b_k + c_k) − c_(k−1) without why (learner23 1, 9): embedded is
    x0 on the embedding, 1000 − 2.5·10⁻⁴·d² on the digit d the position holds; rope-19's head
    adds 10·(a_k + b_k) + a_(k−1) + b_(k−1) to x1, which held −s_(k−1). Both checked here
    against the runs at every position that predicts a digit, and said on every page with
    that table (live and static)."""
    zc, jl, published = float_views("zcbtrak-6"), float_views("jacobli99-28"), float_views(
        "published")

    def cells(views, stage, slot):
        short = next(s for s in views["residual"] if s["short"] == stage)
        return next(r for r in short["slots"] if r["slot"] == slot)["cells"]
    for p in jl["predicting"]:  # a separator '0' holds the digit 0
        d = int(jl["tokens"][p]["text"])
        assert cells(jl, "embed", "x0")[p][0] == pytest.approx(1000 - 2.5e-4 * d * d, abs=1e-9)
    assert cells(jl, "embed", "x0")[32][2] == "~999.984" and jl["tokens"][32]["text"] == "8"
    a, b = int(zc["a"]), int(zc["b"])

    def at(n, k):
        return n // 10 ** k % 10 if k >= 0 else 0
    for p in zc["predicting"]:
        k = zc["tokens"][p]["next_place"]
        held, after = cells(zc, "embed", "x1")[p][0], cells(zc, "L0.attn", "x1")[p][0]
        assert held == -at(a + b, k - 1)  # x1 held −s_(k−1) (the separator's 0 at k = 0)
        assert abs(after - held - (10 * (at(a, k) + at(b, k)) + at(a, k - 1) + at(b, k - 1))
                   ) < 0.25
        carry_in = int(a % 10 ** k + b % 10 ** k >= 10 ** k) if k else 0
        below = int(k > 1 and a % 10 ** (k - 1) + b % 10 ** (k - 1) >= 10 ** (k - 1))
        assert at(a, k - 1) + at(b, k - 1) - at(a + b, k - 1) == 10 * carry_in - below
    why = ("(within 0.25; c_k the carry into place k), since the head weighs a_k and b_k ten "
           "times as much as a_(k−1) and b_(k−1) and adds 10·(a_k + b_k) + a_(k−1) + b_(k−1) "
           "to x1, which held −s_(k−1), and a_(k−1) + b_(k−1) − s_(k−1) = 10·c_k − c_(k−1)")
    embedded = "embedded = 1000 − 2.5·10⁻⁴·d² on the digit d the position holds"
    for page in (explore_page._compare_section(zc, jl), pairs.page(zc, jl, 31)):
        assert escape(why) in page and escape(embedded) in page
    for page in (explore_page._compare_section(published, zc), pairs.page(published, zc, 31)):
        assert escape(why) in page and "embedded =" not in page


def test_the_static_page_matches_by_role_side_by_side():
    """``--static`` draws B at the position that does what A's does (TinyAdder-36's position
    22 predicts s10; zcbtrak-6's position 40 does), a stage B lacks at its last stage of the
    same kind, and the two figures side by side, each scaled to its column (never cut off
    nor scrolled sideways); a rounded
    negative value reads '≈ −76.08' (never −~76.08 nor ~−76.08)."""
    published, zc = float_views("published", digits=10), float_views("zcbtrak-6")
    assert pairs.positions(published, zc) == (22, 40)
    assert pairs.positions(zc, published) == (30, 32)
    assert pairs.stage_of(zc, "L1.attn") == "L0.attn" and pairs.stage_of(zc, "L1.mlp") == (
        "L0.mlp")
    page = pairs.page(published, zc)
    assert ("tinyadder36-published is drawn at position 22 (the first that predicts a digit: "
            "it predicts s10); zcbtrak-6 at the position that predicts s10, position 40.") in page
    assert "zcbtrak-6 has no stage L1.attn; matched by role: after its last attention, L0.attn" \
        in page and "<h3>B: zcbtrak-6, position 40 (s9)</h3>" in page
    assert "grid-template-columns: 1fr 1fr;" in page
    assert ".pair svg { max-width: 100%; height: auto; }" in page
    assert f"<p>{escape(pairs.NO_COMMON_SLOT_STATIC)}</p>" in page  # the logits alone
    assert "~\u2212" not in page and "\u2212~" not in page and "\u2248 \u2212" in page


def test_learner7_homonyms_are_not_counted_and_separators_are_named_by_position():
    """Slots named alike but meant apart are 'another quantity' in the agreement tables,
    never a count of equal numbers (zcbtrak-6's x1 embeds −d, jacobli99-28's +d: their 0s
    agree); a separator that differs first is named by its position, never "'0' #11"; the
    key-quantity table ends with how each design picks its digit."""
    zc, jl = float_views("zcbtrak-6"), float_views("jacobli99-28")
    rows = {(r["stage"], r["slot"]): r for r in pairs.table_rows(zc, jl)}
    assert rows[("embed", "x1")]["apart"] and rows[("L0.attn", "x0")]["apart"]
    page = explore_page._compare_section(zc, jl)
    # every slot both name alike is another quantity (learner9 3): one sentence, not a row
    # per stage and slot saying the same, and the winner's row alone
    said = ("Every slot both name alike (x0 and x1) holds another quantity in each design at "
            "every stage, so no slot is compared position by position: the winner alone is.")
    assert pairs.apart_line(pairs.table_rows(zc, jl)) == said
    assert f"<p>{said}</p><table" in page and pairs.APART not in page
    assert escape(pairs.NO_COMMON_SLOT) not in page  # they do name x0 and x1 alike
    folded = page.split('id="cmp-agreement"')[1]
    assert re.findall(r"<tr><td>(\w+)</td><td><code>(\w+)</code>", folded) == [
        ("readout", "winner")]
    static = pairs.page(zc, jl, pos=31)
    assert f'<p id="all-apart">{said}</p>' in static and pairs.APART not in static
    assert re.findall(r"<tr><td>(\w+)</td><td><code>(\w+)</code></td><td>(.*?)</td>",
                      static.split('id="agreement"')[1]) == [
        ("readout", "winner", "the same at all 11 positions")]
    assert "formula is in the table folded above" in static  # the static page's is above
    assert " #" not in "".join(str(r["first"]) for r in pairs.agreement(zc, jl))
    assert pairs.called(zc, 15) == "'0' (15)"  # a padding zero: its token and position
    published = float_views("published")
    firsts = [r["first"][0] for r in pairs.agreement(published, zc) if r["first"]]
    assert firsts and not [f for f in firsts if "#" in f]
    table = pairs.key_table(zc, jl)
    assert ('<tr class="how"><td>digit it picks, and how</td><td colspan="1">the FFN wraps it '
            'into x1 ≈ 10·s_k (within 2.5);') in table  # learner8 6: ~21.42 at s_k = 2
    assert "s_k = ⌊x⌋, x = (R + b + ℓ)/P" in pairs.key_table(published, zc)


def test_learner7_the_static_page_puts_what_each_design_computes_first():
    """--static: the key-quantity table and the named-alike table come before the
    agreement table, and the page promises no hover."""
    zc, jl = float_views("zcbtrak-6"), float_views("jacobli99-28")
    text = pairs.page(zc, jl)
    assert (text.index('id="key-quantities"') < text.index('id="homonyms"') <
            text.index('id="agreement"'))
    assert "hover" not in text.split("<main>")[0].replace("with hovers", "")


def test_learner7_the_static_page_takes_a_position_and_lines_positions_up(capsys):
    """``--static --pos P`` draws A at P, B at its match by role (zcbtrak-6's 31 predicts s1,
    as jacobli99-28's 24 does), and a row per model says which position matches which;
    ``--pos`` without ``--static`` is refused in one line."""
    zc, jl = float_views("zcbtrak-6"), float_views("jacobli99-28")
    text = pairs.page(zc, jl, pos=31)
    assert ("zcbtrak-6 is drawn at position 31 (the one asked for: it predicts s1); "
            "jacobli99-28 at the position that predicts s1, position 24.") in text
    assert "<h3>B: jacobli99-28, position 24 (s0)</h3>" in text
    row = re.search(r'<tr><th>jacobli99-28</th>(.*?)</tr>', text).group(1)
    # separators matched by their job (learner9 4): the '0' before b0 with the '0' before b0
    # (19 with 12), the one before the answer with the one before the answer (30 with 23);
    # zcbtrak-6's other padding zeros (11 to 18) with none, so no position is matched twice
    cells = re.findall(r"<td>([^<]*)(?:<br><small>[^<]*</small>)?</td>", row)
    assert cells[10:20] == ["10"] + ["—"] * 8 + ["12"] and cells[30] == "23"
    # each position with its token's label under it, as the strips show it (learner19 5)
    labelled = re.findall(r"<td>(\d+)<br><small>([^<]*)</small></td>", row)
    assert labelled[:3] == [("0", "&#x27;0&#x27;"), ("1", "a0"), ("2", "a1")]
    own = re.search(r'<tr><th>zcbtrak-6</th>(.*?)</tr>', text).group(1)
    assert re.findall(r"<td>(\d+)<br><small>([^<]*)</small></td>", own)[29:32] == [
        ("29", "b9"), ("30", "&#x27;0&#x27;"), ("31", "s0")]
    assert 'id="twice"' not in text
    # and the page says why under the table (learner14 8)
    assert ("<p id=\"unmatched\">zcbtrak-6's positions 11\u201318 (\u2014) match none: "
            "padding zeros other than the three separators (before a, before b, before the "
            "answer) are matched only when both models use the same prompt layout, and "
            "jacobli99-28's differs.</p>") in text
    assert pairs.unmatched(zc, zc, [(11, None)]) == ""  # the same layout: nothing to say
    assert pairs.matched(zc, jl, 19) == ("the separator before b", 12)
    assert pairs.matched(zc, jl, 13) == ("'0' #3", None)
    published = float_views("published", digits=10)
    assert [pairs.matched(zc, published, p)[1] for p in (0, 11, 18, 19)] == [0, None, None, 11]
    labels = {r["first"][0] for r in pairs.agreement(published, zc) if r["first"]}
    assert pairs.by_label(published)["the separator before the answer"] == 22
    assert pairs.counterparts(published, zc)["the separator before the answer"] == 30
    assert not [label for label in labels if "#" in label]
    # the same prompt layout: every padding zero has its twin (zcbtrak-6, yieldthought-20)
    yt = float_views("yieldthought-20")
    assert [pairs.matched(zc, yt, p)[1] for p in range(42)] == list(range(42))
    with pytest.raises(SystemExit) as exit_:
        explore.main(["--compare", "zcbtrak-6", "jacobli99-28", "--pos", "31", "1+2"],
                     io.StringIO(), io.StringIO(), None)
    assert exit_.value.code == 2
    assert "--pos picks the static page's position" in capsys.readouterr().err


def test_learner8_the_static_page_prints_each_stages_lanes():
    """--static prints, under each stage's figure, the drawn position's value in every slot
    (learner8 1): at published's position 31 after L1.attn, eq, special and count hold
    layer 1's average ~75.4332, beside zcbtrak-6's x1 ~100.002 after L0.attn; the page
    points to those tables, never to hovers it does not have."""
    published, zc = float_views("published", digits=10), float_views("zcbtrak-6")
    table = pairs.lanes(published, "L1.attn", 31)
    assert "<caption>tinyadder36-published's lanes at position 31 after L1.attn" in table
    cells = re.findall(r"<td>([^<]*)</td>", table)[1::2]
    assert cells[0] == cells[1] == cells[3] == "~\u200975.4332"
    theirs = pairs._stage_lanes(zc, "L1.attn", 31).split("<table")[1]
    assert "zcbtrak-6's lanes at position 31 after L0.attn" in theirs
    assert re.findall(r"<td>([^<]*)</td>", theirs) == ["x0", "999.996", "x1", "~\u2009100.002"]
    assert "hovers" not in pairs.NO_COMMON_SLOT_STATIC
    # both lanes tables sit side by side after B's figure, not one under each (learner16 3)
    assert pairs.NO_COMMON_SLOT_STATIC.endswith(
        "in the two tables side by side under each stage's two figures.")
    page = pairs.page(published, zc, pos=31)
    stage = page.split('id="stage-L1.attn"')[1].split("</section>")[0]
    assert stage.index("<h3>B: ") < stage.index('<div class="pair"><div><table class="cmp lanes">')


def test_learner8_logits_on_one_scale_compare_by_their_gap_to_the_winner():
    """zcbtrak-6 and yieldthought-20 read logits near 10^5 (one scale): six digits of the
    logit say nothing of the digit, so each logit is compared by its gap to the winner
    (learner8 3), the gap texts in the first difference."""
    zc, yt = float_views("zcbtrak-6"), float_views("yieldthought-20")
    assert not pairs.scales_differ(zc, yt)
    rows = {r["slot"]: r for r in pairs.table_rows(zc, yt) if r["stage"] == "readout"}
    gap = next(r for r in zc["residual"][-1]["slots"] if r["slot"] == "logit 1")["gap"]
    assert rows["logit 1"]["gap"] and rows["logit 1"]["first"][1] == gap[1][2]
    assert pairs._verdict(rows["logit 1"]).startswith("its gap to the winner: the same at ")
    assert "its gap to the winner: " in explore_page._compare_section(zc, yt)


def test_learner8_the_static_page_notes_a_position_matched_twice_and_draws_logits_once():
    """The mapping caption reads '—: none', and a note says why zcbtrak-6's position 31 is
    matched twice (it holds s0 and predicts s1; learner8 10); the logit rows are drawn at the
    readout only (learner8 15); a view jumped to clears the sticky bar (learner8 9)."""
    published, zc = float_views("published", digits=10), float_views("zcbtrak-6")
    text = pairs.page(published, zc, pos=31)
    assert "(—: none)</caption>" in text
    assert ("<p id=\"twice\">zcbtrak-6's position 31 appears twice: a position both holds a "
            "token") in text
    stages = text.split('<section class="stage" id="stage-')[1:]
    assert [s.split('"')[0] for s in stages if ">logit 0<" in s] == ["readout"]
    assert "section { border-top: 1px solid #ddd; padding: 14px 0; scroll-margin-top: 150px; }" \
        in explore_page.page(zc)


def test_learner23_the_match_table_names_the_digit_both_positions_predict():
    """The static match table labelled each position by the token it holds, so pairs matched
    by the digit they predict read off by one ("22 '=' ↔ 40 s9"; learner23 2): a middle row
    names the digit both predict, which each position's next token is in its own run, and is
    blank where the match is by the token held (TinyAdder-36's last s0 with zcbtrak-6's 31)."""
    published, zc = float_views("published", digits=10), float_views("zcbtrak-6")
    table = pairs.correspondence(published, zc)
    rows = re.findall(r"<tr><th>(.*?)</th>(.*?)</tr>", table)
    assert [name for name, _ in rows] == ["tinyadder36-published", "both predict",
                                          "zcbtrak-6"]
    ours, both, theirs = ([re.sub(r"<br><small>.*?</small>", "", c)
                           for c in re.findall(r"<td>(.*?)</td>", cells)] for _, cells in rows)
    assert (ours[22], both[22], theirs[22]) == ("22", "s10", "40")
    assert (ours[23], both[23], theirs[23]) == ("23", "s9", "39")
    assert (ours[32], both[32], theirs[32]) == ("32", "s0", "30")
    assert (ours[33], both[33], theirs[33]) == ("33", "", "31")  # both hold s0
    for p, digit in enumerate(both):
        if digit:
            q = int(theirs[p])
            for views, at in ((published, p), (zc, q)):
                assert views["tokens"][at + 1]["label"] == digit
    assert both.count("") == 34 - 11
    assert "the one that predicts the same digit (the middle row)" in table


def test_explorer_mds_compare_example_is_the_run():
    """docs/explorer.md's example (learner9 9): TinyAdder-36 predicts s0 at position 32,
    zcbtrak-6 at 30; a3 is position 7 and 4; published's L1.attn, a stage zcbtrak-6 lacks, is
    matched with its last attention, L0.attn."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "explorer.md").read_text(
        encoding="utf-8")
    said = " ".join(doc.split())
    assert ("(TinyAdder-36 predicts s0 at position 32, zcbtrak-6, which writes the units "
            "first, at position 30)") in said
    assert "(a3 is position 7 in TinyAdder-36, 4 in zcbtrak-6)" in said
    assert "(TinyAdder-36's L1.attn with zcbtrak-6's L0.attn, its only attention)" in said
    published, zc = float_views("published", digits=10), float_views("zcbtrak-6")
    for views, s0, a3 in ((published, 32, 7), (zc, 30, 4)):
        tokens = views["tokens"]
        assert [q for q in views["predicting"] if tokens[q]["next_place"] == 0] == [s0]
        assert [t["pos"] for t in tokens if t["label"] == "a3"] == [a3]
    assert [s["short"] for s in zc["stages"] if s["short"].endswith("attn")] == ["L0.attn"]
    assert pairs.stage_of(zc, "L1.attn") == "L0.attn"
    assert pairs.stage_of(published, "L1.attn") == "L1.attn"


def test_learner23_explorer_mds_key_quantities_one_sub_bullet_per_design():
    """docs/explorer.md's "Key quantities" bullet was one sentence of about 200 words
    (learner23 7): one sub-bullet per design, each short, and each example is the run's."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "explorer.md").read_text(
        encoding="utf-8")
    bullet = doc.split("- **Key quantities**")[1].split("\n- **")[0]
    subs = [" ".join(b.split()) for b in bullet.split("\n  - ")[1:]]
    assert [b.split("*")[1] for b in subs] == ["TinyAdder-36", "rope-19", "jacobli99-28"]
    assert all(len(b.split()) <= 80 for b in subs)
    tiny, rope, jacob = subs
    published, zc, jl = (float_views(m) for m in ("published", "zcbtrak-6", "jacobli99-28"))
    assert pairs.key_quantities(published)[0][1]["s10"][0] in tiny
    assert "1000.409; ÷ 999.99 (just under 10³): x = 1.00042" in pairs.key_table(
        *(float_views(m, "599+401", 3) for m in ("published", "repaired")))
    (head, column), = pairs.key_quantities(zc)
    assert column["s9"][0] == "~\u200968.9941; 10·(7 + 0 + 0) − 1" and "(~68.9941 for 69)" in rope
    assert head.split(", since ")[1].split(", and a_(k−1)")[0] in rope
    x0 = pairs.key_quantities(jl)[1][0]
    assert "embedded = 1000 − 2.5·10⁻⁴·d² on the digit d the position holds" in x0 and \
        "embedded = 1000 − 2.5·10⁻⁴·d² on the digit d the position holds (999.984 where it " \
        "holds 8)" in jacob and 1000 - Fraction(1, 4000) * 8 ** 2 == Fraction("999.984")


def test_learner9_what_each_readouts_l1_mlp_writes():
    """Published against repaired at N = 3 (learner9 10): one line says what each design's
    L1.mlp does to the slots named alike (the published one adds err0 .. err9 into eq ..
    cand4; the repaired one writes them into slots of its own), read from each model's program
    and meanings, with a pointer to docs/spec.md's section on the readout; the live page has
    it for the stage, the static page under the stage's heading. zcbtrak-6 and jacobli99-28
    both write x0 or x1 in their attention: no such line."""
    published, repaired = (float_views(m, "599+401", 3) for m in ("published", "repaired"))
    line = ("What each design's L1.mlp writes: tinyadder36-published's L1.mlp writes into eq, "
            "special, …, cand4 (err0, err1, …, err9), each added to what the slot held; "
            "tinyadder36-repaired's L1.mlp writes err0, err1, …, err9 into slots of its own and "
            "leaves eq, special, …, cand4 as they were (docs/spec.md, \"Readout: "
            "negative-absolute-error logits\", says what the readout reads and why).")
    assert pairs.writes_lines(published, repaired) == {"L1.mlp": line}
    spec = (Path(__file__).resolve().parent.parent / "docs" / "spec.md").read_text(
        encoding="utf-8")
    assert f"\n## {pairs.SPEC_READOUT}\n" in spec
    assert [p["writes"] for p in repaired["program"] if p["stage"] == "L1.mlp"] == [
        [f"err{u}" for u in range(10)]]
    assert explore_page.compare_data(published, repaired)["writes"] == {"L1.mlp": line}
    stage = pairs.page(published, repaired).split('id="stage-L1.mlp"><h2>')[1]
    assert stage.startswith(f'Residual stream after L1.mlp</h2><p class="writes">{escape(line)}'
                            '</p>')
    assert pairs.writes_lines(float_views("zcbtrak-6"), float_views("jacobli99-28")) == {}


def test_learner19_published_against_repaired_one_key_column_that_divides_out():
    """599 + 401's s3 read '1000.409; ÷ 10³: x = 1.00042', which does not divide out: P is
    10³ less 0.010, so it is printed (learner19 1); the two designs' key columns were the
    same character for character: one column, headed 'both (identical)' (learner19 3)."""
    published, repaired = (float_views(m, "599+401", 3) for m in ("published", "repaired"))
    table = pairs.key_table(published, repaired)
    heads = re.findall(r"<th>(.*?)</th>", table)
    assert len(heads) == 2 and heads[1].startswith("both (identical): R + b + ℓ")
    assert ('<tr data-pos="8"><td>s3</td><td class="mono">1000.409; ÷ 999.99 (just under '
            '10³): x = 1.00042 → digit 1</td></tr>') in table
    assert 1000.409 / 999.99 == pytest.approx(1.00042, abs=5e-6)
    assert "both (identical)" not in pairs.key_table(float_views("published"),
                                                     float_views("zcbtrak-6"))


def test_learner19_the_fold_says_what_differs_and_a_line_points_at_it():
    """Published against repaired reads the same in every slot up to L1.attn: a line says
    where the runs first differ, with a link that opens it (learner19 4), worded to hold at
    whichever stage the page shows, never "where the page opens", which a fragment opening
    another stage made stale (learner23 4); the fold under it is titled by what it holds
    and which slots differ from which stage, not a second caption for the key table
    (learner19 2). zcbtrak-6 against jacobli99-28 differs at embed already: no line."""
    published, repaired = (float_views(m, "599+401", 3) for m in ("published", "repaired"))
    live = explore_page._compare_section(published, repaired)
    line = ("From embed to L1.attn every slot both models name alike reads the same at every "
            "position; the two runs first differ after L1.mlp (eq, special, …, cand4): ")
    assert (f'<p id="cmp-differ">{line}<a href="#pos=8&amp;stage=L1.mlp&amp;view=compare">'
            'choose that stage</a>.</p>') in live
    rows = pairs.table_rows(published, repaired)
    assert {r["stage"] for r in rows if r["first"] is not None or r.get("apart")} == {
        "L1.mlp", "readout"}
    assert ("<summary>What the slots named alike mean in each design (eq … cand4 from L1.mlp "
            "on; at the position that predicts s_k)</summary>") in live
    assert "s<sub>k</sub></summary>" not in live
    static = pairs.page(published, repaired)
    assert f'<p id="cmp-differ">{line}<a href="#stage-L1.mlp">choose that stage</a>' in static
    assert "where the page opens" not in live + static
    zc, jl = float_views("zcbtrak-6"), float_views("jacobli99-28")
    assert pairs.differ_line(zc, jl) == "" and "x0 and x1 from embed on" in \
        pairs.homonym_table(zc, jl)


def test_learner10_the_readout_picks_the_nearest_ruler_mark():
    """The key-quantity table's last row said "the ruler mark just below x" (learner10 1):
    the marks sit at u + ½ and the nearest wins, so at x = 1.0247 the digit is 1, not the 0
    of the mark 0.5 just below it; each deciding position's digit is ⌊x⌋ of the run."""
    views = float_views("published")
    said = pairs.how_picked(views)
    assert said == ("s_k = ⌊x⌋, x = (R + b + ℓ)/P: the ruler's marks sit at u + ½; the "
                    "readout's largest logit is the mark nearest x, whose u is ⌊x⌋")
    assert "just below" not in pairs.key_table(views, float_views("zcbtrak-6"))


def test_learner10_the_static_page_side_by_side_with_lanes_as_rows():
    """The static page's lane tables ran off the right edge (26 columns; learner10 4), its
    help said "side by side" of a page that stacked the models (5), and B's layer-1
    attention was a blank "no live head in layer 1" where its lanes are matched with L0.attn
    (6): each lane is a row, the two models stand in two columns, and the blank panel links to
    the layer drawn above."""
    left, right = float_views("published"), float_views("zcbtrak-6")
    text = pairs.page(left, right, 31)
    assert ".pair { display: grid; grid-template-columns: 1fr 1fr;" in text
    lanes = re.findall(r'<table class="cmp lanes"><caption>(.*?)</caption>(.*?)</table>', text)
    assert len(lanes) == 2 * 6
    for _, table in lanes:
        assert table.startswith("<thead><tr><th>slot</th><th>value</th></tr></thead>")
        assert table.count("<tr>") == table.count("</td></tr>") + 1  # one row per slot
    after = dict(lanes)["tinyadder36-published's lanes at position 31 after L1.attn"]
    assert "<tr><td>eq</td><td>~\u200975.4332</td></tr>" in after
    assert "<tr><td>cand9</td><td>≈ −2803.35</td></tr>" in after
    # the key-quantity table's R + b + ℓ, 2.48929 at s1, is what the lanes hold, scaled
    # (learner10 3): 1000/33 · 2.48929 = 75.4332, eq's value in the table above
    said = ("tinyadder36-published's layer 1 attention adds its running average "
            "(1000/(i + 2))·(R + b + ℓ), the key-quantity table's R + b + ℓ: at i = 31, "
            "1000/33 · 2.48929 = 75.4332. Here eq, special and count held ≈ 0 before, so they "
            "hold it alone; the other 13 add it to what they held.")
    assert pairs.average_line(left, 31) == said
    assert f'<p class="average">{escape(said)}</p>' in text.split('id="stage-L1.attn"')[1]
    assert "2.489; ÷ 10¹: x = 0.2489 → digit" in pairs.key_table(left, right)
    assert pairs.average_line(right, 31) == pairs.average_line(left, 5) == ""
    assert explore_page.compare_data(left, right)["own_average"][31] == said
    heads1 = text.split('id="heads-1"')[1].split("</section>")[0]
    assert "no live head" not in heads1
    assert ('zcbtrak-6 has no layer 1: its lanes here are matched by role to its last '
            'attention, L0.attn, whose heads are drawn under <a href="#heads-0">Layer 0\'s '
            'attention</a> above.') in heads1
    assert 'id="heads-0"' in text
    said = explore.build_parser().format_help()
    assert "side by side (two columns)" in " ".join(said.split())
    assert ("for the TinyAdder-36 family also place values, the running sum, the ruler and "
            "why the published model fails") in " ".join(said.split())


def test_learner10_published_against_repaired_says_where_the_flaw_shows():
    """599 + 401 is right in both readouts, and the page never said the sum cannot show the
    flaw (learner10 13): it says so, that no 3-digit pair shows it (the census counts 0), and
    names a 10-digit pair the published model adds wrong."""
    from tinyadder import build
    from tinyadder.addition import add
    from tinyadder.proof.census import census
    published, repaired = (float_views(n, "599+401", 3) for n in ("published", "repaired"))
    said = pairs.flaw_line(published, repaired)
    assert said.startswith("Both designs write this sum right, so no digit differs here. "
                           "tinyadder36-published's readout tilts each decision (its flaw)")
    assert ("at N = 3 no pair falls in such a window: it adds every 3-digit pair right "
            "(tinyadder census --digits 3: 0 failing pairs;") in said
    assert "at N = 10, 5193798811 + 1806201129 is one" in said
    a, b = map(int, pairs.FAILING_EXAMPLE.split("+"))
    assert add(build("published"), "decimal", a, b) != a + b
    found = census(build("published", 3))
    assert (found.count, found.windows) == (0, [])
    assert f'<p id="flaw-said">{escape(said)}</p>' in explore_page._compare_section(
        published, repaired)
    assert pairs.flaw_line(float_views("zcbtrak-6"), float_views("jacobli99-28")) == ""


def test_learner10_the_agreement_table_writes_numbers_as_the_page_does():
    """The agreement table printed '~-2.41327e+6' (a hyphen, an e) where the page writes
    '≈ −2.41327·10⁶' (learner10, small)."""
    published, repaired = (float_views(n, "599+401", 3) for n in ("published", "repaired"))
    live = explore_page._compare_section(published, repaired)
    static = pairs.page(published, repaired)
    for text in (live, static):
        assert "≈ −2.41327·10⁶ against ≈ −2.41328·10⁶" in text
        assert "~-" not in text.split('id="cmp-agreement"' if text is live else
                                      'id="agreement"')[1].split("</table>")[0]


def test_learner12_the_intro_says_where_layouts_differ_and_the_wrap_is_ten_times():
    """'two prompt layouts put a2 in different places' only where they do (learner12 1),
    10³ as a superscript character that survives copying (learner12 20), and zcbtrak-6's
    L0.mlp x1 as ten times the column sum less about 100 (learner12 2)."""
    published, repaired = (float_views(n, "599+401", 3) for n in ("published", "repaired"))
    same = explore_page._compare_section(published, repaired)
    assert "both use the same prompt layout, so positions match one to one" in same
    assert "different places" not in same and "a2 is the digit of a at 10²" in same
    zcbtrak, jacobli = float_views("zcbtrak-6"), float_views("jacobli99-28")
    apart = explore_page._compare_section(zcbtrak, jacobli)
    assert "two prompt layouts put a3 in different places" in apart and "<sup>" not in apart
    wrap = zcbtrak["meanings"]["L0.mlp"]["x1"][1]
    assert wrap.startswith("ten times the column sum, less about 100 when the column reached "
                           "10 (the wrap)")


def test_learner12_the_live_agreement_folds_runs_and_tags_unused_positions():
    """The live 'Over all positions' table folded 42 rows of '13 of 13' into one, so the rows
    that differ stand out (learner12 5); a logit that differs only where a prediction is never
    used says so (learner12 6)."""
    published, repaired = (float_views(n, "599+401", 3) for n in ("published", "repaired"))
    live = explore_page._compare_section(published, repaired)
    table = live.split('id="cmp-agreement"')[1].split("</table>")[0]
    assert ("<tr><td>embed \u2026 L1.attn</td><td><code>all 42 stage-slot rows</code></td>"
            "<td>13 of 13</td><td></td></tr>") in table
    assert table.count("13 of 13") == 6  # the fold, L1.mlp's and the readout's, 3 logits
    assert ("logit 2</code></td><td>its gap to the winner: 8 of 13</td><td>a2 (a prompt "
            "position: its prediction is not used; it differs at no position that predicts a "
            "digit of the sum): \u221250.0 against 0.0") in table
    # a slot, not only a logit, that first differs where a prediction is unused is tagged,
    # and the first that predicts a digit of the sum is given with its values (learner19 7)
    zc, yt = float_views("zcbtrak-6"), float_views("yieldthought-20")
    x1 = next(r for r in pairs.agreement(zc, yt) if (r["stage"], r["slot"]) == ("L0.attn", "x1"))
    assert x1["first"] == (
        "a0 (a prompt position: its prediction is not used; the first that predicts a digit "
        "of the sum: '0' (30, the separator before the answer; predicts s0), ~\u2009120.002 "
        "against ~\u2009119.862)", "~60.9710", "~60.9719")
    # a used position: no tag, but its number and both roles (learner16 5): the key-quantity
    # table names its row by the digit it predicts, s0, the token strip by the one it holds
    assert "11 (holds s1, predicts s0): \u2248 \u22126.08900\u00b710\u2078" in table


def test_learner16_the_live_agreement_folds_each_stages_other_quantities():
    """The ten slots eq .. cand4 that hold another quantity in each design from L1.mlp on are
    one row per stage, not ten (learner16 4)."""
    published, repaired = (float_views(n, "599+401", 3) for n in ("published", "repaired"))
    live = explore_page._compare_section(published, repaired)
    table = live.split('id="cmp-agreement"')[1].split("</table>")[0]
    row = ("<tr><td>{}</td><td><code>eq \u2026 cand4 (10 slots)</code></td><td>another "
           "quantity in each design: not compared</td><td></td></tr>")
    assert row.format("L1.mlp") in table and row.format("readout") in table
    assert table.count(pairs.APART) == 2
    assert [r["slot"] for r in pairs.folded(pairs.table_rows(published, repaired))
            if r.get("apart")] == ["eq \u2026 cand4 (10 slots)"] * 2


def test_learner12_the_live_page_says_what_its_marks_mean():
    """'~75.4332' beside '≈ −76.0820' and '≈ 0 (exact dust)': the page says what ~ and ≈
    mean beside the lanes, not only docs/explorer.md (learner12 3)."""
    published, repaired = (float_views(n, "599+401", 3) for n in ("published", "repaired"))
    live = explore_page._compare_section(published, repaired)
    assert ('<p id="cmp-legend">How to read the numbers: ~ marks a value rounded to six '
            'significant digits; before a minus sign it is written \u2248 (\u2248 \u221276.0820 '
            'is about \u221276.0820). \u2248 0 (exact dust) is a value not 0 but too small for '
            'a float (its hover gives it). A number with neither mark is exact.</p>') in live


def test_learner12_the_static_page_stacks_figures_and_gives_the_winner():
    """--static: each stage's two figures stacked at full width under 'A: ' and 'B: '
    headings (side by side they shrank to 6 px text, and five stacked heads left 4500 px of
    empty column beside one, learner12 8, 10), the lanes still side by side; the readout's
    lanes give the winner, the lead and each logit's gap to the winner (learner12 9)."""
    zc, jl = float_views("zcbtrak-6"), float_views("jacobli99-28")
    text = pairs.page(zc, jl, pos=31)
    readout = text.split('id="stage-readout"')[1].split("</section>")[0]
    assert readout.index('<div class="figure"><h3>A: zcbtrak-6, position 31 (s0)</h3>') < \
        readout.index('<div class="figure"><h3>B: jacobli99-28, position 24 (s0)</h3>') < \
        readout.index('<div class="pair"><div><table class="cmp lanes">')
    assert ("<tr><td>winner</td><td>0</td></tr><tr><td>lead</td><td>~\u20090.0801490</td></tr>"
            in readout)
    assert "<tr><td>logit 0</td><td>~\u2009100000 (the winner)</td></tr>" in readout
    assert "<tr><td>logit 1</td><td>~\u200999999.9 (\u2248 \u22120.0801490 to the winner)</td></tr>" \
        in readout
    heads = text.split('id="heads-0"')[1].split("</section>")[0]
    assert '<div class="pair">' not in heads and heads.count('<div class="heads">') == 2
