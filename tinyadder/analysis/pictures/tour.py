"""The explorer's guided tour: eight steps, each one view in one state with a question to
answer before the page reveals it, every number from the run's views (``views.build_views``).

tokens -> place values -> attention -> count -> the running sum -> the ruler -> the readout ->
why it fails (for the repaired readout: why it does not). A step is a dict: ``view`` (the
section it shows), ``state`` (position, stage, head, mode), ``section`` (the walkthrough
section that explains it, a key of ``SECTIONS``), ``title``, ``text``, ``question`` and
``answer`` (plain text; the page escapes it).
"""

from .svg import power, pretty, shown

# walkthrough.md's sections, for the links between page and text: key -> (number, anchor)
SECTIONS = {
    "whole": ("0", "0-the-whole-picture"),
    "tokens": ("2", "2-tokens-and-positions"),
    "embedding": ("3", "3-the-embedding-five-slots"),
    "head3": ("4", "4-layer-0-head-3-place-values-from-alibi-and-softmax1"),
    "head4": ("5", "5-layer-0-head-4-scale--1i2-exactly"),
    "ffn0": ("6", "6-layer-0s-ffn-digits-times-place-values-and-ten-candidates"),
    "layer1": ("7", "7-layer-1-a-running-sum-and-the-nearest-mark-wins"),
    "flaw": ("8", "8-the-published-models-flaw"),
    "params": ("9", "9-the-36-parameters"),
    "rope": ("another-design", "another-design-zcbtrak-6-one-layer-and-rope"),
}
# the section each view of the page is explained in
VIEW_SECTIONS = {"tokens": "tokens", "place": "head3", "attention": "head3", "count": "head3",
                 "residual": "ffn0", "sum": "layer1", "ruler": "layer1", "flaw": "flaw",
                 "change": "layer1", "params": "params"}


def view_sections(views):
    """{view: the walkthrough section that explains it on this model's page}: every view of a
    TinyAdder-36 family page (``VIEW_SECTIONS``); a rope-19 model's tokens, attention and
    residual stream the walkthrough's section on zcbtrak-6; another model's none (the
    walkthrough's sections are about TinyAdder-36)."""
    if views["family"]:
        return VIEW_SECTIONS
    if views["about"].get("family") == "rope-19":
        return {"tokens": "rope", "attention": "rope", "residual": "rope"}
    return {}


def focus(views):
    """The position the tour looks at closely: the first wrong digit's, else the one whose
    margin is smallest relative to its place (the hardest decision)."""
    if views["flaw_pos"] is not None:
        return views["flaw_pos"]
    return min(views["decisions"], key=lambda d: d["margin_p"])["pos"]


def _decision(views, pos):
    return next(d for d in views["decisions"] if d["pos"] == pos)


def _positions(views):
    specials = [t["pos"] for t in views["tokens"] if t["role"] == "special"]
    return specials[1], specials[2]  # '+' and '='


def _tokens(views):
    first, last = views["predicting"][0], views["predicting"][-1]
    n = views["digits"]
    return {
        "view": "tokens", "state": {"pos": first, "stage": "embed"}, "section": "tokens",
        "title": "Tokens and positions",
        "text": f"The prompt is <bos>, the {n} digits of a, +, the {n} digits of b and =: "
                f"positions 0 to {first}. The model then writes the {n + 1} digits of the "
                f"sum, most significant first; each position predicts the next token.",
        "question": "Which position predicts the sum's first digit, and which its last? "
                    "(two positions)",
        "expect": {"kind": "integers", "values": [first, last]},
        "answer": f"Position {first}, the =, predicts the first digit, of place "
                  f"{power(n)}; position {last} predicts the units. Position {last + 1} is "
                  f"only written: its prediction is not used.",
    }


