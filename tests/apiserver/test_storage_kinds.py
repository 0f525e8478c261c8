"""The volume kinds in the API server: upstream's defaulting (``pkg/apis/core/v1/defaults.go``,
``pkg/apis/storage/v1/defaults.go``), the status reset of ``PrepareForCreate`` and the status
subresource, and the update rules (``ValidatePersistentVolumeUpdate``,
``ValidatePersistentVolumeClaimUpdate``, ``ValidateStorageClassUpdate``, ``ValidateCSINodeUpdate``,
``ValidateCSIStorageCapacityUpdate``, ``ValidateVolumeAttachmentUpdate``)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import load_manifests
from emulator.base.api.core import Namespace
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import (
    CSINodeDriver,
    PersistentVolumeClaim,
    PersistentVolumeStatus,
    VolumeAttachmentStatus,
    VolumeNodeResources,
)
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock
from tests.api.test_storage_validation import CAP, CSINODE, DRIVER, PV, PVC, SC, VA


def _api() -> ApiServer:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    return api


def _one(text: str) -> Any:
    (obj,) = load_manifests(text, source="m.yaml")
    return obj


def test_defaults_and_fresh_status() -> None:
    api = _api()
    pv = api.create(replace(_one(PV), status=PersistentVolumeStatus(phase="Bound")))
    assert (pv.spec.persistent_volume_reclaim_policy, pv.spec.volume_mode) == ("Retain", "Filesystem")
    assert pv.status.phase == "Pending"  # the client's status is not kept
    assert pv.status.last_phase_transition_time == pv.metadata.creation_timestamp
    pvc = api.create(_one(PVC))
    assert (pvc.spec.volume_mode, pvc.status.phase) == ("Filesystem", "Pending")
    assert pvc.spec.storage_class_name is None  # no default class exists
    sc = api.create(_one(SC))
    assert (sc.reclaim_policy, sc.volume_binding_mode) == ("Delete", "Immediate")
    driver = api.create(_one(DRIVER)).spec
    assert (driver.attach_required, driver.pod_info_on_mount, driver.storage_capacity) == (True, False, False)
    assert (driver.requires_republish, driver.se_linux_mount) == (False, False)
    assert (driver.fs_group_policy, driver.volume_lifecycle_modes) == ("ReadWriteOnceWithFSType", ["Persistent"])
    va = api.create(replace(_one(VA), status=VolumeAttachmentStatus(attached=True)))
    assert va.status.attached is False


def test_status_subresource_writes_only_the_status() -> None:
    api = _api()
    pv = api.create(_one(PV))
    changed = replace(pv, spec=replace(pv.spec, storage_class_name="other"), status=replace(pv.status, phase="Bound"))
    stored = api.update_status(changed)
    assert (stored.status.phase, stored.spec.storage_class_name) == ("Bound", "")
    va = api.create(_one(VA))
    assert api.update_status(replace(va, status=VolumeAttachmentStatus(attached=True))).status.attached is True
    pvc = api.create(_one(PVC))
    bad = replace(pvc, status=replace(pvc.status, capacity={"storage": parse_quantity("-1")}))
    with pytest.raises(Invalid, match=r"status.capacity\[storage\]: Invalid value: -1: must be a valid resource"):
        api.update_status(bad)


def _bound(api: ApiServer, size: str = "1Gi") -> PersistentVolumeClaim:
    pvc = api.create(_one(PVC))
    status = replace(pvc.status, phase="Bound", capacity={"storage": parse_quantity(size)})
    return api.update_status(replace(pvc, status=status))


def _with_storage(pvc: PersistentVolumeClaim, size: str) -> PersistentVolumeClaim:
    resources = replace(pvc.spec.resources, requests={"storage": parse_quantity(size)})
    return replace(pvc, spec=replace(pvc.spec, resources=resources))


def test_claim_update_rules() -> None:
    api = _api()
    pvc = api.create(_one(PVC))
    bound_once = api.update(replace(pvc, spec=replace(pvc.spec, volume_name="pv-a")))
    assert bound_once.spec.volume_name == "pv-a"
    with pytest.raises(Invalid, match=r"spec: Forbidden: spec is immutable after creation except resources.requests"):
        api.update(replace(bound_once, spec=replace(bound_once.spec, volume_name="pv-b")))
    with pytest.raises(Invalid, match="spec: Forbidden: spec is immutable"):  # not bound: no resize
        api.update(_with_storage(bound_once, "2Gi"))
    given = api.update(replace(bound_once, spec=replace(bound_once.spec, storage_class_name="fast")))
    assert given.spec.storage_class_name == "fast"  # a class given to a claim that had none
    with pytest.raises(Invalid, match="spec: Forbidden"):
        api.update(replace(given, spec=replace(given.spec, storage_class_name="slow")))
    with pytest.raises(Invalid, match="spec: Forbidden"):  # upstream's first error; volumeMode's follows
        api.update(replace(given, spec=replace(given.spec, volume_mode="Block")))


def test_bound_claim_grows_but_not_below_its_capacity() -> None:
    api = _api()
    pvc = _bound(api, "1Gi")
    grown = api.update(_with_storage(pvc, "5Gi"))
    assert grown.spec.resources.requests["storage"].text == "5Gi"
    with pytest.raises(Invalid, match=r"spec.resources.requests.storage: Forbidden: field can not be less than status"):
        api.update(_with_storage(grown, "1Gi"))
    assert api.update(_with_storage(grown, "2Gi")).spec.resources.requests["storage"].text == "2Gi"


def test_volume_update_rules() -> None:
    api = _api()
    pv = api.create(_one(PV))
    other = replace(pv.spec.csi, volume_handle="vol-2")
    with pytest.raises(
        Invalid, match=r"spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable"
    ):
        api.update(replace(pv, spec=replace(pv.spec, csi=other)))
    with pytest.raises(Invalid, match='volumeMode: Invalid value: "Block": field is immutable'):
        api.update(replace(pv, spec=replace(pv.spec, volume_mode="Block")))
    claimed = api.update(replace(pv, spec=replace(pv.spec, persistent_volume_reclaim_policy="Delete")))
    assert claimed.spec.persistent_volume_reclaim_policy == "Delete"


@pytest.mark.parametrize(
    ("text", "change", "message"),
    [
        pytest.param(SC, {"provisioner": "other.csi"}, "provisioner: Forbidden: updates to provisioner are forbidden.",
                     id="sc-provisioner"),
        pytest.param(SC, {"parameters": {"type": "io2"}}, "parameters: Forbidden: updates to parameters are forbidden.",
                     id="sc-parameters"),
        pytest.param(SC, {"reclaim_policy": "Retain"},
                     "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.", id="sc-reclaim"),
        pytest.param(SC, {"volume_binding_mode": "WaitForFirstConsumer"},
                     'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable', id="sc-binding"),
        pytest.param(CAP, {"storage_class_name": "slow"}, 'storageClassName: Invalid value: "slow": field is immutable',
                     id="capacity-class"),
    ],
)  # fmt: skip
def test_immutable_fields(text: str, change: dict[str, Any], message: str) -> None:
    api = _api()
    obj = api.create(_one(text))
    with pytest.raises(Invalid) as err:
        api.update(replace(obj, **change))
    assert err.value.detail == message.split(": ", 1)[1]
    assert err.value.field == message.split(": ", 1)[0]


def test_csinode_driver_entries_are_immutable_but_their_count() -> None:
    api = _api()
    node = api.create(_one(CSINODE))
    driver = node.spec.drivers[0]
    counted = replace(driver, allocatable=VolumeNodeResources(count=25))
    node = api.update(replace(node, spec=replace(node.spec, drivers=[counted])))
    assert node.spec.drivers[0].allocatable.count == 25
    moved = replace(counted, node_id="i-2")
    with pytest.raises(Invalid, match=r"spec.drivers: Invalid value: .*: field is immutable"):
        api.update(replace(node, spec=replace(node.spec, drivers=[moved])))
    added = [counted, CSINodeDriver(name="other.csi", node_id="x")]
    assert len(api.update(replace(node, spec=replace(node.spec, drivers=added))).spec.drivers) == 2


def test_volume_attachment_spec_is_immutable() -> None:
    api = _api()
    va = api.create(_one(VA))
    with pytest.raises(Invalid, match=r"spec: Invalid value: .*: field is immutable"):
        api.update(replace(va, spec=replace(va.spec, node_name="n2")))


def test_a_claim_without_a_class_gets_the_default_one() -> None:
    """Upstream's ``DefaultStorageClass`` admission: the newest class marked default (equally
    new ones: the first by name); a claim naming a class, or ``""``, keeps it."""
    api = _api()
    assert api.create(_one(PVC)).spec.storage_class_name is None  # no default class yet
    marked = SC.replace(
        "{name: fast}", "{name: NAME, annotations: {storageclass.kubernetes.io/is-default-class: 'true'}}"
    )
    api.create(_one(marked.replace("NAME", "zeta")))
    api.create(_one(marked.replace("NAME", "alpha")))
    api.create(_one(SC.replace("fast", "plain")))
    claim = _one(PVC)
    assert api.create(replace(claim, metadata=replace(claim.metadata, name="c2"))).spec.storage_class_name == "alpha"
    named = replace(claim, metadata=replace(claim.metadata, name="c3"), spec=replace(claim.spec, storage_class_name=""))
    assert api.create(named).spec.storage_class_name == ""


def test_namespaced_and_cluster_scoped() -> None:
    api = _api()
    assert api.create(_one(PVC)).metadata.namespace == "default"
    assert api.create(_one(CAP)).metadata.namespace == "default"
    assert api.create(_one(PV.replace("{name: pv}", "{name: pv, namespace: default}"))).metadata.namespace == ""
