"""The disruption controller (upstream ``pkg/controller/disruption``): keeps every
PodDisruptionBudget's status current, through the client ``controller:disruption``.

=====================================  ======================================================
informer event                         action
=====================================  ======================================================
PDB add / update / delete              queue the PDB; the first PDB seen starts the Pod,
                                       ReplicaSet, Deployment and StatefulSet informers
pod add / update / delete              queue the first PDB (by name) of the pod's namespace
                                       whose selector matches the pod's labels (a pod without
                                       labels matches none); several → a Warning
                                       ``MultiplePodDisruptionBudgets`` Event on the pod
=====================================  ======================================================

A sync (one worker, keys ``(namespace, name)``) reads the PDB and its namespace's pods from
the informers' caches, computes the status (``disruptionstatus``), writes it with
``update_status`` when it changed, and queues the PDB again when the earliest
``disruptedPods`` entry expires. A Conflict re-queues rate-limited; any other failure
(an unknown controller, an invalid percent, an API error) writes the fail-safe status
(no disruptions, ``SyncFailed``). Events as upstream: ``NoPods`` (Normal),
``CalculateExpectedPodCountFailed``, ``UnmanagedPods`` on the PDB, ``NotDeleted`` on a pod,
source component ``controllermanager``.

Cost: pods are indexed by namespace in this controller's own handlers, so a sync reads its
namespace's pods only; until a PDB exists no pod informer is started.

Upstream's stale ``DisruptionTarget`` cleanup runs on a second queue: a pod whose
DisruptionTarget=True condition (not the kubelet's) is still not terminating 2 minutes after
it was set gets it reset to False. It rides on the lazily started pod informer, so it runs
only once a PDB exists (upstream: always). Eviction (which writes ``disruptedPods``) is the
API server's, not this module's.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.disruptionstatus import (
    DISRUPTION_TARGET,
    ControllerFinder,
    ScaleError,
    build_disrupted_pod_map,
    count_healthy_pods,
    expected_pod_count,
    fail_safe_status,
    go_selector,
    new_status,
    stale_disruption_wait,
)
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.core import Pod, PodCondition
from emulator.base.api.errors import ApiError, Conflict
from emulator.base.api.labelselector import Selector, SelectorError, compile_selector
from emulator.base.api.meta import ObjectReference, OwnerReference
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetStatus
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer

__all__ = ["COMPONENT", "NAME", "DisruptionController"]

NAME: Final = "disruption"
COMPONENT: Final = "controllermanager"
"""Upstream's disruption controller records Events with the controller manager's source."""
PDB: Final = "PodDisruptionBudget"
_SCALE_KINDS: Final = ("ReplicaSet", "Deployment", "StatefulSet")

Key = tuple[str, str]


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _ref(obj: Any, api_version: str, kind: str) -> ObjectReference:
    m = obj.metadata
    return ObjectReference(api_version=api_version, kind=kind, namespace=m.namespace, name=m.name, uid=m.uid)


class DisruptionController:
    """One disruption controller; ``run()`` until cancelled."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.client = ctx.client(NAME)
        self.clock = ctx.clock
        self.recorder = EventRecorder(self.client, ctx.clock, COMPONENT, aggregate=True)
        """Upstream's broadcaster correlates repeats of one Event into its ``count``."""
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, f"controller:{NAME}")
        self.stale_queue: WorkQueue[Key] = WorkQueue(ctx.clock, f"controller:{NAME}:stale-pod-disruption")
        self.stale_resets = 0
        self._pdbs: Informer | None = None
        self._pods: Informer | None = None
        self._scales: dict[str, Informer] = {}
        self._pods_by_ns: dict[str, dict[str, Pod]] = {}
        self._selectors: dict[str, list[tuple[str, Selector]]] | None = None
        """Namespace → (PDB name, compiled selector) by name, valid selectors only; rebuilt
        after a PDB event, so a pod event costs no selector compilation."""
        self._events: asyncio.Queue[tuple[ObjectReference, str, str, str]] = asyncio.Queue()
        self.syncs = 0
        self.status_writes = 0
        self.failures = 0

    def __repr__(self) -> str:
        return f"<DisruptionController syncs={self.syncs} writes={self.status_writes} {self.queue!r}>"

    def statistics(self) -> dict[str, Any]:
        return {
            "syncs": self.syncs,
            "statusWrites": self.status_writes,
            "syncFailures": self.failures,
            "queueAdds": self.queue.adds,
            "retries": self.queue.retries,
            "staleDisruptionResets": self.stale_resets,
        }

    # --- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._pdbs = self.ctx.informers.handlers(PDB, self._on_pdb, self._on_pdb_update, self._on_pdb)
            tg.create_task(self._record_events(), name=f"{self.client.name}:events")
            self.queue.run_workers(tg, 1, self.sync)
            self.stale_queue.run_workers(tg, 1, self.sync_stale_pod_disruption)

    async def _record_events(self) -> None:
        """Events decided in (synchronous) informer handlers, written in order."""
        while True:
            involved, type_, reason, message = await self._events.get()
            await self.recorder.event(involved, type_, reason, message)

    # --- handlers ---------------------------------------------------------------------------

    def _on_pdb(self, pdb: PodDisruptionBudget) -> None:
        self._selectors = None
        if self._pods is None:
            self._start_pod_informers()
        self.queue.add((pdb.metadata.namespace, pdb.metadata.name))

    def _on_pdb_update(self, old: PodDisruptionBudget, new: PodDisruptionBudget) -> None:
        self._on_pdb(new)

    def _start_pod_informers(self) -> None:
        informers = self.ctx.informers
        for kind in _SCALE_KINDS:
            self._scales[kind] = informers.informer(kind)
        self._pods = informers.handlers("Pod", self._on_pod, self._on_pod_update, self._on_pod_delete)

    def _on_pod(self, pod: Pod) -> None:
        self._pods_by_ns.setdefault(pod.metadata.namespace, {})[pod.metadata.name] = pod
        self._enqueue_for(pod)
        wait = stale_disruption_wait(pod, self.clock.now())
        if wait is not None:
            self.stale_queue.add_after((pod.metadata.namespace, pod.metadata.name), wait)

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        self._on_pod(new)

    def _on_pod_delete(self, pod: Pod) -> None:
        pods = self._pods_by_ns.get(pod.metadata.namespace)
        if pods is not None:
            pods.pop(pod.metadata.name, None)
            if not pods:
                del self._pods_by_ns[pod.metadata.namespace]
        self._enqueue_for(pod)

    def _enqueue_for(self, pod: Pod) -> None:
        """Upstream ``getPdbForPod`` + enqueue: the first matching PDB (by name)."""
        pdbs = self.pdbs_for_pod(pod)
        if not pdbs:
            return
        if len(pdbs) > 1:
            m = pod.metadata
            msg = (
                f'Pod "{m.namespace}"/"{m.name}" matches multiple PodDisruptionBudgets.  '
                f'Chose "{pdbs[0].metadata.name}" arbitrarily.'
            )
            self._events.put_nowait((_ref(pod, "v1", "Pod"), "Warning", "MultiplePodDisruptionBudgets", msg))
        self.queue.add((pdbs[0].metadata.namespace, pdbs[0].metadata.name))

    def pdbs_for_pod(self, pod: Pod) -> list[PodDisruptionBudget]:
        """Upstream ``GetPodPodDisruptionBudgets`` (sorted by name): an empty selector matches
        every pod, a null or invalid one none; a pod without labels has no PDB."""
        if self._pdbs is None or not pod.metadata.labels:
            return []
        if self._selectors is None:
            self._selectors = self._compile_selectors(self._pdbs.store)
        ns = pod.metadata.namespace
        labels = pod.metadata.labels
        store = self._pdbs.store
        return [store[(ns, name)] for name, sel in self._selectors.get(ns, ()) if sel.matches(labels)]

    @staticmethod
    def _compile_selectors(store: dict[Key, Any]) -> dict[str, list[tuple[str, Selector]]]:
        out: dict[str, list[tuple[str, Selector]]] = {}
        for key in sorted(store):
            try:
                selector = compile_selector(store[key].spec.selector)
            except SelectorError:
                continue
            out.setdefault(key[0], []).append((key[1], selector))
        return out

    # --- sync -------------------------------------------------------------------------------

    def pods_for(self, pdb: PodDisruptionBudget) -> list[Pod]:
        """Upstream ``getPodsForPdb``: the namespace's pods its selector matches, by name;
        ``SelectorError`` if the selector is invalid."""
        selector = compile_selector(pdb.spec.selector)
        pods = self._pods_by_ns.get(pdb.metadata.namespace, {})
        return [pods[n] for n in sorted(pods) if selector.matches(pods[n].metadata.labels)]

    def find_controller(self, ref: OwnerReference, namespace: str) -> tuple[str, int] | None:
        """Upstream's finders in order: Deployment (through its ReplicaSet), ReplicaSet not
        owned by a Deployment, StatefulSet (ReplicationControllers and the scale subresource
        of other kinds do not exist here)."""
        group = _group(ref.api_version)
        if ref.kind == "ReplicaSet" and group == "apps":
            rs = self._scales["ReplicaSet"].get(ref.name, namespace)
            if rs is None or rs.metadata.uid != ref.uid:
                return None
            owner = next((r for r in rs.metadata.owner_references if r.controller), None)
            if owner is not None and owner.kind == "Deployment":
                if _group(owner.api_version) != "apps":
                    return None
                dep = self._scales["Deployment"].get(owner.name, namespace)
                if dep is None or dep.metadata.uid != owner.uid:
                    return None
                return dep.metadata.uid, _replicas(dep)
            return rs.metadata.uid, _replicas(rs)
        if ref.kind == "StatefulSet" and group == "apps":
            sts = self._scales["StatefulSet"].get(ref.name, namespace)
            if sts is None or sts.metadata.uid != ref.uid:
                return None
            return sts.metadata.uid, _replicas(sts)
        return None

    async def _wait_synced(self) -> None:
        for informer in (self._pdbs, self._pods, *self._scales.values()):
            if informer is not None:
                await informer.synced.wait()

    async def sync(self, key: Key) -> None:
        """Upstream ``sync``: one PDB's status; errors handled here (see the module table)."""
        await self._wait_synced()
        assert self._pdbs is not None
        pdb: PodDisruptionBudget | None = self._pdbs.get(key[1], key[0])
        if pdb is None:
            self.queue.forget(key)
            return
        self.syncs += 1
        try:
            await self._try_sync(pdb)
        except Conflict:
            self.queue.add_rate_limited(key)
            return
        except (ScaleError, SelectorError, ApiError) as err:
            self.failures += 1
            if not await self._fail_safe(pdb, str(err)):
                self.queue.add_rate_limited(key)
                return
        self.queue.forget(key)

    async def _try_sync(self, pdb: PodDisruptionBudget) -> None:
        ref = _ref(pdb, "policy/v1", PDB)
        try:
            pods = self.pods_for(pdb)
        except SelectorError as err:
            await self.recorder.event(ref, "Warning", "NoPods", f"Failed to get pods: {err}")
            raise
        if not pods:
            await self.recorder.event(ref, "Normal", "NoPods", "No matching pods found")
        finder: ControllerFinder = self.find_controller
        try:
            expected, desired, unmanaged = expected_pod_count(pdb, pods, finder)
        except ScaleError as err:
            await self.recorder.event(
                ref,
                "Warning",
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {err}",
            )
            raise
        if unmanaged:
            await self.recorder.event(
                ref,
                "Warning",
                "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: {go_selector(pdb.spec.selector)}) "
                "were found to be unmanaged. As a result, the status of the PDB cannot be calculated "
                'correctly, which may result in undefined behavior. To account for these pods please set ".spec'
                '.minAvailable" field of the PDB to an integer value.',
            )
        now = self.clock.now()
        disrupted, recheck, not_deleted = build_disrupted_pod_map(pods, pdb, now)
        for pod in not_deleted:
            # Upstream prints the PDB's namespace twice; kept.
            ns = pdb.metadata.namespace
            msg = f"Pod was expected by PDB {ns}/{ns} to be deleted but it wasn't"
            await self.recorder.event(_ref(pod, "v1", "Pod"), "Warning", "NotDeleted", msg)
        healthy = count_healthy_pods(pods, disrupted, now)
        status = new_status(pdb, healthy, desired, expected, disrupted, self.clock.timestamp())
        if status is not None:
            await self.client.update_status(_with_status(pdb, status))
            self.status_writes += 1
        if recheck is not None:
            self.queue.add_after((pdb.metadata.namespace, pdb.metadata.name), recheck - now)

    async def sync_stale_pod_disruption(self, key: Key) -> None:
        """Upstream ``syncStalePodDisruption``: reset a stale DisruptionTarget to False."""
        pod: Pod | None = self._pods.get(key[1], key[0]) if self._pods is not None else None
        wait = None if pod is None else stale_disruption_wait(pod, self.clock.now())
        if pod is None or wait is None:
            self.stale_queue.forget(key)
            return
        if wait > 0:
            self.stale_queue.add_after(key, wait)
            return
        now = self.clock.timestamp()
        conditions = [
            PodCondition(
                type=DISRUPTION_TARGET,
                status="False",
                last_transition_time=now,
                observed_generation=pod.metadata.generation,
            )
            if c.type == DISRUPTION_TARGET
            else c
            for c in pod.status.conditions
        ]
        try:
            await self.client.update_status(replace(pod, status=replace(pod.status, conditions=conditions)))
        except ApiError:
            self.stale_queue.add_rate_limited(key)
            return
        self.stale_resets += 1
        self.stale_queue.forget(key)

    async def _fail_safe(self, pdb: PodDisruptionBudget, message: str) -> bool:
        """Upstream ``failSafe``; False if even that write failed (then the key is retried)."""
        status = fail_safe_status(pdb, message, self.clock.timestamp())
        try:
            await self.client.update_status(_with_status(pdb, status))
        except ApiError:
            return False
        self.status_writes += 1
        return True


def _replicas(obj: Any) -> int:
    replicas: int | None = obj.spec.replicas
    return 1 if replicas is None else replicas


def _with_status(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus) -> PodDisruptionBudget:
    return replace(pdb, status=status)
