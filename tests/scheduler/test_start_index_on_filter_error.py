"""``nextStartNodeIndex`` advances when a Filter returns Error, as upstream's
``findNodesThatFitPod`` does ("always try to update the sched.nextStartNodeIndex regardless of
whether an error has occurred"): by the nodes processed before the error (found feasible or
rejected), not counting the node whose Filter failed. The same in the vectorised and the
per-node search.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from agents.scheduler.config import load_config
from agents.scheduler.framework.types import Code, CycleState, NodeInfo, Status
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import Scheduler, SchedulerOptions
from emulator.base.api.core import Pod
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.client import Client
from tests import builders as b

NODES = [f"n{i}" for i in range(6)]
ERROR_ON, REJECT_ON = "n3", "n1"


class _Flaky:
    """A Filter that rejects ``n1`` and returns Error on ``n3``."""

    name = "Flaky"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.name == ERROR_ON:
            return Status(Code.Error, "flaky backend")
        if node_info.name == REJECT_ON:
            return Status(Code.Unschedulable, "not this one")
        return Status()


class _Clock:
    def now(self) -> float:
        return 0.0

    def timestamp(self, t: float | None = None) -> str:
        return "2025-01-01T00:00:00Z"


def _scheduler(*, vectorized: bool) -> Scheduler:
    registry: dict[str, Any] = {**in_tree_registry(), "Flaky": lambda args, handle: _Flaky()}
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Flaky"}]}}}],
    }
    cfg = load_config(doc, registry)
    clock = _Clock()
    server = ApiServer(clock, random.Random(0))  # type: ignore[arg-type]
    sched = Scheduler(
        client=Client(server, clock, random.Random(0), name="test"),  # type: ignore[arg-type]
        clock=clock,  # type: ignore[arg-type]
        rng=random.Random(0),
        profiles=[p.to_spec() for p in cfg.profiles],
        registry=registry,
        options=SchedulerOptions(vectorized=vectorized),
    )
    for name in NODES:
        sched.cache.add_node(b.node(name, cpu="4", memory="8Gi"))
    sched.cache.update_snapshot(sched.snapshot)
    return sched


@pytest.mark.parametrize("vectorized", [pytest.param(True, id="vectorized"), pytest.param(False, id="per-node")])
@pytest.mark.parametrize(
    ("start", "want"),
    [
        # n0 feasible, n1 rejected, n2 feasible, then n3's Error: 3 processed.
        pytest.param(0, 3, id="error-after-three"),
        # n4, n5, n0, n2 feasible and n1 rejected (wrapping round), then the Error: 5 processed.
        pytest.param(4, 3, id="error-after-wrapping"),
        # The very first node errs: nothing processed, the index stays.
        pytest.param(3, 3, id="error-first"),
    ],
)
def test_start_index_advances_past_processed_nodes_on_filter_error(vectorized: bool, start: int, want: int) -> None:
    sched = _scheduler(vectorized=vectorized)
    assert [ni.name for ni in sched.snapshot.node_info_list] == NODES
    sched.next_start_node_index = start
    fwk = sched.frameworks["default-scheduler"]
    with pytest.raises(Exception, match="flaky backend"):
        sched.find_nodes_that_fit(fwk, CycleState(), b.pod("p", uid="p", cpu="100m"))
    assert sched.next_start_node_index == want
