"""Text rendering of an ActivationCache: the machine state per position and half-layer.

A value prints exactly when its exact text is short (``1/34``, ``-10``); otherwise it prints
rounded to ``sig`` significant digits behind the marker ``~`` (``~-0.999999``). ``exact=True``
prints every value in full. Lines fit 80 columns unless ``exact`` is set.

>>> from fractions import Fraction
>>> fmt(Fraction(1, 34)), fmt(Fraction(-2, 3000000007)), fmt(Fraction(2, 3000000007), exact=True)
('1/34', '~-6.66667e-10', '2/3000000007')
>>> fmt(Fraction(312005484094)), fmt(Fraction(3120054840941))
('312005484094', '~3.12005e+12')
"""

from decimal import Decimal, localcontext
from fractions import Fraction
import textwrap

from ..addition import sequence_length, sequence_text
from .. import task
from ..cache import stages
from ..generate import argmax
from ..numbers import LogScore
from ..numbers.protocol import Undecided
from ..weights import live_heads
from .heat import heat_lines, legends as heat_legends, sink, top_line
from .roles import roles
from .text import exponent

SIG = 6          # significant digits of a value rounded for display
SHORT = 12       # exact text up to this many characters prints as is
MARK = "~"       # the value is rounded for display
CHANGED = "*"    # this half-layer changed the slot
DEPARTS = "!"    # the value departs from its intended value (--check)
WIDTH = 80


def int_text(n):
    """Decimal digits of any int. str() refuses more than 4300 digits on Python >= 3.11, so
    long ints are split in halves by a power of ten (divide and conquer, also faster)."""
    if n < 0:
        return "-" + int_text(-n)
    if n.bit_length() < 8000:
        return str(n)
    k = n.bit_length() * 3 // 20  # about half the number of decimal digits
    hi, lo = divmod(n, 10 ** k)
    return int_text(hi) + int_text(lo).rjust(k, "0")


def rational_text(x):
    """'n' or 'n/d' for a Fraction, however long (a Multiscale expanded: as long)."""
    x = x.exact() if hasattr(x, "exact") else Fraction(x)
    if x.denominator == 1:
        return int_text(x.numerator)
    return f"{int_text(x.numerator)}/{int_text(x.denominator)}"


def _short_text(x):
    """The exact text of x if it is at most SHORT characters, else None (computed cheaply)."""
    if isinstance(x, Fraction):
        if x.numerator.bit_length() + x.denominator.bit_length() > 4 * SHORT:
            return None
        text = rational_text(x)
    elif isinstance(x, float):
        text = repr(x)
    else:
        text = str(x)
    return text if len(text) <= SHORT else None


def rounded(x, sig=SIG):
    """x to ``sig`` significant digits (half to even), in decimal or scientific notation."""
    if isinstance(x, (Fraction, int)):
        d = _significant(x, sig) if x else Decimal(0)
    elif hasattr(x, "significant"):  # a Multiscale: read off its enclosures
        d = x.significant(sig)
    else:
        with localcontext() as ctx:
            ctx.prec = sig
            d = +Decimal(x)
    return format(d, f".{sig}g")


def _significant(x, sig):
    """For a rational x = n / d != 0, Decimal(n) / Decimal(d) at precision ``sig`` (half to
    even, and an exact quotient without the trailing zeros of a negative exponent), in
    integers: q = |n| 10^s / d has ``sig`` digits, so a long n or d costs one short division,
    not a conversion of its digits to decimal (quadratic in their number).

    >>> _significant(Fraction(-2, 3), 6), _significant(Fraction(10 ** 5000 + 5, 10), 3)
    (Decimal('-0.666667'), Decimal('1.00E+4999'))
    >>> _significant(Fraction(5, 2), 6), _significant(Fraction(9999995, 10), 6)
    (Decimal('2.5'), Decimal('1.00000E+6'))
    """
    sign, n, d = int(x < 0), abs(x.numerator), x.denominator
    s = sig - 1 - exponent(abs(x))  # 10^(sig - 1) <= |x| 10^s < 10^sig
    q, r = divmod(n * 10 ** s, d) if s >= 0 else divmod(n, d * 10 ** -s)
    den = d if s >= 0 else d * 10 ** -s
    if 2 * r > den or (2 * r == den and q % 2):
        q += 1
    if q == 10 ** sig:  # rounded up to the next power of ten
        q, s = q // 10, s - 1
    while not r and s > 0 and not q % 10:
        q, s = q // 10, s - 1
    return Decimal((sign, tuple(int(c) for c in str(q)), -s))


