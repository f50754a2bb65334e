"""The explorer page, read with the standard library: every view is there, nothing leaves the
page, and the numbers it embeds are the trace's (floats to 1e-12 relative, log10 magnitudes
from the exact values, the tracer's text)."""

from fractions import Fraction
from html.parser import HTMLParser
import io
import json
import math
from pathlib import Path
import re

from html import escape, unescape

import pytest

from explore_cases import EXAMPLE, FLAW, float_views, page_text, traced
from tinyadder.analysis import board, families, show
from tinyadder import add, build, models
from tinyadder.addition import encode
from tinyadder.analysis.pictures import (compare, explore, figures, svg, tour,
                                        views as views_module)
from tinyadder.numbers import Ln
from tinyadder.weights import with_entry
from tinyadder.analysis.ledger import ledger
from tinyadder.cache import run_with_cache, stages
from tinyadder.cli import main
from tinyadder.cli import explore as explore_cli
from tinyadder.cli.tracing import colour_wanted
from tinyadder.generate import argmax

ROOT = Path(__file__).resolve().parent.parent
VIEW_IDS = [f"view-{v}" for v in explore.VIEWS]
SVG_IDS = ["attn-svg", "place-svg", "count-svg", "resid-svg", "sum-svg", "ruler-svg",
           "flaw-svg", "change-svg", "params-svg"]


