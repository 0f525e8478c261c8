"""Defaulting and admission on create, as upstream's apiserver and its default admission
plugins do it for the fields the emulator uses.

Pods: namespace ``default``, ``generateName``, ``schedulerName: default-scheduler``,
``restartPolicy: Always``, ``terminationGracePeriodSeconds: 30``, container requests
defaulted from limits, the ``Priority`` admission plugin (priority and preemptionPolicy
from the PriorityClass, the globalDefault class, or 0; an unknown class is rejected), the
``DefaultTolerationSeconds`` plugin (tolerate not-ready/unreachable NoExecute for 300 s),
and the status reset to ``phase: Pending`` with the QoS class (``PrepareForCreate``).
Nodes: allocatable defaults to capacity. ``default_pod_update``: what decoding and admission
make of a pod update's body (the spec defaults and default tolerations again, the priority
fields kept from the stored pod), for callers that replace a pod with a bare manifest.

``PodAdmission`` is what the API server calls on a pod create: ``default_pod`` and
``validate``, memoised per client spec. A run creates most pods from a few templates (a
scenario's ``createPods``, a ReplicaSet's template), and both steps cost far more than
encoding the spec: the defaulted spec, the status and the fact that the spec is valid are
kept per encoded spec, and a pod whose spec is in the memo only has its metadata defaulted
and validated (``validate_pod_metadata``). Only the spec and the PriorityClasses are read to
default and validate a spec, so the memo is keyed on the spec's encoding (by value: an equal
spec built anew hits, a spec changed in place misses) and emptied on every PriorityClass
write (``clear``); only successes are kept, so a refused pod is refused by the full path with
its exact message. Pods created from one memo entry share its spec and status objects, which
are immutable like every stored object. ``tests/apiserver/test_pod_admission.py`` checks it
against ``default_pod`` + ``validate``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec
from msgspec.structs import replace

from emulator.base.api.codec import enc_hook
from emulator.base.api.core import Container, Node, Pod, PodSpec, PodStatus, ResourceRequirements, Toleration
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.api.validation import validate, validate_pod_metadata
from emulator.base.api.workloaddefaults import DEFAULT_SCHEDULER, default_pod_spec

__all__ = ["DEFAULT_SCHEDULER", "PodAdmission", "default_node", "default_pod", "qos_class"]

_DEFAULT_TOLERATIONS: Final = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute", toleration_seconds=300),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute", toleration_seconds=300),
)
_COMPUTE: Final = ("cpu", "memory")


def _container_defaults(c: Container) -> Container:
    res = c.resources
    if res.limits and any(k not in res.requests for k in res.limits):
        requests = dict(res.limits)
        requests.update(res.requests)
        return replace(c, resources=ResourceRequirements(requests=requests, limits=res.limits))
    return c


def qos_class(pod: Pod) -> str:
    """Upstream ``GetPodQOS``: Guaranteed, Burstable or BestEffort (only positive amounts
    count; Guaranteed needs cpu and memory limits in every container and summed requests
    equal to summed limits)."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for c in [*pod.spec.init_containers, *pod.spec.containers]:
        for name, q in c.resources.requests.items():
            if name in _COMPUTE and q.milli > 0:
                requests[name] = requests.get(name, 0) + q.milli
        found = set()
        for name, q in c.resources.limits.items():
            if name in _COMPUTE and q.milli > 0:
                found.add(name)
                limits[name] = limits.get(name, 0) + q.milli
        if not all(n in found for n in _COMPUTE):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and any(limits.get(name) != v for name, v in requests.items()):
        guaranteed = False
    return "Guaranteed" if guaranteed else "Burstable"


def _priority(pod: Pod, classes: Mapping[str, PriorityClass]) -> tuple[int, str | None, str]:
    name = pod.spec.priority_class_name
    if name:
        pc = classes.get(name)
        if pc is None:
            raise Invalid.at(
                "Pod",
                pod.metadata.name,
                "spec.priorityClassName",
                f'Invalid value: "{name}": no PriorityClass with name {name} was found',
            )
        return pc.value, pc.preemption_policy, name
    default = next((pc for pc in classes.values() if pc.global_default), None)
    if default is not None:
        return default.value, default.preemption_policy, default.metadata.name
    return 0, None, ""


def _default_pod_meta(meta: ObjectMeta, name_suffix: Callable[[], str]) -> ObjectMeta:
    """A generated name and the ``default`` namespace where the client left them out."""
    if not meta.name and meta.generate_name:
        meta = replace(meta, name=meta.generate_name + name_suffix())
    if not meta.namespace:
        meta = replace(meta, namespace="default")
    return meta


