"""``template_hash`` of a template whose containers request resources (a regression: the
StatefulSet and DaemonSet controllers crashed on a template with ``resources.requests``, the
hash's encoder knowing no Quantity)."""

from __future__ import annotations

import pytest

from agents.controllers.history import template_hash
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
