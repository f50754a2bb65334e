"""The explorer's guided tour: steps, each one view in one state with a question to answer
before the page reveals it, every number from the run's views (``views.build_views``).

TinyAdder-36's family, in the walkthrough's order: tokens -> place values -> attention -> count
-> head 4 -> the candidates -> the running sum -> the ruler -> the readout -> when the tilt wins
(for the repaired readout: why it does not fail), then change one thing and an input of the
reader's own (where no N-digit pair fails: why not) (``steps``). Any other
model: ``any_steps``, with a designed family's column, carry and FFN. A step is a dict:
``view`` (the section it shows), ``state`` (position, stage, head, mode), ``section`` (the
walkthrough section that explains it, a key of ``SECTIONS``), ``title``, ``text``,
``question`` and ``answer`` (plain text; the page escapes it).
"""

from fractions import Fraction
from importlib import resources
import json
import re
from types import SimpleNamespace

from ... import models
from ..board import SEARCHED, SHORT, VERDICTS, WITNESSES, entry, own_rule, why
from .compare import FAILING_EXAMPLE, FLAWLESS_UP_TO
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
    "digits": ("10", "10-more-digits-and-precision"),
    "rope": ("another-design", "another-design-zcbtrak-6-one-layer-and-rope"),
}
# the section each view of the page is explained in
VIEW_SECTIONS = {"tokens": "tokens", "place": "head3", "attention": "head3", "count": "head3",
                 "residual": "ffn0", "sum": "layer1", "ruler": "layer1", "flaw": "flaw",
                 "change": "digits", "params": "params"}


# the section that explains what each stage of the residual view shows (TinyAdder-36's family;
# the readout's: the flaw where the readout tilts, else section 7's nearest mark)
STAGE_SECTIONS = {"embed": "embedding", "L0.attn": "head3", "L0.mlp": "ffn0",
                  "L1.attn": "layer1", "L1.mlp": "layer1", "readout": "flaw"}


# docs/models.md's worked example of each designed family the walkthrough does not trace
# (``design``: the family's name there); a section key 'ex:DESIGN' cites it
EXAMPLES = {"rope-10000": "rope-10000", "rope-10000/norm": "rope-10000, the Qwen-style four",
            "rope-10000/linear": "rope-10000, the Qwen-style four",
            "rope-10000/hinge": "rope-10000, the Qwen-style four",
            "sinusoid-11": "sinusoid-11"}


def view_sections(views):
    """{view: the walkthrough section that explains it on this model's page}: every view of a
    TinyAdder-36 family page (``VIEW_SECTIONS``); a rope-19 model's tokens, attention and
    residual stream the walkthrough's section on zcbtrak-6; another designed family's the
    worked example of docs/models.md (``EXAMPLES``: 'ex:rope-10000'); another model's none."""
    if views["family"]:
        return VIEW_SECTIONS
    if views["about"].get("family") == "rope-19":
        return {"tokens": "rope", "attention": "rope", "residual": "rope"}
    if views.get("design") in EXAMPLES:
        key = f"ex:{views['design']}"
        return {"tokens": key, "attention": key, "residual": key}
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


def _away(views, *answers):
    """The first position that is none of a step's answers: where the step opens, so that
    its selection and the status line do not say the answer."""
    return next(t["pos"] for t in views["tokens"] if t["pos"] not in answers)


def _tokens(views):
    first, last = views["predicting"][0], views["predicting"][-1]
    n = views["digits"]
    return {
        "view": "tokens", "state": {"pos": _away(views, first, last), "stage": "embed"},
        "section": "tokens",
        "title": "Tokens and positions",
        "text": f"The prompt is <bos>, the {n} digits of a, +, the {n} digits of b and =: "
                f"positions 0 to {first}. The model then writes the {n + 1} digits of the "
                f"sum, most significant first; each position predicts the next token.",
        "question": "Which position predicts the sum's first digit, and which its last? "
                    "(two positions)",
        "expect": {"kind": "integers", "values": [first, last],
                   "form": "the first digit's position first, then the last's"},
        "answer": f"Position {first}, the =, predicts the first digit, of place "
                  f"{power(n)}; position {last} predicts the units. Position {last + 1} is "
                  f"only written: its prediction is not used.",
    }


def _last_query(views):
    """The query a step asks about where its view prints the selected query's own numbers:
    the last position that predicts a digit."""
    return views["predicting"][-1]


def _place(views, q):
    head = views["place_head"]
    r = _last_query(views)  # the chart prints query q's weights: the step asks for r's
    one = views["heads"][head]["softmax1"][r]
    plus, eq = _positions(views)
    score = views["heads"][head]["score"]
    special, digit = score[0][0], score[1][1]
    seen = [f"+ at {plus} gets {shown(one[plus][2])}"] + (
        [f"= at {eq} {shown(one[eq][2])}"] if r >= eq else [])
    drawn = views["heads"][head]["softmax1"][q][0]
    return {
        "view": "place", "state": {"pos": q, "head": head, "mode": "softmax1"},
        "section": "head3", "title": "Place values from attention",
        "text": f"To add, each digit must be weighed by its place value, and the model has no "
                f"positional embedding. Layer 0's head {head} computes the place values: its "
                f"score is q\u00b7k \u2212 {views['place_slope']}\u00b7(i \u2212 j) (ALiBi), so "
                f"each step back costs a factor of ten, with q\u00b7k = {special} on the "
                f"special tokens and {digit} on digits; and softmax1 divides by 1 + \u03a3 "
                f"exp(score), so tiny weights stay tiny instead of being renormalised.",
        "question": (f"The chart draws query {q}'s weights. Query {r} sees <bos> {r} steps "
                     f"back. Predict its weight (a power of ten is enough, e.g. 1e-20; then "
                     f"choose position {r} to see)." if r != q else
                     f"Query {q} sees <bos> {q} steps back. Predict its weight (a power of "
                     f"ten is enough, e.g. 1e-20)."),
        "expect": {"kind": "magnitudes", "logs": [one[0][1]], "texts": [shown(one[0][2])]},
        "answer": f"{shown(one[0][2])}: e^{special}\u00b710^-{r}, {r} decades below e^{special}" +
                  (f" (query {q}'s is {shown(drawn[2])}, {r - q} decades above it)" if r != q
                   else "") +
                  f"; the {' and the '.join(seen)}: ten times more per step nearer. The digit "
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
        "veil": True,  # the chart draws count per position: hidden until a check
        "hides": ["count"],  # and the residual stream's slot-by-slot list prints it at =
        "title": "count, the place values",
        "text": "Head 3's value is 0.1/S on every special token, and = (special too) has "
                "\u22121.1/S more from the slot eq: \u22121/S in all, with S = "
                "exp(special score)/10. Times the weight it cancels the exponential, and a "
                "special token j adds 10^-(i\u2212j) to the slot count (= adds "
                "\u221210\u00b710^-(i\u2212j)).",
        "question": f"Predict count at position {n} (a's last digit), {plus + 1} (b's first) "
                    f"and {first} (=): three numbers, signs included.",
        "expect": {"kind": "magnitudes", "logs": [c[n][1], c[plus + 1][1], c[first][1]],
                   "signs": [-1 if k[2].lstrip("~").startswith("-") else 1
                             for k in (c[n], c[plus + 1], c[first])],
                   "texts": [shown(k[2]) for k in (c[n], c[plus + 1], c[first])]},
        "answer": f"{shown(c[n][2])}, {shown(c[plus + 1][2])} and {shown(c[first][2])}: "
                  f"10^-{n} from <bos>; 10^-1 from + (plus <bos>'s leakage); \u221210 from = "
                  f"itself{_plus_at_eq(c[first][0], first - plus)}. Positive on the "
                  f"prompt, so each digit counts at its place; negative from = on, so each "
                  f"digit written is taken back out at its place.{after}",
    }


def _plus_at_eq(count, back):
    """What '+' adds to count at '=', ``back`` steps before it: 10^-back, said where the six
    digits shown see it (at N = 3, −10 + 10^-4 = −9.9999), else ''."""
    if abs(count + 10) <= 1e-6 * 10:
        return ""
    return f", plus 10^-{back} from +, {back} steps back"


def _sum(views, q):
    d = _decision(views, q)
    first = views["predicting"][0]
    done = [e for e in views["decisions"] if e["pos"] < q]
    before = ("the model has written " + ", ".join(f"{e['written']} at {power(e['power'])}"
                                                   for e in done)
              if done else "no digit is written yet")
    value = next(p["value"] for p in views["params"] if p["tensor"].endswith("1.attn.b_V"))
    return {
        # layer 1's head, whose average the step is about
        "view": "sum", "state": {"pos": q, "stage": "L1.attn",
                                 **{"head": k for k, h in views["heads"].items()
                                    if h["layer"] == 1}},
        "section": "layer1",
        "title": "The running sum",
        "veil": True,  # the view prints R + b + ℓ per position: hidden until a check or the answer
        # the flaw view prints this position's margin, the next step's answer: hidden as well
        "veils": ["view-flaw"],
        "text": f"Layer 0's FFN multiplies each digit by its place value (digit_pos). Layer "
                f"1's one head weighs every position equally and averages 100\u00b7digit_pos "
                f"+ {value} (the value bias, 500/(3N + 3) truncated to two significant "
                f"digits: 41 at N = 3, 15 at N = 10; docs/digits.md): from position {first} on it holds (1000/(i+2))\u00b7(R + b + "
                f"\u2113), R what remains to be written, b a small rounding bias, \u2113 the "
                f"leakage of <bos> and + (all in units of the sum; b and \u2113 depend on the "
                f"position).",
        "question": f"Before position {q} writes its digit, {before}. Predict R, an integer.",
        "expect": {"kind": "integers", "values": [int(d["R"])]},
        "answer": f"R = {d['R']}: a + b = {views['sum']} minus the digits written, at their "
                  f"places. With b = {d['b']} and \u2113 = {d['leak']} at this position, "
                  f"layer 1 holds R + b + \u2113 = {d['total']}. Both change from position to "
                  f"position: the running-sum view's right-hand column lists R and R + b + "
                  f"\u2113 row by row, and their difference, b + \u2113, differs from row to "
                  f"row.",
    }


