"""VolumeZone (upstream ``volume_zone_test.go``: ``TestSingleZone``, ``TestMultiZone``,
``TestWithBinding``), VolumeRestrictions (``volume_restrictions_test.go``:
``TestAccessModeConflicts``) and NodeVolumeLimits (``csi_test.go``: ``TestCSILimits``) as
tables, with their hints."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.framework.types import Code, CycleState, PodInfo, QueueingHint
from agents.scheduler.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from agents.scheduler.plugins.volumerestrictions import ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT, VolumeRestrictions
from agents.scheduler.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from tests import builders

from .volume_helpers import (
    IMMEDIATE,
    FakeHandle,
    claim_pod,
    classes,
    csi_node,
    listers,
    node,
    node_info,
    pv,
    pvc,
    storage_class,
)

UU = Code.UnschedulableAndUnresolvable
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"

ZONE_PVS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Multi", labels={BETA_ZONE: "us-west1-a__us-west1-b"}),
]
ZONE_PVCS = [
    pvc("PVC_1", volume="Vol_1", bound=True),
    pvc("PVC_2", volume="Vol_2", bound=True),
    pvc("PVC_3", volume="Vol_3", bound=True),
    pvc("PVC_Stable_1", volume="Vol_Stable_1", bound=True),
    pvc("PVC_Stable_2", volume="Vol_Stable_2", bound=True),
    pvc("PVC_Multi", volume="Vol_Multi", bound=True),
    pvc("PVC_4", volume="Vol_not_exist", bound=True),
    pvc("PVC_WFFC"),
    pvc("PVC_Immediate", cls=IMMEDIATE),
]

ZONE_CASES = [
    pytest.param(builders.pod("p"), {}, "skip", id="pod without volume"),
    pytest.param(
        claim_pod("p", "PVC_1"), {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None, id="beta zone match"
    ),
    pytest.param(claim_pod("p", "PVC_1"), {BETA_ZONE: "us-west1-b"}, ERR_REASON_CONFLICT, id="beta zone mismatch"),
    pytest.param(claim_pod("p", "PVC_1"), {ZONE: "us-west1-a"}, None, id="beta PV label, GA node label"),
    pytest.param(claim_pod("p", "PVC_1"), {"uselessLabel": "none"}, None, id="node without topology labels"),
    pytest.param(claim_pod("p", "PVC_2"), {BETA_REGION: "us-west1"}, None, id="region match"),
    pytest.param(claim_pod("p", "PVC_2"), {BETA_REGION: "us-east1"}, ERR_REASON_CONFLICT, id="region mismatch"),
    pytest.param(claim_pod("p", "PVC_Stable_1"), {ZONE: "us-west1-a"}, None, id="GA zone match"),
    pytest.param(claim_pod("p", "PVC_Stable_1"), {ZONE: "us-west1-b"}, ERR_REASON_CONFLICT, id="GA zone mismatch"),
    pytest.param(claim_pod("p", "PVC_Stable_2"), {REGION: "us-west1", ZONE: "us-west1-b"}, None, id="GA region match"),
    pytest.param(claim_pod("p", "PVC_Multi"), {BETA_ZONE: "us-west1-b"}, None, id="multi-zone PV"),
    pytest.param(claim_pod("p", "PVC_Multi"), {BETA_ZONE: "us-west1-c"}, ERR_REASON_CONFLICT, id="multi-zone miss"),
    pytest.param(
        claim_pod("p", "PVC_1", "PVC_2"), {BETA_ZONE: "us-west1-a"}, ERR_REASON_CONFLICT, id="zone ok, region missing"
    ),
    pytest.param(claim_pod("p", "PVC_WFFC"), {ZONE: "us-west1-a"}, "skip", id="unbound WaitForFirstConsumer"),
    pytest.param(claim_pod("p", "PVC_Immediate"), {}, "PersistentVolume had no name", id="unbound immediate"),
    pytest.param(claim_pod("p", "PVC_4"), {}, 'persistentvolume "Vol_not_exist" not found', id="PV missing"),
    pytest.param(claim_pod("p", "PVC_X"), {}, 'persistentvolumeclaim "PVC_X" not found', id="PVC missing"),
]


@pytest.mark.parametrize(("pod", "labels", "want"), ZONE_CASES)
def test_volume_zone(pod: Any, labels: dict[str, str], want: str | None) -> None:
    pl = VolumeZone(None, FakeHandle(listers(*classes(), *ZONE_PVS, *ZONE_PVCS)))  # type: ignore[arg-type]
    state = CycleState()
    _, status = pl.pre_filter(state, pod, [])
    if want == "skip":
        assert status.code is Code.Skip
        return
    if want is not None and not status.is_success():
        assert (status.code, list(status.reasons)) == (UU, [want])
        return
    assert status.is_success()
    got = pl.filter(state, pod, node_info(node("n", labels)))
    assert got.is_success() if want is None else (got.code, list(got.reasons)) == (UU, [want])


def test_volume_zone_hints() -> None:
    pl, pod = VolumeZone(None, None), claim_pod("p", "PVC_1")
    assert pl.is_schedulable_after_pv_change(pod, None, ZONE_PVS[0]) is QueueingHint.Queue
    assert pl.is_schedulable_after_pv_change(pod, ZONE_PVS[0], ZONE_PVS[0]) is QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pv_change(pod, ZONE_PVS[0], ZONE_PVS[5]) is QueueingHint.Queue
    assert pl.is_schedulable_after_pvc_change(pod, None, pvc("PVC_1")) is QueueingHint.Queue
    assert pl.is_schedulable_after_pvc_change(pod, None, pvc("PVC_2")) is QueueingHint.QueueSkip
    assert pl.is_schedulable_after_storage_class_added(pod, None, storage_class("w")) is QueueingHint.Queue
    imm = storage_class("i", mode="Immediate")
    assert pl.is_schedulable_after_storage_class_added(pod, None, imm) is QueueingHint.QueueSkip


# --- VolumeRestrictions ---------------------------------------------------------------------

RWOP_PVCS = [
    pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",)),
    pvc("claim-with-rwop-2", modes=("ReadWriteOncePod",)),
    pvc("claim-with-rwx", modes=("ReadWriteMany",)),
]
WITH_ONE = claim_pod("p1", "claim-with-rwop-1", node="n")
WITH_TWO = claim_pod("p2", "claim-with-rwop-1", "claim-with-rwop-2", node="n")
WITH_RWX = claim_pod("p3", "claim-with-rwx", node="n")

RESTRICTION_CASES = [
    pytest.param(builders.pod("p"), [], "skip", None, id="nothing"),
    pytest.param(claim_pod("p", "claim-with-rwx"), [WITH_RWX], "skip", None, id="rwx shared: no check"),
    pytest.param(claim_pod("p", "claim-with-rwop-1"), [WITH_RWX], "skip", None, id="rwop unused"),
    pytest.param(
        claim_pod("p", "claim-with-rwop-1"),
        [WITH_ONE, WITH_RWX],
        None,
        ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
        id="access mode conflict, unschedulable",
    ),
    pytest.param(
        claim_pod("p", "claim-with-rwop-1", "claim-with-rwop-2"),
        [WITH_TWO, WITH_RWX],
        None,
        ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
        id="two conflicts, unschedulable",
    ),
    pytest.param(
        claim_pod("p", "claim-missing"),
        [],
        'persistentvolumeclaim "claim-missing" not found',
        None,
        id="claim not found",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "prefilter", "want"), RESTRICTION_CASES)
def test_volume_restrictions(pod: Any, existing: list[Any], prefilter: str | None, want: str | None) -> None:
    infos = [node_info(node("n"), *existing), node_info(node("m"))]
    pl = VolumeRestrictions(None, FakeHandle(listers(*RWOP_PVCS), infos))  # type: ignore[arg-type]
    state = CycleState()
    _, status = pl.pre_filter(state, pod, [])
    if prefilter == "skip":
        assert status.code is Code.Skip
        return
    if prefilter is not None:
        assert (status.code, list(status.reasons)) == (UU, [prefilter])
        return
    for ni in infos:  # the claim is in use anywhere: every node fails, preemption may help
        got = pl.filter(state, pod, ni)
        assert (got.code, list(got.reasons)) == (Code.Unschedulable, [want])
    user = next(p for p in existing if p.metadata.name in ("p1", "p2"))
    assert pl.remove_pod(state, pod, PodInfo(user), infos[0]).is_success()
    assert pl.filter(state, pod, infos[0]).is_success()


def test_volume_restrictions_hints() -> None:
    pl, pod = VolumeRestrictions(None, None), claim_pod("p", "claim-with-rwop-1")
    assert pl.is_schedulable_after_pod_deleted(pod, WITH_ONE, None) is QueueingHint.Queue
    assert pl.is_schedulable_after_pod_deleted(pod, WITH_RWX, None) is QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pvc_added(pod, None, RWOP_PVCS[0]) is QueueingHint.Queue
    assert pl.is_schedulable_after_pvc_added(pod, None, RWOP_PVCS[2]) is QueueingHint.QueueSkip


# --- NodeVolumeLimits -------------------------------------------------------------------------

EBS = "ebs.csi.aws.com"
LIMIT_OBJS = [
    storage_class("csi-sc", provisioner=EBS),
    storage_class("ebs-intree", provisioner="kubernetes.io/aws-ebs"),
    pv("csi-pv-1", csi=(EBS, "vol-1"), cls="csi-sc", phase="Bound"),
    pv("csi-pv-2", csi=(EBS, "vol-2"), cls="csi-sc", phase="Bound"),
    pv("csi-pv-3", csi=(EBS, "vol-3"), cls="csi-sc", phase="Bound"),
    pv("intree-pv", in_tree=("awsElasticBlockStore", {"volumeID": "vol-9"}), cls="ebs-intree", phase="Bound"),
    pvc("c1", cls="csi-sc", volume="csi-pv-1", bound=True),
    pvc("c2", cls="csi-sc", volume="csi-pv-2", bound=True),
    pvc("c3", cls="csi-sc", volume="csi-pv-3", bound=True),
    pvc("c-intree", cls="ebs-intree", volume="intree-pv", bound=True),
    pvc("c-unbound", cls="csi-sc"),
    pvc("c-unbound-intree", cls="ebs-intree"),
    pvc("c-no-pv", cls="csi-sc", volume="missing-pv"),
]

LIMIT_CASES = [
    pytest.param(claim_pod("p", "c1"), ["c2"], {EBS: 2}, None, id="fits"),
    pytest.param(claim_pod("p", "c1", "c3"), ["c2"], {EBS: 2}, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, id="exceeds"),
    pytest.param(claim_pod("p", "c1"), ["c1", "c2"], {EBS: 2}, None, id="same volume counted once"),
    pytest.param(claim_pod("p", "c-intree"), ["c1"], {EBS: 1}, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, id="in-tree"),
    pytest.param(claim_pod("p", "c-unbound"), ["c1"], {EBS: 1}, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, id="unbound"),
    pytest.param(
        claim_pod("p", "c-unbound-intree"),
        ["c1"],
        {EBS: 1},
        ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
        id="unbound, in-tree provisioner",
    ),
    pytest.param(claim_pod("p", "c-no-pv"), ["c1"], {EBS: 1}, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, id="PV not yet"),
    pytest.param(claim_pod("p", "c1", "c3"), ["c2"], {EBS: None}, None, id="no allocatable count"),
    pytest.param(claim_pod("p", "c1", "c3"), ["c2"], None, None, id="no CSINode"),
    pytest.param(claim_pod("p", "c1", "c3"), ["c2"], {"other.csi": 1}, None, id="limit of another driver"),
]


@pytest.mark.parametrize(("pod", "existing", "limits", "want"), LIMIT_CASES)
def test_csi_limits(pod: Any, existing: list[str], limits: Any, want: str | None) -> None:
    objs = [*LIMIT_OBJS] + ([csi_node("n", limits)] if limits is not None else [])
    pl = NodeVolumeLimits(None, FakeHandle(listers(*objs)))  # type: ignore[arg-type]
    state = CycleState()
    assert pl.pre_filter(state, pod, [])[1].is_success()
    ni = node_info(node("n"), *(claim_pod(f"e-{c}", c, node="n") for c in existing))
    got = pl.filter(state, pod, ni)
    assert got.is_success() if want is None else (got.code, list(got.reasons)) == (Code.Unschedulable, [want])


def test_csi_limits_missing_claim_and_skip() -> None:
    pl = NodeVolumeLimits(None, FakeHandle(listers(*LIMIT_OBJS)))  # type: ignore[arg-type]
    assert pl.pre_filter(CycleState(), builders.pod("p"), [])[1].code is Code.Skip
    got = pl.filter(CycleState(), claim_pod("p", "nope"), node_info(node("n")))
    assert (got.code, list(got.reasons)) == (
        UU,
        ['looking up PVC default/nope: persistentvolumeclaim "nope" not found'],
    )


def test_csi_limits_hints() -> None:
    pl, pod = NodeVolumeLimits(None, None), claim_pod("p", "c1")
    low, high = csi_node("n", {EBS: 1}), csi_node("n", {EBS: 3})
    assert pl.is_schedulable_after_csi_node_updated(pod, low, high) is QueueingHint.Queue
    assert pl.is_schedulable_after_csi_node_updated(pod, high, low) is QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pod_deleted(pod, claim_pod("q", "c2", node="n"), None) is QueueingHint.Queue
    assert pl.is_schedulable_after_pod_deleted(pod, builders.pod("q", node="n"), None) is QueueingHint.QueueSkip
