"""The explorer: one self-contained HTML page for one traced addition.

``page(views)`` puts together the drawings of ``figures`` (inline SVG), the data of
``views.build_views`` (inline JSON: floats, exact log10 magnitudes, the tracer's text), the
guided tour of ``tour`` and the page's script and style (``explore.js``, ``explore.css``,
package data). Nothing is fetched: no CDN, no web font, no request; the page works from
``file://``. Its state lives in the URL fragment (``#tour=3&pos=24&stage=L1.mlp&head=L0.h3``)
and the element ``id="status"`` says it in words. Given ``docs`` (``walkthrough()``: the
walkthrough's sections, read from the checkout), the page carries the sections it cites and
each view links the one that explains it; no link leaves the page.
"""

from html import escape
from importlib import resources
import json
import re

from ..text import figure as text_figure
from . import compare, figures, markdown, svg, tour
from .views import FAMILY
from .figures import defaults

DEFAULT_NAME = "tinyadder-explore.html"
# The page holds every attention weight, so it grows with the square of the sequence:
# about 0.75 MB at N = 10, 3 MB at N = 30, 10 MB at N = 60.
MAX_DIGITS = 100

VIEWS = ("tokens", "place", "attention", "count", "residual", "sum", "ruler", "flaw",
         "change", "params")


def asset(name):
    """The text of a file shipped in this package (the page's script and style)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def walkthrough():
    """The walkthrough's sections the page cites and docs/models.md's worked examples,
    rendered for the page to embed (``markdown.sections``, ``markdown.examples``), or None
    outside a checkout."""
    docs = markdown.sections({anchor for _, anchor in tour.SECTIONS.values()})
    return None if docs is None else {**docs, **(markdown.examples() or {})}


def section_of(section):
    """(label, anchor) of a section key: a walkthrough section's ('walkthrough §4'), or
    docs/models.md's worked example of a design ('ex:rope-10000': 'models.md: rope-10000')."""
    if section.startswith("ex:"):
        name = tour.EXAMPLES[section[3:]]
        return f"models.md: {name}", markdown.slug(name)
    number, anchor = tour.SECTIONS[section]
    return (f"walkthrough \u00a7{number}" if number.isdigit() else
            f"walkthrough: {number.replace('-', ' ')}"), anchor


def compare_data(views, other):
    """What the page's compare mode needs of a second run ``other`` of the same sum: its
    positions' roles (the page matches a position that predicts a digit of the sum with the
    one predicting the same digit, ``deciding``, any other by what it holds,
    ``compare.by_label``), every live
    head's weights (class letters on the head's own clipped log scale, and the tracer's text),
    its residual stream by stage and slot name (the tracer's text and the value; the readout's
    logits among them), and the agreement table of ``compare.agreement``."""
    heads = {key: {"layer": h["layer"], "kind": h["kind"],
                   "classes": figures.attention_classes(other, key, "softmax1"),
                   "cells": [[c[2] for c in row] for row in h["softmax1"]],
                   "range": colour_range(h["scale"])}
             for key, h in other["heads"].items()}
    residual = {s["short"]: {row["slot"]: [c[2] for c in row["cells"]] for row in s["slots"]}
                for s in other["residual"]}
    values = {s["short"]: {row["slot"]: [c[0] for c in row["cells"]] for row in s["slots"]}
              for s in other["residual"]}  # for compare.alike: a difference at the slot's scale
    decimals = {s["short"]: {row["slot"]: _decimals(row["cells"]) for row in s["slots"]}
                for s in other["residual"]}
    return {"model": other["model"], "layout": other["layout"], "answer": other["answer"],
            "correct": other["correct"],
            "cases": column_cases(other) if other.get("design") else {},
            "tokens": [{k: t[k] for k in ("pos", "text", "role", "label", "predicts")}
                       for t in other["tokens"]],
            "stages": [s["short"] for s in other["stages"]], "heads": heads,
            "residual": residual, "values": values, "dec": decimals,
            "labels": compare.counterparts(views, other),
            "own_labels": compare.by_label(views),
            # each position as the comparison's sentences name it ("'=' (8, the separator
            # before the answer)", compare.called)
            "names": [compare.called(other, p) for p in range(len(other["tokens"]))],
            "own_names": [compare.called(views, p) for p in range(len(views["tokens"]))],
            "decides": compare.deciding(other), "own_decides": compare.deciding(views),
            "agreement": compare.agreement(views, other),
            # what each slot means (the hovers), with the per-position placeholders filled
            "meanings": other["meanings"], "next_place": [t["next_place"]
                                                          for t in other["tokens"]],
            "fills": {d["pos"]: [svg.pretty(f"1e{d['power']}"), svg.shown(d["x_text"])]
                      for d in other["decisions"]},
            "homonyms": compare.homonyms(views, other),
            # a stage that writes the named-alike slots in one design only: what each writes
            "writes": compare.writes_lines(views, other),
            # how layer 1's lanes hold the key-quantity table's R + b + ℓ, per deciding position
            "average": {d["pos"]: compare.average_line(other, d["pos"])
                        for d in other["decisions"]},
            "own_average": {d["pos"]: compare.average_line(views, d["pos"])
                            for d in views["decisions"]},
            # the readout: each model's winner and lead, and whether the logits compare
            "winners": compare.winners(other), "own_winners": compare.winners(views),
            "scales_differ": compare.scales_differ(views, other),
            "readout_slots": other.get("readout_slots") or [],
            # each logit less the winner's, beside the logit at the readout
            "gaps": {r["slot"]: [c[2] for c in r["gap"]]
                     for r in other["residual"][-1]["slots"] if "gap" in r},
            "own_readout_slots": views.get("readout_slots") or [], "own_model": views["model"],
            "own_answer": views["answer"]}


def colour_range(scale):
    """A head's colour range, the line under its compare strip: its clipped log10 scale
    (lo, hi) on the viridis weight scale, dark purple (weakest) to yellow (strongest):
    'colour 10⁻⁵ (dark purple) … 1 (yellow); grey: below 10⁻⁵, ≈ 0'.

    >>> colour_range((-5, 0))
    'colour 10⁻⁵ (dark purple) … 1 (yellow); grey: below 10⁻⁵, ≈ 0'
    """
    lo, hi = (svg.pretty(f"1e{round(e)}") if round(e) else "1" for e in scale)
    return f"colour {lo} (dark purple) … {hi} (yellow); grey: below {lo}, ≈ 0"


def _decimals(cells):
    """{position: its fraction's decimal}, where the page prints one ('999.964' for
    249991/250, ``figures.value_text``): the cells whose text is a fraction."""
    return {p: figures.value_text(c) for p, c in enumerate(cells)
            if "/" in c[2] and not c[2].startswith("~")}


