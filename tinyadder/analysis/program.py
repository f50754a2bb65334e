"""``python -m tinyadder program``: the model as the register machine it is (seed article 003).

Everything printed is derived from the weight tables: which half-layer writes and reads each
slot, and each half-layer as instructions over named slots, for any model the format states
(norms, rotary positions, fixed attention biases, heads of any dimension, factored weights,
plain or gated FFNs, every readout). Change a weight and the listing changes. A head counts
as live when it has a value map and an output map.

>>> from tinyadder import build
>>> for line in instructions(build("published")):
...     if "attend" in line:
...         print(line)
  count += attend(q = 1, k = 960*special - 1000, slope = ln 10, v = e^40*special - 11*e^40*eq)
  scale += attend(q = 1, k = 0, v = eq)
  every slot (16) += attend(q = 0, k = 0, v = 100*digit_pos + 15)
"""

from fractions import Fraction
import json
import re

from ..codegen import decoder_source, source as code_source
from ..compiler import ACTS, CALLS, IDENT
from ..constants import MinusInfinity, is_rational, is_zero, text as constant_text
from ..modelfile import dump, loads
from ..numbers import ExpTerm
from ..plan import compile_model
from ..weights import Factored, live_heads, reaches
from .show import pack, rational_text

DIGITS = tuple("0123456789")
GLU = {"relu": "ReGLU", "silu": "SwiGLU", "gelu": "GeGLU", "identity": "bilinear"}
BIAS_SHOWN = 6  # entries of a fixed attention bias listed before '...'


def _sign_and_text(w):
    """(negative?, text of |w|) for a weight: a rational or e^x exactly, an expression as
    written (in parentheses when it is a sum)."""
    if isinstance(w, ExpTerm):
        return w.coef < 0, str(ExpTerm(abs(w.coef), w.power))
    if isinstance(w, (int, Fraction)):
        return w < 0, rational_text(abs(Fraction(w)))
    text = constant_text(w)
    negative = text.startswith("-")
    body = text[1:] if negative else text
    return negative, f"({body})" if _is_sum(body) else body


def _depths(text):
    """(index, parenthesis depth after that character) for each character of ``text``."""
    depth = 0
    for k, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        yield k, depth


def _is_sum(text):
    """Whether an expression's text is a sum or difference outside every parenthesis."""
    return any(d == 0 and text[k:k + 3] in (" + ", " - ") for k, d in _depths(text))


def _operand_text(w):
    """A value's text as the operand of * or /: in parentheses unless it is one number, name
    or call ('sqrt(2)', but '(1/sqrt(2))')."""
    text = value_text(w)
    body = text.lstrip("-")
    return f"({text})" if any(d == 0 and body[k] in "*/+- ^" for k, d in _depths(body)) \
        else text


def value_text(w):
    """A weight's text, its sign included: '-1000', 'e^40', '2*pi/19'."""
    negative, text = _sign_and_text(w)
    return "-" + text if negative else text


def _terms_text(terms):
    """sum of w*s over terms [(w, s or None)] as text: '960*special - 1000' ('0' if none)."""
    if not terms:
        return "0"
    out = ""
    for k, (w, s) in enumerate(terms):
        negative, text = _sign_and_text(w)
        part = s if (s and text == "1") else (f"{text}*{s}" if s else text)
        out += ("-" if negative else "") + part if k == 0 else (
            f" - {part}" if negative else f" + {part}")
    return out


def linear_text(table, bias, target):
    """sum_s table[s][target] * s + bias[target] as text: '960*special - 1000'. A factored
    table W = A B reads its inner lanes r as (sum_s A[s][r] * s)."""
    if isinstance(table, Factored):
        terms = [(row[target], _grouped(linear_text(table.A, {}, r)))
                 for r, row in table.B.items() if not is_zero(row.get(target, 0))]
    else:
        terms = [(w, s) for s, row in table.items() for t, w in row.items()
                 if t == target and not is_zero(w)]
    b = bias.get(target, 0)
    if not is_zero(b):
        terms.append((b, None))
    return _terms_text(terms)


def _grouped(text):
    """An inner sum in parentheses ('(x0 + x1)'); a single term as it is."""
    return f"({text})" if " " in text else text


def _sources(table, targets=None):
    """The sources with a non-zero weight (to one of ``targets``, if given)."""
    return {s for s, ts in reaches(table).items() if ts and (targets is None or ts & targets)}


def _targets(table, sources=None):
    """The targets a non-zero weight reaches (from one of ``sources``, if given)."""
    return {t for s, ts in reaches(table).items() if sources is None or s in sources
            for t in ts}


def _bias_targets(bias):
    return {t for t, w in bias.items() if not is_zero(w)}


