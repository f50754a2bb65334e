"""``tinyadder census``: the command line of ``proof.census``."""

import time

from .. import addition
from ..proof.census import ADDERBOARD_RANDOM, census, examples
from ..proof.census import estimate_bytes, estimate_seconds as counting_seconds
from ..proof.search import generic
from ..proof.symbolic import NotAffine
from ..numbers import number_system
from .options import (PROG, Parser, Progress, add_digits_option, add_jobs_option,
                      add_model_option, model_of)
from .prove import symbolic_progress


def build_parser():
    parser = Parser(
        prog=f"{PROG} census",
        description="Count exactly the pairs of N-digit numbers, of all 10^(2N), that the "
                    "model adds wrongly; describe them as windows of the sum s = a + b; run "
                    "examples of each window through the interpreter; give the chance that "
                    "AdderBoard's 10,010 cases meet one (docs/proof.md). A model this method "
                    "does not reach gets the generic method's certified bounds on the count. "
                    "Progress and a time estimate go to standard error. Exit status 0 when no "
                    "pair fails, 1 when some do, 3 when the bounds leave it open, 2 for bad "
                    "options.")
    add_model_option(parser)
    add_digits_option(parser)
    add_jobs_option(parser, "the symbolic pass and the counting")
    return parser


def memory(size):
    """'620 MB', '23 GB': a byte count, rounded, in MB below 10 GB."""
    return f"{size / 1e9:.0f} GB" if size >= 1e10 else f"{size / 1e6:,.0f} MB"


def _pairs(x):
    return f"{x:,}"


def report(result, variant, shown):
    n = result.digits
    lines = [f"census: {variant} model, N = {n} digits, all 10^{2 * n} pairs"]
    if not result.windows:
        lines.append("failing pairs: 0 (no window: every digit decision is safe)")
        return lines
    lines.append("the failing set, as windows of the sum s = a + b (place 10^p: where the")
    lines.append("first wrong digit is written, one too high unless marked):")
    for k, w in enumerate(result.windows, 1):
        lines.append(f"  {k}. {result.describe(w)}")
        for a, b, got in shown.get(w, []):
            lines.append(f"     {a} + {b} = {a + b}, model {got}")
    f = result.fraction
    lines.append(f"failing pairs: {_pairs(result.count)} of 10^{2 * n} "
                 f"(fraction {float(f):.6g})")
    if result.uncertain:
        lines.append(f"  {result.uncertain} of them within rounding of a threshold: "
                     f"the real-number model may differ there")
    else:
        lines.append("  the same for the real-number model (no pair within rounding of a "
                     "threshold)")
    p = result.hit_probability()
    lines.append(f"chance that {ADDERBOARD_RANDOM:,} uniform random pairs (AdderBoard) "
                 f"meet one: {float(p):.6g}")
    return lines


def bounds_report(count, name):
    """The lines of the generic method's certified bounds on the failures."""
    n = count.digits
    lines = [f"census: {name} model, N = {n} digits, all 10^{2 * n} pairs (generic method: "
             f"the forward pass over sets of pairs, certified bounds)"]
    if count.high == 0:
        lines.append("failing pairs: 0 (every answer position decided right over every pair)")
        return lines
    lines.append(f"failing pairs: between {count.low:,} and {count.high:,} of 10^{2 * n} "
                 f"(at least those shown wrong at one answer position; at most those shown "
                 f"wrong or left open at any)")
    if count.counterexamples:
        lines.append("examples, each confirmed by an exact run:")
        lines += [f"  {a} + {b} = {a + b}, model {got}" for a, b, got in
                  count.counterexamples[:4]]
    lines.append(f"  {count.sets} regions run through the pass, {count.runs} exact runs of "
                 f"single pairs")
    return lines


def bounds(model, args, out, err, start):
    """census by the generic method (a model the closed form does not reach): the exit
    status 0 when no pair fails, 1 when some pair does, 3 when the bounds leave it open or
    the method does not reach the model either."""
    try:
        count = generic.failure_count(model, progress=Progress(err, "generic census"),
                                      jobs=args.jobs)
    except ValueError as why:
        print(f"{PROG}: census: {why}", file=err)
        return 3  # no count: neither "none fail" (0) nor "some fail" (1)
    for line in bounds_report(count, args.model):
        print(line, file=out)
    print(f"time {time.perf_counter() - start:.1f} s", file=err, flush=True)
    return 0 if count.high == 0 else 1 if count.low else 3


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)  # a usage error exits 2 (cli.main)
    model = model_of(parser, args)
    digits = addition.digits_of(model)
    start = time.perf_counter()
    progress = symbolic_progress(digits, err)

    def estimate(wins):
        print(f"{len(wins)} windows; counting should take about "
              f"{counting_seconds(wins, digits):.0f} s and {memory(estimate_bytes(wins, digits))} "
              f"of memory", file=err, flush=True)
    counting = Progress(err, "counting", seconds=0)
    try:
        result = census(model, progress=progress, before_count=estimate, counting=counting,
                        jobs=args.jobs)
    except NotAffine as why:
        print(f"{PROG}: census: the method does not reach this model: {why}; the generic "
              f"method's certified bounds", file=err)
        return bounds(model, args, out, err, start)
    ns = number_system("fraction")
    shown, wrong = {}, True
    for w in result.windows:
        rows = []
        for a, b in examples(result, w):
            got = addition.add(model, ns, a, b)
            wrong = wrong and got != a + b
            rows.append((a, b, got))
        shown[w] = rows
    for line in report(result, args.model, shown):
        print(line, file=out)
    if not wrong:
        print(f"{PROG}: census: an example the census counts as failing is added right: "
              f"the census is wrong here", file=err)
    print(f"time {time.perf_counter() - start:.1f} s", file=err, flush=True)
    return 1 if result.count or not wrong else 0
