"""A pod's ConfigMap and Secret references, resolved through the API server before its
containers start: upstream's volume manager (``pkg/kubelet/volumemanager``, the ``configmap``
and ``secret`` volume plugins' ``SetUp``) and ``makeEnvironmentVariables``
(``pkg/kubelet/kubelet_pods.go``), called from ``generateContainerConfig``.

``PodWorker.run_pod`` calls ``mount_volumes`` before the image pulls (upstream mounts the
volumes before the runtime's ``SyncPod``) and ``resolve_env`` after them (upstream builds the
container config, env included, after pulling the image); a pod with neither kind of reference
skips both (``volume_refs``/``env_refs`` are a loop over its lists, no call).

=====================  ====================================================================
reference              missing and not ``optional``
=====================  ====================================================================
volume ``configMap`` / the pod stays ``ContainerCreating`` (its pending status); a Warning
``secret``             ``FailedMount`` Event per failed try, ``MountVolume.SetUp failed for
                       volume "v" : configmap "x" not found`` (or ``configmap references
                       non-existent config key: k`` for a missing ``items`` key); retried
                       after upstream's ``exponentialbackoff`` (``pkg/util/goroutinemap``):
                       0.5 s doubling to 2 min 2 s
``envFrom``,           the containers wait: ``Waiting`` with reason
``valueFrom``          ``CreateContainerConfigError`` and upstream's message (``configmap "x"
``...KeyRef``          not found``, ``couldn't find key k in ConfigMap ns/x``), a Warning
                       ``Failed`` Event ``Error: <message>``; retried after the pod worker's
                       error back-off, ``wait.Jitter(10s, 0.5)`` (``backOffPeriod`` and
                       ``workerBackOffPeriodJitterFactor`` of ``pod_workers.go``): 10-15 s,
                       the jitter drawn from the kubelet's seeded stream
=====================  ====================================================================

Every try reads the objects with a ``get`` (upstream's default change detection is a watch per
referenced object; a get per try reads the same state at the same moments). Deviation, as the
emulator runs a pod's containers together: a container whose references resolve waits with
the others (``ContainerCreating``) instead of starting alone.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.config import ConfigMap, Secret
from emulator.base.api.core import Container, ContainerState, ContainerStateWaiting, Pod, PodSpec, PodStatus
from emulator.base.runtime.clock import Clock

__all__ = [
    "CREATE_CONTAINER_CONFIG_ERROR",
    "ConfigRefs",
    "env_problem",
    "env_refs",
    "volume_problem",
    "volume_refs",
]

CREATE_CONTAINER_CONFIG_ERROR: Final = "CreateContainerConfigError"
MOUNT_RETRY_INITIAL: Final = 0.5
MOUNT_RETRY_MAX: Final = 122.0
"""``initialDurationBeforeRetry`` and ``maxDurationBeforeRetry`` (2m2s) of upstream's
``exponentialbackoff``."""
SYNC_BACKOFF: Final = 10.0
SYNC_JITTER: Final = 0.5
"""The kubelet's ``backOffPeriod`` and ``workerBackOffPeriodJitterFactor``."""

Get = Callable[[str, str, str], Awaitable[Any]]
"""``get(kind, name, namespace)``: the object, or ``None`` when it is not found."""


def _containers(spec: PodSpec) -> Iterator[Container]:
    yield from spec.init_containers
    yield from spec.containers


def volume_refs(spec: PodSpec) -> bool:
    """The pod has a ConfigMap or Secret volume."""
    return any(v.config_map is not None or v.secret is not None for v in spec.volumes)


def env_refs(spec: PodSpec) -> bool:
    """A container of the pod reads a ConfigMap or Secret into its environment."""
    for c in (*spec.init_containers, *spec.containers):  # not ``_containers``: no generator per pod
        if c.env_from:
            return True
        for e in c.env:
            if e.value_from is not None and (e.value_from.config_map_key_ref or e.value_from.secret_key_ref):
                return True
    return False


async def volume_problem(spec: PodSpec, namespace: str, get: Get) -> tuple[str, str] | None:
    """The first volume that cannot be set up and why: (volume name, error)."""
    for v in spec.volumes:
        if v.config_map is not None:
            kind, name, items, optional = "ConfigMap", v.config_map.name, v.config_map.items, v.config_map.optional
        elif v.secret is not None:
            kind, name, items, optional = "Secret", v.secret.secret_name, v.secret.items, v.secret.optional
        else:
            continue
        obj = await get(kind, name, namespace)
        if obj is None:
            if not optional:
                return v.name, f'{kind.lower()} "{name}" not found'
            continue
        keys = (*obj.data, *obj.binary_data) if isinstance(obj, ConfigMap) else tuple(obj.data)
        for item in items:
            if item.key not in keys and not optional:
                what = (
                    "configmap references non-existent config key"
                    if kind == "ConfigMap"
                    else ("secret references non-existent secret key")
                )
                return v.name, f"{what}: {item.key}"
    return None


