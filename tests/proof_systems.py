"""The prover's number system and the checker's side by side, for tests that hold one rule
to both (tests/test_prove_generic.py, tests/test_prove_rope10000.py)."""

from fractions import Fraction

from tinyadder.analysis.proof import setcheck
from tinyadder.analysis.proof.sets import Region
from tinyadder.analysis.proof.setsystem import ONE, SetSystem


def both_systems(model, n):
    """The prover's number system and the checker's, each over every pair of N = n digits,
    with a maker of the form c x_v and a value's box as rationals in each."""
    prover = SetSystem(model).at(Region.every(n))
    checker = setcheck.FormSystem(model)
    checker.at(setcheck.root(n), n)
    return ((prover, lambda v, c: prover.variable(v, c), prover.box),
            (checker, lambda v, c: setcheck.Form(checker, 0, {v: int(c * ONE)}),
             lambda f: tuple(Fraction(e, ONE) for e in checker.box(f))))
