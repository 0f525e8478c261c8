"""Disruption budgets (kubernetes-sigs/karpenter v1.9.1 ``pkg/apis/v1/nodepool.go``:
``Budget.IsActive``, ``Budget.GetAllowedDisruptions``, ``NodePool.GetAllowedDisruptionsByReason``,
``NodePool.MustGetAllowedDisruptions``).

A budget without ``schedule`` and ``duration`` is always active. Otherwise it is active at
``now`` when the schedule (robfig/cron's standard parser on ``"TZ=UTC " + schedule``:
``emulator.base.api.cron``) hits within ``(now - duration, now]``: the next hit after
``now - duration`` is not after ``now`` (a schedule that never hits within five years is
active, as Go's zero time is not after now). An active budget allows its ``nodes``: an integer,
or a percentage of the NodePool's nodes rounded up; an inactive one ``MAX_INT32``. A NodePool
allows, for a reason, the least of its budgets whose ``reasons`` is unset or names the reason;
any budget failing to parse (its cron, its ``nodes``) makes it allow 0 ("fail closed").

``now`` is Unix seconds: the agent's clock time plus ``calendar_epoch`` (so ``serve``'s runs
follow the wall calendar, a simulated run starts at ``EPOCH``).
"""

from __future__ import annotations

import math
import re
from typing import Final

from emulator.base.api.cron import CronError, parse_schedule
from emulator.base.api.karpenter import Budget, NodePool
from emulator.base.runtime.clock import calendar_epoch, parse_duration

__all__ = ["MAX_INT32", "BudgetError", "allowed_disruptions", "budget_allowed", "is_active", "unix_now"]

MAX_INT32: Final = 2**31 - 1


class BudgetError(ValueError):
    """A budget Karpenter cannot evaluate (``invariant violated, invalid cron``, a bad ``nodes``)."""


def unix_now(clock_now: float) -> float:
    return calendar_epoch().timestamp() + clock_now


def is_active(budget: Budget, now: float) -> bool:
    """``Budget.IsActive`` at Unix time ``now`` (module docstring)."""
    if budget.schedule is None and budget.duration is None:
        return True
    # ParseStandard("TZ=UTC " + schedule): the location is stripped with the spaces after it;
    # a schedule's own TZ= is then a sixth field
    spec = (budget.schedule or "").strip()
    try:
        if not spec:
            raise CronError("expected exactly 5 fields, found 0: []")
        schedule = parse_schedule(spec)
    except CronError as e:
        raise BudgetError(f"invariant violated, invalid cron, {e}") from None
    try:
        duration = parse_duration(budget.duration or "0s")
    except ValueError as e:
        raise BudgetError(str(e)) from None
    hit = schedule.next_after(now - duration)
    return hit is None or hit <= now


def budget_allowed(budget: Budget, now: float, nodes: int) -> int:
    """``Budget.GetAllowedDisruptions``: ``BudgetError`` when misconfigured (fail closed)."""
    if not is_active(budget, now):
        return MAX_INT32
    text = budget.nodes if budget.nodes is not None else "10%"
    if re.fullmatch(r"[+-]?[0-9]+", text):  # GetIntStrFromValue: an int when Atoi takes it
        return int(text)
    m = re.fullmatch(r"([0-9]+)%", text)
    if m is None:
        raise BudgetError(f"invalid value for IntOrString: invalid type: string is not a percentage: {text!r}")
    return math.ceil(int(m.group(1)) * nodes / 100)  # GetScaledValueFromIntOrPercent, rounded up


def allowed_disruptions(pool: NodePool, nodes: int, reason: str, now: float) -> int:
    """``MustGetAllowedDisruptions``: the least of the active budgets for ``reason`` (budgets
    with no ``reasons`` apply to all); 0 if any budget is misconfigured."""
    d = pool.spec.disruption if pool.spec is not None else None
    allowed = MAX_INT32
    for b in (d.budgets or []) if d is not None else []:
        try:
            value = budget_allowed(b, now, nodes)
        except BudgetError:
            return 0
        if b.reasons is None or reason in b.reasons:
            allowed = min(allowed, value)
    return allowed
