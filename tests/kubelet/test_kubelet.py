"""The kubelet agent on the virtual clock: observable API state at exact simulated times.

Each test builds a world (API server, namespaces, one Node, one Kubelet with its Client),
runs the kubelet in a task group, creates pods bound to the node directly on the server,
and asserts on the server's write log (exact times) and on the stored objects.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from msgspec.structs import replace

from agents.kubelet import RUN_DURATION_ANNOTATION, Kubelet, KubeletSettings
from agents.kubelet.podsteps import PodSteps
from emulator.base.api.core import (
    ContainerImage,
    Event,
    Namespace,
    Node,
    Pod,
    PodStatus,
)
from emulator.base.api.errors import InternalError, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.apiserver.server import ApiServer, ServerSettings, WriteRecord
from emulator.base.client.client import Client, Latency
from emulator.base.runtime.clock import LoopClock, run
from tests.builders import container, node, pod
from tests.cluster import Cluster, OnCluster, open_cluster

NODE = "node-1"
Mi = 2**20
NGINX = "nginx:1.27"


def q(text: str) -> Any:
    return parse_quantity(text)


def make_node(
    *, cpu: str = "4", images: Sequence[ContainerImage] = (), labels: Mapping[str, str] | None = None
) -> Node:
    """The kubelet's node: ``cpu``, 8Gi, 110 pods."""
    sizes = {name: image.size_bytes for image in images for name in image.names}
    return node(NODE, cpu=cpu, memory="8Gi", labels=labels, images=sizes)


def make_pod(
    name: str,
    *,
    cpu: str = "100m",
    image: str = NGINX,
    run: str | None = None,
    node_selector: Mapping[str, str] | None = None,
    host_network: bool = False,
) -> Pod:
    """A pod bound to the node, one container ``app`` (``run``: its run-duration annotation)."""
    return pod(
        name,
        node=NODE,
        containers=[container("app", image=image, cpu=cpu)],
        annotations={RUN_DURATION_ANNOTATION: run} if run is not None else None,
        node_selector=node_selector,
        host_network=host_network,
    )


@dataclass
class World(OnCluster):
    """The cluster and its one kubelet (``node-1``)."""

    cluster: Cluster
    kubelet: Kubelet
    task: asyncio.Task[None]

    def pod(self, name: str) -> Pod:
        return self.cluster.pod(name)

    def node(self) -> Node:
        return self.cluster.node(NODE)

    def of(self, kind: str, name: str | None = None) -> list[WriteRecord]:
        return self.cluster.of(kind, name)

    def when(self, name: str, phase: str) -> float:
        """Simulated time of the write that moved pod ``name`` into ``phase``."""
        for w in self.of("Pod", name):
            if w.new is not None and w.new.status.phase == phase and (w.old is None or w.old.status.phase != phase):
                return w.time
        raise AssertionError(f"pod {name} never reached {phase}: {[(w.time, w.verb) for w in self.of('Pod', name)]}")

    async def at(self, t: float) -> None:
        await self.cluster.at(t)


@asynccontextmanager
async def world(
    settings: KubeletSettings | None = None,
    *,
    node: Node | None = None,
    watch_latency: Latency | None = None,
    api_latency: Latency | None = None,
    seed: int = 0,
    history_size: int = 100_000,
) -> AsyncIterator[World]:
    async with open_cluster(
        seed=seed, settings=ServerSettings(history_size=history_size), namespaces=("default", "kube-node-lease")
    ) as c:
        c.server.create(node or make_node())
        c.writes.clear()  # the log starts with the kubelet
        kubelet = await c.start_kubelet(
            NODE, settings, api_latency=api_latency or Latency(), watch_latency=watch_latency or Latency()
        )
        yield World(c, kubelet, c.task(f"kubelet:{NODE}"))


