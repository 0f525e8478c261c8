"""``PodTopologySpread`` (upstream ``pkg/scheduler/framework/plugins/podtopologyspread``), split
as upstream splits it:

==============  ==========================================================================
module          owns
==============  ==========================================================================
``common``      parsed selectors and constraints, the counting rule, node inclusion
                policies, the (system) default constraints and the pluggable default selector
``filtering``   PreFilter state with critical paths, AddPod/RemovePod updates, Filter
``scoring``     PreScore state (its reference fields computed on first read), Score,
                NormalizeScore: the per-node reference
``memo``        PreFilter counts kept across cycles, Filter over NodeTable rows
``vector``      PreScore + Score + NormalizeScore over NodeTable rows (``score_all``)
``plugin``      the ``PodTopologySpread`` plugin, its args, events and queueing hints
==============  ==========================================================================
"""

from __future__ import annotations

from .common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    DefaultSelectorFn,
    Selector,
    no_default_selector,
)
from .plugin import NAME, PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY, PodTopologySpread

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "DefaultSelectorFn",
    "PodTopologySpread",
    "Selector",
    "no_default_selector",
]
