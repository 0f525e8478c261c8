"""The protobuf request bodies the HTTP door decodes: upstream's envelope, any served kind.

Typed client-go clients (kubectl's ``drain``, ``create <kind>``, ``auth can-i``, a controller
set to protobuf) send ``application/vnd.kubernetes.protobuf`` bodies. This module reads
upstream's envelope — the magic ``k8s\\x00``, then ``runtime.Unknown{typeMeta{apiVersion,
kind}, raw, ...}`` — with a small wire-format reader (no protobuf dependency) and turns the
message into the dict its JSON would decode to, driven by the generated tables of
``protobuf_schema`` (the special messages — Time, MicroTime, Duration, Quantity, IntOrString,
RawExtension, FieldsV1 — become their JSON forms). A kind without a message is ``None``: the
server answers 415. It does not own the writer (``protobuf_encode``) nor what the verbs do with
the result.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

from emulator.base.http import protobuf_schema as ps

__all__ = ["MAGIC", "ProtobufError", "decode", "envelope_parts", "fields", "go_duration", "message"]

MAGIC: Final = b"k8s\x00"
_ZEROS: Final[tuple[object, ...]] = ("", 0, False, {}, [])


class ProtobufError(ValueError):
    """A body that is not a well-formed protobuf envelope."""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ProtobufError("truncated varint")
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field: an int for varints, bytes for length-delimited and
    fixed-width fields (8 or 4 bytes, little-endian)."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            yield number, value
            continue
        if wire == 2:
            size, i = _varint(data, i)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        if i + size > len(data):
            raise ProtobufError("truncated field")
        yield number, data[i : i + size]
        i += size


def _str(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a string")
    # Go keeps the bytes as they are and writes invalid UTF-8 as U+FFFD in JSON: the same
    # here, so a bad name meets validation (422) rather than a UnicodeDecodeError (500)
    return value.decode("utf-8", "replace")


def _msg(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a message")
    return value


def _int64(value: int | bytes) -> int:
    if isinstance(value, bytes):
        raise ProtobufError("expected an integer")
    return value - (1 << 64) if value >= 1 << 63 else value


def _timestamp(data: bytes, micro: bool) -> str | None:
    seconds = nanos = 0
    for n, v in fields(data):
        if n == 1:
            seconds = _int64(v)
        elif n == 2:
            nanos = _int64(v)
    if seconds == 0 and nanos == 0:
        return None  # Go's zero time: null in JSON
    t = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def go_duration(nanos: int) -> str:
    """Go's ``time.Duration.String`` (``1h2m3.5s``, ``1.5ms``, ``0s``)."""
    if nanos == 0:
        return "0s"
    sign, n = ("-", -nanos) if nanos < 0 else ("", nanos)
    if n < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if n >= size:
                return sign + _frac(n, size) + unit
    h, rest = divmod(n, 3_600_000_000_000)
    m, rest = divmod(rest, 60_000_000_000)
    text = (f"{h}h" if h else "") + (f"{m}m" if h or m else "") + _frac(rest, 1_000_000_000) + "s"
    return sign + text


def _frac(n: int, size: int) -> str:
    whole, part = divmod(n, size)
    digits = f"{part:0{len(str(size)) - 1}d}".rstrip("0") if part else ""
    return f"{whole}.{digits}" if digits else str(whole)


def _special(ref: str, data: bytes) -> Any:
    if ref in (ps.TIME, ps.MICRO_TIME):
        return _timestamp(data, ref == ps.MICRO_TIME)
    sub = dict(fields(data))
    if ref == ps.QUANTITY:
        return _str(sub.get(1, b""))
    if ref == ps.INT_OR_STRING:
        return _str(sub.get(3, b"")) if _int64(sub.get(1, 0)) == 1 else _int64(sub.get(2, 0))
    if ref == ps.DURATION:
        return go_duration(_int64(sub.get(1, 0)))
    raw = _msg(sub.get(1, b""))  # RawExtension, FieldsV1: JSON bytes
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise ProtobufError(f"{ref.rsplit('.', 1)[-1]} is not JSON") from None


