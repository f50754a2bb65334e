"""``tinyadder explain EXPR``: the command line of ``analysis.explain``."""

import textwrap

from .. import addition, task
from ..analysis.explain import WIDTH, narrate, narrate_logits
from ..analysis.pictures.views import missing
from ..cache import run_with_cache
from .main_command import _hint
from .options import PROG, Parser, add_digits_option, add_model_options, model_of
from .tracing import VIEW_COPIES, size_problem


def build_parser():
    parser = Parser(
        prog=f"{PROG} explain",
        description="Narrate how the model writes each digit of a sum: at each position, what "
                    "remains to be written, the place being decided, the nearest ruler mark "
                    "and the margin, all read from the trace. Exit status 1 (and a warning) "
                    "when the model's sum is wrong.")
    parser.add_argument("expression", metavar="EXPR",
                        help="one addition such as 7650676663+0149460439 (operands of at most "
                             "N digits, see --digits)")
    parser.add_argument("--verbose", action="store_true",
                        help="also how the number system rounds, and the offset's two parts "
                             "(the rounding bias b and the leakage)")
    add_model_options(parser)
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args, tasks=True)
    try:
        a, b = ((task.parse_input(model, args.expression), None) if task.has_task(model) else
                addition.parse_expression(args.expression, addition.digits_of(model)))
    except addition.InputError as error:
        print(f"{PROG}: error: {error}", file=err)
        return 2
    refusal = size_problem("explain", args.model, model, [args.number], VIEW_COPIES)
    if refusal:
        print(f"{PROG}: error: {refusal}", file=err)
        return 2
    prompt = task.encode(model, a) if b is None else addition.encode(model, a, b)
    _, cache = run_with_cache(model, prompt, ns=args.number)
    family = not missing(model)["ruler"]
    out.write(narrate(cache, a, b, args.verbose) if family else
              narrate_logits(cache, a, b, args.verbose))
    if b is None:
        said, right = task.answer(model, cache.tokens), task.expected(model, a)
        if said == right:
            return 0
        print(f"{PROG}: warning: the {args.model} model's answer {said} to {a} is wrong: the "
              f"task says {right}", file=err)
        return 1
    answer = addition.answer(model, cache.tokens)
    if answer != a + b:
        warning = (f"{PROG}: warning: the {args.model} model's sum {answer} is wrong: "
                   f"{a} + {b} = {a + b}{_hint(args, model, args.number, a, b)}")
        print("\n".join(textwrap.wrap(warning, WIDTH, subsequent_indent="  ")), file=err)
        return 1
    return 0
