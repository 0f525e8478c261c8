"""``Evaluator.preempt``'s uniform shortcut (``_uniform_message``) against the full dry run.

When no pod anywhere has a lower priority than the preemptor, ``preempt`` answers from the
number of potential nodes alone (``count_for_status_code``). Two frameworks are built alike; one
runs with ``fast_dry_run = False`` (every potential node listed and dry-run on copies); both must
give the same PostFilter result, status code and message, and leave the same random stream (the
offset is drawn only when some node is potential). The cluster mixes full nodes
(Unschedulable: potential), tainted and cordoned ones (UnschedulableAndUnresolvable) and nodes
left absent from the filter statuses.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.framework.diagnosis import count_for_status_code, status_counts
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.types import Code, CycleState, Status
from agents.scheduler.plugins.defaultpreemption import DefaultPreemption
from tests.scheduler.test_preemption_fastpath import World, _framework, make_node, make_pod

# (full, tainted, cordoned, absent) node counts; the preemptor's priority against the bound pods' 10
CASES = [
    pytest.param((3, 0, 0, 0), 10, id="all-full"),
    pytest.param((4, 2, 1, 0), 10, id="full-tainted-cordoned"),
    pytest.param((2, 1, 0, 3), 10, id="some-absent"),
    pytest.param((0, 2, 1, 0), 10, id="none-potential"),
    pytest.param((0, 0, 0, 4), 10, id="all-absent"),
    pytest.param((3, 1, 0, 1), 5, id="lower-priority-preemptor"),
    pytest.param((3, 1, 0, 1), 20, id="victims-exist-no-shortcut"),
]


def _outcome(shape: tuple[int, int, int, int], priority: int, seed: int, fast: bool) -> tuple[object, ...]:
    full, tainted, cordoned, absent = shape
    nodes = [make_node(f"f{i}", 1000, 4000, 110, 0, False, False, "a") for i in range(full)]
    nodes += [make_node(f"t{i}", 1000, 4000, 110, 0, True, False, "a") for i in range(tainted)]
    nodes += [make_node(f"c{i}", 1000, 4000, 110, 0, False, True, "a") for i in range(cordoned)]
    nodes += [make_node(f"x{i}", 1000, 4000, 110, 0, False, False, "a") for i in range(absent)]
    bound = [make_pod(f"p-{n.metadata.name}", cpu=900, mem=None, priority=10, node=n.metadata.name) for n in nodes]
    fwk = _framework("default", World(nodes, bound), seed)
    plugin = fwk.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    plugin.evaluator.fast_dry_run = fast
    plugin.evaluator.pdb_lister = list
    pod = make_pod("preemptor", cpu=900, mem=None, priority=priority)
    state = CycleState()
    infos = fwk.snapshot_shared_lister().node_info_list
    fwk.run_pre_filter_plugins(state, pod, infos)
    filtered = NodeToStatus()
    for ni in infos:
        if not ni.name.startswith("x"):
            filtered.set(ni.name, fwk.run_filter_plugins_with_nominated_pods(state, pod, ni))
    shortcut = plugin.evaluator._uniform_message
    taken: list[bool] = []

    def spy(*args: Any) -> str | None:
        message = shortcut(*args)
        taken.append(message is not None)
        return message

    plugin.evaluator._uniform_message = spy  # type: ignore[method-assign]
    result, status = plugin.evaluator.preempt(state, pod, filtered)
    nominated = None if result is None else result.nominated_node_name
    return nominated, status.code, status.message(), fwk.rng.getstate(), taken == [fast and priority <= 10]


@pytest.mark.parametrize(("shape", "priority"), CASES)
@pytest.mark.parametrize("seed", [0, 3])
def test_uniform_message_matches_full_dry_run(shape: tuple[int, int, int, int], priority: int, seed: int) -> None:
    assert _outcome(shape, priority, seed, fast=True) == _outcome(shape, priority, seed, fast=False)


def test_uniform_message_text() -> None:
    _, code, message, _, taken = _outcome((2, 1, 0, 1), 10, 0, fast=True)
    assert code is Code.Unschedulable
    assert taken
    assert message == (
        "0/4 nodes are available: 2 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )


def test_status_counts_and_count_for_status_code() -> None:
    a, b = Status(Code.Unschedulable, "a"), Status(Code.UnschedulableAndUnresolvable, "b")
    nts = NodeToStatus({"n1": a, "n2": b, "n3": a, "n4": Status(Code.Unschedulable, "a")})
    counts = status_counts(nts)
    assert [(s.reasons, n) for s, n in counts] == [(("a",), 2), (("b",), 1), (("a",), 1)]
    node_map = dict.fromkeys(["n1", "n2", "n3", "n4", "n5"])
    assert count_for_status_code(nts, node_map, Code.Unschedulable) == 3
    nts.set_absent_nodes_status(Status(Code.Unschedulable))
    assert count_for_status_code(nts, node_map, Code.Unschedulable) == 4
    assert count_for_status_code(nts, dict.fromkeys(["n1", "n2"]), Code.Unschedulable) is None
