"""The generic prover (proof/search/generic.py) and its certificate checker (setcheck.py):
verdicts against brute force over every pair, regions against enumeration, certificates
against tampering, and agreement with the closed-form prover."""

import json
import random
from dataclasses import replace
from fractions import Fraction

import pytest

from tinyadder import build, models
from tinyadder.addition import add
from tinyadder.analysis import board
from tinyadder.proof.kernel import setcheck
from tinyadder.proof import reading
from tinyadder.proof.search import generic
from tinyadder.proof.kernel.claim import Invalid
from tinyadder.proof.kernel.claim import differs, model_hash
from tinyadder.proof.prove import prove as closed_form
from tinyadder.proof.search.sets import Region, a_var, b_var, c_var
from tinyadder.proof.search.setsystem import ONE, SetSystem
from tinyadder.numbers.enclosures import IntervalSystem
from tinyadder.cli import main
from tinyadder.modelfile import dump, loads

from proof_systems import both_systems, cut_regions

ADDER1 = "tests/models/adder1.json"


def mutant(model, field, changes):
    """``model`` with entries of its first block's FFN table ``field`` changed."""
    block = model.blocks[0]
    table = dict(getattr(block.mlp, field))
    table.update({k: Fraction(v) for k, v in changes.items()})
    blocks = (replace(block, mlp=replace(block.mlp, **{field: table})),) + model.blocks[1:]
    return replace(model, name=model.name + "-mutant", blocks=blocks)


def wrong_pairs(model):
    """Brute force: every pair the model adds wrong (exact runs)."""
    n = model.prompt.digits
    return {(a, b) for a in range(10 ** n) for b in range(10 ** n)
            if add(model, "fraction", a, b) != a + b}


# ---- regions --------------------------------------------------------------------------------

def random_region(rng, n):
    region = Region.every(n)
    for _ in range(rng.randint(0, 5)):
        kind = rng.choice("abcs")
        j = rng.randrange(n)
        try:
            if kind in "ab":
                lo, hi = getattr(region, kind)[j]
                split = (kind, j, rng.randint(lo, hi - 1)) if hi > lo else None
            elif kind == "c":
                split = ("c", j + 1)
            else:
                lo, hi = region.sum_range(j)
                split = ("s", j, rng.randint(lo, hi - 1)) if hi > lo else None
            if split:
                region = rng.choice(region.children(split))
        except ValueError:
            pass
    return region


