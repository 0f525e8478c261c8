"""In-place pod resize (``InPlacePodVerticalScaling``, beta and on in 1.33/1.34): what a write to
``pods/<name>/resize`` may change and the rules it must keep.

Upstream ``pkg/registry/core/pod/strategy.go`` (``podResizeStrategy.PrepareForUpdate`` →
``dropNonResizeUpdates``) and ``pkg/apis/core/validation/validation.go``
(``ValidatePodResize``, ``validateContainerResize``, ``dropCPUMemoryResourcesFromContainer``,
``isPodResizeRequestSupported``):

- ``resize_candidate``: the stored pod with only ``resources`` and ``resizePolicy`` of its
  containers (and init containers) taken from the written pod, matched by name; every other
  change the client made is dropped, as upstream drops it.
- ``resize_problems``: the candidate against the stored pod, in upstream's order: pod-level
  resources, static (mirror) pods and Windows pods cannot be resized (one error each, alone);
  the QoS class may not change; a pod whose running container reports no
  ``status.containerStatuses[].resources`` is on a node without resize support; requests and
  limits cannot be removed; a memory limit cannot be lowered (or added) unless the memory
  ``resizePolicy`` is ``RestartContainer``; only cpu and memory may change (of regular and
  sidecar containers; a non-sidecar init container's resources not at all).

The QoS classes are given by the caller (the API server's ``qos_class``), as this layer does
not compute them. Problems are ``(path, detail)`` pairs as pod validation's.

``resize_policy_problems``: every container's ``resizePolicy`` as pod validation checks it on
create and update (upstream ``validateResizePolicy``): each resource named once, cpu or memory,
``NotRequired`` or ``RestartContainer``, and only ``NotRequired`` in a pod whose
``restartPolicy`` is ``Never``. In 1.34 (InPlacePodVerticalScaling on) init containers may
carry one too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from msgspec import UNSET
from msgspec.structs import replace

from emulator.base.api.core import Container, ContainerResizePolicy, Pod, PodSpec, ResourceList, ResourceRequirements
from emulator.base.api.labels import go_quote

__all__ = [
    "MIRROR_POD_ANNOTATION",
    "NOT_REQUIRED",
    "RESTART_CONTAINER",
    "Problem",
    "resize_candidate",
    "resize_policy_problems",
    "resize_problems",
]

Problem = tuple[str, str]

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
_CPU_MEMORY = ("cpu", "memory")
RESTART_CONTAINER = "RestartContainer"
NOT_REQUIRED = "NotRequired"


def _policy_list(policies: list[ContainerResizePolicy], path: str, never: bool) -> Iterator[Problem]:
    """Upstream ``validateResizePolicy`` of one container's list."""
    seen: set[str] = set()
    for i, p in enumerate(policies):
        if p.resource_name in seen:
            yield f"{path}[{i}]", f"Duplicate value: {go_quote(p.resource_name)}"
        seen.add(p.resource_name)
        if not p.resource_name:
            yield path, "Required value"
        elif p.resource_name not in _CPU_MEMORY:
            yield path, f'Unsupported value: {go_quote(p.resource_name)}: supported values: "cpu", "memory"'
        if not p.restart_policy:
            yield path, "Required value"
        elif p.restart_policy not in (NOT_REQUIRED, RESTART_CONTAINER):
            detail = f'supported values: "{NOT_REQUIRED}", "{RESTART_CONTAINER}"'
            yield path, f"Unsupported value: {go_quote(p.restart_policy)}: {detail}"
        if never and p.restart_policy != NOT_REQUIRED:
            yield (
                path,
                f"Invalid value: {go_quote(p.restart_policy)}: must be 'NotRequired' when `restartPolicy` is 'Never'",
            )


def resize_policy_problems(spec: PodSpec) -> Iterator[Problem]:
    """Every problem of the containers' ``resizePolicy`` lists, as ``(path, detail)``."""
    never = spec.restart_policy == "Never"
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            if c.resize_policy:
                yield from _policy_list(c.resize_policy, f"spec.{group}[{i}].resizePolicy", never)


def _with_resize(old: list[Container], new: list[Container]) -> list[Container]:
    by_name = {c.name: c for c in new}
    out: list[Container] = []
    for c in old:
        n = by_name.get(c.name)
        out.append(c if n is None else replace(c, resources=n.resources, resize_policy=n.resize_policy))
    return out


def resize_candidate(current: Pod, written: Pod) -> Pod:
    """``current`` with the containers' ``resources`` and ``resizePolicy`` of ``written``
    (upstream ``dropNonResizeUpdates``)."""
    spec = replace(
        current.spec,
        containers=_with_resize(current.spec.containers, written.spec.containers),
        init_containers=_with_resize(current.spec.init_containers, written.spec.init_containers),
    )
    return current if spec == current.spec else replace(current, spec=spec)


