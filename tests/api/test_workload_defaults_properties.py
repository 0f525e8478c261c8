"""Properties of the workload defaulting: idempotent (the API server defaults on every write,
so a stored object must come back unchanged), and it never changes a field the user set."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.apps import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    Deployment,
    DeploymentSpec,
    DeploymentStrategy,
    RollingUpdateDaemonSet,
    RollingUpdateDeployment,
    StatefulSet,
    StatefulSetSpec,
)
from emulator.base.api.batch import Job, JobSpec
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.workloaddefaults import default_object, generate_job_selector, stored_job

counts = st.none() | st.integers(-3, 50)
int_or_str = st.none() | st.integers(0, 5) | st.sampled_from(["0%", "25%", "100%"])

deployments = st.builds(
    lambda r, t, u, s, h: Deployment(
        spec=DeploymentSpec(
            replicas=r,
            strategy=DeploymentStrategy(
                type=t,
                rolling_update=None if u is s is None else RollingUpdateDeployment(max_unavailable=u, max_surge=s),
            ),
            revision_history_limit=h,
        )
    ),
    counts,
    st.sampled_from(["", "RollingUpdate", "Recreate"]),
    int_or_str,
    int_or_str,
    counts,
)
daemonsets = st.builds(
    lambda t, u, s: DaemonSet(
        spec=DaemonSetSpec(
            update_strategy=DaemonSetUpdateStrategy(
                type=t,
                rolling_update=None if u is s is None else RollingUpdateDaemonSet(max_unavailable=u, max_surge=s),
            )
        )
    ),
    st.sampled_from(["", "RollingUpdate", "OnDelete"]),
    int_or_str,
    int_or_str,
)
statefulsets = st.builds(
    lambda r, p: StatefulSet(spec=StatefulSetSpec(replicas=r, pod_management_policy=p)),
    counts,
    st.sampled_from(["", "OrderedReady", "Parallel"]),
)
jobs = st.builds(
    lambda c, p, b, uid: Job(
        metadata=ObjectMeta(name="j", uid=uid), spec=JobSpec(completions=c, parallelism=p, backoff_limit=b)
    ),
    counts,
    counts,
    counts,
    st.sampled_from(["", "u1"]),
)


@given(deployments | daemonsets | statefulsets | jobs)
def test_defaulting_is_idempotent(obj: Any) -> None:
    once = default_object(obj)
    assert default_object(once) == once
    if isinstance(once, Job):
        stored = stored_job(once)
        assert stored_job(default_object(stored)) == stored
        assert generate_job_selector(stored) == stored


@given(deployments)
def test_defaulting_keeps_what_the_user_set(d: Deployment) -> None:
    out = default_object(d)
    if d.spec.replicas is not None:
        assert out.spec.replicas == d.spec.replicas
    ru = d.spec.strategy.rolling_update
    if d.spec.strategy.type != "Recreate" and ru is not None:
        assert out.spec.strategy.rolling_update is not None
        for name in ("max_unavailable", "max_surge"):
            if getattr(ru, name) is not None:
                assert getattr(out.spec.strategy.rolling_update, name) == getattr(ru, name)
