"""A NodeClaim's ``terminationGracePeriod``: kubernetes-sigs/karpenter v1.9.1
pkg/controllers/nodeclaim/lifecycle/controller.go (the termination-timestamp annotation),
pkg/controllers/node/termination/controller.go and terminator/terminator.go (``Drain``,
``DeleteExpiringPods``: pods deleted ``terminationGracePeriodSeconds`` before the node's
termination time, PDBs and do-not-disrupt bypassed), with ``expireAfter`` starting it
(pkg/controllers/nodeclaim/expiration); cases after termination/suite_test.go."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.autoscaler.karpenter.termination import TERMINATION_TIMESTAMP, priority_groups, waiting_eviction
from emulator.base.api.codec import object_from_dict
from emulator.base.runtime.clock import format_timestamp, parse_timestamp
from tests.autoscaler.karpenter_disruption_helpers import run, scenario

PDB = {
    "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
    "spec": {"minAvailable": "100%", "selector": {"matchLabels": {"app": "web"}}},
}  # fmt: skip


def _expiring(tmp: Path, tgp: str | None, **kw: Any) -> Path:
    path = scenario(tmp, replicas=1, down_to=1, disruption={"consolidateAfter": "Never"}, steps=[{"sleep": "8m"}], **kw)
    doc = yaml.safe_load(path.read_text())
    spec = doc["autoscaling"]["karpenter"]["nodePools"][0]["spec"]["template"]["spec"]
    spec["expireAfter"] = "3m"
    if tgp is not None:
        spec["terminationGracePeriod"] = tgp
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize(
    "blocker",
    [
        pytest.param({"objects": [PDB]}, id="pdb"),
        pytest.param({"pod_annotations": {"karpenter.sh/do-not-disrupt": "true"}}, id="do-not-disrupt"),
    ],
)
def test_grace_period_forces_the_drain(tmp_path: Path, blocker: dict[str, Any]) -> None:
    """ "should delete pods ... before the node's terminationGracePeriod": the expired NodeClaim
    is annotated deletionTimestamp + 2m; its blocked pod (30 s grace) is deleted 90 s after the
    deletion with the 30 s left, then the node goes."""
    r = run(_expiring(tmp_path, "2m", **blocker))
    claims = sorted(r.kind("NodeClaim").values(), key=lambda c: r.first[("NodeClaim", c.metadata.name)])
    first = claims[0]
    deleted = parse_timestamp(first.metadata.deletion_timestamp)
    assert first.metadata.annotations[TERMINATION_TIMESTAMP] == format_timestamp(deleted + 120)
    forced = [(t, e) for t, e in r.events if e.reason == "Disrupted"]
    assert forced
    t, event = forced[0]
    assert deleted + 90 < t <= deleted + 92
    assert "This bypasses the PDB of the pod and the do-not-disrupt annotation." in event.message
    assert f"granted {int(deleted + 120 - t)} seconds of grace-period of its 30 terminationGracePeriodSeconds" in (
        event.message
    )
    assert (
        r.messages("TerminationGracePeriodExpiring")[0]
        == f"All pods will be deleted by {format_timestamp(deleted + 120)}"
    )
    # the node went with the instance; the pod's replacement landed on a new NodeClaim, expiring in turn
    assert r.autoscaler["nodesRemoved"] >= 1
    assert len(claims) == 2


def test_without_grace_period_the_drain_waits(tmp_path: Path) -> None:
    """No terminationGracePeriod: the drain waits for the PDB forever (the pod is never forced)."""
    r = run(_expiring(tmp_path, None, objects=[PDB]))
    assert not [e for _, e in r.events if e.reason == "Disrupted"]
    (claim,) = r.kind("NodeClaim").values()
    assert claim.metadata.deletion_timestamp is not None
    assert TERMINATION_TIMESTAMP not in claim.metadata.annotations
    # node/termination/controller.go awaitDrain: terminator/events NodeFailedToDrain on each failing
    # pass, deduplicated per node for 2 minutes (the PDB's refusal shares the key, eviction.go)
    failing = [(t, e) for t, e in r.events if e.reason == "FailedDraining"]
    assert failing
    assert all(e.type == "Warning" for _, e in failing)
    assert failing[0][1].message == "Failed to drain node, 1 pods are waiting to be evicted"
    times = [t for t, _ in failing]
    assert all(b - a >= 120 for a, b in itertools.pairwise(times))
    assert not r.messages("Evicted")


def test_evicted_pods_get_an_event(tmp_path: Path) -> None:
    """terminator/eviction.go Evict: "Evicted pod: <reason>" per evicted pod, the reason the
    NodeClaim's DisruptionReason or "Forceful Termination" (expiry sets none)."""
    r = run(_expiring(tmp_path, None))
    evicted = [e for _, e in r.events if e.reason == "Evicted"]
    assert evicted
    assert {e.message for e in evicted} == {"Evicted pod: Forceful Termination"}
    assert all(e.involved_object.kind == "Pod" for e in evicted)


