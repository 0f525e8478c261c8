"""``explain`` over manifests with storage objects: the volume plugins' rows and the
``0/N nodes are available`` message as upstream prints them (``explain_objects``)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler import WORKLOAD_KINDS, explain_objects
from agents.scheduler.config import load_config
from agents.scheduler.framework.types import Code
from agents.scheduler.plugins.volumebinding import ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT
from agents.scheduler.plugins.volumezone import ERR_REASON_CONFLICT
from agents.scheduler.registry import in_tree_registry
from tests.scheduler.plugins.volume_helpers import claim_pod, classes, node, pv, pvc

ZONE = "topology.kubernetes.io/zone"
UU = Code.UnschedulableAndUnresolvable


def explain(pod: Any, nodes: list[Any], storage: list[Any]) -> Any:
    cfg = load_config(None, in_tree_registry())
    return explain_objects(
        pod,
        config=cfg,
        profile=cfg.profiles[0],
        registry=in_tree_registry(),
        nodes=nodes,
        running=[],
        workloads=storage,
    )


def test_storage_kinds_are_explain_inputs() -> None:
    for kind in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver"):
        assert kind in WORKLOAD_KINDS


@pytest.mark.parametrize(
    ("storage", "rows", "message"),
    [
        pytest.param(
            [
                pv("disk-a", claim=("default", "data"), affinity={ZONE: ["zone-a"]}, labels={ZONE: "zone-a"}),
                pvc("data", volume="disk-a", bound=True),
            ],
            {"VolumeBinding": ERR_REASON_NODE_CONFLICT, "VolumeZone": ERR_REASON_CONFLICT},
            "0/2 nodes are available: 2 node(s) had volume node affinity conflict.",
            id="zonal PV, zone gone",
        ),
        pytest.param(
            [pvc("data")],
            {"VolumeBinding": ERR_REASON_BIND_CONFLICT},
            "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.",
            id="WaitForFirstConsumer, no PV",
        ),
        pytest.param(
            [],
            {"VolumeRestrictions": 'persistentvolumeclaim "data" not found'},
            '0/2 nodes are available: persistentvolumeclaim "data" not found.',
            id="claim missing",
        ),
    ],
)
def test_volume_rows_and_message(storage: list[Any], rows: dict[str, str], message: str) -> None:
    nodes = [node("b-0", {ZONE: "zone-b"}), node("c-0", {ZONE: "zone-c"})]
    exp = explain(claim_pod("db-0", "data"), nodes, [*classes(), *storage])
    for ne in exp.nodes:
        for plugin, reason in rows.items():
            status = ne.filter[plugin]
            assert (status.code, list(status.reasons)) == (UU, [reason])
    assert exp.message.startswith(message), exp.message
