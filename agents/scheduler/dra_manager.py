"""The DRA objects the scheduler reads (upstream ``plugins/dynamicresources/dra_manager.go``'s
``DefaultDRAManager``, ``allocateddevices.go`` and the claim assume cache, v1.34), and the
cluster events they raise.

What this module owns:

* one informer each for ``ResourceClaim``, ``ResourceSlice`` and ``DeviceClass`` (their own
  client, as ``volume_listers``: a run without DRA objects keeps its traces), whose Add, Update
  and Delete events go to the queue as ``ClusterEvent(<resource>, <action>)``;
* the claim *assume cache*: after PreBind writes a claim, the written object is what the
  scheduler reads until the informer delivers that version or a newer one
  (``assume_after_api_call`` / ``assumed_restore``);
* *in-flight allocations* (upstream ``inFlightAllocations``): Reserve signals the claim with
  its allocation before PreBind writes it, so that the next pod's PreFilter already counts its
  devices and never hands them out twice (``signal_pending_allocation``,
  ``has_pending_allocation``, ``remove_pending_allocation``);
* ``allocated``: every device of every allocated claim — informer, assumed or in flight, the
  in-flight copy winning — except those allocated with admin access (upstream
  ``ListAllAllocatedDevices``), kept incrementally as reference counts per device; and
  ``consumed``, what the shares of shared devices consume (upstream ``GatherAllocatedState``);
* ``slice_index``: the slices grouped by node for the allocator, rebuilt only after a slice
  changed, and ``views``, the devices' CEL views built for it (devices are immutable, so a
  view serves every cycle until its slice changes).

It does not own allocation (``plugins/dynamicresources``) nor claims' lifecycle (the
resourceclaim controller).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource
from agents.scheduler.informer_group import InformerGroup
from agents.scheduler.plugins.dynamicresources import DeviceID, Features, SliceIndex
from agents.scheduler.plugins.dynamicresources.cel_backend import DraCel
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer

__all__ = ["KINDS", "DraManager", "static_dra_manager"]

KINDS: Final = (
    ("ResourceClaim", EventResource.ResourceClaim),
    ("ResourceSlice", EventResource.ResourceSlice),
    ("DeviceClass", EventResource.DeviceClass),
)

EventSink = Callable[[ClusterEvent, Any, Any], None]
Key = tuple[str, str]


def _rv(obj: Any) -> int:
    try:
        return int(obj.metadata.resource_version or 0)
    except ValueError:
        return 0


Held = tuple[tuple[DeviceID, ...], tuple[tuple[DeviceID, tuple[tuple[str, int], ...]], ...]]


def claim_devices(claim: Any) -> Held:
    """What an allocated claim holds: the devices it has to itself, and its shares of shared
    devices (consumable capacity) with what they consume. Admin-access results count for
    neither (upstream's allocated-devices tracker skips them)."""
    alloc = claim.status.allocation if claim is not None else None
    if alloc is None:
        return (), ()
    exclusive = []
    shares = []
    for r in alloc.devices.results:
        if r.admin_access:
            continue
        did = DeviceID(r.driver, r.pool, r.device)
        if r.share_id:
            shares.append((did, tuple(sorted((k, q.milli) for k, q in r.consumed_capacity.items()))))
        else:
            exclusive.append(did)
    return tuple(exclusive), tuple(shares)


class DraManager(InformerGroup):
    """The scheduler's view of claims, slices and classes (upstream ``SharedDRAManager``)."""

    def __init__(self, client: Client | None, *, features: Features | None = None, cel: Any = None) -> None:
        self.client = client
        self.features = features or Features()
        """The DRA feature gates (v1.34 defaults unless a run sets them)."""
        self.cel = cel if cel is not None else DraCel(self.features.consumable_capacity)
        """The allocator's CEL backend (``plugins.dynamicresources.SelectorBackend``): dracel's."""
        self.informers = {kind: Informer(client, kind) for kind, _ in KINDS}  # type: ignore[arg-type]
        self._sink: EventSink | None = None
        self._assumed: dict[Key, Any] = {}
        self._in_flight: dict[str, Any] = {}
        self._uid_key: dict[str, Key] = {}
        self._held: dict[str, Held] = {}
        self._count: dict[DeviceID, int] = {}
        self._consumed: dict[DeviceID, dict[str, int]] = {}
        self._index: SliceIndex | None = None
        self.views: dict[int, Any] = {}
        """Devices' CEL views for the current slice index (dropped with it)."""
        claims = self.informers["ResourceClaim"]
        claims.add_handlers(self._on_claim_add, self._on_claim_update, self._on_claim_delete)
        for kind, resource in KINDS[1:]:
            self.informers[kind].add_handlers(*self._handlers(kind, resource))

    def __repr__(self) -> str:
        sizes = " ".join(f"{k}={len(i.store)}" for k, i in self.informers.items())
        return f"<DraManager {sizes} assumed={len(self._assumed)} inFlight={len(self._in_flight)}>"

    def set_sink(self, sink: EventSink) -> None:
        self._sink = sink

    def _emit(self, event: ClusterEvent, old: Any, new: Any) -> None:
        if self._sink is not None:
            self._sink(event, old, new)

    def _handlers(
        self, kind: str, resource: EventResource
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        add = ClusterEvent(resource, ActionType.Add)
        update = ClusterEvent(resource, ActionType.Update)
        delete = ClusterEvent(resource, ActionType.Delete)
        is_slice = kind == "ResourceSlice"

        def on_add(obj: Any) -> None:
            if is_slice:
                self._index = None
            self._emit(add, None, obj)

        def on_update(old: Any, new: Any) -> None:
            if old.metadata.resource_version != new.metadata.resource_version:
                if is_slice:
                    self._index = None
                self._emit(update, old, new)

        def on_delete(obj: Any) -> None:
            if is_slice:
                self._index = None
            self._emit(delete, obj, None)

        return on_add, on_update, on_delete

    # --- claims: informer, assume cache, in-flight ----------------------------------------

    def _on_claim_add(self, obj: Any) -> None:
        self._informer_changed(obj)
        self._emit(ClusterEvent(EventResource.ResourceClaim, ActionType.Add), None, obj)

    def _on_claim_update(self, old: Any, new: Any) -> None:
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        # the event carries the assume cache's view of the old object, as upstream's
        old_view = self._assumed.get(_key(new), old)
        self._informer_changed(new)
        self._emit(ClusterEvent(EventResource.ResourceClaim, ActionType.Update), old_view, new)

    def _on_claim_delete(self, obj: Any) -> None:
        key = _key(obj)
        self._assumed.pop(key, None)
        self._uid_key.pop(obj.metadata.uid, None)
        self._refresh(obj.metadata.uid)
        self._emit(ClusterEvent(EventResource.ResourceClaim, ActionType.Delete), obj, None)

    def _informer_changed(self, obj: Any) -> None:
        key = _key(obj)
        assumed = self._assumed.get(key)
        if assumed is not None and _rv(obj) >= _rv(assumed):
            del self._assumed[key]
        self._uid_key[obj.metadata.uid] = key
        self._refresh(obj.metadata.uid)

    def claim(self, namespace: str, name: str) -> Any | None:
        """The claim as the scheduler knows it (the assumed copy if newer than the informer's)."""
        got = self._assumed.get((namespace, name))
        if got is not None:
            return got
        return self.informers["ResourceClaim"].get(name, namespace)

    def assume_after_api_call(self, claim: Any) -> None:
        """Upstream ``AssumeClaimAfterAPICall``: the written claim, unless the informer has newer."""
        key = _key(claim)
        current = self.informers["ResourceClaim"].get(claim.metadata.name, claim.metadata.namespace)
        if current is not None and _rv(current) >= _rv(claim):
            return
        self._assumed[key] = claim
        self._uid_key[claim.metadata.uid] = key
        self._refresh(claim.metadata.uid)

    def assumed_restore(self, namespace: str, name: str) -> None:
        """Upstream ``AssumedClaimRestore``: forget the assumed copy."""
        claim = self._assumed.pop((namespace, name), None)
        if claim is not None:
            self._refresh(claim.metadata.uid)

    def signal_pending_allocation(self, uid: str, claim: Any) -> None:
        self._in_flight[uid] = claim
        self._refresh(uid)

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self._in_flight

    def remove_pending_allocation(self, uid: str) -> bool:
        if self._in_flight.pop(uid, None) is None:
            return False
        self._refresh(uid)
        return True

    # --- allocated devices ----------------------------------------------------------------

    def _effective(self, uid: str) -> Any | None:
        claim = self._in_flight.get(uid)
        if claim is not None:
            return claim
        key = self._uid_key.get(uid)
        if key is None:
            return None
        got = self.claim(*key)
        return got if got is not None and got.metadata.uid == uid else None

    def _refresh(self, uid: str) -> None:
        now = claim_devices(self._effective(uid))
        before = self._held.get(uid, ((), ()))
        if now == before:
            return
        count = self._count
        for did in before[0]:
            left = count[did] - 1
            if left:
                count[did] = left
            else:
                del count[did]
        for did in now[0]:
            count[did] = count.get(did, 0) + 1
        for did, items in before[1]:
            used = self._consumed[did]
            for k, v in items:
                used[k] -= v
        for did, items in now[1]:
            used = self._consumed.setdefault(did, {})
            for k, v in items:
                used[k] = used.get(k, 0) + v
        if now[0] or now[1]:
            self._held[uid] = now
        else:
            self._held.pop(uid, None)

    @property
    def allocated(self) -> dict[DeviceID, int]:
        """Every device in use (a live mapping; membership is what counts)."""
        return self._count

    @property
    def consumed(self) -> dict[DeviceID, dict[str, int]]:
        """What the shares of each shared device consume, milli per capacity (live)."""
        return self._consumed

    # --- slices and classes ---------------------------------------------------------------

    def device_class(self, name: str) -> Any | None:
        return self.informers["DeviceClass"].get(name)

    def slices(self) -> list[Any]:
        store = self.informers["ResourceSlice"].store
        return [store[k] for k in sorted(store)]

    def slice_index(self, partitionable: bool) -> SliceIndex:
        index = self._index
        if index is None or index.partitionable != partitionable:
            index = self._index = SliceIndex(self.slices(), partitionable)
            self.views = {}
        return index

    def has_objects(self) -> bool:
        return any(i.store for i in self.informers.values())


def _key(obj: Any) -> Key:
    return (obj.metadata.namespace, obj.metadata.name)


def static_dra_manager(objects: Iterable[Any], *, features: Features | None = None, cel: Any = None) -> DraManager:
    """A ``DraManager`` over fixed objects (``explain`` and tests): nothing run."""
    manager = DraManager(None, features=features, cel=cel)
    for obj in objects:
        informer = manager.informers.get(obj.kind)
        if informer is None:
            continue
        informer.store[(obj.metadata.namespace, obj.metadata.name)] = obj
        if obj.kind == "ResourceClaim":
            manager._informer_changed(obj)
    return manager
