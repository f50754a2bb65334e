"""The digit emitted at every deciding position as a formula in the digits, read off the
model's own forward pass.

The model is run once over the affine number system of ``proof.symbolic``: the digits of
a, b and of the answer emitted so far are variables (the embedding must be affine in the
digit: E(d) = E(0) + d (E(1) - E(0)), checked), so every value is an exact affine form in
them. At a deciding position the last layer's ReLUs are the only ones whose sign the digits
decide. Their gates must all be multiples of one affine form L (checked exactly):
g_k = lambda_k (L - mu_k), mu_k its mark. Each digit's logit must hang on the ReLUs of one
mark (read from the weight tables); the position is rerun twice with those ReLUs resolved as
for L below and above every mark, which gives every logit on both sides of its kink as an
affine form. From them, for each output digit u (checked exactly, else ``NotAffine`` says
what failed):

    cost_u = -logit_u = T_u + G |L - m_u| + (a part shared by every u),

one gain G, marks m_0 < ... < m_9, and tilts T_u that depend on no digit but the token at
the deciding position (the previous digit, y). If neighbouring tilts differ by less than
the gain times the marks' spacing, |T_{u+1}(y) - T_u(y)| < G (m_{u+1} - m_u), the cost
difference f_{u+1} - f_u falls through zero once, at

    theta_u(y) = (m_u + m_{u+1}) / 2 + (T_{u+1}(y) - T_u(y)) / (2 G),

so the digit emitted is the number of thresholds theta_u that L exceeds (a tie goes to the
lower digit, as argmax takes the first). In units of the sum, with kappa = (m_9 - m_0) /
(9 P) (P = 10^p, the place decided), L = kappa (R + o(x)) where R is the value left to
emit (a + b minus the emitted digits times their places) and o an exact affine form in the
digits: the offset. With the higher digits right, R = sigma P + r (sigma the true digit,
r = s mod P), so the digit is right exactly when

    lo(sigma, y) < r + o(x) <= hi(sigma, y),   lo = theta_{sigma-1} / kappa - sigma P,
                                               hi = theta_sigma / kappa - sigma P.

``guard`` widens both ends for the real-number model: costs are known to within rho there,
so L may move by rho / G.
"""

from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Dict, Optional, Tuple

from ..addition import digits_of, encode
from ..forward import forward
from ..plan import compile_model
from ..analysis.parallel import run_shares, shares
from .kernel.claim import short_answer
from .symbolic import Affine, NotAffine, SymbolicSystem, box_sign, round_up


@dataclass(frozen=True)
class DigitFormula:
    """One deciding position, in units of the sum (see the module docstring).

    ``offset``: o(x), an :class:`~.symbolic.Affine` whose variables are sequence positions.
    ``lo[y][sigma]``, ``hi[y][sigma]``: the bounds on r + o(x) for the true digit sigma after
    previous token y (None: no bound); y is None at the first position. ``bias``: the mean
    shift of the thresholds below their places, reported with the offset.
    """

    t: int
    position: int
    place: int               # p: the digit decided has place value 10^p
    previous: Optional[int]  # the variable (position) of the previous digit, if any
    offset: Affine
    lo: Dict[Optional[int], Tuple[Optional[Fraction], ...]]
    hi: Dict[Optional[int], Tuple[Optional[Fraction], ...]]
    bias: Fraction
    guard: Fraction
    gain: Fraction
    tilt_ratio: Fraction      # max |T_{u+1} - T_u| / (G (m_{u+1} - m_u)): must be < 1
    L: Affine                 # the scalar L(x), coefficient 1 on its reference operand digit
    marks: Tuple[Fraction, ...]
    tilts: Dict[Optional[int], Tuple[Fraction, ...]]   # T_u(y) - T_0(y)

    def offset_range(self, y):
        """(min, max) of o(x) over the digit box, the previous digit set to y (None: free),
        as :class:`~.reals.Real` (exact on demand)."""
        return self.offset.range(None if y is None else {self.previous: y})


