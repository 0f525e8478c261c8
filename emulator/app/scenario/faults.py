"""Fault injection decisions: which calls, watch events, pulls and pod starts a scenario's
faults hit, and how.

This module owns ``FaultPlan``, the pure decision logic: given the time, the agent (a
client name such as ``default-scheduler`` or ``kubelet:node-3``), the verb and the kind,
it answers "delay this much", "fail with this error", "deliver this event later", "this
node posts no heartbeat now", "this pull takes that long", "this pod fails to start". It
never sleeps and never calls the API: the thin adapters that act on its answers are
``FaultPlan.attach`` (a ``Client.interceptor`` and ``Client.watch_faults``), the kubelet's
``KubeletSettings.faults`` hook (``FaultPlan`` implements ``KubeletFaults``), and
``timedfaults``, which plays the timed faults (``watchCut``, ``nodePartition``, ``scheduler``)
and arms step faults.

Determinism: fault ``i`` (the scenario's ``faults`` in order, then the ``fault`` steps in
order) draws from its own stream ``Seeds.stream(f"fault/{i}")``, only when a matching call
or event meets it inside its window and its probability is below 1; decisions are made in
the order the virtual-time loop runs the calls, so a seed gives the same decisions every
run. A fault with probability 1 and no jitter draws nothing.

Windows: a fault is active from ``start`` (default: when it is armed; top-level faults are
armed at 0, step faults when their step plays) until ``stop`` (exclusive; default never).
Several faults may match one call: every ``apiLatency`` adds its delay, the first
``apiError`` (in fault order) that fires decides the error.

=====================  ======================================  ============================
fault                  decided by                              consulted by
=====================  ======================================  ============================
apiError, apiLatency   ``api_call(now, agent, verb, kind)``    the client interceptor
watchDelay,            ``watch_delay(agent, kind, t)``         ``WatchStream`` (per event,
watchReorder                                                   ``t`` = its write time)
nodeHeartbeatStop      ``heartbeat_enabled(node, now)``        the kubelet's NodeReporter
nodePartition          ``partition_error(agent, now, ...)``,   the client interceptor of
                       ``partition_starts``                    ``kubelet:<node>``; timedfaults
                                                               (ends its watches at start)
imagePullSlow          ``pull_seconds(node, image, ...)``      the kubelet's ImageStore
containerStartFailure  ``start_failure(node, pod, now)``       the kubelet, before Running
watchCut               ``cut_times`` / ``cuts_watcher``        ``timedfaults``
scheduler              (timing only)                           ``timedfaults``
=====================  ======================================  ============================
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from emulator.app.scenario.schema import ApiError as ApiErrorFault
from emulator.app.scenario.schema import (
    ApiLatency,
    ContainerStartFailure,
    Delay,
    Fault,
    FaultSpec,
    ImagePullSlow,
    NodeHeartbeatStop,
    NodePartition,
    Scenario,
    WatchCut,
    WatchDelay,
    WatchReorder,
)
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError, Conflict, InternalError, NotFound, Timeout, resource_of
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.client.client import Client, Latency
from emulator.base.runtime.rng import Seeds

__all__ = ["ArmedFault", "FaultPlan", "injected_error"]


@dataclass(eq=False, slots=True)
class ArmedFault:
    """One fault of the plan: its spec, where the scenario gives it, its random stream."""

    index: int
    where: str
    """``faults[i]`` or ``steps[j].fault``: how errors and reports name it."""
    spec: FaultSpec
    rng: random.Random
    armed_at: float | None
    """When it was armed (None: a step fault whose step has not played yet)."""
    injected: int = 0

    @property
    def type(self) -> str:
        return str(type(self.spec).__struct_config__.tag)

    def active(self, now: float) -> bool:
        armed = self.armed_at
        if armed is None:
            return False
        start = getattr(self.spec, "start", None)
        stop = getattr(self.spec, "stop", None)
        begin = armed if start is None else max(start, armed)
        return now >= begin and (stop is None or now < stop)

    def fires(self, probability: float) -> bool:
        """A Bernoulli draw (no draw at all when ``probability`` is 1)."""
        return probability >= 1 or self.rng.random() < probability


def _agent_matches(pattern: str | None, agent: str) -> bool:
    return pattern is None or fnmatch.fnmatchcase(agent, pattern)


def _sample(delay: Delay, rng: random.Random) -> float:
    return Latency(delay.mean, delay.jitter).sample(rng)


def _image(name: str) -> str:
    """Image names compared as the kubelet does: no tag after the last ``/`` is ``:latest``."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def injected_error(spec: ApiErrorFault, verb: str, kind: str, where: str) -> ApiError:
    """The error an ``apiError`` fault raises, shaped as the API server's own."""
    res = {"bind": "pods/binding", "evict": "pods/eviction"}.get(verb) or (
        resource_of(kind) if kind else "the requested resource"
    )
    note = f"injected by {where}"
    if spec.error == "Conflict":
        return Conflict(f"Operation cannot be fulfilled on {res}: {note}")
    if spec.error == "NotFound":
        return NotFound(f"{res} not found: {note}")
    return InternalError(f"Internal error occurred: {note}")


