"""``kubescheduler.config.k8s.io/v1`` ``KubeSchedulerConfiguration``: decode, default, merge,
expand, validate (upstream ``pkg/scheduler/apis/config/v1/{defaults,default_plugins}.go``,
``apis/config/validation``, and the plugin-list half of ``framework/runtime/framework.go``).

What this module owns: turning a configuration document (a dict as the scenario loader hands it,
or a YAML file) into a ``SchedulerConfig`` whose ``Profile`` s hold, per extension point, the final
ordered ``(plugin, weight)`` list and each plugin's defaulted args — ready for the runtime
(``Profile.to_spec()`` gives its ``ProfileSpec``); and the typed plugin args (``*Args``) the
plugins decode their args with (``decode_args``). Every rejection is a ``ConfigError(path,
detail)`` naming the field (``profiles[0].plugins.filter.enabled[1].name``) in upstream's
``field.Error`` wording; the first problem found is raised.

Pipeline per profile, as upstream:

==================  ==============================================================================
step                rule
==================  ==============================================================================
defaults            one profile ``default-scheduler`` if none; ``DEFAULT_PLUGINS`` under multiPoint
merge (per point)   defaults minus ``disabled`` (``"*"``: all of them); a re-listed default keeps
                    its position with the custom settings; other custom plugins appended in order
expand (per point)  plugins listed at the point that are also in multiPoint ("overrides") first,
                    in listed order; then the multiPoint plugins implementing the point and not
                    disabled there; then the point's other plugins. ``disabled: "*"``: no multiPoint
score weights       first of score.enabled, then multiPoint.enabled; 0 or unset → 1 (any int32, as
                    upstream: the (0, 100] range applies to scoringStrategy resource weights only)
pluginConfig        in-tree args decoded strictly, defaulted, validated; every plugin enabled
                    anywhere without a pluginConfig entry gets default args (``ARGS_TYPES``)
==================  ==============================================================================

Which points a plugin implements comes from its registry class (``extension_points_of``), else
from ``UPSTREAM_PLUGINS``. Emulator choices (deviations, on purpose): upstream plugins absent
from the registry stay in ``Profile.plugins`` and are listed in ``Profile.missing_plugins``
(``to_spec`` drops them) instead of failing; ``extenders`` must be empty; ``clientConnection``'s
``qps``/``burst`` limit the scheduler's requests (a token bucket per client, events apart, as
upstream's two clientsets) only when ``qps`` is set — upstream defaults an absent qps to 50 (burst
100), the emulator leaves it unlimited so that scenarios and benchmarks are not throttled unasked
(scheduler_perf itself lifts its clients to 5000); ``kubeconfig`` and the content types have no
meaning in one process and are accepted and unused; profiles whose
*expanded* queue sort differs are rejected (upstream compares only the configured ``queueSort``
sets and silently uses the first profile's); ``NodeAffinityArgs``' ``addedAffinity`` is
validated with the pod validation's messages (upstream's come from
``nodeaffinity.NewNodeSelector``).

It does not own the default plugin tables (``default_plugins.py``, re-exported here), plugin
discovery and import (``registry.py``), the typed args (``args.py``) nor building the framework
(``framework/runtime.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from agents.scheduler.args import (
    API_VERSION,
    ARGS_TYPES,
    ConfigError,
    DefaultPreemptionArgs,
    Int32,
    Int64,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    _convert,
    _fmt,
    _invalid,
    _Struct,
    decode_args,
)
from agents.scheduler.default_plugins import (
    DEFAULT_PLUGINS,
    INVALID_PLUGINS,
    TYPE_NAMES,
    UPSTREAM_PLUGINS,
    extension_points_of,
)
from agents.scheduler.framework.interface import ExtensionPoint, PluginFactory, ProfileSpec
from emulator.base.api.codec import ManifestError, yaml_documents
from emulator.base.inputs import ReadError, read_text

__all__ = [
    "API_VERSION",
    "ARGS_TYPES",
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "KIND",
    "UPSTREAM_PLUGINS",
    "ConfigError",
    "DefaultPreemptionArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PodTopologySpreadArgs",
    "Profile",
    "ResourceSpec",
    "SchedulerConfig",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "decode_args",
    "default_config",
    "extension_points_of",
    "load_config",
    "load_config_file",
    "read_config_document",
]

KIND: Final = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"

_P = ExtensionPoint


# --- the configuration document ---------------------------------------------------------------


class _Plugin(_Struct, frozen=True):
    name: str
    weight: Int32 | None = None


class _PluginSet(_Struct, frozen=True):
    enabled: list[_Plugin] = []
    disabled: list[_Plugin] = []


class _Plugins(_Struct, frozen=True):
    pre_enqueue: _PluginSet | None = None
    queue_sort: _PluginSet | None = None
    pre_filter: _PluginSet | None = None
    filter: _PluginSet | None = None
    post_filter: _PluginSet | None = None
    pre_score: _PluginSet | None = None
    score: _PluginSet | None = None
    reserve: _PluginSet | None = None
    permit: _PluginSet | None = None
    pre_bind: _PluginSet | None = None
    bind: _PluginSet | None = None
    post_bind: _PluginSet | None = None
    multi_point: _PluginSet | None = None


class _PluginConfig(_Struct, frozen=True):
    name: str
    args: dict[str, Any] | None = None


class _Profile(_Struct, frozen=True):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    plugins: _Plugins | None = None
    plugin_config: list[_PluginConfig] = []


class _ClientConnection(_Struct, frozen=True):
    """component-base ``ClientConnectionConfiguration``."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = ""
    qps: float = 0.0
    burst: Int32 = 0


