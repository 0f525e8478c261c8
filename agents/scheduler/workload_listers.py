"""The workload objects the scheduler reads but never schedules: PodDisruptionBudgets (for
DefaultPreemption) and Services, ReplicaSets and StatefulSets (for PodTopologySpread's
system-default constraints, upstream ``helper.DefaultSelector``).

``WorkloadListers`` holds one informer per kind. Two views, both plain functions of the
caches:

- ``pdbs()``: every budget as preemption reads it (namespace, selector, disruptionsAllowed,
  disruptedPods), in namespace/name order, rebuilt only after a PDB event;
- ``default_selector(pod)``: the union of the ``spec.selector`` maps of the Services in the
  pod's namespace that select it (by name; a Service without selector selects nothing),
  ANDed with the selector of the ReplicaSet or StatefulSet (``apps/v1``) that controls the
  pod, looked up by name as upstream does (ReplicationControllers do not exist here). Empty
  means "no default constraints".

``StaticWorkloads`` gives the same views over fixed objects, for ``explain``.

No cluster event is raised for these kinds: in v1.34 no in-tree plugin registers Service,
ReplicaSet, StatefulSet or PDB events, so a change to them waits for the next pod or node
event as upstream.

The informers list and watch through their own client (``<scheduler>:workloads``, with the
scheduler's watch latency and faults, its own seeded stream, and no API latency): the
scheduler waits for them to sync before its first cycle as upstream waits for every cache,
and neither four more draws from the scheduler client's stream nor a list slower than the
pod list may move a run's existing trace. This module does not own what the plugins do
with these views.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from agents.scheduler.informer_group import InformerGroup
from agents.scheduler.preemption import PodDisruptionBudget
from emulator.base.api.core import Pod
from emulator.base.api.labelselector import EVERYTHING, Selector, SelectorError, compile_selector
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer

__all__ = [
    "KINDS",
    "StaticWorkloads",
    "WorkloadListers",
    "default_selector",
    "pdb_views",
    "service_selectors",
    "workload_client",
]

KINDS: Final = ("PodDisruptionBudget", "Service", "ReplicaSet", "StatefulSet")


def workload_client(client: Client, suffix: str = "workloads") -> Client:
    """``client.side_client(suffix)``: the listers' latency-free client."""
    return client.side_client(suffix)


def default_selector(
    pod: Pod,
    service_selectors: Sequence[Mapping[str, str]],
    replica_sets: Mapping[tuple[str, str], Any],
    stateful_sets: Mapping[tuple[str, str], Any],
) -> Selector:
    """Upstream ``helper.DefaultSelector``: ``service_selectors`` are the non-empty selectors
    of the Services in the pod's namespace (by name); the workload caches are keyed
    (namespace, name)."""
    labels = pod.metadata.labels
    merged: dict[str, str] = {}
    for sel in service_selectors:
        if all(labels.get(k) == v for k, v in sel.items()):
            merged.update(sel)
    selector = Selector.from_set(merged) if merged else EVERYTHING
    owner = None
    for ref in pod.metadata.owner_references:  # the controller, if any
        if ref.controller:
            owner = ref
            break
    if owner is None or owner.api_version != "apps/v1":
        return selector
    store = {"ReplicaSet": replica_sets, "StatefulSet": stateful_sets}.get(owner.kind)
    obj = store.get((pod.metadata.namespace, owner.name)) if store is not None else None
    if obj is None:
        return selector
    try:
        other = compile_selector(obj.spec.selector)
    except SelectorError:
        return selector
    if other.nothing or other.empty():  # Requirements() of Nothing is not ok; of Everything, none
        return selector
    return selector.add(other)


def pdb_views(store: Mapping[tuple[str, str], Any]) -> list[PodDisruptionBudget]:
    """The budgets of a (namespace, name)-keyed cache as preemption reads them, in key order."""
    return [
        PodDisruptionBudget(
            namespace=key[0],
            selector=store[key].spec.selector,
            disruptions_allowed=store[key].status.disruptions_allowed,
            disrupted_pods=frozenset(store[key].status.disrupted_pods),
        )
        for key in sorted(store)
    ]


def service_selectors(store: Mapping[tuple[str, str], Any]) -> dict[str, list[dict[str, str]]]:
    """Namespace → the non-empty selectors of its Services, by name."""
    by_ns: dict[str, list[dict[str, str]]] = {}
    for key in sorted(store):
        if store[key].spec.selector:
            by_ns.setdefault(key[0], []).append(store[key].spec.selector)
    return by_ns


class StaticWorkloads:
    """The same views over fixed objects (``explain``: no informers, nothing changes)."""

    def __init__(self, objects: Iterable[Any]) -> None:
        self.stores: dict[str, dict[tuple[str, str], Any]] = {kind: {} for kind in KINDS}
        for obj in objects:
            store = self.stores.get(obj.kind)
            if store is not None:
                store[(obj.metadata.namespace, obj.metadata.name)] = obj
        self._pdbs = pdb_views(self.stores["PodDisruptionBudget"])
        self._services = service_selectors(self.stores["Service"])

    def __repr__(self) -> str:
        return f"<StaticWorkloads {' '.join(f'{k}={len(v)}' for k, v in self.stores.items())}>"

    def pdbs(self) -> list[PodDisruptionBudget]:
        return self._pdbs

    def default_selector(self, pod: Pod) -> Selector:
        s = self.stores
        services = self._services.get(pod.metadata.namespace, [])
        return default_selector(pod, services, s["ReplicaSet"], s["StatefulSet"])


class WorkloadListers(InformerGroup):
    """The scheduler's informers of ``KINDS`` and the views plugins read."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.informers = {kind: Informer(client, kind) for kind in KINDS}
        self._pdbs: list[PodDisruptionBudget] | None = None
        self._service_selectors: dict[str, list[dict[str, str]]] | None = None
        self.informers["PodDisruptionBudget"].add_handlers(self._pdb_changed, self._pdb_updated, self._pdb_changed)
        self.informers["Service"].add_handlers(self._service_changed, self._service_updated, self._service_changed)

    def __repr__(self) -> str:
        sizes = " ".join(f"{k}={len(i.store)}" for k, i in self.informers.items())
        return f"<WorkloadListers {sizes}>"

    def _pdb_changed(self, obj: Any) -> None:
        self._pdbs = None

    def _pdb_updated(self, old: Any, new: Any) -> None:
        self._pdbs = None

    def _service_changed(self, obj: Any) -> None:
        self._service_selectors = None

    def _service_updated(self, old: Any, new: Any) -> None:
        self._service_selectors = None

    def _services_in(self, namespace: str) -> list[dict[str, str]]:
        if self._service_selectors is None:
            self._service_selectors = service_selectors(self.informers["Service"].store)
        return self._service_selectors.get(namespace, [])

    def pdbs(self) -> list[PodDisruptionBudget]:
        """Every PDB, as preemption reads it (namespace/name order)."""
        if self._pdbs is None:
            self._pdbs = pdb_views(self.informers["PodDisruptionBudget"].store)
        return self._pdbs

    def default_selector(self, pod: Pod) -> Selector:
        i = self.informers
        services = self._services_in(pod.metadata.namespace)
        return default_selector(pod, services, i["ReplicaSet"].store, i["StatefulSet"].store)
