"""Convert xangma-177 (AdderBoard, hand-coded: bingbangboom-lab-87's network in MLX, mlx_lm's
Qwen3 with every projection a rank-1 product, a factorized embedding and a rank-2 head that an
SVD fits when the weights are set) into tinyadder/models/board/xangma-177.json, and record the
original's answers as the board fixture. Run once, in a scratch environment with mlx (CPU),
mlx-lm, numpy and torch (tools/convert/common.py imports it), on the original's source
(Kiguli/AdderBoard submissions/hand_coded/xangma_177p.py):

    python tools/convert/xangma_177.py /path/to/xangma_177p.py

The source builds several variants; AdderBoard's 177 is its last,
rank1+embed2+sparse_gate0+no_norm_weight+lowrank_head2 (177 = the sizes of every array it
holds). Every weight is the value ``build_magic_model`` leaves in the model (its constants as
float32; the head's factors as numpy's SVD gives them on the platform stated in ``about``).
The fixture is the original's own ``_generate_output_batch`` in batches, as its self-test
runs it (every 50th pair also alone, which gives the same answer).
"""

import importlib.util
import platform
import sys

import numpy as np

from bingbangboom_148 import Layer, head, outer, qwen_rank1, svd_note
from common import cases, record

REPO, COMMIT = "Kiguli/AdderBoard", "e5167440c8e9d0ba167f54e0882bc525f8d06a84"
PATH = "submissions/hand_coded/xangma_177p.py"
URL = "https://gist.github.com/xangma/1c2a1b2f9ca871b1f15646eed60d10ab"
VARIANT = "rank1+embed2+sparse_gate0+no_norm_weight+lowrank_head2"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    src = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(src)
    return src


def layer_of(model, n):
    """Layer n of the MLX model as float32 arrays; every rank-1 map as its table."""
    t = model.model.layers[n]
    a, m = t.self_attn, t.mlp
    rank1 = lambda p: outer(np.array(p.u), np.array(p.v))  # noqa: E731
    gate = np.array(m.gate_proj.W23) if n == 0 else np.array(m.gate_proj.weight)
    if n == 0:  # SparseGateProj0: rows on slots 0..2, a zero unit appended
        gate = np.concatenate([np.pad(gate, ((0, 0), (0, 2))), np.zeros((1, 5), np.float32)])
    return Layer(q=rank1(a.q_proj), k=rank1(a.k_proj), v=rank1(a.v_proj), o=rank1(a.o_proj),
                 gate=gate, up=rank1(m.up_proj), down=rank1(m.down_proj))


def count(model):
    """The source's count: the sizes of every array the model holds."""
    from mlx.utils import tree_flatten
    return sum(v.size for _, v in tree_flatten(model.parameters()))


def versions():
    import mlx.core as mx
    import mlx_lm
    return f"mlx {mx.__version__} cpu, mlx-lm {mlx_lm.__version__}"


MLX_NOTE = ("Prompt 0 a-reversed 0 0 b-reversed 0; 11 sum digits least significant first; "
            "mx.fast.rms_norm without weight (the mean as sum * f32(1/5)), q/k norms times "
            "16; RoPE (mx.fast.rope, traditional=False, base 10000 at head dim 2: frequency "
            "1); the fused attention scales q by f32(2^-1/2). The fixture ran on MLX's Linux "
            "CPU backend; the author's versions are unknown.")


def convert(model, name, claimed, path, url, readout, notes):
    e = model.model.embed_tokens
    embed = np.array(e.A @ e.B)
    about = {
        "title": f"xangma {claimed}p (hand-coded; 2L Qwen3 in MLX, d=5, 2h/1kv, hd=2, ff=3)",
        "author": "xangma", "params_claimed": claimed, "dtype": "float32",
        "family": "qwen-svd",
        "source": {"repo": REPO, "path": path, "commit": COMMIT, "url": url},
        "notes": notes,
    }
    layers = [layer_of(model, n) for n in range(2)]
    return qwen_rank1(name, about, embed, layers, readout, mlx=True)


BATCH = 512  # the source's self-test runs batches (of 1,024); one pair alone gives the same


def batched(src, model):
    """The original's answers on every pair the fixture holds, from _generate_output_batch
    in batches of BATCH; every 50th pair run alone as well, which must give the same."""
    pairs = sorted({p for ps in (cases.verify_cases(), *cases.carry_pairs(20).values(),
                                 *cases.edge_suite().values()) for p in ps})
    answers = {}
    for i in range(0, len(pairs), BATCH):
        chunk = pairs[i:i + BATCH]
        answers.update(zip(chunk, (int(s[::-1]) for s in
                                   src._generate_output_batch(model, chunk))))
    for a, b in pairs[::50]:
        assert int(src._generate_output_batch(model, [(a, b)])[0][::-1]) == answers[a, b]
    print("batched answers:", len(answers), "pairs;", len(pairs[::50]), "alone agree",
          flush=True)
    return answers


def fixture(src, model, name, path):
    import mlx.core as mx
    answers = batched(src, model)

    def add(a, b):
        if (a, b) not in answers:  # the logits' pairs: run alone
            answers[a, b] = int(src._generate_output_batch(model, [(a, b)])[0][::-1])
        return answers[a, b]

    def step_logits(a, b):
        seq, rows = src._encode_addends_internal(a, b), []
        for _ in range(11):
            row = model(mx.array([seq], dtype=mx.int32))[0, -1]
            rows.append(np.array(row).tolist())
            seq.append(int(mx.argmax(row).item()))
        return rows

    record(name, {"repo": REPO, "path": path, "commit": COMMIT}, add, step_logits,
           note="11 steps (the sum's digits), as the original's model on one pair; the "
                f"answers from its _generate_output_batch in batches of {BATCH}, every 50th "
                "pair also alone (the same)", framework=versions())


def main(path):
    src = load(path, "xangma177")
    model = src.build_magic_model(VARIANT)
    assert count(model) == 177
    notes = (f"The original's variant {VARIANT} (AdderBoard's 177) after "
             "build_magic_model: its constants as float32, and "
             + svd_note(f"numpy {np.__version__} (OpenBLAS), {versions()}")
             + ". The same network as bingbangboom-lab-87 (its constants, its head's SVD) in "
             "MLX: every projection a rank-1 product (x . v) u, written here as its table "
             "u v^T (each product exact); the embedding A[t] B with A = (1, t), "
             "B = (100, 0, 0, 0, 0; 0, 1, 0, 0, 0), written as its rows (100, t). Layer 0's "
             "sparse gate appends a zero unit (SiLU(0) times a zero down weight), left out. "
             "177 = the sizes of every array (the source's count): head 20 + 10, embedding "
             "20 + 10, per layer q 4 + 5, k, v 2 + 5, o 5 + 4, up 3 + 5, down 5 + 3, gate 6 "
             "or 15. " + MLX_NOTE + " Converted by tools/convert/xangma_177.py.")
    readout = head(A=np.array(model.lm_head.A), B=np.array(model.lm_head.B))
    print("wrote", convert(model, "xangma-177", 177, PATH, URL, readout, notes), flush=True)
    print(platform.platform(), flush=True)
    fixture(src, model, "xangma-177", PATH)


if __name__ == "__main__":
    main(sys.argv[1])
