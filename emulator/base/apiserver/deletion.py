"""Deletion options, finalizers and the garbage collector's propagation finalizers: the
pure rules the API server's ``delete`` and ``update`` apply, as upstream's generic
registry store (``Store.Delete``, ``updateForGracefulDeletionAndFinalizers``,
``deletionFinalizersForGarbageCollection``, ``markAsDeleting``,
``ShouldDeleteDuringUpdate``) and ``ValidateObjectMetaUpdate`` apply them.

Owns: checking ``DeleteOptions`` (``propagationPolicy``, the ``uid`` and
``resourceVersion`` preconditions); what a delete leaves of an object (``left_by_delete``:
nothing, the object unchanged, or the object marked, with a graceful deletion's timing,
``deletion_time``); which finalizers a delete leaves on an object; marking
an object as being deleted; when an update that empties ``finalizers`` removes the object;
refusing new finalizers on a terminating object and the ``orphan`` + ``foregroundDeletion``
pair; the shape of ``ownerReferences`` (``ValidateOwnerReferences``), on every kind.
Does not own: the store, revisions and events (``server``: ``ApiServer.plan_delete`` reads
the object and checks the options, ``delete`` writes what this module decides), or acting on
the finalizers (the garbage collector,
``agents.controllers.garbagecollector``).

=====================  =====================================================================
delete of an object    result
=====================  =====================================================================
pod, graceful          ``deletionTimestamp`` = now + grace; finalizers per the policy; kept
                       until the kubelet confirms with grace 0 (as before)
pending graceful pod   unchanged (upstream: finalizers cannot change once graceful deletion
                       is pending)
finalizers after the   ``deletionTimestamp`` (kept if set), ``deletionGracePeriodSeconds`` 0,
policy is applied      ``generation`` + 1 on the first mark; the object stays (an unchanged
                       second delete writes nothing)
no finalizers          removed (DELETED)
=====================  =====================================================================

Propagation: ``Orphan`` adds ``orphan``, ``Foreground`` adds ``foregroundDeletion``,
``Background`` removes both; none given keeps whichever the object already carries, else
the kind's default (``DefaultGarbageCollectionPolicy``): ``Orphan`` for ``batch/v1`` Jobs
(upstream keeps Job pods by default for backward compatibility; kubectl and the scenario
runner send ``Background`` explicitly), ``Background`` for every other kind.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.codec import KINDS
from emulator.base.api.errors import Conflict, Invalid
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.runtime.clock import Clock, parse_timestamp

__all__ = [
    "FINALIZER_DELETE_DEPENDENTS",
    "FINALIZER_ORPHAN_DEPENDENTS",
    "PROPAGATION_POLICIES",
    "check_delete_options",
    "check_finalizers",
    "check_owner_references",
    "check_preconditions",
    "default_policy",
    "deletion_time",
    "finalizers_for_deletion",
    "left_by_delete",
    "mark_deleting",
    "marked_before_removal",
    "should_delete_during_update",
]

FINALIZER_ORPHAN_DEPENDENTS: Final = "orphan"
FINALIZER_DELETE_DEPENDENTS: Final = "foregroundDeletion"
PROPAGATION_POLICIES: Final = ("Foreground", "Background", "Orphan")
_GC_FINALIZERS: Final = (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS)
_GROUPS: Final = {kind: api_version.rpartition("/")[0] for api_version, kind in KINDS}
_ORPHAN_BY_DEFAULT: Final = frozenset({"Job"})
"""Kinds whose ``DefaultGarbageCollectionPolicy`` is ``OrphanDependents`` in the version
served (``batch/v1`` Job)."""


def default_policy(kind: str) -> str:
    return "Orphan" if kind in _ORPHAN_BY_DEFAULT else "Background"


def check_delete_options(propagation_policy: str | None, *, orphan_dependents: bool | None = None) -> None:
    """``ValidateDeleteOptions``: refused before the object is even read (upstream's
    ``DeleteResource`` and ``DeleteCollection`` handlers validate the decoded options first):
    ``orphanDependents`` and ``propagationPolicy`` both set, a ``propagationPolicy`` not one of
    ``PROPAGATION_POLICIES``; every problem in one Invalid. (``dryRun``: the HTTP layer's
    ``check_dry_run``.)"""
    if propagation_policy is None:
        return
    problems: list[str] = []
    if orphan_dependents is not None:
        problems.append(
            f'Invalid value: "{propagation_policy}": orphanDependents and deletionPropagation cannot be both set'
        )
    if propagation_policy not in PROPAGATION_POLICIES:
        problems.append(
            f'Unsupported value: "{propagation_policy}": supported values: "Foreground", "Background", "Orphan", "nil"'
        )
    if not problems:
        return
    shown = (
        f"propagationPolicy: {problems[0]}"
        if len(problems) == 1
        else f"[{', '.join(f'propagationPolicy: {p}' for p in problems)}]"
    )
    raise Invalid(
        f'DeleteOptions.meta.k8s.io "" is invalid: {shown}',
        field="propagationPolicy",
        kind="DeleteOptions",
        detail=problems[0],
    )


def _qualified_kind(kind: str) -> str:
    group = _GROUPS.get(kind, "")
    return f"{kind}.{group}" if group else kind


def check_preconditions(kind: str, current: Any, *, uid: str, resource_version: str) -> None:
    """The delete preconditions (Conflict when one does not hold). The uid message is the
    storage layer's, as this server always gave it; the resourceVersion one is
    ``BeforeDelete``'s."""
    meta: ObjectMeta = current.metadata
    if uid and uid != meta.uid:
        raise Conflict.uid_precondition(uid, meta.uid)
    if resource_version and resource_version != meta.resource_version:
        raise Conflict(
            f'Operation cannot be fulfilled on {_qualified_kind(kind)} "{meta.name}": the ResourceVersion in the '
            f"precondition ({resource_version}) does not match the ResourceVersion in record "
            f"({meta.resource_version}). The object might have been modified"
        )


