"""pi, sin, cos and erf of a rational, e^n and ln n of an integer, at any precision, as
certified enclosures, and the values the elementary functions take exactly at rational
arguments.

``pi(bits)``, ``sin(x, bits)``, ``cos(x, bits)`` and ``erf(x, bits)`` return (lo, hi),
Fractions with lo <= f(x) <= hi and hi - lo of about 2^-bits; ``exp_integer(n, bits)`` the
same for e^n, n an integer, with hi - lo < 2^-bits lo (relative: e^n spans any size), and
``ln_integer(n, bits)`` for ln n, n >= 1 an integer. Each sums a series in fixed
point: a real v is held as an integer V ~ v 2^P (P bits after the point), every step is
integer arithmetic with one floor division, and the error of every step is carried beside it
as an integer bound rounded up (:func:`_alternating`). Nothing is estimated: the bound is
proved term by term, for every argument and precision.

>>> lo, hi = pi(64)
>>> lo < Fraction("3.14159265358979323846264338327950288") < hi, hi - lo < Fraction(1, 2 ** 64)
(True, True)
>>> lo, hi = exp_integer(-1, 64)
>>> lo < Fraction("0.367879441171442321595523770161460867") < hi, hi - lo < lo / 2 ** 64
(True, True)
>>> lo, hi = ln_integer(10, 64)
>>> lo < Fraction("2.30258509299404568401799145468436421") < hi, hi - lo < Fraction(1, 2 ** 64)
(True, True)
>>> sin(0, 64), exact_value("sqrt", Fraction(9, 4)), exact_value("sqrt", 2)
((Fraction(0, 1), Fraction(0, 1)), Fraction(3, 2), None)
"""

from fractions import Fraction
from functools import lru_cache
from math import isqrt


def exact_value(op, x):
    """op(x) for a rational x where it is rational, else None: exp(0) = 1, ln(1) = 0,
    sin(0) = erf(0) = 0, cos(0) = 1, sqrt(p^2/q^2) = p/q.

    Every other value is irrational: e^x, sin x and cos x for rational x != 0 and ln x for
    rational x != 1 (Lindemann-Weierstrass), sqrt x for x not a square; erf x for x != 0 is
    taken as irrational (it is rounded). sqrt and ln outside their domain raise ValueError.
    """
    x = Fraction(x)
    if op == "sqrt":
        if x < 0:
            raise ValueError(f"sqrt({x}): the square root of a negative number")
        if not (_may_be_square(x.numerator) and _may_be_square(x.denominator)):
            return None
        p, q = isqrt(x.numerator), isqrt(x.denominator)
        return Fraction(p, q) if p * p == x.numerator and q * q == x.denominator else None
    if op == "ln":
        if x <= 0:
            raise ValueError(f"ln({x}): the logarithm of a number that is not positive")
        return Fraction(0) if x == 1 else None
    if x != 0:
        return None
    return Fraction(1) if op in ("exp", "cos") else Fraction(0)


_SQUARES = {m: frozenset(i * i % m for i in range(m)) for m in (64, 63, 65, 11)}


def _may_be_square(n):
    """False when n is no square by its residues (cheap; most non-squares fail it)."""
    return all(n % m in squares for m, squares in _SQUARES.items())


def bits(digits):
    """Bits after the point that carry ``digits`` decimal digits of a value near 1."""
    return digits * 3322 // 1000 + 8


