"""``python -m tinyadder bench``: the speed figures of docs/speed.md, measured side by side.

Every figure is CPU time (``time.process_time``) on this machine, and a rate's figure is the
min / median / max over repeats. The parts:

- ``rates``: additions per second through the API (``addition.run``, the KV cache on) on the
  first K cases of AdderBoard's list, per number system. When ``torch`` is importable (never a
  dependency), the PyTorch float64 models of ``tests/benchmarks/torch_models.py`` (loaded by
  its path, from a clone of the repository: ``references``) run the first cases right before
  every repeat, so each ratio is of two rates measured side by side;
- ``same_tokens``: the fraction system's tokens decided over scaled integers (the decoding
  path) and over intervals (``numbers.enclosures``) on the same cases;
- ``model_rates``: every shipped model's rates, exact and in each float dtype, against its
  original's own program (``originals``: rates recorded by ``tests/benchmarks/originals.py``);
- ``long_addition``: one seeded random N-digit addition;
- ``per_digit_factor``: how fast the census's counting grows with N;
- the command line times census, prove, verify and the command itself (``cli.bench``).
"""

import importlib.util
import json
import math
from pathlib import Path
import statistics
import time
from typing import Dict, List, NamedTuple

from ..addition import encode, run
from ..cases import random_pairs, verify_cases
from ..models import build
from ..generate import decode
from ..numbers import Undecided, for_model, number_system

SYSTEMS = ("fraction", "decimal", "float", "float32")
# cases per repeat: about a quarter of a second each on this project's 2-core machine
CASES = {"fraction": 600, "decimal": 800, "float": 2000, "float32": 1000}
TORCH_CASES = 20  # each PyTorch model's cases per repeat
TARGETS = {"fraction": 10, "decimal": 30, "float": 60, "float32": 20}  # x PyTorch, issue 23
BENCHMARKS = Path(__file__).resolve().parents[2] / "tests" / "benchmarks"
MODELS = BENCHMARKS / "torch_models.py"
ORIGINALS = BENCHMARKS / "originals.json"
# cases per model and system in ``model_rates``, and the targets (x the original)
MODEL_CASES = {"fraction": 60, "float": 200, "float32": 200}
MODEL_TARGETS = {"fraction": 10, "dtype": 30}
REFERENCES = {"torch A": "published", "torch B": "from_weights"}


def cpu_seconds(work):
    """(CPU seconds of work(), its result)."""
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def per_digit_factor(sizes, seconds):
    """The factor by which ``seconds`` grow per unit of ``sizes``: exp of the least-squares
    slope of log(seconds) against the size (None with fewer than two sizes, or a time of 0).

    >>> round(per_digit_factor([8, 9, 10], [0.5, 2.0, 8.0]), 9)
    4.0
    """
    if len(sizes) < 2 or min(seconds) <= 0:
        return None
    logs = [math.log(t) for t in seconds]
    mean_n, mean_log = statistics.fmean(sizes), statistics.fmean(logs)
    slope = (sum((n - mean_n) * (y - mean_log) for n, y in zip(sizes, logs))
             / sum((n - mean_n) ** 2 for n in sizes))
    return math.exp(slope)


def spread(values):
    """(min, median, max)."""
    return min(values), statistics.median(values), max(values)


