"""What the harness builds and watches: the scheduler under test, the write listener that
records bindings, and the timers around the Filter and Score extension points.

- ``build_scheduler(profile, ...)``: ``agents.scheduler.scheduler.Scheduler`` built directly
  from ``load_config`` + ``build_registry`` (in-tree plus entry-point plugins). ``default`` is
  upstream's default profile; ``noop`` disables every plugin under ``multiPoint`` and enables
  only ``PrioritySort`` and ``DefaultBinder``: no PreEnqueue, PreFilter, Filter, PostFilter,
  PreScore or Score plugin, so a cycle is pop → pick a node round-robin → assume → bind — the
  pipeline's own ceiling. Upstream plugins the registry lacks are skipped by the scheduler and
  returned as ``missing``.
- ``Tracker``: a write listener on the API server (it sees every committed write, synchronously).
  It counts bindings (verb ``bind``) and Running transitions per namespace, keeps the
  existing pods' barrier stages (``stages.py``), keeps the wall time
  (``time.perf_counter``) of each binding in the measured namespace, and create → Running
  durations there when kubelets run. ``changed`` is set on each of those events and whenever a
  stage count changes.
- ``ExtensionPointTimers``: wall durations of the Filter phase of each cycle (upstream records
  ``framework_extension_point_duration_seconds{extension_point="Filter"}`` around the whole
  feasible-node search, not per node, and only when the profile has Filter plugins) and of
  ``RunScorePlugins``. They wrap the scheduler's ``_find_feasible`` and each framework's
  ``run_score_plugins`` and ``score_rows`` (its vectorised twin) on the instances; the
  scheduler's code is not changed.

Wall time is read here on purpose: this is a benchmark of the real-time path, as the
scheduler's own ``attempt_wall_seconds`` is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any, Final, Literal

from agents.scheduler.config import API_VERSION, KIND, load_config, load_config_file
from agents.scheduler.framework.interface import ExtensionPoint
from agents.scheduler.registry import build_registry
from agents.scheduler.scheduler import Scheduler, SchedulerOptions
from emulator.apiserver.server import ApiServer, WriteRecord
from emulator.bench.stages import Selector, StageCounts, matches
from emulator.client.client import Client
from emulator.runtime.clock import Clock
from emulator.runtime.rng import Seeds

__all__ = ["NOOP_CONFIG", "ExtensionPointTimers", "Profile", "ProgressHook", "Tracker", "build_scheduler"]

Profile = Literal["default", "noop"]
ProgressHook = Callable[[str, int, int], None]
"""``hook(stage, done, total)``: a stage of the workload and how far it has got."""

NOOP_CONFIG: Final[dict[str, Any]] = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                    "disabled": [{"name": "*"}],
                }
            },
        }
    ],
}
"""Queue sort and binder only: every Filter and Score plugin (and every other) disabled."""


def build_scheduler(
    server: ApiServer, clock: Clock, seeds: Seeds, profile: Profile, config_file: str = ""
) -> tuple[Scheduler, list[str]]:
    """The scheduler for ``profile`` on a zero-latency client, and the upstream plugins its
    profile enables that the registry does not have (skipped). ``config_file``: a
    KubeSchedulerConfiguration for the ``default`` profile (a workload's ``schedulerConfigPath``)."""
    registry = build_registry()
    if profile == "default" and config_file:
        config = load_config_file(config_file, registry)
    else:
        config = load_config(NOOP_CONFIG if profile == "noop" else None, registry)
    missing = sorted({m for p in config.profiles for m in p.missing_plugins})
    options = SchedulerOptions(
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff=float(config.pod_initial_backoff_seconds),
        pod_max_backoff=float(config.pod_max_backoff_seconds),
    )
    client = Client(server, clock, seeds.stream("client/default-scheduler"), name="default-scheduler")
    scheduler = Scheduler(
        client=client,
        clock=clock,
        rng=seeds.stream("scheduler/0"),
        profiles=[p.to_spec() for p in config.profiles],
        registry=registry,
        options=options,
    )
    return scheduler, missing


def enabled_plugins(scheduler: Scheduler) -> dict[str, list[str]]:
    """Extension point → enabled plugin names, over the scheduler's profiles."""
    out: dict[str, list[str]] = {}
    for fwk in scheduler.frameworks.values():
        for point, names in fwk.list_plugins().items():
            out.setdefault(point.value, []).extend(n for n in names if n not in out.get(point.value, []))
    return out


class Tracker:
    """Counts bindings and Running pods per namespace from the server's writes."""

    def __init__(
        self, *, kubelets: bool, progress: ProgressHook | None = None, selectors: Iterable[Selector] = ()
    ) -> None:
        self.kubelets = kubelets
        self.stages = StageCounts(selectors)
        """Existing pods by barrier stage (``stages.py``)."""
        self.progress = progress
        self.bound: dict[str, int] = {}
        self.running: dict[str, int] = {}
        self.measured_namespaces: frozenset[str] = frozenset()
        self.measured_selector: Selector = ()
        self.bound_at: list[float] = []
        """perf_counter time of each binding of a measured pod while the window is open."""
        self.startup: list[float] = []
        """Seconds from create to Running of each measured pod (kubelets on)."""
        self._created_at: dict[str, float] = {}
        self.changed = asyncio.Event()
        self.stage = ""
        self.stage_ns = ""
        self.stage_total = 0

    def measure(self, namespaces: tuple[str, ...], selector: Selector) -> None:
        """From now on, time the pods of ``namespaces`` matching ``selector`` (none: stop)."""
        self.measured_namespaces, self.measured_selector = frozenset(namespaces), selector

    def _measured(self, pod: Any) -> bool:
        meta = pod.metadata
        return meta.namespace in self.measured_namespaces and matches(meta.labels, self.measured_selector)

    def watch(self, stage: str, namespace: str, total: int) -> None:
        """Report progress of ``namespace`` towards ``total`` pods as ``stage``."""
        self.stage, self.stage_ns, self.stage_total = stage, namespace, total
        if self.progress is not None:
            self.progress(stage, self._done(namespace), total)

    def _done(self, ns: str) -> int:
        return (self.running if self.kubelets else self.bound).get(ns, 0)

    def __call__(self, rec: WriteRecord) -> None:
        if rec.kind != "Pod":
            return
        if self.stages.update(rec.old, rec.new):
            self.changed.set()
        if rec.verb == "bind":
            ns = rec.new.metadata.namespace
            self.bound[ns] = self.bound.get(ns, 0) + 1
            if self._measured(rec.new):
                self.bound_at.append(time.perf_counter())
        elif not self.kubelets:
            return
        elif rec.verb == "create":
            if self._measured(rec.new):
                self._created_at[rec.new.metadata.uid] = time.perf_counter()
            return
        elif rec.new is not None and rec.new.status.phase == "Running" and rec.old.status.phase != "Running":
            ns = rec.new.metadata.namespace
            self.running[ns] = self.running.get(ns, 0) + 1
            t0 = self._created_at.pop(rec.new.metadata.uid, None)
            if t0 is not None:
                self.startup.append(time.perf_counter() - t0)
        else:
            return
        self.changed.set()
        if self.progress is not None and ns == self.stage_ns:
            done = self._done(ns)
            if done % 64 == 0 or done >= self.stage_total:
                self.progress(self.stage, done, self.stage_total)


class ExtensionPointTimers:
    """Per-cycle wall durations of the Filter phase and of the Score plugins."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.filter: list[float] = []
        self.score: list[float] = []
        find_feasible = scheduler._find_feasible

        def timed_filter(fwk: Any, *args: Any) -> Any:
            if not fwk.has_filter_plugins():
                return find_feasible(fwk, *args)
            t0 = time.perf_counter()
            try:
                return find_feasible(fwk, *args)
            finally:
                self.filter.append(time.perf_counter() - t0)

        scheduler._find_feasible = timed_filter  # type: ignore[method-assign,assignment]
        for fwk in scheduler.frameworks.values():
            if ExtensionPoint.Score in fwk.list_plugins():
                fwk.run_score_plugins = self._timed(fwk.run_score_plugins, self.score)  # type: ignore[method-assign]
                fwk.score_rows = self._timed(fwk.score_rows, self.score)  # type: ignore[method-assign]

    @staticmethod
    def _timed(fn: Callable[..., Any], into: list[float]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                into.append(time.perf_counter() - t0)

        return timed
