"""Programs to weights: ``compile_program(text)`` reads a register program (docs/program.md)
and returns the model file it states, as JSON data that ``modelfile`` reads.

A program names the stream's slots once, writes the token embedding as assignments per token,
then one section per half-layer: ``y += attend(q = ..., k = ..., v = ...)`` places one head's
coefficients in W_Q, b_Q, W_K, b_K, W_V, b_V and its output map in W_O; ``z += relu(g)*(u)``
one FFN unit's in W_gate, b_gate, W_in, b_in, W_out; the readout reads named slots. Slots are
allocated to widths per block (the stream is as wide as the highest slot a block uses; only an
FFN widens it). Coefficients are exact constants of the model-file grammar, kept as the text
they are written in, so that the model file says what the program says.

Every error is one line with the program's line and column (:class:`ProgramError`).

>>> data = compile_program('''
... model tiny
... vocab 0 1 2 3 4 5 6 7 8 9
... slots d e
... embed
...   d = d on digit d
... L0.attn softmax1
...   e += attend(q = 1, k = 0, v = 2*d)
... L0.mlp relu gated
... readout linear
...   '0' = -d
... ''')
>>> data["blocks"][0]["attn"]["W_V"], data["embed"]["width"]
({'d': {'h0': '2'}}, 2)
>>> compile_program("slots d\\nembed\\n  e = 1 on '0'\\n")
Traceback (most recent call last):
    ...
tinyadder.compiler.ProgramError: line 3, column 3: unknown slot 'e'; the slots are d
"""

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
import json
import re

from . import constants as c
from .modelfile import ABOUT, FORMAT, VERSION, loads

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"(?P<space>\s+)|(?P<quoted>'[^']*')"
                    r"|(?P<number>[0-9](?:[eEpP][+-][0-9]|[0-9A-Za-z_.])*)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<op>\+=|->|[-+*/^(),=:])")
SECTION = re.compile(r"(embed|L(\d+)\.(attn|mlp)|readout)\b(.*)$")
ACTS = ("relu", "silu", "gelu", "identity")
CALLS = c.FUNCTIONS + c.MARKERS


class ProgramError(ValueError):
    """A program that does not compile: 'line L, column C: what is wrong; what is accepted'."""

    def __init__(self, line, column, message):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column, self.message = line, column, message


class _Tok:
    __slots__ = ("kind", "text", "col", "end")

    def __init__(self, kind, text, col, end):
        self.kind, self.text, self.col, self.end = kind, text, col, end

    @property
    def name(self):
        """The name a name token or a quoted one stands for."""
        return self.text[1:-1] if self.kind == "quoted" else self.text


def _strip_comment(line, quote=None):
    """(the line without its comment, the quote still open at its end): '#' starts a comment
    outside 'names' and "JSON strings"; ``quote`` is the one open at the line's start (a
    JSON string continued from the line above)."""
    escaped = False
    for k, ch in enumerate(line):
        if quote == '"' and escaped:
            escaped = False
        elif quote == '"' and ch == "\\":
            escaped = True
        elif ch == quote:
            quote = None
        elif quote is None and ch in "'\"":
            quote = ch
        elif quote is None and ch == "#":
            return line[:k], None
    return line, quote


CONTINUED = 4  # a line indented this deep or deeper continues the line above


def logical_lines(text):
    """[(line number, text, segments)]: each statement with its continuation lines joined by
    one space, comments and blank lines dropped; ``segments`` maps a column of the joined
    text back to its line: [(start index, line number, indent)]."""
    out, quote = [], None
    for lineno, raw in enumerate(text.splitlines(), 1):
        indent = len(raw) - len(raw.lstrip())
        if indent >= CONTINUED and out and (quote or not raw.lstrip().startswith("#")):
            body, quote = _strip_comment(raw.lstrip(), quote)
            body = body.rstrip()
            if body:
                start, text_, segments = out[-1]
                segments.append((len(text_) + 1, lineno, indent))
                out[-1] = (start, f"{text_} {body}", segments)
            continue
        body, quote = _strip_comment(raw)
        body = body.rstrip()
        if body.strip():
            out.append((lineno, body, [(0, lineno, 0)]))
    return out


# ---- linear forms over slots ----------------------------------------------------------------

class Lin:
    """sum_s coef[s] * s + coef[None]: each coefficient is constant text (None: 1); ``span`` is
    the source text of a constant (no slot), which a coefficient keeps as it is written."""

    def __init__(self, terms, span=None):
        self.terms, self.span = terms, span

    @property
    def constant(self):
        return all(k is None for k in self.terms)


def _neg_text(t):
    if t is None:
        return "-1"
    return "-" + t if IDENT.fullmatch(t) or re.fullmatch(r"[0-9.eE/]+", t) else f"-({t})"


def _group(t):
    return t if IDENT.fullmatch(t) or re.fullmatch(r"[0-9.]+", t) else f"({t})"


