"""A container's ``resizePolicy`` as pod validation checks it on create (upstream
``pkg/apis/core/validation/validation.go`` ``validateResizePolicy``): table of upstream's
rules, paths and wording, for pods and for the pod template of a workload."""

from __future__ import annotations

import json

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import ManifestError, load_manifests
from emulator.base.api.core import Container, ContainerResizePolicy, Pod, PodSpec
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.validation import validate


def _pod(policies: list[tuple[str, str]], restart_policy: str = "", init: bool = False) -> Pod:
    c = Container(
        name="app",
        image="busybox",
        resize_policy=[ContainerResizePolicy(resource_name=r, restart_policy=p) for r, p in policies],
    )
    spec = PodSpec(containers=[replace(c, resize_policy=[])] if init else [c], restart_policy=restart_policy)
    if init:
        spec = replace(spec, init_containers=[replace(c, name="setup", restart_policy="Always")])
    return Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=spec)


@pytest.mark.parametrize(
    ("policies", "restart_policy", "field", "detail"),
    [
        ([("cpu", "NotRequired"), ("cpu", "RestartContainer")], "", "resizePolicy[1]", 'Duplicate value: "cpu"'),
        ([("", "NotRequired")], "", "resizePolicy", "Required value"),
        (
            [("nvidia.com/gpu", "NotRequired")],
            "",
            "resizePolicy",
            'Unsupported value: "nvidia.com/gpu": supported values: "cpu", "memory"',
        ),
        ([("memory", "")], "", "resizePolicy", "Required value"),
        (
            [("memory", "Restart")],
            "",
            "resizePolicy",
            'Unsupported value: "Restart": supported values: "NotRequired", "RestartContainer"',
        ),
        (
            [("memory", "RestartContainer")],
            "Never",
            "resizePolicy",
            "Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'",
        ),
    ],
)
def test_bad_resize_policies_are_refused(
    policies: list[tuple[str, str]], restart_policy: str, field: str, detail: str
) -> None:
    with pytest.raises(Invalid) as err:
        validate(_pod(policies, restart_policy))
    assert (err.value.field, err.value.detail) == (f"spec.containers[0].{field}", detail)


@pytest.mark.parametrize(
    ("policies", "restart_policy"),
    [
        ([], "Never"),
        ([("cpu", "NotRequired"), ("memory", "RestartContainer")], ""),
        ([("cpu", "RestartContainer")], "OnFailure"),
        ([("cpu", "NotRequired"), ("memory", "NotRequired")], "Never"),
    ],
)
def test_good_resize_policies_pass(policies: list[tuple[str, str]], restart_policy: str) -> None:
    validate(_pod(policies, restart_policy))


def test_a_sidecar_may_carry_a_resize_policy_and_is_checked() -> None:
    """1.34 (InPlacePodVerticalScaling on): init containers may have one, checked the same way."""
    validate(_pod([("cpu", "RestartContainer")], init=True))
    with pytest.raises(Invalid) as err:
        validate(_pod([("disk", "NotRequired")], init=True))
    assert err.value.field == "spec.initContainers[0].resizePolicy"


def test_a_workload_template_is_checked_too() -> None:
    manifest = json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "app",
                                "image": "busybox",
                                "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "Sometimes"}],
                            }
                        ]
                    },
                },
            },
        }
    )
    with pytest.raises(ManifestError) as err:
        load_manifests(manifest, source="test.yaml")
    assert str(err.value).startswith(
        'test.yaml: spec.template.spec.containers[0].resizePolicy: Unsupported value: "Sometimes"'
    )
