"""The algorithm, narrated from a trace: one block per position that writes a sum digit.

At position i, which decides the sum digit of place P, TinyAdder-36 does long addition from
the top. Its words, each with one meaning, all in *units of the sum* (1 is one unit of a + b):

- R, what remains to be written: a + b minus the digits already written, at their places;
- b, the rounding bias, (i + 1) * (layer 1's value bias) / unit; the leakage (ℓ), what the
  construction itself adds to R (the place values of ``<bos>`` and ``+``, still decaying);
- x = (R + b + ℓ)/P, where what layer 1 holds falls on the ruler whose marks are u + 1/2;
  the nearest mark's digit u wins unless the readout tilts the comparison;
- the margin: how much farther the rival's mark is than the nearest, from the errors err_u;
- the tilt: how much the readout's other slot contents favour the rival (the published
  readout's flaw when it exceeds the margin; negative where they favour the nearest digit;
  0 in the repaired model);
- the lead: the winner's logit minus the runner-up's, so margin - tilt when the nearest
  digit wins, tilt - margin when the tilt overrides it.

Every figure is read from the trace of ``trace.run_with_cache`` (a and b serve only to flag a
trace whose R is off, as rounding makes it in float32):

- the running average of layer 1 holds ``z_i = unit * scale_i * (R + b + ℓ)``;
- candidate u holds ``cand_u = -unit * scale_i * (u + 1/2) P``: the marks, P their spacing;
- layer 1's FFN writes ``err_u = err_scale * unit * scale_i * |R + b + ℓ - (u + 1/2) P|``;
- the readout adds to err_u whatever else its slot holds, and the smallest sum wins.

``unit`` (1000: the digit embedding 10 times layer 1's value weight 100) and ``err_scale``
(10^6: layer 1's gate 10^4 times its up projection 100) are read from the weights, ``scale_i``
= 1/(i+2) from layer 0's head 4; one unit of the sum is ``size`` = err_scale * unit * scale_i
in the logits (10^9/(i+2)).

>>> from tinyadder import build, number_system, run_with_cache
>>> _, cache = run_with_cache(build("published"), "5193798811+1806201129",
...                           ns=number_system("decimal"))
>>> d = decisions(cache)[1]
>>> d.pos, d.remaining, d.power, d.nearest, d.chosen, d.flipped
(23, 6999999940, 9, 6, 7, True)
>>> figure(d.margin), figure(d.tilt), figure(d.lead), figure(d.tilt / d.margin, 2)
('119', '1000', '881', '8.4')

A Decision's repr shows short values exactly and long ones by their readable form
(``text.brief``); ``d.exact("total")`` gives every digit.
"""

from dataclasses import dataclass, fields
from decimal import Context, Decimal, ROUND_HALF_EVEN
from fractions import Fraction
import re
import textwrap

from ..generate import argmax
from ..numbers import first_largest, ordered
from ..numbers.multiscale import LEVELS, Multiscale
from ..numbers.protocol import Undecided
from .text import brief, exponent, figure as text_figure, finite
from .show import addition_line, rational_text, rounded
from ..addition import answer, digits_of
from .. import task as tasks
from ..cache import act_name, stages
from . import families
from .roles import layout_text, roles

WIDTH = 80
SMALL = 2          # a margin under 2 units: R mod P is 0 or P - 1, the bias b decides
TILT_SHOWN = Fraction(1, 10)   # show a tilt against the winner of a tenth of the margin or more


def _q(x):
    """A trace value as an exact rational (float and Decimal values convert exactly; a
    Multiscale is expanded, as long as its digits)."""
    if hasattr(x, "exact"):
        return x.exact()
    return x if isinstance(x, Fraction) else Fraction(x)


def _kept(x):
    """A trace value to compare and subtract: a Multiscale as it is (its order and its
    digits are read off enclosures; expanding e^-700000's 10^6-bit denominator takes
    minutes), anything else as an exact rational (``_q``)."""
    return x if isinstance(x, Multiscale) else _q(x)


