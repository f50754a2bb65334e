"""The explorer's views drawn as SVG, from ``views.build_views`` data and a state (position,
stage, head, softmax or softmax1, variant). The page embeds these drawings and its script
recolours them and shows their parts; ``tinyadder figure`` writes one as a static file.

Every view draws numbers as they are: weights on a log scale clipped to the range that
carries the mechanism, everything below it one "≈ 0" colour; ratios on a log axis with the
line at 1 where a digit flips; signs as colours, never as a length.
"""

from fractions import Fraction
from html import escape
import math
import textwrap

from ..text import figure as text_figure
from .svg import (DIV, FAINT, INK, MARGIN, NEG, NUMBERED_SLOTS, ROLE, TILT, UNUSED, cell_size,
                  dark, decade_ticks, dot, group, line, log_range, negative, num, power, pretty,
                  range_text, rect, shown, shown_at, signed_class, signed_classes, svg, text,
                  text_width, weight_class, weight_classes, weight_legend)

MODES = ("softmax1", "softmax")


def title(s, ident=""):
    return text(0, 16, s, "h", extra=f' id="{ident}"' if ident else "")


def width_for(body_width, *lines, size=11):
    """The width an SVG needs for its drawing and its longest line of text."""
    return max([body_width] + [text_width(s, size) + 10 for s in lines])


def wrapped(x, y, s, width=120, cls="t", step=14):
    """A paragraph as lines of SVG text; (elements, the y below it)."""
    out = []
    for k, piece in enumerate(textwrap.wrap(s, width)):
        out.append(text(x, y + k * step, piece, cls))
    return out, y + step * max(1, len(textwrap.wrap(s, width)))


def not_applicable(views, name, ident, standalone=False):
    """The sentence a view shows instead of itself when the model lacks what it reads."""
    why = views["missing"][name]
    lines, bottom = wrapped(4, 18, why, width=90, cls="h", step=17)
    return svg(width_for(400, *textwrap.wrap(why, 90), size=13), bottom + 6, lines, ident,
               standalone)


def decision_at(views, pos):
    return next((d for d in views["decisions"] if d["pos"] == pos), None)


def token_axis(views, x0, y, dx, step=None, specials=True):
    """Position numbers (every ``step``) and the special tokens' texts under an axis."""
    out = []
    step = step or (1 if dx >= 14 else 5)
    for i, tok in enumerate(views["tokens"]):
        if i % step == 0:
            out.append(text(x0 + (i + 0.5) * dx, y, i, "small", "middle"))
        if specials and tok["role"] == "special":
            out.append(text(x0 + (i + 0.5) * dx, y + 11, tok["text"], "small", "middle"))
    return out


def log_axis(x0, y0, height, lo, hi, x1=None):
    """A vertical log10 axis from 10^hi (top) to 10^lo, ticks labelled as powers of ten and
    faint gridlines to x1; (elements, function log -> y)."""
    def y(v):
        return y0 + (hi - v) / (hi - lo) * height
    out = [line(x0, y0, x0, y0 + height)]
    for e in decade_ticks(lo, hi):
        out.append(text(x0 - 4, y(e) + 3, power(e), "small", "end"))
        if x1 is not None:
            out.append(line(x0, y(e), x1, y(e), "", ' stroke="#eee"'))
    return out, y


# ----------------------------------------------------------------------------- attention

def attention_classes(views, head, mode):
    """Per query row, one class letter per key (and the sink under the model's own softmax1),
    on the head's clipped scale; a head with an ordinary softmax has no sink to draw."""
    h = views["heads"][head]
    lo, hi = h["scale"]
    rows = [weight_classes([c[1] for c in row], lo, hi) for row in h[mode]]
    return rows if h.get("kind", "softmax1") == "softmax1" else [r[:q + 1] for q, r in
                                                                  enumerate(rows)]


def attention_title(head, mode, kind="softmax1"):
    """The heading of head ``head`` drawn in ``mode``; ``kind``: the model's own softmax
    (mode 'softmax1' draws the model's weights, 'softmax' an ordinary softmax of its scores)."""
    sunk = mode == kind == "softmax1"
    why = (" (sink: the weight given to nothing)" if sunk else
           " (no sink: each row sums to 1)")
    own = " (the model's own)" if kind == "softmax" and mode == "softmax1" else ""
    name = kind if mode == "softmax1" else "softmax"
    return f"{head}: attention weight of each key (column) for each query (row), {name}{own}{why}"


def axis_label(tok):
    """A position's name on the attention map's axes: its role (a1, b0, s0), a special token
    by its text ('bos', '+', '='), and a separator, a digit token that is no operand's, as
    the token strip labels it ("'0'": one name for it on the whole page)."""
    if tok["role"] != "special":
        return tok["label"]
    bare = tok["text"].strip("<>")
    return tok["label"] if bare.isdigit() else bare


def attention(views, head="L0.h3", mode="softmax1", pos=None, standalone=False):
    """Heat map of one head: queries as rows, keys as columns, each weight's colour on the
    head's clipped log scale (one step per decade on head 3), "≈ 0" below it, the softmax1
    sink (1 - the row's sum) in its own column; masked keys (k > q) blank."""
    tokens = views["tokens"]
    t = len(tokens)
    c = cell_size(t + 2, room=760)
    x0, y0 = 56, 58
    sink_x = x0 + (t + 0.6) * c
    heading = attention_title(head, mode, views["heads"][head].get("kind", "softmax1"))
    body = [title(heading, "attn-title")]
    cells = []
    for q, row in enumerate(attention_classes(views, head, mode)):
        for k in range(q + 2):  # keys 0..q, then the sink (blank under an ordinary softmax)
            x = sink_x if k == q + 1 else x0 + k * c
            cls = weight_class(row[k]) if k < len(row) else "blank"
            cells.append(rect(x, y0 + q * c, c, c, cls))
    body.append(f'<g id="attn-cells">{"".join(cells)}</g>')
    step = 1 if c >= 11 else 5
    # key names wider than a cell (rope-19's 'sep sep', 's9 s10') alternate between two lines
    staggered = c >= 11 and max(text_width(axis_label(tok)) for tok in tokens) + 3 > c
    for i, tok in enumerate(tokens):
        if i % step == 0 or tok["role"] == "special":
            label = axis_label(tok) if c >= 11 else i
            body.append(text(x0 + i * c + c / 2, y0 - 6 - 11 * (staggered and i % 2), label,
                             "small", "middle"))
            body.append(text(x0 - 4, y0 + i * c + c * 0.75,
                             f"{i} {axis_label(tok)}" if c >= 11 else i, "small", "end"))
    sunk = mode == views["heads"][head].get("kind", "softmax1") == "softmax1"
    body.append(text(sink_x + c / 2, y0 - 6, "sink" if sunk else "", "small",
                     "middle", ' id="attn-sinklabel"'))
    body.append(text(x0, y0 - 22 - 9 * staggered, "keys (earlier positions) \u2192", "small"))
    body.append(text(12, y0 + t * c / 2, "queries \u2193", "small", "middle",
                     f' transform="rotate(-90 12 {num(y0 + t * c / 2)})"'))
    legend_y = y0 + t * c + 30
    for key in ([head] if standalone else views["heads"]):
        lo, hi = views["heads"][key]["scale"]
        shown = "" if key == head else ' display="none"'
        body.append(weight_legend(x0, legend_y, lo, hi, extra=f' data-legend="{key}"{shown}'))
    sel = pos if pos is not None else -1
    sunk = mode == views["heads"][head].get("kind", "softmax1") == "softmax1"
    # the query row's outline ends at the sink column, or at the last key where there is none
    body.append(rect(x0 - 1, y0 + sel * c - 1, (t + 1.6 if sunk else t) * c + 2, c + 2, "sel",
                     ' id="attn-sel"' + ("" if pos is not None else ' visibility="hidden"')))
    width = width_for(max(sink_x + c + 12, x0 + 470), heading, size=13)
    geometry = (f' data-x0="{num(x0)}" data-y0="{num(y0)}" data-c="{c:.4f}"'
                f' data-sink="{num(sink_x)}"')
    return svg(width, legend_y + 34, body, "attn-svg", standalone, geometry)


# ----------------------------------------------------------------------------- place values

def place_title(views, q, mode):
    head, slope = views["place_head"], views["place_slope"]
    if mode == "softmax":
        return (f"{head} under an ordinary softmax, from query {q}: the nearest special key "
                f"takes almost all the weight, and the decay is gone")
    return (f"{head}, from query {q}: each step back costs a factor of ten (ALiBi slope "
            f"{slope}), and softmax1 keeps the weights absolute")