def half_layers(model):
    """[(short name, reads, writes)] for the embedding, each half-layer and the readout. A
    norm reads every slot of its input (they all enter its mean square)."""
    slots = model.slots
    embedded = set(slots[:model.width_embed])
    out = [("embed", set(), _targets(model.W_E) | (_targets(model.W_pos) if model.W_pos
                                                   else set()))]
    for i, block in enumerate(model.blocks):
        a, m, inp = block.attn, block.mlp, set(slots[:block.width_in])
        live = live_heads(a)
        q = set(a.lanes(live))
        kv = set(a.lanes([a.groups[a.kv_of(a.heads.index(h))] for h in live]))
        reads = inp if block.ln1 else (_sources(a.W_Q, q) | _sources(a.W_K, kv)
                                       | _sources(a.W_V, kv))
        out.append((f"L{i}.attn", reads, _targets(a.W_O, q) | _bias_targets(a.b_O)))
        reads = inp if block.ln2 else _sources(m.W_gate) | _sources(m.W_in)
        out.append((f"L{i}.mlp", reads, _targets(m.W_out) | _bias_targets(m.b_out)))
    u = model.unembed
    if model.ln_final is not None:
        reads = set(slots[:model.width_out])
    elif u.kind == "negative_error":
        reads = set(u.slots.values())
    elif u.kind == "linear":
        reads = _sources(u.W_U)
    else:
        reads = {s for s in embedded if not u.scale or not is_zero(u.scale.get(s, 0))}
    out.append(("readout", reads, set()))
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


def _norm_lines(name, norm, over):
    """A norm as one instruction: 'ln1: x = x/sqrt(mean(x^2) + eps) over ...'."""
    if norm is None:
        return []
    weight = (", then times " + ", ".join(f"w[{s}] = {value_text(w)}"
                                           for s, w in norm.w.items()) if norm.w else "")
    if norm.kind == "layer":
        bias = (", plus " + ", ".join(f"b[{s}] = {value_text(b)}" for s, b in norm.b.items())
                if norm.b else "")
        return [f"  {name}: (x - mean(x))/sqrt(mean((x - mean(x))^2) + "
                f"{value_text(norm.eps)}) over {over}{weight}{bias} (LayerNorm)"]
    return [f"  {name}: x/sqrt(mean(x^2) + {value_text(norm.eps)}) over {over}{weight} "
            f"(RMSNorm)"]


def _over(slots):
    return f"{slots[0]}..{slots[-1]}" if len(slots) > 3 else ", ".join(slots)


def _embedding(model):
    where = "plus W_pos's row per position" if model.W_pos else "no positional embedding"
    lines = [f"embed  (one row per token; {where})"]
    for slot in model.slots[:model.width_embed]:
        on = [(t, row[slot]) for t, row in model.W_E.items() if not is_zero(row.get(slot, 0))]
        if not on:
            continue
        form = (_digit_form({int(t): w for t, w in on})
                if len(on) > 2 and all(t in DIGITS for t, _ in on) else None)
        if form is not None:  # a closed form in the digit d: '10*d', '1000 - d^2/1000'
            lines.append(f"  {slot} = {form} on digit d")
        elif len({constant_text(w) for _, w in on}) == 1:
            lines.append(f"  {slot} = {value_text(on[0][1])} on "
                         f"{', '.join(repr(t) for t, _ in on)}")
        else:
            lines.append(f"  {slot} = " + ", ".join(f"{value_text(w)} on {t!r}" for t, w in on))
    if model.W_pos:
        table = model.W_pos.A if isinstance(model.W_pos, Factored) else model.W_pos
        positions = sorted(table, key=int)
        into = sorted(_targets(model.W_pos), key=model.slots.index)
        kind = "low-rank, A[p] B" if isinstance(model.W_pos, Factored) else "a table"
        lines.append(f"  {', '.join(into)} += W_pos[p] at position p ({kind}, positions "
                     f"{positions[0]}..{positions[-1]})")
    return lines


def _score_text(model, a):
    """The score formula of an attention's header: 'q_i*k_j - slope*(i - j)' (the slope term
    in every block of a model that has ALiBi slopes: 0 where a head has none)."""
    score = "q_i*k_j" if a.head_dim == 1 else "q_i.k_j"
    if a.scale != 1:
        score += ("/" if a.scale_op == "divide" else "*") + _operand_text(a.scale)
    if a.bias:
        score += " + bias[i][j]"
    if any(not is_zero(s) for b in model.blocks for s in b.attn.slopes.values()):
        score += " - slope*(i - j)"
    return score


def _bias_lines(a):
    """Each head's fixed attention bias: its default and the entries that differ."""
    lines = []
    for h in a.heads:
        table = a.bias.get(h, {})
        entries = [f"{i}->{j}: {value_text(v)}" for i, row in sorted(table.items())
                   for j, v in sorted(row.items()) if constant_text(v) != constant_text(
                       a.bias_default)]
        shown = ", ".join(entries[:BIAS_SHOWN]) + (
            f", ... ({len(entries) - BIAS_SHOWN} more)" if len(entries) > BIAS_SHOWN else "")
        lines.append(f"  bias[{h}] = {value_text(a.bias_default)}"
                     + (f" except {shown}" if entries else ""))
    return lines


def _tuple_text(texts):
    return texts[0] if len(texts) == 1 else "(" + ", ".join(texts) + ")"


