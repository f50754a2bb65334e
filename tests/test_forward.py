"""The forward pass: exact slot values, exactness of the fraction system, the KV cache."""

from decimal import Context, Decimal
from fractions import Fraction
import math

import pytest

from explore_cases import exact_run
from tinyadder.addition import encode
from tinyadder.construction import SLOTS, VOCAB
from tinyadder.forward import KVCache, forward
from tinyadder.plan import compile_model
from tinyadder.generate import generate
from tinyadder.numbers import FractionSystem, LogScore

A, B = 7650676663, 149460439


def full_trace(model, ns, a=A, b=B):
    """Every trace point of one forward pass over the whole generated sequence."""
    tokens = generate(model, ns, encode(model, a, b), 11)
    cache = {}
    forward(compile_model(model, ns), tokens, record=cache.__setitem__)
    return tokens, cache


@pytest.fixture(scope="module")
def exact(published):
    return full_trace(published, FractionSystem())


def slot(row, name):
    return row[SLOTS.index(name)]


def test_sequence_shape(exact):
    tokens, cache = exact
    assert "".join(VOCAB[t] for t in tokens) == "<bos>7650676663+0149460439=07800137102"
    assert len(cache["hook_embed"]) == 34
    assert [len(r) for r in cache["blocks.0.hook_resid_pre"]] == [5] * 34
    assert [len(r) for r in cache["blocks.0.hook_resid_post"]] == [16] * 34
    assert [len(r) for r in cache["unembed.hook_out"]] == [10] * 34


def test_embedding_rows_are_exact(published):
    compiled = compile_model(published, FractionSystem())
    rows = dict(zip(VOCAB, compiled.embed))
    assert rows["0"] == (0, 0, 0, 0, 0)
    for d in range(1, 10):
        assert rows[str(d)] == (0, 0, 10 * d, 0, 0)
    assert rows["="] == (1, 1, 0, 0, 0)
    for token in ("<bos>", "<eos>", "+"):
        assert rows[token] == (0, 1, 0, 0, 0)


def test_scale_is_exactly_one_over_i_plus_2_from_eq_on(exact):
    _, cache = exact
    for i, row in enumerate(cache["blocks.0.hook_resid_mid"]):
        assert slot(row, "scale") == (Fraction(1, i + 2) if i >= 22 else 0), i


def test_count_is_the_place_value(exact):
    _, cache = exact
    for i, row in enumerate(cache["blocks.0.hook_resid_mid"]):
        want = (Fraction(1, 10 ** i) + (i >= 11) * Fraction(10) ** (11 - i)
                - (i >= 22) * Fraction(10) ** (23 - i))
        got = slot(row, "count")
        assert abs(got - want) <= abs(want) * Fraction(1, 10 ** 15), i


def test_digit_pos_sums_to_ten_times_a_plus_b(exact):
    _, cache = exact
    total = sum(slot(row, "digit_pos") for row in cache["blocks.0.hook_resid_post"][:23])
    assert abs(total - 10 * (A + B)) < 1


def test_no_float_anywhere_in_a_fraction_run(exact):
    _, cache = exact
    seen = set()

    def walk(value):
        if isinstance(value, (list, tuple)):
            for v in value:
                walk(v)
        elif isinstance(value, LogScore):
            walk([value.rational, value.ln_coef, value.base])
        elif value is not None:
            assert type(value) in (int, Fraction), type(value)
            seen.add(type(value))

    for name, value in cache.items():
        walk(value)
    assert Fraction in seen


def test_exact_identities(exact):
    _, cache = exact
    for i in range(2):
        pre, attn = cache[f"blocks.{i}.hook_resid_pre"], cache[f"blocks.{i}.hook_attn_out"]
        mid, mlp = cache[f"blocks.{i}.hook_resid_mid"], cache[f"blocks.{i}.hook_mlp_out"]
        post = cache[f"blocks.{i}.hook_resid_post"]
        assert [[p + a for p, a in zip(r, s)] for r, s in zip(pre, attn)] == mid
        wide = [r + [0] * (len(s) - len(r)) for r, s in zip(mid, mlp)]
        assert [[m + f for m, f in zip(r, s)] for r, s in zip(wide, mlp)] == post
    assert cache["hook_embed"] == cache["blocks.0.hook_resid_pre"]
    assert cache["blocks.0.hook_resid_post"] == cache["blocks.1.hook_resid_pre"]


def test_kv_cache_equals_full_recompute_exactly(exact, published):
    tokens, cache = exact
    compiled = compile_model(published, FractionSystem())
    past, logits, resid = KVCache(), [], []
    record = {}
    for t in tokens:
        step, past = forward(compiled, [t], past, record=record.__setitem__)
        logits += step
        resid += record["blocks.1.hook_resid_post"]
    assert logits == cache["unembed.hook_out"]
    assert resid == cache["blocks.1.hook_resid_post"]


