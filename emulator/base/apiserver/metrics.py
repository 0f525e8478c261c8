"""The resource metrics API (``metrics.k8s.io/v1beta1``: upstream's metrics-server, an
aggregated API in front of the kubelets' summaries), read-only and computed at request time
from the store's pods and the run's ``LoadModel`` (``emulator.base.api.load``).

``ResourceMetrics`` lives beside the ``ApiServer`` (``ApiServer.metrics``), so the in-process
agents (the HPA controller, through ``Client.pod_metrics``) and the HTTP door (``kubectl top``)
read the same figures. A PodMetrics per Running pod (what metrics-server scrapes): its usage
split over its containers in proportion to their requests of each resource (evenly without
requests; the remainder to the last container, so the containers sum to the pod), cpu and
memory always present (0 when the model says nothing). A NodeMetrics per Node: the sum of its
Running pods' usage. ``timestamp`` is the request's time, ``window`` metrics-server's
resolution (15 s).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import methodcaller
from typing import Any, Final, Protocol

from emulator.base.api.autoscaling import ContainerMetrics, NodeMetrics, PodMetrics
from emulator.base.api.core import Pod
from emulator.base.api.labelselector import EVERYTHING, Selector
from emulator.base.api.load import LoadModel, Usage
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import Quantity
from emulator.base.runtime.clock import Clock

__all__ = ["METRICS_WINDOW", "ResourceMetrics"]

METRICS_WINDOW: Final = 15.0
"""metrics-server's ``--metric-resolution`` default: the window its usage is averaged over."""
_ALWAYS: Final = ("cpu", "memory")


class _Tables(Protocol):
    def table(self, kind: str) -> Mapping[tuple[str, str], Any]: ...


