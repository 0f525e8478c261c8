"""The few protobuf request bodies kubectl sends that the HTTP door decodes.

kubectl sends some bodies only as ``application/vnd.kubernetes.protobuf`` and never retries
in JSON: the ``DeleteOptions`` of ``drain`` (and of other typed-client deletes), the
``Eviction`` of ``drain``, and the ``Namespace`` of ``create namespace``. This module reads
upstream's envelope — the magic ``k8s\\x00``, then ``runtime.Unknown{typeMeta{apiVersion,
kind}, raw, ...}`` — with a small wire-format reader (no protobuf dependency) and turns those
three messages into the dicts their JSON would decode to. Any other kind is ``None``: the
server answers 415 as before. It does not own what the verbs do with the result.

Field numbers are upstream's ``generated.proto``: ``ObjectMeta`` name 1, generateName 2,
namespace 3, uid 5, resourceVersion 6, labels 11, annotations 12; ``DeleteOptions``
gracePeriodSeconds 1, preconditions 2 (uid 1, resourceVersion 2), orphanDependents 3,
propagationPolicy 4, dryRun 5; ``Eviction`` metadata 1, deleteOptions 2; ``Namespace``
metadata 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

__all__ = ["MAGIC", "ProtobufError", "decode"]

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
    return value.decode("utf-8")


def _msg(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a message")
    return value


def _int64(value: int | bytes) -> int:
    if isinstance(value, bytes):
        raise ProtobufError("expected an integer")
    return value - (1 << 64) if value >= 1 << 63 else value


def _map_entry(data: bytes) -> tuple[str, str]:
    key = value = ""
    for n, v in fields(data):
        if n == 1:
            key = _str(v)
        elif n == 2:
            value = _str(v)
    return key, value


_META_STRINGS: Final = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}


def _object_meta(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, v in fields(data):
        if n in _META_STRINGS:
            out[_META_STRINGS[n]] = _str(v)
        elif n in (11, 12):
            key, value = _map_entry(_msg(v))
            out.setdefault("labels" if n == 11 else "annotations", {})[key] = value
    return out


def _delete_options(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, v in fields(data):
        if n == 1:
            out["gracePeriodSeconds"] = _int64(v)
        elif n == 2:
            pre: dict[str, str] = {}
            for pn, pv in fields(_msg(v)):
                if pn in (1, 2):
                    pre["uid" if pn == 1 else "resourceVersion"] = _str(pv)
            out["preconditions"] = pre
        elif n == 3:
            out["orphanDependents"] = bool(v)
        elif n == 4:
            out["propagationPolicy"] = _str(v)
        elif n == 5:
            out.setdefault("dryRun", []).append(_str(v))
    return out


def _eviction(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, v in fields(data):
        if n == 1:
            out["metadata"] = _object_meta(_msg(v))
        elif n == 2:
            out["deleteOptions"] = _delete_options(_msg(v))
    return out


def _namespace(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, v in fields(data):
        if n == 1:
            out["metadata"] = _object_meta(_msg(v))
    return out


_DECODERS: Final = {"DeleteOptions": _delete_options, "Eviction": _eviction, "Namespace": _namespace}


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
    decoder = _DECODERS.get(kind)
    if decoder is None:
        return None
    return {"apiVersion": api_version, "kind": kind, **decoder(raw)}
