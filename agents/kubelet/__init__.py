"""The kubelet agent: one per node, talking only to the API server.

``Kubelet`` (``kubelet.py``) admits the pods bound to its node with ``admit``
(``admission.py``, pure, upstream's reasons and messages), pulls images, starts pods and
runs their containers (``podrun.py``, pure: init containers, sidecars, readiness,
exits, restarts with CrashLoopBackOff, driven by the ``emulator.k8s.io/`` annotations
listed in ``lifecycle.py``), confirms graceful deletions and keeps the node's status and Lease fresh;
``KubeletSettings`` (``settings.py``) holds its knobs; ``default_labels``
(``registration.py``) gives a Node the labels a kubelet registers it with. The kubelets of a run may share one
``Ticker`` (``ticker.py``) that fires all their heartbeats from one task and one heap.
"""

from agents.kubelet.admission import AdmissionResult, NodeUsage, admission_failures, admit
from agents.kubelet.kubelet import Kubelet, PodState
from agents.kubelet.lifecycle import (
    EXIT_CODE_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    INIT_EXIT_CODE_ANNOTATION,
    READY_AFTER_ANNOTATION,
    RUN_DURATION_ANNOTATION,
)
from agents.kubelet.registration import default_labels
from agents.kubelet.settings import DEFAULT_NODE_STATUS_REPORT_FREQUENCY, KubeletSettings
from agents.kubelet.ticker import Ticker

__all__ = [
    "DEFAULT_NODE_STATUS_REPORT_FREQUENCY",
    "EXIT_CODE_ANNOTATION",
    "INIT_DURATION_ANNOTATION",
    "INIT_EXIT_CODE_ANNOTATION",
    "READY_AFTER_ANNOTATION",
    "RUN_DURATION_ANNOTATION",
    "AdmissionResult",
    "Kubelet",
    "KubeletSettings",
    "NodeUsage",
    "PodState",
    "Ticker",
    "admission_failures",
    "admit",
    "default_labels",
]
