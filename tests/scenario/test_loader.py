"""Scenario loading: the full format parses to the expected Structs; every broken input gets
one ``ScenarioError`` whose message (file, exact path, what was expected) is pinned here."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario, load_scenario_text
from emulator.app.scenario.schema import (
    ApiError,
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    CycleCost,
    Delay,
    Delete,
    Fault,
    KubeletConfig,
    Latency,
    MaxPodsPerNode,
    NoOvercommit,
    PodCount,
    PodOnNode,
    Scenario,
    SchedulerOptions,
    Sleep,
    Uncordon,
    WaitFor,
    generated_name,
)
from emulator.base.api.core import LabelSelector, LabelSelectorRequirement, Namespace, Node, Pod
from emulator.base.api.scheduling import PriorityClass

DATA = Path(__file__).parent / "data"
MI = 2**20
POD = "{containers: [{name: c, image: busybox}]}"
ALL = LabelSelector()


def load(text: str) -> Scenario:
    return load_scenario_text(text, source="scenario.yaml", base_dir=DATA)


# --- the full format ----------------------------------------------------------------------


def test_full_scenario_top_level() -> None:
    s = load_scenario(DATA / "full.yaml")
    assert (s.name, s.description, s.seed, s.clock) == ("full", "every field of the format", 42, "virtual")
    assert (s.until, s.settle) == (3600.0, 45.0)
    assert s.latency == Latency(api=Delay(mean=0.005, jitter=0.001), watch=Delay(mean=1.5))
    assert s.kubelet == KubeletConfig(
        image_pull_bandwidth=50 * MI,
        container_start=Delay(mean=2.0, jitter=0.5),
        termination=Delay(mean=1.0),
        heartbeat_interval=0.0,
        node_status_report_frequency=60.0,
        default_image_size=200 * MI,
    )
    assert s.images == {"nginx:1.25": 70 * MI, "registry.k8s.io/pause:3.9": 700 * 1024}
    assert s.scheduler_options == SchedulerOptions(
        assume_cache=False,
        queueing_hints=True,
        instances=2,
        cycle_cost=CycleCost(fixed=0.001, per_node=1e-05),
        plugins={"MyPlugin": "myplugins.thing:MyPlugin"},
    )


def test_full_scenario_scheduler_file_is_kept_raw_with_its_source() -> None:
    s = load_scenario(DATA / "full.yaml")
    assert s.scheduler is not None
    assert (s.scheduler.file, s.scheduler.path) == (str(DATA / "scheduler.yaml"), "")
    assert s.scheduler.document["kind"] == "KubeSchedulerConfiguration"
    assert s.scheduler.document["profiles"][0]["plugins"] == {"score": {"disabled": [{"name": "ImageLocality"}]}}


def test_full_scenario_objects_inline_and_from_a_relative_file() -> None:
    s = load_scenario(DATA / "full.yaml")
    assert [type(o) for o in s.objects] == [PriorityClass, Namespace, Pod]
    assert isinstance(s.objects[0], PriorityClass)
    assert s.objects[0].value == 1000
    pod = s.objects[2]
    assert isinstance(pod, Pod)
    assert (pod.metadata.name, pod.metadata.namespace) == ("batch-0", "team-a")
    assert pod.spec.containers[0].resources.requests["cpu"].milli == 100


def test_full_scenario_nodes_keep_label_values_and_expand_round_robin() -> None:
    (group,) = load_scenario(DATA / "full.yaml").nodes
    assert (group.count, group.name_prefix, group.template.metadata.name) == (4, "node", "")
    assert group.label_values == {"topology.kubernetes.io/zone": ["zone-a", "zone-b", "zone-c"]}
    assert group.template.status.allocatable["memory"].value == 16 * 2**30
    nodes = group.nodes()
    assert [n.metadata.name for n in nodes] == ["node-0", "node-1", "node-2", "node-3"]
    zones = [n.metadata.labels["topology.kubernetes.io/zone"] for n in nodes]
    assert zones == ["zone-a", "zone-b", "zone-c", "zone-a"]
    assert all(n.metadata.labels["pool"] == "general" for n in nodes)
    assert all(isinstance(n, Node) and n.status.allocatable["cpu"].milli == 4000 for n in nodes)


def test_full_scenario_steps() -> None:
    steps = load_scenario(DATA / "full.yaml").steps
    assert [type(st) for st in steps] == [
        CreatePods,
        CreateNodes,
        WaitFor,
        WaitFor,
        Cordon,
        Uncordon,
        Sleep,
        Create,
        Delete,
        Delete,
        Delete,
        Fault,
    ]
    assert [st.at for st in steps] == [None, 30.0, 30.0] + [None] * 9
    create_pods = steps[0]
    assert isinstance(create_pods, CreatePods)
    assert (create_pods.count, create_pods.rate_per_second, create_pods.namespace) == (10, 5.0, "default")
    assert create_pods.template.metadata.labels == {"app": "web"}
    assert create_pods.pod(3).metadata.name == "web-3"  # the prefix ends with "-": no second dash
    assert create_pods.pod(3).spec.containers[0].resources.requests["memory"].value == 2**30
    assert isinstance(steps[1], CreateNodes)
    assert steps[1].nodes.node(0).metadata.name == "big-0"
    assert steps[2] == WaitFor(
        at=30.0, condition="podsRunning", selector=LabelSelector(match_labels={"app": "web"}), timeout=120.0
    )
    assert steps[3] == WaitFor(condition="podsScheduled", count=3, timeout=10.0)
    assert steps[4] == Cordon(node="node-0")
    assert steps[5] == Uncordon(node="node-0")
    assert steps[6] == Sleep(duration=90.0)
    assert isinstance(steps[7], Create)
    assert [o.metadata.name for o in steps[7].objects] == ["one-off", "team-b", "batch-1"]
    assert steps[8] == Delete(kind="Pod", name="one-off", namespace="team-a")
    assert steps[9] == Delete(
        kind="Pod",
        namespace="default",
        selector=LabelSelector(
            match_expressions=[
                LabelSelectorRequirement(key="app", operator="In", values=["web"]),
                LabelSelectorRequirement(key="tier", operator="NotIn", values=["db"]),
            ]
        ),
    )
    assert steps[10] == Delete(kind="Node", name="big-0")
    assert steps[11] == Fault(fault=ApiError(verb="bind", probability=0.1))


def test_full_scenario_expectations() -> None:
    web = LabelSelector(match_labels={"app": "web"})
    assert load_scenario(DATA / "full.yaml").expect == [
        PodCount(condition="podsRunning", count="all", selector=web),
        PodCount(condition="podsScheduled", count=10),
        PodCount(condition="podsPending", count=0),
        PodCount(condition="podsSucceeded", count=0, selector=LabelSelector(match_labels={"app": "batch"})),
        PodCount(condition="podsFailed", count=0),
        PodOnNode(name="one-off", namespace="team-a", node="node-1"),
        PodOnNode(name="web-0", namespace="default", node="node-2"),
        MaxPodsPerNode(count=5, selector=web),
        NoOvercommit(),
    ]


def test_defaults() -> None:
    s = load("name: minimal\n")
    assert s == Scenario(name="minimal")
    assert (s.seed, s.clock, s.until, s.settle, s.scheduler) == (0, "virtual", None, 30.0, None)
    assert s.kubelet.heartbeat_interval == 10.0
    assert s.kubelet.default_image_size == 100 * MI
    assert s.kubelet.image_pull_bandwidth == 0
    assert s.scheduler_options == SchedulerOptions(assume_cache=True, queueing_hints=True, instances=1)
    assert s.latency.api == Delay(mean=0.0, jitter=0.0)


@pytest.mark.parametrize(
    ("kubelet", "expected"),
    [
        pytest.param("", None, id="no-kubelet-section-upstream-5m"),
        pytest.param("kubelet: {defaultImageSize: 1Mi}\n", None, id="unset-upstream-5m"),
        # upstream defaults.go: an explicit nodeStatusUpdateFrequency becomes the default
        pytest.param("kubelet: {heartbeatInterval: 7s}\n", 7.0, id="explicit-heartbeat-is-the-default"),
        pytest.param("kubelet: {heartbeatInterval: 0}\n", 0.0, id="explicit-heartbeat-zero"),
        pytest.param("kubelet: {heartbeatInterval: 10s, nodeStatusReportFrequency: 5m}\n", 300.0, id="both"),
        pytest.param("kubelet: {nodeStatusReportFrequency: 0}\n", 0.0, id="every-heartbeat"),
        pytest.param("kubelet: {nodeStatusReportFrequency: 1m30s}\n", 90.0, id="go-duration"),
        pytest.param("kubelet: {nodeStatusReportFrequency: null}\n", None, id="null-is-unset"),
    ],
)
def test_node_status_report_frequency_defaulting(kubelet: str, expected: float | None) -> None:
    assert load("name: x\n" + kubelet).kubelet.node_status_report_frequency == expected


@pytest.mark.parametrize(
    ("prefix", "names"),
    [
        pytest.param("node", ["node-0", "node-1"], id="dash-added"),
        pytest.param("node-", ["node-0", "node-1"], id="dash-kept"),
        pytest.param("n.a", ["n.a-0", "n.a-1"], id="dotted"),
    ],
)
def test_generated_names(prefix: str, names: list[str]) -> None:
    assert [generated_name(prefix, i) for i in range(2)] == names


def test_units_durations_and_quantities() -> None:
    s = load(
        "name: x\nsettle: 1h30m\nuntil: 90\n"
        "kubelet: {imagePullBandwidth: 1.5Gi/s, defaultImageSize: 1e3, containerStart: {mean: 250us}}\n"
        "images: {a: 1G, b: 1500}\n"
    )
    assert (s.settle, s.until) == (5400.0, 90.0)
    assert s.kubelet.image_pull_bandwidth == 3 * 2**29
    assert s.kubelet.default_image_size == 1000
    assert s.kubelet.container_start.mean == pytest.approx(250e-6)
    assert s.images == {"a": 10**9, "b": 1500}


def test_inline_scheduler_config_records_its_path() -> None:
    s = load("name: x\nscheduler:\n  apiVersion: kubescheduler.config.k8s.io/v1\n  kind: KubeSchedulerConfiguration\n")
    assert s.scheduler is not None
    assert (s.scheduler.file, s.scheduler.path) == ("scenario.yaml", "scheduler")


def test_create_pods_namespace_from_template_or_field() -> None:
    tpl = f"template: {{metadata: {{namespace: team-a}}, spec: {POD}}}"
    s = load(
        "name: x\nsteps:\n"
        f"  - createPods: {{count: 1, namePrefix: a, {tpl}}}\n"
        f"  - createPods: {{count: 1, namePrefix: b, namespace: team-b, {tpl}}}\n"
    )
    assert [st.namespace for st in s.steps if isinstance(st, CreatePods)] == ["team-a", "team-b"]


# --- file references ----------------------------------------------------------------------


def test_file_references_are_relative_to_the_scenario_not_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub" / "m").mkdir(parents=True)
    (tmp_path / "sub" / "m" / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    (tmp_path / "sub" / "scenario.yaml").write_text("name: x\nobjects:\n  - file: m/ns.yaml\n")
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        s = load_scenario(Path("sub") / "scenario.yaml")
    finally:
        os.chdir(cwd)
    assert [o.metadata.name for o in s.objects] == ["a"]


def test_error_inside_a_referenced_manifest_names_that_file() -> None:
    with pytest.raises(ScenarioError) as info:
        load("name: x\nsteps:\n  - create:\n      - file: manifests/bad-pod.yaml\n")
    err = info.value
    assert err.file == str(DATA / "manifests" / "bad-pod.yaml")
    assert err.path == "documents[1].spec.containers[0].resources.requests.cpu"
    assert err.detail.startswith('Invalid value: "lots": quantities must match')


def test_missing_scenario_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(missing)
    assert str(info.value) == f"{missing}: cannot read file: No such file or directory"


def test_error_attributes() -> None:
    with pytest.raises(ScenarioError) as info:
        load("name: x\nnodes: [{count: 0, namePrefix: n, template: {}}]\n")
    err = info.value
    assert (err.file, err.path, err.detail) == (
        "scenario.yaml",
        "nodes[0].count",
        "expected an integer >= 1 and <= 100000, got 0",
    )


# --- broken scenarios ---------------------------------------------------------------------

_VERBS = (
    "create, createPods, createNodes, delete, scale, update, cordon, uncordon, drain, sleep, waitFor, fault, replay"
)
_QTY_RE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_CP = f"count: 1, namePrefix: p, template: {{spec: {POD}}}"

BROKEN = [
    pytest.param("seed: 1\n", "scenario.yaml: name: required field missing", id="name-missing"),
    pytest.param(
        "name: x\nnosuchfield: 1\n",
        "scenario.yaml: nosuchfield: unknown field; expected one of: name, description, seed, clock, until, "
        "settle, latency, apiServer, controllers, kubelet, images, scheduler, schedulerOptions, objects, nodes, "
        "storage, load, autoscaling, faults, steps, expect",
        id="unknown-top-level-field",
    ),
    pytest.param(
        "name: x\nsteps:\n  - sleep: 1s\n bad: [\n",
        "scenario.yaml: invalid YAML at line 4, column 2: did not find expected key",
        id="yaml-syntax",
    ),
    pytest.param(
        "- a\n", "scenario.yaml: expected a scenario (a mapping with name, nodes, steps, ...), got a list", id="list"
    ),
    pytest.param(
        "name: a\n---\nname: b\n", "scenario.yaml: expected one YAML document (the scenario), got 2", id="two-docs"
    ),
    pytest.param(
        "name: x\nlatency: {api: {mean: fast}}\n",
        'scenario.yaml: latency.api.mean: expected a duration like 5ms, 1.5s, 2m or 1h30m, got "fast"',
        id="duration-word",
    ),
    pytest.param(
        "name: x\nlatency: {watch: {meen: 1s}}\n",
        "scenario.yaml: latency.watch.meen: unknown field; expected one of: mean, jitter",
        id="nested-unknown-field",
    ),
    pytest.param(
        "name: x\nsettle: -1s\n",
        'scenario.yaml: settle: durations cannot be negative, got "-1s"',
        id="duration-negative",
    ),
    pytest.param(
        "name: x\nclock: wall\n", 'scenario.yaml: clock: expected "virtual" or "real", got "wall"', id="clock"
    ),
    pytest.param("name: x\nseed: true\n", "scenario.yaml: seed: expected an integer, got true", id="seed-bool"),
    pytest.param(
        "name: x\nkubelet: {imagePullBandwidth: fast}\n",
        'scenario.yaml: kubelet.imagePullBandwidth: expected a quantity per second like 50Mi or 50Mi/s, got "fast"',
        id="bandwidth",
    ),
    pytest.param(
        "name: x\nkubelet: {nodeStatusReportFrequency: often}\n",
        "scenario.yaml: kubelet.nodeStatusReportFrequency: expected a duration like 5ms, 1.5s, 2m or 1h30m, "
        'got "often"',
        id="report-frequency-word",
    ),
    pytest.param(
        "name: x\nkubelet: {nodeStatusReportFrequency: -5m}\n",
        'scenario.yaml: kubelet.nodeStatusReportFrequency: durations cannot be negative, got "-5m"',
        id="report-frequency-negative",
    ),
    pytest.param(
        "name: x\nkubelet: {nodeStatusReportFrequency: true}\n",
        "scenario.yaml: kubelet.nodeStatusReportFrequency: expected a duration like 5ms, 1.5s, 2m or 1h30m, got true",
        id="report-frequency-bool",
    ),
    pytest.param(
        "name: x\nkubelet: {nodeStatusReportFrequncy: 5m}\n",
        "scenario.yaml: kubelet.nodeStatusReportFrequncy: unknown field; expected one of: imagePullBandwidth, "
        "containerStart, termination, heartbeatInterval, nodeStatusReportFrequency, defaultImageSize, containerEvents",
        id="report-frequency-misspelt",
    ),
    pytest.param(
        "name: x\nimages: {nginx:1.25: -1Gi}\n",
        'scenario.yaml: images["nginx:1.25"]: expected a quantity >= 0, got "-1Gi"',
        id="image-size-negative",
    ),
    pytest.param(
        "name: x\nschedulerOptions: {instances: 0}\n",
        "scenario.yaml: schedulerOptions.instances: expected an integer >= 1, got 0",
        id="instances-zero",
    ),
    pytest.param(
        "name: x\nschedulerOptions: {plugins: {Foo: notapath}}\n",
        'scenario.yaml: schedulerOptions.plugins.Foo: expected an import path like "package.module:Class", '
        'got "notapath"',
        id="plugin-import-path",
    ),
    pytest.param(
        "name: x\nscheduler: {file: nope.yaml}\n",
        f"scenario.yaml: scheduler: cannot read file: No such file or directory: {DATA / 'nope.yaml'}",
        id="scheduler-file-missing",
    ),
    pytest.param(
        "name: x\nscheduler: {apiVersion: kubescheduler.config.k8s.io/v1beta3, kind: KubeSchedulerConfiguration}\n",
        "scenario.yaml: scheduler.apiVersion: expected kubescheduler.config.k8s.io/v1, "
        'got "kubescheduler.config.k8s.io/v1beta3"',
        id="scheduler-api-version",
    ),
    pytest.param(
        "name: x\nobjects:\n  - {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n  - file: missing.yaml\n",
        f"scenario.yaml: objects[1]: cannot read file: No such file or directory: {DATA / 'missing.yaml'}",
        id="objects-file-missing",
    ),
    pytest.param(
        "name: x\nobjects:\n  - {file: a.yaml, kind: Pod}\n",
        "scenario.yaml: objects[0].apiVersion: required field missing (e.g. apiVersion: v1)",
        id="objects-file-plus-manifest-fields",
    ),
    pytest.param(
        "name: x\nobjects:\n  - {file: a.yaml, fiel: b.yaml}\n",
        "scenario.yaml: objects[0].fiel: unknown field; expected one of: file",
        id="objects-file-entry-unknown-field",
    ),
    pytest.param(
        "name: x\nobjects:\n  - file: manifests/bad-pod.yaml\n",
        f"{DATA / 'manifests' / 'bad-pod.yaml'}: documents[1].spec.containers[0].resources.requests.cpu: "
        f'Invalid value: "lots": {_QTY_RE}',
        id="objects-error-inside-file",
    ),
    pytest.param(
        "name: x\nobjects:\n  - file: manifests/broken.yaml\n",
        f"{DATA / 'manifests' / 'broken.yaml'}: invalid YAML at line 5, column 2: did not find expected key",
        id="objects-file-yaml-syntax",
    ),
    pytest.param(
        "name: x\nnodes: [{count: three, namePrefix: n, template: {}}]\n",
        'scenario.yaml: nodes[0].count: expected an integer >= 1 and <= 100000, got "three"',
        id="nodes-count-string",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, template: {}}]\n",
        "scenario.yaml: nodes[0].namePrefix: required field missing",
        id="nodes-name-prefix-missing",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, namePrefix: Big_Node, template: {}}]\n",
        'scenario.yaml: nodes[0].namePrefix: names made from "Big_Node" (like "Big_Node-0") are invalid: '
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character",
        id="nodes-name-prefix-invalid",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, namePrefix: n, template: {kind: Pod}}]\n",
        'scenario.yaml: nodes[0].template: expected a v1 Node template, got "v1/Pod"',
        id="nodes-template-kind",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, namePrefix: n, template: {metadata: {name: n1}}}]\n",
        "scenario.yaml: nodes[0].template.metadata.name: must not be set in a template: names come from namePrefix",
        id="nodes-template-name",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, namePrefix: n, template: {spec: {taints: [{key: k, effect: Sometimes}]}}}]\n",
        'scenario.yaml: nodes[0].template.spec.taints[0].effect: Unsupported value: "Sometimes"',
        id="nodes-template-invalid",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, namePrefix: n, template: {}, labelValues: {zone: []}}]\n",
        "scenario.yaml: nodes[0].labelValues.zone: expected a non-empty list",
        id="label-values-empty",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 1, namePrefix: n, template: {}, labelValues: {zone: [a, 'b c']}}]\n",
        'scenario.yaml: nodes[0].labelValues.zone[1]: invalid label value "b c": a valid label must be an empty '
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        id="label-value-invalid",
    ),
    pytest.param(
        "name: x\nnodes:\n  - {count: 2, namePrefix: n, template: {}}\n  - {count: 1, namePrefix: n-, template: {}}\n",
        'scenario.yaml: nodes[1].namePrefix: Node "n-0" already exists (created by nodes[0])',
        id="nodes-duplicate-names",
    ),
    pytest.param(
        "name: x\nsteps:\n  - sleep: 1s\n  - sleep: 1s\n  - createPod: {}\n",
        f'scenario.yaml: steps[2]: unknown step verb "createPod"; expected one of: {_VERBS}',
        id="step-unknown-verb",
    ),
    pytest.param(
        f"name: x\nsteps:\n  - createPods: {{{_CP}}}\n    sleep: 1s\n",
        "scenario.yaml: steps[0]: a step has exactly one verb, got 2: createPods, sleep",
        id="step-two-verbs",
    ),
    pytest.param(
        "name: x\nsteps:\n  - at: 1s\n",
        f"scenario.yaml: steps[0]: a step has exactly one verb, got none; expected one of: {_VERBS}",
        id="step-no-verb",
    ),
    pytest.param(
        "name: x\nsteps:\n  - sleep\n",
        'scenario.yaml: steps[0]: expected a step (a mapping like {sleep: 5s}), got "sleep"',
        id="step-not-a-mapping",
    ),
    pytest.param(
        "name: x\nsteps:\n  - {at: 10s, sleep: 1s}\n  - sleep: 1s\n  - {at: 5s, sleep: 1s}\n",
        "scenario.yaml: steps[2].at: 5s is before steps[0].at (10s); step times must not go backwards",
        id="step-at-backwards",
    ),
    pytest.param(
        f"name: x\nsteps:\n  - createPods: {{count: 0, namePrefix: p, template: {{spec: {POD}}}}}\n",
        "scenario.yaml: steps[0].createPods.count: expected an integer >= 1 and <= 1000000, got 0",
        id="create-pods-count-zero",
    ),
    pytest.param(
        "name: x\nsteps:\n  - sleep: 1s\n  - sleep: 1s\n  - sleep: 1s\n  - createPods: {count: 1, namePrefix: p, "
        "template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: lots}}}]}}}\n",
        "scenario.yaml: steps[3].createPods.template.spec.containers[0].resources.requests.cpu: "
        f'Invalid value: "lots": {_QTY_RE}',
        id="create-pods-template-cpu",
    ),
    pytest.param(
        "name: x\nsteps:\n  - createPods: {count: 1, namePrefix: p, template: {}}\n",
        "scenario.yaml: steps[0].createPods.template.spec.containers: Required value",
        id="create-pods-no-containers",
    ),
    pytest.param(
        f"name: x\nsteps:\n  - createPods: {{{_CP}, ratePerSecond: 0}}\n",
        "scenario.yaml: steps[0].createPods.ratePerSecond: expected a number > 0, got 0",
        id="create-pods-rate",
    ),
    pytest.param(
        f"name: x\nsteps:\n  - createPods: {{count: 1, nmaePrefix: p, template: {{spec: {POD}}}}}\n",
        "scenario.yaml: steps[0].createPods.nmaePrefix: unknown field; expected one of: "
        "count, namePrefix, template, ratePerSecond, namespace, runDuration",
        id="create-pods-typo",
    ),
    pytest.param(
        "name: x\nsteps:\n  - createNodes: {count: 1, namePrefix: n, template: {status: {allocatable: {cpu: x}}}}\n",
        'scenario.yaml: steps[0].createNodes.template.status.allocatable.cpu: Invalid value: "x": ' + _QTY_RE,
        id="create-nodes-template",
    ),
    pytest.param(
        "name: x\nsteps:\n  - delete: {kind: Pod, name: a, selector: app=web}\n",
        "scenario.yaml: steps[0].delete: expected either name or selector (exactly one of them)",
        id="delete-name-and-selector",
    ),
    pytest.param(
        "name: x\nsteps:\n  - delete: {kind: Pod}\n",
        "scenario.yaml: steps[0].delete: expected either name or selector (exactly one of them)",
        id="delete-neither",
    ),
    pytest.param(
        "name: x\nsteps:\n  - delete: {kind: ReplicationController, name: a}\n",
        'scenario.yaml: steps[0].delete.kind: unsupported kind "ReplicationController"; expected one of: '
        "Pod, Node, Event, Namespace, PriorityClass, Lease, Deployment, "
        "ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Service, PodDisruptionBudget, ControllerRevision, "
        "ConfigMap, Secret, PersistentVolume, PersistentVolumeClaim, StorageClass, CSIDriver, CSINode, "
        "CSIStorageCapacity, VolumeAttachment, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice, "
        "HorizontalPodAutoscaler, NodePool, NodeClaim",
        id="delete-kind",
    ),
    pytest.param(
        "name: x\nsteps:\n  - delete: {kind: Node, name: a, namespace: default}\n",
        "scenario.yaml: steps[0].delete.namespace: Node is cluster-scoped: remove namespace",
        id="delete-cluster-scoped-namespace",
    ),
    pytest.param(
        "name: x\nsteps:\n  - waitFor: {condition: podsRunning}\n",
        "scenario.yaml: steps[0].waitFor.timeout: required field missing",
        id="wait-for-timeout",
    ),
    pytest.param(
        "name: x\nsteps:\n  - waitFor: {condition: podsReady, timeout: 1m}\n",
        'scenario.yaml: steps[0].waitFor.condition: expected "podsScheduled", "podsRunning", "podsSucceeded", '
        '"podsTerminal", "workloadsReady" or "jobsComplete", got "podsReady"',
        id="wait-for-condition",
    ),
    pytest.param(
        "name: x\nsteps:\n  - waitFor: {condition: podsRunning, selector: 'app in (a', timeout: 1m}\n",
        "scenario.yaml: steps[0].waitFor.selector: invalid label selector: couldn't parse the selector string "
        "\"app in (a\": unable to parse requirement: found '', expected: ',' or ')' (at position 9)",
        id="wait-for-selector",
    ),
    pytest.param(
        "name: x\nsteps:\n  - sleep: {seconds: 5}\n",
        "scenario.yaml: steps[0].sleep: expected a duration like 5ms, 1.5s, 2m or 1h30m, got a mapping",
        id="sleep-mapping",
    ),
    pytest.param(
        "name: x\nsteps:\n  - fault: crash\n",
        "scenario.yaml: steps[0].fault: expected a one-key mapping like {apiError: {verb: bind, probability: 0.1}}, "
        'got "crash"',
        id="fault-not-a-mapping",
    ),
    pytest.param(
        "name: x\nexpect:\n  - podsRunning: {count: -1}\n",
        'scenario.yaml: expect[0].podsRunning.count: expected an integer >= 0 or "all", got -1',
        id="expect-count-negative",
    ),
    pytest.param(
        "name: x\nexpect:\n  - podsRunning: {count: many}\n",
        'scenario.yaml: expect[0].podsRunning.count: expected an integer >= 0 or "all", got "many"',
        id="expect-count-word",
    ),
    pytest.param(
        "name: x\nexpect:\n  - podsFailed: {selector: app=web}\n",
        "scenario.yaml: expect[0].podsFailed.count: required field missing",
        id="expect-count-missing",
    ),
    pytest.param(
        "name: x\nexpect:\n  - podsRunning: {count: 1}\n  - podsRuning: {count: 1}\n",
        'scenario.yaml: expect[1]: unknown expectation "podsRuning"; expected one of: podsRunning, podsScheduled, '
        "podsPending, podsSucceeded, podsFailed, podOnNode, maxPodsPerNode, topologySpread, podsOnNodes, noOvercommit, "
        "workloadsReady, jobsComplete, objectCount",
        id="expect-unknown",
    ),
    pytest.param(
        "name: x\nexpect:\n  - podsRunning: {count: 1}\n    noOvercommit: true\n",
        "scenario.yaml: expect[0]: an expectation has exactly one key, got 2: podsRunning, noOvercommit",
        id="expect-two-keys",
    ),
    pytest.param(
        "name: x\nexpect:\n  - podOnNode: {pod: a/b/c, node: n}\n",
        'scenario.yaml: expect[0].podOnNode.pod: expected "namespace/name" or "name", got "a/b/c"',
        id="expect-pod-on-node",
    ),
    pytest.param(
        "name: x\nexpect:\n  - noOvercommit: false\n",
        "scenario.yaml: expect[0].noOvercommit: expected true, got false",
        id="expect-no-overcommit-false",
    ),
    pytest.param(
        "name: x\nexpect:\n  - maxPodsPerNode: {count: 1, selector: 'a>1'}\n",
        'scenario.yaml: expect[0].maxPodsPerNode.selector: invalid label selector: "gt" isn\'t supported in '
        "label selectors",
        id="expect-selector-operator",
    ),
]


def _unlocated(message: str) -> str:
    """The message without the ``:line:column`` after the file name (pinned in tests/inputs)."""
    return re.sub(r":\d+:\d+: ", ": ", message, count=1)


@pytest.mark.parametrize(("text", "message"), BROKEN)
def test_broken_scenario(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(text)
    assert _unlocated(str(info.value)) == message


def test_placement_expectations_parse(tmp_path: Path) -> None:
    from emulator.app.scenario.schema import PodsOnNodes, TopologySpread

    text = (
        "name: x\nexpect:\n"
        "  - topologySpread: {topologyKey: topology.kubernetes.io/zone, maxSkew: 1, selector: app=web}\n"
        "  - podsOnNodes: {selector: app=web, nodeSelector: 'zone in (a,b)', count: 2}\n"
    )
    sc = load_scenario_text(text, "scenario.yaml", tmp_path)
    spread, on = sc.expect
    assert isinstance(spread, TopologySpread)
    assert (spread.topology_key, spread.max_skew) == ("topology.kubernetes.io/zone", 1)
    assert spread.selector.match_labels == {"app": "web"}
    assert isinstance(on, PodsOnNodes)
    assert on.count == 2
    assert on.node_selector.match_expressions[0].values == ["a", "b"]
    with pytest.raises(ScenarioError, match=r"expect\[0\]\.podsOnNodes\.nodeSelector: required field missing"):
        load_scenario_text("name: x\nexpect:\n  - podsOnNodes: {selector: app=web}\n", "scenario.yaml", tmp_path)