class Page(HTMLParser):
    """Every element's tag and attributes, and the text of the data script."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.data, self._in_data = [], None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        self._in_data = attrs.get("id") == "data"

    def handle_data(self, data):
        if self._in_data:
            self.data = (self.data or "") + data

    def handle_endtag(self, tag):
        self._in_data = False

    def ids(self):
        return {a["id"] for _, a in self.elements if "id" in a}


@pytest.fixture(scope="module")
def example():
    cache, views = traced(EXAMPLE)
    text = page_text(EXAMPLE)
    return cache, views, text, Page(text)


def test_one_number_format_on_the_page(example):
    """Every number the page draws or writes is in one format, 1.05·10¹³ (the
    tracer's ~1.05502e+13 sat beside it in the ruler, and 2.5e-6 in the flaw plot); only the
    embedded walkthrough quotes the tracer's terminal output as it prints."""
    for page in (example[2], page_text(FLAW)):  # the flaw's x goes negative: -6.0e-7
        text = re.sub(r'<script.*?</script>|<section id="walkthrough">.*?</section>', "",
                      page, flags=re.S)
        assert re.findall(r".{40}\de[+-]?\d", text) == []
    # its two marks of a rounded value, ~6.00000 and ≈ −2.99999, said beside the grid and
    # the slot list that print them (the lead 4)
    residual = re.search(r'<section id="view-residual">.*?<p class="intro">(.*?)</p>',
                         example[2], re.S).group(1)
    assert residual.endswith("Hover a cell for its value and what it holds (~ and \u2248 both: "
                             "rounded for display; \u2248 before a minus).")


def log10_exact(x):
    """log10 |x| of a Fraction by math.log10 of its integers (exact for ints of any size;
    independent of the page's own top-bits computation)."""
    x = abs(Fraction(x))
    return math.log10(x.numerator) - math.log10(x.denominator)


def same_number(cell, exact):
    """The page's [float, log10, text] cell agrees with the exact value."""
    value, log, _ = cell
    if exact == 0:
        return value == 0 and log is None
    f = float(exact) if abs(log10_exact(exact)) < 300 else 0.0
    close = value == f or abs(value - f) <= 1e-12 * abs(f)
    return close and abs(log - log10_exact(exact)) < 1e-9


def test_every_view_and_control_is_on_the_page(example):
    _, _, text, page = example
    assert set(VIEW_IDS + SVG_IDS + ["status", "data", "tokens", "stage", "mode", "prev",
                                     "next", "errors"]) <= page.ids()
    assert [a["data-head"] for t, a in page.elements if "data-head" in a] == \
        ["L0.h3", "L0.h4", "L1.h0"]
    # the dead heads are named, with the reason
    assert "L0.h0, L0.h1, L0.h2 have no value or no output map" in text


def test_nothing_leaves_the_page(example):
    _, _, text, page = example
    for tag, attrs in page.elements:
        assert tag not in ("link", "iframe", "img", "object", "embed"), tag
        for name in ("src", "href", "action", "srcset", "poster"):
            assert name not in attrs or attrs[name].startswith("#"), (tag, attrs)
        # a page written inside a checkout links its docs by relative path
        assert "href" not in attrs or ":" not in attrs["href"], (tag, attrs)
        if tag == "script":
            assert "src" not in attrs
    # the only URLs are the SVG namespace; no fetch, no request, no import, no web font
    assert set(re.findall(r"https?://[^\s\"'<>)]+", text)) == {"http://www.w3.org/2000/svg"}
    for word in ("fetch(", "XMLHttpRequest", "@import", "@font-face", "url(", "WebSocket"):
        assert word not in text, word


def test_under_a_megabyte_at_ten_digits(example):
    assert len(example[2].encode("utf-8")) < 1_000_000


def test_embedded_residual_stream_is_the_trace(example):
    cache, _, _, page = example
    data = json.loads(page.data)
    for stage in stages(cache.model):
        rows = data["residual"][stage.short]["rows"]
        for slot in cache.labels(stage.name):
            cells = rows[slot]["cells"]
            for pos, exact in enumerate(cache[stage.name]):
                x = exact[cache.labels(stage.name).index(slot)]
                assert same_number(cells[pos], x), (stage.short, slot, pos)
    # the tracer's text, for every slot at one position of each stage
    for stage in stages(cache.model):
        for slot, x in cache.view(stage.name, 24).items():
            assert data["residual"][stage.short]["rows"][slot]["cells"][24][2] == show.fmt(x)
    logits = data["residual"]["readout"]["rows"]
    for u in range(10):
        for pos, row in enumerate(cache["logits"]):
            assert same_number(logits[f"logit {u}"]["cells"][pos], row[u])


def test_embedded_attention_is_the_trace(example):
    cache, _, _, page = example
    heads = json.loads(page.data)["heads"]
    assert sorted(heads) == ["L0.h3", "L0.h4", "L1.h0"]
    pattern = cache["pattern", 0][3]
    for q in (0, 5, 22, 24, 33):
        row = pattern[q][:q + 1]
        cells = heads["L0.h3"]["cells"]["softmax1"][q]
        for k, w in enumerate(row):
            assert same_number(cells[k], w)
            assert cells[k][2] == show.fmt(w)
        assert same_number(cells[q + 1], 1 - sum(row))  # the sink
        plain = heads["L0.h3"]["cells"]["softmax"][q]
        assert len(plain) == q + 1  # no sink
        for k, w in enumerate(row):
            assert same_number(plain[k], w / sum(row))
    # a digit key of head 3: e^-1000 * 10^-(i-j), far below a double, kept by its log10
    assert heads["L0.h3"]["cells"]["softmax1"][24][1][0] == 0.0
    assert -459 < heads["L0.h3"]["cells"]["softmax1"][24][1][1] < -457
    assert heads["L0.h3"]["score"][24][1] == "-1000 - 23*ln 10"
    assert heads["L0.h4"]["cells"]["softmax1"][24][0][2] == "1/26"


def test_decisions_are_the_readouts(example):
    cache, views, _, _ = example
    for d in views["decisions"]:
        logits = cache["logits"][d["pos"]]
        best = argmax(logits)
        runner = max((u for u in range(10) if u != best), key=lambda u: logits[u])
        assert d["written"] == str(best) == cache.model.vocab[cache.tokens[d["pos"] + 1]]
        assert d["lead_logits"] == show.fmt(logits[best] - logits[runner])
    # R falls as digits are emitted: 7800137102, 800137102, ...
    assert [d["R"] for d in views["decisions"]][:4] == \
        ["7800137102", "7800137102", "800137102", "137102"]
    # x at position 24: 8.00137102 units of 10^8, plus the rounding bias and the leakage
    d = views["decisions"][2]
    assert 8.0013710 < d["x"] < 8.0013711 and d["x_text"] == "8.0014"
    # one meaning per word: the margin 274205 units, the tilt -100, the lead 274305 (3 digits)
    assert (d["margin"], d["tilt"], d["lead"]) == ("2.74e5", "-100", "2.74e5")
    assert d["ratio"] is None  # the tilt favours the nearest digit


def test_the_flaw_preset():
    _, views = traced(FLAW)
    assert explore.defaults(views) == {"pos": 23, "stage": "readout", "head": "L0.h3",
                                      "mode": "softmax1", "variant": "built"}
    d = next(d for d in views["decisions"] if d["pos"] == 23)
    assert (d["written"], d["right"], d["nearest"], d["rival"], d["flipped"]) == \
        ("7", "6", 6, 7, True)
    # the direct logit attribution of logit(6) - logit(7): +margin from layer 1's FFN
    # (err7 - err6 = 4.77e9 in the logits, 119 units), -tilt from the slots' other contents
    # (cand1 - cand2 = 4e10, 1000 units): tilt / margin = 8.4
    assert (d["margin"], d["margin_logits"], d["tilt"], d["tilt_logits"]) == \
        ("119", "4.77e9", "1000", "4e10")
    assert d["ratio_text"] == "8.4" and 8.38 < d["ratio"] < 8.39
    assert d["lead"] == "881"
    page = Page(page_text(FLAW))
    rows = json.loads(page.data)["residual"]["readout"]["rows"]
    assert rows["logit 7"]["departs"][23] == "1" and rows["logit 7"]["changed"][23] == "1"


def test_the_ruler_says_the_tilt_overrode_the_smallest_error():
    """On a flipped position the ruler does not claim that the smallest error won: it says
    the tilt overrode it, and gives err7 - err6 and the tilt (its marks' distances tell 6
    from 7, which the errors' six digits, both ~2.00000e+16, do not)."""
    _, views = traced(FLAW)
    drawn = figures.ruler(views, 23, standalone=True)
    assert "the readout&#x27;s tilt overrode the smallest error: 7 won" in drawn
    assert "the smallest error wins" not in drawn
    assert "err7 \u2212 err6 = +119 units (4.77\u00b710\u2079 in logits)" in drawn
    assert "favours 7 by 1000 units (4\u00b710\u00b9\u2070), 8.4 times the margin" in drawn
    d = next(d for d in views["decisions"] if d["pos"] == 23)
    assert (d["distance"][6], d["distance"][7]) == ("0.49999994", "0.50000006")


def test_the_softmax_mode_runs_the_softmax_model(example):
    """The box does not just renormalise the weights: the model is run with an ordinary
    softmax in every head, and its count is e^40 on every digit of a (exercise 2b)."""
    _, views, _, _ = example
    soft = views["softmax"]
    assert soft["answer"] == "92000000000" and not soft["correct"]
    assert [c[2] for c in soft["count"][1:4]] == ["~2.35385e+17"] * 3
    drawn = figures.count(views, 24, "softmax", standalone=True)
    assert "about e^40 everywhere, no place values; the model writes 92000000000" in drawn


def test_the_variants_are_real_runs(example):
    _, views, _, _ = example
    answers = {v["key"]: v["answer"] for v in views["variants"]}
    assert answers == {"built": "07800137102", "ln2": "70000000000", "bias0": "07800137102",
                       "bias2": "07800137102", "bias3": "07800137103",
                       "readout": "07800137102"}
    model = build("published")
    changed = {"ln2": with_entry(model, "blocks.0.attn.slopes", ("h3",), Ln(Fraction(2))),
               "bias3": with_entry(model, "blocks.1.attn.b_V", ("h0",), 45)}
    for key, m in changed.items():
        assert add(m, "decimal", 7650676663, 149460439) == int(answers[key])
    assert [v["label"] for v in views["variants"]] == [
        "as built", "slope ln 2", "bias 0", "bias 30", "bias 45", "repaired readout"]
    # the tour's step on slope ln 2 says why its first digit is 7: x = 7.57 at position 22
    ln2 = next(v for v in views["variants"] if v["key"] == "ln2")["rows"][0]
    assert (ln2["pos"], ln2["written"], 7 < ln2["x"] < 8) == (22, "7", True)
    step = next(s for s in tour.steps(views) if s["title"].endswith("Change one thing"))
    assert "a digit's weight halves at each step back instead of falling tenfold" in \
        step["answer"] and "nearly alike" not in step["answer"]  # learner15 4
    assert step["answer"].endswith(
        " At position 22, the sum of powers of two is x = 7.57, nearest the mark 7.5 of the "
        "digit 7 (err7 = |x \u2212 7.5| the smallest): the first digit is 7.")


def test_parameters_come_from_the_ledger(example):
    cache, views, _, _ = example
    params = views["params"]
    assert len(params) == sum(line.params for line in ledger(cache.model)) == 36
    values = {(line.tensor.name, str(v)) for line in ledger(cache.model)
              for v in line.tensor.entries.values()}
    assert all((p["tensor"], p["value"]) in values for p in params)
    k = next(p for p in params if p["tensor"] == "blocks.0.attn.W_K")
    assert (k["value"], k["entries"], k["reads"], k["writes"], k["heads"]) == \
        ("960", ["special -> h3"], ["special"], [], ["L0.h3"])
    # a query bias sets scores and writes no slot
    q = next(p for p in params if p["tensor"] == "blocks.0.attn.b_Q")
    assert (q["writes"], q["heads"]) == ([], ["L0.h0", "L0.h1", "L0.h2", "L0.h3", "L0.h4"])
    p9 = [p for p in params if p["tensor"] == "blocks.0.mlp.W_in"][9]
    assert (p9["value"], p9["reads"], p9["writes"]) == ("9500000000000", ["count"], ["cand9"])


@pytest.mark.parametrize("digits, expr, number", [
    (3, "999+1", "fraction"), (10, EXAMPLE, "float"),
    pytest.param(30, "9" * 30 + "+" + "8" * 30, "decimal", marks=pytest.mark.slow),
    pytest.param(30, "9" * 30 + "+" + "8" * 30, "fraction", marks=pytest.mark.slow)])
def test_other_lengths(tmp_path, digits, expr, number):
    """The page through the command line at N = 3 in fractions and N = 10 in floats; -m slow
    adds N = 30 in decimal and in fractions (seconds each: the page's ordinary-softmax and
    changed runs at N = 30; the default run's N = 30 decimal is
    test_a_long_sum_is_taken_in_the_runs_own_arithmetic, without them)."""
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "page.html"
    argv = [expr, "--digits", str(digits), "--number", number, "-o", str(path)]
    assert explore_cli.main(argv, out, err, None) == 0
    assert out.getvalue() == f"wrote {path} ({path.stat().st_size // 1024} kB): open it in " \
                             f"a browser\n"
    page = Page(path.read_text(encoding="utf-8"))
    data = json.loads(page.data)
    assert len(data["tokens"]) == 3 * digits + 4 and set(VIEW_IDS) <= page.ids()
    a, b = map(int, expr.split("+"))
    assert "".join(t["text"] for t in data["tokens"][-digits - 1:]) == f"{a + b:0{digits + 1}d}"
    # the running sum in the run's own arithmetic (decimal: N + 30 digits, not Python's 28)
    assert data["decisions"][0]["R"] == str(a + b)
    # the ordinary-softmax count, read from the run: e^19 at N = 3 (not e^40), e^40 at N = 10
    size = {3: 19, 10: 40}.get(digits)
    assert size is None or f"about e^{size} everywhere" in path.read_text(encoding="utf-8")


def test_a_long_sum_is_taken_in_the_runs_own_arithmetic():
    """decimal at N = 30 computes with N + 30 = 60 digits, not Python's default 28: the views'
    running sum of a 31-digit total is exact (the run and the views the page is made of,
    without its variant runs)."""
    a, b = int("9" * 30), int("8" * 30)
    model = build("published", 30)
    cache = run_with_cache(model, encode(model, a, b), ns="decimal")[1]
    views = views_module.build_views(cache, a, b, changes=False)
    assert views["number"].startswith("decimal (60 significant digits")
    assert views["decisions"][0]["R"] == str(a + b)
    assert views["answer"] == f"{a + b:031d}" and views["correct"]
    assert len(views["tokens"]) == 3 * 30 + 4


def test_a_wrong_sum_still_writes_its_page(tmp_path, monkeypatch):
    monkeypatch.setattr(explore_cli, "views_of", lambda *args: traced(FLAW)[1])
    out, err, path = io.StringIO(), io.StringIO(), tmp_path / "flaw.html"
    assert explore_cli.main([FLAW, "-o", str(path)], out, err, None) == 1
    assert err.getvalue() == ("tinyadder: warning: the published model's sum 7000000000 is "
                              "wrong: 5193798811 + 1806201129 = 6999999940\n")
    # the page links the walkthrough from where it was written
    assert path.read_text(encoding="utf-8") == explore.page(traced(FLAW)[1],
                                                            explore.walkthrough())


def test_command_line(tmp_path, capsys):
    assert main(["explore", "--help"]) == 0
    text = re.sub(r"-\s+", "-", " ".join(capsys.readouterr().out.split()))  # argparse wraps
    assert "(default tinyadder-explore.html in the current directory)" in text
    assert main(["explore", "1+1", "--digits", "101"]) == 2
    assert "explore takes --digits up to 100" in capsys.readouterr().err
    assert main(["explore", "12+x"]) == 2
    assert capsys.readouterr().err.startswith("tinyadder explore: error: not an addition")
    assert main(["explore", "12+34", "-o", str(tmp_path / "no" / "dir.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tinyadder explore: error: cannot write") and err.count("\n") == 1


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch):
    assert colour_wanted(Terminal(), {})
    assert not colour_wanted(Terminal(), {"NO_COLOR": "1"})
    assert not colour_wanted(Terminal(), {"NO_COLOR": ""})
    assert not colour_wanted(io.StringIO(), {})
    argv = ["12+34", "--trace", "--heat", "--pos", "24", "--layer", "0"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    pipe, tty = io.StringIO(), Terminal()
    assert main(argv, pipe) == main(argv, tty) == 0
    assert "    L0.h3 0-24 6          4          2   sink @\n" in pipe.getvalue()
    assert "\x1b[" not in pipe.getvalue() and "\x1b[38;5;226m@\x1b[0m" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Terminal()
    assert main(argv, tty) == 0 and "\x1b[" not in tty.getvalue()


def test_the_repaired_readout_has_no_tilt():
    _, views = traced("999+1", "repaired", 3)
    assert views["correct"] and not any(d["tilted"] for d in views["decisions"])
    drawn = figures.flaw(views)
    assert "reads only the FFN&#x27;s own error slots, so nothing tilts" in drawn
    assert "b + \u2113 = 0.37, room 0.37" in drawn
    assert [s["short"] for s in views["stages"]][-1] == "readout"
    rows = [r["slot"] for r in views["residual"][-2]["slots"]]
    assert rows[-10:] == [f"err{u}" for u in range(10)]


@pytest.fixture(scope="module")
def changed():
    """Two models the family's views do not all apply to, traced at N = 3: head 3 without its
    ALiBi slope (no place-value head), and a readout that reads digit_pos for 7."""
    base = build("published", digits=3)
    models = {"no slope": with_entry(base, "blocks.0.attn.slopes", ("h3",), 0),
              "readout": with_entry(base, "readout", ("7",), "digit_pos")}
    out = {}
    for key, model in models.items():
        _, cache = explore_run(model, "12+34")
        out[key] = views_module.build_views(cache, 12, 34)
    return out


def explore_run(model, expr):
    return run_with_cache(model, expr)


def test_views_say_what_they_need(changed):
    family = ("Not for this model: this view reads what the TinyAdder-36 family has and "
              "tinyadder36-published lacks: ")
    slope = changed["no slope"]["missing"]
    assert slope["place"] == slope["count"] == \
        family + "a layer-0 head with an ALiBi slope that writes the slot count."
    assert slope["attention"] is None and slope["ruler"] is None and slope["tokens"] is None
    readout = changed["readout"]["missing"]
    assert readout["ruler"] == readout["flaw"] == readout["sum"] == family + (
        "the 36-parameter readout (layer 1's FFN writing |cand_u + average| into the slot "
        "read for digit u).")
    assert readout["place"] is None and readout["residual"] is None


@pytest.mark.parametrize("key, absent", [("no slope", ["place", "count", "change"]),
                                         ("readout", ["sum", "ruler", "flaw", "change"])])
def test_the_page_and_figures_say_so_rather_than_fail(changed, key, absent):
    views = changed[key]
    page = Page(explore.page(views))
    assert set(VIEW_IDS) <= page.ids()
    text = explore.page(views)
    for name in absent:
        section = re.search(f'<section id="view-{name}">(.*?)</section>', text, re.S).group(1)
        assert "Not for this model: this view reads what the TinyAdder-36 family" in section, \
            name
    for name, draw in figures.FIGURES.items():
        drawn = draw(views, {**explore.defaults(views), "stage": "L0.mlp"})
        assert drawn.startswith("<svg") and drawn.endswith("</svg>\n"), name
        mapped = {"slots": "residual"}.get(name, name)
        assert ("Not for this model" in drawn) == (mapped in absent), name
    # the tour needs every view it walks through
    assert json.loads(page.data)["tour"] == []


def test_the_page_carries_the_walkthrough_it_cites():
    """No link leaves the page (a relative link to walkthrough.md opened raw Markdown from
    disk, and a page written elsewhere linked into the writer's checkout): the sections it
    cites are in the page, and its links are anchors to them."""
    page = explore.page(traced("999+1", "repaired", 3)[1], explore.walkthrough())
    assert 'href="#wt-4-layer-0-head-3-place-values-from-alibi-and-softmax1"' in page
    assert '<article id="wt-4-layer-0-head-3-place-values-from-alibi-and-softmax1"><h3>4. ' \
           'Layer 0, head 3: place values from ALiBi and softmax1</h3>' in page
    assert "walkthrough.md#" not in page and 'href="docs/' not in page
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith(("#", "https://")) for h in hrefs), hrefs
    assert "<span class=\"doc\">walkthrough \u00a74</span>" in explore.page(
        traced("999+1", "repaired", 3)[1])


ADDER1 = ROOT / "tests" / "models" / "adder1.json"


def test_any_model_opens_with_its_generic_views(tmp_path):
    """A model outside the TinyAdder-36 family (the hand-written 1-digit adder, whose mask
    hides keys) opens: tokens labelled by role from its prompt layout, its heads, its residual
    stream and logits, its parameters; the family's views say "not for this model" in place."""
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "a1.html"
    assert explore_cli.main(["--model", str(ADDER1), "7+8", "-o", str(path)], out, err,
                            None) == 0
    text = path.read_text(encoding="utf-8")
    assert "<h1>adder1 adds 7 + 8</h1>" in text
    assert "(a0 is the digit of a at 10<sup>0</sup>, s0 the sum's units digit)" in text
    assert '<div class="group" id="mode-group">' in text  # softmax1 heads: the box shows
    # the header says what it writes; the arithmetic and the checks are folded
    header = re.search(r"<header>(.*?)</header>", text, re.S).group(1)
    assert '<details id="numbers"><summary>numbers and checks</summary><p>adder1, numbers: ' \
        in header and "numbers:" not in header.split("<details")[0]
    assert "Its prompt: <code>&lt;bos&gt; a0 &#x27;+&#x27; b0 &#x27;=&#x27; then s1..s0" in text
    data = json.loads(Page(text).data)
    assert [t["label"] for t in data["tokens"]] == ["<bos>", "a0", "'+'", "b0", "'='", "s1",
                                                    "s0"]
    assert data["heads"] and data["resid_rows"] and data["params"]
    for name in ("place", "count", "sum", "ruler", "flaw"):  # hidden, said in one line
        section = re.search(f'<section id="view-{name}" hidden>(.*?)</section>', text,
                            re.S).group(1)
        assert "Not for this model" in section, name
        assert '<p class="intro">Not for this model (what it lacks: the line above).</p>' \
            in section, name  # short: the line above says it once
    # said once, in one short line, what the model lacks folded under it (the lead 3)
    line = re.search(r'<section id="view-not-shown">(.*?)</section>', text, re.S).group(1)
    assert line.startswith('<p class="intro">The TinyAdder-36 family&#x27;s own views (place '
                           'values, count, running sum, ruler, why it fails) read what this '
                           'model lacks; they are not drawn.</p><details><summary>what adder1 '
                           'lacks</summary><p>a layer-0 head with an ALiBi slope')
    # the FFN-off run: the section opens with what applies, never "Not for this model"
    # above a view drawn for this model (learner14 5)
    change = re.search(r'<section id="view-change">(.*?)</section>', text, re.S).group(1)
    assert "Not for this model" not in change and '<svg' in change
    assert ('<p class="intro">The TinyAdder-36 family&#x27;s ablations (its slope, biases and '
            'readout) do not apply here: they read what adder1 lacks (a layer-0 head') in change
    assert ("; instead, this model&#x27;s layer 1 FFN switched off: the run of the same sum "
            "with its output zeros, beside the run as built.</p>") in change
    for name in ("tokens", "attention", "params", "residual"):
        section = re.search(f'<section id="view-{name}">(.*?)</section>', text, re.S).group(1)
        assert "Not for this model" not in section, name
    # the residual grid's marks said (the lead 4): '≈ ' in a cell whatever the sign, the
    # tracer's ~ and ≈ in the hovers and the list (learner18 1)
    assert ("Hover a cell for its value. A rounded value printed in a cell reads \u2248 60.0075 "
            "or \u2248 \u22124.58762, \u2248 whatever its sign; the hovers and the slot list "
            "write it as the tracer does, ~60.0075 and \u2248 \u22124.58762 (~ and \u2248 both: "
            "rounded for display).</p>") in section
    # no walkthrough section is about this model: none is cited, none embedded
    assert "walkthrough \u00a7" not in text and 'id="walkthrough"' not in text
    # its tour: where a0 is and who predicts s0; where the query that predicts s1 (the '=')
    # looks; the slot its attention changes most there (s, which becomes a0 + b0 = 15); the
    # readout's winner there and its lead over the runner-up; the digit it writes with its
    # FFN switched off; the parameters
    tour = data["tour"]
    assert [s["title"] for s in tour] == ["1. Tokens by role", "2. Where the query looks",
                                          "3. What L0.attn writes", "4. The readout",
                                          "5. Change one thing", "6. The parameters"]
    assert tour[2]["answer"].startswith("s, by 15, to 15; ")
    logits = sorted(r["cells"][4][0] for name, r in data["residual"]["readout"]["rows"].items()
                    if name.startswith("logit"))
    model = models.read_file(str(ADDER1))
    off = {"blocks.1.hook_mlp_out": lambda rows: [[0 * v for v in r] for r in rows]}
    tokens = run_with_cache(model, encode(model, 7, 8), patch=off)[1].tokens
    assert [s["expect"]["values"] for s in tour] == [
        [1, 5], ["a0", "b0"], ["s"], [int(data["tokens"][5]["text"]), logits[-1] - logits[-2]],
        [int(model.vocab[tokens[5]])], [sum(line.params for line in ledger(model))]]
    assert tour[3]["expect"]["values"] == [1, 0.75] and tour[3]["state"]["pos"] == 4
    assert tour[0]["state"]["pos"] == 0  # on neither answer, 1 or 5 (the lead 2)


def test_a_mixed_block_is_drawn_with_its_mix_as_a_stage(tmp_path):
    """lokimorty-39 mixes its two blocks' outputs, x = first + g·(last − first) (hook_mix):
    the page lists the mix as a stage between layer 1's FFN and the readout, and its values
    are that formula of the two stages before it, as the readout then shows them."""
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "l39.html"
    assert explore_cli.main(["--model", "lokimorty-39", "--number", "float", "123+456", "-o",
                             str(path)], out, err, None) == 0
    assert err.getvalue() == ""  # exit 0 and no warning: its sum, 579, is right
    text = path.read_text(encoding="utf-8")
    assert "<h1>lokimorty-39 adds 0000000123 + 0000000456</h1>" in text
    data = json.loads(Page(text).data)
    assert [s["short"] for s in data["stages"]] == ["embed", "L0.attn", "L0.mlp", "L1.attn",
                                                    "L1.mlp", "mix", "readout"]
    assert data["stages"][5]["label"] == "the mix of layer 0's and layer 1's outputs"
    gain = float(build("lokimorty-39").mix.gain)
    rows = {k: data["residual"][k]["rows"] for k in ("L0.mlp", "L1.mlp", "mix", "readout")}
    assert list(rows["mix"]) == ["x0", "x1", "x2"]
    for slot in rows["mix"]:
        first, last, mixed = ([c[0] for c in rows[k][slot]["cells"]]
                              for k in ("L0.mlp", "L1.mlp", "mix"))
        assert len(mixed) == len(data["tokens"])
        for f, g, m in zip(first, last, mixed):
            assert math.isclose(m, f + gain * (g - f), rel_tol=1e-12, abs_tol=1e-12)
        assert [c[0] for c in rows["readout"][slot]["cells"]] == mixed


@pytest.mark.parametrize("name", ["lichengliu03-50"] + [
    pytest.param(name, marks=pytest.mark.slow) for name in ("cosminscn-66", "cosminscn-130")])
def test_a_sinusoid_11_pages_hovers_say_what_acc_and_pe_sin_hold(name):
    """The hovers' formulas for a sinusoid-11 model (families.sinusoid11_meanings) hold in its
    float32 run, the file's dtype, at every position that predicts s_k, on sums with and
    without carries (a long carry chain among them)."""
    model = models.build(name, None)
    for a, b in ((7650676663, 149460439), (9999999999, 1), (5193798811, 1806201129)):
        v = views_module.views_of(model, a, b, "float32")
        assert v["meanings"] == families.sinusoid11_meanings()
        x = {s["short"]: {r["slot"]: [c[0] for c in r["cells"]] for r in s["slots"]}
             for s in v["residual"]}

        def digit(n, k):
            return n // 10 ** k % 10 if k >= 0 else 0

        for t in v["tokens"]:
            amplitude = math.hypot(x["embed"]["pe_sin"][t["pos"]], x["embed"]["pe_cos"][t["pos"]])
            assert math.isclose(amplitude, 100 if t["pos"] < v["prompt_len"] else 1,
                                rel_tol=1e-6)
            assert x["embed"]["digit"][t["pos"]] == (int(t["text"]) if t["role"] != "special"
                                                     else 0)
        for p in v["predicting"]:
            k = v["tokens"][p]["next_place"]  # it predicts s_k
            if k is None:
                continue
            for slot in ("digit", "pe_cos"):
                assert x["embed"][slot][p] == x["L0.attn"][slot][p] == x["L0.mlp"][slot][p]
            assert x["L0.attn"]["pe_sin"][p] == x["L0.mlp"]["pe_sin"][p]
            assert abs(x["L0.attn"]["acc"][p] - digit(a, k) - digit(b, k)) < (0.3 if k == 0
                                                                             else 0.005)
            if k > 0:
                below = digit(a, k - 1) + digit(b, k - 1)
                assert abs(x["L0.attn"]["pe_sin"][p] - x["embed"]["pe_sin"][p] - below) < 0.005
                carry = min(max(x["L0.attn"]["pe_sin"][p] - x["embed"]["digit"][p] - 0.5, 0), 1)
                column = digit(a, k) + digit(b, k) + carry
                assert abs(x["L0.mlp"]["acc"][p] - (column - 10 * (column >= 9.5))) < 0.3
            assert abs(x["L0.mlp"]["acc"][p] - digit(a + b, k)) < 0.5
        # its FFN adds the carry and wraps: switched off, each column writes min(a_k + b_k, 9)
        assert v["ffn_off"]["answer"] == "".join(
            str(min(digit(a, k) + digit(b, k), 9)) for k in range(10, -1, -1))
        # its tokens step asks where a0 is (position 9) and who predicts s0: it opens on
        # neither, so the selection and the status line do not say them (the lead 2)
        first = tour.steps(v)[0]
        assert first["expect"]["values"] == [9, 21] and first["state"]["pos"] == 0
        # its tour's step on the column: acc after the attention at the query for s1
        step = next(s for s in tour.steps(v) if s["title"].endswith("The column"))
        q = step["state"]["pos"]
        # it opens at the stage before, so the grid does not print its answer
        assert v["tokens"][q]["next_place"] == 1 and step["state"]["stage"] == "embed"
        assert step["expect"]["values"] == [x["L0.attn"]["acc"][q]]
        assert abs(step["expect"]["values"][0] - digit(a, 1) - digit(b, 1)) < 0.005
        assert f"a1 + b1 = {digit(a, 1)} + {digit(b, 1)}." in step["answer"]


def slot_values(v):
    """{stage: {slot: [value per position]}} of a page's residual view."""
    return {s["short"]: {r["slot"]: [c[0] for c in r["cells"]] for r in s["slots"]}
            for s in v["residual"]}


def digit_of(n, k):
    """The digit of n at place 10^k (0 below the units)."""
    return n // 10 ** k % 10 if k >= 0 else 0


def carry_into(a, b, k):
    """c_k, the carry into place k of a + b."""
    return int(k > 0 and a % 10 ** k + b % 10 ** k >= 10 ** k)


@pytest.mark.parametrize("name", ["jacobli99-28", pytest.param("jacobli99-93",
                                                                  marks=pytest.mark.slow)])
def test_a_two_slot_rope_10000_pages_hovers_say_what_x0_and_x1_hold(name):
    """The hovers' formulas for jacobli99's design (families.rope10000_meanings) hold exactly in
    its float32 run at every position that predicts s_k; the Qwen-style four of the family
    get none (their carry enters through the final norm)."""
    model = models.build(name, None)
    for a, b in ((7650676663, 149460439), (9999999999, 1), (5193798811, 1806201129)):
        v = views_module.views_of(model, a, b, "float32")
        assert v["meanings"] == families.rope10000_meanings()
        x = slot_values(v)

        for t in v["tokens"]:
            d = int(t["text"])
            assert abs(x["embed"]["x0"][t["pos"]] - (1000 - 2.5e-4 * d * d)) < 1e-4
            assert x["embed"]["x1"][t["pos"]] == d
        for p in v["predicting"]:
            k = v["tokens"][p]["next_place"]
            if k is None:
                continue
            D = carry_into(a, b, k - 1) - 10 * carry_into(a, b, k) if k else 0
            assert x["L0.attn"]["x1"][p] == digit_of(a, k) + digit_of(b, k)
            assert x["L0.attn"]["x0"][p] == x["embed"]["x0"][p] + D == x["L0.mlp"]["x0"][p]
            assert x["L0.mlp"]["x1"][p] == digit_of(a + b, k)
            logits = [x["readout"][f"logit {u}"][p] for u in range(10)]
            top = int(x["L0.mlp"]["x1"][p])  # the vertex: the logits fall away from it
            assert max(range(10), key=lambda u: logits[u]) == top
            assert all(logits[u] >= logits[u + 1] for u in range(top, 9))
            assert all(logits[u] <= logits[u + 1] for u in range(top))
        step = next(s for s in tour.steps(v) if s["title"].endswith("The column"))
        q = step["state"]["pos"]
        assert v["tokens"][q]["next_place"] == 1
        assert step["expect"]["values"] == [x["L0.attn"]["x1"][q]] == [
            digit_of(a, 1) + digit_of(b, 1)]
        # its FFN adds the carry and wraps: switched off, each column writes min(a_k + b_k, 9)
        off = next(s for s in tour.steps(v) if s["title"].endswith("Change one thing"))
        assert v["ffn_off"]["answer"] == "".join(
            str(min(digit_of(a, k) + digit_of(b, k), 9)) for k in range(10, -1, -1))
        assert off["expect"]["values"] == [min(digit_of(a, 1) + digit_of(b, 1), 9)]
        # the step's view is that run beside the run as built: per predicting position, the
        # digit each writes, and x0, x1 the readout reads; with the FFN off, x1 = a_k + b_k
        assert off["view"] == "change"
        drawn = re.search(r'<g id="off-cells">(.*?)</g>', figures.change(v)).group(1)
        cells = re.findall(r"<text [^>]*>([^<]*)</text>", drawn)
        n = len(v["predicting"])
        rows = [cells[k * n:(k + 1) * n] for k in range(len(cells) // n)]
        assert len(rows) == 8 and rows[0] == [str(q) for q in v["predicting"]]
        assert rows[3] == [v["ffn_off"]["tokens"][q + 1] for q in v["predicting"]]
        assert rows[2] == [v["tokens"][q + 1]["text"] for q in v["predicting"]]
        for q, said in zip(v["predicting"], rows[7]):
            k = v["tokens"][q]["next_place"]
            if k is not None:
                assert float(said) == digit_of(a, k) + digit_of(b, k), (q, said)


def run_views(model, a, b, ns):
    """The page's views of a + b without the extra runs of "change one thing"."""
    cache = run_with_cache(model, encode(model, a, b), ns=ns)[1]
    return views_module.build_views(cache, a, b, changes=False)


QWEN = ["nino-116"] + [pytest.param(name, marks=pytest.mark.slow) for name in (
    "wonderfall-121", "wonderfall-130", "wonderfall-139")]


@pytest.mark.parametrize("name", QWEN)
def test_a_qwen_style_rope_10000_pages_hovers_say_what_x0_x1_x2_hold(name):
    """The hovers' formulas for the Qwen-style rope-10000 models (families.qwen_meanings) hold in
    their float32 runs at every position that predicts s_k, within the bounds they state: the
    attention writes the column a_k + b_k into x2 and D = c_(k-1) - 10 c_k into x1; the FFN
    wraps x2 and, where the final norm does not, adds the carry; the readout's parabola has
    its vertex at x2 - x1/10 (norm) or x2. The tour's column, carry and FFN steps ask for
    those values at the query for s1."""
    model = models.build(name, None)
    carry_by = families.qwen_carry(model)
    assert carry_by == {"nino-116": "norm", "wonderfall-121": "norm", "wonderfall-130": "linear",
                        "wonderfall-139": "hinge"}[name]
    for a, b in ((7650676663, 149460439), (9999999999, 1)):
        v = run_views(model, a, b, "float32")
        assert v["meanings"] == families.qwen_meanings(carry_by)
        x = slot_values(v)

        for t in v["tokens"]:
            d = int(t["text"])
            assert abs(x["embed"]["x0"][t["pos"]] - (1000 - d * d / 4000)) < 3e-5
            assert x["embed"]["x1"][t["pos"]] == d
            assert abs(x["embed"]["x2"][t["pos"]] - d / 2000) < 1e-9
        for p in v["predicting"]:
            k = v["tokens"][p]["next_place"]
            if k is None:
                continue
            s, column = digit_of(a + b, k), digit_of(a, k) + digit_of(b, k)
            D = carry_into(a, b, k - 1) - 10 * carry_into(a, b, k)
            assert x["L0.attn"]["x0"][p] == x["L0.mlp"]["x0"][p] == x["embed"]["x0"][p]
            assert abs(x["L0.attn"]["x1"][p] - D) < 0.001
            assert x["L0.mlp"]["x1"][p] == x["L0.attn"]["x1"][p]
            assert abs(x["L0.attn"]["x2"][p] - x["embed"]["x2"][p] - column) < 0.001
            after = {"norm": column - 10 * carry_into(a, b, k + 1),
                     "linear": s - carry_into(a, b, k - 1) / 10 + 1 / 20, "hinge": s}[carry_by]
            assert abs(x["L0.mlp"]["x2"][p] - after) < 0.01
            vertex = x["L0.mlp"]["x2"][p] - (x["L0.mlp"]["x1"][p] / 10 if carry_by == "norm"
                                             else 0)
            logits = [x["readout"][f"logit {u}"][p] for u in range(10)]
            assert max(range(10), key=lambda u: logits[u]) == s == min(max(round(vertex), 0), 9)
        steps = {st["title"].split(". ", 1)[1]: st for st in tour.steps(v)}
        q = steps["The column"]["state"]["pos"]
        assert v["tokens"][q]["next_place"] == 1
        assert steps["The column"]["expect"]["values"] == [x["L0.attn"]["x2"][q]]
        assert steps["The carry"]["expect"]["values"] == [x["L0.attn"]["x1"][q]]
        assert steps["The FFN"]["expect"]["values"] == [x["L0.mlp"]["x2"][q] -
                                                         x["L0.attn"]["x2"][q]]  # its change
        assert (f"c0 \u2212 10\u00b7c1 = 0 \u2212 10\u00b7{carry_into(a, b, 1)}" in
                steps["The carry"]["answer"])
        # the strips show query q's one-hot keys (a0, b0, a1, b1): the step asks for q + 1's
        # (learner14 6)
        assert steps["Layer 0's 4 heads"]["expect"]["values"] == ["a1", "b1", "a2", "b2"]
        assert steps["The embedding"]["expect"]["values"] == [x["embed"]["x2"][1]]
        # the hovers name this position's case of the formulas: each digit a formula can
        # name, s0 among them (x1's D = s_(k-1) - a_(k-1) - b_(k-1), learner16 2), s1 last
        assert explore.column_cases(v)[q] == [1, [
            ["a_k", f"a1 = {digit_of(a, 1)}"], ["b_k", f"b1 = {digit_of(b, 1)}"],
            ["c_k", f"c1 = {carry_into(a, b, 1)}"], ["c_(k+1)", f"c2 = {carry_into(a, b, 2)}"],
            ["a_(k\u22121)", f"a0 = {a % 10}"], ["b_(k\u22121)", f"b0 = {b % 10}"],
            ["c_(k\u22121)", "c0 = 0"], ["s_(k\u22121)", f"s0 = {(a + b) % 10}"],
            ["s_k", f"s1 = {digit_of(a + b, 1)}"]]]
        assert abs(x["embed"]["x2"][1] - a % 10 / 2000) < 1e-9  # a0 at position 1
        if carry_by != "norm":  # its FFN adds the carry and wraps: off, min(a_k + b_k, 9)
            assert views_module.ffn_off_view(model, a, b, "float32")["answer"] == "".join(
                str(min(digit_of(a, k) + digit_of(b, k), 9)) for k in range(10, -1, -1))


ROPE_19 = ["zcbtrak-6", "yieldthought-20"] + [
    pytest.param(name, marks=pytest.mark.slow) for name in (
        "kswain98-2", "kswain98-4", "kswain98-8", "lokimorty-10", "lokimorty-12",
        "wonderfall-27")]


@pytest.mark.parametrize("name", ROPE_19)
def test_a_rope_19_pages_hovers_say_what_x0_and_x1_hold(name):
    """The hovers' formulas for a rope-19 model (families.rope19_meanings) hold in its run, at
    every position that predicts s_k, on sums with and without carries (float: the formulas
    are about the real-number model, the tolerance 0.25 covers the float rounding)."""
    model = models.build(name, None)
    for a, b in ((7650676663, 149460439), (9999999999, 1), (5193798811, 1806201129)):
        v = run_views(model, a, b, "float")
        assert v["meanings"] == families.rope19_meanings()
        # the title's words are glossed in the header ("Q hard-coded", "tied gate")
        how = explore._how(v, None)
        assert all(f"<i>{escape(t)}</i>: {escape(g)}" in how
                   for t, g in explore.title_terms(model.about["title"]))
        # its one head has an ordinary softmax: no box turns softmax1 into one
        assert '<div class="group" id="mode-group" hidden>' in explore._controls(
            v, {"stage": "embed"})
        # its ordinary-softmax head is coloured over 10^-10 .. 1: the 10 : 1 of a1 (position
        # 2) against a0 (position 1) seen from query 31 is six colour steps, not one
        key = next(iter(v["heads"]))
        assert tuple(v["heads"][key]["scale"]) == (-10, 0)
        row = figures.attention_classes(v, key, "softmax1")[31]
        # its axes name positions by role: the twelve '0's are a separator and s0..s10
        drawn = figures.attention(v, key)
        assert all(f">{label}</text>" in unescape(drawn) for label in ("'0'", "a1", "b0",
                                                                         "31 s0"))
        assert 5 <= svg.LEVEL_LETTERS.index(row[2]) - svg.LEVEL_LETTERS.index(row[1]) <= 7
        x = {s["short"]: {r["slot"]: [c[0] for c in r["cells"]] for r in s["slots"]}
             for s in v["residual"]}

        def carry(k):
            return (a % 10 ** k + b % 10 ** k) // 10 ** k

        for t in v["tokens"]:
            if t["role"] != "special" and t["text"].isdigit():
                d = int(t["text"])
                assert abs(x["embed"]["x0"][t["pos"]] - (1000 - d * d / 1000)) < 1e-6
                assert abs(x["embed"]["x1"][t["pos"]] + d) < 1e-6
        for p in v["predicting"]:
            k = v["tokens"][p]["next_place"]  # it predicts s_k
            if k is None:
                continue
            column = a // 10 ** k % 10 + b // 10 ** k % 10 + carry(k)
            below = carry(k - 1) if k else 0
            assert x["L0.attn"]["x0"][p] == x["L0.mlp"]["x0"][p] == x["embed"]["x0"][p]
            assert abs(x["L0.attn"]["x1"][p] - (10 * column - below)) < 0.25
            assert abs(x["L0.mlp"]["x1"][p] / 10 - (a + b) // 10 ** k % 10) < 0.25
        # its tour asks for the 10 : 1 and for x1 after the attention at the query for s1;
        # a model that computes another's function names it and goes to what differs
        steps = {st["title"].split(". ", 1)[1]: st for st in tour.steps(v)}
        if name in tour.SAME_AS:
            assert list(steps)[0] == f"The same function as {tour.SAME_AS[name]}"
            continue
        q = steps["Ten to one"]["state"]["pos"]
        assert v["tokens"][q]["next_place"] == 1
        assert abs(steps["Ten to one"]["expect"]["values"][0] - 10) < 0.05
        a0 = steps["The embedding"]["state"]["pos"]
        assert steps["The embedding"]["expect"]["values"] == [x["embed"]["x1"][a0]]
        assert abs(x["embed"]["x1"][a0] + a % 10) < 1e-6
        assert steps["The column"]["expect"]["values"] == [x["L0.attn"]["x1"][q]]


def test_the_pages_size_is_the_one_explorer_md_states():
    """docs/explorer.md: 'writes one HTML file (about K kB at N = 10)': the example's page as
    the CLI writes it, the walkthrough's sections it cites embedded, within 5 %."""
    doc = (ROOT / "docs" / "explorer.md").read_text(encoding="utf-8")
    stated = int(re.search(r"writes one HTML file \(about (\d+) kB at N = 10\)", doc).group(1))
    written = explore.page(traced(EXAMPLE)[1], explore.walkthrough())
    size = len(written.encode("utf-8")) / 1024  # as the CLI prints it
    assert abs(size - stated) <= 0.05 * stated, (size, stated)


def test_the_readouts_slots_are_listed_under_the_grid():
    """Tour step 7 asks which slot the published readout reads for digit 7: the residual view
    lists logit u = -(slot) for every u under its grid, so the view answers it."""
    text = re.sub(r"</text><text [^>]*>", " ", page_text(EXAMPLE))  # a wrapped line, joined
    assert ("the readout: logit u = \u2212(the slot it reads for u): 0 \u2212eq, 1 \u2212special, "
            "2 \u2212digit, 3 \u2212count, 4 \u2212scale, 5 \u2212cand0, 6 \u2212cand1, 7 \u2212cand2, "
            "8 \u2212cand3, 9 \u2212cand4</text>") in text


def test_logits_whose_prediction_is_not_read_are_grey():
    """The readout's rows colour a logit only at the positions whose prediction the model
    writes (22 to 32 here); the prompt's and the last position's are grey ('-')."""
    views = traced(EXAMPLE)[1]
    row = figures.residual_classes(views)["readout"]["logit 7"]
    assert [p for p, c in enumerate(row) if c != svg.UNUSED] == views["predicting"]


def test_a_board_titles_jargon_is_glossed():
    """The header glosses the words of a board file's title that name its tricks."""
    def terms(name):
        return [t for t, _ in explore.title_terms(models.build(name, None).about["title"])]
    assert terms("lokimorty-10") == ["Qwen-derived", "free Q", "tied gate", "shared carry"]
    assert terms("zcbtrak-6") == ["Q hard-coded", "final norm folded into the head"]
    # the head is the output head: zcbtrak-6's W_U holds the norm's 50√2, its attention not
    glossed = dict(explore.title_terms(models.build("zcbtrak-6", None).about["title"]))
    assert "readout's (unembedding's), weights" in glossed["final norm folded into the head"]
    assert terms("lokimorty-12") == ["Qwen-derived", "parametric embedding"]
    # the leaderboard's architecture shorthand too
    assert terms("jacobli99-28") == ["1L", "d=2", "5h", "MQA", "hd=2", "ff=4"]
    assert terms("nino-116") == ["1L", "d=3", "4h", "1kv", "hd=2"]


def test_compare_counts_dust_as_zero_and_says_when_no_slot_is_in_common():
    """The compare table measures a difference against the slot's scale: exact dust of
    10^-7386 beside a float's 0 is the same 0 (its text differs); two designs that share
    only the readout's logits, on different scales, get a sentence, not a row of noise."""
    def run(stage, slot, cells):
        return {"tokens": [{"label": "a0", "pos": 0, "role": "a", "predicts": None},
                           {"label": "s0", "pos": 1, "role": "sum", "predicts": None}],
                "layout": "a0 s0",
                "predicting": [],
                "residual": [{"short": stage, "slots": [{"slot": slot, "cells": cells}]}]}
    exact = run("L0.attn", "x1", [[0.0, -7386, "~1.25155e-7386"], [100.002, 2, "~100.002"]])
    floats = run("L0.attn", "x1", [[0.0, None, "0"], [100.0021, 2, "~100.002"]])
    other = run("L0.attn", "x1", [[0.0, None, "0"], [99.9, 2, "~99.9"]])
    assert [(r["same"], r["first"]) for r in compare.agreement(exact, floats)] == [(2, None)]
    assert [(r["same"], r["first"]) for r in compare.agreement(exact, other)] == [
        (1, ("s0 (the last position: its prediction is not used; it differs at no position "
             "that predicts a digit of the sum)", "~100.002", "~99.9"))]
    big = run("readout", "logit 0", [[None, None, "x"], [-2.33334e18, 18, "~-2.33334e+18"]])
    small = run("readout", "logit 0", [[None, None, "y"], [99997.6, 5, "~99997.6"]])
    assert compare.no_common_slot(compare.agreement(big, small))
    # each side is dust only against its own scale: 5 is dust beside 10^18, 99997.6 is not
    assert not compare.alike([5.0, 0.7, "5"], [99997.6, 5, "~99997.6"], 1e18, 1e5)
    assert not compare.no_common_slot(compare.agreement(exact, other))


def test_compare_sets_each_designs_key_quantity_beside_its_meaning(example):
    """Compare mode's key quantities: TinyAdder-36's R + b + ℓ (the narration's total) and
    rope-19's x1 after the attention, its run's value beside the formula with the digits put
    in, which the value holds to within 0.25; both in one table, by the sum digit predicted."""
    _, published, _, _ = example
    a, b = map(int, EXAMPLE.split("+"))
    rope = run_views(models.build("zcbtrak-6", None), a, b, "float")
    [(meaning, values)] = compare.key_quantities(rope)
    # ≈, not =: the run holds it within 0.25 (~68.9941 for 69; learner16 1)
    assert meaning.startswith("x1 after the attention ≈ 10·(a_k + b_k + c_k) − c_(k−1) "
                              "(within 0.25; c_k the carry into place k), since the head")
    assert values["s1"] == ("~\u2009100.002; 10·(6 + 3 + 1) − 0", None)
    assert sorted(values) == sorted(f"s{k}" for k in range(11))
    for k in range(11):
        value, filled = values[f"s{k}"][0].split("; ")
        column = 10 * (digit_of(a, k) + digit_of(b, k) + carry_into(a, b, k)) - carry_into(
            a, b, k - 1)
        assert eval(filled.replace("·", "*").replace("−", "-")) == column
        assert abs(float(value.lstrip("~\u2009")) - column) < 0.25
    [(meaning, totals)] = compare.key_quantities(published)
    assert meaning == compare.RUNNING_TOTAL and meaning.endswith(
        ", to as many decimals as the division shown needs (3 or more)")
    # x = (R + b + ℓ)/P and the digit it picks, as explain prints them (learner9 2)
    assert totals["s1"] == ("2.489; ÷ 10¹: x = 0.2489 → digit 0", None)
    assert totals["s10"] == ("7800137102.346; ÷ 10¹⁰: x = 0.7800 → digit 0", None)
    for k in range(11):
        total, x = totals[f"s{k}"][0].split("; ")
        assert x.endswith(f"→ digit {digit_of(a + b, k)}")
        assert abs(float(total) / 10 ** k - float(x.split("= ")[1].split(" ")[0])) < 1e-3
    table = compare.key_table(published, rope)
    # each row names the position that predicts its digit, which the script highlights
    # when selected (learner9 8); the "Where" sentence comes before the table
    assert ('<tr data-pos="31"><td>s1</td><td class="mono">2.489; ÷ 10¹: x = 0.2489 → digit '
            '0</td><td class="mono">~\u2009100.002; 10·(6 + 3 + 1) − 0</td></tr>') in table
    rows = re.findall(r'<tr data-pos="(\d+)"><td>(s\d+)</td>', table)
    assert rows == [(str(p), published["tokens"][p + 1]["label"])
                    for p in published["predicting"]][:len(rows)] and len(rows) == 11
    section = explore._compare_section(published, rope)
    assert section.index('id="cmp-where"') < section.index('id="key-quantities"')
    assert 'tr[data-pos]' in example[2]  # the page carries its script
    assert compare.key_table(dict(published, decisions=[]), dict(rope, design=None)) == ""
    assert table in explore._compare_section(published, rope)
    # a value in the page's number format, not the tracer's e-notation
    stage = next(s for s in rope["residual"] if s["short"] == "L0.attn")
    x1 = next(r for r in stage["slots"] if r["slot"] == "x1")["cells"]
    q = next(p for p in rope["predicting"] if rope["tokens"][p]["next_place"] == 10)
    x1[q] = [3e-7, -6.5, "~3.00000e-7"]
    assert compare.key_quantities(rope)[0][1]["s10"][0].startswith("~\u20093.00000·10⁻⁷; ")
    # the tour's FFN step asks for the FFN's change to x1, within 1 (learner18 via issue 35):
    # x1 after the FFN, 10·s_k give or take 0.25·10, is the next column's header s_k
    ffn = next(st for st in tour.steps(rope) if st["title"].endswith("The FFN"))
    q = ffn["state"]["pos"]
    change = _slot_value(rope, "L0.mlp", "x1", q) - _slot_value(rope, "L0.attn", "x1", q)
    assert ffn["expect"]["values"] == [change] and round(change, 4) == -99.0098
    assert ffn["expect"]["tol"] == 1 and ffn["question"].startswith(
        "By how much does the FFN change x1 at position 31, where the attention left it at "
        "~100.002? (a number, negative where it takes off; a1 = 6, b1 = 3; anything within "
        "1 counts as right: a wrap takes close to 100 off, no wrap close to 0)")
    assert ffn["answer"].endswith(f"the digit nearest x1/10: {digit_of(a + b, 1)}.")


def test_a_two_slot_stream_prints_its_values_in_the_grid(example):
    """zcbtrak-6's stream has two slots, x0 and x1: each cell of the residual grid carries its
    value as the page prints it (x1 = ~100.002 at position 31 after the attention), white on
    a dark colour; the published model's 16 slots keep plain cells."""
    _, published, _, _ = example
    a, b = map(int, EXAMPLE.split("+"))
    rope = run_views(models.build("zcbtrak-6", None), a, b, "float")
    drawn = figures.residual(rope, "L0.attn", 31)
    values = re.findall(r'<text [^>]*class="small val( dk)?"[^>]*>([^<]*)</text>',
                        re.search(r'<g id="resid-values">(.*?)</g>', drawn).group(1))
    stage = next(s for s in rope["residual"] if s["short"] == "L0.attn")
    cells = {row["slot"]: row["cells"] for row in stage["slots"]}
    t = len(rope["tokens"])
    assert [v for _, v in values] == [figures.value_text(c) for s in ("x0", "x1")
                                      for c in cells[s]]
    assert values[t + 31][1] == "~100.002"
    letters = figures.residual_classes(rope)["L0.attn"]
    assert [bool(dk) for dk, _ in values] == [svg.dark(ch) for s in ("x0", "x1")
                                              for ch in letters[s]]
    assert 'data-hs="' in drawn and "resid-values" not in figures.residual(published, "L0.mlp")
    # x1 after the FFN is 10^-14.8 at one position (10^-7386 in the exact run: SiLU dust):
    # the row's scale stops at 10^-12 of its largest, or every real value would take one colour
    lo, hi = figures.residual_scales(rope)["L0.mlp"]["x1"]
    mlp = next(s for s in rope["residual"] if s["short"] == "L0.mlp")["slots"]
    x1 = next(r["cells"] for r in mlp if r["slot"] == "x1")
    assert min(c[1] for c in x1 if c[1] is not None) < -14 and lo == hi - 12


def test_a_row_under_a_factor_2_is_one_shade_with_its_range_printed(example):
    """A row whose |x| spans under a factor 2 is drawn in one shade, its real range beside it:
    zcbtrak-6's x0 (999.919 .. 1000) and TinyAdder-36's scale (1/35 .. 1/24) would else run
    from the palest colour to the darkest under a legend of whole decades; a row over a
    factor 2 keeps its log scale: TinyAdder-36's digit slot, 10·d from 10 to 90, and
    jacobli99-28's written digits 1 .. 9 (their contrast means something). The exact run's
    grid prints x0 as decimals, 249991/250 as 999.964, the fraction only in the hover
    (``page_data``'s "dec")."""
    _, published, _, _ = example
    a, b = map(int, EXAMPLE.split("+"))
    rope = run_views(models.build("zcbtrak-6", None), a, b, "fraction")
    letters, scales = figures.residual_classes(rope), figures.residual_scales(rope)
    x0 = next(r["cells"] for r in rope["residual"][1]["slots"] if r["slot"] == "x0")
    assert {c[2] for c in x0} >= {"1000", "249991/250", "999919/1000"}
    assert len(set(letters["L0.attn"]["x0"])) == 1 and len(set(letters["L0.attn"]["x1"])) > 3
    assert figures.row_legend(x0, scales["L0.attn"]["x0"]) == "|x| 999.919 .. 1000, one shade"
    drawn = figures.residual(rope, "L0.attn", 31)
    assert ">|x| 999.919 .. 1000, one shade</text>" in drawn and ">|x| 10⁻¹⁰ .. 10³<" in drawn
    values = re.findall(r">([^<]*)</text>", re.search(r'<g id="resid-values">(.*?)</g>',
                                                       drawn).group(1))
    assert values[2] == "999.964" and not [v for v in values if "/" in v]
    row = explore.page_data(rope)["residual"]["L0.attn"]["rows"]["x0"]
    assert row["range"] == "|x| 999.919 .. 1000, one shade"
    assert row["dec"][2] == "999.964" and row["cells"][2][2] == "249991/250"
    assert {k for k, c in enumerate(x0) if "/" in c[2]} == set(row["dec"])
    scale = next(r["cells"] for s in published["residual"] for r in s["slots"]
                 if r["slot"] == "scale" and s["short"] == "L0.mlp")
    said = figures.row_legend(scale, figures.residual_scales(published)["L0.mlp"]["scale"])
    assert said == "|x| 0.0285714 .. 0.0416667, one shade"
    assert len(set(figures.residual_classes(published)["L0.mlp"]["scale"]) - {"z"}) == 1
    digit = figures.residual_scales(published)["embed"]["digit"]
    assert digit[0] < digit[1]  # 10 .. 90: a log scale, not one shade
    from explore_cases import float_views
    jl = float_views("jacobli99-28")
    lo, hi = figures.residual_scales(jl)["L0.mlp"]["x1"]
    assert lo < hi and len(set(figures.residual_classes(jl)["L0.mlp"]["x1"])) > 3


def test_change_one_thing_shows_the_ffn_off_run():
    """A board model's "change one thing" (its last FFN switched off) has a view: per position
    that predicts a digit, the digit written as built and with the FFN off (vermillion where it
    changed), and x0, x1 of the stream the readout reads in both runs; the tour's step opens
    it."""
    a, b = map(int, EXAMPLE.split("+"))
    model = models.build("zcbtrak-6", None)
    rope = run_views(model, a, b, "float")
    rope["ffn_off"] = off = views_module.ffn_off_view(model, a, b, "float")
    drawn = figures.change(rope)
    cells = re.findall(r"<text ([^>]*)>([^<]*)</text>",
                       re.search(r'<g id="off-cells">(.*?)</g>', drawn).group(1))
    n = len(rope["predicting"])
    rows = [cells[k * n:(k + 1) * n] for k in range(len(cells) // n)]
    said = [[text for _, text in row] for row in rows]
    assert len(rows) == 8 and said[0] == [str(q) for q in rope["predicting"]]
    assert said[2] == [rope["tokens"][q + 1]["text"] for q in rope["predicting"]]
    assert said[3] == [off["tokens"][q + 1] for q in rope["predicting"]]
    assert "".join(said[3][::-1]) == off["answer"] == "07799996999"  # s0 written first
    assert [("fill:" in attrs) for attrs, _ in rows[3]] == [
        x != y for x, y in zip(said[3], said[2])]
    # one number format in both runs' rows, the dtype said once (learner19 8: '~2.00000'
    # beside '12.0', and '(float32)' on each row); "wrong (a + b is ...)"
    assert said[7][1] == "93.0024" and said[6][1] == "0.992544" and said[5][1] == "999.919"
    assert all(not t.startswith("~") and not re.search(r"\.\d*0$", t)
               for row in said[4:] for t in row), said[4:]
    assert "wrong (a + b is 07800137102)" in drawn and "wrong: a + b" not in drawn
    assert "(float)" not in drawn and drawn.count("both runs take float numbers") == 1
    # x0 holds the position's own digit: it differs where the written digits differ
    assert ("each run reads back its own digits, so a slot also differs where the position "
            "holds a different digit") in drawn
    step = next(s for s in tour.steps(rope) if s["title"].endswith("Change one thing"))
    assert step["view"] == "change"


def test_the_tours_words_at_three_digits(example):
    """At N = 3 the candidates are not exactly −(1000/(i + 2))·(u + ½)·P: count at = is
    −9.9999 ('+' still adds 10^-4), so the step says ≈ and why; the no-tilt answer's distance
    to (0, 1]'s ends is "room" (the ruler's "margin" is another thing); the ledger's rule is
    one for every model."""
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(traced("999+1", "repaired", 3)[1])}
    assert steps["The ten candidates"]["answer"] == (
        "\u2248 \u2212349996 \u2248 \u2212(1000/10)\u00b73.5\u00b710\u00b3 = \u2212350000: the "
        "candidates are built from count at =, which is \u2248 \u22129.99990, not \u221210 (the + "
        "key still adds "
        "10\u207b\u2074).")
    assert "room 0.37 units" in steps["Why it does not fail"]["answer"]
    assert "margin" not in steps["Why it does not fail"]["answer"]
    flaw = tour.steps(example[1])
    # the tokens step asks which positions predict the first and last digit: it opens on
    # <bos>, neither of them (the lead 2)
    assert flaw[0]["expect"]["values"] == [22, 32] and flaw[0]["state"]["pos"] == 0
    assert steps["Tokens and positions"]["state"]["pos"] == 0
    words = " ".join(s["text"] + s["answer"] for s in flaw if "fail" in s["title"])
    assert "right digit is 5 to 8" in words and "a 9 has no digit above it" in words


def test_the_running_average_is_named_for_a_prompt_position():
    """Layer 1's average at a prompt position holds the digits read so far, not yet "what
    remains to be written": the hover's first form says so, its second (a position that
    predicts a digit) keeps R + b + ℓ."""
    said = views_module.meanings(build("published"))["L1.attn"]
    for slot in ("cand6", "count"):
        assert "R the digits read so far at their places" in said[slot][0]
        assert "read so far" not in said[slot][1] and "(R + b + \u2113)" in said["count"][1]


def test_a_designed_familys_page_carries_its_worked_example():
    """jacobli99-28's page links its tokens, attention and residual views and their tour
    steps to docs/models.md's rope-10000 worked example, which it carries (the rope-19 pages
    carry the walkthrough's section on zcbtrak-6)."""
    from explore_cases import float_views
    views = float_views("jacobli99-28")
    assert tour.view_sections(views) == {v: "ex:rope-10000"
                                         for v in ("tokens", "attention", "residual")}
    page = explore.page(views, explore.walkthrough())
    link = '<a class="doc" href="#wt-models-rope-10000">models.md: rope-10000</a>'
    linked = [s for s in tour.steps(views) if s["section"] == "ex:rope-10000"]
    assert linked and page.count(link) >= 3 + len(linked)
    assert ('<article id="wt-models-rope-10000"><h3>Worked example: rope-10000 '
            '(docs/models.md)</h3><p><b>rope-10000.</b> jacobli99-28 at position 33') in page
    assert "<h2>From docs/models.md</h2>" in page


def test_key_names_wider_than_a_cell_alternate_between_two_lines():
    """jacobli99-28's two separators between a9 and b0 ran together at 1280 px:
    key names wider than a cell alternate between two lines, so neighbours never touch."""
    from explore_cases import float_views
    drawn = figures.attention(float_views("jacobli99-28"), "L0.h0", "softmax1", 24)
    keys = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" class="small" text-anchor="middle">'
                      r'([^<]*)</text>', drawn)
    row = {float(x): (float(y), unescape(name)) for x, y, name in keys if float(y) < 58}
    names = [row[x] for x in sorted(row)]
    assert [n for _, n in names[10:14]] == ["a9", "'0'", "'0'", "b0"]
    assert names[11][0] != names[12][0] and names[10][0] == names[12][0]


@pytest.mark.parametrize("name", ["zcbtrak-6", "jacobli99-28", "nino-116", "lichengliu03-50"])
def test_a_digits_embedding_formula_holds_with_the_digit_put_in(name):
    """The hover of a slot that still holds a digit's embedding gives its formula with the
    digit put in (zcbtrak-6's x0 at position 2, 999.964 = 1000 − 6²/1000, which tour step 2
    teaches); each formula holds on every digit of the run, to within 10^-4."""
    from explore_cases import float_views
    views = float_views(name)
    forms = explore.page_data(views)["embedded"]
    assert forms
    embed = {r["slot"]: r["cells"] for r in views["residual"][0]["slots"]}
    for slot, form in forms.items():
        for t in views["tokens"]:
            if t["role"] != "special" and t["text"].isdigit():
                said = form.replace("{d}", t["text"]).replace("\u2212", "-").replace(
                    "\u00b7", "*").replace("\u00b2", "**2").replace("10\u207b\u2074", "1e-4")
                assert abs(eval(said) - embed[slot][t["pos"]][0]) <= 1e-4, (slot, t, said)
    if name == "zcbtrak-6":
        assert forms["x0"].replace("{d}", "6") == "1000 \u2212 6\u00b2/1000"


def test_jacobli99_28s_tour_says_what_its_numbers_mean(example):
    """jacobli99-28's tour: the FFN step's answer says an exact run's 10^-227150166 is 0 but
    for the far keys' weights; "change one thing" names what "neither" means; the
    parameters step says how the board reads the claimed 28 (numel: 90 in this file, 62 more,
    entries the original computes in code). TinyAdder-36's running-sum step selects layer 1's
    head, the one it is about."""
    from explore_cases import float_views
    views = float_views("jacobli99-28")
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(views)}
    # one plain answer (learner19 6: it said three times that numel is 90): the claim is no
    # count here, numel's count and what the gap is, the ledger's count, each said once
    answer = steps["The parameters"]["answer"]
    assert answer.startswith(
        "22. No rule gives the authors' 28. The file's numel is 90, 62 more: entries the "
        "original computes in code (constants in forward(), fixed maps, zeros) are tensors "
        "of the file. seed000 counts 22. tinyadder params --model jacobli99-28 --rules")
    assert answer.count("90") == 1 and answer.count("22") == 2
    # the step's text about the chips in short sentences, none over 30 words
    chips = steps["The parameters"]["text"].split(" tinyadder's ledger")[0]
    assert max(len(t.split()) for t in chips.split(". ")) <= 20, chips
    assert views["rule_counts"]["numel"][0] - 28 == 62 and views["param_total"] == 22
    # why a rotation gives one-hot attention (learner7 21), in the step's text, seen before
    # the answer (learner8 11)
    heads = steps["Layer 0's 5 heads"]
    assert "Why one-hot: each head's query is turned by a fixed angle. Its score" in heads["text"]
    assert "Why one-hot" not in heads["answer"]
    # how to get to query 25's keys from the strips of query 24, and why no other key scores
    # 1, in a clause a newcomer follows (learner19 11: "whole radians, never a whole turn")
    assert heads["question"].startswith(
        "Which key does each head weigh most from query 25, the position after the selected "
        "one? (read each head's key from query 24 in the strips above, then shift it by one "
        "position;")
    # π irrational, and the near misses 6 and 19 (learner26 1)
    assert ("no whole number of radians is a whole number of turns (π is irrational), so "
            "its angle to any other key is never 0 again. The nearest misses are keys 6 and "
            "19 positions from it") in heads["text"]
    assert "the step before says why in its text" in steps["The column"]["text"]
    # the self-attending head takes the position's own digit out of x1 (learner9 5): at
    # position 24, x1 is s0 = 2 on the embedding and a1 + b1 = 9 after the attention
    column = steps["The column"]
    assert "moves its own digit s0 out of x1 and into x0" in column["text"]
    assert column["answer"] == ("9.0: x1 goes from 2.0 on the embedding (s0, the position's "
                                "own digit) to a1 + b1 = 6 + 3.")
    stages0 = {s["short"]: {r["slot"]: r["cells"] for r in s["slots"]} for s in views["residual"]}
    assert stages0["embed"]["x1"][24][0] == 2 == 7650676663 % 10 + 149460439 % 10 - 10
    assert stages0["L0.attn"]["x1"][24][0] == 9 == 6 + 3
    # the carry: D derived from the column's sum, and a second case, D = +1 (learner8 12)
    carry = steps["The carry"]
    assert "Column 0 adds up as a0 + b0 + c0 = s0 + 10·c1, so D = c0 − 10·c1" in carry["text"]
    assert carry["answer"].endswith(
        "Another case: choose position 27 (it predicts s4); there D = c3 − 10·c4 = 1 − 10·0 "
        "= +1.")
    stages = {s["short"]: {r["slot"]: r["cells"] for r in s["slots"]} for s in views["residual"]}
    assert round(stages["L0.attn"]["x0"][27][0] - stages["embed"]["x0"][27][0], 6) == 1
    # the name's 28 against the ledger's count: the question says so (learner8 13)
    assert steps["The parameters"]["question"] == (
        "The name says 28. Does the ledger agree? (how many does it count?)")
    assert tour._params_question("tinyadder36-published", None) == (
        "How many parameters does the ledger count?")
    # the FFN-off run says why it is in float32 (learner7 23)
    off = dict(views, number="fraction (exact)", ffn_off={
        "layer": 0, "number": "float32 (IEEE single)", "answer": "07799996999",
        "tokens": [t["text"] for t in views["tokens"]], "values": {}})
    step = tour._switch_off(off, steps["The column"]["state"]["pos"])
    assert step["text"].startswith(
        "The page also ran this sum, in float32, the model's own dtype, not in fraction as "
        "the rest of the page (a second exact run would cost as much as the page itself)")
    q = steps["The FFN"]["state"]["pos"]
    stage = next(s for s in views["residual"] if s["short"] == "L0.mlp")
    x1 = next(r for r in stage["slots"] if r["slot"] == "x1")["cells"]
    # the FFN's change, not x1 after it (s1, which the next column's header shows)
    assert steps["The FFN"]["question"].startswith(
        "By how much does the FFN change x1 at position 24, where the attention left it at 9.0?")
    assert steps["The FFN"]["answer"].startswith(
        "\u22129: x1 becomes 0.0. The readout's parabola")  # float: 0
    assert steps["The FFN"]["units"] is False  # the units' outputs add up to the answer
    kept, x1[q] = x1[q], [-0.0, -227150165.59, "~-2.56339e-227150166"]  # as the exact run
    try:
        answer = next(s for s in tour.steps(views) if s["title"].endswith("The FFN"))["answer"]
    finally:
        x1[q] = kept
    assert answer.startswith("\u22129: x1 becomes \u2248 \u22122.56339\u00b710\u207b\u00b2\u00b2\u2077\u00b9\u2075\u2070"
                             "\u00b9\u2076\u2076, that is 0 but for the far keys' weights")
    assert tour.FFN_DOES["rope-10000"][1].startswith("With neither the carry nor the wrap, ")
    running = next(s for s in tour.steps(example[1]) if s["title"].endswith("The running sum"))
    assert running["state"]["head"] == "L1.h0"


def test_learner7_a_slot_near_a_constant_is_coloured_by_its_difference():
    """jacobli99-28's x0 after the attention is its embedding plus D = c_(k−1) − 10·c_k
    (989.999 at the position that predicts s1, a carry out; 1000.99 where one comes in):
    under a factor 2, it is coloured by x less its embedded value, so the carry shows; TinyAdder-36's scale (0 before '=', then
    1/35 .. 1/24) stays one shade."""
    from explore_cases import float_views
    views = float_views("jacobli99-28")
    stage = next(s for s in views["residual"] if s["short"] == "L0.attn")
    x0 = next(r for r in stage["slots"] if r["slot"] == "x0")["cells"]
    letters = figures.residual_classes(views)["L0.attn"]["x0"]
    out, into = 24, next(p for p in views["predicting"] if x0[p][0] > 1000.5)
    assert x0[out][2].startswith("~989.99") and letters[out] < "f" < letters[into]
    assert figures.row_legend(x0, figures.residual_scales(views)["L0.attn"]["x0"],
                              figures.embedded(views, stage, "x0")).endswith(
        "coloured by x less its embedded value")
    published = traced(EXAMPLE)[1]
    scale = next(r for r in published["residual"][1]["slots"] if r["slot"] == "scale")
    assert figures.row_legend(scale["cells"], figures.residual_scales(published)[
        published["residual"][1]["short"]]["scale"]).endswith("one shade")


def test_learner8_a_small_ffns_hidden_units_are_tabled(example):
    """jacobli99-28's FFN has four hidden units (learner8 14): the views carry each unit's
    input formula (992 − x0: a hinge pair on x0 with 991 − x0) and what it adds (x1 + out,
    x1 − out), and per position its value into the relu and out of it, read from the run
    (at position 24, x0 = 989.999 after the attention: u0 = 992 − x0 = 2.001, fires; at 27,
    x0 = 1000.99: u0 < 0, out 0); the page carries them and a place for the table, and tour
    step 'The FFN' points at it. TinyAdder-36's FFNs (11 and 20 units) get none."""
    from explore_cases import float_views
    from tinyadder.analysis.pictures import explore as explore_page
    views = float_views("jacobli99-28")
    h = views["hidden"]["L0.mlp"]
    assert (h["units"], h["act"], h["linear"]) == (["u0", "u1", "u2", "u3"], "relu", None)
    assert h["into"] == ["992 − x0", "991 − x0", "1812 − 2·x0 + 20·x1", "1811 − 2·x0 + 20·x1"]
    assert h["writes"] == ["x1 + out", "x1 − out", "x1 − 10·out", "x1 + 10·out"]
    mid = {r["slot"]: r["cells"] for r in views["residual"][1]["slots"]}
    assert views["residual"][1]["short"] == "L0.attn"
    for p in range(len(views["tokens"])):
        x0, x1 = mid["x0"][p][0], mid["x1"][p][0]
        want = [992 - x0, 991 - x0, 1812 - 2 * x0 + 20 * x1, 1811 - 2 * x0 + 20 * x1]
        assert [c[0] for c in h["pre"][p]] == pytest.approx(want, abs=1e-3)
        assert [c[0] for c in h["post"][p]] == [max(c[0], 0.0) for c in h["pre"][p]]
    assert [c[2] for c in h["post"][27]][:2] == ["0.0", "0.0"] and h["post"][24][0][0] > 2
    data = explore_page.page_data(views)
    assert data["hidden"]["L0.mlp"]["pre"][24] == [c[2] for c in h["pre"][24]]
    assert '<div id="hidden-units"></div>' in explore_page.page(views)
    ffn = next(s for s in tour.steps(views) if s["title"].endswith("The FFN"))
    assert ffn["text"].endswith(
        "The table under the residual stream lists the FFN's 4 hidden units at this position: "
        "what goes into each, what comes out ('0 (off)' where it does not fire), and what it "
        "adds to x1 "
        "(it opens once you check a guess or show the answer: its outputs add up to the "
        "answer).")
    assert example[1]["hidden"] == {} and 'id="hidden-units"' not in page_text(EXAMPLE)


def test_learner9_jacobli99_28s_page_says_its_readout_decides_by_a_hair():
    """jacobli99-28's own prose (not only tour step 7) says its most surprising fact
    (learner9): each winning logit leads the runner-up by about 0.00025 on logits near 1000,
    the figures read from the run's readout (the smallest and largest lead, each logit's gap
    to the winner)."""
    from explore_cases import float_views
    from tinyadder.analysis.pictures import explore as explore_page
    views = float_views("jacobli99-28")
    rows = [r for r in views["residual"][-1]["slots"] if r["slot"].startswith("logit ")]
    leads = {p: min(-r["gap"][p][0] for r in rows if r["gap"][p][0] < 0)
             for p in views["predicting"]}
    least, most = min(leads, key=leads.get), max(leads, key=leads.get)
    assert (least, most) == (31, 23) and 2.1e-4 < leads[31] < leads[23] < 2.51e-4
    top = max(r["cells"][p][0] for r in rows for p in views["predicting"])
    assert 1000 < top < 1001
    line = explore_page.lead_line(views)
    assert line == (
        "Its readout decides by a hair: at each of the 11 positions that predict a digit of "
        "the sum the winning logit leads the runner-up by ~0.000211750 (position 31) to "
        "~0.000250000 (position 23), on logits near 1000: one part in about 5·10⁶ (the "
        "readout stage colours each logit by its gap to the winner).")
    assert float(line.split("by ~")[1].split(" ")[0]) == pytest.approx(leads[31], rel=1e-5)
    assert f'<p id="lead-said">{escape(line)}</p>' in explore_page.page(views)


def test_learner9_the_one_hot_step_gives_the_runner_ups_weight_where_the_run_keeps_it():
    """Tour step 3 of a rope-10000 model (learner9 7): an exact run keeps each head's second
    weight (e to a very negative power), and the step names the largest of them with its
    head; a float run rounds them to 0, and the step says nothing of it."""
    from explore_cases import float_views
    views = float_views("jacobli99-28")
    keys = [k for k, h in views["heads"].items() if h["layer"] == 0]
    assert tour._runner_up(views, keys, 24) == ""
    row = [[1.0, 0.0, "~1.00000"], [0.0, -227150166.3, "~5.12678e-227150167"],
           [0.0, -801536473.9, "~1.40435e-801536474"], [0.0, None, "masked"]]
    other = [[0.0, -9e8, "~1e-900000000"], [1.0, 0.0, "~1.00000"], [0.0, None, "masked"],
             [0.0, None, "masked"]]
    exact = {"heads": {"L0.h0": {"softmax1": [row] * 3}, "L0.h1": {"softmax1": [other] * 3}}}
    assert tour._runner_up(exact, ["L0.h0", "L0.h1"], 2) == (
        " In this run the largest second-place weight of any head from query 2 is "
        "~5.12678·10⁻²²⁷¹⁵⁰¹⁶⁷ (L0.h0): that is how wide the gap is.")


def test_learner10_the_parameter_figure_counts_as_the_ledger_does():
    """jacobli99-28's parameter figure said "The 40 parameters" with embed 21, L0.attn 12,
    L0.mlp 7, readout 0, where the ledger counts 22 (11, 4, 6, 1) (learner10 2): each stage
    now gives the chips drawn and the ledger's count, unembed.* is the readout's, and the title
    names both numbers; the tour's parameters step says what the chips are and its answer
    reads as a sentence (learner10 10)."""
    views = float_views("jacobli99-28")
    counted = {}
    for line in ledger(models.build("jacobli99-28", None)):
        if line.params:
            counted[views_module.stage_of(line.tensor.name)] = (
                counted.get(views_module.stage_of(line.tensor.name), 0) + line.params)
    assert views["param_counted"] == counted == {"embed": 11, "L0.attn": 4, "L0.mlp": 6,
                                                  "readout": 1}
    assert sum(counted.values()) == views["param_total"] == 22
    drawn = [p["stage"] for p in views["params"]]
    assert (len(drawn), drawn.count("embed"), drawn.count("readout")) == (40, 19, 2)
    svg_text = figures.parameters(views)
    assert "40 chips behind the 22 counted parameters" in svg_text
    assert "The 40 parameters" not in svg_text
    for said in ("19 drawn, 11 counted", "12 drawn, 4 counted", "7 drawn, 6 counted",
                 "2 drawn, 1 counted"):
        assert said in svg_text
    step = next(s for s in tour.steps(views) if s["title"].endswith("The parameters"))
    assert "draws 40 chips" in step["text"] and "behind the parameters the ledger" in step["text"]
    assert ("numel is 90, 62 more: entries the original computes in code"
            ) in step["answer"]
    assert "The 62 between" not in step["answer"]
    # TinyAdder-36 counts one chip per parameter: its figure keeps one count per stage
    published = float_views("published")
    assert len(published["params"]) == published["param_total"] == 36
    assert "The 36 parameters on the model&#x27;s slots" in figures.parameters(published)
    assert "drawn," not in figures.parameters(published)


def test_learner16_the_parameters_heading_counts_values_as_params_rules_does():
    """jacobli99-28's heading "The 40 distinct values behind the 22 counted parameters" read
    against `params --rules`' "distinct 39" (learner16 8): the heading counts chips, and a
    line says how many values they show and where the rest of the model-wide distinct ones
    sit (blocks.0.mlp.b_in's 991, 992, 1811, 1812, derived from C, no chip). Models whose
    chips are their parameters (zcbtrak-6, TinyAdder-36) keep one count."""
    from tinyadder.analysis.ledger import rules
    views = float_views("jacobli99-28")
    model = models.build("jacobli99-28", None)
    counts = rules(model)
    assert (counts["distinct"].params, counts["seed000"].params) == (39, 22)
    chips = {p["value"] for p in views["params"]}
    wide = {str(v) for line in ledger(model) if line.tensor.entries
            and line.role != "position" for v in line.tensor.entries.values()}
    assert (len(views["params"]), len(chips)) == (40, 35)
    assert chips <= wide and wide - chips == {"991", "992", "1811", "1812"}
    drawn = figures.parameters(views)
    assert ">40 chips behind the 22 counted parameters, on the model&#x27;s slots</text>" in drawn
    assert (">a chip per tensor and distinct value (per token row in the embedding): 35 "
            "different values among the 40, 5 chips repeating a value another tensor or token "
            "row holds</text>") in drawn
    assert (">params --rules counts 39 distinct model-wide: 4 more sit only in tensors with no "
            "counted parameter</text>") in drawn
    assert "distinct values behind" not in drawn
    # the view's intro counts them by the heading's word (views21)
    intro = explore._intros(views, {})["params"]
    assert (" (drawn: 40 chips, a chip per distinct value of each tensor it counts, per token "
            "row in the embedding, so a value two tensors or token rows share has a chip in "
            "each;") in intro and "distinct values of the tensors" not in intro
    for name, n in (("zcbtrak-6", 47), ("published", 36)):
        assert rules(models.build(name, None))["seed000"].params == n
        drawn = figures.parameters(float_views(name))
        assert f"The {n} parameters on the model&#x27;s slots" in drawn
        assert "different values among" not in drawn and "params --rules" not in drawn


def test_learner15_the_parameters_view_reconciles_the_claim_with_the_ledger():
    """zcbtrak-6's Parameters view said "The 47 parameters" with no word on the 6 in its name
    (learner15 10): where the claim and the ledger differ, a sentence under the title gives
    the claim's rule and count there, read from the ledger's rules as board reads them;
    where they agree (TinyAdder-36), none."""
    entries = {n: board.entry(n) for n in ("zcbtrak-6", "jacobli99-28", "yieldthought-20")}
    for name, e in entries.items():
        model = models.build(name, None)
        c = views_module.param_claim(model)
        assert (c["claimed"], c["rule"], c["under_rule"], c["ledger"]) == (
            e.claimed, e.rule, e.own, e.counted), name
    line = explore.claim_line({"model": "zcbtrak-6", "param_claim":
                               views_module.param_claim(models.build("zcbtrak-6", None))})
    assert line == ("Its name claims 6 parameters, read under the rule <i>free</i> (tinyadder "
                    "counts 6 under it); the ledger below counts 47 under seed 000's rule, one "
                    "rule for every model (<code>tinyadder params --model zcbtrak-6 --rules"
                    "</code> gives each rule's count; docs/params.md says why they differ). ")
    # a claim no rule gives (jacobli99-28's 28: numel counts 90) is said to be one, not "read
    # under" a rule that counts otherwise (learner23 3)
    line = explore.claim_line({"model": "jacobli99-28", "param_claim":
                               views_module.param_claim(models.build("jacobli99-28", None))})
    assert line.startswith("Its name claims 28 parameters, a count no rule gives for this file "
                           "(AdderBoard reads it under <i>numel</i>, where tinyadder counts 90); "
                           "the ledger below counts 22 under seed 000's rule")
    assert views_module.param_claim(models.build("published", None)) is None
    assert explore.claim_line({"model": "tinyadder36-published", "param_claim": None}) == ""


def test_learner10_the_tours_checkers_ask_for_the_form_they_check():
    """Step 3 took "a0 a1 b0 b1 s0", the labels in any order, for five heads (learner10 11):
    its expectation is one group per head, in head order; steps 1 and 7 name the form of
    their two numbers, which the page's checker says when fewer or reordered ones are
    typed."""
    views = float_views("jacobli99-28")
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(views)}
    heads = steps["Layer 0's 5 heads"]["expect"]
    # the step shows query 24's strips and asks for query 25's keys, one later in each head
    # (learner14 6): the position itself, a1, b1, a2 and b2 (positions 2, 14, 3 and 15)
    labels = [views["tokens"][p]["label"] for p in (25, 2, 14, 3, 15)]
    assert heads["groups"] == [[w] for w in labels] == [["s1"], ["a1"], ["b1"], ["a2"], ["b2"]]
    assert "in head order, L0.h0's first" in steps["Layer 0's 5 heads"]["question"]
    assert steps["Tokens by role"]["expect"]["form"] == (
        "a0's position first, then the one that predicts s0")
    assert steps["The readout"]["expect"]["form"] == "the digit, then the lead"
    js = (Path(explore.__file__).parent / "explore.js").read_text(encoding="utf-8")
    assert "not in head order" in js and "numbers asked" in js and "in the wrong order" in js


def test_learner10_the_ffn_off_runs_numbers_are_said_in_the_view():
    """Change one thing printed "FFN off writes … (float32)" beside "as built writes …
    (fraction)", explained only in tour step 8 (learner10 9): the view says why the FFN-off
    run takes the file's dtype; a page whose two runs take the same numbers says so once."""
    said = ("the FFN-off run takes float32 numbers, the file's own dtype, where the page's "
            "run takes fraction: a second fraction run would double the page's cost, so the "
            "digits it writes are float32's")
    exact = {"number": "fraction (exact)", "ffn_off": {"number": "float32"}}
    assert figures.off_number_note(exact) == said
    assert views_module.off_numbers(models.build("jacobli99-28", None),
                                    type("NS", (), {"describe": lambda self: "fraction"})()
                                    ) == "float32"
    same = {"number": "float (IEEE 754 double)", "ffn_off": {"number": "float (IEEE 754 double)"}}
    assert figures.off_number_note(same) == "both runs take float numbers"


def test_learner18_the_ffn_off_step_says_how_to_rerun_it():
    """The FFN-off step named no way to reproduce its run, and its dtype as "float" where the
    board writes float64 (learner18 12): it gives the call, run_with_cache with
    blocks.0.hook_mlp_out patched to zeros in the run's own numbers, and that call, run,
    writes the answer the page shows; the dtype is the board's word."""
    m = models.build("zcbtrak-6", None)
    a, b = 7650676663, 149460439
    cache = run_with_cache(m, encode(m, a, b), ns="float")[1]
    views = views_module.build_views(cache, a, b)
    step = next(s for s in tour.steps(views) if s["title"].endswith("Change one thing"))
    assert step["text"].startswith("The page also ran this sum, in float64, with layer 0's")
    call = ('run_with_cache(build("zcbtrak-6"), "7650676663+0149460439", ns="float", '
            'patch={"blocks.0.hook_mlp_out": lambda rows: [[v - v for v in r] for r in rows]})')
    assert (f"To run it yourself, in Python: from tinyadder.models import build; from "
            f"tinyadder.cache import run_with_cache; {call} (v \u2212 v: a zero in the run's "
            f"own numbers; ns=\"float\" is float64).") in step["text"]
    rerun = eval(call, {"build": models.build, "run_with_cache": run_with_cache})[1]
    assert views_module._answer(rerun) == views["ffn_off"]["answer"] == "07799996999"
    assert board.label(rerun.ns) == "float64"
    assert tour._dtype("float32 (IEEE single)") == "float32"


def test_learner10_the_query_rows_outline_ends_at_the_last_column():
    """Under an ordinary softmax (no sink column) the query row's outline ran 1.6 cells past
    the last key (learner10, small): it ends at the last key there, at the sink under
    softmax1; the page's script sets the same width when the mode changes."""
    views = float_views("published")
    t, c = len(views["tokens"]), figures.cell_size(len(views["tokens"]) + 2, room=760)
    for mode, cells in (("softmax", t), ("softmax1", t + 1.6)):
        drawn = figures.attention(views, "L0.h3", mode, 24)
        width = float(re.search(r'width="([0-9.]+)" height="[0-9.]+" class="sel" '
                                r'id="attn-sel"', drawn).group(1))
        assert width == round(cells * c + 2, 1)
    js = (Path(explore.__file__).parent / "explore.js").read_text(encoding="utf-8")
    assert ('sel.setAttribute("width", (((sunk ? 1.6 : 0) + D.tokens.length) * c + 2)'
            in js)


def test_learner11_count_at_eq_says_what_plus_adds_where_it_shows():
    """Tour step 4's answer: count at '=' is ≈ −9.99990 at N = 3, and the answer says why:
    '+' adds 10^-4 from four steps back (learner11 4); at N = 10 its 10^-11 does not show in
    six digits, and the answer says nothing of it."""
    three = tour.steps(traced("999+1", "repaired", 3)[1])[3]["answer"]
    assert "\u2248 \u22129.99990: " in three
    assert "\u221210 from = itself, plus 10\u207b\u2074 from +, 4 steps back. " in three
    ten = tour.steps(traced(EXAMPLE)[1])[3]["answer"]
    assert "\u221210 from = itself. " in ten and "steps back" not in ten


def test_learner11_the_walkthroughs_biases_are_the_pages_own_at_n_3():
    """The walkthrough's section 10, carried in the page, names N = 10's biases 0, 30 or 45
    instead of 15; at N = 3 the page says its own buttons' 0, 82 or 123 instead of 41 beside
    them (learner11 13); at N = 10 the text stays the walkthrough's."""
    said = explore.WALKTHROUGH_BIASES
    docs = explore.walkthrough()
    assert said in docs["10-more-digits-and-precision"][1]
    three = explore._embedded(docs, traced("999+1", "repaired", 3)[1])
    assert ("bias 0, 82 or 123 instead of 41 (at N = 3; the walkthrough's N = 10 has 0, 30 "
            "or 45 instead of 15)") in three
    assert "layer 1's " + said not in three
    ten = explore._embedded(docs, traced(EXAMPLE)[1])
    assert "layer 1's " + said + ", and" in ten and "at N = 3" not in ten


def test_learner11_the_ffn_table_shows_the_down_projection():
    """zcbtrak-6's FFN table (views.hidden_units) carries its down projection: g0 and g1 write
    x1 with weights −25/64 and +25/64, their outs times those sum to the FFN's whole write,
    and x1 after L0.attn plus it is x1 after L0.mlp: 100.002 − 99.0098 = 0.992544 at position
    31 (learner11 9). The tour's step says "close to 100" and its answer the sum."""
    from explore_cases import float_views
    views = float_views("zcbtrak-6")
    h = views["hidden"]["L0.mlp"]
    assert h["writes"] is None
    assert [[(s, c[0]) for s, c in row] for row in h["down"]] == [[("x1", -25 / 64)],
                                                                  [("x1", 25 / 64)]]
    q = 31
    adds = [c[0] for row in h["adds"][q] for _, c in row]
    assert adds == [o[0] * w for o, w in zip(h["post"][q], (-25 / 64, 25 / 64))]
    wrote = h["wrote"][q]["x1"][0]
    assert abs(sum(adds) - wrote) <= 1e-12 * abs(wrote)
    x1 = {stage: _slot_value(views, stage, "x1", q) for stage in ("L0.attn", "L0.mlp")}
    assert x1["L0.attn"] + wrote == x1["L0.mlp"]
    assert (round(x1["L0.attn"], 3), round(wrote, 4), round(x1["L0.mlp"], 6)) == (
        100.002, -99.0098, 0.992544)
    ffn = next(s for s in tour.steps(views) if s["title"].endswith("The FFN"))
    assert "takes 100 off" not in ffn["text"] and "close to 100 off x1" in ffn["text"]
    assert ffn["answer"].startswith(
        "\u2248 \u221299.0098: x1 becomes "
        "~0.992544 = ~100.002 + (\u2248 \u221299.0098): the units' outs times their down "
        "weights, summed (the table's last column), add \u2248 \u221299.0098 to x1, not "
        "exactly \u2212100.")
    # jacobli99-28's weights are plain numbers: its table says its writes as formulas
    assert "down" not in float_views("jacobli99-28")["hidden"]["L0.mlp"]


def _slot_value(views, stage, slot, pos):
    rows = next(s for s in views["residual"] if s["short"] == stage)["slots"]
    return next(r for r in rows if r["slot"] == slot)["cells"][pos][0]


def test_learner11_a_board_models_attention_step_says_its_colour_band():
    """zcbtrak-6's tour step 3: the map's colours run over its clipped band, 10⁻¹⁰ to 1, so
    a2's and b2's weights near 10⁻⁵ are coloured halfway along it; the step says so
    (learner11 12)."""
    from explore_cases import float_views
    views = float_views("zcbtrak-6")
    assert views["heads"]["L0.h"]["scale"] == (-10, 0)
    step = next(s for s in tour.steps(views) if s["title"] == "3. Where the query looks")
    assert ("The colours are on a log scale clipped to 10\u207b\u00b9\u2070 (dark purple) "
            "\u2026 1 (yellow), so a weight of 10\u207b\u2075 is drawn halfway along it, as visibly as "
            "a live one (grey: below 10\u207b\u00b9\u2070); the line above") in step["text"]
    # the line lists query 31's weights (b1, a1): the step asks for query 32's, which reads
    # the next column, a2 at position 3 and b2 at 22 (learner15's fault of a question its
    # view answers)
    row = views["heads"]["L0.h"]["softmax1"][32][:33]
    top = sorted(range(33), key=lambda k: -row[k][0])[:2]
    assert sorted(top) == [3, 22] and [views["tokens"][k]["label"] for k in (3, 22)] == ["a2", "b2"]
    assert step["expect"]["values"] == ["b2", "a2"] and "query 32" in step["question"]
    assert step["state"]["pos"] == 31


def test_learner11_lokimorty_10s_tour_has_a_step_of_its_own():
    """lokimorty-10's tour is not zcbtrak-6's: a step on what its title calls a tied gate,
    g0 − g1 = (c/1000)·x0, with g0, x0 and c/1000 = 128 read from its run and g1 to predict
    (learner11 8); the step is chosen by how the file writes g1's weight on x0 (a − c/1000,
    an expression of g0's two weights), not by the title's words: zcbtrak-6 writes the same
    weight as a literal, and its tour has no such step."""
    from explore_cases import float_views
    from tinyadder.analysis.pictures.svg import shown
    views = float_views("lokimorty-10")
    loki = tour.steps(views)
    zc = tour.steps(float_views("zcbtrak-6"))
    assert [s["title"] for s in loki] == ["1. The same function as zcbtrak-6",
                                          "2. The constants it names", "3. The tied gate",
                                          "4. The parameters"]
    assert tour.tied(views) and not tour.tied(float_views("zcbtrak-6"))
    # kswain98-8's file ties its gate the same way, and its title does not say so
    ks = float_views("kswain98-8")
    assert tour.tied(ks) and "tied gate" not in ks["about"]["title"]
    assert any(s["title"].endswith("The tied gate") for s in tour.steps(ks))
    untitled = dict(views, about=dict(views["about"], title="no words about gates"))
    assert tour.steps(untitled)[2]["title"] == "3. The tied gate"
    step = loki[2]
    h = views["hidden"]["L0.mlp"]
    (g0, g1), x0 = h["pre"][31], h["linear"][31][0]
    assert abs(g0[0] - g1[0] - 128 * x0[0]) <= 1e-9 * g0[0]
    assert "so g0 \u2212 g1 = (c/1000)\u00b7x0 at every position: 128 in this run" in step["text"]
    assert "c = 128000." in step["text"]
    # the gates read x̂0 = x0/rms, not the stream's x0 = 249999/250 (learner22 7): trace
    # --pos 31 gives x0 249999/250 after L0.attn, and 999.996/710.6 is 1.40719 to 4 digits
    raw = next(r for r in next(s for s in views["residual"] if s["short"] == "L0.attn")[
        "slots"] if r["slot"] == "x0")["cells"][31]
    assert abs(raw[0] - 249999 / 250) < 1e-9 and f"{raw[0] / x0[0]:.4g}" == "710.6"
    assert step["question"] == (f"At position 31, g0 = {shown(g0[2])} and x\u03020 = x0/rms "
                                f"\u2248 999.996/710.6 = 1.40719. Predict g1. (anything within "
                                "0.05 counts as right)")
    assert shown(x0[2]) == "~1.40719"
    assert h["linear_of"] == "x\u03020 (x0 normalised)"
    assert float_views("jacobli99-28")["hidden"]["L0.mlp"].get("linear_of") is None
    assert step["expect"]["values"] == [g1[0]] and step["expect"]["tol"] == 0.05
    assert step["answer"].startswith(f"{shown(g1[2])} = {shown(g0[2])} \u2212 128\u00b7")
    assert not [s for s in zc if "tied" in s["title"]]


def test_learner21_a_claim_of_named_constants_names_literals_it_leaves_out():
    """kswain98-2 claims 2 (its named constants c and g, the rule free) and the ledger counts
    29 (params --rules: '28 other non-zero entries are literals'): the parameters step's
    answer names a few, the first of each tensor whose rule names no constant, as tinyadder
    params --model kswain98-2 prints them (learner21 6); a claim no rule gives
    (jacobli99-28's 28) names none. A rotary model's attention map says where its band
    comes back: every 19 positions, 2N − 1 at N = 10 (learner22 9)."""
    views = float_views("kswain98-2")
    params = tour.steps(views)[-1]
    assert params["title"] == "3. The parameters" and params["expect"]["values"] == [29]
    assert ("Among what the claim leaves out are values the file writes as literals, not "
            "from a named constant: blocks.0.attn.W_Q f32(f64(cos(2*pi/19*(103/10)))); "
            "blocks.0.attn.W_V f32(f64((-22)/sqrt(2)))*1000; blocks.0.mlp.W_out.A -1; and "
            "the embedding's token rows, e.g. 999999/1000 at 1 -> x0.") in params["answer"]
    jl = float_views("jacobli99-28")
    assert "literals" not in tour.steps(jl)[-1]["answer"]
    assert (views["rope_period"], jl["rope_period"]) == (19, None)
    said = explore._period_said(views)
    assert "full circle every 19 positions (19 = 2N \u2212 1 at N = 10)" in said
    assert explore._period_said(jl) == ""


def test_a_word_answer_that_is_no_token_label_says_where_to_look():
    """A step whose answer is a word but not a token's label (a slot, 'offset') says where the
    word is on the page when a guess misses; the page's default hint sends the learner to
    the labels under the tokens (learner21 1, views25)."""
    for name, digits in (("published", None), ("repaired", 3), ("zcbtrak-6", None),
                         ("jacobli99-28", None)):
        views = float_views(name, "123+989", 3) if digits else float_views(name)
        labels = {t["label"].lower() for t in views["tokens"]}
        words = [s for s in tour.steps(views) if s["expect"] and
                 s["expect"].get("kind") == "words"]
        for step in words:
            if not set(step["expect"]["values"]) <= labels:
                assert step["expect"].get("where"), (name, step["title"])


def test_learner15_a_model_that_computes_anothers_function_says_so_first():
    """lokimorty-10's tour repeated zcbtrak-6's steps 1-6 word for word (learner15 9), and
    kswain98-2's all of them (learner18 9): every shipped model that computes zcbtrak-6's
    function opens by naming it, whose tour explains the mechanism, and goes to what differs.
    The claim is checked on the data: each run of the walkthrough's sum agrees with
    zcbtrak-6's to 10^-4 in x0 and x1 and to 10^-7 of their size in the logits, at every stage
    and position, and writes the same answer; the counts the step names are the files'
    claims. yieldthought-20 and wonderfall-27 share the design, not the numbers (x1 apart by
    6 at some position): they keep a tour of their own."""
    zc = float_views("zcbtrak-6")
    assert sorted(tour.SAME_AS) == ["kswain98-2", "kswain98-4", "kswain98-8", "lokimorty-10",
                                    "lokimorty-12"]
    assert set(tour.SAME_AS.values()) == {"zcbtrak-6"}
    for name in list(tour.SAME_AS) + ["yieldthought-20"]:
        views = float_views(name)
        assert views["answer"] == zc["answer"]
        worst = 0
        for a, b in zip(views["residual"], zc["residual"], strict=True):
            assert a["short"] == b["short"]
            theirs = {r["slot"]: r["cells"] for r in b["slots"]}
            for row in a["slots"]:
                size = 1e-7 * 1e5 if row["slot"].startswith("logit") else 1e-4
                worst = max([worst] + [abs(x[0] - y[0]) / size for x, y in
                                       zip(row["cells"], theirs[row["slot"]], strict=True)])
        assert (worst < 1) == (name in tour.SAME_AS), (name, worst)
    loki = float_views("lokimorty-10")
    first = tour.steps(loki)[0]
    assert first["text"].startswith("lokimorty-10 computes what zcbtrak-6 computes")
    assert "x0 and x1 to within 10\u207b\u2074, the logits (about 10\u2075) to within " \
           "10\u207b\u2077 of their size" in first["text"]
    assert "tinyadder explore --model zcbtrak-6" in first["text"]
    # the tour that explains the mechanism is where to start (learner22 8)
    assert ("readout: start there (tinyadder explore --model zcbtrak-6, then open its page "
            "at #tour=1).") in first["text"]
    assert "10 here, 6 for zcbtrak-6" in first["text"]
    assert (loki["about"]["params_claimed"], zc["about"]["params_claimed"]) == (10, 6)
    # it asks what zcbtrak-6's own FFN step asks: the FFN's change to x1 at 31
    change = _slot_value(loki, "L0.mlp", "x1", 31) - _slot_value(loki, "L0.attn", "x1", 31)
    ffn = next(s for s in tour.steps(zc) if s["title"].endswith("The FFN"))
    assert first["expect"]["values"] == [change] and abs(change - ffn["expect"]["values"][0]) < 1e-4
    assert first["expect"]["tol"] == ffn["expect"]["tol"] == 1
    assert first["state"]["stage"] == "L0.attn"  # the grid does not print the answer
    # no other shipped tour repeats one: zcbtrak-6's own opens with the tokens
    assert tour.steps(zc)[0]["title"] == "1. Tokens by role"


def test_learner18_a_same_function_tour_says_what_its_named_constants_fill():
    """kswain98-2's tour says what its two counted constants are (learner18 9): c fills the
    embedding's x0 of token 0 (1000, the parabola's top), g the gate g0's weight on x0, read
    from its file; the step asks which token c sets. kswain98-8's phi is counted but no entry
    uses it by name."""
    assert tour.named_entries("kswain98-2") == {
        "c": ["embed.W_E[0][x0]"], "g": ["blocks.0.mlp.W_gate[x0][g0]"]}
    steps = tour.steps(float_views("kswain98-2"))
    assert [s["title"] for s in steps] == [
        "1. The same function as zcbtrak-6", "2. The constants it names",
        "3. The parameters"]
    named = steps[1]
    assert ("The entries each one fills: c: x0 of one token's embedding, the question below; "
            "g: blocks.0.mlp.W_gate[x0][g0].") in named["text"]
    assert "W_E[0]" not in named["text"] and "c fills embed.W_E[0][x0]" in named["answer"]
    assert named["question"] == ("c = 1000 fills one token's x0 on the embedding. Which "
                                 "token's? (a digit)")
    assert named["expect"] == {"kind": "integers", "values": [0]}
    assert tour.named_entries("kswain98-8")["phi"] == []
    eight = next(s for s in tour.steps(float_views("kswain98-8"))
                 if s["title"].endswith("The constants it names"))
    assert "phi: named and counted, but no entry's text uses it" in eight["text"]


def test_learner13_the_weight_legend_names_the_colours_the_scale_draws():
    """The attention weight scale is viridis, weakest dark purple (#440154) to strongest
    yellow (#fde725); every legend that names its ends says so, never 'palest … darkest'
    (learner13 2): the compare strips' line and the board models' tour step 3."""
    from tinyadder.analysis.pictures import explore, svg
    from explore_cases import float_views
    assert (svg.SEQ[0], svg.SEQ[-1]) == ("#440154", "#fde725")
    assert explore.colour_range((-10, 0)) == ("colour 10\u207b\u00b9\u2070 (dark purple) \u2026 1 "
                                              "(yellow); grey: below 10\u207b\u00b9\u2070, \u2248 0")
    text = " ".join(s["text"] for s in tour.steps(float_views("zcbtrak-6")))
    assert "(dark purple) \u2026 1 (yellow)" in text
    assert "palest) \u2026" not in text and "(darkest)" not in text


def test_learner13_the_tour_introduces_head_4_and_the_candidates_before_using_them():
    """The 36p tour follows the walkthrough (§5 head 4, §6 candidates, §7 running sum): the
    running sum's (1000/(i+2)) and the ruler's candidates come after the steps that
    introduce them (learner13 3); and every step asks for a prediction it checks, the flaw's
    included, on the published and the repaired page (learner13 5)."""
    titles = [s["title"].split(". ", 1)[1] for s in tour.steps(traced(EXAMPLE)[1])]
    assert titles == ["Tokens and positions", "Place values from attention",
                      "The whole head at once", "count, the place values",
                      "Head 4: 1/(i + 2), exactly", "The ten candidates", "The running sum",
                      "The ruler", "The readout", "Why it fails, elsewhere",
                      "Change one thing", "Find your own failing input"]
    # the flaw step asks what the chart shows (learner15 1): where tilt/margin peaks, position
    # 23 (place 10^9, x = 7.8001, 7 against 8), and the tilt there, P/10^6 = 1000 units; the
    # selection stays at step 9's position 24, so the status line does not name the answer
    steps = tour.steps(traced(EXAMPLE)[1])
    flaw = next(s for s in steps if s["view"] == "flaw")
    d = max(traced(EXAMPLE)[1]["decisions"], key=lambda d: d["ratio"] or 0)
    assert (d["pos"], d["power"], d["nearest"], d["rival"]) == (23, 9, 7, 8)
    assert flaw["expect"]["values"][0] == 23 and abs(flaw["expect"]["values"][1] - 1000) < 1e-6
    assert "above 1" not in flaw["question"] and "23" not in flaw["question"]
    assert flaw["state"]["pos"] == steps[8]["state"]["pos"] == 24
    for model in ("published", "repaired"):
        for step in tour.steps(float_views(model, "123+989", 3)):
            assert step.get("expect"), (model, step["title"])


def test_learner15_the_tours_questions_leave_their_answers_to_the_learner():
    """A question whose text or view gives its answer (learner14 1, learner15 2): the ruler
    step gives R + b + ℓ and P (not x) and asks the digit and the margin, 2(R + b + ℓ − 8P)
    = 274204.766 units at position 24, with its view veiled (it prints x and the margin); the
    running sum's view (R + b + ℓ per position) and the parameters' (the ledger's count in
    its intro) are veiled too. The running sum says where its bias comes from (learner15 12:
    500/(3N + 3) truncated to two significant digits, 41 at N = 3, 15 at N = 10); slope ln 2's
    answer gives the span of a's place values, 2^9 = 512 (learner15 4)."""
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(traced(EXAMPLE)[1])}
    ruler = steps["The ruler"]
    total = Fraction("800137102.383")
    assert "800137102.383" in ruler["question"] and "10\u2078" in ruler["question"]
    assert "x =" not in ruler["question"] and "8.0014" not in ruler["question"]
    assert ruler["expect"]["values"][0] == 8
    assert abs(ruler["expect"]["values"][1] - float(2 * (total - 8 * 10 ** 8))) < 0.01
    assert ruler["veil"] and steps["The running sum"]["veil"]
    assert 7650676663 + 149460439 - 7 * 10 ** 9 == int(total)  # R at position 24
    for n, bias in ((3, 41), (10, 15)):
        assert int(str(Fraction(500, 3 * n + 3).__floor__())[:2]) == bias
        views = traced(EXAMPLE)[1] if n == 10 else float_views("published", "123+989", 3)
        said = next(s for s in tour.steps(views) if s["title"].endswith("The running sum"))
        assert f"100\u00b7digit_pos + {bias} (the value bias, 500/(3N + 3) truncated to two " \
               "significant digits: 41 at N = 3, 15 at N = 10; docs/digits.md)" in said["text"]
    assert "weighed from \u00bd down to 2\u207b\u00b9\u2070 = 1/1024, not from 1/10 down to 10\u207b\u00b9\u2070" in \
        steps["Change one thing"]["answer"]
    assert 2 ** 10 == 1024
    # the place chart and head 4's line print query 24's own numbers: the steps ask for the
    # last query's, 32 (<bos> at e^-40·10^-32, scale 1/34); the count chart and the slope ln
    # 2 run's digits are veiled
    place, head4 = steps["Place values from attention"], steps["Head 4: 1/(i + 2), exactly"]
    assert place["state"]["pos"] == head4["state"]["pos"] == 24
    assert abs(place["expect"]["logs"][0] - (-40 / math.log(10) - 32)) < 1e-9
    assert "Query 32 sees <bos> 32 steps back" in place["question"]
    assert head4["expect"]["values"] == [1 / 34] and "position 32" in head4["question"]
    assert steps["count, the place values"]["veil"] and steps["Change one thing"]["veil"]
    params = next(s for s in tour.steps(float_views("jacobli99-28"))
                  if s["title"].endswith("The parameters"))
    assert params["veil"] and "22" not in params["text"] + params["question"]


def test_learner22_the_36p_tours_answers_say_what_was_asked_in_superscripts():
    """learner22 3-6 and learner21 1: the ruler's answer opens with the digit asked, then its
    mark and the margin (2(R + b + ℓ − 8P) = 274204.766: 2.74·10⁵); the flaw step's answer,
    about position 23 while the page stays at 24, says to choose 23 on the chart (the
    question does not name it); every tour text writes powers as superscripts, no caret; the
    running-sum step veils the flaw view, which prints the ruler step's margin at its
    position; the readout's word check says where the slot names are."""
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(traced(EXAMPLE)[1])}
    assert steps["The ruler"]["answer"].startswith(
        "8 (its mark 8.5 is nearest), 2.74\u00b710\u2075 units: x = (R + b + \u2113)/P = "
        "8.0014, so 8 = floor(x)")
    assert 2 * (Fraction("800137102.383") - 8 * 10 ** 8) == Fraction("274204.766")
    flaw = steps["Why it fails, elsewhere"]
    assert flaw["answer"].endswith(" Choose 23 on the chart to see its bars.")
    assert "23" not in flaw["question"] and flaw["state"]["pos"] == 24
    assert "tilt there is P/10\u2076 = " in flaw["answer"]
    assert steps["The running sum"]["veils"] == ["view-flaw"]
    assert steps["The readout"]["expect"]["where"] == (
        "not that slot: the slot names are in the line under the grid (logit u = \u2212slot)")
    for views in (traced(EXAMPLE)[1], float_views("published", "123+989", 3),
                  float_views("zcbtrak-6"), float_views("jacobli99-28")):
        for step in tour.steps(views):
            for k in ("text", "question", "answer"):
                assert "^" not in step.get(k, ""), (step["title"], k)
    assert tour.raised("P/10^6, 2^-(i\u2212j), 10^-9, e^-40, 10^(N\u22121)") == (
        "P/10\u2076, 2\u207b\u207d\u2071\u207b\u02b2\u207e, 10\u207b\u2079, "
        "e\u207b\u2074\u2070, 10\u207d\u1d3a\u207b\u00b9\u207e")


def test_learner14_a_step_that_names_no_position_keeps_the_one_before():
    """jacobli99-28's parameters step moved the selection from step 8's position 24 to 23,
    unexplained (learner14 7): a step that names no position keeps the step before's position
    and stage, in every tour, so the hash of each step holds them."""
    for views in (float_views("jacobli99-28"), float_views("zcbtrak-6"), traced(EXAMPLE)[1],
                  float_views("published", "123+989", 3)):
        steps = tour.steps(views)
        assert all("pos" in s["state"] for s in steps[1:])
    steps = tour.steps(float_views("jacobli99-28"))
    assert steps[-1]["state"]["pos"] == steps[-2]["state"]["pos"] == 24


def test_learner13_the_3_digit_published_tour_says_why_it_does_not_fail():
    """At N = 3 the published model adds every pair right (census: 0 failing pairs), so its
    tour does not ask for a failing 3-digit input: its last step asks for the tilt at the
    highest place whose digit can be 4 to 8, 10²/10⁶ units, and says the census's count; no step offers the 10-digit example as if it
    could be typed there (learner13 1)."""
    steps = tour.steps(float_views("published", "123+989", 3))
    last = steps[-1]
    assert last["title"].endswith("Why it does not fail at N = 3")
    assert last["expect"] == {"kind": "magnitudes", "logs": [-4], "texts": ["10\u207b\u2074"]}
    assert "census --digits 3 counts the pairs it gets wrong: 0 of all 10\u2076" in last["answer"]
    assert "smallest margin on this page is 0.796 units (position 11: choose it on the chart)" \
        in last["answer"]
    # the step does not move the selection to position 11 unexplained (learner14 7's fault)
    assert last["state"]["pos"] == steps[-2]["state"]["pos"]
    assert not [s for s in steps if s["expect"]["kind"] == "failing"]
    flaw = next(s for s in steps if s["title"].endswith("When the tilt would win"))
    assert ("At N = 3 no sum gets that close (the last step says why); at N = 10, 5193798811 "
            "+ 1806201129 at place 10\u2079 (tinyadder explore 5193798811+1806201129, a 10-digit "
            "page).") in flaw["answer"]
    for step in steps:
        said = step["text"] + step["answer"]
        assert "5193798811" not in said or "N = 10" in said, step["title"]


def test_learner20_a_separator_has_one_name_on_the_page():
    """zcbtrak-6's '0' separators had three names: 'sep' on the attention axes, '0' in the
    strips and the token strip, "separator '0', sep on the axes" in the tour (learner20 7):
    the axes draw the strip's label, the tour says "separator '0'"."""
    from tinyadder.analysis.pictures.figures import axis_label
    views = float_views("zcbtrak-6")
    assert axis_label(views["tokens"][30]) == views["tokens"][30]["label"] == "'0'"
    drawn = figures.attention(views, next(iter(views["heads"])))
    assert ">sep</text>" not in drawn and ">'0'</text>" in unescape(drawn)
    first = tour.steps(views)[0]
    assert first["answer"].endswith("so position 30 (separator '0') predicts it.")
    assert "A '0' that is no digit of a or b is a separator." in first["text"]
    assert not any("sep on" in s["text"] + s["answer"] for s in tour.steps(views))
    assert "separator" not in tour.steps(traced(EXAMPLE)[1])[0]["text"]


def test_learner13_cand0s_hover_says_x_apart_from_the_added_term():
    """The published cand0 after layer 1's FFN holds err5 plus what it held before; x = 8.0014
    at position 24 is err5's x, said after the sum, not beside the added term (it read 'x =
    8.0014 + what cand0 held before', learner13 8). The compare table's general form is as
    it was."""
    from tinyadder.analysis.pictures.compare import _general
    form = traced(EXAMPLE)[1]["meanings"]["L1.mlp"]["cand0"][1]
    assert form.replace("{i2}", "26").replace("{x}", "8.0014") == (
        "err5 = (10^9/26)\u00b7|x \u2212 5.5|\u00b7P + what cand0 held before (that added "
        "part is the published readout's tilt), with x = 8.0014")
    assert _general(form) == ("err5 = (10^9/(i + 2))\u00b7|x \u2212 5.5|\u00b7P + what cand0 "
                              "held before (that added part is the published readout's tilt)")


def test_learner13_the_residual_view_carries_a_link_per_stage():
    """The 36p page's residual view has one walkthrough link per stage, the script showing
    the selected stage's: embed §3, L0.attn §4, L0.mlp §6, L1.* §7, the readout §8 where it
    tilts, §7 where it does not (learner13 10); a board model keeps its one link."""
    from tinyadder.analysis.pictures.explore import stage_sections
    section = re.search(r'<section id="view-residual"><h2>(.*?)</h2>', page_text(EXAMPLE),
                        re.S).group(1)
    assert re.findall(r'data-stage-doc="([^"]+)" hidden><span class="doc">([^<]*)<',
                      section) == [("embed", "walkthrough \u00a73"),
                                   ("L0.attn", "walkthrough \u00a74"),
                                   ("L0.mlp", "walkthrough \u00a76"),
                                   ("L1.attn", "walkthrough \u00a77"),
                                   ("L1.mlp", "walkthrough \u00a77"),
                                   ("readout", "walkthrough \u00a78")]
    assert stage_sections(float_views("repaired", "123+989", 3))["readout"] == "layer1"
    assert stage_sections(float_views("zcbtrak-6")) == {}


def test_learner12_board_tour_words_tolerances_and_superscripts():
    """jacobli99-28's tour (learner12 17-20): step 9 says who counts what with no bare
    "seed 000's"; one plain tolerance sentence, 0.05 for every digit-valued slot (the
    embedding's 3 as step 4's 9); the lead step says where the lead is shown; powers of ten
    as the page's superscripts. The logit hover is true next to the vertex (learner12 13)."""
    from explore_cases import float_views
    views = float_views("jacobli99-28")
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(views)}
    params = steps["The parameters"]
    assert "seed 000's" not in params["text"] and "The board reads" not in params["answer"]
    assert "the same for every model (named seed000" in params["text"]
    rules = {s["expect"]["rule"] for s in steps.values()
             if s.get("expect", {}).get("kind") == "numbers" and "tol" in s["expect"]}
    assert rules == {"anything within 0.05 counts as right"}
    assert steps["The embedding"]["expect"]["tol"] == 0.05
    assert "its gap to the winner is the lead" in steps["The readout"]["text"]
    said = " ".join(s["text"] + s["question"] + s["answer"] for s in steps.values())
    assert "10^" not in said and "a3 is the digit of a at 10\u00b3" in said
    hover = views["meanings"]["readout"]["logit 1"][1]
    assert "trails by about 2.5\u00b710\u207b\u2074 (the lead)" in hover
    assert "neighbours" not in hover


