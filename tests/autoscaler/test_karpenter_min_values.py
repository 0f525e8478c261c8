"""``minValues`` under the default ``--min-values-policy Strict`` (kubernetes-sigs/karpenter v1.9.1
pkg/cloudprovider/types.go SatisfiesMinValues/Truncate, provisioning/scheduling/nodeclaim.go
filterInstanceTypesByRequirements, scheduler.go Results.TruncateInstanceTypes; cases after
scheduling/suite_test.go "MinValues"). The shipped kwok types: c-1x, c-2x, s-2x, c-4x, m-4x,
c-8x (the 4x allocatable 3900m)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agents.autoscaler.karpenter import scheduling
from agents.autoscaler.karpenter.minvalues import MIN_VALUES_ERROR, TRUNCATE_ERROR, truncated_satisfies, unsatisfied
from agents.scheduler import SchedulingSimulator
from tests.autoscaler.test_karpenter_runs import _pod, _pool, _solve
from tests.autoscaler.test_karpenter_runs import _types as _shipped_types

IT = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"


def _reqs(least: int, key: str = IT) -> str:
    return f"[{{key: {key}, operator: Exists, minValues: {least}}}]"


def _types(claim: Any) -> list[str]:
    return sorted({o.instance_type.name for o in claim.options})


@pytest.mark.parametrize(
    ("least", "claims", "types"),
    [
        pytest.param(None, 1, ["c-4x-amd64-linux", "c-8x-amd64-linux", "m-4x-amd64-linux"], id="no-min-values"),
        pytest.param(3, 1, ["c-4x-amd64-linux", "c-8x-amd64-linux", "m-4x-amd64-linux"], id="exactly-met"),
        pytest.param(4, 0, None, id="not-met-strict-no-nodeclaim"),
    ],
)
def test_new_nodeclaim_keeps_min_values(tmp_path: Path, least: int | None, claims: int, types: Any) -> None:
    """ "should not schedule if minValues can't be met": a 3-CPU pod fits three instance types."""
    pool = _pool("p", reqs=_reqs(least) if least else "[]")
    got = _solve(tmp_path, [pool], [_pod("a", "3")])
    assert len(got) == claims
    if claims:
        assert _types(got[0]) == types


def test_pods_do_not_narrow_below_min_values(tmp_path: Path) -> None:
    """CanAdd: the second 3-CPU pod would leave only c-8x on the first NodeClaim (1 < 2 values):
    it opens a second NodeClaim instead of packing onto one."""
    pods = [_pod("a", "3"), _pod("b", "3")]
    assert len(_solve(tmp_path, [_pool("p")], pods)) == 1
    assert len(_solve(tmp_path, [_pool("p", reqs=_reqs(2))], pods)) == 2


def _opt(it: str, zones: tuple[str, ...] = (), **labels: str) -> Any:
    """An option of instance type ``it`` whose own requirements carry ``zones`` (all its
    offerings') and ``labels``; the option's labels say only the offering's first zone."""
    offs = [SimpleNamespace(requirements=[SimpleNamespace(key=ZONE, operator="In", values=[z])]) for z in zones]
    t = SimpleNamespace(name=it, offerings=offs, labels=lambda: {IT: it, **labels})
    return SimpleNamespace(instance_type=t, labels={IT: it, **labels, **({ZONE: zones[0]} if zones else {})})


@pytest.mark.parametrize(
    ("wanted", "options", "expected"),
    [
        pytest.param([(IT, 2)], [_opt("a"), _opt("b")], {}, id="met"),
        pytest.param([(IT, 3)], [_opt("a"), _opt("b"), _opt("b")], {IT: 2}, id="duplicates-count-once"),
        pytest.param([(ZONE, 2)], [_opt("a", ("z1",)), _opt("b", ("z1",))], {ZONE: 1}, id="zone-short"),
        pytest.param([(ZONE, 2)], [_opt("a", ("z1", "z2"))], {}, id="all-offerings-zones-count"),
        pytest.param([("family", 2)], [_opt("a", family="f1"), _opt("b", family="f2")], {}, id="type-label"),
        pytest.param([("missing", 1)], [_opt("a")], {"missing": 0}, id="key-absent"),
        pytest.param([(IT, 1), (ZONE, 2)], [_opt("a", ("z1",)), _opt("b", ("z2",))], {}, id="two-keys"),
    ],
)
def test_satisfies_min_values(wanted: list[tuple[str, int]], options: list[Any], expected: dict[str, int]) -> None:
    """SatisfiesMinValues (pkg/cloudprovider/types.go): the keys short of their minimum, with the
    distinct values found in the instance types' own requirements (it.Requirements.Get(key))."""
    assert unsatisfied(wanted, options) == expected


def test_truncation_breaking_min_values() -> None:
    """Truncate: the cheapest MaxInstanceTypes must still cover minValues, or the NodeClaim is
    dropped (TruncateInstanceTypes)."""
    pool = SimpleNamespace(spec=SimpleNamespace(template=SimpleNamespace(spec=SimpleNamespace(
        requirements=[SimpleNamespace(key=ZONE, min_values=2)]))))  # fmt: skip
    options = [_opt("a", ("z1",)), _opt("b", ("z1",)), _opt("c", ("z2",))]
    assert truncated_satisfies(pool, options, 3)
    assert not truncated_satisfies(pool, options, 2)


def _scheduler(tmp_path: Path, pools: list[Any]) -> Any:
    sim = SchedulingSimulator()
    sim.reset([], [])
    names = iter(range(100))
    return scheduling.Scheduler(sim, pools, _shipped_types(tmp_path), {}, lambda pool: f"{pool}-{next(names)}")


def test_zone_counts_every_offering_of_the_instance_type(tmp_path: Path) -> None:
    """kwok helpers.go newInstanceType: an instance type's zone requirement holds all its
    offerings' zones, so a pod pinned to one zone still meets zone minValues 2."""
    pod = _pod("a", "3", node_selector={ZONE: "test-zone-a"})
    got = _solve(tmp_path, [_pool("p", reqs=_reqs(2, ZONE))], [pod])
    assert len(got) == 1
    assert {o.labels[ZONE] for o in got[0].options} == {"test-zone-a"}


def test_custom_key_counts_nothing(tmp_path: Path) -> None:
    """A key the instance type does not define (here a single-value requirement, i.e. a node
    label) has no values in it.Requirements: minValues 1 fails and the pod gets
    SatisfiesMinValues' error (nodeclaim.go InstanceTypeFilterError)."""
    reqs = "[{key: team, operator: In, values: [a], minValues: 1}]"
    s = _scheduler(tmp_path, [_pool("p", reqs=reqs)])
    assert s.solve([_pod("a", "1")]) == []
    assert s.errors == {"a": MIN_VALUES_ERROR}


def test_truncation_error_reaches_the_pods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scheduler.go TruncateInstanceTypes: with MaxInstanceTypes 2 the two cheapest types of a
    1-CPU pod cannot cover instance-type minValues 3; the NodeClaim is dropped and its pod gets
    "pod didn’t schedule because NodePool couldn’t meet minValues requirements, validating minValues, ..."."""
    monkeypatch.setattr(scheduling, "MAX_INSTANCE_TYPES", 2)
    s = _scheduler(tmp_path, [_pool("p", reqs=_reqs(3))])
    assert s.solve([_pod("a", "1")]) == []
    assert s.errors == {"a": TRUNCATE_ERROR}
    assert TRUNCATE_ERROR.endswith(", validating minValues, minValues requirement is not met for label(s)")