def _mul_text(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return f"{_group(a)}*{_group(b)}"


def _bare(text):
    """A constant's text without the parentheses around all of it."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for k, ch in enumerate(text):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0 and k < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _split_top(text):
    """``text`` split at its commas outside parentheses and quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for k, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif not quoted:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                parts.append(text[start:k].strip())
                start = k + 1
    parts.append(text[start:].strip())
    return parts


class _Expr:
    """Recursive descent over one statement's tokens: linear forms in the slots ``names``
    allows, constants in the model-file grammar."""

    def __init__(self, program, line, toks, at, variables):
        self.p, self.line, self.toks, self.at, self.vars = program, line, toks, at, variables
        self.cols = {}  # slot -> the column where this statement first names it

    def fail(self, tok, message):
        col = tok.col if tok is not None else len(self.line) + 1
        self.p.fail(col, message)

    def peek(self):
        return self.toks[self.at] if self.at < len(self.toks) else None

    def take(self, text=None):
        tok = self.peek()
        if tok is None or (text is not None and tok.text != text):
            self.fail(tok, f"{text!r} expected" if text else "the statement ends too early")
        self.at += 1
        return tok

    def span(self, start, end):
        return self.line[self.toks[start].col - 1:self.toks[end - 1].end]

    def lin(self):
        start = self.at
        value = self.product()
        while self.peek() is not None and self.peek().text in ("+", "-"):
            op = self.take().text
            right = self.product()
            value = self.combine(value, right if op == "+" else self.negate(right))
        return self.spanned(value, start)

    def spanned(self, value, start):
        if value.constant:
            text = _bare(self.span(start, self.at))
            return Lin({None: text}, span=text)
        return value

    def combine(self, a, b):
        terms = dict(a.terms)
        for k, t in b.terms.items():
            terms[k] = t if k not in terms else f"{terms[k] or '1'} + {_group(t or '1')}"
        return Lin(terms)

    def negate(self, a):
        return Lin({k: _neg_text(t) for k, t in a.terms.items()})

    def product(self):
        start = self.at
        value = self.unary()
        while self.peek() is not None and self.peek().text in ("*", "/"):
            if value.constant:  # a constant's coefficient text is its source text
                value = self.spanned(value, start)
            op = self.take()
            right = self.unary()
            if op.text == "/":
                if not right.constant:
                    self.fail(op, "a slot divides nothing: divide by a constant")
                value = Lin({k: f"{_group(t) if t else '1'}/{_group(right.terms[None])}"
                             for k, t in value.terms.items()})
            elif value.constant and not right.constant:
                value = Lin({k: _mul_text(value.terms[None], t) for k, t in right.terms.items()})
            elif right.constant:
                value = Lin({k: _mul_text(t, right.terms[None]) for k, t in value.terms.items()})
            else:
                self.fail(op, "a product of two slots is not linear; a coefficient is a "
                              "constant (a product of slots is an FFN unit: relu(g)*(u))")
        return self.spanned(value, start) if value.constant else value

    def unary(self):
        start = self.at
        tok = self.peek()
        if tok is not None and tok.text == "-":
            self.take()
            inner = self.unary()
            return self.spanned(inner, start) if inner.constant else self.negate(inner)
        return self.power()

    def power(self):
        start = self.at
        base = self.atom()
        if self.peek() is not None and self.peek().text == "^":
            op = self.take()
            exponent = self.unary()
            if not (base.constant and exponent.constant):
                self.fail(op, "^ takes constants (a power of a slot is not linear)")
            return self.spanned(Lin({None: None}), start)
        return base

    def atom(self):
        tok = self.take()
        if tok.kind == "number":
            return Lin({None: tok.text}, span=tok.text)
        if tok.text == "(":
            start = self.at - 1
            inner = self.lin()
            self.take(")")
            return self.spanned(inner, start) if inner.constant else inner
        if tok.kind == "name" and tok.text in CALLS:
            start = self.at - 1
            self.take("(")
            inner = self.lin()
            if not inner.constant:
                self.fail(tok, f"{tok.text}() takes a constant, not a slot")
            self.take(")")
            return self.spanned(inner, start)
        if tok.kind == "name" and tok.text == "pi":
            return Lin({None: "pi"}, span="pi")
        if tok.kind in ("name", "quoted"):
            name = tok.name
            if name in self.vars:
                self.cols.setdefault(name, tok.col)
                return Lin({name: None})
            if tok.kind == "name" and name in self.p.constants:
                return Lin({None: name}, span=name)
            self.p.unknown(tok, name, self.vars)
        self.fail(tok, f"unexpected {tok.text!r}; a term is a number, a named constant, a "
                       f"slot or a parenthesised expression")


# ---- the program ----------------------------------------------------------------------------

class _Program:
    """The program read so far, and the model file it becomes."""

    def __init__(self):
        self.lineno = 0
        self.name = "program"
        self.about, self.precision, self.constants, self.const_text = {}, None, {}, {}
        self.fixed, self.vocab, self.prompt, self.slots = [], [], None, []
        self.task = None  # {"before": [...], "cases": {input: [...]}, "after": [...]}
        self.repeats = []  # (layer, the earlier layer it applies again, line, column)
        self.mix = None    # ({"first": i, "gain": text}, line, column)
        self.roles, self.ties = {}, []
        self.section = None
        self.W_E, self.W_pos, self.pos_role = {}, {}, None
        self.pos_inner, self.pos_A, self.pos_B = [], {}, {}  # a factored W_pos
        self.written = {}   # slot -> the stage that first writes it
        self.reads = []     # (slot, stage index, line, column) to check against the writes
        self.blocks = []    # {"attn": {...}, "mlp": {...}, "widths": {...}}
        self.readout = None
        self.widths = {}    # 'embed' / block index -> an explicit width
        self.bias_at = {}   # head -> (line, column) of its first bias statement
        self.segments = {}  # a statement's first line -> its lines (``logical_lines``)
        self.line_text = ""

    # -- messages ---------------------------------------------------------------------------

    def unknown(self, tok, name, allowed):
        """An unknown name: the slots (or units, lanes) it could have been."""
        slots = allowed is self.slots or set(allowed) <= set(self.slots)
        listing = ", ".join(list(allowed)[:12]) + (", ..." if len(allowed) > 12 else "")
        self.fail(tok.col, f"unknown {'slot' if slots else 'name'} {name!r}; the "
                           f"{'slots' if slots else 'names here'} are {listing or 'none'}")

    def fail(self, col, message):
        """A one-line error at column ``col`` of the statement at hand (None: its end)."""
        if col is None:
            col = len(self.line_text) + 1
        raise ProgramError(*self.place_of(col), message)

    def place_of(self, col):
        """(line, column) of column ``col`` of the statement at hand (which may continue over
        several lines)."""
        line, shift = self.lineno, 0
        for start, lineno, indent in self.segments.get(self.lineno, ()):
            if start <= col - 1:
                line, shift = lineno, indent - start
        return line, col + shift

    # -- lines -------------------------------------------------------------------------------

    def tokens(self, line, start=0):
        toks, at = [], start
        while at < len(line):
            m = _TOKEN.match(line, at)
            if m is None:
                self.fail(at + 1, f"unexpected character {line[at]!r}")
            if m.lastgroup != "space":
                toks.append(_Tok(m.lastgroup, m.group(), at + 1, m.end()))
            at = m.end()
        return toks

    def read(self, text):
        for self.lineno, line, segments in logical_lines(text):
            self.segments[self.lineno], self.line_text = segments, line
            if not line[0].isspace():
                self.directive(line)
            elif self.section is None:
                self.fail(1, "an indented statement outside a section; start one with embed, "
                             "L0.attn, L0.mlp, ... or readout")
            else:
                self.statement(line)

    def directive(self, line):
        word, _, rest = line.partition(" ")
        col = len(word) + 2
        section = SECTION.match(line)
        if section:
            return self.open_section(section, line)
        rest_text = rest.strip()
        if word == "model":
            self.name = self.json_or_word(rest_text, col)
        elif word == "about":
            key, _, value = rest_text.partition(" ")
            if key not in ABOUT:
                self.fail(col, f"unknown about field {key!r}; the fields are {', '.join(ABOUT)}")
            self.about[key] = self.json(value, col + len(key) + 1)
        elif word == "precision":
            digits, _, why = rest_text.partition(" ")
            if not digits.isdigit():
                self.fail(col, f"{digits!r}: precision takes a number of digits, then why")
            self.precision = {"digits": int(digits)}
            if why.strip():
                self.precision["why"] = self.json(why, col + len(digits) + 1)
        elif word == "const":
            name, eq, value = rest_text.partition("=")
            name = name.strip()
            if not eq or not c.NAME.fullmatch(name) or name.lower() in c.RESERVED:
                self.fail(col, "write const NAME = VALUE (a name: a letter, then letters, "
                               "digits or _)")
            self.constant(name, value.strip(), col + len(rest) - len(value.lstrip()))
        elif word == "fixed":
            for tok in self.tokens(line, len(word)):
                if tok.text != ",":
                    if tok.name not in self.constants:
                        self.fail(tok.col, f"fixed: {tok.name!r} is not a named constant")
                    self.fixed.append(tok.name)
        elif word == "vocab":
            for m in re.finditer(r"'([^']*)'|(\S+)", line[len(word):]):
                token = m.group(1) if m.group(1) is not None else m.group(2)
                if token in self.vocab:
                    self.fail(len(word) + m.start() + 1, f"the token {token!r} is declared twice")
                self.vocab.append(token)
        elif word == "prompt":
            self.prompt = self.json(rest_text, col)
        elif word == "task":
            self.task_line(rest, col)
        elif word == "repeat":
            m = re.fullmatch(r"L(\d+) *= *L(\d+)", rest_text)
            if not m or int(m.group(2)) >= int(m.group(1)):
                self.fail(col, "write repeat Li = Lj: layer i is layer j, an earlier one, "
                               "applied again (its sections written again, the same weights)")
            self.repeats.append((int(m.group(1)), int(m.group(2)), self.lineno, col))
        elif word == "mix":
            m = re.fullmatch(r"L(\d+) +gain *= *(.+)", rest_text)
            if not m:
                self.fail(col, "write mix Li gain = VALUE: after the last layer, x = h + "
                               "VALUE*(x - h), h the stream after layer i")
            self.value(m.group(2), col + m.start(2))
            self.mix = ({"first": int(m.group(1)), "gain": m.group(2)}, self.lineno,
                        col + m.start(1) - 1)
        elif word == "slots":
            for tok in self.tokens(line, len(word)):
                if tok.kind not in ("name", "quoted"):
                    self.fail(tok.col, f"{tok.text!r} is not a slot name")
                if tok.name in self.slots:
                    self.fail(tok.col, f"the slot {tok.name!r} is declared twice")
                self.slots.append(tok.name)
        elif word == "positions":
            if rest_text != "learned":
                self.fail(col, "positions learned (W_pos is counted as parameters), or nothing")
            self.pos_role = "learned"
        elif word == "roles":
            for part in rest.split():
                name, eq, role = part.partition("=")
                if not eq:
                    self.fail(col, f"{part!r}: write roles TENSOR=ROLE ...")
                self.roles[name] = role
        elif word == "tie":
            self.ties.append(rest.split())
        else:
            self.fail(1, f"unknown directive {word!r}; a program has model, about, precision, "
                         f"const, fixed, vocab, prompt, task, positions, slots, roles, tie, repeat, mix, "
                         f"then the "
                         f"sections embed, L0.attn, L0.mlp, ..., readout")

    def applied_again(self, out):
        """The ``repeat`` and ``mix`` directives in the model file: a layer applied again is
        ``{"same_as": j}`` (its sections must be layer j's, written again), and the mix."""
        written = list(out["blocks"])
        for i, j, line, col in self.repeats:
            self.lineno = line
            if i >= len(written):
                self.fail(col, f"repeat L{i}: the program has layers L0 to "
                               f"L{len(written) - 1}")
            if written[i] != written[j]:
                self.fail(col, f"repeat L{i} = L{j}: L{i}'s sections are not L{j}'s written "
                               f"again")
            out["blocks"][i] = {"same_as": j}
        if self.mix is not None:
            mix, self.lineno, col = self.mix
            if mix["first"] >= len(written) - 1:
                self.fail(col, f"mix L{mix['first']}: the stream mixed with is an earlier "
                               f"layer's, L0 to L{len(written) - 2}")
            out["mix"] = mix

    def task_line(self, rest, col):
        """``task before T ...``, ``task after T ...`` or ``task case INPUT -> T ...``: the
        finite task of a model that does not add (tokens of the vocabulary, written as in
        ``vocab``; every answer of one length)."""
        kind, _, tokens = rest.partition(" ")
        task = self.task = self.task or {"before": [], "cases": {}}
        start = col + len(kind) + 1
        if kind in ("before", "after"):
            task[kind] = self.task_tokens(tokens, start)
        elif kind == "case":
            given, arrow, answer = tokens.partition("->")
            inputs = self.task_tokens(given, start)
            if not arrow or len(inputs) != 1:
                self.fail(start, "write task case INPUT -> ANSWER TOKENS (one input token)")
            if inputs[0] in task["cases"]:
                self.fail(start, f"the input {inputs[0]!r} has a case already")
            at = start + len(given) + 2
            written = self.task_tokens(answer, at)
            first = next(iter(task["cases"].values()), written)
            if not written or len(written) != len(first):
                self.fail(at + len(answer) - len(answer.lstrip()), f"an answer of {len(written)} tokens; every answer has one "
                              f"length, here {len(first) or 'one or more'}")
            task["cases"][inputs[0]] = written
        else:
            self.fail(col, f"{kind!r}: write task before ..., task after ... or "
                           f"task case INPUT -> ANSWER")

    def task_tokens(self, text, col):
        """The tokens of ``text``: words, or quoted as 'a b' (as ``vocab`` writes them),
        each one of the vocabulary."""
        out = []
        for m in re.finditer(r"'([^']*)'|(\S+)", text):
            token = m.group(1) if m.group(1) is not None else m.group(2)
            if token not in self.vocab:
                self.fail(col + m.start(), f"unknown token {token!r}; the tokens are "
                                           f"{', '.join(self.vocab)} (vocab comes first)")
            out.append(token)
        return out

    def json(self, text, col):
        try:
            return json.loads(text)
        except json.JSONDecodeError as why:
            self.fail(col + why.pos, f"not JSON: {why.msg}")

    def json_or_word(self, text, col):
        return self.json(text, col) if text.startswith('"') else text

    def constant(self, name, text, col):
        try:
            self.constants[name] = c.parse(text, self.constants)
        except c.ConstantError as why:
            self.fail(col, str(why))
        self.const_text[name] = text

    def value(self, text, col):
        """The exact value of a coefficient's text (None: 1)."""
        try:
            return c.parse("1" if text is None else text, self.constants)
        except c.ConstantError as why:
            self.fail(col, str(why))

    # -- sections ----------------------------------------------------------------------------

    def open_section(self, m, line):
        what, layer, part = m.group(1), m.group(2), m.group(3)
        words = self.tokens(line, m.start(4))
        if what == "embed":
            self.section = ("embed",)
            self.width_option(words, "embed")
            return
        if what == "readout":
            kind = words[0].text if words else "negative_error"
            if kind not in ("negative_error", "linear", "tied"):
                self.fail(words[0].col, f"readout {kind!r}: use negative_error, linear or tied")
            self.readout = {"kind": kind, "rows": [], "scale": {}, "b_U": {}, "tokens": None,
                            "ln_final": None}
            self.section = ("readout",)
            return
        i = int(layer)
        if i > len(self.blocks) or (i == len(self.blocks) and part == "mlp") or \
                (i < len(self.blocks) and (part == "attn" or self.blocks[i]["mlp"] is not None)):
            expected = (f"L{len(self.blocks)}.attn" if not self.blocks or
                        self.blocks[-1]["mlp"] is not None else f"L{len(self.blocks) - 1}.mlp")
            self.fail(1, f"{what}: the half-layers come in order; {expected} is next")
        if part == "attn":
            if not words or words[0].text not in ("softmax", "softmax1"):
                self.fail(m.end(3) + 2, f"{what}: say softmax or softmax1")
            self.blocks.append({"attn": {"heads": [], "softmax": words[0].text, "tables": {},
                                         "bias": {}, "bias_default": None, "slopes": {},
                                         "dim": 1, "kv": [], "options": {}},
                                "mlp": None, "norms": {}})
        else:
            if len(words) < 2 or words[0].text not in ACTS or \
                    words[1].text not in ("gated", "plain"):
                self.fail(m.end(3) + 2, f"{what}: say the activation ({', '.join(ACTS)}), then "
                                        f"gated or plain")
            self.blocks[i]["mlp"] = {"units": [], "act": words[0].text,
                                     "gated": words[1].text == "gated", "tables": {}}
            self.width_option(words[2:], i)
        self.section = (part, i)

    def width_option(self, words, key):
        if not words:
            return
        if len(words) != 2 or words[0].text != "width" or words[1].kind != "number" or \
                not words[1].text.isdigit():
            self.fail(words[0].col, "after the section's name: width N, or nothing")
        self.widths[key] = (int(words[1].text), words[1].col, self.lineno)

    def stage(self):
        """This statement's stage index: 0 the embedding, 2i + 1 layer i's attention, 2i + 2
        its FFN, a large number the readout."""
        kind = self.section[0]
        if kind == "embed":
            return 0
        if kind == "readout":
            return 10 ** 9
        return 2 * self.section[1] + (1 if kind == "attn" else 2)

    def stage_name(self, stage):
        if stage == 0:
            return "embed"
        if stage >= 10 ** 9:
            return "readout"
        return f"L{(stage - 1) // 2}.{'attn' if stage % 2 else 'mlp'}"

    def write(self, slot, tok):
        self.written.setdefault(slot, (self.stage(), tok))

    def read_lin(self, lin, ex):
        for s in lin.terms:
            if s is not None and s in self.slots:
                self.reads.append((s, self.stage(), self.lineno, ex.cols[s]))

    def statement(self, line):
        toks = self.tokens(line)
        kind = self.section[0]
        {"embed": self.embed, "attn": self.attend, "mlp": self.ffn,
         "readout": self.readout_row}[kind](line, toks)

    def slot_tok(self, tok):
        if tok.kind not in ("name", "quoted") or tok.name not in self.slots:
            if tok.kind in ("name", "quoted"):
                self.unknown(tok, tok.name, self.slots)
            self.fail(tok.col, f"{tok.text!r}: a slot name expected")
        return tok.name

    # -- embed: SLOT = VALUE on TOKEN, ... | SLOT = EXPR(d) on digit d -----------------------

    def embed(self, line, toks):
        if toks[0].text == "via":
            return self.via_positions(line, toks)
        slot = self.slot_tok(toks[0])
        if len(toks) < 2 or toks[1].text != "=":
            self.fail(toks[0].end + 1, "write SLOT = VALUE on TOKEN, ... in the embedding")
        self.write(slot, toks[0])
        if len(toks) == 3 and toks[2].text == "0":
            return  # SLOT = 0: the embedding holds it at 0 on every token, read as such
        if any(t.text == "position" for t in toks):
            if self.pos_inner:
                self.fail(toks[0].col, "W_pos is factored here: write SLOT = a sum of its lanes")
            return self.position_row(line, toks, slot)
        if self.pos_inner and not any(t.text == "on" for t in toks):
            ex = _Expr(self, line, toks, 2, self.pos_inner)
            lin = ex.lin()
            if ex.at < len(toks) or None in lin.terms:
                self.fail(toks[min(ex.at, len(toks) - 1)].col, "SLOT = a sum of W_pos lanes")
            for r, t in lin.terms.items():
                if not c.is_zero(self.value(t, toks[2].col)):
                    self.pos_B.setdefault(r, {})[slot] = "1" if t is None else t
            return
        at = 2
        while True:
            on = next((k for k in range(at, len(toks)) if toks[k].text == "on"), None)
            if on is None or on == at:
                self.fail(toks[at - 1].end + 1 if at > 2 else toks[1].end + 1,
                          "VALUE on TOKEN expected")
            text = line[toks[at].col - 1:toks[on - 1].end].strip()
            if on + 2 <= len(toks) and toks[on + 1].text == "digit" and \
                    on + 2 < len(toks) and toks[on + 2].text == "d":
                self.digit_row(slot, text, toks[at].col)
                at = on + 3
            else:
                token = toks[on + 1] if on + 1 < len(toks) else None
                if token is None:
                    self.fail(toks[on].end + 1, "a token after 'on'")
                names = [token]
                at = on + 2
                while at + 1 < len(toks) and toks[at].text == "," and \
                        self.is_token(toks[at + 1]) and \
                        (at + 2 >= len(toks) or toks[at + 2].text == ","):
                    names.append(toks[at + 1])
                    at += 2
                for t in names:
                    self.embed_entry(t, slot, text, toks[on - 1].col)
            if at >= len(toks):
                return
            if toks[at].text != ",":
                self.fail(toks[at].col, f"unexpected {toks[at].text!r}; separate VALUE on "
                                        f"TOKEN pairs with commas")
            at += 1

    def position_row(self, line, toks, slot):
        """SLOT = VALUE at position P, ...: the positional embedding W_pos."""
        self.at_positions(line, toks[2].col if len(toks) > 2 else toks[1].end + 1,
                          self.W_pos, slot)

    def at_positions(self, line, col, table, target):
        """VALUE at position P, ... from column ``col`` into ``table[P][target]``."""
        for part in _split_top(line[col - 1:]):
            m = re.fullmatch(r"(.+?)\s+at\s+position\s+(\d+)", part)
            if not m:
                self.fail(col, f"{part!r}: write VALUE at position P, ...")
            if not c.is_zero(self.value(m.group(1), col)):
                table.setdefault(m.group(2), {})[target] = m.group(1)

    def via_positions(self, line, toks):
        """via W_pos LANE = VALUE at position P, ...: an inner lane of a factored W_pos."""
        if len(toks) < 4 or toks[1].text != "W_pos" or toks[3].text != "=":
            self.fail(toks[0].col, "write via W_pos LANE = VALUE at position P, ...")
        if self.W_pos:
            self.fail(toks[0].col, "W_pos is either a table or factored: its via lanes come "
                                   "before any SLOT = VALUE at position P")
        lane = toks[2].name
        if lane in self.pos_inner:
            self.fail(toks[2].col, f"the lane {lane!r} of W_pos is declared twice")
        self.pos_inner.append(lane)
        self.at_positions(line, toks[3].end + 1, self.pos_A, lane)

    def is_token(self, tok):
        return tok.name in self.vocab

    def embed_entry(self, tok, slot, text, col):
        if tok.name not in self.vocab:
            self.fail(tok.col, f"unknown token {tok.name!r}; the vocabulary is "
                               f"{' '.join(self.vocab)}")
        if c.is_zero(self.value(text, col)):
            return
        self.W_E.setdefault(tok.name, {})[slot] = text

    def digit_row(self, slot, text, col):
        for d in range(10):
            if str(d) not in self.vocab:
                self.fail(col, "'on digit d' needs the tokens 0-9 in the vocabulary")
            names = dict(self.constants, d=c.Fraction(d)) if "d" not in self.constants else None
            if names is None:
                self.fail(col, "'on digit d' reads d; a named constant d hides it")
            try:
                v = c.parse(text, names)
            except c.ConstantError as why:
                self.fail(col, str(why))
            if not c.is_zero(v):
                self.W_E.setdefault(str(d), {})[slot] = c.text(v)

    # -- attention: [HEAD:] [TARGETS +=] attend(q = .., k = .., v = .., slope = ..) ----------

    ATTN_OPTIONS = ("dim", "rope", "scale", "scale_divide", "mask", "normalise", "ln1",
                    "q_norm", "k_norm")

    def attend(self, line, toks):
        a = self.blocks[self.section[1]]["attn"]
        at = 0
        if toks[0].text == "bias":
            return self.bias(line, toks, a)
        if len(toks) > 1 and toks[1].text == "=" and toks[0].text in self.ATTN_OPTIONS:
            return self.attn_option(line, toks, a)
        if toks[0].text == "kv" and len(toks) > 2 and toks[2].text == ":":
            return self.kv_head(line, toks, a)
        if toks[0].text == "via" and len(toks) > 1 and toks[1].text in self.VIA["attn"]:
            lanes = [lane for h in a["heads"] for lane in self.lanes(a, h)]
            return self.via(line, toks, a, lanes if toks[1].text == "W_O" else self.slots)
        head = None
        if len(toks) > 1 and toks[1].text == ":":
            head, at = toks[0].name, 2
        call = next((k for k in range(at, len(toks)) if toks[k].text == "attend"), None)
        if call is None:
            return self.out_bias(line, toks, a)
        targets, coef = [], "1"
        if call > at:
            plus = next((k for k in range(at, call) if toks[k].text == "+="), None)
            if plus is None or (call > plus + 1 and toks[call - 1].text != "*"):
                self.fail(toks[call].col, "write TARGETS += attend(...) or TARGETS += "
                                          "COEF*attend(...)")
            if a["dim"] > 1:
                self.fail(toks[0].col, f"a head of dimension {a['dim']} writes its lanes by "
                                       f"name: HEAD: attend(...), then SLOT += 'HEAD.0' + ...")
            targets = self.targets(toks[at:plus])
            if call > plus + 1:
                coef = _bare(line[toks[plus + 1].col - 1:toks[call - 2].end])
                self.value(coef, toks[plus + 1].col)
        head = head or f"h{len(a['heads'])}"
        if head in a["heads"] or head in a["kv"]:
            self.fail(toks[0].col, f"the head {head!r} is declared twice in this half-layer")
        a["heads"].append(head)
        ex = _Expr(self, line, toks, call + 1, self.slots)
        ex.take("(")
        allowed = ("q", "slope") if a["kv"] else ("q", "k", "v", "slope")
        self.head_parts(ex, a, head, allowed, ")")
        for slot, tok in targets:
            self.write(slot, tok)
            a["tables"].setdefault("W_O", {}).setdefault(head, {})[slot] = coef

    def head_parts(self, ex, a, head, allowed, end):
        """q = ..., k = ..., v = ..., slope = ... up to ``end`` (a tuple of lanes at head
        dimension d > 1)."""
        seen = set()
        while True:
            name = ex.take()
            if name.text not in allowed or name.text in seen:
                extra = " (the keys and values are the kv heads')" if a["kv"] else ""
                what = "attend" if end else "a kv head"
                self.fail(name.col, f"{name.text!r}: {what} takes {', '.join(allowed)}, once "
                                    f"each{extra}")
            seen.add(name.text)
            ex.take("=")
            if name.text == "slope":
                lin = ex.lin()
                if not lin.constant:
                    self.fail(name.col, "slope is a constant (an ALiBi slope per head)")
                if not c.is_zero(self.value(lin.span, name.col)):
                    a["slopes"][head] = lin.span
            else:
                w, b = {"q": ("W_Q", "b_Q"), "k": ("W_K", "b_K"), "v": ("W_V", "b_V")}[name.text]
                lanes = self.lanes(a, head)
                if len(lanes) > 1:
                    ex.take("(")
                ex.vars = self.sources(a, w, self.slots)
                for k, lane in enumerate(lanes):
                    if k:
                        ex.take(",")
                    lin = ex.lin()
                    self.read_lin(lin, ex)
                    self.place(a["tables"], w, b, lin, lane, name.col, a.get("factored"))
                if len(lanes) > 1:
                    ex.take(")")
            sep = ex.peek()
            if sep is None and end is None:
                return
            ex.take()
            if end is not None and sep.text == end:
                break
            if sep.text != ",":
                self.fail(sep.col, "',' or the end expected")
        if ex.at < len(ex.toks):
            self.fail(ex.toks[ex.at].col, f"unexpected {ex.toks[ex.at].text!r} after the head")

    def lanes(self, a, head):
        return [head] if a["dim"] == 1 else [f"{head}.{k}" for k in range(a["dim"])]

    def kv_head(self, line, toks, a):
        """kv NAME: k = ..., v = ...: a key/value head that query heads share."""
        if a["heads"]:
            self.fail(toks[0].col, "the kv heads come before the query heads")
        name = toks[1].name
        if name in a["kv"]:
            self.fail(toks[1].col, f"the kv head {name!r} is declared twice")
        a["kv"].append(name)
        self.head_parts(_Expr(self, line, toks, 3, self.slots), a, name, ("k", "v"), None)

    def attn_option(self, line, toks, a):
        """dim = D, rope = F[, F...], scale = X, scale_divide = X, mask = X, normalise =
        after, ln1 / q_norm / k_norm = rms(...)."""
        key, text, col = toks[0].text, line[toks[2].col - 1:].strip() if len(toks) > 2 else "", \
            toks[2].col if len(toks) > 2 else toks[1].end + 1
        if not text:
            self.fail(col, f"{key} = what?")
        if a["heads"] or a["kv"]:
            self.fail(toks[0].col, f"{key} comes before the heads")
        if key == "dim":
            if not text.isdigit() or not 1 <= int(text) <= 4096:
                self.fail(col, "dim = D, a head dimension from 1 to 4096")
            a["dim"] = int(text)
        elif key == "rope":
            freqs = _split_top(text)
            for f in freqs:
                self.value(f, col)
            a["options"]["rope"] = {"freq": freqs[0]} if len(freqs) == 1 else {"freqs": freqs}
        elif key in ("scale", "scale_divide", "mask"):
            self.value(text, col)
            a["options"]["scale" if key != "mask" else "mask"] = text
            if key == "scale_divide":
                a["options"]["scale_op"] = "divide"
        elif key == "normalise":
            if text not in ("before", "after"):
                self.fail(col, "normalise = before or after")
            a["options"]["normalise"] = text
        elif key == "ln1":
            self.blocks[self.section[1]]["norms"]["ln1"] = self.norm(text, col)
        else:
            a["options"][key] = self.norm(text, col)

    def norm(self, text, col):
        """rms(eps = E[, w = (KEY: V, ...)][, mean = multiply][, apply = divide]), or
        layer(...) with also b = (KEY: V, ...), as the model file's norm."""
        kind = text[:text.find("(")]
        if kind not in ("rms", "layer") or not text.endswith(")"):
            self.fail(col, "a norm is rms(eps = E, w = (SLOT: V, ...), mean = divide|multiply, "
                           "apply = rsqrt|divide), or layer(...) with also b = (SLOT: V, ...)")
        keys = ("eps", "w", "mean", "apply") + (("b",) if kind == "layer" else ())
        out = {"kind": kind}
        for part in _split_top(text[len(kind) + 1:-1]):
            key, eq, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or key not in keys or key in out:
                self.fail(col, f"{part.strip()!r}: {kind} takes {', '.join(keys[:-1])} and "
                               f"{keys[-1]}, once each")
            if key in ("w", "b"):
                if not (value.startswith("(") and value.endswith(")")):
                    self.fail(col, f"{key} = (KEY: VALUE, ...)")
                out[key] = {}
                for item in _split_top(value[1:-1]):
                    k, colon, v = item.partition(":")
                    k = k.strip()
                    k = k[1:-1] if k.startswith("'") and k.endswith("'") else k
                    if not colon:
                        self.fail(col, f"{item.strip()!r}: write KEY: VALUE")
                    self.value(v.strip(), col)
                    out[key][k] = v.strip()
            elif key == "eps":
                self.value(value, col)
                out["eps"] = value
            else:
                out[key] = value
        if "eps" not in out:
            self.fail(col, f"{kind}(...) needs eps")
        return out

    def targets(self, toks):
        if [t.text for t in toks] == ["every", "slot"]:
            return [(s, toks[0]) for s in self.slots[:self.attn_width()]]
        out = []
        for k, tok in enumerate(toks):
            if k % 2:
                if tok.text != ",":
                    self.fail(tok.col, "separate target slots with commas")
            else:
                out.append((self.slot_tok(tok), tok))
        return out

    def attn_width(self):
        """The slots an attention reads and writes: what the stream holds when it starts."""
        i = self.section[1]
        used = [self.slots.index(s) for s, (stage, _) in self.written.items()
                if stage <= 2 * i + 1]
        return max(used, default=-1) + 1

    def place(self, tables, w, b, lin, target, col, factored=None):
        """A linear form's coefficients into the table ``w`` (its factor B where ``factored``
        holds it) and its constant into the bias ``b``."""
        for s, t in lin.terms.items():
            if c.is_zero(self.value(t, col)):
                continue
            if s is None:
                tables.setdefault(b, {})[target] = t
            else:
                into = factored[w]["B"] if factored and w in factored else \
                    tables.setdefault(w, {})
                into.setdefault(s, {})[target] = "1" if t is None else t

    def sources(self, part, w, default):
        """What a linear form into table ``w`` reads: its inner lanes where it is factored."""
        f = part.get("factored", {})
        return f[w]["inner"] if w in f else default

    VIA = {"attn": ("W_Q", "W_K", "W_V", "W_O"), "mlp": ("W_gate", "W_in", "W_out"),
           "readout": ("W_U",)}

    def via(self, line, toks, part, sources):
        """via TABLE LANE = LINEAR: an inner lane of a factored table W = A B (its column of
        A, a linear form of the table's sources)."""
        kind = self.section[0]
        if len(toks) < 4 or toks[3].text != "=" or toks[1].text not in self.VIA[kind]:
            self.fail(toks[0].col, f"write via TABLE LANE = ..., TABLE one of "
                                   f"{', '.join(self.VIA[kind])} here")
        w, lane = toks[1].text, toks[2].name
        f = part.setdefault("factored", {}).setdefault(w, {"inner": [], "A": {}, "B": {}})
        if lane in f["inner"]:
            self.fail(toks[2].col, f"the lane {lane!r} of {w} is declared twice")
        if part["tables"].get(w) if "tables" in part else False:
            self.fail(toks[1].col, f"{w} already has entries; its via lanes come first")
        f["inner"].append(lane)
        ex = _Expr(self, line, toks, 4, sources)
        lin = ex.lin()
        if ex.at < len(toks):
            self.fail(toks[ex.at].col, f"unexpected {toks[ex.at].text!r}")
        if None in lin.terms:
            self.fail(toks[3].col, "an inner lane has no constant term (a factor has no bias)")
        self.read_lin(lin, ex)
        for s, t in lin.terms.items():
            if not c.is_zero(self.value(t, toks[3].col)):
                f["A"].setdefault(s, {})[lane] = "1" if t is None else t

    def bias(self, line, toks, a):
        """bias default = VALUE | bias HEAD: I->J = VALUE, ..."""
        if len(toks) > 3 and toks[1].text == "default" and toks[2].text == "=":
            a["bias_default"] = line[toks[3].col - 1:].strip()
            self.value(a["bias_default"], toks[3].col)
            return
        if len(toks) < 3 or toks[2].text != ":":
            self.fail(toks[0].col, "write bias default = VALUE or bias HEAD: I->J = VALUE, ...")
        head = toks[1].name
        self.bias_at.setdefault(head, (self.lineno, toks[1].col))
        rows = a["bias"].setdefault(head, {})
        at = toks[2].end
        for part in line[toks[2].end:].split(","):
            m = re.fullmatch(r"\s*(\d+)\s*->\s*(\d+)\s*=\s*(.+?)\s*", part)
            if not m:
                self.fail(at + 1, f"{part.strip()!r}: write I->J = VALUE")
            self.value(m.group(3), at + 1)
            rows.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
            at += len(part) + 1

    def out_bias(self, line, toks, a):
        """SLOT += [COEF*]HEAD + ... + CONSTANT: heads' outputs (W_O) and the output bias
        b_O."""
        slot = self.slot_tok(toks[0])
        if len(toks) < 3 or toks[1].text != "+=":
            self.fail(toks[0].col, "write SLOT += attend(...), SLOT += HEAD or SLOT += CONSTANT")
        names = [lane for h in a["heads"] for lane in self.lanes(a, h)]
        f = a.get("factored", {})
        if "W_O" in f:
            self.sum_into(line, toks, slot, f["W_O"]["inner"], f["W_O"], "B", "b_O",
                          bias_tables=a["tables"])
        else:
            self.sum_into(line, toks, slot, names, a["tables"], "W_O", "b_O")

    # -- FFN: unit NAME = act(g)*(u) | SLOT += [c*]UNIT + act(g)*(u) + CONSTANT ... ------------

    def ffn(self, line, toks):
        m = self.blocks[self.section[1]]["mlp"]
        if toks[0].text == "ln2" and len(toks) > 2 and toks[1].text == "=":
            if m["units"]:
                self.fail(toks[0].col, "ln2 comes before the units")
            self.blocks[self.section[1]]["norms"]["ln2"] = self.norm(
                line[toks[2].col - 1:].strip(), toks[2].col)
            return
        if toks[0].text == "unit" and len(toks) > 2 and toks[2].text == "=":
            name = toks[1].name
            if name in m["units"]:
                self.fail(toks[1].col, f"the unit {name!r} is declared twice")
            ex = _Expr(self, line, toks, 3, self.slots)
            self.unit(ex, m, name)
            if ex.at < len(toks):
                self.fail(toks[ex.at].col, f"unexpected {toks[ex.at].text!r} after the unit")
            return
        if toks[0].text == "via" and len(toks) > 1 and toks[1].text in self.VIA["mlp"]:
            return self.via(line, toks, m, m["units"] if toks[1].text == "W_out" else self.slots)
        slot = self.slot_tok(toks[0])
        if len(toks) < 3 or toks[1].text != "+=":
            self.fail(toks[0].col, "write SLOT += UNIT + ..., SLOT += relu(...)*(...) or "
                                   "unit NAME = relu(...)*(...)")
        f = m.get("factored", {})
        if "W_out" in f:
            self.sum_into(line, toks, slot, f["W_out"]["inner"], f["W_out"], "B", "b_out",
                          bias_tables=m["tables"])
        else:
            self.sum_into(line, toks, slot, m["units"], m["tables"], "W_out", "b_out",
                          lambda ex, name: self.unit(ex, m, name))

    def sum_into(self, line, toks, slot, names, tables, out, bias, inline_unit=None,
                 bias_tables=None):
        """SLOT += [COEF*]NAME + ... + CONSTANT: ``names`` (units, heads) into ``slot``
        through the table ``out``, constants into ``bias``; with ``inline_unit``, a term
        act(...)*(...) is a unit of its own, named after the slot."""
        self.write(slot, toks[0])
        ex = _Expr(self, line, toks, 2, self.slots)
        inline, sign = 0, 1
        calls = ACTS if inline_unit else ()
        while True:
            tok = ex.peek()
            if tok is None:
                self.fail(None, "a term expected")
            if tok.text in ("+", "-") and ex.at > 2 or (tok.text == "-" and ex.at == 2):
                sign = -1 if ex.take().text == "-" else 1
                tok = ex.peek()
                if tok is None:
                    self.fail(None, "a term expected after the sign")
            coef = None
            star = self.coefficient_end(toks, ex.at, names, calls)
            if star is not None:
                coef = _bare(line[toks[ex.at].col - 1:toks[star - 1].end])
                ex.at = star + 1
                tok = ex.peek()
            if tok.kind in ("name", "quoted") and tok.name in names and \
                    (ex.at + 1 >= len(toks) or toks[ex.at + 1].text != "("):
                ex.take()
                unit = tok.name
            elif tok.kind == "name" and tok.text in calls:
                unit = slot if inline == 0 and slot not in names else f"{slot}_{inline}"
                while unit in names:
                    inline += 1
                    unit = f"{slot}_{inline}"
                inline += 1
                inline_unit(ex, unit)
            elif coef is None:
                start = ex.at
                lin = ex.product()
                if not lin.constant:
                    self.fail(tok.col, f"{self.stage_name(self.stage())} adds its "
                                       f"{'units' if inline_unit else 'heads'} and constants "
                                       f"into a slot, not slots")
                text = _bare(line[toks[start].col - 1:toks[ex.at - 1].end])
                self.add(tables if bias_tables is None else bias_tables, bias, None, slot, text,
                         sign, tok.col)
                sign = 1
                if ex.peek() is None:
                    return
                continue
            else:
                self.unknown(tok, tok.name, names)
            self.add(tables, out, unit, slot, coef, sign, tok.col)
            sign = 1
            if ex.peek() is None:
                return
            if ex.peek().text not in ("+", "-"):
                self.fail(ex.peek().col, f"unexpected {ex.peek().text!r}; join terms with + or -")

    def coefficient_end(self, toks, at, names, calls):
        """The index of the '*' that ends a constant coefficient before a name of ``names``
        or a call of ``calls``, or None."""
        depth = 0
        for k in range(at, len(toks)):
            t = toks[k].text
            depth += {"(": 1, ")": -1}.get(t, 0)
            if depth == 0 and t in ("+", "-") and k > at:
                return None
            if depth == 0 and t == "*" and k + 1 < len(toks):
                nxt = toks[k + 1]
                if (nxt.kind in ("name", "quoted") and nxt.name in names) or \
                        (nxt.kind == "name" and nxt.text in calls):
                    return k
            if toks[k].kind in ("name", "quoted") and (toks[k].name in names or
                                                       toks[k].text in calls) and depth == 0:
                return None
        return None

    def add(self, tables, name, unit, slot, coef, sign, col):
        text = coef if sign == 1 else _neg_text(coef)
        if c.is_zero(self.value(text, col)):
            return
        if unit is None:
            row = tables.setdefault(name, {})
            row[slot] = text if slot not in row else f"{row[slot]} + {_group(text)}"
        else:
            row = tables.setdefault(name, {}).setdefault(unit, {})
            row[slot] = (text or "1") if slot not in row else \
                f"{row[slot]} + {_group(text or '1')}"

    def unit(self, ex, m, name):
        """act(gate)*(up) (gated) or act(in) (plain) into unit ``name``."""
        act = ex.take()
        if act.text != m["act"]:
            self.fail(act.col, f"this FFN's activation is {m['act']}, not {act.text!r}")
        m["units"].append(name)
        f = m.get("factored")
        ex.take("(")
        ex.vars = self.sources(m, "W_gate" if m["gated"] else "W_in", self.slots)
        first = ex.lin()
        ex.take(")")
        self.read_lin(first, ex)
        if m["gated"]:
            if ex.peek() is None or ex.peek().text != "*":
                self.fail(ex.peek().col if ex.peek() else None,
                          f"a gated unit is {m['act']}(gate)*(up)")
            ex.take("*")
            paren = ex.take("(")
            ex.vars = self.sources(m, "W_in", self.slots)
            up = ex.lin()
            ex.take(")")
            self.read_lin(up, ex)
            self.place(m["tables"], "W_gate", "b_gate", first, name, act.col, f)
            self.place(m["tables"], "W_in", "b_in", up, name, paren.col, f)
        else:
            self.place(m["tables"], "W_in", "b_in", first, name, act.col, f)

    # -- readout: TOKEN = -SLOT (negative error) | TOKEN = LINEAR (linear) -------------------

    def readout_row(self, line, toks):
        r = self.readout
        if toks[0].text == "ln_final" and len(toks) > 2 and toks[1].text == "=":
            r["ln_final"] = self.norm(line[toks[2].col - 1:].strip(), toks[2].col)
            return
        if toks[0].text == "tokens" and r["kind"] != "negative_error":
            r["tokens"] = [t.name for t in toks[1:]]
            for t in toks[1:]:
                if t.name not in self.vocab:
                    self.fail(t.col, f"unknown token {t.name!r}")
            return
        if r["kind"] == "tied":
            return self.tied_row(line, toks)
        if toks[0].text == "via" and len(toks) > 1 and toks[1].text == "W_U":
            r.setdefault("tables", {})
            return self.via(line, toks, r, self.slots)
        k = 0
        while k < len(toks):
            tok = toks[k]
            if k + 1 >= len(toks) or toks[k + 1].text != "=":
                self.fail(tok.col, "write TOKEN = -SLOT (negative error) or TOKEN = a linear "
                                   "form of slots (linear)")
            if tok.name not in self.vocab:
                self.fail(tok.col, f"unknown token {tok.name!r}; the vocabulary is "
                                   f"{' '.join(self.vocab)}")
            if self.readout["kind"] == "negative_error":
                if k + 3 >= len(toks) or toks[k + 2].text != "-":
                    self.fail(toks[k + 1].end + 1, "a negative-error logit is -SLOT")
                slot = self.slot_tok(toks[k + 3])
                self.reads.append((slot, self.stage(), self.lineno, toks[k + 3].col))
                self.readout["rows"].append((tok.name, slot))
                k += 4
            else:
                ex = _Expr(self, line, toks, k + 2, self.sources(r, "W_U", self.slots))
                lin = ex.lin()
                self.read_lin(lin, ex)
                self.readout["rows"].append((tok.name, lin))
                k = ex.at

    def tied_row(self, line, toks):
        """scale SLOT = VALUE | bias TOKEN = VALUE, in a tied readout."""
        if len(toks) < 4 or toks[0].text not in ("scale", "bias") or toks[2].text != "=":
            self.fail(toks[0].col, "a tied readout has scale SLOT = VALUE and bias TOKEN = VALUE")
        text = line[toks[3].col - 1:].strip()
        self.value(text, toks[3].col)
        if toks[0].text == "scale":
            slot = self.slot_tok(toks[1])
            self.reads.append((slot, self.stage(), self.lineno, toks[1].col))
            self.readout["scale"][slot] = text
        else:
            if toks[1].name not in self.vocab:
                self.fail(toks[1].col, f"unknown token {toks[1].name!r}")
            self.readout["b_U"][toks[1].name] = text

    # -- the model file ----------------------------------------------------------------------

    def check_reads(self):
        for slot, stage, line, col in self.reads:
            first = self.written.get(slot)
            if first is None or first[0] >= stage:
                self.lineno = line
                where = self.stage_name(stage)
                later = f" (first written in {self.stage_name(first[0])})" if first else ""
                self.fail(col, f"the slot {slot!r} is read in {where} before it is written"
                               f"{later}; it would always be 0")

    def widths_of(self):
        """The stream's width at the embedding and after each block's FFN: the highest slot
        each stage uses, or an explicit width (which must hold it)."""
        def need(upto):
            used = [self.slots.index(s) for s, (stage, _) in self.written.items() if stage <= upto]
            used += [self.slots.index(s) for s, stage, _, _ in self.reads if stage <= upto]
            return max(used, default=-1) + 1
        out = []
        for key, upto in [("embed", 1)] + [(i, 2 * i + 3) for i in range(len(self.blocks))]:
            last = key == len(self.blocks) - 1
            width = need(10 ** 9 if last else upto)
            if out:
                width = max(width, out[-1])
            if key in self.widths:
                given, col, self.lineno = self.widths[key]
                if given < width or given > len(self.slots):
                    self.fail(col, f"width {given}: the stream must hold {width} slots here "
                                   f"(the highest slot written so far or read next), at most "
                                   f"the {len(self.slots)} declared")
                width = given
            out.append(width)
        return out

    def model(self):
        if not self.slots:
            raise ProgramError(self.lineno or 1, 1, "no slots declared; a program declares "
                                                    "them with 'slots NAME ...'")
        if not self.blocks:
            raise ProgramError(self.lineno or 1, 1, "no layer: a program has at least L0.attn")
        if self.blocks[-1]["mlp"] is None:
            raise ProgramError(self.lineno, 1, f"L{len(self.blocks) - 1}.mlp is missing: every "
                                               f"layer has an attention and an FFN section")
        if self.readout is None:
            raise ProgramError(self.lineno, 1, "no readout section")
        self.check_reads()
        widths = self.widths_of()
        out = {"format": FORMAT, "version": VERSION, "name": self.name}
        if self.about:
            out["about"] = self.about
        if self.precision:
            out["precision"] = self.precision
        if self.constants:
            out["constants"] = dict(self.const_text)
        if self.fixed:
            out["fixed"] = self.fixed
        out["vocab"] = self.vocab
        if self.prompt is not None:
            out["prompt"] = self.prompt
        if self.task is not None:
            out["task"] = self.task
        out["slots"] = self.slots
        out["embed"] = {"width": widths[0], "W_E": self.W_E}
        if self.W_pos:
            out["embed"]["W_pos"] = dict(sorted(self.W_pos.items(), key=lambda kv: int(kv[0])))
        elif self.pos_inner:
            out["embed"]["W_pos"] = {"inner": self.pos_inner, "B": self.pos_B, "A": dict(
                sorted(self.pos_A.items(), key=lambda kv: int(kv[0])))}
        if self.pos_role:
            out["embed"]["pos_role"] = self.pos_role
        out["blocks"] = []
        for i, b in enumerate(self.blocks):
            a, m = b["attn"], b["mlp"]
            if not a["heads"]:
                a["heads"].append("h0")
            for head in a["bias"]:
                if head not in a["heads"]:
                    self.lineno, col = self.bias_at[head]
                    self.fail(col, f"bias for the head {head!r}, which L{i}.attn does not "
                                   f"have; its heads are {', '.join(a['heads'])}")
            attn = {"heads": a["heads"]}
            if a["dim"] != 1:
                attn["head_dim"] = a["dim"]
            if a["kv"]:
                attn["kv_heads"] = a["kv"]
            for w, f in a.get("factored", {}).items():
                a["tables"][w] = f
            attn.update({k: a["tables"][k] for k in
                                            ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O",
                                             "b_O") if a["tables"].get(k)})
            for key in ("q_norm", "k_norm", "rope", "scale", "scale_op"):
                if key in a["options"]:
                    attn[key] = a["options"][key]
            if a["slopes"]:
                attn["slopes"] = a["slopes"]
            if a["bias"]:
                attn["bias"] = {"default": a["bias_default"] or "0", "heads": a["bias"]}
            attn["softmax"] = a["softmax"]
            for key in ("normalise", "mask"):
                if key in a["options"]:
                    attn[key] = a["options"][key]
            for w, f in m.get("factored", {}).items():
                m["tables"][w] = f
            mlp = {"units": m["units"], "act": m["act"], "gated": m["gated"],
                   **{k: m["tables"][k] for k in ("W_gate", "b_gate", "W_in", "b_in", "W_out",
                                                  "b_out") if m["tables"].get(k)}}
            block = {"width_in": widths[i], "width_out": widths[i + 1]}
            if "ln1" in b["norms"]:
                block["ln1"] = b["norms"]["ln1"]
            block["attn"] = attn
            if "ln2" in b["norms"]:
                block["ln2"] = b["norms"]["ln2"]
            block["mlp"] = mlp
            out["blocks"].append(block)
        self.applied_again(out)
        r = self.readout
        if r["ln_final"] is not None:
            out["ln_final"] = r["ln_final"]
        if r["kind"] == "negative_error":
            out["unembed"] = {"kind": "negative_error", "slots": dict(r["rows"])}
        elif r["kind"] == "tied":
            out["unembed"] = {"kind": "tied"}
            if r["tokens"] is not None:
                out["unembed"]["tokens"] = r["tokens"]
            for key in ("scale", "b_U"):
                if r[key]:
                    out["unembed"][key] = r[key]
        else:
            W_U, b_U = {}, {}
            for token, lin in r["rows"]:
                for s, t in lin.terms.items():
                    if c.is_zero(self.value(t, 1)):
                        continue
                    if s is None:
                        b_U[token] = t
                    else:
                        W_U.setdefault(s, {})[token] = t or "1"
            if "W_U" in r.get("factored", {}):
                f = r["factored"]["W_U"]
                W_U = {"inner": f["inner"], "A": f["A"], "B": W_U}
            out["unembed"] = {"kind": "linear", "tokens": r["tokens"] or
                              [t for t, _ in r["rows"]], "W_U": W_U}
            if b_U:
                out["unembed"]["b_U"] = b_U
        if self.roles:
            out["roles"] = self.roles
        if self.ties:
            out["ties"] = self.ties
        return out


