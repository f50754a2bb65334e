"""Exact constants a model is written with: :class:`Ln` (ln of a rational) and :class:`ExpTerm`
(a rational times e to a rational power). A leaf module: a model's data does not depend on the
arithmetic that runs it.

Like ``fractions.Fraction``, they keep inexactness visible: arithmetic with a float is not
defined (``NotImplemented``), so a float never turns silently into a constant.

>>> exp_of(40) / 10
ExpTerm(coef=Fraction(1, 10), power=Fraction(40, 1))
>>> exp_of(40) * 0.1
Traceback (most recent call last):
    ...
TypeError: unsupported operand type(s) for *: 'ExpTerm' and 'float'
"""

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class MinusInfinity:
    """-inf: a masked attention entry (a fixed bias or a mask), never a number in a sum."""

    def __str__(self):
        return "-inf"


NEG_INF = MinusInfinity()


def is_rational(x):
    """Whether x is an exact rational: an int (not a bool) or a Fraction."""
    return isinstance(x, (int, Fraction)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Ln:
    """ln(base) for a positive rational base: a slope whose decay per position is exact."""

    base: Fraction

    def __str__(self):
        return f"ln {self.base}"


@dataclass(frozen=True)
class ExpTerm:
    """coef * e**power with rational coef and power; closed under * and / by rationals."""

    coef: Fraction
    power: Fraction

    def __mul__(self, other):
        if isinstance(other, ExpTerm):
            return ExpTerm(self.coef * other.coef, self.power + other.power)
        if not is_rational(other):
            return NotImplemented
        return ExpTerm(self.coef * other, self.power)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, ExpTerm):
            return ExpTerm(self.coef / other.coef, self.power - other.power)
        if not is_rational(other):
            return NotImplemented
        return ExpTerm(self.coef / Fraction(other), self.power)

    def __rtruediv__(self, other):
        if not is_rational(other):
            return NotImplemented
        return ExpTerm(Fraction(other) / self.coef, -self.power)

    def __neg__(self):
        return ExpTerm(-self.coef, self.power)

    def __str__(self):
        coef = "" if self.coef == 1 else f"{self.coef}*"
        return f"{coef}e^{self.power}"


def exp_of(power):
    """e**power as a symbolic constant."""
    return ExpTerm(Fraction(1), Fraction(power))


def is_zero(c):
    """Whether a construction constant is zero (an ExpTerm is zero when its coef is)."""
    return c.coef == 0 if isinstance(c, ExpTerm) else c == 0




# ---- irrational constants as expressions -----------------------------------------------------

FUNCTIONS = ("exp", "ln", "sqrt", "sin", "cos")
MARKERS = ("f32", "f64")  # the program rounded here: honoured by rounding systems only
_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


@dataclass(frozen=True)
class Expr:
    """An exact constant that is not rational, ExpTerm or Ln, as an expression tree.

    ``op`` is one of 'pi'; 'neg'; 'add', 'sub', 'mul', 'div' (two arguments); 'pow' (a value
    and an int exponent); a function of ``FUNCTIONS``; a float marker of ``MARKERS``.
    ``args`` are rationals, ExpTerms, Lns or Exprs. Its text (``str``) is the model-file
    grammar's (docs/model-format.md), so it reads back to the same tree.

    >>> c = 2 * PI / 19
    >>> str(c), str(cos(c) - cos(c * Fraction(7, 10)))
    ('2*pi/19', 'cos(2*pi/19) - cos(2*pi/19*(7/10))')
    >>> c * 0.5
    Traceback (most recent call last):
        ...
    TypeError: unsupported operand type(s) for *: 'Expr' and 'float'
    """

    op: str
    args: tuple = ()

    def __str__(self):
        return _text(self, 0)

    # arithmetic builds trees; a float is NotImplemented, as for Fraction and ExpTerm
    def _tree(op, a, b):
        if not (_is_constant(a) and _is_constant(b)):
            return NotImplemented
        return Expr(op, (a, b))

    def __add__(self, other):
        return Expr._tree("add", self, other)

    def __radd__(self, other):
        return Expr._tree("add", other, self)

    def __sub__(self, other):
        return Expr._tree("sub", self, other)

    def __rsub__(self, other):
        return Expr._tree("sub", other, self)

    def __mul__(self, other):
        return Expr._tree("mul", self, other)

    def __rmul__(self, other):
        return Expr._tree("mul", other, self)

    def __truediv__(self, other):
        return Expr._tree("div", self, other)

    def __rtruediv__(self, other):
        return Expr._tree("div", other, self)

    def __neg__(self):
        return Expr("neg", (self,))

    def __pow__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            return NotImplemented
        return Expr("pow", (self, k))


def _is_constant(x):
    return is_rational(x) or isinstance(x, (ExpTerm, Ln, Expr))


PI = Expr("pi")


def _function(op):
    def f(x):
        if not _is_constant(x):
            raise TypeError(f"{op}() takes an exact constant, not {type(x).__name__}")
        return Expr(op, (x,))
    f.__name__ = op
    f.__doc__ = f"{op}(x) as an exact constant."
    return f


exp, ln, sqrt, sin, cos, f32, f64 = (_function(op) for op in FUNCTIONS + MARKERS)

_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3, "pow": 4}


def _text(x, outer):
    """x as grammar text, parenthesised where an operator of precedence ``outer`` needs it."""
    if isinstance(x, Expr):
        op, args = x.op, x.args
        if op == "pi":
            return "pi"
        if op in FUNCTIONS or op in MARKERS:
            return f"{op}({_text(args[0], 0)})"
        mine = _PRECEDENCE[op]
        if op == "neg":
            text = f"-{_text(args[0], mine)}"
        elif op == "pow":
            text = f"{_text(args[0], mine + 1)}^{args[1]}"
        else:  # left-associative: the right operand binds tighter
            text = f"{_text(args[0], mine)} {_BINARY[op]} {_text(args[1], mine + 1)}"
            if op in ("mul", "div"):
                text = text.replace(" * ", "*").replace(" / ", "/")
        return f"({text})" if mine < outer else text
    if isinstance(x, ExpTerm):
        base = f"exp({x.power})" if x.power != 1 else "exp(1)"
        if x.coef == 1:
            return base
        return _text(Expr("mul", (x.coef, Expr("exp", (x.power,)))), outer)
    if isinstance(x, Ln):
        return f"ln({x.base})"
    if isinstance(x, MinusInfinity):
        return "-inf"
    x = Fraction(x)
    text = str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    wrap = outer > 1 or (x < 0 and outer > 0)  # a quotient or a sign inside a larger term
    return f"({text})" if wrap and (x < 0 or x.denominator != 1) else text


def text(x):
    """The model-file text of an exact constant: '10', '-11/10', 'exp(40)', '2*pi/19'."""
    return _text(x, 0)
