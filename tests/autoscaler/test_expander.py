"""The expanders, on upstream's own cases: ``expander/waste/waste_test.go`` ``TestLeastWaste``,
``expander/mostpods`` (most pods wins, ties kept), ``expander/priority/priority_test.go``
(its ``config`` and ``wildcardMatchConfig`` tables), ``expander/price/price_test.go`` (a
cheaper node per pod wins; preferred-node unfitness), ``expander/factory/chain.go`` (filters
in turn, then ``random`` from the seeded stream)."""

from __future__ import annotations

import random

import pytest

from agents.autoscaler.clusterautoscaler.expander import (
    Option,
    best_option,
    least_waste,
    most_pods,
    preferred_cpu,
    price,
    priority,
)
from tests.builders import node, pod

CPU_PER_POD = 500
MEMORY_PER_POD = 1000 * 1024 * 1024
POD = pod("p", uid="p", cpu=f"{CPU_PER_POD}m", memory=str(MEMORY_PER_POD))


def _template(cpu_m: int, memory: int):  # type: ignore[no-untyped-def]
    return node("t", cpu=f"{cpu_m}m", memory=str(memory), pods="100")


def _option(group: str, cpu_m: int, memory: int, pods: int = 1, count: int = 1, price_per_hour: float = 0.0) -> Option:
    return Option(group, count, [POD] * pods, _template(cpu_m, memory), price_per_hour)


def test_least_waste_upstream_cases() -> None:
    balanced = _option("balanced", 16 * CPU_PER_POD, 16 * MEMORY_PER_POD)
    assert least_waste([balanced]) == [balanced]
    highmem = _option("highmem", 16 * CPU_PER_POD, 32 * MEMORY_PER_POD)
    assert least_waste([balanced, highmem]) == [balanced]
    lowcpu = _option("lowcpu", 8 * CPU_PER_POD, 16 * MEMORY_PER_POD)
    assert least_waste([balanced, highmem, lowcpu]) == [lowcpu]


def test_most_pods_keeps_ties() -> None:
    a, b, c = _option("a", 1000, 2**30, pods=2), _option("b", 1000, 2**30, pods=3), _option("c", 1000, 2**30, pods=3)
    assert most_pods([a, b, c]) == [b, c]


CONFIG = {5: [r".*t2\.micro.*"], 10: [r".*t2\.large.*", r".*t3\.large.*"], 50: [r".*m4\.4xlarge.*"]}
WILDCARD = {5: [".*"], 10: [r".t2\.large.*"]}
T2MICRO, T2LARGE, T3LARGE, M4 = (
    _option(f"my-asg.{t}", 1000, 2**30) for t in ("t2.micro", "t2.large", "t3.large", "m4.4xlarge")
)


@pytest.mark.parametrize(
    ("config", "options", "best"),
    [
        pytest.param(CONFIG, [T2LARGE], [T2LARGE], id="SingleMatchingOptionOutOfOne"),
        pytest.param(CONFIG, [T2LARGE, M4], [M4], id="SingleMatchingOptionOutOfMany"),
        pytest.param(WILDCARD, [T2LARGE, T2MICRO], [T2LARGE], id="FiltersToHigherPriorityMatch"),
        pytest.param(CONFIG, [T2LARGE, T3LARGE, T2MICRO], [T2LARGE, T3LARGE], id="TwoMatchingOptionsOutOfMany"),
        pytest.param({10: [r".*t\.large.*"]}, [T2LARGE, T3LARGE], [T2LARGE, T3LARGE], id="FallsBackToAllWhenNoMatches"),
    ],
)
def test_priority_upstream_cases(config: dict[int, list[str]], options: list[Option], best: list[Option]) -> None:
    assert priority(options, config) == best


def test_price_prefers_cheaper_capacity_per_pod() -> None:
    # same shape, different price: the cheaper wins
    cheap = _option("cheap", 4000, 16 * 2**30, pods=4, price_per_hour=0.1)
    dear = _option("dear", 4000, 16 * 2**30, pods=4, price_per_hour=0.2)
    assert price([dear, cheap], cluster_size=10) == [cheap]
    # the preferred node for 10 nodes has 4 cores: an 8-core node at the same price per core loses
    big = _option("big", 8000, 32 * 2**30, pods=4, price_per_hour=0.2)
    small = _option("small", 4000, 16 * 2**30, pods=4, price_per_hour=0.1)
    assert price([big, small], cluster_size=10) == [small]


@pytest.mark.parametrize(
    ("size", "cores"), [(1, 1), (2, 1), (3, 2), (6, 2), (7, 4), (20, 4), (60, 8), (200, 16), (201, 32)]
)
def test_preferred_node_follows_cluster_size(size: int, cores: int) -> None:
    assert preferred_cpu(size) == cores * 1000


def test_chain_then_seeded_random() -> None:
    a, b, c = _option("a", 1000, 2**30, pods=3), _option("b", 1000, 2**30, pods=3), _option("c", 1000, 2**30, pods=1)
    picks = [best_option([a, b, c], ["most-pods"], random.Random(s), cluster_size=3, priorities={}) for s in range(20)]
    assert {p.group for p in picks if p is not None} == {"a", "b"}
    again = [best_option([a, b, c], ["most-pods"], random.Random(s), cluster_size=3, priorities={}) for s in range(20)]
    assert picks == again  # the same seed picks the same option
    # a filter that keeps nothing leaves the list as it was (chain.go)
    assert best_option([c], ["priority", "least-waste"], random.Random(0), cluster_size=3, priorities={1: ["x"]}) is c
    assert best_option([], ["random"], random.Random(0), cluster_size=0, priorities={}) is None
