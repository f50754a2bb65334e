"""SVG primitives and colour scales shared by the explorer's drawings (``figures``).

Colours are colour-blind safe: Okabe-Ito for categories, viridis for attention weights,
ColorBrewer PuOr for signed values (purple negative, orange positive). A colour is a class
(``s0``..``s59``, ``d0``..``d10``) so that the page's script can recolour a drawing; ``CSS``
defines them for the standalone files and the page alike.

**Weights.** A weight is drawn on a clipped log scale: ``STEPS`` viridis steps spread evenly
over log10 w from ``lo`` to ``hi``, and one "≈ 0" colour for everything below ``lo``, so that a
tenfold decay is a fixed number of steps wherever it falls:

>>> weight_classes([0.0, -17.37, -18.37, -59.9, -434.0, None], -60, 0)
'xgf0..'
>>> [weight_level(-17.37 - q, -60, 0) for q in range(4)]   # one step per decade here
[42, 41, 40, 39]

**Signed values.** PuOr, 5 = zero, 4..0 ever more negative, 6..10 ever more positive, each
on a log scale of |x| between ``lo`` and ``hi``:

>>> signed_classes([[-2.0, 0.3, "-2"], [5e9, 9.7, "5e9"], [0.0, None, "0"]], 0, 9)
'ekz'
"""

from html import escape
import math
import re

VIRIDIS = ("#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884",
           "#44bf70", "#7ad151", "#bddf26", "#fde725")   # viridis at 0, 0.1, ..., 1
STEPS = 60                                               # colours of the weight scale
DIV = ("#2d004b", "#542788", "#8073ac", "#b2abd2", "#d8daeb", "#f7f7f7", "#fee0b6",
       "#fdb863", "#e08214", "#b35806", "#7f3b08")       # PuOr: purple < 0 < orange
ROLE = {"a": "#0072B2", "b": "#E69F00", "special": "#999999", "sum": "#009E73",
        "input": "#0072B2"}
MARGIN, TILT, INK, FAINT, NEG = "#0072B2", "#D55E00", "#222222", "#bbbbbb", "#542788"
NEARLY_ZERO = "#d9d9d9"   # a weight below the scale: "≈ 0"
ZERO = "z"                # class letter of a zero value on the signed scale
BELOW = "."               # class letter of a weight below the scale
LEVEL_LETTERS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwx"  # STEPS of them
LEVELS = 5                # signed levels on each side of zero
NUMBERED_SLOTS = 3        # a stream at most this wide has its values printed in the views


def _mix(a, b, t):
    """The colour a fraction t of the way from hex colour a to b."""
    pa = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    pb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(pa, pb))


def viridis(t):
    """Viridis at 0 <= t <= 1, linear between its tenths."""
    k = min(len(VIRIDIS) - 2, int(t * (len(VIRIDIS) - 1)))
    return _mix(VIRIDIS[k], VIRIDIS[k + 1], t * (len(VIRIDIS) - 1) - k)


SEQ = tuple(viridis(k / (STEPS - 1)) for k in range(STEPS))

CSS = "\n".join(
    [f".s{i}{{fill:{c}}}" for i, c in enumerate(SEQ)] +
    [f".d{i}{{fill:{c}}}" for i, c in enumerate(DIV)] +
    [f".sz{{fill:{NEARLY_ZERO}}}", ".blank{fill:none}", ".dz{fill:#f7f7f7}",
     ".na{fill:#e4e4e4}",
     "text{font-family:sans-serif;fill:#222}", ".t{font-size:11px}", ".small{font-size:11px}",
     ".h{font-size:13px;font-weight:bold}", ".mono{font-family:monospace}",
     ".val.dk{fill:#fff}",
     ".chg{fill:none;stroke:#000;stroke-width:1.5}", ".chg2{fill:none;stroke:#fff;stroke-width:1}",
     ".dep{stroke:#000;stroke-width:1.5}",
     ".sel{fill:none;stroke:#000;stroke-width:2}", ".ax{stroke:#888;stroke-width:1}",
     ".one{stroke:#D55E00;stroke-width:1.5;stroke-dasharray:5 3}",
     ".lane{stroke:#ccc;stroke-width:6}", ".lane.on{stroke:#fdb863}",
     ".lane.rd{stroke:#b2abd2}", ".chip{stroke:#222;stroke-width:1}",
     ".chip.on{stroke-width:3}"])


# ----------------------------------------------------------------------------- scales

def weight_level(log, lo, hi):
    """0..STEPS-1: the step of log10 w on [lo, hi], None below lo (the weight is "≈ 0")."""
    if log is None or log < lo:
        return None
    t = (log - lo) / (hi - lo) if hi > lo else 1.0
    return max(0, min(STEPS - 1, math.floor(t * STEPS)))


def weight_classes(logs, lo, hi):
    """One letter per log10 weight: its step (``LEVEL_LETTERS``), or '.' for "≈ 0"."""
    out = []
    for log in logs:
        k = weight_level(log, lo, hi)
        out.append(BELOW if k is None else LEVEL_LETTERS[k])
    return "".join(out)


def weight_class(letter):
    """The class of a weight letter: '0' -> 's0', '.' -> 'sz'."""
    return "sz" if letter == BELOW else f"s{LEVEL_LETTERS.index(letter)}"


def negative(cell):
    """Whether a cell's value is below zero, from its text (its float may be 0.0 or None)."""
    return cell[2].lstrip("~").startswith("-")


def _level(log, lo, hi, steps):
    t = 1.0 if hi <= lo else (log - lo) / (hi - lo)
    return max(0, min(steps - 1, round(t * (steps - 1))))


