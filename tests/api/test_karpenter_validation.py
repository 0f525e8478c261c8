"""The Karpenter CRDs' checks (kubernetes-sigs/karpenter v1.9.1: pkg/apis/crds/karpenter.sh_nodepools.yaml
and karpenter.sh_nodeclaims.yaml; cases after pkg/apis/v1/nodepool_validation_cel_test.go and
nodeclaim_validation_cel_test.go) and the CRDs' defaults (``+kubebuilder:default`` in nodepool.go)."""

# ruff: noqa: E501  (the table's messages are upstream's, one per line)
from __future__ import annotations

import copy
from typing import Any

import pytest

from emulator.base.api.codec import ManifestError, object_from_dict
from emulator.base.api.karpenter import NodePool, default_karpenter
from emulator.base.api.karpentervalidation import karpenter_update_problems

REF = {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}


def _pool(**spec: Any) -> dict[str, Any]:
    template_spec = {"nodeClassRef": dict(REF), "requirements": []}
    template_spec.update(spec.pop("template_spec", {}))
    body = {"template": {"metadata": spec.pop("template_meta", {}), "spec": template_spec}, **spec}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": body}


def _req(**r: Any) -> dict[str, Any]:
    return {"template_spec": {"requirements": [r]}}


CASES = [
    ("operator", _req(key="a", operator="Within", values=["x"]),
     'spec.template.spec.requirements[0].operator: Unsupported value: "Within": supported values: '
     '"Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'),
    ("in-without-values", _req(key="a", operator="In"),
     'spec.template.spec.requirements: Invalid value: "array": requirements with operator \'In\' must have a value defined'),
    ("gt-two-values", _req(key="a", operator="Gt", values=["1", "2"]),
     "spec.template.spec.requirements: Invalid value: \"array\": requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' "
     "must have a single positive integer value"),
    ("lte-negative", _req(key="a", operator="Lte", values=["-1"]),  # the values' pattern answers first
     "spec.template.spec.requirements[0].values[0]: Invalid value: \"-1\": spec.template.spec.requirements[0].values[0] "
     "in body should match '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'"),
    ("min-values-above-values", _req(key="a", operator="In", values=["x"], minValues=2),
     "spec.template.spec.requirements: Invalid value: \"array\": requirements with 'minValues' must have at least "
     "that many values specified in the 'values' field"),
    ("min-values-range", _req(key="a", operator="Exists", minValues=51),
     "spec.template.spec.requirements[0].minValues: Invalid value: 51: spec.template.spec.requirements[0].minValues "
     "in body should be less than or equal to 50"),
    ("restricted-domain", _req(key="subdomain.karpenter.sh/x", operator="Exists"),
     'spec.template.spec.requirements[0].key: Invalid value: "string": label domain "karpenter.sh" is restricted'),
    ("nodepool-label", _req(key="karpenter.sh/nodepool", operator="Exists"),
     'spec.template.spec.requirements[0].key: Invalid value: "string": label "karpenter.sh/nodepool" is restricted'),
    ("hostname", _req(key="kubernetes.io/hostname", operator="Exists"),
     'spec.template.spec.requirements[0].key: Invalid value: "string": label "kubernetes.io/hostname" is restricted'),
    ("label-domain", {"template_meta": {"labels": {"karpenter.sh/x": "y"}}},
     'spec.template.metadata.labels: Invalid value: "object": label domain "karpenter.sh" is restricted'),
    ("consolidate-after", {"disruption": {"consolidateAfter": "5x"}},
     "spec.disruption.consolidateAfter: Invalid value: \"5x\": spec.disruption.consolidateAfter in body should "
     "match '^(([0-9]+(s|m|h))+|Never)$'"),
    ("consolidate-after-missing", {"disruption": {"consolidationPolicy": "WhenEmpty"}},
     "spec.disruption.consolidateAfter: Required value"),
    ("policy", {"disruption": {"consolidateAfter": "0s", "consolidationPolicy": "Always"}},
     'spec.disruption.consolidationPolicy: Unsupported value: "Always": supported values: "WhenEmpty", '
     '"WhenEmptyOrUnderutilized"'),
    ("schedule-without-duration", {"disruption": {"consolidateAfter": "0s", "budgets": [{"nodes": "1", "schedule": "@daily"}]}},
     "spec.disruption.budgets: Invalid value: \"array\": 'schedule' must be set with 'duration'"),
    ("budget-nodes", {"disruption": {"consolidateAfter": "0s", "budgets": [{"nodes": "101%"}]}},
     "spec.disruption.budgets[0].nodes: Invalid value: \"101%\": spec.disruption.budgets[0].nodes in body should "
     "match '^((100|[0-9]{1,2})%|[0-9]+)$'"),
    ("weight", {"weight": 101},
     "spec.weight: Invalid value: 101: spec.weight in body should be less than or equal to 100"),
    ("static-weight", {"replicas": 2, "weight": 5},
     "spec: Invalid value: \"object\": 'weight' is not supported on static NodePools"),
    ("class-ref-empty-name", {"template_spec": {"nodeClassRef": {**REF, "name": ""}}},
     'spec.template.spec.nodeClassRef.name: Invalid value: "string": name may not be empty'),
    ("taint-effect", {"template_spec": {"taints": [{"key": "a", "effect": "Never"}]}},
     'spec.template.spec.taints[0].effect: Unsupported value: "Never": supported values: "NoSchedule", '
     '"PreferNoSchedule", "NoExecute"'),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "message"), [pytest.param(s, m, id=i) for i, s, m in CASES])
def test_nodepool_crd_rules(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        object_from_dict(_pool(**copy.deepcopy(spec)), source="f.yaml")
    assert str(info.value) == f"f.yaml: {message}"


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(_req(key="karpenter.sh/capacity-type", operator="In", values=["spot"]), id="well-known"),
        pytest.param(_req(key="a", operator="Gte", values=["3"]), id="gte"),
        pytest.param({"disruption": {"consolidateAfter": "Never"}}, id="never"),
        pytest.param(
            {
                "disruption": {
                    "consolidateAfter": "1h30m",
                    "budgets": [{"nodes": "0", "schedule": "@daily", "duration": "10m"}],
                }
            },
            id="budget",
        ),
    ],
)
def test_nodepool_accepted(spec: dict[str, Any]) -> None:
    object_from_dict(_pool(**spec), source="f.yaml")


def test_defaults() -> None:
    pool = default_karpenter(object_from_dict(_pool(), source="f.yaml"))
    assert isinstance(pool, NodePool)
    assert pool.spec is not None
    assert pool.spec.disruption is not None
    assert pool.spec.disruption.consolidate_after == "0s"
    assert pool.spec.disruption.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert [b.nodes for b in pool.spec.disruption.budgets or []] == ["10%"]
    assert pool.spec.template is not None
    assert pool.spec.template.spec is not None
    assert pool.spec.template.spec.expire_after == "720h"
    assert default_karpenter(pool) == pool


def test_update_rules() -> None:
    old = default_karpenter(object_from_dict(_pool(), source="f.yaml"))
    new = default_karpenter(
        object_from_dict(_pool(template_spec={"nodeClassRef": {**REF, "kind": "Other"}}), source="f")
    )
    assert list(karpenter_update_problems(old, new)) == [
        ("spec.template.spec.nodeClassRef", 'Invalid value: "object": nodeClassRef.kind is immutable')
    ]
    static = default_karpenter(object_from_dict(_pool(replicas=1), source="f.yaml"))
    assert [p for p, _ in karpenter_update_problems(old, static)] == ["spec"]
