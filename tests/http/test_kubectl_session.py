"""A whole kubectl session against ``python -m emulator serve``, asserted as a user reads it.

One server for the module (``conftest.server``): the tests run in file order and share its
state, like the session of issue 12 — apply the ``web`` Deployment + Service + PDB, watch the
rollout, look at it, scale, cordon, drain against the budget, label, describe, read the
events, use every patch flavour and server-side apply, be refused, then delete with garbage
collection. Expected output is upstream kubectl 1.32's against a real cluster: messages from
``kubectl/pkg/cmd`` and the apiserver's ``Status`` errors, columns from upstream's printers.
Every wait is kubectl's own (``rollout status``, ``wait``) or a poll with a deadline.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.http.conftest import DATA, DEFAULT_SPEED, KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]

WEB = DATA / "web.yaml"
NODES = ["worker-0", "worker-1", "worker-2", "worker-3"]
KUBELET_VERSION = "v1.34.0-emulated"
IP = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")
IMAGES = "jsonpath={.items[*].spec.containers[0].image}"
QUANTITY_PATTERN = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


# --- helpers ------------------------------------------------------------------------------


def table(text: str) -> list[dict[str, str]]:
    """kubectl's columns as dicts keyed by header. kubectl pads with tabwriter, so every cell
    starts where its header starts; headers may hold one space (``NOMINATED NODE``)."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines, "no output"
    header = lines[0]
    spans = [(m.group(), m.start()) for m in re.finditer(r"\S+(?: \S+)*", header)]
    rows = []
    for line in lines[1:]:
        row = {}
        for i, (name, start) in enumerate(spans):
            end = spans[i + 1][1] if i + 1 < len(spans) else None
            row[name] = line[start:end].strip()
        rows.append(row)
    return rows


def headers(text: str) -> list[str]:
    return re.findall(r"\S+(?: \S+)*", text.splitlines()[0])


def watch_rows(lines: list[str]) -> list[list[str]]:
    """The rows ``kubectl get -w`` printed after its header, split on blanks: each watch event
    is printed on its own, so its cells need not line up with the header (a pod's cells hold
    no blanks while RESTARTS is 0)."""
    return [line.split() for line in lines[1:]]


def poll(check: Callable[[], bool], *, timeout: float = 30.0, what: str) -> None:
    """Re-run ``check`` (itself a kubectl call, so it paces itself) until true or the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def names(server: Server, *args: str) -> list[str]:
    """``kubectl get ... -o name``: ``["pod/web-…", …]``."""
    return ok(server.kubectl("get", *args, "-o", "name")).split()


def web_pods(server: Server, *, terminating: bool = False) -> list[dict[str, Any]]:
    """The web pods as JSON, without the terminating ones unless asked."""
    items: list[dict[str, Any]] = json.loads(ok(server.kubectl("get", "pods", "-l", "app=web", "-o", "json")))["items"]
    return [p for p in items if terminating or not p["metadata"].get("deletionTimestamp")]


class Lines:
    """The stdout of a long-running kubectl, read by a thread into a queue."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, name="kubectl-stdout", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Kill kubectl, let the reader reach EOF, close the pipes."""
        self.proc.kill()
        self.proc.wait()
        self._thread.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def until(self, done: Callable[[list[str]], bool], *, timeout: float = 30.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while not done(self.seen):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail("timed out; kubectl printed:\n" + "\n".join(self.seen))
            try:
                line = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                pytest.fail("kubectl exited; it printed:\n" + "\n".join(self.seen) + "\n" + stderr)
            self.seen.append(line)
        return self.seen


@pytest.fixture(scope="module")
def kubectl(kubectl_server: Server) -> Server:
    return kubectl_server


@pytest.fixture(scope="module")
def applied(kubectl: Server) -> subprocess.CompletedProcess[str]:
    """``kubectl apply -f web.yaml`` once for the module; later tests rely on ``web``."""
    return kubectl.kubectl("apply", "-f", str(WEB))


@pytest.fixture
def rolled_out(kubectl: Server, applied: subprocess.CompletedProcess[str]) -> Server:
    ok(applied)
    ok(kubectl.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=70))
    return kubectl


# --- the cluster --------------------------------------------------------------------------


