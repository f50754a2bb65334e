"""The one forward pass against the textbook oracle (tests/oracle.py), exactly, in the fraction
system: both models at every N in 1..12, a toy model that exercises every path, and seeded
random models, fed whole and in chunks, traced and untraced. The default run takes N in
(1, 2, 3, 10) published, (1, 4, 10) repaired and the first models of each random stream; slow
adds the other N and hundreds more models."""

from dataclasses import replace
from fractions import Fraction
import random

import pytest

from tinyadder.addition import encode
from tinyadder.cases import random_pairs
from tinyadder.construction import SLOTS, build
from tinyadder.forward import KVCache, forward
from tinyadder.plan import compile_model
from tinyadder.generate import argmax, generate
from tinyadder.numbers import FloatSystem, FractionSystem, Ln, exp_of
from tinyadder.weights import MLP, Attention, Block, Model, negative_error

import oracle


def traced(model, ns, tokens, chunks=None):
    """Every trace point of the one pass, the call split at ``chunks`` (positions), joined."""
    compiled, past, values = compile_model(model, ns), KVCache(), {}
    bounds = [0, *(chunks or []), len(tokens)]
    for start, stop in zip(bounds, bounds[1:]):
        got = {}
        _, past = forward(compiled, tokens[start:stop], past, record=got.__setitem__)
        for name, value in got.items():
            if name.endswith(("hook_attn_scores", "hook_pattern")):  # [head][n][t]
                old = values.setdefault(name, [[] for _ in value])
                for h, rows in enumerate(value):
                    old[h] += [row + [None] * (len(tokens) - len(row)) for row in rows]
            else:
                values.setdefault(name, []).extend(value)
    return values


def assert_same(want, got):
    assert sorted(want) == sorted(got)
    for name in want:
        assert got[name] == want[name], name


def mixed(model, ns, tokens, chunks, want):
    """Calls alternate between untraced (liveness on) and traced, sharing one KV cache: each
    traced call records the oracle's values at its positions."""
    compiled, past = compile_model(model, ns), KVCache()
    bounds = [0, *chunks, len(tokens)]
    for k, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        if k % 2:
            got = {}
            _, past = forward(compiled, tokens[start:stop], past, record=got.__setitem__)
            for name in ("blocks.0.hook_resid_post", "blocks.0.attn.hook_z", "unembed.hook_out"):
                assert got[name] == want[name][start:stop], name
        else:
            logits, past = forward(compiled, tokens[start:stop], past, logits="last")
            assert logits == [want["unembed.hook_out"][stop - 1]]


def untraced_logits(model, ns, tokens, chunks):
    """The last logits of each call, with liveness on (only what later positions read)."""
    compiled, past, out = compile_model(model, ns), KVCache(), []
    bounds = [0, *chunks, len(tokens)]
    for start, stop in zip(bounds, bounds[1:]):
        logits, past = forward(compiled, tokens[start:stop], past, logits="last")
        out += logits
    return out


QUICK = {("published", n) for n in (1, 2, 3, 10)} | {("repaired", n) for n in (1, 4)}


@pytest.mark.parametrize("variant, digits", [
    pytest.param(v, n, marks=() if (v, n) in QUICK else pytest.mark.slow)
    for v in ("published", "repaired") for n in range(1, 13)])
def test_tinyadder_every_n_equals_the_oracle(variant, digits):
    ns = FractionSystem()
    model = build(variant, digits)
    (a, b), = random_pairs(1, digits=digits)
    prompt = encode(model, a, b)
    tokens = generate(model, ns, prompt, digits + 1)
    want = oracle.run(model, ns, tokens)
    assert_same(want, traced(model, ns, tokens, [len(prompt) - 1, len(prompt) + 2]))
    # the tokens are the oracle's argmaxes; untraced step-by-step logits are the oracle's
    readout = compile_model(model, ns).readout_tokens
    steps = list(range(len(prompt), len(tokens)))
    assert tokens[len(prompt):] == [readout[argmax(want["unembed.hook_out"][p - 1])]
                                    for p in steps]
    assert untraced_logits(model, ns, tokens, steps) == [
        want["unembed.hook_out"][p - 1] for p in steps + [len(tokens)]]


