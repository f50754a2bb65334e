"""The explorer's views drawn as SVG, from ``views.build_views`` data and a state (position,
stage, head, softmax or softmax1). The page embeds these drawings and its script recolours
and shows parts of them; ``tinyadder figure`` writes one as a static file.

Colours are colour-blind safe: Okabe-Ito for categories, viridis for attention weights (log10),
ColorBrewer PuOr for signed values (purple negative, orange positive), each slot row on its
own symmetric-log scale. A colour is a class (``s0``..``s8``, ``d0``..``d10``) so the page
can change it; ``CSS`` defines them for the standalone files and the page alike.

>>> classes([None, 0.0, -1.5], -3, 0)          # log10 values on the viridis scale
'zie'
>>> classes([[-2.0, 0.3, "-2"], [5e9, 9.7, "5e9"], [0.0, None, "0"]], 0, 9, signed=True)
'ekz'
"""

from html import escape
import math
import re

SEQ = ("#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962",
       "#addc30", "#fde725")                       # viridis, dark = small
DIV = ("#2d004b", "#542788", "#8073ac", "#b2abd2", "#d8daeb", "#f7f7f7", "#fee0b6",
       "#fdb863", "#e08214", "#b35806", "#7f3b08")  # PuOr: purple < 0 < orange
ROLE = {"a": "#0072B2", "b": "#E69F00", "special": "#999999", "sum": "#009E73"}
MARGIN, TILT, INK, FAINT = "#0072B2", "#D55E00", "#222222", "#bbbbbb"
ZERO = "z"     # class letter of a zero (or masked) value
LEVELS = 5     # diverging levels on each side of zero

CSS = "\n".join(
    [f".s{i}{{fill:{c}}}" for i, c in enumerate(SEQ)] +
    [f".d{i}{{fill:{c}}}" for i, c in enumerate(DIV)] +
    [".sz{fill:#ffffff}", ".blank{fill:none}", ".dz{fill:#f7f7f7}", ".na{fill:#e4e4e4}",
     "text{font-family:sans-serif;fill:#222}", ".t{font-size:11px}", ".small{font-size:9px}",
     ".h{font-size:13px;font-weight:bold}", ".mono{font-family:monospace}",
     ".chg{fill:none;stroke:#000;stroke-width:1.5}", ".chg2{fill:none;stroke:#fff;stroke-width:1}",
     ".dep{stroke:#000;stroke-width:1.5}",
     ".sel{fill:none;stroke:#000;stroke-width:2}", ".ax{stroke:#888;stroke-width:1}",
     ".lane{stroke:#ccc;stroke-width:6}", ".lane.on{stroke:#fdb863}",
     ".lane.rd{stroke:#b2abd2}", ".chip{stroke:#222;stroke-width:1}",
     ".chip.on{stroke-width:3}"])


# ----------------------------------------------------------------------------- scales

def negative(cell):
    """Whether a cell's value is below zero, from its text (its float may be 0.0 or None)."""
    return cell[2].lstrip("~").startswith("-")


def level(log, lo, hi, steps):
    """0..steps-1: where log10 |x| falls between lo and hi (clipped)."""
    t = 1.0 if hi <= lo else (log - lo) / (hi - lo)
    return max(0, min(steps - 1, round(t * (steps - 1))))


def classes(cells_or_logs, lo, hi, signed=False):
    """One letter per value: 'a' + colour index ('z' for zero). Sequential: the index of
    log10 |x| between lo and hi among the 9 viridis steps. ``signed``: PuOr, 5 = zero, 4..0
    ever more negative, 6..10 ever more positive, each on a log scale of |x|."""
    out = []
    for c in cells_or_logs:
        log, positive = (c[1], negative(c) is False) if isinstance(c, list) else (c, True)
        if log is None:
            out.append(ZERO)
        elif signed:
            step = 1 + level(log, lo, hi, LEVELS)
            out.append(chr(97 + 5 + (step if positive else -step)))
        else:
            out.append(chr(97 + level(log, lo, hi, len(SEQ))))
    return "".join(out)


def css_class(prefix, letter):
    """The class of a colour letter: 's' + 'c' -> 's2'; 'z' (zero) -> 'sz'."""
    return prefix + ("z" if letter == ZERO else str(ord(letter) - 97))


SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074"
                                           "\u2075\u2076\u2077\u2078\u2079")


def power(e):
    """10^e as text with a superscript exponent: power(-3) == '10\u207b\u00b3'."""
    return "10" + str(e).translate(SUPERSCRIPT)