def test_version_prints_the_server_version(kubectl: Server) -> None:
    result = kubectl.kubectl("version")
    out = ok(result)
    assert re.search(r"^Client Version: v1\.\d+\.\d+", out, re.M), out
    assert re.search(r"^Server Version: v1\.\d+\.\d+", out, re.M), out
    assert "exceeds the supported minor version skew" not in result.stderr


def test_get_nodes_shows_four_ready_workers(kubectl: Server) -> None:
    out = ok(kubectl.kubectl("get", "nodes"))
    assert headers(out) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    rows = table(out)
    assert [r["NAME"] for r in rows] == NODES
    assert {(r["STATUS"], r["ROLES"], r["VERSION"]) for r in rows} == {("Ready", "<none>", KUBELET_VERSION)}
    assert all(re.fullmatch(r"\d+[smhd]\S*", r["AGE"]) for r in rows), rows


def test_get_nodes_by_label_and_short_name(kubectl: Server) -> None:
    assert names(kubectl, "no", "-l", "topology.kubernetes.io/zone=zone-b") == ["node/worker-1", "node/worker-3"]


@pytest.mark.parametrize(
    ("name", "shortnames", "apiversion", "namespaced", "kind"),
    [
        pytest.param("pods", "po", "v1", "true", "Pod", id="pods"),
        pytest.param("nodes", "no", "v1", "false", "Node", id="nodes"),
        pytest.param("bindings", "", "v1", "true", "Binding", id="bindings"),
        pytest.param("events", "ev", "v1", "true", "Event", id="events"),
        pytest.param("services", "svc", "v1", "true", "Service", id="services"),
        pytest.param("deployments", "deploy", "apps/v1", "true", "Deployment", id="deployments"),
        pytest.param("replicasets", "rs", "apps/v1", "true", "ReplicaSet", id="replicasets"),
        pytest.param("poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget", id="pdb"),
        pytest.param("priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass", id="priorityclasses"),
    ],
)
def test_api_resources_lists_upstream_rows(
    kubectl: Server, name: str, shortnames: str, apiversion: str, namespaced: str, kind: str
) -> None:
    out = ok(kubectl.kubectl("api-resources"))
    assert headers(out) == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = {
        r["NAME"]: r for r in table(out) if r["APIVERSION"] != "metrics.k8s.io/v1beta1"
    }  # its pods, nodes: PodMetrics...
    assert rows[name] == {
        "NAME": name,
        "SHORTNAMES": shortnames,
        "APIVERSION": apiversion,
        "NAMESPACED": namespaced,
        "KIND": kind,
    }


# --- apply, rollout, look -----------------------------------------------------------------


def test_apply_creates_deployment_service_and_budget(applied: subprocess.CompletedProcess[str]) -> None:
    assert ok(applied).splitlines() == [
        "deployment.apps/web created",
        "service/web created",
        "poddisruptionbudget.policy/web created",
    ]


def test_rollout_status_reports_success(kubectl: Server, applied: subprocess.CompletedProcess[str]) -> None:
    ok(applied)
    out = ok(kubectl.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=70))
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'


def test_apply_again_is_unchanged(rolled_out: Server) -> None:
    # A PodDisruptionBudget is "configured" on every re-apply, against upstream too: its
    # spec.selector's patch strategy is "replace", and kubectl's three-way strategic merge
    # always puts a replace-strategy map in the patch, equal or not, so the patch is never
    # empty (the same patch changes nothing server-side).
    assert ok(rolled_out.kubectl("apply", "-f", str(WEB))).splitlines() == [
        "deployment.apps/web unchanged",
        "service/web unchanged",
        "poddisruptionbudget.policy/web configured",
    ]


def test_get_deployment_columns(rolled_out: Server) -> None:
    out = ok(rolled_out.kubectl("get", "deployments"))
    assert headers(out) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    (row,) = [r for r in table(out) if r["NAME"] == "web"]
    assert (row["READY"], row["UP-TO-DATE"], row["AVAILABLE"]) == ("3/3", "3", "3")