def decay_axes(views, x0, y0, width, height):
    """The axes every query's decay shares: the head's clipped log scale, the "≈ 0" floor,
    the key positions; (elements, log -> y, the floor's y, the key spacing)."""
    lo, hi = views["heads"][views["place_head"]]["scale"]
    t = len(views["tokens"])
    dx = width / (t + 2)  # the keys, a gap, and the sink's own column
    out, y = log_axis(x0, y0, height, lo, hi, x0 + width)
    floor_y = y0 + height + 16
    out.append(line(x0 + (t + 1) * dx, y0, x0 + (t + 1) * dx, floor_y + 8, "",
                    f' stroke="{FAINT}" stroke-dasharray="2 3"'))
    out.append(text(x0 + (t + 1.5) * dx, floor_y + 20, "sink", "small", "middle"))
    out.append(text(x0 - 4, floor_y + 3, "\u2248 0", "small", "end"))
    out.append(line(x0, floor_y + 8, x0 + width, floor_y + 8))
    out += token_axis(views, x0, floor_y + 20, dx, specials=False)
    out.append(text(x0 + width / 2, floor_y + 32, "key position", "small", "middle"))
    return out, y, floor_y, dx


def decay(views, q, mode, x0, y0, width, geometry):
    """One query's weights against key position; the keys below the scale (head 3's digit
    keys, e^-1000 and less) on the "≈ 0" floor, their range said; (elements, the right edge
    of its widest text)."""
    y, floor_y, dx = geometry
    head = views["place_head"]
    row = views["heads"][head][mode][q]
    lo = views["heads"][head]["scale"][0]
    tokens = views["tokens"]
    out = [text(x0, y0 - 12, place_title(views, q, mode), "t")]
    right = x0 + text_width(place_title(views, q, mode))
    below = [c for c in row if c[1] is not None and c[1] < lo]
    if below:
        span = f"{pretty(_e(max(below, key=lambda c: c[1])))} \u2026 " \
               f"{pretty(_e(min(below, key=lambda c: c[1])))}"
        said = (f"1 key with weight {pretty(_e(below[0]))}" if len(below) == 1 else
                f"{len(below)} keys with weights {span}")
        out.append(text(x0 + width, floor_y + 44, f"\u2248 0: {said}, below {power(lo)}",
                        "small", "end"))
    path, dots = [], {}
    for k, c in enumerate(row):
        role = tokens[k]["role"] if k <= q else "sink"
        x = x0 + ((k if k <= q else len(tokens) + 1) + 0.5) * dx  # the sink: its own column
        low = c[1] is None or c[1] < lo
        yy = floor_y if low else y(c[1])
        if not low:
            if role != "sink":  # the line joins the keys; the sink is no key
                path.append(f"{'M' if not path else 'L'}{num(x)} {num(yy)}")
            if role in ("special", "sink"):
                label = "sink" if role == "sink" else tokens[k]["text"]
                out.append(text(x + 6, yy - 5, f"{label} {shown(c[2])}", "small"))
                right = max(right, x + 6 + text_width(f"{label} {shown(c[2])}"))
        dots.setdefault(role, []).append(f"M{num(x)} {num(yy)}h0")
    out.append(f'<path d="{"".join(path)}" fill="none" stroke="{FAINT}"/>')
    for role, d in dots.items():
        out.append(f'<path d="{"".join(d)}" stroke="{ROLE.get(role, INK)}" stroke-width="7" '
                   f'stroke-linecap="round"/>')
    return out, right


def _e(c):
    """A cell's magnitude as '1e-435' (from its text, which may be rounded: '~5.07596e-435')."""
    return c[2].lstrip("~-").replace("e+", "e")


def role_legend(x0, y):
    out = []
    for i, (role, name) in enumerate((("a", "digit of a"), ("b", "digit of b"),
                                      ("sum", "generated"), ("special", "special"))):
        out.append(dot(x0 + 4 + i * 78, y, ROLE[role]))
        out.append(text(x0 + 11 + i * 78, y + 4, name, "small"))
    return out


def place(views, pos=None, mode="softmax1", standalone=False):
    """The weights of the place-value head from the selected query (every query and both
    modes pre-drawn, one shown)."""
    if views["missing"]["place"]:
        return not_applicable(views, "place", "place-svg", standalone)
    t = len(views["tokens"])
    width = max(600, min(900, 26 * t))
    shown = pos if pos is not None else views["predicting"][0]
    heading = (f"Place values: {views['place_head']} turns distance into powers of ten")
    axes, y, floor_y, dx = decay_axes(views, 60, 58, width, 190)
    body = [title(heading)] + axes
    right = 60 + width
    for m in ([mode] if standalone else MODES):
        for q in ([shown] if standalone else range(t)):
            extra = shown_at(q, q == shown and m == mode) + f' data-mode="{m}"'
            drawn, edge = decay(views, q, m, 60, 58, width, (y, floor_y, dx))
            body.append(group(drawn, extra))
            right = max(right, edge)
    body += role_legend(60, 332)
    # as wide as the widest label of any query (the sink's, right of its column), plus a margin
    return svg(width_for(max(width + 120, right + 12), heading, size=13), 348, body,
               "place-svg", standalone)


def count_curve(cells, views, x0, y0, width, height, pos):
    """log10 |count| per position: the saw-tooth 10^-1 .. 10^-N, again from '+', negative
    (purple) from '='."""
    t = len(cells)
    dx = width / t
    lo, hi = log_range(cells)
    lo, hi = math.floor(lo), math.ceil(hi)
    hi = hi if hi > lo else lo + 1
    out, y = log_axis(x0, y0, height, lo, hi, x0 + width)
    out.append(line(x0, y0 + height, x0 + width, y0 + height))
    pts, dots = [], {"pos": [], "neg": []}
    for i, c in enumerate(cells):
        if c[1] is None:
            continue
        x = x0 + (i + 0.5) * dx
        pts.append(f"{'M' if not pts else 'L'}{num(x)} {num(y(c[1]))}")
        dots["neg" if negative(c) else "pos"].append(f"M{num(x)} {num(y(c[1]))}h0")
    out.append(f'<path d="{"".join(pts)}" fill="none" stroke="{FAINT}"/>')
    for key, colour in (("pos", DIV[8]), ("neg", DIV[1])):
        out.append(f'<path d="{"".join(dots[key])}" stroke="{colour}" stroke-width="7" '
                   f'stroke-linecap="round"/>')
    out += token_axis(views, x0, y0 + height + 12, dx)
    for i, c in enumerate(cells):
        x = x0 + (i + 0.5) * dx
        anchor = "end" if i > t / 2 else "start"
        said = shown(c[2])  # a rounded negative, '≈ −10.0000', takes its '≈' for the '='
        label = f"count {said}" if said.startswith("\u2248 ") else f"count = {said}"
        width_ = text_width(label, 10) + 6
        # beside the selected position's own dot, on a white ground over its neighbours'
        at = y0 + height if c[1] is None else y(c[1])
        ly = at - 9 if at - 9 > y0 + 10 else at + 17
        lx = x + (-7 if anchor == "end" else 7)
        out.append(group([line(x, y0, x, y0 + height, "sel"),
                          rect(lx - width_ if anchor == "end" else lx, ly - 10, width_, 13, "",
                               ' fill="#fff" fill-opacity="0.9"'),
                          text(lx + (-3 if anchor == "end" else 3), ly, label, "small",
                               anchor)], shown_at(i, i == pos)))
    return out


def count_title(views, mode):
    if mode == "softmax":
        s = views["softmax"]
        size = round(s["count"][1][1] * math.log(10))  # count at a's first digit, as e^k
        return (f"count with an ordinary softmax in every head ({s['number'].split(' ')[0]} "
                f"run): about e^{size} everywhere, no place values; the model writes "
                f"{s['answer']}")
    return (f"count after layer 0's attention: the place value of every position, "
            f"{power(-1)} \u2026 {power(-views['digits'])} on a's digits, again on b's, "
            f"negative from =")


def count(views, pos=None, mode="softmax1", standalone=False):
    """The count slot per position, under softmax1 (the model) and under an ordinary softmax
    (the softmax run), one shown."""
    if views["missing"]["count"]:
        return not_applicable(views, "count", "count-svg", standalone)
    t = len(views["tokens"])
    width = max(600, min(900, 26 * t))
    shown = pos if pos is not None else views["predicting"][0]
    modes = [m for m in ([mode] if standalone else MODES)
             if m == "softmax1" or views["softmax"]]
    body = [title("count: the place values head 3 writes (log scale; orange positive, purple "
                  "negative)")]
    lines = []
    for m in modes:
        cells = views["count"] if m == "softmax1" else views["softmax"]["count"]
        heading = count_title(views, m)
        lines.append(heading)
        body.append(group([text(60, 40, heading, "t")] +
                          count_curve(cells, views, 60, 56, width, 170, shown),
                          f' data-mode="{m}"' + ("" if m == mode else ' display="none"')))
    return svg(width_for(width + 120, *lines), 270, body, "count-svg", standalone)


