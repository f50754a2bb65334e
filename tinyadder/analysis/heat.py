"""Attention as a character ramp in the terminal (``--trace --heat``).

Each visible key of a head's row becomes one character of ``RAMP`` by log10 of its weight,
from the head's smallest weight over the whole run (' ') to 1 ('@'); the softmax1 sink comes
last (an ordinary softmax has none). A key a fixed attention bias masks is ``MASKED``, a
weight that is not a number (a float overflow) ``NOT_A_NUMBER``. Weights of 10^-458 and
10^-20 differ by 438 decades, which a ramp shows and a list of numbers hides. ANSI colour
(viridis) is added only when asked, which the command line does on a terminal unless
NO_COLOR is set.

>>> from tinyadder import build
>>> from tinyadder.cache import run_with_cache
>>> _, cache = run_with_cache(build("published"), "12+34")
>>> print("\\n".join(heat_lines(cache, 0, "h3", 24)))   # special keys stand out: 0, 11, 22
    L0.h3 attends from 24 (log10 weight: ' ' -466.3 .. '@' 0):
      0-24 %          %      ....@.. sink @
>>> line = heat_lines(cache, 0, "h4", 3, colour=True)[1]   # uniform 1/5, in ANSI colour
>>> line.count("\\x1b[38;5;"), line.endswith(RESET)        # 4 keys and the sink
(5, True)
"""

from .text import finite, log10_abs

RAMP = " .:-=+*#%@"
MASKED = "_"  # a key the fixed attention bias hides (-inf): no weight at all
NOT_A_NUMBER = "?"  # a weight a float system's overflow made nan
# viridis in the xterm 256-colour palette, dark (small) to yellow (near 1)
ANSI = (53, 54, 61, 24, 30, 36, 77, 148, 184, 226)
RESET = "\x1b[0m"


def sink(cache, row):
    """softmax1's weight given to nothing in one attention row: 1 - the sum of its weights (a
    masked key, None, weighs nothing)."""
    return cache.ns.one - sum((w for w in row if w is not None), cache.ns.zero)


def head_range(cache, layer, head):
    """The smallest log10 weight of a head over the run (visible, non-zero), and 0."""
    heads = cache.model.blocks[layer].attn.heads
    pattern = cache["pattern", layer][heads.index(head)]
    logs = [log10_abs(w) for q, row in enumerate(pattern) for w in row[:q + 1]
            if w is not None and finite(w)]
    logs = [v for v in logs if v is not None]
    return (min(logs) if logs else 0.0), 0.0


def ramp(log, lo, hi, colour=False):
    """One character for log10 |weight| (None, a zero or masked weight, is the blank)."""
    if log is None:
        k = 0
    else:
        t = 1.0 if hi <= lo else (log - lo) / (hi - lo)
        k = max(0, min(len(RAMP) - 1, round(t * (len(RAMP) - 1))))
    return f"\x1b[38;5;{ANSI[k]}m{RAMP[k]}{RESET}" if colour else RAMP[k]


def heat_lines(cache, layer, head, pos, colour=False, width=80, lo_hi=None):
    """A head's row at query ``pos`` as a ramp, wrapped to ``width`` columns."""
    attn = cache.model.blocks[layer].attn
    row = cache["pattern", layer][attn.heads.index(head)][pos][:pos + 1]
    lo, hi = lo_hi or head_range(cache, layer, head)
    chars = [MASKED if w is None else NOT_A_NUMBER if not finite(w) else
             ramp(log10_abs(w), lo, hi, colour) for w in row]
    lines = [f"    L{layer}.{head} attends from {pos} (log10 weight: '{RAMP[0]}' "
             f"{lo:.1f} .. '{RAMP[-1]}' {hi:.0f}):"]
    room = width - 24
    for start in range(0, len(chars), room):
        part = chars[start:start + room]
        label = f"{start}-{start + len(part) - 1}"
        last = start + room >= len(chars)
        rest = sink(cache, row)
        tail = (f" sink {ramp(log10_abs(rest), lo, hi, colour) if finite(rest) else NOT_A_NUMBER}"
                if last and attn.softmax == "softmax1" else "")
        lines.append(f"      {label} {''.join(part)}{tail}")
    return lines
