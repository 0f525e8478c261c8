"""The volume controllers of kube-controller-manager: the PersistentVolume controller
(``binder``: binding, the provisioning hand-off, reclaim) and the pvc-protection and
pv-protection controllers (``protection``). ``pvutil`` holds the matching rules binding
shares with upstream's ``component-helpers/storage/volume``."""

from agents.controllers.volume.binder import SYNC_PERIOD, PersistentVolumeController
from agents.controllers.volume.handoff import external_message
from agents.controllers.volume.protection import PVCProtectionController, PVProtectionController, claims_of_pod

__all__ = [
    "SYNC_PERIOD",
    "PVCProtectionController",
    "PVProtectionController",
    "PersistentVolumeController",
    "claims_of_pod",
    "external_message",
]