def range_text(lo_hi):
    """The legend of one row's scale: '|x| 10^-11 .. 10^1'."""
    if lo_hi is None:
        return ""
    lo, hi = lo_hi
    return f"|x| {power(math.floor(lo))} .. {power(math.ceil(hi))}"


def log_range(cells):
    logs = [c[1] for c in cells if c is not None and c[1] is not None]
    return (min(logs), max(logs)) if logs else (0.0, 0.0)


def attention_scale(views, head, mode):
    """(lo, hi) of a head's log10 weights under a mode: its smallest weight to 1."""
    rows = views["heads"][head][mode]
    lo, hi = log_range([c for row in rows for c in row])
    return lo, max(hi, 0.0)


def attention_classes(views, head, mode):
    """Per query row, one class letter per key (and the sink under softmax1)."""
    lo, hi = attention_scale(views, head, mode)
    return [classes(row, lo, hi) for row in views["heads"][head][mode]]


def residual_rows(views):
    """Row names of the residual grid: every slot of the widest stage, then the logits."""
    slots = [s["slot"] for s in max((s["slots"] for s in views["residual"][:-1]), key=len)]
    return slots, [s["slot"] for s in views["residual"][-1]["slots"] if s["slot"] not in slots]


def residual_scales(views):
    """{stage short: {row name: (lo, hi)}}: log10 |x| over the positions, one
    symmetric-log scale per slot row and stage, so `count` (10^-10) and `cand0` (10^12) are
    each visible, whatever the other rows hold."""
    return {stage["short"]: {row["slot"]: log_range(row["cells"]) for row in stage["slots"]}
            for stage in views["residual"]}


def residual_classes(views):
    """{stage short: {row: class letters per position}}; rows a stage lacks are absent."""
    scales = residual_scales(views)
    return {stage["short"]: {row["slot"]: classes(row["cells"],
                                                  *scales[stage["short"]][row["slot"]], True)
                             for row in stage["slots"]} for stage in views["residual"]}


# ----------------------------------------------------------------------------- SVG bits