def dust(x):
    """A bound B (a Decimal) with |x| <= B for a Multiscale whose sign its enclosures leave
    open without expanding it: 0 up to terms that cancel in every enclosure (jacobli99-28's
    x1 after the FFN where s_k = 0, whose leaves are near 10^-40250041832: as a rational,
    more digits than memory holds). B is read off the enclosure of its part T (x = R + T,
    ``split``, R = 0) at 1280 digits, else of x itself. None for any other value, whose
    digits are read as usual."""
    if not isinstance(x, Multiscale) or x.sign(expand=False) is not None:
        return None
    parts = x.split()
    tiny = [parts[1]] if parts and parts[0] == 0 and isinstance(parts[1], Multiscale) else []
    for value in tiny + [x]:
        try:
            box = value.box(LEVELS[-1])
        except Undecided:
            continue
        return max(abs(box.lo), abs(box.hi))
    return None


def boxed(x, sig):
    """A Multiscale's ``sig`` digits as ``significant`` gives them (half to even, zeros kept),
    read off its 40-digit enclosure alone, the common case: None where the two ends round
    apart (or to 0)."""
    try:
        box = x.box(LEVELS[0])
    except Undecided:
        return None
    ctx = Context(prec=sig, rounding=ROUND_HALF_EVEN)
    lo, hi = ctx.plus(box.lo), ctx.plus(box.hi)
    if lo != hi or not lo:
        return None
    if len(lo.as_tuple().digits) < sig:
        lo = lo.quantize(Decimal(1).scaleb(lo.adjusted() - sig + 1), context=ctx)
    return lo


def approx(x, sig):
    """For a Multiscale x = R + T (``split``) whose part T is far below R's ``sig``-th digit:
    (p, exact) with p a rational that rounds to ``sig`` digits as x does, R nudged by
    10^-5 of its ``sig``-th digit toward T's sign (decided by T's own enclosures), and exact
    whether x is R; None for any other x. It decides the digits of a value such as
    −0.0009819595 + T (a jacobli99-28 logit gap), a midpoint at 6 digits that only T's sign
    rounds, which x's own enclosures leave open."""
    parts = x.split() if isinstance(x, Multiscale) else None
    if not parts:
        return None
    r, t = parts
    if not isinstance(t, Multiscale):
        return r + t, True
    sign = t.sign(expand=False)
    if sign == 0:
        return r, True
    if sign is None or r == 0:
        return None
    try:
        box = t.box(LEVELS[0])
    except Undecided:
        return None
    place = exponent(abs(r)) - sig
    if max(abs(box.lo), abs(box.hi)).adjusted() >= place - 10:
        return None
    return r + sign * Fraction(10) ** (place - 5), False


def dust_exponent(bound):
    """N with a bound below 10^N: 10^-1277 for 2.4·10^-1278."""
    return bound.adjusted() + 1


FAR = 1000  # decades: a Multiscale's digits this far from 1 are printed from its Decimal


def _shown(x, sig):
    """A rational that ``figure`` prints as it would print x to ``sig`` digits: x itself, or
    for a Multiscale its correctly rounded ``sig`` digits (``significant``), nudged off them
    by 10^-(sig + 3) of a unit where x is not exactly that (so the text keeps its rounded
    trailing zeros); or, for digits beyond 10^±FAR (a 10^-304000 difference, whose Fraction
    would take minutes), the text itself, its zeros kept: ``figure`` passes a str through."""
    if not isinstance(x, Multiscale):
        return x
    bound = dust(x)
    if bound is not None:
        return f"~0 (|x| < 10^{dust_exponent(bound)})"
    near = approx(x, sig)
    if near is not None:
        return near[0]
    d = x.significant(sig)
    if d and abs(d.adjusted()) > FAR:
        sign, digits, _ = d.as_tuple()
        mantissa = "".join(map(str, digits))
        point = f"{mantissa[0]}.{mantissa[1:]}" if mantissa[1:] else mantissa
        return f"{'-' if sign else ''}{point}·10^{d.adjusted()}"
    d = Fraction(d)
    if x == d:
        return d
    nudge = Fraction(10) ** (exponent(abs(d)) - sig - 3) if d else Fraction(0)
    return d + nudge if x > d else d - nudge


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


