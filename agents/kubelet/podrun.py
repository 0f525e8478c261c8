"""The containers of one pod as the emulated runtime runs them: a pure state machine.

This module owns *what happens to a pod's containers over time* once the kubelet has
started them: init containers one after another, sidecars (init containers with
``restartPolicy: Always``) started in order and kept running, the regular containers'
readiness, their exit after ``emulator.k8s.io/run-duration``, and what ``restartPolicy``
does next, with upstream's CrashLoopBackOff (``CrashBackoff``, client-go's
``flowcontrol.Backoff`` as ``kuberuntime``'s ``doBackOff`` uses it). What a pod asks
(its annotations and policies) comes in as a ``Lifecycle`` (``lifecycle.py``). It does not
write anything nor sleep (``podworker.py`` asks ``next_event()``, sleeps until then and
calls ``advance(now)``), nor shape statuses (``runstatus.py``).

A pod's run (``PodRun.phase``):

=====  =====================================  =========================================
phase  on                                     next
=====  =====================================  =========================================
INIT   init container ``index`` exits 0       the next one (sidecars start on the way;
                                              zero-length ones are passed at once), then
                                              APP with every regular container running
INIT   it exits non-zero                      ``Never``: DONE Failed; else restart it
                                              (see below), phase Pending meanwhile
APP    ``ready-after`` elapsed                the containers turn ready
APP    ``run-duration`` elapsed               exit: ``Never``, or ``OnFailure`` and exit
                                              0: DONE (Succeeded if 0, else Failed);
                                              else restart (phase Running meanwhile)
APP    a probe is due (``prober.py``)         readiness/started change; a liveness or
                                              startup failure kills the containers
                                              (exit 143), then as an exit
DONE   (final)                                sidecars are stopped (terminated, 0)
=====  =====================================  =========================================

A restart follows upstream's ``doBackOff``: when a container exits, if the back-off
entry of the container exists and was last moved less than ``2 × MAX_CONTAINER_BACKOFF``
(10 min) before the exit, the container waits ``CrashLoopBackOff`` for the entry's
back-off, counted from the exit; otherwise it is reported terminated and restarted at
once. Each restart moves the entry (``Next``): 10 s the first time (or after a stable run
of more than 10 min), then doubling to 300 s. So the waits before restarts 1, 2, 3 ... are
0, 10, 20, 40, 80, 160, 300, 300 s. ``restartCount`` counts restarts; ``lastState`` holds
the previous exit. Upstream restarts at the pod worker's next sync after the back-off (up
to ~15 s later); here exactly when it ends.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from agents.kubelet.lifecycle import Lifecycle
from agents.kubelet.prober import KILLED_EXIT_CODE, Prober
from emulator.base.api.core import Container, PodSpec

__all__ = [
    "BACKOFF_PERIOD",
    "CRASH_LOOP_BACK_OFF",
    "MAX_CONTAINER_BACKOFF",
    "RUNNING",
    "TERMINATED",
    "ContainerRun",
    "CrashBackoff",
    "PodRun",
    "RunPhase",
]

BACKOFF_PERIOD: Final = 10.0
"""Upstream ``backOffPeriod``: the first CrashLoopBackOff wait."""
MAX_CONTAINER_BACKOFF: Final = 300.0
"""Upstream ``MaxContainerBackOff``: the longest wait; twice this is a stable run."""

WAITING: Final = "waiting"
RUNNING: Final = "running"
TERMINATED: Final = "terminated"
POD_INITIALIZING: Final = "PodInitializing"
CRASH_LOOP_BACK_OFF: Final = "CrashLoopBackOff"
COMPLETED: Final = "Completed"
ERROR: Final = "Error"


@dataclass(slots=True)
class _Entry:
    backoff: float
    last_update: float


@dataclass(slots=True)
class CrashBackoff:
    """client-go ``flowcontrol.Backoff`` without jitter, as the kubelet builds it
    (``NewBackOff(backOffPeriod, MaxContainerBackOff)``), keyed by container."""

    initial: float = BACKOFF_PERIOD
    cap: float = MAX_CONTAINER_BACKOFF
    _entries: dict[str, _Entry] = field(default_factory=dict)

    def _expired(self, event_time: float, entry: _Entry) -> bool:
        return event_time - entry.last_update > 2 * self.cap

    def get(self, key: str) -> float:
        entry = self._entries.get(key)
        return 0.0 if entry is None else entry.backoff

    def in_backoff_since(self, key: str, event_time: float, now: float) -> bool:
        entry = self._entries.get(key)
        if entry is None or self._expired(event_time, entry):
            return False
        return now - event_time < entry.backoff

    def next(self, key: str, event_time: float, now: float) -> None:
        entry = self._entries.get(key)
        if entry is None or self._expired(event_time, entry):
            self._entries[key] = _Entry(self.initial, now)
        else:
            entry.backoff = min(entry.backoff * 2, self.cap)
            entry.last_update = now


@dataclass(slots=True)
class ContainerRun:
    """The runtime's view of one container (all regular containers share one)."""

    state: str = WAITING
    reason: str = POD_INITIALIZING
    started: float | None = None
    finished: float | None = None
    exit_code: int = 0
    restarts: int = 0
    last: tuple[float | None, float, int, str] | None = None
    """The previous exit: (started, finished, exit code, reason)."""
    ready: bool = False
    timer: float | None = None
    """Where the running container's durations count from (its start, or ``anchor``)."""
    restart_at: float | None = None
    wait: float = 0.0
    """The back-off of a container waiting in CrashLoopBackOff."""

    def start(self, now: float) -> None:
        if self.state != WAITING or self.reason != POD_INITIALIZING:  # a restart
            self.restarts += 1
            if self.finished is not None:
                self.last = (self.started, self.finished, self.exit_code, self.reason_of_exit())
        self.state, self.reason, self.wait = RUNNING, "", 0.0
        self.started, self.finished, self.restart_at, self.ready, self.timer = now, None, None, False, now

    def reason_of_exit(self) -> str:
        return COMPLETED if self.exit_code == 0 else ERROR

    def exit(self, code: int, now: float) -> None:
        self.state, self.exit_code, self.finished = TERMINATED, code, now
        self.reason, self.ready, self.timer = (COMPLETED if code == 0 else ERROR), False, None


