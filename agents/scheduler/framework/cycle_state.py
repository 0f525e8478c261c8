"""``CycleState``: per scheduling attempt scratch space shared by a profile's plugins (upstream
``framework/cycle_state.go``), and ``PodsToActivate``, the one entry the scheduler itself
writes there (upstream ``framework/types.go``).

Plugins import these names from ``types.py``, which re-exports them with the rest of the
framework's vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

from emulator.base.api.core import Pod

if TYPE_CHECKING:
    from .pod_info import PodInfo

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
        "read",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
        "write",
    )

    read: Callable[[str], Any]
    """``read(key)``: the value written under ``key``; ``KeyError`` if none (upstream ErrNotFound)."""
    write: Callable[[str, Any], None]
    """``write(key, value)``."""

    def __init__(self, pod_info: PodInfo | None = None) -> None:
        data: dict[str, Any] = {}
        self._data, self.read, self.write = data, data.__getitem__, data.__setitem__  # as ``_bind``
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: frozenset[str] = frozenset()
        """PreBind plugins whose PreBindPreFlight said Skip (upstream ``SkipPreBindPlugins``)."""
        self.record_plugin_metrics = False
        self.pod_info = pod_info
        """The queue's PodInfo of the pod being scheduled (upstream ``QueuedPodInfo.PodInfo``),
        when the scheduler runs the cycle; read it through ``pod_info_of``."""

    def _bind(self, data: dict[str, Any]) -> None:
        """The one way to replace the state's dict (assigning ``_data`` alone would leave
        ``read``/``write`` on the old one). Hold ``data``; ``read``/``write`` are its own
        ``__getitem__``/``__setitem__`` (C methods: the plugins read and write a dozen times a
        cycle, a Python method each cost a frame), so they behave as ``data[key]`` and
        ``data[key] = value`` exactly."""
        self._data = data
        self.read = data.__getitem__
        self.write = data.__setitem__

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        c._bind({k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()})
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        c.record_plugin_metrics = self.record_plugin_metrics
        c.pod_info = self.pod_info
        return c

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)
