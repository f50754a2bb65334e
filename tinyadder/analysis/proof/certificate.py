"""The certificate checker: re-checks a proof written by ``tinyadder prove --certificate``.

Deliberately small and separate: it imports nothing of the derivation (no number system, no
forward pass, no ``decisions``), only ``models.build`` for the model's weights, and the
standard library. A certificate states, per deciding position, the scalar L(x) (coefficients
by position), the ten marks m_u, the gain G, the tilts T_u(y) - T_0(y) per previous digit y,
and the guard. The checker

1. recomputes from them, in exact rationals, kappa = (m_9 - m_0) / (9 P), the thresholds
   theta_u(y) = (m_u + m_{u+1}) / 2 + (T_{u+1}(y) - T_u(y)) / (2 G), the offset
   o(x) = L(x) / kappa - R(x) (R: a + b minus the emitted digits, by place), and every
   inequality of the induction (docs/proof.md): neighbouring tilts below the gain, and
   lo < r + o <= hi at r = 0 and r = 10^p - 1 over the digit box, widened by the guard;
2. runs its own exact forward pass (the architecture written out again from the weight tables,
   exponentials rounded as the fraction system rounds them) on spot pairs (seeded random ones
   and extremes), teacher-forced with the true digits, and checks at every deciding position
   that the costs -logit_u satisfy exactly
   cost_u - cost_0 = (T_u(y) - T_0(y)) + G (|L(x) - m_u| - |L(x) - m_0|).

Step 1 is the proof given the formulas; step 2 checks the formulas against the model at those
points (it is a check, not a second derivation).
"""

from fractions import Fraction
import decimal
import json
import random

from ...models import build

FORMAT = "tinyadder-proof-1"
SPOT_PAIRS = 6


class Invalid(ValueError):
    """The certificate does not check; the message says where."""


class Malformed(Invalid):
    """The file is not a readable certificate (bad input)."""


