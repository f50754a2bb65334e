"""LayerNorm (a norm of kind 'layer'): the readable pass's ``forward.layer_norm`` against
torch's own float32 LayerNorm (its CPU kernel: Welford moments, w (.) + b fused) bit for bit,
its exact value against the formula, the model file and the program language, and the two
board entries that use it (yinglunz-512, jackcai1206-234) on a sample of their originals'
answers (tests/test_board.py replays them whole under -m slow)."""

from fractions import Fraction
import gzip
import json
from pathlib import Path
import struct

import pytest

from tinyadder import build
from tinyadder.addition import add
from tinyadder.analysis import board
from tinyadder.analysis.program import source
from tinyadder.compiler import ProgramError, compile_model
from tinyadder.forward import layer_norm
from tinyadder.modelfile import ModelFileError, dump, loads
from tinyadder.onnx.export import export
from tinyadder.numbers import number_system
from tinyadder.plan import Norm

FIXTURES = Path(__file__).parent / "fixtures" / "board"
ENTRIES = ["yinglunz-512", "jackcai1206-234"]

# torch 2.13.0+cpu on x86_64: torch.manual_seed(7); for d = 6, 7: X = randn(3, d) times
# (0.1, 3, 40) by row plus randn(3, 1) * 5, w = randn(d), b = randn(d), and
# y = F.layer_norm(X, (d,), w, b, 1e-5); {d: (w, b, [(x, y), ...])}, float32 bit patterns
TORCH = {
    6: ("bdba8361 3f79242d bf8ceec1 bf3f9917 3ffe404c be9491a7",
        "c01b0233 3e9541cf beed323a 3f980292 bea4e20b 3f9c3058",
        [("400d9708 40155ef1 401f2ae6 4010ba0c 40141bdf 4017d816",
          "c0131ab1 3eaa68fd c01cba2f 3fe3e9c1 bf303404 3f8a19af"),
         ("4017a852 c03af50e c052d774 c08cc035 c0c63c4c bfe44677",
          "c0262dfa 3e58a882 be5ed532 3fd55753 c03c44ac 3f8f4651"),
         ("c28e390b 42193f35 c2265833 c22c2c18 c1ba901c c13366af",
          "c01327b4 40074f27 3d823312 3fc9f525 be51a677 3f8cc2b8")]),
    7: ("bef6aa82 bff089e6 beddf27c be1065fe 3f01604a bc939955 be6b4a62",
        "bf60f797 3e9a826f bff9da49 bf8604e2 3f4ecf96 3c1cab76 bf12058a",
        [("406f87ec 4077f2aa 406ade40 4067d4bb 406f18e8 40791804 407573aa",
          "bf40f0f0 bfe652fb bfc117eb bf5529cc 3f240823 bc64c4f9 bf3bc211"),
         ("3e2a0680 c0ac5a46 c0670fb8 bfe439e0 bfe0182e c096c5e3 bf5ff2d0",
          "bfc92378 4045ff87 bfdb4b34 bf8d71e2 3f831e2c 3cf536d5 bf4659de"),
         ("4242abab c26bda96 c19e76f3 c1708bb6 424325a2 40c1d2ea 415225ce",
          "bfbeaa12 406447dd bfd61bcf bf79985f 3fb9a1ce 3c05a38d bf223c24")]),
}


def singles(bits, ns):
    """The float32 values of a line of bit patterns, as values of ns."""
    return [ns.const(Fraction(struct.unpack("<f", bytes.fromhex(b)[::-1])[0]))
            for b in bits.split()]


def compiled(ns, w, b, eps):
    """The compiled LayerNorm of weight w and bias b (values of ns), eps rounded by ns."""
    return Norm(ns.const(eps), tuple(w), len(w), None, True, True, tuple(b))


def rows(ns):
    """(x, torch's y, the norm) per row of TORCH, as values of ns."""
    for w, b, pairs in TORCH.values():
        norm = compiled(ns, singles(w, ns), singles(b, ns), Fraction(1, 100000))
        for x, y in pairs:
            yield singles(x, ns), singles(y, ns), norm


def test_float32_layer_norm_is_torchs_bit_for_bit():
    ns = number_system("float32")
    for x, want, norm in rows(ns):
        assert [v.hex() for v in layer_norm(x, norm, ns)] == [v.hex() for v in want]