def _place(views, q):
    head = views["place_head"]
    one = views["heads"][head]["softmax1"][q]
    plus, eq = _positions(views)
    score = views["heads"][head]["score"]
    special, digit = score[0][0], score[1][1]
    seen = [f"+ at {plus} gets {shown(one[plus][2])}"] + (
        [f"= at {eq} {shown(one[eq][2])}"] if q >= eq else [])
    return {
        "view": "place", "state": {"pos": q, "head": head, "mode": "softmax1"},
        "section": "head3", "title": "Place values from attention",
        "text": f"To add, each digit must be weighed by its place value, and the model has no "
                f"positional embedding. Layer 0's head {head} computes the place values: its "
                f"score is q\u00b7k \u2212 {views['place_slope']}\u00b7(i \u2212 j) (ALiBi), so "
                f"each step back costs a factor of ten, with q\u00b7k = {special} on the "
                f"special tokens and {digit} on digits; and softmax1 divides by 1 + \u03a3 "
                f"exp(score), so tiny weights stay tiny instead of being renormalised.",
        "question": f"Query {q} sees <bos> {q} steps back. Predict its weight (a power of "
                    f"ten is enough, e.g. 1e-20).",
        "expect": {"kind": "magnitudes", "logs": [one[0][1]], "texts": [shown(one[0][2])]},
        "answer": f"{shown(one[0][2])}: e^{special}\u00b710^-{q}, {q} decades below e^{special}; "
                  f"the {' and the '.join(seen)}: ten times more per step nearer. The digit "
                  f"keys are \u2248 0 (e^{digit} and less). Tick \u201cordinary softmax\u201d "
                  f"to see the decay vanish.",
    }


def _attention(views):
    last = views["predicting"][-1]
    _, eq = _positions(views)
    head = views["place_head"]
    h = views["heads"][head]
    return {
        "view": "attention", "state": {"pos": last, "head": head, "mode": "softmax1"},
        "section": "head3", "title": "The whole head at once",
        "text": "Every query is a row, every key a column. With softmax1 (the box unticked) "
                "the three special columns fade by one colour step, a decade, per row; the "
                "digit keys are \u2248 0; the sink, the weight given to nothing, takes almost "
                "everything. With the box ticked, the same scores under an ordinary softmax: "
                "no sink, each row sums to 1.",
        "question": f"Under an ordinary softmax of the same scores, predict <bos>'s weight in "
                    f"row {last} (tick the box after you answer).",
        "expect": {"kind": "magnitudes", "logs": [h["softmax"][last][0][1]],
                   "texts": [shown(h["softmax"][last][0][2])]},
        "answer": f"softmax1 gives <bos> {shown(h['softmax1'][last][0][2])} there; an "
                  f"ordinary softmax divides by the row's sum, so the nearest special key, = "
                  f"at {eq}, gets about 1 and <bos> {shown(h['softmax'][last][0][2])}. The "
                  f"ratios between the special keys stay; their absolute size, the place value, is gone.",
    }


def _count(views):
    n, first = views["digits"], views["predicting"][0]
    c = views["count"]
    plus, _ = _positions(views)
    soft = views["softmax"]
    after = (f" With the box ticked, the ordinary-softmax run: count is "
             f"{shown(soft['count'][1][2])} at position 1, no place values, and the model "
             f"writes {soft['answer']}." if soft else "")
    return {
        "view": "count", "state": {"pos": first, "mode": "softmax1"}, "section": "head3",
        "title": "count, the place values",
        "text": "Head 3's value is 0.1/S on every special token, and = (special too) has "
                "\u22121.1/S more from the slot eq: \u22121/S in all, with S = "
                "e^(special score)/10. Times the weight it cancels the exponential, and a "
                "special token j adds 10^-(i\u2212j) to the slot count (= adds "
                "\u221210\u00b710^-(i\u2212j)).",
        "question": f"Predict count at position {n} (a's last digit), {plus + 1} (b's first) "
                    f"and {first} (=): three numbers, signs included.",
        "expect": {"kind": "magnitudes", "logs": [c[n][1], c[plus + 1][1], c[first][1]],
                   "signs": [-1 if k[2].lstrip("~").startswith("-") else 1
                             for k in (c[n], c[plus + 1], c[first])],
                   "texts": [shown(k[2]) for k in (c[n], c[plus + 1], c[first])]},
        "answer": f"{shown(c[n][2])}, {shown(c[plus + 1][2])} and {shown(c[first][2])}: "
                  f"10^-{n} from <bos>; 10^-1 from + (plus <bos>'s leakage); \u221210 from = itself. Positive on the "
                  f"prompt, so each digit counts at its place; negative from = on, so each "
                  f"digit written is taken back out at its place.{after}",
    }