# a tour of every kind: TinyAdder-36 at N = 10 and 3, and one model of each designed family
STATED = ["jacobli99-28", "zcbtrak-6", "kswain98-2", "nino-116", "lichengliu03-50",
          "wonderfall-27", "wonderfall-130"]


def test_learner18_every_tour_states_its_tolerance_in_its_question(example):
    """The ruler step's "margin within 0.5 %" showed only after a wrong answer (learner18 6):
    every step whose check allows a tolerance says it in its question, in every tour; a step
    checked exactly (an integer, a word) says none."""
    tours = [tour.steps(example[1]), tour.steps(float_views("published", "765+149", 3))]
    tours += [tour.steps(float_views(name)) for name in STATED]
    said = {"numbers": ("within", "significant digits"), "magnitudes": ("factor of ten",)}
    checked = 0
    for steps in tours:
        for step in steps:
            kind = (step.get("expect") or {}).get("kind")
            if kind in said:
                checked += 1
                assert any(w in step["question"] for w in said[kind]), step["question"]
                if step["expect"].get("rule"):
                    assert step["expect"]["rule"] in step["question"]
            elif kind in ("integers", "words"):
                assert "counts as right" not in step["question"]
    assert checked >= 30
    ruler = next(s for s in tours[0] if s["title"].endswith("The ruler"))
    assert ruler["question"].endswith("(two numbers; the digit exactly, the margin within "
                                      "0.5 %)")
    assert tour._tolerance_said({"question": "Predict cand3.", "expect": {
        "kind": "numbers"}}) == "Predict cand3. (anything within 0.5 % counts as right)"


