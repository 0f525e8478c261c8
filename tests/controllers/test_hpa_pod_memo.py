"""``PodMemo``: ``group_pods`` and ``calculate_requests`` with the memo give what they give
without it, sync after sync, while pods are replaced (readiness flips, restarts, request
changes), appear and go, and when a pod misses its request (the same error)."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from agents.controllers.podautoscaler import replica_calculator
from agents.controllers.podautoscaler.replica_calculator import (
    PodMemo,
    PodMetric,
    ReplicaCalcError,
    calculate_requests,
    group_pods,
)
from emulator.base.api.core import Container, ResourceRequirements
from emulator.base.api.quantity import Quantity
from tests.controllers.test_hpa_replica_calculator import NOW, _pod


def _plain_and_memo(pods: list, metrics: dict, memo: PodMemo, resource: str) -> tuple:  # type: ignore[type-arg]
    plain = (group_pods(pods, metrics, resource, NOW), calculate_requests(pods, "", "cpu"))
    memo.next_sync()
    with_memo = (group_pods(pods, metrics, resource, NOW, memo=memo), calculate_requests(pods, "", "cpu", memo))
    return plain, with_memo


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_memo_matches_the_plain_functions(seed: int, resource: str) -> None:
    rng = random.Random(seed)
    memo = PodMemo()
    pods = {i: _pod(i, 500) for i in range(8)}
    for _ in range(40):
        i = rng.randrange(12)
        change = rng.random()
        if change < 0.3:
            pods[i] = _pod(i, 500, ready=rng.choice(["True", "False"]), transition=NOW - rng.choice([5, 100, 590]))
        elif change < 0.45:
            pods[i] = _pod(i, rng.choice([300, 500, 900]), started=NOW - rng.choice([60, 600]))
        elif change < 0.55:
            pods.pop(i, None)
        elif change < 0.65 and i in pods:  # the same pod object again, only its status list replaced
            pods[i] = replace(pods[i], status=replace(pods[i].status, phase=rng.choice(["Running", "Pending"])))
        listed = [pods[k] for k in sorted(pods)]
        metrics = {p.metadata.name: PodMetric(rng.randrange(1000), NOW - 10, 15.0) for p in listed}
        plain, with_memo = _plain_and_memo(listed, metrics, memo, resource)
        assert with_memo == plain


def test_memo_raises_the_plain_error() -> None:
    memo = PodMemo()
    good = _pod(0, 500)
    bad = replace(good, metadata=replace(good.metadata, name="test-pod-1"))
    bad = replace(
        bad, spec=replace(bad.spec, containers=[Container(name="c", image="i", resources=ResourceRequirements())])
    )
    with pytest.raises(ReplicaCalcError) as plain:
        calculate_requests([good, bad], "", "cpu")
    memo.next_sync()
    with pytest.raises(ReplicaCalcError) as memoised:
        calculate_requests([good, bad], "", "cpu", memo)
    assert str(memoised.value) == str(plain.value) == "missing request for cpu in container c of Pod test-pod-1"
    zero = ResourceRequirements(requests={"cpu": Quantity.from_milli(0)})
    fixed = replace(bad, spec=replace(bad.spec, containers=[Container(name="c", image="i", resources=zero)]))
    with pytest.raises(ReplicaCalcError):
        calculate_requests([good, fixed], "", "cpu", memo)


@pytest.mark.parametrize("seed", range(4))
def test_whole_answers_follow_time_and_metrics(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same pod objects sync after sync while the time passes their cpu initialization
    period and their metrics come and go: the memo's kept answers are the plain functions'."""
    grouped = 0
    real = replica_calculator._group

    def counted(*args: object) -> object:
        nonlocal grouped
        grouped += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(replica_calculator, "_group", counted)
    rng = random.Random(seed)
    memo = PodMemo()
    pods = [
        _pod(i, 500, ready=rng.choice(["True", "False"]), started=NOW - rng.choice([20, 200, 600]),
             transition=NOW - rng.choice([0, 10, 150, 590]))
        for i in range(10)
    ]  # fmt: skip
    names = [p.metadata.name for p in pods]
    for step in range(30):
        now = NOW + 15.0 * step
        with_metric = names if rng.random() < 0.6 else rng.sample(names, 7)
        metrics = {n: PodMetric(rng.randrange(1000), now - rng.choice([1, 20]), 15.0) for n in with_metric}
        for resource in ("cpu", "memory"):
            plain = (group_pods(pods, metrics, resource, now), calculate_requests(pods, "", "cpu"))
            memo.next_sync()
            got = (group_pods(pods, metrics, resource, now, memo=memo), calculate_requests(pods, "", "cpu", memo))
            assert got == plain, (step, resource)
    assert grouped < 2 * 30 * 2 - 10  # the kept groupings were used (the plain calls group each time)
