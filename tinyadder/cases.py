"""Test cases: AdderBoard's protocol, and two seeded suites aimed at carries.

Every generator takes ``digits`` (the operand length N) and draws from its own
``random.Random(seed)``, so a suite is the same list on every machine and Python version.
"""

import random

EDGE_CASES = (
    (0, 0), (0, 1), (9_999_999_999, 0), (9_999_999_999, 1),
    (9_999_999_999, 9_999_999_999), (5_000_000_000, 5_000_000_000),
    (1_111_111_111, 8_888_888_889), (1_234_567_890, 9_876_543_210),
    (9_999_999_999, 9_999_999_999), (1, 9_999_999_999),
)

SEED = 2025


def edge_cases(digits=10):
    """AdderBoard's edge cases for N-digit operands: 0, 1, all nines, halves, carry chains.

    >>> edge_cases(10) == EDGE_CASES
    True
    >>> edge_cases(3)
    ((0, 0), (0, 1), (999, 0), (999, 1), (999, 999), (500, 500), (111, 889), (123, 987), (999, 999), (1, 999))
    """
    nines = 10 ** digits - 1
    ones = nines // 9
    half = 5 * 10 ** (digits - 1)
    rising = int(("1234567890" * (digits // 10 + 1))[:digits])
    falling = int(("9876543210" * (digits // 10 + 1))[:digits])
    return ((0, 0), (0, 1), (nines, 0), (nines, 1), (nines, nines), (half, half),
            (ones, nines - ones + 1), (rising, falling), (nines, nines), (1, nines))


# The published model's documented counterexample (spec: the readout flaw).
COUNTEREXAMPLE = (5193798811, 1806201129)

# g in 10^m - g: where the published readout's tilt can beat the true digit (a few hundred
# units below a carry into column m), spaced roughly logarithmically.
CARRY_GAPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def random_pairs(n, seed=SEED, digits=10):
    """n pairs from random.Random(seed), two randint(0, 10**digits - 1) calls per pair."""
    rng = random.Random(seed)
    top = 10 ** digits - 1
    return [(rng.randint(0, top), rng.randint(0, top)) for _ in range(n)]


def adderboard_suite(n_random=10_000, seed=SEED, digits=10):
    """AdderBoard's verify.py cases as named groups: {'edge cases': ..., 'random pairs': ...}."""
    return {"edge cases": list(edge_cases(digits)),
            "random pairs": random_pairs(n_random, seed, digits)}


def verify_cases(n_random=10_000, seed=SEED):
    """AdderBoard's list in order: the edge cases followed by n_random seeded pairs."""
    return [pair for group in adderboard_suite(n_random, seed).values() for pair in group]


def carry_pairs(per_cell, seed=SEED, digits=10, gaps=CARRY_GAPS):
    """{(m, g): pairs} whose low m digit columns sum to exactly 10^m - g (no carry out of them).

    For m = 1..digits and each gap g < 10^m: the low parts are la = randint(0, 10^m - g) and
    lb = 10^m - g - la; the high parts ha, hb are randint(0, 10^(digits-m) - 1) each (drawn
    in the order la, ha, hb); a = ha * 10^m + la, b = hb * 10^m + lb.
    """
    rng = random.Random(seed)
    cells = {}
    for m in range(1, digits + 1):
        top_high = 10 ** (digits - m) - 1
        for g in gaps:
            if g >= 10 ** m:
                continue
            low = 10 ** m - g
            pairs = []
            for _ in range(per_cell):
                la = rng.randint(0, low)
                ha, hb = rng.randint(0, top_high), rng.randint(0, top_high)
                pairs.append((ha * 10 ** m + la, hb * 10 ** m + low - la))
            cells[m, g] = pairs
    return cells


def _number(columns):
    """The integer whose digit in column c (units = column 0) is columns[c]."""
    return sum(d * 10 ** c for c, d in enumerate(columns))


def _alternating(two, digits):
    """The digits-long number reading two[0] two[1] two[0] ... from the most significant end."""
    return int("".join(two[c % 2] for c in range(digits)))


def _column(rng, low, high):
    """A digit pair (x, y) with low <= x + y <= high, uniform over such pairs."""
    pairs = [(x, y) for x in range(10) for y in range(10) if low <= x + y <= high]
    return rng.choice(pairs)


def chain_pair(rng, length, start, digits=10):
    """A pair with exactly one carry chain: column ``start`` generates a carry (digit sum
    >= 10), the next ``length - 1`` columns pass it on (sum 9), every other column sums to
    at most 8. So exactly ``length`` columns send a carry on, the last into column
    ``start + length`` (the sum's extra digit when that is ``digits``)."""
    a, b = [], []
    for c in range(digits):
        if c == start:
            x, y = _column(rng, 10, 18)
        elif start < c < start + length:
            x, y = _column(rng, 9, 9)
        else:
            x, y = _column(rng, 0, 8)
        a.append(x)
        b.append(y)
    return _number(a), _number(b)


def edge_suite(per_chain=1, seed=SEED, digits=10):
    """Structured extremes as named groups; chains get ``per_chain`` seeded draws per start.

    all nines / all zeros: the extreme operands; alternating carries: columns that carry and
    do not carry in turn, or carry by generating and by propagating in turn; carry chain L:
    every start column of a single chain of L carrying columns (see ``chain_pair``).
    """
    nines = 10 ** digits - 1
    groups = {
        "all nines": [(nines, nines), (nines, 0), (0, nines), (nines, 1), (1, nines)],
        "all zeros": [(0, 0), (0, 1), (1, 0)],
        "alternating carries": [
            tuple(_alternating(two, digits) for two in pair)
            for pair in (("50", "50"), ("05", "05"), ("45", "55"), ("54", "55"))],
    }
    rng = random.Random(seed)
    for length in range(1, digits + 1):
        groups[f"carry chain {length}"] = [
            chain_pair(rng, length, start, digits)
            for start in range(digits - length + 1) for _ in range(per_chain)]
    return groups
