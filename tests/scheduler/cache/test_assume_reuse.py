"""The assumed copy of a pod reuses the queue's PodInfo (``Cache.assume_pod(pod, prev)``):
``reuse_pod_info`` accepts a spec that differs from ``prev``'s in ``nodeName`` only, and files
exactly what a fresh ``PodInfo(pod)`` holds; any other difference (with or without a new
``nodeName``) still builds a fresh PodInfo."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.scheduler.cache import Cache, pod_states
from agents.scheduler.framework.types import PodInfo
from tests import builders
from tests.scheduler.cache.test_cache_podinfo_reuse import SPEC, pod_info_key
from tests.scheduler.cache.test_cache_property import Spec, make_pod


@pytest.mark.parametrize(
    ("new_spec", "node", "reused"),
    [
        pytest.param(SPEC, "n1", True, id="node-name-set-reused"),
        pytest.param(SPEC, "", True, id="same-spec-reused"),
        pytest.param(([("1", "64Mi")], None, True), "n1", False, id="node-name-and-requests-recomputed"),
        pytest.param(([("250m", "64Mi")], None, False), "n1", False, id="node-name-and-affinity-recomputed"),
    ],
)
def test_reuse_ignores_only_the_node_name(new_spec: Spec, node: str, reused: bool) -> None:
    old = make_pod("p", "", SPEC)
    new = make_pod("p", node, new_spec)
    got = pod_states.reuse_pod_info(PodInfo(old), new)
    assert (got is not None) == reused
    if got is not None:
        assert got.pod is new
        assert pod_info_key(got) == pod_info_key(PodInfo(new))


@pytest.mark.parametrize(
    "prev_requests",
    [
        pytest.param("250m", id="queue-pod-info-reused"),
        pytest.param("1", id="stale-pod-info-ignored"),
    ],
)
def test_assume_pod_files_what_a_fresh_pod_info_holds(prev_requests: str) -> None:
    queued = builders.pod("p", uid="p", cpu=prev_requests)
    pod = builders.pod("p", uid="p", cpu="250m")
    assumed = replace(pod, spec=replace(pod.spec, node_name="n0"))
    cache = Cache()
    cache.add_node(builders.node("n0"))
    cache.assume_pod(assumed, PodInfo(queued))
    [filed] = cache._nodes["n0"].pods
    assert filed.pod is assumed
    assert pod_info_key(filed) == pod_info_key(PodInfo(assumed))
    assert cache._nodes["n0"].requested.milli_cpu == 250