def _flags(values):
    return "".join("1" if v else "0" for v in values)


def page_data(views, other=None):
    """What the script needs: the views data, with colour classes and flags made compact;
    with ``other``, a second run of the same sum for the compare mode (``compare_data``)."""
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
                "range": ("vs winner" if "gap" in row else
                          figures.row_legend(row["cells"], scales[stage["short"]][row["slot"]],
                                             figures.embedded(views, stage, row["slot"]))),
                "dec": _decimals(row["cells"])}
            if "gap" in row:
                rows[row["slot"]]["gap"] = [c[2] for c in row["gap"]]
        residual[stage["short"]] = {"rows": rows}
    heads = {}
    for key, head in views["heads"].items():
        heads[key] = {"classes": {m: figures.attention_classes(views, key, m)
                                  for m in figures.MODES},
                      "cells": {m: head[m] for m in figures.MODES}, "score": head["score"],
                      "kind": head["kind"], "range": colour_range(head["scale"])}
    decisions = [{k: d[k] for k in ("pos", "R", "written", "right", "nearest", "chosen", "rival",
                                    "flipped", "power", "x_text", "lead", "lead_logits",
                                    "margin", "tilt", "ratio_text")}
                 for d in views["decisions"]]
    return {
        "tokens": views["tokens"], "predicting": views["predicting"],
        "stages": views["stages"], "heads": heads, "residual": residual,
        "resid_rows": slot_rows + logit_rows, "decisions": decisions,
        "params": views["params"], "meanings": views["meanings"],
        "cases": column_cases(views) if views.get("design") else {},
        "embedded": EMBEDDED.get(views.get("design"), {}),
        "defaults": defaults(views), "tour": tour.steps(views),
        "variants": [v["key"] for v in views["variants"]],
        "variant_writes": {v["key"]: {r["pos"]: r["written"] for r in v["rows"]}
                           for v in views["variants"]},
        "softmax": views["softmax"] is not None, "levels": svg.LEVEL_LETTERS,
        "compare": compare_data(views, other) if other else None,
        "hidden": {stage: {**h, **{k: h[k] and [[c[2] for c in row] for row in h[k]]
                                   for k in ("pre", "linear", "post")}}
                   for stage, h in (views.get("hidden") or {}).items()},
    }


# What a designed family embeds a digit d as, per slot, for the hover of a cell that still
# holds it ({d}: the digit; the formulas of ``families``' meanings; tests/test_explore.py
# checks them against each design's embedding)
EMBEDDED = {"rope-19": {"x0": "1000 \u2212 {d}\u00b2/1000", "x1": "\u2212{d}"},
            "rope-10000": {"x0": "1000 \u2212 2.5\u00b710\u207b\u2074\u00b7{d}\u00b2",
                           "x1": "{d}"},
            "sinusoid-11": {"digit": "{d}"},
            **{f"rope-10000/{carry}": {"x0": "1000 \u2212 {d}\u00b2/4000", "x1": "{d}",
                                       "x2": "{d}/2000"} for carry in ("norm", "linear", "hinge")}}


def column_cases(views):
    """{position: [k, [[symbol, its value here], ...]]}: at the position that predicts s_k,
    the digits and carries the formulas name, s_k last (k = 1: [['a_k', 'a1 = 6'], ...,
    ['s_(k−1)', 's0 = 2'], ['s_k', 's1 = 0']]; c_k the carry into place k). A hover lists
    those its formula names and s_k, which it labels the digit predicted where the formula
    does not name it (``caseLine`` in explore.js)."""
    a, b = int(views["a"]), int(views["b"])

    def digit(n, k):
        return n // 10 ** k % 10

    def carry(k):
        return int(k > 0 and a % 10 ** k + b % 10 ** k >= 10 ** k)
    out = {}
    for t in views["tokens"]:
        k = t["next_place"]
        if t["pos"] in views["predicting"] and k is not None:
            here = [("a_k", f"a{k} = {digit(a, k)}"), ("b_k", f"b{k} = {digit(b, k)}"),
                    ("c_k", f"c{k} = {carry(k)}"), ("c_(k+1)", f"c{k + 1} = {carry(k + 1)}")]
            if k:
                j = k - 1
                here += [("a_(k\u22121)", f"a{j} = {digit(a, j)}"),
                         ("b_(k\u22121)", f"b{j} = {digit(b, j)}"),
                         ("c_(k\u22121)", f"c{j} = {carry(j)}"),
                         ("s_(k\u22121)", f"s{j} = {digit(a + b, j)}")]
            out[t["pos"]] = [k, [list(d) for d in here + [("s_k", f"s{k} = {digit(a + b, k)}")]]]
    return out


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
        place = (figures.power(tok["place"]) if tok["place"] is not None else "\u00a0")
        buttons.append(f'<button type="button" class="tok {tok["role"]}" data-pos="{tok["pos"]}"'
                       f' aria-pressed="false" title="{escape(tok["label"] + ", " + title)}">'
                       f'<span>{escape(tok["text"])}</span><small>{tok["pos"]}</small>'
                       f'<small class="role">{escape(tok["label"])}</small>'
                       f'<small class="place">{place}</small></button>')
    return f'<div id="tokens">{"".join(buttons)}</div>'


def strip_css():
    """The strips of weights (every head from a query; the compare view's) are HTML, not SVG:
    the weight colours as backgrounds."""
    return "\n".join([f".strip .s{i}{{background:{c}}}" for i, c in enumerate(svg.SEQ)] +
                     [f".strip .sz{{background:{svg.NEARLY_ZERO}}}"])


def place_example(views):
    """The place k of the texts' example 'a_k is the digit of a at 10^k': 3, or the top place
    of a shorter operand (a2 at N = 3, a0 for a 1-digit adder)."""
    return min(3, (views["digits"] or 4) - 1)


