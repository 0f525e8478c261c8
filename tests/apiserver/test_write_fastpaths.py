"""A Pod's status write through ``ApiServer.update_status``'s written-out steps (the fast path
every pod status write takes) equals the general steps (``_update_status``: ``_current``, the strategy's
``prepare_for_status_update``, ``validate_status_update``, ``status_update_deletes``, then
``_commit``): the same answer or typed error (message included), the same revision, stored
objects, write records, watch events and unchanged counts, on random sequences of status
writes from fresh and stale copies, with and without a uid or a resourceVersion precondition,
to pods present and gone, in the default namespace given or left out, equal statuses included.
A server with ``_plain_status`` emptied is the general path (the oracle). Also: ``create``
skips only the base (no-op) ``check_create``/``complete_create``/``prepare_for_create``, and
``bind`` stamps the revision in its own copy of the metadata; write listeners are called alike
however given."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Binding, Namespace, Pod, PodStatus
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer, WriteRecord
from emulator.base.apiserver.registry import Strategy
from tests.clocks import ManualClock

PHASES = st.sampled_from(["Pending", "Running", "Succeeded", "Failed", ""])
NAMES = st.sampled_from(["a", "b", "gone"])


def _server(fast: bool) -> tuple[ApiServer, list[WriteRecord], list[Any]]:
    clock = ManualClock()
    srv = ApiServer(clock, random.Random(0))
    assert srv._plain_status == frozenset({"Pod"})
    if not fast:
        srv._plain_status = frozenset()
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    watchers = [
        srv.watch("Pod"),
        srv.watch("Pod", fields={"spec.nodeName": "n1"}),
        srv.watch("Pod", fields={"status.phase": "Succeeded"}),
    ]
    for name in ("a", "b"):
        spec = {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}
        srv.create(convert({"metadata": {"name": name, "namespace": "default"}, "spec": spec}, Pod))
    return srv, records, watchers


@st.composite
def writes(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "name": draw(NAMES),
        "copy": draw(st.sampled_from(["fresh", "first", "no-rv"])),
        "uid": draw(st.sampled_from(["kept", "none", "other"])),
        "namespace": draw(st.sampled_from(["default", ""])),
        "phase": draw(PHASES),
        "same": draw(st.booleans()),
        "advance": draw(st.booleans()),
    }


def _apply(srv: ApiServer, first: dict[str, Pod], w: dict[str, Any]) -> Any:
    name = w["name"]
    if w["advance"]:
        srv.clock.t += 1.0  # type: ignore[attr-defined]
    try:
        stored: Pod = srv.get("Pod", "a" if name == "gone" else name, "default")
    except Exception as err:  # pragma: no cover - "a" and "b" are never deleted
        return ("read", type(err).__name__, str(err))
    base = first.get(name, stored) if w["copy"] == "first" else stored
    meta = base.metadata
    meta = replace(
        meta,
        name=name,
        namespace=w["namespace"],
        uid={"kept": meta.uid, "none": "", "other": "x-other"}[w["uid"]],
        resource_version="" if w["copy"] == "no-rv" else meta.resource_version,
    )
    status = base.status if w["same"] else replace(base.status, phase=w["phase"], host_ip="10.0.0.1")
    try:
        return srv.update_status(replace(base, metadata=meta, status=status))
    except Exception as err:
        return (type(err).__name__, str(err))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(writes(), min_size=1, max_size=8))
def test_plain_status_write_equals_the_general_steps(ws: list[dict[str, Any]]) -> None:
    outcomes = []
    for fast in (True, False):
        srv, records, watchers = _server(fast)
        first = {n: srv.get("Pod", n, "default") for n in ("a", "b")}
        answers = [_apply(srv, first, w) for w in ws]
        events = [w.channel.get_nowait_batch() for w in watchers]
        outcomes.append((answers, srv.revision, records, events, dict(srv.unchanged), srv.list("Pod")))
    assert outcomes[0] == outcomes[1]


def test_the_fast_path_is_taken_for_pods_only() -> None:
    srv, records, _ = _server(True)
    calls: list[str] = []
    general = srv._current

    def spy(obj: Any) -> Any:
        calls.append(obj.kind)
        return general(obj)

    srv._current = spy  # type: ignore[method-assign]
    pod = srv.get("Pod", "a", "default")
    srv.update_status(replace(pod, status=PodStatus(phase="Running")))
    ns = srv.get("Namespace", "default")
    srv.update_status(ns)
    assert calls == ["Namespace"]
    assert records[-1].verb == "updateStatus"
    assert records[-1].new.status.phase == "Running"


def test_create_skips_only_the_base_hooks() -> None:
    """``create`` calls ``check_create``/``complete_create`` only where a strategy has its own
    (``_create_hooks``); the base ones do nothing (None, the object itself)."""
    srv = ApiServer(ManualClock(), random.Random(0))
    for kind, strategy in srv._strategies.items():
        own = (
            type(strategy).check_create is not Strategy.check_create,
            type(strategy).complete_create is not Strategy.complete_create,
            type(strategy).prepare_for_create is not Strategy.prepare_for_create,
        )
        assert srv._create_hooks[kind] == own
    base = Strategy(srv)
    pod = convert({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod)
    assert base.check_create(pod) is None
    assert base.complete_create(pod) is pod
    assert base.prepare_for_create(pod, restore=False) is pod
    assert base.prepare_for_create(pod, restore=True) is pod
    assert not srv._create_hooks["Event"][2]
    assert srv._create_hooks["Pod"][2]
    assert any(own for own in srv._create_hooks.values())  # a Job's generated selector, for one


def test_bind_stamps_the_revision_once() -> None:
    srv, records, _ = _server(True)
    pod = srv.create(convert({"metadata": {"name": "u"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod))
    bound = srv.bind(
        Binding(metadata=ObjectMeta(name="u", namespace="default"), target=ObjectReference(kind="Node", name="n1"))
    )
    assert bound.metadata.resource_version == str(srv.revision) == str(int(pod.metadata.resource_version) + 1)
    assert records[-1].new is bound
    assert srv.get("Pod", "u", "default") is bound


def test_listeners_are_called_alike_however_given() -> None:
    """``add_write_listener`` keeps an instance's bound ``__call__`` (``_calls``): every kind of
    listener is still called once per write, in the order added, with the same record."""
    seen: list[tuple[str, int]] = []

    class Listener:
        def __init__(self, name: str) -> None:
            self.name = name

        def __call__(self, rec: WriteRecord) -> None:
            seen.append((self.name, rec.revision))

    class Derived(Listener):
        pass

    class Holder:
        def note(self, rec: WriteRecord) -> None:
            seen.append(("method", rec.revision))

    def function(rec: WriteRecord) -> None:
        seen.append(("function", rec.revision))

    records: list[WriteRecord] = []
    srv = ApiServer(ManualClock(), random.Random(0))
    for fn in (Listener("instance"), Derived("derived"), Holder().note, function, records.append):
        srv.add_write_listener(fn)
    assert srv._listeners[0] is not srv._calls[0]  # the bound __call__
    assert srv._calls[2:] == srv._listeners[2:]
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    srv.create(Namespace(metadata=ObjectMeta(name="other")))
    names = ["instance", "derived", "method", "function"]
    assert seen == [(n, 1) for n in names] + [(n, 2) for n in names]
    assert [r.revision for r in records] == [1, 2]


def test_the_status_shortcut_skips_only_a_validation_that_reads_nothing() -> None:
    """``update_status``'s written-out steps take the kinds of ``_STATUS_UNVALIDATED`` past
    ``validate_status_update`` on the ground that it reads nothing of them. If status
    validation is ever given a rule for a Pod (upstream v1.34 checks pod IPs, container state
    transitions, conditions), a status that breaks any such rule would pass here unchecked:
    this test fails first, and the kind must leave ``_STATUS_UNVALIDATED``."""
    from emulator.base.api.core import PodCondition
    from emulator.base.api.validation import validate_status_update
    from emulator.base.apiserver.server import _STATUS_UNVALIDATED

    assert _STATUS_UNVALIDATED == ("Pod",)
    spec = {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}
    pod = convert({"metadata": {"name": "a", "namespace": "default"}, "spec": spec}, Pod)
    nonsense = PodStatus(
        phase="NoSuchPhase",
        pod_ip="not-an-ip",
        host_ip="999.1.1.1",
        nominated_node_name="-Not_A_Name-",
        conditions=[PodCondition(type="", status="Maybe"), PodCondition(type="", status="Maybe")],
    )
    validate_status_update(replace(pod, status=nonsense))  # raises nothing: reads nothing
