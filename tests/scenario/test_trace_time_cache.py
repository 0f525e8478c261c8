"""The trace recorder rounds a write's time once per instant (``TraceRecorder._t``): a run of
writes at one instant, then at another, then back, gives the lines ``trace_line`` gives."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.app.scenario import event_trace
from emulator.app.scenario.event_trace import TraceRecorder
from emulator.base.apiserver.server import WriteRecord
from tests import builders
from tests.references import trace_line

# times that round differently, the same way, and to a neighbour's rounding
_TIMES = [0.0, 1e-7, 4e-7, 6e-7, 1.0000004, 1.0000006, 2.5, 1 / 3, 120.0]


def _records(times: list[float]) -> list[WriteRecord]:
    pod = builders.pod("p", namespace="ns", image="", node="n", phase="Running", reason="")
    return [WriteRecord(i + 1, t, "update", "Pod", None, pod) for i, t in enumerate(times)]


def _reference_digest(recs: list[WriteRecord]) -> str:
    return hashlib.sha256(b"".join(event_trace._encoder.encode(trace_line(r)) + b"\n" for r in recs)).hexdigest()


@pytest.mark.parametrize(
    "times",
    [
        pytest.param([0.0, 0.0, 0.0], id="one-instant"),
        pytest.param([0.0, 1e-7, 6e-7, 6e-7, 0.0], id="back-and-forth"),
        pytest.param([1 / 3, 1 / 3, 2.5, 1 / 3], id="returns-to-an-earlier-instant"),
    ],
)
def test_rounded_once_per_instant(times: list[float]) -> None:
    recs = _records(times)
    rec = TraceRecorder()
    for r in recs:
        rec(r)
    assert rec.hexdigest == _reference_digest(recs)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_TIMES), max_size=40))
def test_any_time_sequence_matches_the_reference(times: list[float]) -> None:
    recs = _records(times)
    rec = TraceRecorder()
    for r in recs:
        rec(r)
    assert rec.hexdigest == _reference_digest(recs)
