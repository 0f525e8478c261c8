"""The ``pods/resize`` subresource (upstream ``podResizeStrategy`` and ``ValidatePodResize``):
only the containers' resources and resize policies change, the rules of 1.34 hold (cases ported
from upstream's ``TestValidatePodResize``), the generation moves, and the main endpoint still
refuses a change of resources."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from emulator.base.api.core import (
    Container,
    ContainerResizePolicy,
    ContainerState,
    ContainerStateRunning,
    ContainerStatus,
    Pod,
    PodSpec,
    PodStatus,
    ResourceRequirements,
)
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.podresize import resize_candidate, resize_problems
from emulator.base.api.quantity import parse_quantity
from emulator.base.apiserver.defaults import qos_class
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock


def _rl(**kw: str) -> dict[str, Any]:
    return {k.replace("_", "-"): parse_quantity(v) for k, v in kw.items()}


def _ctr(
    req: dict[str, Any] | None = None, lim: dict[str, Any] | None = None, policy: str = "", name: str = "c"
) -> Container:
    rp = [ContainerResizePolicy(resource_name="memory", restart_policy=policy)] if policy else []
    return Container(
        name=name, image="i", resources=ResourceRequirements(requests=req or {}, limits=lim or {}), resize_policy=rp
    )


def _pod(*containers: Container, annotations: dict[str, str] | None = None, running: bool = True) -> Pod:
    pod = Pod(
        metadata=ObjectMeta(name="p", namespace="default", annotations=annotations or {}),
        spec=PodSpec(containers=list(containers)),
    )
    statuses = [
        ContainerStatus(
            name=c.name,
            state=ContainerState(running=ContainerStateRunning()) if running else ContainerState(),
            resources=c.resources,
        )
        for c in containers
    ]
    return replace(pod, status=PodStatus(qos_class=qos_class(pod), container_statuses=statuses))


def _problems(old: Pod, new: Pod) -> list[tuple[str, str]]:
    cand = resize_candidate(old, new)
    return resize_problems(old, cand, old_qos=old.status.qos_class, new_qos=qos_class(cand))


CPU1 = _rl(cpu="100m")
CPU2 = _rl(cpu="200m")
MEM1 = _rl(memory="100Mi")
MEM2 = _rl(memory="200Mi")
BOTH1 = _rl(cpu="100m", memory="100Mi")
BOTH2 = _rl(cpu="200m", memory="200Mi")

CASES = [
    ("cpu request change", _ctr(CPU1), _ctr(CPU2), []),
    ("memory request change", _ctr(MEM1), _ctr(MEM2), []),
    ("guaranteed: cpu and memory up together", _ctr(BOTH1, BOTH1), _ctr(BOTH2, BOTH2), []),
    (
        "guaranteed to burstable",
        _ctr(BOTH1, BOTH1),
        _ctr(BOTH1, BOTH2),
        [("spec", 'Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing')],
    ),
    (
        "best effort to burstable",
        _ctr(),
        _ctr(CPU1),
        [("spec", 'Invalid value: "BestEffort": Pod QOS Class may not change as a result of resizing')],
    ),
    (
        "requests removed",
        _ctr(BOTH1),
        _ctr(CPU1),
        [("spec.containers[0].resources.requests", "Forbidden: resource requests cannot be removed")],
    ),
    (
        "memory limit decreased, NotRequired",
        _ctr(MEM1, MEM2),
        _ctr(MEM1, _rl(memory="150Mi")),
        [
            (
                "spec.containers[0].resources.limits[memory]",
                "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer",
            )
        ],
    ),
    (
        "memory limit decreased, RestartContainer",
        _ctr(MEM1, MEM2, "RestartContainer"),
        _ctr(MEM1, _rl(memory="150Mi"), "RestartContainer"),
        [],
    ),
    (
        "memory limit added",
        _ctr(BOTH1, CPU2),
        _ctr(BOTH1, _rl(cpu="200m", memory="200Mi")),
        [
            (
                "spec.containers[0].resources.limits[memory]",
                "Forbidden: memory limits cannot be added unless resizePolicy is RestartContainer",
            )
        ],
    ),
    (
        "storage request changed",
        _ctr(_rl(cpu="100m", ephemeral_storage="1Gi")),
        _ctr(_rl(cpu="100m", ephemeral_storage="2Gi")),
        [("spec", "Forbidden: only cpu and memory resources are mutable")],
    ),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), CASES, ids=[c[0] for c in CASES])
def test_validate_pod_resize(name: str, old: Container, new: Container, want: list[tuple[str, str]]) -> None:
    assert _problems(_pod(old), _pod(new)) == want


def test_static_pod_cannot_be_resized() -> None:
    old = _pod(_ctr(CPU1), annotations={"kubernetes.io/config.mirror": "x"})
    assert _problems(old, _pod(_ctr(CPU2))) == [("", "Forbidden: static pods cannot be resized")]


def test_running_container_without_status_resources() -> None:
    old = _pod(_ctr(CPU1))
    old = replace(
        old,
        status=replace(
            old.status,
            container_statuses=[replace(s, resources=msgspec.UNSET) for s in old.status.container_statuses],
        ),
    )
    assert ("spec", "Forbidden: Pod running on node without support for resize") in _problems(old, _pod(_ctr(CPU2)))


def test_candidate_drops_other_changes() -> None:
    old = _pod(_ctr(CPU1))
    written = replace(
        _pod(replace(_ctr(CPU2), image="other")), metadata=ObjectMeta(name="p", namespace="default", labels={"a": "b"})
    )
    cand = resize_candidate(old, written)
    assert cand.spec.containers[0].image == "i"
    assert cand.spec.containers[0].resources.requests == CPU2
    assert cand.metadata.labels == {}


def _server() -> ApiServer:
    from emulator.base.api.core import Namespace

    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    return api


def test_resize_verb_bumps_generation_and_main_endpoint_refuses() -> None:
    api = _server()
    created = api.create(Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec(containers=[_ctr(CPU1)])))
    new_spec = replace(
        created.spec, containers=[replace(created.spec.containers[0], resources=ResourceRequirements(requests=CPU2))]
    )
    with pytest.raises(Invalid, match="pod updates may not change fields"):
        api.update(replace(created, spec=new_spec))
    resized = api.update_resize(replace(created, spec=new_spec))
    assert resized.spec.containers[0].resources.requests == CPU2
    assert resized.metadata.generation == created.metadata.generation + 1
    limits = ResourceRequirements(requests=BOTH1, limits=BOTH1)
    with pytest.raises(Invalid, match="Pod QOS Class may not change"):
        api.update_resize(
            replace(
                resized,
                metadata=replace(resized.metadata, resource_version=""),
                spec=replace(new_spec, containers=[replace(new_spec.containers[0], resources=limits)]),
            )
        )
