"""Certified exact decisions: the fraction system's tokens are decided over intervals that
contain both its exact values and the real-number model's (docs/exactness.md)."""

from fractions import Fraction
import random

import pytest

from tinyadder import build
from tinyadder.addition import encode
from tinyadder.cache import run_with_cache
from tinyadder.addition import answer
from tinyadder.cases import COUNTEREXAMPLE, carry_pairs, random_pairs, verify_cases
from tinyadder.forward import forward
from tinyadder.plan import compile_model
from tinyadder.generate import _runner, argmax, decode
from tinyadder.numbers.enclosures import BallSystem, IntervalSystem
from tinyadder.numbers.scaled import ScaledSystem
from tinyadder.numbers import FractionSystem, Undecided, exp_of

from test_one_pass import random_model


def test_e_to_the_x_cancels_exactly():
    ns = FractionSystem()
    assert ns.exp(40) * ns.exp(-40) == 1 and ns.exp(Fraction(7, 3)) * ns.exp(Fraction(-7, 3)) == 1
    # head 3's value weight 1/S = 10 e^40 against the key's e^-40: exactly 1 per special token
    model = build("published")
    _, cache = run_with_cache(model, "12+34", names="blocks.0.attn.hook_v")
    v_bos = cache["v", 0][0][3]
    assert ns.exp(-40) * v_bos == 1
    assert [r.what for r in cache.roundings] == ["exp(-40)", "exp(-1000)"]  # once per argument


@pytest.fixture(scope="module")
def counterexample_logits():
    """The counterexample's tokens, and the fraction system's logits of them at 50 and 120
    digits (computed once for the three enclosures)."""
    model = build("published")
    tokens = decode(model, FractionSystem(), encode(model, *COUNTEREXAMPLE), 11)[0]
    return tokens, {digits: forward(compile_model(model, FractionSystem(digits)), tokens)[0]
                    for digits in (50, 120)}


@pytest.mark.parametrize("enclose", [IntervalSystem, BallSystem, ScaledSystem])
def test_enclosures_contain_the_fraction_values_and_finer_ones(enclose, counterexample_logits):
    """Every logit of the interval (or ball, or scaled integer) pass at 50 digits contains the
    fraction system's at 50 digits and at 120 (within 10^-119 of the real-number model's)."""
    model = build("published")
    tokens, exact_logits = counterexample_logits
    box, _ = forward(compile_model(model, enclose(50)), tokens)
    for digits in (50, 120):
        exact = exact_logits[digits]
        assert all(b.contains(x) for brow, xrow in zip(box, exact) for b, x in zip(brow, xrow))
    ends = [(Fraction(lo), Fraction(hi)) for lo, hi in
            ((b.lo, b.hi) if enclose is IntervalSystem else b.ends() for b in box[-1])]
    assert 0 < max(hi - lo for lo, hi in ends) < Fraction(1, 10 ** 20)  # all decisions settle
    assert decode(model, enclose(50), tokens[:23], 11)[0] == tokens


def test_scaled_integers_contain_the_fraction_values_of_random_models():
    """The generated integer code (every path codegen writes: decays, textbook heads, shared
    gates, constants that are not short decimals) encloses the fraction system's logits at 50
    and at 120 digits, for random models and inputs."""
    rng = random.Random(3)
    checked = 0
    for _ in range(30):
        model = random_model(rng)
        tokens = [rng.randrange(len(model.vocab)) for _ in range(rng.randint(1, 6))]
        compiled = compile_model(model, ScaledSystem(50))
        assert compiled.fast
        try:
            box, _ = forward(compiled, tokens)
        except Undecided:  # a gate the intervals cannot open or shut
            continue
        for digits in (50, 120):
            exact, _ = forward(compile_model(model, FractionSystem(digits)), tokens)
            assert all(b.contains(x) for brow, xrow in zip(box, exact)
                       for b, x in zip(brow, xrow))
        checked += 1
    assert checked >= 25


def _interval_tokens(model, ns, prompt, n_new):
    """The tokens decided over ``numbers.enclosures`` (the interval pass, no integer code),
    refined as decoding refines."""
    while True:
        try:
            return decode(model, ns.decider(), prompt, n_new)[0]
        except Undecided:
            ns = ns.refined()


def _wrong_sums_with_the_same_tokens(pairs):
    """How many of the published model's sums of ``pairs`` are wrong, after asserting that
    the scaled integers decide every token as the intervals do."""
    model, ns = build("published"), FractionSystem()
    assert isinstance(_runner(model, ns, None).ns, ScaledSystem)  # decoding's decider
    wrong = 0
    for a, b in pairs:
        prompt = encode(model, a, b)
        tokens = decode(model, ns, prompt, 11)[0]
        assert tokens == _interval_tokens(model, ns, prompt, 11), (a, b)
        wrong += answer(model, tokens) != a + b
    return wrong


