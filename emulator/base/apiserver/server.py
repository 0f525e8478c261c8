"""The verbs of the API server, the same steps for every kind, each asking the kind's strategy.

The store (``store``: objects, revision, history, watch hub, listeners, Event expiry) knows no
kind; each kind's rules are its strategy (``registry``: one module per kind or family). A verb
runs the steps below for every kind and asks the kind's strategy at the named hook; a rejected
write raises a typed ``ApiError`` before anything is changed: the store and the revision stay
as they were.

=============  =================================================================
verb           semantics (strategy hooks in brackets)
=============  =================================================================
create         scope, generateName, no resourceVersion; defaulting [prepare_for_create]
               and validation [validate]; finalizers and owner references; the
               namespace must exist; AlreadyExists; [check_create]; uid, timestamps,
               generation 1 [generation_on_create]; [complete_create]
update         optimistic concurrency on resourceVersion (Conflict) and uid; the
               client's labels, annotations, owner references and finalizers on the
               stored metadata; [prepare_for_update]; status kept as stored;
               [validate_update] (a pod's spec: only images, tolerations added,
               scheduling gates removed); a spec change bumps metadata.generation [generation_on_update]; no
               new finalizers on a terminating object; emptying the finalizers of an
               object marked with grace 0 removes it (``deletion``)
renew_lease(s) the Lease fast path: ``update`` of the stored Leases' specs, the steps
               that are no-ops then skipped, a batch in one pass (``renewable``);
               with the standing renewals, ``leases.LeaseStore``'s, ``ApiServer``'s base
update_status  optimistic concurrency; [prepare_for_status_update]: status only;
               [validate_status_update] (Pods: the same steps written out)
(unchanged)    an update or update_status whose object equals the stored one is not
               written (``Store._unchanged``)
delete         preconditions uid / resourceVersion (Conflict); propagationPolicy
               sets the GC finalizers; [graceful_delete] > 0 (pods bound and running):
               deletionTimestamp set, object kept until the kubelet confirms with
               grace 0; otherwise removed at once unless finalizers remain, then only
               marked (``deletion``); answers the object as left, a removed one at
               the deletion's revision; ``dry_run``: the same checks, nothing written
               (``plan_delete``)
evict          pods/eviction: the rules of ``eviction`` (PDBs, 429); the PDB status
               write, then the pod's DisruptionTarget condition (verb ``evict``),
               then an ordinary delete
bind           pods/binding: NotFound if gone; the rules of ``registry.pods.bind_pod``
               (Conflict if already assigned or terminating); sets spec.nodeName and
               PodScheduled=True
=============  =================================================================
"""

from __future__ import annotations

import random
from typing import Any, Final, TypeVar, cast

import msgspec
from msgspec.structs import replace

