"""Objects out as protobuf: the JSON form of an object → upstream's protobuf envelope.

Owns the writer side of ``application/vnd.kubernetes.protobuf``: a message from its JSON dict,
driven by the generated tables of ``protobuf_schema`` (fields in ascending number, map entries
sorted by key as Go's generated marshallers write them, negative ints as 10-byte varints, the
special messages — Time/MicroTime as a Timestamp, Duration as nanoseconds, Quantity and
IntOrString, RawExtension and FieldsV1 as their JSON bytes — from their JSON forms); the
envelope (``k8s\\x00`` + ``runtime.Unknown{typeMeta, raw, contentEncoding, contentType}``);
and the watch frame (a 4-byte big-endian length, then a raw ``metav1.WatchEvent`` whose object
is a RawExtension holding the envelope of the event's object), as upstream's streaming
protobuf serializer writes it. A field the tables do not know is left out (as Go drops an
unknown JSON field). It does not own content negotiation (``negotiate``) nor the reader
(``protobuf``).
"""

from __future__ import annotations

import base64
import functools
import json
import re
import struct
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from emulator.base.http import protobuf_schema as ps
from emulator.base.http.protobuf import MAGIC

__all__ = ["encode_envelope", "encode_message", "parse_duration", "watch_frame"]


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ld(tag: bytes, raw: bytes) -> bytes:
    return tag + _varint(len(raw)) + raw


@functools.cache
def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


_WIRE: Final = {"s": 2, "y": 2, "m": 2, "M": 2, "i": 0, "u": 0, "?": 0, "d": 1, "f": 5}


@functools.cache
def _plan(message: str) -> tuple[tuple[ps.Field, bytes], ...]:
    schema = ps.schema(message)
    if schema is None:
        raise KeyError(message)
    return tuple((f, _tag(f.number, _WIRE[f.type])) for f in sorted(schema.values(), key=lambda f: f.number))


@functools.lru_cache(maxsize=4096)  # the same instants recur across a list's objects
def _timestamp(text: str) -> bytes:
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    seconds = int(t.timestamp()) - (1 if t.timestamp() < 0 and t.microsecond else 0)
    nanos = t.microsecond * 1000
    return _tag(1, 0) + _varint(seconds) + (_tag(2, 0) + _varint(nanos) if nanos else b"")


