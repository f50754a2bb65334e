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
import operator
import re


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

    # any other arithmetic with a constant is an expression tree (Expr)
    __add__ = lambda a, b: Expr._tree("add", a, b)
    __radd__ = lambda a, b: Expr._tree("add", b, a)
    __sub__ = lambda a, b: Expr._tree("sub", a, b)
    __rsub__ = lambda a, b: Expr._tree("sub", b, a)
    __mul__ = lambda a, b: Expr._tree("mul", a, b)
    __rmul__ = lambda a, b: Expr._tree("mul", b, a)
    __truediv__ = lambda a, b: Expr._tree("div", a, b)
    __rtruediv__ = lambda a, b: Expr._tree("div", b, a)


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

    # a sum with another constant is an expression tree (Expr)
    __add__ = lambda a, b: Expr._tree("add", a, b)
    __radd__ = lambda a, b: Expr._tree("add", b, a)
    __sub__ = lambda a, b: Expr._tree("sub", a, b)
    __rsub__ = lambda a, b: Expr._tree("sub", b, a)

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
        return _normal(op, x)
    f.__name__ = op
    f.__doc__ = f"{op}(x) as an exact constant, in normal form (``_normal``)."
    return f


def _normal(op, x):
    """op(x) in its normal form: exp(r) = ExpTerm(1, r) and ln(r) = Ln(r) for rationals r
    (r > 0 for ln), every other function of a constant an Expr."""
    if op == "exp" and is_rational(x):
        return exp_of(x)
    if op == "ln" and is_rational(x) and x > 0:
        return Ln(Fraction(x))
    return Expr(op, (x,))


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


# ---- the grammar: text -> constant (docs/model-format.md) ----------------------------------

MAX_TEXT = 10_000      # characters of one constant's text
MAX_DEPTH = 40         # nesting of parentheses, calls, signs and exponents
MAX_DIGITS = 4_300     # digits of one number (Python's own limit on int() of a text)
MAX_EXPONENT = 10_000  # |k| of 10^k and 2^k in a number, of x^k, and |x| of exp(x), x rational
MAX_BITS = 70_000      # bits of a rational's numerator and denominator (about 21,000 digits)
LARGE = 1_000          # bits beyond which an operation spends its operands' bits of a Budget
WORK = 2_000_000       # bits of large arithmetic a Budget allows (all of one file's constants)
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
RESERVED = FUNCTIONS + MARKERS + ("pi", "inf", "nan", "infinity")  # case-insensitive

_DECIMAL = re.compile(r"([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")
_HEX = re.compile(r"0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?[0-9]+))?")
_SIMPLE = re.compile(r"\s*(-?[0-9]{1,300})(?:/([1-9][0-9]{0,299}))?\s*")
_LEXEME = re.compile(r"(?P<number>[0-9](?:[eEpP][+-][0-9]|[0-9A-Za-z_.])*)"
                     r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\*\*|[-+*/^()])|(?P<space>\s+)")


class ConstantError(ValueError):
    """A constant's text that does not parse or passes a limit (one line: the text, the
    problem and what is accepted)."""


class Budget:
    """The large arithmetic a run of parses may still do (a model file's constants share one):
    an operation on a rational of more than ``LARGE`` bits spends its operands' bits."""

    def __init__(self, bits=WORK):
        self.left = bits


