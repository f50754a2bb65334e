"""``tinyadder board``: AdderBoard's entries shipped as model files, listed and replayed.

``entries()`` reads every board model file (``models.board_names()``) into an ``Entry``: its
name, family, author, the parameters it claims and those the ledger counts from the file
(``analysis.ledger``), the dtype its original program computes in, and its source.
``replay`` runs one of the suites the board's fixtures hold through a model and keeps the
wrong sums: ``adderboard`` (AdderBoard's verify.py list, 10 edge cases and 10,000 pairs from
``random.Random(2025)``), ``carries`` (``cases.carry_pairs`` with 20 pairs per (m, g): 1,760)
or ``edges`` (``cases.edge_suite``: 67), whole or as an even sample. A pair whose digits
the fraction system cannot certify (``numbers.Undecided``: it refines up to its limit, never
guesses) is kept apart as open: neither right nor wrong. The table (``Row``) is the
leaderboard's check: the first K of AdderBoard's protocol cases through each model in several
number systems; ``table_head``/``table_line``/``table_foot``, the ``markdown_`` ones and
``table_json`` print it.
"""

from dataclasses import dataclass, replace
import textwrap
import time
from typing import Mapping, Optional, Tuple

from .. import cases, models
from ..addition import add, answer_length, digits_of, encode, text
from ..forward import forward
from ..generate import generate
from ..numbers import Undecided, for_model, number_system
from ..plan import compile_model
from . import ledger

SUITES = ("adderboard", "carries", "edges")
SHORT = {"float": "float64"}  # a number system's spec as the dtype column writes it
CARRIES_PER_CELL = 20  # as the fixtures were recorded


@dataclass(frozen=True)
class Entry:
    """One board model file's facts (``about``) and the ledger's count of it."""

    name: str
    family: str
    author: str
    claimed: Optional[int]
    counted: int
    dtype: str
    source: Mapping[str, str]
    rule: str = "seed000"    # the rule the entry's claim is read under (OWN_RULE)
    own: Optional[int] = None  # the count under that rule
    why: str = ""             # one line where own != claimed

    @property
    def category(self):
        """'trained', "tinyadder's own" or 'hand-coded'."""
        return ("trained" if self.family == "trained" else
                "tinyadder's own" if self.author == "tinyadder" else "hand-coded")

    @property
    def program(self):
        """The float program's format as ``prove --number`` names it: float for a float64
        entry, else its dtype."""
        return "float" if self.dtype == "float64" else self.dtype


# The rule each entry's claimed count is read under, where its source says (docs/params.md):
# trained entries count their framework's unique parameters; the rope-19 family and zcbtrak
# name their free numbers; alexlitz-36 counts as TinyAdder-36. Any other entry: the first rule
# that gives its claim, else AdderBoard's numel.
OWN_RULE = {"rezabyt-311": "unique", "alexlitz-36": "seed000",
            **{name: "free" for name in ("kswain98-2", "kswain98-4", "kswain98-8", "zcbtrak-6",
                                         "lokimorty-10", "lokimorty-12", "yieldthought-20",
                                         "wonderfall-27")}}


def own_rule(name, claimed, counts, family=""):
    """The rule the entry's claim is read under: OWN_RULE, else 'unique' for a trained entry,
    else the first rule whose count is the claim, else 'numel'."""
    if name in OWN_RULE:
        return OWN_RULE[name]
    if family == "trained":
        return "unique"
    return next((r for r, c in counts.items() if c.params == claimed), "numel")


# Why a file counts more than its original, where the line ``why`` gives does not say it.
STORED = {name: "the file writes each rank-1 map (x . v) u as its table u v^T and the "
                "factorized embedding as its 10x5 rows; the original counts the factors"
          for name in ("bingbangboom-lab-148", "xangma-177", "xangma-197")}


def why(rule, claimed, counts, stored=None):
    """One line on why the count under ``rule`` is not the claim ('' when it is); ``stored``
    says what the file holds that the original does not (STORED)."""
    c = counts[rule]
    hidden = [part for part in c.note.split("; ")[1:] if "literals" in part or "no entry" in part]
    if rule == "free" and hidden:
        return ((f"{c.params} named constants, not {claimed}; " if c.params != claimed else "")
                + "; ".join(hidden) + " (the original's constants outside its count)")
    if claimed is None or c.params == claimed:
        return ""
    if c.params > claimed:
        return (f"{c.params - claimed} more under {rule}: " + (
            stored or "entries the original computes in code (constants in forward(), fixed "
                      "maps, zeros) are tensors of the file"))
    return (f"{claimed - c.params} fewer under {rule}: the original counts entries the file "
            f"does not hold (zeros, unused lanes, tensors folded into others)")


def entry(name):
    """The Entry of the board model ``name``, its count under every rule."""
    model = models.build(name)
    about = model.about
    counts = ledger.rules(model)
    claimed = about.get("params_claimed")
    family = about.get("family", "")
    rule = own_rule(name, claimed, counts, family)
    return Entry(name=name, family=family, author=about.get("author", ""),
                 claimed=claimed, counted=counts["seed000"].params,
                 dtype=about.get("dtype", ""), source=dict(about.get("source", {})),
                 rule=rule, own=counts[rule].params,
                 why=why(rule, claimed, counts, STORED.get(name)))


def entries():
    """Every board model's Entry, by claimed parameters, then name."""
    return _ordered(entry(name) for name in models.board_names())