def fmt(x, sig=SIG, exact=False):
    """A value as text: exact when short (or ``exact``), else ``~`` and ``sig`` digits."""
    if x is None:
        return "-"
    if isinstance(x, LogScore):
        return str(x)
    if exact:
        return rational_text(x) if isinstance(x, Fraction) else (
            repr(x) if isinstance(x, float) else str(x))
    text = _short_text(x)
    return text if text is not None else MARK + rounded(x, sig)


def pack(cells, indent="    ", width=WIDTH):
    """Cells joined into lines no wider than ``width`` (a cell longer than that stands alone)."""
    lines, line = [], indent
    for cell in cells:
        if line.strip() and len(line) + 2 + len(cell) > width:
            lines.append(line.rstrip())
            line = indent
        line += ("  " if line.strip() else "") + cell
    if line.strip():
        lines.append(line.rstrip())
    return lines


def before_stage(cache, stage_index, pos):
    """{slot: value} entering a stage (empty for the embedding)."""
    if stage_index == 0:
        return {}
    return cache.view(stages(cache.model)[stage_index - 1].name, pos)


def slot_lines(cache, stage_index, pos, slots=None, sig=SIG, exact=False, departs=()):
    """The residual stream after a stage, packed into 80 columns (one slot a line when
    ``exact``); a slot this stage changed is marked *, one departing from intent ! instead."""
    after = cache.view(stages(cache.model)[stage_index].name, pos)
    before = before_stage(cache, stage_index, pos)
    cells = []
    for name, value in after.items():
        if slots and name not in slots:
            continue
        mark = DEPARTS if name in departs else (
            CHANGED if stage_index and value != before.get(name, 0) else " ")
        text = fmt(value, sig, exact)
        cells.append(f"{mark}{name} = {text}" if exact else f"{mark}{name:<9} {text:>{sig + 8}}")
    if exact:
        return ["    " + c for c in cells]
    return pack(cells, indent="   ")


def attention_row(cache, layer, head, pos, sig=SIG, exact=False):
    """A head's weights over the visible positions 0..pos, equal neighbours grouped (a key a
    fixed attention bias masks: 'masked'), and for softmax1 its sink 1 - sum(weights) (the
    weight given to nothing; an ordinary softmax has none)."""
    attn = cache.model.blocks[layer].attn
    heads = attn.heads
    row = cache["pattern", layer][heads.index(head)][pos][:pos + 1]
    cells, start = [], 0
    for j in range(1, pos + 2):
        if j == pos + 1 or row[j] != row[start]:
            where = f"{start}" if j - 1 == start else f"{start}-{j - 1}"
            shown = "masked" if row[start] is None else fmt(row[start], sig, exact)
            cells.append(f"{where}:{shown}")
            start = j
    if attn.softmax == "softmax1":
        cells.append(f"sink:{fmt(sink(cache, row), sig, exact)}")
    return [f"    L{layer}.{head} attends from {pos} to 0..{pos}:"] + pack(cells, "      ")


FEW = 3  # a trace of more positions than this, asked for none, says which to pick


def lead_of(cache, pos):
    """The winning logit less the runner-up's at ``pos``."""
    logits = cache["logits"][pos]
    best = argmax(logits)
    return logits[best] - max((x for i, x in enumerate(logits) if i != best),
                              key=lambda x: x)


