"""A search of single pairs for one the model adds wrong, led by the margin: not a proof.

The margin of a pair at an answer position is the logit of the sum's true digit less the
largest other logit, with the true answer written before it (so a model that adds the pair
right chooses that digit there, and one whose least margin is below zero adds it wrong):

    margin_k(a, b) = logit_k[s_k] − max_{t ≠ s_k} logit_k[t]

The search descends on the least margin min_k margin_k(a, b): from a start (three carry chains,
then seeded random pairs) it changes one to three digits of the pair at hand (a digit of a, of
b, or a column's two digits with their sum kept) and moves to the child when its least margin is
lower, until ``patience`` children in a row are not; then it takes the next start. It reports
the ``keep`` pairs of least margin met, one for each margin. It runs the model's float
program (float64 or float32: ``numbers``), where a pass costs milliseconds; a pair whose least
margin there is not above zero is run again by the whole generation loop in that system and in
the fraction system, whose every digit is certified for the real-number model, and both sums
are reported. It finds what it meets: "none found" is evidence, never a verdict; a pair the
exact run adds wrong is a counterexample (``prove`` counts them, docs/proof.md).
"""

from dataclasses import dataclass
import random
import time
from typing import Optional, Tuple

from .. import addition
from ..forward import forward
from ..numbers import for_model, number_system
from ..plan import compile_model

KEEP = 8
PATIENCE = 150
SYSTEMS = ("float", "float64", "float32")


@dataclass(frozen=True)
class Pair:
    """A pair searched: its least margin over the answer positions, where (the power of ten
    of the sum's digit), and, if it was run again, the sums the float and exact runs write."""

    a: int
    b: int
    margin: float
    place: int
    float_sum: Optional[object] = None
    exact_sum: Optional[object] = None

    @property
    def fails(self):
        """The exact run (the real-number model) adds the pair wrong."""
        return self.exact_sum is not None and self.exact_sum != self.a + self.b

    @property
    def float_fails(self):
        """The float program adds the pair wrong."""
        return self.float_sum is not None and self.float_sum != self.a + self.b


@dataclass(frozen=True)
class Hunt:
    """What a search met: the kept pairs, least margin first; the pairs run again because
    their margin was not above zero; the passes run; whether the time ran out first."""

    kept: Tuple[Pair, ...]
    flagged: Tuple[Pair, ...]
    evals: int
    timed_out: bool


def margins(model, compiled, a, b):
    """margin_k(a, b) for each answer position k, in the order the model writes them, from one
    pass over the prompt and the true answer (its stop token too, where it has one)."""
    prompt = addition.encode(model, a, b)
    answer = addition.encode_answer(model, a + b)
    logits, _ = forward(compiled, prompt + answer[:-1])
    readout = compiled.readout_tokens
    out = []
    for row, token in zip(logits[len(prompt) - 1:], answer):
        values = [float(v) for v in row]
        right = values[readout.index(token)]
        out.append(right - max(v for t, v in zip(readout, values) if t != token))
    return out


def chains(digits):
    """Three carry chains of N digits, each carrying out of every column: 9…9 + 1 (9 + 0 and
    the carry above the units), 49…9 + 50…01 (4 + 5 and the carry at the top), and every
    column 9 + 9."""
    top, half = 10 ** digits, 5 * 10 ** (digits - 1)
    return [(top - 1, 1), (half - 1, half + 1), (top - 1, top - 1)]


def _place(model, k):
    """The power of ten of the sum's digit the k-th answer token writes."""
    n = model.prompt.answer_digits
    return n - 1 - k if model.prompt.answer == "msb" else k


def _mutate(rng, a, b, digits):
    """A child of (a, b): one to three digits changed."""
    da, db = [int(x) for x in "%0*d" % (digits, a)], [int(x) for x in "%0*d" % (digits, b)]
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        k, how = rng.randrange(digits), rng.randrange(3)
        if how == 0:
            da[k] = rng.randrange(10)
        elif how == 1:
            db[k] = rng.randrange(10)
        else:  # the column's sum kept: the carries stay, the digits move
            s = da[k] + db[k]
            da[k] = rng.randrange(max(0, s - 9), min(9, s) + 1)
            db[k] = s - da[k]
    return int("".join(map(str, da))), int("".join(map(str, db)))


def hunt(model, number="float", *, evals=5000, seed=0, keep=KEEP, patience=PATIENCE,
         examples=3, seconds=None, progress=None):
    """Search (the module docstring) for at most ``evals`` passes or ``seconds`` of CPU; stop
    after ``examples`` pairs the float run does not add right by a margin. ``number``: float
    (float64) or float32."""
    if number not in SYSTEMS:
        raise ValueError(f"the search runs a float program: number system {number!r} is not "
                         f"one of {', '.join(SYSTEMS)}")
    for name, value in (("evals", evals), ("keep", keep), ("patience", patience),
                        ("examples", examples)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
    digits = addition.digits_of(model)
    ns = for_model(number_system(number), model)
    compiled, rng = compile_model(model, ns), random.Random(seed)
    starts = iter(chains(digits))
    kept, flagged, seen, start = [], [], set(), time.process_time()

    def out_of_time():
        return seconds is not None and time.process_time() - start > seconds

    def visit(a, b):
        seen.add((a, b))
        if progress and len(seen) % 500 == 0:
            progress(len(seen), evals, f" passes, least margin {kept[0].margin:.6g}")
        if a + b >= 10 ** model.prompt.answer_digits:  # the answer cannot hold the sum
            m, place = float("-inf"), model.prompt.answer_digits
        else:
            row = margins(model, compiled, a, b)
            k = min(range(len(row)), key=row.__getitem__)
            m, place = row[k], _place(model, k)
        pair = Pair(a, b, m, place)
        if m <= 0:  # the generation loop decides (ties by its own rule), exactly too
            pair = Pair(a, b, m, place, addition.add(model, ns, a, b),
                        addition.add(model, "fraction", a, b))
            flagged.append(pair)
        # one pair a margin: a pair's neighbours often share it (digits no position reads)
        fresh = all(p.margin != m for p in kept)
        if fresh and (len(kept) < keep or m < kept[-1].margin):
            kept.append(pair)
            kept.sort(key=lambda p: p.margin)
            del kept[keep:]
        return pair

    def running():
        return len(seen) < evals and not out_of_time() and len(flagged) < examples

    misses = 0  # children met before, in a row: a small N has few pairs
    while running() and misses < evals:
        a, b = next(starts, None) or (rng.randrange(10 ** digits), rng.randrange(10 ** digits))
        if (a, b) in seen:
            misses += 1
            continue
        here, stall = visit(a, b), 0
        while running() and stall < patience and misses < evals:
            child = _mutate(rng, here.a, here.b, digits)
            if child in seen:
                misses += 1
                stall += 1
                continue
            misses, pair = 0, visit(*child)
            here, stall = (pair, 0) if pair.margin < here.margin else (here, stall + 1)
    return Hunt(tuple(kept), tuple(flagged), len(seen), out_of_time())