def _ordered(found):
    return sorted(found, key=lambda e: (e.claimed is None, e.claimed or 0, e.name))


# tinyadder's own models that join the list, marked as such (category "tinyadder's own"):
# TinyAdder-36 as published and repaired (docs/spec.md), seed 000's variants (docs/variant-28.md,
# docs/variant-22.md); each model's file in the package is its source.
OWN = {"published": "models/published.json", "repaired": "models/repaired.json",
       "variant-28": "models/variant-28.json", "variant-22": "models/programs/variant-22.json"}


def own_entry(name):
    """The Entry of tinyadder's own model ``name`` (OWN), counted as the board's are."""
    model = models.build(name)
    counts = ledger.rules(model)
    claimed = model.about.get("params_claimed")
    rule = own_rule(name, claimed, counts)
    return Entry(name=name, family="tinyadder", author="tinyadder", claimed=claimed,
                 counted=counts["seed000"].params, dtype=model.about.get("dtype", ""),
                 source={"path": f"tinyadder/{OWN[name]}"}, rule=rule,
                 own=counts[rule].params, why=why(rule, claimed, counts))


def listed():
    """The board's list: every board model's Entry and tinyadder's own (OWN), by claimed
    parameters, then name."""
    return _ordered([entry(name) for name in models.board_names()]
                    + [own_entry(name) for name in OWN])


def names():
    """Every listed model's name: the board's files, then tinyadder's own (OWN)."""
    return list(models.board_names()) + list(OWN)


def any_entry(name):
    """The Entry of a board model or of one of tinyadder's own (OWN)."""
    return own_entry(name) if name in OWN else entry(name)


def native(model):
    """The number system of the model's published dtype (float32, else float64), at the
    model's precision."""
    return for_model(number_system("float32" if model.about.get("dtype") == "float32"
                                   else "float"), model)


def suite_pairs(suite):
    """The suite's pairs in the order the fixtures hold them."""
    if suite == "adderboard":
        return cases.verify_cases()
    if suite == "carries":
        return [p for ps in cases.carry_pairs(CARRIES_PER_CELL).values() for p in ps]
    if suite == "edges":
        return [p for ps in cases.edge_suite().values() for p in ps]
    raise ValueError(f"unknown suite {suite!r}; use {', '.join(SUITES)}")


