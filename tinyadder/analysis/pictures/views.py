"""The explorer's views as data: every number the page and the figures show, read from one
traced run (``trace.run_with_cache``), its intended values (``probes``), the narration's
decisions (``explain``) and the parameter ledger (``ledger``). Nothing here re-derives what
the model computes.

Each number is a *cell* ``[float, log10 |x|, text]``: the float when it fits a double
(None above its range; 0.0 below it, where the log still holds the magnitude), log10 of the magnitude computed from the exact value (a Fraction's digits, never
``float(x)``, which underflows at e^-1000 * 10^-23), and the text the tracer prints
(``show.fmt``: exact when short, else ``~`` and 6 significant digits).

>>> from fractions import Fraction
>>> cell(Fraction(1, 34))
[0.029411764705882353, -1.5314789170422551, '1/34']
>>> tiny = Fraction(1, 10 ** 460)
>>> cell(tiny)[0], round(cell(tiny)[1], 9), cell(tiny)[2]
(0.0, -460.0, '~1e-460')
>>> text(Fraction(2, 3 * 10 ** 460)) == fmt(Fraction(2, 3 * 10 ** 460)) == '~6.66667e-461'
True

**What a view needs.** Some views read slots only TinyAdder-36 and its family have: the ruler
needs the candidate slots and the construction's readout, the place values a carried ALiBi
head. ``NEEDS`` names each requirement and ``VIEW_NEEDS`` the requirements of each view;
``missing(model)`` says, per view, what the model lacks (None when the view applies), and the
page and ``figure`` print that instead of the view.
"""

from decimal import Decimal
from fractions import Fraction
import math

from ...addition import answer, digits_of, encode
from ...construction import SLOTS
from ...numbers import is_zero
from ... import task as tasks
from ...weights import Factored, live_heads
from ..explain import (approx, boxed, decisions, dust, dust_exponent, remaining_values, scales,
                       short, quotient, x_text)
from ..families import design, family_meanings
from ..board import own_rule
from ..ledger import RULES, ledger, rules, tensors
from ..text import exponent, figure, finite, log10_abs, to_float
from ..heat import clipped_scale
from ..roles import layout_text, roles as position_roles
from ..probes import READOUT, check, intended, overflow
from ..program import half_layers
from ..show import MARK, SHORT, SIG, fmt, rounded
from ...cache import Stage, run_with_cache, stages
from . import variants
from ...numbers.multiscale import Multiscale
from ...numbers.protocol import Undecided
from .svg import NUMBERED_SLOTS, pretty, shown


def _rounded_decimal(x, sig):
    """|x| of a Fraction correctly rounded (half even) to ``sig`` digits, as a Decimal, or
    None when the rounding is exact; integer arithmetic only (no Decimal of a huge int)."""
    n, d = abs(x.numerator), x.denominator
    e = math.floor(log10_abs(x))
    while (n * 10 ** -e < d) if e < 0 else (n < d * 10 ** e):  # make 10^e <= |x|
        e -= 1
    while (n * 10 ** -(e + 1) >= d) if e + 1 < 0 else (n >= d * 10 ** (e + 1)):
        e += 1
    k = sig - 1 - e
    q, r = divmod(n * 10 ** k, d) if k >= 0 else divmod(n, d * 10 ** -k)
    div = d if k >= 0 else d * 10 ** -k
    if r == 0:
        return None
    if 2 * r > div or (2 * r == div and q % 2):
        q += 1
    return Decimal(q).scaleb(-k)


def text(x):
    """``show.fmt(x)``, the tracer's text, computed without converting a long Fraction's
    thousand-digit numerator and denominator to Decimal (same digits, much faster), and for
    a Multiscale from its rational part where that decides the digits (``explain.approx``)."""
    if isinstance(x, Multiscale):
        quick = boxed(x, SIG)
        if quick is not None:
            return MARK + format(quick, f".{SIG}g")
        near = approx(x, SIG)
        if near is not None:
            return "0" if near == (0, True) else MARK + rounded(near[0], SIG)
        return MARK + rounded(x, SIG)
    long = isinstance(x, Fraction) and (
        x.numerator.bit_length() + x.denominator.bit_length() > 4 * SHORT)
    if long:
        d = _rounded_decimal(x, SIG)
        if d is not None:
            return MARK + rounded(d if x > 0 else -d, SIG)
    return fmt(x)


def cell(x):
    """[float (None beyond a double's range), log10 |x| (None for 0), the tracer's text];
    for a value known only to within a bound of 0 (``explain.dust``): [0.0, None, '~0, |x| <
    10⁻ᴺ']."""
    bound = dust(x) if isinstance(x, Multiscale) and boxed(x, SIG) is None else None
    if bound is not None:
        return [0.0, None, f"~0, |x| < {pretty(f'1e{dust_exponent(bound)}')}"]
    f = to_float(x)
    return [f if math.isfinite(f) else None, log10_abs(x), text(x)]


# ----------------------------------------------------------------------------- needs