_DURATION_PART: Final = re.compile(r"([0-9.]+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS: Final = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``1h2m3.5s``)."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return 0
    parts = _DURATION_PART.findall(body)
    if "".join(n + u for n, u in parts) != body or not parts:
        raise ValueError(f"time: invalid duration {text!r}")
    return sign * sum(round(float(n) * _UNITS[u]) for n, u in parts)


def _special(ref: str, value: Any) -> bytes:
    if ref in (ps.TIME, ps.MICRO_TIME):
        return _timestamp(value)
    if ref == ps.QUANTITY:
        return _ld(_tag(1, 2), str(value).encode())
    if ref == ps.INT_OR_STRING:
        if isinstance(value, str):
            return _tag(1, 0) + b"\x01" + _tag(2, 0) + b"\x00" + _ld(_tag(3, 2), value.encode())
        return _tag(1, 0) + b"\x00" + _tag(2, 0) + _varint(int(value)) + _ld(_tag(3, 2), b"")
    if ref == ps.DURATION:
        return _tag(1, 0) + _varint(parse_duration(value))
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()  # RawExtension, FieldsV1
    return _ld(_tag(1, 2), raw)


_SPECIAL: Final = frozenset(
    {ps.TIME, ps.MICRO_TIME, ps.QUANTITY, ps.INT_OR_STRING, ps.DURATION, ps.RAW_EXTENSION, ps.FIELDS_V1}
)


def _scalar(kind: str, value: Any) -> bytes:
    match kind:
        case "s":
            raw = value.encode() if isinstance(value, str) else str(value).encode()
            return _varint(len(raw)) + raw
        case "i" | "u":
            return _varint(int(value))
        case "?":
            return b"\x01" if value else b"\x00"
        case "y":
            raw = base64.b64decode(value)
            return _varint(len(raw)) + raw
        case "d":
            return struct.pack("<d", float(value))
        case "f":
            return struct.pack("<f", float(value))
    raise ValueError(f"no encoder for {kind}")


def _value(kind: str, ref: str, value: Any) -> bytes:
    """A field's payload after its tag (a length prefix included for length-delimited ones)."""
    if kind != "m":
        return _scalar(kind, value)
    if ref in _SPECIAL:
        raw = _special(ref, value)
    elif ps.is_list(ref):
        tag = _tag(1, 2)
        raw = b"".join(_ld(tag, str(x).encode()) for x in value)
    else:
        raw = encode_message(ref, value)
    return _varint(len(raw)) + raw


Writer = Callable[[Any], bytes]


def _delimited(raw: bytes) -> bytes:
    n = len(raw)
    return (bytes((n,)) if n < 0x80 else _varint(n)) + raw


def _writer(f: ps.Field, tag: bytes) -> Writer:
    """A function from the field's JSON value to its bytes (tag included), made once per field."""
    if f.type == "M":
        ktag, vtag = _tag(1, _WIRE[f.key]), _tag(2, _WIRE[f.value])

        def write_map(value: Any) -> bytes:
            out = []
            for key in sorted(value):
                entry = ktag + _scalar(f.key, key) + vtag + _value(f.value, f.ref, value[key])
                out.append(tag + _delimited(entry))
            return b"".join(out)

        return write_map
    one: Writer
    if f.type == "s":

        def one(value: Any) -> bytes:
            return tag + _delimited(value.encode() if type(value) is str else str(value).encode())

    elif f.type == "m" and f.ref not in _SPECIAL and not ps.is_list(f.ref):
        ref = f.ref

        def one(value: Any) -> bytes:
            return tag + _delimited(encode_message(ref, value))

    else:
        kind, ref = f.type, f.ref

        def one(value: Any) -> bytes:
            return tag + _value(kind, ref, value)

    if f.repeated:
        return lambda value: b"".join([one(item) for item in value])
    return one


@functools.cache
def _by_name(message: str) -> tuple[dict[str, tuple[int, Writer]], tuple[tuple[ps.Field, bytes], ...] | None]:
    """The writers by JSON name; the plan too when the message inlines an embedded one."""
    plan = _plan(message)
    names = {f.name: (f.number, _writer(f, tag)) for f, tag in plan}
    return names, plan if any(f.inline for f, _ in plan) else None


def encode_message(message: str, obj: dict[str, Any]) -> bytes:
    """The protobuf bytes of a message (no envelope) from its JSON form."""
    names, inline_plan = _by_name(message)
    if inline_plan is not None:
        out: list[bytes] = []
        for f, tag in inline_plan:
            if f.inline:
                out.append(tag + _delimited(encode_message(f.ref, obj)))
            elif (value := obj.get(f.name)) is not None:
                out.append(_guarded(names[f.name][1], value))
        return b"".join(out)
    parts: list[tuple[int, bytes]] = []
    for key, value in obj.items():
        known = names.get(key)
        if known is not None and value is not None:
            parts.append((known[0], _guarded(known[1], value)))
    parts.sort(key=_first)
    return b"".join([p for _, p in parts])


def _guarded(write: Writer, value: Any) -> bytes:
    """A field's bytes; none when its JSON value is not of the field's type (a value kept
    verbatim from a body, say), which Go could not have held: the rest is still written."""
    try:
        return write(value)
    except (TypeError, ValueError, AttributeError, KeyError):
        return b""


def _first(part: tuple[int, bytes]) -> int:
    return part[0]


_EMPTY_STRINGS: Final = _ld(_tag(3, 2), b"") + _ld(_tag(4, 2), b"")


def encode_envelope(obj: dict[str, Any]) -> bytes | None:
    """Upstream's protobuf serialization of an object (its ``apiVersion``/``kind`` naming the
    message), or None when the kind has no message here."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    name = ps.message_of(api_version, kind)
    if name is None:
        return None
    type_meta = _ld(_tag(1, 2), api_version.encode()) + _ld(_tag(2, 2), kind.encode())
    raw = encode_message(name, obj)
    return MAGIC + _ld(_tag(1, 2), type_meta) + _ld(_tag(2, 2), raw) + _EMPTY_STRINGS


def watch_frame(event_type: str, envelope: bytes) -> bytes:
    """One frame of a protobuf watch stream: length, then ``WatchEvent{type, object{raw}}``."""
    event = _ld(_tag(1, 2), event_type.encode()) + _ld(_tag(2, 2), _ld(_tag(1, 2), envelope))
    return struct.pack(">I", len(event)) + event