def sample(pairs, k=None):
    """``k`` pairs spread evenly over ``pairs`` (the i-th is pairs[i n // k]); all when k is
    None or at least len(pairs)."""
    n = len(pairs)
    if k is None or k >= n:
        return list(pairs)
    return [pairs[i * n // k] for i in range(k)]


@dataclass(frozen=True)
class Replay:
    """One model's run over (a sample of) one suite: the wrong sums as (a, b, model's sum),
    the open pairs (a, b) whose digits no precision up to the system's limit certified."""

    name: str
    system: str
    suite: str
    checked: int
    wrong: Tuple[Tuple[int, int, int], ...]
    digits: int
    seconds: float
    interrupted: bool = False  # Ctrl-C: ``checked`` counts the pairs done until then
    undecided: Tuple[Tuple[int, int], ...] = ()

    @property
    def passed(self):
        return self.checked - len(self.wrong) - len(self.undecided)


def label(ns):
    """A number system as the dtype column writes it: 'float64', 'float32', 'fraction',
    'decimal:P'."""
    return SHORT.get(ns.spec, ns.spec)


def run(model, suite, pairs, ns=None, progress=None):
    """The Replay of ``model`` on ``pairs`` of ``suite`` in ``ns`` (None: the model's
    published dtype; a system is fitted to the model's precision)."""
    ns = native(model) if ns is None else for_model(ns, model)
    wrong, undecided, checked, interrupted = [], [], 0, False
    start = time.perf_counter()
    try:
        for a, b in pairs:
            try:
                got = add(model, ns, a, b)
            except Undecided:
                undecided.append((a, b))
            else:
                if got != a + b:
                    wrong.append((a, b, got))
            checked += 1
            if progress:
                progress(checked, len(pairs),
                         f" ({checked - len(wrong) - len(undecided)} passed)")
    except KeyboardInterrupt:
        interrupted = True
    return Replay(model.name, label(ns), suite, checked, tuple(wrong), digits_of(model),
                  time.perf_counter() - start, interrupted, tuple(undecided))


def replay(name, suite, k=None, ns=None, progress=None):
    """Run the listed model ``name`` on ``sample(suite_pairs(suite), k)`` in ``ns``, the
    Replay under that name."""
    result = run(models.build(name), suite, sample(suite_pairs(suite), k), ns, progress)
    return replace(result, name=name)


def step_logits(model, ns, a, b, steps=None):
    """The logits of the first ``steps`` answer steps (None: all) of a + b, following the
    model's own tokens, one list per step indexed by token id (None for a token the readout
    does not score), as floats: the rows a fixture's recorded logits are compared with."""
    ns = for_model(ns, model)
    prompt = encode(model, a, b)
    steps = answer_length(model) if steps is None else steps
    tokens = generate(model, ns, prompt, steps - 1) if steps > 1 else prompt
    compiled = compile_model(model, ns)
    rows, _ = forward(compiled, tokens)
    out = []
    for row in rows[len(prompt) - 1:]:
        by_id = [None] * len(model.vocab)
        for t, v in zip(compiled.readout_tokens, row):
            by_id[t] = float(v)
        out.append(by_id)
    return out


def recorded_steps(model, records):
    """Each step of a fixture's recorded logits (``records``: [{a, b, steps: [[hex]]}])
    against the model's float replay in its published dtype: (a, b, the replay's argmax,
    the original's, the largest difference of a logit)."""
    ns = native(model)
    out = []
    for rec in records:
        got = step_logits(model, ns, rec["a"], rec["b"], len(rec["steps"]))
        for row, want in zip(got, rec["steps"]):
            want = [float.fromhex(x) for x in want]
            mine = max((v, -t) for t, v in enumerate(row) if v is not None)
            diff = max(abs(g - w) for g, w in zip(row, want) if g is not None)
            out.append((rec["a"], rec["b"], -mine[1], want.index(max(want)), diff))
    return out


def source_text(source, commit=12):
    """'repo path @ commit' (the commit cut to ``commit`` characters)."""
    where = " ".join(x for x in (source.get("repo"), source.get("path")) if x)
    return where + (f" @ {source['commit'][:commit]}" if source.get("commit") else "")


COLUMNS = ("model", "category", "family", "author", "claimed", "counted", "rule", "ledger",
           "dtype", "suite", "prove", "program")

# The generic prover's verdict on each board model's real-number model, all 10^20 pairs
# (``tinyadder prove --model NAME``; budgets and regions left: docs/proof.md, "The board").
# "fails": counterexamples confirmed by exact runs; "undecided": not settled within the
# budget run; "proved" only with its certificate in tests/fixtures/proofs/, which a test checks.
VERDICTS = {"alexlitz-36": "fails", "zcbtrak-6": "proved",
            "kswain98-2": "proved",
            "lokimorty-10": "proved",
            "kswain98-4": "proved",
            "kswain98-8": "proved",
            "lokimorty-12": "proved",
            "lichengliu03-50": "proved",
            "cosminscn-66": "proved",
            "cosminscn-130": "proved",
            "fblissjr-33": "proved",
            "yieldthought-20": "proved",
            "wonderfall-27": "proved",
            "rezabyt-311": "fails",
            "staghado-122": "fails",
            "lokimorty-39": "fails",
            "jacobli99-28": "proved",
            "jacobli99-93": "proved",
            "nino-116": "proved",
            "wonderfall-121": "proved",
            "wonderfall-130": "proved",
            "wonderfall-139": "proved",
            "yinglunz-512": "fails",
            "jackcai1206-234": "fails"}


# The generic prover's options a proof above was found with, where not the defaults (the
# split order: ``generic.Prover``); ``tinyadder bench --only board`` proves them again so.
# Carries first where it takes fewer regions (per position 38 at places 10^1 to 10^9, against
# 52 to 102 in the rule's own order); not for yieldthought-20, wonderfall-27 and -139, where
# it takes more (38 against 30 at place 10^5; 650 against 100).
PROOF_OPTIONS = {name: {"carries_first": True} for name in (
    "jacobli99-28", "jacobli99-93", "zcbtrak-6", "kswain98-2", "kswain98-4", "kswain98-8",
    "lokimorty-10", "lokimorty-12", "nino-116", "wonderfall-121", "wonderfall-130",
    "lichengliu03-50", "cosminscn-66", "cosminscn-130", "fblissjr-33")}


# The float prover's options a proved program above was found with, where not the defaults
# (``tinyadder prove --number DTYPE``); ``tinyadder bench --only board`` proves them so.
PROGRAM_OPTIONS = {name: {"carries_first": True}
                   for name in ("jacobli99-28", "jacobli99-93", "wonderfall-130")}


# The verdict on each board model's float program in its own dtype (``tinyadder prove
# --model NAME --number float32|float``), all 10^20 pairs. "fails": a pair the float replay
# (bit-faithful to the original's run) adds wrong; "proved" only with its certificate
# tests/fixtures/proofs/NAME.DTYPE.cert.json (.gz where large), which a test checks.
PROGRAM_VERDICTS = {"kswain98-2": "proved", "kswain98-4": "proved", "zcbtrak-6": "proved",
                    "kswain98-8": "proved", "lokimorty-10": "proved", "lokimorty-12": "proved",
                    "yieldthought-20": "proved", "wonderfall-27": "proved",
                    "jacobli99-28": "proved", "fblissjr-33": "proved", "alexlitz-36": "fails",
                    "lichengliu03-50": "proved", "jacobli99-93": "proved",
                    "wonderfall-130": "proved", "wonderfall-139": "proved",
                    "rezabyt-311": "fails", "staghado-122": "fails", "lokimorty-39": "fails",
                    "yinglunz-512": "fails", "jackcai1206-234": "fails"}


# For the trained entries' "fails": a pair the original gets wrong, and the sum the exact run
# of the real-number model writes for it (the float replay writes the original's): taken from
# the fixtures' wrong pairs, checked by tests/test_board.py.
WITNESSES = {"staghado-122": (6190105256, 9983555477, 16273660733),
             "lokimorty-39": (4852919719, 6296009553, 11148939272),
             "yinglunz-512": (7478401963, 1252460988, 8730862851),
             "jackcai1206-234": (7194558397, 5495045311, 12699603708)}


# A "fails" whose pair a search of single pairs found, not the test suite (docs/proof.md, "The
# board"): the pair and the sum the exact run writes (tests/test_prove_generic.py checks it).
SEARCHED = {"rezabyt-311": (9399137648, 9500813250, 18999950898)}


# Why a verdict above is undecided (``undecided_why``); the default: not yet run.
UNDECIDED = {
    ("cosminscn-66", "program"): "its first digit rests on a one-ulp float32 tie",
    ("cosminscn-130", "program"): "its first digit rests on a one-ulp float32 tie",
    ("nino-116", "program"): "the roundings' bound exceeds its 3.3-ulp margin",
    ("wonderfall-121", "program"): "the roundings' bound exceeds its 3.3-ulp margin",
}


def undecided_why(name, what):
    """Why the ``what`` ('prove' or 'program') verdict on ``name`` is undecided."""
    if what == "prove" and name in COUNTS and COUNTS[name].high:
        c = COUNTS[name]
        left = "all 10^20" if c.high - c.low == TOTAL else f"{c.high - c.low:,}"
        return f"{COUNT_SETS} regions per answer position leave {left} pairs open"
    return UNDECIDED.get((name, what), "not run within a budget yet")


# tinyadder's own models (OWN): the published model fails (its failures counted by the closed
# form, docs/proof.md), the repaired one and variant-28 are proved by the closed form
# (``prove --model NAME``), variant-22 by the generic method (its certificate
# tests/fixtures/proofs/variant-22.cert.json.gz). Their float64 programs: the published one
# writes 2999999999 + 1999999999 = 5000000000; variant-22's is proved (variant-22.float64.cert
# .json.gz); the others' are not run yet.
OWN_VERDICTS = {"published": "fails", "repaired": "proved", "variant-28": "proved",
                "variant-22": "proved"}
OWN_PROGRAM_VERDICTS = {"published": "fails", "variant-22": "proved"}


def verdict(name):
    """The prover's verdict on the real-number model ``name`` (VERDICTS, OWN_VERDICTS)."""
    return VERDICTS.get(name) or OWN_VERDICTS.get(name, "undecided")


def program_verdict(name):
    """The verdict on the float program of ``name`` (PROGRAM_VERDICTS,
    OWN_PROGRAM_VERDICTS)."""
    return PROGRAM_VERDICTS.get(name) or OWN_PROGRAM_VERDICTS.get(name, "undecided")


# ---- counts: how many of the 10^20 pairs each real-number model adds wrong ---------------

TOTAL = 10 ** 20
COUNT_SETS = 100  # ``board --count``: regions per answer position (failure_count's max_sets)


@dataclass(frozen=True)
class Count:
    """Certified bounds on the pairs of 10^20 the real-number model adds wrong: ``low`` pairs
    shown wrong, ``high`` = low + the pairs left open (exact when they meet); ``how``: the
    command that derives them (after ``tinyadder``)."""

    low: int
    high: int
    how: str


# The counts run so far (docs/models.md, "Verdicts and counts"): the closed-form census where
# it reaches the model (exact), else ``board --count NAME``: the generic method's
# failure_count with COUNT_SETS regions per answer position (``--sets S``: S), the budget a
# region count so that a rerun derives the same bounds; a failing model's regions of wrong
# pairs grown from its seeds (``seeds``), each count's certificate
# tests/fixtures/proofs/NAME.count.json.gz, which ``check-certificate`` derives again.
PUBLISHED_FAILURES = 74_318_182_169_594  # docs/proof.md, "Results", N = 10
COUNTS = {"published": Count(PUBLISHED_FAILURES, PUBLISHED_FAILURES, "census"),
          "alexlitz-36": Count(PUBLISHED_FAILURES, PUBLISHED_FAILURES,
                               "census --model alexlitz-36"),
          "vijec-52": Count(0, TOTAL, "board --count vijec-52"),
          "dimopep-140": Count(0, TOTAL, "board --count dimopep-140"),
          "evindor-57": Count(0, TOTAL, "board --count evindor-57"),
          "evindor-67": Count(0, TOTAL, "board --count evindor-67"),
          "staghado-122": Count(1_200_000_000_000_000, TOTAL, "board --count staghado-122 --sets 1"),
          "rezabyt-311": Count(200_000_020_000_000, TOTAL, "board --count rezabyt-311 --sets 1"),
          "yinglunz-456": Count(0, TOTAL, "board --count yinglunz-456"),
          "bingbangboom-lab-87": Count(0, TOTAL, "board --count bingbangboom-lab-87"),
          "lokimorty-39": Count(448, TOTAL, "board --count lokimorty-39 --sets 1"),
          "yinglunz-512": Count(45_000_000_000_000, TOTAL, "board --count yinglunz-512 --sets 1"),
          "xangma-177": Count(0, TOTAL, "board --count xangma-177"),
          "xangma-197": Count(0, TOTAL, "board --count xangma-197"),
          "jackcai1206-234": Count(4_999_999_950_000_000, TOTAL,
                                     "board --count jackcai1206-234 --sets 1"),
          "bingbangboom-lab-148": Count(0, TOTAL, "board --count bingbangboom-lab-148")}


COUNT_SECONDS = 10 ** 6  # ``board --count``: seconds per position, beyond the region budget


# Pairs the originals got wrong on AdderBoard's cases and the near-carry pairs (the fixtures'
# wrong pairs), which ``board --count`` also grows into regions of wrong pairs: a pair the
# exact run adds right is passed over (``generic.Prover.grow``).
COUNT_SEEDS = {
    "lokimorty-39": [(196363434, 1094846205), (5709201191, 9702757099),
                     (1974511785, 992768830), (1982450923, 920344709),
                     (7478401963, 1252460988), (1199304441, 6091653984),
                     (1298194328, 1389098195), (1986246678, 993495337)],
    "staghado-122": [(5365432219, 7858954499), (6361916375, 8359915946),
                     (5392929616, 7483389039), (9230885519, 7744851999),
                     (4304339196, 1048964993)],
    "yinglunz-512": [(5670787970, 5801707940)],
    "jackcai1206-234": [(9796571914, 3893185616), (296174683, 5593809045),
                        (3662821880, 9962534190), (7098112758, 3991585701),
                        (8096001126, 5993814764), (7400652012, 9506612997),
                        (6095020661, 6494923769), (2195739399, 3894014086),
                        (1823271938, 312000252), (9349607170, 4863777730),
                        (593126992, 4996873006), (4898017453, 4591982545),
                        (6898162505, 691837485)]}


def seeds(name):
    """The pairs ``board --count`` grows into regions of wrong pairs (failure_count's
    ``seeds``): the model's pair of WITNESSES or SEARCHED, then COUNT_SEEDS."""
    found = WITNESSES.get(name) or SEARCHED.get(name)
    return ([found[:2]] if found else []) + COUNT_SEEDS.get(name, [])


def count_lines(name, got, sets, runs, examples, budget=COUNT_SETS):
    """``board --count``'s report: the bounds found, a few pairs shown wrong, the budget,
    and the list's record beside them (one text)."""
    if got.high == 0:
        bounds = "fails on none of 10^20 pairs"
    elif got.low == got.high:
        bounds = f"fails on {got.low:,} of 10^20 pairs"
    else:
        bounds = f"fails on between {got.low:,} and {got.high:,} of 10^20 pairs"
    lines = [f"{name}: {bounds} (certified: the generic method, {budget} "
             f"region{'s' * (budget != 1)} per answer position; {sets} regions, {runs} exact "
             f"runs)"]
    lines += [f"  {a} + {b} = {a + b}, model {wrote}" for a, b, wrote in examples[:3]]
    held = COUNTS.get(name)
    if held is None:
        lines.append("the list holds no count of it")
    elif (held.low, held.high, held.how) == (got.low, got.high, got.how):
        lines.append("the same as the list's record")
    else:
        lines.append(f"the list's record: [{held.low:,}, {held.high:,}] (tinyadder "
                     f"{held.how}): different")
    return "\n".join(lines)


def count(name):
    """The Count of ``name``: [0, 0] for a proved model, COUNTS for a counted one (a failing
    model's low bound at least 1, its pair that an exact run adds wrong, where the search
    showed none), else None."""
    if verdict(name) == "proved":
        how = f"prove --model {name}" + (" --carries-first" if PROOF_OPTIONS.get(name) else "")
        return Count(0, 0, how)
    c = COUNTS.get(name)
    found = WITNESSES.get(name) or SEARCHED.get(name)
    if c is not None and c.low == 0 and verdict(name) == "fails" and found:
        return Count(1, c.high, f"{c.how}; {found[0]} + {found[1]}, an exact run")
    return c


def rounded(n, up):
    """``n`` to 3 significant digits ('7.43e13'), rounded up (``up``) or down so that a bound
    stays a bound; exact below 10^4; 10^20 as '10^20'."""
    if n == TOTAL:
        return "10^20"
    if n < 10 ** 4:
        return str(n)
    k = len(str(n)) - 3
    m = -(-n // 10 ** k) if up else n // 10 ** k
    if m == 1000:
        m, k = 100, k + 1
    return f"{m // 100}.{m % 100:02d}e{k + 2}"


def interval_text(c):
    """A Count as a column writes it: '[lo, hi]', rounded outwards; an exact count whole."""
    if c.low == c.high:
        return f"{c.low:,}"
    return f"[{rounded(c.low, False)}, {rounded(c.high, True)}]"


def prove_cell(name):
    """The real-number model's column: 'proved', 'fails [lo, hi]', 'undecided [lo, hi]' or
    the bare verdict where no count is run."""
    v, c = verdict(name), count(name)
    return v if v == "proved" or c is None else f"{v} {interval_text(c)}"


# The answers the original (for tinyadder's own models: the float64 program) got wrong on
# AdderBoard's 10,010 cases, from the fixtures (tests/test_board.py checks them); 0 elsewhere.
ORIGINAL_WRONG = {"lokimorty-39": 9, "staghado-122": 5,
                  "yinglunz-512": 2, "jackcai1206-234": 9}


def suite_text(name):
    """The original's accuracy on AdderBoard's protocol, floored to 0.01% (never 100% with a
    wrong case): '99.95%'."""
    wrong = ORIGINAL_WRONG.get(name, 0)
    if not wrong:
        return "100%"
    hundredths = (PROTOCOL_CASES - wrong) * 10_000 // PROTOCOL_CASES
    return f"{hundredths // 100}.{hundredths % 100:02d}%"


def rate_line(name):
    """The test suite's accuracy beside the certified count of failures over 10^20 pairs."""
    wrong = ORIGINAL_WRONG.get(name, 0)
    head = (f"{suite_text(name)} on the test suite ({wrong} of {PROTOCOL_CASES:,} wrong); "
            if wrong else f"{suite_text(name)} on the test suite; ")
    c = count(name)
    if c is None:
        found = WITNESSES.get(name) or SEARCHED.get(name)
        return head + (f"fails on at least 1 of 10^20 pairs ({found[0]} + {found[1]}, an "
                       f"exact run); not counted yet" if found else "not counted yet")
    if c.high == 0:
        return head + f"fails on none of 10^20 pairs (proved: tinyadder {c.how})"
    if c.low == c.high:
        return head + f"fails on {c.low:,} of 10^20 pairs (certified: tinyadder {c.how})"
    if c.high < TOTAL:
        return head + (f"fails on between {c.low:,} and {c.high:,} of 10^20 pairs (certified: "
                       f"tinyadder {c.how})")
    if c.low:  # the high bound is every pair: only the low one says something
        return head + (f"fails on at least {c.low:,} of 10^20 pairs (certified: tinyadder "
                       f"{c.how}); no upper bound at the prover's budget")
    return head + (f"undecided: not bounded by the prover at its budget (tinyadder {c.how}; "
                   f"docs/models.md, \"Verdicts and counts\")")


def _row(e):
    return (e.name, e.category, e.family, e.author, "" if e.claimed is None else str(e.claimed),
            "" if e.own is None else str(e.own), e.rule, str(e.counted), e.dtype,
            suite_text(e.name), prove_cell(e.name), program_verdict(e.name))


# The list's two tables, each about 100 columns wide: the entry and its parameters, then the
# verdicts; each column of COLUMNS in one of them, the model's name in both.
SPLIT = 8  # COLUMNS[:SPLIT] in the first table, then the name and COLUMNS[SPLIT:]
RIGHT = {"claimed", "counted", "ledger", "suite"}
WIDE = 104  # a source line wraps past it (an address never: it stays whole)


def _aligned_rows(head, rows):
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    return ["  ".join(c.rjust(w) if name in RIGHT else c.ljust(w)
                      for name, c, w in zip(head, r, widths)).rstrip()
            for r in [head] + rows]


# The list's last lines: where a learner starts on a design (the explorer's tour of one
# model, the walkthrough's section on it, and the worked example of each family).
START = ("to learn a design: tinyadder explore --model zcbtrak-6 7650676663+0149460439 (a "
         "guided tour; every model opens in the explorer), docs/walkthrough.md (\"Another "
         "design: zcbtrak-6, one layer and RoPE\") and docs/models.md (\"Worked examples, one "
         "per family\": a traced position of each family)")
# the same pointer in short, under the first table, where a learner stops reading
START_SHORT = ("to learn a design: tinyadder explore --model zcbtrak-6 7650676663+0149460439 "
               "(a guided tour; more in the last lines)")


def table(found):
    """The list as aligned text: the entries' parameters, where to start learning in short,
    their verdicts (two tables), then what the columns mean, each entry's why, failures and source."""
    rows = [_row(e) for e in found]
    lines = _aligned_rows(COLUMNS[:SPLIT], [r[:SPLIT] for r in rows]) + [""]
    lines += textwrap.wrap(START_SHORT, 88) + [""]
    lines += _aligned_rows(COLUMNS[:1] + COLUMNS[SPLIT:], [r[:1] + r[SPLIT:] for r in rows])
    lines += ["", "claimed: the entry's own count; counted: tinyadder params from the file, "
              "under", "the rule the claim is read under (rule; docs/params.md); ledger: "
              "the ledger's", "count (seed 000's rule); suite: the original's accuracy on "
              "AdderBoard's 10,010", "cases; prove: the prover's verdict on all 10^20 pairs, "
              "real-number model, with", "[lo, hi], certified bounds on the pairs it adds "
              "wrong (lo: shown wrong; hi:", "lo + those left open); program: the verdict "
              "on the float program, in its", "dtype (docs/proof.md, docs/models.md); "
              "undecided [0, 10^20]: the prover bounds", "nothing at its budget"]
    width = max(len(e.name) for e in found)
    flagged = [e for e in found if e.why]
    if flagged:
        lines += ["", "counts that differ from the claim, or hide constants:"]
        for e in flagged:
            lines += textwrap.wrap(f"{e.name:<{width}}  {e.why}", 88,
                                   initial_indent="  ", subsequent_indent=" " * (width + 4))
    lines += ["", "failures over all 10^20 pairs, beside the test suite:"]
    for e in found:
        lines += textwrap.wrap(f"{e.name:<{width}}  {rate_line(e.name)}", 88,
                               initial_indent="  ", subsequent_indent=" " * (width + 4))
    undecided = undecided_lines(found)
    if undecided:
        lines += ["", "undecided:"] + undecided
    lines += ["", "sources (repository path @ commit, where it was read; the original):"]
    for e in found:  # "@ commit" kept on one line: its space held as a NUL while wrapping
        text = f"{e.name:<{width}}  {source_text(e.source)}".replace(" @ ", " @\0")
        lines += [line.replace("\0", " ") for line in textwrap.wrap(
            text, WIDE, initial_indent="  ", subsequent_indent=" " * (width + 4),
            break_long_words=False, break_on_hyphens=False)]
        if e.source.get("url"):
            lines.append(f"  {'':<{width}}  {e.source['url']}")
    return lines + [""] + textwrap.wrap(START, 88)


def markdown(found):
    """The list as a Markdown table, the source in its last column."""
    head = COLUMNS + ("failures", "why", "source",)
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---:" if c in ("claimed", "counted", "ledger", "suite") else "---"
                            for c in head)
             + "|"]
    for e in found:
        where = source_text(e.source, 40)
        if e.source.get("url"):
            where += f" ({e.source['url']})"
        lines.append("| " + " | ".join(_row(e) + (rate_line(e.name), e.why, where)) + " |")
    return lines


def as_json(found):
    return [{"model": e.name, "category": e.category, "family": e.family, "author": e.author,
             "params_claimed": e.claimed, "params_counted": e.counted, "params_rule": e.rule,
             "params_under_rule": e.own, "params_why": e.why, "dtype": e.dtype,
             "suite_wrong": ORIGINAL_WRONG.get(e.name, 0), "suite_cases": PROTOCOL_CASES,
             "prove": verdict(e.name), "program": program_verdict(e.name),
             "failures": _count_json(count(e.name)), "undecided": _why_json(e.name),
             "source": dict(e.source)} for e in found]


def _count_json(c):
    return None if c is None else {"low": c.low, "high": c.high, "of": TOTAL,
                                   "command": f"tinyadder {c.how}"}


def _why_json(name):
    return {what: undecided_why(name, what) for what, v in
            (("prove", verdict(name)), ("program", program_verdict(name))) if v == "undecided"}


def replay_lines(result, show=3):
    """One line per replay (no timing, so a rerun prints the same text), then its first
    ``show`` wrong sums."""
    wrong = len(result.wrong)
    line = (f"{result.name}: {result.suite} {result.checked} pairs in {result.system}: "
            f"{wrong} wrong" + (f", {open_text(result)}" if result.undecided else "")
            + (" (interrupted)" if result.interrupted else ""))
    lines = [line]
    for a, b, got in result.wrong[:show]:
        lines.append(f"  {text(a, b, got, result.digits)}, not {a + b:0{result.digits + 1}d}")
    if wrong > show:
        lines.append(f"  ... and {wrong - show} more")
    return lines


# ---- the table: AdderBoard's protocol, per model and number system ----------------------

PROTOCOL_CASES = len(cases.EDGE_CASES) + 10_000  # verify.py: its edge cases, 10,000 pairs
TABLE_SYSTEMS = ("fraction", "float", "float32")  # the table's systems unless told


def protocol_cases(k=None):
    """The first ``k`` of AdderBoard's protocol cases, in verify.py's order (all when None)."""
    if k is not None and not 1 <= k <= PROTOCOL_CASES:
        raise ValueError(f"the protocol has {PROTOCOL_CASES:,} cases; asked for {k}")
    pairs = cases.verify_cases()
    return pairs if k is None else pairs[:k]


def protocol_text(k=None):
    """The table's first line: which cases it ran."""
    which = (f"all {PROTOCOL_CASES:,} cases" if k is None or k == PROTOCOL_CASES
             else f"a sample: the first {k:,} of its {PROTOCOL_CASES:,} cases")
    return (f"AdderBoard's protocol (verify.py: {len(cases.EDGE_CASES)} edge cases, then "
            f"10,000 pairs from random.Random({cases.SEED})): {which}")


def column(system):
    """A run's column: 'exact' for the fraction system, else the dtype's name."""
    return "exact" if system == "fraction" else system


@dataclass(frozen=True)
class Row:
    """One board model's line of the table: its Entry and one Replay per number system."""

    entry: Entry
    runs: Tuple[Replay, ...]

    @property
    def seconds(self):
        return sum(r.seconds for r in self.runs)

    @property
    def wrong(self):
        """Whether a run has a pair not shown right: a wrong sum or an open one."""
        return any(r.wrong or r.undecided for r in self.runs)

    @property
    def interrupted(self):
        return any(r.interrupted for r in self.runs)


def cell(row, replay_):
    """'passed/checked', with '?' when some pairs are open and '*' when the run is in the
    entry's published dtype."""
    mark = ("?" if replay_.undecided else "") + ("*" if replay_.system == row.entry.dtype
                                                 else "")
    return f"{replay_.passed}/{replay_.checked}{mark}"


def open_text(replay_):
    """'N open (not certified), the first a+b'."""
    a, b = replay_.undecided[0]
    return (f"{len(replay_.undecided)} open (not certified), the first "
            f"{a:0{replay_.digits}d}+{b:0{replay_.digits}d}")


def first_wrong(replay_):
    """The run's first wrong sum as 'a+b=model's sum, not a + b', or None."""
    if not replay_.wrong:
        return None
    a, b, got = replay_.wrong[0]
    return f"{text(a, b, got, replay_.digits)}, not {a + b:0{replay_.digits + 1}d}"


TIME_WIDTH = 9  # '12345.6 s'
MARKS = ("exact: the fraction system, every digit certified for the real-number model; ?: "
         "some pairs open, their digits not certified at any precision tried; *: the dtype the "
         "entry was published in")


VERDICT_WIDTH = len("undecided")


def table_widths(names, columns, k=None):
    """Column widths fixed before any run, so that a row prints when its runs are done."""
    count = len(f"{k or PROTOCOL_CASES}")
    return ([max(len("model"), *map(len, names)), len("tinyadder's own"), len("claimed"),
             len("counted"), len("float64")]
            + [max(len(c), 2 * count + 3) for c in columns]
            + [max(VERDICT_WIDTH, *(len(prove_cell(n)) for n in names)), VERDICT_WIDTH,
               TIME_WIDTH])


HEAD = ("model", "category", "claimed", "counted", "dtype")
TAIL = ("prove", "program")


def table_head(widths, columns, k=None):
    """The table's first lines: the cases, a blank line and the column names."""
    names = HEAD + tuple(columns) + TAIL + ("time",)
    return textwrap.wrap(protocol_text(k), 80, subsequent_indent="  ") + [
        "", _aligned(names, widths)]


def _front(e):
    return (e.name, e.category, "" if e.claimed is None else str(e.claimed),
            "" if e.own is None else str(e.own), e.dtype)


def table_line(row, widths):
    """One row of the text table."""
    e = row.entry
    runs = len(widths) - len(HEAD) - len(TAIL) - 1
    cells = (_front(e) + tuple(cell(row, r) for r in row.runs)
             + ("",) * (runs - len(row.runs))
             + (prove_cell(e.name), program_verdict(e.name), f"{row.seconds:.1f} s"))
    return _aligned(cells, widths)


def _aligned(cells, widths):
    left = {0, 1, len(HEAD) - 1}
    return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, widths))).rstrip()


