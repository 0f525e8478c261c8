"""The StatefulSet controller's claim writes (upstream ``stateful_pod_control.go``):
``create_claims`` before a replica's pod (``createPersistentVolumeClaims``) and
``update_claim_owners`` (``UpdatePodClaimForRetentionPolicy``).

Claims are read from the shared PersistentVolumeClaim informer, opened by the controller with
the first set that has ``volumeClaimTemplates`` (a run without one never watches claims).
Events, upstream's ``recordClaimEvent``: ``SuccessfulCreate`` "create Claim data-db-0 Pod db-0
in StatefulSet db success", ``FailedCreate`` "create Claim ... for Pod ... in StatefulSet ...
failed error: ...", and ``ConflictingController`` when another controller owns a claim the
retention policy would own.
"""

from __future__ import annotations

from msgspec.structs import replace

from agents.controllers.statefulset.claims import (
    claim_owner_up_to_date,
    claims_for,
    has_unexpected_controller,
    owner_refs_for,
)
from agents.controllers.statefulset.identity import ordinal_of
from emulator.base.api.apps import StatefulSet
from emulator.base.api.core import Pod
from emulator.base.api.errors import AlreadyExists, ApiError
from emulator.base.api.meta import ObjectReference
from emulator.base.api.storage import PersistentVolumeClaim
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer

__all__ = ["create_claims", "update_claim_owners"]


def _ref(sts: StatefulSet) -> ObjectReference:
    return ObjectReference(
        api_version=sts.api_version,
        kind="StatefulSet",
        namespace=sts.metadata.namespace,
        name=sts.metadata.name,
        uid=sts.metadata.uid,
    )


async def create_claims(
    client: Client, recorder: EventRecorder, claims: Informer, sts: StatefulSet, pod: Pod
) -> tuple[dict[str, PersistentVolumeClaim], int]:
    """Create the pod's missing claims; returns the claims by name (cached or created) and
    how many were created.
    Raises the first error once every claim was tried, as upstream's aggregate."""
    ordinal = ordinal_of(sts.metadata.name, pod.metadata.name)
    seen: dict[str, PersistentVolumeClaim] = {}
    first: ApiError | None = None
    made = 0
    for _, claim in claims_for(sts, ordinal):
        name = claim.metadata.name
        cached: PersistentVolumeClaim | None = claims.store.get((sts.metadata.namespace, name))
        if cached is not None:
            seen[name] = cached
            if cached.metadata.deletion_timestamp is not None and first is None:
                first = ApiError(f"pvc {name} is being deleted")
            continue
        try:
            seen[name] = await client.create(claim)
            made += 1
        except AlreadyExists as err:
            first = first or err
            continue
        except ApiError as err:
            first = first or err
            msg = (
                f"create Claim {name} for Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} "
                f"failed error: {err}"
            )
            await recorder.event(_ref(sts), "Warning", "FailedCreate", msg)
            continue
        msg = f"create Claim {name} Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} success"
        await recorder.event(_ref(sts), "Normal", "SuccessfulCreate", msg)
    if first is not None:
        raise first
    return seen, made


async def update_claim_owners(
    client: Client,
    recorder: EventRecorder,
    claims: Informer,
    sts: StatefulSet,
    pod: Pod,
    known: dict[str, PersistentVolumeClaim] | None = None,
) -> int:
    """Set the owner references the retention policy asks for on the pod's claims; returns
    how many claims were updated. A claim not there yet is picked up by a later sync."""
    updated = 0
    ordinal = ordinal_of(sts.metadata.name, pod.metadata.name)
    for _, template_claim in claims_for(sts, ordinal):
        name = template_claim.metadata.name
        claim: PersistentVolumeClaim | None = claims.store.get((sts.metadata.namespace, name))
        if claim is None and known is not None:
            claim = known.get(name)
        if claim is None:
            continue
        if has_unexpected_controller(claim, sts, pod):
            msg = (
                f"PersistentVolumeClaim {name} has a conflicting OwnerReference that acts as a manging "
                "controller, the retention policy is ignored for this claim"
            )
            await recorder.event(_ref(sts), "Warning", "ConflictingController", msg)
        elif not claim_owner_up_to_date(claim, sts, pod):
            refs = owner_refs_for(claim, sts, pod)
            await client.update(replace(claim, metadata=replace(claim.metadata, owner_references=refs)))
            updated += 1
    return updated
