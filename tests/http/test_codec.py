"""The HTTP door's wire encoding (``emulator.base.http.codec``): fields upstream always writes,
in the form upstream writes them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.base.api.core import Event
from emulator.base.api.errors import BadRequest
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.http.codec import decode_body, encode_list, encode_object, micro_time
from emulator.base.http.resources import find
from emulator.base.inputs import load_documents

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


@pytest.mark.parametrize(
    ("stamp", "want"),
    [
        pytest.param("2026-01-01T00:00:05Z", "2026-01-01T00:00:05.000000Z", id="whole-second"),
        pytest.param("2026-01-01T00:00:05.25Z", "2026-01-01T00:00:05.250000Z", id="short-fraction"),
        pytest.param("2026-01-01T00:00:05.123456789Z", "2026-01-01T00:00:05.123456Z", id="nanoseconds"),
        pytest.param("2026-01-01T00:00:05+01:00", "2026-01-01T00:00:05+01:00", id="offset-kept"),
    ],
)
def test_micro_time(stamp: str, want: str) -> None:
    assert micro_time(stamp) == want


def test_a_lease_renew_time_is_a_micro_time() -> None:
    """kubectl describe node parses the node's Lease ``spec.renewTime`` with MicroTime's
    layout (``2006-01-02T15:04:05.000000Z07:00``); a whole-second stamp read
    ``Lease: Failed to get lease: parsing time ...``."""
    lease = Lease(
        metadata=ObjectMeta(name="worker-0", namespace="kube-node-lease", uid="u2"),
        spec=LeaseSpec(holder_identity="worker-0", renew_time="2026-01-01T00:00:05Z"),
    )
    spec = json.loads(encode_object(lease))["spec"]
    assert spec == {"holderIdentity": "worker-0", "renewTime": "2026-01-01T00:00:05.000000Z"}


APPLY_YAML = "application/apply-patch+yaml"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": [1.5, "x", null, true], "c": {"d": "\\u00e9"}, "e": 123456789012345678901}',
        '  {"metadata": {"name": "n", "labels": {}}, "spec": {"containers": []}}',
    ],
)
def test_a_json_apply_body_reads_as_the_yaml_reader_reads_it(text: str) -> None:
    fast = decode_body(text.encode(), APPLY_YAML)
    assert fast == load_documents(text, source="body").docs[0]


def test_a_key_written_twice_in_a_json_apply_body_gets_the_yaml_readers_400() -> None:
    with pytest.raises(BadRequest, match='mapping key "a" already defined'):
        decode_body(b'{"a": 1, "a": 2}', APPLY_YAML)


@pytest.mark.parametrize("text", ['{"a": NaN}', "{a: 1}"])
def test_a_json_looking_apply_body_json_refuses_is_read_as_yaml(text: str) -> None:
    assert decode_body(text.encode(), APPLY_YAML) == load_documents(text, source="body").docs[0]