PULLING = KubeletSettings(
    image_pull_bandwidth=10 * Mi,
    image_sizes={NGINX: 50 * Mi, "redis:7": 30 * Mi},
    container_start=Latency(1.0),
    heartbeat_interval=0,
)


# --- start-up -------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_ready_after_node_status_is_written() -> None:
    async with world(node=make_node(labels={"kubernetes.io/arch": "arm64"})) as w:
        node = w.node()
        ready = next(c for c in node.status.conditions if c.type == "Ready")
        assert (ready.status, ready.reason, ready.message) == (
            "True",
            "KubeletReady",
            "kubelet is posting ready status",
        )
        assert ready.last_heartbeat_time == ready.last_transition_time == "2026-01-01T00:00:00Z"
        assert [c.type for c in node.status.conditions] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        assert [(c.status, c.reason) for c in node.status.conditions[:3]] == [
            ("False", "KubeletHasSufficientMemory"),
            ("False", "KubeletHasNoDiskPressure"),
            ("False", "KubeletHasSufficientPID"),
        ]
        info = node.status.node_info
        assert info is not None
        assert (info.kubelet_version, info.operating_system, info.architecture) == (
            "v1.34.0-emulated",
            "linux",
            "arm64",
        )
        assert [(a.type, a.address) for a in node.status.addresses] == [
            ("InternalIP", "172.16.0.2"),
            ("Hostname", NODE),
        ]
        assert node.status.capacity["cpu"] == q("4")
        assert [(r.verb, r.kind) for r in w.writes] == [("updateStatus", "Node")]
        assert w.kubelet.statistics()["ready"] is True


@pytest.mark.asyncio
async def test_run_propagates_cancellation() -> None:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    server = ApiServer(clock, random.Random(0))
    server.create(Namespace(metadata=ObjectMeta(name="default")))
    server.create(make_node())
    kubelet = Kubelet(Client(server, clock, random.Random(1), name="k"), NODE, clock, random.Random(2))
    task = asyncio.get_running_loop().create_task(kubelet.run(), name="kubelet:test")
    await kubelet.ready.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not kubelet.ready.is_set()


# --- images and start -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_pull_takes_size_over_bandwidth_then_container_start() -> None:
    async with world(PULLING) as w:
        w.server.create(make_pod("web"))
        await w.at(30)
        assert w.when("web", "Pending") == 0.0  # the ContainerCreating status at admission
        assert w.when("web", "Running") == 6.0  # 50 MiB / 10 MiB/s = 5 s, + 1 s start
        image_writes = [r for r in w.of("Node") if r.new.status.images != r.old.status.images]
        assert [r.time for r in image_writes] == [5.0]
        assert w.node().status.images == [ContainerImage(names=[NGINX], size_bytes=50 * Mi)]
        pod = w.pod("web")
        assert pod.status.start_time == "2026-01-01T00:00:00Z"
        assert (pod.status.host_ip, pod.status.pod_ip) == ("172.16.0.2", "10.0.2.2")
        assert [(c.type, c.status, c.last_transition_time) for c in pod.status.conditions] == [
            ("PodReadyToStartContainers", "True", "2026-01-01T00:00:06Z"),
            ("Initialized", "True", "2026-01-01T00:00:00Z"),
            ("Ready", "True", "2026-01-01T00:00:06Z"),
            ("ContainersReady", "True", "2026-01-01T00:00:06Z"),
            # bound by hand (spec.nodeName): the kubelet reports PodScheduled as upstream does
            ("PodScheduled", "True", "2026-01-01T00:00:00Z"),
        ]
        [cs] = pod.status.container_statuses
        assert (cs.name, cs.image, cs.ready, cs.started) == ("app", NGINX, True, True)
        assert cs.state.running is not None
        assert cs.state.running.started_at == "2026-01-01T00:00:06Z"
        assert pod.status.qos_class == "Burstable"
        stats = w.kubelet.statistics()
        assert (stats["pulls"], stats["pulled_bytes"], stats["admitted"], stats["running"]) == (1, 50 * Mi, 1, 1)


