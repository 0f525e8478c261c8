"""The loader's replay of the run (``timeline.Timeline``) and the checks added beside it: every
write the API server would refuse is a ``ScenarioError`` at load, with its path, and
scenarios that are fine stay valid. Also duplicate YAML keys, the run-duration
annotation, Binding manifests and the size limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from emulator.app.scenario import syntax as verbs_module
from emulator.app.scenario import timeline as timeline_module
from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.schema import Scenario, auto_namespaces
from emulator.app.scenario.schema import cluster as schema_cluster
from emulator.app.scenario.schema import steps as schema_steps

CONTAINERS = "[{name: c, image: busybox}]"
POD = f"{{containers: {CONTAINERS}}}"
NODES = "nodes: [{count: 3, namePrefix: n, template: {}}]\n"


def load(text: str, base_dir: Path = Path(".")) -> Scenario:
    return load_scenario_text(text, source="s.yaml", base_dir=base_dir)


def pod(name: str, extra: str = "", ns: str = "", spec: str = POD) -> str:
    namespace = f", namespace: {ns}" if ns else ""
    return f"{{apiVersion: v1, kind: Pod, metadata: {{name: {name}{namespace}{extra}}}, spec: {spec}}}"


def pc(name: str, value: int, default: bool = False) -> str:
    flag = ", globalDefault: true" if default else ""
    return (
        f"{{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {{name: {name}}}, value: {value}{flag}}}"
    )


def ns(name: str, labels: str = "") -> str:
    return f"{{apiVersion: v1, kind: Namespace, metadata: {{name: {name}{labels}}}}}"


def create_pods(prefix: str, count: int = 2, extra: str = "", spec: str = POD) -> str:
    return f"createPods: {{count: {count}, namePrefix: {prefix}{extra}, template: {{spec: {spec}}}}}"


def steps(*lines: str, head: str = NODES) -> str:
    return "name: x\n" + head + "steps:\n" + "".join(f"  - {line}\n" for line in lines)


REFUSED = [
    # --- an object that already exists --------------------------------------------------
    pytest.param(
        f"name: x\nobjects:\n  - {pod('p')}\n  - {pod('p')}\n",
        's.yaml: objects[1].metadata.name: Pod "default/p" already exists (created by objects[0])',
        id="same-pod-twice-in-objects",
    ),
    pytest.param(
        steps(create_pods("web"), create_pods("web")),
        's.yaml: steps[1].createPods.namePrefix: Pod "default/web-0" already exists (created by steps[0].createPods)',
        id="create-pods-same-prefix",
    ),
    pytest.param(
        steps(create_pods("web"), create_pods("web-", count=1)),
        's.yaml: steps[1].createPods.namePrefix: Pod "default/web-0" already exists (created by steps[0].createPods)',
        id="create-pods-prefix-with-dash-is-the-same-prefix",
    ),
    pytest.param(
        steps(create_pods("web", count=20), f"create: [{pod('web-13')}]"),
        's.yaml: steps[1].create[0].metadata.name: Pod "default/web-13" already exists '
        "(created by steps[0].createPods)",
        id="manifest-named-like-a-generated-pod",
    ),
    pytest.param(
        steps(f"create: [{pod('web-13')}]", create_pods("web", count=20)),
        's.yaml: steps[1].createPods.namePrefix: Pod "default/web-13" already exists (created by steps[0].create[0])',
        id="generated-pod-named-like-a-manifest",
    ),
    pytest.param(
        steps("createNodes: {count: 1, namePrefix: n, template: {}}"),
        's.yaml: steps[0].createNodes.namePrefix: Node "n-0" already exists (created by nodes[0])',
        id="create-nodes-reuses-a-node-name",
    ),
    pytest.param(
        "name: x\nobjects: [{apiVersion: v1, kind: Node, metadata: {name: n-2}}]\n" + NODES,
        's.yaml: nodes[0].namePrefix: Node "n-2" already exists (created by objects[0])',
        id="node-manifest-and-node-group",
    ),
    pytest.param(
        steps("delete: {kind: Node, name: n-0}", "createNodes: {count: 2, namePrefix: n, template: {}}"),
        's.yaml: steps[1].createNodes.namePrefix: Node "n-1" already exists (created by nodes[0])',
        id="create-nodes-after-deleting-only-the-first",
    ),
    pytest.param(
        "name: x\nnodes: [{count: 4, namePrefix: n, template: {}, labelValues: {zone: [a, b]}}]\n"
        "steps:\n  - delete: {kind: Node, selector: zone=a}\n"
        "  - createNodes: {count: 2, namePrefix: n, template: {}}\n",
        's.yaml: steps[1].createNodes.namePrefix: Node "n-1" already exists (created by nodes[0])',
        id="label-values-selector-deletes-every-other-node",
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {ns('team')}\nsteps:\n  - create: [{ns('team')}]\n",
        's.yaml: steps[0].create[0].metadata.name: Namespace "team" already exists (created by objects[0])',
        id="namespace-twice",
    ),
    # --- namespaces ---------------------------------------------------------------------
    pytest.param(
        f"name: x\nobjects:\n  - {pod('p', ns='team')}\nsteps:\n  - create: [{ns('team')}]\n",
        's.yaml: objects[0].metadata.namespace: Namespace "team" does not exist at this point '
        "(it is created later, by steps[0].create[0])",
        id="namespace-created-after-its-pod",
    ),
    pytest.param(
        steps(f"create: [{pod('p', ns='team')}, {ns('team')}]"),
        's.yaml: steps[0].create[0].metadata.namespace: Namespace "team" does not exist at this point '
        "(it is created later, by steps[0].create[1])",
        id="namespace-after-its-pod-in-one-create-step",
    ),
    pytest.param(
        steps(
            f"create: [{ns('team')}]",
            "delete: {kind: Namespace, name: team}",
            create_pods("w", extra=", namespace: team"),
        ),
        's.yaml: steps[2].createPods.namespace: Namespace "team" does not exist at this point '
        "(deleted by steps[1].delete)",
        id="pods-in-a-deleted-namespace",
    ),
    pytest.param(
        steps("delete: {kind: Namespace, name: default}"),
        's.yaml: steps[0].delete.name: namespaces "default" is forbidden: this namespace may not be deleted',
        id="delete-default-namespace",
    ),
    pytest.param(
        steps("delete: {kind: Namespace, selector: 'kubernetes.io/metadata.name in (kube-public,x)'}"),
        's.yaml: steps[0].delete.selector: namespaces "kube-public" is forbidden: this namespace may not be deleted',
        id="delete-kube-public-by-selector",
    ),
    # --- priority ----------------------------------------------------------------------
    pytest.param(
        steps(create_pods("w", spec=f"{{priorityClassName: gold, containers: {CONTAINERS}}}")),
        "s.yaml: steps[0].createPods.template.spec.priorityClassName: no PriorityClass with name gold was found "
        "(define it in objects or an earlier create step)",
        id="unknown-priority-class",
    ),
    pytest.param(
        steps(
            create_pods("w", spec=f"{{priorityClassName: gold, containers: {CONTAINERS}}}"),
            f"create: [{pc('gold', 10)}]",
        ),
        "s.yaml: steps[0].createPods.template.spec.priorityClassName: no PriorityClass with name gold was found "
        "(it is created later, by steps[1].create[0])",
        id="priority-class-created-later",
    ),
    pytest.param(
        steps(
            "delete: {kind: PriorityClass, name: gold}",
            f"create: [{pod('p', spec='{priorityClassName: gold, containers: [{name: c, image: i}]}')}]",
            head=f"objects: [{pc('gold', 10)}]\n",
        ),
        "s.yaml: steps[1].create[0].spec.priorityClassName: no PriorityClass with name gold was found "
        "(deleted by steps[0].delete)",
        id="priority-class-deleted",
    ),
    pytest.param(
        f"name: x\nobjects: [{pod('p', spec='{priority: 5, containers: [{name: c, image: i}]}')}]\n",
        "s.yaml: objects[0].spec.priority: the integer value of priority (5) must not be provided in pod spec; "
        "priority admission controller computed 0 from the given PriorityClass name",
        id="priority-without-class",
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {pc('gold', 10)}\n"
        f"  - {pod('p', spec='{priorityClassName: gold, priority: 9, containers: [{name: c, image: i}]}')}\n",
        "s.yaml: objects[1].spec.priority: the integer value of priority (9) must not be provided in pod spec; "
        "priority admission controller computed 10 from the given PriorityClass name",
        id="priority-disagrees-with-class",
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {pc('base', 7, default=True)}\n"
        "steps:\n  - " + create_pods("w", spec="{priority: 0, containers: [{name: c, image: i}]}") + "\n",
        "s.yaml: steps[0].createPods.template.spec.priority: the integer value of priority (0) must not be provided "
        "in pod spec; priority admission controller computed 7 from the given PriorityClass name",
        id="priority-disagrees-with-global-default",
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {pc('a', 1, default=True)}\n  - {pc('b', 2, default=True)}\n",
        "s.yaml: objects[1].globalDefault: PriorityClass a is already marked as default (created by objects[0])",
        id="two-global-defaults",
    ),
    # --- steps that name what does not exist ---------------------------------------------
    pytest.param(
        steps("cordon: {node: nope}"),
        's.yaml: steps[0].cordon.node: Node "nope" does not exist at this point',
        id="cordon-unknown-node",
    ),
    pytest.param(
        steps("uncordon: {node: big-0}", "createNodes: {count: 1, namePrefix: big, template: {}}"),
        's.yaml: steps[0].uncordon.node: Node "big-0" does not exist at this point '
        "(it is created later, by steps[1].createNodes)",
        id="uncordon-before-the-node-exists",
    ),
    pytest.param(
        steps("delete: {kind: Node, selector: ''}", "cordon: {node: n-1}"),
        's.yaml: steps[1].cordon.node: Node "n-1" does not exist at this point (deleted by steps[0].delete)',
        id="cordon-deleted-node",
    ),
    pytest.param(
        steps("delete: {kind: Pod, name: web-0}"),
        's.yaml: steps[0].delete.name: Pod "default/web-0" does not exist at this point',
        id="delete-unknown-pod",
    ),
    pytest.param(
        steps(create_pods("web"), "delete: {kind: Pod, name: web-1}", "delete: {kind: Pod, name: web-1}"),
        's.yaml: steps[2].delete.name: Pod "default/web-1" does not exist at this point (deleted by steps[1].delete)',
        id="delete-twice",
    ),
    pytest.param(
        steps(create_pods("web", extra=", namespace: kube-system"), "delete: {kind: Pod, name: web-1}"),
        's.yaml: steps[1].delete.name: Pod "default/web-1" does not exist at this point',
        id="delete-in-the-wrong-namespace",
    ),
    pytest.param(
        steps("fault: {nodeHeartbeatStop: {node: n-3}}"),
        's.yaml: steps[0].fault.nodeHeartbeatStop.node: no node "n-3" in the scenario '
        "(nodes, objects, create and createNodes steps make them)",
        id="heartbeat-stop-unknown-node",
    ),
    pytest.param(
        "name: x\n" + NODES + "faults: [{apiError: {agent: 'kubelet:n-9', verb: get}}]\n",
        's.yaml: faults[0].apiError.agent: no node "n-9" in the scenario '
        "(nodes, objects, create and createNodes steps make them)",
        id="kubelet-agent-unknown-node",
    ),
    pytest.param(
        "name: x\n" + NODES + "faults: [{containerStartFailure: {node: m-0}}]\n",
        's.yaml: faults[0].containerStartFailure.node: no node "m-0" in the scenario '
        "(nodes, objects, create and createNodes steps make them)",
        id="start-failure-unknown-node",
    ),
    # --- manifests ----------------------------------------------------------------------
    pytest.param(
        "name: x\nobjects:\n  - {apiVersion: v1, kind: Binding, metadata: {name: p}, target: {name: n-0}}\n",
        "s.yaml: objects[0].kind: a Binding cannot be created by a scenario: the scheduler binds pods "
        "(to place a pod yourself, set its spec.nodeName)",
        id="binding-manifest",
    ),
    pytest.param(
        f"name: x\nobjects: [{pod('p', extra=', annotations: {emulator.k8s.io/run-duration: soon}')}]\n",
        's.yaml: objects[0].metadata.annotations["emulator.k8s.io/run-duration"]: expected a duration like 5ms, '
        '1.5s, 2m or 1h30m, got "soon"',
        id="run-duration-in-a-manifest",
    ),
    pytest.param(
        steps(
            "createPods: {count: 1, namePrefix: w, template: {metadata: {annotations: "
            f"{{emulator.k8s.io/run-duration: -5s}}}}, spec: {POD}}}}}"
        ),
        's.yaml: steps[0].createPods.template.metadata.annotations["emulator.k8s.io/run-duration"]: '
        'durations cannot be negative, got "-5s"',
        id="run-duration-in-a-template",
    ),
    # --- limits and YAML ----------------------------------------------------------------
    pytest.param(
        "name: x\nnodes: [{count: 100000000000, namePrefix: n, template: {}}]\n",
        "s.yaml: nodes[0].count: expected an integer >= 1 and <= 100000, got 100000000000",
        id="huge-node-group",
    ),
    pytest.param(
        steps(create_pods("w", count=1_000_001)),
        "s.yaml: steps[0].createPods.count: expected an integer >= 1 and <= 1000000, got 1000001",
        id="huge-create-pods",
    ),
    pytest.param(
        "name: x\nnodes:\n  - count: 1\n    namePrefix: a\n    namePrefix: b\n    template: {}\n",
        's.yaml: invalid YAML at line 5, column 5: mapping key "namePrefix" already defined at line 4',
        id="duplicate-yaml-key",
    ),
]


def _unlocated(message: str) -> str:
    """The message without the ``:line:column`` after the file name (pinned in tests/inputs)."""
    return re.sub(r":\d+:\d+: ", ": ", message, count=1)


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_refused_at_load(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(text)
    assert _unlocated(str(info.value)) == message


VALID = [
    pytest.param(
        steps(create_pods("web"), "delete: {kind: Pod, selector: ''}", create_pods("web")), id="recreate-after-selector"
    ),
    pytest.param(
        steps(create_pods("web"), "delete: {kind: Pod, name: web-0}", create_pods("web", count=1)),
        id="recreate-the-deleted-one",
    ),
    pytest.param(
        steps(create_pods("web", count=10), f"create: [{pod('web-05')}, {pod('web-10')}]"), id="not-generated"
    ),
    pytest.param(steps(create_pods("web", count=20), create_pods("web-1")), id="prefix-extends-another"),
    pytest.param(
        steps(create_pods("web"), create_pods("web", extra=", namespace: team")), id="same-names-other-namespace"
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {pod('p', ns='team')}\n  - {ns('team')}\n", id="namespace-in-objects-comes-first"
    ),
    pytest.param(steps(f"create: [{ns('team')}, {pod('p', ns='team')}]"), id="namespace-then-pod-in-a-step"),
    pytest.param(f"name: x\nobjects: [{ns('kube-system')}]\n", id="precreated-namespace-written-explicitly"),
    pytest.param(steps("delete: {kind: Lease, name: n-0, namespace: kube-node-lease}"), id="delete-what-agents-create"),
    pytest.param(
        steps("fault: {nodeHeartbeatStop: {node: big-0}}", "createNodes: {count: 1, namePrefix: big, template: {}}"),
        id="fault-node-created-later",
    ),
    pytest.param("name: x\n" + NODES + "faults: [{apiError: {agent: 'kubelet:*'}}]\n", id="kubelet-wildcard"),
    pytest.param(
        f"name: x\nobjects:\n  - {pc('gold', 10)}\n  - {pc('base', 1, default=True)}\n"
        f"  - {pod('p', spec='{priorityClassName: gold, priority: 10, containers: [{name: c, image: i}]}')}\n"
        f"  - {pod('q', spec='{priority: 1, containers: [{name: c, image: i}]}')}\n",
        id="priorities-that-agree",
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {pc('a', 1, default=True)}\nsteps:\n"
        f"  - delete: {{kind: PriorityClass, name: a}}\n  - create: [{pc('b', 2, default=True)}]\n",
        id="global-default-replaced",
    ),
    pytest.param(
        f"name: x\nobjects:\n  - {pod('p', extra=', generateName: p-')}\n  - {{apiVersion: v1, kind: Pod, "
        f"metadata: {{generateName: p-}}, spec: {POD}}}\n  - {{apiVersion: v1, kind: Pod, metadata: "
        f"{{generateName: p-}}, spec: {POD}}}\n",
        id="generate-name",
    ),
    pytest.param(
        "name: x\nnodes:\n  - &g {count: 1, namePrefix: a, template: {}}\n  - {<<: *g, namePrefix: b}\n",
        id="yaml-merge-key-may-be-overridden",
    ),
]


@pytest.mark.parametrize("text", VALID)
def test_valid_at_load(text: str) -> None:
    load(text)


def test_objects_from_a_file_report_the_file_and_document(tmp_path: Path) -> None:
    (tmp_path / "pods.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        f"  - {pod('a')}\n  - {pod('b', extra=', annotations: {emulator.k8s.io/run-duration: 1 min}')}\n"
    )
    with pytest.raises(ScenarioError) as info:
        load("name: x\nobjects: [{file: pods.yaml}]\n", tmp_path)
    assert (info.value.file, info.value.path) == (
        str(tmp_path / "pods.yaml"),
        'items[1].metadata.annotations["emulator.k8s.io/run-duration"]',
    )
    (tmp_path / "pods.yaml").write_text(f"{pod('a')}\n---\n{pod('a')}\n")
    with pytest.raises(ScenarioError) as info:
        load("name: x\nobjects: [{file: pods.yaml}]\n", tmp_path)
    assert _unlocated(str(info.value)) == (
        f"{tmp_path / 'pods.yaml'}: documents[1].metadata.name: "
        'Pod "default/a" already exists (created by objects[0] (pods.yaml documents[0]))'
    )


def test_duplicate_key_in_a_referenced_manifest(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n")
    with pytest.raises(ScenarioError) as info:
        load("name: x\nobjects: [{file: pod.yaml}]\n", tmp_path)
    assert str(info.value) == (
        f'{tmp_path / "pod.yaml"}: invalid YAML at line 5, column 3: mapping key "name" already defined at line 4'
    )


def test_kubernetes_manifests_reject_duplicate_keys_too() -> None:
    from emulator.base.api.codec import ManifestError, load_manifests

    with pytest.raises(ManifestError, match='mapping key "image" already defined at line 1'):
        load_manifests(
            "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: a, image: b}]}}",
            source="m.yaml",
        )


def test_name_checks_never_list_the_generated_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The largest groups load at once: collisions are found by arithmetic on the names."""
    calls: list[int] = []
    real = timeline_module.generated_name

    def counting(prefix: str, i: int) -> str:
        calls.append(i)
        return real(prefix, i)

    monkeypatch.setattr(timeline_module, "generated_name", counting)
    monkeypatch.setattr(verbs_module, "generated_name", counting)
    monkeypatch.setattr(schema_cluster, "generated_name", counting)  # NodeGroup.name
    monkeypatch.setattr(schema_steps, "generated_name", counting)  # CreatePods.name
    text = (
        "name: x\nnodes: [{count: 100000, namePrefix: n, template: {}}]\nsteps:\n"
        f"  - {create_pods('web', count=1_000_000)}\n  - delete: {{kind: Pod, selector: ''}}\n"
        f"  - {create_pods('web', count=1_000_000)}\n  - delete: {{kind: Node, name: n-99999}}\n"
        f"  - cordon: {{node: n-99998}}\n"
    )
    load(text)
    assert len(calls) <= 10


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("name: x\n", ["default", "kube-node-lease", "kube-public", "kube-system"], id="precreated"),
        pytest.param(
            f"name: x\nobjects: [{pod('p', ns='team')}]\nsteps:\n  - {create_pods('w', extra=', namespace: batch')}\n",
            ["batch", "default", "kube-node-lease", "kube-public", "kube-system", "team"],
            id="referenced",
        ),
        pytest.param(
            f"name: x\nobjects: [{ns('team')}, {pod('p', ns='team')}, {ns('default')}]\n"
            f"steps:\n  - create: [{ns('batch')}, {pod('q', ns='batch')}]\n",
            ["kube-node-lease", "kube-public", "kube-system"],
            id="created-by-the-scenario-are-not",
        ),
    ],
)
def test_auto_namespaces(text: str, expected: list[str]) -> None:
    assert auto_namespaces(load(text)) == expected
