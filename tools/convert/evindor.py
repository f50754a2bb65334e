"""Convert evindor's MicroAdder 57p and 67p (evindor/MicroAdder, submission_57p/ and
submission_67p/: the submission module and its checkpoint) into tinyadder/models/board/
evindor-57.json and evindor-67.json and record each one's own answers (tests/fixtures/board/).
Run once, in a scratch environment with torch, from the repository's root:

    git -C MIRROR archive COMMIT submission_57p submission_67p | tar -x -C /tmp/evindor
    /path/to/venv/bin/python tools/convert/evindor.py /tmp/evindor 57p 67p

Each submission module is imported from its own directory (nothing of it is copied here). The
computed tables (the circular-arc token embedding, the sinusoidal digit positions with the
learned EQUALS and carry positions, cos and sin of the q phase angle) are recorded as the
float32 values the original computes on this platform.

Mapping: the stream is [tok(2) | pos(3)] (x0, x1 | x2, x3, x4); the one head has q and k of
width 4 and v of width 5, written as a head of dimension 5 whose q and k lane 4 is zero (the
score gains the term 0 * 0, which adds +0 in every number system: exact); q is q_proj
followed by the phase rotation of each lane pair (a factored map, in the original's order);
k is q_proj (tied); v reads the token slots through head_proj's weight; the output map is
rank 1 (factored); the readout is head_proj then the token table (factored)."""

import importlib.util
import platform
import sys
from pathlib import Path

import torch

from common import entries, greedy_logits, h, record, write_model

REPO, COMMIT = "evindor/MicroAdder", "fafb573fb9000ff34b3965a02f48d3f30ac7787d"
SLOTS = ["x0", "x1", "x2", "x3", "x4"]
LANES = [f"h.{c}" for c in range(5)]



