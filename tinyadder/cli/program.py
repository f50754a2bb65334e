"""``tinyadder program``: the command line of ``analysis.program``."""

from ..analysis.program import listing
from ..construction import build
from .options import PROG, Parser, add_digits_option, model_arg


def build_parser():
    parser = Parser(prog=f"{PROG} program",
                    description="Print the model as a register machine: which half-layer "
                                "writes and reads each slot, and each half-layer as "
                                "instructions over named slots, derived from the weights.")
    parser.add_argument("--model", type=model_arg, default="published",
                        help="published (default) or repaired")
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    args = build_parser().parse_args(argv)
    out.write(listing(build(args.model, args.digits)))
    return 0
