"""Adoption and release of owned objects: upstream's ``ControllerRefManager``
(``pkg/controller/controller_ref_manager.go``), shared by the ReplicaSet controller (which
claims pods) and the Deployment controller (which claims ReplicaSets).

``claim_action`` is upstream's ``ClaimObject`` decision as a pure function:

=====================================  ===========================  ===========
object                                 owner / selector             action
=====================================  ===========================  ===========
controlled by another owner            any                          ``ignore``
controlled by this owner               selector matches             ``keep``
controlled by this owner               no match, owner alive        ``release``
controlled by this owner               no match, owner deleting     ``ignore``
orphan                                 owner deleting or no match   ``ignore``
orphan, being deleted                  match                        ``ignore``
orphan                                 match                        ``adopt``
=====================================  ===========================  ===========

``adopt`` and ``release`` write the ownerReferences through the controller's client, as
upstream's patches do: the object is read fresh and updated with a UID precondition,
retried on conflict. An object gone meanwhile is not an error (upstream ignores NotFound).
Before its first adoption a sync re-reads its owner (upstream's ``canAdopt``
``RecheckDeletionTimestamp``): an owner deleted meanwhile adopts nothing.

It does not own which objects a controller considers (its indexes) nor what it does with
the claimed ones.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec.structs import replace

from agents.controllers.controllerutils import controller_ref, owner_ref
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.client.client import Client
from emulator.base.client.retry import Backoff, retry_on_conflict

__all__ = ["ClaimAction", "OwnerGone", "adopt", "can_adopt", "claim_action", "release"]

ClaimAction = Literal["keep", "adopt", "release", "ignore"]

_RETRY = Backoff(steps=5, duration=0.010, factor=1.0)
"""client-go's ``DefaultRetry`` without its jitter (a patch retries a conflict at once upstream)."""


class OwnerGone(ApiError):
    """The owner was deleted (or replaced) since it was cached: adopt nothing."""


def claim_action(obj: Any, owner: Any, matches: bool) -> ClaimAction:
    """Upstream ``ClaimObject``'s decision for ``obj`` (``matches``: the owner's selector
    selects ``obj``'s labels)."""
    ref = controller_ref(obj)
    owner_deleting = owner.metadata.deletion_timestamp is not None
    if ref is not None:
        if ref.uid != owner.metadata.uid:
            return "ignore"
        if matches:
            return "keep"
        return "ignore" if owner_deleting else "release"
    if owner_deleting or not matches or obj.metadata.deletion_timestamp is not None:
        return "ignore"
    if obj.metadata.namespace != owner.metadata.namespace:
        return "ignore"
    return "adopt"


async def can_adopt(client: Client, owner: Any) -> None:
    """Upstream ``RecheckDeletionTimestamp``: raise ``OwnerGone`` unless ``owner`` (read
    fresh) is the same object and not being deleted."""
    meta = owner.metadata
    try:
        fresh = await client.get(owner.kind, meta.name, meta.namespace)
    except NotFound:
        raise OwnerGone(f"{owner.kind} {meta.namespace}/{meta.name} has just been deleted") from None
    if fresh.metadata.uid != meta.uid:
        raise OwnerGone(
            f"original {owner.kind} {meta.namespace}/{meta.name} is gone: got uid {fresh.metadata.uid}, "
            f"wanted {meta.uid}"
        )
    if fresh.metadata.deletion_timestamp is not None:
        raise OwnerGone(
            f"{owner.kind} {meta.namespace}/{meta.name} has just been deleted at {fresh.metadata.deletion_timestamp}"
        )


async def _rewrite_refs(client: Client, obj: Any, *, adopt_by: Any | None, release_uid: str) -> Any | None:
    """Read ``obj`` fresh, change its ownerReferences, write it (retried on conflict).
    None when it is gone, or when the change no longer applies."""
    meta = obj.metadata

    async def attempt() -> Any | None:
        try:
            current = await client.get(obj.kind, meta.name, meta.namespace)
        except NotFound:
            return None
        if current.metadata.uid != meta.uid:
            return None
        refs = list(current.metadata.owner_references)
        if adopt_by is not None:
            if controller_ref(current) is not None:
                return None  # someone else got there first
            refs.append(owner_ref(adopt_by))
        else:
            kept = [r for r in refs if r.uid != release_uid]
            if len(kept) == len(refs):
                return None
            refs = kept
        try:
            return await client.update(replace(current, metadata=replace(current.metadata, owner_references=refs)))
        except NotFound:
            return None

    return await retry_on_conflict(_RETRY, attempt, clock=client.clock)


async def adopt(client: Client, obj: Any, owner: Any) -> Any | None:
    """Make ``owner`` the controller of ``obj``; the updated object, or None if it is gone
    or now controlled by someone else."""
    return await _rewrite_refs(client, obj, adopt_by=owner, release_uid="")


async def release(client: Client, obj: Any, owner: Any) -> Any | None:
    """Remove ``owner``'s reference from ``obj``; the updated object, or None if gone."""
    return await _rewrite_refs(client, obj, adopt_by=None, release_uid=owner.metadata.uid)
