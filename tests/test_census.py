"""The census against brute force: exact failing sets at N = 2 and 3, two counting methods
(on the models' offsets and on random ones), and everything the repository already knows
about the published model's failures."""

import random
from dataclasses import replace
from fractions import Fraction

import pytest

from census_fixtures import _name, brute_force, count_by_sum, load
from tinyadder import build, cases, number_system, run
from tinyadder.proof.census import (Census, Offset, census, examples,
                                             in_failing_set, offset_columns)
from tinyadder.proof.formulas import digit_formulas, layout
from tinyadder.proof.stress import GAINS, stress_model
from tinyadder.proof.windows import windows
from tinyadder.cli import main


def failing_set(result):
    n = result.digits
    return {(a, b) for a in range(10 ** n) for b in range(10 ** n)
            if in_failing_set(result.windows, result.offsets, n, a, b)}


@pytest.mark.parametrize("variant", ["published", "repaired"])
def test_real_models_have_no_failures_at_n2_like_the_brute_force(variant):
    result = census(build(variant, 2))
    expected, record = load(f"{variant}-n2")
    assert record["number"] == "fraction"
    assert result.count == len(expected) == 0 and result.windows == []


@pytest.mark.parametrize("gain", GAINS)
def test_census_equals_the_exact_brute_force_at_n2(gain):
    result = census(stress_model(gain, 2))
    expected, record = load(f"gain-{_name(gain)}-n2")
    assert record["number"] == "fraction" and record["count"] == len(expected)
    assert result.count == len(expected)
    assert failing_set(result) == expected
    assert result.uncertain == 0


# at N = 3: the counts agree, and every brute-force failure is in the census's set; equal
# sizes and inclusion make the sets equal
N3 = dict(zip(GAINS, (917, 9919, 46224, 91000, 203322)))


def check_n3(gain):
    result = census(stress_model(gain, 3))
    expected, _ = load(f"gain-{_name(gain)}-n3")
    assert result.count == len(expected) == N3[gain]
    assert all(in_failing_set(result.windows, result.offsets, 3, a, b) for a, b in expected)


def test_census_equals_the_brute_force_at_n3():
    check_n3(Fraction(1))


@pytest.mark.slow
@pytest.mark.parametrize("gain", GAINS)
def test_census_equals_the_brute_force_at_n3_every_gain(gain):
    check_n3(gain)


def test_gain_one_fiftieth_has_overlapping_windows():
    result = census(stress_model(Fraction(1, 50), 3))
    c = Census(3, result.windows, result.offsets)
    alone = sum(c.count(w, [])[0] for w in result.windows)
    assert alone > result.count == 203322  # some pairs lie in two windows


@pytest.mark.parametrize("jobs", [2, 3])
def test_jobs_split_the_windows_and_give_the_count_of_one_process(jobs):
    # six windows, two of them boundary windows, overlapping: each process counts its own
    # windows minus the earlier ones
    model = stress_model(Fraction(1, 50), 3)
    formulas = digit_formulas(model)
    one, split = census(model, formulas=formulas), census(model, formulas=formulas, jobs=jobs)
    assert len(one.windows) == 6 and sum(w.cond is not None for w in one.windows) == 2
    assert (split.count, split.uncertain, split.windows) == (one.count, 0, one.windows)
    assert one.count == N3[Fraction(1, 50)]


def windows_and_offsets(model):
    formulas, lay = digit_formulas(model), layout(model)
    return windows(formulas), {f.t: offset_columns(f, lay) for f in formulas}


def two_methods(gain, n):
    wins, offsets = windows_and_offsets(stress_model(gain, n))
    assert Census(n, wins, offsets).count_union() == count_by_sum(n, wins, offsets)


@pytest.mark.parametrize("gain", GAINS)
def test_two_counting_methods_agree(gain):
    two_methods(gain, 2)


@pytest.mark.slow
@pytest.mark.parametrize("gain", GAINS)
def test_two_counting_methods_agree_at_n3(gain):
    two_methods(gain, 3)


