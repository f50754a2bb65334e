"""The prover's number system and regions and the checker's side by side, for tests that
hold one rule to both (tests/test_prove_*.py)."""

from fractions import Fraction

from tinyadder.proof.kernel import setcheck
from tinyadder.proof.search.sets import Region
from tinyadder.proof.search.setsystem import ONE, SetSystem


def both_systems(model, n):
    """The prover's number system and the checker's, each over every pair of N = n digits,
    with a maker of the form c x_v and a value's box as rationals in each."""
    prover = SetSystem(model).at(Region.every(n))
    checker = setcheck.FormSystem(model)
    checker.at(setcheck.root(n), n)
    return ((prover, lambda v, c: prover.variable(v, c), prover.box),
            (checker, lambda v, c: setcheck.Form(checker, 0, {v: int(c * ONE)}),
             lambda f: tuple(Fraction(e, ONE) for e in checker.grid_box(f))))


def cut_regions(cuts, n=10):
    """The prover's region of every N = n digit pair cut by ``cuts`` ((split, child) each),
    and the checker's record of the same region."""
    region, checked = Region.every(n), setcheck.root(n)
    for split, child in cuts:
        region = region.children(split)[child]
        checked = setcheck.cut(checked, n, list(split))[child]
    return region, checked
