"""Greedy decoding, outside the forward pass: each new position is run once (KV cache)."""

from .forward import KVCache, compile_model, forward


def argmax(logits):
    """Index of the largest logit; the first one on a tie (as torch.argmax)."""
    best = 0
    for i in range(1, len(logits)):
        if logits[i] > logits[best]:
            best = i
    return best


def generate(model, ns, prompt, n_new, cache=True, patch=None):
    """Append ``n_new`` greedily chosen tokens to ``prompt`` (token ids); return all tokens.

    With ``cache=False`` every step reruns the whole prefix (the AdderBoard reference loop).
    A ``patch`` (see ``forward``) implies ``cache=False``, so that each patch function sees
    the whole prefix, position 0 first, at every step.
    """
    compiled = compile_model(model, ns)
    cache = cache and not patch
    tokens = list(prompt)
    past = KVCache()
    pending = tokens
    for _ in range(n_new):
        if not cache:
            past, pending = KVCache(), tokens
        logits, past = forward(compiled, pending, past, patch=patch)
        nxt = compiled.readout_tokens[argmax(logits[-1])]
        tokens.append(nxt)
        pending = [nxt]
    return tokens