@pytest.mark.asyncio
async def test_pending_status_while_pulling() -> None:
    async with world(PULLING) as w:
        w.server.create(make_pod("web"))
        await w.at(3)
        pod = w.pod("web")
        assert pod.status.phase == "Pending"
        [cs] = pod.status.container_statuses
        assert cs.state.waiting is not None
        assert cs.state.waiting.reason == "ContainerCreating"
        ready = next(c for c in pod.status.conditions if c.type == "Ready")
        assert (ready.status, ready.reason, ready.message) == (
            "False",
            "ContainersNotReady",
            "containers with unready status: [app]",
        )


@pytest.mark.asyncio
async def test_second_pod_with_the_same_image_starts_without_pull() -> None:
    async with world(PULLING) as w:
        w.server.create(make_pod("web-1"))
        await w.at(10)
        w.server.create(make_pod("web-2"))
        await w.at(30)
        assert w.when("web-1", "Running") == 6.0
        assert w.when("web-2", "Running") == 11.0  # container start only
        assert w.kubelet.statistics()["pulls"] == 1
        assert w.pod("web-2").status.pod_ip == "10.0.2.3"


@pytest.mark.asyncio
async def test_concurrent_pulls_of_one_image_are_shared() -> None:
    async with world(PULLING) as w:
        w.server.create(make_pod("web-1"))
        w.server.create(make_pod("web-2"))
        await w.at(30)
        assert (w.when("web-1", "Running"), w.when("web-2", "Running")) == (6.0, 6.0)
        stats = w.kubelet.statistics()
        assert (stats["pulls"], stats["pulls_shared"]) == (1, 1)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("serialize", "expected"),
    [pytest.param(True, (6.0, 9.0), id="serialized"), pytest.param(False, (6.0, 4.0), id="parallel")],
)
async def test_pulls_of_different_images(serialize: bool, expected: tuple[float, float]) -> None:
    settings = KubeletSettings(
        image_pull_bandwidth=10 * Mi,
        image_sizes={NGINX: 50 * Mi, "redis:7": 30 * Mi},
        container_start=Latency(1.0),
        heartbeat_interval=0,
        serialize_image_pulls=serialize,
    )
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        w.server.create(make_pod("cache", image="redis:7"))
        await w.at(30)
        assert (w.when("web", "Running"), w.when("cache", "Running")) == expected
        assert sorted(i.names[0] for i in w.node().status.images) == ["nginx:1.27", "redis:7"]
        assert [i.size_bytes for i in w.node().status.images] == [50 * Mi, 30 * Mi]  # largest first


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("listed", "image"),
    [
        pytest.param(NGINX, NGINX, id="same-name"),
        pytest.param("busybox:latest", "busybox", id="untagged-means-latest"),
    ],
)
async def test_images_the_node_lists_are_not_pulled(listed: str, image: str) -> None:
    node = make_node(images=[ContainerImage(names=[listed], size_bytes=80 * Mi)])
    async with world(PULLING, node=node) as w:
        w.server.create(make_pod("web", image=image))
        await w.at(30)
        assert w.when("web", "Running") == 1.0
        assert w.kubelet.statistics()["pulls"] == 0
        assert len(w.of("Node")) == 1  # the start-up status only
        assert w.node().status.images == [ContainerImage(names=[listed], size_bytes=80 * Mi)]


@pytest.mark.asyncio
async def test_default_image_size_for_unknown_images() -> None:
    settings = KubeletSettings(image_pull_bandwidth=25 * Mi, default_image_size=100 * Mi, heartbeat_interval=0)
    async with world(settings) as w:
        w.server.create(make_pod("web", image="example.com/app:v2"))
        await w.at(30)
        assert w.when("web", "Running") == 4.0
        assert w.node().status.images == [ContainerImage(names=["example.com/app:v2"], size_bytes=100 * Mi)]


