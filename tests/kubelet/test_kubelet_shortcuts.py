"""The kubelet's per-pod short cuts against its general path, end to end on the virtual clock.

``Resizer.observe`` returns at once for a ``settled`` record (and ``Kubelet._on_pod_update``
does not call it then), and ``PodWorker.write_status`` makes its first try itself; with both
switched off (``Resizer.shortcut``, ``PodWorker.direct``) every event goes through the general
path. Random runs of pods created, resized (in place, back, beyond the node, next to others),
deleted and finished, with and without API latency, must write the same objects at the same
virtual times in the same order either way."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet.resize import Resizer
from emulator.base.api.core import Pod, ResourceRequirements
from emulator.base.api.quantity import parse_quantity
from emulator.base.client.client import Latency
from tests.kubelet.shortcutrun import run_with_shortcuts
from tests.kubelet.test_kubelet import make_pod, world

NAMES = st.sampled_from(["a", "b", "c"])
CPUS = st.sampled_from(["100m", "1", "2", "3", "9"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), NAMES, CPUS, st.sampled_from([None, "3s", "20s"])),
        st.tuples(st.just("resize"), NAMES, CPUS, st.none()),
        st.tuples(st.just("delete"), NAMES, st.sampled_from([0, 2]), st.none()),
        st.tuples(st.just("wait"), st.sampled_from([0.05, 0.5, 2.0, 7.0]), st.none(), st.none()),
    ),
    max_size=12,
)


def _resized(p: Pod, cpu: str) -> Pod:
    c = p.spec.containers[0]
    res = ResourceRequirements(requests={**c.resources.requests, "cpu": parse_quantity(cpu)})
    return replace(p, spec=replace(p.spec, containers=[replace(c, resources=res)]))


async def _play(ops: list[tuple[Any, ...]], latency: bool) -> list[Any]:
    api = Latency(0.01) if latency else None
    async with world(api_latency=api) as w:
        server, t = w.cluster.server, 1.0
        await w.at(t)
        for kind, a, b, c in ops:
            try:
                if kind == "create":
                    server.create(make_pod(a, cpu=b, run=c))
                elif kind == "resize":
                    server.update_resize(_resized(server.get("Pod", a, "default"), b))
                elif kind == "delete":
                    server.delete("Pod", a, "default", grace_period_seconds=b)
            except Exception as err:  # a pod absent or already there: the same either way
                w.cluster.writes.append(type(err).__name__)  # type: ignore[arg-type]
            t += a if kind == "wait" else 0.01
            await w.at(t)
        await w.at(t + 30.0)
        return [w if isinstance(w, str) else (w.revision, w.time, w.verb, w.kind, w.new) for w in w.cluster.writes]


def _run(ops: list[tuple[Any, ...]], latency: bool, shortcuts: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    return run_with_shortcuts(lambda: _play(ops, latency), shortcuts, monkeypatch)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, latency=st.booleans())
def test_shortcuts_write_what_the_general_path_writes(
    ops: list[tuple[Any, ...]], latency: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(ops, latency, True, monkeypatch) == _run(ops, latency, False, monkeypatch)


def test_the_runs_reach_resizes_and_settled_echoes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison covers accepted, pending and reverted resizes, and the echoes' short cut
    (fewer ``Resizer.request`` calls with it)."""
    ops = [
        ("create", "a", "1", None),
        ("create", "b", "1", "20s"),
        ("wait", 2.0, None, None),
        ("resize", "a", "2", None),
        ("wait", 0.5, None, None),
        ("resize", "b", "9", None),
        ("wait", 0.5, None, None),
        ("resize", "b", "1", None),
        ("wait", 2.0, None, None),
    ]
    requests = {True: 0, False: 0}
    request = Resizer.request
    writes = {}
    for shortcuts in (True, False):

        def counting(self: Resizer, rec: Any, *, after_admissions: bool, on: bool = shortcuts) -> None:
            requests[on] += 1
            request(self, rec, after_admissions=after_admissions)

        monkeypatch.setattr(Resizer, "request", counting)
        writes[shortcuts] = _run(ops, False, shortcuts, monkeypatch)
    conditions = {c.type for w in writes[True] if w[3] == "Pod" for c in w[4].status.conditions}
    assert {"PodResizeInProgress", "PodResizePending"} <= conditions
    assert 0 < requests[True] < requests[False]
    assert writes[True] == writes[False]
