"""The HTTP door's wire encoding (``emulator.http.codec``): fields upstream always writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.api.core import Event
from emulator.api.meta import ObjectMeta, ObjectReference
from emulator.http.codec import encode_list, encode_object
from emulator.http.resources import find

EVENTS = find("", "v1", "events")


def _event(**kw: Any) -> Event:
    return Event(
        metadata=ObjectMeta(name="web.1", namespace="default", uid="u1"),
        involved_object=ObjectReference(kind="Pod", name="web", namespace="default"),
        reason="Scheduled",
        **kw,
    )


@pytest.mark.parametrize(
    ("event", "want"),
    [
        pytest.param(_event(), "Normal", id="default-normal"),
        pytest.param(_event(type="Warning"), "Warning", id="warning"),
    ],
)
def test_an_event_always_carries_its_type(event: Event, want: str) -> None:
    """kubectl describe prints each event's TYPE from the object itself (an empty column
    without it), so the default ``Normal`` the struct omits is written on the wire."""
    assert json.loads(encode_object(event))["type"] == want
    assert EVENTS is not None
    listed = json.loads(encode_list(EVENTS, [event], resource_version=7))
    assert [item["type"] for item in listed["items"]] == [want]
    assert list(listed["items"][0])[:2] == ["apiVersion", "kind"]
