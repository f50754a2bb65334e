"""Model files: a whole model as one JSON document of exact constants (docs/model-format.md).

``load(path_or_file)`` and ``loads(text)`` read one into a :class:`weights.Model`; ``dump(model)``
writes the canonical text (fields in the documented order, entries in the model's order, every
value a string of the constant grammar, ``constants.text``), so that
``dump(loads(dump(m))) == dump(m)``.

Reading is strict and bounded: the size is checked before the text is read, the nesting depth
before ``json`` recurses, every constant's size before its arithmetic; an unknown field, a JSON
number where a value belongs, a duplicated key, a zero written in a table, a constant that does
not parse, an entry that names no declared slot, head, unit or token, and a tie between entries
of different values are refused. Every refusal is one :class:`ModelFileError` line that names
the field.

>>> from tinyadder.construction import build
>>> text = dump(build("published"))
>>> for line in text.splitlines()[:5]:
...     print(line)
{
  "format": "tinyadder-model",
  "version": 1,
  "name": "tinyadder36-published",
  "about": {
>>> dump(loads(text)) == text
True
>>> loads(text.replace('"960"', '960'))
Traceback (most recent call last):
    ...
tinyadder.modelfile.ModelFileError: blocks.0.attn.W_K['special']['h3']: 960 is a JSON number; a value is a string of the constant grammar, such as "960"
"""

import json
import os
import re

from . import constants as c
from .construction import MAX_DIGITS
from .numbers import Precision, evaluable
from .weights import (ACTIVATIONS, UNEMBED_KINDS, MLP, Attention, Block, Factored, Mix, Model,
                      Norm, Prompt, Task, Unembed, WeightError)

FORMAT = "tinyadder-model"
VERSION = 1
MAX_BYTES = 8 * 1024 * 1024   # a file
MAX_NESTING = 16              # levels of JSON objects and arrays (a model needs 8)
MAX_CONSTANTS = 4096          # named constants
MAX_NAME = 200                # characters of a slot, token, head or unit name
MAX_POSITION = 10 ** 6        # a position in W_pos or an attention bias table
MAX_ROWS = 100_000            # rows of a table, entries of a row or of any other object
MAX_PRECISION = 2100          # significant digits (numbers.MAX_DECIMAL_DIGITS)
_LONGEST = "the limit of --digits"  # the construction's operand length
WIDTH = 100                   # dump: a value fits on one line up to this column


class ModelFileError(ValueError):
    """A model file that cannot be read: one line naming the field and what is accepted."""


# ---- reading -----------------------------------------------------------------------------

