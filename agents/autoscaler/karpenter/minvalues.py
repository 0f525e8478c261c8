"""``minValues`` on a NodePool's requirements under the default ``--min-values-policy Strict``
(kubernetes-sigs/karpenter v1.9.1 ``pkg/cloudprovider/types.go`` ``SatisfiesMinValues`` and
``Truncate``, ``provisioning/scheduling/nodeclaim.go`` ``filterInstanceTypesByRequirements``,
``scheduler.go`` ``Results.TruncateInstanceTypes``).

A NodeClaim's remaining instance types must still cover, for each requirement with
``minValues``, at least that many distinct values of its key, counted over each instance type's
own requirements (kwok ``helpers.go`` ``newInstanceType``: its name, arch, size, family, cpu,
memory labels, every OS, and the zones and capacity types of all its offerings; a key the
instance type does not define, such as a template label, counts nothing), or the pod cannot join it (a new NodeClaim
of that NodePool is not opened; an open one is not added to). After the simulation, a new
NodeClaim whose ``MAX_INSTANCE_TYPES`` cheapest instance types no longer cover them is dropped,
its pods left with upstream's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

__all__ = ["MIN_VALUES_ERROR", "TRUNCATE_ERROR", "min_values", "satisfies", "truncated_satisfies", "unsatisfied"]

MIN_VALUES_ERROR: Final = "minValues requirement is not met for label(s)"
"""``SatisfiesMinValues``' error (a pod's error when minValues alone kept it off a NodeClaim)."""
TRUNCATE_ERROR: Final = (
    "pod didn’t schedule because NodePool couldn’t meet minValues requirements, "
    f"validating minValues, {MIN_VALUES_ERROR}"
)
_ZONE: Final = "topology.kubernetes.io/zone"
_CAPACITY_TYPE: Final = "karpenter.sh/capacity-type"
_OS: Final = "kubernetes.io/os"


def min_values(pool: Any) -> list[tuple[str, int]]:
    """The NodePool's ``(key, minValues)`` pairs."""
    t = pool.spec.template if pool.spec is not None else None
    reqs = (t.spec.requirements or []) if t is not None and t.spec is not None else []
    return [(r.key, r.min_values) for r in reqs if r.min_values is not None]


def type_values(it: Any, key: str) -> list[str]:
    """The values of ``key`` in the instance type's own requirements (``it.Requirements.Get``)."""
    if key in (_ZONE, _CAPACITY_TYPE):
        return [v for off in it.offerings for r in off.requirements if r.key == key for v in r.values]
    if key == _OS and getattr(it, "operating_systems", None):
        return list(it.operating_systems)
    labels = it.labels()
    return [labels[key]] if key in labels else []


def unsatisfied(wanted: Sequence[tuple[str, int]], options: Sequence[Any]) -> dict[str, int]:
    """``SatisfiesMinValues``: key -> distinct values found, for each key short of its minimum,
    over the distinct instance types of ``options``."""
    seen: dict[str, set[str]] = {key: set() for key, _ in wanted}
    types: dict[str, Any] = {}
    for o in options:
        types.setdefault(o.instance_type.name, o.instance_type)
    for it in types.values():
        for key, _ in wanted:
            seen[key].update(type_values(it, key))
    return {key: len(seen[key]) for key, least in wanted if len(seen[key]) < least}


def satisfies(pool: Any, options: Sequence[Any]) -> bool:
    wanted = min_values(pool)
    return not wanted or not unsatisfied(wanted, options)


def truncated_satisfies(pool: Any, options: Sequence[Any], most: int) -> bool:
    """``Truncate``: the options of the ``most`` cheapest instance types still satisfy."""
    wanted = min_values(pool)
    if not wanted:
        return True
    names: list[str] = []
    for o in options:
        if o.instance_type.name not in names:
            names.append(o.instance_type.name)
    kept = set(names[:most])
    return not unsatisfied(wanted, [o for o in options if o.instance_type.name in kept])
