"""Selector expressions are compiled when a DeviceClass or claim is validated: a malformed one
is bad input with upstream's CEL error and its position."""

from __future__ import annotations

import pytest

from emulator.base.api.codec import ManifestError, object_from_dict


def _class(expression: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def _claim(expression: str) -> dict[str, object]:
    request = {"name": "r", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [request]}},
    }


@pytest.mark.parametrize(
    ("doc", "path", "detail"),
    [
        pytest.param(
            _class("device.driver == "),
            "spec.selectors[0].cel.expression",
            'Invalid value: "device.driver == ": compilation failed: ERROR: <input>:1:18: Syntax error',
            id="syntax",
        ),
        pytest.param(
            _class('device.driver + 1 == "x"'),
            "spec.selectors[0].cel.expression",
            "compilation failed: ERROR: <input>:1:",
            id="type-error",
        ),
        pytest.param(
            _claim("device.nope"),
            "spec.devices.requests[0].exactly.selectors[0].cel.expression",
            'Invalid value: "device.nope": compilation failed',
            id="unknown-field-in-claim",
        ),
    ],
)
def test_a_malformed_selector_is_bad_input(doc: dict[str, object], path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as info:
        object_from_dict(doc, source="gpu.yaml")
    assert info.value.path == path
    assert info.value.detail.startswith(detail) or detail in info.value.detail, info.value.detail


def test_a_good_selector_passes() -> None:
    obj = object_from_dict(_class('device.driver == "gpu.example.com"'), source="gpu.yaml")
    assert obj.spec.selectors[0].cel.expression == 'device.driver == "gpu.example.com"'
