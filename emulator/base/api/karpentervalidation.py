"""The checks of Karpenter's CRDs (v1.9.1 ``pkg/apis/crds/karpenter.sh_nodepools.yaml``,
``karpenter.sh_nodeclaims.yaml``): required fields, OpenAPI enums, patterns, minimum/maximum and
maxItems, and every ``x-kubernetes-validations`` rule as a Python check with its message.

Messages are the API server's for a CRD: an enum is ``Unsupported value: "X": supported
values: ...``, a pattern ``Invalid value: "X": <path> in body should match '<re>'``, a CEL rule
``Invalid value: "<type>": <message>`` (the type of the value the rule sits on: ``string``,
``object``, ``array``). ``karpenter_problems`` yields ``(path, detail)`` in schema order (the
caller reports the first); objects are checked as stored (defaulted).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from emulator.base.api.core import Taint
from emulator.base.api.karpenter import (
    NodeClaim,
    NodeClaimTemplateSpec,
    NodeClassReference,
    NodePool,
    NodeSelectorRequirementWithMinValues,
)

__all__ = ["OPERATORS", "karpenter_problems", "karpenter_update_problems"]

Problem = tuple[str, str]

OPERATORS: Final = ("Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
"""The requirement operator enum, in the CRD's order."""
_POLICIES: Final = ("WhenEmpty", "WhenEmptyOrUnderutilized")
_REASONS: Final = ("Underutilized", "Empty", "Drifted")
_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NILLABLE_DURATION: Final = r"^(([0-9]+(s|m|h))+|Never)$"
_DURATION: Final = r"^([0-9]+(s|m|h))+$"
_BUDGET_NODES: Final = r"^((100|[0-9]{1,2})%|[0-9]+)$"
_BUDGET_SCHEDULE: Final = r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"
_BUDGET_DURATION: Final = r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$"
_QUALIFIED: Final = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
_LABEL_VALUE: Final = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_GROUP: Final = r"^[^/]*$"
_WELL_KNOWN_KARPENTER: Final = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")


def _unsupported(path: str, value: str, allowed: tuple[str, ...]) -> Problem:
    return path, f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{a}"' for a in allowed)


def _pattern(path: str, value: str, pattern: str) -> Problem | None:
    if re.search(pattern, value):
        return None
    return path, f"Invalid value: \"{value}\": {path} in body should match '{pattern}'"


def _cel(path: str, type_: str, message: str) -> Problem:
    return path, f'Invalid value: "{type_}": {message}'


def _domain_restricted(key: str) -> bool:
    """The CEL ``!self.find("^([^/]+)").endsWith("karpenter.sh")`` failing (well-known keys aside)."""
    return key not in _WELL_KNOWN_KARPENTER and key.split("/", 1)[0].endswith("karpenter.sh")


def _requirements(
    reqs: list[NodeSelectorRequirementWithMinValues] | None, path: str, *, nodepool_label: bool
) -> Iterator[Problem]:
    if reqs is None:
        yield path, "Required value"
        return
    if len(reqs) > 100:
        yield path, f"Too many: {len(reqs)}: must have at most 100 items"
    for i, r in enumerate(reqs):
        p = f"{path}[{i}]"
        if not r.key:
            yield f"{p}.key", "Required value"
        elif len(r.key) > 316:
            yield f"{p}.key", "Too long: may not be more than 316 bytes"
        elif problem := _pattern(f"{p}.key", r.key, _QUALIFIED):
            yield problem
        if not r.operator:
            yield f"{p}.operator", "Required value"
        elif r.operator not in OPERATORS:
            yield _unsupported(f"{p}.operator", r.operator, OPERATORS)
        if r.min_values is not None and not 1 <= r.min_values <= 50:
            bound = "greater than or equal to 1" if r.min_values < 1 else "less than or equal to 50"
            yield f"{p}.minValues", f"Invalid value: {r.min_values}: {p}.minValues in body should be {bound}"
        for j, v in enumerate(r.values):
            if len(v) > 63:
                yield f"{p}.values[{j}]", "Too long: may not be more than 63 bytes"
            elif problem := _pattern(f"{p}.values[{j}]", v, _LABEL_VALUE):
                yield problem
        if r.key and _domain_restricted(r.key):
            yield _cel(f"{p}.key", "string", 'label domain "karpenter.sh" is restricted')
        if nodepool_label and r.key == "karpenter.sh/nodepool":
            yield _cel(f"{p}.key", "string", 'label "karpenter.sh/nodepool" is restricted')
        if r.key == "kubernetes.io/hostname":
            yield _cel(f"{p}.key", "string", 'label "kubernetes.io/hostname" is restricted')
    if any(r.operator == "In" and not r.values for r in reqs):
        yield _cel(path, "array", "requirements with operator 'In' must have a value defined")
    if any(r.operator in ("Gt", "Lt", "Gte", "Lte") and not _single_non_negative(r.values) for r in reqs):
        yield _cel(
            path, "array", "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
        )
    if any(r.operator == "In" and r.min_values is not None and len(r.values) < r.min_values for r in reqs):
        yield _cel(
            path,
            "array",
            "requirements with 'minValues' must have at least that many values specified in the 'values' field",
        )


