"""``NodeToStatus.set_rows`` (the vectorised Filter's rejected windows kept as arrays) reads
exactly as the plain dict the per-node ``set`` calls build: every read, in insertion order,
through random sequences of windows, single sets and reads; the status counts a FitError and
DefaultPreemption read need no per-node entries."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.scheduler.framework.diagnosis import count_for_status_code, status_counts
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.types import Code, NodeInfo, Status
from tests.builders import node

STATUSES = [
    Status(Code.Unschedulable, "Insufficient cpu", plugin="NodeResourcesFit"),
    Status(Code.Unschedulable, "Insufficient memory", plugin="NodeResourcesFit"),
    Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint", plugin="TaintToleration"),
    Status(Code.UnschedulableAndUnresolvable, "node(s) were unschedulable", plugin="NodeUnschedulable"),
]


def _reference_counts(nts: NodeToStatus) -> list[tuple[Status, int]]:
    """The counts as the per-node walk over the explicit statuses gives them."""
    seen: dict[int, list[object]] = {}
    for s in nts.explicit_statuses():
        entry = seen.setdefault(id(s), [s, 0])
        entry[1] += 1  # type: ignore[operator]
    return [(s, n) for s, n in seen.values()]  # type: ignore[misc]


def _windows(rng: random.Random, names: list[str]) -> list[list[tuple[int, Status]]]:
    """Disjoint windows of (row, status) in a rotated visiting order."""
    order = list(range(len(names)))
    start = rng.randrange(len(order))
    order = order[start:] + order[:start]
    out = []
    lo = 0
    while lo < len(order):
        hi = min(len(order), lo + rng.randint(1, 9))
        out.append([(r, rng.choice(STATUSES)) for r in order[lo:hi] if rng.random() < 0.8])
        lo = hi
    return out


@pytest.mark.parametrize("seed", range(40))
def test_rows_read_as_the_plain_dict(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(rng.randint(1, 30))]
    index = {n: i for i, n in enumerate(names)}
    fast, plain = NodeToStatus(), NodeToStatus()
    absent = rng.choice([Status(Code.UnschedulableAndUnresolvable), Status(Code.Unschedulable, "absent")])
    fast.set_absent_nodes_status(absent)  # one object for both (``get`` is compared by identity)
    plain.set_absent_nodes_status(absent)
    windows = _windows(rng, names)
    done: set[str] = set()
    for window in windows:
        if rng.random() < 0.2:  # a single node set in between (a walked window)
            extra = rng.choice(names)
            if extra not in done and extra not in {names[r] for r, _ in window}:
                s = rng.choice(STATUSES)
                fast.set(extra, s)
                plain.set(extra, s)
                done.add(extra)
        window = [(r, s) for r, s in window if names[r] not in done]
        if not window:
            continue
        distinct = list({id(s): s for _, s in window}.values())
        which = np.array([distinct.index(s) for _, s in window], dtype=np.int64)
        counts = [sum(1 for _, s in window if s is d) for d in distinct]
        rows = np.array([r for r, _ in window], dtype=np.int64)
        fast.set_rows(names, index, rows, which, distinct, counts)
        plain.set_many((names[r], s) for r, s in window)
        done.update(names[r] for r, _ in window)
        if rng.random() < 0.3:  # a read in between
            probe = rng.choice([*names, "elsewhere", ""])
            assert fast.get(probe) is plain.get(probe)
    assert len(fast) == len(plain)
    assert status_counts(fast) == _reference_counts(plain)
    node_map = dict.fromkeys(names)
    assert fast.names_within(node_map) == plain.names_within(node_map)
    smaller = dict.fromkeys(names[:-1])
    assert fast.names_within(smaller) == (names[-1] not in plain.explicit_names())
    for code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable):
        assert count_for_status_code(fast, node_map, code) == count_for_status_code(plain, node_map, code)
    for probe in [*names, "elsewhere"]:
        assert fast.get(probe) is plain.get(probe)
    infos = [NodeInfo(node(n)) for n in names]
    assert [i.name for i in fast.nodes_for_status_code(infos, Code.Unschedulable)] == [
        i.name for i in plain.nodes_for_status_code(infos, Code.Unschedulable)
    ]
    assert list(fast.explicit_nodes()) == list(plain.explicit_nodes())
    assert list(fast.explicit_names()) == list(plain.explicit_names())
    fast.set("late", STATUSES[0])
    plain.set("late", STATUSES[0])
    assert list(fast.explicit_nodes()) == list(plain.explicit_nodes())


def test_a_failed_window_builds_no_entries_until_read() -> None:
    names = [f"n{i}" for i in range(1000)]
    index = {n: i for i, n in enumerate(names)}
    nts = NodeToStatus()
    nts.set_rows(names, index, np.arange(1000, dtype=np.int64), np.zeros(1000, dtype=np.int64), [STATUSES[0]], [1000])
    assert status_counts(nts) == [(STATUSES[0], 1000)]
    assert count_for_status_code(nts, index, Code.Unschedulable) == 1000
    assert len(nts) == 1000
    assert nts._statuses == {}  # nothing per node so far
    assert nts.get("n999") is STATUSES[0]
    assert len(list(nts.explicit_nodes())) == 1000
