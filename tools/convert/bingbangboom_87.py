"""Convert bingbangboom-lab-87 (AdderBoard, hand-coded: a two-layer Qwen3-style model whose
low-rank head is an SVD fitted when the module loads) into
tinyadder/models/board/bingbangboom-lab-87.json, and record the original's answers as the
board fixture. Run once, in a scratch environment with torch and numpy, on the original's
source (Kiguli/AdderBoard submissions/hand_coded/bingbangboom-lab_87p.py):

    python tools/convert/bingbangboom_87.py /path/to/bingbangboom-lab_87p.py

Every weight is the value the original's ``set_weights`` leaves in its module (the
constants of its source as float32; the head's factors A, B as numpy's SVD of the source's
LM_HEAD_WEIGHT gives them on the platform stated in ``about``). The fixture is the original's
own ``_generate_output_batch`` run on one pair at a time.
"""

import importlib.util
import platform
import sys

import numpy
import torch

from common import PROMPT, h, record, write_model

REPO, COMMIT = "Kiguli/AdderBoard", "e5167440c8e9d0ba167f54e0882bc525f8d06a84"
PATH = "submissions/hand_coded/bingbangboom-lab_87p.py"
URL = "https://gist.github.com/bingbangboom-lab/ec367a6078e9ac2c5748dbbb78eae2a1"
NAME = "bingbangboom-lab-87"
SLOTS = [f"x{i}" for i in range(5)]
NORM = {"kind": "rms", "eps": "1/1000000"}  # x * rsqrt(mean(x^2) + 1e-6), scale 1.0 (exact)


def qk_norm(scale):
    return {**NORM, "w": {"0": h(scale), "1": h(scale)}}


def attention(attn):
    """Two query heads of two lanes on one key/value head; q = x0 u, k = x0 u, v = (x1, 0);
    the output map adds lane 0 of both heads into one slot."""
    u, k = attn.q_proj.u, attn.k_proj.u
    out = {0: "x2", 1: "x4"}[attn.layer_idx]
    w = (attn.o_proj.w0, attn.o_proj.w2)
    return {"heads": ["h0", "h1"], "head_dim": 2, "kv_heads": ["kv"],
            "W_Q": {"x0": {"h0.0": h(u[0]), "h0.1": h(u[1]), "h1.0": h(u[2]),
                           "h1.1": h(u[3])}},
            "W_K": {"x0": {"kv.0": h(k[0]), "kv.1": h(k[1])}},
            "W_V": {"x1": {"kv.0": h(attn.v_proj.copy_scale)}},
            "W_O": {"h0.0": {out: h(w[0])}, "h1.0": {out: h(w[1])}},
            "q_norm": qk_norm(attn.q_norm.scale_param), "k_norm": qk_norm(attn.k_norm.scale_param),
            "rope": {"freq": "1"}, "scale": "f32(f64(sqrt(2)))", "scale_op": "divide",
            "softmax": "softmax"}


def mlp(layer):
    """down(silu(gate(x)) * up(x)); up is one sum over the slots, copied to every unit."""
    if layer.layer_idx == 0:
        gate, rows, units = layer.gate_proj.W23, SLOTS[:3], ["u0", "u1"]
        down = {"u0": {"x3": h(layer.down_proj.w0)}, "u1": {"x3": h(layer.down_proj.w1)}}
    else:
        gate, rows, units = layer.gate_proj.weight, SLOTS, ["u0", "u1", "u2"]
        d = layer.down_proj
        down = {"u0": {"x2": h(d.w0)}, "u1": {"x2": h(d.w1)}, "u2": {"x2": h(d.w2)}}
    v = layer.up_proj.v
    return {"units": units, "act": "silu", "gated": True,
            "W_gate": {s: {u: h(gate[j, i]) for j, u in enumerate(units)}
                       for i, s in enumerate(rows)},
            "W_in": {s: {u: h(v[i]) for u in units} for i, s in enumerate(rows)},
            "W_out": down}


