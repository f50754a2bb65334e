"""Two designs on one sum, side by side (``tinyadder explore --compare A B EXPR``).

``agreement(left, right)`` lines the two runs up by what each position holds (``roles``: a3,
s0, a separator), not by its index, since two prompt layouts put a3 in different places; for
every stage both have (by its short name: embed, L0.attn, ..., readout) and every slot both
name alike, it says whether the values agree (to six significant digits, dust 10^-12 times
the slot's largest value and less counting as zero: ``alike``) at every position both have. zcbtrak-6, lokimorty-10 and kswain98-2 compute the same x1 in
layer 0's attention, yieldthought-20 and wonderfall-27 another.

``page(left, right)`` is one self-contained HTML page: both prompt layouts and sums, that
table, then stage by stage each model's residual stream (slots by name, the logits at the
readout) and each layer's attention heads, the two models in two columns. It has no script:
everything is drawn for the first position that predicts a digit.
"""

from html import escape

from .. import families
from . import figures, svg


def by_label(views):
    """{role label: position} of a run; a separator's label is its text, which several
    positions may share: the second and later are numbered ("'0' #2")."""
    out, seen = {}, {}
    for t in views["tokens"]:
        k = seen[t["label"]] = seen.get(t["label"], 0) + 1
        out[t["label"] if k == 1 else f"{t['label']} #{k}"] = t["pos"]
    return out


DUST = 1e-12   # a value this far below its slot's largest is rounding noise or underflow


def scale(cells):
    """The largest |value| of a slot's cells (0 when none is a finite number)."""
    return max((abs(c[0]) for c in cells if c[0] is not None), default=0.0)


def alike(a, b, size_a, size_b):
    """Whether two cells hold the same: the same text (six significant digits), or both
    dust, each at most ``DUST`` times its own run's scale of the slot (``size_a``,
    ``size_b``: each row's largest |value|; two designs' logits are on different scales):
    exact 10^-7386 beside a float's 0, whose texts differ."""
    if a[2] == b[2]:
        return True
    return (a[0] is not None and b[0] is not None and
            abs(a[0]) <= DUST * size_a and abs(b[0]) <= DUST * size_b)


def agreement(left, right):
    """[{stage, slot, same, compared, first}]: per stage both runs have and slot both name,
    how many of the ``compared`` positions (matched by role label) hold the same value
    (``alike``), and the first that differs as
    (label, left text, right text)."""
    lpos, rpos = by_label(left), by_label(right)
    labels = [label for label in lpos if label in rpos]
    rstages = {s["short"]: s for s in right["residual"]}
    out = []
    for stage in left["residual"]:
        other = rstages.get(stage["short"])
        if other is None:
            continue
        rslots = {row["slot"]: row for row in other["slots"]}
        for row in stage["slots"]:
            twin = rslots.get(row["slot"])
            if twin is None:
                continue
            sizes = scale(row["cells"]), scale(twin["cells"])
            same, first = 0, None
            for label in labels:
                a, b = row["cells"][lpos[label]], twin["cells"][rpos[label]]
                if alike(a, b, *sizes):
                    same += 1
                elif first is None:
                    first = (label, a[2], b[2])
            out.append({"stage": stage["short"], "slot": row["slot"], "same": same,
                        "compared": len(labels), "first": first})
    return out


def only_logits_differ(found):
    """Whether the rows of ``agreement`` are the readout's logits alone and none agrees: two
    designs with no slot in common, whose logits are on different scales."""
    return bool(found) and all(r["stage"] == "readout" and not r["same"] for r in found)


NO_COMMON_SLOT = ("No slot in common; the logits are on different scales (each model's "
                  "readout has its own), so no value compares: read each model's own lanes.")


