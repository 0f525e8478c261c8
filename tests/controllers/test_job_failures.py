"""The job controller's failure handling: podFailurePolicy rules (FailJob, Ignore, Count),
restarts under restartPolicy OnFailure, pods deleted by someone else (counted as failed
and replaced at once under TerminatingOrFailed, only once gone under Failed), Jobs
without completions, scale-down of parallelism, and upstream's FailJob messages."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.job.failurepolicy import PolicyMatch, match
from emulator.base.api.batch import (
    PodFailurePolicy,
    PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern,
    PodFailurePolicyRule,
)
from emulator.base.api.core import ContainerState, ContainerStateTerminated, ContainerStatus, PodCondition
from tests.builders import pod
from tests.controllers.jobworld import job, world


def _policy(*rules: PodFailurePolicyRule) -> PodFailurePolicy:
    return PodFailurePolicy(rules=list(rules))


def _exit(action: str, op: str, *codes: int, container: str | None = None) -> PodFailurePolicyRule:
    req = PodFailurePolicyOnExitCodesRequirement(operator=op, values=list(codes), container_name=container)
    return PodFailurePolicyRule(action=action, on_exit_codes=req)


def _cond(action: str, type_: str) -> PodFailurePolicyRule:
    pattern = PodFailurePolicyOnPodConditionsPattern(type=type_, status="True")
    return PodFailurePolicyRule(action=action, on_pod_conditions=[pattern])


def _failed_pod(code: int, *, name: str = "c", conditions: tuple[str, ...] = ()) -> object:
    p = pod("p1", phase="Failed", conditions=[PodCondition(type=t, status="True") for t in conditions])
    term = ContainerStatus(name=name, state=ContainerState(terminated=ContainerStateTerminated(exit_code=code)))
    return replace(p, status=replace(p.status, container_statuses=[term]))


@pytest.mark.parametrize(
    ("policy", "code", "conditions", "want"),
    [
        pytest.param(None, 1, (), PolicyMatch(None, True, None), id="no-policy"),
        pytest.param(
            _policy(_exit("FailJob", "In", 42)),
            42,
            (),
            PolicyMatch(
                "Container c for pod default/p1 failed with exit code 42 matching FailJob rule at index 0",
                True,
                "FailJob",
            ),
            id="failjob-exit-code",
        ),
        pytest.param(_policy(_exit("FailJob", "In", 42)), 1, (), PolicyMatch(None, True, None), id="no-match-counts"),
        pytest.param(
            _policy(_exit("Ignore", "NotIn", 1, 2)), 3, (), PolicyMatch(None, False, "Ignore"), id="ignore-notin"
        ),
        pytest.param(
            _policy(_exit("FailJob", "In", 5, container="other"), _exit("Count", "In", 5)),
            5,
            (),
            PolicyMatch(None, True, "Count"),
            id="container-name-narrows-then-next-rule",
        ),
        pytest.param(
            _policy(_cond("Ignore", "DisruptionTarget")),
            137,
            ("DisruptionTarget",),
            PolicyMatch(None, False, "Ignore"),
            id="ignore-disruption",
        ),
        pytest.param(
            _policy(_cond("FailJob", "ConfigIssue")),
            1,
            ("ConfigIssue",),
            PolicyMatch("Pod default/p1 has condition ConfigIssue matching FailJob rule at index 0", True, "FailJob"),
            id="failjob-condition",
        ),
        pytest.param(_policy(_exit("FailJob", "NotIn", 0)), 0, (), PolicyMatch(None, True, None), id="exit-0-excluded"),
    ],
)
def test_match(policy: PodFailurePolicy | None, code: int, conditions: tuple[str, ...], want: PolicyMatch) -> None:
    assert match(policy, _failed_pod(code, conditions=conditions)) == want  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_failjob_rule_fails_the_job_at_once() -> None:
    spec = job("fj", parallelism=2, completions=4, pod_failure_policy=_policy(_exit("FailJob", "In", 42)))
    async with world(spec) as w:
        await w.clock.sleep_until(1.0)
        first, _second = w.active("fj")
        await w.finish(first, "Failed", exit_code=42)
        await w.clock.sleep_until(5.0)
        message = (
            f"Container c for pod default/{first.metadata.name} failed with exit code 42 "
            "matching FailJob rule at index 0"
        )
        conds = w.job("fj").status.conditions
        assert [(c.type, c.reason, c.message) for c in conds] == [
            ("FailureTarget", "PodFailurePolicy", message),
            ("Failed", "PodFailurePolicy", message),
        ]
        assert w.active("fj") == []
        assert w.events("PodFailurePolicy") == [("fj", "PodFailurePolicy", message)]


@pytest.mark.asyncio
async def test_ignored_failures_do_not_count_towards_the_backoff_limit() -> None:
    spec = job("ig", backoff_limit=0, pod_failure_policy=_policy(_exit("Ignore", "In", 137)))
    async with world(spec) as w:
        await w.clock.sleep_until(1.0)
        await w.finish_all("ig", "Failed")  # exit code 1: counted, but backoffLimit 0 ...
        await w.clock.sleep_until(5.0)
        assert w.conditions("ig") == [
            ("FailureTarget", "True", "BackoffLimitExceeded"),
            ("Failed", "True", "BackoffLimitExceeded"),
        ]
    async with world(spec) as w:
        await w.clock.sleep_until(1.0)
        (p,) = w.active("ig")
        await w.finish(p, "Failed", exit_code=137)  # ignored: not counted, still backed off
        await w.clock.sleep_until(5.0)
        j = w.job("ig")
        assert (j.status.failed, j.status.conditions, len(w.pods())) == (0, [], 1)
        await w.clock.sleep_until(12.0)
        assert len(w.active("ig")) == 1  # replaced 10 s after the failure
        await w.finish_all("ig")
        await w.clock.sleep_until(15.0)
        assert w.conditions("ig")[-1] == ("Complete", "True", "CompletionsReached")


@pytest.mark.asyncio
async def test_restarts_under_on_failure_reach_the_backoff_limit() -> None:
    async with world(job("rs", restart_policy="OnFailure", backoff_limit=3)) as w:
        await w.clock.sleep_until(1.5)  # off the instant the creations' batched sync comes
        (p,) = w.active("rs")
        current = w.server.get("Pod", p.metadata.name, "default")
        status = replace(
            current.status, phase="Running", container_statuses=[ContainerStatus(name="c", restart_count=3)]
        )
        w.server.update_status(replace(current, status=status))
        await w.clock.sleep_until(3.0)
        assert w.conditions("rs") == [("FailureTarget", "True", "BackoffLimitExceeded")]
        await w.clock.sleep_until(5.0)  # the deleted pod is gone (unbound): Failed now
        assert w.conditions("rs")[-1] == ("Failed", "True", "BackoffLimitExceeded")
        assert w.job("rs").status.failed == 1


@pytest.mark.asyncio
async def test_a_deleted_pod_counts_as_failed_and_is_replaced() -> None:
    async with world(job("del", backoff_limit=6)) as w:
        await w.clock.sleep_until(1.0)
        (p,) = w.active("del")
        w.server.delete("Pod", p.metadata.name, "default")
        await w.clock.sleep_until(30.0)
        j = w.job("del")
        assert (j.status.failed, j.status.active) == (1, 1)
        (again,) = w.active("del")
        assert again.metadata.name != p.metadata.name


@pytest.mark.asyncio
async def test_without_completions_the_first_success_ends_the_job_once_others_finish() -> None:
    async with world(job("wq", parallelism=3)) as w:
        await w.clock.sleep_until(1.0)
        a, b, c = w.active("wq")
        await w.finish(a)
        await w.clock.sleep_until(3.0)
        j = w.job("wq")
        assert (j.status.succeeded, j.status.active, j.status.conditions) == (1, 2, [])
        assert len(w.pods()) == 3  # no replacement once one succeeded
        await w.finish(b)
        await w.finish(c, "Failed")
        await w.clock.sleep_until(5.0)
        j = w.job("wq")
        assert (j.status.succeeded, j.status.failed) == (2, 1)
        assert w.conditions("wq")[-1] == ("Complete", "True", "CompletionsReached")


@pytest.mark.asyncio
async def test_lowering_parallelism_deletes_the_extra_pods_not_counting_them() -> None:
    async with world(job("down", parallelism=4, completions=8)) as w:
        await w.clock.sleep_until(1.0)
        ready_one = w.active("down")[0]
        await w.make_ready(ready_one)
        j = w.job("down")
        w.server.update(replace(j, spec=replace(j.spec, parallelism=1)))
        await w.clock.sleep_until(3.0)
        assert [p.metadata.name for p in w.active("down")] == [ready_one.metadata.name]  # not-ready ones go first
        j = w.job("down")
        assert (j.status.active, j.status.failed) == (1, 0)
        assert len(w.events("SuccessfulDelete")) == 3


@pytest.mark.asyncio
async def test_two_runs_write_the_same_history() -> None:
    async def run() -> list[tuple[float, str, str, str]]:
        async with world(job("d", parallelism=3, completions=6, completion_mode="Indexed", backoff_limit=2)) as w:
            for t in range(1, 30, 2):
                await w.clock.sleep_until(float(t))
                for i, p in enumerate(w.active("d")):
                    await w.finish(p, "Failed" if (t + i) % 5 == 0 else "Succeeded")
            return [(round(x.time, 3), x.verb, x.kind, x.obj.metadata.name) for x in w.writes]

    assert await run() == await run()
