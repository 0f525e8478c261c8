"""``resource.k8s.io`` v1beta1/v1beta2 manifests decode to v1 as upstream's conversion gives them
(``pkg/apis/resource/v1beta1/conversion.go``, v1.34), fields of v1.34's off alpha gates are
warned about, and ``DeviceTaintRule`` (v1alpha3, not served by default) is refused."""

from __future__ import annotations

import pytest

from emulator.base.api.codec import ManifestError, load_manifests, object_from_dict, to_builtins, yaml_documents

V1BETA1_CLAIM = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.example.com
      selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}]
      allocationMode: ExactCount
      count: 2
    - name: any
      firstAvailable:
      - {name: big, deviceClassName: gpu.example.com}
      - {name: small, deviceClassName: gpu.example.com, count: 2}
    constraints: [{requests: [gpu], matchAttribute: gpu.example.com/model}]
"""
V1_CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}]
        allocationMode: ExactCount
        count: 2
    - name: any
      firstAvailable:
      - {name: big, deviceClassName: gpu.example.com}
      - {name: small, deviceClassName: gpu.example.com, count: 2}
    constraints: [{requests: [gpu], matchAttribute: gpu.example.com/model}]
"""


def _one(text: str) -> object:
    (obj,) = load_manifests(text, source="m.yaml")
    return obj


def test_a_v1beta1_claim_is_the_v1_claim() -> None:
    assert to_builtins(_one(V1BETA1_CLAIM)) == to_builtins(_one(V1_CLAIM))


def test_a_v1beta2_claim_only_changes_its_api_version() -> None:
    assert to_builtins(_one(V1_CLAIM.replace("resource.k8s.io/v1", "resource.k8s.io/v1beta2"))) == to_builtins(
        _one(V1_CLAIM)
    )


def test_a_v1beta1_template_moves_its_requests_under_exactly() -> None:
    text = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec:
  metadata: {labels: {app: a}}
  spec: {devices: {requests: [{name: gpu, deviceClassName: gpu.example.com, allocationMode: All}]}}
"""
    out = to_builtins(_one(text))
    assert out["apiVersion"] == "resource.k8s.io/v1"
    assert out["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "All"}}
    ]
    assert out["spec"]["metadata"] == {"labels": {"app": "a"}}


def test_a_v1beta1_slice_unwraps_basic_devices_and_unsets_empty_node_fields() -> None:
    text = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: ""
  allNodes: true
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes: {model: {string: A100}}
      capacity: {memory: {value: 80Gi}}
"""
    spec = to_builtins(_one(text))["spec"]
    assert "nodeName" not in spec
    assert spec["allNodes"] is True
    assert spec["devices"] == [
        {"name": "gpu-0", "attributes": {"model": {"string": "A100"}}, "capacity": {"memory": {"value": "80Gi"}}}
    ]


def test_a_bad_v1beta1_request_is_reported_at_its_v1_path() -> None:
    """v1.34 validates the converted object: the path is v1's, as its API server says."""
    text = V1BETA1_CLAIM.replace("count: 2\n    - name: any", "count: -1\n    - name: any")
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="m.yaml")
    assert (err.value.path, err.value.detail) == (
        "spec.devices.requests[0].exactly.count",
        "Invalid value: -1: must be greater than zero",
    )


def test_fields_of_disabled_gates_are_warned_about() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, taints: [{key: k, effect: NoSchedule}], allowMultipleAllocations: true}]
"""
    warnings: list[str] = []
    (doc,) = yaml_documents(text, source="m.yaml")
    object_from_dict(doc, source="m.yaml", warn=warnings.append)
    assert warnings == [
        "m.yaml: spec.devices[0].taints: dropped: the feature gate DRADeviceTaints is off in v1.34 (alpha)",
        "m.yaml: spec.devices[0].allowMultipleAllocations: dropped: the feature gate DRAConsumableCapacity is off "
        "in v1.34 (alpha)",
    ]


def test_device_taint_rule_is_not_served_by_default() -> None:
    text = "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec: {}\n"
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="m.yaml")
    assert err.value.detail.startswith('no matches for kind "DeviceTaintRule" in version "resource.k8s.io/v1alpha3"')
    assert "DRADeviceTaints" in err.value.detail
