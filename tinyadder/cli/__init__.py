"""The command line: ``python -m tinyadder 7650676663+0149460439`` and its subcommands.

Exit status: 0 all answers right; 1 the model gave a wrong sum (a warning names it);
2 bad input or usage (one line on stderr, the other expressions are still answered).
"""

import importlib
import re
import sys

from .. import addition
from ..construction import build
from ..numbers import for_model, number_system
from . import tracing
from .options import PROG, Parser, add_digits_option, add_model_options

# name -> module with main(argv); each subcommand owns its own parser.
SUBCOMMANDS = {
    "bench": "tinyadder.cli.bench",
    "census": "tinyadder.cli.census",
    "check-certificate": "tinyadder.cli.check_certificate",
    "params": "tinyadder.cli.params",
    "precision": "tinyadder.cli.precision",
    "program": "tinyadder.cli.program",
    "prove": "tinyadder.cli.prove",
    "verify": "tinyadder.cli.verify",
}


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
