"""``tinyadder params``: the command line of ``analysis.ledger``."""

import json

from ..analysis.ledger import as_json, ledger, render
from ..construction import build
from .options import PROG, Parser, add_digits_option, model_arg


def build_parser():
    parser = Parser(
        prog=f"{PROG} params",
        description="The parameter ledger: every weight tensor's role, shape, non-zero "
                    "entries and parameter count, computed from the model's weights and the "
                    "roles its construction declares.")
    parser.add_argument("--model", type=model_arg, default="published",
                        help="published (default) or repaired")
    parser.add_argument("--json", action="store_true", help="print the ledger as JSON")
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    args = build_parser().parse_args(argv)
    model = build(args.model, args.digits)
    lines = ledger(model)
    if args.json:
        print(json.dumps(dict(as_json(model, lines), digits=args.digits), indent=1), file=out)
    else:
        text = render(model, lines)
        text.insert(1, f"built for N = {args.digits} digits (the count is the same for every N)")
        print("\n".join(text), file=out)
    return 0