class RunPhase(enum.Enum):
    """Where a pod's run is (see the module docstring)."""

    INIT = "init"
    APP = "app"
    DONE = "done"


def _sidecar(c: Container) -> bool:
    return c.restart_policy == "Always"


class PodRun:
    """The containers of one pod from the moment the runtime starts them."""

    def __init__(self, spec: PodSpec, life: Lifecycle, pod_label: str, prober: Prober | None = None) -> None:
        self.spec = spec
        self.prober = prober
        """The pod's probes (None: no container has one, the common case)."""
        self.events: list[tuple[str, str, str, str]] = []
        """Container Events to record after the next write: (type, reason, message, container)."""
        self.quiet = False
        """The last ``advance`` changed nothing a status shows (a probe that changed no result)."""
        self.announce: set[str] | None = None
        """Container Events on (``Pulled``/``Created``/``Started`` at each start); the names of
        the containers whose image this pod just pulled (no "already present" the first time)."""
        self.life = life
        self.pod_label = pod_label
        """Upstream ``format.Pod``: ``name_namespace(uid)``."""
        self.inits = [ContainerRun() for _ in spec.init_containers] if spec.init_containers else []
        self.app = ContainerRun()
        self.phase = RunPhase.INIT
        self.result = ""
        """``Succeeded`` or ``Failed`` once DONE."""
        self.index = 0
        self.app_started = False
        self._backoff: CrashBackoff | None = None

    @property
    def backoff(self) -> CrashBackoff:
        """The containers' back-off entries (made on the first exit: most pods never need one)."""
        if self._backoff is None:
            self._backoff = CrashBackoff()
        return self._backoff

    def __repr__(self) -> str:
        return f"<PodRun {self.pod_label} {self.phase.value} index={self.index} restarts={self.app.restarts}>"

    @classmethod
    def start(
        cls,
        spec: PodSpec,
        life: Lifecycle,
        pod_label: str,
        now: float,
        prober: Prober | None = None,
        announce: set[str] | None = None,
    ) -> PodRun:
        """Containers started at ``now`` (zero-length init containers pass at once);
        ``announce``: see the attribute."""
        run = cls(spec, life, pod_label, prober)
        run.announce = announce
        run._proceed(now)
        return run

    @classmethod
    def adopt(
        cls,
        spec: PodSpec,
        life: Lifecycle,
        pod_label: str,
        *,
        started: float,
        running: bool,
        restarts: int,
        ready: bool,
        last_exit: tuple[float | None, float, int] | None = None,
        prober: Prober | None = None,
        now: float = 0.0,
    ) -> PodRun:
        """A pod found Running when the kubelet started: its init containers done, its
        containers running since ``started``; not ``running`` (they were waiting to be
        restarted): restarted at ``started``, as a restarted upstream kubelet has
        forgotten their back-off; ``last_exit`` (started, finished, exit code) is the
        exit it was waiting after, reported as ``lastState`` once restarted."""
        run = cls(spec, life, pod_label, prober)
        for c, r in zip(spec.init_containers, run.inits, strict=True):
            r.state, r.reason, r.started = RUNNING, "", started
            if not _sidecar(c):
                r.exit(0, started)
        run.index = len(run.inits)
        run.phase, run.app_started = RunPhase.APP, True
        app = run.app
        app.state, app.reason, app.started, app.restarts = RUNNING, "", started, restarts
        app.timer, app.ready = started, ready
        if not running:
            app.state, app.finished, app.restart_at = TERMINATED, started, started
            if last_exit is not None:
                app.started, app.finished, app.exit_code = last_exit
        elif prober is not None:
            prober.restart(started, max(started, now), ready=ready)
        return run

    # --- queries ------------------------------------------------------------------------

    def container_ready(self, name: str) -> bool:
        """A regular container's ``ready``: its readiness probe, else ``ready-after``."""
        app = self.app
        if self.prober is None or app.state != RUNNING:
            return app.ready
        return self.prober.ready(name, app.ready)

    def container_started(self, name: str) -> bool:
        """A running regular container's ``started``: its startup probe succeeded (or has none)."""
        return self.prober is None or self.prober.started(name)

    def all_ready(self) -> bool:
        if self.prober is None:
            return self.app.ready
        return all(self.container_ready(c.name) for c in self.spec.containers)

    def pod_phase(self) -> str:
        if self.phase is RunPhase.DONE:
            return self.result
        return "Running" if self.app_started else "Pending"

    def _next(self) -> tuple[float, float, str] | None:
        """The next transition: (origin, delay, kind); it is due at origin + delay."""
        if self.phase is RunPhase.DONE:
            return None
        life = self.life
        if self.phase is RunPhase.INIT:
            run = self.inits[self.index]
            if run.state == RUNNING:
                assert run.timer is not None
                return run.timer, life.init_duration, "init-exit"
            assert run.restart_at is not None
            return run.restart_at, 0.0, "init-restart"
        app = self.app
        if app.state != RUNNING:
            assert app.restart_at is not None
            return app.restart_at, 0.0, "restart"
        assert app.timer is not None
        nxt: tuple[float, float, str] | None = None
        if not app.ready and (life.run_duration is None or life.ready_after < life.run_duration):
            nxt = app.timer, life.ready_after, "ready"
        elif life.run_duration is not None:
            nxt = app.timer, life.run_duration, "exit"
        due = None if self.prober is None else self.prober.next_due()
        if due is not None and (nxt is None or due < nxt[0] + nxt[1]):
            return due, 0.0, "probe"
        return nxt

    def next_event(self) -> tuple[float, float] | None:
        """When ``advance`` has something to do next, as (origin, delay): due at
        ``origin + delay`` (a caller at ``origin`` sleeps ``delay``); ``None``: never."""
        nxt = self._next()
        return None if nxt is None else nxt[:2]

    def anchor(self, now: float) -> None:
        """Count the running containers' durations from ``now`` (the kubelet counts them
        from the end of the status write that reported the start)."""
        if self.phase is RunPhase.DONE:
            return
        run = self.app if self.phase is RunPhase.APP else self.inits[self.index]
        if run.state == RUNNING:
            run.timer = now
            if self.prober is not None and run is self.app:
                self.prober.restart(now, now)

    # --- transitions --------------------------------------------------------------------

    def advance(self, now: float) -> list[str]:
        """Do the transition ``next_event`` announced (at ``now``); the names of the
        containers that entered CrashLoopBackOff (for ``BackOff`` events)."""
        nxt = self._next()
        if nxt is None:
            return []
        kind = nxt[2]
        self.quiet = False
        if kind == "probe":
            return self._probe(now)
        if kind == "init-exit":
            return self._init_exited(now)
        if kind == "init-restart":
            run = self.inits[self.index]
            self._backoff_next(f"init:{self.index}", run, now)
            run.start(now)
            self._announce(self.spec.init_containers[self.index : self.index + 1])
            return self._init_exited(now) if self.life.init_duration == 0 else []
        if kind == "restart":
            self._backoff_next("app", self.app, now)
            self._start_app(now, restart=True)
            return []
        if kind == "ready":
            self.app.ready = True
            return []
        return self._app_exited(now, self.life.exit_code)

    def _probe(self, now: float) -> list[str]:
        """The probes due at ``now``: Unhealthy events; a liveness or startup failure kills
        the containers (``computePodActions``, ``killContainer``'s Killing event)."""
        assert self.prober is not None
        changed, failures, kill = self.prober.tick(now)
        for container, message in failures:
            self.events.append(("Warning", "Unhealthy", message, container))
        if kill is None:
            self.quiet = not changed
            return []
        name, kind = kill
        message = f"Container {name} failed {kind.lower()} probe"
        policy = self.life.init_restart_policy  # the spec's: a kill is no finite workload's end
        if policy != "Never":
            message += ", will be restarted"
        self.events.append(("Normal", "Killing", message, name))
        return self._app_exited(now, KILLED_EXIT_CODE, policy)

    def _announce(self, containers: Sequence[Container]) -> None:
        """kuberuntime ``startContainer``'s Events for each container started: the image
        (``Pulled``, "already present" unless just pulled), ``Created``, ``Started``."""
        fresh = self.announce
        if fresh is None:
            return
        for c in containers:
            if c.name in fresh:
                fresh.discard(c.name)
            else:
                present = f'Container image "{c.image}" already present on machine'
                self.events.append(("Normal", "Pulled", present, c.name))
            self.events.append(("Normal", "Created", f"Created container: {c.name}", c.name))
            self.events.append(("Normal", "Started", f"Started container {c.name}", c.name))

    def _backoff_next(self, key: str, run: ContainerRun, now: float) -> None:
        """Upstream ``doBackOff`` when the back-off is over: ``Next``, then the restart."""
        self.backoff.next(key, now if run.finished is None else run.finished, now)

    def _proceed(self, now: float) -> list[str]:
        """Start init containers from ``index`` on until one must run for a while."""
        inits = self.spec.init_containers
        while self.index < len(inits):
            run = self.inits[self.index]
            self._announce(inits[self.index : self.index + 1])
            if _sidecar(inits[self.index]):
                run.start(now)
                run.ready = True
                self.index += 1
                continue
            run.start(now)
            if self.life.init_duration > 0:
                return []
            if self.life.init_exit_code != 0:
                return self._init_exited(now)
            run.exit(0, now)
            run.ready = True
            self.index += 1
        self._start_app(now, restart=False)
        return []

    def _start_app(self, now: float, *, restart: bool) -> None:
        self.phase, self.app_started = RunPhase.APP, True
        app = self.app
        if not restart:
            app.reason = POD_INITIALIZING
        app.start(now)
        app.ready = self.life.ready_after == 0
        self._announce(self.spec.containers)
        if self.prober is not None:
            self.prober.restart(now, now)

    def _init_exited(self, now: float) -> list[str]:
        run = self.inits[self.index]
        code = self.life.init_exit_code
        run.exit(code, now)
        if code == 0:
            run.ready = True
            self.index += 1
            return self._proceed(now)
        if self.life.init_restart_policy == "Never":
            self._finish("Failed", now)
            return []
        name = self.spec.init_containers[self.index].name
        return [name] if self._after_exit(f"init:{self.index}", run, now) else []

    def _app_exited(self, now: float, code: int, policy: str | None = None) -> list[str]:
        app = self.app
        app.exit(code, now)
        if self.prober is not None:
            self.prober.stop()
        policy = policy or self.life.restart_policy
        if policy == "Never" or (policy == "OnFailure" and code == 0):
            self._finish("Succeeded" if code == 0 else "Failed", now)
            return []
        return [c.name for c in self.spec.containers] if self._after_exit("app", app, now) else []

    def _after_exit(self, key: str, run: ContainerRun, now: float) -> bool:
        """Upstream ``doBackOff`` at the exit: wait in CrashLoopBackOff (True) or restart now."""
        if self.backoff.in_backoff_since(key, now, now):
            wait = self.backoff.get(key)
            run.last = (run.started, now, run.exit_code, run.reason)
            run.state, run.reason = WAITING, CRASH_LOOP_BACK_OFF
            run.wait, run.restart_at = wait, now + wait
            return True
        run.restart_at = now
        return False

    def _finish(self, result: str, now: float) -> None:
        self.phase, self.result = RunPhase.DONE, result
        for c, run in zip(self.spec.init_containers, self.inits, strict=True):
            if _sidecar(c) and run.state == RUNNING:
                run.exit(0, now)
