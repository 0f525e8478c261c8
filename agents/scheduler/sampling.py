"""Which nodes one scheduling cycle looks at, and which one it picks (upstream
``numFeasibleNodesToFind`` and ``selectHost`` in ``schedule_one.go``).

Pure functions shared by the cycle (``schedule_one.py``) and ``explain.py``; the vectorised
counterpart of ``select_host`` over table rows is ``framework/vectorized.py``. This module
owns no state and draws only from the ``rng`` it is handed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "num_feasible_nodes_to_find",
    "select_host",
]

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive when the percentage is 0 or unset)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    p = percentage or 0
    if p == 0:
        p = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    k = num_all_nodes * p // 100
    return max(k, MIN_FEASIBLE_NODES_TO_FIND)


def select_host(totals: Sequence[tuple[str, int]], rng: random.Random) -> str:
    """The highest total; ties broken uniformly at random with one draw.

    Upstream's ``selectHost`` keeps one of the top-scoring nodes by reservoir sampling (one
    ``rand.Intn`` per tie). Go's random stream cannot be reproduced, only its distribution:
    every top-scoring node is equally likely. One ``randrange`` over the ties, in list order,
    gives that distribution with a single draw (and only when there is a tie)."""
    best = max(score for _, score in totals)
    top = [name for name, score in totals if score == best]
    if len(top) == 1:
        return top[0]
    return top[rng.randrange(len(top))]
