"""TinyAdder-36: the published hand-wired adder, as data (see docs/spec.md).

Slots keep the original numbering, so traces compare with the PyTorch original dimension by
dimension. Layer 0 works on the first 5 slots; its FFN widens the stream to 16. The published
readout reads slots 0..9 after layer 1; the ``repaired`` variant lets layer 1's FFN write into
ten fresh slots ``err0``..``err9`` that only the readout reads (same 36 parameters). The
``variant-28`` (seed 000's idea, docs/variant-28.md) is the repaired model whose ten candidate
weights are read off the embedding's digit dimension with a scale and an offset:
P_u = s E_u + o, so 11 parameters become 3 and 36 become 28.
"""

from fractions import Fraction

from .numbers import Ln, Precision, exp_of
from .weights import MLP, Attention, Block, Model, Prompt, negative_error

DIGITS = 10

VOCAB = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "=", "<bos>", "<eos>", "+")

SLOTS = (
    "eq",         # 1 on '='
    "special",    # 1 on '=', <bos>, <eos>, '+'
    "digit",      # 10*d on digit d
    "count",      # place value of this position (layer 0, head 3)
    "scale",      # 1/(i+2) from '=' on, else 0 (layer 0, head 4)
    *(f"cand{u}" for u in range(10)),  # candidate errors for output digit u (layer 0 FFN)
    "digit_pos",  # a digit times its place value (layer 0 FFN)
)
ERR_SLOTS = tuple(f"err{u}" for u in range(10))  # the repaired readout's own slots

VARIANTS = ("published", "repaired", "variant-28")

L0_HEADS = ("h0", "h1", "h2", "h3", "h4")
CANDS = tuple(f"cand{u}" for u in range(10))


MAX_DIGITS = 2000
DIGITS_REFUSAL = ("the constants are derived and verified for N <= {max} (docs/digits.md), "
                  "and one exact addition already takes about 4 s at N = 2000")


def check_digits(digits):
    """Raise ValueError naming the accepted range unless 1 <= digits <= MAX_DIGITS."""
    if isinstance(digits, bool) or not isinstance(digits, int):
        raise ValueError(f"the number of digits must be an integer, got {digits!r}")
    if not 1 <= digits <= MAX_DIGITS:
        raise ValueError(f"N = {digits} digits is outside 1..{MAX_DIGITS}: "
                         + DIGITS_REFUSAL.format(max=MAX_DIGITS))
    return digits


def two_significant_digits(x):
    """A positive rational truncated to two significant decimal digits (15.15... -> 15)."""
    x, scale = Fraction(x), Fraction(1)
    while x * scale >= 100:
        scale /= 10
    while x * scale < 10:
        scale *= 10
    return Fraction(int(x * scale)) / scale


def constants(digits=DIGITS):
    """The constants that depend on the operand length N (derivation: docs/digits.md).

    - place = 10^N, the place value of an operand's leading digit times 10 (P_u uses it).
    - special_key = -(3N + 10): the head-3 score on special tokens. Its softmax1 weight
      e^special_key enters every place value as a relative error, which reaches the decision
      multiplied by at most 16 * 10^N; since e^3 > 20, 16 * 10^N * e^-(3N+10) < 16 e^-10 2^-N.
    - digit_key = special_key - 960: digits must be invisible to head 3 (v is 0 there, they only
      add e^digit_key to the denominator); 960 below the special key keeps W_K = 960 for every N
      and e^digit_key exactly 0 in float64.
    - round_bias = 500 / (3N + 3) truncated to two significant digits: layer 1 adds
      round_bias * (i + 1) / 1000 of a unit at position i, just under half a unit at the last
      decision (i = 3N + 2), more than 0.3 of a unit at the first (i = 2N + 2).
    - precision: significant digits the arithmetic needs, N + 30 (decimal's default P; the
      fraction system rounds exp to N + 40 digits). Values reach 10^(N+4) and are decided to a
      fraction of a unit; 30 guard digits leave more than 20 to spare.

    At N = 10 these are the published 10^10, -40, -1000 and 15.

    >>> c = constants(10)
    >>> c["place"] == 10 ** 10, c["special_key"], c["digit_key"], c["round_bias"]
    (True, -40, -1000, Fraction(15, 1))
    >>> constants(2000)["round_bias"]
    Fraction(83, 1000)
    """
    check_digits(digits)
    special_key = -(3 * digits + 10)
    return {
        "place": 10 ** digits,
        "special_key": special_key,
        "digit_key": special_key - 960,
        "round_bias": two_significant_digits(Fraction(500, 3 * digits + 3)),
        "precision": digits + 30,
    }