def test_learner16_a_rope_10000_lead_is_predictable_to_its_two_digits():
    """jacobli99-28's readout step asked the lead to two significant digits with nothing to
    predict the second from (learner16 10): its text gives the parabola's spacing,
    2.5·10⁻⁴·x0/1000 with x0 at the position, which is the run's lead to 10⁻⁶ of it; a
    model whose lead the spacing does not give (zcbtrak-6's) says nothing of it."""
    views = float_views("jacobli99-28")
    step = next(s for s in tour.steps(views) if s["title"].endswith("The readout"))
    q = step["state"]["pos"]
    x0 = _slot_value(views, "readout", "x0", q)
    lead = step["expect"]["values"][1]
    assert abs(lead - 2.5e-4 * x0 / 1000) < 1e-6 * lead
    # the vertex at 1000·x1/x0, on the winner here since x1 = 0 (learner26 2)
    assert ("around its vertex at 1000\u00b7x1/x0. Here x0 = ~989.999 and x1 = 0.0 at position "
            "24, so the vertex is on the winner and a neighbour trails by "
            "2.5\u00b710\u207b\u2074\u00b7x0/1000") in step["text"]
    assert step["question"].endswith("(two numbers; the digit counts exactly, the lead to two "
                                     "significant digits)")
    zc = next(s for s in tour.steps(float_views("zcbtrak-6")) if s["title"].endswith("The readout"))
    assert "parabola" not in zc["text"]


