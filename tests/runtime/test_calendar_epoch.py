"""``calendar_epoch_at``: serve's timestamps count from its start; everything else from EPOCH."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.controllers.cronschedule import job_name
from emulator.base.runtime.clock import EPOCH, calendar_epoch, calendar_epoch_at, format_timestamp, parse_timestamp

START = datetime(2026, 12, 2, 1, 30, 15, 250_000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("t", "inside", "outside"),
    [
        pytest.param(0.0, "2026-12-02T01:30:15Z", "2026-01-01T00:00:00Z", id="zero"),
        pytest.param(7.9, "2026-12-02T01:30:22Z", "2026-01-01T00:00:07Z", id="truncated"),
        pytest.param(3600.0, "2026-12-02T02:30:15Z", "2026-01-01T01:00:00Z", id="an-hour"),
    ],
)
def test_timestamps_count_from_the_epoch_in_force(t: float, inside: str, outside: str) -> None:
    assert format_timestamp(t) == outside  # fills the per-second cache with EPOCH's text
    with calendar_epoch_at(START):
        assert calendar_epoch() == START.replace(microsecond=0)
        assert format_timestamp(t) == inside  # the cache does not leak EPOCH's text in
        assert parse_timestamp(inside) == int(t)
    assert calendar_epoch() == EPOCH
    assert format_timestamp(t) == outside
    assert parse_timestamp(outside) == int(t)


def test_the_epoch_is_restored_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError, match="boom"), calendar_epoch_at(START):
        raise RuntimeError("boom")
    assert calendar_epoch() == EPOCH
    assert format_timestamp(0) == "2026-01-01T00:00:00Z"


def test_cronjob_names_follow_the_calendar() -> None:
    """A CronJob's Job is named after its scheduled minute in Unix time, as upstream."""
    assert job_name("c", 0.0) == f"c-{int(EPOCH.timestamp()) // 60}"
    with calendar_epoch_at(START):
        assert job_name("c", 0.0) == f"c-{int(START.timestamp()) // 60}"
