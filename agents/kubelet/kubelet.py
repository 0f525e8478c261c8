"""``Kubelet``: one node's agent. Admits the pods bound to its node, pulls their images,
starts them, runs their containers (exits, restarts, init containers), and confirms
their graceful deletion.

It talks to nothing but the API server, through its ``Client``: a pod informer filtered
by ``spec.nodeName`` (the hub routes it by node, so 5,000 kubelets cost nothing per
event) and a node informer on its own Node. Admission (``admission.py``) and what the
containers do over time (``podrun.py``) are pure; status shapes are in ``podstatus.py``
and ``runstatus.py``; a pod's work from admission on (pending status, pulls, start, the
run's timer) in ``podworker.py``; graceful deletion (the ``terminating`` row below) in
``podkill.py``; pod writes and their retries in ``podapi.py``; images in ``images.py``; node
status and Lease writes in ``heartbeat.py`` (and ``leasewriter.py``). Every delay is a
``clock`` sleep and every random draw comes from ``rng``; every task lives in the
kubelet's task group, named ``kubelet:<node>:<role>[:<namespace>/<pod>]``. Given a
``ticker`` (``ticker.py``; the scenario runner shares one among all its kubelets), the
heartbeats after the first are fired from its heap instead of a timer of this kubelet's.

A pod's life on this node (one record per pod, keyed by namespace/name, tied to a UID):

===========  ============================================  =================================
state        on                                            next
===========  ============================================  =================================
(new)        seen, not terminal, no deletionTimestamp      queued
queued       admission worker: rejected                    rejected (status Failed, Event)
queued       admission worker: admitted                    starting (counted on the node)
starting     Pending status, images pulled, start delay    running (containers started:
                                                           status Pending while init
                                                           containers run, else Running)
running      the run's next event (``podrun.py``: an       running (a status write; a
             init container ends, the containers turn      ``BackOff`` Event when a container
             ready, exit, restart)                         enters CrashLoopBackOff)
running      the run is over (``restartPolicy``)           succeeded / failed (released;
                                                           Succeeded / Failed)
any live     deletionTimestamp set                         terminating
terminating  ``termination`` time (running only; capped    (released; its terminal status,
             by the grace period; a shorter new grace      ``deletedstatus.py``: Failed if
             shortens it)                                  it never started; delete grace
                                                           0 + UID)
any          DELETED (or a new UID under the name)         gone (task cancelled, released)
===========  ============================================  =================================

Admission runs in one worker task, in arrival order (each batch sorted by creation time,
as upstream's ``HandlePodAdditions``), against the kubelet's own accounting of the pods it
admitted (``NodeUsage``), never the scheduler's. When node affinity is the only failure,
the worker re-reads the Node from the API and checks again, as upstream does, so a label
added just before the binding is not missed because the node watch lags.

A running pod has one timer, its task: it sleeps until the run's next event, applies it
and writes the status. A plain pod (``podsteps.py``: nothing to wait for but the clock and
its writes) has no task: the same steps run from the kubelet's loop handles, at the same
places among them. Durations count from the end of the write that reported the
containers started. A pod with no lifecycle annotations but ``run-duration`` writes what
it always did: Pending, Running, Succeeded.

A pod already Running when the kubelet starts (a kubelet restart) is re-admitted and,
if admitted, adopted as it is: no new pull, start or status write; its run goes on from
its containers' ``startedAt`` with its ``restartCount``, and a container that was waiting
to restart restarts at once (the back-off is forgotten, as upstream's is).

Memory: ``_pods`` (and the pod workers, admission's ``NodeUsage``, the pod IPs) hold the
pods bound to this node until their DELETED event (the "gone" row), so a node's state follows
its live pods; ``_rejections`` counts by reason.

Fault injection (``KubeletSettings.faults``, absent by default): after the start delay a
``containerStartFailure`` may fail the pod instead (``starting`` → ``failed``: status
Failed with the fault's reason, a ``Failed`` Warning Event, released); heartbeat and pull
faults act in ``heartbeat.py`` and ``images.py``.

Deviations from upstream, kept on purpose: a bare pod (no controller) under the default
``restartPolicy: Always`` without an ``emulator.k8s.io/exit-code`` annotation succeeds
after its run duration instead of restarting (the annotation models a finite workload;
see ``lifecycle.py``); every regular container of a pod shares the pod's annotations, so
they exit and restart together; a restart happens exactly when its back-off ends (not at
the next pod sync); an exit and a CrashLoopBackOff are reported in one write; the
images of all a pod's containers are pulled before the first starts (their ``Pulling``/
``Pulled`` Events come first; ``Created``/``Started`` as each starts; ``Killing`` when a
graceful delete starts; ``KubeletSettings.container_events``); a container
image change does not restart the container; pod IPs come round-robin from the node's
pod CIDR.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Coroutine
from typing import Any, Final

from agents.kubelet.admission import NODE_AFFINITY, AdmissionResult, NodeUsage, admission_failures
from agents.kubelet.configrefs import ConfigRefs
from agents.kubelet.dra import ClaimPreparer
from agents.kubelet.heartbeat import NodeReporter
from agents.kubelet.images import ImageStore
from agents.kubelet.lifecycle import RUN_DURATION_ANNOTATION
from agents.kubelet.nodestatus import PodIPs, host_ip, pod_cidr
from agents.kubelet.podapi import PodWriter
from agents.kubelet.podkill import PodKiller
from agents.kubelet.podrecord import Key, PodRecord, PodState
from agents.kubelet.podstatus import reconciled_status, rejected_status
from agents.kubelet.podsteps import PodSteps
from agents.kubelet.podworker import PodWorker
from agents.kubelet.resize import Resizer
from agents.kubelet.settings import KubeletSettings
from agents.kubelet.ticker import Ticker
from agents.kubelet.volumewait import VolumeWait
from emulator.base.api.core import Node, Pod
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock

__all__ = ["INVALID_NODE_INFO", "RUN_DURATION_ANNOTATION", "Kubelet", "PodState"]

INVALID_NODE_INFO: Final = AdmissionResult("InvalidNodeInfo", "Kubelet cannot get node info.")
_TERMINAL: Final = ("Succeeded", "Failed")
_COUNTERS: Final = ("admitted", "rejected", "succeeded", "failed", "terminated", "start_failures", "backoffs")
_COUNTERS_INVALID: Final = ("invalid_run_duration", "invalid_annotations")


def _created(rec: PodRecord) -> str:
    return rec.pod.metadata.creation_timestamp or ""


class Kubelet:
    """The kubelet of node ``node_name``; ``await run()`` until cancelled."""

    def __init__(
        self,
        client: Client,
        node_name: str,
        clock: Clock,
        rng: random.Random,
        settings: KubeletSettings | None = None,
        *,
        ticker: Ticker | None = None,
    ) -> None:
        self.client = client
        self.node_name = node_name
        self.clock = clock
        self.settings = settings = settings or KubeletSettings()
        self.ready = asyncio.Event()
        """Set once both informers have synced and the node's status has been written."""
        self._rng = rng
        self._ticker = ticker
        self._prefix = f"kubelet:{node_name}"
        self._tg: asyncio.TaskGroup | None = None
        self._started = False
        self._pods: dict[Key, PodRecord] = {}
        self._usage = NodeUsage()
        self._queue: deque[PodRecord] = deque()
        self._admit_waiter: asyncio.Future[None] | None = None
        """The admission worker's wait for a pod queued (a plain future: an ``Event`` per
        kubelet made and dropped a future per wait all the same, in three more frames)."""
        self._admitting = False
        self._node_seen = asyncio.Event()
        self._host_ip = ""
        self._pod_ips = PodIPs()
        ids = (f"{rng.getrandbits(128):032x}", f"{rng.getrandbits(128):032x}", f"{rng.getrandbits(128):032x}")
        self._images = ImageStore(
            clock,
            settings,
            spawn=self._spawn,
            on_pulled=self._images_changed,
            task_prefix=self._prefix,
            node_name=node_name,
        )
        self._reporter = NodeReporter(client, clock, node_name, settings, self._images, ids)
        self._counts = dict.fromkeys((*_COUNTERS, *_COUNTERS_INVALID), 0)
        self._rejections: dict[str, int] = {}
        self._writer = PodWriter(client, clock, node_name)
        self._refs = ConfigRefs(clock, rng, self._writer.get, self._writer.record_event)
        self._volumes = VolumeWait(clock, client, node_name, self._writer.record_event, self._prefix)
        self._claims = ClaimPreparer(client, node_name, self._writer.record_event, self._prefix, settings.dra_plugins)
        self._worker = PodWorker(
            clock,
            settings,
            self._writer,
            self._images,
            node_name,
            self._counts,
            self._release,
            self._refs,
            self._volumes,
            self._claims,
        )
        self._steps = PodSteps(
            self._worker,
            client,
            clock,
            settings,
            self._counts,
            self._spawn,
            self._prefix,
            self._refs,
            self._volumes,
            self._claims,
        )
        self._steps.on_abort = self._abort_steps
        self._killer = PodKiller(
            clock,
            rng,
            settings,
            self._worker,
            self._writer,
            self._counts,
            self._release,
            lambda: self._host_ip,
            self._spawn,
            self._prefix,
        )
        self._resizer = Resizer(
            clock, self._usage, lambda: self._reporter.node, self._worker, self._spawn, self._prefix
        )
        self._pod_informer = Informer(client, "Pod", fields={"spec.nodeName": node_name})
        self._pod_informer.add_handlers(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self._node_informer = Informer(client, "Node", fields={"metadata.name": node_name})
        self._node_informer.add_handlers(self._on_node, lambda _old, new: self._on_node(new), self._on_node_delete)

    def __repr__(self) -> str:
        state = "ready" if self.ready.is_set() else "starting"
        return (
            f"<Kubelet {self.node_name} {state} pods={len(self._pods)} active={self._usage.pods} "
            f"images={len(self._images)} pulls={self._images.pulls}>"
        )

    def statistics(self) -> dict[str, Any]:
        """A snapshot of counters and current state (observability as data)."""
        states = {s.value: 0 for s in PodState}
        for rec in self._pods.values():
            states[rec.state.value] += 1
        return {
            "node": self.node_name,
            "ready": self.ready.is_set(),
            **self._counts,
            "rejections": dict(sorted(self._rejections.items())),
            "active": self._usage.pods,
            "running": states["running"],
            "starting": states["starting"],
            "terminating": states["terminating"],
            "pulls": self._images.pulls,
            "pulls_shared": self._images.shared,
            "pulled_bytes": self._images.pulled_bytes,
            "images": len(self._images),
            "pod_status_writes": self._writer.status_writes,
            "node_status_writes": self._reporter.status_writes,
            "lease_writes": self._reporter.lease_writes,
            "conflicts": self._writer.conflicts + self._reporter.conflicts,
            "api_errors": self._writer.api_errors + self._reporter.api_errors,
        }

    # --- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled; ``ready`` is set once the kubelet is up. A Kubelet runs
        once: a restarted kubelet is a new ``Kubelet`` (it adopts the running pods)."""
        if self._started:
            raise RuntimeError(f"{self!r} has already run; create a new Kubelet to restart it")
        self._started = True
        try:
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                self._watched(tg.create_task(self._pod_informer.run(), name=f"{self._prefix}:informer:pods"))
                self._watched(tg.create_task(self._node_informer.run(), name=f"{self._prefix}:informer:node"))
                await self._pod_informer.synced.wait()
                await self._node_informer.synced.wait()
                await self._node_seen.wait()
                await self._reporter.write_status()
                self._watched(tg.create_task(self._reporter.run_status_loop(), name=f"{self._prefix}:node-status"))
                if self.settings.heartbeat_interval > 0:
                    self._watched(
                        tg.create_task(self._reporter.run_heartbeats(self._ticker), name=f"{self._prefix}:heartbeat")
                    )
                self._watched(tg.create_task(self._admission_loop(), name=f"{self._prefix}:admission"))
                self.ready.set()
                try:
                    await asyncio.get_running_loop().create_future()  # until cancelled
                finally:
                    # the pods on handles stop in the step that aborts the group, as its tasks
                    self._steps.stop(self._pods.values())
        finally:
            self._tg = None
            self.ready.clear()

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        if self._tg is None:
            coro.close()
            raise RuntimeError(f"{self!r} is not running")
        return self._watched(self._tg.create_task(coro, name=name))

    def _watched(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        """``task`` of the kubelet's group, whose failure also stops the pods on handles in
        the step where the group aborts (its done callback runs right after the group's)."""
        task.add_done_callback(self._child_done)
        return task

    def _child_done(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._abort_steps()

    def _abort_steps(self) -> None:
        """Stop every pod on handles (``PodSteps.stop``): the group aborts, as its tasks."""
        self._steps.stop(self._pods.values())

    def _images_changed(self) -> None:
        self._reporter.images_changed()

    # --- node informer ------------------------------------------------------------------

    def _on_node(self, node: Node) -> None:
        self._reporter.observe(node)
        if not self._node_seen.is_set():
            self._host_ip = host_ip(node)
            self._pod_ips = PodIPs(pod_cidr(node))
            self._images.seed(node.status.images)
            self._node_seen.set()

    def _on_node_delete(self, _node: Node) -> None:
        self._reporter.observe(None)

    # --- pod informer -------------------------------------------------------------------

    def _on_pod_add(self, pod: Pod) -> None:
        self._on_pod_update(None, pod)

    def _on_pod_delete(self, pod: Pod) -> None:
        self._forget(pod)

    def _on_pod_update(self, _old: Pod | None, pod: Pod) -> None:
        """A pod seen (added or updated: ≈ 3 events a pod, the handler's body is the whole
        observation); a new UID under the same name (a relist) forgets the old pod first.

        Most events are this kubelet's own status writes coming back (handed in place before
        the write returns): for them the body is one frame, ``_key`` and ``newer`` written
        out, and a resize not looked for when the record is ``settled`` (``resize.py``: the
        same spec, still allocated as it asks, so ``Resizer.observe`` would return at once)."""
        meta = pod.metadata
        key = (meta.namespace, meta.name)
        rec = self._pods.get(key)
        if rec is not None and rec.uid != meta.uid:
            self._forget(rec.pod)
            rec = None
        if rec is None:
            if pod.status.phase in _TERMINAL:
                return  # finished elsewhere (or before this kubelet started): nothing to run
            rec = self._pods[key] = PodRecord(key, meta.uid, pod)
            if meta.deletion_timestamp is not None:
                self._killer.terminate(rec)
            else:
                self._queue.append(rec)
                waiter = self._admit_waiter
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)  # wakes the admission worker (one handle)
            return
        known = rec.pod
        # ``newer(known, pod)``, written out
        if known is not pod and int(meta.resource_version or 0) > int(known.metadata.resource_version or 0):
            rec.pod = known = pod
        if known is pod:
            state = rec.state
            if state is PodState.RUNNING and rec.needs_reconcile(pod.status):
                self._reconcile(rec)
            if (state is PodState.STARTING or state is PodState.RUNNING) and meta.deletion_timestamp is None:
                after = bool(self._queue) or self._admitting
                resizer = self._resizer
                # ``resize.settled(rec)`` written out (``rec.pod`` is ``pod`` here): keep the two alike
                if (
                    after
                    or not resizer.shortcut
                    or rec.resize_spec is not pod.spec
                    or rec.resize_alloc is not rec.allocated
                    or rec.resize_conditions
                ):
                    resizer.request(rec, after_admissions=after)
        if meta.deletion_timestamp is not None:
            if rec.state is PodState.TERMINATING:
                self._killer.shorten_grace(rec)
            elif rec.state is not PodState.GONE:
                self._killer.terminate(rec)
        elif pod.status.phase in _TERMINAL and rec.state in (PodState.QUEUED, PodState.STARTING, PodState.RUNNING):
            self._stop(rec)  # made terminal by someone else: nothing to run any more
            rec.state = PodState.SUCCEEDED if pod.status.phase == "Succeeded" else PodState.FAILED

    def _forget(self, pod: Pod) -> None:
        rec = self._pods.get((pod.metadata.namespace, pod.metadata.name))
        if rec is None or rec.uid != pod.metadata.uid:
            return
        del self._pods[rec.key]
        self._stop(rec)
        rec.state = PodState.GONE

    def _stop(self, rec: PodRecord) -> None:
        if rec.task is not None:
            rec.task.cancel()
            rec.task = None
        self._release(rec)

    def _release(self, rec: PodRecord) -> None:
        if self._usage.remove(rec.uid):
            self._resizer.released(rec)
        self._claims.release(rec.uid)  # NodeUnprepareResources of the claims no pod here uses
        if rec.pod_ip and rec.pod_ip != self._host_ip:
            self._pod_ips.release(rec.pod_ip)
        rec.pod_ip = ""

    # --- admission ----------------------------------------------------------------------

    async def _admission_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._queue:  # nothing queued since the last batch was taken: wait for one
                waiter: asyncio.Future[None] = asyncio.Future(loop=loop)
                self._admit_waiter = waiter
                try:
                    await waiter
                finally:
                    self._admit_waiter = None
            queue = self._queue
            batch = sorted(queue, key=_created) if len(queue) > 1 else list(queue)
            self._queue.clear()
            self._admitting = True
            for rec in batch:
                await self._admit(rec)
            self._admitting = False
            self._resizer.flush()  # the resizes that came after these pods, in order

    def _still_queued(self, rec: PodRecord) -> bool:
        return rec.state is PodState.QUEUED and self._pods.get(rec.key) is rec

    async def _admit(self, rec: PodRecord) -> None:
        if not self._still_queued(rec):
            return
        node = self._reporter.node
        if node is None:
            self._reject(rec, INVALID_NODE_INFO)
            return
        failures = admission_failures(rec.pod, node, self._usage)
        if failures and all(f.reason == NODE_AFFINITY for f in failures):
            fresh = await self._writer.get("Node", self.node_name)
            if not self._still_queued(rec):
                return
            if fresh is not None:
                failures = admission_failures(rec.pod, fresh, self._usage)
        if failures:
            self._reject(rec, failures[0])
        else:
            self._start(rec)

    def _reject(self, rec: PodRecord, result: AdmissionResult) -> None:
        rec.state = PodState.REJECTED
        self._counts["rejected"] += 1
        self._rejections[result.reason] = self._rejections.get(result.reason, 0) + 1
        rec.task = self._spawn(self._write_rejection(rec, result), f"{self._prefix}:reject:{rec.label}")

    async def _write_rejection(self, rec: PodRecord, result: AdmissionResult) -> None:
        written = await self._worker.write_status(rec, lambda p: rejected_status(p, result.reason, result.message))
        if written is not None:
            await self._writer.record_event(written, "Warning", result.reason, result.message)

    # --- a pod's lifecycle --------------------------------------------------------------

    def _start(self, rec: PodRecord) -> None:
        self._usage.add(rec.uid, rec.pod)
        self._resizer.admitted(rec)
        self._counts["admitted"] += 1
        status = rec.pod.status
        if status.phase == "Running" and status.start_time:
            # Running before this kubelet started (a kubelet restart): its containers
            # survived, so adopt it as it is and only keep its run-duration clock.
            rec.state = PodState.RUNNING
            rec.start_time = status.start_time
            rec.pod_ip = status.pod_ip
            if rec.pod_ip and rec.pod_ip != self._host_ip:
                self._pod_ips.claim(rec.pod_ip)
            rec.task = self._spawn(self._worker.resume_pod(rec), f"{self._prefix}:pod:{rec.label}")
            return
        rec.state = PodState.STARTING
        rec.start_time = self.clock.timestamp()
        rec.pod_ip = self._host_ip if rec.pod.spec.host_network else self._pod_ips.allocate()
        rec.start_delay = self.settings.container_start.sample(self._rng)
        steps = self._steps
        if steps.plain(rec):
            rec.task = steps.start(rec, self._host_ip)
        else:
            rec.task = self._spawn(self._worker.run_pod(rec, self._host_ip), f"{self._prefix}:pod:{rec.label}")

    def _reconcile(self, rec: PodRecord) -> None:
        """Someone else changed a condition this kubelet reports (the node lifecycle
        controller's ``MarkPodsNotReady``): write the kubelet's own back, as upstream's
        status manager does (``needsReconcile``) at once rather than at its next 10 s batch."""
        if rec.reconciling:
            return
        rec.reconciling = True

        async def write() -> None:
            try:
                await self._worker.write_status(rec, lambda p: reconciled_status(p.status, rec.reported))
            finally:
                rec.reconciling = False

        self._spawn(write(), f"{self._prefix}:reconcile:{rec.label}")
