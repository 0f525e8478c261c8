"""Shared fixtures of the preemption tests: upstream's ``st.MakePod``/``st.MakeNode`` shapes,
tiny fake plugins (upstream ``tf.FakeFilterPlugin``, ``TrueFilter``, ``FalseFilter``,
``MatchFilter``, the error-raising ``TestPlugin``), a scripted rng for the offset, a nominator,
a recording fake API client, and ``build`` — a Framework with NodeResourcesFit and
DefaultPreemption over a snapshot of the given objects."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from msgspec.structs import replace

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.interface import ExtensionPoint, PreFilterResult, ProfileSpec
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import SUCCESS, Code, CycleState, NodeInfo, PodInfo, Status
from agents.scheduler.framework.waiting_pods import WaitingPodsMap
from agents.scheduler.plugins.defaultpreemption import DefaultPreemption
from agents.scheduler.plugins.noderesources_fit import NodeResourcesFit
from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod, PodCondition
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.runtime.clock import format_timestamp
from tests.builders import container, node, pod
from tests.clocks import ManualClock

EP = ExtensionPoint
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
SCHEDULER = "default-scheduler"


def cap(res: dict[str, str]) -> dict[str, str]:
    """Upstream ``NodeWrapper.Capacity``: ``pods: 32`` unless given, then ``res``."""
    return {"pods": "32", **res}


def make_pod(
    name: str,
    *,
    priority: int | None = None,
    node: str = "",
    req: dict[str, str] | None = None,
    start: float | None = None,
    labels: dict[str, str] | None = None,
    uid: str = "",
    namespace: str = "default",
    nominated: str = "",
    policy: str | None = None,
    terminating: bool = False,
    conditions: Sequence[dict[str, str]] = (),
    containers: int = 1,
    scheduler: str = SCHEDULER,
) -> Pod:
    """Upstream's ``st.MakePod()`` as this package uses it: uid = name, ``containers`` images
    ``i`` with ``req`` on the first, ``start`` and ``terminating`` as timestamps."""
    return pod(
        name,
        namespace=namespace,
        uid=uid or name,
        labels=labels,
        deletion_timestamp=format_timestamp(0) if terminating else None,
        containers=[container(f"c{i}", image="i", requests=req if i == 0 else None) for i in range(containers)],
        node=node,
        priority=priority,
        preemption_policy=policy,
        scheduler=scheduler,
        nominated=nominated,
        start_time=format_timestamp(start) if start is not None else None,
        conditions=[convert(c, PodCondition) for c in conditions],
    )


def make_node(name: str, res: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> Node:
    """A node with ``res`` allocatable (default ``cap(VERY_LARGE)``)."""
    room = res if res is not None else cap(VERY_LARGE)
    return node(name, cpu=None, memory=None, pods=None, extra=room, labels=labels, allocatable_only=True)


def topo_node(spec: str, res: dict[str, str] | None = None) -> Node:
    """Upstream's "name/zone/region" node names: labels hostname, zone, region."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return make_node(parts[0], res, labels)


class FakeClock(ManualClock):
    """``ManualClock`` from 100 s."""

    def __init__(self, t: float = 100.0) -> None:
        super().__init__(t)


class ScriptedRng(random.Random):
    """``randrange`` returns the scripted offsets in turn (upstream seeds Go's rand with 4: 4, 1, 3)."""

    def __init__(self, offsets: Iterable[int] = ()) -> None:
        super().__init__(0)
        self.offsets = list(offsets)
        self.calls: list[int] = []

    def randrange(self, *args: Any, **kwargs: Any) -> int:
        self.calls.append(args[0])
        return self.offsets.pop(0) if self.offsets else 0


class FakeNominator:
    def __init__(self, nominated: dict[str, list[Pod]] | None = None) -> None:
        self.nominated = {n: [PodInfo(p) for p in pods] for n, pods in (nominated or {}).items()}

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.nominated.get(node_name, []))


# --- fake plugins ---------------------------------------------------------------------------


class Sort:
    name = "Sort"

    def less(self, a: Any, b: Any) -> bool:
        return False


class Binder:
    name = "Binder"

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS


class FakeFilter:
    """Upstream ``tf.FakeFilterPlugin``: counts calls; returns the code set for the node."""

    name = "FakeFilter"

    def __init__(self, codes: dict[str, Code] | None = None) -> None:
        self.codes = codes or {}
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls += 1
        code = self.codes.get(node_info.name, Code.Success)
        return SUCCESS if code is Code.Success else Status(code, f"injecting failure for pod {pod.metadata.name}")


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS


class FalseFilter:
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status(Code.Unschedulable, "injecting failure for pod")


class MatchFilter:
    """Passes only on the node named as the pod."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS if node_info.name == pod.metadata.name else Status(Code.Unschedulable, "name mismatch")


class ErrorExtensions:
    """Upstream ``TestPlugin``: AddPod/RemovePod fail on nodes labelled ``error: "true"``."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return None, SUCCESS

    def pre_filter_extensions(self) -> ErrorExtensions:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pi: PodInfo, node_info: NodeInfo) -> Status:
        return self._check(node_info, f"failed to add pod: {pod.metadata.name}")

    def remove_pod(self, state: CycleState, pod: Pod, pi: PodInfo, node_info: NodeInfo) -> Status:
        return self._check(node_info, f"failed to remove pod: {pod.metadata.name}")

    @staticmethod
    def _check(node_info: NodeInfo, msg: str) -> Status:
        assert node_info.node is not None
        return Status(Code.Error, msg) if node_info.node.metadata.labels.get("error") == "true" else SUCCESS


