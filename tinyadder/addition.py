"""The addition task: expressions, prompts and answers. The model itself knows none of this.

The layout of a question is the model's (``model.prompt``: the tokens around the operands, the
order of their digits and of the answer's, N). TinyAdder-36 reads ``<bos>``, a and b
zero-padded to N digits, most significant first, ``=``, and writes the N + 1 digits of the
sum; another model may read its digits least significant first, with other separators.
"""

from dataclasses import dataclass
from functools import lru_cache
import operator
import re
from typing import FrozenSet

from .construction import DIGITS
from .generate import generate
from .numbers import NUMBER_NAMES, for_model, number_system

EXAMPLE = "use A+B, e.g. 12+34"
_EXPRESSION = re.compile(r"\s*([0-9]*)\s*\+\s*([0-9]*)\s*")
EXCERPT = 24  # characters of a bad input quoted in a message


class InputError(ValueError):
    """An expression the adder does not accept; the message says what is wrong and what is."""


def excerpt(text, width=EXCERPT):
    """``repr(text)``, cut to ``width`` characters when longer (a bad input may be 1 MB)."""
    if len(text) <= width:
        return repr(text)
    return f"{text[:width]!r}... ({len(text)} characters)"


def split_expression(text):
    """``'12 + 34'`` -> ``('12', '34')``, the operands' digit texts; raise InputError naming
    the problem when the text is not the sum of two non-negative integers (any length)."""
    if not isinstance(text, str):
        raise TypeError(f"an expression is text such as '12+34', got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise InputError(f"empty expression; {EXAMPLE}")
    quoted = excerpt(stripped)
    if any(ch.isdigit() and not "0" <= ch <= "9" for ch in stripped):
        raise InputError(f"non-ASCII digits in {quoted}; use the digits 0-9")
    if stripped.count("+") > 1:
        raise InputError(f"more than two operands in {quoted}; {EXAMPLE}")
    if "-" in stripped:
        raise InputError(f"signs are not accepted in {quoted}; {EXAMPLE}")
    match = _EXPRESSION.fullmatch(stripped)
    if not match:
        raise InputError(f"not an addition: {quoted}; {EXAMPLE}")
    a, b = match.groups()
    if not a or not b:
        raise InputError(f"missing operand in {quoted}; {EXAMPLE}")
    return a, b


def parse_expression(text, digits=DIGITS):
    """``'12 + 34'`` -> ``(12, 34)``; raise InputError naming the problem otherwise.

    Operands have at most ``digits`` digits 0-9 after their leading zeros (so a 5000-character
    ``000...01`` is 1); messages quote at most a short excerpt of the text.
    """
    a, b = split_expression(text)
    for operand in (a, b):
        significant = operand.lstrip("0")
        if len(significant) > digits:
            shown = operand if len(operand) <= EXCERPT else f"{operand[:EXCERPT]}..."
            raise InputError(f"operand {shown} has more than {digits} digits; at most "
                             f"{digits} ASCII digits")
    # int() refuses texts over 4300 digits: the zeros in front are not part of the value
    return int(a.lstrip("0") or "0"), int(b.lstrip("0") or "0")


def check_operands(a, b, digits=DIGITS):
    """``(a, b)`` as ints if both are non-negative integers of at most ``digits`` digits;
    otherwise TypeError (not an integer: a bool, a float, a str) or ValueError, naming the
    operand. The command line and the Python API both go through here."""
    checked = []
    for name, x in (("a", a), ("b", b)):
        if isinstance(x, bool):
            raise TypeError(f"operand {name} must be an int, got the bool {x}")
        try:
            x = operator.index(x)
        except TypeError:
            raise TypeError(f"operand {name} must be an int, got {type(x).__name__} "
                            f"{excerpt(repr(x))}") from None
        if x < 0:
            shown = x if x > -10 ** EXCERPT else "a negative number"
            raise ValueError(f"operand {name} = {shown} is negative; the adder takes "
                             f"non-negative integers of at most {digits} digits")
        if x >= 10 ** digits:
            shown = f" = {x}" if x < 10 ** EXCERPT else ""
            raise ValueError(f"operand {name}{shown} has more than {digits} digits, the "
                             f"model's N; build the model for more digits "
                             f"(build(variant, digits))")
        checked.append(x)
    return tuple(checked)


def system_of(ns, fresh=False):
    """A number system, given one or its name (``'fraction'``, ``'decimal:30'``, ...). A name
    is one system every time it is given, so that ``run(model, 'float', a, b)`` in a loop
    compiles the model once, as a system given as an object does; ``fresh``: a new one, whose
    ``roundings`` are then those of one run alone (a trace's)."""
    if isinstance(ns, str):
        return number_system(ns) if fresh else _named_system(ns)
    if not hasattr(ns, "fit"):
        raise TypeError(f"expected a number system or its name ({NUMBER_NAMES}), got "
                        f"{type(ns).__name__}")
    return ns


@lru_cache(maxsize=64)
def _named_system(spec):
    """``number_system(spec)``, one per name (a model is compiled once per system)."""
    return number_system(spec)


def digits_of(model):
    """The operand length N the model's prompt takes."""
    if not hasattr(model, "prompt"):
        raise TypeError(f"expected a model, such as build('published'), got "
                        f"{type(model).__name__}")
    if model.prompt is None:
        raise ValueError(f"the model {model.name} does not add: it has no addition prompt")
    return model.prompt.digits


def text(a, b, answer, digits=DIGITS):
    """The addition as printed: operands zero-padded to N digits, the answer to N + 1
    ('0000000012+0000000034=00000000046'); an answer that is not a number is shown as the
    tokens the model wrote."""
    shown = "%0*d" % (digits + 1, answer) if isinstance(answer, int) else answer
    return "%0*d+%0*d=%s" % (digits, a, digits, b, shown)  # faster than nested format specs


def _digits(value, digits, order):
    """The N digits of ``value``, zero-padded, most significant first ('msb') or last."""
    text = "%0*d" % (digits, value)
    return text if order == "msb" else text[::-1]


def encode(model, a, b):
    """Token ids of the question ``a + b`` in the model's prompt layout (operands checked:
    ``check_operands``)."""
    digits_of(model)  # a model, and one that adds
    return _encode(model, *check_operands(a, b, model.prompt.digits))


def _encode(model, a, b):
    """``encode`` of checked operands."""
    p, token = model.prompt, _token_ids(model)
    ids = []
    for item in p.question:
        if item in ("a", "b"):
            ids += map(token.__getitem__, _digits(a if item == "a" else b, p.digits, p.operands))
        else:
            ids.append(token[item])
    return ids


def encode_answer(model, total):
    """Token ids of the answer ``total`` as the model writes it: its answer digits, in its
    answer order, then its stop token if it has one."""
    p, token = model.prompt, _token_ids(model)
    ids = [token[d] for d in _digits(total, p.answer_digits, p.answer)]
    return ids + ([token[p.stop]] if p.stop is not None else [])


@lru_cache(maxsize=64)
def _token_ids(model):
    """{text: its token id} of the model's vocabulary, the first id of a text (as
    ``vocab.index``; memoised per model, as ``layout``: every addition reads it)."""
    ids = {}
    for i, text in enumerate(model.vocab):
        ids.setdefault(text, i)
    return ids


@dataclass(frozen=True)
class Field:
    """A run of positions of a sequence that hold the same kind of token."""

    what: str              # "a digit of a", "'+'"
    tokens: FrozenSet[int]  # the token ids it may hold
    count: int
    generated: bool        # written by the model rather than given in the prompt


@lru_cache(maxsize=64)
def layout(model):
    """The model's sequence, field by field, as its prompt (``model.prompt``) lays it out: the
    question's tokens and the operands' N digits each (the prompt), then the answer's digits
    and the stop token if there is one (generated). The one description of the layout that
    ``encode``, ``check_tokens`` and ``answer_length`` read (memoised per model: a model is
    frozen, and every addition reads it). A model with a finite task instead
    (``weights.Task``) is laid out as its task says: its tokens before the input, the input,
    those after it, then the answer's tokens."""
    if model.prompt is None and getattr(model, "task", None) is not None:
        return _task_layout(model)
    p, vocab = model.prompt, model.vocab
    n = digits_of(model)
    digit = frozenset(vocab.index(str(d)) for d in range(10))
    fields = [Field(f"a digit of {item}", digit, n, False) if item in ("a", "b") else
              Field(item if item.startswith("<") else repr(item),
                    frozenset([vocab.index(item)]), 1, False)
              for item in p.question]
    fields.append(Field("a digit of the sum", digit, p.answer_digits, True))
    if p.stop is not None:
        fields.append(Field(repr(p.stop), frozenset([vocab.index(p.stop)]), 1, True))
    return tuple(fields)


def _task_layout(model):
    """The fields of a finite task's sequence (``layout``)."""
    t, vocab = model.task, model.vocab

    def literal(token):
        return Field(token if token.startswith("<") else repr(token),
                     frozenset([vocab.index(token)]), 1, False)
    answer = frozenset(vocab.index(token) for a in t.cases.values() for token in a)
    return tuple([literal(x) for x in t.before] +
                 [Field("the input", frozenset(map(vocab.index, t.cases)), 1, False)] +
                 [literal(x) for x in t.after] +
                 [Field("a token of the answer", frozenset(
                     vocab.index(x) for x in model.unembed.tokens) | answer,
                     len(next(iter(t.cases.values()))), True)])


@lru_cache(maxsize=64)
def answer_length(model):
    """How many tokens the model generates after its prompt: the answer's digits, and its stop
    token if any."""
    return sum(f.count for f in layout(model) if f.generated)


@lru_cache(maxsize=64)
def prompt_length(model):
    """How many tokens the model's prompt has: the question's."""
    return sum(f.count for f in layout(model) if not f.generated)


def describe_layout(model):
    """The layout in words: "<bos>, 10 digits of a, '+', ..., then at most 11 digits of the
    sum"."""
    def part(f):
        if f.count == 1:
            return f.what
        what = f.what.replace("a digit", "digits", 1)
        return f"{'at most ' if f.generated else ''}{f.count} {what}"
    parts = [part(f) for f in layout(model)]
    return ", ".join(parts[:-1]) + ", then " + parts[-1]


def check_tokens(model, tokens):
    """``tokens`` as a list of token ids if it is a prefix of a sequence the model's layout
    can produce (``layout``: <bos>, N digits, '+', N digits, '=', then at most N + 1 digits);
    otherwise TypeError (not token ids) or ValueError saying what was expected, in one line."""
    if isinstance(tokens, (str, bytes)):
        raise TypeError("expected a list of token ids, got text: for an expression use "
                        "parse_expression")
    try:
        tokens = list(tokens)
    except TypeError:
        raise TypeError(f"expected a list of token ids, got {type(tokens).__name__}") from None
    vocab = model.vocab
    for t in tokens:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(vocab):
            raise ValueError(f"{_token_text(t)} is not a token id of this model; use 0 to "
                             f"{len(vocab) - 1} ({', '.join(vocab)})")
    expected = [f for f in layout(model) for _ in range(f.count)]
    wanted = f"a sequence of {model.name} is {describe_layout(model)}"
    if not tokens:
        raise ValueError(f"empty prompt; {wanted}")
    if len(tokens) > len(expected):
        raise ValueError(f"{len(tokens)} tokens, more than the {len(expected)} of a whole "
                         f"sequence; {wanted}")
    for i, (t, field) in enumerate(zip(tokens, expected)):
        if t not in field.tokens:
            raise ValueError(f"token {i} is {vocab[t]!r} where {field.what} belongs; {wanted}")
    return tokens


def _token_text(t):
    """A short text for what stands where a token id should: 5, or 'str '...'' ."""
    if isinstance(t, int) and not isinstance(t, bool):
        return str(t) if abs(t) < 10 ** EXCERPT else f"an int of more than {EXCERPT} digits"
    return f"{type(t).__name__} {excerpt(repr(t))}"


def to_generate(model, tokens):
    """How many tokens complete a checked prefix ``tokens``: the rest of the sum once the
    prompt is whole, else none (before '=' the model's predictions are not part of the
    task)."""
    given = prompt_length(model)
    if len(tokens) < given:
        return 0
    return given + answer_length(model) - len(tokens)


def sequence_length(model):
    """The tokens of a whole addition (or run of a finite task): the prompt and what the
    model writes."""
    return prompt_length(model) + answer_length(model)


def operands(model, tokens):
    """(a, b) read back from a prompt's token ids."""
    p, values, at = model.prompt, {}, 0
    for item in p.question:
        if item in ("a", "b"):
            digits = "".join(model.vocab[t] for t in tokens[at:at + p.digits])
            values[item] = int(digits if p.operands == "msb" else digits[::-1])
            at += p.digits
        else:
            at += 1
    return values["a"], values["b"]


def answer(model, tokens):
    """The sum the model wrote, as an int, read from the tokens after its prompt in the order
    its prompt says; or, if it wrote something else where a digit belongs (or another token
    where its stop token belongs), the text of what it wrote."""
    p, vocab = model.prompt, model.vocab
    start = prompt_length(model)
    written = tokens[start:start + answer_length(model)]
    digits = written[:p.answer_digits]
    stop_ok = p.stop is None or [vocab[t] for t in written[p.answer_digits:]] == [p.stop]
    digit_ids = next(f.tokens for f in layout(model) if f.generated)  # the sum's digits
    if not (digit_ids.issuperset(digits) and stop_ok):
        return "".join(vocab[t] for t in written)
    text = "".join(map(vocab.__getitem__, digits))
    return int(text if p.answer == "msb" else text[::-1])


def sequence_text(model, tokens):
    """The printed addition of a whole sequence (prompt and answer): '0000000012+...=000...46'."""
    return text(*operands(model, tokens), answer(model, tokens), digits_of(model))


def run(model, ns, a, b, *, cache=True):
    """The model's addition a + b as printed: '0000000012+0000000034=00000000046', the sum
    being the model's own digits (for TinyAdder-36 this is its token sequence after <bos>).

    ``ns`` (a number system or its name) runs at the model's precision unless its precision
    was given (``numbers.fit``); a and b are checked (``check_operands``); ``cache=False``
    reruns the whole prefix at every step (AdderBoard's reference loop).
    """
    a, b = check_operands(a, b, digits_of(model))  # the model and the operands first
    tokens = generate(model, for_model(system_of(ns), model), _encode(model, a, b),
                      answer_length(model), cache=cache)
    return text(a, b, answer(model, tokens), model.prompt.digits)


def add(model, ns, a, b):
    """The model's sum of a and b as an int (its digits, not Python's a + b), or the text it
    wrote when that is not a number."""
    prompt = encode(model, a, b)
    tokens = generate(model, for_model(system_of(ns), model), prompt, answer_length(model))
    return answer(model, tokens)
