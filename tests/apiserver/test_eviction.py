"""The pods/eviction subresource (``ApiServer.evict``): upstream's decisions, the writes in
order (PDB status, the pod's DisruptionTarget condition as verb ``evict``, the delete), and
that a refused eviction changes nothing."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Binding, LabelSelector, PodCondition
from emulator.base.api.errors import Conflict, InternalError, NotFound, TooManyRequests
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus
from emulator.base.apiserver import ApiServer
from emulator.base.apiserver.server import WriteRecord
from emulator.base.client.client import Client
from tests import builders
from tests.apiserver.test_workload_verbs import _server

APP = {"app": "web"}
WEB = LabelSelector(match_labels=APP)
DB = LabelSelector(match_labels={"app": "db"})
G = [("evict", "Pod"), ("delete", "Pod")]
"""An admitted eviction's pod writes: the DisruptionTarget condition, then the delete."""


def _pdb(
    name: str = "web",
    *,
    allowed: int = 1,
    observed: int = 1,
    healthy: tuple[int, int] = (3, 2),
    policy: str | None = None,
    selector: LabelSelector | None = WEB,
) -> tuple[PodDisruptionBudget, PodDisruptionBudgetStatus]:
    pdb = PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PodDisruptionBudgetSpec(min_available=2, selector=selector, unhealthy_pod_eviction_policy=policy),
    )
    status = PodDisruptionBudgetStatus(
        observed_generation=observed,
        disruptions_allowed=allowed,
        current_healthy=healthy[0],
        desired_healthy=healthy[1],
        expected_pods=3,
    )
    return pdb, status


def _setup(
    *pdbs: tuple[PodDisruptionBudget, PodDisruptionBudgetStatus], phase: str = "Running", ready: bool = True
) -> tuple[ApiServer, list[WriteRecord]]:
    server = _server()
    for pdb, status in pdbs:
        created = server.create(pdb)
        server.update_status(replace(created, status=status))
    created = server.create(builders.pod("web-0", labels=APP, grace_seconds=30))
    server.bind(_binding("web-0", "n1"))
    pod = server.get("Pod", "web-0", "default")
    conditions = [PodCondition(type="Ready", status="True" if ready else "False")]
    server.update_status(replace(pod, status=replace(pod.status, phase=phase, conditions=conditions)))
    writes: list[WriteRecord] = []
    server.add_write_listener(writes.append)
    return server, writes


def _binding(name: str, node: str) -> Binding:
    return Binding(metadata=ObjectMeta(name=name, namespace="default"), target=ObjectReference(kind="Node", name=node))


def _verbs(writes: list[WriteRecord]) -> list[tuple[str, str]]:
    return [(w.verb, w.kind) for w in writes]


@pytest.mark.parametrize(
    ("pdbs", "phase", "ready", "verbs"),
    [
        pytest.param((), "Running", True, G, id="no-pdb"),
        pytest.param((_pdb(),), "Running", True, [("updateStatus", "PodDisruptionBudget"), *G], id="allowed"),
        pytest.param((_pdb(allowed=0),), "Succeeded", True, G, id="terminal-pod-ignores-pdb"),
        pytest.param((_pdb(allowed=0),), "Pending", False, G, id="pending-pod-ignores-pdb"),
        pytest.param((_pdb(allowed=0, policy="AlwaysAllow"),), "Running", False, G, id="always-allow-unready"),
        pytest.param((_pdb(allowed=0, healthy=(2, 2)),), "Running", False, G, id="if-healthy-budget-unready"),
        pytest.param((_pdb(allowed=0, selector=None),), "Running", True, G, id="pdb-without-selector"),
        pytest.param((_pdb(allowed=0, selector=DB),), "Running", True, G, id="pdb-of-other-pods"),
    ],
)  # fmt: skip
def test_admitted_evictions(pdbs: Any, phase: str, ready: bool, verbs: list[tuple[str, str]]) -> None:
    server, writes = _setup(*pdbs, phase=phase, ready=ready)
    server.evict("default", "web-0")
    assert _verbs(writes) == verbs
    marked = writes[-2].new
    (target,) = [c for c in marked.status.conditions if c.type == "DisruptionTarget"]
    assert (target.status, target.reason, target.message) == ("True", "EvictionByEvictionAPI", "Eviction API: evicting")
    if phase == "Succeeded":
        assert writes[-1].new is None  # a terminal pod goes at once
    else:
        assert writes[-1].new.metadata.deletion_timestamp is not None  # bound: graceful, as a delete


