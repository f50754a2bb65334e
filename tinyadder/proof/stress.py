"""Stress variants: the published model with a weaker layer-1 FFN, for testing the census.

The published layer-1 FFN turns cand_u into err_u = 10^4 * 100 * |cand_u| (gates +-10^4, up
projection 100): a gain of 10^6 against the readout's tilts, which is why its failures are
rare. ``weakened(model, g)`` sets the gates to +-g instead, a gain of 100 g: with g = 1, 1/5,
1/10, 1/20, 1/50 at N = 3 the failures number thousands to hundreds of thousands, and the
windows of different places overlap, so the census's counting meets every case at a size a
brute force can check. Built with ``dataclasses.replace``: the model itself is untouched.
"""

from dataclasses import replace
from fractions import Fraction

from ..construction import build

GAINS = (Fraction(1), Fraction(1, 5), Fraction(1, 10), Fraction(1, 20), Fraction(1, 50))


def weakened(model, gain):
    """``model`` with every layer-1 FFN gate weight w replaced by sign(w) * gain."""
    gain = Fraction(gain)
    block = model.blocks[-1]
    mlp = block.mlp
    gates = {slot: {unit: gain if w > 0 else -gain for unit, w in row.items()}
             for slot, row in mlp.W_gate.items()}
    blocks = model.blocks[:-1] + (replace(block, mlp=replace(mlp, W_gate=gates)),)
    return replace(model, name=f"{model.name}-gain-{gain}", blocks=blocks)


def stress_model(gain, digits=3):
    """The published model for N digits with layer-1 gates +-gain (see ``weakened``)."""
    return weakened(build("published", digits), gain)