def pos_hint(cache):
    """For a trace of every position that predicts a digit of the answer (no --pos), more
    than ``FEW``: which positions those are and an example --pos, the first of them and the
    one whose winner leads by least: 'positions 22 to 32 predict the 11 tokens of the
    answer, all traced below; to read fewer, e.g. --pos 22,32 (22 predicts s10, the first;
    32 predicts s0, the last and the narrowest lead)'; '' for a short trace."""
    at = list(cache.predicting)
    if len(at) <= FEW:
        return ""
    labels = _labels(cache.model) or [None] * (len(cache.tokens) + 1)
    try:
        narrow = min(at, key=lambda p: lead_of(cache, p))
    except (TypeError, ValueError, ArithmeticError, Undecided):  # a nan; leads left open
        narrow = at[-1]
    pick = sorted({at[0], narrow if narrow != at[0] else at[-1]})

    def said(p):
        return f"{p} predicts {labels[p + 1]}" if labels[p + 1] else f"{p}"
    def why(p):
        return " and ".join(w for q, w in ((at[0], "the first"), (at[-1], "the last"),
                                            (narrow, "the narrowest lead")) if q == p)
    spans = (f"{at[0]} to {at[-1]}" if at == list(range(at[0], at[-1] + 1)) else
             ", ".join(map(str, at)))
    return (f"positions {spans} predict the {len(at)} tokens of the answer, all traced "
            f"below; to read fewer, e.g. --pos {','.join(map(str, pick))} (" +
            "; ".join(f"{said(p)}, {why(p)}" for p in pick) + ")")


def logit_lines(cache, pos, sig=SIG, exact=False, intended=None):
    """The logits, the winning token and its lead (its logit minus the runner-up's; "margin"
    is the ruler's word, docs/walkthrough.md); ``intended`` (from
    --check) is the token the model should have picked, when it picked another."""
    logits = cache["logits"][pos]
    tokens = cache.labels("unembed.hook_out")
    best = argmax(logits)
    runner = max((i for i in range(len(logits)) if i != best), key=lambda i: logits[i])
    cells = [f"{'>' if i == best else ' '}{t}: {fmt(x, sig, exact)}"
             for i, (t, x) in enumerate(zip(tokens, logits))]
    lead = logits[best] - logits[runner]
    return (["  readout: logits (> marks the winner)"] + pack(cells, "   ") +
            [f"    winner {tokens[best]!r}, lead {fmt(lead, sig, exact)} over runner-up "
             f"{tokens[runner]!r}"] +
            ([f"    {DEPARTS} intended {intended!r}"] if intended is not None else []))


def _labels(model):
    """Each position's role label in the model's prompt layout (``roles``: a9, '+', s10), or
    None for a model that does not add."""
    if getattr(model, "prompt", None) is None:
        return None
    return [r.label for r in roles(model)]


def position_header(cache, pos):
    """"position 24 (s9): '0', predicts s8 '0' at 25": the token, a digit's role in the
    prompt layout (``roles``), and the token it predicts with its role."""
    vocab = cache.model.vocab
    labels = _labels(cache.model)

    def role(p):  # a digit's label; a separator's is its own text, said already
        if labels is None or p >= len(labels) or labels[p].startswith(("'", "<")):
            return None
        return labels[p]
    here = f" ({role(pos)})" if role(pos) else ""
    nxt = (f", predicts {role(pos + 1) + ' ' if role(pos + 1) else ''}"
           f"{vocab[cache.tokens[pos + 1]]!r} at {pos + 1}"
           if pos + 1 < len(cache.tokens) else "")
    return f"position {pos}{here}: {vocab[cache.tokens[pos]]!r}{nxt}"


def stage_lines(cache, stage_index, pos, slots=None, sig=SIG, exact=False, departs=(),
                heat=False, colour=False):
    """One stage at one position: its label, the live heads' weights (as a character ramp
    with ``heat``, see ``heat.heat_lines``), the slots."""
    stage = stages(cache.model)[stage_index]
    lines = [f"  {stage.label} ({stage.name})"]
    if stage.kind == "attn":
        for head in live_heads(cache.model.blocks[stage.layer].attn):
            if heat:
                lines += heat_lines(cache, stage.layer, head, pos, colour) + [
                    top_line(cache, stage.layer, head, pos)]
            else:
                lines += attention_row(cache, stage.layer, head, pos, sig, exact)
    return lines + slot_lines(cache, stage_index, pos, slots, sig, exact, departs)


def addition_line(cache):
    """The traced sequence read as an addition in the model's layout ('7+8=15', where the
    tokens may hold the operands or the answer least significant digit first, and a stop
    token), or None when the trace holds only part of a sequence."""
    if task.has_task(cache.model) or len(cache.tokens) != sequence_length(cache.model):
        return None
    return sequence_text(cache.model, cache.tokens)


