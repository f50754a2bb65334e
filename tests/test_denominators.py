"""Plan rule 8: where a carried head's exp(q k) is one constant e, its softmax1 denominator
D_i = r D_(i-1) + e does not depend on the tokens, and greedy decoding looks 1 + D_i up by
position (``codegen._Denominators``). Each entry must be the traced pass's 1 + D_i bit for
bit, also where the rounding of the sums makes D_i differ from (i + 1) e; where e depends on
the position (a key with weights), the rule must not apply."""

import random

import pytest

from tinyadder.addition import encode
from tinyadder.codegen import _Denominators, decoder_source
from tinyadder.construction import build
from tinyadder.forward import forward
from tinyadder.generate import argmax, generate
from tinyadder.numbers import number_system
from tinyadder.plan import compile_model
from tinyadder.weights import with_entry

from test_one_pass import random_model


def _tables(compiled):
    """{name: table} of the decoder's tables of 1 + D by position."""
    env = decoder_source(compiled)[1]
    return {name: value for name, value in env.items() if isinstance(value, _Denominators)}


def _traced_sums(compiled, tokens):
    """{(block, head): [D_i, ...]} of the traced pass's carried heads, from its KV cache."""
    _, cache = forward(compiled, tokens, record=lambda name, value: None)
    return {(i, h): [d for _, d in sums] for i, layer in enumerate(cache.layers)
            for h, sums in layer.sums.items()}


@pytest.mark.parametrize("spec", ["float", pytest.param("decimal:16", marks=pytest.mark.slow),
                                  "decimal:5"])
def test_each_entry_is_the_traced_denominator_bit_for_bit(spec):
    """On seeded random models (later blocks' keys have no weights: e is a constant there,
    often not 1, and slopes ln b decay the sums), 60 positions each. (The single-precision
    and integer code keep D: their writers bind e their own way.)"""
    rng = random.Random(41)
    ns = number_system(spec)
    decayed = rounded = 0  # tables with a decay; without one, where D_i is not (i + 1) e
    for _ in range(40):
        model = random_model(rng)
        compiled = compile_model(model, ns)
        found = _tables(compiled)
        if not found:
            continue
        tokens = [rng.randrange(len(model.vocab)) for _ in range(60)]
        traced = _traced_sums(compiled, tokens)
        for name, table in found.items():
            i, head = name[1:].split("_den_")
            h = model.blocks[int(i)].attn.heads.index(head)
            assert compiled.blocks[int(i)].heads[h].exp_qk is not None
            table.upto(len(tokens))
            with ns.arithmetic():
                want = [repr(ns.one + d) for d in traced[int(i), h]]
                naive = [repr(ns.one + (p + 1) * table.e) for p in range(len(tokens))]
            assert [repr(x) for x in table[:len(tokens)]] == want
            decayed += table.decay is not None
            rounded += table.decay is None and naive != want
    assert decayed >= 10 and rounded >= 5


def test_published_layer_1_looks_its_denominator_up():
    """Layer 1's key is 0 (e = 1): its D is looked up, its N carried; layer 0's heads, whose
    keys read the token, are the first block's state (rule 6)."""
    compiled = compile_model(build("published", 10), number_system("decimal"))
    text = decoder_source(compiled)[0]
    assert "L1_z_h0 = L1_n_h0 / L1_den_h0[pos]" in text and "L1_d_h0" not in text
    assert list(_tables(compiled)) == ["L1_den_h0"]


@pytest.mark.parametrize("spec", ["float", "decimal:16"])
def test_a_head_whose_e_moves_keeps_its_denominator(spec):
    """A query bias and a key weight make layer 1's e = exp(q k) depend on the position: its D
    depends on the tokens, so the decoder carries it (no table), and decodes the traced pass's
    tokens."""
    base = build("published", 3)
    model = with_entry(with_entry(base, "blocks.1.attn.b_Q", ("h0",), 1),
                       "blocks.1.attn.W_K", ("digit", "h0"), 1)
    ns = number_system(spec)
    compiled = compile_model(model, ns)
    assert compiled.blocks[1].heads[0].carried and compiled.blocks[1].heads[0].exp_qk is None
    assert not _tables(compiled) and "L1_d_h0" in decoder_source(compiled)[0]
    sums = [_traced_sums(compiled, [t, t, t])[1, 0] for t in (0, 5)]
    assert sums[0] != sums[1]  # the same positions, other tokens: other denominators
    tokens = encode(model, 123, 456)
    got = generate(model, ns, tokens, 4)
    for _ in range(4):
        logits, _ = forward(compiled, tokens, record=lambda name, value: None)
        tokens = tokens + [compiled.readout_tokens[argmax(logits[-1])]]
    assert got == tokens
