"""``check-certificate --jobs N``: the checker's leaves re-decided in N processes give the
same verdict and message for every N (the first failure in the trees' order), and the
checker's faster range of a constrained column equals the walk over its steps."""

import copy
import random

import pytest

from tinyadder import models
from tinyadder.proof.kernel import floatcheck, setcheck
from tinyadder.proof import reading
from tinyadder.proof.kernel.claim import Invalid
from tinyadder.cli import main
from tinyadder.modelfile import load

PROOFS = "tests/fixtures/proofs"
SETS = f"{PROOFS}/adder1_squares.cert.json"
FLOAT = f"{PROOFS}/adder1.float32.cert.json"


def verdict(check, cert, jobs):
    """check(cert, jobs=jobs)'s line, or its Invalid's message."""
    try:
        return check(cert, jobs=jobs)
    except Invalid as why:
        return f"invalid: {why}"


def first_bound_split(tree):
    """A split node whose subtree holds a bound leaf (the first, depth first)."""
    if "split" in tree:
        for kid in tree["children"]:
            found = first_bound_split(kid)
            if found is not None:
                return found
        return tree
    return None


def tampered(cert):
    """(a leaf that fails at position 0 and a broken split at the last position, the
    broken split alone): the first's message is the leaf's, for every N."""
    both = copy.deepcopy(cert)
    node = first_bound_split(both["positions"][0])
    node.clear()
    node["leaf"] = "bound"   # a region whose target digit is not one digit, or undecided
    both["positions"][-1] = {"split": ["x", 0, 0], "children": []}
    alone = copy.deepcopy(cert)
    alone["positions"][-1] = both["positions"][-1]
    return both, alone


@pytest.mark.parametrize("path, check", [(SETS, setcheck.check), (FLOAT, floatcheck.check)])
def test_the_verdict_and_message_are_the_same_for_every_n(path, check):
    cert = reading.read(path)
    both, alone = tampered(cert)
    lines = []
    for data in (cert, both, alone):
        found = {verdict(check, data, jobs) for jobs in (1, 2, 3)}
        assert len(found) == 1
        lines += found
    assert lines[0].startswith("certificate valid: ")
    assert lines[1].startswith(("invalid: at position 0, token ", "invalid: a leaf at position 0"))
    assert lines[2] == "invalid: unknown split ['x', 0, 0]"


def test_the_leaves_before_a_broken_split_are_re_decided_first():
    """The walk reports the first failure in the trees' order: a broken split after every
    leaf that holds is reported once the leaves are re-decided, with their count in the
    progress."""
    cert = reading.read(SETS)
    _, alone = tampered(cert)
    seen = []
    with pytest.raises(Invalid, match=r"unknown split \['x', 0, 0\]"):
        setcheck.check(alone, progress=lambda done, total, what: seen.append((done, what)),
                       jobs=2)
    assert seen and seen[-1][1] == " leaves, position 0"
    assert [d for d, _ in seen] == list(range(1, len(seen) + 1))


