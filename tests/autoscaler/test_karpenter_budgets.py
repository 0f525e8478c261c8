"""Disruption budgets on the virtual clock: kubernetes-sigs/karpenter v1.9.1
pkg/apis/v1/nodepool.go (``Budget.IsActive``, ``GetAllowedDisruptions``,
``GetAllowedDisruptionsByReason``), the cases of pkg/apis/v1/nodepool_budgets_test.go."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.budgets import MAX_INT32, BudgetError, allowed_disruptions, budget_allowed, is_active
from emulator.base.api.karpenter import Budget, Disruption, NodePool, NodePoolSpec
from tests.autoscaler.karpenter_disruption_helpers import run, scenario

REASONS = ("Empty", "Underutilized", "Drifted")


def _at(*args: Any, tz: Any = UTC) -> float:
    return datetime(*args, tzinfo=tz).timestamp()


NOW = _at(2000, 6, 15, 12, 30, 30)
"""nodepool_budgets_test.go: "the middle of the year of 2000"."""


def _budgets() -> list[Budget]:
    """The BeforeEach's six budgets."""
    every = {"schedule": "* * * * *", "duration": "1h"}
    return [
        Budget(nodes="10", **every),
        Budget(nodes="100", **every),
        Budget(nodes="100%", **every),
        Budget(reasons=["Drifted", "Underutilized"], nodes="15", **every),
        Budget(reasons=["Drifted"], nodes="5", **every),
        Budget(reasons=["Underutilized", "Drifted", "Empty"], nodes="0", schedule="@weekly", duration="1h"),
    ]


def _pool(budgets: list[Budget]) -> NodePool:
    return NodePool(spec=NodePoolSpec(disruption=Disruption(consolidate_after="0s", budgets=budgets)))


def _edit(budgets: list[Budget], **changes: dict[str, Any]) -> list[Budget]:
    out = list(budgets)
    for index, change in changes.items():
        i = int(index[1:])
        out[i] = replace(out[i], **change)
    return out


YEARLY = {"schedule": "@yearly", "duration": "1h"}


@pytest.mark.parametrize(
    ("changes", "extra", "expected"),
    [
        pytest.param(
            {"b5": {"schedule": "* * * * *"}}, [], dict.fromkeys(REASONS, 0), id="active-for-all-reasons-returns-0"
        ),
        pytest.param(
            {f"b{i}": YEARLY for i in range(6)}, [], dict.fromkeys(REASONS, MAX_INT32), id="no-active-budgets-maxint32"
        ),
        pytest.param(
            {"b3": {"schedule": "@yearly"}, "b4": {"schedule": "@yearly"}},
            [],
            dict.fromkeys(REASONS, 10),
            id="reason-budgets-ignored-when-inactive",
        ),
        pytest.param(
            {},
            [Budget(schedule="* * * * *", nodes="4", duration="1h", reasons=["Empty"])],
            {"Empty": 4, "Drifted": 5, "Underutilized": 10},
            id="minimum-per-reason",
        ),
    ],
)
def test_allowed_disruptions_by_reason(
    changes: dict[str, dict[str, Any]], extra: list[Budget], expected: dict[str, int]
) -> None:
    """Context("GetAllowedDisruptionsByReason")."""
    pool = _pool(_edit(_budgets(), **changes) + extra)
    assert {r: allowed_disruptions(pool, 100, r, NOW) for r in expected} == expected


def test_budget_without_reasons_applies_to_all() -> None:
    """ "should return the budget for all disruption reasons when undefined"."""
    pool = _pool(_budgets()[:1])
    assert [allowed_disruptions(pool, 100, r, NOW) for r in REASONS] == [10, 10, 10]


def test_empty_reasons_apply_to_none() -> None:
    """``budget.Reasons == nil || lo.Contains(budget.Reasons, reason)``: ``reasons: []`` is not nil."""
    pool = _pool([Budget(nodes="0", reasons=[])])
    assert allowed_disruptions(pool, 100, "Empty", NOW) == MAX_INT32


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param({"schedule": "@wrongly"}, BudgetError, id="invalid-schedule-zero"),
        pytest.param({"nodes": "1000a%"}, BudgetError, id="invalid-nodes-zero"),
        pytest.param(YEARLY, MAX_INT32, id="inactive-maxint32"),
        pytest.param({}, 10, id="active-int"),
        pytest.param({"nodes": "100%"}, 100, id="active-percent"),
        pytest.param({"nodes": "5%"}, 5, id="percent-of-100"),
    ],
)
def test_get_allowed_disruptions(change: dict[str, Any], expected: Any) -> None:
    """Context("AllowedDisruptions"); a misconfigured budget makes the NodePool allow 0."""
    budget = replace(_budgets()[0], **change)
    if expected is BudgetError:
        with pytest.raises(BudgetError):
            budget_allowed(budget, NOW, 100)
        assert allowed_disruptions(_pool([budget]), 100, "Empty", NOW) == 0
        return
    assert budget_allowed(budget, NOW, 100) == expected