def _sum(views, q):
    d = _decision(views, q)
    first = views["predicting"][0]
    done = [e for e in views["decisions"] if e["pos"] < q]
    before = ("the model has written " + ", ".join(f"{e['written']} at {power(e['power'])}"
                                                   for e in done)
              if done else "no digit is written yet")
    value = next(p["value"] for p in views["params"] if p["tensor"].endswith("1.attn.b_V"))
    return {
        "view": "sum", "state": {"pos": q, "stage": "L1.attn"}, "section": "layer1",
        "title": "The running sum",
        "text": f"Layer 0's FFN multiplies each digit by its place value (digit_pos). Layer "
                f"1's one head weighs every position equally and averages 100\u00b7digit_pos "
                f"+ {value}: from position {first} on it holds (1000/(i+2))\u00b7(R + b + "
                f"\u2113), R what remains to be written, b a small rounding bias, \u2113 the "
                f"leakage of <bos> and + (all in units of the sum).",
        "question": f"Before position {q} writes its digit, {before}. Predict R, an integer.",
        "expect": {"kind": "integers", "values": [int(d["R"])]},
        "answer": f"R = {d['R']}: a + b = {views['sum']} minus the digits written, at their "
                  f"places. With b = {d['b']} and \u2113 = {d['leak']}, layer 1 holds R + b + "
                  f"\u2113 = {d['total']}.",
    }


def _ruler(views, q):
    d = _decision(views, q)
    after = (f" Here the readout writes {d['chosen']} instead: the last step says why." if
             d["flipped"] else "")
    return {
        "view": "ruler", "state": {"pos": q, "stage": "L1.mlp"}, "section": "layer1",
        "title": "The ruler",
        "text": f"Layer 0's FFN also lays out ten candidates, marks at u + \u00bd units of the "
                f"place P being decided (P = {power(d['power'])} at position {q}), scaled "
                f"like the running sum. Layer 1's FFN measures |R + b + \u2113 \u2212 (u + "
                f"\u00bd)P| for each mark (relu(x) + relu(\u2212x)): err_u, and the readout "
                f"takes the smallest.",
        "question": f"At position {q}, x = (R + b + \u2113)/P = {d['x_text']}. Which mark is "
                    f"nearest, and so which digit?",
        "expect": {"kind": "integers", "values": [d["nearest"]]},
        "answer": f"{d['nearest']}.5, so {d['nearest']} = floor(x): every x from "
                  f"{d['nearest']} to {d['nearest'] + 1} is nearest the mark {d['nearest']}.5, "
                  f"so the ruler takes the floor, the largest digit that fits. The margin over "
                  f"{d['rival']}: {pretty(d['margin'])} units of the sum.{after}",
    }


def _readout(views, q):
    readout = next(p for p in views["program"] if p["stage"] == "readout")
    published = "cand2" in readout["reads"] and "err7" not in views["slots"]
    if published:
        question = ("Which slot does the published readout read for digit 7, and what else "
                    "does that slot hold?")
        answer = ("cand2: layer 1's FFN adds err7 into it, but it still holds cand2 plus "
                  "layer 1's average. For digits 5 to 9 the readout reads cand0..cand4, which "
                  "differ by (1000/(i+2))\u00b7P between neighbours: a tilt of P/10^6 units "
                  "of the sum towards the larger digit (for 0 to 4 it reads eq, special, "
                  "digit, count and scale).")
    else:
        question = "Which slot does this readout read for digit 7?"
        answer = ("err7, a fresh slot that only layer 1's FFN writes: logit 7 = \u2212err7, "
                  "and nothing tilts the comparison.")
    return {
        "view": "residual", "state": {"pos": q, "stage": "readout"}, "section": "flaw",
        "title": "The readout",
        "text": "The readout has no weight matrix: logit u = \u2212(the slot it reads for "
                "digit u), and the largest logit wins. The bottom rows are the ten logits, "
                "each coloured by how far it is behind the winner at its position (the "
                "winner outlined, the runner-up palest); hover a cell for the gap.",
        "question": question, "answer": answer,
        "expect": {"kind": "words", "values": ["cand2" if published else "err7"]},
    }


