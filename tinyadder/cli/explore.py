"""``tinyadder explore``: the command line of ``analysis.pictures.explore`` (one HTML page)."""

from contextlib import contextmanager
import os

from .. import addition
from ..analysis.pictures.explore import DEFAULT_NAME, MAX_DIGITS, docs_link, page
from ..analysis.pictures.views import views_of
from .options import (PROG, Parser, add_digits_option, add_model_options, model_of,
                      tinyadder_problem)


def build_parser():
    parser = Parser(
        prog=f"{PROG} explore",
        description="Write one self-contained HTML page that shows the model adding EXPR: "
                    "tokens, attention, place values, the residual stream stage by stage, "
                    "the running sum, the ruler, why the published model fails, and the 36 "
                    "parameters. Open it in any browser; it needs no network.")
    parser.add_argument("expression", metavar="EXPR",
                        help="an addition such as 7650676663+0149460439")
    parser.add_argument("-o", "--output", default=DEFAULT_NAME, metavar="PAGE.html",
                        help=f"where to write the page (default {DEFAULT_NAME} in the "
                             f"current directory)")
    add_model_options(parser)
    add_digits_option(parser)
    return parser


@contextmanager
def open_output(path, parser, binary=False):
    """The output file (text, or ``binary``), opened before the (long) trace so that a bad
    path fails at once, and removed again if the page could not be written whole (an error,
    Ctrl-C)."""
    try:
        f = open(path, "wb") if binary else open(path, "w", encoding="utf-8")
    except OSError as error:
        parser.error(f"cannot write {path}: {error.strerror}; give a writable path with -o")
    try:
        with f:
            yield f
    except BaseException:
        if os.path.isfile(path):  # never a device: '-o /dev/full' once deleted /dev/full
            os.remove(path)
        raise


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.digits is not None and args.digits > MAX_DIGITS:
        parser.error(f"the page holds every attention weight and grows with the square of the "
                     f"sequence; explore takes --digits up to {MAX_DIGITS} (use 'tinyadder "
                     f"figure' or --trace for longer operands)")
    model = model_of(parser, args)
    if tinyadder_problem(model, "explore"):
        parser.error(tinyadder_problem(model, "explore"))
    try:
        a, b = addition.parse_expression(args.expression, addition.digits_of(model))
    except addition.InputError as error:
        parser.error(str(error))
    try:
        with open_output(args.output, parser) as f:
            views = views_of(model, a, b, args.number)
            text = page(views, docs_link(args.output))
            f.write(text)
    except OSError as error:  # a full disk or device: one line, as everywhere
        parser.error(f"cannot write {args.output}: {error.strerror or error}")
    print(f"wrote {args.output} ({len(text.encode('utf-8')) // 1024} kB): open it in a browser",
          file=out)
    if not views["correct"]:
        print(f"{PROG}: warning: the {args.model} model's sum {int(views['answer'])} is wrong: "
              f"{a} + {b} = {a + b}", file=err)
        return 1
    return 0