def test_get_pods_wide_fills_ip_and_node(rolled_out: Server) -> None:
    out = ok(rolled_out.kubectl("get", "pods", "-l", "app=web", "-o", "wide"))
    assert headers(out) == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    rows = table(out)
    assert len(rows) == 3
    for row in rows:
        assert row["NAME"].startswith("web-")
        assert (row["READY"], row["STATUS"], row["RESTARTS"]) == ("1/1", "Running", "0")
        assert IP.match(row["IP"]), row
        assert row["NODE"] in NODES
        assert (row["NOMINATED NODE"], row["READINESS GATES"]) == ("<none>", "<none>")


def test_get_all_namespaces_shows_the_namespace_column(rolled_out: Server) -> None:
    out = ok(rolled_out.kubectl("get", "pods", "-A"))
    assert headers(out)[:2] == ["NAMESPACE", "NAME"]
    by_ns = {(r["NAMESPACE"], r["NAME"].split("-")[0]) for r in table(out)}
    assert {("default", "web"), ("kube-system", "log")} <= by_ns


def test_get_service_and_pdb(rolled_out: Server) -> None:
    # every cluster has the API server's own default/kubernetes Service
    assert names(rolled_out, "svc,pdb") == ["service/kubernetes", "service/web", "poddisruptionbudget.policy/web"]
    spec = json.loads(ok(rolled_out.kubectl("get", "svc", "web", "-o", "json")))["spec"]
    assert spec["ports"][0]["port"] == 80


@pytest.mark.parametrize(
    ("selector", "count"),
    [
        pytest.param("app=web", 3, id="equality"),
        pytest.param("app in (web,nothing)", 3, id="set-in"),
        pytest.param("app=web,tier=frontend", 3, id="and"),
        pytest.param("app=web,tier!=frontend", 0, id="not-equal"),
        pytest.param("app notin (web)", 0, id="notin-default-namespace"),
    ],
)
def test_label_selectors(rolled_out: Server, selector: str, count: int) -> None:
    assert len(names(rolled_out, "pods", "-l", selector)) == count


def test_field_selector_by_node(rolled_out: Server) -> None:
    pods = web_pods(rolled_out)
    node = pods[0]["spec"]["nodeName"]
    expected = sorted(f"pod/{p['metadata']['name']}" for p in pods if p["spec"]["nodeName"] == node)
    assert sorted(names(rolled_out, "pods", "-l", "app=web", "--field-selector", f"spec.nodeName={node}")) == expected
    everywhere = names(rolled_out, "pods", "-A", "--field-selector", f"spec.nodeName={node},status.phase=Running")
    assert any(n.startswith("pod/log-agent-") for n in everywhere), everywhere


def test_output_formats(rolled_out: Server) -> None:
    listed = json.loads(ok(rolled_out.kubectl("get", "pods", "-l", "app=web", "-o", "json")))
    assert listed["kind"] == "List"
    assert {p["kind"] for p in listed["items"]} == {"Pod"}
    name = listed["items"][0]["metadata"]["name"]
    as_yaml = yaml.safe_load(ok(rolled_out.kubectl("get", "pod", name, "-o", "yaml")))
    assert (as_yaml["apiVersion"], as_yaml["kind"], as_yaml["metadata"]["name"]) == ("v1", "Pod", name)
    assert as_yaml["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    phase = ok(rolled_out.kubectl("get", "pod", name, "-o", "jsonpath={.status.phase}/{.spec.containers[0].name}"))
    assert phase == "Running/web"
    images = ok(rolled_out.kubectl("get", "pods", "-l", "app=web", "-o", IMAGES))
    assert images.split() == ["registry.example.com/web:1.0"] * 3


def test_get_pods_watch_sees_a_scale_up(rolled_out: Server) -> None:
    before = {n.removeprefix("pod/") for n in names(rolled_out, "pods", "-l", "app=web")}
    lines = Lines(rolled_out.kubectl_popen("get", "pods", "-l", "app=web", "-w"))
    try:
        lines.until(lambda seen: len(seen) >= 1 + len(before))  # the header and the listed rows
        assert headers(lines.seen[0]) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert ok(rolled_out.kubectl("scale", "deployment/web", "--replicas=5")) == "deployment.apps/web scaled\n"

        def two_new_running(seen: list[str]) -> bool:
            running = {row[0] for row in watch_rows(seen) if row[2] == "Running" and row[0] not in before}
            return len(running) >= 2

        lines.until(two_new_running)
        assert {row[2] for row in watch_rows(lines.seen)} <= {"Pending", "ContainerCreating", "Running"}
        assert all(len(row) == 5 for row in watch_rows(lines.seen)), lines.seen
        assert not any(line.startswith("NAME") for line in lines.seen[1:]), "a second header: events were not Tables"
    finally:
        lines.close()
    ok(rolled_out.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=70))
    assert ok(rolled_out.kubectl("scale", "deployment/web", "--replicas=3")) == "deployment.apps/web scaled\n"
    poll(lambda: len(web_pods(rolled_out, terminating=True)) == 3, what="web back to 3 pods, none terminating")


