"""``DynamicResources`` (upstream ``plugins/dynamicresources/dynamicresources.go``, v1.34): the
part of the DRA plugin that acts on a pod without resource claims — the only kind of pod the
emulator has until ResourceClaims arrive with DRA.

Why it is here: DRA is GA and on by default in v1.34, so ``getDefaultPlugins``'
``applyFeatureGates`` puts ``DynamicResources`` in the default multiPoint set just before
``DefaultPreemption`` ("better to first deallocate an idle ResourceClaim than to evict some Pod").
Its PostFilter runs first and, for a claim-less pod, adds "no new claims to deallocate" to every
unschedulable message: ``0/3 nodes are available: 3 Insufficient cpu. no new claims to
deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming
pod.`` as real v1.34 clusters print it. Disabling the plugin in a KubeSchedulerConfiguration
removes that clause, as upstream.

==========  ==============================================================================
point       behaviour (a pod without claims)
==========  ==============================================================================
PreFilter   writes an empty state under ``DynamicResources`` into CycleState, then ``Skip``
            (so Filter, Reserve and PreBind have nothing to do: the plugin implements none)
PostFilter  the state present → ``Unschedulable`` "no new claims to deallocate"; absent
            (an earlier PreFilter rejected the pod as UnschedulableAndUnresolvable, so
            this PreFilter never ran) → ``Error`` "not found" (upstream ``getStateData``
            returns CycleState's ``ErrNotFound``), which ends PostFilter before
            DefaultPreemption, as upstream's ``RunPostFilterPlugins`` does
==========  ==============================================================================

What it does not own: ResourceClaims, ResourceSlices, DeviceClasses and allocation (not modelled:
the pod API here has no ``spec.resourceClaims``); PreEnqueue, Filter, Reserve, PreBind and the
queueing hints, which do nothing for a pod without claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agents.scheduler.framework.interface import Handle, NodeToStatus, PostFilterResult
from agents.scheduler.framework.types import Code, CycleState, NodeInfo, Status
from emulator.base.api.core import Pod

__all__ = ["NAME", "NO_CLAIMS_TO_DEALLOCATE", "STATE_KEY", "DynamicResources"]

NAME: Final = "DynamicResources"
STATE_KEY: Final = NAME
"""Upstream ``stateKey`` (the plugin's name)."""
NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
"""PostFilter's message for a pod with no claims (upstream literal)."""
STATE_NOT_FOUND: Final = "not found"
"""Upstream ``fwk.ErrNotFound``'s text, what ``getStateData`` returns without PreFilter state."""

_SKIP: Final = Status(Code.Skip)
_NO_CLAIMS: Final = Status(Code.Unschedulable, NO_CLAIMS_TO_DEALLOCATE)
_NO_STATE: Final = Status(Code.Error, STATE_NOT_FOUND)


class _StateData:
    """Upstream ``stateData`` with no claims: nothing to clone or reserve."""

    __slots__ = ()

    def clone(self) -> _StateData:
        return self


_EMPTY: Final = _StateData()


class DynamicResources:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        state.write(STATE_KEY, _EMPTY)
        return None, _SKIP

    def pre_filter_extensions(self) -> None:
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        try:
            state.read(STATE_KEY)
        except KeyError:
            return None, _NO_STATE
        return None, _NO_CLAIMS
