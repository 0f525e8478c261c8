"""The vectorised companions of the Filter and Score plugin interfaces: the emulator's own
extension of upstream's ``framework/interface.go`` (``interface.py`` re-exports them).

A plugin may offer, beside its per-node reference methods, ``VectorFilterPlugin.filter_all``
(``FilterCodes`` for many NodeTable rows at once), ``VectorScorePlugin.score_all`` (raw scores),
``VectorScoreExtensions.normalize_score_all`` (normalized ones) and ``RowScorePlugin.score_row``
(a normalized score that depends on the node alone this cycle, ``RowScore``). The rules they
follow are in ``interface.py``'s docstring; ``vectorized.py`` and ``score_totals.py`` run them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from emulator.base.api.core import Pod

from .cycle_state import CycleState
from .node_info import NodeInfo
from .node_table import IntArray, NodeTable
from .status import Status

__all__ = [
    "ALL_PASS",
    "FilterCodes",
    "RowScore",
    "RowScorePlugin",
    "VectorFilterPlugin",
    "VectorScoreExtensions",
    "VectorScorePlugin",
]


@dataclass(frozen=True, slots=True)
class FilterCodes:
    """A vectorised Filter verdict over table rows: ``codes[i] == 0`` is Success, ``k > 0``
    is ``statuses[k]`` (a rejection; ``statuses[0]`` is unused). ``codes`` None: every row passes."""

    codes: IntArray | None
    statuses: Sequence[Status] = ()


ALL_PASS: Final = FilterCodes(None)
"""``FilterCodes(None)``, shared (it is immutable): every row passes."""


@runtime_checkable
class VectorFilterPlugin(Protocol):
    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        """The verdict for ``table`` rows ``rows`` (what ``filter`` says of each), or None."""
        ...


@runtime_checkable
class VectorScorePlugin(Protocol):
    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """``score`` of each of ``rows`` (int64), or None (then ``score`` runs per node)."""
        ...


@runtime_checkable
class VectorScoreExtensions(Protocol):
    def normalize_score_all(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """What ``normalize_score`` makes of ``scores`` (a new array)."""
        ...


@dataclass(frozen=True, slots=True)
class RowScore:
    """A Score plugin's *normalized* score as a function of one table row, for this pod.

    ``one(node_info)`` is what the plugin's ``score`` then ``normalize_score`` give that node
    whatever the other nodes scored (so only for a cycle where the normalization is row-wise),
    ``compute(table, rows)`` the same over table rows (None: ``one`` row by row); both read
    nothing of the pod or the cycle that ``key`` does not name (they serve later pods with an
    equal key), and nothing of a row but its table columns (the amounts), Node object and image
    states; ``reads_node=False`` promises they do not read the Node object (rows in the same
    amounts and image states then share ``one``'s answer: ``NodeTable.rows_cached``)."""

    key: Hashable
    one: Callable[[NodeInfo], int]
    compute: Callable[[NodeTable, IntArray], IntArray | None]
    reads_node: bool = True


@runtime_checkable
class RowScorePlugin(Protocol):
    def score_row(self, state: CycleState, pod: Pod, table: NodeTable) -> RowScore | None:
        """This cycle's normalized score as a ``RowScore``, or None (not row-wise this cycle, or
        ``score`` would fail: the runtime then scores as usual)."""
        ...
