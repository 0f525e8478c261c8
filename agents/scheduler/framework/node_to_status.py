"""``NodeToStatus``: upstream's per-node Filter statuses of a failed cycle (v1.31+), plus one
status for the nodes not set explicitly.

What this module owns: the map and how it is kept. Explicit statuses are a dict by node name in
insertion order (upstream iterates a Go map; here the visiting order, so every walk over it is
deterministic). The vectorised Filter (``vectorized.py``) may instead hand over a whole window of
rejected table rows at once (``set_rows``): the rows, and for each the index of its status among
a few distinct ones, kept as numpy arrays and counted once (``status_counts``). They become dict
entries only when something reads or writes single nodes (``get`` of a listed node, ``set``,
``explicit_nodes`` ...), in the order they would have been inserted. What a failed attempt reads
of the map (the FitError histogram, DefaultPreemption's count of potential nodes) needs only the
counts, so a cycle that fails on every one of 1,000 nodes builds no per-node Python object (the
Cluster Autoscaler's day retries each pending pod at every node arrival: issue 28).

``set_rows`` requires the rows to name nodes not set yet (a search visits each row once);
everything else behaves as the plain dict (``tests/scheduler/test_node_to_status_rows.py``
compares the two over random windows and reads).

It does not own the statuses themselves (``status.py``), the diagnosis and the FitError text
(``diagnosis.py``), or the search (``vectorized.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, KeysView, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .status import Code, Status

if TYPE_CHECKING:
    from .node_info import NodeInfo

__all__ = ["NodeToStatus"]


class _Rows:
    """One window's rejected rows: ``names[rows[i]]`` has ``statuses[which[i]]``; ``counts[k]``
    rows have ``statuses[k]``, the statuses in the order of their first row."""

    __slots__ = ("counts", "index", "names", "rows", "statuses", "which")

    def __init__(
        self,
        names: Sequence[str],
        index: Mapping[str, int],
        rows: Any,
        which: Any,
        statuses: list[Status],
        counts: list[int],
    ) -> None:
        self.names, self.index, self.rows, self.which = names, index, rows, which
        self.statuses, self.counts = statuses, counts

    def items(self) -> Iterator[tuple[str, Status]]:
        names, statuses = self.names, self.statuses
        return zip([names[r] for r in self.rows.tolist()], [statuses[k] for k in self.which.tolist()], strict=True)

    def get(self, name: str) -> Status | None:
        r = self.index.get(name)
        if r is None:
            return None
        at = np.flatnonzero(self.rows == r)
        return self.statuses[int(self.which[at[0]])] if len(at) else None


class NodeToStatus:
    """Upstream ``NodeToStatus`` (v1.31+): explicit per-node statuses plus one for absent nodes.

    Nodes not set explicitly (e.g. excluded by a PreFilterResult, or a whole-cycle PreFilter
    rejection) have ``absent_nodes_status``, by default ``UnschedulableAndUnresolvable``
    without reasons. Insertion order is kept (deterministic iteration).
    """

    __slots__ = ("_absent", "_rows", "_statuses")

    def __init__(self, statuses: Mapping[str, Status] | None = None, absent: Status | None = None) -> None:
        self._statuses: dict[str, Status] = dict(statuses or {})
        self._absent = absent if absent is not None else Status(Code.UnschedulableAndUnresolvable)
        self._rows: list[_Rows] = []
        """Windows set by ``set_rows`` after the dict's entries, not yet in it."""

    def _settled(self) -> dict[str, Status]:
        """The dict with every window's rows added, in order."""
        if self._rows:
            for w in self._rows:
                self._statuses.update(w.items())
            self._rows = []
        return self._statuses

    def get(self, node_name: str) -> Status:
        s = self._statuses.get(node_name)
        if s is None:
            for w in self._rows:
                s = w.get(node_name)
                if s is not None:
                    break
        return self._absent if s is None else s

    def set(self, node_name: str, status: Status) -> None:
        self._settled()[node_name] = status

    def set_many(self, items: Iterable[tuple[str, Status]]) -> None:
        """``set`` for each (node name, status), in order."""
        self._settled().update(items)

    def set_rows(
        self,
        names: Sequence[str],
        index: Mapping[str, int],
        rows: Any,
        which: Any,
        statuses: list[Status],
        counts: list[int],
    ) -> None:
        """``set(names[rows[i]], statuses[which[i]])`` for each i, in order, kept as arrays:
        ``rows`` and ``which`` are int arrays, ``index`` maps each name to its row, ``statuses``
        are distinct objects in the order of their first row and ``counts`` how many rows each
        has. The rows must name nodes not set yet."""
        if len(rows):
            self._rows.append(_Rows(names, index, rows, which, statuses, counts))

    def __len__(self) -> int:
        """Number of explicitly set nodes (upstream ``Len``)."""
        return len(self._statuses) + sum(len(w.rows) for w in self._rows)

    @property
    def absent_nodes_status(self) -> Status:
        return self._absent

    def set_absent_nodes_status(self, status: Status) -> None:
        self._absent = status

    def explicit_nodes(self) -> Iterator[tuple[str, Status]]:
        """(node name, status) in insertion order (upstream ``ForEachExplicitNode``)."""
        return iter(list(self._settled().items()))

    def explicit_names(self) -> KeysView[str]:
        """The explicitly set nodes' names (a live view)."""
        return self._settled().keys()

    def explicit_statuses(self) -> Iterator[Status]:
        """The explicitly set statuses, in insertion order (one per node)."""
        return iter(list(self._settled().values()))

    def status_counts(self) -> list[tuple[Status, int]]:
        """(status, number of nodes explicitly set to that very object), in the order of each
        object's first node."""
        nodes_of: dict[int, list[Any]] = {}
        for status in self._statuses.values():
            seen = nodes_of.get(id(status))
            if seen is None:
                nodes_of[id(status)] = [status, 1]
            else:
                seen[1] += 1
        for w in self._rows:
            for status, n in zip(w.statuses, w.counts, strict=True):
                seen = nodes_of.get(id(status))
                if seen is None:
                    nodes_of[id(status)] = [status, n]
                else:
                    seen[1] += n
        return [(status, n) for status, n in nodes_of.values()]

    def names_within(self, node_map: Mapping[str, Any]) -> bool:
        """Every explicitly set node is a key of ``node_map``."""
        if not self._statuses.keys() <= node_map.keys():
            return False
        for w in self._rows:
            if w.index.keys() <= node_map.keys():
                continue  # every row of the table is there
            names = w.names
            if not all(names[r] in node_map for r in w.rows.tolist()):
                return False
        return True

    def nodes_for_status_code(self, nodes: list[NodeInfo], code: Code) -> list[NodeInfo]:
        """The nodes among ``nodes`` whose status (explicit or absent) has ``code``."""
        statuses, absent = self._settled(), self._absent
        if not statuses and absent.code is not code:
            return []
        return [n for n in nodes if statuses.get(n.name, absent).code is code]

    def __repr__(self) -> str:
        return f"<NodeToStatus {self._settled()!r} absent={self._absent!r}>"
