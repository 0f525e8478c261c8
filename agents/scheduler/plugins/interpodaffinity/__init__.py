"""``InterPodAffinity`` (upstream ``pkg/scheduler/framework/plugins/interpodaffinity``): required
pod affinity / anti-affinity as a filter (both directions: the incoming pod's terms and existing
pods' required anti-affinity), preferred terms (and existing pods' required affinity, weighted by
``hardPodAffinityWeight``) as a score.

Modules, as upstream's files: ``plugin.py`` (the plugin, args, namespaces, events and hints),
``filtering.py`` (PreFilter state, AddPod/RemovePod, Filter), ``scoring.py`` (PreScore map,
Score, NormalizeScore), plus ``terms.py`` (parsed terms: upstream's ``framework.AffinityTerm``;
their selectors are ``emulator.base.api.labelselector``'s compiled ``Selector``).

Performance (no upstream counterpart; results identical to the reference functions, which stay):
``memo.py`` keeps PreFilter's and PreScore's per-node contributions across cycles, keyed by
NodeInfo ``generation`` (``aggregate.py`` holds the totals, adjusted for changed nodes only),
and ``vector.py`` is Filter over NodeTable rows (``filter_all``).
"""

from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    PreFilterState,
)
from .plugin import METADATA_NAME_LABEL, NAME, InterPodAffinity, NamespaceLister
from .scoring import PRE_SCORE_STATE_KEY, PreScoreState

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "METADATA_NAME_LABEL",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InterPodAffinity",
    "NamespaceLister",
    "PreFilterState",
    "PreScoreState",
]
