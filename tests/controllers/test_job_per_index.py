"""Per-index backoff and the success policy of Indexed Jobs, against upstream's documented
behaviour (``pkg/controller/job/indexed_job_utils.go`` ``isIndexFailed``,
``getNewIndexFailureCounts``, ``getPodCreationInfoForIndependentIndexes``;
``success_policy.go`` ``matchSuccessPolicy``; ``job_controller.go`` ``syncJob``): the pure
rules table-driven, then the controller on virtual time."""

from __future__ import annotations

from typing import Any

import pytest

from agents.controllers.job.indexes import COMPLETION_INDEX
from agents.controllers.job.perindex import (
    FAILURE_COUNT,
    IGNORED_FAILURE_COUNT,
    creatable_indexes,
    failure_reason,
    is_index_failed,
    new_failure_counts,
)
from agents.controllers.job.successpolicy import match_success_policy
from emulator.base.api.batch import (
    Job,
    JobSpec,
    PodFailurePolicy,
    PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyRule,
    SuccessPolicy,
    SuccessPolicyRule,
)
from emulator.base.api.core import ContainerState, ContainerStateTerminated, ContainerStatus, Pod, PodStatus
from emulator.base.api.meta import ObjectMeta
from tests.controllers.jobworld import World, job, world


def _rule(action: str, code: int) -> PodFailurePolicyRule:
    return PodFailurePolicyRule(
        action=action, on_exit_codes=PodFailurePolicyOnExitCodesRequirement(operator="In", values=[code])
    )


POLICY = PodFailurePolicy(rules=[_rule("FailIndex", 42), _rule("Ignore", 137)])


def _job(policy: PodFailurePolicy | None = None, **spec: Any) -> Job:
    base = {"completion_mode": "Indexed", "completions": 4, "backoff_limit_per_index": 1}
    return Job(spec=JobSpec(pod_failure_policy=policy, **{**base, **spec}))


def _failed(ix: int, code: int = 1, failures: int = 0, ignored: int = 0, finished: float = 100.0) -> Pod:
    notes = {COMPLETION_INDEX: str(ix), FAILURE_COUNT: str(failures)}
    if ignored:
        notes[IGNORED_FAILURE_COUNT] = str(ignored)
    at = f"2026-01-01T00:{int(finished) // 60:02d}:{int(finished) % 60:02d}Z"  # clock EPOCH + finished
    term = ContainerStateTerminated(exit_code=code, finished_at=at)
    status = PodStatus(
        phase="Failed", container_statuses=[ContainerStatus(name="c", state=ContainerState(terminated=term))]
    )
    return Pod(metadata=ObjectMeta(name=f"p{ix}", namespace="default", annotations=notes), status=status)


@pytest.mark.parametrize(
    ("policy", "pod", "want"),
    [
        pytest.param(None, _failed(0, failures=0), False, id="first-failure-retried"),
        pytest.param(None, _failed(0, failures=1), True, id="count-reaches-limit"),
        pytest.param(POLICY, _failed(0, code=42), True, id="FailIndex-fails-at-once"),
        pytest.param(POLICY, _failed(0, code=137, failures=5), False, id="Ignore-never-fails-the-index"),
        pytest.param(POLICY, _failed(0, code=1, failures=1), True, id="no-rule-counts"),
    ],
)
def test_is_index_failed(policy: PodFailurePolicy | None, pod: Pod, want: bool) -> None:
    assert is_index_failed(_job(policy), pod) is want


@pytest.mark.parametrize(
    ("policy", "replaced", "want"),
    [
        pytest.param(None, None, (0, 0), id="first-pod"),
        pytest.param(None, _failed(0, failures=2, ignored=1), (3, 1), id="counted"),
        pytest.param(POLICY, _failed(0, code=137, failures=2), (2, 1), id="ignored"),
    ],
)
def test_new_failure_counts(policy: PodFailurePolicy | None, replaced: Pod | None, want: tuple[int, int]) -> None:
    assert new_failure_counts(_job(policy), replaced) == want


@pytest.mark.parametrize(
    ("replaced", "now", "want"),
    [
        pytest.param({}, 100.0, ([0, 1], 0.0), id="nothing-failed"),
        pytest.param({0: _failed(0, finished=100.0)}, 104.0, ([1], 0.0), id="others-go-first"),
        pytest.param(
            {0: _failed(0, finished=100.0), 1: _failed(1, failures=1, finished=100.0)},
            104.0,
            ([], 6.0),
            id="shortest-wait-10s-after-first-failure",
        ),
        pytest.param({1: _failed(1, failures=1, finished=100.0)}, 110.0, ([0], 0.0), id="second-failure-waits-20s"),
        pytest.param({0: _failed(0, ignored=1, finished=100.0)}, 115.0, ([1], 0.0), id="ignored-failures-back-off-too"),
    ],
)
def test_creatable_indexes(replaced: dict[int, Pod], now: float, want: tuple[list[int], float]) -> None:
    assert creatable_indexes([0, 1], replaced, now) == want


@pytest.mark.parametrize(
    ("max_failed", "failed", "succeeded", "want"),
    [
        pytest.param(None, set(), {0, 1, 2, 3}, None, id="none-failed"),
        pytest.param(None, {1}, {0, 2}, None, id="index-3-pending"),
        pytest.param(None, {1}, {0, 2, 3}, "FailedIndexes", id="all-done-one-failed"),
        pytest.param(1, {1}, set(), None, id="at-max"),
        pytest.param(1, {1, 2}, set(), "MaxFailedIndexesExceeded", id="past-max"),
    ],
)
def test_failure_reason(max_failed: int | None, failed: set[int], succeeded: set[int], want: str | None) -> None:
    got = failure_reason(_job(max_failed_indexes=max_failed), failed, succeeded)
    assert (got[0] if got else None) == want