def alibi_head(model):
    """The layer-0 head that carries place values: live, with a non-zero ALiBi slope, its
    output the slot ``count``; None when there is none."""
    attn = model.blocks[0].attn
    for h in live_heads(attn):
        if not is_zero(attn.slopes.get(h, 0)) and "count" in attn.W_O.get(h, {}):
            return h
    return None


def _needs_alibi(model):
    return (None if alibi_head(model) else
            "a layer-0 head with an ALiBi slope that writes the slot count")


def _needs_candidates(model):
    cands = [f"cand{u}" for u in range(10)]
    lacking = [s for s in cands + ["scale", "digit_pos"] if s not in model.slots]
    if set(cands) <= set(lacking):
        lacking = ["cand0..cand9"] + lacking[10:]
    return f"the slots {', '.join(lacking)}" if lacking else None


def _needs_readout(model):
    """TinyAdder-36's readout: the last FFN measures |cand_u + average| with a unit pair per
    candidate and writes it into the slot the readout reads for digit u."""
    what = ("the 36-parameter readout (layer 1's FFN writing |cand_u + average| into the slot "
            "read for digit u)")
    last = model.blocks[-1]
    for u in range(10):
        slot = model.readout.get(str(u))
        pair = [f"cand{u}{sign}" for sign in "+-"]
        if slot is None or any(slot not in last.mlp.W_out.get(p, {}) for p in pair):
            return what
    try:
        scales(model)
    except (KeyError, ValueError, IndexError):
        return what
    return None


def _needs_probes(model):
    built = len(model.blocks) == 2 and model.slots[:len(SLOTS)] == SLOTS
    return None if built else "the construction's slots, in its order (the probes of --check)"


NEEDS = {"alibi": _needs_alibi, "candidates": _needs_candidates, "readout": _needs_readout,
         "probes": _needs_probes}
VIEW_NEEDS = {
    "tokens": (), "attention": (), "place": ("alibi",), "count": ("alibi",),
    "residual": (), "sum": ("candidates", "readout"), "ruler": ("candidates", "readout"),
    "flaw": ("candidates", "readout"), "change": ("alibi", "candidates", "readout"),
    "params": (),
}
FAMILY = "TinyAdder-36 family"


def missing(model):
    """{view: None if it applies to ``model``, else the sentence saying why not}."""
    lacks = {name: need(model) for name, need in NEEDS.items()}
    out = {}
    for view, needs in VIEW_NEEDS.items():
        gaps = [lacks[n] for n in needs if lacks[n]]
        out[view] = (f"Not for this model: this view reads what the {FAMILY} has and "
                     f"{model.name} lacks: {'; '.join(gaps)}.") if gaps else None
    return out


# ----------------------------------------------------------------------------- tokens

def tokens_view(cache, with_places):
    """Per position: its text, its role and label from the model's prompt layout
    (``roles.roles``: a digit of a or b, a separator, a digit of the sum; ``a3``, ``'+'``),
    the place value its digit holds and the place value it predicts. With ``with_places``
    (a place-value head), the place is read from the ``count`` slot (layer 0 head 3's
    output: count ~ +-10^(e - N) on a digit of place 10^e), else from the layout."""
    layout = position_roles(cache.model)
    places = [r.place for r in layout]
    if with_places:
        count = [row[cache.model.slots.index("count")] for row in cache["resid_mid", 0]]
        n = digits_of(cache.model)
        places = [round(log10_abs(c)) + n if r.role != "special" and c else None
                  for r, c in zip(layout, count)]
    out = []
    for pos, t in enumerate(cache.tokens):
        nxt = pos + 1 < len(cache.tokens) and pos in cache.predicting
        out.append({"pos": pos, "text": cache.model.vocab[t], "role": layout[pos].role,
                    "label": layout[pos].label, "place": places[pos],
                    "predicts": cache.model.vocab[cache.tokens[pos + 1]] if nxt else None,
                    "next_place": places[pos + 1] if nxt else None})
    return out


# ----------------------------------------------------------------------------- attention

def head_key(layer, head):
    return f"L{layer}.{head}"


def weight_scale(rows, kind="softmax1"):
    """(lo, 0): ``heat.clipped_scale`` of a head's cells, the range its colours span (the
    terminal's heat rows share it): for a head with an ordinary softmax at most 10^-10, so
    that a factor of ten is six colour steps."""
    return clipped_scale([c[1] for row in rows for c in row], kind)


MASKED = [None, None, "masked"]


