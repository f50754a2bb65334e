"""exact.Rational: deferred sums are the same rationals; comparisons are exact decisions."""

from fractions import Fraction
import random

import pytest

from tinyadder import exact
from tinyadder.exact import Rational, lift


@pytest.fixture(params=[8192, 8], ids=["default", "always-lazy"])
def limit(request, monkeypatch):
    monkeypatch.setattr(exact, "LIMIT", request.param)
    return request.param


def random_fraction(rng):
    return Fraction(rng.randint(-10 ** 30, 10 ** 30), rng.randint(1, 10 ** rng.randint(1, 600)))


def test_arithmetic_is_exact(limit):
    rng = random.Random(5)
    for _ in range(200):
        xs = [random_fraction(rng) for _ in range(4)]
        a, b, c, d = (lift(x) for x in xs)
        small = Fraction(rng.randint(-99, 99), rng.randint(1, 99)) or Fraction(1)
        got = [a + b, a - c, (a + b) * small, (a + d) / small, -(b + c), 3 - a, a * b,
               (a + b) * (c + d), (a + b) / (c + 1)]
        want = [xs[0] + xs[1], xs[0] - xs[2], (xs[0] + xs[1]) * small,
                (xs[0] + xs[3]) / small, -(xs[1] + xs[2]), 3 - xs[0], xs[0] * xs[1],
                (xs[0] + xs[1]) * (xs[2] + xs[3]), (xs[0] + xs[1]) / (xs[2] + 1)]
        assert [g.fraction() for g in got] == want
        others = [(a, xs[0]), (b + c, xs[1] + xs[2])]
        for g, w in zip(got, want):
            for o, other in others:
                assert (g < o, g > o, g <= o, g >= o) == (w < other, w > other, w <= other,
                                                          w >= other)


def test_laziness_shows_only_in_the_representation(limit):
    total, want = lift(0), Fraction(0)
    for n in range(1, 40):  # terms with a different, big denominator each: a growing sum
        term = Fraction(n, 7 ** 300 + n)
        total, want = total + term, want + term
    assert total.plain is None  # 39 coprime 843-bit denominators exceed either limit
    assert total == want and total.fraction() == want and type(total.fraction()) is Fraction


def test_ties_and_differences_beyond_every_scale(limit):
    x = lift(Fraction(1, 3)) + lift(Fraction(1, 7 ** 400))
    same = lift(Fraction(1, 7 ** 400)) + lift(Fraction(1, 3))
    tiny = x + lift(Fraction(1, 2 ** 5000))  # below the last approximation scale 2^-4096
    assert x == same and not x < same and not x > same and x <= same and x >= same
    assert tiny > x and x < tiny and tiny != x
    assert (x - same) == 0 and not (x - same) > 0 and not (x - same) and bool(tiny - x)


def test_comparison_with_plain_numbers():
    x = lift(Fraction(10 ** 20, 3)) + lift(Fraction(1, 11 ** 500))
    assert x > 0 and 0 < x and x > Fraction(10 ** 20, 3) and x == x
    assert -x < 0 and lift(2) == 2 and lift(Fraction(1, 2)) == Fraction(1, 2)
