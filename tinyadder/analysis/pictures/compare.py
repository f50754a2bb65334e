"""Two designs on one sum, side by side (``tinyadder explore --compare A B EXPR``).

``agreement(left, right)`` lines the two runs up by what each position holds (``roles``: a3,
s0, a separator), not by its index, since two prompt layouts put a3 in different places; for
every stage both have (by its short name: embed, L0.attn, ..., readout) and every slot both
name alike, it says whether the values agree (to six significant digits, dust 10^-12 times
the slot's largest value and less counting as zero: ``alike``) at every position both have.
zcbtrak-6, lokimorty-10 and kswain98-2 compute the same x1 in layer 0's attention,
yieldthought-20 and wonderfall-27 another. Where the logits are on different scales
(``scales_differ``) the readout's winner is compared in their place; slots named alike that
mean different things (``homonyms``) are said so.

``page(left, right)`` is one self-contained HTML page: both prompt layouts and sums, that
table, then stage by stage each model's residual stream (slots by name, the logits at the
readout) and each layer's attention heads, one model above the other at full width. It has
no script: A is drawn at the position its explorer page opens at, B at the position that does
the same (``matched``: predicts the same digit of the sum, or holds the same), a stage one
lacks matched by role (``stage_of``), as on the live page.
"""

from fractions import Fraction
from html import escape
import re

from .. import families
from . import figures, svg


def job(tokens, pos):
    """The job of a separator (any token not a digit of a, b or the sum) by what follows it:
    'the separator before a' (or b, or the answer) when the next token is the first of that
    operand or of the sum; None for any other (the padding zeros of a prompt).

    >>> tokens = [{"role": r} for r in ("special", "a", "special", "special", "b", "special",
    ...                                 "sum")]
    >>> [job(tokens, p) for p in (0, 2, 3, 5)]
    ['the separator before a', None, 'the separator before b', 'the separator before the answer']
    """
    after = tokens[pos + 1]["role"] if pos + 1 < len(tokens) else None
    if tokens[pos]["role"] in ("a", "b", "sum") or after not in ("a", "b", "sum"):
        return None
    if next(t for t in tokens if t["role"] == after) is not tokens[pos + 1]:
        return None
    return f"the separator before {'the answer' if after == 'sum' else after}"


def by_label(views):
    """{role label: position} of a run: a digit's label (a3, s0); a separator's job
    (``job``); any other separator its text, which several positions may share: the second
    and later are numbered ("'0' #2")."""
    out, seen = {}, {}
    for t in views["tokens"]:
        task = job(views["tokens"], t["pos"])
        if task:
            out[task] = t["pos"]
            continue
        k = seen[t["label"]] = seen.get(t["label"], 0) + 1
        out[t["label"] if k == 1 else f"{t['label']} #{k}"] = t["pos"]
    return out


def padding(label):
    """Whether a ``by_label`` label is a separator without a job ("'0' #3")."""
    return re.fullmatch(r"'.*?'( #\d+)?", label) is not None


def counterparts(left, right):
    """{label: position} of ``right`` that a position of ``left`` with that label is matched
    with: every label but a padding separator's, which does a job only in the same prompt
    layout (a digit with its digit, a separator with the one doing the same job)."""
    same = left["layout"] == right["layout"]
    return {label: pos for label, pos in by_label(right).items()
            if same or not padding(label)}


def called(views, pos, note=""):
    """A position as every sentence of the comparison names it: a digit by its label (a2,
    s0); a separator as the token strip shows it, then its position and its job (``job``):
    "<bos> (0, the separator before a)", "'=' (8, the separator before the answer)", a
    padding zero "'0' (15)"; ``note`` added inside the brackets ("s0 (the last position:
    ...)")."""
    token = views["tokens"][pos]
    if token["role"] in ("a", "b", "sum"):
        return token["label"] + (f" ({note})" if note else "")
    task = job(views["tokens"], pos)
    return (f"{token['label']} ({pos}{', ' + task if task else ''}"
            f"{'; ' + note if note else ''})")


def differs_at(views, pos, note=""):
    """A position as the agreement tables' "first that differs" names it: one that holds a
    digit of the sum and predicts another by its number and both ("9 (holds s3, predicts
    s2)", as the key-quantity table names its row by the digit predicted); a separator that
    predicts a digit with it ("'=' (22, the separator before the answer; predicts s10)");
    any other as ``called`` names it."""
    tokens = views["tokens"]
    predicts = {p: digit for digit, p in deciding(views).items()}.get(pos)
    if predicts is None:
        return called(views, pos, note)
    if tokens[pos]["role"] in ("a", "b", "sum"):
        return f"{pos} (holds {tokens[pos]['label']}, predicts {predicts})"
    return called(views, pos, f"predicts {predicts}")


DUST = 1e-12   # a value this far below its slot's largest is rounding noise or underflow


def scale(cells):
    """The largest |value| of a slot's cells (0 when none is a finite number)."""
    return max((abs(c[0]) for c in cells if c[0] is not None), default=0.0)


def alike(a, b, size_a, size_b):
    """Whether two cells hold the same: the same text (six significant digits), or both
    dust, each at most ``DUST`` times its own run's scale of the slot (``size_a``,
    ``size_b``: each row's largest |value|; two designs' logits are on different scales):
    exact 10^-7386 beside a float's 0, whose texts differ."""
    if a[2] == b[2]:
        return True
    return (a[0] is not None and b[0] is not None and
            abs(a[0]) <= DUST * size_a and abs(b[0]) <= DUST * size_b)


# the marks on the lanes' numbers, said on the page (not only in docs/explorer.md)
MARKS = ("How to read the numbers: ~ marks a value rounded to six significant digits; before "
         "a minus sign it is written \u2248 (\u2248 \u221276.0820 is about \u221276.0820). "
         "\u2248 0 (exact dust) is a value not 0 but too small for a float (its hover gives it). "
         "A number with neither mark is exact.")


THIN = "\u2009"


def thin(text):
    """A rounded value's '~' kept apart from its digits by a thin space, as '\u2248 ' is by
    a space (at a small size '~68.99' reads as '~\u221268.99'): thin('~68.9941') ==
    '~\u200968.9941'; any other text as it is."""
    return text.replace("~", "~" + THIN, 1) if text.startswith("~") else text


def shown(said):
    """The tracer's text as the comparison prints it: ``svg.shown``, then ``thin``."""
    return thin(svg.shown(said))


def unused(views, pos):
    """What a logit's difference at ``pos`` is worth where its prediction is never used: 'a
    prompt position: its prediction is not used'; '' where it predicts a digit of the sum."""
    token = views["tokens"][pos]
    if token["predicts"] is not None:
        return ""
    return (f"{'the last position' if token['role'] == 'sum' else 'a prompt position'}: "
            "its prediction is not used")


def folded(found):
    """``table_rows`` with each run of two or more consecutive rows that agree at every
    position folded into one: {stage: 'embed \u2026 L1.attn', slot: 'all 48 stage-slot rows',
    same, compared, first: None, folded: 48}, and each stage's run of two or more slots that
    hold another quantity in each design into one (``folded_apart``); the rows that differ
    stay as they are."""
    return folded_apart(_folded_alike(found))


