"""Which ResourceClaim a pod's claim entry means, and whether a claim is the pod's (upstream
``k8s.io/dynamic-resource-allocation/resourceclaim``, v1.34: ``Name``, ``IsForPod``,
``IsReservedForPod``, ``CanBeReserved``), for the scheduler's DynamicResources plugin, the
resourceclaim controller and the kubelet alike.

``claim_name``: an entry with ``resourceClaimName`` names that claim; one with
``resourceClaimTemplateName`` names the claim the resourceclaim controller made for it, found in
the pod's ``status.resourceClaimStatuses`` (an entry there without a name: no claim is needed,
None); before the controller recorded it, ``ClaimNotCreated`` (upstream ``ErrClaimNotFound``).
A claim made from a template must be checked with ``is_for_pod`` before use (``must_check_owner``).
"""

from __future__ import annotations

from typing import Final

from emulator.base.api.core import Pod, PodResourceClaim
from emulator.base.api.resource import ResourceClaim

__all__ = ["CLAIM_NOT_CREATED", "ClaimNotCreated", "can_be_reserved", "claim_name", "is_for_pod", "is_reserved_for_pod"]

CLAIM_NOT_CREATED: Final = "ResourceClaim not created yet"
"""Upstream ``ErrClaimNotFound``'s text."""
RESERVED_FOR_MAX_SIZE: Final = 256


class ClaimNotCreated(Exception):
    """The template's claim is not recorded in the pod's status yet."""


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """(the claim's name or None when none is needed, whether ``is_for_pod`` must be checked)."""
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name, False
    for status in pod.status.resource_claim_statuses:
        if status.name == pod_claim.name:
            return status.resource_claim_name, True
    raise ClaimNotCreated(f'pod "{pod.metadata.namespace}/{pod.metadata.name}": {CLAIM_NOT_CREATED}')


def is_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """The claim is owned (as controller) by the pod: its uid is among the claim's owners."""
    return any(ref.uid == pod.metadata.uid for ref in claim.metadata.owner_references)


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    return any(ref.uid == pod.metadata.uid for ref in claim.status.reserved_for)


def can_be_reserved(claim: ResourceClaim) -> bool:
    """Room for one more consumer (upstream ``ResourceClaimReservedForMaxSize``, 256)."""
    return len(claim.status.reserved_for) < RESERVED_FOR_MAX_SIZE
