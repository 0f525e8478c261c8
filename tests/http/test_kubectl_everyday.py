"""What kubectl users do every day beyond the issue's session, against ``python -m emulator serve``.

One server for the module (``conftest.server``); expected output is upstream kubectl 1.32's
against a real cluster. Each test names the command that misbehaved before its fix: the
``create <kind>`` generators (their bodies are protobuf only), ``logs`` (an empty log, not a
NotFound), ``describe node``'s Lease (a MicroTime), ``get --raw`` of the health endpoints.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest
import yaml

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]


@pytest.mark.parametrize(
    ("args", "out"),
    [
        pytest.param(
            ("create", "deployment", "daily", "--image=registry.example.com/web:1.0", "--replicas=2", "--port=80"),
            "deployment.apps/daily created\n",
            id="deployment",
        ),
        pytest.param(
            ("create", "job", "once", "--image=registry.example.com/web:1.0", "--", "sleep", "5"),
            "job.batch/once created\n",
            id="job",
        ),
        pytest.param(
            ("create", "cronjob", "nightly", "--image=registry.example.com/web:1.0", "--schedule=0 3 * * *"),
            "cronjob.batch/nightly created\n",
            id="cronjob",
        ),
        pytest.param(
            ("create", "service", "clusterip", "daily-svc", "--tcp=80:8080"),
            "service/daily-svc created\n",
            id="service",
        ),
        pytest.param(
            ("create", "poddisruptionbudget", "daily", "--selector=app=daily", "--min-available=1"),
            "poddisruptionbudget.policy/daily created\n",
            id="pdb",
        ),
        pytest.param(
            ("create", "priorityclass", "daily-high", "--value=1000", "--description=daily"),
            "priorityclass.scheduling.k8s.io/daily-high created\n",
            id="priorityclass",
        ),
    ],
)
def test_create_generators(kubectl_server: Server, args: tuple[str, ...], out: str) -> None:
    """kubectl sends these bodies only as protobuf (they were 415 UnsupportedMediaType)."""
    assert ok(kubectl_server.kubectl(*args)) == out


def test_created_objects_are_what_the_flags_said(kubectl_server: Server) -> None:
    k = kubectl_server.kubectl
    ok(k("rollout", "status", "deployment/daily", "--timeout=60s", timeout=70))
    spec = "{.spec.replicas} {.spec.template.spec.containers[0].ports[0].containerPort}"
    assert ok(k("get", "deployment", "daily", "-o", f"jsonpath={spec}")) == "2 80"
    # the container's command is a field the Structs do not model (kept by the extras, not here)
    job = "{.spec.template.spec.containers[0].image} {.spec.template.spec.restartPolicy}"
    assert ok(k("get", "job", "once", "-o", f"jsonpath={job}")) == "registry.example.com/web:1.0 Never"
    assert ok(k("get", "cronjob", "nightly", "-o", "jsonpath={.spec.schedule}")) == "0 3 * * *"
    assert ok(k("get", "pdb", "daily", "-o", "jsonpath={.spec.minAvailable}")) == "1"
    assert ok(k("create", "job", "manual", "--from=cronjob/nightly")) == "job.batch/manual created\n"
    owner = ok(k("get", "job", "manual", "-o", "jsonpath={.metadata.ownerReferences[0].kind}"))
    assert owner == "CronJob"


def test_logs_of_a_container_that_wrote_nothing(kubectl_server: Server) -> None:
    """An emulated container writes nothing: upstream's answer for that is an empty log."""
    k = kubectl_server.kubectl
    ok(k("rollout", "status", "deployment/daily", "--timeout=60s", timeout=70))
    result = k("logs", "deployment/daily")
    assert ok(result) == ""
    assert re.fullmatch(r"Found 2 pods, using pod/daily-\S+\n", result.stderr), result.stderr
    pod = ok(k("get", "pods", "-l", "app=daily", "-o", "jsonpath={.items[0].metadata.name}"))
    assert failed(k("logs", pod, "-c", "nope")) == f"error: container nope is not valid for pod {pod}\n"
    previous = failed(k("logs", pod, "--previous"))
    assert previous == (
        f'Error from server (BadRequest): previous terminated container "web" in pod "{pod}" not found\n'
    )


