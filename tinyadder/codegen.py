"""The fast path: a model's forward pass as straight-line Python, one function per kind of
position, written from ``plan`` and run for every untraced call of ``forward``.

``source(compiled, logits=True)`` is the text of the function that runs one position whose
logits are wanted; ``logits=False`` the one for a position whose logits are not (it computes
only what later positions read, plan rule 3). Locals are named after what they hold
(``count``, ``L1_cand3``, ``z3``), constants are bound by name, so the code can be printed and
read: ``tinyadder program --python``.

Each line performs the operation ``forward`` performs, in the same order, on the same operands,
except where ``plan`` shows that the difference cannot matter: a head that adds no term or a
unit with no output is not computed (rule 2), a carried head keeps its running sums (rule 1), a first-block key is looked up per
token (rule 4), FFN products may share a factor in an exact system (rule 5), and a weight of
exactly 1 multiplies nothing (1 x is x in every number system). What it does not write out
it leaves to ``forward``'s own functions, which ``forward`` hands it as ``ops`` (``linear``,
``score``, ``softmax1``, ``attend``): a textbook head, a first block's keys per token.
tests/test_one_answer.py and tests/test_one_pass.py check the two passes bit for bit.
"""

import keyword
import re
import textwrap

SAFE = re.compile(r"[^0-9A-Za-z_]")


def _identifier(text):
    """A Python identifier for a slot, head or unit name: ``cand0_plus`` for 'cand0+'."""
    name = SAFE.sub("_", text.replace("+", "_plus").replace("-", "_minus"))
    return f"_{name}" if not name or name[0].isdigit() or keyword.iskeyword(name) else name


# names the generated code uses for itself: a slot may not take them
RESERVED = {"token", "pos", "layers", "x", "L", "k", "v", "e", "ev", "s", "n", "d", "g", "t",
            "zero", "one", "ns", "embed", "token_kv", "exp_qk", "attend_one", "ops"}


def _locals(names):
    """Distinct identifiers for a list of names, none of them one the code uses itself."""
    out = list(RESERVED)
    for text in names:
        name = _identifier(text)
        while name in out:
            name += "_"
        out.append(name)
    return out[len(RESERVED):]


class _Constants(dict):
    """The environment of generated code: ``name(value, what)`` binds a constant to an
    identifier made of ``what`` (its tensor and entry: ``L0_W_in_count_cand0``)."""

    def name(self, value, what):
        key = _identifier(what)
        while key in self:
            key += "_"
        self[key] = value
        return key

    def weights(self, layer, tensor, sources, targets):
        """``const(w, s, t)`` naming entry (s, t) of a tensor (s None: its bias)."""
        def const(w, s, t):
            return self.name(w, f"L{layer}_b_{tensor}_{targets[t]}" if s is None else
                             f"L{layer}_W_{tensor}_{sources[s]}_{targets[t]}")
        return const


def _affine(affine, t, var, const):
    """The text of target t of an AffineMap, w_1 x_1 + w_2 x_2 + ... + b_t, ``var(i)`` naming
    source i and ``const(w, i, t)`` a weight (i None: the bias): an absent bias is no term, a
    weight of 1 is x."""
    b = affine.bias[t]
    terms = [var(i) if i in affine.unit[t] else f"{const(w, i, t)} * {var(i)}"
             for i, w in affine.columns[t]]
    terms += [const(b, None, t)] if b is not None else []
    return " + ".join(terms) or "zero"


def _token_kv(ops, ns, block, row):
    """(k, v, e, e v) of a first-block position from its embedding row (rule 4): e = exp(q k)
    and e v for the carried heads, None for the others."""
    k, v = ops.linear(row, block.k, ns.zero), ops.linear(row, block.v, ns.zero)
    e = _exp_qk(ops, ns, block, k)
    return k, v, e, [w * v[h] if w is not None else None for h, w in enumerate(e)]


def _exp_qk(ops, ns, block, k):
    """e = exp(q k) of the carried heads of a position whose keys are k, None elsewhere."""
    return [ns.exp(ops.score([head.q_const], [k[h]], head, 0, 0)) if head.carried else None
            for h, head in enumerate(block.heads)]


def _attend_one(ops, ns, q, layer, h, head, i):
    """A textbook head's z at position i, as ``forward.attention`` computes it."""
    scores = [ops.score([q], [layer.keys[j][h]], head, i, j) for j in range(i + 1)]
    return ops.attend(ops.softmax1(scores, ns), [row[h] for row in layer.values[:i + 1]],
                      ns.zero)


