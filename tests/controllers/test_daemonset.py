"""The DaemonSet controller on the virtual clock: one pod per eligible node, placed by the
real default scheduler through the ``metadata.name`` node affinity (nodes that join later
too), taints and cordons as upstream, pods of vanished nodes, the rolling update with
``maxUnavailable`` and ``maxSurge``, failed pods replaced, and the status fields. Readiness
is written by hand, as the kubelet would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from msgspec.structs import replace

from agents.controllers.controllerutils import EXPECTATIONS_TIMEOUT
from agents.controllers.daemonset.controller import DaemonSetController, _Pending
from agents.controllers.daemonset.eligibility import target_node
from agents.controllers.history import CONTROLLER_REVISION_HASH
from emulator.base.api.apps import DaemonSet, DaemonSetUpdateStrategy, RollingUpdateDaemonSet
from emulator.base.api.core import Container, Event, Node, Pod
from emulator.base.api.intstr import IntOrString
from tests.builders import node, taint, toleration
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers, daemonset, make_ready, set_phase, update_spec


@asynccontextmanager
async def world(*nodes: Node, sets: tuple[DaemonSet, ...] = (), scheduler: bool = False) -> AsyncIterator[Cluster]:
    async with open_cluster(namespaces=("default",)) as c:
        for n in nodes:
            c.server.create(n)
        if scheduler:
            await c.start_scheduler()
        await c.start(Controllers(c, ["daemonset"]), "controllers")
        for ds in sets:
            c.server.create(ds)
        await c.at(1.0)
        yield c


def live(c: Cluster) -> list[Pod]:
    return sorted((p for p in c.pods() if p.metadata.deletion_timestamp is None), key=lambda p: p.metadata.name)


def targets(c: Cluster) -> list[str]:
    """The node each live daemon pod is meant for (its node-name affinity), sorted."""
    return sorted(target_node(p) or "?" for p in live(c))


def ds_of(c: Cluster, name: str = "agent") -> DaemonSet:
    got: DaemonSet = c.server.get("DaemonSet", name, "default")
    return got


@pytest.mark.asyncio
async def test_one_pod_per_eligible_node_bound_there_by_the_scheduler() -> None:
    async with world(
        node("n1", labels={"role": "edge"}),
        node("n2", labels={"role": "edge"}),
        node("n3"),
        sets=(daemonset(node_selector={"role": "edge"}),),
        scheduler=True,
    ) as c:
        await c.until(lambda: all(p.spec.node_name for p in live(c)) and len(live(c)) == 2)
        assert sorted(p.spec.node_name for p in live(c)) == ["n1", "n2"]
        p = live(c)[0]
        assert p.metadata.generate_name == "agent-"
        assert p.spec.node_selector == {"role": "edge"}
        assert p.metadata.labels[CONTROLLER_REVISION_HASH]
        assert p.metadata.labels["pod-template-generation"] == "1"
        assert {(t.key, t.effect) for t in p.spec.tolerations} >= {
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
            ("node.kubernetes.io/not-ready", "NoExecute"),
        }
        (ref,) = p.metadata.owner_references
        assert (ref.kind, ref.name, ref.controller) == ("DaemonSet", "agent", True)
        events = [e for e in c.server.list("Event")[0] if isinstance(e, Event) and e.reason == "SuccessfulCreate"]
        assert sorted(e.message for e in events) == sorted(f"Created pod: {p.metadata.name}" for p in live(c))
        await c.at(c.clock.now() + 1.0)
        s = ds_of(c).status
        assert (s.desired_number_scheduled, s.current_number_scheduled, s.number_misscheduled) == (2, 2, 0)
        assert (s.number_ready, s.number_available, s.number_unavailable) == (0, 0, 2)
        assert (s.updated_number_scheduled, s.observed_generation) == (2, 1)


@pytest.mark.asyncio
async def test_a_node_that_joins_later_gets_a_pod_bound_to_it() -> None:
    async with world(node("n1"), sets=(daemonset(),), scheduler=True) as c:
        await c.until(lambda: [p.spec.node_name for p in live(c)] == ["n1"])
        c.server.create(node("n2"))
        await c.until(lambda: sorted(p.spec.node_name for p in live(c)) == ["n1", "n2"])
        await c.until(lambda: ds_of(c).status.desired_number_scheduled == 2)


@pytest.mark.parametrize(
    ("tolerations", "want"),
    [
        pytest.param((), ["n1"], id="tainted-node-skipped"),
        pytest.param((toleration("dedicated", "gpu", effect="NoSchedule"),), ["n1", "n2"], id="tolerated"),
    ],
)
@pytest.mark.asyncio
async def test_tainted_nodes_are_skipped_unless_tolerated(tolerations: tuple, want: list[str]) -> None:  # type: ignore[type-arg]
    async with world(
        node("n1"),
        node("n2", taints=[taint("dedicated", "gpu")]),
        sets=(daemonset(tolerations=tolerations),),
        scheduler=True,
    ) as c:
        await c.until(lambda: sorted(p.spec.node_name for p in live(c)) == want)
        await c.at(c.clock.now() + 5.0)
        assert targets(c) == want


@pytest.mark.asyncio
async def test_a_cordoned_node_keeps_its_pod_and_a_noexecute_taint_removes_it() -> None:
    async with world(node("n1"), node("n2"), sets=(daemonset(),), scheduler=True) as c:
        await c.until(lambda: all(p.spec.node_name for p in live(c)) and len(live(c)) == 2)
        n1 = c.node("n1")
        cordoned = replace(
            n1, spec=replace(n1.spec, unschedulable=True, taints=[taint("node.kubernetes.io/unschedulable")])
        )
        c.server.update(cordoned)
        n2 = c.node("n2")
        c.server.update(replace(n2, spec=replace(n2.spec, taints=[taint("evict", effect="NoExecute")])))
        await c.at(c.clock.now() + 5.0)
        assert targets(c) == ["n1"]
        deletes = [w.obj.spec.node_name for w in c.of("Pod", verb="delete")]
        assert deletes == ["n2"]
        s = ds_of(c).status
        assert (s.desired_number_scheduled, s.current_number_scheduled, s.number_misscheduled) == (1, 1, 1)


@pytest.mark.asyncio
async def test_a_pod_for_a_node_that_is_gone_is_deleted() -> None:
    async with world(node("n1"), node("n2"), sets=(daemonset(),)) as c:  # no scheduler: pods stay unbound
        assert targets(c) == ["n1", "n2"]
        c.server.delete("Node", "n2")
        await c.at(c.clock.now() + 1.0)
        assert targets(c) == ["n1"]
        assert ds_of(c).status.desired_number_scheduled == 1


@pytest.mark.asyncio
async def test_a_failed_pod_is_replaced_with_a_warning() -> None:
    async with world(node("n1"), sets=(daemonset(),)) as c:
        (first,) = live(c)
        set_phase(c, first.metadata.name, "Failed")
        await c.at(c.clock.now() + 1.0)
        (second,) = live(c)
        assert second.metadata.name != first.metadata.name
        warnings = [e for e in c.server.list("Event")[0] if isinstance(e, Event) and e.reason == "FailedDaemonPod"]
        assert [e.message for e in warnings] == [
            f"Found failed daemon pod default/{first.metadata.name} on node n1, will try to kill it"
        ]
        assert warnings[0].type == "Warning"


@pytest.mark.asyncio
async def test_status_is_written_while_expectations_are_pending_without_observing() -> None:
    """Upstream ``daemon_controller.go`` ``syncDaemonSet``: with expectations not satisfied it
    still calls ``updateDaemonSetStatus`` (``updateObservedGen`` false): the counts move,
    ``observedGeneration`` does not, until the controller acts on the new generation."""
    async with open_cluster(namespaces=("default",)) as c:
        for name in ("n1", "n2"):
            c.server.create(node(name))
        ctl = Controllers(c, ["daemonset"])
        await c.start(ctl, "controllers")
        c.server.create(daemonset())
        await c.at(1.0)
        (dsc,) = ctl.started
        assert isinstance(dsc, DaemonSetController)
        # a creation it asked for and has not seen yet (as while a burst lands)
        dsc._pending[("default", "agent")] = _Pending(at=c.clock.now(), creates=1)
        update_spec(c, "DaemonSet", "agent", min_ready_seconds=0, revision_history_limit=5)
        for p in live(c):
            make_ready(c, p.metadata.name)
        await c.at(c.clock.now() + 5.0)
        s = ds_of(c).status
        assert (s.number_ready, s.number_available, s.number_unavailable) == (2, 2, 0)
        assert (s.observed_generation, ds_of(c).metadata.generation) == (1, 2)
        await c.at(c.clock.now() + EXPECTATIONS_TIMEOUT)
        c.server.update(replace(ds_of(c), metadata=replace(ds_of(c).metadata, labels={"touch": "1"})))
        await c.at(c.clock.now() + 1.0)
        assert ds_of(c).status.observed_generation == 2


@pytest.mark.asyncio
async def test_template_generation_counts_template_changes_only() -> None:
    """Upstream ``pkg/registry/apps/daemonset/strategy.go``: the API server keeps
    ``deprecated.daemonset.template.generation`` (1 on create, +1 per template change, not per
    spec change); ``CreatePodTemplate`` copies it to the pods' ``pod-template-generation``."""
    async with world(node("n1"), sets=(daemonset(),)) as c:
        assert ds_of(c).metadata.annotations["deprecated.daemonset.template.generation"] == "1"
        update_spec(c, "DaemonSet", "agent", min_ready_seconds=3)
        assert ds_of(c).metadata.generation == 2
        assert ds_of(c).metadata.annotations["deprecated.daemonset.template.generation"] == "1"
        _new_image(c, "agent:2")
        assert ds_of(c).metadata.generation == 3
        assert ds_of(c).metadata.annotations["deprecated.daemonset.template.generation"] == "2"
        await c.at(c.clock.now() + 5.0)
        (p,) = live(c)
        assert (p.spec.containers[0].image, p.metadata.labels["pod-template-generation"]) == ("agent:2", "2")
        # a client cannot set it: the stored value wins
        ds = ds_of(c)
        annotations = {**ds.metadata.annotations, "deprecated.daemonset.template.generation": "9"}
        c.server.update(replace(ds, metadata=replace(ds.metadata, annotations=annotations)))
        assert ds_of(c).metadata.annotations["deprecated.daemonset.template.generation"] == "2"


