"""The provisioning hand-off's words: the ``ExternalProvisioning`` Event's text and the
in-tree provisioners CSI migration hands to a CSI driver (upstream ``csi-translation-lib``)."""

from __future__ import annotations

from typing import Final

__all__ = ["ANN_MIGRATED_TO", "IN_TREE_TO_CSI", "external_message"]

ANN_MIGRATED_TO: Final = "pv.kubernetes.io/migrated-to"
IN_TREE_TO_CSI: Final = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}
"""The in-tree provisioners CSI migration hands to a CSI driver (upstream ``csi-translation-lib``)."""


def external_message(provisioner: str) -> str:
    """The ``ExternalProvisioning`` Event's message (upstream's text)."""
    return (
        f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
        "or manually by the system administrator. If volume creation is delayed, please verify "
        "that the provisioner is running and correctly registered."
    )
