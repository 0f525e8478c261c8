"""The plugin registry: plugin name → factory (upstream ``framework/runtime/registry.go`` and
``plugins/registry.go``), for the in-tree plugins and out-of-tree ones.

What this module owns:

* ``in_tree_registry()``: the plugins this emulator implements, under upstream's names.
* ``load_out_of_tree(spec)``: ``{Name: "package.module:Class"}`` (the scenario's
  ``schedulerOptions.plugins``) imported and checked.
* ``discover_entry_points()``: plugins installed as Python packages that declare an entry point
  in the ``kube_emulator.plugins`` group (``Name = "package.module:Class"``), e.g. in
  ``pyproject.toml``: ``[project.entry-points."kube_emulator.plugins"]``.
* ``build_registry(...)``: in-tree + entry points + explicit out-of-tree, merged as upstream's
  ``Registry.Merge``: a name already taken is an error ("a plugin named X already exists"); an
  explicit ``schedulerOptions.plugins`` entry may override an entry point of the same name.

The factory contract (upstream's ``PluginFactory``): a plugin is built as ``Class(args, handle)``
— ``args`` is the profile's decoded pluginConfig args for that name (a mapping, or ``None``),
``handle`` the profile's framework (``framework.interface.Handle``). Any callable with that
signature works; a class is preferred because the configuration loader reads the extension
points it implements from its methods (a non-class factory must carry an ``extension_points``
attribute to be used under ``multiPoint``). A class that declares ``name`` as a string must
declare the name it is registered under.

Errors are ``config.ConfigError`` with the plugin's place as path, e.g.
``schedulerOptions.plugins.Coscheduling: cannot import "foo.bar:Baz": No module named 'foo'``.
It does not own which plugins a profile enables (``config.py``) or instantiating them
(``framework/plugin_set.py``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection, Mapping
from importlib.metadata import entry_points
from typing import Any, Final

from agents.scheduler.args import ConfigError
from agents.scheduler.framework.interface import PluginFactory
from agents.scheduler.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    noderesources_balanced_allocation,
    noderesources_fit,
    nodeunschedulable,
    nodevolumelimits,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "build_registry",
    "discover_entry_points",
    "import_factory",
    "in_tree_registry",
    "load_out_of_tree",
    "merge_registries",
]

ENTRY_POINT_GROUP: Final = "kube_emulator.plugins"
_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def in_tree_registry() -> dict[str, PluginFactory]:
    """The implemented in-tree plugins, in upstream's default-plugin order."""
    return {
        schedulinggates.NAME: schedulinggates.SchedulingGates,
        queuesort.NAME: queuesort.PrioritySort,
        nodeunschedulable.NAME: nodeunschedulable.NodeUnschedulable,
        nodename.NAME: nodename.NodeName,
        tainttoleration.NAME: tainttoleration.TaintToleration,
        nodeaffinity.NAME: nodeaffinity.NodeAffinity,
        nodeports.NAME: nodeports.NodePorts,
        noderesources_fit.NAME: noderesources_fit.NodeResourcesFit,
        volumerestrictions.NAME: volumerestrictions.VolumeRestrictions,
        nodevolumelimits.NAME: nodevolumelimits.NodeVolumeLimits,
        volumebinding.NAME: volumebinding.VolumeBinding,
        volumezone.NAME: volumezone.VolumeZone,
        podtopologyspread.NAME: podtopologyspread.PodTopologySpread,
        interpodaffinity.NAME: interpodaffinity.InterPodAffinity,
        dynamicresources.NAME: dynamicresources.DynamicResources,
        defaultpreemption.NAME: defaultpreemption.DefaultPreemption,
        noderesources_balanced_allocation.NAME: noderesources_balanced_allocation.NodeResourcesBalancedAllocation,
        imagelocality.NAME: imagelocality.ImageLocality,
        defaultbinder.NAME: defaultbinder.DefaultBinder,
    }


def import_factory(name: str, import_path: str, *, path: str) -> PluginFactory:
    """Import ``package.module:Class`` and check it can serve as plugin ``name``'s factory."""
    if not _IMPORT_PATH.match(import_path):
        raise ConfigError(path, f'expected an import path like "package.module:Class", got "{import_path}"')
    module_name, _, attr_path = import_path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(path, f'cannot import "{import_path}": {err}') from None
    except Exception as err:  # the module itself failed while being imported
        raise ConfigError(path, f'cannot import "{import_path}": {type(err).__name__}: {err}') from None
    except (SystemExit, KeyboardInterrupt) as err:  # the module tried to end the process
        raise ConfigError(
            path, f'cannot import "{import_path}": module "{module_name}" raised {type(err).__name__}({err})'
        ) from None
    for i, attr in enumerate(attr_path.split(".")):
        if not hasattr(obj, attr):
            where = module_name if i == 0 else f"{module_name}:{'.'.join(attr_path.split('.')[:i])}"
            raise ConfigError(path, f'cannot import "{import_path}": "{where}" has no attribute "{attr}"')
        obj = getattr(obj, attr)
    if not callable(obj):
        got = type(obj).__name__
        raise ConfigError(path, f'"{import_path}" is not a plugin class or factory (got {got}): it must be callable')
    declared = obj.__dict__.get("name") if isinstance(obj, type) else None
    if isinstance(declared, str) and declared != name:
        raise ConfigError(path, f'"{import_path}" is the plugin "{declared}", not "{name}"')
    return obj  # type: ignore[no-any-return]


def load_out_of_tree(spec: Mapping[str, str], *, path: str = "schedulerOptions.plugins") -> dict[str, PluginFactory]:
    """``{Name: "package.module:Class"}`` → ``{Name: factory}``, in ``spec`` order."""
    return {name: import_factory(name, target, path=f"{path}.{name}") for name, target in spec.items()}


def discover_entry_points(group: str = ENTRY_POINT_GROUP, *, skip: Collection[str] = ()) -> dict[str, PluginFactory]:
    """Plugins declared as entry points of ``group`` by installed distributions, by name
    (names in ``skip`` are not imported)."""
    out: dict[str, PluginFactory] = {}
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        if ep.name not in skip:
            out[ep.name] = import_factory(ep.name, ep.value, path=f"{group}.{ep.name}")
    return out


def merge_registries(
    base: Mapping[str, PluginFactory], extra: Mapping[str, PluginFactory], *, path: str
) -> dict[str, PluginFactory]:
    """Upstream ``Registry.Merge``: ``extra`` may not reuse a name of ``base``."""
    out = dict(base)
    for name, factory in extra.items():
        if name in out:
            raise ConfigError(f"{path}.{name}", f'a plugin named "{name}" already exists')
        out[name] = factory
    return out


def build_registry(
    out_of_tree: Mapping[str, str] | None = None, *, entry_point_group: str | None = ENTRY_POINT_GROUP
) -> dict[str, PluginFactory]:
    """In-tree, then entry-point plugins (unless ``entry_point_group`` is None), then ``out_of_tree``."""
    explicit = load_out_of_tree(out_of_tree or {})
    registry = in_tree_registry()
    if entry_point_group is not None:
        discovered = discover_entry_points(entry_point_group, skip=explicit)
        registry = merge_registries(registry, discovered, path=entry_point_group)
    return merge_registries(registry, explicit, path="schedulerOptions.plugins")
