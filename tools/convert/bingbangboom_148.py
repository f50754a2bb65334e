"""Convert bingbangboom-lab-148 (AdderBoard, hand-coded: bingbangboom-lab-87's network with
every projection a rank-1 product u v^T, a factorized embedding and vectors shared across the
two layers; its low-rank head an SVD fitted when the module loads) into
tinyadder/models/board/bingbangboom-lab-148.json, and record the original's answers as the
board fixture. Run once, in a scratch environment with torch and numpy, on the original's
source (Kiguli/AdderBoard submissions/hand_coded/bingbangboom-lab_148p.py):

    python tools/convert/bingbangboom_148.py /path/to/bingbangboom-lab_148p.py

``qwen_rank1`` writes the model file of this two-layer rank-1 Qwen3 from its tensors as plain
float32 arrays (``Layer``); tools/convert/xangma_177.py and xangma_197.py use it for the
same network in MLX. A rank-1 map x -> (x . v) u is written as its table u v^T: one factor is
0, 1 or a power of ten, so every product is exact (``outer`` checks it) and the table
computes the same float32 sums; a unit whose gate row is zero (the sparse gate's pad: SiLU(0)
= 0, its down weight 0) adds nothing and is left out.
"""

from dataclasses import dataclass
import importlib.util
import platform
import sys

import numpy as np
import torch

from bingbangboom_87 import record_original
from common import PROMPT, h, table, write_model

REPO, COMMIT = "Kiguli/AdderBoard", "e5167440c8e9d0ba167f54e0882bc525f8d06a84"
PATH = "submissions/hand_coded/bingbangboom-lab_148p.py"
URL = "https://gist.github.com/bingbangboom-lab/3594f00a1aa0b668e70a92c396d0f0d1"
NAME = "bingbangboom-lab-148"
SLOTS = [f"x{i}" for i in range(5)]
LANES = ["h0.0", "h0.1", "h1.0", "h1.1"]  # q's four outputs: two heads of two lanes
KV = ["kv.0", "kv.1"]


@dataclass
class Layer:
    """One layer's maps as float32 arrays W[out, in] (torch's and MLX's orientation)."""

    q: np.ndarray     # [4, 5]
    k: np.ndarray     # [2, 5]
    v: np.ndarray     # [2, 5]
    o: np.ndarray     # [5, 4]
    gate: np.ndarray  # [units, 5] (layer 0: the sparse gate's rows, zero past slot 2)
    up: np.ndarray    # [units, 5]
    down: np.ndarray  # [5, units]


def outer(u, v):
    """u v^T in float32, every product exact (checked against the float64 product)."""
    u, v = np.asarray(u, np.float32), np.asarray(v, np.float32)
    w = np.outer(u, v).astype(np.float32)
    assert (w.astype(np.float64) == np.outer(u.astype(np.float64), v.astype(np.float64))).all()
    return w


def norm(mlx, w=None):
    """x * rsqrt(mean(x^2) + 1e-6) (times w): torch's mean is sum / n, MLX's sum * (1/n)."""
    out = {"kind": "rms", "eps": "1/1000000"}
    if w is not None:
        out["w"] = {"0": h(w), "1": h(w)}
    if mlx:
        out["mean"] = "multiply"
    return out


def attention(layer, mlx):
    """Two query heads of two lanes on one key/value head; RoPE at frequency 1 (head dim 2,
    theta 10000); q/k norms of scale 16; torch divides the scores by sqrt(2), MLX's fused
    attention scales by f32(2^-1/2)."""
    scale = ({"scale": "f32(f64(1/sqrt(2)))"} if mlx else
             {"scale": "f32(f64(sqrt(2)))", "scale_op": "divide"})
    return {"heads": ["h0", "h1"], "head_dim": 2, "kv_heads": ["kv"],
            "W_Q": table(layer.q, SLOTS, LANES), "W_K": table(layer.k, SLOTS, KV),
            "W_V": table(layer.v, SLOTS, KV), "W_O": table(layer.o, LANES, SLOTS),
            "q_norm": norm(mlx, 16.0), "k_norm": norm(mlx, 16.0), "rope": {"freq": "1"},
            **scale, "softmax": "softmax"}


def live(layer):
    """The units whose gate row is not all zero."""
    return [j for j in range(layer.gate.shape[0]) if layer.gate[j].any()]


def mlp(layer):
    """down(silu(gate(x)) * up(x)) over the live units."""
    units = live(layer)
    names = [f"u{j}" for j in units]
    return {"units": names, "act": "silu", "gated": True,
            "W_gate": table(layer.gate[units], SLOTS, names),
            "W_in": table(layer.up[units], SLOTS, names),
            "W_out": table(layer.down[:, units], names, SLOTS)}


def ties(layers):
    """up's one vector v, copied to every unit: one parameter per slot."""
    out = []
    for n, layer in enumerate(layers):
        units = live(layer)
        for i, s in enumerate(SLOTS):
            if len(units) > 1 and layer.up[units[0], i] != 0:
                assert all(layer.up[j, i] == layer.up[units[0], i] for j in units)
                out.append([f"blocks.{n}.mlp.W_in[{s}][u{j}]" for j in units])
    return out


