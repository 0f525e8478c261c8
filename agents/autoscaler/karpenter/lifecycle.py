"""The NodeClaim lifecycle controller of kubernetes-sigs/karpenter v1.9.1
(``pkg/controllers/nodeclaim/lifecycle``): after launch, registration, initialization and
liveness over one NodeClaim, its status written once when any of them changed it
(``controller.go``), each condition through operatorpkg's condition set (``conditions``).

- *Launch* (``launch.go``): ``Launched=True`` at creation (the provisioner's ``_create``); the
  NodeClaim's other conditions are then ``For``'s Unknown ones, dated at its creation.
- *Registration* (``registration.go``): while ``Registered`` is Unknown, no Node (the kwok cloud
  has not created it yet) gives ``Registered=Unknown`` (``NodeNotFound``, "Node not registered
  with cluster"). Once the Node exists, ``syncNode`` updates it (optimistic lock: a conflict
  retries at the next pass): the NodeClaim's taints and startup taints merged in (unless the
  Node is labelled ``karpenter.sh/do-not-sync-taints=true``), the NodeClaim's annotations and
  labels assigned, ``karpenter.sh/registered=true``, the ``karpenter.sh/unregistered:NoExecute``
  taint the kwok cloud created it with removed. Then ``Registered=True`` and ``status.nodeName``.
- *Initialization* (``initialization.go``): once registered, the Node as the informer sees it
  (upstream reads its cache too, so the Node just updated may still look unregistered): missing
  (``NodeNotFound``), not Ready (``NodeNotReady``, "Node status is NotReady"), a startup taint
  left (``StartupTaintsExist``), a known ephemeral taint left (``KnownEphemeralTaintsExist``:
  ``node.kubernetes.io/not-ready`` NoSchedule/NoExecute, ``unreachable`` NoSchedule, the
  external cloud provider's ``uninitialized``, ``karpenter.sh/unregistered``), a requested
  resource with no allocatable (``ResourceNotRegistered``) keep ``Initialized=Unknown`` with
  upstream's message; else the Node is labelled ``karpenter.sh/initialized=true`` and
  ``Initialized=True``.
- *Liveness* (``liveness.go``): a NodeClaim not registered 15 minutes after ``Registered`` last
  changed status (its creation: Unknown throughout) is deleted, ``registration_timeout`` in the
  disrupted counters.

Not modelled: the Node's ``karpenter.sh/termination`` finalizer and owner reference (node
termination on a Node's own deletion is not ported), the NodePool's
``NodeRegistrationHealthy=False`` after failed registrations (``nodepoolhealth``), the 1 s
sleep after each patch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.karpenter.conditions import ConditionSet, nodeclaim_conditions
from emulator.base.api.core import Node, Taint
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.karpenter import NodeClaim
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "INITIALIZED_LABEL",
    "KNOWN_EPHEMERAL_TAINTS",
    "REGISTERED_LABEL",
    "REGISTRATION_TIMEOUT",
    "UNREGISTERED_TAINT",
    "launch_conditions",
    "reconcile",
    "state_taints",
    "sync_node",
]

UNREGISTERED_TAINT: Final = Taint(key="karpenter.sh/unregistered", effect="NoExecute")
REGISTERED_LABEL: Final = "karpenter.sh/registered"
INITIALIZED_LABEL: Final = "karpenter.sh/initialized"
DO_NOT_SYNC_TAINTS_LABEL: Final = "karpenter.sh/do-not-sync-taints"
KNOWN_EPHEMERAL_TAINTS: Final = (
    Taint(key="node.kubernetes.io/not-ready", effect="NoSchedule"),
    Taint(key="node.kubernetes.io/not-ready", effect="NoExecute"),
    Taint(key="node.kubernetes.io/unreachable", effect="NoSchedule"),
    Taint(key="node.cloudprovider.kubernetes.io/uninitialized", effect="NoSchedule", value="true"),
    UNREGISTERED_TAINT,
)
REGISTRATION_TIMEOUT: Final = 15 * 60.0
NOT_FOUND: Final = ("NodeNotFound", "Node not registered with cluster")


def _match(a: Taint, b: Taint) -> bool:
    """``Taint.MatchTaint``: the same key and effect."""
    return a.key == b.key and a.effect == b.effect


def _merge(taints: Sequence[Taint], more: Sequence[Taint]) -> list[Taint]:
    """``Taints.Merge``: ``more``'s taints that match none already there, appended."""
    out = list(taints)
    for t in more:
        if not any(_match(t, u) for u in out):
            out.append(t)
    return out


def _format(t: Taint) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def launch_conditions(claim: NodeClaim, now: Any) -> list[Any]:
    """The conditions of a NodeClaim launched just now: ``For``'s, ``Launched=True``, and
    registration's verdict while its Node does not exist yet."""
    cs = nodeclaim_conditions(claim, now)
    cs.set_true("Launched")
    cs.set_unknown("Registered", *NOT_FOUND)
    return cs.items