def _pairs_with_digits(n):
    """Every pair with its digits, its sum's digits and its carries, column 0 first."""
    out = []
    for a in range(10 ** n):
        for b in range(10 ** n):
            out.append((a, b, [a // 10 ** j % 10 for j in range(n)],
                        [b // 10 ** j % 10 for j in range(n)],
                        [(a + b) // 10 ** j % 10 for j in range(n)],
                        [(a % 10 ** j + b % 10 ** j) // 10 ** j for j in range(n + 1)]))
    return out


ALL2 = _pairs_with_digits(2)


def members(region):
    """The region's pairs, by a test of every pair of two digits."""
    n = region.digits
    box = [(region.a[j], region.b[j], region.sum_range(j)) for j in range(n)]
    return [(a, b) for a, b, da, db, ds, carry in ALL2
            if all(x[0] <= da[j] <= x[1] and y[0] <= db[j] <= y[1] and z[0] <= ds[j] <= z[1]
                   for j, (x, y, z) in enumerate(box))
            and all(c == carry[j] for j, c in region.carries)]


def test_regions_count_bound_and_enumerate_exactly():
    rng = random.Random(7)
    for _ in range(8):
        region = random_region(rng, 2)
        pairs = members(region)
        assert region.count() == len(pairs) and region.pairs(10 ** 4) == pairs
        coefs = {v: Fraction(rng.randint(-9, 9), rng.randint(1, 4))
                 for v in (a_var(0), a_var(1), b_var(0), b_var(1), c_var(1), c_var(2))}
        def value(a, b):
            digit = {"a": lambda j: a // 10 ** j % 10, "b": lambda j: b // 10 ** j % 10,
                     "c": lambda j: (a % 10 ** j + b % 10 ** j) // 10 ** j}
            return sum(c * digit[v[0]](v[1]) for v, c in coefs.items())
        found = region.bound(coefs)
        if not pairs:
            assert found is None
            continue
        low, high, at_low, at_high = found
        assert low == min(value(*p) for p in pairs) == value(*at_low)
        assert high == max(value(*p) for p in pairs) == value(*at_high)


def test_children_partition_their_parent():
    region = Region.every(2)
    for split in (("a", 1, 4), ("b", 0, 0), ("c", 1), ("c", 2), ("s", 0, 6), ("s", 1, 8)):
        kids = region.children(split)
        sets = [set(members(k)) for k in kids]
        assert set().union(*sets) == set(members(region))
        assert sum(len(s) for s in sets) == len(members(region))


# ---- verdicts against brute force -----------------------------------------------------------

@pytest.fixture(scope="module")
def adder1():
    """adder1, its generic outcome and its certificate (JSON round trip)."""
    model = build(ADDER1)
    outcome = generic.prove(model)
    cert = json.loads(json.dumps(generic.certificate(outcome, model, "adder1")))
    return model, outcome, cert


MUTATION = {"s9": "-35/4", "s10": "-37/4"}


def test_adder1_is_proved_and_adds_every_pair(adder1):
    model, outcome, cert = adder1
    assert wrong_pairs(model) == set()
    assert outcome.verdict == "proved"
    assert setcheck.check(cert).startswith("certificate valid: 'adder1' model (sha256 ")


def test_a_mutant_fails_on_pairs_the_brute_force_finds():
    """The tens unit's thresholds moved (s9 -35/4, s10 -37/4): a + b = 9 gives a tens value
    1/2, a tie at the tens digit (argmax takes 0, right) and a units digit 4 (wrong)."""
    model = mutant(build(ADDER1), "b_gate", MUTATION)
    wrong = wrong_pairs(model)
    assert wrong == {(a, 9 - a) for a in range(10)}
    outcome = generic.prove(model, examples=100)
    assert outcome.verdict == "fails"
    found = {(a, b) for a, b, _ in outcome.counterexamples}
    assert found == wrong
    assert all(wrote != a + b for a, b, wrote in outcome.counterexamples)
    with pytest.raises(ValueError):  # no certificate but for a proof
        generic.certificate(outcome, model, "mutant")


def test_a_certificate_for_another_model_does_not_check(adder1):
    model, _, cert = adder1
    bad = mutant(model, "b_gate", MUTATION)
    with pytest.raises(Invalid):
        setcheck.check(dict(cert, model=dump(bad)))


def test_a_tampered_partition_does_not_check(adder1):
    cert = adder1[2]
    first = cert["positions"][0]
    assert "split" in first
    for change in ({"split": ["c", 1], "children": first["children"][:1]},
                   {"leaf": "bound"},
                   {"split": ["a", 0, 9], "children": first["children"]}):
        positions = [change] + cert["positions"][1:]
        with pytest.raises(Invalid):
            setcheck.check(dict(cert, positions=positions))


def test_the_budget_gives_undecided_with_the_regions_left(capsys):
    assert main(["prove", "--model", ADDER1, "--max-sets", "3"]) == 3
    out = capsys.readouterr().out
    assert "undecided within the budget" in out and "pairs" in out


def test_cli_proves_a_model_file_and_checks_its_certificate(tmp_path, capsys):
    path = tmp_path / "adder1.cert.json"
    assert main(["prove", "--model", ADDER1, "--certificate", str(path)]) == 0
    assert "proved: the tests/models/adder1.json model adds all 10^2 pairs" in \
        capsys.readouterr().out
    assert main(["check-certificate", str(path)]) == 0
    assert capsys.readouterr().out.startswith("certificate valid")


def test_generic_and_closed_form_agree_on_the_repaired_model_at_n1():
    """Both proved; the generic certificate checks (its leaves rest on relaxed ReLUs)."""
    model = build("repaired", 1)
    assert closed_form(model).proved
    outcome = generic.prove(model)
    assert outcome.verdict == "proved"
    cert = json.loads(json.dumps(generic.certificate(outcome, model, "repaired")))
    assert setcheck.check(cert).startswith("certificate valid: 'repaired' model (sha256 ")


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["published", "repaired"])
@pytest.mark.parametrize("n", [1, 2])
def test_generic_agrees_with_closed_form_and_brute_force(variant, n):
    model = build(variant, n)
    outcome = generic.prove(model, max_sets=10 ** 6, max_seconds=10 ** 5)
    assert outcome.verdict == ("proved" if closed_form(model).proved else "fails")
    if n == 1:
        assert wrong_pairs(model) == set()
    cert = json.loads(json.dumps(generic.certificate(outcome, model, variant)))
    assert setcheck.check(cert).startswith("certificate valid")


def test_cli_fails_with_confirmed_counterexamples(tmp_path, capsys):
    path = tmp_path / "mutant.json"
    path.write_text(dump(mutant(build(ADDER1), "b_gate", MUTATION)), encoding="utf-8")
    assert main(["prove", "--model", str(path), "--examples", "2"]) == 1
    out = capsys.readouterr().out
    assert "fails:" in out and out.count("(right: 9)") == 2


# ---- the grid arithmetic and indicator forms -------------------------------------------------

SQUARES = "tests/models/adder1_squares.json"


def value_at(x, a, b):
    """(least, greatest) of a SetValue at the pair (a, b): its form there plus its interval."""
    digit = {"a": lambda j: a // 10 ** j % 10, "b": lambda j: b // 10 ** j % 10,
             "s": lambda j: (a + b) // 10 ** j % 10,
             "c": lambda j: (a % 10 ** j + b % 10 ** j) // 10 ** j}
    total = x.k
    for v, c in x.coefs.items():
        total += c * (digit[v[0]](v[1]) if len(v) == 2 else int(digit[v[0]](v[1]) == v[2]))
    return Fraction(total + x.lo, ONE), Fraction(total + x.hi, ONE)


def test_set_arithmetic_holds_the_exact_value_at_every_pair():
    """Products, quotients, e^x and sqrt of forms in digits, carries and indicators: at every
    pair of random regions the exact value (e^x, sqrt: their certified enclosure) lies in the
    result's form plus interval."""
    model = build(ADDER1)
    ns = SetSystem(model)
    enclose = IntervalSystem(60)
    rng = random.Random(3)
    for _ in range(4):
        region = random_region(rng, 2)
        pairs = members(region)
        if not pairs:
            continue
        pairs = rng.sample(pairs, min(len(pairs), 12))
        ns.at(region)
        f = ns.variable(a_var(0), Fraction(rng.randint(-9, 9), 7), Fraction(1, 3)) + \
            ns.variable(b_var(1), Fraction(2, 3)) + ns.variable(c_var(1), -5)
        g = ns.variable(("s", 0, rng.randrange(10)), 3) + ns.variable(("b", 0, 4), -2) + \
            ns.variable(a_var(1), Fraction(1, 9), 30)
        one_column = ns.variable(("a", 0, 3), 4) + ns.variable(a_var(0), Fraction(1, 5), 2)
        for a, b in pairs:
            (fv, _), (gv, _) = value_at(f, a, b), value_at(g, a, b)
            ov = value_at(one_column, a, b)[0]
            for got, exact in ((f * g, fv * gv), (f / g, fv / gv), (f * f, fv * fv),
                               (f - f, 0),
                               (one_column * g, ov * gv), (g / one_column, gv / ov)):
                lo, hi = value_at(got, a, b)
                assert lo <= exact <= hi
            for got, arg, fn in ((ns.exp(f / 10), fv / 10, enclose.exp),
                                 (ns.sqrt(g), gv, enclose.sqrt),
                                 (ns.exp(one_column), ov, enclose.exp)):
                lo, hi = value_at(got, a, b)
                iv = fn(enclose.point(arg))
                assert lo <= Fraction(iv.lo) and Fraction(iv.hi) <= hi


def test_a_function_of_one_digit_is_taken_digit_by_digit():
    """sqrt of a form in one digit: an indicator form whose width is the enclosures', not
    the spread over the digits."""
    ns = SetSystem(build(ADDER1)).at(Region.every(1))
    root = ns.sqrt(ns.variable(a_var(0), 1, 1))
    assert set(root.coefs) == {("a", 0, d) for d in range(1, 10)}
    assert root.hi - root.lo < ONE // 10 ** 20


def test_a_non_affine_embedding_is_proved_by_indicators():
    """u = d^2, w = d - d^2: the rows' hull (u in 0..81) loses the digit; indicator forms
    keep it, so the proof needs few exact runs (the hull: one per pair, 100), and its
    certificate checks."""
    model = build(SQUARES)
    assert generic.Prover(model).line is False
    assert wrong_pairs(model) == set()
    outcome = generic.prove(model)
    assert outcome.verdict == "proved" and outcome.runs <= 10
    cert = json.loads(json.dumps(generic.certificate(outcome, model, "squares")))
    assert setcheck.check(cert).startswith("certificate valid: 'squares' model (sha256 ")


@pytest.mark.slow
def test_a_non_affine_mutant_fails_on_the_pairs_the_brute_force_finds():
    model = mutant(build(SQUARES), "b_gate", MUTATION)
    wrong = wrong_pairs(model)
    assert wrong == {(a, 9 - a) for a in range(10)}
    outcome = generic.prove(model, examples=100)
    assert outcome.verdict == "fails"
    assert {(a, b) for a, b, _ in outcome.counterexamples} == wrong


def test_rope_norms_and_silu_are_proved_without_brute_force():
    """rope1 (RoPE, RMSNorm, softmax, SwiGLU): its roots, rotations and exponentials of one
    digit are taken digit by digit and the rest by mean-value forms, so few regions need an
    exact run (interval enclosures of the box ran every one of the 100 pairs), and the
    checker's own arithmetic re-decides every leaf."""
    model = build("tests/models/rope1.json")
    assert wrong_pairs(model) == set()
    outcome = generic.prove(model)
    assert outcome.verdict == "proved" and outcome.runs <= 10
    cert = json.loads(json.dumps(generic.certificate(outcome, model, "rope1")))
    assert setcheck.check(cert).startswith("certificate valid: 'rope1' model (sha256 ")


# ---- committed certificates and the board's verdicts ----------------------------------------

PROOFS = "tests/fixtures/proofs"


def test_a_committed_certificate_checks(capsys):
    """adder1_squares's certificate (written by ``prove --certificate``) is re-checked from
    its own model text; the same file with its model changed is refused."""
    path = f"{PROOFS}/adder1_squares.cert.json"
    assert main(["check-certificate", path]) == 0
    assert capsys.readouterr().out.startswith(
        "certificate valid: 'tests/models/adder1_squares.json' model (sha256 ")
    cert = reading.load(path)
    with pytest.raises(Invalid):
        setcheck.check(dict(cert, model=dump(mutant(build(SQUARES), "b_gate", MUTATION))))


def test_every_proved_verdict_has_its_certificate():
    """A board model's "proved" has its certificate (gzip-compressed) of the shipped file's
    text, written by ``prove --generic --model NAME --certificate``; the slow test below
    re-checks it."""
    proved = [name for name, verdict in board.VERDICTS.items() if verdict == "proved"]
    for name in proved:
        cert = reading.load(f"{PROOFS}/{name}.cert.json.gz")
        assert cert is not None and cert["name"] == name
        assert differs(cert["model"], models.build(name)) is None  # check-certificate --model


# "fails" whose counterexamples a search of single pairs found (docs/proof.md, "The board"):
# a pair and what the exact run writes
FOUND = {"rezabyt-311": (9399137648, 9500813250, 18999950898), **board.WITNESSES}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, v in board.VERDICTS.items()
                                         if v in ("proved", "fails")))
def test_the_board_verdicts_hold(name):
    """A "fails" of the board's table: the generic method finds a counterexample that the
    exact run confirms, or the exact run confirms the one found (``FOUND``); a "proved": its
    committed certificate checks."""
    verdict = board.VERDICTS[name]
    model = models.build(name)
    if verdict == "proved":
        assert setcheck.check(reading.load(f"{PROOFS}/{name}.cert.json.gz")).startswith(
            f"certificate valid: '{name}' model (sha256 {model_hash(dump(model))}), N = 10")
        return
    assert verdict == "fails"
    if name in FOUND:
        a, b, wrote = FOUND[name]
        assert add(model, "fraction", a, b) == wrote != a + b
        return
    outcome = generic.prove(model, examples=1, max_seconds=3600)
    assert outcome.verdict == "fails"
    (a, b, wrote), = outcome.counterexamples
    assert add(model, "fraction", a, b) == wrote != a + b


def test_softmax_subtracts_the_dominant_score_itself():
    """Scores 10^8 a_0 and 10^8 a_0 - 10^8 (jacobli99-28's scale): m is the first score as a
    form, so s - m is 0 and -10^8 exactly; a constant m inside the first score's range would
    leave e^x of a range up to 4.5 10^8 (beyond any enclosure: Split)."""
    from tinyadder.forward import softmax
    for ns, form, box in both_systems(build("published", 2), 2):
        s = form(a_var(0), 10 ** 8)
        first, second = softmax([s, s - 10 ** 8], ns)
        assert 1 - Fraction(1, 10 ** 40) < box(first)[0] <= box(first)[1] <= 1
        assert 0 <= box(second)[0] <= box(second)[1] <= Fraction(1, 10 ** 40)


def test_a_digit_with_a_negligible_term_of_another_column_is_taken_digit_by_digit():
    """e^(a_0 + 2^-60 a_1): the a_1 term joins the interval and e^x is a table in a_0 (in the
    prover and the checker); with 2^-10 a_1 it is not negligible and is kept."""
    for ns, form, _ in both_systems(build("published", 2), 2):
        leak = ns.exp(form(a_var(0), 1) + form(a_var(1), Fraction(1, 2 ** 60)))
        assert set(leak.coefs) == {("a", 0, d) for d in range(1, 10)}
        assert leak.hi - leak.lo < ONE // 10 ** 10
        kept = ns.exp(form(a_var(0), 1) + form(a_var(1), Fraction(1, 2 ** 10)))
        assert not any(len(v) == 3 for v in kept.coefs)


def test_the_last_block_runs_the_last_position_only_after_its_attention():
    """zcbtrak-6 at answer position 2 over s_2 = 0, c_3 = 1, c_2 = 1: the row of the
    position before (which predicts s_1, open here) would take a root of a range through 0 in
    the final norm; nothing reads it, so it is zero, and the region is decided, by the prover
    and by the checker."""
    model = models.build("zcbtrak-6")
    region, checked = cut_regions(((("s", 2, 0), 0), (("c", 3), 1), (("c", 2), 1)))
    prover = generic.Prover(model)
    assert prover.decide(prover.logits(2, region), prover.target(2, region))[0] == "decided"
    assert setcheck.Leaves(model).holds(2, checked)


@pytest.fixture(scope="module")
def zcbtrak_s1():
    """zcbtrak-6, the region s_1 = 1, and the prover's outcome at position 1 over it (budget
    10 sets)."""
    model = models.build("zcbtrak-6")
    region = cut_regions(((("s", 1, 0), 1), (("s", 1, 1), 0)))[0]
    return model, region, generic.Prover(model, max_sets=10).position(1, region)


def test_a_width_no_digit_explains_is_split_along_the_carry_chain(zcbtrak_s1):
    """zcbtrak-6 at position 1 over s_1 = 1: the open difference's width is its interval (the
    sharp SiLU gate's), so the carries of the target's column are fixed, c_2 then c_1, and
    every region under them is decided: 5 regions, c_2 = 0 decided at once (cutting digits
    where the form's terms vary most took 49)."""
    outcome = zcbtrak_s1[2]
    tree, = outcome.positions
    assert tree["split"] == ["c", 2]
    assert [kid.get("split", kid.get("leaf")) for kid in tree["children"]] == \
        ["bound", ["c", 1]]
    assert outcome.sets == 5 and outcome.verdict == "proved"


def test_jobs_give_the_same_outcome_and_certificate():
    """Each answer position is a part on its own budget: --jobs 2 gives the outcome and the
    certificate --jobs 1 gives, proved or failing, budget spent or not."""
    adder = build(ADDER1)
    failing = mutant(adder, "b_gate", MUTATION)
    runs = []
    for model, options in ((adder, {}), (failing, {"examples": 2}), (adder, {"max_sets": 3})):
        one, two = (generic.prove(model, jobs=jobs, **options) for jobs in (1, 2))
        fields = ("verdict", "positions", "counterexamples", "margins", "sets", "passes", "runs")
        assert [getattr(one, f) for f in fields] == [getattr(two, f) for f in fields]
        assert [(o.position, o.region) for o in one.open] == \
            [(o.position, o.region) for o in two.open]
        runs.append((one, two))
    one, two = runs[0]  # adder1 on the whole budget: proved
    assert generic.certificate(two, adder, "adder1") == generic.certificate(one, adder, "adder1")


def test_cli_jobs_write_the_same_report_and_certificate(tmp_path, capsys):
    """The same report and certificate for --jobs 1 and 2; a float program's report too."""
    floats = []
    for jobs in ("1", "2"):
        assert main(["prove", "--model", "tests/models/adder1-offset.json", "--number",
                     "float32", "--jobs", jobs]) == 1
        floats.append(capsys.readouterr().out)
    assert floats[0] == floats[1] and "fails:" in floats[0]
    outs = []
    for jobs in ("1", "2"):
        path = tmp_path / f"jobs{jobs}.json"
        assert main(["prove", "--model", ADDER1, "--generic", "--jobs", jobs,
                     "--certificate", str(path)]) == 0
        outs.append((capsys.readouterr().out, path.read_text(encoding="utf-8")))
    assert outs[0] == outs[1]


def test_a_gzipped_certificate_checks_and_a_broken_one_is_refused(tmp_path, capsys):
    """The board's certificates are committed gzip-compressed: check-certificate reads one as
    the plain file; a truncated one is a one-line error (exit 2)."""
    import gzip
    plain = f"{PROOFS}/adder1_squares.cert.json"
    packed = tmp_path / "squares.cert.json.gz"
    packed.write_bytes(gzip.compress(open(plain, "rb").read(), mtime=0))
    assert main(["check-certificate", plain]) == 0
    want = capsys.readouterr().out
    assert main(["check-certificate", str(packed)]) == 0
    assert capsys.readouterr().out == want
    broken = tmp_path / "broken.cert.json.gz"
    broken.write_bytes(packed.read_bytes()[:200])
    assert main(["check-certificate", str(broken)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_pass_with_the_last_row_only_holds_the_exact_logits():
    """zcbtrak-6 at position 2 over s_2 = 0, c_3 = c_2 = 1: at sampled pairs of the region,
    every logit of the fraction system's pass (the true prefix written) lies in the prover's
    value there."""
    from tinyadder.forward import forward
    from tinyadder.numbers import number_system
    from tinyadder.plan import compile_model
    model = models.build("zcbtrak-6")
    region = cut_regions(((("s", 2, 0), 0), (("c", 3), 1), (("c", 2), 1)))[0]
    prover = generic.Prover(model)
    sets = prover.logits(2, region)
    exact = compile_model(model, number_system("fraction"))
    digit = {str(d): model.vocab.index(str(d)) for d in range(10)}
    rng = random.Random(5)
    for _ in range(3):
        # a_2 + b_2 = 9 and a_1 + b_1 >= 10: s_2 = 0 and c_3 = c_2 = 1
        a2, a1 = rng.randrange(10), rng.randrange(1, 10)
        b1 = rng.randrange(10 - a1, 10)
        a = rng.randrange(10 ** 7) * 1000 + a2 * 100 + a1 * 10 + rng.randrange(10)
        b = rng.randrange(10 ** 7) * 1000 + (9 - a2) * 100 + b1 * 10 + rng.randrange(10)
        tokens = [j if kind == "token" else digit[str((a if kind == "a" else b) // 10 ** j % 10)]
                  for kind, j in generic.prompt_slots(model)]
        tokens += [digit[str((a + b) // 10 ** q % 10)] for q in (0, 1)]
        logits = forward(exact, tokens, None, logits="last")[0][-1]
        for value, want in zip(sets, logits):
            lo, hi = value_at(value, a, b)
            assert lo <= want <= hi


def test_a_score_minus_itself_is_zero_however_wide_its_interval():
    """Scores 10^8 a_0 + [0, 10] and 10^8 a_0 - 10^8: m is the first score, and s - m is 0
    for it exactly (one value at every pair), so its weight is within 10^-40 of 1, in the
    prover and the checker; s + [-10, 10] less itself taken as two values would leave
    e^[-10, 10] over a sum of at least 1: a weight down to 4.5 10^-5."""
    from tinyadder.forward import softmax
    for ns, form, box in both_systems(build("published", 2), 2):
        wide = ns.interval(0, 10) if isinstance(ns, SetSystem) else ns.grid_interval(0, 10 * ONE)
        s = form(a_var(0), 10 ** 8) + wide
        assert box(s - s) == (0, 0)
        first, second = softmax([s, form(a_var(0), 10 ** 8) - 10 ** 8], ns)
        assert 1 - Fraction(1, 10 ** 40) < box(first)[0] <= box(first)[1] <= 1
        assert 0 <= box(second)[0] <= box(second)[1] <= Fraction(1, 10 ** 40)


def _jacobli_pairs(rng, count):
    """Random 10-digit pairs with s_1 = 0 and no carry into columns 1 and 2."""
    pairs = []
    while len(pairs) < count:
        a, b = rng.randrange(10 ** 10), rng.randrange(10 ** 10)
        if (a + b) // 10 % 10 == 0 and a % 10 + b % 10 < 10 and a % 100 + b % 100 < 100:
            pairs.append((a, b))
    return pairs


def test_jacobli99_28_sets_hold_the_exact_logits_and_decide():
    """jacobli99-28 at answer position 1 over s_1 = 0, c_1 = c_2 = 0: its heads' top scores
    carry intervals of about 9.5 (products of wide factors), and s - m = 0 for them keeps
    each weight within 2^-190 of 0 or 1, so the region decides (margin above 2 10^-4, the
    model's own gap), and at sampled pairs each exact logit (the true prefix written; its
    enclosure at 100 digits) lies in the prover's value there."""
    from tinyadder.forward import forward
    from tinyadder.plan import compile_model
    model = models.build("jacobli99-28")
    full = ((0, 9),) * 10
    region = Region(10, full, full, ((1, 0), (2, 0)), ((1, 0, 0),))
    prover = generic.Prover(model)
    sets = prover.logits(1, region)
    verdict, margin = prover.decide(sets, prover.target(1, region))
    assert verdict == "decided" and margin > Fraction(2, 10 ** 4)
    exact = compile_model(model, IntervalSystem(100))
    digit = {str(d): model.vocab.index(str(d)) for d in range(10)}
    for a, b in _jacobli_pairs(random.Random(7), 3):
        tokens = [j if kind == "token" else digit[str((a if kind == "a" else b) // 10 ** j % 10)]
                  for kind, j in generic.prompt_slots(model)]
        tokens.append(digit[str((a + b) % 10)])
        logits = forward(exact, tokens, None, logits="last")[0][-1]
        for value, want in zip(sets, logits):
            lo, hi = value_at(value, a, b)
            assert lo <= Fraction(want.lo) and Fraction(want.hi) <= hi


def test_the_real_number_prover_splits_carries_first_on_request(adder1):
    """``carries_first`` is the generic prover's option, the float prover's too: adder1 is
    proved in 19 regions instead of 28, and the certificate of that other tree checks; at
    place 10^3 of every pair the order's first split is the carry out of column 3."""
    model, plain = adder1[:2]
    first = generic.prove(model, carries_first=True)
    assert plain.verdict == first.verdict == "proved"
    assert (plain.sets, first.sets) == (28, 19)
    assert first.positions != plain.positions
    assert setcheck.check(generic.certificate(first, model, ADDER1)).startswith(
        "certificate valid")
    assert generic.carry_split(Region.every(10), 3, False) == ("c", 4)


def test_the_probe_finds_a_counterexample_the_depth_first_search_does_not_reach(tmp_path,
                                                                                capsys):
    """The mutant's units digit fails at a + b = 9 (s_0 = 9), which the depth-first order
    reaches last (26 regions, s_0 = 0 first). On a budget of 8 regions it stops at s_0 = 2;
    the probe, least margin first on its own 8 (regions and their samples), reaches s_0 = 9
    and 0 + 9, written 4, confirmed by the exact run; without it the position is
    undecided."""
    model = mutant(build(ADDER1), "b_gate", MUTATION)
    outcome = generic.Prover(model, max_sets=8, examples=1).position(1)
    assert outcome.verdict == "fails" and outcome.positions == []
    (a, b, wrote), = outcome.counterexamples
    assert (a, b, wrote) == (0, 9, 4) and add(model, "fraction", a, b) == 4
    assert outcome.sets == 16
    dfs = generic.Prover(model, max_sets=8, examples=1)
    dfs.probe = lambda k, region: None
    assert dfs.position(1).verdict == "undecided"
    path = tmp_path / "mutant.json"
    path.write_text(dump(model), encoding="utf-8")
    assert main(["prove", "--model", str(path), "--max-sets", "8", "--examples", "1"]) == 1
    assert "  0+9=04  (right: 9)\n" in capsys.readouterr().out


def test_a_search_that_decides_never_probes_and_a_probe_that_finds_nothing_adds_nothing(
        adder1, zcbtrak_s1):
    """The probe runs only where the budget stops the depth-first search, and records only
    counterexamples: adder1's proof and zcbtrak-6's position 1 over s_1 = 1 are the trees
    they were with no probe at all (one that would raise), and adder1 on a budget of 3, whose
    probe finds nothing, has the open regions, positions and margins it has without it."""
    def never(k, region):
        raise AssertionError("probed a search that decided")

    adder, outcome = adder1[:2]
    plain = generic.Prover(adder)
    plain.probe = never
    assert plain.run().positions == outcome.positions
    zcbtrak, region, outcome = zcbtrak_s1
    plain = generic.Prover(zcbtrak, max_sets=10)
    plain.probe = never
    assert plain.position(1, region).positions == outcome.positions
    probed = generic.prove(adder, max_sets=3)
    alone = generic.Prover(adder, max_sets=3)
    alone.probe = lambda k, region: None
    alone = alone.run()
    assert probed.verdict == alone.verdict == "undecided" and not probed.counterexamples
    assert [(o.position, o.region, o.margin) for o in probed.open] == \
        [(o.position, o.region, o.margin) for o in alone.open]
    assert (probed.positions, probed.margins) == (alone.positions, alone.margins)
    assert probed.sets > alone.sets


def test_an_enclosure_end_past_the_decimal_range_is_beyond_the_grid_not_an_overflow():
    """An upper end near the decimal context's Emax (an e^x of a gate far off, as in
    bingbangboom-lab-87's SiLU) is refused as past 10^MAX_DIGITS, which leaves its region
    open; negating it in the context would round it past Emax and raise decimal.Overflow."""
    from decimal import Decimal
    from tinyadder.proof.kernel.setcheck import Invalid, _ceil_of
    with pytest.raises(Invalid, match="beyond"):
        _ceil_of(Decimal("9" * 40 + "E+999960"))


def test_a_count_grows_a_seed_into_a_region_of_wrong_pairs():
    """adder1_squares with its carry threshold moved (55 of 100 pairs wrong, 0 + 9 written
    4): the wrong pair 1 + 9 first goes wrong at the units digit, and grows into the region
    c_1 = 1, every pair of it wrong (brute force); a count seeded with it reaches that region
    on a budget of one region a position, where the unseeded count shows none wrong."""
    text = reading.load("tests/fixtures/proofs/adder1_squares.cert.json")["model"]
    model = loads(text.replace('"s9": "-37/4"', '"s9": "-35/4"', 1))
    prover = generic.Prover(model, counting=True)
    assert prover.first_wrong(1, 9) == 0 and prover.first_wrong(1, 2) is None
    grown = prover.grow(0, 1, 9)
    assert grown.describe() == "c_1 = 1" and grown.count() == 45
    assert all(add(model, "fraction", a, b) != a + b for a, b in grown.pairs(100))
    assert prover.grow(1, 1, 9) is None  # not the position where it goes wrong
    assert prover.grow(1, 0, 9).describe() == "s_0 = 9"
    seeded = generic.failure_count(model, max_sets=1, seeds=[(1, 9)])
    assert (generic.failure_count(model, max_sets=1).low, seeded.low, seeded.high) == (0, 45, 100)
    truth = sum(add(model, "fraction", a, b) != a + b for a in range(10) for b in range(10))
    assert seeded.low <= truth == 55 <= seeded.high


def test_a_count_certificate_holds_the_regions_and_the_checker_derives_the_bounds(tmp_path,
                                                                                  capsys):
    """The same mutant (55 of 100 pairs wrong): the count's certificate holds each position's
    tree, and the checker re-decides its leaves and derives [46, 91] again; a leaf called
    wrong that is not, and bounds the trees do not give, are refused."""
    text = reading.load("tests/fixtures/proofs/adder1_squares.cert.json")["model"]
    model = loads(text.replace('"s9": "-37/4"', '"s9": "-35/4"', 1))
    found = generic.failure_count(model)
    cert = generic.count_certificate(found, model, "mutant")
    assert (found.low, found.high) == (46, 91) and cert["count"] == [46, 91]
    assert setcheck.count_check(cert).endswith(
        "N = 1: fails on between 46 and 91 of 10^2 pairs (24 leaves re-decided)")
    path = tmp_path / "count.json"
    path.write_text(json.dumps(cert))
    assert main(["check-certificate", str(path)]) == 0
    assert "fails on between 46 and 91 of 10^2 pairs" in capsys.readouterr().out
    with pytest.raises(Invalid, match="not \\[46, 92\\]"):
        setcheck.count_check(dict(cert, count=[46, 92]))
    lied = json.loads(json.dumps(cert).replace('{"leaf": "bound"}', '{"leaf": "wrong"}', 1))
    with pytest.raises(Invalid, match="no token's logit beats the target's"):
        setcheck.count_check(lied)
    opened = json.loads(json.dumps(cert).replace('{"leaf": "wrong"}', '{"leaf": "open"}', 1))
    with pytest.raises(Invalid, match="derive \\[46, 91\\], not"):
        setcheck.count_check(dict(opened, count=[0, 0]))
