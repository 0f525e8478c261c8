"""KubeSchedulerConfiguration loading: defaults, merge and multiPoint expansion order, weights,
pluginConfig args, every ConfigError path; and the plugin registry (out-of-tree imports, entry
points, name collisions)."""

from __future__ import annotations

import random
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from agents.scheduler import config as cfg
from agents.scheduler import registry as reg
from agents.scheduler.config import (
    DEFAULT_SCHEDULER_NAME,
    ConfigError,
    NodeResourcesFitArgs,
    decode_args,
    extension_points_of,
    load_config,
    load_config_file,
)
from agents.scheduler.examples.coscheduling import Coscheduling
from agents.scheduler.framework.interface import ExtensionPoint
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import SUCCESS, CycleState, NodeInfo, Status
from agents.scheduler.plugins import (
    defaultbinder,
    nodename,
    noderesources_fit,
    nodeunschedulable,
    queuesort,
    schedulinggates,
)
from emulator.base.api.core import Pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
NOT_IMPLEMENTED = (
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
)
DEFAULT_LISTS: dict[str, list[tuple[str, int]]] = {
    "preEnqueue": [("SchedulingGates", 0), ("DynamicResources", 0), ("DefaultPreemption", 0)],
    "queueSort": [("PrioritySort", 0)],
    "preFilter": [
        ("NodeAffinity", 0),
        ("NodePorts", 0),
        ("NodeResourcesFit", 0),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
        ("DynamicResources", 0),
    ],
    "filter": [
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
        ("NodePorts", 0),
        ("NodeResourcesFit", 0),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
        ("DynamicResources", 0),
    ],
    "postFilter": [("DynamicResources", 0), ("DefaultPreemption", 0)],
    "preScore": [
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
        ("NodeResourcesFit", 0),
        ("VolumeBinding", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
        ("NodeResourcesBalancedAllocation", 0),
    ],
    "score": [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ],
    "reserve": [("VolumeBinding", 0), ("DynamicResources", 0)],
    "permit": [],
    "preBind": [("VolumeBinding", 0), ("DynamicResources", 0)],
    "bind": [("DefaultBinder", 0)],
    "postBind": [],
}
FIT_DEFAULT_ARGS = {
    "ignoredResources": [],
    "ignoredResourceGroups": [],
    "scoringStrategy": {
        "type": "LeastAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": None,
    },
}


# --- test plugins (out-of-tree style classes) --------------------------------------------------


class FilterOnly:
    name = "FilterOnly"

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS


class FilterScore(FilterOnly):
    name = "FilterScore"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 0, SUCCESS

    def score_extensions(self) -> None:
        return None


class OtherSort:
    name = "OtherSort"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def less(self, a: Any, b: Any) -> bool:
        return False


BASE: dict[str, Any] = {
    m.NAME: getattr(m, m.NAME)
    for m in (schedulinggates, queuesort, nodeunschedulable, nodename, noderesources_fit, defaultbinder)
}
"""The in-tree plugins of this issue: expectations below do not move when more are implemented."""


def registry() -> dict[str, Any]:
    return {**BASE, "FilterOnly": FilterOnly, "FilterScore": FilterScore, "OtherSort": OtherSort}


def profile(
    plugins: dict[str, Any] | None = None, plugin_config: list[Any] | None = None, **extra: Any
) -> dict[str, Any]:
    prof: dict[str, Any] = {**extra}
    if plugins is not None:
        prof["plugins"] = plugins
    if plugin_config is not None:
        prof["pluginConfig"] = plugin_config
    return {**V1, "profiles": [prof]}


def names(lst: list[tuple[str, int]]) -> list[str]:
    return [n for n, _ in lst]


# --- defaults ------------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", [pytest.param(None, id="no-document"), pytest.param(dict(V1), id="empty-document")])
def test_defaults(doc: dict[str, Any] | None) -> None:
    cfg = load_config(doc, BASE)
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    (prof,) = cfg.profiles
    assert prof.scheduler_name == DEFAULT_SCHEDULER_NAME
    assert prof.percentage_of_nodes_to_score is None
    assert prof.plugins == DEFAULT_LISTS
    assert prof.missing_plugins == NOT_IMPLEMENTED
    assert prof.plugin_args["NodeResourcesFit"] == FIT_DEFAULT_ARGS
    assert prof.plugin_args["DefaultPreemption"] == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }
    assert prof.plugin_args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert prof.plugin_args["PodTopologySpread"] == {"defaultConstraints": [], "defaultingType": "System"}
    balanced = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert prof.plugin_args["NodeResourcesBalancedAllocation"] == balanced
    assert prof.plugin_args["VolumeBinding"] == {"bindTimeoutSeconds": 600, "shape": None}


