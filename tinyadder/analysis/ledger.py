"""``tinyadder params``: the parameter ledger, counted from the model's weights and roles.

Every weight tensor of the model (``tensors``) is counted under one rule, chosen by the role
the model declares for it (``Model.roles``, tensor name -> role; a model file's ``roles``) and
by its values:

- a zero is not a parameter: a tensor with no non-zero entry counts 0;
- ``copy``, an identity or copy map (every non-zero entry is 1; one source may feed several
  targets, as layer 1's head output broadcast to all 16 slots): free;
- ``position``, a fixed positional scheme (ALiBi slopes, rotary frequencies, a fixed attention
  bias, a fixed ``W_pos``; the default role of those tensors), not a parameter: free;
- ``weight``: each distinct non-zero value counts 1, so one value broadcast to many places
  counts 1 (layer 0's query bias 1 on 5 heads; its gate weight 1 on 11 gates);
- ``embedding``: a lookup table whose rows are the tokens' vectors, so the same rule applies
  row by row: each token's row counts its distinct non-zero values. The '=' row (1 on eq and
  on special) counts 1; <bos>, <eos> and '+' count 1 each although they share the value 1
  (<eos> counts although it never occurs); the digit rows count 1 each (10 d), digit 0's
  row is zero. That is the spec's 13: 9 digit values and 4 flag rows.

A tensor declared ``copy`` whose entries are not all 1 is counted as ``weight``, and so is a
tensor with no declared role: a map is free only where its values agree with the declaration.
Under these rules both models have 36 parameters; the ledger also gives the dense non-zero
count and the number of distinct non-zero constants model-wide, so other conventions can be
compared.

A model may also share parameters across tensors (``shared``): an entry equal to a named
constant (``Model.constants``) is that constant, one parameter wherever it is used, or none
if it is ``fixed``; the entries of a tie (``Model.ties``) are one parameter.
"""

from dataclasses import dataclass, replace
import textwrap
from types import MappingProxyType
from typing import Dict, Optional

from ..constants import names_in, text
from ..weights import ROLES as ROLE_NAMES, Tensor, tensors, tied_entry  # noqa: F401

ROLES = {
    "embedding": "token lookup: each token row counts its distinct non-zero values",
    "weight": "each distinct non-zero value counts 1, however many places it fills",
    "copy": "identity or copy map (non-zero entries all 1): free",
    "position": "fixed positional scheme (ALiBi slopes, rotary frequencies, a fixed attention "
                "bias, fixed positions), not a parameter: free",
}
assert tuple(ROLES) == ROLE_NAMES
POSITIONAL = {".slopes": "ALiBi slope", ".rope_freqs": "rotary frequencies",
              ".bias": "fixed attention bias", "W_pos": "fixed positional embedding"}


@dataclass(frozen=True)
class Line:
    """One tensor's entry in the ledger."""

    tensor: Tensor
    role: str
    params: int
    rule: str


def _distinct(values):
    """The distinct values, in order of first appearance (1 == Fraction(1) are one value)."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def count(tensor, role):
    """(parameters, rule) for one tensor with its declared role."""
    values = list(tensor.entries.values())
    if not values:
        return 0, "zero: free"
    if role == "position":
        kind = next((k for end, k in POSITIONAL.items() if tensor.name.endswith(end)),
                    "declared positional")
        return 0, f"{kind}, a fixed positional scheme: free"
    distinct = _distinct(values)
    if role == "copy":
        if distinct == [1]:
            fan_out = max(sum(1 for r, _ in tensor.entries if r == row) for row in tensor.rows)
            fan_in = max(sum(1 for _, c in tensor.entries if c == col) for col in tensor.cols)
            kind = ("identity map" if fan_out == fan_in == 1 else
                    f"copy map, one source to {fan_out} places" if fan_in == 1 else
                    f"copy map, {fan_in} sources added into one place")
            return 0, f"{kind}: free"
        role, note = "weight", "declared copy but not all 1, so: "
    else:
        note = ""
    if role == "embedding":
        rows = [_distinct(v for (r, _), v in tensor.entries.items() if r == row)
                for row in tensor.rows]
        n = sum(len(r) for r in rows)
        return n, f"per token row, each distinct value: 1 ({sum(1 for r in rows if r)} rows)"
    if len(distinct) == 1:
        if len(values) == 1:
            return 1, note + "one value: 1"
        return 1, note + f"one value broadcast to {len(values)} places: 1"
    broadcast = " (broadcast)" if len(values) > len(distinct) else ""
    return len(distinct), note + f"{len(distinct)} distinct values{broadcast}: {len(distinct)}"


def default_role(model, tensor):
    """A tensor's role where the model declares none: ``position`` for ALiBi slopes, rotary
    frequencies, a fixed attention bias and fixed positions (learned ones: ``embedding``);
    ``weight`` for the rest."""
    if tensor.name == "W_pos":
        return "position" if model.pos_role == "fixed" else "embedding"
    return "position" if tensor.name.endswith((".slopes", ".rope_freqs", ".bias")) else "weight"


def attention_bias(model, tensor):
    """A fixed attention bias tensor with the entries its table lists, zeros included (under a
    -inf default a 0 is what lets a key through), and the rule's note on the default."""
    attn = model.blocks[int(tensor.name.split(".")[1])].attn
    entries = {(f"{h}@{i}", str(j)): v for h, table in attn.bias.items()
               for i, row in table.items() for j, v in row.items()}
    return (replace(tensor, entries=MappingProxyType(entries)),
            f"; {text(attn.bias_default)} at every entry it does not list")