def test_get_single_pod_watch_skips_the_listed_row(rolled_out: Server) -> None:
    name = web_pods(rolled_out)[0]["metadata"]["name"]
    lines = Lines(rolled_out.kubectl_popen("get", "pod", name, "-w"))
    try:
        lines.until(lambda seen: len(seen) >= 2)
        ok(rolled_out.kubectl("annotate", "pod", name, "watched=yes"))
        lines.until(lambda seen: len(seen) >= 3)
        assert [row[0] for row in watch_rows(lines.seen)] == [name, name]
    finally:
        lines.close()


# --- nodes: cordon, drain -----------------------------------------------------------------


def node_status(server: Server, node: str) -> str:
    return table(ok(server.kubectl("get", "node", node)))[0]["STATUS"]


def test_cordon_and_uncordon(kubectl: Server) -> None:
    assert ok(kubectl.kubectl("cordon", "worker-3")) == "node/worker-3 cordoned\n"
    assert node_status(kubectl, "worker-3") == "Ready,SchedulingDisabled"
    assert ok(kubectl.kubectl("cordon", "worker-3")) == "node/worker-3 already cordoned\n"
    assert ok(kubectl.kubectl("uncordon", "worker-3")) == "node/worker-3 uncordoned\n"
    assert node_status(kubectl, "worker-3") == "Ready"
    unschedulable = ok(kubectl.kubectl("get", "node", "worker-3", "-o", "jsonpath={.spec.unschedulable}"))
    assert unschedulable == ""


def test_label_and_taint_a_node(kubectl: Server) -> None:
    assert ok(kubectl.kubectl("label", "node", "worker-0", "disk=ssd")) == "node/worker-0 labeled\n"
    assert names(kubectl, "nodes", "-l", "disk=ssd") == ["node/worker-0"]
    tainted = kubectl.kubectl("taint", "nodes", "worker-0", "dedicated=batch:NoSchedule")
    assert ok(tainted) == "node/worker-0 tainted\n"
    assert field(ok(kubectl.kubectl("describe", "node", "worker-0")), "Taints") == "dedicated=batch:NoSchedule"
    untainted = kubectl.kubectl("taint", "nodes", "worker-0", "dedicated=batch:NoSchedule-")
    assert ok(untainted) == "node/worker-0 untainted\n"
    assert field(ok(kubectl.kubectl("describe", "node", "worker-0")), "Taints") == "<none>"
    assert ok(kubectl.kubectl("label", "node", "worker-0", "disk-")) == "node/worker-0 unlabeled\n"


def test_drain_is_held_by_the_budget_then_allowed(rolled_out: Server) -> None:
    node = web_pods(rolled_out)[0]["spec"]["nodeName"]
    on_node = sorted(p["metadata"]["name"] for p in web_pods(rolled_out) if p["spec"]["nodeName"] == node)
    drain = ("drain", node, "--ignore-daemonsets", "--delete-emptydir-data")

    blocked = rolled_out.kubectl(*drain, "--timeout=7s", timeout=40)
    err = failed(blocked)
    assert f"node/{node} cordoned" in blocked.stdout
    assert "Warning: ignoring DaemonSet-managed Pods: kube-system/log-agent-" in blocked.stdout + err
    for pod in on_node:
        assert f"evicting pod default/{pod}\n" in blocked.stdout
        assert (
            f'error when evicting pods/"{pod}" -n "default" (will retry after 5s): '
            "Cannot evict pod as it would violate the pod's disruption budget.\n"
        ) in err
        assert f'error when evicting pods/"{pod}" -n "default": global timeout reached: 7s' in err
    assert f'error: unable to drain node "{node}"' in err
    assert sorted(p["metadata"]["name"] for p in web_pods(rolled_out) if p["spec"]["nodeName"] == node) == on_node
    assert node_status(rolled_out, node) == "Ready,SchedulingDisabled"

    patched = rolled_out.kubectl("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"maxUnavailable":1}}')
    assert ok(patched) == "poddisruptionbudget.policy/web patched\n"
    allowed = rolled_out.kubectl(*drain, "--timeout=60s", timeout=90)
    out = ok(allowed)
    assert f"node/{node} already cordoned" in out
    for pod in on_node:
        assert f"pod/{pod} evicted\n" in out
    assert out.endswith(f"node/{node} drained\n")

    ok(rolled_out.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=70))
    assert names(rolled_out, "pods", "-l", "app=web", "--field-selector", f"spec.nodeName={node}") == []
    left = names(rolled_out, "pods", "-n", "kube-system", "--field-selector", f"spec.nodeName={node}")
    assert len(left) == 1
    assert left[0].startswith("pod/log-agent-")
    assert ok(rolled_out.kubectl("uncordon", node)) == f"node/{node} uncordoned\n"


