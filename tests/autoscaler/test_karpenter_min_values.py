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

from agents.autoscaler.karpenter.minvalues import TRUNCATE_ERROR, truncated_satisfies, unsatisfied
from tests.autoscaler.test_karpenter_runs import _pod, _pool, _solve

IT = "node.kubernetes.io/instance-type"


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


def _opt(it: str, **labels: str) -> Any:
    return SimpleNamespace(instance_type=SimpleNamespace(name=it), labels={IT: it, **labels})


@pytest.mark.parametrize(
    ("wanted", "options", "expected"),
    [
        pytest.param([(IT, 2)], [_opt("a"), _opt("b")], {}, id="met"),
        pytest.param([(IT, 3)], [_opt("a"), _opt("b"), _opt("b")], {IT: 2}, id="duplicates-count-once"),
        pytest.param([("zone", 2)], [_opt("a", zone="z1"), _opt("b", zone="z1")], {"zone": 1}, id="other-key"),
        pytest.param([("missing", 1)], [_opt("a")], {"missing": 0}, id="key-absent"),
        pytest.param([(IT, 1), ("zone", 2)], [_opt("a", zone="z1"), _opt("a", zone="z2")], {}, id="two-keys"),
    ],
)
def test_satisfies_min_values(wanted: list[tuple[str, int]], options: list[Any], expected: dict[str, int]) -> None:
    """SatisfiesMinValues: the keys short of their minimum, with the distinct values found."""
    assert unsatisfied(wanted, options) == expected


def test_truncation_breaking_min_values() -> None:
    """Truncate: the cheapest MaxInstanceTypes must still cover minValues, or the NodeClaim is
    dropped (TruncateInstanceTypes) and its pods get upstream's error."""
    pool = SimpleNamespace(spec=SimpleNamespace(template=SimpleNamespace(spec=SimpleNamespace(
        requirements=[SimpleNamespace(key="zone", min_values=2)]))))  # fmt: skip
    options = [_opt("a", zone="z1"), _opt("b", zone="z1"), _opt("c", zone="z2")]
    assert truncated_satisfies(pool, options, 3)
    assert not truncated_satisfies(pool, options, 2)
    assert TRUNCATE_ERROR.startswith("pod didn’t schedule because NodePool couldn’t meet minValues")
