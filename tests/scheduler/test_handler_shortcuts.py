"""The scheduler's informer-handler shortcuts against their plain forms.

* ``EventHandlers._on_pod_update`` decides "was / is in the assigned-pod view" inline; for every
  pair of (node, phase) before and after, the branch it takes (cache and queue calls) must be
  the one ``_assigned`` gives.
* ``HintEvaluator.is_event_of_interest`` caches wildcards too: asked twice, with or without a
  registration list, matching or not, it answers as ``ClusterEvent.match`` over the list.
* ``pod_scheduling_properties_change``'s one-event answers are shared objects equal to the
  events built afresh (``tests/scheduler/test_pod_update_fastpaths.py`` compares the function
  with its reference on random pods).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from msgspec.structs import replace

from agents.scheduler.eventhandlers import EventHandlers
from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource
from agents.scheduler.queue.events import _UPDATES, pod_scheduling_properties_change
from agents.scheduler.queue.hints import HintEvaluator
from emulator.base.api.core import Pod
from tests import builders

PHASES = ["Pending", "Running", "Succeeded", "Failed", ""]
NODES = ["", "n1"]


class _Recorder:
    def __init__(self, calls: list[str], name: str) -> None:
        self._calls, self._name = calls, name

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            self._calls.append(f"{self._name}.{method}")
            return False

        return call


class _Options:
    queueing_hints = True


class _Handlers(EventHandlers):
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.cache = _Recorder(self.calls, "cache")  # type: ignore[assignment]
        self.queue = _Recorder(self.calls, "queue")  # type: ignore[assignment]
        self.queue.dismissed_event_ids = frozenset()
        self.frameworks = {}
        self.options = _Options()
        self._first_seen = {}

    def responsible_for(self, pod: Pod) -> bool:
        return True


def _pod(node: str, phase: str, rv: str) -> Pod:
    pod = builders.pod("p", uid="u1", node=node)
    pod = replace(pod, metadata=replace(pod.metadata, resource_version=rv))
    return replace(pod, status=replace(pod.status, phase=phase))


def _reference_branch(h: _Handlers, old: Pod, new: Pod) -> str:
    was, now = h._assigned(old), h._assigned(new)
    if was and now:
        return "update"
    if was:
        return "remove"
    if now:
        return "add"
    return "unassigned"


_FIRST_CALL = {
    "update": "cache.update_pod",
    "remove": "cache.remove_pod",
    "add": "queue.delete",
    "unassigned": None,
}


@pytest.mark.parametrize(
    ("old_node", "old_phase", "new_node", "new_phase"),
    list(itertools.product(NODES, PHASES, NODES, PHASES)),
)
def test_pod_update_takes_the_assigned_views_branch(
    old_node: str, old_phase: str, new_node: str, new_phase: str
) -> None:
    h = _Handlers()
    old, new = _pod(old_node, old_phase, "1"), _pod(new_node, new_phase, "2")
    branch = _reference_branch(h, old, new)
    h._on_pod_update(old, new)
    first = _FIRST_CALL[branch]
    if first is None:
        assert not {"cache.update_pod", "cache.remove_pod", "cache.add_pod"} & set(h.calls)
    else:
        assert h.calls[:1] == [first], (branch, h.calls)
    if branch == "remove":
        assert "cache.update_pod" not in h.calls
    if branch == "add":
        assert "cache.add_pod" in h.calls


def test_same_resource_version_is_ignored() -> None:
    h = _Handlers()
    h._on_pod_update(_pod("n1", "Running", "3"), _pod("n1", "Succeeded", "3"))
    assert h.calls == []


NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
NODE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)
POD_UPDATE = ClusterEvent(EventResource.AssignedPod, ActionType.Update)
POD_LABEL = ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel)
WILDCARD = ClusterEvent(EventResource.WildCard, ActionType.All, "ForceActivate")
REGISTERED = [
    None,
    (),
    (NODE_ADD,),
    (ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),),
    (ClusterEvent(EventResource.WildCard, ActionType.All),),
]


@pytest.mark.parametrize("registered", REGISTERED)
@pytest.mark.parametrize("event", [NODE_ADD, NODE_LABEL, POD_UPDATE, POD_LABEL, WILDCARD])
def test_event_of_interest_as_match_says(registered: tuple[ClusterEvent, ...] | None, event: ClusterEvent) -> None:
    decide = HintEvaluator(lambda pod: None, queueing_hints=True, registered_events=registered, namespace_labels=None)
    want = event.is_wildcard() or registered is None or any(r.match(event) for r in registered)
    assert decide.is_event_of_interest(event) is want
    assert decide.is_event_of_interest(ClusterEvent(event.resource, event.action, event.label)) is want  # cached


def test_one_event_answers_are_the_events_built_afresh() -> None:
    for (assigned, labels), event in _UPDATES.items():
        resource = EventResource.AssignedPod if assigned else EventResource.UnscheduledPod
        assert event == ClusterEvent(resource, ActionType.UpdatePodLabel if labels else ActionType.Update)
    old = _pod("n1", "Pending", "1")
    new = replace(_pod("n1", "Running", "2"), spec=old.spec)
    assert pod_scheduling_properties_change(new, old) == [POD_UPDATE]
    relabelled = replace(new, metadata=replace(new.metadata, labels={"a": "b"}))
    assert pod_scheduling_properties_change(relabelled, old) == [POD_LABEL]


@pytest.mark.parametrize("registered", REGISTERED)
def test_dismissed_events_are_those_no_plugin_registered_for(registered: tuple[ClusterEvent, ...] | None) -> None:
    """The handler skips, by identity, the shared update events whose move would stop at the
    interest check: exactly those ``is_event_of_interest`` says no to, and their move changes
    nothing (no move request cycle, no in-flight event)."""
    from agents.scheduler.queue.events import SHARED_POD_UPDATES
    from tests.scheduler.queue.queue_helpers import FakeClock, make_queue, pop

    q = make_queue(FakeClock(), registered_events=registered, with_registered_events=registered is not None)
    for event in SHARED_POD_UPDATES:
        dismissed = id(event) in q.dismissed_event_ids
        assert dismissed is not q._decide.is_event_of_interest(event)
        q.add(builders.pod("p", uid="u1"))
        pop(q)  # in flight: a move of interest would record the event for it
        q._move_request_cycle = -1
        recorded = q._in_flight.event_count
        q.move_all_to_active_or_backoff(event, None, None)
        if dismissed:
            assert (q._move_request_cycle, q._in_flight.event_count) == (-1, recorded)
        else:
            assert (q._move_request_cycle, q._in_flight.event_count) == (q.scheduling_cycle, recorded + 1)
        q.done("u1")
