"""Convert Lokimorty's 39p trained AdderBoard submission (weights inline: Kiguli/AdderBoard
submissions/trained/Lokimorty_39p.py, a copy of the author's gist) into tinyadder/models/board/
lokimorty-39.json and record its own answers (tests/fixtures/board/lokimorty-39.json.gz). Run
once, in a scratch environment with torch, from tools/convert/:

    git -C MIRROR show COMMIT:submissions/trained/Lokimorty_39p.py > /tmp/Lokimorty_39p.py
    /path/to/venv/bin/python lokimorty_39.py /tmp/Lokimorty_39p.py

The submission is imported from that path (nothing of it is copied here). The tables its
forward() computes from its parameters (the circular-arc embedding, k's last row, the
anti-quarter q/k norm weights, the output map's scaled tail, the FFN's scaled down map) are
recorded as the float32 values it computes on this platform.

Mapping: one block applied twice and mixed, x = first + g (second - first): the file's blocks
are the block and {"same_as": 0}, with "mix": {"first": 0, "gain": g}. q and k read slots x0,
x1 of the normed stream; their RoPE pairs are interleaved, so q, k and their norm are written
in lane order 0, 2, 1, 3; v is k's projection before its norm. The FFN's output is
base + correction, base = W_down h and correction = h_1 * gate row 1: written with a third
unit u2 that repeats u1 (the same gate and up rows, so the same value), whose down row is gate
row 1, so that each output slot sums the same terms in the same order."""

import importlib.util
import platform
import sys

import torch

from common import PERM, PROMPT, entries, greedy_logits, h, record, write_model

REPO, COMMIT = "Kiguli/AdderBoard", "e5167440c8e9d0ba167f54e0882bc525f8d06a84"
PATH = "submissions/trained/Lokimorty_39p.py"
URL = "https://gist.github.com/Lokimorty/b769726e4fd32ff2c5e08c7932a15f40"
SLOTS = ["x0", "x1", "x2"]
LANES = [f"h.{c}" for c in range(4)]