def attention_view(cache):
    """The live heads' weights, and the heads not shown with the reason.

    Per head and query q: ``softmax1`` cells for keys 0..q then the sink 1 - sum (the weight
    softmax1 gives to nothing); ``softmax`` the same scores under an ordinary softmax,
    exp(s_qk) / sum_l exp(s_ql) = pattern_qk / sum_l pattern_ql (same numerators, no +1), which
    has no sink; ``score`` the score's text as the tracer prints it; ``scale`` the log10 range
    both modes are drawn on (``weight_scale`` of softmax1: one colour, one weight).
    """
    heads, hidden = {}, []
    ns = cache.ns
    for layer, block in enumerate(cache.model.blocks):
        live = live_heads(block.attn)
        for h in block.attn.heads:
            if h not in live:
                hidden.append(head_key(layer, h))
                continue
            k = block.attn.heads.index(h)
            pattern = cache["pattern", layer][k]
            scores = cache["attn_scores", layer][k]
            one, two, said = [], [], []
            for q, row in enumerate(pattern):
                row = row[:q + 1]  # a key the model's mask hides is None: drawn as "≈ 0"
                total = sum((w for w in row if w is not None), ns.zero)
                one.append([cell(w) if w is not None else MASKED for w in row] +
                           [cell(ns.one - total)])
                two.append([cell(w / total) if w is not None else MASKED for w in row])
                said.append([fmt(s) if s is not None else "masked"
                             for s in scores[q][:q + 1]])
            heads[head_key(layer, h)] = {"layer": layer, "head": h, "kind": block.attn.softmax,
                                         "softmax1": one,
                                         "softmax": two, "score": said,
                                         "scale": weight_scale(one, block.attn.softmax)}
    why = (f"{', '.join(hidden)} have no value or no output map (their output is zero), "
           f"so they cannot change the stream and are not shown") if hidden else ""
    return heads, hidden, why


def _slot_row(cache, name, slot):
    labels = cache.labels(name)
    return [row[labels.index(slot)] for row in cache[name]] if slot in labels else None


SMALL_FFN = 8   # an FFN of at most this many hidden units gets a table of them on the page


def hidden_units(cache):
    """{stage 'L0.mlp': {units, act, into, writes, pre, linear, post}} for each FFN of at
    most ``SMALL_FFN`` hidden units: each unit's input and what its output adds to the stream
    as formulas ('992 − x0', 'x1 + out'; None where a weight is no plain number), and per
    position its value into its activation (hook_pre; a gated FFN's gate), its linear branch
    (hook_pre_linear; None when not gated) and what comes out (hook_post), as ``cell``s."""
    out = {}
    for i in range(len(cache.model.blocks)):
        name = f"blocks.{i}.mlp"
        if f"{name}.hook_pre" not in cache.keys():
            continue
        units = list(cache.labels(f"{name}.hook_pre"))
        if len(units) > SMALL_FFN:
            continue

        def rows(point):
            return ([[cell(x) for x in row] for row in cache[f"{name}.{point}"]]
                    if f"{name}.{point}" in cache.keys() else None)
        mlp = cache.model.blocks[i].mlp
        gate = (mlp.W_gate, mlp.b_gate) if mlp.gated else (mlp.W_in, mlp.b_in)
        out[f"L{i}.mlp"] = {"units": units, "act": mlp.act,
                            # formulas only where every weight is a plain number (not a
                            # file's f64(256/sqrt(2)·...) nor a factored W_out)
                            "into": _plain(lambda: [_affine(*gate, u) for u in units]),
                            "writes": _plain(lambda: [_writes(mlp.W_out[u]) for u in units]),
                            "pre": rows("hook_pre"), "linear": rows("hook_pre_linear"),
                            "post": rows("hook_post"),
                            "linear_of": _linear_of(cache.model.blocks[i])}
        if out[f"L{i}.mlp"]["writes"] is None:
            out[f"L{i}.mlp"].update(_down(cache, i, units))
    return out


def _down_weights(ns, w_out, units):
    """{unit: {slot: w}}: the down projection W_out as values of ``ns``, a factored one's
    A·B summed over its inner names (zcbtrak-6's g1: 1·(100/(256/√2))·(1/√2) = 25/64)."""
    if not isinstance(w_out, Factored):
        return {u: {s: ns.const(w) for s, w in w_out.get(u, {}).items()} for u in units}
    out = {}
    for u in units:
        row = {}
        for d, a in w_out.A.get(u, {}).items():
            for s, b in w_out.B.get(d, {}).items():
                row[s] = row.get(s, ns.zero) + ns.const(a) * ns.const(b)
        out[u] = row
    return out


def _down(cache, layer, units):
    """A small FFN's down projection where its weights are no plain numbers: ``down`` per
    unit [[slot, w]], ``adds`` per position per unit [[slot, out·w]] (what the unit's output
    writes through it), ``wrote`` per position {slot: the FFN's whole write} (hook_mlp_out,
    the sum of the units' ``adds`` in the run), as ``cell``s."""
    ns, name = cache.ns, f"blocks.{layer}"
    with ns.arithmetic():
        w = _down_weights(ns, cache.model.blocks[layer].mlp.W_out, units)
        post = cache[f"{name}.mlp.hook_post"]
        adds = [[[[s, cell(row[i] * v)] for s, v in w[u].items()] for i, u in enumerate(units)]
                for row in post]
    slots = list(cache.labels(f"{name}.hook_mlp_out"))
    written = sorted({s for u in units for s in w[u]}, key=slots.index)
    return {"down": [[[s, cell(v)] for s, v in w[u].items()] for u in units], "adds": adds,
            "wrote": [{s: cell(row[slots.index(s)]) for s in written}
                      for row in cache[f"{name}.hook_mlp_out"]]}