def head(A=None, B=None, W=None):
    """The readout: rank 2, logits = (x B^T) A^T, or the full W [10, 5]."""
    if W is not None:
        return {"kind": "linear", "W_U": table(W, SLOTS, [str(t) for t in range(10)])}
    return {"kind": "linear",
            "W_U": {"inner": ["t0", "t1"], "A": table(B, SLOTS, ["t0", "t1"]),
                    "B": table(A, ["t0", "t1"], [str(t) for t in range(10)])}}


def qwen_rank1(name, about, embed, layers, readout, mlx=False):
    """The model file: ``embed`` [10, 5], two ``Layer``s, ``readout`` from ``head``."""
    doc = {
        "format": "tinyadder-model", "version": 1, "name": name, "about": about,
        "vocab": [str(t) for t in range(10)], "prompt": PROMPT, "slots": SLOTS,
        "embed": {"width": 5, "W_E": {str(t): {s: h(embed[t, i]) for i, s in enumerate(SLOTS)
                                               if embed[t, i] != 0} for t in range(10)}},
        "blocks": [{"width_in": 5, "width_out": 5, "ln1": norm(mlx),
                    "attn": attention(layer, mlx), "ln2": norm(mlx),
                    "mlp": mlp(layer)} for layer in layers],
        "ln_final": norm(mlx), "unembed": readout, "ties": ties(layers),
    }
    return write_model(name, doc)


def svd_note(versions):
    return ("the rank-2 head logits = (x B^T) A^T whose factors A (10x2), B (2x5) the module "
            "fits at load by np.linalg.svd of the float32 LM_HEAD_WEIGHT in its source "
            "(a = u[:, :2] s[:2], b = vt[:2]); the fitted values are facts of that run: "
            f"{versions}, {platform.machine()} {platform.system()}, Python "
            f"{platform.python_version()}")


def layer_of(model, n):
    """Layer n of the torch module as float32 arrays; every rank-1 map as its table."""
    t = model.layers[n]
    a = t.self_attn
    f = lambda x: x.detach().numpy()  # noqa: E731
    gate = f(t.gate_proj.W23) if n == 0 else f(t.gate_proj.weight)
    if n == 0:  # SparseGateProj0: rows on slots 0..2, a zero unit appended
        gate = np.concatenate([np.pad(gate, ((0, 0), (0, 2))), np.zeros((1, 5), np.float32)])
    return Layer(q=outer(f(a.q_proj.u), f(a.q_proj.shared_v)),
                 k=outer(f(a.k_proj.u), f(a.k_proj.shared_v)),
                 v=outer(f(a.v_proj.shared_u), f(a.v_proj.shared_v)),
                 o=outer(f(a.o_proj.u), f(a.o_proj.shared_v)),
                 gate=gate, up=outer(f(t.up_proj.shared_u), f(t.up_proj.v)),
                 down=outer(f(t.down_proj.u), f(t.down_proj.v)))


def convert(model):
    embed = (model.embed_tokens.A @ model.embed_tokens.B).detach().numpy()
    layers = [layer_of(model, n) for n in range(2)]
    head_ = head(A=model.lm_head.A.detach().numpy(), B=model.lm_head.B.detach().numpy())
    about = {
        "title": "bingbangboom-lab 148p (hand-coded; 2L Qwen3, d=5, 2h/1kv, hd=2, ff=3)",
        "author": "bingbangboom-lab", "params_claimed": 148, "dtype": "float32",
        "family": "qwen-svd",
        "source": {"repo": REPO, "path": PATH, "commit": COMMIT, "url": URL},
        "notes": "The original's module after set_weights: its constants as float32, and "
                 + svd_note(f"numpy {np.__version__} (OpenBLAS), torch {torch.__version__}")
                 + ". The same network as bingbangboom-lab-87 stored otherwise: every "
                 "projection a rank-1 product (x . v) u, written here as its table u v^T "
                 "(each product exact); the embedding A[t] B with A = (1, t), "
                 "B = (100, 0, 0, 0, 0; 0, 1, 0, 0, 0), written as its rows (100, t); q and "
                 "k share v = e0, and the attention's v and o and the up-projection's u are "
                 "shared by both layers. Layer 0's sparse gate appends a zero unit (SiLU(0) "
                 "times a zero down weight), left out. 148 = 143 trainable + 5 frozen "
                 "(sum(numel) of every parameter: head 30, embedding 20 + 10, shared vectors "
                 "5 + 5 + 4 + 2 + 3, per layer q 4, k 2, o 5, gate 6 or 15, up 5, down 5 + "
                 "3). Prompt 0 a-reversed 0 0 b-reversed 0; 11 sum digits least significant "
                 "first; norms x * rsqrt(mean(x^2) + 1e-6) without weight, q/k norms times 16; "
                 "RoPE on one lane pair at frequency 1; scores divided by sqrt(2). Converted by "
                 "tools/convert/bingbangboom_148.py.",
    }
    return qwen_rank1(NAME, about, embed, layers, head_)


def main(path):
    spec = importlib.util.spec_from_file_location("bbl148", path)
    src = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(src)
    model = src.Qwen3_148()
    src.set_weights(model)
    model.eval()
    assert sum(p.numel() for p in model.parameters()) == 148
    print("wrote", convert(model), flush=True)
    record_original(NAME, PATH, src, model)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main(sys.argv[1])