async def _container_env_problem(c: Container, namespace: str, get: Get, cache: dict[tuple[str, str], Any]) -> str:
    """``makeEnvironmentVariables``'s error for one container ('' if none): envFrom first,
    then env, each object read once per try."""

    async def read(kind: str, name: str) -> Any:
        if (kind, name) not in cache:
            cache[(kind, name)] = await get(kind, name, namespace)
        return cache[(kind, name)]

    for source in c.env_from:
        ref = source.config_map_ref or source.secret_ref
        if ref is None:
            continue
        kind = "ConfigMap" if source.config_map_ref is not None else "Secret"
        if await read(kind, ref.name) is None and not ref.optional:
            return f'{kind.lower()} "{ref.name}" not found'
    for e in c.env:
        src = e.value_from
        if src is None:
            continue
        sel = src.config_map_key_ref or src.secret_key_ref
        if sel is None:
            continue
        kind = "ConfigMap" if src.config_map_key_ref is not None else "Secret"
        obj = await read(kind, sel.name)
        if obj is None:
            if sel.optional:
                continue
            return f'{kind.lower()} "{sel.name}" not found'
        present = sel.key in obj.data or (isinstance(obj, ConfigMap) and sel.key in obj.binary_data)
        if not present and not sel.optional:
            return f"couldn't find key {sel.key} in {kind} {namespace}/{sel.name}"
    return ""


async def env_problem(spec: PodSpec, namespace: str, get: Get) -> dict[str, str]:
    """Container name → ``makeEnvironmentVariables``' error, for the containers that have one."""
    cache: dict[tuple[str, str], Any] = {}
    out: dict[str, str] = {}
    for c in _containers(spec):
        if problem := await _container_env_problem(c, namespace, get, cache):
            out[c.name] = problem
    return out


def config_error_status(status: PodStatus, errors: dict[str, str]) -> PodStatus:
    """The pending status with the failing containers ``Waiting`` in ``CreateContainerConfigError``."""

    def mark(statuses: list[Any]) -> list[Any]:
        return [
            replace(
                cs,
                state=ContainerState(
                    waiting=ContainerStateWaiting(reason=CREATE_CONTAINER_CONFIG_ERROR, message=errors[cs.name])
                ),
            )
            if cs.name in errors
            else cs
            for cs in statuses
        ]

    return replace(
        status,
        container_statuses=mark(status.container_statuses),
        init_container_statuses=mark(status.init_container_statuses),
    )


class ConfigRefs:
    """What one kubelet does about its pods' ConfigMap and Secret references."""

    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        get: Get,
        event: Callable[[Pod, str, str, str], Awaitable[None]],
    ) -> None:
        self._clock = clock
        self._rng = rng
        self._get = get
        self._event = event
        self.mount_failures = 0
        self.config_errors = 0

    def __repr__(self) -> str:
        return f"<ConfigRefs mount_failures={self.mount_failures} config_errors={self.config_errors}>"

    async def _get_config(self, kind: str, name: str, namespace: str) -> ConfigMap | Secret | None:
        obj: ConfigMap | Secret | None = await self._get(kind, name, namespace)
        return obj

    async def mount_volumes(self, pod: Callable[[], Pod]) -> None:
        """Return once every ConfigMap and Secret volume of ``pod()`` can be set up."""
        delay = MOUNT_RETRY_INITIAL
        while (problem := await volume_problem(pod().spec, pod().metadata.namespace, self._get_config)) is not None:
            self.mount_failures += 1
            volume, error = problem
            await self._event(
                pod(), "Warning", "FailedMount", f'MountVolume.SetUp failed for volume "{volume}" : {error}'
            )
            await self._clock.sleep(delay)
            delay = min(delay * 2, MOUNT_RETRY_MAX)

    async def resolve_env(
        self,
        pod: Callable[[], Pod],
        write: Callable[[Callable[[Pod], PodStatus]], Awaitable[Pod | None]],
        pending: Callable[[Pod], PodStatus],
    ) -> None:
        """Return once every container's environment can be built; until then the failing
        containers wait in ``CreateContainerConfigError`` (``pending``: the pod's pending
        status, which the failures are written over)."""
        while errors := await env_problem(pod().spec, pod().metadata.namespace, self._get_config):
            self.config_errors += 1
            written = await write(lambda p: config_error_status(pending(p), errors))
            for message in errors.values():
                await self._event(written or pod(), "Warning", "Failed", f"Error: {message}")
            await self._clock.sleep(SYNC_BACKOFF * (1 + SYNC_JITTER * self._rng.random()))