def _ruler(views, q):
    d = _decision(views, q)
    after = (f" Here the readout writes {d['chosen']} instead: the last step says why." if
             d["flipped"] else "")
    return {
        "view": "ruler", "state": {"pos": q, "stage": "L1.mlp"}, "section": "layer1",
        "title": "The ruler",
        "text": f"The ten candidates of layer 0's FFN are marks at u + \u00bd units of the "
                f"place P being decided (P = {power(d['power'])} at position {q}), scaled "
                f"like the running sum. Layer 1's FFN measures |R + b + \u2113 \u2212 (u + "
                f"\u00bd)P| for each mark (relu(x) + relu(\u2212x)): err_u, and the readout "
                f"takes the smallest.",
        "veil": True,  # the ruler prints x and the margin: hidden until a check or the answer
        "question": f"At position {q}, R + b + \u2113 = {d['total']} and P = "
                    f"{power(d['power'])}. Which mark is nearest, so which digit, and by how "
                    f"many units of the sum is it nearer than {d['rival']}'s mark "
                    f"(err{d['rival']} \u2212 err{d['nearest']})? (two numbers)",
        "expect": {"kind": "numbers", "values": [d["nearest"], d["margin_f"]],
                   "texts": [str(d["nearest"]), pretty(d["margin"])],
                   "form": "the digit, then the margin", "what": ["digit", "margin"],
                   "rule": "the digit exactly, the margin within 0.5 %"},
        # the digit asked for first, then its mark and the margin (learner22 3)
        "answer": f"{d['nearest']} (its mark {d['nearest']}.5 is nearest), "
                  f"{pretty(d['margin'])} units: x = (R + b + \u2113)/P = {d['x_text']}, so "
                  f"{d['nearest']} = floor(x): every x from "
                  f"{d['nearest']} to {d['nearest'] + 1} is nearest the mark {d['nearest']}.5, "
                  f"so the ruler takes the floor, the largest digit that fits. The margin over "
                  f"{d['rival']}: err{d['rival']} \u2212 err{d['nearest']} = "
                  f"{pretty(d['margin'])} units of the sum.{after}",
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
                "digit u; the line under the grid lists them), and the largest logit wins. "
                "The bottom rows are the ten logits, each coloured by how far it is behind "
                "the winner at its position (the winner outlined, the runner-up palest); "
                "hover a cell for the gap.",
        "question": question, "answer": answer,
        "expect": {"kind": "words", "values": ["cand2" if published else "err7"],
                   "where": "not that slot: the slot names are in the line under the grid "
                            "(logit u = \u2212slot)"},
    }


def _flaw(views):
    rows = views["decisions"]
    if not any(d["tilted"] for d in rows):
        lo, hi = min(rows, key=lambda d: d["offset"]), max(rows, key=lambda d: d["offset"])
        room = min(lo["offset"], 1 - hi["offset"])
        return {
            "view": "flaw", "state": {"pos": rows[0]["pos"]}, "section": "flaw",
            "title": "Why it does not fail",
            "text": "Nothing tilts this readout: the digit is the nearest mark's, floor(x). "
                    "That is the right digit \u03c3 for every R from \u03c3P to \u03c3P + P "
                    "\u2212 1 as long as the offset b + \u2113 stays in (0, 1].",
            "question": "With no tilt, what could still make a digit wrong? (one word)",
            "expect": {"kind": "words", "values": ["offset"],
                       "where": "not that word: what goes into x = (R + b + \u2113)/P besides "
                                "R and P?"},
            "answer": f"Only an offset outside (0, 1]: here b + \u2113 runs from "
                      f"{lo['offset_text']} to {hi['offset_text']}, room "
                      f"{room:.2f} units to the interval's ends. tinyadder prove --model repaired --digits "
                      f"{views['digits']} proves it stays inside for every pair.",
        }
    if views["flaw_pos"] is None:
        d = max(rows, key=lambda d: d["ratio"] or 0)
        if not d["ratio"]:
            return None
        # between two digits from 5 to 9 the tilt is P/10^6, which the text gives
        high = min(d["nearest"], d["rival"]) >= 5
        return {
            # the selection stays where the steps before left it: the chart is the question
            "view": "flaw", "state": {"pos": focus(views)}, "section": "flaw",
            "title": ("Why it fails, elsewhere" if views["digits"] > FLAWLESS_UP_TO else
                      "When the tilt would win"),
            "text": "The published readout tilts every comparison between two digits from 5 to "
                    "9 by P/10^6 units of the sum. A comparison with a digit from 0 to 4 reads "
                    "other slots (eq, special, digit, count and scale for 0 to 4, step 9) and "
                    "is tilted by what they still hold (about P/(2\u00b710^6) between 4 "
                    "and 5). The chart divides each position's tilt by "
                    "its margin: above 1, the wrong digit wins.",
            "question": "On the chart, at which deciding position is tilt/margin largest" + (
                ", and how large is the tilt there, in units of the sum? (two numbers: the "
                "position, then the tilt)" if high else "? (a position)"),
            "expect": {"kind": "numbers", "values": [d["pos"], d["tilt_f"]],
                       "texts": [str(d["pos"]), pretty(d["tilt"])],
                       "form": "the position, then the tilt", "what": ["position", "tilt"],
                       "rule": "the position exactly, the tilt within 0.5 %"} if high else
                      {"kind": "integers", "values": [d["pos"]]},
            "answer": f"Position {d['pos']}, which decides place {power(d['power'])}: the "
                      f"tilt there is " + ("P/10^6 = " if high else "") +
                      f"{pretty(d['tilt'])} units" + ("" if high else _low_pair(views, d)) +
                      f", {d['ratio_text']} of the margin "
                      f"({pretty(d['margin'])} units). The wrong digit wins above 1, where "
                      "the tilt outweighs the margin. Between digits 5 to 9 that is when "
                      "the margin falls below P/10^6 units: R + b + \u2113 within "
                      "P/(2\u00b710^6) below a "
                      "multiple of P, where the right digit is 5 to 8 and the one above it "
                      "wins (or 4, within P/(4\u00b710^6): the tilt between 4 and 5 is half; "
                      "a 9 has no digit above it). " + _where_it_fails(views["digits"]) +
                      f" Choose {d['pos']} on the chart to see its bars.",
        }
    d = _decision(views, views["flaw_pos"])
    return {
        "view": "flaw", "state": {"pos": d["pos"]}, "section": "flaw",
        "title": "Why it fails",
        # the view prints the written digit at the position (its verdict line, the net bar,
        # every digit against the nearest), and so do Change one thing's "as built writes"
        # and the running sum's digit written next: hidden until a check or the answer
        "veil": True, "veils": ["view-change", "view-sum"],
        "text": "The chart divides each position's tilt by its margin: a direct logit "
                "attribution of logit(nearest) \u2212 logit(rival), +margin from layer 1's "
                "FFN, \u2212tilt from what else the readout's slot holds. Above 1, the wrong "
                "digit wins. The rule for the winner: the largest logit; on a tie, the "
                "smaller digit (argmax takes the first).",
        "question": f"At position {d['pos']}, {d['nearest']} is nearer by "
                    f"{pretty(d['margin'])} units, and the tilt towards {d['rival']} is "
                    f"{pretty(d['tilt'])} units. Which digit is written?",
        "expect": {"kind": "integers", "values": [d["chosen"]], "what": ["digit"]},
        "answer": f"{d['chosen']}: tilt/margin = {d['ratio_text']} > 1, and {d['chosen']} "
                  f"leads by {pretty(d['lead'])} units. R goes negative and "
                  f"no digit can take it back: zeros follow, the flaw's signature.",
    }


def _low_pair(views, d):
    """Why a comparison with a digit from 0 to 4 is not tilted by P/10^6: the slots the
    readout reads for its two digits (``readout_slots``), ' (4 against 5, read from scale and
    cand0: what those slots still hold, not P/10^6)'."""
    slots = views.get("readout_slots") or []
    pair = sorted((d["nearest"], d["rival"]))
    if len(slots) < 10:
        return ""
    return (f" ({pair[0]} against {pair[1]}, read from {slots[pair[0]]} and "
            f"{slots[pair[1]]}: what those slots still hold, not P/10^6)")


def _where_it_fails(n):
    """Where the published readout's tilt wins, for a page of N digits: none at N <=
    ``FLAWLESS_UP_TO`` (the census); else the 10-digit example, said to be one at N = 10."""
    a, b = FAILING_EXAMPLE.split("+")
    example = (f"{a} + {b} at place 10^9 (tinyadder explore {FAILING_EXAMPLE}"
               + (")." if n == len(a) else f", a {len(a)}-digit page)."))
    if n > FLAWLESS_UP_TO:
        return f"For example {example}"
    return (f"At N = {n} no sum gets that close (the last step says why); at N = {len(a)}, "
            f"{example}")


def _slot(views, stage, slot, pos):
    rows = next(s for s in views["residual"] if s["short"] == stage)["slots"]
    return next(r for r in rows if r["slot"] == slot)["cells"][pos]


def _head4(views, q):
    r = _last_query(views)  # the line above the map prints query q's weights, 1/(q + 2)
    scale = _slot(views, "L0.attn", "scale", r)
    return {
        "view": "attention", "state": {"pos": q, "head": "L0.h4", "mode": "softmax1"},
        "section": "head4", "title": "Head 4: 1/(i + 2), exactly",
        "text": "Head 4 has no slope and the same score, 0, on every key: softmax1 gives each "
                "of the i + 1 keys and the sink the same weight, 1/(i + 2). Its value is the "
                "slot eq, 1 only on =, so it writes scale = 1/(i + 2) from = on: the factor "
                "that the ten candidates (the next step) and layer 1's running sum carry.",
        "question": f"The map's selected row is query {q}'s. Predict scale at position {r} "
                    f"(a fraction or a decimal).",
        "expect": {"kind": "numbers", "values": [scale[0]], "texts": [shown(scale[2])]},
        "answer": f"{shown(scale[2])} = 1/({r} + 2): {r + 1} keys and the sink share the "
                  f"weight equally, and only = (value 1) counts.",
    }


def _candidates(views, q):
    d = _decision(views, q)
    three = _slot(views, "L0.mlp", "cand3", q)
    return {
        "view": "residual", "state": {"pos": q, "stage": "L0.mlp"}, "section": "ffn0",
        "hides": [f"cand{u}" for u in range(10)],  # the slot list prints them: asked of the formula
        "title": "The ten candidates",
        "text": "Layer 0's FFN writes ten candidates, one slot each: cand_u = "
                "\u2212(1000/(i + 2))\u00b7(u + \u00bd)\u00b7P: a mark at u + \u00bd units of "
                "P, the place being decided, times 1000\u00b7scale = 1000/(i + 2). Layer 1 will "
                "measure the sum against these marks.",
        "question": f"At position {q}, P = {power(d['power'])}. Predict cand3.",
        "expect": {"kind": "numbers", "values": [three[0]], "texts": [shown(three[2])]},
        "answer": _candidate_answer(views, q, three, d["power"]),
    }


def _candidate_answer(views, q, three, e):
    """cand3 against its formula, −(1000/(q + 2))·3.5·10^e: '≈' (count at '=' is not
    quite −10), and why where the six digits shown differ (at N = 3, count is ~-9.99990)."""
    formula = -1000 / (q + 2) * 3.5 * 10 ** e
    said = f"\u2212(1000/{q + 2})\u00b73.5\u00b7{power(e)}"
    if abs(three[0] - formula) <= 1e-6 * abs(formula):
        return f"{shown(three[2])} \u2248 {said}."
    eq = next(t["pos"] for t in views["tokens"] if t["text"] == "=")
    count = _slot(views, "L0.attn", "count", eq)
    return (f"{shown(three[2])} \u2248 {said} = {formula:.0f}: the candidates are built from "
            f"count at =, which is {shown(count[2])}, not \u221210 (the + key still adds "
            f"{pretty(f'{count[0] + 10:.0e}')}).").replace("= -", "= \u2212")


