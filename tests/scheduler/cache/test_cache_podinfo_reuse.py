"""Property: the cache's PodInfo reuse (``reuse_pod_info``) files exactly the PodInfos a fresh
``PodInfo(pod)`` would, in the same order, whatever the sequence of pod and node events (status
writes told ``alike``, as the scheduler's handler tells them, included).

The reference is the same cache with reuse switched off (``reuse_pod_info`` → None)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.scheduler.cache import Cache, CacheError, pod_states
from agents.scheduler.framework.types import NodeInfo, PodInfo
from emulator.base.api.core import PodStatus
from emulator.base.api.resources import same_requests
from tests.scheduler.cache.test_cache_property import POD_NAMES, Model, Spec, apply, make_pod, op_st

status_op = st.tuples(st.just("status"), st.sampled_from(POD_NAMES), st.sampled_from(["Pending", "Running"]))
ops = st.lists(st.one_of(op_st, status_op), max_size=40)


def pod_info_key(pi: PodInfo) -> tuple[Any, ...]:
    """Every slot of a PodInfo but the pod (checked by identity separately), and the pod's UID."""
    return (pi.uid, *(getattr(pi, s) for s in PodInfo.__slots__ if s != "pod"))


def node_key(info: NodeInfo) -> tuple[Any, ...]:
    return (
        info.name,
        [pod_info_key(p) for p in info.pods],
        [p.uid for p in info.pods_with_affinity],
        [p.uid for p in info.pods_with_required_anti_affinity],
        (info.requested.milli_cpu, info.requested.memory, dict(info.requested.scalar_resources)),
        (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory),
    )


def state(cache: Cache) -> list[tuple[Any, ...]]:
    return [node_key(info) for info in cache._nodes.values()]


def step(cache: Cache, model: Model, op: tuple[Any, ...]) -> bool:
    """``apply``, plus ``status``: a status-only update that keeps the spec object (told
    ``alike`` as the scheduler's handler tells it, when the requests are the same)."""
    if op[0] != "status":
        return bool(apply(cache, model, op))
    _, p, phase = op
    if p not in model.pods or model.pods[p][1]:
        return False
    old = model.pods[p][0]
    new = replace(old, status=PodStatus(phase=phase))
    cache.update_pod(old, new, alike=new.spec is old.spec and same_requests(new, old))
    model.pods[p] = (new, False)
    return True


def run(cache: Cache, model: Model, op: tuple[Any, ...]) -> str:
    try:
        return "ok" if step(cache, model, op) else "skipped"
    except CacheError as err:
        return f"error: {err}"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ops)
def test_reuse_files_the_same_pod_infos_as_fresh_ones(seq: list[Any]) -> None:
    fast, fast_model = Cache(), Model()
    ref, ref_model = Cache(), Model()
    for op in seq:
        got = run(fast, fast_model, op)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(pod_states, "reuse_pod_info", lambda prev, pod, alike=None: None)
            want = run(ref, ref_model, op)
        assert got == want
        # Same pods, same order, same derived data; the fast cache's pods are the newest versions.
        assert state(fast) == state(ref)
        # ... and the fast cache files the newest version of each pod.
        newest = {pod.metadata.uid: pod for pod, _ in fast_model.pods.values()}
        for info in fast._nodes.values():
            for pi in info.pods:
                assert pi.pod is newest[pi.uid]


SPEC: Spec = ([("250m", "64Mi")], None, True)


@pytest.mark.parametrize(
    ("new_spec", "reused"),
    [
        pytest.param(SPEC, True, id="equal-spec-reused"),
        pytest.param(([("1", "64Mi")], None, True), False, id="changed-requests-recomputed"),
        pytest.param(([("250m", "64Mi")], None, False), False, id="changed-affinity-recomputed"),
    ],
)
def test_reuse_pod_info_only_for_an_equal_spec(new_spec: Spec, reused: bool) -> None:
    old = make_pod("p", "n0", SPEC)
    new = make_pod("p", "n0", new_spec)
    got = pod_states.reuse_pod_info(PodInfo(old), new)
    assert (got is not None) == reused
    if got is not None:
        assert got.pod is new
        assert pod_info_key(got) == pod_info_key(PodInfo(new))
