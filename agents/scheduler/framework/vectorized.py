"""Filter and Score over a ``NodeTable`` at once, with the per-node path's exact results.

What this module owns: the vectorised halves of three steps of the scheduling cycle, each
bit-for-bit the reference (per-node) one:

``find_feasible``  upstream's sampled search (§3.3): visit the candidates from the round-robin
                   start index, stop after ``to_find`` feasible nodes; ``processed`` = position
                   of the ``to_find``-th feasible + 1, or all. Plugins offering ``filter_all``
                   give codes for a window of the rotated order at once; the others run per node,
                   in their configured place, only where every earlier plugin passed (so the
                   first failing plugin, and hence the node's status, is the reference one).
                   Nodes with nominated pods go through the reference two-pass filter whole.
                   The diagnosis gets the same statuses, inserted in visiting order.
``score``          per plugin ``score_all`` (else ``score`` per node), ``normalize_score_all``
                   (else ``normalize_score`` on ``NodeScore`` objects), the [0, 100] check with
                   the reference's first (node, plugin) error, weighted totals.
``select_host``    the highest total, one ``rng.randrange`` among the ties in visiting order
                   (the reference's rule, so the random stream advances alike).

Windows: the rotated candidate order is evaluated in windows (first ``max(2·to_find, 512)``
positions, then doubling), so a search that stops early does not pay for every node.

What it does not own: which plugins run (the ``Framework``), the table (``node_table.py``),
upstream's arithmetic of each plugin (the plugins' ``filter_all`` / ``score_all``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from .cycle_state import CycleState
from .diagnosis import Diagnosis
from .interface import FilterCodes
from .node_info import NodeInfo
from .node_table import IntArray, NodeTable
from .status import MAX_NODE_SCORE, MIN_NODE_SCORE, SUCCESS, Code, NodeScore, Status, as_status

__all__ = ["MIN_WINDOW", "ScoreError", "find_feasible", "rotated", "score", "select_host"]

MIN_WINDOW: Final = 512


class ScoreError(Exception):
    """A score plugin failed: ``status`` is the reference runner's Error status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def rotated(rows: IntArray, start: int) -> IntArray:
    """``rows`` visited from ``start`` (modulo their number), wrapping around."""
    n = len(rows)
    s = start % n if n else 0
    return rows if s == 0 else np.concatenate((rows[s:], rows[:s]))


def _error(msg: str, plugin: str) -> Status:
    return Status(Code.Error, msg, plugin=plugin)


