"""Convert yinglunz-456 (AdderBoard, trained: a 456-parameter low-rank transformer) into
tinyadder/models/board/yinglunz-456.json, and record the original's answers as the board
fixture. Run once, in a scratch environment with torch, from a checkout of the original's
repository (its src/ on the path, its checkpoint beside it):

    python tools/convert/yinglunz_456.py /path/to/checkout

The architecture is rezabyt-311's (which derives from this one): one block, RMSNorm
without bias (x / sqrt(mean(x^2) + eps) * w, eps 1e-8), q, k, v from one shared A (rank 3)
with k = v (shareA_tieKV), a rank-2 output map, a rank-3 GELU FFN, rank-3 learned positions,
the head tied to the token table.
"""

import sys
from pathlib import Path

import torch

from common import h, record, write_model

REPO = "yinglunz/A-456-Parameter-Transformer-Solves-10-Digit-Addition"
COMMIT = "1fb37db3fb7dd0df9da51f1d91b86b3f5e507e85"
PATH = "checkpoints/best_456p_s43.pt"
NAME = "yinglunz-456"
VOCAB = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "+", "=", "<PAD>", "<EOS>"]
EPS = "f32(f64(1/100000000))"  # the norm adds the Python float 1e-8 to a float32 mean


def factored(A, B, rows, inner, cols):
    """{inner, A: {row: {inner: hex}}, B: {inner: {col: hex}}} of x @ A @ B (A [rows, r],
    B [r, cols]): every entry, zeros too, so that ties name them."""
    return {"inner": inner,
            "A": {r: {k: h(A[i, j]) for j, k in enumerate(inner)} for i, r in enumerate(rows)},
            "B": {k: {c: h(B[j, i]) for i, c in enumerate(cols)} for j, k in enumerate(inner)}}


def norm(w, slots):
    return {"kind": "rms", "eps": EPS, "w": {s: h(v) for s, v in zip(slots, w)},
            "apply": "divide"}


def document(name, about, sd, cfg, qkv, ties, normed):
    """The model file of this repository's one-block low-rank decoder: token table, factored
    learned positions, the q, k, v maps ``qkv`` (with their ``ties``), factored output and
    GELU FFN, the head tied to the token table; ``normed(prefix)`` is the norm of the state
    dict's ``prefix`` (ln1, ln2, ln_f)."""
    d, ff = cfg["d_model"], cfg["d_ff"]
    slots = [f"x{i}" for i in range(d)]
    lanes = [f"h.{i}" for i in range(d)]
    units = [f"u{i}" for i in range(ff)]
    pos = sd["pos_emb.A"].shape[0]
    E = sd["token_emb.weight"]
    return {
        "format": "tinyadder-model", "version": 1, "name": name, "about": about,
        "vocab": VOCAB,
        "prompt": {"digits": 10, "question": ["a", "+", "b", "="], "operands": "msb",
                   "answer": "lsb", "answer_digits": 11},
        "slots": slots,
        "embed": {"width": d,
                  "W_E": {t: {s: h(E[i, j]) for j, s in enumerate(slots)}
                          for i, t in enumerate(VOCAB)},
                  "W_pos": factored(sd["pos_emb.A"], sd["pos_emb.B"],
                                    [str(p) for p in range(pos)],
                                    [f"q{i}" for i in range(cfg["pos_rank"])], slots),
                  "pos_role": "learned"},
        "blocks": [{
            "width_in": d, "width_out": d,
            "ln1": normed("blocks.0.ln1"),
            "attn": {"heads": ["h"], "head_dim": d, **qkv,
                     "W_O": factored(sd["blocks.0.attn.proj.A"], sd["blocks.0.attn.proj.B"],
                                     lanes, [f"p{i}" for i in range(cfg["attn_out_rank"])],
                                     slots),
                     "scale": f"f32(f64(sqrt({d})))", "scale_op": "divide",
                     "softmax": "softmax"},
            "ln2": normed("blocks.0.ln2"),
            "mlp": {"units": units, "act": "gelu", "gated": False,
                    "W_in": factored(sd["blocks.0.mlp.fc1.A"], sd["blocks.0.mlp.fc1.B"],
                                     slots, [f"a{i}" for i in range(cfg["ffn_rank"])], units),
                    "W_out": factored(sd["blocks.0.mlp.fc2.A"], sd["blocks.0.mlp.fc2.B"],
                                      units, [f"b{i}" for i in range(cfg["ffn_rank"])],
                                      slots)}}],
        "ln_final": normed("ln_f"),
        "unembed": {"kind": "tied"},
        "roles": {"W_E": "embedding", "W_pos.A": "weight", "W_pos.B": "weight"},
        "ties": ties,
    }

