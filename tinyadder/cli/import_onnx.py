"""``tinyadder import``: an ONNX graph another tool wrote (torch.onnx.export, an optimiser) as
a model file, named and prompted by its layout (docs/onnx.md, "Bring your own model")."""

from dataclasses import replace

from ..modelfile import dump
from ..onnx import OnnxError
from ..onnx.read import load
from .explore import write_data
from .options import PROG, Parser, layout_arg


def build_parser():
    parser = Parser(
        prog=f"{PROG} import",
        description="Read an ONNX graph (a model's forward pass at a fixed length, as "
                    "torch.onnx.export writes it) into a model file: the blocks it computes "
                    "over named slots, every weight the exact value of the float the graph "
                    "stores (docs/onnx.md). The layout names the tokens and gives the prompt.")
    parser.add_argument("graph", metavar="FILE.onnx", help="the ONNX file")
    parser.add_argument("--layout", type=layout_arg, metavar="FILE.json", required=True,
                        help="the tokens' names and the prompt: a JSON object of a model "
                             "file's vocab and prompt (docs/onnx.md)")
    parser.add_argument("-o", "--output", metavar="FILE.json",
                        help="write the model file to FILE.json (default: standard output)")
    parser.add_argument("--name", metavar="NAME",
                        help="the model's name (default: the ONNX file's name without .onnx)")
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.graph.endswith(".onnx"):
        parser.error(f"{ascii(args.graph)}: an ONNX file's name ends in .onnx")
    try:
        model = load(args.graph, args.layout)
        if args.name is not None:
            model = replace(model, name=args.name)
    except OnnxError as error:
        parser.error(str(error))
    except ValueError as error:  # a name the model format does not take
        parser.error(f"--name: {error}")
    data = dump(model)
    if write_data(args.output, data, out, parser):
        print(f"wrote {args.output} ({model.name}: {len(model.blocks)} "
              f"block{'s' * (len(model.blocks) != 1)}, {len(model.slots)} slots, "
              f"{len(model.vocab)} tokens)", file=out)
    return 0
