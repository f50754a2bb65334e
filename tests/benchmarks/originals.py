"""The AdderBoard originals' own per-addition programs, timed: the anchor of ``tinyadder bench
--only models``. Never a dependency: it runs in a scratch environment with torch, on a clone of
Kiguli/AdderBoard (nothing of theirs is copied here), and writes what it measures to
``originals.json`` beside it, which the bench reads where torch or the clone is absent.

    python tests/benchmarks/originals.py /path/to/AdderBoard [CPU seconds per model] \
        [NAME=/path/to/checkout ...] [--only=NAME,...]

Each original runs its own ``add(model, a, b)`` (the interface of AdderBoard's verify.py) on
seeded random 10-digit pairs, one torch thread, for about the given CPU seconds
(``time.process_time``; MLX, which has no thread setting, runs on the CPU device). Where an
original does not run here, the file records why instead of a rate. An original that is no
file of Kiguli/AdderBoard runs, given NAME=CHECKOUT (its own repository at the commit its
model file cites), through the interface its table names: AdderBoard's build_model() and
add(model, a, b) of a file of the checkout (``SUBMISSIONS``), a checkpoint of yinglunz's
TinyDecoderLM run as its src/eval.py runs it (``TINY_DECODERS``), or the ``add(a, b)`` its
converter (``tools/convert``, ``UPSTREAM``) hands to ``common.record``: the original's own
generation path, as the board fixture records it. ``--only=NAME,...`` measures those names
alone and keeps every other recorded entry (an MLX environment adds its own)."""

import contextlib
import importlib.util
import io
import json
import os
from pathlib import Path
import random
import sys
import time

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "originals.json"  # read by tinyadder.analysis.bench.originals
MODELS = HERE.parents[1] / "tinyadder" / "models" / "board"
# models run from a checkout of their own repository: the file of AdderBoard's interface
# (Kiguli/AdderBoard's kswain98_8p.py is the 2p program: the 8p is only in its own repository)
SUBMISSIONS = {"kswain98-2": "submission_2p.py", "kswain98-4": "submission_4p.py",
               "kswain98-8": "submission_8p.py",
               "evindor-57": "submission_57p/submission_57p.py",
               "evindor-67": "submission_67p/submission_67p.py",
               "vijec-52": "submission-52/submission_52p.py", "staghado-122": "submission.py"}
# ... the checkpoint of src.model's TinyDecoderLM (rezabyt's repository holds yinglunz's code)
TINY_DECODERS = {"yinglunz-456": "checkpoints/best_456p_s43.pt",
                 "rezabyt-311": "checkpoints/best_311p_s34.pt"}
# ... the converter whose add(a, b) times them
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
        return lambda a, b: int(module.generate(model, a, b)[::-1])  # least significant first
    module = _module(path, f"sub_{name}")
    if name.startswith("bingbangboom-lab"):  # a Qwen3_* class, set_weights, its batch generator
        import torch
        model = next(v for k, v in vars(module).items() if k.startswith("Qwen3_"))()
        module.set_weights(model)
        model.eval()
        cpu = torch.device("cpu")
        return lambda a, b: int(module._generate_output_batch(model, [(a, b)], cpu)[0][::-1])
    if not hasattr(module, "build_model"):  # the board's variant (its last), one pair batched
        model = module.build_magic_model(*getattr(module, "VARIANT_CHOICES", ())[-1:])
        return lambda a, b: int(module._generate_output_batch(model, [(a, b)])[0][::-1])
    model, _ = module.build_model()
    return lambda a, b: module.add(model, a, b)


def _tiny_decoder(checkout, checkpoint):
    """(add(a, b) -> int) of src.model's TinyDecoderLM from ``checkpoint`` of ``checkout``,
    as src/eval.py runs it: generate(preprocess(a, b), TARGET_LEN tokens), the answer
    postprocess(the tokens after the prompt)."""
    import torch
    from src.data import PROMPT_LEN, TARGET_LEN, postprocess, preprocess
    from src.model import ModelConfig, TinyDecoderLM
    blob = torch.load(Path(checkout) / checkpoint, map_location="cpu", weights_only=False)
    model = TinyDecoderLM(ModelConfig(**blob["model_config"]))
    model.load_state_dict(blob["model_state"])
    model.eval()

    def add(a, b):
        with torch.no_grad():
            out = model.generate(torch.tensor([preprocess(a, b)]), max_new_tokens=TARGET_LEN)
        return postprocess(out[0, PROMPT_LEN:].tolist())
    return add


