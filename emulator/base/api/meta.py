"""Object metadata shared by every kind, and the Struct base class.

Every API object is a frozen msgspec Struct: camelCase on the wire (``rename="camel"``),
unknown fields ignored (real manifests carry many), defaults omitted when encoding.
Stored objects are never mutated: writers build a new object with
``msgspec.structs.replace``. ``gc=False``: object trees have no reference cycles, and a
full collection over 100k tracked pods costs seconds.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "Condition",
    "K8s",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "reference_to",
]


class K8s(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel", frozen=True, gc=False):
    """Base of every API struct."""


class OwnerReference(K8s, frozen=True):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8s, frozen=True):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[OwnerReference] = []
    finalizers: list[str] = []


class ListMeta(K8s, frozen=True):
    resource_version: str = ""


class ObjectReference(K8s, frozen=True):
    api_version: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    resource_version: str = ""
    field_path: str = ""


class Condition(K8s, frozen=True, omit_defaults=False):
    """``metav1.Condition``: the condition type of newer kinds' status (PodDisruptionBudget, Service).
    Every field is written, empty ones included: upstream's ``reason`` and ``message`` have no
    ``omitempty`` and the official clients require them."""

    type: str
    status: str
    observed_generation: int = 0
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


# --- label selectors (upstream's meta/v1 LabelSelector; core re-exports them) ------------


class LabelSelectorRequirement(K8s, frozen=True):
    key: str
    operator: str
    values: list[str] = []


class LabelSelector(K8s, frozen=True):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []


def reference_to(obj: Any) -> ObjectReference:
    """Upstream's ``reference.GetReference``: an ``ObjectReference`` to a stored object (an
    Event's ``involvedObject``, a volume's ``claimRef``), its resourceVersion included."""
    m = obj.metadata
    return ObjectReference(
        api_version=obj.api_version,
        kind=obj.kind,
        namespace=m.namespace,
        name=m.name,
        uid=m.uid,
        resource_version=m.resource_version,
    )
