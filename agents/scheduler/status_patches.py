"""The scheduler's PodScheduled=False status update, as upstream v1.34 makes it.

Either way it is one PATCH (``failure_patch``), and none at all when the pod as the scheduler
popped it already says so (``with_condition`` returns None: upstream ``updatePod``).
Without a client rate limit the emulator's requests never queue, and the scheduler sends it
from a task of its own after the Event (``failure_handler._report_failure``), which costs only
latency. With one (``clientConnection.qps``, or bench's ``schedulerApiClientQPS``) every
request waits for a token, and upstream's exact shape matters:

- v1.34 ``handleSchedulingFailure`` updates the pod *synchronously* in the goroutine that failed
  it (the scheduling loop, or the pod's binding cycle): with SchedulerAsyncAPICalls off — beta but
  off in 1.34 — nothing queues the call elsewhere and nothing merges two calls for one pod. So
  the caller awaits ``failure_patch`` (``handle_failure`` returns it); a clogger's failure holds
  the loop until its token comes, which is what upstream's ``StarvationHighPriorityVictims``
  measures;
- the update is one PATCH computed against the object as the server holds it
  (``Client.patch_status``): one token, never a Conflict — not a GET plus an update; none at
  all when the pod already says so (``updatePod`` skips an unchanged status).

The FailedScheduling Event is not here: upstream's event broadcaster sends it from its own
goroutine through the events client (its own limiter), so the emulator records it in a task.
"""

from __future__ import annotations

import contextlib
from typing import Any

from msgspec.structs import replace

from emulator.base.api.core import Pod, PodCondition
from emulator.base.api.errors import ApiError
from emulator.base.client.client import Client
from emulator.base.runtime.clock import Clock

__all__ = ["failure_patch", "with_condition"]


async def failure_patch(
    client: Client, clock: Clock, pod: Pod, reason: str, message: str, nominated: str | None
) -> None:
    """The pod's one status PATCH (PodScheduled=False, and the nomination); API errors end it
    (the next attempt reports again)."""
    uid, meta = pod.metadata.uid, pod.metadata

    def mutate(current: Any) -> Any | None:
        if current.metadata.uid != uid or current.spec.node_name:
            return None
        return with_condition(current, reason, message, nominated, clock.timestamp())

    with contextlib.suppress(ApiError):
        await client.patch_status("Pod", meta.name, meta.namespace, mutate)


def with_condition(current: Pod, reason: str, message: str, nominated: str | None, now: str) -> Pod | None:
    """``current`` with PodScheduled=False (reason, message) and ``nominated`` (None: keep);
    None if it already says exactly that."""
    old = next((c for c in current.status.conditions if c.type == "PodScheduled"), None)
    new_nominated = current.status.nominated_node_name if nominated is None else nominated
    if (
        old is not None
        and (old.status, old.reason, old.message) == ("False", reason, message)
        and current.status.nominated_node_name == new_nominated
    ):
        return None
    cond = PodCondition(
        type="PodScheduled",
        status="False",
        reason=reason,
        message=message,
        last_transition_time=old.last_transition_time if old is not None and old.status == "False" else now,
        observed_generation=current.metadata.generation,  # CalculatePodConditionObservedGeneration
    )
    conds = [c for c in current.status.conditions if c.type != "PodScheduled"]
    status = replace(current.status, conditions=[*conds, cond], nominated_node_name=new_nominated)
    return replace(current, status=status)
