"""The certificate checker: re-checks a proof written by ``tinyadder prove --certificate``.

Deliberately small and separate: it imports nothing of the derivation (no number system, no
forward pass, no ``formulas``), only the model reader (``modelfile``: the model is the
certificate's own ``model`` text, which must have TinyAdder-36's architecture, the one its
pass evaluates; ``models.build`` where an old certificate has no text and names a
variant), ``claim`` (how a verdict names its model) and the standard library. A certificate
states, per deciding position, the scalar L(x) (coefficients
by position), the ten marks m_u, the gain G, the tilts T_u(y) - T_0(y) per previous digit y,
and the guard. The checker

1. recomputes from them, in exact rationals, kappa = (m_9 - m_0) / (9 P), the thresholds
   theta_u(y) = (m_u + m_{u+1}) / 2 + (T_{u+1}(y) - T_u(y)) / (2 G), the offset
   o(x) = L(x) / kappa - R(x) (R: a + b minus the emitted digits, by place), and every
   inequality of the induction (docs/proof.md): neighbouring tilts below the gain, and
   lo < r + o <= hi at r = 0 and r = 10^p - 1 over the digit box, widened by the guard;
2. derives the formulas again with its own exact forward pass (the architecture written out
   again from the weight tables, exponentials rounded as the fraction system rounds them),
   run once over the prompt and the answer with every digit of a, b and the answer a
   variable: every value an exact affine form in the digits (the embedding checked affine in
   the digit; an attention score, a product of two values, or a ReLU sign before the last
   layer that depends on the digits is refused), the last layer's ReLUs at a deciding
   position kinks relu(L - mu) of the certificate's own L (refused where a gate is no
   multiple of it); and checks at every deciding position, for every u and every previous
   digit y, that the costs -logit_u satisfy, as forms over the digit box,
   cost_u - cost_0 = (T_u(y) - T_0(y)) + G (|L(x) - m_u| - |L(x) - m_0|).

Step 2 makes the formulas the model's at every pair of the box; step 1 is the proof given
them. The claim checked is the model's as the fraction system computes it (e^x rounded to
the stated digits); the guard, which widens it to the real-number model, is the
certificate's (refused when 0 where an exponential was rounded), not derived here.

The file is input from anywhere: ``load`` bounds its size, ``parse`` checks every field's type
and range with one validator per field (a ``Malformed`` certificate names the field) before
anything is computed from it, and nothing the file says sets a precision: the exponentials are
rounded at the digits the fraction system uses for the model (``exp_digits_of``), which the
file's ``exp_digits`` must equal. A guard of 0 is refused when the model's exponentials are
rounded.
"""

from dataclasses import dataclass, field, is_dataclass
from fractions import Fraction
import decimal
import re
from typing import Dict, Optional, Tuple

from ..construction import VARIANTS
from ..modelfile import dump, loads
from ..models import build
from .kernel.claim import named
from .kernel.claim import Invalid, Malformed
from .reading import MAX_INT_DIGITS, json_of, read_bytes

FORMAT = "tinyadder-proof-1"
CLAIM = "every pair of N-digit numbers is added right"
# Every size the file controls is bounded before it is used. N: the check's CPU grows about
# as N^3 (4.3 s at N = 10 and 31 s at N = 20 on the project's machine; at N = 40 the
# certificate is 6.3 MB and its longest integer 1,309 digits).
MAX_DIGITS = 40
MAX_BYTES = 16 * 2 ** 20
MAX_SMALL_INT = 30       # digits of a JSON integer literal (N, t, position, place)
# The exponentials are rounded as the fraction system rounds them for the model: to the
# model's stated precision plus this many digits (numbers.protocol.EXP_GUARD_DIGITS; the file's
# exp_digits must say the same).
EXP_GUARD_DIGITS = 10
_RATIONAL = re.compile(r"-?([0-9]+)(?:/([0-9]+))?")