def _alternating(first, first_error, factor, steady):
    """(S, E) with |sum_(n >= 0) (-1)^n a_n - S| <= E, in units of 2^-P.

    a_0 is within ``first_error`` of the integer ``first`` >= 0, and a_n = a_(n-1) num/den
    for (num, den) = factor(n), positive integers with num <= den for every n >= ``steady``
    (the terms shrink from there on). A_n = floor(A_(n-1) num/den) is within E_n of a_n, where
    E_n = ceil(E_(n-1) num/den) + 1: the carried error scaled by the same ratio, plus this
    floor's error (< 1). The sum stops at the first n >= steady with A_n = 0: there
    a_n <= E_n, and the omitted tail, an alternating series of shrinking terms, is at most
    a_(n+1) <= a_n <= E_n in size. So E = E_0 + ... + E_n + E_n.
    """
    a, e = first, first_error
    s, total, n = a, e, 0
    while a or n < steady:
        n += 1
        num, den = factor(n)
        a = a * num // den
        e = -(-e * num // den) + 1
        s = s - a if n % 2 else s + a
        total += e
    return s, total + e


def _guard(bits):
    """Guard bits that cover the carried errors: a sum of about ``bits`` terms, each off by a
    few units, is off by less than 2^(bits.bit_length() + 8) units."""
    return bits.bit_length() + 10


def _ends(s, e, p):
    """[(s - e) 2^-p, (s + e) 2^-p] as Fractions."""
    return Fraction(s - e, 1 << p), Fraction(s + e, 1 << p)


@lru_cache(maxsize=64)
def pi(bits):
    """pi in [lo, hi], hi - lo < 2^-bits: Machin's formula pi = 16 atan(1/5) - 4 atan(1/239),
    with atan(1/m) = sum_n (-1)^n / ((2n + 1) m^(2n+1)), whose term ratio is
    (2n - 1) / ((2n + 1) m^2) < 1, and whose first term floor(2^P / m) is off by less than 1."""
    p = bits + _guard(bits)
    total, error = 0, 0
    for weight, m in ((16, 5), (-4, 239)):
        s, e = _alternating((1 << p) // m, 1, lambda n: (2 * n - 1, (2 * n + 1) * m * m), 1)
        total += weight * s
        error += abs(weight) * e
    return _ends(total, error, p)


def exp_integer(n, bits):
    """e^n for an integer n in [lo, hi], hi - lo < 2^-bits lo: e^|n| by squaring e, and
    e^n = 1 / e^|n| for n < 0.

    e = sum_k 1/k! at P bits: T_k = floor(T_(k-1) / k) from T_0 = 2^P, so that
    2^P/k! - 2 < T_k <= 2^P/k! (each floor loses less than 1, the losses shrink by k), and
    the sum stops at the first T_K = 0, where 2^P/K! < 2 and the omitted tail is below 4
    units: e 2^P lies in [S, S + 2K + 4], S = T_0 + ... + T_(K-1), a relative width below
    (K + 2) 2^-P. A product of enclosures [L1, H1] [L2, H2] (ends at 2^-P, every value >= 1)
    is [floor(L1 L2 / 2^P), ceil(H1 H2 / 2^P)]: it adds less than 2^(1-P) to the relative
    width, and a width made before j more squarings grows 2^j-fold. So e^|n| (|n| < 2^b)
    is off by less than 2^b (K + 2) 2^-P from e and 2^(b+3) 2^-P from the products; with
    K < P, P = bits + 2b + (a bound on P's bits) + 12 keeps the whole below 2^-bits.
    """
    m = abs(n)
    if m == 0:
        return Fraction(1), Fraction(1)
    b = m.bit_length()
    p = bits + 2 * b + (bits + 2 * b + 64).bit_length() + 12
    term, total, k = 1 << p, 0, 0
    while term:
        total += term
        k += 1
        term //= k
    lo, hi = (1 << p), (1 << p)  # e^0, then e^(bits of m read from the top)
    e_lo, e_hi = total, total + 2 * k + 4
    for bit in bin(m)[2:]:
        lo, hi = (lo * lo) >> p, -(-(hi * hi) >> p)
        if bit == "1":
            lo, hi = (lo * e_lo) >> p, -(-(hi * e_hi) >> p)
    if n > 0:
        return Fraction(lo, 1 << p), Fraction(hi, 1 << p)
    return Fraction(1 << p, hi), Fraction(1 << p, lo)


def ln_integer(n, bits):
    """ln n for an integer n >= 1 in [lo, hi], hi - lo < 2^-bits: n = 2^k y with 1 <= y < 2,
    ln n = k ln 2 + ln y, ln 2 = 2 atanh(1/3) and ln y = 2 atanh((n - 2^k) / (n + 2^k)), both
    arguments in [0, 1/3] (:func:`_atanh`)."""
    if n == 1:
        return Fraction(0), Fraction(0)
    k = n.bit_length() - 1
    p = bits + _guard(bits) + k.bit_length() + 2
    s2, e2 = _atanh(1, 3, p)
    s, e = _atanh(n - (1 << k), n + (1 << k), p)
    return _ends(2 * (k * s2 + s), 2 * (k * e2 + e), p)


def _atanh(a, b, p):
    """(S, E) with |atanh(a/b) - S 2^-P| <= E 2^-P, 0 <= a/b = t <= 1/3: atanh t = sum_j
    t^(2j+1) / (2j + 1). U_j = floor(U_(j-1) a^2 / b^2) from U_0 = floor(2^P a / b) is within
    2 units of 2^P t^(2j+1) (the carried error shrinks by t^2 <= 1/9 and each floor adds one),
    so floor(U_j / (2j + 1)) is within 3 of its term; the sum stops at the first U_J = 0,
    where 2^P t^(2J+1) < 2, and the terms left out from J on add up to less than
    2 / (1 - t^2) < 3 units. So E = 3 J + 3."""
    u, total, j = (a << p) // b, 0, 0
    square_a, square_b = a * a, b * b
    while u:
        total += u // (2 * j + 1)
        j += 1
        u = u * square_a // square_b
    return total, 3 * j + 3


def sin(x, bits):
    """sin x in [lo, hi] (see :func:`_sine`)."""
    return _sine(Fraction(x), bits, 0)


def cos(x, bits):
    """cos x = sin(x + pi/2) in [lo, hi] (see :func:`_sine`)."""
    return _sine(Fraction(x), bits, 1)


def _sine(x, bits, shift):
    """sin(x + shift pi/2), hi - lo of about 2^-bits.

    Reduction: x = r + k pi/2 with k the nearest integer to 2x/pi, so |r| <= pi/4 + 2^-P,
    with pi enclosed to P + L bits (|x| < 2^L) so that k pi/2 is known to 2^-P. Then
    sin(x + shift pi/2) = +-sin r or +-cos r by (k + shift) mod 4. r is enclosed in
    [r_lo, r_hi]; the series run at rho = floor(r_lo 2^P) / 2^P, within D units of every
    point of it, and sin and cos are 1-Lipschitz, so D units are added to the series' error.
    sin rho = sum (-1)^n rho^(2n+1) / (2n+1)!, cos rho = sum (-1)^n rho^(2n) / (2n)!: term
    ratios rho^2 / (2n (2n + 1)) and rho^2 / ((2n - 1) 2n), at most 1 for n >= 1 as rho^2 < 2.
    """
    if x == 0:
        value = Fraction(shift)  # sin 0 = 0, cos 0 = 1
        return value, value
    p = bits + _guard(bits)
    size = max(0, x.numerator.bit_length() - x.denominator.bit_length() + 2)
    pi_lo, pi_hi = pi(p + size)
    k = round(4 * x / (pi_lo + pi_hi))
    r_lo, r_hi = sorted((x - k * pi_lo / 2, x - k * pi_hi / 2))
    rho = (r_lo.numerator << p) // r_lo.denominator
    drift = -(-(r_hi.numerator << p) // r_hi.denominator) - rho
    square, unit = rho * rho, 1 << (2 * p)
    quarter = (k + shift) % 4
    if quarter % 2 == 0:
        s, e = _alternating(abs(rho), 0, lambda n: (square, unit * (2 * n) * (2 * n + 1)), 1)
        sign = -1 if rho < 0 else 1  # sin is odd
    else:
        s, e = _alternating(1 << p, 0, lambda n: (square, unit * (2 * n - 1) * (2 * n)), 1)
        sign = 1
    if quarter >= 2:
        sign = -sign
    lo, hi = _ends(sign * s, e + drift, p)
    return max(lo, Fraction(-1)), min(hi, Fraction(1))


def erf(x, bits):
    """erf x in [lo, hi], hi - lo of about 2^-bits; erf(-x) = -erf x.

    For a = |x| with a^2 >= 0.7 (bits + 2): erf a in [1 - 2^-(bits+2), 1], since
    erfc a = (2/sqrt pi) int_a^inf e^(-t^2) dt < (2/sqrt pi) int_a^inf (t/a) e^(-t^2) dt
    = e^(-a^2) / (a sqrt pi) < e^(-a^2) <= 2^-(bits+2) (a sqrt pi > 1, 0.7 log2 e > 1).
    Otherwise erf a = (2/sqrt pi) sum_n (-1)^n a^(2n+1) / (n! (2n + 1)), with term ratio
    a^2 (2n - 1) / (n (2n + 1)), at most 1 from n >= a^2 on. The terms grow to about e^(a^2)
    before they shrink, so 1.5 a^2 > a^2 log2 e more guard bits keep the cancellation's
    loss inside the carried bound. The series runs at a' = floor(a 2^P) / 2^P; erf is
    (2/sqrt pi < 2)-Lipschitz, so 2 units of 2^-P cover a - a'.
    """
    x = Fraction(x)
    if x == 0:
        return Fraction(0), Fraction(0)
    a = abs(x)
    if a * a >= Fraction(7, 10) * (bits + 2):
        lo, hi = 1 - Fraction(1, 1 << (bits + 2)), Fraction(1)
    else:
        p = bits + _guard(bits) + int(3 * a * a / 2) + 1
        big = (a.numerator << p) // a.denominator
        square = big * big
        steady = (square >> (2 * p)) + 1
        s, e = _alternating(big, 0, lambda n: (square * (2 * n - 1), (n * (2 * n + 1)) << (2 * p)),
                            steady)
        c_lo, c_hi = _two_over_root_pi(p)
        t_lo, t_hi = _ends(s, e, p)
        slack = Fraction(2, 1 << p)
        lo = max(t_lo * (c_lo if t_lo >= 0 else c_hi) - slack, Fraction(0))
        hi = min(t_hi * c_hi + slack, Fraction(1))
    return (lo, hi) if x > 0 else (-hi, -lo)


@lru_cache(maxsize=64)
def _two_over_root_pi(p):
    """2/sqrt(pi) in [lo, hi]: from pi in [a, b], sqrt a >= isqrt(floor(a 4^p)) / 2^p and
    sqrt b <= (isqrt(ceil(b 4^p)) + 1) / 2^p."""
    a, b = pi(p)
    root_lo = isqrt((a.numerator << (2 * p)) // a.denominator)
    root_hi = isqrt(-(-(b.numerator << (2 * p)) // b.denominator)) + 1
    return Fraction(2 << p, root_hi), Fraction(2 << p, root_lo)