# --- metadata, describe, events -----------------------------------------------------------


def test_label_and_annotate(rolled_out: Server) -> None:
    name = web_pods(rolled_out)[0]["metadata"]["name"]
    assert ok(rolled_out.kubectl("label", "pod", name, "canary=true")) == f"pod/{name} labeled\n"
    assert names(rolled_out, "pods", "-l", "canary=true") == [f"pod/{name}"]
    out = ok(rolled_out.kubectl("get", "pods", "-l", "canary", "--show-labels"))
    assert "canary=true" in table(out)[0]["LABELS"]
    refused = rolled_out.kubectl("label", "pod", name, "canary=false")
    assert "'canary' already has a value (true), and --overwrite is false" in failed(refused)
    assert ok(rolled_out.kubectl("label", "pod", name, "canary-")) == f"pod/{name} unlabeled\n"
    assert names(rolled_out, "pods", "-l", "canary") == []
    assert ok(rolled_out.kubectl("annotate", "pod", name, "team=checkout")) == f"pod/{name} annotated\n"
    assert ok(rolled_out.kubectl("get", "pod", name, "-o", "jsonpath={.metadata.annotations.team}")) == "checkout"


def field(text: str, name: str) -> str:
    """The value of a top-level ``Name:   value`` line of ``kubectl describe``."""
    match = re.search(rf"^{re.escape(name)}:[ \t]*(.*)$", text, re.M)
    assert match, f"no {name!r} line in:\n{text}"
    return match.group(1).strip()


def test_describe_pod(rolled_out: Server) -> None:
    pod = web_pods(rolled_out)[0]
    name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
    out = ok(rolled_out.kubectl("describe", "pod", name))
    assert field(out, "Name") == name
    assert field(out, "Namespace") == "default"
    assert field(out, "Node").startswith(f"{node}/")
    assert field(out, "Status") == "Running"
    assert IP.match(field(out, "IP"))
    assert field(out, "Controlled By").startswith("ReplicaSet/web-")
    assert re.search(r"^\s+Image:\s+registry\.example\.com/web:1\.0$", out, re.M), out
    assert re.search(r"^Events:", out, re.M)
    scheduled = rf"Normal\s+Scheduled\s+(\S+)\s+default-scheduler\s+Successfully assigned default/{name} to {node}"
    event = re.search(scheduled, out)
    assert event, out
    # kubectl computes this age itself, from the wall clock. The served calendar is the serve's
    # start plus simulated time, so at --speed 1 the age reads true; at this module's
    # --speed 10 the event is stamped ahead of the wall clock and kubectl prints "<invalid>",
    # as it does for any timestamp in its future.
    age = r"\d+s|\d+m(\d+s)?" if DEFAULT_SPEED == 1 else r"<invalid>|\d+s|\d+m(\d+s)?"
    assert re.fullmatch(age, event.group(1)), event.group(1)