def _pod(**extra: Any) -> Any:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                           "spec": {"containers": [{"name": "c", "image": "i"}]}}  # fmt: skip
    for key, value in extra.items():
        section, field = key.split("__")
        doc.setdefault(section, {})[field] = value
    return object_from_dict(doc, source="t")


_DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "d"}


@pytest.mark.parametrize(
    ("pod", "now", "waits"),
    [
        pytest.param(_pod(), 0.0, True, id="running"),
        pytest.param(_pod(status__phase="Succeeded"), 0.0, False, id="terminal"),
        pytest.param(_pod(spec__tolerations=[{"operator": "Exists"}]), 0.0, False, id="tolerates-everything"),
        pytest.param(
            _pod(spec__tolerations=[{"key": "karpenter.sh/disrupted", "operator": "Exists", "effect": "NoSchedule"}]),
            0.0,
            False,
            id="tolerates-disrupted",
        ),
        pytest.param(
            _pod(metadata__ownerReferences=[{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}]),
            0.0,
            False,
            id="mirror",
        ),
        pytest.param(
            _pod(metadata__ownerReferences=[{"apiVersion": "x.io/v1", "kind": "Node", "name": "n", "uid": "u"}]),
            0.0,
            True,
            id="node-of-another-group",
        ),
        pytest.param(_pod(metadata__ownerReferences=[_DS]), 0.0, True, id="daemonset-pod-drained"),
        pytest.param(_pod(metadata__deletionTimestamp="2026-01-01T00:00:00Z"), 60.0, True, id="terminating"),
        pytest.param(_pod(metadata__deletionTimestamp="2026-01-01T00:00:00Z"), 61.0, False, id="stuck-terminating"),
    ],
)
def test_waiting_eviction(pod: Any, now: float, waits: bool) -> None:
    """pkg/utils/pod/scheduling.go IsWaitingEviction / IsDrainable / IsStuckTerminating."""
    assert waiting_eviction(pod, now) is waits


def test_priority_groups() -> None:
    """terminator.go groupPodsByPriority: DaemonSet pods (an apps/v1 DaemonSet owner reference,
    controller or not: IsOwnedByDaemonSet) drain after the others of their priority."""
    ds = [{**_DS, "controller": False}]
    pods = [
        _pod(metadata__name="crit-ds", metadata__ownerReferences=ds, spec__priorityClassName="system-node-critical"),
        _pod(metadata__name="crit", spec__priorityClassName="system-cluster-critical"),
        _pod(metadata__name="ds", metadata__ownerReferences=ds),
        _pod(metadata__name="plain"),
        _pod(metadata__name="ds-v1beta", metadata__ownerReferences=[{**_DS, "apiVersion": "apps/v1beta2"}]),
    ]
    got = [[p.metadata.name for p in g] for g in priority_groups(pods)]
    assert got == [["plain", "ds-v1beta"], ["ds"], ["crit"], ["crit-ds"]]


def test_forced_pod_is_not_evicted_again(tmp_path: Path) -> None:
    """terminator.go Drain: a pod DeleteExpiringPods just deleted (its 30 s grace exceeds the
    10 s terminationGracePeriod) is terminating, so IsEvictable excludes it: it is disrupted
    (and counted in podsDisrupted) once."""
    r = run(_expiring(tmp_path, "10s"))
    forced = [e.involved_object.name for _, e in r.events if e.reason == "Disrupted"]
    evicted = [e.involved_object.name for _, e in r.events if e.reason == "Evicted"]
    assert forced
    assert not set(forced) & set(evicted)
    assert r.autoscaler["podsDisrupted"] == len(forced) + len(evicted)


def test_failed_annotation_write_requeues() -> None:
    """nodeclaim/lifecycle/controller.go finalize: when writing the termination-timestamp
    annotation fails the NodeClaim is requeued; nothing drains without its deadline."""
    import asyncio
    from types import SimpleNamespace

    from agents.autoscaler.karpenter.termination import terminate
    from emulator.base.api.errors import ApiError

    async def update(obj: Any) -> None:
        raise ApiError("conflict")

    async def set_taint(name: str, on: bool) -> bool:
        tainted.append(name)
        return True

    tainted: list[str] = []
    claim = object_from_dict(
        {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
         "metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z",
                      "finalizers": ["karpenter.sh/termination"]},
         "spec": {"terminationGracePeriod": "2m", "nodeClassRef": {"group": "g", "kind": "K", "name": "n"},
                  "requirements": []}},
        source="t",
    )  # fmt: skip
    node = object_from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}}, source="t")
    agent = SimpleNamespace(client=SimpleNamespace(update=update), nodes=SimpleNamespace(get=lambda name, ns: node))
    d = SimpleNamespace(agent=agent, terminating={}, set_taint=set_taint)
    asyncio.run(terminate(d, claim))
    assert tainted == []
    assert "c" in d.terminating  # still terminating: the next pass tries again
