"""N-digit operands: the constants derived from N, their bounds, and sums for N = 1 .. 100."""

from collections.abc import Mapping
from fractions import Fraction
import math

import pytest

from tinyadder.adderboard import add as board_add, build_model
from tinyadder.addition import add, parse_expression, InputError
from tinyadder.cases import carry_pairs, edge_cases, random_pairs
from tinyadder.construction import MAX_DIGITS, build, constants
from tinyadder.analysis.ledger import ledger, totals
from tinyadder.numbers import DecimalSystem, ExpTerm, FractionSystem
from tinyadder.cache import run_with_cache


def test_constants_at_ten_are_the_published_ones():
    c = constants(10)
    assert (c["place"], c["special_key"], c["digit_key"], c["round_bias"], c["precision"]) == (
        10 ** 10, -40, -1000, 15, 40)
    model = build("published", 10)
    l0, l1 = model.blocks
    assert l0.attn.W_K == {"special": {"h3": 960}} and l0.attn.b_K == {"h3": -1000}
    assert l0.attn.W_V["special"]["h3"] == ExpTerm(Fraction(1), Fraction(40))  # 0.1 / S
    assert l0.attn.W_V["eq"] == {"h3": ExpTerm(Fraction(-11), Fraction(40)), "h4": 1}
    assert l0.mlp.W_in["count"] == {**{f"cand{u}": (u + Fraction(1, 2)) * 10 ** 12
                                       for u in range(10)}, "digit_pos": 10 ** 10}
    assert l1.attn.b_V == {"h0": 15} and l1.attn.W_V == {"digit_pos": {"h0": 100}}
    assert model.prompt.digits == 10 and build("published").meta == model.meta


def entries(model):
    """Every weight entry of the model: {(table, source, target): value}."""
    found = {("W_E", t, s): w for t, row in model.W_E.items() for s, w in row.items()}
    for i, block in enumerate(model.blocks):
        for part in (block.attn, block.mlp):
            for name in part.tables + (("slopes",) if part is block.attn else ()):
                table = getattr(part, name)
                for src, row in table.items():
                    if isinstance(row, Mapping):
                        found.update({(f"{i}.{name}", src, dst): w for dst, w in row.items()})
                    else:
                        found[(f"{i}.{name}", "bias", src)] = row
    return found


def partition(model):
    """Per table, which entries share a value: the shape a parameter count is taken from."""
    groups = {}
    for (table, src, dst), w in entries(model).items():
        groups.setdefault(table, {}).setdefault(w, set()).add((src, dst))
    return {table: sorted(sorted(g) for g in by_value.values())
            for table, by_value in groups.items()}


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_every_n_has_the_same_weight_entries_so_the_same_36_parameters(variant):
    reference = build(variant, 10)
    shape = partition(reference)
    for n in list(range(1, 60)) + list(range(60, MAX_DIGITS + 1, 7)) + [MAX_DIGITS]:
        model = build(variant, n)
        assert set(entries(model)) == set(entries(reference)), n
        assert 0 not in entries(model).values(), n
        assert partition(model) == shape, n


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_the_ledger_counts_36_for_every_n(variant):
    for n in (1, 2, 3, 10, 50, 151, 1000, MAX_DIGITS):  # 151: the value bias is exactly 1
        assert totals(ledger(build(variant, n))).params == 36, n


def test_refuses_n_outside_the_range():
    for n in (0, -1, MAX_DIGITS + 1):
        with pytest.raises(ValueError, match=f"outside 1..{MAX_DIGITS}"):
            build("repaired", n)


# The bounds of docs/digits.md, checked for every N in range with exact rationals.
LEAK = Fraction(32, 100)   # bos and '+' leakage into count, plus the shrunk place value


def key_error_bound(n):
    """16 * 10^N * e^special_key, bounded above with e^(3N+10) > 20^N * 22026."""
    assert constants(n)["special_key"] == -(3 * n + 10)
    return Fraction(16) * Fraction(10, 20) ** n / 22026


def test_the_exp_facts_the_bounds_use():
    assert math.exp(3) > 20 and math.exp(10) > 22026
    assert math.exp(constants(1)["digit_key"]) == 0.0  # digits: exactly invisible in float64


def test_round_bias_and_key_bounds_hold_for_every_n():
    for n in range(1, MAX_DIGITS + 1):
        c = constants(n)["round_bias"]
        first, last = c * (2 * n + 3) / 1000, c * (3 * n + 3) / 1000  # bias at 2N+2, 3N+2
        error = key_error_bound(n)
        assert Fraction(45, 100) < last <= Fraction(1, 2), n
        # the half-margin: distance of the decided value from both ends of its unit
        assert min(first, 1 - last - LEAK) - error > Fraction(15, 100), n
    assert constants(10)["round_bias"] * 23 / 1000 == Fraction(345, 1000)
    assert key_error_bound(10) < Fraction(1, 10 ** 6)


