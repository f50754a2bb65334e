"""Convert xangma-197 (AdderBoard, hand-coded: xangma-177 with the full 10x5 head in place of
its SVD factors) into tinyadder/models/board/xangma-197.json, and record the original's
answers as the board fixture. Run once, as xangma_177.py, on the original's source
(Kiguli/AdderBoard submissions/hand_coded/xangma_197p.py):

    python tools/convert/xangma_197.py /path/to/xangma_197p.py

AdderBoard's 197 is the source's last variant, rank1+embed2+sparse_gate0+no_norm_weight
(197 = the sizes of every array it holds); nothing of it is fitted at load.
"""

import sys

import numpy as np

from bingbangboom_148 import head
from xangma_177 import MLX_NOTE, convert, count, fixture, load

PATH = "submissions/hand_coded/xangma_197p.py"
URL = "https://gist.github.com/xangma/c538a7a9d415f16e61f7bb26ae5cf6b0"
VARIANT = "rank1+embed2+sparse_gate0+no_norm_weight"


def main(path):
    src = load(path, "xangma197")
    model = src.build_magic_model(VARIANT)
    assert count(model) == 197
    notes = (f"The original's variant {VARIANT} (AdderBoard's 197) after build_magic_model: "
             "its constants as float32. xangma-177's network with the full head, the source's "
             "10x5 LM_HEAD_WEIGHT (the matrix whose SVD factors bingbangboom-lab-87 and "
             "xangma-177 use): every projection a rank-1 product (x . v) u, written here as "
             "its table u v^T (each product exact); the embedding A[t] B with A = (1, t), "
             "B = (100, 0, 0, 0, 0; 0, 1, 0, 0, 0), written as its rows (100, t). Layer 0's "
             "sparse gate appends a zero unit (SiLU(0) times a zero down weight), left out. "
             "197 = the sizes of every array (the source's count): head 50, embedding "
             "20 + 10, per layer q 4 + 5, k, v 2 + 5, o 5 + 4, up 3 + 5, down 5 + 3, gate 6 "
             "or 15. " + MLX_NOTE + " Converted by tools/convert/xangma_197.py.")
    readout = head(W=np.array(model.lm_head.weight))
    print("wrote", convert(model, "xangma-197", 197, PATH, URL, readout, notes), flush=True)
    fixture(src, model, "xangma-197", PATH)


if __name__ == "__main__":
    main(sys.argv[1])