def main(path):
    spec = importlib.util.spec_from_file_location("Lokimorty_39p", path)
    sub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sub)
    model, meta = sub.build_model()
    attn, mlp = model.block.attn, model.block.mlp
    with torch.no_grad():
        table = model.embed.table()
        Wq = attn.q_proj.detach()                 # [4, 2]
        Wk = attn.k_weight()                      # [4, 2], row 3 = row 0 * alpha
        a = attn.qk_norm.weight
        qk = torch.stack([a, a * 0.25, a.new_zeros(()), -a])
        o3 = attn.o_row3()                        # [4]
        gate = mlp.gate_weight()                  # [2, 3]
        up = mlp.up_proj.detach()                 # [2, 3]
        scale = torch.cat([mlp.down_scale, mlp.down_scale.new_zeros(1)])
        down = up.t() * scale.unsqueeze(-1)       # [3, 2]: base = h @ down.T
        w = model.norm.weight.detach()
        g = model.repeat_gain.detach()
    perm = list(PERM)
    norm = {"kind": "rms", "eps": "1e-6", "w": {s: h(v) for s, v in zip(SLOTS, w)}}
    qk_norm = {"kind": "rms", "eps": "1e-6",
               "w": {str(c): h(qk[perm[c]]) for c in range(4) if float(qk[perm[c]]) != 0.0}}
    units = ["u0", "u1", "u2"]
    rows = {"u0": 0, "u1": 1, "u2": 1}
    source = {"repo": REPO, "path": PATH, "commit": COMMIT, "url": URL}
    about = {
        "title": "Lokimorty 39p (trained; 1L Qwen-like, d=3, 1h/1kv, hd=4, ff=2, circular-arc "
                 "embedding, one block applied twice and mixed)",
        "author": "Lokimorty", "params_claimed": meta["params"], "dtype": "float32",
        "family": "trained", "source": source,
        "notes": "Trained; every weight is the float32 value of the submission's inline "
                 "parameters, exactly, and the tables its forward() computes from them are "
                 "the float32 values it computes (torch "
                 f"{torch.__version__}, {platform.machine()} {platform.system()}): the "
                 "arc embedding (radius, start, stride), k's row 3 = row 0 * alpha, the "
                 "anti-quarter q/k norm (a, a/4, 0, -a), the output map's tail "
                 "q_proj[1:, 1] * o_tail_scale, the FFN's down map up^T * down_scale. "
                 "39 = the submission's count of its nn.Parameters. Its forward(): first = "
                 "block(x), second = block(first), x = first + (second - first) * "
                 "repeat_gain (the file's mix), one RMSNorm for every norm, tied head. The "
                 "FFN's correction term h_1 * gate row 1 is the third unit u2, a copy of u1. "
                 "RoPE theta 3 on interleaved pairs, written as (c, c + 2). Prompt [0] "
                 "rev(a) [0 0] rev(b) [0], 11 sum digits least significant first. The "
                 "submission's docstring reports 99.91% (10001/10010) on verify.py. "
                 "Converted by tools/convert/lokimorty_39.py.",
    }
    freqs = 1.0 / (3.0 ** (torch.arange(0, 4, 2).float() / 4))
    block = {
        "width_in": 3, "width_out": 3, "ln1": norm,
        "attn": {
            "heads": ["h"], "head_dim": 4,
            "W_Q": entries((SLOTS[s], LANES[c], Wq[perm[c], s]) for s in range(2)
                           for c in range(4)),
            "W_K": entries((SLOTS[s], LANES[c], Wk[perm[c], s]) for s in range(2)
                           for c in range(4)),
            "W_V": entries((SLOTS[s], LANES[c], Wk[c, s]) for s in range(2) for c in range(4)),
            "W_O": entries([(LANES[c], SLOTS[s], Wq[c, s]) for c in range(4) for s in range(2)]
                           + [(LANES[c], "x2", o3[c]) for c in range(4)]),
            "q_norm": qk_norm, "k_norm": qk_norm,
            "rope": {"freqs": [h(f) for f in freqs]},
            "scale": "1/2", "softmax": "softmax",
        },
        "ln2": norm,
        "mlp": {"units": units, "act": "silu", "gated": True,
                "W_gate": entries((SLOTS[s], u, gate[rows[u], s]) for s in range(3)
                                  for u in units),
                "W_in": entries((SLOTS[s], u, up[rows[u], s]) for s in range(3) for u in units),
                "W_out": entries([(u, SLOTS[s], down[s, i]) for i, u in enumerate(units[:2])
                                  for s in range(3)]
                                 + [("u2", SLOTS[s], gate[1, s]) for s in range(3)])},
    }
    doc = {
        "format": "tinyadder-model", "version": 1, "name": "lokimorty-39", "about": about,
        "vocab": [str(t) for t in range(10)], "prompt": PROMPT, "slots": SLOTS,
        "embed": {"width": 3, "W_E": entries((str(t), SLOTS[i], table[t, i])
                                             for t in range(10) for i in range(3))},
        "blocks": [block, {"same_as": 0}],
        "mix": {"first": 0, "gain": h(g)},
        "ln_final": norm,
        "unembed": {"kind": "tied"},
        "roles": {"W_E": "embedding", "blocks.0.attn.rope_freqs": "position",
                  "blocks.1.attn.rope_freqs": "position"},
    }
    a, m = "blocks.0.attn", "blocks.0.mlp"
    att, mlp_ = block["attn"], block["mlp"]
    doc["ties"] = (  # one parameter each: v = k's projection, o's first rows = q's weight,
        # u2 = u1 (gate and up rows), u2's down row = gate row 1
        [[f"{a}.W_K[{s}][h.{c}]", f"{a}.W_V[{s}][h.{perm[c]}]"]
         for s in SLOTS for c in range(4) if f"h.{c}" in att["W_K"].get(s, {})]
        + [[f"{a}.W_Q[{s}][h.{c}]", f"{a}.W_O[h.{perm[c]}][{s}]"]
           for s in SLOTS for c in range(4) if f"h.{c}" in att["W_Q"].get(s, {})]
        + [[f"{m}.W_gate[{s}][u1]", f"{m}.W_gate[{s}][u2]", f"{m}.W_out[u2][{s}]"]
           for s in SLOTS if "u1" in mlp_["W_gate"].get(s, {})]
        + [[f"{m}.W_in[{s}][u1]", f"{m}.W_in[{s}][u2]"]
           for s in SLOTS if "u1" in mlp_["W_in"].get(s, {})])
    write_model("lokimorty-39", doc)
    record("lokimorty-39", source, lambda a, b: sub.add(model, a, b),
           lambda a, b: greedy_logits(model, sub.encode(a, b)))


if __name__ == "__main__":
    main(sys.argv[1])
