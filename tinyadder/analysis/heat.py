"""Attention as a character ramp in the terminal (``--trace --heat``).

Each visible key of a head's row becomes one character by log10 of its weight, on the
explorer's clipped scale (``clipped_scale``: the head's highest band of weights over the run,
down to a round number of decades, the clip): ' ' below the clip ("≈ 0"); from 10^-5 down to
the clip, the digits '0'..'9' in ten equal bands (``band``), the larger the digit the smaller
the weight, one scheme for every model (head 3's e-20, e-31, e-42 on its 10^-60 scale are '2',
'4', '6'); then ``TOP``, '+' '*' '#' '%' '@', a decade each up to 1. The softmax1 sink comes
last (an ordinary softmax has none). A key a fixed attention bias masks is ``MASKED``, a
weight that is not a number (a float overflow) ``NOT_A_NUMBER``. Head 3's digit keys'
10^-458 are ' '. ANSI colour (viridis) is added only when asked, which the command line does
on a terminal unless NO_COLOR is set.

>>> from tinyadder import build
>>> from tinyadder.cache import run_with_cache
>>> _, cache = run_with_cache(build("published"), "12+34")
>>> print("\\n".join(legends(cache, [(0, "h3")])))
heat: a head's row has one character per key from position 0 (then the sink), on
the head's clipped scale over the run:
  L0.h3: ' ' below 10^-60 (the clip); from 10^-5 down to the clip ten equal bands
    of 5.5 decades, '0' for the largest weights (10^-5..10^-10.5) to '9' for the
    smallest (10^-54.5..10^-60; '3' is 10^-21.5..10^-27); '+*#%@' a decade each
    from 10^-5 up to 1
>>> print("\\n".join(heat_lines(cache, 0, "h3", 24)))   # special keys stand out: 0, 11, 22
    L0.h3 0-24 6          4          2   sink @
>>> line = heat_lines(cache, 0, "h4", 3, colour=True)[0]   # uniform 1/5, in ANSI colour
>>> line.count("\\x1b[38;5;"), line.endswith(RESET)        # 4 keys and the sink
(5, True)
"""

from fractions import Fraction
import math
import textwrap

from .roles import roles
from .text import figure, finite, log10_abs, to_float

RAMP = " .:-=+*#%@"  # the colours' order: ' ', four steps below 10^-5, then TOP
TOP = RAMP[-5:]      # '+*#%@': a decade each from 10^-5 to 1
MASKED = "_"  # a key the fixed attention bias hides (-inf): no weight at all
NOT_A_NUMBER = "?"  # a weight a float system's overflow made nan
# viridis in the xterm 256-colour palette, dark (small) to yellow (near 1)
ANSI = (53, 54, 61, 24, 30, 36, 77, 148, 184, 226)
RESET = "\x1b[0m"


def sink(cache, row):
    """softmax1's weight given to nothing in one attention row: 1 - the sum of its weights (a
    masked key, None, weighs nothing)."""
    return cache.ns.one - sum((w for w in row if w is not None), cache.ns.zero)


BAND_GAP = 40   # decades between two clusters of weights that never share an axis


def bands(logs, gap=BAND_GAP):
    """Sorted log10 values split where consecutive ones are more than ``gap`` decades apart:
    [(lo, hi)], highest first (e^-40 weights and e^-1000 weights are two bands)."""
    values = sorted(set(round(v, 6) for v in logs if v is not None))
    if not values:
        return [(-1.0, 0.0)]
    out, start = [], values[0]
    for a, b in zip(values, values[1:]):
        if b - a > gap:
            out.append((start, a))
            start = b
    out.append((start, values[-1]))
    return list(reversed(out))


SOFTMAX_FLOOR = -10  # an ordinary-softmax head's scale spans at most 10^-10 .. 1


def clipped_scale(logs, kind="softmax1"):
    """(lo, 0): the log10 range that carries a head's mechanism, its highest band of weights
    (the sink and the special keys for head 3) down to a round number of decades (a multiple
    of 10 over a wide band, of 1 over a narrow one); weights below lo are "≈ 0". For a head
    with an ordinary softmax (``kind``) at most ``SOFTMAX_FLOOR`` decades: rope-19's weights
    decay smoothly over a hundred decades, and what carries its mechanism, 0.454 against
    0.0455, sits in the top one. The explorer's colours and this ramp share it."""
    lo = bands(logs)[0][0]
    step = 10 if lo < -10 else 1
    lo = math.floor(lo / step) * step if lo < 0 else -1
    return (max(lo, SOFTMAX_FLOOR) if kind == "softmax" else lo), 0


