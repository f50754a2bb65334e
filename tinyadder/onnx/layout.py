"""A layout: what a graph itself cannot say, how a sum becomes token ids and how the answer is
read (docs/onnx.md, "Bring your own model").

A small JSON document: the ``vocab`` and ``prompt`` fields of a model file
(docs/model-format.md: token names in id order; the question as literal tokens and the
operands ``a`` and ``b``, operand and answer digit order, answer length), and ``output``,
how the answer is read: ``"logits"`` (the default: the graph outputs one logit per token on
its last axis, and the next token is the first maximum at the last position) or
``"token_ids"`` (the graph outputs the token ids itself, an ``ArgMax`` or ``ArgMin`` of its
last axis, the first maximum or minimum). For example fblissjr-33's, whose
prompt is a's digits, the separator (id 10), b's digits and the separator again, least
significant digit first::

    {"vocab": ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "SEP"],
     "prompt": {"digits": 10, "question": ["a", "SEP", "b", "SEP"],
                "operands": "lsb", "answer": "lsb", "answer_digits": 11}}

A token that shares a digit's id is that digit: a prompt "a 0 b 0" writes the digit 0 as both
separators.
"""

from dataclasses import dataclass
import json
import os

from .. import modelfile
from .wire import OnnxError

MAX_BYTES = 2 ** 16
FIELDS = ("vocab", "prompt", "output")
OUTPUTS = ("logits", "token_ids")


@dataclass(frozen=True)
class Layout:
    vocab: tuple
    prompt: object  # weights.Prompt
    where: str = "the layout"
    output: str = "logits"  # or "token_ids"


def load(path):
    """The Layout in the JSON file at ``path``; an OnnxError (one line) if it does not read."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as why:
        raise OnnxError(f"layout {where}: cannot read it: {why.strerror or why}") from None
    return loads(data, f"layout {where}")


def loads(text, where="the layout"):
    """The Layout a layout document's text states."""
    if len(text) > MAX_BYTES:
        raise OnnxError(f"{where}: more than {MAX_BYTES:,} bytes; a layout is a small JSON "
                        f"object")
    try:
        data = json.loads(text, object_pairs_hook=modelfile._Object,
                          parse_float=modelfile._Number, parse_int=modelfile._integer,
                          parse_constant=modelfile._Number)
    except (ValueError, RecursionError) as why:
        raise OnnxError(f"{where}: not JSON ({str(why)[:80]}); a layout is a JSON object of "
                        f"{', '.join(FIELDS)}") from None
    if not isinstance(data, dict) or not {"vocab", "prompt"} <= set(data) or \
            not set(data) <= set(FIELDS):
        raise OnnxError(f"{where}: a JSON object of vocab, prompt and optionally output "
                        f"(\"logits\" or \"token_ids\"), nothing else")
    output = data.get("output", "logits")
    if output not in OUTPUTS:
        raise OnnxError(f"{where}: output {ascii(output)[:40]}; tinyadder reads \"logits\" "
                        f"(the next token is the first maximum of the last axis) or "
                        f"\"token_ids\" (the graph ends in ArgMax or ArgMin of it)")
    # the model file's own reader checks the two fields, so a layout means what a file means
    reader = modelfile._Reader()
    try:
        vocab = reader.names_list("vocab", data["vocab"])
        prompt = reader.prompt(data["prompt"])
    except modelfile.ModelFileError as err:
        raise OnnxError(f"{where}: {err}") from None
    for token in prompt.question:
        if token not in vocab and token not in ("a", "b"):
            raise OnnxError(f"{where}: prompt.question names {ascii(token)}, not a token of "
                            f"the vocab")
    return Layout(vocab, prompt, where, output)