def test_learner18_the_running_sums_b_and_leak_are_said_per_position(example):
    """Step 7 gave b = 0.375 and ℓ = 0.0085 as if constants (learner18 8): they are said at
    this position, and the text points to the view's column where b + ℓ changes; the run's
    b + ℓ does change from one deciding position to the next."""
    step = next(s for s in tour.steps(example[1]) if s["title"].endswith("The running sum"))
    assert "With b = 0.375 and \u2113 = 0.0085 at this position" in step["answer"]
    assert "right-hand column lists R and R + b + \u2113 row by row" in step["answer"]
    assert "b and \u2113 depend on the position" in step["text"]
    offsets = {d["offset_text"] for d in example[1]["decisions"]}
    assert len(offsets) > 1


def test_learner18_slope_ln_2s_first_digit_can_be_computed(example):
    """"With slope ln 2, predict the first digit" gave nothing to compute it from, and sat at
    position 24, where the variant writes 0 (learner18 5): the step sits at the position that
    writes the first digit and gives x₂ = Σⱼ (aⱼ + bⱼ)/2^(N−j) with its first terms, whose
    floor is the digit the patched run writes; the run's x is x₂ plus less than ½."""
    views = example[1]
    step = next(s for s in tour.steps(views) if s["title"].endswith("Change one thing"))
    variant = next(v for v in views["variants"] if v["key"] == "ln2")
    row = variant["rows"][0]
    assert step["state"]["pos"] == row["pos"] == 22
    x2 = tour.x_ln2(views)
    assert x2 == Fraction(7 + 0, 2) + Fraction(6 + 1, 4) + Fraction(5 + 4, 8) + sum(
        Fraction(int(a) + int(b), 2 ** i) for i, (a, b) in
        enumerate(zip("0676663", "9460439"), 4))
    assert math.floor(x2) == int(row["written"]) == int(variant["answer"][0]) == 7
    assert 0 <= row["x"] - float(x2) < 0.5
    assert "here x (slope ln 2) = 7/2 + 0/2 + 6/4 + 1/4 + \u2026." in step["text"]
    assert step["question"] == ("With slope ln 2, predict the first digit the model writes, "
                                "at position 22 (compute x (slope ln 2) and take its floor).")
    assert "Here x (slope ln 2) = 7.568." in step["answer"]