def problems(replay_):
    """The run's first wrong sum and how many, and its open pairs, as one text ('' if
    none)."""
    parts = [f"{first_wrong(replay_)} ({len(replay_.wrong)} wrong)"] if replay_.wrong else []
    return "; ".join(parts + ([open_text(replay_)] if replay_.undecided else []))


VERDICT_NOTE = ("prove: the prover's verdict on all 10^20 pairs of the real-number model, "
                "with the pairs it adds wrong where counted (exact, or [lo, hi]: certified "
                "bounds, lo shown wrong, hi = lo + those left open), program: the verdict on "
                "the float program in its dtype (proved: a certificate; fails: a pair an "
                "exact or float run adds wrong; undecided: why below)")


def undecided_lines(entries_):
    """'NAME prove|program: why' for each undecided verdict of ``entries_``."""
    out = []
    for e in entries_:
        for what, v in (("prove", verdict(e.name)), ("program", program_verdict(e.name))):
            if v == "undecided":
                out.append(f"  {e.name} {what}: {undecided_why(e.name, what)}")
    return out


def table_foot(rows):
    """What the marks mean, then the first wrong case of every run that has one, then why a
    verdict is undecided, then the sources."""
    lines = [""] + textwrap.wrap(MARKS + "; time: the row's runs, wall seconds; "
                                 + VERDICT_NOTE, 80)
    wrong = [(f"{row.entry.name} {column(r.system)}", problems(r))
             for row in rows for r in row.runs if problems(r)]
    lines.append("first wrong case" + (":" if wrong else ": none"))
    width = max((len(what) for what, _ in wrong), default=0)
    lines += [f"  {what:<{width}}  {why}" for what, why in wrong]
    undecided = undecided_lines(row.entry for row in rows)
    if undecided:
        lines += ["undecided:"] + undecided
    width = max((len(row.entry.name) for row in rows), default=0)
    lines += ["sources:"] + [f"  {row.entry.name:<{width}}  {source_text(row.entry.source)}"
                             for row in rows]
    if any(row.interrupted for row in rows):
        lines.append("interrupted (Ctrl-C): the last row counts the cases checked until then")
    return lines


