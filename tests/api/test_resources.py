"""Resource arithmetic: ``pod_requests`` as upstream ``PodRequests`` (containers, sidecars,
init containers, overhead), ``node_allocatable`` and ``amount``; exact, never float."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.codec import convert
from emulator.base.api.core import Container, Node, Pod
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, amount, node_allocatable, pod_requests
from tests import builders

GI = 1 << 30
MI = 1 << 20


def c(name: str, restart: str | None = None, **requests: str) -> Container:
    return builders.container(name, image="i", requests=requests, restart_policy=restart or None)


def pod(
    containers: list[Container], init: list[Container] | None = None, overhead: dict[str, str] | None = None
) -> Pod:
    return builders.pod("p", namespace="", containers=containers, init_containers=init or (), overhead=overhead)


def test_constants() -> None:
    assert (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) == ("cpu", "memory", "ephemeral-storage", "pods")


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        pytest.param(pod([c("a")]), {}, id="no-requests"),
        pytest.param(pod([c("a", cpu="100m", memory="1Gi")]), {"cpu": 100, "memory": GI}, id="one-container"),
        pytest.param(
            pod([c("a", cpu="100m", memory="1Gi"), c("b", cpu="0.5", memory="512Mi")]),
            {"cpu": 600, "memory": GI + 512 * MI},
            id="containers-sum",
        ),
        pytest.param(
            pod([c("a", cpu="100m")], [c("i", cpu="2")]),
            {"cpu": 2000},
            id="init-container-max",
        ),
        pytest.param(
            pod([c("a", cpu="3")], [c("i", cpu="2")]),
            {"cpu": 3000},
            id="init-below-containers",
        ),
        pytest.param(
            pod([c("a", cpu="100m")], [c("i1", cpu="1"), c("i2", cpu="500m", memory="1Gi")]),
            {"cpu": 1000, "memory": GI},
            id="init-max-per-resource",
        ),
        pytest.param(
            pod([c("a", cpu="1")], [c("side", "Always", cpu="500m")]),
            {"cpu": 1500},
            id="sidecar-adds-to-containers",
        ),
        pytest.param(
            # the sidecar (500m) keeps running while init i (1) runs: 1500 > containers + sidecar (700)
            pod([c("a", cpu="200m")], [c("side", "Always", cpu="500m"), c("i", cpu="1")]),
            {"cpu": 1500},
            id="init-after-sidecar-counts-sidecar",
        ),
        pytest.param(
            # init i runs before the sidecar starts: only its own request counts for it.
            pod([c("a", cpu="200m")], [c("i", cpu="1"), c("side", "Always", cpu="500m")]),
            {"cpu": 1000},
            id="init-before-sidecar",
        ),
        pytest.param(
            pod([c("a", cpu="100m")], [c("s1", "Always", cpu="1"), c("s2", "Always", cpu="1"), c("i", cpu="1")]),
            {"cpu": 3000},
            id="two-sidecars-then-init",
        ),
        pytest.param(
            pod([c("a", cpu="1", memory="1Gi")], overhead={"cpu": "250m", "memory": "120Mi"}),
            {"cpu": 1250, "memory": GI + 120 * MI},
            id="overhead-added",
        ),
        pytest.param(
            pod([c("a", cpu="1")], [c("i", cpu="4")], overhead={"cpu": "100m"}),
            {"cpu": 4100},
            id="overhead-after-init-max",
        ),
        pytest.param(
            pod([c("a", memory="0.5"), c("b", memory="0.5")]),
            {"memory": 1},
            id="memory-fractions-summed-exactly",
        ),
        pytest.param(pod([c("a", memory="1.5")]), {"memory": 2}, id="memory-rounded-up-at-the-end"),
        pytest.param(
            pod([c("a", **{"example.com/gpu": "2", "ephemeral-storage": "1Gi"})]),
            {"example.com/gpu": 2, "ephemeral-storage": GI},
            id="extended-resources",
        ),
        pytest.param(pod([c("a", cpu="0.1"), c("b", cpu="0.2")]), {"cpu": 300}, id="no-float-error"),
    ],
)
def test_pod_requests(p: Pod, expected: dict[str, int]) -> None:
    assert pod_requests(p) == expected


@given(st.lists(st.integers(min_value=0, max_value=10**7), min_size=1, max_size=8))
def test_pod_requests_cpu_is_the_exact_sum(millis: list[int]) -> None:
    p = pod([c(f"c{i}", cpu=f"{m}m") for i, m in enumerate(millis)])
    assert pod_requests(p)["cpu"] == sum(millis)


@given(
    st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=4),
)
def test_pod_requests_init_is_max(regular: list[int], init: list[int]) -> None:
    p = pod(
        [c(f"c{i}", cpu=f"{m}m") for i, m in enumerate(regular)],
        [c(f"i{i}", cpu=f"{m}m") for i, m in enumerate(init)],
    )
    assert pod_requests(p)["cpu"] == max(sum(regular), max(init))


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        pytest.param(
            {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
            {"cpu": 4000, "memory": 16 * GI, "pods": 110},
            id="capacity-when-no-allocatable",
        ),
        pytest.param(
            {"capacity": {"cpu": "4", "memory": "16Gi"}, "allocatable": {"cpu": "3500m", "memory": "15Gi"}},
            {"cpu": 3500, "memory": 15 * GI},
            id="allocatable-preferred",
        ),
        pytest.param({}, {}, id="empty"),
        pytest.param({"allocatable": {"cpu": "1.5", "memory": "100.5"}}, {"cpu": 1500, "memory": 101}, id="round-up"),
    ],
)
def test_node_allocatable(status: dict[str, Any], expected: dict[str, int]) -> None:
    assert node_allocatable(convert({"metadata": {"name": "n"}, "status": status}, Node)) == expected


@pytest.mark.parametrize(
    ("resource", "text", "expected"),
    [
        pytest.param("cpu", "1500u", 2, id="cpu-millicores-rounded-up"),
        pytest.param("cpu", "2", 2000, id="cpu-cores"),
        pytest.param("memory", "1Ki", 1024, id="memory-bytes"),
        pytest.param("memory", "1m", 1, id="memory-rounded-up"),
        pytest.param("pods", "110", 110, id="pods-count"),
    ],
)
def test_amount(resource: str, text: str, expected: int) -> None:
    assert amount(resource, parse_quantity(text)) == expected
