"""``tinyadder bench``: the command line of ``analysis.bench``; it times census, prove, verify
and the command itself, which live above the analyses."""

import argparse
import io
import math
import os
import platform
import time

from ..analysis import board
from ..analysis.bench import (CASES, MODEL_CASES, MODEL_TARGETS, SYSTEMS, TARGETS,
                              TORCH_CASES, TRACE_PAIR, TRACE_TARGET, cpu_seconds,
                              long_addition, model_rates, originals, per_digit_factor, rates,
                              references, same_tokens, spread, trace_seconds)
from ..proof.census import census
from ..proof.search import floatsets, generic
from ..proof.formulas import digit_formulas
from ..proof.prove import prove
from ..analysis.verify import check, suite_groups
from ..cases import carry_pairs, random_pairs, verify_cases
from ..construction import DIGITS
from ..models import board_names, build, names
from ..numbers import for_model, number_system
from . import main_command
from .options import (PROG, Parser, add_jobs_option, add_model_options, construction_only,
                      digits_list_arg, excerpt, int_arg, model_of)

PARTS = ("rates", "models", "tokens", "long", "census", "prove", "verify", "traces", "board")
# traces: every shipped model's exact trace, a minute; board: every proved board model and
# program again, minutes
DEFAULT_PARTS = PARTS[:-2]
BOARD_MAX_SETS = 1000        # the budget the board's proofs were run with (docs/proof.md)
QUICK = {"tokens": (1001, 2), "long": [1000, 2000], "census": [8, 9, 10],
         "prove": [10, 20, 30]}
FULL = {"tokens": (10_010, 20), "long": [1000, 2000], "census": [8, 9, 10, 11, 12],
        "prove": [10, 20, 30, 50]}


def build_parser():
    parser = Parser(prog=f"{PROG} bench",
                    description="Additions per second per number system, in CPU time on "
                                "this machine (min, median and max of the repeats) and, "
                                "when torch is "
                                "importable, their ratio to two PyTorch float64 models "
                                "measured just before each repeat; the fraction system's "
                                "tokens over scaled integers against intervals; one long "
                                "addition; census, prove and the exact verify. About a "
                                "minute; --full takes the sizes of the speed issue.")
    add_model_options(parser, number=None)
    parser.add_argument("--only", type=_parts_arg, default=None, metavar="PARTS",
                        help=f"run only these parts, comma-separated: {', '.join(PARTS)} "
                             f"(default: all but traces, every shipped model's exact "
                             f"trace, and board, which proves every board model and float "
                             f"program the board lists as proved again; --long alone: "
                             f"long)")
    parser.add_argument("--repeats", type=int_arg(1, 100), default=5, metavar="R",
                        help="repeats per rate (default 5)")
    parser.add_argument("--scale", type=_fraction_arg, default=1.0, metavar="F",
                        help="run F times the default number of cases per rate, e.g. 0.1 "
                             "for a quick look (default 1; " +
                             ", ".join(f"{s} {k}" for s, k in CASES.items()) + ")")
    parser.add_argument("--long", type=digits_list_arg, default=None, metavar="N,N,...",
                        help="the lengths of the long additions (default 1000,2000), in "
                             "--number or fraction, decimal and float")
    parser.add_argument("--full", action="store_true",
                        help="the speed issue's sizes: tokens on all 10,010 AdderBoard "
                             "cases and 20 carries cases per cell, census N = 8..12, prove "
                             "N = 10, 20, 30, 50 (several minutes)")
    parser.add_argument("--adderboard", default=None, metavar="DIR",
                        help="a clone of Kiguli/AdderBoard: with torch importable, the "
                             "models part runs each original's own add loop now (default: "
                             "the rates tests/benchmarks/originals.py recorded)")
    add_jobs_option(parser, "each board model's answer positions (--only board)")
    return parser


def _parts_arg(text):
    parts = [p.strip() for p in text.split(",")]
    if not parts or any(p not in PARTS for p in parts):
        raise argparse.ArgumentTypeError(
            f"expected parts among {', '.join(PARTS)}, got {excerpt(text)}")
    return parts


def _fraction_arg(text):
    body = text.strip()
    try:  # float() alone would take '١.٥', 'nan' and '1_0'
        value = float(body) if body.isascii() and "_" not in body else 0.0
    except ValueError:
        value = 0.0
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(
            f"expected a number in (0, 100], got {excerpt(text)}")
    return value


