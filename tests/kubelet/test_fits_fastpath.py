"""Kubelet admission's resource check: ``_fits_resources`` (short-cut for pods requesting only
cpu, memory and ephemeral-storage) gives the same results, in the same order, as
``_fits_resources_reference`` on random pods, nodes and admitted pods."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.kubelet.admission import NodeUsage, _fits_resources, _fits_resources_reference
from emulator.base.api.resources import node_allocatable
from tests import builders

_NAMES = ["cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi"]
_requests = st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(["0", "1", "2", "3"]), max_size=4)


def _check(requests: dict[str, str], admitted: list[dict[str, str]], allocatable: dict[str, str], pods: str) -> None:
    pod = builders.pod("p", uid="p", image="", requests=requests)
    usage = NodeUsage.of([builders.pod(f"q{i}", uid=f"q{i}", image="", requests=r) for i, r in enumerate(admitted)])
    alloc = node_allocatable(builders.node("n", cpu=None, memory=None, pods=pods, extra=allocatable))
    assert _fits_resources(pod, alloc, usage) == _fits_resources_reference(pod, alloc, usage)


@pytest.mark.parametrize(
    ("requests", "admitted", "allocatable", "pods"),
    [
        pytest.param({"cpu": "2", "memory": "3"}, [{"cpu": "1"}], {"cpu": "2", "memory": "2"}, "1", id="all-short"),
        pytest.param({"cpu": "0"}, [], {}, "0", id="zero-request-no-pods-left"),
        pytest.param({"example.com/gpu": "1", "cpu": "3"}, [], {"cpu": "2"}, "5", id="extended-dropped"),
        pytest.param({"hugepages-2Mi": "2", "cpu": "1"}, [], {"hugepages-2Mi": "1"}, "5", id="scalar"),
    ],
)
def test_examples(
    requests: dict[str, str], admitted: list[dict[str, str]], allocatable: dict[str, str], pods: str
) -> None:
    _check(requests, admitted, allocatable, pods)


@settings(max_examples=200, deadline=None)
@given(
    _requests,
    st.lists(_requests, max_size=3),
    st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(["0", "1", "4"]), max_size=5),
    st.sampled_from(["0", "1", "3"]),
)
def test_fast_equals_reference(
    requests: dict[str, str], admitted: list[dict[str, str]], allocatable: dict[str, str], pods: str
) -> None:
    _check(requests, admitted, allocatable, pods)
