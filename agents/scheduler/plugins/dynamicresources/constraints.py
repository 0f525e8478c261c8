"""Claim constraints (upstream ``matchAttributeConstraint`` in ``allocator_stable.go``, v1.34).

``matchAttribute``: every device picked for the named requests (all requests when none are
named) has the attribute, with one value (same type; versions compare as strings, semver
being minimal). Only the first device's value and a count are kept, as upstream: constraints
are monotonic, so the search stops at the first device that breaks one.

``distinctAttribute`` (DRAConsumableCapacity): every device picked for the named requests has
the attribute, each with another value (upstream ``distinctAttributeConstraint``).

``lookup_attribute``: a fully qualified name ``domain/id`` finds the attribute under that
name, or under ``id`` alone when the domain is the device's driver (upstream ``lookupAttribute``).
``attribute_value``: an attribute's (type, value).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol

__all__ = [
    "Constraint",
    "DistinctAttributeConstraint",
    "MatchAttributeConstraint",
    "attribute_value",
    "lookup_attribute",
]

_VALUE_FIELDS = (
    ("int", ("int_", "int", "int_value")),
    ("bool", ("bool_", "bool", "bool_value")),
    ("string", ("string", "string_value")),
    ("version", ("version", "version_value")),
)


def attribute_value(attr: Any) -> tuple[str, Any] | None:
    """The attribute's (type, value): ``int``, ``bool``, ``string`` or ``version``; None if unset."""
    for kind, names in _VALUE_FIELDS:
        for name in names:
            v = getattr(attr, name, None)
            if v is not None:
                return kind, v
    return None


def lookup_attribute(device: Any, driver: str, name: str) -> Any | None:
    attrs = device.attributes or {}
    attr = attrs.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return attrs.get(ident)


def _applies(request_names: frozenset[str], request: str, sub_request: str) -> bool:
    """A constraint covers every request when it names none, else the named requests and
    ``<request>/<subrequest>`` of a prioritized list."""
    if not request_names or request in request_names:
        return True
    return bool(sub_request) and f"{request}/{sub_request}" in request_names


class Constraint(Protocol):
    def add(self, request: str, sub_request: str, device: Any, did: Any) -> bool: ...

    def remove(self, request: str, sub_request: str, device: Any, did: Any) -> None: ...


class MatchAttributeConstraint:
    __slots__ = ("attribute", "num_devices", "request_names", "value")

    def __init__(self, request_names: Collection[str], attribute: str) -> None:
        self.request_names = frozenset(request_names)
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.num_devices = 0

    def __repr__(self) -> str:
        return f"<matchAttribute {self.attribute} {self.value} n={self.num_devices}>"

    def add(self, request: str, sub_request: str, device: Any, did: Any) -> bool:
        if not _applies(self.request_names, request, sub_request):
            return True
        attr = lookup_attribute(device, did.driver, self.attribute)
        if attr is None:
            return False
        value = attribute_value(attr)
        if value is None:
            return False
        if self.num_devices == 0:
            self.value = value
            self.num_devices = 1
            return True
        if value != self.value:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str, device: Any, did: Any) -> None:
        if not _applies(self.request_names, request, sub_request):
            return
        self.num_devices -= 1


class DistinctAttributeConstraint:
    __slots__ = ("attribute", "request_names", "values")

    def __init__(self, request_names: Collection[str], attribute: str) -> None:
        self.request_names = frozenset(request_names)
        self.attribute = attribute
        self.values: list[tuple[str, Any]] = []

    def __repr__(self) -> str:
        return f"<distinctAttribute {self.attribute} {self.values}>"

    def add(self, request: str, sub_request: str, device: Any, did: Any) -> bool:
        if not _applies(self.request_names, request, sub_request):
            return True
        attr = lookup_attribute(device, did.driver, self.attribute)
        value = attribute_value(attr) if attr is not None else None
        if value is None or value in self.values:
            return False
        self.values.append(value)
        return True

    def remove(self, request: str, sub_request: str, device: Any, did: Any) -> None:
        if not _applies(self.request_names, request, sub_request):
            return
        attr = lookup_attribute(device, did.driver, self.attribute)
        value = attribute_value(attr) if attr is not None else None
        if value in self.values:
            self.values.remove(value)