def markdown_head(columns, k=None):
    """The Markdown table's first lines: the cases as a sentence, then the header."""
    names = HEAD + tuple(columns) + TAIL + ("first wrong", "time", "source")
    return [protocol_text(k) + ".", "",
            "| " + " | ".join(names) + " |",
            "|---|---|---:|---:|---|" + "---:|" * len(columns) + "---|---|---|---:|---|"]


def markdown_line(row, columns):
    """One row of the Markdown table; a run left out (interrupted) is an empty cell."""
    e = row.entry
    cells = ([cell(row, r).replace("*", "\\*") for r in row.runs]
             + [""] * (len(columns) - len(row.runs)))
    wrong = "; ".join(f"{column(r.system)}: {problems(r)}" for r in row.runs if problems(r))
    verdicts = [c if v != "undecided" else f"{c} ({undecided_why(e.name, w)})"
                for w, v, c in (("prove", verdict(e.name), prove_cell(e.name)),
                                ("program", program_verdict(e.name), program_verdict(e.name)))]
    return "| " + " | ".join(list(_front(e)) + cells + verdicts
                             + [wrong, f"{row.seconds:.1f} s", source_text(e.source, 40)]) + " |"


def markdown_foot():
    return ["", MARKS.replace("*", "\\*") + "; " + VERDICT_NOTE + "."]


def table_json(rows, systems, k=None):
    """The table as one JSON-ready object; ``systems``: the runs' labels, in order."""
    return {"protocol": protocol_text(k), "seed": cases.SEED,
            "cases": k or PROTOCOL_CASES, "of": PROTOCOL_CASES,
            "systems": list(systems),
            "models": [{"model": row.entry.name, "family": row.entry.family,
                        "params_claimed": row.entry.claimed,
                        "params_counted": row.entry.counted, "dtype": row.entry.dtype,
                        "runs": [_run_json(row, r) for r in row.runs]} for row in rows]}


def _run_json(row, r):
    first = dict(zip(("a", "b", "answer"), r.wrong[0])) if r.wrong else None
    first_open = dict(zip(("a", "b"), r.undecided[0])) if r.undecided else None
    return {"system": r.system, "published": r.system == row.entry.dtype,
            "checked": r.checked, "passed": r.passed, "wrong": len(r.wrong),
            "first_wrong": first, "open": len(r.undecided), "first_open": first_open,
            "seconds": round(r.seconds, 3), "interrupted": r.interrupted}
