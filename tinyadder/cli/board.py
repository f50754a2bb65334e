"""``tinyadder board``: the command line of ``analysis.board``."""

import argparse
import json

from .. import models
from ..addition import excerpt
from ..analysis import board
from .options import PROG, Parser, Progress, int_arg, number_arg


def build_parser():
    parser = Parser(
        prog=f"{PROG} board",
        description="AdderBoard's entries shipped as model files: name, family, author, the "
                    "parameters each claims and those counted from its file, the dtype its "
                    "original computes in, and its source (docs/models.md). With --run, "
                    "replay a suite through models and report the wrong sums (timing and "
                    "progress on standard error). Exit status 0 when every sum is right, 1 "
                    "otherwise.")
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    parser.add_argument("--markdown", action="store_true",
                        help="print the list as a Markdown table")
    parser.add_argument(
        "--run", metavar="NAME|all", type=run_arg,
        help="replay the suite through this board model, or every one (all)")
    parser.add_argument(
        "--suite", choices=board.SUITES,
        help="adderboard (default): AdderBoard's verify.py list, 10 edge cases and 10,000 "
             "pairs from random.Random(2025); carries: low m columns summing to 10^m - g, "
             f"{board.CARRIES_PER_CELL} per (m, g) (1,760, as the fixtures hold them); "
             "edges: all nines, all zeros, alternating carries, every carry chain (67)")
    parser.add_argument("--sample", type=int_arg(1), metavar="K",
                        help="K pairs spread evenly over the suite (default: all)")
    parser.add_argument(
        "--number", type=number_arg, metavar="SYSTEM",
        help="number system of the replay (fraction, decimal, decimal:P, float or float32); "
             "default: each model's published dtype")
    return parser


def run_arg(text):
    """--run: 'all' or a board model's name."""
    if text == "all" or text in models.board_names():
        return text
    raise argparse.ArgumentTypeError(f"unknown board model {excerpt(text)}; use all or a "
                                     f"name '{PROG} board' lists")


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.run is None:
        if (args.suite, args.sample, args.number) != (None, None, None):
            parser.error("--suite, --sample and --number go with --run NAME|all")
        found = board.entries()
        if args.json:
            print(json.dumps(board.as_json(found), indent=1), file=out)
        else:
            print("\n".join(board.markdown(found) if args.markdown else board.table(found)),
                  file=out)
        return 0
    if args.json or args.markdown:
        parser.error("--json and --markdown print the list; leave out --run")
    names = models.board_names() if args.run == "all" else [args.run]
    suite = args.suite or "adderboard"
    status = 0
    for name in names:
        progress = Progress(err, what=name, every=1000, at_once=False)
        result = board.replay(name, suite, args.sample, args.number, progress)
        progress.done()
        print("\n".join(board.replay_lines(result)), file=out)
        out.flush()
        print(f"{name}: time {result.seconds:.1f} s", file=err, flush=True)
        if result.interrupted:
            return 130
        status = status or (1 if result.wrong else 0)
    return status
