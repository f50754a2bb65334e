"""Convert staghado's 122p (staghado/minimal-ten-digit-addition-transformer: submission.py and
checkpoint/best_122.npz, an mlx_lm Qwen3) into tinyadder/models/board/staghado-122.json and
record its own answers (tests/fixtures/board/staghado-122.json.gz). Run once, in a scratch
environment with mlx (CPU) and mlx-lm, from tools/convert/:

    git -C MIRROR archive COMMIT | tar -x -C /tmp/staghado
    /path/to/venv/bin/python staghado_122.py /tmp/staghado

The submission module is imported from that directory (nothing of it is copied here); every
weight is read from the loaded model as its exact float32 value.

Mapping: mlx_lm's Qwen3 block, one layer: RMSNorm (mx.fast.rms_norm: the mean as sum *
f32(1/n), x * rsqrt), q/k/v projections, q/k norms, RoPE with traditional=False (pairs
(c, c + d/2), as tinyadder's), base 3 (frequencies 1 and 3^-1/2, as float32), scale 1/2,
softmax, o projection; SwiGLU; final norm; the head tied to the embedding."""

import platform
import sys
from pathlib import Path

import numpy as np

from common import PROMPT, h, record, table, write_model

REPO, COMMIT = ("staghado/minimal-ten-digit-addition-transformer",
                "48d4f59f33ac882f0ab44fbd891ca06973e76e87")



def norm(w, lanes):
    return {"kind": "rms", "eps": "1e-6", "w": {k: h(v) for k, v in zip(lanes, w)},
            "mean": "multiply"}


def main(root):
    sys.path.insert(0, str(Path(root)))
    import mlx.core as mx
    import submission as sub
    from mlx.utils import tree_flatten
    model, meta = sub.build_model()
    p = {k: np.array(v) for k, v in tree_flatten(model.parameters())}
    L = "model.layers.0."
    emb = p["model.embed_tokens.weight"]
    slots, lanes = ["x0", "x1", "x2"], [f"h.{c}" for c in range(4)]
    units = ["u0", "u1", "u2"]
    source = {"repo": REPO, "path": "submission.py + checkpoint/best_122.npz",
              "commit": COMMIT, "url": f"https://github.com/{REPO}"}
    about = {
        "title": "staghado 122p (trained; mlx_lm Qwen3, 1 layer, d=3, 1h/1kv, hd=4, ff=3, "
                 "RoPE theta 3, tied embeddings)",
        "author": "staghado", "params_claimed": meta["params"], "dtype": "float32",
        "family": "trained", "source": source,
        "notes": "Trained (MLX); every weight is the checkpoint's float32 value as the "
                 "submission loads it, exactly. 122 = every stored array element (the "
                 "submission's own count): embedding 30 (also the head), q/k/v 12 each, o "
                 "12, q/k norms 4 each, gate/up/down 9 each, three norms 3 each. mlx_lm's "
                 "Qwen3: mx.fast.rms_norm (mean as sum * f32(1/n)), RoPE traditional=False "
                 "(pairs (c, c + 2)) with base 3, the frequencies 1 and 3^-1/2 as float32, "
                 "scale 1/2, softmax, SwiGLU (nn.silu = x * sigmoid(x)). The fixture ran on "
                 f"MLX {mx.__version__}'s Linux CPU backend ({platform.machine()}); the "
                 "author's versions are unknown. Prompt [0] rev(a) [0 0] rev(b) [0], 11 sum "
                 "digits least significant first. Converted by tools/convert/staghado_122.py.",
    }
    freqs = [1.0, float(np.float32(3.0) ** np.float32(-0.5))]
    doc = {
        "format": "tinyadder-model", "version": 1, "name": "staghado-122", "about": about,
        "vocab": [str(t) for t in range(10)], "prompt": PROMPT, "slots": slots,
        "embed": {"width": 3, "W_E": {str(t): {s: h(emb[t, i]) for i, s in enumerate(slots)
                                               if emb[t, i] != 0} for t in range(10)}},
        "blocks": [{
            "width_in": 3, "width_out": 3,
            "ln1": norm(p[L + "input_layernorm.weight"], slots),
            "attn": {
                "heads": ["h"], "head_dim": 4,
                "W_Q": table(p[L + "self_attn.q_proj.weight"], slots, lanes),
                "W_K": table(p[L + "self_attn.k_proj.weight"], slots, lanes),
                "W_V": table(p[L + "self_attn.v_proj.weight"], slots, lanes),
                "W_O": table(p[L + "self_attn.o_proj.weight"], lanes, slots),
                "q_norm": norm(p[L + "self_attn.q_norm.weight"], [str(c) for c in range(4)]),
                "k_norm": norm(p[L + "self_attn.k_norm.weight"], [str(c) for c in range(4)]),
                "rope": {"freqs": [h(f) for f in freqs]},
                "scale": "1/2", "softmax": "softmax",
            },
            "ln2": norm(p[L + "post_attention_layernorm.weight"], slots),
            "mlp": {"units": units, "act": "silu", "gated": True,
                    "W_gate": table(p[L + "mlp.gate_proj.weight"], slots, units),
                    "W_in": table(p[L + "mlp.up_proj.weight"], slots, units),
                    "W_out": table(p[L + "mlp.down_proj.weight"], units, slots)},
        }],
        "ln_final": norm(p["model.norm.weight"], slots),
        "unembed": {"kind": "tied"},
        "roles": {"W_E": "embedding", "blocks.0.attn.rope_freqs": "position"},
    }
    write_model("staghado-122", doc)

    def step_logits(a, b):
        seq, rows = sub._encode(a, b), []
        for _ in range(11):
            logits = model(mx.array([seq], dtype=mx.int32))[0, -1]
            rows.append(np.array(logits).tolist())
            seq.append(int(mx.argmax(logits).item()))
        return rows

    import mlx_lm
    record("staghado-122", source, lambda a, b: sub.add(model, a, b), step_logits,
           framework=f"mlx {mx.__version__} cpu, mlx-lm {mlx_lm.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
