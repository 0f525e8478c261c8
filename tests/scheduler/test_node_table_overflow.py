"""A node whose sums pass int64 does not crash the NodeTable (regression: OverflowError).

Validation bounds each quantity's milli-value to an int64, but a node's requested sum is not
bounded: pods given ``spec.nodeName`` bypass the fit check. The table saturates such a value
at ±(2**63 − 1) and sets ``huge``, so no vectorised path reads it.
"""

from __future__ import annotations

import pytest

from agents.scheduler.framework.node_table import ALLOC_CPU, FREE_CPU, INT64_MAX, REQ_CPU, NodeTable
from agents.scheduler.framework.types import NodeInfo, PodInfo
from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod
from emulator.base.api.quantity import MAX_VALUE

MAX = str(MAX_VALUE)


def _info(pods: int, cpu: str = MAX) -> NodeInfo:
    node = convert({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": MAX, "pods": "110"}}}, Node)
    info = NodeInfo(node)
    for i in range(pods):
        container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
        spec = {"nodeName": "n", "containers": [container]}
        pod = convert({"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"p{i}"}, "spec": spec}, Pod)
        info.add_pod(PodInfo(pod))
    return info


ALLOC = MAX_VALUE * 1000


@pytest.mark.parametrize(
    ("pods", "requested", "free"),
    [
        pytest.param(0, 0, ALLOC, id="empty-at-max"),
        pytest.param(1, ALLOC, 0, id="one-max-pod"),
        pytest.param(2, INT64_MAX, -ALLOC, id="two-max-pods"),
        pytest.param(100, INT64_MAX, -INT64_MAX, id="hundred-max-pods"),
    ],
)
def test_sums_past_int64_saturate_and_mark_the_table_huge(pods: int, requested: int, free: int) -> None:
    table = NodeTable([_info(pods)])
    assert table.huge
    assert int(table.data[ALLOC_CPU][0]) == ALLOC
    assert int(table.data[REQ_CPU][0]) == requested
    assert int(table.data[FREE_CPU][0]) == free


def test_update_row_saturates_too() -> None:
    infos = [_info(0, cpu="1")]
    table = NodeTable(infos)
    infos[0] = fresh = _info(3)
    table.update_row(0, fresh)
    assert table.huge
    assert int(table.req_cpu[0]) == INT64_MAX
    assert int(table.free_cpu[0]) == -INT64_MAX


def test_many_nodes_at_the_maximum_do_not_overflow() -> None:
    """Each node within int64 but 100,000 of them: no column sums over nodes, nothing overflows."""
    info = _info(1)
    table = NodeTable([info] * 100_000)
    assert table.size == 100_000
    assert table.huge
    assert int(table.alloc_cpu.max()) == ALLOC


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        pytest.param(2**63, INT64_MAX, id="one-past-int64"),
        pytest.param(2**64 - 1, INT64_MAX, id="uint64-max"),
        pytest.param(-(2**70), -INT64_MAX, id="far-below"),
        pytest.param(12345, 12345, id="ordinary"),
    ],
)
def test_derived_values_past_int64_are_clamped(value: int, stored: int) -> None:
    """Regression: ImageLocality's scaled size of an image of ``sizeBytes`` 2**64 − 1 raised."""
    infos = [_info(0)]
    table = NodeTable(infos)
    assert int(table.derived(("test", value), lambda _: value, "info")[0]) == stored
    infos[0] = fresh = _info(1)
    table.update_row(0, fresh)
    assert int(table.derived(("test", value), lambda _: value, "info")[0]) == stored