@dataclass(frozen=True)
class Layout:
    """Where the digits sit: {position: place value (negative for emitted digits)}."""

    digits: int
    a: Tuple[int, ...]
    b: Tuple[int, ...]
    answer: Tuple[int, ...]   # positions of the emitted digits 1..N (token at 2N+3+m)

    def place(self, pos):
        n = self.digits
        if pos in self.a:
            return 10 ** (n - self.a.index(pos) - 1)
        if pos in self.b:
            return 10 ** (n - self.b.index(pos) - 1)
        return -10 ** (n - self.answer.index(pos))

    def visible(self, t):
        """The digit variables visible at decision t: a, b and the t emitted digits."""
        return self.a + self.b + self.answer[:t]


def layout(model):
    """The positions of TinyAdder-36's sequence, the only one the closed form reads: a token,
    a's N digits and b's, most significant first, each followed by a token, then the sum's
    N + 1 digits, most significant first, and no stop token; NotAffine for another layout."""
    n, p = digits_of(model), model.prompt
    short = short_answer(model)
    if short or not (len(p.question) == 5 and p.question[1::2] == ("a", "b")
                     and p.operands == p.answer == "msb" and p.stop is None):
        raise NotAffine(short or "the prompt is not TinyAdder-36's (a token, a, a token, b, "
                                 "a token; the sum's N + 1 digits, most significant first)")
    return Layout(n, tuple(range(1, n + 1)), tuple(range(n + 2, 2 * n + 2)),
                  tuple(range(2 * n + 3, 3 * n + 3)))


def _embedding(model, compiled):
    """E(0) and E(1) - E(0), after checking E(d) = E(0) + d (E(1) - E(0)) for d = 0..9 (the
    embeddings as the pass computes them: its trace point ``hook_embed``)."""
    got = {}
    forward(compiled, [model.vocab.index(str(d)) for d in range(10)],
            record=got.__setitem__, names={"hook_embed"}.__contains__)
    rows = got["hook_embed"]
    step = [b - a for a, b in zip(rows[0], rows[1])]
    for d, row in enumerate(rows):
        for s, (x, e0, st) in enumerate(zip(row, rows[0], step)):
            if x.rad or not x.is_constant or x.const != e0.const + d * st.const:
                raise NotAffine(f"the embedding of digit {d} is not affine in the digit "
                                f"(slot {model.slots[s]})")
    return rows[0], step


def _marks(gates, ref):
    """L (coefficient 1 at ``ref``) and the mark mu of each gate, g = lambda (L - mu)."""
    g0 = gates[0]
    L = (g0 - g0.const).times(1 / g0.coef(ref))
    marks = []
    for g in gates:
        lam = g.multiple_of(L)
        if not lam:
            raise NotAffine("the last layer's ReLUs are not all decided by one affine "
                            "function of the digits")
        marks.append(-g.const / lam)
    return L, marks


def digit_formulas(model, progress=None, jobs=1):
    """The DigitFormula of every deciding position, t = 0..N (see the module docstring);
    ``jobs`` > 1: the positions split over that many processes (``parallel.shares``), each
    running the pass up to its last position."""
    n = digits_of(model)
    if jobs > 1:
        parts = run_shares(partial(_formulas, model), shares(list(range(n + 1)), jobs), jobs,
                           progress)
        return sorted((f for part in parts for f in part), key=lambda f: f.t)
    return _formulas(model, range(n + 1), progress)


def _formulas(model, wanted, progress=None):
    """The DigitFormulas of the deciding positions t in ``wanted``."""
    symbolic = _Pass(model)
    wanted = set(wanted)
    result, past = [], symbolic.prompt()
    for t in range(max(wanted) + 1):
        if progress:
            progress(t, max(wanted) + 1, f", deciding position {t + 1}")
        formula, past = symbolic.position(t, past, t in wanted)
        if formula is not None:
            result.append(formula)
    return result