class _Document(_Struct, frozen=True):
    api_version: str
    kind: str
    parallelism: Int32 | None = None
    leader_election: dict[str, Any] | None = None
    client_connection: _ClientConnection | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    pod_initial_backoff_seconds: Int64 | None = None
    pod_max_backoff_seconds: Int64 | None = None
    profiles: list[_Profile] = []
    extenders: list[dict[str, Any]] = []
    delay_cache_until_active: bool = False


@dataclass(frozen=True, slots=True)
class Profile:
    """One profile after defaulting, merging and multiPoint expansion."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: dict[str, list[tuple[str, int]]]
    """Extension point key (``"filter"``…, every point present) → ``(plugin, weight)`` in run order;
    the weight is meaningful at ``"score"`` (resolved, ≥ 1 unless configured negative) and 0 elsewhere."""
    plugin_args: dict[str, Any] = field(default_factory=dict)
    """Plugin name → its args (defaulted dicts for in-tree kinds, as given for others)."""
    missing_plugins: tuple[str, ...] = ()
    """Upstream plugins enabled here that the registry lacks (skipped when building the framework)."""
    needed: tuple[str, ...] = ()
    """Every plugin enabled in any set of the profile, multiPoint included, in first-listed order
    (upstream ``pluginsNeeded``): each is constructed, even one that runs at no extension point."""

    def enabled(self, point: str) -> list[str]:
        return [name for name, _ in self.plugins[point]]

    def to_spec(self) -> ProfileSpec:
        """The runtime's input, without the missing plugins."""
        skip = self.missing_plugins
        return ProfileSpec(
            scheduler_name=self.scheduler_name,
            plugins={ExtensionPoint(p): [e for e in lst if e[0] not in skip] for p, lst in self.plugins.items()},
            plugin_args={n: a for n, a in self.plugin_args.items() if n not in skip and a is not None},
            percentage_of_nodes_to_score=self.percentage_of_nodes_to_score,
            needed=tuple(n for n in self.needed if n not in skip),
        )


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: list[Profile]
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    """0: adaptive (upstream ``DefaultPercentageOfNodesToScore``)."""
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    client_qps: float = 0.0
    """``clientConnection.qps``: > 0 limits the scheduler's API requests (client-go's token
    bucket); 0 or negative: unlimited — also when ``clientConnection`` is absent, where upstream
    would default to 50 (see the module docstring)."""
    client_burst: int = 0
    """``clientConnection.burst`` (0 with a qps: upstream's default, 100)."""

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


