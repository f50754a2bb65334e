"""``tinyadder program``: the command line of ``analysis.program``."""

from ..analysis.program import listing
from ..construction import build
from .options import Parser, model_arg


def main(argv):
    parser = Parser(prog="tinyadder program",
                    description="Print the model as a register machine: which half-layer "
                                "writes and reads each slot, and each half-layer as "
                                "instructions over named slots, derived from the weights.")
    parser.add_argument("--model", type=model_arg, default="published",
                        help="published (default) or repaired")
    args = parser.parse_args(argv)
    print(listing(build(args.model)), end="")
    return 0