def num(x):
    """A coordinate: at most one decimal."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def text(x, y, s, cls="t", anchor="start", extra=""):
    return (f'<text x="{num(x)}" y="{num(y)}" class="{cls}"'
            f'{"" if anchor == "start" else f" text-anchor={chr(34)}{anchor}{chr(34)}"}'
            f'{extra}>{escape(str(s))}</text>')


def rect(x, y, w, h, cls="", extra=""):
    c = f' class="{cls}"' if cls else ""
    return f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}"{c}{extra}/>'


def line(x1, y1, x2, y2, cls="ax", extra=""):
    return (f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
            f'class="{cls}"{extra}/>')


def svg(width, height, body, ident="", standalone=False, extra=""):
    """An <svg> element. ``standalone`` (a figure file) adds the colour classes, a white
    background and a <title> from its first line, the heading, for screen readers (the page
    has its own headings, and a title would cover its hover read-outs)."""
    title = re.sub(r"<[^>]+>", "", body[0])  # the heading's text, already escaped
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {num(width)} '
            f'{num(height)}" width="{num(width)}" height="{num(height)}"'
            f'{" role=" + chr(34) + "img" + chr(34) if standalone else ""}'
            f'{f" id={chr(34)}{ident}{chr(34)}" if ident else ""}{extra}>')
    style = (f'<title>{title}</title><style>{CSS}</style>'
             f'<rect width="100%" height="100%" fill="#fff"/>' if standalone else "")
    return head + style + "".join(body) + "</svg>\n"


def colour_bar(x, y, lo, hi, label, ident, width=180):
    """A legend: the viridis steps from lo to hi (log10), labelled at both ends."""
    n = len(SEQ)
    out = [text(x, y - 4, label, "small")]
    for i in range(n):
        out.append(rect(x + i * width / n, y, width / n, 10, f"s{i}"))
    out.append(text(x, y + 21, f"{lo:.0f}", "small", extra=f' id="{ident}-lo"'))
    out.append(text(x + width, y + 21, f"{hi:.0f}", "small", "end", f' id="{ident}-hi"'))
    return out


def hidden_unless(shown):
    """The attribute that hides a per-position part the page shows when its position is."""
    return "" if shown else ' display="none"'


def cell_size(t, room=900, most=18, least=7):
    return max(least, min(most, room / t))


# ----------------------------------------------------------------------------- attention

def attention(views, head="L0.h3", mode="softmax1", pos=None, standalone=False):
    """Heat map of one head: queries as rows, keys as columns, log10(weight) in viridis,
    the softmax1 sink (1 - sum of the row) in its own column; masked keys (k > q) blank."""
    rows = views["heads"][head][mode]
    tokens = views["tokens"]
    t = len(tokens)
    c = cell_size(t + 2, room=760)
    x0, y0 = 56, 58
    sink_x = x0 + (t + 0.6) * c
    why = (" (the sink column is the weight given to nothing)" if mode == "softmax1" else
           " (no sink: each row sums to 1)")
    body = [text(0, 16, f"{head}: log10 of each attention weight, {mode}{why}", "h",
                 extra=' id="attn-title"')]
    letters = attention_classes(views, head, mode)
    cells = []
    for q, row in enumerate(letters):
        for k in range(q + 2):  # keys 0..q, then the sink (blank under an ordinary softmax)
            x = sink_x if k == q + 1 else x0 + k * c
            cls = css_class("s", row[k]) if k < len(row) else "blank"
            cells.append(rect(x, y0 + q * c, c, c, cls))
    body.append(f'<g id="attn-cells">{"".join(cells)}</g>')
    step = 1 if c >= 11 else 5
    for i, tok in enumerate(tokens):
        if i % step == 0 or tok["role"] == "special":
            body.append(text(x0 + i * c + c / 2, y0 - 6, tok["text"] if c >= 11 else i,
                             "small", "middle"))
            body.append(text(x0 - 4, y0 + i * c + c * 0.75,
                             f"{i} {tok['text']}" if c >= 11 else i, "small", "end"))
    body.append(text(sink_x + c / 2, y0 - 6, "sink" if mode == "softmax1" else "", "small",
                     "middle", ' id="attn-sinklabel"'))
    body.append(text(x0, y0 - 22, "keys (earlier positions) \u2192", "small"))
    body.append(text(12, y0 + t * c / 2, "queries \u2193", "small", "middle",
                     f' transform="rotate(-90 12 {num(y0 + t * c / 2)})"'))
    lo, hi = attention_scale(views, head, mode)
    legend_y = y0 + t * c + 30
    body += colour_bar(x0, legend_y, lo, hi, "log10(weight): dark small, yellow near 1",
                       "attn")
    sel = pos if pos is not None else -1
    body.append(rect(x0 - 1, y0 + sel * c - 1, (t + 1.6) * c + 2, c + 2, "sel",
                     ' id="attn-sel"' + ("" if pos is not None else ' visibility="hidden"')))
    width = sink_x + c + 12
    geometry = (f' data-x0="{num(x0)}" data-y0="{num(y0)}" data-c="{c:.4f}"'
                f' data-sink="{num(sink_x)}"')
    return svg(width, legend_y + 34, body, "attn-svg", standalone, geometry)


# ----------------------------------------------------------------------------- place values

def _bands(logs, gap=40):
    """Split sorted log10 values into bands separated by more than ``gap`` decades:
    [(lo, hi)], highest band first (e^-40 weights and e^-1000 weights never share an axis)."""
    values = sorted(set(round(v, 6) for v in logs if v is not None))
    if not values:
        return [(-1.0, 0.0)]
    bands, start = [], values[0]
    for a, b in zip(values, values[1:]):
        if b - a > gap:
            bands.append((start, a))
            start = b
    bands.append((start, values[-1]))
    return [(math.floor(lo) - 1, math.ceil(hi) + 1) for lo, hi in reversed(bands)]


def decay_head(views):
    """The head whose weights decay with distance: the live head with the widest log range."""
    def spread(h):
        lo, hi = attention_scale(views, h, "softmax1")
        return hi - lo
    return max(views["heads"], key=spread)


def decay(views, q, x0, y0, width, height):
    """One query's log10 weights against key position, one band per cluster of magnitudes."""
    head = decay_head(views)
    row = views["heads"][head]["softmax1"][q]
    tokens = views["tokens"]
    t = len(tokens)
    dx = width / (t + 1)
    bands = _bands([c[1] for c in row])
    band_h = (height - 14 * (len(bands) - 1)) / len(bands)
    out = [text(x0, y0 - 8, f"{head}: log10 weight of each key seen from query {q} "
                            f"('{tokens[q]['text']}'); the sink is the weight given to nothing",
                "t")]
    for b, (lo, hi) in enumerate(bands):
        top = y0 + b * (band_h + 14)
        out.append(line(x0, top, x0, top + band_h))
        out.append(text(x0 - 4, top + 8, f"{hi:.0f}", "small", "end"))
        out.append(text(x0 - 4, top + band_h, f"{lo:.0f}", "small", "end"))
        dots, path = {}, []
        for k, c in enumerate(row):
            if c[1] is None or not lo <= c[1] <= hi:
                continue
            x = x0 + (k + 0.5) * dx
            y = top + (hi - c[1]) / (hi - lo) * band_h
            role = tokens[k]["role"] if k <= q else "sink"
            path.append(f"{'M' if not path else 'L'}{num(x)} {num(y)}")
            dots.setdefault(role, []).append(f"M{num(x)} {num(y)}h0")
            if role == "special" or role == "sink":
                label = "sink" if role == "sink" else tokens[k]["text"]
                out.append(text(x + 5, y - 4, f"{label} {c[2]}", "small"))
        out.append(f'<path d="{"".join(path)}" fill="none" stroke="{FAINT}"/>')
        for role, d in dots.items():
            colour = ROLE.get(role, INK)
            out.append(f'<path d="{"".join(d)}" stroke="{colour}" stroke-width="7" '
                       f'stroke-linecap="round"/>')
    out.append(line(x0, y0 + height, x0 + width, y0 + height))
    out.append(text(x0 + width / 2, y0 + height + 26, "key position", "small", "middle"))
    for i, (role, name) in enumerate((("a", "digit of a"), ("b", "digit of b"),
                                      ("sum", "generated"), ("special", "special"))):
        out.append(f'<circle cx="{num(x0 + 4 + i * 78)}" cy="{num(y0 + height + 38)}" r="4" '
                   f'fill="{ROLE[role]}"/>')
        out.append(text(x0 + 11 + i * 78, y0 + height + 42, name, "small"))
    step = 1 if dx >= 14 else 5
    for k in range(0, t, step):
        out.append(text(x0 + (k + 0.5) * dx, y0 + height + 12, k, "small", "middle"))
    return out