def ledger(model):
    """The ledger lines, one per tensor, from the weights and the declared roles (checked when
    the model was built: ``weights.check_model``), then the parameters shared across tensors."""
    lines = []
    again = {j: model.blocks.index(b) for j, b in enumerate(model.blocks)
             if model.blocks.index(b) < j}
    for tensor in tensors(model):
        role = model.roles.get(tensor.name) or default_role(model, tensor)
        j = int(tensor.name.split(".")[1]) if tensor.name.startswith("blocks.") else None
        if j in again:  # the same weights as an earlier block: counted there
            lines.append(Line(tensor, role, 0, f"blocks.{j} is blocks.{again[j]} applied "
                                               f"again: counted there"))
            continue
        note = ""
        if tensor.name.endswith(".attn.bias"):
            tensor, note = attention_bias(model, tensor)
        params, rule = count(tensor, role)
        lines.append(Line(tensor, role, params, rule + note))
    return shared(model, lines) if model.constants or model.ties else lines


def shared(model, lines):
    """The lines recounted with the parameters a model shares across tensors.

    Every entry of a counted tensor has parameter keys: its value in its tensor (and its row,
    in an embedding), or, if it equals a named constant, the constant (none if the constant
    is fixed: free), or, if the file writes it as an expression of named constants
    (``Model.derived``), those constants; a tie merges its entries' keys into one. A tensor
    counts the keys first met in it, in model order, and its rule names what it shares."""
    fixed = [model.constants[name] for name in model.fixed]
    named = [(name, v) for name, v in model.constants.items() if name not in model.fixed]
    derived = {tied_entry({t.name: t for t in (line.tensor for line in lines)}, e): text_
               for e, text_ in model.derived.items()}
    keys = {}  # tensor name -> {entry: [keys]}
    for line in lines:
        if line.params:
            keys[line.tensor.name] = {
                entry: (_used(model, derived[line.tensor.name, entry])
                        if (line.tensor.name, entry) in derived else
                        [] if any(v == f for f in fixed) else [_key(line, entry, v, named)])
                for entry, v in line.tensor.entries.items()}
    parent = {}

    def root(key):
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    found = {line.tensor.name: line.tensor for line in lines}
    tied = []
    for tie in model.ties:
        members = [k for name, entry in (tied_entry(found, e) for e in tie)
                   for k in keys.get(name, {}).get(entry, ())[:1]]
        members = [root(k) for k in members]
        for k in members[1:]:
            if k != members[0]:
                parent[k] = members[0]
        tied.append(members[:1])
    labels = {}
    for name, _ in named:
        labels.setdefault(root(("const", name)), name)
    for i, first in enumerate(tied):
        if first:
            labels.setdefault(root(first[0]), f"ties[{i}]")
    seen = {}
    return [_recounted(line, [root(k) for ks in keys[line.tensor.name].values() for k in ks],
                       seen, labels, fixed_names(model, line.tensor))
            if line.tensor.name in keys else line for line in lines]