def folded_apart(found):
    """``found`` with each run of two or more consecutive rows of one stage that hold another
    quantity in each design (``apart``) folded into one: {stage: 'L1.mlp', slot: 'eq \u2026
    cand4 (10 slots)', apart: True, first: None, folded: 10}."""
    out = []
    for r in found:
        last = out[-1] if out else None
        if r.get("apart") and last and last.get("apart") and last["stage"] == r["stage"]:
            run = last.get("run", [last["slot"]]) + [r["slot"]]
            out[-1] = dict(last, run=run, folded=len(run), first=None,
                           slot=f"{run[0]} \u2026 {run[-1]} ({len(run)} slots)")
        else:
            out.append(r)
    return [{k: v for k, v in r.items() if k != "run"} for r in out]


def _folded_alike(found):
    out, run = [], []
    def flush():
        if len(run) > 1:
            stages = run[0]["stage"] if run[0]["stage"] == run[-1]["stage"] else \
                f"{run[0]['stage']} \u2026 {run[-1]['stage']}"
            out.append({"stage": stages, "slot": f"all {len(run)} stage-slot rows",
                        "same": run[0]["compared"], "compared": run[0]["compared"],
                        "first": None, "folded": len(run)})
        else:
            out.extend(run)
        run.clear()
    for r in found:
        if r["first"] is None and not r.get("apart") and not r.get("gap") and \
                r["slot"] != "winner":
            run.append(r)
        else:
            flush()
            out.append(r)
    flush()
    return out


def agreement(left, right):
    """[{stage, slot, same, compared, first, gap}]: per stage both runs have and slot both
    name, how many of the ``compared`` positions (matched by role label) hold the same value
    (``alike``), and the first that differs as (label, left text, right text); a logit both
    runs give a gap to the winner for is compared by that gap (``gap`` True): six digits of a
    logit near 10^5 tell nothing of the digit it loses by."""
    lpos, rpos = by_label(left), counterparts(left, right)
    labels = [label for label in lpos if label in rpos]
    rstages = {s["short"]: s for s in right["residual"]}
    out = []
    for stage in left["residual"]:
        other = rstages.get(stage["short"])
        if other is None:
            continue
        rslots = {row["slot"]: row for row in other["slots"]}
        for row in stage["slots"]:
            twin = rslots.get(row["slot"])
            if twin is None:
                continue
            gap = "gap" in row and "gap" in twin
            mine, theirs = (row["gap"], twin["gap"]) if gap else (row["cells"], twin["cells"])
            sizes = scale(mine), scale(theirs)
            same, differ = 0, []
            for label in labels:
                a, b = mine[lpos[label]], theirs[rpos[label]]
                if alike(a, b, *sizes):
                    same += 1
                else:
                    differ.append((lpos[label], a[2], b[2]))
            out.append({"stage": stage["short"], "slot": row["slot"], "same": same,
                        "compared": len(labels), "first": _first(left, differ), "gap": gap})
    return out


def _first(views, differ):
    """The agreement's first that differs, from ``differ`` [(position, left text, right
    text)] in the order compared: (label, left text, right text), a position whose
    prediction is not used tagged so (``unused``) with the first that predicts a digit of
    the sum and its two values added; None where none differs."""
    if not differ:
        return None
    pos, a, b = differ[0]
    note = unused(views, pos)
    used = next((d for d in differ if not unused(views, d[0])), None)
    if note and used:
        note += (f"; the first that predicts a digit of the sum: "
                 f"{differs_at(views, used[0])}, {shown(used[1])} against {shown(used[2])}")
    elif note:
        note += "; it differs at no position that predicts a digit of the sum"
    return differs_at(views, pos, note), a, b


def forms_of(views, stage, slot):
    """(the two forms of what ``slot`` holds after ``stage``, the stage that gives them): its
    own, or, where this stage does not write the slot, the last stage's before it that gives
    one (x0 after the readout holds what the FFN left); None where no stage does."""
    shorts = [s["short"] for s in views["residual"]]
    for short in reversed(shorts[:shorts.index(stage) + 1] if stage in shorts else []):
        forms = views["meanings"].get(short, {}).get(slot)
        if forms:
            return forms, short
    return None


def meaning(views, stage, slot, pos):
    """What ``slot`` holds after ``stage`` at position ``pos`` by its model's design (the
    explorer's hovers, ``views["meanings"]`` as ``forms_of`` finds them: the second form at
    a position that predicts a digit of the sum, TinyAdder-36's placeholders {i2}, {P}, {x}
    put in), or None where the page knows no meaning."""
    found = forms_of(views, stage, slot)
    if not found:
        return None
    decision = next((d for d in views["decisions"] if d["pos"] == pos), None)
    deciding_ = decision is not None or views["tokens"][pos]["next_place"] is not None
    return (found[0][1 if deciding_ else 0].replace("{i2}", str(pos + 2))
            .replace("{P}", svg.pretty(f"1e{decision['power']}") if decision else "")
            .replace("{x}", svg.shown(decision["x_text"]) if decision else ""))


def _form(views, stage, slot):
    """The form at a position that predicts a digit (``forms_of``), or None."""
    found = forms_of(views, stage, slot)
    return found[0][1] if found else None


def homonyms(left, right):
    """{stage: [slot]}: the slots (not the logits) both models name alike after a stage at or
    after the first stage where their designed meanings (``forms_of``) differ at the
    position that predicts a digit of the sum (one known and the other not counts as
    differing): zcbtrak-6's x1 after the embedding is −d, jacobli99-28's d, and after the
    attention 10·(a_k + b_k + c_k) − c_(k−1) against a_k + b_k; the published readout's eq
    holds its error plus the running average from L1.mlp on, the repaired one's still the
    average."""
    rstages = {s["short"]: {r["slot"] for r in s["slots"]} for s in right["residual"]}
    out, apart = {}, set()
    for stage in left["residual"]:
        short = stage["short"]
        shared = [r["slot"] for r in stage["slots"] if r["slot"] in rstages.get(short, ())
                  and not r["slot"].startswith("logit ")]
        apart |= {slot for slot in shared
                  if (_form(left, short, slot) or _form(right, short, slot))
                  and _form(left, short, slot) != _form(right, short, slot)}
        if any(slot in apart for slot in shared):
            out[short] = [slot for slot in shared if slot in apart]
    return out


def _names(slots):
    return " and ".join([", ".join(slots[:-1]), slots[-1]] if len(slots) > 1 else slots)


def homonym_line(left, right, hovers=True):
    """One sentence naming the slots both models name alike that hold different quantities
    (``homonyms``) and the stage from which they do, '' when there are none; ``hovers``:
    the page has a lane value's hover and the folded table below the sentence (the static
    page has no hover, and the table above it)."""
    since = {}
    for stage, slots in homonyms(left, right).items():
        for slot in slots:
            since.setdefault(slot, stage)
    if not since:
        return ""
    groups = {}
    for slot, stage in since.items():
        groups.setdefault(stage, []).append(slot)
    when = (f"from {next(iter(groups))} on" if len(groups) == 1 else
            "(" + "; ".join(f"{_names(slots)} from {stage} on" for stage, slots in
                            groups.items()) + ")")
    many = len(since) > 1
    return (f"Named alike, meant apart: {left['model']} and {right['model']} both have "
            f"{_names(list(since))}, but {'they hold' if many else 'it holds'} different "
            f"quantities in the two designs {when}: 'another quantity', equal numbers or not, "
            f"never 'same' (each design's own formula is in the table folded "
            f"{'below' if hovers else 'above'}"
            f"{', and in a lane value' + chr(39) + 's hover' if hovers else ''}).")


