"""``python -m tinyadder program``: the model as the register machine it is (seed article 003).

Everything printed is derived from the weight tables: which half-layer writes and reads each
slot, and each half-layer as instructions over named slots. Change a weight and the listing
changes. A head counts as live when it has a value map and an output map.

>>> from tinyadder import build
>>> for line in instructions(build("published")):
...     if "attend" in line:
...         print(line)
  count += attend(q = 1, k = 960*special - 1000, slope = ln 10, v = e^40*special - 11*e^40*eq)
  scale += attend(q = 1, k = 0, v = eq)
  every slot (16) += attend(q = 0, k = 0, v = 100*digit_pos + 15)
"""

from fractions import Fraction

from ..codegen import source
from ..numbers import ExpTerm
from ..plan import compile_model
from ..weights import Factored, live_heads, tensors
from .show import pack, rational_text


def _sign_and_text(w):
    """(negative?, text of |w|) for a construction constant."""
    if isinstance(w, ExpTerm):
        return w.coef < 0, str(ExpTerm(abs(w.coef), w.power))
    if isinstance(w, (int, Fraction)):
        return w < 0, rational_text(abs(Fraction(w)))
    return False, str(w)


def linear_text(table, bias, target):
    """sum_s table[s][target] * s + bias[target] as text: '960*special - 1000'."""
    terms = [(w, s) for s, row in table.items() for t, w in row.items() if t == target and w]
    b = bias.get(target, 0)
    if b:
        terms.append((b, None))
    if not terms:
        return "0"
    out = ""
    for k, (w, s) in enumerate(terms):
        negative, text = _sign_and_text(w)
        part = s if (s and text == "1") else (f"{text}*{s}" if s else text)
        out += ("-" if negative else "") + part if k == 0 else (
            f" - {part}" if negative else f" + {part}")
    return out


def half_layers(model):
    """[(short name, reads, writes)] for the embedding, each half-layer and the readout."""
    t = {tensor.name: tensor for tensor in tensors(model)}

    def sources(name, cols=None):
        return {r for r, c in t[name].entries if cols is None or c in cols}

    def targets(name, rows=None):
        return {c for r, c in t[name].entries if rows is None or r in rows}

    out = [("embed", set(), targets("W_E"))]
    for i, block in enumerate(model.blocks):
        a, m = f"blocks.{i}.attn", f"blocks.{i}.mlp"
        live = live_heads(block.attn)
        reads = set().union(*(sources(f"{a}.{w}", live) for w in ("W_Q", "W_K", "W_V")))
        out.append((f"L{i}.attn", reads, targets(f"{a}.W_O", live) | targets(f"{a}.b_O")))
        reads = sources(f"{m}.W_gate") | sources(f"{m}.W_in")
        out.append((f"L{i}.mlp", reads, targets(f"{m}.W_out") | targets(f"{m}.b_out")))
    out.append(("readout", sources("readout"), set()))
    return out


def slot_table(model):
    """One row per slot: written by, read by, last read."""
    stages = half_layers(model)
    rows = [("slot", "written by", "read by", "last read")]
    for slot in model.slots:
        writers = [name for name, _, writes in stages if slot in writes]
        readers = [name for name, reads, _ in stages if slot in reads]
        rows.append((slot, ", ".join(writers) or "-", ", ".join(readers) or "-",
                     readers[-1] if readers else "never"))
    widths = [max(len(r[k]) for r in rows) for k in range(3)]
    return [f"  {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip()
            for r in rows]


def _targets_text(model, targets, width):
    if list(targets) == list(model.slots[:width]) and len(targets) > 3:
        return f"every slot ({len(targets)})"
    return ", ".join(targets)


def _embedding(model):
    lines = ["embed  (one row per token; no positional embedding)"]
    for slot in model.slots[:model.width_embed]:
        on = [(t, row[slot]) for t, row in model.W_E.items() if row.get(slot)]
        if not on:
            continue
        digits = [(t, w) for t, w in on if t.isdigit()]
        scale = {Fraction(w) / int(t) for t, w in digits if int(t)}
        linear = digits and len(digits) == len(on) and all(int(t) for t, _ in digits)
        if linear and len(scale) == 1:  # '0' has no entry: its value 0 fits k*d too
            (k,) = scale
            lines.append(f"  {slot} = {rational_text(k)}*d on digit d")
        elif len({w for _, w in on}) == 1:
            lines.append(f"  {slot} = {rational_text(on[0][1])} on "
                         f"{', '.join(repr(t) for t, _ in on)}")
        else:
            lines.append(f"  {slot} = " + ", ".join(f"{rational_text(w)} on {t!r}" for t, w in on))
    return lines


def _attention(model, i, block):
    a = block.attn
    lines = [f"L{i}.attn  (softmax1 over j <= i of q_i*k_j - slope*(i - j); x += W_O z)"]
    live = live_heads(a)
    for h in live:
        targets = [s for s, w in a.W_O[h].items() if w]
        slope = a.slopes.get(h)
        parts = [f"q = {linear_text(a.W_Q, a.b_Q, h)}", f"k = {linear_text(a.W_K, a.b_K, h)}"]
        if slope:
            parts.append(f"slope = {slope}")
        parts.append(f"v = {linear_text(a.W_V, a.b_V, h)}")
        lines.append(f"  {_targets_text(model, targets, block.width_in)} += "
                     f"attend({', '.join(parts)})")
    dead = [h for h in a.heads if h not in live]
    if dead:
        lines.append(f"  {', '.join(dead)}: no effect (no value or no output)")
    return lines


