"""Greedy decoding of the models ``codegen`` does not write out (plan rule 9,
``codegen.greedy_general``): the readable pass's functions with the first block per (token,
position), against the readable pass itself, run step by step with its KV cache
(``forward``'s traced code): in the rounding systems every logit bit for bit (``repr``), in
the fraction system the same decided tokens.

By default three models that cover the operations (RoPE with q/k norms and grouped heads,
fixed positions with a linear readout, a fixed attention bias, learned factored positions
with GELU and a divided norm) on two additions each, and lokimorty-39's second block and mix
in float32 and decimal; ``-m slow`` every board model."""

import pytest

from tinyadder import build, number_system
from tinyadder.addition import answer_length, encode
from tinyadder.codegen import decodes_in_general
from tinyadder.forward import KVCache, forward, greedy
from tinyadder.generate import argmax, decode
from tinyadder.models import board_names
from tinyadder.numbers import Undecided, for_model
from tinyadder.plan import compile_model

DEFAULT = ["jacobli99-28", "cosminscn-66", "fblissjr-33", "rezabyt-311", "lokimorty-10"]
# alexlitz-36 is written out by codegen
SLOW = [m for m in board_names() if m not in DEFAULT and m != "alexlitz-36"]
PAIRS = [(7650676663, 149460439), (9999999999, 1)]
ROUNDING = ["float", "float32", "decimal:20"]


def readable(compiled, prompt, n_new):
    """(tokens, logits per step) of the readable pass: forward per step, KV cache on."""
    tokens, steps = list(prompt), []
    out, past = forward(compiled, tokens, KVCache(), logits="last")
    for _ in range(n_new):
        steps.append(out[-1])
        tokens.append(compiled.readout_tokens[argmax(out[-1])])
        out, past = forward(compiled, tokens[-1:], past, logits="last")
    return tokens, steps


def decoded(compiled, prompt, n_new):
    """(tokens, logits per step) of greedy decoding (``forward.greedy``)."""
    steps = []

    def pick(logits):
        steps.append(logits)
        return argmax(logits)
    return greedy(compiled, list(prompt), n_new, pick), steps


def check_rounding(name, spec):
    model = build(name)
    compiled = compile_model(model, for_model(number_system(spec), model))
    assert not compiled.fast and decodes_in_general(compiled)
    for a, b in PAIRS:
        prompt, n = encode(model, a, b), answer_length(model)
        want, want_logits = readable(compiled, prompt, n)
        got, got_logits = decoded(compiled, prompt, n)
        assert got == want
        assert repr(got_logits) == repr(want_logits)


def check_exact(name):
    model = build(name)
    ns = for_model(number_system("fraction"), model)
    for a, b in PAIRS:
        prompt, n = encode(model, a, b), answer_length(model)
        got, decider = decode(model, ns, prompt, n)
        compiled = compile_model(model, decider.decider())
        while True:  # the readable pass over the same enclosures, refined where it must be
            try:
                want, _ = readable(compiled, prompt, n)
                break
            except Undecided:
                compiled = compile_model(model, compiled.ns.refined())
        assert got == want


@pytest.mark.parametrize("spec", ROUNDING)
@pytest.mark.parametrize("name", DEFAULT[:3])
def test_rounding_systems_bit_for_bit(name, spec):
    check_rounding(name, spec)


@pytest.mark.parametrize("name", DEFAULT)
def test_exact_tokens(name):
    check_exact(name)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ROUNDING)
@pytest.mark.parametrize("name", DEFAULT[3:] + SLOW)
def test_rounding_systems_bit_for_bit_every_model(name, spec):
    check_rounding(name, spec)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_exact_tokens_every_model(name):
    check_exact(name)


def test_a_tiny_term_is_not_expanded():
    """jacobli99-28's scores are 1e8 apart: at its answer positions most e^(s - m) lie below
    e^-T and are bounded, not computed (the exponentials taken stay few)."""
    model = build("jacobli99-28")
    ns = for_model(number_system("fraction"), model).decider()
    compiled = compile_model(model, ns)
    calls = []
    exp = ns.exp
    try:
        ns.exp = lambda x: calls.append(x) or exp(x)
        greedy(compiled, encode(model, 1234567890, 987654321), answer_length(model), argmax)
    finally:
        del ns.exp
    positions = answer_length(model) * len(model.blocks[0].attn.heads)
    assert len(calls) < 3 * positions


@pytest.mark.parametrize("spec", ["float32", "decimal:20"])
def test_two_blocks_and_a_mix_bit_for_bit(spec):
    """lokimorty-39: a second block (the first applied again, its rows a function of the
    prefix) and the mix of the two."""
    check_rounding("lokimorty-39", spec)  # its exact tokens: -m slow, with every board model


def test_a_float32_sum_without_its_zeros_is_the_sum_with_them():
    """``codegen._single_sum``, which leaves the zeros of a softmax row out, against the sum
    left to right with every term, rounded to single after each add (``repr``: -0.0 is not
    0.0): seeded lists of zeros of both signs, singles, infinities and NaNs."""
    import array
    import math
    import random
    from tinyadder.codegen import _single_sum

    def every_term(terms):
        R, acc = array.array("f", [0.0]), None
        for x in terms:
            R[0] = x if acc is None else acc + x
            acc = R[0]
        return acc

    rng = random.Random(37)
    kinds = array.array("f", [0.0, -0.0, 0.0, -0.0, 1.5, -1.5, 2.0 ** -149, 3.0e38, math.inf,
                              -math.inf, math.nan]).tolist()
    R = array.array("f", [0.0])
    for _ in range(3000):
        terms = [rng.choice(kinds) for _ in range(rng.randint(0, 6))]
        R[0] = rng.uniform(-2, 2)
        terms[rng.randrange(len(terms) + 1):0] = [R[0]] * rng.randint(0, 1)
        assert repr(_single_sum(terms, R)) == repr(every_term(terms)), terms
    assert repr(_single_sum([-0.0, -0.0], R)) == "-0.0"
    assert repr(_single_sum([-0.0, 0.0, -0.0], R)) == "0.0"
    assert _single_sum([], R) is None