def references(model):
    """({name: generate(prompt, n_new)} of the PyTorch models, or {} and why not."""
    if importlib.util.find_spec("torch") is None:
        return {}, "torch is not importable (it is never a dependency)"
    if not MODELS.is_file():
        return {}, f"{MODELS.name} is not here (it lives in a clone of the repository)"
    spec = importlib.util.spec_from_file_location("tinyadder_bench_torch_models", MODELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = {"published": module.published, "from_weights": lambda: module.from_weights(model)}
    return {name: built[maker]() for name, maker in REFERENCES.items()}, None


def reference_rate(model, generate, cases):
    """CPU additions per second of a PyTorch model on ``cases``, and how many it got wrong."""
    digits = model.prompt.digits

    def work():
        wrong = 0
        for a, b in cases:
            tokens = generate(encode(model, a, b), digits + 1)
            wrong += int("".join(model.vocab[t] for t in tokens[-digits - 1:])) != a + b
        return wrong
    seconds, wrong = cpu_seconds(work)
    return len(cases) / max(seconds, 1e-9), wrong


def api_rate(model, ns, cases):
    """CPU additions per second of ``addition.run`` on ``cases``, and how many are wrong."""
    def work():
        return sum(int(run(model, ns, a, b).split("=")[1]) != a + b for a, b in cases)
    seconds, wrong = cpu_seconds(work)
    return len(cases) / max(seconds, 1e-9), wrong


class Rates(NamedTuple):
    """One number system's rates over the repeats, and per PyTorch model the ratios of the
    rate to that model's, each measured right before (``ratios[name][r]``)."""

    spec: str
    cases: int
    rates: List[float]
    wrong: int
    ratios: Dict[str, List[float]]
    reference: Dict[str, List[float]]


def rates(model, spec, cases, repeats, models, reference_cases):
    """``Rates`` of number system ``spec`` on ``cases``, each repeat after one run of every
    PyTorch model of ``models`` on ``reference_cases``."""
    ns = number_system(spec)
    run(model, ns, 0, 0)  # compile and plan outside the timing
    out = Rates(spec, len(cases), [], 0, {name: [] for name in models},
                {name: [] for name in models})
    wrong = 0
    for _ in range(repeats):
        before = {name: reference_rate(model, g, reference_cases)[0]
                  for name, g in models.items()}
        rate, bad = api_rate(model, ns, cases)
        out.rates.append(rate)
        wrong = max(wrong, bad)
        for name, reference in before.items():
            out.ratios[name].append(rate / reference)
            out.reference[name].append(reference)
    return out._replace(wrong=wrong)


def originals(clone=None):
    """({model name: its original's additions per second}, where they come from; or {} and
    why not). With
    ``clone`` (a checkout of Kiguli/AdderBoard) and torch importable, each original's own
    ``add(model, a, b)`` runs now, side by side with the bench (``tests/benchmarks/
    originals.py``, about a CPU second each); else the rates that script recorded last
    (``originals.json``)."""
    if clone is not None and importlib.util.find_spec("torch") is not None:
        spec = importlib.util.spec_from_file_location("tinyadder_bench_originals",
                                                      BENCHMARKS / "originals.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        measured = module.measure(clone, budget=1.0)
        return ({name: e["additions_per_second"] for name, e in measured.items()
                 if "additions_per_second" in e}, "run now (1 torch thread, CPU time)")
    if not ORIGINALS.is_file():
        return {}, f"{ORIGINALS.name} is not here (it lives in a clone of the repository)"
    recorded = json.loads(ORIGINALS.read_text())
    rates = {name: entry["additions_per_second"] for name, entry in recorded["models"].items()
             if "additions_per_second" in entry}
    # the MLX originals ran beside torch in another environment: name every framework used
    used = ", ".join(sorted({part for e in recorded["models"].values()
                             for part in e.get("framework", "").split(", ") if part}
                            or {f"torch {recorded['torch']}"}, reverse=True))
    return rates, (f"recorded {recorded['measured']} by tests/benchmarks/originals.py\n"
                   f"  ({used}; 1 thread, CPU time), not run now")


class ModelRates(NamedTuple):
    """One model's additions per second (CPU) per number system, and the sums it got wrong."""

    name: str
    dtype: str
    rates: Dict[str, float]
    wrong: Dict[str, int]


def model_rates(name, scale=1.0, systems=("fraction", "float", "float32")):
    """``ModelRates`` of the shipped model ``name`` through the API (``addition.run``) on the
    first AdderBoard cases (``MODEL_CASES`` times ``scale``), after one addition that
    compiles it."""
    model = build(name)
    dtype = "float32" if model.about.get("dtype") == "float32" else "float"
    listed, rates_, wrong = verify_cases(), {}, {}
    for spec in systems:
        ns = number_system(spec)
        run(model, ns, 0, 0)
        k = max(1, round(MODEL_CASES[spec] * scale))
        rates_[spec], wrong[spec] = api_rate(model, ns, listed[:k])
    return ModelRates(name, dtype, rates_, wrong)


def interval_tokens(model, ns, prompt, n_new):
    """The tokens of the fraction system ``ns`` decided over its decider as it is
    (``numbers.enclosures`` intervals or balls), refined as ``generate.decode`` refines."""
    while True:
        try:
            return decode(model, ns.decider(), prompt, n_new)[0]
        except Undecided:
            ns = ns.refined()


def same_tokens(model, pairs):
    """The pairs whose tokens differ between the decoding path (scaled integers) and
    ``interval_tokens``; [] when all agree."""
    ns = for_model(number_system("fraction"), model)
    n_new = model.prompt.answer_digits
    differ = []
    for a, b in pairs:
        prompt = encode(model, a, b)
        if decode(model, ns, prompt, n_new)[0] != interval_tokens(model, ns, prompt, n_new):
            differ.append((a, b))
    return differ


def long_addition(variant, digits, spec):
    """(CPU seconds, right?) of one seeded random ``digits``-digit addition in ``spec``."""
    model = build(variant, digits)
    (a, b), = random_pairs(1, digits=digits)
    seconds, text = cpu_seconds(lambda: run(model, number_system(spec), a, b))
    return seconds, int(text.split("=")[1]) == a + b


TRACE_PAIR = "7650676663+0149460439"
TRACE_TARGET = 10.0  # CPU seconds: the speed issue's exact trace of every model at N = 10


def trace_seconds(name, expression=TRACE_PAIR):
    """CPU seconds of the exact text trace of ``expression`` by the model ``name`` (the
    fraction system, as ``tinyadder --model NAME --trace`` runs it: the decoding, the recorded
    pass and the rendering), and the answer it prints."""
    from ..addition import answer
    from ..cache import run_with_cache
    from .show import render
    model = build(name)

    def work():
        _, cache = run_with_cache(model, expression)
        render(cache)
        return cache
    seconds, cache = cpu_seconds(work)
    return seconds, answer(model, cache.tokens)