@pytest.mark.asyncio
async def test_host_network_pod_uses_the_host_ip() -> None:
    async with world() as w:
        w.server.create(make_pod("agent", host_network=True))
        await w.at(1)
        assert w.pod("agent").status.pod_ip == w.pod("agent").status.host_ip == "172.16.0.2"


# --- run to completion ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_run_duration_then_succeeded_and_resources_released() -> None:
    settings = KubeletSettings(container_start=Latency(1.0), heartbeat_interval=0)
    async with world(settings, node=make_node(cpu="2")) as w:
        w.server.create(make_pod("job", cpu="2", run="1.5m"))
        await w.at(50)
        w.server.create(make_pod("waiting", cpu="2"))  # the node is full: rejected
        await w.at(120)
        assert w.when("job", "Running") == 1.0
        assert w.when("job", "Succeeded") == 91.0
        job = w.pod("job")
        [cs] = job.status.container_statuses
        assert cs.state.terminated is not None
        assert (cs.ready, cs.state.terminated.exit_code, cs.state.terminated.reason) == (False, 0, "Completed")
        assert cs.state.terminated.started_at == "2026-01-01T00:00:01Z"
        assert cs.state.terminated.finished_at == "2026-01-01T00:01:31Z"
        assert [(c.type, c.status, c.reason) for c in job.status.conditions] == [
            ("PodReadyToStartContainers", "False", ""),
            ("Initialized", "True", "PodCompleted"),
            ("Ready", "False", "PodCompleted"),
            ("ContainersReady", "False", "PodCompleted"),
            ("PodScheduled", "True", ""),
        ]
        assert w.pod("waiting").status.reason == "OutOfcpu"
        w.server.create(make_pod("next", cpu="2"))
        await w.at(130)
        assert w.when("next", "Running") == 121.0
        stats = w.kubelet.statistics()
        assert (stats["succeeded"], stats["active"], stats["rejected"]) == (1, 1, 1)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("text", "succeeded_at"),
    [pytest.param("60s", 61.0, id="seconds"), pytest.param("2m30s", 151.0, id="go-duration")],
)
async def test_run_duration_formats(text: str, succeeded_at: float) -> None:
    async with world(KubeletSettings(container_start=Latency(1.0), heartbeat_interval=0)) as w:
        w.server.create(make_pod("job", run=text))
        await w.at(200)
        assert w.when("job", "Succeeded") == succeeded_at


@pytest.mark.asyncio
async def test_invalid_run_duration_runs_forever() -> None:
    async with world() as w:
        w.server.create(make_pod("job", run="soon"))
        await w.at(600)
        assert w.pod("job").status.phase == "Running"
        assert w.kubelet.statistics()["invalid_run_duration"] == 1


@pytest.mark.asyncio
async def test_a_restarted_kubelet_adopts_running_pods() -> None:
    settings = KubeletSettings(container_start=Latency(1.0), heartbeat_interval=0)
    async with world(settings, node=make_node(cpu="1")) as w:
        w.server.create(make_pod("job", cpu="1", run="60s"))
        await w.at(10)
        assert w.task is not None
        w.task.cancel()
        running = w.pod("job")
        await w.at(20)
        client = Client(w.server, w.clock, random.Random(7), name="kubelet:node-1:again")
        again = Kubelet(client, NODE, w.clock, random.Random(8), settings)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(again.run(), name="kubelet:node-1:again")
            await again.ready.wait()
            w.server.create(make_pod("late", cpu="1"))  # the adopted pod still holds the CPU
            await w.at(30)
            assert w.pod("job").status == running.status  # no new pull, start or status write
            await w.at(70)
            task.cancel()
        assert w.when("job", "Running") == 1.0
        assert w.when("job", "Succeeded") == 61.0  # 60 s after its container started
        assert w.pod("late").status.reason == "OutOfcpu"
        assert again.statistics()["succeeded"] == 1


