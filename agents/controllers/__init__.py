"""Controllers of kube-controller-manager the emulator runs, each an agent with its own
``Client`` and informers, talking only to the API server:

- ``NodeLifecycleController`` (``nodelifecycle.py``, pure parts in ``nodehealth.py``):
  nodes that stop renewing their Lease go Ready=Unknown and get the
  ``node.kubernetes.io/unreachable`` taints (NoSchedule at once, NoExecute rate-limited
  per zone); condition and cordon NoSchedule taints.
- ``TaintEvictionController`` (``tainteviction.py``): evicts pods from NoExecute-tainted
  nodes after their ``tolerationSeconds``.
- ``PodGCController`` (``podgc.py``): deletes pods bound to nodes that no longer exist,
  and terminating pods on out-of-service nodes.

Client names: ``controller:nodelifecycle``, ``controller:tainteviction``,
``controller:podgc``. The scenario runner starts them with the schedulers (the node
lifecycle controller only when kubelets heartbeat).
"""

from agents.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from agents.controllers.podgc import PodGCController, PodGCSettings
from agents.controllers.tainteviction import TaintEvictionController

__all__ = [
    "NodeLifecycleController",
    "NodeLifecycleSettings",
    "PodGCController",
    "PodGCSettings",
    "TaintEvictionController",
]