def _warn(args, err, what):
    print(f"{PROG}: warning: the {args.model} model's sum is wrong {what} (marked WRONG "
          f"above)", file=err)
    return 1


def _rates(args, model, out, err):
    """The rates table; 1 if a sum was wrong (the model's own, said on ``err``)."""
    models, why = references(model)
    listed = verify_cases()
    few = listed[:TORCH_CASES]
    print("additions/s through the API (KV cache on), AdderBoard's verify cases, CPU;",
          file=out)
    print(f"min / median / max of {args.repeats} repeats", file=out)
    if models:
        print("x torch A, B: the rate over that of a PyTorch float64 model measured just "
              "before,\n  on the first {} cases (tests/benchmarks/torch_models.py, 1 thread):\n"
              "  A: from the published source's structure; B: dense from tinyadder's "
              "weights".format(TORCH_CASES), file=out)
    else:
        print(f"PyTorch comparison skipped: {why}", file=out)
    print(f"{'system':<9}{'cases':>6}{'add/s':>9}" + (f"{'x torch A':>18}{'x torch B':>18}"
                                                      f"{'target':>8}" if models else ""),
          file=out, flush=True)
    status = 0
    systems = [args.number.spec] if args.number else list(SYSTEMS)
    for spec in systems:
        name = spec.split(":")[0]
        k = max(1, round(CASES.get(name, CASES["decimal"]) * args.scale))
        row = rates(model, spec, listed[:k], args.repeats, models, few)
        line = f"{spec:<9}{k:>6}{spread(row.rates)[1]:>9,.0f}"
        for ratios in row.ratios.values():
            line += "  " + " ".join(f"{x:>5.1f}" for x in spread(ratios))
        if models and name in TARGETS:
            line += f"  >= {TARGETS[name]}"
        print(line + (f"  {row.wrong} WRONG" if row.wrong else ""), file=out, flush=True)
        if row.wrong:
            status = _warn(args, err, f"on {row.wrong} of {k} cases in {spec}, cache on")
    if models:
        rates_of = {name: spread(r)[1] for name, r in row.reference.items()}
        print("PyTorch models, CPU add/s (medians, last system's repeats): " +
              ", ".join(f"{name} {rate:,.0f}" for name, rate in rates_of.items()), file=out)
    return status


def _models(args, out):
    """Per shipped model (and per model of the board's list built rather than read:
    variant-22) its exact and float rates against its original's own program, and the board
    table's CPU (every model ``board --table`` lists) as those rates put it."""
    theirs, why = originals(args.adderboard)
    k = {spec: max(1, round(n * args.scale)) for spec, n in MODEL_CASES.items()}
    shipped = names()
    rows = shipped + [name for name in board.OWN if name not in shipped]
    listed = set(board_names()) | set(board.OWN)
    w = max(17, max(len(name) for name in rows) + 1)
    print(f"every shipped model through the API, add/s (CPU), first AdderBoard cases\n"
          f"  (exact {k['fraction']}, float {k['float']}); x orig: over its original's own "
          f"add(model, a, b),\n  {why}", file=out)
    print(f"{'model':<{w}}{'exact':>7}{'x orig':>7}{'float64':>8}{'float32':>8}{'dtype':>6}"
          f"{'x orig':>7}{'original':>9}", file=out, flush=True)
    table, counted = 0.0, 0
    for name in rows:
        row = model_rates(name, args.scale)
        r = row.rates
        theirs_rate = theirs.get(name)
        exact = f"{r['fraction'] / theirs_rate:>7.1f}" if theirs_rate else f"{'-':>7}"
        dtype = f"{r[row.dtype] / theirs_rate:>7.1f}" if theirs_rate else f"{'-':>7}"
        wrong = row.wrong["fraction"] + row.wrong[row.dtype]
        print(f"{name:<{w}}{r['fraction']:>7,.0f}{exact}{r['float']:>8,.0f}{r['float32']:>8,.0f}"
              f"{row.dtype.replace('float', 'f'):>6}{dtype}"
              + (f"{theirs_rate:>9,.0f}" if theirs_rate else f"{'-':>9}")
              + (f"  {wrong} wrong (exact, dtype)" if wrong else ""),
              file=out, flush=True)
        if name in listed:
            counted += 1
            table += sum(10_010 / r[spec] for spec in ("fraction", "float", "float32"))
    print(f"targets: exact >= {MODEL_TARGETS['fraction']} x orig, dtype >= "
          f"{MODEL_TARGETS['dtype']} x orig", file=out)
    print(f"board --table ({counted} models, 10,010 cases, exact, float64, float32) by "
          f"these rates:\n  {table:,.0f} CPU s (target 600)", file=out, flush=True)
    return 0


