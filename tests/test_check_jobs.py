"""The checker's speed: its faster range of a constrained column equals the walk over its
steps."""

import random

from tinyadder.analysis.proof import setcheck
from tinyadder.modelfile import load


def test_a_constrained_column_s_range_is_the_walk_over_its_steps():
    """FormSystem.tied_span: the least and greatest of a column's terms over its steps, as
    every step's value (A x + B y + C o + the digit, sum and carry indicators) gives them,
    over random terms and regions of a 3-digit model's columns."""
    ns = setcheck.FormSystem(load("tests/models/adder1.json"))
    rng = random.Random(20)
    for _ in range(300):
        region = setcheck.root(3)
        for _ in range(rng.randrange(1, 6)):
            kind = rng.choice("abcs")
            j = rng.randrange(1, 4) if kind == "c" else rng.randrange(3)
            if kind == "c":
                if region["c"][j] == {0, 1}:
                    region = setcheck.cut(region, 3, ["c", j])[rng.randrange(2)]
                continue
            lo, hi = region[kind][j]
            if lo < hi:
                region = setcheck.cut(region, 3, [kind, j, rng.randrange(lo, hi)])[rng.randrange(2)]
        ns.at(region, 3)
        for j in ns.tied:
            if not ns.tied[j]:
                continue
            names = [("a", j), ("b", j), ("c", j + 1)] + [(x, j, d) for x in "abs"
                                                          for d in range(10)]
            terms = {v: rng.randrange(-50, 50) for v in rng.sample(names, rng.randrange(1, 8))}
            terms = {v: c for v, c in terms.items() if c}
            g = terms.get
            values = [g(("a", j), 0) * x + g(("b", j), 0) * y + g(("c", j + 1), 0) * o
                      + g(("a", j, x), 0) + g(("b", j, y), 0) + g(("s", j, (c + x + y) % 10), 0)
                      for c, x, y, o in ns.tied[j]]
            assert ns.tied_span(j, terms) == (min(values), max(values))
