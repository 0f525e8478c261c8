"""``Placement`` (the pod handlers' incremental grouping of a DaemonSet's pods by target
node) against ``nodes_to_daemon_pods`` (the same grouping computed from scratch), over random
sequences of pod adds, updates and deletes; and ``relevant``, the pod-update filter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.daemonset.eligibility import replace_node_name_affinity
from agents.controllers.daemonset.manage import nodes_to_daemon_pods
from agents.controllers.daemonset.placement import Placement, relevant
from emulator.base.api.core import Pod, PodCondition
from tests.builders import pod

NODES = ("a", "b", "c")
PHASES = ("Pending", "Running", "Failed", "Succeeded")


def make(name: str, node: str, phase: str, deleting: bool, bound: bool) -> Pod:
    p = pod(name, affinity=replace_node_name_affinity(None, node), phase=phase, node=node if bound else "")
    if deleting:
        p = replace(p, metadata=replace(p.metadata, deletion_timestamp="2026-01-01T00:00:09Z"))
    return p


POD_STATES = st.tuples(st.sampled_from(NODES), st.sampled_from(PHASES), st.booleans(), st.booleans())
OPS = st.lists(st.tuples(st.sampled_from(["p0", "p1", "p2", "p3"]), st.none() | POD_STATES), max_size=30)


@settings(max_examples=100, deadline=None)
@given(ops=OPS)
def test_placement_matches_a_regrouping_from_scratch(ops: list[tuple[str, tuple[str, str, bool, bool] | None]]) -> None:
    placement = Placement()
    live: dict[str, Pod] = {}
    for name, state in ops:
        old = live.get(name)
        if state is None:
            if old is not None:
                placement.remove("uid", old)
                del live[name]
            continue
        new = make(name, *state)
        if old is not None:
            placement.remove("uid", old)
        placement.add("uid", new)
        live[name] = new
        want = nodes_to_daemon_pods([live[k] for k in sorted(live)])
        got = placement.by_node("uid")
        assert {n: [p.metadata.name for p in ps] for n, ps in got.items()} == {
            n: sorted(p.metadata.name for p in ps) for n, ps in want.items()
        }


READY = PodCondition(type="Ready", status="True", last_transition_time="2026-01-01T00:00:01Z")
NOT_READY = PodCondition(type="Ready", status="False", last_transition_time="2026-01-01T00:00:00Z")
BASE = make("p", "a", "Pending", deleting=False, bound=False)


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(replace(BASE, spec=replace(BASE.spec, node_name="a")), False, id="binding"),
        pytest.param(replace(BASE, status=replace(BASE.status, phase="Running")), False, id="running"),
        pytest.param(replace(BASE, status=replace(BASE.status, conditions=[NOT_READY])), False, id="not-ready"),
        pytest.param(replace(BASE, status=replace(BASE.status, conditions=[READY])), True, id="ready"),
        pytest.param(replace(BASE, status=replace(BASE.status, phase="Failed")), True, id="failed"),
        pytest.param(make("p", "a", "Pending", deleting=True, bound=False), True, id="deleting"),
        pytest.param(replace(BASE, metadata=replace(BASE.metadata, labels={"controller-revision-hash": "x"})), True,
                     id="revision"),
    ],
)  # fmt: skip
def test_relevant(new: Pod, want: bool) -> None:
    assert relevant(BASE, new) is want
