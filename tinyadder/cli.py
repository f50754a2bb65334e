"""The command line: ``python -m tinyadder 7650676663+0149460439`` and its subcommands.

Exit status: 0 all answers right; 1 the model gave a wrong sum (a warning names it);
2 bad input or usage (one line on stderr, the other expressions are still answered).
"""

import argparse
import importlib
import re
import sys

from . import addition, tracing
from .construction import DIGITS, MAX_DIGITS, VARIANTS, build, check_digits
from .numbers import (DEFAULT_DECIMAL_DIGITS, DEFAULT_EXP_DIGITS, NUMBER_CHOICES, for_model,
                      number_system)

PROG = "tinyadder"

# name -> module with main(argv); each subcommand owns its own parser.
SUBCOMMANDS = {"bench": "tinyadder.bench", "params": "tinyadder.ledger",
               "precision": "tinyadder.precision",
               "program": "tinyadder.program", "verify": "tinyadder.verify"}


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line, without the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def number_arg(text):
    try:
        return number_system(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def model_arg(text):
    if text not in VARIANTS:
        raise argparse.ArgumentTypeError(
            f"unknown model {text!r}; use {' or '.join(VARIANTS)}")
    return text


def digits_arg(text):
    try:
        return check_digits(int(text))
    except ValueError as err:
        if not text.strip().isdigit():
            err = f"N must be a whole number of digits, 1 to {MAX_DIGITS}; got {text!r}"
        raise argparse.ArgumentTypeError(str(err)) from None


def digits_list_arg(text):
    """'10,20,50' -> [10, 20, 50], each checked as --digits is."""
    return [digits_arg(part) for part in text.split(",")]


def add_digits_option(parser):
    """--digits N: the operand length the construction is built for."""
    parser.add_argument(
        "--digits", type=digits_arg, default=DIGITS, metavar="N",
        help=f"operand length: build the construction for N-digit operands, 1 <= N <= "
             f"{MAX_DIGITS} (default {DIGITS}, the published model). The sequence is 3N + 4 "
             f"tokens; the constants that depend on N are derived in docs/digits.md; the "
             f"parameter count stays 36")


def add_model_options(parser):
    """--number and --model, shared by every command that runs the model."""
    parser.add_argument(
        "--number", type=number_arg, default="fraction", metavar="SYSTEM",
        help=f"number system: {NUMBER_CHOICES}. fraction (default) is exact except that "
             f"exp of the head-3 scores (exp(-40), exp(-1000) and exp(40) at N = 10) is "
             f"rounded once, to N + 40 digits ({DEFAULT_EXP_DIGITS} at N = 10). decimal "
             f"without P picks P = N + 30 significant digits (P = {DEFAULT_DECIMAL_DIGITS} "
             f"at N = 10): place values carry the rounding of scores of size about 10N into "
             f"sums of size 10^(N+4), and each digit is decided by a fifth of a unit, so P "
             f"must exceed about N + 4 digits; N + 30 leaves more than 20 to spare (see "
             f"'{PROG} precision'). float is IEEE double, like the "
             f"published PyTorch model; float32 is IEEE single (emulated), which fails at "
             f"N = 10")
    parser.add_argument(
        "--model", type=model_arg, default="published",
        help="published (default): the construction as published, including its readout "
             "flaw near carry boundaries; repaired: the same 36 parameters with the readout "
             "reading only the layer-1 FFN's own slots")


def build_parser():
    parser = Parser(
        prog=PROG,
        description="Add two numbers with TinyAdder-36, the 36-parameter hand-wired "
                    "transformer, run by an exact pure-Python interpreter.",
        epilog=f"subcommands: {', '.join(sorted(SUBCOMMANDS))} (run '{PROG} SUBCOMMAND --help')")
    parser.add_argument(
        "expressions", nargs="*", metavar="EXPR",
        help="an addition such as 7650676663+0149460439 or '12 + 34' (operands of at most "
             "N digits, see --digits); '-' reads one expression per line from standard input")
    add_model_options(parser)
    add_digits_option(parser)
    tracing.add_options(parser)
    return parser


def _lines(expressions, stdin):
    """(label, text) for each expression; '-' expands to standard input's non-blank lines."""
    for expr in expressions:
        if expr == "-":
            for number, line in enumerate(stdin, 1):
                if line.strip():
                    yield f"line {number}", line
        else:
            yield None, expr


def _hint(args, model, ns, a, b):
    """Why a sum may be wrong: rounding if the model's own precision gets it right (decimal
    at the digits the model needs: fast, and as good as exact here), else the published flaw."""
    reference = for_model(number_system("decimal"), model)
    if ns.name != "fraction" and addition.add(model, reference, a, b) == a + b:
        return (f" (a rounding error of {ns.spec}: {reference.spec} is right; "
                f"see '{PROG} precision')")
    return " (try --model repaired)" if args.model == "published" else ""


def run_expressions(args, out, err, stdin):
    """Answer each expression; return the exit status."""
    model = build(args.model, args.digits)
    ns = for_model(args.number, model)
    problem = tracing.problem(args, model)
    if problem:
        print(f"{PROG}: error: {problem}", file=err)
        return 2
    status = 0
    for label, text in _lines(args.expressions, stdin):
        try:
            a, b = addition.parse_expression(text, args.digits)
        except addition.InputError as error:
            where = f"{label}: " if label else ""
            print(f"{PROG}: error: {where}{error}", file=err)
            status = 2
            continue
        if tracing.requested(args):
            sequence = tracing.run(args, model, a, b, out, stdin)
        else:
            sequence = addition.run(model, ns, a, b)
            print(sequence, file=out, flush=True)
        answer = int(sequence.split("=")[1])
        if answer != a + b:
            fix = _hint(args, model, ns, a, b)
            print(f"{PROG}: warning: the {args.model} model's sum {answer} is wrong: "
                  f"{a} + {b} = {a + b}{fix}", file=err)
            status = max(status, 1)
    return status


def main(argv=None, out=None, err=None, stdin=None):
    out = out or sys.stdout
    err = err or sys.stderr
    stdin = stdin or sys.stdin
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
        # '-5+3' is an expression with a sign, not an option: a leading space makes argparse
        # take it as a positional, and parse_expression then reports the sign.
        argv = [" " + a if re.match(r"-[^-A-Za-z]", a) else a for a in argv]
        args = build_parser().parse_intermixed_args(argv)
        if not args.expressions:
            print(f"{PROG}: error: no expression given; pass one such as 12+34, "
                  f"or '-' to read them from standard input", file=err)
            return 2
        return run_expressions(args, out, err, stdin)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=err)
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as exit_:
        return exit_.code


def entry():
    """Console-script entry point."""
    sys.exit(main())