@dataclass(frozen=True, repr=False)
class Decision:
    """One position's digit decision, in units of the sum (all from the trace)."""

    pos: int
    token: str          # the token at pos
    written: str        # the token generated at pos + 1
    total: Fraction     # R + b + ℓ
    bias: Fraction      # b
    remaining: int      # R: total - b to the nearest integer
    place: Fraction     # P: the spacing of the ruler marks
    distance: tuple     # |total - (u + 1/2) P| for u = 0..9, from err_u
    others: tuple       # what the readout adds to err_u besides it, for u = 0..9
    nearest: int        # the digit of the nearest mark (the smallest err)
    runner: int         # the digit of the next nearest mark
    chosen: int         # the digit the readout picks (largest logit)
    rival: int          # the digit nearest is compared with: chosen if it differs, else runner
    lead: Fraction      # the chosen digit's logit minus the next largest logit, in units
    size: Fraction      # one unit of the sum in the logits at this position

    @property
    def margin(self):
        """distance[rival] - distance[nearest]: how much nearer the nearest mark is."""
        return self.distance[self.rival] - self.distance[self.nearest]

    @property
    def tilt(self):
        """How much the readout's other contents favour the rival over the nearest digit."""
        return self.others[self.nearest] - self.others[self.rival]

    @property
    def leakage(self):
        return self.total - self.bias - self.remaining

    @property
    def x(self):
        """(R + b + ℓ)/P: where what layer 1 holds falls on the ruler."""
        return self.total / self.place

    @property
    def power(self):
        """k with P nearest 10^k (P is 10^k less the construction's tiny leakage)."""
        k = exponent(self.place)
        return k + 1 if self.place ** 2 >= Fraction(10) ** (2 * k + 1) else k

    @property
    def flipped(self):
        return self.chosen != self.nearest

    def exact(self, name):
        """Every digit of one field ('total', 'place', ...), as 'n/d' text."""
        value = getattr(self, name)
        if isinstance(value, tuple):
            return "(" + ", ".join(rational_text(v) for v in value) + ")"
        return rational_text(value)

    def __repr__(self):
        def shown(v):
            return "(" + ", ".join(map(brief, v)) + ")" if isinstance(v, tuple) else brief(v)
        return "Decision(" + ", ".join(f"{f.name}={shown(getattr(self, f.name))}"
                                       for f in fields(self)) + ")"


@dataclass(frozen=True)
class Overflow:
    """A position whose figures cannot be read: the float system overflowed there (inf or nan
    in a value the decision is read from)."""

    pos: int
    token: str          # the token at pos
    written: str        # the token generated at pos + 1
    where: str          # the trace point and slot (or lane) of the first value not finite
    value: float


def _overflow(cache, pos, points):
    """An Overflow at ``pos`` if a value of ``points`` ({name: {label: value}}) is not
    finite, else None."""
    for name, row in points.items():
        for label, value in row.items():
            if not finite(value):
                model = cache.model
                return Overflow(pos, model.vocab[cache.tokens[pos]],
                                model.vocab[cache.tokens[pos + 1]], f"{name} {label}", value)
    return None


def decisions(cache):
    """A Decision for every position that predicted a token of the sum (an Overflow where a
    float system overflowed)."""
    model = cache.model
    unit, err_scale, value_bias = scales(model)
    last = len(model.blocks) - 1
    digits = [str(u) for u in range(10)]
    readout = model.readout
    labels = cache.labels("unembed.hook_out")
    out = []
    for pos in cache.predicting:
        read = {name: cache.view(name, pos) for name in (
            act_name("resid_mid", 0), act_name("resid_post", 0), act_name("z", last),
            act_name("mlp_out", last), act_name("resid_post", last), "unembed.hook_out")}
        overflow = _overflow(cache, pos, read)
        if overflow:
            out.append(overflow)
            continue
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
        others = tuple((_q(post[readout[t]]) - _q(err[readout[t]])) / size for t in digits)
        order = sorted(range(10), key=lambda u: (ordered(distance[u]), u))
        nearest, runner = order[0], order[1]
        logits = [_q(v) for v in cache["logits"][pos]]
        best = first_largest(logits)
        chosen = int(labels[best])
        lead = (logits[best] - max((v for k, v in enumerate(logits) if k != best),
                                   key=ordered)) / size
        bias = (pos + 1) * value_bias / unit
        out.append(Decision(
            pos=pos, token=model.vocab[cache.tokens[pos]],
            written=model.vocab[cache.tokens[pos + 1]], total=total, bias=bias,
            remaining=round(total - bias), place=place, distance=distance, others=others,
            nearest=nearest, runner=runner, chosen=chosen,
            rival=chosen if chosen != nearest else runner, lead=lead, size=size))
    return out


