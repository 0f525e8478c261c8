"""The node allocation heat map: nodes × time buckets, one map per resource (CPU, memory,
and ``nvidia.com/gpu`` where some node has it), drawn by the page's script on a
``<canvas>`` from the series' base64 rows (1,000 nodes × 240 buckets is 240,000 cells: far
too many SVG elements, and the rows are already the most compact form).

Rows are sorted by the node's mean allocation of that resource over the buckets in which it
existed, highest first (ties keep creation order), so packed nodes gather at the top and a
hot spot stands out; a node that never existed sorts last. Intervals in which a node's Ready
condition was not True are drawn dark and hatched over the cells. Owns the ordering and the
data handed to the script; the drawing itself is ``page.SCRIPT``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from emulator.app.report.fmt import esc, fmt_duration, script_json, time_ticks

__all__ = ["ABSENT", "decode_rows", "heatmap", "sort_order"]

ABSENT = 255
"""The cell value of a bucket in which the node did not exist for the whole bucket."""


def decode_rows(rows: Sequence[str]) -> list[bytes]:
    """The byte rows of one resource (``ValueError`` for a row that is not base64)."""
    try:
        return [base64.b64decode(row, validate=True) for row in rows]
    except binascii.Error as err:
        raise ValueError(f"not base64: {err}") from None


def sort_order(rows: Sequence[bytes]) -> list[int]:
    """Node indexes by mean allocation over their existing buckets, highest first."""

    def key(i: int) -> tuple[int, float, int]:
        cells = [c for c in rows[i] if c != ABSENT]
        if not cells:
            return (1, 0.0, i)
        return (0, -sum(cells) / len(cells), i)

    return sorted(range(len(rows)), key=key)


def heatmap(heat_id: str, nodes: dict[str, Any]) -> str:
    """The resource selector, the canvas and its data (``nodes`` = the series' ``nodes``)."""
    resources: list[str] = list(nodes["resources"])
    edges: list[float] = list(nodes["edges"])
    order = {r: sort_order(decode_rows(nodes["allocation"][r])) for r in resources}
    end = edges[-1] if edges else 0.0
    data = {
        "names": nodes["names"],
        "edges": edges,
        "resources": resources,
        "rows": {r: nodes["allocation"][r] for r in resources},
        "order": order,
        "notReady": nodes["notReady"],
        "pods": _pods_rows(nodes.get("pods")),
        "ticks": [[t, fmt_duration(t)] for t in time_ticks(edges[0] if edges else 0.0, end)],
    }
    buttons = "".join(
        f'<button type="button" class="res{" on" if i == 0 else ""}" data-heat="{esc(heat_id)}" data-res="{esc(r)}">'
        f"{esc(_label(r))}</button>"
        for i, r in enumerate(resources)
    )
    scale = (
        '<span class="scale"><span>0%</span><i class="ramp"></i><span>100% allocated</span>'
        '<i class="nr"></i><span>not Ready</span><i class="absent"></i><span>no node</span></span>'
    )
    return (
        f'<div class="heat-controls">{buttons}{scale}</div>'
        f'<canvas class="heat" id="{esc(heat_id)}" width="960" height="100"></canvas>'
        f'<script type="application/json" id="data-{esc(heat_id)}">{script_json(data)}</script>'
    )


def _pods_rows(pods: list[list[int]] | None) -> list[str] | None:
    """The optional pods-per-bucket counts as base64 bytes like the allocation rows (255
    meaning 255 or more): a third of the size of JSON numbers for 1,000 nodes."""
    if pods is None:
        return None
    return [base64.b64encode(bytes(min(int(v), 255) for v in row)).decode() for row in pods]


def _label(resource: str) -> str:
    return {"cpu": "CPU", "memory": "Memory", "nvidia.com/gpu": "GPU (nvidia.com/gpu)"}.get(resource, resource)
