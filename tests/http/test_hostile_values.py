"""Hostile values through the HTTP door (issue 24): huge durations, bad headers, deep or
out-of-range JSON, non-UTF-8 protobuf — each a 4xx answer (or a clamped value), never a 500
nor an exception that escapes into the clock."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from emulator.base.runtime.clock import LoopClock, PacedClock, format_timestamp
from tests.http.server_support import serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

INT64_MAX = 2**63 - 1


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}], **spec},
    }


async def test_a_pod_with_the_longest_grace_period_is_deleted_gracefully() -> None:
    async with serving() as s:
        status, body = await s.call(
            "POST", "/api/v1/namespaces/default/pods", _pod("slow", terminationGracePeriodSeconds=INT64_MAX)
        )
        assert status == 201, body
        status, body = await s.call("DELETE", "/api/v1/namespaces/default/pods/slow")
        assert status == 200, body
        assert body["metadata"]["deletionGracePeriodSeconds"] == INT64_MAX
        assert body["metadata"]["deletionTimestamp"] == "9999-12-31T23:59:59Z"
        status, body = await s.call(
            "DELETE", "/api/v1/namespaces/default/pods/slow", {"kind": "DeleteOptions", "gracePeriodSeconds": INT64_MAX}
        )
        assert status == 200, body


async def test_timestamps_clamp_to_the_range_of_metav1_time() -> None:
    assert format_timestamp(float(INT64_MAX)) == "9999-12-31T23:59:59Z"
    assert format_timestamp(1e300) == "9999-12-31T23:59:59Z"
    assert format_timestamp(-1e300) == "0001-01-01T00:00:00Z"
    assert format_timestamp(math.nan) == "9999-12-31T23:59:59Z"


@pytest.mark.parametrize("seconds", [float(INT64_MAX), 1e300, math.inf, math.nan])
async def test_a_sleep_beyond_the_clocks_range_waits_forever_without_overflow(seconds: float) -> None:
    for clock in (LoopClock(virtual=False), PacedClock(virtual=False, speed=10)):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(clock.sleep(seconds), 0.05)
