"""PodTopologySpread's vectorised PreScore/Score/NormalizeScore (``podtopologyspread/vector.py``)
give exactly the per-node reference's integer scores (``scoring.py``).

The property test builds a random cluster in a scheduler ``Cache`` (nodes with or without
hostname / zone / rack labels, an empty zone value, NoSchedule taints; pods of two namespaces,
some terminating), then applies random steps (pods added and removed, nodes relabelled or
tainted), refreshing the ``Snapshot`` (so its ``NodeTable`` is updated row by row) after each.
After every step one long-lived plugin (its match columns kept across cycles) scores a random
subset of the nodes in a random order with ``score_all`` / ``normalize_score_all``, and a fresh
plugin scores them with the per-node ``score`` / ``normalize_score``: raw and normalised scores
must be equal. Incoming pods have their own constraints (ScheduleAnyway and DoNotSchedule,
minDomains, matchLabelKeys, Honor/Ignore inclusion policies, empty and nothing selectors) or
none (System defaults with a Service-like selector, or List defaults).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.cache.cache import Cache
from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import CycleState, NodeScore
from agents.scheduler.plugins.podtopologyspread import PRE_SCORE_STATE_KEY, PodTopologySpread, Selector
from agents.scheduler.plugins.podtopologyspread.scoring import PreScoreState, go_round, init_pre_score_state
from agents.scheduler.plugins.podtopologyspread.vector import go_round_all
from emulator.base.api.core import Node, Pod
from tests import builders
from tests.scheduler.plugins.test_podtopologyspread import FakeHandle, make_node, make_pod, services, spread

HOSTNAME, ZONE, RACK = "kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack"
SA, DNS = "ScheduleAnyway", "DoNotSchedule"
SELECTORS: list[dict[str, Any] | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "a"}},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {},
    None,
]
POD_LABELS = [{"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}, {"tier": "y"}, {}]
LIST_DEFAULTS: dict[str, Any] = {
    "defaultingType": "List",
    "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": SA},
        {"maxSkew": 1, "topologyKey": RACK, "whenUnsatisfiable": SA},
        {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": DNS},
    ],
}


def node_labels() -> st.SearchStrategy[dict[str, str]]:
    return st.fixed_dictionaries(
        {},
        optional={
            ZONE: st.sampled_from(["z1", "z2", "z3", ""]),
            RACK: st.sampled_from(["r0", "r1"]),
            "disk": st.just("ssd"),
        },
    )


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    out = []
    for i in range(draw(st.integers(1, 8))):
        labels = draw(node_labels())
        if draw(st.integers(0, 7)):  # mostly: a node without a hostname label is rare
            labels[HOSTNAME] = f"n{i}"
        taints = [builders.taint("dedicated")] if draw(st.integers(0, 3)) == 0 else []
        out.append(make_node(f"n{i}", labels, taints=taints))
    return out


constraint = st.builds(
    spread,
    st.integers(1, 4),
    st.sampled_from([HOSTNAME, ZONE, RACK]),
    st.sampled_from([SA, SA, DNS]),
    st.sampled_from(SELECTORS),
    st.sampled_from([None, 1, 3]),
    st.sampled_from([None, "Honor", "Ignore"]),
    st.sampled_from([None, "Honor", "Ignore"]),
    st.sampled_from([(), ("app",)]),
)


@st.composite
def incoming(draw: st.DrawFn) -> tuple[str, Pod]:
    """(defaulting of the plugin, the pod to score)."""
    mode = draw(st.sampled_from(["own", "system", "list"]))
    constraints = draw(st.lists(constraint, min_size=1, max_size=3)) if mode == "own" else []
    pod = make_pod(
        "incoming",
        labels=draw(st.sampled_from([{"app": "a"}, {"app": "a", "tier": "x"}])),
        constraints=constraints,
        node_selector=draw(st.sampled_from([None, {"disk": "ssd"}])),
        affinity=draw(st.sampled_from([None, (RACK, "In", ["r0"])])),
        tolerations=draw(st.sampled_from([(), ("dedicated",)])),
    )
    return mode, pod


def _plugin(mode: str, snap: Snapshot) -> PodTopologySpread:
    args = LIST_DEFAULTS if mode == "list" else {"defaultingType": "System"}
    return PodTopologySpread(
        args,
        FakeHandle(snap),  # type: ignore[arg-type]
        default_selector=services({"app": "a"}),
    )


def _check(kept: PodTopologySpread, fresh: PodTopologySpread, snap: Snapshot, pod: Pod, order: list[int]) -> None:
    infos = snap.node_info_list
    picked = [i for i in order if i < len(infos)] or [0]
    filtered = [infos[i] for i in picked]
    ref, vec = CycleState(), CycleState()
    want_status = fresh.pre_score(ref, pod, filtered)
    assert kept.pre_score(vec, pod, filtered).code == want_status.code
    if not want_status.is_success():
        return
    want = []
    for info in filtered:
        score, status = fresh.score(ref, pod, info)
        assert status.is_success()
        want.append(score)
    scores = [NodeScore(info.name, w) for info, w in zip(filtered, want, strict=True)]
    assert fresh.normalize_score(ref, pod, scores).is_success()
    got = kept.score_all(vec, pod, snap.table, np.array(picked, dtype=np.int64))
    assert got is not None
    assert got.tolist() == want
    assert kept.normalize_score_all(vec, pod, got).tolist() == [ns.score for ns in scores]


STEP = st.tuples(
    st.sampled_from(["add", "add", "remove", "relabel", "taint"]),
    st.integers(0, 7),
    st.integers(0, len(POD_LABELS) - 1),
    st.sampled_from(["default", "other"]),
    st.booleans(),
    node_labels(),
)


@settings(max_examples=150, deadline=None)
@given(
    cluster=nodes(),
    case=incoming(),
    initial=st.lists(st.tuples(st.integers(0, 7), st.integers(0, len(POD_LABELS) - 1), st.booleans()), max_size=40),
    steps=st.lists(STEP, max_size=12),
    order=st.permutations(range(8)),
    size=st.integers(1, 8),
)
def test_vectorised_scores_equal_per_node_scores(
    cluster: list[Node],
    case: tuple[str, Pod],
    initial: list[tuple[int, int, bool]],
    steps: list[tuple[str, int, int, str, bool, dict[str, str]]],
    order: list[int],
    size: int,
) -> None:
    mode, pod = case
    cache, snap = Cache(), Snapshot()
    current = {n.metadata.name: n for n in cluster}
    for n in cluster:
        cache.add_node(n)
    placed: list[Pod] = []
    for k, (at, labels, other) in enumerate(initial):  # the bulk of the counts
        p = make_pod(f"i{k}", f"n{at % len(cluster)}", labels=POD_LABELS[labels], ns="other" if other else "default")
        cache.add_pod(p)
        placed.append(p)
    cache.update_snapshot(snap)
    kept = _plugin(mode, snap)
    _check(kept, _plugin(mode, snap), snap, pod, order[:size])
    for k, (op, at, labels, ns, terminating, new_labels) in enumerate(steps):
        name = f"n{at % len(cluster)}"
        if op == "add" or not placed:
            p = make_pod(f"p{k}", name, labels=POD_LABELS[labels], ns=ns, terminating=terminating)
            cache.add_pod(p)
            placed.append(p)
        elif op == "remove":
            cache.remove_pod(placed.pop(at % len(placed)))
        else:
            old = current[name]
            keep_host = {HOSTNAME: old.metadata.labels[HOSTNAME]} if HOSTNAME in old.metadata.labels else {}
            if op == "relabel":
                new = make_node(name, new_labels | keep_host, taints=old.spec.taints)
            else:
                new = make_node(
                    name, dict(old.metadata.labels), taints=[] if old.spec.taints else [builders.taint("x")]
                )
            cache.update_node(old, new)
            current[name] = new
        cache.update_snapshot(snap)
        _check(kept, _plugin(mode, snap), snap, pod, order[:size])


# --- the edges, one by one ------------------------------------------------------------------------


def _zoned(name: str, zone: str | None) -> Node:
    labels = {HOSTNAME: name} | ({ZONE: zone} if zone is not None else {})
    return make_node(name, labels)


@pytest.mark.parametrize(
    ("args", "zones"),
    [
        # System defaults: the zone-less node is not ignored; it skips the zone constraint.
        pytest.param({"defaultingType": "System"}, ["a", "a", None], id="system-zone-less-node-kept"),
        # Own constraints require every key: the zone-less node is ignored (raw 0, normalised 0),
        # and the hostname weight counts the other nodes only.
        pytest.param(None, ["a", "b", None], id="own-constraints-ignore-zone-less-node"),
    ],
)
def test_score_all_equals_reference(args: dict[str, Any] | None, zones: list[str | None]) -> None:
    nodes = [_zoned(f"n{i}", z) for i, z in enumerate(zones)]
    pods = [make_pod(f"e{i}", "n0", labels={"app": "a"}) for i in range(5)]
    snap = Snapshot.from_objects([*pods, make_pod("e", "n2", labels={"app": "a"})], nodes)
    own = [spread(1, ZONE, SA, {"matchLabels": {"app": "a"}}), spread(2, HOSTNAME, SA, {"matchLabels": {"app": "a"}})]
    pod = make_pod("in", labels={"app": "a"}, constraints=own if args is None else ())
    mode = "system" if args is not None else "own"
    _check(_plugin(mode, snap), _plugin(mode, snap), snap, pod, [2, 0, 1])


def test_score_all_declines_a_state_built_whole() -> None:
    """A state from ``init_pre_score_state`` (no PreScore inputs): Score runs per node."""
    snap = Snapshot.from_objects([], [_zoned("n0", "a")])
    pl = _plugin("system", snap)
    state = CycleState()
    assert pl.pre_score(state, make_pod("in", labels={"app": "a"}), snap.node_info_list).is_success()
    s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    whole = init_pre_score_state(s.constraints, snap.node_info_list, False)
    state.write(PRE_SCORE_STATE_KEY, whole)
    assert pl.score_all(state, make_pod("in"), snap.table, np.array([0], dtype=np.int64)) is None


@pytest.mark.parametrize(
    ("zones", "raises"),
    [
        pytest.param(["a", "b"], False, id="nothing-ignored-normalises"),
        pytest.param(["a", None], True, id="ignored-rows-unknown-falls-back"),
    ],
)
def test_normalize_all_after_per_node_score(zones: list[str | None], raises: bool) -> None:
    """Score per node, NormalizeScore vectorised: fine unless some node is ignored (the rows of
    those are unknown: ``LookupError``, and the runner normalises per node)."""
    nodes = [_zoned(f"n{i}", z) for i, z in enumerate(zones)]
    snap = Snapshot.from_objects([make_pod("e", "n0", labels={"app": "a"})], nodes)
    pl = _plugin("own", snap)
    pod = make_pod("in", labels={"app": "a"}, constraints=[spread(1, ZONE, SA, {"matchLabels": {"app": "a"}})])
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_info_list).is_success()
    raw = [pl.score(state, pod, info)[0] for info in snap.node_info_list]
    if raises:
        with pytest.raises(LookupError, match="ignored nodes"):
            pl.normalize_score_all(state, pod, np.array(raw, dtype=np.int64))
        return
    scores = [NodeScore(info.name, r) for info, r in zip(snap.node_info_list, raw, strict=True)]
    assert pl.normalize_score(state, pod, scores).is_success()
    got = pl.normalize_score_all(state, pod, np.array(raw, dtype=np.int64))
    assert got.tolist() == [ns.score for ns in scores]


@pytest.mark.parametrize(
    "x",
    [
        pytest.param([0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 2.4999999999999996], id="halves-away-from-zero"),
        pytest.param([-0.5, -1.5, -2.4999999999999996, 1e15 + 0.5], id="negative-and-large"),
    ],
)
def test_go_round_all_is_go_round(x: list[float]) -> None:
    assert go_round_all(np.array(x, dtype=np.float64)).tolist() == [go_round(v) for v in x]


def test_pre_score_defers_the_reference_state() -> None:
    """PreScore computes no counts until they are read (the vectorised Score reads none)."""
    snap = Snapshot.from_objects([make_pod("e", "n0", labels={"app": "a"})], [_zoned("n0", "a"), _zoned("n1", "b")])
    pl = _plugin("system", snap)
    state = CycleState()
    assert pl.pre_score(state, make_pod("in", labels={"app": "a"}), snap.node_info_list).is_success()
    s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    assert "deferred" in repr(s)
    assert s.tp_value_to_pod_counts == [{}, {"a": 1, "b": 0}]
    assert "computed" in repr(s)
    assert Selector.from_set({"app": "a"}) == s.constraints[0].selector
