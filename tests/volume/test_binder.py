"""The PV controller's binding, ported from upstream's ``binder_test.go`` (syncClaim and
syncVolume tables: unit test sets 1-4) and ``provision_test.go`` (the external hand-off),
each case a small cluster on virtual time: objects in, bindings, phases and Events out."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers.volume import SYNC_PERIOD, external_message
from agents.controllers.volume.cache import VolumeStore
from emulator.base.api.storage import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
)
from emulator.base.api.volumes import PersistentVolumeClaimVolumeSource, Volume
from tests.builders import pod
from tests.volume.world import claim, klass, volume, world

CASES: list[Any] = [
    # (id, volumes, claims, want claim → (volumeName, phase), want volume phases)
    ("1-1 bind to the only matching volume", [volume("v1")], [claim("c1")], {"c1": ("v1", "Bound")}, {"v1": "Bound"}),
    ("1-2 no volume: pending", [], [claim("c1")], {"c1": ("", "Pending")}, {}),
    (
        "1-3 the smallest that fits",
        [volume("big", "10Gi"), volume("small", "2Gi"), volume("tiny", "500Mi")],
        [claim("c1", "1Gi")],
        {"c1": ("small", "Bound")},
        {"big": "Available", "small": "Bound", "tiny": "Available"},
    ),
    (
        "1-4 class must match",
        [volume("gold", cls="gold"), volume("none")],
        [claim("c1", cls="gold")],
        {"c1": ("gold", "Bound")},
        {"gold": "Bound", "none": "Available"},
    ),
    (
        "1-5 access modes: the fewest that offer the claim's",
        [volume("rwx", "1Gi", modes=("ReadWriteOnce", "ReadWriteMany")), volume("rwo", "5Gi")],
        [claim("c1")],
        {"c1": ("rwo", "Bound")},
        {"rwo": "Bound", "rwx": "Available"},
    ),
    (
        "1-6 selector",
        [volume("a", labels={"tier": "a"}), volume("b", labels={"tier": "b"})],
        [claim("c1", selector={"tier": "b"})],
        {"c1": ("b", "Bound")},
        {"a": "Available", "b": "Bound"},
    ),
    (
        "1-7 volume mode mismatch",
        [volume("block", mode="Block")],
        [claim("c1")],
        {"c1": ("", "Pending")},
        {"block": "Available"},
    ),
    (
        "1-8 pre-bound volume (claimRef without uid) wins over a smaller one",
        [volume("pre", "10Gi", claim="c1"), volume("small")],
        [claim("c1")],
        {"c1": ("pre", "Bound")},
        {"pre": "Bound", "small": "Available"},
    ),
    (
        "2-1 claim names its volume",
        [volume("named", "10Gi"), volume("small")],
        [claim("c1", volume_name="named")],
        {"c1": ("named", "Bound")},
        {"named": "Bound", "small": "Available"},
    ),
    ("2-2 claim names a missing volume", [], [claim("c1", volume_name="nope")], {"c1": ("nope", "Pending")}, {}),
    (
        "2-3 claim names a volume too small",
        [volume("named", "500Mi")],
        [claim("c1", volume_name="named")],
        {"c1": ("named", "Pending")},
        {"named": "Available"},
    ),
    (
        "2-4 claim names a volume pre-bound to another claim",
        [volume("named", claim="other")],
        [claim("c1", volume_name="named")],
        {"c1": ("named", "Pending")},
        {"named": "Available"},
    ),
    (
        "two claims, one volume",
        [volume("v1")],
        [claim("c1"), claim("c2")],
        {"c1": ("v1", "Bound"), "c2": ("", "Pending")},
        {"v1": "Bound"},
    ),
]


@pytest.mark.parametrize(("volumes", "claims", "want", "phases"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
@pytest.mark.asyncio
async def test_sync_claim(volumes: list[Any], claims: list[Any], want: dict[str, Any], phases: dict[str, str]) -> None:
    async with world(*volumes, *claims) as w:
        await w.clock.sleep_until(1.0)
        assert w.bindings() == want
        assert w.phases() == phases


@pytest.mark.asyncio
async def test_the_two_sided_bind_writes_upstreams_annotations() -> None:
    async with world(volume("v1", "2Gi", claim="pre"), volume("v2", "5Gi"), claim("pre"), claim("c2", "3Gi")) as w:
        await w.clock.sleep_until(1.0)
        pre, c2, v1, v2 = w.pvc("pre"), w.pvc("c2"), w.pv("v1"), w.pv("v2")
        assert pre
        assert c2
        assert v1
        assert v2
        # pre-bound by the user: the volume keeps no bound-by-controller; the claim gets it
        # (the controller wrote its volumeName), as upstream's bindClaimToVolume
        assert pre.metadata.annotations == {ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}
        assert ANN_BOUND_BY_CONTROLLER not in v1.metadata.annotations
        # chosen by the controller: both sides say so
        assert c2.metadata.annotations == {ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}
        assert v2.metadata.annotations == {ANN_BOUND_BY_CONTROLLER: "yes"}
        assert v2.spec.claim_ref
        assert v2.spec.claim_ref.uid == c2.metadata.uid
        assert c2.status.capacity["storage"].value == 5 * 2**30
        assert c2.status.access_modes == ["ReadWriteOnce"]
        assert v2.status.last_phase_transition_time == w.clock.timestamp(0.0)


@pytest.mark.asyncio
async def test_wait_for_first_consumer_waits_for_the_selected_node() -> None:
    async with world(klass("wffc", wait=True), volume("v1", cls="wffc"), claim("c1", cls="wffc")) as w:
        await w.clock.sleep_until(1.0)
        assert w.bindings() == {"c1": ("", "Pending")}
        assert w.events("WaitForFirstConsumer") == [
            ("c1", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
        ]
        # the scheduler's binder chose v1 for the claim (a static match): the controller completes it
        pv = w.pv("v1")
        c1 = w.pvc("c1")
        assert pv
        assert c1
        ref = replace(pv.spec.claim_ref or volume("x", claim="c1").spec.claim_ref, uid=c1.metadata.uid)  # type: ignore[arg-type]
        w.server.update(replace(pv, spec=replace(pv.spec, claim_ref=ref)))
        await w.clock.sleep_until(2.0)
        assert w.bindings() == {"c1": ("v1", "Bound")}


@pytest.mark.asyncio
async def test_an_unscheduled_pod_using_the_claim_is_named() -> None:
    user = pod("web-0")
    vol = Volume(name="data", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name="c1"))
    user = replace(user, spec=replace(user.spec, volumes=[vol]))
    async with world(klass("wffc", wait=True), claim("c1", cls="wffc"), user) as w:
        await w.clock.sleep_until(SYNC_PERIOD + 1.0)  # the pod index fills after the first sync
        assert ("c1", "WaitForPodScheduled", "waiting for pod web-0 to be scheduled") in w.events()


@pytest.mark.asyncio
async def test_provisioning_is_handed_to_the_external_provisioner() -> None:
    async with world(
        klass("fast"), klass("wffc", wait=True), claim("now", cls="fast"), claim("later", cls="wffc")
    ) as w:
        await w.clock.sleep_until(1.0)
        now = w.pvc("now")
        assert now
        assert now.metadata.annotations[ANN_STORAGE_PROVISIONER] == "ebs.csi.aws.com"
        assert now.metadata.annotations[ANN_BETA_STORAGE_PROVISIONER] == "ebs.csi.aws.com"
        later = w.pvc("later")
        assert later
        assert ANN_STORAGE_PROVISIONER not in later.metadata.annotations
        later = replace(later, metadata=replace(later.metadata, annotations={ANN_SELECTED_NODE: "n1"}))
        w.server.update(later)
        await w.clock.sleep_until(2.0)
        later = w.pvc("later")
        assert later
        assert later.metadata.annotations[ANN_STORAGE_PROVISIONER] == "ebs.csi.aws.com"
        assert ("now", "ExternalProvisioning", external_message("ebs.csi.aws.com")) in w.events()
        # the provisioner's PV, pre-bound to the claim: bound at once
        pv = volume("pvc-x", "1Gi", cls="fast", claim="now", claim_uid=now.metadata.uid, policy="Delete")
        pv = replace(pv, metadata=replace(pv.metadata, annotations={ANN_DYNAMICALLY_PROVISIONED: "ebs.csi.aws.com"}))
        w.server.create(pv)
        await w.clock.sleep_until(3.0)
        assert w.bindings()["now"] == ("pvc-x", "Bound")
        # the resync repeats the hand-off Event while a claim waits
        await w.clock.sleep_until(3.0 + 2 * SYNC_PERIOD)
        ev = [
            e
            for e in w.server.list("Event")[0]
            if e.reason == "ExternalProvisioning" and e.involved_object.name == "later"
        ]
        assert sum(e.count or 1 for e in ev) >= 2


@pytest.mark.asyncio
async def test_unknown_class_fails_provisioning() -> None:
    async with world(claim("c1", cls="missing")) as w:
        await w.clock.sleep_until(1.0)
        assert w.events("ProvisioningFailed") == [
            ("c1", "ProvisioningFailed", 'storageclass.storage.k8s.io "missing" not found')
        ]


@pytest.mark.parametrize(("policy", "want"), [("Retain", {"v1": "Released"}), ("Delete", {})])
@pytest.mark.asyncio
async def test_reclaim_when_the_claim_goes(policy: str, want: dict[str, str]) -> None:
    async with world(volume("v1", policy=policy), claim("c1")) as w:
        await w.clock.sleep_until(1.0)
        assert w.phases() == {"v1": "Bound"}
        w.server.delete("PersistentVolumeClaim", "c1", "default")
        await w.clock.sleep_until(5.0)
        assert w.pvc("c1") is None  # pvc-protection let it go (no pod uses it)
        assert w.phases() == want


@pytest.mark.asyncio
async def test_a_provisioned_volume_with_delete_is_left_to_its_provisioner() -> None:
    c = claim("c1")
    async with world(c) as w:
        await w.clock.sleep_until(1.0)
        c1 = w.pvc("c1")
        assert c1
        pv = volume(
            "pvc-1",
            claim="c1",
            claim_uid=c1.metadata.uid,
            policy="Delete",
            annotations={ANN_DYNAMICALLY_PROVISIONED: "p"},
        )
        w.server.create(pv)
        await w.clock.sleep_until(2.0)
        w.server.delete("PersistentVolumeClaim", "c1", "default")
        await w.clock.sleep_until(5.0)
        assert w.phases() == {"pvc-1": "Released"}


@pytest.mark.asyncio
async def test_a_bound_claim_whose_volume_goes_is_lost() -> None:
    async with world(volume("v1"), claim("c1")) as w:
        await w.clock.sleep_until(1.0)
        pv = w.pv("v1")
        assert pv
        w.server.update(replace(pv, metadata=replace(pv.metadata, finalizers=[])))
        w.server.delete("PersistentVolume", "v1")
        await w.clock.sleep_until(2.0)
        assert w.bindings() == {"c1": ("v1", "Lost")}
        assert (
            "c1",
            "ClaimLost",
            "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
        ) in w.events()


def test_the_volume_index_follows_claim_refs() -> None:
    def versioned(v: Any, rv: str, uid: str) -> Any:
        status = replace(v.status, phase="Available")
        return replace(v, metadata=replace(v.metadata, resource_version=rv, uid=uid), status=status)

    def found(c: Any, *, delay: bool = False) -> str | None:
        v = store.find(c, delay_binding=delay)
        return None if v is None else v.metadata.name

    store = VolumeStore()
    store.store(versioned(volume("b", "2Gi"), "1", "ub"))
    store.store(versioned(volume("a", "2Gi"), "2", "ua"))
    store.store(versioned(volume("big", "9Gi"), "3", "ubig"))
    store.store(versioned(volume("pre", "5Gi", claim="c1"), "4", "up"))
    assert found(claim("c1")) == "pre"
    assert found(claim("c1"), delay=True) == "pre"
    assert found(claim("c2", "2Gi")) == "a"  # the smallest, then by name
    assert found(claim("c2", "3Gi")) == "big"
    assert found(claim("c2", "2Gi"), delay=True) is None
    # a is bound to c2: it leaves the unclaimed; an older copy does not bring it back
    store.store(versioned(volume("a", "2Gi", claim="c2"), "6", "ua"))
    assert not store.store(versioned(volume("a", "2Gi"), "5", "ua"))
    assert [v.metadata.name for v in store.prebound("default", "c2")] == ["a"]
    assert found(claim("c3", "2Gi")) == "b"
    store.delete(volume("pre"))
    assert store.prebound("default", "c1") == []


@pytest.mark.asyncio
async def test_race_claim_before_its_class_binds_at_once() -> None:
    """Upstream's ``IsDelayBindingMode``: a class not (yet) known is not delayed binding."""
    async with world(volume("v1", cls="late"), claim("c1", cls="late")) as w:
        await w.clock.sleep_until(1.0)
        w.server.create(klass("late", wait=True))
        await w.clock.sleep_until(2.0)
        assert w.bindings() == {"c1": ("v1", "Bound")}


@pytest.mark.asyncio
async def test_an_in_tree_provisioner_is_handed_to_its_csi_driver() -> None:
    """CSI migration: ``kubernetes.io/aws-ebs`` claims go to ``ebs.csi.aws.com``."""
    async with world(klass("gp2", "kubernetes.io/aws-ebs"), claim("c1", cls="gp2")) as w:
        await w.clock.sleep_until(1.0)
        c1 = w.pvc("c1")
        assert c1 is not None
        assert c1.metadata.annotations[ANN_STORAGE_PROVISIONER] == "ebs.csi.aws.com"
        assert c1.metadata.annotations["pv.kubernetes.io/migrated-to"] == "ebs.csi.aws.com"
