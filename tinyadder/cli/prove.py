"""``tinyadder prove``: the command line of ``proof.prove`` (the closed form, for the
36p family) and of ``proof.search.generic`` (any model file), and ``--certificate``."""

import argparse
from dataclasses import replace
from functools import partial
import gzip
import json
import os
import tempfile
import textwrap
import time

from .. import task
from ..analysis import exhaust
from ..proof.search import floatsets, generic
from ..proof.prove import certificate, prove
from ..addition import add, digits_of, text
from ..numbers import number_system
from ..analysis import board
from ..modelfile import dump
from .. import models
from ..proof.census import census, examples as census_examples
from ..proof.formulas import estimate_seconds
from .options import (PROG, Parser, Progress, add_digits_option, add_jobs_option,
                      add_model_option, int_arg, model_of)


def build_parser():
    parser = Parser(
        prog=f"{PROG} prove",
        description="Prove that the model adds every one of the 10^(2N) pairs of N-digit "
                    "numbers right, in exact arithmetic and for the real-number model (every "
                    "rounded exponential replaced by an interval that contains it), by "
                    "induction over the digits, from the model's own forward pass run over "
                    "affine forms in the digits (docs/proof.md). A model the closed form does "
                    "not reach (or any, with --generic) is proved by the generic method: the "
                    "forward pass over sets of pairs, split where undecided. Exit status 0 "
                    "when proved, 1 when not (a counterexample, or the closed form's failing "
                    "places: 'tinyadder census' counts them), 3 when the generic method is "
                    "undecided within its budget, 2 for bad options.")
    add_model_option(parser)
    add_digits_option(parser)
    add_jobs_option(parser, "the symbolic pass, or the generic method's answer positions "
                            "(one position a part)")
    parser.add_argument("--certificate", metavar="FILE",
                        help="write the proof's data (exact rationals, JSON) to FILE, for "
                             f"'{PROG} check-certificate FILE'")
    parser.add_argument("--number", type=program_arg, default="fraction", metavar="SYSTEM",
                        help="fraction (default): the real-number model; float32 or float "
                             "(also float64): the model's IEEE program, every rounding "
                             "bounded (the generic method; docs/proof.md, 'Float programs')")
    parser.add_argument("--carries-first", action="store_true",
                        help="the generic method (implies --generic): split each region "
                             "first on the carries out of and into the target's column, then "
                             "its sum digit (docs/proof.md, 'Any model: the generic method'); "
                             "the default for a board model whose proof was found so "
                             "(analysis.board.PROOF_OPTIONS, PROGRAM_OPTIONS)")
    parser.add_argument("--rule-order", action="store_true",
                        help="the generic method: split in the rule's own order, even for a "
                             "board model whose proof was found carries first")
    parser.add_argument("--generic", action="store_true",
                        help="use the generic method even where the closed form applies")
    parser.add_argument("--max-sets", type=int_arg(1, 10 ** 9), default=generic.MAX_SETS,
                        metavar="S", help="the generic method's budget of regions per answer "
                                          f"position (default {generic.MAX_SETS}), and as "
                                          "many again for its probe for counterexamples "
                                          "where the search runs out")
    parser.add_argument("--seconds", type=int_arg(1, 10 ** 7), default=int(generic.MAX_SECONDS),
                        metavar="T", help="the generic method's budget of seconds per answer "
                                          f"position (default {int(generic.MAX_SECONDS)}), and "
                                          "as many again for its probe")
    parser.add_argument("--examples", type=int_arg(1, 10 ** 6), default=generic.EXAMPLES,
                        metavar="K", help="the generic method stops after K counterexamples "
                                          f"(default {generic.EXAMPLES})")
    return parser


def carries_first(model, number):
    """Whether the generic method splits carries first for ``model`` by default: where the
    board's proof of the same model text, under any name (a copy of a board model's file
    too), was found so (``board.PROOF_OPTIONS`` for the real-number model,
    ``PROGRAM_OPTIONS`` for its float program), the order that proves it fastest."""
    options = board.PROOF_OPTIONS if number == "fraction" else board.PROGRAM_OPTIONS
    named = [n for n, o in options.items() if o.get("carries_first")]
    # the model's own name first: one board model to build where the name is the board's
    named.sort(key=lambda n: n != model.name)
    for name in named:
        try:
            if dump(models.build(name)) == dump(replace(model, name=name)):
                return True
        except ValueError:
            continue
    return False


def program_arg(text):
    """--number: 'fraction', or the float program 'float32' or 'float' ('float64')."""
    name = {"float64": "float"}.get(text.strip(), text.strip())
    if name not in ("fraction", "float32", "float"):
        raise argparse.ArgumentTypeError(f"prove takes fraction (the real-number model), "
                                         f"float32 or float (float64), got {text!r}")
    return name


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
        lines.append(f"not proved by the closed form: over the digit box (which holds digit "
                     f"combinations no pair has) the offset can leave its interval at place "
                     f"{bad}")
    return lines