def _table(left, right):
    rows, found = [], agreement(left, right)
    if only_logits_differ(found):
        return f"<p>{escape(NO_COMMON_SLOT)}</p>"
    for r in found:
        if r["first"] is None:
            verdict = f"the same at all {r['compared']} positions"
        else:
            label, a, b = r["first"]
            verdict = (f"the same at {r['same']} of {r['compared']}; first differs at {label}: "
                       f"{a} against {b}")
        rows.append(f"<tr><td>{escape(r['stage'])}</td><td><code>{escape(r['slot'])}</code></td>"
                    f"<td>{escape(verdict)}</td></tr>")
    if not rows:
        return ("<p>The two models name no slot alike at any stage: compare them by the "
                "drawings below.</p>")
    return ('<table id="agreement"><thead><tr><th>stage</th><th>slot</th><th>'
            f'{escape(left["model"])} against {escape(right["model"])} (positions matched by '
            'role; the same to six significant digits, dust counting as 0)</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table>')


RUNNING_TOTAL = ("R + b + \u2113: what remains to be written plus the offset, in units of "
                 "the sum, which layer 1's running average holds (x = (R + b + \u2113)/P "
                 "falls on the ruler), to 3 decimals")


def key_quantity(views):
    """(what it means, {the sum digit predicted (s0): its text}) at each position that
    predicts a digit of the sum: R + b + \u2113 for the TinyAdder-36 family (the narration's
    decisions); a designed family's column after the attention (``families.column``'s first
    quantity: its formula in general, and per digit the run's value and the formula with the
    digits put in, '~100.002; 10·(6 + 3 + 1) − 0'); None for any other model."""
    tokens = views["tokens"]
    if views["decisions"]:
        return RUNNING_TOTAL, {tokens[d["pos"] + 1]["label"]: d["total"]
                               for d in views["decisions"]}
    quantity = next(iter(families.column(views.get("design"))), None)
    if quantity is None:
        return None
    def cells(short):
        stage = next(s for s in views["residual"] if s["short"] == short)
        return next(r for r in stage["slots"] if r["slot"] == quantity.slot)["cells"]
    read, embedded = cells(quantity.stage), cells("embed")
    a, b = int(views["a"]), int(views["b"])
    formula = quantity.formula.format(k="_k", j="_(k\u22121)", n="_(k+1)")
    where = "after the attention" if quantity.stage.endswith("attn") else "after the FFN"
    carry = " (c_k the carry into place k)" if "c_" in formula else ""
    out = {}
    for p in views["predicting"]:
        k = tokens[p]["next_place"]
        if k is not None and (k or quantity.at_units):
            out[tokens[p + 1]["label"]] = (f"{figures.value_text(read[p])}; "
                                           f"{quantity.filled(a, b, k, None, embedded[p][2])}")
    return f"{quantity.slot} {where} = {formula}{carry}", out


def key_table(left, right):
    """Each model's key quantity (``key_quantity``) at the position that predicts each digit
    of the sum, side by side with its meaning; '' when neither model has one."""
    keys = [key_quantity(v) for v in (left, right)]
    if not any(keys):
        return ""
    keys = [k or ("no designed quantity this page knows", {}) for k in keys]
    digits = list(dict.fromkeys(list(keys[0][1]) + list(keys[1][1])))
    rows = "".join(f'<tr><td>{escape(d)}</td>' + "".join(
        f'<td class="mono">{escape(k[1].get(d, ""))}</td>' for k in keys) + "</tr>"
        for d in digits)
    heads = "".join(f"<th>{escape(v['model'])}: {escape(k[0])}</th>"
                    for v, k in zip((left, right), keys))
    return ('<table id="key-quantities" class="cmp"><caption>Each design\'s key quantity at '
            'the position that predicts each digit of the sum</caption><thead><tr><th>predicts'
            f'</th>{heads}</tr></thead><tbody>{rows}</tbody></table>')


def _side(views):
    state = figures.defaults(views)
    n = views["digits"]
    expr = f'{int(views["a"]):0{n}d} + {int(views["b"]):0{n}d}'
    verdict = "right" if views["correct"] else f'wrong: a + b = {views["sum"]}'
    return (f'<h2>{escape(views["model"])}</h2><p>prompt <code>{escape(views["layout"])}'
            f'</code>; {escape(expr)}: it writes <b class="mono">{escape(views["answer"])}</b>, '
            f'{verdict}. Drawn at position {state["pos"]} '
            f'({escape(views["tokens"][state["pos"]]["label"])}).</p>')