def _flaw(views):
    rows = views["decisions"]
    if not any(d["tilted"] for d in rows):
        lo, hi = min(rows, key=lambda d: d["offset"]), max(rows, key=lambda d: d["offset"])
        margin = min(lo["offset"], 1 - hi["offset"])
        return {
            "view": "flaw", "state": {"pos": rows[0]["pos"]}, "section": "flaw",
            "title": "Why it does not fail",
            "text": "Nothing tilts this readout: the digit is the nearest mark's, floor(x). "
                    "That is the right digit \u03c3 for every R from \u03c3P to \u03c3P + P "
                    "\u2212 1 as long as the offset b + \u2113 stays in (0, 1].",
            "question": "With no tilt, what could still make a digit wrong?",
            "answer": f"Only an offset outside (0, 1]: here b + \u2113 runs from "
                      f"{lo['offset_text']} to {hi['offset_text']}, a margin of "
                      f"{margin:.2f} units. tinyadder prove --model repaired --digits "
                      f"{views['digits']} proves it stays inside for every pair.",
        }
    if views["flaw_pos"] is None:
        d = max(rows, key=lambda d: d["ratio"] or 0)
        most = (f"Here the largest tilt/margin is {d['ratio_text']}, at position {d['pos']}"
                if d["ratio"] else "Here no tilt favours a rival")
        return {
            "view": "flaw", "state": {"pos": d["pos"]}, "section": "flaw",
            "title": "Why it fails, elsewhere",
            "text": "The published readout tilts every comparison between two digits from 5 to "
                    "9 by P/10^6 units of the sum. The chart divides each position's tilt by "
                    "its margin: above 1, the wrong digit wins.",
            "question": f"{most}. When does the tilt win?",
            "answer": "When the margin falls below P/10^6 units: R + b + \u2113 within "
                      "P/(2\u00b710^6) below a multiple of P, at a digit from 5 to 9. For "
                      "example 5193798811 + 1806201129 at place 10^9 (tinyadder explore "
                      "5193798811+1806201129).",
        }
    d = _decision(views, views["flaw_pos"])
    return {
        "view": "flaw", "state": {"pos": d["pos"]}, "section": "flaw",
        "title": "Why it fails",
        "text": "The chart divides each position's tilt by its margin: a direct logit "
                "attribution of logit(nearest) \u2212 logit(rival), +margin from layer 1's "
                "FFN, \u2212tilt from what else the readout's slot holds. Above 1, the wrong "
                "digit wins. The rule for the winner: the largest logit; on a tie, the "
                "smaller digit (argmax takes the first).",
        "question": f"At position {d['pos']}, {d['nearest']} is nearer by "
                    f"{pretty(d['margin'])} units, and the tilt towards {d['rival']} is "
                    f"{pretty(d['tilt'])} units. Which digit is written?",
        "expect": {"kind": "integers", "values": [d["chosen"]]},
        "answer": f"{d['chosen']}: tilt/margin = {d['ratio_text']} > 1, and {d['chosen']} "
                  f"leads by {pretty(d['lead'])} units. R goes negative and "
                  f"no digit can take it back: zeros follow, the flaw's signature.",
    }


def _slot(views, stage, slot, pos):
    rows = next(s for s in views["residual"] if s["short"] == stage)["slots"]
    return next(r for r in rows if r["slot"] == slot)["cells"][pos]


