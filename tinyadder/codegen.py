"""The fast path: a model's forward pass as straight-line Python, one function per kind of
position, written from ``plan`` and run for every untraced call of ``forward``.

``source(compiled, logits=True)`` is the text of the function that runs one position whose
logits are wanted (it computes what the readout and later positions read, plan rule 3);
``logits=False`` the one for a position whose logits are not (only what later positions
read). ``decoder_source(compiled)`` is greedy decoding
as one function: both kinds of position in two loops, the carried sums in locals, the first
largest logit picked in line. Locals are named after what they hold
(``count``, ``L1_cand3``, ``z3``), constants are bound by name, so the code can be printed and
read: ``tinyadder program --python``.

Each line performs the operation ``forward`` performs, in the same order, on the same operands,
except where ``plan`` shows that the difference cannot matter: a head that adds no term or a
unit with no output is not computed (rule 2), a carried head keeps its running sums (rule 1),
a first-block key is looked up per token (rule 4), FFN products may share a factor in an exact
system (rule 5), the decoder looks the first block up where its state and token recur (rule
6) and a carried head's 1 + D up by position where its exp(q k) is one constant (rule 8), and a
weight of exactly 1 multiplies nothing (1 x is x in every number system). What it
does not write out it leaves to ``forward``'s own functions, which ``forward`` hands it as
``ops`` (``linear``, ``score``, ``softmax1``, ``attend``): a textbook head, a first block's
keys per token.
tests/test_one_answer.py and tests/test_one_pass.py check the two passes bit for bit.

In a system with a ``scale`` (``numbers.scaled.ScaledSystem``, the fraction system's decider)
each value is written out as two ints instead, the ends of an interval at scale 2^-F
(``_Ints``): a sum adds the ends, an exact integer weight k multiplies them, an exact p/q
takes floor(p lo / q) and ceil(p hi / q), and a product of two intervals or an interval weight
rounds once, lo down and hi up (``>> F``); a quotient is ``divide``, an open ReGLU gate raises
``numbers.Undecided`` (``open_gate``), and a step's logits come back boxed (``box``); the
decoder picks its tokens on the ints (``_Ints.first_largest``).

A model with other operations (RoPE, RMSNorm, softmax, SwiGLU, GELU, grouped heads, linear and
tied readouts, fixed biases, positions) is decoded by ``greedy_general`` (plan rule 9): not
text, but ``forward``'s own functions on the same operands in the same order, with the first
block looked up per (token, position) and its scores per pair; in float32 its attention runs
on plain floats rounded through an ``array('f')`` (``_single_z``), in intervals as the real
number (``_enclosed_z``). tests/test_general_decoder.py checks it against the readable pass.
"""

import array
import decimal
import keyword
from fractions import Fraction
from itertools import repeat
from operator import itemgetter
import math
import re
import textwrap
import threading

from .numbers.rounding import Float32, _exp as exp_double

SAFE = re.compile(r"[^0-9A-Za-z_]")


def _identifier(text):
    """A Python identifier for a slot, head or unit name: ``cand0_plus`` for 'cand0+'."""
    name = SAFE.sub("_", text.replace("+", "_plus").replace("-", "_minus"))
    return f"_{name}" if not name or name[0].isdigit() or keyword.iskeyword(name) else name


# names the generated code uses for itself: a slot may not take them
RESERVED = {"token", "pos", "layers", "new_layers", "x", "L", "k", "v", "e", "ev", "s", "n",
            "d", "g", "t", "zero", "one", "ns", "embed", "token_kv", "exp_qk", "attend_one",
            "ops", "kv", "F", "ONE", "zeros", "box", "divide", "product", "open_gate",
            "embed_ints", "interval", "R", "embed_floats", "tokens", "n_new", "pick", "readout",
            "logits", "best", "total", "hit", "his", "los", "h", "outs"}


def _locals(names):
    """Distinct identifiers for a list of names, none of them one the code uses itself."""
    out = list(RESERVED)
    for text in names:
        name = _identifier(text)
        while name in out:
            name += "_"
        out.append(name)
    return out[len(RESERVED):]


class _Constants(dict):
    """The environment of generated code: ``name(value, what)`` binds a constant to an
    identifier made of ``what`` (its tensor and entry: ``L0_W_in_count_cand0``)."""

    def name(self, value, what):
        """The identifier bound to ``value``: the one ``what`` names if it holds that constant
        already (``_one_constant``), else a fresh one."""
        key = _identifier(what)
        while key in self and not _one_constant(self[key], value):
            key += "_"
        self[key] = value
        return key


def _one_constant(a, b):
    """Whether constants a and b are one: the same object, equal ints, or floats of the same
    bits (a decoder's two positions bind them twice)."""
    if a is b:
        return True
    if type(a) is not type(b) or type(a) not in (int, float):
        return False
    return a == b if type(a) is int else repr(a) == repr(b)


def _what(layer, tensor, sources, targets):
    """``what(s, t)``: the name of entry (s, t) of a tensor (s None: its bias)."""
    def what(s, t):
        return (f"L{layer}_b_{tensor}_{targets[t]}" if s is None else
                f"L{layer}_W_{tensor}_{sources[s]}_{targets[t]}")
    return what


def _token_kv(ops, ns, block, row):
    """(k, v, e, e v) of a first-block position from its embedding row (rule 4): e = exp(q k)
    and e v for the carried heads, None for the others."""
    k, v = ops.linear(row, block.k, ns.zero), ops.linear(row, block.v, ns.zero)
    e = _exp_qk(ops, ns, block, k)
    return k, v, e, [w * v[h] if w is not None else None for h, w in enumerate(e)]


def _token_ints(ops, ns, block, row):
    """(k, v, ints) of a first-block position for the integer code: its boxed keys and values,
    and the ends of e and e v of each carried head, in head order."""
    k, v, e, ev = _token_kv(ops, ns, block, row)
    ints = [end for h, head in enumerate(block.heads) if head.carried
            for value in (e[h], ev[h]) for end in ns.ints(value)]
    return k, v, tuple(ints)


def _exp_qk(ops, ns, block, k):
    """e = exp(q k) of the carried heads of a position whose keys are k, None elsewhere."""
    return [ns.exp(ops.score([head.q_const], [k[h]], head, 0, 0)) if head.carried else None
            for h, head in enumerate(block.heads)]


def _attend_one(ops, ns, q, layer, h, head, i):
    """A textbook head's z at position i, as ``forward.attention`` computes it."""
    scores = [ops.score([q], [layer.keys[j][h]], head, i, j) for j in range(i + 1)]
    return ops.attend(ops.softmax1(scores, ns), [row[h] for row in layer.values[:i + 1]],
                      ns.zero)


