"""``karpenter.sh/v1`` NodePool and NodeClaim through ``serve`` as kubectl uses a CRD group
(kubernetes-sigs/karpenter v1.9.1 CRDs): ``apply -f`` (the CRD's defaults written), ``get`` with
the CRDs' ``additionalPrinterColumns`` (``-o wide`` adds the priority-1 ones), the status
subresource, a CEL rule's 422 (``<path>: Invalid value: "<type>": <message>``) and an enum's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]

MANIFEST = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  weight: 10
  limits: {cpu: "100"}
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-abcde
  labels:
    karpenter.sh/nodepool: default
    node.kubernetes.io/instance-type: c-4x-amd64-linux
    karpenter.sh/capacity-type: on-demand
    topology.kubernetes.io/zone: test-zone-a
spec:
  nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
  requirements:
  - {key: node.kubernetes.io/instance-type, operator: In, values: [c-4x-amd64-linux]}
"""


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.strip()]


def test_apply_get_nodepools_and_nodeclaims(kubectl_server: Server, tmp_path: Path) -> None:
    k = kubectl_server.kubectl
    path = tmp_path / "karpenter.yaml"
    path.write_text(MANIFEST)
    applied = ok(k("apply", "-f", str(path)))
    assert "nodepool.karpenter.sh/default created" in applied
    assert "nodeclaim.karpenter.sh/default-abcde created" in applied
    pool = json.loads(ok(k("get", "nodepool", "default", "-o", "json")))
    assert pool["spec"]["disruption"] == {
        "consolidateAfter": "0s",
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "budgets": [{"nodes": "10%"}],
    }
    assert pool["spec"]["template"]["spec"]["expireAfter"] == "720h"
    assert pool["metadata"]["generation"] == 1
    rows = _rows(ok(k("get", "nodepools")))
    assert rows[0] == ["NAME", "NODECLASS", "NODES", "READY", "AGE"]
    assert rows[1][:2] == ["default", "default"]
    wide = _rows(ok(k("get", "nodepools", "-o", "wide")))
    assert wide[0] == ["NAME", "NODECLASS", "NODES", "READY", "AGE", "WEIGHT", "CPU", "MEMORY"]
    rows = _rows(ok(k("get", "nodeclaims")))
    assert rows[0] == ["NAME", "TYPE", "CAPACITY", "ZONE", "NODE", "READY", "AGE"]
    assert rows[1][:4] == ["default-abcde", "c-4x-amd64-linux", "on-demand", "test-zone-a"]
    status = {
        "status": {
            "nodeName": "n1",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Ready",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    }
    ok(k("patch", "nodeclaim", "default-abcde", "--subresource=status", "--type=merge", "-p", json.dumps(status)))
    assert _rows(ok(k("get", "nodeclaims")))[1][4:6] == ["n1", "True"]
    assert "nodepool.karpenter.sh/default" in ok(k("get", "karpenter", "-o", "name"))
    refused = failed(k("patch", "nodeclaim", "default-abcde", "--type=merge", "-p", '{"spec":{"expireAfter":"1h"}}'))
    assert refused == 'The NodeClaim "default-abcde" is invalid: spec: Invalid value: "object": spec is immutable\n'


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        pytest.param(
            {"key": "karpenter.sh/capacity-type", "operator": "Within", "values": ["spot"]},
            'spec.template.spec.requirements[0].operator: Unsupported value: "Within": supported values: '
            '"Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            id="operator",
        ),
        pytest.param(
            {"key": "karpenter.sh/custom", "operator": "Exists"},
            "spec.template.spec.requirements[0].key: "
            'Invalid value: "string": label domain "karpenter.sh" is restricted',
            id="restricted-domain",
        ),
    ],
)
def test_bad_nodepool_is_422(
    kubectl_server: Server, tmp_path: Path, requirement: dict[str, object], message: str
) -> None:
    body = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "bad"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                    "requirements": [requirement],
                }
            }
        },
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(body))
    assert failed(kubectl_server.kubectl("create", "-f", str(path))) == f'The NodePool "bad" is invalid: {message}\n'
