"""A finite task checked on every one of its inputs: ``runs(model, ns)``.

A model that does not add declares what it computes over a finite set of inputs (its file's
``task``: seed 003's lookup machine writes 03, 06, 10 for A, B, C). Running each input once
decides the whole task: in the fraction system every token is certified (the real-number
model's argmax is decided at the precision the run picks, or the run is Undecided), so every
input right is a proof by exhaustion, one that anyone re-runs with the same command; in a float
system the runs replay the float program, which is deterministic, so they decide it too.

>>> from tinyadder import build
>>> from tinyadder.numbers import number_system
>>> [(r.input, r.wrote, r.right) for r in runs(build("seed003-lookup"), number_system("fraction"))]
[('A', '03', True), ('B', '06', True), ('C', '10', True)]
"""

from dataclasses import dataclass
from typing import Optional

from .. import task
from ..numbers import Undecided, for_model


@dataclass(frozen=True)
class Run:
    """One input's run: what the model wrote (None: no token certified, ``why``) and what
    the task says."""

    input: str
    wrote: Optional[str]
    expected: str
    why: str = ""

    @property
    def right(self):
        return self.wrote == self.expected


def runs(model, ns):
    """Every input of ``model``'s task run in ``ns`` (at the model's precision), in the
    file's order."""
    ns = for_model(ns, model)
    out = []
    for x in task.inputs(model):
        try:
            out.append(Run(x, task.write(model, ns, x), task.expected(model, x)))
        except Undecided as why:
            out.append(Run(x, None, task.expected(model, x), str(why)))
    return tuple(out)


def verdict(found):
    """'proved' (every input right), 'fails' (an input written wrong) or 'undecided' (none
    wrong, one not certified)."""
    if all(r.right for r in found):
        return "proved"
    return "fails" if any(r.wrote is not None for r in found if not r.right) else "undecided"


def lines(found):
    """One line per input: 'A -> 03  right', or what the task says instead."""
    width = max(len(r.input) for r in found)
    return [f"  {r.input:<{width}} -> {r.wrote}  right" if r.right else
            f"  {r.input:<{width}} -> {r.wrote}  wrong: the task says {r.expected}"
            if r.wrote is not None else
            f"  {r.input:<{width}} -> no token certified ({r.why})" for r in found]
