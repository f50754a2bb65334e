"""A number system whose values are sets: affine forms in the digits plus an interval, over a
:class:`~.sets.Region` of operand pairs (the generic prover's, ``generic``).

A value is a :class:`SetValue`, the kernel's ``setcheck.Form`` (one value class: what the
search computes is what the checker re-computes),  k + sum_v c_v x_v + [lo, hi]  on the
variables of ``sets``:
the digits a_j, b_j and the carries c_j of a pair, and the indicators [a_j = d], [b_j = d],
[s_j = d] (1 when the digit is d, else 0), with which any function of one digit is an exact
affine form. Every number in it (k, each c_v, lo, hi) is an integer times 2^-SCALE, one binary
scale shared by every value, so the arithmetic is on integers and takes no gcd. It stands for
a function of the pair: at every pair of the region the real-number model's value (every
exponential, root, sine exact) and the fraction system's value lie in F(x) + [lo, hi], F(x)
the form at the pair. The rules keep that true:

- sums are exact, and x - x is 0 (the same value at every pair, however wide its
  interval); a multiple r c of a number c that is not on the grid is rounded down to
  it, and the rounding, less than one step of the grid times the variable's greatest value
  (9 for a digit, 1 for a carry or an indicator), is added to hi;
- a product of two values f, g keeps the linear terms m_g f + m_f g - m_f m_g, m the middle
  of a value's box, and bounds the rest, (f - m_f)(g - m_g), by the product of its factors'
  ranges over the region's box (a square's rest by the square of its factor's range, never
  below 0);
- a quotient multiplies by the reciprocal of the divisor's range (refused, by :class:`Split`,
  when that range holds 0);
- e^x, sqrt, erf (increasing) take the range of x over the box and enclose the function at
  its ends; sin and cos enclose the function over the range. Enclosures are
  ``numbers.IntervalSystem``'s at the fraction system's digits, so they hold its roundings
  too (docs/exactness.md), and their ends are rounded outward to the grid; where it is
  narrower, the mean-value form alpha x + f(m) - alpha m + [-rad, rad] (alpha the middle of
  f's slope over the range, m the range's middle) keeps x's terms, unless its box leaves the
  strict sign of the enclosure (``setcheck.FormSystem._mean_value``);
- a value that depends on one digit only (one *column*: a_j, b_j, s_j or a carry c_j, its
  linear term and its indicators) is a table of at most 10 numbers: a product, a quotient or
  a function of such values is taken digit by digit, each entry enclosed on its own, and the
  result is the indicator form of the table (an affine form in a carry) plus the widest
  entry's interval. Nothing of the digit is lost.

The box of a value groups each column's terms: alpha x + sum_d w_d [x = d] lies between the
least and the greatest of alpha d + w_d over the digits d the region allows.

A ReLU is relaxed rather than decided (``relu``: the prover patches every ReLU block's
``hook_pre`` so that each gate arrives as relu(g) itself): g where g >= 0 over the region, 0
where g <= 0, else its chord. A comparison met otherwise (``g > 0``) is decided when the
sign, g >= 0 or g <= 0, holds at every pair of the region (both ReLU branches agree at 0): first
over the box, then exactly by the region's walk over the columns (``Region.bound``); otherwise
it raises :class:`Split`, which carries the form, so that the prover splits the region there.

The public methods (``box``, ``interval``, ``variable``, ``const``, ``exact_range``,
``scaled``) take and give rationals; a value's own fields are on the grid.
"""

from fractions import Fraction

from ...numbers import for_model, number_system
from ...numbers.protocol import Undecided
from ..kernel.setcheck import ONE, SCALE, Form, FormSystem, _col, down, up
from .sets import walk_region

SetValue = Form   # the kernel's affine form: the one value class of the proof
column = _col     # the column a variable belongs to: ("a", j), ("b", j), ("s", j) or ("c", j)
__all__ = ["ONE", "SCALE", "SetValue", "SetSystem", "Split", "column", "down", "up", "rational"]


def rational(n):
    """The rational of a grid integer."""
    return Fraction(n, ONE)


class Split(Undecided):
    """A sign that the region does not decide: ``value`` is the undecided form."""

    def __init__(self, value, what):
        super().__init__(what)
        self.value = value


class Searching:
    """What the search adds to a kernel number system: regions as ``sets.Region`` (ranges
    with a pair attaining them), what a region does not settle as :class:`Split` (the form
    to split on), the gates relaxed since ``at`` (``relaxed``), and rationals in and out."""

    region = None
    relaxed = ()

    def at(self, region):
        """Decide comparisons over ``region`` (a ``sets.Region``) from now on."""
        super().at(walk_region(region), region.digits)
        self.region, self.relaxed = region, []
        return self

    def undecided(self, value, why):
        return Split(value, why)

    def chorded(self, g):
        self.relaxed.append(g)

    def grid_range(self, x):
        """(least, greatest, pair at the least) of x over the region's pairs, grid integers
        (None for an empty region)."""
        found = self.region.bound(x.coefs, x.k)
        if found is None:
            return None
        low, high, at_low, _ = found
        return low + x.lo, high + x.hi, at_low

    def exact_range(self, x):
        """``grid_range`` in rationals."""
        found = self.grid_range(x)
        return None if found is None else (rational(found[0]), rational(found[1]), found[2])

    def box(self, x):
        """(least, greatest) of x over the region's box (a superset of its pairs),
        rationals."""
        lo, hi = self.grid_box(x)
        return rational(lo), rational(hi)

    def variable(self, v, coef=1, const=0):
        """const + coef v (rationals; rounded outward to the grid)."""
        r = Fraction(coef)
        return self.const(const) + SetValue(self, 0, {v: ONE}).times(r.numerator, r.denominator)

    def interval(self, lo, hi):
        """The constant interval [lo, hi] (rationals)."""
        return self.grid_interval(down(lo), up(hi))


class SetSystem(Searching, FormSystem):
    """The number system of :class:`SetValue` for one model; ``region`` (set by the prover
    before each pass) is where comparisons are decided and boxes taken."""

    name = "sets"
    spec = "sets"   # built from a model, not parsed

    def __init__(self, model):
        super().__init__(model)
        self.digits = for_model(number_system("fraction"), model).exp_digits

    def describe(self):
        return (f"sets (affine forms in the digits and intervals on a 2^-{SCALE} grid; "
                f"{self.digits}-digit enclosures)")