def test_scaled_integers_decide_the_intervals_tokens_on_a_sample():
    """AdderBoard's first cases and carries cases where the published model's own sums are
    wrong (m = 8, 9 carried columns): the same tokens, flaws included."""
    cells = carry_pairs(20)
    pairs = verify_cases()[:16] + cells[8, 1][:4] + cells[9, 10][:4]
    assert _wrong_sums_with_the_same_tokens(pairs) == 5


@pytest.mark.slow
def test_scaled_integers_decide_the_intervals_tokens_on_adderboard_and_the_carries():
    """All 10,010 AdderBoard cases (every sum right) and the carries suite (20 per cell: the
    published model's 201 wrong sums)."""
    assert _wrong_sums_with_the_same_tokens(verify_cases()) == 0
    carries = [p for group in carry_pairs(20).values() for p in group]
    assert _wrong_sums_with_the_same_tokens(carries) == 201


def test_long_numbers_are_decided_over_balls():
    assert type(FractionSystem(150).decider()) is IntervalSystem
    assert type(FractionSystem(240).decider()) is BallSystem  # one long product, not two


def test_a_too_low_precision_is_raised_and_the_answer_stays_right():
    model = build("published")
    (a, b), = random_pairs(1)
    prompt = encode(model, a, b)
    # e^x rounded to 6 digits: the intervals cannot settle the digits, so the precision rises
    tokens, used = decode(model, FractionSystem(6), prompt, 11)
    assert used.exp_digits > 6 and "raised from" in used.describe()
    assert int("".join(model.vocab[t] for t in tokens[23:])) == a + b
    with pytest.raises(Undecided):  # the intervals at 6 digits alone leave a decision open
        decode(model, IntervalSystem(6), prompt, 11)
    # the trace runs where the decisions were certified, and its argmaxes are the tokens
    logits, cache = run_with_cache(model, prompt, ns=FractionSystem(6))
    assert cache.ns.exp_digits == used.exp_digits and cache.tokens == tokens
    readout = compile_model(model, cache.ns).readout_tokens
    assert [readout[argmax(row)] for row in logits[22:33]] == tokens[23:]


