"""Convert yinglunz-512 (AdderBoard, trained: a 512-parameter low-rank transformer with
LayerNorm) into tinyadder/models/board/yinglunz-512.json, and record the original's answers
as the board fixture. Run once, in a scratch environment with torch, from a checkout of the
original's repository (its src/ on the path, its checkpoint beside it):

    python tools/convert/yinglunz_512.py /path/to/checkout [model|fixture|both]

The architecture is yinglunz-456's with LayerNorm (weight and bias, eps 1e-5, torch's
nn.LayerNorm) instead of RMSNorm and q, k, v from one rank-3 map x @ A @ B (B's 21 columns
chunked into q, k, v), a rank-3 output map, a rank-3 GELU FFN, rank-3 learned positions, the
head tied to the token table.
"""

import sys
from pathlib import Path

import torch

from common import h, write_model
from yinglunz_456 import document, factored, record_original

REPO = "yinglunz/A-456-Parameter-Transformer-Solves-10-Digit-Addition"
COMMIT = "1fb37db3fb7dd0df9da51f1d91b86b3f5e507e85"
PATH = "checkpoints/best_512params.pt"
NAME = "yinglunz-512"
EPS = "f32(f64(1/100000))"  # nn.LayerNorm's eps 1e-5, a double the kernel casts to float32


def layer_norm(w, b, slots):
    return {"kind": "layer", "eps": EPS, "w": {s: h(v) for s, v in zip(slots, w)},
            "b": {s: h(v) for s, v in zip(slots, b)}}


def convert(sd, cfg):
    d = cfg["d_model"]
    slots = [f"x{i}" for i in range(d)]
    lanes = [f"h.{i}" for i in range(d)]
    r_qkv = [f"r{i}" for i in range(cfg["qkv_rank"])]
    A, B = sd["blocks.0.attn.qkv.A"], sd["blocks.0.attn.qkv.B"]
    qkv = {m: factored(A, B[:, i * d:(i + 1) * d], slots, r_qkv, lanes)
           for i, m in enumerate(("W_Q", "W_K", "W_V"))}
    ties = [[f"blocks.0.attn.{m}.A[{s}][{r}]" for m in ("W_Q", "W_K", "W_V")]
            for s in slots for r in r_qkv]
    about = {
        "title": "A 456-Parameter Transformer Solves 10-Digit Addition: the 512-parameter "
                 "checkpoint (trained; 1L decoder, d=7, 1h, ff=14, rank-3 factors, LayerNorm)",
        "author": "yinglunz", "params_claimed": 512, "dtype": "float32", "family": "trained",
        "source": {"repo": REPO, "path": PATH, "commit": COMMIT,
                   "url": f"https://github.com/{REPO}"},
        "notes": "Trained (grokking): the weights are the checkpoint's float32 values, "
                 "exactly. 512 = unique Parameters: token_emb 98 (the head is tied to it), "
                 "pos A 99 + B 21, ln1 7 + 7, qkv A 21 (shared by q, k, v) + B 63, proj 21 + "
                 "21, ln2 7 + 7, fc1 21 + 42, fc2 42 + 21, ln_f 7 + 7. Prompt "
                 "str(a).zfill(10)+'+'+str(b).zfill(10)+'='; 11 sum digits least significant "
                 "first, then <EOS> (the 12th token is not read for the answer). LayerNorm "
                 "(torch's nn.LayerNorm, eps 1e-5) with weight and bias; scores divided by "
                 "sqrt(7). Read from the repository's src/model.py, src/data.py and "
                 "src/eval.py.",
    }
    return document(NAME, about, sd, cfg, qkv, ties, lambda prefix: layer_norm(
        sd[f"{prefix}.weight"], sd[f"{prefix}.bias"], slots))


def main(checkout, what="both"):
    sys.path.insert(0, str(checkout))
    from src.data import postprocess, preprocess
    from src.model import ModelConfig, TinyDecoderLM
    ckpt = torch.load(Path(checkout) / PATH, map_location="cpu", weights_only=False)
    cfg = ckpt["model_config"]
    assert (cfg["d_model"], cfg["n_layer"], cfg["n_head"], cfg.get("tie_qkv", "none"),
            cfg.get("use_rmsnorm", False)) == (7, 1, 1, "none", False), cfg
    model = TinyDecoderLM(ModelConfig(**cfg))
    model.load_state_dict(ckpt["model_state"])
    model.eval()
    assert all(isinstance(m, torch.nn.LayerNorm) and m.eps == 1e-5
               for m in (model.blocks[0].ln1, model.blocks[0].ln2, model.ln_f))
    sd = {k: v for k, v in model.state_dict().items()}
    assert sum(p.numel() for p in model.parameters()) == 512
    if what in ("model", "both"):
        print("wrote", write_model(NAME, convert(sd, cfg)), flush=True)
    if what == "model":
        return

    record_original(NAME, PATH, model, preprocess, postprocess)

if __name__ == "__main__":
    torch.set_num_threads(1)
    main(*sys.argv[1:])
