"""The explorer in a real browser: Debian's chromium, headless, loads the page from file://
with a URL fragment, runs its script and dumps the DOM; the status line must say the state,
and the page must log no script error. Skipped when chromium is not installed (.ci/run
installs it, so CI always runs these)."""

import html
import json
import math
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from explore_cases import EXAMPLE, FLAW, page_text, traced
from tinyadder.analysis import show

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; "
                             ".ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
DOT = " \u00b7 "


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The example and the flaw page, written once."""
    where = tmp_path_factory.mktemp("pages")
    out = {}
    for name, expr in (("example", EXAMPLE), ("flaw", FLAW)):
        path = where / f"{name}.html"
        path.write_text(page_text(expr), encoding="utf-8")
        out[name] = path
    return out


def dump(urls):
    """{url: (DOM after the scripts ran, console log)}; the browsers run side by side."""
    runs = {}
    for url in urls:
        profile = tempfile.mkdtemp(prefix="tinyadder-chromium-")
        runs[url] = (profile, subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out = {}
    for url, (profile, proc) in runs.items():
        dom, log = proc.communicate(timeout=120)
        shutil.rmtree(profile, ignore_errors=True)
        out[url] = (dom, log)
    return out


def status_of(dom):
    match = re.search(r'<p id="status"[^>]*>(.*?)</p>', dom, re.S)
    return match.group(1).replace("&amp;", "&") if match else None


def assert_ran_cleanly(dom, log):
    assert 'data-ready="yes"' in dom, "the page's script did not finish"
    assert re.search(r'<pre id="errors" hidden="">\s*</pre>', dom), "the page caught an error"
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "rror" in line], console


def margin(expr, pos):
    """The readout's margin at ``pos`` as the tracer prints it (show.logit_lines)."""
    cache = traced(expr)[0]
    line = [t for t in show.logit_lines(cache, pos) if "margin" in t][0]
    return re.search(r"margin (\S+) over", line).group(1)


def test_status_line_follows_the_fragment(pages):
    example, flaw = pages["example"].as_uri(), pages["flaw"].as_uri()
    states = {
        example + "#pos=24&stage=L1.mlp&head=L0.h3":
            DOT.join(["position 24", "after L1.mlp", "predicts 8",
                      f"margin {margin(EXAMPLE, 24)}", "head L0.h3 softmax1"]),
        example + "#pos=32&stage=readout&head=L1.h0&mode=softmax":
            DOT.join(["position 32", "after readout", "predicts 2",
                      f"margin {margin(EXAMPLE, 32)}", "head L1.h0 softmax"]),
        example + "#pos=5&stage=embed":
            DOT.join(["position 5", "after embed", "prompt '6': predicts no digit of the sum",
                      "head L0.h3 softmax1"]),
        example + "#pos=99&stage=L9.attn":
            DOT.join(["position 22", "after embed", "predicts 0",
                      f"margin {margin(EXAMPLE, 22)}", "head L0.h3 softmax1",
                      "ignored: no position 99 (0 to 33); no stage L9.attn (embed, L0.attn, "
                      "L0.mlp, L1.attn, L1.mlp, readout)"]),
        flaw:  # no fragment: the flaw preset
            DOT.join(["position 23", "after readout", "predicts 7, intended 6",
                      f"margin {margin(FLAW, 23)}",
                      "tilt ~4.00000e+10 beats err margin ~4.76920e+9",
                      "head L0.h3 softmax1"]),
    }
    for url, (dom, log) in dump(states).items():
        assert_ran_cleanly(dom, log)
        assert status_of(dom) == states[url], url