def _compare_section(views, other):
    """The compare mode's view: both runs' prompts and sums, then (drawn by the page's script
    for the selected position and stage) each live head's weights from that query in both
    models, the residual lanes by slot name side by side (the logits at the readout stage),
    and the agreement over all positions."""
    def side(v):
        _, expr, verdict = question(v)
        return (f'<div><b>{escape(v["model"])}</b>: prompt <code>{escape(v["layout"])}</code>; '
                f'{escape(expr)}: it writes '
                f'<b class="mono">{escape(v["answer"])}</b>, {verdict}.</div>')
    found = compare.table_rows(views, other)
    none_common, apart = compare.no_common_slot(found), compare.apart_line(found)
    if apart:  # every slot named alike is another quantity: one sentence for them all
        found = [r for r in found if r["slot"] == "winner"]
    found = compare.folded(found)  # the rows that differ stand out of the runs that agree
    rows = "".join(
        f'<tr><td>{escape(r["stage"])}</td><td><code>{escape(r["slot"])}</code></td>' +
        (f'<td>{compare.APART}</td><td>' if r.get("apart") else
         f'<td>{"its gap to the winner: " if r.get("gap") else ""}'
         f'{r["same"]} of {r["compared"]}</td><td>') +
        ("" if r["first"] is None or r.get("apart") else
         f'{escape(r["first"][0])}: {escape(svg.shown(r["first"][1]))} against '
         f'{escape(svg.shown(r["first"][2]))}') +
        "</td></tr>" for r in found)
    table = (f'<p id="cmp-agreement">{escape(compare.NO_COMMON_SLOT)}</p>'
             if none_common else
             f'<details id="cmp-agreement"><summary>Over all positions: the slots both name '
             f'alike, stage by stage</summary>{f"<p>{escape(apart)}</p>" if apart else ""}'
             f'<table class="cmp"><thead><tr><th>stage</th>'
             f'<th>slot</th><th>same (6 significant digits; dust as 0; the winner: the digit '
             f'the readout picks)</th><th>first that differs</th>'
             f'</tr></thead><tbody>{rows}</tbody></table></details>' if rows else
             '<p>The two models name no slot alike at any stage.</p>')
    # the slots named alike but meant apart are said in the lanes note (the script's), once
    said = "".join(f'<p class="cmp-said">{escape(t)}</p>' for t in (
        compare.scale_line(views, other),) if t)
    flawed = compare.flaw_line(views, other)
    flawed = f'<p id="flaw-said">{escape(flawed)}</p>' if flawed else ""
    first = ("" if none_common or apart or not found else
             "Slots both models name alike come first. ")
    k = place_example(views)
    return (
        f'<section id="view-compare"><h2>Compare: {escape(views["model"])} against '
        f'{escape(other["model"])}</h2><p class="intro">The same sum in a second design. '
        'Positions are matched by what they do, not by index: one that predicts a digit of '
        'the sum with the one that predicts the same digit (s0 is the units digit; one model '
        'may write it first, the other last), any other with the one that holds the same '
        f'(a{k} is the digit of a at {svg.power(k)}); '
        f'{compare.layouts_line(views, other, k)}. {first}'
        'Choose a position and a stage above as for the rest of the page; untick '
        '<i>compare</i> to hide this view.</p>'
        f'<div class="pair">{side(views)}{side(other)}</div>'
        f'{flawed}<p id="cmp-where"></p>'
        f'{said}{compare.homonym_table(views, other)}{compare.key_table(views, other)}'
        '<h3>Attention from this query, every live head (each head on its own clipped log '
        'scale; grey ≈ 0)</h3><div class="pair"><div id="cmp-attn-a"></div>'
        '<div id="cmp-attn-b"></div></div>'
        '<h3 id="cmp-lanes-title">Residual lanes by slot name</h3>'
        f'<p id="cmp-legend">{escape(compare.MARKS)}</p><p id="cmp-note"></p>'
        '<table id="cmp-lanes" class="cmp"><thead><tr id="cmp-lanes-head"><th>slot</th>'
        f'<th>{escape(views["model"])}</th><th>{escape(other["model"])}</th><th></th></tr>'
        f'</thead><tbody id="cmp-lanes-body"></tbody></table>'
        # no slot in common: each model's lanes in a table of its own (the script fills them)
        '<div id="cmp-lanes-apart" class="pair" hidden><div><table id="cmp-lanes-a" '
        'class="cmp"></table></div><div><table id="cmp-lanes-b" class="cmp"></table></div>'
        f'</div>{table}</section>')


def _controls(views, state, other=None):
    stages = views["stages"]
    heads = "".join(f'<button type="button" data-head="{h}" aria-pressed="false">{h}</button>'
                    for h in views["heads"])
    index = [s["short"] for s in stages].index(state["stage"])
    ticks = " \u2192 ".join(escape(s["short"]) for s in stages)
    start = ('<div class="group"><button type="button" id="tour-start">take the tour'
             '</button></div>' if tour.steps(views) else "")
    return (
        '<nav id="controls">' + start +
        '<div class="group"><button type="button" id="prev" title="previous position (\u2190)">'
        '\u25c0</button><span id="pos-label">position</span>'
        '<button type="button" id="next" title="next position (\u2192)">\u25b6</button></div>'
        f'<div class="group"><label for="stage">stage</label><input type="range" id="stage" '
        f'min="0" max="{len(stages) - 1}" step="1" value="{index}">'
        f'<span id="stage-label"></span><br><small>{ticks}</small></div>'
        f'<div class="group">head {heads}</div>'
        # the box turns softmax1 heads into ordinary ones: hidden where there are none
        '<div class="group" id="mode-group"' +
        ('' if any(h["kind"] == "softmax1" for h in views["heads"].values()) else ' hidden') +
        '><label><input type="checkbox" id="mode"> ordinary softmax of the same scores'
        '</label></div>' +
        ('' if other is None else
         f'<div class="group"><label><input type="checkbox" id="compare"> compare with '
         f'{escape(other["model"])}</label></div>') +
        '<p id="status" role="status" aria-live="polite">the script has not run</p>'
        '</nav>')


def doc_link(docs, section):
    """A link to a walkthrough section embedded in the page ('walkthrough §4'), or its name
    when there is no walkthrough to embed; nothing for no section (None)."""
    if section is None:
        return ""
    label, anchor = section_of(section)
    if not docs or anchor not in docs:
        return f'<span class="doc">{label}</span>'
    return f'<a class="doc" href="#wt-{escape(anchor)}">{label}</a>'


def cited(views):
    """The walkthrough sections this page cites: its views', its tour steps', the residual
    view's per stage and, on a TinyAdder-36 family page, the whole picture (section 0)."""
    keys = set(tour.view_sections(views).values()) | {
        s["section"] for s in tour.steps(views) if s["section"]}
    keys |= set(stage_sections(views).values())
    return keys | ({"whole"} if views["family"] else set())


def stage_sections(views):
    """{stage: section} of the residual view's link on a TinyAdder-36 family page
    (``tour.STAGE_SECTIONS``; a readout with no tilt is section 7's); {} elsewhere."""
    if not views["family"]:
        return {}
    tilted = any(d["tilted"] for d in views["decisions"])
    return {**tour.STAGE_SECTIONS, "readout": "flaw" if tilted else "layer1"}