@pytest.mark.parametrize(
    ("rules", "succeeded", "want"),
    [
        pytest.param([SuccessPolicyRule(succeeded_count=2)], {3}, None, id="count-not-reached"),
        pytest.param([SuccessPolicyRule(succeeded_count=2)], {0, 3}, 0, id="count-reached"),
        pytest.param([SuccessPolicyRule(succeeded_indexes="0,2")], {0, 1}, None, id="indexes-not-all"),
        pytest.param(
            [SuccessPolicyRule(succeeded_count=4), SuccessPolicyRule(succeeded_indexes="0,2")], {0, 2}, 1, id="second"
        ),
        pytest.param([SuccessPolicyRule(succeeded_indexes="1-3", succeeded_count=2)], {0, 2, 3}, 0, id="some-of"),
        pytest.param([SuccessPolicyRule(succeeded_indexes="9")], {0}, None, id="indexes-past-completions-skip"),
        pytest.param([SuccessPolicyRule(succeeded_count=0)], set(), None, id="nothing-succeeded-yet"),
    ],
)
def test_match_success_policy(rules: list[SuccessPolicyRule], succeeded: set[int], want: int | None) -> None:
    got = match_success_policy(SuccessPolicy(rules=rules), 4, succeeded)
    assert got == (None if want is None else f"Matched rules at index {want}")


async def _terminated(w: World, owner: str) -> None:
    """The kubelet's part: the pods being deleted terminate and go away."""
    for p in w.pods():
        if p.metadata.deletion_timestamp is not None and p.metadata.owner_references[0].name == owner:
            w.server.delete("Pod", p.metadata.name, "default", grace_period_seconds=0)
    await w.clock.sleep(2.0)


def _annotation(p: Pod) -> str | None:
    return p.metadata.annotations.get(FAILURE_COUNT)


@pytest.mark.asyncio
async def test_every_pod_failing_fails_the_job_with_failed_indexes() -> None:
    spec = {"completion_mode": "Indexed", "completions": 3, "parallelism": 3, "backoff_limit_per_index": 1}
    async with world(job("shards", **spec)) as w:
        await w.clock.sleep_until(1.0)
        assert sorted(_annotation(p) for p in w.active("shards")) == ["0", "0", "0"]
        await w.finish_all("shards", "Failed")  # each index's first failure: retried after 10 s
        await w.clock.sleep_until(10.5)
        assert w.active("shards") == []
        assert w.job("shards").status.failed_indexes == ""
        await w.clock.sleep_until(12.0)
        assert sorted(_annotation(p) for p in w.active("shards")) == ["1", "1", "1"]
        await w.finish_all("shards", "Failed")  # failure count 1 reaches the limit
        await w.clock.sleep_until(14.0)
        j = w.job("shards")
        assert (j.status.failed, j.status.failed_indexes) == (6, "0-2")
        assert w.conditions("shards") == [
            ("FailureTarget", "True", "FailedIndexes"),
            ("Failed", "True", "FailedIndexes"),
        ]
        assert w.events("FailedIndexes") == [("shards", "FailedIndexes", "Job has failed indexes")]


@pytest.mark.asyncio
async def test_max_failed_indexes_fails_the_job_before_the_others_finish() -> None:
    spec = {"completion_mode": "Indexed", "completions": 3, "parallelism": 3}
    async with world(job("m", backoff_limit_per_index=0, max_failed_indexes=0, **spec)) as w:
        await w.clock.sleep_until(1.5)  # off the instant the creations' batched sync comes
        await w.finish(w.active("m")[1], "Failed")
        await w.clock.sleep_until(3.0)
        j = w.job("m")
        assert (j.status.failed_indexes, j.status.active, j.status.terminating) == ("1", 0, 2)
        assert w.conditions("m") == [("FailureTarget", "True", "MaxFailedIndexesExceeded")]
        await _terminated(w, "m")
        assert w.conditions("m")[-1] == ("Failed", "True", "MaxFailedIndexesExceeded")


@pytest.mark.asyncio
async def test_success_policy_completes_early_and_deletes_the_rest() -> None:
    policy = SuccessPolicy(rules=[SuccessPolicyRule(succeeded_indexes="1")])
    spec = {"completion_mode": "Indexed", "completions": 4, "parallelism": 4}
    async with world(job("leader", success_policy=policy, **spec)) as w:
        await w.clock.sleep_until(1.5)  # off the instant the creations' batched sync comes
        (one,) = [p for p in w.active("leader") if p.metadata.annotations[COMPLETION_INDEX] == "1"]
        await w.finish(one)
        await w.clock.sleep_until(3.0)
        j = w.job("leader")
        assert w.active("leader") == []
        assert (j.status.succeeded, j.status.completed_indexes, j.status.failed) == (1, "1", 0)
        assert w.conditions("leader") == [("SuccessCriteriaMet", "True", "SuccessPolicy")]
        await _terminated(w, "leader")
        j = w.job("leader")
        assert w.conditions("leader") == [
            ("SuccessCriteriaMet", "True", "SuccessPolicy"),
            ("Complete", "True", "SuccessPolicy"),
        ]
        assert j.status.conditions[0].message == "Matched rules at index 0"
        assert j.status.completion_time is not None
        assert len(w.events("SuccessfulDelete")) == 3