def default_pod(pod: Pod, *, classes: Mapping[str, PriorityClass], name_suffix: Callable[[], str]) -> Pod:
    """The pod as the apiserver stores it on create (metadata stamped by the caller)."""
    pod = replace(pod, metadata=_default_pod_meta(pod.metadata, name_suffix))
    spec = pod.spec
    value, policy, class_name = _priority(pod, classes)
    if spec.priority is not None and spec.priority != value:
        raise Invalid.at(
            "Pod",
            pod.metadata.name,
            "spec.priority",
            f"Invalid value: {spec.priority}: the integer value of priority ({spec.priority}) must not be "
            f"provided in pod spec; priority admission controller computed {value} from the given "
            "PriorityClass name",
        )
    changes: dict[str, Any] = {"priority": value}
    if class_name and not spec.priority_class_name:
        changes["priority_class_name"] = class_name
    if spec.preemption_policy is None:
        changes["preemption_policy"] = policy or "PreemptLowerPriority"
    spec = default_pod_spec(spec)  # restartPolicy, terminationGracePeriodSeconds, schedulerName
    containers = [_container_defaults(c) for c in spec.containers]
    if any(a is not b for a, b in zip(containers, spec.containers, strict=True)):
        changes["containers"] = containers
    inits = [_container_defaults(c) for c in spec.init_containers]
    if any(a is not b for a, b in zip(inits, spec.init_containers, strict=True)):
        changes["init_containers"] = inits
    changes["tolerations"] = _with_default_tolerations(spec.tolerations)
    pod = replace(pod, spec=replace(spec, **changes))
    # upstream PrepareForCreate: a new pod's status is Pending with its QoS class, whatever
    # the client sent.
    return replace(pod, status=PodStatus(phase="Pending", qos_class=qos_class(pod)))


def _with_default_tolerations(tolerations: Any) -> list[Toleration]:
    out = list(tolerations)
    for t in _DEFAULT_TOLERATIONS:
        if not any(x.key in (t.key, "") and x.effect in ("", "NoExecute") for x in out):
            out.append(t)
    return out


def default_pod_update(pod: Pod, current: Pod) -> Pod:
    """A pod update's body as upstream's apiserver has it before validation: defaulted when
    decoded (containers, restartPolicy, schedulerName...), ``DefaultTolerationSeconds`` (it
    admits updates too), and the ``Priority`` plugin's update rule: priority and
    preemptionPolicy left out keep the stored pod's (with the class name they came from)."""
    spec = default_pod_spec(pod.spec)
    changes: dict[str, Any] = {
        "containers": [_container_defaults(c) for c in spec.containers],
        "init_containers": [_container_defaults(c) for c in spec.init_containers],
        "tolerations": _with_default_tolerations(spec.tolerations),
    }
    if spec.priority is None and current.spec.priority is not None:
        changes["priority"] = current.spec.priority
        changes["priority_class_name"] = spec.priority_class_name or current.spec.priority_class_name
    if spec.preemption_policy is None:
        changes["preemption_policy"] = current.spec.preemption_policy
    return replace(pod, spec=replace(spec, **changes))


def default_node(node: Node) -> Node:
    status = node.status
    if status.capacity and not status.allocatable:
        return replace(node, status=replace(status, allocatable=dict(status.capacity)))
    if status.allocatable and not status.capacity:
        return replace(node, status=replace(status, capacity=dict(status.allocatable)))
    return node


_SPEC_KEY: Final = msgspec.msgpack.Encoder(enc_hook=enc_hook)
_MEMO_SIZE: Final = 256
"""Distinct specs kept; past that the memo starts again empty (a run has a few templates)."""


class PodAdmission:
    """``default_pod`` then ``validate`` of a pod to create, memoised per client spec (see
    the module docstring)."""

    def __init__(self) -> None:
        self._memo: dict[bytes, tuple[PodSpec, PodStatus]] = {}
        self.hits = 0

    def __repr__(self) -> str:
        return f"<PodAdmission specs={len(self._memo)} hits={self.hits}>"

    def clear(self) -> None:
        """Forget every spec (a PriorityClass was written: priorities may differ now)."""
        self._memo.clear()

    def admit(
        self,
        pod: Pod,
        *,
        classes: Callable[[], Mapping[str, PriorityClass]],
        name_suffix: Callable[[], str],
    ) -> Pod:
        """The pod as the API server stores it on create, validated (``Invalid`` if not)."""
        try:
            key: bytes | None = _SPEC_KEY.encode(pod.spec)
        except (TypeError, NotImplementedError):  # a value built in code that has no encoding
            key = None
        hit = self._memo.get(key) if key is not None else None
        if hit is None:
            out = default_pod(pod, classes=classes(), name_suffix=name_suffix)
            validate(out)
            if key is not None:
                if len(self._memo) >= _MEMO_SIZE:
                    self._memo.clear()
                self._memo[key] = (out.spec, out.status)
            return out
        self.hits += 1
        spec, status = hit
        out = replace(pod, metadata=_default_pod_meta(pod.metadata, name_suffix), spec=spec, status=status)
        validate_pod_metadata(out)
        return out
