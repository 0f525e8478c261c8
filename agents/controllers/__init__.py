"""Controllers of kube-controller-manager the emulator runs, each an agent with its own
``Client`` and informers, talking only to the API server:

- ``NodeLifecycleController`` (``nodelifecycle.py``, pure parts in ``nodehealth.py``, the
  Leases' renewals seen in ``leaserenewals.py``): nodes that stop renewing their Lease go
  Ready=Unknown and get the
  ``node.kubernetes.io/unreachable`` taints (NoSchedule at once, NoExecute rate-limited
  per zone); condition and cordon NoSchedule taints.
- ``TaintEvictionController`` (``tainteviction.py``): evicts pods from NoExecute-tainted
  nodes after their ``tolerationSeconds``.
- ``PodGCController`` (``podgc.py``): deletes pods bound to nodes that no longer exist,
  and terminating pods on out-of-service nodes.

Client names: ``controller:nodelifecycle``, ``controller:tainteviction``,
``controller:podgc``. The scenario runner starts them with the schedulers (the node
lifecycle controller only when kubelets heartbeat); ``start_workload_controllers``
(``manager.py``) starts the workload controllers. The application layer imports these names
from ``agents.controllers`` and nothing deeper.
"""

from typing import TYPE_CHECKING, Any

from agents.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from agents.controllers.podgc import PodGCController, PodGCSettings
from agents.controllers.tainteviction import TaintEvictionController

if TYPE_CHECKING:
    from agents.controllers.manager import start_workload_controllers

__all__ = [
    "NodeLifecycleController",
    "NodeLifecycleSettings",
    "PodGCController",
    "PodGCSettings",
    "TaintEvictionController",
    "start_workload_controllers",
]


def __getattr__(name: str) -> Any:
    """``start_workload_controllers`` (``manager.py``) loads every workload controller: only
    when read."""
    if name == "start_workload_controllers":
        from agents.controllers.manager import start_workload_controllers

        return start_workload_controllers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