# ----------------------------------------------------------------------------- residual

def residual_rows(views):
    """Row names of the residual grid: every slot of the widest stage, then the logits."""
    slots = [s["slot"] for s in max((s["slots"] for s in views["residual"][:-1]), key=len)]
    return slots, [s["slot"] for s in views["residual"][-1]["slots"] if s["slot"] not in slots]


DUST = 12  # decades: a row's scale stops this far below its largest value


def clipped(lo_hi):
    """A row's log10 range with its floor at most ``DUST`` decades below its top: a value
    10^-7386 (zcbtrak-6's SiLU dust at position 0) would else push every real value into one
    colour. clipped((-7386.0, 2.1)) == (-9.9, 2.1)."""
    lo, hi = lo_hi
    return max(lo, hi - DUST), hi


NARROW = math.log10(2)  # a row whose |x| spans under a factor 2 is drawn in one shade


def shaded(lo_hi):
    """The log10 range a row's colours span: ``lo_hi``, or (hi, hi), one shade (the darkest
    of each sign), when it spans under ``NARROW``, a factor 2: zcbtrak-6's x0, 999.919 ..
    1000, would else run from the palest colour to the darkest over a 0.008 % difference; a
    digit slot (1 .. 9, 10 .. 90) keeps its log scale, whose contrast means something.
    shaded((2.99996, 3.0)) == (3.0, 3.0)."""
    lo, hi = lo_hi
    return (hi, hi) if hi - lo < NARROW else (lo, hi)


def residual_scales(views):
    """{stage short: {row name: (lo, hi)}}: log10 |x| over the positions, one
    symmetric-log scale per slot row and stage, so `count` (10^-10) and `cand0` (10^12) are
    each visible, whatever the other rows hold; each clipped at ``DUST`` decades (a smaller
    value takes the palest colour of its sign), one shade under ``NARROW`` (``shaded``)."""
    return {stage["short"]: {row["slot"]: shaded(clipped(log_range(row["cells"])))
                             for row in stage["slots"]}
            for stage in views["residual"]}


def magnitude(log):
    """10^log to 6 significant digits as the page prints numbers.

    >>> magnitude(math.log10(999.919)), magnitude(math.log10(1 / 34)), magnitude(12.301)
    ('999.919', '0.0294118', '1.99986·10¹²')
    """
    e = math.floor(log)
    m = f"{10 ** (log - e):.6g}"
    if m == "10":
        m, e = "1", e + 1
    if -4 <= e < 6:
        return f"{float(m) * 10 ** e:.6g}"
    return pretty(f"{m}e{e}")


def row_legend(cells, lo_hi, base=None):
    """The legend of one row's scale: its decades ('|x| 10⁻¹¹ .. 10¹', ``range_text``), or
    for a row under a factor 2 (``shaded``) its real range, '|x| 999.919 .. 1000, one shade',
    or where its values differ, what it is coloured by: '|x| 988 .. 1005.99, coloured by x
    less its embedded value' (``deviations``, ``base`` the row after embed)."""
    if lo_hi is None:
        return ""
    if lo_hi[0] != lo_hi[1]:
        return range_text(lo_hi)
    lo, hi = log_range(cells)
    said = magnitude(lo) if magnitude(lo) == magnitude(hi) else (
        f"{magnitude(lo)} .. {magnitude(hi)}")
    found = deviations(cells, base)
    if found is None:
        return f"|x| {said}, one shade"
    return f"|x| {said}, coloured by x less its embedded value"


def deviations(cells, base):
    """(cells of x − e, None) for a row whose values differ, none of them 0, and differ from
    ``base``, e the row's value after embed at each position (a float: a colour, not a
    claim), each cell [x − e, log10 |x − e| or None at 0, its sign as text]; None for a row of
    one value, with zeros (TinyAdder-36's scale, 0 before '='), or as embedded. A slot near
    a constant (jacobli99-28's x0, 1000 ± the carry) shows its signal in the difference:
    989.999 and 1000.99 take opposite colours."""
    values = sorted(c[0] for c in cells if c[0] is not None and math.isfinite(c[0]))
    if not values or values[0] == values[-1] or 0 in values:  # 0 and 1/35 .. 1/24: no constant
        return None
    if base is None or all(c[0] == e[0] for c, e in zip(cells, base)):
        return None  # as embedded: one shade (zcbtrak-6's 1000 − d²/1000 is no signal here)
    out = []
    for c, e in zip(cells, base):
        d = None if c[0] is None or e[0] is None else c[0] - e[0]
        out.append([d, math.log10(abs(d)) if d else None, "-1" if d is not None and d < 0
                    else "1"])
    return out, None


def _row_classes(cells, lo_hi, base=None):
    """A row's letters on its scale; a row under a factor 2 (``shaded``) whose values differ
    coloured by their difference from its embedded value (``deviations``), on its own clipped
    scale."""
    found = deviations(cells, base) if lo_hi[0] == lo_hi[1] else None
    if found is None:
        return signed_classes(cells, *lo_hi)
    return signed_classes(found[0], *clipped(log_range(found[0])))


def embedded(views, stage, slot):
    """The cells of ``slot`` after embed, for a later ``stage``; None at embed or where the
    embedding has no such slot."""
    first = views["residual"][0]
    if stage is first:
        return None
    return next((r["cells"] for r in first["slots"] if r["slot"] == slot), None)


def residual_classes(views):
    """{stage short: {row: class letters per position}}; rows a stage lacks are absent. The
    logits are coloured against the winner (``gap_classes``), not each on its own scale."""
    scales = residual_scales(views)
    out = {stage["short"]: {row["slot"]: _row_classes(row["cells"],
                                                      scales[stage["short"]][row["slot"]],
                                                      embedded(views, stage, row["slot"]))
                            for row in stage["slots"]} for stage in views["residual"]}
    # a logit counts only where its position predicts a token the model writes
    used = set(views["predicting"])
    out["readout"].update({slot: "".join(c if p in used else UNUSED
                                         for p, c in enumerate(letters))
                           for slot, letters in gap_classes(views["residual"][-1]["slots"])
                           .items()})
    return out


def gap_classes(rows):
    """{logit row: letters}: each logit's gap to the winner, logit - max, coloured per position
    on one log scale from the runner-up's gap (palest purple) to the last's (darkest); the
    winner, gap 0, is the zero colour. Logits 6 and 7 at 5193798811 + 1806201129's position
    23, 2.5 units of the sum apart among gaps of 10^9 units, are told apart."""
    rows = [r for r in rows if "gap" in r]
    if not rows:
        return {}
    letters = {r["slot"]: [] for r in rows}
    for p in range(len(rows[0]["gap"])):
        column = [r["gap"][p] for r in rows]
        lo, hi = log_range([c for c in column if c[1] is not None])
        for r, c in zip(rows, column):
            letters[r["slot"]].append(signed_classes([c], lo, hi))
    return {slot: "".join(v) for slot, v in letters.items()}


def _residual_marks(srow, x0, y, c, h, t):
    marks = []
    for p in range(t):
        x = x0 + p * c
        if srow["changed"][p]:
            marks.append(rect(x + 1, y + 1, c - 2, h - 2, "chg"))
            marks.append(rect(x + 2.5, y + 2.5, c - 5, h - 5, "chg2"))
        if srow["departs"][p]:
            marks.append(f'<path d="M{num(x + 2)} {num(y + 2)}L{num(x + c - 2)} '
                         f'{num(y + h - 2)}M{num(x + c - 2)} {num(y + 2)}L{num(x + 2)} '
                         f'{num(y + h - 2)}" class="dep"/>')
    return marks


def value_text(cell):
    """A residual value as the page prints every number (``shown``), a fraction as its
    decimal to 6 significant digits ('~' where that rounds), to fit a cell: '~100.002',
    '999.991' for 999991/1000.

    >>> [value_text([0, 0, t]) for t in ("~100.002", "999991/1000", "-1/3", "41000001/2")]
    ['~100.002', '999.991', '≈ −0.333333', '~2.05000·10⁷']
    """
    said = cell[2]
    if "/" not in said or said.startswith("~"):
        return shown(said)
    q = Fraction(said)
    decimal = text_figure(q, 6)
    return shown(decimal if Fraction(decimal) == q else "~" + six_digits(decimal))


