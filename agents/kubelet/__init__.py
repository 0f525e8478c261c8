"""The kubelet agent: one per node, talking only to the API server.

``Kubelet`` (``kubelet.py``) admits the pods bound to its node with ``admit``
(``admission.py``, pure, upstream's reasons and messages), pulls images, starts and
completes pods, confirms graceful deletions and keeps the node's status and Lease fresh;
``KubeletSettings`` (``settings.py``) holds its knobs.
"""

from agents.kubelet.admission import AdmissionResult, NodeUsage, admission_failures, admit
from agents.kubelet.kubelet import RUN_DURATION_ANNOTATION, Kubelet, PodState
from agents.kubelet.settings import KubeletSettings

__all__ = [
    "RUN_DURATION_ANNOTATION",
    "AdmissionResult",
    "Kubelet",
    "KubeletSettings",
    "NodeUsage",
    "PodState",
    "admission_failures",
    "admit",
]