@dataclass(frozen=True)
class Decision:
    """One deciding position of a certificate, its fields checked for type and range."""

    t: int
    position: int
    L: Dict[int, Fraction]                       # coefficient by sequence position
    marks: Tuple[Fraction, ...]                  # m_0 < ... < m_9 (checked by the proof)
    gain: Fraction                               # G > 0
    guard: Fraction                              # >= 0
    tilts: Dict[Optional[int], Tuple[Fraction, ...]]  # T_u(y) - T_0(y), y None at t = 0


@dataclass(frozen=True)
class Certificate:
    variant: str       # the model's name: a label, never trusted (the text is the model)
    digits: int
    exp_digits: int
    decisions: Tuple[Decision, ...]
    model: object = field(compare=False)  # the model of ``text`` (its == is identity)
    text: str          # the model file's text the certificate is about


# --- reading the file ---------------------------------------------------------------------

def _small_int(text):
    if len(text.lstrip("-")) > MAX_SMALL_INT:
        raise Malformed(f"an integer literal of {len(text)} characters; the fields that are "
                        f"JSON integers have at most {MAX_SMALL_INT} digits")
    return int(text)


def load(path, raw=None):
    """The certificate's JSON data, read with every size bounded: at most MAX_BYTES (plain or
    gzip-compressed), no integer literal over MAX_SMALL_INT digits (``read_json``); ``raw``:
    the file's bytes (``read_bytes``) where already read."""
    if raw is not None and len(raw) > MAX_BYTES:
        raise Malformed(f"{path} is larger than {MAX_BYTES:,} bytes; a certificate at "
                        f"N = {MAX_DIGITS} has about 6.3 MB")
    data = json_of(raw if raw is not None else read_bytes(path, MAX_BYTES), path, _small_int)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Malformed(f"{path} is not a {FORMAT} certificate")
    return data


# --- one validator per field --------------------------------------------------------------

def _get(doc, key, where):
    if not isinstance(doc, dict):
        raise Malformed(f"{where or 'the certificate'} is not a JSON object")
    if key not in doc:
        raise Malformed(f"{where}{key} is missing")
    return doc[key]


