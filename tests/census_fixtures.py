"""Brute-force failing sets for the census tests: every pair (a, b) of N-digit numbers run
through the interpreter (``tinyadder.run``), the wrong ones kept; and the census's count
by a second method, sum by sum (``count_by_sum``).

    python tests/census_fixtures.py            # regenerate tests/fixtures/census/*.json.gz

N = 2 runs in the fraction system (exact; about a minute per model). N = 3 (10^6 pairs) runs
in float, which is sound here: float differs from exact arithmetic only where a digit's
decision is within its rounding error (below 1e-9 of a unit at N = 3) of a threshold, so
every pair whose offset r + o(x) lies within 1e-6 units of a threshold (``near``) is rerun
in the fraction system and its exact result kept.
"""

import gzip
import json
import sys
from fractions import Fraction
from pathlib import Path

from tinyadder import build, number_system, run
from tinyadder.proof.formulas import digit_formulas, layout
from tinyadder.proof.stress import GAINS, stress_model

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "census"
NEAR = 1e-6


def models():
    """(fixture name, model, number system) for every brute force kept."""
    out = []
    for variant in ("published", "repaired"):
        out.append((f"{variant}-n2", build(variant, 2), "fraction"))
    for g in GAINS:
        out.append((f"gain-{_name(g)}-n2", stress_model(g, 2), "fraction"))
    for g in GAINS:
        out.append((f"gain-{_name(g)}-n3", stress_model(g, 3), "float"))
    return out


def _name(g):
    return str(Fraction(g)).replace("/", "_")


def near_pairs(model):
    """Pairs whose r + o(x) is within NEAR units of a threshold at some decision."""
    lay = layout(model)
    n = lay.digits
    near = []
    quick = []
    for d in digit_formulas(model):
        coefs = [(v, float(k)) for v, k in d.offset.coefs().items()]
        bounds = {y: ([None if x is None else float(x) for x in d.lo[y]],
                      [None if x is None else float(x) for x in d.hi[y]]) for y in d.lo}
        quick.append((d, coefs, bounds))
    for a in range(10 ** n):
        for b in range(10 ** n):
            s = a + b
            digits = {}
            for k, pos in enumerate(lay.a):
                digits[pos] = (a // 10 ** (n - 1 - k)) % 10
            for k, pos in enumerate(lay.b):
                digits[pos] = (b // 10 ** (n - 1 - k)) % 10
            for k, pos in enumerate(lay.answer):
                digits[pos] = (s // 10 ** (n - k)) % 10 if k else s // 10 ** n
            for d, coefs, bounds in quick:
                P = 10 ** d.place
                r = s % P
                sigma = (s // P) % 10 if d.t else s // P
                y = None if d.previous is None else digits[d.previous]
                x = r + sum(k * digits[v] for v, k in coefs)
                lo, hi = bounds[y]
                if (lo[sigma] is not None and abs(x - lo[sigma]) < NEAR) or \
                        (hi[sigma] is not None and abs(x - hi[sigma]) < NEAR):
                    near.append((a, b))
                    break
    return near


def brute_force(model, system):
    """The sorted list of pairs the model adds wrongly."""
    n = model.prompt.digits
    ns = number_system(system)
    bad = {(a, b) for a in range(10 ** n) for b in range(10 ** n)
           if int(run(model, ns, a, b).split("=")[1]) != a + b}
    if system != "fraction":
        exact = number_system("fraction")
        for a, b in near_pairs(model):
            wrong = int(run(model, exact, a, b).split("=")[1]) != a + b
            (bad.add if wrong else bad.discard)((a, b))
    return sorted(bad)


def count_by_sum(n, wins, offsets):
    """The census's (count, uncertain), sum by sum (small N only): a sum in a whole window
    adds its s + 1 or 2 10^N - 1 - s pairs, a sum in boundary windows only tries every pair.
    A pair is uncertain when it fails with every threshold moved by its guard towards
    failing, but not with every threshold moved the other way."""
    total = uncertain = 0
    top = 10 ** n
    for s in range(2 * top - 1):
        hit = [w for w in wins if w.holds_for(s, n)]
        if not hit:
            continue
        if any(w.cond is None for w in hit):
            total += s + 1 if s < top else 2 * top - 1 - s
            continue
        for a in range(max(0, s - top + 1), min(s, top - 1) + 1):
            fails = [any(_past(offsets[w.t], w.cond, widen, a, s - a, s) for w in hit)
                     for widen in (-1, 0, 1)]
            total += fails[1]
            uncertain += fails[0] != fails[2]
    return total, uncertain


def _past(off, cond, widen, a, b, s):
    """Whether o(x) is past the threshold moved by ``widen`` guards towards failing."""
    op, thr = cond
    x = off.at(a, b, s)
    return x > thr - widen * off.guard if op == ">" else x <= thr + widen * off.guard


def save(name, model, system, pairs):
    n = model.prompt.digits
    codes = [a * 10 ** n + b for a, b in pairs]
    deltas = [c - p for c, p in zip(codes, [0] + codes[:-1])]
    data = {"model": model.name, "digits": n, "number": system, "count": len(pairs),
            "deltas": deltas}
    with gzip.open(FIXTURES / f"{name}.json.gz", "wt", encoding="utf-8") as f:
        json.dump(data, f)


def load(name):
    """The fixture's failing pairs as a set, and its record."""
    with gzip.open(FIXTURES / f"{name}.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    n, code, pairs = data["digits"], 0, set()
    for d in data["deltas"]:
        code += d
        pairs.add(divmod(code, 10 ** n))
    return pairs, data


def main(argv):
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, model, system in models():
        if argv and not any(a in name for a in argv):
            continue
        pairs = brute_force(model, system)
        save(name, model, system, pairs)
        print(f"{name}: {len(pairs)} failing pairs ({system})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