def _plain(formulas):
    """``formulas()``, or None where a weight is no rational number (or W_out is factored)."""
    try:
        return formulas()
    except (TypeError, AttributeError, KeyError):
        return None


def _times(w, what):
    """|w|·what, or what alone for |w| = 1."""
    return what if abs(w) == 1 else f"{short(abs(w))}\u00b7{what}"


def _linear_of(block):
    """What a gated FFN's linear branch is, when its W_in copies one slot to every unit:
    'x̂0 (x0 normalised)' after a norm, 'x0' without one; None otherwise."""
    mlp = block.mlp
    if not mlp.gated or len(mlp.W_in) != 1 or any(mlp.b_in.values()):
        return None
    (slot, row), = mlp.W_in.items()
    if set(row.values()) != {1}:
        return None
    return f"{slot[0]}\u0302{slot[1:]} ({slot} normalised)" if block.ln2 else slot


def _affine(weights, bias, unit):
    """A unit's input as a formula, b + Σ w·slot: '992 − x0', '1812 − 2·x0 + 20·x1'
    (``weights``: {slot: {unit: w}}, ``bias``: {unit: b})."""
    b = bias.get(unit, 0)
    said = short(b).replace("-", "\u2212") if b else ""
    for slot, row in weights.items():
        w = row.get(unit, 0)
        if w:
            sign = "\u2212" if w < 0 else "+"
            said += f" {sign} {_times(w, slot)}" if said else (
                f"{'' if w > 0 else sign}{_times(w, slot)}")
    return said or "0"


def _writes(row):
    """What a unit's output adds to each slot, Σ slot ± w·out: 'x1 + out', 'x1 − 10·out'."""
    return ", ".join(f"{slot} {'+' if w > 0 else chr(0x2212)} {_times(w, 'out')}"
                     for slot, w in row.items() if w) or "nothing"


# ----------------------------------------------------------------------------- residual

def view_stages(model):
    """``cache.stages``, then the mix (``model.mix``: x = first + g·(last − first), recorded as
    hook_mix), which the readout reads in place of the last block's output."""
    out = stages(model)
    if model.mix is not None:
        first, last = model.mix.first, len(model.blocks) - 1
        out.append(Stage(f"the mix of layer {first}'s and layer {last}'s outputs", "mix",
                         "hook_mix", None, "mix"))
    return out


def _order(x, y):
    """1 if x > y, -1 if x < y, read off two Multiscales' 40-digit enclosures (they contain
    the exact values, so a gap between them decides); None where they overlap or either is
    not a Multiscale. Subtracting two of them adds their long rational parts, which is what
    made comparing nino-116's exact logits take seconds a row."""
    if not (isinstance(x, Multiscale) and isinstance(y, Multiscale)):
        return None
    try:
        bx, by = x.box(40), y.box(40)
    except Undecided:
        return None
    return 1 if bx.lo > by.hi else -1 if bx.hi < by.lo else None


def greater(x, y):
    """x > y, decided by the enclosures where they can (``_order``), else exactly."""
    found = _order(x, y)
    return x > y if found is None else found > 0


def differ(x, y):
    """x != y: the same object is equal; else as ``greater`` decides order; a difference
    whose sign no enclosure decides (``explain.dust``: below 10^-1000 or so) is not a
    change the page can draw, and counts as none."""
    if x is y:
        return False
    found = _order(x, y)
    if found is not None:
        return True
    if isinstance(x, Multiscale) or isinstance(y, Multiscale):
        return dust(x - y) is None and x != y
    return x != y


def quick_argmax(row):
    """``generate.argmax`` (the first of the largest) with ``greater``'s comparisons: the
    best so far changes only for a strictly greater value."""
    best = 0
    for u in range(1, len(row)):
        if greater(row[u], row[best]):
            best = u
    return best


