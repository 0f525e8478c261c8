"""How a pod names its ResourceClaims, and who may use a claim: upstream's
``k8s.io/dynamic-resource-allocation/resourceclaim`` (``Name``, ``IsForPod``,
``IsReservedForPod``, ``CanBeReserved``), shared by the resourceclaim controller, the
scheduler's DynamicResources plugin and the kubelet.

==============================  ==============================================================
name                            what
==============================  ==============================================================
``RESERVED_FOR_MAX_SIZE``       256 consumers at most in ``status.reservedFor``
``claim_name``                  (claim name or None, must-check-owner) of a pod's claim entry
``is_for_pod``                  '' when the pod controls the claim, else upstream's error
``generate_name``               the controller's ``generateName`` for a template's claim
``is_pod_done``                 terminal, or deleted before it was scheduled
==============================  ==============================================================

The annotation ``resource.kubernetes.io/pod-claim-name`` and the finalizer
``resource.kubernetes.io/delete-protection`` are ``emulator.base.api.resource``'s
(``POD_CLAIM_NAME_ANNOTATION``, ``FINALIZER``).

Pure functions over API objects; nothing here reads the store or writes.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "RESERVED_FOR_MAX_SIZE",
    "ApiUnsupported",
    "ClaimNotCreated",
    "can_be_reserved",
    "claim_name",
    "generate_name",
    "is_for_pod",
    "is_pod_done",
    "is_reserved_for_pod",
    "owning_pod",
    "pod_claim_keys",
]

RESERVED_FOR_MAX_SIZE: Final = 256
"""Upstream ``ResourceClaimReservedForMaxSize``."""
MAX_GENERATE_NAME_BASE: Final = 57
"""Upstream's ``maxBaseLen``: room for a hyphen and five random characters in 63."""
_TERMINAL: Final = ("Succeeded", "Failed")


class ClaimNotCreated(LookupError):
    """Upstream ``ErrClaimNotFound``: the template's claim is not in the pod status yet."""


class ApiUnsupported(ValueError):
    """Upstream ``ErrAPIUnsupported``: a claim entry with neither source."""


def claim_name(pod: Any, pod_claim: Any) -> tuple[str | None, bool]:
    """Upstream ``resourceclaim.Name``: the claim a ``spec.resourceClaims`` entry stands for
    and whether its owner must be checked (a generated claim). ``None``: the template's claim
    was found not needed (recorded without a name). Raises ``ClaimNotCreated`` /
    ``ApiUnsupported`` with upstream's messages."""
    ns, name = pod.metadata.namespace, pod.metadata.name
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name, False
    if pod_claim.resource_claim_template_name is not None:
        for status in pod.status.resource_claim_statuses:
            if status.name == pod_claim.name:
                return status.resource_claim_name, True
        raise ClaimNotCreated(f'pod "{ns}/{name}": ResourceClaim not created yet')
    raise ApiUnsupported(f'pod "{ns}/{name}", spec.resourceClaim "{pod_claim.name}": API unsupported')


def _controller_uid(obj: Any) -> str | None:
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return str(ref.uid)
    return None


def is_for_pod(pod: Any, claim: Any) -> str:
    """Upstream ``IsForPod``: '' when the pod controls the claim, else the error."""
    if claim.metadata.namespace != pod.metadata.namespace or _controller_uid(claim) != pod.metadata.uid:
        c, p = claim.metadata, pod.metadata
        return f"ResourceClaim {c.namespace}/{c.name} was not created for pod {p.namespace}/{p.name} (pod is not owner)"
    return ""


def is_reserved_for_pod(pod: Any, claim: Any) -> bool:
    return any(r.uid == pod.metadata.uid for r in claim.status.reserved_for)


def can_be_reserved(claim: Any) -> bool:
    return len(claim.status.reserved_for) < RESERVED_FOR_MAX_SIZE


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The controller's ``generateName`` for the claim of ``pod_claim_name``:
    ``<pod>-<claim>-``; over 57 characters both parts are cut in proportion to their
    lengths and joined by one hyphen (no trailing one, as upstream writes it)."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= MAX_GENERATE_NAME_BASE:
        return base
    n = len(base)
    return (
        pod_name[: len(pod_name) * MAX_GENERATE_NAME_BASE // n]
        + "-"
        + pod_claim_name[: len(pod_claim_name) * MAX_GENERATE_NAME_BASE // n]
    )


def is_pod_done(pod: Any) -> bool:
    """Upstream ``isPodDone``: terminal, or deleted before it was scheduled."""
    return pod.status.phase in _TERMINAL or (pod.metadata.deletion_timestamp is not None and not pod.spec.node_name)


def owning_pod(claim: Any) -> tuple[str, str]:
    """Upstream ``owningPod``: (name, uid) of the pod controlling the claim, or ('', '')."""
    for ref in claim.metadata.owner_references:
        if ref.controller and ref.api_version == "v1" and ref.kind == "Pod":
            return ref.name, ref.uid
    return "", ""


def pod_claim_keys(pod: Any) -> list[str]:
    """Upstream ``podResourceClaimIndexFunc``: ``<namespace>/<claim>`` of each claim the pod
    names now (entries whose claim is not known yet are left out)."""
    keys: list[str] = []
    for pod_claim in pod.spec.resource_claims:
        try:
            name, _ = claim_name(pod, pod_claim)
        except (ClaimNotCreated, ApiUnsupported):
            continue
        if name is not None:
            keys.append(f"{pod.metadata.namespace}/{name}")
    return keys