def _integer(value, where, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        shown = value if isinstance(value, int) else type(value).__name__
        raise Malformed(f"{where} is {shown!s:.40}; expected an integer from {lo} to {hi}")
    return value


def _exactly(value, where, wanted, why=""):
    """An integer field whose only valid value follows from the others."""
    if isinstance(value, bool) or not isinstance(value, int) or value != wanted:
        shown = value if isinstance(value, int) else type(value).__name__
        raise Malformed(f"{where} is {shown!s:.40}; expected {wanted}{why}")
    return value


def _rational(value, where):
    """An exact rational written as str(Fraction): '-3/4', '12'; each part at most
    MAX_INT_DIGITS digits (no exponent: '1e1000000000' would be a billion digits)."""
    match = _RATIONAL.fullmatch(value) if isinstance(value, str) else None
    if not match or any(len(part or "") > MAX_INT_DIGITS for part in match.groups()):
        shown = repr(value)[:40]
        raise Malformed(f"{where} is {shown}; expected an exact rational 'n' or 'n/d' of at "
                        f"most {MAX_INT_DIGITS} digits each")
    if match.group(2) is not None and int(match.group(2)) == 0:
        raise Malformed(f"{where} has a zero denominator")
    return Fraction(value)


def _rationals(value, where, count):
    if not isinstance(value, list) or len(value) != count:
        raise Malformed(f"{where} should be a list of {count} exact rationals")
    return tuple(_rational(x, f"{where}[{i}]") for i, x in enumerate(value))


def _positive(value, where):
    x = _rational(value, where)
    if x <= 0:
        raise Malformed(f"{where} is {value}; it must be positive")
    return x


def _non_negative(value, where):
    x = _rational(value, where)
    if x < 0:
        raise Malformed(f"{where} is {value}; it must be at least 0")
    return x


def digit_places(n, t):
    """{position: the place value its digit adds to R} for the digits known when decision t
    is made: a and b (positive), and the t digits emitted so far (negative)."""
    places = {}
    for i in range(n):
        places[1 + i] = places[n + 2 + i] = 10 ** (n - 1 - i)
    for k in range(t):
        places[2 * n + 3 + k] = -10 ** (n - k)
    return places


def _coefficients(value, where, positions):
    """L: {position: rational} over positions that hold a known digit."""
    if not isinstance(value, dict):
        raise Malformed(f"{where} should be an object of position: rational")
    out = {}
    for key, c in value.items():
        pos = int(key) if key.isascii() and key.isdigit() and len(key) <= 6 else None
        if pos not in positions:
            raise Malformed(f"{where} has position {key[:12]!r}, which holds no digit known "
                            f"there; use positions {min(positions)} to {max(positions)} "
                            f"that hold digits")
        out[pos] = _rational(c, f"{where}[{key}]")
    return out


def _tilts(value, where, t):
    """{previous digit y: ten tilts}: y is '-' (none) at t = 0, else each of '0'..'9'."""
    keys = ["-"] if t == 0 else [str(y) for y in range(10)]
    if not isinstance(value, dict) or sorted(value) != keys:
        raise Malformed(f"{where} should have the keys {', '.join(keys)}")
    return {(None if y == "-" else int(y)): _rationals(row, f"{where}[{y}]", 10)
            for y, row in value.items()}


def _decision(d, n, t):
    where = f"decisions[{t}]."
    position = 2 * n + 2 + t
    _exactly(_get(d, "t", where), where + "t", t)
    _exactly(_get(d, "position", where), where + "position", position)
    if "place" in d:
        _exactly(d["place"], where + "place", n - t)
    return Decision(
        t=t, position=position,
        L=_coefficients(_get(d, "L", where), where + "L", digit_places(n, t)),
        marks=_rationals(_get(d, "marks", where), where + "marks", 10),
        gain=_positive(_get(d, "gain", where), where + "gain"),
        guard=_non_negative(_get(d, "guard", where), where + "guard"),
        tilts=_tilts(_get(d, "tilts", where), where + "tilts", t))


def exp_digits_of(model):
    """The digits the fraction system rounds the model's exponentials to."""
    precision = model.meta.get("precision")
    if precision is None:
        raise Malformed("model: the model states no precision, at which its exponentials "
                        "are rounded")
    return precision.digits + EXP_GUARD_DIGITS


def _model(data, variant, n):
    """(the model, its file text): the certificate's ``model`` text, or where it has none
    (certificates written before the text was kept) the construction variant it names."""
    if "model" not in data:
        if variant not in VARIANTS:
            raise Malformed(f"variant is {str(variant)[:30]!r}; a certificate without the "
                            f"model's text names {' or '.join(VARIANTS)}")
        model = build(variant, n)
        return model, dump(model)
    text = data["model"]
    if not isinstance(text, str):
        raise Malformed("model: not the text of a model file")
    try:
        model = loads(text)
    except ValueError as why:
        raise Malformed(f"model: {why}") from None
    if model.prompt is None or model.prompt.digits != n:
        raise Malformed(f"digits is {n}, not the model's N")
    beyond = _beyond(model, build(VARIANTS[0], n))
    if beyond:
        raise Invalid(f"the model has {beyond}, which this checker's forward pass does not "
                      f"evaluate (it evaluates TinyAdder-36's architecture only)")
    return model, text


# What the checker's own forward pass (``_costs``) evaluates: TinyAdder-36's architecture.
# Every other field of the model must be as in the construction, else it would be ignored.
_MODEL_FIELDS = ("vocab", "prompt", "pos_role", "ln_final")
_ATTENTION_FIELDS = ("q_norm", "k_norm", "rope_freqs", "scale", "scale_op", "bias",
                     "bias_default", "softmax", "mask", "normalise")


def _fields(x):
    """A dataclass's field values (its own == is identity), anything else itself."""
    return tuple(vars(x).values()) if is_dataclass(x) else x


def _beyond(model, reference):
    """None if ``model`` has nothing the checker's pass does not evaluate (every field
    outside the weight tables as in ``reference``, the construction), else what it has."""
    for f in _MODEL_FIELDS:
        if _fields(getattr(model, f)) != _fields(getattr(reference, f)):
            return f"a {f} other than TinyAdder-36's"
    if model.W_pos or model.unembed.kind != "negative_error" or \
            sorted(model.readout) != [str(u) for u in range(10)]:
        return "positions, or a readout other than ten negative-error slots"
    if len(model.blocks) != len(reference.blocks):
        return f"{len(model.blocks)} blocks"
    for k, block in enumerate(model.blocks):
        ref = reference.blocks[k]
        if block.ln1 is not None or block.ln2 is not None:
            return f"a norm in block {k}"
        for f in _ATTENTION_FIELDS:
            if getattr(block.attn, f) != getattr(ref.attn, f):
                return f"block {k}'s attention {f} other than TinyAdder-36's"
        if (block.mlp.act, block.mlp.gated) != ("relu", True):
            return f"block {k}'s FFN other than ReGLU"
    return None


def parse(data):
    """The Certificate in ``data``, every field checked for type and range; Malformed naming
    the first that is not."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Malformed(f"not a {FORMAT} certificate")
    variant = _get(data, "variant", "")
    if not isinstance(variant, str) or len(variant) > 1000:
        raise Malformed(f"variant is {str(variant)[:30]!r}; expected {' or '.join(VARIANTS)} "
                        f"or the name of the model its text holds (at most 1,000 characters)")
    n = _integer(_get(data, "digits", ""), "digits", 1, MAX_DIGITS)
    if _get(data, "claim", "") != CLAIM:
        raise Malformed(f"claim should be {CLAIM!r}, the only claim this checker checks")
    model, text = _model(data, variant, n)
    exp_digits = _exactly(_get(data, "exp_digits", ""), "exp_digits", exp_digits_of(model),
                          f", the digits the fraction system rounds e^x to at N = {n}")
    decisions = _get(data, "decisions", "")
    if not isinstance(decisions, list) or len(decisions) != n + 1:
        raise Malformed(f"decisions should be a list of N + 1 = {n + 1} deciding positions")
    return Certificate(variant, n, exp_digits,
                       tuple(_decision(d, n, t) for t, d in enumerate(decisions)), model, text)


# --- the proof ----------------------------------------------------------------------------

def check(data):
    """Raise Invalid unless the certificate checks (Malformed if it is not a readable one);
    return its verdict line on success."""
    cert = parse(data)
    for d in cert.decisions:
        _check_decision(cert.digits, d)
    _derive(cert.model, cert)
    return (f"certificate valid: {named(cert.variant, cert.text)}, N = {cert.digits}: every "
            f"pair is added right (e^x to {cert.exp_digits} digits): the model's costs, "
            f"derived again from its weights over every digit, are the certificate's "
            f"formulas, and the induction on them holds (exact)")


def _check_decision(n, d):
    t, pos = d.t, d.position
    P = 10 ** (n - t)
    marks, gain, guard = d.marks, d.gain, d.guard
    if any(b <= a for a, b in zip(marks, marks[1:])):
        raise Invalid(f"decision {t}: marks must increase")
    kappa = (marks[-1] - marks[0]) / (9 * P)
    offset = {v: c / kappa for v, c in d.L.items()}
    for v, place in digit_places(n, t).items():
        offset[v] = offset.get(v, 0) - place
    top = 1 if t == 0 else 9
    for y, T in d.tilts.items():
        theta = []
        for u in range(9):
            delta = T[u + 1] - T[u]
            if abs(delta) >= gain * (marks[u + 1] - marks[u]):
                raise Invalid(f"decision {t}: tilts {u}, {u + 1} differ by the gain or more")
            theta.append((marks[u] + marks[u + 1]) / 2 + delta / (2 * gain))
        lo = hi = Fraction(0)
        for v, c in offset.items():
            if y is not None and v == pos:
                lo, hi = lo + c * y, hi + c * y
            elif c > 0:
                hi += 9 * c
            else:
                lo += 9 * c
        for sigma in range(top + 1):
            if sigma > 0 and not lo > theta[sigma - 1] / kappa - sigma * P + guard:
                raise Invalid(f"decision {t}: digit {sigma} after {y} can fall below")
            if sigma < 9 and not hi + P - 1 <= theta[sigma] / kappa - sigma * P - guard:
                raise Invalid(f"decision {t}: digit {sigma} after {y} can carry falsely")


# --- an independent exact forward pass over every digit, the formulas derived again -------

class _Lin:
    """c + sum_v coef[v] x_v + sum_mu kinks[mu] relu(L - mu), exactly: an affine form in the
    digits x_v (v the position holding the digit, each in 0..9), and at a deciding position
    the last layer's ReLUs as kinks of the decision's scalar L."""

    __slots__ = ("c", "coef", "kinks")

    def __init__(self, c, coef=None, kinks=None):
        self.c, self.coef, self.kinks = Fraction(c), coef or {}, kinks or {}

    def __add__(self, other):
        o = other if isinstance(other, _Lin) else _Lin(other)
        return _Lin(self.c + o.c, _merged(self.coef, o.coef), _merged(self.kinks, o.kinks))

    __radd__ = __add__

    def times(self, r):
        """r times this form, r rational."""
        return _Lin(self.c * r, {v: a * r for v, a in self.coef.items() if r},
                    {m: b * r for m, b in self.kinks.items() if r})

    def __mul__(self, other):
        """A product with a constant; Invalid for two values that depend on the digits."""
        o = other if isinstance(other, _Lin) else _Lin(other)
        if not o.coef and not o.kinks:
            return self.times(o.c)
        return o.times(self.constant("a product of two values that depend on the digits"))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self.times(1 / Fraction(other))

    def __sub__(self, other):
        return self + other * -1

    def constant(self, what):
        """The form's value where it depends on no digit; Invalid saying ``what`` else."""
        if self.coef or self.kinks:
            raise Invalid(f"{what}: outside what the closed form's certificate states")
        return self.c

    def bounds(self):
        """(least, greatest) of the form (without kinks) over the digit box, 0..9 each."""
        return (self.c + sum(min(a, 0) * 9 for a in self.coef.values()),
                self.c + sum(max(a, 0) * 9 for a in self.coef.values()))

    def sign(self):
        """True where the form is >= 0 at every digit, False where <= 0, else None."""
        lo, hi = self.bounds()
        return True if lo >= 0 else False if hi <= 0 else None

    def on_box(self, L):
        """The form with each kink outside L's range [lo, hi] over the box written as what it
        is there: relu(L - mu) = 0 for mu >= hi, L - mu for mu <= lo."""
        lo, hi = L.bounds()
        out = _Lin(self.c, self.coef)
        for mu, b in self.kinks.items():
            out = out + ((L - mu).times(b) if mu <= lo else 0 if mu >= hi else
                         _Lin(0, None, {mu: b}))
        return out

    def relu(self, L, where):
        """relu of this form, a multiple lam (L - mu) of the scalar L (Invalid else):
        |lam| relu(L - mu), plus the form itself where lam < 0."""
        v = next(iter(L.coef))
        lam = self.coef.get(v, 0) / L.coef[v]
        rest = self - L.times(lam)
        if self.kinks or not lam or rest.coef:
            raise Invalid(f"{where}: a ReLU whose sign depends on the digits is not a multiple "
                          f"of the certificate's L")
        return _Lin(0, None, {-rest.c / lam: abs(lam)}) + (self if lam < 0 else 0)


def _merged(x, y):
    out = dict(x)
    for k, a in y.items():
        a += out.get(k, 0)
        if a:
            out[k] = a
        else:
            out.pop(k, None)
    return out


class _Exp:
    """exp of a rational, as the fraction system takes it: e^0 = 1; for x < 0 rounded to
    ``digits`` significant digits (round-half-even), once per x; for x > 0 exactly 1 / e^-x."""

    def __init__(self, digits):
        self.ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_HALF_EVEN,
                                   Emin=-decimal.MAX_EMAX, Emax=decimal.MAX_EMAX)
        self.memo = {}

    def __call__(self, x):
        x = Fraction(x)
        if x == 0:
            return Fraction(1)
        if x > 0:
            return 1 / self(-x)
        if x not in self.memo:
            if x.denominator != 1:
                raise Invalid("the checker evaluates exp at integers only")
            self.memo[x] = Fraction(self.ctx.exp(decimal.Decimal(x.numerator)))
        return self.memo[x]