def test_masked_scores_are_none(exact):
    _, cache = exact
    pattern = cache["blocks.0.attn.hook_pattern"]
    assert len(pattern) == 5
    for head in pattern:
        for i, row in enumerate(head):
            assert all(w is None for w in row[i + 1:])
            assert all(w is not None for w in row[:i + 1])


def test_softmax1_weights_sum_below_one(exact):
    _, cache = exact
    for head in cache["blocks.1.attn.hook_pattern"]:
        for i, row in enumerate(head):
            assert sum(w for w in row if w is not None) == Fraction(i + 1, i + 2)


def test_patch_intervenes_in_that_call_only(published):
    ns = FractionSystem()
    compiled = compile_model(published, ns)
    tokens = encode(published, A, B)

    def zero_count(rows):
        j = SLOTS.index("count")
        return [[0 if k == j else v for k, v in enumerate(r)] for r in rows]

    patched, _ = forward(compiled, tokens, patch={"blocks.0.hook_resid_mid": zero_count})
    clean, _ = forward(compiled, tokens)
    assert patched != clean
    assert forward(compiled, tokens)[0] == clean


def test_fraction_roundings_are_recorded():
    ns = FractionSystem()
    assert ns.exp(0) == 1 and ns.roundings == []
    ns.exp(-40)
    (rounding,) = ns.roundings
    assert rounding.what == "exp(-40)" and rounding.digits == ns.exp_digits
    assert rounding.value == Fraction(Decimal(-40).exp(Context(prec=ns.exp_digits)))
    assert abs(rounding.value / Fraction(math.exp(-40)) - 1) < Fraction(1, 10 ** 15)
    assert ns.exp(-40) is rounding.value  # rounded once, then reused
    assert ns.exp(LogScore(Fraction(0), -3, Fraction(10))) == Fraction(1, 1000)


def test_every_number_system_has_the_interface():
    from tinyadder.numbers.enclosures import BallSystem, IntervalSystem
    from tinyadder.numbers import DecimalSystem, Float32System, FloatSystem, NumberSystem
    systems = [FractionSystem(), DecimalSystem(), FloatSystem(), Float32System(),
               IntervalSystem(20), BallSystem(20)]
    assert all(isinstance(ns, NumberSystem) for ns in systems)
    assert [ns.decider() is ns for ns in systems] == [False, True, True, True, True, True]
    assert FractionSystem(30).refined().exp_digits == 60


@pytest.mark.slow  # 3 s of CPU; test_trace and test_modelfile load JSON traces by default
def test_an_exact_json_trace_stays_small_exact_and_loads(published):
    """forward.derive recomputes the resid, FFN and logit points with the pass's own
    functions; the JSON trace stores the rest, and only omits what derives identically."""
    import io
    from tinyadder.cache import run_with_cache
    from tinyadder.analysis.trace_json import dump, load
    _, cache = exact_run("7650676663+0149460439")
    text = io.StringIO()
    dump(cache, text)
    assert len(text.getvalue()) < 5 * 10 ** 6  # 44 MB with every point written out
    assert load(io.StringIO(text.getvalue())).values == cache.values
    # a patched trace: the points the patch changed do not derive, so they are written
    shifted = {"blocks.1.hook_resid_mid": lambda rows: [[x + 1 for x in r] for r in rows]}
    _, patched = run_with_cache(published, "12+34", patch=shifted)
    text = io.StringIO()
    dump(patched, text)
    doc = __import__("json").loads(text.getvalue())
    assert "blocks.1.hook_resid_mid" in doc["trace_points"]
    assert "blocks.1.hook_resid_mid" not in doc["derived"]
    assert load(io.StringIO(text.getvalue())).values == patched.values


def test_a_tied_readout_reads_every_embedded_slot_scaled_or_not():
    """logits = (x * scale) W_E^T over all the embedding's slots: a slot without a scale counts
    0, wherever it lies (here x1, after the one scaled slot x0), in the pass and the fast path."""
    import random
    from test_modelfile import _rich_model
    from tinyadder import number_system, run_with_cache
    for seed in range(40):
        model = _rich_model(random.Random(seed))
        if model.unembed.kind == "tied":
            break
    assert model.unembed.scale.keys() == {"x0"} and "x1" in model.W_E["2"]
    ns = number_system("float")
    tokens = [model.vocab.index(t) for t in "12+2"]
    rows, cache = run_with_cache(model, tokens, ns=ns)
    x0 = model.slots.index("x0")
    final = cache["ln_final.hook_normalized"][-1]
    want = [final[x0] * 0.5 * float(model.W_E.get(t, {}).get("x0", 0)) - (t == "=")
            for t in model.vocab]
    assert rows[-1] == want
    assert forward(compile_model(model, ns), tokens)[0][-1] == want
