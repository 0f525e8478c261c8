"""The etcd-like store and the verbs of the API server.

One global revision: every successful write increments it and stamps the written
object's ``metadata.resourceVersion`` with it. The store is synchronous and in memory;
latency and faults belong to the ``Client`` (``emulator.client``). A rejected write raises
a typed ``ApiError`` before anything is changed: the store and the revision stay as they
were.

=============  =================================================================
verb           semantics
=============  =================================================================
create         defaulting + validation; AlreadyExists; namespace must exist; the
               workload kinds get generation 1 and an empty status
get / list     NotFound; list returns the revision it reflects
update         optimistic concurrency on resourceVersion (Conflict); keeps status;
               pod spec fields other than schedulingGates, tolerations and images
               are immutable (Invalid); a spec change bumps metadata.generation;
               no new finalizers on a terminating object; emptying the finalizers
               of an object marked with grace 0 removes it (``deletion``)
update_status  optimistic concurrency; changes status only
(unchanged)    an update or update_status whose object equals the stored one is not
               written (no revision, no watch event, no listener call): the stored
               object is returned and counted in ``unchanged``, as upstream's
               ``GuaranteedUpdate`` skips it
delete         preconditions uid / resourceVersion (Conflict); propagationPolicy
               sets the GC finalizers; pods bound and running: graceful
               (deletionTimestamp set, object kept until the kubelet confirms with
               grace 0); otherwise removed at once unless finalizers remain, then
               only marked (``deletion``)
(expiry)       an Event ``eventTTL`` after its last write: a delete by the server,
               done after the next write (``eventttl``)
evict          pods/eviction: the rules of ``eviction`` (PDBs, 429); the PDB status
               write, then the pod's DisruptionTarget condition (verb ``evict``),
               then an ordinary delete
bind           pods/binding: NotFound if gone; Conflict if already assigned or
               terminating; sets spec.nodeName and PodScheduled=True
watch          from a revision (replays the history window; older → Gone)
=============  =================================================================

The history window (``_history``, one deque for all kinds) is bounded as upstream's watch
cache bounds its per-resource window: events older than ``EVENT_FRESH_DURATION`` (75 s) are
dropped once it holds more than ``HISTORY_LOWER_BOUND`` (100), and it never holds more than
``ServerSettings.history_size``; so it grows with the write rate, not with simulated time.
Upstream resizes a ring buffer by powers of two to approximate the same rule (it may keep up
to twice the fresh window); this one trims back to exactly the fresh window once a second
(``HISTORY_TRIM_SLACK``), which keeps at least what upstream promises and less memory. The
store's tables hold live objects only (a delete removes the key); Events leave after
``eventTTL`` (``eventttl``), terminated pods by pod GC.

Every write is also handed to the write listeners (trace, invariant checker, metrics)
with its verb and the object before and after.

At ~680 lines it is over the house's ~500 on purpose: every verb reads and writes the same
store, revision and watch hub under the same "refuse before changing anything" rule, and
keeping them in one module keeps that rule visible. Defaulting and admission
(``defaults``; a pod's, memoised per spec, is ``defaults.PodAdmission``), validation
(``emulator.api.validation``), the deletion and finalizer rules (``deletion``), the watch hub
(``watch``) and the Event expiry queue (``eventttl``) already live beside it.
"""

from __future__ import annotations

import contextlib
import random
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, cast

import msgspec
from msgspec.structs import replace

from emulator.api.batch import Job
from emulator.api.codec import KINDS
from emulator.api.core import Binding, Namespace, NamespaceStatus, Node, Pod, PodCondition
from emulator.api.errors import (
    AlreadyExists,
    Conflict,
    Gone,
    InternalError,
    Invalid,
    NotFound,
    Timeout,
    resource_of,
)
from emulator.api.meta import ObjectMeta
from emulator.api.scheduling import PriorityClass
from emulator.api.services import Service
from emulator.api.validation import (
    WORKLOAD_KINDS,
    validate,
    validate_status_update,
    validate_update,
    validate_workload_update,
)
from emulator.api.workloaddefaults import default_object, stored_job
from emulator.apiserver import eviction, serviceips
from emulator.apiserver.defaults import PodAdmission, default_node
from emulator.apiserver.deletion import (
    check_delete_options,
    check_finalizers,
    check_owner_references,
    check_preconditions,
    finalizers_for_deletion,
    mark_deleting,
    should_delete_during_update,
)
from emulator.apiserver.eventttl import DEFAULT_EVENT_TTL, EventExpiry
from emulator.apiserver.uids import fast_uid
from emulator.apiserver.watch import Watcher, WatchEvent, WatchHub, transition
from emulator.runtime.clock import Clock, parse_timestamp

