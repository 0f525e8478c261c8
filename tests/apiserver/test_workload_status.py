"""Status writes of the workload kinds are validated as upstream's ``Validate<Kind>Status``:
a refused write changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.errors import Invalid
from tests.apiserver.test_workload_verbs import _obj, _server


@pytest.mark.parametrize(
    ("kind", "status", "path", "detail"),
    [
        pytest.param(
            "Deployment",
            {"replicas": -1},
            "status.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
            id="deployment-negative",
        ),
        pytest.param(
            "Deployment",
            {"replicas": 2, "ready_replicas": 3, "available_replicas": 0, "updated_replicas": 0},
            "status.readyReplicas",
            "Invalid value: 3: cannot be greater than status.replicas",
            id="deployment-ready-above-replicas",
        ),
        pytest.param(
            "ReplicaSet",
            {"replicas": 3, "fully_labeled_replicas": 3, "ready_replicas": 1, "available_replicas": 2},
            "status.availableReplicas",
            "Invalid value: 2: cannot be greater than readyReplicas",
            id="replicaset-available-above-ready",
        ),
        pytest.param(
            "Job", {"failed": -1}, "status.failed", "Invalid value: -1: must be greater than or equal to 0", id="job"
        ),
        pytest.param(
            "DaemonSet",
            {"number_ready": -2},
            "status.numberReady",
            "Invalid value: -2: must be greater than or equal to 0",
            id="daemonset",
        ),
        pytest.param(
            "PodDisruptionBudget",
            {"disruptions_allowed": -1},
            "status.disruptionsAllowed",
            "Invalid value: -1: must be greater than or equal to 0",
            id="pdb",
        ),
    ],
)
def test_refused_status_writes(kind: str, status: dict[str, Any], path: str, detail: str) -> None:
    server = _server()
    created = server.create(_obj(kind))
    revision = server.revision
    with pytest.raises(Invalid) as err:
        server.update_status(replace(created, status=replace(created.status, **status)))
    assert (err.value.field, err.value.detail) == (path, detail)
    assert server.revision == revision


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "PodDisruptionBudget"])
def test_the_status_a_controller_writes_is_accepted(kind: str) -> None:
    server = _server()
    created = server.create(_obj(kind))
    written = server.update_status(replace(created, status=_obj(kind).status))
    assert written.status == _obj(kind).status
