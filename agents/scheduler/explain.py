"""``explain``: one scheduling cycle for one pod, with every plugin's verdict on every node.

What this module owns: ``explain_pod`` (the pure core behind ``python -m emulator explain``
and ``run --explain``), its result ``Explanation`` (with the stable JSON shape documented in
the README) and ``ExplainRecorder`` (one JSON line per scheduling attempt during a run).

How one explanation is computed, on a fresh ``CycleState`` against the given snapshot, with
the framework's own runners so that every verdict is upstream's:

=============  ==============================================================================
step           what is recorded
=============  ==============================================================================
PreFilter      ``run_pre_filter_plugins``. A rejection (or Error) of the whole cycle gives
               every node that one status, keyed by the rejecting plugin; a PreFilterResult
               leaves the excluded nodes with the absent-node status, keyed by the plugins
               whose result restricted the nodes; filters are not run there (nor upstream).
Filter         EVERY filter plugin on EVERY node, even after a failure (for insight): a
               plugin skipped by PreFilter reports ``Skip``; with nominated pods (priority
               ≥ the pod's) a plugin reports its verdict with them added, and, if that
               passes, without them (upstream's two passes). ``feasible`` is upstream's
               verdict itself: ``run_filter_plugins_with_nominated_pods`` succeeded (that
               status, the first failing plugin's, is what the failure message counts).
no fit         ``FitError`` message (``0/N nodes are available: ...``) after PostFilter; when
               PostFilter nominates a node, the victims are what the nominating plugin's
               ``select_victims_on_node`` gives on copies of that node and state (the
               ``PostFilterResult`` carries only the node name): deterministic, the same
               victims the preemption chose. A plugin without that method: no victims listed.
Score          PreScore, then ``run_score_plugins`` on the feasible nodes: per plugin raw,
               normalized and weighted score (PreScore-skipped plugins absent), the total.
               No score plugins: every feasible node totals 1, as upstream.
select         as a fresh scheduler (start index 0, every node examined): the pod's
               nominated node when it passes the filters; the only feasible node; without
               score plugins the first feasible node; else ``select_host`` (seeded ties).
=============  ==============================================================================

Every node is examined (no ``numFeasibleNodesToFind`` sampling), so with 100 nodes or more
the real scheduler may pick among fewer nodes; the failure message is unaffected (the real
cycle also examines every node when none fits). A plugin or runner Error (upstream aborts the
cycle) is recorded on its node and becomes the ``message``, with no node selected.

During a run (``decided``): the scheduler hands in its own decision (selected node, message,
nominated node), which is reported instead of explain's; PostFilter is not run again (it
makes API calls) and ``rng`` is not used, so recording does not change the run.

It does not own wiring a framework over fixed objects (``explain_static.py``), loading manifests
or printing (``emulator/app/commands/explain.py``), nor the cycle
itself (``schedule_one.py``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, cast

import msgspec

from agents.scheduler.framework.diagnosis import NO_NODES_AVAILABLE_TO_SCHEDULE, Diagnosis, FitError
from agents.scheduler.framework.interface import ExtensionPoint, FilterPlugin, NodeToStatus, PluginScore
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import Code, CycleState, NodeInfo, Status, as_status
from agents.scheduler.sampling import select_host
from emulator.base.api.core import Pod

__all__ = ["Decided", "ExplainRecorder", "Explanation", "NodeExplanation", "Preemption", "explain_pod"]


@dataclass(frozen=True, slots=True)
class Decided:
    """What the real scheduling cycle decided (``run --explain``)."""

    selected: str | None
    message: str | None = None
    nominated_node: str = ""


@dataclass(frozen=True, slots=True)
class Preemption:
    nominated_node: str
    victims: tuple[str, ...] = ()
    """``namespace/name`` of each victim, most important first."""


@dataclass(slots=True)
class NodeExplanation:
    name: str
    filter: dict[str, Status] = field(default_factory=dict)
    """Filter plugin (or the PreFilter plugin that decided for the node) → its status."""
    feasible: bool = False
    status: Status = field(default_factory=Status)
    """Upstream's verdict for the node (the first failing plugin's status)."""
    scores: list[PluginScore] | None = None
    """Per score plugin, for feasible nodes once scoring ran; else ``None``."""
    total: int | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "filter": {p: {"code": s.code.name, "reasons": list(s.reasons)} for p, s in self.filter.items()},
            "feasible": self.feasible,
        }
        if self.scores is not None:
            doc["score"] = {
                s.name: {"raw": s.raw_score, "normalized": s.normalized_score, "weighted": s.score} for s in self.scores
            }
            doc["total"] = self.total
        return doc


@dataclass(slots=True)
class Explanation:
    pod: str
    """``namespace/name``."""
    profile: str
    nodes: list[NodeExplanation]
    """In snapshot (node-tree) order; ``ranked()`` gives them best first."""
    selected: str | None = None
    message: str | None = None
    preemption: Preemption | None = None

    def node(self, name: str) -> NodeExplanation:
        return next(n for n in self.nodes if n.name == name)

    def ranked(self) -> list[NodeExplanation]:
        """Best first: the selected node, feasible ones by total (descending), then the rest;
        ties keep the snapshot order."""
        order = {n.name: i for i, n in enumerate(self.nodes)}
        return sorted(
            self.nodes,
            key=lambda n: (n.name != self.selected, not n.feasible, -(n.total or 0), order[n.name]),
        )

    def to_json(self) -> dict[str, Any]:
        pre = self.preemption
        return {
            "pod": self.pod,
            "profile": self.profile,
            "nodes": {n.name: n.to_json() for n in self.ranked()},
            "selected": self.selected,
            "message": self.message,
            "preemption": None if pre is None else {"nominatedNode": pre.nominated_node, "victims": list(pre.victims)},
        }


class _VictimSelector(Protocol):
    """A PostFilter plugin that can tell its victims (``DefaultPreemption``)."""

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[Any]
    ) -> tuple[list[Pod], int, Status]: ...


def _priority(pod: Pod) -> int:
    return pod.spec.priority if pod.spec.priority is not None else 0


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def _filter_each(fwk: Framework, state: CycleState, pod: Pod, ni: NodeInfo) -> dict[str, Status]:
    """Every filter plugin's own status on ``ni`` (see the module table)."""
    nominated = [
        pi
        for pi in fwk.nominated_pods_for_node(ni.name)
        if _priority(pi.pod) >= _priority(pod) and pi.uid != pod.metadata.uid
    ]
    with_state, with_node = state, ni
    if nominated:
        with_state, with_node = state.clone(), ni.clone()
        for pi in nominated:
            with_node.add_pod(pi)
            fwk.run_pre_filter_extension_add_pod(with_state, pod, pi, with_node)
    out: dict[str, Status] = {}
    for name in fwk.list_plugins().get(ExtensionPoint.Filter, []):
        if name in state.skip_filter_plugins:
            out[name] = Status(Code.Skip, plugin=name)
            continue
        pl = cast(FilterPlugin, fwk.plugin(name))
        try:
            s = pl.filter(with_state, pod, with_node)
            if s.is_success() and nominated:
                s = pl.filter(state, pod, ni)
        except Exception as err:  # a misbehaving plugin: Error, as the framework's runner says
            s = as_status(err)
        if not s.is_success() and not s.is_rejected():
            s = Status(Code.Error, f'running "{name}" filter plugin: {s.message()}')
        out[name] = s.with_plugin(name)
    return out