__all__ = [
    "CLUSTER_SCOPED",
    "ApiServer",
    "ServerSettings",
    "Verb",
    "WriteRecord",
]

Verb = Literal["create", "update", "updateStatus", "bind", "delete", "evict"]
T = TypeVar("T", bound=msgspec.Struct)
CLUSTER_SCOPED: Final = frozenset({"Node", "Namespace", "PriorityClass"})
_KIND_NAMES: Final = frozenset(k for _, k in KINDS)
_GENERATION_ON_CREATE: Final = frozenset(
    {"Pod", "Node", *(k.__name__ for k in WORKLOAD_KINDS if k.__name__ != "Service")}
)
"""Kinds whose strategy sets ``metadata.generation = 1`` on create (bumped on spec changes)."""
_NAME_CHARS: Final = "bcdfghjklmnpqrstvwxz2456789"


class WriteRecord(msgspec.Struct, frozen=True, gc=False):
    """One successful write, as the listeners see it (a frozen struct: one per write, and a
    msgspec struct is built several times faster than a frozen dataclass)."""

    revision: int
    time: float
    verb: Verb
    kind: str
    old: Any
    new: Any
    agent: str = ""
    """Who made the write, when it came through the HTTP door (its User-Agent's product,
    e.g. ``kubectl``); empty for the in-process agents."""

    @property
    def obj(self) -> Any:
        return self.new if self.new is not None else self.old