def six_digits(decimal):
    """A rounded decimal's mantissa padded to six significant digits, as the tracer writes
    every rounded value ('~2.05000e+7'), so that one view has one format.

    >>> six_digits("2.05e7"), six_digits("-0.0125"), six_digits("0.333333"), six_digits("1e5")
    ('2.05000e7', '-0.0125000', '0.333333', '1.00000e5')
    """
    mantissa, e, exponent = decimal.partition("e")
    sig = len(mantissa.lstrip("-").replace(".", "").lstrip("0"))
    if sig >= 6:
        return decimal
    return mantissa + ("" if "." in mantissa else ".") + "0" * (6 - sig) + e + exponent


def value_height(views):
    """The height of a numbered slot row: its longest value, written upward, and a margin."""
    texts = [value_text(cell) for stage in views["residual"][:-1] for row in stage["slots"]
             for cell in row["cells"]]
    return max(40, round(text_width(max(texts, key=len, default="")) + 8))


def _residual_values(stage, letters, slot_rows, x0, ys, c, tall, t):
    """Each slot's value at each position, written upward in its cell (white on a dark
    colour)."""
    cells = {row["slot"]: row["cells"] for row in stage["slots"]}
    out = []
    for r, name in enumerate(slot_rows):
        for p in range(t):
            x, y = x0 + (p + 0.5) * c + 4, ys[r] + tall - 4
            said = value_text(cells[name][p]) if name in cells else ""
            shade = " dk" if name in cells and dark(letters[name][p]) else ""
            out.append(text(x, y, said, "small val" + shade, "start",
                            f' transform="rotate(-90 {num(x)} {num(y)})"'))
    return f'<g id="resid-values">{"".join(out)}</g>'


def residual(views, stage="L0.mlp", pos=None, standalone=False, logits=True):
    """Slot x position grid after one stage, each row on its own symmetric-log scale;
    outlined cells changed at this stage, crossed cells depart from their intended value.
    The readout stage colours the logits; its outlines mark each position's winner.
    ``logits`` False leaves the logit rows out (a page that draws each stage apart: they
    hold something at the readout alone)."""
    slot_rows, logit_rows = residual_rows(views)
    logit_rows = logit_rows if logits else []
    letters = residual_classes(views)
    scales = residual_scales(views)
    stages = {s["short"]: s for s in views["residual"]}
    t = len(views["tokens"])
    c = cell_size(t, room=820, most=20)
    h = 14
    x0, y0 = 78, 62
    rows = slot_rows + logit_rows
    tall = value_height(views) if len(slot_rows) <= NUMBERED_SLOTS and c >= 12 else None
    hs = [tall or h if i < len(slot_rows) else h for i in range(len(rows))]
    ys = [y0 + sum(hs[:i]) + (26 if i >= len(slot_rows) else 0) for i in range(len(rows))]
    label = next(s["label"] for s in views["stages"] if s["short"] == stage)
    body = [title(f"Residual stream after {label} ({stage})", "resid-title")]
    cells = []
    for r, name in enumerate(rows):
        row = letters[stage].get(name)
        for p in range(t):
            cls = "na" if row is None else signed_class(row[p])
            cells.append(rect(x0 + p * c, ys[r], c, hs[r], cls))
    body.append(f'<g id="resid-cells">{"".join(cells)}</g>')
    marks = []
    for r, name in enumerate(rows):
        for srow in stages[stage]["slots"]:
            if srow["slot"] == name:
                marks += _residual_marks(srow, x0, ys[r], c, hs[r], t)
    body.append(f'<g id="resid-marks">{"".join(marks)}</g>')
    if tall:
        body.append(_residual_values(stages[stage], letters[stage], slot_rows, x0, ys, c, tall,
                                     t))
    ranges = []
    # the page rewrites the legends per stage: room for the widest of any stage
    widest = max(text_width(row_legend(r["cells"], scales[s["short"]][r["slot"]],
                                       embedded(views, s, r["slot"])))
                 for s in views["residual"] for r in s["slots"])
    row_cells = {srow["slot"]: srow["cells"] for srow in stages[stage]["slots"]}
    for r, name in enumerate(rows):
        body.append(text(x0 - 4, ys[r] + hs[r] / 2 + 4, name, "small mono", "end"))
        said = ("vs winner" if stage == "readout" and name in logit_rows else
                row_legend(row_cells.get(name), scales[stage].get(name),
                           embedded(views, stages[stage], name)))
        ranges.append(text(x0 + t * c + 6, ys[r] + hs[r] / 2 + 4, said,
                           "small"))
    body.append(f'<g id="resid-ranges">{"".join(ranges)}</g>')
    if logit_rows:
        body.append(text(x0, ys[len(slot_rows)] - 6, "readout: logit of each digit against "
                                                    "the winner (outlined, pale): per position, "
                                                    "darker purple is further behind", "small"))
    step = 1 if c >= 12 else 5
    bottom = ys[-1] + hs[-1]
    for p, tok in enumerate(views["tokens"]):
        if p % step == 0:
            body.append(text(x0 + (p + 0.5) * c, y0 - 30, p, "small", "middle"))
        if c >= 16 or tok["role"] == "special":
            body.append(text(x0 + (p + 0.5) * c, y0 - 18, axis_label(tok), "small", "middle"))
        if c >= 12 and tok["role"] != "special":
            body.append(text(x0 + (p + 0.5) * c, y0 - 6, tok["text"], "small", "middle"))
    sel = -10 if pos is None else pos
    body.append(rect(x0 + sel * c, y0 - 2, c, bottom - y0 + 4, "sel", ' id="resid-sel"'))
    width = max(760, x0 + t * c + max(110, widest + 12))
    chars = int((width - x0) / 6.4)  # 11 px sans-serif: about 6.4 px a character
    legend, y = wrapped(x0, bottom + 22, "colour: each slot row its own log scale of |x| at "
                                         "this stage (the logits: their gap to the winner); "
                                         "purple negative, orange positive, pale small; a "
                                         "row whose |x| spans under a factor 2 by its "
                                         "change since embed, or one shade, its range "
                                         "beside it; grey: slot not there yet, or "
                                         "a logit no token is read from", chars, "small", 14)
    body += legend
    for i in range(len(DIV)):
        body.append(rect(x0 + i * 16, y - 6, 16, 10, f"d{i}"))
    body.append(text(x0 + 11 * 16 + 8, y + 3, "\u25a1 changed by this stage   "
                                              "\u2715 departs from its intended value "
                                              "(probes)", "small"))
    y += 20
    reads = views.get("readout_slots") or []  # a negative-error readout: logit u = -slot
    if any(reads):
        said, y = wrapped(x0, y, "the readout: logit u = \u2212(the slot it reads for u): " +
                          ", ".join(f"{u} \u2212{slot}" for u, slot in enumerate(reads) if slot),
                          chars, "small", 14)
        body += said
    geometry = (f' data-x0="{num(x0)}" data-y0="{num(y0)}" data-c="{c:.4f}"'
                f' data-hs="{",".join(num(x) for x in hs)}"'
                f' data-ys="{",".join(num(y) for y in ys)}"')
    return svg(width, y, body, "resid-svg", standalone, geometry)


# ----------------------------------------------------------------------------- running sum

def running_sum(views, pos=None, standalone=False):
    """What remains to be written, per position that predicts a digit: R on a log scale (a
    negative R in purple, its sign said), and R + b + ℓ, what layer 1's average holds."""
    if views["missing"]["sum"]:
        return not_applicable(views, "sum", "sum-svg", standalone)
    rows = views["decisions"]
    logs = [math.log10(abs(int(d["R"]))) for d in rows if int(d["R"])]
    hi = max(1, math.ceil(max(logs, default=1)))
    bar_w = 360
    y0, h = 58, 20
    off = [d for d in rows if d["R"] != d["expected_R"]]
    heading = ("Running sum: R, what remains to be written (a + b minus the digits written, "
               "at their places; log scale)" if not off else
               f"Running sum: R as this run holds it (log scale); at {len(off)} of "
               f"{len(rows)} positions rounding moved it off a + b minus the digits written "
               f"(\u2260 after R)")
    body = [title(heading),
            text(0, 34, "layer 1's average holds (1000/(i+2))\u00b7(R + b + \u2113): R, the "
                        "bias b and the leakage \u2113, in units of the sum", "small"),
            text(0, 50, "position", "small"),
            text(110, 50, f"|R| from 1 to {power(hi)} (log)", "small"),
            text(120 + bar_w, 50, "R, R + b + \u2113 and the digit written next", "small")]
    notes = []
    for i, d in enumerate(rows):
        y = y0 + i * h
        tok = views["tokens"][d["pos"]]
        r = int(d["R"])
        body.append(text(0, y + 14, f"{d['pos']} '{tok['text']}'", "t mono"))
        length = math.log10(abs(r)) / hi * bar_w if abs(r) >= 1 else 0
        body.append(rect(110, y + 3, max(1.0, length), h - 6, "",
                         f' fill="{NEG if r < 0 else MARGIN}"'))
        note = f"R = {d['R']}" + (" < 0: the digits written exceed a + b" if r < 0 else "")
        if d["R"] != d["expected_R"]:
            note = f"R = {d['R']} \u2260 {d['expected_R']}, a + b minus the digits written"
        notes.append(f"{note};  R + b + \u2113 = {d['total']}  \u2192 writes {d['written']}")
        body.append(text(120 + bar_w, y + 14, notes[-1], "t mono"))
    longest = max(len(note) for note in notes)
    width = width_for(120 + bar_w + 7 * longest, heading, size=13)
    sel = next((i for i, d in enumerate(rows) if d["pos"] == pos), -10)  # -10: off the chart
    body.append(rect(0, y0 + sel * h, width, h, "sel", ' id="sum-sel"'))
    return svg(width, y0 + len(rows) * h + 10, body, "sum-svg", standalone,
               f' data-y0="{y0}" data-h="{h}"')


