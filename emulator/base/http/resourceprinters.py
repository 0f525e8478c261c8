"""Upstream's Table columns and rows of the ``resource.k8s.io`` kinds
(``pkg/printers/internalversion/printers.go``: ``printDeviceClass``, ``printResourceClaim``,
``printResourceClaimTemplate``, ``printResourceSlice``).

A claim's State is upstream's ``resourceClaimState``: ``deleted`` while it is being deleted,
then ``pending`` (no allocation, not deleted) or ``allocated`` followed by ``reserved`` (it has
consumers) or ``deallocating`` (none, and being deleted), joined by commas. A slice prints its
node name (empty for a pool on a node selector or all nodes), driver and pool name.

Kept apart from ``printers``/``tables`` (the other kinds) only for size; they merge these in.
Pure: ``now`` is given (``Since``), no clock reads, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from emulator.base.http.cells import AGE_COLUMN as _AGE
from emulator.base.http.cells import NAME_COLUMN as _NAME
from emulator.base.http.cells import Since
from emulator.base.http.cells import column as _col

__all__ = ["RESOURCE_COLUMNS", "RESOURCE_ROWS", "claim_state"]

RESOURCE_COLUMNS: Final[dict[str, tuple[dict[str, Any], ...]]] = {
    "DeviceClass": (_NAME, _AGE),
    "ResourceClaim": (
        _NAME,
        _col("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
        _AGE,
    ),
    "ResourceClaimTemplate": (_NAME, _AGE),
    "ResourceSlice": (
        _NAME,
        _col("Node", "string", "nodeName identifies the node which provides the resources in this pool."),
        _col("Driver", "string", "driver identifies the DRA driver providing the capacity information."),
        _col("Pool", "string", "name is used to identify the pool."),
        _AGE,
    ),
}
"""Kind → upstream's column definitions (descriptions: the first sentence of upstream's text)."""


def claim_state(claim: ResourceClaim) -> str:
    """Upstream's ``resourceClaimState``."""
    deleted = claim.metadata.deletion_timestamp is not None
    states = ["deleted"] if deleted else []
    if claim.status.allocation is None:
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if claim.status.reserved_for:
            states.append("reserved")
        elif deleted:
            states.append("deallocating")
    return ",".join(states)


def _class_cells(dc: DeviceClass, since: Since) -> list[Any]:
    return [dc.metadata.name, since(dc.metadata.creation_timestamp)]


def _claim_cells(claim: ResourceClaim, since: Since) -> list[Any]:
    return [claim.metadata.name, claim_state(claim), since(claim.metadata.creation_timestamp)]


def _template_cells(t: ResourceClaimTemplate, since: Since) -> list[Any]:
    return [t.metadata.name, since(t.metadata.creation_timestamp)]


def _slice_cells(rs: ResourceSlice, since: Since) -> list[Any]:
    spec = rs.spec
    return [rs.metadata.name, spec.node_name or "", spec.driver, spec.pool.name, since(rs.metadata.creation_timestamp)]


RESOURCE_ROWS: Final[dict[str, Callable[[Any, Since], list[Any]]]] = {
    "DeviceClass": _class_cells,
    "ResourceClaim": _claim_cells,
    "ResourceClaimTemplate": _template_cells,
    "ResourceSlice": _slice_cells,
}
"""Kind → its row printer."""