def _victims(fwk: Framework, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[str, ...]:
    for name in fwk.list_plugins().get(ExtensionPoint.PostFilter, []):
        pl: Any = fwk.plugin(name)
        if not hasattr(pl, "select_victims_on_node"):
            continue
        selector: _VictimSelector = pl
        evaluator = getattr(pl, "evaluator", None)
        pdbs = evaluator.pdb_lister() if evaluator is not None else []
        try:
            victims, _, status = selector.select_victims_on_node(state.clone(), pod, node.clone(), pdbs)
        except Exception:  # a misbehaving plugin: no victims to list
            continue
        if status.is_success():
            return tuple(_key(v) for v in victims)
    return ()


def explain_pod(
    framework: Framework, snapshot: Any, pod: Pod, *, rng: random.Random, decided: Decided | None = None
) -> Explanation:
    """Run one scheduling cycle for ``pod`` on ``snapshot`` and record every verdict."""
    fwk = framework
    fwk.set_snapshot(snapshot)
    all_nodes: list[NodeInfo] = snapshot.node_info_list
    exp = Explanation(_key(pod), fwk.profile_name, [NodeExplanation(ni.name) for ni in all_nodes])
    if not all_nodes:
        exp.message = NO_NODES_AVAILABLE_TO_SCHEDULE
        return _decided(exp, decided, fwk)
    state = CycleState()
    diagnosis = Diagnosis(node_to_status=NodeToStatus())
    error: str | None = None
    pre, pre_status, restricting = fwk.run_pre_filter_plugins(state, pod, all_nodes)
    if not pre_status.is_success():
        keys = [pre_status.plugin] if pre_status.plugin else sorted(restricting)
        for ne in exp.nodes:
            ne.filter = dict.fromkeys(keys, pre_status)
            ne.status = pre_status
        if not pre_status.is_rejected():
            exp.message = pre_status.message()
            return _decided(exp, decided, fwk, state, pod)
        diagnosis.node_to_status.set_absent_nodes_status(pre_status)
        diagnosis.add_plugin_status(pre_status)
        diagnosis.pre_filter_msg = pre_status.message()
        feasible: list[NodeInfo] = []
    else:
        allowed = pre.node_names if pre is not None and not pre.all_nodes() else None
        if allowed is not None:
            absent = Status(
                Code.UnschedulableAndUnresolvable, f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(restricting))}]"
            )
            diagnosis.node_to_status.set_absent_nodes_status(absent)
        feasible = []
        for ni, ne in zip(all_nodes, exp.nodes, strict=True):
            if allowed is not None and ni.name not in allowed:
                ne.filter = dict.fromkeys(sorted(restricting), absent)
                ne.status = absent
                continue
            ne.filter = _filter_each(fwk, state, pod, ni)
            ne.status = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if ne.status.is_success():
                ne.feasible = True
                feasible.append(ni)
            elif ne.status.is_rejected():
                diagnosis.node_to_status.set(ni.name, ne.status)
                diagnosis.add_plugin_status(ne.status)
            elif error is None:
                error = ne.status.message()
    if error is not None:
        exp.message = error
        return _decided(exp, decided, fwk, state, pod)
    # Upstream filters the pod's nominated node first (even outside a PreFilterResult) and takes it if it fits.
    nominated = pod.status.nominated_node_name if pre_status.is_success() else ""
    nominated_ni = snapshot.node_info_map.get(nominated) if nominated else None
    if nominated_ni is not None and fwk.run_filter_plugins_with_nominated_pods(state, pod, nominated_ni).is_success():
        exp.selected = nominated
    if not feasible and exp.selected is None:
        fit = FitError(pod, len(all_nodes), diagnosis)
        if decided is None and fwk.has_post_filter_plugins():
            result, status = fwk.run_post_filter_plugins(state, pod, diagnosis.node_to_status)
            diagnosis.post_filter_msg = status.message()  # upstream sets it whatever the code
            if status.code is not Code.Error and result is not None and result.nominated_node_name:
                node = snapshot.node_info_map[result.nominated_node_name]
                exp.preemption = Preemption(node.name, _victims(fwk, state, pod, node))
        exp.message = fit.message()
        return _decided(exp, decided, fwk, state, pod)
    score_error = _score(fwk, state, pod, feasible, exp) if feasible else None
    if exp.selected is not None:
        pass  # the nominated node
    elif len(feasible) == 1:
        exp.selected = feasible[0].name
    elif score_error is not None:
        exp.message = score_error
    elif not fwk.has_score_plugins():
        exp.selected = feasible[0].name
    elif decided is None:
        by_name = {ne.name: ne for ne in exp.nodes}
        exp.selected = select_host([(ni.name, by_name[ni.name].total or 0) for ni in feasible], rng)
    return _decided(exp, decided, fwk, state, pod)