def test_the_order_matters_in_float32():
    """A two-pass mean and variance with w (.) + b rounded twice miss torch's values on these
    rows (five of the six): the test above tells the orders apart."""
    ns = number_system("float32")
    missed = 0
    for x, want, norm in rows(ns):
        m = sum(x[1:], x[0]) / len(x)
        squares = [(u - m) * (u - m) for u in x]
        r = ns.one / ns.sqrt(sum(squares[1:], squares[0]) / len(x) + norm.eps)
        missed += [(u - m) * r * w + b for u, w, b in zip(x, norm.w, norm.b)] != want
    assert missed == 5


def test_exact_layer_norm_is_its_formula():
    """x = (0, 2, 4, 6): m = 3, v = 5; eps = 4 makes the root 3, so y = w (x - 3)/3 + b."""
    ns = number_system("fraction")
    w, b = [1, 2, 3, 4], [0, 1, 0, -1]
    norm = compiled(ns, [Fraction(v) for v in w], [Fraction(v) for v in b], 4)
    assert layer_norm([Fraction(v) for v in (0, 2, 4, 6)], norm, ns) == [
        -1, Fraction(1, 3), 1, 3]


LAYER = '"ln_final": {\n    "kind": "layer"'


def test_model_file_reads_and_writes_a_layer_norm():
    model = build("jackcai1206-234")
    text = dump(model)
    assert LAYER in text
    back = loads(text)
    assert back.ln_final.kind == "layer" and back.ln_final.b == model.ln_final.b
    assert len(back.ln_final.b) == 6 and dump(back) == text
    with pytest.raises(ModelFileError, match=r"^ln_final.b: an RMS norm has no bias"):
        loads(text.replace(LAYER, LAYER.replace("layer", "rms")))
    with pytest.raises(ModelFileError, match=r'^ln_final.kind: "batch"; use "rms", "layer"'):
        loads(text.replace(LAYER, LAYER.replace("layer", "batch")))


def test_the_language_writes_layer_and_refuses_a_bias_on_rms():
    text = source(build("jackcai1206-234"))
    assert "ln_final = layer(eps = f32(f64(1/100000)), w = (x0: " in text
    with pytest.raises(ProgramError, match=r"'b = \(x0: .*: rms takes eps, w, mean and "
                                           r"apply, once each"):
        compile_model(text.replace("ln1 = layer(", "ln1 = rms(", 1))


def test_the_onnx_export_writes_a_layer_norm_as_layer_normalization():
    """docs/onnx.md: one node per norm, its eps the float32 the model's float programs add."""
    nodes = [n for n in export(build("yinglunz-512")).graph.node
             if n.op_type == "LayerNormalization"]
    assert [(n.name, dict((a.name, a.value) for a in n.attribute)) for n in nodes] == [
        (f"{where}.hook_normalized", {"axis": -1, "epsilon": 9.999999747378752e-06,
                                      "stash_type": 11})
        for where in ("blocks.0.ln1", "blocks.0.ln2", "ln_final")]


def fixture(name):
    with gzip.open(FIXTURES / f"{name}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("name", ENTRIES)
def test_a_sample_gives_the_originals_answers(name):
    """The middle pair of AdderBoard's cases, the first two pairs of each suite the original
    got wrong and every answer of its that is not a number (jackcai1206-234 writes '=' among
    the digits of 7400652012 + 9506612997), in float32: the original's answers, right or
    wrong (every pair: tests/test_board.py, -m slow)."""
    suites = fixture(name)["suites"].values()
    wrong = [tuple(r) for s in suites for r in s["wrong"][:2]]
    wrong += [tuple(r) for s in suites for r in s["wrong"][2:] if isinstance(r[2], str)]
    a, b = board.suite_pairs("adderboard")[5005]
    want = [(a, b, {(x, y): got for x, y, got in wrong}.get((a, b), a + b))] + wrong
    model = build(name)
    assert [(a, b, add(model, number_system("float32"), a, b)) for a, b, _ in want] == want


@pytest.mark.slow
@pytest.mark.parametrize("name", ENTRIES)
def test_an_exact_run(name):
    """The real-number model adds the walkthrough's pair, every digit certified (the exact
    run of a pair each gets wrong is tests/test_board.py's witness test, by default)."""
    assert add(build(name), number_system("fraction"), 7650676663, 149460439) == \
        7650676663 + 149460439
