"""A finite task: what a model that does not add computes, over the inputs its file lists.

A model file's ``task`` (``weights.Task``) gives the prompt around one input token and, for
each input, the tokens the model should write (seed 003's lookup machine: ``<bos> A`` ->
``0 3``). Its sequences are laid out by ``addition.layout`` like an addition's, so that the
tracer, the stepper and the trace's JSON read them; this module is the rest: an input read
from the command line, its prompt, the model's answer and the line that shows it.

>>> from tinyadder import build
>>> m = build("seed003-lookup")
>>> inputs(m), run(m, "fraction", "A")
(('A', 'B', 'C'), 'A -> 03')
>>> parse_input(m, "D")
Traceback (most recent call last):
    ...
tinyadder.addition.InputError: 'D' is not an input of seed003-lookup; use A, B or C
"""

from .addition import InputError, answer_length, excerpt, system_of
from .generate import generate
from .numbers import for_model


def has_task(model):
    """Whether ``model`` declares a finite task (and has no addition prompt)."""
    return getattr(model, "task", None) is not None


def inputs(model):
    """The task's inputs, in the file's order."""
    return tuple(model.task.cases)


def listing(model):
    """'A, B or C': the inputs, as a message names them."""
    xs = inputs(model)
    return xs[0] if len(xs) == 1 else f"{', '.join(xs[:-1])} or {xs[-1]}"


def parse_input(model, text):
    """``text`` (spaces around it ignored) if it is one of the task's inputs; otherwise
    InputError naming them."""
    if not isinstance(text, str):
        raise TypeError(f"an input is text such as {inputs(model)[0]!r}, got "
                        f"{type(text).__name__}")
    x = text.strip()
    if x not in model.task.cases:
        raise InputError(f"{excerpt(x)} is not an input of {model.name}; use {listing(model)}")
    return x


def encode(model, x):
    """Token ids of the prompt for input ``x``: ``before``, x, ``after``."""
    t = model.task
    return [model.vocab.index(token) for token in t.before + (x,) + t.after]


def expected(model, x):
    """The answer the task gives input ``x``, as text: '03'."""
    return "".join(model.task.cases[x])


def answer(model, tokens):
    """The tokens the model wrote after the prompt, as text ('03')."""
    start = len(model.task.before) + 1 + len(model.task.after)
    return "".join(model.vocab[t] for t in tokens[start:start + answer_length(model)])


def line(x, written):
    """The printed run: 'A -> 03'."""
    return f"{x} -> {written}"


def sequence_text(model, tokens):
    """The printed run of a whole sequence: its input and what the model wrote."""
    return line(model.vocab[tokens[len(model.task.before)]], answer(model, tokens))


def write(model, ns, x):
    """What the model writes for input ``x`` (checked: ``parse_input``), as text."""
    x = parse_input(model, x)
    tokens = generate(model, for_model(system_of(ns), model), encode(model, x),
                      answer_length(model))
    return answer(model, tokens)


def run(model, ns, x):
    """The model's run on input ``x`` as printed: 'A -> 03' (its own tokens)."""
    return line(parse_input(model, x), write(model, ns, x))
