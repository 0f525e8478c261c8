"""``spec.podFailurePolicy``: how a failed pod counts, as upstream's ``pod_failure_policy.go``.

``match(policy, pod)`` walks the rules in order and stops at the first that matches the
failed pod:

==========  =============================================  ===================  ==========
action      matched by                                     counts to backoff    fails Job
==========  =============================================  ===================  ==========
FailJob     ``onExitCodes`` / ``onPodConditions``          yes                  yes
Ignore      same                                           no                   no
Count       same                                           yes                  no
FailIndex   same                                           yes                  no (index)
(none)      no rule matched                                yes                  no
==========  =============================================  ===================  ==========

``onExitCodes`` looks at terminated containers with a non-zero exit code, regular
containers first, then init containers (``containerName`` narrows it); ``onPodConditions``
at the pod's conditions (type and status). The FailJob message is upstream's. Pure; the
controller decides what to do with the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from emulator.base.api.batch import PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement
from emulator.base.api.core import ContainerStatus, Pod

__all__ = ["PolicyMatch", "match"]


@dataclass(frozen=True, slots=True)
class PolicyMatch:
    fail_job_message: str | None
    count_failed: bool
    action: str | None


_NO_RULE = PolicyMatch(None, True, None)


def _exit_code_container(pod: Pod, req: PodFailurePolicyOnExitCodesRequirement) -> ContainerStatus | None:
    for statuses in (pod.status.container_statuses, pod.status.init_container_statuses):
        for s in statuses:
            term = s.state.terminated
            if term is None or term.exit_code == 0:
                continue
            if req.container_name is not None and req.container_name != s.name:
                continue
            inside = term.exit_code in req.values
            if (req.operator == "In" and inside) or (req.operator == "NotIn" and not inside):
                return s
    return None


def match(policy: PodFailurePolicy | None, pod: Pod) -> PolicyMatch:
    """Upstream ``matchPodFailurePolicy`` for a failed ``pod``."""
    if policy is None:
        return _NO_RULE
    ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
    for index, rule in enumerate(policy.rules):
        message: str | None = None
        if rule.on_exit_codes is not None:
            status = _exit_code_container(pod, rule.on_exit_codes)
            if status is None:
                continue
            code = status.state.terminated.exit_code if status.state.terminated else 0
            message = (
                f"Container {status.name} for pod {ref} failed with exit code {code} "
                f"matching {rule.action} rule at index {index}"
            )
        elif rule.on_pod_conditions:
            cond = next(
                (
                    c
                    for c in pod.status.conditions
                    if any(c.type == p.type and c.status == p.status for p in rule.on_pod_conditions)
                ),
                None,
            )
            if cond is None:
                continue
            message = f"Pod {ref} has condition {cond.type} matching {rule.action} rule at index {index}"
        else:
            continue
        match rule.action:
            case "Ignore":
                return PolicyMatch(None, False, "Ignore")
            case "FailJob":
                return PolicyMatch(message, True, "FailJob")
            case "Count" | "FailIndex":
                return PolicyMatch(None, True, rule.action)
    return _NO_RULE
