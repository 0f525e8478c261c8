"""PreBindPreFlight (upstream ``RunPreBindPreFlights``, v1.34) and the PreBind skip set it leaves.

Each row: the pre-flight verdict of plugins A, B, C (None = the plugin has no pre-flight, which
counts as Success), the combined status, and which PreBind plugins then run.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.framework.interface import ExtensionPoint as EP
from agents.scheduler.framework.types import Code, CycleState, Status
from emulator.base.api.core import Pod
from tests.scheduler.framework.test_runtime import build, make_pod

S, E, U, SKIP = Code.Success, Code.Error, Code.Unschedulable, Code.Skip


class PreBinder:
    def __init__(self, name: str, calls: list[str]) -> None:
        self.name, self.calls = name, calls

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.calls.append(self.name)
        return Status()


class PreFlighter(PreBinder):
    def __init__(self, name: str, calls: list[str], verdict: Code) -> None:
        super().__init__(name, calls)
        self.verdict = verdict

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status(self.verdict, f"{self.name}: x") if self.verdict is not S else Status()


def _plugins(verdicts: list[Code | None], calls: list[str]) -> list[Any]:
    return [
        PreBinder(n, calls) if v is None else PreFlighter(n, calls, v) for n, v in zip("ABC", verdicts, strict=False)
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("verdicts", "want_code", "want_msg", "want_ran"),
    [
        pytest.param([], SKIP, "", [], id="no-pre-bind-plugins"),
        pytest.param([SKIP, SKIP], SKIP, "", [], id="all-skip"),
        pytest.param([SKIP, S], S, "", ["B"], id="one-works"),
        pytest.param([SKIP, None], S, "", ["B"], id="no-pre-flight-counts-as-success"),
        pytest.param([None, SKIP, None], S, "", ["A", "C"], id="skipped-plugin-left-out"),
        pytest.param([SKIP, E, S], E, 'running PreBindPreFlight "B": B: x', None, id="error"),
        pytest.param(
            [U],
            E,
            'PreBindPreFlight A returned "Unschedulable", which is unsupported. '
            "It is supposed to return Success, Skip, or Error status",
            None,
            id="unsupported-code",
        ),
    ],
)
async def test_pre_flights(
    verdicts: list[Code | None], want_code: Code, want_msg: str, want_ran: list[str] | None
) -> None:
    calls: list[str] = []
    fw = build({EP.PreBind: _plugins(verdicts, calls)})
    state = CycleState()
    status = fw.run_pre_bind_pre_flights(state, make_pod(), "n1")
    assert (status.code, status.message()) == (want_code, want_msg)
    if want_ran is not None:
        assert (await fw.run_pre_bind_plugins(state, make_pod(), "n1")).is_success()
        assert calls == want_ran


@pytest.mark.asyncio
async def test_without_pre_flight_every_pre_bind_plugin_runs() -> None:
    """A CycleState whose pre-flight never ran skips nothing (PreBind run directly, as tests do)."""
    calls: list[str] = []
    fw = build({EP.PreBind: _plugins([SKIP, SKIP], calls)})
    assert (await fw.run_pre_bind_plugins(CycleState(), make_pod(), "n1")).is_success()
    assert calls == ["A", "B"]


def test_clone_keeps_the_skip_set() -> None:
    calls: list[str] = []
    fw = build({EP.PreBind: _plugins([SKIP, S], calls)})
    state = CycleState()
    fw.run_pre_bind_pre_flights(state, make_pod(), "n1")
    assert state.clone().skip_pre_bind_plugins == frozenset({"A"})
