"""An upstream entry's TorchScript graph at opset 16, before ONNX had LayerNormalization
(opset 17): torch writes each nn.LayerNorm as its decomposition, ReduceMean, Sub, Pow,
ReduceMean, Add eps, Sqrt, Div, Mul by the weight, Add the bias (what the import reads as a
LayerNorm that divides by the root, docs/onnx.md).

Run in the scratch environment of tools/export/upstream.py:
``python tools/export/decomposed.py NAME CHECKOUT OUT T``, NAME an entry of upstream.ENTRIES,
CHECKOUT its repository at that commit, T the length of its other graphs (its answers file's
"T"). Writes OUT/NAME.torchscript16.onnx; the entry's answers are those upstream.py recorded.
"""

import sys
from pathlib import Path

import onnx
import torch

from upstream import ENTRIES


if __name__ == "__main__":
    name, checkout, out, T = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    model, _ = ENTRIES[name][2](checkout)
    model.eval()
    f = out / f"{name}.torchscript16.onnx"
    torch.onnx.export(model, (torch.zeros(1, T, dtype=torch.long),), str(f),
                      input_names=["tokens"], output_names=["logits"], opset_version=16,
                      dynamo=False)
    onnx.checker.check_model(onnx.load(str(f)), full_check=True)