class _Values:
    """Writes each operation on the number system's own values: one local per value, Python's
    operators. Each method returns the lines of one operation (``_Ints`` writes them on ints).
    """

    # rule 7 where -(w x) is (-w) x and -(x + y) is (-x) + (-y) bit for bit: rounding to
    # nearest, ties to even, is symmetric in sign
    opposes = frozenset({"decimal", "float"})
    negates = True  # rule 7's second post as g (-c): -c bound as a constant
    merges = False  # rule 7's two posts in two names
    shifts = False  # rule 10: a rounding system's logits are the values its order defines

    def __init__(self, compiled, env):
        self.ns, self.env = compiled.ns, env
        self.carried_kv = {}  # (block, head): the texts of a later block's e and e v
        self.constant_e = {}  # (block, head): a later block's e where it is one constant
        self.tables = {}  # (block, head): its 1 + D by position (plan rule 8)

    def weights(self, layer, tensor, sources, targets):
        """``const(w, s, t)``: entry (s, t) of a tensor (s None: its bias), bound by name."""
        what = _what(layer, tensor, sources, targets)
        return lambda w, s, t: self.env.name(w, what(s, t))

    def constant(self, value, what):
        """A plan constant (a decay), bound by name."""
        return self.env.name(value, what)

    def affine(self, affine, t, var, const):
        """Target t of an Affine, w_1 x_1 + w_2 x_2 + ... + b_t, ``var(i)`` naming source i:
        an absent bias is no term, a weight of 1 is x."""
        b = affine.bias[t]
        terms = [var(i) if i in affine.unit[t] else f"{const(w, i, t)} * {var(i)}"
                 for i, w in affine.columns[t]]
        terms += [const(b, None, t)] if b is not None else []
        return " + ".join(terms) or "zero"

    def embed(self, row):
        return [f"    {', '.join(row)}, = x = embed[token]"]

    def outputs(self, row):
        """The locals that hold the stream ``row`` (its slots' names)."""
        return [name for name in row if name != "zero"]

    zeros = "(zero, zero)"  # the running sums before the first position
    # a state's key (rule 6): repr tells -0.0 from 0.0 and Decimal('1.0') from Decimal('1')
    state_key = staticmethod(repr)

    @staticmethod
    def sums(n="n", d="d"):
        """The locals of a carried head's running sums N and D."""
        return f"{n}, {d}"

    def first_kv(self, i, memo, weights, block, names):
        """(lines, keys, values): the per-token lookup (rule 4), and the names of the keys and
        values a cache keeps."""
        return [f"    k, v, e, ev = {memo}.get(token) or {memo}.setdefault("
                f"token, token_kv(ops, ns, {weights}, x))"], "k", "v"

    def later_kv(self, i, block, row, heads, names, inp):
        """Each head's key and value in a local of its own (the cache's rows are lists of
        them), e = exp(q k) a constant per head or per position (``exp_qk``), and a carried
        head's e v."""
        lines, c, rows = [], self.env.name, {}
        for x in "kv":
            const = self.weights(i, x.upper(), inp, heads)
            values = [f"L{i}_{x}_{names[h]}" for h in range(len(heads))]
            for h, value in enumerate(values):
                term = self.affine(getattr(block, x), h, row.__getitem__, const)
                lines.append(f"    {value} = {term}")
            rows[x] = f"[{', '.join(values)}]"
        per_position = not all(h.exp_qk is not None for h in block.heads if h.carried)
        if per_position:
            lines.append(f"    e = exp_qk(ops, ns, {c(block, f'L{i}_block')}, {rows['k']})")
        for h, b in enumerate(block.heads):
            if b.carried:
                e = f"e[{h}]" if per_position else c(b.exp_qk, f"L{i}_exp_qk_{names[h]}")
                ev = f"L{i}_ev_{names[h]}"
                one = not per_position and repr(b.exp_qk) == repr(self.ns.one)  # 1 v is v
                lines.append(f"    {ev} = {'' if one else f'{e} * '}L{i}_v_{names[h]}")
                self.carried_kv[i, h] = e, ev
                if not per_position:
                    self.constant_e[i, h] = b.exp_qk
        return lines, rows["k"], rows["v"]

    def denominators(self, i, h, name, decay):
        """The name of the table of 1 + D by position of layer i's carried head h (plan rule
        8), or None where the code's e is not one constant (a first block's e comes per token;
        the integer and single-precision writers bind e their own way and keep D)."""
        if (i, h) not in self.constant_e:
            return None
        if (i, h) not in self.tables:
            table = _Denominators(self.ns, decay, self.constant_e[i, h])
            self.tables[i, h] = self.env.name(table, f"L{i}_den_{name}")
        return self.tables[i, h]

    def carry(self, i, h, name, decay, n="n", d="d"):
        """A carried head's running sums one position on (rule 1, as ``forward.carry``), in
        the locals ``n`` and ``d`` (``d`` None: N alone, D being looked up, rule 8): e and
        e v from the first block's per-token lists, else the locals of ``later_kv``."""
        e, ev = self.carried_kv.get((i, h), (f"e[{h}]", f"ev[{h}]"))
        if d is None:
            return [f"    {n} = {n} + {ev}" if decay is None else f"    {n} = {decay} * {n} + {ev}"]
        if decay is None:
            return [f"    {n}, {d} = {n} + {ev}, {d} + {e}"]
        return [f"    {n}, {d} = {decay} * {n} + {ev}, {decay} * {d} + {e}"]

    def carried_z(self, z, n="n", d="d", den=None):
        """z = N / (1 + D) of the sums; with ``den``, the table of 1 + D by position."""
        if den is not None:
            return [f"    {z} = {n} / {den}[pos]"]
        return [f"    {z} = {n} / (one + {d})"]

    def textbook(self, z, q, h, head):
        return [f"    {z} = attend_one(ops, ns, {q}, L, {h}, {head}, pos)"]

    def assign(self, name, value, base=None):
        """name = value, or name = base + (value)."""
        return [f"    {name} = {value}" if base is None else f"    {name} = {base} + ({value})"]

    def unit(self, post, gate, up, u, var, const):
        """post = relu(gate) (up), the up map not computed where the gate is shut."""
        return [f"    g = {gate}",
                f"    {post} = g * ({self.affine(up, u, var, const)}) if g > zero else zero"]

    @staticmethod
    def opposed(block, pairs):
        """The pairs of rule 7 this writer writes together: all of them."""
        return pairs

    def opposite(self, posts, gate, ups, negated=None, rows=None):
        """Two units whose gates are g and -g (rule 7): g once, and at most one of them open;
        the second one's gate is -g, the value its own gate takes (``ups``: the texts of the
        two up maps). Where the second up map is a constant c, ``negated`` names -c, and its
        post (-g) c is written g (-c): the same product to the bit, by the same symmetry."""
        (p, q), (up_p, up_q) = posts, ups
        second = f"g * {negated}" if negated is not None else f"(-g) * ({up_q})"
        return [f"    g = {gate}", "    if g > zero:", f"        {p} = g * ({up_p})",
                f"        {q} = zero", "    elif g < zero:", f"        {p} = zero",
                f"        {q} = {second}", "    else:", f"        {p} = {q} = zero"]

    def shared(self, gate, x, posts, common):
        """t = relu(gate) x once (rule 5), then each unit's post = w t (``posts``: (name, w,
        what names w), w None for a weight of 1)."""
        lines = [f"    g = {gate}", f"    t = g * {x} if g > zero else zero"]
        return lines + [f"    {post} = t" if w is None else f"    {post} = {self.env.name(w, what)} * t"
                        for post, w, what in posts]

    def logits(self, row, readout):
        """The text of the list of logits: the negated readout slots."""
        return f"[{', '.join('-' + row[s] for s in readout)}]"

    def first_largest(self, row, readout):
        """Lines that set ``best`` to ``generate.argmax`` of the logits of the readout slots
        ``row[s]``. Over values with a total order that is the first of the largest logits
        -x, so the first of the smallest x, ``index(min(.))``: -x > -y exactly when y > x,
        negation being exact. Decimal's values are ordered (its context traps the operations
        that would make a NaN), a float's when their sum is not a NaN; else ``pick`` of the
        logits."""
        values = f"[{', '.join(row[s] for s in readout)}]"
        if self.ns.name == "decimal":
            return [f"logits = {values}", "best = logits.index(min(logits))"]
        if self.ns.name in ("float", "float32"):
            return [f"logits = {values}", "total = sum(logits)",
                    "best = (logits.index(min(logits)) if total == total else",
                    "        pick([-x for x in logits]))"]
        return [f"best = pick({self.logits(row, readout)})"]


def _same(x):
    """The ends of 1 x: x's own."""
    return f"{x}_lo", f"{x}_hi"


def _times_gate(x):
    """The ends of g x for a gate g > 0: g_lo or g_hi, by the sign of each end of x."""
    return (f"(g_lo if {x}_lo >= 0 else g_hi) * {x}_lo >> F, "
            f"-(-(g_hi if {x}_hi >= 0 else g_lo) * {x}_hi >> F)")


LONG = 2048  # from this scale (bits) on, long products take one long multiplication


def _common_factor(weights):
    """The gcd of positive integer weights (points) of a group: 1 when one is not such an
    integer, or when the group is one short weight."""
    values = [Fraction(w.lo) for w in weights if w is not None and w.lo == w.hi]
    if len(values) < len(weights) or any(v.denominator != 1 or v < 0 for v in values):
        return 1
    factor = math.gcd(*(int(v) for v in values))
    return factor if len(values) > 1 or factor.bit_length() >= LONG else 1


def _integer(w):
    """The int of a weight that is an integer point (an int, Fraction or interval of one
    point), else None."""
    lo, hi = (w.lo, w.hi) if hasattr(w, "lo") else (w, w)
    if lo != hi:
        return None
    r = Fraction(lo)
    return int(r) if r.denominator == 1 else None


def _kv_names(layer, head):
    """The integer code's names of a carried head's e and e v."""
    return f"L{layer}_e_{head}", f"L{layer}_ev_{head}"