def _weight(w, exp):
    if hasattr(w, "power"):  # coef * e**power
        return Fraction(w.coef) * exp(w.power)
    return Fraction(w)


def _embedding(model, tokens, digit_at, exp):
    """The embedding rows of ``tokens``, the digit at each position of ``digit_at`` a variable:
    E(0) + x_v (E(1) - E(0)), E affine in the digit (checked exactly; Invalid else)."""
    rows = {t: {s: _weight(w, exp) for s, w in model.W_E.get(t, {}).items()}
            for t in model.vocab}
    e0, e1 = rows["0"], rows["1"]
    for d in range(10):
        for s in set(e0) | set(e1) | set(rows[str(d)]):
            if rows[str(d)].get(s, 0) != e0.get(s, 0) + d * (e1.get(s, 0) - e0.get(s, 0)):
                raise Invalid(f"the embedding of digit {d} is not affine in the digit")
    xs = []
    for i, tok in enumerate(tokens):
        row = {s: _Lin(0) for s in model.slots}
        for s, w in rows[model.vocab[tok]].items():
            row[s] = _Lin(w)
        if i in digit_at:
            for s in model.slots:
                row[s] = _Lin(e0.get(s, 0), {i: e1.get(s, 0) - e0.get(s, 0)}
                              if e1.get(s, 0) != e0.get(s, 0) else None)
        xs.append(row)
    return xs


