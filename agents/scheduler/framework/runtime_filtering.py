"""The filtering runners of a profile's framework: PreFilter (and its AddPod / RemovePod
extensions), Filter (per node, with nominated pods, and the vectorised sampled search) and
PostFilter (upstream ``framework/runtime/framework.go``, ``RunPreFilterPlugins`` …
``RunPostFilterPlugins``), with upstream's semantics and messages.

``FilterRunners`` is mixed into ``runtime.Framework``, which builds the state declared here
(the plugins per extension point, the nominator). A plugin raising gives an ``Error`` status
as upstream's ``AsStatus`` would, with the point's message. ``find_feasible_rows`` hands the
search to ``vectorized.find_feasible`` over the snapshot's ``NodeTable``, with the Filter
plugins left after PreFilter's Skips and their ``filter_all`` (built once per skipped set:
``_filters_minus``) and the rows of nodes with nominated pods, which take
``run_filter_plugins_with_nominated_pods``.

What it does not own: building the plugins, the Handle and the queue's points (``runtime.py``),
the scoring runners (``runtime_scoring.py``), the binding runners (``runtime_binding.py``), the
vectorised search itself (``vectorized.py``), the per-node statuses (``diagnosis.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from emulator.base.api.core import Pod

from . import vectorized
from .cycle_state import CycleState
from .diagnosis import Diagnosis
from .interface import (
    ExtensionPoint,
    FilterPlugin,
    NodeToStatus,
    NominatingMode,
    PodNominator,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreFilterResult,
)
from .node_info import NodeInfo
from .node_table import IntArray, NodeTable
from .pod_info import PodInfo
from .status import SUCCESS, Code, Status, as_status, error_status

__all__ = ["FilterRunners"]


def _pod_priority(pod: Pod) -> int:
    return pod.spec.priority if pod.spec.priority is not None else 0


class FilterRunners:
    """PreFilter, Filter and PostFilter's runners of one profile (a mixin)."""

    _points: dict[ExtensionPoint, list[Any]]
    _nominator: PodNominator | None
    # The per-cycle points' lists by attribute (an ``ExtensionPoint`` key hashes in Python).
    _pre_filter: list[PreFilterPlugin]
    _filter: list[FilterPlugin]
    _filter_minus: dict[frozenset[str], tuple[list[Any], list[Any]]]
    """Per skipped set: the Filter plugins left and their ``filter_all`` (None: none)."""
    nominated_pods_for_node: Callable[[str], list[PodInfo]]
    """The Handle's (``runtime.Framework``)."""

    def _filters_minus(self, skip: set[str]) -> tuple[list[Any], list[Any]]:
        """The Filter plugins minus ``skip`` and their ``filter_all`` methods (shared: never mutate)."""
        key = frozenset(skip)
        found = self._filter_minus.get(key)
        if found is None:
            plugins = [p for p in self._filter if p.name not in skip]
            found = self._filter_minus[key] = (plugins, [getattr(p, "filter_all", None) for p in plugins])
        return found

    # --- filtering --------------------------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """(merged result, status, plugins whose result restricted the nodes)."""
        skip: set[str] = set()
        try:
            result: PreFilterResult | None = None
            with_nodes: set[str] = set()
            returned = SUCCESS
            pl: PreFilterPlugin
            for pl in self._pre_filter:
                try:
                    r, s = pl.pre_filter(state, pod, nodes)
                except Exception as err:
                    r, s = None, as_status(err)
                code = s.code  # the hot loop: attribute compares, not method calls
                if code is Code.Skip:
                    skip.add(pl.name)
                    continue
                if code is not Code.Success:
                    s = s.with_plugin(pl.name)
                    if s.code is Code.UnschedulableAndUnresolvable:
                        return None, s, set()
                    if s.code is Code.Unschedulable:
                        returned = s
                        continue
                    return None, error_status(f'running PreFilter plugin "{pl.name}": {s.message()}', pl.name), set()
                if r is not None and not r.all_nodes():
                    with_nodes.add(pl.name)
                result = r if result is None else result.merge(r)
                if result is not None and result.node_names is not None and not result.node_names:
                    names = sorted(with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status(Code.UnschedulableAndUnresolvable, msg), with_nodes
            return result, returned, with_nodes
        finally:
            state.skip_filter_plugins = skip

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_extension(state, "AddPod", pod_to_schedule, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_extension(state, "RemovePod", pod_to_schedule, pod_info_to_remove, node_info)

    def _run_extension(self, state: CycleState, op: str, pod: Pod, pi: PodInfo, node_info: NodeInfo) -> Status:
        pl: PreFilterPlugin
        for pl in self._points[ExtensionPoint.PreFilter]:
            ext = pl.pre_filter_extensions()
            if ext is None or pl.name in state.skip_filter_plugins:
                continue
            try:
                s = (
                    ext.add_pod(state, pod, pi, node_info)
                    if op == "AddPod"
                    else ext.remove_pod(state, pod, pi, node_info)
                )
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                return error_status(f'running {op} on PreFilter plugin "{pl.name}": {s.message()}', pl.name)
        return SUCCESS

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        pl: FilterPlugin
        for pl in self._filter:
            if pl.name in state.skip_filter_plugins:
                continue
            try:
                s = pl.filter(state, pod, node_info)
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                if not s.is_rejected():
                    return error_status(f'running "{pl.name}" filter plugin: {s.message()}', pl.name)
                return s.with_plugin(pl.name)
        return SUCCESS

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filters with the ≥-priority pods nominated to the node, then (if any) without them."""
        priority = _pod_priority(pod)
        nominated = [
            pi
            for pi in self.nominated_pods_for_node(node_info.name)
            if _pod_priority(pi.pod) >= priority and pi.uid != pod.metadata.uid
        ]
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        state_with, node_with = state.clone(), node_info.clone()
        for pi in nominated:
            node_with.add_pod(pi)
            s = self.run_pre_filter_extension_add_pod(state_with, pod, pi, node_with)
            if not s.is_success():
                return Status(Code.Error, *s.reasons, plugin=s.plugin)
        status = self.run_filter_plugins(state_with, pod, node_with)
        if not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def find_feasible_rows(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        candidates: IntArray | None,
        start: int,
        to_find: int,
        diagnosis: Diagnosis,
    ) -> tuple[IntArray, int, Status | None]:
        """Upstream's sampled search over ``candidates`` (table rows; None: all) from position
        ``start``: (feasible rows, nodes processed, an Error status or None); failures go into
        ``diagnosis`` as the per-node search would put them."""
        plugins, filter_alls = self._filters_minus(state.skip_filter_plugins)
        return vectorized.find_feasible(
            plugins,
            state,
            pod,
            table,
            candidates,
            start,
            to_find,
            diagnosis,
            self._nominated_rows(table),
            self.run_filter_plugins_with_nominated_pods,
            filter_alls,
        )

    def _nominated_rows(self, table: NodeTable) -> np.ndarray[Any, np.dtype[np.bool_]] | None:
        """Rows of nodes with nominated pods (None: there are none)."""
        nominator = self._nominator
        if nominator is None:
            return None
        names_of = getattr(nominator, "nominated_node_names", None)
        if names_of is not None:
            names: list[str] = names_of()
        else:
            names = [info.name for info in table.infos if nominator.nominated_pods_for_node(info.name)]
        rows = [i for i in (table.index.get(n) for n in names) if i is not None]
        if not rows:
            return None
        mask = np.zeros(table.size, dtype=bool)
        mask[rows] = True
        return mask

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        pl: PostFilterPlugin
        for pl in self._points[ExtensionPoint.PostFilter]:
            try:
                r, s = pl.post_filter(state, pod, filtered_node_status)
            except Exception as err:
                r, s = None, as_status(err)
            if s.is_success():
                return r, s
            if s.code is Code.UnschedulableAndUnresolvable:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status(Code.Error, *s.reasons, plugin=pl.name)
            if r is not None and r.nominating_mode is not NominatingMode.Noop:
                result = r
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.Unschedulable, *reasons, plugin=rejector)
