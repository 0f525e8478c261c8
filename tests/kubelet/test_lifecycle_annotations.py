"""The lifecycle annotations the kubelet reads are checked where objects are validated:
a pod (or a workload's pod template) whose annotation the kubelet could not read is
refused with the annotation's path, so that a typo fails the run instead of changing it."""

from __future__ import annotations

import pytest

from emulator.base.api.apps import Deployment, DeploymentSpec
from emulator.base.api.core import LabelSelector
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.podvalidation import (
    EXIT_CODE_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    INIT_EXIT_CODE_ANNOTATION,
    READY_AFTER_ANNOTATION,
    kubelet_annotation_problems,
)
from emulator.base.api.validation import validate
from tests.builders import container, pod


@pytest.mark.parametrize(
    ("name", "value", "detail"),
    [
        pytest.param(
            EXIT_CODE_ANNOTATION,
            "256",
            'Invalid value: "256": must be an integer from 0 to 255 (an exit code)',
            id="code",
        ),
        pytest.param(
            INIT_EXIT_CODE_ANNOTATION,
            "-1",
            'Invalid value: "-1": must be an integer from 0 to 255 (an exit code)',
            id="init-code",
        ),
        pytest.param(
            READY_AFTER_ANNOTATION,
            "10 s",
            "Invalid value: \"10 s\": expected a duration like 5ms, 1.5s, 2m or 1h30m, got '10 s'",
            id="ready-after",
        ),
        pytest.param(
            INIT_DURATION_ANNOTATION,
            "-5s",
            "Invalid value: \"-5s\": durations cannot be negative, got '-5s'",
            id="init",
        ),
    ],
)
def test_a_pod_with_an_unreadable_lifecycle_annotation_is_refused(name: str, value: str, detail: str) -> None:
    with pytest.raises(Invalid, match=r"^Pod \"web\" is invalid: metadata\.annotations\[") as err:
        validate(pod("web", annotations={name: value}))
    assert (err.value.field, err.value.detail) == (f"metadata.annotations[{name}]", detail)


@pytest.mark.parametrize(
    "notes",
    [
        pytest.param({}, id="none"),
        pytest.param({EXIT_CODE_ANNOTATION: "0", INIT_EXIT_CODE_ANNOTATION: "255"}, id="codes"),
        pytest.param({READY_AFTER_ANNOTATION: "1m30s", INIT_DURATION_ANNOTATION: "0"}, id="durations"),
        pytest.param({"example.com/exit-code": "not a number"}, id="not-ours"),
    ],
)
def test_readable_annotations_pass(notes: dict[str, str]) -> None:
    validate(pod("web", annotations=notes))
    assert list(kubelet_annotation_problems(notes)) == []


def test_a_deployment_template_with_an_unreadable_annotation_is_refused() -> None:
    labels = {"app": "web"}
    template = PodTemplateSpec(
        metadata=ObjectMeta(labels=labels, annotations={EXIT_CODE_ANNOTATION: "x"}),
        spec=pod("t", containers=[container("web")]).spec,
    )
    deployment = Deployment(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=DeploymentSpec(selector=LabelSelector(match_labels=labels), template=template),
    )
    with pytest.raises(Invalid) as err:
        validate(deployment)
    assert err.value.field == f"spec.template.metadata.annotations[{EXIT_CODE_ANNOTATION}]"
