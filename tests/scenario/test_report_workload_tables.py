"""The terminal summary's workload tables: kubectl-like columns that fit an 80-column
terminal without cutting a name (the first layout put kind and namespace/name in one column
and cut both to ``Deploym…`` / ``default…``)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from emulator.app.scenario.runner import RunResult
from emulator.app.scenario.summary import print_summary


def _controller(kind: str, namespace: str, name: str, n: int) -> dict[str, Any]:
    updated = None if kind == "ReplicaSet" else n
    return {"kind": kind, "namespace": namespace, "name": name, "desired": n, "ready": n, "available": n,
            "updated": updated, "restarts": 0}  # fmt: skip


def _job(name: str, succeeded: int, failed: int, took: float | None) -> dict[str, Any]:
    return {"kind": "Job", "namespace": "default", "name": name, "succeeded": succeeded, "failed": failed,
            "completionTime": None, "durationSeconds": took, "restarts": 0}  # fmt: skip


def _summary(entries: list[dict[str, Any]], width: int = 80) -> list[str]:
    pods = {"total": 0, "pending": 0, "running": 0, "succeeded": 0, "failed": 0}
    result = RunResult("x", 0, "virtual", 1.0, 1.0, pods, [], 0, "0" * 64, extra={"workloads": entries})
    out = io.StringIO()
    print_summary(result, Console(file=out, width=width))
    return out.getvalue().splitlines()


ROLLOUT = [
    _controller("Deployment", "default", "checkout", 6),
    _controller("ReplicaSet", "default", "checkout-7ddff45748", 6),
    _controller("DaemonSet", "kube-system", "log-agent", 3),
]


@pytest.mark.parametrize(
    ("entries", "rows"),
    [
        pytest.param(
            ROLLOUT,
            [
                ["Deployment", "default", "checkout", "6", "6", "6", "6", "0"],
                ["ReplicaSet", "default", "checkout-7ddff45748", "6", "6", "6", "0"],
                ["DaemonSet", "kube-system", "log-agent", "3", "3", "3", "3", "0"],
            ],
            id="namespaces-shown-when-not-all-default",
        ),
        pytest.param(
            [_controller("Deployment", "default", "storefront", 12)],
            [["Deployment", "storefront", "12", "12", "12", "12", "0"]],
            id="default-namespace-only-no-namespace-column",
        ),
        pytest.param(
            [_job("db-migrate", 0, 4, None), _job("thumbnails", 6, 0, 63.0)],
            [["db-migrate", "0", "4", "0"], ["thumbnails", "6", "0", "0", "63s"]],
            id="jobs-in-their-own-table",
        ),
    ],
)
def test_workload_rows_fit_80_columns_uncut(entries: list[dict[str, Any]], rows: list[list[str]]) -> None:
    lines = _summary(entries)
    assert all(len(line) <= 80 for line in lines), lines
    assert not any("…" in line for line in lines), lines
    for row in rows:
        assert any(line.split() == row for line in lines), (row, lines)


def test_headers_and_split() -> None:
    lines = _summary([*ROLLOUT, _job("thumbnails", 6, 0, 63.0)], width=120)
    headers = [line.split() for line in lines if line.startswith(("kind", "name"))]
    assert headers == [
        ["kind", "namespace", "name", "desired", "ready", "avail", "updated", "restarts"],
        ["name", "status", "succeeded", "failed", "restarts", "took"],
    ]
    titles = [line.strip() for line in lines if line.strip() in ("workloads", "jobs")]
    assert titles == ["workloads", "jobs"]
