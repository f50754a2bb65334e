"""``tinyadder export``: a model as a model file (``modelfile.dump``, docs/model-format.md)."""

from ..modelfile import dump
from .explore import open_output
from .options import PROG, Parser, add_digits_option, model_arg, model_of


def build_parser():
    parser = Parser(
        prog=f"{PROG} export",
        description="Write a model as a model file: one JSON document, every value an exact "
                    "constant (docs/model-format.md). MODEL is a shipped model (published, "
                    "repaired; with --digits N the construction for N-digit operands) or a "
                    "model file, written again in canonical form.")
    parser.add_argument("model", type=model_arg, metavar="MODEL",
                        help="a shipped model's name or the path of a model file")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the file to FILE (default: standard output)")
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    text = dump(model_of(parser, args, adds=False))
    if args.output is None:
        out.write(text)
        return 0
    with open_output(args.output, parser) as f:
        try:
            f.write(text)
        except OSError as error:  # a full disk or device: one line, as everywhere
            parser.error(f"cannot write {args.output}: {error.strerror or error}")
    print(f"wrote {args.output}", file=out)
    return 0