def scrambled(n, wins, offsets, seed, guard, whole=True):
    """The same windows with random offsets: every column coefficient and constant a random
    rational, every guard ``guard``, each boundary threshold at the offset of a random pair
    of its window (so that pairs fall on both sides of it, and on it). ``whole=False``:
    every whole window takes a threshold too, over its whole range of residues (which
    ``windows`` never builds, but the counting allows: windows then overlap)."""
    rng = random.Random(seed)
    q = lambda: Fraction(rng.randint(-999, 999), rng.randint(1, 99))  # noqa: E731
    new = {t: Offset(q(), tuple((q(), q(), q()) for _ in off.columns), guard)
           for t, off in offsets.items()}
    out = []
    for w in wins:
        if w.cond is None and not whole:
            w = replace(w, cond=(rng.choice([">", "<="]), 0))
        if w.cond is not None:
            s = rng.choice([s for s in range(2 * 10 ** n - 1) if w.holds_for(s, n)])
            a = rng.randint(max(0, s - 10 ** n + 1), min(s, 10 ** n - 1))
            w = replace(w, cond=(w.cond[0], new[w.t].at(a, s - a, s)))
        out.append(w)
    return out, new


def random_offsets_agree(gain, n, seeds, whole=True):
    wins, offsets = windows_and_offsets(stress_model(gain, n))
    assert any(w.cond is not None for w in wins)
    uncertain = 0
    for seed in seeds:
        for guard in (Fraction(0), Fraction(1, 3)):
            ws, offs = scrambled(n, wins, offsets, seed, guard, whole)
            got = Census(n, ws, offs).count_union()
            assert got == count_by_sum(n, ws, offs)
            uncertain += got[1]
    assert uncertain  # the guards put some pairs within reach of a threshold


@pytest.mark.parametrize("gain", GAINS[2:])
def test_random_offsets_count_like_the_sum_by_sum_count(gain):
    # columns with no place-value structure at all, and uncertain pairs (guard 1/3)
    random_offsets_agree(gain, 2, range(4))


def test_random_offsets_in_overlapping_boundary_windows():
    # two thresholds live in one count (the 1/50 model's windows overlap once all have one)
    random_offsets_agree(Fraction(1, 50), 2, range(4), whole=False)


def test_boxes_rounded_inwards_keep_the_count(monkeypatch):
    """The memo keeps each box with its ends rounded inwards to ``KEPT_BITS`` bits below
    its threshold's size: at 4 bits (of the random offsets' 20 to 40) most boxes shrink or
    vanish, and the count is still the sum-by-sum count, uncertain pairs included."""
    from tinyadder.proof import columns
    monkeypatch.setattr(columns, "KEPT_BITS", 4)
    random_offsets_agree(Fraction(1, 20), 2, [1])
    random_offsets_agree(Fraction(1, 50), 2, [0], whole=False)


def test_boxes_keep_short_ends_and_hold_only_values_inside():
    """A box of 5,000-bit ends is kept in about KEPT_BITS bits; a value is found only
    inside the exact box, and every value inside it, a 2^shift from its ends, is found."""
    from tinyadder.proof.columns import INF, KEPT_BITS, _Boxes
    rng = random.Random(7)
    shift = 5000 - KEPT_BITS
    boxes = _Boxes([shift])
    exact = []
    for _ in range(50):
        lo = rng.getrandbits(5000)
        hi = lo + rng.getrandbits(4800 + rng.randrange(200))
        exact.append((lo, hi))
        boxes.add(((lo, hi),), len(exact), False)
    boxes.add(((-INF, -1),), -1, False)
    assert all(abs(e).bit_length() <= KEPT_BITS + 2 for e in boxes.los if e != -INF)
    for _ in range(2000):
        x = rng.getrandbits(5000) if rng.random() < 0.5 else -rng.getrandbits(5000)
        hit = boxes.find([x])
        inside = [k for k, (lo, hi) in enumerate(exact, 1) if lo <= x <= hi]
        if hit is not None:
            (lo, hi), = hit[0]
            assert lo <= x <= hi
            assert hit[1] == -1 if x < 0 else (hit[1] in inside and
                                               exact[hit[1] - 1][0] <= lo <= hi <= exact[hit[1] - 1][1])
        elif x < 0:
            raise AssertionError("a value of the half-line is not found")
        for k in inside:
            lo, hi = exact[k - 1]
            assert not (lo + 2 ** shift <= x <= hi - 2 ** shift) or hit is not None


