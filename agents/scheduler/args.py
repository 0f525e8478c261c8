"""Typed plugin args of the in-tree plugins (upstream ``config/v1/types_pluginargs.go``):
decoding, defaulting and validation, with ``ConfigError`` naming the field.

Split from ``config`` so that plugins can decode their args without importing the
configuration loader (which knows the registry, which knows every plugin): plugins never
import each other, not even indirectly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Self, TypeVar

import msgspec

from emulator.base.api.codec import dec_hook
from emulator.base.api.core import NodeAffinity, TopologySpreadConstraint
from emulator.base.api.labels import qualified_name_errors
from emulator.base.api.podvalidation import node_affinity_errors
from emulator.base.inputs import InputError, msgspec_error

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
_INT32_MAX: Final = 2**31 - 1
Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=_INT32_MAX)]
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""Go's int64 fields (``podInitialBackoffSeconds``): a larger number fails to decode upstream."""


class ConfigError(InputError, ValueError):
    """A rejected configuration: ``<path>: <detail>`` (``source`` prefixed when given)."""

    def __init__(self, path: str, detail: str, *, source: str = "") -> None:
        super().__init__(source, path, detail)
        self.source = source


def _invalid(value: Any, msg: str) -> str:
    return f"Invalid value: {_fmt(value)}: {msg}"


def _fmt(value: Any) -> str:
    return msgspec.json.encode(value).decode() if isinstance(value, str | list | dict) else str(value)


def _unsupported(value: str, supported: tuple[str, ...]) -> str:
    return f"Unsupported value: {_fmt(value)}: supported values: " + ", ".join(_fmt(s) for s in supported)


# --- plugin args (upstream ``config/v1/types_pluginargs.go``) ---------------------------------


class _Struct(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, frozen=True):
    pass


class _Args(_Struct, frozen=True):
    def defaulted(self) -> Self:
        return self

    def validate(self, path: str) -> None:
        return None


class ResourceSpec(_Struct, frozen=True):
    name: str
    weight: int = 0


class UtilizationShapePoint(_Struct, frozen=True):
    utilization: Int32
    score: Int32


class _RTCRParam(_Struct, frozen=True):
    shape: list[UtilizationShapePoint] = []


class ScoringStrategy(_Struct, frozen=True):
    type: str = ""
    resources: list[ResourceSpec] = []
    requested_to_capacity_ratio: _RTCRParam | None = None


_DEFAULT_RESOURCES: Final = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
STRATEGY_TYPES: Final = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def _weights_defaulted(resources: list[ResourceSpec]) -> list[ResourceSpec]:
    if not resources:
        return list(_DEFAULT_RESOURCES)
    return [r if r.weight else msgspec.structs.replace(r, weight=1) for r in resources]


def _check_shape(shape: list[UtilizationShapePoint], path: str) -> None:
    if not shape:
        raise ConfigError(path, "Required value: at least one point must be specified")
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise ConfigError(
                f"{path}[{i}].utilization", _invalid(shape[i].utilization, "values must be sorted in increasing order")
            )
    for i, pt in enumerate(shape):
        if not 0 <= pt.utilization <= 100:
            raise ConfigError(f"{path}[{i}].utilization", _invalid(pt.utilization, "not in valid range [0, 100]"))
        if not 0 <= pt.score <= 10:
            raise ConfigError(f"{path}[{i}].score", _invalid(pt.score, "not in valid range [0, 10]"))


