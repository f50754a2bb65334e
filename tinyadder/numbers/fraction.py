"""The fraction system: exact rationals; every irrational value rounded once and recorded."""

from contextlib import nullcontext
from dataclasses import dataclass
from fractions import Fraction
import math

from ..constants import MARKERS, Expr, ExpTerm, Ln, is_rational, text
from .elementary import exact_value
from .enclosures import enclosure, interval_at
from .multiscale import Multiscale, leaf
from .protocol import (DEFAULT_EXP_DIGITS, EXP_GUARD_DIGITS, MAX_CERTIFIED_DIGITS, Rounding,
                       Undecided, _decimal_context, _decimal_of, _Fits,
                       correctly_rounded)
from .rounding import evaluate


@dataclass(frozen=True)
class LogScore:
    """``rational + ln_coef * ln(base)`` exactly, with an integer ln_coef: an ALiBi slope ln b
    and the attention scores it makes (fraction system only). It adds and subtracts
    rationals and its like, and multiplies by integers (distances); a result with no ln part
    is a plain Fraction, so e^(q k - d ln b) = e^(q k) b^-d stays exact in its ln part.

    Its text, '-40 - 23*ln 10', is what the tracer shows and the JSON trace stores.

    >>> slope = LogScore(Fraction(0), 1, Fraction(10))
    >>> Fraction(-40) - slope * 23
    LogScore(rational=Fraction(-40, 1), ln_coef=-23, base=Fraction(10, 1))
    >>> Fraction(7) - slope * 0
    Fraction(7, 1)
    """

    rational: Fraction
    ln_coef: int
    base: Fraction

    def __str__(self):
        sign = "-" if self.ln_coef < 0 else "+"
        return f"{self.rational} {sign} {abs(self.ln_coef)}*ln {self.base}"

    @staticmethod
    def of(rational, ln_coef, base):
        """The value ``rational + ln_coef * ln(base)``: a Fraction when the ln part is 0."""
        if ln_coef == 0 or base == 1:
            return Fraction(rational)
        return LogScore(Fraction(rational), ln_coef, base)

    def _rational(self, other):
        if isinstance(other, (int, Fraction)) and not isinstance(other, bool):
            return Fraction(other)
        return None

    def __add__(self, other):
        if isinstance(other, LogScore) and other.base == self.base:
            return LogScore.of(self.rational + other.rational, self.ln_coef + other.ln_coef,
                               self.base)
        r = self._rational(other)
        return NotImplemented if r is None else LogScore.of(self.rational + r, self.ln_coef,
                                                            self.base)

    __radd__ = __add__

    def __neg__(self):
        return LogScore.of(-self.rational, -self.ln_coef, self.base)

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented  # only integer multiples keep e^(c ln b) = b^c rational
        return LogScore.of(self.rational * other, self.ln_coef * other, self.base)

    __rmul__ = __mul__

    def scaled(self, f):
        """f times this value for a rational f, when f ln_coef is an integer; else None."""
        c = self.ln_coef * Fraction(f)
        return LogScore.of(self.rational * f, int(c), self.base) if c.denominator == 1 else None