def toy_model():
    """Three blocks that exercise every path: a query that depends on the position, a slope
    that is not ln b, a dead head, a head with no output, a dead unit, biases, an e^x weight,
    carried heads with varying keys after the first block."""
    vocab = ("a", "b", "c")
    slots = ("x", "y", "z", "w")
    heads = ("p", "q", "r", "dead", "mute")
    attn = Attention(
        heads=heads,
        W_Q={"x": {"p": Fraction(1, 3)}}, b_Q={"p": 1, "q": 2, "r": Fraction(-1, 2), "mute": 1},
        W_K={"x": {"p": 1, "q": Fraction(1, 2)}, "y": {"r": -1, "mute": 1}}, b_K={"q": -1},
        W_V={"y": {"p": 3, "q": 1, "mute": 1}, "x": {"r": exp_of(-2) * 5}}, b_V={"r": 1},
        W_O={"p": {"z": 1}, "q": {"x": 2, "w": -1}, "r": {"y": 1}, "dead": {"x": 5}},
        b_O={"w": Fraction(1, 4)},
        slopes={"p": Ln(Fraction(10)), "q": Fraction(1, 2), "r": Ln(Fraction(2))})
    mlp = MLP(units=("u", "v", "off"),
              W_gate={"x": {"u": 1, "v": -2}, "z": {"off": 1}}, b_gate={"u": Fraction(-1, 5)},
              W_in={"y": {"u": 2}, "w": {"v": 1}}, b_in={"v": 3},
              W_out={"u": {"x": Fraction(1, 10), "z": Fraction(1, 20)}, "v": {"y": -1}},
              b_out={"x": Fraction(1, 10)})
    late = Attention(heads=("s",), b_Q={"s": 1}, W_K={"z": {"s": 1}}, W_V={"w": {"s": 2}},
                     W_O={"s": {"x": 1, "y": 1}}, slopes={"s": Ln(Fraction(3))})
    return Model(name="toy", vocab=vocab, slots=slots, width_embed=4,
                 W_E={"a": {"x": 1, "y": 2}, "b": {"y": -1, "w": 1}, "c": {"z": Fraction(1, 2)}},
                 blocks=(Block(attn, mlp, 4, 4), Block(late, mlp, 4, 4), Block(attn, mlp, 4, 4)),
                 unembed=negative_error({"a": "x", "b": "y", "c": "z"}))


