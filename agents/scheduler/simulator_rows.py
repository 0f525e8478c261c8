"""``SimRows``: the ``SchedulingSimulator``'s columnar view of its nodes, so that
``schedule_anywhere`` runs the per-node Filter only on the nodes the vectorised Filter plugins
do not already reject.

What this module owns: a ``NodeTable`` built over the simulator's listed NodeInfos once after a
``reset`` (the *base rows*) and kept current through the simulator's edits instead of being
rebuilt: a pod added or removed updates its row (the simulator changes NodeInfos in place, so
the table's ``infos`` stay the live objects); a base node removed is masked (``removed``), and
put back unmasked when a ``revert`` re-inserts it at the position it had; a node added after
the base is listed after the base rows (``appended``, in order). So the simulator's listed order
is always: the base rows not removed, in row order, then ``appended``. A node added under the
name of a removed base row is appended like any new node (the Cluster Autoscaler's
``taintedGhostNode`` removal simulation replaces each candidate by a tainted copy: without this
every candidate's simulation built a table of every node, a fifth of the autoscaler's day).
Anything else (a name listed twice, a re-insertion elsewhere) drops the view (the simulator
builds a new one).

``candidates(state, pod, start, n)``: the listed positions ``schedule_anywhere`` must still try,
in its visiting order (from ``start``, wrapping): every appended node, and every base node not
removed where no vectorised Filter plugin (``filter_all``, the plugins not skipped this cycle)
gave a rejection. A plugin's ``filter_all`` is bit-for-bit its ``filter`` (the scheduler's
vectorised cycle relies on the same), so a node left out here fails the per-node Filter too, and
the first node that passes, in the same order, is the one the per-node walk would find.

Verdicts kept per pod shape (``_Verdicts``): when every plugin that runs ``filter_all`` this
cycle is row-local (``ROW_LOCAL``: its verdict on a row reads only that row and the pod, its
PreFilter state coming from the pod alone), the rows' pass/fail mask for a pod is kept, and a pod
alike (``pods_alike``: the same namespace, labels, annotations, spec and requests by status;
the same PreFilter state) with the same skipped plugins gets it back with only the rows changed
since (``changed``) evaluated again. Any mask that leaves out only rows failing the per-node
Filter gives the same first node, so the walk is unchanged.

Why: the autoscalers' simulations (Karpenter's consolidation places every pod of up to 100
candidates, node by node) spent most of their time in the per-node Filter of nodes that were
full (issue 28's Karpenter day).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from agents.scheduler.framework.interface import ExtensionPoint
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import CycleState, NodeInfo
from emulator.base.api.core import Pod
from emulator.base.api.resources import pods_alike

__all__ = ["ROW_LOCAL", "SimRows"]

ROW_LOCAL: Final = frozenset(
    {"NodeResourcesFit", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts"}
)
"""Filter plugins whose verdict on a node reads only that node's NodeInfo and the pod."""
MAX_VERDICTS: Final = 8


class _Verdicts:
    """One pod shape's pass mask over the table rows, current up to ``seen`` changed rows."""

    __slots__ = ("mask", "pod", "seen", "skip")

    def __init__(self, pod: Pod, skip: frozenset[str], mask: npt.NDArray[np.bool_], seen: int) -> None:
        self.pod, self.skip, self.mask, self.seen = pod, skip, mask, seen

    def alike(self, pod: Pod, skip: frozenset[str]) -> bool:
        return skip == self.skip and pods_alike(self.pod, pod)