def _tokens(args, model, out, err):
    n, per_cell = (FULL if args.full else QUICK)["tokens"]
    pairs = verify_cases()[:n]
    carries = [p for group in carry_pairs(per_cell).values() for p in group]
    differ = same_tokens(model, pairs + carries)
    verdict = "identical" if not differ else f"{len(differ)} DIFFER, e.g. {differ[0]}"
    print(f"fraction tokens over scaled integers and over intervals, {n:,} AdderBoard and "
          f"{len(carries):,}\n  carries cases ({per_cell} per cell): {verdict}",
          file=out, flush=True)
    if differ:
        print(f"{PROG}: error: the scaled integers decided other tokens than the intervals "
              f"on {len(differ)} cases, e.g. {differ[0][0]}+{differ[0][1]}", file=err)
    return 1 if differ else 0


def _long(args, out, err):
    digits = args.long or (FULL if args.full else QUICK)["long"]
    systems = [args.number.spec] if args.number else ["fraction", "decimal", "float"]
    print(f"one seeded random N-digit addition, {args.model} model, CPU seconds", file=out)
    print(f"{'system':<10}{'N':>6}{'tokens':>8}{'CPU s':>9}  sum", file=out, flush=True)
    status = 0
    for spec in systems:
        before = None
        for n in digits:
            seconds, right = long_addition(args.model, n, spec)
            growth = ""
            if before and before[1] > 0 and seconds > 0 and n != before[0]:
                growth = f"  N^{math.log(seconds / before[1]) / math.log(n / before[0]):.2f}"
            before = n, seconds
            print(f"{spec:<10}{n:>6}{3 * n + 4:>8}{seconds:>9.2f}  "
                  f"{'right' if right else 'WRONG'}{growth}", file=out, flush=True)
            status = max(status, 0 if right else 1)
    if status:
        _warn(args, err, "at an N")
    if not args.number and not args.long:
        n = digits[-1]
        (a, b), = random_pairs(1, digits=n)
        seconds, _ = cpu_seconds(lambda: main_command.main(
            ["--model", args.model, "--digits", str(n), "--number", "float", f"{a}+{b}"],
            io.StringIO(), io.StringIO(), None))
        print(f"{PROG} --number float --digits {n} (its wrong sum checked in fraction): "
              f"{seconds:.2f}", file=out, flush=True)
    return status


def _per_n(args, out, what, run, variant, label):
    """One line: the CPU seconds of ``run`` on the ``variant`` model at each N of ``what``."""
    sizes = (FULL if args.full else QUICK)[what]
    times = [f"{n}: {cpu_seconds(lambda: run(build(variant, n)))[0]:.1f}" for n in sizes]
    print(f"{label}, CPU seconds at N = {', '.join(times)}", file=out, flush=True)


def _census(args, out):
    """One line: per N the CPU seconds of the census's symbolic pass and of its counting, and
    the factor the counting grows by per digit (fitted over those N)."""
    sizes, passes, counts = (FULL if args.full else QUICK)["census"], [], []
    for n in sizes:
        model = build("published", n)
        seconds, formulas = cpu_seconds(lambda: digit_formulas(model))
        passes.append(seconds)
        counts.append(cpu_seconds(lambda: census(model, formulas=formulas))[0])
    times = ", ".join(f"{n}: {p:.1f} + {c:.1f}" for n, p, c in zip(sizes, passes, counts))
    factor = per_digit_factor(sizes, counts)
    grows = "" if factor is None else f"; the counting grows {factor:.1f}-fold per digit"
    print(f"census (published model), CPU seconds (symbolic pass + counting) at N = {times}"
          f"{grows}", file=out, flush=True)


def _verify(args, model, out):
    ns = for_model(number_system("fraction"), model)
    seconds, outcome = cpu_seconds(lambda: check(model, ns, suite_groups("adderboard", 10_000)))
    print(f"exact verify (AdderBoard, {outcome.total:,} cases): {seconds:.1f} CPU s, "
          f"{outcome.total / max(seconds, 1e-9):,.0f} additions/s, {outcome.passed:,} right",
          file=out, flush=True)
    return 0 if outcome.passed == outcome.total else 1


