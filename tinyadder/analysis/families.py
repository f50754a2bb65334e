"""The designed families' formulas: what each slot holds at the position that predicts the
sum's digit s_k, as the explorer's hovers say it (``meanings``: [anywhere, at such a
position]) and as ``explain`` puts a position's digits into it (``column``). c_k is the
carry into place k. The designs: rope-19, sinusoid-11, rope-10000 (jacobli99's two slots)
and the Qwen-style three-slot rope-10000 models, by how they bring in the carry
(``design``)."""

from dataclasses import dataclass
from fractions import Fraction
import re


def rope19_meanings():
    """What x0 and x1 hold in a rope-19 model (the walkthrough's zcbtrak-6 section), in the
    form of ``meanings``: [anywhere, at a position that predicts s_k]. c_k is the carry into
    place k. tests/test_explore.py checks the formulas against runs of all eight files."""
    none = "no designed meaning at a position that predicts no digit of the sum"
    return {
        "embed": {"x0": ["1000 \u2212 d\u00b2/1000 on a digit d, to within 10^-6 (the "
                         "readout's parabola)"] * 2,
                  "x1": ["\u2212d on a digit d, to within 10^-6"] * 2},
        "L0.attn": {"x0": ["as embedded: the attention and the FFN leave x0 alone"] * 2,
                    "x1": [none, "10\u00b7(a_k + b_k + c_k) \u2212 c_(k\u22121): ten times "
                                 "the column sum with its carry-in, to within 0.25 (the head "
                                 "weighs a_k, b_k 10 : 1 against a_(k\u22121), b_(k\u22121))"]},
        "L0.mlp": {"x0": ["as embedded: the attention and the FFN leave x0 alone"] * 2,
                   "x1": [none, "ten times the column sum, less about 100 when the column "
                                "reached 10 (the wrap): x1/10 is within 0.25 of s_k"]},
        "readout": {f"logit {u}": ["a parabola in the digit with x0, largest at the digit "
                                   "nearest x1/10"] * 2 for u in range(10)},
    }


def sinusoid11_meanings():
    """What the slots of a sinusoid-11 model (lichengliu03-50, cosminscn-66/130) hold, in the
    form of ``meanings``: [anywhere, at a position that predicts s_k]. c_k is the carry into
    place k; checked against runs of all three files (tests/test_explore.py)."""
    none = "no designed meaning at a position that predicts no digit of the sum"
    same = "as embedded: no stage writes it"
    sinusoid = ("the position's sinusoid of period 11 (amplitude 100 in the prompt, 1 after "
                "it)")
    return {
        "embed": {"digit": ["d on a digit d ('+' and '=' read as the token 0)"] * 2,
                  "pe_sin": [sinusoid] * 2, "pe_cos": [sinusoid] * 2,
                  "acc": ["0: a head writes it"] * 2},
        "L0.attn": {"digit": [same] * 2, "pe_cos": [same] * 2,
                    "acc": [none, "a_k + b_k: a head weighs a_k and b_k 1/2 each (an intended "
                                  "tie) and writes twice the digit, to within 0.3 (0.005 "
                                  "above the units)"],
                    "pe_sin": [none, "its sinusoid + a_(k\u22121) + b_(k\u22121): the other "
                                     "head reads the column below, to within 0.005"]},
        "L0.mlp": {"digit": [same] * 2, "pe_cos": [same] * 2, "pe_sin": [same] * 2,
                   "acc": [none, "a_k + b_k + carry, less 10 when that reaches 10 (the wrap); "
                                 "carry = min(max(pe_sin \u2212 digit \u2212 1/2, 0), 1), "
                                 "digit being s_(k\u22121), so pe_sin \u2212 digit = its "
                                 "sinusoid + 10\u00b7c_k \u2212 c_(k\u22121): within 1/2 of "
                                 "s_k"]},
        "readout": {f"logit {u}": ["2u\u00b7acc \u2212 u\u00b2: a parabola in the digit u "
                                   "with its vertex at acc; the digit nearest acc wins"] * 2
                    for u in range(10)},
    }


FAMILY_MEANINGS = {"rope-19": rope19_meanings, "sinusoid-11": sinusoid11_meanings}


