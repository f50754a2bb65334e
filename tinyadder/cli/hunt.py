"""``tinyadder hunt``: the command line of ``analysis.hunt``."""

from ..analysis.hunt import KEEP, PATIENCE, hunt
from .options import PROG, Parser, Progress, add_model_option, int_arg, model_of

MAX_EVALS = 10 ** 9
NAMES = {"float": "float64", "float64": "float64", "float32": "float32"}


def build_parser():
    parser = Parser(
        prog=f"{PROG} hunt",
        description="Search single pairs for one the model adds wrong, led by the margin "
                    "(the true digit's logit less the best other's, the true answer written "
                    "before it): descend on each pair's least margin by changing one to three "
                    "digits, restarting from carry chains and seeded random pairs, in the "
                    "model's float program; a pair whose margin is not above zero is run "
                    "again, in that program and exactly (every digit certified for the "
                    "real-number model). Not a proof: 'prove' decides all 10^20 pairs; a "
                    "search finds what it meets (docs/proof.md, 'The board'). Exit status 1 "
                    "when it found a pair added wrong, 0 when not, 2 for bad options.")
    add_model_option(parser)
    parser.add_argument("--number", choices=("float", "float64", "float32"), default="float",
                        help="the float program searched: float (float64, the default, the "
                             "faster) or float32")
    parser.add_argument("--evals", type=int_arg(1, MAX_EVALS), default=5000, metavar="K",
                        help="passes of the model, one a pair (default 5000: about 30 s "
                             "for a board model in float64)")
    parser.add_argument("--seconds", type=int_arg(1, 10 ** 7), default=None, metavar="T",
                        help="stop after T seconds of CPU as well")
    parser.add_argument("--seed", type=int_arg(0), default=0, metavar="S",
                        help="the random starts' seed (default 0); a search with the same "
                             "seed and --evals meets the same pairs")
    parser.add_argument("--patience", type=int_arg(1, 10 ** 6), default=PATIENCE, metavar="P",
                        help=f"restart after P children in a row with no lower margin "
                             f"(default {PATIENCE})")
    parser.add_argument("--keep", type=int_arg(1, 1000), default=KEEP, metavar="K",
                        help=f"print the K pairs of least margin met (default {KEEP})")
    parser.add_argument("--examples", type=int_arg(1, 1000), default=3, metavar="K",
                        help="stop after K pairs whose margin is not above zero (default 3)")
    return parser


def report(model, result, number, seed):
    """The search's lines: what it ran, the pairs of least margin, the pairs added wrong."""
    program = NAMES[number]
    lines = [f"hunt: {model.name} model, its {program} program, {result.evals:,} passes "
             f"(seed {seed}{'; the time ran out' if result.timed_out else ''}): a search of "
             f"single pairs led by the margin, not a proof",
             "least margins met (the true digit's logit less the best other's):"]
    width = model.prompt.digits
    for p in result.kept:
        lines.append(f"  {p.a:>{width}} + {p.b:<{width}} {p.margin:>12.6g} at place "
                     f"10^{p.place}")
    for p in result.flagged:
        verdict = ("wrong in the real-number model too: a counterexample" if p.fails else
                   "right in the real-number model: the float program's alone"
                   if p.float_fails else "right in both: a tie the float run decides right")
        lines.append(f"{p.a} + {p.b} = {p.a + p.b}: {program} writes {p.float_sum}, the "
                     f"exact run {p.exact_sum} ({verdict})")
    if not any(p.fails or p.float_fails for p in result.flagged):
        lines.append(f"no pair added wrong among the {result.evals:,} searched")
    return lines


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    model = model_of(parser, args)
    if model.prompt is None:
        parser.error(f"the model {args.model} computes a finite task; hunt searches pairs "
                     f"of an addition")
    progress = Progress(err, "hunt", every=None, seconds=10.0, at_once=False)
    result = hunt(model, args.number, evals=args.evals, seed=args.seed, keep=args.keep,
                  patience=args.patience, examples=args.examples, seconds=args.seconds,
                  progress=progress)
    print("\n".join(report(model, result, args.number, args.seed)), file=out)
    return 1 if any(p.fails or p.float_fails for p in result.flagged) else 0
