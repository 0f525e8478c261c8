"""The scheduler's nominator checks the pod informer, as upstream's does through the pod lister
it is given (``addNominatedPodUnlocked``): a pod that no longer exists, or that is already bound,
is not nominated (it would otherwise hold room on the node for nobody)."""

from __future__ import annotations

import random

import pytest

from agents.scheduler.config import load_config
from agents.scheduler.framework.types import PodInfo
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import Scheduler, SchedulerOptions
from emulator.base.api.core import Pod
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.client import Client
from tests import builders as b


class _Clock:
    def now(self) -> float:
        return 0.0

    def timestamp(self, t: float | None = None) -> str:
        return "2025-01-01T00:00:00Z"


def _scheduler(live: list[Pod]) -> Scheduler:
    registry = in_tree_registry()
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, registry)
    clock = _Clock()
    server = ApiServer(clock, random.Random(0))  # type: ignore[arg-type]
    sched = Scheduler(
        client=Client(server, clock, random.Random(0), name="test"),  # type: ignore[arg-type]
        clock=clock,  # type: ignore[arg-type]
        rng=random.Random(0),
        profiles=[p.to_spec() for p in cfg.profiles],
        registry=registry,
        options=SchedulerOptions(),
    )
    for p in live:  # the informer's view, without running the scheduler's handlers
        sched.pods.store[(p.metadata.namespace, p.metadata.name)] = p
    return sched


PENDING = b.pod("p", uid="p", cpu="1")


@pytest.mark.parametrize(
    ("live", "nominated"),
    [
        pytest.param([PENDING], ["p"], id="pending-pod-nominated"),
        pytest.param([], [], id="deleted-pod-refused"),
        pytest.param([b.pod("p", uid="p", cpu="1", node="n2")], [], id="bound-pod-refused"),
    ],
)
def test_nominator_consults_the_pod_informer(live: list[Pod], nominated: list[str]) -> None:
    sched = _scheduler(live)
    sched.queue.add_nominated_pod(PodInfo(PENDING), "n1")
    assert [pi.pod.metadata.name for pi in sched.queue.nominated_pods_for_node("n1")] == nominated