def _is_sidecar(c: Container) -> bool:
    return c.restart_policy == "Always"


def _removed(new: ResourceList, old: ResourceList) -> bool:
    return len(old) > len(new) or any(name not in new for name in old)


def _container_resize(new: Container, old: Container, path: str) -> list[Problem]:
    """Upstream ``validateContainerResize``."""
    out: list[Problem] = []
    nr, orq = new.resources, old.resources
    if _removed(nr.requests, orq.requests):
        out.append((f"{path}.requests", "Forbidden: resource requests cannot be removed"))
    if _removed(nr.limits, orq.limits):
        out.append((f"{path}.limits", "Forbidden: resource limits cannot be removed"))
    memory_policy = next((p.restart_policy for p in new.resize_policy if p.resource_name == "memory"), "")
    if memory_policy in (NOT_REQUIRED, ""):
        new_limit, old_limit = nr.limits.get("memory"), orq.limits.get("memory")
        if new_limit is not None and old_limit is not None:
            if new_limit.milli < old_limit.milli:
                out.append(
                    (
                        f"{path}.limits[memory]",
                        f"Forbidden: memory limits cannot be decreased unless resizePolicy is {RESTART_CONTAINER}",
                    )
                )
        elif new_limit is not None:
            out.append(
                (
                    f"{path}.limits[memory]",
                    f"Forbidden: memory limits cannot be added unless resizePolicy is {RESTART_CONTAINER}",
                )
            )
    return out


def _munged(new: ResourceList, old: ResourceList) -> ResourceList | None:
    """Upstream ``dropCPUMemoryUpdates``: ``new`` with cpu and memory as in ``old`` (None: old had none)."""
    if not old:
        return None
    out = {k: v for k, v in new.items() if k not in _CPU_MEMORY}
    for name in _CPU_MEMORY:
        if name in old:
            out[name] = old[name]
    return out


def _same_but_cpu_memory(new: Container, old: Container) -> bool:
    """``new`` equals ``old`` once its cpu and memory are put back (upstream
    ``dropCPUMemoryResourcesFromContainer`` then ``Semantic.DeepEqual``)."""
    limits = _munged(new.resources.limits, old.resources.limits)
    requests = _munged(new.resources.requests, old.resources.requests)
    munged = replace(new, resources=ResourceRequirements(requests=requests or {}, limits=limits or {}))
    return munged == old


def _resize_supported(pod: Pod) -> bool:
    """Upstream ``isPodResizeRequestSupported``: the first running container reports its resources."""
    for cs in pod.status.container_statuses:
        if cs.state.running is not None:
            return cs.resources is not UNSET
    return True


def _unmodelled(pod: Pod) -> Mapping[str, object]:
    got = pod.spec.unmodelled.get("set", {})
    return got if isinstance(got, dict) else {}


def resize_problems(old: Pod, new: Pod, *, old_qos: str, new_qos: str) -> list[Problem]:
    """What is wrong with resizing ``old`` to ``new`` (``new`` from ``resize_candidate``);
    upstream ``ValidatePodResize`` for the fields the emulator has. ``old_qos`` is the stored
    pod's QoS class, ``new_qos`` the one ``new``'s resources give."""
    for pod in (old, new):
        resources = _unmodelled(pod).get("resources")
        if isinstance(resources, dict) and (resources.get("requests") or resources.get("limits")):
            return [("", "Forbidden: pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in old.metadata.annotations:
        return [("", "Forbidden: static pods cannot be resized")]
    os = _unmodelled(old).get("os")
    if isinstance(os, dict) and os.get("name") == "windows":
        return [("", "Forbidden: windows pods cannot be resized")]
    out: list[Problem] = []
    if old_qos != new_qos:
        shown = go_quote(new.status.qos_class)
        out.append(("spec", f"Invalid value: {shown}: Pod QOS Class may not change as a result of resizing"))
    if not _resize_supported(old):
        out.append(("spec", "Forbidden: Pod running on node without support for resize"))
    for ix, c in enumerate(old.spec.init_containers):
        if _is_sidecar(c):
            out += _container_resize(new.spec.init_containers[ix], c, f"spec.initContainers[{ix}].resources")
    for ix, c in enumerate(old.spec.containers):
        out += _container_resize(new.spec.containers[ix], c, f"spec.containers[{ix}].resources")
    for ix, c in enumerate(new.spec.containers):
        if not _same_but_cpu_memory(c, old.spec.containers[ix]):
            out.append(("spec", "Forbidden: only cpu and memory resources are mutable"))
    for ix, c in enumerate(new.spec.init_containers):
        o = old.spec.init_containers[ix]
        if _is_sidecar(c):
            if not _same_but_cpu_memory(c, o):
                out.append(("spec", "Forbidden: only cpu and memory resources for sidecar containers are mutable"))
        elif c != o:
            out.append(("spec", "Forbidden: resources for non-sidecar init containers are immutable"))
    return out