def _new_image(c: Cluster, image: str, max_unavailable: IntOrString = 1, max_surge: IntOrString = 0) -> None:
    ds = ds_of(c)
    t = ds.spec.template
    update_spec(
        c,
        "DaemonSet",
        "agent",
        template=replace(t, spec=replace(t.spec, containers=[Container(name="c", image=image)])),
        update_strategy=DaemonSetUpdateStrategy(
            type="RollingUpdate",
            rolling_update=RollingUpdateDaemonSet(max_unavailable=max_unavailable, max_surge=max_surge),
        ),
    )


def _images(c: Cluster) -> list[str]:
    return [p.spec.containers[0].image for p in live(c)]


@pytest.mark.asyncio
async def test_rolling_update_honours_max_unavailable() -> None:
    async with world(*(node(f"n{i}") for i in range(1, 5)), sets=(daemonset(),)) as c:
        for p in live(c):
            make_ready(c, p.metadata.name)
        await c.at(2.0)
        assert ds_of(c).status.number_available == 4
        _new_image(c, "agent:2", max_unavailable=2)
        await c.at(3.0)
        # two old pods deleted, two new ones waiting to be ready; no more go meanwhile
        assert sorted(_images(c)) == ["agent:1", "agent:1", "agent:2", "agent:2"]
        await c.at(30.0)
        assert sorted(_images(c)) == ["agent:1", "agent:1", "agent:2", "agent:2"]
        assert ds_of(c).status.updated_number_scheduled == 2
        for p in live(c):
            if p.spec.containers[0].image == "agent:2":
                make_ready(c, p.metadata.name)
        await c.at(31.0)
        assert sorted(_images(c)) == ["agent:2"] * 4
        for p in live(c):
            make_ready(c, p.metadata.name)
        await c.at(32.0)
        s = ds_of(c).status
        assert (s.updated_number_scheduled, s.number_available, s.number_unavailable) == (4, 4, 0)
        assert s.observed_generation == ds_of(c).metadata.generation