def convert(model):
    A, B = model.lm_head.A, model.lm_head.B
    layers = list(model.layers)
    ties = [[f"blocks.{n}.mlp.W_in[{s}][{u}]" for u in mlp(layer)["units"]]
            for n, layer in enumerate(layers) for s in (SLOTS[:3] if n == 0 else SLOTS)]
    about = {
        "title": "bingbangboom-lab 87p (hand-coded; 2L Qwen3, d=5, 2h/1kv, hd=2, ff=3)",
        "author": "bingbangboom-lab", "params_claimed": 87, "dtype": "float32",
        "family": "qwen-svd",
        "source": {"repo": REPO, "path": PATH, "commit": COMMIT, "url": URL},
        "notes": "The original's module after set_weights: its constants as float32, and the "
                 "rank-2 head logits = (x B^T) A^T whose factors A (10x2), B (2x5) the module "
                 "fits at load by np.linalg.svd of the float32 LM_HEAD_WEIGHT in its source "
                 "(a = u[:, :2] s[:2], b = vt[:2]); the fitted values are facts of that run: "
                 f"numpy {numpy.__version__} (OpenBLAS), torch {torch.__version__}, "
                 f"{platform.machine()} {platform.system()}, Python "
                 f"{platform.python_version()}. 87 = 71 trainable + 16 frozen "
                 "(sum(numel) of every parameter: head 30, per layer q 4, k 2, gate 6 or 15, "
                 "up 3 or 5; frozen: the embedding's base 100, per layer v's copy scale, the "
                 "output map's two 1s, the q/k norms' scale 16, down's 2 or 3). Prompt "
                 "0 a-reversed 0 0 b-reversed 0; 11 sum digits least significant first; "
                 "norms x * rsqrt(mean(x^2) + 1e-6) without weight; RoPE on one lane pair "
                 "at frequency 1; scores divided by sqrt(2).",
    }
    return {
        "format": "tinyadder-model", "version": 1, "name": NAME, "about": about,
        "vocab": [str(t) for t in range(10)], "prompt": PROMPT, "slots": SLOTS,
        "embed": {"width": 5, "W_E": {str(t): ({"x0": h(model.embed_tokens.base)}
                                                | ({"x1": h(float(t))} if t else {}))
                                      for t in range(10)}},
        "blocks": [{"width_in": 5, "width_out": 5, "ln1": dict(NORM),
                    "attn": attention(layer.self_attn), "ln2": dict(NORM),
                    "mlp": mlp(layer)} for layer in layers],
        "ln_final": dict(NORM),
        "unembed": {"kind": "linear",
                    "W_U": {"inner": ["t0", "t1"],
                            "A": {s: {f"t{r}": h(B[r, i]) for r in range(2)}
                                  for i, s in enumerate(SLOTS)},
                            "B": {f"t{r}": {str(t): h(A[t, r]) for t in range(10)}
                                  for r in range(2)}}},
        "ties": ties,
    }


def main(path):
    spec = importlib.util.spec_from_file_location("bbl87", path)
    src = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(src)
    model = src.Qwen3_71Params()
    src.set_weights(model)
    model.eval()
    assert sum(p.numel() for p in model.parameters()) == 87
    print("wrote", write_model(NAME, convert(model)), flush=True)
    record_original(NAME, PATH, src, model)


def record_original(name, path, src, model):
    """The fixture of a bingbangboom-lab submission (module ``src``, in Kiguli/AdderBoard at
    ``path``) run as its own code runs: _generate_output_batch on one pair; the logits of
    11 greedy steps from its own encoding."""
    cpu = torch.device("cpu")

    def add(a, b):
        return int(src._generate_output_batch(model, [(a, b)], cpu)[0][::-1])

    def step_logits(a, b):
        seq, rows = src._encode_addends_internal(a, b), []
        with torch.no_grad():
            for _ in range(11):
                row = model(torch.tensor([seq]))[0, -1, :]
                rows.append(row.tolist())
                seq.append(int(row.argmax()))
        return rows

    record(name, {"repo": REPO, "path": path, "commit": COMMIT}, add, step_logits,
           note="11 steps (the sum's digits), as the original's _generate_output_batch "
                "on one pair")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main(sys.argv[1])
