"""The ``autoscaling.karpenter.instanceTypes`` file: Karpenter's kwok provider format.

The format is ``kwok/cloudprovider/instance_types.json`` of kubernetes-sigs/karpenter v1.9.1
(``InstanceTypeOptions`` in ``kwok/cloudprovider/helpers.go``): a JSON list of
``{name, architecture, operatingSystems, resources, offerings: [{Price, Available,
Requirements: [NodeSelectorRequirement]}]}``. Each instance type gets the kwok provider's
derived labels (``karpenter.kwok.sh/instance-size``/``-family``/``-cpu``/``-memory``, as
``setDefaultOptions``) and its overhead (``KubeReserved`` cpu 100m, memory 10Mi:
allocatable = resources - overhead). A file that is not this format is one error line naming
the file, the item's path and what was expected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

import msgspec

from emulator.app.scenario.readers import ScenarioError
from emulator.base.api.quantity import Quantity, decode_quantity
from emulator.base.inputs import ReadError, read_text

__all__ = [
    "OVERHEAD",
    "InstanceType",
    "Offering",
    "OfferingRequirement",
    "allocatable",
    "instance_types_entry",
    "load_instance_types",
]

OVERHEAD: Final = {"cpu": "100m", "memory": "10Mi"}
"""The kwok provider's ``InstanceTypeOverhead.KubeReserved``."""
_AWS: Final = re.compile(r"^[a-z]+[0-9]+[a-z]*\.([a-z0-9]+)$")
_FAMILY: Final = re.compile(r"[.-]")


class OfferingRequirement(msgspec.Struct, frozen=True):
    key: str
    operator: str
    values: list[str] = []


class Offering(
    msgspec.Struct, frozen=True, rename={"price": "Price", "available": "Available", "requirements": "Requirements"}
):
    price: float
    available: bool = True
    requirements: list[OfferingRequirement] = []

    def value(self, key: str) -> str:
        """The single ``In`` value of ``key`` (zone, capacity type), or ``""``."""
        for r in self.requirements:
            if r.key == key and r.operator == "In" and len(r.values) == 1:
                return r.values[0]
        return ""


class InstanceType(msgspec.Struct, frozen=True, rename="camel"):
    name: str
    offerings: list[Offering]
    architecture: str = "amd64"
    operating_systems: list[str] = msgspec.field(default_factory=lambda: ["linux"])
    resources: dict[str, str] = {}

    def labels(self) -> dict[str, str]:
        """The instance type's single-valued requirements as labels (``newInstanceType``)."""
        cpu, memory = self.resources.get("cpu", ""), self.resources.get("memory", "")
        m = _AWS.match(self.name)
        family = _FAMILY.split(self.name, maxsplit=1)
        out = {
            "node.kubernetes.io/instance-type": self.name,
            "kubernetes.io/arch": self.architecture,
            "karpenter.kwok.sh/instance-size": m.group(1) if m else cpu,
            "karpenter.kwok.sh/instance-family": family[0] if len(family) == 2 else self.name[:1],
            "karpenter.kwok.sh/instance-cpu": cpu,
            "karpenter.kwok.sh/instance-memory": memory,
        }
        if len(self.operating_systems) == 1:
            out["kubernetes.io/os"] = self.operating_systems[0]
        return out

    def capacity(self) -> dict[str, Quantity]:
        return {k: decode_quantity(v) for k, v in self.resources.items()}


def _problem(items: Any) -> tuple[str, str] | None:
    if not isinstance(items, list):
        return "", f"expected a JSON list of instance types, got {type(items).__name__}"
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            return f"[{i}]", "expected an instance type (a mapping with name, offerings, resources)"
        try:
            it = msgspec.convert(item, InstanceType)
        except msgspec.ValidationError as err:
            return f"[{i}]", f"not the kwok instance type format: {err}"
        if not it.offerings:
            return f"[{i}].offerings", "expected at least one offering"
        for name, text in it.resources.items():
            q = decode_quantity(text)
            if q.error:
                return f"[{i}].resources.{name}", f'Invalid value: "{text}": {q.error}'
        for j, off in enumerate(it.offerings):
            if not off.price >= 0:
                return f"[{i}].offerings[{j}].Price", f"expected a price >= 0, got {off.price}"
    return None


def load_instance_types(base_dir: Path, name: str, path: str, file: str) -> list[InstanceType]:
    """The instance types of file ``name`` (relative to ``base_dir``); ``path`` is the
    reference's YAML path in scenario ``file``. Bad content: ``ScenarioError`` naming the
    instance types file and the item's path."""
    target = base_dir / name
    try:
        text = read_text(target)
    except ReadError as err:
        raise ScenarioError(file, path, f"cannot read file: {err.reason}: {target}") from None
    try:
        items = json.loads(text)
    except ValueError as err:
        raise ScenarioError(str(target), "", f"expected the kwok instance_types.json format (JSON): {err}") from None
    if problem := _problem(items):
        raise ScenarioError(str(target), problem[0] or "", problem[1])
    return [msgspec.convert(item, InstanceType) for item in items]


def allocatable(it: InstanceType) -> dict[str, Quantity]:
    """Capacity minus the kwok provider's overhead (``InstanceType.Allocatable``)."""
    out = it.capacity()
    for name, text in OVERHEAD.items():
        if name in out:
            q = out[name]
            rest = max(0, q.milli - decode_quantity(text).milli)
            out[name] = decode_quantity(f"{rest}m") if name == "cpu" else decode_quantity(str(rest // 1000))
    return out


def instance_types_entry(walker: Any, value: Any, path: str) -> Any:
    """``autoscaling.karpenter.instanceTypes: {file}`` for the scenario walker: the entry with
    the file's instance types read now (relative to the scenario's directory)."""
    from emulator.app.scenario.schema import InstanceTypesFile

    entry = walker.struct(InstanceTypesFile, value, path, {"items": []})
    items = load_instance_types(walker.base_dir, entry.file, f"{path}.file", walker.file)
    return msgspec.structs.replace(entry, items=items)
