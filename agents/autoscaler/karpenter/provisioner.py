"""``controller:karpenter``: Karpenter's provisioner and NodeClaim lifecycle (kubernetes-sigs/karpenter
v1.9.1 ``pkg/controllers/provisioning``, ``pkg/controllers/nodeclaim/lifecycle``).

The batcher (``provisioning/batcher.go``): a pending pod (``PodScheduled=False``,
``Unschedulable``, not bound, not terminal, not a DaemonSet's) opens a batch; the batch closes
once no new pod arrived for ``BATCH_IDLE`` (1s) or ``BATCH_MAX`` (10s) after it opened
(``--batch-idle-duration``, ``--batch-max-duration``). Pods waiting for a NodeClaim already
launched for them are not pending again (upstream's in-flight capacity, ``state.Cluster``).

Then ``scheduling.Scheduler`` packs the batch (see there) and each new NodeClaim is created:
named ``<nodepool>-<5 random characters>`` from the agent's seeded stream, the NodePool's
template labels and annotations plus ``karpenter.sh/nodepool``, the instance type, zone and
capacity type of its cheapest option, ``spec`` from the template (requirements plus
``node.kubernetes.io/instance-type In`` the remaining options), ``resources.requests`` the
pods'. Launch (``lifecycle/launch.go``) asks the cloud for the node and sets ``providerID``,
``capacity``, ``allocatable`` and ``Launched=True``; when the node registers
(``registration.go``), ``Registered=True`` and ``status.nodeName``; when it is Ready
(``initialization.go``), ``Initialized=True`` and ``Ready=True``. The NodePool's
``status.resources``/``status.nodes`` count its NodeClaims' capacity (the counter controller).
"""

from __future__ import annotations

import asyncio
import string
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from msgspec.structs import replace

from agents.autoscaler.karpenter import events as ev
from agents.autoscaler.karpenter.daemonoverhead import daemon_pods, reservations
from agents.autoscaler.karpenter.disruption import Disruption
from agents.autoscaler.karpenter.events import Recorder
from agents.autoscaler.karpenter.lifecycle import UNREGISTERED_TAINT, launch_conditions, reconcile, state_taints
from agents.autoscaler.karpenter.nodepoolhash import (
    NODEPOOL_HASH,
    NODEPOOL_HASH_VERSION,
    NODEPOOL_HASH_VERSION_KEY,
    template_hash,
)
from agents.autoscaler.karpenter.nodepoolstatus import is_managed, nodepool_status, provisions
from agents.autoscaler.karpenter.scheduling import (
    NewNodeClaim,
    Scheduler,
    claim_usage,
    inflight_node,
    launched,
    pod_matches,
    template_node,
    template_of,
    tolerates,
    with_hostname,
)
from agents.autoscaler.karpenter.volumetopology import provisionable as _unschedulable
from agents.autoscaler.karpenter.volumetopology import valid_pods
from emulator.base.api.core import Node, NodeStatus, Pod
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.karpenter import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    NodeClaim,
    NodeClaimResources,
    NodeClaimSpec,
    NodeClaimStatus,
    NodeSelectorRequirementWithMinValues,
)
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.quantity import Quantity, parse_quantity
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock

__all__ = ["BATCH_IDLE", "BATCH_MAX", "COUNTERS", "PRICE_LABEL", "Karpenter", "KarpenterCloud"]

BATCH_IDLE: Final = 1.0
BATCH_MAX: Final = 10.0
PRICE_LABEL: Final = "eks-node-viewer/instance-price"
"""The kwok provider's price label on every node it creates (``NodeViewerLabelKey``)."""
COUNTERS: Final = ("scaleUps", "scaleDowns", "nodesCreated", "nodesRemoved", "podsDisrupted")
_SUFFIX: Final = string.ascii_lowercase + string.digits


class KarpenterCloud(Protocol):
    """What the agent needs of the (simulated kwok) cloud."""

    counters: dict[str, int]

    def instance_types(self) -> Sequence[Any]:
        """Objects with ``name``, ``offerings`` (``price``, ``available``, ``requirements``),
        ``labels()``, ``capacity()`` and ``allocatable()`` (ResourceLists)."""
        ...

    def create(self, node: Node) -> None:
        """Launch ``node``: it registers (and its kubelet starts) after the provision delay."""
        ...

    async def delete(self, name: str) -> None:
        """Terminate the instance of node ``name`` (its kubelet stops, the Node goes)."""
        ...