def test_describe_node(kubectl: Server) -> None:
    out = ok(kubectl.kubectl("describe", "node", "worker-0"))
    assert field(out, "Name") == "worker-0"
    assert field(out, "Roles") == "<none>"
    assert re.search(r"^\s+topology\.kubernetes\.io/zone=zone-a$", out, re.M), out
    assert field(out, "Unschedulable") == "false"
    assert re.search(r"^Capacity:\n(?:\s+.*\n)*?\s+cpu:\s+4$", out, re.M), out
    assert re.search(r"^\s+Kubelet Version:\s+" + re.escape(KUBELET_VERSION) + "$", out, re.M), out
    assert re.search(r"^Non-terminated Pods:\s+\(\d+ in total\)", out, re.M), out
    assert re.search(r"^\s+kube-system\s+log-agent-\S+", out, re.M), out


def test_get_events(rolled_out: Server) -> None:
    out = ok(rolled_out.kubectl("get", "events"))
    assert headers(out) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    scheduled = [r for r in table(out) if r["REASON"] == "Scheduled"]
    assert scheduled, out
    for row in scheduled:
        assert row["TYPE"] == "Normal"
        pod = row["OBJECT"].removeprefix("pod/")
        assert re.fullmatch(rf"Successfully assigned default/{re.escape(pod)} to worker-\d", row["MESSAGE"]), row
    reasons = {r["REASON"] for r in table(out)}
    assert {"ScalingReplicaSet", "SuccessfulCreate"} <= reasons, reasons

    for_web = ok(rolled_out.kubectl("events", "--for", "deployment/web"))
    assert headers(for_web) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    rows = table(for_web)
    assert rows, for_web
    assert {r["OBJECT"] for r in rows} == {"Deployment/web"}
    assert {r["REASON"] for r in rows} == {"ScalingReplicaSet"}


def test_set_image_rolls_out_a_new_replicaset(rolled_out: Server) -> None:
    image = "web=registry.example.com/web:1.1"
    assert ok(rolled_out.kubectl("set", "image", "deployment/web", image)) == "deployment.apps/web image updated\n"
    out = ok(rolled_out.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=70))
    assert out.splitlines()[-1] == 'deployment "web" successfully rolled out'
    replicasets = ok(rolled_out.kubectl("get", "rs", "-l", "app=web"))
    assert headers(replicasets) == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    counts = sorted((r["DESIRED"], r["CURRENT"], r["READY"]) for r in table(replicasets))
    assert counts == [("0", "0", "0"), ("3", "3", "3")]
    history = ok(rolled_out.kubectl("rollout", "history", "deployment/web"))
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"], history
    images = ok(rolled_out.kubectl("get", "pods", "-l", "app=web", "-o", IMAGES))
    assert images.split() == ["registry.example.com/web:1.1"] * 3


def test_get_all_sort_by_custom_columns_and_chunks(rolled_out: Server) -> None:
    everything = names(rolled_out, "all")
    for prefix in ("pod/web-", "service/web", "deployment.apps/web", "replicaset.apps/web-"):
        assert any(n.startswith(prefix) for n in everything), (prefix, everything)
    by_name = table(ok(rolled_out.kubectl("get", "pods", "-l", "app=web", "--sort-by=.metadata.name")))
    assert [r["NAME"] for r in by_name] == sorted(r["NAME"] for r in by_name)
    assert len(by_name) == 3
    columns = ok(
        rolled_out.kubectl("get", "pods", "-l", "app=web", "-o", "custom-columns=POD:.metadata.name,ON:.spec.nodeName")
    )
    assert headers(columns) == ["POD", "ON"]
    assert {r["ON"] for r in table(columns)} <= set(NODES)
    chunked = table(ok(rolled_out.kubectl("get", "pods", "-A", "--chunk-size=2")))
    whole = table(ok(rolled_out.kubectl("get", "pods", "-A")))
    assert [r["NAME"] for r in chunked] == [r["NAME"] for r in whole]
    assert len(whole) > 2


# --- writes: server-side apply, patch, replace, create, refusals --------------------------