@pytest.mark.asyncio
async def test_terminal_pods_on_the_node_are_ignored() -> None:
    node = make_node(cpu="1")
    async with world(node=node) as w:
        await w.at(1)
        done = replace(make_pod("done", cpu="1"), status=PodStatus(phase="Succeeded"))
        w.server.create(done, restore=True)
        w.server.create(make_pod("web", cpu="1"))
        await w.at(2)
        assert w.pod("web").status.phase == "Running"
        assert [r.verb for r in w.of("Pod", "done")] == ["create"]
        assert w.kubelet.statistics()["admitted"] == 1


@pytest.mark.asyncio
async def test_pod_ips_are_handed_out_round_robin() -> None:
    async with world() as w:
        w.server.create(make_pod("a"))
        await w.at(1)
        w.server.delete("Pod", "a", "default", grace_period_seconds=0)
        w.server.create(make_pod("b"))
        await w.at(2)
        assert w.pod("b").status.pod_ip == "10.0.2.3"  # .2 is not reused at once


@pytest.mark.asyncio
async def test_a_pod_replaced_under_the_same_name_while_the_watch_was_down() -> None:
    async with world(node=make_node(cpu="1"), history_size=1) as w:
        w.server.create(make_pod("web", cpu="1", run="1h"))
        await w.at(1)
        old_uid = w.pod("web").metadata.uid
        w.kubelet._pod_informer.cut()  # the kubelet misses the next writes and must relist
        w.server.delete("Pod", "web", "default", grace_period_seconds=0)
        w.server.create(make_pod("web", cpu="1"))
        await w.at(2)
        web = w.pod("web")
        assert web.metadata.uid != old_uid
        assert web.status.phase == "Running"  # the old pod's CPU was released
        stats = w.kubelet.statistics()
        assert (stats["admitted"], stats["active"]) == (2, 1)


@pytest.mark.asyncio
async def test_a_status_write_racing_a_deletion_is_dropped() -> None:
    # Each call takes 1 s (the kubelet is ready at 2 s) and its watch lags 5 s: it sees the
    # pod at 7 s, after the pod was marked for deletion at 6.5 s. Its Pending (8 s) and
    # Running (10 s) writes meet Conflicts; each re-read shows the pod terminating, so
    # neither is written. It sees the deletion at 11.5 s, writes the never-started pod's
    # Failed status at 12.5 s (status_manager.go TerminatePod) and confirms it at 13.5 s.
    # (Container Events off: their writes, 1 s each, would move the Running write past the
    # deletion.)
    settings = KubeletSettings(container_events=False)
    async with world(settings, watch_latency=Latency(5.0), api_latency=Latency(1.0)) as w:
        assert w.clock.now() == 2.0
        w.server.create(make_pod("web"))
        await w.at(6.5)
        w.server.delete("Pod", "web", "default")
        await w.at(30)
        assert [(r.time, r.verb) for r in w.of("Pod", "web")] == [
            (2.0, "create"),
            (6.5, "delete"),
            (12.5, "updateStatus"),
            (13.5, "delete"),
        ]
        assert w.of("Pod", "web")[2].new.status.phase == "Failed"
        stats = w.kubelet.statistics()
        assert (stats["conflicts"], stats["pod_status_writes"], stats["terminated"]) == (2, 1, 1)


# --- admission rejections -------------------------------------------------------------------


