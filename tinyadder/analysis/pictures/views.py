"""The explorer's views as data: every number the page and the figures show, read from one
traced run (``trace.run_with_cache``), its intended values (``probes``) and the parameter
ledger (``ledger``). Nothing here re-derives what the model computes.

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
"""

from decimal import Decimal
from fractions import Fraction
import math

from ...addition import digits_of, encode
from ...generate import argmax
from ...weights import live_heads
from ..ledger import ledger, tensors
from ..text import log10_abs, to_float
from ..probes import READOUT, check, intended
from ..program import half_layers
from ..show import MARK, SHORT, SIG, fmt, rounded
from ...cache import run_with_cache, stages

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
    thousand-digit numerator and denominator to Decimal (same digits, much faster)."""
    long = isinstance(x, Fraction) and (
        x.numerator.bit_length() + x.denominator.bit_length() > 4 * SHORT)
    if long:
        d = _rounded_decimal(x, SIG)
        if d is not None:
            return MARK + rounded(d if x > 0 else -d, SIG)
    return fmt(x)


def cell(x):
    """[float (None beyond a double's range), log10 |x| (None for 0), the tracer's text]."""
    f = to_float(x)
    return [f if math.isfinite(f) else None, log10_abs(x), text(x)]


def token_roles(cache):
    """'a', 'b', 'special' or 'sum' per position: operand a's digits come before '+',
    b's between '+' and '=', and the sum's are the generated positions."""
    vocab = cache.model.vocab
    roles, seen_plus = [], False
    for pos, t in enumerate(cache.tokens):
        text = vocab[t]
        if pos >= cache.prompt_len:
            roles.append("sum")
        elif not text.isdigit():
            roles.append("special")
            seen_plus = seen_plus or text == "+"
        else:
            roles.append("b" if seen_plus else "a")
    return roles


def tokens_view(cache):
    """Per position: its text, role, the place value its digit holds and the place value it
    predicts. The place value is read from the ``count`` slot (layer 0 head 3's output):
    count ~ +-10^(e - N) on a digit of place 10^e."""
    n = digits_of(cache.model)
    count = [row[cache.model.slots.index("count")] for row in cache["resid_mid", 0]]
    roles = token_roles(cache)
    places = [round(log10_abs(c)) + n if role != "special" and c else None
              for role, c in zip(roles, count)]
    out = []
    for pos, t in enumerate(cache.tokens):
        nxt = pos + 1 < len(cache.tokens)
        out.append({"pos": pos, "text": cache.model.vocab[t], "role": roles[pos],
                    "place": places[pos],
                    "predicts": cache.model.vocab[cache.tokens[pos + 1]]
                    if nxt and pos in cache.predicting else None,
                    "next_place": places[pos + 1] if nxt and pos in cache.predicting else None})
    return out


def head_key(layer, head):
    return f"L{layer}.{head}"


def attention_view(cache):
    """The live heads' weights, and the heads not shown with the reason.

    Per head and query q: ``softmax1`` cells for keys 0..q then the sink 1 - sum (the weight
    softmax1 gives to nothing); ``softmax`` the same scores under an ordinary softmax,
    exp(s_qk) / sum_l exp(s_ql) = pattern_qk / sum_l pattern_ql (same numerators, no +1), which
    has no sink; ``score`` the score's text as the tracer prints it.
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
                row = row[:q + 1]
                total = sum(row, ns.zero)
                one.append([cell(w) for w in row] + [cell(ns.one - total)])
                two.append([cell(w / total) for w in row])
                said.append([fmt(s) for s in scores[q][:q + 1]])
            heads[head_key(layer, h)] = {"layer": layer, "head": h, "softmax1": one,
                                         "softmax": two, "score": said}
    why = (f"{', '.join(hidden)} have no value or no output map (their output is zero), "
           f"so they cannot change the stream and are not shown") if hidden else ""
    return heads, hidden, why


def _slot_row(cache, name, slot):
    labels = cache.labels(name)
    return [row[labels.index(slot)] for row in cache[name]] if slot in labels else None


def residual_view(cache, probe):
    """Per stage (embedding, each half-layer) and slot, the value at every position, whether
    that stage changed it, whether it departs from its intended value (``probes.check``), and
    the intended value's text; then the readout: the last stage's slots and the logits per
    digit token, ``changed`` marking the winner at each position that predicts a digit."""
    model = cache.model
    rows, _ = intended(model, probe.a, probe.b, digits_of(model))
    out = []
    before = None
    for stage in stages(model):
        values = cache[stage.name]
        labels = cache.labels(stage.name)
        slots = []
        for s, slot in enumerate(labels):
            cells, changed, departs, want = [], [], [], []
            for pos, row in enumerate(values):
                old = before[pos][s] if before is not None and s < len(before[pos]) else None
                cells.append(cell(row[s]))
                changed.append(before is not None and row[s] != (old if old is not None
                                                                 else cache.ns.zero))
                departs.append(slot in probe.departures_at(pos, stage.name))
                want.append(text(rows[stage.name][pos][slot].value))
            slots.append({"slot": slot, "cells": cells, "changed": changed,
                          "departs": departs, "intended": want})
        out.append({"short": stage.short, "label": stage.label, "name": stage.name,
                    "slots": slots})
        before = values
    logits = cache["logits"]
    tokens = cache.labels("unembed.hook_out")
    winners = [argmax(row) if pos in cache.predicting else None
               for pos, row in enumerate(logits)]
    # the readout sees the last stage's slots, unchanged; then its logits, winners outlined
    readout = [dict(row, changed=[False] * len(row["changed"])) for row in out[-1]["slots"]]
    for u, token in enumerate(tokens):
        readout.append({"slot": f"logit {token}", "cells": [cell(row[u]) for row in logits],
                        "changed": [w == u for w in winners],
                        "departs": [token in probe.departures_at(pos, READOUT)
                                    for pos in range(len(logits))],
                        "intended": ["" for _ in logits]})
    out.append({"short": "readout", "label": "readout", "name": "unembed.hook_out",
                "slots": readout})
    return out


def digit_scale(model):
    """The embedding's factor: digit d is embedded as digit_scale * d in the slot digit."""
    return model.W_E["1"]["digit"]


def decisions_view(cache, probe):
    """Per position that predicts a digit: the readout's winner and margin (as the tracer
    prints them), the intended digit, the running sum, the ruler and the published tilt.

    - running sum: what is left to write, R = sum_{j <= i} digit_pos_j / (digit's embedding
      scale), a + b minus the digits already emitted;
    - ruler: at layer 1's attention the candidate slots hold e_u = cand_u + avg =
      avg - (u + 1/2) * unit, so the dot x = e_0 / (e_0 - e_1) + 1/2 sits on a 0..10 line
      whose marks u + 1/2 the errors err_u = 10^6 |e_u| measure from;
    - tilt: the readout slot of digit u holds err_u plus what was there before layer 1's FFN
      (``tilt_u``); only differences matter. ``choice`` is the digit with the smallest err,
      ``threat`` the other digit whose logit comes closest; the tilt flips the readout when
      tilt_choice - tilt_threat exceeds err_threat - err_choice.
    """
    model = cache.model
    slots = model.slots
    scale = digit_scale(model)
    digit_pos = _slot_row(cache, "blocks.0.hook_resid_post", "digit_pos")
    last = len(model.blocks) - 1
    mid = f"blocks.{last}.hook_resid_mid"
    mlp = f"blocks.{last}.hook_mlp_out"
    tokens = cache.labels("unembed.hook_out")
    out = []
    running = cache.ns.zero
    for pos in range(len(cache.tokens)):
        running = running + digit_pos[pos]
        if pos not in cache.predicting:
            continue
        logits = cache["logits"][pos]
        best = argmax(logits)
        runner = max((u for u in range(len(logits)) if u != best), key=lambda u: logits[u])
        errs = [cache.view(mlp, pos)[model.readout[t]] for t in tokens]
        view_mid = cache.view(mid, pos)
        tilts = [view_mid.get(model.readout[t], cache.ns.zero) for t in tokens]
        e = [view_mid[f"cand{u}"] for u in range(len(tokens))]
        unit = e[0] - e[1]
        x = e[0] / unit + cache.ns.one / 2
        choice = min(range(len(errs)), key=lambda u: errs[u])
        final = [errs[u] + tilts[u] for u in range(len(errs))]
        threat = min((u for u in range(len(errs)) if u != choice),
                     key=lambda u: final[u] - final[choice])
        want = probe.intended_winner(pos)
        out.append({
            "pos": pos, "winner": tokens[best], "runner": tokens[runner],
            "margin": cell(logits[best] - logits[runner]),
            "intended": want if want is not None else tokens[best],
            "remaining": cell(running / scale), "remaining_text": _decimal_text(running / scale),
            "x": to_float(x), "signed": [to_float(eu / unit) for eu in e],
            "errors": [cell(v) for v in errs],
            "choice": tokens[choice], "threat": tokens[threat],
            "err_gap": cell(errs[threat] - errs[choice]),
            "tilt_gap": cell(tilts[choice] - tilts[threat]),
            "d_err": [cell(v - errs[choice]) for v in errs],
            "d_tilt": [cell(tilts[choice] - v) for v in tilts],
            # exact comparisons, for drawing: does the tilt favour digit u, and beat its margin
            "favours": [tilts[choice] > v for v in tilts],
            "beats": [tilts[choice] - tilts[u] > errs[u] - errs[choice]
                      for u in range(len(errs))],
            "tilted": any(t != tilts[0] for t in tilts),
        })
    return out


def _decimal_text(x, places=3):
    """A value as a decimal with ``places`` decimals, its integer part in full."""
    x = Fraction(x)
    scaled = round(x * 10 ** places)
    sign = "-" if scaled < 0 else ""
    whole, frac = divmod(abs(scaled), 10 ** places)
    return f"{sign}{whole}.{frac:0{places}d}"


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


def parameters(model):
    """The counted parameters, one entry per parameter, from the ledger: each distinct value
    of a counted tensor (per token row in the embedding), the entries holding it, the slots
    it reads and the slots it writes (through the output and down projections)."""
    targets = _copy_targets(model)
    slots = set(model.slots)
    out = []
    for line in ledger(model):
        if not line.params:
            continue
        t = line.tensor
        parts = t.name.split(".")
        layer, kind = (int(parts[1]), parts[2]) if parts[0] == "blocks" else (None, None)
        groups = []
        for key, value in t.entries.items():
            row = key[0] if line.role == "embedding" else None
            for g in groups:
                if g[0] == row and g[1] == value:
                    g[2].append(key)
                    break
            else:
                groups.append((row, value, [key]))
        if len(groups) != line.params:
            raise ValueError(f"{t.name}: {len(groups)} values for {line.params} parameters")
        for _, value, keys in groups:
            reads, writes = [], []
            for r, c in keys:
                if r in slots and line.role != "embedding" and r not in reads:
                    reads.append(r)
                dests = [c] if c in slots else targets.get((layer, kind, c), [])
                writes += [s for s in dests if s not in writes]
            out.append({"tensor": t.name, "part": t.part, "value": str(value),
                        "rule": line.rule,
                        "entries": [c if r is None else f"{r} -> {c}" for r, c in keys],
                        "reads": reads, "writes": writes,
                        "stage": "embed" if layer is None else f"L{layer}.{kind[:4]}"
                        if kind == "attn" else f"L{layer}.mlp"})
    return out


def build_views(cache, a, b):
    """Everything the explorer shows for one traced run of a + b, as JSON-ready data. Sums,
    differences and ratios of the run's values are taken in its number system's arithmetic
    (decimal's precision, not Python's default 28 digits)."""
    with cache.ns.arithmetic():
        return _build_views(cache, a, b)


def _build_views(cache, a, b):
    model = cache.model
    probe = check(cache, a, b, digits_of(model))
    heads, hidden, why = attention_view(cache)
    decisions = decisions_view(cache, probe)
    first = probe.first
    answer = "".join(model.vocab[t] for t in cache.tokens[cache.prompt_len:])
    count = _slot_row(cache, "blocks.0.hook_resid_mid", "count")
    return {
        "model": model.name, "number": cache.ns.describe(), "digits": digits_of(model),
        "a": str(a), "b": str(b), "sum": str(a + b), "answer": answer,
        "correct": int(answer) == a + b, "text": cache.text,
        "prompt_len": cache.prompt_len, "predicting": list(cache.predicting),
        "tokens": tokens_view(cache),
        "stages": [{"short": s.short, "label": s.label, "name": s.name}
                   for s in stages(model)] + [
            {"short": "readout", "label": "readout", "name": "unembed.hook_out"}],
        "heads": heads, "hidden_heads": hidden, "hidden_why": why,
        "count": [cell(c) for c in count],
        "residual": residual_view(cache, probe),
        "decisions": decisions,
        "verdict": probe.verdict(),
        "first_departure": None if first is None else {
            "pos": first.pos, "stage": first.stage, "slot": first.slot},
        "flaw_pos": next((d.pos for d in probe.departures if d.stage == READOUT), None),
        "program": [{"stage": name, "reads": sorted(r, key=model.slots.index),
                     "writes": sorted(w, key=model.slots.index)}
                    for name, r, w in half_layers(model)],
        "params": parameters(model),
        "slots": list(model.slots),
        "digit_scale": digit_scale(model),
    }


def views_of(model, a, b, ns=None):
    """Trace a + b (``trace.run_with_cache``, fraction by default) and build its views."""
    _, cache = run_with_cache(model, encode(model, a, b), ns=ns)
    return build_views(cache, a, b)
