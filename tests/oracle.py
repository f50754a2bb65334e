"""The textbook forward pass, as a test oracle: dense maps, the full scores matrix, softmax1,
pattern, z. Written from the definitions in ``weights`` (nothing shared with ``forward`` but
the number system), slow on purpose, and used only to check ``forward`` value by value.

    q_h = sum_s W_Q[s][h] x_s + b_Q[h] (likewise k, v); score_ij = q_i k_j - slope_h (i - j);
    pattern_ij = exp(score_ij) / (1 + sum_{l <= i} exp(score_il)); z_i = sum_j pattern_ij v_j;
    attn_out_s = sum_h W_O[h][s] z_h + b_O[s]; resid_mid = resid_pre + attn_out;
    post_u = relu(gate_u) up_u; resid_post = resid_mid (widened with zeros) + mlp_out;
    logit_t = -resid_post[readout[t]].
"""


def _dense(ns, table, bias, sources, targets, x):
    """out_t = bias_t + sum over every source s of W[s][t] x_s (zeros included)."""
    return [sum((ns.const(table.get(s, {}).get(t, 0)) * x[i] for i, s in enumerate(sources)),
                ns.const(bias.get(t, 0))) for t in targets]


def run(model, ns, tokens):
    """Every trace point of one pass over the whole sequence ``tokens``: {name: value}."""
    out = {}
    n = len(tokens)
    x = []
    for token in tokens:
        row = model.W_E.get(model.vocab[token], {})
        x.append([ns.const(row.get(s, 0)) for s in model.slots[:model.width_embed]])
    out["hook_embed"] = x
    for i, block in enumerate(model.blocks):
        a, m, name = block.attn, block.mlp, f"blocks.{i}"
        inp, wide = model.slots[:block.width_in], model.slots[:block.width_out]
        out[f"{name}.hook_resid_pre"] = x
        q = [_dense(ns, a.W_Q, a.b_Q, inp, a.heads, row) for row in x]
        k = [_dense(ns, a.W_K, a.b_K, inp, a.heads, row) for row in x]
        v = [_dense(ns, a.W_V, a.b_V, inp, a.heads, row) for row in x]
        slopes = [ns.slope(a.slopes.get(h, 0)) for h in a.heads]
        scores = [[[q[p][h] * k[j][h] - slopes[h] * (p - j) if j <= p else None
                    for j in range(n)] for p in range(n)] for h in range(len(a.heads))]
        pattern = []
        for head in scores:
            rows = []
            for row in head:
                e = [ns.exp(s) if s is not None else None for s in row]
                denom = ns.one + sum(w for w in e if w is not None)
                rows.append([w / denom if w is not None else None for w in e])
            pattern.append(rows)
        z = [[sum(pattern[h][p][j] * v[j][h] for j in range(p + 1))
              for h in range(len(a.heads))] for p in range(n)]
        attn_out = [_dense(ns, a.W_O, a.b_O, a.heads, inp, row) for row in z]
        mid = [[r + o for r, o in zip(row, orow)] for row, orow in zip(x, attn_out)]
        gate = [_dense(ns, m.W_gate, m.b_gate, inp, m.units, row) for row in mid]
        up = [_dense(ns, m.W_in, m.b_in, inp, m.units, row) for row in mid]
        post = [[g * u if g > 0 else ns.zero for g, u in zip(gr, ur)]
                for gr, ur in zip(gate, up)]
        mlp_out = [_dense(ns, m.W_out, m.b_out, m.units, wide, row) for row in post]
        pad = [ns.zero] * (block.width_out - block.width_in)
        x = [[r + o for r, o in zip(row + pad, orow)] for row, orow in zip(mid, mlp_out)]
        out.update({f"{name}.attn.hook_q": q, f"{name}.attn.hook_k": k,
                    f"{name}.attn.hook_v": v, f"{name}.attn.hook_attn_scores": scores,
                    f"{name}.attn.hook_pattern": pattern, f"{name}.attn.hook_z": z,
                    f"{name}.hook_attn_out": attn_out, f"{name}.hook_resid_mid": mid,
                    f"{name}.mlp.hook_pre": gate, f"{name}.mlp.hook_pre_linear": up,
                    f"{name}.mlp.hook_post": post, f"{name}.hook_mlp_out": mlp_out,
                    f"{name}.hook_resid_post": x})
    out["unembed.hook_out"] = [[-row[model.slots.index(s)] for s in model.readout.values()]
                               for row in x]
    return out
