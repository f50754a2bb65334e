"""Two PyTorch float64 models of TinyAdder-36, the references of ``tinyadder bench`` (never a
part of the package: ``analysis.bench`` loads this file by its path, and only when torch is
importable; importing it does not import torch).

- ``from_weights(model)``: any model of TinyAdder-36's family, dense, from the package's own
  weight tables (``weights.tensors``): the textbook pass over the whole sequence.
- ``published()``: the published model written from its source's structure (docs/spec.md,
  N = 10), independent of the package's weights: the embedding built sparse and densified, each
  layer as dense float64 matmuls of the residual stream (5 slots, widened to 16), ALiBi added as
  slopes (j - i), the causal mask as -inf (``masked_fill``), softmax1 as
  exp(s) / (1 + sum exp(s)), the readout as the argmin of the first 10 slots plus the layer-1
  FFN's errors, each step re-running the whole token list under ``torch.inference_mode``.

Each returns ``generate(prompt, n_new) -> tokens`` (token ids, greedy), with torch on one
thread.
"""

import importlib
import math


def _torch():
    torch = importlib.import_module("torch")
    torch.set_num_threads(1)
    return torch


def from_weights(model):
    """The textbook pass over ``model``'s weight tables: q, k, v = x W + b; scores q_i k_j -
    slope (i - j); softmax1 weights e / (1 + sum e) over j <= i; z = pattern v;
    x += z W_O + b_O; x = [x, 0] + relu(x W_gate + b_gate) (x W_in + b_in) W_out + b_out;
    logits = -x[readout slots]."""
    from tinyadder.numbers import FloatSystem
    from tinyadder.weights import tensors

    torch = _torch()
    doubles = FloatSystem()
    t = {tensor.name: tensor for tensor in tensors(model)}

    def dense(name, slope=False):
        tensor = t[name]
        out = torch.zeros(len(tensor.rows), len(tensor.cols), dtype=torch.float64)
        for (r, c), value in tensor.entries.items():
            out[tensor.rows.index(r), tensor.cols.index(c)] = (
                doubles.slope(value) if slope else doubles.const(value))
        return out[0] if tensor.rows == (None,) else out

    blocks = []
    for i, block in enumerate(model.blocks):
        a, m = f"blocks.{i}.attn", f"blocks.{i}.mlp"
        blocks.append(([dense(f"{a}.{w}") for w in ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V",
                                                     "W_O", "b_O")],
                       dense(f"{a}.slopes", slope=True),
                       [dense(f"{m}.{w}") for w in ("W_gate", "b_gate", "W_in", "b_in",
                                                     "W_out", "b_out")],
                       block.width_out - block.width_in))
    embed = dense("W_E")
    readout = torch.tensor([model.slots.index(s) for s in model.readout.values()])
    token_of = [model.vocab.index(tok) for tok in model.readout]

    def logits(tokens):
        n = len(tokens)
        pos = torch.arange(n, dtype=torch.float64)
        dist = pos[:, None] - pos[None, :]
        x = embed[torch.tensor(tokens)]
        for (wq, bq, wk, bk, wv, bv, wo, bo), slopes, (wg, bg, wi, bi, wd, bd), pad in blocks:
            q, k, v = x @ wq + bq, x @ wk + bk, x @ wv + bv
            scores = q.T[:, :, None] * k.T[:, None, :] - slopes[:, None, None] * dist
            e = torch.exp(scores).masked_fill(dist < 0, 0.0)
            z = torch.einsum("hij,jh->ih", e / (1 + e.sum(-1, keepdim=True)), v)
            x = x + z @ wo + bo
            post = torch.relu(x @ wg + bg) * (x @ wi + bi)
            x = torch.nn.functional.pad(x, (0, pad)) + post @ wd + bd
        return -x[-1, readout]

    def generate(prompt, n_new):
        tokens = list(prompt)
        with torch.no_grad():
            for _ in range(n_new):
                tokens.append(token_of[int(torch.argmax(logits(tokens)))])
        return tokens

    return generate


# The published construction at N = 10 (docs/spec.md), in its own slot numbering.
EQ, SPECIAL, DIGIT, COUNT, SCALE = range(5)
TOKEN_EQ, TOKEN_BOS, TOKEN_EOS, TOKEN_PLUS = 10, 11, 12, 13


