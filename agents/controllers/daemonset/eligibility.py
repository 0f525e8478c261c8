"""Which nodes a DaemonSet's pod belongs on, and the pod it makes there: upstream's
``NodeShouldRunDaemonPod`` (``daemon_controller.go``) and ``pkg/controller/daemon/util``.

What this module owns (pure):

- ``daemon_tolerations`` (kept in ``emulator.base.api.taints``, which the Cluster
  Autoscaler's template nodes use too; re-exported here): the tolerations every daemon pod
  gets (``AddOrUpdateDaemonPodTolerations``), all ``Exists``:

  ==========================================  ==========  ========================
  key                                         effect      when
  ==========================================  ==========  ========================
  ``node.kubernetes.io/not-ready``            NoExecute   always
  ``node.kubernetes.io/unreachable``          NoExecute   always
  ``node.kubernetes.io/disk-pressure``        NoSchedule  always
  ``node.kubernetes.io/memory-pressure``      NoSchedule  always
  ``node.kubernetes.io/pid-pressure``         NoSchedule  always
  ``node.kubernetes.io/unschedulable``        NoSchedule  always (cordoned nodes keep
                                                          and get their daemon pods)
  ``node.kubernetes.io/network-unavailable``  NoSchedule  ``hostNetwork: true``
  ==========================================  ==========  ========================

  A toleration the template already has with the same key, operator, value and effect is
  replaced, not doubled (``AddOrUpdateTolerationInPodSpec``);
- ``node_should_run``: ``(shouldRun, shouldContinueRunning)`` of a node for a DaemonSet:
  a ``spec.nodeName`` in the template must be this node's, the template's ``nodeSelector``
  and required node affinity must match, and every NoSchedule and NoExecute taint must be
  tolerated to run; a node whose untolerated taints are all NoSchedule keeps its pod
  (``shouldContinueRunning``), one with an untolerated NoExecute taint does not;
- ``replace_node_name_affinity`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``): the pod's
  required node affinity becomes the one term ``matchFields metadata.name In [node]``, so the
  default scheduler binds it there (as upstream since 1.12; the controller has already
  checked the other terms);
- ``target_node`` (``GetTargetNodeName``): the node a daemon pod is for, from
  ``spec.nodeName`` or that term;
- ``is_pod_updated`` and the labels a daemon pod carries (``controller-revision-hash``,
  ``pod-template-generation``).

It does not own the sync (``manage``, ``update``) nor the writes (``controller``).
"""

from __future__ import annotations

from typing import Final

from msgspec.structs import replace

from agents.controllers.history import CONTROLLER_REVISION_HASH
from emulator.base.api.apps import DaemonSet
from emulator.base.api.core import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Toleration,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.nodeaffinity import NODE_NAME_FIELD, pod_matches_node_selector_and_affinity
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.taints import daemon_tolerations, find_untolerated_taint

__all__ = [
    "POD_TEMPLATE_GENERATION",
    "TEMPLATE_GENERATION_ANNOTATION",
    "daemon_pod_template",
    "daemon_tolerations",
    "is_pod_updated",
    "node_should_run",
    "replace_node_name_affinity",
    "target_node",
    "template_generation",
]

POD_TEMPLATE_GENERATION: Final = "pod-template-generation"
"""Upstream ``extensions.DaemonSetTemplateGenerationKey``: a daemon pod's label."""
TEMPLATE_GENERATION_ANNOTATION: Final = "deprecated.daemonset.template.generation"
"""Upstream's API server counts template changes here (``strategy.go``, 1 on create, one more
per template change), and so does the emulated one (``registry.workloads``); a pod's
``pod-template-generation`` label is copied from it. A DaemonSet that never went through the
API server (a unit test's) has none: its ``metadata.generation`` stands in."""

_RUN_EFFECTS: Final = ("NoSchedule", "NoExecute")
_CONTINUE_EFFECTS: Final = ("NoExecute",)


def node_should_run(node: Node, ds: DaemonSet, tolerations: list[Toleration] | None = None) -> tuple[bool, bool]:
    """``(shouldRun, shouldContinueRunning)``; ``tolerations`` (the daemon pod's, computed
    by the caller once per sync) default to ``daemon_tolerations`` of the template."""
    spec = ds.spec.template.spec
    if spec.node_name and spec.node_name != node.metadata.name:
        return False, False
    probe = Pod(metadata=ObjectMeta(namespace=ds.metadata.namespace), spec=spec)
    if not pod_matches_node_selector_and_affinity(probe, node):
        return False, False
    tols = daemon_tolerations(spec) if tolerations is None else tolerations
    taints = node.spec.taints
    if find_untolerated_taint(taints, tols, _RUN_EFFECTS) is None:
        return True, True
    return False, find_untolerated_taint(taints, tols, _CONTINUE_EFFECTS) is None


def replace_node_name_affinity(affinity: Affinity | None, node_name: str) -> Affinity:
    """The affinity with its required node selector replaced by ``metadata.name In [node]``."""
    selector = NodeSelector(
        node_selector_terms=[
            NodeSelectorTerm(
                match_fields=[NodeSelectorRequirement(key=NODE_NAME_FIELD, operator="In", values=[node_name])]
            )
        ]
    )
    if affinity is None:
        return Affinity(node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=selector))
    node_affinity = affinity.node_affinity or NodeAffinity()
    return replace(
        affinity,
        node_affinity=replace(node_affinity, required_during_scheduling_ignored_during_execution=selector),
    )


def target_node(pod: Pod) -> str | None:
    """The node a daemon pod is for: ``spec.nodeName``, else its one ``metadata.name In``
    term (``None`` when it has neither)."""
    if pod.spec.node_name:
        return pod.spec.node_name
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
    if required is None:
        return None
    for term in required.node_selector_terms:
        for req in term.match_fields:
            if req.key == NODE_NAME_FIELD and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return None


def template_generation(ds: DaemonSet) -> int:
    raw = ds.metadata.annotations.get(TEMPLATE_GENERATION_ANNOTATION)
    if raw is not None and raw.isdigit():
        return int(raw)
    return ds.metadata.generation


def is_pod_updated(pod: Pod, hash_: str, generation: int) -> bool:
    """Upstream ``IsPodUpdated``: the pod's hash label, or its template generation, is current."""
    labels = pod.metadata.labels
    return (bool(hash_) and labels.get(CONTROLLER_REVISION_HASH) == hash_) or labels.get(
        POD_TEMPLATE_GENERATION
    ) == str(generation)


def daemon_pod_template(ds: DaemonSet, hash_: str) -> PodTemplateSpec:
    """Upstream ``CreatePodTemplate``: the template with the daemon tolerations and labels."""
    template = ds.spec.template
    labels = {
        **template.metadata.labels,
        POD_TEMPLATE_GENERATION: str(template_generation(ds)),
        CONTROLLER_REVISION_HASH: hash_,
    }
    return replace(
        template,
        metadata=replace(template.metadata, labels=labels),
        spec=replace(template.spec, tolerations=daemon_tolerations(template.spec)),
    )
