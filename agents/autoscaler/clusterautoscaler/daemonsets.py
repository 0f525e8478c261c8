"""DaemonSet pods on template nodes (cluster-autoscaler 1.34 ``utils/daemonset``
``GetDaemonSetPodsForNode``, used by ``simulator.SanitizedTemplateNodeInfoFromNodeGroup`` /
``TemplateNodeInfoFromNodeGroupTemplate``; the predicate is kube-controller-manager's
``daemon.NodeShouldRunDaemonPod``).

A template node of a node group (an upcoming node, the scale-up check's, the estimator's new
nodes, the similarity comparison's) carries one pod per DaemonSet that should run there: its
template's ``nodeName`` (if set) is the node's, its node selector and required node affinity
match the node, and every ``NoSchedule``/``NoExecute`` taint of the node is tolerated by the
template's tolerations plus the DaemonSet controller's own (``not-ready``/``unreachable``
NoExecute; ``disk-pressure``, ``memory-pressure``, ``pid-pressure``, ``unschedulable``
NoSchedule; ``network-unavailable`` NoSchedule with ``hostNetwork``). The pod is the template
(``daemon.NewPod``: no defaulting) owned by the DaemonSet, named ``<daemonset>-pod-<node>``
(upstream: a random suffix), so its requests count against the template node's allocatable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from msgspec.structs import replace

from emulator.base.api.core import Node, Pod
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.nodeaffinity import pod_matches_node_selector_and_affinity
from emulator.base.api.taints import daemon_tolerations, find_untolerated_taint

__all__ = ["add_template_node", "daemon_pods_for_node"]


def daemon_pods_for_node(node: Node, daemonsets: Iterable[Any]) -> list[Pod]:
    """``GetDaemonSetPodsForNode`` (module docstring), DaemonSets by namespace and name."""
    out: list[Pod] = []
    name = node.metadata.name
    for ds in sorted(daemonsets, key=lambda d: (d.metadata.namespace, d.metadata.name)):
        spec = ds.spec.template.spec
        if spec.node_name and spec.node_name != name:
            continue
        meta = ds.spec.template.metadata
        owner = OwnerReference(
            api_version="apps/v1", kind="DaemonSet", name=ds.metadata.name, uid=ds.metadata.uid, controller=True
        )
        pod = Pod(
            metadata=ObjectMeta(
                name=f"{ds.metadata.name}-pod-{name}",
                namespace=ds.metadata.namespace,
                uid=f"{ds.metadata.uid}-{name}",
                labels=dict(meta.labels) if meta is not None else {},
                owner_references=[owner],
            ),
            spec=spec,
        )
        if not pod_matches_node_selector_and_affinity(pod, node):
            continue
        tolerations = daemon_tolerations(spec)
        if find_untolerated_taint(node.spec.taints, tolerations, ("NoSchedule", "NoExecute")) is not None:
            continue
        out.append(replace(pod, spec=replace(spec, node_name=name)))
    return out


def add_template_node(sim: Any, node: Node, daemonsets: Sequence[Any]) -> None:
    """The sanitized template node into the simulator, with its DaemonSet pods."""
    sim.add_node(node)
    for pod in daemon_pods_for_node(node, daemonsets):
        sim.add_pod(pod, node.metadata.name)