def _single_non_negative(values: list[str]) -> bool:
    if len(values) != 1:
        return False
    try:
        return int(values[0]) >= 0
    except ValueError:
        return False


def _taints(taints: list[Taint], path: str) -> Iterator[Problem]:
    for i, t in enumerate(taints):
        p = f"{path}[{i}]"
        if not t.key:
            yield f"{p}.key", "Required value"
        elif problem := _pattern(f"{p}.key", t.key, _QUALIFIED):
            yield problem
        if not t.effect:
            yield f"{p}.effect", "Required value"
        elif t.effect not in _EFFECTS:
            yield _unsupported(f"{p}.effect", t.effect, _EFFECTS)
        if t.value and (problem := _pattern(f"{p}.value", t.value, _QUALIFIED)):
            yield problem


def _class_ref(ref: NodeClassReference | None, path: str) -> Iterator[Problem]:
    if ref is None:
        yield path, "Required value"
        return
    for field, value in (("group", ref.group), ("kind", ref.kind), ("name", ref.name)):
        if field == "group" and (problem := _pattern(f"{path}.group", value, _GROUP)):
            yield problem
        if value == "":
            yield _cel(f"{path}.{field}", "string", f"{field} may not be empty")


def _durations(spec: Any, path: str) -> Iterator[Problem]:
    if spec.termination_grace_period is not None and (
        problem := _pattern(f"{path}.terminationGracePeriod", spec.termination_grace_period, _DURATION)
    ):
        yield problem
    if spec.expire_after is not None and (
        problem := _pattern(f"{path}.expireAfter", spec.expire_after, _NILLABLE_DURATION)
    ):
        yield problem


def _template_spec(spec: NodeClaimTemplateSpec | None, path: str) -> Iterator[Problem]:
    if spec is None:
        yield path, "Required value"
        return
    yield from _durations(spec, path)
    yield from _class_ref(spec.node_class_ref, f"{path}.nodeClassRef")
    yield from _requirements(spec.requirements, f"{path}.requirements", nodepool_label=True)
    yield from _taints(spec.startup_taints, f"{path}.startupTaints")
    yield from _taints(spec.taints, f"{path}.taints")


def _template_labels(labels: Mapping[str, str], path: str) -> Iterator[Problem]:
    for key, value in labels.items():
        if len(value) > 63:
            yield f"{path}[{key}]", "Too long: may not be more than 63 bytes"
        elif problem := _pattern(f"{path}[{key}]", value, _LABEL_VALUE):
            yield problem
    keys = list(labels)
    if any(_domain_restricted(k) for k in keys):
        yield _cel(path, "object", 'label domain "karpenter.sh" is restricted')
    if "karpenter.sh/nodepool" in keys:
        yield _cel(path, "object", 'label "karpenter.sh/nodepool" is restricted')
    if "kubernetes.io/hostname" in keys:
        yield _cel(path, "object", 'label "kubernetes.io/hostname" is restricted')