def _stage_links(views, docs):
    """The residual view's walkthrough links, one per stage; the page's script shows the
    selected stage's (``data-stage-doc``)."""
    return "".join(f'<span data-stage-doc="{stage}" hidden>{doc_link(docs, section)}</span>'
                   for stage, section in stage_sections(views).items())


# walkthrough section 10's biases, TinyAdder-36's at N = 10
WALKTHROUGH_BIASES = "bias 0, 30 or 45 instead of 15"


def own_biases(views, text):
    """A walkthrough section's text with its N = 10 biases (``WALKTHROUGH_BIASES``) said as
    this page's buttons say them where its N is not 10: 'bias 0, 82 or 123 instead of 41 (at
    N = 3; the walkthrough's N = 10 has 0, 30 or 45 instead of 15)'."""
    labels = {v["key"]: v["label"].removeprefix("bias ") for v in views["variants"]}
    built = re.search(r", not ([^:]+):", next(
        (v["what"] for v in views["variants"] if v["key"] == "bias0"), "")) if \
        views["digits"] != 10 else None
    if built is None:
        return text
    own = (f"bias {labels['bias0']}, {labels['bias2']} or {labels['bias3']} instead of "
           f"{built.group(1)} (at N = {views['digits']}; the walkthrough's N = 10 has "
           f"{WALKTHROUGH_BIASES.removeprefix('bias ')})")
    return text.replace(WALKTHROUGH_BIASES, own)


def _embedded(docs, views):
    """The walkthrough's cited sections, at the end of the page, in its own order."""
    if not docs:
        return ""
    keys = cited(views)
    order = [anchor for key, (number, anchor) in sorted(
        tour.SECTIONS.items(), key=lambda s: int(s[1][0]) if s[1][0].isdigit() else 99)
        if key in keys] + sorted(section_of(k)[1] for k in keys if k.startswith("ex:"))
    parts = "".join(f'<article id="wt-{escape(a)}"><h3>{escape(docs[a][0])}</h3>'
                    f'{own_biases(views, docs[a][1])}</article>' for a in order if a in docs)
    if not parts:
        return ""
    models = any(k.startswith("ex:") for k in keys)
    where = "docs/models.md" if models else "the walkthrough"
    return (f'<section id="walkthrough"><h2>From {where}</h2><p class="intro">The '
            f'sections of {where} that the views above cite, carried in this page (its '
            f'doctests and commands are checked by the test suite).</p>{parts}</section>')


def claim_line(views):
    """The Parameters view's first sentence where the count the model claims is not the
    ledger's (``views.param_claim``): the claim, the rule it is read under and its count
    there, the ledger's rule, and the command that prints every rule's count; '' where they
    agree."""
    c = views.get("param_claim")
    if not c:
        return ""
    read = (f"read under the rule <i>{c['rule']}</i> (tinyadder counts {c['under_rule']} "
            f"under it)" if c["under_rule"] == c["claimed"] else
            f"a count no rule gives for this file (AdderBoard reads it under <i>{c['rule']}"
            f"</i>, where tinyadder counts {c['under_rule']})")
    return (f"Its name claims {c['claimed']} parameters, {read}; the ledger below counts "
            f"{c['ledger']} under seed 000's rule, one rule for every model "
            f"(<code>tinyadder params --model {escape(views['model'])} --rules</code> gives "
            f"each rule's count; docs/params.md says why they differ). ")


def instead(why, layer):
    """Change one thing's opening for a model outside the family, what applies first: the
    family's ablations do not apply (``why``, ``views.missing``'s sentence, says what the
    model lacks); the FFN of ``layer`` switched off does.

    >>> instead("Not for this model: this view reads what the TinyAdder-36 family has and m "
    ...         "lacks: the slot count.", 0).split("; instead, ")
    ["The TinyAdder-36 family's ablations (its slope, biases and readout) do not apply here: they read what m lacks (the slot count)", "this model's layer 0 FFN switched off: the run of the same sum with its output zeros, beside the run as built."]
    """
    model, _, gaps = why.partition(" has and ")[2].partition(" lacks: ")
    return (f"The {FAMILY}'s ablations (its slope, biases and readout) do not apply here: "
            f"they read what {model} lacks ({gaps.rstrip('.')}); instead, this model's layer "
            f"{layer} FFN switched off: the run of the same sum with its output zeros, beside "
            f"the run as built.")


def _section(views, ident, title, intro, body, docs):
    link = (_stage_links(views, docs) if ident == "residual" and stage_sections(views) else
            doc_link(docs, tour.view_sections(views).get(ident)))
    why = views["missing"].get(ident)
    if why and ident == "change" and views["ffn_off"]:
        intro = escape(instead(why, views["ffn_off"]["layer"]))
    elif why:
        intro, body = escape(why), ""
    return (f'<section id="view-{ident}"><h2>{escape(title)} {link}</h2>'
            f'<p class="intro">{intro}</p>{body}</section>')


# the residual view's values, printed two ways (svg.shown: '~−6.0' would read as one mark)
ROUNDED = " (~ and \u2248 both: rounded for display; \u2248 before a minus)."
# a value printed in a grid cell, small and turned upright: '≈ ' whatever its sign (explore.js
# cellValue), as a '~' there reads as a minus; hovers and lists keep the tracer's marks
GRID_ROUNDED = (". A rounded value printed in a cell reads \u2248 60.0075 or \u2248 \u22124.58762, "
                "\u2248 whatever its sign; the hovers and the slot list write it as the tracer "
                "does, ~60.0075 and \u2248 \u22124.58762 (~ and \u2248 both: rounded for "
                "display).")


# the family's own views, as the one line for a model outside the family names them
FOLDED_NAMES = {"place": "place values", "count": "count", "sum": "running sum",
                "ruler": "ruler", "flaw": "why it fails", "change": "change one thing"}


def _folded(views, sections):
    """The sections of a model outside the TinyAdder-36 family, those that do not apply to it
    hidden in place (the page's script and links still find them, each saying 'Not for this
    model' in a line) and said in one short line after the first such, what the model lacks
    folded under it: 'The TinyAdder-36 family's own views (...) read what this model lacks;
    they are not drawn.'"""
    folded = [(v, t) for v, t, _ in sections if _only_says_why(views, v)]
    if not folded:
        return [s for _, _, s in sections]
    gaps = list(dict.fromkeys(g for v, _ in folded for g in
                              views["missing"][v].split(" lacks: ", 1)[1].rstrip(".")
                              .split("; ")))
    names = ", ".join(FOLDED_NAMES.get(v, t) for v, t in folded)
    said = f"The {FAMILY}'s own views ({names}) read what this model lacks; they are not drawn."
    line = (f'<section id="view-not-shown"><p class="intro">{escape(said)}</p>'
            f'<details><summary>what {escape(views["model"])} lacks</summary><p>'
            f'{escape("; ".join(gaps))}.</p></details></section>')
    out = []
    for v, _, text in sections:
        if _only_says_why(views, v):
            text = text.replace(f'<section id="view-{v}">', f'<section id="view-{v}" hidden>', 1)
            text = re.sub(r'<p class="intro">.*?</p>', '<p class="intro">Not for this model '
                          '(what it lacks: the line above).</p>', text, count=1, flags=re.S)
            if line:
                text, line = line + text, ""
        out.append(text)
    return out