def test_rules_detected_from_the_weights(published):
    compiled = compile_model(published, FractionSystem())
    layer0, layer1 = compiled.blocks
    # rule 2: heads 0-2 have no value; 3 and 4 remain
    assert layer0.live == (3, 4) and layer1.live == (0,)
    # rule 1: both have a constant query; slope ln 10 decays by exactly 1/10, slope 0 not at all
    assert [h.carried for h in layer0.heads] == [False, False, False, True, True]
    assert layer0.heads[3].decay == Fraction(1, 10) and layer0.heads[4].decay is None
    assert layer1.heads[0].carried and layer1.heads[0].exp_qk == 1  # q = k = 0
    # rule 3: before the last position, layer 1 only takes in keys and values, and layer 0
    # needs only the count head and the unit that writes digit_pos (layer 1 reads it)
    assert layer1.prefix_units == () and layer1.prefix_heads == ()
    assert layer0.prefix_heads == (3,) and layer0.prefix_post == (SLOTS.index("digit_pos"),)
    assert layer0.prefix_units == (10,)
    # at a position with logits, layer 1's head broadcasts into every slot but digit_pos,
    # which nothing after it reads there (layer 1's value reads layer 0's digit_pos)
    digit_pos = SLOTS.index("digit_pos")
    assert digit_pos in layer1.attn_writes and digit_pos not in layer1.logits_mid
    assert set(layer1.logits_mid) == set(layer1.attn_writes) - {digit_pos}
    assert layer1.logits_units == layer1.units and layer0.logits_units == layer0.units
    # rule 4: layer 0's keys and values per token id (filled as tokens are seen)
    assert isinstance(layer0.token_kv, dict) and layer1.token_kv is None
    # rule 6: layer 0's live heads are both carried: decoding records it per state and token
    assert layer0.memoised and not layer1.memoised
    from tinyadder.weights import with_entry
    moving = with_entry(published, "blocks.0.attn.W_Q", ("digit", "h3"), Fraction(1, 1000))
    assert not compile_model(moving, compiled.ns).blocks[0].memoised
    # and the second block's keys and values, functions of the first block's outputs, are
    # recorded with them: computed inside the lookup's miss branch only
    from tinyadder.codegen import decoder_source
    decoder = decoder_source(compile_model(published, FloatSystem()))[0]
    assert "\n            L1_v_h0 = " in decoder and "\n        L1_v_h0 = " not in decoder
    assert "L1_v_h0, L1_ev_h0,))" in decoder
    # rule 5: in an exact system the ten candidates (gate: scale; up: P_u count) share the
    # product scale * count; a rounding system keeps g * (P_u count)
    from tinyadder.codegen import source
    exact_source = source(compiled)[0]
    rounded_source = source(compile_model(published, FloatSystem()))[0]
    assert exact_source.count("t = g * L0_attn_count") == 2  # the candidates' and digit_pos's
    assert exact_source.count("* t\n") == 11
    assert "t = g" not in rounded_source
    # rule 7: in a rounding system layer 1's pairs of units with gates W x and -W x take one
    # gate each: 11 gates in layer 0, 10 for layer 1's 20 units, the second of a pair -g
    assert rounded_source.count("if g > zero") == 21 == 11 + rounded_source.count("elif g < zero")
    # the second unit's up map is a constant c: its post (-g) c is written g (-c)
    assert rounded_source.count("_minus = g * L1_b_in_cand") == 10 and "(-g)" not in rounded_source
    assert "_minus * L1_attn" not in rounded_source
    assert "elif" not in exact_source  # the fraction system computes each unit's gate
    toy = compile_model(toy_model(), FractionSystem())
    assert [[h.carried for h in b.heads] for b in toy.blocks] == [
        [False, False, True, False, False], [True], [False, False, True, False, False]]
    assert [b.units for b in toy.blocks] == [(0, 1)] * 3  # 'off' writes nothing


def test_toy_model_whole_and_in_chunks():
    model, ns = toy_model(), FractionSystem()
    tokens = [0, 2, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2]
    want = oracle.run(model, ns, tokens)
    assert_same(want, traced(model, ns, tokens))
    assert_same(want, traced(model, ns, tokens, [1, 5, 6]))
    chunks = [5, 6]
    assert untraced_logits(model, ns, tokens, chunks) == [want["unembed.hook_out"][p - 1]
                                                          for p in chunks + [len(tokens)]]
    mixed(model, ns, tokens, [1, 5, 6, 9], want)


def _table(rng, sources, targets, density):
    table = {}
    for s in sources:
        for t in targets:
            if rng.random() < density:
                table.setdefault(s, {})[t] = _value(rng)
    return table


def _bias(rng, targets, density):
    return _table(rng, [0], targets, density).get(0, {})


def _value(rng):
    if rng.random() < 0.05:
        return exp_of(Fraction(rng.randint(-6, 6), rng.randint(1, 3))) * rng.randint(1, 3)
    return Fraction(rng.randint(-4, 4), rng.randint(1, 4)) or Fraction(1)


