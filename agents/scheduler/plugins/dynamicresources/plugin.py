"""``DynamicResources`` (upstream ``plugins/dynamicresources/dynamicresources.go``, v1.34).

DRA is GA and on by default in v1.34, so ``getDefaultPlugins``' ``applyFeatureGates`` puts the
plugin in the default multiPoint set just before ``DefaultPreemption``. It reads claims, slices
and classes through the scheduler's ``DraManager`` (``agents.scheduler.dra_manager``, the
handle's ``dra_manager``) and allocates with the structured allocator beside it.

==========  ==============================================================================
point       behaviour
==========  ==============================================================================
PreEnqueue  every claim of the pod exists (``podclaims``' reasons otherwise, Unschedulable-
            AndUnresolvable); a pod without claims passes at once
PreFilter   no claims → empty state, ``Skip`` (pods without claims pay one attribute test).
            Else: an allocated claim reserved for 256 others → "resourceclaim in use"; an
            allocation of the claim in flight → "resource claim ns/c is in the process of
            being allocated"; a missing class → "request r: device class c does not exist";
            then an ``Allocator`` over the devices in use, the classes and the slices
Filter      an allocated claim whose node selector rejects the node → "resourceclaim not
            available on the node" (remembered for PostFilter); the allocator on the node:
            a bad input → Error, a node-only failure → its text, no solution → "cannot
            allocate all claims"; a solution is kept for Reserve
PostFilter  state absent → Error "not found"; no claims → "no new claims to deallocate"; an
            unavailable claim reserved for no one else → its allocation is cleared through the
            API ("deallocation of ResourceClaim completed"), else "still not schedulable"
Reserve     the node's allocations signalled as in flight (their devices count as used from
            now on, so two pods never get the same device). Without PreFilter state (a
            framework driven by hand) Reserve and PreBind succeed doing nothing, as VolumeBinding
Unreserve   in-flight allocations dropped, assumed claims restored, the pod removed from a
            claim's ``reservedFor``
PreBind     (its pre-flight: Skip without claims) per claim not yet reserved for the pod:
            finalizer, allocation and ``reservedFor`` written (retried on conflict with the
            latest claim), the result assumed
==========  ==============================================================================

Events and hints (QueueingHints on): Node Add|UpdateNodeLabel|UpdateNodeAllocatable (the last
for DRA-backed extended resources, registered whatever that alpha gate), ResourceClaim Add|Update
(``is_schedulable_after_claim_change``), Pod UpdatePodGeneratedResourceClaim
(``is_schedulable_after_pod_change``), DeviceClass Add|Update, ResourceSlice Add|Update.
No Score in v1.34 (it came with v1.35's prioritized-list scoring); the filter timeout
(DRASchedulerFilterTimeout) is not modelled: allocation takes no simulated time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from agents.scheduler.framework.interface import Handle, NodeToStatus, PostFilterResult
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueueingHint,
    Status,
)
from emulator.base.api.core import NodeSelector, Pod
from emulator.base.api.errors import ApiError
from emulator.base.api.nodeaffinity import node_selector_matches
from emulator.base.api.resource import FINALIZER
from emulator.base.client.retry import DEFAULT_RETRY, is_conflict, retry_on_conflict

from .allocator import Allocator
from .allocator_types import AllocationError, ClaimAllocation, Features, NodeAllocationError, claim_ref
from .podclaims import (
    ClaimProblem,
    can_be_reserved,
    consumer_ref,
    is_reserved_for_pod,
    pod_claims,
    to_allocation_result,
)

__all__ = ["NAME", "NO_CLAIMS_TO_DEALLOCATE", "STATE_KEY", "DynamicResources"]

NAME: Final = "DynamicResources"
STATE_KEY: Final = NAME
NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE: Final = "still not schedulable"
DEALLOCATION_COMPLETED: Final = "deallocation of ResourceClaim completed"
CANNOT_ALLOCATE_ALL: Final = "cannot allocate all claims"
NOT_AVAILABLE_ON_NODE: Final = "resourceclaim not available on the node"
CLAIM_IN_USE: Final = "resourceclaim in use"
STATE_NOT_FOUND: Final = "not found"

_SKIP: Final = Status(Code.Skip)
_NO_CLAIMS: Final = Status(Code.Unschedulable, NO_CLAIMS_TO_DEALLOCATE)
_NO_STATE: Final = Status(Code.Error, STATE_NOT_FOUND)


def _unresolvable(reason: str) -> Status:
    """Upstream ``statusUnschedulable``."""
    return Status(Code.UnschedulableAndUnresolvable, reason)


@dataclass(slots=True)
class _ClaimInfo:
    available_on: NodeSelector | None = None
    allocation: Any = None  # the API AllocationResult Reserve picked


@dataclass(slots=True)
class _State:
    """Upstream ``stateData`` (shared by clones, as upstream's pointer)."""

    claims: list[Any] = field(default_factory=list)
    infos: list[_ClaimInfo] = field(default_factory=list)
    to_allocate: list[int] = field(default_factory=list)
    allocator: Allocator | None = None
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, list[ClaimAllocation]] = field(default_factory=dict)

    def clone(self) -> _State:
        return self


