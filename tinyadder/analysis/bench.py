"""``python -m tinyadder bench``: additions per second on AdderBoard's verify cases.

For each number system it runs the first K cases of ``cases.verify_cases()`` through
``addition.add`` (the engine, one position per step, KV cache) and again with the cache off
(every step reruns the whole prefix, as AdderBoard's reference loop does), on the first K/5
cases. Each figure is the median of several repeats, in wall-clock and in CPU time (they
differ when the machine is shared). Peak memory is measured in a separate, untimed pass
(``tracemalloc``), so that the timed runs pay nothing for it.

``--long N,N,...`` times instead one seeded random N-digit addition per N (the construction
built for N digits, ``--model``, in ``decimal`` unless ``--number`` says otherwise; decimal picks
N + 30 digits): the cost of long sequences.
"""

import platform
import statistics
import time
import tracemalloc

from ..addition import run
from ..cases import random_pairs, verify_cases
from ..construction import build
from ..numbers import number_system

# Cases per system: about 1 s per repeat here (2-core machine, CPython 3.11).
CASES = {"fraction": 100, "decimal": 2000, "float": 4000}
SYSTEMS = ("fraction", "decimal", "float")
UNCACHED_SHARE = 5  # the cache-off run takes the first K / 5 cases


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


def measure(model, spec, k, repeats, out):
    """Print one row per cache setting for number system ``spec`` on the first k cases (the
    cache-off row on the first k / UNCACHED_SHARE); return the rows."""
    ns = number_system(spec)
    run(model, ns, 0, 0)  # compile and plan outside the timing
    rows, listed = [], verify_cases()[:k]
    for cache, n in ((True, k), (False, max(1, k // UNCACHED_SHARE))):
        cases = listed[:n]
        runs = [timed(model, ns, cases, cache) for _ in range(repeats)]
        wall = statistics.median(n / max(w, 1e-9) for w, _, _ in runs)
        cpu = statistics.median(n / max(c, 1e-9) for _, c, _ in runs)  # a clock tick may be 0
        rows.append((cache, n, wall, cpu, max(wrong for _, _, wrong in runs)))
    memory = peak_memory(model, ns, listed[:20])
    for cache, n, wall, cpu, wrong in rows:
        note = f"  {wrong} WRONG" if wrong else ""
        print(f"{spec:<9} {'on' if cache else 'off':<6} {n:>6} {wall:>12,.0f} {cpu:>12,.0f}"
              f"{memory / 2 ** 10:>12,.0f} KiB{note}", file=out, flush=True)
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
