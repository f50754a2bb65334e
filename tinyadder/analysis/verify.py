"""``tinyadder verify``: run a suite of additions through the model and compare with a + b.

Suites (generated in ``cases``, all seeded, so a run is reproducible):

- ``adderboard`` (default): AdderBoard's verify.py protocol, its 10 edge cases then
  ``--cases`` pairs (default 10,000) from ``random.Random(--seed)`` (default 2025).
- ``carries``: ``--cases`` pairs (default 10) for every (m, g) whose low m digit columns sum
  to 10^m - g: the region where the published readout fails.
- ``edges``: all nines, all zeros, alternating carries, and a single carry chain of every
  length at every start column (``--cases`` draws each, default 1).

Standard output is the report and depends only on the options (golden-testable, diffable);
progress and timing go to standard error. Exit status 0 when every sum is right, 1 otherwise,
2 for bad options.
"""

from dataclasses import dataclass
from functools import partial
import textwrap
import time
from typing import Dict, List, Tuple

from .. import addition, cases
from ..construction import DIGITS
from ..numbers import Undecided
from .parallel import each_share

SUITES = ("adderboard", "carries", "edges")
DEFAULT_CASES = {"adderboard": 10_000, "carries": 10, "edges": 1}
SHOW_FAILURES = 20  # as AdderBoard's verify.py: all failures, or the first 20 and a count
NOT_CERTIFIED = "no answer certified"  # a sum no precision certifies (``_sum``)
CHUNK = 200  # pairs per part of a run with jobs > 1 (fixed: the split does not follow jobs)


def suite_groups(suite, n, seed=cases.SEED, digits=DIGITS):
    """The suite's cases as {group label: [(a, b), ...]}, in the order they are run."""
    if suite == "adderboard":
        return cases.adderboard_suite(n, seed, digits)
    if suite == "carries":
        return cases.carry_pairs(n, seed, digits)
    if suite == "edges":
        return cases.edge_suite(n, seed, digits)
    raise ValueError(f"unknown suite {suite!r}; use {', '.join(SUITES)}")


def suite_size(suite, n, digits=DIGITS):
    """How many pairs ``suite_groups(suite, n, seed, digits)`` holds, without building them."""
    if suite == "adderboard":
        return len(cases.edge_cases(digits)) + n
    if suite == "carries":
        return n * sum(g < 10 ** m for m in range(1, digits + 1) for g in cases.CARRY_GAPS)
    if suite == "edges":
        return 5 + 3 + 4 + n * digits * (digits + 1) // 2
    raise ValueError(f"unknown suite {suite!r}; use {', '.join(SUITES)}")


@dataclass
class Outcome:
    """Per-group (passed, total), the failures as (a, b, model's sum), and the wall time."""

    groups: Dict[object, Tuple[int, int]]
    failures: List[Tuple[int, int, int]]
    seconds: float
    interrupted: bool = False  # Ctrl-C: the groups hold the pairs checked until then

    @property
    def total(self):
        return sum(total for _, total in self.groups.values())

    @property
    def passed(self):
        return sum(passed for passed, _ in self.groups.values())


def check(model, ns, groups, progress=None, jobs=1):
    """Run every pair through the model (``addition.add``, operands padded to the model's
    length) and compare with Python's a + b. ``progress(done, total, note)`` follows each pair
    (each part of ``CHUNK`` pairs when ``jobs`` > 1: the pairs in that order, split over that
    many processes, the outcome the same for every ``jobs``). Ctrl-C stops the run: the
    outcome then holds what was checked so far (``interrupted``)."""
    pairs = [(label, a, b) for label, group in groups.items() for a, b in group]
    start = time.perf_counter()
    sums, failed, interrupted = [], 0, False
    parts = [[(a, b) for _, a, b in pairs[i:i + CHUNK]] for i in range(0, len(pairs), CHUNK)]
    results = (each_share(partial(_sums, model, ns), parts, jobs) if jobs > 1 else
               ([_sum(model, ns, a, b)] for _, a, b in pairs))
    try:
        for got in results:
            failed += sum(s != a + b for s, (_, a, b) in zip(got, pairs[len(sums):]))
            sums += got
            if progress:
                progress(len(sums), len(pairs), f" ({len(sums) - failed} passed)")
    except KeyboardInterrupt:
        interrupted = True
    return _outcome(groups, pairs, sums, time.perf_counter() - start, interrupted)