def sync_node(claim: NodeClaim, node: Node) -> Node:
    """``syncNode``'s Node (module docstring)."""
    taints: Sequence[Taint] = node.spec.taints
    if node.metadata.labels.get(DO_NOT_SYNC_TAINTS_LABEL) != "true" and claim.spec is not None:
        taints = _merge(_merge(taints, claim.spec.taints), claim.spec.startup_taints)
    meta = node.metadata
    return replace(
        node,
        metadata=replace(
            meta,
            annotations={**meta.annotations, **claim.metadata.annotations},
            labels={**meta.labels, **claim.metadata.labels, REGISTERED_LABEL: "true"},
        ),
        spec=replace(node.spec, taints=[t for t in taints if not _match(t, UNREGISTERED_TAINT)]),
    )


def state_taints(node: Node, claim: NodeClaim | None) -> list[Taint]:
    """``StateNode.Taints``: a managed Node not registered yet has its NodeClaim's taints; one
    not initialized yet has neither its startup taints nor the known ephemeral ones."""
    if claim is None:
        return node.spec.taints
    labels = node.metadata.labels
    taints = node.spec.taints
    if labels.get(REGISTERED_LABEL) != "true" and claim.spec is not None:
        taints = claim.spec.taints
    if labels.get(INITIALIZED_LABEL) != "true":
        startup = claim.spec.startup_taints if claim.spec is not None else []
        taints = [
            t
            for t in taints
            if not any(_match(t, s) for s in startup) and not any(_match(t, k) for k in KNOWN_EPHEMERAL_TAINTS)
        ]
    return taints


def _ready(node: Node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)


def _not_initialized(claim: NodeClaim, node: Node | None) -> tuple[str, str] | None:
    """Why initialization must wait, as upstream says it; None once it may proceed."""
    if node is None:
        return NOT_FOUND
    if not _ready(node):
        return "NodeNotReady", "Node status is NotReady"
    startup = claim.spec.startup_taints if claim.spec is not None else []
    for s in startup:
        left = next((t for t in node.spec.taints if _match(s, t)), None)
        if left is not None:
            return "StartupTaintsExist", f'StartupTaint "{_format(left)}" still exists'
    for k in KNOWN_EPHEMERAL_TAINTS:
        left = next((t for t in node.spec.taints if _match(k, t)), None)
        if left is not None:
            return "KnownEphemeralTaintsExist", f'KnownEphemeralTaint "{_format(left)}" still exists'
    requests = claim.spec.resources.requests if claim.spec is not None and claim.spec.resources is not None else {}
    for name, q in requests.items():
        if q.milli == 0:
            continue
        have = node.status.allocatable.get(name)
        if have is None or have.milli == 0:
            return "ResourceNotRegistered", f'Resource "{name}" was requested but not registered'
    return None


async def reconcile(agent: Any, claim: NodeClaim) -> bool:
    """One lifecycle reconcile of a launched NodeClaim (module docstring); whether it
    registered now and its status was written."""
    nodes = agent.nodes
    name = claim.metadata.name
    cs = nodeclaim_conditions(claim, agent.clock.timestamp)
    cs.refresh("Launched")
    node_name = claim.status.node_name
    registered_now = False
    if cs.get("Registered").status != "Unknown":  # type: ignore[union-attr]
        cs.refresh("Registered")
    else:
        node = nodes.get(name, "")
        if node is None:
            cs.set_unknown("Registered", *NOT_FOUND)
        else:
            synced = sync_node(claim, node)
            ok = True
            if synced != node:
                try:
                    await agent.client.update(synced)
                except ApiError:
                    ok = False  # a conflict requeues; the NodeClaim is written as it stands
            if ok:
                cs.set_true("Registered")
                node_name = node.metadata.name
                registered_now = True
    await _initialize(agent, claim, cs)
    if not cs.is_true("Registered") and _timed_out(agent, cs):
        await _delete(agent, claim)
        return False
    if not cs.changed and node_name == claim.status.node_name:
        return False
    status = replace(claim.status, node_name=node_name, conditions=cs.items)
    return bool(await agent.write_status(replace(claim, status=status))) and registered_now


async def _initialize(agent: Any, claim: NodeClaim, cs: ConditionSet) -> None:
    if cs.get("Initialized").status != "Unknown":  # type: ignore[union-attr]
        cs.refresh("Initialized")
        return
    if not cs.is_true("Registered"):
        return
    node = agent.nodes.get(claim.metadata.name, "")
    why = _not_initialized(claim, node)
    if why is not None:
        cs.set_unknown("Initialized", *why)
        return
    assert node is not None
    if node.metadata.labels.get(INITIALIZED_LABEL) != "true":
        labels = {**node.metadata.labels, INITIALIZED_LABEL: "true"}
        try:
            await agent.client.update(replace(node, metadata=replace(node.metadata, labels=labels)))
        except ApiError:
            return
    cs.set_true("Initialized")


def _timed_out(agent: Any, cs: ConditionSet) -> bool:
    reg = cs.get("Registered")
    since = reg.last_transition_time if reg is not None else None
    return since is not None and agent.clock.now() - parse_timestamp(since) >= REGISTRATION_TIMEOUT


async def _delete(agent: Any, claim: NodeClaim) -> None:
    try:
        await agent.client.delete("NodeClaim", claim.metadata.name, "")
    except NotFound:
        return
    agent.disruption.count_disrupted("registration_timeout")