def _head_lines(model, a, h, width):
    """A live head: 'slot += attend(...)' when its output is copied into slots, else
    'h = attend(...)' (lanes h.0, h.1, ... at head dimension d > 1) and then what each slot
    gains from its lanes."""
    k = a.heads.index(h)
    q_lanes, kv_lanes = a.lanes([h]), a.lanes([a.groups[a.kv_of(k)]])
    parts = [f"q = {_tuple_text([linear_text(a.W_Q, a.b_Q, c) for c in q_lanes])}",
             f"k = {_tuple_text([linear_text(a.W_K, a.b_K, c) for c in kv_lanes])}"]
    if not is_zero(a.slopes.get(h, 0)):
        parts.append(f"slope = {a.slopes[h]}")
    parts.append(f"v = {_tuple_text([linear_text(a.W_V, a.b_V, c) for c in kv_lanes])}")
    call = f"attend({', '.join(parts)})"
    out = _targets(a.W_O, set(q_lanes))
    copied = (len(q_lanes) == 1 and not isinstance(a.W_O, Factored)
              and all(w == 1 for w in a.W_O[h].values() if not is_zero(w)))
    if copied:
        targets = [s for s in model.slots[:width] if s in out]
        return [f"  {_targets_text(model, targets, width)} += {call}"]
    lines = [f"  {h} = {call}"]  # lanes h.0 .. h.(d-1) when the head has d > 1
    for slot in model.slots[:width]:
        if slot in out:
            lines.append(f"  {slot} += {linear_text(_only(a.W_O, q_lanes), {}, slot)}")
    return lines


def _only(table, sources):
    """The rows of ``table`` from ``sources`` (a factored table: its A's rows)."""
    if isinstance(table, Factored):
        return Factored(table.inner, {s: table.A[s] for s in sources if s in table.A}, table.B)
    return {s: table[s] for s in sources if s in table}


def _attention(model, i, block):
    a = block.attn
    lines = [f"L{i}.attn  ({a.softmax} over j <= i of {_score_text(model, a)}; x += W_O z)"]
    lines += _norm_lines("ln1", block.ln1, _over(model.slots[:block.width_in]))
    lines += _norm_lines("q_norm", a.q_norm, "each head's q lanes")
    lines += _norm_lines("k_norm", a.k_norm, "each head's k lanes")
    if a.rope_freqs:
        freqs = ", ".join(value_text(f) for f in a.rope_freqs)
        lines.append(f"  rotary: q and k lanes (c, c + {a.head_dim // 2}) turn by p*freq_c at "
                     f"position p, freq = {freqs}")
    if a.bias:
        lines += _bias_lines(a)
    live = live_heads(a)
    for h in live:
        lines += _head_lines(model, a, h, block.width_in)
    for slot, b in a.b_O.items():
        if not is_zero(b):
            lines.append(f"  {slot} += {value_text(b)}")
    dead = [h for h in a.heads if h not in live]
    if dead:
        lines.append(f"  {', '.join(dead)}: no effect (no value or no output)")
    return lines


def _unit_text(m, u):
    """What unit u computes: 'relu(gate)*(up)' or 'act(in)'."""
    inner = linear_text(m.W_in, m.b_in, u)
    if m.gated:
        act = "" if m.act == "identity" else m.act
        return f"{act}({linear_text(m.W_gate, m.b_gate, u)})*({inner})"
    return f"({inner})" if m.act == "identity" else f"{m.act}({inner})"


def _mlp(model, i, block):
    m = block.mlp
    act = "" if m.act == "identity" else m.act
    what = (f"{GLU[m.act]}: unit = {act}(gate)*(up)" if m.gated else
            f"unit = {m.act}(in)" if m.act != "identity" else "unit = in")
    lines = [f"L{i}.mlp  ({what})"]
    if block.width_out > block.width_in:
        lines[0] += f"; the stream widens from {block.width_in} to {block.width_out} slots"
    lines += _norm_lines("ln2", block.ln2, _over(model.slots[:block.width_in]))
    if isinstance(m.W_out, Factored):
        names = {r: _grouped(linear_text(m.W_out.A, {}, r)) for r in m.W_out.inner}
        out_rows = {names[r]: row for r, row in m.W_out.B.items()}
        units = {names[r]: None for r in m.W_out.inner}
        lines += [f"  {u} = {_unit_text(m, u)}" for u in m.units]
    else:
        out_rows, units = m.W_out, {u: _unit_text(m, u) for u in m.units}
    for slot in model.slots[:block.width_out]:
        terms = []
        for u, text in units.items():
            w = out_rows.get(u, {}).get(slot, 0)
            if is_zero(w):
                continue
            negative, factor = _sign_and_text(w)
            factor = "" if factor == "1" else f"{factor}*"
            terms.append(("- " if negative else "+ ") + factor + (text or u))
        if not is_zero(m.b_out.get(slot, 0)):
            negative, b = _sign_and_text(m.b_out[slot])
            terms.append(("- " if negative else "+ ") + b)
        if terms:
            body = " ".join(terms)
            body = body[2:] if body.startswith("+ ") else "-" + body[2:]
            lines.append(f"  {slot} += {body}")
    if not any(line.startswith("  ") and "+=" in line for line in lines):
        lines.append("  no effect (no output map)")
    return lines