@contextlib.contextmanager
def _beside(folder):
    """Imports from ``folder`` while inside; its modules forgotten after (two checkouts both
    hold a ``src`` package)."""
    folder = str(Path(folder).resolve())
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)
        for key, module in list(sys.modules.items()):
            if any(str(w).startswith(folder) for w in _where(module)):
                del sys.modules[key]


def _where(module):
    """The files and folders ``module`` was loaded from (a namespace package: its folders)."""
    spec = getattr(module, "__spec__", None)
    return [getattr(spec, "origin", None) or ""] + list(
        getattr(spec, "submodule_search_locations", None) or [])


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


def _original(name, path, checkout):
    """(build() -> add(a, b) -> int, the folder it imports from, how it runs) of the original
    ``name``: the file at ``path`` of Kiguli/AdderBoard, or its own repository's ``checkout``."""
    if name in SUBMISSIONS:
        file = Path(checkout) / SUBMISSIONS[name]
        return ((lambda: _adder(file, name)), file.parent,
                f"{SUBMISSIONS[name]}'s add(model, a, b)")
    if name in TINY_DECODERS:
        return ((lambda: _tiny_decoder(checkout, TINY_DECODERS[name])), checkout,
                "src.model's TinyDecoderLM.generate, as src/eval.py")
    if name in UPSTREAM:
        return ((lambda: _upstream_adder(name, checkout)), checkout,
                f"tools/convert/{UPSTREAM[name]}.py's add(a, b)")
    return (lambda: _adder(path, name)), path.parent, None


def _rate(add, budget):
    """{cases, cpu_seconds, additions_per_second, right} of ``add`` on seeded random pairs for
    about ``budget`` CPU seconds."""
    add(1, 2)
    rng, cases, right = random.Random(2025), 0, 0
    start = time.process_time()
    while time.process_time() - start < budget:
        a, b = rng.randint(0, 9_999_999_999), rng.randint(0, 9_999_999_999)
        right += add(a, b) == a + b
        cases += 1
    seconds = time.process_time() - start
    return dict(cases=cases, cpu_seconds=round(seconds, 3),
                additions_per_second=round(cases / seconds, 1), right=right)


def _framework():
    """The frameworks the originals ran on: torch's version, and MLX's where it was used."""
    import torch
    mlx = sys.modules.get("mlx.core")
    return f"torch {torch.__version__}" + (f", mlx {mlx.__version__} cpu" if mlx else "")


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
        if source.get("repo") != "Kiguli/AdderBoard" and name not in upstream:
            out[name] = {"source": source.get("repo"), "why": "not a file of Kiguli/AdderBoard"
                         + (" (run it with NAME=CHECKOUT)" if name in SUBMISSIONS
                            or name in TINY_DECODERS or name in UPSTREAM else "")}
            continue
        entry = out[name] = {"source": f"{source['repo']}/{source['path']}"}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                build, folder, via = _original(name, Path(adderboard) / source["path"],
                                               upstream.get(name))
                with _beside(folder):
                    if via:
                        entry["via"] = via
                    entry.update(_rate(build(), budget))
                    entry.update(framework=_framework(),
                                 load_average=round(os.getloadavg()[0], 1))
        except Exception as e:  # an original that does not run here: say why
            entry["why"] = f"{type(e).__name__}: {e}"[:120]
    return out


def record(rates, merge):
    """Write ``rates`` to originals.json; with ``merge``, over the entries recorded there."""
    import platform
    import torch
    models = json.loads(RECORDED.read_text())["models"] if merge else {}
    RECORDED.write_text(json.dumps({
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "python": platform.python_version(), "torch": torch.__version__,
        "cpus": os.cpu_count(),
        "how": "tests/benchmarks/originals.py: each original's own add, 1 torch thread "
               "(MLX: its CPU device, reference BLAS), CPU time",
        "models": dict(sorted({**models, **rates}.items()))}, indent=1) + "\n")


if __name__ == "__main__":
    only = next((arg.split("=", 1)[1].split(",") for arg in sys.argv[2:]
                 if arg.startswith("--only=")), None)
    given = [arg for arg in sys.argv[2:] if "=" not in arg]
    rates = measure(sys.argv[1], float(given[0]) if given else 2.0,
                    dict(arg.split("=", 1) for arg in sys.argv[2:]
                         if "=" in arg and not arg.startswith("--")), only)
    record(rates, merge=only is not None)
    for name, entry in rates.items():
        print(f"{name:<16} " + (f"{entry['additions_per_second']:>8,.1f} add/s"
                                f" {entry['right']}/{entry['cases']} right"
                                if "why" not in entry else entry["why"]))
