"""The checker of the generic prover's certificates (``generic``): does the split tree cover
every pair exactly once, and does every leaf hold?

Written apart from the prover: it shares the model reader (``modelfile``), the reference pass
(``forward``, run traced: no generated fast path), the weights' compilation (``plan``) and the
certified enclosures of e^x, sqrt, sin, cos, erf (``numbers.enclosures``), and nothing of the
search (``generic``, ``sets``, ``setsystem``). What it trusts is exactly that list.

1. The partition. Per answer position, the tree is rebuilt from the root, every pair of
   N-digit numbers: each split's children are derived here from the split's name (a digit
   range cut at mid, a carry fixed to 0 and to 1, the sum's digit range cut at mid), so
   children are disjoint and their union is their parent by construction; the checker also
   counts the pairs of every region by its own walk over the columns and checks that the
   children's counts add up to the parent's and the root's is 10^(2N).
2. Every leaf. ``empty``: its count is 0. ``pair``: it holds that one pair. ``bound`` and
   ``pair``: the reference pass run over the leaf's region in :class:`Form` values (an affine
   form in the digits and carries plus an interval, every coefficient an exact rational), with
   the earlier answer digits the true sum's, gives a target logit above every other logit at
   every pair of the region, each range taken exactly over the region's pairs by the walk.
   A ReLU is taken whole, as the prover takes it: g or 0 where the region decides its sign,
   else its chord lam g + [0, -lam l] (which holds relu on the range [l, u] of g).
   Any other leaf (a counterexample, an open region) means the certificate proves nothing.

Why affine forms and not plain intervals: a written digit of the sum enters the pass beside
the operands' digits, and a model that adds subtracts them (the 36p's decision scalar is a
difference of sums of size 10^N); intervals lose that cancellation, so a leaf of more than a
few pairs could never be re-decided by intervals.
"""

from fractions import Fraction
import json

from ...forward import forward
from ...modelfile import loads
from ...numbers import for_model, number_system
from ...numbers.enclosures import IntervalSystem
from ...numbers.protocol import OverSets
from ...plan import compile_model
from .certificate import Invalid, Malformed  # the verdicts' exception types only

FORMAT = "tinyadder-sets-certificate"
MAX_BYTES = 64 << 20
MAX_DEPTH = 900  # a split tree deeper than this is refused (far below the recursion limit)
ZERO = Fraction(0)


# ---- regions: constraints on the pairs, counted and bounded by a walk over the columns ----

def steps(region, n, j):
    """(carry in, a_j, b_j, carry out) allowed in column j."""
    (alo, ahi), (blo, bhi), (slo, shi) = region["a"][j], region["b"][j], region["s"][j]
    cin, cout = region["c"][j], region["c"][j + 1]
    for c in (0, 1):
        for x in range(alo, ahi + 1):
            for y in range(blo, bhi + 1):
                t = x + y + c
                if c in cin and t // 10 in cout and slo <= t % 10 <= shi:
                    yield c, x, y, t // 10


def count(region, n):
    ways = {0: 1}
    for j in range(n):
        new = {}
        for c, _, _, out in steps(region, n, j):
            new[out] = new.get(out, 0) + ways.get(c, 0)
        ways = new
    return sum(ways.values())


def extreme(region, n, coefs, pick):
    """The least (pick=min) or greatest value over the region of sum coefs[v] v (v: ("a", j),
    ("b", j), ("c", j) the carry into column j, or an indicator ("a", j, d), ("b", j, d),
    ("s", j, d): 1 when a_j, b_j or the sum's digit s_j is d); None if the region is empty."""
    best = {0: ZERO}
    for j in range(n):
        new = {}
        for c, x, y, out in steps(region, n, j):
            if c in best:
                v = best[c] + coefs.get(("a", j), ZERO) * x + coefs.get(("b", j), ZERO) * y \
                    + coefs.get(("c", j), ZERO) * c + coefs.get(("a", j, x), ZERO) \
                    + coefs.get(("b", j, y), ZERO) + coefs.get(("s", j, (c + x + y) % 10), ZERO)
                new[out] = v if out not in new else pick(v, new[out])
        best = new
    values = [v + coefs.get(("c", n), ZERO) * c for c, v in best.items()]
    return pick(values) if values else None


def root(n):
    return {"a": [(0, 9)] * n, "b": [(0, 9)] * n, "s": [(0, 9)] * n,
            "c": [{0}] + [{0, 1}] * n}