def task_line(cache):
    """For a model with a finite task, the traced run read as the task ('B -> 06') and
    whether it is the task's answer; None for an addition or part of a sequence."""
    model = cache.model
    if not task.has_task(model) or len(cache.tokens) != sequence_length(model):
        return None
    read = task.sequence_text(model, cache.tokens)
    x = model.vocab[cache.tokens[len(model.task.before)]]
    want = task.expected(model, x)
    if task.answer(model, cache.tokens) == want:
        return f"{read}, the task's answer"
    return f"{read}, where the task says {want}"


LISTED = 6  # roundings listed in the legend; more are counted, and --roundings lists them


def rounding_kinds(roundings):
    """'74 cos, 74 sin, 40 exp': how many rounded values each outermost function gives (the
    float wrappers f32(f64(...)) of a published constant count as f32)."""
    counts = {}
    for r in roundings:
        name = r.what.split("(", 1)[0] or "value"
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def rounding_lines(cache, every=False):
    """The legend's line on irrational values rounded once: each of them when few (or
    ``every``), else their count by function and how to list them."""
    found = cache.roundings
    if not found:
        return []
    if every or len(found) <= LISTED:
        what = ", ".join(r.what for r in found)
        return textwrap.wrap(f"rounded: {what}", WIDTH, subsequent_indent="  ")
    return textwrap.wrap(f"rounded: {len(found)} irrational values, once each to the stated "
                         f"digits ({rounding_kinds(found)}); --roundings lists them", WIDTH,
                         subsequent_indent="  ")


def legend(cache, sig=SIG, exact=False, every_rounding=False):
    """What was run, in which number system, and how to read the values; ``every_rounding``:
    list each value rounded, however many."""
    lines = [cache.text]
    read = addition_line(cache)
    if read is not None and read not in cache.text:
        lines.append(f"as an addition: {read}")
    if task_line(cache) is not None:
        lines.append(f"as its task: {task_line(cache)}")
    lines.append(f"numbers: {cache.ns.describe()}")
    lines += rounding_lines(cache, every_rounding)
    lines.append("values exact and in full" if exact else
                 f"values exact when short; {MARK} = rounded to {sig} significant digits "
                 f"for display")
    lines.append(f"{CHANGED} = changed by this half-layer")
    return lines


def render(cache, positions=None, slots=None, layer=None, sig=SIG, exact=False, check=None,
           heat=False, colour=False, roundings=False):
    """The text trace: for each position, each stage's state, then the logits.

    ``layer`` keeps only that layer's two half-layers; ``check`` (probes.check result) marks
    departures from the intended values with ``!`` and adds its verdict; ``heat`` draws the
    attention rows as character ramps (``colour``: in ANSI colour); ``roundings`` lists every
    value rounded (else more than a few are counted in one line).
    """
    hint = pos_hint(cache) if positions is None else ""
    positions = cache.predicting if positions is None else positions
    lines = legend(cache, sig, exact, roundings)
    if check is not None:
        lines[-1] += f"; {DEPARTS} = departs from its intended value"
    if heat:  # each head's key once: its scale is the run's, the same at every position
        lines += heat_legends(cache, [(k, head) for k, block in enumerate(cache.model.blocks)
                                      if layer is None or k == layer
                                      for head in live_heads(block.attn)])
    lines += textwrap.wrap(hint, WIDTH, subsequent_indent="  ")
    for pos in positions:
        lines += ["", position_header(cache, pos)]
        for k, stage in enumerate(stages(cache.model)):
            if layer is not None and stage.layer != layer:
                continue
            departs = check.departures_at(pos, stage.name) if check is not None else ()
            lines += stage_lines(cache, k, pos, slots, sig, exact, departs, heat, colour)
        if layer is None or layer == len(cache.model.blocks) - 1:
            intended = check.intended_winner(pos) if check is not None else None
            lines += logit_lines(cache, pos, sig, exact, intended)
    if check is not None:
        lines += [""] + textwrap.wrap(check.verdict(), WIDTH, subsequent_indent="  ")
    return "\n".join(lines) + "\n"
