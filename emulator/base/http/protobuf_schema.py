"""The protobuf messages of the served kinds, as data: field number → JSON name and type.

Owns reading ``data/protobuf_messages.json`` (written from upstream's ``generated.proto`` by
``protobuf_gen``, which documents its format) lazily, on the first protobuf body or answer, so
that a server nobody asks for protobuf never pays for it; and naming the message of an
``apiVersion``/``kind`` (the group's package, else ``meta/v1``'s: ``DeleteOptions``,
``Status``, ``WatchEvent``). It does not own the wire reader (``protobuf``) nor the writer
(``protobuf_encode``).

A ``Field``'s ``ptr`` says the Go field is a pointer: upstream's Go structs are written with
every non-pointer field, zero or not, and a pointer field only when set, so a pointer keeps its
zero value (``replicas: 0``, ``gracePeriodSeconds: 0``) while any other field's zero (``""``,
``0``, ``false``, an empty message or map) is left out, as ``omitempty`` leaves it out of JSON.
An ``inline`` field is an embedded Go struct whose JSON fields are the parent's
(``Volume.volumeSource``, ``Probe.handler``).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "DURATION",
    "FIELDS_V1",
    "INT_OR_STRING",
    "MICRO_TIME",
    "QUANTITY",
    "RAW_EXTENSION",
    "TIME",
    "Field",
    "is_list",
    "message_of",
    "schema",
]

_DATA: Final = Path(__file__).parent / "data" / "protobuf_messages.json"
META: Final = "k8s.io.apimachinery.pkg.apis.meta.v1"
TIME: Final = f"{META}.Time"
MICRO_TIME: Final = f"{META}.MicroTime"
DURATION: Final = f"{META}.Duration"
FIELDS_V1: Final = f"{META}.FieldsV1"
QUANTITY: Final = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING: Final = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION: Final = "k8s.io.apimachinery.pkg.runtime.RawExtension"


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    name: str
    type: str
    """``s`` ``y`` ``?`` ``i`` ``u`` ``d`` ``f`` scalars, ``m`` a message, ``M`` a map."""
    ref: str = ""
    """The message of an ``m`` field, of an ``M`` field's values (``""`` for scalars)."""
    repeated: bool = False
    ptr: bool = False
    inline: bool = False
    key: str = ""
    """An ``M`` field's key type; ``value`` its value type."""
    value: str = ""


@functools.cache
def _tables() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(_DATA.read_text())
    return loaded


def _field(row: list[Any]) -> Field:
    number, name, kind, ref, flags = row
    if kind == "M":
        key, value, vref = ref
        return Field(number, name, "M", vref, key=key, value=value)
    return Field(number, name, kind, ref, repeated=bool(flags & 1), ptr=bool(flags & 2), inline=bool(flags & 4))


@functools.cache
def schema(message: str) -> dict[int, Field] | None:
    """A message's fields by number, in ascending order; None for an unknown message."""
    rows = _tables()["messages"].get(message)
    if rows is None:
        return None
    return {f.number: f for f in map(_field, rows)}


@functools.cache
def is_list(message: str) -> bool:
    """Whether the message's JSON is the list of its single ``items`` field (``ExtraValue``)."""
    return message in _tables()["lists"]


@functools.cache
def message_of(api_version: str, kind: str) -> str | None:
    """The full message name of an object of ``apiVersion``/``kind``, or None when the kind
    has none here (a kind of another group, a custom resource)."""
    messages = _tables()["messages"]
    package = _tables()["packages"].get(api_version)
    for candidate in (f"{package}.{kind}" if package else "", f"{META}.{kind}"):
        if candidate in messages:
            return candidate
    return None