def cut(region, n, split):
    """The children of a split, derived from its name; Invalid if it names no split here."""
    if not isinstance(split, list) or not split or split[0] not in ("a", "b", "c", "s"):
        raise Invalid(f"unknown split {split!r}")
    kind = split[0]
    if kind == "c":
        if len(split) != 2 or not _int(split[1]) or not 1 <= split[1] <= n \
                or region["c"][split[1]] != {0, 1}:
            raise Invalid(f"split {split!r}: not an open carry")
        out = []
        for c in (0, 1):
            child = dict(region, c=list(region["c"]))
            child["c"][split[1]] = {c}
            out.append(child)
        return out
    if len(split) != 3 or not all(_int(x) for x in split[1:]) or not 0 <= split[1] < n:
        raise Invalid(f"split {split!r}: not a column and a cut")
    j, mid = split[1], split[2]
    lo, hi = region[kind][j]
    if not lo <= mid < hi:
        raise Invalid(f"split {split!r}: {mid} does not cut {lo}..{hi}")
    out = []
    for part in ((lo, mid), (mid + 1, hi)):
        child = dict(region)
        child[kind] = list(region[kind])
        child[kind][j] = part
        out.append(child)
    return out


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


# ---- the values: affine forms plus an interval -------------------------------------------

class Form:
    """k + sum coefs[v] v + [lo, hi], over the checker's current region."""

    __slots__ = ("sys", "k", "coefs", "lo", "hi")

    def __init__(self, sys, k, coefs=None, lo=ZERO, hi=ZERO):
        self.sys, self.k, self.coefs, self.lo, self.hi = sys, k, coefs or {}, lo, hi

    def lift(self, x):
        return x if isinstance(x, Form) else Form(self.sys, Fraction(x))

    def __add__(self, other):
        o = self.lift(other)
        coefs = dict(self.coefs)
        for v, c in o.coefs.items():
            coefs[v] = coefs.get(v, ZERO) + c
        return Form(self.sys, self.k + o.k, {v: c for v, c in coefs.items() if c},
                    self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self):
        return Form(self.sys, -self.k, {v: -c for v, c in self.coefs.items()}, -self.hi, -self.lo)

    def __sub__(self, other):
        return self + -self.lift(other)

    def __rsub__(self, other):
        return self.lift(other) + -self

    def constant(self):
        return not self.coefs and not self.lo and not self.hi

    def times(self, r):
        lo, hi = sorted((self.lo * r, self.hi * r))
        return Form(self.sys, self.k * r, {v: c * r for v, c in self.coefs.items() if c * r},
                    lo, hi)

    def __mul__(self, other):
        o = self.lift(other)
        if o.constant():
            return self.times(o.k)
        if self.constant():
            return o.times(self.k)
        # f g = k_f g + k_g (f - k_f) + (f - k_f)(g - k_g)
        f0, g0 = self - self.k, o - o.k
        a, b = self.sys.range(f0)
        c, d = self.sys.range(g0)
        ends = [a * c, a * d, b * c, b * d]
        if o is self:  # x^2 >= 0
            ends = [ZERO if a <= 0 <= b else min(a * a, b * b), max(a * a, b * b)]
        return o.times(self.k) + f0.times(o.k) + Form(self.sys, ZERO, None, min(ends), max(ends))

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self.lift(other)
        if o.constant():
            return self.times(1 / o.k)
        lo, hi = self.sys.range(o)
        if lo <= 0 <= hi:
            raise Invalid("a division by a value that may be 0")
        return self * self.sys.between(1 / hi, 1 / lo)

    def __rtruediv__(self, other):
        return self.lift(other) / self

    def __gt__(self, other):
        """A ReLU's ``g > 0``: True when g >= 0 at every pair, False when g <= 0 (the
        branches agree at 0); otherwise the leaf does not hold."""
        lo, hi = self.sys.range(self - self.lift(other))
        if lo >= 0:
            return True
        if hi <= 0:
            return False
        raise Invalid("a ReLU whose sign the region does not decide")

    def __lt__(self, other):
        return self.lift(other) > self


class Relu(Form):
    """relu(g) as a value; its ``> 0`` is True, so the pass's ``g if g > 0 else 0`` and
    ``g u if g > 0 else 0`` take it whole."""

    __slots__ = ()

    def __gt__(self, other):
        return True