def _head4(views, q):
    scale = _slot(views, "L0.attn", "scale", q)
    return {
        "view": "attention", "state": {"pos": q, "head": "L0.h4", "mode": "softmax1"},
        "section": "head4", "title": "Head 4: 1/(i + 2), exactly",
        "text": "Head 4 has no slope and the same score, 0, on every key: softmax1 gives each "
                "of the i + 1 keys and the sink the same weight, 1/(i + 2). Its value is the "
                "slot eq, 1 only on =, so it writes scale = 1/(i + 2) from = on: the factor "
                "layer 1's average carries.",
        "question": f"Predict scale at position {q} (a fraction or a decimal).",
        "expect": {"kind": "numbers", "values": [scale[0]], "texts": [shown(scale[2])]},
        "answer": f"{shown(scale[2])} = 1/({q} + 2): {q + 1} keys and the sink share the "
                  f"weight equally, and only = (value 1) counts.",
    }


def _candidates(views, q):
    d = _decision(views, q)
    three = _slot(views, "L0.mlp", "cand3", q)
    return {
        "view": "residual", "state": {"pos": q, "stage": "L0.mlp"}, "section": "ffn0",
        "title": "The ten candidates",
        "text": "Layer 0's FFN writes ten candidates, one slot each: cand_u = "
                "\u2212(1000/(i + 2))\u00b7(u + \u00bd)\u00b7P, the ruler's mark u + \u00bd "
                "in the running sum's scale, P the place being decided.",
        "question": f"At position {q}, P = {power(d['power'])}. Predict cand3.",
        "expect": {"kind": "numbers", "values": [three[0]], "texts": [shown(three[2])]},
        "answer": f"{shown(three[2])} = \u2212(1000/{q + 2})\u00b73.5\u00b7"
                  f"{power(d['power'])}.",
    }


def _change(views):
    v = next((v for v in views["variants"] if v["key"] == "ln2"), None)
    if v is None:
        return None
    return {
        "view": "change", "state": {"variant": "ln2"}, "section": "layer1",
        "title": "Change one thing",
        "text": "Each button runs the model with one thing changed. Slope ln 2 for head 3: "
                "each step back costs a factor of two, not ten, so the place values are "
                "powers of two.",
        "question": "With slope ln 2, predict the first digit the model writes.",
        "expect": {"kind": "integers", "values": [int(v["answer"][0])]},
        "answer": f"It writes {v['answer']}: with place values 2^-(i\u2212j) every digit "
                  f"counts nearly alike, and the running sum is nothing like a + b.",
    }


def _your_own(views):
    if views["flaw_pos"] is None and not any(d["tilted"] for d in views["decisions"]):
        return None
    return {
        "view": "flaw", "state": {}, "section": "flaw",
        "title": "Find your own failing input",
        "text": "The tilt wins when R + b + \u2113 falls within about P/(2\u00b710^6) below a "
                "multiple of P and the digit above is 5 to 9: the margin is then less than "
                "the tilt, P/10^6 units.",
        "question": f"Type an addition of {views['digits']}-digit numbers that you think the "
                    f"published model gets wrong, as A+B.",
        "expect": {"kind": "failing", "digits": views["digits"]},
        "answer": "The page checks your sum against that rule (a candidate); the run decides: "
                  "tinyadder A+B, or tinyadder explore A+B, warns and exits with status 1 "
                  "when the sum is wrong. 5193798811 + 1806201129 is one.",
    }


# ----------------------------------------------------------------------------- any model

def _label_of(views, pos):
    return views["tokens"][pos]["label"]


def _word(label):
    """A role label as the reader types it: a3, <bos>, 0 for the separator '0'."""
    return label.strip("'").lower()


def _any_tokens(views, q):
    task = bool(views.get("task"))
    first, last = ("input", "out0") if task else ("a0", "s0")
    a0 = next((t["pos"] for t in views["tokens"] if t["label"] == first), None)
    units = next((p for p in views["predicting"] if p + 1 < len(views["tokens"]) and
                  _label_of(views, p + 1) == last), None)
    if units is None or a0 is None:
        return None
    said = ("input is the token it computes from, out0 the first token of its answer" if task
            else "a3 is the digit of a at 10^3, s0 the sum's units digit")
    return {
        "view": "tokens", "state": {"pos": a0, "stage": "embed"}, "section": "rope",
        "title": "Tokens by role",
        "text": f"This model's prompt is {views['layout']}: {said}. Each position predicts "
                f"the next token, so the position before {last} decides it. Colours and the "
                f"labels under each token say the role.",
        "question": f"Which position holds {first}, and which position predicts {last}? "
                    f"(two positions)",
        "expect": {"kind": "integers", "values": [a0, units]},
        "answer": f"{first} is at position {a0}; {last} is written at position {units + 1}, "
                  f"so position {units} ({_label_of(views, units)}) predicts it.",
    }


