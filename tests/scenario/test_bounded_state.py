"""Nothing the process keeps grows with simulated time once Events expire and terminated pods
are collected (issue 14, "Bounded state" in ``docs/architecture.md``).

A small churn run (10 nodes, 2 pods/s each running 10 s, ``eventTTL: 30s``,
``terminatedPodGCThreshold: 50``) is measured at ``T`` and at ``2T``: every container
(dict, list, set, deque, array) reachable from the cluster's own objects — the API server's
tables and history, the write listeners (trace, invariant checker, pod activity), the
scheduler's queue, cache, informers, metrics and Event recorder, the kubelets, the
controllers — is found by walking attributes, named by its path of attribute names, and its
length summed over the instances on that path. At ``2T`` no path may hold more than at ``T``
plus ``SLACK`` (the live set moves a little with the pod arrivals and the GC passes).

``T`` is chosen for the one structure bounded by time rather than by live objects: the
scheduler's events/v1 series cache forgets a key at the first 6-minute pass after it has
been idle 6 minutes, so it holds between 6 and 12 minutes of keys; at T = 560 s (last pass
at 360 s) it holds 560 s of them, at 2T = 1120 s (last pass at 1080 s) 400 s.

On main before issue 14's bounded-state work this fails on the scheduler's four metrics
lists (one float per attempt) and on the API server's history deque (a fixed 100,000
entries, so it grew with every write until then).
"""

from __future__ import annotations

import array
import collections
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import emulator.app.scenario.bookkeeping as bookkeeping
import emulator.app.scenario.cluster as cluster_module
import emulator.app.scenario.observe as observe
import emulator.app.scenario.observe_samples as observe_samples
import emulator.base.runtime.stats as stats
from emulator.app.scenario import runner
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

T = 560.0
SLACK = 150
"""Pods alive vary between measurements by about rate × (run + start-up) plus the GC threshold."""

SCENARIO = """
name: churn-bounded-small
seed: 1
clock: virtual
apiServer: {eventTTL: 30s}
controllers: {podGC: {terminatedPodGCThreshold: 50}}
nodes:
  - count: 10
    namePrefix: node
    template:
      status:
        capacity: {cpu: "4", memory: 32Gi, pods: "110"}
    labelValues:
      topology.kubernetes.io/zone: [zone-a, zone-b, zone-c]
steps:
  - createPods:
      count: 100000
      namePrefix: churn
      ratePerSecond: 2
      runDuration: 10s
      template:
        metadata: {labels: {app: churn}}
        spec:
          containers:
            - name: pause
              image: registry.k8s.io/pause:3.10.1
              resources:
                requests: {cpu: 100m, memory: 500Mi}
"""

_CONTAINERS = (dict, list, set, frozenset, tuple, collections.deque, array.array)


def _own(obj: object) -> bool:
    """Our own stateful objects: walked through. API objects (msgspec Structs) are data."""
    module = type(obj).__module__
    return module.startswith(("agents.", "emulator.", __name__)) and not isinstance(obj, (msgspec.Struct, type))


def _attributes(obj: object) -> Iterator[tuple[str, Any]]:
    names: set[str] = set(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    for name in sorted(names - {"__dict__", "__weakref__"}):
        if hasattr(obj, name):
            yield name, getattr(obj, name)


def sizes(roots: dict[str, object]) -> dict[str, int]:
    """Summed length of every container reachable from ``roots``, by attribute path."""
    out: dict[str, int] = collections.Counter()
    seen: set[int] = set()
    # Breadth first, so that each container is named by its shortest path.
    stack: collections.deque[tuple[str, Any, int]] = collections.deque((n, o, 0) for n, o in sorted(roots.items()))
    while stack:
        path, obj, depth = stack.popleft()
        if id(obj) in seen or depth > 12:
            continue
        if isinstance(obj, _CONTAINERS):
            seen.add(id(obj))
            if not isinstance(obj, tuple):
                out[path] += len(obj)
            if isinstance(obj, array.array):
                continue
            if isinstance(obj, dict):
                small_named = len(obj) <= 32 and all(isinstance(k, str) for k in obj)
                items = [(f"{path}[{k}]" if small_named else f"{path}[]", v) for k, v in obj.items()]
            else:
                items = [(f"{path}[]", v) for v in obj]
            stack.extend((p, v, depth + 1) for p, v in items if isinstance(v, _CONTAINERS) or _own(v))
        elif _own(obj):
            seen.add(id(obj))
            stack.extend(
                (f"{path}.{name}", value, depth + 1)
                for name, value in _attributes(obj)
                if isinstance(value, _CONTAINERS) or _own(value)
            )
    return dict(out)


def test_state_is_flat_over_simulated_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Past this many samples a metric keeps buckets, not samples: small enough for this run.
    # (raising=False: the test also runs against code from before the sketch, and fails there.)
    monkeypatch.setattr(stats, "EXACT_CAP", 256, raising=False)
    # The run's own series keep at most this many samples and ended timeline bars (fixed
    # sizes, like the sketch's cap): small enough for this run too.
    monkeypatch.setattr(observe_samples, "MAX_SAMPLES", 256, raising=False)
    monkeypatch.setattr(observe, "MAX_TIMELINE_BARS", 256, raising=False)
    monkeypatch.setattr(bookkeeping, "MAX_PIECES", 5 * 16, raising=False)
    monkeypatch.setattr(observe, "MAX_PIECES", 5 * 16, raising=False)
    clusters: list[Any] = []
    kubelets: list[Any] = []

    class RecordingCluster(runner.Cluster):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            clusters.append(self)

    class RecordingKubelet(cluster_module.Kubelet):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            kubelets.append(self)

    monkeypatch.setattr(runner, "Cluster", RecordingCluster)
    monkeypatch.setattr(cluster_module, "Kubelet", RecordingKubelet)
    measured: dict[float, dict[str, int]] = {}

    def on_write(rec: WriteRecord) -> None:
        for t in (T, 2 * T):
            if rec.time >= t and t not in measured:
                measured[t] = sizes({"cluster": clusters[0], "kubelets": kubelets})

    scenario = load_scenario_text(SCENARIO, source="<test>", base_dir=Path.cwd())
    run_scenario(scenario, RunOptions(on_write=on_write, until=2 * T + 1))
    at_t, at_2t = measured[T], measured[2 * T]
    # The walk reached what it should (guards against a walk that finds nothing).
    for must in ("cluster.server._objects[Pod]", "cluster.server._history", "kubelets[]._pods"):
        assert must in at_t, sorted(at_t)
    grew = {p: (at_t.get(p, 0), n) for p, n in sorted(at_2t.items()) if n > at_t.get(p, 0) + SLACK}
    assert not grew, grew
    assert any(p.endswith(".metrics.e2e_seconds._buckets") for p in at_t), sorted(at_t)
