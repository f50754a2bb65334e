"""``tinyadder explore``: the command line of ``analysis.pictures.explore`` (one HTML page)."""

from contextlib import contextmanager
import os

from .. import addition, task
from ..analysis.pictures.explore import DEFAULT_NAME, MAX_DIGITS, page, walkthrough
from ..analysis.pictures.views import Overflowed, views_of
from ..analysis.pictures.compare import page as compare_page
from .options import (PROG, Parser, add_digits_option, add_model_options, model_arg,
                      model_of)
from .tracing import VIEW_COPIES, size_problem


def build_parser():
    parser = Parser(
        prog=f"{PROG} explore",
        description="Write one self-contained HTML page that shows the model adding EXPR: "
                    "tokens, attention, the residual stream stage by stage, the logits and "
                    "the parameters for any model; for the TinyAdder-36 family also place "
                    "values, the running sum, the ruler and why the published model fails. "
                    "Open it in any browser; it needs no network.")
    parser.add_argument("expression", metavar="EXPR",
                        help="an addition such as 7650676663+0149460439")
    parser.add_argument("-o", "--output", default=DEFAULT_NAME, metavar="PAGE.html",
                        help=f"where to write the page (default {DEFAULT_NAME} in the "
                             f"current directory)")
    parser.add_argument("--compare", nargs=2, type=model_arg, metavar=("A", "B"),
                        help="two models (names or files) on the same sum, in place of "
                             "--model: A's explorer page with a compare mode that shows B "
                             "beside it at the selected position and stage (each head's "
                             "weights from that query, the residual lanes by slot name, the "
                             "logits), positions matched by what they hold, and the slots "
                             "they name alike compared over all positions")
    parser.add_argument("--static", action="store_true",
                        help="with --compare: a page without script instead, every stage "
                             "of both models at one position: A's figure over B's, their "
                             "lanes side by side (two columns)")
    parser.add_argument("--pos", type=int, metavar="P",
                        help="with --static: draw A at position P and B at the position that "
                             "does the same (default: A's first position that predicts a "
                             "digit, or its first wrong one)")
    add_model_options(parser)
    add_digits_option(parser)
    return parser


@contextmanager
def open_output(path, parser, binary=False):
    """The output file (text, or ``binary``), opened before the (long) trace so that a bad
    path fails at once. If the file cannot be written whole (a full disk or device, an error,
    Ctrl-C), a file this call created is removed again (never anything else: '-o /dev/full'
    once deleted /dev/full), and a failed write is one line, exit status 2."""
    created = not os.path.lexists(path)
    try:
        f = open(path, "wb") if binary else open(path, "w", encoding="utf-8")
    except OSError as error:
        parser.error(f"cannot write {path}: {error.strerror}; give a writable path with -o")
    try:
        with f:
            yield f
    except BaseException as error:
        if created and os.path.isfile(path) and not os.path.islink(path):
            os.remove(path)
        if isinstance(error, OSError):
            parser.error(f"cannot write {path}: {error.strerror or error}")
        raise


def write_data(path, data, out, parser, binary=False):
    """``data`` to standard output (``out``) when ``path`` is None, else to the file ``path``
    (``open_output``: a failed write is one line, exit status 2); whether a file was
    written."""
    if path is None:
        out.write(data)
        return False
    with open_output(path, parser, binary) as f:
        f.write(data)
    return True


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.digits is not None and args.digits > MAX_DIGITS:
        parser.error(f"the page holds every attention weight and grows with the square of the "
                     f"sequence; explore takes --digits up to {MAX_DIGITS} (use 'tinyadder "
                     f"figure' or --trace for longer operands)")
    if args.compare:
        return compare(parser, args, out, err)
    if args.static:
        parser.error("--static is a form of --compare A B; give both")
    if args.pos is not None:
        parser.error("--pos picks the position of --compare A B --static")
    model = model_of(parser, args, tasks=True)
    a, b = question_of(parser, args, model)
    refusal = size_problem("explore", args.model, model, [args.number], VIEW_COPIES)
    if refusal:
        parser.error(refusal)
    with open_output(args.output, parser) as f:
        try:
            views = views_of(model, a, b, args.number)
        except Overflowed as error:
            parser.error(str(error))
        text = page(views, walkthrough())  # the page embeds the sections it cites
        f.write(text)
    print(f"wrote {args.output} ({len(text.encode('utf-8')) // 1024} kB): open it in a browser",
          file=out)
    return wrong_sum(args.model, views, a, b, err)


def compare(parser, args, out, err):
    """``--compare A B``: both models' views of one sum on one page; exit status 1 (and a
    warning each) when either sum is wrong."""
    if args.pos is not None and not args.static:
        parser.error("--pos picks the static page's position (the live page has its own "
                     "position buttons); add --static")
    built = []
    for choice in args.compare:
        args.model = choice
        model = model_of(parser, args, tasks=True)
        if task.has_task(model):
            parser.error(f"--compare draws two adders on one sum; {choice} computes a finite "
                         f"task ('explore --model {choice} INPUT' draws it alone)")
        built.append((choice, model))
    (left, lm), (right, rm) = built
    digits = {addition.digits_of(m) for _, m in built}
    if len(digits) > 1:
        parser.error(f"{left} adds {addition.digits_of(lm)}-digit numbers and {right} "
                     f"{addition.digits_of(rm)}-digit ones; compare two models of one N "
                     f"(--digits N picks it for a construction)")
    try:
        a, b = addition.parse_expression(args.expression, digits.pop())
    except addition.InputError as error:
        parser.error(str(error))
    for choice, model in built:
        refusal = size_problem("explore", choice, model, [args.number], VIEW_COPIES)
        if refusal:
            parser.error(refusal)
    with open_output(args.output, parser) as f:
        try:
            views = [views_of(model, a, b, args.number) for _, model in built]
        except Overflowed as error:
            parser.error(str(error))
        if args.pos is not None and not 0 <= args.pos < len(views[0]["tokens"]):
            parser.error(f"--pos {args.pos}: {views[0]['model']}'s positions run from 0 to "
                         f"{len(views[0]['tokens']) - 1}")
        if args.static:
            text = compare_page(*views, pos=args.pos)
        else:
            text = page(views[0], walkthrough(), views[1])
        f.write(text)
    print(f"wrote {args.output} ({len(text.encode('utf-8')) // 1024} kB): open it in a browser",
          file=out)
    return max(wrong_sum(choice, v, a, b, err) for (choice, _), v in zip(built, views))


def question_of(parser, args, model):
    """(a, b) parsed from ``args.expression``, or a finite task's (input, None); a bad one is
    the parser's one-line error."""
    try:
        if task.has_task(model):
            return task.parse_input(model, args.expression), None
        return addition.parse_expression(args.expression, addition.digits_of(model))
    except addition.InputError as error:
        parser.error(str(error))


def wrong_sum(model, views, a, b, err):
    """The exit status for a drawn run: 1, and a warning on ``err``, when the model's sum is
    wrong (as every command that runs the model), else 0."""
    if views["correct"]:
        return 0
    said = views["answer"]
    if views.get("task"):
        print(f"{PROG}: warning: the {model} model's answer {ascii(said)} to {a} is wrong: "
              f"the task says {views['sum']}", file=err)
        return 1
    said = said.lstrip("0") or "0" if said.isdigit() else ascii(said)
    print(f"{PROG}: warning: the {model} model's sum {said} is wrong: {a} + {b} = {a + b}",
          file=err)
    return 1
