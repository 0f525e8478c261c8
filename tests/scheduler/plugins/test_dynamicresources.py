"""``DynamicResources`` for pods without claims, and the unschedulable message of v1.34's default
profile: upstream ``plugins/dynamicresources/dynamicresources.go`` (PreFilter writes an empty
state and skips; PostFilter "no new claims to deallocate", or the state-read error when a
previous PreFilter rejected the pod before this one ran), ``apis/config/v1/default_plugins.go``
``applyFeatureGates`` (the plugin just before DefaultPreemption), ``framework/runtime/framework.go``
``RunPostFilterPlugins`` (reasons joined with ", "; an Error ends PostFilter) and
``framework/types.go`` ``FitError.Error`` (the PostFilter message after one space, no period)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.config import DEFAULT_PLUGINS, load_config
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.types import Code, CycleState
from agents.scheduler.plugins.dynamicresources import NO_CLAIMS_TO_DEALLOCATE, STATE_KEY, DynamicResources
from emulator.base.api.codec import convert
from emulator.base.api.core import Affinity
from tests import builders
from tests.scheduler.world import node, pod, world

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def test_pre_filter_records_no_claims_and_skips() -> None:
    state = CycleState()
    _, status = DynamicResources(None, None).pre_filter(state, pod("p"), [])
    assert status.code is Code.Skip
    state.read(STATE_KEY)  # written before the Skip, for PostFilter


def test_post_filter_has_no_claims_to_deallocate() -> None:
    plugin, state = DynamicResources(None, None), CycleState()
    plugin.pre_filter(state, pod("p"), [])
    result, status = plugin.post_filter(state, pod("p"), NodeToStatus())
    assert result is None
    assert (status.code, status.reasons) == (Code.Unschedulable, (NO_CLAIMS_TO_DEALLOCATE,))
    assert NO_CLAIMS_TO_DEALLOCATE == "no new claims to deallocate"


def test_post_filter_without_its_pre_filter_state_is_an_error() -> None:
    _, status = DynamicResources(None, None).post_filter(CycleState(), pod("p"), NodeToStatus())
    assert (status.code, status.message()) == (Code.Error, "not found")


def test_default_profile_puts_it_before_default_preemption() -> None:
    names = [n for n, _ in DEFAULT_PLUGINS]
    assert names.index("DynamicResources") + 1 == names.index("DefaultPreemption")
    (prof,) = load_config(None).profiles
    assert [n for n, _ in prof.plugins["postFilter"]] == ["DynamicResources", "DefaultPreemption"]
    assert "DynamicResources" not in prof.missing_plugins


async def _message(config: dict[str, Any] | None, *objects: Any) -> str:
    async with world(config=config) as w:
        for obj in objects:
            w.server.create(obj)
        await w.until(lambda: any(c.type == "PodScheduled" for c in w.pod("p").status.conditions))
        cond = next(c for c in w.pod("p").status.conditions if c.type == "PodScheduled")
        (event,) = [e for e in w.server.list("Event")[0] if e.reason == "FailedScheduling"]
        assert event.message == cond.message
        return cond.message


TAINTED = node("t", taints=[builders.taint("dedicated", "infra")])


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("config", "want"),
    [
        pytest.param(
            None,
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node "
            "affinity/selector. no new claims to deallocate, preemption: 0/3 nodes are available: "
            "3 Preemption is not helpful for scheduling.",
            id="v1.34-default-profile-as-real-clusters-print-it",
        ),
        pytest.param(
            {**V1, "profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "DynamicResources"}]}}}]},
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            id="DynamicResources-disabled",
        ),
    ],
)
async def test_unschedulable_message_ends_in_one_period(config: dict[str, Any] | None, want: str) -> None:
    p = pod("p", node_selector={"zone": "a"})
    assert await _message(config, TAINTED, node("a", labels={"zone": "b"}), node("b"), p) == want


@pytest.mark.asyncio
async def test_a_pre_filter_rejection_before_dynamic_resources_ends_post_filter_with_its_error() -> None:
    """NodeAffinity's PreFilter (earlier in the profile) rejects as UnschedulableAndUnresolvable,
    so DynamicResources' PreFilter never writes its state: its PostFilter returns the read error
    and DefaultPreemption does not run."""
    conflict = convert(
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a"]},
                                {"key": "metadata.name", "operator": "In", "values": ["b"]},
                            ]
                        }
                    ]
                }
            }
        },
        Affinity,
    )
    got = await _message(None, node("a"), node("b"), pod("p", affinity=conflict))
    assert got == "0/2 nodes are available: pod affinity terms conflict. not found"