def _costs(model, xs, exp, scalars):
    """cost_u = -logit_u at every position, the pass run exactly over the rows ``xs``
    (:class:`_Lin`); a ReLU whose sign the digits decide is refused, except in the last block
    at a deciding position i, where it is a kink of ``scalars[i]`` (the certificate's L
    there). The last block's FFN is run at those positions only (no other reads it)."""
    last = len(model.blocks) - 1
    for k, block in enumerate(model.blocks):
        a, m = block.attn, block.mlp
        proj = {}
        for name in ("Q", "K", "V"):
            W, b = getattr(a, "W_" + name), getattr(a, "b_" + name)
            proj[name] = [{h: sum((_weight(W[s][h], exp) * x[s] for s in W if h in W[s]),
                                  _Lin(_weight(b.get(h, 0), exp))) for h in a.heads}
                          for x in xs]
        mids = []
        for i, x in enumerate(xs):
            mid = dict(x)
            for h in a.heads:
                slope = a.slopes.get(h, 0)
                weights = []
                for j in range(i + 1):
                    e = exp((proj["Q"][i][h] * proj["K"][j][h]).constant(
                        f"block {k}'s attention score at position {i}"))
                    if slope:  # ALiBi ln b: exp(-d ln b) = b^-d exactly
                        e *= Fraction(slope.base) ** -(i - j)
                    weights.append(e)
                denom = 1 + sum(weights)
                z = sum((proj["V"][j][h] * w for j, w in enumerate(weights)), _Lin(0)) / denom
                for s, w in a.W_O.get(h, {}).items():
                    mid[s] = mid[s] + z * _weight(w, exp)
            for s, w in a.b_O.items():
                mid[s] = mid[s] + _weight(w, exp)
            mids.append(mid)
        xs = []
        for i, mid in enumerate(mids):
            post = dict(mid)
            if k == last and i not in scalars:
                xs.append(post)
                continue
            for u in m.units:
                gate = sum((_weight(m.W_gate[s][u], exp) * mid[s] for s in m.W_gate
                            if u in m.W_gate[s]), _Lin(_weight(m.b_gate.get(u, 0), exp)))
                up = sum((_weight(m.W_in[s][u], exp) * mid[s] for s in m.W_in
                          if u in m.W_in[s]), _Lin(_weight(m.b_in.get(u, 0), exp)))
                on, where = gate.sign(), f"block {k}'s ReLU {u} at position {i}"
                if on is None and k != last:
                    raise Invalid(f"{where}: its sign depends on the digits")
                value = gate * up if on else None if on is False else \
                    gate.relu(scalars[i], where) * up.constant(f"{where}: its value")
                for s, w in (m.W_out.get(u, {}).items() if value is not None else ()):
                    post[s] = post[s] + value * _weight(w, exp)
            for s, w in m.b_out.items():
                post[s] = post[s] + _weight(w, exp)
            xs.append(post)
    return [[x[model.readout[str(u)]] for u in range(10)] for x in xs]


