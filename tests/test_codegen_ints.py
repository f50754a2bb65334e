"""The integer decoder's rules 7 and 10 (``codegen._Ints.opposite``, ``codegen._common_term``):
the decided tokens are the interval pass's, on models where the rules fire (a pair whose posts
go out alike merged into one name, and one whose posts do not)."""

from dataclasses import replace
import random

from tinyadder import build
from tinyadder.codegen import decoder_source
from tinyadder.forward import forward
from tinyadder.generate import _runner, decode
from tinyadder.numbers import FractionSystem, Undecided
from tinyadder.numbers.scaled import ScaledSystem
from tinyadder.plan import compile_model
from tinyadder.weights import Model

from test_one_pass import random_model


def _interval_tokens(model, prompt, n_new):
    """The tokens decided over ``numbers.enclosures`` with no integer code, refined as
    decoding refines."""
    ns = FractionSystem().decider()
    while True:
        try:
            return decode(model, ns, prompt, n_new)[0]
        except Undecided:
            ns = ns.refined()


def _with_rules(model, rng):
    """``model`` with its last block's readout slots all given one broadcast head (the same
    W_O column and bias: rule 10) and two units whose gates are k x and -k x with integer
    constant up maps (rule 7 on ints), k of either sign."""
    last = model.blocks[-1]
    attn, mlp = last.attn, last.mlp
    inp = model.slots[:last.width_in]
    head, w = attn.heads[0], rng.choice([1, 2, -3])
    k, x = rng.choice([-5, -1, 2, 7]), rng.choice(inp)
    read = sorted(set(model.unembed.slots.values()))
    out = [rng.choice(read), rng.choice(read)]
    attn = replace(attn, W_O={head: {s: w for s in inp}}, b_O={s: 1 for s in inp})
    units = mlp.units + ("p", "m")
    W_gate = {s: dict(row) for s, row in mlp.W_gate.items()}
    W_gate.setdefault(x, {}).update(p=k, m=-k)
    W_out = dict(mlp.W_out, p={out[0]: 1}, m={out[1]: rng.choice([1, 1, -2])})
    mlp = replace(mlp, units=units, W_gate=W_gate, b_in=dict(mlp.b_in, p=rng.choice([3, -4]),
                                                              m=rng.choice([5, -1])),
                  W_out=W_out)
    return replace(model, blocks=model.blocks[:-1] + (replace(last, attn=attn, mlp=mlp),))


def test_the_published_decoder_takes_both_rules():
    """TinyAdder-36's layer-1 pairs are decided on their slot's ends, and the broadcast z is
    not added to the readout's slots (but still to the candidates the gates read)."""
    model = build("published")
    text, _ = decoder_source(_runner(model, FractionSystem(), None))
    answer = text.split("for pos in range(len(tokens) - 1, ")[1]
    assert "if L1_attn_cand3_lo > 0:" in answer and "elif L1_attn_cand3_hi < 0:" in answer
    assert "g_lo, g_hi = L1_W_gate" not in answer
    assert "L1_attn_eq_lo" not in answer and "L1_attn_cand0_lo = " not in answer
    assert "L1_attn_cand0_lo, L1_attn_cand0_hi = L0_mlp_cand0_lo + L1_z_h0_lo" in answer
    assert "L1_mlp_eq_lo, L1_mlp_eq_hi = eq_lo + " in answer


def test_random_models_with_both_rules_decide_the_intervals_tokens():
    """Seeded random models with a broadcast head and an opposite pair in their last block:
    the integer decoder's tokens are those of the interval pass, and the integer step code's
    logits hold the fraction system's."""
    rng = random.Random(37)
    fired = merged = 0
    for _ in range(24):
        model = _with_rules(random_model(rng), rng)
        assert isinstance(model, Model)
        compiled = _runner(model, FractionSystem(), None)
        if not compiled.fast:
            continue
        text, _ = decoder_source(compiled)
        fired += "_factor * " in text
        merged += "_factor * " in text and "_post_m_lo, " not in text
        prompt = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 5))]
        try:
            want = _interval_tokens(model, prompt, 3)
        except Undecided:
            continue
        assert decode(model, FractionSystem(), prompt, 3)[0] == want
        try:  # the step code's logits (rule 7, no rule 10) hold the exact ones
            box, _ = forward(compile_model(model, ScaledSystem(50)), prompt)
        except Undecided:
            continue
        exact, _ = forward(compile_model(model, FractionSystem(50)), prompt)
        assert all(b.contains(x) for brow, xrow in zip(box, exact) for b, x in zip(brow, xrow))
    assert fired >= 20 and 5 <= merged <= fired - 5