def test_server_side_apply_and_a_conflict(kubectl: Server) -> None:
    manifest = str(DATA / "api-ssa.yaml")
    assert ok(kubectl.kubectl("apply", "--server-side", "-f", manifest)) == "deployment.apps/api serverside-applied\n"
    managers = ok(kubectl.kubectl("get", "deploy", "api", "-o", "jsonpath={.metadata.managedFields[*].manager}"))
    assert "kubectl" in managers.split()
    patched = kubectl.kubectl("patch", "deployment", "api", "--type=merge", "-p", '{"spec":{"replicas":2}}')
    assert ok(patched) == "deployment.apps/api patched\n"
    conflict = failed(kubectl.kubectl("apply", "--server-side", "-f", manifest))
    assert 'Apply failed with 1 conflict: conflict with "kubectl-patch"' in conflict
    assert ".spec.replicas" in conflict
    forced = kubectl.kubectl("apply", "--server-side", "--force-conflicts", "-f", manifest)
    assert ok(forced) == "deployment.apps/api serverside-applied\n"
    assert ok(kubectl.kubectl("get", "deploy", "api", "-o", "jsonpath={.spec.replicas}")) == "1"


def test_patch_in_three_flavours(kubectl: Server) -> None:
    out = ok(kubectl.kubectl("run", "patchme", "--image=registry.example.com/web:1.0", "--labels=app=patchme"))
    assert out == "pod/patchme created\n"
    strategic = '{"spec":{"containers":[{"name":"patchme","image":"registry.example.com/web:1.1"}]}}'
    assert ok(kubectl.kubectl("patch", "pod", "patchme", "-p", strategic)) == "pod/patchme patched\n"
    merge = '{"metadata":{"labels":{"stage":"two"}}}'
    assert ok(kubectl.kubectl("patch", "pod", "patchme", "--type=merge", "-p", merge)) == "pod/patchme patched\n"
    jsonpatch = '[{"op":"add","path":"/metadata/annotations","value":{"note":"json"}}]'
    assert ok(kubectl.kubectl("patch", "pod", "patchme", "--type=json", "-p", jsonpatch)) == "pod/patchme patched\n"
    pod = json.loads(ok(kubectl.kubectl("get", "pod", "patchme", "-o", "json")))
    assert [(c["name"], c["image"]) for c in pod["spec"]["containers"]] == [("patchme", "registry.example.com/web:1.1")]
    assert pod["metadata"]["labels"] == {"app": "patchme", "stage": "two"}
    assert pod["metadata"]["annotations"]["note"] == "json"
    again = kubectl.kubectl("patch", "pod", "patchme", "--type=merge", "-p", merge)
    assert ok(again) == "pod/patchme patched (no change)\n"
    test_fails = (
        '[{"op":"test","path":"/metadata/name","value":"x"},{"op":"add","path":"/metadata/labels/no","value":"x"}]'
    )
    bad = failed(kubectl.kubectl("patch", "pod", "patchme", "--type=json", "-p", test_fails))
    assert "invalid" in bad, bad  # upstream: 422 Invalid when a json-patch test fails
    assert "no" not in json.loads(ok(kubectl.kubectl("get", "pod", "patchme", "-o", "json")))["metadata"]["labels"]


SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: replace-me
  labels: {app: replace-me}
spec:
  selector: {app: replace-me}
  ports:
    - {port: 8080, protocol: TCP}
