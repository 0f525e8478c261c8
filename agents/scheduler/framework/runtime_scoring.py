"""The scoring runners of a profile's framework: PreScore, Score with NormalizeScore and the
weights, per node and over the snapshot's ``NodeTable`` (upstream
``framework/runtime/framework.go``, ``RunPreScorePlugins`` and ``RunScorePlugins``), with
upstream's semantics and messages.

``ScoringRunners`` is mixed into ``runtime.Framework``, which builds the state declared here
(the plugins per extension point, their weights). A plugin raising gives an ``Error`` status
as upstream's ``AsStatus`` would, with the point's message. ``score_rows`` first asks
``score_totals.cached_totals`` (when every Score plugin's normalized score is row-wise this
cycle, the weighted totals come from a per-row column the table keeps), else
``vectorized.score``; both give the totals ``run_score_plugins`` would.

What it does not own: building the plugins and their weights (``plugin_set.py``), the filtering
runners (``runtime_filtering.py``), the binding runners (``runtime_binding.py``), the
vectorised arithmetic (``vectorized.py``, ``score_totals.py``), host selection (the
scheduler's cycle).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from emulator.base.api.core import Pod

from . import score_totals, vectorized
from .cycle_state import CycleState
from .interface import NodePluginScores, PluginScore, PreScorePlugin, ScorePlugin
from .node_info import NodeInfo
from .node_table import IntArray, NodeTable
from .status import MAX_NODE_SCORE, MIN_NODE_SCORE, SUCCESS, Code, NodeScore, Status, as_status, error_status

__all__ = ["ScoringRunners"]


class ScoringRunners:
    """PreScore and Score's runners of one profile (a mixin)."""

    score_plugin_weight: dict[str, int]
    # The per-cycle points' lists by attribute (an ``ExtensionPoint`` key hashes in Python).
    _pre_score: list[PreScorePlugin]
    _score: list[ScorePlugin]
    _score_minus: dict[frozenset[str], list[Any]]
    """Per skipped set: the Score plugins left."""

    def _scores_minus(self, skip: set[str]) -> list[Any]:
        """The Score plugins minus ``skip`` (shared: never mutate)."""
        key = frozenset(skip)
        plugins = self._score_minus.get(key)
        if plugins is None:
            plugins = self._score_minus[key] = [p for p in self._score if p.name not in skip]
        return plugins

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        skip: set[str] = set()
        try:
            pl: PreScorePlugin
            for pl in self._pre_score:
                try:
                    s = pl.pre_score(state, pod, nodes)
                except Exception as err:
                    s = as_status(err)
                code = s.code
                if code is Code.Skip:
                    skip.add(pl.name)
                elif code is not Code.Success:
                    return error_status(f'running PreScore plugin "{pl.name}": {s.message()}', pl.name)
            return SUCCESS
        finally:
            state.skip_score_plugins = skip

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status]:
        """Per node: each plugin's raw, normalized and weighted score, and the total."""
        plugins: list[ScorePlugin] = self._scores_minus(state.skip_score_plugins)
        lists: dict[str, list[NodeScore]] = {pl.name: [] for pl in plugins}
        for ni in nodes:
            for pl in plugins:
                try:
                    score, s = pl.score(state, pod, ni)
                except Exception as err:
                    score, s = 0, as_status(err)
                if not s.is_success():
                    msg = f'running Score plugins: plugin "{pl.name}" failed with: {s.message()}'
                    return [], error_status(msg, pl.name)
                lists[pl.name].append(NodeScore(ni.name, score))
        raw = {name: [ns.score for ns in lst] for name, lst in lists.items()}
        for pl in plugins:
            ext = pl.score_extensions()
            if ext is None:
                continue
            try:
                s = ext.normalize_score(state, pod, lists[pl.name])
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                msg = f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {s.message()}'
                return [], error_status(msg, pl.name)
        out: list[NodePluginScores] = []
        for i, ni in enumerate(nodes):
            nps = NodePluginScores(ni.name)
            for pl in plugins:
                normalized = lists[pl.name][i].score
                if not MIN_NODE_SCORE <= normalized <= MAX_NODE_SCORE:
                    msg = (
                        f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an invalid '
                        f"score {normalized}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                        "after normalizing"
                    )
                    return [], error_status(msg, pl.name)
                weight = self.score_plugin_weight[pl.name]
                nps.scores.append(PluginScore(pl.name, raw[pl.name][i], normalized, weight, normalized * weight))
                nps.total_score += normalized * weight
            out.append(nps)
        return out, SUCCESS

    def score_rows(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, nodes: list[NodeInfo]
    ) -> tuple[IntArray, Status]:
        """The totals ``run_score_plugins`` gives ``nodes`` (= ``table`` rows ``rows``), or its Error."""
        plugins = self._scores_minus(state.skip_score_plugins)
        totals = score_totals.cached_totals(plugins, self.score_plugin_weight, state, pod, table, rows)
        if totals is not None:
            return totals, SUCCESS
        try:
            return vectorized.score(plugins, self.score_plugin_weight, state, pod, table, rows, nodes), SUCCESS
        except vectorized.ScoreError as err:
            return np.zeros(0, dtype=np.int64), err.status