@pytest.mark.asyncio
async def test_out_of_cpu_rejection_changes_nothing_else() -> None:
    async with world(node=make_node(cpu="2")) as w:
        w.server.create(make_pod("big", cpu="1500m"))
        await w.at(1)
        before = w.pod("big")
        node_writes = len(w.of("Node"))
        w.server.create(make_pod("too-big", cpu="1"))
        created = w.pod("too-big")
        await w.at(5)
        rejected = w.pod("too-big")
        assert rejected.status.phase == "Failed"
        assert rejected.status.reason == "OutOfcpu"
        assert rejected.status.message == (
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"
        )
        assert rejected.spec == created.spec
        assert rejected.metadata.labels == created.metadata.labels
        assert rejected.status == replace(
            created.status,
            phase="Failed",
            reason=rejected.status.reason,
            message=rejected.status.message,
            observed_generation=created.metadata.generation,  # PodObservedGenerationTracking (1.34)
        )
        assert [r.verb for r in w.of("Pod", "too-big")] == ["create", "updateStatus"]
        assert w.pod("big") == before
        assert len(w.of("Node")) == node_writes
        [event] = [r.new for r in w.of("Event") if r.new.reason == "OutOfcpu"]
        assert isinstance(event, Event)
        assert (event.type, event.reason, event.involved_object.name, event.source.component) == (
            "Warning",
            "OutOfcpu",
            "too-big",
            "kubelet",
        )
        assert event.message.startswith("Node didn't have enough resource: cpu")
        w.server.create(make_pod("small", cpu="500m"))  # the rejected pod holds nothing
        await w.at(10)
        assert w.pod("small").status.phase == "Running"
        stats = w.kubelet.statistics()
        assert (stats["admitted"], stats["rejected"], stats["rejections"]) == (2, 1, {"OutOfcpu": 1})


@pytest.mark.asyncio
async def test_pods_arriving_together_are_admitted_in_order() -> None:
    async with world(node=make_node(cpu="1")) as w:
        for i in range(4):
            w.server.create(make_pod(f"p{i}", cpu="400m"))
        await w.at(1)
        assert [w.pod(f"p{i}").status.phase for i in range(4)] == ["Running", "Running", "Failed", "Failed"]


@pytest.mark.asyncio
async def test_node_affinity_failure_rereads_the_node() -> None:
    # Both watches lag 1 s: the pod arrives at 11 s, the node's new label at 11.5 s.
    async with world(watch_latency=Latency(1.0)) as w:
        await w.at(10)
        w.server.create(make_pod("ssd", node_selector={"disk": "ssd"}))
        w.server.create(make_pod("gpu", node_selector={"gpu": "true"}))
        await w.at(10.5)
        node = w.node()
        w.server.update(replace(node, metadata=replace(node.metadata, labels={"disk": "ssd"})))
        await w.at(20)
        assert w.when("ssd", "Running") == 11.0
        gpu = w.pod("gpu")
        assert (gpu.status.phase, gpu.status.reason, gpu.status.message) == (
            "Failed",
            "NodeAffinity",
            "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
        )


# --- deletion --------------------------------------------------------------------------------


def _deleted_at(w: World, name: str) -> float:
    [rec] = [r for r in w.of("Pod", name) if r.verb == "delete" and r.new is None]
    return rec.time


@pytest.mark.asyncio
async def test_graceful_deletion_takes_the_termination_time() -> None:
    settings = KubeletSettings(container_start=Latency(1.0), termination=Latency(5.0), heartbeat_interval=0)
    async with world(settings, node=make_node(cpu="1")) as w:
        w.server.create(make_pod("web", cpu="1"))
        await w.at(10)
        w.server.delete("Pod", "web", "default")
        marked = w.pod("web")
        assert marked.metadata.deletion_timestamp == "2026-01-01T00:00:40Z"  # grace 30 s
        w.server.create(make_pod("next", cpu="1"))  # rejected: the terminating pod still counts
        await w.at(14.9)
        assert w.pod("web").metadata.deletion_timestamp is not None
        await w.at(20)
        assert _deleted_at(w, "web") == 15.0
        with pytest.raises(NotFound):
            w.pod("web")
        assert w.pod("next").status.reason == "OutOfcpu"
        assert w.kubelet.statistics()["terminated"] == 1
        assert w.kubelet.statistics()["active"] == 0


