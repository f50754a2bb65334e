"""``python -m tinyadder bench``: additions per second on AdderBoard's verify cases.

For each number system it runs the first K cases of ``cases.verify_cases()`` through
``addition.add`` (the one forward pass, one position per step, KV cache) and again with the
cache off (every step reruns the whole prefix, as AdderBoard's reference loop does), on the
first K/5 cases. Each figure is the median of several repeats, in wall-clock and in CPU time
(they differ when the machine is shared). Peak memory is measured in a separate, untimed pass
(``tracemalloc``), so that the timed runs pay nothing for it.

When ``torch`` happens to be importable, a dense PyTorch float64 model of the same weights
(``torch_model``: the textbook pass, the whole prefix rerun at every step as the published
model does, one thread) runs the first cases right before every timed repeat, and each row
gets the median ratio of its CPU rate to the PyTorch model's.
PyTorch is never a dependency: without it that comparison is skipped, and the output says so.

``--long N,N,...`` times instead one seeded random N-digit addition per N (the construction
built for N digits, ``--model``, in ``decimal`` unless ``--number`` says otherwise; decimal picks
N + 30 digits): the cost of long sequences.
"""

import importlib
import platform
import statistics
import time
import tracemalloc

from ..addition import encode, run
from ..cases import random_pairs, verify_cases
from ..models import build
from ..numbers import FloatSystem, number_system
from ..weights import tensors

# Cases per system: about 1 s per repeat here (2-core machine, CPython 3.11).
CASES = {"fraction": 100, "decimal": 2000, "float": 4000}
SYSTEMS = ("fraction", "decimal", "float")
UNCACHED_SHARE = 5  # the cache-off run takes the first K / 5 cases
TORCH_CASES = 50    # the PyTorch model's cases per measurement (times --scale)


def timed(model, ns, cases, cache):
    """(wall seconds, CPU seconds, wrong answers) for one pass over ``cases``."""
    wrong = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for a, b in cases:
        if int(run(model, ns, a, b, cache=cache).split("=")[1]) != a + b:
            wrong += 1
    return time.perf_counter() - wall, time.process_time() - cpu, wrong