def _general(form):
    """A meaning's form without TinyAdder-36's per-position numbers: i + 2 in words, x and P
    left as the letters the formula names them by, an added term after what the slot held."""
    form = re.sub(r",? (with )?x = \{x\}|, P = \{P\}", "", form).replace("{i2}", "(i + 2)")
    return "what it held before " + form if form.startswith("+ ") else form


# docs/spec.md's section on the readout, its flaw and the repair (tests/test_compare.py checks
# the heading is there)
SPEC_READOUT = "Readout: negative-absolute-error logits"


def _listed(slots):
    """Slots named in a sentence: all of them up to four, else the first two and the last."""
    return _names(slots) if len(slots) <= 4 else f"{slots[0]}, {slots[1]}, …, {slots[-1]}"


def _writes(views, stage):
    """The slots the half-layer ``stage`` writes (``views["program"]``), in slot order."""
    return next((p["writes"] for p in views["program"] if p["stage"] == stage), [])


def _what_written(views, stage, slots):
    """What one design's ``stage`` does to the named-alike ``slots``: the quantities it
    writes into them (the meanings' names, 'err0'), added to what they held where its
    meaning says so, or the slots of its own it writes while these keep what they held."""
    drawn = stage_of(views, stage) or stage
    into = [s for s in slots if s in _writes(views, drawn)]
    forms = [(views["meanings"].get(drawn, {}).get(s) or [""])[0] for s in into]
    names = [f.split(" = ")[0] for f in forms if " = " in f]
    if into:
        what = f" ({_listed(names)})" if len(names) == len(into) else ""
        added = ", each added to what the slot held" if all(
            "held before" in f for f in forms) else ""
        return f"{views['model']}'s {drawn} writes into {_listed(into)}{what}{added}"
    own = [s for s in _writes(views, drawn) if s not in slots]
    return (f"{views['model']}'s {drawn} writes {_listed(own) if own else 'none of them'}"
            f"{' into slots of its own' if own else ''} and leaves {_listed(slots)} as they "
            "were")


def writes_lines(left, right):
    """{stage: one sentence}: at a stage where the slots both name alike but mean apart
    (``homonyms``) are written by one design and left as they were by the other (the
    published readout's L1.mlp against the repaired one's), what each design's stage
    writes there (``_what_written``); for TinyAdder-36's two readouts, a pointer to
    docs/spec.md's section on the readout and its repair."""
    out = {}
    for stage, slots in homonyms(left, right).items():
        wrote = [set(slots) & set(_writes(v, stage_of(v, stage) or stage))
                 for v in (left, right)]
        if bool(wrote[0]) == bool(wrote[1]):  # one writes them, the other leaves them
            continue
        spec = (f' (docs/spec.md, "{SPEC_READOUT}", says what the readout reads and why)'
                if left.get("family") and right.get("family") else "")
        out[stage] = (f"What each design's {stage} writes: "
                      f"{_what_written(left, stage, slots)}; "
                      f"{_what_written(right, stage, slots)}{spec}.")
    return out


def homonym_table(left, right, live=True):
    """Where the runs first differ (``differ_line``: on the ``live`` page a link that opens
    that stage, else one to its section below), then a folded table of the ``homonyms``:
    stage, slot, and what each design holds there at the position that predicts s_k, at
    each stage where one of them writes it; '' when there is neither."""
    said = differ_line(left, right)
    if said:
        first = said.split("first differ after ")[1].split(" ")[0]
        href = (f"#pos={figures.defaults(left)['pos']}&stage={first}&view=compare" if live
                else f"#stage-{first}")
        said = (f'<p id="cmp-differ">{escape(said[:-len("choose that stage.")])}'
                f'<a href="{escape(href)}">choose that stage</a>.</p>')
    return said + _homonym_fold(left, right)


def _homonym_fold(left, right):
    def own(views, stage, slot):
        return bool(views["meanings"].get(stage, {}).get(slot))

    def said(views, stage, slot):
        found = forms_of(views, stage, slot)
        if not found:
            return "no designed meaning this page knows"
        return ("" if found[1] == stage else f"as after {found[1]}: ") + _general(found[0][1])
    rows = "".join(f"<tr><td>{escape(stage)}</td><td><code>{escape(slot)}</code></td>" +
                   "".join(f"<td>{escape(said(v, stage, slot))}</td>" for v in (left, right)) +
                   "</tr>" for stage, slots in homonyms(left, right).items() for slot in slots
                   if own(left, stage, slot) or own(right, stage, slot))
    if not rows:
        return ""
    return ('<details id="homonyms"><summary>What the slots named alike mean in each design '
            f'({escape(homonym_stages(left, right))}; at the position that predicts '
            's_k)</summary><table class="cmp">'
            f'<thead><tr><th>stage</th><th>slot</th><th>{escape(left["model"])}</th><th>'
            f'{escape(right["model"])}</th></tr></thead><tbody>{rows}</tbody></table></details>')


def homonym_stages(left, right):
    """Which slots named alike mean apart, and at which stages (``homonyms``), in one
    clause: 'only L1.mlp and readout differ: eq … cand4', 'x1 differs from embed on'."""
    found = homonyms(left, right)
    slots = list(dict.fromkeys(s for ss in found.values() for s in ss))
    every = [s["short"] for s in left["residual"]
             if s["short"] in {r["short"] for r in right["residual"]}]
    stages = list(found)
    named = _listed(slots) if len(slots) <= 4 else f"{slots[0]} … {slots[-1]}"
    if stages == every[every.index(stages[0]):]:
        return f"{named} from {stages[0]} on"
    return f"only at {_names(stages)}: {named}"


def differ_line(left, right):
    """Where the two runs first differ, when some stage before it reads the same in every slot
    both name alike: 'From embed to L1.attn every slot both models name alike reads the same
    at every position; the two runs first differ after L1.mlp (eq, special, …, cand4): choose
    that stage.' (at every stage the page may show, not only the one it opens at; 'At embed'
    when only that stage comes before). From the comparison (``table_rows``): the first stage
    with a slot that differs at some position, or that holds another quantity; '' when the
    first stage compared already differs or no stage does."""
    rows = [r for r in table_rows(left, right) if r["slot"] != "winner"]
    stages = list(dict.fromkeys(r["stage"] for r in rows))
    differs = [r["stage"] for r in rows if r.get("apart") or r["first"] is not None]
    if not differs or differs[0] == stages[0]:
        return ""
    first = differs[0]
    same = stages[:stages.index(first)]
    slots = [r["slot"] for r in rows if r["stage"] == first and
             (r.get("apart") or r["first"] is not None)]
    span = f"At {same[0]}" if len(same) == 1 else f"From {same[0]} to {same[-1]}"
    return (f"{span} every slot both models name alike reads the same at every position; "
            f"the two runs first differ after {first} ({_listed(slots)}): choose that stage.")