class _Pass:
    """The model's forward pass over affine forms, position by position."""

    def __init__(self, model):
        self.model, self.lay = model, layout(model)
        self.ns = SymbolicSystem(model)
        self.compiled = compile_model(model, self.ns)
        self.e0, self.step = _embedding(model, self.compiled)
        self.digit_positions = set(self.lay.a) | set(self.lay.b) | set(self.lay.answer)
        last = len(model.blocks) - 1
        self.mlp = model.blocks[last].mlp
        self.mid, self.pre, self.up = (f"blocks.{last}.{x}" for x in (
            "hook_resid_mid", "mlp.hook_pre", "mlp.hook_pre_linear"))
        self.tokens = encode(model, 0, 0)

    def patch_at(self, start):
        """The embedding of the digits from position ``start`` on as variables."""
        def embed(rows):
            return [[x + self.ns.variable(start + k, s.const) for x, s in zip(self.e0, self.step)]
                    if start + k in self.digit_positions else row for k, row in enumerate(rows)]
        return {"hook_embed": embed}

    def prompt(self):
        """The cache of the prompt up to the first deciding position."""
        return forward(self.compiled, self.tokens[:-1], patch=self.patch_at(0))[1]

    def run(self, token, past, i, oracle, resid_mid=None):
        """(costs, cache, {trace point: value}) at position i; ``resid_mid``: the last
        block's input as an earlier run at i computed it (so that the values share vectors)."""
        patch = self.patch_at(i)
        if resid_mid is not None:
            patch[self.mid] = lambda value: resid_mid
        got = {}
        with self.ns.assuming(oracle):
            logits, cache = forward(self.compiled, [token], past, patch=patch,
                                    record=lambda name, value: got.setdefault(name, value),
                                    names={self.mid, self.pre, self.up}.__contains__)
        return [-x for x in logits[0]], cache, got

    def position(self, t, past, wanted=True):
        """(the DigitFormula of deciding position t, or None unless ``wanted``; the cache
        extended by it)."""
        n, lay, mlp = self.lay.digits, self.lay, self.mlp
        i = 2 * n + 2 + t
        token = self.tokens[-1] if t == 0 else self.model.vocab.index("0")
        # a first run finds the gates: a sign the box leaves open is taken as positive (only
        # logits follow from it), and must be a gate of the last layer
        assumed = []
        _, nxt, got = self.run(token, past, i, lambda g: None if box_sign(g) is not None
                               else assumed.append(g) or True)
        if not wanted:
            return None, nxt
        tail = got[self.pre][0]
        if len(assumed) != sum(box_sign(g) is None for g in tail):
            raise NotAffine(f"a ReLU before the last layer at position {i} depends on the "
                            f"digits")
        gates = [g for g in tail if not g.is_constant]
        if not gates:
            raise NotAffine(f"no ReLU at position {i} depends on the digits")
        # L is scaled to coefficient 1 on the operand digit it weighs most, so that it grows
        # with the sum (the deciding position's own token may tilt: it is not the reference)
        operands = [v for v in sorted(gates[0].variables()) if v in lay.a or v in lay.b]
        if not operands:
            raise NotAffine(f"the ReLUs at position {i} do not read the operands")
        ref = max(operands, key=lambda v: abs(gates[0].coef(v)))
        L, marks = _marks(gates, ref)
        mark_of = {k: -g.const / g.coef(ref) for k, g in enumerate(tail) if not g.is_constant}
        expected = _readout_marks(self.model, mlp, mark_of, i)
        cut = sorted(set(mark_of.values()))
        # each digit's logit hangs on the ReLUs of one mark only (checked from the tables
        # above), so two runs give both sides of every kink: L below all marks, above all
        runs = []
        for rep in (cut[0] - 1, cut[-1] + 1):

            def at_rep(g, rep=rep):
                lam = g.multiple_of(L)
                return None if lam is None else lam * rep + g.const > 0

            costs, _, here = self.run(token, past, i, at_rep, resid_mid=got[self.mid])
            runs.append((costs, _off_radius(mlp, here[self.pre][0], here[self.up][0], at_rep)))
        return _formula(lay, t, i, L, ref, expected, runs), nxt


def _off_radius(mlp, gates, ups, oracle):
    """What the ReLUs taken as off may add in the real model, where a gate is off by at most
    its radius: sum of rho_gate |up| |W_out row|."""
    extra = Fraction(0)
    for unit, g, u in zip(mlp.units, gates, ups):
        on = oracle(g)
        if on is None:
            on = box_sign(g)
        if not on and g.range()[1] + g.rad > 0:
            out = sum(abs(w) for w in mlp.W_out.get(unit, {}).values())
            extra += g.rad * (u.magnitude() + u.rad) * out
    return extra


def estimate_seconds(digits):
    """A rough time for ``digit_formulas`` on this machine: 0.6 s of CPU at N = 10, 6.5 s at
    N = 50, 21 s at N = 100 (measured), growing as N^1.5."""
    return 0.02 * digits ** 1.5