def _board(args, out):
    """The board's proofs run again with its budget, a line per proof and the totals: each
    model the board lists as proved (real-number model, the generic prover), then each float
    program it lists as proved (in its dtype). 1 if a verdict is not "proved"."""
    real = [e for e in board.entries() if board.verdict(e.name) == "proved"]
    programs = [e for e in board.entries() if board.program_verdict(e.name) == "proved"]
    status = _proofs(f"prove --generic --max-sets {BOARD_MAX_SETS} --jobs {args.jobs}, each "
                     f"board model proved (CPU: all processes)", "board proofs", real,
                     _real_prover, args.jobs, out)
    print(file=out)
    return max(status, _proofs(f"prove --number DTYPE --max-sets {BOARD_MAX_SETS} --jobs "
                               f"{args.jobs}, each board program proved", "program proofs",
                               programs, _program_prover, args.jobs, out))


def _real_prover(e):
    return generic.Prover(build(e.name), max_sets=BOARD_MAX_SETS,
                          **board.PROOF_OPTIONS.get(e.name, {}))


def _program_prover(e):
    return floatsets.FloatProver(build(e.name), e.program, max_sets=BOARD_MAX_SETS,
                                 **board.PROGRAM_OPTIONS.get(e.name, {}))


def _proofs(title, what, entries, prover, jobs, out):
    """A line per board entry, ``prover(entry)`` run: its verdict, regions, CPU seconds (this
    process and its workers) and wall seconds; then the totals. 1 if a verdict is not
    "proved"."""
    print(title, file=out, flush=True)
    status, cpu, wall = 0, 0.0, 0.0
    for e in entries:
        before, start = os.times(), time.perf_counter()
        outcome = prover(e).run(jobs)
        after, seconds = os.times(), time.perf_counter() - start
        used = sum(b - a for a, b in zip(before[:4], after[:4]))
        cpu, wall = cpu + used, wall + seconds
        print(f"  {e.name:<16} {outcome.verdict:<10} {outcome.sets:>5} regions "
              f"{used:>7.1f} CPU s {seconds:>7.1f} s wall", file=out, flush=True)
        status = max(status, outcome.verdict != "proved")
    print(f"{what}: {cpu:.1f} CPU s, {wall:.1f} s wall on {os.cpu_count()} CPUs",
          file=out, flush=True)
    return status


def _traces(out):
    """Per shipped model the CPU seconds of its exact text trace at N = 10."""
    print(f"exact --trace {TRACE_PAIR}, CPU s (decoding, recorded pass, text), target "
          f"{TRACE_TARGET:.0f} s", file=out, flush=True)
    over = []
    for name in names():
        seconds, total = trace_seconds(name)
        a, b = (int(x) for x in TRACE_PAIR.split("+"))
        if seconds > TRACE_TARGET:
            over.append(name)
        print(f"  {name:<17}{seconds:>7.1f}  {'right' if total == a + b else 'WRONG'}",
              file=out, flush=True)
    print(f"over {TRACE_TARGET:.0f} s: {', '.join(over) or 'none'}", file=out)


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    parts = args.only or (["long"] if args.long else list(DEFAULT_PARTS))
    model = None
    if {"rates", "tokens", "verify"} & set(parts):
        model = model_of(parser, args)
        if model.prompt.digits != DIGITS:
            parser.error(f"bench times AdderBoard's {DIGITS}-digit cases; the model "
                         f"{args.model} adds {model.prompt.digits}-digit numbers")
    if "long" in parts:
        construction_only(parser, args, "--long")
    print(f"{PROG} bench: {args.model} model; CPU time (time.process_time)", file=out)
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{os.cpu_count()} CPUs, {platform.machine()}", file=out, flush=True)
    start, status = time.process_time(), 0
    for part in PARTS:
        if part not in parts:
            continue
        print(file=out)
        if part == "rates":
            status = max(status, _rates(args, model, out, err))
        elif part == "models":
            status = max(status, _models(args, out))
        elif part == "tokens":
            status = max(status, _tokens(args, model, out, err))
        elif part == "long":
            status = max(status, _long(args, out, err))
        elif part == "census":
            _census(args, out)
        elif part == "prove":
            _per_n(args, out, "prove", prove, "repaired", "prove --model repaired")
        elif part == "verify":
            status = max(status, _verify(args, model, out))
        elif part == "traces":
            _traces(out)
        else:
            status = max(status, _board(args, out))
    print(f"\nbench: {time.process_time() - start:.0f} CPU s", file=out)
    return status