def _q(text):
    try:
        return Fraction(text)
    except (TypeError, ValueError, ZeroDivisionError):
        raise Malformed(f"not an exact rational: {text!r}") from None


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as err:
        raise Malformed(f"cannot read {path}: {err.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise Malformed(f"{path} is not JSON: {err}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Malformed(f"{path} is not a {FORMAT} certificate")
    return data


def _place(n, pos):
    """The place value a digit at ``pos`` adds to R (negative: an emitted digit)."""
    if 1 <= pos <= n:
        return 10 ** (n - pos)
    if n + 2 <= pos <= 2 * n + 1:
        return 10 ** (2 * n + 1 - pos)
    if 2 * n + 3 <= pos <= 3 * n + 2:
        return -10 ** (3 * n + 3 - pos)
    raise Invalid(f"position {pos} holds no digit")


def check(data, spot=SPOT_PAIRS):
    """Raise Invalid unless the certificate checks; return its verdict line on success."""
    try:
        variant, n = data["variant"], int(data["digits"])
        decisions = data["decisions"]
        model = build(variant, n)
        exp_digits = int(data["exp_digits"])
    except (KeyError, TypeError, ValueError) as err:
        raise Malformed(f"malformed certificate: {err!s}") from None
    if not isinstance(decisions, list) or len(decisions) != n + 1:
        raise Malformed(f"expected {n + 1} decisions")
    parsed = []
    for t, d in enumerate(decisions):
        try:
            parsed.append(_check_decision(n, t, d))
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            if isinstance(err, Invalid):
                raise
            raise Malformed(f"decision {t}: malformed ({err!s})") from None
    _spot_check(model, n, parsed, exp_digits, spot)
    return f"certificate valid: {variant} model, N = {n}: every pair is added right"


def _check_decision(n, t, d):
    place, pos = n - t, 2 * n + 2 + t
    if int(d["t"]) != t or int(d["position"]) != pos:
        raise Invalid(f"decision {t}: wrong position")
    P = 10 ** place
    L = {int(v): _q(c) for v, c in d["L"].items()}
    marks = [_q(m) for m in d["marks"]]
    gain, guard = _q(d["gain"]), _q(d["guard"])
    if len(marks) != 10 or any(b <= a for a, b in zip(marks, marks[1:])) or gain <= 0 \
            or guard < 0:
        raise Invalid(f"decision {t}: marks must increase, the gain be positive")
    tilts = {(None if y == "-" else int(y)): [_q(x) for x in row]
             for y, row in d["tilts"].items()}
    expected = {None} if t == 0 else set(range(10))
    if set(tilts) != expected:
        raise Invalid(f"decision {t}: tilts for previous digits {sorted(expected, key=str)}")
    kappa = (marks[-1] - marks[0]) / (9 * P)
    offset = {v: c / kappa for v, c in L.items()}
    for v in list(range(1, n + 1)) + list(range(n + 2, 2 * n + 2)) + \
            list(range(2 * n + 3, 2 * n + 3 + t)):
        offset[v] = offset.get(v, 0) - _place(n, v)
    top = 1 if t == 0 else 9
    for y, T in tilts.items():
        if len(T) != 10:
            raise Invalid(f"decision {t}: ten tilts per previous digit")
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
    return pos, L, marks, gain, tilts


# --- an independent exact forward pass, for the spot checks --------------------------------

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


def _costs(model, tokens, exp):
    """-logits at every position of ``tokens`` (ids), exactly."""
    slots = model.slots
    xs = []
    for tok in tokens:
        row = dict.fromkeys(slots, Fraction(0))
        for s, w in model.W_E.get(model.vocab[tok], {}).items():
            row[s] = _weight(w, exp)
        xs.append(row)
    for block in model.blocks:
        a, m = block.attn, block.mlp
        proj = {}
        for name in ("Q", "K", "V"):
            W, b = getattr(a, "W_" + name), getattr(a, "b_" + name)
            proj[name] = [{h: sum((_weight(W[s][h], exp) * x[s] for s in W if h in W[s]),
                                  _weight(b.get(h, 0), exp)) for h in a.heads} for x in xs]
        mids = []
        for i, x in enumerate(xs):
            mid = dict(x)
            for h in a.heads:
                slope = a.slopes.get(h, 0)
                weights = []
                for j in range(i + 1):
                    e = exp(proj["Q"][i][h] * proj["K"][j][h])
                    if slope:  # ALiBi ln b: exp(-d ln b) = b^-d exactly
                        e *= Fraction(slope.base) ** -(i - j)
                    weights.append(e)
                denom = 1 + sum(weights)
                z = sum(w * proj["V"][j][h] for j, w in enumerate(weights)) / denom
                for s, w in a.W_O.get(h, {}).items():
                    mid[s] += _weight(w, exp) * z
            for s, w in a.b_O.items():
                mid[s] += _weight(w, exp)
            mids.append(mid)
        xs = []
        for mid in mids:
            post = dict(mid)
            for u in m.units:
                gate = sum((_weight(m.W_gate[s][u], exp) * mid[s] for s in m.W_gate
                            if u in m.W_gate[s]), _weight(m.b_gate.get(u, 0), exp))
                if gate > 0:
                    up = sum((_weight(m.W_in[s][u], exp) * mid[s] for s in m.W_in
                              if u in m.W_in[s]), _weight(m.b_in.get(u, 0), exp))
                    for s, w in m.W_out.get(u, {}).items():
                        post[s] += _weight(w, exp) * gate * up
            for s, w in m.b_out.items():
                post[s] += _weight(w, exp)
            xs.append(post)
    return [[x[model.readout[str(u)]] for u in range(10)] for x in xs]


def _spot_check(model, n, parsed, exp_digits, spot):
    exp = _Exp(exp_digits)
    rng = random.Random(2025)
    top = 10 ** n - 1
    pairs = [(top, top), (top, 0), (top // 2, top // 2 + 1)]
    pairs += [(rng.randint(0, top), rng.randint(0, top)) for _ in range(max(spot - 3, 0))]
    vocab = model.vocab
    for a, b in pairs[:spot]:
        text = f"{a:0{n}d}+{b:0{n}d}={a + b:0{n + 1}d}"
        tokens = [vocab.index("<bos>")] + [vocab.index(ch) for ch in text]
        digits = {i: int(vocab[tok]) for i, tok in enumerate(tokens) if vocab[tok].isdigit()}
        costs = _costs(model, tokens[:-1], exp)
        for pos, L, marks, gain, tilts in parsed:
            y = digits.get(pos) if pos > 2 * n + 2 else None
            Lx = sum(c * digits[v] for v, c in L.items())
            row = costs[pos]
            for u in range(10):
                claim = tilts[y][u] + gain * (abs(Lx - marks[u]) - abs(Lx - marks[0]))
                if row[u] - row[0] != claim:
                    raise Invalid(f"position {pos}, pair {a}+{b}: the model's logit of {u} "
                                  f"does not follow the certificate's formula")