def count_curve(views, x0, y0, width, height, pos=None):
    """The count slot per position on a log scale: the saw-tooth 10^-1 .. 10^-N, reset at '+',
    negative (purple) from '='."""
    cells = views["count"]
    t = len(cells)
    dx = width / t
    lo, hi = log_range(cells)
    lo, hi = math.floor(lo), math.ceil(hi)
    out = [text(x0, y0 - 8, "count after layer 0 attention: log10 |count| per position "
                            "(orange positive, purple negative)", "t")]
    out.append(line(x0, y0, x0, y0 + height))
    out.append(line(x0, y0 + height, x0 + width, y0 + height))
    for v in range(lo, hi + 1):
        if (v - lo) % max(1, (hi - lo) // 6) == 0:
            y = y0 + (hi - v) / max(1, hi - lo) * height
            out.append(text(x0 - 4, y + 3, power(v), "small", "end"))
    pts, dots = [], {"pos": [], "neg": []}
    for i, c in enumerate(cells):
        if c[1] is None:
            continue
        x = x0 + (i + 0.5) * dx
        y = y0 + (hi - c[1]) / max(1, hi - lo) * height
        pts.append(f"{'M' if not pts else 'L'}{num(x)} {num(y)}")
        dots["neg" if negative(c) else "pos"].append(f"M{num(x)} {num(y)}h0")
    out.append(f'<path d="{"".join(pts)}" fill="none" stroke="{FAINT}"/>')
    for key, colour in (("pos", DIV[8]), ("neg", DIV[1])):
        out.append(f'<path d="{"".join(dots[key])}" stroke="{colour}" stroke-width="7" '
                   f'stroke-linecap="round"/>')
    step = 1 if dx >= 14 else 5
    for i, tok in enumerate(views["tokens"]):
        if i % step == 0:
            out.append(text(x0 + (i + 0.5) * dx, y0 + height + 12, i, "small", "middle"))
        if tok["role"] == "special":
            out.append(text(x0 + (i + 0.5) * dx, y0 + height + 24, tok["text"], "small",
                            "middle"))
    for i in range(t):
        c = cells[i]
        out.append(f'<g data-show-pos="{i}"{hidden_unless(i == pos)}>'
                   + line(x0 + (i + 0.5) * dx, y0, x0 + (i + 0.5) * dx, y0 + height, "sel")
                   + text(x0 + (i + 0.5) * dx + 4, y0 + 10, f"count = {c[2]}", "small")
                   + "</g>")
    return out


def place_values(views, pos=None, standalone=False):
    """The decay curve of the selected query (every query pre-drawn, one shown) above the
    count saw-tooth."""
    t = len(views["tokens"])
    width = max(600, min(900, 26 * t))
    body = [text(0, 16, "Place values: layer 0 head 3 turns distance into powers of ten", "h")]
    shown = pos if pos is not None else views["predicting"][0]
    for q in ([shown] if standalone else range(t)):
        body.append(f'<g data-show-pos="{q}"{hidden_unless(q == shown)}>' + "".join(
            decay(views, q, 60, 50, width, 190)) + "</g>")
    body += count_curve(views, 60, 310, width, 150, shown)
    return svg(width + 120, 510, body, "place-svg", standalone)


# ----------------------------------------------------------------------------- residual

def residual(views, stage="L0.mlp", pos=None, standalone=False):
    """Slot x position grid after one stage, each row on its own symmetric-log scale;
    outlined cells changed at this stage, crossed cells depart from their intended value.
    The readout stage colours the logits; its outlines mark each position's winner."""
    slot_rows, logit_rows = residual_rows(views)
    letters = residual_classes(views)
    scales = residual_scales(views)
    stages = {s["short"]: s for s in views["residual"]}
    t = len(views["tokens"])
    c = cell_size(t, room=820, most=20)
    h = 14
    x0, y0 = 78, 50
    gap = 26
    rows = slot_rows + logit_rows
    ys = [y0 + i * h + (gap if i >= len(slot_rows) else 0) for i in range(len(rows))]
    label = next(s["label"] for s in views["stages"] if s["short"] == stage)
    body = [text(0, 16, f"Residual stream after {label} ({stage})", "h",
                 extra=' id="resid-title"')]
    cells = []
    for r, name in enumerate(rows):
        row = letters[stage].get(name)
        for p in range(t):
            ch = row[p] if row is not None else None
            cls = "na" if ch is None else css_class("d", ch)
            cells.append(rect(x0 + p * c, ys[r], c, h, cls))
    body.append(f'<g id="resid-cells">{"".join(cells)}</g>')
    marks = []
    for r, name in enumerate(rows):
        for srow in stages[stage]["slots"]:
            if srow["slot"] != name:
                continue
            for p in range(t):
                if srow["changed"][p]:
                    marks.append(rect(x0 + p * c + 1, ys[r] + 1, c - 2, h - 2, "chg"))
                    marks.append(rect(x0 + p * c + 2.5, ys[r] + 2.5, c - 5, h - 5, "chg2"))
                if srow["departs"][p]:
                    x, y = x0 + p * c, ys[r]
                    marks.append(f'<path d="M{num(x + 2)} {num(y + 2)}L{num(x + c - 2)} '
                                 f'{num(y + h - 2)}M{num(x + c - 2)} {num(y + 2)}L{num(x + 2)} '
                                 f'{num(y + h - 2)}" class="dep"/>')
    body.append(f'<g id="resid-marks">{"".join(marks)}</g>')
    ranges = []
    for r, name in enumerate(rows):
        body.append(text(x0 - 4, ys[r] + 11, name, "small mono", "end"))
        lo_hi = scales[stage].get(name)
        ranges.append(text(x0 + t * c + 6, ys[r] + 11, range_text(lo_hi), "small"))
    body.append(f'<g id="resid-ranges">{"".join(ranges)}</g>')
    body.append(text(x0, ys[len(slot_rows)] - 6, "readout: logit of each digit (the largest "
                                                "wins; outlined at the readout stage)", "small"))
    step = 1 if c >= 12 else 5
    bottom = ys[-1] + h
    for p, tok in enumerate(views["tokens"]):
        if p % step == 0:
            body.append(text(x0 + (p + 0.5) * c, y0 - 18, p, "small", "middle"))
        if c >= 12 or tok["role"] == "special":
            body.append(text(x0 + (p + 0.5) * c, y0 - 6, tok["text"], "small", "middle"))
    sel = -10 if pos is None else pos
    body.append(rect(x0 + sel * c, y0 - 2, c, bottom - y0 + 4, "sel", ' id="resid-sel"'))
    lx = x0
    body.append(text(lx, bottom + 22, "colour: each row its own log scale of |x| at this stage; "
                                      "purple negative, orange positive, pale small, "
                                      "grey: slot not there yet", "small"))
    for i, col in enumerate(DIV):
        body.append(rect(lx + i * 16, bottom + 30, 16, 10, f"d{i}"))
    body.append(text(lx + 11 * 16 + 8, bottom + 39, "\u25a1 changed by this stage   "
                                                    "\u2715 departs from its intended value "
                                                    "(probes)", "small"))
    geometry = (f' data-x0="{num(x0)}" data-y0="{num(y0)}" data-c="{c:.4f}" data-h="{h}"'
                f' data-ys="{",".join(num(y) for y in ys)}"')
    return svg(max(760, x0 + t * c + 110), bottom + 50, body, "resid-svg", standalone,
               geometry)


# ----------------------------------------------------------------------------- running sum

def running_sum(views, pos=None, standalone=False):
    """What is left to write, per position that predicts a digit: a bar of log10 R and R."""
    rows = views["decisions"]
    hi = max((d["remaining"][1] or 0) for d in rows)
    hi = max(1.0, math.ceil(hi))
    bar_w = 360
    y0, h = 46, 20
    body = [text(0, 16, "Running sum: what is left to write, a + b minus the digits "
                        "already emitted (log scale)", "h")]
    body.append(text(0, 34, "position, token", "small"))
    body.append(text(110, 34, f"log10 R from 0 to {hi:.0f}", "small"))
    body.append(text(120 + bar_w, 34, f"R = (sum of digit_pos) / {views['digit_scale']}, "
                                      f"and the digit written next", "small"))
    for i, d in enumerate(rows):
        y = y0 + i * h
        tok = views["tokens"][d["pos"]]
        body.append(f'<g data-pos="{d["pos"]}">')
        body.append(text(0, y + 14, f"{d['pos']} '{tok['text']}'", "t mono"))
        log = d["remaining"][1]
        length = 0 if log is None or log < 0 else log / hi * bar_w
        body.append(rect(110, y + 3, max(1.0, length), h - 6, "", f' fill="{MARGIN}"'))
        body.append(text(120 + bar_w, y + 14, f"{d['remaining_text']}  \u2192 writes "
                                              f"{d['winner']}", "t mono"))
        body.append("</g>")
    width = 120 + bar_w + 8 * max(len(d["remaining_text"]) for d in rows) + 120
    sel = next((i for i, d in enumerate(rows) if d["pos"] == pos), -10)  # -10: off the chart
    body.append(rect(0, y0 + sel * h, width, h, "sel", ' id="sum-sel"'))
    return svg(width, y0 + len(rows) * h + 10, body, "sum-svg", standalone,
               f' data-y0="{y0}" data-h="{h}"')


# ----------------------------------------------------------------------------- ruler

def ruler_one(views, d, x0, y0, width):
    """The ten marks u + 1/2, the dot where the remaining value falls, each candidate's
    error and the winner with its margin."""
    unit = width / 10
    out = [text(x0, y0 - 30, f"position {d['pos']}: the remaining value, in units of the "
                             f"digit being decided, falls at {d['x']:.10g}", "t")]
    out.append(line(x0, y0, x0 + width, y0, "ax", ' stroke-width="2"'))
    for v in range(11):
        out.append(line(x0 + v * unit, y0 - 4, x0 + v * unit, y0 + 4))
        out.append(text(x0 + v * unit, y0 - 8, v, "small", "middle"))
    for u in range(10):
        x = x0 + (u + 0.5) * unit
        win = str(u) == d["winner"]
        colour = MARGIN if win else INK
        out.append(line(x, y0 - 14, x, y0 + 14, "", f' stroke="{colour}" stroke-width='
                                                    f'"{3 if win else 1.5}"'))
        out.append(text(x, y0 + 28, f"{u}", "t", "middle"))
        out.append(text(x, y0 + 42, d["errors"][u][2], "small", "middle",
                        ' font-weight="bold"' if win else ""))
    dot = x0 + max(-0.2, min(10.2, d["x"])) * unit
    out.append(f'<circle cx="{num(dot)}" cy="{num(y0)}" r="6" fill="{TILT}"/>')
    out.append(text(x0, y0 + 58, "err under each mark: 10^6 |distance from the dot|, "
                                 "scaled by the place value", "small"))
    tail = "" if d["winner"] == d["intended"] else f"; intended {d['intended']}"
    out.append(text(x0, y0 + 76, f"winner {d['winner']}, margin {d['margin'][2]} over "
                                 f"runner-up {d['runner']}{tail}", "t"))
    # a magnifier: the dot and the marks within 0.6 of it, ten times larger
    zy, lo = y0 + 120, d["x"] - 0.6
    scale = width / 1.2
    out.append(text(x0, zy - 22, "magnified around the dot: its distance to the nearest marks",
                    "small"))
    out.append(line(x0, zy, x0 + width, zy, "ax", ' stroke-width="2"'))
    for u in range(10):
        if abs(d["signed"][u]) <= 0.6:
            x = x0 + (u + 0.5 - lo) * scale
            colour = MARGIN if str(u) == d["winner"] else INK
            out.append(line(x, zy - 12, x, zy + 12, "", f' stroke="{colour}" stroke-width="2"'))
            out.append(text(x, zy + 26, f"mark {u} + \u00bd: {d['signed'][u]:+.10g}",
                            "small", "middle"))
    out.append(f'<circle cx="{num(x0 + 0.6 * scale)}" cy="{num(zy)}" r="6" fill="{TILT}"/>')
    return out


def ruler(views, pos=None, standalone=False):
    """The ruler of every predicting position, one shown (``pos``, default the first)."""
    shown = pos if pos is not None else views["predicting"][0]
    body = [text(0, 16, "Ruler: the smallest error wins", "h")]
    for d in views["decisions"]:
        if standalone and d["pos"] != shown:
            continue
        body.append(f'<g data-show-pos="{d["pos"]}"{hidden_unless(d["pos"] == shown)}>'
                    + "".join(ruler_one(views, d, 20, 70, 760)) + "</g>")
    if shown not in views["predicting"]:
        body.append(text(20, 70, "this position predicts no digit of the sum", "t"))
    return svg(820, 240, body, "ruler-svg", standalone)


# ----------------------------------------------------------------------------- flaw

def _log_bar(x0, y, log, lo, hi, width, colour, h=8, extra=""):
    length = 0 if log is None else max(2.0, (log - lo) / (hi - lo) * width)
    return rect(x0, y, length, h, "", f' fill="{colour}"{extra}')


def flaw(views, pos=None, standalone=False):
    """Margin against tilt, as differences. Overview: for each predicting position, the
    error gap between the digit with the smallest error and its closest rival (blue) and
    how much the published readout's tilt favours the rival (vermillion); the rival wins
    where the tilt bar is longer. Detail for ``pos``: both differences for every digit."""
    rows = views["decisions"]
    body = [text(0, 16, "Why it fails: the margin against the tilt of the published "
                        "readout (differences, log10)", "h")]
    if not any(d["tilted"] for d in rows):
        body.append(text(0, 40, f"{views['model']}: the readout reads only the FFN's own "
                                f"error slots, so nothing tilts the comparison", "t"))
        return svg(820, 60, body, "flaw-svg", standalone)
    logs = [c[1] for d in rows for c in (d["err_gap"], d["tilt_gap"]) + tuple(
        d["d_err"]) + tuple(d["d_tilt"]) if c[1] is not None]
    lo, hi = math.floor(min(logs)) - 1, math.ceil(max(logs))
    x0, width, y0, h = 150, 460, 60, 26
    body.append(text(x0, 40, f"log10 of the difference, {lo} to {hi}", "small"))
    body.append(text(0, 40, "position", "small"))
    for i, d in enumerate(rows):
        y = y0 + i * h
        flips = d["winner"] != d["choice"]
        body.append(text(0, y + 13, f"{d['pos']}: {d['choice']} vs {d['threat']}", "t mono"))
        body.append(_log_bar(x0, y + 2, d["err_gap"][1], lo, hi, width, MARGIN))
        tilt = d["tilt_gap"]
        favours = d["favours"][int(d["threat"])]
        body.append(_log_bar(x0, y + 11, tilt[1], lo, hi, width, TILT if favours else FAINT))
        note = (f"tilt {tilt[2]} > margin {d['err_gap'][2]}: {d['winner']} wins" if flips
                else f"margin {d['err_gap'][2]}")
        body.append(text(x0 + width + 8, y + 14, note, "small",
                         extra=' font-weight="bold"' if flips else ""))
    y = y0 + len(rows) * h + 10
    body.append(rect(0, y, 10, 8, "", f' fill="{MARGIN}"'))
    body.append(text(14, y + 8, "margin: err of the rival - err of the best digit", "small"))
    body.append(rect(300, y, 10, 8, "", f' fill="{TILT}"'))
    body.append(text(314, y + 8, "tilt: how much the readout's extra slot value favours "
                                 "the rival (grey: favours the best)", "small"))
    shown = pos if pos is not None else (views["flaw_pos"] if views["flaw_pos"] is not None
                                         else rows[0]["pos"])
    top = y + 40
    for d in rows:
        if standalone and d["pos"] != shown:
            continue
        part = [text(0, top, f"position {d['pos']}: every digit against {d['choice']} "
                             f"(the smallest error)", "t")]
        for u in range(10):
            yy = top + 10 + u * 18
            part.append(text(0, yy + 12, f"digit {u}", "small mono"))
            if str(u) == d["choice"]:
                part.append(text(x0, yy + 12, "the digit with the smallest error", "small"))
                continue
            de, dt = d["d_err"][u], d["d_tilt"][u]
            part.append(_log_bar(x0, yy + 2, de[1], lo, hi, width, MARGIN, 6))
            part.append(_log_bar(x0, yy + 9, dt[1], lo, hi, width,
                                 TILT if d["favours"][u] else FAINT, 6))
            wins = d["beats"][u]
            part.append(text(x0 + width + 8, yy + 12,
                             f"\u0394err {de[2]}, \u0394tilt {dt[2]}" + (
                                 " \u2190 beats it" if wins else ""), "small",
                             extra=' font-weight="bold"' if wins else ""))
        body.append(f'<g data-show-pos="{d["pos"]}"{hidden_unless(d["pos"] == shown)}>'
                    + "".join(part) + "</g>")
    return svg(x0 + width + 330, top + 10 + 10 * 18 + 10, body, "flaw-svg", standalone)


# ----------------------------------------------------------------------------- parameters

def parameters(views, standalone=False):
    """The model as slot lanes (rows) and stages (columns); each counted parameter a chip on
    the lane it writes (the middle one when it writes several). Hover a chip: its tensor
    entry, and the lanes it reads (purple) and writes (orange)."""
    slots = views["slots"]
    columns = [p["stage"] for p in views["program"]]
    x0, y0, col_w, lane_h = 90, 84, 150, 22
    per_stage = {}
    for p in views["params"]:
        per_stage[p["stage"]] = per_stage.get(p["stage"], 0) + 1
    body = [text(0, 16, f"The {len(views['params'])} parameters on the model's slots", "h"),
            text(0, 34, "lanes are residual slots; dots: \u25cf written, \u25cb read by "
                        "that stage; chips are parameters, (n) per stage (hover one)", "small")]
    for i, s in enumerate(slots):
        y = y0 + i * lane_h
        body.append(line(x0, y, x0 + len(columns) * col_w, y, "lane",
                         f' data-slot="{escape(s)}"'))
        body.append(text(x0 - 6, y + 4, s, "small mono", "end"))
    for j, prog in enumerate(views["program"]):
        x = x0 + j * col_w + 14
        body.append(text(x0 + j * col_w + col_w / 2, y0 - 22,
                         f'{prog["stage"]} ({per_stage.get(prog["stage"], 0)})', "t", "middle"))
        for s in prog["writes"]:
            body.append(f'<circle cx="{num(x)}" cy="{num(y0 + slots.index(s) * lane_h)}" '
                        f'r="4" fill="{INK}"/>')
        for s in prog["reads"]:
            body.append(f'<circle cx="{num(x + 10)}" cy="{num(y0 + slots.index(s) * lane_h)}" '
                        f'r="4" fill="#fff" stroke="{INK}"/>')
    used = {}
    for k, p in enumerate(views["params"]):
        lanes = p["writes"] or p["reads"]
        lane = lanes[(len(lanes) - 1) // 2] if lanes else slots[0]
        j = columns.index(p["stage"])
        n = used.get((j, lane), 0)
        used[(j, lane)] = n + 1
        x = x0 + j * col_w + 34 + n * 12
        y = y0 + slots.index(lane) * lane_h
        body.append(rect(x, y - 8, 10, 16, "chip", f' fill="{TILT}" data-param="{k}"'))
    return svg(x0 + len(columns) * col_w + 20, y0 + len(slots) * lane_h + 10, body,
               "params-svg", standalone)


FIGURES = {
    "attention": lambda v, s: attention(v, s.get("head", "L0.h3"), s.get("mode", "softmax1"),
                                        s.get("pos"), True),
    "count": lambda v, s: place_values(v, s.get("pos"), True),
    "slots": lambda v, s: residual(v, s.get("stage", "L0.mlp"), s.get("pos"), True),
    "ruler": lambda v, s: ruler(v, s.get("pos"), True),
    "flaw": lambda v, s: flaw(v, s.get("pos"), True),
}
