"""The precision lab: how many digits of arithmetic the construction needs, shown, not claimed.

``python -m tinyadder precision`` runs the same seeded pairs in several number systems for a
range of operand lengths N and prints the accuracy of each (system, N), then scans N upward to
find the largest N at which float64 (and float32) is still right on the whole sample.

``python -m tinyadder precision 7650676663+0149460439 --number float32`` compares one addition
with the exact run. Up to the first wrong digit both runs see the same tokens, so their trace
points can be compared position by position. To find where rounding first matters, the
approximate values of one half-layer's output (positions up to the deciding one) are patched
into the exact run: the first half-layer whose rounding errors, with everything after it
computed exactly, change a decision is where the error exceeds the margin that decides the
digit; then each slot of that half-layer is patched alone to name the slot(s).
"""

from fractions import Fraction
import math
import textwrap

from .. import addition, cases
from ..cache import run_with_cache, stages
from ..models import build
from ..forward import forward
from ..numbers import FractionSystem, first_largest, for_model, number_system
from ..plan import compile_model

PROG = "tinyadder precision"
SYSTEMS = ("float32", "float64", "decimal:16", "decimal:24", "decimal", "fraction")
DIGITS_RANGE = (1, 2, 4, 6, 8, 10, 12, 14, 16)
PAIRS = 5
SCAN = ("float32", "float64")
SCAN_LIMIT = 60

# The half-layers in the order they run, by the trace point holding the stream after each.
def sample(digits, pairs, seed=cases.SEED):
    """The pairs every system runs at N digits: the edge cases, then seeded random pairs."""
    return list(cases.edge_cases(digits)) + cases.random_pairs(pairs, seed, digits)


def label(spec):
    """A row name: the spec, with what an unspecified precision becomes."""
    return {"decimal": "decimal:N+30", "float": "float64"}.get(spec, spec)


def accuracy(variant, spec, digits, pairs, seed=cases.SEED):
    """(right, total) of the model for N = digits in number system ``spec`` on the sample."""
    model = build(variant, digits)
    ns = for_model(number_system(spec), model)
    pairs = sample(digits, pairs, seed)
    return sum(addition.add(model, ns, a, b) == a + b
               for a, b in pairs), len(pairs)


def largest_safe(variant, spec, pairs, seed=cases.SEED, limit=SCAN_LIMIT):
    """(largest N right on the whole sample with every smaller N too, (N, right, total) of the
    first failure or None if none up to ``limit``)."""
    for digits in range(1, limit + 1):
        right, total = accuracy(variant, spec, digits, pairs, seed)
        if right < total:
            return digits - 1, (digits, right, total)
    return limit, None


def _say(out, text):
    """Print ``text`` within 80 columns, continuation lines indented 2 more than the first."""
    indent = " " * (len(text) - len(text.lstrip()) + 2)
    print("\n".join(textwrap.wrap(text, 80, subsequent_indent=indent)), file=out)


def table(args, out, progress=None):
    """The accuracy table and the float scans; ``progress(done, total, note)`` is told what
    runs next."""
    progress = progress or (lambda done, total, note: None)
    steps, done = len(args.systems) * len(args.digits) + len(args.scan), 0
    sampled = f"{len(cases.edge_cases(1))} edge cases + {args.pairs} seeded random pairs"
    _say(out, f"accuracy of the {args.model} model per N on {sampled} (seed {args.seed})")
    width = max(len(label(s)) for s in args.systems) + 2
    print("system".ljust(width) + "".join(f"N={n}".rjust(8) for n in args.digits), file=out)
    for row, spec in enumerate(args.systems, 1):
        cells = []
        for n in args.digits:
            progress(done, steps, f": {label(spec)} at N = {n}")
            done += 1
            right, total = accuracy(args.model, spec, n, args.pairs, args.seed)
            cells.append(f"{right}/{total}".rjust(8))
        print(label(spec).ljust(width) + "".join(cells), file=out, flush=True)
    for spec in args.scan:
        progress(done, steps, f": {label(spec)}, searching N = 1, 2, ... for the first failure")
        done += 1
        safe, failure = largest_safe(args.model, spec, args.pairs, args.seed)
        if failure is None:
            print(f"{label(spec)}: right on every sampled pair for N = 1..{safe}", file=out)
        else:
            n, right, total = failure
            _say(out, f"{label(spec)}: right on every sampled pair up to N = {safe}; "
                  f"first failure at N = {n} ({right}/{total})")
    return 0


def _exact(value):
    """A recorded value as an exact rational (None if it is inf or nan)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return Fraction(value)


def _patch(rows_approx, last, slots=None):
    """A patch putting the approximate values (exactly converted) of positions <= last, in
    ``slots`` (all if None), into the exact run's rows."""
    def patch(rows):
        patched = []
        for pos, row in enumerate(rows):
            if pos > last:
                patched.append(row)
                continue
            patched.append([_exact(rows_approx[pos][j]) if slots is None or j in slots else x
                            for j, x in enumerate(row)])
        return patched
    return patch


