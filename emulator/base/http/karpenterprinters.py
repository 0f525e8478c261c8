"""Table columns and rows of the ``karpenter.sh/v1`` kinds: the CRDs' ``additionalPrinterColumns``
(kubernetes-sigs/karpenter v1.9.1 ``pkg/apis/crds/karpenter.sh_nodepools.yaml``,
``karpenter.sh_nodeclaims.yaml``), as apiextensions-apiserver's table convertor serves them:
Name first, then each column (its description ``""`` as the CRD's), a JSONPath that finds
nothing is a null cell, a ``date`` column a human-readable age.

Kept apart from ``printers``/``tables`` (the other kinds) only for size; they merge these in.
Pure: ``now`` is given (``Since``), no clock reads, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from emulator.base.api.karpenter import NodeClaim, NodePool
from emulator.base.api.meta import Condition
from emulator.base.http.cells import NAME_COLUMN as _NAME
from emulator.base.http.cells import Since
from emulator.base.http.cells import column as _col

__all__ = ["KARPENTER_COLUMNS", "KARPENTER_ROWS"]

_AGE: Final = _col("Age", "date")

KARPENTER_COLUMNS: Final[dict[str, tuple[dict[str, Any], ...]]] = {
    "NodePool": (
        _NAME,
        _col("NodeClass"),
        _col("Nodes"),
        _col("Ready"),
        _AGE,
        _col("Weight", "integer", priority=1),
        _col("CPU", priority=1),
        _col("Memory", priority=1),
    ),
    "NodeClaim": (
        _NAME,
        _col("Type"),
        _col("Capacity"),
        _col("Zone"),
        _col("Node"),
        _col("Ready"),
        _AGE,
        _col("ImageID", priority=1),
        _col("ID", priority=1),
        _col("NodePool", priority=1),
        _col("NodeClass", priority=1),
        _col("Drifted", priority=1),
    ),
}
"""Kind → the CRD's columns."""


def _text(value: Any) -> str | None:
    """A ``string`` column's cell: the value printed, null when the path found nothing."""
    if value is None or value == "":
        return None
    return str(value)


def _condition(conditions: list[Condition], type_: str) -> str | None:
    return next((c.status for c in conditions if c.type == type_), None)


def _label(labels: Mapping[str, str], key: str) -> str | None:
    return _text(labels.get(key))


def _nodepool_cells(pool: NodePool, since: Since) -> list[Any]:
    spec, status = pool.spec, pool.status
    template = spec.template if spec is not None else None
    ref = template.spec.node_class_ref if template is not None and template.spec is not None else None
    cpu, memory = status.resources.get("cpu"), status.resources.get("memory")
    return [
        pool.metadata.name,
        _text(ref.name if ref is not None else None),
        None if status.nodes is None else str(status.nodes),
        _condition(status.conditions, "Ready"),
        since(pool.metadata.creation_timestamp),
        spec.weight if spec is not None else None,
        _text(cpu.text if cpu is not None else None),
        _text(memory.text if memory is not None else None),
    ]


def _nodeclaim_cells(claim: NodeClaim, since: Since) -> list[Any]:
    labels, status = claim.metadata.labels, claim.status
    ref = claim.spec.node_class_ref if claim.spec is not None else None
    return [
        claim.metadata.name,
        _label(labels, "node.kubernetes.io/instance-type"),
        _label(labels, "karpenter.sh/capacity-type"),
        _label(labels, "topology.kubernetes.io/zone"),
        _text(status.node_name),
        _condition(status.conditions, "Ready"),
        since(claim.metadata.creation_timestamp),
        _text(status.image_id),
        _text(status.provider_id),
        _label(labels, "karpenter.sh/nodepool"),
        _text(ref.name if ref is not None else None),
        _condition(status.conditions, "Drifted"),
    ]


KARPENTER_ROWS: Final[dict[str, Callable[[Any, Since], list[Any]]]] = {
    "NodePool": _nodepool_cells,
    "NodeClaim": _nodeclaim_cells,
}
"""Kind → its row printer."""
