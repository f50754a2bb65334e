"""``tinyadder board``: the command line of ``analysis.board``."""

import argparse
import json
import textwrap

from .. import models
from ..addition import excerpt
from ..analysis import board
from ..analysis.parallel import each_share
from ..proof.search import generic
from .prove import certificate_path_problem, write_certificate
from .options import PROG, Parser, Progress, add_jobs_option, int_arg, number_arg


def build_parser():
    parser = Parser(
        prog=f"{PROG} board",
        description="AdderBoard's entries shipped as model files: name, family, author, the "
                    "parameters each claims and those counted from its file, the dtype its "
                    "original computes in, and its source (docs/models.md). With --table, "
                    "the leaderboard re-verified: AdderBoard's protocol (verify.py's 10,010 "
                    "cases, seed 2025) through every model in exact arithmetic (certified), "
                    "float64 and float32, one row per model as its runs end, progress on "
                    "standard error. An exact run takes up to 0.1 s of CPU per case and "
                    "model, so the whole table takes over two hours of CPU (bench estimates "
                    "it, docs/speed.md): --cases K runs the first K. With --run, "
                    "replay a suite "
                    "through models and report the wrong sums (timing and progress on "
                    "standard error). A pair whose digits the fraction system cannot certify is "
                    "open (not counted right or wrong). Exit status 0 when every sum is "
                    "right, 1 otherwise (a wrong or an open pair), 130 interrupted.")
    parser.add_argument("--json", action="store_true",
                        help="print the list (or the table) as JSON")
    parser.add_argument("--markdown", action="store_true",
                        help="print the list (or the table) as a Markdown table")
    parser.add_argument(
        "--table", action="store_true",
        help="run AdderBoard's protocol through the models in each number system and print "
             "the table: parameters claimed and counted, passed/checked per system ('*': "
             "the dtype the entry was published in), the first wrong case, the time")
    parser.add_argument(
        "--cases", type=int_arg(1, board.PROTOCOL_CASES), metavar="K",
        help=f"with --table: the first K of the protocol's {board.PROTOCOL_CASES:,} cases "
             "(its 10 edge cases come first, so K >= 10 is verify's --cases K-10), stated "
             "in the table's first line; default: all")
    parser.add_argument(
        "--models", type=models_arg, metavar="NAME,...",
        help="with --table: these board models, in the list's order (default: every one)")
    parser.add_argument(
        "--systems", type=systems_arg, metavar="SYSTEM,...",
        help="with --table: the number systems, one column each (fraction, decimal, "
             "decimal:P, float or float32; default: fraction,float,float32)")
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
                        help="with --run: K pairs spread evenly over the suite (default: all)")
    parser.add_argument(
        "--number", type=number_arg, metavar="SYSTEM",
        help="with --run: number system of the replay (fraction, decimal, decimal:P, float "
             "or float32); default: each model's published dtype")
    parser.add_argument(
        "--count", metavar="NAME", type=count_arg,
        help="count the pairs of all 10^20 that NAME's real-number model adds wrong, by the "
             "generic method with the board's budget (regions per answer position, so that "
             "a rerun derives the same bounds): certified bounds [lo, hi], compared with "
             "the list's record; exit status 0 when none fail, 1 when some do, 3 when the "
             "bounds leave it open")
    parser.add_argument("--sets", type=int_arg(1, 10 ** 9), default=board.COUNT_SETS,
                        metavar="S", help=f"with --count: regions per answer position "
                                          f"(default {board.COUNT_SETS})")
    parser.add_argument("--certificate", metavar="FILE",
                        help=f"with --count: write the count's regions (JSON, .gz "
                             f"compressed), for '{PROG} check-certificate FILE', which derives "
                             f"the bounds again")
    add_jobs_option(parser, "the models of --table or --run all (one model a part; "
                            "progress then per model)")
    return parser


def run_arg(text):
    """--run: 'all' or a board model's name."""
    if text == "all" or text in board.names():
        return text
    raise argparse.ArgumentTypeError(f"unknown board model {excerpt(text)}; use all or a "
                                     f"name '{PROG} board' lists")


def count_arg(text):
    """--count: a listed model's name."""
    if text in board.names():
        return text
    raise argparse.ArgumentTypeError(f"unknown board model {excerpt(text)}; use a name "
                                     f"'{PROG} board' lists")


def models_arg(text):
    """--models: board model names, comma-separated, each once."""
    names = text.split(",")
    for name in names:
        if name not in board.names():
            raise argparse.ArgumentTypeError(f"unknown board model {excerpt(name)}; use "
                                             f"names '{PROG} board' lists, comma-separated")
    if len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"a model is named twice in {excerpt(text)}")
    return names


def systems_arg(text):
    """--systems: number systems, comma-separated, each once."""
    systems = [number_arg(part) for part in text.split(",")]
    columns = [board.column(board.label(ns)) for ns in systems]
    if len(set(columns)) < len(columns):
        raise argparse.ArgumentTypeError(f"a number system is named twice in {excerpt(text)}")
    return systems