def _margin(row):
    m = float(row.margin)
    return f"{m:.3f}" if row.proved else f"{m:.3f} (box)"


def counted_failures(model, proof, examples, jobs, err):
    """Where the closed form does not prove ``model``: (the census, up to ``examples`` pairs
    of its windows that an exact run adds wrong), or None when the census counts none or no
    example of its windows is added wrong ("fails" only with a confirmed pair)."""
    print(f"{PROG}: prove: the census counts the pairs added wrong", file=err)
    result = census(model, formulas=proof.formulas, jobs=jobs)
    if not result.count:
        return None
    ns, wrong = number_system("fraction"), []
    for w in result.windows:
        for a, b in census_examples(result, w):
            got = add(model, ns, a, b)
            if got != a + b:
                wrong.append((a, b, got))
        if len(wrong) >= examples:
            break
    return (result, wrong[:examples]) if wrong else None


def census_failures(result, wrong, name):
    """The report's lines for a model the census finds failing, its examples confirmed."""
    n = result.digits
    near = f"; {result.uncertain:,} within rounding of a threshold" if result.uncertain else ""
    return [f"fails: the {name} model adds {result.count:,} of the 10^{2 * n} pairs wrong "
            f"(the census, exact{near}); counterexamples, each confirmed by an exact run:"] + [
        f"  {text(a, b, got, n)}  (right: {a + b})" for a, b, got in wrong]


def symbolic_progress(digits, err):
    """The progress reporter of the symbolic pass, which says how long it should take."""
    return Progress(err, f"symbolic pass (about {estimate_seconds(digits):.0f} s)", seconds=0)


def generic_report(outcome, name, number="fraction"):
    """The generic method's report lines (standard output); ``number`` is fraction (the
    real-number model) or the float program's format."""
    n = outcome.digits
    what = "exact arithmetic, and the real-number model" if number == "fraction" else \
        f"the {number} program, every rounding bounded"
    confirmed = "an exact run" if number == "fraction" else f"the {number} replay"
    lines = [f"prove: {name} model{'' if number == 'fraction' else ' as a ' + number + ' program'}"
             f", N = {n} digits, all 10^{2 * n} pairs (generic method: the forward pass over "
             f"sets of pairs)"]
    if outcome.verdict == "proved":
        margins = ", ".join(f"{float(m):.3g}" if m is not None else "-" for m in outcome.margins)
        lines += [f"least margin (target logit minus the best other) per answer position: "
                  f"{margins}",
                  f"proved: the {name} model adds all 10^{2 * n} pairs of {n}-digit numbers "
                  f"right",
                  f"  ({what})"]
    elif outcome.verdict == "fails":
        lines.append(f"fails: the {name} model adds some pairs wrong; counterexamples, each "
                     f"confirmed by {confirmed}:")
        lines += [f"  {text(a, b, wrote, n)}  (right: {a + b})"
                  for a, b, wrote in outcome.counterexamples]
    else:
        lines.append("undecided within the budget; regions left (smallest first):")
        for o in sorted(outcome.open, key=lambda o: o.region.count())[:8]:
            margin = f", margin {float(o.margin):.3g}" if o.margin is not None else ""
            lines.append(f"  answer position {o.position}: {o.region.describe()} "
                         f"({o.region.count()} pairs{margin}; {o.why})")
    lines.append(f"  {outcome.sets} regions run through the pass, {outcome.runs} "
                 f"{'exact' if number == 'fraction' else number} runs of single pairs")
    return lines


EXIT = {"proved": 0, "fails": 1, "undecided": 3}


def certificate_path_problem(path):
    """None if a certificate can be written to ``path`` (checked before the proof runs),
    else the line that says why not: an empty name, a directory, a folder that does not
    exist or cannot be written to."""
    if not path:
        return "--certificate: an empty file name; give the file to write the certificate to"
    if os.path.isdir(path):
        return f"--certificate: {path} is a directory; give a file name"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"--certificate: no folder {folder}; give a file in an existing folder"
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path)
                                                    and not os.access(path, os.W_OK)):
        return f"--certificate: cannot write {path}; give a writable file"
    return None


