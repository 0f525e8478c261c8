"""The structured-parameters allocator (upstream ``dynamic-resource-allocation/structured``,
``internal/stable/allocator_stable.go``, v1.34): which devices of which pools satisfy a pod's
unallocated claims on one node.

``Allocator`` is built once per scheduling cycle (upstream ``NewAllocator``) from the feature
gates, the devices already allocated or in flight, the device classes, the slices and the CEL
backend; ``allocate(node, claims)`` is upstream ``Allocate``, called per node from Filter (and
by anything else simulating a node: it reads nothing but its arguments).

The search is upstream's, step for step, so that the devices chosen are upstream's:

==================  =========================================================================
step                rule
==================  =========================================================================
validate            per request (or per ``firstAvailable`` sub-request): selectors must be CEL,
                    admin access needs its gate, the class must exist, ``ExactCount`` uses
                    ``count``, ``All`` collects every selectable device up front (an incomplete
                    or invalid pool is then an error); more than 32 devices per claim → error
allocate_one        depth first: claim by claim, request by request, device slot by slot;
                    a sub-request list tries its entries in order and keeps the first that
                    leads to a full solution; for a slot, pools in (driver, pool) order, their
                    slices by name, devices in slice order: not in use (admin access: not
                    already in this claim), selectable (class then request selectors, cached
                    per device and request), counters (partitionable devices), taints (device
                    taints gate), constraints; then recurse, undoing on failure
first solution      wins (no scoring); results carry class configs once per class, then claim
                    configs, ``requests`` dropped when a config covers every request
node selector       the first device from a node-local slice pins the claim to that node
                    (``metadata.name`` matchFields); otherwise the slices' selectors' terms
                    merged; none → the claim is usable on every node
no solution         ``None``; if some pool was invalid, ``NodeAllocationError`` ("invalid resource
                    pools were encountered")
==================  =========================================================================

Behind DRAConsumableCapacity (alpha in v1.34; ``capacity``): a device with
``allowMultipleAllocations`` is not taken by one allocation but shares its capacities
(``capacity.CapacityTracker``; a request picks such a device once), each share with a
``shareID`` and its ``consumedCapacity``; ``distinctAttribute`` constraints. With the gate off
a request for capacity is an ``AllocationError`` naming it. Share IDs are upstream's random
UIDs; here a UUID derived from the claim's uid, the device and the slot, so runs repeat.
Binding conditions (alpha) are not modelled: devices with them are skipped, as upstream with
the gate off.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .allocator_pools import Pool, SliceIndex, node_matches
from .allocator_result import build_results
from .allocator_types import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    ClaimAllocation,
    DeviceID,
    Features,
    NodeAllocationError,
    RequestAccessor,
    SelectorBackend,
    claim_ref,
)
from .capacity import CapacityTracker, exclusive_fits
from .constraints import Constraint, DistinctAttributeConstraint, MatchAttributeConstraint
from .counters import CounterTracker

__all__ = ["Allocator"]


class _Stop(Exception):
    """Upstream ``errStop``."""


class _MaxSizeExceeded(Exception):
    """Upstream ``errAllocationResultMaxSizeExceeded``."""


@dataclass(slots=True)
class _RequestData:
    request: RequestAccessor
    parent: RequestAccessor | None
    klass: Any
    num_devices: int = 0
    selected_sub: int = 0
    all_devices: list[tuple[DeviceID, Any, Any, Pool]] = field(default_factory=list)

    def name(self) -> str:
        if self.parent is not None:
            return f"{self.parent.name}/{self.request.name}"
        return self.request.name


@dataclass(slots=True)
class _Picked:
    request: str
    parent: str
    id: DeviceID
    device: Any
    slice: Any
    admin_access: bool | None
    consumed: dict[str, int] | None = None
    key: tuple[int, int, int] = (0, 0, 0)


class Allocator:
    """Upstream ``stable.Allocator``: reusable for every node of one cycle."""

    def __init__(
        self,
        features: Features,
        allocated: Collection[DeviceID],
        get_class: Callable[[str], Any],
        slices: SliceIndex | Sequence[Any],
        cel: SelectorBackend,
        views: dict[int, Any] | None = None,
        consumed: Mapping[DeviceID, Mapping[str, int]] | None = None,
    ) -> None:
        """``views``: a cache of devices' CEL views to share between allocators over the same
        slices (the scheduler keeps one per slice index); by default this allocator's own.
        ``consumed``: what earlier shares of shared devices consume (milli per capacity)."""
        self.consumed: Mapping[DeviceID, Mapping[str, int]] = consumed if consumed is not None else {}
        self.features = features
        self.allocated = allocated
        self.get_class = get_class
        self.index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices, features.partitionable_devices)
        self.cel = cel
        self._views: dict[int, Any] = views if views is not None else {}
        self.num_allocate_one = 0

    def __repr__(self) -> str:
        return f"<Allocator {self.index!r} allocated={len(self.allocated)}>"

    def view(self, driver: str, device: Any) -> Any:
        key = id(device)
        v = self._views.get(key)
        if v is None:
            v = self._views[key] = (self.cel.view(driver, device), device)
        return v[0]

    def allocate(self, node: Any, claims: Sequence[Any]) -> list[ClaimAllocation] | None:
        """Upstream ``Allocate``: one result per claim, ``None`` when they do not fit here.
        Raises ``AllocationError`` for bad input, ``NodeAllocationError`` for this node only."""
        run = _Run(self, node, list(claims))
        return run.run()


class _Run:
    """Upstream's per-call ``allocator`` (one node, one set of claims)."""

    def __init__(self, owner: Allocator, node: Any, claims: list[Any]) -> None:
        self.a = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.constraints: list[list[Constraint]] = []
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.result: list[list[_Picked]] = [[] for _ in claims]
        self.counters = CounterTracker(owner.allocated)
        self.capacity = CapacityTracker(owner.consumed)

    # --- setup --------------------------------------------------------------------------

    def run(self) -> list[ClaimAllocation] | None:
        self.pools = self.a.index.pools(self.node)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.spec.devices.requests):
                subs = request.first_available or ()
                if subs and not self.features.prioritized_list:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                if subs:
                    parent = _ParentAccessor(request.name)
                    least = None
                    for si, sub in enumerate(subs):
                        rd = self._validate(RequestAccessor.of_sub_request(sub), parent, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                else:
                    rd = self._validate(RequestAccessor.of_request(request), None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim_ref(claim)}: number of requested devices {min_devices} exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[Constraint] = []
            for i, c in enumerate(claim.spec.devices.constraints or ()):
                if c.match_attribute:
                    cons.append(MatchAttributeConstraint(c.requests or (), c.match_attribute))
                elif self.features.consumable_capacity and getattr(c, "distinct_attribute", None):
                    cons.append(DistinctAttributeConstraint(c.requests or (), c.distinct_attribute))
                else:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(cons)
        try:
            done = self.allocate_one(0, 0, 0, 0, False)
        except _Stop:
            return None
        if not done:
            if any(p.is_invalid for p in self.pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return build_results(self)

    def _validate(self, request: RequestAccessor, parent: Any, key: tuple[int, int, int]) -> _RequestData:
        claim = self.claims[key[0]]
        for i, selector in enumerate(request.selectors):
            if selector.cel is None:
                raise AllocationError(
                    f"claim {claim_ref(claim)}, request {request.name}, selector #{i}: CEL expression empty "
                    "(unsupported selector type?)"
                )
        if not self.features.admin_access and request.has_admin_access:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name}: admin access is requested, "
                "but the feature is disabled"
            )
        if request.capacity is not None and not self.features.consumable_capacity:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name}: has capacity requests, "
                "but the DRAConsumableCapacity feature is disabled"
            )
        if not request.device_class_name:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name}: missing device class name "
                "(unsupported request type?)"
            )
        klass = self.a.get_class(request.device_class_name)
        if klass is None:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name}: could not retrieve device class "
                f'{request.device_class_name}: deviceclass.resource.k8s.io "{request.device_class_name}" not found'
            )
        rd = _RequestData(request, parent, klass)
        if request.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            rd.num_devices = request.count
        elif request.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {request.name}: asks for all devices, but resource "
                        f"pool {pool.pool_id} is currently being updated"
                    )
                if pool.is_invalid:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {request.name}: asks for all devices, but resource "
                        f"pool {pool.pool_id} is currently invalid"
                    )
                for slc in pool.slices:
                    for device in slc.spec.devices:
                        did = DeviceID(slc.spec.driver, slc.spec.pool.name, device.name)
                        if self.is_selectable(key, rd, slc, device, did):
                            rd.all_devices.append((did, device, slc, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name}: unsupported count mode {request.allocation_mode}"
            )
        return rd

    # --- search -------------------------------------------------------------------------

    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        self.a.num_allocate_one += 1
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.devices.requests):
            try:
                return self.allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        rd = self.request_data[key]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = self.allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        request = rd.request
        do_all = request.allocation_mode == ALLOCATION_MODE_ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self.allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if do_all:
            did, device, slc, pool = rd.all_devices[di]
            undo = self.allocate_device(ci, key, did, device, slc, pool, must=True)
            if undo is None:
                return False
            try:
                done = self.allocate_one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        for pool in self.pools:
            if pool.is_incomplete or pool.is_invalid:
                continue
            for slc in pool.slices:
                for device in slc.spec.devices:
                    did = DeviceID(pool.driver, pool.pool, device.name)
                    if self._in_use(ci, key, request, did, device):
                        continue
                    if not self.is_selectable(key, rd, slc, device, did):
                        continue
                    undo = self.allocate_device(ci, key, did, device, slc, pool, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self.allocate_one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, ci: int, key: tuple[int, int, int], request: RequestAccessor, did: DeviceID, device: Any) -> bool:
        """Upstream's "in use" checks: admin access only excludes a device already in this
        claim; a shared device (consumable capacity) only one already in this request."""
        if request.admin_access:
            return ci in self.allocating.get(did, ())
        if did in self.a.allocated:
            return True
        if self.features.consumable_capacity and getattr(device, "allow_multiple_allocations", None):
            return any(p.id == did and p.key == key for p in self.result[ci])
        return bool(self.allocating.get(did))

    def is_selectable(self, key: tuple[int, int, int], rd: _RequestData, slc: Any, device: Any, did: DeviceID) -> bool:
        if not self.features.device_binding_and_status and getattr(device, "binding_conditions", None):
            return False
        mkey = (did, *key)
        cached = self.matches.get(mkey)
        if cached is not None:
            return cached
        ok = self._selectors_match(key, device, did, rd.klass, rd.klass.spec.selectors or ()) and (
            self._selectors_match(key, device, did, None, rd.request.selectors)
        )
        if ok and slc.spec.per_device_node_selection:
            ok = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
        self.matches[mkey] = ok
        return ok

    def _selectors_match(
        self, key: tuple[int, int, int], device: Any, did: DeviceID, klass: Any, selectors: Any
    ) -> bool:
        if not selectors:
            return True
        owner = f"class {klass.metadata.name}" if klass is not None else f"claim {claim_ref(self.claims[key[0]])}"
        view = None
        for i, selector in enumerate(selectors):
            try:
                compiled = self.a.cel.compile(selector.cel.expression)
            except Exception as err:
                raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {err}") from err
            if view is None:
                view = self.a.view(did.driver, device)
            try:
                matched = compiled.matches(view)
            except Exception as err:
                raise AllocationError(f"{owner}: selector #{i} on device {did}: CEL runtime error: {err}") from err
            if not matched:
                return False
        return True

    def allocate_device(
        self, ci: int, key: tuple[int, int, int], did: DeviceID, device: Any, slc: Any, pool: Pool, must: bool
    ) -> Callable[[], None] | None:
        """Upstream ``allocateDevice``: the undo function, or None when the device cannot go."""
        rd = self.request_data[key]
        request = rd.request
        if self._in_use(ci, key, request, did, device):
            return None
        shared = self.features.consumable_capacity and bool(getattr(device, "allow_multiple_allocations", None))
        if request.capacity is not None and not shared and not exclusive_fits(device, did.driver, request.capacity):
            return None
        consumes = getattr(device, "consumes_counters", None)
        if consumes and not self.features.partitionable_devices:
            return None
        if consumes and not self.counters.take(pool, device):
            return None
        if rd.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = rd.parent.name, request.name
        if self.features.device_taints and _taint_prevents(device, request):
            if consumes:
                self.counters.give_back(pool, device)
            return None
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, device, did):
                if must:
                    raise AllocationError(
                        f"claim {claim_ref(self.claims[ci])}, request {request.name}: cannot add device {did} "
                        "because a claim constraint would not be satisfied"
                    )
                for earlier in cons[:i]:
                    earlier.remove(base, sub, device, did)
                if consumes:
                    self.counters.give_back(pool, device)
                return None
        consumed = self.capacity.take(did, device, request.capacity) if shared else None
        if shared and consumed is None:
            for c in cons:
                c.remove(base, sub, device, did)
            if consumes:
                self.counters.give_back(pool, device)
            return None
        self.allocating.setdefault(did, set()).add(ci)
        picked = self.result[ci]
        before = len(picked)
        picked.append(
            _Picked(
                request.name,
                rd.parent.name if rd.parent else "",
                did,
                device,
                slc,
                True if request.admin_access else None,
                consumed,
                key,
            )
        )

        def undo() -> None:
            for c in cons:
                c.remove(base, sub, device, did)
            self.allocating[did].discard(ci)
            if consumed is not None:
                self.capacity.give_back(did, consumed)
            if consumes:
                self.counters.give_back(pool, device)
            del picked[before:]

        return undo


@dataclass(frozen=True, slots=True)
class _ParentAccessor:
    name: str


def tolerates_taint(toleration: Any, taint: Any) -> bool:
    """Upstream ``resourceclaim.ToleratesTaint`` (a DeviceToleration against a DeviceTaint)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", None, "Equal"):
        return (toleration.value or "") == (taint.value or "")
    return bool(toleration.operator == "Exists")


def _taint_prevents(device: Any, request: RequestAccessor) -> bool:
    """Upstream ``taintPreventsAllocation``: only NoSchedule and NoExecute taints count."""
    for taint in getattr(device, "taints", None) or ():
        if taint.effect in ("NoExecute", "NoSchedule") and not any(
            tolerates_taint(t, taint) for t in request.tolerations
        ):
            return True
    return False