@pytest.mark.parametrize("enclose", [IntervalSystem, BallSystem])
def test_enclosure_arithmetic_contains_every_exact_result(enclose):
    """Every sign case of +, -, *, /: the result contains the operation on any points of the
    operands (the ends and the middle of each)."""
    rng = random.Random(7)
    ns = enclose(12)

    def box():
        lo, hi = sorted(Fraction(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(2))
        lo, hi = ns.value.point(lo).lo, ns.value.point(hi).hi
        ends = (Fraction(lo), (Fraction(lo) + Fraction(hi)) / 2, Fraction(hi))
        return (ns.value(lo, hi) if enclose is IntervalSystem else ns.ball.around(lo, hi)), ends

    for _ in range(1000):
        (x, xs), (y, ys) = box(), box()
        for op in (lambda p, q: p + q, lambda p, q: p - q, lambda p, q: p * q):
            result = op(x, y)
            assert all(result.contains(op(p, q)) for p in xs for q in ys)
        if not ys[0] <= 0 <= ys[2]:
            assert all((x / y).contains(p / q) for p in xs for q in ys)
    for lo, hi in ((Fraction(-7, 3), Fraction(-7, 3) + Fraction(1, 10 ** 6)), (-3, 2)):
        box = ns.value(ns.value.point(lo).lo, ns.value.point(hi).hi)
        if enclose is BallSystem:
            box = ns.ball.around(box.lo, box.hi)
        e = ns.exp(box)  # one exponential when narrow, two when wide
        assert all(e.contains(FractionSystem(60).exp(x)) for x in (lo, (lo + hi) / 2, hi))
    e = ns.exp(ns.const(Fraction(-7, 3)))
    assert e.contains(FractionSystem(12).exp(Fraction(-7, 3)))
    assert ns.const(exp_of(12)).contains(FractionSystem(12).exp(12))


def test_comparisons_settle_or_refuse():
    ns = IntervalSystem(20)
    third = ns.point(Fraction(1, 3))
    assert third > 0 and not third < 0 and third < ns.point(Fraction(1, 2))
    assert not ns.point(2) > ns.point(2) and ns.point(2) >= 2  # equal points: a certain tie
    with pytest.raises(Undecided):
        third > ns.point(Fraction(1, 3))  # two enclosures of 1/3: equal or not, unknown
    with pytest.raises(Undecided):
        ns.one / (third - third)
    assert (third * 3).lo < 1 < (third * 3).hi


def test_argmax_passes_over_an_open_tie_below_the_winner():
    """Two runners-up tied exactly (their intervals overlap: no comparison of them settles)
    do not stop the pick of a winner that beats both; a tie with the winner is raised."""
    from tinyadder.numbers import Undecided

    class Box:
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def __gt__(self, other):
            if self.lo > other.hi:
                return True
            if self.hi < other.lo:
                return False
            raise Undecided("overlapping")

    tied = [Box(0, 0), Box(4, 5), Box(4, 5), Box(9, 9), Box(1, 1)]
    assert argmax(tied) == 3
    assert argmax([Box(9, 9)] + tied[1:3]) == 0 and argmax(tied[1:3] + [Box(9, 9)]) == 2
    with pytest.raises(Undecided):
        argmax([Box(0, 0), Box(8, 9), Box(8, 9)])
    assert argmax([3, 7, 7, 1]) == 1 and argmax([5]) == 0 and argmax([2, 2]) == 0


def test_the_decoders_pick_on_ints_is_argmax_of_the_boxed_logits():
    """The integer decoder's in-line pick (``codegen._Ints.first_largest``) against
    ``generate.argmax`` of the boxed logits -[lo, hi], on 3,000 seeded lists of 1 to 6 short
    intervals that touch, overlap and tie: the same index, or Undecided from both."""
    from tinyadder import codegen
    model = build("published")
    compiled = compile_model(model, ScaledSystem.around(FractionSystem().decider()))
    writer, env = codegen._environment(compiled)
    rng, decided = random.Random(23), 0
    for _ in range(3000):
        n = rng.randint(1, 6)
        ends = [sorted((rng.randint(-6, 6), rng.randint(-6, 6))) for _ in range(n)]
        row = [f"x{j}" for j in range(n)]
        text = "\n".join(writer.first_largest(row, range(n)))
        scope = dict(env, pick=argmax, **{f"x{j}_{end}": e[k] for j, e in enumerate(ends)
                                          for k, end in enumerate(("lo", "hi"))})
        try:
            expected = argmax([env["box"](-hi, -lo) for lo, hi in ends])
        except Undecided:
            with pytest.raises(Undecided):
                exec(text, scope)  # noqa: S102
            continue
        exec(text, scope)  # noqa: S102
        assert scope["best"] == expected, ends
        decided += 1
    assert 800 < decided < 2200  # both outcomes are common (983 decided)


def test_long_rationals_round_in_a_pure_python_decimal(monkeypatch):
    """A rational of over 4,300 digits is rounded as C decimal rounds it by the pure-Python
    decimal (PyPy's), which reads an int through str() and refuses such ints."""
    import _pydecimal
    from tinyadder.numbers import protocol
    x = Fraction(10 ** 5000 + 1, 3 ** 9000)
    expected = str(protocol._decimal_of(x, protocol._decimal_context(2045)))
    monkeypatch.setattr(protocol, "decimal", _pydecimal)
    assert str(protocol._decimal_of(x, protocol._decimal_context(2045))) == expected


# ---- values of far-apart scales (numbers/multiscale.py) -------------------------------------

def _trace(model, monkeypatch=None, far=None):
    from tinyadder.numbers import fraction
    if far is not None:
        monkeypatch.setattr(fraction, "FAR", far)
    return run_with_cache(build(model), "7650676663+0149460439")


def test_a_trace_with_e_to_the_x_kept_unexpanded_has_the_same_values(monkeypatch):
    # every e^x below 10^-20 held as a Multiscale leaf: the same exact rationals as Fractions,
    # and the same text where the tracer prints them
    from tinyadder.analysis.show import render
    from tinyadder.numbers.multiscale import Multiscale
    _, plain = _trace("fblissjr-33")
    _, kept = _trace("fblissjr-33", monkeypatch, far=20)
    far = 0
    for name in plain.keys():
        def walk(a, b):
            nonlocal far
            if isinstance(a, list):
                assert len(a) == len(b)
                for x, y in zip(a, b):
                    walk(x, y)
            elif isinstance(b, Multiscale):
                far += 1
                assert b.exact() == a and b == a and float(b) == float(a)
            else:
                assert b == a and type(b) is type(a)
        walk(plain[name], kept[name])
    assert far > 400
    assert render(kept) == render(plain)


def test_multiscale_signs_where_the_enclosures_cannot_see():
    from decimal import Decimal
    from tinyadder.numbers.multiscale import leaf
    tiny = [leaf(Decimal(f"{m}E-700000")) for m in (3, 7, 11)]
    total = 1 + tiny[0] + tiny[1] + tiny[2]
    weights = [1 / total] + [t / total for t in tiny]
    one = weights[0] + weights[1] + weights[2] + weights[3]
    assert one == 1 and not (one - 1) and str(one - 1) == "0"  # over the denominator
    left = weights[0] - 1  # -(21 10^-700000) / total
    assert left < 0 and left.significant(6) == Decimal("-2.10000E-699999")
    assert float(left) == -0.0 and (left * left) > 0
    x = 5 + tiny[2] * Fraction(1, 3)
    assert (x - 5) > 0 and x - 5 - tiny[2] / 3 == 0 and x > 5


def test_exact_traces_of_far_scales_finish():
    # cosminscn-66 attends with weights down to e^-1,385,000, each kept as m 10^k; its
    # logits are ordered and printed from their enclosures
    from tinyadder.analysis.show import render
    _, cache = _trace("cosminscn-66")
    text = render(cache)
    assert "as an addition: 7650676663+0149460439=07800137102" in text
    assert text.count("    winner ") == 11 and "e-601747" in text
