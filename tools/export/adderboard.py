"""Export AdderBoard submissions with torch.onnx.export, and record their own answers.

Run in a scratch environment with torch, onnx, onnxruntime and onnxscript (never imported by
tinyadder): ``python tools/export/adderboard.py MIRROR OUT``, MIRROR a checkout of
Kiguli/AdderBoard (its submission files are loaded from there at run time, by path; nothing of
them is copied here), OUT the fixture folder (tests/fixtures/onnx). For each entry of
``ENTRIES`` it writes, in OUT:

- ``NAME.torchscript.onnx`` and ``NAME.dynamo.onnx``: the forward pass at the fixed length T
  of ``ENTRIES`` (the prompt and every written token but the last), by the TorchScript exporter
  (``dynamo=False``) and by ``dynamo=True`` (which runs onnxscript's optimizer itself);
- ``NAME.torchscript.onnxscript.onnx`` and ``NAME.torchscript.ort.onnx``: the TorchScript
  graph after ``onnxscript.optimizer.optimize`` and after onnxruntime's basic graph
  optimisation (ORT_ENABLE_BASIC, written with ``optimized_model_filepath``);
- ``NAME.answers.json``: the submission's own ``add(model, a, b)`` on the pairs of
  ``pairs()`` (AdderBoard's edge cases, seeded pairs and near-carry pairs), and the argmax of
  onnxruntime's logits for each graph on the first few, which must equal the submission's.
"""

import importlib.util
import json
import random
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import onnxscript.optimizer
import torch



# the Kiguli/AdderBoard commit the fixtures in tests/fixtures/onnx were made from
SOURCE_COMMIT = "e5167440c8e9d0ba167f54e0882bc525f8d06a84"

# name: the submission's path in the mirror
ENTRIES = {
    "fblissjr-33": "submissions/hand_coded/fblissjr_33p.py",
    "kswain98-8": "submissions/hand_coded/kswain98_8p.py",
    "yieldthought-20": "submissions/hand_coded/yieldthought_20p.py",
    "alexlitz-36": "submissions/hand_coded/alexlitz_36p.py",
    "lichengliu03-50": "submissions/hand_coded/lichengliu03_50p.py",
    "cosminscn-66": "submissions/hand_coded/cosminscn_66p.py",
    "cosminscn-130": "submissions/hand_coded/cosminscn_130p.py",
    "bingbangboom-lab-87": "submissions/hand_coded/bingbangboom-lab_87p.py",
    "bingbangboom-lab-148": "submissions/hand_coded/bingbangboom-lab_148p.py",
    "prasannakotyal-116": "submissions/hand_coded/prasannakotyal_116p.py",
    "lokimorty-10": "submissions/hand_coded/Lokimorty_10p.py",
    "lokimorty-12": "submissions/hand_coded/Lokimorty_12p.py",
    "lokimorty-39": "submissions/trained/Lokimorty_39p.py",
    "dimopep-140": "submissions/trained/dimopep_140p.py",
    "wonderfall-27": "submissions/hand_coded/Wonderfall_27p.py",
    "zcbtrak-6": "submissions/hand_coded/zcbtrak_6p.py",
    "jacobli99-28": "submissions/hand_coded/SeuperHakkerJa_28p.py",
    "evindor-57": "submissions/trained/evindor_57p.py",
    "evindor-67": "submissions/trained/evindor_67p.py",
    "vijec-52": "submissions/trained/vijec_52p.py",
    "jacobli99-93": "submissions/hand_coded/SeuperHakkerJa_93p.py",
}


def _jacobli99_93(module):
    """SeuperHakkerJa_93p.py has no build_model or add: its own Transformer(Config()) and its
    own generate(model, a, b), whose 11 digits are the sum's, least significant first."""
    model = module.Transformer(module.Config())
    return model, lambda m, a, b: int(module.generate(m, a, b)[::-1])


def _bingbangboom_87(module):
    """bingbangboom-lab_87p.py has no build_model or add: its Qwen3_71Params with its own
    set_weights, and its own _generate_output_batch on one pair (the sum's digits, least
    significant first), as tools/convert/bingbangboom_87.py records it."""
    model = module.Qwen3_71Params()
    module.set_weights(model)
    cpu = torch.device("cpu")
    return model, lambda m, a, b: int(module._generate_output_batch(m, [(a, b)], cpu)[0][::-1])


