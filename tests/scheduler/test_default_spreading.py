"""PodTopologySpread's system defaults with upstream's ``helper.DefaultSelector``: the selector
comes from the Services selecting a pod and the ReplicaSet or StatefulSet controlling it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from msgspec.structs import replace

from agents.scheduler.workload_listers import default_selector
from emulator.base.api.apps import ReplicaSet, ReplicaSetSpec, StatefulSet, StatefulSetSpec
from emulator.base.api.core import LabelSelector, LabelSelectorRequirement, Pod
from emulator.base.api.labelselector import EVERYTHING, Selector, compile_selector
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.services import Service, ServicePort, ServiceSpec
from tests.builders import node, pod
from tests.cluster import Cluster

LABELS = {"app": "web", "tier": "front"}
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def _owned(p: Pod, kind: str, name: str, api_version: str = "apps/v1", *, controller: bool = True) -> Pod:
    ref = OwnerReference(api_version=api_version, kind=kind, name=name, uid=f"uid-{name}", controller=controller)
    return replace(p, metadata=replace(p.metadata, owner_references=[ref]))


def _rs(name: str, selector: LabelSelector | None) -> ReplicaSet:
    return ReplicaSet(metadata=ObjectMeta(name=name, namespace="default"), spec=ReplicaSetSpec(selector=selector))


def _sts(name: str, selector: LabelSelector | None) -> StatefulSet:
    return StatefulSet(metadata=ObjectMeta(name=name, namespace="default"), spec=StatefulSetSpec(selector=selector))


WEB = LabelSelector(match_labels={"app": "web"})
FRONT_EXPR = LabelSelector(match_expressions=[LabelSelectorRequirement(key="tier", operator="In", values=["front"])])
POD = pod("p", labels=LABELS)


@pytest.mark.parametrize(
    ("p", "services", "workloads", "want"),
    [
        pytest.param(POD, [], [], EVERYTHING, id="nothing-selects-the-pod"),
        pytest.param(POD, [{"app": "web"}], [], Selector.from_set({"app": "web"}), id="service"),
        pytest.param(POD, [{"app": "web"}, {"tier": "front"}], [], Selector.from_set(LABELS), id="services-merged"),
        pytest.param(POD, [{"app": "db"}], [], EVERYTHING, id="service-not-selecting"),
        pytest.param(_owned(POD, "ReplicaSet", "rs"), [], [_rs("rs", WEB)], compile_selector(WEB), id="replicaset"),
        pytest.param(
            _owned(POD, "StatefulSet", "ss"),
            [],
            [_sts("ss", FRONT_EXPR)],
            compile_selector(FRONT_EXPR),
            id="statefulset",
        ),
        pytest.param(
            _owned(POD, "ReplicaSet", "rs"),
            [{"tier": "front"}],
            [_rs("rs", WEB)],
            Selector.from_set({"tier": "front"}).add(compile_selector(WEB)),
            id="service-and-replicaset",
        ),
        pytest.param(_owned(POD, "ReplicaSet", "gone"), [], [_rs("rs", WEB)], EVERYTHING, id="owner-not-found"),
        pytest.param(
            _owned(POD, "ReplicaSet", "rs", controller=False), [], [_rs("rs", WEB)], EVERYTHING, id="not-controller"
        ),
        pytest.param(
            _owned(POD, "ReplicaSet", "rs", "extensions/v1beta1"), [], [_rs("rs", WEB)], EVERYTHING, id="other-group"
        ),
        pytest.param(_owned(POD, "Job", "rs"), [], [_rs("rs", WEB)], EVERYTHING, id="job-is-not-a-source"),
        pytest.param(
            _owned(POD, "ReplicaSet", "rs"), [], [_rs("rs", None)], EVERYTHING, id="nil-selector-adds-nothing"
        ),
    ],
)
def test_default_selector(p: Pod, services: Sequence[dict[str, str]], workloads: list[Any], want: Selector) -> None:
    rs = {(w.metadata.namespace, w.metadata.name): w for w in workloads if w.kind == "ReplicaSet"}
    ss = {(w.metadata.namespace, w.metadata.name): w for w in workloads if w.kind == "StatefulSet"}
    assert default_selector(p, services, rs, ss) == want


# --- in a cluster ----------------------------------------------------------------------------


def _zones(c: Cluster) -> None:
    """One node per zone; zone a's is much bigger, so resource scoring alone packs it."""
    for zone, cpu in (("a", "64"), ("b", "8"), ("c", "8")):
        name = f"n-{zone}"
        c.server.create(node(name, cpu=cpu, memory="64Gi", labels={ZONE: zone, HOSTNAME: name}))


TEMPLATE = PodTemplateSpec(metadata=ObjectMeta(labels={"app": "web"}), spec=pod("t").spec)


async def _place(c: Cluster, source: str) -> Counter[str]:
    _zones(c)
    owner: Any = None
    if source == "replicaset":
        owner = c.server.create(
            ReplicaSet(
                metadata=ObjectMeta(name="web", namespace="default"),
                spec=ReplicaSetSpec(replicas=6, selector=WEB, template=TEMPLATE),
            )
        )
    elif source == "service":
        c.server.create(
            Service(
                metadata=ObjectMeta(name="web", namespace="default"),
                spec=ServiceSpec(selector={"app": "web"}, ports=[ServicePort(port=80)]),
            )
        )
    await c.start_scheduler()
    for i in range(6):
        p = pod(f"web-{i}", labels={"app": "web"}, cpu="1")
        if owner is not None:
            ref = OwnerReference(
                api_version="apps/v1", kind="ReplicaSet", name="web", uid=owner.metadata.uid, controller=True
            )
            p = replace(p, metadata=replace(p.metadata, owner_references=[ref]))
        c.server.create(p)
        await c.until(lambda name=f"web-{i}": c.pod(name).spec.node_name != "")
    return Counter(c.pod(f"web-{i}").spec.node_name for i in range(6))


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("source", "want"),
    [
        pytest.param("replicaset", {"n-a": 2, "n-b": 2, "n-c": 2}, id="replicaset-spreads"),
        pytest.param("service", {"n-a": 2, "n-b": 2, "n-c": 2}, id="service-spreads"),
        pytest.param("none", {"n-a": 6}, id="bare-pods-pack"),
    ],
)
async def test_system_default_spreading_across_zones(cluster: Cluster, source: str, want: dict[str, int]) -> None:
    assert dict(await _place(cluster, source)) == want