@pytest.mark.asyncio
async def test_updates_that_never_become_ready_hold_max_unavailable_down() -> None:
    """kubernetes/kubernetes#123233 (fixed in v1.31, upstream ``update.go`` ``rollingUpdate``):
    with maxSurge 0, three updates in a row whose pods never become Ready take down one node's
    daemon (maxUnavailable 1), not one more per update."""
    async with world(*(node(f"n{i}") for i in range(1, 5)), sets=(daemonset(),)) as c:
        for p in live(c):
            make_ready(c, p.metadata.name)
        await c.at(2.0)
        for step, image in enumerate(("agent:2", "agent:3", "agent:4")):
            _new_image(c, image, max_unavailable=1)
            await c.at(10.0 * (step + 1))
        assert sorted(_images(c)) == ["agent:1", "agent:1", "agent:1", "agent:4"]
        s = ds_of(c).status
        assert (s.number_available, s.number_unavailable, s.updated_number_scheduled) == (3, 1, 1)


@pytest.mark.asyncio
async def test_rolling_update_with_surge_deletes_old_pods_once_new_ones_are_available() -> None:
    async with world(node("n1"), node("n2"), sets=(daemonset(),)) as c:
        for p in live(c):
            make_ready(c, p.metadata.name)
        await c.at(2.0)
        _new_image(c, "agent:2", max_unavailable=0, max_surge=1)
        await c.at(3.0)
        assert sorted(_images(c)) == ["agent:1", "agent:1", "agent:2"], "one surge pod beside the old ones"
        new = next(p for p in live(c) if p.spec.containers[0].image == "agent:2")
        make_ready(c, new.metadata.name)
        await c.at(4.0)
        assert sorted(_images(c)) == ["agent:1", "agent:2", "agent:2"]
        new = next(
            p for p in live(c) if p.spec.containers[0].image == "agent:2" and p.metadata.name != new.metadata.name
        )
        make_ready(c, new.metadata.name)
        await c.at(5.0)
        assert sorted(_images(c)) == ["agent:2", "agent:2"]