class Wrapper(torch.nn.Module):
    """A submission's forward as the submission defines it, as an nn.Module: ``inner``'s
    forward (an object of the submission's own class), its output ``pick`` (None: as it is;
    0: the first of a tuple)."""

    def __init__(self, inner, pick=None):
        super().__init__()
        self.inner, self.pick = inner, pick

    def forward(self, tokens):
        out = self.inner.forward(tokens)
        return out if self.pick is None else out[self.pick]


def _alexlitz_36(module):
    """build_model gives a TinyAdder of its own (no nn.Module): its forward, which returns
    token ids (the argmin of its errors), wrapped; its own add."""
    inner, _ = module.build_model()
    return Wrapper(inner), module.add


def _cosminscn(module):
    """No build_model or add: build_adder's GPT, whose forward returns (the last position's
    logits, None), wrapped to the logits; its own test()'s loop as add (digits and 0 for '+'
    and '=', the sum's 11 digits least significant first)."""
    model = Wrapper(module.build_adder(), pick=0)
    return model, lambda m, a, b: module.test(_AsTheirs(m), a, b, verbose=False)[1]


class _AsTheirs:
    """The wrapped model as test() calls it: eval(), and (logits, None) of a call."""

    def __init__(self, model):
        self.model = model

    def eval(self):
        return self.model.eval()

    def __call__(self, tokens):
        return self.model(tokens), None


# entries without AdderBoard's build_model and add: (model, add) from their own functions
ADAPTERS = {"jacobli99-93": _jacobli99_93, "bingbangboom-lab-87": _bingbangboom_87,
            "alexlitz-36": _alexlitz_36, "cosminscn-66": _cosminscn, "cosminscn-130": _cosminscn}


def recorded_calls(add, model, a, b):
    """The submission's own ``add(model, a, b)`` and the arguments of each forward call it
    made (the submission's encoding, as it feeds its model): ``forward`` is wrapped on the
    instance, so that a ``generate`` calling ``self.forward`` directly is recorded too."""
    calls = []
    forward = model.forward
    model.forward = lambda *args, **kwargs: calls.append(args) or forward(*args, **kwargs)
    try:
        with torch.no_grad():
            total = int(add(model, a, b))
    finally:
        del model.forward
    return total, calls


def pairs(seed=2026, count=200):
    """AdderBoard's edge cases, seeded pairs, and pairs one unit either side of a carry."""
    edge = [(0, 0), (0, 1), (9999999999, 0), (9999999999, 1), (9999999999, 9999999999),
            (5000000000, 5000000000), (1111111111, 8888888889), (1234567890, 9876543210),
            (9999999999, 9999999999 - 1), (1, 9999999999)]
    rng = random.Random(seed)
    out = list(edge)
    while len(out) < count:
        a = rng.randrange(10 ** 10)
        k = rng.randrange(1, 11)
        b = (10 ** k - a % 10 ** k + rng.choice((-1, 0, 1))) % 10 ** 10
        out.append((a, b))
        out.append((rng.randrange(10 ** 10), rng.randrange(10 ** 10)))
    return out[:count]


# files that end in an unterminated ''' holding a transcript of their runs (not code):
# the source before it is executed
TRANSCRIPT_FROM = {"submissions/hand_coded/SeuperHakkerJa_93p.py": "\n'''"}


def load(mirror, path):
    spec = importlib.util.spec_from_file_location("submission", Path(mirror) / path)
    module = importlib.util.module_from_spec(spec)
    if path in TRANSCRIPT_FROM:
        source = (Path(mirror) / path).read_text()
        source = source[:source.rindex(TRANSCRIPT_FROM[path])]
        exec(compile(source, str(Path(mirror) / path), "exec"), module.__dict__)
        return module
    spec.loader.exec_module(module)
    return module


def _without_their_source(graph):
    """The graph less the dynamo exporter's stack traces: they quote the submission's source
    lines, and nothing of a submission's code is committed, only what it computes."""
    for node in list(graph.graph.node) + [n for f in graph.functions for n in f.node]:
        keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    return graph


