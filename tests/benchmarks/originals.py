"""The AdderBoard originals' own per-addition programs, timed: the anchor of ``tinyadder bench
--only models``. Never a dependency: it runs in a scratch environment with torch, on a clone of
Kiguli/AdderBoard (nothing of theirs is copied here), and writes what it measures to
``originals.json`` beside it, which the bench reads where torch or the clone is absent.

    python tests/benchmarks/originals.py /path/to/AdderBoard [CPU seconds per model]

Each original runs its own ``add(model, a, b)`` (the interface of AdderBoard's verify.py) on
seeded random 10-digit pairs, one torch thread, for about the given CPU seconds
(``time.process_time``). Where an original needs more than torch (Apple's MLX) or another
interface, the file records why instead of a rate."""

import contextlib
import importlib.util
import io
import json
from pathlib import Path
import random
import sys
import time

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "originals.json"  # read by tinyadder.analysis.bench.originals
MODELS = HERE.parents[1] / "tinyadder" / "models" / "board"
# models whose file cites another repository, with their copy on AdderBoard's own
COPIES = {"kswain98-8": "submissions/hand_coded/kswain98_8p.py"}


def _module(path, name, cut=None):
    """The submission at ``path`` as a module (``cut``: its text up to that marker only)."""
    if cut is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    text = path.read_text()
    module = type(sys)(name)
    exec(compile(text[:text.index(cut)], str(path), "exec"), module.__dict__)  # noqa: S102
    return module


def _adder(path, name):
    """(add(a, b) -> int) of the submission at ``path``, through its own interface."""
    if name.startswith("cosminscn"):  # build_adder() and test(model, a, b) -> (ok, sum)
        module = _module(path, f"sub_{name}")
        model = module.build_adder()
        return lambda a, b: module.test(model, a, b, verbose=False)[1]
    if name == "jacobli99-93":  # its file ends in an unterminated string: read up to it
        module = _module(path, f"sub_{name}", cut="\n'''")
        model = module.Transformer(module.Config())
        return lambda a, b: int(module.generate(model, a, b))
    module = _module(path, f"sub_{name}")
    model, _ = module.build_model()
    return lambda a, b: module.add(model, a, b)


def measure(adderboard, budget=2.0):
    """{model name: {source, cases, cpu_seconds, additions_per_second, right} or {source,
    why}} of every board model whose source is a file of Kiguli/AdderBoard."""
    import torch
    torch.set_num_threads(1)
    out = {}
    for file in sorted(MODELS.glob("*.json")):
        about = json.loads(file.read_text())["about"]
        source, name = about.get("source", {}), file.stem
        if name in COPIES:
            source = {"repo": "Kiguli/AdderBoard", "path": COPIES[name]}
        if source.get("repo") != "Kiguli/AdderBoard":
            out[name] = {"source": source.get("repo"), "why": "not a file of Kiguli/AdderBoard"}
            continue
        path = Path(adderboard) / source["path"]
        entry = out[name] = {"source": f"{source['repo']}/{source['path']}"}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                add = _adder(path, name)
                add(1, 2)
                rng, cases, right = random.Random(2025), 0, 0
                start = time.process_time()
                while time.process_time() - start < budget:
                    a, b = rng.randint(0, 9_999_999_999), rng.randint(0, 9_999_999_999)
                    right += add(a, b) == a + b
                    cases += 1
                seconds = time.process_time() - start
        except Exception as e:  # an original that does not run here: say why
            entry["why"] = f"{type(e).__name__}: {e}"[:120]
            continue
        entry.update(cases=cases, cpu_seconds=round(seconds, 3),
                     additions_per_second=round(cases / seconds, 1), right=right)
    return out


if __name__ == "__main__":
    import platform
    rates = measure(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
    import torch
    RECORDED.write_text(json.dumps({
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "python": platform.python_version(), "torch": torch.__version__,
        "cpus": __import__("os").cpu_count(),
        "how": "tests/benchmarks/originals.py: each original's add(model, a, b), 1 torch "
               "thread, CPU time", "models": rates}, indent=1) + "\n")
    for name, entry in rates.items():
        print(f"{name:<16} " + (f"{entry['additions_per_second']:>8,.1f} add/s"
                                if "why" not in entry else entry["why"]))