def flips(compiled, tokens, first_decision, last, name, rows_approx, slots=None):
    """First position in first_decision..last whose decision changes when ``name``'s values are
    the approximate ones (None if every decision stays exact's); inf or nan counts as a change."""
    if any(_exact(rows_approx[p][j]) is None for p in range(last + 1)
           for j in (slots if slots is not None else range(len(rows_approx[p])))):
        return first_decision
    logits, _ = forward(compiled, tokens[:last + 1],
                        patch={name: _patch(rows_approx, last, slots)})
    for pos in range(first_decision, last + 1):
        if compiled.readout_tokens[first_largest(logits[pos])] != tokens[pos + 1]:
            return pos
    return None


def _sci(x):
    return f"{float(x):.3e}"


def _token_place(model, k):
    """The k-th token the model writes (from 1), in words: 'sum digit 8 of 11 (place 10^3)',
    in the order its prompt writes the answer, or its stop token."""
    p = model.prompt
    if k > p.answer_digits:
        return f"the stop token {p.stop!r}"
    power = p.answer_digits - k if p.answer == "msb" else k - 1
    return f"sum digit {k} of {p.answer_digits} (place 10^{power})"


def compare(args, out, model=None):
    """One addition: approximate vs exact, and where the rounding error first decides.
    ``model`` defaults to the one ``args.model`` names, built for ``args.digits``.

    Returns the wrong sums, as (run, the model's sum): the exact run's (the published
    model's flaw) and the approximate one's, for the command line to warn about."""
    model = model or build(args.model, args.digits[0])
    digits = addition.digits_of(model)
    a, b = addition.parse_expression(args.expression, digits)
    exact_ns = for_model(FractionSystem(), model)
    approx_ns = for_model(args.number, model)
    expr = f"{a}+{b}"
    exact_logits, exact = run_with_cache(model, expr, ns=exact_ns)
    _, approx = run_with_cache(model, expr, ns=approx_ns)
    name = label(approx_ns.spec)
    runs = ((f"exact ({exact_ns.name})", exact), (name, approx))
    sums = []
    for title, run in runs:
        text = addition.sequence_text(model, run.tokens)
        print(f"{title}: {text}", file=out)
        answer = addition.answer(model, run.tokens)
        if answer != a + b:
            sums.append((title, answer))
    tokens = exact.tokens
    start = exact.prompt_len - 1  # the prompt's last position predicts the first answer token
    differ = [p for p in range(start, len(tokens) - 1) if approx.tokens[p + 1] != tokens[p + 1]]
    if not differ:
        _say(out, f"{name} gives every digit of the exact run")
        return sums
    last = differ[0]
    errors = model.unembed.kind == "negative_error"  # logit = -error: margins are of errors
    what = "error" if errors else "logit"
    scores = sorted(-x for x in exact_logits[last])
    _say(out, f"first wrong digit: {_token_place(model, last - start + 1)}, decided at "
          f"position {last}: {name} {model.vocab[approx.tokens[last + 1]]}, exact "
          f"{model.vocab[tokens[last + 1]]}; exact margin there: the runner-up's {what} "
          f"{'exceeds' if errors else 'is below'} the winner's by "
          f"{_sci(scores[1] - scores[0])}")
    order = list(model.unembed.tokens)
    said, right = (order.index(model.vocab[t]) for t in (approx.tokens[last + 1],
                                                         tokens[last + 1]))
    mine = approx["logits"][last]
    _say(out, f"in {name} the {what} of {order[said]} is {'below' if errors else 'above'} "
          f"that of {order[right]} there by {_sci(mine[said] - mine[right])}")
    compiled = compile_model(model, exact_ns)
    for stage in stages(model)[1:]:  # every half-layer, in execution order
        title, point = stage.label, stage.name
        rows = approx[point]
        at = flips(compiled, tokens, start, last, point, rows)
        if at is None:
            _say(out, f"{title} ({point}): its rounding alone changes no decision")
            continue
        _say(out, f"{title} ({point}): its rounding, carried on exactly, changes the digit "
              f"decided at position {at}")
        culprits = []
        for j, slot in enumerate(approx.labels(point)):
            if all(_exact(rows[p][j]) == exact[point][p][j] for p in range(last + 1)):
                continue  # rounding left this slot exact: it cannot change anything
            if flips(compiled, tokens, start, last, point, rows, {j}) is not None:
                culprits.append((slot, j))
        for slot, j in culprits:
            worst = max(range(last + 1),
                        key=lambda p: _relative(rows[p][j], exact[point][p][j]))
            _say(out, f"  slot {slot} alone changes it; its largest relative error, "
                  f"{_sci(_relative(rows[worst][j], exact[point][worst][j]))}, is at position "
                  f"{worst} (exact {_sci(exact[point][worst][j])})")
        named = ", ".join(slot for slot, _ in culprits) or "none alone (only together)"
        _say(out, f"first half-layer whose rounding error exceeds the margin: {title}; "
              f"slot: {named}")
        return sums
    _say(out, "no half-layer's rounding alone changes a decision (the errors add up across "
          "half-layers)")
    return sums


def _relative(approx, exact):
    value = _exact(approx)
    if value is None:
        return math.inf
    if exact == 0:
        return math.inf if value != 0 else 0
    return abs(value - exact) / abs(exact)
