"""The API server's checks of the pod fields the scheduler reads (upstream ``ValidatePodSpec``).

What this module owns: ``scheduling_errors(spec)`` (and ``node_affinity_errors``, which the
scheduler's ``NodeAffinityArgs`` reuse), every problem upstream's
``pkg/apis/core/validation`` finds in these fields, in its order, each as ``(path, detail)``
with upstream's field path and wording (``detail`` is what follows ``path: ``):

=================================  ==========================================================
field                              upstream check
=================================  ==========================================================
``nodeSelector``                   ``ValidateLabels``: keys qualified names, values label values
``affinity.nodeAffinity``          ``ValidateNodeSelector`` (≥ 1 term; operators In, NotIn,
                                   Exists, DoesNotExist, Gt, Lt with their value counts;
                                   ``matchFields`` only ``metadata.name``, In/NotIn, one
                                   value); preferred terms' weight 1–100
``affinity.pod(Anti)Affinity``     ``validatePodAffinityTerm``: ``labelSelector`` and
                                   ``namespaceSelector`` (``ValidateLabelSelector``),
                                   namespaces, matchLabelKeys / mismatchLabelKeys,
                                   ``topologyKey`` required and a qualified name; weight 1–100
``tolerations``                    ``ValidateTolerations``
``topologySpreadConstraints``      ``validateTopologySpreadConstraints``
``containers[*].ports``            ``validateContainerPorts``: ports 1–65535, protocols
=================================  ==========================================================

It also owns the emulator's own pod annotations that the kubelet reads for a container's
lifecycle (``kubelet_annotation_problems``; upstream has no such annotations and accepts any
annotation value, but a typo here would silently change a run, so the API server refuses
it): ``emulator.k8s.io/exit-code`` and ``init-exit-code`` must be integers 0..255,
``ready-after``, ``init-duration`` and the prober's ``*-fails-after`` Go durations.
``run-duration`` is older and checked
where scenarios are read (``emulator.app.scenario.readers``); a pod built in code with a bad one
runs forever, as it always did.

A value is shown as Go's ``field.Error`` shows it: a string quoted, a number bare. The caller
(``validation``) reports the first problem; the generator stops there.

And it owns what an update may change of a pod's spec (``pod_update_problem``, upstream
``ValidatePodUpdate``): scheduling gates only removed, tolerations only added (an existing one
kept as it is), container images; nothing else.

It does not own names, containers' other fields, quantities or priorities (``validation``), nor
how the scheduler treats a pod that would fail here (it never sees one through the API server;
its plugins keep upstream's lenient parsing for pods built directly in tests).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Final

import msgspec
from msgspec.structs import replace

from emulator.base.api.core import (
    Affinity,
    Container,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodSpec,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from emulator.base.api.labels import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    is_label_value,
    label_value_errors,
)
from emulator.base.api.labelselector import (
    OP_DOES_NOT_EXIST,
    OP_EXISTS,
    OP_GT,
    OP_IN,
    OP_LT,
    OP_NOT_IN,
    label_name_problems,
    label_problems,
    label_selector_problems,
)
from emulator.base.api.load import USAGE_ANNOTATION, usage_problem
from emulator.base.api.nodeaffinity import NODE_NAME_FIELD
from emulator.base.api.taints import TAINT_EFFECTS, TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS
from emulator.base.runtime.clock import parse_duration

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

__all__ = [
    "EXIT_CODE_ANNOTATION",
    "INIT_DURATION_ANNOTATION",
    "INIT_EXIT_CODE_ANNOTATION",
    "LIVENESS_FAILS_AFTER_ANNOTATION",
    "READINESS_FAILS_AFTER_ANNOTATION",
    "READY_AFTER_ANNOTATION",
    "STARTUP_FAILS_AFTER_ANNOTATION",
    "Problem",
    "kubelet_annotation_problems",
    "node_affinity_errors",
    "node_selector_problems",
    "parse_exit_code",
    "pod_update_problem",
    "scheduling_errors",
]

EXIT_CODE_ANNOTATION: Final = "emulator.k8s.io/exit-code"
READY_AFTER_ANNOTATION: Final = "emulator.k8s.io/ready-after"
INIT_DURATION_ANNOTATION: Final = "emulator.k8s.io/init-duration"
INIT_EXIT_CODE_ANNOTATION: Final = "emulator.k8s.io/init-exit-code"
LIVENESS_FAILS_AFTER_ANNOTATION: Final = "emulator.k8s.io/liveness-fails-after"
READINESS_FAILS_AFTER_ANNOTATION: Final = "emulator.k8s.io/readiness-fails-after"
STARTUP_FAILS_AFTER_ANNOTATION: Final = "emulator.k8s.io/startup-fails-after"
_DURATION_ANNOTATIONS: Final = (
    READY_AFTER_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    LIVENESS_FAILS_AFTER_ANNOTATION,
    READINESS_FAILS_AFTER_ANNOTATION,
    STARTUP_FAILS_AFTER_ANNOTATION,
)
_EXIT_CODE_RANGE: Final = "must be an integer from 0 to 255 (an exit code)"

Problem = tuple[str, str]
"""(field path, detail), e.g. ``("spec.tolerations[0].operator", 'Unsupported value: "In": …')``."""

_NOT_POSITIVE: Final = "must be greater than zero"
_WEIGHT_RANGE: Final = "must be in the range 1-100"
_PORT_RANGE: Final = "must be between 1 and 65535, inclusive"
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
_INCLUSION_POLICIES: Final = ("Honor", "Ignore")
_NO_EXECUTE: Final = "NoExecute"
_TOLERATION_JSON: Final = msgspec.json.Encoder()


def _supported(value: str, allowed: Sequence[str]) -> str:
    """``field.NotSupported``'s detail."""
    return f"Unsupported value: {go_quote(value)}: supported values: " + ", ".join(go_quote(v) for v in allowed)


