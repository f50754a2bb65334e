"""``tinyadder export``: a model as a model file (``modelfile.dump``, docs/model-format.md), or
with ``--onnx`` as an ONNX graph (``onnx.export``, docs/onnx.md)."""

from ..modelfile import dump
from ..onnx import OnnxError, serialize
from ..onnx.export import DTYPES, MAX_LENGTH, export
from .explore import write_data
from .options import PROG, Parser, add_digits_option, int_arg, model_arg, model_of


def build_parser():
    parser = Parser(
        prog=f"{PROG} export",
        description="Write a model as a model file: one JSON document, every value an exact "
                    "constant (docs/model-format.md); or, with --onnx, as an ONNX graph that "
                    "maps T token ids to the logits of every position (docs/onnx.md). MODEL "
                    "is a shipped model (published, repaired; with --digits N the "
                    "construction for N-digit operands), a model file or an ONNX file.")
    parser.add_argument("model", type=model_arg, metavar="MODEL",
                        help="a shipped model's name or the path of a model file")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the file to FILE (default: standard output; --onnx needs "
                             "a FILE)")
    parser.add_argument("--onnx", action="store_true",
                        help="write an ONNX file (standard operators, opset 21) instead")
    parser.add_argument("--length", type=int_arg(1, MAX_LENGTH), metavar="T",
                        help="--onnx: the positions the graph takes (default: a whole "
                             "addition, its prompt and every written token but the last)")
    parser.add_argument("--dtype", choices=tuple(DTYPES), default=None,
                        help="--onnx: the floats of the graph (default float64)")
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args, adds=False)
    if not args.onnx:
        if args.length is not None or args.dtype is not None:
            parser.error("--length and --dtype are options of --onnx")
        data = dump(model)
    else:
        if args.output is None:
            parser.error("--onnx writes a binary file: give it with -o FILE.onnx")
        try:
            data = serialize(export(model, args.length, args.dtype or "float64"))
        except OnnxError as error:
            parser.error(str(error))
    if write_data(args.output, data, out, parser, binary=args.onnx):
        print(f"wrote {args.output}", file=out)
    return 0