def _readout(model):
    u = model.unembed
    final = model.slots[:model.width_out]
    lines = []
    if model.ln_final is not None:
        lines += _norm_lines("ln_final", model.ln_final, _over(final))
    if u.kind == "negative_error":
        return (["readout  (logit_t = -slot; the largest logit wins)"] + lines +
                pack([f"{t!r} = -{s}" for t, s in u.slots.items()], "  "))
    if u.kind == "linear":
        head = "readout  (logit_t = W_U x + b_U; the first largest logit wins)"
        cells = [f"{t!r} = {linear_text(u.W_U, u.b_U, t)}" for t in u.tokens]
    else:
        embedded = model.slots[:model.width_embed]
        scale = {s: u.scale.get(s, 0) if u.scale else 1 for s in embedded}
        W = {s: {t: model.W_E.get(t, {}).get(s, 0) * scale[s] if scale[s] != 1 else
                 model.W_E.get(t, {}).get(s, 0) for t in u.tokens}
             for s in embedded if not is_zero(scale[s])}
        head = "readout  (tied: logit_t = sum_s scale_s*x_s*W_E[t][s] + b_U[t]; first largest wins)"
        cells = [f"{t!r} = {linear_text(W, u.b_U, t)}" for t in u.tokens]
    lines = [head] + lines
    if max(len(c) for c in cells) <= 36:
        return lines + pack(cells, "  ", width=78)
    return lines + [f"  {c}" for c in cells]


def instructions(model):
    """Each half-layer as instructions over named slots."""
    lines = _embedding(model)
    for i, block in enumerate(model.blocks):
        lines += _attention(model, i, block) + _mlp(model, i, block)
    return lines + _readout(model)


def _break_points(line):
    """Where a long line may break: after a comma within two parentheses, before a + or -
    outside every parenthesis."""
    points = []
    for k, depth in _depths(line):
        if line[k] == "," and depth <= 2 and line[k + 1:k + 2] == " ":
            points.append((k + 1, k + 2))
        elif depth == 0 and line[k:k + 3] in (" + ", " - "):
            points.append((k, k + 1))
    return points


def wrap(line, width=80):
    """A long instruction broken after its commas and before its + and - signs; continuation
    lines indented past its first '(' (or by four more spaces when that is far right)."""
    if len(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip())
    paren = line.find("(")
    indent = " " * (paren + 1 if 0 <= paren < 40 else lead + 4)
    pieces, at = [], 0
    for end, start in _break_points(line):
        pieces.append(line[at:end])
        at = start
    pieces.append(line[at:])
    lines = [pieces[0]]
    for part in pieces[1:]:
        if len(lines[-1]) + 1 + len(part) > width and lines[-1].strip():
            lines.append(indent + part)
        else:
            lines[-1] += " " + part
    return lines


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
    of a position whose logits are wanted, the one of a position whose are not, and greedy
    decoding as one function (what ``add``, ``run`` and ``verify`` run), each after a list of
    the constants it binds by name (each listed once)."""
    compiled = compile_model(model, ns)
    parts, listed = [], set()
    for (text, env), what in (
            (code_source(compiled, True), "the step of a position whose logits are wanted"),
            (code_source(compiled, False), "the step of a position whose logits are not (only what "
                                      "later positions read)"),
            (decoder_source(compiled), "greedy decoding, the steps above in two loops")):
        parts.append(f"# {model.name} in {ns.describe()}: {what}")
        for name, value in env.items():
            if name.startswith("L") and name[1:2].isdigit() and name not in listed:
                parts.append(f"#   {name} = {_short(value)}")  # a weight or plan constant
        listed.update(env)
        parts.append(text)
    return "\n".join(parts)


def _short(value, width=70):
    """A constant's text for a comment: its repr, cut to ``width`` characters."""
    if isinstance(value, dict):
        return "{} (filled per token on use)"
    if hasattr(value, "states"):
        return "{} (the first block's outputs recorded per state and token on use)"
    if hasattr(value, "upto"):
        return "[] (1 + D by position, filled on use: plan rule 8)"
    if hasattr(value, "heads"):
        return "(this block's weights, for the per-token keys and values)"
    text = (str(value) if isinstance(value, Fraction) and value.denominator == 1
            else rational_text(value) if isinstance(value, Fraction) else repr(value))
    return text if len(text) <= width else f"{text[:width - 3]}..."


# ---- the program a model compiles from (tinyadder.compiler's language, docs/program.md) ------

KEYWORDS = {"unit", "every", "attend", "bias", "pi"} | set(CALLS) | set(ACTS)


class NotExpressible(ValueError):
    """A model the program language cannot state (one line: what it has that the language
    lacks)."""


def not_expressible(model):
    """Why the program language cannot state ``model`` (None if it can): a name it cannot
    write."""
    names = list(model.slots) + list(model.vocab) + [u for b in model.blocks
                                                       for u in b.mlp.units]
    if any("'" in n or "#" in n or not n.strip() or n != n.strip() for n in names):
        return "a name holds a quote, a '#' or blanks"
    return None


def _name(n):
    """A slot, unit or head name as the language writes it: quoted unless a plain word."""
    return n if IDENT.fullmatch(n) and n not in KEYWORDS else f"'{n}'"


def _token(t):
    return f"'{t}'"


