"""What the harness builds and watches: the scheduler under test, the write listener that
records bindings, and the timers around the Filter and Score extension points.

- ``scheduler_settings(profile, config_file)``: the ``SchedulerSettings`` the harness starts
  its one instance from, through ``agents.scheduler.start_schedulers`` like any run.
  ``default`` is upstream's default profile (or a workload's ``schedulerConfigPath``); ``noop``
  disables every plugin under ``multiPoint`` and enables only ``PrioritySort`` and
  ``DefaultBinder``: no PreEnqueue, PreFilter, Filter, PostFilter, PreScore or Score plugin,
  so a cycle is pop → pick a node round-robin → assume → bind — the pipeline's own ceiling.
  Upstream plugins the registry lacks are skipped by the scheduler and listed in the group's
  ``missing_plugins``.
- ``Tracker``: a write listener on the API server (it sees every committed write, synchronously).
  It counts bindings (verb ``bind``) and Running transitions per namespace, keeps the
  existing pods' barrier stages (``stages.py``), keeps the wall time
  (``time.perf_counter``) of each binding in the measured namespace, and create → Running
  durations there when kubelets run. ``changed`` is set on each of those events and whenever a
  stage count changes.
- ``ExtensionPointTimers``: the scheduler's metrics recorder (``MetricsRecorder``, given at
  construction): wall durations of the Filter phase of each cycle (upstream records
  ``framework_extension_point_duration_seconds{extension_point="Filter"}`` around the whole
  feasible-node search, not per node, and only when the profile has Filter plugins) and of
  ``RunScorePlugins`` (or its vectorised twin), as the scheduler reports them.

Wall time is read here on purpose: this is a benchmark of the real-time path, as the
scheduler's own ``attempt_wall_seconds`` is.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal

from agents.scheduler import (
    CONFIG_API_VERSION,
    CONFIG_KIND,
    ExtensionPoint,
    SchedulerGroup,
    SchedulerSettings,
    read_config_document,
)
from emulator.app.bench.stages import Selector, StageCounts, matches
from emulator.base.apiserver.server import WriteRecord

__all__ = [
    "NOOP_CONFIG",
    "ExtensionPointTimers",
    "Profile",
    "ProgressHook",
    "Tracker",
    "enabled_plugins",
    "scheduler_settings",
]

Profile = Literal["default", "noop"]
ProgressHook = Callable[[str, int, int], None]
"""``hook(stage, done, total)``: a stage of the workload and how far it has got."""

NOOP_CONFIG: Final[dict[str, Any]] = {
    "apiVersion": CONFIG_API_VERSION,
    "kind": CONFIG_KIND,
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


def scheduler_settings(
    profile: Profile,
    config_file: str = "",
    client: tuple[float, int] | None = None,
    gates: Mapping[str, bool] | None = None,
) -> SchedulerSettings:
    """The settings of the scheduler for ``profile`` (one instance). ``config_file``: a
    KubeSchedulerConfiguration for the ``default`` profile (a workload's
    ``schedulerConfigPath``); ``client``: (qps, burst) of its API client, None: unlimited;
    ``gates``: the workload's feature gates (None: v1.34's defaults)."""
    qps, burst = client if client is not None else (None, None)
    if qps is not None and not burst:
        burst = max(1, math.ceil(qps))  # client-go with burst 0 would refuse every request
    if profile == "noop":
        return SchedulerSettings(
            source="bench", config=NOOP_CONFIG, client_qps=qps, client_burst=burst, feature_gates=gates or {}
        )
    if config_file:
        return SchedulerSettings(
            source=config_file,
            config=read_config_document(config_file),
            config_file=config_file,
            config_path="",
            client_qps=qps,
            client_burst=burst,
            feature_gates=gates or {},
        )
    return SchedulerSettings(source="bench", client_qps=qps, client_burst=burst, feature_gates=gates or {})


def enabled_plugins(group: SchedulerGroup) -> dict[str, list[str]]:
    """Extension point → enabled plugin names, over the profiles of the group's instances."""
    out: dict[str, list[str]] = {}
    for sched in group.schedulers:
        for point, names in sched.enabled_plugins().items():
            out.setdefault(point, []).extend(n for n in names if n not in out.get(point, []))
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
    """Per-cycle wall durations of the Filter phase and of the Score plugins: the scheduler's
    ``MetricsRecorder``."""

    def __init__(self) -> None:
        self.filter: list[float] = []
        self.score: list[float] = []

    def observe_extension_point(self, point: ExtensionPoint, seconds: float) -> None:
        if point is ExtensionPoint.Filter:
            self.filter.append(seconds)
        elif point is ExtensionPoint.Score:
            self.score.append(seconds)
