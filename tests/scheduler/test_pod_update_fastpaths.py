"""The informer-handler fast paths for pod updates that keep the spec (the kubelet's status
writes), each against its reference.

* ``pod_scheduling_properties_change``: with equal specs only the labels are compared; the
  events must be ``properties_change_reference``'s (property over random pairs of pods, equal
  specs or not, the same spec object or an equal copy).
* ``NodeInfo.replace_pod``: the lists (pods, with affinity, with required anti-affinity), their
  order and the amounts ``remove_pod`` then ``add_pod`` leave, for every position of the pod;
  nothing changed when the pod is not on the node.
* ``Cache.update_pod`` / ``add_pod`` (confirming an assumed pod) take it only for a real node,
  the same node and no host ports, and leave the same NodeInfo as remove-then-add.
(``tests/scheduler/cache/test_cache_podinfo_reuse.py`` compares whole caches, reuse on and off,
over random event sequences.)
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.scheduler.cache import Cache
from agents.scheduler.framework.types import NodeInfo, PodInfo
from agents.scheduler.queue.events import pod_scheduling_properties_change, properties_change_reference
from emulator.base.api.core import Pod, PodStatus, Toleration
from tests import builders

ANTI = builders.affinity(required_anti=[builders.pod_term("zone", builders.label_selector({"app": "a"}))])
AFF = builders.affinity(preferred_pods=[(5, builders.pod_term("zone", builders.label_selector({"app": "b"})))])


def _pod(name: str, **kw: Any) -> Pod:
    return builders.pod(name, uid=name, **kw)


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    return builders.pod(
        "p",
        uid="p",
        labels=draw(st.sampled_from([{}, {"app": "a"}, {"app": "b"}])),
        cpu=draw(st.sampled_from([None, "100m", "1"])),
        gates=draw(st.sampled_from([(), ("g",)])),
        tolerations=draw(st.sampled_from([(), (Toleration(key="k", operator="Exists"),)])),
        node=draw(st.sampled_from(["", "n1"])),
        phase=draw(st.sampled_from(["Pending", "Running"])),
    )


@given(old=pods(), new=pods(), same_spec=st.sampled_from(["object", "copy", "drawn"]))
def test_properties_change_matches_reference(old: Pod, new: Pod, same_spec: str) -> None:
    if same_spec == "object":
        new = replace(new, spec=old.spec)
    elif same_spec == "copy":
        new = replace(new, spec=copy.deepcopy(old.spec))
        assert new.spec is not old.spec
    assert pod_scheduling_properties_change(new, old) == properties_change_reference(new, old)


def _lists(info: NodeInfo) -> tuple[Any, ...]:
    return (
        [(p.pod.metadata.uid, p.pod.status.phase) for p in info.pods],
        [p.pod.metadata.uid for p in info.pods_with_affinity],
        [p.pod.metadata.uid for p in info.pods_with_required_anti_affinity],
        (info.requested.milli_cpu, info.requested.memory),
        (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory),
    )


def _node_info(specs: list[dict[str, Any]]) -> NodeInfo:
    info = NodeInfo(builders.node("n1"))
    for i, kw in enumerate(specs):
        info.add_pod(PodInfo(_pod(f"p{i}", node="n1", **kw)))
    return info


SPECS: list[dict[str, Any]] = [
    {"cpu": "100m"},
    {"cpu": "200m", "affinity": ANTI},
    {"memory": "1Gi", "affinity": AFF},
    {"cpu": "1", "affinity": ANTI},
    {},
]


@pytest.mark.parametrize("which", [pytest.param(i, id=f"pod-{i}-of-{len(SPECS)}") for i in range(len(SPECS))])
def test_replace_pod_equals_remove_then_add(which: int) -> None:
    fast, ref = _node_info(SPECS), _node_info(SPECS)
    old = fast.pods[[p.pod.metadata.name for p in fast.pods].index(f"p{which}")]
    new_pod = replace(old.pod, status=PodStatus(phase="Running"))
    gen = fast.generation
    assert fast.replace_pod(PodInfo(new_pod))
    assert ref.remove_pod(old.pod)
    ref.add_pod(PodInfo(new_pod))
    assert _lists(fast) == _lists(ref)
    assert fast.generation > gen


def test_replace_pod_of_a_pod_elsewhere_changes_nothing() -> None:
    info = _node_info(SPECS)
    before, gen = _lists(info), info.generation
    assert not info.replace_pod(PodInfo(_pod("stranger", node="n1", affinity=ANTI)))
    assert _lists(info) == before
    assert info.generation == gen


@pytest.mark.parametrize(
    ("kw", "confirm", "in_place"),
    [
        pytest.param({"cpu": "100m"}, False, True, id="status-update"),
        pytest.param({"cpu": "100m"}, True, True, id="confirm-assumed"),
        pytest.param({"cpu": "100m", "affinity": ANTI}, False, True, id="with-anti-affinity"),
        pytest.param({"containers": [builders.container(host_ports=[80])]}, False, False, id="host-ports"),
        pytest.param({"containers": [builders.container(host_ports=[80])]}, True, False, id="host-ports-confirm"),
    ],
)
def test_cache_replaces_in_place_only_where_it_may(kw: dict[str, Any], confirm: bool, in_place: bool) -> None:
    cache = Cache()
    cache.add_node(builders.node("n1"))
    for i in range(3):
        cache.add_pod(_pod(f"other{i}", node="n1", cpu="10m"))
    pod = _pod("p", node="n1", **kw)
    if confirm:
        cache.assume_pod(pod)
    else:
        cache.add_pod(pod)
    cache.add_pod(_pod("last", node="n1", cpu="10m"))
    info = cache._nodes["n1"]
    calls: list[str] = []
    original = NodeInfo.remove_pod

    def spy(self: NodeInfo, p: Pod) -> bool:
        calls.append(p.metadata.uid)
        return original(self, p)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(NodeInfo, "remove_pod", spy)
        new = replace(pod, status=PodStatus(phase="Running"))
        if confirm:
            cache.add_pod(new)
        else:
            cache.update_pod(pod, new)
    assert (calls == []) == in_place
    assert [p.pod.metadata.uid for p in info.pods] == ["other0", "other1", "other2", "last", "p"]
    assert info.pods[-1].pod is new
    assert not cache.is_assumed_pod(new)