class _Source:
    """The program text of one model (``source``)."""

    def __init__(self, model):
        self.m = model
        self.named = list(model.constants.items())

    def value(self, v, entry=None):
        """An entry's text as the model file writes it: its derived text, the name of the
        named constant it equals, or its constant text."""
        if entry is not None and entry in self.m.derived:
            return self.m.derived[entry]
        for name, value in self.named:
            if (type(value) is type(v) or (is_rational(value) and is_rational(v))) \
                    and value == v:
                return name
        return constant_text(v)

    def term(self, v, name, entry, first):
        """' + 960*special', ' - 1000', '-eq' (``name`` None: a constant term)."""
        text = self.value(v, entry)
        negative = (entry not in self.m.derived and not IDENT.fullmatch(text)
                    and (is_rational(v) and v < 0 or isinstance(v, ExpTerm) and v.coef < 0))
        if negative:  # written '- |v|', so |v| as a number: '-name' would read as derived
            text = constant_text(-v)
        if name is None:
            body = _factor(text) if negative else text if first else _factor(text)
        else:
            body = _name(name) if text == "1" else f"{_factor(text)}*{_name(name)}"
        if first:
            return ("-" if negative else "") + body
        return (" - " if negative else " + ") + body

    def linear(self, table, bias, target, where, wname, bname, sources=None):
        """sum_s table[s][target]*s + bias[target] as program text ('0' if none), over the
        slots (or ``sources``); a factored table over its inner lanes (its factor B)."""
        if isinstance(table, Factored):
            table, sources, wname = table.B, table.inner, f"{wname}.B"
        out = ""
        for s in sources or self.m.slots:  # in slot order, whatever the table's order
            w = table.get(s, {}).get(target, 0)
            if not is_zero(w):
                out += self.term(w, s, f"{where}.{wname}[{s}][{target}]", not out)
        b = bias.get(target, 0)
        if not is_zero(b):
            out += self.term(b, None, f"{where}.{bname}[{target}]", not out)
        return out or "0"


def _via(src, table, where, wname, sources=None):
    """The inner lanes of a factored table, each as 'via W lane = its column of A'."""
    if not isinstance(table, Factored):
        return []
    return [f"  via {wname} {_name(r)} = "
            + src.linear(table.A, {}, r, where, f"{wname}.A", "", sources) for r in table.inner]


def _factor(text):
    """A coefficient's text before '*slot': in parentheses when it is a sum or signed."""
    body = text
    if body.startswith("-") or any(d == 0 and body[k:k + 3] in (" + ", " - ")
                                   for k, d in _depths(body)):
        return f"({text})"
    return text


def _digit_form(values):
    """c0 + c1*d + c2*d^2 as text when the rational values {d: v} for d = 0..9 are a
    polynomial of degree at most 2 in d, else None ('10*d', '1000 - d^2/1000')."""
    if not all(is_rational(v) for v in values.values()):
        return None
    v = [Fraction(values.get(d, 0)) for d in range(10)]
    c0 = v[0]
    c2 = (v[2] - 2 * v[1] + v[0]) / 2
    c1 = v[1] - v[0] - c2
    if any(c0 + c1 * d + c2 * d * d != v[d] for d in range(10)):
        return None
    out = ""
    for coef, power in ((c0, ""), (c1, "d"), (c2, "d^2")):
        if coef == 0:
            continue
        sign = "-" if coef < 0 else "+"
        a = abs(coef)
        if not power:
            body = rational_text(a)
        elif a.denominator == 1:
            body = power if a == 1 else f"{a.numerator}*{power}"
        else:
            body = (power if a.numerator == 1 else f"{a.numerator}*{power}") + \
                f"/{a.denominator}"
        out += (("-" if sign == "-" else "") + body) if not out else f" {sign} {body}"
    return out or None


def source(model):
    """The model as a program of the compiler's language (docs/program.md): what
    ``tinyadder compile`` reads to write this model back. Raises :class:`NotExpressible`
    for a model the language cannot state (``not_expressible``)."""
    why = not_expressible(model)
    if why:
        raise NotExpressible(f"{model.name}: the program language cannot state it: {why}")
    src, m = _Source(model), model
    stages = half_layers(model)
    lines = [f"# {m.name}: {len(m.slots)} slots, {len(stages) - 2} half-layers, derived from "
             f"the weights", "# (`tinyadder compile` reads this program back into the model)",
             "#"]
    lines += ["#" + row[1:] for row in slot_table(model)]
    lines += ["", f"model {m.name}"]
    for key, value in m.about.items():
        value = dict(value) if key == "source" else value
        lines.append(f"about {key} {json.dumps(value, ensure_ascii=False)}")
    p = m.meta.get("precision")
    if p is not None:
        lines.append(f"precision {p.digits}" + (f" {json.dumps(p.why)}" if p.why else ""))
    for name, value in m.constants.items():
        lines.append(f"const {name} = {constant_text(value)}")
    if m.fixed:
        lines.append("fixed " + ", ".join(m.fixed))
    lines.append("vocab " + " ".join(t if re.fullmatch(r"[^\s'#,]+", t) else f"'{t}'"
                                     for t in m.vocab))
    if m.prompt is not None:
        q = m.prompt
        prompt = {"digits": q.digits, "question": list(q.question), "operands": q.operands,
                  "answer": q.answer, "answer_digits": q.answer_digits}
        if q.stop is not None:
            prompt["stop"] = q.stop
        lines.append(f"prompt {json.dumps(prompt, ensure_ascii=False)}")
    if m.task is not None:
        lines += task_lines(m.task)
    if m.pos_role != "fixed":
        lines.append(f"positions {m.pos_role}")
    lines += pack_words("slots", [_name(s) for s in m.slots])
    lines += [""] + src_embed(src, m)
    for i, block in enumerate(m.blocks):
        lines += src_attention(src, m, i, block) + src_mlp(src, m, i, block)
    lines += applied_again(src, m)
    lines += src_readout(src, m)
    if m.roles:
        lines += [""] + pack_words("roles", [f"{k}={v}" for k, v in m.roles.items()])
    for tie in m.ties:
        lines.append("tie " + " ".join(tie))
    return "\n".join(part for line in lines for part in _fitted(line)) + "\n"


