"""The expanders: which scale-up option wins (``expander/``, 1.34).

An ``Option`` is one node group's estimate (nodes to add, the pods they would take). The
``--expander`` chain is a list of filters applied in turn (``expander/factory/chain.go``: each
keeps its best options; an empty result keeps the previous list), and ``random`` picks the one
left (the chain's fallback), drawn from the agent's seeded stream:

==============  ============================================================================
expander        best options (upstream file)
==============  ============================================================================
``random``      all (then one at random: ``random/random.go``)
``most-pods``   the most pods helped (``mostpods/mostpods.go``)
``least-waste`` the least wasted CPU + memory fraction of the new nodes' capacity
                (``waste/waste.go``: (cap - requested) / cap, summed over cpu and memory)
``price``       the lowest ``unfitness x (nodes' price + p0) / (pods' price + p0)``, where p0
                is the price of the 500m/500Mi stabilization pod, unfitness the CPU ratio to
                the preferred node for the cluster's size (``price/preferred.go``), damped by
                ``1 - tanh((n - 1) / 15)`` (``price/price.go``); an hour of each
``priority``    the groups of the highest priority whose regexes match the group's name
                (``priority/priority.go``); no match: all options
==============  ============================================================================

Prices (``pricing``): a node costs its group's ``pricePerHour``; a pod costs its requests at
GCE's on-demand rates, upstream's reference pricing model (``cloudprovider/gce/gce_price_model.go``:
$0.033174 per CPU-hour, $0.004446 per GiB-hour), so that the ratio means "dollars of nodes per
dollar of pods".
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import amount, pod_requests

__all__ = ["CPU_PRICE_PER_HOUR", "MEMORY_PRICE_PER_GIB_HOUR", "Option", "best_option", "preferred_cpu"]

CPU_PRICE_PER_HOUR: Final = 0.033174
MEMORY_PRICE_PER_GIB_HOUR: Final = 0.004446
NOT_EXIST_COEFFICIENT: Final = 2.0
GIB: Final = 2**30
MIB: Final = 2**20


@dataclass(slots=True)
class Option:
    group: str
    node_count: int
    pods: list[Pod] = field(default_factory=list)
    template: Node | None = None
    price_per_hour: float = 0.0
    debug: str = ""


def _capacity(node: Node) -> tuple[int, int]:
    """Upstream reads ``status.capacity`` (millicores, bytes); allocatable when it is absent."""
    src = node.status.capacity or node.status.allocatable
    cpu, mem = src.get("cpu"), src.get("memory")
    return (amount("cpu", cpu) if cpu is not None else 0), (amount("memory", mem) if mem is not None else 0)


def _requests(pods: Sequence[Pod]) -> tuple[int, int]:
    cpu = mem = 0
    for p in pods:
        r = pod_requests(p)
        cpu += r.get("cpu", 0)
        mem += r.get("memory", 0)
    return cpu, mem


def most_pods(options: list[Option]) -> list[Option]:
    top = max((len(o.pods) for o in options), default=0)
    return [o for o in options if len(o.pods) == top]


def least_waste(options: list[Option]) -> list[Option]:
    best: list[Option] = []
    best_score = 0.0
    for o in options:
        if o.template is None:
            continue
        cpu, mem = _capacity(o.template)
        req_cpu, req_mem = _requests(o.pods)
        avail_cpu, avail_mem = cpu * o.node_count, mem * o.node_count
        if avail_cpu <= 0 or avail_mem <= 0:
            continue
        score = (avail_cpu - req_cpu) / avail_cpu + (avail_mem - req_mem) / avail_mem
        o.debug = f"least-waste: wasted cpu+memory {score:.6f}"
        if not best or score < best_score:
            best, best_score = [o], score
        elif score == best_score:
            best.append(o)
    return best


def pod_price(pod: Pod) -> float:
    cpu, mem = _requests([pod])
    return cpu / 1000 * CPU_PRICE_PER_HOUR + mem / GIB * MEMORY_PRICE_PER_GIB_HOUR


def preferred_cpu(cluster_size: int) -> int:
    """``SimplePreferredNodeProvider``: the preferred node's millicores for the cluster's size."""
    for limit, cores in ((2, 1), (6, 2), (20, 4), (60, 8), (200, 16)):
        if cluster_size <= limit:
            return cores * 1000
    return 32 * 1000


def price(options: list[Option], cluster_size: int) -> list[Option]:
    stabilization = 0.5 * CPU_PRICE_PER_HOUR + 500 * MIB / GIB * MEMORY_PRICE_PER_GIB_HOUR
    preferred = preferred_cpu(cluster_size)
    best: list[Option] = []
    best_score = 0.0
    for o in options:
        if o.template is None:
            continue
        node_cpu = _capacity(o.template)[0]
        if node_cpu <= 0:
            continue
        ratio = (o.price_per_hour * o.node_count + stabilization) / (sum(map(pod_price, o.pods)) + stabilization)
        unfitness = max(preferred / node_cpu, node_cpu / preferred)
        suppressed = (unfitness - 1.0) * (1.0 - math.tanh((o.node_count - 1) / 15.0)) + 1.0
        score = suppressed * ratio
        o.debug = f"price-expander: stabilized_ratio={ratio:.6f} unfitness={unfitness:.6f} final_score={score:.6f}"
        if not best or score < best_score:
            best, best_score = [o], score
        elif score == best_score:
            best.append(o)
    return best


def priority(options: list[Option], priorities: Mapping[int, Sequence[str]]) -> list[Option]:
    compiled = {p: [re.compile(rx) for rx in rxs] for p, rxs in priorities.items()}
    best: list[Option] = []
    top = -1
    for o in options:
        matched = [p for p, rxs in compiled.items() if any(rx.search(o.group) for rx in rxs)]
        if not matched:
            continue
        p = max(matched)
        if p > top:
            best, top = [o], p
        elif p == top:
            best.append(o)
    return best or options


def best_option(
    options: list[Option],
    chain: Sequence[str],
    rng: random.Random,
    *,
    cluster_size: int,
    priorities: Mapping[int, Sequence[str]],
) -> Option | None:
    """The chain's winner (module docstring); None without options."""
    filters: dict[str, Callable[[list[Option]], list[Option]]] = {
        "most-pods": most_pods,
        "least-waste": least_waste,
        "price": lambda os: price(os, cluster_size),
        "priority": lambda os: priority(os, priorities),
        "random": lambda os: os,
    }
    left = list(options)
    for name in chain:
        if len(left) <= 1:
            break
        kept = filters[name](left)
        if kept:
            left = kept
    if not left:
        return None
    return left[0] if len(left) == 1 else left[rng.randrange(len(left))]
