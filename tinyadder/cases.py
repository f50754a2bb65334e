"""AdderBoard's test cases: its 10 edge cases, then pairs drawn as its verify.py draws them."""

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


def random_pairs(n, seed=SEED, digits=10):
    """n pairs from random.Random(seed), two randint(0, 10**digits - 1) calls per pair."""
    rng = random.Random(seed)
    top = 10 ** digits - 1
    return [(rng.randint(0, top), rng.randint(0, top)) for _ in range(n)]


def verify_cases(n_random=10_000, seed=SEED):
    """AdderBoard's list: the edge cases followed by n_random seeded pairs."""
    return list(EDGE_CASES) + random_pairs(n_random, seed)
