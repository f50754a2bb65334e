"""The readable exact form (analysis.text) and where --step shows it."""

from fractions import Fraction
import io

import pytest

from explore_cases import exact_run
from tinyadder.analysis.text import exponent, readable, terms
from tinyadder.analysis.step import session

TEN = Fraction(10)


@pytest.mark.parametrize("q, k", [(Fraction(1), 0), (Fraction(999, 100), 0), (TEN, 1),
                                  (Fraction(1, 10), -1), (Fraction(99, 1000), -2),
                                  (TEN ** -500 * 7, -500), (TEN ** 300 - 1, 299)])
def test_exponent_is_floor_log10(q, k):
    assert exponent(q) == k


@pytest.mark.parametrize("x", [
    Fraction(-10) + TEN ** -11 + Fraction(3, 7) * TEN ** -17,
    Fraction(7, 3), Fraction(-1, 3) * TEN ** 40, TEN ** 10 * 7 - Fraction(1, 3) * TEN ** -8,
    Fraction(123456789, 1000), Fraction(-1), Fraction(99999, 100000)])
def test_terms_and_rest_add_up_exactly(x):
    found, rest = terms(x)
    assert sum(m * TEN ** e for m, e in found) + rest == x


def test_count_at_equals_reads_as_its_terms():
    # count at '=' is (-10 + 10^-11 + 10^-22) / (1 + e^-40 (1 + 10^-11 + 10^-22) + ...):
    # the next term after -10 + 10^-11 is 10 e^-40 = 4.2484e-17, not the 10^-22
    _, cache = exact_run("7650676663+0149460439")
    count = cache.view("blocks.0.hook_resid_mid", 22)["count"]
    assert len(str(count.numerator)) > 500
    assert readable(count) == "-10 + 10^-11 + 4.2484*10^-17 + r, |r| < 10^-21"
    assert abs(count - (-10 + TEN ** -11 + Fraction(42484, 10 ** 21))) < TEN ** -21
    assert readable(cache.view("blocks.0.hook_resid_mid", 15)["count"]) == \
        "10^-4 + 10^-15 - 4.2484*10^-26 + r, |r| < 10^-30"


def test_readable_is_none_when_it_would_say_no_more():
    assert readable(Fraction(1, 24)) is None          # one term: the rounded value says it
    assert readable(Fraction(70)) is None              # the value itself
    assert readable(Fraction(0)) is None
    assert readable(Fraction(1, 10) + TEN ** -12) == "0.1 + 10^-12"


def test_step_prints_a_long_slot_readably():
    """A long exact value prints readably, with its size; its digits only on request."""
    _, cache = exact_run("7650676663+0149460439")
    out = io.StringIO()
    session(cache, io.StringIO("n\ns count\ns count exact\nq\n"), out, positions=[22],
            slots=["count"])
    text = out.getvalue()
    count = cache.view("blocks.0.hook_resid_mid", 22)["count"]
    sizes = [len(str(abs(count.numerator))), len(str(count.denominator))]
    assert ("(step) s count\ncount ~ -10.0000\n"
            "readably: -10 + 10^-11 + 4.2484*10^-17 + r, |r| < 10^-21\n"
            f"exactly: a ratio of integers of {sizes[0]} and {sizes[1]} digits\n"
            "  ('s count exact' prints every digit)\n(step) s count exact\n") in text
    exact = text.split("(step) s count exact\ncount ~ -10.0000, exactly:\n")[1].splitlines()[0]
    assert Fraction(exact) == count


@pytest.mark.parametrize("x", [
    Fraction(5, 2), Fraction(-1234565, 10 ** 7), Fraction(1234575, 10 ** 7),  # ties: to even
    Fraction(9999995, 10), Fraction(-9999995, 10 ** 9),  # rounded up to a power of ten
    Fraction(120), -10 ** 30, 10 ** 30 + 1, Fraction(1, 3), Fraction(2, 3) * 10 ** -40,
    Fraction(7 ** 5000 + 1, 3 ** 9000), -Fraction(2 ** 15000 + 1, 3 ** 500)])  # long
def test_rounded_is_decimal_division_at_the_precision(x):
    """show.rounded works in integers; its text is that of Decimal(n) / Decimal(d) at the
    precision (half to even), exact quotients and long rationals included."""
    from decimal import Decimal, localcontext
    from tinyadder.analysis.show import rounded
    x = Fraction(x)
    for sig in (1, 3, 6):
        with localcontext() as ctx:
            ctx.prec = sig
            want = format(Decimal(x.numerator) / Decimal(x.denominator), f".{sig}g")
        assert rounded(x, sig) == want
