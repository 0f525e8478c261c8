"""A pod's claims as the plugin finds them (the plugin's ``foreachPodResourceClaim``, v1.34, over
``emulator.base.api.resourceclaim``: upstream's ``resourceclaim.Name``, ``IsForPod``,
``IsReservedForPod``, ``CanBeReserved``), and the conversion of the allocator's results into API
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
from typing import Any

from emulator.base.api import resourceclaim
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
    "can_be_reserved",
    "consumer_ref",
    "is_reserved_for_pod",
    "pod_claims",
    "to_allocation_result",
]


class ClaimProblem(Exception):
    """Why a pod's claims are not usable yet (its text is upstream's error)."""


def pod_claims(pod: Pod, get_claim: Callable[[str, str], Any | None]) -> list[Any]:
    """The pod's claims in ``spec.resourceClaims`` order; raises ``ClaimProblem``."""
    ns, name = pod.metadata.namespace, pod.metadata.name
    out = []
    for ref in pod.spec.resource_claims:
        if ref.resource_claim_name is None and ref.resource_claim_template_name is None:
            raise ClaimProblem(f'pod "{ns}/{name}", spec.resourceClaim "{ref.name}": unknown API type')
        try:
            claim_name, must_check_owner = resourceclaim.claim_name(pod, ref)
        except resourceclaim.ClaimNotCreated as err:
            raise ClaimProblem(str(err)) from None
        if claim_name is None:
            continue
        claim = get_claim(ns, claim_name)
        if claim is None:
            raise ClaimProblem(f'resourceclaim.resource.k8s.io "{claim_name}" not found')
        if claim.metadata.deletion_timestamp is not None:
            raise ClaimProblem(f'resourceclaim "{claim.metadata.name}" is being deleted')
        if must_check_owner and (problem := resourceclaim.is_for_pod(pod, claim)):
            raise ClaimProblem(problem)
        out.append(claim)
    return out


is_reserved_for_pod = resourceclaim.is_reserved_for_pod
can_be_reserved = resourceclaim.can_be_reserved


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
