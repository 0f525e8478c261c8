"""Queueing decisions: may this event make that rejected pod schedulable? (upstream
``isPodWorthRequeuing``, ``determineSchedulingHintForInFlightPod``, ``isEventOfInterest``,
``getUnschedulablePodsWithCrossTopologyTerm`` in ``scheduling_queue.go``).

This module owns the pure decision part of requeueing: given a ``QueuedPodInfo`` and a cluster
event (or the events recorded while it was in flight), which ``QueueingStrategy`` applies. It
does not own the sub-queues or move anything (``moves.py``'s ``_requeue`` does, by strategy).

The rule (v1.34), over the pod's *rejector plugins* (``unschedulable_plugins ∪ pending_plugins``):

| situation                                              | strategy            |
| ------------------------------------------------------ | ------------------- |
| no rejector plugin (the attempt erred)                 | ``AfterBackoff``    |
| wildcard event carrying another pod (ForceActivate)    | ``Skip``            |
| any other wildcard event (UnschedulableTimeout)        | ``AfterBackoff``    |
| a Pending rejector's matching hint says Queue          | ``Immediately``     |
| an Unschedulable rejector's matching hint says Queue   | ``AfterBackoff``    |
| every matching hint of a rejector says QueueSkip, or   | ``Skip``            |
| no rejector registered a matching event                |                     |

A registration without a hint function, or a hint that raises, counts as Queue. With
QueueingHints off every hint counts as Queue (upstream ``buildQueueingHintMap``). Plugins are
visited in the profile's plugin order, so the hints called are deterministic.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from emulator.base.api.core import Pod
from emulator.base.api.labelselector import label_selector_matches

from ..framework.types import ClusterEvent, ClusterEventWithHint, QueueingHint
from .inflight import RecordedEvent
from .queued_pod_info import QueuedPodInfo

__all__ = ["POD_TOPOLOGY_SPREAD", "HintEvaluator", "HintsFn", "QueueingStrategy"]

POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"

HintsFn = Callable[[Pod], Mapping[str, Sequence[ClusterEventWithHint]] | None]
"""``hints(pod)``: the pod's profile's registered events and hints, by plugin, in plugin order;
``None`` if no profile serves the pod (upstream then requeues after backoff)."""


class QueueingStrategy(enum.IntEnum):
    """Upstream ``queueingStrategy``, ordered by precedence."""

    Skip = 0
    """Stay in unschedulablePods."""
    AfterBackoff = 1
    """backoffQ if still backing off, else activeQ."""
    Immediately = 2
    """activeQ, backoff or not."""


class HintEvaluator:
    """Answers "where should this pod go?" from the registered events and hints."""

    __slots__ = ("_hints", "_interest", "_interest_of", "_namespace_labels", "_qhints", "_registered")

    def __init__(
        self,
        hints: HintsFn,
        *,
        queueing_hints: bool,
        registered_events: Iterable[ClusterEvent] | None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None,
    ) -> None:
        self._hints = hints
        self._qhints = queueing_hints
        self._registered = None if registered_events is None else tuple(registered_events)
        self._interest: dict[ClusterEvent, bool] = {}
        self._interest_of: dict[int, tuple[ClusterEvent, bool]] = {}
        self._namespace_labels = namespace_labels

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Some plugin registered an event matching ``event`` (wildcards always are).

        Without a list of registered events every event is of interest.
        """
        hit = self._interest_of.get(id(event))
        if hit is not None and hit[0] is event:
            return hit[1]
        cached = self._interest.get(event)  # wildcards included: True, once looked at
        if cached is None:
            registered = self._registered
            cached = self._interest[event] = (
                event.is_wildcard() or registered is None or any(r.match(event) for r in registered)
            )
            # The first instance of each value, by identity (kept alive by the entry, so its id
            # is not reused): the shared events (``events.py``'s) skip the dataclass's hash,
            # which hashes its ``EventResource`` in Python. Bounded by the distinct values.
            self._interest_of[id(event)] = (event, cached)
        return cached

    def gating_events(self, pod: Pod, plugin: str) -> tuple[ClusterEvent, ...]:
        """The events ``plugin`` registered in the pod's profile (what can lift its gate)."""
        registrations = self._hints(pod)
        return () if registrations is None else tuple(r.event for r in registrations.get(plugin, ()))

    def worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> QueueingStrategy:
        """Upstream ``isPodWorthRequeuing``: ask the hints of the plugins that rejected the pod."""
        pending = qpi.pending_plugins
        rejectors = qpi.unschedulable_plugins | pending
        if not rejectors:
            return QueueingStrategy.AfterBackoff
        if event.is_wildcard():
            # A wildcard carrying a pod (ForceActivate) is for that pod only.
            if new is not None and not (isinstance(new, Pod) and new.metadata.uid == qpi.uid):
                return QueueingStrategy.Skip
            return QueueingStrategy.AfterBackoff
        pod = qpi.pod
        by_plugin = self._hints(pod)
        if by_plugin is None:
            return QueueingStrategy.AfterBackoff  # "no QueueingHintMap is registered for this profile"
        strategy = QueueingStrategy.Skip
        for plugin, registrations in by_plugin.items():
            if plugin not in rejectors:
                continue
            for reg in registrations:
                if not reg.event.match(event) or self._hint(reg, pod, old, new) is QueueingHint.QueueSkip:
                    continue
                if plugin in pending:
                    return QueueingStrategy.Immediately
                if not pending:
                    return QueueingStrategy.AfterBackoff
                strategy = QueueingStrategy.AfterBackoff
        return strategy

    def for_in_flight_pod(self, qpi: QueuedPodInfo, recorded: list[RecordedEvent] | None) -> QueueingStrategy:
        """Upstream ``determineSchedulingHintForInFlightPod``: replay the events since the pop.

        ``recorded`` is ``None`` when the pod was not tracked in flight: requeue after backoff.
        """
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return QueueingStrategy.AfterBackoff
        if recorded is None:
            return QueueingStrategy.AfterBackoff
        strategy = QueueingStrategy.Skip
        for e in recorded:
            s = self.worth_requeuing(qpi, e.event, e.old_obj, e.new_obj)
            if s is QueueingStrategy.Immediately:
                return s
            if s is QueueingStrategy.AfterBackoff:
                strategy = s
                if not qpi.pending_plugins:
                    return s
        return strategy

    def cross_topology_pods(self, unschedulable: Iterable[QueuedPodInfo], pod: Pod) -> list[QueuedPodInfo]:
        """The unschedulable pods an added/updated assigned ``pod`` may help (upstream
        ``getUnschedulablePodsWithCrossTopologyTerm``): rejected by PodTopologySpread in the same
        namespace, or with a required pod-affinity term that ``pod`` matches."""
        ns = pod.metadata.namespace
        ns_labels: Mapping[str, str] = self._namespace_labels(ns) if self._namespace_labels else {}
        out: list[QueuedPodInfo] = []
        for qpi in unschedulable:
            if POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins and qpi.pod.metadata.namespace == ns:
                out.append(qpi)
                continue
            owner_ns = qpi.pod.metadata.namespace
            for term in qpi.pod_info.required_affinity_terms:
                namespaces = term.namespaces or ([owner_ns] if term.namespace_selector is None else [])
                in_scope = ns in namespaces or label_selector_matches(term.namespace_selector, ns_labels)
                if in_scope and label_selector_matches(term.label_selector, pod.metadata.labels):
                    out.append(qpi)
                    break
        return out

    def _hint(self, reg: ClusterEventWithHint, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not self._qhints or reg.hint is None:
            return QueueingHint.Queue
        try:
            return reg.hint(pod, old, new)
        except Exception:
            return QueueingHint.Queue  # a failing hint must not strand the pod
