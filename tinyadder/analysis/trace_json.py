"""A whole trace as JSON, and back: ``dump(cache, fp)`` and ``load(fp) -> ActivationCache``.

Every number is a string holding its exact text, so nothing is lost to JSON's doubles:
rationals ``"n/d"`` (``"n"`` when whole), decimals as ``str(Decimal)``, floats as ``repr``
(which reads back to the same double), fraction-mode attention scores ``"r - c*ln b"``
(``numbers.LogScore``); masked attention entries are ``null``, and so is an entry of
``hook_pos_embed`` that the model's positional table does not have (no term). The document
also names the model and its operand length N (``digits``), the number system and its
precision, the vocabulary, the tokens, the addition they read as in the model's layout
(``addition``: operands and sum, whatever order the tokens hold their digits in; null for
part of a sequence; a model with a finite task has ``digits`` and ``addition`` null and
``task`` instead: its input, what the model wrote and what the task says), the slots, each
trace point's labels, and every value the number system rounded. In the float systems a value may be ``"nan"`` or ``"inf"`` (the model overflows at
large N), as computed; in fraction and decimal it never is. The points that
``forward.derive`` recomputes exactly from the others (resid, FFN and logit points) are listed
under "derived" instead of written, and recomputed on loading.

``load`` accepts exactly what ``dump`` writes, against the model it names (built for its N) or
the one given, and raises TraceFormatError, with what is wrong and where, on anything else:
text that is not UTF-8 JSON, nesting, a missing or mistyped field, a trace point that model
does not have, a point of the wrong shape, a value that is not a number of the trace's system,
a prompt the model's layout cannot produce, generated tokens its readout cannot write or its
recorded logits do not pick (a wrong token where the layout has a digit or the stop token is
the model's answer, as recorded), a vocabulary or slots not the model's, and a point, stored
or derived, that is not what the model computes on the tokens in the trace's number system
(each is recomputed: an edited value, another exp_digits; a patched run's trace lists the
points its patch replaced under "patched", and their stored values are taken as given).

>>> import io
>>> from tinyadder import build
>>> from tinyadder import run_with_cache
>>> _, cache = run_with_cache(build("published"), "12+34")
>>> text = io.StringIO(); dump(cache, text)
>>> again = load(io.StringIO(text.getvalue()))
>>> again.values == cache.values and again.roundings == cache.roundings
True
>>> load(io.StringIO("{"))
Traceback (most recent call last):
...
tinyadder.analysis.trace_json.TraceFormatError: not a tinyadder trace: invalid JSON: Expecting ... column 2
"""

from decimal import Decimal
from fractions import Fraction
import json
import math
import re

from ..addition import check_tokens, digits_of, excerpt, sequence_length, to_generate
from ..cache import ActivationCache, trace_points
from ..constants import MinusInfinity
from .. import models
from ..construction import DIGITS, MAX_DIGITS, VARIANTS, build
from ..forward import DERIVED, derive, forward
from ..generate import argmax
from ..numbers import (MAX_DECIMAL_DIGITS, DecimalSystem, Float32, FractionSystem, LogScore,
                       Rounding, number_system, to_float32)
from ..plan import compile_model
from .show import addition_line, rational_text
from .. import task

FORMAT = "tinyadder-trace/1"
_RATIONAL = re.compile(r"-?[0-9]+(?:/[0-9]+)?")
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:E[+-][0-9]+)?")
_FLOAT = re.compile(r"-?(?:[0-9]+\.[0-9]+(?:e[+-][0-9]+)?|[0-9]+e[+-][0-9]+|inf|nan)")
_SCORE = re.compile(r"(-?[0-9]+(?:/[0-9]+)?) ([+-]) ([0-9]+)\*ln ([0-9]+(?:/[0-9]+)?)")


class TraceFormatError(ValueError):
    """The text is not a trace this module wrote; the message says what and where."""