def _fitted(line, width=80):
    """A program line as lines of at most ``width`` columns where it can be: a comment as it
    is, a section's comment on a line of its own above it when both do not fit."""
    if line.startswith("#"):
        return [line]
    code, mark, comment = line.partition("  # ")
    if mark and len(line) > width:
        return [f"# {comment}", code]
    return wrap_source(line, width)


CONTINUATION = " " * 6  # deeper than compiler.CONTINUED: the line above goes on


def wrap_source(line, width=80):
    """A program line broken at single blanks into lines of at most ``width`` columns where
    it can be, preferably after a comma or before a + or -; each continuation line indented
    by ``CONTINUATION``, so that the compiler joins them back with one blank."""
    out = []
    while len(line) > width:
        lead = len(line) - len(line.lstrip())
        spaces = [k for k in range(lead + 1, len(line) - 1) if line[k] == " "
                  and line[k - 1] != " " and line[k + 1] not in " #"]
        fits = [k for k in spaces if k <= width]
        good = [k for k in fits if line[k - 1] == "," or
                (line[k + 1] in "+-" and line[k + 2:k + 3] == " ")]
        if not spaces or (not fits and not spaces):
            break
        k = (good or fits or spaces)[-1 if (good or fits) else 0]
        if len(CONTINUATION) + len(line) - k - 1 >= len(line):
            break
        out.append(line[:k])
        line = CONTINUATION + line[k + 1:]
    return out + [line]


def pack_words(head, words, width=80):
    """'head w1 w2 ...' over as many lines as ``width`` needs, each starting with ``head``."""
    lines = [head]
    for w in words:
        if len(lines[-1]) + 1 + len(w) > width and lines[-1] != head:
            lines.append(head)
        lines[-1] += " " + w
    return lines


def applied_again(src, m):
    """The ``repeat`` and ``mix`` directives: a layer that is an earlier one applied again
    (the model file's ``same_as``: its sections above are that layer's, written again), and
    the mix after the last layer (x = h + gain (x - h))."""
    lines = [f"repeat L{i} = L{m.blocks.index(b)}" for i, b in enumerate(m.blocks)
             if m.blocks.index(b) < i]
    if m.mix is not None:
        lines.append(f"mix L{m.mix.first} gain = {src.value(m.mix.gain)}")
    return [""] + lines if lines else []


def held_at_zero(model):
    """The slots of the embedding's width that a half-layer reads before any stage writes
    them (the stream holds 0 there): the program says so in its embedding, ``SLOT = 0``."""
    written, out = set(), []
    for _, reads, writes in half_layers(model):
        out += [s for s in model.slots[:model.width_embed]
                if s in reads and s not in written and s not in out]
        written |= writes
    return out


def task_lines(task):
    """The ``task`` directives of a model that does not add: its prompt around the input,
    then each input and the answer it should get."""
    def words(tokens):
        return " ".join(t if re.fullmatch(r"[^\s'#,]+", t) and t != "->" else f"'{t}'"
                        for t in tokens)
    lines = [f"task before {words(task.before)}".rstrip()]
    if task.after:
        lines.append(f"task after {words(task.after)}")
    return lines + [f"task case {words([x])} -> {words(answer)}"
                    for x, answer in task.cases.items()]


def src_embed(src, m):
    width = _minimal_widths(m)[0]
    lines = ["embed" + (f" width {m.width_embed}" if m.width_embed != width else "")]
    for slot in m.slots[:m.width_embed]:
        on = [(t, row[slot]) for t, row in m.W_E.items() if not is_zero(row.get(slot, 0))]
        if not on:
            continue
        if all(t in DIGITS for t, _ in on) and len(on) > 2:
            form = _digit_form({int(t): w for t, w in on})
            if form is not None and not any(f"W_E[{t}][{slot}]" in m.derived for t, _ in on):
                lines.append(f"  {_name(slot)} = {form} on digit d")
                continue
        groups = {}
        for t, w in on:
            groups.setdefault(src.value(w, f"W_E[{t}][{slot}]"), []).append(t)
        parts = [f"{_factor(v) if v.startswith('-') else v} on " + ", ".join(map(_token, ts))
                 for v, ts in groups.items()]
        lines.append(f"  {_name(slot)} = " + ", ".join(parts))
    lines += [f"  {_name(slot)} = 0  # on every token: read before a half-layer writes it"
              for slot in held_at_zero(m)]
    table = m.W_pos
    if isinstance(m.W_pos, Factored):  # its inner lanes over the positions, then the slots
        for r in m.W_pos.inner:
            at = [f"{src.value(row[r], f'W_pos.A[{p}][{r}]')} at position {p}"
                  for p, row in sorted(m.W_pos.A.items()) if not is_zero(row.get(r, 0))]
            lines.append(f"  via W_pos {_name(r)} = " + ", ".join(at))
        for slot in m.slots[:m.width_embed]:
            terms = src.linear(m.W_pos.B, {}, slot, "W_pos", "B", "", m.W_pos.inner)
            if terms != "0":
                lines.append(f"  {_name(slot)} = {terms}")
        table = {}
    for slot in m.slots[:m.width_embed]:
        at = [f"{src.value(row[slot], f'W_pos[{p}][{slot}]')} at position {p}"
              for p, row in sorted(table.items()) if not is_zero(row.get(slot, 0))]
        if at:
            lines.append(f"  {_name(slot)} = " + ", ".join(at))
    return lines


