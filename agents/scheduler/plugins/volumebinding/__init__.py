"""``VolumeBinding`` (upstream ``pkg/scheduler/framework/plugins/volumebinding``), split as
upstream splits it:

=================  =======================================================================
module             owns
=================  =======================================================================
``pvutil``         the PV/PVC matching rules (classes, node affinity, smallest match,
                   allowed topologies, CSIStorageCapacity)
``assume_cache``   the assumed PVs and claims over the scheduler's informers
``binder``         ``VolumeBinder``: claims of a pod, what a node offers, assume, bind, wait
``plugin``         the ``VolumeBinding`` plugin, its args, events and queueing hints
=================  =======================================================================
"""

from __future__ import annotations

from .binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinder,
)
from .plugin import ERR_UNBOUND_IMMEDIATE, NAME, STATE_KEY, VolumeBinding

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "STATE_KEY",
    "VolumeBinder",
    "VolumeBinding",
]
