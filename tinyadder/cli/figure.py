"""``tinyadder figure``: one view of the explorer as a static SVG file (``analysis.pictures.figures``)."""

from .. import addition
from ..analysis.pictures.explore import defaults
from ..analysis.pictures.figures import FIGURES
from ..analysis.pictures.views import Overflowed, view_stages, views_of
from ..weights import live_heads
from .explore import open_output, question_of, wrong_sum
from .options import PROG, Parser, add_digits_option, add_model_options, model_of
from .tracing import VIEW_COPIES, size_problem


def build_parser():
    parser = Parser(
        prog=f"{PROG} figure",
        description="Draw one view of the explorer (tinyadder explore) as a static SVG file: "
                    "attention (a head's weights, log scale), place (head 3's weights from one "
                    "query), count (place values), slots (the residual stream after a stage), "
                    "sum (what remains to be written), ruler (one decision), flaw (tilt "
                    "against margin), change (the model with one thing changed).")
    parser.add_argument("name", choices=sorted(FIGURES), metavar="NAME",
                        help=f"one of {', '.join(FIGURES)}")
    parser.add_argument("expression", metavar="EXPR", help="an addition such as 12+34")
    parser.add_argument("-o", "--output", metavar="FILE.svg",
                        help="where to write the SVG (default NAME.svg)")
    parser.add_argument("--pos", type=int, metavar="P",
                        help="the selected position (default: the first that predicts a "
                             "digit, or the first wrong one)")
    parser.add_argument("--stage", metavar="S", help="slots: the stage (default L0.mlp)")
    parser.add_argument("--head", metavar="H", help="attention: the head (default L0.h3)")
    parser.add_argument("--softmax", action="store_true",
                        help="attention: an ordinary softmax of the same scores")
    add_model_options(parser)
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args, tasks=True)
    a, b = question_of(parser, args, model)
    length = addition.sequence_length(model)
    if args.pos is not None and not 0 <= args.pos < length:
        parser.error(f"position {args.pos} is outside the sequence; use 0 to {length - 1}")
    shorts = [s.short for s in view_stages(model)] + ["readout"]
    if args.stage is not None and args.stage not in shorts:
        parser.error(f"unknown stage {args.stage!r}; use {', '.join(shorts)}")
    heads = [f"L{i}.{h}" for i, block in enumerate(model.blocks) for h in live_heads(block.attn)]
    if args.head is not None and args.head not in heads:
        parser.error(f"head {args.head!r} is not drawn; use {', '.join(heads)} (the others "
                     f"have no value or output map)")
    refusal = size_problem("figure", args.model, model, [args.number], VIEW_COPIES)
    if refusal:
        parser.error(refusal)
    path = args.output or f"{args.name}.svg"
    with open_output(path, parser) as f:
        try:
            views = views_of(model, a, b, args.number)
        except Overflowed as error:
            parser.error(str(error))
        state = dict(defaults(views), stage=args.stage or "L0.mlp")  # the page's, a stage
        for key, value in (("pos", args.pos), ("head", args.head),
                           ("mode", "softmax" if args.softmax else None)):
            if value is not None:
                state[key] = value
        f.write(FIGURES[args.name](views, state))
    print(f"wrote {path}", file=out)
    return wrong_sum(args.model, views, a, b, err)