def _readout_marks(model, mlp, mark_of, i):
    """Per output digit, the one mark of the ReLUs that write its readout slot."""
    tokens = list(model.readout)
    if tokens != [str(u) for u in range(10)]:
        raise NotAffine("the readout is not the ten digits in order")
    out = []
    for u, token in enumerate(tokens):
        slot = model.readout[token]
        feeding = [k for k, unit in enumerate(mlp.units) if mlp.W_out.get(unit, {}).get(slot)]
        found = {mark_of.get(k) for k in feeding}
        if not feeding or None in found or len(found) != 1:
            raise NotAffine(f"the logit of digit {u} at position {i} does not hang on the "
                            f"ReLUs of one mark")
        out.append(found.pop())
    return out


def _kinks(L, ref, expected, runs, i):
    """Per digit u, (gain, the slope shared by every u, mark, tilt) of cost_u =
    tilt + gain |L - mark| + slope L, from the costs below and above all marks."""
    (below, _), (above, _) = runs
    fits = []
    for u, (lo_side, hi_side) in enumerate(zip(below, above)):
        k_lo, k_hi = lo_side.coef(ref), hi_side.coef(ref)
        r_lo, r_hi = lo_side - L.times(k_lo), hi_side - L.times(k_hi)
        gain = (k_hi - k_lo) / 2
        diff = r_lo - r_hi
        if gain <= 0 or not diff.is_constant:
            raise NotAffine(f"the logit of digit {u} at position {i} is not a tilt plus a "
                            f"gain times |L - mark|")
        mark = diff.const / (2 * gain)
        if mark != expected[u]:
            raise NotAffine(f"the kink of digit {u}'s logit is not at its ReLUs' mark")
        fits.append((gain, (k_hi + k_lo) / 2, mark, (r_lo + r_hi).times(Fraction(1, 2))))
    if any(f[0] != fits[0][0] or f[1] != fits[0][1] for f in fits):
        raise NotAffine(f"the digits' logits at position {i} do not share one gain")
    return fits


def _formula(lay, t, i, L, ref, expected, runs):
    """The DigitFormula of decision t from the costs below and above all marks."""
    fits = _kinks(L, ref, expected, runs, i)
    gain = fits[0][0]
    marks = [f[2] for f in fits]
    if any(b <= a for a, b in zip(marks, marks[1:])):
        if all(b < a for a, b in zip(marks, marks[1:])):
            raise NotAffine(f"the marks at position {i} decrease with the digit")
        raise NotAffine(f"the marks at position {i} are not ordered by digit")
    previous = i if t > 0 else None
    tilts = []
    for f in fits:
        d = f[3] - fits[0][3]
        if any(v != previous for v in d.variables()):
            raise NotAffine(f"a tilt at position {i} depends on a digit other than the "
                            f"previous one")
        tilts.append(d)
    place = lay.digits - t
    P = 10 ** place
    kappa = (marks[-1] - marks[0]) / ((len(marks) - 1) * P)
    R = L.system.affine({v: lay.place(v) for v in lay.visible(t)})  # what is left to emit
    offset = L.times(1 / kappa) - R
    bias = sum((u + 1) * P - (marks[u] + marks[u + 1]) / (2 * kappa)
               for u in range(len(marks) - 1)) / (len(marks) - 1)
    rho = max(max(c.rad for c in costs) + extra for costs, extra in runs)
    guard = round_up(rho / (gain * kappa))
    lo, hi, ratio, tilt_table = {}, {}, Fraction(0), {}
    for y in ([None] if previous is None else range(10)):
        T = [tl.bounds(None if y is None else {previous: y})[0] for tl in tilts]
        tilt_table[y] = tuple(T)
        theta = []
        for u in range(len(marks) - 1):
            delta, room = T[u + 1] - T[u], gain * (marks[u + 1] - marks[u])
            ratio = max(ratio, abs(delta) / room)
            theta.append((marks[u] + marks[u + 1]) / 2 + delta / (2 * gain))
        lo[y] = tuple(None if s == 0 else theta[s - 1] / kappa - s * P for s in range(10))
        hi[y] = tuple(None if s == 9 else theta[s] / kappa - s * P for s in range(10))
    return DigitFormula(t, i, place, previous, offset, lo, hi, bias, guard, gain,
                        ratio, L, tuple(marks), tilt_table)