def test_to_spec_drops_missing_plugins_and_builds_a_framework() -> None:
    spec = load_config(None, BASE).profiles[0].to_spec()
    assert spec.plugins[ExtensionPoint.Filter] == [("NodeUnschedulable", 0), ("NodeName", 0), ("NodeResourcesFit", 0)]
    assert spec.plugins[ExtensionPoint.Score] == [("NodeResourcesFit", 1)]
    assert spec.plugins[ExtensionPoint.PostFilter] == []
    assert set(spec.plugin_args) == {"NodeResourcesFit"}
    fwk = Framework(spec, BASE, clock=_Clock(), rng=random.Random(0))  # type: ignore[arg-type]
    assert fwk.list_plugins() == {
        ExtensionPoint.PreEnqueue: ["SchedulingGates"],
        ExtensionPoint.QueueSort: ["PrioritySort"],
        ExtensionPoint.PreFilter: ["NodeResourcesFit"],
        ExtensionPoint.Filter: ["NodeUnschedulable", "NodeName", "NodeResourcesFit"],
        ExtensionPoint.PreScore: ["NodeResourcesFit"],
        ExtensionPoint.Score: ["NodeResourcesFit"],
        ExtensionPoint.Bind: ["DefaultBinder"],
    }


class _Clock:
    virtual = True

    def now(self) -> float:
        return 0.0


# --- merge and expansion ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugins", "point", "want"),
    [
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "FilterScore", "weight": 4}]}},
            "score",
            DEFAULT_LISTS["score"] + [("FilterScore", 4)],
            id="custom-multipoint-appended-with-weight",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "FilterScore"}]}},
            "filter",
            DEFAULT_LISTS["filter"] + [("FilterScore", 0)],
            id="custom-multipoint-expands-to-each-point-it-implements",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 7}]}},
            "score",
            [(n, 7 if n == "NodeResourcesFit" else w) for n, w in DEFAULT_LISTS["score"]],
            id="relisted-default-keeps-position-with-new-weight",
        ),
        pytest.param(
            {
                "multiPoint": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 7}],
                    "disabled": [{"name": "NodeResourcesFit"}],
                }
            },
            "score",
            [e for e in DEFAULT_LISTS["score"] if e[0] != "NodeResourcesFit"] + [("NodeResourcesFit", 7)],
            id="disabled-then-enabled-default-moves-to-the-end",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
            "score",
            [("NodeResourcesFit", 5)] + [e for e in DEFAULT_LISTS["score"] if e[0] != "NodeResourcesFit"],
            id="point-override-goes-first-with-its-weight",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "FilterOnly"}, {"name": "NodeName"}]}},
            "filter",
            [("NodeName", 0)] + [e for e in DEFAULT_LISTS["filter"] if e[0] != "NodeName"] + [("FilterOnly", 0)],
            id="overrides-then-multipoint-then-other-point-plugins",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "NodeName"}]}},
            "filter",
            [e for e in DEFAULT_LISTS["filter"] if e[0] != "NodeName"],
            id="disabled-at-one-point",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "FilterOnly"}, {"name": "NodeName"}]}},
            "filter",
            [("FilterOnly", 0), ("NodeName", 0)],
            id="star-disables-every-default-of-the-point",
        ),
        pytest.param(
            {
                "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "FilterScore", "weight": 2}]},
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
            "score",
            [("FilterScore", 2)],
            id="star-in-multipoint-disables-all-defaults",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "FilterScore", "weight": 0}]}},
            "score",
            DEFAULT_LISTS["score"] + [("FilterScore", 1)],
            id="weight-zero-means-one",
        ),
        pytest.param(
            {
                "score": {"enabled": [{"name": "FilterScore", "weight": 9}]},
                "multiPoint": {"enabled": [{"name": "FilterScore", "weight": 3}]},
            },
            "score",
            [("FilterScore", 9)] + DEFAULT_LISTS["score"],
            id="score-weight-beats-multipoint-weight",
        ),
        pytest.param(
            {"score": {"disabled": [{"name": "ImageLocality"}, {"name": "TaintToleration"}]}},
            "score",
            [e for e in DEFAULT_LISTS["score"] if e[0] not in ("ImageLocality", "TaintToleration")],
            id="score-disable-two",
        ),
    ],
)
def test_expansion(plugins: dict[str, Any], point: str, want: list[tuple[str, int]]) -> None:
    prof = load_config(profile(plugins), registry()).profiles[0]
    assert prof.plugins[point] == want


