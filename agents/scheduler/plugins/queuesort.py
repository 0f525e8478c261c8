"""``PrioritySort`` (upstream ``plugins/queuesort/priority_sort.go``): the default QueueSort.

A pod is popped before another if its priority (``spec.priority``, 0 when unset) is higher, or
on equal priority if it was queued earlier (``QueuedPod.timestamp``). It does not own the queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agents.scheduler.framework.interface import Handle, QueuedPod
from emulator.base.api.core import Pod

__all__ = ["NAME", "PrioritySort", "pod_priority"]

NAME: Final = "PrioritySort"


def pod_priority(pod: Pod) -> int:
    """Upstream ``corev1helpers.PodPriority``: ``spec.priority`` or 0."""
    return pod.spec.priority if pod.spec.priority is not None else 0


class PrioritySort:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def less(self, a: QueuedPod, b: QueuedPod) -> bool:
        pa, pb = pod_priority(a.pod), pod_priority(b.pod)
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, a: QueuedPod) -> tuple[int, float]:
        """``less`` as a key: ``sort_key(a) < sort_key(b)`` exactly when ``less(a, b)``."""
        priority = a.pod.spec.priority  # ``pod_priority`` inline (every pod's activeQ entry)
        return -(priority if priority is not None else 0), a.timestamp

    def __repr__(self) -> str:
        return "<PrioritySort>"