def residual_view(cache, probe, intents):
    """Per stage (embedding, each half-layer) and slot, the value at every position, whether
    that stage changed it, whether it departs from its intended value (``probes.check``; never
    without the construction's slots), and the intended value's text; then the readout: the
    last stage's slots and the logits per digit token, ``changed`` marking the winner at each
    position that predicts a digit."""
    model = cache.model
    out = []
    before = None
    for stage in view_stages(model):
        values = cache[stage.name]
        labels = cache.labels(stage.name)
        slots = []
        for s, slot in enumerate(labels):
            cells, changed, departs, want = [], [], [], []
            for pos, row in enumerate(values):
                old = before[pos][s] if before is not None and s < len(before[pos]) else None
                cells.append(cell(row[s]))
                changed.append(before is not None and differ(row[s], old if old is not None
                                                             else cache.ns.zero))
                departs.append(probe is not None and slot in probe.departures_at(pos,
                                                                                 stage.name))
                want.append(text(intents[stage.name][pos][slot].value) if intents else "")
            slots.append({"slot": slot, "cells": cells, "changed": changed,
                          "departs": departs, "intended": want})
        out.append({"short": stage.short, "label": stage.label, "name": stage.name,
                    "slots": slots})
        before = values
    logits = cache["logits"]
    tokens = cache.labels("unembed.hook_out")
    firsts = [quick_argmax(row) if all(finite(v) for v in row) else None for row in logits]
    winners = [w if pos in cache.predicting else None for pos, w in enumerate(firsts)]
    # the readout sees the last stage's slots, unchanged; then its logits, winners outlined
    readout = [dict(row, changed=[False] * len(row["changed"])) for row in out[-1]["slots"]]
    best = [None if w is None else row[w] for row, w in zip(logits, firsts)]
    for u, token in enumerate(tokens):
        readout.append({"slot": f"logit {token}", "cells": [cell(row[u]) for row in logits],
                        "gap": [cell(row[u] - top) if top is not None else [None, None, "?"]
                                for row, top in zip(logits, best)],
                        "changed": [w == u for w in winners],
                        "departs": [probe is not None and token in probe.departures_at(
                            pos, READOUT) for pos in range(len(logits))],
                        "intended": ["" for _ in logits]})
    out.append({"short": "readout", "label": "readout", "name": "unembed.hook_out",
                "slots": readout})
    return out


def meanings(model):
    """{stage short: {slot: [formula anywhere, formula at a deciding position]}}: what each
    slot holds, for the hovers. Placeholders, filled per position by the page: {i2} = i + 2,
    {P} = the place being decided, {x} = (R + b + ℓ)/P there."""
    n = digits_of(model)
    published = model.readout.get("0") == "eq"
    read = {slot: u for u, slot in ((u, model.readout.get(str(u))) for u in range(10))}
    avg = "+ layer 1's running average (1000/{i2})\u00b7(R + b + \u2113)"
    # before a digit of the sum is predicted, R is no remainder yet: the digits read so far
    read_so_far = (avg + ", R the digits read so far at their places (a's and b's, less the "
                   "sum's digits written)")
    out = {"embed": {"eq": ["1 on '=', else 0"] * 2,
                     "special": ["1 on <bos>, +, = and <eos>, else 0"] * 2,
                     "digit": ["10\u00b7d on a digit d (0 for the digit 0)"] * 2,
                     "count": ["0: head 3 writes it"] * 2, "scale": ["0: head 4 writes it"] * 2},
           "L0.attn": {"count": ["\u03a3 over the special tokens j before i: 10^-(i\u2212j) "
                                 "(\u221210\u00b710^-(i\u2212j) from =): the place value"] * 2,
                       "scale": ["1/(i+2) from = on, else 0 (head 4: uniform weights, value "
                                 "eq)", "1/{i2}"]},
           "L0.mlp": {"digit_pos": [f"digit\u00b7count\u00b710^{n}: 10\u00d7 the digit's value "
                                    "at its place (negative on the sum's digits)"] * 2}}
    for u in range(10):
        out["L0.mlp"][f"cand{u}"] = [
            f"relu(scale)\u00b7({u} + \u00bd)\u00b7count\u00b710^{n + 2}: 0 before =",
            f"\u2212(1000/{{i2}})\u00b7({u} + \u00bd)\u00b7P, P = {{P}}: the ruler mark "
            f"{u} + \u00bd"]
    out["L1.attn"] = {s: [read_so_far, avg] for s in model.slots[:len(SLOTS)]}
    out["L1.mlp"] = {}
    for u in range(10):
        out["L1.attn"][f"cand{u}"] = [read_so_far, f"= (1000/{{i2}})\u00b7(x \u2212 {u}.5)"
                                                   f"\u00b7P with x = {{x}}, P = {{P}}"]
    for slot, u in read.items():
        tilt = (f" + what {slot} held before (that added part is the published readout's "
                "tilt)" if published
                else "")
        out["L1.mlp"][slot] = [f"err{u} = 10^6\u00b7|cand{u} + average|{tilt}",
                               # x after the sum: it is err's x, not an added term
                               f"err{u} = (10^9/{{i2}})\u00b7|x \u2212 {u}.5|\u00b7P{tilt}, "
                               f"with x = {{x}}"]
    out["readout"] = {f"logit {u}": [f"\u2212{slot}: the largest logit wins"] * 2
                      for slot, u in read.items()}
    return out


# ----------------------------------------------------------------------------- decisions

def _distance_texts(d):
    """|x - (u + 1/2)| for each u, with decimals enough to tell the two nearest apart."""
    places = max(4, 1 - exponent(d.margin / d.place)) if d.margin else 4
    places = min(places, 30)
    out = []
    for u in range(10):
        q = d.distance[u] / d.place
        n = round(q * 10 ** places)
        out.append(f"{n // 10 ** places}.{n % 10 ** places:0{places}d}")
    return out


def _ratio(tilt, margin):
    """tilt / margin as a float, None when the tilt is 0 or favours the nearest digit."""
    return float(tilt / margin) if tilt > 0 and margin > 0 else None