def _sums(model, ns, part):
    """The model's sums of the pairs of one part."""
    return [_sum(model, ns, a, b) for a, b in part]


def _sum(model, ns, a, b):
    """The model's sum of a and b, or NOT_CERTIFIED where no precision certifies its digits
    (a tie in the real-number model): a pair that does not pass."""
    try:
        return addition.add(model, ns, a, b)
    except Undecided:
        return NOT_CERTIFIED


def _outcome(groups, pairs, sums, seconds, interrupted):
    """The ``Outcome`` of the first len(sums) pairs: per group (passed, checked), a group
    shown once one of its pairs is checked (or every group, when the run was whole)."""
    tally = {label: (0, 0) for label in groups} if not interrupted else {}
    failures = []
    for (label, a, b), got in zip(pairs, sums):
        passed, checked = tally.get(label, (0, 0))
        tally[label] = (passed + (got == a + b), checked + 1)
        if got != a + b:
            failures.append((a, b, got))
    return Outcome(tally, failures, seconds, interrupted)


def describe_suite(suite, n, seed):
    if suite == "adderboard":
        return (f"AdderBoard's {len(cases.EDGE_CASES)} edge cases + {n} pairs from "
                f"random.Random({seed})")
    if suite == "carries":
        return (f"low m digit columns summing to 10^m - g, {n} per (m, g), seed {seed}")
    return (f"all nines, all zeros, alternating carries, one carry chain of every length at "
            f"every start ({n} per chain), seed {seed}")


def carries_grid(groups, gaps=cases.CARRY_GAPS):
    """Failures per (m, g) as a table: '.' none failed, blank: no such cell (g >= 10^m)."""
    ms = sorted({m for m, _ in groups})
    lines = ["   m\\g" + "".join(f"{g:>6}" for g in gaps)]
    for m in ms:
        row = ""
        for g in gaps:
            if (m, g) in groups:
                passed, total = groups[m, g]
                row += f"{total - passed or '.':>6}"
            else:
                row += " " * 6
        lines.append(f"{m:>6}" + row.rstrip())
    return lines


def report(outcome, suite, n, seed, model_name, ns):
    """The report's lines (standard output): no timings, so a rerun prints the same text."""
    lines = (textwrap.wrap(f"suite {suite}: {describe_suite(suite, n, seed)}", 80,
                           subsequent_indent="  ")
             + textwrap.wrap(f"model {model_name}, number {ns.describe()}", 80,
                             subsequent_indent="  "))
    if suite == "carries":
        lines.append(f"failures per (m, g), out of {n} each ('.': none):")
        lines += carries_grid(outcome.groups)
    else:
        width = max(len(str(label)) for label in outcome.groups)
        lines += [f"  {label:<{width}}  {passed}/{total}"
                  for label, (passed, total) in outcome.groups.items()]
    total, passed = outcome.total, outcome.passed
    accuracy = f" ({100 * passed / total:.2f}%)" if total else ""
    if outcome.interrupted:
        lines.append(f"interrupted (Ctrl-C) after {total} cases: the counts are of those")
    lines.append(f"passed {passed}/{total}{accuracy}")
    failures = outcome.failures
    if not failures:
        lines.append("failures: none")
    else:
        shown = failures[:SHOW_FAILURES]
        more = f", first {len(shown)} shown" if len(shown) < len(failures) else ""
        lines.append(f"failures: {len(failures)}{more}")
        lines += [f"  {a} + {b} = {a + b}, model {got}" for a, b, got in shown]
    return lines