def _top_keys(views, key, q):
    """The keys of head ``key``'s row q, largest weight first: [(label, float, text)]."""
    row = views["heads"][key]["softmax1"][q][:q + 1]
    keys = [(_label_of(views, k), c[0] or 0.0, c[2]) for k, c in enumerate(row)
            if c[2] != "masked"]
    return sorted(keys, key=lambda k: -k[1])


def _any_attention(views, q, key):
    top = _top_keys(views, key, q)
    if len(top) < 2:
        return None
    said = ", ".join(f"{label} {shown(text)}" for label, _, text in top[:4])
    ratio = top[1][1] / top[2][1] if len(top) > 2 and top[2][1] else None
    return {
        "view": "attention", "state": {"pos": q, "head": key, "stage": "L0.attn"},
        "section": "rope",
        "title": "Where the query looks",
        "text": f"Position {q} ({_label_of(views, q)}) predicts "
                f"{_label_of(views, q + 1)}. Its row in head {key}'s map is the weight it "
                f"gives each earlier key; the colours are on a log scale, and the line above "
                f"the map lists the largest weights in numbers.",
        "question": f"Which two keys does query {q} weigh most? (their labels, e.g. a3 b3)",
        "expect": {"kind": "words", "values": [_word(top[0][0]), _word(top[1][0])],
                   "texts": [top[0][0], top[1][0]]},
        "answer": f"The largest weights: {said}." + (
            f" The second is {ratio:.3g} times the third." if ratio else ""),
    }


def _lead(views, q):
    """(winner digit, the lead over the runner-up as [float, text]) at position q, from the
    readout's logits and their gaps to the winner."""
    rows = [r for r in views["residual"][-1]["slots"] if "gap" in r]
    win = next((r for r in rows if r["changed"][q]), None)
    if win is None:
        return None
    runner = max((r for r in rows if r is not win), key=lambda r: r["gap"][q][0] or -1e308)
    gap = runner["gap"][q]
    return win["slot"].split(" ", 1)[1], (-gap[0] if gap[0] is not None else None,
                                          gap[2].replace("-", "", 1),
                                          runner["slot"].split(" ", 1)[1])


def _any_readout(views, q):
    found = _lead(views, q)
    if found is None or found[1][0] is None:
        return None
    digit, (lead, text, runner) = found
    right = views["sum"].zfill(len(views["answer"]))
    return {
        "view": "residual", "state": {"pos": q, "stage": "readout"}, "section": "rope",
        "title": "The readout",
        "text": "The readout stage shows the last slots and then one logit per token: the "
                "largest wins. Each logit row is coloured by its gap to the winner (outlined); "
                "hover a cell for the value.",
        "question": f"Which digit wins at position {q}, and by how many logits does it lead "
                    f"the runner-up? (two numbers)",
        "expect": {"kind": "numbers", "values": [int(digit), lead],
                   "texts": [digit, shown(text)]},
        "answer": f"{digit}, ahead of {runner} by {shown(text)} logits. The "
                  f"{'answer' if views.get('task') else 'sum'} is {right}; "
                  f"this lead is what a rounding error would have to overcome.",
    }


def _any_params(views):
    claimed = views["about"].get("params_claimed")
    return {
        "view": "params", "state": {}, "section": None,
        "title": "The parameters",
        "text": "Every counted parameter, drawn over the slots it writes. The ledger counts "
                "them by the model's own rule (tinyadder params prints every rule side by "
                "side).",
        "question": "How many parameters does the ledger count?",
        "expect": {"kind": "integers", "values": [views["param_total"]]},
        "answer": f"{views['param_total']}" + (f"; its authors claim {claimed}" if claimed
                                               else "") + ".",
    }


