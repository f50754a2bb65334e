"""The explorer page, read with the standard library: every view is there, nothing leaves the
page, and the numbers it embeds are the trace's (floats to 1e-12 relative, log10 magnitudes
from the exact values, the tracer's text)."""

from fractions import Fraction
from html.parser import HTMLParser
import io
import json
import math
import re

import pytest

from explore_cases import EXAMPLE, FLAW, page_text, traced
from tinyadder.analysis import show
from tinyadder.analysis.pictures import explore, figures
from tinyadder.analysis.ledger import ledger
from tinyadder.cache import stages
from tinyadder.cli import main
from tinyadder.cli import explore as explore_cli
from tinyadder.cli.tracing import colour_wanted
from tinyadder.generate import argmax

VIEW_IDS = [f"view-{v}" for v in explore.VIEWS]
SVG_IDS = ["attn-svg", "place-svg", "resid-svg", "sum-svg", "ruler-svg", "flaw-svg",
           "params-svg"]


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
        assert d["winner"] == str(best) == cache.model.vocab[cache.tokens[d["pos"] + 1]]
        assert d["margin"][2] == show.fmt(logits[best] - logits[runner])
    # the running sum falls as digits are emitted: 7800137102, 800137102, ...
    assert [d["remaining_text"].split(".")[0] for d in views["decisions"]][:4] == \
        ["7800137102", "7800137102", "800137102", "137102"]
    # the ruler's dot at position 24: 8.00137102 units of 10^8, plus the rounding bias
    assert 8.0013710 < views["decisions"][2]["x"] < 8.0013711


def test_the_flaw_preset():
    _, views = traced(FLAW)
    assert explore.defaults(views) == {"pos": 23, "stage": "readout", "head": "L0.h3",
                                      "mode": "softmax1"}
    d = next(d for d in views["decisions"] if d["pos"] == 23)
    assert (d["winner"], d["intended"], d["choice"], d["threat"]) == ("7", "6", "6", "7")
    # the differences the view plots: err7 - err6 against the tilt cand1 - cand2
    assert d["err_gap"][2] == "~4.76920e+9" and d["tilt_gap"][2] == "~4.00000e+10"
    assert d["tilt_gap"][0] > d["err_gap"][0]
    page = Page(page_text(FLAW))
    rows = json.loads(page.data)["residual"]["readout"]["rows"]
    assert rows["logit 7"]["departs"][23] == "1" and rows["logit 7"]["changed"][23] == "1"


def test_parameters_come_from_the_ledger(example):
    cache, views, _, _ = example
    params = views["params"]
    assert len(params) == sum(line.params for line in ledger(cache.model)) == 36
    values = {(line.tensor.name, str(v)) for line in ledger(cache.model)
              for v in line.tensor.entries.values()}
    assert all((p["tensor"], p["value"]) in values for p in params)
    k = next(p for p in params if p["tensor"] == "blocks.0.attn.W_K")
    assert (k["value"], k["entries"], k["reads"], k["writes"]) == \
        ("960", ["special -> h3"], ["special"], ["count"])
    p9 = [p for p in params if p["tensor"] == "blocks.0.mlp.W_in"][9]
    assert (p9["value"], p9["reads"], p9["writes"]) == ("9500000000000", ["count"], ["cand9"])


@pytest.mark.parametrize("digits, expr, number", [
    (3, "999+1", "fraction"), (30, "9" * 30 + "+" + "8" * 30, "decimal"),
    (10, EXAMPLE, "float"),
    pytest.param(30, "9" * 30 + "+" + "8" * 30, "fraction", marks=pytest.mark.slow)])
def test_other_lengths(tmp_path, digits, expr, number):
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
    assert data["decisions"][0]["remaining_text"].split(".")[0] == str(a + b)


def test_a_wrong_sum_still_writes_its_page(tmp_path, monkeypatch):
    monkeypatch.setattr(explore_cli, "views_of", lambda *args: traced(FLAW)[1])
    out, err, path = io.StringIO(), io.StringIO(), tmp_path / "flaw.html"
    assert explore_cli.main([FLAW, "-o", str(path)], out, err, None) == 1
    assert err.getvalue() == ("tinyadder: warning: the published model's sum 7000000000 is "
                              "wrong: 5193798811 + 1806201129 = 6999999940\n")
    assert path.read_text(encoding="utf-8") == page_text(FLAW)


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
    assert "      0-24 %          %      ....@.. sink @\n" in pipe.getvalue()
    assert "\x1b[" not in pipe.getvalue() and "\x1b[38;5;226m@\x1b[0m" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Terminal()
    assert main(argv, tty) == 0 and "\x1b[" not in tty.getvalue()


def test_the_repaired_readout_has_no_tilt():
    _, views = traced("999+1", "repaired", 3)
    assert views["correct"] and not any(d["tilted"] for d in views["decisions"])
    assert "reads only the FFN&#x27;s own error slots" in figures.flaw(views)
    assert [s["short"] for s in views["stages"]][-1] == "readout"
    rows = [r["slot"] for r in views["residual"][-2]["slots"]]
    assert rows[-10:] == [f"err{u}" for u in range(10)]
