"""Text primitives for exact values: a readable form of a long rational, and its magnitude.

**Readable forms.** In the fraction system a slot such as ``count`` is a ratio of integers hundreds of digits long
(exp(-1000) and exp(-40), rounded to 50 digits, enter every place value; later slots grow to
thousands of digits). Its decimal expansion is readable only in
pieces: -9.99999999998999999999999957516... is -10 + 10^-11 + 4.2485*10^-17 + ..., and the
pieces are what the construction is made of. ``readable(x)`` peels them off exactly:

- a *clean* term is x rounded to one significant digit, m * 10^e, when the rest is below
  10^-GAP of it (``-10``, ``10^-11``, ``7*10^10``); it is taken and the rest peeled again;
- the first term that is not clean is x rounded to ``sig`` significant digits, and the rest
  r is bounded by the smallest power of ten above it: ``+ r, |r| < 10^-21``.

Every statement it prints is exact: x equals the sum of the terms plus r.

>>> from fractions import Fraction
>>> readable(Fraction(-10) + Fraction(1, 10**11) + Fraction(3, 7 * 10**17))
'-10 + 10^-11 + 4.2857*10^-18 + r, |r| < 10^-22'
>>> readable(Fraction(1, 10) + Fraction(1, 10**12))
'0.1 + 10^-12'
>>> readable(Fraction(7800137102346, 1000)) is None    # no clean term: nothing to gain
True
>>> readable(0.1 + 10 ** -12)                          # a float, exactly
'0.1 + 10^-12 + 1.1185*10^-17 + r, |r| < 10^-22'

**Figures and brief forms.** ``figure(q)`` is q to three significant digits, plain between
0.001 and 10^5, else in e-notation; ``brief(x)`` is what a repr shows of an exact value: the
value itself when short, else its readable form or ``~`` and 12 significant digits, never the
thousands of digits of its numerator (``show.rational_text`` gives those on request):

>>> figure(Fraction(11923, 100)), figure(274205), figure(-60), figure(Fraction(1, 3 * 10 ** 8))
('119', '2.74e5', '-60', '3.33e-9')
>>> brief(Fraction(69, 200)), brief(Fraction(10 ** 600 + 3, 10 ** 590))
('Fraction(69, 200)', '<10^10 + 3*10^-590>')
>>> brief(Fraction(7 * 10 ** 700 + 1, 3 * 10 ** 690))
'<~2.33333333333*10^10>'

**Magnitudes.** log10 |x| from a value's own digits, and a float that may underflow to 0
without losing the magnitude. A softmax1 weight such as e^-1000 * 10^-23 is a Fraction with thousand-digit numerator and
denominator; ``float()`` of it is 0.0, but its log10 is an ordinary number:

>>> x = Fraction(3, 10 ** 460)
>>> to_float(x), round(log10_abs(x), 9)
(0.0, -459.522878745)
"""

from decimal import Decimal
from fractions import Fraction
import math

GAP = 4      # a term is clean when the rest is more than 10^GAP times smaller
SIG = 5      # significant digits of the last, not clean, term
PLAIN = 3    # powers of ten from 10^-PLAIN to 10^PLAIN print as plain decimals


def exponent(q):
    """floor(log10 q) for a positive rational q, in integer arithmetic."""
    q = Fraction(q)
    k = (q.numerator.bit_length() - q.denominator.bit_length()) * 30103 // 100000
    while Fraction(10) ** k > q:
        k -= 1
    while Fraction(10) ** (k + 1) <= q:
        k += 1
    return k


def round_sig(x, sig):
    """(m, e) with m an integer of at most ``sig`` digits and m * 10^e nearest x (x != 0)."""
    e = exponent(abs(x)) - sig + 1
    m = round(x / Fraction(10) ** e)
    if abs(m) >= 10 ** sig:       # 9.99995 rounded up to 10.000: one digit fewer
        m, e = round(Fraction(m, 10)), e + 1
    while m and m % 10 == 0:      # 7000 * 10^7 -> 7 * 10^10
        m, e = m // 10, e + 1
    return m, e


def power_text(e):
    """10^e as text: plain for small e ('0.01', '100'), else '10^-11'."""
    if -PLAIN <= e <= PLAIN:
        return str(10 ** e) if e >= 0 else "0." + "0" * (-e - 1) + "1"
    return f"10^{e}"


