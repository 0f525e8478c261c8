"""VolumeBinding: upstream's ``volume_binding_test.go`` (``TestVolumeBinding``) and
``binder_test.go`` (``TestFindPodVolumesWithoutProvisioning``, ``...WithProvisioning``,
``...WithCSIMigration``-free capacity cases, ``TestAssumePodVolumes``) as tables; the args;
the events and hints."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.args import ConfigError
from agents.scheduler.framework.types import Code, CycleState, EventResource, QueueingHint
from agents.scheduler.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    VolumeBinding,
)
from emulator.base.api.storage import ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE
from tests import builders

from .volume_helpers import (
    IMMEDIATE,
    FakeHandle,
    capacity,
    claim_pod,
    classes,
    csi_driver,
    listers,
    node,
    node_info,
    pv,
    pvc,
    storage_class,
    with_claims,
)

UU = Code.UnschedulableAndUnresolvable
ZONE_A = {"foo": "bar"}


def plugin(*objs: Any) -> VolumeBinding:
    return VolumeBinding(None, FakeHandle(listers(*classes(), *objs)))  # type: ignore[arg-type]


CASES = [
    pytest.param(builders.pod("p"), [], ZONE_A, "skip", None, id="pod has not pvcs"),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a", volume="pv-a", bound=True), pv("pv-a", claim=("default", "pvc-a"), phase="Bound")],
        ZONE_A,
        None,
        None,
        id="all bound",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"), [], ZONE_A, 'persistentvolumeclaim "pvc-a" not found', None, id="PVC does not exist"
    ),
    pytest.param(
        claim_pod("p", "pvc-a", "pvc-b"),
        [pvc("pvc-a", volume="pv-a", bound=True), pv("pv-a", claim=("default", "pvc-a"), phase="Bound")],
        ZONE_A,
        'persistentvolumeclaim "pvc-b" not found',
        None,
        id="Part of PVCs do not exist",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a", cls=IMMEDIATE)],
        ZONE_A,
        ERR_UNBOUND_IMMEDIATE,
        None,
        id="immediate claims not bound",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a")],
        ZONE_A,
        None,
        [ERR_REASON_BIND_CONFLICT],
        id="unbound claims no matches",
    ),
    pytest.param(
        claim_pod("p", "pvc-a", "pvc-b"),
        [
            pvc("pvc-a", volume="pv-a", bound=True),
            pv("pv-a", claim=("default", "pvc-a"), phase="Bound", affinity={"foo": ["barbar"]}),
            pvc("pvc-b"),
            pv("pv-b", affinity={"foo": ["barbar"]}),
        ],
        ZONE_A,
        None,
        [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT],
        id="bound and unbound unsatisfied",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a", volume="pv-a", bound=True)],
        ZONE_A,
        None,
        [ERR_REASON_PV_NOT_EXIST],
        id="pv not found",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a", phase="Lost", volume="pv-x")],
        ZONE_A,
        'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-x"',
        None,
        id="claim lost",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a"), pv("pv-a", affinity={"foo": ["bar"]})],
        ZONE_A,
        None,
        None,
        id="unbound claim matches a local PV on the node",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a"), pv("pv-a", size="500Mi")],
        ZONE_A,
        None,
        [ERR_REASON_BIND_CONFLICT],
        id="PV too small",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a"), pv("pv-a", modes=("ReadOnlyMany",))],
        ZONE_A,
        None,
        [ERR_REASON_BIND_CONFLICT],
        id="access modes mismatch",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a"), pv("pv-a", phase="Released")],
        ZONE_A,
        None,
        [ERR_REASON_BIND_CONFLICT],
        id="PV not Available",
    ),
    pytest.param(
        claim_pod("p", "pvc-a"),
        [pvc("pvc-a", annotations={ANN_SELECTED_NODE: "other"})],
        ZONE_A,
        None,
        [ERR_REASON_BIND_CONFLICT],
        id="selected node elsewhere",
    ),
    pytest.param(
        with_claims(builders.pod("p"), ephemeral=["data"]),
        [],
        ZONE_A,
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-data"',
        None,
        id="ephemeral claim not yet created",
    ),
]


@pytest.mark.parametrize(("pod", "objs", "labels", "prefilter", "reasons"), CASES)
def test_volume_binding(pod: Any, objs: list[Any], labels: dict[str, str], prefilter: Any, reasons: Any) -> None:
    pl = plugin(*objs)
    state = CycleState()
    _, status = pl.pre_filter(state, pod, [])
    if prefilter == "skip":
        assert status.code is Code.Skip
        return
    if prefilter is not None:
        assert (status.code, list(status.reasons)) == (UU, [prefilter])
        return
    assert status.is_success(), status
    got = pl.filter(state, pod, node_info(node("node-a", labels)))
    if reasons is None:
        assert got.is_success(), got
    else:
        assert (got.code, list(got.reasons)) == (UU, reasons)


PROVISIONING = [
    pytest.param({}, None, None, id="provisioner, no capacity tracking"),
    pytest.param({"provisioner": ""}, None, [ERR_REASON_BIND_CONFLICT], id="no provisioner"),
    pytest.param(
        {"provisioner": "kubernetes.io/no-provisioner"}, None, [ERR_REASON_BIND_CONFLICT], id="no-provisioner"
    ),
    pytest.param({"topologies": [{"foo": ["baz"]}]}, None, [ERR_REASON_BIND_CONFLICT], id="allowed topologies miss"),
    pytest.param({"topologies": [{"foo": ["bar"]}]}, None, None, id="allowed topologies match"),
    pytest.param({}, [], [ERR_REASON_NOT_ENOUGH_SPACE], id="capacity tracked, none published"),
    pytest.param({}, [("1Gi", {"foo": "bar"})], None, id="capacity sufficient"),
    pytest.param({}, [("500Mi", {"foo": "bar"})], [ERR_REASON_NOT_ENOUGH_SPACE], id="capacity too small"),
    pytest.param({}, [("5Gi", {"foo": "other"})], [ERR_REASON_NOT_ENOUGH_SPACE], id="capacity of another topology"),
]


@pytest.mark.parametrize(("cls", "caps", "reasons"), PROVISIONING)
def test_find_pod_volumes_with_provisioning(cls: dict[str, Any], caps: Any, reasons: Any) -> None:
    kw = {"provisioner": "csi.example.com", **cls}
    objs: list[Any] = [storage_class("prov", **kw), pvc("pvc-a", cls="prov")]
    if caps is not None:
        objs.append(csi_driver("csi.example.com", capacity=True))
        objs += [capacity(f"cap-{i}", "prov", size, topo) for i, (size, topo) in enumerate(caps)]
    pl, pod, state = plugin(*objs), claim_pod("p", "pvc-a"), CycleState()
    assert pl.pre_filter(state, pod, [])[1].is_success()
    got = pl.filter(state, pod, node_info(node("node-a", ZONE_A)))
    assert got.is_success() if reasons is None else (got.code, list(got.reasons)) == (UU, reasons)


def test_the_smallest_fitting_pv_is_chosen_and_reserve_assumes_it() -> None:
    pl = plugin(pvc("pvc-a"), pv("pv-big", size="10Gi"), pv("pv-small", size="2Gi"), pv("pv-tiny", size="100Mi"))
    pod, state = claim_pod("p", "pvc-a"), CycleState()
    pl.pre_filter(state, pod, [])
    assert pl.filter(state, pod, node_info(node("node-a"))).is_success()
    assert pl.reserve(state, pod, "node-a").is_success()
    assumed = pl.binder.pv_cache.get("pv-small")
    assert assumed.spec.claim_ref.name == "pvc-a"
    assert assumed.spec.claim_ref.uid == "uid-pvc-a"
    assert assumed.metadata.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"
    assert pl.binder.pv_cache.get_api("pv-small").spec.claim_ref is None
    pl.unreserve(state, pod, "node-a")
    assert pl.binder.pv_cache.get("pv-small").spec.claim_ref is None


def test_an_assumed_pv_is_not_offered_to_the_next_pod() -> None:
    pl = plugin(pvc("pvc-a"), pvc("pvc-b"), pv("pv-1"))
    first, second = claim_pod("p1", "pvc-a"), claim_pod("p2", "pvc-b")
    s1 = CycleState()
    pl.pre_filter(s1, first, [])
    pl.filter(s1, first, node_info(node("node-a")))
    assert pl.reserve(s1, first, "node-a").is_success()
    s2 = CycleState()
    pl.pre_filter(s2, second, [])
    got = pl.filter(s2, second, node_info(node("node-a")))
    assert list(got.reasons) == [ERR_REASON_BIND_CONFLICT]


def test_provisioning_reserve_assumes_the_selected_node() -> None:
    pl = plugin(storage_class("prov", provisioner="csi.example.com"), pvc("pvc-a", cls="prov"))
    pod, state = claim_pod("p", "pvc-a"), CycleState()
    pl.pre_filter(state, pod, [])
    pl.filter(state, pod, node_info(node("node-a")))
    pl.reserve(state, pod, "node-a")
    assert pl.binder.pvc_cache.get("pvc-a", "default").metadata.annotations[ANN_SELECTED_NODE] == "node-a"
    assert ANN_SELECTED_NODE not in pl.binder.pvc_cache.get_api("pvc-a", "default").metadata.annotations


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"bindTimeoutSeconds": -1}, "invalid BindTimeoutSeconds, should not be a negative value"),
        ({"shape": [{"utilization": 0, "score": 0}]}, "unsupported when StorageCapacityScoring feature is disabled"),
    ],
)
def test_args_are_validated(args: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        VolumeBinding(args, None)
    assert VolumeBinding({"bindTimeoutSeconds": 30}, None).binder.bind_timeout == 30.0


def test_events_and_hints() -> None:
    pl = plugin()
    events = {(e.event.resource, e.event.action) for e in pl.events_to_register()}
    assert {r for r, _ in events} == {
        EventResource.StorageClass,
        EventResource.PersistentVolumeClaim,
        EventResource.PersistentVolume,
        EventResource.Node,
        EventResource.CSINode,
        EventResource.CSIDriver,
        EventResource.CSIStorageCapacity,
    }
    pod = claim_pod("p", "pvc-a")
    assert pl.is_schedulable_after_pvc_change(pod, None, pvc("pvc-a")) is QueueingHint.Queue
    assert pl.is_schedulable_after_pvc_change(pod, None, pvc("pvc-b")) is QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pvc_change(pod, None, pvc("pvc-a", ns="other")) is QueueingHint.QueueSkip
    sc = storage_class("s")
    assert pl.is_schedulable_after_storage_class_change(pod, None, sc) is QueueingHint.Queue
    assert pl.is_schedulable_after_storage_class_change(pod, sc, sc) is QueueingHint.QueueSkip
    wider = storage_class("s", topologies=[{"foo": ["bar"]}])
    assert pl.is_schedulable_after_storage_class_change(pod, sc, wider) is QueueingHint.Queue
    small, big = capacity("c", "s", "1Gi", None), capacity("c", "s", "2Gi", None)
    assert pl.is_schedulable_after_capacity_change(pod, small, big) is QueueingHint.Queue
    assert pl.is_schedulable_after_capacity_change(pod, big, small) is QueueingHint.QueueSkip


@pytest.mark.parametrize(
    ("make", "want"),
    [
        pytest.param(lambda: (plugin(), builders.pod("p")), Code.Skip, id="no claims: PreBind has nothing to do"),
        pytest.param(
            lambda: (
                plugin(pvc("pvc-a", volume="pv-a", bound=True), pv("pv-a", claim=("default", "pvc-a"), phase="Bound")),
                claim_pod("p", "pvc-a"),
            ),
            Code.Skip,
            id="all claims bound already",
        ),
        pytest.param(lambda: (plugin(pvc("pvc-a"), pv("pv-1")), claim_pod("p", "pvc-a")), Code.Success, id="to bind"),
    ],
)
def test_pre_bind_pre_flight_skips_exactly_when_pre_bind_would_not_act(make: Any, want: Code) -> None:
    pl, pod = make()
    state = CycleState()
    pl.pre_filter(state, pod, [])
    pl.filter(state, pod, node_info(node("node-a")))
    assert pl.reserve(state, pod, "node-a").is_success()
    assert pl.pre_bind_pre_flight(state, pod, "node-a").code is want
    assert pl.pre_bind_pre_flight(CycleState(), pod, "node-a").code is Code.Skip  # no PreFilter state
