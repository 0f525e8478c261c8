"""In-place resize through ``serve`` as kubectl does it (``kubectl patch --subresource resize``,
kubectl 1.32): the kubelet allocates and actuates the new requests (``allocatedResources``,
``resources``); a resize beyond the node is ``PodResizePending``/``Infeasible``; a QoS change
is a 422 with upstream's message; the same change through the main pod endpoint is refused as
a spec change."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]

POD = """
apiVersion: v1
kind: Pod
metadata: {name: resizable, namespace: default}
spec:
  nodeName: worker-1
  containers:
  - name: app
    image: registry.example.com/web:1.0
    resources: {requests: {cpu: 100m, memory: 64Mi}}
"""


def _pod(k: Any) -> dict[str, Any]:
    return json.loads(ok(k("get", "pod", "resizable", "-o", "json")))


def _wait(k: Any, check: Any, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        pod = _pod(k)
        if check(pod) or time.monotonic() > deadline:
            return pod
        time.sleep(0.2)


def _cs(pod: dict[str, Any]) -> dict[str, Any]:
    return (pod.get("status", {}).get("containerStatuses") or [{}])[0]


def _cond(pod: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def test_resize_with_kubectl(kubectl_server: Server, tmp_path: Path) -> None:
    k = kubectl_server.kubectl
    path = tmp_path / "pod.yaml"
    path.write_text(POD)
    ok(k("apply", "-f", str(path)))
    pod = _wait(k, lambda p: "resources" in _cs(p) and p["status"].get("phase") == "Running")
    assert _cs(pod)["resources"] == {"requests": {"cpu": "100m", "memory": "64Mi"}}
    assert _cs(pod)["allocatedResources"] == {"cpu": "100m", "memory": "64Mi"}

    patch = '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}'
    assert "pod/resizable patched" in ok(k("patch", "pod", "resizable", "--subresource", "resize", "--patch", patch))
    pod = _wait(k, lambda p: _cs(p).get("resources", {}).get("requests", {}).get("cpu") == "300m")
    assert _cs(pod)["allocatedResources"]["cpu"] == "300m"
    assert _cond(pod, "PodResizeInProgress") is None
    assert pod["metadata"]["generation"] == 2

    big = '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"64"}}}]}}'
    ok(k("patch", "pod", "resizable", "--subresource", "resize", "--patch", big))
    pod = _wait(k, lambda p: _cond(p, "PodResizePending") is not None)
    cond = _cond(pod, "PodResizePending")
    assert cond is not None
    assert (cond["reason"], cond["message"]) == (
        "Infeasible",
        "Node didn't have enough capacity: cpu, requested: 64000, capacity: 3900",
    )

    qos = '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"64","memory":"64Mi"}}}]}}'
    err = failed(k("patch", "pod", "resizable", "--subresource", "resize", "--patch", qos))
    assert 'Pod "resizable" is invalid' in err
    assert "Pod QOS Class may not change as a result of resizing" in err

    main = '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'
    err = failed(k("patch", "pod", "resizable", "--patch", main))
    assert "pod updates may not change fields other than" in err
    ok(k("delete", "pod", "resizable", "--wait=false"))
