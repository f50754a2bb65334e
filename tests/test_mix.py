"""A block applied again and mixed with its first application (``mix``; Lokimorty-39):
x = first + gain (second - first), in the readable pass, the model file and the ledger."""

from dataclasses import replace

import pytest

from tinyadder import models
from tinyadder.addition import encode
from tinyadder.analysis import ledger
from tinyadder.forward import forward
from tinyadder.modelfile import ModelFileError, dump, loads
from tinyadder.numbers import number_system
from tinyadder.plan import compile_model
from tinyadder.weights import Mix, WeightError

A, B = 2395527356, 9334186774


def run(model, record=None):
    ns = number_system("float")
    logits, _ = forward(compile_model(model, ns), encode(model, A, B), record=record)
    return logits


def test_the_mix_is_first_plus_gain_times_the_difference():
    model = models.build("lokimorty-39")
    assert model.blocks[1] is model.blocks[0] and model.mix.first == 0
    seen = {}
    run(model, lambda name, value: seen.__setitem__(name, value))
    first, second = seen["blocks.0.hook_resid_post"], seen["blocks.1.hook_resid_post"]
    gain = float(model.mix.gain)
    assert seen["hook_mix"] == [[f + (s - f) * gain for f, s in zip(fr, sr)]
                                for fr, sr in zip(first, second)]
    assert seen["hook_mix"] != second and seen["hook_mix"] != first


def test_gain_zero_is_the_first_application_alone():
    model = models.build("lokimorty-39")
    once = replace(model, blocks=model.blocks[:1], mix=None,
                   roles={k: v for k, v in model.roles.items() if not k.startswith("blocks.1")})
    assert run(replace(model, mix=Mix(0, 0))) == run(once)
    assert run(model) != run(once)


def test_the_file_writes_the_repeat_and_the_mix():
    model = models.build("lokimorty-39")
    text = dump(model)
    assert '{"same_as": 0}' in text and '"mix": {"first": 0, "gain": "-13311/1073741824"}' in text
    again = loads(text)
    assert again.blocks[1] is again.blocks[0] and again.mix.gain == model.mix.gain


@pytest.mark.parametrize("edit, message", [
    ('"blocks": [{"same_as": 0}', "blocks.0.same_as: the first block is its own"),
    ('"mix": {"first": 0,', "mix.first = 1: a block before the last"),
])
def test_bad_repeat_or_mix_is_one_line(edit, message):
    text = dump(models.build("lokimorty-39"))
    if edit.startswith('"blocks"'):
        start = text.index('"blocks": [') + len('"blocks": [')
        text = text[:start] + '{"same_as": 0}, ' + text[start:]
    else:
        text = text.replace(edit, '"mix": {"first": 1,')
    with pytest.raises(ModelFileError) as why:
        loads(text)
    assert str(why.value).startswith(message)


def test_the_repeated_block_counts_nothing_more():
    lines = {line.tensor.name: line for line in ledger.ledger(models.build("lokimorty-39"))}
    again = lines["blocks.1.attn.W_Q"]
    assert (again.params, again.rule) == (0, "blocks.1 is blocks.0 applied again: counted "
                                             "there")
    assert lines["blocks.0.attn.W_Q"].params == 8 and lines["mix.gain"].params == 1


def test_mix_must_name_an_earlier_block():
    model = models.build("lokimorty-39")
    with pytest.raises(WeightError):
        replace(model, mix=Mix(1, 1))