# --- merge and expand ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    name: str
    weight: int | None
    path: str
    """Where it was configured (``profiles[0].plugins.score.enabled[1]``); "" for a default."""


@dataclass(slots=True)
class _Set:
    enabled: list[_Entry] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


def _merge(default: _Set, custom: _PluginSet | None, path: str) -> _Set:
    """Upstream ``mergePluginSet``."""
    if custom is None:
        return _Set(list(default.enabled), list(default.disabled))
    disabled = [p.name for p in custom.disabled] + default.disabled
    entries = [_Entry(p.name, p.weight, f"{path}.enabled[{i}]") for i, p in enumerate(custom.enabled)]
    last = {e.name: i for i, e in enumerate(entries)}
    replaced: set[int] = set()
    enabled: list[_Entry] = []
    if "*" not in disabled:
        for d in default.enabled:
            if d.name in disabled:
                continue
            i = last.get(d.name)
            if i is not None:
                replaced.add(i)
            enabled.append(d if i is None else entries[i])
    enabled += [e for i, e in enumerate(entries) if i not in replaced]
    return _Set(enabled, disabled)


Caps = Callable[[str], frozenset[ExtensionPoint] | None]


def _where(e: _Entry, fallback: str) -> str:
    return f"{e.path}.name" if e.path else fallback


def _expand(point: ExtensionPoint, own: _Set, multi: _Set, caps: Caps, ppath: str) -> list[_Entry]:
    """One point's plugins in run order (upstream ``updatePluginList`` + ``expandMultiPointPlugins``)."""
    tname, names = TYPE_NAMES[point], [e.name for e in own.enabled]
    for i, e in enumerate(own.enabled):
        pts = caps(e.name)
        if pts is not None and point not in pts:
            raise ConfigError(_where(e, ppath), f'plugin "{e.name}" does not extend {tname} plugin')
        if e.name in names[:i]:
            raise ConfigError(_where(e, ppath), f'plugin "{e.name}" already registered as "{tname}"')
    if "*" in own.disabled:
        return list(own.enabled)
    overrides: list[str] = []
    from_multi: list[_Entry] = []
    for e in multi.enabled:
        pts = caps(e.name)
        if pts is None:
            msg = f'cannot expand plugin "{e.name}" over extension points: its factory is not a class'
            raise ConfigError(_where(e, f"{ppath}.multiPoint"), msg)
        if point not in pts or e.name in own.disabled:
            continue
        if e.name in names:
            overrides.append(e.name)
        elif any(m.name == e.name for m in from_multi):
            raise ConfigError(_where(e, f"{ppath}.multiPoint"), f'plugin "{e.name}" already registered as "{tname}"')
        else:
            from_multi.append(e)
    first = [e for e in own.enabled if e.name in overrides]
    return first + from_multi + [e for e in own.enabled if e.name not in overrides]