# ----------------------------------------------------------------------------- ruler

def ruler_title(d):
    if d["flipped"]:
        return (f"Ruler at position {d['pos']}: the readout's tilt overrode the smallest "
                f"error: {d['chosen']} won, the nearest mark is {d['nearest']}.5")
    return (f"Ruler at position {d['pos']}: the nearest mark, {d['nearest']}.5, wins: the "
            f"largest digit that x reaches (a floor)")


def ruler_verdict(d):
    """The lines under the ruler: the errors' formula, the margin, the tilt and the lead."""
    i2 = d["pos"] + 2
    lines = [f"err_u = (10\u2079/{i2})\u00b7P\u00b7|x \u2212 (u + \u00bd)| in the logits "
             f"(one unit of the sum is {pretty(d['unit'])} there); under each mark "
             f"|x \u2212 (u + \u00bd)|"]
    if d["flipped"]:
        lines.append(f"err{d['chosen']} \u2212 err{d['nearest']} = +{pretty(d['margin'])} "
                     f"units ({pretty(d['margin_logits'])} in logits): {d['nearest']} is "
                     f"nearer, by this margin")
        lines.append(f"the readout's tilt favours {d['chosen']} by {pretty(d['tilt'])} units "
                     f"({pretty(d['tilt_logits'])}), {d['ratio_text']} times the margin: "
                     f"{d['chosen']} leads by {pretty(d['lead'])} units")
    else:
        # both logit figures to the tracer's six digits: they differ by the tilt
        lines.append(f"margin: {d['rival']}'s mark is farther by {units(d['margin'])} "
                     f"({shown(d['margin_logits_text'])} in logits)")
        lines.append(f"{tilt_said(d)}; lead of {d['chosen']} = margin \u2212 tilt = "
                     f"{units(d['lead'])} ({shown(d['lead_logits'])} in logits)")
    return lines


def units(figure):
    """'1 unit', '10\u2074 units': a figure of units of the sum, as the page prints it."""
    return f"{pretty(figure)} unit{'' if figure == '1' else 's'}"


def tilt_said(d):
    """The tilt with its sign's meaning, in explain's and the walkthrough's words: the tilt is
    how much the readout's other slots favour the rival, so a negative one favours the
    nearest digit (TinyAdder-36's -100 units at 7650676663 + 0149460439's position 24)."""
    if d["tilt"] == "0":
        return "tilt 0: nothing else the readout reads favours either digit"
    size = units(d["tilt"].lstrip("-"))
    if d["tilt"].startswith("-"):
        return f"tilt \u2212{size} (negative: it favours {d['nearest']}, the winner)"
    return f"tilt +{size} (positive: it favours {d['rival']}, the rival)"


def ruler_one(views, d, x0, y0, width):
    """The ten marks u + 1/2, the dot at x, each mark's distance from it, the verdict and a
    magnifier."""
    unit = width / 10
    place = power(d["power"])
    out = [text(0, y0 - 50, ruler_title(d), "h"),
           text(x0, y0 - 30, f"x = (R + b + \u2113)/P = {d['x_text']}, with R = {d['R']}, "
                             f"b = {d['b']}, \u2113 = {d['leak']}, P = {place}", "t")]
    out.append(line(x0, y0, x0 + width, y0, "ax", ' stroke-width="2"'))
    for v in range(11):
        out.append(line(x0 + v * unit, y0 - 4, x0 + v * unit, y0 + 4))
        out.append(text(x0 + v * unit, y0 - 8, v, "small", "middle"))
    for u in range(10):
        x = x0 + (u + 0.5) * unit
        win, near = u == d["chosen"], u == d["nearest"]
        colour = TILT if win and d["flipped"] else MARGIN if win else INK
        out.append(line(x, y0 - 14, x, y0 + 14, "", f' stroke="{colour}" stroke-width='
                                                    f'"{3 if win or near else 1.5}"'))
        out.append(text(x, y0 + 28, f"{u}", "t", "middle"))
        out.append(text(x, y0 + 42, d["distance"][u], "small", "middle",
                        ' font-weight="bold"' if near else ""))
    dot_x = x0 + max(-0.2, min(10.2, d["x"])) * unit
    out.append(dot(dot_x, y0, TILT, 6))
    for k, s in enumerate(ruler_verdict(d)):  # the errors' formula, then the verdict
        out.append(text(x0, y0 + 62 + 16 * k, s, "small" if k == 0 else "t",
                        extra=' font-weight="bold"' if k and d["flipped"] else ""))
    return out + ruler_lens(d, x0, y0 + 134, width)


def ruler_lens(d, x0, zy, width):
    """The magnifier: around the boundary B between the nearest mark and the rival's (the
    integer between them, where the choice flips), 10^k wide on each side, k the decade of
    x's distance from B (margin/2P) or of the tilt's shift of B (tilt/2P), whichever is
    larger: 5193798811 + 1806201129's x = 6.99999994 sits 6·10^-8 below 7, and the tilt moves
    the boundary 5·10^-7 below it, past x. Where that scale is 10^0 or more, the ruler above
    already shows it: a line says so instead (7650676663 + 0149460439's x = 3.71 at position
    28, 0.29 from 4)."""
    boundary = max(d["nearest"], d["rival"])
    below = d["nearest"] < d["rival"]          # x lies below the boundary
    dist = d["margin_p"] / 2 if d["margin_p"] else 0.0
    shift = d["tilt_f"] / 2 / 10 ** d["power"] if d["tilt_f"] > 0 else 0.0
    k = math.ceil(math.log10(max(dist, shift, 1e-300) * 1.25))
    gap = pretty(f"{dist:.3g}")
    if k >= 0 and shift < 0.01:  # a moved boundary would sit within 4 px of B there
        return [text(x0, zy - 22, f"x is {gap} {'below' if below else 'above'} the boundary "
                                  f"{boundary}, where the choice flips: the ruler above shows "
                                  f"that at full scale, so nothing to magnify", "small")]
    half = 10.0 ** k
    mid = x0 + width / 2

    def at(offset):  # offset from the boundary, in units of x
        return mid + max(-1.0, min(1.0, offset / half)) * width / 2
    out = [text(x0, zy - 22, f"magnified around the boundary {boundary} between marks "
                             f"{min(d['nearest'], d['rival'])} + \u00bd and "
                             f"{boundary} + \u00bd: from {boundary} \u2212 {pretty(f'1e{k}')} "
                             f"to {boundary} + {pretty(f'1e{k}')}", "small"),
           line(x0, zy, x0 + width, zy, "ax", ' stroke-width="2"'),
           line(mid, zy - 14, mid, zy + 14, "", f' stroke="{INK}" stroke-width="2"'),
           text(mid + 6, zy + 28, f"{boundary}: {min(d['nearest'], d['rival'])} below, "
                                  f"{boundary} above", "small")]
    if shift:
        sx = at(-shift if d["rival"] > d["nearest"] else shift)
        out += [line(sx, zy - 14, sx, zy + 14, "", f' stroke="{TILT}" stroke-width="2" '
                                                    f'stroke-dasharray="3 2"'),
                text(sx - 6, zy + 28, "the tilt moves the boundary here", "small", "end")]
    out += [dot(at(-dist if below else dist), zy, TILT, 6),
            text(at(-dist if below else dist), zy + 44, f"x: {gap} {'below' if below else 'above'}"
                                                        f" {boundary}", "small", "middle")]
    return out


