"""``CycleState``: per scheduling attempt scratch space shared by a profile's plugins (upstream
``framework/cycle_state.go``), and ``PodsToActivate``, the one entry the scheduler itself
writes there (upstream ``framework/types.go``).

Plugins import these names from ``types.py``, which re-exports them with the rest of the
framework's vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from emulator.base.api.core import Pod

if TYPE_CHECKING:
    from .types import PodInfo

__all__ = ["PODS_TO_ACTIVATE_KEY", "CycleState", "PodsToActivate"]

PODS_TO_ACTIVATE_KEY: Final = "kubernetes.io/pods-to-activate"


class PodsToActivate:
    """Upstream ``PodsToActivate``: pods a plugin wants moved to activeQ once this cycle (or
    the binding cycle) succeeds; keyed ``namespace/name``. Shared, not copied, by clones."""

    __slots__ = ("map",)

    def __init__(self) -> None:
        self.map: dict[str, Pod] = {}

    def clone(self) -> PodsToActivate:
        return self


class CycleState:
    """Per scheduling attempt key/value store shared by the plugins of a profile."""

    __slots__ = (
        "_data",
        "pod_info",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self, pod_info: PodInfo | None = None) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: frozenset[str] = frozenset()
        """PreBind plugins whose PreBindPreFlight said Skip (upstream ``SkipPreBindPlugins``)."""
        self.record_plugin_metrics = False
        self.pod_info = pod_info
        """The queue's PodInfo of the pod being scheduled (upstream ``QueuedPodInfo.PodInfo``),
        when the scheduler runs the cycle; read it through ``pod_info_of``."""

    def read(self, key: str) -> Any:
        """The value written under ``key``; ``KeyError`` if none (upstream ErrNotFound)."""
        return self._data[key]

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        c.record_plugin_metrics = self.record_plugin_metrics
        c.pod_info = self.pod_info
        return c

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)
