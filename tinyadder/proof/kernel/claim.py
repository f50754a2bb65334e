"""What every verdict is about: the model adds a + b, the whole sum.

Two N-digit numbers add to at most 2·10^N − 2: N + 1 digits, places 0..N. An answer of A ≤ N
digits (``prompt.answer_digits``) never writes place N, and adds (10^N − 1) + 1 wrong.
"Proved" and "every pair is added right" are about the whole sum: the prover, the checkers
and the census read the places through this module.

A verdict is also about one model: the model file text a certificate holds, named by its
sha256 (``named``); the certificate's name is a label, printed quoted. ``differs`` binds a
certificate to a model given apart from it (``check-certificate --model``)."""

import hashlib

from ...modelfile import dump, loads


class Invalid(ValueError):
    """The certificate does not check; the message says where."""


class Malformed(Invalid):
    """The certificate is not a readable one (bad input): a field missing, of the wrong type
    or out of range; the message names it."""


def short_answer(model):
    """None when the answer writes every place of the sum (A ≥ N + 1; places above N are the
    digit 0), else the line that says which it leaves out: places A..N."""
    p = model.prompt
    if p.answer_digits > p.digits:
        return None
    return (f"the answer writes {p.answer_digits} digits (places 0..{p.answer_digits - 1}), "
            f"but a sum of two {p.digits}-digit numbers has {p.digits + 1} (place {p.digits} "
            f"is never written)")


# A verdict names the model it is about by the hash of the model file's text (the name in a
# certificate is a label anyone can edit), and quotes the name with ascii(): a newline or an
# escape sequence in it never reaches a terminal raw.
HASH_CHARS = 16


def model_hash(text):
    """The short form of sha256 of the model file's text (UTF-8): its first HASH_CHARS hex
    digits."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def named(name, text):
    """"'NAME' model (sha256 HASH)": how a verdict names the model of ``text``."""
    return f"{ascii(str(name))} model (sha256 {model_hash(text)})"


def differs(text, model):
    """None when the model file text ``text`` is ``model`` (the same text as its canonical
    dump, or a text that loads to a model of that dump), else the line that says they
    differ, with both hashes."""
    mine = dump(model)
    if text == mine:
        return None
    try:
        if dump(loads(text)) == mine:
            return None
    except ValueError:
        pass
    return (f"it holds the model of sha256 {model_hash(text)}; the given model is sha256 "
            f"{model_hash(mine)}")
