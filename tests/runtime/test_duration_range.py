"""``parse_duration`` refuses, with a ValueError, durations that Go's ``time.Duration`` cannot
hold: before, a value too large for a float escaped as an ``OverflowError`` traceback."""

from __future__ import annotations

import re

import pytest

from emulator.base.runtime.clock import MAX_DURATION_SECONDS, format_duration, parse_duration

TOO_LONG = "durations must be at most 2562047h47m16.854775807s (Go's time.Duration range), got "


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("1" + "0" * 309 + "s", repr("1" + "0" * 309 + "s"), id="310-digit-seconds"),
        pytest.param(10**400, repr(10**400), id="huge-int"),
        pytest.param("1" * 400, repr("1" * 400), id="400-digit-plain-number"),
        pytest.param(1e300, "1e+300", id="huge-float"),
        pytest.param("2562047h47m17s", "'2562047h47m17s'", id="just-past-go-max"),
        pytest.param("9223372037s", "'9223372037s'", id="seconds-past-go-max"),
    ],
)
def test_parse_duration_refuses_what_go_cannot_hold(text: str | int | float, shown: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(TOO_LONG + shown)}$"):
        parse_duration(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("2562047h47m16.854775807s", id="go-max"),
        pytest.param(9223372036, id="int-below-max"),
    ],
)
def test_parse_duration_accepts_up_to_go_max(text: str | int) -> None:
    assert 0 < parse_duration(text) <= MAX_DURATION_SECONDS


def test_go_max_prints_as_go_does() -> None:
    assert format_duration(MAX_DURATION_SECONDS).startswith("2562047h47m16.85477")
