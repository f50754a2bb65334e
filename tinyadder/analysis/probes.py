"""Semantic probes: what each slot of TinyAdder-36 is meant to hold, computed from a and b.

The intended values follow the spec (docs/spec.md):

- embedding: eq, special, digit = 10 d, from the intended tokens (a, b and a + b's digits);
- layer 0 attention: count_i = the place value of position i's digit, scaled: 10^-i on a's
  digits, 10^(11-i) on b's, -10^(23-i) on the sum's (which the running sum subtracts), plus
  the spec's smaller terms from the other special tokens; scale_i = 1/(i+2) from '=' on,
  else 0;
- layer 0 FFN: digit_pos_i = digit_i * 10^N * count_i (a digit times its place value, times
  10), cand_u = (u + 1/2) * 100 * 10^N * count_i * scale_i;
- layer 1 attention: every slot gains avg_i = (100 * sum_{j<=i} digit_pos_j + r (i+1)) / (i+2),
  r the rounding bias: from '=' on this is (1000 (remaining value) + r (i+1)) / (i+2), the
  layer-1 average tracking 10 (a + b) minus what was emitted, at the scale 1000/(i+2) a unit;
- layer 1 FFN: err_u = 10^6 |cand_u| lands in the slot the readout reads for digit u;
- readout: the winning digit is a + b's digit for the next position.

Each intended value carries the construction's own error bound (``slack``: relative 10^-15
for values built on count, whose error is about e^-40 relative); the number system adds
its own (``eps`` times the magnitude of the operands). ``check`` reports the first departure
in generation order: by position, then by stage, then by slot.

>>> from tinyadder import build
>>> from tinyadder import run_with_cache
>>> _, cache = run_with_cache(build("published"), "5193798811+1806201129")
>>> print(check(cache, 5193798811, 1806201129).verdict())  # doctest: +NORMALIZE_WHITESPACE
check: first departure at position 23, readout: the model picks '7', intended '6'
(a + b = 6999999940)
"""

from dataclasses import dataclass
from fractions import Fraction
import math

from ..addition import text as addition_text
from ..cache import stages
from ..construction import DIGITS, constants
from ..generate import argmax
from ..numbers import DecimalSystem, Float32System, FloatSystem, FractionSystem
from .show import fmt
from .text import finite

# count's relative error is about e^-40 (the softmax1 '1' dominates its denominator)
CONSTRUCTION_SLACK = Fraction(1, 10 ** 15)


def construction_slack(digits=DIGITS):
    """count's relative error bound at N digits: (10/9)(e^special_key + e^digit_key) <=
    2 * 10^-k with 10^k <= e^-special_key (docs/digits.md, bound 2); CONSTRUCTION_SLACK
    when that is larger (N >= 9)."""
    k = int(-constants(digits)["special_key"] / math.log(10))
    return max(CONSTRUCTION_SLACK, 2 * Fraction(1, 10 ** k))
READOUT = "unembed.hook_out"


def eps(ns):
    """Relative error a number system may add over one forward pass (about 40 roundings)."""
    if isinstance(ns, FractionSystem):
        return Fraction(1, 10 ** (ns.exp_digits - 5))
    if isinstance(ns, DecimalSystem):
        return 40 * Fraction(1, 10 ** (ns.digits - 1))
    if isinstance(ns, Float32System):
        return 40 * Fraction(1, 2 ** 23)
    if isinstance(ns, FloatSystem):
        return 40 * Fraction(1, 2 ** 52)
    raise TypeError(f"unknown number system {ns!r}")


@dataclass(frozen=True)
class Intent:
    """A slot's intended value, the construction's error bound and the operands' magnitude."""

    value: Fraction
    slack: Fraction
    magnitude: Fraction

    def __add__(self, other):
        return Intent(self.value + other.value, self.slack + other.slack,
                      self.magnitude + other.magnitude)


def exact(value):
    return Intent(Fraction(value), Fraction(0), abs(Fraction(value)))


def approx(value, slack=CONSTRUCTION_SLACK):
    value = Fraction(value)
    return Intent(value, abs(value) * slack, abs(value))


def intended_tokens(vocab, a, b, digits=DIGITS):
    """The sequence the model should produce: <bos> a + b = (a + b), zero-padded."""
    text = addition_text(a, b, a + b, digits)
    return ["<bos>", *text]


def counts(digits=DIGITS):
    """The count slot per position: the place value of the position's digit, scaled, plus
    the smaller terms of the other special tokens (spec, for N = 10):
    count_i = 10^-i + [i >= N+1] 10^(N+1-i) - [i >= 2N+2] 10^(2N+3-i)."""
    n, ten = digits, Fraction(10)
    plus, eq = n + 1, 2 * n + 2  # positions of '+' and '='
    return [ten ** -i + (i >= plus) * ten ** (plus - i) - (i >= eq) * ten ** (eq + 1 - i)
            for i in range(3 * n + 4)]