def export_one(mirror, out, name, path):
    module = load(mirror, path)
    if name in ADAPTERS:
        model, add = ADAPTERS[name](module)
    else:
        (model, _), add = module.build_model(), module.add
    source = {"repo": "Kiguli/AdderBoard", "path": path, "commit": SOURCE_COMMIT}
    export_model(out, name, model, add, source)


def export_model(out, name, model, add, source):
    """The four graphs of ``model`` and its own answers by ``add(model, a, b)``, in ``out``;
    ``source`` (repo, path, commit) is recorded with the answers."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{name}: build_model gives a {type(model).__name__}, not an nn.Module "
                         f"torch.onnx.export takes")
    model.eval()
    _, calls = recorded_calls(add, model, 1234567890, 9876543210)
    example = tuple(torch.tensor(x.tolist(), dtype=x.dtype) for x in calls[-1])  # plain tensors
    if len(example) != 1 or example[0].dtype != torch.long or example[0].dim() != 2:
        raise TypeError(f"{name}: forward takes {[(a.dtype, tuple(a.shape)) for a in example]}")
    T, prompt = example[0].shape[1], calls[0][0].shape[1]
    files = {}
    failed = {}  # exporter: why it wrote no graph (the exporter's own refusal)
    for exporter, dynamo in (("torchscript", False), ("dynamo", True)):
        f = out / f"{name}.{exporter}.onnx"
        kwargs = dict(dynamo=True, optimize=True) if dynamo else dict(dynamo=False)
        try:
            torch.onnx.export(model, example, str(f), input_names=["tokens"],
                              output_names=["logits"], opset_version=18, **kwargs)
        except Exception as why:
            failed[exporter] = str(why).split("## Exception summary")[-1].strip()[:300]
            continue
        # the dynamo exporter writes weights as external data: keep them in the file
        onnx.save(_without_their_source(onnx.load(str(f))), str(f), save_as_external_data=False)
        Path(f"{f}.data").unlink(missing_ok=True)
        files[exporter] = f
    if "torchscript" in files:  # the optimisers' forms are of the TorchScript graph
        raw = onnx.load(str(files["torchscript"]))
        f = out / f"{name}.torchscript.onnxscript.onnx"
        onnx.save(onnxscript.optimizer.optimize(raw), str(f))
        files["onnxscript"] = f
        f = out / f"{name}.torchscript.ort.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(f)
        ort.InferenceSession(str(files["torchscript"]), options,
                             providers=["CPUExecutionProvider"])
        files["ort"] = f
    for f in files.values():
        onnx.checker.check_model(onnx.load(str(f)), full_check=True)
    answers, sequences = [], []
    for a, b in pairs():
        total, calls = recorded_calls(add, model, a, b)
        answers.append([a, b, total])
        sequences.append(calls[-1][0][0].tolist())
    agree = {}  # graphs whose argmax is torch's at every position they output
    for key, f in files.items():
        session = ort.InferenceSession(str(f), providers=["CPUExecutionProvider"])
        count = 0
        for seq in sequences[:20]:
            logits = session.run(None, {"tokens": np.array([seq], dtype=np.int64)})[0]
            with torch.no_grad():
                theirs = model(torch.tensor([seq])).numpy()
            count += logits.argmax(axis=-1).tolist() == theirs.argmax(axis=-1).tolist()
        agree[key] = count
    record = {"entry": name, "source": source,
              "T": T, "prompt_length": prompt, "torch": torch.__version__,
              "onnx": onnx.__version__, "onnxruntime": ort.__version__,
              "onnxscript": onnxscript.__version__,
              "onnxruntime_gives_torchs_argmax_on_the_first_20": agree,
              "export_failed": failed, "answers": answers,
              "tokens_of_the_first_3": sequences[:3]}
    (out / f"{name}.answers.json").write_text(json.dumps(record, separators=(",", ":")))
    print(name, T, prompt, agree, sum(s == a + b for a, b, s in answers), "of", len(answers),
          flush=True)


def export_all(mirror, out, only=()):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, path in ENTRIES.items():
        if only and name not in only:
            continue
        try:
            export_one(mirror, out, name, path)
        except Exception as why:  # one entry's failure is reported, the others still run
            print(name, "FAILED", type(why).__name__, str(why)[:300], flush=True)


if __name__ == "__main__":
    export_all(sys.argv[1], sys.argv[2], sys.argv[3:])