def fixed(q, places):
    """q rounded to ``places`` decimals, as text ('8.0014', '-60')."""
    n = round(Fraction(q) * 10 ** places)
    sign, n = ("-" if n < 0 else ""), abs(n)
    if not places:
        return f"{sign}{n}"
    text = f"{n:0{places + 1}d}"
    return f"{sign}{text[:-places]}.{text[-places:]}"


def figure(q, sig=3):
    """q to ``sig`` significant digits, in the explorer page's one notation
    (``text.figure`` with ``power``): plain for 10^-3 <= |q| < 10^4 ('119', '0.991', '5800'),
    else m·10^e ('7.42·10^4', '10^7').

    >>> [figure(q) for q in (Fraction(1), 4.4e9, 74200, 5800, Fraction(-22, 10 ** 14))]
    ['1', '4.4·10^9', '7.42·10^4', '5800', '-2.2·10^-13']
    >>> figure(Fraction(79999, 10 ** 6)), figure(Fraction(8, 100))  # rounded, and exact
    ('0.0800', '0.08')
    """
    shown = _shown(q, sig)
    return shown if isinstance(shown, str) else text_figure(shown, sig, power=True)


def short(q, most=6, sig=2):
    """q exactly when it has at most ``most`` decimals ('0.345'), else to ``sig`` digits."""
    q = Fraction(q)
    for places in range(most + 1):
        if (q * 10 ** places).denominator == 1:
            return fixed(q, places)
    text = rounded(q, sig)  # '0.40': its trailing zero is a significant digit
    return figure(q, sig) if "e" in text else text


def x_places(d):
    """The decimals x is printed to: enough to show how far it is from the boundary it is
    near."""
    return max(4, 1 - exponent(d.margin / d.place)) if d.margin else 4


def x_text(d, x=None, places=None):
    """x = (R + b + ℓ)/P to ``x_places`` decimals (``x``: another value at d's precision, as
    ``division`` checks it, with ``places`` computed once)."""
    places = x_places(d) if places is None else places
    x = d.x if x is None else x
    if x and abs(x) < Fraction(1, 10 ** places):
        return figure(x, 2)
    return fixed(x, min(places, 30))


def division(d, offset=None):
    """(offset, P) as texts whose division (R + offset)/P gives x as ``x_text`` prints it:
    ``offset`` (the text to try first) or b + ℓ to as few decimals as that takes, and P as
    '10^k' where the ruler's spacing, 10^k less the construction's own 10^(k−5), is that to
    x's digits, else to as few decimals as it takes ('999.99' at 10^3 beside x = 1.00042).

    >>> from tinyadder import build, number_system, run_with_cache
    >>> _, cache = run_with_cache(build("published", digits=3), "599+401",
    ...                           ns=number_system("fraction"))
    >>> d = decisions(cache)[0]
    >>> x_text(d), division(d, "0.409")
    ('1.00042', ('0.409', '999.99'))
    """
    places = x_places(d)
    want, total = x_text(d, places=places), d.total - d.remaining
    tries = ([offset] if offset else []) + [fixed(total, n) for n in range(1, 31)]
    for said in tries:
        try:
            r = d.remaining + Fraction(said)
        except ValueError:  # a text in m·10^e form
            continue
        for place in [f"10^{d.power}"] + [fixed(d.place, n) for n in range(0, 31)]:
            p = Fraction(10) ** d.power if place.startswith("10^") else Fraction(place)
            if p and x_text(d, r / p, places) == want:
                return said, place
    return tries[-1], fixed(d.place, 30)


def quotient(d):
    """(R + b + ℓ, P) as texts whose division gives x as ``x_text`` prints it (``division``,
    b + ℓ tried first to 3 decimals): ('1000.409', '999.99'), ('7800137102.346', '10^10')."""
    offset, place = division(d, fixed(d.total - d.remaining, 3))
    decimals = len(offset.partition(".")[2])
    return fixed(d.remaining + Fraction(offset), decimals), place


