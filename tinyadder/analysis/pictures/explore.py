"""The explorer: one self-contained HTML page for one traced addition.

``page(views)`` puts together the drawings of ``figures`` (inline SVG), the data of
``views.build_views`` (inline JSON: floats, exact log10 magnitudes, the tracer's text) and the
page's script and style (``explore.js``, ``explore.css``, package data). Nothing is fetched:
no CDN, no web font, no request; the page works from ``file://``. Its state lives in the URL
fragment (``#pos=24&stage=L1.mlp&head=L0.h3``) and the element ``id="status"`` says it in
words.
"""

from html import escape
from importlib import resources
import json

from . import figures

DEFAULT_NAME = "tinyadder-explore.html"
# The page holds every attention weight, so it grows with the square of the sequence:
# about 0.75 MB at N = 10, 3 MB at N = 30, 10 MB at N = 60.
MAX_DIGITS = 100

VIEWS = ("tokens", "attention", "place", "residual", "sum", "ruler", "flaw", "params")


def asset(name):
    """The text of a file shipped in this package (the page's script and style)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def defaults(views):
    """The state a page opens in: the first wrong position at the readout when the model
    errs (5193798811+1806201129 opens at position 23), else the first predicting position."""
    flaw = views["flaw_pos"]
    return {"pos": flaw if flaw is not None else views["predicting"][0],
            "stage": "readout" if flaw is not None else "embed",
            "head": next(iter(views["heads"])), "mode": "softmax1"}


def _flags(values):
    return "".join("1" if v else "0" for v in values)


def page_data(views):
    """What the script needs: the views data, with colour classes and flags made compact."""
    letters = figures.residual_classes(views)
    scales = figures.residual_scales(views)
    slot_rows, logit_rows = figures.residual_rows(views)
    residual = {}
    for stage in views["residual"]:
        rows = {}
        for row in stage["slots"]:
            rows[row["slot"]] = {
                "cls": letters[stage["short"]][row["slot"]],
                "changed": _flags(row["changed"]), "departs": _flags(row["departs"]),
                "cells": row["cells"], "intended": row["intended"],
                "range": figures.range_text(scales[stage["short"]][row["slot"]])}
        residual[stage["short"]] = {"rows": rows}
    heads = {}
    for key, head in views["heads"].items():
        heads[key] = {
            "classes": {m: figures.attention_classes(views, key, m)
                        for m in ("softmax1", "softmax")},
            "range": {m: list(figures.attention_scale(views, key, m))
                      for m in ("softmax1", "softmax")},
            "cells": {m: head[m] for m in ("softmax1", "softmax")},
            "score": head["score"]}
    return {
        "tokens": views["tokens"], "predicting": views["predicting"],
        "stages": views["stages"], "heads": heads, "residual": residual,
        "resid_rows": slot_rows + logit_rows, "decisions": views["decisions"],
        "params": views["params"], "count": views["count"], "defaults": defaults(views),
    }


def _json_for_script(data):
    """JSON that cannot end its <script> element early."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _tokens_html(views):
    buttons = []
    for tok in views["tokens"]:
        title = f"position {tok['pos']}"
        if tok["place"] is not None:
            title += f", holds a digit of place 10^{tok['place']}"
        if tok["predicts"] is not None:
            title += f", predicts the digit of place 10^{tok['next_place']}"
        buttons.append(f'<button type="button" class="tok {tok["role"]}" data-pos="{tok["pos"]}"'
                       f' aria-pressed="false" title="{escape(title)}">'
                       f'<span>{escape(tok["text"])}</span><small>{tok["pos"]}</small></button>')
    return f'<div id="tokens">{"".join(buttons)}</div>'


