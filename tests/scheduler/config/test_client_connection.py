"""``clientConnection`` of a KubeSchedulerConfiguration: qps/burst limit the scheduler's client."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.config import ConfigError, load_config
from agents.scheduler.setup import SchedulerSettings, build_scheduler_setup

DOC = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.mark.parametrize(
    ("client_connection", "want"),
    [
        pytest.param(None, (0.0, 0), id="absent: unlimited"),
        pytest.param({"qps": 100, "burst": 200}, (100.0, 200), id="both"),
        pytest.param({"qps": 20}, (20.0, 100), id="burst defaults to 100 as upstream"),
        pytest.param({"burst": 5}, (0.0, 0), id="no qps: unlimited"),
        pytest.param({"qps": -1, "burst": 5}, (0.0, 0), id="negative qps: no limiter, as client-go"),
        pytest.param(
            {"kubeconfig": "/etc/kubernetes/scheduler.conf", "contentType": "application/vnd.kubernetes.protobuf"},
            (0.0, 0),
            id="one-process fields accepted",
        ),
    ],
)
def test_qps_and_burst(client_connection: dict[str, Any] | None, want: tuple[float, int]) -> None:
    doc = dict(DOC) | ({"clientConnection": client_connection} if client_connection is not None else {})
    cfg = load_config(doc)
    assert (cfg.client_qps, cfg.client_burst) == want
    options = build_scheduler_setup(SchedulerSettings(source="s.yaml", config=doc)).options
    assert (options.client_qps, options.client_burst) == want


@pytest.mark.parametrize(
    ("client_connection", "path", "detail"),
    [
        ({"qps": 5, "burst": -1}, "clientConnection.burst", "Invalid value: -1: must be non-negative"),
        ({"qps": 5, "rate": 1}, "clientConnection.rate", "unknown field"),
        ({"qps": "fast"}, "clientConnection.qps", "expected `float`, got `str`"),
    ],
)
def test_bad_client_connection(client_connection: dict[str, Any], path: str, detail: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(dict(DOC) | {"clientConnection": client_connection})
    assert (info.value.path, info.value.detail) == (path, detail)


def test_settings_override_the_document() -> None:
    """bench's schedulerApiClientQPS/Burst win over the configuration file's clientConnection."""
    doc = dict(DOC) | {"clientConnection": {"qps": 5, "burst": 5}}
    settings = SchedulerSettings(source="s.yaml", config=doc, client_qps=100.0, client_burst=100)
    options = build_scheduler_setup(settings).options
    assert (options.client_qps, options.client_burst) == (100.0, 100)