LEGEND = ("Every figure is read from the trace, in units of the sum (1 is one unit of a + b; "
          "docs/walkthrough.md). R: what remains to be written (a + b minus the digits "
          "written, at their places); P: the place of the digit being decided; offset: "
          "b + leakage, the rounding bias b plus what the construction itself adds to R "
          "(--verbose shows the two). x = (R + offset)/P "
          "falls on a ruler with marks u + 1/2, and the nearest mark's digit u wins. margin: "
          "how much farther the rival's mark is; tilt: how much the readout's other slot "
          "contents favour the rival (negative: they favour the nearest digit, which then "
          "wins by more); the rival wins when the tilt exceeds the margin, the published "
          "model's flaw.")


def _wrapped(lines):
    return [piece for line in lines
            for piece in textwrap.wrap(line, WIDTH, subsequent_indent="    ")]


def block(d, expected=None, verbose=False):
    """The lines narrating one decision; ``expected``: what R should be (a + b minus the
    digits written), to flag a trace whose R is off (rounding in an inexact number system);
    ``verbose``: the offset's two parts too."""
    parts = f" (b = {short(d.bias)}, leakage {short(d.leakage)})" if verbose else ""
    # beside b to three digits, the offset to three too: 0.345 − 2.2·10^-13 is 0.345, not 0.34
    offset, place = division(d, short(d.bias + d.leakage, sig=3 if verbose else 2))
    if not place.startswith("10^"):
        place += f" (just under 10^{d.power})"
    lines = [f"position {d.pos} ({d.token!r}): R = {d.remaining}, P = {place}, "
             f"offset {offset}{parts}",
             f"  x = {x_text(d)} -> nearest mark {d.nearest}.5 -> digit "
             f"{d.nearest}; margin {figure(d.margin)} units over {d.rival}"]
    if any(d.others) and not d.flipped:
        lines.append(tilt_line(d))
    if expected is not None and d.remaining != expected:
        lines.append(f"  ! R is off by {d.remaining - expected} units: a + b minus the digits "
                     f"written is {expected} (rounding)")
    if d.flipped:
        lines.append(f"  ! the readout's tilt favours {d.chosen} by {figure(d.tilt)} units, "
                     f"{figure(d.tilt / d.margin, 2)} times the margin: it writes {d.chosen}, "
                     f"not {d.nearest}")
    if d.remaining < 0:
        lines.append("  R < 0: the digits written already exceed a + b")
    elif d.margin < SMALL and not d.flipped and d.remaining < 10 * d.place:
        why = ("at the units, b (about 1/2) rounds to R's own mark" if d.power == 0 else
               "R is a multiple of P, or one less, and b decides")
        lines.append(f"  small margin ({figure(d.margin)} units): {why}")
    return _wrapped(lines)


NEGLIGIBLE = Fraction(1, 10 ** 6)  # a tilt under this share of the margin is said as ≈ 0


def tilt_text(t):
    """A tilt in one notation: from 1 to 10^4 units as ``figure`` prints it ('1000', '-100'),
    any other as m·10^e to two significant digits, its mantissa always written ('-1.0·10^-3',
    '3.4·10^-17', not '-0.00100' or '-10^-9').

    >>> [tilt_text(Fraction(t)) for t in (1000, -100, Fraction(-1, 1000), Fraction(34, 10 ** 18))]
    ['1000', '-100', '-1.0·10^-3', '3.4·10^-17']
    """
    if 1 <= abs(t) < 10 ** 4:
        return figure(t)
    said = figure(t, 2)
    if not said.lstrip("-").startswith("10^") and "·10^" in said:
        return said
    t = _q(t)
    e = exponent(abs(t))
    n = round(abs(t) * Fraction(10) ** (1 - e))
    if n == 100:
        n, e = 10, e + 1
    return f"{'-' if t < 0 else ''}{n // 10}.{n % 10}·10^{e}"


def tilt_line(d):
    """The tilt, the digit it favours (the rival; for a negative tilt the nearest, the winner),
    its share of the margin when that is a tenth or more,
    and the lead, margin - tilt, of the digit written (a readout with other contents only)."""
    if not d.tilt:
        said = "tilt 0"
    elif abs(d.tilt) < NEGLIGIBLE * d.margin:
        said = f"tilt \u2248 0 (under 10^{exponent(NEGLIGIBLE)} of the margin)"
    else:
        said = (f"tilt {tilt_text(d.tilt)} units " +
                (f"(towards {d.rival}, the rival)" if d.tilt > 0 else
                 f"(towards {d.nearest}, the winner)"))
    if d.tilt > 0 and d.tilt >= TILT_SHOWN * d.margin:
        said += f", {figure(100 * d.tilt / d.margin, 2)}% of the margin"
    return f"  {said}, so {d.chosen} leads by {figure(d.lead)} units"


