"""The workload steps played by ``Cluster`` on virtual time: ``scale`` and ``update`` write
what kubectl would, ``drain`` retries a 429 every 5 s until the PDB allows and fails the run
when it times out, ``waitFor`` of ``workloadsReady``/``jobsComplete`` ends when a status
written by hand (as the controllers would) meets it, and ``delete`` passes its
``propagationPolicy``. No kubelet or scheduler runs here unless the test says so: pods are
bound and given a status by hand, and evicted with grace 0 so that they go at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.app.scenario.cluster import Cluster
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.monitor import PodActivity
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import Scenario
from emulator.base.api.batch import JobCondition
from emulator.base.api.core import Binding, Namespace, PodCondition
from emulator.base.api.meta import ObjectMeta, ObjectReference, OwnerReference
from emulator.base.runtime.clock import LoopClock, run
from tests import builders
from tests.scenario.test_workload_steps_loader import DEPLOYMENT

PDB = (
    "{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: web}, "
    "spec: {minAvailable: '100%', selector: {matchLabels: {app: web}}}}"
)
JOB = (
    "{apiVersion: batch/v1, kind: Job, metadata: {name: batch, labels: {app: batch}}, spec: {template: "
    "{spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}"
)


NODE = "{apiVersion: v1, kind: Node, metadata: {name: n-0}}"


def _scenario(*steps: str, objects: tuple[str, ...] = (DEPLOYMENT,)) -> Scenario:
    text = "name: x\nobjects:\n" + "".join(f"  - {o}\n" for o in (NODE, *objects))
    text += "steps:\n" + "".join(f"  - {s}\n" for s in steps)
    return load_scenario_text(text, source="s.yaml", base_dir=Path("."))


Body = Callable[[Cluster, PodActivity, list[str]], Awaitable[Any]]


def _play(scenario: Scenario, body: Body) -> Any:
    """Run ``body`` against a cluster holding ``default``, node ``n-0`` and the scenario's
    objects (no agents)."""

    async def main() -> Any:
        clock = LoopClock(asyncio.get_running_loop(), virtual=True)
        cluster = Cluster(scenario, 0, clock)
        activity = PodActivity()
        cluster.server.add_write_listener(activity)
        cluster.server.create(Namespace(metadata=ObjectMeta(name="default")))
        for obj in scenario.objects:
            cluster.server.create(obj)  # not through the runner: no kubelet for the node
        async with asyncio.TaskGroup() as tg:
            cluster._tg = tg
            return await body(cluster, activity, [])

    return run(main, virtual=True)


def _running_pod(cluster: Cluster, name: str, *, owner: str = "", ready: bool = True) -> None:
    server = cluster.server
    refs = [OwnerReference(api_version="apps/v1", kind=owner, name="x", uid="u-" + owner, controller=True)]
    pod = builders.pod(name, labels={"app": "web"})
    server.create(replace(pod, metadata=replace(pod.metadata, owner_references=refs if owner else [])))
    binding = Binding(metadata=ObjectMeta(name=name, namespace="default"), target=ObjectReference(name="n-0"))
    server.bind(binding)
    bound = server.get("Pod", name, "default")
    conditions = [PodCondition(type="Ready", status="True" if ready else "False")]
    server.update_status(replace(bound, status=replace(bound.status, phase="Running", conditions=conditions)))


def _set_pdb(cluster: Cluster, allowed: int) -> None:
    pdb = cluster.server.get("PodDisruptionBudget", "web", "default")
    status = replace(
        pdb.status,
        observed_generation=pdb.metadata.generation,
        disruptions_allowed=allowed,
        current_healthy=1,
        desired_healthy=1 - allowed,
        expected_pods=1,
    )
    cluster.server.update_status(replace(pdb, status=status))


def test_scale_sets_replicas_and_bumps_the_generation() -> None:
    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        (step,) = cluster.scenario.steps
        await cluster.play(step, activity, timeouts)
        return cluster.server.get("Deployment", "web", "default")

    web = _play(_scenario("scale: {kind: Deployment, name: web, replicas: 7}"), body)
    assert (web.spec.replicas, web.metadata.generation) == (7, 2)


def test_update_merges_the_patch_and_null_deletes_a_key() -> None:
    patch = (
        "{metadata: {labels: {tier: front}}, spec: {template: {metadata: {labels: {v: '2'}}}, minReadySeconds: null}}"
    )

    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        server = cluster.server
        web = server.get("Deployment", "web", "default")
        server.update(replace(web, spec=replace(web.spec, min_ready_seconds=5)))
        (step,) = cluster.scenario.steps
        await cluster.play(step, activity, timeouts)
        return server.get("Deployment", "web", "default")

    web = _play(_scenario(f"update: {{kind: Deployment, name: web, patch: {patch}}}"), body)
    assert web.metadata.labels == {"tier": "front"}
    assert web.spec.template.metadata.labels == {"app": "web", "v": "2"}
    assert web.spec.min_ready_seconds == 0  # null removed the key: the default again
    assert web.metadata.generation == 3  # a template change: a new generation, so a rollout


def test_drain_retries_a_429_every_5s_until_the_budget_allows() -> None:
    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        _set_pdb(cluster, 0)
        _running_pod(cluster, "web-0")
        _running_pod(cluster, "ds-0", owner="DaemonSet")
        _running_pod(cluster, "rs-0", owner="ReplicaSet")
        cluster.server.update(
            replace(
                cluster.server.get("Pod", "rs-0", "default"),
                metadata=replace(cluster.server.get("Pod", "rs-0", "default").metadata, labels={"app": "other"}),
            )
        )

        async def allow_later() -> None:
            await cluster.clock.sleep(12)
            _set_pdb(cluster, 1)

        assert cluster._tg is not None
        cluster._tg.create_task(allow_later(), name="test:allow")
        (step,) = cluster.scenario.steps
        await cluster.play(step, activity, timeouts)
        pods = sorted(p.metadata.name for p in cluster.server.list("Pod")[0])
        node = cluster.server.get("Node", "n-0")
        return cluster.clock.now(), pods, node.spec.unschedulable, cluster.client.stats.calls.get("evict"), timeouts

    now, pods, cordoned, evictions, timeouts = _play(
        _scenario("drain: {node: n-0, gracePeriod: 0s}", objects=(DEPLOYMENT, PDB)), body
    )
    assert pods == ["ds-0"]  # the DaemonSet's pod stays
    assert cordoned is True
    assert now == 15.0  # 429 at 0, 5 and 10 s; admitted at 15 s
    assert evictions == 5  # web-0 four times, rs-0 (no budget selects it) once
    assert timeouts == []


def test_drain_that_times_out_is_reported_like_a_wait() -> None:
    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        _set_pdb(cluster, 0)
        _running_pod(cluster, "web-0")
        (step,) = cluster.scenario.steps
        await cluster.play(step, activity, timeouts)
        return cluster.clock.now(), timeouts

    now, timeouts = _play(_scenario("drain: {node: n-0, timeout: 12s}", objects=(DEPLOYMENT, PDB)), body)
    assert now == 12.0
    assert timeouts == ["drain n-0 timed out after 12s (1 pod left: default/web-0)"]


def test_a_run_whose_drain_times_out_fails() -> None:
    scenario = load_scenario_text(
        "name: x\nnodes: [{count: 1, namePrefix: n, template: {status: {capacity: {cpu: '4', pods: '10'}}}}]\n"
        f"objects:\n  - {PDB}\n"
        "steps:\n"
        "  - createPods: {count: 2, namePrefix: web, template: {metadata: {labels: {app: web}}, "
        "spec: {containers: [{name: c, image: busybox}]}}}\n"
        "  - waitFor: {condition: podsRunning, timeout: 1m}\n"
        "  - drain: {node: n-0, timeout: 20s}\n",
        source="s.yaml",
        base_dir=Path("."),
    )
    result = run_scenario(scenario, RunOptions(source="s.yaml"))
    assert not result.passed
    (timeout,) = result.waits_timed_out
    assert timeout.startswith("drain n-0 timed out after 20s (2 pods left: default/web-0, default/web-1)")


def _ready_deployment(cluster: Cluster) -> None:
    web = cluster.server.get("Deployment", "web", "default")
    status = replace(
        web.status,
        observed_generation=web.metadata.generation,
        replicas=2,
        ready_replicas=2,
        updated_replicas=2,
        available_replicas=2,
    )
    cluster.server.update_status(replace(web, status=status))


def _complete_job(cluster: Cluster) -> None:
    job = cluster.server.get("Job", "batch", "default")
    conditions = [JobCondition(type="Complete", status="True")]
    start, end = "2026-01-01T00:00:00Z", "2026-01-01T00:01:30Z"
    status = replace(job.status, succeeded=1, conditions=conditions, start_time=start, completion_time=end)
    cluster.server.update_status(replace(job, status=status))


@pytest.mark.parametrize(
    ("step", "make_it_so"),
    [
        pytest.param("waitFor: {condition: workloadsReady, timeout: 1m}", _ready_deployment, id="all-workloads"),
        pytest.param(
            "waitFor: {condition: workloadsReady, kind: Deployment, name: web, namespace: default, timeout: 1m}",
            _ready_deployment,
            id="one-deployment",
        ),
        pytest.param("waitFor: {condition: jobsComplete, timeout: 1m}", _complete_job, id="jobs"),
        pytest.param(
            "waitFor: {condition: jobsComplete, count: 1, selector: app=batch, timeout: 1m}",
            _complete_job,
            id="one-job",
        ),
    ],
)  # fmt: skip
def test_wait_for_workloads_ends_when_the_status_meets_it(step: str, make_it_so: Callable[[Cluster], None]) -> None:
    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        async def later() -> None:
            await cluster.clock.sleep(7)
            make_it_so(cluster)

        assert cluster._tg is not None
        cluster._tg.create_task(later(), name="test:status")
        (wait,) = cluster.scenario.steps
        await cluster.play(wait, activity, timeouts)
        return cluster.clock.now(), timeouts, activity.workload_counters

    now, timeouts, counters = _play(_scenario(step, objects=(DEPLOYMENT, JOB)), body)
    assert (now, timeouts, counters) == (7.0, [], [])


@pytest.mark.parametrize(
    "step",
    [
        pytest.param("waitFor: {condition: workloadsReady, timeout: 10s}", id="never-ready"),
        pytest.param("waitFor: {condition: workloadsReady, selector: app=none, timeout: 10s}", id="none-selected"),
        pytest.param("waitFor: {condition: jobsComplete, timeout: 10s}", id="job-never-completes"),
    ],
)
def test_wait_for_workloads_times_out(step: str) -> None:
    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        (wait,) = cluster.scenario.steps
        await cluster.play(wait, activity, timeouts)
        return cluster.clock.now(), timeouts

    now, timeouts = _play(_scenario(step, objects=(DEPLOYMENT, JOB)), body)
    assert now == 10.0
    assert len(timeouts) == 1


def test_a_rollout_in_progress_is_not_ready() -> None:
    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        _ready_deployment(cluster)
        web = cluster.server.get("Deployment", "web", "default")
        cluster.server.update_status(replace(web, status=replace(web.status, updated_replicas=1)))
        (wait,) = cluster.scenario.steps
        await cluster.play(wait, activity, timeouts)
        return timeouts

    assert _play(_scenario("waitFor: {condition: workloadsReady, timeout: 5s}"), body) != []


def test_delete_passes_the_propagation_policy() -> None:
    seen: list[Any] = []

    async def body(cluster: Cluster, activity: PodActivity, timeouts: list[str]) -> Any:
        server = cluster.server
        original = server.delete

        def spy(*args: Any, **kwargs: Any) -> Any:
            seen.append(kwargs.get("propagation_policy"))
            return original(*args, **kwargs)

        server.delete = spy  # type: ignore[method-assign]
        (step,) = cluster.scenario.steps
        await cluster.play(step, activity, timeouts)

    _play(_scenario("delete: {kind: Deployment, name: web, propagationPolicy: Foreground}"), body)
    assert seen == ["Foreground"]
