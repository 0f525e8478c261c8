"""The template hashes cover the whole template, unmodelled fields included; and
``template_hash`` of a template whose containers request resources (a regression: the
StatefulSet and DaemonSet controllers crashed on a template with ``resources.requests``, the
hash's encoder knowing no Quantity)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.controllers.deployment.util import compute_hash, equal_ignore_hash
from agents.controllers.history import template_hash
from emulator.base.api.apps import Deployment
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import PodSpec
from emulator.base.api.podtemplate import PodTemplateSpec
from tests.builders import container


def _template(cpu: str | None) -> PodTemplateSpec:
    requests = {"cpu": cpu} if cpu is not None else None
    return PodTemplateSpec(spec=PodSpec(containers=[container("c", requests=requests)]))


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param("50m", "50m", True, id="equal-requests-equal-hash"),
        pytest.param("50m", "100m", False, id="other-request-other-hash"),
        pytest.param(None, "50m", False, id="request-added"),
    ],
)
def test_template_with_requests_hashes(a: str | None, b: str | None, same: bool) -> None:
    assert (template_hash(_template(a)) == template_hash(_template(b))) is same


def _decoded(container_extra: dict[str, object], spec_extra: dict[str, object] | None = None) -> PodTemplateSpec:
    """A Deployment's template decoded from a manifest, unmodelled fields and all."""
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx", **container_extra}], **(spec_extra or {})},
            },
        },
    }
    deployment = object_from_dict(doc, source="d.yaml")
    assert isinstance(deployment, Deployment)
    return deployment.spec.template


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param(_decoded({}), _decoded({}), True, id="nothing-unmodelled"),
        pytest.param(_decoded({"env": [{"name": "A", "value": "1"}]}), _decoded({}), False, id="env-added"),
        pytest.param(
            _decoded({"env": [{"name": "A", "value": "1"}]}),
            _decoded({"env": [{"name": "A", "value": "2"}]}),
            False,
            id="env-value",
        ),
        pytest.param(_decoded({"command": ["a"]}), _decoded({"command": ["a"]}), True, id="same-command"),
        pytest.param(_decoded({}, {"volumes": [{"name": "v", "emptyDir": {}}]}), _decoded({}), False, id="volume"),
        pytest.param(
            _decoded({"readinessProbe": {"exec": {"command": ["x"]}}, "args": ["b"]}),
            _decoded({"args": ["b"], "readinessProbe": {"exec": {"command": ["x"]}}}),
            True,
            id="key-order-does-not-matter",
        ),
    ],
)
def test_every_template_field_is_hashed_and_compared(a: PodTemplateSpec, b: PodTemplateSpec, same: bool) -> None:
    """Upstream hashes and compares the whole template, modelled or not: ``ComputeHash``
    (pkg/controller/controller_utils.go; the Deployment's pod-template-hash),
    ``HashControllerRevision`` (pkg/controller/history; StatefulSet/DaemonSet revisions) and
    ``EqualIgnoreHash`` (pkg/controller/deployment/util)."""
    assert (template_hash(a) == template_hash(b)) is same
    assert (compute_hash(a, None) == compute_hash(b, None)) is same
    assert equal_ignore_hash(a, b) is same


def test_the_hash_of_unmodelled_fields_is_the_same_in_another_process() -> None:
    """Stable across runs and processes (no ``PYTHONHASHSEED``-dependent order)."""
    template = _decoded({"env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}], "command": ["x"]})
    code = (
        "from tests.controllers.test_history_hash import _decoded;"
        "from agents.controllers.history import template_hash;"
        "env = [{'name': 'B', 'value': '2'}, {'name': 'A', 'value': '1'}];"
        "print(template_hash(_decoded({'command': ['x'], 'env': env})))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": str(Path(__file__).parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == template_hash(template)