def build(
    pods: Sequence[Pod],
    nodes: Sequence[Node],
    *,
    filters: Sequence[Any] = (),
    pre_filters: Sequence[Any] = (),
    fit: bool = True,
    args: dict[str, Any] | None = None,
    nominator: Any = None,
    client: Any = None,
    rng: random.Random | None = None,
    clock: Any = None,
    async_preemption: bool = True,
    waiting_pods: WaitingPodsMap | None = None,
    **handle: Any,
) -> tuple[Framework, DefaultPreemption]:
    """A profile: [fit] + pre_filters at PreFilter, filters + [fit] at Filter, DefaultPreemption;
    ``handle``: more of the framework's handle dependencies (``activate``, ``run_async``...)."""
    plugins: dict[str, Any] = {"Sort": Sort(), "Binder": Binder()}
    pre: list[str] = []
    filt: list[str] = []
    for pl in filters:
        plugins[pl.name] = pl
        filt.append(pl.name)
    for pl in pre_filters:
        plugins[pl.name] = pl
        pre.append(pl.name)
    registry: dict[str, Callable[[Any, Any], Any]] = {n: (lambda a, h, pl=pl: pl) for n, pl in plugins.items()}
    if fit:
        registry["NodeResourcesFit"] = NodeResourcesFit
        pre.insert(0, "NodeResourcesFit")
        filt.append("NodeResourcesFit")
    registry["DefaultPreemption"] = lambda a, h: DefaultPreemption(a, h, async_preemption=async_preemption)
    points = {
        EP.QueueSort: [("Sort", 0)],
        EP.PreEnqueue: [("DefaultPreemption", 0)],
        EP.PreFilter: [(n, 0) for n in pre],
        EP.Filter: [(n, 0) for n in filt],
        EP.PostFilter: [("DefaultPreemption", 0)],
        EP.Bind: [("Binder", 0)],
    }
    spec = ProfileSpec(
        scheduler_name=SCHEDULER, plugins=points, plugin_args={"DefaultPreemption": args} if args else {}
    )
    fwk = Framework(
        spec,
        registry,  # type: ignore[arg-type]
        clock=clock or FakeClock(),
        rng=rng or ScriptedRng(),
        client=client,
        snapshot=Snapshot.from_objects(pods, nodes),
        nominator=nominator or FakeNominator(),
        waiting_pods=waiting_pods,
        **handle,
    )
    plugin = fwk.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    return fwk, plugin


def prefiltered(fwk: Framework, pod: Pod) -> CycleState:
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod, fwk.snapshot_shared_lister().node_info_list)
    assert status.is_success(), status
    return state


# --- a recording API client ---------------------------------------------------------------------


class FakeClient:
    """The calls preemption makes, against an in-memory pod store; failures injected by name."""

    def __init__(self, pods: Iterable[Pod] = (), fail: dict[tuple[str, str], ApiError] | None = None) -> None:
        self.pods: dict[tuple[str, str], Pod] = {(p.metadata.namespace, p.metadata.name): p for p in pods}
        self.fail = fail or {}
        self.calls: list[tuple[str, str]] = []
        """Every call attempted, failed ones included: (verb, name)."""
        self.updated: list[Pod] = []
        """Successful status writes."""
        self.deleted: list[str] = []
        """Successful deletions."""
        self.events: list[Any] = []
        self.on_call: Callable[[str, str], None] | None = None

    def _record(self, verb: str, name: str) -> None:
        self.calls.append((verb, name))
        if self.on_call is not None:
            self.on_call(verb, name)
        err = self.fail.get((verb, name))
        if err is not None:
            raise err

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        self._record("get", name)
        try:
            return self.pods[(namespace, name)]
        except KeyError:
            raise NotFound.of(kind, name) from None

    async def update_status(self, obj: Any) -> Any:
        self._record("updateStatus", obj.metadata.name)
        key = (obj.metadata.namespace, obj.metadata.name)
        if key not in self.pods:
            raise NotFound.of("Pod", obj.metadata.name)
        self.pods[key] = replace(self.pods[key], status=obj.status)
        self.updated.append(self.pods[key])
        return self.pods[key]

    async def delete(
        self, kind: str, name: str, namespace: str = "", *, grace_period_seconds: int | None = None, uid: str = ""
    ) -> Any:
        self._record("delete", name)
        try:
            gone = self.pods.pop((namespace, name))
        except KeyError:
            raise NotFound.of(kind, name) from None
        self.deleted.append(name)
        return gone

    async def create(self, obj: Any) -> Any:
        self._record("create", obj.kind)
        self.events.append(obj)
        return obj

    def verbs(self, verb: str) -> list[str]:
        return [name for v, name in self.calls if v == verb]
