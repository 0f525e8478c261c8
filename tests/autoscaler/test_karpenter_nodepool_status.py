"""A NodePool's status as kubernetes-sigs/karpenter v1.9.1 writes it: the conditions
(pkg/apis/v1/nodepool_status.go NewReadyConditions(ValidationSucceeded, NodeClassReady) over
awslabs/operatorpkg status/condition_set.go; nodepool/validation, nodepool/readiness,
nodepool/registrationhealth, nodeclaim/lifecycle/registration.go), the counter
(nodepool/counter: BaseResources overlaid with the NodeClaims' capacity), IsManaged and the
provisioner's NodePool filter (provisioning/provisioner.go NewScheduler), and the printer
columns ``kubectl get nodepools`` shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from msgspec.structs import replace

from agents.autoscaler.karpenter.nodepoolstatus import nodepool_status, provisions
from emulator.base.api.codec import object_from_dict
from emulator.base.api.karpenter import default_karpenter
from emulator.base.api.meta import Condition
from emulator.base.api.quantity import parse_quantity
from emulator.base.http.karpenterprinters import KARPENTER_ROWS
from tests.autoscaler.karpenter_disruption_helpers import run, scenario

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z"


def _pool(generation: int = 1, conditions: list[Condition] | None = None, **spec: Any) -> Any:
    ref = spec.pop("ref", {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"})
    doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
           "metadata": {"name": "p", "generation": generation, "creationTimestamp": T0},
           "spec": {"template": {"spec": {"nodeClassRef": ref, "requirements": []}}, **spec}}  # fmt: skip
    pool = default_karpenter(object_from_dict(doc, source="t"))
    return replace(pool, status=replace(pool.status, conditions=conditions or []))


def _by_type(conditions: list[Condition]) -> dict[str, tuple[str, str, str, str | None]]:
    return {c.type: (c.status, c.reason, c.message, c.last_transition_time) for c in conditions}


def test_first_status() -> None:
    """A new NodePool: its dependents start at its creation time (IsDependentCondition), are set
    True, so Ready turns True; NodeRegistrationHealthy awaits a registration; Ready is last."""
    s = nodepool_status(_pool(), {}, 0, False, T1)
    assert [c.type for c in s.conditions][-1] == "Ready"
    assert _by_type(s.conditions) == {
        "ValidationSucceeded": ("True", "ValidationSucceeded", "", T1),
        "NodeClassReady": ("True", "NodeClassReady", "", T1),
        "NodeRegistrationHealthy": ("Unknown", "AwaitingReconciliation", "object is awaiting reconciliation", T1),
        "Ready": ("True", "Ready", "", T1),
    }
    assert all(c.observed_generation == 1 for c in s.conditions)
    assert s.node_class_observed_generation == 1
    assert {k: q.text for k, q in s.resources.items()} == dict.fromkeys(
        ("cpu", "ephemeral-storage", "memory", "nodes", "pods"), "0"
    )
    assert s.nodes == 0


def test_stable_status_keeps_transition_times() -> None:
    """condition_set.go Set: an unchanged status keeps its lastTransitionTime; nothing to write."""
    pool = _pool()
    first = nodepool_status(pool, {}, 0, False, T1)
    again = nodepool_status(replace(pool, status=first), {}, 0, False, T2)
    assert again == first


@pytest.mark.parametrize(
    ("registered", "generation", "expected"),
    [
        pytest.param(True, 1, ("True", "NodeRegistrationHealthy"), id="registered-after"),
        pytest.param(False, 1, ("Unknown", "AwaitingReconciliation"), id="no-registration"),
        pytest.param(True, 2, ("Unknown", "AwaitingReconciliation"), id="registered-before-the-reset"),
    ],
)
def test_registration_health(registered: bool, generation: int, expected: tuple[str, str]) -> None:
    """registration.go updateNodePoolRegistrationHealth sets True on a registration after the
    reset; registrationhealth/controller.go resets to Unknown when the condition's
    observedGeneration is not the NodePool's (a registration before that reset does not count,
    whatever the second it happened in)."""
    first = nodepool_status(_pool(), {}, 0, False, T1)
    pool = replace(_pool(generation), status=first)
    s = nodepool_status(pool, {}, 1, registered, T1)
    status, reason, _, _ = _by_type(s.conditions)["NodeRegistrationHealthy"]
    assert (status, reason) == expected


def test_stale_dependent_is_set_again() -> None:
    """A dependent left False by an older generation (unhealthy for recomputeRootCondition) is set
    again by its controller at the new generation: True, with a new transition time; Ready True."""
    old = Condition(type="ValidationSucceeded", status="False", observed_generation=1,
                    last_transition_time=T1, reason="NodePoolValidationFailed", message="bad")  # fmt: skip
    pool = _pool(2, [old])
    s = nodepool_status(pool, {}, 0, False, T2)
    assert _by_type(s.conditions)["Ready"][:2] == ("True", "Ready")
    assert _by_type(s.conditions)["ValidationSucceeded"] == ("True", "ValidationSucceeded", "", T2)


def test_counter_overlays_base_resources() -> None:
    resources = {"cpu": parse_quantity("8"), "memory": parse_quantity("16Gi"), "nodes": parse_quantity("2")}
    s = nodepool_status(_pool(), resources, 2, False, T1)
    assert {k: q.text for k, q in s.resources.items()} == {
        "cpu": "8", "ephemeral-storage": "0", "memory": "16Gi", "nodes": "2", "pods": "0",
    }  # fmt: skip
    assert s.nodes == 2


@pytest.mark.parametrize(
    ("pool", "expected"),
    [
        pytest.param(replace(_pool(), status=nodepool_status(_pool(), {}, 0, False, T1)), True, id="ready"),
        pytest.param(_pool(), False, id="not-ready-yet"),
        pytest.param(
            _pool(ref={"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}), False, id="unmanaged"
        ),
        pytest.param(
            replace(_pool(replicas=2), status=nodepool_status(_pool(replicas=2), {}, 0, False, T1)), False, id="static"
        ),
    ],
)
def test_provisions(pool: Any, expected: bool) -> None:
    """NewScheduler: ListManaged, then not static, Ready, not deleting."""
    assert provisions(pool) is expected


def test_printer_columns() -> None:
    """The CRD's columns (NodeClass, Nodes, Ready, Age; -o wide: Weight, CPU, Memory)."""
    resources = {"cpu": parse_quantity("4"), "memory": parse_quantity("8Gi")}
    pool = _pool()
    pool = replace(pool, status=nodepool_status(pool, resources, 1, False, T1))
    cells = KARPENTER_ROWS["NodePool"](pool, lambda _t: "5s")
    assert cells == ["p", "default", "1", "True", "5s", None, "4", "8Gi"]


