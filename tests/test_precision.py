"""Number systems fitted to N, emulated float32, and the precision lab."""

import io
import math
import random
import struct
from fractions import Fraction

import pytest

from cli_runs import cli_once
from explore_cases import exact_run
from tinyadder import run_with_cache
from tinyadder.analysis import precision
from tinyadder.cli import precision as precision_cli
from tinyadder.addition import add
from tinyadder.cli import main
from tinyadder.construction import build
from tinyadder.generate import argmax
from tinyadder.numbers.fraction import first_largest
from tinyadder.numbers import (DecimalSystem, Float32, Float32System, FloatSystem,
                               FractionSystem, for_model, number_system)


def single(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def test_float32_rounds_every_result_to_single():
    one, tiny = Float32(1), Float32(2 ** -24)
    assert one + tiny == 1                      # half an ulp: ties to even
    assert one + tiny + tiny == 1               # ... at every step, not once at the end
    assert one + 3 * tiny == 1 + 2 ** -22
    third = Float32(1) / 3
    assert third == single(1 / 3) != 1 / 3 and type(third) is Float32
    for x in (0.1, 1e-30, 123456.789):
        assert Float32(x) * 3 == single(single(x) * 3)
        assert 7 - Float32(x) == single(7 - single(x))
    assert Float32(3e38) * 2 == math.inf


def test_float32_system_stores_weights_as_singles():
    ns = Float32System()
    model = build("published")
    w = model.blocks[0].attn.W_V["special"]["h3"]       # 0.1 / S = e^40
    assert ns.const(w) == single(math.exp(40)) and type(ns.const(w)) is Float32
    assert ns.exp(Float32(-40)) == single(math.exp(single(-40)))
    assert number_system("float32").describe().startswith("float32 (IEEE 754 single")


def test_float64_overflows_to_infinity_not_an_exception():
    ns = FloatSystem()
    assert ns.const(10 ** 400) == math.inf and ns.exp(1000.0) == math.inf


def test_systems_take_the_precision_n_needs_unless_given():
    model = build("repaired", 50)
    decimal = for_model(number_system("decimal"), model)
    assert decimal.digits == 80
    assert decimal.describe() == ("decimal (80 significant digits, round-half-even; "
                                  "picked: N + 30 for N = 50 digits)")
    auto = number_system("decimal")
    assert for_model(auto, model) is for_model(auto, model)   # memoised: compiled once
    assert for_model(number_system("decimal:25"), model).digits == 25
    fraction = for_model(FractionSystem(), model)
    assert fraction.exp_digits == 90 and fraction.describe() == (
        "fraction (exact; e^x rounded to 90 digits once per argument x; picked: 10 more "
        "than the model's precision, N + 30 for N = 50 digits)")
    assert for_model(DecimalSystem(), build("published")).digits == 40
    assert for_model(FractionSystem(), build("published")).exp_digits == 50


@pytest.mark.slow
def test_fraction_stays_exact_at_fifty_digits():
    # At N = 50 the exp roundings must be far below 10^-50: 90 digits, and the sum is right.
    # Decoding decides over intervals and rounds nothing; the exact values of a trace do.
    model = build("repaired", 50)
    ns = for_model(FractionSystem(), model)
    a = b = 10 ** 50 - 1
    assert add(model, ns, a, b) == a + b
    _, cache = run_with_cache(model, f"{a}+{b}", ns=ns)
    assert cache.text.endswith(f"={a + b:051d}")
    assert {r.digits for r in cache.roundings} == {90}


def test_float32_fails_at_ten_digits_and_float64_does_not():
    assert precision.accuracy("repaired", "float32", 10, 5) == (2, 15)
    assert precision.accuracy("repaired", "float64", 10, 5) == (15, 15)


def test_float64_largest_safe_n_on_the_sample():
    assert precision.largest_safe("repaired", "float64", 5) == (14, (15, 13, 15))


def run(*argv):
    out = io.StringIO()
    return precision_cli.main(list(argv), out, io.StringIO(), None), out.getvalue()


def test_one_addition_names_half_layer_and_slot():
    """The run is docs/precision.md's (tests/cli_runs.py: computed once for the session)."""
    status, out, _ = cli_once("precision", "7650676663+0149460439", "--number", "float32")
    assert status == 1  # float32's sum is wrong: a warning and exit status 1
    lines = out.splitlines()
    assert lines[0] == "exact (fraction): 7650676663+0149460439=07800137102"
    assert lines[1] == "float32: 7650676663+0149460439=07800136314"
    assert lines[-2:] == ["first half-layer whose rounding error exceeds the margin: "
                          "layer 1 attention;", "  slot: cand6, cand7"]  # wrapped at 80 columns


def test_one_addition_that_float64_gets_right():
    status, out, _ = cli_once("precision", "7650676663+0149460439", "--number", "float64")
    assert status == 0 and out.endswith("float64 gives every digit of the exact run\n")


def test_patching_the_exact_values_changes_nothing():
    # The probe itself is sound: exact values patched into the exact run change no decision.
    from tinyadder.plan import compile_model
    from tinyadder.cache import stages
    model = build("repaired")
    _, cache = exact_run("7650676663+0149460439", "repaired")
    compiled = compile_model(model, cache.ns)
    for stage in stages(model)[1:]:
        point = stage.name
        assert precision.flips(compiled, cache.tokens, 22, 32, point, cache[point]) is None
    shifted = [[x * (1 + (j == 3 and pos <= 10) * Fraction(1, 10 ** 6))
                for j, x in enumerate(row)]     # a's place values off by 1e-6: a moves by
               for pos, row in enumerate(cache["blocks.0.hook_resid_mid"])]  # ~7650 units
    assert precision.flips(compiled, cache.tokens, 22, 32, "blocks.0.hook_resid_mid",
                           shifted) is not None


@pytest.mark.parametrize("argv, message", [
    (["precision", "--digits", "5000"], "N = 5000 digits is outside 1..2000"),
    (["precision", "--systems", "float16"], "unknown number system 'float16'"),
    (["precision", "1+1", "--digits", "3,4"], "with EXPR give one N in --digits"),
    (["precision", "1234+1", "--digits", "3"], "operand 1234 has more than 3 digits"),
])
def test_bad_lab_options_are_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("tinyadder precision: ")


def test_first_largest_is_argmax_of_exact_rationals():
    rng = random.Random(7)
    for _ in range(2000):
        values = [Fraction(rng.randint(-10 ** 30, 10 ** 30), rng.randint(1, 10 ** 30))
                  if rng.random() < 0.5 else Fraction(rng.randint(-5, 5), rng.randint(1, 3))
                  for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.3:  # a tie for the largest: the first one wins
            values[rng.randrange(len(values))] = max(values)
        assert first_largest(values) == argmax(values)
    tiny = Fraction(1, 2 ** 70)  # below the floors' resolution: decided exactly
    assert first_largest([tiny, 2 * tiny, 0]) == 1
    assert first_largest([-tiny, -2 * tiny]) == 0