def write_certificate(path, data, err):
    """Write ``data`` as JSON to ``path``, gzip-compressed where the name ends in .gz (no
    time stamp in it: the same proof, the same bytes), atomically: a temporary file in the
    same folder, renamed over ``path`` once whole (a failed write leaves ``path`` as it
    was); the exit status 2 (one line) if it cannot."""
    text = json.dumps(data, indent=1).encode()
    folder = os.path.dirname(os.path.abspath(path))
    temp = None
    try:
        fd, temp = tempfile.mkstemp(prefix=".certificate-", dir=folder)
        umask = os.umask(0o22)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # as open() would create it (mkstemp: 0600)
        with os.fdopen(fd, "wb") as f:
            f.write(gzip.compress(text, mtime=0) if str(path).endswith(".gz") else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as why:
        if temp is not None and os.path.exists(temp):
            os.unlink(temp)
        print(f"{PROG}: error: cannot write {path}: {why.strerror}; give a writable file",
              file=err)
        return 2
    return None


def main(argv, out, err, stdin):
    """This subcommand's exit status for its arguments ``argv``."""
    parser = build_parser()
    args = parser.parse_args(argv)  # a usage error exits 2 (cli.main)
    if args.certificate is not None:
        problem = certificate_path_problem(args.certificate)
        if problem:
            parser.error(problem)
    model = model_of(parser, args, tasks=True)
    if task.has_task(model):
        return prove_task(parser, args, model, out)
    start = time.perf_counter()
    # a split order is the generic method's: the closed form has no regions to split
    if not (args.generic or args.carries_first) and args.number == "fraction":
        proof = prove(model, progress=symbolic_progress(digits_of(model), err), jobs=args.jobs)
        if not proof.refusal:
            for line in report(proof, args.model):
                print(line, file=out)
            if proof.proved:
                if args.certificate is not None:
                    failed = write_certificate(args.certificate,
                                               certificate(proof, model, str(args.model)), err)
                    if failed:
                        return failed
                print(f"time {time.perf_counter() - start:.1f} s", file=err, flush=True)
                return 0
            found = counted_failures(model, proof, args.examples, args.jobs, err)
            if found:
                for line in census_failures(*found, args.model):
                    print(line, file=out)
                if args.certificate is not None:
                    print(f"{PROG}: prove: no certificate written: the verdict is fails",
                          file=err)
                print(f"time {time.perf_counter() - start:.1f} s", file=err, flush=True)
                return 1
            print(f"{PROG}: prove: the census counts no pair added wrong, which the closed form "
                  f"does not prove; the generic method", file=err)
        else:
            print(f"{PROG}: prove: the closed form does not reach this model ({proof.refusal}); "
                  f"the generic method", file=err)
    budget = dict(max_sets=args.max_sets, max_seconds=args.seconds, examples=args.examples,
                  progress=Progress(err, "generic prover"),
                  carries_first=args.carries_first or (not args.rule_order
                                                       and carries_first(model, args.number)))
    if args.number == "fraction":
        prover, certify = generic.Prover(model, **budget), generic.certificate
    else:
        prover = floatsets.FloatProver(model, args.number, **budget)
        certify = partial(floatsets.certificate, program=args.number)
    outcome = prover.run(args.jobs)
    for line in generic_report(outcome, args.model, args.number):
        print(line, file=out)
    if args.certificate is not None and outcome.verdict == "proved":
        failed = write_certificate(args.certificate,
                                   certify(outcome, model, str(args.model)), err)
        if failed:
            return failed
    elif args.certificate is not None:
        print(f"{PROG}: prove: no certificate written: the verdict is {outcome.verdict}",
              file=err)
    print(f"time {time.perf_counter() - start:.1f} s", file=err, flush=True)
    return EXIT[outcome.verdict]


def prove_task(parser, args, model, out):
    """prove of a model with a finite task: by exhaustion, one run of every input
    (``exhaust``), exact with every token certified (or the float program replayed); no
    certificate: the claim is the runs, which ``verify`` re-runs."""
    if args.certificate is not None or args.generic or args.carries_first:
        parser.error(f"the model {args.model} computes a finite task, proved by exhaustion of "
                     f"its inputs: no certificate, --generic or --carries-first")
    found = exhaust.runs(model, number_system(args.number))
    n, result = len(found), exhaust.verdict(found)
    how = ("an exact run of each, every token certified (the real-number model)"
           if args.number == "fraction" else f"a replay of the {args.number} program on each")
    lines = textwrap.wrap(f"prove: {args.model}, a finite task of {n} inputs "
                          f"({', '.join(task.inputs(model))}), by exhaustion: {how}", 80,
                          subsequent_indent="  ") + exhaust.lines(found)
    again = f"re-run: {PROG} verify --model {args.model}" + (
        f" --number {args.number}" if args.number != "fraction" else "")
    if result == "proved":
        lines.append(f"proved by exhaustion: {n} of {n} inputs ({again})")
    elif result == "fails":
        wrong = sum(r.wrote is not None and not r.right for r in found)
        lines.append(f"fails: {wrong} of {n} inputs written wrong ({again})")
    else:
        lines.append(f"undecided: {sum(r.wrote is None for r in found)} of {n} inputs "
                     f"without a certified token")
    for line in lines:
        print(line, file=out)
    out.flush()
    return EXIT[result]