def _opening(views):
    """'zcbtrak-6 at position 30 (the first that predicts a digit)': where a model is
    drawn (``figures.defaults``)."""
    pos = figures.defaults(views)["pos"]
    why = ("the first wrong digit's" if views["flaw_pos"] is not None
           else "the first that predicts a digit")
    return f"{escape(views['model'])} at position {pos} ({why})"


def _stage_figure(views, short):
    state = figures.defaults(views)
    if short not in [s["short"] for s in views["stages"]]:
        return f"<p>{escape(views['model'])} has no stage {escape(short)}.</p>"
    return figures.residual(views, short, state["pos"])


def _heads(views, layer):
    state = figures.defaults(views)
    keys = [k for k, h in views["heads"].items() if h["layer"] == layer]
    if not keys:
        return f"<p>{escape(views['model'])} has no live head in layer {layer}.</p>"
    return "".join(figures.attention(views, k, "softmax1", state["pos"]) for k in keys)


def page(left, right):
    """The comparison page of two runs' views (``views.build_views``) of one sum."""
    shorts = list(dict.fromkeys([s["short"] for s in left["stages"]] +
                                [s["short"] for s in right["stages"]]))
    layers = sorted({h["layer"] for v in (left, right) for h in v["heads"].values()})
    parts = []
    for short in shorts:
        parts.append(f'<section class="stage" id="stage-{escape(short)}"><h2>Residual stream '
                     f'after {escape(short)}</h2><div class="pair">'
                     f'<div>{_stage_figure(left, short)}</div>'
                     f'<div>{_stage_figure(right, short)}</div></div></section>')
        attn = short.endswith(".attn") and short[1:-5].isdigit()
        if attn and int(short[1:-5]) in layers:
            layer = int(short[1:-5])
            parts.append(f'<section class="stage" id="heads-{layer}"><h2>Layer {layer}\'s '
                         f'attention, every live head (log scale, clipped as in the explorer)'
                         f'</h2><div class="pair"><div>{_heads(left, layer)}</div>'
                         f'<div>{_heads(right, layer)}</div></div></section>')
    n = left["digits"]
    expr = f'{int(left["a"]):0{n}d} + {int(left["b"]):0{n}d}'
    title = f'{left["model"]} and {right["model"]} add {expr}'
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>tinyadder compare: {escape(title)}</title>",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<style>{svg.CSS}\n{CSS}</style></head>\n<body>",
        f"<header><h1>{escape(title)}</h1>",
        "<p>Two designs on the same sum, stage by stage: the slots both name alike, compared "
        "position by position (matched by what each position holds: a3 is the digit of a "
        "at 10<sup>3</sup>, s0 the sum's units digit), then each model's residual stream and "
        "attention side by side. Every number is the run's, as <code>tinyadder --trace</code> "
        "prints it; <code>tinyadder explore --model NAME</code> draws either alone, with "
        "hovers. Each model is drawn at the position its own page opens at: "
        f"{_opening(left)}; {_opening(right)}.</p>",
        f'<div class="pair"><div>{_side(left)}</div><div>{_side(right)}</div></div>',
        f"{_table(left, right)}{key_table(left, right)}</header><main>", *parts, "</main></body></html>\n",
    ])


CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 1em 2em; color: #111; }
.mono, code { font-family: ui-monospace, monospace; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.pair > div { overflow-x: auto; min-width: 0; }
.pair svg { max-width: 100%; height: auto; }
@media (max-width: 900px) { .pair { grid-template-columns: 1fr; } }
#agreement { border-collapse: collapse; margin: 1em 0; }
#agreement td, #agreement th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
section.stage { border-top: 1px solid #ddd; margin-top: 1em; }
"""
