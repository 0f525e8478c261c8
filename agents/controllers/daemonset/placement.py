"""Where each DaemonSet's pods are meant to run, kept by the pod handlers.

A DaemonSet sync needs its pods grouped by target node (``target_node``: ``spec.nodeName``
or the ``metadata.name`` node affinity). Regrouping every pod on every sync would cost a
pass over all of them per pod event, so ``Placement`` keeps, per DaemonSet UID, node name →
the pods meant for it (not those both terminal and being deleted, which upstream's
``getNodesToDaemonPods`` leaves out), updated once per pod event.

``relevant`` says whether a pod update can change anything a sync decides or counts: its
phase when terminal, whether it is Ready and since when, deletion, revision labels and target
node. Other updates (the binding, the kubelet's Pending → Running and Ready=False writes)
queue nothing, which spares a 1,000-node DaemonSet two syncs per pod. (Being bound only
orders two pods of one node, and an unbound pod of a deleted node is seen when the node goes.)

It owns nothing else (the pods themselves are the pod informer's).
"""

from __future__ import annotations

from typing import Any

from agents.controllers.daemonset.eligibility import POD_TEMPLATE_GENERATION, target_node
from agents.controllers.history import CONTROLLER_REVISION_HASH
from emulator.base.api.core import Pod

__all__ = ["Placement", "relevant"]

PodKey = tuple[str, str]
_TERMINAL = ("Succeeded", "Failed")


def _signature(pod: Pod) -> tuple[Any, ...]:
    ready = next((c for c in pod.status.conditions if c.type == "Ready" and c.status == "True"), None)
    labels = pod.metadata.labels
    return (
        pod.status.phase if pod.status.phase in _TERMINAL else "",
        None if ready is None else ready.last_transition_time,
        pod.metadata.deletion_timestamp is not None,
        labels.get(CONTROLLER_REVISION_HASH),
        labels.get(POD_TEMPLATE_GENERATION),
        target_node(pod),
    )


def relevant(old: Pod, new: Pod) -> bool:
    """Whether the update of ``old`` to ``new`` matters to the DaemonSet sync."""
    return _signature(old) != _signature(new)


def _placed(pod: Pod) -> bool:
    return not (pod.metadata.deletion_timestamp is not None and pod.status.phase in _TERMINAL)


class Placement:
    """DaemonSet UID → target node → the pods meant for it."""

    def __init__(self) -> None:
        self._by_owner: dict[str, dict[str, dict[PodKey, Pod]]] = {}

    def __repr__(self) -> str:
        return f"<Placement owners={len(self._by_owner)}>"

    def add(self, owner_uid: str, pod: Pod) -> None:
        node = target_node(pod)
        if node is None or not _placed(pod):
            return
        nodes = self._by_owner.setdefault(owner_uid, {})
        nodes.setdefault(node, {})[(pod.metadata.namespace, pod.metadata.name)] = pod

    def remove(self, owner_uid: str, pod: Pod) -> None:
        node = target_node(pod)
        nodes = self._by_owner.get(owner_uid)
        if node is None or nodes is None:
            return
        pods = nodes.get(node)
        if pods is None:
            return
        pods.pop((pod.metadata.namespace, pod.metadata.name), None)
        if not pods:
            del nodes[node]

    def by_node(self, owner_uid: str) -> dict[str, list[Pod]]:
        """Node name → its pods (in key order); a fresh dict the caller may change."""
        nodes = self._by_owner.get(owner_uid, {})
        return {node: [pods[k] for k in sorted(pods)] for node, pods in nodes.items()}

    def pods(self, owner_uid: str) -> list[Pod]:
        return [p for pods in self._by_owner.get(owner_uid, {}).values() for p in pods.values()]

    def forget(self, owner_uid: str) -> None:
        self._by_owner.pop(owner_uid, None)