def test_describe_node_reads_its_lease(kubectl_server: Server) -> None:
    out = ok(kubectl_server.kubectl("describe", "node", "worker-1"))
    assert "Failed to get lease" not in out
    lease = re.search(
        r"^Lease:\n  HolderIdentity:  (\S+)\n  AcquireTime:     (.+)\n  RenewTime:       (.+)$", out, re.M
    )
    assert lease, out
    assert lease.group(1) == "worker-1"
    assert re.fullmatch(r"\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000", lease.group(3)), lease.group(3)


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param("/healthz", "ok", id="healthz"),
        pytest.param("/livez/ping", "ok", id="livez-ping"),
        pytest.param("/readyz?verbose", "readyz check passed\n", id="readyz-verbose"),
    ],
)
def test_get_raw_health(kubectl_server: Server, path: str, want: str) -> None:
    assert ok(kubectl_server.kubectl("get", "--raw", path)).endswith(want)


@pytest.mark.parametrize(
    ("args", "out"),
    [
        pytest.param(("auth", "can-i", "create", "pods"), "yes\n", id="can-i"),
        pytest.param(("auth", "can-i", "get", "pods", "--subresource=log", "-n", "kube-system"), "yes\n", id="sub"),
        pytest.param(("auth", "can-i", "*", "*"), "yes\n", id="everything"),
    ],
)
def test_auth_can_i(kubectl_server: Server, args: tuple[str, ...], out: str) -> None:
    """No RBAC: the kubeconfig's user may do everything, as kind's cluster-admin may (these
    were a NotFound, kubectl printed it and exited 1)."""
    assert ok(kubectl_server.kubectl(*args)) == out


def test_auth_whoami(kubectl_server: Server) -> None:
    out = ok(kubectl_server.kubectl("auth", "whoami"))
    assert out.split("\n")[:3] == [
        "ATTRIBUTE   VALUE",
        "Username    kubernetes-admin",
        "Groups      [system:masters system:authenticated]",
    ]


def test_namespaces_are_active(kubectl_server: Server) -> None:
    out = ok(kubectl_server.kubectl("get", "namespaces", "default", "kube-system"))
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["NAME", "STATUS"],
        ["default", "Active"],
        ["kube-system", "Active"],
    ]