def winners(views):
    """{position that predicts a digit of the sum: (the winning digits, the lead)}: the
    readout's winner (a logit whose gap to the largest is 0; several on a tie) and the lead,
    the winner's logit less the runner-up's, the tracer's text ('~0.0801490')."""
    rows = [r for r in views["residual"][-1]["slots"] if "gap" in r]
    out = {}
    for p in views["predicting"]:
        gaps = [(r["gap"][p], r["slot"][len("logit "):]) for r in rows]
        won = "".join(u for g, u in gaps if zero(g[2]))
        behind = [g for g, u in gaps if not zero(g[2]) and g[0] is not None]
        lead = max(behind, key=lambda g: g[0])[2].replace("-", "", 1) if behind else "0"
        out[p] = (won, "0" if len(won) > 1 else lead)
    return out


def zero(text):
    """Whether a tracer's text is an exact 0 ('0', a float's '0.0' or '-0.0')."""
    return text.lstrip("-") in ("0", "0.0")


def logit_size(views):
    """The largest |logit| of a run at the positions that predict a digit of the sum."""
    return logit_at(views)[0]


def logit_at(views, where=None):
    """(the largest |logit|, the position it is at) over the positions that predict a digit
    of the sum, or at the one position ``where``; (0.0, None) where there is none."""
    rows = [r for r in views["residual"][-1]["slots"] if r["slot"].startswith("logit ")]
    at = views["predicting"] if where is None else [where]
    return max(((abs(r["cells"][p][0]), p) for r in rows for p in at
                if r["cells"][p][0] is not None), default=(0.0, None))


def _about(size):
    """A size to two significant digits as the page prints it: 3.63e18 -> '3.6·10¹⁸'."""
    return svg.pretty(f"{size:.1e}".replace("e+", "e"))


def number(text):
    """The number of a tracer's text ('~0.0801490', '1/4', '~2.5e-4') as a float, to rank."""
    t = text.replace("~", "")
    if "/" in t:
        n, d = t.split("/")
        return float(n) / float(d)
    return float(t)


def scales_differ(left, right):
    """Whether the two runs' logits are on different scales: their largest |logit| (at the
    positions that predict a digit) more than a factor 2 apart, or their largest leads."""
    def apart(x, y):
        return x > 2 * y or y > 2 * x

    def lead(views):
        return max((number(t) for _, t in winners(views).values()), default=0.0)
    return apart(logit_size(left), logit_size(right)) or apart(lead(left), lead(right))


def deciding(views):
    """{sum digit label: the position that predicts it}: 's1' -> 32 in TinyAdder-36 at N = 10
    (it writes s10 first), 31 in lokimorty-10 (s0 first)."""
    tokens, out = views["tokens"], {}
    for pos in views["predicting"]:
        if pos + 1 < len(tokens) and tokens[pos + 1]["role"] == "sum":
            out[tokens[pos + 1]["label"]] = pos
    return out


def winner_agreement(left, right):
    """{same, compared, first}: at how many of the positions that predict a digit of the sum
    (matched by the digit they predict, ``deciding``) the same digit wins, and the first
    where not, as (label, left's winner, right's winner)."""
    mine, theirs = deciding(left), deciding(right)
    lw, rw = winners(left), winners(right)
    same, first = 0, None
    labels = [s for s in mine if s in theirs]
    for s in labels:
        a, b = lw[mine[s]][0], rw[theirs[s]][0]
        if a == b:
            same += 1
        elif first is None:
            first = (s, a, b)
    return {"same": same, "compared": len(labels), "first": first}


def scale_line(left, right, drawn=None):
    """The sentence said when the two runs' logits are on different scales (``scales_differ``):
    each run's largest |logit| over the positions that predict a digit of the sum and where,
    and with ``drawn`` (each run's position drawn) its largest there; compare the winner and
    the lead; '' otherwise."""
    if not scales_differ(left, right):
        return ""
    w = winner_agreement(left, right)
    (ls, lp), (rs, rp) = logit_at(left), logit_at(right)
    here = ""
    if drawn is not None:
        (lh, _), (rh, _) = logit_at(left, drawn[0]), logit_at(right, drawn[1])
        here = (f"; at the positions drawn here ({left['model']}'s {drawn[0]}, "
                f"{right['model']}'s {drawn[1]}) about {_about(lh)} and {_about(rh)}")
    return (f"The logits are on different scales (over all the positions that predict a "
            f"digit of the sum, {left['model']}'s largest |logit| is about {_about(ls)}, at "
            f"position {lp}, {right['model']}'s about {_about(rs)}, at position {rp}{here}): "
            f"compare the winner and the lead (the winner's logit less the runner-up's, each "
            f"in its own model's units), not the logits. The same digit wins at {w['same']} of "
            f"the {w['compared']} positions that predict a digit of the sum.")


def table_rows(left, right):
    """The rows the agreement tables show: ``agreement``'s, less the logits when they are on
    different scales (``scales_differ``), then the readout's winner (``winner_agreement``,
    slot 'winner') where both runs predict a digit of the sum."""
    found = agreement(left, right)
    if scales_differ(left, right):
        found = [r for r in found if not r["slot"].startswith("logit ")]
    apart = homonyms(left, right)  # another quantity: no count of equal numbers
    found = [dict(r, apart=True) if r["slot"] in apart.get(r["stage"], ()) else r
             for r in found]
    won = winner_agreement(left, right)
    return found + ([dict(won, stage="readout", slot="winner")] if won["compared"] else [])


def layouts_line(left, right, k):
    """The intro's clause on where a_k sits: by index where both runs give every position
    the same role, else that the two layouts put it in different places."""
    if [t["label"] for t in left["tokens"]] == [t["label"] for t in right["tokens"]]:
        return "both use the same prompt layout, so positions match one to one"
    return f"two prompt layouts put a{k} in different places"


def no_common_slot(found):
    """Whether the rows of ``table_rows`` are the readout's alone (its logits or winner):
    two designs that name no slot of the stream alike."""
    return bool(found) and all(r["stage"] == "readout" for r in found)


APART = "another quantity in each design: not compared"
NO_COMMON_SLOT = ("No slot of the stream in common: read each model's own lanes, with "
                  "their meanings in its hovers.")
NO_COMMON_SLOT_STATIC = ("No slot of the stream in common: read each model's own lanes, in the "
                         "two tables side by side under each stage's two figures.")


def apart_line(found):
    """When every slot row of ``table_rows`` is another quantity in each design (``apart``),
    the one sentence said in place of those rows; '' otherwise."""
    slots = list(dict.fromkeys(r["slot"] for r in found if r["slot"] != "winner"))
    if not slots or not all(r.get("apart") for r in found if r["slot"] != "winner"):
        return ""
    many = len(slots) > 1
    return (f"{'Every slot both name alike' if many else 'The one slot both name'} "
            f"({_names(slots)}) holds another quantity in each design at every stage, so no "
            "slot is compared position by position: the winner alone is.")