def _used(model, written):
    """The parameter keys of a derived entry: the named constants it uses, fixed ones left
    out."""
    return [("const", name) for name in names_in(written, model.constants)
            if name not in model.fixed]


def _key(line, entry, value, named):
    name = next((name for name, v in named if value == v), None)
    if name is not None:
        return ("const", name)
    return (line.tensor.name, entry[0] if line.role == "embedding" else None, value)


def fixed_names(model, tensor):
    """The fixed constants the tensor's entries are equal to."""
    return [name for name in model.fixed
            if any(v == model.constants[name] for v in tensor.entries.values())]


def _recounted(line, mine, seen, labels, fixed):
    """One counted tensor's line with shared parameters: its own distinct values, the named
    constants and ties it meets first, what it shares with tensors counted before it, and the
    fixed constants it holds. Unchanged when it shares nothing."""
    own, params, named, ties, elsewhere = 0, 0, [], [], {}
    for key in dict.fromkeys(mine):  # each key once, in entry order
        label = labels.get(key)
        if key in seen:
            elsewhere.setdefault(seen[key], []).append(label or text(key[2]))
            continue
        seen[key] = line.tensor.name
        params += 1
        if label is None:
            own += 1
        else:
            (ties if label.startswith("ties[") else named).append(label)
    notes = [f"named constant{'s' * (len(named) > 1)} {', '.join(named)}: {len(named)}"] \
        if named else []
    notes += [f"{tie}: 1" for tie in ties]
    notes += [f"{', '.join(labels_)} counted at {where}" for where, labels_ in elsewhere.items()]
    notes += [f"{name} fixed: free" for name in fixed]
    if not notes:
        return line
    values = "value" + "s" * (own != 1) + (" per token row" if line.role == "embedding" else "")
    head = [f"{own} distinct {values}: {own}"] if own else []
    return Line(line.tensor, line.role, params, "; ".join(head + notes))


@dataclass(frozen=True)
class Totals:
    params: int
    parts: Dict[str, int]
    dense_nonzero: int       # non-zero entries of every tensor, copy maps included
    distinct_constants: int  # distinct non-zero values model-wide, ALiBi slopes excluded


def totals(lines):
    parts = {}
    for line in lines:
        parts[line.tensor.part] = parts.get(line.tensor.part, 0) + line.params
    weights = [line for line in lines if line.role != "position"]
    return Totals(
        params=sum(line.params for line in lines),
        parts=parts,
        dense_nonzero=sum(len(line.tensor.entries) for line in weights),
        distinct_constants=len(_distinct(v for line in weights
                                         for v in line.tensor.entries.values())))


def _place(key):
    row, col = key
    return col if row is None else f"{row}->{col}"


def entries_text(tensor, limit=3, written=None):
    """The non-zero entries grouped by value: 'value at place, place, ... (n places)'; an
    entry the file writes as an expression of named constants (``written``: {key: text}) as
    'text = value at place'."""
    written = written or {}
    groups = {}
    for key, value in tensor.entries.items():
        if key in written:
            groups[(written[key], value)] = [key]
            continue
        for v in groups:
            if v == value:
                groups[v].append(key)
                break
        else:
            groups[value] = [key]
    out = []
    for value, keys in groups.items():
        places = ", ".join(_place(k) for k in keys[:limit])
        more = f", ... ({len(keys)} places)" if len(keys) > limit else ""
        shown = f"{value[0]} = {value[1]}" if isinstance(value, tuple) else value
        out.append(f"{shown} at {places}{more}")
    return out


