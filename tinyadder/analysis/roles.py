"""What each position of an addition holds, read from the model's prompt layout
(``model.prompt``): a digit of a or b and its place, a separator, or a digit of the sum.

A label names the place: ``a3`` is the digit of a at 10^3, ``s10`` the sum's digit at 10^10;
a separator is its token's text in quotes (``'+'``, lokimorty-10's zeros ``'0'``), and
``<bos>`` and a stop token are themselves. TinyAdder-36 reads its operands most significant
digit first, so position 1 holds a9; lokimorty-10 reads them reversed, so position 1 holds a0:

>>> from tinyadder import build
>>> [r.label for r in roles(build("published", 2))]
['<bos>', 'a1', 'a0', "'+'", 'b1', 'b0', "'='", 's2', 's1', 's0']
>>> from tinyadder import models
>>> loki = roles(models.build("lokimorty-10", None))
>>> " ".join(r.label for r in loki[:14]), loki[-11].label, loki[-1].label
("'0' a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 '0' '0' '0'", 's0', 's10')
>>> layout_text(models.build("lokimorty-10", None))
"'0' a0..a9 '0'x9 b0..b9 '0' then s0..s10"

A model with a finite task (``model.task``: seed 003's lookup machine) has its prompt around
one input, and then its answer's tokens, out0 first:

>>> [r.label for r in roles(build("seed003-lookup"))], layout_text(build("seed003-lookup"))
(['<bos>', 'input', 'out0', 'out1'], '<bos> input then out0..out1')
"""

from dataclasses import dataclass
from typing import Optional

from ..addition import digits_of

ROLES = ("a", "b", "special", "sum", "input")


@dataclass(frozen=True)
class Role:
    """One position: ``role`` one of ROLES, ``label`` its name (``a3``, ``'+'``), ``place``
    the power of ten its digit holds (None for a separator)."""

    role: str
    label: str
    place: Optional[int]


def _places(count, order):
    """The places of ``count`` digits written most significant first ('msb') or last."""
    return list(range(count - 1, -1, -1)) if order == "msb" else list(range(count))


def _quoted(text):
    return text if text.startswith("<") else repr(text)


def roles(model):
    """[Role] per position of a whole addition of ``model``: its prompt, then what it writes."""
    if model.task is not None:
        return _task_roles(model.task)
    p = model.prompt
    n = digits_of(model)
    out = []
    for item in p.question:
        if item in ("a", "b"):
            out += [Role(item, f"{item}{k}", k) for k in _places(n, p.operands)]
        else:
            out.append(Role("special", _quoted(item), None))
    out += [Role("sum", f"s{k}", k) for k in _places(p.answer_digits, p.answer)]
    if p.stop is not None:
        out.append(Role("special", _quoted(p.stop), None))
    return out


def _task_roles(task):
    """A finite task's positions: ``before``, the input, ``after`` (separators), then the
    answer's tokens out0, out1, ... in the order written (role 'sum': what the model writes)."""
    length = len(next(iter(task.cases.values())))
    return ([Role("special", _quoted(t), None) for t in task.before] +
            [Role("input", "input", None)] +
            [Role("special", _quoted(t), None) for t in task.after] +
            [Role("sum", f"out{k}", None) for k in range(length)])


def _run(labels):
    """'a0..a9' for a run of digit labels, "'0'x9" for a repeated separator."""
    if len(labels) == 1:
        return labels[0]
    if labels[0] == labels[-1]:
        return f"{labels[0]}x{len(labels)}"
    return f"{labels[0]}..{labels[-1]}"


def layout_text(model):
    """The prompt layout in one line: runs of one role (separators by their text) joined,
    then the sum's digits after 'then'."""
    out, run, key = [], [], None
    parts = roles(model)
    if model.task is not None:
        answer = [r.label for r in parts if r.role == "sum"]
        return f"{' '.join(r.label for r in parts[:-len(answer)])} then {_run(answer)}"
    p = model.prompt
    for r in parts[:len(parts) - p.answer_digits - (p.stop is not None)]:
        k = r.role if r.role != "special" else r.label
        if k != key and run:
            out.append(_run(run))
            run = []
        key = k
        run.append(r.label)
    if run:
        out.append(_run(run))
    answer = [r.label for r in parts if r.role == "sum"]
    stop = f" {_quoted(p.stop)}" if p.stop is not None else ""
    return f"{' '.join(out)} then {_run(answer)}{stop}"
