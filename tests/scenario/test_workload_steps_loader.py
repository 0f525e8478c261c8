"""The workload steps and conditions at load: ``scale``, ``update``, ``drain``, ``delete``'s
``propagationPolicy``, ``waitFor`` of ``workloadsReady``/``jobsComplete`` and the
expectations of the same names: each bad input is one ``ScenarioError`` with its path, and
the good forms load into the documented Structs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.schema import (
    DRAIN_TIMEOUT,
    Delete,
    Drain,
    JobsComplete,
    Scale,
    Scenario,
    Update,
    WaitFor,
    WorkloadsReady,
)

ROOT = Path(__file__).resolve().parents[2]
NODES = "nodes: [{count: 2, namePrefix: n, template: {}}]\n"
TEMPLATE = "{metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: busybox}]}}"
DEPLOYMENT = (
    "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, "
    f"spec: {{replicas: 2, selector: {{matchLabels: {{app: web}}}}, template: {TEMPLATE}}}}}"
)
OBJECTS = f"objects:\n  - {DEPLOYMENT}\n"


def load(text: str) -> Scenario:
    return load_scenario_text(text, source="s.yaml", base_dir=Path("."))


def steps(*lines: str) -> str:
    return "name: x\n" + NODES + OBJECTS + "steps:\n" + "".join(f"  - {line}\n" for line in lines)


def _unlocated(message: str) -> str:
    return re.sub(r":\d+:\d+: ", ": ", message, count=1)


REFUSED = [
    pytest.param(
        steps("scale: {kind: Job, name: j, replicas: 2}"),
        's.yaml: steps[0].scale.kind: unsupported kind "Job"; expected one of: Deployment, ReplicaSet, StatefulSet; '
        "a Job has no scale subresource: change spec.parallelism with an update step",
        id="scale-job",
    ),
    pytest.param(
        steps("scale: {kind: Deployment, name: web, replicas: -1}"),
        "s.yaml: steps[0].scale.replicas: expected an integer >= 0 and <= 2147483647, got -1",
        id="scale-negative",
    ),
    pytest.param(
        steps("scale: {kind: Deployment, name: web}"),
        "s.yaml: steps[0].scale.replicas: required field missing",
        id="scale-no-replicas",
    ),
    pytest.param(
        steps("scale: {kind: Deployment, name: api, replicas: 1}"),
        's.yaml: steps[0].scale.name: Deployment "default/api" does not exist at this point',
        id="scale-missing-object",
    ),
    pytest.param(
        steps("update: {kind: Deployment, name: web, patch: {}}"),
        "s.yaml: steps[0].update.patch: expected a non-empty merge patch like {spec: {replicas: 3}}",
        id="update-empty-patch",
    ),
    pytest.param(
        steps("update: {kind: Deployment, name: web, patch: [1]}"),
        "s.yaml: steps[0].update.patch: expected a mapping, got a list",
        id="update-patch-not-a-mapping",
    ),
    pytest.param(
        steps("update: {kind: Deployment, name: web, patch: {metadata: {name: other}}}"),
        "s.yaml: steps[0].update.patch.metadata.name: metadata.name cannot be changed by a patch "
        "(name the object with kind and name)",
        id="update-renames",
    ),
    pytest.param(
        steps("update: {kind: Binding, name: web, patch: {a: 1}}"),
        's.yaml: steps[0].update.kind: unsupported kind "Binding"; expected one of: ',
        id="update-binding",
    ),
    pytest.param(
        steps("update: {kind: Deployment, name: web, patch: {spec: {replicas: -2}}}"),
        "s.yaml: steps[0].update.patch: the patched Deployment is invalid: spec.replicas: Invalid value: -2: "
        "must be greater than or equal to 0",
        id="update-invalid-result",
    ),
    pytest.param(
        steps("update: {kind: Deployment, name: web, patch: {spec: {replicas: many}}}"),
        "s.yaml: steps[0].update.patch: the patched Deployment is invalid: spec.replicas: Expected `int | null`, "
        "got `str`",
        id="update-wrong-type",
    ),
    pytest.param(
        steps("drain: {node: n-7}"),
        's.yaml: steps[0].drain.node: Node "n-7" does not exist at this point',
        id="drain-missing-node",
    ),
    pytest.param(
        steps("drain: {node: n-0, timeout: 0s}"),
        's.yaml: steps[0].drain.timeout: expected a duration > 0s, got "0s"',
        id="drain-zero-timeout",
    ),
    pytest.param(
        steps("delete: {kind: Deployment, name: web, propagationPolicy: Cascade}"),
        's.yaml: steps[0].delete.propagationPolicy: expected "Background", "Foreground" or "Orphan", got "Cascade"',
        id="delete-propagation",
    ),
    pytest.param(
        steps("waitFor: {condition: podsRunning, kind: Deployment, timeout: 1m}"),
        "s.yaml: steps[0].waitFor.kind: only with condition workloadsReady",
        id="wait-kind-on-pods",
    ),
    pytest.param(
        steps("waitFor: {condition: workloadsReady, kind: Job, timeout: 1m}"),
        's.yaml: steps[0].waitFor.kind: unsupported kind "Job"; expected one of: Deployment, ReplicaSet, '
        "StatefulSet, DaemonSet",
        id="wait-workloads-kind",
    ),
    pytest.param(
        steps("waitFor: {condition: workloadsReady, count: 2, timeout: 1m}"),
        "s.yaml: steps[0].waitFor.count: not with workloadsReady (every selected object must be ready)",
        id="wait-workloads-count",
    ),
    pytest.param(
        "name: x\nexpect:\n  - workloadsReady: {kind: Pod}\n",
        's.yaml: expect[0].workloadsReady.kind: unsupported kind "Pod"; expected one of: Deployment, ReplicaSet, '
        "StatefulSet, DaemonSet",
        id="expect-workloads-kind",
    ),
    pytest.param(
        "name: x\nexpect:\n  - jobsComplete: {count: -1}\n",
        's.yaml: expect[0].jobsComplete.count: expected an integer >= 0 or "all", got -1',
        id="expect-jobs-count",
    ),
]


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_refused(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(text)
    got = _unlocated(str(info.value))
    assert got.startswith(message) if message.endswith(": ") else got == message


def test_the_good_forms_load() -> None:
    scenario = load(
        steps(
            "scale: {kind: Deployment, name: web, replicas: 5}",
            "update: {kind: Deployment, name: web, patch: {spec: {template: {metadata: {labels: {v: '2'}}}}}}",
            "drain: {node: n-0, gracePeriod: 10s}",
            "waitFor: {condition: workloadsReady, kind: Deployment, name: web, timeout: 5m}",
            "waitFor: {condition: jobsComplete, count: 2, selector: 'app=batch', timeout: 5m}",
            "delete: {kind: Deployment, name: web, propagationPolicy: Orphan}",
        )
        + "expect:\n  - workloadsReady: {}\n  - jobsComplete: {count: all, selector: 'app=batch'}\n"
    )
    scale, update, drain, ready, jobs, delete = scenario.steps
    assert scale == Scale(kind="Deployment", name="web", namespace="default", replicas=5)
    assert isinstance(update, Update)
    assert update.namespace == "default"
    assert update.patch == {"spec": {"template": {"metadata": {"labels": {"v": "2"}}}}}
    assert drain == Drain(node="n-0", grace_period=10.0, timeout=DRAIN_TIMEOUT)
    assert isinstance(ready, WaitFor)
    assert (ready.condition, ready.kind, ready.name) == ("workloadsReady", "Deployment", "web")
    assert isinstance(jobs, WaitFor)
    assert (jobs.condition, jobs.count) == ("jobsComplete", 2)
    assert isinstance(delete, Delete)
    assert delete.propagation_policy == "Orphan"
    everything, complete = scenario.expect
    assert everything == WorkloadsReady()
    assert isinstance(complete, JobsComplete)
    assert complete.count == "all"


def test_validate_exits_2_with_the_path(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(steps("scale: {kind: Job, name: j, replicas: 2}"))
    out = subprocess.run(
        [sys.executable, "-m", "emulator", "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert out.returncode == 2
    assert _unlocated(out.stderr).startswith(f'error: {path}: steps[0].scale.kind: unsupported kind "Job"')