def test_learner18_a_low_digits_tilt_is_said_where_it_comes_from():
    """At N = 3 the largest tilt/margin is a comparison of 4 against 5, tilted by
    5.01·10⁻⁷ units, not P/10^6 (learner18 7): the text says a comparison with a digit from
    0 to 4 reads other slots, the answer names the two. The last step's tilt, printed bare
    by the ruler at every position, waits with its answer (views18's open leak)."""
    views = float_views("published", "765+149", 3)
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(views)}
    flaw = steps["When the tilt would win"]
    d = max(views["decisions"], key=lambda d: d["ratio"] or 0)
    assert (d["pos"], sorted((d["nearest"], d["rival"]))) == (11, [4, 5])
    assert "A comparison with a digit from 0 to 4 reads other slots" in flaw["text"]
    assert (" units (4 against 5, read from scale and cand0: what those slots still hold, not "
            "P/10\u2076), ") in flaw["answer"]
    last = steps["Why it does not fail at N = 3"]
    assert last["veil"] is True and last["veils"] == ["view-ruler"]
    js = (Path(explore.__file__).parent / "explore.js").read_text(encoding="utf-8")
    assert "(step.veils || []).indexOf(s.id) >= 0" in js


def test_learner12_a_board_tour_step_opens_before_the_stage_it_asks_about():
    """jacobli99-28's column and FFN steps opened at the stage whose grid prints the answer;
    they open at the stage before, and the carry step says x0 on the embedding, where it
    opens, with before → after in its answer (learner12 15, 16)."""
    from explore_cases import float_views
    views = float_views("jacobli99-28")
    steps = {s["title"].split(". ", 1)[1]: s for s in tour.steps(views)}
    assert [steps[t]["state"]["stage"] for t in ("The column", "The carry", "The FFN")] == \
        ["embed", "embed", "L0.attn"]
    assert steps["The column"]["text"].endswith(
        "The step opens at embed, the stage before: predict, then move the stage slider to "
        "L0.attn and hover x1.")
    carry = steps["The carry"]
    assert "x0 at position 24 is ~999.999 on the embedding, the stage this step opens at" \
        in carry["text"]
    assert carry["answer"].startswith("\u221210 (x0: ~999.999 on the embedding \u2192 "
                                      "~989.999 after L0.attn): c0 \u2212 10\u00b7c1")


