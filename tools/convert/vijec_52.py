"""Convert Enara Vijil's 52p AdderBoard submission (vijec/AdderBoard-Submission) into
tinyadder/models/board/vijec-52.json and record its own answers (tests/fixtures/board/
vijec-52.json.gz). Run once, in a scratch environment with torch, from tools/convert/:

    git -C MIRROR archive COMMIT submission-52 | tar -x -C /tmp/vijec
    /path/to/venv/bin/python vijec_52.py /tmp/vijec/submission-52

It imports the submission's own code from that directory (nothing of it is copied here), reads
every weight of checkpoints/best.pt as its exact float32 value, and computes the circular-arc
embedding table as the original's forward() does (float32, torch's cos and sin: those 20
floats are facts of the original program on this platform).

Mapping (tools/convert/common.py, qwen_tied): RoPE on interleaved pairs, so q and k (and their
shared norm) are written in lane order 0, 2, 1, 3; v is k's projection before its norm
(tie_kv); the output map is q's weight transposed (tie_qo); ln1, ln2 and the final norm are
one RMSNorm (shared)."""

import platform
import sys
from pathlib import Path

import torch

from common import greedy_logits, qwen_tied, record

REPO, COMMIT = "vijec/AdderBoard-Submission", "2d6f7510bfa7b3a7c041117790bf30effdf81bc4"


def main(submission):
    sys.path.insert(0, str(submission))
    import submission_52p as sub  # the original's module, from its own directory
    from data import encode

    model, meta = sub.build_model()
    sd = {k: v.detach() for k, v in model.state_dict().items()}
    with torch.no_grad():
        emb = model._compute_embedding_table()
    w = sd["block.ln1.weight"]
    assert torch.equal(w, sd["block.ln2.weight"]) and torch.equal(w, sd["final_norm.weight"])
    source = {"repo": REPO, "path": "submission-52/checkpoints/best.pt + "
              "submission-52/model/qwen3.py + submission-52/model/circular_arc.py",
              "commit": COMMIT, "url": f"https://github.com/{REPO}"}
    about = {
        "title": "Enara Vijil 52P (trained; 1L Qwen3, d=3, 1h/1kv, hd=4, ff=2, circular-arc "
                 "embedding, tied K=V and Q=O, shared norms)",
        "author": "vijec", "params_claimed": meta["params"], "dtype": "float32",
        "family": "trained", "source": source,
        "notes": "Trained (Grokfast-EMA, targeted fine-tuning); every weight is the "
                 "checkpoint's float32 value, exactly (an exact fraction, as the format "
                 "writes it; the converter reads it as hexadecimal). 52 = unique "
                 "Parameters: the arc's A, start, stride 3, the shared RMSNorm 3, q_proj 12, "
                 "k_proj 12 (also v), the shared q/k norm 4, gate 6, up 6, down 6. The "
                 "embedding table (and the tied head) is computed from the arc's 3 "
                 "parameters in forward(): emb[d] = (A cos(start + d stride), A sin(start + "
                 "d stride), 0); the file holds the 20 float32 values the original computes, "
                 f"recorded with torch {torch.__version__} on {platform.machine()} "
                 f"{platform.system()} (torch's float32 cos and sin). RoPE theta 3 on "
                 "interleaved pairs, written here as (c, c + 2): q, k and their norm in lane "
                 "order 0, 2, 1, 3. Prompt [0] rev(a) [0 0] rev(b) [0], 11 sum digits least "
                 "significant first. Converted by tools/convert/vijec_52.py.",
    }
    qn = sd["block.attn.q_norm.weight"]
    qwen_tied("vijec-52", about, emb, w, w, w, sd["block.attn.q_proj.weight"],
              sd["block.attn.k_proj.weight"], qn, qn, sd["block.mlp.gate_proj.weight"],
              sd["block.mlp.up_proj.weight"], sd["block.mlp.down_proj.weight"])
    record("vijec-52", source, lambda a, b: sub.add(model, a, b),
           lambda a, b: greedy_logits(model, encode(a, b)))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
