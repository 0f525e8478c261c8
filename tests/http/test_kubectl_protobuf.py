"""kubectl reading protobuf answers end to end, against ``python -m emulator serve``.

kubectl's typed clients (client-go) send ``Accept: application/vnd.kubernetes.protobuf,
application/json`` and so, since the door answers protobuf when it is preferred, read
protobuf objects, lists and errors: ``create deployment|namespace``, ``auth can-i``,
``drain`` (PATCH of the node, the PodList of the node's pods, the DaemonSet of a daemon pod,
the GET of the evicted pod until its 404 Status). ``-v=8`` shows each request's Accept and
each answer's Content-Type; the tests assert both, and the commands' usual output.
"""

from __future__ import annotations

import re

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]
PB = "application/vnd.kubernetes.protobuf"
_REQUEST = re.compile(r"round_trippers\.go:\d+\] (GET|POST|PUT|PATCH|DELETE) (\S+)")
_HEADER = re.compile(r"round_trippers\.go:(\d+)\]\s+(Accept|Content-Type): (.*)$")


def exchanges(log: str) -> list[tuple[str, str, str, str]]:
    """(method, URL, request Accept, response Content-Type) of each request in a ``-v=8`` log."""
    out: list[list[str]] = []
    for line in log.splitlines():
        if m := _REQUEST.search(line):
            out.append([m.group(1), m.group(2), "", ""])
        elif (h := _HEADER.search(line)) and out:
            if h.group(2) == "Accept":
                out[-1][2] = h.group(3).strip()
            elif not out[-1][3] and h.group(1) != "480":  # 480: a request header
                out[-1][3] = h.group(3).strip()
    return [(a, b, c, d) for a, b, c, d in out]


def protobuf_answers(log: str) -> list[tuple[str, str]]:
    return [
        (method, url.split("://", 1)[1].split("/", 1)[1]) for method, url, _, ctype in exchanges(log) if ctype == PB
    ]


def test_create_deployment_reads_a_protobuf_answer(kubectl_server: Server) -> None:
    result = kubectl_server.kubectl("create", "deployment", "pbweb", "--image=nginx", "--replicas=2", "-v=8")
    assert ok(result) == "deployment.apps/pbweb created\n"
    [(_, url, accept, ctype)] = [e for e in exchanges(result.stderr) if e[0] == "POST"]
    assert (accept, ctype) == (f"{PB},application/json", PB)
    assert "/apis/apps/v1/namespaces/default/deployments?" in url
    # the object kubectl read back is the one created
    out = ok(kubectl_server.kubectl("get", "deployment", "pbweb", "-o", "jsonpath={.spec.replicas}"))
    assert out == "2"


def test_create_namespace_and_auth_can_i(kubectl_server: Server) -> None:
    result = kubectl_server.kubectl("create", "namespace", "pb-team", "-v=8")
    assert ok(result) == "namespace/pb-team created\n"
    assert protobuf_answers(result.stderr) == [
        ("POST", "api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict")
    ]
    result = kubectl_server.kubectl("auth", "can-i", "create", "pods", "-v=8")
    assert ok(result) == "yes\n"
    assert [m for m, _ in protobuf_answers(result.stderr)] == ["POST"]
    result = kubectl_server.kubectl("auth", "whoami", "-v=8")
    assert "kubernetes-admin" in ok(result)
    assert [m for m, _ in protobuf_answers(result.stderr)] == ["POST"]


def test_an_error_status_in_protobuf(kubectl_server: Server) -> None:
    ok(kubectl_server.kubectl("create", "namespace", "pb-twice"))
    result = kubectl_server.kubectl("create", "namespace", "pb-twice", "-v=8")
    assert 'namespaces "pb-twice" already exists' in failed(result)
    assert [m for m, _ in protobuf_answers(result.stderr)] == ["POST"]


def test_drain_reads_protobuf_pods_and_nodes(kubectl_server: Server) -> None:
    ok(kubectl_server.kubectl("create", "deployment", "drained", "--image=nginx", "--replicas=2"))
    ok(kubectl_server.kubectl("rollout", "status", "deployment/drained", "--timeout=60s"))
    nodes = ok(
        kubectl_server.kubectl("get", "pods", "-l", "app=drained", "-o", "jsonpath={.items[*].spec.nodeName}")
    ).split()
    assert len(nodes) == 2
    node = nodes[0]
    result = kubectl_server.kubectl(
        "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=60s", "-v=8", timeout=90
    )
    assert f"node/{node} drained" in ok(result)
    answers = protobuf_answers(result.stderr)
    assert ("PATCH", f"api/v1/nodes/{node}") in answers
    assert ("GET", f"api/v1/pods?fieldSelector=spec.nodeName%3D{node}&limit=500") in answers
    assert any(m == "GET" and "/pods/drained-" in u for m, u in answers)  # waiting for the eviction
    pods = ok(kubectl_server.kubectl("get", "pods", "-l", "app=drained", "-o", "jsonpath={.items[*].spec.nodeName}"))
    assert node not in pods.split()
    ok(kubectl_server.kubectl("uncordon", node))