def _minimal_widths(m):
    """The widths the compiler allocates: [embedding, after block 0, ...]: the highest slot
    each stage uses (``half_layers``), never narrower than the stage before."""
    stages = half_layers(m)
    out = []
    for k in range(len(m.blocks) + 1):
        upto = 2 * k + 1 if k < len(m.blocks) else len(stages)
        used = [m.slots.index(s) for _, reads, writes in stages[:upto + 1]
                for s in reads | writes]
        width = max(used, default=-1) + 1
        out.append(max([width] + out[-1:]))
    return out


def _norm_text(src, norm, where):
    """A norm as the language writes it: 'rms(eps = 1/1000000, w = (x0: 2))', a LayerNorm
    'layer(eps = 1/100000, w = (x0: 2), b = (x0: 1))'."""
    parts = [f"eps = {src.value(norm.eps)}"]
    for v in ("w", "b"):
        if getattr(norm, v):
            parts.append(f"{v} = (" + ", ".join(
                f"{_name(k)}: {src.value(x, f'{where}.{v}[{k}]')}"
                for k, x in getattr(norm, v).items()) + ")")
    if norm.mean != "divide":
        parts.append(f"mean = {norm.mean}")
    if norm.apply != "rsqrt":
        parts.append(f"apply = {norm.apply}")
    return f"{norm.kind}({', '.join(parts)})"


def _tuple(texts):
    return texts[0] if len(texts) == 1 else "(" + ", ".join(texts) + ")"


def src_attention(src, m, i, block):
    a, where = block.attn, f"blocks.{i}.attn"
    lines = ["", f"L{i}.attn {a.softmax}  # score_ij = {_score_text(m, a)}; x += W_O z"]
    if block.ln1 is not None:
        lines.append(f"  ln1 = {_norm_text(src, block.ln1, f'blocks.{i}.ln1')}")
    if a.head_dim != 1:
        lines.append(f"  dim = {a.head_dim}")
    if a.rope_freqs:
        freqs = [src.value(f) for f in a.rope_freqs]
        lines.append("  rope = " + (freqs[0] if len(set(freqs)) == 1 else ", ".join(freqs)))
    if a.scale != 1:
        lines.append(f"  {'scale_divide' if a.scale_op == 'divide' else 'scale'} = "
                     f"{src.value(a.scale)}")
    if not isinstance(a.mask, MinusInfinity):
        lines.append(f"  mask = {src.value(a.mask)}")
    if a.normalise != "before":
        lines.append(f"  normalise = {a.normalise}")
    for name in ("q_norm", "k_norm"):
        if getattr(a, name) is not None:
            lines.append(f"  {name} = {_norm_text(src, getattr(a, name), f'{where}.{name}')}")
    if a.bias:
        lines.append(f"  bias default = {src.value(a.bias_default)}")
        for h, rows in a.bias.items():
            entries = [f"{r}->{j} = {src.value(v)}" for r, row in rows.items()
                       for j, v in row.items()]
            lines.append(f"  bias {_name(h)}: " + ", ".join(entries))

    def parts(head, which):
        return [f"{x.lower()} = " + _tuple([src.linear(
            getattr(a, f"W_{x}"), getattr(a, f"b_{x}"), lane, where, f"W_{x}", f"b_{x}")
            for lane in a.lanes([head])]) for x in which]

    for w in ("W_Q", "W_K", "W_V"):
        lines += _via(src, getattr(a, w), where, w)
    for g in a.kv_heads:
        lines.append(f"  kv {_name(g)}: " + ", ".join(parts(g, "KV")))
    lanes = a.lanes(a.heads)
    factored = isinstance(a.W_O, Factored)
    later = []
    for k, h in enumerate(a.heads):
        call = parts(h, "Q" if a.kv_heads else "QKV")
        if not is_zero(a.slopes.get(h, 0)):
            call.append(f"slope = {src.value(a.slopes[h])}")
        call = f"attend({', '.join(call)})"
        named = "" if h == f"h{k}" else f"{_name(h)}: "
        if a.head_dim != 1 or factored:  # its lanes, by name, into the slots (below)
            lines.append(f"  {_name(h)}: {call}")
            continue
        out = {s: src.value(w, f"{where}.W_O[{h}][{s}]")
               for s, w in a.W_O.get(h, {}).items() if not is_zero(w)}
        if len(set(out.values())) > 1:  # a weight per slot: the head's output by name
            lines.append(f"  {_name(h)}: {call}")
            later += [f"  {_name(s)} += {_factor(w)}*{_name(h)}" for s, w in out.items()]
            continue
        coef = "" if not out or set(out.values()) == {"1"} else \
            f"{_factor(next(iter(out.values())))}*"
        if out and set(out) == set(m.slots[:block.width_in]) and len(out) > 3:
            call = f"every slot += {coef}{call}"
        elif out:
            call = ", ".join(_name(s) for s in m.slots if s in out) + f" += {coef}{call}"
        lines.append("  " + named + call)
    if a.head_dim != 1 or factored:
        out, sources, name = a.W_O, lanes, "W_O"
        if factored:
            later += _via(src, a.W_O, where, "W_O", lanes)
            out, sources, name = a.W_O.B, a.W_O.inner, "W_O.B"
        for s in m.slots[:block.width_in]:
            terms = ""
            for lane in sources:
                w = out.get(lane, {}).get(s, 0)
                if not is_zero(w):
                    terms += src.term(w, lane, f"{where}.{name}[{lane}][{s}]", not terms)
            if terms:
                later.append(f"  {_name(s)} += {terms}")
    lines += later
    for slot, b in a.b_O.items():
        if not is_zero(b):
            lines.append(f"  {_name(slot)} += {src.value(b, f'{where}.b_O[{slot}]')}")
    return lines