@pytest.mark.slow
@pytest.mark.parametrize("gain", GAINS)
def test_random_offsets_count_like_the_sum_by_sum_count_at_n3(gain):
    random_offsets_agree(gain, 3, [0])


@pytest.mark.slow
def test_random_offsets_in_overlapping_boundary_windows_at_n3():
    random_offsets_agree(Fraction(1, 50), 3, [0], whole=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["published-n2", "gain-1_10-n2", "gain-1_50-n2"])
def test_fixture_regenerates(name):
    from census_fixtures import models
    model, system = next((m, s) for n, m, s in models() if n == name)
    assert set(brute_force(model, system)) == load(name)[0]


# --- what the repository already knows, at N = 10 -------------------------------------------

@pytest.fixture(scope="module")
def published10():
    model = build("published")
    return (model,) + windows_and_offsets(model)


def test_the_documented_counterexample_is_in_a_window(published10):
    _, wins, offsets = published10
    assert in_failing_set(wins, offsets, 10, *cases.COUNTEREXAMPLE)
    assert not in_failing_set(wins, offsets, 10, 7650676663, 149460439)


def test_the_carries_suite_failures_are_exactly_the_census_windows(published10):
    model, wins, offsets = published10
    ns = number_system("float")  # the carries report is identical in float, decimal, fraction
    for pairs in cases.carry_pairs(2).values():
        for a, b in pairs:
            wrong = int(run(model, ns, a, b).split("=")[1]) != a + b
            assert wrong == in_failing_set(wins, offsets, 10, a, b), (a, b)


@pytest.mark.slow
def test_the_repaired_model_has_no_window_and_a_clean_carries_suite():
    model = build("repaired")
    assert windows(digit_formulas(model)) == []
    ns = number_system("float")
    for pairs in cases.carry_pairs(1).values():
        assert all(int(run(model, ns, a, b).split("=")[1]) == a + b for a, b in pairs)


def test_random_failure_rate_matches_the_census_fraction():
    model = stress_model(Fraction(1, 10), 5)
    result = census(model)
    rng = random.Random(7)
    n, draws = 5, 4000
    ns = number_system("float")
    hits = 0
    for _ in range(draws):
        a, b = rng.randrange(10 ** n), rng.randrange(10 ** n)
        hits += int(run(model, ns, a, b).split("=")[1]) != a + b
    f = float(result.fraction)
    sigma = (f * (1 - f) / draws) ** 0.5
    assert abs(hits / draws - f) < 5 * sigma


def test_census_examples_fail_in_the_interpreter():
    model = stress_model(Fraction(1, 20), 3)
    result = census(model)
    ns = number_system("fraction")
    for w in result.windows:
        for a, b in examples(result, w):
            assert int(run(model, ns, a, b).split("=")[1]) != a + b


def test_census_command(capsys):
    assert main(["census", "--digits", "3"]) == 0
    out = capsys.readouterr().out
    assert "failing pairs: 0" in out
    assert main(["census", "--digits", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_census_prints_its_memory_estimate_beside_its_time(capsys):
    """The estimate before counting gives time and memory (the memo tables' 1.8-fold growth
    per digit: 70 MB at N = 14, about 0.27 GB in all at N = 16)."""
    import io
    import types
    from tinyadder.cli import main
    from tinyadder.proof.census import estimate_bytes
    err = io.StringIO()
    assert main(["census", "--digits", "2"], out=io.StringIO(), err=err) == 0
    assert any("counting should take about" in line and "MB of memory" in line
               for line in err.getvalue().splitlines())
    boundary = [types.SimpleNamespace(cond=(">", 0))]   # a window with a threshold
    assert estimate_bytes([], 16) == 45 * 10 ** 6
    assert 0.25 * 10 ** 9 < estimate_bytes(boundary, 16) < 0.3 * 10 ** 9 < 4 * 10 ** 9