def peak_memory(model, ns, cases):
    """Peak traced Python memory (bytes) while running ``cases``."""
    tracemalloc.start()
    try:
        for a, b in cases:
            run(model, ns, a, b)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(model, spec, k, repeats, out, torch=None):
    """Print one row per cache setting for number system ``spec`` on the first k cases (the
    cache-off row on the first k / UNCACHED_SHARE); return the rows.

    ``torch`` (a function returning the PyTorch model's CPU additions per second) is measured
    right before every timed repeat, and the row shows the median of the ratios: the load of a
    shared machine changes within minutes, so only measurements taken side by side compare.
    """
    ns = number_system(spec)
    run(model, ns, 0, 0)  # compile and plan outside the timing
    rows, listed = [], verify_cases()[:k]
    for cache, n in ((True, k), (False, max(1, k // UNCACHED_SHARE))):
        cases = listed[:n]
        runs, ratios = [], []
        for _ in range(repeats):
            reference = torch() if torch else None
            runs.append(timed(model, ns, cases, cache))
            if reference:
                ratios.append(n / max(runs[-1][1], 1e-9) / reference)
        wall = statistics.median(n / max(w, 1e-9) for w, _, _ in runs)
        cpu = statistics.median(n / max(c, 1e-9) for _, c, _ in runs)  # a clock tick may be 0
        ratio = statistics.median(ratios) if ratios else None
        rows.append((cache, n, wall, cpu, max(wrong for _, _, wrong in runs), ratio))
    memory = peak_memory(model, ns, listed[:20])
    for cache, n, wall, cpu, wrong, ratio in rows:
        note = f"  {wrong} WRONG" if wrong else ""
        times = f"{ratio:>8.1f}x" if ratio else ""
        print(f"{spec:<10} {'on' if cache else 'off':<5} {n:>6} {wall:>11,.0f} {cpu:>11,.0f}"
              f"{memory / 2 ** 10:>9,.0f} KiB{times}{note}", file=out, flush=True)
    return rows


def long_numbers(args, out):
    """One seeded random N-digit addition per N: wall and CPU seconds."""
    spec = args.number.spec if args.number else "decimal"
    print(f"tinyadder bench --long: {args.model} model, {spec}, Python "
          f"{platform.python_version()}", file=out)
    print("one random N-digit addition per N", file=out)
    print(f"{'N':>6} {'tokens':>7} {'wall s':>9} {'CPU s':>9}  sum", file=out, flush=True)
    status = 0
    for digits in args.long:
        model = build(args.model, digits)
        (a, b), = random_pairs(1, digits=digits)
        ns = number_system(spec)
        wall, cpu = time.perf_counter(), time.process_time()
        right = int(run(model, ns, a, b).split("=")[1]) == a + b
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        status = max(status, 0 if right else 1)
        print(f"{digits:>6} {3 * digits + 4:>7} {wall:>9.2f} {cpu:>9.2f}  "
              f"{'right' if right else 'WRONG'}", file=out, flush=True)
    return status


def torch_model(model):
    """``generate(prompt, n_new) -> tokens`` over a dense PyTorch float64 model of ``model``'s
    weights, or None when torch is not importable (it is only measured against, never needed).

    The textbook pass over the whole sequence at every step: q, k, v = x W + b; scores
    q_i k_j - slope (i - j); softmax1 weights e / (1 + sum e) over j <= i; z = pattern v;
    x += z W_O + b_O; x = [x, 0] + relu(x W_gate + b_gate) (x W_in + b_in) W_out + b_out;
    logits = -x[readout slots]. Built from ``weights.tensors``, like every other reader.
    """
    try:  # by name: an optional comparison, never a dependency of the package
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    torch.set_num_threads(1)
    doubles = FloatSystem()
    t = {tensor.name: tensor for tensor in tensors(model)}

    def dense(name, slope=False):
        tensor = t[name]
        out = torch.zeros(len(tensor.rows), len(tensor.cols), dtype=torch.float64)
        for (r, c), value in tensor.entries.items():
            out[tensor.rows.index(r), tensor.cols.index(c)] = (
                doubles.slope(value) if slope else doubles.const(value))
        return out[0] if tensor.rows == (None,) else out

    blocks = []
    for i, block in enumerate(model.blocks):
        a, m = f"blocks.{i}.attn", f"blocks.{i}.mlp"
        blocks.append(([dense(f"{a}.{w}") for w in ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V",
                                                     "W_O", "b_O")],
                       dense(f"{a}.slopes", slope=True),
                       [dense(f"{m}.{w}") for w in ("W_gate", "b_gate", "W_in", "b_in",
                                                     "W_out", "b_out")],
                       block.width_out - block.width_in))
    embed = dense("W_E")
    readout = torch.tensor([model.slots.index(s) for s in model.readout.values()])
    token_of = [model.vocab.index(tok) for tok in model.readout]

    def logits(tokens):
        n = len(tokens)
        pos = torch.arange(n, dtype=torch.float64)
        dist = pos[:, None] - pos[None, :]
        x = embed[torch.tensor(tokens)]
        for (wq, bq, wk, bk, wv, bv, wo, bo), slopes, (wg, bg, wi, bi, wd, bd), pad in blocks:
            q, k, v = x @ wq + bq, x @ wk + bk, x @ wv + bv
            scores = q.T[:, :, None] * k.T[:, None, :] - slopes[:, None, None] * dist
            e = torch.exp(scores).masked_fill(dist < 0, 0.0)
            z = torch.einsum("hij,jh->ih", e / (1 + e.sum(-1, keepdim=True)), v)
            x = x + z @ wo + bo
            post = torch.relu(x @ wg + bg) * (x @ wi + bi)
            x = torch.nn.functional.pad(x, (0, pad)) + post @ wd + bd
        return -x[-1, readout]

    def generate(prompt, n_new):
        tokens = list(prompt)
        with torch.no_grad():
            for _ in range(n_new):
                tokens.append(token_of[int(torch.argmax(logits(tokens)))])
        return tokens

    return generate


def torch_rate(model, generate, k, repeats):
    """(wall add/s, CPU add/s, wrong) of the PyTorch model on the first k verify cases."""
    cases = verify_cases()[:k]
    digits = model.prompt.digits
    runs = []
    for _ in range(repeats):
        wrong = 0
        wall, cpu = time.perf_counter(), time.process_time()
        for a, b in cases:
            tokens = generate(encode(model, a, b), digits + 1)
            wrong += int("".join(model.vocab[t] for t in tokens[-digits - 1:])) != a + b
        runs.append((time.perf_counter() - wall, time.process_time() - cpu, wrong))
    return (statistics.median(k / max(w, 1e-9) for w, _, _ in runs),
            statistics.median(k / max(c, 1e-9) for _, c, _ in runs),
            max(wrong for _, _, wrong in runs))
