"""Validation of the ``resource.k8s.io/v1`` kinds on load: cases ported from upstream's
``pkg/apis/resource/validation/validation_{resourceclaim,resourceclaimtemplate,resourceslice,
deviceclass}_test.go`` (v1.34), each refused with one error naming the file, the path and what
was expected (the first of upstream's errors, in its order)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.base.api.codec import ManifestError, load_manifests

CEL_TRUE = {"cel": {"expression": "true"}}


def _claim(*requests: Any, constraints: Any = None, config: Any = None, name: str = "claim") -> str:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints is not None:
        devices["constraints"] = constraints
    if config is not None:
        devices["config"] = config
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": devices},
    }
    return json.dumps(doc)


def _exact(name: str = "req-0", **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "class", **fields}}


def _slice(spec: dict[str, Any], name: str = "slice") -> str:
    base = {"driver": "dra.example.com", "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1}}
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}}
    doc["spec"] = {**base, **spec}
    return json.dumps(doc)


def _device(name: str = "dev-0", **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


def _class(spec: dict[str, Any], name: str = "class") -> str:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}
    return json.dumps(doc)


_MULTIPLE_REQUEST = (
    "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
)
_NODE_FIELDS = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
_C_ID = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)

CASES = [
    # --- claims (validation_resourceclaim_test.go) ---
    pytest.param(_claim(_exact(), name="Bad_Name"), "metadata.name", None, id="claim-bad-name"),
    pytest.param(
        _claim(_exact("Bad_Request")),
        "spec.devices.requests[0].name",
        'Invalid value: "Bad_Request": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        id="bad-request-name",
    ),
    pytest.param(
        _claim(_exact("a"), _exact("a")), "spec.devices.requests[1]", 'Duplicate value: "a"', id="duplicate-request"
    ),
    pytest.param(
        _claim(*[_exact(f"r{i}") for i in range(33)]),
        "spec.devices.requests",
        "Too many: 33: must have at most 32 items",
        id="too-many-requests",
    ),
    pytest.param(
        _claim({"name": "r"}),
        "spec.devices.requests[0]",
        "Required value: exactly one of `exactly` or `firstAvailable` is required",
        id="neither-exactly-nor-first-available",
    ),
    pytest.param(
        _claim({**_exact("r"), "firstAvailable": [{"name": "s", "deviceClassName": "class"}]}),
        "spec.devices.requests[0]",
        _MULTIPLE_REQUEST,
        id="both-exactly-and-first-available",
    ),
    pytest.param(
        _claim({"name": "r", "exactly": {}}),
        "spec.devices.requests[0].exactly.deviceClassName",
        "Required value",
        id="missing-class-name",
    ),
    pytest.param(
        _claim(_exact(allocationMode="Some")),
        "spec.devices.requests[0].exactly.allocationMode",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
        id="unknown-allocation-mode",
    ),
    pytest.param(
        _claim(_exact(count=-1)),
        "spec.devices.requests[0].exactly.count",
        "Invalid value: -1: must be greater than zero",
        id="negative-count",
    ),
    pytest.param(
        _claim(_exact(allocationMode="All", count=2)),
        "spec.devices.requests[0].exactly.count",
        "Invalid value: 2: must not be specified when allocationMode is 'All'",
        id="count-with-all",
    ),
    pytest.param(
        _claim(_exact(selectors=[CEL_TRUE] * 33)),
        "spec.devices.requests[0].exactly.selectors",
        "Too many: 33: must have at most 32 items",
        id="too-many-selectors",
    ),
    pytest.param(
        _claim(_exact(selectors=[{}])),
        "spec.devices.requests[0].exactly.selectors[0].cel",
        "Required value",
        id="selector-without-cel",
    ),
    pytest.param(
        _claim(_exact(selectors=[{"cel": {"expression": "x" * (10 * 1024 + 1)}}])),
        "spec.devices.requests[0].exactly.selectors[0].cel.expression",
        "Too long: may not be more than 10240 bytes",
        id="selector-too-long",
    ),
    pytest.param(
        _claim({"name": "r", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "c"} for i in range(9)]}),
        "spec.devices.requests[0].firstAvailable",
        "Too many: 9: must have at most 8 items",
        id="too-many-subrequests",
    ),
    pytest.param(
        _claim({"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "c"}] * 2}),
        "spec.devices.requests[0].firstAvailable[1]",
        'Duplicate value: "s"',
        id="duplicate-subrequest",
    ),
    pytest.param(
        _claim(_exact("r"), constraints=[{"requests": ["other"], "matchAttribute": "dra.example.com/model"}]),
        "spec.devices.constraints[0].requests[0]",
        f'Invalid value: "other": {_REF}',
        id="constraint-unknown-request",
    ),
    pytest.param(
        _claim(_exact("r"), constraints=[{"requests": ["r"]}]),
        "spec.devices.constraints[0].matchAttribute",
        "Required value",
        id="constraint-without-attribute",
    ),
    pytest.param(
        _claim(_exact("r"), constraints=[{"matchAttribute": "model"}]),
        "spec.devices.constraints[0].matchAttribute",
        'Invalid value: "model": a fully qualified name must be a domain and a name separated by a slash',
        id="constraint-attribute-not-fully-qualified",
    ),
    pytest.param(
        _claim(_exact("r"), config=[{"requests": ["r"]}]),
        "spec.devices.config[0].opaque",
        "Required value",
        id="config-without-opaque",
    ),
    pytest.param(
        _claim(_exact("r"), config=[{"opaque": {"driver": "dra.example.com", "parameters": [1]}}]),
        "spec.devices.config[0].opaque.parameters",
        'Invalid value: "<value omitted>": must be a valid JSON object',
        id="config-parameters-not-an-object",
    ),
    pytest.param(
        _claim(_exact("r"), config=[{"opaque": {"driver": "", "parameters": {}}}]),
        "spec.devices.config[0].opaque.driver",
        "Required value",
        id="config-without-driver",
    ),
    pytest.param(
        _claim(_exact(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])),
        "spec.devices.requests[0].exactly.tolerations[0].value",
        'Invalid value: "v": must be empty for operator `Exists`',
        id="toleration-exists-with-value",
    ),
    # --- slices (validation_resourceslice_test.go) ---
    pytest.param(_slice({}), "spec", f"Required value: {_NODE_FIELDS}", id="slice-no-node-selection"),
    pytest.param(
        _slice({"nodeName": "n", "allNodes": True}),
        "spec",
        f'Invalid value: "{{`nodeName`, `allNodes`}}": {_NODE_FIELDS}, but multiple fields are set',
        id="slice-two-node-selections",
    ),
    pytest.param(
        _slice({"allNodes": False}),
        "spec.allNodes",
        "Invalid value: false: must be either unset or set to true",
        id="slice-all-nodes-false",
    ),
    pytest.param(
        _slice({"nodeName": "n", "pool": {"name": "", "resourceSliceCount": 1}}),
        "spec.pool.name",
        "Required value",
        id="slice-pool-name-required",
    ),
    pytest.param(
        _slice({"nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 0}}),
        "spec.pool.resourceSliceCount",
        "Invalid value: 0: must be greater than zero",
        id="slice-count-zero",
    ),
    pytest.param(_slice({"nodeName": "n", "driver": ""}), "spec.driver", "Required value", id="slice-driver-required"),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device(f"d{i}") for i in range(129)]}),
        "spec.devices",
        "Too many: 129: must have at most 128 items",
        id="slice-too-many-devices",
    ),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device("d"), _device("d")]}),
        "spec.devices[1]",
        'Duplicate value: "d"',
        id="slice-duplicate-device",
    ),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device(attributes={"a": {"int": 1, "bool": True}})]}),
        "spec.devices[0].attributes[a]",
        'Invalid value: {"int":1,"bool":true}: exactly one value must be specified',
        id="attribute-two-values",
    ),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device(attributes={"a": {}})]}),
        "spec.devices[0].attributes[a]",
        'Invalid value: "": exactly one value must be specified',
        id="attribute-no-value",
    ),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device(attributes={"a": {"version": "1.2"}})]}),
        "spec.devices[0].attributes[a].version",
        'Invalid value: "1.2": must be a string compatible with semver.org spec 2.0.0',
        id="attribute-version-not-semver",
    ),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device(attributes={"1a": {"int": 1}})]}),
        "spec.devices[0].attributes",
        f'Invalid value: "1a": {_C_ID}',
        id="attribute-name-not-c-identifier",
    ),
    pytest.param(
        _slice({"allNodes": True, "devices": [_device(attributes={f"a{i}": {"int": i} for i in range(33)})]}),
        "spec.devices[0]",
        "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
        id="too-many-attributes",
    ),
    pytest.param(
        _slice(
            {
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
                        {"matchExpressions": [{"key": "b", "operator": "Exists"}]},
                    ]
                }
            }
        ),
        "spec.nodeSelector.nodeSelectorTerms",
        None,
        id="slice-node-selector-two-terms",
    ),
    # --- classes (validation_deviceclass_test.go) ---
    pytest.param(
        _class({"selectors": [CEL_TRUE] * 33}),
        "spec.selectors",
        "Too many: 33: must have at most 32 items",
        id="class-too-many-selectors",
    ),
    pytest.param(
        _class({"extendedResourceName": "kubernetes.io/gpu"}),
        "spec.extendedResourceName",
        'Invalid value: "kubernetes.io/gpu": must be a valid extended resource name',
        id="class-bad-extended-resource-name",
    ),
]


@pytest.mark.parametrize(("text", "path", "detail"), CASES)
def test_bad_input_is_one_error_with_file_path_and_expectation(text: str, path: str, detail: str | None) -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="m.yaml")
    assert (err.value.source, err.value.path) == ("m.yaml", path)
    if detail is not None:
        assert err.value.detail == detail


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(_claim(_exact()), id="claim"),
        pytest.param(_claim(_exact(count=0)), id="count-zero-defaults-to-one"),
        pytest.param(_claim(_exact(allocationMode="All")), id="all"),
        pytest.param(
            _claim(
                {
                    "name": "r",
                    "firstAvailable": [{"name": "a", "deviceClassName": "c"}, {"name": "b", "deviceClassName": "c"}],
                },
                constraints=[{"requests": ["r/a"], "matchAttribute": "dra.example.com/model"}],
                config=[{"requests": ["r"], "opaque": {"driver": "dra.example.com", "parameters": {"a": 1}}}],
            ),
            id="first-available-with-references",
        ),
        pytest.param(
            _slice(
                {
                    "nodeName": "node-1",
                    "devices": [
                        _device(
                            attributes={
                                "model": {"string": "A100"},
                                "dra.example.com/mem": {"int": 80},
                                "v": {"version": "1.2.3-rc.1+b"},
                            },
                            capacity={"memory": {"value": "80Gi"}},
                        )
                    ],
                }
            ),
            id="slice",
        ),
        pytest.param(_class({"selectors": [CEL_TRUE]}), id="class"),
        pytest.param(
            _slice(
                {
                    "nodeName": "node-1",
                    "sharedCounters": [{"name": "cs", "counters": {"c": {"value": "2"}}}],
                    "devices": [_device(consumesCounters=[{"counterSet": "cs", "counters": {"c": {"value": "1"}}}])],
                }
            ),
            id="counters-beside-devices-as-1.34-allows",  # one or the other only from 1.35 (kubernetes#134189)
        ),
    ],
)
def test_valid_objects_load(text: str) -> None:
    (obj,) = load_manifests(text, source="m.yaml")
    assert obj.api_version == "resource.k8s.io/v1"