def find_feasible(
    plugins: Sequence[Any],
    state: CycleState,
    pod: Any,
    table: NodeTable,
    candidates: IntArray | None,
    start: int,
    to_find: int,
    diagnosis: Diagnosis,
    nominated: np.ndarray[Any, np.dtype[np.bool_]] | None,
    with_nominated: Callable[[CycleState, Any, NodeInfo], Status],
    filter_alls: Sequence[Any] | None = None,
) -> tuple[IntArray, int, Status | None]:
    """(feasible table rows in visiting order, processed, Error status or None). The rows may
    be a read-only view of ``NodeTable.row_ids`` (an all-passing window): callers copy before
    writing.

    ``candidates``: the table rows to search (None: all), visited from position ``start``
    (modulo their number) on, wrapping around. ``plugins``: the Filter plugins not skipped this
    cycle, in order; ``filter_alls``: their ``filter_all`` methods (None where they have none),
    looked up here when not given. ``nominated``: rows whose node has nominated pods (they take
    ``with_nominated``, the reference two-pass filter)."""
    if filter_alls is None:
        filter_alls = [getattr(pl, "filter_all", None) for pl in plugins]
    n = table.size if candidates is None else len(candidates)
    start = start % n if n else 0
    order = None if candidates is None else rotated(candidates, start)
    infos = table.infos
    n_plugins = len(plugins)
    stamped: dict[tuple[int, int], Status] = {}
    feasible: list[IntArray] = []
    n_feasible = 0
    lo = 0
    window = max(2 * to_find, MIN_WINDOW)
    while lo < n:
        hi = min(n, lo + window)
        window *= 2
        m = hi - lo
        if order is not None:
            rows = order[lo:hi]
        else:  # a read-only view, wrapping past the last row included: no array built
            rows = table.row_ids[start + lo : start + hi]
        results: list[FilterCodes | None] = []
        all_pass = nominated is None  # so far: every plugin vectorised, every node passing
        for fa in filter_alls:
            r = None
            if fa is not None:
                try:
                    r = fa(state, pod, table, rows)
                except Exception:  # a misbehaving plugin: its per-node filter says where and what
                    r = None
            if r is None or r.codes is not None:
                all_pass = False
            results.append(r)
        need = to_find - n_feasible
        if all_pass:
            # Every node of the window passes every filter (the common case): no arrays to combine.
            feasible.append(rows[:need])
            n_feasible += min(need, m)
            if n_feasible >= to_find:
                return _concat(feasible), lo + need, None
            lo = hi
            continue
        per_node = [p for p in range(n_plugins) if results[p] is None]
        first = np.full(m, n_plugins, dtype=np.int64)
        for p in range(n_plugins - 1, -1, -1):
            r = results[p]
            if r is not None and r.codes is not None:
                first = np.where(r.codes != 0, p, first)
        python_rows = np.zeros(m, dtype=bool) if not per_node else first > per_node[0]
        if nominated is not None:
            python_rows = python_rows | nominated[rows]
        # Positions settled by the vectorised plugins alone: feasible where all passed (and no
        # per-node plugin is left to run there), failed where a plugin before any per-node one failed.
        settled_ok = (first == n_plugins) & ~python_rows
        py_positions = np.flatnonzero(python_rows).tolist()
        ok_positions = np.flatnonzero(settled_ok)
        walked: dict[int, Status] = {}
        found: list[int] = []
        end = m
        if not py_positions:
            settled = ok_positions[:need]
            if len(ok_positions) >= need:
                end = int(settled[-1]) + 1
            feasible.append(rows[settled])
            n_feasible += len(settled)
        else:
            ok_list = ok_positions.tolist()
            k = 0  # settled feasible positions consumed
            for j in py_positions:
                while k < len(ok_list) and ok_list[k] < j and len(found) < need:
                    found.append(ok_list[k])
                    k += 1
                if len(found) >= need:
                    break
                row = int(rows[j])
                s = _walk(plugins, results, state, pod, infos[row], int(first[j]), nominated, row, with_nominated)
                if s is _VECTOR:
                    s = _stamp(stamped, plugins, results, int(first[j]), _code(results, first, j))
                if s.is_success():
                    found.append(j)
                elif s.is_rejected():
                    walked[j] = s
                else:
                    _record(diagnosis, table, rows, first, results, plugins, stamped, walked, j, python_rows)
                    return np.zeros(0, dtype=np.int64), lo + j, s  # the Error node: not processed
            while k < len(ok_list) and len(found) < need:
                found.append(ok_list[k])
                k += 1
            if len(found) >= need:
                end = found[-1] + 1
            feasible.append(rows[np.array(found, dtype=np.int64)])
            n_feasible += len(found)
        _record(diagnosis, table, rows, first, results, plugins, stamped, walked, end, python_rows)
        if n_feasible >= to_find:
            return _concat(feasible), lo + end, None
        lo = hi
    return _concat(feasible), n, None


def _concat(parts: list[IntArray]) -> IntArray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _stamp(
    stamped: dict[tuple[int, int], Status],
    plugins: Sequence[Any],
    results: Sequence[FilterCodes | None],
    p: int,
    code: int,
) -> Status:
    s = stamped.get((p, code))
    if s is None:
        r = results[p]
        assert r is not None
        s = stamped[(p, code)] = r.statuses[code].with_plugin(plugins[p].name)
    return s


def _walk(
    plugins: Sequence[Any],
    results: Sequence[FilterCodes | None],
    state: CycleState,
    pod: Any,
    info: NodeInfo,
    first: int,
    nominated: np.ndarray[Any, np.dtype[np.bool_]] | None,
    row: int,
    with_nominated: Callable[[CycleState, Any, NodeInfo], Status],
) -> Status:
    """The reference verdict for one node, reusing the vectorised plugins' codes."""
    if nominated is not None and nominated[row]:
        return with_nominated(state, pod, info)
    for p in range(min(first, len(plugins))):
        if results[p] is not None:
            continue  # passed (it is before the first vectorised failure)
        pl = plugins[p]
        try:
            s = pl.filter(state, pod, info)
        except Exception as err:  # a misbehaving plugin: Error, as upstream's AsStatus
            s = as_status(err)
        if not s.is_success():
            if not s.is_rejected():
                return _error(f'running "{pl.name}" filter plugin: {s.message()}', pl.name)
            return s.with_plugin(pl.name)  # type: ignore[no-any-return]
    return _VECTOR if first < len(plugins) else SUCCESS