class NodeResourcesFitArgs(_Args, frozen=True):
    ignored_resources: list[str] = []
    ignored_resource_groups: list[str] = []
    scoring_strategy: ScoringStrategy | None = None

    def defaulted(self) -> Self:
        s = self.scoring_strategy or ScoringStrategy(type="LeastAllocated")
        return msgspec.structs.replace(
            self, scoring_strategy=msgspec.structs.replace(s, resources=_weights_defaulted(s.resources))
        )

    def validate(self, path: str) -> None:
        # Upstream ValidateNodeResourcesFitArgs: each name is a label name (IsQualifiedName).
        for i, name in enumerate(self.ignored_resources):
            if errs := qualified_name_errors(name):
                raise ConfigError(f"{path}.ignoredResources[{i}]", _invalid(name, errs[0]))
        for i, group in enumerate(self.ignored_resource_groups):
            if "/" in group:
                raise ConfigError(
                    f"{path}.ignoredResourceGroups[{i}]", _invalid(group, "resource group name can't contain '/'")
                )
            if errs := qualified_name_errors(group):
                raise ConfigError(f"{path}.ignoredResourceGroups[{i}]", _invalid(group, errs[0]))
        s, sp = self.scoring_strategy, f"{path}.scoringStrategy"
        if s is None:
            raise ConfigError(sp, "Required value: ScoringStrategy field is required")
        if s.type not in STRATEGY_TYPES:
            raise ConfigError(f"{sp}.type", _unsupported(s.type, STRATEGY_TYPES))
        for i, r in enumerate(s.resources):
            if not 0 < r.weight <= 100:
                raise ConfigError(
                    f"{sp}.resources[{i}].weight",
                    _invalid(r.weight, f"resource weight of {r.name} not in valid range (0, 100]"),
                )
        rp = f"{sp}.requestedToCapacityRatio"
        if s.type == "RequestedToCapacityRatio":
            if s.requested_to_capacity_ratio is None:
                raise ConfigError(rp, "Required value: must be specified when type is RequestedToCapacityRatio")
            _check_shape(s.requested_to_capacity_ratio.shape, f"{rp}.shape")
        elif s.requested_to_capacity_ratio is not None:
            raise ConfigError(rp, "Forbidden: must be nil when type is not RequestedToCapacityRatio")


class NodeResourcesBalancedAllocationArgs(_Args, frozen=True):
    resources: list[ResourceSpec] = []

    def defaulted(self) -> Self:
        return msgspec.structs.replace(self, resources=_weights_defaulted(self.resources))

    def validate(self, path: str) -> None:
        seen: list[str] = []
        for i, r in enumerate(self.resources):
            if r.name in seen:
                raise ConfigError(f"{path}.resources[{i}].name", f"Duplicate value: {_fmt(r.name)}")
            seen.append(r.name)
            if r.weight != 1:
                raise ConfigError(f"{path}.resources[{i}].weight", _invalid(r.weight, "must be 1"))


