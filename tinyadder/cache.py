"""Run a model on a whole addition and keep every trace point: ``run_with_cache``.

>>> from tinyadder import build
>>> logits, cache = run_with_cache(build("published"), "7650676663+0149460439")
>>> cache.text
'<bos>7650676663+0149460439=07800137102'
>>> cache["resid_mid", 0][23][4]          # scale at position 23, exactly 1/(23+2)
Fraction(1, 25)
>>> cache.view("blocks.0.hook_resid_mid", 22)["scale"]
Fraction(1, 24)
"""

from dataclasses import dataclass
import math
from typing import Optional

from .addition import (check_tokens, digits_of, encode, layout,
                       parse_expression, system_of, to_generate)
from .forward import forward
from .generate import decode
from .numbers import FractionSystem, for_model
from .plan import compile_model
from . import task as finite

# TransformerLens short names: cache["resid_mid", 0] is cache["blocks.0.hook_resid_mid"].
_SHORT = {
    "embed": "hook_embed",
    "logits": "unembed.hook_out",
    **{k: "blocks.{}.hook_" + k
       for k in ("resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out")},
    **{k: "blocks.{}.attn.hook_" + k for k in ("q", "k", "v", "z", "attn_scores", "pattern")},
    **{k: "blocks.{}.mlp.hook_" + k for k in ("pre", "pre_linear", "post")},
}


def act_name(name, layer=None):
    """'resid_mid', 0 -> 'blocks.0.hook_resid_mid'; full names pass through."""
    full = _SHORT.get(name, name)
    if "{}" in full:
        if layer is None:
            raise KeyError(f"{name!r} needs a layer: cache[{name!r}, 0]")
        return full.format(layer)
    return full


@dataclass(frozen=True)
class Stage:
    """A point where the machine state is whole: after the embedding or after a half-layer."""

    label: str              # 'layer 0 attention'
    short: str              # 'L0.attn'
    name: str               # the trace point holding the residual stream after it
    layer: Optional[int]    # None for the embedding
    kind: str               # 'embed', 'attn' or 'mlp'


def stages(model):
    """The embedding, then each block's attention and FFN half, in execution order. With a
    positional embedding the first state is the stream entering block 0 (token and position
    rows summed), so that no half-layer seems to write what the positions did."""
    out = [Stage("embedding", "embed", "hook_embed", None, "embed") if not model.W_pos else
           Stage("embedding and positions", "embed", act_name("resid_pre", 0), None, "embed")]
    for i in range(len(model.blocks)):
        out.append(Stage(f"layer {i} attention", f"L{i}.attn", act_name("resid_mid", i), i,
                         "attn"))
        out.append(Stage(f"layer {i} FFN", f"L{i}.mlp", act_name("resid_post", i), i, "mlp"))
    return out


class ActivationCache:
    """Trace-point values of one forward pass over a whole sequence, by TransformerLens name."""

    def __repr__(self):
        return (f"<ActivationCache of {self.model.name} on {self.text!r}: "
                f"{len(self.tokens)} positions, {len(self.values)} trace points, "
                f"{self.ns.describe()}>")

    def __init__(self, model, ns, tokens, values, roundings=None, prompt_len=None, patched=()):
        self.model = model
        self.ns = ns
        self.tokens = list(tokens)
        self.values = dict(values)
        # Every irrational value rounded to make this run (the fraction system's exp calls).
        self.roundings = list(ns.roundings if roundings is None else roundings)
        # Positions before this were given; the rest were generated.
        self.prompt_len = len(self.tokens) if prompt_len is None else prompt_len
        # The trace points a patch replaced: their values are given, not computed.
        self.patched = tuple(sorted(patched))

    @property
    def text(self):
        return "".join(self.model.vocab[t] for t in self.tokens)

    @property
    def predicting(self):
        """Positions whose prediction was appended: prompt_len - 1 .. len(tokens) - 2."""
        return range(self.prompt_len - 1, len(self.tokens) - 1)

    def __getitem__(self, key):
        name, layer = key if isinstance(key, tuple) else (key, None)
        return self.values[self._recorded(act_name(name, layer))]

    def _recorded(self, name):
        """``name`` if this cache holds it, else a KeyError naming it and what it holds."""
        if name not in self.values:
            raise KeyError(f"no trace point {name!r} in this cache; it holds "
                           f"{', '.join(self.values) or 'none (names= kept none)'}")
        return name

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __iter__(self):
        return iter(self.values)

    def keys(self):
        return self.values.keys()

    def items(self):
        return self.values.items()

    def labels(self, name):
        """Names along the last axis of a trace point: slots, heads, units or tokens."""
        return point_labels(self.model, name)

    def view(self, name, pos):
        """{slot, head, unit or token name: value} of a [pos][...] trace point at ``pos``."""
        name = self._recorded(act_name(*name) if isinstance(name, tuple) else act_name(name))
        rows = self.values[name]
        if isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos < len(rows):
            raise IndexError(f"position {pos!r} is outside the sequence; use 0 to "
                             f"{len(rows) - 1}")
        if name.endswith(("hook_attn_scores", "hook_pattern")):
            raise KeyError(f"{name!r} is indexed [head][pos][pos], not [pos]: use "
                           f"cache[{name!r}][head][pos]")
        return dict(zip(self.labels(name), rows[pos]))


