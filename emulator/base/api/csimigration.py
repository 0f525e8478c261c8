"""A PersistentVolume as a CSI volume: its own ``spec.csi``, or an in-tree source translated as
upstream's CSI migration (``k8s.io/csi-translation-lib``) translates it, and the name of the
VolumeAttachment of a CSI volume on a node (upstream ``pkg/volume/csi/csi_attacher.go``
``getAttachmentName``). Shared by the attach/detach controller, the kubelet and the scheduler.

Translated (CSIMigration is GA and on for each in 1.34): ``awsElasticBlockStore`` →
``ebs.csi.aws.com`` (handle: the volume ID, ``aws://<zone>/vol-…`` reduced to ``vol-…``),
``gcePersistentDisk`` → ``pd.csi.storage.gke.io`` (``projects/UNSPECIFIED/zones/<zone>/disks/<pd>``,
the zone from the PV's zone label; ``regions/<region>`` for a multi-zone label ``a__b``;
``UNSPECIFIED`` without one), ``azureDisk`` → ``disk.csi.azure.com`` (``diskURI``), ``cinder`` →
``cinder.csi.openstack.org`` (``volumeID``). Other in-tree sources (hostPath, local, nfs...)
are not CSI volumes and are never attached.
"""

from __future__ import annotations

import hashlib
from typing import Final

from emulator.base.api.storage import PersistentVolume

__all__ = ["MIGRATED_DRIVERS", "MIGRATED_PLUGINS_ANNOTATION", "MIGRATED_PROVISIONERS", "attachment_name", "csi_source"]

MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
"""A CSINode's in-tree plugins migrated to CSI on that node (comma-separated)."""

MIGRATED_DRIVERS: Final = {
    "aws_elastic_block_store": "ebs.csi.aws.com",
    "gce_persistent_disk": "pd.csi.storage.gke.io",
    "azure_disk": "disk.csi.azure.com",
    "cinder": "cinder.csi.openstack.org",
}
"""In-tree source attribute → the CSI driver that serves it under migration."""
MIGRATED_PROVISIONERS: Final = {
    "kubernetes.io/aws-ebs": MIGRATED_DRIVERS["aws_elastic_block_store"],
    "kubernetes.io/gce-pd": MIGRATED_DRIVERS["gce_persistent_disk"],
    "kubernetes.io/azure-disk": MIGRATED_DRIVERS["azure_disk"],
    "kubernetes.io/cinder": MIGRATED_DRIVERS["cinder"],
}
"""In-tree StorageClass provisioner → the CSI driver that provisions for it under migration."""

UNSPECIFIED: Final = "UNSPECIFIED"
ZONE_LABEL: Final = "topology.kubernetes.io/zone"
BETA_ZONE_LABEL: Final = "failure-domain.beta.kubernetes.io/zone"


def _ebs_handle(volume_id: str) -> str:
    """Upstream ``KubernetesVolumeIDToEBSVolumeID`` (without its format check)."""
    if not volume_id.startswith("aws://"):
        return volume_id
    rest = volume_id[len("aws://") :]
    path = rest.split("/", 1)[1] if "/" in rest else ""
    return path.strip("/")


def _gce_handle(pv: PersistentVolume, pd_name: str) -> str:
    labels = pv.metadata.labels
    zones_label = labels.get(BETA_ZONE_LABEL, "") or labels.get(ZONE_LABEL, "")
    zones = zones_label.split("__")
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        region = zones[0].rsplit("-", 1)[0]
        return f"projects/{UNSPECIFIED}/regions/{region}/disks/{pd_name}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"


def csi_source(pv: PersistentVolume) -> tuple[str, str] | None:
    """(driver, volume handle) of ``pv`` as a CSI volume, or None when it is not one."""
    spec = pv.spec
    if spec.csi is not None:
        return spec.csi.driver, spec.csi.volume_handle
    if spec.aws_elastic_block_store is not None:
        return MIGRATED_DRIVERS["aws_elastic_block_store"], _ebs_handle(
            str(spec.aws_elastic_block_store.get("volumeID", ""))
        )
    if spec.gce_persistent_disk is not None:
        return MIGRATED_DRIVERS["gce_persistent_disk"], _gce_handle(pv, str(spec.gce_persistent_disk.get("pdName", "")))
    if spec.azure_disk is not None:
        return MIGRATED_DRIVERS["azure_disk"], str(spec.azure_disk.get("diskURI", ""))
    if spec.cinder is not None:
        return MIGRATED_DRIVERS["cinder"], str(spec.cinder.get("volumeID", ""))
    return None


def attachment_name(volume_handle: str, driver: str, node: str) -> str:
    """Upstream ``getAttachmentName``: ``csi-<sha256(handle + driver + node)>``."""
    return "csi-" + hashlib.sha256(f"{volume_handle}{driver}{node}".encode()).hexdigest()
