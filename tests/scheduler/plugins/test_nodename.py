"""NodeName: a pod naming a node only fits that node."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.interface import FilterPlugin
from agents.scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState, EventResource, NodeInfo
from agents.scheduler.plugins.nodename import ERR_REASON, NAME, NodeName
from emulator.base.api.core import Pod
from tests import builders


def pod(node_name: str) -> Pod:
    return builders.pod("p", namespace="", node=node_name, image="")


def node(name: str) -> NodeInfo:
    return NodeInfo(builders.node(name, cpu=None, memory=None, pods=None))


@pytest.mark.parametrize(
    ("node_name", "node_info_name", "want_code", "want_reasons"),
    [
        pytest.param("", "foo", Code.Success, (), id="no-node-name-fits-any"),
        pytest.param("foo", "foo", Code.Success, (), id="same-name"),
        pytest.param("bar", "foo", Code.UnschedulableAndUnresolvable, (ERR_REASON,), id="other-name"),
    ],
)
def test_filter(node_name: str, node_info_name: str, want_code: Code, want_reasons: tuple[str, ...]) -> None:
    status = NodeName(None, None).filter(CycleState(), pod(node_name), node(node_info_name))
    assert (status.code, status.reasons) == (want_code, want_reasons)


def test_reason_and_events() -> None:
    pl = NodeName(None, None)
    assert isinstance(pl, FilterPlugin)
    assert pl.name == NAME == "NodeName"
    assert ERR_REASON == "node(s) didn't match the requested node name"
    (ev,) = pl.events_to_register()
    assert (ev.event, ev.hint) == (ClusterEvent(EventResource.Node, ActionType.Add), None)
