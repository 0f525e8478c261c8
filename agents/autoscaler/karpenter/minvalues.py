"""``minValues`` on a NodePool's requirements under the default ``--min-values-policy Strict``
(kubernetes-sigs/karpenter v1.9.1 ``pkg/cloudprovider/types.go`` ``SatisfiesMinValues`` and
``Truncate``, ``provisioning/scheduling/nodeclaim.go`` ``filterInstanceTypesByRequirements``,
``scheduler.go`` ``Results.TruncateInstanceTypes``).

A NodeClaim's remaining instance-type options must still cover, for each requirement with
``minValues``, at least that many distinct values of its key (counted over the options'
labels: the instance type's and its offering's), or the pod cannot join it (a new NodeClaim
of that NodePool is not opened; an open one is not added to). After the simulation, a new
NodeClaim whose ``MAX_INSTANCE_TYPES`` cheapest instance types no longer cover them is dropped,
its pods left with upstream's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

__all__ = ["TRUNCATE_ERROR", "min_values", "satisfies", "truncated_satisfies", "unsatisfied"]

TRUNCATE_ERROR: Final = "pod didn’t schedule because NodePool couldn’t meet minValues requirements"


def min_values(pool: Any) -> list[tuple[str, int]]:
    """The NodePool's ``(key, minValues)`` pairs."""
    t = pool.spec.template if pool.spec is not None else None
    reqs = (t.spec.requirements or []) if t is not None and t.spec is not None else []
    return [(r.key, r.min_values) for r in reqs if r.min_values is not None]


def unsatisfied(wanted: Sequence[tuple[str, int]], options: Sequence[Any]) -> dict[str, int]:
    """``SatisfiesMinValues``: key -> distinct values found, for each key short of its minimum."""
    seen: dict[str, set[str]] = {key: set() for key, _ in wanted}
    for o in options:
        for key, _ in wanted:
            if key in o.labels:
                seen[key].add(o.labels[key])
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