class _Ints(_Values):
    """Writes each operation on intervals at scale 2^-F, a value x as the ints ``x_lo`` and
    ``x_hi`` (the module docstring's rules). A weight or decay is a *term*: a function of a
    value's name giving the texts of the ends of w x."""

    # rule 7 on ints, for the pairs ``_folded`` reads: k x and -k x have the ends of x
    opposes = frozenset({"scaled"})
    negates = False
    merges = True  # rule 7's pair in one name where its posts go out alike (``merged``)
    shifts = True  # rule 10: enclosures of exact values decide the real argmax

    def __init__(self, compiled, env):
        super().__init__(compiled, env)
        ns = self.ns
        env.update(F=ns.scale, ONE=1 << ns.scale, zeros=(0, 0, 0, 0), zero_lo=0, zero_hi=0,
                   box=ns.box, divide=ns.divide, product=ns.product, open_gate=ns.open_gate,
                   interval=ns.interval, token_kv=_token_ints, embed_ints=None)
        self.compiled, self.integral = compiled, set()

    def weights(self, layer, tensor, sources, targets):
        """``const(w, s, t)``: the term of a weight; the bound ends of a bias (s None)."""
        what = _what(layer, tensor, sources, targets)
        def const(w, s, t, term=False):
            return self.term(w, what(s, t)) if term or s is not None else self.ends(w, what(s, t))
        return const

    def ends(self, value, what):
        """(lo, hi): the names of a constant's ints (one name when they are equal)."""
        lo, hi = self.ns.ints(value)
        if lo == hi:
            name = self.env.name(lo, what)
            return name, name
        return self.env.name(lo, f"{what}_lo"), self.env.name(hi, f"{what}_hi")

    def term(self, w, what):
        """The term of a constant w (an interval, or a rational): exact (k x, floor and
        ceiling of p x / q) when w is a point, else an interval product rounded outward."""
        if hasattr(w, "lo"):
            if w.lo != w.hi:
                return self._interval_term(w, what)
            w = w.lo
        r, name = Fraction(w), self.env.name
        if r == 1:
            return _same
        if r.denominator == 1:
            k = name(int(r), what)
            if r > 0:
                return lambda x: (f"{k} * {x}_lo", f"{k} * {x}_hi")
            return lambda x: (f"{k} * {x}_hi", f"{k} * {x}_lo")
        p = abs(r.numerator)
        times = "" if p == 1 else f"{name(p, f'{what}_num')} * "
        q = name(r.denominator, f"{what}_den")
        if r > 0:  # floor(p lo / q), ceil(p hi / q)
            return lambda x: (f"({times}{x}_lo // {q})", f"-({times}-{x}_hi // {q})")
        return lambda x: (f"({times}-{x}_hi // {q})", f"-({times}{x}_lo // {q})")

    def _interval_term(self, w, what):
        """[a, b] x: the product of ends that bounds it, shifted back by F (floor for lo,
        ceiling for hi); an interval of either sign goes through ``product``."""
        a, b = self.ends(w, what)
        lo, hi = self.ns.ints(w)
        if lo >= 0:
            return lambda x: (f"(({a} if {x}_lo >= 0 else {b}) * {x}_lo >> F)",
                              f"-(-({b} if {x}_hi >= 0 else {a}) * {x}_hi >> F)")
        if hi <= 0:
            return lambda x: (f"(({a} if {x}_hi >= 0 else {b}) * {x}_hi >> F)",
                              f"-(-({a} if {x}_lo < 0 else {b}) * {x}_lo >> F)")
        return lambda x: (f"product({a}, {b}, {x}_lo, {x}_hi)[0]",
                          f"product({a}, {b}, {x}_lo, {x}_hi)[1]")

    def constant(self, value, what):
        return self.term(value, what)

    def affine(self, affine, t, var, const):
        """(lo, hi): the texts of the ends of target t of an Affine; a source named None is
        no term (the second unit of a merged pair, ``opposite``)."""
        ends = [const(w, i, t)(var(i)) for i, w in affine.columns[t] if var(i) is not None]
        if affine.bias[t] is not None:
            ends.append(const(affine.bias[t], None, t))
        return " + ".join(lo for lo, _ in ends) or "0", " + ".join(hi for _, hi in ends) or "0"

    def embed(self, row):
        """The embedded slots' ends per token, and ``x_k``, the integer itself, for a slot
        that holds an integer for every token (``integral``)."""
        embed, one = self.compiled.embed, 1 << self.ns.scale
        ends = [[self.ns.ints(r[s]) for r in embed] for s in range(len(row))]
        whole = [s for s in range(len(row))
                 if all(lo == hi and not lo % one for lo, hi in ends[s])]
        self.integral = {row[s] for s in whole}
        self.env["embed_ints"] = tuple(
            tuple(end for s in range(len(row)) for end in ends[s][t])
            + tuple(ends[s][t][0] >> self.ns.scale for s in whole) for t in range(len(embed)))
        names = [f"{s}_lo, {s}_hi" for s in row] + [f"{row[s]}_k" for s in whole]
        return [f"    {', '.join(names)}, = embed_ints[token]"]

    def outputs(self, row):
        """The locals that hold the stream ``row``: each slot's two ends, and the integer of a
        slot that holds one (``integral``)."""
        return ([f"{name}_{end}" for name in row if name != "zero" for end in ("lo", "hi")]
                + [f"{name}_k" for name in row if name in self.integral])

    def first_kv(self, i, memo, weights, block, names):
        """The boxed keys and values for the cache, and the carried heads' e and e v as ints,
        per token."""
        ends = [f"{x}_{end}" for h, head in enumerate(block.heads) if head.carried
                for x in _kv_names(i, names[h]) for end in ("lo", "hi")]
        return [f"    k, v, kv = {memo}.get(token) or {memo}.setdefault("
                f"token, token_kv(ops, ns, {weights}, embed[token]))"
                ] + ([f"    {', '.join(ends)}, = kv"] if ends else []), "k", "v"

    def later_kv(self, i, block, row, heads, names, inp):
        """The live heads' values (and keys, where exp(q k) is per position or a head is
        textbook) as ints, the carried heads' e and e v; the cache keeps boxed keys and values
        only for a textbook head."""
        heads_of = block.heads
        textbook = any(not heads_of[h].carried for h in block.live)
        per_position = any(heads_of[h].exp_qk is None for h in block.live if heads_of[h].carried)
        lines, boxed = [], {}
        for x in "kv":
            const = self.weights(i, x.upper(), inp, heads)
            for h in block.live:
                if x == "k" and not (textbook or per_position):
                    continue
                value = f"L{i}_{x}_{names[h]}"
                lo, hi = self.affine(getattr(block, x), h, row.__getitem__, const)
                lines.append(f"    {value}_lo, {value}_hi = {lo}, {hi}")
                boxed[x, h] = f"interval({value}_lo, {value}_hi)"
        k, v = (f"[{', '.join(boxed.get((x, h), 'None') for h in range(len(heads)))}]"
                for x in "kv")
        if per_position:
            lines.append(f"    e = exp_qk(ops, ns, {self.env.name(block, f'L{i}_block')}, {k})")
        for h in block.live:
            if not heads_of[h].carried:
                continue
            e, ev = _kv_names(i, names[h])
            value = f"L{i}_v_{names[h]}"
            if per_position:
                lines += [f"    {e}_lo, {e}_hi = ns.ints(e[{h}])",
                          f"    {ev}_lo, {ev}_hi = product({e}_lo, {e}_hi, {value}_lo, "
                          f"{value}_hi)"]
            else:
                exp_qk = heads_of[h].exp_qk
                lo, hi = self.ends(exp_qk, f"L{i}_exp_qk_{names[h]}")
                times = self.term(exp_qk, f"L{i}_exp_qk_{names[h]}")
                lines += [f"    {e}_lo, {e}_hi = {lo}, {hi}",
                          f"    {ev}_lo, {ev}_hi = {', '.join(times(value))}"]
        return lines, (k if textbook else "None"), (v if textbook else "None")

    zeros = "zeros"
    state_key = staticmethod(tuple)  # ints are their own exact representation

    @staticmethod
    def sums(n="n", d="d"):
        return f"{n}_lo, {n}_hi, {d}_lo, {d}_hi"

    def carry(self, i, h, name, decay, n="n", d="d"):
        e, ev = _kv_names(i, name)
        r = decay or _same
        lines = []
        for x, add in ((n, ev), (d, e)):
            lo, hi = r(x)
            lines.append(f"    {x}_lo, {x}_hi = {lo} + {add}_lo, {hi} + {add}_hi")
        return lines

    def carried_z(self, z, n="n", d="d"):
        return [f"    {z}_lo, {z}_hi = divide({n}_lo, {n}_hi, {d}_lo + ONE, {d}_hi + ONE)"]

    def textbook(self, z, q, h, head):
        return [f"    {z}_lo, {z}_hi = ns.ints(attend_one(ops, ns, interval({q[0]}, {q[1]}), "
                f"L, {h}, {head}, pos))"]

    def assign(self, name, value, base=None):
        lo, hi = value if base is None else (f"{base}_lo + {value[0]}", f"{base}_hi + {value[1]}")
        return [f"    {name}_lo, {name}_hi = {lo}, {hi}"]

    def _gated(self, gate, out, then):
        """relu(gate) times something: ``then(g, times)`` gives the lines where g > 0, ``g``
        naming the gate's ends and ``times(x)`` the text of the ends of g x (long ends: one
        ``product``); out = 0 where g <= 0; and
        Undecided where the gate's interval holds 0 and a positive number. A gate that is an
        embedded slot holding an integer for every token multiplies as that integer."""
        base = gate[0][:-3]
        if gate == _same(base) and base in self.integral:
            lines = [f"    if {base}_k > 0:"] + [f"        {line}" for line in then(
                base, lambda x: f"{base}_k * {x}_lo, {base}_k * {x}_hi")]
            return lines + ["    else:", f"        {out}_lo = {out}_hi = 0"]
        times = _times_gate if self.ns.scale < LONG else (
            lambda x: f"product(g_lo, g_hi, {x}_lo, {x}_hi)")
        return ([f"    g_lo, g_hi = {gate[0]}, {gate[1]}", "    if g_lo > 0:"]
                + [f"        {line}" for line in then("g", times)]
                + ["    elif g_hi <= 0:", f"        {out}_lo = {out}_hi = 0",
                   "    else:", "        open_gate(g_lo, g_hi)"])

    def unit(self, post, gate, up, u, var, const):
        if not up.columns[u] and up.bias[u] is not None:  # a constant up: its term on g
            term = const(up.bias[u], None, u, term=True)
            return self._gated(gate, post, lambda g, times: [
                f"{post}_lo, {post}_hi = {', '.join(term(g))}"])
        up_lo, up_hi = self.affine(up, u, var, const)
        return self._gated(gate, post, lambda g, times: [
            f"t_lo, t_hi = {up_lo}, {up_hi}", f"{post}_lo, {post}_hi = {times('t')}"])

    def opposed(self, block, pairs):
        """The pairs of rule 7 this writer writes together: those ``_folded`` reads."""
        return {u: v for u, v in pairs.items() if self._folded(block, u, v) is not None}

    def opposite(self, posts, gate, ups, negated=None, rows=None):
        """Two units whose gates are k x and -k x (rule 7, ``_folded``: one integer weight,
        no bias) and whose up maps are the integer constants c and c': the first open where
        k x_lo > 0 (x_hi < 0 for k < 0), the second where k x_hi < 0, both shut where x is 0,
        else Undecided, as each unit alone decides; the posts (c k) x and (-c' k) x are the
        ints c (k x) and c' (-k x) of the units alone."""
        (p, q), (block, u, v, mid) = posts, rows
        x, k, m_p, m_q = self._folded(block, u, v)
        x, merged = mid[x], self.merged(block, u, v)
        first, second = ("lo > 0", "hi < 0") if k > 0 else ("hi < 0", "lo > 0")
        lines = []
        for test, open_, shut, m in ((f"if {x}_{first}", p, q, m_p),
                                     (f"elif {x}_{second}", q, p, m_q)):
            lo, hi = self.term(Fraction(m), f"{open_}_factor")(x)
            into = p if merged else open_
            lines += [f"    {test}:", f"        {into}_lo, {into}_hi = {lo}, {hi}"]
            lines += [] if merged else [f"        {shut}_lo = {shut}_hi = 0"]
        both = f"{p}_lo = {p}_hi = 0" if merged else f"{p}_lo = {p}_hi = {q}_lo = {q}_hi = 0"
        return lines + [f"    elif {x}_lo == 0 == {x}_hi:", f"        {both}",
                        "    else:", f"        open_gate({x}_lo, {x}_hi)"]

    @staticmethod
    def merged(block, u, v):
        """Whether the pair's two posts go out alike (the same weight, representation and
        all, into each slot), so that, one of them being 0, the open one is written into
        the first's name and the second is no term of the output map (w p + w 0 is w p on
        ints)."""
        return all(repr(dict(column).get(u)) == repr(dict(column).get(v))
                   for column in block.down.columns)

    @staticmethod
    def _folded(block, u, v):
        """(x, k, c k, -c' k) where unit u's gate is k x (k an integer point, no bias) and
        the up maps of u and v are the integer points c and c'; else None."""
        column, c, c2 = block.gate.columns[u], block.up.bias[u], block.up.bias[v]
        if (len(column) != 1 or block.gate.bias[u] is not None or block.up.columns[u]
                or block.up.columns[v] or c is None or c2 is None):
            return None
        (x, k), = column
        k, c, c2 = (_integer(w) for w in (k, c, c2))
        if None in (k, c, c2):
            return None
        return x, k, c * k, -c2 * k

    def shared(self, gate, x, posts, common):
        """As ``_Values.shared``; integer weights w_u with a common factor G > 1 take
        (w_u / G) (G t): one long product for the group (``common`` names G)."""
        lines = self._gated(gate, "t", lambda g, times: [f"t_lo, t_hi = {times(x)}"])
        factor = _common_factor([w for _, w, _ in posts])
        if factor > 1:
            g = self.env.name(factor, common)
            if factor.bit_length() < LONG:
                lines.append(f"    t_lo, t_hi = {g} * t_lo, {g} * t_hi")
            else:  # one long product: G hi = G lo + G (hi - lo), the width being short
                lines += [f"    t_hi = {g} * (t_hi - t_lo)", f"    t_lo = {g} * t_lo",
                          "    t_hi += t_lo"]
            posts = [(post, Fraction(w.lo) / factor, f"{what}_over_common")
                     for post, w, what in posts]
        for post, w, what in posts:
            term = _same if w is None else self.term(w, what)
            lines.append(f"    {post}_lo, {post}_hi = {', '.join(term('t'))}")
        return lines

    def logits(self, row, readout):
        return f"[{', '.join(f'box(-{row[s]}_hi, -{row[s]}_lo)' for s in readout)}]"

    def first_largest(self, row, readout):
        """``generate.argmax`` of the boxed logits -[lo_j, hi_j], on the ints: it returns the
        index w whose logit is certainly above every one before it (lo_j > hi_w) and
        certainly not below one after it (lo_j >= hi_w), and raises Undecided where there is
        none. Such a w has the largest lower end -hi_w, strictly so before it: it is the
        first index of the least hi, so that one index is checked, and ``pick`` of the
        boxed logits decides only where the check fails (it raises there)."""
        ends = [[f"{row[s]}_{end}" for s in readout] for end in ("hi", "lo")]
        # the others' least lo, with w's own lo set above h: below h fails, and equal to h
        # fails where the first such lo comes before w
        return [f"his = [{', '.join(ends[0])}]", "h = min(his)", "best = his.index(h)",
                f"los = [{', '.join(ends[1])}]", "los[best] = h + 1", "m = min(los)",
                "if m < h or m == h and los.index(h) < best:",
                f"    best = pick({self.logits(row, readout)})"]