def _verdict(r):
    if r.get("apart"):
        return APART
    by = "its gap to the winner: " if r.get("gap") else ""
    if r["first"] is None:
        return f"{by}the same at all {r['compared']} positions"
    label, a, b = r["first"]
    return (f"{by}the same at {r['same']} of {r['compared']}; first differs at {label}: "
            f"{shown(a)} against {shown(b)}")


def _table(left, right, drawn=None):
    found = table_rows(left, right)
    said = "".join(f"<p>{escape(t)}</p>" for t in (homonym_line(left, right, False),
                                                   scale_line(left, right, drawn)) if t)
    if no_common_slot(found):
        return f"<p>{escape(NO_COMMON_SLOT_STATIC)}</p>{said}"
    apart = apart_line(found)
    if apart:  # one sentence, not one row per stage and slot saying the same
        said += f'<p id="all-apart">{escape(apart)}</p>'
        found = [r for r in found if r["slot"] == "winner"]
    rows = [f"<tr><td>{escape(r['stage'])}</td><td><code>{escape(r['slot'])}</code></td>"
            f"<td>{escape(_verdict(r))}</td></tr>" for r in found]
    if not rows:
        return ("<p>The two models name no slot alike at any stage: compare them by the "
                "drawings below.</p>")
    return (f'{said}<table id="agreement"><thead><tr><th>stage</th><th>slot</th><th>'
            f'{escape(left["model"])} against {escape(right["model"])} (positions matched by '
            'role; the same to six significant digits, dust counting as 0; the winner: the '
            'digit the readout picks)</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table>')


RUNNING_TOTAL = ("R + b + \u2113: what remains to be written plus the offset, in units of "
                 "the sum, which layer 1's running average holds (x = (R + b + \u2113)/P "
                 "falls on the ruler), to as many decimals as the division shown needs (3 or more)")


def key_quantities(views):
    """[(what it means, {the sum digit predicted (s0): (its text, the hover or None)})] at
    each position that predicts a digit of the sum: R + b + ℓ for the TinyAdder-36
    family (the narration's decisions), with x = (R + b + ℓ)/P and the digit it picks, as
    explain prints them, '2.489; ÷ 10¹: x = 0.2489 → digit 0'; a designed family's
    quantities after the attention (``families.column``'s, at the first one's stage: rope-19's x1; rope-10000's x1 = a_k +
    b_k and its carry in x0, D = c_(k−1) − 10·c_k): its formula in general, with what
    ``embedded`` in it is (``_embedded``) and why it holds where its terms do not say
    (``WHY``), and per digit the
    run's value and the formula with the digits put in, '~100.002; 10·(6 + 3 + 1) − 0', a
    value of exact dust (not 0, but too small for a float: an exact run's far keys' weights,
    10^-176924828) as '≈ 0 (exact dust)' with its text in the hover; [] for any other
    model."""
    tokens = views["tokens"]
    if views["decisions"]:
        return [(RUNNING_TOTAL, {tokens[d["pos"] + 1]["label"]: (
            f'{d["quotient"][0]}; \u00f7 {_place(d)}: x = {d["x_text"]} \u2192 digit '
            f'{d["chosen"]}', None) for d in views["decisions"]})]
    quantities = families.column(views.get("design"))
    if not quantities:
        return []

    def cells(short, slot):
        stage = next(s for s in views["residual"] if s["short"] == short)
        return next(r for r in stage["slots"] if r["slot"] == slot)["cells"]
    a, b = int(views["a"]), int(views["b"])
    out = []
    for quantity in (q for q in quantities if q.stage == quantities[0].stage):
        read, embedded = cells(quantity.stage, quantity.slot), cells("embed", quantity.slot)
        formula = quantity.formula.format(k="_k", j="_(k\u22121)", n="_(k+1)")
        where = "after the attention" if quantity.stage.endswith("attn") else "after the FFN"
        carry = "; c_k the carry into place k" if "c_" in formula else ""
        if "c_" in formula and "a_" not in formula:  # the carry alone: name it D
            rest = formula.replace("embedded + ", "")
            formula = (f"{'embedded + D, ' if rest != formula else ''}D = {rest}, which "
                       f"the FFN reads (\u221210 or \u22129 exactly where the column below "
                       f"carries)")
        # the run holds the formula to within a bound (zcbtrak-6's x1: 0.25), not exactly
        within = f"within {figures.text_figure(quantity.within, 6)}{carry}"
        column = {}
        for p in views["predicting"]:
            k = tokens[p]["next_place"]
            if k is None or not (k or quantity.at_units):
                continue
            filled = quantity.filled(a, b, k, None, thin(figures.value_text(embedded[p])))
            dust = read[p][0] == 0 and not zero(read[p][2])  # too small for a float
            column[tokens[p + 1]["label"]] = (
                f"{'≈ 0 (exact dust)' if dust else thin(figures.value_text(read[p]))}; "
                f"{filled}",
                svg.shown(read[p][2]) if dust else None)
        out.append((f"{quantity.slot} {where} \u2248 {formula} ({within})"
                    f"{WHY.get((views.get('design'), quantity.slot), '')}"
                    f"{_embedded(views, quantity.slot, formula)}", column))
    return out


# Why a formula holds where its terms alone do not say so: rope-19's head (the walkthrough's
# "Another design") weighs the column below a tenth, and the embedding left −s_(k−1) in x1
WHY = {("rope-19", "x1"): ", since the head weighs a_k and b_k ten times as much as "
                          "a_(k\u22121) and b_(k\u22121) and adds 10\u00b7(a_k + b_k) + "
                          "a_(k\u22121) + b_(k\u22121) to x1, which held \u2212s_(k\u22121), "
                          "and a_(k\u22121) + b_(k\u22121) \u2212 s_(k\u22121) = "
                          "10\u00b7c_k \u2212 c_(k\u22121)"}


def _embedded(views, slot, formula):
    """'; embedded = 1000 − 2.5·10⁻⁴·d² on the digit d the position holds (the readout's
    parabola)': what ``embedded`` in ``formula`` stands for, the slot's designed value on the
    embedding (``views["meanings"]``, its exponents as the page prints them); '' where the
    formula has no ``embedded`` or the page knows no such value."""
    said = views["meanings"].get("embed", {}).get(slot)
    if "embedded" not in formula or not said:
        return ""
    return "; embedded = " + re.sub(r"10\^(-?[0-9]+)", lambda m: svg.power(int(m.group(1))),
                                    said[1]).replace(" on a digit d", " on the digit d the "
                                                     "position holds")


def _place(d):
    """P as the key table divides by it: 10³, or its value where 10^k's is not close enough
    to give x's digits ('999.99', just under 10³)."""
    place, power = d["quotient"][1], svg.power(d["power"])
    return power if place.startswith("10^") else f"{place} (just under {power})"