def _nodepool(pool: NodePool) -> Iterator[Problem]:
    spec = pool.spec
    if spec is None:
        yield "spec", "Required value"
        return
    d = spec.disruption
    if d is not None:
        budgets = d.budgets or []
        if len(budgets) > 50:
            yield "spec.disruption.budgets", f"Too many: {len(budgets)}: must have at most 50 items"
        for i, b in enumerate(budgets):
            p = f"spec.disruption.budgets[{i}]"
            if b.duration is not None and (problem := _pattern(f"{p}.duration", b.duration, _BUDGET_DURATION)):
                yield problem
            if b.nodes is not None and (problem := _pattern(f"{p}.nodes", b.nodes, _BUDGET_NODES)):
                yield problem
            for j, reason in enumerate(b.reasons or []):
                if reason not in _REASONS:
                    yield _unsupported(f"{p}.reasons[{j}]", reason, _REASONS)
            if b.schedule is not None and (problem := _pattern(f"{p}.schedule", b.schedule, _BUDGET_SCHEDULE)):
                yield problem
        if any((b.schedule is None) != (b.duration is None) for b in budgets):
            yield _cel("spec.disruption.budgets", "array", "'schedule' must be set with 'duration'")
        if d.consolidate_after is None:
            yield "spec.disruption.consolidateAfter", "Required value"
        elif problem := _pattern("spec.disruption.consolidateAfter", d.consolidate_after, _NILLABLE_DURATION):
            yield problem
        if d.consolidation_policy is not None and d.consolidation_policy not in _POLICIES:
            yield _unsupported("spec.disruption.consolidationPolicy", d.consolidation_policy, _POLICIES)
    if spec.replicas is not None and spec.replicas < 0:
        bound = "greater than or equal to 0"
        yield "spec.replicas", f"Invalid value: {spec.replicas}: spec.replicas in body should be {bound}"
    if spec.template is None:
        yield "spec.template", "Required value"
    else:
        yield from _template_labels(spec.template.metadata.labels, "spec.template.metadata.labels")
        yield from _template_spec(spec.template.spec, "spec.template.spec")
    if spec.weight is not None and not 1 <= spec.weight <= 100:
        bound = "greater than or equal to 1" if spec.weight < 1 else "less than or equal to 100"
        yield "spec.weight", f"Invalid value: {spec.weight}: spec.weight in body should be {bound}"
    if spec.replicas is not None:
        if spec.limits and list(spec.limits) != ["nodes"]:
            yield _cel("spec", "object", "only 'limits.nodes' is supported on static NodePools")
        if spec.weight is not None:
            yield _cel("spec", "object", "'weight' is not supported on static NodePools")


def _nodeclaim(claim: NodeClaim) -> Iterator[Problem]:
    spec = claim.spec
    if spec is None:
        yield "spec", "Required value"
        return
    yield from _durations(spec, "spec")
    yield from _class_ref(spec.node_class_ref, "spec.nodeClassRef")
    yield from _requirements(spec.requirements, "spec.requirements", nodepool_label=False)
    yield from _taints(spec.startup_taints, "spec.startupTaints")
    yield from _taints(spec.taints, "spec.taints")


def karpenter_problems(obj: Any) -> Iterator[Problem]:
    """The CRD's problems with a (defaulted) NodePool or NodeClaim, in schema order."""
    if isinstance(obj, NodePool):
        yield from _nodepool(obj)
    elif isinstance(obj, NodeClaim):
        yield from _nodeclaim(obj)


def karpenter_update_problems(current: Any, candidate: Any) -> Iterator[Problem]:
    """The CRDs' transition rules (``oldSelf``): a NodeClaim's spec is immutable; a NodePool's
    ``nodeClassRef`` keeps its group and kind and it stays static or dynamic."""
    if isinstance(candidate, NodeClaim):
        if candidate.spec != current.spec:
            yield _cel("spec", "object", "spec is immutable")
        return
    if not isinstance(candidate, NodePool) or candidate.spec is None or current.spec is None:
        return
    old, new = _ref(current), _ref(candidate)
    path = "spec.template.spec.nodeClassRef"
    if old is not None and new is not None:
        if old.group != new.group:
            yield _cel(path, "object", "nodeClassRef.group is immutable")
        if old.kind != new.kind:
            yield _cel(path, "object", "nodeClassRef.kind is immutable")
    if (candidate.spec.replicas is None) != (current.spec.replicas is None):
        yield _cel(
            "spec",
            "object",
            "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes",
        )


def _ref(pool: NodePool) -> NodeClassReference | None:
    t = pool.spec.template if pool.spec is not None else None
    return t.spec.node_class_ref if t is not None and t.spec is not None else None