def _profile(i: int, raw: _Profile, name: str, registry: Mapping[str, PluginFactory]) -> tuple[Profile, _Set]:
    path = f"profiles[{i}]"
    pct = raw.percentage_of_nodes_to_score
    if pct is not None and not 0 <= pct <= 100:
        raise ConfigError(f"{path}.percentageOfNodesToScore", _invalid(pct, "not in valid range [0-100]"))
    custom = raw.plugins or _Plugins()
    multi = _merge(
        _Set([_Entry(n, w, "") for n, w in DEFAULT_PLUGINS]), custom.multi_point, f"{path}.plugins.multiPoint"
    )
    sets = {p: _merge(_Set(), getattr(custom, _snake(p.value)), f"{path}.plugins.{p.value}") for p in ExtensionPoint}
    for s in (multi, *sets.values()):
        for e in s.enabled:
            _check_known(e, registry, f"{path}.plugins")

    def caps(n: str) -> frozenset[ExtensionPoint] | None:
        pts = extension_points_of(registry[n]) if n in registry else None
        return pts if pts is not None else UPSTREAM_PLUGINS.get(n)

    plugins: dict[str, list[tuple[str, int]]] = {}
    for p in ExtensionPoint:
        lst = _expand(p, sets[p], multi, caps, f"{path}.plugins.{p.value}")
        if p is _P.Score:
            weights: dict[str, int] = {}
            for e in sets[p].enabled + multi.enabled:
                weights.setdefault(e.name, e.weight or 1)
            plugins[p.value] = [(e.name, weights[e.name]) for e in lst]
        else:
            plugins[p.value] = [(e.name, 0) for e in lst]
    if (n_sort := len(plugins["queueSort"])) != 1:
        msg = f'only one queue sort plugin required for profile with scheduler name "{name}", but got {n_sort}'
        raise ConfigError(f"{path}.plugins.queueSort", msg)
    if not plugins["bind"]:
        raise ConfigError(
            f"{path}.plugins.bind", f'at least one bind plugin is needed for profile with scheduler name "{name}"'
        )
    used = [n for s in (multi, *sets.values()) for n in (e.name for e in s.enabled)]
    args = _plugin_args(raw.plugin_config, used, path)
    expanded = {n for lst in plugins.values() for n, _ in lst}
    missing = list(dict.fromkeys(n for n in used if n not in registry and n in expanded))
    return Profile(name, pct, plugins, args, tuple(missing), tuple(dict.fromkeys(used))), sets[_P.QueueSort]


def _snake(key: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m[0].lower(), key)


def _check_known(e: _Entry, registry: Mapping[str, PluginFactory], fallback: str) -> None:
    if e.name in INVALID_PLUGINS:
        msg = f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
        raise ConfigError(e.path or fallback, _invalid(e.name, msg))
    if e.name not in registry and e.name not in UPSTREAM_PLUGINS:
        msg = f'plugin "{e.name}" does not exist: not an in-tree plugin, nor registered out of tree'
        raise ConfigError(_where(e, fallback), msg)