def _quantity(resource: str, milli: int) -> Quantity:
    if resource == "cpu":
        return Quantity.from_milli(milli)
    return Quantity.from_value(-((-milli) // 1000))


def _split(pod: Pod, usage: Usage) -> list[ContainerMetrics]:
    containers = pod.spec.containers
    shares: list[dict[str, int]] = [{} for _ in containers]
    for resource in sorted({*_ALWAYS, *usage}):
        total = usage.get(resource, 0)
        weights = [c.resources.requests[resource].milli if resource in c.resources.requests else 0 for c in containers]
        if sum(weights) <= 0:
            weights = [1] * len(containers)
        left = total
        for i, w in enumerate(weights):
            part = left if i == len(containers) - 1 else total * w // sum(weights)
            shares[i][resource] = part
            left -= part
    return [
        ContainerMetrics(name=c.name, usage={r: _quantity(r, m) for r, m in share.items()})
        for c, share in zip(containers, shares, strict=True)
    ]


class ResourceMetrics:
    """PodMetrics and NodeMetrics of the store, now."""

    def __init__(self, store: _Tables, clock: Clock, model: LoadModel | None = None) -> None:
        self.store = store
        self.clock = clock
        self.model = model if model is not None else LoadModel()
        self._keys: set[tuple[str, str]] = set()
        self._order: list[tuple[str, str]] = []
        """The Pod table's keys, sorted (re-sorted when they change)."""
        self._selected: dict[tuple[str, Selector, str], tuple[list[str], list[tuple[str, str]], list[bool] | None]] = {}
        self._selected_version = -1
        """``pod_usage``'s pods by (namespace, selector, resource), for the load model's ``version``."""

    def __repr__(self) -> str:
        return f"<ResourceMetrics {self.model!r}>"

    def _pods(self) -> list[Pod]:
        table = self.store.table("Pod")
        if table.keys() != self._keys:
            self._keys = set(table)
            self._order = sorted(self._keys)
        return list(map(table.__getitem__, self._order))

    def usage(self) -> dict[tuple[str, str], Usage]:
        """Every Running pod's usage now, by (namespace, name)."""
        return self.model.usage(self._pods(), self.clock.now())

    def pod_metrics(self, namespace: str = "", selector: Selector = EVERYTHING, name: str = "") -> list[PodMetrics]:
        """PodMetrics of the Running pods of ``namespace`` ("" = all) matching ``selector``
        (and named ``name``, if given), by namespace and name."""
        now = self.clock.now()
        pods = self._pods()
        usage = self.model.shared_usage(pods, now)
        stamp = self.clock.timestamp(now)
        out: list[PodMetrics] = []
        for pod in pods:
            meta = pod.metadata
            key = (meta.namespace, meta.name)
            if key not in usage or (namespace and meta.namespace != namespace) or (name and meta.name != name):
                continue
            if not selector.matches(meta.labels):
                continue
            out.append(
                PodMetrics(
                    metadata=ObjectMeta(
                        name=meta.name, namespace=meta.namespace, labels=dict(meta.labels), creation_timestamp=stamp
                    ),
                    timestamp=stamp,
                    window=f"{METRICS_WINDOW:g}s",
                    containers=_split(pod, usage[key]),
                )
            )
        return out

    def pod_usage(self, namespace: str, selector: Selector, resource: str) -> tuple[str, dict[str, int | None]]:
        """What ``pod_metrics(namespace, selector)`` says of ``resource``, summed over each pod's
        containers, without building the PodMetrics: (their ``timestamp``, pod name -> milli-units,
        ``None`` for a pod whose containers do not all report it: one without containers reports
        nothing; cpu and memory are always reported, another resource when the model gives it). The
        containers' shares sum to the pod's usage, so the figures are the PodMetrics' exactly;
        for the HPA controller, which reads one resource of many pods every 15 s."""
        now = self.clock.now()
        pods = self._pods()
        usage = self.model.shared_usage(pods, now)
        model = self.model
        if self._selected_version != model.version:
            self._selected_version = model.version
            self._selected = {}
        selected = self._selected.get((namespace, selector, resource))
        if selected is None:
            selected = self._selected[(namespace, selector, resource)] = self._select(
                pods, usage, namespace, selector, resource
            )
        names, keys, reported = selected
        values = map(methodcaller("get", resource, 0), map(usage.__getitem__, keys))
        if reported is None:  # every selected pod reports it
            return self.clock.timestamp(now), dict(zip(names, values, strict=True))
        return self.clock.timestamp(now), {
            name: value if ok else None for name, value, ok in zip(names, values, reported, strict=True)
        }

    @staticmethod
    def _select(
        pods: list[Pod], usage: Mapping[tuple[str, str], Usage], namespace: str, selector: Selector, resource: str
    ) -> tuple[list[str], list[tuple[str, str]], list[bool] | None]:
        """``pod_usage``'s pods: (their names, keys, whether each reports ``resource``; None when
        all do), in order. What it reads of a pod is its object's, and of its usage the resources
        named, which the time does not change: kept while the load model's pods are the same."""
        names: list[str] = []
        keys: list[tuple[str, str]] = []
        reported: list[bool] = []
        for pod in pods:
            meta = pod.metadata
            key = (meta.namespace, meta.name)
            u = usage.get(key)
            if u is None or (namespace and meta.namespace != namespace) or not selector.matches(meta.labels):
                continue
            names.append(meta.name)
            keys.append(key)
            reported.append(bool(pod.spec.containers) and (resource in _ALWAYS or resource in u))
        return names, keys, None if all(reported) else reported

    def node_metrics(self, name: str = "", selector: Selector = EVERYTHING) -> list[NodeMetrics]:
        """NodeMetrics of every Node (named ``name``, if given) matching ``selector``, by name."""
        now = self.clock.now()
        pods = self._pods()
        usage = self.model.shared_usage(pods, now)
        per_node: dict[str, dict[str, int]] = {}
        for pod in pods:
            u = usage.get((pod.metadata.namespace, pod.metadata.name))
            if u is None or not pod.spec.node_name:
                continue
            total = per_node.setdefault(pod.spec.node_name, {})
            for r, m in u.items():
                total[r] = total.get(r, 0) + m
        stamp = self.clock.timestamp(now)
        nodes = self.store.table("Node")
        out: list[NodeMetrics] = []
        for key in sorted(nodes):
            node = nodes[key]
            meta = node.metadata
            if (name and meta.name != name) or not selector.matches(meta.labels):
                continue
            total = per_node.get(meta.name, {})
            out.append(
                NodeMetrics(
                    metadata=ObjectMeta(name=meta.name, labels=dict(meta.labels), creation_timestamp=stamp),
                    timestamp=stamp,
                    window=f"{METRICS_WINDOW:g}s",
                    usage={r: _quantity(r, total.get(r, 0)) for r in sorted({*_ALWAYS, *total})},
                )
            )
        return out