def intended(model, a, b, digits=DIGITS):
    """{stage name: [{slot: Intent} per position]} and the intended tokens."""
    c = constants(digits)
    slack = construction_slack(digits)
    tokens = intended_tokens(model.vocab, a, b, digits)
    count = counts(digits)
    eq_pos = tokens.index("=")
    names = [s.name for s in stages(model)]
    rows = {name: [] for name in names}
    for i, token in enumerate(tokens):
        embed = {s: exact(0) for s in model.slots[:model.width_embed]}
        embed["eq"] = exact(token == "=")
        embed["special"] = exact(token in ("=", "<bos>", "<eos>", "+"))
        embed["digit"] = exact(10 * int(token) if token.isdigit() else 0)
        mid0 = dict(embed)
        mid0["count"] = approx(count[i], slack)
        mid0["scale"] = exact(Fraction(1, i + 2) if i >= eq_pos else 0)
        post0 = dict(mid0)
        for u in range(10):
            post0[f"cand{u}"] = approx((u + Fraction(1, 2)) * 100 * c["place"] * count[i]
                                       * mid0["scale"].value, slack)
        post0["digit_pos"] = approx(embed["digit"].value * c["place"] * count[i], slack)
        rows[names[0]].append(embed)
        rows[names[1]].append(mid0)
        rows[names[2]].append(post0)
    # layer 1: the running average (the slack of a sum is the sum of the slacks), then err_u
    # into the slot the readout reads for digit u
    total = exact(0)
    readout = {slot: u for u, slot in enumerate(model.readout[str(u)] for u in range(10))}
    for i in range(len(tokens)):
        post0 = rows[names[2]][i]
        total = total + Intent(100 * post0["digit_pos"].value, 100 * post0["digit_pos"].slack,
                               100 * post0["digit_pos"].magnitude)
        bias = c["round_bias"] * (i + 1)
        avg = Intent((total.value + bias) / (i + 2), total.slack / (i + 2),
                     (total.magnitude + bias) / (i + 2))
        mid1 = {s: post0[s] + avg for s in post0}
        post1 = dict(mid1)
        for s in model.slots[len(post0):]:
            post1[s] = exact(0)
        for slot, u in readout.items():
            cand = mid1[f"cand{u}"]
            post1[slot] = post1[slot] + Intent(10 ** 6 * abs(cand.value), 10 ** 6 * cand.slack,
                                               10 ** 6 * cand.magnitude)
        rows[names[3]].append(mid1)
        rows[names[4]].append(post1)
    return rows, tokens


@dataclass(frozen=True)
class Departure:
    pos: int
    stage: str      # trace point name; READOUT for the winning digit
    slot: str       # slot name; the winning token for READOUT
    actual: object
    intended: object
    tolerance: Fraction


class Check:
    """The probes' verdict on one cached run."""

    def __init__(self, cache, a, b, departures, checked):
        self.cache, self.a, self.b = cache, a, b
        self.departures = departures
        self.checked = checked

    @property
    def first(self):
        return self.departures[0] if self.departures else None

    def departures_at(self, pos, stage):
        return {d.slot for d in self.departures if (d.pos, d.stage) == (pos, stage)}

    def intended_winner(self, pos):
        hits = [d for d in self.departures if (d.pos, d.stage) == (pos, READOUT)]
        return hits[0].intended if hits else None

    def verdict(self):
        d = self.first
        if d is None:
            return (f"check: all {self.checked} probed values within tolerance of their "
                    f"intended values; every readout picks a + b's digit")
        if d.stage == READOUT:
            return (f"check: first departure at position {d.pos}, readout: the model picks "
                    f"{d.actual!r}, intended {d.intended!r} (a + b = {self.a + self.b})")
        label = {s.name: s.label for s in stages(self.cache.model)}[d.stage]
        return (f"check: first departure at position {d.pos}, {label} ({d.stage}), slot "
                f"{d.slot}: {fmt(d.actual)}, intended {fmt(d.intended)} +- "
                f"{fmt(d.tolerance)}")


def overflow(cache):
    """Where a float run first overflowed, in words ('blocks.0.hook_resid_mid count is nan at
    position 0', in trace order), or None when every value of the trace is finite."""
    for name, rows in cache.items():
        square = name.endswith(("hook_attn_scores", "hook_pattern"))
        labels = cache.labels(name)
        for k, grid in enumerate(rows if square else [rows]):
            for pos, row in enumerate(grid):
                for j, value in enumerate(row):
                    if value is not None and not finite(value):
                        where = f"{labels[k]} from {pos} to {j}" if square else labels[j]
                        at = "" if square else f" at position {pos}"
                        return f"{name} {where} is {value!r}{at}"
    return None


def check(cache, a, b, digits=DIGITS):
    """Compare every slot at every stage and position, and every readout, with its intent; a
    value that is not finite (a float overflow) departs from every intent."""
    rows, tokens = intended(cache.model, a, b, digits)
    e = eps(cache.ns)
    order = [s.name for s in stages(cache.model)]
    departures, checked = [], 0
    readout_tokens = cache.labels(READOUT)
    for pos in range(len(cache.tokens)):
        for name in order:
            for slot, value in cache.view(name, pos).items():
                want = rows[name][pos][slot]
                tolerance = want.slack + e * want.magnitude
                checked += 1
                if not finite(value) or abs(Fraction(value) - want.value) > tolerance:
                    departures.append(Departure(pos, name, slot, value, want.value, tolerance))
        if pos in cache.predicting:
            got = readout_tokens[argmax(cache["logits"][pos])]
            checked += 1
            if got != tokens[pos + 1]:
                departures.append(Departure(pos, READOUT, got, got, tokens[pos + 1], 0))
    return Check(cache, a, b, departures, checked)