@pytest.mark.asyncio
async def test_on_delete_leaves_old_pods_alone() -> None:
    async with world(node("n1"), sets=(daemonset(on_delete=True),)) as c:
        (old,) = live(c)
        t = ds_of(c).spec.template
        update_spec(
            c,
            "DaemonSet",
            "agent",
            template=replace(t, spec=replace(t.spec, containers=[Container(name="c", image="agent:2")])),
        )
        await c.at(10.0)
        assert [p.metadata.name for p in live(c)] == [old.metadata.name]
        c.server.delete("Pod", old.metadata.name, "default")
        await c.at(11.0)
        assert _images(c) == ["agent:2"]


@pytest.mark.asyncio
async def test_with_kubelets_every_pod_becomes_ready_and_the_status_says_so() -> None:
    async with world(node("n1"), node("n2"), node("n3"), sets=(daemonset(),), scheduler=True) as c:
        for n in ("n1", "n2", "n3"):
            await c.start_kubelet(n)
        await c.until(lambda: ds_of(c).status.number_ready == 3, within=120.0)
        s = ds_of(c).status
        assert (s.desired_number_scheduled, s.current_number_scheduled, s.number_available) == (3, 3, 3)
        assert (s.number_unavailable, s.updated_number_scheduled) == (0, 3)
        assert sorted(p.spec.node_name for p in live(c)) == ["n1", "n2", "n3"]
