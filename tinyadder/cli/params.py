"""``tinyadder params``: the command line of ``analysis.ledger``."""

import json

from ..analysis.ledger import as_json, ledger, render
from .options import PROG, Parser, add_digits_option, add_model_option, model_of


def build_parser():
    parser = Parser(
        prog=f"{PROG} params",
        description="The parameter ledger: every weight tensor's role, shape, non-zero "
                    "entries and parameter count, computed from the model's weights and the "
                    "roles, named constants and ties it declares, with the rule applied to "
                    "each tensor.")
    add_model_option(parser)
    parser.add_argument("--json", action="store_true", help="print the ledger as JSON")
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args, adds=False)
    digits = model.prompt.digits if model.prompt is not None else None
    lines = ledger(model)
    if args.json:
        print(json.dumps(dict(as_json(model, lines), digits=digits), indent=1), file=out)
    else:
        text = render(model, lines)
        text.insert(1, f"built for N = {digits} digits (the count is the same for every N)"
                    if args.model.file is None else f"read from {args.model}"
                    + (f", N = {digits} digit{'s' * (digits != 1)}" if digits else ""))
        print("\n".join(text), file=out)
    return 0
