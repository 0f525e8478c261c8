"""The pods of one kubelet and the work on each: upstream's pod workers, in small.

This module owns ``PodWorker``, which runs an admitted pod (its record on the node,
``PodRecord`` and ``PodState``, is ``podrecord.py``'s): the Pending status, the wait for its claim volumes
(``volumewait``: bound, attached) and ConfigMap/Secret volumes, its ResourceClaims
(``dra``: reserved for it, prepared by their drivers), the image pulls, the start
delay (or a start-failure fault), then the run of its containers (``podrun.PodRun``)
with one timer per pod: sleep until the run's next event, apply it, write the status
(``runstatus.py``; ``succeeded_status`` for a success), a ``BackOff`` Event when a
container enters CrashLoopBackOff. It also resumes a pod adopted after a kubelet restart.
A pod's timed steps stay on a timer of its own rather than a shared heap (``ticker.py``):
their due times hardly ever coincide (on ``churn-1000nodes-1h``, 6,000 sleeps at 6,000
distinct instants in 2 simulated minutes), so a heap would still wake the loop once per
due time and add a hand-off to the pod's task on top.
``run_pod`` is split into the stages (``after_pending``, ``start_run``, ``after_started``,
``drive``, ``after_write``) that ``podsteps.py`` also builds on: it runs a plain pod's steps
from the kubelet's handles with the same builders and first tries (``try_status``), and hands
the rest of a pod's life to a task from one of these stages when it must wait otherwise.
It does not admit, terminate or forget pods, nor account for them on the node
(``kubelet.py``, which gives it ``release`` to free what a finished pod held; a graceful
deletion is ``podkill.py``'s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agents.kubelet.configrefs import ConfigRefs, env_refs, volume_refs
from agents.kubelet.dra import ClaimPreparer
from agents.kubelet.images import ImageStore
from agents.kubelet.lifecycle import RUN_DURATION_ANNOTATION, Lifecycle, lifecycle_of
from agents.kubelet.nodestatus import normalize_image
from agents.kubelet.podapi import PodWriter
from agents.kubelet.podrecord import PodRecord, PodState
from agents.kubelet.podrun import PodRun, RunPhase
from agents.kubelet.podstatus import pending_status, start_failed_status, succeeded_status
from agents.kubelet.prober import KILLED_EXIT_CODE, prober_for
from agents.kubelet.resize import with_resize_status
from agents.kubelet.runstatus import run_status
from agents.kubelet.settings import KubeletSettings
from agents.kubelet.volumewait import VolumeWait, claim_volumes
from emulator.base.api.core import (
    Container,
    ContainerStatus,
    Pod,
    PodStatus,
)
from emulator.base.api.errors import ApiError
from emulator.base.runtime.clock import Clock, format_duration, parse_timestamp

__all__ = ["PodWorker", "RetryWrite"]


class PodWorker:
    """Runs the pods of the kubelet of ``node_name``; counts into ``counts``."""

    direct: bool = True
    """``write_status`` makes its first try itself when the client cannot suspend (False:
    always through ``PodWriter.write_status``, the general path the tests compare)."""

    def __init__(
        self,
        clock: Clock,
        settings: KubeletSettings,
        writer: PodWriter,
        images: ImageStore,
        node_name: str,
        counts: dict[str, int],
        release: Callable[[PodRecord], None],
        refs: ConfigRefs | None = None,
        volumes: VolumeWait | None = None,
        claims: ClaimPreparer | None = None,
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._writer = writer
        self.images = images
        self._node_name = node_name
        self._counts = counts
        self.release = release
        """Frees what a finished pod held (the kubelet's)."""
        self._refs = refs
        self._volumes = volumes
        self._claims = claims

    def __repr__(self) -> str:
        return f"<PodWorker {self._node_name}>"

    def lifecycle(self, pod: Pod) -> Lifecycle:
        life, bad = lifecycle_of(pod)
        for name in bad:
            key = "invalid_run_duration" if name == RUN_DURATION_ANNOTATION else "invalid_annotations"
            self._counts[key] += 1
        return life

    def pod_label(self, rec: PodRecord) -> str:
        """Upstream ``format.Pod``: ``name_namespace(uid)``."""
        return f"{rec.key[1]}_{rec.key[0]}({rec.uid})"

    async def run_pod(self, rec: PodRecord, host_ip: str) -> None:
        """A pod just admitted: Pending, images, start delay, then its run."""
        ips = {"host_ip": host_ip, "pod_ip": rec.pod_ip, "start_time": rec.start_time}
        if self._settings.report_pending_status:
            await self.write_status(rec, self.pending_build(ips))
        await self.after_pending(rec, ips)

    def pending_build(self, ips: dict[str, str]) -> Callable[[Pod], PodStatus]:
        """The builder of the Pending status written at admission."""
        stamp = self._clock.timestamp
        return lambda p: pending_status(p, now=stamp(), generation=p.metadata.generation, **ips)

    async def after_pending(self, rec: PodRecord, ips: dict[str, str]) -> None:
        """``run_pod`` after the Pending status: volumes, claims, images, start delay, the start."""
        spec = rec.pod.spec
        refs = self._refs
        if self._volumes is not None and spec.volumes and claim_volumes(spec):
            await self._volumes.wait(lambda: rec.pod)  # claims bound, CSI volumes attached
        if refs is not None and spec.volumes and volume_refs(spec):
            await refs.mount_volumes(lambda: rec.pod)
        if self._claims is not None and spec.resource_claims:
            await self._claims.prepare(lambda: rec.pod)  # DRA: claims reserved, NodePrepareResources
        announce = await self.pull(rec) if self._settings.container_events else None
        if announce is None:
            images = [c.image for c in (*spec.init_containers, *spec.containers)]
            if not self.images.all_present(images):  # else ``ensure`` returns at once
                await self.images.ensure(images)
        if refs is not None and env_refs(spec):
            now = self._clock.timestamp
            await refs.resolve_env(
                lambda: rec.pod,
                lambda build: self.write_status(rec, build),
                lambda p: pending_status(p, now=now(), generation=p.metadata.generation, **ips),
            )
        if rec.start_delay > 0:
            await self._clock.sleep(rec.start_delay)
        await self.start_run(rec, ips, announce)

    async def start_run(self, rec: PodRecord, ips: dict[str, str], announce: set[str] | None) -> None:
        """``run_pod`` after the start delay: a start failure (a fault) or the containers
        started (their status written), then the run."""
        faults = self._settings.faults
        failure = None if faults is None else faults.start_failure(self._node_name, rec.pod, self._clock.now())
        if failure is not None:
            await self._fail_start(rec, *failure, ips=ips)
            return
        runs: list[PodRun] = []
        started = self.started_build(rec, ips, announce, runs)
        await self.after_started(rec, await self.write_status(rec, started), runs, ips)

    def started_build(
        self, rec: PodRecord, ips: dict[str, str], announce: set[str] | None, runs: list[PodRun]
    ) -> Callable[[Pod], PodStatus]:
        """The builder of the status that reports the containers started; it starts them
        (``runs[:]``: a retried write restarts them)."""
        life, label = self.lifecycle(rec.pod), self.pod_label(rec)
        clock = self._clock

        def started(pod: Pod) -> PodStatus:
            prober = prober_for(pod.spec.containers, life, rec.pod_ip)
            fresh = None if announce is None else set(announce)
            runs[:] = [PodRun.start(pod.spec, life, label, clock.now(), prober, fresh)]
            now, generation = clock.now(), pod.metadata.generation
            return run_status(pod, runs[0], stamp=clock.timestamp, now=now, generation=generation, **ips)

        return started

    async def after_started(self, rec: PodRecord, written: Pod | None, runs: list[PodRun], ips: dict[str, str]) -> None:
        """The containers' start written (``written``; ``None``: nothing written, the pod is
        over): the run."""
        if written is None:
            return
        rec.state = PodState.RUNNING
        run = runs[0]
        run.anchor(self._clock.now())  # durations count from the write's end, as they always did
        if run.events:
            await self.container_events(rec.pod, run)
        await self.drive(rec, run, ips)

    async def _fail_start(self, rec: PodRecord, reason: str, message: str, *, ips: dict[str, str]) -> None:
        """A fault: the containers could not be started; the pod fails (no restarts)."""
        rec.state = PodState.FAILED
        self.release(rec)
        self._counts["start_failures"] += 1
        written = await self.write_status(
            rec,
            lambda p: start_failed_status(p, reason=reason, message=message, now=self._clock.timestamp(), **ips),
        )
        if written is not None:
            await self._writer.record_event(written, "Warning", "Failed", f"Error: {message}")

    async def resume_pod(self, rec: PodRecord) -> None:
        """An adopted Running pod: its run goes on from its containers' ``startedAt`` (as
        far as whole-second timestamps tell); a container waiting to restart restarts now."""
        statuses = rec.pod.status.container_statuses
        started = [cs.state.running.started_at for cs in statuses if cs.state.running]
        running = len(started) == len(statuses)
        since = (
            parse_timestamp(min((s for s in started if s), default=rec.start_time)) if running else self._clock.now()
        )
        last_exit = None if running else self._last_exit(statuses)
        await self._adopt_and_drive(rec, since, running, running and all(cs.ready for cs in statuses), last_exit)

    async def restart_for_resize(self, rec: PodRecord, names: list[str]) -> None:
        """A resize whose ``resizePolicy`` is ``RestartContainer``: the running containers are
        killed (exit 143, a ``Killing`` Event each) and started again at once, as upstream's
        ``computePodResizeAction`` puts them in ``ContainersToKill`` and ``ContainersToStart``."""
        now = self._clock.now()
        statuses = rec.pod.status.container_statuses
        started = [parse_timestamp(cs.state.running.started_at) for cs in statuses if cs.state.running]
        for name in names:
            await self.event(rec.pod, "Normal", "Killing", f"Container {name} resize requires restart", name)
        await self._adopt_and_drive(rec, now, False, False, (min(started, default=now), now, KILLED_EXIT_CODE))

    async def _adopt_and_drive(
        self,
        rec: PodRecord,
        started: float,
        running: bool,
        ready: bool,
        last_exit: tuple[float | None, float, int] | None,
    ) -> None:
        """Take the pod's containers over as its status shows them (``PodRun.adopt``) and run on."""
        life = self.lifecycle(rec.pod)
        run = PodRun.adopt(
            rec.pod.spec,
            life,
            self.pod_label(rec),
            started=started,
            running=running,
            restarts=max((cs.restart_count for cs in rec.pod.status.container_statuses), default=0),
            ready=ready,
            last_exit=last_exit,
            prober=prober_for(rec.pod.spec.containers, life, rec.pod_ip),
            now=self._clock.now(),
        )
        ips = {"host_ip": rec.pod.status.host_ip, "pod_ip": rec.pod_ip, "start_time": rec.start_time}
        await self.drive(rec, run, ips)

    @staticmethod
    def _last_exit(statuses: Sequence[ContainerStatus]) -> tuple[float | None, float, int] | None:
        """The exit a container not running waits after, from its ``lastState`` (or state)."""
        for cs in statuses:
            if cs.state.running is None:
                term = cs.state.terminated or cs.last_state.terminated
                if term is not None and term.finished_at:
                    started = parse_timestamp(term.started_at) if term.started_at else None
                    return started, parse_timestamp(term.finished_at), term.exit_code
        return None

    async def drive(self, rec: PodRecord, run: PodRun, ips: dict[str, str]) -> None:
        """Sleep until the run's next event, do it, write the status; until the run is
        over or nothing is left to happen (one timer per pod)."""
        while (event := run.next_event()) is not None:
            origin, delay = event
            if origin == self._clock.now():
                await self._clock.sleep(delay)
            else:
                await self._clock.sleep_until(origin + delay)
            backoffs = run.advance(self._clock.now())
            if run.phase is RunPhase.DONE:
                await self._finish(rec, run, ips)
                if run.events:
                    await self.container_events(rec.pod, run)
                return
            written = rec.pod if run.quiet else await self.write_status(rec, self.run_build(run, ips))
            if written is None:
                return
            if run.events or backoffs:
                await self.after_write(rec, run, written, backoffs)

    async def after_write(self, rec: PodRecord, run: PodRun, written: Pod, backoffs: list[str]) -> None:
        """After the status written for one of the run's events: the run's container Events,
        then a ``BackOff`` Event for each container that entered CrashLoopBackOff."""
        if run.events:
            await self.container_events(written, run)
        for name in backoffs:
            self._counts["backoffs"] += 1
            message = f"Back-off restarting failed container {name} in pod {self.pod_label(rec)}"
            await self._writer.record_event(written, "Warning", "BackOff", message)

    async def pull(self, rec: PodRecord) -> set[str]:
        """The images of the pod's containers, with upstream's ``Pulling`` and ``Pulled``
        Events (``pkg/kubelet/images/image_manager.go`` ``EnsureImageExists``) for each
        container whose image is not on the node (the first that names it); those
        containers' names."""
        spec, pod = rec.pod.spec, rec.pod
        containers = (*spec.init_containers, *spec.containers)
        fresh: dict[str, Container] = {}
        for c in containers:
            if not self.images.has(c.image) and c.image not in fresh:
                fresh[c.image] = c
        asked = self._clock.now()
        for c in fresh.values():
            await self.event(pod, "Normal", "Pulling", f'Pulling image "{c.image}"', c.name)
        await self.images.ensure([c.image for c in containers])
        waited = format_duration(self._clock.now() - asked)
        for c in fresh.values():
            pulled = format_duration(self.images.pull_time.get(normalize_image(c.image), 0.0))
            size = self.images.size_of(c.image)
            message = (
                f'Successfully pulled image "{c.image}" in {pulled} ({waited} including waiting). '
                f"Image size: {size} bytes."
            )
            await self.event(pod, "Normal", "Pulled", message, c.name)
        return {c.name for c in fresh.values()}

    async def event(self, pod: Pod, type_: str, reason: str, message: str, container: str) -> None:
        """An Event about one of ``pod``'s containers (``spec.containers{web}``)."""
        group = "initContainers" if any(c.name == container for c in pod.spec.init_containers) else "containers"
        await self._writer.record_event(pod, type_, reason, message, field_path=f"spec.{group}{{{container}}}")

    async def container_events(self, pod: Pod, run: PodRun) -> None:
        """The Events the run asked for (starts, probes' Unhealthy, Killing)."""
        if not run.events:
            return
        events, run.events = run.events, []
        for type_, reason, message, container in events:
            await self.event(pod, type_, reason, message, container)

    def run_build(self, run: PodRun, ips: dict[str, str]) -> Callable[[Pod], PodStatus]:
        """The builder of the status of ``run`` now (``run_status``)."""
        clock = self._clock
        return lambda p: run_status(
            p, run, stamp=clock.timestamp, now=clock.now(), generation=p.metadata.generation, **ips
        )

    def succeeded_build(self) -> Callable[[Pod], PodStatus]:
        """The builder of the Succeeded status (``succeeded_status``)."""
        now = self._clock.timestamp
        return lambda p: succeeded_status(p, now=now(), generation=p.metadata.generation)

    async def _finish(self, rec: PodRecord, run: PodRun, ips: dict[str, str]) -> None:
        """The run is over: Succeeded (as upstream writes it whatever the way there) or Failed."""
        self.release(rec)
        if run.result == "Succeeded":
            rec.state = PodState.SUCCEEDED
            if await self.write_status(rec, self.succeeded_build()):
                self._counts["succeeded"] += 1
            return
        rec.state = PodState.FAILED
        if await self.write_status(rec, self.run_build(run, ips)):
            self._counts["failed"] += 1

    async def write_status(
        self, rec: PodRecord, build: Callable[[Pod], PodStatus], *, deleting: bool = False
    ) -> Pod | None:
        """Write ``build(pod)`` as the pod's status, its resize state and observed generation
        added (``with_resize_status``); keep the written pod as the newest. ``deleting``: the
        terminal status of a terminating pod (``PodWriter.write_status``).

        With a client whose calls cannot suspend, the writer's first try is made at once
        (``try_status``, without ``PodWriter.write_status``'s coroutine); a failure goes to the
        writer's retry loop as that first try hands it over (``finish_status``).
        ``tests/kubelet/test_write_status_fastpath.py`` compares both ways."""
        if self.direct and self._writer.client.instant("Pod"):
            first = self.try_status(rec, build, deleting)
            if isinstance(first, RetryWrite):
                return await self.finish_status(rec, first)
            return first
        token, writing, current = object(), rec.writing, rec.pod  # this write's own slot

        def noted(p: Pod) -> PodStatus:
            status = writing[token] = with_resize_status(rec, build(p), p.metadata.generation)
            return status

        try:
            written = await self._writer.write_status(current, rec.uid, noted, deleting=deleting)
        finally:
            writing.pop(token, None)
        return self._keep(rec, written)

    def try_status(
        self, rec: PodRecord, build: Callable[[Pod], PodStatus], deleting: bool = False
    ) -> Pod | RetryWrite | None:
        """``write_status``' first try, made at once by a caller that checked
        ``client.instant("Pod")`` (``PodWriter.first_try``): the written pod (kept as the
        newest), ``None`` when nothing may be written, or the ``RetryWrite`` that
        ``finish_status`` takes up (the status being written still noted in ``rec.writing``)."""
        token, writing, current = object(), rec.writing, rec.pod  # this write's own slot

        def noted(p: Pod) -> PodStatus:
            status = writing[token] = with_resize_status(rec, build(p), p.metadata.generation)
            return status

        try:
            first = self._writer.first_try(current, rec.uid, noted, deleting)
        except BaseException:
            writing.pop(token, None)
            raise
        if isinstance(first, ApiError):
            return RetryWrite(token, current, noted, deleting, first)
        writing.pop(token, None)
        return self._keep(rec, first)

    async def finish_status(self, rec: PodRecord, retry: RetryWrite) -> Pod | None:
        """A write whose first try (``try_status``) failed, through the writer's retry loop
        (``PodWriter.retry_status``)."""
        try:
            written = await self._writer.retry_status(retry.current, rec.uid, retry.build, retry.deleting, retry.error)
        finally:
            rec.writing.pop(retry.token, None)
        return self._keep(rec, written)

    @staticmethod
    def _keep(rec: PodRecord, written: Pod | None) -> Pod | None:
        if written is not None:
            known = rec.pod  # ``newer(known, written)``, written out
            if known is not written and int(written.metadata.resource_version or 0) > int(
                known.metadata.resource_version or 0
            ):
                rec.pod = written
            rec.reported = written.status
        return written


@dataclass(frozen=True, slots=True)
class RetryWrite:
    """A status write whose first try failed: what ``PodWorker.finish_status`` retries."""

    token: object
    current: Pod
    build: Callable[[Pod], PodStatus]
    deleting: bool
    error: ApiError
