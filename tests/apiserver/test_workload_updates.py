"""Upstream's update rules of the workload kinds: immutable selectors, a Job's template and
completions, the StatefulSet's short list of mutable spec fields. A refused update changes
nothing; a Deployment's template and replicas stay mutable (a rollout, a scale)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.apps import StatefulSetOrdinals
from emulator.base.api.core import LabelSelector
from emulator.base.api.errors import Invalid
from tests.apiserver.test_workload_verbs import _obj, _server

NEW_SELECTOR = LabelSelector(match_labels={"app": "web", "v": "2"})


def _relabel_template(spec: Any, labels: dict[str, str]) -> Any:
    template = spec.template
    return replace(spec, template=replace(template, metadata=replace(template.metadata, labels=labels)))


def _selector_change(spec: Any) -> Any:
    return replace(_relabel_template(spec, {"app": "web", "v": "2"}), selector=NEW_SELECTOR)


@pytest.mark.parametrize(
    ("kind", "change", "path", "detail"),
    [
        *(
            pytest.param(
                kind,
                _selector_change,
                "spec.selector",
                'Invalid value: {"matchLabels":{"app":"web","v":"2"}}: field is immutable',
                id=f"{kind}-selector",
            )
            for kind in ("Deployment", "ReplicaSet", "DaemonSet")
        ),
        pytest.param(
            "StatefulSet",
            lambda spec: replace(spec, service_name="other"),
            "spec",
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
            "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            id="StatefulSet-service-name",
        ),
        pytest.param(
            "Job",
            lambda spec: replace(spec, completions=9),
            "spec.completions",
            "Invalid value: 9: field is immutable",
            id="Job-completions",
        ),
        pytest.param(
            "Job",
            lambda spec: replace(
                spec, template=replace(spec.template, spec=replace(spec.template.spec, restart_policy="OnFailure"))
            ),
            "spec.template",
            None,
            id="Job-template",
        ),
    ],
)
def test_refused_updates_change_nothing(kind: str, change: Any, path: str, detail: str | None) -> None:
    server = _server()
    created = server.create(_obj(kind))
    revision = server.revision
    with pytest.raises(Invalid) as err:
        server.update(replace(created, spec=change(created.spec)))
    assert err.value.field == path
    if detail is not None:
        assert err.value.detail == detail
    assert server.revision == revision


@pytest.mark.parametrize(
    ("kind", "change"),
    [
        pytest.param("Deployment", lambda s: _relabel_template(s, {"app": "web", "track": "canary"}), id="rollout"),
        pytest.param("Deployment", lambda s: replace(s, replicas=7), id="scale"),
        pytest.param("StatefulSet", lambda s: replace(s, replicas=7, min_ready_seconds=3), id="statefulset"),
        # upstream ValidateStatefulSetUpdate: spec.ordinals is mutable (GA 1.31)
        pytest.param("StatefulSet", lambda s: replace(s, ordinals=StatefulSetOrdinals(start=5)), id="sts-ordinals"),
        pytest.param("Job", lambda s: replace(s, parallelism=5, suspend=True), id="job-parallelism"),
    ],
)
def test_allowed_updates_bump_the_generation(kind: str, change: Any) -> None:
    server = _server()
    created = server.create(_obj(kind))
    updated = server.update(replace(created, spec=change(created.spec)))
    assert updated.metadata.generation == 2
