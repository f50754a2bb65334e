"""``tinyadder board``: AdderBoard's entries shipped as model files, listed and replayed.

``entries()`` reads every board model file (``models.board_names()``) into an ``Entry``: its
name, family, author, the parameters it claims and those the ledger counts from the file
(``analysis.ledger``), the dtype its original program computes in, and its source.
``replay`` runs one of the suites the board's fixtures hold through a model and keeps the
wrong sums: ``adderboard`` (AdderBoard's verify.py list, 10 edge cases and 10,000 pairs from
``random.Random(2025)``), ``carries`` (``cases.carry_pairs`` with 20 pairs per (m, g): 1,760)
or ``edges`` (``cases.edge_suite``: 67), whole or as an even sample.
"""

from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from .. import cases, models
from ..addition import answer_length, digits_of, encode, text
from ..forward import forward
from ..generate import generate
from ..numbers import for_model, number_system
from ..plan import compile_model
from . import ledger, verify

SUITES = ("adderboard", "carries", "edges")
SHORT = {"float": "float64"}  # a number system's name as the dtype column writes it
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


def entry(name):
    """The Entry of the board model ``name``."""
    model = models.build(name)
    about = model.about
    return Entry(name=name, family=about.get("family", ""), author=about.get("author", ""),
                 claimed=about.get("params_claimed"),
                 counted=ledger.totals(ledger.ledger(model)).params,
                 dtype=about.get("dtype", ""), source=dict(about.get("source", {})))


def entries():
    """Every board model's Entry, by claimed parameters, then name."""
    found = [entry(name) for name in models.board_names()]
    return sorted(found, key=lambda e: (e.claimed is None, e.claimed or 0, e.name))


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
    """One model's run over (a sample of) one suite: the wrong sums as (a, b, model's sum)."""

    name: str
    system: str
    suite: str
    checked: int
    wrong: Tuple[Tuple[int, int, int], ...]
    digits: int
    seconds: float
    interrupted: bool = False


def replay(name, suite, k=None, ns=None, progress=None):
    """Run the board model ``name`` on ``sample(suite_pairs(suite), k)`` in ``ns`` (None: the
    model's published dtype; a system is fitted to the model's precision)."""
    model = models.build(name)
    ns = native(model) if ns is None else for_model(ns, model)
    outcome = verify.check(model, ns, {suite: sample(suite_pairs(suite), k)}, progress)
    return Replay(name, SHORT.get(ns.name, ns.name), suite, outcome.total,
                  tuple(outcome.failures), digits_of(model), outcome.seconds,
                  outcome.interrupted)


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


def source_text(source, commit=12):
    """'repo path @ commit' (the commit cut to ``commit`` characters)."""
    where = " ".join(x for x in (source.get("repo"), source.get("path")) if x)
    return where + (f" @ {source['commit'][:commit]}" if source.get("commit") else "")


COLUMNS = ("model", "family", "author", "claimed", "counted", "dtype")


def _row(e):
    return (e.name, e.family, e.author, "" if e.claimed is None else str(e.claimed),
            str(e.counted), e.dtype)


def table(found):
    """The list as aligned text: one row per entry, then each entry's source."""
    rows = [COLUMNS] + [_row(e) for e in found]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    right = {3, 4}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    lines += ["", "claimed: the entry's own count; counted: tinyadder params, from the file",
              "", "sources (repository path @ commit, where it was read; the original):"]
    width = widths[0]
    for e in found:
        lines.append(f"  {e.name:<{width}}  {source_text(e.source)}")
        if e.source.get("url"):
            lines.append(f"  {'':<{width}}  {e.source['url']}")
    return lines


def markdown(found):
    """The list as a Markdown table, the source in its last column."""
    head = COLUMNS + ("source",)
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---:" if c in ("claimed", "counted") else "---" for c in head)
             + "|"]
    for e in found:
        where = source_text(e.source, 40)
        if e.source.get("url"):
            where += f" ({e.source['url']})"
        lines.append("| " + " | ".join(_row(e) + (where,)) + " |")
    return lines


def as_json(found):
    return [{"model": e.name, "family": e.family, "author": e.author,
             "params_claimed": e.claimed, "params_counted": e.counted, "dtype": e.dtype,
             "source": dict(e.source)} for e in found]


def replay_lines(result, show=3):
    """One line per replay (no timing, so a rerun prints the same text), then its first
    ``show`` wrong sums."""
    wrong = len(result.wrong)
    line = (f"{result.name}: {result.suite} {result.checked} pairs in {result.system}: "
            f"{wrong} wrong" + (" (interrupted)" if result.interrupted else ""))
    lines = [line]
    for a, b, got in result.wrong[:show]:
        lines.append(f"  {text(a, b, got, result.digits)}, not {a + b:0{result.digits + 1}d}")
    if wrong > show:
        lines.append(f"  ... and {wrong - show} more")
    return lines