def src_mlp(src, m, i, block):
    f, where = block.mlp, f"blocks.{i}.mlp"
    widths = _minimal_widths(m)
    lines = ["", f"L{i}.mlp {f.act} {'gated' if f.gated else 'plain'}"
             + (f" width {block.width_out}" if block.width_out != widths[i + 1] else "")
             + (f"  # the stream widens from {block.width_in} to {block.width_out} slots"
                if block.width_out > block.width_in else "")]
    if block.ln2 is not None:
        lines.append(f"  ln2 = {_norm_text(src, block.ln2, f'blocks.{i}.ln2')}")
    for w in ("W_gate", "W_in"):
        lines += _via(src, getattr(f, w), where, w)
    factored = isinstance(f.W_out, Factored)
    out, sources, name = (f.W_out.B, f.W_out.inner, "W_out.B") if factored else \
        (f.W_out, f.units, "W_out")
    writers = {}
    for u in sources:
        for s, w in out.get(u, {}).items():
            if not is_zero(w):
                writers.setdefault(s, []).append(u)

    def unit_text(u):
        first = src.linear(f.W_gate if f.gated else f.W_in, f.b_gate if f.gated else f.b_in,
                           u, where, "W_gate" if f.gated else "W_in",
                           "b_gate" if f.gated else "b_in")
        text = f"{f.act}({first})"
        if f.gated:
            text += f"*({src.linear(f.W_in, f.b_in, u, where, 'W_in', 'b_in')})"
        return text

    inline = set() if factored else {
        u for u in f.units if writers.get(u) == [u] and list(
            s for s, w in out.get(u, {}).items() if not is_zero(w)) == [u]
        and src.value(out[u][u], f"{where}.W_out[{u}][{u}]") == "1"}
    later = _via(src, f.W_out, where, "W_out", f.units)
    for u in f.units:
        if u in inline:
            lines.append(f"  {_name(u)} += {unit_text(u)}")
        else:
            lines.append(f"  unit {_name(u)} = {unit_text(u)}")
    for s in m.slots[:block.width_out]:
        terms = ""
        for u in writers.get(s, []):
            if u in inline:
                continue
            terms += src.term(out[u][s], u, f"{where}.{name}[{u}][{s}]", not terms)
        if terms:
            later.append(f"  {_name(s)} += {terms}")
        b = f.b_out.get(s, 0)
        if not is_zero(b):
            later.append(f"  {_name(s)} += {src.value(b, f'{where}.b_out[{s}]')}")
    return lines + later


def src_readout(src, m):
    u = m.unembed
    final = [] if m.ln_final is None else [
        f"  ln_final = {_norm_text(src, m.ln_final, 'ln_final')}"]
    if u.kind == "negative_error":
        return ["", "readout negative_error"] + final + pack(
            [f"{_token(t)} = -{_name(s)}" for t, s in u.slots.items()], "  ")
    lines = ["", f"readout {u.kind}"] + final
    if u.kind == "tied":
        if u.tokens != m.vocab:
            lines.append("  tokens " + " ".join(map(_token, u.tokens)))
        lines += [f"  scale {_name(s)} = {src.value(v, f'unembed.scale[{s}]')}"
                  for s, v in u.scale.items() if not is_zero(v)]
        lines += [f"  bias {_token(t)} = {src.value(v, f'unembed.b_U[{t}]')}"
                  for t, v in u.b_U.items() if not is_zero(v)]
        return lines
    lines += _via(src, u.W_U, "unembed", "W_U")
    for t in u.tokens:
        lines.append(f"  {_token(t)} = {src.linear(u.W_U, u.b_U, t, 'unembed', 'W_U', 'b_U')}")
    return lines


def real_view(model):
    """``model`` read as the real-number model: every float marker f32(...), f64(...) dropped
    (its argument kept), so that a weight reads as the number it stands for."""
    return loads(re.sub(r"\bf(?:32|64)\(", "(", dump(model)))
