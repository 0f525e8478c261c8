"""The node-local seam between a kubelet and the DRA drivers' kubelet plugins.

Upstream, a DRA driver's node plugin registers with the kubelet over a unix socket in
``/var/lib/kubelet/plugins_registry`` and the kubelet calls its gRPC service
(``NodePrepareResources``, ``NodeUnprepareResources``) directly: node-local, not through
the API server. ``KubeletPlugins`` is that socket directory for a whole run: a driver agent
``register``s one plugin per node it serves (and ``unregister``s it when the node goes); a
kubelet looks the plugin of a driver up on its own node (``get``) and is told when the
plugins of its node change (``subscribe``), as the kubelet's plugin watcher is.

It owns the registry only: what preparing means is the driver's (``agents.dra``), when to
prepare the kubelet's (``agents.kubelet``). Both agents import this module and never each
other (they are independent agents).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["ClaimRef", "DRAPlugin", "KubeletPlugins"]


@dataclass(frozen=True, slots=True, order=True)
class ClaimRef:
    """A claim as the DRA gRPC API names it (upstream ``drapb.Claim``)."""

    namespace: str
    name: str
    uid: str


class DRAPlugin(Protocol):
    """A driver's kubelet plugin on one node (upstream's ``DRAPlugin`` gRPC service)."""

    @property
    def driver(self) -> str: ...

    async def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        """Prepare the claims' devices for use on this node; returns once they are."""
        ...

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        """Release what ``node_prepare_resources`` prepared (no claim is in use any more)."""
        ...


class KubeletPlugins:
    """Node name → driver name → registered plugin, and who to tell of changes."""

    def __init__(self) -> None:
        self._plugins: dict[str, dict[str, DRAPlugin]] = {}
        self._listeners: dict[str, list[Callable[[], None]]] = {}

    def __repr__(self) -> str:
        return f"<KubeletPlugins nodes={len(self._plugins)}>"

    def register(self, node: str, plugin: DRAPlugin) -> None:
        self._plugins.setdefault(node, {})[plugin.driver] = plugin
        self._changed(node)

    def unregister(self, node: str, driver: str) -> None:
        if self._plugins.get(node, {}).pop(driver, None) is not None:
            self._changed(node)

    def get(self, node: str, driver: str) -> DRAPlugin | None:
        return self._plugins.get(node, {}).get(driver)

    def drivers(self, node: str) -> list[str]:
        return sorted(self._plugins.get(node, {}))

    def subscribe(self, node: str, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` whenever a plugin of ``node`` registers or goes; returns the
        function that ends the subscription."""
        listeners = self._listeners.setdefault(node, [])
        listeners.append(callback)

        def cancel() -> None:
            if callback in listeners:
                listeners.remove(callback)

        return cancel

    def _changed(self, node: str) -> None:
        for callback in list(self._listeners.get(node, ())):
            callback()