_VECTOR: Final = Status(Code.Unschedulable, "(the first failing plugin's vectorised status)")
"""``_walk``'s marker: the node failed at the vectorised plugin ``first``."""


def _code(results: Sequence[FilterCodes | None], first: IntArray, j: int) -> int:
    r = results[int(first[j])]
    codes = r.codes if r is not None else None
    assert codes is not None
    return int(codes[j])


def _record(
    diagnosis: Diagnosis,
    table: NodeTable,
    rows: IntArray,
    first: IntArray,
    results: Sequence[FilterCodes | None],
    plugins: Sequence[Any],
    stamped: dict[tuple[int, int], Status],
    walked: dict[int, Status],
    end: int,
    python_rows: np.ndarray[Any, np.dtype[np.bool_]],
) -> None:
    """Set the statuses of the failed positions before ``end``, in visiting order."""
    n_plugins = len(plugins)
    positions = np.flatnonzero((first[:end] < n_plugins) & ~python_rows[:end])
    if not walked:  # every failed node failed at a vectorised plugin: no per-node Python
        _record_stamped(diagnosis, table, rows, first, results, plugins, stamped, positions)
        return
    failed = sorted([*positions.tolist(), *(j for j in walked if j < end)])
    if not failed:
        return
    infos = table.infos
    row_of = rows[:end].tolist()
    firsts = first[:end].tolist()
    codes_of: dict[int, list[int]] = {}
    names: list[str] = []
    statuses: list[Status] = []
    rejectors: dict[int, Status] = {}
    """Distinct statuses by id: ``add_plugin_status`` only adds the plugin to a set, so one call
    per distinct (stamped, shared) status gives the same diagnosis as one per node."""
    for j in failed:
        s = walked.get(j)
        if s is None:
            p = firsts[j]
            codes = codes_of.get(p)
            if codes is None:
                r = results[p]
                assert r is not None
                assert r.codes is not None
                codes = codes_of[p] = r.codes[:end].tolist()
            s = _stamp(stamped, plugins, results, p, codes[j])
        names.append(infos[row_of[j]].name)
        statuses.append(s)
        rejectors[id(s)] = s
    diagnosis.node_to_status.set_many(zip(names, statuses, strict=True))
    for s in rejectors.values():
        diagnosis.add_plugin_status(s)


