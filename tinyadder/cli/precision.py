"""``tinyadder precision``: the command line of ``analysis.precision``."""

import argparse
import sys

from .. import addition, cases
from ..analysis.precision import DIGITS_RANGE, PAIRS, SCAN, SCAN_LIMIT, SYSTEMS, compare, table
from ..construction import DIGITS
from ..numbers import number_system
from .options import Parser, add_model_options, digits_list_arg

PROG = "tinyadder precision"


def systems_list(text):
    specs = [part.strip() for part in text.split(",") if part.strip()]
    for spec in specs:
        try:
            number_system(spec)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return specs


def build_parser():
    parser = Parser(
        prog=PROG,
        description="Accuracy of TinyAdder-36 per number system and operand length N; or, "
                    "for one addition EXPR, where the rounding error of --number (here "
                    "float32 by default) first exceeds the margin that decides a digit. The "
                    "model defaults to repaired, so that every wrong sum is a rounding error.")
    parser.add_argument("expression", nargs="?", metavar="EXPR",
                        help="one addition to compare with the exact run (default: the "
                             "accuracy table)")
    add_model_options(parser)
    parser.set_defaults(model="repaired", number="float32")
    parser.add_argument("--digits", type=digits_list_arg, default=None,
                        metavar="N[,N...]",
                        help=f"operand lengths of the table (default "
                             f"{','.join(map(str, DIGITS_RANGE))}); with EXPR one N "
                             f"(default {DIGITS})")
    parser.add_argument("--systems", type=systems_list, default=list(SYSTEMS),
                        metavar="S[,S...]",
                        help=f"table rows (default {','.join(SYSTEMS)}); decimal without P "
                             f"uses N + 30 digits")
    parser.add_argument("--scan", type=systems_list, default=list(SCAN), metavar="S[,S...]",
                        help="systems whose largest safe N is searched, N = 1, 2, ... until "
                             f"the first failure (at most {SCAN_LIMIT}; default "
                             f"{','.join(SCAN)}; '' for none)")
    parser.add_argument("--pairs", type=int, default=PAIRS, metavar="K",
                        help=f"seeded random pairs per N, after the edge cases (default {PAIRS})")
    parser.add_argument("--seed", type=int, default=cases.SEED, help="random seed (default "
                        f"{cases.SEED}, AdderBoard's)")
    return parser


def main(argv=None, out=None):
    """``tinyadder precision [EXPR] [options]``: the table, or one addition compared."""
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.pairs < 0:
        parser.error(f"--pairs must be 0 or more, got {args.pairs}")
    if args.expression is None:
        args.digits = args.digits or list(DIGITS_RANGE)
        return table(args, out)
    args.digits = args.digits or [DIGITS]
    if len(args.digits) != 1:
        parser.error(f"with EXPR give one N in --digits, got {len(args.digits)}")
    try:
        return compare(args, out)
    except addition.InputError as error:
        parser.error(str(error))