def test_disabled_at_one_point_stays_elsewhere() -> None:
    prof = load_config(profile({"score": {"disabled": [{"name": "NodeResourcesFit"}]}}), registry()).profiles[0]
    assert "NodeResourcesFit" not in names(prof.plugins["score"])
    assert "NodeResourcesFit" in names(prof.plugins["filter"])
    assert "NodeResourcesFit" in names(prof.plugins["preScore"])


def test_missing_plugins_follow_what_is_enabled() -> None:
    plugins = {"multiPoint": {"disabled": [{"name": "TaintToleration"}, {"name": "ImageLocality"}]}}
    prof = load_config(profile(plugins), BASE).profiles[0]
    assert "TaintToleration" not in prof.missing_plugins
    assert prof.missing_plugins == tuple(n for n in NOT_IMPLEMENTED if n not in ("TaintToleration", "ImageLocality"))


def test_several_profiles_and_percentages() -> None:
    doc = {
        **V1,
        "percentageOfNodesToScore": 40,
        "parallelism": 4,
        "podInitialBackoffSeconds": 2,
        "podMaxBackoffSeconds": 2,
        "profiles": [
            {"schedulerName": "a", "percentageOfNodesToScore": 70},
            {"schedulerName": "b", "plugins": {"filter": {"disabled": [{"name": "NodeName"}]}}},
        ],
    }
    cfg = load_config(doc)
    assert (cfg.percentage_of_nodes_to_score, cfg.parallelism, cfg.pod_max_backoff_seconds) == (40, 4, 2)
    assert [p.scheduler_name for p in cfg.profiles] == ["a", "b"]
    assert [p.percentage_of_nodes_to_score for p in cfg.profiles] == [70, None]
    assert cfg.profile("b") is cfg.profiles[1]
    assert "NodeName" not in names(cfg.profiles[1].plugins["filter"])
    assert "NodeName" in names(cfg.profiles[0].plugins["filter"])


# --- pluginConfig -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(
            {"ignoredResources": ["example.com/foo"]},
            FIT_DEFAULT_ARGS | {"ignoredResources": ["example.com/foo"]},
            id="partial-args-defaulted",
        ),
        pytest.param(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "NodeResourcesFitArgs",
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 0}, {"name": "nvidia.com/gpu", "weight": 5}],
                },
            },
            FIT_DEFAULT_ARGS
            | {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 5}],
                    "requestedToCapacityRatio": None,
                }
            },
            id="typed-meta-accepted-weight-0-becomes-1",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "LeastAllocated"}},
            FIT_DEFAULT_ARGS,
            id="strategy-without-resources-gets-cpu-memory",
        ),
        pytest.param(None, FIT_DEFAULT_ARGS, id="null-args-all-defaults"),
    ],
)
def test_fit_plugin_config(args: dict[str, Any] | None, want: dict[str, Any]) -> None:
    prof = load_config(profile(plugin_config=[{"name": "NodeResourcesFit", "args": args}])).profiles[0]
    assert prof.plugin_args["NodeResourcesFit"] == want
    assert prof.to_spec().plugin_args["NodeResourcesFit"] == want


def test_out_of_tree_args_pass_through_untouched() -> None:
    cfg = profile({"multiPoint": {"enabled": [{"name": "FilterOnly"}]}}, [{"name": "FilterOnly", "args": {"x": [1]}}])
    prof = load_config(cfg, registry()).profiles[0]
    assert prof.plugin_args["FilterOnly"] == {"x": [1]}


