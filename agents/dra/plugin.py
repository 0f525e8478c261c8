"""``NodePlugin``: a simulated DRA driver's kubelet plugin on one node (upstream's
``kubeletplugin`` gRPC service), called by that node's kubelet through ``KubeletPlugins``.

``NodePrepareResources`` takes the group's ``prepareDelay`` (one draw per call, from the
driver's seeded stream, whatever the number of claims in it: a driver prepares a pod's claims
in one request) and remembers the claims as prepared on the node;
``NodeUnprepareResources`` forgets them at once (no delay is modelled for it). Neither writes
to the API server: what a driver would report in ``status.devices`` is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agents.dra.settings import NodeDevices
from emulator.base.client.kubeletplugins import ClaimRef

if TYPE_CHECKING:
    from agents.dra.driver import DRADriverAgent

__all__ = ["NodePlugin"]


class NodePlugin:
    """The driver's plugin on node ``node``."""

    def __init__(self, agent: DRADriverAgent, node: str, devices: NodeDevices) -> None:
        self._agent = agent
        self.node = node
        self.devices = devices
        self.prepared: dict[str, ClaimRef] = {}
        """Claim UID → claim, prepared on this node."""

    def __repr__(self) -> str:
        return f"<NodePlugin {self.driver} on {self.node} prepared={len(self.prepared)}>"

    @property
    def driver(self) -> str:
        return self._agent.name

    async def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        delay = self.devices.prepare_delay.sample(self._agent.rng)
        if delay > 0:
            await self._agent.clock.sleep(delay)
        for claim in claims:
            self.prepared[claim.uid] = claim
        self._agent.counts["prepared"] += len(claims)

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        for claim in claims:
            if self.prepared.pop(claim.uid, None) is not None:
                self._agent.counts["unprepared"] += 1