def test_the_cli_prints_the_same_for_every_n(capsys):
    for path in (SETS, FLOAT):
        outs = []
        for jobs in ("1", "2"):
            assert main(["check-certificate", path, "--jobs", jobs]) == 0
            outs.append(capsys.readouterr().out)
        assert outs[0] == outs[1] and outs[0].startswith("certificate valid: ")
    assert main(["check-certificate", SETS, "--jobs", "0"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        "tinyadder check-certificate: error: argument --jobs:")


def random_region(rng, n):
    """A region of n-digit pairs cut by one to five random splits."""
    region = setcheck.root(n)
    for _ in range(rng.randrange(1, 6)):
        kind = rng.choice("abcs")
        if kind == "c":
            j = rng.randrange(1, n + 1)
            if region["c"][j] == {0, 1}:
                region = setcheck.cut(region, n, ["c", j])[rng.randrange(2)]
            continue
        j = rng.randrange(n)
        lo, hi = region[kind][j]
        if lo < hi:
            region = setcheck.cut(region, n, [kind, j, rng.randrange(lo, hi)])[rng.randrange(2)]
    return region


def test_a_constrained_column_s_range_is_the_walk_over_its_steps():
    """FormSystem.tied_span: the least and greatest of a column's terms over its steps, as
    every step's value (A x + B y + C o + the digit, sum and carry indicators) gives them,
    over random terms and regions of a 3-digit model's columns."""
    ns = setcheck.FormSystem(load("tests/models/adder1.json"))
    rng = random.Random(20)
    for _ in range(300):
        ns.at(random_region(rng, 3), 3)
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


def reference_box(ns, coefs):
    """The box as first written: each variable over its digits, a column's indicators
    together, a constrained column's terms together over every one of its steps."""
    lo = hi = 0
    tied, groups = {}, set()
    for v, c in coefs.items():
        j = v[1] - 1 if v[0] == "c" else v[1]
        if j in ns.tied:
            tied.setdefault(j, {})[v] = c
        elif len(v) == 3:
            groups.add(v[:2])
    for v, c in coefs.items():
        if len(v) == 3 or v in groups or (v[1] - 1 if v[0] == "c" else v[1]) in tied:
            continue
        r = ns.allowed[v]
        lo, hi = (lo + c * r[0], hi + c * r[-1]) if c > 0 else (lo + c * r[-1], hi + c * r[0])
    for col in groups:
        values = [coefs.get(col, 0) * d + coefs.get(col + (d,), 0) for d in ns.allowed[col]]
        lo, hi = lo + min(values), hi + max(values)
    for j, terms in tied.items():
        g = terms.get
        values = [g(("a", j), 0) * x + g(("b", j), 0) * y + g(("c", j + 1), 0) * o
                  + g(("a", j, x), 0) + g(("b", j, y), 0) + g(("s", j, (c + x + y) % 10), 0)
                  for c, x, y, o in ns.tied[j]]
        if values:
            lo, hi = lo + min(values), hi + max(values)
    return lo, hi


def test_the_box_and_one_column_by_units_are_the_first_written():
    """FormSystem.box (by units) equals the box as first written, and one_column's column
    and folded interval are the first rule's (the others' box against 2^-FOLD_BITS of the
    widest column's span), over random forms and regions; a repeated call is memoised."""
    ns = setcheck.FormSystem(load("tests/models/adder1.json"))
    rng = random.Random(21)
    for _ in range(300):
        ns.at(random_region(rng, 3), 3)
        names = [(x, j) for x in "ab" for j in range(3)] + [("c", j) for j in (1, 2, 3)] + \
            [(x, j, d) for x in "abs" for j in range(3) for d in range(10)]
        coefs = {v: rng.choice([1, 1 << 45, -(1 << 50)]) * rng.randrange(1, 99)
                 for v in rng.sample(names, rng.randrange(1, 9))}
        f = setcheck.Form(ns, 7, coefs, -3, 5)
        lo, hi = reference_box(ns, coefs)
        assert ns.grid_box(f) == (7 + lo - 3, 7 + hi + 5)
        col, folded = ns.near_column(f)
        assert ns.near_column(f)[1] is folded
        by = {}
        for v, c in coefs.items():
            by.setdefault(setcheck._col(v), {})[v] = c
        if len(by) < 2:
            assert folded is f
            continue
        spans = {c: reference_box(ns, terms) for c, terms in by.items()}
        widest = max(spans, key=lambda c: spans[c][1] - spans[c][0])
        olo, ohi = reference_box(ns, {v: c for v, c in coefs.items()
                                      if setcheck._col(v) != widest})
        if (ohi - olo) << setcheck.FOLD_BITS > spans[widest][1] - spans[widest][0]:
            assert (col, folded) == (None, f)
        else:
            assert col == widest and folded.coefs == by[widest]
            assert (folded.k, folded.lo, folded.hi) == (7, -3 + olo, 5 + ohi)


def test_a_constant_is_folded_before_any_region():
    """A constant expression (kswain98-8's cos of a constant) is evaluated as the model is
    compiled, before the checker takes any region: no column is constrained yet."""
    ns = floatcheck.FloatFormSystem(models.build("kswain98-8"), "float32")
    assert ns.tied == {} and ns.near_column(ns.one) == (None, ns.one)
    assert floatcheck.FloatLeaves(models.build("kswain98-8"), "float32").prompt()[1] > 0


def holds_pair(region, n, a, b):
    """Whether the pair (a, b) of n-digit numbers lies in ``region``: every column's digits,
    sum digit and carry in its ranges."""
    c = 0
    for j in range(n):
        x, y = a // 10 ** j % 10, b // 10 ** j % 10
        s, out = (x + y + c) % 10, (x + y + c) // 10
        if not (c in region["c"][j] and all(lo <= v <= hi for v, (lo, hi) in
                                            ((x, region["a"][j]), (y, region["b"][j]),
                                             (s, region["s"][j])))):
            return False
        c = out
    return c in region["c"][n]


def test_a_split_s_children_partition_its_region_and_count_it():
    """setcheck.cut: every pair of a region lies in exactly one child, and ``count`` is the
    number of pairs it holds, over random regions and splits of 2-digit pairs (the walk
    takes this from the construction and checks no sum of counts)."""
    rng, n = random.Random(22), 2
    pairs = [(a, b) for a in range(100) for b in range(100)]
    for _ in range(5):
        region = random_region(rng, n)
        open_splits = [["c", j] for j in range(1, n + 1) if region["c"][j] == {0, 1}] + \
            [[x, j, m] for x in "abs" for j in range(n)
             for m in range(region[x][j][0], region[x][j][1])]
        kids = setcheck.cut(region, n, rng.choice(open_splits))
        sizes = [0] * (len(kids) + 1)
        for p in pairs:
            homes = [k for k, kid in enumerate(kids) if holds_pair(kid, n, *p)]
            assert len(homes) == holds_pair(region, n, *p)
            sizes[-1] += len(homes)
            for k in homes:
                sizes[k] += 1
        assert [setcheck.count(r, n) for r in kids + [region]] == sizes


def test_a_forms_box_holds_its_range_over_the_pairs():
    """``Leaves.holds`` takes a logit difference as above 0 where its box's least end is:
    sound because the box holds the walk's exact range (and ``range(least=True)`` gives the
    walk's least end alone), over random forms and regions of 3-digit pairs."""
    ns = setcheck.FormSystem(load("tests/models/adder1.json"))
    rng = random.Random(23)
    names = [(x, j) for x in "ab" for j in range(3)] + [("c", j) for j in (1, 2, 3)] + \
        [(x, j, d) for x in "abs" for j in range(3) for d in range(10)]
    for _ in range(120):
        region = random_region(rng, 3)
        if not setcheck.count(region, 3):
            continue   # no pair: the walk's range is (0, 0), the box any
        ns.at(region, 3)
        coefs = {v: rng.randrange(-99, 99) or 1 for v in rng.sample(names, rng.randrange(1, 9))}
        f = setcheck.Form(ns, rng.randrange(-500, 500), coefs, -3, 5)
        (blo, bhi), (lo, hi) = ns.grid_box(f), ns.range(f)
        assert blo <= lo <= hi <= bhi
        assert ns.range(f, least=True) == (lo, None)
