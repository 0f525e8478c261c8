"""The cron parser: upstream's ``cron.ParseStandard`` messages, and next firing times."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.cron import CronError, parse_schedule


def _t(*args: int) -> float:
    return dt.datetime(*args, tzinfo=dt.UTC).timestamp()


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        pytest.param("* * * * *", _t(2026, 1, 1, 0, 0), _t(2026, 1, 1, 0, 1), id="every-minute-strictly-after"),
        pytest.param("* * * * *", _t(2026, 1, 1, 0, 0) + 30, _t(2026, 1, 1, 0, 1), id="mid-minute"),
        pytest.param("*/15 * * * *", _t(2026, 1, 1, 0, 50), _t(2026, 1, 1, 1, 0), id="step"),
        pytest.param("5 4 * * *", _t(2026, 1, 1, 5, 0), _t(2026, 1, 2, 4, 5), id="tomorrow"),
        pytest.param("0 9 * * mon-fri", _t(2026, 12, 5, 10, 0), _t(2026, 12, 7, 9, 0), id="weekday-names"),
        pytest.param("0 0 1 jan *", _t(2026, 3, 1), _t(2027, 1, 1), id="month-name"),
        pytest.param("0 0 13 * 5", _t(2026, 1, 1), _t(2026, 1, 2), id="dom-or-dow-when-both-restricted"),
        pytest.param("0 0 13 * *", _t(2026, 1, 1), _t(2026, 1, 13), id="dom-only"),
        pytest.param("0 0 * * 0", _t(2026, 1, 1), _t(2026, 1, 4), id="sunday-is-0"),
        pytest.param("0 0 29 2 *", _t(2026, 3, 1), _t(2028, 2, 29), id="leap-day"),
        pytest.param("0 0 31 2 *", _t(2026, 1, 1), None, id="never"),
        pytest.param("10/20 * * * *", _t(2026, 1, 1, 0, 31), _t(2026, 1, 1, 0, 50), id="start-slash-step"),
        pytest.param("1,2,40-42 * * * *", _t(2026, 1, 1, 0, 2), _t(2026, 1, 1, 0, 40), id="list"),
        pytest.param("@hourly", _t(2026, 1, 1, 0, 0), _t(2026, 1, 1, 1, 0), id="hourly"),
        pytest.param("@daily", _t(2026, 1, 1, 0, 0), _t(2026, 1, 2), id="daily"),
        pytest.param("@midnight", _t(2026, 1, 1, 0, 0), _t(2026, 1, 2), id="midnight"),
        pytest.param("@weekly", _t(2026, 1, 1), _t(2026, 1, 4), id="weekly"),
        pytest.param("@monthly", _t(2026, 1, 1), _t(2026, 2, 1), id="monthly"),
        pytest.param("@yearly", _t(2026, 1, 1), _t(2027, 1, 1), id="yearly"),
        pytest.param("@annually", _t(2026, 1, 1), _t(2027, 1, 1), id="annually"),
        pytest.param("@every 90s", 100.5, 190.0, id="every"),
        pytest.param("@every 1h30m", 0.0, 5400.0, id="every-compound"),
    ],
)
def test_next_after(schedule: str, after: float, expected: float | None) -> None:
    assert parse_schedule(schedule).next_after(after) == expected


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        pytest.param("", "empty spec string", id="empty"),
        pytest.param("* * * *", "expected exactly 5 fields, found 4: [* * * *]", id="four-fields"),
        pytest.param("0 * * * * *", "expected exactly 5 fields, found 6: [0 * * * * *]", id="six-fields"),
        pytest.param("60 * * * *", "end of range (60) above maximum (59): 60", id="minute-too-big"),
        pytest.param("* 24 * * *", "end of range (24) above maximum (23): 24", id="hour-too-big"),
        pytest.param("* * 0 * *", "beginning of range (0) below minimum (1): 0", id="dom-zero"),
        pytest.param("* * * 13 *", "end of range (13) above maximum (12): 13", id="month-13"),
        pytest.param("* * * * 7", "end of range (7) above maximum (6): 7", id="dow-7"),
        pytest.param("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2", id="backwards"),
        pytest.param("*/0 * * * *", "step of range should be a positive number: */0", id="step-zero"),
        pytest.param("1-2-3 * * * *", "too many hyphens: 1-2-3", id="hyphens"),
        pytest.param("*/2/3 * * * *", "too many slashes: */2/3", id="slashes"),
        pytest.param(
            "x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax', id="not-a-number"
        ),
        pytest.param("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax', id="neg"),
        pytest.param("@often", "unrecognized descriptor: @often", id="descriptor"),
        pytest.param("@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"', id="every"),
    ],
)
def test_malformed_schedules_are_refused_with_robfig_cron_messages(schedule: str, message: str) -> None:
    with pytest.raises(CronError) as err:
        parse_schedule(schedule)
    assert str(err.value) == message


@given(
    minute=st.integers(0, 59),
    hour=st.integers(0, 23),
    start=st.integers(0, 4_000_000_000),
)
def test_a_daily_schedule_fires_once_a_day_at_its_time(minute: int, hour: int, start: int) -> None:
    when = parse_schedule(f"{minute} {hour} * * *").next_after(float(start))
    assert when is not None
    fired = dt.datetime.fromtimestamp(when, dt.UTC)
    assert (fired.hour, fired.minute, fired.second) == (hour, minute, 0)
    assert start < when <= start + 86_400