class FractionSystem(_Fits):
    """Exact rationals; every irrational value rounded to ``exp_digits`` digits, once.

    Without ``exp_digits`` it is 50, or a model's precision + 10 after ``fit``. Kept exact:
    rationals, ln b and rational + k ln b (:class:`LogScore`), e^x e^-x = 1 (e^x for x > 0
    is 1 / e^-x) and e^(r + k ln b) = e^r b^k. Rounded, correctly, to ``exp_digits``
    significant digits and recorded in ``roundings``: e^x for a rational x < 0 and sqrt, sin,
    cos, erf at run time, once per argument; a constant (an Expr) that is neither rational nor
    a LogScore, once and as a whole. Its tokens are decided over intervals (``decider``) and
    certified for the real-number model.
    """

    name = "fraction"
    exact = True  # products may be regrouped (forward, rule 5): the values do not change

    def __init__(self, exp_digits=None, picked=""):
        self.explicit = exp_digits is not None
        self.exp_digits = DEFAULT_EXP_DIGITS if exp_digits is None else exp_digits
        self.picked = picked
        self._roundings = {}
        self._decider = None
        self.zero = Fraction(0)
        self.one = Fraction(1)

    def __repr__(self):
        return f"FractionSystem(exp_digits={self.exp_digits})"

    @property
    def spec(self):
        return self.name

    def describe(self):
        why = f"; picked: {self.picked}" if self.picked else ""
        return (f"fraction (exact; e^x rounded to {self.exp_digits} digits once per "
                f"argument x{why})")

    def _at(self, need):
        digits = need.digits + EXP_GUARD_DIGITS
        why = f"{EXP_GUARD_DIGITS} more than the model's precision, {need.why}"
        return FractionSystem(digits, picked=why if digits != DEFAULT_EXP_DIGITS else "")

    @property
    def roundings(self):
        """Every value this system has rounded, in the order it first did so."""
        return list(self._roundings.values())

    def arithmetic(self):
        return nullcontext()

    def const(self, c):
        """A constant: exact where it is rational or a LogScore; e^x of an exact argument as
        :meth:`exp` takes it (so that e^x e^-x = 1); any other Expr rounded once as a whole."""
        if isinstance(c, ExpTerm):
            return c.coef * self.exp(c.power)
        value = exact(c)
        if value is not None:
            return value
        if c.op == "exp":
            argument = exact(c.args[0])
            if argument is not None:
                return self.exp(argument)
        hit = self._roundings.get(c)
        if hit is None:
            hit = self._round(c, text(c), lambda ns: evaluate(ns, c))
        return hit.value

    slope = const  # ln b is the LogScore 0 + 1 ln b

    def exp(self, x):
        """e**x: exactly 1 for x == 0; for x < 0 correctly rounded to exp_digits digits (once
        per x, memoised, recorded); for x > 0 exactly 1 / e**-x; e^(r + c ln b) = e^r b^c."""
        if isinstance(x, LogScore):
            return self.exp(x.rational) * x.base ** x.ln_coef
        x = x if isinstance(x, Multiscale) else Fraction(x)
        if x > 0:
            return 1 / self.exp(-x)
        return self._function("exp", x)

    def ln(self, x):
        """ln x: of a rational x > 0 exact, the LogScore 0 + 1 ln x; of a LogScore, rounded."""
        return self._function("ln", x) if isinstance(x, LogScore) else exact(Expr("ln", (x,)))

    def sqrt(self, x):
        return self._function("sqrt", x)

    def sin(self, x):
        return self._function("sin", x)

    def cos(self, x):
        return self._function("cos", x)

    def erf(self, x):
        return self._function("erf", x)

    def _function(self, op, x):
        """op(x) of a value (a Fraction or a LogScore): exact where it is rational
        (``elementary.exact_value``), else correctly rounded once per argument and recorded."""
        if not isinstance(x, (LogScore, Multiscale)):
            x = Fraction(x)
            value = exact_value(op, x)
            if value is not None:
                return value
        key = (op, x) if not isinstance(x, Multiscale) else (op, "shape", x.shape())
        hit = self._roundings.get(key)
        if hit is None:
            hit = self._round(key, f"{op}({_shown(x)})",
                              lambda ns: getattr(ns, op)(_enclosed(ns, x)))
        return hit.value

    def _round(self, key, what, enclose):
        """Round the real value that ``enclose(ns)`` encloses in an interval system ns to
        exp_digits digits (``protocol.correctly_rounded``), record it under ``key``."""
        digits = self.exp_digits
        value = correctly_rounded(lambda extra: enclose(interval_at(digits + extra)).ends(),
                                  digits, what)
        hit = self._roundings[key] = Rounding(what, digits, _kept(value))
        return hit

    def largest(self, values):
        """The first of the values with the largest float approximation (a LogScore's
        r + c ln b in floats): one of the values, exactly, and near the largest; softmax's
        pattern does not depend on which (docs/exactness.md)."""
        return max(values, key=_approximately)

    def decider(self):
        """Intervals at ``exp_digits`` digits that contain this system's values and the real
        model's (memoised: the interval model compiles once)."""
        if self._decider is None:
            self._decider = enclosure(self.exp_digits)
        return self._decider

    def refined(self):
        """The same system with twice the exp digits (``explicit``, so ``fit`` keeps them)."""
        digits = 2 * self.exp_digits
        if digits > MAX_CERTIFIED_DIGITS:
            raise Undecided(f"no decision certified with e^x rounded to up to "
                            f"{self.exp_digits} digits (a tie in the real-number model?)")
        return FractionSystem(digits, picked=f"raised from {self.exp_digits} digits to "
                                             f"certify every decision")


def ordered(x):
    """A sort key in x's own order for a rational x (Fraction or int): (floor(2^64 x), x).
    The floor is one division with a short quotient; only equal floors compare x itself,
    which multiplies two rationals whose denominators may have thousands of digits.

    >>> third = Fraction(1, 3)
    >>> sorted([third, Fraction(-7, 2), 2, third + Fraction(1, 2 ** 80)], key=ordered)
    [Fraction(-7, 2), Fraction(1, 3), Fraction(...), 2]
    """
    return (x.numerator << 64) // x.denominator, x


def first_largest(values):
    """``generate.argmax`` of rationals (the first of the largest), ordered by ``ordered``:
    the index of a long exact logit row's winner without multiplying its rationals.

    >>> first_largest([Fraction(1, 3), 2, Fraction(4, 2), -1])
    1
    """
    return max(range(len(values)), key=lambda j: ordered(values[j]))