def head_range(cache, layer, head):
    """``clipped_scale`` of a head's visible weights (and softmax1's sinks) over the run."""
    attn = cache.model.blocks[layer].attn
    pattern = cache["pattern", layer][attn.heads.index(head)]
    logs = [log10_abs(w) for q, row in enumerate(pattern) for w in row[:q + 1]
            if w is not None and finite(w)]
    if attn.softmax == "softmax1":
        logs += [log10_abs(sink(cache, row[:q + 1])) for q, row in enumerate(pattern)]
    return clipped_scale(logs, attn.softmax)


DECADES = 5  # the top characters '+' .. '@' are a decade each: 0.454 and 0.0455 differ


def band(lo):
    """Decades per digit below 10^-5: the ten digits '0'..'9' split 10^-5 .. 10^lo into ten
    equal bands, (-5 - lo)/10 decades each (5.5 on head 3's 10^-60 scale, 9.5 on rope-19's
    10^-100, 2.5 at N = 3's 10^-30): one scheme for every model."""
    return Fraction(-DECADES - lo, 10)


def digit_of(log, lo):
    """The digit of log10 |weight| on the scale [lo, 0] below 10^-5: d for
    10^-(5 + (d+1)·band) <= weight < 10^-(5 + d·band), the larger the digit the smaller
    the weight, '9' down to the clip 10^lo itself."""
    return min(9, math.floor((-DECADES - log) / band(lo)))


def ramp(log, lo, hi=0.0, colour=False):
    """One character for log10 |weight| on the clipped scale [lo, hi = 0]: ' ' below lo (≈ 0,
    and a zero or masked weight, None); '+' '*' '#' '%' '@' a decade each from 10^-5 to 1, so
    that rope-19's 0.454 and 0.0455 are '@' and '%'; below 10^-5, ``digit_of``, ten equal
    bands down to lo, so that head 3's special keys (e-20, e-31, e-42 on a 10^-60 scale, 5.5
    decades a digit) are '2', '4', '6'. The colour of a digit spreads lo .. 10^-5 over
    RAMP's four lower steps."""
    top = len(RAMP) - DECADES             # the index of the first one-decade character
    if log is None or log < lo:
        k, char = 0, RAMP[0]
    elif log >= hi - DECADES:
        k = len(RAMP) - 1 - min(DECADES - 1, math.floor(hi - log))
        char = RAMP[k]
    else:
        t = (log - lo) / (hi - DECADES - lo)
        k = max(1, min(top - 1, 1 + math.floor(t * (top - 1))))
        char = str(digit_of(log, lo))
    return f"\x1b[38;5;{ANSI[k]}m{char}{RESET}" if colour else char


def digit_spans(lo):
    """[(digit, upper exponent, lower exponent)] of the ten digits on the scale [lo, 0]: digit
    d stands for 10^-upper > weight >= 10^-lower, upper = 5 + d·band(lo), lower = upper +
    band(lo); '9''s lower end is the clip, -lo.

    >>> [(d, str(a), str(b)) for d, a, b in digit_spans(-60)][::9]
    [(0, '5', '21/2'), (9, '109/2', '60')]
    """
    n = band(lo)
    return [(d, DECADES + d * n, DECADES + (d + 1) * n) for d in range(10)]


def _exp(e):
    """An exponent as the legend writes it: 10^-60, 10^-10.5."""
    return f"10^-{e.numerator // e.denominator if e.denominator == 1 else float(e)}"


def legend(name, lo, width=80):
    """The ramp's key for the heads ``name`` ('L0.h3', or 'L0.h0, L0.h1' on one scale),
    wrapped to ``width`` columns: the clip (' ' below it), where the scale reaches below
    10^-5 the ten equal bands of digits, their width and the span of the first, '3' and the
    last, then ``TOP``."""
    first = f"  {name}: '{RAMP[0]}' below 10^{lo}"
    if lo >= -DECADES:
        return textwrap.wrap(f"{first}, '{TOP}' a decade each up to 1", width,
                             subsequent_indent="    ", break_on_hyphens=False)
    first += " (the clip); "
    spans = {d: f"{_exp(a)}..{_exp(b)}" for d, a, b in digit_spans(lo)}
    n = band(lo)
    width_said = str(n.numerator // n.denominator) if n.denominator == 1 else str(float(n))
    said = (f"from 10^-{DECADES} down to the clip ten equal bands of {width_said} decade"
            f"{'s' * (n != 1)}, '0' for the largest weights ({spans[0]}) to '9' for the "
            f"smallest ({spans[9]}; '3' is {spans[3]})")
    return textwrap.wrap(f"{first}{said}; '{TOP}' a decade each from 10^-{DECADES} up to 1",
                         width, subsequent_indent="    ", break_on_hyphens=False)


HEAT_KEY = ("heat: a head's row has one character per key from position 0{}, on the head's "
            "clipped scale over the run:")


def legends(cache, heads, width=80):
    """Each distinct key once, before the positions (a head's scale, ``head_range``, is the
    run's, the same at every query): the heads ``heads`` ([(layer, head)]) that share a
    scale named together, in the order they come; the sink said where a head has one."""
    scales = {}
    for layer, head in heads:
        scales.setdefault(head_range(cache, layer, head), []).append(f"L{layer}.{head}")
    sinks = any(cache.model.blocks[layer].attn.softmax == "softmax1" for layer, _ in heads)
    lines = textwrap.wrap(HEAT_KEY.format(" (then the sink)" if sinks else ""), width) \
        if scales else []
    for (lo, _), names in scales.items():
        lines += legend(", ".join(names), lo, width)
    return lines


def heat_lines(cache, layer, head, pos, colour=False, width=80, lo_hi=None):
    """A head's row at query ``pos`` as a ramp, named by the head and the keys' range and
    wrapped to ``width`` columns; its key is ``legends``'."""
    attn = cache.model.blocks[layer].attn
    row = cache["pattern", layer][attn.heads.index(head)][pos][:pos + 1]
    lo, hi = lo_hi or head_range(cache, layer, head)
    chars = [MASKED if w is None else NOT_A_NUMBER if not finite(w) else
             ramp(log10_abs(w), lo, hi, colour) for w in row]
    name = f"    L{layer}.{head} "
    room = width - 24
    lines = []
    for start in range(0, len(chars), room):
        part = chars[start:start + room]
        label = f"{start}-{start + len(part) - 1}"
        last = start + room >= len(chars)
        rest = sink(cache, row)
        tail = (f" sink {ramp(log10_abs(rest), lo, hi, colour) if finite(rest) else NOT_A_NUMBER}"
                if last and attn.softmax == "softmax1" else "")
        lines.append(f"{name if not lines else ' ' * len(name)}{label} {''.join(part)}{tail}")
    return lines


def top_weights(cache, layer, head, pos, count=3):
    """[(key, weight)]: the ``count`` largest nonzero weights of a head's row at ``pos``
    (softmax1's sink as the key 'sink'), largest first, and one more where it ties the last
    of them to 0.1 % (rope-19's b_(k-1), as large as a_(k-1))."""
    attn = cache.model.blocks[layer].attn
    row = cache["pattern", layer][attn.heads.index(head)][pos][:pos + 1]
    weights = [(str(k), w) for k, w in enumerate(row) if w is not None and finite(w)]
    if attn.softmax == "softmax1":
        weights.append(("sink", sink(cache, row)))
    weights = [kw for kw in weights if to_float(kw[1]) != 0]
    weights.sort(key=lambda kw: -to_float(kw[1]))
    tie = (len(weights) > count and
           to_float(weights[count][1]) >= 0.999 * to_float(weights[count - 1][1]))
    return weights[:count + tie]


def key_name(model, key):
    """A key as the views name it: its role and position ("b0 (21)", "'=' (22)"), the bare
    position for a model that does not add, or 'sink'."""
    if key == "sink" or getattr(model, "prompt", None) is None:
        return key
    labels = [r.label for r in roles(model)]
    k = int(key)
    return f"{labels[k]} ({k})" if k < len(labels) else key


def uniform(cache, layer, head, pos):
    """(weight, keys, with the sink) when the row at ``pos`` gives every visible key (and
    softmax1's sink) one weight, as head 4 does before '=': else None."""
    attn = cache.model.blocks[layer].attn
    row = cache["pattern", layer][attn.heads.index(head)][pos][:pos + 1]
    keys = [w for w in row if w is not None]
    sunk = attn.softmax == "softmax1"
    every = keys + ([sink(cache, row)] if sunk else [])
    if len(every) < 2 or not all(finite(w) for w in every) or any(w != every[0] for w in every):
        return None
    return every[0], len(keys), sunk


def top_line(cache, layer, head, pos):
    """The largest weights (``top_weights``) by role, each to 3 significant digits in the
    explain output's notation: "top: b0 (21) 0.454, a1 (2) 0.454, a0 (1) 0.0455"; a uniform
    row in one phrase: "top: uniform: 1/26 on each of the 25 keys and the sink"."""
    even = uniform(cache, layer, head, pos)
    if even is not None:
        w, keys, sunk = even
        n = keys + sunk
        said = f"1/{n}" if w * n == 1 else figure(w, 3, power=True)
        return (f"      top: uniform: {said} on each of the {keys} keys" +
                (" and the sink" if sunk else ""))
    top = top_weights(cache, layer, head, pos)
    return "      top: " + ", ".join(f"{key_name(cache.model, k)} {figure(w, 3, power=True)}"
                                     for k, w in top)
