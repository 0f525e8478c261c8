"""``SimRows``: the ``SchedulingSimulator``'s columnar view of its nodes, so that
``schedule_anywhere`` runs the per-node Filter only on the nodes the vectorised Filter plugins
do not already reject.

What this module owns: a ``NodeTable`` built over the simulator's listed NodeInfos once after a
``reset`` (the *base rows*) and kept current through the simulator's edits instead of being
rebuilt: a pod added or removed updates its row (the simulator changes NodeInfos in place, so
the table's ``infos`` stay the live objects); a base node removed is masked (``removed``), and
put back unmasked when a ``revert`` re-inserts it at the position it had; a node added after
the base is listed after the base rows (``appended``, in order). So the simulator's listed order
is always: the base rows not removed, in row order, then ``appended``. Anything else (a name
added twice, a re-insertion elsewhere) drops the view (the simulator builds a new one).

``candidates(state, pod, start, n)``: the listed positions ``schedule_anywhere`` must still try,
in its visiting order (from ``start``, wrapping): every appended node, and every base node not
removed where no vectorised Filter plugin (``filter_all``, the plugins not skipped this cycle)
gave a rejection. A plugin's ``filter_all`` is bit-for-bit its ``filter`` (the scheduler's
vectorised cycle relies on the same), so a node left out here fails the per-node Filter too, and
the first node that passes, in the same order, is the one the per-node walk would find.

Why: the autoscalers' simulations (Karpenter's consolidation places every pod of up to 100
candidates, node by node) spent most of their time in the per-node Filter of nodes that were
full (issue 28's Karpenter day).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.scheduler.framework.interface import ExtensionPoint
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import CycleState, NodeInfo
from emulator.base.api.core import Pod

__all__ = ["SimRows"]


class SimRows:
    """The simulator's nodes as table rows (module docstring)."""

    __slots__ = ("_positions", "appended", "n_removed", "removed", "table")

    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self.table = NodeTable(list(infos))
        self.removed = np.zeros(self.table.size, dtype=bool)
        self.n_removed = 0
        self.appended: list[str] = []
        self._positions: IntArray | None = None
        """Base row -> listed position (valid for the rows not removed); None: recompute."""

    # --- the simulator's edits; False: the view no longer holds (drop it) -----------------

    def row_of(self, info: NodeInfo) -> int | None:
        r = self.table.index.get(info.name)
        return r if r is not None and self.table.infos[r] is info else None

    def changed(self, info: NodeInfo) -> None:
        """``info`` (listed) changed in place: update its row, if it has one."""
        r = self.row_of(info)
        if r is not None:
            self.table.update_row(r, info)

    def added(self, name: str) -> bool:
        if name in self.table.index or name in self.appended:
            return False
        self.appended.append(name)
        return True

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
            self.removed[r] = False
            self.n_removed -= 1
            self._positions = None
            return True
        at = position - (self.table.size - self.n_removed)
        if not 0 <= at <= len(self.appended) or info.name in self.appended:
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
        ok = ~self.removed
        rows = np.arange(table.size, dtype=np.int64)
        for pl in framework._minus(ExtensionPoint.Filter, state.skip_filter_plugins):
            fa = getattr(pl, "filter_all", None)
            if fa is None:
                continue
            try:
                result = fa(state, pod, table, rows)
            except Exception:  # a misbehaving plugin: its per-node filter decides
                result = None
            if result is not None and result.codes is not None:
                ok &= result.codes == 0
        if self._positions is None:
            self._positions = np.cumsum(~self.removed) - 1
        listed = self._positions[ok]
        if self.appended:
            listed = np.concatenate((listed, np.arange(base, n, dtype=np.int64)))
        cut = int(np.searchsorted(listed, start))
        out: list[int] = listed[cut:].tolist()
        out.extend(listed[:cut].tolist())
        return out
