"""``resourceclaim``: upstream ``resourceclaim.Name``/``IsForPod``/``IsReservedForPod``/``CanBeReserved``."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Pod, PodResourceClaim, PodResourceClaimStatus, PodSpec, PodStatus
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.resource import ResourceClaim, ResourceClaimConsumerReference, ResourceClaimStatus
from emulator.base.api.resourceclaim import (
    ApiUnsupported,
    ClaimNotCreated,
    can_be_reserved,
    claim_name,
    is_for_pod,
    is_reserved_for_pod,
)

DIRECT = PodResourceClaim(name="shared", resource_claim_name="shared-gpu")
TEMPLATE = PodResourceClaim(name="gpu", resource_claim_template_name="gpu-template")


def _pod(statuses: list[PodResourceClaimStatus]) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid="u-1"),
        spec=PodSpec(resource_claims=[DIRECT, TEMPLATE]),
        status=PodStatus(resource_claim_statuses=statuses),
    )


def test_claim_name() -> None:
    assert claim_name(_pod([]), DIRECT) == ("shared-gpu", False)
    with pytest.raises(ClaimNotCreated, match='pod "default/p": ResourceClaim not created yet'):
        claim_name(_pod([]), TEMPLATE)
    made = _pod([PodResourceClaimStatus(name="gpu", resource_claim_name="p-gpu-x7k2q")])
    assert claim_name(made, TEMPLATE) == ("p-gpu-x7k2q", True)
    assert claim_name(_pod([PodResourceClaimStatus(name="gpu")]), TEMPLATE) == (None, True)


def test_ownership_and_reservations() -> None:
    pod = _pod([])
    owner = OwnerReference(kind="Pod", name="p", uid="u-1", controller=True)
    owned = ResourceClaim(metadata=ObjectMeta(name="c", namespace="default", owner_references=[owner]))
    assert is_for_pod(pod, owned) == ""
    not_controller = replace(owner, controller=None)
    for other in (
        ResourceClaim(metadata=ObjectMeta(name="c", namespace="default")),
        ResourceClaim(metadata=ObjectMeta(name="c", namespace="default", owner_references=[not_controller])),
        ResourceClaim(metadata=ObjectMeta(name="c", namespace="elsewhere", owner_references=[owner])),
    ):
        ns = other.metadata.namespace
        assert is_for_pod(pod, other) == f"ResourceClaim {ns}/c was not created for pod default/p (pod is not owner)"
    consumer = ResourceClaimConsumerReference(resource="pods", name="p", uid="u-1")
    reserved = ResourceClaim(status=ResourceClaimStatus(reserved_for=[consumer]))
    assert is_reserved_for_pod(pod, reserved)
    full = ResourceClaim(
        status=ResourceClaimStatus(
            reserved_for=[ResourceClaimConsumerReference(resource="pods", name=f"p{i}", uid=str(i)) for i in range(256)]
        )
    )
    assert can_be_reserved(reserved)
    assert not can_be_reserved(full)


def test_an_entry_with_neither_source_is_unsupported() -> None:
    with pytest.raises(ApiUnsupported, match=r'pod "default/p", spec\.resourceClaim "x": API unsupported'):
        claim_name(_pod([]), PodResourceClaim(name="x"))
