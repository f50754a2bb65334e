"""Reading a certificate file, every size bounded. Outside the kernel: the kernel checks the
JSON data it is given, and its verdict names the model text those data hold by its sha256,
whatever read the file."""

import json
import zlib

from .kernel.claim import Malformed
from .kernel.setcheck import FORMAT

MAX_INT_DIGITS = 4000    # of a numerator or a denominator (int() refuses more than 4300)
MAX_BYTES = 64 << 20     # a generic or a float certificate, once decompressed


def _no_constant(name):
    raise Malformed(f"{name} is not JSON")


def _int(text):
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise Malformed(f"an integer literal of {len(text)} characters; a certificate's "
                        f"integers have at most {MAX_INT_DIGITS} digits")
    return int(text)


GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path, limit):
    """The file's bytes, gzip-decompressed where it starts with gzip's magic number, at most
    ``limit`` of them either way; Malformed saying what is wrong with the file or with its
    gzip stream (truncated, a bad check, more than one member or data after it, more than
    ``limit`` once decompressed, compressed twice)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as err:
        raise Malformed(f"cannot read {path}: {err.strerror}") from None
    if len(raw) > limit:
        raise Malformed(f"{path} is larger than {limit:,} bytes")
    if raw[:2] != GZIP_MAGIC:
        return raw
    stream = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
    try:
        text = stream.decompress(raw, limit + 1)
    except zlib.error as err:
        raise Malformed(f"{path} is a broken gzip stream ({err})") from None
    if len(text) > limit or stream.unconsumed_tail:
        raise Malformed(f"{path} decompresses to more than {limit:,} bytes")
    if not stream.eof:
        raise Malformed(f"{path} is a truncated gzip stream (it ends before its trailer)")
    if stream.unused_data:
        raise Malformed(f"{path} has data after its gzip stream (a second member, or bytes "
                        f"appended); a certificate is one gzip member")
    if text[:2] == GZIP_MAGIC:
        raise Malformed(f"{path} is gzip-compressed twice; decompress it once")
    return text


def read(path):
    """A generic or a float certificate's JSON data (``read_json``, at most MAX_BYTES)."""
    return read_json(path, MAX_BYTES)


def of_format(data, kind):
    """``data`` if it is a certificate of format ``kind``, else None."""
    return data if isinstance(data, dict) and data.get("format") == kind else None


def load(path, kind=FORMAT):
    """The certificate's JSON data (``read``) if it is of format ``kind``, else None."""
    return of_format(read(path), kind)


def read_json(path, limit, parse_int=_int):
    """The JSON data of the file (``read_bytes``, ``json_of``)."""
    return json_of(read_bytes(path, limit), path, parse_int)


def json_of(raw, path, parse_int=_int):
    """The JSON data in the bytes ``raw`` read from ``path``: no NaN or Infinity, no integer
    literal over MAX_INT_DIGITS digits (``parse_int``), nesting as deep as Python's recursion
    allows; Malformed otherwise."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constant,
                          parse_int=parse_int)
    except Malformed:
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise Malformed(f"{path} is not JSON: {err}") from None
    except ValueError as err:  # an integer literal past int()'s digit limit
        raise Malformed(f"{path} is not a certificate: {err}") from None
    except RecursionError:
        raise Malformed(f"{path} is not a certificate: JSON nested too deeply") from None
