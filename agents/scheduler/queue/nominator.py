"""The nominator: which pending pods are nominated to which node (upstream ``nominator.go``).

This module owns the node -> nominated pods map that preemption writes (PostFilter nominates the
preemptor to the node it freed) and the two-pass filter reads (``nominated_pods_for_node``, §3.4
of the reference). It does not own the pods themselves: the scheduling queue passes the
``PodInfo`` it holds, so a later in-place ``PodInfo.update`` is seen here too (upstream keeps a
``podRef`` and looks the PodInfo up in the queue; same result for every pod the queue holds).

Modes (upstream ``NominatingInfo``): ``add_nominated_pod(pi, "node")`` overrides the nomination
("" clears it); ``add_nominated_pod(pi, None)`` is ``ModeNoop``: the pod's own
``status.nominatedNodeName`` is used. Per node, pods are kept in insertion order.
"""

from __future__ import annotations

from collections.abc import Callable

from emulator.base.api.core import Pod

from ..framework.types import PodInfo

__all__ = ["Nominator", "PodLister"]

PodLister = Callable[[str, str], Pod | None]
"""``lister(namespace, name)``: the informer's current copy of a pod, or None."""


class Nominator:
    """Pods nominated to nodes, by node (insertion order) and by pod uid."""

    __slots__ = ("_by_node", "_node_of", "_pod_lister")

    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self._pod_lister = pod_lister
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str | None = None) -> None:
        """Nominate the pod to ``node_name`` (Override; "" clears), or, with ``None``, to its
        ``status.nominatedNodeName`` (Noop). Any previous nomination of the pod is dropped."""
        pod = pod_info.pod
        if pod.metadata.uid in self._node_of:
            self._delete(pod.metadata.uid)
        node = pod.status.nominated_node_name if node_name is None else node_name
        if not node:
            return
        if self._pod_lister is not None:
            current = self._pod_lister(pod.metadata.namespace, pod.metadata.name)
            if current is None or current.spec.node_name:
                return  # deleted, or already bound: nothing to reserve room for
        self._node_of[pod.metadata.uid] = node
        self._by_node.setdefault(node, []).append(pod_info)

    def update_nominated_pod(self, old: Pod, new_pod_info: PodInfo) -> None:
        """Upstream ``UpdateNominatedPod``: follow an update of a nominated pod.

        An update that neither carries nor removes ``nominatedNodeName`` (both versions have
        none) keeps the in-memory nomination: it may have been made by preemption just before the
        status patch landed.
        """
        node_name: str | None = None
        if not old.status.nominated_node_name and not new_pod_info.pod.status.nominated_node_name:
            node_name = self._node_of.get(old.metadata.uid)
        self._delete(old.metadata.uid)
        self.add_nominated_pod(new_pod_info, node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        uid = pod.metadata.uid
        if uid in self._node_of:  # (most pods never are nominated)
            self._delete(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order (a copy)."""
        return list(self._by_node.get(node_name, ()))

    def nominated_node_names(self) -> list[str]:
        """The nodes with at least one nominated pod (the vectorised Filter sends them through
        the two-pass filter)."""
        return list(self._by_node)

    def nominated_node_name(self, uid: str) -> str:
        """The node the pod with ``uid`` is nominated to ("" if none)."""
        return self._node_of.get(uid, "")

    def __len__(self) -> int:
        return len(self._node_of)

    def _delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node[node]
        for i, pi in enumerate(pods):
            if pi.pod.metadata.uid == uid:
                del pods[i]
                break
        if not pods:
            del self._by_node[node]

    def __repr__(self) -> str:
        return f"<Nominator pods={len(self._node_of)} nodes={len(self._by_node)}>"