def rope10000_meanings():
    """What x0 and x1 of a two-slot rope-10000 model (jacobli99-28/93) hold, in the form of
    ``meanings``: [anywhere, at a position that predicts s_k]; c_k is the carry into place k.
    Checked against runs of both files (tests/test_explore.py): exact in float32."""
    none = "no designed meaning at a position that predicts no digit of the sum"
    return {
        "embed": {"x0": ["1000 \u2212 2.5\u00b710^-4\u00b7d\u00b2 on a digit d (the "
                         "readout's parabola)"] * 2,
                  "x1": ["d on a digit d"] * 2},
        "L0.attn": {"x0": [none, "as embedded + D, D = s_(k\u22121) \u2212 a_(k\u22121) "
                                 "\u2212 b_(k\u22121) = c_(k\u22121) \u2212 10\u00b7c_k: "
                                 "heads at fixed offsets read the column below (D \u2264 "
                                 "\u22129: a carry into place k)"],
                    "x1": [none, "a_k + b_k: two heads attend one-hot to a_k and b_k"]},
        "L0.mlp": {"x0": ["as after the attention: the FFN leaves x0 alone"] * 2,
                   "x1": [none, "s_k: a_k + b_k plus the carry, less 10 when that reaches 10 "
                                "(hinge pairs on D)"]},
        "readout": {f"logit {u}": ["near 1000: a parabola in the digit with its vertex at "
                                   "x1, curvature about 2.5\u00b710\u207b\u2074 per digit\u00b2: the "
                                   "digit next to the vertex trails by about 2.5\u00b710\u207b\u2074 (the lead)"] * 2
                    for u in range(10)},
    }


# How a three-slot rope-10000 model (the Qwen-style four) brings the carry into place k: by
# its final norm (nino-116, wonderfall-121), by an FFN unit that reads x1 linearly
# (wonderfall-130), or by a hinge pair on x1 (wonderfall-139).
QWEN_CARRIES = {
    "norm": ("a_k + b_k \u2212 10\u00b7c_(k+1), to within 0.01: a pair of SiLU units wraps x2 "
             "when x2 \u2212 x1/10 = a_k + b_k + c_k \u2212 c_(k\u22121)/10 reaches 9.45; the "
             "carry c_k itself is not added here (the final norm adds it)",
             "the final norm weighs x1 by \u22121/10 of x2's weight (in the tied embedding's "
             "units), so the parabola's vertex is at x2 \u2212 x1/10 = s_k \u2212 "
             "c_(k\u22121)/10: the carry enters here; the digit nearest the vertex wins"),
    "linear": ("s_k \u2212 c_(k\u22121)/10 + 1/20, to within 0.01: a pair of SiLU units wraps "
               "x2 when x2 \u2212 x1/10 reaches 9.45, and a third unit adds (1/2 \u2212 x1)/10 "
               "= c_k \u2212 c_(k\u22121)/10 + 1/20: the carry",
               "a parabola in the digit with its vertex at x2 (the final norm reads x0 and x2 "
               "only); the digit nearest x2 wins"),
    "hinge": ("s_k, to within 0.01: a pair of SiLU units wraps x2 when x2 \u2212 x1/10 "
              "reaches 9.45, and a hinge pair on x1 adds 1 when x1 \u2264 \u22129: the carry "
              "c_k",
              "a parabola in the digit with its vertex at x2 (the final norm reads x0 and x2 "
              "only); the digit nearest x2 wins"),
}


def qwen_carry(model):
    """Which of ``QWEN_CARRIES`` a three-slot rope-10000 model uses: 'norm' when its final
    norm weighs x1, else 'hinge' when its FFN has two carry units (c0, c1), else 'linear'."""
    if "x1" in model.ln_final.w:
        return "norm"
    return "hinge" if "c1" in model.blocks[0].mlp.units else "linear"


def qwen_meanings(carry):
    """What x0, x1 and x2 of a Qwen-style rope-10000 model (nino-116, wonderfall-121/130/139)
    hold, in the form of ``meanings``: [anywhere, at a position that predicts s_k]; c_k is
    the carry into place k, ``carry`` a key of ``QWEN_CARRIES``. Checked against float32 runs
    of all four files (tests/test_explore.py)."""
    none = "no designed meaning at a position that predicts no digit of the sum"
    same = "as before: this stage leaves it alone"
    ffn, readout = QWEN_CARRIES[carry]
    return {
        "embed": {"x0": ["1000 \u2212 d\u00b2/4000 on a digit d, to within 3\u00b710^-5 "
                         "(the readout's parabola, with x2)"] * 2,
                  "x1": ["d on a digit d"] * 2,
                  "x2": ["d/2000 on a digit d (the readout's parabola, with x0)"] * 2},
        "L0.attn": {"x0": ["as embedded: no stage writes it"] * 2,
                    "x1": [none, "D = s_(k\u22121) \u2212 a_(k\u22121) \u2212 b_(k\u22121) "
                                 "= c_(k\u22121) \u2212 10\u00b7c_k, to within 0.001: heads "
                                 "pa and pb (offsets 23 and 11) read a_(k\u22121) and "
                                 "b_(k\u22121) and subtract them from the digit written, "
                                 "s_(k\u22121) (D \u2264 \u22129: a carry into place k)"],
                    "x2": [none, "a_k + b_k (plus the embedded d/2000), to within 0.001: heads "
                                 "ca and cb (offsets 22 and 10) attend one-hot to a_k and b_k"]},
        "L0.mlp": {"x0": [same] * 2, "x1": [same] * 2, "x2": [none, ffn]},
        "readout": {f"logit {u}": ["near 1000: " + readout] * 2 for u in range(10)},
    }


