"""Writes that change nothing are not written, as upstream's store skips them
(``GuaranteedUpdate`` compares the new object with the stored one): the answer is the stored
object with its resourceVersion, no revision is used, no watcher and no write listener hears
of it, and ``ApiServer.unchanged`` counts it. A write that does change something still
commits. And the agents, which get the stored object back, do not loop on it: a scenario's
count of unchanged writes does not grow when it runs longer.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import Sleep
from emulator.base.api.apps import ReplicaSet
from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Node, Pod, PodCondition
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver import ApiServer, WriteRecord
from emulator.base.runtime.clock import StoppedClock

ROOT = Path(__file__).resolve().parents[2]


def _server() -> ApiServer:
    srv = ApiServer(StoppedClock(), random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    srv.create(convert({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod))
    srv.create(convert({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}}, Node))
    srv.create(Lease(metadata=ObjectMeta(name="n", namespace="default"), spec=LeaseSpec(renew_time="t0")))
    rs = {"metadata": {"name": "rs"}, "spec": {"selector": {"matchLabels": {"a": "b"}}}}
    rs["spec"]["template"] = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    srv.create(convert(rs, ReplicaSet))
    return srv


def _same(obj: Any) -> Any:
    return obj


def _status_ready(obj: Any) -> Any:
    return replace(obj, status=replace(obj.status, conditions=[PodCondition(type="Ready", status="True")]))


def _label(obj: Any) -> Any:
    return replace(obj, metadata=replace(obj.metadata, labels={"x": "y"}))


def _renew(obj: Any) -> Any:
    return replace(obj, spec=replace(obj.spec, renew_time="t1"))


def _replicas(obj: Any) -> Any:
    return replace(obj, status=replace(obj.status, replicas=3))


@pytest.mark.parametrize(
    ("kind", "name", "verb", "change", "writes"),
    [
        pytest.param("Pod", "p", "update", _same, False, id="pod-update-same"),
        pytest.param("Pod", "p", "update_status", _same, False, id="pod-status-same"),
        pytest.param("Pod", "p", "update", _label, True, id="pod-update-label"),
        pytest.param("Pod", "p", "update_status", _status_ready, True, id="pod-status-ready"),
        pytest.param("Pod", "p", "update_status", _label, False, id="pod-status-ignores-labels"),
        pytest.param("Node", "n", "update_status", _same, False, id="node-status-same"),
        pytest.param("Lease", "n", "update", _same, False, id="lease-same"),
        pytest.param("Lease", "n", "update", _renew, True, id="lease-renewed"),
        pytest.param("ReplicaSet", "rs", "update_status", _same, False, id="replicaset-status-same"),
        pytest.param("ReplicaSet", "rs", "update_status", _replicas, True, id="replicaset-status-replicas"),
    ],
)
def test_a_write_commits_only_if_it_changes_the_object(
    kind: str, name: str, verb: str, change: Callable[[Any], Any], writes: bool
) -> None:
    srv = _server()
    stored = srv.get(kind, name, "" if kind == "Node" else "default")
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    watcher = srv.watch(kind)
    rev, api_verb = srv.revision, "updateStatus" if verb == "update_status" else "update"

    out = getattr(srv, verb)(change(stored))

    if writes:
        assert srv.revision == rev + 1
        assert out.metadata.resource_version == str(rev + 1)
        assert [r.verb for r in records] == [api_verb]
        assert [e.type for e in watcher.channel.get_nowait_batch()] == ["MODIFIED"]
        assert srv.unchanged == {}
    else:
        assert out is stored  # the stored object, its resourceVersion included
        assert srv.revision == rev
        assert records == []
        assert len(watcher.channel) == 0
        assert srv.unchanged == {(api_verb, kind): 1}


def _unchanged_after(path: str, idle: float) -> tuple[dict[tuple[str, str], int], int]:
    """Run the scenario with ``idle`` more seconds after its last step."""
    servers: list[ApiServer] = []

    def spy(rec: WriteRecord) -> None:
        del rec

    scenario = load_scenario(ROOT / path)
    scenario = replace(scenario, steps=[*scenario.steps, Sleep(duration=idle)], until=None)
    original = ApiServer.add_write_listener

    def capture(self: ApiServer, fn: Callable[..., None], *, direct: bool = False) -> None:
        if self not in servers:
            servers.append(self)
        original(self, fn, direct=direct)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ApiServer, "add_write_listener", capture)
        run_scenario(scenario, RunOptions(on_write=spy))
    (srv,) = servers
    return dict(srv.unchanged), srv.writes


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("scenarios/workloads/rollout-drain-pdb.yaml", id="rollout-drain-pdb"),
        pytest.param("scenarios/workloads/default-spreading.yaml", id="default-spreading"),
    ],
)
def test_agents_do_not_loop_on_unchanged_writes(path: str) -> None:
    short, short_writes = _unchanged_after(path, 60.0)
    long, long_writes = _unchanged_after(path, 1200.0)
    assert long_writes > short_writes  # the cluster kept running (Lease renewals)
    assert long == short
