"""The addition task: expressions, prompts and answers. The model itself knows none of this.

The operand length N is the model's (``model.meta["digits"]``): a model built for N digits
reads ``<bos>``, a and b zero-padded to N digits, ``=`` and writes the N + 1 digits of the sum.
"""

import re

from .construction import DIGITS
from .generate import generate
from .numbers import for_model

EXPRESSION_HELP = "two non-negative integers of at most {n} ASCII digits joined by '+', e.g. 12+34"
_EXPRESSION = re.compile(r"\s*([0-9]*)\s*\+\s*([0-9]*)\s*")


class InputError(ValueError):
    """An expression the adder does not accept; the message says what is wrong and what is."""


def parse_expression(text, digits=DIGITS):
    """``'12 + 34'`` -> ``(12, 34)``; raise InputError naming the problem otherwise."""
    accepted = EXPRESSION_HELP.format(n=digits)
    stripped = text.strip()
    if not stripped:
        raise InputError(f"empty expression; expected {accepted}")
    if any(ch.isdigit() and not ("0" <= ch <= "9") for ch in stripped):
        raise InputError(f"non-ASCII digits in {stripped!r}; expected {accepted}")
    if stripped.count("+") > 1:
        raise InputError(f"more than two operands in {stripped!r}; expected {accepted}")
    if "-" in stripped:
        raise InputError(f"signs are not accepted in {stripped!r}; expected {accepted}")
    match = _EXPRESSION.fullmatch(stripped)
    if not match:
        raise InputError(f"not an addition: {stripped!r}; expected {accepted}")
    a, b = match.groups()
    if not a or not b:
        raise InputError(f"missing operand in {stripped!r}; expected {accepted}")
    for operand in (a, b):
        if len(operand.lstrip("0")) > digits:
            raise InputError(f"operand {operand} has more than {digits} digits; "
                             f"expected {accepted}")
    return int(a), int(b)


def digits_of(model):
    """The operand length N the model was built for (10 if it does not say)."""
    return model.meta.get("digits", DIGITS)


def prompt(a, b, digits=DIGITS):
    """The prompt text: '<bos>' is implied; operands zero-padded, then '='."""
    return f"{a:0{digits}d}+{b:0{digits}d}="


def encode(model, a, b):
    """Token ids of ``<bos> a + b =`` with operands padded to the model's N digits."""
    text = prompt(a, b, digits_of(model))
    return [model.vocab.index("<bos>")] + [model.vocab.index(ch) for ch in text]


def sequence_text(model, tokens):
    """The printed sequence: the tokens after <bos>, e.g. '0000000012+0000000034=000...46'."""
    return "".join(model.vocab[t] for t in tokens[1:])


def run(model, ns, a, b, cache=True, reference=False):
    """The model's sequence for a + b, as text without <bos>: '0000000012+0000000034=000...46'.

    ``ns`` runs at the model's precision unless its precision was given (``numbers.fit``);
    ``reference`` changes nothing (kept for compatibility: there is one forward pass).
    """
    tokens = generate(model, for_model(ns, model), encode(model, a, b), digits_of(model) + 1,
                      cache=cache, reference=reference)
    return sequence_text(model, tokens)


def add(model, ns, a, b, reference=False):
    """The model's sum of a and b as an int (its digits, not Python's a + b)."""
    return int(run(model, ns, a, b, reference=reference).split("=")[1])