def how_picked(views):
    """How a design turns its key quantity into the digit it writes: the ruler's nearest
    mark u + ½ (so u = ⌊x⌋) for the TinyAdder-36 family; a designed family's FFN quantity (``families.column``'s last),
    which the readout's largest logit reads, to within the bound the run holds it to
    (``Quantity.within``); '' for any other model."""
    if views["decisions"]:
        return ("s_k = ⌊x⌋, x = (R + b + ℓ)/P: the ruler's marks sit at u + ½; the "
                "readout's largest logit is the mark nearest x, whose u is ⌊x⌋")
    quantities = families.column(views.get("design"))
    if not quantities or quantities[-1].stage == quantities[0].stage:
        return ""
    last = quantities[-1]
    formula = last.formula.format(k="_k", j="_(k−1)", n="_(k+1)")
    within = figures.text_figure(last.within, 6)
    return (f"the FFN wraps it into {last.slot} ≈ {formula} (within {within}); the readout's "
            f"largest logit is the digit s_k that {last.slot} holds")


NO_RULE = "no designed rule this page knows"


def key_table(left, right):
    """Each model's key quantities (``key_quantities``) at the position that predicts each
    digit of the sum, side by side with their meanings, each row with ``data-pos``, the left
    model's position that predicts its digit; '' when neither model has one."""
    keys = [key_quantities(v) or [("no designed quantity this page knows", {})]
            for v in (left, right)]
    if not any(k[1] for side in keys for k in side):
        return ""
    columns = [(v, k) for v, side in zip((left, right), keys) for k in side]
    if keys[0] == keys[1]:  # the same quantity and values: one column says it once
        columns = [({"model": "both (identical)"}, k) for k in keys[0]]
    digits = list(dict.fromkeys(d for _, k in columns for d in k[1]))

    def cell(k, d):
        text, hover = k[1].get(d, ("", None))
        tip = f' title="{escape(hover)}"' if hover else ""
        return f'<td class="mono"{tip}>{escape(text)}</td>'
    # each row tagged with the position of the left model that predicts its digit, which
    # the page's script highlights when that position is selected
    tokens = left["tokens"]
    at = {tokens[p + 1]["label"]: p for p in left["predicting"] if p + 1 < len(tokens)}
    rows = "".join((f'<tr data-pos="{at[d]}">' if d in at else "<tr>") +
                   f'<td>{escape(d)}</td>' + "".join(cell(k, d) for _, k in columns) +
                   "</tr>" for d in digits)
    # the last row: how each design's quantity becomes the digit it writes
    picked = [(how_picked(v) or NO_RULE, len(side)) for v, side in zip((left, right), keys)]
    rows += ('<tr class="how"><td>digit it picks, and how</td>' + "".join(
        f'<td colspan="{n}">{escape(how)}</td>'
        for how, n in (picked[:1] if keys[0] == keys[1] else picked)) + "</tr>")
    heads = "".join(f"<th>{escape(v['model'])}: {escape(k[0])}</th>" for v, k in columns)
    return ('<table id="key-quantities" class="cmp"><caption>Each design\'s key quantity at '
            'the position that predicts each digit of the sum</caption><thead><tr><th>predicts'
            f'</th>{heads}</tr></thead><tbody>{rows}</tbody></table>')


def matched(left, right, pos):
    """(label, right's position or None): the position of ``right`` that predicts the digit
    of the sum ``left``'s ``pos`` predicts ('predicts s1'), or else that holds what it holds
    (``by_label``), as the live page matches them."""
    digit = {p: s for s, p in deciding(left).items()}.get(pos)
    if digit is not None:
        return f"predicts {digit}", deciding(right).get(digit)
    label = {p: lab for lab, p in by_label(left).items()}[pos]
    return label, counterparts(left, right).get(label)


def positions(left, right, pos=None):
    """(left's position, right's): ``pos``, or the position the left page opens at
    (``figures.defaults``), and the right's match by role (``matched``); the right's own
    opening position when it has none."""
    pos = figures.defaults(left)["pos"] if pos is None else pos
    theirs = matched(left, right, pos)[1]
    return pos, theirs if theirs is not None else figures.defaults(right)["pos"]


def stage_of(views, short):
    """(the stage of ``views`` drawn for ``short``, or None): the stage itself, or, one it
    lacks matched by role, its last stage of the same kind (TinyAdder-36's L1.attn, the
    running total, against a one-layer model's L0.attn), as the live page does."""
    shorts = [s["short"] for s in views["stages"]]
    if short in shorts:
        return short
    kind = short.partition(".")[2]
    return next((s for s in reversed(shorts) if kind and s.partition(".")[2] == kind), None)


def _side(views, pos):
    n = views["digits"]
    expr = f'{int(views["a"]):0{n}d} + {int(views["b"]):0{n}d}'
    verdict = "right" if views["correct"] else f'wrong: a + b = {views["sum"]}'
    return (f'<h2>{escape(views["model"])}</h2><p>prompt <code>{escape(views["layout"])}'
            f'</code>; {escape(expr)}: it writes <b class="mono">{escape(views["answer"])}</b>, '
            f'{verdict}. Drawn at position {pos} '
            f'({escape(views["tokens"][pos]["label"])}).</p>')


def _opening(left, right, chosen=None):
    """Where the two models are drawn: the left at ``chosen`` or the position its own page
    opens at, the right at the position that does the same (``positions``), each position
    named as the token strip shows it (``called``)."""
    pos, theirs = positions(left, right, chosen)
    why = ("the one asked for" if chosen is not None else
           "the first wrong digit's" if left["flaw_pos"] is not None
           else "the first that predicts a digit")
    label, match = matched(left, right, pos)
    decides = label.startswith("predicts")
    does = label if decides else f"holds {called(left, pos)}"
    what = (f"the position that {label}, position {theirs}" if decides and match is not None
            else f"position {theirs}, which holds {called(right, theirs)}"
            if match is not None else
            f"the position its own page opens at ({right['model']} has no position matched "
            f"with it), position {theirs}")
    return (f"{escape(left['model'])} is drawn at position {pos} ({why}: it "
            f"{escape(does)}); {escape(right['model'])} at {escape(what)}.")


def correspondence(left, right):
    """A table of which position of ``right`` each position of ``left`` is matched with by
    role (``matched``): the columns of the two models' drawings do not line up by index. A
    position that predicts a digit of the sum is matched with the one that predicts the same
    digit, which the middle row names (TinyAdder-36's '=' at 22 with zcbtrak-6's s9 at 40:
    both predict s10), any other with the one that holds the same token."""
    labels, cells = zip(*(matched(left, right, p) for p in range(len(left["tokens"]))))

    def cell(views, p):  # the position, its token's label under it, as the strips show it
        if p is None:
            return "<td>—</td>"
        return f'<td>{p}<br><small>{escape(views["tokens"][p]["label"])}</small></td>'
    row = "".join(cell(left, p) for p in range(len(cells)))
    both = "".join(f'<td>{escape(lab.partition("predicts ")[2]) if q is not None else ""}</td>'
                   for lab, q in zip(labels, cells))
    theirs = "".join(cell(right, q) for q in cells)
    return ('<table id="correspondence" class="cmp"><caption>Positions matched by role: '
            f'{escape(left["model"])}\'s position, and {escape(right["model"])}\'s that does '
            'the same: where it predicts a digit of the sum, the one that predicts the same '
            'digit (the middle row), else the one that holds the same token (—: none)'
            '</caption><tbody>'
            f'<tr><th>{escape(left["model"])}</th>{row}</tr>'
            f'<tr><th>both predict</th>{both}</tr>'
            f'<tr><th>{escape(right["model"])}</th>{theirs}</tr></tbody></table>'
            f'{unmatched(left, right, list(enumerate(cells)))}{twice(right, list(cells))}')