def design(model):
    """The designed family whose hovers and tour steps the page knows: 'rope-19',
    'sinusoid-11', 'rope-10000' (jacobli99's two slots), 'rope-10000/norm', '/linear' or
    '/hinge' (the Qwen-style three, ``qwen_carry``); None for any other model."""
    family = model.about.get("family")
    if family == "rope-10000":
        slots = tuple(model.slots)
        if slots == ("x0", "x1", "x2"):
            return f"rope-10000/{qwen_carry(model)}"
        return family if slots == ("x0", "x1") else None
    return family if family in FAMILY_MEANINGS else None


def family_meanings(model):
    """The hovers' formulas of a designed family the page knows ({} for others): rope-19,
    sinusoid-11, and rope-10000's two designs (jacobli99's two slots, and the Qwen-style
    three, ``qwen_meanings``)."""
    family = model.about.get("family")
    if family == "rope-10000":
        slots = tuple(model.slots)
        if slots == ("x0", "x1"):
            return rope10000_meanings()
        return qwen_meanings(qwen_carry(model)) if slots == ("x0", "x1", "x2") else {}
    return FAMILY_MEANINGS.get(family, dict)()


# ----------------------------------------------------------------------------- columns

def digit(n, k):
    """The digit of n at place 10^k (0 below the units)."""
    return n // 10 ** k % 10 if k >= 0 else 0


def carry(a, b, k):
    """c_k, the carry into place k of a + b (0 into the units)."""
    return int(k > 0 and a % 10 ** k + b % 10 ** k >= 10 ** k)


@dataclass(frozen=True)
class Quantity:
    """One slot's designed value at the position that predicts s_k, read after ``stage``
    ('L0.attn': the attention, 'L0.mlp': the FFN): ``formula`` in a{k}, b{k}, c{k}, s{k}
    (j = k − 1, n = k + 1) and ``embedded`` (the slot's value on the embedding), ``units``
    its form at k = 0 (None: the same with c{j} = 0, or no designed value there when
    ``at_units`` is False), ``value(a, b, k, embedded)`` the formula's value; the run holds
    it to within ``within`` (the hovers' bound, checked by tests/test_explain.py)."""

    stage: str
    slot: str
    formula: str
    value: object
    within: Fraction
    units: str = None
    at_units: bool = True

    def text(self, k):
        """The formula at place k ('10·(a1 + b1 + c1) − c0')."""
        return (self.units if k == 0 and self.units else self.formula).format(
            k=k, j=k - 1, n=k + 1)

    def filled(self, a, b, k, embedded, shown):
        """The formula with the digits of a, b and a + b put in, ``embedded`` as ``shown``
        ('10·(6 + 3 + 1) − 0')."""
        numbers = {"a": a, "b": b, "s": a + b}

        def put(m):
            kind, place = m.group(1), int(m.group(2))
            return str(carry(a, b, place) if kind == "c" else digit(numbers[kind], place))
        return re.sub(r"\b([abcs])(\d+)\b", put, self.text(k)).replace("embedded", shown)


CHECK = Fraction(1, 1000)
ROPE19 = (
    Quantity("L0.attn", "x1", "10·(a{k} + b{k} + c{k}) − c{j}",
             lambda a, b, k, e: 10 * (digit(a, k) + digit(b, k) + carry(a, b, k))
             - carry(a, b, k - 1), Fraction(1, 4), units="10·(a0 + b0 + c0)"),
    Quantity("L0.mlp", "x1", "10·s{k}", lambda a, b, k, e: 10 * digit(a + b, k),
             Fraction(5, 2)))
