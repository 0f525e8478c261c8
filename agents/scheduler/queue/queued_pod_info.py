"""``QueuedPodInfo`` (upstream ``framework.QueuedPodInfo``) and the backoff arithmetic.

This module owns the per-pod record the scheduling queue keeps, and the pure function that turns
a failure count into a backoff duration. It does not own where a record lives (activeQ,
backoffQ, unschedulablePods, in flight: ``scheduling_queue.py``) nor the 1 s ordering-window
truncation of expiries (``backoff_queue.py``).

Field lifecycle (v1.34):

| field                      | set / changed by                                                   |
| -------------------------- | ------------------------------------------------------------------ |
| ``timestamp``              | ``add``/new record: now; ``add_unschedulable_if_not_present``: now |
| ``attempts``               | +1 on every pop                                                    |
| ``initial_attempt_timestamp`` | first time the pod enters activeQ                               |
| ``unschedulable_plugins``, | written by the scheduler after a failed cycle (FitError diagnosis); |
| ``pending_plugins``        | PreEnqueue adds the gating plugin; both cleared on pop             |
| ``gating_plugin``          | PreEnqueue: the rejecting plugin, "" once every plugin admits      |
| ``unschedulable_count``    | +1 when re-added with rejector plugins                              |
| ``consecutive_errors_count`` | +1 when re-added without rejector plugins; 0 after a rejection   |
| ``backoff_expiration``     | cache of the expiry; cleared on pop and on re-add                   |
"""

from __future__ import annotations

from emulator.base.api.core import Pod

from ..framework.types import ClusterEvent, PodInfo, reuse_pod_info

__all__ = ["QueuedPodInfo", "backoff_count", "backoff_duration"]

_MAX_SHIFT = 1000
"""Doubling more often than this overflows a float; the result is the cap long before."""


def backoff_duration(n: int, initial: float, maximum: float) -> float:
    """Seconds of backoff after ``n`` counted failures (upstream ``calculateBackoffDuration``).

    ``0`` for ``n == 0``, else ``min(initial * 2**(n-1), maximum)``: upstream doubles an integer
    nanosecond duration with an overflow guard, which for whole nanoseconds is exactly this.
    """
    if n <= 0:
        return 0.0
    return min(initial * 2.0 ** min(n - 1, _MAX_SHIFT), maximum)


def backoff_count(qpi: QueuedPodInfo) -> int:
    """The failure count backoff is computed from (v1.34, PR #128748).

    ``consecutive_errors_count`` when the last attempts ended in errors, else
    ``unschedulable_count``, so that a burst of API errors does not inherit the long backoff
    earned by plugin rejections (and vice versa).
    """
    if qpi.consecutive_errors_count > 0:
        return qpi.consecutive_errors_count
    return qpi.unschedulable_count


class QueuedPodInfo:
    """A pending pod with its queueing state (upstream ``framework.QueuedPodInfo``)."""

    __slots__ = (
        "attempts",
        "backoff_expiration",
        "consecutive_errors_count",
        "gating_plugin",
        "gating_plugin_events",
        "initial_attempt_timestamp",
        "pending_plugins",
        "pod_info",
        "timestamp",
        "unschedulable_count",
        "unschedulable_plugins",
    )

    def __init__(
        self,
        pod_info: PodInfo,
        timestamp: float,
        *,
        attempts: int = 0,
        initial_attempt_timestamp: float | None = None,
        unschedulable_plugins: set[str] | None = None,
        pending_plugins: set[str] | None = None,
        unschedulable_count: int = 0,
        consecutive_errors_count: int = 0,
    ) -> None:
        self.pod_info = pod_info
        self.timestamp = timestamp
        """Clock time the pod was added, or last re-added after a failed attempt."""
        self.attempts = attempts
        """Number of pops (scheduling attempts)."""
        self.initial_attempt_timestamp = initial_attempt_timestamp
        """Clock time the pod first entered activeQ (None while it has never been there)."""
        self.unschedulable_plugins: set[str] = set() if unschedulable_plugins is None else unschedulable_plugins
        """Plugins that rejected the pod (Unschedulable / UnschedulableAndUnresolvable), and the
        gating PreEnqueue plugin."""
        self.pending_plugins: set[str] = set() if pending_plugins is None else pending_plugins
        """Plugins that returned Pending: their Queue hint skips backoff."""
        self.gating_plugin = ""
        """The PreEnqueue plugin keeping the pod out of activeQ ("" when not gated)."""
        self.gating_plugin_events: tuple[ClusterEvent, ...] = ()
        """Events registered by ``gating_plugin``: only those can move a gated pod."""
        self.unschedulable_count = unschedulable_count
        self.consecutive_errors_count = consecutive_errors_count
        self.backoff_expiration: float | None = None
        """Cached backoff expiry (clock time); ``None`` until computed."""

    @classmethod
    def new(cls, pod: Pod, now: float, like: PodInfo | None = None) -> QueuedPodInfo:
        """A fresh entry for ``pod``; ``like``: a PodInfo of another pod, whose derived data
        is copied when ``pod`` has its very spec object and the same requests by their statuses
        (pods created from one template share it: ``reuse_pod_info``), instead of derived anew."""
        pi = None
        if like is not None and like.pod.spec is pod.spec:
            pi = reuse_pod_info(like, pod)
        return cls(pi or PodInfo(pod), now)

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    @property
    def uid(self) -> str:
        return self.pod_info.pod.metadata.uid

    @property
    def key(self) -> str:
        """``namespace/name``: the key of every sub-queue (upstream ``podInfoKeyFunc``)."""
        meta = self.pod_info.pod.metadata
        return f"{meta.namespace}/{meta.name}"

    @property
    def gated(self) -> bool:
        """Upstream ``Gated()``: a PreEnqueue plugin rejected the pod."""
        return self.gating_plugin != ""

    def rejector_plugins(self) -> set[str]:
        """``unschedulable_plugins ∪ pending_plugins``: the plugins whose hints can requeue it."""
        return self.unschedulable_plugins | self.pending_plugins

    def update(self, pod: Pod) -> None:
        """Replace the pod (same identity, newer version); derived data is recomputed."""
        self.pod_info.update(pod)

    def __repr__(self) -> str:
        parts = [f"<QueuedPodInfo {self.key}", f"attempts={self.attempts}"]
        if self.unschedulable_plugins:
            parts.append(f"unschedulable={sorted(self.unschedulable_plugins)}")
        if self.pending_plugins:
            parts.append(f"pending={sorted(self.pending_plugins)}")
        if self.gating_plugin:
            parts.append(f"gated_by={self.gating_plugin}")
        return " ".join(parts) + ">"