EVENT_FRESH_DURATION: Final = 75.0
"""Upstream's ``eventFreshDuration``: the watch cache keeps at least this much history (the
default bookmark frequency, 60 s, plus 15 s), so a watcher resuming from its last bookmark
finds its revision."""
HISTORY_LOWER_BOUND: Final = 100
"""Upstream ``defaultLowerBoundCapacity``: the history never shrinks below this many events."""
HISTORY_TRIM_SLACK: Final = 1.0
"""The history is trimmed once its oldest event is this many simulated seconds past the fresh
duration, then back to exactly the fresh duration: one trim per second of writes rather than a
call per write, so it holds between 75 and 76 s of events (upstream's ring may hold up to
twice the fresh window)."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    history_size: int = 100_000
    """At most this many watch events kept for resuming (upstream's watch cache stops growing
    at ``100 * 1024`` per resource); a watch from an older revision gets Gone."""
    event_fresh_duration: float = EVENT_FRESH_DURATION
    """Events older than this leave the history window once it holds more than
    ``HISTORY_LOWER_BOUND`` (upstream ``eventFreshDuration``)."""
    watch_buffer: int = 1_000_000
    """Events a watcher may have undelivered before it is ended (its informer relists)."""
    event_ttl: float = DEFAULT_EVENT_TTL
    """Upstream ``--event-ttl``: an Event is deleted this long after its last write (0: never)."""


def _key(namespace: str, name: str) -> tuple[str, str]:
    return (namespace, name)


class ApiServer:
    """The store, its revision, its history window and its watch hub."""

    def __init__(self, clock: Clock, rng: random.Random, settings: ServerSettings | None = None) -> None:
        self.clock = clock
        self.settings = settings or ServerSettings()
        self._rng = rng
        self._revision = 0
        self._objects: dict[str, dict[tuple[str, str], Any]] = {k: {} for k in sorted(_KIND_NAMES)}
        self._history: deque[tuple[str, Any, Any, int, float]] = deque(maxlen=self.settings.history_size)
        self._fresh = self.settings.event_fresh_duration
        self._hub = WatchHub()
        self._listeners: list[Callable[[WriteRecord], None]] = []
        self.writes = 0
        self.unchanged: dict[tuple[str, str], int] = {}
        """(verb, kind) -> writes skipped because they changed nothing (upstream's store skips
        them too: no new revision, no watch event, the stored object as the answer)."""
        self._event_expiry = EventExpiry(self.settings.event_ttl)
        self._expiring = False
        self._pod_admission = PodAdmission()
        self.agent = ""
        """Set by ``acting_as`` around the HTTP door's calls (the store is synchronous, so no
        other write can interleave) and copied into ``WriteRecord.agent``; empty otherwise."""

    @contextlib.contextmanager
    def acting_as(self, agent: str) -> Iterator[None]:
        """Within the block, writes are recorded as ``agent``'s (``WriteRecord.agent``)."""
        previous, self.agent = self.agent, agent
        try:
            yield
        finally:
            self.agent = previous

    # --- introspection ------------------------------------------------------------------

    @property
    def revision(self) -> int:
        return self._revision

    def add_write_listener(self, fn: Callable[[WriteRecord], None]) -> None:
        self._listeners.append(fn)

    def watchers(self) -> list[Watcher]:
        return self._hub.watchers()

    def __repr__(self) -> str:
        counts = " ".join(f"{k.lower()}s={len(v)}" for k, v in self._objects.items() if v)
        return f"<ApiServer rev={self._revision} {counts} watchers={len(self._hub.watchers())}>"

    # --- internals ----------------------------------------------------------------------

    def _table(self, kind: str) -> dict[tuple[str, str], Any]:
        try:
            return self._objects[kind]
        except KeyError:
            raise NotFound(f'the server could not find the requested resource (kind "{kind}")') from None

    def _commit(self, verb: Verb, kind: str, old: Any, new: Any, *, stamped: bool = False) -> Any:
        """Stamp ``new`` with the next revision, store it, publish it. Never raises.
        ``stamped``: ``new`` already carries the next revision (``create`` sets it with the
        uid and timestamps, saving two copies)."""
        self._revision += 1
        rev = self._revision
        table = self._objects[kind]
        if kind == "PriorityClass":
            self._pod_admission.clear()  # pod defaulting reads the classes
        if new is not None:
            if not stamped:
                new = replace(new, metadata=replace(new.metadata, resource_version=str(rev)))
            table[_key(new.metadata.namespace, new.metadata.name)] = new
        else:
            del table[_key(old.metadata.namespace, old.metadata.name)]
            old = replace(old, metadata=replace(old.metadata, resource_version=str(rev)))
        now = self.clock.now()
        history = self._history
        history.append((kind, old, new, rev, now))
        if history[0][4] < now - self._fresh - HISTORY_TRIM_SLACK and len(history) > HISTORY_LOWER_BOUND:
            self._trim_history(now)
        self._hub.publish(kind, old, new, rev, now)
        self.writes += 1
        if self._listeners:
            rec = WriteRecord(rev, now, verb, kind, old, new, self.agent)
            for fn in self._listeners:
                fn(rec)
        if kind == "Event" and new is not None:
            self._event_expiry.written(now, rev, new.metadata.namespace, new.metadata.name)
        if self._event_expiry.deadline <= now and not self._expiring:
            self._expire_events(now)
        return new if new is not None else old

    def _unchanged(self, verb: Verb, kind: str, current: Any) -> Any:
        """A write that changes nothing: not committed (upstream's ``GuaranteedUpdate`` does not
        write an object equal to the stored one), counted, answered with the stored object."""
        key = (verb, kind)
        self.unchanged[key] = self.unchanged.get(key, 0) + 1
        return current

    def _trim_history(self, now: float) -> None:
        """Drop the events older than the fresh duration, keeping at least the lower bound."""
        history, horizon = self._history, now - self._fresh
        while len(history) > HISTORY_LOWER_BOUND and history[0][4] < horizon:
            history.popleft()

    def _expire_events(self, now: float) -> None:
        """Delete the Events whose TTL ran out (checked after every write: see ``eventttl``)."""
        table = self._objects["Event"]
        due = self._event_expiry.due(now, lambda ns, name: table.get(_key(ns, name)))
        if not due:
            return
        self._expiring = True
        try:
            with self.acting_as(""):  # the server's own write, whoever's request ran
                for event in due:
                    self._commit("delete", "Event", event, None)
        finally:
            self._expiring = False

    def _priority_classes(self) -> Mapping[str, PriorityClass]:
        return {k[1]: v for k, v in self._objects["PriorityClass"].items()}

    def _name_suffix(self) -> str:
        return "".join(self._rng.choice(_NAME_CHARS) for _ in range(5))

    # --- verbs --------------------------------------------------------------------------

    def create(self, obj_in: T, *, restore: bool = False) -> T:
        """Create an object. ``restore=True`` seeds existing state (as an etcd restore would):
        the object's status is kept instead of reset; not reachable through a ``Client``."""
        obj: Any = obj_in
        kind: str = obj.kind
        table = self._table(kind)
        if kind == "Binding":
            raise Invalid.at(kind, "", "kind", "Invalid value: use bind() for bindings")
        meta: ObjectMeta = obj.metadata
        if kind in CLUSTER_SCOPED:
            if meta.namespace:
                meta = replace(meta, namespace="")
        elif not meta.namespace:
            meta = replace(meta, namespace="default")
        if not meta.name and meta.generate_name:
            meta = replace(meta, name=meta.generate_name + self._name_suffix())
        if meta.resource_version:
            raise Invalid.at(
                kind,
                meta.name,
                "metadata.resourceVersion",
                "Forbidden: resourceVersion should not be set on objects to be created",
            )
        if meta is not obj.metadata:
            obj = replace(obj, metadata=meta)
        if isinstance(obj, Pod):
            given_status = obj.status
            # defaulting and validation (memoised per spec: ``defaults.PodAdmission``)
            obj = self._pod_admission.admit(obj, classes=self._priority_classes, name_suffix=self._name_suffix)
            if restore:
                obj = replace(
                    obj, status=replace(given_status, qos_class=given_status.qos_class or obj.status.qos_class)
                )
        elif isinstance(obj, Node):
            obj = default_node(obj)
        elif isinstance(obj, Namespace):
            # upstream: every namespace carries kubernetes.io/metadata.name=<name>, and
            # PrepareForCreate sets its phase Active
            labels = {**obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name}
            obj = replace(obj, metadata=replace(obj.metadata, labels=labels), status=NamespaceStatus(phase="Active"))
        elif isinstance(obj, WORKLOAD_KINDS):
            obj = default_object(obj)
            if not restore:  # upstream PrepareForCreate: the status is the controllers' to write
                obj = replace(obj, status=type(obj.status)())
            if isinstance(obj, Service):
                obj = serviceips.allocate(obj, {svc.spec.cluster_ip for svc in self._objects["Service"].values()})
        if not isinstance(obj, Pod):
            validate(obj)
        meta = obj.metadata
        if meta.finalizers:
            check_finalizers(kind, meta.name, meta.finalizers)
        if meta.owner_references:
            check_owner_references(kind, meta.name, meta.owner_references)
        if kind not in CLUSTER_SCOPED and _key("", meta.namespace) not in self._objects["Namespace"]:
            raise NotFound(f'namespaces "{meta.namespace}" not found')
        if _key(meta.namespace, meta.name) in table:
            raise AlreadyExists.of(kind, meta.name)
        if isinstance(obj, PriorityClass) and obj.global_default:
            other = next((p for p in self._objects["PriorityClass"].values() if p.global_default), None)
            if other is not None:
                raise Invalid.at(
                    kind,
                    meta.name,
                    "globalDefault",
                    f"Forbidden: PriorityClass {other.metadata.name} is already marked as default",
                )
        meta = replace(
            meta,
            uid=fast_uid(self._rng),
            creation_timestamp=self.clock.timestamp(),
            deletion_timestamp=None,
            generation=1 if kind in _GENERATION_ON_CREATE else meta.generation,
            resource_version=str(self._revision + 1),  # the revision _commit gives it
        )
        obj = replace(obj, metadata=meta)
        if isinstance(obj, Job):  # the Job strategy's generated selector needs the uid
            obj = stored_job(obj)
        return cast(T, self._commit("create", kind, None, obj, stamped=True))

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        if kind not in CLUSTER_SCOPED and not namespace:
            namespace = "default"
        try:
            return self._table(kind)[_key("" if kind in CLUSTER_SCOPED else namespace, name)]
        except KeyError:
            raise NotFound.of(kind, name) from None

    def list(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
        predicate: Callable[[Any], bool] | None = None,
    ) -> tuple[list[Any], int]:
        """Matching objects in (namespace, name) order, and the revision they reflect.
        ``predicate``: any further test on the whole object (``Watcher.predicate``)."""
        probe = Watcher(
            kind,
            name="list",
            namespace=namespace,
            fields=fields or {},
            label_match=label_match,
            maxsize=1,
            allow_bookmarks=False,
            predicate=predicate,
        )
        table = self._table(kind)
        name = (fields or {}).get("metadata.name")
        if name is not None:  # a field selector on the name: a lookup, not a scan
            if kind in CLUSTER_SCOPED or namespace is not None:
                key = ("", name) if kind in CLUSTER_SCOPED else (namespace or "", name)
                keys = [key] if key in table else []
            else:
                keys = sorted(k for k in table if k[1] == name)
            items = [table[k] for k in keys]
        else:
            items = [table[k] for k in sorted(table)]
        if namespace is not None or fields or label_match is not None or predicate is not None:
            items = [o for o in items if probe.matches(o)]
        return items, self._revision

    def _current(self, obj: Any) -> tuple[str, Any]:
        kind: str = obj.kind
        meta: ObjectMeta = obj.metadata
        current = self.get(kind, meta.name, meta.namespace)
        if meta.resource_version and meta.resource_version != current.metadata.resource_version:
            raise Conflict.stale(kind, meta.name)
        if meta.uid and meta.uid != current.metadata.uid:
            raise Conflict(
                f"Precondition failed: UID in precondition: {meta.uid}, UID in object meta: {current.metadata.uid}"
            )
        return kind, current

    def update(self, obj_in: T) -> T:
        """Replace metadata (labels, annotations...) and spec; status is kept as stored."""
        obj: Any = obj_in
        kind, current = self._current(obj)
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
        if isinstance(obj, Pod):
            self._check_pod_update(current, obj)
        candidate = replace(obj, metadata=new_meta)
        if isinstance(candidate, WORKLOAD_KINDS):
            candidate = default_object(candidate)
            if isinstance(candidate, Job):
                candidate = stored_job(candidate)
        if isinstance(candidate, Service):
            candidate = serviceips.keep_allocated(current, candidate)
        if hasattr(current, "status"):
            candidate = replace(candidate, status=current.status)
        if isinstance(current, PriorityClass):
            self._check_priority_class_update(current, candidate)
        validate_update(candidate)
        if isinstance(candidate, WORKLOAD_KINDS):
            validate_workload_update(current, candidate)
        if candidate == current:
            return cast(T, self._unchanged("update", kind, current))
        if should_delete_during_update(current.metadata, candidate.metadata):
            # the last finalizer is gone: the object goes (DELETED carries the stored object)
            return cast(T, self._commit("delete", kind, current, None))
        if hasattr(current, "spec") and current.spec != candidate.spec:
            meta = candidate.metadata  # new_meta, or a Job's with its defaulted labels
            candidate = replace(candidate, metadata=replace(meta, generation=meta.generation + 1))
        return cast(T, self._commit("update", kind, current, candidate))

    def _check_priority_class_update(self, current: PriorityClass, new: PriorityClass) -> None:
        name = current.metadata.name
        if new.value != current.value:
            raise Invalid.at("PriorityClass", name, "value", "Forbidden: may not be changed in an update.")
        if new.global_default and not current.global_default:
            other = next((p for p in self._objects["PriorityClass"].values() if p.global_default), None)
            if other is not None:
                raise Invalid.at(
                    "PriorityClass",
                    name,
                    "globalDefault",
                    f"Forbidden: PriorityClass {other.metadata.name} is already marked as default",
                )

    @staticmethod
    def _check_pod_update(current: Pod, pod: Pod) -> None:
        old, new = current.spec, pod.spec
        if len(new.scheduling_gates) > len(old.scheduling_gates) or any(
            g not in old.scheduling_gates for g in new.scheduling_gates
        ):
            raise Invalid.at(
                "Pod",
                pod.metadata.name,
                "spec.schedulingGates",
                "Forbidden: only deletion is allowed, but found new scheduling gate",
            )

        def tol_key(t: Any) -> tuple[str, str, str, str]:
            return (t.key, t.operator, t.value, t.effect)

        new_keys = [tol_key(t) for t in new.tolerations]
        if any(tol_key(t) not in new_keys for t in old.tolerations):
            raise Invalid.at(
                "Pod",
                pod.metadata.name,
                "spec.tolerations",
                "Forbidden: existing toleration can not be modified except its tolerationSeconds",
            )
        cmp_new = replace(
            new,
            scheduling_gates=old.scheduling_gates,
            tolerations=old.tolerations,
            containers=[replace(c, image=o.image) for c, o in zip(new.containers, old.containers, strict=False)],
            init_containers=[
                replace(c, image=o.image) for c, o in zip(new.init_containers, old.init_containers, strict=False)
            ],
        )
        if (
            len(new.containers) != len(old.containers)
            or len(new.init_containers) != len(old.init_containers)
            or cmp_new != old
        ):
            raise Invalid.at(
                "Pod",
                pod.metadata.name,
                "spec",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
                "`spec.tolerations` (only additions to existing tolerations) and `spec.schedulingGates`",
            )

    def update_status(self, obj_in: T) -> T:
        obj: Any = obj_in
        kind, current = self._current(obj)
        if not hasattr(current, "status"):
            raise NotFound(f"the server could not find the requested resource ({resource_of(kind)}/status)")
        candidate = replace(current, status=obj.status)
        validate_status_update(candidate)
        if candidate.status == current.status:  # metadata and spec are current's own objects
            return cast(T, self._unchanged("updateStatus", kind, current))
        return cast(T, self._commit("updateStatus", kind, current, candidate))

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
    ) -> Any:
        """Delete (the rules: ``deletion``). A bound, non-terminal pod is only marked
        (graceful) unless grace is 0; an object left with finalizers is only marked."""
        check_delete_options(propagation_policy)
        current = self.get(kind, name, namespace)
        check_preconditions(kind, current, uid=uid, resource_version=resource_version)
        meta: ObjectMeta = current.metadata
        if isinstance(current, Pod):
            grace = (
                current.spec.termination_grace_period_seconds if grace_period_seconds is None else grace_period_seconds
            )
            grace = grace or 0
            if grace < 0:
                grace = 1  # upstream: a negative grace period means 1 second
            unbound = not current.spec.node_name
            terminal = current.status.phase in ("Succeeded", "Failed")
            if grace > 0 and not unbound and not terminal:
                if meta.deletion_timestamp is not None and (
                    grace_period_seconds is None or (meta.deletion_grace_period_seconds or 0) <= grace
                ):
                    return current  # graceful deletion pending: only an explicit shorter grace changes it
                when, grace = self._deletion_time(meta, grace)
                generation = (
                    meta.generation + 1 if meta.generation > 0 and meta.deletion_timestamp is None else meta.generation
                )
                finalizers = finalizers_for_deletion(kind, meta.finalizers, propagation_policy)
                marked = replace(
                    current,
                    metadata=replace(
                        meta,
                        deletion_timestamp=when,
                        deletion_grace_period_seconds=grace,
                        generation=generation,
                        finalizers=finalizers,
                    ),
                )
                return self._commit("delete", kind, current, marked)
        finalizers = finalizers_for_deletion(kind, meta.finalizers, propagation_policy)
        if finalizers:
            marked = replace(current, metadata=mark_deleting(meta, finalizers, self.clock.timestamp()))
            if marked == current:
                return current  # already terminating as asked: nothing to write
            return self._commit("delete", kind, current, marked)
        self._commit("delete", kind, current, None)
        return current

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None, uid: str = "") -> Pod:
        """The pods/eviction subresource (``eviction`` has the rules); a refused eviction
        (429, 403, 500) changes nothing. Returns the pod as the delete left it."""
        pod: Pod = self.get("Pod", name, namespace)
        if uid and uid != pod.metadata.uid:
            raise Conflict(f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod.metadata.uid}")
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

    def _deletion_time(self, meta: ObjectMeta, grace: int) -> tuple[str, int]:
        """(deletionTimestamp, deletionGracePeriodSeconds): now + grace; a shorter grace on a
        terminating object moves the deadline earlier from the original one, never into the
        past — then the grace becomes 1 s (upstream ``BeforeDelete``)."""
        now = self.clock.now()
        if meta.deletion_timestamp is not None and meta.deletion_grace_period_seconds is not None:
            start = parse_timestamp(meta.deletion_timestamp) - meta.deletion_grace_period_seconds
            if start + grace < now:
                return self.clock.timestamp(now), 1
            return self.clock.timestamp(start + grace), grace
        return self.clock.timestamp(now + grace), grace

    def bind(self, binding: Binding) -> Pod:
        """The pods/binding subresource: assign the pod to ``binding.target.name``."""
        meta = binding.metadata
        namespace = meta.namespace or "default"
        pod: Pod = self.get("Pod", meta.name, namespace)
        if meta.uid and meta.uid != pod.metadata.uid:
            raise Conflict(
                f"Precondition failed: UID in precondition: {meta.uid}, UID in object meta: {pod.metadata.uid}"
            )
        if not binding.target.name:
            raise Invalid.at("Binding", meta.name, "target.name", "Required value")
        if binding.target.kind not in ("", "Node"):
            raise Invalid.at(
                "Binding",
                meta.name,
                "target.kind",
                f'Unsupported value: "{binding.target.kind}": supported values: "Node"',
            )
        if pod.metadata.deletion_timestamp is not None:
            raise Conflict(
                f'Operation cannot be fulfilled on pods/binding "{meta.name}": pod {meta.name} is being deleted, '
                "cannot be assigned to a host"
            )
        if pod.spec.node_name:
            raise Conflict(
                f'Operation cannot be fulfilled on pods/binding "{meta.name}": pod {meta.name} is already '
                f'assigned to node "{pod.spec.node_name}"'
            )
        if pod.spec.scheduling_gates:
            raise Conflict(
                f'Operation cannot be fulfilled on pods/binding "{meta.name}": pod {meta.name} has non-empty '
                ".spec.schedulingGates"
            )
        now = self.clock.timestamp()
        conditions = [c for c in pod.status.conditions if c.type != "PodScheduled"]
        conditions.append(PodCondition(type="PodScheduled", status="True", last_transition_time=now))
        annotations = {**pod.metadata.annotations, **meta.annotations} if meta.annotations else pod.metadata.annotations
        bound = replace(
            pod,
            metadata=replace(pod.metadata, annotations=annotations),
            spec=replace(pod.spec, node_name=binding.target.name),
            status=replace(pod.status, conditions=conditions),
        )
        result: Pod = self._commit("bind", "Pod", pod, bound)
        return result

    # --- watch --------------------------------------------------------------------------

    def watch(
        self,
        kind: str,
        *,
        name: str = "watch",
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
        resource_version: int | None = None,
        allow_bookmarks: bool = False,
        buffer: int | None = None,
        predicate: Callable[[Any], bool] | None = None,
    ) -> Watcher:
        """Open a watch. ``resource_version`` None: new events only (a convenience of this
        in-process API); 0: the current objects first as synthetic ADDED events (upstream's
        "any"); a revision: the events after it are replayed (``Gone`` if compacted,
        ``Timeout`` if it is in the future); then every new event. ``buffer`` bounds the events
        a watcher may leave undelivered; the synthetic ADDED events come on top of it, as
        upstream's cacheWatcher sends its initial events apart from its result channel."""
        self._table(kind)
        initial: list[Any] = []
        if resource_version == 0:
            initial, _ = self.list(
                kind, namespace=namespace, label_match=label_match, fields=fields, predicate=predicate
            )
        w = Watcher(
            kind,
            name=name,
            namespace=namespace,
            fields=fields or {},
            label_match=label_match,
            maxsize=(buffer or self.settings.watch_buffer) + len(initial),
            allow_bookmarks=allow_bookmarks,
            predicate=predicate,
        )
        if resource_version is None:
            pass  # this in-process API's convenience: new events only
        elif resource_version == 0:
            # upstream "0" (any): the current state as synthetic ADDED events, then live events.
            for obj in initial:
                w.channel.put(WatchEvent("ADDED", obj, self._revision, self.clock.now()))
        elif resource_version > self._revision:
            raise Timeout(f"Too large resource version: {resource_version}, current: {self._revision}")
        elif resource_version < self._revision:
            oldest = self._history[0][3] if self._history else self._revision + 1
            if resource_version < oldest - 1:
                raise Gone(f"too old resource version: {resource_version} ({oldest - 1})")
            for k, old, new, rev, t in self._history:
                if rev > resource_version and k == kind:
                    ev = transition(w, old, new, rev, t)
                    if ev is not None:
                        w.channel.put(ev)
        if not w.channel.closed:
            self._hub.add(w)
        return w

    def stop_watch(self, w: Watcher) -> None:
        self._hub.remove(w)
        w.channel.close()

    def bookmark(self) -> None:
        """Send a BOOKMARK with the current revision to watchers that asked for them."""
        self._hub.bookmark(self._revision, self.clock.now())
