"""The Lease fast path (``ApiServer.renew_lease``, ``Client.renew_lease_now``) makes exactly the
write ``update`` makes: the same stored object, revision, watch events and write records, or
the same "unchanged" count; where it does not apply (a stale or terminating Lease, a changed
validated field, a client whose calls would suspend) it does nothing and says so (None), and
``update`` decides as before."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Namespace
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver import ApiServer, WriteRecord
from emulator.base.client.client import Client, Latency
from emulator.base.runtime.clock import StoppedClock

NS = "kube-node-lease"


def _server() -> tuple[ApiServer, list[WriteRecord], Any]:
    srv = ApiServer(StoppedClock(), random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name=NS)))
    spec = LeaseSpec(holder_identity="n", lease_duration_seconds=40, renew_time="2026-01-01T00:00:00.000000Z")
    srv.create(Lease(metadata=ObjectMeta(name="n", namespace=NS, finalizers=["keep"]), spec=spec))
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    watcher = srv.watch("Lease", namespace=NS)
    return srv, records, watcher


def _renewed(lease: Lease) -> LeaseSpec:
    return replace(lease.spec, renew_time="2026-01-01T00:00:10.000000Z")


def _stale(srv: ApiServer, lease: Lease) -> Lease:
    """Someone else wrote the Lease after the caller read it: the caller's copy is stale."""
    srv.update(replace(lease, metadata=replace(lease.metadata, labels={"edited": "yes"})))
    return lease


def _terminating(srv: ApiServer, lease: Lease) -> Lease:
    deleted: Lease = srv.delete("Lease", "n", NS)  # kept, marked, by its finalizer
    return deleted


CASES = [
    # (id, how the caller's copy is obtained, the spec it writes, whether the fast path applies)
    ("renewal", lambda srv, lease: lease, _renewed, True),
    ("new-holder", lambda srv, lease: lease, lambda lease: replace(_renewed(lease), holder_identity="m"), True),
    ("same-spec", lambda srv, lease: lease, lambda lease: lease.spec, True),
    ("stale-copy", _stale, _renewed, False),
    ("equal-but-not-the-stored-object", lambda srv, lease: replace(lease), _renewed, False),
    ("terminating", _terminating, _renewed, False),
    ("new-duration", lambda srv, lease: lease, lambda lease: replace(_renewed(lease), lease_duration_seconds=5), False),
    ("bad-duration", lambda srv, lease: lease, lambda lease: replace(_renewed(lease), lease_duration_seconds=0), False),
]


def _outcome(srv: ApiServer, records: list[WriteRecord], watcher: Any, write: Callable[[], Any]) -> Any:
    before = len(records)
    try:
        answer: Any = write()
    except Exception as err:
        answer = (type(err).__name__, str(err))
    events = watcher.channel.get_nowait_batch()
    return answer, srv.revision, records[before:], events, dict(srv.unchanged), srv.get("Lease", "n", NS)


@pytest.mark.parametrize(("copy", "spec", "applies"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fast_path_writes_what_update_writes(
    copy: Callable[[ApiServer, Lease], Lease], spec: Callable[[Lease], LeaseSpec], applies: bool
) -> None:
    fast, fast_records, fast_watch = _server()
    ref, ref_records, ref_watch = _server()
    lease_f, lease_r = copy(fast, fast.get("Lease", "n", NS)), copy(ref, ref.get("Lease", "n", NS))
    fast_watch.channel.get_nowait_batch()
    ref_watch.channel.get_nowait_batch()
    revision = fast.revision
    got = _outcome(fast, fast_records, fast_watch, lambda: fast.renew_lease(lease_f, spec(lease_f)))
    if not applies:
        assert got[0] is None
        assert fast.revision == revision
        assert got[2] == []
        assert got[3] == []
        got = _outcome(fast, fast_records, fast_watch, lambda: fast.update(replace(lease_f, spec=spec(lease_f))))
    want = _outcome(ref, ref_records, ref_watch, lambda: ref.update(replace(lease_r, spec=spec(lease_r))))
    assert got == want


def test_the_client_takes_the_fast_path_only_when_its_call_would_not_suspend() -> None:
    srv, records, _ = _server()
    clock = StoppedClock()
    plain = Client(srv, clock, random.Random(1), name="kubelet:n")
    slow = Client(srv, clock, random.Random(1), name="kubelet:n", api_latency=Latency(0.01))
    lease = srv.get("Lease", "n", NS)
    assert slow.renew_lease_now(lease, _renewed(lease)) is None
    assert (slow.stats.calls, records) == ({}, [])
    renewed = plain.renew_lease_now(lease, _renewed(lease))
    assert renewed is srv.get("Lease", "n", NS)
    assert renewed.spec.renew_time.endswith("10.000000Z")
    assert plain.stats.calls == {"update": 1}
    assert [(r.verb, r.kind) for r in records] == [("update", "Lease")]


def test_a_renewed_lease_keeps_generation_zero_as_upstream() -> None:
    """Upstream's lease strategy never sets ``metadata.generation``: renewals by either path
    leave it at 0 (a Deployment's spec change still bumps its own)."""
    srv, _, _ = _server()
    lease = srv.get("Lease", "n", NS)
    lease = srv.renew_lease(lease, _renewed(lease))
    lease = srv.update(replace(lease, spec=replace(lease.spec, renew_time="2026-01-01T00:00:20.000000Z")))
    assert lease.metadata.generation == 0