def _mlp(model, i, block):
    m = block.mlp
    lines = [f"L{i}.mlp  (ReGLU: unit = relu(gate)*(up))"]
    if block.width_out > block.width_in:
        lines[0] += f"; the stream widens from {block.width_in} to {block.width_out} slots"
    for slot in model.slots[:block.width_out]:
        terms = []
        for u in m.units:
            w = m.W_out.get(u, {}).get(slot)
            if not w:
                continue
            negative, text = _sign_and_text(w)
            factor = "" if text == "1" else f"{text}*"
            terms.append(("- " if negative else "+ ") + f"{factor}relu("
                         f"{linear_text(m.W_gate, m.b_gate, u)})*("
                         f"{linear_text(m.W_in, m.b_in, u)})")
        if m.b_out.get(slot):
            terms.append(f"+ {rational_text(m.b_out[slot])}")
        if terms:
            body = " ".join(terms)
            body = body[2:] if body.startswith("+ ") else "-" + body[2:]
            lines.append(f"  {slot} += {body}")
    return lines


def instructions(model):
    """Each half-layer as instructions over named slots."""
    lines = _embedding(model)
    for i, block in enumerate(model.blocks):
        lines += _attention(model, i, block) + _mlp(model, i, block)
    lines.append("readout  (logit_t = -slot; the largest logit wins)")
    lines += pack([f"{t!r} = -{s}" for t, s in model.readout.items()], "  ")
    return lines


def wrap(line, width=80):
    """A long instruction broken after its commas, continuation lines indented past '('."""
    if len(line) <= width or "(" not in line:
        return [line]
    indent = " " * (line.index("(") + 1)
    lines = [""]
    for part in line.split(", "):
        piece = part if not lines[-1] else f"{lines[-1]}, {part}"
        if lines[-1].strip() and len(piece) + 1 > width:
            lines[-1] += ","
            lines.append(indent + part)
        else:
            lines[-1] = piece
    return lines


def unsupported(model):
    """What of ``model`` the listing cannot state (it reads TinyAdder-36's kind of model:
    softmax1 attention of one-dimensional heads with ALiBi slopes, ReGLU FFNs, no norms, no
    rotary or added positions, no factored maps, a negative-error readout), or None."""
    if model.ln_final is not None or model.W_pos or model.unembed.kind != "negative_error":
        return "a final norm, added positions or a readout other than negative error"
    for block in model.blocks:
        a, m = block.attn, block.mlp
        tables = (a.W_Q, a.W_K, a.W_V, a.W_O, m.W_gate, m.W_in, m.W_out)
        if (a.softmax != "softmax1" or a.head_dim != 1 or a.rope_freqs or a.q_norm
                or a.k_norm or block.ln1 or block.ln2 or a.scale != 1):
            return "attention other than softmax1 over one-dimensional heads, or norms"
        if m.act != "relu" or not m.gated:
            return "an FFN other than ReGLU"
        if any(isinstance(t, Factored) for t in tables):
            return "factored weights"
    return None


def listing(model):
    """The whole register-machine view: slot table, then the program."""
    stages = half_layers(model)
    program = []
    for line in instructions(model):
        program += wrap("    " + line[2:] if line.startswith("  ") else "  " + line)
    return "\n".join(
        [f"{model.name}: {len(model.slots)} slots, {len(stages) - 2} half-layers "
         f"(derived from the weights)", "", "slots"] + slot_table(model) +
        ["", "program"] + program) + "\n"


def python_source(model, ns):
    """The straight-line code the fast path runs for ``model`` in ``ns`` (``codegen``): the step
    of a position whose logits are wanted, then the one of a position whose are not, each
    after a list of the constants it binds by name."""
    compiled = compile_model(model, ns)
    parts = []
    for logits, what in ((True, "a position whose logits are wanted"),
                         (False, "a position whose logits are not (only what later positions "
                                 "read)")):
        text, env = source(compiled, logits)
        parts.append(f"# {model.name} in {ns.describe()}: the step of {what}")
        for name, value in env.items():
            if name.startswith("L") and name[1:2].isdigit():  # a weight or plan constant
                parts.append(f"#   {name} = {_short(value)}")
        parts.append(text)
    return "\n".join(parts)


def _short(value, width=70):
    """A constant's text for a comment: its repr, cut to ``width`` characters."""
    if isinstance(value, dict):
        return "{} (filled per token on use)"
    if hasattr(value, "heads"):
        return "(this block's weights, for the per-token keys and values)"
    text = (str(value) if isinstance(value, Fraction) and value.denominator == 1
            else rational_text(value) if isinstance(value, Fraction) else repr(value))
    return text if len(text) <= width else f"{text[:width - 3]}..."
