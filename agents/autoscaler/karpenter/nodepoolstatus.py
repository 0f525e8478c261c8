"""A NodePool's status as kubernetes-sigs/karpenter v1.9.1 writes it for the kwok provider.

- Conditions (``pkg/apis/v1/nodepool_status.go``: ``NewReadyConditions(ValidationSucceeded,
  NodeClassReady)``, awslabs/operatorpkg ``status/condition_set.go``): ``Ready`` is the root,
  True once both dependents are True at the NodePool's generation, else Unknown
  (``ReconcilingDependents``) or False (``UnhealthyDependents``) with ``Type=Status`` of the
  unhealthy ones, newest first. A condition keeps its ``lastTransitionTime`` while its status
  does not change; a dependent first set gets the NodePool's creation time; conditions are kept
  in transition order with ``Ready`` last.
- ``ValidationSucceeded`` (``nodepool/validation``): True (``RuntimeValidate``'s checks are the
  CRD's here, which the API server already ran).
- ``NodeClassReady`` (``nodepool/readiness``): True. The kwok provider's ``KWOKNodeClass`` has
  no spec that matters and is always Ready; the emulator serves no NodeClass kind and stands in
  for the one a managed NodePool references.
- ``NodeRegistrationHealthy`` (``nodepool/registrationhealth``, ``nodeclaim/lifecycle/
  registration.go``): Unknown (``AwaitingReconciliation``) when missing or set for an older
  generation; True once a NodeClaim owned by the NodePool (owner reference UID) registers after
  that reset. ``nodeClassObservedGeneration``
  is the stand-in NodeClass's generation, 1.
- The counter (``nodepool/counter``): ``status.resources`` is the zeros of ``cpu``,
  ``ephemeral-storage``, ``memory``, ``nodes`` and ``pods`` overlaid with the capacity of the
  NodePool's NodeClaims not marked for deletion (``nodes`` one each); ``status.nodes`` that count.

Only NodePools Karpenter manages get a status (``IsManaged``: the ``nodeClassRef``'s group and
kind are ``karpenter.kwok.sh``/``KWOKNodeClass``); only Ready, dynamic (no ``replicas``), managed
NodePools provision (``provisioner.go`` ``NewScheduler``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from msgspec.structs import replace

from agents.autoscaler.karpenter.conditions import ConditionSet
from emulator.base.api.karpenter import NodePool, NodePoolStatus
from emulator.base.api.karpenterignored import KWOK_NODE_CLASS
from emulator.base.api.quantity import Quantity, parse_quantity

__all__ = ["KWOK_NODE_CLASS", "is_managed", "nodepool_status", "provisions"]

ROOT: Final = "Ready"
DEPENDENTS: Final = ("ValidationSucceeded", "NodeClassReady")
REGISTRATION: Final = "NodeRegistrationHealthy"
BASE_RESOURCES: Final = ("cpu", "ephemeral-storage", "memory", "nodes", "pods")
NODE_CLASS_GENERATION: Final = 1


def is_managed(pool: NodePool) -> bool:
    """``nodepoolutils.IsManaged`` for the kwok provider."""
    t = pool.spec.template if pool.spec is not None else None
    ref = t.spec.node_class_ref if t is not None and t.spec is not None else None
    return ref is not None and (ref.group, ref.kind) == KWOK_NODE_CLASS


def provisions(pool: NodePool) -> bool:
    """``NewScheduler``'s filter: managed, dynamic, Ready, not deleting."""
    ready = any(c.type == ROOT and c.status == "True" for c in pool.status.conditions)
    return (
        pool.spec is not None
        and is_managed(pool)
        and pool.spec.replicas is None
        and ready
        and pool.metadata.deletion_timestamp is None
    )


def nodepool_status(
    pool: NodePool, resources: Mapping[str, Quantity], nodes: int, registered: bool, now: str
) -> NodePoolStatus:
    """The status the NodePool controllers leave (module docstring); ``registered``: a NodeClaim
    owned by the NodePool (owner reference UID) registered since the status was last computed."""
    meta = pool.metadata
    cs = ConditionSet(
        pool.status.conditions,
        root=ROOT,
        dependents=DEPENDENTS,
        generation=meta.generation,
        created=meta.creation_timestamp,
        deleting=meta.deletion_timestamp is not None,
        now=lambda: now,
    )
    cs.set("ValidationSucceeded", "True", "ValidationSucceeded")
    cs.set("NodeClassReady", "True", "NodeClassReady")
    reg = cs.get(REGISTRATION)
    if reg is None or reg.observed_generation != pool.metadata.generation:
        # a registration seen in the same pass came before this reset: the reset wins
        cs.set_unknown(REGISTRATION)
    elif registered and reg.status != "True":
        cs.set_true(REGISTRATION)
    zero = {k: parse_quantity("0") for k in BASE_RESOURCES}
    return replace(
        pool.status,
        resources=dict(sorted({**zero, **resources}.items())),
        nodes=nodes,
        node_class_observed_generation=NODE_CLASS_GENERATION,
        conditions=cs.items,
    )