class FormSystem(OverSets):
    """The number system of :class:`Form` values (what ``forward`` needs of one)."""

    name = spec = "check"
    roundings = ()

    def __init__(self, model):
        self.enclose = IntervalSystem(for_model(number_system("fraction"), model).exp_digits)
        self.zero, self.one = Form(self, ZERO), Form(self, Fraction(1))
        self.region = self.n = None

    def range(self, f):
        """(least, greatest) of f over the region's pairs (an empty region: (0, 0))."""
        if not f.coefs:
            return f.k + f.lo, f.k + f.hi
        lo = extreme(self.region, self.n, f.coefs, min)
        if lo is None:
            return ZERO, ZERO
        return f.k + lo + f.lo, f.k + extreme(self.region, self.n, f.coefs, max) + f.hi

    def relu(self, g):
        """relu(g) over the region: g if g >= 0 there, 0 if g <= 0, else the chord
        lam g + [0, -lam l], lam = u / (u - l), [l, u] the range of g."""
        lo, hi = self.range(g)
        if lo >= 0:
            return Relu(self, g.k, g.coefs, g.lo, g.hi)
        if hi <= 0:
            return Relu(self, ZERO)
        lam = hi / (hi - lo)
        chord = g.times(lam)
        return Relu(self, chord.k, chord.coefs, chord.lo, chord.hi - lam * lo)

    def between(self, lo, hi):
        return Form(self, lo, None, ZERO, hi - lo)

    def _of(self, iv):
        return self.between(Fraction(iv.lo), Fraction(iv.hi))

    def _iv(self, f):
        lo, hi = self.range(f)
        p = self.enclose.point
        return self.enclose.value(p(lo).lo, p(hi).hi)

    def const(self, c):
        if isinstance(c, (int, Fraction)):
            return Form(self, Fraction(c))
        return self._of(self.enclose.const(c))

    slope = const

    def exp(self, x):
        return self._of(self.enclose.exp(self._iv(x)))

    def sqrt(self, x):
        return self._of(self.enclose.sqrt(self._iv(x)))

    def erf(self, x):
        return self._of(self.enclose.erf(self._iv(x)))

    def _sine(self, f, x):
        lo, hi = self.range(x)
        half = (hi - lo) / 2
        mid = self.enclose.point(lo + half)
        return self._of(f(mid)) + self.between(-half, half)

    def sin(self, x):
        return self._sine(self.enclose.sin, x)

    def cos(self, x):
        return self._sine(self.enclose.cos, x)

    def largest(self, values):
        return Form(self, max(self.range(v)[0] for v in values))

    def describe(self):
        return "affine forms over a region (the certificate checker)"


# ---- one leaf -----------------------------------------------------------------------------

def layout(model):
    """(the prompt's slots, the answer's targets): a slot is ("t", id), ("a", j), ("b", j);
    a target ("digit", place) or ("t", id)."""
    p = model.prompt
    slots = []
    for item in p.question:
        if item in ("a", "b"):
            order = range(p.digits - 1, -1, -1) if p.operands == "msb" else range(p.digits)
            slots += [(item, j) for j in order]
        else:
            slots.append(("t", model.vocab.index(item)))
    places = range(p.answer_digits - 1, -1, -1) if p.answer == "msb" else range(p.answer_digits)
    targets = [("digit", q) for q in places]
    if p.stop is not None:
        targets.append(("t", model.vocab.index(p.stop)))
    return slots, targets


