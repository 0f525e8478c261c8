"""``ResourceClaimController``: upstream's ``pkg/controller/resourceclaim`` (v1.34), client
``controller:resource-claim-controller``, Events as ``resource_claim``.

Work items are ``("pod", ns, name)`` and ``("claim", ns, name)``, as upstream's ``pod:`` and
``claim:`` keys.

A pod (not being deleted), for each ``spec.resourceClaims`` entry with
``resourceClaimTemplateName`` whose claim is not recorded (or no longer its own): the claim
it already owns for that entry (annotation ``resource.kubernetes.io/pod-claim-name``), else a
new one from the template -- ``generateName`` ``<pod>-<claim>-`` (``generate_name``: cut in
proportion over 57 characters), the template's labels and annotations plus the annotation,
the pod as controller (``controller``, ``blockOwnerDeletion``), the template's spec. The
names go into ``status.resourceClaimStatuses`` (one status write per sync, merged by entry
name as upstream's server-side apply of field manager ``ResourceClaimController``). A
scheduled pod's allocated claim that does not list it in ``reservedFor`` is reserved for it
(a pod bound by hand or by a scheduler unaware of DRA). A failure is the Warning Event
``FailedResourceClaimCreation`` "PodResourceClaim <entry>: <error>" on the pod, retried with
the queue's backoff.

A claim: ``reservedFor`` entries of pods that are gone (deleted, replaced by a new UID) or
done (terminal, or deleted before scheduling) are removed in one status write; when the last
goes and the claim carries ``resource.kubernetes.io/delete-protection`` (the scheduler's,
set when it allocated), ``status.allocation`` is cleared in that write and the finalizer
removed after it (upstream: deallocation is this controller's job since structured
parameters). A claim being deleted with no consumer loses its allocation and finalizer
too. A claim with no consumer generated for a pod that is done or replaced is deleted.
Deviation: a pod that is done (terminal) gets no claim made any more -- upstream's
``podNeedsWork`` only skips deleted pods, so the deletion of a finished pod's claim would queue
the pod and make the claim again, to be deleted again.

What it watches, for cost: until the first ResourceClaim or ResourceClaimTemplate, only
those two kinds through its own client (triggers); from then on the shared informers of
claims, templates and pods (the triggers closed). A run without DRA writes nothing more.
Simplification: a pod naming a template before any claim or template exists is not synced
until one does (upstream would record ``FailedResourceClaimCreation`` "resource claim
template ... not found" meanwhile).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.core import Pod, PodResourceClaimStatus
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.meta import ObjectMeta, OwnerReference, reference_to
from emulator.base.api.resource import (
    FINALIZER,
    POD_CLAIM_NAME_ANNOTATION,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from emulator.base.api.resourceclaim import (
    ApiUnsupported,
    ClaimNotCreated,
    can_be_reserved,
    claim_name,
    generate_name,
    is_for_pod,
    is_pod_done,
    is_reserved_for_pod,
    owning_pod,
    pod_claim_keys,
)
from emulator.base.client.informer import Informer

__all__ = ["COMPONENT", "FIELD_MANAGER", "NAME", "ResourceClaimController"]

NAME: Final = "resource-claim-controller"
COMPONENT: Final = "resource_claim"
FIELD_MANAGER: Final = "ResourceClaimController"
POD_CLAIM_INDEX: Final = "pod-resource-claim-index"
CLAIM_OWNER_INDEX: Final = "claim-pod-owner-index"
MAX_UID_CACHE_ENTRIES: Final = 500
STATUS_RETRIES: Final = 5

Key = tuple[str, str, str]


def _claim_owner_keys(claim: ResourceClaim) -> list[str]:
    """Upstream ``claimPodOwnerIndexFunc``: the UID of the pod controlling the claim."""
    return [
        r.uid for r in claim.metadata.owner_references if r.controller and r.api_version == "v1" and r.kind == "Pod"
    ]


def pod_needs_claims(pod: Pod, deleted: bool) -> bool:
    """Upstream ``podNeedsClaims``: False once the pod will never run (its reservations go)."""
    return not (deleted or is_pod_done(pod))


class ResourceClaimController:
    """Claims from templates, reservations, deallocation; ``await run()`` until cancelled."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.informers = ctx.informers
        self.client = ctx.client(NAME)
        self.recorder = ctx.recorder(NAME, COMPONENT)
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, self.client.name)
        self.pods: Informer | None = None
        self.claims: Informer | None = None
        self.templates: Informer | None = None
        self._triggers: list[asyncio.Task[None]] = []
        self.deleted: OrderedDict[str, None] = OrderedDict()
        """UIDs of pods seen deleted (upstream's ``uidCache``, LRU of 500)."""
        self.created: dict[tuple[str, str], ResourceClaim] = {}
        """(pod UID, entry) → the claim just created, until the claim informer has it (upstream's
        mutation cache): a pod synced again before then, its status not seen yet either, must
        not get a second claim."""
        self.counts = dict.fromkeys(("syncs", "created", "reserved", "unreserved", "deallocated", "deleted"), 0)
        self.counts["errors"] = 0

    def __repr__(self) -> str:
        return f"<ResourceClaimController {self.counts} {self.queue!r}>"

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "queue": len(self.queue)} if self.counts["syncs"] else {}

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            # the triggers through this controller's own client, not the shared one: a run
            # without claims and templates writes exactly what it wrote before
            for kind in ("ResourceClaim", "ResourceClaimTemplate"):
                trigger = Informer(self.client, kind)
                trigger.add_handlers(lambda _obj: self._activate(), None, None)
                self._triggers.append(tg.create_task(trigger.run(), name=f"{self.client.name}:{kind}"))
            self.queue.run_workers(tg, 1, self._process)

    def _activate(self) -> None:
        """The first claim or template: the shared informers of claims, templates and pods
        (the garbage collector follows the claims from then on)."""
        if self.pods is not None:
            return
        for task in self._triggers:
            task.cancel()
        self.templates = self.informers.informer("ResourceClaimTemplate")
        self.claims = self.informers.handlers(
            "ResourceClaim",
            lambda c: self._claim_changed(c, deleted=False),
            lambda _o, c: self._claim_changed(c, deleted=False),
            lambda c: self._claim_changed(c, deleted=True),
            indexers={CLAIM_OWNER_INDEX: _claim_owner_keys},
        )
        self.pods = self.informers.handlers(
            "Pod",
            lambda p: self._enqueue_pod(p, deleted=False),
            lambda _o, p: self._enqueue_pod(p, deleted=False),
            lambda p: self._enqueue_pod(p, deleted=True),
            indexers={POD_CLAIM_INDEX: pod_claim_keys},
        )

    # --- handlers (upstream enqueuePod / enqueueResourceClaim) ---------------------------

    def _enqueue_pod(self, pod: Pod, *, deleted: bool) -> None:
        if not pod.spec.resource_claims:
            return
        ns = pod.metadata.namespace
        if deleted:
            for entry in pod.spec.resource_claims:
                self.created.pop((pod.metadata.uid, entry.name), None)
            self.deleted[pod.metadata.uid] = None
            self.deleted.move_to_end(pod.metadata.uid)
            while len(self.deleted) > MAX_UID_CACHE_ENTRIES:
                self.deleted.popitem(last=False)
        if not pod_needs_claims(pod, deleted):
            for key in pod_claim_keys(pod):
                self.queue.add(("claim", ns, key.split("/", 1)[1]))
        if not deleted and self._pod_needs_work(pod):
            self.queue.add(("pod", ns, pod.metadata.name))

    def _pod_needs_work(self, pod: Pod) -> bool:
        """Upstream ``podNeedsWork``; a pod that is done needs nothing either (see ``_sync_pod``)."""
        if pod.metadata.deletion_timestamp is not None or is_pod_done(pod):
            return False
        for pod_claim in pod.spec.resource_claims:
            try:
                name, check_owner = claim_name(pod, pod_claim)
            except (ClaimNotCreated, ApiUnsupported):
                return True
            if name is None:
                return False
            assert self.claims is not None
            claim: ResourceClaim | None = self.claims.get(name, pod.metadata.namespace)
            if claim is None:  # a template's is made here; the user must create any other
                return pod_claim.resource_claim_template_name is not None
            if check_owner and is_for_pod(pod, claim):
                return False  # the other claim must go first
            if not pod.spec.node_name:
                continue
            if claim.status.allocation is not None and not is_reserved_for_pod(pod, claim) and can_be_reserved(claim):
                return True
        return False

    def _claim_changed(self, claim: ResourceClaim, *, deleted: bool) -> None:
        ns, name = claim.metadata.namespace, claim.metadata.name
        if not deleted:
            self.queue.add(("claim", ns, name))
        if self.pods is not None:
            for pod in self.pods.by_index(POD_CLAIM_INDEX, f"{ns}/{name}"):
                self._enqueue_pod(pod, deleted=False)

    # --- sync -----------------------------------------------------------------------------

    async def _process(self, key: Key) -> None:
        self.counts["syncs"] += 1
        if not await self.queue.process(key, self._sync, (ApiError,)):
            self.counts["errors"] += 1

    async def _sync(self, key: Key) -> None:
        assert self.pods is not None
        assert self.claims is not None
        assert self.templates is not None
        for informer in (self.claims, self.templates, self.pods):
            await informer.synced.wait()
        kind, ns, name = key
        if kind == "pod":
            await self._sync_pod(ns, name)
        else:
            await self._sync_claim(ns, name)

    async def _sync_pod(self, ns: str, name: str) -> None:
        assert self.pods is not None
        assert self.claims is not None
        pod: Pod | None = self.pods.get(name, ns)
        if pod is None or pod.metadata.deletion_timestamp is not None or is_pod_done(pod):
            return  # a done pod's claim, deleted below, is not made again
        new: dict[str, str] = {}
        for pod_claim in pod.spec.resource_claims:
            try:
                await self._handle_claim(pod, pod_claim, new)
            except ApiError as err:
                ref = reference_to(pod)
                await self.recorder.event(
                    ref, "Warning", "FailedResourceClaimCreation", f"PodResourceClaim {pod_claim.name}: {err}"
                )
                raise ApiError(f"pod {ns}/{name}, PodResourceClaim {pod_claim.name}: {err}") from err
        if new:
            pod = await self._record(pod, new)
        if not pod.spec.node_name:
            return  # the scheduler reserves
        for pod_claim in pod.spec.resource_claims:
            try:
                cname, check_owner = claim_name(pod, pod_claim)
            except (ClaimNotCreated, ApiUnsupported) as err:
                raise ApiError(str(err)) from None
            if cname is None:
                continue
            claim: ResourceClaim | None = self.claims.get(cname, ns)
            if claim is None:
                return
            if check_owner and (problem := is_for_pod(pod, claim)):
                raise ApiError(problem)
            if claim.status.allocation is not None and not is_reserved_for_pod(pod, claim) and can_be_reserved(claim):
                await self._reserve(pod, claim)

    async def _handle_claim(self, pod: Pod, pod_claim: Any, new: dict[str, str]) -> None:
        """Upstream ``handleClaim``."""
        assert self.claims is not None
        assert self.templates is not None
        ns = pod.metadata.namespace
        try:
            name, check_owner = claim_name(pod, pod_claim)
        except ClaimNotCreated:
            pass
        except ApiUnsupported as err:
            raise ApiError(f"checking for claim before creating it: {err}") from None
        else:
            if name is None:
                return
            existing: ResourceClaim | None = self.claims.get(name, ns)
            if existing is not None and not (check_owner and is_for_pod(pod, existing)):
                return  # already created
        template_name = pod_claim.resource_claim_template_name
        if template_name is None:
            return
        claim = self._find(pod, pod_claim.name)
        if claim is None:
            template = self.templates.get(template_name, ns)
            if template is None:
                raise NotFound(
                    f'resource claim template "{template_name}": '
                    f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
                )
            annotations = {**template.spec.metadata.annotations, POD_CLAIM_NAME_ANNOTATION: pod_claim.name}
            owner = OwnerReference(
                api_version="v1",
                kind="Pod",
                name=pod.metadata.name,
                uid=pod.metadata.uid,
                controller=True,
                block_owner_deletion=True,
            )
            generated = generate_name(pod.metadata.name, pod_claim.name)
            meta = ObjectMeta(
                generate_name=generated,
                namespace=ns,
                owner_references=[owner],
                annotations=annotations,
                labels=dict(template.spec.metadata.labels),
            )
            try:
                claim = await self.client.create(ResourceClaim(metadata=meta, spec=template.spec.spec))
            except ApiError as err:
                raise ApiError(f"create ResourceClaim {generated}: {err}") from err
            self.counts["created"] += 1
            self.created[(pod.metadata.uid, pod_claim.name)] = claim
        new[pod_claim.name] = claim.metadata.name

    def _find(self, pod: Pod, entry: str) -> ResourceClaim | None:
        """Upstream ``findPodResourceClaim``: a claim the pod owns, made for ``entry``."""
        assert self.claims is not None
        for claim in self.claims.by_index(CLAIM_OWNER_INDEX, pod.metadata.uid):
            if claim.metadata.annotations.get(POD_CLAIM_NAME_ANNOTATION) == entry:
                return claim  # type: ignore[no-any-return]
        made = self.created.get((pod.metadata.uid, entry))
        if made is None:
            return None
        if self.claims.get(made.metadata.name, made.metadata.namespace) is None:
            return made  # created, not seen by the informer yet
        del self.created[(pod.metadata.uid, entry)]  # seen: the informer answers from now on
        return None

    async def _record(self, pod: Pod, new: dict[str, str]) -> Pod:
        """``status.resourceClaimStatuses`` with ``new``'s entries set (upstream's apply with
        force: entries keyed by name, others kept); a conflict re-reads the pod."""
        current = pod
        for attempt in range(STATUS_RETRIES):
            kept = [s for s in current.status.resource_claim_statuses if s.name not in new]
            added = [PodResourceClaimStatus(name=n, resource_claim_name=c) for n, c in sorted(new.items())]
            status = replace(current.status, resource_claim_statuses=[*kept, *added])
            try:
                written: Pod = await self.client.update_status(replace(current, status=status))
            except Conflict:
                if attempt == STATUS_RETRIES - 1:
                    raise
                current = await self.client.get("Pod", pod.metadata.name, pod.metadata.namespace)
                continue
            return written  # ``created`` keeps the claims until the claim informer has them
        raise AssertionError("unreachable")

    async def _reserve(self, pod: Pod, claim: ResourceClaim) -> None:
        """Upstream ``reserveForPod``."""
        ref = ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name, uid=pod.metadata.uid)
        status = replace(claim.status, reserved_for=[*claim.status.reserved_for, ref])
        try:
            await self.client.update_status(replace(claim, status=status))
        except ApiError as err:
            raise ApiError(f"reserve claim {claim.metadata.namespace}/{claim.metadata.name} for pod: {err}") from err
        self.counts["reserved"] += 1

    async def _sync_claim(self, ns: str, name: str) -> None:
        """Upstream ``syncClaim``."""
        assert self.claims is not None
        claim: ResourceClaim | None = self.claims.get(name, ns)
        if claim is None:
            return
        valid = [r for r in claim.status.reserved_for if await self._keep(claim, r)]
        protected = FINALIZER in claim.metadata.finalizers
        if len(valid) < len(claim.status.reserved_for):
            status = replace(claim.status, reserved_for=valid)
            if not valid and protected:
                status = replace(status, allocation=None)  # allocated by the scheduler: deallocate
            claim = await self.client.update_status(replace(claim, status=status))
            self.counts["unreserved"] += 1
            if not valid and protected:
                self.counts["deallocated"] += 1
            if FINALIZER in claim.metadata.finalizers and claim.status.allocation is None:
                claim = await self._drop_finalizer(claim)
        elif protected and claim.metadata.deletion_timestamp is not None and not valid:
            if claim.status.allocation is not None:
                claim = await self.client.update_status(replace(claim, status=replace(claim.status, allocation=None)))
                self.counts["deallocated"] += 1
            claim = await self._drop_finalizer(claim)
        if valid:
            return
        pod_name, pod_uid = owning_pod(claim)
        if not pod_name or self.pods is None:
            return
        pod: Pod | None = self.pods.get(pod_name, ns)
        if pod is None:
            return  # not known yet, or gone: the garbage collector's
        if pod.metadata.uid != pod_uid or is_pod_done(pod):
            try:
                await self.client.delete("ResourceClaim", claim.metadata.name, ns)
            except NotFound:
                return
            except ApiError as err:
                raise ApiError(f"delete claim: {err}") from err
            self.counts["deleted"] += 1

    async def _drop_finalizer(self, claim: ResourceClaim) -> ResourceClaim:
        finalizers = [f for f in claim.metadata.finalizers if f != FINALIZER]
        updated: ResourceClaim = await self.client.update(
            replace(claim, metadata=replace(claim.metadata, finalizers=finalizers))
        )
        return updated

    async def _keep(self, claim: ResourceClaim, ref: ResourceClaimConsumerReference) -> bool:
        """Whether a ``reservedFor`` entry stands: its pod is known and will still run."""
        if ref.api_group or ref.resource != "pods":
            raise ApiError(f"unsupported ReservedFor entry: {ref}")
        if ref.uid in self.deleted:
            return False
        pod: Pod | None = None if self.pods is None else self.pods.get(ref.name, claim.metadata.namespace)
        if pod is None:
            # maybe not in the cache yet: removing a pod the scheduler is binding would be bad
            try:
                pod = await self.client.get("Pod", ref.name, claim.metadata.namespace)
            except NotFound:
                return False
            assert pod is not None
            return pod.metadata.uid == ref.uid
        if pod.metadata.uid != ref.uid:
            return False
        return not is_pod_done(pod)
