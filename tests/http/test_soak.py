"""The soak (issue 24): ``python -m emulator serve`` on a churning cluster at speed 1 under 20
watchers and 300 mixed requests per second, through ``bench/soak.py``. Nothing may be lost,
the clock must keep pace, latency and memory must stay bounded. ``SOAK_SECONDS`` sets the
length (CI: 60; a developer may run 10)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SECONDS = float(os.environ.get("SOAK_SECONDS", "60"))
RATE = 300.0


def _bench_soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_soak", BENCH / "soak.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.real_time
def test_soak_loses_nothing_keeps_pace_and_stays_bounded() -> None:
    figures = _bench_soak().soak(SECONDS, RATE, 20)
    print(figures)
    assert figures["events_lost"] == []
    assert figures["errors"] == {}
    assert figures["watchers"] == 20
    assert figures["watch_events"] > 0
    assert figures["requests_per_s"] >= 0.8 * RATE
    assert figures["latency_ms"]["p99"] < 2000
    assert figures["clock"]["samples"] > 0
    assert abs(figures["clock"]["drift_s"]) < 1.0
    assert figures["rss_mib"]["end"] - figures["rss_mib"]["start"] < 256


def test_the_soaks_check_finds_a_lost_event() -> None:
    """The check itself: a watcher that missed one MODIFIED is caught twice (its replay is
    stale, and it saw other events than its twin)."""
    soak = _bench_soak()
    events = [("ADDED", "u2", 11), ("MODIFIED", "u1", 12), ("DELETED", "u2", 13)]
    final = {"metadata": {"resourceVersion": "13"}, "items": [{"metadata": {"uid": "u1", "resourceVersion": "12"}}]}

    def watcher(seen: list[tuple[str, str, int]]) -> object:
        return soak.Watcher("/api/v1/pods", start_rv=10, initial={"u1": 5}, events=seen)

    check = soak.Soak.check
    whole = type("S", (), {"watchers": [watcher(events), watcher(list(events))]})()
    assert check(whole, {"/api/v1/pods": final}) == []
    missed = type("S", (), {"watchers": [watcher(events), watcher([events[0], events[2]])]})()
    problems = check(missed, {"/api/v1/pods": final})
    assert len(problems) == 2
    assert "replayed state differs" in problems[0]
    assert "saw different events" in problems[1]
