"""InterPodAffinity's cross-cycle memo (``memo.py``, ``aggregate.py``) and ``filter_all``
(``vector.py``) never change a result.

A random sequence of cache changes (pods with random labels, namespaces and (anti-)affinity bound,
removed, relabelled; nodes relabelled, removed and re-added) goes through the real ``Cache`` and
``Snapshot``. After each batch, for several incoming pods, one plugin instance kept across the
sequence (memo always on: ``small_lists`` = 0) must give the reference's PreFilter and PreScore results:
statuses, the three count maps (``existing_anti_affinity_counts`` over the anti-affinity
sub-list, ``incoming_affinity_anti_affinity_counts`` over all nodes), the topology score map
(``build_topology_score`` over the reference's candidates), Filter and Score per node — and its
``filter_all`` over the snapshot's NodeTable must give Filter's status on every row, for the fresh
state, for a clone updated by AddPod, and for the previous batch's state (stale memo arrays).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.cache.cache import Cache
from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import SUCCESS, Code, CycleState, NodeInfo, PodInfo, Status
from agents.scheduler.plugins.interpodaffinity import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY, InterPodAffinity
from agents.scheduler.plugins.interpodaffinity.aggregate import changed_positions
from agents.scheduler.plugins.interpodaffinity.filtering import (
    PreFilterState,
    existing_anti_affinity_counts,
    incoming_affinity_anti_affinity_counts,
)
from agents.scheduler.plugins.interpodaffinity.scoring import PreScoreState
from agents.scheduler.plugins.interpodaffinity.terms import parse_pod
from emulator.base.api.core import Node, Pod
from tests.scheduler.plugins.interpodaffinity_helpers import (
    affinity,
    expr,
    namespace,
    node,
    plugin,
    pod,
    t_exists,
    t_in,
    term,
    weighted,
)

NAMESPACES = [namespace("a", team="x"), namespace("b", team="y"), namespace("c", team="z")]
ZONES = ("z1", "z2", "")
N_NODES = 6

LABELS = [{"app": "web"}, {"app": "db"}, {"app": "web", "tier": "x"}, {"tier": "y"}, {}, {"app": "db", "tier": "x"}]
AFFINITIES: list[dict[str, Any]] = [
    {},
    affinity(anti=[t_in("app", "hostname", "web")]),
    affinity(aff=[t_in("app", "zone", "db")]),
    affinity(pref_anti=[weighted(5, t_exists("app", "zone"))]),
    affinity(
        pref=[weighted(3, term(expr("tier", "Exists"), topo="region", ns_selector={"matchLabels": {"team": "x"}}))]
    ),
    affinity(anti=[term(expr("app", "In", "web", "db"), topo="zone", ns_selector={})]),
    affinity(aff=[t_exists("tier", "region")], pref=[weighted(2, t_in("app", "hostname", "web"))]),
    affinity(anti=[term(expr("app", "Exists"), topo="zone", ns_selector={"matchLabels": {"team": "y"}})]),
]
INCOMING = [
    pod(  # in-anti's term, but for every namespace (differs from it in the namespace selector only)
        "in-anti-all",
        ns="b",
        labels={"app": "web"},
        anti=[term(match_labels={"app": "web"}, topo="hostname", namespaces=["a", "b"], ns_selector={})],
    ),
    pod("in-aff-only", ns="a", labels={"app": "db"}, aff=[t_in("app", "zone", "db")]),  # in-aff without anti
    pod("in-two", ns="b", labels={"app": "db"}, aff=[t_in("app", "zone", "db"), t_exists("tier", "region")]),
    pod("in-other", ns="a", labels={"app": "web"}, aff=[t_in("app", "zone", "cache")]),  # nothing matches
    pod(  # +2 and -2 on the same pairs: a map of zeros is not an empty map (Success, not Skip)
        "in-zero",
        ns="a",
        pref=[weighted(2, t_in("app", "zone", "web"))],
        pref_anti=[weighted(2, t_in("app", "zone", "web"))],
    ),
    pod(
        "in-anti",
        ns="b",
        labels={"app": "web"},
        anti=[term(match_labels={"app": "web"}, topo="hostname", namespaces=["a", "b"])],
    ),
    pod("in-aff", ns="a", labels={"app": "db"}, aff=[t_in("app", "zone", "db")], anti=[t_exists("tier", "region")]),
    pod("in-plain", ns="a", labels={"app": "web", "tier": "x"}),
    pod(
        "in-pref",
        ns="b",
        labels={"tier": "x"},
        pref=[weighted(4, t_in("app", "zone", "db"))],
        pref_anti=[weighted(2, term(expr("app", "Exists"), topo="hostname", ns_selector={}))],
    ),
    pod(
        "in-self",
        ns="a",
        labels={"app": "cache"},
        aff=[term(expr("app", "In", "cache"), topo="zone", ns_selector={"matchLabels": {"team": "x"}})],
    ),
]


def _node(i: int, zone: str, region: str = "r1") -> Node:
    labels = {"hostname": f"n{i}", "region": region} | ({"zone": zone} if zone else {})
    return node(f"n{i}", **labels)


def _reference(snap: Snapshot) -> InterPodAffinity:
    """A fresh instance taking the reference functions for the sub-lists (the incoming pod's
    counts still come from a fresh memo: they are also compared with the reference function)."""
    pl = plugin(snap, NAMESPACES)
    pl.small_lists = 1 << 30
    return pl


def _kept(snap: Snapshot) -> InterPodAffinity:
    """The instance kept across the sequence: the memo for every sum."""
    pl = plugin(snap, NAMESPACES)
    pl.small_lists = 0
    return pl


def _statuses(pl: InterPodAffinity, state: CycleState, p: Pod, infos: list[NodeInfo]) -> list[Status]:
    return [pl.filter(state, p, ni) for ni in infos]


def _vector_statuses(pl: InterPodAffinity, state: CycleState, p: Pod, snap: Snapshot) -> list[Status] | None:
    table = snap.table
    rows = np.arange(table.size, dtype=np.int64)[::-1].copy()  # any order of rows
    got = pl.filter_all(state, p, table, rows)
    if got is None:
        return None
    out: list[Status] = [SUCCESS] * table.size
    if got.codes is not None:
        for row, code in zip(rows.tolist(), got.codes.tolist(), strict=True):
            out[row] = got.statuses[code]
    return out


def _check_filter_all(pl: InterPodAffinity, state: CycleState, p: Pod, snap: Snapshot) -> None:
    vec = _vector_statuses(pl, state, p, snap)
    if vec is not None:
        assert vec == _statuses(pl, state, p, snap.node_info_list)


def _check(kept: InterPodAffinity, snap: Snapshot, p: Pod) -> CycleState:
    """Kept plugin (memo) against the reference functions; returns the kept PreFilter state."""
    infos = snap.node_info_list
    state = CycleState()
    _, status = kept.pre_filter(state, p, infos)
    score_status = kept.pre_score(state, p, infos)
    ref_state = CycleState()
    _, ref_status = _reference(snap).pre_filter(ref_state, p, infos)
    ref_score_status = _reference(snap).pre_score(ref_state, p, infos)
    assert status == ref_status
    assert score_status == ref_score_status
    if status.code is Code.Skip:
        ns_labels = dict(NAMESPACES["abc".index(p.metadata.namespace)].metadata.labels)
        with_anti = snap.have_pods_with_required_anti_affinity_node_info_list
        assert not existing_anti_affinity_counts(p, ns_labels, with_anti, parse_pod)
    else:
        s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        r: PreFilterState = ref_state.read(PRE_FILTER_STATE_KEY)
        with_anti = snap.have_pods_with_required_anti_affinity_node_info_list
        assert s.existing_anti_affinity_counts == existing_anti_affinity_counts(
            p, s.namespace_labels, with_anti, parse_pod
        )
        assert (s.affinity_counts, s.anti_affinity_counts) == incoming_affinity_anti_affinity_counts(s.terms, infos)
        assert _maps(s) == _maps(r)
        assert _statuses(kept, state, p, infos) == _statuses(_reference(snap), ref_state, p, infos)
        _check_filter_all(kept, state, p, snap)
    if score_status.is_success():
        got: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        want: PreScoreState = ref_state.read(PRE_SCORE_STATE_KEY)
        assert got.topology_score == want.topology_score
        ref = _reference(snap)
        assert [kept.score(state, p, ni) for ni in infos] == [ref.score(ref_state, p, ni) for ni in infos]
    return state


def _maps(s: PreFilterState) -> tuple[Any, ...]:
    return (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)


def _pod(k: int, node_i: int, labels_i: int, ns_i: int, aff_i: int) -> Pod:
    return pod(
        f"p{k}",
        ns="abc"[ns_i],
        uid=f"u{k}",
        node=f"n{node_i}",
        labels=dict(LABELS[labels_i]),
        raw_affinity=AFFINITIES[aff_i],
    )


OP = st.tuples(
    st.sampled_from(["add", "add", "remove", "relabel", "node", "toggle"]),
    st.integers(0, N_NODES - 1),
    st.integers(0, len(LABELS) - 1),
    st.integers(0, 2),
    st.integers(0, len(AFFINITIES) - 1),
    st.booleans(),  # check after this op (else batch it with the next)
)


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(OP, min_size=1, max_size=30), added=st.integers(0, len(AFFINITIES) - 1))
def test_memo_and_filter_all_equal_reference(ops: list[tuple[str, int, int, int, int, bool]], added: int) -> None:
    cache = Cache()
    nodes = {i: _node(i, ZONES[i % 3]) for i in range(N_NODES)}
    for n in nodes.values():
        cache.add_node(n)
    present = set(nodes)
    snap = Snapshot()
    cache.update_snapshot(snap)
    kept = _kept(snap)
    placed: list[Pod] = []
    previous: list[tuple[CycleState, Pod]] = []
    for k, (op, i, labels_i, ns_i, aff_i, check) in enumerate(ops):
        if op == "add" or (op in ("remove", "relabel") and not placed):
            p = _pod(k, i, labels_i, ns_i, aff_i)
            cache.add_pod(p)
            placed.append(p)
        elif op in ("remove", "relabel"):
            old = placed.pop(i % len(placed))
            if op == "remove":
                cache.remove_pod(old)
            else:
                new = pod(
                    old.metadata.name,
                    ns=old.metadata.namespace,
                    uid=old.metadata.uid,
                    node=old.spec.node_name,
                    labels=dict(LABELS[labels_i]),
                    raw_affinity=AFFINITIES[aff_i],
                )
                cache.update_pod(old, new)
                placed.append(new)
        elif op == "node" and i in present:
            new_node = _node(i, ZONES[labels_i % 3], "r1" if ns_i % 2 else "r2")
            cache.update_node(nodes[i], new_node)
            nodes[i] = new_node
        elif op == "toggle" and i in present and len(present) > 1:
            cache.remove_node(nodes[i])
            present.discard(i)
        elif op == "toggle" and i not in present:
            cache.add_node(nodes[i])
            present.add(i)
        if not check and k != len(ops) - 1:
            continue
        cache.update_snapshot(snap)
        stale, previous = previous, []
        for p in INCOMING:
            state = _check(kept, snap, p)
            if not state.skip_filter_plugins and _has_state(state):
                previous.append((state, p))
                clone = state.clone()
                target = snap.node_info_list[i % len(snap.node_info_list)]
                extra = _pod(1000 + k, 0, labels_i, ns_i, added)
                assert kept.add_pod(clone, p, PodInfo(extra), target).is_success()
                _check_filter_all(kept, clone, p, snap)
        for state, p in stale:  # the last check's states after the memo moved on (stale arrays)
            _check_filter_all(kept, state, p, snap)


def _has_state(state: CycleState) -> bool:
    try:
        state.read(PRE_FILTER_STATE_KEY)
    except KeyError:
        return False
    return True


@pytest.mark.parametrize(
    ("gens", "old", "want"),
    [
        pytest.param([1, 2, 3], [1, 2, 3], [], id="none"),
        pytest.param(list(range(600)), [*range(599), 7], [599], id="last-of-a-partial-block"),
        pytest.param(list(range(600)), [0, *range(1, 300), -1, *range(301, 600)], [300], id="middle"),
        pytest.param([5] * 40, [6] * 40, list(range(40)), id="all"),
    ],
)
def test_changed_positions(gens: list[int], old: list[int], want: list[int]) -> None:
    assert changed_positions(gens, old) == want


def test_plain_pod_without_affinity_anywhere_skips_before_any_scan() -> None:
    snap = Snapshot.from_objects([pod("e", node="n0", labels={"app": "web"})], [_node(0, "z1")])
    pl = plugin(snap, NAMESPACES)
    state = CycleState()
    assert pl.pre_filter(state, pod("x", ns="a"), snap.node_info_list) == (None, Status(Code.Skip))
    assert pl.pre_score(state, pod("x", ns="a"), snap.node_info_list) == Status(Code.Skip)
    assert len(pl._memo._aggregates) == 0


@pytest.mark.parametrize(
    "n_nodes",
    [
        pytest.param(40, id="sub-lists-below-SMALL"),
        pytest.param(150, id="more-values-than-an-array-holds-at-first"),
    ],
)
def test_hostname_anti_affinity_at_scale_equals_reference(n_nodes: int) -> None:
    """The benchmark's shape: every pod anti-affine to its label on hostname, bound one by one."""
    cache = Cache()
    for i in range(n_nodes):
        cache.add_node(_node(i, ZONES[i % 3]))
    snap = Snapshot()
    cache.update_snapshot(snap)
    kept = plugin(snap, NAMESPACES)
    if n_nodes >= 100:
        kept.small_lists = 0
    incoming = next(p for p in INCOMING if p.metadata.name == "in-anti")
    for k in range(0, n_nodes, 7):
        p = pod(f"p{k}", ns="b", uid=f"u{k}", node=f"n{k}", labels={"app": "web"}, raw_affinity=AFFINITIES[1])
        cache.add_pod(p)
        cache.update_snapshot(snap)
        state = CycleState()
        kept.pre_filter(state, incoming, snap.node_info_list)
        fresh = _reference(snap)
        ref = CycleState()
        fresh.pre_filter(ref, incoming, snap.node_info_list)
        infos = snap.node_info_list
        assert _maps(state.read(PRE_FILTER_STATE_KEY)) == _maps(ref.read(PRE_FILTER_STATE_KEY))
        want = _statuses(fresh, ref, incoming, infos)
        assert _statuses(kept, state, incoming, infos) == want
        assert _vector_statuses(kept, state, incoming, snap) == want


def test_state_of_another_instance_is_filtered_from_its_own_maps() -> None:
    """Codes are per instance: a state made by one instance, filtered by another, must not be read
    through the other's code arrays."""
    cache = Cache()
    for i in range(80):
        cache.add_node(_node(i, ZONES[i % 3]))
    for k in range(0, 80, 3):
        cache.add_pod(
            pod(f"p{k}", ns="b", uid=f"u{k}", node=f"n{k}", labels={"app": "web"}, raw_affinity=AFFINITIES[1])
        )
    snap = Snapshot()
    cache.update_snapshot(snap)
    incoming = next(p for p in INCOMING if p.metadata.name == "in-anti")
    first, second = _kept(snap), _kept(snap)
    second_state = CycleState()
    second.pre_filter(second_state, incoming, snap.node_info_list)
    _vector_statuses(second, second_state, incoming, snap)  # the second interns codes in row order
    first._memo.codes.code("something-else")  # the first's codes are shifted by one
    state = CycleState()
    first.pre_filter(state, incoming, snap.node_info_list)
    want = _statuses(second, state, incoming, snap.node_info_list)
    assert _vector_statuses(second, state, incoming, snap) == want
    assert _vector_statuses(first, state, incoming, snap) == want
