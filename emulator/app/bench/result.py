"""What one benchmark run is given and what it gives back: ``BenchOptions`` (profile, kubelets,
seed, the stall and time limits, the loop) and ``WorkloadResult`` with its JSON form (the keys
``bench/README.md`` lists). Only data; ``harness.py`` fills a result in, ``commands/bench.py``
prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from emulator.app.bench.instruments import Profile

__all__ = ["BenchOptions", "WorkloadResult"]


@dataclass(frozen=True, slots=True)
class BenchOptions:
    profile: Profile = "default"
    kubelets: bool = False
    seed: int = 0
    stall_timeout: float = 60.0
    create_batch: int = 100
    """Objects created between two yields to the event loop (upstream creates from parallel workers)."""
    time_limit: float | None = None
    """Wall seconds after which the workload is cut short (None: no limit)."""
    virtual: bool = False
    """Run on the virtual-time loop instead of uvloop (tests: waits and stalls take no wall time;
    the wall-clock figures then measure nothing useful)."""


@dataclass(slots=True)
class WorkloadResult:
    workload: str
    nodes: int
    measured_pods: int
    profile: str
    kubelets: bool
    scale: float
    throughput: dict[str, Any]
    attempt_ms: dict[str, float | None]
    e2e_ms: dict[str, float | None]
    filter_ms: dict[str, float | None]
    score_ms: dict[str, float | None]
    peak_rss_mib: float
    wall_seconds: float
    measured_seconds: float
    measured_cpu_seconds: float
    scheduled_pods: int
    complete: bool
    stopped_by: str | None
    plugins_missing: list[str]
    max_pods_per_node: int
    threshold: float | None
    startup_ms: dict[str, float | None] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "workload": self.workload,
            "nodes": self.nodes,
            "measuredPods": self.measured_pods,
            "profile": self.profile,
            "throughput": self.throughput,
            "attemptMs": self.attempt_ms,
            "e2eMs": self.e2e_ms,
            "filterMs": self.filter_ms,
            "scoreMs": self.score_ms,
            "peakRssMiB": self.peak_rss_mib,
            "wallSeconds": round(self.wall_seconds, 3),
            "measuredSeconds": round(self.measured_seconds, 3),
            "measuredCpuSeconds": round(self.measured_cpu_seconds, 3),
            "scheduledPods": self.scheduled_pods,
            "complete": self.complete,
            "stoppedBy": self.stopped_by,
            "pluginsMissing": self.plugins_missing,
            "maxPodsPerNode": self.max_pods_per_node,
            "kubelets": self.kubelets,
            "scale": self.scale,
            "threshold": self.threshold,
        }
        if self.kubelets:
            doc["startupMs"] = self.startup_ms
        doc.update(self.extra)
        return doc