def render(model, lines):
    """The ledger as text: one line per tensor with non-zeros, its entries, then totals."""
    t = totals(lines)
    shown = [line for line in lines if line.tensor.entries]
    found = {line.tensor.name: line.tensor for line in lines}
    derived = {tied_entry(found, e): written for e, written in model.derived.items()}
    width = max(len(line.tensor.name) for line in shown)
    out = [f"parameter ledger of {model.name}",
           f"{'tensor':<{width}}  {'role':<9}  {'shape':>7}  {'non-zero':>8}  {'params':>6}"]
    for line in shown:
        shape = "x".join(str(n) for n in line.tensor.shape)
        out.append(f"{line.tensor.name:<{width}}  {line.role:<9}  {shape:>7}  "
                   f"{len(line.tensor.entries):>8}  {line.params:>6}")
        out += textwrap.wrap(f"rule: {line.rule}", 80, initial_indent="    ",
                             subsequent_indent="        ")  # rows stay within 80 columns
        written = {key: t for (name, key), t in derived.items() if name == line.tensor.name}
        out += [f"    {text}" for text in entries_text(line.tensor, written=written)]
    empty = [line.tensor.name for line in lines if not line.tensor.entries]
    out += textwrap.wrap(f"all zero (free): {', '.join(empty)}", 80, subsequent_indent="    ")
    out.append("")
    out += [f"{part:<18} {n:>3}" for part, n in t.parts.items()]
    out.append(f"{'total':<18} {t.params:>3}")
    out.append(f"dense non-zero entries: {t.dense_nonzero} (copy maps included, ALiBi slope not)")
    out.append(f"distinct non-zero constants: {t.distinct_constants} (model-wide)")
    out.append("")
    out += textwrap.wrap(
        "rules: a zero is free; an identity or copy map is free; one value broadcast to many "
        "places counts 1; each other distinct value counts 1, per tensor, and per token row in "
        "the embedding (its rows are the tokens' vectors)" + (
            "; a named constant counts 1 wherever it is used, an entry written as an expression "
            "of named constants counts as them, and a tie's entries count 1"
            if model.constants or model.ties or model.derived else ""),
        80, subsequent_indent="    ")
    return out


def as_json(model, lines):
    t = totals(lines)
    return {
        "model": model.name,
        "rules": ROLES,
        "tensors": [{
            "name": line.tensor.name, "part": line.tensor.part, "role": line.role,
            "shape": list(line.tensor.shape), "nonzero": len(line.tensor.entries),
            "entries": [[r, c, str(v)] for (r, c), v in line.tensor.entries.items()],
            "params": line.params, "rule": line.rule} for line in lines],
        "parts": t.parts,
        "total": t.params,
        "dense_nonzero": t.dense_nonzero,
        "distinct_constants": t.distinct_constants,
    }


# ---- the counting rules side by side -------------------------------------------------------

RULES = {
    "numel": "AdderBoard's: sum(numel), every entry of each tensor the model has (one with a "
             "non-zero), zeros inside it included; fixed positions left out",
    "unique": "unique tensors: as numel, but a tensor equal to one counted before (tied "
              "storage) counts once",
    "distinct": "distinct non-zero values, model-wide; fixed positions left out",
    "nonzero": "non-zero entries: zeros, identity or copy maps and fixed positions free, "
               "every other non-zero entry 1, a tied value once (a tie, a named constant; a "
               "fixed constant free)",
    "seed000": "seed 000's, the ledger's: zeros, identity or copy maps and fixed positions "
               "free, each distinct non-zero value of a tensor 1, so a tied or broadcast "
               "value once (per token row in the embedding); named constants and ties once",
    "free": "free constants: each named constant the file does not declare fixed counts 1, "
            "the entries derived from them nothing more; the other entries are the file's "
            "literals (only for a file that names its constants)",
}


@dataclass(frozen=True)
class Rule:
    """One rule's count of a model: ``params`` (None where the rule does not apply) and one
    line saying what it counted."""

    name: str
    params: Optional[int]
    note: str


def _free_map(line):
    """Whether a tensor is free as a whole: a fixed positional scheme, or a copy map whose
    non-zero entries are all 1."""
    return line.role == "position" or (
        line.role == "copy" and all(v == 1 for v in line.tensor.entries.values()))