def _number_system_json(ns):
    out = {"name": ns.name, "describe": ns.describe()}
    if isinstance(ns, FractionSystem):
        out["exp_digits"] = ns.exp_digits
    elif isinstance(ns, DecimalSystem):
        out["digits"] = ns.digits
    return out


def _encode(value):
    """One value, or nested lists of them, as JSON-ready strings (None stays null)."""
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if value is None:
        return None
    if isinstance(value, LogScore):
        return str(value)
    if isinstance(value, Fraction):
        return rational_text(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _same(a, b):
    """Exactly the same value (floats by repr: -0.0 and nan too)."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) or isinstance(b, float):
        return repr(a) == repr(b)
    return type(a) is type(b) and a == b


def _derived(cache):
    """The trace points that ``forward.derive`` recomputes, exactly, from the others: a
    trace stores only the rest (resid, FFN and logit points are most of an exact trace)."""
    stored = {k: v for k, v in cache.items() if not _derivable(k)}
    again = derive(compile_model(cache.model, cache.ns), dict(stored))
    return [k for k, v in cache.items() if _derivable(k) and k in again and _same(again[k], v)]


def _derivable(name):
    return name == "unembed.hook_out" or name.split(".", 2)[-1] in DERIVED


def to_json(cache):
    """The trace as a JSON-ready dict. Points listed under "derived" are not written: the
    loader recomputes them (``forward.derive``); a point is left out only if it derives identically."""
    derived = _derived(cache)
    return {
        "format": FORMAT,
        "model": cache.model.name,
        "digits": _digits(cache.model),
        "number_system": _number_system_json(cache.ns),
        "vocab": list(cache.model.vocab),
        "tokens": cache.tokens,
        "text": cache.text,
        "addition": addition_line(cache),
        **({"task": _task(cache)} if task.has_task(cache.model) else {}),
        "prompt_len": cache.prompt_len,
        "slots": list(cache.model.slots),
        "roundings": [{"what": r.what, "digits": r.digits, "value": rational_text(r.value)}
                      for r in cache.roundings],
        "trace_points": {name: {"labels": list(cache.labels(name)), "value": _encode(value)}
                         for name, value in cache.items() if name not in derived},
        "derived": derived,
        **({"patched": list(cache.patched)} if cache.patched else {}),
    }


def _digits(model):
    """The operands' N, or None for a model with a finite task (it has no operands)."""
    return None if task.has_task(model) else digits_of(model)


def _task(cache):
    """A finite task's run as data: {"input": "B", "answer": "06", "expected": "06"} (what
    the model wrote, and what its task says), or None for part of a sequence (or an
    addition)."""
    model = cache.model
    if not task.has_task(model) or len(cache.tokens) != sequence_length(model):
        return None
    x = model.vocab[cache.tokens[len(model.task.before)]]
    return {"input": x, "answer": task.answer(model, cache.tokens),
            "expected": task.expected(model, x)}


def dump(cache, fp):
    """Write the trace as JSON text to ``fp``."""
    json.dump(to_json(cache), fp, indent=None, separators=(",", ":"))
    fp.write("\n")


# --- loading ------------------------------------------------------------------------------

def _bad(message):
    return TraceFormatError(f"not a tinyadder trace: {message}")


def _int(text):
    """int(text) for any length: int() refuses more than 4300 digits on Python >= 3.11, so
    long texts are split in halves (the inverse of show.int_text)."""
    if len(text) <= 2000:
        return int(text)
    if text.startswith("-"):
        return -_int(text[1:])
    k = len(text) // 2
    return _int(text[:-k]) * 10 ** k + _int(text[-k:])


def _rational(text):
    n, _, d = text.partition("/")
    d = _int(d) if d else 1
    if d == 0:
        raise ValueError("zero denominator")
    return Fraction(_int(n), d)


def _decoder(system):
    """The function turning one JSON string back into a value of this number system."""
    def fraction(text):
        match = _SCORE.fullmatch(text) if "ln" in text else None
        if match:
            r, sign, c, base = match.groups()
            return LogScore(_rational(r), (-1 if sign == "-" else 1) * _int(c), _rational(base))
        if not _RATIONAL.fullmatch(text):
            raise ValueError("expected a rational 'n/d' or a score 'r - c*ln b'")
        return _rational(text)

    def decimal(text):
        if not _DECIMAL.fullmatch(text):  # Decimal() alone takes 'NaN', '1_0', '٣'
            raise ValueError("expected a finite decimal")
        return Decimal(text)

    def float_(text):
        if not _FLOAT.fullmatch(text):  # float() alone takes '1_0', ' 1', '٣'
            raise ValueError(f"could not convert string to float: {excerpt(text)}")
        return float(text)

    def float32(text):
        value = float_(text)
        if not math.isnan(value) and to_float32(value) != value:
            raise ValueError("not a float32 value")
        return Float32(value)

    return {"fraction": fraction, "decimal": decimal, "float": float_,
            "float32": float32}[system]


def _decode_row(row, decode, where, width, hidden=(), absent=False):
    """One row of a trace point: ``width`` strings, null at the indices ``hidden`` (keys the
    causal mask or a fixed attention bias hides) and only there, or (``absent``) null
    anywhere: a positional embedding's entry that the model does not have (no term, not 0)."""
    if not isinstance(row, list) or len(row) != width:
        raise _bad(f"{where} should be a list of {width} values")
    out = []
    for i, value in enumerate(row):
        masked = i in hidden
        if value is None and (masked or absent):
            out.append(None)
            continue
        if masked or not isinstance(value, str):
            expected = "null (masked)" if masked else "a string holding a number"
            shown = repr(value) if len(repr(value)) <= 24 else f"{repr(value)[:24]}..."
            raise _bad(f"{where}[{i}] is {shown}, expected {expected}")
        try:
            out.append(decode(value))
        except ValueError as err:
            raise _bad(f"bad value {excerpt(value)} at {where}[{i}]: {err}") from None
    return out


def _hidden(attn, h, i, n):
    """The keys of n positions query i of head h does not see: the later ones, and those its
    fixed bias sets to -inf."""
    table = attn.bias.get(attn.heads[h], {}).get(i, {})
    return {j for j in range(n) if j > i or (attn.bias and isinstance(
        table.get(j, attn.bias_default), MinusInfinity))}


def _decode_point(name, entry, decode, cache):
    """A trace point's value, its shape checked: [pos][label], or [head][pos][pos] for the
    attention scores and pattern."""
    where = f"trace_points[{name!r}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("value"), list):
        raise _bad(f"{where} should be an object with 'labels' and 'value'")
    labels = list(cache.labels(name))
    if entry.get("labels", labels) != labels:
        raise _bad(f"{where} has labels {excerpt(repr(entry.get('labels')))}, expected "
                   f"{excerpt(repr(labels))}")
    value, n = entry["value"], len(cache.tokens)
    if name.endswith(("hook_attn_scores", "hook_pattern")):
        if len(value) != len(labels) or not all(isinstance(h, list) and len(h) == n
                                                for h in value):
            raise _bad(f"{where} should be [head][pos][pos]: {len(labels)} heads of {n} rows")
        attn = cache.model.blocks[int(name.split(".")[1])].attn
        return [[_decode_row(row, decode, f"{where}[{h}][{i}]", n, _hidden(attn, h, i, n))
                 for i, row in enumerate(rows)] for h, rows in enumerate(value)]
    if len(value) != n:
        raise _bad(f"{where} should have a row for each of the {n} positions")
    return [_decode_row(row, decode, f"{where}[{i}]", len(labels),
                        absent=name == "hook_pos_embed") for i, row in enumerate(value)]


def _field(doc, key, kind, lo=None, hi=None):
    """doc[key], checked: of ``kind`` (an int is not a bool) and, for ints, within lo..hi."""
    if not isinstance(doc, dict) or key not in doc:
        raise _bad(f"missing field {key!r}")
    value = doc[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        article = "an" if kind.__name__[0] in "aeiou" else "a"
        raise _bad(f"field {key!r} should be {article} {kind.__name__}")
    if kind is int and ((lo is not None and value < lo) or (hi is not None and value > hi)):
        raise _bad(f"field {key!r} is {value}, expected {lo} to {hi}")
    return value


def _number_system(spec):
    name = _field(spec, "name", str)
    if name == "fraction":
        return FractionSystem(_field(spec, "exp_digits", int, 1, MAX_DECIMAL_DIGITS))
    if name == "decimal":
        return DecimalSystem(_field(spec, "digits", int, 1, MAX_DECIMAL_DIGITS))
    if name in ("float", "float32"):
        return number_system(name)
    raise _bad(f"unknown number system {excerpt(name)}")


def from_json(doc, model=None):
    """An ActivationCache from a dict written by ``to_json``; ``model`` defaults to the
    shipped AdderBoard model named in it, or the published or repaired model, built for its N
    (``digits``; 10 in traces written before N was recorded)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(f"expected a JSON object with \"format\": \"{FORMAT}\"")
    name = _field(doc, "model", str)
    digits = DIGITS if "digits" not in doc else None if doc["digits"] is None else \
        _field(doc, "digits", int, 1, MAX_DIGITS)
    if model is None and (name in models.board_names() or name in models.program_names()):
        model = models.build(name)
    if model is None:
        variant = name.rpartition("-")[2]
        if variant not in VARIANTS or name != build(variant, 1).name:
            raise _bad(f"unknown model {excerpt(name)}; pass the model to load()")
        model = build(variant, digits)
    elif _digits(model) != digits:
        raise _bad(f"the trace is of N = {digits} digits, the model given is built for "
                   f"N = {_digits(model)}")
    if _field(doc, "vocab", list) != list(model.vocab):
        raise _bad("its vocabulary is not the model's")
    if _field(doc, "slots", list) != list(model.slots):
        raise _bad("its slots are not the model's")
    for key in ("text", "addition"):
        if key not in doc:
            raise _bad(f"missing field {key!r}")
    ns = _number_system(_field(doc, "number_system", dict))
    decode = _decoder(ns.name)
    tokens = _field(doc, "tokens", list)
    if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < len(model.vocab)
               for t in tokens):
        raise _bad(f"'tokens' must be token ids, 0 to {len(model.vocab) - 1}")
    prompt_len = _field(doc, "prompt_len", int, 1, len(tokens))
    try:  # the prompt as the layout has it; what follows is whatever the model wrote
        check_tokens(model, tokens if len(tokens) > sequence_length(model) else
                     tokens[:prompt_len])
    except ValueError as err:
        raise _bad(f"'tokens': {err}") from None
    wanted = to_generate(model, tokens[:prompt_len])
    if len(tokens) - prompt_len != wanted:
        raise _bad(f"{len(tokens) - prompt_len} generated tokens after a prompt of "
                   f"{prompt_len}; a model for N = {digits} generates {wanted} there")
    readable = set(model.unembed.tokens)  # what the model may write, right or wrong
    wrote = [model.vocab[t] for t in tokens[prompt_len:] if model.vocab[t] not in readable]
    if wrote:
        raise _bad(f"'tokens': {wrote[0]!r} after the prompt, which the readout cannot write")
    roundings = []
    for i, r in enumerate(_field(doc, "roundings", list)):
        value = _decode_row([_field(r, "value", str)], _decoder("fraction"),
                            f"roundings[{i}]", 1)[0]
        roundings.append(Rounding(_field(r, "what", str),
                                  _field(r, "digits", int, 1, MAX_DECIMAL_DIGITS), value))
    cache = ActivationCache(model, ns, tokens, {}, roundings=roundings, prompt_len=prompt_len)
    known = trace_points(model)
    for point, entry in _field(doc, "trace_points", dict).items():
        if point not in known:
            raise _bad(f"unknown trace point {excerpt(point)}; {model.name} has "
                       f"{', '.join(sorted(known))}")
        cache.values[point] = _decode_point(point, entry, decode, cache)
    patched = doc.get("patched", [])
    if not (isinstance(patched, list) and
            all(isinstance(p, str) and p in cache.values for p in patched)):
        raise _bad("'patched' must list stored trace points")
    cache.patched = tuple(patched)
    derived = doc.get("derived", [])
    if derived:
        if not (isinstance(derived, list) and all(isinstance(d, str) and _derivable(d)
                                                  for d in derived)):
            raise _bad("'derived' must list trace points that forward.derive recomputes")
        again = derive(compile_model(model, ns), dict(cache.values))
        missing = [d for d in derived if d not in again]
        if missing:
            raise _bad(f"cannot derive {excerpt(missing[0])} from the points given")
        cache.values.update((d, again[d]) for d in derived)
    _check_generated(cache, doc)
    _check_recomputed(cache, _number_system(doc["number_system"]))
    return cache


def _check_recomputed(cache, ns):
    """Every point, stored or derived, must be what the model computes on these tokens in
    this number system (``ns``: a fresh copy of the trace's), the points a patch replaced
    (``patched``) taken as given: an edited value (inf, nan, a longer number), another
    exp_digits, a point of another run are refused where they first differ."""
    again = {}
    given = {name: (lambda rows, value=cache.values[name]: value) for name in cache.patched}
    forward(compile_model(cache.model, ns), cache.tokens, record=again.__setitem__,
            names=cache.values.__contains__, patch=given)
    for name, value in cache.values.items():
        if not _same(value, again.get(name)):
            where = _first_difference(value, again.get(name))
            raise _bad(f"trace_points[{name!r}]{where} is not what {cache.model.name} computes "
                       f"on these tokens in {ns.describe()}")


def _first_difference(a, b, where=""):
    """'[i][j]' of the first entry where nested lists a and b differ ('' if they differ
    as wholes)."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if not _same(x, y):
                return _first_difference(x, y, f"{where}[{i}]")
    return where


def _check_generated(cache, doc):
    """The generated tokens must be the ones the recorded logits pick (greedy, the first of
    equal logits, as ``generate.argmax``), and the text and the addition, if given, what the
    tokens read as."""
    if doc.get("text", cache.text) != cache.text:
        raise _bad("'text' is not the text of 'tokens'")
    logits = cache.values.get("unembed.hook_out")  # None: a trace that keeps some points only
    labels, vocab = cache.labels("unembed.hook_out"), cache.model.vocab
    for pos in cache.predicting if logits is not None else ():
        picked = labels[argmax(logits[pos])]
        if vocab[cache.tokens[pos + 1]] != picked:
            raise _bad(f"token {pos + 1} is {vocab[cache.tokens[pos + 1]]!r}, but the "
                       f"recorded logits at position {pos} pick {picked!r}")
    if doc.get("addition", addition_line(cache)) != addition_line(cache):
        raise _bad("'addition' is not what 'tokens' read as in the model's layout")
    if doc.get("task", _task(cache)) != _task(cache):
        raise _bad("'task' is not what 'tokens' read as in the model's task")


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def load(fp, model=None):
    """Read a trace written by ``dump`` from a text or binary file; raise TraceFormatError on
    anything else."""
    try:
        text = fp.read()
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise _bad(f"invalid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except UnicodeError:
        raise _bad("the text is not UTF-8 (a binary file?)") from None
    except RecursionError:
        raise _bad("JSON nested too deeply") from None
    except ValueError as err:  # NaN/Infinity, or an integer beyond int()'s 4300 digits
        raise _bad(f"invalid JSON: {str(err)[:60]}") from None
    return from_json(doc, model)
