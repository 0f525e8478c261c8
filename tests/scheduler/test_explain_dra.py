"""``explain`` over manifests with DRA objects: DynamicResources' rows per node and the
``0/N nodes are available`` message as upstream prints them (``explain_objects``)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler import WORKLOAD_KINDS, explain_objects
from agents.scheduler.config import load_config
from agents.scheduler.registry import in_tree_registry
from tests.scheduler.plugins.dra_api import api_claim, api_class, api_node, api_slice, claim_pod


def explain(pod: Any, nodes: list[Any], objects: list[Any]) -> Any:
    cfg = load_config(None, in_tree_registry())
    return explain_objects(
        pod,
        config=cfg,
        profile=cfg.profiles[0],
        registry=in_tree_registry(),
        nodes=nodes,
        running=[],
        workloads=objects,
    )


def test_dra_kinds_are_explain_inputs() -> None:
    for kind in ("ResourceClaim", "ResourceSlice", "DeviceClass"):
        assert kind in WORKLOAD_KINDS


def _rows(exp: Any) -> dict[str, tuple[str, tuple[str, ...]]]:
    out = {}
    for n in exp.nodes:
        for name, status in n.filter.items():
            if name == "DynamicResources":
                out[n.name] = (status.code.name, tuple(status.reasons))
    return out


@pytest.mark.parametrize(
    ("objects", "rows", "selected", "message"),
    [
        pytest.param(
            [api_claim("gpu"), api_class(), api_slice("a", devices=0), api_slice("b", devices=1)],
            {"a": ("UnschedulableAndUnresolvable", ("cannot allocate all claims",)), "b": ("Success", ())},
            "b",
            None,
            id="only the node with a free device",
        ),
        pytest.param(
            [
                api_claim("gpu"),
                api_class(),
                api_claim("other", allocation=("b", "device-0")),
                api_slice("b", devices=1),
            ],
            {
                "a": ("UnschedulableAndUnresolvable", ("cannot allocate all claims",)),
                "b": ("UnschedulableAndUnresolvable", ("cannot allocate all claims",)),
            },
            None,
            "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes "
            "are available: 2 Preemption is not helpful for scheduling.",
            id="the only device is allocated",
        ),
        pytest.param(
            [api_claim("gpu", allocation=("a", "device-0")), api_class(), api_slice("a", devices=1)],
            {"a": ("Success", ()), "b": ("UnschedulableAndUnresolvable", ("resourceclaim not available on the node",))},
            "a",
            None,
            id="allocated claim pins its node",
        ),
    ],
)
def test_dynamic_resources_rows(
    objects: list[Any], rows: dict[str, Any], selected: str | None, message: str | None
) -> None:
    exp = explain(claim_pod("p", "gpu"), [api_node("a"), api_node("b")], objects)
    assert _rows(exp) == rows
    assert exp.selected == selected
    if message is not None:
        assert exp.message == message