def _entry_keys(model, lines):
    """{(tensor name, entry): [parameter keys]} for every non-zero entry of a tensor that is
    not free as a whole: a derived entry's free constants, an entry equal to a named constant
    that constant (none if fixed), any other entry itself; then ties merged (each key the
    root of its tie)."""
    fixed = [model.constants[name] for name in model.fixed]
    named = [(name, v) for name, v in model.constants.items() if name not in model.fixed]
    found = {line.tensor.name: line.tensor for line in lines}
    derived = {tied_entry(found, e): written for e, written in model.derived.items()
               if e.split("[")[0] in found}
    keys = {}
    for line in lines:
        if _free_map(line):
            continue
        for entry, v in line.tensor.entries.items():
            where = (line.tensor.name, entry)
            if where in derived:
                keys[where] = _used(model, derived[where])
            elif any(v == f for f in fixed):
                keys[where] = []
            else:
                name = next((name for name, c in named if v == c), None)
                keys[where] = [("const", name) if name is not None else where]
    parent = {}

    def root(key):
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for tie in model.ties:
        members = [root(keys[w][0]) for w in (tied_entry(found, e) for e in tie
                                              if e.split("[")[0] in found) if keys.get(w)]
        for k in members[1:]:
            if k != members[0]:
                parent[k] = members[0]
    return {where: [root(k) for k in ks] for where, ks in keys.items()}


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def rules(model, embedding=True):
    """{rule name: Rule} for every rule of ``RULES``, over ``ledger(model)``; with
    ``embedding=False`` the token and position embeddings are left out (and a named constant
    only they use)."""
    lines = [line for line in ledger(model)
             if embedding or line.tensor.part != "embedding"]
    lines = [line for line in lines if "applied again" not in line.rule]
    present = [line for line in lines if line.tensor.entries and line.role != "position"]
    out = {}
    numel = sum(_numel(line.tensor.shape) for line in present)
    out["numel"] = Rule("numel", numel, f"{len(present)} tensors with a non-zero entry")
    seen, unique, tied = [], 0, []
    for line in present:
        t = line.tensor
        twin = next((s for s in seen if s.shape == t.shape and s.entries == t.entries), None)
        if twin is None:
            seen.append(t)
            unique += _numel(t.shape)
        else:
            tied.append(f"{t.name} = {twin.name}")
    found = {t.name: t for t in seen}
    for tie in model.ties:  # a tie's entries in the tensors counted: one parameter
        held = [e for e in tie if e.split("[")[0] in found]
        unique -= max(len(held) - 1, 0)
    ties = (f"; {len(model.ties)} tie{'s' * (len(model.ties) != 1)}, each entry after its "
            f"first free" if model.ties else "")
    out["unique"] = Rule("unique", unique, ("; ".join(tied) if tied else "no tensor repeats "
                                            "another") + ties)
    values = _distinct(v for line in present for v in line.tensor.entries.values())
    out["distinct"] = Rule("distinct", len(values), "model-wide")
    keys = _entry_keys(model, lines)
    free = sum(len(line.tensor.entries) for line in present if _free_map(line))
    counted = sum(len(ks) > 0 for ks in keys.values())
    nonzero = len({k for ks in keys.values() for k in ks})
    out["nonzero"] = Rule("nonzero", nonzero, f"{counted} non-zero entries outside copy maps "
                          f"({free} in copy maps, free)" + (
                              f"; {counted - nonzero} reuse{'s' * (counted - nonzero == 1)} "
                              f"another entry's parameter (a tie, or one named constant)"
                              if counted > nonzero else ""))
    out["seed000"] = Rule("seed000", sum(line.params for line in lines),
                          "the ledger's total" + ("" if embedding else " less the embedding"))
    names = [name for name in model.constants if name not in model.fixed]
    if not names:
        out["free"] = Rule("free", None, "the file names no free constant")
    else:
        used = {k[1] for ks in keys.values() for k in ks if k[0] == "const"}
        if not embedding:  # a constant used only in the embedding goes with it
            everywhere = {k[1] for ks in _entry_keys(model, ledger(model)).values()
                          for k in ks if k[0] == "const"}
            names = [n for n in names if n in used or n not in everywhere]
        unused = [n for n in names if n not in used]
        literal = sum(1 for ks in keys.values() if ks and ks[0][0] != "const")
        out["free"] = Rule("free", len(names), ", ".join(names) + (
            f"; used by no entry: {', '.join(unused)} (no tensor entry names or equals one: "
            f"the file holds literals in their place)" if unused else "") + (
            f"; {literal} other non-zero entries are literals, not derived from a named constant"
            if literal else "; every other entry derived, fixed or a copy"))
    return out


def rules_text(model, embedding=True):
    """The rules side by side, one line each: name, count, what it counted."""
    found = rules(model, embedding)
    out = [f"counting rules{'' if embedding else ', the embedding left out'}:"]
    for name, rule in found.items():
        n = "-" if rule.params is None else str(rule.params)
        out += textwrap.wrap(f"{name:<9} {n:>6}  {rule.note}", 88,
                             subsequent_indent=" " * 18)
    return out