def _record_stamped(
    diagnosis: Diagnosis,
    table: NodeTable,
    rows: IntArray,
    first: IntArray,
    results: Sequence[FilterCodes | None],
    plugins: Sequence[Any],
    stamped: dict[tuple[int, int], Status],
    positions: IntArray,
) -> None:
    """``_record`` when no position was walked: each failed node's status is the stamped one of
    its first failing plugin and code, so the (plugin, code) pairs are found with numpy and each
    distinct status is stamped once; the rows go to the diagnosis as arrays
    (``NodeToStatus.set_rows``: entries in visiting order once a reader needs them)."""
    if not len(positions):
        return
    firsts = first[positions]
    if int(firsts.min()) == int(firsts.max()):  # one plugin rejected every failed node
        failing = [int(firsts[0])]
        r = results[failing[0]]
        assert r is not None
        assert r.codes is not None
        codes = r.codes[positions]
    else:
        codes = np.zeros(len(positions), dtype=np.int64)
        failing = np.unique(firsts).tolist()
        for p in failing:
            r = results[p]
            assert r is not None
            assert r.codes is not None
            sel = firsts == p
            codes[sel] = r.codes[positions[sel]]
    lo, hi = int(codes.min()), int(codes.max())
    if len(failing) == 1 and lo == hi:
        # One (plugin, code) for every failed node: the common case.
        statuses = [_stamp(stamped, plugins, results, failing[0], lo)]
        which = np.zeros(len(positions), dtype=np.int64)
        counts = [len(positions)]
    else:
        keys = firsts * (hi + 1) + codes
        uniq, first_at, inverse, n_of = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        order = np.argsort(first_at, kind="stable")  # the statuses in the order of their first node
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        width = hi + 1
        statuses = [_stamp(stamped, plugins, results, k // width, k % width) for k in uniq[order].tolist()]
        which = rank[inverse.reshape(-1)]
        counts = n_of[order].tolist()
    diagnosis.node_to_status.set_rows(table.names, table.index, rows[positions], which, statuses, counts)
    for s in statuses:
        diagnosis.add_plugin_status(s)


# --- scoring -------------------------------------------------------------------------------------


def score(
    plugins: Sequence[Any],
    weights: dict[str, int],
    state: CycleState,
    pod: Any,
    table: NodeTable,
    rows: IntArray,
    nodes: Sequence[NodeInfo],
) -> IntArray:
    """Weighted totals over ``rows`` (``nodes`` are their NodeInfos); ``ScoreError`` as the
    reference ``run_score_plugins`` would fail."""
    m = len(rows)
    raw: list[IntArray] = []
    first_error: tuple[int, int, Status] | None = None
    for p, pl in enumerate(plugins):
        sa = getattr(pl, "score_all", None)
        try:
            values = sa(state, pod, table, rows) if sa is not None else None
        except Exception:  # a misbehaving plugin: its per-node score says where and what
            values = None
        if values is None:
            out = []
            for i, ni in enumerate(nodes):
                try:
                    sc, s = pl.score(state, pod, ni)
                except Exception as err:
                    sc, s = 0, as_status(err)
                if not s.is_success():
                    if first_error is None or (i, p) < first_error[:2]:
                        msg = f'running Score plugins: plugin "{pl.name}" failed with: {s.message()}'
                        first_error = (i, p, _error(msg, pl.name))
                    break
                out.append(sc)
            values = np.array(out + [0] * (m - len(out)), dtype=np.int64)
        raw.append(values)
    if first_error is not None:
        raise ScoreError(first_error[2])
    normalized: list[IntArray] = []
    for p, pl in enumerate(plugins):
        ext = pl.score_extensions()
        if ext is None:
            normalized.append(raw[p])
            continue
        nsa = getattr(ext, "normalize_score_all", None)
        if nsa is not None:
            try:
                normalized.append(nsa(state, pod, raw[p]))
                continue
            except Exception:  # a misbehaving plugin: its per-node normalize says what
                pass
        lst = [NodeScore(ni.name, v) for ni, v in zip(nodes, raw[p].tolist(), strict=True)]
        try:
            s = ext.normalize_score(state, pod, lst)
        except Exception as err:
            s = as_status(err)
        if not s.is_success():
            msg = f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {s.message()}'
            raise ScoreError(_error(msg, pl.name))
        normalized.append(np.array([ns.score for ns in lst], dtype=np.int64))
    stacked = np.array(normalized, dtype=np.int64).reshape(len(plugins), m)
    if m and (
        np.minimum.reduce(stacked, axis=None) < MIN_NODE_SCORE or np.maximum.reduce(stacked, axis=None) > MAX_NODE_SCORE
    ):
        bad = (stacked < MIN_NODE_SCORE) | (stacked > MAX_NODE_SCORE)
        i = int(np.flatnonzero(bad.any(axis=0))[0])  # the first node, then its first plugin
        p = int(np.flatnonzero(bad[:, i])[0])
        name = plugins[p].name
        msg = (
            f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid '
            f"score {int(stacked[p, i])}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
            "after normalizing"
        )
        raise ScoreError(_error(msg, name))
    if not len(plugins):
        return np.zeros(m, dtype=np.int64)
    w = np.array([weights[pl.name] for pl in plugins], dtype=np.int64)
    return w @ stacked  # int64 matrix product: exact integer sums


def select_host(totals: IntArray, rng: random.Random) -> int:
    """The index the reference ``select_host`` picks: the highest total, one draw among ties."""
    # (``argmax`` finds the highest total in a fraction of ``np.maximum.reduce``'s time.)
    top = (totals == totals[totals.argmax()]).nonzero()[0]
    if len(top) == 1:
        return int(top[0])
    return int(top[rng.randrange(len(top))])
