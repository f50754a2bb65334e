"""The protobuf wire format, the part ONNX files use, and the error every refusal raises.

A message is a sequence of fields; a field is a key varint ``number << 3 | wire_type`` and a
value: wire type 0 a varint (7 bits a byte, low group first, the high bit set on every byte but
the last; a 64-bit value takes at most 10 bytes, a negative one is its two's complement mod
2**64), 1 eight little-endian bytes, 2 a varint length and that many bytes (strings, bytes,
nested messages, packed repeated scalars), 5 four little-endian bytes. Groups (wire types 3
and 4, deprecated) are refused.

>>> varint(300).hex(), varint(-1).hex()
('ac02', 'ffffffffffffffffff01')
>>> read_varint(bytes.fromhex("ac02"), 0, 2)
(300, 2)
>>> list(fields(bytes.fromhex("0801120178"), 0, 5))
[(0, 1, 0, 1), (2, 2, 2, (4, 5))]
"""

VARINT, I64, LEN, I32 = 0, 1, 2, 5
MAX_FIELD = (1 << 29) - 1


class OnnxError(ValueError):
    """A file or a value outside the supported subset of ONNX; the message is one line."""


def varint(n):
    """The varint of n, for -2**63 <= n < 2**64 (negative n as n + 2**64, ten bytes)."""
    if not -(1 << 63) <= n < 1 << 64:
        raise OnnxError(f"{n} does not fit in 64 bits")
    n %= 1 << 64
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(number, wire):
    """The key of field ``number`` with wire type ``wire``."""
    return varint(number << 3 | wire)


def length_delimited(number, payload):
    """Field ``number`` holding ``payload`` (wire type 2)."""
    return key(number, LEN) + varint(len(payload)) + payload


def read_varint(data, pos, end):
    """(value, position after it) of the varint at data[pos:], which must end before end.

    The value is the unsigned 64-bit one: a varint of more than 10 bytes, or whose tenth byte
    sets bits past the 64th, is refused, and so is one cut short by end."""
    if pos < end and data[pos] < 0x80:  # the common one-byte varint, fast
        return data[pos], pos + 1
    value = shift = 0
    for i in range(10):
        if pos >= end:
            raise OnnxError(f"byte {pos}: varint cut short by the end of its message")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if i == 9 and byte > 1:
                raise OnnxError(f"byte {pos - 1}: varint over 64 bits")
            return value, pos
        shift += 7
    raise OnnxError(f"byte {pos - 10}: varint longer than 10 bytes")


def fields(data, start, end):
    """Yield (offset, number, wire type, value) for each field of the message data[start:end].

    value is the int of a varint, and the (start, end) span in data of the 8, 4 or length
    bytes of the other wire types; a span never reaches past end."""
    pos = start
    while pos < end:
        at = pos
        tag, pos = read_varint(data, pos, end)
        number, wire = tag >> 3, tag & 7
        if not 1 <= number <= MAX_FIELD:
            raise OnnxError(f"byte {at}: field number {number} is out of protobuf's range")
        if wire == VARINT:
            value, pos = read_varint(data, pos, end)
        elif wire in (I64, I32, LEN):
            if wire == LEN:
                size, pos = read_varint(data, pos, end)
            else:
                size = 8 if wire == I64 else 4
            if size > end - pos:
                raise OnnxError(f"byte {at}: field {number} declares {size} bytes, "
                                f"past the end of its message ({end - pos} left)")
            value = (pos, pos + size)
            pos += size
        else:
            raise OnnxError(f"byte {at}: field {number} has wire type {wire}, which ONNX "
                            "does not use (groups are not supported)")
        yield at, number, wire, value