def load(source):
    """The model in a file, given its path or an open binary or text file."""
    if hasattr(source, "read"):
        where = getattr(source, "name", None)
        data = source.read(MAX_BYTES + 1)
    else:
        where = os.fspath(source)
        try:
            size = os.path.getsize(where)
            if size > MAX_BYTES:
                raise ModelFileError(f"{where}: a file of {size:,} bytes; a model file has at "
                                     f"most {MAX_BYTES:,}")
            with open(where, "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError as why:
            raise ModelFileError(f"{where}: cannot read it: {why.strerror or why}") from None
    try:
        return loads(data)
    except ModelFileError as why:
        raise ModelFileError(f"{where}: {why}" if where else str(why)) from None


def loads(text):
    """The model a model file's text (str, or UTF-8 bytes) states."""
    if len(text) > MAX_BYTES:
        raise ModelFileError(f"{len(text):,} bytes; a model file has at most {MAX_BYTES:,}")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as why:
            raise ModelFileError(f"not UTF-8 text (byte {why.start + 1})") from None
    text = text[1:] if text.startswith("\ufeff") else text
    depth = _nesting(text)
    if depth > MAX_NESTING:
        raise ModelFileError(f"JSON nested {depth} levels deep or more; a model file nests at "
                             f"most {MAX_NESTING}")
    try:
        data = json.loads(text, object_pairs_hook=_Object, parse_float=_Number,
                          parse_int=_integer, parse_constant=_Number)
    except json.JSONDecodeError as why:
        raise ModelFileError(f"not JSON: {why.msg} at line {why.lineno} column {why.colno}") \
            from None
    return _Reader().model(data)


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[^\[\]{}]+")


def _nesting(text, stop=MAX_NESTING + 1):
    """The depth of JSON brackets outside strings, counted up to ``stop``."""
    depth = deepest = 0
    for ch in _BRACKETS.sub("", _STRINGS.sub("", text)):
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
        if deepest >= stop:
            break
    return deepest


class _Object(dict):
    """A JSON object that remembers the first key it was given twice."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.duplicate = None
        if len(self) < len(pairs):
            seen = set()
            for key, _ in pairs:
                if key in seen:
                    self.duplicate = key
                    break
                seen.add(key)


class _Number(str):
    """A JSON number that is not a short integer (kept as its text, refused where read)."""


def _integer(text):
    return int(text) if len(text) <= 20 else _Number(text)


def _json(value):
    """A short view of a JSON value for a message."""
    shown = value if isinstance(value, _Number) else json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 30 else shown[:30] + f"... ({len(shown):,} characters)"


class _Reader:
    """Reads the parsed JSON into a Model, with the named constants read so far."""

    def __init__(self):
        self.names = {}
        self.budget = c.Budget()
        self.derived = {}  # entry -> its text, where that uses named constants

    # ---- the shapes of JSON values --------------------------------------------------------

    def fields(self, where, obj, required, optional=()):
        """``obj`` as a JSON object with these fields (unknown ones refused, by name)."""
        if not isinstance(obj, _Object):
            raise ModelFileError(f"{where or 'the model'}: {_json(obj)} is not an object; "
                                 f"give {{...}} with {', '.join(required + optional)}")
        if obj.duplicate is not None:
            raise ModelFileError(f"{where}: the key {obj.duplicate!r} appears twice")
        for key in obj:
            if key not in required and key not in optional:
                raise ModelFileError(f"{where or 'the model'}: unknown field {key!r}; the "
                                     f"fields are {', '.join(required + optional)}")
        for key in required:
            if key not in obj:
                raise ModelFileError(f"{where or 'the model'}: the field {key!r} is missing; "
                                     f"{', '.join(required)} are required")
        return obj

    def mapping(self, where, obj):
        """A JSON object with any keys (a table's rows, the roles), of at most MAX_ROWS."""
        if not isinstance(obj, _Object):
            raise ModelFileError(f"{where}: {_json(obj)} is not an object; give {{...}}")
        if obj.duplicate is not None:
            raise ModelFileError(f"{where}: the key {obj.duplicate!r} appears twice")
        if len(obj) > MAX_ROWS:
            raise ModelFileError(f"{where}: {len(obj):,} entries; a table has at most "
                                 f"{MAX_ROWS:,} rows, and a row or an object at most as many "
                                 f"entries")
        return obj

    def integer(self, where, x, lo, hi, why=""):
        if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
            raise ModelFileError(f"{where}: {_json(x)}; give a JSON integer from {lo} to {hi}"
                                 + (f" ({why})" if why else ""))
        return x

    def string(self, where, x, limit=None):
        if not isinstance(x, str) or isinstance(x, _Number) or (limit and len(x) > limit):
            raise ModelFileError(f"{where}: {_json(x)}; give a JSON string"
                                 + (f" of at most {limit} characters" if limit else ""))
        return x

    def choice(self, where, x, choices):
        if x not in choices or isinstance(x, _Number):
            raise ModelFileError(f"{where}: {_json(x)}; use "
                                 f"{', '.join(json.dumps(ch) for ch in choices)}")
        return x

    def names_list(self, where, x, allow_empty=False, distinct=True):
        """A list of names (slots, tokens, heads, units: distinct; a question may repeat a
        token)."""
        if not isinstance(x, list) or (not x and not allow_empty):
            raise ModelFileError(f"{where}: {_json(x)}; give a list of names"
                                 + ("" if allow_empty else ", one or more"))
        for i, name in enumerate(x):
            if not isinstance(name, str) or isinstance(name, _Number) or not name:
                raise ModelFileError(f"{where}[{i}]: {_json(name)}; a name is a non-empty "
                                     f"string")
            self.string(f"{where}[{i}]", name, MAX_NAME)
        if distinct and len(set(x)) != len(x):
            twice = next(n for n in x if x.count(n) > 1)
            raise ModelFileError(f"{where}: {twice!r} appears twice")
        return tuple(x)

    def value(self, where, x, kind="weight"):
        """An exact constant from its text; 'weight' entries are non-zero, only 'bias' ones
        may be -inf."""
        if x in ("NaN", "Infinity", "-Infinity") and isinstance(x, _Number):
            raise ModelFileError(f"{where}: {x} is not an exact constant; a value is a string "
                                 f"of the constant grammar, such as \"11/10\"")
        if isinstance(x, _Number) or (isinstance(x, int) and not isinstance(x, bool)):
            raise ModelFileError(f'{where}: {_json(x)} is a JSON number; a value is a string '
                                 f'of the constant grammar, such as "{_json(x)}"')
        if not isinstance(x, str):
            raise ModelFileError(f"{where}: {_json(x)}; a value is a string of the constant "
                                 f"grammar, such as \"11/10\" or \"exp(40)\"")
        try:
            v, used = c.parse_using(x, self.names, self.budget)
        except c.ConstantError as why:
            raise ModelFileError(f"{where}: {why}") from None
        try:
            evaluable.check(v)  # sizes and domains, before any number system evaluates it
        except evaluable.Unevaluable as why:
            raise ModelFileError(f"{where}: {why}") from None
        if used and "[" in where and ".bias." not in where and x.strip() not in self.names:
            # a table entry written as an expression of named constants
            self.derived[_entry(where)] = x
        if isinstance(v, c.MinusInfinity) and kind != "bias":
            raise ModelFileError(f"{where}: -inf is accepted only as a mask, a fixed attention "
                                 f"bias or a constant")
        if kind == "weight" and c.is_zero(v):
            raise ModelFileError(f"{where}: {x!r} is zero; a zero is left out of a table")
        return v

    def table(self, where, obj, keys=None):
        """{row: {column: value}}; ``keys`` reads the row keys (positions: ints). A table
        written {"inner": [...], "A": {...}, "B": {...}} is a factored one (W = A B)."""
        if isinstance(obj, dict) and isinstance(obj.get("inner"), list):
            f = self.fields(where, obj, ("inner", "A", "B"))
            return Factored(inner=self.names_list(f"{where}.inner", f["inner"]),
                            A=self.table(f"{where}.A", f["A"], keys),
                            B=self.table(f"{where}.B", f["B"]))
        rows = {}
        for row, entries in self.mapping(where, obj).items():
            at = f"{where}[{row!r}]"
            rows[keys(at, row) if keys else row] = self.vector(at, entries)
        return rows

    def vector(self, where, obj, kind="weight"):
        return {k: self.value(f"{where}[{k!r}]", v, kind)
                for k, v in self.mapping(where, obj).items()}

    def position(self, where, key):
        if not (key.isascii() and key.isdigit() and (key == "0" or key[0] != "0")
                and int(key) <= MAX_POSITION):
            raise ModelFileError(f"{where}: a position is written 0, 1, 2, ... (at most "
                                 f"{MAX_POSITION:,})")
        return int(key)

    def optional(self, obj, key, read, default=None):
        return read(obj[key]) if key in obj else default

    # ---- the model's parts ------------------------------------------------------------------

    def model(self, data):
        top = self.fields("", data, TOP_REQUIRED, TOP_OPTIONAL)
        if top["format"] != FORMAT:
            raise ModelFileError(f"format: {_json(top['format'])}; a model file says "
                                 f"\"{FORMAT}\"")
        if top["version"] != VERSION or isinstance(top["version"], bool):
            raise ModelFileError(f"version: {_json(top['version'])}; this tinyadder reads "
                                 f"version {VERSION}")
        name = self.string("name", top["name"], MAX_NAME)
        about = self.optional(top, "about", self.about, {})
        meta = self.optional(top, "precision", self.precision, {})
        self.optional(top, "constants", self.constants)
        fixed = self.optional(top, "fixed", lambda x: self.names_list("fixed", x, True), ())
        vocab = self.names_list("vocab", top["vocab"])
        slots = self.names_list("slots", top["slots"])
        embed = self.fields("embed", top["embed"], ("width", "W_E"), ("W_pos", "pos_role"))
        blocks = top["blocks"]
        if not isinstance(blocks, list) or not blocks:
            raise ModelFileError(f"blocks: {_json(blocks)}; give a list of one or more blocks")
        try:
            return Model(
                name=name, vocab=vocab, slots=slots,
                W_E=self.table("W_E", embed["W_E"]),
                width_embed=self.integer("embed.width", embed["width"], 1, len(slots)),
                W_pos=self.optional(embed, "W_pos",
                                    lambda x: self.table("W_pos", x, self.position), {}),
                pos_role=self.optional(embed, "pos_role", lambda x: self.choice(
                    "embed.pos_role", x, ("fixed", "learned")), "fixed"),
                blocks=self.blocks(blocks, len(slots)),
                mix=self.optional(top, "mix", self.mix),
                ln_final=self.optional(top, "ln_final", lambda x: self.norm("ln_final", x)),
                unembed=self.unembed(top["unembed"], vocab),
                prompt=self.optional(top, "prompt", self.prompt),
                task=self.optional(top, "task", self.task),
                roles=self.optional(top, "roles", self.roles, {}),
                meta=meta, about=about, constants=dict(self.names), fixed=fixed,
                ties=self.optional(top, "ties", self.ties, ()), derived=self.derived)
        except WeightError as why:
            raise ModelFileError(str(why)) from None

    def about(self, obj):
        about = self.fields("about", obj, (), ABOUT)
        out = {}
        for key, x in about.items():
            if key == "params_claimed":
                out[key] = self.integer("about.params_claimed", x, 0, 10 ** 12)
            elif key == "dtype":
                out[key] = self.choice("about.dtype", x, ("float32", "float64"))
            elif key == "source":
                out[key] = {k: self.string(f"about.source.{k}", v) for k, v in
                            self.fields("about.source", x, (), SOURCE).items()}
            else:
                out[key] = self.string(f"about.{key}", x)
        return out

    def precision(self, obj):
        p = self.fields("precision", obj, ("digits",), ("why",))
        digits = self.integer("precision.digits", p["digits"], 1, MAX_PRECISION)
        why = self.optional(p, "why", lambda x: self.string("precision.why", x, 200), "")
        return {"precision": Precision(digits, why)}

    def constants(self, obj):
        named = self.mapping("constants", obj)
        if len(named) > MAX_CONSTANTS:
            raise ModelFileError(f"constants: {len(named):,} of them; at most {MAX_CONSTANTS:,}")
        for name, text in named.items():
            if not c.NAME.fullmatch(name) or name.lower() in c.RESERVED:
                raise ModelFileError(f"constants[{name!r}]: a name is a letter followed by "
                                     f"letters, digits or _, and not one of "
                                     f"{', '.join(c.RESERVED)}")
            self.names[name] = self.value(f"constants[{name!r}]", text, "bias")

    def prompt(self, obj):
        p = self.fields("prompt", obj, ("digits", "question"),
                        ("operands", "answer", "answer_digits", "stop"))
        digits = self.integer("prompt.digits", p["digits"], 1, MAX_DIGITS, _LONGEST)
        return Prompt(
            digits=digits,
            question=self.names_list("prompt.question", p["question"], distinct=False),
            operands=self.optional(p, "operands", lambda x: self.choice(
                "prompt.operands", x, ("msb", "lsb")), "msb"),
            answer=self.optional(p, "answer", lambda x: self.choice(
                "prompt.answer", x, ("msb", "lsb")), "msb"),
            answer_digits=self.optional(p, "answer_digits", lambda x: self.integer(
                "prompt.answer_digits", x, 1, MAX_DIGITS + 1, _LONGEST), digits + 1),
            stop=self.optional(p, "stop", lambda x: None if x is None else self.string(
                "prompt.stop", x, MAX_NAME)))

    def task(self, obj):
        t = self.fields("task", obj, ("before", "cases"), ("after",))
        cases = self.mapping("task.cases", t["cases"])
        return Task(
            before=self.names_list("task.before", t["before"], True, False),
            cases={x: self.names_list(f"task.cases[{x!r}]", answer, distinct=False)
                   for x, answer in cases.items()},
            after=self.optional(t, "after", lambda x: self.names_list("task.after", x, True,
                                                                       False), ()))

    def blocks(self, blocks, slots):
        """The blocks; ``{"same_as": i}`` is block i (an earlier one) applied again."""
        out = []
        for i, b in enumerate(blocks):
            if isinstance(b, dict) and "same_as" in b:
                same = self.fields(f"blocks.{i}", b, ("same_as",))
                if i == 0:
                    raise ModelFileError("blocks.0.same_as: the first block is its own; "
                                         "same_as names an earlier block")
                out.append(out[self.integer(f"blocks.{i}.same_as", same["same_as"], 0, i - 1)])
            else:
                out.append(self.block(f"blocks.{i}", b, slots))
        return tuple(out)

    def mix(self, obj):
        m = self.fields("mix", obj, ("first", "gain"))
        return Mix(first=self.integer("mix.first", m["first"], 0, 1 << 16),
                   gain=self.value("mix.gain", m["gain"]))

    def block(self, where, obj, slots):
        b = self.fields(where, obj, ("width_in", "width_out", "attn", "mlp"), ("ln1", "ln2"))
        return Block(
            width_in=self.integer(f"{where}.width_in", b["width_in"], 1, slots),
            width_out=self.integer(f"{where}.width_out", b["width_out"], 1, slots),
            ln1=self.optional(b, "ln1", lambda x: self.norm(f"{where}.ln1", x)),
            attn=self.attention(f"{where}.attn", b["attn"]),
            ln2=self.optional(b, "ln2", lambda x: self.norm(f"{where}.ln2", x)),
            mlp=self.mlp(f"{where}.mlp", b["mlp"]))

    def norm(self, where, obj):
        if obj is None:
            return None
        n = self.fields(where, obj, ("kind", "eps"), ("w", "b", "mean", "apply"))
        kind = self.choice(f"{where}.kind", n["kind"], ("rms", "layer"))
        eps = self.value(f"{where}.eps", n["eps"])
        if not _positive(eps):
            what = "an RMS norm" if kind == "rms" else "a LayerNorm"
            raise ModelFileError(f"{where}.eps: {_json(n['eps'])}; {what}'s eps is positive "
                                 f"(the norm takes the square root of a mean plus it)")
        if "b" in n and kind != "layer":
            raise ModelFileError(f"{where}.b: an RMS norm has no bias; a LayerNorm (kind "
                                 f"\"layer\") has")
        return Norm(
            eps=eps, kind=kind,
            w=self.optional(n, "w", lambda x: self.vector(f"{where}.w", x), {}),
            b=self.optional(n, "b", lambda x: self.vector(f"{where}.b", x), {}),
            mean=self.optional(n, "mean", lambda x: self.choice(
                f"{where}.mean", x, ("divide", "multiply")), "divide"),
            apply=self.optional(n, "apply", lambda x: self.choice(
                f"{where}.apply", x, ("rsqrt", "divide")), "rsqrt"))

    def attention(self, where, obj):
        a = self.fields(where, obj, ("heads", "softmax"), ATTENTION_OPTIONAL)
        tables = {name: (self.vector if name.startswith("b_") else self.table)(
            f"{where}.{name}", a[name]) for name in Attention.tables if name in a}
        bias, default = self.optional(a, "bias", lambda x: self.bias(f"{where}.bias", x),
                                      ({}, 0))
        head_dim = self.optional(a, "head_dim", lambda x: self.integer(
            f"{where}.head_dim", x, 1, 4096), 1)
        return Attention(
            heads=self.names_list(f"{where}.heads", a["heads"]),
            head_dim=head_dim,
            kv_heads=self.optional(a, "kv_heads", lambda x: self.names_list(
                f"{where}.kv_heads", x), ()),
            **tables,
            q_norm=self.optional(a, "q_norm", lambda x: self.norm(f"{where}.q_norm", x)),
            k_norm=self.optional(a, "k_norm", lambda x: self.norm(f"{where}.k_norm", x)),
            rope_freqs=self.optional(a, "rope", lambda x: self.rope(f"{where}.rope", x,
                                                                    head_dim // 2), ()),
            scale=self.optional(a, "scale", lambda x: self.value(f"{where}.scale", x), 1),
            scale_op=self.optional(a, "scale_op", lambda x: self.choice(
                f"{where}.scale_op", x, ("multiply", "divide")), "multiply"),
            slopes=self.optional(a, "slopes", lambda x: self.vector(f"{where}.slopes", x), {}),
            bias=bias, bias_default=default,
            softmax=self.choice(f"{where}.softmax", a["softmax"], ("softmax1", "softmax")),
            mask=self.optional(a, "mask", lambda x: self.value(f"{where}.mask", x, "bias"),
                               c.NEG_INF),
            normalise=self.optional(a, "normalise", lambda x: self.choice(
                f"{where}.normalise", x, ("before", "after")), "before"))

    def rope(self, where, obj, pairs):
        """The rotary frequencies, one per lane pair: ``freq`` for every pair, or ``freqs``."""
        r = self.fields(where, obj, (), ("freq", "freqs"))
        if len(r) != 1:
            raise ModelFileError(f"{where}: give one of freq (one frequency for every lane "
                                 f"pair) and freqs (a list, one per pair)")
        if "freq" in r:
            return (self.value(f"{where}.freq", r["freq"]),) * max(pairs, 1)
        if not isinstance(r["freqs"], list) or not r["freqs"]:
            raise ModelFileError(f"{where}.freqs: give a list of one value per lane pair")
        return tuple(self.value(f"{where}.freqs[{i}]", x) for i, x in enumerate(r["freqs"]))

    def bias(self, where, obj):
        b = self.fields(where, obj, ("default", "heads"))
        default = self.value(f"{where}.default", b["default"], "bias")
        heads = {}
        for head, rows in self.mapping(f"{where}.heads", b["heads"]).items():
            at = f"{where}.heads[{head!r}]"
            heads[head] = {self.position(f"{at}[{i!r}]", i): {
                self.position(f"{at}[{i!r}][{j!r}]", j): self.value(
                    f"{at}[{i!r}][{j!r}]", v, "bias")
                for j, v in self.mapping(f"{at}[{i!r}]", row).items()}
                for i, row in self.mapping(at, rows).items()}
        return heads, default

    def mlp(self, where, obj):
        m = self.fields(where, obj, ("units", "act", "gated"), MLP.tables)
        if not isinstance(m["gated"], bool):
            raise ModelFileError(f"{where}.gated: {_json(m['gated'])}; give true or false")
        return MLP(
            units=self.names_list(f"{where}.units", m["units"], allow_empty=True),
            act=self.choice(f"{where}.act", m["act"], ACTIVATIONS),
            gated=m["gated"],
            **{name: (self.vector if name.startswith("b_") else self.table)(
                f"{where}.{name}", m[name]) for name in MLP.tables if name in m})

    def unembed(self, obj, vocab):
        self.fields("unembed", obj, ("kind",), ("tokens", "slots", "W_U", "scale", "b_U"))
        kind = self.choice("unembed.kind", obj["kind"], UNEMBED_KINDS)
        u = self.fields("unembed", obj, ("kind",) + UNEMBED_REQUIRED[kind],
                        UNEMBED_OPTIONAL[kind])
        slots = self.optional(u, "slots", lambda x: {
            k: self.string(f"unembed.slots[{k!r}]", v, MAX_NAME)
            for k, v in self.mapping("unembed.slots", x).items()}, {})
        default = tuple(slots) if kind == "negative_error" else vocab
        return Unembed(
            kind=kind,
            tokens=self.optional(u, "tokens", lambda x: self.names_list("unembed.tokens", x),
                                 default),
            slots=slots,
            W_U=self.optional(u, "W_U", lambda x: self.table("unembed.W_U", x), {}),
            b_U=self.optional(u, "b_U", lambda x: self.vector("unembed.b_U", x), {}),
            scale=self.optional(u, "scale", lambda x: self.vector("unembed.scale", x), {}))

    def roles(self, obj):
        return {k: self.string(f"roles[{k!r}]", v) for k, v in self.mapping("roles", obj).items()}

    def ties(self, obj):
        if not isinstance(obj, list):
            raise ModelFileError(f"ties: {_json(obj)}; give a list of ties, each a list of "
                                 f"entries such as \"W_E[=][eq]\"")
        return tuple(self.names_list(f"ties[{i}]", tie) for i, tie in enumerate(obj))


TOP_REQUIRED = ("format", "version", "name", "vocab", "slots", "embed", "blocks", "unembed")
TOP_OPTIONAL = ("about", "precision", "constants", "fixed", "prompt", "task", "mix",
                "ln_final", "roles", "ties")
TOP = ("format", "version", "name", "about", "precision", "constants", "fixed", "vocab",
       "prompt", "task", "slots", "embed", "blocks", "mix", "ln_final", "unembed", "roles", "ties")
ABOUT = ("title", "author", "params_claimed", "dtype", "family", "source", "notes")
SOURCE = ("repo", "path", "commit", "url")
ATTENTION = ("heads", "head_dim", "kv_heads") + Attention.tables + (
    "q_norm", "k_norm", "rope", "scale", "scale_op", "slopes", "bias", "softmax", "mask",
    "normalise")
ATTENTION_OPTIONAL = tuple(f for f in ATTENTION if f not in ("heads", "softmax"))
UNEMBED_REQUIRED = {"negative_error": ("slots",), "linear": ("W_U",), "tied": ()}
UNEMBED_OPTIONAL = {"negative_error": ("tokens",), "linear": ("tokens", "b_U"),
                    "tied": ("tokens", "scale", "b_U")}


# ---- writing -----------------------------------------------------------------------------

def dump(model):
    """The canonical model-file text of ``model``: fields in the documented order, defaults
    left out, entries in the model's order, an entry equal to a named constant written as its
    name."""
    return _layout(_Writer(model).model()) + "\n"


class _Writer:
    def __init__(self, model):
        self.m = model
        self.named = list(model.constants.items())

    def value(self, v, entry=None):
        if entry is not None and entry in self.m.derived:
            return self.m.derived[entry]
        for name, value in self.named:
            if type(value) is type(v) or (c.is_rational(value) and c.is_rational(v)):
                if value == v:
                    return name
        return c.text(v)

    def table(self, t, name=None, zeros=False):
        """A table's rows, without its zeros (``zeros``: with them, as an attention bias); a
        factored table as its inner lanes and two factors. ``name``: the tensor's, so that a
        derived entry is written as its text."""
        if isinstance(t, Factored):
            return {"inner": list(t.inner), "A": self.table(t.A, f"{name}.A"),
                    "B": self.table(t.B, f"{name}.B")}
        rows = {str(k): self.vector(row, f"{name}[{k}]" if name else None, zeros)
                for k, row in t.items()}
        return {k: row for k, row in rows.items() if row}

    def vector(self, v, name=None, zeros=False):
        return {str(k): self.value(x, f"{name}[{k}]" if name else None)
                for k, x in v.items() if zeros or not c.is_zero(x)}

    def model(self):
        m = self.m
        extra = set(m.meta) - {"precision"}
        if extra:
            raise ValueError(f"meta {sorted(extra)[0]!r} has no place in a model file")
        out = {"format": FORMAT, "version": VERSION, "name": m.name}
        if m.about:
            out["about"] = {k: dict(m.about[k]) if k == "source" else m.about[k]
                            for k in ABOUT if k in m.about}
        p = m.meta.get("precision")
        if p is not None:
            out["precision"] = {"digits": p.digits, **({"why": p.why} if p.why else {})}
        if m.constants:
            out["constants"] = {k: c.text(v) for k, v in m.constants.items()}
        if m.fixed:
            out["fixed"] = list(m.fixed)
        out["vocab"] = list(m.vocab)
        if m.prompt is not None:
            out["prompt"] = self.prompt(m.prompt)
        if m.task is not None:
            out["task"] = {"before": list(m.task.before),
                           "cases": {x: list(a) for x, a in m.task.cases.items()},
                           **({"after": list(m.task.after)} if m.task.after else {})}
        out["slots"] = list(m.slots)
        out["embed"] = {"width": m.width_embed, "W_E": self.table(m.W_E, "W_E")}
        if m.W_pos:
            out["embed"]["W_pos"] = self.table(m.W_pos, "W_pos")
        if m.pos_role != "fixed":
            out["embed"]["pos_role"] = m.pos_role
        out["blocks"] = [{"same_as": m.blocks.index(b)} if m.blocks.index(b) < i
                         else self.block(b, f"blocks.{i}") for i, b in enumerate(m.blocks)]
        if m.mix is not None:
            out["mix"] = {"first": m.mix.first, "gain": self.value(m.mix.gain)}
        if m.ln_final is not None:
            out["ln_final"] = self.norm(m.ln_final)
        out["unembed"] = self.unembed(m.unembed)
        if m.roles:
            out["roles"] = dict(m.roles)
        if m.ties:
            out["ties"] = [list(t) for t in m.ties]
        return out

    def prompt(self, p):
        out = {"digits": p.digits, "question": list(p.question), "operands": p.operands,
               "answer": p.answer, "answer_digits": p.answer_digits}
        if p.stop is not None:
            out["stop"] = p.stop
        return out

    def block(self, b, where):
        out = {"width_in": b.width_in, "width_out": b.width_out}
        if b.ln1 is not None:
            out["ln1"] = self.norm(b.ln1, f"{where}.ln1")
        out["attn"] = self.attention(b.attn, f"{where}.attn")
        if b.ln2 is not None:
            out["ln2"] = self.norm(b.ln2, f"{where}.ln2")
        out["mlp"] = self.mlp(b.mlp, f"{where}.mlp")
        return out

    def norm(self, n, where=None):
        out = {"kind": n.kind, "eps": self.value(n.eps)}
        for v in ("w", "b"):
            if getattr(n, v):
                out[v] = self.vector(getattr(n, v), f"{where}.{v}" if where else None)
        if n.mean != "divide":
            out["mean"] = n.mean
        if n.apply != "rsqrt":
            out["apply"] = n.apply
        return out

    def attention(self, a, where):
        out = {"heads": list(a.heads)}
        if a.head_dim != 1:
            out["head_dim"] = a.head_dim
        if a.kv_heads:
            out["kv_heads"] = list(a.kv_heads)
        out.update(self.tables(a, Attention.tables, where))
        for name in ("q_norm", "k_norm"):
            if getattr(a, name) is not None:
                out[name] = self.norm(getattr(a, name), f"{where}.{name}")
        if a.rope_freqs:
            freqs = [self.value(f) for f in a.rope_freqs]
            out["rope"] = {"freq": freqs[0]} if len(set(freqs)) == 1 else {"freqs": freqs}
        if a.scale != 1:
            out["scale"] = self.value(a.scale)
        if a.scale_op != "multiply":
            out["scale_op"] = a.scale_op
        if a.slopes:
            out["slopes"] = self.vector(a.slopes, f"{where}.slopes")
        if a.bias:  # without a table the default has no effect
            out["bias"] = {"default": self.value(a.bias_default),
                           "heads": {h: self.table(rows, zeros=True)
                                     for h, rows in a.bias.items()}}
        out["softmax"] = a.softmax
        if a.normalise != "before":
            out["normalise"] = a.normalise
        if not isinstance(a.mask, c.MinusInfinity):
            out["mask"] = self.value(a.mask)
        return out

    def mlp(self, m, where):
        out = {"units": list(m.units), "act": m.act, "gated": m.gated}
        out.update(self.tables(m, MLP.tables, where))
        return out

    def tables(self, part, names, where):
        """{name: table} of the part's weight tables and biases that have a non-zero entry."""
        written = {name: (self.vector if name.startswith("b_") else self.table)(
            getattr(part, name), f"{where}.{name}") for name in names}
        return {name: t for name, t in written.items() if t}

    def unembed(self, u):
        out = {"kind": u.kind}
        default = tuple(u.slots) if u.kind == "negative_error" else self.m.vocab
        if u.tokens != default:
            out["tokens"] = list(u.tokens)
        if u.kind == "negative_error":
            out["slots"] = dict(u.slots)
        if u.W_U:
            out["W_U"] = self.table(u.W_U, "unembed.W_U")
        if u.scale:
            out["scale"] = self.vector(u.scale, "unembed.scale")
        if u.b_U:
            out["b_U"] = self.vector(u.b_U, "unembed.b_U")
        return out


def _layout(value, indent=0, used=0):
    """JSON text: a value on one line where it fits in ``WIDTH`` columns (``used`` of them
    already taken on its first line); else its items on lines of their own, indented by two
    spaces a level, several to a line where they are all scalars."""
    flat = json.dumps(value, ensure_ascii=False)
    if used + len(flat) <= WIDTH or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + 2
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(key + _layout(v, inner, inner + len(key)))
        scalars = not any(isinstance(v, (dict, list)) for v in value.values())
    else:
        items = [_layout(v, inner, inner) for v in value]
        scalars = not any(isinstance(v, (dict, list)) for v in value)
    lines = _packed(items, WIDTH - inner) if scalars else items
    brackets = "[]" if isinstance(value, list) else "{}"
    return (brackets[0] + "\n" + ",\n".join(" " * inner + line for line in lines) + "\n"
            + " " * indent + brackets[1])


def _packed(items, width):
    """Items joined by ', ' into lines of at most ``width`` characters."""
    lines = [items[0]]
    for item in items[1:]:
        if len(lines[-1]) + 2 + len(item) + 1 <= width:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    return lines


def _positive(v):
    """Whether the constant ``v`` is shown to be > 0."""
    if isinstance(v, c.ExpTerm):
        return v.coef > 0
    if isinstance(v, c.Ln):
        return v.base > 1
    if isinstance(v, c.Expr):
        return evaluable.check(v).lo > 0
    return c.is_rational(v) and v > 0


def _entry(where):
    """A table entry's name as ties and ``derived`` write it, 'blocks.0.mlp.W_in[count][u3]',
    from the reader's 'blocks.0.mlp.W_in['count']['u3']'; the embedding's without 'embed.'."""
    for quote in ("'", '"'):
        where = where.replace(f"[{quote}", "[").replace(f"{quote}]", "]")
    return where
