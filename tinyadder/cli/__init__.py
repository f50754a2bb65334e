"""The command line: ``python -m tinyadder 7650676663+0149460439`` and its subcommands.

Exit status (docs/cli.md): 0 every answer right; 1 the model gave a wrong sum (a warning names
it); 2 bad input or usage, or standard output could not be written (one line on standard
error; the other expressions are still answered); 130 interrupted (Ctrl-C). A reader who
closes the pipe early (``... | head``) ends the run after the expression at hand, whose
warning and status still count.
"""

import importlib
import inspect
import io
import os
import re
import sys

from .. import __version__, addition
from ..construction import build
from ..numbers import for_model, number_system
from . import tracing
from .options import (PROG, Output, OutputError, Parser, add_digits_option, add_model_options,
                      input_lines)

# name -> module with main(argv); each subcommand owns its own parser.
SUBCOMMANDS = {
    "bench": "tinyadder.cli.bench",
    "explain": "tinyadder.cli.explain",
    "explore": "tinyadder.cli.explore",
    "figure": "tinyadder.cli.figure",
    "params": "tinyadder.cli.params",
    "precision": "tinyadder.cli.precision",
    "program": "tinyadder.cli.program",
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
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_model_options(parser)
    add_digits_option(parser)
    tracing.add_options(parser)
    return parser


def _lines(expressions, stdin):
    """(label, text, problem) for each expression; '-' expands to standard input's non-blank
    lines (label 'line N'). Arguments the shell split apart ('1 + 2' unquoted) come back as
    one item with a problem that says to quote them."""
    for group in _shell_groups(expressions):
        if group == ["-"]:
            for number, line, problem in input_lines(stdin):
                if problem or line.strip():
                    yield f"line {number}", line, problem
        elif len(group) == 1:
            yield None, group[0], None
        else:
            text = " ".join(group)
            quote = f': "{text}"' if len(text) <= addition.EXCERPT else ""
            yield None, text, (f"the shell split {addition.excerpt(text)} into several "
                               f"arguments; quote it{quote}")


def _shell_groups(expressions):
    """Consecutive arguments joined where one ends or the next starts with '+' and together
    they make one addition: ['1', '+', '2'] -> [['1', '+', '2']]."""
    groups = []
    for expr in expressions:
        last = groups[-1] if groups else None
        if (last and expr != "-" and last != ["-"]
                and (last[-1].rstrip().endswith("+") or expr.lstrip().startswith("+"))):
            last.append(expr)
        else:
            groups.append([expr])
    out = []
    for group in groups:
        try:
            addition.parse_expression(" ".join(group), 10 ** 6)
        except addition.InputError:
            out += [[expr] for expr in group]  # not one addition either: report each part
            continue
        out.append(group)
    return out


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
    split = [problem for _, _, problem in _lines([e for e in args.expressions if e != "-"], None)
             if problem]
    # '--json 1 + 2': the hint to quote says more than "takes exactly one expression"
    problem = split[0] if split and tracing.requested(args) else tracing.problem(args, model)
    if problem:
        print(f"{PROG}: error: {problem}", file=err)
        return 2
    status = 0
    for label, text, problem in _lines(args.expressions, stdin):
        where = f"{label}: " if label else ""
        if problem:
            print(f"{PROG}: error: {where}{problem}", file=err)
            status = 2
            continue
        try:
            a, b = addition.parse_expression(text, args.digits)
        except addition.InputError as error:
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
        if getattr(out, "left", False):
            break  # the reader closed the pipe: nobody reads the next answers
    return status


def _command(argv, out, err, stdin):
    """The exit status of one command line (a subcommand or the main command)."""
    if argv and argv[0] in SUBCOMMANDS:
        command = importlib.import_module(SUBCOMMANDS[argv[0]]).main
        # each subcommand's main(argv, out=None, err=None) gets the streams it takes (and
        # stdin if it asks), so that the checks on them here cover it too
        wanted = inspect.signature(command).parameters
        streams = {"out": out, "err": err, "stdin": stdin}
        return command(argv[1:], **{k: v for k, v in streams.items() if k in wanted})
    # '-5+3' is an expression with a sign, not an option: a leading space makes argparse
    # take it as a positional, and parse_expression then reports the sign.
    argv = [" " + a if re.match(r"-[^-A-Za-z]", a) else a for a in argv]
    args = build_parser().parse_intermixed_args(argv)
    if not args.expressions:
        print(f"{PROG}: error: no expression given; pass one such as 12+34, or '-' for stdin",
              file=err)
        return 2
    return run_expressions(args, out, err, stdin)


def main(argv=None, out=None, err=None, stdin=None):
    """Run one command line; return its exit status (see the module docstring)."""
    stdout, stderr = sys.stdout, sys.stderr
    out = Output(out or stdout)
    err = err or stderr
    stdin = stdin or sys.stdin or io.StringIO()  # None when the shell closed it (<&-)
    argv = list(sys.argv[1:] if argv is None else argv)
    # argparse writes --help and --version to sys.stdout (ignoring OSError) and its errors to
    # sys.stderr: point them at this command's streams
    sys.stdout, sys.stderr = out, err
    try:
        try:
            status = _command(argv, out, err, stdin)
        except SystemExit as exit_:  # argparse: --help, --version, a usage error
            status = 0 if exit_.code is None else exit_.code
        out.flush()
        return status
    except OutputError as error:
        print(f"{PROG}: error: cannot write standard output: {error}", file=err)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=err)
        return 130
    except MemoryError:
        print(f"{PROG}: error: out of memory; try a smaller --digits or fewer expressions",
              file=err)
        return 2
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def entry():
    """Console-script entry point."""
    status = main()
    try:
        sys.stdout.flush()
    except OSError as error:  # argparse's --help swallows a failed write: report it here
        if not isinstance(error, BrokenPipeError) and status != 2:
            print(f"{PROG}: error: cannot write standard output: {error.strerror}",
                  file=sys.stderr)
            status = 2
    # Whatever is still buffered for a closed pipe or a full device must not fail again
    # (with a traceback-like "Exception ignored") when Python flushes at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(status)
