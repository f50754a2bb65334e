"""The doc figures under docs/img/ are what ``tinyadder figure`` draws today: each is
regenerated and compared, as the doctests keep the text honest. To redraw them all:

    python -m tinyadder figure attention 7650676663+0149460439 --pos 24 -o docs/img/attention.svg
    python -m tinyadder figure place 7650676663+0149460439 --pos 24 -o docs/img/place.svg
    python -m tinyadder figure count 7650676663+0149460439 --pos 24 -o docs/img/count.svg
    python -m tinyadder figure slots 7650676663+0149460439 --stage L0.mlp --pos 24 \\
        -o docs/img/slots.svg
    python -m tinyadder figure sum 7650676663+0149460439 --pos 24 -o docs/img/sum.svg
    python -m tinyadder figure ruler 7650676663+0149460439 --pos 24 -o docs/img/ruler.svg
    python -m tinyadder figure flaw 5193798811+1806201129 -o docs/img/flaw.svg
    python -m tinyadder figure change 7650676663+0149460439 -o docs/img/change.svg
"""

import html
import io
import re
import sys
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

from explore_cases import EXAMPLE, FLAW, traced
from tinyadder.analysis.pictures.explore import defaults
from tinyadder.analysis.pictures import figures
from tinyadder.analysis.pictures.figures import FIGURES
from tinyadder.analysis.pictures.svg import text_width
from tinyadder import build, number_system, run_with_cache
from tinyadder.analysis.pictures.views import build_views
from tinyadder.cli import figure

IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
# name -> (expression, state beyond the page's defaults), as in the commands above
DRAWN = {
    "attention": (EXAMPLE, {"pos": 24}),
    "place": (EXAMPLE, {"pos": 24}),
    "count": (EXAMPLE, {"pos": 24}),
    "slots": (EXAMPLE, {"pos": 24, "stage": "L0.mlp"}),
    "sum": (EXAMPLE, {"pos": 24}),
    "ruler": (EXAMPLE, {"pos": 24}),
    "flaw": (FLAW, {}),
    "change": (EXAMPLE, {}),
}


def test_every_figure_is_checked_in():
    assert sorted(DRAWN) == sorted(FIGURES) == sorted(p.stem for p in IMG.glob("*.svg"))


@pytest.mark.parametrize("name", sorted(DRAWN))
def test_figure_is_current(name):
    expr, state = DRAWN[name]
    views = traced(expr)[1]
    drawn = FIGURES[name](views, {**defaults(views), "stage": "L0.mlp", **state})
    assert drawn == (IMG / f"{name}.svg").read_text(encoding="utf-8"), \
        f"docs/img/{name}.svg is stale: redraw it (see tests/test_figures.py)"
    root = ET.fromstring(drawn)  # well-formed, standalone SVG
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and "href" not in drawn


def test_command_line(tmp_path):
    out = io.StringIO()
    path = tmp_path / "r.svg"
    assert figure.main(["ruler", "999+1", "--digits", "3", "--pos", "9", "-o", str(path)],
                       out, io.StringIO(), None) == 0
    assert out.getvalue() == f"wrote {path}\n"
    text = path.read_text(encoding="utf-8")
    assert "Ruler at position 9: the nearest mark, 0.5, wins" in text


