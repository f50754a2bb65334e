"""Exact values of far-apart scales, kept unexpanded: the fraction system's e^x for x far below
0 and what a trace computes from it.

A softmax row whose scores lie 10^5 to 10^11 apart (cosminscn-66, jacobli99-28) has weights
such as e^-700000, which the fraction system rounds to 50 digits once: m 10^k with
k = -304,000. As a Fraction that is a 10^6-bit denominator, and every sum with it (the row's
denominator, the weighted sum, the residual stream after it) a rational of as many digits,
whose gcds took minutes per row. A :class:`Multiscale` is the same exact rational, written

    value = c + sum_a w_a a + sum_D N_D / D    (c, w_a rationals; a an atom; N_D, D values)
    atom  = m 10^k (a rounded e^x, an exact Decimal) | x y   (x, y values)

so sums and rational multiples are exact and cheap (dicts: x + z - x is z exactly, and
quotients over one denominator D, such as a softmax row's weights, add their numerators),
and only a product of two such values makes a new atom. Its digits are read off enclosures (``interval_at``), each atom's memoised per precision, 40, 80, ...,
1280 digits, until they decide what is asked: a sign (so an order, an equality), a float, a
value to ``sig`` digits, or an enclosure for the fraction system's roundings (sqrt, e^x) at
the digits they ask. Rounding is monotone and the enclosures contain the exact value, so each
answer is the exact rational's. A sign they leave open (a logit that is 0 plus terms of
10^-48,000, or exactly 0) is read off the value's parts (``split``: its rational part, and the
rest, whose enclosures are of its own size), else off the value times a denominator D, where
terms cancel exactly (a softmax row's weights, less 1, times its total), leaf products
multiplied out. Where none of that decides, the exact rational is expanded (``exact``): right,
and as slow as before.
"""

from decimal import Decimal
from fractions import Fraction
import math
import weakref

from .enclosures import interval_at
from .protocol import Undecided, _decimal_context

LEVELS = (40, 80, 160, 320, 640, 1280)


class _Atom:
    """m 10^k (op "leaf", a Decimal; leaves of one value are one atom) or x * y (by
    identity)."""

    __slots__ = ("op", "x", "y", "_boxes", "_exact")

    def __init__(self, op, x, y=None):
        self.op, self.x, self.y = op, x, y
        self._boxes = {}
        self._exact = None

    def __eq__(self, other):
        if self.op == "leaf":
            return isinstance(other, _Atom) and other.op == "leaf" and other.x == self.x
        return self is other

    def __hash__(self):
        return hash(self.x) if self.op == "leaf" else id(self)

    def shape(self):
        if self.op == "leaf":
            return ("leaf", self.x)
        return ("mul", _shape(self.x), _shape(self.y))

    def box(self, digits):
        """An enclosure at ``digits`` digits (``interval_at``); Undecided for a quotient by
        an enclosure of 0."""
        hit = self._boxes.get(digits)
        if hit is None:
            ns = interval_at(digits)
            if self.op == "leaf":
                hit = ns.value(ns.value.DOWN.plus(self.x), ns.value.UP.plus(self.x))
            else:
                hit = _box(self.x, digits) * _box(self.y, digits)
            self._boxes[digits] = hit
        return hit

    def exact(self):
        if self._exact is None:
            if self.op == "leaf":
                self._exact = Fraction(self.x)
            else:
                self._exact = _exact(self.x) * _exact(self.y)
        return self._exact


def _box(x, digits):
    if isinstance(x, Multiscale):
        return x.box(digits)
    return interval_at(digits).point(x)


def _exact(x):
    return x.exact() if isinstance(x, Multiscale) else Fraction(x)