def test_an_admitted_eviction_spends_the_budget_and_records_the_pod() -> None:
    server, writes = _setup(_pdb(allowed=1))
    server.evict("default", "web-0")
    pdb = writes[0].new
    assert pdb.status.disruptions_allowed == 0
    assert list(pdb.status.disrupted_pods) == ["web-0"]
    (cond,) = pdb.status.conditions
    assert (cond.type, cond.status, cond.reason) == ("DisruptionAllowed", "False", "InsufficientPods")


def test_a_budget_with_room_left_keeps_its_conditions() -> None:
    server, writes = _setup(_pdb(allowed=2))
    server.evict("default", "web-0")
    assert writes[0].new.status.disruptions_allowed == 1
    assert writes[0].new.status.conditions == []


@pytest.mark.parametrize(
    ("pdbs", "error", "match", "causes"),
    [
        pytest.param(
            (_pdb(allowed=0),), TooManyRequests, "Cannot evict pod as it would violate the pod's disruption budget.",
            ("The disruption budget web needs 2 healthy pods and has 3 currently",), id="blocked",
        ),
        pytest.param(
            (_pdb(allowed=0, healthy=(1, 2)),), TooManyRequests, "would violate", None, id="unready-below-budget",
        ),
        pytest.param(
            (_pdb(allowed=0, selector=LabelSelector()),), TooManyRequests, "would violate", None,
            id="empty-selector-selects-every-pod",
        ),
        pytest.param(
            (_pdb(observed=0),), TooManyRequests, "would violate",
            ("The disruption budget web is still being processed by the server.",), id="status-not-observed",
        ),
        pytest.param(
            (_pdb("a"), _pdb("b")), InternalError,
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            None, id="two-pdbs",
        ),
    ],
)  # fmt: skip
def test_refused_evictions_change_nothing(pdbs: Any, error: type[Exception], match: str, causes: Any) -> None:
    ready = not any(p[1].current_healthy < p[1].desired_healthy for p in pdbs)
    server, writes = _setup(*pdbs, ready=ready)
    revision = server.revision
    with pytest.raises(error, match=match) as info:
        server.evict("default", "web-0")
    assert writes == []
    assert server.revision == revision
    if causes is not None:
        assert isinstance(info.value, TooManyRequests)
        assert info.value.causes == causes
        assert info.value.code == 429
        assert info.value.reason == "TooManyRequests"


def test_missing_pod_and_uid_precondition() -> None:
    server, writes = _setup()
    with pytest.raises(NotFound, match='pods "nope" not found'):
        server.evict("default", "nope")
    with pytest.raises(Conflict, match="Precondition failed"):
        server.evict("default", "web-0", uid="other")
    assert writes == []


def test_an_explicit_grace_period_is_passed_to_the_delete() -> None:
    server, writes = _setup()
    server.evict("default", "web-0", grace_period_seconds=0)
    assert writes[-1].verb == "delete"
    assert writes[-1].new is None


def test_evicting_a_terminating_pod_keeps_its_deletion() -> None:
    server, writes = _setup(_pdb(allowed=0))
    server.delete("Pod", "web-0", "default")
    before = server.get("Pod", "web-0", "default").metadata.deletion_timestamp
    server.evict("default", "web-0")
    assert server.get("Pod", "web-0", "default").metadata.deletion_timestamp == before
    assert all(w.kind == "Pod" for w in writes)


def test_client_evict_counts_the_call_and_its_refusal() -> None:
    server, writes = _setup(_pdb(allowed=0))
    client = Client(server, server.clock, random.Random(0), name="runner")  # type: ignore[arg-type]
    with pytest.raises(TooManyRequests):
        asyncio.run(client.evict("default", "web-0"))
    assert (client.stats.calls, client.stats.errors, writes) == ({"evict": 1}, {"evict": 1}, [])