def parse(text, names=None, budget=None):
    """The exact constant a text of the model-file grammar writes (docs/model-format.md):
    integers, p/q, decimals and hexadecimal floats (all exact), the ``names`` of earlier
    constants, + - * / ^ (an integer exponent), unary minus, parentheses, exp ln sqrt sin cos,
    pi, f32(.) f64(.), and "-inf" alone.

    Normal forms, as Python's operators give them: a rational is a Fraction, exp(r) an
    ExpTerm(1, r), rational * ExpTerm, ExpTerm * ExpTerm and their quotients an ExpTerm,
    ln(r) of a positive rational an Ln, anything else an Expr. Sizes are checked before any
    arithmetic (the limits above); a bad text raises :class:`ConstantError`.

    >>> parse("1e-6"), parse("0x1.8p-1"), parse("exp(-40)/10")
    (Fraction(1, 1000000), Fraction(3, 4), ExpTerm(coef=Fraction(1, 10), power=Fraction(-40, 1)))
    >>> parse("2*pi/19") == 2 * PI / 19, parse("-(k - 1)*ln(10)", {"k": Fraction(3)})
    (True, Expr(op='mul', args=(Fraction(-2, 1), Ln(base=Fraction(10, 1)))))
    >>> parse("exp(10^9)")
    Traceback (most recent call last):
        ...
    tinyadder.constants.ConstantError: 'exp(10^9)': exp of 1000000000: its argument must be within -10000..10000
    """
    if not isinstance(text, str):
        raise ConstantError(f"a constant is text such as '11/10', not {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ConstantError(f"{_shown(text)}: longer than {MAX_TEXT:,} characters")
    simple = _SIMPLE.fullmatch(text)
    if simple:  # most entries: an integer or p/q, q not 0
        return Fraction(int(simple[1]), int(simple[2] or 1))
    if text.strip() == "-inf":
        return NEG_INF
    return _Parser(text, names or {}, budget or Budget()).constant()


class _Used(dict):
    """Names as ``parse`` looks them up, recording which it used."""

    def __init__(self, names):
        super().__init__(names)
        self.seen = {}

    def __getitem__(self, name):
        self.seen[name] = None
        return super().__getitem__(name)


def parse_using(text, names, budget=None):
    """(the constant, the named constants of ``names`` its text uses, in order of use)."""
    used = _Used(names)
    return parse(text, used, budget), tuple(used.seen)


def names_in(text, names):
    """The named constants (of ``names``) a constant's text uses, in the order it uses them.

    >>> names_in("s*E3 + o", {"s": 10, "E3": 30, "o": 5})
    ('s', 'E3', 'o')
    """
    return parse_using(text, names)[1]


def _shown(text, width=40):
    return repr(text) if len(text) <= width else f"{text[:width]!r}... ({len(text):,} characters)"


class _Parser:
    """Recursive descent over the tokens; each rule returns its value."""

    def __init__(self, text, names, budget):
        self.text, self.names, self.budget = text, names, budget
        self.tokens, self.at, self.depth = self._lex(), 0, 0

    def fail(self, problem):
        raise ConstantError(f"{_shown(self.text)}: {problem}")

    def _lex(self):
        tokens, at = [], 0
        while at < len(self.text):
            m = _LEXEME.match(self.text, at)
            if m is None:
                self.fail(f"unexpected character {self.text[at]!r} at character {at + 1}; "
                          f"use numbers, names, + - * / ^, parentheses and exp ln sqrt sin "
                          f"cos pi f32 f64")
            if m.lastgroup != "space":
                tokens.append((m.lastgroup, m.group(), at + 1))
            at = m.end()
        return tokens

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else (None, None, None)

    def take(self, text=None):
        token = self.peek()
        if token[0] is None:
            self.fail("ends too early" + (f": {text!r} expected" if text else ""))
        if text is not None and token[1] != text:
            self.fail(f"{text!r} expected at character {token[2]}, found {token[1]!r}")
        self.at += 1
        return token

    def constant(self):
        if not self.tokens:
            self.fail("empty; write a number such as 1, 11/10, 1e-6 or exp(40)")
        value = self.sum()
        kind, word, at = self.peek()
        if kind is not None:
            self.fail(f"unexpected {word!r} at character {at}")
        return value

    def sum(self):
        value = self.product()
        while self.peek()[1] in ("+", "-"):
            op = "add" if self.take()[1] == "+" else "sub"
            value = self.combine(op, value, self.product())
        return value

    def product(self):
        value = self.unary()
        if self.peek()[1] == "**":
            self.fail(f"'**' at character {self.peek()[2]}: write ^ for a power")
        while self.peek()[1] in ("*", "/"):
            op = "mul" if self.take()[1] == "*" else "div"
            value = self.combine(op, value, self.unary())
        return value

    def unary(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nested more than {MAX_DEPTH} levels deep")
        if self.peek()[1] == "-":
            self.take()
            value = self.negate(self.unary())
        else:
            value = self.power()
        self.depth -= 1
        return value

    def power(self):
        base = self.atom()
        if self.peek()[1] != "^":
            return base
        self.take()
        k = self.unary()
        if not (is_rational(k) and Fraction(k).denominator == 1):
            self.fail(f"the exponent {text(k)} is not an integer; ^ takes an integer (for a "
                      f"root write sqrt)")
        k = int(k)
        if abs(k) > MAX_EXPONENT:
            self.fail(f"the exponent {k} is outside -{MAX_EXPONENT}..{MAX_EXPONENT}")
        return self.raise_to(base, k)

    def atom(self):
        kind, word, at = self.take()
        if kind == "number":
            return self.number(word)
        if word == "(":
            value = self.sum()
            self.take(")")
            return value
        if kind != "name":
            self.fail(f"unexpected {word!r} at character {at}")
        if word in FUNCTIONS or word in MARKERS:
            if self.peek()[1] != "(":
                self.fail(f"{word} takes its argument in parentheses: {word}(x)")
            self.take("(")
            value = self.sum()
            self.take(")")
            return self.function(word, value)
        if word == "pi":
            return PI
        if word.lower() == "nan":
            self.fail(f"{word} is not an exact constant")
        if word.lower() in ("inf", "infinity"):
            self.fail(f"{word} at character {at}: '-inf' alone marks a masked entry (a mask or "
                      f"a fixed attention bias) and takes no arithmetic")
        if self.peek()[1] == "(":
            self.fail(f"{word!r} is not a function; the functions are "
                      f"{', '.join(FUNCTIONS + MARKERS)}")
        if word not in self.names:
            known = ", ".join(list(self.names)[:8]) + (", ..." if len(self.names) > 8 else "")
            self.fail(f"unknown name {word!r} at character {at}; "
                      + (f"the constants declared before it are {known}" if self.names else
                         "no constant is declared before it"))
        return self.names[word]

    def number(self, word):
        m = _HEX.fullmatch(word) or _DECIMAL.fullmatch(word)
        if m is None or (m.re is _HEX and not (m.group(1) or m.group(2))):
            self.fail(f"{word!r} is not a number; write an integer, p/q, a decimal such as "
                      f"1.5e-6 or a hexadecimal float such as 0x1.8p-3 (and * between a "
                      f"number and a name)")
        whole, part, exponent = m.group(1), m.group(2) or "", m.group(3) or "0"
        if len(whole) + len(part) > MAX_DIGITS:
            self.fail(f"a number of {len(whole) + len(part):,} digits; at most {MAX_DIGITS:,}")
        if len(exponent.lstrip("+-")) > 6 or abs(int(exponent)) > MAX_EXPONENT:
            self.fail(f"the exponent of {_shown(word, 24)} is outside "
                      f"-{MAX_EXPONENT}..{MAX_EXPONENT}")
        if m.re is _HEX:
            mantissa, base, shift = int(whole + part or "0", 16), 2, int(exponent) - 4 * len(part)
        else:
            mantissa, base, shift = int(whole + part), 10, int(exponent) - len(part)
        if shift == 0:
            return Fraction(mantissa)
        # bits of base^|shift|, from above (log2 10 < 3.322)
        scale = abs(shift) * (1 if base == 2 else 3322) // (1 if base == 2 else 1000) + 1
        self.spend(scale + mantissa.bit_length(), scale)
        if shift > 0:
            return Fraction(mantissa * base ** shift)
        return Fraction(mantissa, base ** -shift)

    # ---- the arithmetic, in normal form and within the limits --------------------------

    def rational(self, op, a, b):
        """a op b for rationals, its size bounded before it is computed."""
        (an, ad), (bn, bd) = _sizes(a), _sizes(b)
        size = {"add": max(an + bd, bn + ad) + 1, "sub": max(an + bd, bn + ad) + 1,
                "mul": max(an + bn, ad + bd), "div": max(an + bd, ad + bn)}[op]
        self.spend(size, max(an, ad, bn, bd))
        if op == "div" and b == 0:
            self.fail("division by zero")
        return Fraction(_OPERATORS[op](a, b))

    def spend(self, size, largest):
        if size > MAX_BITS:
            self.fail(f"a rational of more than {MAX_BITS:,} bits (about "
                      f"{MAX_BITS * 3 // 10:,} digits)")
        if largest > LARGE:
            self.budget.left -= size
            if self.budget.left < 0:
                self.fail(f"more arithmetic on large numbers than one file may do "
                          f"({WORK:,} bits)")

    def raise_to(self, base, k):
        """base^k for an integer k: a rational, an ExpTerm (coef^k e^(k power)) or an Expr."""
        self.finite(base)
        if isinstance(base, ExpTerm):
            return self.exp_term(self.raise_to(base.coef, k),
                                 self.rational("mul", base.power, k))
        if not is_rational(base):
            return Expr("pow", (base, k))
        base = Fraction(base)
        if base == 0 and k < 0:
            self.fail("division by zero (0 to a negative power)")
        self.spend(max(_sizes(base)) * abs(k), max(_sizes(base)))
        return base ** k

    def exp_term(self, coef, power):
        if abs(power) > MAX_EXPONENT:
            self.fail(f"exp of {text(power)}: its argument must be within "
                      f"-{MAX_EXPONENT}..{MAX_EXPONENT}")
        return ExpTerm(Fraction(coef), Fraction(power))

    def combine(self, op, a, b):
        self.finite(a, b)
        if is_rational(a) and is_rational(b):
            return self.rational(op, a, b)
        if op in ("mul", "div") and all(is_rational(x) or isinstance(x, ExpTerm) for x in (a, b)):
            a, b = (x if isinstance(x, ExpTerm) else ExpTerm(Fraction(x), Fraction(0))
                    for x in (a, b))
            if op == "div" and b.coef == 0:
                self.fail("division by zero")
            sign = "add" if op == "mul" else "sub"
            return self.exp_term(self.rational(op, a.coef, b.coef),
                                 self.rational(sign, a.power, b.power))
        return Expr(op, (a, b))

    def negate(self, x):
        """-x as Python's operators give it (-Fraction, -ExpTerm, -Expr); -ln(b) an Expr."""
        self.finite(x)
        if is_rational(x):
            return -Fraction(x)
        return Expr("neg", (x,)) if isinstance(x, Ln) else -x

    def function(self, op, x):
        self.finite(x)
        if op == "exp" and is_rational(x):
            return self.exp_term(1, x)
        if op == "ln" and is_rational(x) and x <= 0:
            self.fail(f"ln of {text(x)}: ln takes a positive argument")
        if op == "sqrt" and is_rational(x) and x < 0:
            self.fail(f"sqrt of {text(x)}: sqrt takes a non-negative argument")
        return _normal(op, Fraction(x) if is_rational(x) else x)

    def finite(self, *values):
        if any(isinstance(x, MinusInfinity) for x in values):
            self.fail("-inf takes no arithmetic: it stands alone, as a mask or a fixed "
                      "attention bias")


_OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "div": operator.truediv}


def _sizes(x):
    """(bits of the numerator's magnitude, bits of the denominator) of a rational."""
    return x.numerator.bit_length(), x.denominator.bit_length()