@pytest.mark.asyncio
async def test_stopped_pod_frees_its_resources_before_the_delete_is_confirmed() -> None:
    settings = KubeletSettings(termination=Latency(5.0), heartbeat_interval=0)
    async with world(settings, node=make_node(cpu="1")) as w:
        failures = [InternalError("etcdserver: request timed out")]

        async def flaky(agent: str, verb: str, kind: str) -> None:
            if verb == "delete" and failures:
                raise failures.pop()

        w.kubelet.client.interceptor = flaky
        w.server.create(make_pod("web", cpu="1"))
        await w.at(10)
        w.server.delete("Pod", "web", "default")
        await w.at(15.2)
        assert w.pod("web").metadata.deletion_timestamp is not None  # the first confirmation failed
        w.server.create(make_pod("next", cpu="1"))
        await w.at(20)
        assert _deleted_at(w, "web") == 15.5  # retried after 0.5 s
        assert w.when("next", "Running") == 15.2  # admitted while "web" was still stored
        assert w.kubelet.statistics()["api_errors"] == 1


@pytest.mark.asyncio
async def test_termination_is_capped_by_the_grace_period() -> None:
    settings = KubeletSettings(termination=Latency(60.0), heartbeat_interval=0)
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        await w.at(10)
        w.server.delete("Pod", "web", "default", grace_period_seconds=3)
        await w.at(100)
        assert _deleted_at(w, "web") == 13.0


@pytest.mark.asyncio
async def test_a_shorter_grace_period_stops_the_pod_sooner() -> None:
    settings = KubeletSettings(termination=Latency(60.0), heartbeat_interval=0)
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        await w.at(10)
        w.server.delete("Pod", "web", "default", grace_period_seconds=30)
        await w.at(12)
        w.server.delete("Pod", "web", "default", grace_period_seconds=5)
        await w.at(100)
        assert _deleted_at(w, "web") == 15.0  # 10 s + the new 5 s grace


@pytest.mark.asyncio
async def test_deleting_a_pod_while_its_image_pulls() -> None:
    settings = KubeletSettings(
        image_pull_bandwidth=Mi,
        image_sizes={NGINX: 50 * Mi, "busybox": 10 * Mi},
        termination=Latency(5.0),
        heartbeat_interval=0,
    )
    async with world(settings, node=make_node(cpu="1")) as w:
        w.server.create(make_pod("web", cpu="1"))
        await w.at(2)
        w.server.delete("Pod", "web", "default")
        await w.at(3)
        w.server.create(make_pod("next", cpu="1", image="busybox"))
        await w.at(120)
        assert _deleted_at(w, "web") == 2.0  # no container was running: nothing to stop
        assert w.when("next", "Running") == 60.0  # busybox (10 s) queues behind the nginx pull (50 s)
        assert sorted(i.names[0] for i in w.node().status.images) == ["busybox:latest", NGINX]


@pytest.mark.asyncio
async def test_a_pod_deleted_outright_releases_its_resources() -> None:
    async with world(node=make_node(cpu="1")) as w:
        w.server.create(make_pod("web", cpu="1", run="1h"))
        await w.at(5)
        w.server.delete("Pod", "web", "default", grace_period_seconds=0)
        await w.at(6)
        w.server.create(make_pod("next", cpu="1"))
        await w.at(7)
        assert w.pod("next").status.phase == "Running"
        assert w.kubelet.statistics()["active"] == 1


@pytest.mark.asyncio
async def test_a_pod_bound_while_terminating_is_confirmed_at_once() -> None:
    async with world() as w:
        w.server.create(make_pod("web"))
        await w.at(1)
        w.server.delete("Pod", "web", "default", grace_period_seconds=0)  # gone before the kubelet saw it
        await w.at(2)
        assert w.kubelet.statistics()["active"] == 0


