"""The protobuf request bodies kubectl sends that the HTTP door decodes.

kubectl sends some bodies only as ``application/vnd.kubernetes.protobuf`` and never retries
in JSON: the ``DeleteOptions`` of ``drain`` (and of other typed-client deletes), the
``Eviction`` of ``drain``, and the objects of the ``create <kind>`` generators (namespace,
deployment, job, cronjob, service, poddisruptionbudget, priorityclass). This module reads
upstream's envelope — the magic ``k8s\\x00``, then ``runtime.Unknown{typeMeta{apiVersion,
kind}, raw, ...}`` — with a small wire-format reader (no protobuf dependency) and turns the
message into the dict its JSON would decode to, driven by the field tables of
``protobuf_schema``. Any other kind is ``None``: the server answers 415. It does not own what
the verbs do with the result.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any, Final

from emulator.base.http.protobuf_schema import KINDS, Field, Message

__all__ = ["MAGIC", "ProtobufError", "decode", "message"]

MAGIC: Final = b"k8s\x00"


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
    """(field number, value) of each field: an int for varints, bytes for length-delimited."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            yield number, value
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ProtobufError("truncated field")
            yield number, data[i : i + size]
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")


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


def _map_entry(data: bytes, kind: str) -> tuple[str, str]:
    key = value = ""
    for n, v in fields(data):
        if n == 1:
            key = _str(v)
        elif n == 2:
            if kind == "quantities":
                value = _quantity(_msg(v))
            elif kind == "bytes":  # JSON carries []byte as base64
                value = base64.b64encode(_msg(v)).decode()
            else:
                value = _str(v)
    return key, value


def _quantity(data: bytes) -> str:
    return next((_str(v) for n, v in fields(data) if n == 1), "")


def _intstr(data: bytes) -> int | str:
    kind, number, text = 0, 0, ""
    for n, v in fields(data):
        if n == 1:
            kind = _int64(v)
        elif n == 2:
            number = _int64(v)
        elif n == 3:
            text = _str(v)
    return text if kind == 1 else number


def _value(f: Field, v: int | bytes) -> Any:
    """One field's value as JSON would hold it (map entries are merged by ``message``)."""
    match f.type:
        case "string":
            return _str(v)
        case "int":
            return _int64(v)
        case "bool":
            return bool(_int64(v))
        case "intstr":
            return _intstr(_msg(v))
        case "message":
            assert f.message is not None
            return message(f.message, _msg(v))
    raise ProtobufError(f"no decoder for {f.type}")  # maps are handled by the caller


def message(schema: Message, data: bytes) -> dict[str, Any]:
    """A message as the dict its JSON decodes to: only the schema's fields, zero values of
    non-pointer fields left out (see ``protobuf_schema``)."""
    out: dict[str, Any] = {}
    for n, v in fields(data):
        f = schema.get(n)
        if f is None:
            continue
        if f.type in ("strings", "quantities", "bytes"):
            key, value = _map_entry(_msg(v), f.type)
            out.setdefault(f.name, {})[key] = value
            continue
        value = _value(f, v)
        if f.repeated:
            out.setdefault(f.name, []).append(value)
        elif f.ptr or value not in ("", 0, False, {}):
            out[f.name] = value
    return out


def decode(body: bytes) -> dict[str, Any] | None:
    """The body's object as a JSON-like dict (with apiVersion and kind), or None when its
    kind is not one this module decodes. ``ProtobufError`` if it is not an envelope."""
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
    schema = KINDS.get(kind)
    if schema is None:
        return None
    return {"apiVersion": api_version, "kind": kind, **message(schema, raw)}
