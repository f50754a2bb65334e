"""``tinyadder program``: the command line of ``analysis.program``."""

from ..analysis.program import listing, python_source, unsupported
from ..numbers import for_model
from ..plan import compile_model
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
    if args.python:
        ns = for_model(args.number, model)
        if not compile_model(model, ns).fast:
            parser.error(f"{model.name} has no straight-line code: the fast path runs "
                         f"TinyAdder-36's kind of model, this one runs the traced pass")
        out.write(python_source(model, ns))
        return 0
    why = unsupported(model)
    if why:
        parser.error(f"the listing reads TinyAdder-36's kind of model; {model.name} has {why}")
    out.write(listing(model))
    return 0
