"""The command line's trace options: --trace, --json, --step, --check and their filters.

``add_options(parser)`` declares them; ``problem(args, model)`` names a bad combination;
``run(args, model, a, b, out, stdin)`` captures one addition with ``trace.run_with_cache`` and
hands it to ``show`` (text), ``trace_json`` (JSON) or ``step`` (step-through), with ``probes``
for --check. It returns the model's sequence so the caller can check the sum as usual.
"""

import argparse
import os
import re

from ..addition import digits_of, encode, sequence_length, sequence_text
from ..analysis import probes, show, step, trace_json
from ..cache import TRACE_BUDGET, gigabytes, run_with_cache, trace_bytes
from ..construction import MAX_DIGITS
from ..numbers import for_model
from .. import task
from .options import Keys, excerpt, int_arg, tinyadder_problem

MAX_POSITION = 3 * MAX_DIGITS + 3
# A command's peak memory over the estimate of the trace it holds (trace_bytes), with a margin
# over what was measured at N = 20 to 100 (docs/cli.md): at most 1.0 for --trace, --step,
# explain, figure and explore; 2.0 for --json, which also holds the recomputed points and the
# JSON text.
COPIES = {"trace": 1.25, "json": 2.5, "step": 1.25}
VIEW_COPIES = 1.25


def size_problem(what, choice, model, systems, copies=1.0):
    """A one-line refusal if ``what``, which holds a trace of ``model`` in each number system
    of ``systems``, ``copies`` times over, would take more than ``cache.TRACE_BUDGET``; else
    None. For a construction (``choice``, the --model given, names one) the refusal names the
    largest N that fits."""
    def need(m):
        return copies * sum(trace_bytes(m, for_model(ns, m)) for ns in systems)
    if need(model) <= TRACE_BUDGET:
        return None
    digits = digits_of(model)
    names = " and ".join(dict.fromkeys(for_model(ns, model).spec for ns in systems))
    head = (f"{what} at N = {digits} in {names} needs about {gigabytes(need(model))}, over the "
            f"{gigabytes(TRACE_BUDGET)} limit")
    if choice.file is not None:
        return f"{head}; keep fewer trace points or use a smaller model"
    lo, hi = 0, digits  # need at lo fits (or lo = 0), need at hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need(choice.build(mid)) <= TRACE_BUDGET else (lo, mid)
    return f"{head}; {f'use --digits {lo} or less' if lo else 'no N fits'}"


FILTERS = ("pos", "slots", "layer", "exact", "sig", "check", "heat", "roundings")  # --trace
STEP_FILTERS = ("pos", "slots", "sig")


def positions_arg(text):
    """'22', '22,25' or '23-25' -> a sorted list of positions, each checked against the
    longest sequence (N = MAX_DIGITS) before a range is built; the model's own length is
    checked by ``problem``."""
    out = set()
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]{1,30})\s*(?:-\s*([0-9]{1,30})\s*)?", part)
        if not match:
            raise argparse.ArgumentTypeError(
                f"bad position {excerpt(part.strip())}; use numbers and ranges such as "
                f"22,25-27")
        lo = int(match.group(1))
        hi = int(match.group(2) or lo)
        if hi > MAX_POSITION:
            raise argparse.ArgumentTypeError(
                f"position {hi} is past every sequence; use 0 to {MAX_POSITION} at most")
        if hi < lo:
            raise argparse.ArgumentTypeError(
                f"reversed range {lo}-{hi}; write the smaller position first: {hi}-{lo}")
        out.update(range(lo, hi + 1))
    return sorted(out)


def slots_arg(text):
    slots = [s.strip() for s in text.split(",") if s.strip()]
    if not slots:
        raise argparse.ArgumentTypeError("no slot named; give names such as scale,count")
    return slots


def sig_arg(text):
    if not (text.isascii() and text.isdigit() and len(text) <= 2 and 1 <= int(text) <= 40):
        raise argparse.ArgumentTypeError(f"--sig takes 1 to 40 significant digits, got {text!r}")
    return int(text)