def point_labels(model, name):
    """Names along the last axis of trace point ``name`` in a run of ``model``: slots,
    lanes, units or tokens."""
    name = act_name(name) if "." not in name and name in _SHORT else name
    if name not in trace_points(model):
        raise KeyError(f"no trace point {name!r} in a run of {model.name}")
    if name == "unembed.hook_out":
        return model.unembed.tokens
    if name in ("hook_embed", "hook_pos_embed"):
        return model.slots[:model.width_embed]
    if name.startswith("ln_final."):
        return model.slots[:model.width_out]
    if name == "hook_mix":  # first + g·(last − first), zipped: the narrower block's slots
        return model.slots[:min(model.blocks[model.mix.first].width_out,
                                model.blocks[-1].width_out)]
    block = model.blocks[int(name.split(".")[1])]
    attn = block.attn
    if name.endswith(("hook_k", "hook_v", "hook_rot_k")):
        return attn.lanes(attn.groups)
    if ".attn." in name:
        return attn.lanes(attn.heads) if not name.endswith(("scores", "pattern")) else attn.heads
    if ".mlp." in name:
        return block.mlp.units
    width = block.width_out if name.endswith(("resid_post", "mlp_out")) else block.width_in
    return model.slots[:width]


def patch_slot(model, name, label, value, positions=None):
    """A ``patch`` that sets one slot, head, unit or token (``label``) of trace point ``name``
    to ``value`` (a number, or a function of the old value) at ``positions`` (all by default).

    ``name`` is a full name or a short one with its layer, as the cache takes it. A patched run
    reruns the whole prefix at every step, so row p of the value is position p.

    >>> from tinyadder import build
    >>> model = build("published")
    >>> forget = patch_slot(model, ("resid_mid", 0), "count", 0, positions=[21])
    >>> run_with_cache(model, "12+34", patch=forget)[1].text
    '<bos>0000000012+0000000034=00000000042'
    """
    full = act_name(*name) if isinstance(name, tuple) else act_name(name)
    along = point_labels(model, full)
    if label not in along:
        raise KeyError(f"{full} has no {label!r}; it holds {', '.join(along)}")
    if full.endswith(("hook_attn_scores", "hook_pattern")):
        raise KeyError(f"{full} is indexed [head][pos][pos]: patch it with a function")
    j = along.index(label)
    change = value if callable(value) else (lambda old: value)
    wanted = None if positions is None else set(positions)

    def patch(rows):
        return [[change(x) if k == j and (wanted is None or p in wanted) else x
                 for k, x in enumerate(row)] for p, row in enumerate(rows)]
    return {full: patch}


def trace_points(model):
    """Every trace-point name a forward pass of ``model`` records."""
    names = {"hook_embed", "unembed.hook_out"}
    if model.W_pos:
        names.add("hook_pos_embed")
    if model.ln_final is not None:
        names.add("ln_final.hook_normalized")
    if model.mix is not None:
        names.add("hook_mix")
    for i, block in enumerate(model.blocks):
        names.update(full.format(i) for full in _SHORT.values() if "{}" in full)
        a = block.attn
        if a.rope_freqs or a.q_norm is not None or a.k_norm is not None:
            names.update({f"blocks.{i}.attn.hook_rot_q", f"blocks.{i}.attn.hook_rot_k"})
        for ln in ("ln1", "ln2"):
            if getattr(block, ln) is not None:
                names.add(f"blocks.{i}.{ln}.hook_normalized")
        if not block.mlp.gated:
            names.discard(f"blocks.{i}.mlp.hook_pre_linear")
    return names


def _known(model, names, what):
    """``names`` (trace-point names) if ``model``'s runs record each, else a KeyError naming
    the first that none does and listing the ones they do."""
    points = trace_points(model)
    for name in names:
        if name not in points:
            raise KeyError(f"no trace point {name!r} in a run of {model.name} ({what}); the "
                           f"trace points are {', '.join(sorted(points))}")
    return names


def _selected(names):
    if names is None:
        return lambda name: True
    if callable(names):
        return names
    if isinstance(names, str):
        return lambda name: name == names
    wanted = set(names)
    return lambda name: name in wanted


def _prompt(model, expression):
    """The prompt's token ids: 'a+b' parsed and encoded (a finite task's input, 'A', for a
    model with a task), or token ids checked (``addition.check_tokens``)."""
    if isinstance(expression, str) and finite.has_task(model):
        return finite.encode(model, finite.parse_input(model, expression))
    if isinstance(expression, str):
        return encode(model, *parse_expression(expression, digits_of(model)))
    if isinstance(expression, tuple) and len(expression) == 2:
        raise TypeError(f"expected 'a+b' text or a list of prompt token ids, got the pair "
                        f"{expression!r}: for operands a, b pass f'{{a}}+{{b}}'")
    try:
        return check_tokens(model, expression)
    except TypeError:
        raise TypeError(f"expected 'a+b' text or a list of prompt token ids, got "
                        f"{type(expression).__name__}") from None


# --- how much a trace takes ----------------------------------------------------------------

TRACE_BUDGET = 10 ** 9  # bytes: the largest trace run_with_cache records (1 GB)


def value_bytes(ns, digits):
    """About how many bytes one recorded value takes in number system ``ns`` for N-digit
    operands, on average over a trace (the masked half of each attention row is a shared
    None), decoding included: fitted just above the peak memory of whole runs of
    ``run_with_cache`` (docs/cli.md). Exact rationals grow with N, as 315 + 240 sqrt(N) bytes
    (peaks measured with tracemalloc: 747 a value at N = 10, 937 at N = 20, 1,106 at N = 30), and with the digits of the
    rounded exponentials beyond the N + 40 the fraction system picks; decimals with their
    precision P; an unknown system is costed as a rational."""
    name = getattr(ns, "name", "fraction")
    if name == "float":
        return 32
    if name == "float32":
        return 40
    if name == "decimal":
        return 56 + ns.digits // 4
    surplus = max(0, getattr(ns, "exp_digits", 0) - digits - 40)
    return 315 + math.ceil(240 * math.sqrt(digits)) + 2 * surplus


def trace_values(model, length, names=None):
    """How many values a trace of ``length`` positions records: [pos][label] per trace point,
    [head][pos][pos] for the attention scores and pattern (only the points ``names`` keeps)."""
    keep = _selected(names)
    total = 0
    for name in trace_points(model):
        if keep(name):
            width = len(point_labels(model, name))
            square = name.endswith(("hook_attn_scores", "hook_pattern"))
            total += width * length * (length if square else 1)
    return total


def pass_entries(model):
    """The attention entries of one pass over a whole sequence of ``model``: heads times the
    pairs of positions a causal mask keeps, L (L + 1) / 2 for L positions, summed over the
    blocks. The recorded pass computes them whatever it records."""
    length = sum(f.count for f in layout(model))
    return sum(len(b.attn.heads) for b in model.blocks) * length * (length + 1) // 2


