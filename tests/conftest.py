"""Test-wide configuration: async tests run on the emulator's virtual-time loop.

Every ``@pytest.mark.asyncio`` test runs on ``VirtualTimeEventLoop`` (sleeps return at
once, ``loop.time()`` advances exactly, ordering is deterministic). A test marked
``real_time`` runs on uvloop instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from emulator.runtime.loop import VirtualTimeEventLoop


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Callable[[], Any]]:
    if item.get_closest_marker("real_time"):
        try:
            import uvloop

            return {"uvloop": uvloop.new_event_loop}
        except ImportError:  # pragma: no cover - uvloop is a dependency
            return {"asyncio": asyncio.new_event_loop}
    return {"virtual": VirtualTimeEventLoop}
