"""Explaining a pod against fixed objects: the wiring behind ``python -m emulator explain``.

What this module owns: ``explain_objects``, which builds one profile's ``Framework`` over given
objects — a snapshot of the nodes and their running pods, a nominator holding the nominated pods
as the scheduler's would, a Namespace lister, and the PodDisruptionBudgets, Services,
ReplicaSets and StatefulSets preemption and default spreading read — and hands it to
``explain_pod`` (``explain.py``). Every handle dependency is given at construction, as in a
running scheduler; there is no queue, no informer and no task group (preemption's API calls and
``activate`` are absent: explain never runs PostFilter's side effects).

It does not own reading manifests, admitting them or printing (``emulator/app/commands/explain.py``),
nor choosing the profile (the caller passes it, from ``SchedulerConfig.profile``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents.scheduler.cache import Snapshot
from agents.scheduler.config import Profile, SchedulerConfig
from agents.scheduler.dra_manager import KINDS as DRA_KINDS
from agents.scheduler.dra_manager import static_dra_manager
from agents.scheduler.explain import Explanation, explain_pod
from agents.scheduler.framework.interface import PluginFactory
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import PodInfo
from agents.scheduler.volume_listers import KINDS as VOLUME_KINDS
from agents.scheduler.volume_listers import static_volume_listers
from agents.scheduler.workload_listers import KINDS as WORKLOAD_LISTER_KINDS
from agents.scheduler.workload_listers import StaticWorkloads
from emulator.base.api.core import Namespace, Node, Pod
from emulator.base.runtime.clock import StoppedClock

__all__ = ["INPUT_KINDS", "ProfileError", "explain_objects", "static_framework"]

INPUT_KINDS = (*WORKLOAD_LISTER_KINDS, *(kind for kind, _ in VOLUME_KINDS), *(kind for kind, _ in DRA_KINDS))
"""The kinds beside nodes, pods and namespaces that ``explain_objects`` reads."""


class ProfileError(ValueError):
    """The profile's plugins refuse their configuration (upstream's message)."""


class _Nominator:
    """The nominated pods as the scheduler's nominator would hold them, by node."""

    def __init__(self, pods: Iterable[Pod]) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        for p in pods:
            self._by_node.setdefault(p.status.nominated_node_name or "", []).append(PodInfo(p))

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self._by_node.get(node_name, []))


class _Namespaces:
    """A Namespace lister over fixed namespaces (``get(name)``, ``list()`` in the given order)."""

    def __init__(self, namespaces: Sequence[Namespace]) -> None:
        self._list = list(namespaces)
        self._by_name = {ns.metadata.name: ns for ns in self._list}

    def get(self, name: str) -> Any:
        return self._by_name.get(name)

    def list(self) -> list[Any]:
        return list(self._list)


def explain_objects(
    pod: Pod,
    *,
    config: SchedulerConfig,
    profile: Profile,
    registry: Mapping[str, PluginFactory],
    nodes: Sequence[Node],
    running: Sequence[Pod],
    nominated: Sequence[Pod] = (),
    namespaces: Sequence[Namespace] = (),
    workloads: Iterable[Any] = (),
) -> Explanation:
    """Explain one scheduling cycle of ``pod`` in ``profile`` against these objects (clock fixed
    at 0, seed 0). ``workloads``: the PodDisruptionBudgets, Services, ReplicaSets,
    StatefulSets and the storage kinds the volume plugins read (``INPUT_KINDS``; other kinds
    are ignored). ``ProfileError`` if the profile's plugins refuse
    their arguments."""
    snapshot = Snapshot.from_objects(list(running), list(nodes))
    rng = random.Random(0)
    try:
        fwk = static_framework(
            profile,
            registry,
            config.parallelism,
            snapshot,
            rng,
            _Nominator(nominated),
            _Namespaces(namespaces),
            workloads,
        )
    except ValueError as err:
        raise ProfileError(str(err)) from None
    return explain_pod(fwk, snapshot, pod, rng=rng)


def static_framework(
    profile: Profile,
    registry: Mapping[str, PluginFactory],
    parallelism: int,
    snapshot: Snapshot,
    rng: random.Random,
    nominator: Any,
    namespaces: Any,
    workloads: Iterable[Any],
    *,
    volume_listers: Any = None,
) -> Framework:
    """One profile's ``Framework`` over given objects, outside any running scheduler (clock
    fixed at 0): ``explain_objects``' and the ``SchedulingSimulator``'s. ``namespaces`` and
    ``nominator`` are listers (``get``/``list``, ``nominated_pods_for_node``); ``workloads``
    the PodDisruptionBudgets, Services, ReplicaSets, StatefulSets and the storage and DRA kinds
    the plugins read (``volume_listers``: live ones instead of the storage kinds among them).
    ``ValueError`` if the profile's plugins refuse their arguments."""
    workloads = list(workloads)
    static = StaticWorkloads(workloads)
    return Framework(
        profile.to_spec(),
        registry,
        clock=StoppedClock(),
        rng=rng,
        snapshot=snapshot,
        nominator=nominator,
        parallelism=parallelism,
        namespaces=namespaces,
        pdb_lister=static.pdbs,
        default_selector=static.default_selector,
        volume_listers=volume_listers if volume_listers is not None else static_volume_listers(workloads),
        dra_manager=static_dra_manager(workloads),
    )