def convert(root, tag):
    folder = Path(root) / f"submission_{tag}"
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"submission_{tag}",
                                                  folder / f"submission_{tag}.py")
    sub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sub)
    model, meta = sub.build_model()
    name = f"evindor-{tag[:-1]}"
    with torch.no_grad():
        tok = model._tok_emb_table()
        pos = model._positions(sub.SEQ_LEN)
        c, s = model.q_phase_angle.cos()[0], model.q_phase_angle.sin()[0]
    Wq = model.q_proj.weight.detach()            # [4, 3]: pos slots -> q/k lanes
    head = model.head_proj.weight.detach()       # [2, 5]
    A, B = model.out_proj_A.detach(), model.out_proj_B.detach()
    w = model.norm_weight.detach()
    norm = {"kind": "rms", "eps": "1e-5", "w": {x: h(v) for x, v in zip(SLOTS, w)},
            "apply": "divide"}
    fc2 = head.t() if tag == "57p" else model.fc2.weight.detach()  # [5, 2]
    rot = []  # q_rot[2p] = q[2p] c - q[2p+1] s; q_rot[2p+1] = q[2p] s + q[2p+1] c
    for p in range(2):
        d0, d1 = 2 * p, 2 * p + 1
        rot += [(f"r{d0}", f"h.{d0}", c), (f"r{d1}", f"h.{d0}", -s),
                (f"r{d0}", f"h.{d1}", s), (f"r{d1}", f"h.{d1}", c)]
    order = {f"r{i}": i for i in range(4)}
    rot.sort(key=lambda e: (order[e[0]], e[1]))
    source = {"repo": REPO, "path": f"submission_{tag}/submission_{tag}.py + "
              f"submission_{tag}/checkpoint_{tag}.pt", "commit": COMMIT,
              "url": f"https://github.com/{REPO}/tree/main/submission_{tag}"}
    about = {
        "title": f"evindor MicroAdder {tag} (trained; 1L decoder, d=5 = tok 2 + pos 3, 1h, "
                 f"qk=4, hd=5, ff=2, rank-1 output, tied Q/K with a phase rotation)",
        "author": "evindor", "params_claimed": meta["params"], "dtype": "float32",
        "family": "trained", "source": source,
        "notes": f"Trained from scratch ({meta['architecture']}); every weight is the "
                 "checkpoint's float32 value as the submission loads it, exactly. "
                 f"{meta['params']} = unique Parameters (the submission's own count). The "
                 "token table (A cos, A sin of start + d stride), the positions (frozen "
                 "sinusoidal digit spiral, learned EQUALS and carry rows, zero PLUS/EOS "
                 "rows) and cos/sin of the q phase angle are computed in forward(); the file "
                 "holds the float32 values the original computes, recorded with torch "
                 f"{torch.__version__} on {platform.machine()} {platform.system()}. q and k "
                 "have width 4 and v width 5: written as one head of dimension 5 whose q/k "
                 "lane 4 is zero (exact: the score gains +0). RMSNorm x / sqrt(mean(x^2) + "
                 "1e-5) * w, one weight for all three norms; GELU (erf). Prompt rev(a) 0 "
                 "rev(b) 0, 11 sum digits least significant first (then EOS, not read). "
                 "Converted by tools/convert/evindor.py.",
    }
    doc = {
        "format": "tinyadder-model", "version": 1, "name": name, "about": about,
        "vocab": [str(t) for t in range(10)],
        "prompt": {"digits": 10, "question": ["a", "0", "b", "0"], "operands": "lsb",
                   "answer": "lsb", "answer_digits": 11},
        "slots": SLOTS,
        "embed": {"width": 5,
                  "W_E": entries((str(t), SLOTS[i], tok[t, i]) for t in range(10)
                                 for i in range(2)),
                  "W_pos": entries((str(p), SLOTS[2 + i], pos[p, i])
                                   for p in range(sub.SEQ_LEN) for i in range(3)),
                  "pos_role": "learned"},
        "blocks": [{
            "width_in": 5, "width_out": 5, "ln1": norm,
            "attn": {
                "heads": ["h"], "head_dim": 5,
                "W_Q": {"inner": [f"r{i}" for i in range(4)],
                        "A": entries((SLOTS[2 + i], f"r{j}", Wq[j, i])
                                     for i in range(3) for j in range(4)),
                        "B": entries(rot)},
                "W_K": entries((SLOTS[2 + i], f"h.{j}", Wq[j, i])
                               for i in range(3) for j in range(4)),
                "W_V": entries((SLOTS[i], LANES[j], head[i, j])
                               for i in range(2) for j in range(5)),
                "W_O": {"inner": ["r"],
                        "A": entries((LANES[j], "r", A[j, 0]) for j in range(5)),
                        "B": entries(("r", SLOTS[j], B[0, j]) for j in range(5))},
                "scale": "2", "scale_op": "divide", "softmax": "softmax",
            },
            "ln2": norm,
            "mlp": {"units": ["u0", "u1"], "act": "gelu", "gated": False,
                    "W_in": entries((SLOTS[i], f"u{j}", model.fc1.weight[j, i].detach())
                                    for i in range(5) for j in range(2)),
                    "W_out": entries((f"u{j}", SLOTS[i], fc2[i, j])
                                     for j in range(2) for i in range(5))},
        }],
        "ln_final": norm,
        "unembed": {"kind": "linear",
                    "W_U": {"inner": ["t0", "t1"],
                            "A": entries((SLOTS[s], f"t{i}", head[i, s])
                                         for s in range(5) for i in range(2)),
                            "B": entries((f"t{i}", str(t), tok[t, i])
                                         for i in range(2) for t in range(10))}},
        "roles": {"W_E": "embedding", "W_pos": "embedding"},
    }
    a, m = "blocks.0.attn", "blocks.0.mlp"
    ties = [[f"{a}.W_Q.A[{SLOTS[2 + i]}][r{j}]", f"{a}.W_K[{SLOTS[2 + i]}][h.{j}]"]
            for i in range(3) for j in range(4) if float(Wq[j, i]) != 0.0]  # tied Q/K
    for i in range(2):  # head_proj: v's map, the head's first factor (57p: also fc2)
        for j in range(5):
            if float(head[i, j]) != 0.0:
                ties.append([f"unembed.W_U.A[{SLOTS[j]}][t{i}]", f"{a}.W_V[{SLOTS[i]}][h.{j}]"]
                            + ([f"{m}.W_out[u{i}][{SLOTS[j]}]"] if tag == "57p" else []))
    ties += [[f"W_E[{t}][{SLOTS[i]}]", f"unembed.W_U.B[t{i}][{t}]"]
             for t in range(10) for i in range(2) if float(tok[t, i]) != 0.0]  # tied head
    doc["ties"] = ties
    write_model(name, doc)

    def tokens(a, b):
        return ([(a // 10 ** i) % 10 for i in range(10)] + [0]
                + [(b // 10 ** i) % 10 for i in range(10)] + [0])

    record(name, source, lambda a, b: sub.add(model, a, b),
           lambda a, b: greedy_logits(model, tokens(a, b)))
    sys.path.remove(str(folder))


if __name__ == "__main__":
    for tag in sys.argv[2:]:
        convert(sys.argv[1], tag)
