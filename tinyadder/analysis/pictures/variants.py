"""Real runs of the model with one thing changed: the explorer's softmax mode and its "change
one thing" view. Each is a new model (``weights.with_entry``, or the other readout of the same
construction) or a patched run (``run_with_cache(patch=...)``), traced in decimal arithmetic at
the model's precision (N + 30 digits): a run of the exact model takes seconds, of its
ordinary-softmax variant ten times as long, and the decimal runs decide the same digits.

>>> from tinyadder import build
>>> [c.key for c in changes(build("published"))]
['built', 'ln2', 'bias0', 'bias2', 'bias3', 'readout']
>>> [c.label for c in changes(build("published", digits=3))][2:5]
['bias 0', 'bias 82', 'bias 123']
"""

from dataclasses import dataclass
from fractions import Fraction

from ...addition import digits_of, encode
from ...cache import run_with_cache
from ...construction import VARIANTS, build
from ...numbers import Ln
from ...weights import Model, tensors, with_entry
from ..explain import short

NUMBERS = "decimal"


@dataclass(frozen=True)
class Change:
    """One variant of a model: a key for the page, a label for its button, what changed."""

    key: str
    label: str
    what: str
    model: Model


def _same_weights(one, other):
    """Whether two models have the same slots, tensors and readout (names aside)."""
    def entries(m):
        return m.slots, [(t.name, dict(t.entries)) for t in tensors(m)], dict(m.readout)
    return entries(one) == entries(other)


def as_built(model):
    """'published' or 'repaired' when the model is that construction as ``build`` makes it
    at its N, else None (a changed model has no "other readout")."""
    n = digits_of(model)
    return next((v for v in VARIANTS if _same_weights(model, build(v, n))), None)


def _slope_change(model):
    attn = model.blocks[0].attn
    head = next((h for h, s in attn.slopes.items() if isinstance(s, Ln)), None)
    if head is None or attn.slopes[head].base == 2:
        return None
    base = attn.slopes[head].base
    return Change("ln2", "slope ln 2",
                  f"ALiBi slope ln 2 for head {head}, not ln {base}: each step back halves a "
                  f"weight instead of dividing it by {base}, so the place values are powers "
                  f"of 2", with_entry(model, "blocks.0.attn.slopes", (head,), Ln(Fraction(2))))


def _bias_changes(model):
    layer = len(model.blocks) - 1
    attn = model.blocks[layer].attn
    if len(attn.b_V) != 1:
        return []
    (head, bias), = attn.b_V.items()
    bias = Fraction(bias)
    out = []
    for k in (0, 2, 3):
        new = k * bias
        out.append(Change(
            f"bias{k}", f"bias {short(new)}",
            f"layer {layer}'s value bias {short(new)}, not {short(bias)}: the rounding bias b "
            f"at position i becomes " + ("0" if not new else f"{short(new)}\u00b7(i + 1)/1000 "
                                          f"units of the sum") +
            f" (as built: {short(bias)}\u00b7(i + 1)/1000)",
            with_entry(model, f"blocks.{layer}.attn.b_V", (head,), new)))
    return out


READOUTS = {
    "published": "the published readout: err_u is added to a slot that still holds eq, "
                 "special, digit, count, scale or cand0..cand4, whose differences tilt the "
                 "comparison",
    "repaired": "the repaired readout: layer 1's FFN writes err_u into fresh slots that only "
                "the readout reads, so nothing tilts the comparison (the same 36 parameters)",
}


def _readout_change(model):
    variant = as_built(model)
    if variant is None:
        return None
    other = next(v for v in VARIANTS if v != variant)
    return Change("readout", f"{other} readout", READOUTS[other], build(other, digits_of(model)))


def changes(model):
    """The model as built, then each change that applies to it."""
    out = [Change("built", "as built", f"{model.name} as the page shows it", model)]
    slope = _slope_change(model)
    out += [slope] if slope else []
    out += _bias_changes(model)
    readout = _readout_change(model)
    out += [readout] if readout else []
    return out


def run(model, a, b, patch=None):
    """The trace of a + b on ``model`` in decimal arithmetic at its precision."""
    return run_with_cache(model, encode(model, a, b), ns=NUMBERS, patch=patch)[1]


def _row_divided(row):
    total = sum(x for x in row if x is not None)
    return [None if w is None else w / total for w in row]


def renormalised(pattern):
    """An attention pattern with every row divided by its sum: an ordinary softmax of the same
    scores (softmax1's '+1' removed)."""
    return [[_row_divided(row) for row in head] for head in pattern]


def softmax_run(model, a, b):
    """The trace of a + b with an ordinary softmax in every head (decimal)."""
    patch = {f"blocks.{i}.attn.hook_pattern": renormalised for i in range(len(model.blocks))}
    return run(model, a, b, patch)