def _halves(views):
    """The first terms of slope ln 2's x₂ = Σⱼ (aⱼ + bⱼ)·2^−(N−j), top digits first:
    '7/2 + 0/2 + 6/4 + 1/4'."""
    n = views["digits"]
    a, b = (f"{int(views[k]):0{n}d}" for k in ("a", "b"))
    return " + ".join(f"{x[i]}/{2 ** (i + 1)}" for i in range(min(2, n)) for x in (a, b))


def _offset_said(views, row):
    """What b + ℓ adds to x₂ in the variant's run (x − x₂), said as a bound where it is under
    ½ (so floor(x₂) is the digit), else ''."""
    if row is None or row["x"] is None:
        return ""
    extra = row["x"] - float(x_ln2(views))
    return (" b + \u2113 adds a little on top, under \u00bd here." if 0 <= extra < 0.5
            else "")


def x_ln2(views):
    """x₂ = Σⱼ (aⱼ + bⱼ)·2^−(N−j), exactly: slope ln 2's R/P at the first decision."""
    n = views["digits"]
    a, b = (f"{int(views[k]):0{n}d}" for k in ("a", "b"))
    return sum(Fraction(int(a[i]) + int(b[i]), 2 ** (i + 1)) for i in range(n))


def _first_mark(v):
    """Why a variant's first digit is what it is: its x is nearest that digit's mark u + ½
    (err_u = |x − u.5| the smallest): ' At position 22, x = 7.57, nearest 7.5 ...'; '' where
    no row says so."""
    row = next(iter(v.get("rows") or []), None)
    if row is None or row["x"] is None or abs(row["x"] - int(row["written"]) - 0.5) > 0.5:
        return ""
    w = int(row["written"])
    return (f" At position {row['pos']}, the sum of powers of two is x = {row['x']:.3g}, "
            f"nearest the mark {w}.5 of the digit {w} (err{w} = |x \u2212 {w}.5| the "
            f"smallest): the first digit is {w}.")


def _change(views):
    v = next((v for v in views["variants"] if v["key"] == "ln2"), None)
    if v is None:
        return None
    row = next(iter(v.get("rows") or []), None)
    first = row["pos"] if row else focus(views)
    n, terms = views["digits"], _halves(views)
    return {
        # at the position that writes the first digit: the status line, once the answer is
        # shown, says what the variant writes there
        "view": "change", "state": {"variant": "ln2", "pos": first}, "section": "digits",
        "veil": True,  # the view prints what the variant writes: hidden until a check
        "title": "Change one thing",
        "text": "Each button runs the model with one thing changed. Slope ln 2 for head 3: "
                "each step back costs a factor of two, not ten, so the place values are "
                f"powers of two. Position {first} decides the first digit, the place "
                f"{power(n)}, from x = (R + b + \u2113)/P as the ruler does (the digit is "
                f"floor(x)). With halving place values its R/P, x (slope ln 2), is the sum "
                f"of (a_j + b_j)/2^(N\u2212j) over the digits j = N \u2212 1 down to 0: each "
                f"operand's top digit weighs \u00bd, the next \u00bc, and so on; here "
                f"x (slope ln 2) = {terms} + \u2026." +
                _offset_said(views, row),
        "question": f"With slope ln 2, predict the first digit the model writes, at position "
                    f"{first} (compute x (slope ln 2) and take its floor).",
        "expect": {"kind": "integers", "values": [int(v["answer"][0])], "what": ["digit"]},
        "answer": f"It writes {v['answer']}: with place values 2^-(i\u2212j) a digit's "
                  f"weight halves at each step back instead of falling tenfold: a's "
                  f"{views['digits']} digits are weighed from \u00bd down to "
                  f"2^-{views['digits']} = 1/{2 ** views['digits']}, not from 1/10 down to "
                  f"10^-{views['digits']}, so the running sum is nothing like a + b." +
                  f" Here x (slope ln 2) = {float(x_ln2(views)):.4g}." + _first_mark(v),
    }


def _your_own(views):
    if views["flaw_pos"] is None and not any(d["tilted"] for d in views["decisions"]):
        return None
    if views["digits"] <= FLAWLESS_UP_TO:
        return _too_few_digits(views)
    return {
        "view": "flaw", "state": {}, "section": "flaw",
        "title": "Find your own failing input",
        "text": "The tilt wins when R + b + \u2113 falls within about P/(2\u00b710^6) below a "
                "multiple of P and the digit that wins wrongly, the one above the right "
                "digit, is 6 to 9: the margin is then less than the tilt, P/10^6 units (or 5 "
                "over a right 4, within P/(4\u00b710^6): the tilt between 4 and 5 is half).",
        "question": f"Type an addition of {views['digits']}-digit numbers that you think the "
                    f"published model gets wrong, as A+B.",
        "expect": {"kind": "failing", "digits": views["digits"]},
        "answer": "The page checks your sum against that rule (a candidate); the run decides: "
                  "tinyadder A+B, or tinyadder explore A+B, warns and exits with status 1 "
                  "when the sum is wrong. " + _where_it_fails(views["digits"])
                  .replace("For example ", "").replace(" at place", " is one, at place"),
    }


def _too_few_digits(views):
    """In place of "find your own failing input" where the published readout fails on no
    N-digit pair (N <= ``FLAWLESS_UP_TO``, the census's count 0): at the highest place whose
    digit can be 4 to 8, 10^(N-1) (the top place holds the carry), the tilt is 10^(N-1)/10^6
    units, far below the margins."""
    n = views["digits"]
    d = min(views["decisions"], key=lambda d: float(d["margin"]))
    return {
        # the selection stays: the smallest margin's position is named in the answer
        "view": "flaw", "state": {}, "section": "flaw",
        # the chart's attribution and the ruler print the tilt at every position, a bare
        # power of ten the page's filter of printed values leaves alone: both wait with the
        # answer
        "veil": True, "veils": ["view-ruler"],
        "title": f"Why it does not fail at N = {n}",
        "text": "The tilt is P/10^6 units at place P. It tips a digit only when R + b + "
                "\u2113 lies within about P/(2\u00b710^6) below a multiple of P and the "
                "digit there is 4 to 8. R is a whole number and b + \u2113 stays near "
                "\u00bd, so R + b + \u2113 never comes closer than about \u00bd below one: "
                "that takes a place P above 10^6 whose digit can be 4 to 8, so N of 8 or "
                "more (at N = 7 the highest such place is 10^6 itself, where P/(2\u00b710^6) "
                f"is the \u00bd, just short). The top place, {power(n)}, holds only the "
                "carry, 0 or 1.",
        "question": f"At N = {n} the highest place whose digit can be 4 to 8 is "
                    f"{power(n - 1)}. Predict the tilt there, in units of the sum (a power "
                    f"of ten is enough).",
        "expect": {"kind": "magnitudes", "logs": [n - 7], "texts": [power(n - 7)]},
        "answer": f"{power(n - 7)} = {power(n - 1)}/10^6, while the smallest margin on this "
                  f"page is {pretty(d['margin'])} units (position {d['pos']}: choose it on the "
                  f"chart). tinyadder "
                  f"census --digits {n} counts the pairs it gets wrong: 0 of all "
                  f"10^{2 * n} (docs/proof.md proves none up to N = {FLAWLESS_UP_TO}). The "
                  f"flaw shows from N = {FLAWLESS_UP_TO + 1} on. " +
                  _where_it_fails(10).replace("For example ", "At N = 10, ")
                  .replace(" at place", " is one, at place"),
    }


# ----------------------------------------------------------------------------- any model

def _label_of(views, pos):
    return views["tokens"][pos]["label"]


def _named(views, pos):
    """A position's name in a step's text: its role label, a separator's with its role
    ("separator '0'", the label the strips and the axes draw, ``figures.axis_label``)."""
    tok = views["tokens"][pos]
    if tok["role"] == "special" and tok["text"].strip("<>").isdigit():
        return f"separator {tok['label']}"
    return tok["label"]


def _separators_said(views):
    """' A '0' that is no digit of a or b is a separator.' where the prompt has such tokens,
    else ''."""
    seps = sorted({t["label"] for t in views["tokens"] if _named(views, t["pos"]) !=
                   t["label"]})
    return (f" A {' or '.join(seps)} that is no digit of a or b is a separator." if seps
            else "")


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
    k = min(3, (views["digits"] or 4) - 1)  # explore.place_example: a2 at N = 3
    said = ("input is the token it computes from, out0 the first token of its answer" if task
            else f"a{k} is the digit of a at {power(k)}, s0 the sum's units digit")
    return {
        "view": "tokens", "state": {"pos": _away(views, a0, units), "stage": "embed"},
        "section": "rope",
        "title": "Tokens by role",
        "text": f"This model's prompt is {views['layout']}: {said}. Each position predicts "
                f"the next token, so the position before {last} decides it. Colours and the "
                f"labels under each token say the role." + _separators_said(views),
        "question": f"Which position holds {first}, and which position predicts {last}? "
                    f"(two positions)",
        "expect": {"kind": "integers", "values": [a0, units],
                   "form": f"{first}'s position first, then the one that predicts {last}"},
        "answer": f"{first} is at position {a0}; {last} is written at position {units + 1}, "
                  f"so position {units} ({_named(views, units)}) predicts it.",
    }


def _top_keys(views, key, q):
    """The keys of head ``key``'s row q, largest weight first: [(label, float, text)]."""
    row = views["heads"][key]["softmax1"][q][:q + 1]
    keys = [(_label_of(views, k), c[0], c[2]) for k, c in enumerate(row)
            if c[2] != "masked" and c[0]]  # a weight of 0 is none of the largest
    return sorted(keys, key=lambda k: -k[1])


def _band_said(scale):
    """Where a head's clipped log colour band (``heat.clipped_scale``) runs, and that a weight
    far below the largest is still coloured: ' clipped to 10⁻¹⁰ (dark purple) … 1 (yellow), so a
    weight of 10⁻⁵ is drawn halfway along it, ...'."""
    lo = scale[0]
    if lo > -2:
        return f" clipped to {power(lo)} (dark purple) \u2026 1 (yellow)"
    return (f" clipped to {power(lo)} (dark purple) \u2026 1 (yellow), so a weight of "
            f"{power(lo // 2)} is drawn halfway along it, as visibly as a live one (grey: "
            f"below {power(lo)})")