SINUSOID11 = (
    Quantity("L0.attn", "acc", "a{k} + b{k}", lambda a, b, k, e: digit(a, k) + digit(b, k),
             Fraction(3, 10)),
    Quantity("L0.attn", "pe_sin", "embedded + a{j} + b{j}",
             lambda a, b, k, e: e + digit(a, k - 1) + digit(b, k - 1), Fraction(1, 200),
             at_units=False),
    Quantity("L0.mlp", "acc", "s{k}", lambda a, b, k, e: digit(a + b, k), Fraction(1, 2)))
ROPE10000 = (
    Quantity("L0.attn", "x1", "a{k} + b{k}", lambda a, b, k, e: digit(a, k) + digit(b, k),
             CHECK),
    Quantity("L0.attn", "x0", "embedded + c{j} − 10·c{k}",
             lambda a, b, k, e: e + carry(a, b, k - 1) - 10 * carry(a, b, k), CHECK,
             units="embedded − 10·c0"),
    Quantity("L0.mlp", "x1", "s{k}", lambda a, b, k, e: digit(a + b, k), CHECK))
QWEN_COLUMN = (
    Quantity("L0.attn", "x2", "embedded + a{k} + b{k}",
             lambda a, b, k, e: e + digit(a, k) + digit(b, k), CHECK),
    Quantity("L0.attn", "x1", "c{j} − 10·c{k}",
             lambda a, b, k, e: carry(a, b, k - 1) - 10 * carry(a, b, k), CHECK,
             units="−10·c0"))
QWEN_FFN = {
    "norm": Quantity("L0.mlp", "x2", "a{k} + b{k} − 10·c{n}",
                     lambda a, b, k, e: digit(a, k) + digit(b, k) - 10 * carry(a, b, k + 1),
                     Fraction(1, 100)),
    "linear": Quantity("L0.mlp", "x2", "s{k} − c{j}/10 + 1/20",
                       lambda a, b, k, e: digit(a + b, k) - Fraction(carry(a, b, k - 1), 10)
                       + Fraction(1, 20), Fraction(1, 100), units="s0 + 1/20"),
    "hinge": Quantity("L0.mlp", "x2", "s{k}", lambda a, b, k, e: digit(a + b, k),
                      Fraction(1, 100)),
}

# What each design's column lines mean, said once before them
_QWEN = ("rope-10000, Qwen-style (docs/models.md, The families): at the position that "
         "predicts s_k, heads read a_k and b_k into x2 and D = c_(k−1) − 10·c_k into x1, c_k "
         "the carry into place k; ")
LEGENDS = {
    "rope-19": "rope-19 (the walkthrough's last section): at the position that predicts s_k, "
               "the head leaves x1 = 10·(a_k + b_k + c_k) − c_(k−1), c_k the carry into "
               "place k, and the FFN wraps it to within 2.5 of 10·s_k.",
    "sinusoid-11": "sinusoid-11 (docs/models.md, The families): at the position that predicts "
                   "s_k, one head writes a_k + b_k into acc and the other adds a_(k−1) + "
                   "b_(k−1) to the position's sinusoid in pe_sin; the FFN adds the carry that "
                   "pe_sin tells and wraps acc to within 1/2 of s_k (c_k: the carry into "
                   "place k).",
    "rope-10000": "rope-10000, jacobli99's design (docs/models.md, The families): at the "
                  "position that predicts s_k, two heads write a_k + b_k into x1 and the "
                  "others add D = c_(k−1) − 10·c_k to x0, c_k the carry into place k; the FFN "
                  "adds the carry when D ≤ −9 and wraps x1 to s_k.",
    "rope-10000/norm": _QWEN + "the FFN wraps x2 to a_k + b_k − 10·c_(k+1), and the final "
                               "norm brings in the carry (the readout's vertex is at x2 − "
                               "x1/10 = s_k − c_(k−1)/10).",
    "rope-10000/linear": _QWEN + "the FFN wraps x2 and a third unit adds the carry, to s_k − "
                                 "c_(k−1)/10 + 1/20.",
    "rope-10000/hinge": _QWEN + "the FFN wraps x2 and a hinge pair on x1 adds the carry, to "
                                "s_k.",
}


def column(design_name):
    """The Quantities a design's position that predicts s_k holds (``design``), in the order
    its stages write them; () for None."""
    if design_name is None:
        return ()
    if design_name.startswith("rope-10000/"):
        return QWEN_COLUMN + (QWEN_FFN[design_name.split("/")[1]],)
    return {"rope-19": ROPE19, "sinusoid-11": SINUSOID11, "rope-10000": ROPE10000}[design_name]