"""


def test_replace_and_a_stale_replace(kubectl: Server) -> None:
    # A Service: no controller writes it, so nothing but this test moves its resourceVersion.
    assert ok(kubectl.kubectl("apply", "-f", "-", input=SERVICE)) == "service/replace-me created\n"
    current = yaml.safe_load(ok(kubectl.kubectl("get", "svc", "replace-me", "-o", "yaml")))
    current["metadata"]["labels"]["replaced"] = "yes"
    first = kubectl.kubectl("replace", "-f", "-", input=yaml.safe_dump(current))
    assert ok(first) == "service/replace-me replaced\n"
    current["metadata"]["labels"]["replaced"] = "twice"
    stale = failed(kubectl.kubectl("replace", "-f", "-", input=yaml.safe_dump(current)))
    assert stale.strip() == (
        'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on '
        'services "replace-me": the object has been modified; please apply your changes to the latest '
        "version and try again"
    )
    assert ok(kubectl.kubectl("get", "svc", "replace-me", "-o", "jsonpath={.metadata.labels.replaced}")) == "yes"


def test_create_a_duplicate_is_already_exists(kubectl: Server) -> None:
    manifest = str(DATA / "solo-pod.yaml")
    assert ok(kubectl.kubectl("create", "-f", manifest)) == "pod/solo created\n"
    duplicate = failed(kubectl.kubectl("create", "-f", manifest))
    assert duplicate.strip() == (
        f'Error from server (AlreadyExists): error when creating "{manifest}": pods "solo" already exists'
    )


def test_a_bad_quantity_is_refused_and_nothing_is_created(kubectl: Server) -> None:
    manifest = str(DATA / "bad-quantity.yaml")
    err = failed(kubectl.kubectl("apply", "-f", manifest))
    assert err.strip() == (
        f'Error from server (BadRequest): error when creating "{manifest}": Pod in version "v1" cannot be '
        f"handled as a Pod: quantities must match the regular expression {QUANTITY_PATTERN}"
    )
    missing = failed(kubectl.kubectl("get", "pod", "bad-quantity"))
    assert missing.strip() == 'Error from server (NotFound): pods "bad-quantity" not found'


def test_an_invalid_pod_is_refused_and_nothing_is_created(kubectl: Server) -> None:
    manifest = str(DATA / "no-image.yaml")
    err = failed(kubectl.kubectl("create", "-f", manifest))
    assert err.strip() == 'The Pod "no-image" is invalid: spec.containers[0].image: Required value'
    assert "not found" in failed(kubectl.kubectl("get", "pod", "no-image"))


def test_delete_waits_until_the_pod_is_gone(kubectl: Server) -> None:
    if "pod/patchme" not in names(kubectl, "pods", "-l", "app=patchme"):
        ok(kubectl.kubectl("run", "patchme", "--image=registry.example.com/web:1.0", "--labels=app=patchme"))
    out = ok(kubectl.kubectl("delete", "pod", "patchme", "--timeout=60s", timeout=70))
    assert re.fullmatch(r'pod "patchme" deleted( from default namespace)?\n', out), out
    gone = failed(kubectl.kubectl("get", "pod", "patchme"))
    assert gone.strip() == 'Error from server (NotFound): pods "patchme" not found'


def test_delete_not_found(kubectl: Server) -> None:
    err = failed(kubectl.kubectl("delete", "pod", "nope"))
    assert err.strip() == 'Error from server (NotFound): pods "nope" not found'
    assert ok(kubectl.kubectl("delete", "pod", "nope", "--ignore-not-found")) == ""


def test_server_dry_run_persists_nothing(kubectl: Server) -> None:
    pod = (DATA / "solo-pod.yaml").read_text().replace("name: solo", "name: dry-run")
    out = ok(kubectl.kubectl("apply", "--dry-run=server", "-f", "-", input=pod))
    assert out == "pod/dry-run created (server dry run)\n"
    gone = failed(kubectl.kubectl("get", "pod", "dry-run"))
    assert gone.strip() == 'Error from server (NotFound): pods "dry-run" not found'


# --- deletes ------------------------------------------------------------------------------


def test_wait_for_delete(kubectl: Server) -> None:
    if "pod/solo" not in names(kubectl, "pods", "-l", "app=solo"):
        ok(kubectl.kubectl("create", "-f", str(DATA / "solo-pod.yaml")))
    out = ok(kubectl.kubectl("delete", "pod", "solo", "--wait=false"))
    assert re.fullmatch(r'pod "solo" deleted( from default namespace)?\n', out), out
    waited = kubectl.kubectl("wait", "--for=delete", "pod/solo", "--timeout=60s", timeout=70)
    assert ok(waited) in ("pod/solo condition met\n", "")
    gone = failed(kubectl.kubectl("get", "pod", "solo"))
    assert gone.strip() == 'Error from server (NotFound): pods "solo" not found'


def test_delete_deployment_collects_its_replicaset_and_pods(rolled_out: Server) -> None:
    pods = [f"pod/{p['metadata']['name']}" for p in web_pods(rolled_out)]
    assert names(rolled_out, "rs", "-l", "app=web")
    out = ok(rolled_out.kubectl("delete", "deployment", "web"))
    assert re.fullmatch(r'deployment\.apps "web" deleted( from default namespace)?\n', out), out
    ok(rolled_out.kubectl("wait", "--for=delete", *pods, "--timeout=60s", timeout=70))
    poll(lambda: names(rolled_out, "rs,pods", "-l", "app=web") == [], what="the ReplicaSet and pods collected")
    empty = rolled_out.kubectl("get", "rs,pods", "-l", "app=web")
    assert ok(empty) == ""
    assert empty.stderr.strip() == "No resources found in default namespace."