class _Chain:
    """An affine target in the single-precision code: its terms (weight name or None for a
    weight of 1, value name) and bias name, summed left to right, every product and sum
    rounded to single precision through ``R`` (an ``array('f')``: a store rounds)."""

    def __init__(self, terms, bias):
        self.terms, self.bias = terms, bias

    def into(self, dest):
        """(lines, name): the lines that leave the rounded sum in ``dest``, and the name that
        holds it (a bare value or constant needs no line and names itself)."""
        lines, acc = [], None
        parts = [(w, x) for w, x in self.terms] + ([(None, self.bias)] if self.bias else [])
        for w, x in parts:
            if w is not None:
                lines.append(f"R[0] = {w} * {x}; {dest} = R[0]" if acc is None else
                             f"R[0] = {w} * {x}; R[0] = {acc} + R[0]; {dest} = R[0]")
            elif acc is not None:
                lines.append(f"R[0] = {acc} + {x}; {dest} = R[0]")
            acc = dest if w is not None or acc is not None else x
        return lines, acc or "zero"


class _Singles(_Values):
    """Writes each operation on plain floats that hold IEEE singles, every +, -, *, / done in
    double and rounded once to single precision by a store into ``R``, an ``array('f')``
    (for singles that is IEEE single arithmetic exactly: ``numbers.Float32``). Constants are
    bound as plain floats; what ``forward``'s functions compute (per-token keys, exp) stays
    ``Float32``."""

    def __init__(self, compiled, env):
        super().__init__(compiled, env)
        env.update(zero=0.0, one=1.0, R=array.array("f", [0.0]), token_kv=_token_floats,
                   embed_floats=tuple(tuple(float(x) for x in row) for row in compiled.embed))

    def weights(self, layer, tensor, sources, targets):
        what = _what(layer, tensor, sources, targets)
        return lambda w, s, t: self.env.name(float(w), what(s, t))

    def constant(self, value, what):
        return self.env.name(float(value), what)

    def affine(self, affine, t, var, const):
        b = affine.bias[t]
        terms = [(None if i in affine.unit[t] else const(w, i, t), var(i))
                 for i, w in affine.columns[t]]
        return _Chain(terms, const(b, None, t) if b is not None else None)

    def embed(self, row):
        return [f"    {', '.join(row)}, = embed_floats[token]"]

    def first_kv(self, i, memo, weights, block, names):
        return [f"    k, v, e, ev = {memo}.get(token) or {memo}.setdefault("
                f"token, token_kv(ops, ns, {weights}, embed[token]))"], "k", "v"

    def later_kv(self, i, block, row, heads, names, inp):
        lines, c = [], self.env.name
        for x in "kv":
            const = self.weights(i, x.upper(), inp, heads)
            values = []
            for h in range(len(heads)):
                more, value = self.affine(getattr(block, x), h, row.__getitem__, const).into(
                    f"L{i}_{x}_{names[h]}")
                lines += [f"    {line}" for line in more]
                values.append(value)
            lines.append(f"    {x} = [{', '.join(values)}]")
        if all(h.exp_qk is not None for h in block.heads if h.carried):
            exp_qk = [None if h.exp_qk is None else float(h.exp_qk) for h in block.heads]
            lines.append(f"    e = {c(exp_qk, f'L{i}_exp_qk')}")
        else:
            lines.append(f"    e = [None if w is None else float(w) for w in exp_qk(ops, ns, "
                         f"{c(block, f'L{i}_block')}, [ns.const(w) for w in k])]")
        ev = []
        for h, b in enumerate(block.heads):
            if b.carried:
                lines.append(f"    R[0] = e[{h}] * v[{h}]; L{i}_ev_{names[h]} = R[0]")
            ev.append(f"L{i}_ev_{names[h]}" if b.carried else "None")
        return lines + [f"    ev = [{', '.join(ev)}]"], "k", "v"

    def carry(self, i, h, name, decay, n="n", d="d"):
        return [f"    R[0] = {x} + {add}[{h}]; {x} = R[0]" if decay is None else
                f"    R[0] = {decay} * {x}; R[0] = R[0] + {add}[{h}]; {x} = R[0]"
                for x, add in ((n, "ev"), (d, "e"))]

    def carried_z(self, z, n="n", d="d"):
        return [f"    R[0] = one + {d}; R[0] = {n} / R[0]; {z} = R[0]"]

    def textbook(self, z, q, h, head):
        lines, value = q.into("t")
        return [f"    {line}" for line in lines] + [
            f"    {z} = float(attend_one(ops, ns, ns.const({value}), L, {h}, {head}, pos))"]

    def assign(self, name, value, base=None):
        lines, result = value.into(name)
        lines = [f"    {line}" for line in lines]
        if base is not None:
            return lines + [f"    R[0] = {base} + {result}; {name} = R[0]"]
        return lines + ([f"    {name} = {result}"] if result != name else [])

    def unit(self, post, gate, up, u, var, const):
        gate_lines, g = gate.into("g")
        up_lines, t = self.affine(up, u, var, const).into("t")
        return ([f"    {line}" for line in gate_lines] + [f"    if {g} > zero:"]
                + [f"        {line}" for line in up_lines]
                + [f"        R[0] = {g} * {t}; {post} = R[0]", "    else:",
                   f"        {post} = zero"])


