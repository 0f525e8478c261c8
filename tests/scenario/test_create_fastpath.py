"""``Cluster.create`` with a client whose calls cannot suspend makes its first try at once (no
retry loop) and hands a retriable failure to the loop as the loop would have met it. Against
the loop alone (the client made not ``instant``, so ``create`` goes through ``retrying``):
random runs of server errors (``InternalError``, ``Conflict``, and the errors the runner does
not retry: ``AlreadyExists``, ``Invalid``, ``NotFound``) raised by the server itself, more
than the ten tries included, give the same answer or error, the same server calls at the same
virtual times, the same client counters and the same stored objects and revision."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.app.scenario.cluster import RUNNER_ATTEMPTS, Cluster
from emulator.app.scenario.loader import load_scenario_text
from emulator.base.api.core import Namespace
from emulator.base.api.errors import AlreadyExists, ApiError, Conflict, InternalError, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import VirtualTimeEventLoop
from tests import builders

ERRORS = st.sampled_from(["internal", "conflict", "exists", "invalid", "notfound"])
SCENARIO = load_scenario_text("name: x\nsteps: []\n", source="s.yaml", base_dir=Path("."))


def _error(name: str) -> ApiError:
    return {
        "internal": InternalError("injected"),
        "conflict": Conflict("injected"),
        "exists": AlreadyExists("injected"),
        "invalid": Invalid("injected"),
        "notfound": NotFound("injected"),
    }[name]


async def _scenario(fast: bool, errors: list[str]) -> Any:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    cluster = Cluster(SCENARIO, 0, clock)
    srv = cluster.server
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    client = cluster.client
    assert client.instant("Pod")
    if not fast:
        client.instant = lambda kind="": False  # type: ignore[method-assign]
    calls: list[float] = []
    pending = list(errors)
    real = srv.create

    def create(obj: Any, **options: Any) -> Any:
        calls.append(clock.now())
        if pending:
            raise _error(pending.pop(0))
        return real(obj, **options)

    srv.create = create  # type: ignore[method-assign]
    try:
        answer: Any = await cluster.create(builders.pod("p"))
    except ApiError as err:
        answer = (type(err).__name__, str(err), err.__context__)
    counters = (client.stats.calls, client.stats.errors)
    return answer, calls, counters, clock.now(), srv.list("Pod"), srv.revision


def _run(fast: bool, errors: list[str]) -> Any:
    loop = VirtualTimeEventLoop()
    try:
        return loop.run_until_complete(_scenario(fast, errors))
    finally:
        loop.close()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ERRORS, max_size=RUNNER_ATTEMPTS + 2))
def test_first_try_at_once_equals_the_retry_loop(errors: list[str]) -> None:
    assert _run(True, errors) == _run(False, errors)


@pytest.mark.parametrize(
    ("errors", "created", "times"),
    [
        ([], True, [0.0]),
        (["internal", "conflict"], True, [0.0, 0.5, 1.5]),
        (["exists"], False, [0.0]),
        (["internal"] * RUNNER_ATTEMPTS, False, [0.0, 0.5, 1.5, 3.5, 7.5, 15.5, 25.5, 35.5, 45.5, 55.5]),
    ],
)
def test_cases_that_matter_are_reached(errors: list[str], created: bool, times: list[float]) -> None:
    """The comparison above covers a first-try success, a retried success, a refused write and
    tries run out (the last error stands, with no context from the first)."""
    answer, calls, _, _, _, _ = _run(True, errors)
    assert calls == times
    if created:
        assert answer.metadata.name == "p"
    else:
        assert isinstance(answer, tuple)
        assert answer[2] is None