def _overshoot(d, expected):
    """Whether a decision is one of the zeros written after R went negative."""
    return (d.remaining < 0 and d.remaining == expected and d.nearest == d.chosen == 0
            and d.rival == 1)


def overshoot_block(run):
    """The lines for a run of decisions after R went negative: one block, not one each."""
    first, last = run[0], run[-1]
    return _wrapped([
        f"positions {first.pos} to {last.pos}: R = {first.remaining} at each place from "
        f"10^{first.power} to 10^{last.power}, offset {short(first.bias + first.leakage)} "
        f"to {short(last.bias + last.leakage)}",
        "  x < 0 -> nearest mark 0.5 -> digit 0 at each; margin P units over 1",
        "  R < 0: the digits written already exceed a + b, and no digit can take them back"])


def remaining_values(a, b, written):
    """What remains to be written before each digit of ``written``: a + b minus the digits
    already written at their places (for checking a trace, never for narrating it)."""
    n = len(written)
    return [a + b - (int(written[:k]) * 10 ** (n - k) if k else 0) for k in range(n)]


def overflow_block(run):
    """The lines for a run of positions whose values overflowed: one block."""
    first, last = run[0], run[-1]
    where = (f"position {first.pos} ({first.token!r}): writes {first.written!r}"
             if len(run) == 1 else f"positions {first.pos} to {last.pos}: write "
             f"{''.join(o.written for o in run)!r}")
    return _wrapped([f"{where}; the figures cannot be read: the number system overflowed "
                     f"({first.where} is {first.value!r} at {first.pos})"])


def _blocks(found, expected, verbose=False):
    """The narration's blocks: one per decision, a run of overshoot zeros as one."""
    out, k = [], 0
    while k < len(found):
        end = k
        while end < len(found) and isinstance(found[end], Overflow):
            end += 1
        if end > k:
            out.append(overflow_block(found[k:end]))
            k = end
            continue
        end = k
        while (end < len(found) and isinstance(found[end], Decision)
               and _overshoot(found[end], expected[end])):
            end += 1
        if end - k >= 2:
            out.append(overshoot_block(found[k:end]))
            k = end
        else:
            out.append(block(found[k], expected[k], verbose))
            k += 1
    return out


def numbers(ns, verbose=False):
    """The number system's name ('fraction'), and with ``verbose`` how it rounds."""
    said = ns.describe()
    return said if verbose else said.split(" (")[0]


def narrate(cache, a, b, verbose=False):
    """The narration of a traced addition of a and b, as text (lines <= 80 columns);
    ``verbose``: how the number system rounds, and the offset's parts."""
    model = cache.model
    found = decisions(cache)
    lines = [cache.text[len("<bos>"):], f"{model.name}, numbers: {numbers(cache.ns, verbose)}",
             ""]
    lines += textwrap.wrap(LEGEND, WIDTH)
    written = "".join(d.written for d in found)
    for part in _blocks(found, remaining_values(a, b, written), verbose):
        lines += [""] + part
    if int(written) == a + b:
        lines += ["", f"sum {written}: right"]
    else:
        want = f"{a + b:0{len(written)}d}"
        first = next(k for k, (x, y) in enumerate(zip(written, want)) if x != y)
        d = found[first]
        why = ("the number system overflowed" if isinstance(d, Overflow) else
               "the readout's tilt beat the margin" if d.flipped else
               "the number system's rounding moved x past a boundary")
        lines += ["", f"sum {written}: wrong, a + b = {want}; the first wrong digit, decided "
                      f"at position {d.pos}, was written at position {d.pos + 1}: {why}"]
    return "\n".join(piece for line in lines
                     for piece in (textwrap.wrap(line, WIDTH, subsequent_indent="  ")
                                   or [""])) + "\n"