def test_decode_args_typed() -> None:
    args = decode_args(NodeResourcesFitArgs, {"ignoredResourceGroups": ["example.com"]})
    assert args.ignored_resource_groups == ["example.com"]
    assert args.scoring_strategy is not None
    assert args.scoring_strategy.type == "LeastAllocated"


# --- errors ----------------------------------------------------------------------------------------

SORT_ONLY = {"queueSort": {"enabled": [{"name": "OtherSort"}], "disabled": [{"name": "*"}]}}


@pytest.mark.parametrize(
    ("doc", "path", "detail"),
    [
        pytest.param({"kind": V1["kind"]}, "apiVersion", "Required value", id="no-apiVersion"),
        pytest.param(
            {**V1, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            "apiVersion",
            'Invalid value: "kubescheduler.config.k8s.io/v1beta3": expected "kubescheduler.config.k8s.io/v1"',
            id="old-apiVersion",
        ),
        pytest.param(
            {**V1, "kind": "Pod"},
            "kind",
            'Invalid value: "Pod": expected "KubeSchedulerConfiguration"',
            id="wrong-kind",
        ),
        pytest.param({**V1, "parallelizm": 3}, "parallelizm", "unknown field", id="unknown-top-level-field"),
        pytest.param(
            profile({"fliter": {}}), "profiles[0].plugins.fliter", "unknown field", id="unknown-extension-point"
        ),
        pytest.param(
            profile({"score": {"enabled": [{"name": "NodeResourcesFit", "wieght": 2}]}}),
            "profiles[0].plugins.score.enabled[0].wieght",
            "unknown field",
            id="unknown-plugin-field",
        ),
        pytest.param(
            profile({"score": {"enabled": [{"weight": 2}]}}),
            "profiles[0].plugins.score.enabled[0].name",
            "Required value",
            id="plugin-without-name",
        ),
        pytest.param(
            profile(
                {"score": {"enabled": [{"name": "NodeResourcesFit"}, {"name": "ImageLocality", "weight": "high"}]}}
            ),
            "profiles[0].plugins.score.enabled[1].weight",
            "expected `int | null`, got `str`",
            id="weight-not-an-integer",
        ),
        pytest.param(
            profile({"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31}]}}),
            "profiles[0].plugins.score.enabled[0].weight",
            "expected `int` <= 2147483647",
            id="weight-out-of-int32",
        ),
        pytest.param(
            profile({"filter": {"enabled": [{"name": "NodeResorcesFit"}]}}),
            "profiles[0].plugins.filter.enabled[0].name",
            'plugin "NodeResorcesFit" does not exist: not an in-tree plugin, nor registered out of tree',
            id="unknown-plugin-name",
        ),
        pytest.param(
            profile({"multiPoint": {"enabled": [{"name": "Nope"}]}}),
            "profiles[0].plugins.multiPoint.enabled[0].name",
            'plugin "Nope" does not exist: not an in-tree plugin, nor registered out of tree',
            id="unknown-multipoint-plugin",
        ),
        pytest.param(
            profile({"filter": {"enabled": [{"name": "EBSLimits"}]}}),
            "profiles[0].plugins.filter.enabled[0]",
            'Invalid value: "EBSLimits": was invalid in version "kubescheduler.config.k8s.io/v1" '
            '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
            id="removed-plugin",
        ),
        pytest.param(
            profile({"filter": {"enabled": [{"name": "DefaultBinder"}]}}),
            "profiles[0].plugins.filter.enabled[0].name",
            'plugin "DefaultBinder" does not extend FilterPlugin plugin',
            id="plugin-does-not-implement-point",
        ),
        pytest.param(
            profile({"score": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]}}),
            "profiles[0].plugins.score.enabled[1].name",
            'plugin "ImageLocality" already registered as "ScorePlugin"',
            id="duplicate-at-a-point",
        ),
        pytest.param(
            profile({"multiPoint": {"enabled": [{"name": "FilterOnly"}, {"name": "FilterOnly"}]}}),
            "profiles[0].plugins.multiPoint.enabled[1].name",
            'plugin "FilterOnly" already registered as "FilterPlugin"',
            id="duplicate-in-multipoint",
        ),
        pytest.param(
            profile({"queueSort": {"enabled": [{"name": "OtherSort"}]}}),
            "profiles[0].plugins.queueSort",
            'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 2',
            id="two-queue-sorts",
        ),
        pytest.param(
            profile({"queueSort": {"disabled": [{"name": "*"}]}}),
            "profiles[0].plugins.queueSort",
            'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
            id="no-queue-sort",
        ),
        pytest.param(
            profile({"bind": {"disabled": [{"name": "DefaultBinder"}]}}),
            "profiles[0].plugins.bind",
            'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
            id="no-binder",
        ),
        pytest.param(
            {**V1, "profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "plugins": SORT_ONLY}]},
            "profiles[1].plugins.queueSort",
            "Invalid value: must be the same for all profiles",
            id="queue-sort-differs-across-profiles",
        ),
        pytest.param(
            {**V1, "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "profiles[1].schedulerName",
            'Duplicate value: "a" (profiles[0].schedulerName)',
            id="duplicate-scheduler-name",
        ),
        pytest.param(
            {**V1, "profiles": [{"schedulerName": "a"}, {}]},
            "profiles[1].schedulerName",
            "Required value",
            id="second-profile-without-name",
        ),
        pytest.param(
            {**V1, "percentageOfNodesToScore": 101},
            "percentageOfNodesToScore",
            "Invalid value: 101: not in valid range [0-100]",
            id="global-percentage",
        ),
        pytest.param(
            profile(percentageOfNodesToScore=-1),
            "profiles[0].percentageOfNodesToScore",
            "Invalid value: -1: not in valid range [0-100]",
            id="profile-percentage",
        ),
        pytest.param(
            {**V1, "parallelism": 0},
            "parallelism",
            "Invalid value: 0: should be an integer value greater than zero",
            id="parallelism",
        ),
        pytest.param(
            {**V1, "podInitialBackoffSeconds": 0},
            "podInitialBackoffSeconds",
            "Invalid value: 0: must be greater than 0",
            id="initial-backoff-zero",
        ),
        pytest.param(
            {**V1, "podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4},
            "podMaxBackoffSeconds",
            "Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds",
            id="initial-backoff-above-max",
        ),
        pytest.param(
            {**V1, "extenders": [{"urlPrefix": "http://x"}]},
            "extenders",
            "Forbidden: extenders are not supported by the emulator",
            id="extenders",
        ),
        pytest.param(
            profile(plugin_config=[{"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]),
            "profiles[0].pluginConfig[1]",
            'Duplicate value: "NodeResourcesFit"',
            id="duplicate-plugin-config",
        ),
        pytest.param(
            profile(plugin_config=[{"name": "NodeResourcesFit", "args": {"ignoredResource": ["a"]}}]),
            "profiles[0].pluginConfig[0].args.ignoredResource",
            "unknown field",
            id="args-unknown-field",
        ),
        pytest.param(
            profile(
                plugin_config=[{"name": "NodeResourcesFit", "args": {"kind": "NodeResourcesBalancedAllocationArgs"}}]
            ),
            "profiles[0].pluginConfig[0].args.kind",
            'Invalid value: "NodeResourcesBalancedAllocationArgs": expected "NodeResourcesFitArgs"',
            id="args-wrong-kind",
        ),
        pytest.param(
            profile(plugin_config=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Spread"}}}]),
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            'Unsupported value: "Spread": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
            id="fit-unknown-strategy",
        ),
        pytest.param(
            profile(
                plugin_config=[
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "LeastAllocated",
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 101}],
                            }
                        },
                    }
                ]
            ),
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight",
            "Invalid value: 101: resource weight of memory not in valid range (0, 100]",
            id="fit-resource-weight",
        ),
        pytest.param(
            profile(
                plugin_config=[
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}}
                ]
            ),
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio",
            "Required value: must be specified when type is RequestedToCapacityRatio",
            id="rtcr-without-shape",
        ),
        pytest.param(
            profile(
                plugin_config=[
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {
                                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 40, "score": 2}]
                                },
                            }
                        },
                    }
                ]
            ),
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "Invalid value: 40: values must be sorted in increasing order",
            id="rtcr-unsorted-shape",
        ),
        pytest.param(
            profile(plugin_config=[{"name": "NodeResourcesFit", "args": {"ignoredResourceGroups": ["example.com/x"]}}]),
            "profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]",
            "Invalid value: \"example.com/x\": resource group name can't contain '/'",
            id="fit-group-with-slash",
        ),
        pytest.param(
            profile(
                plugin_config=[
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                    }
                ]
            ),
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            id="preemption-both-zero",
        ),
        pytest.param(
            profile(plugin_config=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]),
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
            "Invalid value: 101: not in valid range [0, 100]",
            id="hard-pod-affinity-weight",
        ),
        pytest.param(
            profile(
                plugin_config=[
                    {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 2}]}}
                ]
            ),
            "profiles[0].pluginConfig[0].args.resources[0].weight",
            "Invalid value: 2: must be 1",
            id="balanced-weight-not-1",
        ),
        pytest.param(
            profile(
                plugin_config=[
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [
                                {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                            ],
                        },
                    }
                ]
            ),
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew",
            "Invalid value: 0: not in valid range (0, inf)",
            id="spread-max-skew",
        ),
    ],
)
def test_errors(doc: dict[str, Any], path: str, detail: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(doc, registry())
    assert (info.value.path, info.value.detail) == (path, detail)
    assert str(info.value) == f"{path}: {detail}"


def test_multipoint_needs_a_class_factory() -> None:
    def factory(args: Any, handle: Any) -> FilterOnly:
        return FilterOnly(args, handle)

    doc = profile({"multiPoint": {"enabled": [{"name": "Fn"}]}})
    with pytest.raises(
        ConfigError, match=r'profiles\[0\]\.plugins\.multiPoint\.enabled\[0\]\.name: cannot expand plugin "Fn"'
    ):
        load_config(doc, {**BASE, "Fn": factory})
    factory.extension_points = ("filter",)  # type: ignore[attr-defined]
    assert load_config(doc, {**BASE, "Fn": factory}).profiles[0].plugins["filter"][-1] == ("Fn", 0)
    # at a specific point a plain factory is fine: the runtime checks it when it is built
    del factory.extension_points  # type: ignore[attr-defined]
    spec_doc = profile({"filter": {"enabled": [{"name": "Fn2"}]}})
    assert load_config(spec_doc, {**BASE, "Fn2": factory}).profiles[0].enabled("filter")[-1] == "Fn2"


def test_extension_points_of() -> None:
    assert extension_points_of(FilterScore) == frozenset({ExtensionPoint.Filter, ExtensionPoint.Score})
    assert extension_points_of(Coscheduling) == frozenset({ExtensionPoint.Reserve, ExtensionPoint.Permit})
    assert extension_points_of(lambda a, h: None) is None


def test_load_config_file(tmp_path: Path) -> None:
    f = tmp_path / "sched.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: yaml-sched\n  percentageOfNodesToScore: 30\n"
    )
    cfg = load_config_file(f)
    assert cfg.profiles[0].scheduler_name == "yaml-sched"
    assert cfg.profiles[0].percentage_of_nodes_to_score == 30
    f.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n")
    with pytest.raises(ConfigError) as info:
        load_config_file(f)
    assert str(info.value) == f"{f}: parallelism: Invalid value: -1: should be an integer value greater than zero"
    with pytest.raises(ConfigError, match="cannot read file"):
        load_config_file(tmp_path / "absent.yaml")


