"""Nominator: Override/Noop modes, update semantics, deletion, and the queue's use of it."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import PodInfo
from agents.scheduler.queue import Nominator
from emulator.base.api.core import Pod
from tests.scheduler.queue.queue_helpers import FakeClock, Registry, make_pod, make_queue, pop


def on(n: Nominator, node: str) -> list[str]:
    return [pi.pod.metadata.name for pi in n.nominated_pods_for_node(node)]


def test_override_keeps_insertion_order_and_moves_between_nodes() -> None:
    n = Nominator()
    a, b, c = (PodInfo(make_pod(x)) for x in "abc")
    n.add_nominated_pod(b, "n1")
    n.add_nominated_pod(a, "n1")
    n.add_nominated_pod(c, "n2")
    assert (on(n, "n1"), on(n, "n2"), len(n)) == (["b", "a"], ["c"], 3)
    n.add_nominated_pod(b, "n2")  # re-nominated: leaves n1
    assert (on(n, "n1"), on(n, "n2")) == (["a"], ["c", "b"])
    n.add_nominated_pod(a, "")  # Override with "" clears
    assert (on(n, "n1"), n.nominated_node_name("uid-default-a"), len(n)) == ([], "", 2)


@pytest.mark.parametrize(
    ("status_nnn", "node_name", "expected"),
    [
        pytest.param("n1", None, "n1", id="noop-uses-status"),
        pytest.param("", None, "", id="noop-without-status"),
        pytest.param("n1", "n2", "n2", id="override-beats-status"),
    ],
)
def test_modes(status_nnn: str, node_name: str | None, expected: str) -> None:
    n = Nominator()
    n.add_nominated_pod(PodInfo(make_pod("p", nominated=status_nnn)), node_name)
    assert n.nominated_node_name("uid-default-p") == expected
    assert on(n, expected) == (["p"] if expected else [])


@pytest.mark.parametrize(
    ("old_nnn", "new_nnn", "in_memory", "expected"),
    [
        pytest.param("", "", "n9", "n9", id="keeps-in-memory-nomination"),
        pytest.param("", "n2", "n9", "n2", id="status-set-wins"),
        pytest.param("n1", "", "n1", "", id="status-cleared"),
        pytest.param("n1", "n3", "n1", "n3", id="status-changed"),
        pytest.param("", "", "", "", id="never-nominated"),
    ],
)
def test_update_nominated_pod(old_nnn: str, new_nnn: str, in_memory: str, expected: str) -> None:
    n = Nominator()
    old = make_pod("p", nominated=old_nnn)
    if in_memory:
        n.add_nominated_pod(PodInfo(old), in_memory)
    new_info = PodInfo(make_pod("p", nominated=new_nnn, resource_version="2"))
    n.update_nominated_pod(old, new_info)
    assert n.nominated_node_name("uid-default-p") == expected
    if expected:
        assert n.nominated_pods_for_node(expected) == [new_info]


def test_delete_and_pod_lister() -> None:
    live: dict[str, Pod] = {"a": make_pod("a"), "bound": make_pod("bound", node_name="n0")}
    n = Nominator(lambda ns, name: live.get(name))
    for name in ("a", "bound", "gone"):
        n.add_nominated_pod(PodInfo(make_pod(name)), "n1")
    assert on(n, "n1") == ["a"]  # deleted or already bound pods are not nominated
    n.delete_nominated_pod_if_exists(make_pod("a"))
    n.delete_nominated_pod_if_exists(make_pod("a"))
    assert (on(n, "n1"), len(n)) == ([], 0)
    assert repr(n) == "<Nominator pods=0 nodes=0>"


def test_queue_keeps_the_nominator_in_step() -> None:
    q = make_queue(FakeClock(), Registry())
    q.add(make_pod("p", nominated="n1"))  # Add: Noop mode, from status
    assert [pi.pod.metadata.name for pi in q.nominated_pods_for_node("n1")] == ["p"]
    qpi = pop(q)
    q.add_nominated_pod(qpi.pod_info, "n2")  # preemption's PostFilter result
    assert q.nominated_pods_for_node("n1") == []
    assert q.nominated_pods_for_node("n2") == [qpi.pod_info]
    q.delete_nominated_pod_if_exists(qpi.pod)
    assert q.nominated_pods_for_node("n2") == []
    q.add(make_pod("r", nominated="n3"))
    q.delete(make_pod("r"))
    assert q.nominated_pods_for_node("n3") == []