def random_model(rng):
    """A random sparse model: 1-3 blocks of 1-3 heads and 1-4 units, widening streams,
    slopes 0, ln b or (rarely) rational, queries with and without weights."""
    vocab = tuple(f"t{i}" for i in range(rng.randint(2, 5)))
    widths = [rng.randint(1, 4)]
    for _ in range(rng.randint(1, 3)):
        widths.append(widths[-1] + rng.randint(0, 2))
    slots = tuple(f"s{i}" for i in range(widths[-1]))
    blocks = []
    for w_in, w_out in zip(widths, widths[1:]):
        inp, wide = slots[:w_in], slots[:w_out]
        # queries and keys read the stream in the first block only: later streams hold
        # values with long denominators, whose exponentials would be slow to round
        qk = inp if not blocks else ()
        heads = tuple(f"h{i}" for i in range(rng.randint(1, 3)))
        units = tuple(f"u{i}" for i in range(rng.randint(1, 4)))
        slopes = {}
        for h in heads:
            kind = rng.random()
            if kind < 0.45:
                slopes[h] = Ln(Fraction(rng.randint(2, 10)))
            elif kind < 0.55:
                slopes[h] = Fraction(rng.randint(1, 3), 2)
        attn = Attention(
            heads=heads,
            W_Q=_table(rng, qk, heads, 0.15), b_Q=_bias(rng, heads, 0.7),
            W_K=_table(rng, qk, heads, 0.4), b_K=_bias(rng, heads, 0.5),
            W_V=_table(rng, inp, heads, 0.4), b_V=_bias(rng, heads, 0.3),
            W_O=_table(rng, heads, inp, 0.5), b_O=_bias(rng, inp, 0.2),
            slopes=slopes)
        mlp = MLP(units=units,
                  W_gate=_table(rng, inp, units, 0.5), b_gate=_bias(rng, units, 0.4),
                  W_in=_table(rng, inp, units, 0.5), b_in=_bias(rng, units, 0.4),
                  W_out=_table(rng, units, wide, 0.4), b_out=_bias(rng, wide, 0.2))
        blocks.append(Block(attn, mlp, w_in, w_out))
    readout = {t: rng.choice(slots) for t in vocab if rng.random() < 0.8} or {vocab[0]: slots[0]}
    return Model(name="random", vocab=vocab, slots=slots, width_embed=widths[0],
                 W_E=_table(rng, vocab, slots[:widths[0]], 0.6), blocks=tuple(blocks),
                 unembed=negative_error(readout))


@pytest.mark.parametrize("count", [50, pytest.param(200, marks=pytest.mark.slow)])
def test_random_models_equal_the_oracle(count):
    """The first ``count`` models of one seeded stream: 50 by default, 200 under slow."""
    rng = random.Random(13)
    ns = FractionSystem()
    for _ in range(count):
        model = random_model(rng)
        tokens = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 8))]
        want = oracle.run(model, ns, tokens)
        chunks = sorted(rng.sample(range(1, len(tokens)), rng.randint(0, len(tokens) - 1)))
        assert_same(want, traced(model, ns, tokens, chunks))
        assert untraced_logits(model, ns, tokens, chunks) == [
            want["unembed.hook_out"][p - 1] for p in chunks + [len(tokens)]]
        mixed(model, ns, tokens, chunks, want)


