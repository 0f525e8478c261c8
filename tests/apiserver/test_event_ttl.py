"""Event expiry (``emulator.base.apiserver.eventttl``): the API server deletes an Event ``eventTTL``
after its last write (upstream ``--event-ttl``, default 1 h), as an ordinary delete that
watchers and write listeners see; a rewrite pushes the deadline back."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from msgspec.structs import replace

from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.readers import ScenarioError
from emulator.base.api.core import Event, Namespace
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver.eventttl import DEFAULT_EVENT_TTL, EventExpiry
from emulator.base.apiserver.server import ApiServer, ServerSettings, WriteRecord
from tests.clocks import ManualClock


def _event(name: str) -> Event:
    return Event(
        metadata=ObjectMeta(name=name, namespace="default"),
        involved_object=ObjectReference(kind="Pod", namespace="default", name="p", uid="u"),
        reason="R",
    )


def _server(ttl: float) -> tuple[ApiServer, ManualClock, list[tuple[float, str, str]]]:
    clock = ManualClock()
    srv = ApiServer(clock, random.Random(0), ServerSettings(event_ttl=ttl))  # type: ignore[arg-type]
    writes: list[tuple[float, str, str]] = []

    def listen(rec: WriteRecord) -> None:
        if rec.kind == "Event":
            writes.append((rec.time, rec.verb, rec.obj.metadata.name))

    srv.add_write_listener(listen)
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    return srv, clock, writes


def _tick(srv: ApiServer, clock: ManualClock, t: float) -> None:
    """Move to ``t`` and make some unrelated write there."""
    clock.t = t
    srv.create(Namespace(metadata=ObjectMeta(name=f"ns-{int(t * 1000)}")))


def test_default_is_upstreams_hour() -> None:
    assert ServerSettings().event_ttl == DEFAULT_EVENT_TTL == 3600.0


def test_an_event_expires_ttl_after_its_last_write() -> None:
    srv, clock, writes = _server(60)
    srv.create(_event("a"))
    srv.create(_event("b"))
    clock.t = 30
    srv.update(replace(srv.get("Event", "b", "default"), message="again"))
    _tick(srv, clock, 59.9)
    assert writes == [(0, "create", "a"), (0, "create", "b"), (30, "update", "b")]
    _tick(srv, clock, 60)
    assert writes[3:] == [(60, "delete", "a")]
    _tick(srv, clock, 89)
    assert [e.metadata.name for e in srv.list("Event")[0]] == ["b"]
    _tick(srv, clock, 95)
    assert writes[4:] == [(95, "delete", "b")], "deleted at the first write past its deadline"
    assert srv.list("Event")[0] == []


def test_ttl_zero_keeps_events() -> None:
    srv, clock, writes = _server(0)
    srv.create(_event("a"))
    _tick(srv, clock, 10 * 86400)
    assert [v for _, v, _ in writes] == ["create"]


def test_a_deleted_then_recreated_event_gets_a_fresh_deadline() -> None:
    srv, clock, writes = _server(60)
    srv.create(_event("a"))
    clock.t = 10
    srv.delete("Event", "a", "default")
    clock.t = 50
    srv.create(_event("a"))
    _tick(srv, clock, 70)
    assert [e.metadata.name for e in srv.list("Event")[0]] == ["a"], "the first entry is stale"
    _tick(srv, clock, 110)
    assert writes[-1] == (110, "delete", "a")


@pytest.mark.parametrize(
    ("written", "now", "live", "want"),
    [
        pytest.param([(0, 1, "a")], 59, {"a": "1"}, [], id="not-yet"),
        pytest.param([(0, 1, "a")], 60, {"a": "1"}, ["a"], id="at-deadline"),
        pytest.param([(0, 1, "a"), (10, 2, "a")], 65, {"a": "2"}, [], id="rewritten"),
        pytest.param([(0, 1, "a"), (1, 2, "b")], 100, {"b": "2"}, ["b"], id="a-gone"),
    ],
)
def test_expiry_queue(written: list[tuple[float, int, str]], now: float, live: dict[str, str], want: list[str]) -> None:
    q = EventExpiry(60)
    for t, rev, name in written:
        q.written(t, rev, "default", name)
    stored = {n: replace(_event(n), metadata=ObjectMeta(name=n, resource_version=rv)) for n, rv in live.items()}
    got = q.due(now, lambda ns, name: stored.get(name))
    assert [e.metadata.name for e in got] == want


SCENARIO = """
name: ttl
{field}
nodes:
  - count: 1
    namePrefix: node
    template:
      status: {{capacity: {{cpu: "1", memory: 1Gi, pods: "10"}}}}
"""


@pytest.mark.parametrize(
    ("field", "want"),
    [
        pytest.param("", 3600.0, id="default"),
        pytest.param("apiServer: {eventTTL: 10m}", 600.0, id="ten-minutes"),
        pytest.param("apiServer: {eventTTL: 0s}", 0.0, id="never"),
    ],
)
def test_scenario_field(field: str, want: float) -> None:
    scenario = load_scenario_text(SCENARIO.format(field=field), source="s.yaml", base_dir=Path.cwd())
    assert scenario.api_server.event_ttl == want


@pytest.mark.parametrize(
    ("field", "match"),
    [
        pytest.param("apiServer: {eventTtl: 10m}", r"apiServer\.eventTtl", id="camel-case-typo"),
        pytest.param("apiServer: {eventTTL: -1s}", r"apiServer\.eventTTL", id="negative"),
    ],
)
def test_scenario_field_errors(field: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        load_scenario_text(SCENARIO.format(field=field), source="s.yaml", base_dir=Path.cwd())