def decisions_view(cache, a, b):
    """Per position that predicts a digit, ``explain.decisions`` in words of the page: R, b,
    ℓ, x = (R + b + ℓ)/P, the digit written and the right one, the margin, the tilt and the
    lead in units of the sum (and in logits), their ratio (the direct logit attribution of
    logit(nearest) - logit(rival): +margin from layer 1's FFN, -tilt from the rest of the
    readout's slot), and the same against every other digit."""
    found = decisions(cache)
    right = f"{a + b:0{len(found)}d}"
    expected = remaining_values(a, b, "".join(d.written for d in found))
    out = []
    for k, d in enumerate(found):
        per_digit = []
        for u in range(10):
            m = d.distance[u] - d.distance[d.nearest]
            t = d.others[d.nearest] - d.others[u]
            per_digit.append({"margin": figure(m), "tilt": figure(t),
                              "ratio": None if u == d.nearest else _ratio(t, m)})
        out.append({
            "pos": d.pos, "token": d.token, "written": d.written, "right": right[k],
            "nearest": d.nearest, "chosen": d.chosen, "rival": d.rival,
            "flipped": d.flipped, "power": d.power,
            "R": str(d.remaining), "expected_R": str(expected[k]),
            "total": _decimal_text(d.total), "b": short(d.bias),
            "quotient": quotient(d),
            "leak": short(d.leakage), "x": to_float(d.x), "x_text": shown(x_text(d)),
            "distance": _distance_texts(d),
            "margin": figure(d.margin), "tilt": figure(d.tilt), "lead": figure(d.lead),
            "margin_f": to_float(d.margin), "tilt_f": to_float(d.tilt),
            "margin_logits": figure(d.margin * d.size), "tilt_logits": figure(d.tilt * d.size),
            "margin_logits_text": text(d.margin * d.size),
            "lead_logits": text(d.lead * d.size), "unit": figure(d.size),
            "ratio": _ratio(d.tilt, d.margin), "margin_p": to_float(d.margin / d.place),
            "ratio_text": pretty(figure(d.tilt / d.margin, 2)) if d.margin else "",
            "per_digit": per_digit,
            "tilted": any(o != d.others[0] for o in d.others),
            "offset": to_float(d.bias + d.leakage), "offset_text": short(d.bias + d.leakage),
        })
    return out


def _decimal_text(x, places=3):
    """A value as a decimal with ``places`` decimals, its integer part in full."""
    x = Fraction(x)
    scaled = round(x * 10 ** places)
    sign = "-" if scaled < 0 else ""
    whole, frac = divmod(abs(scaled), 10 ** places)
    return f"{sign}{whole}.{frac:0{places}d}"


# ----------------------------------------------------------------------------- parameters

def _copy_targets(model):
    """{(layer, 'attn'|'mlp', head or unit): [slots]} from the copy maps W_O and W_out."""
    out = {}
    for tensor in tensors(model):
        name = tensor.name
        if name.endswith(("attn.W_O", "mlp.W_out")):
            layer = int(name.split(".")[1])
            kind = name.split(".")[2]
            for (src, slot) in tensor.entries:
                out.setdefault((layer, kind, src), []).append(slot)
    return out


SCORE_TENSORS = ("W_Q", "b_Q", "W_K", "b_K")


def _groups(line):
    """[(value, [entry keys])] of a ledger line: each distinct value (per token row in the
    embedding) with the entries holding it: one per counted parameter in TinyAdder-36, whose
    ledger counts distinct values."""
    groups = []
    for key, value in line.tensor.entries.items():
        row = key[0] if line.role == "embedding" else None
        for g in groups:
            if g[0] == row and g[1] == value:
                g[2].append(key)
                break
        else:
            groups.append((row, value, [key]))
    # a model whose ledger counts otherwise (a board model's rule) shows its distinct values
    return [(value, keys) for _, value, keys in groups]


def parameters(model):
    """The counted parameters, one entry per parameter, from the ledger: each distinct value
    of a counted tensor (per token row in the embedding), the entries holding it, the slots
    it reads, the slots it writes (through the output and down projections) and, for a query
    or key parameter, which writes no slot, the heads whose scores it sets."""
    targets = _copy_targets(model)
    slots = set(model.slots)
    out = []
    for line in ledger(model):
        if not line.params:
            continue
        t = line.tensor
        parts = t.name.split(".")
        layer, kind = (int(parts[1]), parts[2]) if parts[0] == "blocks" else (None, None)
        scores = parts[-1] in SCORE_TENSORS
        for value, keys in _groups(line):
            reads, writes, heads = [], [], []
            for r, c in keys:
                if r in slots and line.role != "embedding" and r not in reads:
                    reads.append(r)
                if scores:
                    heads += [f"L{layer}.{c}"] if f"L{layer}.{c}" not in heads else []
                    continue
                dests = [c] if c in slots else targets.get((layer, kind, c), [])
                writes += [s for s in dests if s not in writes]
            out.append({"tensor": t.name, "part": t.part, "value": str(value),
                        "rule": line.rule,
                        "entries": [c if r is None else f"{r} -> {c}" for r, c in keys],
                        "reads": reads, "writes": writes, "heads": heads,
                        "stage": stage_of(t.name)})
    return out