def exact(c):
    """A constant's value where the fraction system keeps it exact: a Fraction, or a
    :class:`LogScore` (rational + integer * ln b); None where it is irrational otherwise.
    Markers are the identity (the real-number model).

    >>> from tinyadder.constants import PI, cos, ln, sqrt
    >>> exact(ln(10) / 2 * 6 + 80), exact(sqrt(Fraction(9, 4))), exact(cos(2 * PI / 19))
    (LogScore(rational=Fraction(80, 1), ln_coef=3, base=Fraction(10, 1)), Fraction(3, 2), None)
    """
    folded = _fold(c)
    if folded is None:
        return None
    r, k, b = folded
    if k == 0:
        return r
    return LogScore(r, int(k), b) if k.denominator == 1 else None


def _fold(c):
    """c as (r, k, b), the value r + k ln b with rationals r and k (b None when k = 0), where
    it has that form; else None."""
    if is_rational(c):
        return Fraction(c), Fraction(0), None
    if isinstance(c, Ln):
        return _log(Fraction(c.base))
    if isinstance(c, ExpTerm):
        return (Fraction(c.coef), Fraction(0), None) if c.power == 0 or c.coef == 0 else None
    if not isinstance(c, Expr):
        raise TypeError(f"{c!r} is not an exact constant (int, Fraction, ExpTerm, Ln, Expr)")
    op, args = c.op, c.args
    if op == "pi":
        return None
    if op in MARKERS:
        return _fold(args[0])
    x = _fold(args[0])
    if x is None:
        return None
    r, k, b = x
    if op == "neg":
        return -r, -k, b
    if op == "pow":
        return (r ** args[1], k, None) if k == 0 else None
    if op in ("add", "sub", "mul", "div"):
        y = _fold(args[1])
        return None if y is None else _combined(op, x, y)
    if k != 0:  # e^(r + k ln b) = e^r b^k is rational for r = 0 and an integer k
        return (b ** int(k), Fraction(0), None) if (op == "exp" and r == 0
                                                    and k.denominator == 1) else None
    if op == "ln":
        return (Fraction(0), Fraction(0), None) if exact_value("ln", r) is not None else _log(r)
    value = exact_value(op, r)
    return None if value is None else (value, Fraction(0), None)


def _log(b):
    """ln b as (0, 1, b)."""
    exact_value("ln", b)  # b > 0, or ValueError
    return (Fraction(0), Fraction(1), b) if b != 1 else (Fraction(0), Fraction(0), None)


def _combined(op, x, y):
    """x op y of folded values, where the result has the form r + k ln b (one base; a
    product or quotient with a rational); else None."""
    (r, k, b), (s, m, d) = x, y
    if op in ("add", "sub"):
        if k and m and b != d:
            return None
        sign = 1 if op == "add" else -1
        return r + sign * s, k + sign * m, b if k else d
    if op == "div":
        if m:
            return None
        s = 1 / s
    elif m:  # a rational times r + k ln b
        if k:
            return None
        (r, k, b), s = y, r
    return r * s, k * s, b if k * s else None


def _kept(value):
    """A rounded value (a Decimal m 10^k) as the fraction system holds it: a Fraction, or
    for k below -FAR a :class:`Multiscale` leaf, which sums and quotients keep unexpanded
    (a Fraction of 10^-FAR has a 33,000-bit denominator, and each sum with it as many)."""
    if value and value.adjusted() < -FAR:
        return leaf(value)
    return Fraction(value)


FAR = 10_000  # digits: e^-23,026; TinyAdder-36's e^-(1000 + 2N) is 10^-2171 at N = 2000


def _enclosed(ns, x):
    """A fraction-system value (a Fraction, a LogScore or a Multiscale) in the enclosing
    system ns."""
    if isinstance(x, Multiscale):
        return x.enclosure(ns)
    if isinstance(x, LogScore):
        return ns.const(x.rational) + ns.const(Ln(x.base)) * x.ln_coef
    return ns.const(x)


def _shown(x):
    """A run-time argument as text: exact when short, else its value to 12 digits and its
    size (the exact value may have thousands of digits)."""
    if isinstance(x, LogScore):
        return f"{_shown(x.rational)} {'-' if x.ln_coef < 0 else '+'} {abs(x.ln_coef)}*ln {x.base}"
    if isinstance(x, Multiscale):
        return f"{x.significant(12)}..., a rational of far-apart scales"
    size = x.numerator.bit_length() + x.denominator.bit_length()
    if size <= 200:
        return text(x)
    return f"{_decimal_of(x, _SHORT)}..., a rational of about {size * 3 // 10} digits"


_SHORT = _decimal_context(12)


def _approximately(v):
    """v as a float, near enough to pick a largest (+-inf beyond the range of floats)."""
    if isinstance(v, LogScore):
        b = v.base
        return _approximately(v.rational) + v.ln_coef * (math.log(b.numerator)
                                                         - math.log(b.denominator))
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf
