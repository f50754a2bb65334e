"""The RoPE theta = 10000 family's files (jacobli99-28 and -93, nino-116,
wonderfall-121/130/139): the plan of heads wider than one lane that share a key/value head,
the rotation by p radians, and ReLU hinges met exactly in certified arithmetic."""

from decimal import Decimal
from fractions import Fraction
import math

import pytest

from tinyadder import add, models, run_with_cache
from tinyadder.forward import activation, forward, gated
from tinyadder.numbers import number_system
from tinyadder.numbers.enclosures import BallSystem, IntervalSystem
from tinyadder.plan import compile_model
from tinyadder.weights import MLP, Attention, Block, Model, Prompt, Unembed

DIGITS = tuple(str(d) for d in range(10))


def _two_blocks(attn):
    """Block 0 writes y (a head of dimension 2, its lane a1.0) and z (FFN unit u, from x);
    block 1's ``attn`` reads them. Slots x, y, z."""
    first = Attention(heads=("a0", "a1"), head_dim=2, W_V={"x": {"a1.0": 1}},
                      W_O={"a1.0": {"y": 1}})
    ffn = MLP(units=("u",), act="identity", gated=False, W_in={"x": {"u": 1}},
              W_out={"u": {"z": 1}})
    return Model(name="plan", vocab=DIGITS, slots=("x", "y", "z"),
                 W_E={d: {"x": Fraction(int(d), 7)} for d in DIGITS}, width_embed=3,
                 blocks=(Block(first, ffn, 3, 3), Block(attn, MLP(units=()), 3, 3)),
                 unembed=Unembed("tied", DIGITS), prompt=Prompt(1, ("a", "b")))


def _plan(model):
    b = compile_model(model, number_system("float")).blocks[0]
    return b.prefix_heads, b.prefix_mid, b.prefix_units, b.prefix_post


def test_plan_reads_a_wide_heads_lanes():
    """Block 1's head h1 (lanes 2, 3) keys on y and values z: earlier positions need block 0
    to write both, so block 0's head a1 (lanes 2, 3) and unit u are in its prefix plan."""
    second = Attention(heads=("h0", "h1"), head_dim=2, W_K={"y": {"h1.1": 1}},
                       W_V={"z": {"h1.0": 1}}, W_O={"h1.0": {"x": 1}})
    assert _plan(_two_blocks(second)) == ((1,), (1,), (0,), (2,))


def test_plan_of_shared_key_value_heads():
    """Two query heads on one key/value head: the same plan as with the key/value head copied
    for each, and the same logits."""
    shared = Attention(heads=("h0", "h1"), head_dim=2, kv_heads=("kv",),
                       W_Q={"x": {"h0.0": 3, "h1.1": -2}}, W_K={"y": {"kv.1": 1}},
                       W_V={"z": {"kv.0": 1}}, W_O={"h0.0": {"x": 1}, "h1.0": {"x": -1}},
                       rope_freqs=(1,))
    copied = Attention(heads=shared.heads, head_dim=2, W_Q=shared.W_Q,
                       W_K={"y": {"h0.1": 1, "h1.1": 1}}, W_V={"z": {"h0.0": 1, "h1.0": 1}},
                       W_O=shared.W_O, rope_freqs=(1,))
    models = _two_blocks(shared), _two_blocks(copied)
    assert _plan(models[0]) == _plan(models[1]) == ((1,), (1,), (0,), (2,))
    ns = number_system("fraction")
    logits = [forward(compile_model(m, ns), [3, 1, 4, 1, 5])[0] for m in models]
    assert logits[0] == logits[1]


# ---- the family: RoPE with theta = 10000 at head dimension 2 turns a pair by p radians -------

OFFSETS = {  # radians each head's query is turned back by (the sources' rope offsets)
    "jacobli99-28": (0, 23, 11, 22, 10), "jacobli99-93": (0, 23, 11, 22, 10),
    **{name: (23, 11, 22, 10) for name in ("nino-116", "wonderfall-121", "wonderfall-130",
                                           "wonderfall-139")}}


@pytest.mark.parametrize("name", sorted(OFFSETS))
def test_heads_attend_where_the_angle_is_nearest_a_turn(name):
    """The angle at position p is p radians (frequency theta^0 = 1), so head h, its query
    turned back by o_h, scores key j by cos(t - j - o_h): at every position t it attends, in the
    model's float32, with weight exactly 1, to the key j <= t that makes t - j - o_h nearest a
    multiple of 2 pi: j = t - o_h once t >= o_h, before that t - o_h + 19 (19 ~ 3 * 2 pi) or
    t - o_h + 6 (6 ~ 2 pi)."""
    model = models.build(name)
    attn = model.blocks[0].attn
    assert (attn.rope_freqs, attn.head_dim, len(attn.kv_heads)) == ((1,), 2, 1)
    _, cache = run_with_cache(model, "7650676663+0149460439", ns=number_system("float32"))
    pattern = cache["pattern", 0]
    for h, o in enumerate(OFFSETS[name]):
        for t, row in enumerate(pattern[h]):
            nearest = max(range(t + 1), key=lambda j: math.cos(t - j - o))
            assert row[nearest] == 1, (attn.heads[h], t)
            if t >= o:
                assert nearest == t - o


# ---- a ReLU met exactly at its hinge, in certified arithmetic ---------------------------------

def test_relu_of_an_enclosure_around_zero_decides_nothing():
    """max(x, 0) over [-1e-35, 2e-35] is [0, 2e-35], for intervals and balls; ReGLU takes
    relu(g) u."""
    intervals = IntervalSystem(50)
    x = intervals.value(Decimal("-1e-35"), Decimal("2e-35"))
    assert activation("relu", x, intervals).ends() == (0, Decimal("2e-35"))
    [post] = gated("relu", [x], [intervals.point(3)], intervals)
    assert post.ends() == (0, Decimal("6e-35"))
    balls = BallSystem(300)
    y = balls.ball(Decimal("5e-36"), Decimal("1.5e-35"))
    lo, hi = activation("relu", y, balls).ends()
    top = Fraction(2, 10 ** 35)
    assert lo <= 0 and top <= hi < top * (1 + Fraction(1, 10 ** 5))


@pytest.mark.parametrize("name, a, b", [("jacobli99-28", 9999999999, 1),
                                        ("jacobli99-93", 7650676663, 149460439)])
def test_hinge_pairs_are_certified(name, a, b):
    """jacobli99's FFN steps relu(u + a) - relu(u + b) meet u = 0 up to the softmax's leakage
    (about e^(-5e8)): the enclosures at 50 digits decide every digit all the same."""
    assert add(models.build(name), IntervalSystem(50), a, b) == a + b