def _only_says_why(views, view):
    """Whether a view's section only says it does not apply (``_section``): missing, and not
    the FFN-off run that stands in for "change one thing"."""
    return bool(views["missing"].get(view)) and not (view == "change" and views["ffn_off"])


def _tour_card(views, docs):
    """The tour's card: the page's script fills it for the step and moves it above the step's
    view; every step's walkthrough link is here for it to show."""
    steps = tour.steps(views)
    if not steps:
        return ""
    items = "".join(f'<li><button type="button" data-step="{k}">{escape(s["title"])}'
                    f'</button></li>' for k, s in enumerate(steps, 1))
    links = "".join(f'<span data-step-doc="{k}" hidden>{doc_link(docs, s["section"])}</span>'
                    for k, s in enumerate(steps, 1))
    return (
        '<aside id="tour" hidden><div class="tour-head"><b id="tour-title"></b> '
        f'{links}<button type="button" id="tour-end">leave the tour</button></div>'
        '<p id="tour-text"></p><p class="question"><b>Predict:</b> <span id="tour-question">'
        '</span></p><p class="guess"><label>your answer <input type="text" id="tour-guess" '
        'size="28" autocomplete="off"></label> <button type="button" id="tour-check">check'
        '</button> <span id="tour-verdict" role="status"></span></p>'
        '<p><button type="button" id="tour-reveal">show the answer</button></p>'
        '<p id="tour-answer" hidden></p>'
        '<div class="tour-nav"><button type="button" id="tour-prev">\u2190 back</button> '
        '<button type="button" id="tour-next">next \u2192</button> '
        '<small>(\u2190 / \u2192 keys)</small></div>'
        f'<ol id="tour-steps">{items}</ol></aside>')


DIFFERS = (
    "Heads have dimension 1: each query, key and value is one number.",
    "Head h of layer 0 writes slot h (its output map is a copy); layer 1's one head writes "
    "every slot (a broadcast).",
    "Heads 0, 1 and 2 of layer 0 do nothing: no value map, so their output is zero.",
    "No LayerNorm, no 1/\u221ad on the scores, no positional embedding: positions enter only "
    "through ALiBi.",
    "softmax1 has a '+1' in its denominator: a row's weights may sum to almost nothing.",
    "The stream widens: 5 slots into layer 0, 16 after its FFN, each hidden unit writing a "
    "new slot of its own.",
)

CITATIONS = (
    "ALiBi: O. Press, N. A. Smith, M. Lewis, \u201cTrain Short, Test Long: Attention with "
    "Linear Biases Enables Input Length Extrapolation\u201d, 2021 (arXiv:2108.12409).",
    "softmax1: E. Miller, \u201cAttention Is Off By One\u201d, 2023 (evanmiller.org).",
    "ReGLU: N. Shazeer, \u201cGLU Variants Improve Transformer\u201d, 2020 (arXiv:2002.05202).",
    "QK and OV circuits, V-composition: N. Elhage et al., \u201cA Mathematical Framework for "
    "Transformer Circuits\u201d, 2021 (transformer-circuits.pub).",
    "Trace-point names (blocks.0.hook_resid_mid, ...): TransformerLens, N. Nanda et al. "
    "(github.com/TransformerLensOrg/TransformerLens).",
)


def _differs(views):
    """The box for a reader who knows transformers, and the circuits vocabulary."""
    items = "".join(f"<li>{escape(s)}</li>" for s in DIFFERS)
    cites = "".join(f"<li>{escape(s)}</li>" for s in CITATIONS)
    circuits = ""
    if views["place_head"]:
        score = views["heads"][views["place_head"]]["score"]
        circuits = (
            f"<p>In the vocabulary of Elhage et al.: head {views['place_head']}'s <b>QK "
            f"circuit</b> (query 1, key {escape(score[0][0])} on special tokens and "
            f"{escape(score[1][1])} on digits, minus {escape(views['place_slope'])} per step "
            f"back) gives each special token the weight e^{escape(score[0][0])}\u00b7"
            f"10^-(i\u2212j); its <b>OV circuit</b> (value 0.1/S on special tokens, \u22121/S "
            f"in all on =, with S = e^{escape(score[0][0])}/10) turns that weight into the "
            f"place value 10^-(i\u2212j) in count. L1.h0 "
            f"<b>V-composes</b> with it through the layer-0 FFN: its value reads digit_pos, "
            f"which that FFN makes from count.</p>")
    return ('<details id="differs"><summary>How this differs from the transformer you know'
            f'</summary><ul>{items}</ul>{circuits}<p>Sources:</p><ul class="cites">{cites}'
            '</ul></details>')


def _change_body(views):
    buttons = "".join(f'<button type="button" data-variant="{v["key"]}" aria-pressed="false">'
                      f'{escape(v["label"])}</button>' for v in views["variants"])
    number = views["variants"][0]["number"] if views["variants"] else ""
    return (f'<p class="variants">{buttons}</p><p class="note">Each is a real run of the '
            f'changed model ({escape(number)}).</p>' + figures.change(views))