def _token_floats(ops, ns, block, row):
    """(k, v, e, e v) of a first-block position for the single-precision code: its keys and
    values for the cache, and e and e v as plain floats."""
    k, v, e, ev = _token_kv(ops, ns, block, row)
    return k, v, [None if x is None else float(x) for x in e], [
        None if x is None else float(x) for x in ev]


def on_ints(compiled):
    """Whether the step code of ``compiled`` runs on scaled ints (a system with a ``scale``):
    then its KV cache holds ints, which only that code reads."""
    return compiled.fast and getattr(compiled.ns, "scale", None) is not None


def _writer(compiled):
    """The class that writes the step code of ``compiled``."""
    if on_ints(compiled):
        return _Ints
    return _Singles if compiled.fast and compiled.ns.name == "float32" else _Values


def _environment(compiled):
    """The writer of ``compiled``'s code and the environment it binds its constants in."""
    ns = compiled.ns
    env = _Constants(zero=ns.zero, one=ns.one, ns=ns, embed=compiled.embed,
                     token_kv=_token_kv, exp_qk=_exp_qk, attend_one=_attend_one)
    return _writer(compiled)(compiled, env), env


def _position(compiled, w, logits, memory, blocks=None, row=None, kv=None, state=False,
              argmax=False):
    """(lines, row, sums): the operations of one position, indented for a function body, the
    locals holding the final stream's slots, and ``sums``: (locals, their value before the
    first position) of each carried head kept across positions. With ``memory`` the carried
    sums N and D of layer i's head h live in the locals ``Li_n_h`` and ``Li_d_h``, N alone
    where 1 + D is looked up by position (rule 8) (``decoder_source``); with ``state`` too,
    in one tuple ``Li_sums_h`` each (the first block's state, rule 6); else in the KV cache
    ``layers``, which also keeps keys and values; with ``memory`` those only for a block with
    a textbook head. With ``argmax`` (the decoder's positions with logits) the last block's
    attention term is left out of the readout's slots where it is one term common to all of
    them (``_common_term``).
    ``blocks``: the blocks to write (all by default), entered with the stream's locals ``row``
    (by default the embedding's); ``kv``: {block: (keys, values)} of the blocks whose keys and
    values are computed already."""
    ns, model, c = compiled.ns, compiled.model, w.env.name
    slot = _locals(model.slots)
    lines, sums = [], []
    if row is None:
        row = slot[:model.width_embed]  # the stream: the local holding each slot, from here on
        lines = w.embed(row)
    for i in (range(len(compiled.blocks)) if blocks is None else blocks):
        block, weights = compiled.blocks[i], model.blocks[i]
        heads, units = weights.attn.heads, weights.mlp.units
        head, unit = _locals(heads), _locals(units)
        inp, wide = model.slots[:block.width_in], model.slots[:block.width_out]
        cache = not memory or any(not block.heads[h].carried for h in block.live)
        lines += [f"    # block {i}: attention"] + ([f"    L = layers[{i}]"] if cache else [])
        if block.token_kv is not None:  # rule 4
            memo = c(block.token_kv, f"L{i}_token_kv")
            more, k, v = w.first_kv(i, memo, c(block, f"L{i}_block"), block, head)
        elif kv and i in kv:  # computed with the first block (rule 6)
            more, (k, v) = [], kv[i]
        else:
            more, k, v = w.later_kv(i, block, row, heads, head, inp)
        lines += more + ([f"    L.keys.append({k})", f"    L.values.append({v})"] if cache else [])
        z = [f"L{i}_z_{h}" for h in head]
        wanted = block.logits_heads if logits else block.prefix_heads
        for h in block.live:
            b = block.heads[h]
            if b.carried:  # rule 1
                decay = None if b.decay is None else w.constant(b.decay, f"L{i}_decay_{head[h]}")
                at = {"n": "n", "d": "d"}
                den = w.denominators(i, h, head[h], b.decay) if memory and not state else None
                if den is not None:  # rule 8: N in a local across positions, 1 + D looked up
                    at = {"n": f"L{i}_n_{head[h]}", "d": None, "den": den}
                    sums.append((at["n"], "zero"))
                    lines += w.carry(i, h, head[h], decay, n=at["n"], d=None)
                elif memory and not state:  # the sums in locals of their own across positions
                    at = {x: f"L{i}_{x}_{head[h]}" for x in at}
                    sums.append((w.sums(**at), w.zeros))
                    lines += w.carry(i, h, head[h], decay, **at)
                elif memory:
                    state_name = f"L{i}_sums_{head[h]}"
                    sums.append((state_name, w.zeros))
                    lines += [f"    {w.sums()} = {state_name}", *w.carry(i, h, head[h], decay),
                              f"    {state_name} = {w.sums()}"]
                else:
                    lines += [f"    s = L.sums[{h}]", f"    {w.sums()} = s[-1] if s else {w.zeros}",
                              *w.carry(i, h, head[h], decay), f"    s.append(({w.sums()}))"]
                lines += w.carried_z(z[h], **at) if h in wanted else []
            elif h in wanted:
                q = w.affine(block.q, h, row.__getitem__, w.weights(i, "Q", inp, heads))
                lines += w.textbook(z[h], q, h, c(b, f"L{i}_head_{head[h]}"))
        base, mid = list(row), list(row)
        const = w.weights(i, "O", heads, inp)
        common = argmax and i == len(compiled.blocks) - 1 and _common_term(compiled, w)
        computed = block.logits_units if logits else block.prefix_units
        read = block.gate.reads(computed) | block.up.reads(computed) if common else ()
        for s in (block.logits_mid if logits else block.prefix_mid):
            if common and s in common and s not in read:
                continue  # read by the readout alone, which it shifts alike
            mid[s] = f"L{i}_attn_{slot[s]}"
            lines += w.assign(mid[s], w.affine(block.o_live, s, z.__getitem__, const), row[s])
        lines.append(f"    # block {i}: FFN")
        post = [f"L{i}_post_{u}" for u in unit]
        gates, ups = w.weights(i, "gate", inp, units), w.weights(i, "in", inp, units)
        shared = {}  # rule 5: (gate, up's source) -> units whose up is one weight on it
        pairs = (w.opposed(block, _opposite_gates(block.gate, computed))
                 if ns.name in w.opposes else {})
        for u in computed:
            if u in pairs.values():
                continue  # written with its pair
            gate = w.affine(block.gate, u, mid.__getitem__, gates)
            if u in pairs:  # rule 7
                v = pairs[u]
                c_v = block.up.bias[v]
                negated = (w.constant(_signed(c_v, -1), f"L{i}_b_in_{unit[v]}_negated")
                           if not block.up.columns[v] and c_v is not None and w.negates
                           else None)
                lines += w.opposite((post[u], post[v]), gate, [
                    w.affine(block.up, t, mid.__getitem__, ups) for t in (u, v)], negated,
                    (block, u, v, mid))
                if w.merges and w.merged(block, u, v):
                    post[v] = None  # written into post[u]
                continue
            up_column = block.up.columns[u]
            if ns.exact and len(up_column) == 1 and block.up.bias[u] is None:  # rule 5
                shared.setdefault((gate, up_column[0][0]), []).append(u)
                continue
            lines += w.unit(post[u], gate, block.up, u, mid.__getitem__, ups)
        for (gate, x), group in shared.items():
            what = _what(i, "in", inp, units)
            lines += w.shared(gate, mid[x], [
                (post[u], None if x in block.up.unit[u] else block.up.columns[u][0][1],
                 what(x, u)) for u in group], f"L{i}_W_in_{inp[x]}_common")
        row = mid + ["zero"] * (block.width_out - block.width_in)
        if common:  # the readout's slots from the stream before the common term
            row = [base[s] if s in compiled.readout else x for s, x in enumerate(row)]
        const = w.weights(i, "out", units, wide)
        for s in (block.logits_post if logits else block.prefix_post):
            name = f"L{i}_mlp_{slot[s]}"
            new = s >= block.width_in  # a new slot is the FFN's output alone
            lines += w.assign(name, w.affine(block.down, s, post.__getitem__, const),
                              None if new else row[s])
            row[s] = name
    return lines, row, sums


def _common_term(compiled, w):
    """The readout's slots where the last block's attention adds one term t to every one of
    them alike (the same weights on the same heads' lanes, the same bias) and the writer
    decides on enclosures of exact values (``_Ints``): the first largest of the logits
    -(y_s + t) is the first largest of -y_s, t being one real number, so the decoder leaves
    t out of the readout's slots (the FFN still reads its own slots with t). Else the
    empty set (plan rule 10)."""
    block, readout = compiled.blocks[-1], compiled.readout
    if not w.shifts or readout is None or not readout:
        return frozenset()
    o = block.o_live
    if any(s >= block.width_in for s in readout) or len(
            {(repr(o.columns[s]), repr(o.bias[s])) for s in readout}) != 1:
        return frozenset()
    return frozenset(readout)


