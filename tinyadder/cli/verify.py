"""``tinyadder verify``: the command line of ``analysis.verify``."""

import textwrap

from .. import task
from ..analysis import exhaust
from ..analysis.verify import (DEFAULT_CASES, SUITES, check, report, suite_groups,
                               suite_size)
from ..cases import SEED
from ..addition import digits_of
from ..construction import DIGITS
from ..numbers import for_model
from .options import (PROG, Parser, Progress, add_digits_option, add_jobs_option,
                      add_model_options, int_arg, model_of)


MAX_CASES = 1_000_000  # about 3 hours exact, 5 minutes in float, on this project's machine


def build_parser():
    parser = Parser(
        prog=f"{PROG} verify",
        description="Check the model's sums against Python's a + b on a seeded suite of "
                    "cases. The report goes to standard output, progress and timing to "
                    "standard error. Exit status 0 when every sum is right, 1 otherwise.")
    parser.add_argument(
        "--suite", choices=SUITES, default="adderboard",
        help="adderboard (default): AdderBoard's verify.py protocol; carries: pairs whose "
             "low m digit columns sum to just below 10^m, where the published readout "
             "fails; edges: all nines, all zeros, alternating carries, every carry chain")
    parser.add_argument(
        "--cases", type=int_arg(1), default=None, metavar="N",
        help="adderboard: random pairs after the 10 edge cases (default 10000); carries: "
             "pairs per (m, g) (default 10); edges: draws per carry chain and start "
             "(default 1). A run checks at most 1,000,000 additions (about 3 hours exact)")
    parser.add_argument(
        "--seed", type=int_arg(), default=SEED, metavar="S",
        help=f"random seed of the suite (default {SEED}, AdderBoard's)")
    add_model_options(parser)
    add_digits_option(parser)
    add_jobs_option(parser, "the additions")
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    n = DEFAULT_CASES[args.suite] if args.cases is None else args.cases
    model = model_of(parser, args, tasks=True)
    if task.has_task(model):
        return verify_task(parser, args, model, out)
    digits = digits_of(model)
    size = suite_size(args.suite, n, digits)
    if size > MAX_CASES:
        print(f"{PROG} verify: error: {size:,} cases; at most {MAX_CASES:,}: lower --cases "
              f"or --digits", file=err)
        return 2
    ns = for_model(args.number, model)
    groups = suite_groups(args.suite, n, args.seed, digits)
    progress = Progress(err, every=1000, at_once=False)
    outcome = check(model, ns, groups, progress, args.jobs)
    progress.done()
    name = args.model if digits == DIGITS else f"{args.model} for N = {digits} digits"
    for line in report(outcome, args.suite, n, args.seed, name, ns):
        print(line, file=out)
    out.flush()
    rate = outcome.total / outcome.seconds if outcome.seconds else 0.0
    print(f"time {outcome.seconds:.1f} s, {rate:.1f} additions/s", file=err, flush=True)
    if outcome.interrupted:
        return 130
    return 0 if outcome.passed == outcome.total else 1


def verify_task(parser, args, model, out):
    """verify of a model with a finite task: every input run once (``exhaust.runs``); the
    exit status 0 when all are right, 1 otherwise."""
    if args.suite != "adderboard" or args.cases is not None or args.seed != SEED:
        parser.error(f"the model {args.model} computes a finite task: verify runs every one "
                     f"of its inputs; --suite, --cases and --seed are for additions")
    ns = for_model(args.number, model)
    found = exhaust.runs(model, ns)
    right = sum(r.right for r in found)
    inputs = ", ".join(task.inputs(model))
    lines = [f"task: all {len(found)} inputs of {args.model} ({inputs}), each run once"]
    lines += textwrap.wrap(f"model {args.model}, number {ns.describe()}", 80,
                           subsequent_indent="  ")
    lines += exhaust.lines(found)
    lines.append(f"passed {right}/{len(found)}")
    for line in lines:
        print(line, file=out)
    out.flush()
    return 0 if right == len(found) else 1
