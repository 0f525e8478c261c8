"""Builders shared by the InterPodAffinity test modules: pods and nodes in the shape of upstream's
``st.MakePod()`` wrappers, a fake handle (snapshot + optional namespace lister) and upstream's
``namespaces`` fixture (scoring_test.go)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import CycleState
from agents.scheduler.plugins.interpodaffinity import InterPodAffinity
from emulator.base.api.codec import convert
from emulator.base.api.core import Affinity, Namespace, Node, Pod
from tests import builders

Term = dict[str, Any]


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(
    *exprs: dict[str, Any],
    topo: str = "",
    namespaces: Sequence[str] = (),
    ns_selector: dict[str, Any] | None = None,
    match_labels: dict[str, str] | None = None,
    match_label_keys: Sequence[str] = (),
    mismatch_label_keys: Sequence[str] = (),
) -> Term:
    sel: dict[str, Any] = {}
    if exprs:
        sel["matchExpressions"] = list(exprs)
    if match_labels:
        sel["matchLabels"] = match_labels
    t: Term = {"labelSelector": sel, "topologyKey": topo}
    if namespaces:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    if match_label_keys:
        t["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys:
        t["mismatchLabelKeys"] = list(mismatch_label_keys)
    return t


def t_in(key: str, topo: str, *values: str) -> Term:
    """``PodAffinityIn`` / ``PodAntiAffinityIn``."""
    return term(expr(key, "In", *values), topo=topo)


def t_not_in(key: str, topo: str, *values: str) -> Term:
    return term(expr(key, "NotIn", *values), topo=topo)


def t_exists(key: str, topo: str) -> Term:
    return term(expr(key, "Exists"), topo=topo)


def team_in(*teams: str) -> dict[str, Any]:
    return {"matchExpressions": [expr("team", "In", *teams)]}


def weighted(weight: int, t: Term) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    aff: Iterable[Term] = (),
    anti: Iterable[Term] = (),
    pref: Iterable[dict[str, Any]] = (),
    pref_anti: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    aff, anti, pref, pref_anti = list(aff), list(anti), list(pref), list(pref_anti)
    if aff or pref:
        out["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": aff,
            "preferredDuringSchedulingIgnoredDuringExecution": pref,
        }
    if anti or pref_anti:
        out["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": anti,
            "preferredDuringSchedulingIgnoredDuringExecution": pref_anti,
        }
    return out


def pod(
    name: str = "",
    *,
    ns: str = "",
    node: str = "",
    labels: dict[str, str] | None = None,
    uid: str = "",
    aff: Iterable[Term] = (),
    anti: Iterable[Term] = (),
    pref: Iterable[dict[str, Any]] = (),
    pref_anti: Iterable[dict[str, Any]] = (),
    raw_affinity: dict[str, Any] | None = None,
) -> Pod:
    """A pod without containers; its affinity is the document ``raw_affinity``, or the one
    ``affinity()`` makes of the term documents."""
    a = raw_affinity if raw_affinity is not None else affinity(aff, anti, pref, pref_anti)
    return builders.pod(
        name,
        namespace=ns,
        uid=uid,
        labels=labels,
        containers=[],
        node=node,
        affinity=convert(a, Affinity) if a else None,
    )


def node(name: str, **labels: str) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, labels=labels)


def namespace(name: str, **labels: str) -> Namespace:
    return builders.namespace(name, labels=labels)


NAMESPACES = [
    namespace("subteam1.team1", team="team1"),
    namespace("subteam2.team1", team="team1"),
    namespace("subteam1.team2", team="team2"),
    namespace("subteam2.team2", team="team2"),
]
"""Upstream's ``namespaces`` fixture."""


class FakeNamespaceLister:
    def __init__(self, namespaces: Iterable[Namespace]) -> None:
        self._by_name = {ns.metadata.name: ns for ns in namespaces}

    def get(self, name: str) -> Namespace | None:
        return self._by_name.get(name)

    def list(self) -> list[Namespace]:
        return list(self._by_name.values())


class FakeHandle:
    """The two things InterPodAffinity reads from its handle; ``namespaces=None``: no lister hook."""

    def __init__(self, snapshot: Snapshot, namespaces: Iterable[Namespace] | None = ()) -> None:
        self._snapshot = snapshot
        self._lister = FakeNamespaceLister(namespaces) if namespaces is not None else None
        if namespaces is None:
            self.namespace_lister = None  # type: ignore[assignment]

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot

    def namespace_lister(self) -> FakeNamespaceLister | None:
        return self._lister


def plugin(
    snapshot: Snapshot, namespaces: Iterable[Namespace] | None = (), args: dict[str, Any] | None = None
) -> InterPodAffinity:
    return InterPodAffinity(args, FakeHandle(snapshot, namespaces))  # type: ignore[arg-type]


def prefiltered(pl: InterPodAffinity, snapshot: Snapshot, p: Pod) -> tuple[CycleState, Any]:
    state = CycleState()
    _, status = pl.pre_filter(state, p, snapshot.node_info_list)
    return state, status
