"""``tinyadder bench``: the command line of ``analysis.bench``."""

import argparse
import os
import platform

from ..analysis.bench import (CASES, SYSTEMS, TORCH_CASES, long_numbers, measure,
                              torch_model, torch_rate)
from ..construction import DIGITS
from .options import (PROG, Parser, add_model_options, construction_only, digits_list_arg,
                      excerpt, int_arg, model_of)


def build_parser():
    parser = Parser(prog=f"{PROG} bench",
                    description="Additions per second on AdderBoard's verify cases, per "
                                "number system, with the KV cache and with the whole prefix "
                                "rerun at every step; median of several repeats, wall clock "
                                "and CPU time, and the peak memory. Without --number: "
                                "fraction, decimal and float.")
    add_model_options(parser, number=None)
    parser.add_argument("--repeats", type=int_arg(1, 100), default=3,
                        metavar="R",
                        help="repeats per figure; the median is shown (default 3)")
    parser.add_argument("--scale", type=_fraction_arg, default=1.0, metavar="F",
                        help="run F times the default number of cases, e.g. 0.1 for a quick "
                             "look (default 1; cases per system: " +
                             ", ".join(f"{s} {k}" for s, k in CASES.items()) + ")")
    parser.add_argument("--long", type=digits_list_arg, default=None, metavar="N,N,...",
                        help="time one random N-digit addition per N instead (e.g. "
                             "100,1000,2000), in decimal unless --number is given")
    return parser


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


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.long:
        construction_only(parser, args, "--long")
        status = long_numbers(args, out)
        if status:
            print(f"{PROG}: warning: the {args.model} model's sum is wrong at an N marked "
                  f"WRONG above", file=err)
        return status
    systems = [args.number.spec] if args.number else list(SYSTEMS)
    model = model_of(parser, args)
    if model.prompt.digits != DIGITS:
        parser.error(f"bench times AdderBoard's {DIGITS}-digit cases; the model {args.model} "
                     f"adds {model.prompt.digits}-digit numbers")
    print(f"tinyadder bench: {args.model} model, AdderBoard verify cases, median of "
          f"{args.repeats}", file=out)
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{os.cpu_count()} CPUs, {platform.machine()}", file=out)
    print("additions/s: wall clock and CPU time; cache off: whole prefix rerun every step;",
          file=out)
    print("memory: tracemalloc peak over 20 cases", file=out)
    generate = torch_model(model)
    if generate is None:
        torch = None
        print("PyTorch comparison skipped: torch is not importable (it is never a "
              "dependency)", file=out)
    else:
        k = max(1, round(TORCH_CASES * args.scale))

        def torch():
            return torch_rate(model, generate, k, 1)[1]
        print("x torch: CPU additions/s over those of a PyTorch float64 model of the same\n"
              f"weights (textbook pass, whole prefix every step, 1 thread; {torch():,.0f} CPU "
              f"add/s now),\nmeasured on {k} cases before each repeat; median of the ratios",
              file=out)
    print(f"{'system':<10} {'cache':<5} {'cases':>6} {'wall add/s':>11} {'CPU add/s':>11}"
          f"{'peak memory':>13}{'  x torch' if torch else ''}", file=out, flush=True)
    status = 0
    for spec in systems:
        name = spec.split(":")[0]
        k = max(1, round(CASES.get(name, CASES["decimal"]) * args.scale))
        for cache, cases, *_, wrong, _ in measure(model, spec, k, args.repeats, out, torch):
            if wrong:
                print(f"{PROG}: warning: the {args.model} model's sum is wrong on {wrong} of "
                      f"{cases} cases in {spec}, cache {'on' if cache else 'off'} (marked "
                      f"WRONG above)", file=err)
                status = 1
    return status
