"""The algorithm, narrated from a trace: one block per position that writes a sum digit.

At position i, which decides the sum digit of place P, TinyAdder-36 does long addition from
the top: R is what remains to be written (a + b minus the digits already written, times their
places) and b a small rounding bias; the model compares (R + b)/P with ten ruler marks u + 1/2
and writes the digit u of the nearest mark. Every figure here is read from the trace of
``trace.run_with_cache``, in units of the sum (a and b serve only to flag a trace whose R is
off, as rounding makes it in float32):

- the running average of layer 1 holds ``z_i = unit * scale_i * (R + b + leakage)``;
- candidate u holds ``cand_u = -unit * scale_i * (u + 1/2) P``: the marks, P their spacing;
- layer 1's FFN writes ``err_u = err_scale * unit * scale_i * |R + b + leakage - (u + 1/2) P|``;
- the readout adds to err_u whatever else its slot holds (nothing in the repaired model; in the
  published one another candidate: the tilt), and the smallest sum wins.

``unit`` (1000: the digit embedding 10 times layer 1's value weight 100) and ``err_scale``
(10^6: layer 1's gate 10^4 times its up projection 100) are read from the weights, ``scale_i``
= 1/(i+2) from layer 0's head 4. The margin is how much nearer the winning mark is than the
runner-up's; the bias b is (i + 1) * (layer 1's value bias) / unit.

>>> from tinyadder import build, number_system, run_with_cache
>>> _, cache = run_with_cache(build("published"), "5193798811+1806201129",
...                           ns=number_system("decimal"))
>>> d = decisions(cache)[1]
>>> d.pos, d.remaining, d.power, d.nearest, d.chosen, d.flipped
(23, 6999999940, 9, 6, 7, True)
>>> round(float(d.margin), 2), round(float(d.tilt), 2)      # units of the sum
(119.23, 1000.0)
"""

from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
import textwrap

from ..generate import argmax
from .text import exponent
from .show import rounded
from ..cache import act_name

WIDTH = 80
SMALL = 2          # a margin under 2 units: R mod P is 0 or P - 1, the bias b decides
TILT_SHOWN = Fraction(1, 10)   # show a tilt against the winner of a tenth of the margin or more


def _q(x):
    """A trace value as an exact rational (float and Decimal values convert exactly)."""
    return x if isinstance(x, Fraction) else Fraction(x)


def scales(model):
    """(unit, err_scale, bias): what one unit of the sum is in layer 1's running sum, what
    layer 1's FFN multiplies |cand_u + z| by, and layer 1's value bias, from the weights."""
    last = model.blocks[-1]
    (digit_weight,) = [w for row in last.attn.W_V.values() for w in row.values()]
    unit = Fraction(digit_weight) * Fraction(model.W_E["1"]["digit"])
    unit_name = last.mlp.units[0]
    gate = [row[unit_name] for row in last.mlp.W_gate.values() if unit_name in row]
    err_scale = Fraction(gate[0]) * Fraction(last.mlp.b_in[unit_name])
    (bias,) = last.attn.b_V.values()
    return unit, err_scale, Fraction(bias)


@dataclass(frozen=True)
class Decision:
    """One position's digit decision, in units of the sum (all from the trace)."""

    pos: int
    token: str          # the token at pos
    written: str        # the token generated at pos + 1
    total: Fraction     # R + b + leakage
    bias: Fraction      # b
    remaining: int      # R: total - b to the nearest integer
    place: Fraction     # P: the spacing of the ruler marks
    distance: tuple     # |total - (u + 1/2) P| for u = 0..9, from err_u
    nearest: int        # the digit of the nearest mark (the smallest err)
    runner: int         # the digit of the next nearest mark
    chosen: int         # the digit the readout picks (largest logit)
    rival: int          # the digit nearest is compared with: chosen if it differs, else runner
    margin: Fraction    # distance[rival] - distance[nearest]
    tilt: Fraction      # how much the readout's other slot contents favour rival over nearest

    @property
    def leakage(self):
        return self.total - self.bias - self.remaining

    @property
    def ratio(self):
        """(R + b)/P, leakage included."""
        return self.total / self.place

    @property
    def power(self):
        """k with P nearest 10^k (P is 10^k less the construction's tiny leakage)."""
        k = exponent(self.place)
        return k + 1 if self.place ** 2 >= Fraction(10) ** (2 * k + 1) else k

    @property
    def flipped(self):
        return self.chosen != self.nearest


def decisions(cache):
    """A Decision for every position that predicted a token of the sum."""
    model = cache.model
    unit, err_scale, value_bias = scales(model)
    last = len(model.blocks) - 1
    digits = [str(u) for u in range(10)]
    readout = model.readout
    out = []
    for pos in cache.predicting:
        scale = _q(cache.view(act_name("resid_mid", 0), pos)["scale"])
        cands = cache.view(act_name("resid_post", 0), pos)
        z = _q(cache["z", last][pos][0])
        total = z / (unit * scale)
        marks = [-_q(cands[f"cand{u}"]) / (unit * scale) for u in range(10)]
        place = marks[1] - marks[0]
        err = cache.view(act_name("mlp_out", last), pos)
        post = cache.view(act_name("resid_post", last), pos)
        size = err_scale * unit * scale
        distance = tuple(_q(err[readout[t]]) / size for t in digits)
        other = [(_q(post[readout[t]]) - _q(err[readout[t]])) / size for t in digits]
        order = sorted(range(10), key=lambda u: (distance[u], u))
        nearest, runner = order[0], order[1]
        labels = cache.labels("unembed.hook_out")
        chosen = int(labels[argmax(cache["logits"][pos])])
        rival = chosen if chosen != nearest else runner
        bias = (pos + 1) * value_bias / unit
        out.append(Decision(
            pos=pos, token=model.vocab[cache.tokens[pos]],
            written=model.vocab[cache.tokens[pos + 1]], total=total, bias=bias,
            remaining=round(total - bias), place=place, distance=distance,
            nearest=nearest, runner=runner, chosen=chosen, rival=rival,
            margin=distance[rival] - distance[nearest], tilt=other[nearest] - other[rival]))
    return out


