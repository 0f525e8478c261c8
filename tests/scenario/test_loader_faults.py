"""The ``faults:`` section and the ``fault`` step: typed specs, defaults, and every error
pinned with its path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.schema import (
    ApiError,
    ApiLatency,
    ContainerStartFailure,
    Delay,
    Fault,
    ImagePullSlow,
    NodeHeartbeatStop,
    Scenario,
    SchedulerInstances,
    WatchCut,
    WatchDelay,
    WatchReorder,
)
from emulator.base.api.core import LabelSelector

SCHED = "{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration"


def load(text: str) -> Scenario:
    return load_scenario_text(text, source="scenario.yaml", base_dir=Path("."))


NODES = "nodes: [{count: 2, namePrefix: node, template: {}}]\n"
"""node-0 and node-1, for the faults aimed at a node."""


def faults(body: str) -> str:
    return f"name: x\n{NODES}faults:\n  - {body}\n"


GOOD = [
    pytest.param(
        "apiError: {verb: bind, kind: Pod, agent: default-scheduler, error: Conflict, probability: 0.3, "
        "start: 10s, stop: 1m, count: 5}",
        ApiError(
            verb="bind",
            kind="Pod",
            agent="default-scheduler",
            error="Conflict",
            probability=0.3,
            start=10.0,
            stop=60.0,
            count=5,
        ),
        id="api-error-full",
    ),
    pytest.param("apiError: {}", ApiError(), id="api-error-defaults"),
    pytest.param(
        "apiLatency: {verb: list, agent: 'kubelet:*', delay: {mean: 2s, jitter: 500ms}, probability: 0.5}",
        ApiLatency(verb="list", agent="kubelet:*", delay=Delay(mean=2.0, jitter=0.5), probability=0.5),
        id="api-latency",
    ),
    pytest.param(
        "watchDelay: {agent: default-scheduler-1, kind: Node, delay: {mean: 5s}}",
        WatchDelay(agent="default-scheduler-1", kind="Node", delay=Delay(mean=5.0)),
        id="watch-delay",
    ),
    pytest.param(
        "watchCut: {agent: 'controller:podgc', every: 30s, start: 1m, stop: 5m, relist: true}",
        WatchCut(agent="controller:podgc", every=30.0, start=60.0, stop=300.0, relist=True),
        id="watch-cut-every",
    ),
    pytest.param("watchCut: {agent: runner, at: 45s}", WatchCut(agent="runner", at=45.0), id="watch-cut-at"),
    pytest.param("watchReorder: {agent: '*', window: 200ms}", WatchReorder(agent="*", window=0.2), id="watch-reorder"),
    pytest.param(
        "nodeHeartbeatStop: {node: node-1, start: 1m}",
        NodeHeartbeatStop(node="node-1", start=60.0),
        id="heartbeat-stop",
    ),
    pytest.param(
        "imagePullSlow: {image: nginx, factor: 10}", ImagePullSlow(image="nginx", factor=10.0), id="pull-factor"
    ),
    pytest.param(
        "imagePullSlow: {node: node-0, bandwidth: 1Mi/s}",
        ImagePullSlow(node="node-0", bandwidth=2**20),
        id="pull-bandwidth",
    ),
    pytest.param(
        "containerStartFailure: {selector: app=web, probability: 0.5, reason: ContainerCannotRun}",
        ContainerStartFailure(
            selector=LabelSelector(match_labels={"app": "web"}), probability=0.5, reason="ContainerCannotRun"
        ),
        id="start-failure",
    ),
    pytest.param("scheduler: {}", SchedulerInstances(), id="scheduler-defaults"),
]


@pytest.mark.parametrize(("body", "expected"), GOOD)
def test_each_fault_kind_loads_typed(body: str, expected: object) -> None:
    assert load(faults(body)).faults == [expected]


def test_fault_step_is_armed_by_its_step_with_its_at() -> None:
    s = load(f"name: x\n{NODES}steps:\n  - at: 2m\n    fault: {{nodeHeartbeatStop: {{node: node-1, stop: 5m}}}}\n")
    assert s.steps == [Fault(at=120.0, fault=NodeHeartbeatStop(node="node-1", stop=300.0))]


def test_scheduler_fault_keeps_its_configuration_and_path() -> None:
    s = load(faults(f"scheduler: {{instances: 2, at: 30s, config: {SCHED}, percentageOfNodesToScore: 10}}}}"))
    (fault,) = s.faults
    assert isinstance(fault, SchedulerInstances)
    assert (fault.instances, fault.at) == (2, 30.0)
    assert fault.config is not None
    assert fault.config.path == "faults[0].scheduler.config"
    assert fault.config.document["percentageOfNodesToScore"] == 10


BROKEN = [
    pytest.param(
        "name: x\nfaults: {apiError: {}}\n",
        "scenario.yaml: faults: expected a list, got a mapping",
        id="faults-not-a-list",
    ),
    pytest.param(
        faults("apiError"),
        "scenario.yaml: faults[0]: expected a one-key mapping like {apiError: {verb: bind, probability: 0.1}}, "
        'got "apiError"',
        id="fault-a-string",
    ),
    pytest.param(
        faults("{apiError: {}, apiLatency: {}}"),
        "scenario.yaml: faults[0]: a fault has exactly one key, got 2: apiError, apiLatency",
        id="fault-two-keys",
    ),
    pytest.param(
        faults("apiErrors: {}"),
        'scenario.yaml: faults[0]: unknown fault "apiErrors"; expected one of: apiError, apiLatency, watchDelay, '
        "watchCut, watchReorder, nodeHeartbeatStop, nodePartition, imagePullSlow, containerStartFailure, scheduler",
        id="fault-unknown",
    ),
    pytest.param(
        faults("apiError: {rate: 0.1}"),
        "scenario.yaml: faults[0].apiError.rate: unknown field; expected one of: verb, kind, agent, error, "
        "probability, start, stop, count",
        id="unknown-field",
    ),
    pytest.param(
        faults("apiError: {verb: watch}"),
        'scenario.yaml: faults[0].apiError.verb: expected "create", "get", "list", "update", "updateStatus", '
        '"delete", "bind" or "evict", got "watch"',
        id="verb",
    ),
    pytest.param(
        faults("apiError: {error: Timeout}"),
        'scenario.yaml: faults[0].apiError.error: expected "Conflict", "InternalError" or "NotFound", got "Timeout"',
        id="error-name",
    ),
    pytest.param(
        faults("apiError: {probability: 1.5}"),
        "scenario.yaml: faults[0].apiError.probability: expected a number >= 0 and <= 1, got 1.5",
        id="probability-above-one",
    ),
    pytest.param(
        faults("apiError: {count: 0}"),
        "scenario.yaml: faults[0].apiError.count: expected an integer >= 1, got 0",
        id="count-zero",
    ),
    pytest.param(
        faults("apiError: {kind: pods}"),
        'scenario.yaml: faults[0].apiError.kind: unsupported kind "pods"; expected one of: Pod, Node, Binding, '
        "Event, Namespace, PriorityClass, Lease, Deployment, "
        "ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Service, PodDisruptionBudget, ControllerRevision, "
        "ConfigMap, Secret, PersistentVolume, PersistentVolumeClaim, StorageClass, CSIDriver, CSINode, "
        "CSIStorageCapacity, VolumeAttachment, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice, "
        "HorizontalPodAutoscaler, NodePool, NodeClaim",
        id="kind",
    ),
    pytest.param(
        faults("apiError: {agent: scheduler}"),
        "scenario.yaml: faults[0].apiError.agent: expected an agent: runner, default-scheduler[-<i>], "
        'kubelet:<node>, controller:<name> or csi:<driver> (* matches any text), got "scheduler"',
        id="agent",
    ),
    pytest.param(
        faults("apiError: {start: 2m, stop: 1m}"),
        "scenario.yaml: faults[0].apiError.stop: 1m0s is not after start (2m0s)",
        id="stop-before-start",
    ),
    pytest.param(
        faults("apiLatency: {verb: get}"),
        "scenario.yaml: faults[0].apiLatency.delay: required field missing",
        id="latency-without-delay",
    ),
    pytest.param(
        faults("apiLatency: {delay: {mean: soon}}"),
        'scenario.yaml: faults[0].apiLatency.delay.mean: expected a duration like 5ms, 1.5s, 2m or 1h30m, got "soon"',
        id="latency-duration",
    ),
    pytest.param(
        faults("watchDelay: {delay: {mean: 1s}}"),
        "scenario.yaml: faults[0].watchDelay.agent: required field missing",
        id="watch-delay-without-agent",
    ),
    pytest.param(
        faults("watchCut: {agent: runner}"),
        "scenario.yaml: faults[0].watchCut: expected either at or every (exactly one of them)",
        id="cut-neither",
    ),
    pytest.param(
        faults("watchCut: {agent: runner, at: 1s, every: 1s}"),
        "scenario.yaml: faults[0].watchCut: expected either at or every (exactly one of them)",
        id="cut-both",
    ),
    pytest.param(
        faults("watchCut: {agent: runner, at: 1s, stop: 5s}"),
        "scenario.yaml: faults[0].watchCut.stop: only with every (at is a single cut)",
        id="cut-at-with-window",
    ),
    pytest.param(
        faults("watchCut: {agent: runner, every: 0s}"),
        'scenario.yaml: faults[0].watchCut.every: expected a duration > 0s, got "0s"',
        id="cut-every-zero",
    ),
    pytest.param(
        faults("watchReorder: {agent: runner}"),
        "scenario.yaml: faults[0].watchReorder.window: required field missing",
        id="reorder-window",
    ),
    pytest.param(
        faults("nodeHeartbeatStop: {start: 1m}"),
        "scenario.yaml: faults[0].nodeHeartbeatStop.node: required field missing",
        id="heartbeat-node",
    ),
    pytest.param(
        faults("nodeHeartbeatStop:"),
        "scenario.yaml: faults[0].nodeHeartbeatStop.node: required field missing",
        id="heartbeat-empty-body",
    ),
    pytest.param(
        faults("imagePullSlow: {image: nginx}"),
        "scenario.yaml: faults[0].imagePullSlow: expected either factor or bandwidth (exactly one of them)",
        id="pull-neither",
    ),
    pytest.param(
        faults("imagePullSlow: {factor: 0}"),
        "scenario.yaml: faults[0].imagePullSlow.factor: expected a number > 0, got 0",
        id="pull-factor-zero",
    ),
    pytest.param(
        faults("imagePullSlow: {bandwidth: 0}"),
        "scenario.yaml: faults[0].imagePullSlow.bandwidth: expected a quantity per second > 0, got 0",
        id="pull-bandwidth-zero",
    ),
    pytest.param(
        faults("containerStartFailure: {selector: 'app in (a'}"),
        "scenario.yaml: faults[0].containerStartFailure.selector: invalid label selector: couldn't parse the "
        "selector string \"app in (a\": unable to parse requirement: found '', expected: ',' or ')' (at position 9)",
        id="start-failure-selector",
    ),
    pytest.param(
        faults("scheduler: {instances: 0}"),
        "scenario.yaml: faults[0].scheduler.instances: expected an integer >= 1, got 0",
        id="scheduler-instances",
    ),
    pytest.param(
        faults("scheduler: {config: {apiVersion: v1, kind: KubeSchedulerConfiguration}}"),
        'scenario.yaml: faults[0].scheduler.config.apiVersion: expected kubescheduler.config.k8s.io/v1, got "v1"',
        id="scheduler-config-api-version",
    ),
    pytest.param(
        faults(f"scheduler: {{config: {SCHED}, profiles: [{{plugins: {{score: {{enabled: [{{name: Nope}}]}}}}}}]}}}}"),
        "scenario.yaml: faults[0].scheduler.config.profiles[0].plugins.score.enabled[0].name: "
        'plugin "Nope" does not exist: not an in-tree plugin, nor registered out of tree',
        id="scheduler-config-decoded",
    ),
    pytest.param(
        "name: x\nsteps:\n  - fault: {watchCut: {agent: runner}}\n",
        "scenario.yaml: steps[0].fault.watchCut: expected either at or every (exactly one of them)",
        id="step-fault-path",
    ),
    pytest.param(
        "name: x\nsteps:\n  - fault: {}\n",
        "scenario.yaml: steps[0].fault: expected a one-key mapping like {apiError: {verb: bind, probability: 0.1}}, "
        "got a mapping",
        id="step-fault-empty",
    ),
]


def _unlocated(message: str) -> str:
    """The message without the ``:line:column`` after the file name (pinned in tests/inputs)."""
    return re.sub(r":\d+:\d+: ", ": ", message, count=1)


@pytest.mark.parametrize(("text", "message"), BROKEN)
def test_broken_fault(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(text)
    assert _unlocated(str(info.value)) == message
