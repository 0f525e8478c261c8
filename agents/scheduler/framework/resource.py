"""Upstream ``framework.Resource`` (``framework/types.go``): amounts of the standard resources
(CPU in millicores, memory and ephemeral storage in bytes, the pod count) plus scalar ones by
name, all ints.

What this module owns: ``Resource`` and its arithmetic (``from_amounts``, ``add``, ``get``,
``add_resource``, ``clone``). What it does not own: how a pod's requests or a node's
allocatable are computed (``emulator.base.api.resources``), the non-zero requests for scoring
(``pod_info.py``), the per-node sums (``node_info.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["Resource"]


@dataclass(slots=True)
class Resource:
    """Upstream ``framework.Resource``: the standard resources plus scalar ones."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_amounts(cls, amounts: dict[str, int]) -> Resource:
        r = cls()
        for name, v in amounts.items():  # ``r.add(name, v)`` inline (every queued pod's PodInfo)
            if name == "cpu":
                r.milli_cpu += v
            elif name == "memory":
                r.memory += v
            elif name == "ephemeral-storage":
                r.ephemeral_storage += v
            elif name == "pods":
                r.allowed_pod_number += v
            else:
                r.scalar_resources[name] = r.scalar_resources.get(name, 0) + v
        return r

    def add(self, name: str, v: int) -> None:
        if name == "cpu":
            self.milli_cpu += v
        elif name == "memory":
            self.memory += v
        elif name == "ephemeral-storage":
            self.ephemeral_storage += v
        elif name == "pods":
            self.allowed_pod_number += v
        else:
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + v

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def add_resource(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, v in other.scalar_resources.items():
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + sign * v

    def clone(self) -> Resource:
        # the fields set here rather than through ``__init__`` (a snapshot clone takes three)
        r = _new_resource(Resource)
        r.milli_cpu = self.milli_cpu
        r.memory = self.memory
        r.ephemeral_storage = self.ephemeral_storage
        r.allowed_pod_number = self.allowed_pod_number
        scalars = self.scalar_resources
        r.scalar_resources = dict(scalars) if scalars else {}
        return r


_new_resource: Final = object.__new__