def _derive(model, cert):
    """The certificate's cost formula derived again from the model's weights at every digit:
    the pass run once over the prompt a+b= and the answer, every digit of a, b and the answer
    a variable, then at every deciding position and every u, exactly as forms,

        cost_u - cost_0 = (T_u(y) - T_0(y)) + G (|L - m_u| - |L - m_0|)
                        = T_u(y) + G (m_u - m_0) + 2 G relu(L - m_u) - 2 G relu(L - m_0),

    where the model's side may depend on no digit but y, the previous one (equal for each
    y), each relu(L - mu) written as 0 or L - mu where L's range over the digit box lies on
    one side of mu (``on_box``); forms equal so are equal at every digit of the box. A guard of 0 is refused once an exponential
    was rounded (the guard must cover the real-number model)."""
    n, vocab = cert.digits, model.vocab
    text = f"{'0' * n}+{'0' * n}={'0' * n}"
    tokens = [vocab.index("<bos>")] + [vocab.index(ch) for ch in text]
    digit_at = {i for i, tok in enumerate(tokens) if vocab[tok].isdigit()}
    exp = _Exp(cert.exp_digits)
    scalars = {d.position: _Lin(0, {v: c for v, c in d.L.items() if c}) for d in cert.decisions}
    if any(not L.coef for L in scalars.values()):
        raise Invalid("an L that depends on no digit")
    costs = _costs(model, _embedding(model, tokens, digit_at, exp), exp, scalars)
    unguarded = [d.t for d in cert.decisions if d.guard == 0]
    if exp.memo and unguarded:
        raise Invalid(f"decision {unguarded[0]}: guard 0, but the model's exponentials "
                      f"are rounded: the real-number model is not covered")
    for d in cert.decisions:
        row, G, m, L = costs[d.position], d.gain, d.marks, scalars[d.position]
        for u in range(1, 10):
            formula = _Lin(G * (m[u] - m[0]), None, _merged({m[u]: 2 * G}, {m[0]: -2 * G}))
            rest = (row[u] - row[0]).on_box(L) - formula.on_box(L)   # T_u(y) - T_0(y)
            if rest.kinks or set(rest.coef) - {d.position if d.t else None}:
                _not_followed(d, u)
            for y, T in d.tilts.items():
                if rest.c + rest.coef.get(d.position, 0) * (y or 0) != T[u]:
                    _not_followed(d, u, y)


def _not_followed(d, u, y=None):
    after = "" if y is None else f" after the digit {y}"
    raise Invalid(f"position {d.position}: the model's logit of {u}{after} does not follow "
                  f"the certificate's formula")
