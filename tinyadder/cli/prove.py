"""``tinyadder prove``: the command line of ``analysis.proof.prove`` (and ``--certificate``)."""

import json
import time

from ..analysis.proof.prove import certificate, prove
from ..addition import digits_of
from ..analysis.proof.formulas import estimate_seconds
from .options import (PROG, Parser, Progress, add_digits_option, add_jobs_option,
                      add_model_option, model_of)


def build_parser():
    parser = Parser(
        prog=f"{PROG} prove",
        description="Prove that the model adds every one of the 10^(2N) pairs of N-digit "
                    "numbers right, in exact arithmetic and for the real-number model (every "
                    "rounded exponential replaced by an interval that contains it), by "
                    "induction over the digits, from the model's own forward pass run over "
                    "affine forms in the digits (docs/proof.md). Exit status 0 when proved, "
                    "1 when not (then 'tinyadder census' counts the failures), 2 for bad "
                    "options.")
    add_model_option(parser)
    add_digits_option(parser)
    add_jobs_option(parser, "the symbolic pass")
    parser.add_argument("--certificate", metavar="FILE",
                        help="write the proof's data (exact rationals, JSON) to FILE, for "
                             f"'{PROG} check-certificate FILE'")
    return parser


def report(proof, variant):
    """The report's lines (standard output)."""
    n = proof.digits
    lines = [f"prove: {variant} model, N = {n} digits, all 10^{2 * n} pairs",
             "per deciding position: the offset (units of the sum, over every pair)",
             "and the interval it must stay in for the digit to be right",
             "  pos  place        offset                 must stay in      margin"]
    for r in proof.rows:
        place = f"10^{r.place}"
        lines.append(f"  {r.position:>3}  {place:<7} {float(r.low):9.6f} .. {float(r.high):9.6f}"
                     f"   ({float(r.safe_lo):.6f}, {float(r.safe_hi):.6f}]"
                     f"  {_margin(r)}")
    if proof.proved:
        lines.append(f"proved: the {variant} model adds all 10^{2 * n} pairs of {n}-digit "
                     f"numbers right")
        lines.append("  (exact arithmetic, and the real-number model)")
    else:
        bad = ", ".join(f"10^{r.place}" for r in proof.rows if not r.proved)
        lines.append(f"not proved: the offset can leave its interval at place {bad}")
        lines.append(f"  ('{PROG} census --model {variant} --digits {n}' counts the pairs "
                     f"that fail)")
    return lines


def _margin(row):
    m = float(row.margin)
    return "FAILS" if not row.proved else f"{m:.3f}"


def symbolic_progress(digits, err):
    """The progress reporter of the symbolic pass, which says how long it should take."""
    return Progress(err, f"symbolic pass (about {estimate_seconds(digits):.0f} s)", seconds=0)


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)  # a usage error exits 2 (cli.main)
    model = model_of(parser, args)
    start = time.perf_counter()
    proof = prove(model, progress=symbolic_progress(digits_of(model), err), jobs=args.jobs)
    if proof.refusal:
        print(f"{PROG}: prove: the method does not reach this model: {proof.refusal}",
              file=err)
        return 1
    for line in report(proof, args.model):
        print(line, file=out)
    if args.certificate:
        try:
            with open(args.certificate, "w", encoding="utf-8") as f:
                json.dump(certificate(proof, str(args.model)), f, indent=1)
        except OSError as why:
            print(f"{PROG}: error: cannot write {args.certificate}: {why.strerror}; "
                  f"give a writable file", file=err)
            return 2
    print(f"time {time.perf_counter() - start:.1f} s", file=err, flush=True)
    return 0 if proof.proved else 1