def _header(name, arguments, env):
    """The def line of generated function ``name``, its constants as default arguments (local
    names are the fastest in CPython)."""
    return "\n".join(textwrap.wrap(
        f"def {name}({arguments}, " + ", ".join(f"{k}={k}" for k in [*env, "ops"]) + "):",
        96, subsequent_indent=" " * (len(name) + 5), break_long_words=False,
        break_on_hyphens=False))


def source(compiled, logits=True):
    """The text of the step function for one position, and the environment it runs in (all but
    ``ops``, which ``forward`` supplies): ``step(token, pos, layers)`` extends the KV cache
    ``layers`` as ``forward`` does and returns the position's logits (``logits``) or None."""
    w, env = _environment(compiled)
    lines, row, _ = _position(compiled, w, logits, memory=False)
    lines.append(f"    return {w.logits(row, compiled.readout)}" if logits else "    return None")
    return "\n".join([_header("step", "token, pos, layers", env)] + lines) + "\n", env


def decoder_source(compiled):
    """The text of greedy decoding as one function, and its environment (as ``source``):
    ``decode(tokens, n_new, new_layers, pick)`` runs the prompt's positions but the last
    without logits, then n_new positions with logits, each appending the readout token of the
    first largest logit (``pick``, ``generate.argmax``, where the values may not be totally
    ordered: ``_Values.first_largest``). The carried sums live in locals; a KV cache
    (``new_layers()``) keeps keys and values only for a block with a textbook head, and is
    made only for a model that has one. The first block is looked up where its state
    and the token have been seen (plan rule 6, ``_States``)."""
    w, env = _environment(compiled)
    env["readout"] = compiled.readout_tokens
    lines, first, outs, row, sums = [], [], None, None, []
    rest = range(len(compiled.blocks))
    kv = {}
    if compiled.blocks[0].memoised:
        first, outs, row, sums, kv = _first_block(compiled, w)
        lines.append(f"    L0_state = L0_states.start(({w.zeros},) * {len(sums)})")
        rest = rest[1:]
    prefix, _, _ = _position(compiled, w, False, True, rest, row, kv)
    every, row, later = _position(compiled, w, True, True, rest, row, kv, argmax=True)
    lines += [f"    {name} = {start}" for name, start in later]
    lines += [f"    if len({den}) < len(tokens) + n_new:\n        {den}.upto(len(tokens) + n_new)"
              for den in w.tables.values()]
    lines += ["    for pos in range(len(tokens) - 1):", "        token = tokens[pos]"]
    lines += [f"    {line}" for line in first + _unpack(outs, prefix) + prefix]
    lines += ["    for pos in range(len(tokens) - 1, len(tokens) - 1 + n_new):",
              "        token = tokens[pos]"]
    lines += [f"    {line}" for line in first + _unpack(outs, every) + every]
    lines += [f"        {line}" for line in w.first_largest(row, compiled.readout)]
    lines += ["        tokens.append(readout[best])", "    return tokens"]
    if any("layers[" in line for line in lines):  # a block with a textbook head keeps a cache
        lines.insert(0, "    layers = new_layers()")
    header = _header("decode", "tokens, n_new, new_layers, pick", env)
    return "\n".join([header] + lines) + "\n", env


def _opposite_gates(gate, units):
    """{u: v} for units u before v (both in ``units``) whose gate rows are exact negatives:
    the same sources in the same order, each weight and the bias (or its absence) negated,
    representation and all (plan rule 7). Each unit is in one pair at most."""
    def row(t, sign):
        b = gate.bias[t]
        return (tuple((i, repr(_signed(w, sign))) for i, w in gate.columns[t]),
                None if b is None else repr(_signed(b, sign)))
    pairs, waiting = {}, {}
    for u in units:
        v = waiting.pop(row(u, -1), None)
        if v is not None:
            pairs[v] = u
        elif gate.columns[u] or gate.bias[u] is not None:
            waiting.setdefault(row(u, 1), u)
    return pairs


def _signed(x, sign):
    """x, or -x exactly (a Decimal's copy_negate: no context rounds it)."""
    if sign > 0:
        return x
    return x.copy_negate() if hasattr(x, "copy_negate") else -x


class _Denominators(list):
    """1 + D_i by position i of a carried head whose exp(q k) is one constant e (plan rule 8):
    D_i = r D_(i-1) + e (r None: D_(i-1) + e) from D_(-1) = 0, computed by the operations
    the carry performs, on the same operands, in the same order, in the number system's
    arithmetic, so each entry is the value the carry would give at that position, bit for bit.
    ``upto`` extends it under a lock (threads share a decoder)."""

    def __init__(self, ns, decay, e):
        super().__init__()
        self.ns, self.decay, self.e, self.d = ns, decay, e, ns.zero
        self.lock = threading.Lock()

    def upto(self, n):
        """The table, holding positions 0 to n - 1 at least."""
        with self.lock, self.ns.arithmetic():
            while len(self) < n:
                self.d = self.d + self.e if self.decay is None else self.decay * self.d + self.e
                self.append(self.ns.one + self.d)
        return self


def _first_block(compiled, w):
    """(lines, outs, row, sums, kv): the first block of a position as a lookup of
    ``L0_state``, the state its carried sums were in, and the token; where that pair is new,
    the block computed from the state's sums, its outputs ``outs`` (every slot it leaves, for
    both kinds of position) recorded (``_States.step``), and with them the second block's
    keys and values, which depend on those outputs alone (``kv``: {1: their texts}, for
    ``_position``). ``_unpack`` writes the lines that take a pair apart."""
    w.env["L0_states"] = _States(w.state_key)
    block, row, sums = _position(compiled, w, True, True, range(1), state=True)
    names, kv = w.outputs(row), {}
    if len(compiled.blocks) > 1 and compiled.blocks[1].token_kv is None:
        heads = compiled.model.blocks[1].attn.heads
        more, k, v = w.later_kv(1, compiled.blocks[1], row, heads, _locals(heads),
                                compiled.model.slots[:compiled.blocks[1].width_in])
        block, names, kv = block + more, names + _assigned(more), {1: (k, v)}
    outs = list(dict.fromkeys(names))
    state = ", ".join(name for name, _ in sums) + "," if sums else ""
    return ["    hit = L0_state.get(token)", "    if hit is None:",
            f"        {state} = L0_state.sums" if sums else "        pass",
            *[f"    {line}" for line in block],
            f"        hit = L0_states.step(L0_state, token, ({state}), ({', '.join(outs)},))"
            ], outs, row, sums, kv


def _unpack(outs, lines):
    """The lines that take a looked-up pair apart (``_first_block``): the next state, and the
    block's outputs ``outs``, of which a prompt position reads few (layer 1's e v alone, for
    TinyAdder-36): where ``lines`` read at most a quarter of them, only those, by index (an
    index costs about what four names stored at once cost)."""
    if outs is None:
        return []
    text = "\n".join(lines)
    read = [(i, name) for i, name in enumerate(outs) if re.search(rf"\b{name}\b", text)]
    if 4 * len(read) > len(outs):
        return [f"    L0_state, ({', '.join(outs)},) = hit"]
    return ["    L0_state, outs = hit"] + ([
        f"    {', '.join(name for _, name in read)} = "
        f"{', '.join(f'outs[{i}]' for i, _ in read)}"] if read else [])


def _assigned(lines):
    """The locals that generated lines assign ('x = ...', 'x_lo, x_hi = ...', also after a
    ';')."""
    targets = (name.strip() for line in lines for part in line.split(";")
               for name in part.split(" = ")[0].split(","))
    return [name for name in targets if name.isidentifier()]


class _States:
    """The first block's memory across the additions of a run (plan rule 6). Its carried sums
    before a position are a state, one object per exact representation (``key`` of the
    sums: a writer's ``state_key``); a state maps each token seen there to the next state and
    the block's outputs, for at most ``LIMIT`` recorded pairs."""

    LIMIT = 4096

    def __init__(self, key):
        self.states, self.stored, self.root, self.key = {}, 0, None, key

    def start(self, sums):
        """The state before the first position, its sums ``sums``."""
        if self.root is None:
            self.root = self._state(sums)
        return self.root

    def _state(self, sums):
        if self.stored >= self.LIMIT:
            return _State(sums)
        key = self.key(sums)
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = _State(sums)
        return state

    def step(self, state, token, sums, outs):
        """(next state, outs): ``token`` takes ``state`` to the state of ``sums``, the block
        writing ``outs``; recorded while under the limit."""
        hit = self._state(sums), outs
        if self.stored < self.LIMIT:
            state[token] = hit
            self.stored += 1
        return hit


class _State(dict):
    """A state of the first block: its carried sums, and per token seen there (next state,
    the block's outputs)."""

    def __init__(self, sums):
        super().__init__()
        self.sums = sums