def published():
    """The published TinyAdder-36 at N = 10 as dense float64 layers (module docstring)."""
    torch = _torch()
    f64 = torch.float64
    # embedding: built as a sparse COO tensor, then densified
    entries = [(d, DIGIT, 10.0 * d) for d in range(1, 10)]
    entries += [(TOKEN_EQ, EQ, 1.0), (TOKEN_EQ, SPECIAL, 1.0), (TOKEN_BOS, SPECIAL, 1.0),
                (TOKEN_EOS, SPECIAL, 1.0), (TOKEN_PLUS, SPECIAL, 1.0)]
    rows, cols, values = zip(*entries)
    embed = torch.sparse_coo_tensor([rows, cols], values, (14, 5), dtype=f64).to_dense()

    # layer 0 attention: 5 heads of dimension 1, q = 1, identity output
    S = math.exp(-40 - math.log(10))
    w_q, b_q = torch.zeros(5, 5, dtype=f64), torch.ones(5, dtype=f64)
    w_k, b_k = torch.zeros(5, 5, dtype=f64), torch.zeros(5, dtype=f64)
    w_k[SPECIAL, 3], b_k[3] = 960.0, -1000.0
    w_v = torch.zeros(5, 5, dtype=f64)
    w_v[SPECIAL, 3], w_v[EQ, 3], w_v[EQ, 4] = 0.1 / S, -1.1 / S, 1.0
    slopes0 = torch.tensor([0, 0, 0, math.log(10), 0], dtype=f64)
    w_o0 = torch.eye(5, dtype=f64)

    # layer 0 FFN (ReGLU): 11 units into the new slots 5..15
    w_gate0, w_up0 = torch.zeros(5, 11, dtype=f64), torch.zeros(5, 11, dtype=f64)
    for u in range(10):
        w_gate0[SCALE, u] = 1.0
        w_up0[COUNT, u] = (u + 0.5) * 1e10 * 100
    w_gate0[DIGIT, 10], w_up0[COUNT, 10] = 1.0, 1e10
    w_down0 = torch.zeros(11, 16, dtype=f64)
    w_down0[torch.arange(11), torch.arange(5, 16)] = 1.0

    # layer 1 attention: q = k = 0, v = 100 digit_pos + 15 broadcast to all 16 slots
    w_q1, w_k1 = torch.zeros(16, 1, dtype=f64), torch.zeros(16, 1, dtype=f64)
    w_v1, b_v1 = torch.zeros(16, 1, dtype=f64), torch.full((1,), 15.0, dtype=f64)
    w_v1[15, 0] = 100.0
    w_o1 = torch.ones(1, 16, dtype=f64)

    # layer 1 FFN: relu(1e4 c_u) and relu(-1e4 c_u), up 100, both into error u
    w_gate1 = torch.zeros(16, 20, dtype=f64)
    w_down1 = torch.zeros(20, 10, dtype=f64)
    for u in range(10):
        w_gate1[5 + u, 2 * u], w_gate1[5 + u, 2 * u + 1] = 1e4, -1e4
        w_down1[2 * u, u] = w_down1[2 * u + 1, u] = 1.0
    b_up1 = torch.full((20,), 100.0, dtype=f64)

    def softmax1(scores):
        e = torch.exp(scores)
        return e / (1 + e.sum(-1, keepdim=True))

    def forward(tokens):
        n = len(tokens)
        x = embed[torch.tensor(tokens)]
        pos = torch.arange(n)
        later = pos[None, :] > pos[:, None]
        alibi = (pos[None, :] - pos[:, None]).to(f64)  # j - i
        q, k, v = x @ w_q + b_q, x @ w_k + b_k, x @ w_v
        scores = (q.T[:, :, None] * k.T[:, None, :] + slopes0[:, None, None] * alibi)
        pattern = softmax1(scores.masked_fill(later, -math.inf))
        z = torch.einsum("hij,jh->ih", pattern, v)
        x = x + z @ w_o0
        hidden = torch.relu(x @ w_gate0) * (x @ w_up0)
        x = torch.nn.functional.pad(x, (0, 11)) + hidden @ w_down0
        q1, k1, v1 = x @ w_q1, x @ w_k1, x @ w_v1 + b_v1
        x = x + (softmax1((q1 @ k1.T).masked_fill(later, -math.inf)) @ v1) @ w_o1
        err = (torch.relu(x @ w_gate1) * b_up1) @ w_down1
        return (x[:, :10] + err).argmin(dim=-1)

    def generate(prompt, n_new):
        tokens = list(prompt)
        with torch.inference_mode():
            for _ in range(n_new):
                tokens.append(int(forward(tokens)[-1]))
        return tokens

    return generate