def _intros(views, state):
    """Each view's introduction, with this run's own numbers."""
    head = views["place_head"]
    lo = views["heads"][head]["scale"][0] if head else None
    digits = [c[1] for row in views["heads"][head]["softmax1"] for c in row
              if c[1] is not None and c[1] < lo] if head else []
    smallest = (f"the smallest, 10<sup>{round(min(digits))}</sup>," if digits else "weights")
    value = {p["tensor"]: p["value"] for p in views["params"]}
    v1 = (f'{escape(value.get("blocks.1.attn.W_V", "?"))}\u00b7digit_pos + '
          f'{escape(value.get("blocks.1.attn.b_V", "?"))}')
    soft = views["softmax"]
    k = place_example(views)
    layout = (f"This model's prompt is <code>{escape(views['layout'])}</code> (a{k} is the "
              f"digit of a at 10<sup>{k}</sup>, s0 the sum's units digit)")
    if views.get("task"):
        tokens = (f"This model's prompt is <code>{escape(views['layout'])}</code> (input is "
                  f"the token it computes from, out0 its answer's first token); the model "
                  f"writes its answer one token per position. Colours: <span class='k input'>"
                  f"input</span> <span class='k special'>special</span> <span class='k sum'>"
                  f"generated</span>; under each token its position and its role. Click a "
                  f"position to select it everywhere (or use \u2190 / \u2192).")
    else:
        tokens = (layout + "; the model writes the sum's digits one per position. Colours: "
                  "<span class='k a'>a</span> <span class='k b'>b</span> "
                  "<span class='k special'>special</span> <span class='k sum'>generated</span>; "
                  "under each token its position and the place value its digit holds. Click "
                  "a position to select it everywhere (or use \u2190 / \u2192).")
    return {
        "tokens": tokens,
        "place": f"Layer 0's head {head} has ALiBi slope {escape(views['place_slope'] or '')}: "
                 "each step back costs a factor of ten. Its weights from the selected query, "
                 "on the head's log scale; keys below the scale are \u2248 0.",
        "attention": "Each row is a query position, each column a key it may look at (later "
                     "keys are masked). Colour is the weight on a log scale clipped to the "
                     "range that carries the mechanism, one colour step per decade on head 3; "
                     f"weights below it, {smallest} are one grey \u201c\u2248 0\u201d. softmax1 "
                     "divides by 1 + the sum of exp(score), so a row may give most of its "
                     "weight to nothing: the sink column. Tick the box for an ordinary "
                     "softmax of the same scores, on the same colour scale. " +
                     (f"Not shown: {escape(views['hidden_why'])}. " if views["hidden_why"]
                      else "") + "Hover a cell for its exact value; click to select the query.",
        "count": "The slot head 3 writes, per position: 10<sup>-1</sup> \u2026 "
                 f"10<sup>-{views['digits']}</sup> on a's digits, again after +, negative from "
                 "= on (the sum's digits are subtracted). With the box ticked: the model run "
                 "with an ordinary softmax in every head" +
                 (f", which writes {escape(soft['answer'])}." if soft else "."),
        "residual": "Every slot (row) at every position (column) after the selected stage; "
                    "move the stage slider. Each row has its own colour scale (log of |x|, "
                    "purple negative, orange positive), or count's small values would vanish "
                    "next to the candidates' large ones; a row whose |x| spans under a "
                    "factor 2 (scale) is one shade, or, where a stage moved it off its "
                    "embedded value, coloured by that change, its range "
                    "beside it. Outlined: changed by "
                    "this stage. "
                    "Crossed: departs from the value the design intends (the probes of "
                    "<code>--check</code>). Hover a cell for its value and what it holds" +
                    ROUNDED,
        "sum": f"Layer 1 averages {v1} over the positions: the sum of digit_pos is "
               f"{views['digit_scale']}\u00b7(a + b) on the prompt, and each emitted digit "
               "subtracts itself. R is what remains to be written, in units of the sum; "
               "layer 1's average holds (1000/(i+2))\u00b7(R + b + \u2113).",
        "ruler": "At a position that predicts a digit, the ten candidates are marks at u + "
                 "\u00bd units of the place P being decided; the dot is x = (R + b + \u2113)/P. "
                 "Each candidate's error is its distance from the dot; the nearest mark wins, "
                 "so the winner is the largest u that x reaches (a floor), unless the "
                 "published readout's tilt overrides it.",
        "flaw": "The published readout adds each digit's error into one of the first ten "
                "slots, which still hold eq, special, digit, count, scale and cand0..cand4: "
                "their differences tilt the comparison. Per position, the tilt divided by the "
                "margin, on a log axis clipped at 10<sup>-6</sup> (below it, \u226a 1): "
                "above the line at 1 the wrong digit wins. Under it, the selected position's "
                "attribution as bars on one linear scale.",
        "change": "The same addition, with one thing changed: the ALiBi slope, layer 1's "
                  "rounding bias, or the readout. Grey dots: x as built; coloured: the "
                  "variant's (vermillion where its digit is wrong).",
        "params": claim_line(views) +
                  f"The {views['param_total']} parameters, counted by the ledger "
                  "(<code>tinyadder params</code>) from the weights" +
                  ("" if len(views["params"]) == views["param_total"] else
                   f" (drawn: {len(views['params'])} chips, a chip per distinct value of "
                   f"each tensor it counts, per token row in the embedding, so a value two "
                   f"tensors or token rows share has a chip in each; each stage's head gives "
                   f"the chips drawn and the ledger's count; <code>params --rules</code>'s "
                   f"<i>distinct</i> "
                   f"counts each value once, model-wide)") + ", each spanning the slots it "
                  "writes; a query or key parameter writes no slot and sits in the scores "
                  "row. Hover one for its tensor entry and the slots it reads and "
                  "writes.",
    }


NO_DECISION = ('<p class="needs-decision" hidden>This position predicts no digit of the sum: '
               'choose one from = on.</p>')


def question(views):
    """(verb, question, verdict) for the header: ('adds', '0012 + 0034', 'right'), or for a
    finite task ('computes', 'B', 'wrong: the task says 06')."""
    if views.get("task"):
        return ("computes", views["task"]["input"],
                "right" if views["correct"] else f'wrong: the task says {views["sum"]}')
    n = views["digits"]
    return ("adds", f'{int(views["a"]):0{n}d} + {int(views["b"]):0{n}d}',
            "right" if views["correct"] else f'wrong: a + b = {views["sum"]}')