def ruler(views, pos=None, standalone=False):
    """The ruler of every predicting position, one shown (``pos``, default the first)."""
    if views["missing"]["ruler"]:
        return not_applicable(views, "ruler", "ruler-svg", standalone)
    shown = pos if pos is not None else views["predicting"][0]
    body = [title("Ruler: the ten candidates as marks u + \u00bd, and where x = (R + b + "
                  "\u2113)/P falls")]
    lines = []
    for d in views["decisions"]:
        if standalone and d["pos"] != shown:
            continue
        lines += [ruler_title(d)] + ruler_verdict(d)
        body.append(group(ruler_one(views, d, 20, 110, 760), shown_at(d["pos"],
                                                                     d["pos"] == shown)
                          + f' data-height="{ruler_height(d)}"'))
    # the figure as tall as the position shown needs (the page resizes it on a selection)
    tall = next((ruler_height(d) for d in views["decisions"] if d["pos"] == shown), 310)
    return svg(width_for(820, *lines, size=13), tall, body, "ruler-svg", standalone)


def ruler_height(d):
    """The ruler's height at one position: 310 with the magnifier, 240 where it is skipped
    (its one line at 222 says why), so no empty box stands below."""
    return 310 if len(ruler_lens(d, 0, 0, 1)) > 1 else 240


# ----------------------------------------------------------------------------- flaw

FLOOR = -6  # tilt/margin below 10^-6 sits on one "≪ 1" floor: nothing tilts there


def _ratio_range(rows):
    """The log axis of tilt/margin: clipped below at 10^FLOOR, up to a decade above the
    largest ratio (10^2 at least), so that 8.4 sits well clear of the line at 1."""
    logs = [math.log10(r) for d in rows for r in [d["ratio"]] + [p["ratio"] for p in
                                                                 d["per_digit"]] if r]
    return FLOOR, max(2, math.ceil(max(logs, default=0)) + 1)


def ratio_chart(points, labels, x0, y0, width, height, lo, hi, highlight=None):
    """tilt/margin per point on a log axis clipped at 10^lo, with the dashed line at 1 where
    the tilt beats the margin ("fails above"); a ratio below 10^lo drawn on the "≪ 1" floor
    under the axis, None (no tilt, or one that favours the nearest digit) as an open circle
    on the floor below it."""
    dx = width / max(1, len(points))
    out, y = log_axis(x0, y0, height, lo, hi, x0 + width)
    out.append(line(x0, y(0), x0 + width, y(0), "one"))
    out.append(text(x0 + width + 4, y(0) - 4, "fails above 1:", "small"))
    out.append(text(x0 + width + 4, y(0) + 8, "tilt > margin", "small"))
    small = y0 + height + 14
    floor = small + 16
    out.append(text(x0 - 4, small + 3, f"\u226a 1 (< {power(lo)})", "small", "end"))
    out.append(text(x0 - 4, floor + 3, "tilt \u2264 0", "small", "end"))
    for k, (r, label) in enumerate(zip(points, labels)):
        x = x0 + (k + 0.5) * dx
        if r is None:
            out.append(f'<circle cx="{num(x)}" cy="{num(floor)}" r="4" fill="#fff" '
                       f'stroke="{FAINT}" stroke-width="1.5"/>')
        elif math.log10(r) < lo:
            out.append(dot(x, small, MARGIN, 4))
        else:
            colour = TILT if r > 1 else MARGIN
            out.append(dot(x, y(min(hi, math.log10(r))), colour, 5))
        out.append(text(x, floor + 18, label, "small mono", "middle",
                        ' font-weight="bold"' if k == highlight else ""))
    return out


def signed(figure, negate=False):
    """A figure with its sign written out, '+119' or '\u22124\u00b710\u00b9\u2070'; negated when
    asked."""
    minus = figure.startswith("-") != negate
    body = pretty(figure.lstrip("-"))
    return body if body == "0" else ("\u2212" if minus else "+") + body


def attribution(d):
    """The direct logit attribution of logit(nearest) - logit(rival), in words."""
    near, rival = d["nearest"], d["rival"]
    total = signed(d["lead"], negate=d["flipped"])
    return [f"position {d['pos']} (place {power(d['power'])}): logit({near}) \u2212 "
            f"logit({rival}) = {signed(d['margin'])} units from layer 1's FFN (the margin; "
            f"{pretty(d['margin_logits'])} in logits)",
            f"    {signed(d['tilt'], negate=True)} units from the rest of the readout's slots "
            f"(\u2212tilt; {signed(d['tilt_logits'], negate=True)} in logits) = {total} "
            f"units of the sum",
            attribution_verdict(d)]


def attribution_verdict(d):
    """Which digit is written, and why: tilt/margin against 1; a negative tilt favours the
    nearest digit, which then wins by more, so no ratio is compared (7650676663 +
    0149460439's position 28: -10^-9 units); no tilt, nothing tilts."""
    near = d["nearest"]
    if d["flipped"]:
        return (f"tilt/margin = {d['ratio_text']} > 1: {d['chosen']} is written instead of "
                f"{near}")
    if d["tilt"] == "0":
        return f"tilt 0: nothing tilts the comparison, {near} is written"
    if d["tilt"].startswith("-"):
        return f"tilt/margin < 0: the tilt favours {near} as well, which is written"
    return f"tilt/margin = {d['ratio_text']}: below 1, {near} is written"


def attribution_bars(d, x0, y, half=180):
    """logit(nearest) - logit(rival) at one position as three bars on one linear scale, in
    units of the sum: +margin from layer 1's FFN, -tilt from the readout's other slots, and
    their sum (+119, -1000, -881 at 5193798811 + 1806201129's position 23)."""
    margin, tilt = d["margin_f"], d["tilt_f"]
    parts = [("the margin, from layer 1's FFN", margin, MARGIN),
             ("= \u2212tilt: what the readout's other slots add", -tilt, TILT),
             (f"the net: logit({d['nearest']}) \u2212 logit({d['rival']}), in units of the sum",
              margin - tilt, INK)]
    scale = half / max(abs(v) for _, v, _ in parts) if any(v for _, v, _ in parts) else 0
    mid = x0 + half
    out = [line(mid, y - 4, mid, y + 3 * 18, "", f' stroke="{FAINT}"'),
           text(mid, y - 8, "0", "small", "middle")]
    for k, (label, value, colour) in enumerate(parts):
        w = abs(value) * scale
        top = y + k * 18
        out.append(rect(mid - w if value < 0 else mid, top, max(w, 1), 12, "",
                        f' fill="{colour}"'))
        figure_text = signed(d["lead"], negate=d["flipped"]) if k == 2 else \
            signed(d["margin"]) if k == 0 else signed(d["tilt"], negate=True)
        out.append(text(mid + half + 8, top + 10, f"{figure_text}  {label}", "small"))
    return out


def flaw_detail(d, lo, hi, x0, y):
    """At one position: the attribution in words and as linear bars, and every digit against
    the nearest."""
    out = []
    for k, s in enumerate(attribution(d)):
        out.append(text(0, y + 16 * k, s, "t", extra=' font-weight="bold"'
                        if k == 2 and d["flipped"] else ""))
    out += attribution_bars(d, x0, y + 70)
    y += 70 + 3 * 18 + 10
    out.append(text(0, y + 10, f"every digit against {d['nearest']} at position {d['pos']}",
                    "small"))
    points = [p["ratio"] for p in d["per_digit"]]
    labels = ["\u2013" if u == d["nearest"] else str(u) for u in range(10)]
    out += ratio_chart(points, labels, x0, y + 24, 300, 100, lo, hi, d["chosen"])
    return out


def flaw(views, pos=None, standalone=False):
    """Why the published readout fails: per deciding position tilt/margin on a log axis, the
    line at 1 where the tilt beats the margin; the attribution at ``pos``. Without a tilt
    (the repaired readout), why it does not fail: the offset b + ℓ in (0, 1]."""
    if views["missing"]["flaw"]:
        return not_applicable(views, "flaw", "flaw-svg", standalone)
    rows = views["decisions"]
    if not any(d["tilted"] for d in rows):
        return offsets(views, standalone)
    lo, hi = _ratio_range(rows)
    heading = ("Why it fails: the tilt of the published readout against the margin, "
               "tilt/margin per position")
    body = [title(heading),
            text(0, 34, "a direct logit attribution of logit(nearest) \u2212 logit(rival): "
                        "+margin from layer 1's FFN, \u2212tilt from the slot's other "
                        "contents", "small")]
    x0 = 70
    body += ratio_chart([d["ratio"] for d in rows], [str(d["pos"]) for d in rows], x0, 54,
                        560, 150, lo, hi)
    body.append(text(x0 + 280, 264, "deciding position", "small", "middle"))
    shown = pos if pos is not None else (views["flaw_pos"] if views["flaw_pos"] is not None
                                         else rows[0]["pos"])
    lines = []
    for d in rows:
        if standalone and d["pos"] != shown:
            continue
        lines += attribution(d)
        body.append(group(flaw_detail(d, lo, hi, x0, 292), shown_at(d["pos"],
                                                                   d["pos"] == shown)))
    return svg(width_for(x0 + 560 + 110, heading, *lines, size=13), 630, body, "flaw-svg",
               standalone)