class FaultPlan:
    """Every fault of one run; ``arm`` step faults as their steps play."""

    def __init__(self, faults: Sequence[tuple[str, FaultSpec, bool]], seeds: Seeds) -> None:
        """``faults``: (where, spec, armed at 0?) in scenario order."""
        self.faults = [
            ArmedFault(i, where, spec, seeds.stream(f"fault/{i}"), 0.0 if armed else None)
            for i, (where, spec, armed) in enumerate(faults)
        ]
        self._by_where = {f.where: f for f in self.faults}
        self._api = [f for f in self.faults if isinstance(f.spec, ApiErrorFault | ApiLatency)]
        self._watch = [f for f in self.faults if isinstance(f.spec, WatchDelay | WatchReorder)]
        self._heartbeat = [f for f in self.faults if isinstance(f.spec, NodeHeartbeatStop)]
        self._partitions = [f for f in self.faults if isinstance(f.spec, NodePartition)]
        self._pulls = [f for f in self.faults if isinstance(f.spec, ImagePullSlow)]
        self._starts = [f for f in self.faults if isinstance(f.spec, ContainerStartFailure)]
        self._api_by_agent: dict[str, list[ArmedFault]] = {}
        self._watch_by_agent: dict[str, list[ArmedFault]] = {}

    @classmethod
    def from_scenario(cls, scenario: Scenario, seeds: Seeds) -> FaultPlan | None:
        """The plan of ``scenario``, or None when it has no fault at all (zero cost)."""
        entries: list[tuple[str, FaultSpec, bool]] = [(f"faults[{i}]", f, True) for i, f in enumerate(scenario.faults)]
        entries += [(f"steps[{j}].fault", s.fault, False) for j, s in enumerate(scenario.steps) if isinstance(s, Fault)]
        return cls(entries, seeds) if entries else None

    def __repr__(self) -> str:
        return f"<FaultPlan faults={len(self.faults)} injected={sum(f.injected for f in self.faults)}>"

    def get(self, where: str) -> ArmedFault:
        return self._by_where[where]

    def arm(self, where: str, now: float) -> ArmedFault:
        """Arm the fault at ``where`` (a step fault, when its step plays)."""
        fault = self._by_where[where]
        if fault.armed_at is None:
            fault.armed_at = now
        return fault

    def statistics(self) -> list[dict[str, Any]]:
        """One entry per fault: where, type, armed, how many times it acted."""
        return [
            {"fault": f.where, "type": f.type, "armed": f.armed_at is not None, "injected": f.injected}
            for f in self.faults
        ]

    def report(self) -> dict[str, Any]:
        """The run report's ``faults``: per fault, how often it acted."""
        return {"faults": self.statistics()}

    # --- API calls ------------------------------------------------------------------------

    def _api_faults(self, agent: str) -> list[ArmedFault]:
        found = self._api_by_agent.get(agent)
        if found is None:
            found = [f for f in self._api if _agent_matches(getattr(f.spec, "agent", None), agent)]
            self._api_by_agent[agent] = found
        return found

    def api_call(self, now: float, agent: str, verb: str, kind: str) -> tuple[float, ApiError | None]:
        """(extra delay, error or None) for one call of ``agent``."""
        delay = 0.0
        error: ApiError | None = None
        for f in self._api_faults(agent):
            spec = f.spec
            assert isinstance(spec, ApiErrorFault | ApiLatency)
            if (spec.verb is not None and spec.verb != verb) or (spec.kind is not None and spec.kind != kind):
                continue
            if not f.active(now):
                continue
            if isinstance(spec, ApiLatency):
                if f.fires(spec.probability):
                    f.injected += 1
                    delay += _sample(spec.delay, f.rng)
            elif error is None and (spec.count is None or f.injected < spec.count) and f.fires(spec.probability):
                f.injected += 1
                error = injected_error(spec, verb, kind, f.where)
        return delay, error

    # --- watch delivery -------------------------------------------------------------------

    def _watch_faults(self, agent: str) -> list[ArmedFault]:
        found = self._watch_by_agent.get(agent)
        if found is None:
            found = [f for f in self._watch if _agent_matches(getattr(f.spec, "agent", None), agent)]
            self._watch_by_agent[agent] = found
        return found

    def watch_delay(self, agent: str, kind: str, t: float) -> tuple[float, bool]:
        """(extra delay, may overtake other objects' events) for an event written at ``t``."""
        extra = 0.0
        reorder = False
        for f in self._watch_faults(agent):
            spec = f.spec
            assert isinstance(spec, WatchDelay | WatchReorder)
            if (spec.kind is not None and spec.kind != kind) or not f.active(t):
                continue
            f.injected += 1
            if isinstance(spec, WatchDelay):
                extra += _sample(spec.delay, f.rng)
            else:
                extra += f.rng.uniform(0.0, spec.window)
                reorder = True
        return extra, reorder

    # --- node partitions ------------------------------------------------------------------

    def _partitions_of(self, agent: str) -> list[ArmedFault]:
        node = agent.removeprefix("kubelet:") if agent.startswith("kubelet:") else None
        return [f for f in self._partitions if isinstance(f.spec, NodePartition) and f.spec.node == node]

    def partition_error(self, now: float, agent: str, verb: str, kind: str) -> ApiError | None:
        """The error a call of ``agent`` meets while its node is partitioned, else None:
        the request never reaches the server (client-go reports a dial or read timeout)."""
        for f in self._partitions_of(agent):
            if f.active(now):
                f.injected += 1
                spec = f.spec
                assert isinstance(spec, NodePartition)
                res = {"bind": "pods/binding", "evict": "pods/eviction"}.get(verb) or (
                    resource_of(kind) if kind else "the requested resource"
                )
                return Timeout(
                    f"{verb} {res}: the server could not be reached: node {spec.node} is partitioned "
                    f"(injected by {f.where})"
                )
        return None

    @staticmethod
    def partition_start(spec: NodePartition, armed_at: float) -> float:
        """When the partition of ``spec``, armed at ``armed_at``, begins."""
        return armed_at if spec.start is None else max(spec.start, armed_at)

    def attach(self, client: Client) -> None:
        """Install the interceptor and the watch hook on ``client`` if a fault may hit it."""
        agent = client.name
        partitioned = bool(self._partitions_of(agent))
        if self._api_faults(agent) or partitioned:
            clock = client.clock

            async def intercept(agent: str, verb: str, kind: str) -> None:
                if partitioned and (cut := self.partition_error(clock.now(), agent, verb, kind)) is not None:
                    raise cut
                delay, error = self.api_call(clock.now(), agent, verb, kind)
                if delay > 0:
                    await clock.sleep(delay)
                if error is not None:
                    raise error

            client.interceptor = intercept
        if self._watch_faults(agent):
            client.watch_faults = self

    # --- watch cuts -----------------------------------------------------------------------

    @staticmethod
    def cut_times(spec: WatchCut, armed_at: float) -> Iterator[float]:
        """When ``spec`` cuts, for a fault armed at ``armed_at`` (``at`` in the past: at once)."""
        if spec.at is not None:
            yield max(spec.at, armed_at)
            return
        assert spec.every is not None
        begin = armed_at if spec.start is None else max(spec.start, armed_at)
        k = 1
        while spec.stop is None or begin + k * spec.every < spec.stop:
            yield begin + k * spec.every
            k += 1

    @staticmethod
    def cuts_watcher(spec: WatchCut, watcher_name: str, kind: str) -> bool:
        """Whether a cut of ``spec`` ends the watch ``watcher_name`` (its client) has on ``kind``."""
        return _agent_matches(spec.agent, watcher_name) and (spec.kind is None or spec.kind == kind)

    # --- kubelet faults (KubeletFaults) ----------------------------------------------------

    @property
    def has_kubelet_faults(self) -> bool:
        return bool(self._heartbeat or self._pulls or self._starts)

    def heartbeat_enabled(self, node: str, now: float) -> bool:
        for f in self._heartbeat:
            spec = f.spec
            assert isinstance(spec, NodeHeartbeatStop)
            if spec.node == node and f.active(now):
                f.injected += 1
                return False
        return True

    def pull_seconds(self, node: str, image: str, size: int, seconds: float, now: float) -> float:
        """The time a pull of ``image`` (``size`` bytes, ``seconds`` without faults) takes."""
        for f in self._pulls:
            spec = f.spec
            assert isinstance(spec, ImagePullSlow)
            if (spec.node is not None and spec.node != node) or not f.active(now):
                continue
            if spec.image is not None and _image(spec.image) != _image(image):
                continue
            f.injected += 1
            if spec.factor is not None:
                seconds *= spec.factor
            elif spec.bandwidth:
                seconds = size / spec.bandwidth
        return seconds

    def start_failure(self, node: str, pod: Pod, now: float) -> tuple[str, str] | None:
        """(reason, message) if ``pod``'s containers fail to start now, else None."""
        for f in self._starts:
            spec = f.spec
            assert isinstance(spec, ContainerStartFailure)
            if (spec.node is not None and spec.node != node) or not f.active(now):
                continue
            if not label_selector_matches(spec.selector, pod.metadata.labels) or not f.fires(spec.probability):
                continue
            f.injected += 1
            name = pod.spec.containers[0].name if pod.spec.containers else ""
            return spec.reason, spec.message or f'failed to start container "{name}": injected by {f.where}'
        return None