class PodTopologySpreadArgs(_Args, frozen=True):
    default_constraints: list[TopologySpreadConstraint] = []
    defaulting_type: str = ""

    def defaulted(self) -> Self:
        return self if self.defaulting_type else msgspec.structs.replace(self, defaulting_type="System")

    def validate(self, path: str) -> None:
        if self.defaulting_type not in ("System", "List"):
            raise ConfigError(f"{path}.defaultingType", _unsupported(self.defaulting_type, ("List", "System")))
        if self.defaulting_type == "System" and self.default_constraints:
            raise ConfigError(f"{path}.defaultingType", _invalid("System", "when .defaultConstraints are not empty"))
        for i, c in enumerate(self.default_constraints):
            p = f"{path}.defaultConstraints[{i}]"
            if c.max_skew <= 0:
                raise ConfigError(f"{p}.maxSkew", _invalid(c.max_skew, "not in valid range (0, inf)"))
            if not c.topology_key:
                raise ConfigError(f"{p}.topologyKey", "Required value: can not be empty")
            if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
                raise ConfigError(
                    f"{p}.whenUnsatisfiable", _unsupported(c.when_unsatisfiable, ("DoNotSchedule", "ScheduleAnyway"))
                )
            if c.label_selector is not None:
                raise ConfigError(
                    f"{p}.labelSelector",
                    "Forbidden: constraint must not define a selector, as they deduced for each pod",
                )
            for o in self.default_constraints[:i]:
                if (o.topology_key, o.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
                    raise ConfigError(p, f"Duplicate value: {_fmt(f'{{{c.topology_key}, {c.when_unsatisfiable}}}')}")


class InterPodAffinityArgs(_Args, frozen=True):
    hard_pod_affinity_weight: Int32 | None = None
    ignore_preferred_terms_of_existing_pods: bool = False

    def defaulted(self) -> Self:
        w = 1 if self.hard_pod_affinity_weight is None else self.hard_pod_affinity_weight
        return msgspec.structs.replace(self, hard_pod_affinity_weight=w)

    def validate(self, path: str) -> None:
        w = self.hard_pod_affinity_weight or 0
        if not 0 <= w <= 100:
            raise ConfigError(f"{path}.hardPodAffinityWeight", _invalid(w, "not in valid range [0, 100]"))


class DefaultPreemptionArgs(_Args, frozen=True):
    min_candidate_nodes_percentage: Int32 | None = None
    min_candidate_nodes_absolute: Int32 | None = None

    def defaulted(self) -> Self:
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        return msgspec.structs.replace(
            self,
            min_candidate_nodes_percentage=10 if pct is None else pct,
            min_candidate_nodes_absolute=100 if absolute is None else absolute,
        )

    def validate(self, path: str) -> None:
        pct, absolute = self.min_candidate_nodes_percentage or 0, self.min_candidate_nodes_absolute or 0
        if not 0 <= pct <= 100:
            raise ConfigError(f"{path}.minCandidateNodesPercentage", _invalid(pct, "not in valid range [0, 100]"))
        if absolute < 0:
            raise ConfigError(f"{path}.minCandidateNodesAbsolute", _invalid(absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            msg = "cannot be zero at the same time as minCandidateNodesAbsolute"
            raise ConfigError(f"{path}.minCandidateNodesPercentage", _invalid(0, msg))


class NodeAffinityArgs(_Args, frozen=True):
    added_affinity: NodeAffinity | None = None

    def validate(self, path: str) -> None:
        """``ValidateNodeAffinityArgs``: ``addedAffinity``'s selector and preferred terms, with
        the pod validation's checks (operators, value counts, weights 1–100)."""
        if self.added_affinity is None:
            return
        problem = next(node_affinity_errors(self.added_affinity, _join(path, "addedAffinity")), None)
        if problem is not None:
            raise ConfigError(*problem)


class VolumeBindingArgs(_Args, frozen=True):
    """Upstream ``VolumeBindingArgs``. ``shape`` scores by storage utilization only with the
    StorageCapacityScoring gate, off by default in v1.34: then a shape is refused, as upstream."""

    bind_timeout_seconds: Int64 | None = None
    shape: list[UtilizationShapePoint] | None = None

    def defaulted(self) -> Self:
        t = self.bind_timeout_seconds
        return msgspec.structs.replace(self, bind_timeout_seconds=600 if t is None else t)

    def validate(self, path: str) -> None:
        t = self.bind_timeout_seconds or 0
        if t < 0:
            msg = "invalid BindTimeoutSeconds, should not be a negative value"
            raise ConfigError(f"{path}.bindTimeoutSeconds", _invalid(t, msg))
        if self.shape is not None:
            shape = [{"utilization": p.utilization, "score": p.score} for p in self.shape]
            msg = "unsupported when StorageCapacityScoring feature is disabled"
            raise ConfigError(f"{path}.shape", _invalid(shape, msg))


ARGS_TYPES: Final[dict[str, type[_Args]]] = {
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "NodeAffinity": NodeAffinityArgs,
    "VolumeBinding": VolumeBindingArgs,
}
"""Plugins with a typed args kind (``<name>Args``): decoded strictly and defaulted."""

A = TypeVar("A", bound=_Args)
_FIELD = re.compile(r"^Object (?P<what>contains unknown|missing required) field `(?P<f>[^`]*)`$")


def _join(*parts: str) -> str:
    out = ""
    for part in parts:
        part = part.lstrip(".")
        if part:
            out = part if not out else (out + part if part.startswith("[") else f"{out}.{part}")
    return out


def _convert(data: Any, tp: type[Any], path: str) -> Any:
    try:
        return msgspec.convert(data, tp, dec_hook=dec_hook)
    except msgspec.ValidationError as err:
        msg, at = msgspec_error(err)
        where = _join(path, at)
        f = _FIELD.match(msg)
        if f is not None:
            detail = "unknown field" if f["what"] == "contains unknown" else "Required value"
            raise ConfigError(_join(where, f["f"]), detail) from None
        raise ConfigError(where, msg[:1].lower() + msg[1:]) from None


def decode_args(tp: type[A], raw: Mapping[str, Any] | None, path: str = "args") -> A:
    """Typed, defaulted and validated plugin args (``None``: all defaults); ``ConfigError`` if bad."""
    data = dict(raw or {})
    kind = tp.__name__
    for key, want in (("apiVersion", API_VERSION), ("kind", kind)):
        got = data.pop(key, want)
        if got != want:
            raise ConfigError(_join(path, key), _invalid(got, f"expected {_fmt(want)}"))
    args: A = _convert(data, tp, path).defaulted()
    args.validate(path)
    return args
