"""The scheduling queue (upstream ``pkg/scheduler/backend/queue``, v1.34).

- ``scheduling_queue``: ``SchedulingQueue`` (upstream ``PriorityQueue``): activeQ, backoffQ,
  unschedulablePods, the nominator; add/update/delete/activate, failed attempts, flushes. Its
  bases: ``active_queue`` (``pop``, ``done``, ``close``, in flight; ``QueueClosed``),
  ``unschedulable_pods`` (cluster events through the hints, the leftover flush) and ``moves``
  (the shared state and the moves into a sub-queue).
- ``hints``: ``HintEvaluator``, the requeueing decision (queueing hints, events of interest).
- ``backoff_queue``: the two backoff heaps and the expiry arithmetic (1 s ordering windows).
- ``inflight``: events received while pods are being scheduled, replayed when they fail.
- ``nominator``: pods nominated to nodes by preemption.
- ``queued_pod_info``: ``QueuedPodInfo`` and ``backoff_duration``.
- ``events``: the queue's named events and pod-update classification.
- ``heap``: ``KeyedHeap``, a keyed binary heap with a deterministic tie-break.
"""

from .active_queue import QueueClosed
from .backoff_queue import BACKOFF_Q_ORDERING_WINDOW, BackoffQueue, truncate_to_window
from .events import (
    EventAssignedPodAdd,
    EventAssignedPodDelete,
    EventAssignedPodUpdate,
    EventForceActivate,
    EventUnschedulableTimeout,
    EventUnscheduledPodAdd,
    EventUnscheduledPodDelete,
    EventUnscheduledPodUpdate,
    is_pod_updated,
    pod_scheduling_properties_change,
)
from .heap import KeyedHeap
from .hints import HintEvaluator, HintsFn, QueueingStrategy
from .inflight import InFlightTracker, RecordedEvent
from .nominator import Nominator, PodLister
from .queued_pod_info import QueuedPodInfo, backoff_count, backoff_duration
from .scheduling_queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
    FLUSH_BACKOFF_Q_PERIOD,
    FLUSH_UNSCHEDULABLE_PERIOD,
    SchedulingQueue,
)

__all__ = [
    "BACKOFF_Q_ORDERING_WINDOW",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE",
    "FLUSH_BACKOFF_Q_PERIOD",
    "FLUSH_UNSCHEDULABLE_PERIOD",
    "BackoffQueue",
    "EventAssignedPodAdd",
    "EventAssignedPodDelete",
    "EventAssignedPodUpdate",
    "EventForceActivate",
    "EventUnschedulableTimeout",
    "EventUnscheduledPodAdd",
    "EventUnscheduledPodDelete",
    "EventUnscheduledPodUpdate",
    "HintEvaluator",
    "HintsFn",
    "InFlightTracker",
    "KeyedHeap",
    "Nominator",
    "PodLister",
    "QueueClosed",
    "QueuedPodInfo",
    "QueueingStrategy",
    "RecordedEvent",
    "SchedulingQueue",
    "backoff_count",
    "backoff_duration",
    "is_pod_updated",
    "pod_scheduling_properties_change",
    "truncate_to_window",
]