def test_run_writes_the_status(tmp_path: Path) -> None:
    """A run: the NodePool is Ready, registration healthy once its NodeClaim registered, and
    counts its nodes and their capacity."""
    r = run(scenario(tmp_path, replicas=2, disruption={"consolidateAfter": "Never"}, steps=[{"sleep": "1m"}]))
    pool = r.kind("NodePool")["default"]
    got = _by_type(pool.status.conditions)
    assert {t: v[0] for t, v in got.items()} == {
        "ValidationSucceeded": "True", "NodeClassReady": "True", "NodeRegistrationHealthy": "True", "Ready": "True",
    }  # fmt: skip
    assert pool.status.nodes == len(r.kind("NodeClaim")) >= 1
    assert pool.status.resources["nodes"].text == str(pool.status.nodes)


def test_unmanaged_nodepool_is_ignored(tmp_path: Path) -> None:
    """nodepoolutils.IsManaged: a NodePool of another provider's NodeClass gets no status and
    launches nothing; its pods stay pending."""
    path = scenario(tmp_path, replicas=1, steps=[{"sleep": "1m"}])
    doc = yaml.safe_load(path.read_text())
    ref = doc["autoscaling"]["karpenter"]["nodePools"][0]["spec"]["template"]["spec"]["nodeClassRef"]
    ref.update(group="karpenter.k8s.aws", kind="EC2NodeClass")
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    r = run(path)
    assert r.kind("NodeClaim") == {}
    assert r.kind("NodePool")["default"].status.conditions == []


def test_failed_status_write_is_retried() -> None:
    """nodepool/counter and registrationhealth requeue when the status write fails: the change
    key is cached only after a successful write, so the next pass writes again."""
    import asyncio
    from types import SimpleNamespace

    from agents.autoscaler.karpenter.provisioner import Karpenter
    from agents.autoscaler.karpenter.tracking import ClaimTracking
    from emulator.base.api.errors import ApiError

    writes: list[Any] = []

    async def update_status(obj: Any) -> None:
        writes.append(obj)
        if len(writes) == 1:
            raise ApiError("conflict")

    k = object.__new__(Karpenter)
    pool = _pool()
    pool = replace(pool, metadata=replace(pool.metadata, uid="uid-p", resource_version="1"))
    pool = replace(pool, status=nodepool_status(pool, {}, 0, False, T0))
    k.claims = SimpleNamespace(objects=list)
    k.pools = SimpleNamespace(objects=lambda: [pool])
    k.disruption = SimpleNamespace(marked_for_deletion=lambda name: False)
    k.disruption.track = ClaimTracking(k, watching=False)
    k.clock = SimpleNamespace(timestamp=lambda: T1)
    k.client = SimpleNamespace(update_status=update_status)
    k._pool_status_keys, k._registrations = {}, {"uid-p"}
    asyncio.run(k._pool_counters())
    asyncio.run(k._pool_counters())
    assert len(writes) == 2
    assert _by_type(writes[1].status.conditions)["NodeRegistrationHealthy"][0] == "True"  # not lost
    assert "uid-p" not in k._registrations
    asyncio.run(k._pool_counters())
    assert len(writes) == 2  # cached after the success


def test_nodeclaims_owned_by_their_nodepool(tmp_path: Path) -> None:
    """nodeclaimtemplate.go ToNodeClaim: a NodeClaim's owner reference is its NodePool (UID,
    blockOwnerDeletion); registration.go counts a registration only for that owner's UID."""
    r = run(scenario(tmp_path))
    (pool,) = r.kind("NodePool").values()
    claims = list(r.kind("NodeClaim").values())
    assert claims
    for c in claims:
        (ref,) = c.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name, ref.uid) == ("karpenter.sh/v1", "NodePool", pool.metadata.name,
                                                                  pool.metadata.uid)  # fmt: skip
        assert ref.block_owner_deletion is True
    assert _by_type(pool.status.conditions)["NodeRegistrationHealthy"][0] == "True"
