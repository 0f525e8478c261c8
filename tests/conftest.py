"""Test-wide configuration: the event loop every async test runs on, Hypothesis' profiles,
and the cluster fixture.

Every ``@pytest.mark.asyncio`` test runs on ``VirtualTimeEventLoop`` (sleeps return at
once, ``loop.time()`` advances exactly, ordering is deterministic); no marker is needed
for that.

Markers (declared in ``pyproject.toml``):

- ``slow``: the test runs whole scenarios, many seeds, or a differential property test with
  hundreds of examples (seconds each; together more than half of the suite's time). The
  fast inner loop is ``python -m pytest -m "not slow"``; CI and the final check run
  everything. Mark a new test slow when it takes more than about 5 s.
- ``real_time``: the test reads or waits on the wall clock (a timing bound, a real-time
  loop, a subprocess). An asyncio test so marked runs on uvloop instead of virtual time.
  ``-m "not real_time"`` leaves out the tests a loaded machine can make flaky.

Hypothesis profiles (``HYPOTHESIS_PROFILE=ci``, or any non-empty ``CI`` variable, selects ``ci``):

- ``default``: Hypothesis' own settings (random examples, a 200 ms deadline per example).
- ``ci``: no deadline and no too-slow health check (a loaded 2-core runner makes a fast example
  slow; a property that is really slow says so with its own ``@settings``), derandomized (the
  examples follow from each test, so a red run is a reproducible one) and the failing
  example's blob printed (``@reproduce_failure``). Tests' own ``@settings`` still override it.

Fixtures:

- ``cluster``: an open ``tests.cluster.Cluster`` (API server on the virtual clock with the
  ``default``, ``kube-system`` and ``kube-node-lease`` namespaces, seed 0); start agents
  with ``await cluster.start_scheduler()``, ``start_kubelet(node)`` or ``start(agent, name)``.
  A test that needs another seed or server settings uses ``open_cluster(...)`` directly.
  Objects come from ``tests.builders`` (``pod``, ``node``...).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings

from emulator.base.runtime.loop import VirtualTimeEventLoop
from tests.cluster import Cluster, open_cluster

settings.register_profile(
    "ci", deadline=None, derandomize=True, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default"))


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Callable[[], Any]]:
    if item.get_closest_marker("real_time"):
        try:
            import uvloop

            return {"uvloop": uvloop.new_event_loop}
        except ImportError:  # pragma: no cover - uvloop is a dependency
            return {"asyncio": asyncio.new_event_loop}
    return {"virtual": VirtualTimeEventLoop}


@pytest_asyncio.fixture
async def cluster() -> AsyncIterator[Cluster]:
    async with open_cluster() as c:
        yield c
