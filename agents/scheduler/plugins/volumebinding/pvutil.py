"""The PV/PVC matching rules the binder applies (upstream
``component-helpers/storage/volume/pv_helpers.go`` and ``helpers.go``, ``v1helper``'s
``MatchTopologySelectorTerms``, the binder's capacity checks in ``binder.go``).

==============================  ===============================================================
function                        upstream
==============================  ===============================================================
``claim_class`` / ``pv_class``  ``GetPersistentVolumeClaimClass`` / ``GetPersistentVolumeClass``
                                (the beta annotation first, then ``storageClassName``)
``is_bound_to_claim``           ``IsVolumeBoundToClaim`` (name, namespace; uid when set)
``check_node_affinity``         ``CheckNodeAffinity``: the PV's required terms against a node
                                that has only labels (``matchFields`` never checked)
``find_matching_volume``        ``FindMatchingVolume`` on the scheduler path (node given): the
                                pre-bound PV, else the smallest Available PV of the class that
                                fits size, volume mode, selector, access modes, node affinity
``match_topology_terms``        ``MatchTopologySelectorTerms`` (no term: every node)
``volume_limit``                ``volumeLimit``: ``maximumVolumeSize`` else ``capacity``
``capacity_sufficient`` /       ``capacitySufficient`` / ``nodeHasAccess``
``node_has_access``
==============================  ===============================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from emulator.base.api.core import Node, NodeSelector
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.nodeaffinity import node_selector_matches
from emulator.base.api.quantity import Quantity
from emulator.base.api.storage import BETA_STORAGE_CLASS, PersistentVolume, PersistentVolumeClaim

__all__ = [
    "NOT_SUPPORTED_PROVISIONER",
    "capacity_sufficient",
    "check_node_affinity",
    "claim_class",
    "claim_request",
    "find_matching_volume",
    "is_bound_to_claim",
    "match_topology_terms",
    "node_has_access",
    "pv_class",
    "volume_limit",
]

NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""A class whose claims are never provisioned dynamically (local volumes)."""
VOLUME_AVAILABLE: Final = "Available"


def claim_class(pvc: PersistentVolumeClaim) -> str:
    ann = pvc.metadata.annotations.get(BETA_STORAGE_CLASS)
    if ann is not None:
        return ann
    return pvc.spec.storage_class_name or ""


def pv_class(pv: PersistentVolume) -> str:
    ann = pv.metadata.annotations.get(BETA_STORAGE_CLASS)
    if ann is not None:
        return ann
    return pv.spec.storage_class_name


def claim_request(pvc: PersistentVolumeClaim) -> Quantity | None:
    return pvc.spec.resources.requests.get("storage")


def is_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    ref = pv.spec.claim_ref
    if ref is None or ref.name != pvc.metadata.name or ref.namespace != pvc.metadata.namespace:
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def labels_node(labels: Mapping[str, str]) -> Node:
    """A node carrying only ``labels``, as upstream's ``CheckNodeAffinity`` builds one."""
    return Node(metadata=ObjectMeta(labels=dict(labels)))


def check_node_affinity(pv: PersistentVolume, node: Node) -> bool:
    """True when the PV's required node affinity admits ``node`` (a ``labels_node``)."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return True
    required: NodeSelector = affinity.required
    return node_selector_matches(required, node)


def _volume_mode(mode: str | None) -> str:
    return mode or "Filesystem"


def _storage(pv: PersistentVolume) -> int:
    q = pv.spec.capacity.get("storage")
    return q.value if q is not None else 0


def find_matching_volume(
    pvc: PersistentVolumeClaim, pvs: Iterable[PersistentVolume], node: Node, excluded: Mapping[str, Any]
) -> PersistentVolume | None:
    """Upstream ``FindMatchingVolume(claim, volumes, node, excluded, delayBinding=true)``."""
    requested = claim_request(pvc)
    requested_value = requested.value if requested is not None else 0
    requested_class = claim_class(pvc)
    selector = pvc.spec.selector
    smallest: PersistentVolume | None = None
    smallest_qty = 0
    for pv in pvs:
        if pv.metadata.name in excluded:
            continue
        if pv.spec.claim_ref is not None and not is_bound_to_claim(pv, pvc):
            continue
        qty = _storage(pv)
        if qty < requested_value:
            continue
        if _volume_mode(pvc.spec.volume_mode) != _volume_mode(pv.spec.volume_mode):
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = check_node_affinity(pv, node)
        if is_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if pv.status.phase != VOLUME_AVAILABLE:
            continue
        if selector is not None and not label_selector_matches(selector, pv.metadata.labels):
            continue
        if pv_class(pv) != requested_class or not affinity_ok:
            continue
        if not all(m in pv.spec.access_modes for m in pvc.spec.access_modes):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


def match_topology_terms(terms: list[Any], labels: Mapping[str, str]) -> bool:
    """Upstream ``MatchTopologySelectorTerms``: a term with no expressions selects nothing."""
    if not terms:
        return True
    for term in terms:
        reqs = term.match_label_expressions
        if not reqs:
            continue
        if all(r.values and labels.get(r.key) in r.values for r in reqs):
            return True
    return False


def volume_limit(capacity: Any) -> Quantity | None:
    limit: Quantity | None = capacity.maximum_volume_size
    return limit if limit is not None else capacity.capacity


def capacity_sufficient(capacity: Any, size: int) -> bool:
    limit = volume_limit(capacity)
    return limit is not None and limit.value >= size


def node_has_access(node: Node, capacity: Any) -> bool:
    """The capacity's ``nodeTopology`` selects the node (none: no node)."""
    if capacity.node_topology is None:
        return False
    try:
        return label_selector_matches(capacity.node_topology, node.metadata.labels)
    except ValueError:
        return False