def _any_attention(views, q, key):
    # the line above the map lists query q's largest weights: a designed family's head reads
    # the column a query predicts, so the step asks for the next query's, q + 1
    ask = q + 1 if views.get("design") in COLUMN and q + 2 < len(views["tokens"]) else q
    top = _top_keys(views, key, ask)
    layer = views["heads"][key]["layer"]
    if len(top) < 2:
        return None
    said = ", ".join(f"{label} {shown(text)}" for label, _, text in top[:4])
    ratio = top[1][1] / top[2][1] if len(top) > 2 and top[2][1] else None
    return {
        "view": "attention", "state": {"pos": q, "head": key, "stage": f"L{layer}.attn"},
        "section": "rope",
        "title": "Where the query looks" + (f" in layer {layer}" if layer else ""),
        "text": f"Position {q} ({_named(views, q)}) predicts "
                f"{_label_of(views, q + 1)}. Its row in the map of head {key} is the weight it "
                f"gives each earlier key. The colours are on a log scale" +
                _band_said(views["heads"][key]["scale"]) + "; the line above the map lists "
                "the largest weights in numbers.",
        "question": (f"Which two keys does query {ask}, the position after the selected one, "
                     f"weigh most? (their labels, e.g. a3 b3; then choose position {ask} to "
                     f"see)" if ask != q else
                     f"Which two keys does query {q} weigh most? (their labels, e.g. a3 b3)"),
        "expect": {"kind": "words", "values": [_word(top[0][0]), _word(top[1][0])],
                   "texts": [top[0][0], top[1][0]]},
        "answer": f"The largest weights from query {ask}: {said}." + (
            f" Query {ask} predicts {_label_of(views, ask + 1)}: its head reads that "
            f"column, one place up from query {q}'s." if ask != q else "") + (
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
    spacing = _spacing(views, q, lead)
    return {
        "view": "residual", "state": {"pos": q, "stage": "readout"}, "section": "rope",
        "title": "The readout",
        "text": "The readout stage shows the last slots and then one logit per token: the "
                "largest wins. Each logit row is coloured by its gap to the winner (outlined); "
                "hover a cell for the value. Hover the runner-up's logit at this position: "
                "its gap to the winner is the lead." + spacing,
        "question": f"Which digit wins at position {q}, and by how many logits does it lead "
                    f"the runner-up? (two numbers)",
        "expect": {"kind": "numbers", "values": [int(digit), lead],
                   "texts": [digit, shown(text)], "sig": [0, 2],
                   "form": "the digit, then the lead", "what": ["digit", "lead"],
                   "rule": "the digit counts exactly, the lead to two significant digits"},
        "answer": f"{digit}, ahead of {runner} by {shown(text)} logits. The "
                  f"{'answer' if views.get('task') else 'sum'} is {right}; "
                  f"this lead is what a rounding error would have to overcome.",
    }


def _spacing(views, q, lead):
    """What makes a rope-10000 lead predictable to two significant digits: the readout's
    parabola, logit d falling off as 2.5·10⁻⁴·(x0/1000)·(d − vertex)², so a neighbour of a
    vertex on the winner trails by 2.5·10⁻⁴·x0/1000; said where the run agrees within 0.5 %
    (a vertex between two digits leads by less), else ''."""
    if views.get("design") != "rope-10000":
        return ""
    x0, x1 = (_residual_at(views, "readout", slot, q) for slot in ("x0", "x1"))
    spacing = 2.5e-4 * x0[0] / 1000
    if abs(lead - spacing) > 0.005 * spacing:
        return ""
    return (f" The readout's parabola sets the lead: logit d falls off as 2.5\u00b710\u207b"
            f"\u2074\u00b7(x0/1000)\u00b7(d \u2212 vertex)\u00b2 around its vertex at "
            f"1000\u00b7x1/x0. Here x0 = {shown(x0[2])} and x1 = {shown(x1[2])} at position "
            f"{q}, so the vertex is on the winner and a neighbour trails by 2.5\u00b710"
            f"\u207b\u2074\u00b7x0/1000; where a carry leaves x1 off a whole digit the "
            f"vertex sits between two digits and the lead is less.")


def _claimed_rule(views, claimed):
    """Which counting rules give the authors' claimed count, in words."""
    names = [f"{name} ({what})" for name, (n, what) in views.get("rule_counts", {}).items()
             if n == claimed]
    if names:
        return f" Its authors claim {claimed}, the count under the rule " + " and ".join(names)
    # as the board reads it (tinyadder board): under the entry's own rule, and why it differs
    counts = {name: SimpleNamespace(params=n, note="")
              for name, (n, _) in views.get("rule_counts", {}).items()}
    rule = own_rule(views["model"], claimed, counts, views["about"].get("family", ""))
    said = why(rule, claimed, counts).replace(f" under {rule}:", ":") if rule in counts else ""
    if not said:
        return f" The authors claim {claimed}. No rule here gives {claimed}."
    n, _ = views["rule_counts"][rule]
    # one plain answer (learner19 6): no rule gives the claim, what the file's count is
    # and what the difference is, said once each
    return (f" No rule gives the authors' {claimed}. The file's {rule} is {n}, "
            f"{abs(n - claimed)} {'more' if n > claimed else 'fewer'}: "
            f"{said.split(': ', 1)[-1].rstrip('.')}. seed000 counts {views['param_total']}.")


def _params_question(model, claimed):
    """The parameters step's question: where the name carries a claimed count the ledger
    does not give, the question says so, and the surprise is its point."""
    if claimed and re.search(rf"(?<!\d){claimed}(?!\d)", model):
        return f"The name says {claimed}. Does the ledger agree? (how many does it count?)"
    return "How many parameters does the ledger count?"


def _drawn(views):
    """What the parameters figure draws: every counted parameter, or, where the ledger counts
    otherwise, the distinct values per tensor behind the counted ones."""
    drawn, total = len(views["params"]), views["param_total"]
    if drawn == total:
        return "Every counted parameter, drawn over the slots it writes."
    # the step asks for the ledger's count: the text leaves the total to the learner
    return (f"The figure below draws {drawn} chips. Each is one distinct value of a counted "
            "tensor, per tensor and per embedding row. The chips stand behind the parameters "
            "the ledger counts. Each stage's heading gives both numbers. A value two tensors "
            "or token rows share is drawn in each. tinyadder params --rules's 'distinct' "
            "counts it once, model-wide.")


def _any_params(views):
    claimed = views["about"].get("params_claimed")
    return {
        "view": "params", "state": {}, "section": None,
        "title": "The parameters",
        "veil": True,  # the view opens on the ledger's count: hidden until a check or the answer
        "text": _drawn(views) + " tinyadder's ledger counts them by one rule, the same for "
                "every model (named seed000: every trainable number counted once; it gives "
                "TinyAdder-36 its 36); tinyadder params --rules prints every rule side by "
                "side.",
        "question": _params_question(views["model"], claimed),
        "expect": {"kind": "integers", "values": [views["param_total"]], "what": ["count"]},
        "answer": _params_answer(views, claimed),
    }


def _params_answer(views, claimed):
    """'22. No rule gives the authors' 28. The file's numel is 90, ...' where no rule gives
    the claim, else '36: the ledger counts 36. Its authors claim ...'; then where every
    rule's count is printed."""
    total, said = views["param_total"], _claimed_rule(views, claimed) if claimed else ""
    apart = said.startswith(" No rule gives")
    lead = f"{total}." if apart else \
        f"{total}: the ledger counts {total}." + said + ("" if not said or said.endswith(".")
                                                         else ".")
    return (lead + (said if apart else "") +
            _literals(views, claimed) + f" tinyadder params --model {views['model']} --rules "
            "prints the count under every rule.")


def _literals(views, claimed):
    """Where the claim counts only the file's named constants (the rule free) and the ledger
    more: a few of the values the file writes as literals, which the ledger counts and the
    claim leaves out, the first of each tensor past the embedding whose rule names no
    constant (learner21 6); '' elsewhere."""
    free = (views.get("rule_counts") or {}).get("free")
    if not claimed or not free or free[0] != claimed or views["param_total"] <= claimed:
        return ""
    seen = {}
    for p in views["params"]:
        if p["part"] != "embedding" and "named constant" not in p["rule"]:
            seen.setdefault(p["tensor"], p["value"])
    if not seen:
        return ""
    named = "; ".join(f"{t} {v}" for t, v in list(seen.items())[:3])
    rows = [p for p in views["params"] if p["part"] == "embedding"
            and "per token row" in p["rule"]][1:2]  # the first row's 1000 may be a constant
    return (f" Among what the claim leaves out are values the file writes as literals, not "
            f"from a named constant: {named}" + "".join(
                f"; and the embedding's token rows, e.g. {p['value']} at {p['entries'][0]}"
                for p in rows) + ".")


def dust(cell):
    """Whether a residual value is dust: nonzero, but below 10^-12 (an exact run's far keys'
    weights, e to a very negative power, where a float run has 0)."""
    return cell[1] is not None and cell[1] < -12


def _residual_at(views, stage, slot, pos):
    rows = next(s for s in views["residual"] if s["short"] == stage)["slots"]
    return next(r for r in rows if r["slot"] == slot)["cells"][pos]


# What a typed number is checked to, per kind of quantity, said in the step's verdict: a
# slot's value within the step's tolerance (why that tolerance, by its size), a lead to two
# significant digits (``_any_readout``), anything else within 0.5 %.
WHY = {0.5: "the nearest whole number",
       1: "a wrap takes close to 100 off, no wrap close to 0"}


def within(tol):
    """The rule a slot's value is checked to, in one plain sentence: within(0.05) ==
    'anything within 0.05 counts as right'; a tolerance with a reason says it."""
    return f"anything within {tol:g} counts as right" + (f": {WHY[tol]}" if tol in WHY else "")


# A designed family's tour steps on the column (``views.design``): after the attention, at
# the position that predicts s_k, the slot that holds the column and how the heads fill it;
# the slot that tells the carry into place k; what the FFN leaves in the column's slot (and
# the tolerance a typed prediction is checked to: the formulas are the hovers', within the
# bounds tests/test_explore.py checks on the run).
COLUMN = {
    "rope-19": ("x1", "The one head weighs a{k} and b{k} ten times as much as a{j} and b{j} "
                      "(the 10 : 1 of its rotary angles), and the position's own digit s{j} "
                      "sits in x1 as \u2212s{j}: x1 becomes 10\u00b7(a{k} + b{k}) + a{j} + b{j} "
                      "\u2212 s{j} = 10\u00b7(a{k} + b{k} + c{k}) \u2212 c{j}, c{k} the carry "
                      "into place {k}.", 0.5),
    "sinusoid-11": ("acc", "One head weighs a{k} and b{k} a half each (an intended tie) and "
                           "writes twice the digit into acc; the other reads the column below "
                           "into pe_sin.", 0.05),
    "rope-10000": ("x1", "Two heads, each turned back by its own fixed offset, attend one-hot "
                         "to a{k} and b{k} (a query turned by a fixed angle scores highest, by "
                         "far, the key that angle back; the step before says why in its text) and add "
                         "them into x1. The head that attends to the position itself moves "
                         "its own digit s{j} out of x1 and into x0, so x1 holds a{k} + b{k} "
                         "alone; the others read the column below into x0.", 0.05),
    "rope-10000/norm": ("x2", "Heads ca and cb (offsets 22 and 10 back) attend one-hot to a{k} "
                              "and b{k} and add them into x2; pa and pb (offsets 23 and 11) "
                              "read the column below into x1.", 0.05),
}
for _carry in ("linear", "hinge"):
    COLUMN[f"rope-10000/{_carry}"] = COLUMN["rope-10000/norm"]
CARRY = {  # design: (slot, whether the step asks for its change in the attention, the text)
    "sinusoid-11": ("pe_sin", True, "The second head reads a{j} and b{j} and adds them to "
                                    "pe_sin, on top of the position's sinusoid. The FFN "
                                    "compares pe_sin with the digit s{j} the position holds: "
                                    "their difference, less the sinusoid, is 10\u00b7c{k} "
                                    "\u2212 c{j}, so it tells whether a{j} + b{j} overflowed."),
    "rope-10000": ("x0", True, "Three heads read the digit the position holds, s{j}, and "
                               "a{j} and b{j} into x0: it changes by D = s{j} \u2212 a{j} "
                               "\u2212 b{j}. Column {j} adds up as a{j} + b{j} + c{j} = s{j} "
                               "+ 10\u00b7c{k}, so D = c{j} \u2212 10\u00b7c{k}, which is "
                               "\u22129 or \u221210 exactly when a carry comes into place "
                               "{k}."),
    "rope-10000/norm": ("x1", False, "Heads pa and pb read a{j} and b{j} and subtract them "
                                     "from the digit the position holds, s{j} (x1 = s{j} on "
                                     "the embedding): x1 becomes D = s{j} \u2212 a{j} \u2212 "
                                     "b{j} = c{j} \u2212 10\u00b7c{k}, \u22129 or \u221210 "
                                     "exactly when a carry comes into place {k}."),
}
for _carry in ("linear", "hinge"):
    CARRY[f"rope-10000/{_carry}"] = CARRY["rope-10000/norm"]
# design: (slot, what the FFN does there, the tolerance on its change; rope-19's change is
# close to 100 or close to 0, and within 1 tells the two apart with no decimals)
FFN = {
    "rope-19": ("x1", "It wraps the column: a pair of SiLU units, gated by 1000\u00b7x1 "
                      "\u2212 94\u00b7x0 and 1000\u00b7x1 \u2212 95\u00b7x0 (the table's "
                      "gates are 128 times these, on x after the norm, x\u0302 = x/rms), "
                      "takes close to "
                      "100 off x1 between x1/10 = 9.4 and 9.5, so x1/10 is within 0.25 of "
                      "s{k}; the carry came in through the attention.", 1),
    "sinusoid-11": ("acc", "It adds the carry, min(max(pe_sin \u2212 digit \u2212 1/2, 0), 1) "
                           "(a hinge pair), and wraps acc (another pair takes 10 off when it "
                           "reaches 10): acc is within 1/2 of s{k}.", 0.5),
    "rope-10000": ("x1", "It adds the carry (a hinge pair on x0 fires when D \u2264 \u22129) "
                         "and wraps x1 (another pair takes 10 off when the column with its "
                         "carry reaches 10): x1 = s{k}, exactly in float32, the file's "
                         "dtype (an exact run keeps the far keys' tiny weights, which leave "
                         "x1 a hair off s{k}).", 0.05),
    "rope-10000/norm": ("x2", "It wraps the column (a pair of SiLU units takes 10 off x2 when "
                              "x2 \u2212 x1/10 reaches 9.45) but does not add the carry: x2 = "
                              "a{k} + b{k} \u2212 10\u00b7c{n}. The carry comes in at the final "
                              "norm, which weighs x1 by \u22121/10 of x2: the readout's "
                              "parabola has its vertex at x2 \u2212 x1/10 = s{k} \u2212 "
                              "c{j}/10.", 0.05),
    "rope-10000/linear": ("x2", "It wraps the column (a pair of SiLU units takes 10 off x2 "
                                "when x2 \u2212 x1/10 reaches 9.45), and a third unit adds "
                                "(1/2 \u2212 x1)/10 = c{k} \u2212 c{j}/10 + 1/20, the carry: "
                                "x2 = s{k} \u2212 c{j}/10 + 1/20.", 0.05),
    "rope-10000/hinge": ("x2", "It wraps the column (a pair of SiLU units takes 10 off x2 "
                               "when x2 \u2212 x1/10 reaches 9.45), and a hinge pair on x1 adds "
                               "1 when x1 \u2264 \u22129, the carry: x2 = s{k}.", 0.05),
}
# what the FFN does, and what is left with it switched off (the "change one thing" step;
# tests/test_explore.py checks the min(a_k + b_k, 9) on runs)
_ADDS = ("In this design the FFN adds the carry and wraps.",
         "With neither the carry nor the wrap, each column writes min(a_k + b_k, 9): no "
         "carry, and a column that reaches 10 puts the readout's vertex past 9, where the "
         "largest digit, 9, wins.")
FFN_DOES = {
    "rope-19": ("In this design the FFN only wraps: the carry is in x1 already.",
                "The carry still comes in through the attention, but nothing wraps: a column "
                "that reaches 10 puts x1/10 past 9, where the largest digit, 9, wins, and "
                "each digit written feeds the next column's carry."),
    "rope-10000/norm": ("In this design the FFN only wraps: the carry comes in at the final "
                        "norm, from x1.",
                        "The carry still comes in at the final norm, but nothing wraps: a "
                        "column that reaches 10 puts the vertex past 9, where the largest "
                        "digit, 9, wins, and each digit written feeds the next column's "
                        "carry."),
    "sinusoid-11": _ADDS, "rope-10000": _ADDS, "rope-10000/linear": _ADDS,
    "rope-10000/hinge": _ADDS,
}


EMBED = {  # design: (the slot asked for, its value for a digit d, what the embedding holds)
    "rope-19": ("x1", "\u2212{d}", "Each digit d is embedded as two numbers: x0 = 1000 \u2212 d\u00b2/1000 "
                      "and x1 = \u2212d. x0 is the readout's parabola; x1 carries the digit, "
                      "which the head sums column by column."),
    "rope-10000": ("x1", "{d}", "Each digit d is embedded as two numbers: x0 = 1000 \u2212 "
                         "2.5\u00b710\u207b\u2074\u00b7d\u00b2 (the readout's parabola) and x1 = d, "
                         "the digit the heads add."),
    "rope-10000/norm": ("x2", "{d}/2000", "Each digit d is embedded as three numbers: x0 = 1000 \u2212 "
                              "d\u00b2/4000, x1 = d and x2 = d/2000. The embedding is tied, so "
                              "x0 and x2 are also the readout's parabola; x1 is the digit the "
                              "heads read."),
    "sinusoid-11": ("digit", "{d}", "Each token is embedded as its digit (digit = d), the position's "
                             "sinusoid of period 11 in pe_sin and pe_cos (amplitude 100 in the "
                             "prompt, 1 after it) and acc = 0, which the heads fill."),
}
for _carry in ("linear", "hinge"):
    EMBED[f"rope-10000/{_carry}"] = EMBED["rope-10000/norm"]


def _embedding(views):
    """A designed family's embedding step: what a0's token holds in one slot."""
    design = views.get("design")
    a0 = next((t for t in views["tokens"] if t["label"] == "a0"), None)
    if design not in EMBED or a0 is None or not views["meanings"]:
        return None
    slot, formula, how = EMBED[design]
    value = _residual_at(views, "embed", slot, a0["pos"])
    # a digit is checked as every slot's value is (0.05); d/2000 to 10⁻⁴, below its step
    tol = lambda design: 1e-4 if formula.endswith("/2000") else 0.05
    return {
        "view": "residual", "state": {"pos": a0["pos"], "stage": "embed"}, "section": None,
        "title": "The embedding",
        "text": how + f" Hover {slot} at the embedding stage.",
        "question": f"What does {slot} hold at position {a0['pos']}, the digit a0 = "
                    f"{a0['text']}, on the embedding? (a number)",
        "expect": {"kind": "numbers", "values": [value[0]], "texts": [shown(value[2])],
                   "tol": tol(design),
                   "rule": within(tol(design))},
        "answer": f"{shown(value[2])}: {slot} = {formula.format(d='d')} = "
                  f"{formula.format(d=a0['text'])} for d = {a0['text']}.",
    }


def _place_digits(views, k):
    """(a_k, b_k, c_k, c_(k-1), c_(k+1)): the column's digits and the carries into places k,
    k - 1 and k + 1 of the page's sum."""
    a, b = int(views["a"]), int(views["b"])

    def carry(j):
        return int(j > 0 and a % 10 ** j + b % 10 ** j >= 10 ** j)
    return a // 10 ** k % 10, b // 10 ** k % 10, carry(k), carry(k - 1), carry(k + 1)


def _column_place(views, q):
    """The place k that position q predicts, when it is a designed family's column above the
    units (k >= 1) and the prompt holds a_k; else None."""
    if not views.get("design") or not views["meanings"] or q + 1 >= len(views["tokens"]):
        return None
    k = views["tokens"][q]["next_place"]
    labels = {t["label"] for t in views["tokens"]}
    return k if k and f"a{k}" in labels else None


def _before(views, stage):
    """The stage before ``stage``: a step that asks for a value after ``stage`` opens there,
    so the grid does not print the answer under the question."""
    shorts = [s["short"] for s in views["stages"]]
    return shorts[shorts.index(stage) - 1]


def _opens(views, stage, slot):
    """What such a step says of its stage: ' The step opens after L0.attn, before the FFN
    acts: predict, then move the stage slider to L0.mlp and hover x1.'"""
    return (f" The step opens at {_before(views, stage)}, the stage before: predict, then "
            f"move the stage slider to {stage} and hover {slot}.")


def _column(views, q):
    """A designed family's column step: after the attention, at the position that predicts
    s_k, one slot holds the column (``COLUMN``)."""
    k = _column_place(views, q)
    if k is None or views["design"] not in COLUMN:
        return None
    slot, how, tol = COLUMN[views["design"]]
    ak, bk, ck, cj, _ = _place_digits(views, k)
    value = _residual_at(views, "L0.attn", slot, q)
    said = (f"10\u00b7(a{k} + b{k} + c{k}) \u2212 c{k - 1} = 10\u00b7({ak} + {bk} + {ck}) "
            f"\u2212 {cj}" if views["design"] == "rope-19" else
            f"a{k} + b{k} = {ak} + {bk}")
    if views["design"] == "rope-10000":  # the self-attending head takes s_(k-1) out of x1
        before = _residual_at(views, "embed", slot, q)
        said = (f"x1 goes from {shown(before[2])} on the embedding (s{k - 1}, the position's "
                f"own digit) to {said}")
    return {
        "view": "residual", "state": {"pos": q, "stage": _before(views, "L0.attn")},
        "section": None, "title": "The column",
        "text": f"Position {q} predicts s{k}. " + how.format(k=k, j=k - 1) +
                _opens(views, "L0.attn", slot),
        "question": f"What does {slot} hold at position {q} after the attention? (a number)",
        "expect": {"kind": "numbers", "values": [value[0]], "texts": [shown(value[2])],
                   "tol": tol, "rule": within(tol)},
        "answer": f"{shown(value[2])}: {said}.",
    }


def _carry(views, q):
    """A designed family's carry step: the slot that tells whether a carry comes into place
    k, after the attention at the position that predicts s_k (``CARRY``)."""
    k = _column_place(views, q)
    if k is None or views["design"] not in CARRY:
        return None
    slot, change, how = CARRY[views["design"]]
    ak, bk, ck, cj, _ = _place_digits(views, k)
    below = [int(t["text"]) for t in views["tokens"] if t["label"] in (f"a{k - 1}", f"b{k - 1}")]
    after = _residual_at(views, "L0.attn", slot, q)
    before = _residual_at(views, "embed", slot, q)
    value = after[0] - before[0] if change else after[0]
    if views["design"] == "sinusoid-11":
        s = int(views["sum"]) // 10 ** (k - 1) % 10
        said = (f"a{k - 1} + b{k - 1} = {' + '.join(map(str, below))}. Less the digit s{k - 1} "
                f"= {s} the position holds, that is {sum(below) - s} = 10\u00b7c{k} \u2212 "
                f"c{k - 1}")
    else:
        said = f"c{k - 1} \u2212 10\u00b7c{k} = {cj} \u2212 10\u00b7{ck}"
    asked = (f"By how much does the attention change {slot} at position {q}?" if change else
             f"What does {slot} hold at position {q} after the attention?")
    text = _amount(value)
    return {
        "view": "residual", "state": {"pos": q, "stage": "embed"}, "section": None,
        "title": "The carry",
        "text": how.format(k=k, j=k - 1) + f" {slot} at position {q} is {shown(before[2])} "
                f"on the embedding, the stage this step opens at; predict, then move the "
                f"stage slider to L0.attn and compare.",
        "question": asked + " (a number)",
        "expect": {"kind": "numbers", "values": [value], "texts": [text], "tol": 0.05,
                   "rule": within(0.05)},
        "answer": f"{text}" + (f" ({slot}: {shown(before[2])} on the embedding \u2192 "
                              f"{shown(after[2])} after L0.attn)" if change else "") +
                  f": {said}, so " + (f"a carry comes into place {k}." if ck else
                                          f"no carry comes into place {k}.") + (
                      "" if views["design"] == "sinusoid-11" else _another_carry(views, q)),
    }


def _another_carry(views, q):
    """A second case of D = c_(k−1) − 10·c_k to look at: the first position that predicts a
    column whose D differs from position q's, +1 (a carry in, none out) first; '' if none."""
    def d(p):
        _, _, ck, cj, _ = _place_digits(views, _column_place(views, p))
        return cj - 10 * ck
    others = [p for p in views["predicting"]
              if p != q and _column_place(views, p) is not None and d(p) != d(q)]
    if not others:
        return ""
    p = min(others, key=lambda p: (d(p) != 1, p))
    k = _column_place(views, p)
    _, _, ck, cj, _ = _place_digits(views, k)
    return (f" Another case: choose position {p} (it predicts s{k}); there D = c{k - 1} "
            f"\u2212 10\u00b7c{k} = {cj} \u2212 10\u00b7{ck} = {cj - 10 * ck:+d}"
            .replace("= -", "= \u2212") + ".")


def _units_said(views, slot):
    """A pointer to the table of a small FFN's hidden units (``views.hidden_units``), which the
    step holds back until a check (its outputs add up to the answer), or ''."""
    units = (views.get("hidden") or {}).get("L0.mlp")
    if not units:
        return ""
    relu = " ('0 (off)' where it does not fire)" if units["act"] == "relu" else ""
    adds = (f", and what it adds to {slot}" if units["writes"] else
            f", its down weight and what it adds to {slot} through it" if units.get("down")
            else "")
    return (f" The table under the residual stream lists the FFN's {len(units['units'])} "
            f"hidden units at this position: what goes into each, what comes out{relu}{adds} "
            "(it opens once you check a guess or show the answer: its outputs add up to the "
            "answer).")


def _down_said(views, slot, q):
    """A small FFN's whole write into ``slot`` at ``q`` through its down projection, where the
    hidden units' table shows it (``views.hidden_units``' down): ' = 100.002 + (−99.0098):
    ...', or ''."""
    units = (views.get("hidden") or {}).get("L0.mlp")
    if not units or not units.get("down") or slot not in units["wrote"][q]:
        return ""
    before = _residual_at(views, "L0.attn", slot, q)
    wrote = units["wrote"][q][slot]
    return (f" = {shown(before[2])} + ({shown(wrote[2])}): the units' outs times their down "
            f"weights, summed (the table's last column), add {shown(wrote[2])} to {slot}" +
            (", not exactly \u2212100" if views["design"] == "rope-19" else ""))


def _ffn(views, q):
    """A designed family's FFN step: the FFN's change to the column's slot at the position that
    predicts s_k (``FFN``; x after the FFN leads to s_k, which the grid's next column header
    shows, so the step asks the change, which needs what the FFN does), its hidden units'
    table held back (their outputs add up to it)."""
    k = _column_place(views, q)
    if k is None or views["design"] not in FFN:
        return None
    slot, how, tol = FFN[views["design"]]
    a, b, s = (int(views[n]) // 10 ** k % 10 for n in ("a", "b", "sum"))
    before, after, change = _ffn_change(views, slot, q)
    vertex = "x1/10" if views["design"] == "rope-19" else "its vertex"
    return {
        "view": "residual", "state": {"pos": q, "stage": _before(views, "L0.mlp")},
        "section": None, "title": "The FFN", "units": False,
        "text": how.format(k=k, j=k - 1, n=k + 1) + _opens(views, "L0.mlp", slot) +
        _units_said(views, slot),
        "question": f"By how much does the FFN change {slot} at position {q}, where the "
                    f"attention left it at {shown(before[2])}? (a number, negative where it "
                    f"takes off; a{k} = {a}, b{k} = {b})",
        "expect": {"kind": "numbers", "values": [change], "texts": [_amount(change)],
                   "tol": tol, "rule": within(tol)},
        "answer": f"{_amount(change)}: {slot} becomes {shown(after[2])}" +
                  _down_said(views, slot, q) + (
            ", that is 0 but for the far keys' weights (e to a very negative power, which an "
            "exact run keeps and a float run rounds to 0)" if dust(after) else "") +
                  f". The readout's parabola then writes the digit nearest {vertex}: {s}.",
    }


def _ffn_change(views, slot, q):
    """(``slot`` before the FFN, after it, the FFN's change to it) at q."""
    before, after = (_residual_at(views, stage, slot, q)
                     for stage in (_before(views, "L0.mlp"), "L0.mlp"))
    return before, after, after[0] - before[0]


def _gate_weights(views):
    """The file's gate weights as it writes them, {'x0 -> g0': text, ...}, from the
    parameters view (each entry's value expression)."""
    return {e: p["value"] for p in views["params"] if p["tensor"].endswith("mlp.W_gate")
            for e in p["entries"]}


def tied(views):
    """Whether the file ties its two gate units: it writes g1's weight on x0 as a − c/1000
    from g0's own two weights a (on x0) and c (on x1), an expression of them and no number
    of its own (lokimorty-10; zcbtrak-6 writes the same weight as a literal)."""
    w = _gate_weights(views)
    a, c = w.get("x0 -> g0"), w.get("x1 -> g0")
    return a is not None and c is not None and w.get("x0 -> g1") == f"{a} - {c}/1000"


def _tied_gate(views, q):
    """A step of its own for a file that ties its gate units (``tied``: lokimorty-10): they
    share the weights a, c, g0 = a·x0 + c·x1 and g1 = (a − c/1000)·x0 + c·x1, so
    g0 − g1 = (c/1000)·x0 and x0 (normalised) is the linear branch; the step reads g0, the
    linear branch and c/1000 from the run at q and asks for g1. None elsewhere."""
    units = (views.get("hidden") or {}).get("L0.mlp")
    if (not tied(views) or not units
            or units["units"] != ["g0", "g1"] or not units["linear"]):
        return None
    (g0, g1), x0 = units["pre"][q], units["linear"][q][0]
    raw = _residual_at(views, _before(views, "L0.mlp"), "x0", q)
    ratios = [(p[0][0] - p[1][0]) / lin[0][0] for p, lin in zip(units["pre"], units["linear"])
              if lin[0][0]]
    tie = sum(ratios) / len(ratios)
    return {
        "view": "residual", "state": {"pos": q, "stage": "L0.mlp"}, "section": None,
        "units": False,  # the FFN's table prints g1: shown once a check or the answer opens it
        "title": "The tied gate",
        "text": f"A tied gate: {views['model']}'s FFN's two gate units "
                f"share two weights a and c (the file writes g1's weight on x0 as a "
                f"\u2212 c/1000, no number of its own), g0 = a\u00b7x0 + c\u00b7x1 and g1 = (a \u2212 "
                f"c/1000)\u00b7x0 + c\u00b7x1 (x0 and x1 normalised), so g0 \u2212 g1 = "
                f"(c/1000)\u00b7x0 at every position: {'%.6g' % tie} in this run, "
                f"(g0 \u2212 g1)/x0 averaged over its {len(ratios)} positions, so c = "
                f"{'%.6g' % (1000 * tie)}. The table under the residual stream (shown once "
                f"you check) gives g0 (\u201cgate\u201d) and x0 (the linear branch, the same normalised x0).",
        # x0 in the stream and the normalised x̂0 the gates read (learner22 7)
        "question": f"At position {q}, g0 = {shown(g0[2])} and x\u03020 = x0/rms \u2248 "
                    f"{'%.6g' % raw[0]}/{'%.4g' % (raw[0] / x0[0])} = "
                    f"{shown(x0[2]).lstrip('~')}. "
                    f"Predict g1.",
        "expect": {"kind": "numbers", "values": [g1[0]], "texts": [shown(g1[2])],
                   "tol": 0.05, "rule": within(0.05)},
        "answer": f"{shown(g1[2])} = {shown(g0[2])} \u2212 {'%.6g' % tie}\u00b7"
                  f"{shown(x0[2])}: the two gates differ only in x0's weight, so they part by "
                  f"{'%.6g' % tie} times x0 wherever they are; the wrap is decided by where "
                  f"x1 puts them. zcbtrak-6's file writes that weight as a literal of its own: "
                  "the tie changes how the parameters are counted, not what is computed.",
    }


# why a rotary head attends one-hot, for the designs whose heads do (models.md: rope-10000)
ONE_HOT = {"rope-10000": (
    " Why one-hot: each head's query is turned by a fixed angle. Its score with a key is then "
    "a large constant times the cosine of the angle left between them: 1 for the key exactly "
    "the head's offset back, smaller for every other. No other key comes back to 1: the query "
    "turns by a whole number of radians per position back, and no whole number of radians "
    "is a whole number of turns (\u03c0 is irrational), so its angle to any other key is "
    "never 0 again. The nearest misses are keys 6 and 19 positions from it (6 radians is 0.28 "
    "short of one turn, 19 radians 0.15 past three): they take the largest of the other "
    "weights. Times "
    "the large constant, even that gap is so wide that the softmax puts all its weight on "
    "the one key (models.md, rope-10000, works it through).")}


def _layer_heads(views, layer, q):
    """One step per attention stage: where query q looks in each of layer ``layer``'s heads
    (the largest key of each, or the two largest of a one-head layer)."""
    keys = [key for key, h in views["heads"].items() if h["layer"] == layer]
    if len(keys) == 1 or not keys:
        return _any_attention(views, q, keys[0]) if keys else None
    # the view's strips show every head's row from the selected query q: a one-hot head
    # (``ONE_HOT``) looks a fixed offset back, so the step asks for the next query's, q + 1
    one_hot = (views.get("design") or "").split("/")[0] in ONE_HOT
    ask = q + 1 if one_hot and q + 2 < len(views["tokens"]) else q
    tops = [(key, _top_keys(views, key, ask)) for key in keys]
    if any(not top for _, top in tops):
        return None
    # a head whose two largest weights tie (within 0.1 %, sinusoid-11's intended halves)
    # names both
    tops = [(key, top[:2] if len(top) > 1 and top[1][1] >= 0.999 * top[0][1] else top[:1])
            for key, top in tops]
    said = "; ".join(f"{key}: " + " and ".join(f"{label} {shown(text)}" for label, _, text
                                               in top) for key, top in tops)
    words = []
    for _, top in tops:
        words += [_word(label) for label, _, _ in top if _word(label) not in words]
    why = ONE_HOT.get((views.get("design") or "").split("/")[0], "")
    why += _runner_up(views, keys, q) if why else ""
    return {
        "view": "attention", "state": {"pos": q, "head": keys[0], "stage": f"L{layer}.attn"},
        "section": "rope",
        "title": f"Layer {layer}'s {len(keys)} heads",
        "text": f"Layer {layer} has {len(keys)} heads, each with its own map: choose one with "
                f"the head buttons. The strips above the map show every head's row from the "
                f"selected query at once, each head's largest weights in numbers. Position "
                f"{q} ({_label_of(views, q)}) predicts {_label_of(views, q + 1)}." + why,
        "question": (f"Which key does each head weigh most from query {ask}, the position "
                     f"after the selected one? (read each head's key from query {q} in the "
                     f"strips above, then shift it by one position; one label per head, in "
                     f"head order, {keys[0]}'s first, e.g. a3 b3; both where two tie; then "
                     f"choose position {ask} to see)" if ask != q else
                     f"Which key does each head weigh most from query {q}? (one label per "
                     f"head, in head order, {keys[0]}'s first, e.g. a3 b3; both where two "
                     f"tie)"),
        "expect": {"kind": "words", "values": words,
                   "groups": [[_word(label) for label, _, _ in top] for _, top in tops],
                   "texts": [label for _, top in tops for label, _, _ in top]},
        "answer": f"The largest weight of each head from query {ask}: {said}." + (
            f" Each head looks as far back as from query {q}: one key later." if ask != q
            else ""),
    }


def _runner_up(views, keys, q):
    """How wide a one-hot head's gap is, in this run: the largest second-largest weight of the
    ``keys``' rows from query q, where an exact run keeps it (a float run rounds it to 0:
    then '')."""
    seconds = []
    for key in keys:
        row = [c for c in views["heads"][key]["softmax1"][q][:q + 1]
               if c[2] != "masked" and c[1] is not None]
        ranked = sorted(row, key=lambda c: -c[1])
        if len(ranked) > 1 and ranked[1][1] < -30:
            seconds.append((ranked[1][1], key, ranked[1][2]))
    if len(seconds) < len(keys):
        return ""
    _, key, text = max(seconds)
    return (f" In this run the largest second-place weight of any head from query {q} is "
            f"{shown(text)} ({key}): that is how wide the gap is.")


def _ratio_step(views, q):
    """rope-19's 10 : 1: the weight of a_k against a_(k-1) from the query that predicts
    s_k."""
    k = _column_place(views, q)
    if k is None or views["design"] != "rope-19":
        return None
    key = next(iter(views["heads"]))
    weights = {label: (w, text) for label, w, text in _top_keys(views, key, q)}
    if f"a{k}" not in weights or not weights.get(f"a{k - 1}", (0,))[0]:
        return None
    ratio = weights[f"a{k}"][0] / weights[f"a{k - 1}"][0]
    return {
        "view": "attention", "state": {"pos": q, "head": key, "stage": "L0.attn"},
        "section": "rope", "title": "Ten to one",
        "text": f"The head gives a{k}, b{k} and a{k - 1}, b{k - 1} nearly all its weight, "
                f"in a fixed ratio set by the rotary angles. Written into x1, the column "
                f"below counts once and the column itself ten times: a carry out of the "
                f"column below is already a unit of the column.",
        "question": f"How many times a{k - 1}'s weight does a{k} get from query {q}? (a "
                    f"number)",
        "expect": {"kind": "numbers", "values": [ratio], "texts": [f"{ratio:.4g}"],
                   "tol": 0.05,
                   "rule": within(0.05)},
        "answer": f"{ratio:.4g}: a{k} {shown(weights[f'a{k}'][1])} against a{k - 1} "
                  f"{shown(weights[f'a{k - 1}'][1])}.",
    }


def _amount(x):
    """x to 6 significant digits, marked ~ when that rounds it (the tracer's convention)."""
    text = f"{x:.6g}"
    return shown(text if float(text) == x else f"~{text}")


def _any_writes(views, q, stage):
    """For a model without a designed family's steps: which slot a stage changes most at
    position q (by |after - before|, from the residual view), to be read off the view."""
    shorts = [st["short"] for st in views["residual"]]
    if stage not in shorts or shorts.index(stage) == 0:
        return None
    before, after = (views["residual"][shorts.index(stage) + d]["slots"] for d in (-1, 0))
    was = {r["slot"]: r["cells"][q][0] for r in before}
    moved = sorted(((abs(r["cells"][q][0] - was[r["slot"]]), r["slot"], r["cells"][q][2])
                    for r in after if r["slot"] in was and r["cells"][q][0] is not None
                    and was[r["slot"]] is not None), reverse=True)
    if len(moved) < 2 or not moved[0][0]:
        return None
    size, slot, text = moved[0]
    label = next(st["label"] for st in views["residual"] if st["short"] == stage)
    return {
        "view": "residual", "state": {"pos": q, "stage": stage}, "section": None,
        "title": f"What {stage} writes",
        "text": f"The residual stream after {label}: outlined cells are the ones this stage "
                f"changed. Hover the cells of position {q} here and at the stage before to "
                f"compare.",
        "question": f"Which slot does {stage} change most at position {q}? (its name)",
        "expect": {"kind": "words", "values": [slot.lower()], "texts": [slot],
                   "where": "not that slot: the slot names are the grid's row labels"},
        "answer": f"{slot}, by {_amount(size)}, to {shown(text)}; " + (
            f"next {moved[1][1]}, by {_amount(moved[1][0])}." if moved[1][0] else
            "no other slot changes."),
    }


def _switch_off(views, q):
    """Change one thing: the run with the last block's FFN switched off (``views.ffn_off``),
    the digit position q writes then."""
    off = views.get("ffn_off")
    if not off or q + 1 >= len(off["tokens"]):
        return None
    digit, built = off["tokens"][q + 1], views["tokens"][q + 1]["text"]
    changed = sum(x != y for x, y in zip(off["answer"], views["answer"]))
    right = views["sum"].zfill(len(views["answer"]))
    does, left = FFN_DOES.get(views.get("design"), (
        "What this FFN does was learned, not designed: the run shows what it contributes.",
        ""))
    return {
        "view": "change", "state": {"pos": q, "stage": f"L{off['layer']}.mlp"},
        "section": None, "title": "Change one thing",
        "veil": True,  # the view prints the answer: hidden until a check or the answer
        "text": f"The page also ran this sum, in {_dtype(off['number'])}" + (
                    f", the model's own dtype, not in {_dtype(views['number'])} as the "
                    f"rest of the page (a second exact run would cost as much as the page "
                    f"itself)" if off["number"] != views["number"] else "") +
                f", with layer "
                f"{off['layer']}'s FFN switched off: its output replaced by zeros at every "
                f"position, the attention and the readout as built. {does} The view below "
                f"sets the two runs side by side; it opens once you check a prediction or "
                f"show the answer. " + _rerun(views, off),
        "question": f"With the FFN off, which digit does position {q} write? (the model as "
                    f"built writes {built})",
        "expect": ({"kind": "integers", "values": [int(digit)], "what": ["digit"]}
                   if digit.isdigit() else {"kind": "words", "values": [digit.lower()]}),
        "answer": f"{digit}. The whole answer becomes {off['answer']} against {right}: "
                  f"{changed} of its {len(right)} digits change." + (" " + left if left
                                                                      else ""),
    }


def _dtype(number):
    """A number system's description as the board's dtype column names it:
    'float (IEEE 754 double)' -> 'float64', 'float32 (IEEE single)' -> 'float32'."""
    spec = number.split(" (")[0]
    return SHORT.get(spec, spec)


def _rerun(views, off):
    """The call that makes the FFN-off run (``views.ffn_off_view``), to run it in Python."""
    n = views["digits"]
    return (f"To run it yourself, in Python: from tinyadder.models import build; from "
            f"tinyadder.cache import run_with_cache; run_with_cache(build(\"{views['model']}"
            f"\"), \"{int(views['a']):0{n}d}+{int(views['b']):0{n}d}\", ns=\""
            f"{off['number'].split(' (')[0]}\", patch={{\"blocks.{off['layer']}.hook_mlp_out"
            f"\": lambda rows: [[v - v for v in r] for r in rows]}}) (v \u2212 v: a zero in "
            f"the run's own numbers" + ("; ns=\"float\" is float64)." if
                                        _dtype(off["number"]) == "float64" else ")."))


def _any_failing(views):
    """Find your own failing input, for a model the board shows failing (a pair the run gets
    wrong): the page cannot run the model, so the reader runs the sum typed."""
    name = views["model"]
    if VERDICTS.get(name) != "fails" or views.get("task"):
        return None
    known = WITNESSES.get(name) or SEARCHED.get(name)
    n = views["digits"]
    run = f"tinyadder --model {name} A+B"
    example = (f" One the board knows: {known[0]} + {known[1]}, where the exact run writes "
               f"{known[2]} (right: {known[0] + known[1]})." if known else "")
    return {
        "view": "residual", "state": {"stage": "readout"}, "section": None,
        "title": "Find your own failing input",
        "text": "This model does not add every pair right: tinyadder board lists it as "
                "failing. Look at where its decisions are closest, the smallest leads in the "
                "readout, for a sum that might tip one.",
        "question": f"Type an addition of {n}-digit numbers that you think {name} gets wrong, "
                    f"as A+B.",
        "expect": {"kind": "failing", "digits": n, "run": run, "model": name},
        "answer": f"The page cannot run the model; {run} does, and warns with exit status 1 "
                  f"on a wrong sum.{example}" + (
                      "" if views["correct"] else f" This page's sum is one: it writes "
                      f"{views['answer']} for {views['sum']}."),
    }


# shipped models that compute another shipped model's function: the same design and the
# same constants (rounded to the file's dtype), so the same numbers at every stage
# (tests/test_explore.py checks on the walkthrough's sum that the two runs agree to 10^-4 in
# every slot, and in every logit to 10^-7 of its size); the tour opens by saying so and goes
# straight to what differs
SAME_AS = {name: "zcbtrak-6" for name in ("kswain98-2", "kswain98-4", "kswain98-8",
                                          "lokimorty-10", "lokimorty-12")}


def _same_as(views, q):
    """The opening step of a model in ``SAME_AS``: which model it computes the same function
    as, whose tour explains it, and what this tour shows instead; it asks for the FFN's
    change at q, which the other model's tour asks for."""
    other = SAME_AS.get(views["model"])
    if other is None or views.get("design") != "rope-19":
        return None
    before, after, change = _ffn_change(views, "x1", q)
    tol = FFN["rope-19"][2]
    claimed, theirs = views["about"].get("params_claimed"), entry(other).claimed
    gate = ", the tied gate" if tied(views) else ""
    return {
        "view": "residual", "state": {"pos": q, "stage": _before(views, "L0.mlp")},
        "section": None, "title": f"The same function as {other}",
        "text": f"{views['model']} computes what {other} computes: the same design (the "
                f"{views['about'].get('family')} family's embedding, rotary head and wrap), "
                f"the same constants up to their rounding, so the same numbers at every "
                f"stage: x0 and x1 to within 10⁻⁴, the logits (about 10⁵) to "
                f"within 10⁻⁷ of their size. {other}'s page "
                f"and tour walk through how it adds, from the tokens to the FFN and the "
                f"readout: start there (tinyadder explore --model {other}, then open its page "
                f"at #tour=1). This tour goes straight to what "
                f"differs: how the file writes its numbers (the constants it names{gate}: "
                f"the next steps) and how many its authors count: {claimed} here, {theirs} "
                f"for {other} (the last step). tinyadder explore --compare {views['model']} "
                f"{other} sets the two side by side." + _opens(views, "L0.mlp", "x1"),
        "question": f"By how much does the FFN change x1 at position {q}, where the attention "
                    f"left it at {shown(before[2])}, here as in {other}'s tour? (a number, "
                    f"negative where it takes off)",
        "expect": {"kind": "numbers", "values": [change], "texts": [_amount(change)],
                   "tol": tol, "rule": within(tol)},
        "answer": f"{_amount(change)}, to {shown(after[2])}, as {other}'s tour finds at its "
                  f"step 'The FFN': the same wrap takes close to 100 off x1, and the two runs "
                  f"agree at every stage as the text says.",
    }


# where a model file's named constants sit: the board's files, read as JSON (the Model keeps
# an entry's expression, ``derived``, only where it is more than one name)
def named_entries(name):
    """{free constant: [the table entries whose text uses it]} of the shipped board file
    ``name``, in the file's order: 'embed.W_E[0][x0]', 'blocks.0.mlp.W_gate[x0][g0]'."""
    raw = json.loads(resources.files(models).joinpath(models.BOARD, f"{name}.json")
                     .read_text(encoding="utf-8"))
    free = [c for c in raw.get("constants", {}) if c not in raw.get("fixed", [])]
    found = {c: [] for c in free}

    def walk(obj, path):
        if isinstance(obj, (dict, list)):
            for key, value in (obj.items() if isinstance(obj, dict) else enumerate(obj)):
                walk(value, path + [str(key)])
        elif isinstance(obj, str):
            for c in free:
                if re.search(rf"(?<![\w.]){re.escape(c)}(?!\w)", obj):
                    found[c].append(_entry_name(path))
    for key, value in raw.items():
        if key not in ("about", "constants", "fixed", "format", "version", "name"):
            walk(value, [key])
    return found


def _entry_name(path):
    """['blocks', '0', 'mlp', 'W_gate', 'x0', 'g0'] -> 'blocks.0.mlp.W_gate[x0][g0]': the
    table's name, then its row and column."""
    at = next((i for i, p in enumerate(path) if p.startswith("W_") or p == "w"), len(path) - 2)
    return ".".join(path[:at + 1]) + "".join(f"[{p}]" for p in path[at + 1:])


def _constants_named(views):
    """What a model in ``SAME_AS`` names: its free constants and the entries each fills
    (``named_entries``); it asks which token's embedding the constant of value 1000 sets (the
    parabola's top, x0 = 1000 − d²/1000 at d = 0)."""
    if views["model"] not in SAME_AS:
        return None
    found = named_entries(views["model"])
    top = next((c for c, where in found.items()
                if len(where) == 1 and re.fullmatch(r"embed\.W_E\[\d\]\[x0\]", where[0])),
               None)
    if top is None:
        return None
    token = int(found[top][0][len("embed.W_E["):-len("][x0]")])
    # the asked constant's entry waits for the answer: its row is the token asked for
    said = "; ".join(f"{c}: " + (", ".join(where) if c != top else "x0 of one token's "
                                 "embedding, the question below")
                     for c, where in found.items() if where)
    unused = [c for c, where in found.items() if not where]
    unused = (f" {' and '.join(unused)}: named and counted, but no entry's text uses "
              f"{'them' if len(unused) > 1 else 'it'}: the file writes what derives from "
              f"{'them' if len(unused) > 1 else 'it'} as literals." if unused else "")
    return {
        "view": "params", "state": {}, "section": None,
        "title": "The constants it names",
        "text": f"{views['model']}'s file names {len(found)} free constants, the numbers its "
                f"authors count; every other entry is a literal, or an expression of these. "
                f"The entries each one fills: {said}." + unused +
                f" The embedding is {views['about'].get('family')}'s: x0 = 1000 − "
                f"d²/1000 for the digit d. tinyadder params --model {views['model']} "
                f"--rules counts them under every rule.",
        "question": f"{top} = 1000 fills one token's x0 on the embedding. Which token's? (a "
                    f"digit)",
        "expect": {"kind": "integers", "values": [token]},
        "answer": f"{token}: {top} fills {found[top][0]}, x0 = 1000 \u2212 {token}\u00b2/1000 "
                  f"= 1000 exactly, the parabola's top; the other nine tokens' x0 are "
                  f"literals.",
    }


def any_steps(views):
    """The tour of a model outside the TinyAdder-36 family, from what every model has and, for
    a designed family (``views.design``), its column mechanism: the tokens by role; where the
    query that predicts the tens digit looks, one step per attention stage; the column, the
    carry and the FFN; the readout's winner and lead; the run with the FFN switched off; an
    input of the reader's own where the model fails; the parameters. A model in ``SAME_AS``:
    the step naming the model whose function it computes, then only what differs."""
    decides = {_label_of(views, p + 1): p for p in views["predicting"]
               if p + 1 < len(views["tokens"]) and views["tokens"][p + 1]["role"] == "sum"}
    q = decides.get("out1" if views.get("task") else "s1", views["predicting"][0])
    layers = sorted({h["layer"] for h in views["heads"].values()})
    designed = [_ratio_step(views, q), _column(views, q), _carry(views, q), _ffn(views, q)]
    if not any(designed) and not views.get("task"):  # what the first and the last layer write
        designed = [_any_writes(views, q, f"L{layers[0]}.attn"),
                    _any_writes(views, q, f"L{layers[-1]}.mlp")] if layers else []
    if _same_as(views, q):  # what the other model's tour shows, said once; then what differs
        return [s for s in (_same_as(views, q), _constants_named(views), _tied_gate(views, q),
                            _any_failing(views), _any_params(views)) if s is not None]
    steps = ([_any_tokens(views, q), _embedding(views)] +
             [_layer_heads(views, layer, q) for layer in layers] +
             designed + [_tied_gate(views, q), _any_readout(views, q), _switch_off(views, q),
                         _any_failing(views),
                         _any_params(views)])
    return [s for s in steps if s is not None]


# a caret's exponent as the questions and charts write it: 10^-9 as 10⁻⁹, 2^-(i−j) as 2⁻⁽ⁱ⁻ʲ⁾
RAISED = str.maketrans("-\u22120123456789()+ijNn", "\u207b\u207b\u2070\u00b9\u00b2\u00b3"
                       "\u2074\u2075\u2076\u2077\u2078\u2079\u207d\u207e\u207a"
                       "\u2071\u02b2\u1d3a\u207f")
CARET = re.compile(r"\^([-\u2212]?(?:\d+|\([-\u2212+ijNn0-9]*\)))")


def raised(text):
    """text with each caret power as superscripts, the numbers unchanged:
    raised('P/10^6, 2^-(i\u2212j)') == 'P/10\u2076, 2\u207b\u207d\u2071\u207b\u02b2\u207e'."""
    return CARET.sub(lambda m: m.group(1).translate(RAISED), text)


def _raised(step):
    """A step whose text, question and answer write powers as superscripts (``raised``)."""
    return {**step, **{k: raised(step[k]) for k in ("text", "question", "answer") if k in step}}


def steps(views):
    """The tour of one page: ten steps through the mechanism, each using only what the steps
    before it introduced, then two that go further (change one thing, and an input of the
    reader's own); for a model
    outside the family, ``any_steps``; [] when a family model lacks a view the tour needs."""
    if not views["family"]:
        out = any_steps(views)
        cited = view_sections(views)
        kept = {}
        for k, step in enumerate(out, 1):
            step["section"] = cited.get(step["view"])
            step["state"] = {"stage": "L0.attn", "head": next(iter(views["heads"])),
                             "mode": "softmax1", "variant": "built",
                             **_kept(kept, step["state"]), **step["state"]}
            kept = step["state"]
            step["title"] = f"{k}. {step['title']}"
            step["question"] = _tolerance_said(step)
        return [_raised(step) for step in out]
    if any(views["missing"][v] for v in ("place", "count", "sum", "ruler", "flaw")):
        return []
    q = focus(views)
    out = [_tokens(views), _place(views, q), _attention(views), _count(views),
           _head4(views, q), _candidates(views, q), _sum(views, q), _ruler(views, q),
           _readout(views, q), _flaw(views), _change(views), _your_own(views)]
    out = [step for step in out if step is not None]
    kept = {}
    for k, step in enumerate(out, 1):
        step["state"] = {"stage": "readout" if step["view"] == "flaw" else "L0.attn",
                         "head": views["place_head"], "mode": "softmax1",
                         "variant": "built", **_kept(kept, step["state"]), **step["state"]}
        kept = step["state"]
        step["title"] = f"{k}. {step['title']}"
        step["question"] = _tolerance_said(step)
    return [_raised(step) for step in out]


# the tolerance of a check with no rule of its own (the page's ``close``): a number within 0.5 %,
# a magnitude within a decade
DEFAULT_RULES = {"numbers": "anything within 0.5 % counts as right",
                 "magnitudes": "anything within a factor of ten counts as right"}


def _tolerance_said(step):
    """The step's question with the tolerance its check allows, in the question itself: the
    rule appended inside a closing parenthesis, or as one of its own; a question with no
    tolerance (an exact integer, a word), or one that says it already, as it is."""
    expect, question = step.get("expect") or {}, step["question"]
    rule = expect.get("rule") or DEFAULT_RULES.get(expect.get("kind"))
    if not rule or rule in question:
        return question
    if question.endswith(")"):
        return f"{question[:-1]}; {rule})"
    return f"{question} ({rule})"


def _kept(before, state):
    """What a step that names no position keeps of the step before it: the position, and
    the stage with it (a step about something else, the parameters, moves nothing)."""
    if "pos" in state or "pos" not in before:
        return {}
    return {"pos": before["pos"], **({} if "stage" in state else {"stage": before["stage"]})}