_EMPTY: Final = _State()


class DynamicResources:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.manager: Any = getattr(handle, "dra_manager", None) if handle is not None else None
        self.features: Features = getattr(self.manager, "features", None) or Features()
        self.pending: list[Coroutine[Any, Any, None]] = []
        """API work queued when the handle cannot run it (unit tests await these)."""

    def __repr__(self) -> str:
        return f"<DynamicResources {self.manager!r}>"

    def _claim(self, namespace: str, name: str) -> Any | None:
        return self.manager.claim(namespace, name) if self.manager is not None else None

    # --- PreEnqueue -----------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.spec.resource_claims:
            return SUCCESS
        try:
            pod_claims(pod, self._claim)
        except ClaimProblem as err:
            return _unresolvable(str(err))
        return SUCCESS

    # --- PreFilter ------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        if not pod.spec.resource_claims:
            state.write(STATE_KEY, _EMPTY)
            return None, _SKIP
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = pod_claims(pod, self._claim)
        except ClaimProblem as err:
            return None, _unresolvable(str(err))
        if not claims:
            return None, _SKIP
        s.infos = [_ClaimInfo() for _ in claims]
        manager = self.manager
        for index, claim in enumerate(claims):
            allocation = claim.status.allocation
            if allocation is not None:
                if not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                    return None, _unresolvable(CLAIM_IN_USE)
                s.infos[index].available_on = allocation.node_selector
                continue
            s.to_allocate.append(index)
            if manager.has_pending_allocation(claim.metadata.uid):
                return None, _unresolvable(f"resource claim {claim_ref(claim)} is in the process of being allocated")
            status = self._check_requests(claim)
            if status is not None:
                return None, status
        if s.to_allocate:
            if manager.cel is None:
                return None, Status(Code.Error, "no CEL engine for device selectors")
            f = self.features
            index = manager.slice_index(f.partitionable_devices)
            s.allocator = Allocator(
                f, manager.allocated, manager.device_class, index, manager.cel, manager.views, manager.consumed
            )
        s.claims = claims
        return None, SUCCESS

    def _check_requests(self, claim: Any) -> Status | None:
        for request in claim.spec.devices.requests:
            if request.exactly is not None:
                status = self._check_class(request.exactly.device_class_name, request.name)
            elif request.first_available:
                if not self.features.prioritized_list:
                    return _unresolvable(
                        f"resource claim {claim_ref(claim)}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                status = None
                for sub in request.first_available:
                    status = self._check_class(sub.device_class_name, f"{request.name}/{sub.name}")
                    if status is not None:
                        break
            else:
                return _unresolvable(f"resource claim {claim_ref(claim)}, request {request.name}: unknown request type")
            if status is not None:
                return status
        return None

    def _check_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status(Code.Error, f"request {request_name}: unsupported request type")
        if self.manager.device_class(class_name) is None:
            return _unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # --- Filter ---------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return _NO_STATE
        if not s.claims:
            return SUCCESS
        node = node_info.node
        assert node is not None
        unavailable = [
            i
            for i, info in enumerate(s.infos)
            if info.available_on is not None and not node_selector_matches(info.available_on, node)
        ]
        allocations: list[ClaimAllocation] | None = None
        if s.allocator is not None:
            try:
                allocations = s.allocator.allocate(node, [s.claims[i] for i in s.to_allocate])
            except NodeAllocationError as err:
                return _unresolvable(str(err))
            except AllocationError as err:
                return Status(Code.Error, str(err))
            if allocations is None or len(allocations) != len(s.to_allocate):
                return _unresolvable(CANNOT_ALLOCATE_ALL)
        if unavailable:
            s.unavailable.update(unavailable)
            return _unresolvable(NOT_AVAILABLE_ON_NODE)
        if allocations is not None:
            s.node_allocations[node_info.name] = allocations
        return SUCCESS

    # --- PostFilter -----------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return None, _NO_STATE
        if not s.claims:
            return None, _NO_CLAIMS
        # upstream picks one at random (map order); the lowest index here, for determinism
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.metadata.uid):
                status = msgspec.structs.replace(claim.status, reserved_for=[], allocation=None, devices=[])
                cleared = msgspec.structs.replace(claim, status=status)
                self._dispatch(self._update_status(cleared), f"dra:deallocate:{claim_ref(claim)}")
                return None, Status(Code.Unschedulable, DEALLOCATION_COMPLETED)
        return None, Status(Code.Unschedulable, STILL_NOT_SCHEDULABLE)

    def _dispatch(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        """API work outside the cycle: the scheduler's ``run_async``, else ``pending`` (tests)."""
        run_async = getattr(self.handle, "run_async", None)
        if run_async is not None:
            run_async(coro, name)
        else:
            self.pending.append(coro)

    async def _update_status(self, claim: Any) -> None:
        with contextlib.suppress(ApiError):  # the next attempt sees the claim as it is
            await self.handle.client.update_status(claim)  # type: ignore[union-attr]

    # --- Reserve / Unreserve --------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if not pod.spec.resource_claims:  # the empty state's answer, without reading it
            return SUCCESS
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:  # no PreFilter ran (a framework driven by hand), as VolumeBinding
            return SUCCESS
        if not s.claims or not s.to_allocate or s.allocator is None:
            return SUCCESS
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return Status(Code.Error, "claim allocation not found for node")
        if len(allocations) != len(s.to_allocate):
            return Status(
                Code.Error,
                f"internal error, have {len(allocations)} allocations, {len(s.to_allocate)} claims to allocate, "
                f"want {len(s.to_allocate)} claims",
            )
        for index, allocation in zip(s.to_allocate, allocations, strict=True):
            result = to_allocation_result(allocation)
            s.infos[index].allocation = result
            claim = s.claims[index]
            meta = claim.metadata
            if FINALIZER not in meta.finalizers:
                meta = msgspec.structs.replace(meta, finalizers=[*meta.finalizers, FINALIZER])
            pending = msgspec.structs.replace(
                claim, metadata=meta, status=msgspec.structs.replace(claim.status, allocation=result)
            )
            self.manager.signal_pending_allocation(claim.metadata.uid, pending)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return
        for claim in s.claims:
            if self.manager.remove_pending_allocation(claim.metadata.uid):
                self.manager.assumed_restore(claim.metadata.namespace, claim.metadata.name)
            if claim.status.allocation is not None and is_reserved_for_pod(pod, claim):
                reserved = [r for r in claim.status.reserved_for if r.uid != pod.metadata.uid]
                patched = msgspec.structs.replace(
                    claim, status=msgspec.structs.replace(claim.status, reserved_for=reserved)
                )
                self._dispatch(self._update_status(patched), f"dra:unreserve:{claim_ref(claim)}")

    # --- PreBind --------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream ``PreBindPreFlight``: Skip when the pod has no claims (PreBind would do nothing)."""
        if not pod.spec.resource_claims:
            return _SKIP
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return _SKIP
        return _SKIP if not s.claims else SUCCESS

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return SUCCESS
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim):
                continue
            try:
                s.claims[index] = await self._bind_claim(s, index, pod)
            except (ApiError, _BindError) as err:
                return Status(Code.Error, str(err))
        return SUCCESS

    async def _bind_claim(self, s: _State, index: int, pod: Pod) -> Any:
        handle = self.handle
        assert handle is not None
        assert handle.client is not None
        client = handle.client
        allocation = s.infos[index].allocation
        current = [s.claims[index]]
        refresh = [False]
        modified = [False]

        async def attempt() -> Any:
            claim = current[0]
            if refresh[0]:
                try:
                    claim = await client.get("ResourceClaim", claim.metadata.name, claim.metadata.namespace)
                except ApiError as err:
                    raise _BindError(f"get updated claim {claim_ref(claim)} after conflict: {err}") from err
            refresh[0] = True
            if claim.metadata.deletion_timestamp is not None:
                raise _BindError(f"claim {claim_ref(claim)} got deleted in the meantime")
            if allocation is not None:
                if claim.status.allocation is not None:
                    raise _BindError(f"claim {claim_ref(claim)} got allocated elsewhere in the meantime")
                if FINALIZER not in claim.metadata.finalizers:
                    meta = msgspec.structs.replace(claim.metadata, finalizers=[*claim.metadata.finalizers, FINALIZER])
                    try:
                        claim = await client.update(msgspec.structs.replace(claim, metadata=meta))
                    except ApiError as err:
                        if is_conflict(err):
                            raise
                        raise _BindError(f"add finalizer to claim {claim_ref(claim)}: {err}") from err
                    current[0] = claim
                status = msgspec.structs.replace(
                    claim.status,
                    allocation=allocation,
                    reserved_for=[*claim.status.reserved_for, consumer_ref(pod)],
                )
            else:
                status = msgspec.structs.replace(
                    claim.status, reserved_for=[*claim.status.reserved_for, consumer_ref(pod)]
                )
            try:
                updated = await client.update_status(msgspec.structs.replace(claim, status=status))
            except ApiError as err:
                if is_conflict(err):
                    current[0] = claim
                    raise
                what = "add allocation and reservation to" if allocation is not None else "add reservation to"
                raise _BindError(f"{what} claim {claim_ref(claim)}: {err}") from err
            modified[0] = True
            return updated

        try:
            updated = await retry_on_conflict(DEFAULT_RETRY, attempt, clock=handle.clock, rng=handle.rng)
        finally:
            if allocation is not None:
                self.manager.remove_pending_allocation(s.claims[index].metadata.uid)
        if modified[0]:
            self.manager.assume_after_api_call(updated)
        return updated

    # --- events ---------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ResourceClaim, add_update), self.is_schedulable_after_claim_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice, add_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        try:
            claims = pod_claims(pod, self._claim)
        except ClaimProblem:
            return QueueingHint.QueueSkip
        if old is not None and old.status.allocation is not None and new.status.allocation is None:
            return QueueingHint.Queue  # deallocated: devices became free
        if not any(c.metadata.uid == new.metadata.uid for c in claims):
            return QueueingHint.QueueSkip
        if old is None:
            return QueueingHint.Queue
        if old.status == new.status:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if pod.metadata.uid != new.metadata.uid:
            return QueueingHint.QueueSkip
        try:
            pod_claims(new, self._claim)
        except ClaimProblem:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


class _BindError(Exception):
    pass
