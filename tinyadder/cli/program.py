"""``tinyadder program``: the command line of ``analysis.program``."""

from ..analysis.program import listing, python_source
from ..numbers import for_model
from .options import PROG, Parser, add_digits_option, add_model_options, model_of


def build_parser():
    parser = Parser(prog=f"{PROG} program",
                    description="Print the model as a register machine: which half-layer "
                                "writes and reads each slot, and each half-layer as "
                                "instructions over named slots, derived from the weights.")
    add_model_options(parser)
    add_digits_option(parser)
    parser.add_argument("--python", action="store_true",
                        help="print instead the Python code the fast path runs for this model "
                             "in this number system (the code generator's output, as "
                             "executed for every untraced position)")
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args, adds=False)
    out.write(python_source(model, for_model(args.number, model)) if args.python
              else listing(model))
    return 0
