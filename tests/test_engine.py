"""The engine (the untraced fast path) against the reference forward pass, value by value."""

from fractions import Fraction

import pytest

from tinyadder.addition import encode
from tinyadder.cases import COUNTEREXAMPLE, EDGE_CASES, random_pairs
from tinyadder.construction import SLOTS
from tinyadder.engine import Sequence, plan_model
from tinyadder.exact import Rational
from tinyadder.forward import compile_model, forward
from tinyadder.generate import argmax, generate
from tinyadder.numbers import DecimalSystem, FloatSystem, FractionSystem, Ln
from tinyadder.weights import Attention, Block, MLP, Model

SAMPLE = [COUNTEREXAMPLE, EDGE_CASES[4], EDGE_CASES[6], *random_pairs(1)]
TRACED = ("blocks.{}.hook_resid_mid", "blocks.{}.hook_resid_post")


def reference_rows(model, ns, tokens):
    """Per position: resid_mid and resid_post of every block, then the logits (reference)."""
    cache = {}
    forward(compile_model(model, ns), tokens, record=cache.__setitem__)
    names = [n.format(i) for i in range(len(model.blocks)) for n in TRACED]
    return [[cache[n][pos] for n in names] + [cache["unembed.hook_out"][pos]]
            for pos in range(len(tokens))]


def exact(rows):
    """Engine rows in the fraction system, checked to be exact rationals (== on a Rational
    compares its exact value: cross-multiplied integers)."""
    for row in rows:
        for x in row:
            assert isinstance(x, Rational) and all(type(i) is int for i in x.pair())
    return rows


@pytest.fixture(scope="module", params=["published", "repaired"])
def model(request, published, repaired):
    return {"published": published, "repaired": repaired}[request.param]


@pytest.mark.parametrize("a, b", SAMPLE)
def test_fraction_fast_path_is_the_reference_slot_by_slot(model, a, b):
    ns = FractionSystem()
    prompt = encode(model, a, b)
    tokens = generate(model, ns, prompt, 11)
    want = reference_rows(model, ns, tokens)
    readout = compile_model(model, ns).readout_tokens  # the reference picks the same tokens:
    assert tokens[len(prompt):] == [readout[argmax(want[pos][-1])]
                                    for pos in range(len(prompt) - 1, len(tokens) - 1)]
    got = Sequence(plan_model(model, ns)).feed(tokens, every=True)
    assert [exact(rows) for rows in got] == want  # every slot, every position, the logits
    # liveness on (only the last position of each call complete): the same logits
    sequence = Sequence(plan_model(model, ns))
    assert exact([sequence.feed(prompt)]) == [want[len(prompt) - 1][-1]]
    for pos in range(len(prompt), len(tokens)):
        assert exact([sequence.feed([tokens[pos]])]) == [want[pos][-1]]


def assert_as_accurate(model, ns, tokens, rel, exact_rows=None):
    """In a rounding system the engine rounds in another order than the reference (carried
    sums): per position and trace point, its largest error against the exact values is at
    most the reference's, plus ``rel`` times the largest exact value."""
    exact_rows = exact_rows or reference_rows(model, FractionSystem(), tokens)
    want = reference_rows(model, ns, tokens)
    got = Sequence(plan_model(model, ns)).feed(tokens, every=True)
    assert len(got) == len(want) == len(tokens)
    for got_pos, want_pos, exact_pos in zip(got, want, exact_rows):
        for g_row, w_row, e_row in zip(got_pos, want_pos, exact_pos):
            def error(row):
                return max(abs(Fraction(x) - e) for x, e in zip(row, e_row))
            scale = max(abs(e) for e in e_row)
            assert error(g_row) <= error(w_row) + rel * scale


@pytest.fixture(scope="module")
def counterexample(published):
    """The counterexample's tokens (the same in every system) and its exact trace."""
    tokens = generate(published, FloatSystem(), encode(published, *COUNTEREXAMPLE), 11)
    return tokens, reference_rows(published, FractionSystem(), tokens)


