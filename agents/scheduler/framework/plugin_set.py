"""Instantiating a profile's plugins and sorting them into extension points (upstream
``NewFramework``, ``updatePluginList``, ``getScoreWeights``, ``fillEnqueueExtensions``).

What this module owns: ``build_plugins(spec, registry, handle)`` — one instance per plugin name
(created in the order the names first appear, extension points taken in ``ExtensionPoint``
order, then ``spec.needed``: a plugin enabled in the configuration but at no point it implements
is constructed too, so its constructor's error is not hidden), shared by every point it is
enabled at; each enabled (point, plugin) checked with
``isinstance`` against the point's Protocol; score weights (0 → 1, overflow-checked); exactly one
QueueSort and at least one Bind plugin. Errors are ``ValueError`` with upstream's messages.
And ``enqueue_events(plugins)``: what each plugin that can reject a pod registered for.

It does not own merging defaults or expanding ``multiPoint`` (the configuration loader hands a
``ProfileSpec`` with final per-point lists), nor running the plugins (``runtime.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from .interface import (
    BindPlugin,
    EnqueueExtensions,
    ExtensionPoint,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PluginFactory,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ProfileSpec,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from .status import MAX_NODE_SCORE

__all__ = [
    "MAX_TOTAL_SCORE",
    "PROTOCOLS",
    "WILDCARD_EVENT",
    "EnabledPlugins",
    "PluginInitError",
    "build_plugins",
    "enqueue_events",
]

MAX_TOTAL_SCORE: Final = 2**63 - 1
"""Upstream ``MaxTotalScore`` (math.MaxInt64): the sum of weight × 100 must stay below it."""
WILDCARD_EVENT: Final = ClusterEventWithHint(ClusterEvent(EventResource.WildCard, ActionType.All))
"""What a plugin without ``EnqueueExtensions`` is registered for (every event)."""

PROTOCOLS: Final[dict[ExtensionPoint, tuple[type[Any], str]]] = {
    ExtensionPoint.PreEnqueue: (PreEnqueuePlugin, "PreEnqueuePlugin"),
    ExtensionPoint.QueueSort: (QueueSortPlugin, "QueueSortPlugin"),
    ExtensionPoint.PreFilter: (PreFilterPlugin, "PreFilterPlugin"),
    ExtensionPoint.Filter: (FilterPlugin, "FilterPlugin"),
    ExtensionPoint.PostFilter: (PostFilterPlugin, "PostFilterPlugin"),
    ExtensionPoint.PreScore: (PreScorePlugin, "PreScorePlugin"),
    ExtensionPoint.Score: (ScorePlugin, "ScorePlugin"),
    ExtensionPoint.Reserve: (ReservePlugin, "ReservePlugin"),
    ExtensionPoint.Permit: (PermitPlugin, "PermitPlugin"),
    ExtensionPoint.PreBind: (PreBindPlugin, "PreBindPlugin"),
    ExtensionPoint.Bind: (BindPlugin, "BindPlugin"),
    ExtensionPoint.PostBind: (PostBindPlugin, "PostBindPlugin"),
}
"""Extension point → (the Protocol a plugin enabled there must satisfy, upstream's type name)."""

_ENQUEUE_ROLES: Final = (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin)
"""Only these plugins' registrations matter (upstream ``shouldHaveEnqueueExtensions``)."""


class PluginInitError(ValueError):
    """A plugin's factory raised (upstream ``initializing plugin "X": <err>``); ``plugin``
    names it."""

    def __init__(self, plugin: str, err: BaseException) -> None:
        text = str(err)
        detail = f"{type(err).__name__}: {text}" if text else type(err).__name__
        super().__init__(f'initializing plugin "{plugin}": {detail}')
        self.plugin = plugin


@dataclass(slots=True)
class EnabledPlugins:
    plugins: dict[str, Plugin] = field(default_factory=dict)
    """name → the one instance, in instantiation order."""
    points: dict[ExtensionPoint, list[Any]] = field(default_factory=lambda: {p: [] for p in ExtensionPoint})
    """point → its plugins in run order (each satisfies ``PROTOCOLS[point]``)."""
    score_weights: dict[str, int] = field(default_factory=dict)


def _construct(out: EnabledPlugins, name: str, factory: PluginFactory, spec: ProfileSpec, handle: Handle) -> None:
    try:
        out.plugins[name] = factory(spec.plugin_args.get(name), handle)
    except (Exception, SystemExit) as err:  # a misbehaving constructor: bad input
        raise PluginInitError(name, err) from err


def build_plugins(spec: ProfileSpec, registry: Mapping[str, PluginFactory], handle: Handle) -> EnabledPlugins:
    out = EnabledPlugins()
    for point in ExtensionPoint:
        for name, _ in spec.plugins.get(point, ()):
            if name not in out.plugins:
                factory = registry.get(name)
                if factory is None:
                    raise ValueError(f'{PROTOCOLS[point][1]} "{name}" does not exist')
                _construct(out, name, factory, spec, handle)
    for name in spec.needed:  # enabled, but at no point it implements: built all the same
        if name not in out.plugins and (factory := registry.get(name)) is not None:
            _construct(out, name, factory, spec, handle)
    for point in ExtensionPoint:
        proto, proto_name = PROTOCOLS[point]
        for name, weight in spec.plugins.get(point, ()):
            pl = out.plugins[name]
            if not isinstance(pl, proto):
                raise ValueError(f'plugin "{name}" does not extend {proto_name} plugin')
            if any(p.name == name for p in out.points[point]):
                raise ValueError(f'plugin "{name}" already registered as "{proto_name}"')
            out.points[point].append(pl)
            if point is ExtensionPoint.Score:
                out.score_weights[name] = weight or 1  # a weight of 0 is not permitted: 1
    total = 0
    for w in out.score_weights.values():
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise ValueError("total score of Score plugins could overflow")
        total += w * MAX_NODE_SCORE
    n_sort = len(out.points[ExtensionPoint.QueueSort])
    if n_sort != 1:
        raise ValueError(
            f'only one queue sort plugin required for profile with scheduler name "{spec.scheduler_name}", '
            f"but got {n_sort}"
        )
    if not out.points[ExtensionPoint.Bind]:
        raise ValueError(f'at least one bind plugin is needed for profile with scheduler name "{spec.scheduler_name}"')
    return out


def enqueue_events(plugins: Mapping[str, Plugin]) -> dict[str, list[ClusterEventWithHint]]:
    """name → registered events, for PreEnqueue/PreFilter/Filter/Reserve/Permit plugins only."""
    out: dict[str, list[ClusterEventWithHint]] = {}
    for name, pl in plugins.items():
        if isinstance(pl, _ENQUEUE_ROLES):
            out[name] = list(pl.events_to_register()) if isinstance(pl, EnqueueExtensions) else [WILDCARD_EVENT]
    return out