def test_percent_rounds_up() -> None:
    """``GetScaledValueFromIntOrPercent(..., true)``: 5% of 10 nodes is 1."""
    assert budget_allowed(Budget(nodes="5%"), NOW, 10) == 1


@pytest.mark.parametrize(
    ("now", "schedule", "duration", "active"),
    [
        pytest.param(NOW, None, None, True, id="no-schedule-always-active"),
        pytest.param(NOW, "* * * * *", "1h", True, id="active"),
        pytest.param(NOW, "@yearly", "1h", False, id="inactive"),
        pytest.param(_at(1000, 1, 1, 12, 0, 0), "@yearly", "24h", True, id="hit-in-middle-of-duration"),
        pytest.param(_at(2024, 1, 7, 0, 0, 0), "@daily", "48h", True, id="duration-longer-than-recurrence"),
        pytest.param(_at(2024, 1, 7, 0, 0, 0), "30 6 * * SUN", "6h", False, id="hit-after-duration"),
        # the window is (now - duration, now]: a hit exactly at now is active, one exactly at
        # now - duration is not (Next is strictly after the checkpoint)
        pytest.param(_at(2024, 1, 7, 6, 30, 0), "30 6 * * SUN", "6h", True, id="hit-exactly-now"),
        pytest.param(_at(2024, 1, 7, 12, 30, 0), "30 6 * * SUN", "6h", False, id="hit-exactly-duration-ago"),
        pytest.param(_at(2024, 1, 7, 12, 29, 59), "30 6 * * SUN", "6h", True, id="last-second"),
        pytest.param(NOW, "0 0 30 2 *", "1h", True, id="never-hits-zero-time-active"),
        pytest.param(_at(2024, 1, 7, 6, 45, 0), "30 6 * * SUN", "1h30m0s", True, id="duration-with-0s"),
    ],
)
def test_is_active(now: float, schedule: str | None, duration: str | None, active: bool) -> None:
    """Context("IsActive")."""
    assert is_active(Budget(nodes="10", schedule=schedule, duration=duration), now) is active


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        pytest.param("0 0 * * tue-mon", "beginning of range (2) beyond end of range (1)", id="range-backwards"),
        pytest.param("TZ=America/New_York 0 0 * * *", "expected exactly 5 fields, found 6", id="own-timezone"),
        pytest.param("@every 1h a b c", "failed to parse duration", id="every"),
        pytest.param("0 0 * * 7", "end of range (7) above maximum (6)", id="sunday-as-7"),
    ],
)
def test_is_active_error(schedule: str, message: str) -> None:
    """ "should return an error indicating why the cron fails to parse" (robfig/cron's message)."""
    with pytest.raises(BudgetError, match="invariant violated, invalid cron") as err:
        is_active(Budget(nodes="10", schedule=schedule, duration="6h"), _at(2024, 1, 7, 0, 0, 0))
    assert message in str(err.value)