def finalizers_for_deletion(kind: str, finalizers: list[str], policy: str | None) -> list[str]:
    """``deletionFinalizersForGarbageCollection``: ``finalizers`` with ``orphan`` and
    ``foregroundDeletion`` set as the policy (or the object, or the kind's default) says;
    the same list object when nothing changes."""
    if policy is None:
        if FINALIZER_ORPHAN_DEPENDENTS in finalizers:
            policy = "Orphan"
        elif FINALIZER_DELETE_DEPENDENTS in finalizers:
            policy = "Foreground"
        else:
            policy = default_policy(kind)
    wanted = [f for f in finalizers if f not in _GC_FINALIZERS]
    if policy == "Orphan":
        wanted.append(FINALIZER_ORPHAN_DEPENDENTS)
    elif policy == "Foreground":
        wanted.append(FINALIZER_DELETE_DEPENDENTS)
    return finalizers if set(wanted) == set(finalizers) else wanted


def left_by_delete(
    kind: str,
    current: Any,
    strategy: Any,
    grace: int,
    grace_period_seconds: int | None,
    policy: str | None,
    clock: Clock,
) -> Any:
    """What a delete of ``current`` (its options checked) leaves in the store: None when it
    removes the object at once, ``current`` itself when it writes nothing (a graceful deletion
    already pending, or an object already terminating as asked), else the object marked
    (``Store.Delete``: ``BeforeDelete``, then ``updateForGracefulDeletionAndFinalizers``).
    ``grace``: the strategy's ``graceful_delete`` answer for ``grace_period_seconds``;
    ``strategy``: the kind's (``held_on_delete``)."""
    meta: ObjectMeta = current.metadata
    if grace > 0:
        if meta.deletion_timestamp is not None and (
            grace_period_seconds is None or (meta.deletion_grace_period_seconds or 0) <= grace
        ):
            return current  # graceful deletion pending: only an explicit shorter grace changes it
        when, grace = deletion_time(meta, grace, clock)
        generation = meta.generation + 1 if meta.generation > 0 and meta.deletion_timestamp is None else meta.generation
        finalizers = finalizers_for_deletion(kind, meta.finalizers, policy)
        return replace(
            current,
            metadata=replace(
                meta,
                deletion_timestamp=when,
                deletion_grace_period_seconds=grace,
                generation=generation,
                finalizers=finalizers,
            ),
        )
    finalizers = finalizers_for_deletion(kind, meta.finalizers, policy)
    held = strategy.held_on_delete(current)
    if finalizers or held is not None:
        base = current if held is None else held
        marked = replace(base, metadata=mark_deleting(meta, finalizers, clock.timestamp()))
        return current if marked == current else marked  # already terminating as asked: nothing to write
    return None


def deletion_time(meta: ObjectMeta, grace: int, clock: Clock) -> tuple[str, int]:
    """(deletionTimestamp, deletionGracePeriodSeconds): now + grace; a shorter grace on a
    terminating object moves the deadline earlier from the original one, never into the
    past — then the grace becomes 1 s (upstream ``BeforeDelete``)."""
    now = clock.now()
    if meta.deletion_timestamp is not None and meta.deletion_grace_period_seconds is not None:
        start = parse_timestamp(meta.deletion_timestamp) - meta.deletion_grace_period_seconds
        if start + grace < now:
            return clock.timestamp(now), 1
        return clock.timestamp(start + grace), grace
    return clock.timestamp(now + grace), grace