def _rational(x):
    """x as a Fraction where it is an int or Fraction, else None."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return Fraction(x)
    return None


def made(const, terms, quots=None):
    """c + sum w_a a + sum N_D / D: a Fraction when no term is left."""
    terms = {a: w for a, w in terms.items() if w}
    quots = {d: n for d, n in (quots or {}).items() if not _is_zero(n)}
    return Multiscale(const, terms, quots) if terms or quots else Fraction(const)


def _is_zero(n):
    return not isinstance(n, Multiscale) and n == 0


def leaf(value):
    """The exact Decimal m 10^k as a value."""
    return Multiscale(Fraction(0), {_Atom("leaf", value): Fraction(1)})


_NONE = {}


class Multiscale:
    """c + sum_a w_a a, an exact rational (module docstring). Arithmetic with ints, Fractions
    and its like is exact; comparisons, ``float``, ``bool`` and ``significant`` are decided
    on enclosures, and on the exact rational where those do not decide."""

    __slots__ = ("const", "terms", "quots", "_boxes", "_exact", "_cleared", "_split",
                 "_shape", "__weakref__")

    def __init__(self, const, terms, quots=_NONE):
        self.const, self.terms, self.quots = Fraction(const), terms, quots
        self._boxes = {}
        self._exact = self._cleared = self._split = self._shape = None

    # ---- arithmetic ----------------------------------------------------------------------
    def __add__(self, other):
        r = _rational(other)
        if r is not None:
            return self if r == 0 else Multiscale(self.const + r, self.terms, self.quots)
        if not isinstance(other, Multiscale):
            return NotImplemented
        terms = dict(self.terms)
        for a, w in other.terms.items():
            terms[a] = terms.get(a, 0) + w
        quots = dict(self.quots)
        for d, n in other.quots.items():
            quots[d] = quots[d] + n if d in quots else n
        return made(self.const + other.const, terms, quots)

    __radd__ = __add__

    def scaled(self, r):
        """r times this value, r rational."""
        if r == 0:
            return Fraction(0)
        if r == 1:
            return self
        return Multiscale(self.const * r, {a: w * r for a, w in self.terms.items()},
                          {d: n * r for d, n in self.quots.items()})

    def __neg__(self):
        return self.scaled(-1)

    def __pos__(self):
        return self

    def __sub__(self, other):
        r = _rational(other)
        if r is not None:
            return self + (-r)
        return self + (-other) if isinstance(other, Multiscale) else NotImplemented

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        r = _rational(other)
        if r is not None:
            return self.scaled(r)
        if not isinstance(other, Multiscale):
            return NotImplemented
        return Multiscale(Fraction(0), {_Atom("mul", self, other): Fraction(1)})

    __rmul__ = __mul__

    def __truediv__(self, other):
        r = _rational(other)
        if r is not None:
            return self.scaled(1 / r)
        if not isinstance(other, Multiscale):
            return NotImplemented
        return Multiscale(Fraction(0), _NONE, {_canonical(other): self})

    def __rtruediv__(self, other):
        r = _rational(other)
        if r is None:
            return NotImplemented
        if r == 0:
            return Fraction(0)
        return Multiscale(Fraction(0), _NONE, {_canonical(self): r})

    def __abs__(self):
        return -self if self.sign() < 0 else self

    # ---- what is read off enclosures -----------------------------------------------------
    def box(self, digits):
        """An enclosure at ``digits`` digits: c + sum w_a [a] rounded outward."""
        hit = self._boxes.get(digits)
        if hit is None:
            total = interval_at(digits).point(self.const)
            for a, w in self.terms.items():
                total = total + (a.box(digits) if w == 1 else a.box(digits) * w)
            for d, n in self.quots.items():
                total = total + _box(n, digits) / d.box(digits)
            hit = self._boxes[digits] = total
        return hit

    def enclosure(self, ns):
        """This value in the interval system ns (at least ns's digits)."""
        for digits in [d for d in LEVELS if d >= ns.digits] or [ns.digits]:
            try:
                box = self.box(digits)
            except Undecided:
                continue
            return ns.value(box.lo, box.hi)
        return ns.point(self.exact())

    def _decide(self, read, levels=LEVELS, deep=True):
        """read(box) at 40, 80, ... digits until it is not None; else None. Each level reads
        the value's own enclosure, then (``deep``) its parts' (``split``) and over a
        denominator."""
        for digits in levels:
            for box in (self.box, self._tiny_box, self._cleared_box)[:3 if deep else 1]:
                try:
                    found = read(box(digits))
                except Undecided:
                    continue
                if found is not None:
                    return found
        return None

    def split(self):
        """(R, T) with self = R + T exactly: R the rational part (every leaf m 10^k, all below
        10^-10000, taken as 0) and T the rest, whose every term carries a leaf (a quotient
        N / D as R_N / R_D + (T_N - T_D R_N / R_D) / D); None where some R_D is 0."""
        if self._split is None:
            self._split = _split(self) or False
        return self._split or None

    def _tiny_box(self, digits):
        """An enclosure of T where self = T (R = 0): T's terms are of self's size, where
        self's own enclosure adds terms that cancel."""
        parts = self.split()
        if parts is None or parts[0] != 0 or not isinstance(parts[1], Multiscale):
            raise Undecided("not of leaves alone")
        return parts[1].box(digits)

    def _cleared_box(self, digits):
        """An enclosure as (self D) / D, D a denominator of self: where self is far smaller
        than its terms (they cancel over D), the terms of self D are of its size."""
        if not self.quots:
            raise Undecided("no denominator")
        cleared, d = self._clear()
        return _box(cleared, digits) / d.box(digits)

    def _clear(self):
        """(self D, D) for the first denominator D of self (memoised)."""
        if self._cleared is None:
            d = next(iter(self.quots))
            self._cleared = (self._times(d), d)
        return self._cleared

    def shape(self):
        """An int that two values share when they are built alike from equal parts (the same
        rationals, leaves and shapes): equal shapes are equal values (a memo's key)."""
        if self._shape is None:
            key = (self.const, frozenset((a.shape(), w) for a, w in self.terms.items()),
                   frozenset((d.shape(), _shape(n)) for d, n in self.quots.items()))
            self._shape = _SHAPES.setdefault(key, len(_SHAPES))
        return self._shape

    def sign(self, expand=True, deep=True):
        """-1, 0 or 1: from enclosures at 40 and 80 digits; else, over a denominator D, as
        sign(self D) sign(D), where terms may cancel; else from enclosures up to 1280
        digits; else from the exact rational (None instead, without ``expand``)."""
        found = self._decide(_sign_of, LEVELS[:2])
        parts = self.split() if found is None and deep else None
        if parts is not None:
            r, t = parts
            if r == 0:
                found = _sign(t, expand, deep=False)
            elif isinstance(t, Multiscale):
                try:
                    b = t.box(LEVELS[0])
                    if max(b.lo.copy_abs(), b.hi.copy_abs()) < abs(r):  # copy_abs: exact
                        found = (r > 0) - (r < 0)
                except Undecided:
                    pass
        if found is None and self.quots:
            cleared, d = self._clear()
            found = _sign(cleared, expand)
            found = None if found is None else found * d.sign()
        if found is None:
            found = self._decide(_sign_of, LEVELS[2:])
        if found is None and expand:
            x = self.exact()
            found = (x > 0) - (x < 0)
        return found

    def _times(self, d):
        """self times the denominator d: c d + sum w_a (a d) + N_d + sum N_E d / E."""
        out = d.scaled(self.const) + self.quots[d]
        for a, w in self.terms.items():
            out = out + _product(_single(a), d) * w
        for e, n in self.quots.items():
            if e is not d:
                out = out + Multiscale(Fraction(0), _NONE, {e: _product(n, d)})
        return out

    def exact(self):
        """The exact rational (expanded: as long as its digits)."""
        if self._exact is None:
            self._exact = (self.const
                           + sum((w * a.exact() for a, w in self.terms.items()), Fraction(0))
                           + sum((_exact(n) / d.exact() for d, n in self.quots.items()),
                                 Fraction(0)))
        return self._exact

    def __float__(self):
        def read(b):
            lo, hi = _float(b.lo), _float(b.hi)
            return lo if lo == hi else None
        found = self._decide(read)
        if found is None:
            found = 0.0 if self.sign() == 0 else float(self.exact())
        return found

    def significant(self, sig):
        """This value correctly rounded to ``sig`` significant digits, half to even (a
        Decimal of ``sig`` digits)."""
        ctx = _decimal_context(sig)

        def read(b):
            lo, hi = ctx.plus(b.lo), ctx.plus(b.hi)
            return lo if lo == hi and lo else None
        found = self._decide(read)
        if found is None and self.sign() == 0:
            return Decimal(0)
        if found is None:
            x = self.exact()
            found = ctx.divide(Decimal(x.numerator), Decimal(x.denominator))
        if len(found.as_tuple().digits) < sig:
            found = found.quantize(Decimal(1).scaleb(found.adjusted() - sig + 1), context=ctx)
        return found

    # ---- order ---------------------------------------------------------------------------
    def _cmp(self, other):
        d = self.__sub__(other)
        if d is NotImplemented:
            return None
        return d.sign() if isinstance(d, Multiscale) else (d > 0) - (d < 0)

    def __eq__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c == 0

    def __ne__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c != 0

    def __lt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c < 0

    def __le__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c <= 0

    def __gt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c > 0

    def __ge__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c >= 0

    def __bool__(self):
        return self.sign() != 0

    __hash__ = object.__hash__  # by identity: a memo keyed by a value may miss, never err

    def __repr__(self):
        return f"Multiscale(~{self.significant(12)}, {len(self.terms)} terms)"

    def __str__(self):
        """'0' for a value that is 0 (as a Fraction's text); else the repr."""
        return "0" if self.sign() == 0 else repr(self)


def _sign_of(b):
    return 1 if b.lo > 0 else (-1 if b.hi < 0 else None)


def _sign(x, expand=True, deep=True):
    if isinstance(x, Multiscale):
        return x.sign(expand, deep)
    return (x > 0) - (x < 0)


_FLAT = weakref.WeakValueDictionary()


def _canonical(d):
    """One object per value of a denominator made of a rational and leaves (a softmax row's
    total), so that quotients over equal denominators add their numerators."""
    if d.quots or any(a.op != "leaf" for a in d.terms):
        return d
    key = (d.const, frozenset(d.terms.items()))
    found = _FLAT.get(key)
    if found is None:
        _FLAT[key] = found = d
    return found


_SHAPES = {}


def _shape(x):
    return x.shape() if isinstance(x, Multiscale) else ("q", Fraction(x))


def _split(x):
    """(R, T) of ``Multiscale.split`` for a value x (a Fraction: (x, 0)), or None."""
    if not isinstance(x, Multiscale):
        return Fraction(x), Fraction(0)
    r, t = x.const, Fraction(0)
    for a, w in x.terms.items():
        if a.op == "leaf":
            t = t + _single(a) * w
            continue
        sx, sy = _split_of(a.x), _split_of(a.y)
        if sx is None or sy is None:
            return None
        (rx, tx), (ry, ty) = sx, sy
        r += w * rx * ry
        t = t + (tx * ry + ty * rx) * w
        if isinstance(tx, Multiscale) and isinstance(ty, Multiscale):
            t = t + _product(tx, ty) * w
    for d, n in x.quots.items():
        sn, sd = _split_of(n), d.split()
        if sn is None or sd is None or sd[0] == 0:
            return None
        (rn, tn), (rd, td) = sn, sd
        r += rn / rd
        t = t + made(Fraction(0), {}, {d: tn - td * (rn / rd)})
    return r, t


def _split_of(x):
    return x.split() if isinstance(x, Multiscale) else (Fraction(x), Fraction(0))


def _product(x, y):
    """x y, multiplied out where neither has a denominator, so that terms can cancel: a
    product of two leaves m 10^k is the leaf of their exact product."""
    if not (isinstance(x, Multiscale) and isinstance(y, Multiscale)):
        return x * y
    if _quotient(x) and _quotient(y):  # (n / d)(m / e) = (n m) / (d e)
        (d, n), = x.quots.items()
        (e, m), = y.quots.items()
        return made(Fraction(0), {}, {_canonical(_product(d, e)): _product(n, m)})
    if x.quots or y.quots:
        return x * y
    terms = {}
    for a, w in x.terms.items():
        terms[a] = terms.get(a, 0) + w * y.const
    for b, u in y.terms.items():
        terms[b] = terms.get(b, 0) + u * x.const
    for a, w in x.terms.items():
        for b, u in y.terms.items():
            ab = _atom_product(a, b)
            terms[ab] = terms.get(ab, 0) + w * u
    return made(x.const * y.const, terms)


def _quotient(x):
    """Whether x is n / d alone."""
    return not x.const and not x.terms and len(x.quots) == 1


def _atom_product(a, b):
    if a.op == b.op == "leaf":
        digits = len(a.x.as_tuple().digits) + len(b.x.as_tuple().digits)
        return _Atom("leaf", _decimal_context(digits).multiply(a.x, b.x))  # exact
    return _Atom("mul", _single(a), _single(b))


def _single(a):
    """The atom a as a value."""
    return Multiscale(Fraction(0), {a: Fraction(1)})


def _float(d):
    """A Decimal as the nearest double (+-inf beyond the range of doubles)."""
    try:
        return float(d)
    except OverflowError:
        return math.inf if d > 0 else -math.inf
