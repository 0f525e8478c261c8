"""One run of a kubelet scenario with the per-pod short cuts on or off.

Shared by ``test_kubelet_shortcuts.py`` and ``test_kubelet_shortcuts_wide.py``: each plays its
own operations (its ``play`` coroutine) and compares the writes of the two runs. This module
owns only the switching (``Resizer.shortcut``, ``PodWorker.direct``) and the fresh virtual-time
loop a run gets; not the operations, nor what is compared."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from agents.kubelet.podworker import PodWorker
from agents.kubelet.resize import Resizer
from emulator.base.runtime.loop import VirtualTimeEventLoop


def run_with_shortcuts(
    play: Callable[[], Coroutine[Any, Any, list[Any]]], shortcuts: bool, monkeypatch: pytest.MonkeyPatch
) -> list[Any]:
    """``play()`` on a fresh virtual-time loop, with both short cuts set to ``shortcuts``."""
    with monkeypatch.context() as m:
        m.setattr(Resizer, "shortcut", shortcuts)
        m.setattr(PodWorker, "direct", shortcuts)
        loop = VirtualTimeEventLoop()
        try:
            return loop.run_until_complete(play())
        finally:
            loop.close()
