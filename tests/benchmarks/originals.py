"""The AdderBoard originals' own per-addition programs, timed: the anchor of ``tinyadder bench
--only models``. Never a dependency: it runs in a scratch environment with torch, on a clone of
Kiguli/AdderBoard (nothing of theirs is copied here), and writes what it measures to
``originals.json`` beside it, which the bench reads where torch or the clone is absent.

    python tests/benchmarks/originals.py /path/to/AdderBoard [CPU seconds per model] \
        [NAME=/path/to/checkout ...]

Each original runs its own ``add(model, a, b)`` (the interface of AdderBoard's verify.py) on
seeded random 10-digit pairs, one torch thread, for about the given CPU seconds
(``time.process_time``). Where an original needs more than torch (Apple's MLX) or another
interface, the file records why instead of a rate. An original that is no file of
Kiguli/AdderBoard (a trained checkpoint in its own repository) runs, given NAME=CHECKOUT (its
repository at the commit its model file cites), through the ``add(a, b)`` its converter
(``tools/convert``, ``UPSTREAM``) hands to ``common.record``: the original's own generation
path, as the board fixture records it."""

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
# models timed through their converter's add(a, b), from a checkout of their own repository
UPSTREAM = {"yinglunz-512": "yinglunz_512", "jackcai1206-234": "jackcai_234"}
CONVERT = HERE.parents[1] / "tools" / "convert"


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
    if name.startswith("bingbangboom-lab"):  # a Qwen3_* class, set_weights, its batch generator
        import torch
        model = next(v for k, v in vars(module).items() if k.startswith("Qwen3_"))()
        module.set_weights(model)
        model.eval()
        cpu = torch.device("cpu")
        return lambda a, b: int(module._generate_output_batch(model, [(a, b)], cpu)[0][::-1])
    model, _ = module.build_model()
    return lambda a, b: module.add(model, a, b)


def _upstream_adder(name, checkout):
    """(add(a, b) -> int) of the original ``name`` as its converter runs it (``UPSTREAM``):
    the add it hands to ``common.record``, caught before anything is recorded."""
    sys.path.insert(0, str(CONVERT))
    import common
    caught = {}

    def catch(_name, _source, add, *args, **kwargs):
        caught["add"] = add
    common.record = catch  # before the converter's ``from common import record``
    converter = importlib.import_module(UPSTREAM[name])
    converter.main(checkout, "fixture")
    return caught["add"]


def measure(adderboard, budget=2.0, upstream=None, only=None):
    """{model name: {source, cases, cpu_seconds, additions_per_second, right} or {source,
    why}} of every board model whose source is a file of Kiguli/AdderBoard, and of those in
    ``upstream`` ({name: checkout of its own repository}); ``only``: of those names alone."""
    import torch
    torch.set_num_threads(1)
    out, upstream = {}, upstream or {}
    for file in sorted(MODELS.glob("*.json")):
        about = json.loads(file.read_text())["about"]
        source, name = about.get("source", {}), file.stem
        if only is not None and name not in only:
            continue
        if name in COPIES:
            source = {"repo": "Kiguli/AdderBoard", "path": COPIES[name]}
        if source.get("repo") != "Kiguli/AdderBoard" and name not in upstream:
            out[name] = {"source": source.get("repo"), "why": "not a file of Kiguli/AdderBoard"}
            continue
        entry = out[name] = {"source": f"{source['repo']}/{source['path']}"}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                if name in upstream:
                    add = _upstream_adder(name, upstream[name])
                    entry["via"] = f"tools/convert/{UPSTREAM[name]}.py's add(a, b)"
                else:
                    add = _adder(Path(adderboard) / source["path"], name)
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
    given = [arg for arg in sys.argv[2:] if "=" not in arg]
    rates = measure(sys.argv[1], float(given[0]) if given else 2.0,
                    dict(arg.split("=", 1) for arg in sys.argv[2:] if "=" in arg))
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
