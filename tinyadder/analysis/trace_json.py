"""A whole trace as JSON, and back: ``dump(cache, fp)`` and ``load(fp) -> ActivationCache``.

Every number is a string holding its exact text, so nothing is lost to JSON's doubles:
rationals ``"n/d"`` (``"n"`` when whole), decimals as ``str(Decimal)``, floats as ``repr``
(which reads back to the same double), fraction-mode attention scores ``"r - c*ln b"``
(``numbers.LogScore``); masked attention entries are ``null``. The document also names the
model, the number system and its precision, the vocabulary, tokens, slots, each trace point's
labels, and every value the number system rounded. The points that ``forward.derive``
recomputes exactly from the others (resid, FFN and logit points) are listed under "derived"
instead of written, and recomputed on loading.

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

from decimal import Decimal, InvalidOperation
from fractions import Fraction
import json
import re

from ..construction import VARIANTS, build
from ..forward import DERIVED, compile_model, derive
from ..numbers import DecimalSystem, FloatSystem, FractionSystem, LogScore, Rounding
from .show import rational_text
from .trace import ActivationCache

FORMAT = "tinyadder-trace/1"
_RATIONAL = re.compile(r"-?[0-9]+(?:/[0-9]+)?")
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
    loader recomputes them (``forward.derive``), and they were written only if identical."""
    derived = _derived(cache)
    return {
        "format": FORMAT,
        "model": cache.model.name,
        "number_system": _number_system_json(cache.ns),
        "vocab": list(cache.model.vocab),
        "tokens": cache.tokens,
        "text": cache.text,
        "prompt_len": cache.prompt_len,
        "slots": list(cache.model.slots),
        "roundings": [{"what": r.what, "digits": r.digits, "value": rational_text(r.value)}
                      for r in cache.roundings],
        "trace_points": {name: {"labels": list(cache.labels(name)), "value": _encode(value)}
                         for name, value in cache.items() if name not in derived},
        "derived": derived,
    }


def dump(cache, fp):
    """Write the trace as JSON text to ``fp``."""
    json.dump(to_json(cache), fp, indent=None, separators=(",", ":"))
    fp.write("\n")


# --- loading ------------------------------------------------------------------------------

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
    return Fraction(_int(n), _int(d) if d else 1)


def _decoder(system):
    """The function turning one JSON string back into a value of this number system."""
    def fraction(text):
        match = _SCORE.fullmatch(text) if "ln" in text else None
        if match:
            r, sign, c, base = match.groups()
            return LogScore(_rational(r), (-1 if sign == "-" else 1) * int(c), _rational(base))
        if not _RATIONAL.fullmatch(text):
            raise ValueError("expected a rational 'n/d' or a score 'r - c*ln b'")
        return _rational(text)

    def decimal(text):
        try:
            value = Decimal(text)
        except InvalidOperation:
            value = None
        if value is None or not value.is_finite():
            raise ValueError("expected a finite decimal")
        return value

    def float_(text):
        value = float(text)  # ValueError names the text
        return value

    return {"fraction": fraction, "decimal": decimal, "float": float_}[system]


def _decode(value, decode, where):
    if isinstance(value, list):
        return [_decode(v, decode, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None:
        return None
    if not isinstance(value, str):
        raise TraceFormatError(f"not a tinyadder trace: {where} is {value!r}, "
                               f"expected a string holding a number")
    try:
        return decode(value)
    except ValueError as err:
        raise TraceFormatError(f"not a tinyadder trace: bad value {value[:40]!r} at {where}: "
                               f"{err}") from None


def _field(doc, key, kind):
    if key not in doc:
        raise TraceFormatError(f"not a tinyadder trace: missing field {key!r}")
    if not isinstance(doc[key], kind):
        raise TraceFormatError(f"not a tinyadder trace: field {key!r} should be a "
                               f"{kind.__name__}")
    return doc[key]


def _number_system(spec):
    name = _field(spec, "name", str)
    if name == "fraction":
        return FractionSystem(_field(spec, "exp_digits", int))
    if name == "decimal":
        return DecimalSystem(_field(spec, "digits", int))
    if name == "float":
        return FloatSystem()
    raise TraceFormatError(f"not a tinyadder trace: unknown number system {name!r}")


def from_json(doc, model=None):
    """An ActivationCache from a dict written by ``to_json``; ``model`` defaults to the
    published or repaired model named in it."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TraceFormatError(f"not a tinyadder trace: expected a JSON object with "
                               f"\"format\": \"{FORMAT}\"")
    name = _field(doc, "model", str)
    if model is None:
        variant = name.rpartition("-")[2]
        if variant not in VARIANTS:
            raise TraceFormatError(f"not a tinyadder trace: unknown model {name!r}; pass the "
                                   f"model to load()")
        model = build(variant)
    ns = _number_system(_field(doc, "number_system", dict))
    decode = _decoder(ns.name)
    tokens = _field(doc, "tokens", list)
    if not all(isinstance(t, int) and 0 <= t < len(model.vocab) for t in tokens):
        raise TraceFormatError("not a tinyadder trace: 'tokens' must be token ids")
    roundings = []
    for i, r in enumerate(_field(doc, "roundings", list)):
        value = _decode(_field(r, "value", str), _decoder("fraction"), f"roundings[{i}]")
        roundings.append(Rounding(_field(r, "what", str), _field(r, "digits", int), value))
    values = {}
    for point, entry in _field(doc, "trace_points", dict).items():
        raw = _field(entry, "value", list) if isinstance(entry, dict) else None
        if raw is None:
            raise TraceFormatError(f"not a tinyadder trace: trace point {point!r} should be "
                                   f"an object with 'labels' and 'value'")
        values[point] = _decode(raw, decode, f"trace_points[{point!r}]")
    derived = doc.get("derived", [])
    if derived:
        if not (isinstance(derived, list) and all(isinstance(d, str) and _derivable(d)
                                                  for d in derived)):
            raise TraceFormatError("not a tinyadder trace: 'derived' must list derivable "
                                   "trace points")
        again = derive(compile_model(model, ns), dict(values))
        missing = [d for d in derived if d not in again]
        if missing:
            raise TraceFormatError(f"not a tinyadder trace: cannot derive {missing[0]!r}")
        values.update((d, again[d]) for d in derived)
    return ActivationCache(model, ns, tokens, values, roundings=roundings,
                           prompt_len=_field(doc, "prompt_len", int))


def load(fp, model=None):
    """Read a trace written by ``dump``; raise TraceFormatError on anything else."""
    try:
        doc = json.load(fp)
    except json.JSONDecodeError as err:
        raise TraceFormatError(f"not a tinyadder trace: invalid JSON: {err.msg} at line "
                               f"{err.lineno} column {err.colno}") from None
    return from_json(doc, model)
