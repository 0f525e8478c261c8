"""Standing Lease renewals (``ApiServer.stand_lease``): held as a function of time, nothing
written; a read of the Lease (get, list, or a write, which reads first) materialises the last
due renewal as one update and ends the standing renewal, telling its kubelet; a watcher of
Leases that is not ``standing_aware`` ends them all and allows none after; a stopped kubelet's
renewals end at its stop, nothing written."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Namespace
from emulator.base.api.errors import Conflict
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver import ApiServer, WriteRecord
from emulator.base.apiserver.standing import StandingRenewal
from emulator.base.runtime.clock import format_timestamp
from tests.clocks import ManualClock

NS = "kube-node-lease"


def _server() -> tuple[ApiServer, ManualClock, list[WriteRecord], Lease]:
    clock = ManualClock()
    srv = ApiServer(clock, random.Random(0))  # type: ignore[arg-type]
    srv.create(Namespace(metadata=ObjectMeta(name=NS)))
    spec = LeaseSpec(holder_identity="n", lease_duration_seconds=40, renew_time=clock.timestamp())
    lease = srv.create(Lease(metadata=ObjectMeta(name="n", namespace=NS), spec=spec))
    srv.standing.allowed = True
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    return srv, clock, records, lease


def _stand(srv: ApiServer, lease: Lease, first: float, ended: list[Any]) -> bool:
    spec = replace(lease.spec, renew_time=format_timestamp(first))
    return srv.stand_lease(lease, spec, first, 10.0, ended.append)


def _held(first: float) -> tuple[ApiServer, ManualClock, list[WriteRecord], Lease, list[Any]]:
    """``_server()`` with the Lease's renewals held from ``first`` (the clock there): (server,
    clock, its writes, the Lease, the kubelets told their renewals ended)."""
    srv, clock, records, lease = _server()
    ended: list[Any] = []
    clock.t = first
    assert _stand(srv, lease, first, ended)
    return srv, clock, records, lease, ended


def test_dues_are_found_by_repeated_addition_as_the_kubelet_adds() -> None:
    entry = StandingRenewal(("ns", "n"), None, 0.1, 0.1, lambda _lease: None)
    due, expected = 0.1, []
    for _ in range(30):
        expected.append(due)
        due += 0.1
    assert [entry.last_due(d) for d in expected] == expected  # 0.1 * 3 != 0.1 + 0.1 + 0.1
    assert entry.last_due(0.05) is None
    assert entry.last_due(expected[4] + 0.05) == expected[4]
    assert entry.last_due(expected[2]) == expected[2]  # an earlier time: restarts from first


def test_held_renewals_write_nothing_until_a_get_materialises_the_last_due_one() -> None:
    srv, clock, records, lease, ended = _held(10.0)
    clock.t = 35.0
    assert records == []
    assert srv.revision == int(lease.metadata.resource_version)
    got = srv.get("Lease", "n", NS)
    assert got.spec.renew_time == format_timestamp(30.0)  # 10, 20, 30
    assert [(r.verb, r.kind, r.time) for r in records] == [("update", "Lease", 35.0)]
    assert got.metadata.resource_version == str(srv.revision)
    assert ended == [got]  # its kubelet writes again
    assert not srv.standing.entries


def test_a_list_and_a_write_read_first() -> None:
    srv, clock, records, _lease, ended = _held(10.0)
    clock.t = 12.0
    (listed,), _ = srv.list("Lease", namespace=NS)
    assert listed.spec.renew_time == format_timestamp(10.0)
    assert len(records) == 1
    assert len(ended) == 1
    assert _stand(srv, listed, 20.0, ended)  # again, from a later beat
    clock.t = 41.0
    stale = replace(listed, spec=replace(listed.spec, holder_identity="other"))
    with pytest.raises(Conflict):  # the stored Lease was renewed since, as upstream's would be
        srv.update(stale)
    assert srv.get("Lease", "n", NS).spec.renew_time == format_timestamp(40.0)


def test_a_watcher_that_is_not_aware_ends_them_all_and_none_is_granted_after() -> None:
    srv, clock, records, _lease, ended = _held(5.0)
    clock.t = 16.0
    srv.watch("Lease", namespace=NS, standing_aware=True)
    assert srv.standing.entries
    assert not records
    srv.watch("Lease", namespace=NS)
    assert not srv.standing.entries
    assert srv.standing.allowed is False
    assert [r.new.spec.renew_time for r in records] == [format_timestamp(15.0)]
    assert not _stand(srv, srv.get("Lease", "n", NS), 25.0, ended)


def test_a_stopped_kubelets_renewals_end_at_its_stop_nothing_written() -> None:
    srv, clock, records, _lease, ended = _held(10.0)
    clock.t = 25.0
    srv.end_standing(NS, "n")
    clock.t = 100.0
    assert records == []
    assert ended == []
    assert srv.get("Lease", "n", NS).spec.renew_time == format_timestamp(20.0)
    assert [r.time for r in records] == [100.0]
    assert ended == []  # nobody to tell: the kubelet had stopped


def test_not_granted_when_not_allowed_or_for_a_stale_copy() -> None:
    srv, _clock, _records, lease = _server()
    srv.standing.allowed = False
    assert not _stand(srv, lease, 0.0, [])
    srv.standing.allowed = True
    renewed = srv.renew_leases([(lease, replace(lease.spec, renew_time=format_timestamp(1.0)))])[0]
    assert not _stand(srv, lease, 1.0, [])  # not the stored Lease any more
    assert _stand(srv, renewed, 1.0, [])
    assert not _stand(srv, renewed, 1.0, [])  # once
