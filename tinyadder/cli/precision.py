"""``tinyadder precision``: the command line of ``analysis.precision``."""

import argparse

from .. import addition, cases
from ..analysis.precision import DIGITS_RANGE, PAIRS, SCAN, SCAN_LIMIT, SYSTEMS, compare, table
from ..construction import DIGITS
from ..numbers import FractionSystem, number_system
from .options import PROG as MAIN_PROG
from .options import (Parser, Progress, add_model_options, construction_only, digits_list_arg,
                      excerpt, int_arg, model_of)
from .tracing import size_problem

# Peak memory over the estimate of its two traces (exact and approximate): 1.3 measured at
# N = 20 (docs/cli.md), with a margin.
COMPARE_COPIES = 1.5

PROG = "tinyadder precision"


class _ReaderLeft(Exception):
    pass


def systems_list(text):
    specs = [part.strip() for part in text.split(",") if part.strip()]
    for spec in specs:
        try:
            number_system(spec)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return specs


def systems_arg(text):
    """--systems: at least one number system (a table needs a row)."""
    specs = systems_list(text)
    if not specs:
        raise argparse.ArgumentTypeError(f"no number system in {excerpt(text)}; give one or "
                                         f"more such as float32,decimal")
    return specs


def build_parser():
    parser = Parser(
        prog=PROG,
        description="Accuracy of TinyAdder-36 per number system and operand length N; or, "
                    "for one addition EXPR, where the rounding error of --number (here "
                    "float32 by default) first exceeds the margin that decides a digit. The "
                    "model defaults to repaired, so that every wrong sum is a rounding error. "
                    "Progress goes to standard error.")
    parser.add_argument("expression", nargs="?", metavar="EXPR",
                        help="one addition to compare with the exact run (default: the "
                             "accuracy table)")
    add_model_options(parser, number="float32", model="repaired")
    parser.add_argument("--digits", type=digits_list_arg, default=None,
                        metavar="N[,N...]",
                        help=f"operand lengths of the table (default "
                             f"{','.join(map(str, DIGITS_RANGE))}); with EXPR one N "
                             f"(default {DIGITS})")
    parser.add_argument("--systems", type=systems_arg, default=list(SYSTEMS),
                        metavar="S[,S...]",
                        help=f"table rows (default {','.join(SYSTEMS)}); decimal without P "
                             f"uses N + 30 digits")
    parser.add_argument("--scan", type=systems_list, default=list(SCAN), metavar="S[,S...]",
                        help="systems whose largest safe N is searched, N = 1, 2, ... until "
                             f"the first failure (at most {SCAN_LIMIT}; default "
                             f"{','.join(SCAN)}; '' for none)")
    parser.add_argument("--pairs", type=int_arg(0, 1000), default=PAIRS,
                        metavar="K",
                        help=f"seeded random pairs per N, after the edge cases (default {PAIRS})")
    parser.add_argument("--seed", type=int_arg(), default=cases.SEED,
                        help=f"random seed (default {cases.SEED}, AdderBoard's)")
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``: the table, or one addition
    compared (1, with a warning, when a run's sum is wrong)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.expression is None:
        construction_only(parser, args, "the table")
        args.digits = args.digits or list(DIGITS_RANGE)
        line = Progress(err, seconds=0)

        def progress(done, total, note):
            if getattr(out, "left", False):
                raise _ReaderLeft  # the pipe was closed: the rest of the table is unread
            line(done, total, note)
        try:
            return table(args, out, progress)
        except _ReaderLeft:
            return 0
        finally:
            line.done()
    if args.digits is not None and len(args.digits) != 1:
        parser.error(f"with EXPR give one N in --digits, got {len(args.digits)}")
    choice = args.model
    model = model_of(parser, argparse.Namespace(model=choice,
                                                digits=args.digits and args.digits[0]))
    args.model, args.digits = str(choice), [addition.digits_of(model)]
    try:
        a, b = addition.parse_expression(args.expression, args.digits[0])
    except addition.InputError as error:
        parser.error(str(error))
    refusal = size_problem("comparing traces", choice, model, [FractionSystem(), args.number],
                           COMPARE_COPIES)
    if refusal:
        parser.error(refusal)
    wrong = compare(args, out, model)
    for run, answer in wrong:
        print(f"{MAIN_PROG}: warning: the {args.model} model's sum {answer} ({run}) is wrong: "
              f"{a} + {b} = {a + b}", file=err)
    return 1 if wrong else 0