def compile_program(text):
    """The model file (JSON data) a program's text states; :class:`ProgramError` if it does
    not compile."""
    p = _Program()
    p.read(text)
    return p.model()


def compile_model(text):
    """The model a program's text states (a ``weights.Model``, checked as a model file is:
    ``modelfile.loads``)."""
    return loads(json.dumps(compile_program(text)))


def difference(a, b, where="model"):
    """Where two models (or parts of them) differ, as 'blocks.0.attn.W_K[special][h3]: 960 !=
    961', or None when they are equal: every field, every weight exact (``==`` on values; a
    table's order is not part of it). ``meta`` is compared through its precision."""
    if is_dataclass(a) and is_dataclass(b) and type(a) is type(b):
        for f in fields(a):
            d = difference(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
            if d:
                return d
        return None
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{where}[{k}]: only in the {'second' if k not in a else 'first'}"
            d = difference(a[k], b[k], f"{where}[{k}]")
            if d:
                return d
        return None
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        for k, (x, y) in enumerate(zip(a, b)):
            d = difference(x, y, f"{where}[{k}]")
            if d:
                return d
        return None
    same = (a == b) if type(a) is type(b) or (c.is_rational(a) and c.is_rational(b)) else False
    return None if same else f"{where}: {a!r} != {b!r}"
