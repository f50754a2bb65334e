"""The main command, ``python -m tinyadder 7650676663+0149460439``: one answer per expression.

Its policy: arguments the shell split apart are regrouped (``1 + 2`` unquoted is one addition,
with a hint to quote it), and a wrong sum gets a warning that says why it may be wrong.
"""

import difflib
import re

from .. import __version__, addition, task
from ..numbers import Undecided, for_model
from . import tracing
from .options import (PROG, SUBCOMMANDS, Parser, add_digits_option, add_model_options,
                      input_lines, model_of, split_hint)

KNOWN_PAIRS = 4096  # exact verdicts kept per batch: memory stays bounded however long stdin is


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
            yield None, " ".join(group), split_hint(group)


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
        if len(group) > 1 and not split_hint(group):
            out += [[expr] for expr in group]  # not one addition either: report each part
        else:
            out.append(group)
    return out


def _hint(args, model, ns, a, b, known=None):
    """Why a sum may be wrong: rounding if the exact model gets it right (the fraction system,
    certified: at N = 2000 a second, where decimal at the model's precision takes ten), else
    the published flaw. ``known``: a batch's exact verdicts by pair (filled in here), so a
    repeated wrong line is run exactly once."""
    known = {} if known is None else known
    if ns.name != "fraction" and (a, b) not in known:
        if len(known) >= KNOWN_PAIRS:
            known.clear()
        # the system by name: compiled once per process, where a new system per line
        # compiled the model again (~40% of the exact run)
        try:
            known[a, b] = addition.add(model, "fraction", a, b) == a + b
        except Undecided as error:  # a tie in the real-number model: neither side certified
            known[a, b] = str(error)
    if isinstance(known.get((a, b)), str):
        return f" (the real-number model certifies no answer here either: {known[a, b]})"
    if ns.name != "fraction" and known[a, b]:
        reference = for_model(addition.system_of("fraction"), model)
        return (f" (a rounding error of {ns.spec}: {reference.spec} is right; "
                f"see '{PROG} precision')")
    return " (try --model repaired)" if str(args.model) == "published" else ""


def run_inputs(args, model, out, err, stdin):
    """Answer each input of a model with a finite task (``task``: 'A' -> 'A -> 03'), with a
    warning where the model writes other than its task's answer; return the exit status."""
    ns = for_model(args.number, model)
    problem = tracing.problem(args, model)
    if problem:
        print(f"{PROG}: error: {problem}", file=err)
        return 2
    status = 0
    for label, text, problem in _lines(args.expressions, stdin):
        where = f"{label}: " if label else ""
        try:
            x = task.parse_input(model, text)
        except addition.InputError as error:
            print(f"{PROG}: error: {where}{_subcommand_hint(text) or error}", file=err)
            status = 2
            continue
        try:
            if tracing.requested(args):
                written = tracing.run_task(args, model, x, out, stdin)
            else:
                written = task.write(model, ns, x)
                print(task.line(x, written), file=out, flush=True)
        except Undecided as error:
            print(f"{PROG}: warning: {where}no answer certified for {x}: {error}", file=err)
            status = max(status, 1)
            continue
        if written != task.expected(model, x):
            print(f"{PROG}: warning: the {args.model} model writes {written} for {x}; its "
                  f"task says {task.expected(model, x)}", file=err)
            status = max(status, 1)
        if getattr(out, "left", False):
            break
    return status


def run_expressions(args, model, out, err, stdin):
    """Answer each expression with ``model``; return the exit status."""
    if task.has_task(model):
        return run_inputs(args, model, out, err, stdin)
    digits = addition.digits_of(model)
    ns = for_model(args.number, model)
    split = [problem for _, _, problem in _lines([e for e in args.expressions if e != "-"], None)
             if problem]
    # '--json 1 + 2': the hint to quote says more than "takes exactly one expression"
    problem = split[0] if split and tracing.requested(args) else tracing.problem(args, model)
    if problem:
        print(f"{PROG}: error: {problem}", file=err)
        return 2
    status = 0
    known = {}
    for label, text, problem in _lines(args.expressions, stdin):
        where = f"{label}: " if label else ""
        if problem:
            print(f"{PROG}: error: {where}{problem}", file=err)
            status = 2
            continue
        try:
            a, b = addition.parse_expression(text, digits)
        except addition.InputError as error:
            print(f"{PROG}: error: {where}{_subcommand_hint(text) or error}", file=err)
            status = 2
            continue
        try:
            if tracing.requested(args):
                sequence = tracing.run(args, model, a, b, out, stdin)
            else:
                sequence = addition.run(model, ns, a, b)
                print(sequence, file=out, flush=True)
        except Undecided as error:  # a tie in the real-number model: no token to certify
            print(f"{PROG}: warning: {where}no answer certified for {a}+{b}: {error}", file=err)
            status = max(status, 1)
            continue
        written = sequence.split("=", 1)[1]
        answer = int(written) if written.isdigit() else written  # the tokens, if not a number
        if answer != a + b:
            fix = _hint(args, model, ns, a, b, known)
            print(f"{PROG}: warning: the {args.model} model's sum {answer} is wrong: "
                  f"{a} + {b} = {a + b}{fix}", file=err)
            status = max(status, 1)
        if getattr(out, "left", False):
            break  # the reader closed the pipe: nobody reads the next answers
    return status


def _subcommand_hint(text):
    """For an expression that is a word, what is wrong: a subcommand given after options
    (``--number float verify``), or a mistyped one (``verfy``, close to one); None for
    anything else."""
    word = text.strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z-]{0,40}", word):
        return None
    if word in SUBCOMMANDS:
        return (f"{word!r} is a subcommand: give it first, before any option "
                f"('{PROG} {word} --help' lists its options)")
    close = difflib.get_close_matches(word, SUBCOMMANDS, 1)
    if not close:
        return None  # a word like no subcommand: "not an addition" says enough
    return (f"unknown subcommand {word!r} (did you mean {close[0]}?); the subcommands are "
            f"{', '.join(sorted(SUBCOMMANDS))}, and an expression is an addition such as "
            f"12+34")


def _help(argv, out, err):
    """``help`` and ``help SUBCOMMAND``: the main command's or the subcommand's --help."""
    if len(argv) == 1:
        build_parser().print_help(out)
        return 0
    if len(argv) == 2 and argv[1] in SUBCOMMANDS:
        from . import main as cli_main
        return cli_main([argv[1], "--help"], out, out)
    print(f"{PROG}: error: help takes one subcommand: {', '.join(sorted(SUBCOMMANDS))}",
          file=err)
    return 2


def main(argv, out, err, stdin):
    """The main command's exit status for its arguments ``argv``."""
    if argv[:1] == ["help"]:
        return _help(argv, out, err)
    # '-5+3' is an expression with a sign, not an option: a leading space makes argparse
    # take it as a positional, and parse_expression then reports the sign.
    argv = [" " + a if re.match(r"-[^-A-Za-z]", a) else a for a in argv]
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)
    if not args.expressions:
        print(f"{PROG}: error: no expression given; pass one such as 12+34, or '-' for stdin",
              file=err)
        return 2
    return run_expressions(args, model_of(parser, args, tasks=True), out, err, stdin)
