"""Greedy decoding, outside the forward pass: each new position is run once (KV cache).

The tokens are picked by comparing logits in the number system's ``decider()``: in a rounding
system (float, decimal) its own rounded values, whose order of operations ``forward`` defines;
in the fraction system, intervals that contain both its exact values and the real-number
model's. A comparison the intervals cannot settle raises ``numbers.Undecided``, and the whole
decoding is repeated at a higher precision (``refined()``): a token is never guessed.
"""

from .codegen import decodes
from .forward import KVCache, forward, greedy
from .numbers import Undecided
from .numbers.scaled import ScaledSystem
from .plan import compile_model


def argmax(logits):
    """Index of the largest logit; the first one on a tie (as torch.argmax): the index w with
    logits[w] > logits[j] for every j < w and not logits[j] > logits[w] for every j > w.

    Over enclosures a comparison may be open (Undecided): one between two logits below the
    winner (an exact tie of two runners-up, say) is passed over, since a challenger that wins
    restarts the checks; one that involves the winner is raised. Where a float logit is a NaN
    see ``_with_nan``."""
    if any(isinstance(x, float) and x != x for x in logits):
        return _with_nan(logits)
    best = 0
    while True:
        pending = None
        for j in range(len(logits)):
            if j == best:
                continue
            try:
                wins = logits[j] > logits[best] if j > best else not logits[best] > logits[j]
            except Undecided as open_comparison:
                pending = pending or open_comparison
                continue
            if wins:
                best = j
                break
        else:
            if pending:
                raise pending
            return best


def _with_nan(logits):
    """argmax of float logits that hold a NaN: the index w of the definition above where there
    is one (there is at most one: two would each have to exceed the other), else, as
    torch.argmax, the first NaN (in [1, nan, 2] no index is larger than all before it and
    smaller than none after it)."""
    n = len(logits)
    for w in range(n):
        if (all(logits[w] > logits[j] for j in range(w))
                and not any(logits[j] > logits[w] for j in range(w + 1, n))):
            return w
    return next(j for j, x in enumerate(logits) if x != x)


def _greedy(compiled, prompt, n_new, cache, patch):
    tokens = list(prompt)
    if cache and not patch and n_new and tokens and decodes(compiled):
        return greedy(compiled, tokens, n_new, argmax)
    past, pending = KVCache(), tokens
    for _ in range(n_new):
        if patch or not cache:
            past, pending = KVCache(), tokens
        logits, past = forward(compiled, pending, past, patch=patch, logits="last")
        tokens.append(compiled.readout_tokens[argmax(logits[-1])])
        pending = tokens[-1:]
    return tokens


def decode(model, ns, prompt, n_new, cache=True, patch=None):
    """(all tokens, the number system whose values they were decided for).

    That system is ``ns``, or ``ns.refined()`` (repeatedly) when ``ns``'s decider left a
    comparison open. A ``patch`` (see ``forward``) runs in ``ns`` itself, uncertified, with the
    whole prefix rerun at every step so that each patch function sees position 0 first.
    """
    while True:
        try:
            return _greedy(_runner(model, ns, patch), prompt, n_new, cache, patch), ns
        except Undecided:
            ns = ns.refined()


def _runner(model, ns, patch):
    """The compiled model whose comparisons pick the tokens: ``ns`` under a patch, else its
    decider; where that is the fraction system's interval system and the generated code runs
    the model, the same enclosures as scaled integers (``numbers.scaled``)."""
    if patch:
        return compile_model(model, ns)
    decider = ns.decider()
    if decider is not ns:
        scaled = compile_model(model, ScaledSystem.around(decider))
        if scaled.fast:
            return scaled
    return compile_model(model, decider)


def generate(model, ns, prompt, n_new, cache=True, patch=None):
    """Append ``n_new`` greedily chosen tokens to ``prompt`` (token ids); return all tokens.

    With ``cache=False`` every step reruns the whole prefix (the AdderBoard reference loop).
    """
    return decode(model, ns, prompt, n_new, cache=cache, patch=patch)[0]
