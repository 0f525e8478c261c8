"""A workload kind's status write checks its status only (its stored spec is valid), with
the same verdict and message as full validation gives: a differential over the status
fields the controllers write."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.apps import Deployment, DeploymentStatus, ReplicaSet, ReplicaSetStatus
from emulator.base.api.core import Namespace
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.validation import validate, validate_status_update
from emulator.base.api.workloaddefaults import default_object
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock
from tests.controllers.appsworld import deployment, replicaset

counts = st.integers(-2, 5)


def verdict(fn: object, obj: object) -> str:
    try:
        fn(obj)  # type: ignore[operator]
    except Invalid as err:
        return str(err)
    return ""


@given(replicas=counts, ready=counts, available=counts, labeled=counts)
def test_replicaset_status_write_agrees_with_full_validation(
    replicas: int, ready: int, available: int, labeled: int
) -> None:
    rs: ReplicaSet = default_object(replicaset("web", 3))
    status = ReplicaSetStatus(
        replicas=replicas, ready_replicas=ready, available_replicas=available, fully_labeled_replicas=labeled
    )
    candidate = replace(rs, status=status)
    assert verdict(validate_status_update, candidate) == verdict(validate, candidate)


@given(replicas=counts, updated=counts, available=counts)
def test_deployment_status_write_agrees_with_full_validation(replicas: int, updated: int, available: int) -> None:
    d: Deployment = default_object(deployment("web", 3))
    status = DeploymentStatus(
        replicas=replicas, updated_replicas=updated, ready_replicas=available, available_replicas=available
    )
    candidate = replace(d, status=status)
    assert verdict(validate_status_update, candidate) == verdict(validate, candidate)


def test_a_negative_count_is_refused_with_its_path() -> None:
    server = ApiServer(StoppedClock(), random.Random(0))
    server.create(Namespace(metadata=ObjectMeta(name="default")))
    rs = server.create(replicaset("web", 1))
    with pytest.raises(Invalid, match=r"status\.replicas: Invalid value: -1: must be greater than or equal to 0"):
        server.update_status(replace(rs, status=ReplicaSetStatus(replicas=-1)))
