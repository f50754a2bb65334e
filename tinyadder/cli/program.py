"""``tinyadder program``: the command line of ``analysis.program``."""

from ..analysis.program import listing, not_expressible, python_source, real_view, source
from ..numbers import for_model
from ..plan import compile_model
from .options import PROG, Parser, add_digits_option, add_model_options, model_of


def build_parser():
    parser = Parser(prog=f"{PROG} program",
                    description="Print the model as a register machine, derived from the "
                                "weights: which half-layer writes and reads each slot, and "
                                "each half-layer as instructions over named slots. Where the "
                                "program language can state the model (docs/program.md: "
                                "every shipped one), this is the program `tinyadder "
                                "compile` reads back into the same model; else the listing "
                                "of every operation.")
    add_model_options(parser)
    add_digits_option(parser)
    parser.add_argument("--listing", action="store_true",
                        help="print the listing (every norm, rotary position and factored "
                             "weight spelled out) even where the model has a program")
    parser.add_argument("--real", action="store_true",
                        help="the real-number model: without the float markers f32(...), "
                             "f64(...) around the constants (its program compiles to the "
                             "real-number model, not to the float program)")
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
        if args.listing or args.real:
            parser.error("--python prints the generated code; --listing and --real are views "
                         "of the weights")
        ns = for_model(args.number, model)
        if not compile_model(model, ns).fast:
            parser.error(f"{model.name} has no straight-line code: the fast path runs "
                         f"TinyAdder-36's kind of model, this one runs the traced pass")
        out.write(python_source(model, ns))
        return 0
    if args.real:
        model = real_view(model)
    if args.listing or not_expressible(model):
        out.write(listing(model))
    else:
        out.write(source(model))
    return 0
