"""A plain pod's life on the kubelet's own loop handles, without a task of its own.

This module owns ``PodSteps``: for a pod whose life needs no wait but the clock's and its own
writes' (no volume, claim or ConfigMap/Secret wait, no probe, no start-failure fault, a client
whose calls cannot suspend), the steps ``PodWorker.run_pod`` would take, taken from the loop's
handles: the first one writes Pending, pulls or checks the images, starts the containers
(their status written), and each of the run's events (``podrun.py``: ready, exit, an init
container's end, a restart) is a timer that hands the next step to the ready queue, which
writes the status and sets the next timer; the last writes Succeeded or Failed. The handles
stand where the pod's task had its steps: the first step in the ready queue where the task's
first step was (``call_soon`` at admission), a timer at the instant the task's sleep set its
own (``call_at``, the same deadline computed the same way), and on firing a step queued where
the timer's future queued the task's wake-up. So every write happens at the same instant, in
the same order against every other handle, as from the task; ``tests/kubelet/test_pod_steps.py``
plays pods both ways and compares every write.

A pull and the container Events (``Pulling``, ``Pulled``, ``Created``, ``Started``,
``BackOff``) are coroutines that may wait on something else than the clock: they are stepped
as the pod's task steps them (``_step``: resumed from the callback of the future they wait on,
queued where the task's wake-up would be; with an instant client most finish in the step).
A status write whose first try fails (a Conflict, NotFound: the retry loop) is left to a task
after all: the coroutine that does the rest (``PodWorker``'s, from that point) is started at
once, in the step (``_carry``), and handed to a task (``handover.Resumed``) named as the pod's
(``kubelet:<node>:pod:<ns>/<name>``) only if it waits; its first wait is then on a clock timer
(a retry's backoff, the run's sleep), where the task's first step keeps the wake-up in place.

A pod's ``PodRecord.task`` holds its ``FastRun`` (``cancel()`` stops it as a task's cancel
would: no further step, the future waited for cancelled, a cancel thrown in on waking; a step
that cancels its own pod, through an echo of its own write, sets no further timer, as its task
would have stopped at its next wait); the kubelet cancels them all when its run ends
(``Kubelet.run``), in the step where its task group is aborted. An exception in a step is
raised in a task of the kubelet's group, which fails as the pod's task would have made it fail.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from agents.kubelet.configrefs import ConfigRefs, env_refs, volume_refs
from agents.kubelet.handover import Resumed
from agents.kubelet.podrecord import PodRecord, PodState
from agents.kubelet.podrun import PodRun, RunPhase
from agents.kubelet.podworker import PodWorker, RetryWrite
from agents.kubelet.settings import KubeletSettings
from agents.kubelet.volumewait import claim_volumes
from emulator.base.api.core import Pod, PodSpec, PodStatus
from emulator.base.client.client import Client
from emulator.base.runtime.clock import MAX_DURATION_SECONDS, Clock

__all__ = ["FastRun", "PodSteps"]

Spawn = Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]]


class FastRun:
    """A pod run by ``PodSteps``: the handle of its next step (``None``: nothing pending)."""

    __slots__ = ("announce", "cancelled", "handle", "ips", "rec", "run", "waiting")

    def __init__(self, rec: PodRecord, ips: dict[str, str]) -> None:
        self.rec = rec
        self.ips = ips
        self.run: PodRun | None = None
        self.announce: set[str] | None = None
        self.handle: asyncio.Handle | None = None
        self.waiting: asyncio.Future[Any] | None = None
        """The future its pull or Event write waits for (``PodSteps._step``), if any."""
        self.cancelled = False

    def __repr__(self) -> str:
        return f"<FastRun {self.rec.label} cancelled={self.cancelled} pending={self.handle is not None}>"

    def cancel(self) -> bool:
        """No further step (``Task.cancel``: a step under way finishes, sets no timer)."""
        self.cancelled = True
        handle, self.handle = self.handle, None
        if handle is not None:
            handle.cancel()
        if self.waiting is not None:
            self.waiting.cancel()
        return True

    def done(self) -> bool:
        """Nothing pending: over, cancelled, or waiting for ever (no next event)."""
        return self.handle is None and self.waiting is None


class PodSteps:
    """The plain pods of one kubelet (``PodWorker``'s), on handles of ``loop``."""

    enabled: bool = True
    """False: every pod gets its task (``run_pod``), the general path the tests compare."""

    def __init__(
        self,
        worker: PodWorker,
        client: Client,
        clock: Clock,
        settings: KubeletSettings,
        counts: dict[str, int],
        spawn: Spawn,
        prefix: str,
        refs: ConfigRefs | None,
        volumes: object | None,
        claims: object | None,
    ) -> None:
        self._worker = worker
        self._client = client
        self._clock = clock
        self._settings = settings
        self._counts = counts
        self._spawn = spawn
        self.on_abort: Callable[[], None] | None = None
        """Stops every pod on handles (the kubelet's ``_abort_steps``), called when a step fails."""
        self._prefix = prefix
        self._refs = refs
        self._volumes = volumes
        self._claims = claims
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_clock = False
        self._context = contextvars.copy_context()

    def __repr__(self) -> str:
        return f"<PodSteps {self._prefix}>"

    # --- which pods ---------------------------------------------------------------------

    def plain(self, rec: PodRecord) -> bool:
        """Whether ``rec``'s pod may run on handles: nothing in its life but the clock and its
        writes would make its task wait (``run_pod``'s other waits, each ruled out by what
        cannot change: the settings, the immutable parts of the spec)."""
        settings = self._settings
        if not self.enabled or settings.faults is not None or not self._worker.direct:
            return False  # (``PodWorker.direct`` off: every write through the general path, tasks too)
        if not self._client.instant("Pod"):
            return False
        if self._loop is None:
            loop = asyncio.get_running_loop()
            # a LoopClock from the loop's 0 (``now`` is the loop's ``time``): clock times are loop times
            self._loop, self._loop_clock = loop, self._clock.now == loop.time
        if not self._loop_clock:
            return False
        spec = rec.pod.spec
        return not (
            (self._volumes is not None and spec.volumes and claim_volumes(spec))
            or (self._refs is not None and ((spec.volumes and volume_refs(spec)) or env_refs(spec)))
            or (self._claims is not None and spec.resource_claims)
            or _probed(spec)
        )

    def start(self, rec: PodRecord, host_ip: str) -> FastRun:
        """Run ``rec`` (``plain``) from its first step, queued as its task's would be."""
        fast = FastRun(rec, {"host_ip": host_ip, "pod_ip": rec.pod_ip, "start_time": rec.start_time})
        assert self._loop is not None
        fast.handle = self._loop.call_soon(self._first, fast, context=self._context)
        return fast

    # --- the steps ----------------------------------------------------------------------

    def _first(self, fast: FastRun) -> None:
        """``run_pod`` up to its first wait: Pending, the images, the start (or its delay)."""
        fast.handle = None
        try:
            rec, worker = fast.rec, self._worker
            if self._settings.report_pending_status:
                build = worker.pending_build(fast.ips)
                if not self._client.instant("Pod"):
                    self._carry(fast, self._pending_then(fast, build, None))
                    return
                first = worker.try_status(rec, build)
                if isinstance(first, RetryWrite):
                    self._carry(fast, self._pending_then(fast, build, first))
                    return
            if self._settings.container_events:  # ``Pulling``/``Pulled`` for the images not on the node
                self._step(fast, worker.pull(rec), self._pulled, _FIRST)
                return
            spec = rec.pod.spec
            images = [c.image for c in spec.containers]
            if spec.init_containers:
                images[:0] = [c.image for c in spec.init_containers]
            if not worker.images.all_present(images):
                self._step(fast, worker.images.ensure(images), self._ensured, _FIRST)
                return
            self._pulled(fast, None)
        except Exception as exc:
            self._crash(fast, exc)

    def _ensured(self, fast: FastRun, _pulls: int) -> None:
        self._pulled(fast, None)

    def _pulled(self, fast: FastRun, announce: set[str] | None) -> None:
        """The images present: the start, or its delay first (``announce``: the containers
        whose image this pod pulled, with container Events)."""
        fast.announce = announce
        try:
            rec = fast.rec
            delay = rec.start_delay
            if delay > 0:
                loop = self._loop
                assert loop is not None
                self._wait(fast, loop.time() + delay, self._start)
                return
            self._started(fast)
        except Exception as exc:
            self._crash(fast, exc)

    def _start(self, fast: FastRun) -> None:
        """``start_run``: the containers started, their status written, the run's first timer."""
        fast.handle = None
        try:
            self._started(fast)
        except Exception as exc:
            self._crash(fast, exc)

    def _started(self, fast: FastRun) -> None:
        rec, worker = fast.rec, self._worker
        runs: list[PodRun] = []
        build = worker.started_build(rec, fast.ips, fast.announce, runs)
        if not self._client.instant("Pod"):
            self._carry(fast, self._started_then(fast, build, None, runs))
            return
        first = worker.try_status(rec, build)
        if isinstance(first, RetryWrite):
            self._carry(fast, self._started_then(fast, build, first, runs))
            return
        if first is None:
            return
        rec.state = PodState.RUNNING
        run = fast.run = runs[0]
        assert self._loop is not None
        run.anchor(self._loop.time())  # durations count from the write's end, as ``after_started``
        if run.events:  # the starts' container Events, then the run's first timer
            self._step(fast, worker.container_events(rec.pod, run), self._then_next, _FIRST)
            return
        self._next(fast)

    def _then_next(self, fast: FastRun, _result: object) -> None:
        try:
            self._next(fast)
        except Exception as exc:
            self._crash(fast, exc)

    def _step(
        self,
        fast: FastRun,
        coro: Coroutine[Any, Any, Any],
        then: Callable[[FastRun, Any], None],
        waited: asyncio.Future[Any] | None = None,
    ) -> None:
        """``coro`` (an image pull, container Events: writes that may wait on something else
        than the clock) stepped as the pod's task steps a coroutine, then ``then(fast, its
        result)``: each wait on a future resumes it from that future's callback, queued where
        the task's wake-up would be; a bare yield in the next handle; a cancel
        (``FastRun.cancel``) cancels the future waited for, or is thrown in on waking, as
        ``Task.cancel`` does. Called first from the step that asks (``waited`` the ``_FIRST``
        marker), then by the future (``waited`` that future) or after a bare yield (``None``)."""
        fast.waiting = None
        try:
            if waited is _FIRST:
                waiting = coro.send(None)
            elif fast.cancelled:  # cancelled since it waited: the task's cancel, thrown in on waking
                waiting = coro.throw(asyncio.CancelledError())
            else:
                waiting = coro.send(None)
        except StopIteration as stop:
            then(fast, stop.value)
            return
        except asyncio.CancelledError:
            return  # the pod's run is over (``FastRun.cancel``): nothing follows, as after its task's end
        except Exception as exc:
            self._crash(fast, exc)
            return
        assert self._loop is not None
        if waiting is None:  # a bare yield: resumed (or cancelled) in the next step, as a task
            self._loop.call_soon(self._step, fast, coro, then, None, context=self._context)
            return
        waiting.add_done_callback(functools.partial(self._step, fast, coro, then), context=self._context)
        fast.waiting = waiting
        if fast.cancelled:
            waiting.cancel()  # cancelled by this step: as its task, at its first wait

    def _next(self, fast: FastRun) -> None:
        """``_drive``'s sleep until the run's next event: its timer, set as the clock sets it."""
        run = fast.run
        assert run is not None
        event = run.next_event()
        if event is None:
            return  # nothing left to happen: the task would have returned
        origin, delay = event
        # ``sleep(delay)`` at ``origin`` (now) or ``sleep_until(origin + delay)``: the loop time
        # ``origin + delay`` either way, as clock times are the loop's
        self._wait(fast, origin + delay, self._tick)

    def _wait(self, fast: FastRun, when: float, then: Callable[[FastRun], None]) -> None:
        """``LoopClock._sleep_to(when)``, then ``then``: queued at once when due (the sleep's
        bare yield), never beyond a ``time.Duration``, else after a timer at ``when``."""
        if fast.cancelled:
            return  # cancelled by this step: its task stops at this wait
        loop = self._loop
        assert loop is not None
        now = loop.time()
        if when <= now:
            fast.handle = loop.call_soon(then, fast, context=self._context)
        elif when - now <= MAX_DURATION_SECONDS:
            fast.handle = loop.call_at(when, self._due, fast, then, context=self._context)

    def _due(self, fast: FastRun, then: Callable[[FastRun], None]) -> None:
        """A timer fired: the step is queued, as the sleep's future queues its task's wake-up."""
        assert self._loop is not None
        fast.handle = self._loop.call_soon(then, fast, context=self._context)

    def _tick(self, fast: FastRun) -> None:
        """One of the run's events (``_drive``'s loop body): advance, write, the next timer."""
        fast.handle = None
        try:
            rec, worker, run = fast.rec, self._worker, fast.run
            assert run is not None
            assert self._loop is not None
            backoffs = run.advance(self._loop.time())
            if run.phase is RunPhase.DONE:
                self._finish(fast)
                return
            if run.quiet:
                written = rec.pod
            else:
                build = worker.run_build(run, fast.ips)
                if not self._client.instant("Pod"):
                    self._carry(fast, self._run_then(fast, build, None, backoffs))
                    return
                first = worker.try_status(rec, build)
                if isinstance(first, RetryWrite):
                    self._carry(fast, self._run_then(fast, build, first, backoffs))
                    return
                if first is None:
                    return
                written = first
            if run.events or backoffs:  # their Events, then the next timer
                self._step(fast, worker.after_write(rec, run, written, backoffs), self._then_next, _FIRST)
                return
            self._next(fast)
        except Exception as exc:
            self._crash(fast, exc)

    def _finish(self, fast: FastRun) -> None:
        """``PodWorker._finish``: released, then Succeeded (or the run's Failed status)."""
        rec, worker, run = fast.rec, self._worker, fast.run
        assert run is not None
        worker.release(rec)
        if run.result == "Succeeded":
            rec.state, key, build = PodState.SUCCEEDED, "succeeded", worker.succeeded_build()
        else:
            rec.state, key, build = PodState.FAILED, "failed", worker.run_build(run, fast.ips)
        if not self._client.instant("Pod"):
            self._carry(fast, self._finish_then(fast, build, None, key))
            return
        first = worker.try_status(rec, build)
        if isinstance(first, RetryWrite):
            self._carry(fast, self._finish_then(fast, build, first, key))
            return
        if first:
            self._counts[key] += 1
        if run.events:
            self._step(fast, worker.container_events(rec.pod, run), _over, _FIRST)

    # --- what is left to a task ---------------------------------------------------------

    async def _write(self, fast: FastRun, build: Callable[[Pod], PodStatus], retry: RetryWrite | None) -> Pod | None:
        if retry is not None:
            return await self._worker.finish_status(fast.rec, retry)
        return await self._worker.write_status(fast.rec, build)

    async def _pending_then(self, fast: FastRun, build: Callable[[Pod], PodStatus], retry: RetryWrite | None) -> None:
        await self._write(fast, build, retry)
        await self._worker.after_pending(fast.rec, fast.ips)

    async def _started_then(
        self, fast: FastRun, build: Callable[[Pod], PodStatus], retry: RetryWrite | None, runs: list[PodRun]
    ) -> None:
        written = await self._write(fast, build, retry)
        await self._worker.after_started(fast.rec, written, runs, fast.ips)

    async def _run_then(
        self, fast: FastRun, build: Callable[[Pod], PodStatus], retry: RetryWrite | None, backoffs: list[str]
    ) -> None:
        written = await self._write(fast, build, retry)
        if written is not None:
            await self._drive_on(fast, written, backoffs)

    async def _drive_on(self, fast: FastRun, written: Pod, backoffs: list[str]) -> None:
        run = fast.run
        assert run is not None
        await self._worker.after_write(fast.rec, run, written, backoffs)
        await self._worker.drive(fast.rec, run, fast.ips)

    async def _finish_then(
        self, fast: FastRun, build: Callable[[Pod], PodStatus], retry: RetryWrite | None, key: str
    ) -> None:
        if await self._write(fast, build, retry):
            self._counts[key] += 1
        run = fast.run
        assert run is not None
        if run.events:
            await self._worker.container_events(fast.rec.pod, run)

    def _carry(self, fast: FastRun, coro: Coroutine[Any, Any, None]) -> None:
        """The rest of the pod's life as its task would go on: ``coro`` run at once, in this
        step; if it waits, a task named as the pod's takes it from that wait."""
        try:
            waiting = coro.send(None)
        except StopIteration:
            return
        rec = fast.rec
        try:
            task = self._spawn(Resumed(coro, waiting, fast.cancelled), f"{self._prefix}:pod:{rec.label}")
        except RuntimeError:  # the group is shutting down: as a task it would have been cancelled
            if isinstance(waiting, asyncio.Future):
                waiting.cancel()
            coro.close()
            return
        if rec.task is fast:
            rec.task = task

    def _crash(self, fast: FastRun, exc: Exception) -> None:
        """A step failed: the kubelet's task group fails with ``exc``, as the pod's task would
        make it; every pod on handles stops at once (``on_abort``: none steps on while the
        group aborts; on this failure path they stop a step or two before the pods' tasks
        would, cancelled by the abort, and the run ends with ``exc`` either way)."""
        if self.on_abort is not None:
            self.on_abort()
        raising = _raise(exc)
        try:
            self._spawn(raising, f"{self._prefix}:pod:{fast.rec.label}")
        except RuntimeError:  # the group is already shutting down (failing): ``exc`` adds nothing
            raising.close()

    def stop(self, records: Iterable[PodRecord]) -> None:
        """Cancel every pod still on handles (the kubelet's run ends)."""
        for rec in records:
            task = rec.task
            if type(task) is FastRun:
                task.cancel()


def _over(_fast: FastRun, _result: object) -> None:
    """Nothing follows (the run's last Events written)."""


_FIRST: Any = object()
"""``PodSteps._step``'s first call, from the step that asks (not a future)."""


def _probed(spec: PodSpec) -> bool:
    """Whether a regular container has a probe (``prober_for`` would build workers for it)."""
    for c in spec.containers:
        if c.startup_probe is not None or c.liveness_probe is not None or c.readiness_probe is not None:
            return True
    return False


async def _raise(exc: Exception) -> None:
    raise exc