_SPECIAL: Final = frozenset(
    {ps.TIME, ps.MICRO_TIME, ps.QUANTITY, ps.INT_OR_STRING, ps.DURATION, ps.RAW_EXTENSION, ps.FIELDS_V1}
)


def _scalar(kind: str, v: int | bytes) -> Any:
    match kind:
        case "s":
            return _str(v)
        case "i":
            return _int64(v)
        case "u":
            return _int64(v) & ((1 << 64) - 1)
        case "?":
            return bool(_int64(v))
        case "y":  # JSON carries []byte as base64
            return base64.b64encode(_msg(v)).decode()
        case "d" | "f":
            raw = _msg(v)
            return struct.unpack("<d" if len(raw) == 8 else "<f", raw)[0]
    raise ProtobufError(f"no decoder for {kind}")


def _value(kind: str, ref: str, v: int | bytes) -> Any:
    if kind != "m":
        return _scalar(kind, v)
    data = _msg(v)
    if ref in _SPECIAL:
        return _special(ref, data)
    if ps.is_list(ref):
        return [_str(x) for n, x in fields(data) if n == 1]
    return message(ref, data)


def _map_entry(f: ps.Field, data: bytes) -> tuple[Any, Any]:
    key: Any = _scalar(f.key, b"" if f.key == "s" else 0)
    value: Any = None
    for n, v in fields(data):
        if n == 1:
            key = _scalar(f.key, v)
        elif n == 2:
            value = _value(f.value, f.ref, v)
    if value is None:
        value = _value(f.value, f.ref, b"" if f.value in ("s", "y", "m") else 0)
    return key, value


def message(name: str, data: bytes) -> dict[str, Any]:
    """A message as the dict its JSON decodes to (see ``protobuf_schema`` for zero values)."""
    schema = ps.schema(name)
    if schema is None:
        raise ProtobufError(f"no message {name}")
    out: dict[str, Any] = {}
    for n, v in fields(data):
        f = schema.get(n)
        if f is None:
            continue
        if f.type == "M":
            key, value = _map_entry(f, _msg(v))
            out.setdefault(f.name, {})[key] = value
        elif f.inline:
            out.update(message(f.ref, _msg(v)))
        elif f.repeated:
            items = out.setdefault(f.name, [])
            if isinstance(v, bytes) and f.type in ("i", "u", "?"):  # packed
                items.extend(_scalar(f.type, x) for _, x in fields_packed(v))
            else:
                items.append(_value(f.type, f.ref, v))
        else:
            value = _value(f.type, f.ref, v)
            if value is None or (not f.ptr and value in _ZEROS):
                out.pop(f.name, None)
            else:
                out[f.name] = value
    return out


def fields_packed(data: bytes) -> Iterator[tuple[int, int]]:
    i = 0
    while i < len(data):
        value, i = _varint(data, i)
        yield 0, value


def envelope_parts(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw message) of an envelope; ``ProtobufError`` if it is not one."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf magic number")
    api_version = kind = ""
    raw = b""
    for n, v in fields(body[len(MAGIC) :]):
        if n == 1:
            for tn, tv in fields(_msg(v)):
                if tn == 1:
                    api_version = _str(tv)
                elif tn == 2:
                    kind = _str(tv)
        elif n == 2:
            raw = _msg(v)
    return api_version, kind, raw


def decode(body: bytes) -> dict[str, Any] | None:
    """The body's object as a JSON-like dict (with apiVersion and kind), or None when its
    kind has no message here. ``ProtobufError`` if it is not an envelope."""
    api_version, kind, raw = envelope_parts(body)
    name = ps.message_of(api_version, kind)
    if name is None:
        return None
    return {"apiVersion": api_version, "kind": kind, **message(name, raw)}