SCALE = {"scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 3}}


@pytest.mark.parametrize(
    ("schedule", "first_after"),
    [
        pytest.param("0 0 * * *", 600.0, id="blocking-window-00:00-00:10"),
        pytest.param("0 1 * * *", 0.0, id="window-not-yet-open"),
        pytest.param("@daily", 600.0, id="descriptor"),
    ],
)
def test_scheduled_budget_on_the_virtual_clock(tmp_path: Path, schedule: str, first_after: float) -> None:
    """BuildDisruptionBudgetMapping with MustGetAllowedDisruptions at the disruption
    controller's clock: a ``nodes: "0"`` budget active for 10 minutes from midnight (a run
    starts at EPOCH, 2026-01-01T00:00:00Z) holds every disruption until 600 s; outside its
    window the default 10% applies."""
    disruption = {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "30s",
        "budgets": [{"nodes": "10%"}, {"nodes": "0", "schedule": schedule, "duration": "10m"}],
    }
    steps = [{"sleep": "2m"}, SCALE, {"sleep": "12m"}]
    r = run(scenario(tmp_path, replicas=12, down_to=3, disruption=disruption, steps=steps))
    assert r.result.passed
    terminating = [t for t, e in r.events if e.reason == "DisruptionTerminating"]
    assert terminating
    assert min(terminating) >= first_after
    blocked = "No allowed disruptions for disruption reason Empty due to blocking budget"
    assert (blocked in r.messages("DisruptionBlocked")) is (first_after > 0)
    assert r.autoscaler["nodesDisrupted"] == {"empty": 1, "underutilized": 1}


def _budget_pool(budgets: list[dict[str, Any]]) -> dict[str, Any]:
    ref = {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"},
        "spec": {"disruption": {"consolidateAfter": "0s", "budgets": budgets},
                 "template": {"spec": {"nodeClassRef": ref, "requirements": []}}},
    }  # fmt: skip


EVERY = {"nodes": "10", "schedule": "* * * * *"}
SCHEDULE = "spec.disruption.budgets[0].schedule"
PAIRED = "spec.disruption.budgets: Invalid value: \"array\": 'schedule' must be set with 'duration'"


@pytest.mark.parametrize(
    ("budgets", "error"),
    [
        pytest.param([{**EVERY, "schedule": "*", "duration": "20m"}], f'{SCHEDULE}: Invalid value: "*"', id="cron"),
        pytest.param([{**EVERY, "schedule": "* * * * ", "duration": "20m"}], SCHEDULE, id="four-entries"),
        pytest.param([{**EVERY, "duration": "-20m0s"}], "budgets[0].duration", id="negative-duration"),
        pytest.param([{**EVERY, "duration": "30s"}], "budgets[0].duration", id="seconds-duration"),
        pytest.param([{"nodes": "-10"}], "budgets[0].nodes", id="negative-int"),
        pytest.param([{"nodes": "-10%"}], "budgets[0].nodes", id="negative-percent"),
        pytest.param([{"nodes": "1000%"}], "budgets[0].nodes", id="percent-three-digits"),
        pytest.param([EVERY], PAIRED, id="cron-without-duration"),
        pytest.param([{"nodes": "10", "duration": "20m"}], PAIRED, id="duration-without-cron"),
        pytest.param([{**EVERY, "duration": "20m"}], None, id="both"),
        pytest.param([{**EVERY, "duration": "2h20m0s"}], None, id="hours-and-minutes"),
        pytest.param([{"nodes": "10"}], None, id="neither"),
        pytest.param([{**EVERY, "schedule": "@annually", "duration": "20m"}], None, id="special-cased"),
        pytest.param(
            [{**EVERY, "schedule": "@annually", "duration": "20m"}, {**EVERY, "schedule": "*", "duration": "20m"}],
            "budgets[1].schedule",
            id="two-one-invalid",
        ),
        pytest.param([{"nodes": "10", "duration": "20m"}, {**EVERY, "duration": "20m"}], PAIRED, id="one-unpaired"),
        pytest.param([{**EVERY, "duration": "20m", "reasons": ["Drifted", "Empty"]}], None, id="multiple-reasons"),
        # the CRD's pattern only: robfig/cron refuses it later (the agent fails closed)
        pytest.param([{**EVERY, "schedule": "0 0 * * tue-mon", "duration": "20m"}], None, id="pattern-not-cron"),
    ],
)
def test_budget_crd_rules(budgets: list[dict[str, Any]], error: str | None) -> None:
    """pkg/apis/v1/nodepool_validation_cel_test.go, the budget cases (the CRD's patterns and CEL)."""
    from emulator.base.api.codec import ManifestError, object_from_dict

    if error is None:
        object_from_dict(_budget_pool(budgets), source="f.yaml")
        return
    with pytest.raises(ManifestError) as info:
        object_from_dict(_budget_pool(budgets), source="f.yaml")
    assert error in str(info.value)


@pytest.mark.parametrize(
    ("now", "active"),
    [
        pytest.param(_at(2000, 6, 1, 0, 15, 0), True, id="utc-midnight-hit"),
        pytest.param(_at(2000, 5, 31, 23, 15, 0), False, id="local-midnight-not-a-hit"),
    ],
)
def test_schedule_in_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch, now: float, active: bool) -> None:
    """ "should always consider a schedule and time in UTC" (pkg/apis/v1/nodepool.go IsActive
    parses "TZ=UTC " + schedule): with the process in UTC+1, "@daily" for 30m is active 15
    minutes after midnight UTC, not 15 minutes after local midnight (23:15 UTC)."""
    import time

    monkeypatch.setenv("TZ", "XXX-1")
    time.tzset()
    try:
        assert datetime.fromtimestamp(_at(2000, 5, 31, 23, 15, 0)).hour == 0  # local is UTC+1
        assert is_active(replace(_budgets()[0], schedule="@daily", duration="30m"), now) is active
    finally:
        monkeypatch.undo()
        time.tzset()