def _plugin_args(configs: list[_PluginConfig], used: list[str], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for j, pc in enumerate(configs):
        p = f"{path}.pluginConfig[{j}]"
        if pc.name in out:
            raise ConfigError(p, f"Duplicate value: {_fmt(pc.name)}")
        if pc.name in INVALID_PLUGINS:
            msg = f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
            raise ConfigError(p, _invalid(pc.name, msg))
        tp = ARGS_TYPES.get(pc.name)
        out[pc.name] = pc.args if tp is None else msgspec.to_builtins(decode_args(tp, pc.args, f"{p}.args"))
    for name in sorted(set(used)):
        if name not in out and name in ARGS_TYPES:
            out[name] = msgspec.to_builtins(decode_args(ARGS_TYPES[name], None))
    return out


def _queue_sort_key(s: _Set) -> tuple[Any, ...]:
    return tuple((e.name, e.weight) for e in s.enabled), tuple(s.disabled)


def load_config(
    doc: Mapping[str, Any] | None = None, registry: Mapping[str, PluginFactory] | None = None
) -> SchedulerConfig:
    """Decode, default and validate a KubeSchedulerConfiguration (``None``: all defaults).

    ``registry`` (default: the in-tree registry) decides which names exist beyond upstream's,
    which extension points each implements, and which are missing."""
    if registry is None:
        from agents.scheduler.registry import in_tree_registry

        registry = in_tree_registry()
    data = dict(doc) if doc is not None else {"apiVersion": API_VERSION, "kind": KIND}
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if data.get(key) != want:
            got = data.get(key)
            raise ConfigError(key, "Required value" if got is None else _invalid(got, f"expected {_fmt(want)}"))
    raw: _Document = _convert(data, _Document, "")
    parallelism = 16 if raw.parallelism is None else raw.parallelism
    if parallelism <= 0:
        raise ConfigError("parallelism", _invalid(parallelism, "should be an integer value greater than zero"))
    raw_profiles = raw.profiles or [_Profile()]
    profiles: list[Profile] = []
    sorts: list[tuple[Profile, _Set]] = []
    for i, rp in enumerate(raw_profiles):
        name = rp.scheduler_name
        if name is None and len(raw_profiles) == 1:
            name = DEFAULT_SCHEDULER_NAME
        if not name:
            raise ConfigError(f"profiles[{i}].schedulerName", "Required value")
        first = next((j for j, p in enumerate(profiles) if p.scheduler_name == name), None)
        if first is not None:
            raise ConfigError(
                f"profiles[{i}].schedulerName", f"Duplicate value: {_fmt(name)} (profiles[{first}].schedulerName)"
            )
        prof, queue_sort = _profile(i, rp, name, registry)
        profiles.append(prof)
        sorts.append((prof, queue_sort))
    base, base_set = sorts[0]
    for i, (prof, qs) in enumerate(sorts[1:], start=1):
        if _queue_sort_key(qs) != _queue_sort_key(base_set) or prof.plugins["queueSort"] != base.plugins["queueSort"]:
            raise ConfigError(f"profiles[{i}].plugins.queueSort", "Invalid value: must be the same for all profiles")
        sort_name = base.plugins["queueSort"][0][0]
        if prof.plugin_args.get(sort_name) != base.plugin_args.get(sort_name):
            names = [pc.name for pc in raw_profiles[i].plugin_config]
            where = f"[{names.index(sort_name)}].args" if sort_name in names else ""
            msg = "Invalid value: queueSort must be the same for all profiles"
            raise ConfigError(f"profiles[{i}].pluginConfig{where}", msg)
    pct = 0 if raw.percentage_of_nodes_to_score is None else raw.percentage_of_nodes_to_score
    if not 0 <= pct <= 100:
        raise ConfigError("percentageOfNodesToScore", _invalid(pct, "not in valid range [0-100]"))
    initial = 1 if raw.pod_initial_backoff_seconds is None else raw.pod_initial_backoff_seconds
    maximum = 10 if raw.pod_max_backoff_seconds is None else raw.pod_max_backoff_seconds
    if initial <= 0:
        raise ConfigError("podInitialBackoffSeconds", _invalid(initial, "must be greater than 0"))
    if maximum < initial:
        raise ConfigError(
            "podMaxBackoffSeconds", _invalid(maximum, "must be greater than or equal to PodInitialBackoffSeconds")
        )
    if raw.extenders:
        raise ConfigError("extenders", "Forbidden: extenders are not supported by the emulator")
    cc = raw.client_connection or _ClientConnection()
    if cc.burst < 0:
        raise ConfigError("clientConnection.burst", _invalid(cc.burst, "must be non-negative"))
    qps = cc.qps if cc.qps > 0 else 0.0
    burst = (cc.burst or 100) if qps else 0
    return SchedulerConfig(profiles, parallelism, pct, initial, maximum, qps, burst)


def default_config(registry: Mapping[str, PluginFactory] | None = None) -> SchedulerConfig:
    return load_config(None, registry)


def read_config_document(path: str | Path) -> dict[str, Any]:
    """The one KubeSchedulerConfiguration document (a mapping) of a YAML or JSON file, not yet
    decoded; ``ConfigError`` (``source``: the file) if unreadable or not one mapping."""
    source = str(path)
    try:
        docs = yaml_documents(read_text(path), source=source)
    except ReadError as err:
        raise ConfigError("", f"cannot read file: {err.reason}", source=source) from None
    except ManifestError as err:
        raise ConfigError("", err.detail, source=source) from None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise ConfigError("", f"expected one {KIND} document (a mapping), got {len(docs)} document(s)", source=source)
    doc: dict[str, Any] = docs[0]
    return doc


def load_config_file(path: str | Path, registry: Mapping[str, PluginFactory] | None = None) -> SchedulerConfig:
    """Load a one-document YAML (or JSON) file; errors carry the file name as ``source``."""
    doc = read_config_document(path)
    try:
        return load_config(doc, registry)
    except ConfigError as err:
        raise ConfigError(err.path, err.detail, source=str(path)) from None