def build(variant="published", digits=DIGITS):
    """The TinyAdder-36 model for N-digit operands, ``published``, ``repaired`` or
    ``variant-28``.

    ``model.prompt.digits`` is N; ``model.meta`` records ``precision`` (what the arithmetic
    needs, used by a number system whose precision was not given). Only the values of ``constants(N)`` depend
    on N: every N has the same weight entries, hence the same 36 parameters.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown model {variant!r}: use {', '.join(VARIANTS)}")
    c = constants(digits)
    special_key, digit_key = c["special_key"], c["digit_key"]
    S = exp_of(special_key) / 10  # exp(-40 - ln 10): the softmax1 weight of a special key

    embed = {str(d): {"digit": 10 * d} for d in range(1, 10)}
    embed["="] = {"eq": 1, "special": 1}
    for token in ("<bos>", "<eos>", "+"):
        embed[token] = {"special": 1}

    layer0 = Block(
        attn=Attention(
            heads=L0_HEADS,
            b_Q={h: 1 for h in L0_HEADS},
            W_K={"special": {"h3": special_key - digit_key}},
            b_K={"h3": digit_key},
            W_V={"special": {"h3": Fraction(1, 10) / S}, "eq": {"h3": -Fraction(11, 10) / S,
                                                                "h4": 1}},
            W_O={h: {s: 1} for h, s in zip(L0_HEADS, SLOTS)},
            slopes={"h3": Ln(Fraction(10))},
        ),
        mlp=MLP(
            units=CANDS + ("digit_pos",),
            W_gate={"scale": {u: 1 for u in CANDS}, "digit": {"digit_pos": 1}},
            W_in={"count": {**{u: (k + Fraction(1, 2)) * c["place"] * 100
                               for k, u in enumerate(CANDS)},
                            "digit_pos": c["place"]}},
            W_out={u: {u: 1} for u in CANDS + ("digit_pos",)},
        ),
        width_in=5, width_out=16,
    )

    published = variant == "published"  # variant-28 has the repaired readout
    slots = SLOTS if published else SLOTS + ERR_SLOTS
    targets = SLOTS[:10] if published else ERR_SLOTS  # where err_u lands: the published flaw
    units = tuple(f"{u}{sign}" for u in CANDS for sign in "+-")
    layer1 = Block(
        attn=Attention(
            heads=("h0",),
            W_V={"digit_pos": {"h0": 100}},
            b_V={"h0": c["round_bias"]},
            W_O={"h0": {s: 1 for s in SLOTS}},  # one head broadcast into every slot
        ),
        mlp=MLP(
            units=units,
            W_gate={u: {f"{u}+": 10 ** 4, f"{u}-": -10 ** 4} for u in CANDS},
            b_in={u: 100 for u in units},
            W_out={f"{u}{sign}": {t: 1} for u, t in zip(CANDS, targets) for sign in "+-"},
        ),
        width_in=16, width_out=len(slots),
    )
    shared = _shared_candidates(c["place"]) if variant == "variant-28" else {}
    return Model(
        name=variant if variant == "variant-28" else f"tinyadder36-{variant}",
        vocab=VOCAB,
        slots=slots,
        W_E=embed,
        width_embed=5,
        blocks=(layer0, layer1),
        unembed=negative_error({str(u): t for u, t in enumerate(targets)}),
        prompt=Prompt(digits, ("<bos>", "a", "+", "b", "=")),
        roles=dict(ROLES),
        meta={"precision": Precision(c["precision"], f"N + 30 for N = {digits} digits")},
        about=ABOUT[variant],
        **shared,
    )


def _shared_candidates(place):
    """variant-28's counting: the embedding's digit values E_d = 10 d are named constants,
    and layer 0's candidate weights are written from them, P_u = s E_u + o with
    s = place * 10 and o = place * 50, which is (u + 1/2) * place * 100 (P_0 = o: E_0 = 0)."""
    constants = {f"E{d}": 10 * d for d in range(1, 10)}
    constants.update(s=place * 10, o=place * 50)
    derived = {f"blocks.0.mlp.W_in[count][cand{u}]": f"s*E{u} + o" for u in range(1, 10)}
    return {"constants": constants, "derived": derived}


ABOUT = {
    "published": {
        "title": "TinyAdder-36 as published", "params_claimed": 36, "dtype": "float64",
        "notes": "The hand-wired 36-parameter adder (docs/spec.md), its readout flaw "
                 "included: the readout still sees five of the layer-0 candidates."},
    "repaired": {
        "title": "TinyAdder-36 with a repaired readout", "params_claimed": 36,
        "dtype": "float64",
        "notes": "The published construction whose layer-1 FFN writes ten fresh slots "
                 "err0..err9 that only the readout reads (the same 36 parameters)."},
    "variant-28": {
        "title": "TinyAdder-28: the repaired model with its candidates read off the embedding",
        "params_claimed": 28, "dtype": "float64",
        "notes": "Seed 000's 28-parameter idea: layer 0's ten candidate weights "
                 "(u + 1/2) 10^12 are the embedding's digit values E_u = 10 u with a scale "
                 "s = 10^11 and an offset o = 5 10^11, P_u = s E_u + o (docs/variant-28.md); "
                 "the readout is the repaired one, so it adds every pair."},
}


# What each weight tensor is, for the parameter ledger (tinyadder.analysis.ledger counts by it).
ROLES = {
    "W_E": "embedding",
    "blocks.0.attn.b_Q": "weight",       # q = 1 on every head
    "blocks.0.attn.W_K": "weight",       # 960 on special
    "blocks.0.attn.b_K": "weight",       # -1000
    "blocks.0.attn.W_V": "weight",       # 0.1/S, -1.1/S, 1
    "blocks.0.attn.W_O": "copy",         # head h into slot h
    "blocks.0.attn.slopes": "position",  # ALiBi ln 10 on head 3
    "blocks.0.mlp.W_gate": "weight",     # gate weight 1, on all 11 gates
    "blocks.0.mlp.W_in": "weight",       # P_0 .. P_10
    "blocks.0.mlp.W_out": "copy",        # hidden u into its own new slot
    "blocks.1.attn.W_V": "weight",       # 100 on digit_pos
    "blocks.1.attn.b_V": "weight",       # +15
    "blocks.1.attn.W_O": "copy",         # the one head into every slot
    "blocks.1.mlp.W_gate": "weight",     # +10^4 and -10^4
    "blocks.1.mlp.b_in": "weight",       # the constant up projection 100
    "blocks.1.mlp.W_out": "copy",        # both units of u into output u
    "readout": "copy",                   # logit u = -(slot read for u)
}