class Leaves:
    """Re-decides leaves of one model."""

    def __init__(self, model):
        self.model, self.n = model, model.prompt.digits
        self.ns = FormSystem(model)
        self.compiled = compile_model(model, self.ns)
        self.ids = [model.vocab.index(str(d)) for d in range(10)]
        self.slots, self.targets = layout(model)
        rows = [[v.k if v.constant() else None for v in self.compiled.embed[t]]
                for t in self.ids]
        flat = all(None not in r for r in rows)
        self.line = flat and all(rows[d][s] == rows[0][s] + d * (rows[1][s] - rows[0][s])
                                 for d in range(10) for s in range(len(rows[0])))
        self.rows = rows

    def digit(self, form, col, lo, hi):
        """A digit token's embedding: its value is ``form``, in lo..hi, the digit of column
        ``col`` (("a", j), ("b", j), ("s", j) or the carry ("c", N)): the form through an
        affine embedding, else sum_d row_d [x = d] over the column's indicators (a carry's
        rows: row_0 + (row_1 - row_0) c)."""
        if lo == hi:
            return list(self.compiled.embed[self.ids[lo]])
        if self.line:
            r0, r1 = self.rows[0], self.rows[1]
            return [form.times(b - a) + a for a, b in zip(r0, r1)]
        out = []
        for column in zip(*(self.compiled.embed[self.ids[d]] for d in range(lo, hi + 1))):
            if col[0] == "c":
                out.append(column[0] + form * (column[1] - column[0]))
                continue
            value = Form(self.ns, ZERO)
            for d, v in zip(range(lo, hi + 1), column):
                value = value + Form(self.ns, ZERO, {col + (d,): Fraction(1)}) * v
            out.append(value)
        return out

    def row(self, slot, region):
        kind, j = slot
        ns = self.ns
        if kind == "t":
            return list(self.compiled.embed[j])
        if kind in ("a", "b"):
            lo, hi = region[kind][j]
            return self.digit(Form(ns, ZERO, {(kind, j): Fraction(1)}), (kind, j), lo, hi)
        if j > self.n:
            return list(self.compiled.embed[self.ids[0]])
        if j == self.n:
            c = region["c"][j]
            return self.digit(Form(ns, ZERO, {("c", j): Fraction(1)}), ("c", j), min(c), max(c))
        coefs = {("a", j): Fraction(1), ("b", j): Fraction(1), ("c", j + 1): Fraction(-10)}
        if j:
            coefs[("c", j)] = Fraction(1)
        return self.digit(Form(ns, ZERO, coefs), ("s", j), *region["s"][j])

    def holds(self, k, region):
        """Whether the target token's logit beats every other over the region (Invalid:
        why not)."""
        kind, q = self.targets[k]
        if kind == "t":
            token = q
        elif q > self.n:
            token = self.ids[0]
        else:
            lo, hi = (min(region["c"][q]), max(region["c"][q])) if q == self.n else region["s"][q]
            if lo != hi:
                raise Invalid(f"a leaf at position {k} whose target digit is not one digit")
            token = self.ids[lo]
        self.ns.region, self.ns.n = region, self.n
        slots = self.slots + [("sum", p) for _, p in self.targets[:k]]
        rows = [self.row(s, region) for s in slots]
        patch = {"hook_embed": lambda _: rows}
        for i, block in enumerate(self.model.blocks):
            if block.mlp is not None and block.mlp.act == "relu":
                patch[f"blocks.{i}.mlp.hook_pre"] = lambda pre: [[self.ns.relu(g) for g in r]
                                                                 for r in pre]
        logits = forward(self.compiled, [0] * len(rows), patch=patch, logits="last")[0][-1]
        t = list(self.compiled.readout_tokens).index(token)
        for u, other in enumerate(logits):
            if u != t and self.ns.range(logits[t] - other)[0] <= 0:
                raise Invalid(f"at position {k}, token {u}'s logit may reach the target's")
        return True


# ---- the certificate ----------------------------------------------------------------------

def load(path):
    """The certificate's JSON data if the file is a readable one of this format (at most
    MAX_BYTES), else None: the closed form's reader (``certificate.load``) then reads it and
    says what is wrong with it."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def check(cert, progress=None):
    """A one-line verdict if ``cert`` proves its model adds every pair; Invalid otherwise."""
    if not isinstance(cert, dict) or cert.get("format") != FORMAT or cert.get("version") != 1:
        raise Malformed(f"format: not a {FORMAT} of version 1")
    if not isinstance(cert.get("model"), str):
        raise Malformed("model: not the text of a model file")
    try:
        model = loads(cert["model"])
    except ValueError as why:
        raise Malformed(f"model: {why}") from None
    n = model.prompt.digits if model.prompt is not None else None
    if cert.get("digits") != n:
        raise Malformed(f"digits: not the model's N ({n})")
    leaves = Leaves(model)
    trees = cert.get("positions")
    if not isinstance(trees, list) or len(trees) != len(leaves.targets):
        raise Invalid(f"positions: {len(leaves.targets)} trees expected, one per answer token")
    done = [0]
    for k, tree in enumerate(trees):
        whole = root(n)
        if count(whole, n) != 10 ** (2 * n):
            raise Invalid("the root does not hold every pair")
        _node(leaves, k, tree, whole, done, progress)
    return (f"certificate valid: {cert.get('name', 'the')} model, N = {n}: every pair is "
            f"added right ({done[0]} leaves re-decided)")


def _node(leaves, k, node, region, done, progress, depth=0):
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        raise Invalid("a tree node that is not an object (or a tree too deep)")
    n = leaves.n
    if "split" in node:
        kids = node.get("children")
        parts = cut(region, n, node["split"])
        if not isinstance(kids, list) or len(kids) != len(parts):
            raise Invalid(f"split {node['split']!r}: {len(parts)} children expected")
        if sum(count(p, n) for p in parts) != count(region, n):
            raise Invalid(f"split {node['split']!r}: the children's counts do not add up")
        for kid, part in zip(kids, parts):
            _node(leaves, k, kid, part, done, progress, depth + 1)
        return
    leaf = node.get("leaf")
    size = count(region, n)
    if leaf == "empty":
        if size:
            raise Invalid(f"an 'empty' leaf of {size} pairs")
        return
    if leaf not in ("bound", "pair"):
        raise Invalid(f"a leaf {leaf!r} at position {k}: the certificate proves nothing")
    if leaf == "pair" and size != 1:
        raise Invalid(f"a 'pair' leaf of {size} pairs")
    leaves.holds(k, region)
    done[0] += 1
    if progress:
        progress(done[0], None, f" leaves, position {k}")
