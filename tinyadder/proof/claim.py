"""What every verdict is about: the model adds a + b, the whole sum.

Two N-digit numbers add to at most 2·10^N − 2, which has N + 1 digits, places 0..N. A model
whose answer writes A digits (``prompt.answer_digits``) writes places 0..A − 1; for A ≤ N it
never writes place N, so every pair with a + b ≥ 10^A is added wrong, the first of them
(10^N − 1) + 1 = 10^N. "Proved" and "every pair is added right" are claims about the whole
sum: the prover, the checkers and the census read the places through this module."""


def unwritten(model):
    """The places of the sum that the model's answer does not write: N − A + 1 of them from
    place A up, or none when A ≥ N + 1 (places above N are the digit 0)."""
    p = model.prompt
    return range(p.answer_digits, p.digits + 1)


def short_answer(model):
    """None when the answer writes every place of the sum, else the line that says which
    places it leaves out."""
    p = model.prompt
    if not unwritten(model):
        return None
    return (f"the answer writes {p.answer_digits} digits (places 0..{p.answer_digits - 1}), "
            f"but a sum of two {p.digits}-digit numbers has {p.digits + 1} (place {p.digits} "
            f"is never written)")


def witness(model):
    """A pair whose sum the model cannot write when its answer is short: (10^N − 1) + 1 =
    10^N, whose digit at place N is 1."""
    return 10 ** model.prompt.digits - 1, 1