@pytest.mark.parametrize("name, keys, value", [
    ("blocks.0.attn.slopes", ("h3",), Fraction(23, 10)),       # slope not ln b: not carried
    ("blocks.0.attn.W_Q", ("digit", "h3"), Fraction(1, 1000)),  # query moves: not carried
    ("blocks.1.attn.W_O", ("h0", "count"), 0),                  # a broadcast target dropped
    ("blocks.0.attn.W_V", ("eq", "h1"), 1),                     # a dead head comes alive
])
def test_a_changed_weight_changes_the_plan_and_still_equals_the_oracle(name, keys, value):
    from tinyadder.weights import with_entry
    ns = FractionSystem()
    base = build("published", 1)
    model = with_entry(base, name, keys, value)
    def plan(m):  # per block: which heads are carried and live, which slots attention writes
        return [([(h.carried, j in b.live) for j, h in enumerate(b.heads)], b.attn_writes)
                for b in compile_model(m, ns).blocks]
    assert plan(model) != plan(base)
    prompt = encode(model, 4, 7)
    tokens = generate(model, ns, prompt, 2)
    want = oracle.run(model, ns, tokens)
    assert_same(want, traced(model, ns, tokens, [len(prompt) - 1]))
    steps = list(range(len(prompt), len(tokens)))
    assert untraced_logits(model, ns, tokens, steps) == [
        want["unembed.hook_out"][p - 1] for p in steps + [len(tokens)]]
    assert want["unembed.hook_out"] != oracle.run(base, ns, tokens)["unembed.hook_out"]


def _bits(rows):
    """Values as their exact text: repr tells -0.0 from 0.0 and shows a Decimal's digits."""
    return [[repr(x) for x in row] for row in rows]


@pytest.mark.parametrize("count", [30, pytest.param(100, marks=pytest.mark.slow)])
@pytest.mark.parametrize("spec", ["float", "float32", "decimal:16"])
def test_random_models_traced_equal_generated_code_in_rounding_systems(spec, count):
    """In a rounding system the pass's order of operations is the model's definition: the
    generated code (codegen) must give the traced pass's logits bit for bit, whole, in chunks
    and position by position. The first ``count`` models of one seeded stream: 30 by
    default, 100 under slow."""
    from tinyadder.numbers import number_system
    rng = random.Random(29)
    ns = number_system(spec)
    for _ in range(count):
        model = random_model(rng)
        tokens = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 8))]
        compiled, got = compile_model(model, ns), {}
        forward(compiled, tokens, record=got.__setitem__)
        want = _bits(got["unembed.hook_out"])
        assert _bits(forward(compiled, tokens)[0]) == want
        chunks = sorted(rng.sample(range(1, len(tokens)), rng.randint(0, len(tokens) - 1)))
        assert _bits(untraced_logits(model, ns, tokens, chunks)) == [
            want[p - 1] for p in chunks + [len(tokens)]]
        one_by_one = list(range(1, len(tokens)))
        assert _bits(untraced_logits(model, ns, tokens, one_by_one)) == want


def opposite_gates(model):
    """The model with unit 1's gate in every block of two units or more replaced by the
    negation of unit 0's (weights and bias): a pair for plan rule 7."""
    blocks = []
    for b in model.blocks:
        m = b.mlp
        if len(m.units) >= 2:
            u0, u1 = m.units[:2]
            gate = {s: {t: w for t, w in row.items() if t != u1} for s, row in m.W_gate.items()}
            for s, row in m.W_gate.items():
                if u0 in row:
                    gate[s][u1] = -row[u0]
            bias = {t: w for t, w in m.b_gate.items() if t != u1}
            if u0 in m.b_gate:
                bias[u1] = -m.b_gate[u0]
            m = MLP(units=m.units, W_gate=gate, b_gate=bias, W_in=m.W_in, b_in=m.b_in,
                    W_out=m.W_out, b_out=m.b_out)
        blocks.append(Block(b.attn, m, b.width_in, b.width_out))
    return replace(model, blocks=tuple(blocks))


@pytest.mark.parametrize("spec", ["float", "decimal:16"])
def test_units_with_opposite_gates_give_the_traced_pass_bit_for_bit(spec):
    """Rule 7: the second unit of a pair takes -g for its gate; its posts, and so the logits,
    are the traced pass's to the bit, on random models whose unit pairs have opposite gates
    (some gates all zero, some with a bias)."""
    from tinyadder.codegen import source
    from tinyadder.numbers import number_system
    rng = random.Random(37)
    ns = number_system(spec)
    paired = 0
    for _ in range(60):
        model = opposite_gates(random_model(rng))
        tokens = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 8))]
        compiled, got = compile_model(model, ns), {}
        paired += source(compiled)[0].count("elif g < zero")
        forward(compiled, tokens, record=got.__setitem__)
        want = _bits(got["unembed.hook_out"])
        assert _bits(forward(compiled, tokens, logits="all")[0]) == want
        one_by_one = list(range(1, len(tokens)))
        assert _bits(untraced_logits(model, ns, tokens, one_by_one)) == want
    assert paired > 30