@pytest.mark.parametrize("argv, message", [
    (["slots", "12+34", "--stage", "L2.attn"], "unknown stage 'L2.attn'; use embed, L0.attn"),
    (["attention", "12+34", "--head", "L0.h1"], "head 'L0.h1' is not drawn; use L0.h3"),
    (["ruler", "12+34", "--pos", "34"], "position 34 is outside the sequence; use 0 to 33"),
    (["heat", "12+34"], "argument NAME: invalid choice: 'heat'"),
    # a mixed block's stages end with its mix
    (["slots", "1+2", "--model", "lokimorty-39", "--stage", "L2.mlp"],
     "unknown stage 'L2.mlp'; use embed, L0.attn, L0.mlp, L1.attn, L1.mlp, mix, readout"),
])
def test_bad_options(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        figure.main(argv, io.StringIO(), sys.stderr, None)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tinyadder figure: error: {message}") and err.count("\n") == 1


def test_a_mixed_blocks_mix_is_drawn(tmp_path):
    """lokimorty-39's mix (hook_mix) is a stage a figure draws, as the explorer lists it."""
    path = tmp_path / "mix.svg"
    assert figure.main(["slots", "123+456", "--model", "lokimorty-39", "--number", "float",
                        "--stage", "mix", "-o", str(path)], io.StringIO(), io.StringIO(),
                       None) == 0
    assert ("<title>Residual stream after the mix of layer 0&#x27;s and layer 1&#x27;s "
            "outputs (mix)</title>") in path.read_text(encoding="utf-8")


def test_a_wrong_sum_warns_and_exits_1(tmp_path, monkeypatch):
    """A figure of a wrong sum is drawn, but the command says the sum is wrong, as every
    command that runs the model does (it exited 0 in silence)."""
    monkeypatch.setattr(figure, "views_of", lambda *args: traced(FLAW)[1])
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "s.svg"
    assert figure.main(["sum", FLAW, "-o", str(path)], out, err, None) == 1
    assert path.read_text(encoding="utf-8").startswith("<svg")
    assert err.getvalue() == ("tinyadder: warning: the published model's sum 7000000000 is "
                              "wrong: 5193798811 + 1806201129 = 6999999940\n")


def test_the_running_sum_of_a_rounding_run_is_not_called_a_plus_b_minus_the_digits():
    """float32's running values are not a + b minus the digits written: the caption says what
    they are and each row shows both where they differ."""
    a, b = map(int, EXAMPLE.split("+"))
    _, run = run_with_cache(build("published"), EXAMPLE, ns=number_system("float32"))
    views = build_views(run, a, b, changes=False)
    drawn = FIGURES["sum"](views, {**defaults(views), "pos": 24})
    assert "<title>Running sum: R as this run holds it (log scale); at 11 of 11 positions " \
           "rounding moved it off a + b minus the digits written" in drawn
    assert "R = 7800137102 \u2260 7800137102" not in drawn
    assert "\u2260 7800137102, a + b minus the digits written" in drawn


def test_the_flaw_is_drawn_to_scale():
    """tilt/margin = 8.4 on an axis clipped at 10^-6 (not 10^-15, where it sat 7 px above the
    line and read as a near miss), and the decision at position 23 as linear bars: +119 from
    layer 1's FFN, -1000 from the readout's other slots, -881 net."""
    drawn = (IMG / "flaw.svg").read_text(encoding="utf-8")
    assert "\u226a 1 (&lt; 10\u207b\u2076)" in drawn and "10\u207b\u00b9\u2075" not in drawn
    for term in ("+119  the margin, from layer 1's FFN",
                 "\u22121000  = \u2212tilt: what the readout's other slots add",  # learner25 2
                 "\u2212881  the net: logit(6) \u2212 logit(7), in units of the sum"):
        assert f">{html.escape(term)}</text>" in drawn, term


def test_the_ruler_magnifies_around_the_boundary():
    """The magnifier centres on the boundary where the choice flips, at the scale of x's
    distance from it: 6·10^-8 below 7 at the flaw's position 23 (it showed ±0.6 around x,
    where that distance is invisible), and the tilt's shift of the boundary, 5·10^-7."""
    views = traced(FLAW)[1]
    drawn = FIGURES["ruler"](views, {**defaults(views), "pos": 23})
    assert ("magnified around the boundary 7 between marks 6 + \u00bd and 7 + \u00bd: from "
            "7 \u2212 10\u207b\u2076 to 7 + 10\u207b\u2076") in drawn
    assert ">x: 5.96\u00b710\u207b\u2078 below 7</text>" in drawn
    assert ">the tilt moves the boundary here</text>" in drawn


def test_the_magnifier_magnifies_or_says_there_is_nothing_to():
    """At 7650676663 + 0149460439's position 28, x = 3.71 sits 0.29 below the boundary 4: a
    strip from 4 - 10^0 to 4 + 10^0 showed no more than the ruler above (learner18 10), so a
    line says so; at position 24 (x 0.0014 from 8) the strip still magnifies."""
    views = traced(EXAMPLE)[1]
    far = FIGURES["ruler"](views, {**defaults(views), "pos": 28})
    assert ">x is 0.29 below the boundary 4, where the choice flips: the ruler above shows " \
           "that at full scale, so nothing to magnify</text>" in far
    assert "magnified around" not in far and "\u2212 10\u2070" not in far
    near = FIGURES["ruler"](views, {**defaults(views), "pos": 24})
    assert ("magnified around the boundary 8 between marks 7 + \u00bd and 8 + \u00bd: from "
            "8 \u2212 10\u207b\u00b2 to 8 + 10\u207b\u00b2") in near
    # no empty box where the magnifier is skipped (learner22 10): the figure is 240 px tall
    # there, its one line at y = 222, and 310 with a magnifier; the page's copy carries each
    # position's height for its script
    assert re.search(r'viewBox="0 0 [0-9.]+ 240" width="[0-9.]+" height="240"', far)
    assert re.search(r'viewBox="0 0 [0-9.]+ 310" width="[0-9.]+" height="310"', near)
    assert max(float(y) for y in re.findall(r' y="([0-9.]+)"', far)) == 222
    page = figures.ruler(views, 24)
    assert 'data-show-pos="28" display="none" data-height="240"' in page
    assert 'data-show-pos="24" data-height="310"' in page


def test_the_ruler_says_which_way_the_tilt_leans():
    """"tilt -100 units; lead of 8: ..." left the sign unexplained, where the lead is the margin
    plus 100 (learner18 2): the line says whom the tilt favours, in explain's words, and the
    lead's formula; a positive tilt favours the rival."""
    views = traced(EXAMPLE)[1]
    drawn = FIGURES["ruler"](views, {**defaults(views), "pos": 24})
    assert (">tilt \u2212100 units (negative: it favours 8, the winner); lead of 8 = margin "
            "\u2212 tilt = 2.74\u00b710\u2075 units (~1.05502\u00b710\u00b9\u00b3 in logits)"
            "</text>") in drawn
    assert "tilt -100" not in drawn
    drawn = FIGURES["ruler"](views, {**defaults(views), "pos": 23})
    assert ">tilt +1000 units (positive: it favours 8, the rival); lead of 7 = margin " \
           "\u2212 tilt = 4\u00b710\u2078 units" in drawn
    # the flaw's attribution: a negative tilt is no ratio below 1, it favours the winner too
    drawn = FIGURES["flaw"](views, {**defaults(views), "pos": 28})
    assert ">tilt/margin &lt; 0: the tilt favours 3 as well, which is written</text>" in drawn
    assert "tilt/margin = -" not in drawn
    drawn = FIGURES["flaw"](views, {**defaults(views), "pos": 22})
    assert ">tilt 0: nothing tilts the comparison, 0 is written</text>" in drawn
    # an exact power of ten as a power, and one unit singular
    views = traced(FLAW)[1]
    drawn = FIGURES["ruler"](views, {**defaults(views), "pos": 28})
    assert ">margin: 1&#x27;s mark is farther by 10\u2074 units (" in drawn and "10^" not in drawn
    drawn = FIGURES["ruler"](views, {**defaults(views), "pos": 32})
    assert ">margin: 1&#x27;s mark is farther by 1 unit (" in drawn and "1 units" not in drawn


def test_the_place_values_floor_counts_its_keys():
    """Query 1 has one key below the scale: "1 key with weight ...", not "1 keys" (learner17
    10); query 24 has 22."""
    views = traced(EXAMPLE)[1]
    one = FIGURES["place"](views, {**defaults(views), "pos": 1})
    assert (">\u2248 0: 1 key with weight 5.07596\u00b710\u207b\u2074\u00b3\u2075, below "
            "10\u207b\u2076\u2070</text>") in one and "1 keys" not in one
    assert ">\u2248 0: 22 keys with weights " in FIGURES["place"](views, {**defaults(views),
                                                                      "pos": 24})


@pytest.mark.parametrize("digits", [10, 3])
def test_no_label_of_the_place_chart_runs_off_its_edge(digits):
    """The sink's label, right of the last column, ran past the right edge ("sink ~1.0000",
    its last digit cut; learner18 4): every text of the page's place chart, every query in
    both modes, ends inside the SVG (at 11 px, 0.58 em a character)."""
    views = traced(EXAMPLE)[1] if digits == 10 else traced("999+1", "repaired", 3)[1]
    drawn = figures.place(views)
    width = float(re.search(r'<svg [^>]*width="([\d.]+)"', drawn).group(1))
    ends = []
    for x, rest, label in re.findall(r'<text x="([\d.]+)" y="[\d.-]+" class="[^"]*"([^>]*)>'
                                     r'([^<]*)</text>', drawn):
        w = text_width(html.unescape(label))
        ends.append(float(x) + (0 if "end" in rest else w / 2 if "middle" in rest else w))
    assert ">sink ~1.00000</text>" in drawn
    assert len(ends) > 100 and max(ends) <= width, (max(ends), width)


def test_the_count_label_sits_beside_its_own_dot():
    """Each position's 'count = ...' label is drawn beside that position's dot (within a
    line's height of it, on its side of the selection line), not beside a neighbour's."""
    drawn = FIGURES["count"](traced(EXAMPLE)[1], {**defaults(traced(EXAMPLE)[1]), "pos": 24})
    dots = {float(x): float(y) for x, y in re.findall(r"M([\d.]+) ([\d.]+)h0", drawn)}
    groups = re.findall(r'<g data-show-pos="(\d+)"[^>]*>(.*?)</g>', drawn, re.S)
    assert len(groups) == len(traced(EXAMPLE)[1]["tokens"])
    for pos, body in groups:
        x = float(re.search(r'<line x1="([\d.]+)"', body).group(1))
        tx, ty = map(float, re.search(r'<text x="([\d.]+)" y="([\d.]+)"', body).groups())
        y = dots[min(dots, key=lambda d: abs(d - x))]
        assert abs(min(dots, key=lambda d: abs(d - x)) - x) < 0.01, pos
        assert abs(ty - y) <= 20 and 0 < abs(tx - x) <= 12, (pos, tx, ty, x, y)


def test_chart_text_is_at_least_11_px():
    """Every text class of the drawings (svg.CSS) and every font size of the page's own style
    (an em of its 16 px default) is at least 11 px at the default size: labels at 9 px were
    hard to read."""
    from tinyadder.analysis.pictures import svg
    sizes = [int(px) for px in re.findall(r"font-size:(\d+)px", svg.CSS)]
    assert sizes and min(sizes) >= 11, sizes
    css = (Path(svg.__file__).parent / "explore.css").read_text(encoding="utf-8")
    parent = {"h2 .doc": 1.15}  # an em of h2's 1.15 em
    small = [(rule, em) for rule, em in re.findall(r"([^{}\n]+)\{[^}]*font-size: ([0-9.]+)em", css)
             if float(em) * parent.get(rule.strip(), 1) * 16 < 11]
    assert small == [], small