def unmatched(left, right, cells):
    """Why a padding zero is matched with none (``cells``: (position, its match)): a
    separator without a job is matched only in the same prompt layout (``counterparts``);
    '' where no padding zero goes unmatched."""
    alone = [p for p, q in cells if q is None and padding(matched(left, right, p)[0])]
    if not alone or left["layout"] == right["layout"]:
        return ""
    return (f'<p id="unmatched">{escape(left["model"])}\'s position'
            f'{"s" if len(alone) > 1 else ""} {_spans(alone)} (\u2014) match'
            f'{"" if len(alone) > 1 else "es"} none: padding zeros other than the three '
            f'separators (before a, before b, before the answer) are matched only when both '
            f'models use the same prompt layout, and {escape(right["model"])}\'s differs.</p>')


def _spans(positions):
    """Positions as runs: [11, 12, 13, 18] -> '11\u201313, 18'."""
    runs = []
    for p in positions:
        if runs and runs[-1][1] == p - 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return ", ".join(str(a) if a == b else f"{a}\u2013{b}" for a, b in runs)


def twice(right, matches):
    """A note on the positions of ``right`` that ``matches`` names more than once: a
    position both holds a token and predicts a digit, and each role finds it."""
    again = sorted({q for q in matches if q is not None and matches.count(q) > 1})
    if not again:
        return ""
    listed = ", ".join(str(q) for q in again)
    return (f'<p id="twice">{escape(right["model"])}\'s position{"s" if len(again) > 1 else ""}'
            f' {listed} appear{"" if len(again) > 1 else "s"} twice: a position both holds a '
            'token (a digit, a separator) and predicts a digit, and each role is matched on '
            'its own.</p>')


def _who(views, pos, tag=""):
    return (f"<h3>{tag}{escape(views['model'])}, position {pos} "
            f"({escape(views['tokens'][pos]['label'])})</h3>")


def _stage_figure(views, short, pos, tag=""):
    """One model's figure after stage ``short`` at ``pos``, headed 'A: model, position ...'
    (the page stacks A's over B's, each at full width, then their lanes side by side)."""
    drawn = stage_of(views, short)
    if drawn is None:
        return (f"{_who(views, pos, tag)}<p>{escape(views['model'])} has no stage "
                f"{escape(short)}.</p>")
    note = ("" if drawn == short else
            f"<p>{escape(views['model'])} has no stage {escape(short)}; matched by role: "
            f"after its last {'attention' if drawn.endswith('attn') else 'FFN'}, "
            f"{escape(drawn)}.</p>")
    figure = figures.residual(views, drawn, pos, logits=drawn == "readout")
    return _who(views, pos, tag) + note + figure


def _stage_lanes(views, short, pos):
    drawn = stage_of(views, short)
    if drawn is None:
        return ""
    said = average_line(views, pos) if drawn == AVERAGED else ""
    return lanes(views, drawn, pos) + (f'<p class="average">{escape(said)}</p>' if said
                                       else "")


def lanes(views, short, pos):
    """The numbers the figure after stage ``short`` colours at ``pos``: each slot's value
    there as the page prints it (``figures.value_text``), a cell per slot; at the readout
    the winner and the lead first (``winners``) and each logit's gap to the winner."""
    slots = next(s["slots"] for s in views["residual"] if s["short"] == short)
    won = winners(views).get(pos) if short == "readout" else None
    def gap(r):
        if "gap" not in r:
            return ""
        g = r["gap"][pos][2]
        return (" (tied for the winner)" if zero(g) and won and len(won[0]) > 1 else
                " (the winner)" if zero(g) else f" ({shown(g)} to the winner)")
    rows = "".join(f"<tr><td>{escape(r['slot'])}</td>"
                   f"<td>{escape(thin(svg.minus(figures.value_text(r['cells'][pos]))) + gap(r))}"
                   f"</td></tr>" for r in slots)
    if won:
        rows = (f"<tr><td>winner</td><td>{escape(won[0])}</td></tr>"
                f"<tr><td>lead</td><td>{escape(shown(won[1]))}</td></tr>" + rows)
    return (f'<table class="cmp lanes"><caption>{escape(views["model"])}\'s lanes at position '
            f'{pos} after {escape(short)}</caption><thead><tr><th>slot</th><th>value</th>'
            f'</tr></thead><tbody>{rows}</tbody></table>')


def _heads(views, layer, pos, tag=""):
    keys = [k for k, h in views["heads"].items() if h["layer"] == layer]
    if not keys:
        return _who(views, pos, tag) + no_heads(views, layer)
    return _who(views, pos, tag) + '<div class="heads">' + "".join(
        figures.attention(views, k, "softmax1", pos) for k in keys) + "</div>"


AVERAGED = "L1.attn"  # the TinyAdder-36 family's stage whose slots gain the running average


def average_line(views, pos):
    """How the lanes after layer 1's attention hold the key-quantity table's R + b + ℓ at a
    deciding position ``pos`` of the TinyAdder-36 family: each slot whose meaning adds the
    running average holds what it held before plus (1000/(i + 2))·(R + b + ℓ), with
    R + b + ℓ = x·10^k (``decisions``); the slots that held ≈ 0 (10^-6 of it) hold it alone;
    '' anywhere else."""
    d = next((d for d in views["decisions"] if d["pos"] == pos), None)
    meant = views["meanings"].get(AVERAGED, {})
    slots = [s for s, m in meant.items() if "running average" in m[0]]
    if d is None or not slots:
        return ""
    stages = [s["short"] for s in views["residual"]]
    before = {r["slot"]: r["cells"][pos][0]
              for r in views["residual"][stages.index(AVERAGED) - 1]["slots"]}
    total = Fraction(d["x"]) * 10 ** d["power"]
    average = total * 1000 / (pos + 2)
    alone = [s for s in slots if abs(before[s]) <= 1e-6 * abs(average)]
    rest = len(slots) - len(alone)
    said = (f"{_names(alone)} held ≈ 0 before, so {'they hold' if len(alone) > 1 else 'it holds'}"
            f" it alone" if alone else "") + (
            f"{'; the other' if alone else 'each'} {rest} add it to what they held"
            if rest else "")
    return (f"{views['model']}'s layer 1 attention adds its running average "
            f"(1000/(i + 2))·(R + b + ℓ), the key-quantity table's R + b + ℓ: at i = {pos}, "
            f"1000/{pos + 2} · {figures.text_figure(total, 6)} = "
            f"{figures.text_figure(average, 6)}. Here {said}.")


# the published readout's flaw, as docs/proof.md's census table gives it: no pair fails at
# N <= 7 (proved); one that fails at N = 10 (tests/test_compare.py runs both claims)
FLAWLESS_UP_TO = 7
FAILING_EXAMPLE = "5193798811+1806201129"