def offsets(views, standalone=False):
    """No tilt: each digit is the nearest mark's whenever 0 < b + ℓ <= 1 (the proof's
    interval); the offset b + ℓ of this run per position on that interval."""
    rows = views["decisions"]
    heading = (f"Why it does not fail: {views['model']}'s readout reads only the FFN's own "
               f"error slots, so nothing tilts the comparison")
    body = [title(heading),
            text(0, 36, "the digit is right for every R as long as the offset b + \u2113 stays "
                        "in (0, 1]; this run's offsets (tinyadder prove bounds them over every "
                        "pair)", "small")]
    x0, width, y0, h = 110, 500, 60, 20
    body.append(line(x0, y0 - 6, x0, y0 + len(rows) * h))
    body.append(line(x0 + width, y0 - 6, x0 + width, y0 + len(rows) * h))
    body.append(text(x0, y0 - 10, "0", "small", "middle"))
    body.append(text(x0 + width, y0 - 10, "1", "small", "middle"))
    for i, d in enumerate(rows):
        y = y0 + i * h + 10
        body.append(text(0, y + 4, f"{d['pos']} ({power(d['power'])})", "t mono"))
        body.append(line(x0, y, x0 + width, y, "", ' stroke="#eee"'))
        body.append(dot(x0 + max(0, min(1, d["offset"])) * width, y, MARGIN, 5))
        room = min(d["offset"], 1 - d["offset"])  # to the interval's nearer end
        body.append(text(x0 + width + 10, y + 4, f"b + \u2113 = {d['offset_text']}, "
                                                 f"room {room:.2f}", "small"))
    return svg(width_for(x0 + width + 160, heading, size=13), y0 + len(rows) * h + 16, body,
               "flaw-svg", standalone)


# ----------------------------------------------------------------------------- change

def _sum_digits(x, y, answer, right):
    """The written sum, its wrong digits in vermillion."""
    spans = "".join(f'<tspan fill="{TILT if a != b else INK}"'
                    f'{" font-weight=" + chr(34) + "bold" + chr(34) if a != b else ""}>'
                    f"{a}</tspan>" for a, b in zip(answer, right))
    return f'<text x="{num(x)}" y="{num(y)}" class="t mono">{spans}</text>'


def change_panel(views, v, x0, y0, width):
    """One variant: what changed, its sum, and x per deciding position against the model as
    built (grey)."""
    right = f"{int(views['sum']):0{views['digits'] + 1}d}"
    built = views["variants"][0]
    out = [text(x0, y0, f"{v['label']}: writes", "h"),
           _sum_digits(x0 + text_width(f"{v['label']}: writes ", 13) + 4, y0, v["answer"],
                       right),
           text(x0 + text_width(f"{v['label']}: writes ", 13) + 110, y0,
                "right" if v["correct"] else f"wrong: a + b = {right}", "t")]
    what, y = wrapped(x0, y0 + 18, v["what"], 110, "small", 12)
    out += what
    top, height = y + 10, 150
    rows = v["rows"]
    dx = width / len(rows)

    def at(x):
        return top + (10.5 - max(-0.5, min(10.5, x))) / 11 * height
    out.append(line(x0, top, x0, top + height))
    for u in range(11):
        out.append(text(x0 - 4, at(u) + 3, u, "small", "end"))
    for u in range(10):
        out.append(line(x0, at(u + 0.5), x0 + width, at(u + 0.5), "", ' stroke="#eee"'))
    for k, (row, base) in enumerate(zip(rows, built["rows"])):
        x = x0 + (k + 0.5) * dx
        out.append(dot(x - 4, at(base["x"]), FAINT, 4))
        colour = TILT if row["written"] != right[k] else MARGIN
        if -0.5 <= row["x"] <= 10.5:
            out.append(dot(x + 4, at(row["x"]), colour, 4))
        else:  # off the ruler: a triangle at its edge, pointing the way x went
            tip, base = (at(10.5) - 6, at(10.5)) if row["x"] > 0 else (at(-0.5) + 6, at(-0.5))
            out.append(f'<path d="M{num(x)} {num(base)}L{num(x + 8)} {num(base)}L{num(x + 4)} '
                       f'{num(tip)}Z" fill="{colour}"/>')
        out.append(text(x, top + height + 14, row["written"], "t mono", "middle"))
        out.append(text(x, top + height + 26, row["pos"], "small", "middle"))
    out.append(text(x0 + width + 6, top + height + 14, "written", "small"))
    out.append(text(x0 + width + 6, top + height + 26, "position", "small"))
    out.append(text(x0 - 30, top - 4, "x", "small"))
    off = [r for r in rows if not -0.5 <= r["x"] <= 10.5]
    if off:
        out.append(text(x0, top + height + 42, f"\u25b2\u25bc x off the ruler at "
                                               f"{len(off)} positions, from "
                                               f"{min(off, key=lambda r: r['x'])['x_text']} to "
                                               f"{max(off, key=lambda r: r['x'])['x_text']}",
                        "small"))
    return out, top + height + (64 if off else 56)


TINY = 99  # decades: the FFN-off table writes a value below 10^-99 as "≈ 0", to fit


def _table_value(cell):
    """One format for both runs, whatever numbers each takes: the value to 6 significant
    digits, trailing zeros dropped ('2' for an exact ~2.00000 and a float32 2.0, '996.98'),
    or '≈ 0' for a value below 10^-TINY (jacobli99-28's exact x1 after the FFN,
    ~-1.99·10^-226919005, would not fit a column); ``value_text`` beyond a double's range."""
    if cell[1] is None and cell[2].startswith("~0") or cell[1] is not None and cell[1] < -TINY:
        return "\u2248 0"
    if cell[0] is None:
        return value_text(cell)
    return shown(text_figure(Fraction(cell[0]), 6))


def ffn_off(views, standalone=False):
    """Change one thing for a model outside the family: the run with the last block's FFN
    switched off (``views.ffn_off``) beside the run as built, per position that predicts a
    digit: the digit each writes (vermillion where switching the FFN off changed it) and, for
    a stream of at most ``NUMBERED_SLOTS`` slots, every slot the readout reads."""
    off = views["ffn_off"]
    built = views["residual"][-2]["slots"]  # the stream the readout reads, as built
    heading = (f"Change one thing: layer {off['layer']}'s FFN switched off (its output zeros), "
               f"the attention and the readout as built")
    x0, dx = 120, 72
    cols = [q for q in views["predicting"] if q + 1 < len(off["tokens"])]
    right = views["sum"].zfill(len(views["answer"]))
    body = [title(heading)]
    for y, name, answer, number in ((42, "as built writes", views["answer"], views["number"]),
                                    (60, "FFN off writes", off["answer"], off["number"])):
        body.append(text(0, y, name, "t"))
        body.append(_sum_digits(x0, y, answer, right))
        body.append(text(x0 + text_width(answer, 11) + 20, y, "right" if answer == right else
                         f"wrong (a + b is {right})", "small"))
    y = 92
    rows = [("position", lambda q: q, "small"),
            ("predicts", lambda q: views["tokens"][q + 1]["label"], "small"),
            ("as built writes", lambda q: views["tokens"][q + 1]["text"], "t mono"),
            ("FFN off writes", lambda q: off["tokens"][q + 1], "t mono")]
    for slot, cells in off["values"].items():
        mine = next((r["cells"] for r in built if r["slot"] == slot), None)
        if mine:
            rows.append((f"{slot} as built", lambda q, c=mine: _table_value(c[q]), "small"))
        rows.append((f"{slot} FFN off", lambda q, c=cells: _table_value(c[q]), "small"))
    dx = max([dx] + [text_width(value(q)) + 8 for _, value, _ in rows for q in cols])
    cells = []
    for k, (name, value, cls) in enumerate(rows):
        body.append(text(x0 - 10, y + 16 * k, name, "small", "end"))
        for j, q in enumerate(cols):
            said = str(value(q))
            changed = (name == "FFN off writes" and said != views["tokens"][q + 1]["text"])
            cells.append(text(x0 + (j + 0.5) * dx, y + 16 * k, said, cls, "middle",
                              f' style="fill:{TILT};font-weight:bold"' if changed else ""))
    body.append(f'<g id="off-cells">{"".join(cells)}</g>')
    bottom = y + 16 * len(rows) + 6
    note = ("vermillion: a digit the switch changed; a slot's value is the stream the readout "
            f"reads, after the last FFN (with it off: after the last attention), to 6 "
            f"significant digits; \u2248 0: below {power(-TINY)} in size (an exact run's far "
            f"keys)")
    body.append(text(0, bottom + 8, note, "small"))
    # each run reads back the digits it wrote: x0 holds the position's own digit
    body.append(text(0, bottom + 22, "each run reads back its own digits, so a slot also "
                                     "differs where the position holds a different digit "
                                     "(the digit written one column to the left)", "small"))
    other = off_number_note(views)
    if other:
        body.append(text(0, bottom + 36, other, "small"))
    return svg(width_for(x0 + len(cols) * dx + 10, heading, size=13),
               bottom + (44 if other else 30), body, "change-svg", standalone)