def marked_before_removal(current: Any, clock: Clock) -> Any:
    """What a delete at grace 0 of an object of a kind with graceful deletion (a pod) writes
    before it removes the object, which a dry run answers (upstream ``BeforeDelete``: the pod
    strategy's ``CheckGracefulDelete`` always answers true, so the object is marked
    ``deletionTimestamp`` now, ``deletionGracePeriodSeconds`` 0, ``generation`` + 1 on the first
    mark; a shorter grace on a terminating object moves its deadline to its start, never into
    the past, the generation kept; ``Store.Delete`` answers that object for a dry run). An
    object already terminating with no grace left is not marked again (``current``)."""
    meta: ObjectMeta = current.metadata
    if meta.deletion_timestamp is None:
        now = clock.timestamp()
        generation = meta.generation + 1 if meta.generation > 0 else meta.generation
    elif meta.deletion_grace_period_seconds:
        start = parse_timestamp(meta.deletion_timestamp) - meta.deletion_grace_period_seconds
        now, generation = clock.timestamp(max(start, clock.now())), meta.generation
    else:
        return current
    marked = replace(meta, deletion_timestamp=now, deletion_grace_period_seconds=0, generation=generation)
    return replace(current, metadata=replace(marked, finalizers=[]) if marked.finalizers else marked)


def mark_deleting(meta: ObjectMeta, finalizers: list[str], now: str) -> ObjectMeta:
    """``markAsDeleting`` for an object kept by its finalizers: the first mark bumps a
    positive generation; an existing ``deletionTimestamp`` stays; the grace period is 0."""
    first = meta.deletion_timestamp is None
    return replace(
        meta,
        finalizers=finalizers,
        deletion_timestamp=now if first else meta.deletion_timestamp,
        deletion_grace_period_seconds=0,
        generation=meta.generation + 1 if first and meta.generation > 0 else meta.generation,
    )


def should_delete_during_update(old: ObjectMeta, new: ObjectMeta) -> bool:
    """``ShouldDeleteDuringUpdate``: the update empties the finalizers of an object being
    deleted with no grace period left (a gracefully terminating pod still waits for its
    kubelet)."""
    return (
        not new.finalizers
        and old.deletion_timestamp is not None
        and (old.deletion_grace_period_seconds is None or old.deletion_grace_period_seconds == 0)
    )


def check_finalizers(kind: str, name: str, finalizers: list[str], old: ObjectMeta | None = None) -> None:
    """``ValidateFinalizers`` (both GC finalizers at once is refused) and, on an update of a
    terminating object, ``ValidateNoNewFinalizers``."""
    if FINALIZER_ORPHAN_DEPENDENTS in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        shown = ", ".join(f'"{f}"' for f in finalizers)
        raise Invalid.at(
            kind,
            name,
            "metadata.finalizers",
            f"Invalid value: []string{{{shown}}}: finalizer {FINALIZER_ORPHAN_DEPENDENTS} and "
            f"{FINALIZER_DELETE_DEPENDENTS} cannot be both set",
        )
    if old is not None and old.deletion_timestamp is not None:
        extra = sorted(set(finalizers) - set(old.finalizers))
        if extra:
            shown = ", ".join(f'"{f}"' for f in extra)
            raise Invalid.at(
                kind,
                name,
                "metadata.finalizers",
                "Forbidden: no new finalizers can be added if the object is being deleted, "
                f"found new finalizers []string{{{shown}}}",
            )


def check_owner_references(kind: str, name: str, refs: list[OwnerReference]) -> None:
    """``ValidateOwnerReferences``: an apiVersion with a version, a kind, a name and a uid,
    and at most one reference with ``controller: true``. (Upstream prints the whole list as
    the value of the last error; this prints the two controllers' ``kind/name``.)"""
    path = "metadata.ownerReferences"
    first = ""
    for ref in refs:
        if not ref.api_version.rpartition("/")[2]:
            raise Invalid.at(
                kind, name, f"{path}.apiVersion", f'Invalid value: "{ref.api_version}": version must not be empty'
            )
        for sub, value in (("kind", ref.kind), ("name", ref.name), ("uid", ref.uid)):
            if not value:
                raise Invalid.at(kind, name, f"{path}.{sub}", f'Invalid value: "": {sub} must not be empty')
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first:
                raise Invalid.at(
                    kind,
                    name,
                    path,
                    f"Invalid value: [{first} {current}]: Only one reference can have Controller set to true. "
                    f'Found "true" in references for {first} and {current}',
                )
            first = current