def _text(name: str, amount: int) -> Quantity:
    return parse_quantity(f"{amount}m" if name == "cpu" else str(amount))


class Karpenter:
    """The agent (module docstring); ``simulator`` makes its ``SchedulingSimulator``."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        rng: Any,
        cloud: KarpenterCloud,
        simulator: Callable[..., Any],
        *,
        spot_to_spot: bool = False,
    ) -> None:
        self.client, self.clock, self.rng, self.cloud = client, clock, rng, cloud
        self.pods = Informer(client, "Pod")
        self.nodes = Informer(client, "Node")
        self.pools = Informer(client, "NodePool")
        self.claims = Informer(client, "NodeClaim")
        self.namespaces = Informer(client, "Namespace")
        self.pdbs = Informer(client, "PodDisruptionBudget")
        self.sim = simulator(namespaces=self.namespaces.objects, volumes_client=client)  # VolumeTopology's reads
        self.daemonsets = Informer(self.sim.volumes.client, "DaemonSet")  # the latency-free aux client: traces hold
        self.counters = cloud.counters
        for name in COUNTERS:
            self.counters.setdefault(name, 0)
        self.spot_to_spot = spot_to_spot
        """The ``SpotToSpotConsolidation`` feature gate (off by default, as upstream)."""
        self.recorder = Recorder(client, clock)
        self.decisions: dict[str, int] = {}
        """``decision/reason`` -> commands started (``DecisionsPerformedTotal``)."""
        self.nominations: dict[str, float] = {}
        """Existing node -> until when a provisioning pass nominated it for a pending pod."""
        self._sim_names = 0
        self._pool_status_keys: dict[str, tuple[Any, ...]] = {}
        self._registrations: set[str] = set()
        """UIDs of NodePools a NodeClaim registered for since their status was last computed."""
        self.sim_generation = 0
        """Bumped when the provisioner resets the shared simulator."""
        self.nominated: dict[str, str] = {}
        """Pod uid -> the NodeClaim launched for it (until the claim's node is initialized)."""
        self.batch: dict[str, None] = {}
        self.opened = self.last_added = 0.0
        self.batches = 0
        self._unschedulable_at: tuple[int | None, list[Pod]] = (None, [])
        self.ignored: dict[str, tuple[Pod, str]] = {}  # pod uid -> (pod, why Validate ignores it)
        self.disruption = Disruption(self)
        self.disruption.disrupted = getattr(cloud, "disrupted", self.disruption.disrupted)

    def report(self) -> dict[str, Any]:
        return {
            "agent": self.client.name,
            "batches": self.batches,
            **self.counters,
            "simulatorChecks": self.sim.checks,
            "disrupted": dict(sorted(self.disruption.disrupted.items())),
            "decisions": dict(sorted(self.decisions.items())),
            "events": dict(sorted(self.recorder.published.items())),
        }

    # --- what the disruption controller asks of the provisioner -------------------------------

    def nominated_node(self, name: str, now: float) -> bool:
        return self.nominations.get(name, -1.0) > now

    def pending_pods(self) -> list[Pod]:
        """``GetPendingPods``: every provisionable pending pod (``Validate``'s PVC checks passed)."""
        return valid_pods(list(self._unschedulable_pods()), self.sim.volumes, self.ignored)

    def _unschedulable_pods(self) -> list[Pod]:
        """The ``_unschedulable`` pods by namespace and name, kept while no pod event arrives."""
        d = self.disruption
        key = d.pod_changes if d.watching else None
        if key is None or self._unschedulable_at[0] != key:
            by_name = sorted(self.pods.objects(), key=lambda p: (p.metadata.namespace, p.metadata.name))
            self._unschedulable_at = (key, [p for p in by_name if _unschedulable(p)])
        return self._unschedulable_at[1]

    def daemon_pods(self) -> list[Pod]:
        return daemon_pods(self.daemonsets.objects(), self.pods.objects())  # getDaemonSetPods

    def reservations(self, nodes: list[Node], bound: list[Pod], daemons: list[Pod] | None = None) -> list[Pod]:
        """The daemon pods still to come on ``nodes`` (cluster-state views), as stand-ins
        bound there (``daemonoverhead.reservations``)."""
        daemons = self.daemon_pods() if daemons is None else daemons
        return reservations(nodes, bound, daemons, lambda n: n.spec.taints, tolerates, pod_matches)

    def live_pools(self) -> list[Any]:
        return [p for p in self.pools.objects() if provisions(p)]

    def sim_name(self, pool: str) -> str:
        self._sim_names += 1
        return f"{pool}-simulated-{self._sim_names}"

    def state_nodes(self, exclude: set[str] | frozenset[str] = frozenset()) -> tuple[list[Node], set[str]]:
        """The active nodes and in-flight NodeClaims (as nodes), and which of them are not initialized."""
        initialized = {
            c.status.node_name for c in self.claims.objects()
            if c.status.node_name and any(k.type == "Initialized" and k.status == "True" for k in c.status.conditions)
        }  # fmt: skip
        nodes = sorted(
            (
                n
                for n in self.nodes.objects()
                if n.metadata.deletion_timestamp is None and n.metadata.name not in exclude
            ),
            key=lambda n: n.metadata.name,
        )
        nodes = self.state_view(nodes)
        known = {n.metadata.name for n in self.nodes.objects()}
        inflight = [
            c for c in sorted(self.claims.objects(), key=lambda c: c.metadata.name)
            if c.status.node_name not in known and c.status.capacity and c.metadata.deletion_timestamp is None
        ]  # fmt: skip
        managed = {c.status.node_name for c in self.claims.objects() if c.status.node_name}
        waiting = {n.metadata.name for n in nodes if n.metadata.name in managed and n.metadata.name not in initialized}
        waiting |= {c.metadata.name for c in inflight}
        return [*nodes, *(inflight_node(c) for c in inflight)], waiting

    def state_view(self, nodes: list[Node]) -> list[Node]:
        """The nodes with the taints cluster state gives them (``lifecycle.state_taints``:
        a NodeClaim's node not yet registered or initialized)."""
        out = []
        for n in nodes:
            claim = self.claims.get(n.metadata.name, "")
            taints = state_taints(n, claim) if claim is not None else n.spec.taints
            out.append(n if taints is n.spec.taints else replace(n, spec=replace(n.spec, taints=taints)))
        return out

    def usage(self, exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, dict[str, int]]:
        return self._usage(exclude)

    async def launch(self, new: NewNodeClaim, reason: str) -> str | None:
        """``CreateNodeClaims`` for a disruption replacement: a fresh name, then ``_create``."""
        named = NewNodeClaim(
            new.pool, self._name(new.pool.metadata.name), new.options, new.pods, new.requests, new.spot_only
        )
        return await self._create(named)

    async def run(self) -> None:
        informers = (self.pods, self.nodes, self.pools, self.claims, self.namespaces, self.pdbs, self.daemonsets)
        async with asyncio.TaskGroup() as tg:
            for inf in informers:
                tg.create_task(inf.run(), name=f"{self.client.name}:informer:{inf.kind.lower()}s")
            self.sim.volumes.start(tg, self.client.name)
            for inf in informers:
                await inf.synced.wait()
            await self.sim.volumes.synced()
            tg.create_task(self.disruption.run(), name=f"{self.client.name}:disruption")
            while True:
                await self.tick()
                await self.clock.sleep(BATCH_IDLE / 2)

    def _pending(self) -> list[Pod]:
        pods = self.pending_pods()
        if not pods or not self.nominated:
            return list(pods)
        initialized = {
            c.metadata.name
            for c in self.claims.objects()
            if any(k.type == "Initialized" and k.status == "True" for k in c.status.conditions)
        }
        live = {c.metadata.name for c in self.claims.objects()}
        out = []
        for p in pods:
            claim = self.nominated.get(p.metadata.uid)
            if claim is not None and claim in live and claim not in initialized:
                continue
            out.append(p)
        return out

    async def tick(self) -> None:
        """One pass: the batcher, a provisioning when a batch closes, the NodeClaims' lifecycle."""
        now = self.clock.now()
        pending = self._pending()
        await self.recorder.publish(*(ev.pod_failed_to_schedule(p, why) for p, why in self.ignored.values()))
        self.ignored.clear()
        new = [p.metadata.uid for p in pending if p.metadata.uid not in self.batch]
        if new:
            if not self.batch:
                self.opened = now
            self.last_added = now
            self.batch.update(dict.fromkeys(new))
        if self.batch and (now - self.last_added >= BATCH_IDLE or now - self.opened >= BATCH_MAX):
            self.batch.clear()
            if pending:
                await self.provision(pending)
        await self.lifecycle()
        claims = self.disruption.track.sorted_claims()
        await self.disruption.tick(claims, {p.metadata.name: p for p in self.pools.objects()})

    def _name(self, pool: str) -> str:
        taken = {c.metadata.name for c in self.claims.objects()}
        while True:
            name = f"{pool}-" + "".join(self.rng.choice(_SUFFIX) for _ in range(5))
            if name not in taken and name not in self.nominated.values():
                return name

    def _usage(self, exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, dict[str, int]]:
        usage: dict[str, dict[str, int]] = {}
        for c in self.claims.objects():
            if c.status.node_name in exclude:
                continue
            pool, amounts = claim_usage(c)
            u = usage.setdefault(pool, {})
            for k, v in amounts.items():
                u[k] = u.get(k, 0) + v
        return usage

    async def provision(self, pods: list[Pod]) -> None:
        """``Provisioner.Schedule`` and ``CreateNodeClaims`` for one closed batch."""
        self.batches += 1
        pools = self.live_pools()
        if not pools:
            return
        nodes = sorted(
            (n for n in self.nodes.objects() if n.metadata.deletion_timestamp is None), key=lambda n: n.metadata.name
        )
        nodes = self.state_view(nodes)
        bound = [p for p in self.pods.objects() if p.spec.node_name]
        known = {n.metadata.name for n in nodes}
        inflight = [
            c
            for c in self.claims.objects()
            if c.status.node_name not in known and c.status.capacity and c.metadata.deletion_timestamp is None
        ]
        daemons = self.daemon_pods()
        everything = [*nodes, *(inflight_node(c) for c in inflight)]
        self.sim.reset(everything, [*bound, *self.reservations(everything, bound, daemons)])
        self.sim_generation += 1  # the disruption controller's base snapshot is gone
        scheduler = Scheduler(self.sim, pools, self.cloud.instance_types(), self._usage(), self._name, daemons=daemons)
        claims = scheduler.solve(pods)
        until = self.clock.now() + max(2 * BATCH_MAX, 10.0)  # nominationWindow
        for node in sorted(set(scheduler.placed.values()) & known):
            self.nominations[node] = until
        for claim in claims:
            await self._create(claim)

    async def _create(self, new: NewNodeClaim) -> str | None:
        option, names = launched(new)
        pool = new.pool
        template, spec = template_of(pool)
        labels = {
            **option.labels,  # launch.go PopulateNodeClaimDetails: the instance's labels (arch, os, ...)
            **template.metadata.labels,
            NODEPOOL_LABEL: pool.metadata.name,
            "node.kubernetes.io/instance-type": option.instance_type.name,
            CAPACITY_TYPE_LABEL: option.labels.get(CAPACITY_TYPE_LABEL, ""),
            "topology.kubernetes.io/zone": option.labels.get("topology.kubernetes.io/zone", ""),
        }
        reqs = [
            *(spec.requirements or []),
            NodeSelectorRequirementWithMinValues(key="node.kubernetes.io/instance-type", operator="In", values=names),
        ]
        if new.spot_only:
            reqs = [r for r in reqs if r.key != CAPACITY_TYPE_LABEL]
            reqs.append(NodeSelectorRequirementWithMinValues(key=CAPACITY_TYPE_LABEL, operator="In", values=["spot"]))
        annotations = {
            **template.metadata.annotations,
            NODEPOOL_HASH: template_hash(pool),
            NODEPOOL_HASH_VERSION_KEY: NODEPOOL_HASH_VERSION,
        }
        claim = NodeClaim(
            metadata=ObjectMeta(
                name=new.name,
                labels={k: v for k, v in labels.items() if v},
                annotations=annotations,
                finalizers=["karpenter.sh/termination"],
                owner_references=[  # nodeclaimtemplate.go ToNodeClaim
                    OwnerReference(
                        api_version="karpenter.sh/v1",
                        kind="NodePool",
                        name=pool.metadata.name,
                        uid=pool.metadata.uid,
                        block_owner_deletion=True,
                    )
                ],
            ),
            spec=NodeClaimSpec(
                taints=list(spec.taints),
                startup_taints=list(spec.startup_taints),
                requirements=reqs,
                resources=NodeClaimResources(requests={k: _text(k, v) for k, v in sorted(new.requests.items())}),
                node_class_ref=spec.node_class_ref,
                termination_grace_period=spec.termination_grace_period,
                expire_after=spec.expire_after,
            ),
        )
        try:
            claim = await self.client.create(claim)
        except ApiError:
            return None
        for p in new.pods:
            self.nominated[p.metadata.uid] = new.name
            await self.recorder.publish(ev.nominated(p, new.name))
        self.counters["scaleUps"] += 1
        node = with_hostname(template_node(NewNodeClaim(new.pool, new.name, [option])), new.name)
        node_labels = {**node.metadata.labels, **option.labels, **claim.metadata.labels}
        node_labels[PRICE_LABEL] = f"{option.price:f}"
        node = replace(
            node,
            metadata=replace(node.metadata, labels=node_labels),
            spec=replace(node.spec, taints=[UNREGISTERED_TAINT]),  # the kwok provider's toNode
            status=NodeStatus(capacity=option.instance_type.capacity(), allocatable=option.instance_type.allocatable()),
        )
        self.cloud.create(node)
        status = NodeClaimStatus(
            provider_id=f"kwok://{new.name}",
            capacity=option.instance_type.capacity(),
            allocatable=option.instance_type.allocatable(),
            conditions=launch_conditions(claim, self.clock.timestamp),
        )
        await self.write_status(replace(claim, status=status))
        return new.name

    async def write_status(self, claim: NodeClaim) -> bool:
        try:
            await self.client.update_status(claim)
        except (NotFound, ApiError):
            return False
        return True

    async def lifecycle(self) -> None:
        """Registration and initialization of launched NodeClaims (those ``tracking`` keeps
        open: the others would be skipped); the NodePools' counters."""
        for claim in self.disruption.track.lifecycle_claims():
            if not claim.status.provider_id or claim.metadata.deletion_timestamp is not None:
                continue
            if await reconcile(self, claim):
                # registration.go updateNodePoolRegistrationHealth: the NodePool owning it by UID
                uids = [o.uid for o in claim.metadata.owner_references if o.kind == "NodePool"]
                self._registrations.update(uids)
        await self._pool_counters()

    async def _pool_counters(self) -> None:
        """The NodePool status controllers (``nodepoolstatus``)."""
        usage = self.disruption.track.pool_usage()
        now = self.clock.timestamp()
        for pool in sorted(self.pools.objects(), key=lambda p: p.metadata.name):
            if not is_managed(pool):
                continue
            u = usage.get(pool.metadata.name, {})
            # the status only moves with the NodePool, its NodeClaims' usage and registrations
            fresh = pool.metadata.uid in self._registrations
            key = (pool.metadata.resource_version, tuple(sorted(u.items())), fresh)
            if self._pool_status_keys.get(pool.metadata.name) == key:
                continue
            resources = {k: _text(k, v) for k, v in sorted(u.items())}
            status = nodepool_status(pool, resources, u.get("nodes", 0), fresh, now)
            if status != pool.status:
                try:
                    await self.client.update_status(replace(pool, status=status))
                except ApiError:
                    continue  # upstream requeues: the key stays uncached, the next pass retries
            self._pool_status_keys[pool.metadata.name] = key
            self._registrations.discard(pool.metadata.uid)
