"""The search's number system (``setsystem``) is the kernel's (``setcheck``) over the
search's regions: its box and fold over a ``sets.Region`` equal the kernel's over the region
the checker rebuilds from the same splits, on random forms over random regions, so the
search decides every leaf as the checker does."""

import random

import pytest

from tinyadder import build
from tinyadder.proof.kernel import setcheck
from tinyadder.proof.search.sets import Region
from tinyadder.proof.search.setsystem import ONE, SetSystem, SetValue

ADDER1 = "tests/models/adder1.json"
N = 3


def _region(rng):
    """A region cut by a few random splits, and the checker's record of the same region."""
    ours, theirs = Region.every(N), setcheck.root(N)
    for _ in range(rng.randrange(8)):
        split = rng.choice(
            [["a", rng.randrange(N), rng.randrange(9)], ["b", rng.randrange(N), rng.randrange(9)],
             ["s", rng.randrange(N), rng.randrange(9)], ["c", rng.randrange(1, N + 1)]])
        try:
            children = ours.children(split)
        except ValueError:
            continue
        side = rng.randrange(2)
        ours, theirs = children[side], setcheck.cut(theirs, N, split)[side]
    return ours, theirs


def _coefs(rng):
    """Random terms: digits, carries and indicators of a few columns, some large, some not."""
    names = ([(x, j) for x in "ab" for j in range(N)] + [("c", j) for j in range(1, N + 1)]
             + [(x, j, d) for x in "abs" for j in range(N) for d in range(10)])
    scale = rng.choice([1, ONE >> 60, ONE, ONE << 40])
    coefs = {v: rng.randrange(-scale, scale + 1) or 1 for v in rng.sample(names, rng.randrange(1, 25))}
    if rng.randrange(2):   # one column far above the rest: the fold's case
        big = rng.choice(list(coefs))[:2]
        coefs.update({v: c << 50 for v, c in coefs.items() if v[:2] == big})
    return coefs


@pytest.mark.parametrize("seed", range(40))
def test_the_box_and_the_fold_are_the_checkers(seed):
    rng = random.Random(seed)
    model = build(ADDER1)
    ours, check = SetSystem(model), setcheck.FormSystem(model)
    folds = 0
    for _ in range(5):
        region, record = _region(rng)
        if region.count() == 0:
            continue
        ours.at(region)
        check.at(record, N)
        for _ in range(10):
            coefs = _coefs(rng)
            k, lo, width = rng.randrange(-ONE, ONE), rng.randrange(-9, 9), rng.randrange(99)
            x = SetValue(ours, k, dict(coefs), lo, lo + width)
            f = setcheck.Form(check, k, dict(coefs), lo, lo + width)
            assert ours.grid_box(x) == check.grid_box(f)
            col, folded = ours.near_column(x)
            col2, folded2 = check.near_column(f)
            assert col == col2
            folds += col is not None and len(set(v[:2] for v in coefs)) > 1
            assert (folded.k, folded.coefs, folded.lo, folded.hi) == \
                (folded2.k, folded2.coefs, folded2.lo, folded2.hi)
    assert folds


def test_a_remembered_box_is_forgotten_with_its_region():
    """The box, fold and reciprocal remembered for a value hold over the region they were
    taken on only: the same value over a narrower region has the narrower box."""
    ns = SetSystem(build(ADDER1))
    x = SetValue(ns, ONE, {("a", 0): ONE, ("b", 0): 2 * ONE})
    whole = ns.at(Region.every(1)).grid_box(x)
    assert whole == (ONE, 28 * ONE) and ns.grid_box(x) == whole
    inverse = ns.recall("1/x", x, ns.reciprocal)   # as a division takes it
    assert ns.recall("1/x", x, ns.reciprocal) is inverse
    narrow = Region.every(1).children(["a", 0, 4])[1]
    assert ns.at(narrow).grid_box(x) == (6 * ONE, 28 * ONE)
    assert ns.recall("1/x", x, ns.reciprocal) is not inverse


def test_a_constant_has_its_box_before_any_region():
    """A constant's box needs no region: a product of two constant intervals, as a model's
    readout weights are multiplied out before the first region (``Compiled.readout_map``)."""
    ns = SetSystem(build(ADDER1))
    x = ns.grid_interval(2 * ONE, 3 * ONE)
    assert ns.grid_box(x) == (2 * ONE, 3 * ONE)
    lo, hi = ns.grid_box(x * x)
    assert lo <= 4 * ONE and 9 * ONE <= hi


@pytest.mark.parametrize("seed", range(10))
def test_a_product_by_a_grid_number_is_the_quotients_rule(seed):
    """times(num, 2^SCALE), taken by shifts, is times(3 num, 3 2^SCALE), taken by division:
    the same floors and the same roundings added to hi."""
    rng = random.Random(seed)
    ns = SetSystem(build(ADDER1))
    for _ in range(20):
        coefs = _coefs(rng)
        lo = rng.randrange(-ONE, ONE)
        x = SetValue(ns, rng.randrange(-ONE << 8, ONE << 8), coefs, lo, lo + rng.randrange(ONE))
        num = rng.choice([1, -1]) * rng.randrange(1, ONE << 4)
        by_shift, by_division = x.times(num, ONE), x.times(3 * num, 3 * ONE)
        assert (by_shift.k, by_shift.coefs, by_shift.lo, by_shift.hi) == \
            (by_division.k, by_division.coefs, by_division.lo, by_division.hi)


def test_an_enclosure_remembered_is_the_one_taken_afresh():
    """``grid_ends`` remembers f's enclosure over [lo, hi] across regions: a remembered one
    is the enclosure a fresh system takes, whatever region came between."""
    model = build(ADDER1)
    ns, fresh = SetSystem(model), SetSystem(model)
    ends = [(ns.enclose.exp, -3 * ONE, ONE // 7), (ns.enclose.sqrt, ONE // 3, 5 * ONE)]
    first = [ns.grid_ends(f, lo, hi) for f, lo, hi in ends]
    ns.at(Region.every(2).children(["c", 1])[1])
    again = [ns.grid_ends(f, lo, hi) for f, lo, hi in ends]
    assert all(a is b for a, b in zip(again, first))
    assert again == [fresh.grid_ends(getattr(fresh.enclose, f.__name__), lo, hi)
                     for f, lo, hi in ends]