def _invalid(value: str | int, detail: str) -> str:
    """``field.Invalid``'s detail: strings quoted, numbers bare."""
    shown = go_quote(value) if isinstance(value, str) else str(value)
    return f"Invalid value: {shown}: {detail}"


# --- node affinity -------------------------------------------------------------------------------


def _node_requirement(req: NodeSelectorRequirement, path: str) -> Iterator[Problem]:
    """``ValidateNodeSelectorRequirement`` (a ``matchExpressions`` entry)."""
    op, values = req.operator, req.values
    if op in (OP_IN, OP_NOT_IN):
        if not values:
            yield f"{path}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"
    elif op in (OP_EXISTS, OP_DOES_NOT_EXIST):
        if values:
            yield f"{path}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    elif op in (OP_GT, OP_LT):
        if len(values) != 1:
            yield f"{path}.values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"
    else:
        yield f"{path}.operator", _invalid(op, "not a valid selector operator")
    yield from label_name_problems(req.key, f"{path}.key")


def _node_field_requirement(req: NodeSelectorRequirement, path: str) -> Iterator[Problem]:
    """``ValidateNodeFieldSelectorRequirement`` (a ``matchFields`` entry)."""
    if req.operator in (OP_IN, OP_NOT_IN):
        if len(req.values) != 1:
            yield (
                f"{path}.values",
                "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    else:
        yield f"{path}.operator", _invalid(req.operator, "not a valid selector operator")
    if req.key != NODE_NAME_FIELD:
        yield f"{path}.key", _invalid(req.key, "not a valid field selector key")
        return
    for i, value in enumerate(req.values):
        for msg in dns1123_subdomain_errors(value):
            yield f"{path}.values[{i}]", _invalid(value, msg)


def _node_selector_term(term: NodeSelectorTerm, path: str) -> Iterator[Problem]:
    for j, req in enumerate(term.match_expressions):
        yield from _node_requirement(req, f"{path}.matchExpressions[{j}]")
    for j, req in enumerate(term.match_fields):
        yield from _node_field_requirement(req, f"{path}.matchFields[{j}]")


def _node_selector(selector: NodeSelector, path: str) -> Iterator[Problem]:
    terms_path = f"{path}.nodeSelectorTerms"
    if not selector.node_selector_terms:
        yield terms_path, "Required value: must have at least one node selector term"
    for i, term in enumerate(selector.node_selector_terms):
        yield from _node_selector_term(term, f"{terms_path}[{i}]")


node_selector_problems = _node_selector
"""``ValidateNodeSelector`` at a path (a PersistentVolume's ``nodeAffinity.required`` too)."""


def node_affinity_errors(na: NodeAffinity, path: str) -> Iterator[Problem]:
    """The problems of a ``NodeAffinity`` at ``path``: its required selector and its preferred
    terms with their weights (also the scheduler's ``NodeAffinityArgs.addedAffinity``)."""
    required = na.required_during_scheduling_ignored_during_execution
    if required is not None:
        yield from _node_selector(required, f"{path}.requiredDuringSchedulingIgnoredDuringExecution")
    pref_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(na.preferred_during_scheduling_ignored_during_execution):
        if not 1 <= pref.weight <= 100:
            yield f"{pref_path}[{i}].weight", _invalid(pref.weight, _WEIGHT_RANGE)
        yield from _node_selector_term(pref.preference, f"{pref_path}[{i}].preference")


def _affinity(affinity: Affinity, path: str) -> Iterator[Problem]:
    if affinity.node_affinity is not None:
        yield from node_affinity_errors(affinity.node_affinity, f"{path}.nodeAffinity")
    for name, pa in (("podAffinity", affinity.pod_affinity), ("podAntiAffinity", affinity.pod_anti_affinity)):
        if pa is None:
            continue
        req_path = f"{path}.{name}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(pa.required_during_scheduling_ignored_during_execution):
            yield from _pod_affinity_term(term, f"{req_path}[{i}]")
        yield from _weighted_terms(
            pa.preferred_during_scheduling_ignored_during_execution,
            f"{path}.{name}.preferredDuringSchedulingIgnoredDuringExecution",
        )


# --- pod (anti-)affinity -------------------------------------------------------------------------


def _weighted_terms(terms: Sequence[WeightedPodAffinityTerm], path: str) -> Iterator[Problem]:
    for i, weighted in enumerate(terms):
        if not 1 <= weighted.weight <= 100:
            yield f"{path}[{i}].weight", _invalid(weighted.weight, _WEIGHT_RANGE)
        yield from _pod_affinity_term(weighted.pod_affinity_term, f"{path}[{i}].podAffinityTerm")


def _pod_affinity_term(term: PodAffinityTerm, path: str) -> Iterator[Problem]:
    """``validatePodAffinityTerm``: selectors, namespaces, label keys, topology key."""
    yield from label_selector_problems(term.label_selector, f"{path}.labelSelector")
    if term.namespace_selector is not None:
        yield from label_selector_problems(term.namespace_selector, f"{path}.namespaceSelector")
    for name in term.namespaces:
        for msg in dns1123_label_errors(name):
            yield f"{path}.namespace", _invalid(name, msg)  # sic: upstream names the field "namespace"
    if term.match_label_keys or term.mismatch_label_keys:
        yield from _match_label_keys(term, path)
    if not term.topology_key:
        yield f"{path}.topologyKey", "Required value: can not be empty"
    yield from label_name_problems(term.topology_key, f"{path}.topologyKey")


def _match_label_keys(term: PodAffinityTerm, path: str) -> Iterator[Problem]:
    """``validateMatchLabelKeysAndMismatchLabelKeys``."""
    for child, keys in (("matchLabelKeys", term.match_label_keys), ("mismatchLabelKeys", term.mismatch_label_keys)):
        if keys and term.label_selector is None:
            yield f"{path}.{child}", "Forbidden: must not be specified when labelSelector is not set"
        for i, key in enumerate(keys):
            yield from label_name_problems(key, f"{path}.{child}[{i}]")
    mismatch = set(term.mismatch_label_keys)
    for i, key in enumerate(term.match_label_keys):
        if key in mismatch:
            yield f"{path}.matchLabelKeys[{i}]", _invalid(key, "exists in both matchLabelKeys and mismatchLabelKeys")


# --- tolerations, spread constraints, ports ------------------------------------------------------


def _tolerations(tolerations: Sequence[Toleration], path: str) -> Iterator[Problem]:
    """``ValidateTolerations``."""
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if t.key:
            yield from label_name_problems(t.key, f"{p}.key")
        if not t.key and t.operator != TOLERATION_OP_EXISTS:
            yield (
                f"{p}.operator",
                _invalid(
                    t.operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                ),
            )
        if t.toleration_seconds is not None and not _INT64_MIN <= t.toleration_seconds <= _INT64_MAX:
            # upstream's JSON decoder refuses it before validation: tolerationSeconds is an int64
            yield f"{p}.tolerationSeconds", _invalid(t.toleration_seconds, "must fit in an int64")
        if t.toleration_seconds is not None and t.effect != _NO_EXECUTE:
            yield f"{p}.effect", _invalid(t.effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if t.operator in (TOLERATION_OP_EQUAL, ""):
            if not is_label_value(t.value):
                yield f"{p}.operator", _invalid(t.value, ";".join(label_value_errors(t.value)))
        elif t.operator == TOLERATION_OP_EXISTS:
            if t.value:
                shown = _TOLERATION_JSON.encode(t).decode()
                yield f"{p}.operator", f"Invalid value: {shown}: value must be empty when `operator` is 'Exists'"
        else:
            yield f"{p}.operator", _supported(t.operator, (TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS))
        if t.effect and t.effect not in TAINT_EFFECTS:
            yield f"{p}.effect", _supported(t.effect, TAINT_EFFECTS)


def _spread_constraints(constraints: Sequence[TopologySpreadConstraint], path: str) -> Iterator[Problem]:
    """``validateTopologySpreadConstraints``."""
    for i, c in enumerate(constraints):
        p = f"{path}[{i}]"
        if c.max_skew <= 0:
            yield f"{p}.maxSkew", _invalid(c.max_skew, _NOT_POSITIVE)
        if not c.topology_key:
            yield f"{p}.topologyKey", "Required value: can not be empty"
        if c.when_unsatisfiable not in _WHEN_UNSATISFIABLE:
            yield f"{p}.whenUnsatisfiable", _supported(c.when_unsatisfiable, _WHEN_UNSATISFIABLE)
        for later in constraints[i + 1 :]:
            if (later.topology_key, later.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
                pair = f"{{{c.topology_key}, {c.when_unsatisfiable}}}"
                yield f"{p}.{{topologyKey, whenUnsatisfiable}}", f"Duplicate value: {go_quote(pair)}"
                break
        if c.min_domains is not None:
            if c.min_domains <= 0:
                yield f"{p}.minDomains", _invalid(c.min_domains, _NOT_POSITIVE)
            if c.when_unsatisfiable != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {c.when_unsatisfiable}"
                yield f"{p}.minDomains", _invalid(c.min_domains, detail)
        for child, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in _INCLUSION_POLICIES:
                yield f"{p}.{child}", _supported(policy, _INCLUSION_POLICIES)
        if c.match_label_keys and c.label_selector is None:
            yield f"{p}.matchLabelKeys", "Forbidden: must not be specified when labelSelector is not set"
        for j, key in enumerate(c.match_label_keys):
            yield from label_name_problems(key, f"{p}.matchLabelKeys[{j}]")
        yield from label_selector_problems(c.label_selector, f"{p}.labelSelector")


def _ports(container: Container, path: str) -> Iterator[Problem]:
    """``validateContainerPorts``: the port numbers and protocols."""
    for j, port in enumerate(container.ports):
        p = f"{path}.ports[{j}]"
        if port.host_port != 0 and not 0 < port.host_port < 65536:
            yield f"{p}.hostPort", _invalid(port.host_port, _PORT_RANGE)
        if port.container_port == 0:
            yield f"{p}.containerPort", "Required value"
        elif not 0 < port.container_port < 65536:
            yield f"{p}.containerPort", _invalid(port.container_port, _PORT_RANGE)
        if not port.protocol:
            yield f"{p}.protocol", "Required value"
        elif port.protocol not in _PROTOCOLS:
            yield f"{p}.protocol", _supported(port.protocol, _PROTOCOLS)


def scheduling_errors(spec: PodSpec) -> Iterator[Problem]:
    """Every problem of ``spec``'s scheduling fields, as ``(path, detail)``, in upstream's order."""
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            if c.ports:
                yield from _ports(c, f"spec.{group}[{i}]")
    # Each section is entered only when present: this runs on every pod create.
    if spec.node_selector:
        yield from label_problems(spec.node_selector, "spec.nodeSelector")
    if spec.affinity is not None:
        yield from _affinity(spec.affinity, "spec.affinity")
    if spec.tolerations:
        yield from _tolerations(spec.tolerations, "spec.tolerations")
    if spec.topology_spread_constraints:
        yield from _spread_constraints(spec.topology_spread_constraints, "spec.topologySpreadConstraints")


def parse_exit_code(text: str) -> int:
    """An exit code annotation's value: a decimal integer 0..255, what a process exits with."""
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit()) or int(stripped) > 255:
        raise ValueError(f"{_EXIT_CODE_RANGE}, got {text!r}")
    return int(stripped)


def kubelet_annotation_problems(
    annotations: Mapping[str, str], path: str = "metadata.annotations"
) -> Iterator[Problem]:
    """The emulator's lifecycle annotations that the kubelet could not read, in a fixed order."""
    for name in (EXIT_CODE_ANNOTATION, INIT_EXIT_CODE_ANNOTATION):
        text = annotations.get(name)
        if text is not None:
            try:
                parse_exit_code(text)
            except ValueError:
                yield f"{path}[{name}]", f"Invalid value: {go_quote(text)}: {_EXIT_CODE_RANGE}"
    for name in _DURATION_ANNOTATIONS:
        text = annotations.get(name)
        if text is not None:
            try:
                parse_duration(text)
            except ValueError as err:
                yield f"{path}[{name}]", f"Invalid value: {go_quote(text)}: {err}"
    if (problem := usage_problem(annotations)) is not None:
        text = annotations[USAGE_ANNOTATION]
        yield f"{path}[{USAGE_ANNOTATION}]", f"Invalid value: {go_quote(text)}: {problem}"


def _toleration_key(t: Toleration) -> tuple[str, str, str, str]:
    return (t.key, t.operator, t.value, t.effect)


def pod_update_problem(old: PodSpec, new: PodSpec) -> Problem | None:
    """The first thing an update from ``old`` to ``new`` may not change (upstream
    ``ValidatePodUpdate``, for the fields the emulator has), or None."""
    if len(new.scheduling_gates) > len(old.scheduling_gates) or any(
        g not in old.scheduling_gates for g in new.scheduling_gates
    ):
        return "spec.schedulingGates", "Forbidden: only deletion is allowed, but found new scheduling gate"
    new_keys = [_toleration_key(t) for t in new.tolerations]
    if any(_toleration_key(t) not in new_keys for t in old.tolerations):
        return "spec.tolerations", "Forbidden: existing toleration can not be modified except its tolerationSeconds"
    cmp_new = replace(
        new,
        scheduling_gates=old.scheduling_gates,
        tolerations=old.tolerations,
        containers=[replace(c, image=o.image) for c, o in zip(new.containers, old.containers, strict=False)],
        init_containers=[
            replace(c, image=o.image) for c, o in zip(new.init_containers, old.init_containers, strict=False)
        ],
    )
    if (
        len(new.containers) != len(old.containers)
        or len(new.init_containers) != len(old.init_containers)
        or cmp_new != old
    ):
        return (
            "spec",
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
            "`spec.tolerations` (only additions to existing tolerations) and `spec.schedulingGates`",
        )
    return None
