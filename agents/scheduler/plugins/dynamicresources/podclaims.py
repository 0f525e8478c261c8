"""A pod's claims as the plugin finds them (upstream ``dynamic-resource-allocation/resourceclaim``
``Name``, ``IsForPod``, ``IsReservedForPod``, ``CanBeReserved`` and the plugin's
``foreachPodResourceClaim``, v1.34), and the conversion of the allocator's results into API
``AllocationResult``s.

``pod_claims`` returns the claims in ``spec.resourceClaims`` order, or the first reason the
pod cannot be scheduled yet — upstream's error texts, which become PreEnqueue's and
PreFilter's UnschedulableAndUnresolvable reasons:

=====================================  ==========================================================
situation                              reason
=====================================  ==========================================================
template claim not created yet         ``pod "ns/p": ResourceClaim not created yet``
(no ``status.resourceClaimStatuses``
entry)
entry with no claim name               the claim is skipped (not needed on this pod)
claim missing from the informer        ``resourceclaim.resource.k8s.io "c" not found``
claim being deleted                    ``resourceclaim "c" is being deleted``
template claim not owned by the pod    ``ResourceClaim ns/c was not created for pod ns/p (pod is
                                       not owner)``
neither name nor template              ``pod "ns/p", spec.resourceClaim "r": unknown API type``
=====================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.core import Pod
from emulator.base.api.quantity import Quantity
from emulator.base.api.resource import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaimConsumerReference,
)

from .allocator_types import ClaimAllocation

__all__ = [
    "RESERVED_FOR_MAX_SIZE",
    "can_be_reserved",
    "consumer_ref",
    "is_reserved_for_pod",
    "pod_claims",
    "to_allocation_result",
]

RESERVED_FOR_MAX_SIZE: Final = 256
"""Upstream ``ResourceClaimReservedForMaxSize``."""


class ClaimProblem(Exception):
    """Why a pod's claims are not usable yet (its text is upstream's error)."""


def pod_claims(pod: Pod, get_claim: Callable[[str, str], Any | None]) -> list[Any]:
    """The pod's claims in ``spec.resourceClaims`` order; raises ``ClaimProblem``."""
    ns, name = pod.metadata.namespace, pod.metadata.name
    out = []
    for ref in pod.spec.resource_claims:
        must_check_owner = False
        if ref.resource_claim_name is not None:
            claim_name: str | None = ref.resource_claim_name
        elif ref.resource_claim_template_name is not None:
            for status in pod.status.resource_claim_statuses:
                if status.name == ref.name:
                    claim_name = status.resource_claim_name
                    must_check_owner = True
                    break
            else:
                raise ClaimProblem(f'pod "{ns}/{name}": ResourceClaim not created yet')
        else:
            raise ClaimProblem(f'pod "{ns}/{name}", spec.resourceClaim "{ref.name}": unknown API type')
        if claim_name is None:
            continue
        claim = get_claim(ns, claim_name)
        if claim is None:
            raise ClaimProblem(f'resourceclaim.resource.k8s.io "{claim_name}" not found')
        if claim.metadata.deletion_timestamp is not None:
            raise ClaimProblem(f'resourceclaim "{claim.metadata.name}" is being deleted')
        if must_check_owner and not any(
            o.uid == pod.metadata.uid and o.controller for o in claim.metadata.owner_references
        ):
            raise ClaimProblem(
                f"ResourceClaim {ns}/{claim.metadata.name} was not created for pod {ns}/{name} (pod is not owner)"
            )
        out.append(claim)
    return out


def is_reserved_for_pod(pod: Pod, claim: Any) -> bool:
    uid = pod.metadata.uid
    return any(r.uid == uid for r in claim.status.reserved_for)


def can_be_reserved(claim: Any) -> bool:
    return len(claim.status.reserved_for) < RESERVED_FOR_MAX_SIZE


def consumer_ref(pod: Pod) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name, uid=pod.metadata.uid)


def to_allocation_result(a: ClaimAllocation) -> AllocationResult:
    """The API form of one claim's allocation."""
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=[
                DeviceRequestAllocationResult(
                    request=d.request,
                    driver=d.id.driver,
                    pool=d.id.pool,
                    device=d.id.device,
                    admin_access=d.admin_access,
                    tolerations=list(d.tolerations),
                    binding_conditions=list(d.binding_conditions),
                    binding_failure_conditions=list(d.binding_failure_conditions),
                    share_id=d.share_id,
                    consumed_capacity={k: Quantity.from_milli(v) for k, v in (d.consumed_capacity or {}).items()},
                )
                for d in a.devices
            ],
            config=[
                DeviceAllocationConfiguration(source=c.source, requests=list(c.requests), opaque=c.configuration)
                for c in a.config
            ],
        ),
        node_selector=a.node_selector,
    )