def stage_of(name):
    """The stage a tensor belongs to: 'L0.attn', 'L1.mlp', 'readout' (unembed.*), else
    'embed'."""
    parts = name.split(".")
    if parts[0] == "unembed":
        return "readout"
    if parts[0] != "blocks":
        return "embed"
    return f"L{parts[1]}.{'attn' if parts[2] == 'attn' else 'mlp'}"


def counted_by_stage(model):
    """{stage: the ledger's count of the tensors of that stage (``stage_of``)}: the counted
    parameters, which the drawn distinct values per tensor need not equal."""
    out = {}
    for line in ledger(model):
        if line.params:
            stage = stage_of(line.tensor.name)
            out[stage] = out.get(stage, 0) + line.params
    return out


# ----------------------------------------------------------------------------- all

def param_claim(model):
    """Where the count a model claims (its name's, ``about["params_claimed"]``) is not the
    ledger's (seed 000's rule): {claimed, rule: the rule the claim is read under
    (``board.own_rule``), under_rule: the count under it, ledger}; None where they agree or
    nothing is claimed."""
    claimed = model.about.get("params_claimed") if model.about else None
    counts = rules(model)
    if claimed is None or claimed == counts["seed000"].params:
        return None
    rule = own_rule(model.name, claimed, counts, model.about.get("family", ""))
    return {"claimed": claimed, "rule": rule, "under_rule": counts[rule].params,
            "ledger": counts["seed000"].params}


def rope_period(cache):
    """The positions after which a one-layer model's rotary head turns full circle, 2π/f for
    its one frequency f, where that is a whole number of positions within the sequence
    (rope-19's 19); None for any other model."""
    blocks = cache.model.blocks
    freqs = getattr(blocks[0].attn, "rope_freqs", None) if len(blocks) == 1 else None
    if not freqs or len(freqs) != 1:
        return None
    try:
        period = 2 * math.pi / float(cache.ns.const(freqs[0]))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    whole = round(period)
    return whole if abs(period - whole) < 1e-3 and 1 < whole < len(cache.text) else None


def build_views(cache, a, b, changes=True):
    """Everything the explorer shows for one traced run of a + b, as JSON-ready data. Sums,
    differences and ratios of the run's values are taken in its number system's arithmetic
    (decimal's precision, not Python's default 28 digits). ``changes``: also run the
    ordinary-softmax model and the "change one thing" variants (``variants``)."""
    with cache.ns.arithmetic():
        return _build_views(cache, a, b, changes)


def _build_views(cache, a, b, changes):
    model = cache.model
    task = tasks.has_task(model)  # then a is the task's input and b is None
    n = None if task else digits_of(model)
    gaps = missing(model)
    lacks = {name: need(model) for name, need in NEEDS.items()}
    probe = check(cache, a, b, n) if not lacks["probes"] else None
    intents = intended(model, a, b, n)[0] if probe else None
    heads, hidden, why = attention_view(cache)
    answer = _answer(cache)
    count = _slot_row(cache, "blocks.0.hook_resid_mid", "count") if not gaps["count"] else None
    first = probe.first if probe else None
    views = {
        "model": model.name, "number": cache.ns.describe(), "digits": n,
        "family": not lacks["probes"], "layout": layout_text(model),
        "title": "TinyAdder-36" if not lacks["probes"] else model.name,
        "about": {k: model.about.get(k) for k in ("title", "author", "family",
                                                   "params_claimed", "notes")},
        "a": str(a), "b": str(b), "sum": _expected(model, a, b), "answer": answer,
        "correct": answer == _expected(model, a, b).zfill(len(answer)), "text": cache.text,
        "task": {"input": a, "expected": tasks.expected(model, a)} if task else None,
        "prompt_len": cache.prompt_len, "predicting": list(cache.predicting),
        "missing": gaps,
        "tokens": tokens_view(cache, not lacks["alibi"]),
        "stages": [{"short": s.short, "label": s.label, "name": s.name}
                   for s in view_stages(model)] + [
            {"short": "readout", "label": "readout", "name": "unembed.hook_out"}],
        "heads": heads, "hidden_heads": hidden, "hidden_why": why,
        "rope_period": rope_period(cache),
        "place_head": head_key(0, alibi_head(model)) if not lacks["alibi"] else None,
        "place_slope": (str(model.blocks[0].attn.slopes[alibi_head(model)])
                        if not lacks["alibi"] else None),
        "count": [cell(c) for c in count] if count else None,
        "residual": residual_view(cache, probe, intents),
        "hidden": hidden_units(cache),
        "meanings": meanings(model) if probe else (
            family_meanings(model)),
        "decisions": decisions_view(cache, a, b) if not gaps["ruler"] else [],
        "verdict": probe.verdict() if probe else "",
        "first_departure": None if first is None else {
            "pos": first.pos, "stage": first.stage, "slot": first.slot},
        "program": [{"stage": name, "reads": sorted(r, key=model.slots.index),
                     "writes": sorted(w, key=model.slots.index)}
                    for name, r, w in half_layers(model)],
        "params": parameters(model),
        "param_total": sum(line.params for line in ledger(model)),
        "param_counted": counted_by_stage(model),
        "rule_counts": {name: [rule.params, RULES[name].split(":")[0]]
                        for name, rule in rules(model).items()},
        "param_claim": param_claim(model),
        "slots": list(model.slots),
        "readout_slots": [model.readout.get(str(u)) for u in range(10)] if model.readout
        else None,
        "digit_scale": model.W_E["1"].get("digit") if "1" in model.W_E else None,
        "softmax": None, "variants": [], "design": None if task else design(model),
        "ffn_off": None,
    }
    flaw = next((d["pos"] for d in views["decisions"] if d["written"] != d["right"]), None)
    views["flaw_pos"] = flaw
    if changes and not gaps["change"]:
        views["softmax"] = softmax_view(model, a, b)
        views["variants"] = [change_view(c, a, b) for c in variants.changes(model)]
    elif changes and lacks["probes"] and not task:
        views["ffn_off"] = ffn_off_view(model, a, b, off_numbers(model, cache.ns))
    return views


