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

# name: (submission path in the mirror, the prompt's length P, how a pair becomes tokens)
ENTRIES = {
    "fblissjr-33": ("submissions/hand_coded/fblissjr_33p.py", 22, "lsb_sep10"),
}
ANSWER = 11  # digits of the sum


def encode(kind, a, b):
    da = [(a // 10 ** i) % 10 for i in range(10)]
    db = [(b // 10 ** i) % 10 for i in range(10)]
    if kind == "lsb_sep10":
        return da + [10] + db + [10]
    raise ValueError(kind)


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


def load(mirror, path):
    spec = importlib.util.spec_from_file_location("submission", Path(mirror) / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tokens_of(module, model, kind, a, b):
    """The prompt and the submission's own answer tokens but the last."""
    seq = encode(kind, a, b)
    with torch.no_grad():
        for _ in range(ANSWER - 1):
            logits = model(torch.tensor([seq]))
            seq.append(int(logits[0, -1].argmax()))
    return seq


def export_all(mirror, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (path, prompt, kind) in ENTRIES.items():
        module = load(mirror, path)
        model, _ = module.build_model()
        model.eval()
        T = prompt + ANSWER - 1
        example = torch.tensor([tokens_of(module, model, kind, 1234567890, 9876543210)])
        assert example.shape == (1, T)
        files = {}
        for exporter, dynamo in (("torchscript", False), ("dynamo", True)):
            f = out / f"{name}.{exporter}.onnx"
            kwargs = dict(dynamo=True, optimize=True) if dynamo else dict(dynamo=False)
            torch.onnx.export(model, (example,), str(f), input_names=["tokens"],
                              output_names=["logits"], opset_version=18, **kwargs)
            # the dynamo exporter writes weights as external data: keep them in the file
            onnx.save(onnx.load(str(f)), str(f), save_as_external_data=False)
            Path(f"{f}.data").unlink(missing_ok=True)
            files[exporter] = f
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
        answers = [[a, b, int(module.add(model, a, b))] for a, b in pairs()]
        agree = {}
        for key, f in files.items():
            session = ort.InferenceSession(str(f), providers=["CPUExecutionProvider"])
            count = 0
            for a, b, _ in answers[:20]:
                seq = tokens_of(module, model, kind, a, b)
                logits = session.run(None, {"tokens": np.array([seq], dtype=np.int64)})[0]
                mine = logits[0, prompt - 1:].argmax(axis=1).tolist()
                count += mine == seq[prompt:] + [mine[-1]]
            agree[key] = count
        record = {"entry": name, "source": {"repo": "Kiguli/AdderBoard", "path": path},
                  "T": T, "torch": torch.__version__, "onnx": onnx.__version__,
                  "onnxruntime": ort.__version__, "onnxscript": onnxscript.__version__,
                  "onnxruntime_agrees_on_the_first_20": agree, "answers": answers}
        (out / f"{name}.answers.json").write_text(json.dumps(record, separators=(",", ":")))
        print(name, T, agree, sum(s == a + b for a, b, s in answers), "of", len(answers))


if __name__ == "__main__":
    export_all(sys.argv[1], sys.argv[2])