def _score(fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo], exp: Explanation) -> str | None:
    """Fill in scores and totals of the feasible nodes; the error message if scoring failed."""
    by_name = {ne.name: ne for ne in exp.nodes}
    if not fwk.has_score_plugins():
        for ni in feasible:
            by_name[ni.name].scores, by_name[ni.name].total = [], 1
        return None
    status = fwk.run_pre_score_plugins(state, pod, feasible)
    if not status.is_success():
        return status.message()
    scores, status = fwk.run_score_plugins(state, pod, feasible)
    if not status.is_success():
        return status.message()
    for nps in scores:
        by_name[nps.name].scores, by_name[nps.name].total = list(nps.scores), nps.total_score
    return None


def _decided(
    exp: Explanation, decided: Decided | None, fwk: Framework, state: CycleState | None = None, pod: Pod | None = None
) -> Explanation:
    """Replace explain's own decision by the real cycle's (during a run)."""
    if decided is None:
        return exp
    exp.selected, exp.message, exp.preemption = decided.selected, decided.message, None
    if decided.nominated_node:
        node = fwk.snapshot_shared_lister().node_info_map.get(decided.nominated_node)
        victims = _victims(fwk, state, pod, node) if node is not None and state is not None and pod else ()
        exp.preemption = Preemption(decided.nominated_node, victims)
    return exp


class ExplainRecorder:
    """Writes one JSON line per scheduling attempt: ``t`` (clock seconds, to the microsecond),
    ``attempt``, ``uid``, then the explanation's keys. Hand ``recorder.record`` to
    ``SchedulerOptions.explain``."""

    def __init__(self, out: IO[bytes] | str | Path) -> None:
        """``out``: a binary stream (left open by ``close``) or a path (opened here, closed by ``close``)."""
        self._owned = isinstance(out, str | Path)
        self._out: IO[bytes] = open(out, "wb") if isinstance(out, str | Path) else out  # noqa: SIM115 - closed by close()
        self._encoder = msgspec.json.Encoder()
        self.lines = 0

    def record(self, attempt: int, time: float, pod: Pod, explanation: Explanation) -> None:
        line = {"t": round(time, 6), "attempt": attempt, "uid": pod.metadata.uid, **explanation.to_json()}
        self._out.write(self._encoder.encode(line) + b"\n")
        self.lines += 1

    def close(self) -> None:
        if self._owned:
            self._out.close()

    def __enter__(self) -> ExplainRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ExplainRecorder lines={self.lines}>"