def _residual_at(views, stage, slot, pos):
    rows = next(s for s in views["residual"] if s["short"] == stage)["slots"]
    return next(r for r in rows if r["slot"] == slot)["cells"][pos]


COLUMN_READERS = {  # family: (slot holding a_k + b_k after the attention, how it is read)
    "sinusoid-11": ("acc", "One head weighs a{k} and b{k} a half each (an intended tie) and "
                           "writes twice the digit into acc; the other reads the column below "
                           "into pe_sin."),
    "rope-10000": ("x1", "Two heads, each turned back by its own fixed offset, attend "
                         "one-hot to a{k} and b{k} and add them into x1; the others read the "
                         "column below into x0."),
}


def _column(views, q):
    """A designed family's column step (views.sinusoid11_meanings, rope10000_meanings):
    after the attention, at the position that predicts s_k, one slot holds a_k + b_k."""
    reader = COLUMN_READERS.get(views["about"].get("family"))
    if reader is None or not views["meanings"] or q + 1 >= len(views["tokens"]):
        return None
    k = views["tokens"][q]["next_place"]
    digits = {t["label"]: int(t["text"]) for t in views["tokens"] if t["role"] in ("a", "b")}
    if not k or f"a{k}" not in digits:
        return None
    slot, how = reader
    value = _residual_at(views, "L0.attn", slot, q)
    return {
        "view": "residual", "state": {"pos": q, "stage": "L0.attn"}, "section": None,
        "title": "The column",
        "text": f"Position {q} predicts s{k}. " + how.format(k=k) +
                f" Hover {slot} after L0.attn.",
        "question": f"What does {slot} hold at position {q} after the attention? (a number)",
        "expect": {"kind": "numbers", "values": [value[0]], "texts": [shown(value[2])]},
        "answer": f"{shown(value[2])}: a{k} + b{k} = {digits[f'a{k}']} + {digits[f'b{k}']}. "
                  f"The FFN adds the carry it reads from the column below and wraps {slot} "
                  f"to s{k}, which the readout's parabola writes.",
    }


def any_steps(views):
    """A short tour of a model outside the TinyAdder-36 family, from what every model has:
    the tokens by role, where the query that predicts the tens digit looks, the readout's
    winner and lead there, the parameters."""
    decides = {_label_of(views, p + 1): p for p in views["predicting"]
               if p + 1 < len(views["tokens"]) and views["tokens"][p + 1]["role"] == "sum"}
    q = decides.get("out1" if views.get("task") else "s1", views["predicting"][0])
    key = next(iter(views["heads"]), None)
    steps = [_any_tokens(views, q), _any_attention(views, q, key) if key else None,
             _column(views, q), _any_readout(views, q), _any_params(views)]
    return [s for s in steps if s is not None]


def steps(views):
    """The tour of one page: eight steps through the mechanism, then four that go further
    (head 4, the candidates, change one thing, and an input of the reader's own); for a model
    outside the family, ``any_steps``; [] when a family model lacks a view the tour needs."""
    if not views["family"]:
        out = any_steps(views)
        cited = view_sections(views)
        for k, step in enumerate(out, 1):
            step["section"] = cited.get(step["view"])
            step["state"] = {"stage": "L0.attn", "head": next(iter(views["heads"])),
                             "mode": "softmax1", "variant": "built", **step["state"]}
            step["title"] = f"{k}. {step['title']}"
        return out
    if any(views["missing"][v] for v in ("place", "count", "sum", "ruler", "flaw")):
        return []
    q = focus(views)
    out = [_tokens(views), _place(views, q), _attention(views), _count(views),
           _sum(views, q), _ruler(views, q), _readout(views, q), _flaw(views),
           _head4(views, q), _candidates(views, q), _change(views), _your_own(views)]
    out = [step for step in out if step is not None]
    for k, step in enumerate(out, 1):
        step["state"] = {"stage": "readout" if step["view"] == "flaw" else "L0.attn",
                         "head": views["place_head"], "mode": "softmax1",
                         "variant": "built", **step["state"]}
        step["title"] = f"{k}. {step['title']}"
    return out
