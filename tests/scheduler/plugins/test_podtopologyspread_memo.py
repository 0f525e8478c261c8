"""PodTopologySpread's cross-cycle match counts (``MatchCounts``) never change a result.

One plugin instance (whose memo lives across cycles) and a fresh instance per cycle (empty memo)
see the same snapshot after every mutation of a random sequence (pods bound, removed, relabelled,
marked terminating; NodeInfos cloned and the clone mutated): their PreFilter and PreScore states
must be equal, critical paths and dict order included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import CycleState, NodeInfo, PodInfo
from agents.scheduler.plugins.podtopologyspread import PodTopologySpread, Selector
from agents.scheduler.plugins.podtopologyspread.common import MatchCounts
from agents.scheduler.plugins.podtopologyspread.filtering import CriticalPaths, PreFilterState, cal_pre_filter_state
from agents.scheduler.plugins.podtopologyspread.memo import critical_paths_of
from agents.scheduler.plugins.podtopologyspread.scoring import PreScoreState, count_all_nodes, init_pre_score_state
from emulator.base.api.core import Pod
from tests.scheduler.plugins.test_podtopologyspread import FakeHandle, make_node, make_pod, services, spread

ZONES = ("z1", "z2", "z3")
NODES = [make_node(f"n{i}", {"zone": ZONES[i % 3], "node": f"n{i}"}) for i in range(6)]
INCOMING = make_pod(
    "incoming",
    labels={"app": "a"},
    constraints=[
        spread(1, "zone", "DoNotSchedule", {"matchLabels": {"app": "a"}}),
        spread(1, "node", "DoNotSchedule", {"matchLabels": {"app": "a"}}),
        spread(2, "zone", "ScheduleAnyway", {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
    ],
)


DEFAULTED = make_pod("defaulted", labels={"app": "a"})
"""No constraints of its own: the System default constraints (zone and hostname, ScheduleAnyway)
with a Service-like selector; zone-less nodes still count (``require_all`` False)."""


def _states(pl: PodTopologySpread, snap: Snapshot, pod: Pod, *, reference: bool = False) -> tuple[Any, ...]:
    infos = snap.node_info_list
    state = CycleState()
    pl.pre_filter(state, pod, infos)
    pl.pre_score(state, pod, infos)
    try:
        f: PreFilterState | None = state.read("PreFilterPodTopologySpread")
    except KeyError:
        f = None
    s = state.read("PreScorePodTopologySpread")
    assert isinstance(s, PreScoreState)
    if reference:  # the plain per-node computations, no memo
        if f is not None:
            f = cal_pre_filter_state(pod, infos, pl.get_constraints(pod))
        require_all = bool(pod.spec.topology_spread_constraints)
        s = init_pre_score_state(s.constraints, infos, require_all)
        count_all_nodes(s, pod, infos, require_all)
    return (
        [list(d.items()) for d in f.tp_value_to_match_num] if f is not None else None,
        [list(cp.paths) for cp in f.critical_paths] if f is not None else None,
        [list(d.items()) for d in s.tp_value_to_pod_counts],
    )


def _plugins(snap: Snapshot) -> list[tuple[PodTopologySpread, Pod]]:
    listed = PodTopologySpread({"defaultingType": "List"}, FakeHandle(snap))  # type: ignore[arg-type]
    system = PodTopologySpread(
        {"defaultingType": "System"},
        FakeHandle(snap),  # type: ignore[arg-type]
        default_selector=services({"app": "a"}),
    )
    return [(listed, INCOMING), (system, DEFAULTED)]


OP = st.tuples(
    st.sampled_from(["add", "remove", "relabel", "terminate", "zone", "unzone"]),
    st.integers(0, 5),
    st.sampled_from([{"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}, {"tier": "y"}]),
)


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(OP, min_size=1, max_size=25))
def test_memoised_counts_equal_fresh_counts(ops: list[tuple[str, int, dict[str, str]]]) -> None:
    snap = Snapshot.from_objects([], NODES)
    kept = _plugins(snap)
    placed: list[tuple[int, Pod]] = []
    for k, (op, node, labels) in enumerate(ops):
        infos = snap.node_info_list
        if op in ("zone", "unzone"):
            labels = {"node": f"n{node}"} | ({"zone": ZONES[k % 3]} if op == "zone" else {})
            infos[node].set_node(make_node(f"n{node}", labels))
        elif op == "add" or not placed:
            pod = make_pod(f"p{k}", f"n{node}", labels=labels)
            infos[node].add_pod(PodInfo(pod))
            placed.append((node, pod))
        else:
            at, old = placed.pop(node % len(placed))
            assert infos[at].remove_pod(old)
            if op != "remove":
                meta = old.metadata
                new = make_pod(meta.name, f"n{at}", labels=labels, terminating=op == "terminate")
                infos[at].add_pod(PodInfo(new))
                placed.append((at, new))
        for (pl, pod), (fresh, _) in zip(kept, _plugins(snap), strict=True):
            assert _states(pl, snap, pod) == _states(fresh, snap, pod, reference=True)


@pytest.mark.parametrize(
    ("mutate", "want_original", "want_clone"),
    [
        pytest.param(lambda c: None, 2, 2, id="clone-untouched-shares-count"),
        pytest.param(
            lambda c: c.add_pod(PodInfo(make_pod("x", "n0", labels={"app": "a"}))), 2, 3, id="clone-gains-pod"
        ),
        pytest.param(lambda c: c.remove_pod(make_pod("p0", "n0")), 2, 1, id="clone-loses-pod"),
    ],
)
def test_clone_mutation_takes_a_new_count(mutate: Any, want_original: int, want_clone: int) -> None:
    info = NodeInfo(NODES[0])
    for i in range(2):
        info.add_pod(PodInfo(make_pod(f"p{i}", "n0", labels={"app": "a"})))
    memo = MatchCounts()
    sel = Selector.from_set({"app": "a"})
    assert memo.count(info, sel, "default") == 2
    clone = info.clone()
    mutate(clone)
    assert memo.count(clone, sel, "default") == want_clone
    assert memo.count(info, sel, "default") == want_original
    assert memo.count(info, sel, "other") == 0


@settings(max_examples=200, deadline=None)
@given(nums=st.lists(st.integers(0, 4), max_size=8), empty_first=st.booleans())
def test_critical_paths_closed_form_equals_replay(nums: list[int], empty_first: bool) -> None:
    counts = {("" if empty_first and i == 0 else f"v{i}"): n for i, n in enumerate(nums)}
    replay = CriticalPaths()
    for value, num in counts.items():
        replay.update(value, num)
    assert critical_paths_of(counts).paths == replay.paths