def term_text(m, e):
    """|m| * 10^e as text, m a non-zero integer."""
    m = abs(m)
    if m == 1:
        return power_text(e)
    digits = str(m)
    point = len(digits) - 1      # m * 10^e = d.ddd * 10^(e + point)
    top = e + point
    if -PLAIN <= top <= PLAIN + 2:
        whole = Fraction(m) * Fraction(10) ** e
        places = max(0, -e)
        text = f"{whole.numerator * 10 ** places // whole.denominator:0{places + 1}d}"
        return text if not places else f"{text[:-places]}.{text[-places:]}"
    mantissa = digits if len(digits) == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{mantissa}*{power_text(top)}"


def terms(x, sig=SIG, gap=GAP, most=4):
    """([(m, e), ...], rest): x = sum m * 10^e + rest, leading clean terms first."""
    x = Fraction(x)
    out, rest = [], x
    while rest and len(out) < most:
        m, e = round_sig(rest, 1)
        t = m * Fraction(10) ** e
        if abs(rest - t) * 10 ** gap < abs(t):
            out.append((m, e))
            rest -= t
            continue
        m, e = round_sig(rest, sig)
        out.append((m, e))
        rest -= m * Fraction(10) ** e
        break
    return out, rest


def readable(x, sig=SIG):
    """Leading terms of x and a bound on the rest, or None when there is only one term (x
    rounded to ``sig`` digits, or x itself, say as much)."""
    found, rest = terms(x, sig)
    if len(found) < 2:
        return None
    text = ""
    for k, (m, e) in enumerate(found):
        sign = "-" if m < 0 else ("" if k == 0 else "+")
        body = term_text(m, e)
        text += (f"-{body}" if sign == "-" else body) if k == 0 else f" {sign} {body}"
    if rest:
        text += f" + r, |r| < {power_text(exponent(abs(rest)) + 1)}"
    return text


def figure(q, sig=3, power=False):
    """q to ``sig`` significant digits as ASCII text: plain for 0.001 <= |q| < 10^5
    ('119', '0.991'), else mantissa and exponent ('2.74e5', '-4e10'); with ``power``, the
    explorer page's notation: plain below 10^4, else m·10^e ('7.42·10^4', '10^7'), and a
    rounded plain value keeps its ``sig`` digits ('0.0800' for 0.079999, '1' for 1)."""
    q = Fraction(q)
    if not q:
        return "0"
    m, e = round_sig(q, sig)
    digits = str(abs(m))
    top = e + len(digits) - 1
    sign = "-" if m < 0 else ""
    if -3 <= top < (4 if power else 5):
        if power and m * Fraction(10) ** e != q:  # rounded: its trailing zeros are digits
            pad = sig - len(digits)
            m, e = m * 10 ** pad, e - pad
        return sign + term_text(m, e)
    point = f"{digits[0]}.{digits[1:]}" if digits[1:] else digits
    if power:
        return f"{sign}{'' if digits == '1' else point + '·'}10^{top}"
    return f"{sign}{point}e{top}"


def brief(x, sig=12):
    """An exact value for a repr: ``repr(x)`` when short, else ``<its readable form>`` or
    ``<~x to sig digits>``."""
    if not isinstance(x, Fraction) or (x.numerator.bit_length() + x.denominator.bit_length()
                                       <= 128):
        return repr(x)
    form = readable(x)
    if form is None:
        m, e = round_sig(x, sig)
        form = "~" + (term_text(m, e) if m > 0 else "-" + term_text(m, e))
    return f"<{form}>"


LOG10_2 = math.log10(2)


def _log10_int(n):
    """log10 of a positive int of any size: its top 60 bits as a float, plus the shift."""
    shift = max(0, n.bit_length() - 60)
    return math.log10(n >> shift) + shift * LOG10_2


def log10_abs(x):
    """log10 |x| of a non-zero value from its exact digits (None for zero).

    A Fraction n/d gives log10 n - log10 d from the integers themselves; a Decimal its digits
    and exponent; a float math.log10. Absolute error about 10^-13 for any size of x.
    """
    if x == 0:
        return None
    if isinstance(x, Fraction):
        return _log10_int(abs(x.numerator)) - _log10_int(x.denominator)
    if isinstance(x, Decimal):
        _, digits, exponent = x.as_tuple()
        return _log10_int(int("".join(map(str, digits)))) + exponent
    if isinstance(x, int):
        return _log10_int(abs(x))
    if hasattr(x, "significant"):  # a Multiscale: its digits, read off its enclosures
        return log10_abs(x.significant(17))
    return math.log10(abs(x))


def finite(x):
    """Whether a value is a number: a float system's overflow gives inf, then nan."""
    return not isinstance(x, float) or math.isfinite(x)


def to_float(x):
    """x as a double: 0.0 below the range (the log10 still holds it), +-inf above."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf
