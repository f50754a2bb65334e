"""Greedy decoding, outside the forward pass: each new position is run once (KV cache).

Generation runs on ``engine`` (the fast untraced pass, same values); with a patch, or when
asked for the reference's rounding order, it runs the reference ``forward.forward``.
"""

from . import engine
from .forward import KVCache, compile_model, forward


def argmax(logits):
    """Index of the largest logit; the first one on a tie (as torch.argmax)."""
    best = 0
    for i in range(1, len(logits)):
        if logits[i] > logits[best]:
            best = i
    return best


def generate(model, ns, prompt, n_new, cache=True, patch=None, reference=False):
    """Append ``n_new`` greedily chosen tokens to ``prompt`` (token ids); return all tokens.

    With ``cache=False`` every step reruns the whole prefix (the AdderBoard reference loop).
    A ``patch`` (see ``forward``) implies ``cache=False`` and the reference forward pass, so
    that each patch function sees the whole prefix, position 0 first, at every step.

    ``reference=True``, or a number system whose ``reference_order`` is set (float32), also runs
    the reference pass: the engine's carried sums round in another order, and an analysis of
    rounding (the tracer, the precision lab) must see the reference's. In exact arithmetic
    both give the same values.
    """
    compiled = compile_model(model, ns)
    tokens = list(prompt)
    if patch or reference or ns.reference_order:
        past, pending = KVCache(), tokens
        for _ in range(n_new):
            if patch or not cache:
                past, pending = KVCache(), tokens
            logits, past = forward(compiled, pending, past, patch=patch)
            tokens.append(compiled.readout_tokens[argmax(logits[-1])])
            pending = tokens[-1:]
        return tokens
    plan = engine.plan_model(model, ns)
    sequence, pending = engine.Sequence(plan), tokens
    for _ in range(n_new):
        if not cache:
            sequence, pending = engine.Sequence(plan), tokens
        logits = sequence.feed(pending)
        nxt = compiled.readout_tokens[argmax(logits)]
        tokens.append(nxt)
        pending = [nxt]
    return tokens