def source(compiled, logits=True):
    """The text of the step function for one position, and the environment it runs in (all but
    ``ops``, which ``forward`` supplies)."""
    ns, model = compiled.ns, compiled.model
    env = _Constants(zero=ns.zero, one=ns.one, ns=ns, embed=compiled.embed,
                     token_kv=_token_kv, exp_qk=_exp_qk, attend_one=_attend_one)
    c = env.name
    slot = _locals(model.slots)
    row = slot[:model.width_embed]  # the stream: the local holding each slot, here and below
    lines = ["def step(token, pos, layers):", f"    {', '.join(row)}, = x = embed[token]"]
    for i, (block, weights) in enumerate(zip(compiled.blocks, model.blocks)):
        heads, units = weights.attn.heads, weights.mlp.units
        head, unit = _locals(heads), _locals(units)
        inp, wide = model.slots[:block.width_in], model.slots[:block.width_out]
        lines += [f"    # block {i}: attention", f"    L = layers[{i}]"]
        if block.token_kv is not None:  # rule 4
            memo = c(block.token_kv, f"L{i}_token_kv")
            lines.append(f"    k, v, e, ev = {memo}.get(token) or {memo}.setdefault("
                         f"token, token_kv(ops, ns, {c(block, f'L{i}_block')}, x))")
        else:
            for x in "kv":
                const = env.weights(i, x.upper(), inp, heads)
                terms = [_affine(getattr(block, x), h, row.__getitem__, const)
                         for h in range(len(heads))]
                lines.append(f"    {x} = [{', '.join(terms)}]")
            if all(h.exp_qk is not None for h in block.heads if h.carried):
                lines.append(f"    e = {c([h.exp_qk for h in block.heads], f'L{i}_exp_qk')}")
            else:
                lines.append(f"    e = exp_qk(ops, ns, {c(block, f'L{i}_block')}, k)")
            ev = [f"e[{h}] * v[{h}]" if b.carried else "None" for h, b in enumerate(block.heads)]
            lines.append(f"    ev = [{', '.join(ev)}]")
        lines += ["    L.keys.append(k)", "    L.values.append(v)"]
        z = [f"L{i}_z_{h}" for h in head]
        wanted = block.live if logits else block.prefix_heads
        for h in block.live:
            b = block.heads[h]
            if b.carried:  # rule 1, as forward.carry
                lines += [f"    s = L.sums[{h}]", "    n, d = s[-1] if s else (zero, zero)"]
                if b.decay is None:
                    lines.append(f"    n, d = n + ev[{h}], d + e[{h}]")
                else:
                    r = c(b.decay, f"L{i}_decay_{head[h]}")
                    lines.append(f"    n, d = {r} * n + ev[{h}], {r} * d + e[{h}]")
                lines.append("    s.append((n, d))")
                if h in wanted:
                    lines.append(f"    {z[h]} = n / (one + d)")
            elif h in wanted:
                q = _affine(block.q, h, row.__getitem__, env.weights(i, "Q", inp, heads))
                lines.append(f"    {z[h]} = attend_one(ops, ns, {q}, L, {h}, "
                             f"{c(b, f'L{i}_head_{head[h]}')}, pos)")
        mid = list(row)
        const = env.weights(i, "O", heads, inp)
        for s in (block.attn_writes if logits else block.prefix_mid):
            mid[s] = f"L{i}_attn_{slot[s]}"
            lines.append(f"    {mid[s]} = {row[s]} + ({_affine(block.o_live, s, z.__getitem__, const)})")
        lines.append(f"    # block {i}: FFN")
        post = [f"L{i}_post_{u}" for u in unit]
        gates, ups = env.weights(i, "gate", inp, units), env.weights(i, "in", inp, units)
        shared = {}  # rule 5: (gate text, up's source) -> units whose up is one weight on it
        for u in (block.units if logits else block.prefix_units):
            gate = _affine(block.gate, u, mid.__getitem__, gates)
            up_column = block.up.columns[u]
            if ns.exact and len(up_column) == 1 and block.up.bias[u] is None:  # rule 5
                shared.setdefault((gate, up_column[0][0]), []).append(u)
                continue
            up = _affine(block.up, u, mid.__getitem__, ups)
            lines += [f"    g = {gate}", f"    {post[u]} = g * ({up}) if g > zero else zero"]
        for (gate, x), group in shared.items():
            lines += [f"    g = {gate}", f"    t = g * {mid[x]} if g > zero else zero"]
            for u in group:
                w = block.up.columns[u][0][1]
                lines.append(f"    {post[u]} = t" if x in block.up.unit[u] else
                             f"    {post[u]} = {ups(w, x, u)} * t")
        row = mid + ["zero"] * (block.width_out - block.width_in)
        const = env.weights(i, "out", units, wide)
        for s in (block.mlp_writes if logits else block.prefix_post):
            out = _affine(block.down, s, post.__getitem__, const)
            new = s >= block.width_in  # a new slot is the FFN's output alone
            name = f"L{i}_mlp_{slot[s]}"
            lines.append(f"    {name} = {out}" if new else f"    {name} = {row[s]} + ({out})")
            row[s] = name
    lines.append(f"    return [{', '.join('-' + row[s] for s in compiled.readout)}]"
                 if logits else "    return None")
    # constants become default arguments: local names are the fastest in CPython
    lines[0] = "\n".join(textwrap.wrap(
        "def step(token, pos, layers, " + ", ".join(f"{k}={k}" for k in [*env, "ops"]) + "):",
        96, subsequent_indent=" " * 9, break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines) + "\n", env


def _step(compiled, logits, ops):
    """The compiled step function (memoised on the compiled model)."""
    key = "_step_logits" if logits else "_step_prefix"
    fn = compiled.__dict__.get(key)
    if fn is None:
        text, env = source(compiled, logits)
        env["ops"] = ops
        exec(compile(text, f"<tinyadder step, {key[6:]}>", "exec"), env)  # noqa: S102
        fn = env["step"]
        object.__setattr__(compiled, key, fn)
    return fn


def run(compiled, tokens, start, layers, logits, ops):
    """The untraced call of ``forward``: positions start, start + 1, ... one step each; the
    logits of every position (``logits="all"``) or of the last (``"last"``)."""
    prefix, every = _step(compiled, False, ops), _step(compiled, True, ops)
    if logits == "all" or not tokens:
        return [every(t, start + a, layers) for a, t in enumerate(tokens)]
    for a in range(len(tokens) - 1):
        prefix(tokens[a], start + a, layers)
    return [every(tokens[-1], start + len(tokens) - 1, layers)]