def off_number_note(views):
    """Why the FFN-off run's numbers can differ from the page's: it runs in the file's own
    dtype when the page is exact, since a second exact run would double the page's cost;
    the one dtype, said once, when both runs take the same numbers."""
    built, off = (v.split(" (")[0] for v in (views["number"], views["ffn_off"]["number"]))
    if built == off:
        return f"both runs take {built} numbers"
    return (f"the FFN-off run takes {off} numbers, the file's own dtype, where the page's run "
            f"takes {built}: a second {built} run would double the page's cost, so the digits "
            f"it writes are {off}'s")


def change(views, variant="built", standalone=False):
    """Change one thing: each variant's x = (R + b + ℓ)/P per deciding position (coloured;
    vermillion where the digit is wrong) against the model as built (grey); one shown in the
    page, every variant in the figure."""
    if views["missing"]["change"] and views.get("ffn_off"):
        return ffn_off(views, standalone)
    if views["missing"]["change"]:
        return not_applicable(views, "change", "change-svg", standalone)
    heading = ("Change one thing: where x falls at each deciding position (grey: as built), "
               "and the digits written")
    body = [title(heading)]
    y = 44
    lines = [heading] + [v["what"][:130] for v in views["variants"]]
    width, last = 0, y
    for k, v in enumerate(views["variants"]):
        if standalone:  # every variant, two to a row
            part, bottom = change_panel(views, v, 40 + (k % 2) * 660, y, 560)
            body += part
            width = max(width, 40 + (k % 2) * 660 + 640)
            last = max(last, bottom)
            y = last if k % 2 else y
        else:
            part, bottom = change_panel(views, v, 40, 44, 600)
            body.append(group(part, f' data-variant="{v["key"]}"' +
                              ("" if v["key"] == variant else ' display="none"')))
            y = max(y, bottom)
    if standalone:
        y = max(y, last)
    return svg(width_for(max(760, width), *lines), y, body, "change-svg", standalone)


# ----------------------------------------------------------------------------- parameters

def parameters(views, standalone=False):
    """The model as slot lanes (rows) and stages (columns); each counted parameter a chip
    spanning the lanes it writes (a dot on each), or, for a query or key parameter, which
    writes no slot, a chip in the row of attention scores. Hover a chip: its tensor entry,
    and the lanes it reads (purple) and writes (orange)."""
    slots = views["slots"]
    columns = [p["stage"] for p in views["program"]]
    per_stage = {}
    for p in views["params"]:
        per_stage[p["stage"]] = per_stage.get(p["stage"], 0) + 1
    counted = views.get("param_counted", per_stage)
    drawn = len(views["params"])
    all_same = all(per_stage.get(p["stage"], 0) == counted.get(p["stage"], 0)
                   for p in views["program"])
    chips = chip_values(views) if drawn != views["param_total"] else []
    x0, y0, col_w, lane_h = 90, 104 if all_same else 118 + 14 * len(chips), 150, 22
    said = (f"The {drawn} parameters on the model's slots" if not chips
            else f"{drawn} chips behind the {views['param_total']} counted parameters, on the "
                 f"model's slots")
    legend = ("lanes are residual slots; dots: \u25cf written, \u25cb read by that stage; a "
              "chip is one " + ("parameter" if all_same else "distinct value") + ", spanning "
              "the lanes it writes (hover one); " +
              ("(n) per stage" if all_same else "above each stage: chips drawn, parameters "
               "counted"))
    body = [title(said),
            text(0, 34, legend, "small"),
            text(x0 - 6, y0 - 30, "scores", "small mono", "end")]
    body += [text(0, 48 + 14 * k, s, "small") for k, s in enumerate(chips)]
    for i, s in enumerate(slots):
        y = y0 + i * lane_h
        body.append(line(x0, y, x0 + len(columns) * col_w, y, "lane",
                         f' data-slot="{escape(s)}"'))
        body.append(text(x0 - 6, y + 4, s, "small mono", "end"))
    for j, prog in enumerate(views["program"]):
        x = x0 + j * col_w + 14
        body.append(text(x0 + j * col_w + col_w / 2, y0 - 50,
                         f'{prog["stage"]} ({per_stage.get(prog["stage"], 0)})'
                         if all_same else prog["stage"], "t", "middle"))
        if not all_same:
            body.append(text(x0 + j * col_w + col_w / 2, y0 - 64,
                             stage_count(prog["stage"], per_stage, counted), "small", "middle"))
        for s in prog["writes"]:
            body.append(dot(x, y0 + slots.index(s) * lane_h, INK))
        for s in prog["reads"]:
            body.append(f'<circle cx="{num(x + 10)}" cy="{num(y0 + slots.index(s) * lane_h)}" '
                        f'r="4" fill="#fff" stroke="{INK}"/>')
    used = {}
    for k, p in enumerate(views["params"]):
        j = columns.index(p["stage"])
        n = used.get(j, 0)
        used[j] = n + 1
        x = x0 + j * col_w + 30 + n * 9  # at most 13 per stage (the embedding)
        lanes = sorted(slots.index(s) for s in p["writes"])
        if lanes:
            top, bottom = y0 + lanes[0] * lane_h - 8, y0 + lanes[-1] * lane_h + 8
        else:
            top, bottom = y0 - 38, y0 - 22
        body.append(rect(x, top, 7, bottom - top, "chip", f' fill="{TILT}" data-param="{k}"'))
        for lane in lanes[1:-1] if len(lanes) > 2 else []:
            body.append(dot(x + 3.5, y0 + lane * lane_h, "#fff", 1.5))
    return svg(width_for(x0 + len(columns) * col_w + 20, legend, *chips, size=10),
               y0 + len(slots) * lane_h + 10, body, "params-svg", standalone)


def chip_values(views):
    """What the chips show, against ``params --rules``' distinct count, as lines: a chip is one
    distinct value of one tensor (per token row in the embedding), so a value two tensors hold
    is two chips, and a value only in tensors with no counted parameter none. jacobli99-28:
    40 chips, 35 values, the other 4 of its 39 model-wide in blocks.0.mlp.b_in (from C)."""
    drawn = len(views["params"])
    values = len({p["value"] for p in views["params"]})
    said = [f"a chip per tensor and distinct value (per token row in the embedding): {values} "
            f"different values among the {drawn}" + (
                f", {drawn - values} chips repeating a value another tensor or token row holds"
                if values < drawn else "")]
    wide = (views.get("rule_counts") or {}).get("distinct", [None])[0]
    if wide is not None and wide > values:
        said.append(f"params --rules counts {wide} distinct model-wide: {wide - values} more "
                    f"sit only in tensors with no counted parameter")
    elif wide == values:
        said.append(f"params --rules counts the same {wide} distinct model-wide")
    return said


def stage_count(stage, drawn, counted):
    """'19 drawn, 11 counted': the chips of a stage (distinct values per tensor, per token
    row in the embedding) and the ledger's count of its parameters."""
    d, c = drawn.get(stage, 0), counted.get(stage, 0)
    return f"{d} drawn, {c} counted"


FIGURES = {
    "attention": lambda v, s: attention(v, s.get("head", "L0.h3"), s.get("mode", "softmax1"),
                                        s.get("pos"), True),
    "place": lambda v, s: place(v, s.get("pos"), s.get("mode", "softmax1"), True),
    "count": lambda v, s: count(v, s.get("pos"), s.get("mode", "softmax1"), True),
    "slots": lambda v, s: residual(v, s.get("stage", "L0.mlp"), s.get("pos"), True),
    "sum": lambda v, s: running_sum(v, s.get("pos"), True),
    "ruler": lambda v, s: ruler(v, s.get("pos"), True),
    "flaw": lambda v, s: flaw(v, s.get("pos"), True),
    "change": lambda v, s: change(v, s.get("variant", "built"), True),
}


def defaults(views):
    """The state a page opens in: the first wrong position at the readout when the model
    errs (5193798811+1806201129 opens at position 23), else the first predicting position."""
    flaw = views["flaw_pos"]
    return {"pos": flaw if flaw is not None else views["predicting"][0],
            "stage": "readout" if flaw is not None else "embed",
            "head": views["place_head"] or next(iter(views["heads"])), "mode": "softmax1",
            "variant": "built"}