def _compiled(compiled, name, label, text_of, ops):
    """The function ``name`` of the text ``text_of(compiled)``, memoised on the compiled model
    under ``label``."""
    key = f"_{name}_{label}"
    fn = compiled.__dict__.get(key)
    if fn is None:
        text, env = text_of(compiled)
        env["ops"] = ops
        exec(compile(text, f"<tinyadder {name}, {label}>", "exec"), env)  # noqa: S102
        fn = env[name]
        object.__setattr__(compiled, key, fn)
    return fn


def _step(compiled, logits, ops):
    """The compiled step function (memoised on the compiled model)."""
    return _compiled(compiled, "step", "logits" if logits else "prefix",
                     lambda c: source(c, logits), ops)


def run(compiled, tokens, start, layers, logits, ops):
    """The untraced call of ``forward``: positions start, start + 1, ... one step each; the
    logits of every position (``logits="all"``) or of the last (``"last"``)."""
    prefix, every = _step(compiled, False, ops), _step(compiled, True, ops)
    if logits == "all" or not tokens:
        return [every(t, start + a, layers) for a, t in enumerate(tokens)]
    for a in range(len(tokens) - 1):
        prefix(tokens[a], start + a, layers)
    return [every(tokens[-1], start + len(tokens) - 1, layers)]


def greedy(compiled, tokens, n_new, new_layers, pick, ops):
    """``forward.greedy``: the prompt's positions (without logits but for the last), then one
    position with logits per new token, appending ``readout_tokens[pick(logits)]``, in one
    generated function (``decoder_source``); ``new_layers()`` makes an empty KV cache, where
    the model needs one. A model it does not write out: ``greedy_general``."""
    if not compiled.fast:
        return greedy_general(compiled, tokens, n_new, pick, ops)
    return _compiled(compiled, "decode", "greedy", decoder_source, ops)(tokens, n_new,
                                                                       new_layers, pick)


# ---- every other model: the readable pass's functions, the first block per (token, position) --

_D0 = decimal.Decimal(0)


class _Rows:
    """The first block's memory across the additions of a run, for a model ``codegen`` does not
    write out (plan rule 9). The first block reads embed[token] + pos[p], so the stream there,
    its ln1, q, k and v as scored (after any q/k norm and rotary turn) are a function of (token,
    p): computed once per pair (``row``). With them a score s_ij is a function of the two pairs
    (``scores``), and so, in an interval system, e^s_ij and e^s_ij v_j (``terms``), each for
    at most ``LIMIT`` pairs of pairs."""

    LIMIT = 100_000

    def __init__(self):
        self.rows, self.scores, self.terms = {}, {}, {}
        self.stored = 0  # scores recorded, over every query row's dict
        self.lock, self._tiny = threading.Lock(), {}

    def tiny(self, ns):
        """([0, 10^-(digits + 10)], -T) of an interval system (``_enclosed_z``)."""
        hit = self._tiny.get(ns.digits)
        if hit is None:
            D = decimal.Decimal
            hit = self._tiny[ns.digits] = (ns.value(D(0), D(1).scaleb(-(ns.digits + 10))),
                                           D(-231 * (ns.digits + 11)).scaleb(-2))
        return hit

    def score(self, ns, head):
        """``forward.score``'s real number in an interval system, its terms where they are
        not 0: (q . k) times or over the scale, plus the fixed bias, minus slope (i - j)."""
        slope = None if head.slope.lo == head.slope.hi == 0 else head.slope
        scale, divide, bias, default = head.scale, head.divide, head.bias, head.bias_default

        def score(q, k, head, i, j):
            s = q[0] * k[0]
            for a, b in zip(q[1:], k[1:]):
                s = s + a * b
            if scale is not None:
                s = s / scale if divide else s * scale
            if bias is not None:
                s = s + bias.get((i, j), default)
            return s if slope is None else s - slope * ns.point(i - j)
        return score

    def row(self, compiled, ops, token, p):
        """(resid_pre, q, k, v, id) of token at position p in the first block."""
        hit = self.rows.get((token, p))
        if hit is None:
            ns = compiled.ns
            x = list(compiled.embed[token])
            if compiled.pos:
                x = [e + q if q is not None else e
                     for e, q in zip(x, ops.position(compiled, p, ns))]
            q, k, v = _qkv(ops, ns, compiled.blocks[0], x, p)
            with self.lock:
                hit = self.rows.setdefault((token, p), (x, q, k, v, len(self.rows)))
        return hit


def _qkv(ops, ns, block, x, p):
    """(q, k, v) of resid_pre x at position p as ``forward.attention`` scores them: after ln1,
    the three maps, then each head's lanes normed and turned."""
    normed = ops.normalize(x, block.ln1, ns) if block.ln1 is not None else x
    q, k, v = (ops.linear(normed, m, ns.zero) for m in (block.q, block.k, block.v))
    if block.rope or block.q_norm is not None or block.k_norm is not None:
        heads = block.heads
        q = ops.heads_of([q], block.q_norm, block.rope, heads,
                         lambda head: head.q_lanes, p, ns)[0]
        k = ops.heads_of([k], block.k_norm, block.rope, ops.groups(heads),
                         lambda head: head.kv_lanes, p, ns)[0]
    return q, k, v


def decodes(compiled):
    """Whether ``greedy`` decodes the model (else greedy decoding runs ``forward`` per step)."""
    return compiled.fast or decodes_in_general(compiled)


def decodes_in_general(compiled):
    """Whether ``greedy_general`` decodes the model: no live head of any block carried (those
    keep running sums: the textbook pass or the generated code)."""
    return not any(b.heads[h].carried for b in compiled.blocks for h in b.live)


def _enclosures(ns):
    """Whether ``ns`` is an interval system that decides its own tokens: its values hold the
    real-number model's, so a pattern may be formed in any order."""
    return ns.exact and ns.decider() is ns and ns.name == "interval"


def greedy_general(compiled, tokens, n_new, pick, ops):
    """Greedy decoding of a model ``codegen`` does not write out (``forward.greedy``): the
    readable pass's own functions (``ops``) on the same operands in the same order, but the
    first block's stream, norm, q, k and v looked up per (token, position) and its scores per
    pair of those (plan rule 9, ``_Rows``). A position without logits computes only what later
    positions read: the last block's key and value, so every block before it in full.

    In an enclosure system (``_enclosures``) a first-block head's z is formed as
    (sum_j e^s_j v_j) / (sum_j e^s_j), plus 1 for softmax1, with e^s_j and e^s_j v_j looked up
    per pair: the real-number pattern does not depend on the maximum a program subtracts, nor
    on the grouping, and each e^s is enclosed to within 10^(2 - digits) of itself (relative),
    which holds the fraction system's e^(s - m) times e^m, so the values still hold both the
    real model's and the fraction system's, and a decided token is theirs. A later block's
    scores and terms are computed per position (its rows depend on the prefix); a mixed
    block's output is x = h + (x - h) g, h the output of block ``mix.first`` (``forward.mix``)."""
    ns = compiled.ns
    memo = compiled.__dict__.get("_rows")
    if memo is None:
        memo = _Rows()
        object.__setattr__(compiled, "_rows", memo)
    hook, blocks = ops.hooks(None, None, None), compiled.blocks
    mixed = compiled.model.mix
    gain = ns.const(mixed.gain) if mixed is not None else None
    layers = [([], [], []) for _ in blocks]  # per block: keys, values, row ids (or None)
    enclosed = _enclosures(ns)
    attend = _enclosed_z if enclosed else _single_z if ns.name == "float32" else _textbook_z
    bounds = [None] * len(blocks)  # in intervals: [-V, V] per value lane, V the largest |v|
    readout, last = compiled.readout_tokens, len(blocks) - 1
    for pos in range(len(tokens) - 1 + n_new):
        x, q, k, v, ident = memo.row(compiled, ops, tokens[pos], pos)
        wanted = pos >= len(tokens) - 1  # later positions read the others' keys and values
        for b, block in enumerate(blocks):
            if b:
                q, k, v = _qkv(ops, ns, block, x, pos)
                ident = None
            keys, values, ids = layers[b]
            keys.append(k)
            values.append(v)
            ids.append(ident)
            if enclosed:
                bounds[b] = _widest(ns, bounds[b], v)
            if b == last and not wanted:
                break
            z = [ns.zero] * len(block.q.columns)
            for h in block.live:
                attend(memo, ops, ns, block, h, block.heads[h], q, keys, values, ids, pos, z,
                       bounds[b])
            x = [ops.residual([x], [ops.linear(z, block.o_live, ns.zero)],
                              set(block.attn_writes))[0]]
            x = _ffn(ops, ns, block, x, hook, f"blocks.{b}")[0]
            if mixed is not None and b == mixed.first:
                first = x
        else:
            if mixed is not None:
                x = ops.mix(first, x, gain)
            logits = ops.logits(compiled, ops.normed([x], compiled.ln_final, hook, "", ns),
                                ns)[0]
            tokens.append(readout[pick(logits)])
    return tokens


def _widest(ns, bounds, v):
    """[-V, V] per lane, V the largest |lo|, |hi| of the lane's values so far (``bounds``)
    and of v's."""
    reach = [max(x.lo.copy_negate(), x.hi) for x in v]  # exact, as no context rounds it
    if bounds is not None:
        reach = [max(r, b.hi) for r, b in zip(reach, bounds)]
    return [ns.value(r.copy_negate(), r) for r in reach]


