"""What the converters share: exact float32 values, the one-block tied-KV / tied-QO Qwen-style
model (RoPE theta 3 on interleaved pairs, q/k norm, SwiGLU, tied head) written as a tinyadder
model file, and the board fixture of the original's own answers. Run by the converters in a
scratch environment with torch; never imported by tinyadder."""

import gzip
import hashlib
import json
import sys
from pathlib import Path

import torch

torch.set_num_threads(1)  # the machine is shared; one thread is also the plainest order

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tinyadder import cases  # noqa: E402
from tinyadder.modelfile import dump, load  # noqa: E402

PERM = (0, 2, 1, 3)  # tinyadder lane c holds the original's lane PERM[c] (pairs (c, c + 2))
LOGIT_PAIRS = [(2395527356, 9334186774), (4296888873, 8475224721), (2446880696, 4577514554),
               (7650676663, 149460439)]
PROMPT = {"digits": 10, "question": ["0", "a", "0", "0", "b", "0"], "operands": "lsb",
          "answer": "lsb", "answer_digits": 11}


def h(x):
    """A float32 value as an exact hexadecimal float."""
    return float(x).hex()


def norm(w, lanes, apply="rsqrt"):
    out = {"kind": "rms", "eps": "1e-6", "w": {lane: h(v) for lane, v in zip(lanes, w)}}
    if apply != "rsqrt":
        out["apply"] = apply
    return out


def entries(triples):
    """{row: {col: hex}} from ((row, col, value), ...), zeros left out."""
    out = {}
    for r, c, v in triples:
        if float(v) != 0.0:
            out.setdefault(r, {})[c] = h(v)
    return out


def table(W, rows, cols):
    """{row: {col: value}} of the non-zeros of a torch weight W[out, in], read in -> out."""
    out = {}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            v = float(W[j, i])
            if v != 0.0:
                out.setdefault(r, {})[c] = h(v)
    return out


def qwen_tied(name, about, emb, ln1, ln2, lnf, Wq, Wk, q_norm, k_norm, gate, up, down, Wo=None,
              apply="rsqrt"):
    """The model file of a one-block Qwen-style model with v = k's projection before its norm
    (tied K=V) and the output map q's weight transposed (tied Q=O) unless ``Wo`` [d, hd] is
    given; ``emb`` [10, d] the token table, also the head."""
    d = emb.shape[1]
    slots = [f"x{i}" for i in range(d)]
    lanes = [f"h.{c}" for c in range(4)]
    perm = list(PERM)
    units = [f"u{i}" for i in range(gate.shape[0])]
    tie_qo = Wo is None
    Wo = Wq.t() if tie_qo else Wo
    freqs = 1.0 / (3.0 ** (torch.arange(0, 4, 2).float() / 4))
    doc = {
        "format": "tinyadder-model", "version": 1, "name": name, "about": about,
        "vocab": [str(t) for t in range(10)], "prompt": PROMPT, "slots": slots,
        "embed": {"width": d, "W_E": {str(t): {s: h(emb[t, i]) for i, s in enumerate(slots)
                                               if float(emb[t, i]) != 0.0}
                                      for t in range(10)}},
        "blocks": [{
            "width_in": d, "width_out": d,
            "ln1": norm(ln1, slots, apply),
            "attn": {
                "heads": ["h"], "head_dim": 4,
                "W_Q": table(Wq[perm], slots, lanes),
                "W_K": table(Wk[perm], slots, lanes),
                "W_V": table(Wk, slots, lanes),
                "W_O": table(Wo, lanes, slots),
                "q_norm": norm(q_norm[perm], [str(c) for c in range(4)], apply),
                "k_norm": norm(k_norm[perm], [str(c) for c in range(4)], apply),
                "rope": {"freqs": [h(f) for f in freqs]},
                "scale": "1/2",
                "softmax": "softmax",
            },
            "ln2": norm(ln2, slots, apply),
            "mlp": {"units": units, "act": "silu", "gated": True,
                    "W_gate": table(gate, slots, units), "W_in": table(up, slots, units),
                    "W_out": table(down, units, slots)},
        }],
        "ln_final": norm(lnf, slots, apply),
        "unembed": {"kind": "tied"},
        "roles": {"W_E": "embedding", "blocks.0.attn.rope_freqs": "position"},
    }
    attn = doc["blocks"][0]["attn"]
    where = "blocks.0.attn"
    # v is k's projection (tie_kv), the output map q's transpose (tie_qo): one parameter each
    ties = [[f"{where}.W_K[{s}][h.{c}]", f"{where}.W_V[{s}][h.{perm[c]}]"]
            for s in slots for c in range(4) if f"h.{c}" in attn["W_K"].get(s, {})]
    if tie_qo:
        ties += [[f"{where}.W_Q[{s}][h.{c}]", f"{where}.W_O[h.{perm[c]}][{s}]"]
                 for s in slots for c in range(4) if f"h.{c}" in attn["W_Q"].get(s, {})]
    doc["ties"] = ties
    return write_model(name, doc)


def write_model(name, doc):
    """Write the model file in the format's own layout; its path."""
    path = ROOT / "tinyadder" / "models" / "board" / f"{name}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    path.write_text(dump(load(path)), encoding="utf-8")
    return path


def record(name, source, add, step_logits, steps=11, note=None, framework=None):
    """The board fixture of the original's answers: every pair of AdderBoard's protocol, the
    carry pairs and the edge suite through ``add(a, b)``, the wrong ones kept; and the logits
    ``step_logits(a, b)`` gives (a list of rows of floats) for LOGIT_PAIRS."""
    suites = {}
    specs = {"adderboard": ("tinyadder.cases.verify_cases()", cases.verify_cases()),
             "carries": ("tinyadder.cases.carry_pairs(per_cell=20), cells in order",
                         [p for ps in cases.carry_pairs(20).values() for p in ps]),
             "edge": ("tinyadder.cases.edge_suite(), groups in order",
                      [p for ps in cases.edge_suite().values() for p in ps])}
    for suite, (text, pairs) in specs.items():
        wrong = []
        for a, b in pairs:
            got = add(a, b)
            if got != a + b:
                wrong.append([a, b, got])
        digest = hashlib.sha256("".join(f"{a}+{b}\n" for a, b in pairs).encode()).hexdigest()
        suites[suite] = {"cases": text, "count": len(pairs), "sha256": digest, "wrong": wrong}
        print(name, suite, len(pairs), "wrong", len(wrong), flush=True)
    logits = [{"a": a, "b": b, "answer": add(a, b),
               "steps": [[h(v) for v in row] for row in step_logits(a, b)]}
              for a, b in LOGIT_PAIRS]
    fixture = {"format": "tinyadder-board-fixture", "version": 1, "model": name,
               "source": source,
               "framework": framework or f"torch {torch.__version__} cpu",
               "dtype": "float32", "suites": suites, "logits": logits,
               "logits_note": note or f"{steps} steps (the sum's digits), as the original's "
                                      "add()",
               "pins": {}}
    out = ROOT / "tests" / "fixtures" / "board" / f"{name}.json.gz"
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump(fixture, f)
    print("wrote", out, flush=True)


def greedy_logits(model, tokens, steps=11):
    """The last position's logits at each of ``steps`` greedy steps of ``model(x)``."""
    x = torch.tensor([tokens])
    rows = []
    with torch.no_grad():
        for _ in range(steps):
            row = model(x)[0, -1, :10]
            rows.append(row.tolist())
            x = torch.cat([x, row.argmax().view(1, 1)], dim=1)
    return rows