def flaw_line(left, right):
    """When two TinyAdder-36-family designs both write the sum right and one has the
    published readout's tilt: that
    no digit changes, and where the tilt's flaw shows (``FLAWLESS_UP_TO``,
    ``FAILING_EXAMPLE``); '' otherwise."""
    tilted = [v["model"] for v in (left, right) if any(d.get("tilted") for d in v["decisions"])]
    if not (left["correct"] and right["correct"] and tilted and right["decisions"] and
            left["decisions"]):  # two TinyAdder-36 readouts: the flaw is what tells them apart
        return ""
    n = left["digits"]
    where = (f"at N = {n} no pair falls in such a window: it adds every {n}-digit pair right "
             f"(tinyadder census --digits {n}: 0 failing pairs; docs/proof.md proves none up "
             f"to N = {FLAWLESS_UP_TO})" if n <= FLAWLESS_UP_TO else
             f"this sum falls in none (tinyadder census --digits {n} lists the windows)")
    a, b = FAILING_EXAMPLE.split("+")
    return (f"Both designs write this sum right, so no digit differs here. {tilted[0]}'s readout "
            f"tilts each decision (its flaw), but the tilt wins only just below a multiple of "
            f"a power of ten: {where}. It shows from N = {FLAWLESS_UP_TO + 1} on; at N = "
            f"{len(a)}, {a} + {b} is one (tinyadder explore {FAILING_EXAMPLE} opens the "
            f"published model at its wrong digit).")


def _compared(left, right):
    """What the static page's table compares position by position: the slots both name
    alike, or, where none holds the same quantity in both, the winner alone."""
    found = table_rows(left, right)
    if no_common_slot(found) or apart_line(found):
        return "the digit each readout picks, compared position by position"
    return "the slots both name alike, compared position by position"


def no_heads(views, layer):
    """What stands in for a model's heads in a layer it has none live in: where its lanes are
    matched by role (``stage_of``), a link to that layer's heads, drawn above."""
    model = escape(views["model"])
    has = f"L{layer}.attn" in [s["short"] for s in views["stages"]]
    said = f"{model} has {'no live head in' if has else 'no'} layer {layer}"
    drawn = stage_of(views, f"L{layer}.attn")
    earlier = sorted({h["layer"] for h in views["heads"].values() if h["layer"] < layer})
    if drawn is None or drawn == f"L{layer}.attn" or not earlier:
        return f"<p>{said}.</p>"
    last = earlier[-1]
    return (f'<p>{said}: its lanes here are matched by role to its last attention, '
            f'{escape(drawn)}, whose heads are drawn under <a href="#heads-{last}">Layer '
            f"{last}'s attention</a> above.</p>")


TAGS = ("A: ", "B: ")  # the static page's two models, as its figures' headings name them


def page(left, right, pos=None):
    """The comparison page of two runs' views (``views.build_views``) of one sum: the left at
    ``pos`` or the position its page opens at, the right at its match by role
    (``positions``), each stage matched to the other's (``stage_of``): the two figures
    stacked at full width (A over B), their lanes side by side in two columns."""
    where = positions(left, right, pos)
    shorts = list(dict.fromkeys([s["short"] for s in left["stages"]] +
                                [s["short"] for s in right["stages"]]))
    layers = sorted({h["layer"] for v in (left, right) for h in v["heads"].values()})
    parts, writes = [], writes_lines(left, right)
    for short in shorts:
        said = f'<p class="writes">{escape(writes[short])}</p>' if short in writes else ""
        # the figures stacked, each at full width (side by side they shrank to 6 px text),
        # then the two lane tables side by side
        parts.append(f'<section class="stage" id="stage-{escape(short)}"><h2>Residual stream '
                     f'after {escape(short)}</h2>{said}' +
                     "".join(f'<div class="figure">{_stage_figure(v, short, p, t)}</div>'
                             for v, p, t in zip((left, right), where, TAGS)) +
                     '<div class="pair">' +
                     "".join(f'<div>{_stage_lanes(v, short, p)}</div>'
                             for v, p in zip((left, right), where)) + '</div></section>')
        attn = short.endswith(".attn") and short[1:-5].isdigit()
        if attn and int(short[1:-5]) in layers:
            layer = int(short[1:-5])
            parts.append(f'<section class="stage" id="heads-{layer}"><h2>Layer {layer}\'s '
                         f'attention, every live head (log scale, clipped as in the explorer)'
                         f'</h2>' +
                         "".join(f'<div class="figure">{_heads(v, layer, p, t)}</div>'
                                 for v, p, t in zip((left, right), where, TAGS)) +
                         '</section>')
    n = left["digits"]
    expr = f'{int(left["a"]):0{n}d} + {int(left["b"]):0{n}d}'
    title = f'{left["model"]} and {right["model"]} add {expr}'
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>tinyadder compare: {escape(title)}</title>",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<style>{svg.CSS}\n{CSS}</style></head>\n<body>",
        f"<header><h1>{escape(title)}</h1>",
        f"<p>Two designs on the same sum, stage by stage: {_compared(left, right)} (matched "
        "by what each position holds: a3 is the digit of a "
        f"at {svg.power(3)}, s0 the sum's units digit), then each model's residual stream and "
        "attention: A's figure over B's, each at full width, then their lanes side by side. "
        "Every number is the run's, as "
        "<code>tinyadder --trace</code> prints it; <code>tinyadder explore --model NAME</code> "
        "draws either alone, with hovers. The positions and stages are matched by role, as "
        f"on the live page: {_opening(left, right, pos)} A stage one model lacks is drawn at its "
        "last stage of the same kind.</p>",
        '<div class="pair">' + "".join(f"<div>{_side(v, p)}</div>"
                                       for v, p in zip((left, right), where)) + "</div>",
        f'<p id="flaw-said">{escape(flaw_line(left, right))}</p>' if flaw_line(left, right)
        else "",
        # what each design computes first, then the numbers that compare
        f"{key_table(left, right)}{homonym_table(left, right, False)}"
        f"{_table(left, right, where)}"
        f"{correspondence(left, right)}"
        "</header><main>", *parts,
        "</main></body></html>\n",
    ])


CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 1em 2em; color: #111; }
.mono, code { font-family: ui-monospace, monospace; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.pair > div { overflow-x: auto; min-width: 0; }
.pair svg { max-width: 100%; height: auto; }
.figure { overflow-x: auto; }
.figure svg { max-width: 100%; height: auto; }
.heads { display: flex; flex-wrap: wrap; gap: 0.5em 1.5em; align-items: flex-start; }
#agreement { border-collapse: collapse; margin: 1em 0; }
.cmp { border-collapse: collapse; margin: 0.6em 0; }
.cmp td, .cmp th { border: 1px solid #ccc; padding: 1px 4px; text-align: left; }
.lanes caption { text-align: left; white-space: nowrap; }
.lanes td { font-family: ui-monospace, monospace; font-size: 0.85em; white-space: nowrap; }
#correspondence td { font-family: ui-monospace, monospace; font-size: 0.85em; }
#agreement td, #agreement th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
section.stage { border-top: 1px solid #ddd; margin-top: 1em; }
section.stage h3 { margin: 0.6em 0 0.2em; font-size: 1em; }
"""