def size_digits(model):
    """The N that sizes a trace's values (``value_bytes``): the operands' digits, or 1 for a
    model with a finite task (its values are those of a few small numbers)."""
    return 1 if finite.has_task(model) else digits_of(model)


def trace_bytes(model, ns, names=None):
    """About how many bytes a trace of one whole sequence of ``model`` takes in ``ns`` (fit
    to the model): ``trace_values`` times ``value_bytes``."""
    length = sum(f.count for f in layout(model))
    return trace_values(model, length, names) * value_bytes(ns, size_digits(model))


class TraceTooLarge(ValueError):
    """A trace would take more memory than ``TRACE_BUDGET``; the message says how much."""


def gigabytes(nbytes):
    """'1.4 GB' (decimal gigabytes, one decimal)."""
    return f"{nbytes / 1e9:.1f} GB"


def run_with_cache(model, expression, *, ns=None, names=None, names_filter=None, patch=None):
    """Generate the answer to ``expression`` ('a+b' text or prompt token ids), then run the whole
    sequence once more recording every trace point: (logits [pos][token], ActivationCache).

    Token ids must be a prefix of a sequence the model's layout can produce
    (``addition.check_tokens``); the model completes the sum when the prompt is whole, and a
    shorter prefix is recorded as given. ``names`` (or TransformerLens's ``names_filter``)
    keeps only some trace points: a name, a list of names or a predicate. ``patch`` ({trace
    point: function}, see ``forward`` and :func:`patch_slot`) applies to generation and to the
    recorded pass. A name in ``names`` or ``patch`` that no run of the model records is a
    KeyError listing the ones it does. Operands have the model's N digits; ``ns`` (fraction by
    default) runs at the model's precision unless its precision was given. Before anything
    runs, TraceTooLarge refuses a pass whose attention entries (``pass_entries``) would take
    more than ``TRACE_BUDGET`` bytes as values, whatever it records (a smaller N), and a trace
    that would take more (``trace_bytes``: keep fewer trace points with ``names``, or a
    smaller N).
    """
    if names is not None and names_filter is not None:
        raise TypeError("give names or names_filter, not both (they are the same option)")
    names = names if names_filter is None else names_filter
    n = size_digits(model)
    ns = for_model(FractionSystem() if ns is None else system_of(ns, fresh=True), model)
    prompt = _prompt(model, expression)
    if isinstance(names, str) or (names is not None and not callable(names)):
        _known(model, [names] if isinstance(names, str) else list(names), "names=")
    if patch:
        _known(model, list(patch), "patch=")
    # the pass itself, whatever it records: its attention entries as values (a full trace
    # holds them four times over, so that any trace within the budget passes)
    work = pass_entries(model) * value_bytes(ns, n)
    nbytes = trace_bytes(model, ns, names)
    if nbytes > TRACE_BUDGET:
        advice = ("keep fewer trace points with names=, or use a smaller N" if
                  work <= TRACE_BUDGET else "use a smaller N")
        raise TraceTooLarge(f"a trace of {model.name} at N = {n} in {ns.spec} would take "
                            f"about {gigabytes(nbytes)}, over the {gigabytes(TRACE_BUDGET)} "
                            f"budget; {advice}")
    if work > TRACE_BUDGET:
        raise TraceTooLarge(f"the recorded pass of {model.name} at N = {n} computes "
                            f"{pass_entries(model):,} attention entries (heads times pairs of "
                            f"positions) whatever names= keeps, as many values as "
                            f"{gigabytes(work)} in {ns.spec}, over the "
                            f"{gigabytes(TRACE_BUDGET)} budget; use a smaller N (the sum "
                            f"alone: tinyadder.run)")
    # ns may come back refined: the precision at which every token was certified
    tokens, ns = decode(model, ns, prompt, to_generate(model, prompt), patch=patch)
    values = {}
    logits, _ = forward(compile_model(model, ns), tokens, record=values.__setitem__,
                        patch=patch, names=_selected(names))
    return logits, ActivationCache(model, ns, tokens, values, prompt_len=len(prompt),
                                   patched=patch or ())
