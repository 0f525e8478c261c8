"""A pod's ResourceClaims, prepared before its containers start and unprepared when it ends:
upstream's kubelet DRA manager (``pkg/kubelet/cm/dra/manager.go``, ``PrepareResources`` /
``UnprepareResources``), called where upstream's ``kuberuntime`` calls
``PrepareDynamicResources``: before the pod sandbox, so after the volume mounts and before the
image pulls.

For each ``spec.resourceClaims`` entry (upstream's checks, in its order and words): the claim's
name (a template's claim must be in ``status.resourceClaimStatuses``: ``pod "ns/p":
ResourceClaim not created yet``), the claim itself (``fetch ResourceClaim c:
resourceclaims.resource.k8s.io "c" not found``), that the pod controls a generated claim
(``ResourceClaim ns/c was not created for pod ns/p (pod is not owner)``), that the claim is
reserved for the pod (``pod p (<uid>) is not allowed to use ResourceClaim c (<uid>)``), that it
is allocated (``ResourceClaim c: not allocated``), and that each driver of its allocation has a
kubelet plugin registered on this node (``DRA driver d is not registered``). While one fails, the
pod waits -- watching exactly the claims it names (one field-selected watch each) and the node's
plugin registrations, no polling -- and each new failure is the Warning Event
``FailedPrepareDynamicResources`` "Failed to prepare dynamic resources: <error>" (upstream
repeats it at each pod sync; here when it changes). Then the claims not prepared yet on this
node are handed to their drivers' plugins, one ``NodePrepareResources`` call per driver
(``KubeletPlugins``: the node-local gRPC of upstream; the driver's ``prepareDelay`` is taken
there); a claim already prepared (or being prepared) for another pod of the node -- a shared
claim -- is not prepared again: the second pod waits for the call in flight.

``release(pod uid)``, when the pod's containers are gone (finished, killed, forgotten): the
claims no other pod on this node uses are handed to ``NodeUnprepareResources``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

from agents.kubelet.volumewait import Watches
from emulator.base.api.core import Pod
from emulator.base.api.resource import ResourceClaim
from emulator.base.api.resourceclaim import ApiUnsupported, ClaimNotCreated, claim_name, is_for_pod, is_reserved_for_pod
from emulator.base.client.client import Client
from emulator.base.client.kubeletplugins import ClaimRef, KubeletPlugins

__all__ = ["FAILED_PREPARE", "ClaimPreparer"]

FAILED_PREPARE: Final = "FailedPrepareDynamicResources"
"""Upstream ``events.FailedPrepareDynamicResources``."""

Event = Callable[[Pod, str, str, str], Awaitable[None]]


@dataclass(slots=True)
class _Prepared:
    ref: ClaimRef
    drivers: tuple[str, ...]
    pods: set[str] = field(default_factory=set)


class ClaimPreparer:
    """What one kubelet does about its pods' ResourceClaims."""

    def __init__(
        self, client: Client, node_name: str, event: Event, prefix: str, plugins: KubeletPlugins | None
    ) -> None:
        self._client = client
        self._node = node_name
        self._event = event
        self._prefix = prefix
        self._plugins = plugins
        self._prepared: dict[str, _Prepared] = {}
        """Claim UID → the claim prepared on this node and the pods using it."""
        self._preparing: dict[str, asyncio.Event] = {}
        """Claim UID → set once the ``NodePrepareResources`` call in flight for it returns."""
        self.waits = 0
        self.failures = 0
        self.prepare_calls = 0
        self.unprepare_calls = 0

    def __repr__(self) -> str:
        return f"<ClaimPreparer prepared={len(self._prepared)} waits={self.waits} failures={self.failures}>"

    async def _problem(self, pod: Pod, w: Watches, ready: list[ResourceClaim]) -> str:
        """'' when every claim of ``pod`` may be prepared (they are appended to ``ready``),
        else the first error, as upstream's ``PrepareResources`` returns it."""
        ns, name, uid = pod.metadata.namespace, pod.metadata.name, pod.metadata.uid
        for pod_claim in pod.spec.resource_claims:
            try:
                cname, check_owner = claim_name(pod, pod_claim)
            except (ClaimNotCreated, ApiUnsupported) as err:
                return str(err)
            if cname is None:
                continue
            claim: ResourceClaim | None = await w.get("ResourceClaim", ns, cname)
            if claim is None:
                return f'fetch ResourceClaim {cname}: resourceclaims.resource.k8s.io "{cname}" not found'
            if check_owner and (error := is_for_pod(pod, claim)):
                return error
            if not is_reserved_for_pod(pod, claim):
                return f"pod {name} ({uid}) is not allowed to use ResourceClaim {cname} ({claim.metadata.uid})"
            if claim.status.allocation is None:
                return f"ResourceClaim {cname}: not allocated"
            for driver in _drivers(claim):
                if self._plugins is None or self._plugins.get(self._node, driver) is None:
                    return f"DRA driver {driver} is not registered"
            ready.append(claim)
        return ""

    async def prepare(self, pod: Callable[[], Pod]) -> None:
        """Return once every claim of ``pod()`` is prepared on this node (module docstring)."""
        if not pod().spec.resource_claims:
            return
        self.waits += 1
        ready: list[ResourceClaim] = []
        async with asyncio.TaskGroup() as tg:
            w = Watches(self._client, tg, f"{self._prefix}:{pod().metadata.name}", role="claims")
            cancel = None if self._plugins is None else self._plugins.subscribe(self._node, w.changed.set)
            try:
                last = ""
                while True:
                    w.changed.clear()
                    ready.clear()
                    problem = await self._problem(pod(), w, ready)
                    if not problem:
                        break
                    if problem != last:
                        self.failures += 1
                        message = f"Failed to prepare dynamic resources: {problem}"
                        await self._event(pod(), "Warning", FAILED_PREPARE, message)
                    last = problem
                    await w.changed.wait()
            finally:
                if cancel is not None:
                    cancel()
                w.close()
        await self._prepare(pod().metadata.uid, ready)

    async def _prepare(self, pod_uid: str, claims: list[ResourceClaim]) -> None:
        while waits := await self._prepare_round(claims):
            for busy in waits:  # another pod's call prepares these: wait for it, then look again
                await busy.wait()
        for claim in claims:
            self._prepared[claim.metadata.uid].pods.add(pod_uid)

    async def _prepare_round(self, claims: list[ResourceClaim]) -> list[asyncio.Event]:
        """One ``NodePrepareResources`` per driver for the claims nobody prepares yet; the
        calls in flight for the others (to wait for)."""
        todo: dict[str, list[ClaimRef]] = {}
        waits: list[asyncio.Event] = []
        mine: list[ResourceClaim] = []
        for claim in claims:
            uid = claim.metadata.uid
            if uid in self._prepared:
                continue
            if (busy := self._preparing.get(uid)) is not None:
                waits.append(busy)
                continue
            self._preparing[uid] = asyncio.Event()
            mine.append(claim)
            for driver in _drivers(claim):
                todo.setdefault(driver, []).append(ClaimRef(claim.metadata.namespace, claim.metadata.name, uid))
        try:
            for driver in sorted(todo):
                plugin = None if self._plugins is None else self._plugins.get(self._node, driver)
                if plugin is not None:
                    self.prepare_calls += 1
                    await plugin.node_prepare_resources(todo[driver])
            for claim in mine:
                ref = ClaimRef(claim.metadata.namespace, claim.metadata.name, claim.metadata.uid)
                self._prepared[claim.metadata.uid] = _Prepared(ref, tuple(_drivers(claim)))
        finally:
            for claim in mine:
                self._preparing.pop(claim.metadata.uid).set()
        return waits

    def release(self, pod_uid: str) -> None:
        """The pod's containers are gone: unprepare the claims no other pod here uses."""
        if not self._prepared:
            return
        todo: dict[str, list[ClaimRef]] = {}
        for uid in sorted(self._prepared):
            entry = self._prepared[uid]
            if pod_uid not in entry.pods:
                continue
            entry.pods.discard(pod_uid)
            if not entry.pods:
                del self._prepared[uid]
                for driver in entry.drivers:
                    todo.setdefault(driver, []).append(entry.ref)
        for driver in sorted(todo):
            plugin = None if self._plugins is None else self._plugins.get(self._node, driver)
            if plugin is not None:
                self.unprepare_calls += 1
                plugin.node_unprepare_resources(todo[driver])


def _drivers(claim: ResourceClaim) -> list[str]:
    allocation = claim.status.allocation
    if allocation is None:
        return []
    return sorted({r.driver for r in allocation.devices.results})
