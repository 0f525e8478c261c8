"""``kubectl set env``, ``rollout history`` and ``rollout undo`` against ``python -m emulator serve``.

The whole pod template is the template (issue 23): ``set env`` changes only a field the emulator
does not act on, and upstream still rolls out (``controller.ComputeHash`` over the whole
template, pkg/controller/controller_utils.go; ``EqualIgnoreHash``, pkg/controller/deployment/util):
generation 2, a new ReplicaSet, every pod replaced. The old pods never show the new env
(they were served their owner's current template before). ``rollout history`` lists the
ReplicaSets' ``deployment.kubernetes.io/revision``; ``rollout undo`` patches the Deployment's
template back from the previous ReplicaSet (kubectl's ``DeploymentRollbacker``).
"""

from __future__ import annotations

import json

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]


def _pods(server: Server) -> dict[str, list[str]]:
    out = json.loads(ok(server.kubectl("get", "pods", "-l", "app=envy", "-o", "json")))
    return {
        p["metadata"]["name"]: [f"{e['name']}={e.get('value', '')}" for e in p["spec"]["containers"][0].get("env", [])]
        for p in out["items"]
        if not p["metadata"].get("deletionTimestamp")
    }


def test_set_env_rolls_out_and_old_pods_keep_their_env(kubectl_server: Server) -> None:
    k = kubectl_server.kubectl
    ok(k("create", "deployment", "envy", "--image=registry.example.com/web:1.0", "--replicas=2"))
    ok(k("rollout", "status", "deployment/envy", "--timeout=60s", timeout=70))
    before = _pods(kubectl_server)
    assert len(before) == 2
    assert all(env == [] for env in before.values())
    assert ok(k("set", "env", "deployment/envy", "FOO=bar")) == "deployment.apps/envy env updated\n"
    assert ok(k("get", "deployment", "envy", "-o", "jsonpath={.metadata.generation}")) == "2"
    for name, env in _pods(kubectl_server).items():  # old pods, if still there, keep theirs
        assert env == (before.get(name, ["FOO=bar"]))
    ok(k("rollout", "status", "deployment/envy", "--timeout=60s", timeout=70))
    after = _pods(kubectl_server)
    assert not set(after) & set(before)
    assert all(env == ["FOO=bar"] for env in after.values())
    sets = ok(k("get", "replicasets", "-l", "app=envy", "-o", "jsonpath={.items[*].spec.replicas}"))
    assert sorted(sets.split()) == ["0", "2"]


def test_rollout_history_and_undo_of_a_deployment(kubectl_server: Server) -> None:
    k = kubectl_server.kubectl
    history = ok(k("rollout", "history", "deployment/envy"))
    assert history.splitlines()[0] == "deployment.apps/envy "
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    detail = ok(k("rollout", "history", "deployment/envy", "--revision=2"))
    assert "FOO:\tbar" in detail
    assert ok(k("rollout", "undo", "deployment/envy")) == "deployment.apps/envy rolled back\n"
    ok(k("rollout", "status", "deployment/envy", "--timeout=60s", timeout=70))
    assert all(env == [] for env in _pods(kubectl_server).values())
    history = ok(k("rollout", "history", "deployment/envy"))
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]


STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
        - name: db
          image: registry.example.com/web:1.0
          env: [{name: MODE, value: one}]
"""
DS = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
        - name: agent
          image: registry.example.com/web:1.0
          env: [{name: MODE, value: one}]
"""


def _revisions(server: Server, owner: str) -> list[tuple[str, str]]:
    out = json.loads(ok(server.kubectl("get", "controllerrevisions", "-o", "json")))
    return sorted(
        (str(r["revision"]), r["data"]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"])
        for r in out["items"]
        if r["metadata"]["ownerReferences"][0]["name"] == owner
    )


@pytest.mark.parametrize(
    ("manifest", "target", "label"), [(STS, "statefulset/db", "db"), (DS, "daemonset/agent", "agent")]
)
def test_rollout_history_and_undo_through_controller_revisions(
    kubectl_server: Server, manifest: str, target: str, label: str
) -> None:
    """Upstream's controllers keep each template as a ControllerRevision (``pkg/controller/history``);
    kubectl lists them for ``rollout history`` and patches one's ``data`` back for ``undo``."""
    k = kubectl_server.kubectl
    ok(k("apply", "-f", "-", input=manifest))
    ok(k("rollout", "status", target, "--timeout=60s", timeout=70))
    assert _revisions(kubectl_server, label) == [("1", "one")]
    ok(k("set", "env", target, "MODE=two"))
    ok(k("rollout", "status", target, "--timeout=60s", timeout=70))
    assert _revisions(kubectl_server, label) == [("1", "one"), ("2", "two")]
    table = ok(k("get", "controllerrevisions", "-l", f"app={label}"))
    assert table.splitlines()[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    kind = target.split("/")[0]
    assert f"{kind}.apps/{label}" in table
    history = ok(k("rollout", "history", target))
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    assert "MODE:\tone" in ok(k("rollout", "history", target, "--revision=1"))
    assert ok(k("rollout", "undo", target)) == f"{kind}.apps/{label} rolled back\n"
    ok(k("rollout", "status", target, "--timeout=60s", timeout=70))
    assert _revisions(kubectl_server, label) == [("2", "two"), ("3", "one")]
    pods = json.loads(ok(k("get", "pods", "-l", f"app={label}", "-o", "json")))["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert live
    assert all(p["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "one"}] for p in live)