def page(views, docs=None, other=None):
    """The whole HTML page as a string; ``docs``: the walkthrough's sections to embed and link
    (``walkthrough()``), or None; ``other``: a second model's views of the same sum, for the
    compare mode (on when the page opens; ``#compare=0`` turns it off)."""
    state = defaults(views)
    pos, stage = state["pos"], state["stage"]
    verb, expr, verdict = question(views)
    flaw_note = ""
    if views["flaw_pos"] is not None:
        flaw_note = (f'<p class="alert">The model writes {escape(views["answer"])}, but '
                     f'{expr} = {views["sum"]}. The page opens at position '
                     f'{views["flaw_pos"]}, where the readout first picks a wrong digit. '
                     f'{escape(views["verdict"])}. <b>Why it fails</b> below shows the '
                     f'published readout\'s tilt; a rounding error shows as crosses in the '
                     f'residual stream.</p>')
    intro = _intros(views, state)
    mode = state["mode"]
    bodies = {
        "tokens": _tokens_html(views) + '<p id="token-info"></p>',
        "place": figures.place(views, pos),
        "attention": ('<p id="attn-top" class="note"></p>' +
                      figures.attention(views, state["head"], mode, pos) +
                      _period_said(views)),
        "count": figures.count(views, pos),
        "residual": figures.residual(views, stage, pos) + '<div id="resid-column"></div>' + (
            # a small FFN's hidden units at the selected position (the script fills it)
            '<div id="hidden-units"></div>' if views.get("hidden") else ""),
        "sum": figures.running_sum(views, pos),
        "ruler": NO_DECISION + figures.ruler(views, pos),
        "flaw": NO_DECISION + figures.flaw(views, pos),
        "change": (_change_body(views) if views["variants"] else
                   figures.change(views) if views["ffn_off"] else ""),
        "params": figures.parameters(views),
    }
    titles = {"tokens": "Tokens", "place": "Place values", "attention": "Attention",
              "count": "count, the place values", "residual": "Residual stream",
              "sum": "Running sum", "ruler": "Ruler", "flaw": "Why it fails",
              "change": "Change one thing", "params": "Parameters"}
    if views["decisions"] and not any(d["tilted"] for d in views["decisions"]):
        titles["flaw"] = "Why it does not fail"
        intro["flaw"] = ("This readout reads only layer 1's FFN's own error slots: nothing tilts "
                         "the comparison, and the digit is floor(x). Per position, this run's "
                         "offset b + \u2113 in the interval (0, 1] it must stay in for every R "
                         "to give the right digit; <code>tinyadder prove</code> checks it over "
                         "every pair.")
    if not views["family"]:
        intro["attention"] = (
            "Each row is a query position, each column a key it may look at (later keys and "
            "keys the model's mask hides are blank or \u201c\u2248 0\u201d). Colour is the "
            "weight on a log scale clipped to the band of weights that carries the mechanism "
            "(its legend says where); weights below it are one grey \u201c\u2248 0\u201d. "
            "A softmax1 head has a sink column, the weight given to nothing. Choose a head "
            "above; hover a cell for its exact value; click to select the query.")
    if not views["family"]:
        intro["residual"] = (
            "Every slot (row) at every position (column) after the selected stage; move the "
            "stage slider. Each row has its own colour scale (log of |x|, purple negative, "
            "orange positive, down to 10<sup>-12</sup> of the row's largest), so a small "
            "slot still shows beside a large one; a row whose |x| spans under a factor 2 is "
            "one shade, or, where a stage moved it off its embedded value, coloured by that "
            "change (x0's carry), its range "
            "beside it. A stream of at most three slots prints "
            "each value in its cell. Outlined: changed by this stage. At the readout stage "
            "the logits follow, each coloured by its gap to the winner (outlined). Hover a "
            "cell for its value" + GRID_ROUNDED)
    sections = [_section(views, v, titles[v], intro[v], bodies[v], docs) for v in VIEWS]
    if not views["family"]:  # a model outside the family: its "not for this model" in one line
        sections = _folded(views, [(v, titles[v], s) for v, s in zip(VIEWS, sections)])
    if other is not None:
        sections.insert(1, _compare_section(views, other))
    title = f"tinyadder explorer: {expr}"
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{escape(title)}</title>",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<style>{svg.CSS}\n{asset('explore.css')}{strip_css()}"
        "</style></head>\n<body>",
        f"<header><h1>{escape(views['title'])} {verb} {escape(expr)}</h1>",
        "<p>" + (f"It writes <b class=\"mono\">{escape(views['text'])}</b>: {verdict}."
                 if views["family"] else
                 f"It writes {'the answer' if views.get('task') else 'the sum'} "
                 f"<b class=\"mono\">{escape(views['answer'])}</b>: {verdict} "
                 f"(the whole sequence: <code>{escape(views['text'])}</code>).") +
        f"</p>{flaw_note}",
        # the arithmetic and the probes' check, for whoever asks: folded
        f"<details id=\"numbers\"><summary>numbers and checks</summary><p>"
        f"{escape(views['model'])}, numbers: {escape(views['number'])}."
        f"{'' if flaw_note or not views['verdict'] else ' ' + escape(views['verdict']) + '.'}"
        "</p></details>", _how(views, docs), "</header>",
        _controls(views, state, other),
        _tour_card(views, docs),
        "<main>", *sections, _embedded(docs, views), "</main>",
        '<pre id="errors" hidden></pre><div id="tip" hidden></div>',
        '<script type="application/json" id="data">',
        f'{_json_for_script(page_data(views, other))}</script>',
        f"<script>{asset('explore.js')}</script>",
        "</body></html>\n",
    ])


def _period_said(views):
    """Under a rotary model's attention map, where its band comes back: the head turns full
    circle every ``rope_period`` positions, so a key that much further back than the one a
    query means is turned by the same angle (rope-19: 19 = 2N − 1 at N = 10)."""
    p, n = views.get("rope_period"), views.get("digits")
    if not p:
        return ""
    why = f" ({p} = 2N \u2212 1 at N = {n})" if n and p == 2 * n - 1 else ""
    return (f'<p class="note" id="attn-period">The band that reappears at the left in the '
            f'lower rows is the rotary period: the head turns by 2\u03c0/{p} per position, '
            f'full circle every {p} positions{why}, so a key {p} positions further back than '
            f'the one a query means is turned by the same angle. The prompt\u2019s rows '
            f'predict nothing.</p>')


FAMILY_HOW = {
    "rope-19": "one layer, two slots x0 and x1, rotary positions of period 19. The position "
               "that predicts s_k attends to a_k and b_k and a tenth as much to a_(k\u22121) "
               "and b_(k\u22121), the column below, whose size says whether a carry comes in: "
               "x1 becomes ten times the column sum with its carry-in. The FFN takes 100 away "
               "when that reaches 10 (the wrap), and the readout is a parabola in the digit "
               "with its vertex at x1/10.",
    "rope-10000": "one layer; rotary positions with base 10000 at head dimension 2 turn each "
                  "query back by a fixed offset, so each head attends, almost one-hot, to one "
                  "key: a_(i\u22121), b_(i\u22121), a_i or b_i for the answer digit i (and a "
                  "head turned by no offset, as jacobli99's h0, to the position's own token, "
                  "the digit written last). The "
                  "FFN makes the carry and the wrap from the digits below; the readout is a "
                  "parabola in the digit.",
    "sinusoid-11": "one layer of width 4 with added sinusoidal positions of period 11; each "
                   "head's query is the key's position turned by a fixed angle, so it attends "
                   "to the same digit of both operands, an intended two-way tie. ReLU hinge "
                   "pairs compute the carry and the wrap; the readout is a parabola in the "
                   "digit.",
    "fixed-bias": "attention without learned queries: a fixed bias table picks the keys; one "
                  "head gathers a_k + b_k, another an ALiBi-weighted prefix sum whose floor is "
                  "the carry.",
    "trained": "its weights are a trained checkpoint's, not a construction: no slot has a "
               "designed meaning, so the page shows what each head looks at and which digit "
               "the readout picks, not why.",
}