GENERIC_LEGEND = ("Every figure is read from the trace. Each position that predicts a digit "
                  "of the sum is named by its role in the prompt layout (a3: the digit of a "
                  "at 10^3; s0: the sum's units digit); the digit written is the largest "
                  "logit's, and the lead is its logit minus the runner-up's.")


def column_lines(cache, pos, k, a, b):
    """At ``pos``, which predicts s_k, each quantity of the model's design
    (``families.column``): the value the run holds, the formula, the formula with the digits
    of a, b and a + b put in, and whether the run holds it exactly, within the design's
    bound, or off by how much (a line that wraps goes on indented by four)."""
    model = cache.model
    stage = {s.short: s.name for s in stages(model)}
    lines = []
    for q in families.column(families.design(model)):
        if (k == 0 and not q.at_units) or q.slot not in model.slots:
            continue
        read, embedded = (cache.view(stage[s], pos)[q.slot] for s in (q.stage, "embed"))
        if not (finite(read) and finite(embedded)):
            continue  # an overflowed float run: no value to hold to the formula
        read, embedded = _kept(read), _q(embedded)
        want = Fraction(q.value(a, b, k, embedded))
        filled = q.filled(a, b, k, embedded, minus(figure(embedded, 6)))
        value = minus(figure(want, 6))
        said = (f"{q.text(k)}{past_operands(q.text(k), digits_of(model))} = {filled}" +
                (f" = {value}" if filled != value else ""))
        how = _held(read, want, q.within)
        where = "after attention" if q.stage.endswith("attn") else "after the FFN"
        lines += textwrap.wrap(f"  {q.slot} {where} {minus(figure(read, 6))}{how}{said}",
                               WIDTH, subsequent_indent="    ")
    return lines


def past_operands(formula, n):
    """Where ``formula`` names a digit of a or b past the operands' ``n`` digits (the top
    place of the sum), that those are 0: past_operands('10·(a10 + b10 + c10) − c9', 10) ==
    ' (a10 = b10 = 0: past the operands)'; '' where it names none.

    >>> past_operands('10·(a3 + b3 + c3) − c2', 10)
    ''
    """
    names = [m.group(0) for m in re.finditer(r"\b[ab](\d+)\b", formula) if int(m.group(1)) >= n]
    return f" ({' = '.join(names)} = 0: past the operands)" if names else ""


def minus(text):
    """A value's sign as the family's formulas beside it write theirs, U+2212 (one minus per
    line: '−9.99981, within 0.001 of c0 − 10·c1 = 0 − 10·1 = −10'); an exponent's stays
    ASCII, as 10^-13 everywhere in this text.

    >>> minus('-2.2·10^-13'), minus('0.5')
    ('−2.2·10^-13', '0.5')
    """
    return "\u2212" + text[1:] if text.startswith("-") else text


def _held(read, want, within):
    """' = ', ', within B of ' or ', off by X (more than B) from ': how the run's value holds
    the formula's. A value only bounded (``dust``: |read| < 10^-1000 or less) is within B of
    want where |want| + its bound is, and off by about −want else."""
    bound = dust(read)
    if bound is not None and dust_exponent(bound) < -100:
        off = Fraction(10) ** -100  # |read| < 10^-100: negligible beside any bound here
        if abs(want) + off <= within:
            return f", within {short(within)} of "
        return f", off by {minus(figure(-want))} (more than {short(within)}) from "
    if read == want:
        return " = "
    if abs(read - want) <= within:
        return f", within {short(within)} of "
    return f", off by {minus(figure(read - want))} (more than {short(within)}) from "


TASK_LEGEND = ("Every figure is read from the trace. Each position that predicts a token of "
               "the answer is named by its role in the prompt layout (input: the task's "
               "input; out0: the answer's first token); the token written is the largest "
               "logit's, and the lead is its logit minus the runner-up's.")


def verdict_line(model, tokens, a, b):
    """'sum 0579: right' (every digit written, as TinyAdder-36's narration prints it), or for
    a finite task (input a, b None) 'answer 06: right' or
    'answer 07: wrong, the task says 06'."""
    if tasks.has_task(model):
        value, right = tasks.answer(model, tokens), tasks.expected(model, a)
        return f"answer {value}: {'right' if value == right else f'wrong, the task says {right}'}"
    value, width = answer(model, tokens), model.prompt.answer_digits
    shown = f"{value:0{width}d}" if isinstance(value, int) else value  # all its digits
    return f"sum {shown}: {'right' if value == a + b else f'wrong, a + b = {a + b}'}"