def _controls(views, state):
    stages = views["stages"]
    heads = "".join(f'<button type="button" data-head="{h}" aria-pressed="false">{h}</button>'
                    for h in views["heads"])
    index = [s["short"] for s in stages].index(state["stage"])
    ticks = " \u2192 ".join(escape(s["short"]) for s in stages)
    return (
        '<nav id="controls">'
        '<div class="group"><button type="button" id="prev" title="previous position (\u2190)">'
        '\u25c0</button><span id="pos-label">position</span>'
        '<button type="button" id="next" title="next position (\u2192)">\u25b6</button></div>'
        f'<div class="group"><label for="stage">stage</label><input type="range" id="stage" '
        f'min="0" max="{len(stages) - 1}" step="1" value="{index}">'
        f'<span id="stage-label"></span><br><small>{ticks}</small></div>'
        f'<div class="group">head {heads}</div>'
        '<div class="group"><label><input type="checkbox" id="mode"> ordinary softmax of the '
        'same scores</label></div>'
        '<p id="status" role="status" aria-live="polite">the script has not run</p>'
        '</nav>')


def _section(ident, title, intro, body):
    return (f'<section id="view-{ident}"><h2>{escape(title)}</h2>'
            f'<p class="intro">{intro}</p>{body}</section>')


def page(views):
    """The whole HTML page as a string."""
    state = defaults(views)
    pos, stage = state["pos"], state["stage"]
    n = views["digits"]
    expr = f'{int(views["a"]):0{n}d} + {int(views["b"]):0{n}d}'
    verdict = ("right" if views["correct"] else
               f'wrong: a + b = {views["sum"]}')
    hidden = escape(views["hidden_why"])
    # the constants as this model has them (they depend on N): from the trace and the ledger
    scores = views["heads"]["L0.h3"]["score"] if "L0.h3" in views["heads"] else None
    keys = (f"keys on special tokens score {escape(scores[0][0])}, on digits "
            f"{escape(scores[1][1])}") if scores and len(scores) > 1 else "keys differ"
    value = {p["tensor"]: p["value"] for p in views["params"]}
    v1 = (f'{escape(value.get("blocks.1.attn.W_V", "?"))}\u00b7digit_pos + '
          f'{escape(value.get("blocks.1.attn.b_V", "?"))}')
    flaw_note = ""
    if views["flaw_pos"] is not None:
        flaw_note = (f'<p class="alert">The model writes {escape(views["answer"])}, but '
                     f'{expr} = {views["sum"]}. The page opens at position '
                     f'{views["flaw_pos"]}, where the readout first picks a wrong digit. '
                     f'{escape(views["verdict"])}. <b>Why it fails</b> below shows the '
                     f'published readout\'s tilt; a rounding error shows as crosses in the '
                     f'residual stream.</p>')
    sections = [
        _section("tokens", "Tokens",
                 "The prompt is &lt;bos&gt;, the digits of a, +, the digits of b, =; the model "
                 "then writes the sum, most significant digit first. Colours: "
                 "<span class='k a'>a</span> <span class='k b'>b</span> "
                 "<span class='k special'>special</span> <span class='k sum'>generated</span>. "
                 "Click a position to select it everywhere (or use \u2190 / \u2192).",
                 _tokens_html(views) + '<p id="token-info"></p>'),
        _section("attention", "Attention",
                 "Each row is a query position, each column a key it may look at (later keys "
                 "are masked). Colour is log10 of the weight: a weight of 10<sup>-458</sup> "
                 "still has a colour. softmax1 divides by 1 + the sum of exp(score), so a "
                 "row may give most of its weight to nothing: that is the sink column. "
                 "Tick the box to see an ordinary softmax of the same scores: the decay by "
                 f"ten per position disappears. Not shown: {hidden}. Hover a cell for its "
                 "exact value as the tracer prints it; click to select the query.",
                 figures.attention(views, state["head"], state["mode"], pos)),
        _section("place", "Place values",
                 "Layer 0 head 3 has ALiBi slope ln 10, so each step back costs a factor of "
                 f"ten; {keys} (q\u00b7k at distance 0). Top: the weights of "
                 "the selected query (one band per cluster of magnitudes, far apart). "
                 "Bottom: the slot <code>count</code> that head writes, "
                 "the place value of each digit: 10<sup>-1</sup> \u2026 10<sup>-N</sup> for "
                 "a, again for b after +, negative from = on (the sum's digits are "
                 "subtracted).",
                 figures.place_values(views, pos)),
        _section("residual", "Residual stream",
                 "Every slot (row) at every position (column) after the selected stage; "
                 "move the stage slider. Each row has its own colour scale (log of |x|, "
                 "purple negative, orange positive), or count's 10<sup>-10</sup> would "
                 "vanish next to the candidates' 10<sup>12</sup>. Outlined: changed by this "
                 "stage. Crossed: departs from the value the design intends (the probes "
                 "of <code>--check</code>). Hover for values.",
                 figures.residual(views, stage, pos)),
        _section("sum", "Running sum",
                 f"Layer 1 averages {v1} over the positions: the sum of "
                 f"digit_pos is {views['digit_scale']}\u00b7(a + b) on the prompt, and each "
                 "emitted digit "
                 "subtracts itself. R is what is left to write.",
                 figures.running_sum(views, pos)),
        _section("ruler", "Ruler",
                 "At a position that predicts a digit, the ten candidates are marks at "
                 "u + \u00bd units of the place being decided; the dot is the remaining value. "
                 "Each candidate's error is its distance from the dot; the smallest wins, "
                 "so the winner is the largest u the value reaches (a floor).",
                 '<p class="needs-decision" hidden>This position predicts no digit of the '
                 'sum: choose one from = on.</p>' + figures.ruler(views, pos)),
        _section("flaw", "Why it fails",
                 "The published readout adds each digit's error into one of the first ten "
                 "slots, which still hold eq, special, digit, count, scale and cand0..cand4: "
                 "these values tilt the comparison. Both are shown as differences against "
                 "the digit with the smallest error (a tilt of 10<sup>10</sup> is invisible "
                 "next to logits of 10<sup>16</sup>). Where the tilt bar is longer "
                 "than the margin, the wrong digit wins.",
                 '<p class="needs-decision" hidden>This position predicts no digit of the '
                 'sum.</p>' + figures.flaw(views, pos)),
        _section("params", "Parameters",
                 "The 36 parameters, counted by the ledger (<code>tinyadder params</code>) "
                 "from the weights, placed on the slots they write. Hover one for its tensor "
                 "entry and the slots it reads and writes.",
                 figures.parameters(views)),
    ]
    title = f"tinyadder explorer: {expr}"
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{escape(title)}</title>",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<style>{figures.CSS}\n{asset('explore.css')}</style></head>\n<body>",
        f"<header><h1>TinyAdder-36 adds {escape(expr)}</h1>",
        f"<p>{escape(views['model'])}, numbers: {escape(views['number'])}. "
        f"It writes <b class=\"mono\">{escape(views['text'])}</b>: {verdict}."
        f"{'' if flaw_note else ' ' + escape(views['verdict']) + '.'}</p>{flaw_note}",
        "<p>How it adds: layer 0's attention gives every position its place value "
        "(<code>count</code>) and 1/(i+2) (<code>scale</code>); layer 0's FFN multiplies each "
        "digit by its place value (<code>digit_pos</code>) and lays out ten candidate marks "
        "(<code>cand0</code>..<code>cand9</code>); layer 1's attention averages "
        "<code>digit_pos</code> into a running sum of what is left to write; layer 1's FFN "
        "measures each candidate's distance from it, and the readout picks the nearest. Move "
        "through the stages with the slider and through the positions with \u2190 / \u2192; "
        "every number is the exact run's, as <code>tinyadder --trace</code> prints it.</p>"
        "</header>",
        _controls(views, state),
        "<main>", *sections, "</main>",
        '<pre id="errors" hidden></pre><div id="tip" hidden></div>',
        f'<script type="application/json" id="data">{_json_for_script(page_data(views))}'
        "</script>",
        f"<script>{asset('explore.js')}</script>",
        "</body></html>\n",
    ])