@pytest.mark.parametrize("n, pairs", [(3, 3), (10, 1)])
def test_decision_values_are_the_remaining_value_minus_candidates_plus_bias(n, pairs):
    # x_u = (i + 2) * cand_u / 1000 after layer 1's attention, in units of the sum:
    # R - (u + 1/2) * 10^(N - t) + bias, up to a leak in [0, 0.32) and the key error.
    model = build("repaired", n)
    c = constants(n)
    nines = 10 ** n - 1
    for a, b in [(nines, nines), (nines, 1), (nines // 3, nines // 7)][:pairs]:
        _, cache = run_with_cache(model, f"{a}+{b}")
        total, emitted = a + b, cache.text.split("=")[1]
        for t in range(n + 1):
            i = 2 * n + 2 + t
            remaining = total - int(emitted[:t] + "0" * (n + 1 - t) if t else 0)
            bias = c["round_bias"] * (i + 1) / 1000
            view = cache.view(("resid_mid", 1), i)
            for u in range(10):
                x = (i + 2) * view[f"cand{u}"] / 1000
                leak = x - (remaining - (u + Fraction(1, 2)) * 10 ** (n - t) + bias)
                assert -Fraction(1, 10 ** 6) < leak < LEAK, (a, b, t, u, float(leak))


def sums_right(model, ns, pairs):
    return [(a, b, got) for a, b in pairs if (got := add(model, ns, a, b)) != a + b]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 11, 20])
def test_decimal_edge_cases_and_random_pairs(n):
    model = build("repaired", n)
    assert sums_right(model, DecimalSystem(), list(edge_cases(n)) + random_pairs(5, digits=n)) == []


@pytest.mark.parametrize("n, extremes", [(50, 3), (100, 1)])
def test_decimal_long_operands(n, extremes):
    nines = 10 ** n - 1
    pairs = [(nines, nines), (nines, 1), (10 ** (n - 1), 0)][:extremes] + random_pairs(1, digits=n)
    assert sums_right(build("repaired", n), DecimalSystem(), pairs) == []


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_fraction_edge_cases_and_random_pairs(n):
    model = build("repaired", n)
    assert sums_right(model, FractionSystem(), list(edge_cases(n)) + random_pairs(2, digits=n)) == []


@pytest.mark.parametrize("n", [11, 20])
def test_fraction_long_operands(n):
    nines = 10 ** n - 1
    assert sums_right(build("repaired", n), FractionSystem(),
                      [(nines, nines), (nines, 1)] + random_pairs(1, digits=n)) == []


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 11, 20])
def test_fraction_sweep(n):
    model = build("repaired", n)
    assert sums_right(model, FractionSystem(), list(edge_cases(n)) + random_pairs(20, digits=n)) == []


@pytest.mark.slow
@pytest.mark.parametrize("n", [50, 100, 200])
def test_decimal_sweep(n):
    model = build("repaired", n)
    assert sums_right(model, DecimalSystem(), list(edge_cases(n)) + random_pairs(20, digits=n)) == []


def carries(n, every):
    """Every ``every``-th pair of the carries suite at N digits (cases.carry_pairs: sums whose
    low m columns are 10^m - g, g = 1..1000, for every m), in a fixed order."""
    suite = carry_pairs(1, digits=n)
    return [pair for cell in sorted(suite) for pair in suite[cell]][::every]


@pytest.mark.parametrize("n, every", [(20, 4), (50, 40)])
def test_carries_suite(n, every):
    pairs = carries(n, every)
    assert len(pairs) >= 10
    assert sums_right(build("repaired", n), DecimalSystem(), pairs) == []


@pytest.mark.slow
@pytest.mark.parametrize("n", [20, 50])
def test_carries_suite_in_full(n):
    assert sums_right(build("repaired", n), DecimalSystem(), carries(n, 1)) == []


def test_carries_suite_reaches_the_published_flaw():
    # The suite really lands where the published readout fails at N = 20 (else the tests above
    # would prove little).
    assert sums_right(build("published", 20), DecimalSystem(), carries(20, 4))


def test_operand_limit_follows_n():
    assert parse_expression("999+1", 3) == (999, 1)
    with pytest.raises(InputError, match="more than 3 digits.*at most 3 ASCII digits"):
        parse_expression("1000+1", 3)


def test_adderboard_build_model_takes_digits():
    model, meta = build_model("repaired", "decimal", digits=30)
    weights, ns = model
    assert weights.prompt.digits == 30 and ns.digits == 60 and meta["params"] == 36
    assert board_add(model, 10 ** 30 - 1, 1) == 10 ** 30


def test_model_meta_names_n_and_precision():
    model = build("repaired", 50)
    assert model.prompt.digits == 50
    assert model.meta["precision"].digits == 80
    assert "N + 30 for N = 50" in model.meta["precision"].why


@pytest.mark.parametrize("n", [1, 3])
def test_tracer_probes_hold_at_small_n(n):
    # The probes' slack for count follows the special key: e^-(3N+10) is 5.6e-9 at N = 3.
    import io
    from tinyadder.cli import main
    out = io.StringIO()
    nines = "9" * n
    assert main(["--digits", str(n), "--trace", "--check", "--model", "repaired",
                 f"{nines}+{nines}"], out=out, err=io.StringIO()) == 0
    assert "probed values within tolerance" in out.getvalue()
