"""tinyadder's own exports of every shipped model, after onnxscript's optimizer and after
onnxruntime's basic graph optimisation: ``python tools/export/optimise_own.py IN OUT``, IN a
folder of ``tinyadder export M --onnx`` files (NAME.onnx), OUT where NAME.onnxscript.onnx and
NAME.ort.onnx go. Run in the scratch environment (onnx, onnxscript, onnxruntime)."""

import sys
from pathlib import Path

import onnx
import onnxruntime as ort
import onnxscript.optimizer


def optimise(source, out):
    name = source.name[:-len(".onnx")]
    onnx.save(onnxscript.optimizer.optimize(onnx.load(str(source))),
              str(out / f"{name}.onnxscript.onnx"))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(out / f"{name}.ort.onnx")
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


if __name__ == "__main__":
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(source.glob("*.onnx")):
        try:
            optimise(f, out)
        except Exception as why:  # noqa: BLE001 - reported, the others still run
            print(f.name, "FAILED", type(why).__name__, str(why)[:200])