@pytest.mark.parametrize("spec", ["float", "float32", "decimal:16"])
def test_random_models_decode_the_tokens_of_the_traced_pass(spec):
    """Greedy decoding runs as one generated function (``codegen.decoder_source``: the carried
    sums in locals, the first largest logit picked in line): its tokens are those that argmax
    picks from the traced pass's logits, one position after another."""
    from tinyadder.numbers import number_system
    rng = random.Random(31)
    ns = number_system(spec)
    for _ in range(40):  # the 17th model's float32 logits hold a NaN
        model = random_model(rng)
        compiled = compile_model(model, ns)
        tokens = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 6))]
        n_new = rng.randint(1, 4)
        got = generate(model, ns, tokens, n_new)
        for _ in range(n_new):
            logits, _ = forward(compiled, tokens, record=lambda name, value: None)
            tokens = tokens + [compiled.readout_tokens[argmax(logits[-1])]]
        assert got == tokens


def test_argmax_of_logits_with_a_nan():
    """The first largest logit where the definition has one, the first NaN where it has none
    (as torch.argmax): [1, nan, 2] has no index both larger than all before it and smaller
    than none after it."""
    nan = float("nan")
    assert argmax([1.0, nan]) == 0 and argmax([nan, 1.0]) == 0 and argmax([0.0, nan, -1.0]) == 0
    assert argmax([2.0, 3.0, nan, nan, 1.0]) == 1
    assert argmax([1.0, nan, 2.0]) == 1 and argmax([2.0, nan, 3.0, nan]) == 1


@pytest.mark.parametrize("spec", ["float", "float32", "decimal:16"])
def test_random_mixed_models_decode_the_traced_pass_bit_for_bit(spec):
    """Random models of two or three blocks with a mix (x = h + g (x - h), h the first block's
    output) are decoded by ``codegen.greedy_general`` where no live head is carried (plan rule
    9): every step's logits are the readable pass's, run step by step with its KV cache,
    ``repr`` for ``repr``."""
    from tinyadder.codegen import decodes_in_general
    from tinyadder.forward import greedy
    from tinyadder.numbers import number_system
    from tinyadder.weights import Mix
    rng = random.Random(37)
    ns, general = number_system(spec), 0
    while general < 8:
        model = random_model(rng)
        if len(model.blocks) < 2 or model.blocks[0].width_out != model.blocks[-1].width_out:
            continue  # a mix is of the same block applied again: one width
        blocks = tuple(replace(b, attn=replace(b.attn, slopes={  # no head carried
            h: Fraction(rng.randint(1, 3), 2) for h in b.attn.heads})) for b in model.blocks)
        model = replace(model, blocks=blocks,
                        mix=Mix(first=0, gain=Fraction(rng.randint(-4, 4), 4)))
        compiled = compile_model(model, ns)
        assert decodes_in_general(compiled)
        general += 1
        tokens = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 6))]
        n_new, steps = rng.randint(1, 4), []
        got = greedy(compiled, list(tokens), n_new, lambda logits: steps.append(logits)
                     or argmax(logits))
        want, out, past = [], *forward(compiled, tokens, KVCache(), logits="last")
        for _ in range(n_new):
            want.append(out[-1])
            tokens = tokens + [compiled.readout_tokens[argmax(out[-1])]]
            out, past = forward(compiled, tokens[-1:], past, logits="last")
        assert got == tokens
        assert repr(steps) == repr(want)