def test_learner15_the_rope19_wrap_is_where_the_walkthrough_puts_it():
    """The wrap's step of about 100 comes as x1 goes from 94 to 95 (walkthrough, zcbtrak-6's
    FFN), not "once x1/10 passes 9.5", where it is already over (learner15 5)."""
    text = tour.FFN["rope-19"][1]
    assert ("gated by 1000\u00b7x1 \u2212 94\u00b7x0 and 1000\u00b7x1 \u2212 95\u00b7x0 (the "
            "table's gates are 128 times these, on x after the norm, x\u0302 = x/rms), takes "
            "close to 100 off x1 between x1/10 = 9.4 and 9.5") in text  # learner25 6
    assert "within 0.25 of" in text and "passes 9.5" not in text
    walk = (ROOT / "docs" / "walkthrough.md").read_text(encoding="utf-8")
    assert "where x1 passes 94 to 95" in " ".join(walk.split())
    assert "of 1000\u00b7x1 \u2212 94\u00b7x0 and of 1000\u00b7x1 \u2212 95\u00b7x0" in walk
    # the FFN step's question leaves out the digit it leads to (learner15 3): s1 = 0 is the
    # answer's x1/10 rounded, for every designed family
    for name in ("zcbtrak-6", "jacobli99-28"):
        ffn = next(s for s in tour.steps(float_views(name)) if s["title"].endswith("The FFN"))
        assert "(a number" in ffn["question"] and "a1 = 6, b1 = 3" in ffn["question"]
        assert "s1 =" not in ffn["question"]


def test_learner14_the_parameters_step_leaves_its_answer_to_the_learner():
    """jacobli99-28's parameters step asks how many the ledger counts: its text does not say
    '22 parameters' (learner14 1); its answer does."""
    views = float_views("jacobli99-28")
    step = next(s for s in tour.steps(views) if s["title"].endswith("The parameters"))
    total = views["param_total"]
    assert total == 22 and f"{total} parameters" not in step["text"]
    assert "behind the parameters the ledger counts" in step["text"]
    assert step["answer"].startswith("22. No rule gives the authors' 28.")  # learner26 12
