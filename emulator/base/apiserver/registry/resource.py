"""The ``resource.k8s.io/v1`` kinds (upstream ``pkg/registry/resource/{deviceclass,resourceclaim,
resourceclaimtemplate,resourceslice}/strategy.go``, v1.34).

Every kind is defaulted on create and update (``resourcedefaults.default_resource``) and loses,
on create, the fields of v1.34's disabled alpha gates (``drop_disabled``; the manifest loader and
``serve`` warn about them), as upstream's ``dropDisabledFields``; on update they are dropped only
if the stored object did not use them already. DeviceClasses and ResourceSlices are
cluster-scoped and start at generation 1; claims and templates are namespaced. A claim's status
is reset on create, kept by updates and replaced through the status subresource only
(``validateResourceClaimStatusUpdate``). A claim or template asking for ``adminAccess`` is
refused unless its namespace carries ``resource.kubernetes.io/admin-access: "true"``
(``DRAAdminAccess``, beta and on). ``ServerSettings.feature_gates`` turns gates on (the
``gpuSharing: dra`` trace mode turns on ``DRAConsumableCapacity``). ResourceSlices select on
``spec.nodeName`` and ``spec.driver``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.dracel import cel_features
from emulator.base.api.errors import Invalid
from emulator.base.api.resource import (
    DRA_ADMIN_NAMESPACE_LABEL,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)
from emulator.base.api.resourcedefaults import default_resource, drop_disabled, dropped_fields
from emulator.base.api.resourcevalidation import claim_status_problems
from emulator.base.api.validation import validate_resource_update, validate_update
from emulator.base.apiserver.registry.strategy import FieldGetter, Strategy, field_text

__all__ = [
    "DeviceClassStrategy",
    "ResourceClaimStrategy",
    "ResourceClaimTemplateStrategy",
    "ResourceSliceStrategy",
    "ResourceStrategy",
]

ADMIN_ACCESS_FORBIDDEN: Final = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the "
    "containing namespace"
)
_SLICE_FIELDS: Final[Mapping[str, FieldGetter]] = {
    "spec.nodeName": lambda s: field_text(s.spec.node_name),
    "spec.driver": lambda s: s.spec.driver,
}


class ResourceStrategy(Strategy):
    """Defaulting, the gated fields and the update rules; a subclass names its kind and scope."""

    namespaced = False

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        return default_resource(drop_disabled(obj, self.store.feature_gates()))

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        gates = self.store.feature_gates()
        if not dropped_fields(current, gates):
            candidate = drop_disabled(candidate, gates)
        return default_resource(candidate)

    def _consumable(self) -> bool:
        return self.store.feature_gates().get("DRAConsumableCapacity", False)

    def validate(self, obj: Any) -> None:
        with cel_features(consumable_capacity=self._consumable()):
            super().validate(obj)

    def validate_update(self, current: Any, candidate: Any) -> None:
        with cel_features(consumable_capacity=self._consumable()):
            validate_update(candidate)
            validate_resource_update(current, candidate)


def _admin_requests(spec: ResourceClaimSpec, path: str) -> Iterator[str]:
    for i, r in enumerate(spec.devices.requests):
        if r.exactly is not None and r.exactly.admin_access:
            yield f"{path}.devices.requests[{i}].exactly.adminAccess"


class _AdminAccessCheck(ResourceStrategy):
    """``adminAccess`` only in a namespace labelled for it (upstream ``validateAdminAccess``)."""

    namespaced = True

    def _spec(self, obj: Any) -> tuple[ResourceClaimSpec, str]:
        raise NotImplementedError

    def check_create(self, obj: Any) -> None:
        spec, path = self._spec(obj)
        field = next(_admin_requests(spec, path), None)
        if field is None:
            return
        ns = self.store.table("Namespace").get(("", obj.metadata.namespace))
        if ns is None or ns.metadata.labels.get(DRA_ADMIN_NAMESPACE_LABEL) != "true":
            raise Invalid.at(f"{obj.kind}.resource.k8s.io", obj.metadata.name, field, ADMIN_ACCESS_FORBIDDEN)


class ResourceClaimStrategy(_AdminAccessCheck):
    kind = "ResourceClaim"

    def _spec(self, obj: ResourceClaim) -> tuple[ResourceClaimSpec, str]:
        return obj.spec, "spec"

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = super().prepare_for_create(obj, restore=restore)
        return obj if restore else replace(obj, status=ResourceClaimStatus())

    def validate_status_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)
        if problem := next(claim_status_problems(current, candidate), None):
            raise Invalid.at("ResourceClaim.resource.k8s.io", candidate.metadata.name, *problem)


class ResourceClaimTemplateStrategy(_AdminAccessCheck):
    kind = "ResourceClaimTemplate"

    def _spec(self, obj: ResourceClaimTemplate) -> tuple[ResourceClaimSpec, str]:
        return obj.spec.spec, "spec.spec"


class DeviceClassStrategy(ResourceStrategy):
    kind = "DeviceClass"
    generation_on_create = True


class ResourceSliceStrategy(ResourceStrategy):
    kind = "ResourceSlice"
    generation_on_create = True
    fields = _SLICE_FIELDS