def lead():
    """The list's first lines, for a reader new to the board: what the columns a learner
    needs first mean, why 100% on the suite and "fails" in prove agree, and where to start."""
    return textwrap.wrap(
        "AdderBoard's entries as model files, one row each. In short: ledger counts every "
        "entry's parameters under one rule (seed 000's); prove is the verdict on all 10^20 "
        "pairs, exact; suite is the accuracy on AdderBoard's 10,010 test cases. 100% there "
        f"and \"fails\" in prove can hold at once: published fails on {board.PUBLISHED_FAILURES:,} pairs, each a sum "
        "just below a multiple of a power of ten, and the suite's cases miss them "
        "(docs/walkthrough.md, section 8). Every column is explained under the tables; to "
        "learn a design, start with the line under the first table.", 88)


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json and args.markdown:
        parser.error("--json and --markdown are two formats; give one")
    if args.run is None and (args.suite, args.sample, args.number) != (None, None, None):
        parser.error("--suite, --sample and --number go with --run NAME|all")
    if not args.table and (args.cases, args.models, args.systems) != (None, None, None):
        parser.error("--cases, --models and --systems go with --table")
    if args.table and args.run is not None:
        parser.error("--table and --run are two commands; give one")
    if args.jobs > 1 and not args.table and args.run is None:
        parser.error("--jobs goes with --table or --run")
    if args.count is not None:
        if args.table or args.run is not None or args.json or args.markdown:
            parser.error("--count is a command of its own; give it alone")
        if args.certificate is not None and certificate_path_problem(args.certificate):
            parser.error(certificate_path_problem(args.certificate))
        return count(args.count, out, err, args.sets, args.certificate)
    if args.sets != board.COUNT_SETS or args.certificate is not None:
        parser.error("--sets and --certificate go with --count")
    if args.table:
        return table(args, out, err)
    if args.run is None:
        found = board.listed()
        if args.json:
            print(json.dumps(board.as_json(found), indent=1), file=out)
        else:
            print("\n".join(board.markdown(found) if args.markdown else
                            lead() + [""] + board.table(found)), file=out)
        return 0
    if args.json or args.markdown:
        parser.error("--json and --markdown print the list or the table; leave out --run")
    return replay(args, out, err)


def replay(args, out, err):
    """--run: one line per model, its wrong sums below it."""
    names = board.names() if args.run == "all" else [args.run]
    suite = args.suite or "adderboard"

    def one(name):
        progress = Progress(err, what=name, every=1000, at_once=False) if args.jobs == 1 \
            else None  # processes would write over each other's progress lines
        result = board.replay(name, suite, args.sample, args.number, progress)
        if progress:
            progress.done()
        return result

    status = 0
    for result in each_share(one, names, args.jobs):
        print("\n".join(board.replay_lines(result)), file=out)
        out.flush()
        print(f"{result.name}: time {result.seconds:.1f} s", file=err, flush=True)
        if result.interrupted:
            return 130
        if getattr(out, "left", False):  # the reader closed the pipe
            break
        status = status or (1 if result.wrong or result.undecided else 0)
    return status


def table(args, out, err):
    """--table: each row printed when its runs end (text, Markdown), or all as JSON."""
    found = [board.any_entry(name) for name in args.models] if args.models else board.listed()
    systems = args.systems or [number_arg(s) for s in board.TABLE_SYSTEMS]
    names = [board.label(ns) for ns in systems]
    columns = [board.column(n) for n in names]
    pairs = board.protocol_cases(args.cases)
    widths = board.table_widths([e.name for e in found], columns, args.cases)
    if not args.json:
        head = (board.markdown_head(columns, args.cases) if args.markdown
                else board.table_head(widths, columns, args.cases))
        print("\n".join(head), file=out, flush=True)
    rows = []
    for row in each_share(lambda e: table_row(e, systems, pairs, err, args.jobs == 1), found,
                          args.jobs):
        rows.append(row)
        if not args.json:
            line = (board.markdown_line(row, columns) if args.markdown
                    else board.table_line(row, widths))
            print(line, file=out, flush=True)
        if row.interrupted or getattr(out, "left", False):  # Ctrl-C, or the reader left
            break
    if args.json:
        print(json.dumps(board.table_json(rows, names, args.cases), indent=1), file=out)
    else:
        foot = board.markdown_foot() if args.markdown else board.table_foot(rows)
        print("\n".join(foot), file=out)
    if any(row.interrupted for row in rows):
        return 130
    return 1 if any(row.wrong for row in rows) else 0


def table_row(e, systems, pairs, err, shown=True):
    """The Row of entry ``e``: its model through ``pairs`` in each system, until Ctrl-C;
    progress on ``err`` when ``shown``."""
    model = models.build(e.name)
    runs = []
    for ns in systems:
        progress = Progress(err, what=f"{e.name} {board.column(board.label(ns))}",
                            at_once=False) if shown else None
        runs.append(board.run(model, "adderboard", pairs, ns, progress))
        if progress:
            progress.done()
        if runs[-1].interrupted:
            break
    return board.Row(e, tuple(runs))


def count(name, out, err, sets=board.COUNT_SETS, path=None):
    """--count: the generic method's certified bounds on the failures of ``name`` (``sets``
    regions per answer position), beside the list's record; its certificate written to
    ``path`` where one is given."""
    model = models.build(name)
    try:
        found = generic.failure_count(model, max_sets=sets,
                                      max_seconds=board.COUNT_SECONDS,
                                      progress=Progress(err, f"{name} count"),
                                      carries_first=bool(board.PROOF_OPTIONS.get(name)),
                                      seeds=board.seeds(name))
    except (ValueError, ArithmeticError) as why:  # a model the method does not reach
        print(f"{PROG}: board: --count {name}: the generic method does not reach this "
              f"model: {type(why).__name__}: {str(why)[:120]}", file=err)
        return 3
    how = f"board --count {name}" + (f" --sets {sets}" if sets != board.COUNT_SETS else "")
    got = board.Count(found.low, found.high, how)
    print(board.count_lines(name, got, found.sets, found.runs, found.counterexamples, sets),
          file=out)
    if path is not None:
        failed = write_certificate(path, generic.count_certificate(found, model, name), err)
        if failed:
            return failed
    return 0 if got.high == 0 else 1 if got.low else 3
