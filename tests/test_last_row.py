"""``forward(..., logits="last", last_row=True)``: under a patch (the generic prover's), the
last block runs its attention and what follows for the last position only, and that row's
logits and every position's keys and values are those of the whole pass."""

from tinyadder import build
from tinyadder.addition import encode
from tinyadder.forward import forward
from tinyadder.numbers import FractionSystem
from tinyadder.plan import compile_model


def _run(model, tokens, last_row):
    """(logits, cache, the number of rows the last block's resid_mid held)."""
    compiled = compile_model(model, FractionSystem())
    seen = []
    last = f"blocks.{len(model.blocks) - 1}.hook_resid_mid"

    def count(rows):
        seen.append(len(rows))
        return rows

    logits, cache = forward(compiled, tokens, patch={last: count}, logits="last",
                            last_row=last_row)
    return logits, cache, seen


def test_the_last_row_alone_gives_the_whole_passs_logits_and_cache(published):
    tokens = encode(published, 7650676663, 149460439)
    whole, whole_cache, rows = _run(published, tokens, False)
    last, last_cache, row = _run(published, tokens, True)
    assert (rows, row) == ([len(tokens)], [1])
    assert last == whole and len(last) == 1
    assert [(m.keys, m.values) for m in last_cache.layers] == \
        [(m.keys, m.values) for m in whole_cache.layers]


def test_a_one_block_model_runs_one_row_after_its_attention():
    model = build("kswain98-2")
    tokens = encode(model, 1234567890, 9876543210)
    whole, _, rows = _run(model, tokens, False)
    last, _, row = _run(model, tokens, True)
    assert (rows, row) == ([len(tokens)], [1]) and last == whole
