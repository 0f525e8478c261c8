"""``karpenter.sh/v1`` NodePool and NodeClaim (kubernetes-sigs/karpenter v1.9.1, ``pkg/apis/v1``).

Both kinds are cluster-scoped custom resources with a status subresource (the CRDs
``pkg/apis/crds/karpenter.sh_nodepools.yaml`` and ``karpenter.sh_nodeclaims.yaml``). Every field
of v1.9.1 is here; a field the CRD defaults is ``None`` in a decoded manifest and filled by
``default_karpenter`` (so a stored object shows it, as the API server's structural defaulting
writes it). Durations stay the strings the CRD's patterns check (``720h``, ``Never``). The
CRD's OpenAPI and CEL checks are ``emulator.base.api.karpentervalidation``.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec.structs import replace

from emulator.base.api.core import ResourceList, Taint
from emulator.base.api.meta import Condition, K8s, ObjectMeta

__all__ = [
    "API_VERSION",
    "CAPACITY_TYPE_LABEL",
    "KARPENTER_KINDS",
    "NODEPOOL_LABEL",
    "Budget",
    "Disruption",
    "NodeClaim",
    "NodeClaimResources",
    "NodeClaimSpec",
    "NodeClaimStatus",
    "NodeClaimTemplate",
    "NodeClaimTemplateSpec",
    "NodeClassReference",
    "NodePool",
    "NodePoolSpec",
    "NodePoolStatus",
    "NodeSelectorRequirementWithMinValues",
    "TemplateMeta",
    "default_karpenter",
]

API_VERSION: Final = "karpenter.sh/v1"
NODEPOOL_LABEL: Final = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL: Final = "karpenter.sh/capacity-type"


class NodeSelectorRequirementWithMinValues(K8s, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []
    min_values: int | None = None


class NodeClassReference(K8s, frozen=True):
    kind: str = ""
    name: str = ""
    group: str = ""


class TemplateMeta(K8s, frozen=True):
    """The template's ``metadata`` (Karpenter's own ``ObjectMeta``: labels and annotations)."""

    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}


class NodeClaimTemplateSpec(K8s, frozen=True):
    taints: list[Taint] = []
    startup_taints: list[Taint] = []
    requirements: list[NodeSelectorRequirementWithMinValues] | None = None
    """Required (the CRD)."""
    node_class_ref: NodeClassReference | None = None
    """Required (the CRD)."""
    termination_grace_period: str | None = None
    expire_after: str | None = None
    """Defaulted to ``720h``."""


class NodeClaimTemplate(K8s, frozen=True):
    metadata: TemplateMeta = TemplateMeta()
    spec: NodeClaimTemplateSpec | None = None
    """Required (the CRD)."""


class Budget(K8s, frozen=True):
    reasons: list[str] | None = None
    """Unset: the budget applies to every reason; ``[]``: to none (``budget.Reasons == nil``)."""
    nodes: str | None = None
    """Defaulted to ``10%``."""
    schedule: str | None = None
    duration: str | None = None


class Disruption(K8s, frozen=True):
    consolidate_after: str | None = None
    """Required once ``disruption`` is given; the whole block defaults to ``{consolidateAfter: 0s}``."""
    consolidation_policy: str | None = None
    """Defaulted to ``WhenEmptyOrUnderutilized``."""
    budgets: list[Budget] | None = None
    """Defaulted to ``[{nodes: 10%}]``."""


class NodePoolSpec(K8s, frozen=True):
    template: NodeClaimTemplate | None = None
    """Required (the CRD)."""
    disruption: Disruption | None = None
    limits: ResourceList = {}
    weight: int | None = None
    replicas: int | None = None


class NodePoolStatus(K8s, frozen=True):
    resources: ResourceList = {}
    nodes: int | None = None
    node_class_observed_generation: int = 0
    conditions: list[Condition] = []


class NodePool(K8s, frozen=True):
    api_version: str = API_VERSION
    kind: str = "NodePool"
    metadata: ObjectMeta = ObjectMeta()
    spec: NodePoolSpec | None = None
    status: NodePoolStatus = NodePoolStatus()


class NodeClaimResources(K8s, frozen=True):
    requests: ResourceList = {}


class NodeClaimSpec(K8s, frozen=True):
    taints: list[Taint] = []
    startup_taints: list[Taint] = []
    requirements: list[NodeSelectorRequirementWithMinValues] | None = None
    resources: NodeClaimResources = NodeClaimResources()
    node_class_ref: NodeClassReference | None = None
    termination_grace_period: str | None = None
    expire_after: str | None = None


class NodeClaimStatus(K8s, frozen=True):
    node_name: str = ""
    provider_id: str = msgspec.field(default="", name="providerID")
    image_id: str = msgspec.field(default="", name="imageID")
    capacity: ResourceList = {}
    allocatable: ResourceList = {}
    conditions: list[Condition] = []
    last_pod_event_time: str | None = None


class NodeClaim(K8s, frozen=True):
    api_version: str = API_VERSION
    kind: str = "NodeClaim"
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeClaimSpec | None = None
    status: NodeClaimStatus = NodeClaimStatus()


KARPENTER_KINDS: Final[tuple[type[Any], ...]] = (NodePool, NodeClaim)


def _budgets(budgets: list[Budget] | None) -> list[Budget]:
    if budgets is None:
        return [Budget(nodes="10%")]
    return [b if b.nodes is not None else replace(b, nodes="10%") for b in budgets]


def default_karpenter(obj: Any) -> Any:
    """The CRDs' structural defaults (``+kubebuilder:default``): ``disruption`` →
    ``{consolidateAfter: 0s}``, ``consolidationPolicy`` → ``WhenEmptyOrUnderutilized``,
    ``budgets`` → ``[{nodes: 10%}]`` (a budget's ``nodes`` → ``10%``), ``expireAfter`` →
    ``720h``, a NodePool's ``status.nodes`` → 0 (when it has a status). Idempotent."""
    if isinstance(obj, NodePool):
        spec = obj.spec
        if spec is not None:
            d = spec.disruption if spec.disruption is not None else Disruption(consolidate_after="0s")
            d = replace(
                d,
                consolidation_policy=d.consolidation_policy or "WhenEmptyOrUnderutilized",
                budgets=_budgets(d.budgets),
            )
            template = spec.template
            if template is not None and template.spec is not None and template.spec.expire_after is None:
                template = replace(template, spec=replace(template.spec, expire_after="720h"))
            spec = replace(spec, disruption=d, template=template)
        status = obj.status
        if status != NodePoolStatus() and status.nodes is None:  # defaults apply inside a given status
            status = replace(status, nodes=0)
        return replace(obj, spec=spec, status=status)
    if isinstance(obj, NodeClaim) and obj.spec is not None and obj.spec.expire_after is None:
        return replace(obj, spec=replace(obj.spec, expire_after="720h"))
    return obj