def test_diff_of_a_file_with_a_stale_status(kubectl_server: Server, tmp_path: Path) -> None:
    """kubectl diff sends the whole file (status included) in a dry-run patch; upstream drops
    the status of a main-resource write, so only the spec change shows (exit 1: a difference)."""
    k = kubectl_server.kubectl
    ok(k("rollout", "status", "deployment/daily", "--timeout=60s", timeout=70))
    live = yaml.safe_load(ok(k("get", "deployment", "daily", "-o", "yaml")))
    live["spec"]["replicas"] = 1
    live["status"] = {**live["status"], "replicas": 0}
    manifest = tmp_path / "daily.yaml"
    manifest.write_text(yaml.safe_dump(live))
    result = k("diff", "-f", str(manifest))
    assert result.returncode == 1, result.stderr
    changed = [line for line in result.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert [line.split() for line in changed if "replicas" in line] == [
        ["-", "replicas:", "2"],
        ["+", "replicas:", "1"],
    ]


def test_services_have_cluster_ips(kubectl_server: Server) -> None:
    """CLUSTER-IP read <none>: the store allocates from upstream's default 10.96.0.0/12."""
    k = kubectl_server.kubectl
    ok(k("create", "service", "clusterip", "ips", "--tcp=80:8080"))
    ip = ok(k("get", "service", "ips", "-o", "jsonpath={.spec.clusterIP}"))
    assert ipaddress.IPv4Address(ip) in ipaddress.IPv4Network("10.96.0.0/12")
    out = ok(k("describe", "service", "ips"))
    for label, value in [("IP Family Policy", "SingleStack"), ("IP Families", "IPv4"), ("IP", ip), ("IPs", ip)]:
        assert re.search(rf"^{label}:\s+{re.escape(value)}$", out, re.M), out
    ok(k("create", "service", "clusterip", "ips-headless", "--clusterip=None"))
    headless = ok(k("get", "service", "ips-headless"))
    assert headless.splitlines()[1].split()[:3] == ["ips-headless", "ClusterIP", "None"]


def test_describe_pod_lists_its_ips(kubectl_server: Server) -> None:
    """describe pod prints ``IPs:`` from ``status.podIPs`` (it read <none>)."""
    k = kubectl_server.kubectl
    ok(k("rollout", "status", "deployment/daily", "--timeout=60s", timeout=70))
    pod = ok(k("get", "pods", "-l", "app=daily", "-o", "jsonpath={.items[0].metadata.name}"))
    ip = ok(k("get", "pod", pod, "-o", "jsonpath={.status.podIP}"))
    out = ok(k("describe", "pod", pod))
    assert re.search(rf"^IPs:\n  IP:\s+{re.escape(ip)}$", out, re.M), out


def test_the_kubernetes_service(kubectl_server: Server) -> None:
    """Every cluster's ``default/kubernetes`` Service (the first thing ``kubectl get svc``
    shows on a new cluster), its target the API server's own port."""
    row = ok(kubectl_server.kubectl("get", "service", "kubernetes")).splitlines()[1].split()
    assert row[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    port = ok(kubectl_server.kubectl("get", "service", "kubernetes", "-o", "jsonpath={.spec.ports[0].targetPort}"))
    assert kubectl_server.url.endswith(f":{port}")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(("exec", "{pod}", "--", "ls"), "Error from server (BadRequest): exec is not supported", id="exec"),
        pytest.param(
            ("port-forward", "{pod}", "8080:80"),
            "error: error upgrading connection: port forwarding is not supported",
            id="port-forward",
        ),
    ],
)
def test_streams_say_why_they_cannot_run(kubectl_server: Server, args: tuple[str, ...], said: str) -> None:
    """No process runs in an emulated container: a clear refusal, not a bare NotFound."""
    k = kubectl_server.kubectl
    ok(k("rollout", "status", "deployment/daily", "--timeout=60s", timeout=70))
    pod = ok(k("get", "pods", "-l", "app=daily", "-o", "jsonpath={.items[0].metadata.name}"))
    node = ok(k("get", "pod", pod, "-o", "jsonpath={.spec.nodeName}"))
    err = failed(k(*(a.format(pod=pod) for a in args)))
    assert err.splitlines()[-1] == f"{said}: the emulated kubelet on {node} runs no processes", err


GHOST_POD = """apiVersion: v1
kind: Pod
metadata: {name: stranded, labels: {app: stranded}}
spec:
  nodeName: ghost-node
  terminationGracePeriodSeconds: 3600
  containers: [{name: app, image: registry.example.com/web:1.0}]
"""


def test_force_delete_needs_no_kubelet(kubectl_server: Server) -> None:
    """A pod bound to a node no kubelet runs (a partitioned or dead node): a plain delete only
    marks it terminating; ``--force --grace-period=0`` (DeleteOptions gracePeriodSeconds 0,
    upstream ``pkg/registry/core/pod/strategy.go`` ``CheckGracefulDelete``) removes it at once."""
    k = kubectl_server.kubectl
    assert ok(k("create", "-f", "-", input=GHOST_POD)) == "pod/stranded created\n"
    ok(k("delete", "pod", "stranded", "--wait=false"))
    assert ok(k("get", "pod", "stranded", "-o", "jsonpath={.metadata.deletionGracePeriodSeconds}")) == "3600"
    out = k("delete", "pod", "stranded", "--force", "--grace-period=0")
    assert re.fullmatch(r'pod "stranded" force deleted( from default namespace)?\n', ok(out)), out.stdout
    assert out.stderr.startswith("Warning: Immediate deletion does not wait for confirmation"), out.stderr
    gone = failed(k("get", "pod", "stranded"))
    assert gone.strip() == 'Error from server (NotFound): pods "stranded" not found'