def signed_classes(cells, lo, hi):
    """One letter per cell: 'a' + PuOr index ('z' for zero), log10 |x| between lo and hi."""
    out = []
    for c in cells:
        if c[1] is None:
            out.append(ZERO)
            continue
        step = 1 + _level(c[1], lo, hi, LEVELS)
        out.append(chr(97 + 5 + (-step if negative(c) else step)))
    return "".join(out)


UNUSED = "-"  # a cell drawn grey, as a slot not there yet: a logit whose prediction is unused


def signed_class(letter):
    """The class of a signed letter: 'c' -> 'd2'; 'z' (zero) -> 'dz'; '-' -> 'na'."""
    return "na" if letter == UNUSED else "dz" if letter == ZERO else f"d{ord(letter) - 97}"


def dark(letter):
    """Whether a signed letter's colour is dark enough to want white text on it (PuOr 0..2
    and 9..10): dark('a') and not dark('f')."""
    return letter not in (UNUSED, ZERO) and abs(ord(letter) - 97 - 5) >= 3


def log_range(cells):
    logs = [c[1] for c in cells if c is not None and c[1] is not None]
    return (min(logs), max(logs)) if logs else (0.0, 0.0)


def decade_ticks(lo, hi):
    """Tick exponents between lo and hi: every decade over a short range, every 5 or 10 over
    longer ones."""
    step = 1 if hi - lo <= 12 else 5 if hi - lo <= 30 else 10
    first = math.ceil(lo / step) * step
    return list(range(first, math.floor(hi) + 1, step))


# ----------------------------------------------------------------------------- text

SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074"
                                           "\u2075\u2076\u2077\u2078\u2079")


def power(e):
    """10^e as text with a superscript exponent: power(-3) == '10\u207b\u00b3'."""
    return "10" + str(e).translate(SUPERSCRIPT)


def pretty(figure):
    """An ASCII figure as the page prints it: '4.77e9' -> '4.77\u00b710\u2079', an exact power
    '10^4' (figure's plain form of 10000) -> '10\u2074', '-60' as is.

    >>> pretty("4.77e9"), pretty("-1e-7"), pretty("119"), pretty("10^4")
    ('4.77\u00b710\u2079', '-10\u207b\u2077', '119', '10\u2074')
    """
    exact = re.fullmatch(r"(-?)10\^(-?[0-9]+)", figure)
    if exact:
        return exact.group(1) + power(int(exact.group(2)))
    mantissa, e, exponent = figure.partition("e")
    if not e:
        return figure
    if mantissa.lstrip("-") == "1":
        return mantissa[:-1] + power(int(exponent))
    return f"{mantissa}\u00b7{power(int(exponent))}"


def shown(said):
    """The tracer's text of a value as the page prints every number: '~4.24835e-20' ->
    '~4.24835\u00b710\u207b\u00b2\u2070' (one format per page; '~' still marks a rounded
    value); exact texts such as '1/26' as they are.

    >>> shown("~4.24835e-20"), shown("-~1.05502e+13"), shown("1/26")
    ('~4.24835\u00b710\u207b\u00b2\u2070', '\u2248 \u22121.05502\u00b710\u00b9\u00b3', '1/26')
    """
    match = re.fullmatch(r"(-?~?-?)([0-9.]+)e\+?(-?[0-9]+)", said)
    if not match:
        return minus(said)
    sign, mantissa, exponent = match.groups()
    return minus(sign) + pretty(f"{mantissa}e{exponent}")


def minus(said):
    """A number's sign as the page's formulas write it, U+2212; a rounded negative value
    as '\u2248 \u2212' and the number (a tilde beside a minus reads as an operator, either
    way round): minus('~-60.971') == minus('-~60.971') == '\u2248 \u221260.971',
    minus('-7') == '\u22127'; anything else as it is."""
    if not said.lstrip("~").startswith("-"):
        return said
    return ("\u2248 " if "~" in said[:2] else "") + "\u2212" + said.lstrip("~-").lstrip("~")


def range_text(lo_hi):
    """The legend of one row's scale: '|x| 10^-11 .. 10^1'."""
    if lo_hi is None:
        return ""
    lo, hi = lo_hi
    return f"|x| {power(math.floor(lo))} .. {power(math.ceil(hi))}"


def text_width(s, size=11):
    """A generous estimate of the width of ``s`` in sans-serif at ``size`` px."""
    return 0.58 * size * len(str(s))


# ----------------------------------------------------------------------------- elements

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


def dot(x, y, colour, r=4, extra=""):
    return f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" fill="{colour}"{extra}/>'


def group(body, extra=""):
    return f"<g{extra}>{''.join(body)}</g>"


def shown_at(pos, shown):
    """A per-position group's attributes: the page shows it when ``pos`` is selected."""
    return f' data-show-pos="{pos}"' + ("" if shown else ' display="none"')


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


def cell_size(t, room=900, most=18, least=7):
    return max(least, min(most, room / t))


def weight_legend(x, y, lo, hi, width=300, extra=""):
    """The weight scale: STEPS viridis steps from 10^lo to 10^hi, labelled at decade ticks,
    and the "≈ 0" swatch for weights below 10^lo."""
    out = [text(x, y - 4, "attention weight (log scale)", "small")]
    step = width / STEPS
    out += [rect(x + k * step, y, step + 0.3, 10, f"s{k}") for k in range(STEPS)]
    for e in decade_ticks(lo, hi):
        tx = x + (e - lo) / (hi - lo) * width
        out.append(line(tx, y + 10, tx, y + 13))
        out.append(text(tx, y + 22, power(e), "small", "middle"))
    out.append(rect(x + width + 16, y, 14, 10, "sz"))
    out.append(text(x + width + 34, y + 9, f"\u2248 0: below {power(lo)}", "small"))
    return group(out, extra)