def _ffn(ops, ns, block, x, hook, name):
    """resid_post of the rows x (resid_mid): x + mlp(ln2(x)) in the slots the FFN writes."""
    out = ops.mlp(ns, block, ops.normed(x, block.ln2, hook, "", ns), hook, f"{name}.mlp")
    return ops.residual(x, out, set(block.mlp_writes))


def _scores(memo, ops, h, head, q, keys, ids, i, score):
    """[(s_ij, j)] of head h's unmasked keys j <= i, each looked up per pair of (token,
    position) rows (``_Rows``, one dict per query row, read for all keys at once by ``map``;
    a later block's rows, id None, are not looked up) or computed by ``score``
    (``ops.score``'s formula)."""
    ql, me = [q[c] for c in head.q_lanes], ids[i]
    row = None if me is None else memo.scores.get((h, me))
    if row is None and me is not None:
        row = memo.scores.setdefault((h, me), {})
    got = [row] * (i + 1) if row is None else list(map(row.get, ids, repeat(row)))
    for j, s in enumerate(got):
        if s is row:  # not recorded: a miss (the dict itself is no score)
            s = got[j] = (None if ops.masked(head, i, j) else
                          score(ql, [keys[j][c] for c in head.kv_lanes], head, i, j))
            if row is not None and memo.stored < memo.LIMIT:
                row[ids[j]] = s
                memo.stored += 1
    return [(s, j) for j, s in enumerate(got) if s is not None]


def _textbook_z(memo, ops, ns, block, h, head, q, keys, values, ids, i, z, bounds=None):
    """Head ``head``'s lanes of z at position i, as ``forward.attention`` forms them: the
    scores of the unmasked keys, normalised (softmax1, softmax, or after the weighted sum),
    then the weighted sum of the values, lane by lane."""
    seen = _scores(memo, ops, h, head, q, keys, ids, i, ops.score)
    scores = [s for s, _ in seen]
    inv = None
    if block.normalise == "after":
        weights, inv = ops.softmax_parts(scores, ns)
    else:
        weights = (ops.softmax1 if block.softmax == "softmax1" else ops.softmax)(scores, ns)
    for c, lane in zip(head.q_lanes, head.kv_lanes):
        z[c] = ops.attend(weights, [values[j][lane] for _, j in seen], ns.zero)
        if inv is not None:
            z[c] = z[c] * inv


_sub, _mul, _div = float.__sub__, float.__mul__, float.__truediv__


def _single_score(R):
    """``forward.score`` in float32 on plain floats, rounded through ``R`` as ``_single_z``:
    the lane products summed left to right, the scale, the fixed bias, minus slope (i - j)."""
    def score(q, k, head, i, j):
        acc = None
        for a, b in zip(q, k):
            R[0] = _mul(a, b)
            if acc is not None:
                R[0] = acc + R[0]
            acc = R[0]
        if head.scale is not None:
            R[0] = acc / head.scale if head.divide else _mul(acc, head.scale)
        if head.bias is not None:
            R[0] = R[0] + head.bias.get((i, j), head.bias_default)
        s = R[0]
        R[0] = _mul(head.slope, float(i - j))
        R[0] = s - R[0]
        return R[0]
    return score


def _single_z(memo, ops, ns, block, h, head, q, keys, values, ids, i, z, bounds=None):
    """``_textbook_z`` in float32 on plain floats: each +, -, *, / and exp done in double and
    rounded once to single by a store into an ``array('f')``, as ``Float32`` rounds it, in the
    order ``forward.softmax1``, ``softmax`` and ``attend`` take (z's lanes are Float32). A run
    of operations that do not depend on each other (the e^s, the weights, one lane's
    products) is rounded by one array of them (``_singles``); the sums stay one add at a
    time, over their non-zero terms (``_single_sum``: a softmax row of far-apart scores is
    mostly zeros)."""
    if block.normalise == "after":
        return _textbook_z(memo, ops, ns, block, h, head, q, keys, values, ids, i, z)
    R, single = array.array("f", [0.0]), _singles
    seen = _scores(memo, ops, h, head, q, keys, ids, i, _single_score(R))
    scores, js = zip(*seen) if seen else ((), ())
    if block.softmax == "softmax1":
        e = single(map(exp_double, scores))
    else:  # s - m <= 0 but where s or m is not finite: math.exp raises only above ~709.78
        shifted = single(map(_sub, scores, repeat(ns.largest(scores))))
        try:
            e = single(map(math.exp, shifted))
        except OverflowError:
            e = single(map(exp_double, shifted))
    total = e[0] if e else 0.0
    for x in filter(None, e[1:]):  # + 0.0 leaves a sum that starts at e^s >= 0 as it is
        R[0] = total + x
        total = R[0]
    if block.softmax == "softmax1":
        R[0] = 1.0 + total
        total = R[0]
    weights = single(map(_div, e, repeat(total)))
    rows = list(map(values.__getitem__, js))
    for c, lane in zip(head.q_lanes, head.kv_lanes):
        terms = single(map(_mul, weights, map(itemgetter(lane), rows)))
        acc = _single_sum(terms, R)
        z[c] = ns.zero if acc is None else Float32(acc)


def _single_sum(terms, R):
    """The float32 sum of ``terms`` left to right (None for none), rounded after each add
    through ``R``, zeros left out: x + (-0.0) is x, and x + 0.0 is x but for x = -0.0, which a
    sum is only while every term so far is -0.0 (a sum that cancels is +0.0). So the sum is
    that of the non-zero terms, or, where every term is a zero, -0.0 if every one is -0.0."""
    rest = list(filter(None, terms))
    if not rest:
        if not terms:
            return None
        return -0.0 if all(math.copysign(1.0, x) < 0 for x in terms) else 0.0
    acc = rest[0]
    for x in rest[1:]:
        R[0] = acc + x
        acc = R[0]
    return acc


def _singles(doubles):
    """Each double rounded once to single precision (one store each into an ``array('f')``,
    as ``R[0] = x`` rounds x), read back as floats: the same roundings as one store at a
    time, for a run of independent operations."""
    return array.array("f", doubles).tolist()


def _enclosed_z(memo, ops, ns, block, h, head, q, keys, values, ids, i, z, bounds):
    """Head ``head``'s lanes of z at position i in an interval system (``greedy_general``):
    (sum_j e^s_ij v_j) / (sum_j e^s_ij), plus 1 in softmax1's sum: the real-number pattern,
    which no maximum subtracted changes; the scores, e^s and e^s v per pair of (token,
    position) rows (``_Rows.terms``). A term whose score lies T = 2.31 (digits + 11) >
    ln 10^(digits + 11) or more below m at every point, m the score whose interval reaches
    highest (0 in softmax1, for its 1; any score would be sound, a high one keeps it tight), is
    not expanded: e^s <= e^m e^-T, and the fraction system's rounding of e^(s - m), which the
    interval of e^s must hold times e^m, are in [0, 10^-(digits + 10)] e^m (``_Rows.tiny``),
    below what the intervals resolve next to e^m; n such terms add that times n to the sum and
    times n [-V, V] to each lane's, V the largest |v| of the lane so far (``bounds``)."""
    seen = _scores(memo, ops, h, head, q, keys, ids, i, memo.score(ns, head))
    if not seen:
        return
    up, me = ns.value.UP, ids[i]
    terms = memo.terms
    tiny, cut = memo.tiny(ns)
    down = ns.value.DOWN
    highs = [s.hi for s, _ in seen]
    if block.softmax == "softmax1":
        top, e_top, below = None, ns.one, cut
    else:  # any score serves as m (only the bound's width depends on it): the highest end's
        top, j_top = seen[highs.index(max(highs))]
        e_top = _term(memo, ns, h, me, ids[j_top], top, values[j_top], head)[0]
        below = down.add(top.lo, cut)  # s.hi < below: s < m - T at every point
    # the sum (first) and each lane's, as the ends of their intervals: an interval sum is
    # the sums of its ends, rounded outward
    los, his = [_D0] * (1 + len(head.kv_lanes)), [_D0] * (1 + len(head.kv_lanes))
    any_term, small = False, 0
    for (s, j), high in zip(seen, highs):
        if high < below:
            small += 1
            continue
        hit = terms.get((h, me, ids[j])) or _term(memo, ns, h, me, ids[j], s, values[j], head)
        any_term = True
        for a, x in enumerate(hit):
            los[a], his[a] = down.add(los[a], x.lo), up.add(his[a], x.hi)
    total = ns.value(los[0], his[0]) if any_term else None
    sums = [ns.value(lo, hi) if any_term else None for lo, hi in zip(los[1:], his[1:])]
    if top is None:
        total = ns.one if total is None else ns.one + total
    if small:
        few = tiny * small * e_top
        total = few if total is None else total + few
        sums = [few * bounds[lane] if t is None else t + few * bounds[lane]
                for t, lane in zip(sums, head.kv_lanes)]
    for c, t in zip(head.q_lanes, sums):
        z[c] = t / total


def _term(memo, ns, h, me, other, s, v, head):
    """(e^s, e^s v per value lane) of a pair of rows, recorded in ``memo.terms`` (a first-block
    pair's: ``me`` not None)."""
    key = (h, me, other)
    hit = memo.terms.get(key)
    if hit is None:
        e = ns.exp(s)
        hit = (e, *[e * v[lane] for lane in head.kv_lanes])
        if me is not None and len(memo.terms) < memo.LIMIT:
            memo.terms[key] = hit
    return hit