def fixed(q, places):
    """q rounded to ``places`` decimals, as text ('8.0014', '-60')."""
    n = round(Fraction(q) * 10 ** places)
    sign, n = ("-" if n < 0 else ""), abs(n)
    if not places:
        return f"{sign}{n}"
    text = f"{n:0{places + 1}d}"
    return f"{sign}{text[:-places]}.{text[-places:]}"


def short(q, most=6, sig=2):
    """q exactly when it has at most ``most`` decimals ('0.345'), else to ``sig`` digits."""
    q = Fraction(q)
    for places in range(most + 1):
        if (q * 10 ** places).denominator == 1:
            return fixed(q, places)
    return rounded(q, sig)


def two_digits(q):
    """q to two significant digits, trailing zeros kept ('1.0', '0.0027', '1.2e-7')."""
    q = Fraction(q)
    if not q:
        return "0"
    with localcontext() as ctx:
        ctx.prec = 2
        d = Decimal(q.numerator) / Decimal(q.denominator)
        places = 1 - d.adjusted()
        return format(d, f".{places}f") if -4 <= d.adjusted() <= 1 else format(d, ".1e")


def ratio_text(d):
    """(R + b)/P with enough decimals to show how far it is from the boundary it is near."""
    places = max(4, 1 - exponent(d.margin / d.place)) if d.margin else 4
    x = d.ratio
    if x and abs(x) < Fraction(1, 10 ** places):
        return rounded(x, 2)
    return fixed(x, min(places, 30))


LEGEND = """\
R: what remains to be written (a + b minus the digits written, at their places);
P: the place of the digit being decided; b: the rounding bias; leakage: what the
construction adds to R. The model writes the digit u of the mark u + 1/2 nearest
(R + b)/P; the margin is how much nearer that mark is than the next one. Every
figure is read from the trace, in units of the sum (docs/walkthrough.md)."""


def block(d, expected=None):
    """The lines narrating one decision; ``expected``: what R should be (a + b minus the
    digits written), to flag a trace whose R is off (rounding in an inexact number system)."""
    lines = [f"position {d.pos} ({d.token!r}): R = {d.remaining}, P = 10^{d.power}, "
             f"b = {short(d.bias)}, leakage {short(d.leakage)}",
             f"  (R + b)/P = {ratio_text(d)} -> nearest mark {d.nearest}.5 -> digit "
             f"{d.nearest}; margin {two_digits(d.margin / d.place)}*P over {d.rival}"]
    if expected is not None and d.remaining != expected:
        lines.append(f"  ! R is off by {d.remaining - expected} units: a + b minus the digits "
                     f"written is {expected} (rounding)")
    if d.flipped:
        lines.append(f"  ! the readout's tilt favours {d.chosen} by {rounded(d.tilt, 4)} units, "
                     f"more than the margin of {rounded(d.margin, 4)} units: it writes "
                     f"{d.chosen}, not {d.nearest}")
    elif d.tilt > 0 and d.tilt >= TILT_SHOWN * d.margin:
        lines.append(f"  tilt: the readout favours {d.rival} by {rounded(d.tilt, 4)} units, "
                     f"{rounded(100 * d.tilt / d.margin, 2)}% of the margin")
    if d.remaining < 0:
        lines.append("  R < 0: the digits written already exceed a + b")
    elif d.margin < SMALL and not d.flipped and d.remaining < 10 * d.place:
        why = ("at the units, b (about 1/2) rounds to R's own mark" if d.power == 0 else
               "R is a multiple of P, or one less, and b decides")
        lines.append(f"  small margin ({rounded(d.margin, 2)} units): {why}")
    return [piece for line in lines
            for piece in textwrap.wrap(line, WIDTH, subsequent_indent="    ")]


def remaining_values(a, b, written):
    """What remains to be written before each digit of ``written``: a + b minus the digits
    already written at their places (for checking a trace, never for narrating it)."""
    n = len(written)
    return [a + b - (int(written[:k]) * 10 ** (n - k) if k else 0) for k in range(n)]


def narrate(cache, a, b):
    """The narration of a traced addition of a and b, as text (lines <= 80 columns)."""
    model = cache.model
    found = decisions(cache)
    lines = [cache.text[len("<bos>"):], f"{model.name}, numbers: {cache.ns.describe()}", ""]
    lines += LEGEND.splitlines()
    written = "".join(d.written for d in found)
    for d, expected in zip(found, remaining_values(a, b, written)):
        lines += [""] + block(d, expected)
    if int(written) == a + b:
        lines += ["", f"sum {written}: right"]
    else:
        want = f"{a + b:0{len(written)}d}"
        first = next(k for k, (x, y) in enumerate(zip(written, want)) if x != y)
        d = found[first]
        why = ("the readout's tilt beat the margin" if d.flipped else
               "the number system's rounding moved (R + b)/P past a boundary")
        lines += ["", f"sum {written}: wrong, a + b = {want}; the first wrong digit was "
                      f"written at position {d.pos}: {why}"]
    return "\n".join(piece for line in lines
                     for piece in (textwrap.wrap(line, WIDTH, subsequent_indent="  ")
                                   or [""])) + "\n"