class SimRows:
    """The simulator's nodes as table rows (module docstring)."""

    __slots__ = ("_changed", "_positions", "_verdicts", "appended", "n_removed", "removed", "table")

    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self.table = NodeTable(list(infos))
        self.removed = np.zeros(self.table.size, dtype=bool)
        self.n_removed = 0
        self.appended: list[str] = []
        self._positions: IntArray | None = None
        self._changed: list[int] = []
        """Rows updated, in order (``_Verdicts.seen`` counts into it)."""
        self._verdicts: list[_Verdicts] = []
        """Base row -> listed position (valid for the rows not removed); None: recompute."""

    # --- the simulator's edits; False: the view no longer holds (drop it) -----------------

    def clean(self) -> bool:
        """Every base row listed and nothing appended (every fork reverted)."""
        return not self.n_removed and not self.appended

    def rebase(self, infos: Sequence[NodeInfo]) -> bool:
        """A ``reset`` listed ``infos``: if they are this clean view's nodes in its row order,
        the rows whose NodeInfo is another object are updated (``changed``) and the view is
        kept; False (nothing changed) otherwise. The autoscalers reset on every loop, keeping
        most NodeInfos (``agents/autoscaler/snapshot.py``): a loop updates the rows of the nodes
        that changed instead of building a table of every node."""
        table = self.table
        if not self.clean() or len(infos) != table.size:
            return False
        old, names = table.infos, table.names
        moved = [r for r, (a, b) in enumerate(zip(infos, old, strict=True)) if a is not b]
        if 2 * len(moved) > table.size or any(infos[r].name != names[r] for r in moved):
            return False  # (most rows new: as cheap to build afresh)
        table.infos = list(infos)
        for r in moved:
            table.update_row(r, infos[r])
            if self._verdicts:
                self._changed.append(r)
        self._positions = None
        return True

    def row_of(self, info: NodeInfo) -> int | None:
        r = self.table.index.get(info.name)
        return r if r is not None and self.table.infos[r] is info else None

    def changed(self, info: NodeInfo) -> None:
        """``info`` (listed) changed in place: update its row, if it has one."""
        r = self.row_of(info)
        if r is not None:
            self.table.update_row(r, info)
            if self._verdicts:
                self._changed.append(r)

    def added(self, name: str) -> bool:
        """A node named ``name`` is listed last. It may be a removed base row's name (the Cluster
        Autoscaler's tainted ghost of the node whose removal it simulates): a new node all the
        same, appended, its base row staying masked."""
        if name in self.appended or not self._unlisted(name):
            return False
        self.appended.append(name)
        return True

    def _unlisted(self, name: str) -> bool:
        """No base row of that name is listed."""
        r = self.table.index.get(name)
        return r is None or bool(self.removed[r])

    def dropped(self, info: NodeInfo) -> bool:
        """``info`` is no longer listed."""
        r = self.row_of(info)
        if r is not None:
            if self.removed[r]:
                return False
            self.removed[r] = True
            self.n_removed += 1
            self._positions = None
            return True
        if info.name in self.appended:
            self.appended.remove(info.name)
            return True
        return False

    def restored(self, info: NodeInfo, position: int) -> bool:
        """``info`` is listed again, at ``position``."""
        r = self.row_of(info)
        if r is not None:
            if not self.removed[r] or r - int(np.count_nonzero(self.removed[:r])) != position:
                return False
            if info.name in self.appended:
                return False  # its ghost is still listed
            self.removed[r] = False
            self.n_removed -= 1
            self._positions = None
            return True
        at = position - (self.table.size - self.n_removed)
        if not 0 <= at <= len(self.appended) or info.name in self.appended or not self._unlisted(info.name):
            return False
        self.appended.insert(at, info.name)
        return True

    # --- the query --------------------------------------------------------------------------

    def candidates(self, framework: Any, state: CycleState, pod: Pod, start: int, n: int) -> list[int] | None:
        """The listed positions left to try, in visiting order; None if the listing is not
        this view's (the caller then walks every node)."""
        table = self.table
        base = table.size - self.n_removed
        if base + len(self.appended) != n:
            return None
        plugins = [
            pl
            for pl in framework._minus(ExtensionPoint.Filter, state.skip_filter_plugins)
            if getattr(pl, "filter_all", None) is not None
        ]
        if all(pl.name in ROW_LOCAL for pl in plugins):
            ok = ~self.removed & self._kept_mask(plugins, state, pod)
        else:
            ok = ~self.removed & _passing(plugins, state, pod, table, np.arange(table.size, dtype=np.int64))
        if self._positions is None:
            self._positions = np.cumsum(~self.removed) - 1
        listed = self._positions[ok]
        if self.appended:
            listed = np.concatenate((listed, np.arange(base, n, dtype=np.int64)))
        cut = int(np.searchsorted(listed, start))
        out: list[int] = listed[cut:].tolist()
        out.extend(listed[:cut].tolist())
        return out

    def _kept_mask(self, plugins: list[Any], state: CycleState, pod: Pod) -> npt.NDArray[np.bool_]:
        """``_passing`` over every row, from the kept mask of a pod alike (module docstring)."""
        skip = frozenset(state.skip_filter_plugins)
        changed = self._changed
        if len(changed) > 4 * max(self.table.size, 256):  # the masks are computed afresh
            self._verdicts.clear()
            changed.clear()
        for i, v in enumerate(self._verdicts):
            if v.alike(pod, skip):
                if v.seen < len(changed):
                    rows = np.unique(np.array(changed[v.seen :], dtype=np.int64))
                    v.mask[rows] = _passing(plugins, state, pod, self.table, rows)
                    v.seen = len(changed)
                if i:
                    self._verdicts.insert(0, self._verdicts.pop(i))
                return v.mask
        mask = _passing(plugins, state, pod, self.table, np.arange(self.table.size, dtype=np.int64))
        self._verdicts.insert(0, _Verdicts(pod, skip, mask, len(changed)))
        del self._verdicts[MAX_VERDICTS:]
        return mask


def _passing(
    plugins: list[Any], state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
) -> npt.NDArray[np.bool_]:
    """Per row of ``rows``: no vectorised Filter plugin rejects it (a plugin that declines, or
    fails, leaves the row to the per-node Filter)."""
    ok = np.ones(len(rows), dtype=bool)
    for pl in plugins:
        try:
            result = pl.filter_all(state, pod, table, rows)
        except Exception:  # a misbehaving plugin: its per-node filter decides
            result = None
        if result is not None and result.codes is not None:
            ok &= result.codes == 0
    return ok