@pytest.mark.parametrize("ns", [FloatSystem(), DecimalSystem()], ids=["float", "decimal"])
def test_rounded_systems_as_accurate_as_the_reference(published, ns, counterexample):
    tokens, exact_rows = counterexample
    assert generate(published, ns, tokens[:23], 11) == tokens
    assert_as_accurate(published, ns, tokens, Fraction(1, 10 ** 12), exact_rows)


def test_rules_detected_from_the_weights(published):
    plan = plan_model(published, FractionSystem())
    layer0, layer1 = plan.blocks
    # rule 2: heads 0-2 have no value; 3 and 4 remain
    assert [h.out for h in layer0.heads] == [((SLOTS.index("count"), 1),),
                                             ((SLOTS.index("scale"), 1),)]
    # rule 1: both have a constant query; slope ln 10 decays by exactly 1/10, slope 0 not at all
    assert [h.carried for h in layer0.heads] == [True, True]
    assert layer0.heads[0].decay == Fraction(1, 10) and layer0.heads[1].decay is None
    assert layer1.heads[0].carried and layer1.heads[0].exp_qk == 1  # q = k = 0
    # rule 3: before the last position, layer 1 only takes in keys and values, and layer 0
    # needs only the count head and the unit that writes digit_pos (layer 1 reads it)
    assert layer1.units_hist == () and layer1.hist == (False,)
    assert layer0.hist == (True, False)
    assert [u.out for u in layer0.units_hist] == [((SLOTS.index("digit_pos"), 1),)]
    # rule 4: layer 0's keys and values per token id (filled as tokens are seen)
    assert isinstance(layer0.token_kv, dict) and layer1.token_kv is None


def toy_model():
    """Three blocks that exercise every path: a query that depends on the position, a slope
    that is not ln b, a dead head, a dead unit, attention and FFN biases, carried heads with
    varying keys after the first block."""
    vocab = ("a", "b", "c")
    slots = ("x", "y", "z", "w")
    heads = ("p", "q", "r", "dead")
    attn = Attention(
        heads=heads,
        W_Q={"x": {"p": Fraction(1, 3)}}, b_Q={"p": 1, "q": 2, "r": Fraction(-1, 2)},
        W_K={"x": {"p": 1, "q": Fraction(1, 2)}, "y": {"r": -1}}, b_K={"q": -1},
        W_V={"y": {"p": 3, "q": 1}, "x": {"r": Fraction(5, 7)}}, b_V={"r": 1},
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
                 readout={"a": "x", "b": "y", "c": "z"})


def test_general_model_fraction_exact():
    model, ns = toy_model(), FractionSystem()
    tokens = [0, 2, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2]
    want = reference_rows(model, ns, tokens)
    plan = plan_model(model, ns)
    assert [[h.carried for h in b.heads] for b in plan.blocks] == [[False, False, True],
                                                                  [True], [False, False, True]]
    assert [len(b.units) for b in plan.blocks] == [2, 2, 2]  # 'off' writes nothing
    assert [exact(rows) for rows in Sequence(plan).feed(tokens, every=True)] == want
    sequence = Sequence(plan)  # in chunks: liveness on, the last logits of each call
    for start, stop in ((0, 5), (5, 6), (6, 12)):
        assert exact([sequence.feed(tokens[start:stop])]) == [want[stop - 1][-1]]


def test_general_model_float_as_accurate():
    assert_as_accurate(toy_model(), FloatSystem(), [0, 2, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2],
                       Fraction(1, 10 ** 12))


def test_uncached_generation_is_the_same(published):
    ns = FractionSystem()
    prompt = encode(published, *COUNTEREXAMPLE)
    assert generate(published, ns, prompt, 11, cache=False) == generate(published, ns, prompt, 11)