def test_views_follow_the_state(pages):
    url = pages["example"].as_uri() + "#pos=30&stage=readout&head=L0.h4&mode=softmax"
    dom, log = dump([url])[url]
    assert_ran_cleanly(dom, log)
    # the ruler and the flaw detail of position 30 are shown, the others hidden
    shown = re.findall(r'<g data-show-pos="(\d+)" display="inline"', dom)
    assert set(shown) == {"30"} and len(shown) == 4  # decay, count marker, ruler, flaw
    # under an ordinary softmax there is no sink: every row's last rect is blank
    cells = re.search(r'<g id="attn-cells">(.*?)</g>', dom, re.S).group(1)
    classes = re.findall(r'class="([^"]+)"', cells)
    assert classes.count("blank") == 34
    assert re.search(r'data-head="L0.h4" aria-pressed="true"', dom)
    assert 'id="stage-label">after readout<' in dom
    # the readout outlines each predicting position's winner
    assert dom.count('class="chg"') == 11


PROBE = """<script>(function () {
  var seen = [], tips = [];
  function key(k) {
    document.dispatchEvent(new KeyboardEvent("keydown", {key: k, bubbles: true}));
    seen.push(document.getElementById("status").textContent.split(" \\u00b7 ")[0] + " " +
              location.hash);
  }
  function hover(el, type) {  // the middle of an element, as a mouse would
    var r = el.getBoundingClientRect();
    el.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: r.left + r.width / 2,
                                           clientY: r.top + r.height / 2}));
    tips.push(document.getElementById("tip").textContent);
  }
  key("ArrowRight"); key("ArrowRight"); key("ArrowLeft");
  hover(document.querySelector("[data-param]"), "mouseover");
  var cells = document.getElementById("attn-cells").children;
  hover(cells[25 * 28 / 2 + 1], "mousemove");   // query 25, key 1 (rows: keys 0..q, sink)
  var resid = document.getElementById("resid-cells").children;
  hover(resid[3 * 34 + 24], "mousemove");                   // count at position 24
  document.body.setAttribute("data-keys", seen.join("|"));
  document.body.setAttribute("data-tips", JSON.stringify(tips));
}());</script>"""


def test_arrow_keys_and_hover(pages, tmp_path):
    """Key presses and hovers, dispatched by a test script added to a copy of the page."""
    text = pages["example"].read_text(encoding="utf-8")
    probe = PROBE
    path = tmp_path / "keys.html"
    path.write_text(text.replace("</body>", probe + "</body>"), encoding="utf-8")
    url = path.as_uri() + "#pos=24&stage=L0.attn"
    dom, log = dump([url])[url]
    assert_ran_cleanly(dom, log)
    keys = re.search(r'data-keys="([^"]*)"', dom).group(1).replace("&amp;", "&")
    assert keys.split("|") == [
        "position 25 #pos=25&stage=L0.attn&head=L0.h3",
        "position 26 #pos=26&stage=L0.attn&head=L0.h3",
        "position 25 #pos=25&stage=L0.attn&head=L0.h3"]
    tips = json.loads(html.unescape(re.search(r"data-tips='([^']*)'|data-tips=\"([^\"]*)\"",
                                              dom).group(2) or "[]"))
    cache = traced(EXAMPLE)[0]
    assert tips[0].splitlines()[:4] == [
        "W_E = 10   (embedding)", "entries: 1 -> digit",
        "reads: no slot (a bias or a token row)", "writes: digit"]
    w = cache["pattern", 0][3][25][1]
    log = math.log10(w.numerator) - math.log10(w.denominator)
    assert tips[1].splitlines() == [
        "L0.h3 query 25 ('8'), key 1 ('7'), softmax1",
        f"weight {show.fmt(w)}   (log10 |x| = {log:.4f})",
        "score -1000 - 24*ln 10"]
    count = cache.view("blocks.0.hook_resid_mid", 24)["count"]
    assert tips[2].splitlines()[:2] == [
        "count at position 24 ('7') after L0.attn", f"{show.fmt(count)}   (log10 |x| = -1.0000)"]


def test_ci_installs_chromium():
    ci = open(os.path.join(os.path.dirname(__file__), "..", ".ci", "run")).read()
    assert "apt-get install -y -qq chromium" in ci