# the board files' title words, glossed from their sources (Kiguli/AdderBoard
# submissions/hand_coded/Lokimorty_10p.py at e5167440; zcbtrak-6.json's notes)
TITLE_TERMS = {
    "Qwen-derived": "built from mlx_lm's Qwen3 parts: RMSNorm, RoPE, a SwiGLU FFN, the "
                    "embedding reused as the readout",
    "free Q": "the query projection keeps its own two weights (cos \u03c6, \u2212sin \u03c6), "
              "counted as parameters",
    "Q hard-coded": "the query's angle \u03c6 is a constant of the code, not a counted "
                    "parameter",
    "tied gate": "the FFN's two gate units share two weights a, c: g0 = a\u00b7x0 + c\u00b7x1, "
                 "g1 = (a \u2212 c/1000)\u00b7x0 + c\u00b7x1",
    "shared carry": "one number w stands for the FFN's up and down projections: x1 += "
                    "w\u00b7(silu(g1) \u2212 silu(g0))\u00b7x0",
    "parametric embedding": "the embedding table is two numbers c0, c1: digit d embeds as "
                            "(c0 \u2212 c1\u00b7d\u00b2, \u2212d)",
    "final norm folded into the head": "the final RMSNorm's weights (50\u221a2, "
                                       "\u221210\u221a2) are multiplied into the output "
                                       "head's, the readout's (unembedding's), weights",
}


# the leaderboard's architecture shorthand ("1L Qwen3, d=3, 4h/1kv, hd=2, ff=4 (MQA)")
SHORTHAND = {
    r"\b\d+L\b": "the number of layers (blocks)",
    r"\bd=\d+": "the residual stream's width, its slots",
    r"\b\d+h\b": "the number of attention heads",
    r"\b\d+kv\b": "the number of key/value heads the query heads share",
    r"\bqk=\d+": "the width of each head's queries and keys",
    r"\bhd=\d+": "each head's width",
    r"\bff=\d+": "the FFN's hidden units",
    r"\bMQA\b": "multi-query attention: every query head reads one shared key/value head",
}


def title_terms(title):
    """[(term, gloss)] for each TITLE_TERMS word and each SHORTHAND the title uses, in the
    title's order."""
    found = [(title.find(term), term, TITLE_TERMS[term]) for term in TITLE_TERMS
             if term in title]
    found += [(m.start(), m.group(), gloss) for pattern, gloss in SHORTHAND.items()
              for m in re.finditer(pattern, title)]
    return [(term, gloss) for _, term, gloss in sorted(found)]


def lead_line(views):
    """How far each digit's winner is ahead, read from the run's readout (``compare.winners``):
    the smallest and largest lead over the runner-up at the positions that predict a digit,
    beside the logits' size, and their ratio; "by a hair" when the smallest is under 10^-3 of
    the logits (jacobli99-28: ~0.000212 to ~0.00025 on logits near 1000); '' without a
    readout that predicts a digit."""
    leads = sorted((compare.number(lead), p, lead)
                   for p, (won, lead) in compare.winners(views).items() if len(won) == 1)
    size = compare.logit_size(views)
    if not leads or not size or not leads[0][0]:
        return ""
    (least, at, text), (_, top_at, top) = leads[0], leads[-1]
    ratio = svg.pretty(f"{size / least:.0e}".replace("e+0", "e").replace("e+", "e"))
    hair = "Its readout decides by a hair: " if least < 1e-3 * size else "Its readout: "
    return (f"{hair}at each of the {len(leads)} positions that predict a digit of the sum the "
            f"winning logit leads the runner-up by {svg.shown(text)} (position {at}) to "
            f"{svg.shown(top)} (position {top_at}), on logits near "
            f"{svg.pretty(text_figure(size, 3))}: one part in about {ratio} (the readout "
            "stage colours each logit by its gap to the winner).")


def _how(views, docs):
    """How the model adds, in one paragraph, and the box for a reader who knows
    transformers (the TinyAdder-36 family); for another model, what the page can show."""
    if not views["family"]:
        about, family = views["about"], views["about"].get("family")
        who = escape(about["title"]) + (f" (by {escape(about['author'])})"
                                        if about.get("author") else "")
        how = (f" What it computes: {escape(about.get('notes') or '')} Its task gives "
               f"{escape(views['task']['input'])} the answer {escape(views['sum'])}."
               if views.get("task") else
               f" How it adds, as docs/models.md describes its family, {escape(family)}: "
               f"{escape(FAMILY_HOW[family])}" if family in FAMILY_HOW else "")
        link = doc_link(docs, "rope") if family == "rope-19" else ""
        terms = "; ".join(f"<i>{escape(t)}</i>: {escape(g)}" for t, g in
                          title_terms(about["title"]))
        return (f"<p>{who}.{how}{' (' + link + ')' if link else ''}</p>"
                + (f'<p class="terms">The title\'s terms: {terms}.</p>' if terms else "")
                + f"<p>Its prompt: <code>{escape(views['layout'])}</code>. It is not of the "
                "TinyAdder-36 family: the views that read that family's slots (place values, "
                "running sum, ruler, why it fails, change one thing) say so in place. The "
                "tokens with their roles, every head's attention, the residual stream by slot "
                "name stage by stage, the logits (the readout stage) and the parameters are "
                f"this model's own. <b>Take the tour</b> for {len(tour.steps(views))} steps "
                "through them, or move through the stages with the slider and through the "
                "positions with \u2190 / "
                "\u2192; every number is the run's, as <code>tinyadder --trace</code> prints "
                "it.</p>" + (f'<p id="lead-said">{escape(lead_line(views))}</p>'
                             if lead_line(views) and not views.get("task") else ""))
    return "".join([
        "<p>How it adds: layer 0's attention gives every position its place value "
        "(<code>count</code>) and 1/(i+2) (<code>scale</code>); layer 0's FFN multiplies each "
        "digit by its place value (<code>digit_pos</code>) and lays out ten candidate marks "
        "(<code>cand0</code>..<code>cand9</code>); layer 1's attention averages "
        "<code>digit_pos</code> into a running sum of what is left to write; layer 1's FFN "
        "measures each candidate's distance from it, and the readout picks the nearest. "
        "<b>Take the tour</b> for the path through it step by step, or move through the "
        "stages with the slider and through the positions with \u2190 / \u2192; every number "
        f"is the run's, as <code>tinyadder --trace</code> prints it ({doc_link(docs, 'whole')}"
        ").</p>", _differs(views)])
