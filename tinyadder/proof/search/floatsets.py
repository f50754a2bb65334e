"""Sets that hold the float program's values: the generic prover (``generic``) for a model as
its IEEE float32 or float64 program computes it (``prove --number float32``).

A :class:`FloatValue` is a :class:`~.setsystem.SetValue`  k + sum_v c_v x_v + [lo, hi]  on
the setsystem's grid (every number an integer times 2^-SCALE) whose variables are the pair's
digits, carries and indicators and *rounding symbols* r_i = ("r", i), each an unknown in
[0, 1] (non-negative, as ``SetValue.times`` rounds for). It stands for the program's value: at
every pair of the region, and for every rounding the bounds below allow, the value is the form
at some r in [0, 1]^n. A value's interval [lo, hi] and an operation's rounding bound e become
one fresh symbol, lo - e + (hi - lo + 2e) r_new, so that a rounding shared by two values (the
readout's scale, say) cancels in their difference; a value keeps its ``KEEP_SYMBOLS`` largest
symbols (the others join its fresh one: c r lies in [min(0, c), max(0, c)]). A symbol is no
digit: a value with one is never taken digit by digit (``column_of``, ``near_column``), and
the region's exact walk sees it folded into the interval. With p = 24 or 53 bits and
h(M) = half an ulp at magnitude M (2^(e - p) for 2^e <= M < 2^(e + 1), never below half the
subnormal spacing):

- x * y and x / y: the exact result of the two sets (``SetValue``), plus [-h(M), h(M)], M the
  greatest |result| over the region's box: IEEE rounds to nearest, |fl(z) - z| <= h(|z|). A
  product that may be fused into a following add (FMA) is covered, since its error may be 0. A
  result that is one point is rounded exactly instead (a quotient, a product in a
  constant expression; in the pass a product of points only where exact, since a fused
  product is not rounded).
- sums are order-free: a chain of n adds and subtracts is held as its exact sum with the
  count n and the mass m = sum |terms|, and bounded when used by n h(m (1 + n 2^(1 - p))):
  in any order or grouping (BLAS blocking, a vectorised reduction) each partial sum is at
  most that large and each add rounds once. One add of two points is rounded exactly (one
  order). Terms that are all multiples of 2^-g (integers, short dyadics) with m < 2^(p - g)
  add exactly in any order: no bound.
- x - x is 0 and x + 0 is x (IEEE, exactly); a comparison compares the values, unrounded.
- exp, sin, cos, erf: the real function's enclosure over the box (``SetSystem``), plus
  ``LIBRARY_ULPS`` ulps of the greatest result: a trusted premise about the library the
  original ran (PyTorch's CPU kernels call SLEEF's u10 functions, 1.0 ulp; docs/proof.md);
  sqrt is correctly rounded (IEEE), half an ulp; exp(0) = 1 exactly, and e^x below half the
  least subnormal is between 0 and the least subnormal.
- softmax's max: the program subtracts the largest score; where one score's box lies above
  every other's, that score is the max, and s - max is 0 for it.
- constants: a rational is rounded as the program stores it (to double, then to float32:
  a Python number cast to a float32 tensor), exactly; a constant expression is evaluated by
  these rules (its ``f64`` parts in Python's double, as the source computes them); e^c and
  ln b are the stored values between the roundings of their enclosure's ends, widened by
  ``CONSTANT_SLACK`` for the double computation. A float64 finer than the grid (below
  2^-SCALE in its last bit) is held as the grid's two neighbours around it.

- e^x past the range: where x > (emax + 1) ln 2 over the whole region, e^x > 2^(emax + 1),
  more than an ulp beyond the largest float, so a library within 1 ulp returns +inf (as
  IEEE's overflow does): the value :data:`INFINITE`. inf + x is inf and x / inf is 0 for a
  finite x (IEEE; SiLU's x / (1 + e^-x) at a very negative x, as PyTorch's kernel computes
  it); any other use of it raises :class:`Undecided`.

Comparisons and decisions fold the symbols into the interval (each in [0, 1]). Any other
overflow (a magnitude past the largest float) is not bounded: it raises :class:`Undecided`.
"""

from ...modelfile import dump
from ...numbers import for_model, number_system
from .generic import Prover
from .setsystem import SCALE, Searching, SetValue
from ..kernel.floatcheck import (FORMAT as CERTIFICATE, FORMATS, INFINITE, FloatForm,
                                 FloatFormSystem, FloatRelu, log2_floor, to_nearest)

round_to = to_nearest   # rounding to nearest, ties to even (Undecided past the range)
floor_log2 = log2_floor
FloatValue = FloatForm  # the kernel's values of the program: the one value class
__all__ = ["FloatValue", "FloatRelu", "INFINITE", "FloatSets", "FloatProver", "floor_log2",
           "round_to", "prove", "certificate"]


class FloatSets(Searching, FloatFormSystem):
    """The number system of :class:`FloatValue` (the kernel's ``floatcheck``) for one model
    and one program format (``float32`` or ``float``), over the search's regions."""

    def __init__(self, model, program="float32"):
        if program not in FORMATS:
            raise ValueError(f"unknown float program {program!r}; use float32 or float")
        super().__init__(model, program)
        self.digits = for_model(number_system("fraction"), model).exp_digits

    def describe(self):
        return (f"sets of the {self.name} program's values (affine forms in the digits and "
                f"rounding symbols on a 2^-{SCALE} grid; {self.digits}-digit enclosures)")

    def grid_range(self, x):
        """``Searching.grid_range`` with the symbols folded (a symbol is no variable of the
        region)."""
        return super().grid_range(self.folded(x))


class FloatProver(Prover):
    """The generic prover over the float program: its sets hold the program's values
    (:class:`FloatSets`), a decision is taken on target - other with the roundings they share
    cancelled, and a single pair is run by the float replay (``addition.add`` in float32 or
    float, bit-faithful to the originals: tests/test_board.py). ``carries_first`` is the
    generic prover's split order (``Prover``): a form whose rest is rounding symbols points
    the generic rule at no carry."""

    def __init__(self, model, program="float32", **options):
        super().__init__(model, system=lambda m: FloatSets(m, program), replay=program,
                         **options)

    def _row(self, slot, region):
        return [self.ns.lift(v) for v in super()._row(slot, region)]

    def logits(self, k, region):
        return [self.ns.close(v) for v in super().logits(k, region)]

    def decide(self, logits, t):
        """``Prover.decide`` on the differences logit_t - logit_u, each formed exactly and its
        rounding symbols folded after the difference."""
        ns = self.ns
        zero = SetValue(ns, 0)
        return super().decide([zero if u == t else ns.folded(ns.difference(other, logits[t]))
                               for u, other in enumerate(logits)], t)


def prove(model, program="float32", **options):
    """The generic prover's :class:`~.generic.Outcome` for ``model``'s float program."""
    return FloatProver(model, program, **options).run()


def certificate(outcome, model, name, program="float32"):
    """The certificate of a proved float outcome (JSON-ready): the model file's text, the
    program's format and the split tree of every answer position, for ``floatcheck.check``."""
    if outcome.verdict != "proved":
        raise ValueError(f"no certificate for a verdict of {outcome.verdict!r}")
    return {"format": CERTIFICATE, "version": 1, "name": name, "digits": outcome.digits,
            "number": program, "model": dump(model), "positions": outcome.positions}