def convert(sd, cfg):
    d = cfg["d_model"]
    slots = [f"x{i}" for i in range(d)]
    lanes = [f"h.{i}" for i in range(d)]
    r_qkv = [f"r{i}" for i in range(cfg["qkv_rank"])]
    A = sd["blocks.0.attn.qkv_A"]
    qkv = {m: factored(A, sd[f"blocks.0.attn.qkv_B{b}"], slots, r_qkv, lanes)
           for m, b in (("W_Q", "q"), ("W_K", "kv"), ("W_V", "kv"))}
    ties = [[f"blocks.0.attn.{m}.A[{s}][{r}]" for m in ("W_Q", "W_K", "W_V")]
            for s in slots for r in r_qkv]
    ties += [[f"blocks.0.attn.{m}.B[{r}][{c}]" for m in ("W_K", "W_V")]
             for r in r_qkv for c in lanes]
    about = {
        "title": "A 456-Parameter Transformer Solves 10-Digit Addition (trained; 1L decoder, "
                 "d=7, 1h, ff=14, rank-3 factors, shareA tied-KV, rank-2 attention output)",
        "author": "yinglunz", "params_claimed": 456, "dtype": "float32", "family": "trained",
        "source": {"repo": REPO, "path": PATH, "commit": COMMIT,
                   "url": f"https://github.com/{REPO}"},
        "notes": "Trained (grokking): the weights are the checkpoint's float32 values, "
                 "exactly (seed 43). 456 = unique Parameters: token_emb 98 (the head is tied "
                 "to it), pos A 99 + B 21, ln1 7, qkv_A 21 (shared by q, k, v), qkv_Bq 21, "
                 "qkv_Bkv 21 (k = v), proj 14 + 14 (rank 2), ln2 7, fc1 21 + 42, fc2 42 + 21, "
                 "ln_f 7. Prompt str(a).zfill(10)+'+'+str(b).zfill(10)+'='; 11 sum digits least "
                 "significant first, then <EOS> (the 12th token is not read for the answer). "
                 "RMSNorm eps 1e-8 divides by the root; scores divided by sqrt(7). Read from "
                 "the repository's src/model.py, src/data.py and src/eval.py; "
                 "Kiguli/AdderBoard's copy, submissions/trained/yinglunz_456p.py at "
                 "e5167440c8e9d0ba167f54e0882bc525f8d06a84, is its evaluate_checkpoints.py.",
    }
    return document(NAME, about, sd, cfg, qkv, ties,
                    lambda prefix: norm(sd[f"{prefix}.weight"], slots))


def main(checkout):
    sys.path.insert(0, str(checkout))
    from src.data import postprocess, preprocess
    from src.model import ModelConfig, TinyDecoderLM
    ckpt = torch.load(Path(checkout) / PATH, map_location="cpu", weights_only=False)
    cfg = ckpt["model_config"]
    assert (cfg["d_model"], cfg["n_layer"], cfg["n_head"], cfg["tie_qkv"], cfg["use_rmsnorm"]) \
        == (7, 1, 1, "shareA_tieKV", True), cfg
    model = TinyDecoderLM(ModelConfig(**cfg))
    model.load_state_dict(ckpt["model_state"])
    model.eval()
    sd = {k: v for k, v in model.state_dict().items()}
    assert sum(p.numel() for p in model.parameters()) == 456
    print("wrote", write_model(NAME, convert(sd, cfg)), flush=True)
    record_original(NAME, PATH, model, preprocess, postprocess)


def record_original(name, path, model, preprocess, postprocess):
    """The fixture of a checkpoint of this repository run as its own code runs it: its
    preprocess, generate() of 12 tokens and postprocess; every token's logit at 11 steps."""
    def add(a, b):
        with torch.no_grad():
            out = model.generate(torch.tensor([preprocess(a, b)]), max_new_tokens=12)
        return postprocess(out[0, 22:].tolist())

    def step_logits(a, b):
        x, rows = torch.tensor([preprocess(a, b)]), []
        with torch.no_grad():
            for _ in range(11):
                row = model(x)[0][0, -1, :]
                rows.append(row.tolist())
                x = torch.cat([x, row.argmax().view(1, 1)], dim=1)
        return rows

    source = {"repo": REPO, "path": path, "commit": COMMIT}
    record(name, source, add, step_logits,
           note="11 steps (the sum's digits), every token's logit, as the original's "
                "generate()")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main(sys.argv[1])