# --- heartbeats -------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_lease_every_heartbeat_node_status_every_report_frequency() -> None:
    """Upstream defaults: the Lease is renewed every 10 s; an unchanged node status is posted
    only when ``nodeStatusReportFrequency`` (5 min) has passed since the last post."""
    async with world(KubeletSettings(heartbeat_interval=10.0)) as w:
        await w.at(60.5)
        leases = w.of("Lease")
        assert [(r.verb, r.time) for r in leases] == [("create", 0.0)] + [("update", 10.0 * i) for i in range(1, 7)]
        lease = w.server.get("Lease", NODE, "kube-node-lease")
        assert lease.spec.holder_identity == NODE
        assert lease.spec.lease_duration_seconds == 40
        assert lease.spec.renew_time == "2026-01-01T00:01:00Z"
        assert [(o.kind, o.name, o.uid) for o in lease.metadata.owner_references] == [
            ("Node", NODE, w.node().metadata.uid)
        ]
        assert [r.time for r in w.of("Node")] == [0.0]
        ready = next(c for c in w.node().status.conditions if c.type == "Ready")
        assert (ready.last_heartbeat_time, ready.last_transition_time) == (
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
        )
        assert w.kubelet.statistics()["lease_writes"] == 7
        await w.at(300.5)
        assert [r.time for r in w.of("Node")] == [0.0, 300.0]
        ready = next(c for c in w.node().status.conditions if c.type == "Ready")
        assert (ready.last_heartbeat_time, ready.last_transition_time) == (
            "2026-01-01T00:05:00Z",
            "2026-01-01T00:00:00Z",
        )
        assert w.kubelet.statistics()["lease_writes"] == 31


@pytest.mark.asyncio
async def test_no_heartbeats_when_the_interval_is_zero() -> None:
    async with world(KubeletSettings(heartbeat_interval=0)) as w:
        await w.at(600)
        assert w.of("Lease") == []
        assert len(w.of("Node")) == 1


# --- observability and determinism -------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("steps", [True, False])
async def test_tasks_are_named_after_the_kubelet_and_the_pod(steps: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pod's task is named after it; a plain pod runs on the kubelet's handles instead
    (``podsteps.py``), its ``FastRun`` named after it."""
    monkeypatch.setattr(PodSteps, "enabled", steps)
    async with world(PULLING) as w:
        w.server.create(make_pod("web"))
        await w.at(1)
        names = {t.get_name() for t in asyncio.all_tasks()}
        assert "kubelet:node-1:pull:nginx:1.27" in names
        assert ("kubelet:node-1:pod:default/web" in names) is not steps
        assert {"kubelet:node-1:admission", "kubelet:node-1:node-status"} <= names
        assert repr(w.kubelet).startswith("<Kubelet node-1 ready pods=1 active=1")
        run = w.kubelet._pods["default", "web"].task
        assert repr(run).startswith("<FastRun default/web") is steps


async def _trace(seed: int) -> list[tuple[float, str, str, str]]:
    settings = KubeletSettings(
        image_pull_bandwidth=10 * Mi,
        container_start=Latency(1.0, 0.5),
        termination=Latency(3.0, 2.0),
        heartbeat_interval=10.0,
    )
    async with world(settings, api_latency=Latency(0.01, 0.005), watch_latency=Latency(0.02, 0.01), seed=seed) as w:
        for i in range(5):
            w.server.create(make_pod(f"p{i}", image=f"img-{i % 2}", run=f"{10 + i}s"))
        await w.at(5)
        w.server.delete("Pod", "p4", "default")
        await w.at(40)
        return [(r.time, r.verb, r.kind, r.obj.metadata.name) for r in w.writes]


def test_same_seed_same_trace() -> None:
    """Each run on a fresh virtual loop, as a scenario run is."""
    traces = [run(functools.partial(_trace, seed)) for seed in (3, 3, 4)]
    assert traces[0] == traces[1]
    assert traces[0] != traces[2]
    assert len(traces[0]) > 20