# --- registry ---------------------------------------------------------------------------------------


def test_in_tree_registry_names_match_plugins() -> None:
    r = reg.in_tree_registry()
    core = {"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "NodeResourcesFit", "DefaultBinder"}
    assert core <= set(r)
    # In upstream's default-plugin order, and nothing outside upstream's plugin set.
    default_order = [name for name, _ in cfg.DEFAULT_PLUGINS]
    assert list(r) == [n for n in default_order if n in r]
    for name, cls in r.items():
        assert cls.name == name  # type: ignore[attr-defined]


def test_load_out_of_tree_ok() -> None:
    got = reg.load_out_of_tree({"Coscheduling": "agents.scheduler.examples.coscheduling:Coscheduling"})
    assert got == {"Coscheduling": Coscheduling}


@pytest.fixture
def broken_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "broken_plugin_mod.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "broken_plugin_mod", raising=False)
    return "broken_plugin_mod:X"


@pytest.mark.parametrize(
    ("name", "target", "detail"),
    [
        pytest.param(
            "Coscheduling", "foo.bar:Baz", "cannot import \"foo.bar:Baz\": No module named 'foo'", id="no-module"
        ),
        pytest.param(
            "Coscheduling",
            "agents.scheduler.examples.coscheduling:Nope",
            'cannot import "agents.scheduler.examples.coscheduling:Nope": '
            '"agents.scheduler.examples.coscheduling" has no attribute "Nope"',
            id="no-attribute",
        ),
        pytest.param(
            "Coscheduling",
            "agents.scheduler.examples.coscheduling:NAME",
            '"agents.scheduler.examples.coscheduling:NAME" '
            "is not a plugin class or factory (got str): it must be callable",
            id="not-callable",
        ),
        pytest.param(
            "Gang",
            "agents.scheduler.examples.coscheduling:Coscheduling",
            '"agents.scheduler.examples.coscheduling:Coscheduling" is the plugin "Coscheduling", not "Gang"',
            id="name-mismatch",
        ),
        pytest.param(
            "X", "foo.bar", 'expected an import path like "package.module:Class", got "foo.bar"', id="no-colon"
        ),
        pytest.param("X", "BROKEN", 'cannot import "broken_plugin_mod:X": RuntimeError: boom', id="module-raises"),
    ],
)
def test_load_out_of_tree_errors(name: str, target: str, detail: str, broken_module: str) -> None:
    target = broken_module if target == "BROKEN" else target
    with pytest.raises(ConfigError) as info:
        reg.load_out_of_tree({name: target})
    assert info.value.path == f"schedulerOptions.plugins.{name}"
    assert info.value.detail == detail


def _fake_entry_points(monkeypatch: pytest.MonkeyPatch, *eps: tuple[str, str]) -> None:
    found = [EntryPoint(name=n, value=v, group=reg.ENTRY_POINT_GROUP) for n, v in eps]
    monkeypatch.setattr(reg, "entry_points", lambda group: [e for e in found if e.group == group])


def test_entry_points_discovered_and_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_entry_points(monkeypatch, ("Coscheduling", "agents.scheduler.examples.coscheduling:Coscheduling"))
    r = reg.build_registry()
    assert r["Coscheduling"] is Coscheduling
    assert list(r)[-1] == "Coscheduling"
    # an explicit schedulerOptions entry of the same name wins, and the entry point is not imported
    _fake_entry_points(monkeypatch, ("Coscheduling", "nowhere.at.all:X"))
    r = reg.build_registry({"Coscheduling": "agents.scheduler.examples.coscheduling:Coscheduling"})
    assert r["Coscheduling"] is Coscheduling
    assert reg.build_registry(entry_point_group=None) == reg.in_tree_registry()


@pytest.mark.parametrize(
    ("eps", "explicit", "path", "detail"),
    [
        pytest.param(
            [],
            {"NodeName": "agents.scheduler.plugins.nodename:NodeName"},
            "schedulerOptions.plugins.NodeName",
            'a plugin named "NodeName" already exists',
            id="explicit-shadows-in-tree",
        ),
        pytest.param(
            [("PrioritySort", "agents.scheduler.plugins.queuesort:PrioritySort")],
            {},
            "kube_emulator.plugins.PrioritySort",
            'a plugin named "PrioritySort" already exists',
            id="entry-point-shadows-in-tree",
        ),
        pytest.param(
            [("Gang", "nowhere.at.all:X")],
            {},
            "kube_emulator.plugins.Gang",
            "cannot import \"nowhere.at.all:X\": No module named 'nowhere'",
            id="entry-point-import-error",
        ),
    ],
)
def test_build_registry_errors(
    monkeypatch: pytest.MonkeyPatch, eps: list[tuple[str, str]], explicit: dict[str, str], path: str, detail: str
) -> None:
    _fake_entry_points(monkeypatch, *eps)
    with pytest.raises(ConfigError) as info:
        reg.build_registry(explicit)
    assert (info.value.path, info.value.detail) == (path, detail)