def add_options(parser):
    """The trace options of the main command."""
    group = parser.add_argument_group(
        "tracing", f"show the machine state at every half-layer (see docs/trace-points.md). "
                   f"A trace keeps every attention weight of the sequence, 12(3N + 4)^2 values: "
                   f"one that would take more than {gigabytes(TRACE_BUDGET)} is refused up "
                   f"front, naming the largest N that fits (docs/cli.md)")
    group.add_argument("--trace", action="store_true",
                       help="print the residual stream by slot name after the embedding and "
                            "each half-layer, live heads' attention, and the logits, for each "
                            "position that predicts a sum digit")
    group.add_argument("--json", action="store_true",
                       help="write every trace point of the run as JSON (exact values)")
    group.add_argument("--step", action="store_true",
                       help="step through the half-layers like a debugger (keys from standard "
                            "input; 'h' lists them)")
    group.add_argument("--check", action="store_true",
                       help="with --trace: compare each slot with its intended value computed "
                            "from a and b and mark the first departure")
    group.add_argument("--heat", action="store_true",
                       help="with --trace: draw attention as a character ramp of log10 weight "
                            "on the explorer's clipped scale (' ' below it, a digit per tenth "
                            "of the scale below 10^-5, the larger the digit the smaller the "
                            "weight, '+*#%%@' a decade each up to 1), with the top weights as "
                            "numbers, in colour on a terminal unless NO_COLOR is set")
    group.add_argument("--roundings", action="store_true",
                       help="with --trace: list every irrational value rounded (cos/sin of "
                            "the RoPE angles, exp, sqrt; more than a few are counted in one "
                            "line)")
    group.add_argument("--pos", type=positions_arg, metavar="POS",
                       help="positions to show, e.g. 22 or 22,30-32 (default: those that "
                            "predict a sum digit)")
    group.add_argument("--slots", type=slots_arg, metavar="NAMES",
                       help="slots to show, comma-separated, e.g. scale,count,cand0")
    group.add_argument("--layer", type=int_arg(0), metavar="L",
                       help="show only layer L's half-layers")
    group.add_argument("--exact", action="store_true",
                       help="print every value as its full exact text (rationals n/d)")
    group.add_argument("--sig", type=sig_arg, default=show.SIG, metavar="N",
                       help=f"significant digits of values rounded for display "
                            f"(default {show.SIG})")


def colour_wanted(out, environ=os.environ):
    """ANSI colour only on a terminal, and never when NO_COLOR is set (https://no-color.org;
    set to anything, even empty)."""
    return bool(getattr(out, "isatty", lambda: False)()) and "NO_COLOR" not in environ


def requested(args):
    return args.trace or args.json or args.step


def problem(args, model):
    """A one-line description of what is wrong with the trace options, or None."""
    modes = [m for m in ("trace", "json", "step") if getattr(args, m)]
    defaults = {"sig": show.SIG, "exact": False, "check": False, "heat": False,
                "roundings": False}
    used = [f for f in FILTERS if getattr(args, f) != defaults.get(f)]
    if len(modes) > 1:
        return f"choose one of --trace, --json and --step, not {' and '.join(modes)}"
    mode = modes[0] if modes else None
    allowed = {"trace": FILTERS, "step": STEP_FILTERS, "json": (), None: ()}[mode]
    unused = [f for f in used if f not in allowed]
    if unused:
        needs = "--trace" if unused[0] not in STEP_FILTERS else "--trace or --step"
        return f"--{unused[0]} needs {needs}" + (f", not --{mode}" if mode else "")
    if mode in ("json", "step") and (len(args.expressions) != 1 or "-" in args.expressions):
        return f"--{mode} takes exactly one expression (not '-')"
    if args.check and tinyadder_problem(model, "--check"):
        return tinyadder_problem(model, "--check")
    refusal = mode and size_problem(f"--{mode}", args.model, model, [args.number],
                                    COPIES[mode])
    if refusal:
        return refusal
    length = sequence_length(model)
    bad = [p for p in args.pos or () if p >= length]
    if bad:
        return f"position {bad[0]} is outside the sequence; use 0 to {length - 1}"
    unknown = [s for s in args.slots or () if s not in model.slots]
    if unknown:
        return f"unknown slot {excerpt(unknown[0])}; use {', '.join(model.slots)}"
    if args.layer is not None and not 0 <= args.layer < len(model.blocks):
        return f"no layer {args.layer}; use 0 to {len(model.blocks) - 1}"
    return None


def run(args, model, a, b, out, stdin):
    """Trace a + b as the options ask; return the model's sequence (without <bos>)."""
    digits = digits_of(model)
    _, cache = run_with_cache(model, encode(model, a, b), ns=args.number)
    show_trace(args, cache, out, stdin, (a, b, digits) if args.check else None)
    return sequence_text(model, cache.tokens)


def run_task(args, model, x, out, stdin):
    """Trace a finite task's input ``x`` as the options ask; return what the model wrote."""
    _, cache = run_with_cache(model, task.encode(model, x), ns=args.number)
    show_trace(args, cache, out, stdin)
    return task.answer(model, cache.tokens)


def show_trace(args, cache, out, stdin, checked=None):
    """Write the trace ``cache`` as --json, --step or --trace asks (``checked``: the
    addition's (a, b, N) that --check compares the slots with)."""
    if args.json:
        trace_json.dump(cache, out)
    elif args.step:
        step.session(cache, Keys(stdin), out, positions=args.pos, slots=args.slots,
                     sig=args.sig)
    else:
        check = probes.check(cache, *checked) if checked else None
        out.write(show.render(cache, args.pos, args.slots, args.layer, args.sig, args.exact,
                              check, args.heat, args.heat and colour_wanted(out),
                              args.roundings))
    out.flush()