MANTISSA = {"float": 53, "float32": 24}  # significand bits of the binary float systems


def spacings(ns, lead, top):
    """For a binary float system and a lead of at most 64 of its spacings at the winning
    logit: ' (4 float32 spacings, 2^-14 = 6.1·10^-5 each for logits near 1000)'; else ''. A
    spacing is 2^(e − p + 1) for a logit in [2^e, 2^(e+1)) and p significand bits, the
    smallest step the system can resolve there.

    >>> spacings(type("NS", (), {"spec": "float32"}), Fraction(1, 2 ** 12), Fraction(1000))
    ' (4 float32 spacings, 2^-14 = 6.1·10^-5 each for logits near 1000)'
    """
    bits = MANTISSA.get(getattr(ns, "spec", None))
    if bits is None or not top or not lead:
        return ""
    e = abs(Fraction(top)).numerator.bit_length() - abs(Fraction(top)).denominator.bit_length()
    e -= Fraction(2) ** e > abs(Fraction(top))  # now 2^e <= |top| < 2^(e+1)
    step = Fraction(2) ** (e - bits + 1)
    n = Fraction(lead) / step
    if n > 64:
        return ""
    count = str(round(n)) if n == round(n) else figure(n, 2)
    return (f" ({count} {ns.spec} spacings, 2^{e - bits + 1} = {figure(step, 2)} each for "
            f"logits near {figure(top, 3)})")


def narrate_logits(cache, a, b, verbose=False):
    """The narration of any model's run: per predicting position, its role, the digit it
    writes (the largest logit) and its lead over the runner-up, in logits (for a model
    without TinyAdder-36's slots, whose rulers and marks ``narrate`` reads)."""
    model = cache.model
    layout = roles(model)
    labels = cache.labels("unembed.hook_out")
    read = addition_line(cache)  # the sum as an addition, where the tokens do not show it
    lines = [cache.text] + ([f"as an addition: {read}"] if read and read not in cache.text
                            else []) + [
        f"{model.name}, numbers: {numbers(cache.ns, verbose)}",
        f"prompt layout: {layout_text(model)}", ""]
    lines += textwrap.wrap(TASK_LEGEND if tasks.has_task(model) else GENERIC_LEGEND, WIDTH)
    design = families.design(model) if b is not None else None
    if design:
        lines += [""] + textwrap.wrap(families.LEGENDS[design], WIDTH)
    lines.append("")
    for pos in cache.predicting:
        logits = [_kept(v) if finite(v) else None for v in cache["logits"][pos]]
        here, nxt = layout[pos], layout[pos + 1]
        token = "" if here.role == "special" else f" = {model.vocab[cache.tokens[pos]]!r}"
        what = "" if nxt.role == "special" else f"{nxt.label} = "
        name = (f"separator {here.label}" if here.role == "special" and
                here.label.startswith("'") else here.label)  # a token, not a place
        said = (f"position {pos} ({name}{token}) writes {what}"
                f"{model.vocab[cache.tokens[pos + 1]]!r}")
        if any(v is None for v in logits):
            lines.append(f"{said}; the logits are not finite (the number system overflowed)")
            continue
        if any(isinstance(v, Multiscale) for v in logits):  # compared, never expanded
            best = argmax(logits)
            runner = argmax([v for k, v in enumerate(logits) if k != best])
            runner += runner >= best
        else:
            best = first_largest(logits)
            rest = [k for k in range(len(logits)) if k != best]
            runner = max(rest, key=lambda k: ordered(logits[k]))
        lead = logits[best] - logits[runner]
        lines.append(f"{said}: lead {figure(lead)} logits over {labels[runner]!r}" +
                     spacings(cache.ns, lead, logits[best]))
        if design and nxt.role == "sum":
            lines += column_lines(cache, pos, nxt.place, a, b)
    lines += ["", verdict_line(model, cache.tokens, a, b)]
    return "\n".join(piece for line in lines
                     for piece in (textwrap.wrap(line, WIDTH, subsequent_indent="  ")
                                   or [""])) + "\n"
