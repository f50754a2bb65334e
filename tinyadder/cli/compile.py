"""``tinyadder compile PROGRAM.tap -o MODEL.json``: a register program (docs/program.md)
compiled into a model file (``compiler.compile_program``, then ``modelfile``'s checks and its
canonical text)."""

import json

from ..compiler import ProgramError, compile_program
from ..modelfile import ModelFileError, dump, loads
from .explore import write_data
from .options import PROG, Parser

MAX_PROGRAM = 8 * 1024 * 1024  # bytes of a program, as of a model file


def build_parser():
    parser = Parser(
        prog=f"{PROG} compile",
        description="Compile a register program (declared slots, the embedding per token, "
                    "one section per half-layer, the readout; docs/program.md) into a model "
                    "file that every command takes with --model. `tinyadder program --model "
                    "M` prints the program a model compiles from.")
    parser.add_argument("program", metavar="PROGRAM",
                        help="the program's file (- for standard input)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the model file to FILE (default: standard output)")
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.program == "-":
            text = stdin.read(MAX_PROGRAM + 1)
        else:
            with open(args.program, encoding="utf-8") as f:
                text = f.read(MAX_PROGRAM + 1)
    except (OSError, UnicodeDecodeError) as error:
        parser.error(f"cannot read {args.program}: {getattr(error, 'strerror', None) or error}")
    if len(text) > MAX_PROGRAM:
        parser.error(f"{args.program}: a program has at most {MAX_PROGRAM:,} bytes")
    try:
        data = dump(loads(json.dumps(compile_program(text))))
    except ProgramError as error:
        parser.error(f"{args.program}, {error}")
    except ModelFileError as error:
        parser.error(f"{args.program}: the model it states is not a valid model: {error}")
    if write_data(args.output, data, out, parser):
        print(f"wrote {args.output}", file=out)
    return 0