def off_numbers(model, ns):
    """The numbers the FFN-off run takes: the page's when they are floats; else the model's
    own dtype (float32 or float), so that an exact page does not pay for a second exact run."""
    if ns.describe().startswith("float"):
        return ns
    return {"float64": "float"}.get(model.about.get("dtype"), model.about.get("dtype")) or ns


def ffn_off_view(model, a, b, ns):
    """The run of a + b with the last block's FFN switched off (its output, hook_mlp_out,
    replaced by zeros at every position, in generation too): the block's index, the answer
    and every token, for the tour's "change one thing" of a model outside the family."""
    layer = len(model.blocks) - 1
    patch = {f"blocks.{layer}.hook_mlp_out": lambda rows: [[v - v for v in r] for r in rows]}
    cache = run_with_cache(model, encode(model, a, b), ns=ns, patch=patch)[1]
    answer = _answer(cache)
    read = view_stages(model)[-1].name  # the stream the readout reads
    with cache.ns.arithmetic():
        values = {slot: [cell(v) for v in _slot_row(cache, read, slot)]
                  for slot in (model.slots if len(model.slots) <= NUMBERED_SLOTS else ())}
    return {"layer": layer, "answer": answer, "number": cache.ns.describe(),
            "correct": answer == f"{a + b:0{len(answer)}d}",
            "tokens": [model.vocab[t] for t in cache.tokens], "values": values}


def _expected(model, a, b):
    """The right answer as text: a + b, or a finite task's answer for its input a."""
    return tasks.expected(model, a) if tasks.has_task(model) else str(a + b)


def _answer(cache):
    """The sum the model wrote, most significant digit first and zero-padded to the answer's
    digits whatever order it writes them in (lokimorty-10 writes s0 first); what it wrote,
    as text, where it wrote something else than digits."""
    if tasks.has_task(cache.model):
        return tasks.answer(cache.model, cache.tokens)
    value = answer(cache.model, cache.tokens)
    return f"{value:0{cache.model.prompt.answer_digits}d}" if isinstance(value, int) else value


def softmax_view(model, a, b):
    """The model with an ordinary softmax in every head: its sum and its count."""
    cache = variants.softmax_run(model, a, b)
    answer = _answer(cache)
    return {"answer": answer, "correct": answer == f"{a + b:0{len(answer)}d}",
            "number": cache.ns.describe(),
            "count": [cell(c) for c in _slot_row(cache, "blocks.0.hook_resid_mid", "count")]}


def change_view(change, a, b):
    """One variant's run: its sum, and per deciding position x, the digit written and the
    lead (units of the sum)."""
    cache = variants.run(change.model, a, b)
    answer = _answer(cache)
    with cache.ns.arithmetic():
        rows = [{"pos": d.pos, "x": to_float(d.x), "x_text": shown(x_text(d)), "written": d.written,
                 "lead": figure(d.lead)} for d in decisions(cache)]
    return {"key": change.key, "label": change.label, "what": change.what, "answer": answer,
            "correct": answer == f"{a + b:0{len(answer)}d}", "number": cache.ns.describe(),
            "rows": rows}


class Overflowed(ValueError):
    """The run's values are not all finite (a float system overflowed): the figures, read from
    them, cannot be drawn. The message says where."""


def views_of(model, a, b, ns=None):
    """Trace a + b (a finite task's input a, b None: ``task``) with
    ``trace.run_with_cache``, fraction by default, and build its views; raise Overflowed when
    a float run overflowed."""
    prompt = tasks.encode(model, a) if tasks.has_task(model) else encode(model, a, b)
    _, cache = run_with_cache(model, prompt, ns=ns)
    where = overflow(cache)
    if where:
        raise Overflowed(f"the run in {cache.ns.spec} overflows ({where}): the figures are read "
                         f"from finite values; use --number decimal or fraction")
    return build_views(cache, a, b)
