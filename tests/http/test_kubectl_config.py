"""ConfigMaps and Secrets through ``serve`` as kubectl uses them (upstream printers
``pkg/printers/internalversion/printers.go``: ConfigMap ``DATA``, Secret ``TYPE`` and ``DATA``;
validation ``pkg/apis/core/validation`` ``ValidateConfigMap``: 422 over 1 MiB)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]


def test_create_get_describe_configmap_and_secret(kubectl_server: Server) -> None:
    k = kubectl_server.kubectl
    assert ok(k("create", "configmap", "cfg", "--from-literal=a=b", "--from-literal=c=d")) == "configmap/cfg created\n"
    assert ok(k("create", "secret", "generic", "pw", "--from-literal=password=s3cret")) == "secret/pw created\n"
    out = ok(k("get", "cm,secret"))
    rows = [line.split() for line in out.splitlines()]
    assert ["NAME", "DATA", "AGE"] in rows
    assert ["NAME", "TYPE", "DATA", "AGE"] in rows
    assert ["configmap/cfg", "2"] in [r[:2] for r in rows]
    assert ["secret/pw", "Opaque", "1"] in [r[:3] for r in rows]
    value = ok(k("get", "secret", "pw", "-o", "jsonpath={.data.password}"))
    assert base64.b64decode(value) == b"s3cret"
    described = ok(k("describe", "configmap", "cfg"))
    assert "a:\n----\nb" in described
    assert "password:  6 bytes" in ok(k("describe", "secret", "pw"))


def test_string_data_applied_lands_in_data(kubectl_server: Server, tmp_path: Path) -> None:
    manifest = tmp_path / "s.json"
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "tls", "namespace": "default"},
        "type": "kubernetes.io/tls",
        "stringData": {"tls.crt": "c", "tls.key": "k"},
    }
    manifest.write_text(json.dumps(body))
    ok(kubectl_server.kubectl("apply", "-f", str(manifest)))
    keys = ok(kubectl_server.kubectl("get", "secret", "tls", "-o", "jsonpath={.data}"))
    assert sorted(json.loads(keys)) == ["tls.crt", "tls.key"]


def test_a_configmap_over_1MiB_is_422(kubectl_server: Server, tmp_path: Path) -> None:
    manifest = tmp_path / "big.json"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "x" * (1 << 20)}}
    body["data"]["b"] = "y"  # type: ignore[index]
    manifest.write_text(json.dumps(body))
    result = kubectl_server.kubectl("create", "-f", str(manifest))
    assert failed(result) == ('The ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes\n')


def test_delete_namespace_terminates_then_removes_it(kubectl_server: Server) -> None:
    """Upstream ``pkg/controller/namespace``: Terminating, content deleted, then gone; the
    NamespaceLifecycle admission refuses creates meanwhile (Forbidden). The ConfigMap's own
    finalizer holds the Namespace in Terminating (the deleter waits for content with
    finalizers) until the test removes it, so a slow kubectl cannot miss the phase."""
    k = kubectl_server.kubectl
    ok(k("create", "namespace", "doomed"))
    ok(k("create", "configmap", "c", "-n", "doomed", "--from-literal=a=b"))
    hold = '{"metadata":{"finalizers":["example.com/hold"]}}'
    ok(k("patch", "configmap", "c", "-n", "doomed", "--type=merge", "-p", hold))
    ok(k("delete", "namespace", "doomed", "--wait=false"))
    assert ok(k("get", "namespace", "doomed", "-o", "jsonpath={.status.phase}")) == "Terminating"
    refused = failed(k("create", "configmap", "d", "-n", "doomed", "--from-literal=a=b"))
    assert refused == (
        'error: failed to create configmap: configmaps "d" is forbidden: unable to create new content in '
        "namespace doomed because it is being terminated\n"
    )
    # The deleter (after namespaceDeletionGracePeriod) marks the held ConfigMap deleted.
    marked = "--for=jsonpath={.metadata.deletionTimestamp}"
    ok(k("wait", marked, "configmap/c", "-n", "doomed", "--timeout=60s", timeout=70))
    assert ok(k("get", "namespace", "doomed", "-o", "jsonpath={.status.phase}")) == "Terminating"
    release = '[{"op":"remove","path":"/metadata/finalizers"}]'
    ok(k("patch", "configmap", "c", "-n", "doomed", "--type=json", "-p", release))
    ok(k("wait", "--for=delete", "namespace/doomed", "--timeout=60s", timeout=70))
    assert "NotFound" in failed(k("get", "configmap", "c", "-n", "doomed"))