from emulator.base.api.core import Binding, Pod
from emulator.base.api.errors import (
    AlreadyExists,
    Conflict,
    Forbidden,
    InternalError,
    Invalid,
    NotFound,
    resource_of,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import eviction
from emulator.base.apiserver.deletion import (
    check_delete_options,
    check_finalizers,
    check_owner_references,
    check_preconditions,
    finalizers_for_deletion,
    left_by_delete,
    marked_before_removal,
    should_delete_during_update,
)
from emulator.base.apiserver.leases import LeaseStore
from emulator.base.apiserver.metrics import ResourceMetrics
from emulator.base.apiserver.records import ServerSettings, Verb, WriteRecord
from emulator.base.apiserver.registry import CLUSTER_SCOPED, STRATEGIES, Strategy, bind_pod
from emulator.base.apiserver.registry.nodes import TERMINATING
from emulator.base.apiserver.registry.pods import PodStrategy
from emulator.base.apiserver.uids import fast_uid
from emulator.base.runtime.clock import Clock

__all__ = [
    "CLUSTER_SCOPED",
    "ApiServer",
    "ServerSettings",
    "Verb",
    "WriteRecord",
]

T = TypeVar("T", bound=msgspec.Struct)
_NAMESPACE: Final = "Namespace"


def _same_spec(candidate: Any, current: Any) -> bool:
    """A status write's candidate keeps current's spec: for every kind but Namespace (whose
    finalize write changes ``spec.finalizers``) it is current's own object, an identity test."""
    spec = getattr(candidate, "spec", None)
    return spec is getattr(current, "spec", None) or spec == current.spec


_STATUS_UNVALIDATED: Final = ("Pod",)
"""Kinds of which ``validation.validate_status_update`` reads nothing (it returns at once for a
Pod: pod validation reads no status field, and a status write keeps the valid metadata and spec)."""


def _plain_status_hooks(strategy: Any) -> bool:
    """The strategy keeps the base status hooks (``Strategy``): the candidate is the stored
    object with the written status, validated by ``validate_status_update``, never deleted."""
    cls = type(strategy)
    return (
        cls.prepare_for_status_update is Strategy.prepare_for_status_update
        and cls.validate_status_update is Strategy.validate_status_update
        and cls.status_update_deletes is Strategy.status_update_deletes
    )


class ApiServer(LeaseStore):
    """The verbs over the store, every kind's rules looked up in ``registry.STRATEGIES``."""

    def __init__(self, clock: Clock, rng: random.Random, settings: ServerSettings | None = None) -> None:
        super().__init__(clock, rng, settings, STRATEGIES)
        self.metrics = ResourceMetrics(self, clock)
        """The resource metrics API (``metrics.k8s.io``) over this store and a load model."""
        self._plain_status = frozenset(k for k in _STATUS_UNVALIDATED if _plain_status_hooks(self._strategies[k]))
        """Kinds whose status writes take ``update_status``'s written-out steps."""
        self._create_hooks = {
            kind: (
                type(s).check_create is not Strategy.check_create,
                type(s).complete_create is not Strategy.complete_create,
                type(s).prepare_for_create is not Strategy.prepare_for_create,
            )
            for kind, s in self._strategies.items()
        }
        """kind → whether its strategy has a ``check_create``, a ``complete_create``, a
        ``prepare_for_create`` of its own (the base hooks do nothing: ``create`` skips their
        calls; an Event's, one a churn pod)."""
        self._plain_deletes = frozenset(
            kind
            for kind, s in self._strategies.items()
            if type(s).held_on_delete is Strategy.held_on_delete and not finalizers_for_deletion(kind, [], None)
        )
        """Kinds whose objects, without finalizers and with no policy given, go at once on a
        delete at grace 0: the base ``held_on_delete`` (None) and a default policy that adds
        no finalizer (``finalizers_for_deletion`` itself asked, whatever the kind's default)."""

        self._graceful_kinds = frozenset(
            kind for kind, s in self._strategies.items() if type(s).graceful_delete is not Strategy.graceful_delete
        )
        """Kinds with graceful deletion (upstream's ``RESTGracefulDeleteStrategy``: pods)."""

    # --- verbs --------------------------------------------------------------------------

    def create(self, obj_in: T, *, restore: bool = False, dry_run: bool = False) -> T:
        """Create an object. ``restore=True`` seeds existing state (as an etcd restore would):
        the object's status is kept instead of reset; not reachable through a ``Client``.
        ``dry_run=True``: every check a create makes, and the prepared object, not stored."""
        obj: Any = obj_in
        kind: str = obj.kind
        table = self._objects.get(kind)
        if table is None:
            table = self._table(kind)  # raises NotFound
        strategy = self._strategies[kind]
        if strategy.create_refusal is not None:
            raise Invalid.at(kind, "", "kind", strategy.create_refusal)
        meta: ObjectMeta = obj.metadata
        if not strategy.namespaced:
            if meta.namespace:
                meta = replace(meta, namespace="")
        elif not meta.namespace:
            meta = replace(meta, namespace="default")
        if not meta.name and meta.generate_name:
            meta = replace(meta, name=meta.generate_name + self.name_suffix())
        if meta.resource_version:
            raise Invalid.at(
                kind,
                meta.name,
                "metadata.resourceVersion",
                "Forbidden: resourceVersion should not be set on objects to be created",
            )
        if meta is not obj.metadata:
            obj = replace(obj, metadata=meta)
        hooks = self._create_hooks[kind]
        if hooks[2]:
            obj = strategy.prepare_for_create(obj, restore=restore)
        strategy.validate(obj)
        meta = obj.metadata
        if meta.finalizers:
            check_finalizers(kind, meta.name, meta.finalizers)
        if meta.owner_references:
            check_owner_references(kind, meta.name, meta.owner_references)
        if strategy.namespaced:
            namespace = self._objects[_NAMESPACE].get(("", meta.namespace))
            if namespace is None:
                raise NotFound(f'namespaces "{meta.namespace}" not found')
            if namespace.status.phase == TERMINATING:
                # upstream's NamespaceLifecycle admission (plugin/pkg/admission/namespace/lifecycle)
                raise Forbidden(
                    f'{resource_of(kind)} "{meta.name}" is forbidden: unable to create new content in '
                    f"namespace {meta.namespace} because it is being terminated"
                )
        if (meta.namespace, meta.name) in table:
            raise AlreadyExists.of(kind, meta.name)
        if hooks[0]:
            strategy.check_create(obj)
        if dry_run:
            return cast(T, obj)
        meta = replace(
            meta,
            uid=fast_uid(self._rng),
            creation_timestamp=self.clock.timestamp(),
            deletion_timestamp=None,
            generation=1 if strategy.generation_on_create else meta.generation,
            resource_version=str(self._revision + 1),  # the revision _commit gives it
        )
        obj = replace(obj, metadata=meta)
        if hooks[1]:
            obj = strategy.complete_create(obj)
        created: T = self._commit("create", kind, None, obj, stamped=True)  # no ``cast`` frame
        return created

    def _current(self, obj: Any) -> tuple[str, Any]:
        kind: str = obj.kind
        meta: ObjectMeta = obj.metadata
        current = self.get(kind, meta.name, meta.namespace)
        if meta.resource_version and meta.resource_version != current.metadata.resource_version:
            raise Conflict.stale(kind, meta.name)
        if meta.uid and meta.uid != current.metadata.uid:
            raise Conflict.uid_precondition(meta.uid, current.metadata.uid)
        return kind, current

    def update(self, obj_in: T) -> T:
        """Replace metadata (labels, annotations...) and spec; status is kept as stored."""
        obj: Any = obj_in
        kind, current = self._current(obj)
        strategy = self._strategies[kind]
        meta: ObjectMeta = obj.metadata
        new_meta = replace(
            current.metadata,
            labels=meta.labels,
            annotations=meta.annotations,
            owner_references=meta.owner_references,
            finalizers=meta.finalizers,
        )
        if meta.finalizers or current.metadata.deletion_timestamp is not None:
            check_finalizers(kind, current.metadata.name, meta.finalizers, current.metadata)
        if meta.owner_references and meta.owner_references != current.metadata.owner_references:
            check_owner_references(kind, current.metadata.name, meta.owner_references)
        candidate = strategy.prepare_for_update(current, replace(obj, metadata=new_meta))
        if hasattr(current, "status"):
            candidate = replace(candidate, status=current.status)
        strategy.validate_update(current, candidate)
        if candidate == current:
            return cast(T, self._unchanged("update", kind, current))
        if should_delete_during_update(current.metadata, candidate.metadata):
            # the last finalizer is gone: the object goes (DELETED carries the stored object)
            return cast(T, self._commit("delete", kind, current, None))
        if strategy.generation_on_update and hasattr(current, "spec") and current.spec != candidate.spec:
            meta = candidate.metadata  # new_meta, or a Job's with its defaulted labels
            candidate = replace(candidate, metadata=replace(meta, generation=meta.generation + 1))
        return cast(T, self._commit("update", kind, current, candidate))

    def update_status(self, obj_in: T) -> T:
        """Replace the status (optimistic concurrency on resourceVersion and uid).

        For kinds whose strategy says nothing of status writes (the base hooks: the candidate
        is the stored object with ``obj``'s status, never deleted) and whose status validation
        reads no field a status write can change (Pods: ``validation.validate_status_update``),
        the steps are written out here: the read inlined, the same checks and answers in the
        same order, the candidate built with its revision (one copy fewer). Three writes a
        pod; ``tests/apiserver/test_write_fastpaths.py`` compares it with the general steps
        (``_update_status``)."""
        obj: Any = obj_in
        kind: str = obj.kind
        if kind not in self._plain_status or kind in self._read_hooks:
            return cast(T, self._update_status(obj))
        meta: ObjectMeta = obj.metadata
        name = meta.name
        current = self._objects[kind].get((meta.namespace or "default", name))
        if current is None:
            raise NotFound.of(kind, name)
        stored: ObjectMeta = current.metadata
        if meta.resource_version and meta.resource_version != stored.resource_version:
            raise Conflict.stale(kind, name)
        if meta.uid and meta.uid != stored.uid:
            raise Conflict.uid_precondition(meta.uid, stored.uid)
        status = obj.status
        if status == current.status:
            unchanged: T = self._unchanged("updateStatus", kind, current)
            return unchanged
        stamped = replace(stored, resource_version=str(self._revision + 1))  # the revision _commit gives it
        written: T = self._commit(
            "updateStatus", kind, current, replace(current, metadata=stamped, status=status), stamped=True
        )
        return written  # no ``cast`` frame

    def _update_status(self, obj: Any) -> Any:
        """``update_status`` through the strategy's hooks (every kind but the plain ones)."""
        kind, current = self._current(obj)
        if not hasattr(current, "status"):
            raise NotFound(f"the server could not find the requested resource ({resource_of(kind)}/status)")
        strategy = self._strategies[kind]
        candidate = strategy.prepare_for_status_update(current, obj)
        strategy.validate_status_update(current, candidate)
        if candidate.status == current.status and _same_spec(candidate, current):
            return self._unchanged("updateStatus", kind, current)
        if strategy.status_update_deletes(candidate):
            return self._commit("delete", kind, current, None)
        return self._commit("updateStatus", kind, current, candidate)

    def update_resize(self, obj_in: Pod) -> Pod:
        """``pods/<name>/resize``: the stored pod with the containers' resources (and resize
        policies) of ``obj_in``, nothing else of it (upstream ``podResizeStrategy``); a changed
        spec bumps the generation. The kubelet of the pod's node takes it from there."""
        kind, current = self._current(obj_in)
        if kind != "Pod":
            raise NotFound(f"the server could not find the requested resource ({resource_of(kind)}/resize)")
        strategy = cast(PodStrategy, self._strategies[kind])
        candidate = strategy.prepare_for_resize(current, obj_in)
        strategy.validate_resize(current, candidate)
        if candidate == current:
            return cast(Pod, self._unchanged("update", kind, current))
        meta = candidate.metadata
        candidate = replace(candidate, metadata=replace(meta, generation=meta.generation + 1))
        return cast(Pod, self._commit("update", kind, current, candidate))

    def plan_delete(
        self,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        grace_period_seconds: int | None = None,
        uid: str = "",
        propagation_policy: str | None = None,
        resource_version: str = "",
    ) -> tuple[Any, Any]:
        """``delete``'s checks and decision, writing nothing: (the stored object, what the
        delete leaves: None when it removes the object at once, the stored object itself when
        it writes nothing, else the object marked: ``deletion.left_by_delete``). Raises what
        ``delete`` raises: an invalid ``propagationPolicy`` (Invalid, before the read, as
        upstream's handler), NotFound, a precondition that does not hold (Conflict).

        An object without finalizers and no policy given, of a kind in ``_plain_deletes``, goes
        at grace 0 without asking ``finalizers_for_deletion`` and ``held_on_delete``, whose
        answers are then known (none, None); the checks that pass on no option are skipped (a
        PodGC force-delete a churn pod; ``tests/apiserver/test_delete_fastpath.py`` compares it
        with the general steps)."""
        if propagation_policy is not None:
            check_delete_options(propagation_policy)
        current = self.get(kind, name, namespace)
        if uid or resource_version:
            check_preconditions(kind, current, uid=uid, resource_version=resource_version)
        strategy = self._strategies[kind]
        grace = strategy.graceful_delete(current, grace_period_seconds)
        if not grace and not current.metadata.finalizers and propagation_policy is None and kind in self._plain_deletes:
            return current, None
        return current, left_by_delete(
            kind, current, strategy, grace, grace_period_seconds, propagation_policy, self.clock
        )

    def delete(
        self,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        grace_period_seconds: int | None = None,
        uid: str = "",
        propagation_policy: str | None = None,
        resource_version: str = "",
        dry_run: bool = False,
    ) -> Any:
        """Delete (the rules: ``deletion``; the checks and decision: ``plan_delete``). A bound,
        non-terminal pod is only marked (graceful) unless grace is 0; an object left with
        finalizers is only marked. Returns the object as the delete left it: marked, or, when
        removed at once, its last state with the revision of the deletion (upstream's etcd3
        store decodes the deleted object at the delete's revision; the DELETED watch event
        carries the same; upstream first writes a pod removed at once marked, MODIFIED, then
        removes that: this server removes it in one write, unmarked). ``dry_run``
        (``dryRun=All``): the same checks, nothing written; an object removed at once is answered
        as ``dry_run_removal`` gives it."""
        current, left = self.plan_delete(
            kind,
            name,
            namespace,
            grace_period_seconds=grace_period_seconds,
            uid=uid,
            propagation_policy=propagation_policy,
            resource_version=resource_version,
        )
        if dry_run:
            return self.dry_run_removal(kind, current) if left is None else left
        if left is current:
            return current
        return self._commit("delete", kind, current, left)

    def dry_run_removal(self, kind: str, current: Any) -> Any:
        """A dry run's answer for a delete that removes ``current`` at once: the object as the
        delete marks it before removing it for a kind with graceful deletion (a pod:
        ``deletion.marked_before_removal``), else as stored (upstream's
        ``DryRunnableStorage.Delete``)."""
        return marked_before_removal(current, self.clock) if kind in self._graceful_kinds else current

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None, uid: str = "") -> Pod:
        """The pods/eviction subresource (``eviction`` has the rules); a refused eviction
        (429, 403, 500) changes nothing. Returns the pod as the delete left it."""
        pod: Pod = self.get("Pod", name, namespace)
        if uid and uid != pod.metadata.uid:
            raise Conflict.uid_precondition(uid, pod.metadata.uid)
        now = self.clock.timestamp()
        try:
            decided = eviction.plan(pod, self.list("PodDisruptionBudget", namespace=pod.metadata.namespace)[0], now)
        except eviction.MoreThanOnePdb:
            raise InternalError(eviction.MORE_THAN_ONE_PDB) from None
        if decided.budget is not None:
            self.update_status(decided.budget)
        marked = eviction.with_disruption_target(pod, now)
        if marked != pod:
            self._commit("evict", "Pod", pod, marked)
        result: Pod = self.delete(
            "Pod", name, pod.metadata.namespace, grace_period_seconds=grace_period_seconds, uid=pod.metadata.uid
        )
        return result

    def bind(self, binding: Binding) -> Pod:
        """The pods/binding subresource: assign the pod to ``binding.target.name``."""
        meta = binding.metadata
        namespace, name = meta.namespace or "default", meta.name
        hook = self._read_hooks.get("Pod")
        if hook is not None:
            hook(namespace, name)
        pod: Pod | None = self._objects["Pod"].get((namespace, name))  # ``get``, inlined
        if pod is None:
            raise NotFound.of("Pod", name)
        bound = bind_pod(pod, binding, self.clock.timestamp(), str(self._revision + 1))  # the revision _commit gives it
        result: Pod = self._commit("bind", "Pod", pod, bound, stamped=True)
        return result
