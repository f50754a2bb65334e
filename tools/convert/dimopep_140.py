"""Convert dimopep's 140p trained AdderBoard submission (weights inline in its submission,
Kiguli/AdderBoard submissions/trained/dimopep_140p.py) into tinyadder/models/board/
dimopep-140.json and record its own answers (tests/fixtures/board/dimopep-140.json.gz). Run
once, in a scratch environment with torch, from the repository's root:

    git -C MIRROR show COMMIT:submissions/trained/dimopep_140p.py > /tmp/dimopep_140p.py
    /path/to/venv/bin/python tools/convert/dimopep_140.py /tmp/dimopep_140p.py

The submission is imported from that path (nothing of it is copied here). Its RMSNorm divides
by the root (x / sqrt(mean(x^2) + eps) * w), its RoPE turns interleaved pairs, so q, k and
their norms are written in lane order 0, 2, 1, 3 (tools/convert/common.py)."""

import importlib.util
import platform
import sys

import torch

from common import greedy_logits, qwen_tied, record

REPO, COMMIT = "Kiguli/AdderBoard", "e5167440c8e9d0ba167f54e0882bc525f8d06a84"
PATH = "submissions/trained/dimopep_140p.py"
URL = "https://gist.github.com/dimopep/27158a2b0ed983e32ee8f39af6e5a134"


def main(path):
    spec = importlib.util.spec_from_file_location("dimopep_140p", path)
    sub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sub)
    model, meta = sub.build_model()
    sd = {k: v.detach() for k, v in model.state_dict().items()}
    source = {"repo": REPO, "path": PATH, "commit": COMMIT, "url": URL}
    about = {
        "title": "dimopep 140p (trained; 1L decoder, d=4, 1h/1kv, hd=4, ff=4, tied K=V, "
                 "O=Q^T, tied head, q/k norm)",
        "author": "dimopep", "params_claimed": meta["params"], "dtype": "float32",
        "family": "trained", "source": source,
        "notes": "Trained (autoregressive teacher-forced loss, AdamW, 20K steps); every "
                 "weight is the float32 value of the submission's inline STATE_DICT, exactly. "
                 "140 = unique Parameters: embedding 40 (also the head), norm1 4, W_q 16 "
                 "(also W_O), W_kv 16 (k and v), q_norm 4, k_norm 4, norm2 4, W_gate 16, "
                 "W_up 16, W_down 16, norm_final 4. RMSNorm x / sqrt(mean(x^2) + 1e-6) * w; "
                 "RoPE theta 3 on interleaved pairs, written as (c, c + 2): q, k and their "
                 "norms in lane order 0, 2, 1, 3; softmax after the -inf mask, scale 1/2. "
                 "Prompt [0] rev(a) [0 0] rev(b) [0], 11 sum digits least significant first. "
                 f"Converted by tools/convert/dimopep_140.py (torch {torch.__version__}, "
                 f"{platform.machine()} {platform.system()}).",
    }
    qwen_tied("dimopep-140", about, sd["embedding.weight"], sd["norm1.weight"],
              sd["norm2.weight"], sd["norm_final.weight"], sd["W_q.weight"],
              sd["W_kv.weight"], sd["q_norm.weight"], sd["k_norm.weight"],
              sd["W_gate.weight"], sd["W_up.weight"], sd["W_down.weight"], apply="divide")

    def encode(a, b):
        return ([0] + [int(c) for c in reversed(f"{a:010d}")] + [0, 0]
                + [int(c) for c in reversed(f"{b:010d}")] + [0])

    record("dimopep-140", source, lambda a, b: sub.add(model, a, b),
           lambda a, b: greedy_logits(model, encode(a, b)))


if __name__ == "__main__":
    main(sys.argv[1])
