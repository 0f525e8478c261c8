"""A node group's ``devices``: what simulated DRA drivers publish on each node of the group
(one ResourceSlice per node and driver, ``agents.dra``).

.. code-block:: yaml

    nodes:
      - count: 4
        namePrefix: gpu-
        template: {...}
        devices:                      # one driver (a mapping) or several (a list of them)
          driver: gpu.example.com     # spec.driver of the slices; the kubelet plugin's name
          count: 8                    # devices gpu-0 .. gpu-7 (at most 128: one slice per node)
          namePrefix: gpu-            # the default
          attributes: {model: {string: A100}, memoryGiB: {int: 80}}   # v1 DeviceAttribute shapes
          capacity: {memory: {value: 80Gi}}                           # v1 DeviceCapacity shapes
          prepareDelay: {mean: 1s, jitter: 200ms}   # each NodePrepareResources call

``prepareDelay`` is drawn from the driver's seeded stream ``dra/<driver>``. ``device_problems``
holds the checks upstream's validation makes of the slices these become (attribute and
capacity names, exactly one value per attribute, device names) and the one across entries (a
driver named twice in a group); the loader reports the first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Final

import msgspec

from emulator.app.scenario.schema.base import Delay, Spec
from emulator.base.api.labels import dns1123_label_errors, dns1123_subdomain_errors
from emulator.base.api.quantity import parse_quantity

__all__ = ["MAX_DEVICES", "AttributeValue", "CapacityValue", "GroupDevices", "device_problems"]

MAX_DEVICES: Final = 128
"""Upstream ``ResourceSliceMaxDevices``: every device of a node goes in its one slice."""
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_ATTRIBUTE_KINDS: Final = ("int", "bool", "string", "version")


class AttributeValue(Spec, frozen=True, kw_only=True):
    """A ``resource.k8s.io/v1`` DeviceAttribute: exactly one of its four fields."""

    int_value: int | None = msgspec.field(default=None, name="int")
    bool_value: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None


class CapacityValue(Spec, frozen=True, kw_only=True):
    """A ``resource.k8s.io/v1`` DeviceCapacity: its ``value``, a quantity."""

    value: str | int


class GroupDevices(Spec, frozen=True, kw_only=True):
    driver: Annotated[str, msgspec.Meta(min_length=1, max_length=63)]
    count: Annotated[int, msgspec.Meta(ge=0, le=MAX_DEVICES)]
    name_prefix: str = "gpu-"
    attributes: dict[str, AttributeValue] = {}
    capacity: dict[str, CapacityValue] = {}
    prepare_delay: Delay = Delay()


def _name_errors(name: str) -> str:
    """Upstream's check of an attribute or capacity name: a C identifier of at most 32
    characters, optionally prefixed by a DNS subdomain and ``/``."""
    domain, sep, ident = name.rpartition("/")
    if sep and (errs := dns1123_subdomain_errors(domain)):
        return f"the domain {domain!r}: {errs[0]}"
    if not _IDENTIFIER.match(ident) or len(ident) > 32:
        return "a C identifier of at most 32 characters (letters, digits, _), optionally after <domain>/"
    return ""


def _attribute_problem(value: AttributeValue) -> str:
    given = [k for k, v in zip(_ATTRIBUTE_KINDS, value.__struct_fields__, strict=True) if getattr(value, v) is not None]
    if len(given) != 1:
        got = ", ".join(given) if given else "none"
        return f"expected exactly one of int, bool, string, version (a v1 DeviceAttribute), got {got}"
    if value.string is not None and len(value.string) > 64:
        return f"expected a string of at most 64 characters, got {len(value.string)}"
    if value.version is not None and not _SEMVER.match(value.version):
        return f"expected a semantic version like 1.2.3, got {value.version!r}"
    return ""


def device_problems(entries: list[GroupDevices], path: str, *, listed: bool) -> Iterator[tuple[str, str]]:
    """``(path, detail)`` for each problem of one group's ``devices`` (``path``; ``listed``:
    written as a list rather than one mapping), in file order."""
    first: dict[str, int] = {}
    for i, d in enumerate(entries):
        p = f"{path}[{i}]" if listed else path
        if errs := dns1123_subdomain_errors(d.driver):
            yield f"{p}.driver", f"expected a DRA driver name (a DNS-1123 subdomain): {errs[0]}"
        if d.driver in first:
            yield (
                f"{p}.driver",
                f'driver "{d.driver}" is named twice in this group (first at {path}[{first[d.driver]}])',
            )
        first.setdefault(d.driver, i)
        if d.count and (errs := dns1123_label_errors(f"{d.name_prefix}{d.count - 1}")):
            yield f"{p}.namePrefix", f"device names like {d.name_prefix}{d.count - 1!r} are invalid: {errs[0]}"
        for name, value in d.attributes.items():
            if problem := _name_errors(name):
                yield f"{p}.attributes.{name}", f"expected an attribute name: {problem}"
            elif problem := _attribute_problem(value):
                yield f"{p}.attributes.{name}", problem
        for name, cap in d.capacity.items():
            if problem := _name_errors(name):
                yield f"{p}.capacity.{name}", f"expected a capacity name: {problem}"
                continue
            try:
                parse_quantity(str(cap.value))
            except ValueError:
                yield f"{p}.capacity.{name}.value", f"expected a quantity like 80Gi, got {cap.value!r}"
