"""``tinyadder params``: the command line of ``analysis.ledger``."""

import json

from ..analysis.ledger import RULES, as_json, ledger, render, rules, rules_text
from .options import PROG, Parser, add_digits_option, add_model_option, model_of


def build_parser():
    parser = Parser(
        prog=f"{PROG} params",
        description="The parameter ledger: every weight tensor's role, shape, non-zero "
                    "entries and parameter count, computed from the model's weights and the "
                    "roles, named constants and ties it declares, with the rule applied to "
                    "each tensor; then the count under each named rule side by side (docs/"
                    "params.md): " + "; ".join(f"{k}: {v}" for k, v in RULES.items()) + ".")
    add_model_option(parser)
    parser.add_argument("--json", action="store_true", help="print the ledger as JSON")
    parser.add_argument("--rules", action="store_true",
                        help="print only the counting rules side by side")
    parser.add_argument("--no-embedding", action="store_true",
                        help="count the rules without the token and position embeddings "
                             "(and a named constant only they use)")
    add_digits_option(parser)
    return parser


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args, adds=False)
    digits = model.prompt.digits if model.prompt is not None else None
    lines = ledger(model)
    embedding = not args.no_embedding
    if args.json:
        counts = {name: {"params": r.params, "note": r.note, "rule": RULES[name]}
                  for name, r in rules(model, embedding).items()}
        print(json.dumps(dict(as_json(model, lines), digits=digits, embedding=embedding,
                              counting_rules=counts), indent=1), file=out)
    elif args.rules:
        print("\n".join([f"{model.name}: " + rules_text(model, embedding)[0]]
                        + rules_text(model, embedding)[1:]), file=out)
    else:
        text = render(model, lines) + [""] + rules_text(model, embedding)
        text.insert(1, f"built for N = {digits} digits (the count is the same for every N)"
                    if args.model.file is None else f"read from {args.model}"
                    + (f", N = {digits} digit{'s' * (digits != 1)}" if digits else ""))
        print("\n".join(text), file=out)
    return 0
