"""``emulator.base.client.retry``: client-go's ``wait.Backoff`` steps, ``ExponentialBackoff``,
``OnError`` and ``RetryOnConflict`` on virtual time, and the two opt-in departures
(``attempts``, zero waits that do not yield)."""

from __future__ import annotations

import asyncio
import itertools
import math
import random
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.api.errors import AlreadyExists, ApiError, Conflict, InternalError, NotFound
from emulator.base.client.retry import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    UNLIMITED,
    Backoff,
    WaitTimeout,
    exponential_backoff,
    on_error,
    retry_on_conflict,
)
from emulator.base.runtime.clock import LoopClock, run

# --- Step(): pure -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backoff", "waits"),
    [
        pytest.param(Backoff(duration=3.0), [3.0, 3.0, 3.0], id="no-steps-constant"),
        pytest.param(Backoff(duration=0.5, steps=3), [0.5, 0.5, 0.5, 0.5], id="factor-0-constant"),
        pytest.param(
            Backoff(duration=1.0, factor=2.0, steps=4), [1.0, 2.0, 4.0, 8.0, 16.0, 16.0], id="steps-then-last"
        ),
        pytest.param(
            Backoff(duration=1.0, factor=2.0, steps=10, cap=5.0), [1.0, 2.0, 4.0, 5.0, 5.0], id="cap-ends-the-steps"
        ),
        pytest.param(Backoff(duration=8.0, factor=2.0, steps=3, cap=5.0), [8.0, 5.0, 5.0], id="cap-not-on-first"),
        pytest.param(Backoff(duration=1.0, factor=0.5, steps=2), [1.0, 0.5, 0.25, 0.25], id="shrinking"),
        pytest.param(Backoff(steps=5), [0.0] * 6, id="zero"),
        pytest.param(
            Backoff(duration=0.5, factor=2.0, cap=30.0, steps=UNLIMITED),
            [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0],
            id="kubelet-api-retry",
        ),
        pytest.param(
            Backoff(duration=0.5, factor=2.0, cap=10.0, steps=10),
            [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0],
            id="runner-retry",
        ),
    ],
)
def test_step_sequence_is_client_go(backoff: Backoff, waits: list[float]) -> None:
    assert list(itertools.islice(backoff.delays(), len(waits))) == waits
    got, b = [], backoff
    for _ in waits:
        wait, b = b.step()
        got.append(wait)
    assert got == waits


@pytest.mark.parametrize(
    ("backoff", "after"),
    [
        pytest.param(
            Backoff(duration=1.0, factor=2.0, steps=2), Backoff(duration=2.0, factor=2.0, steps=1), id="one-step"
        ),
        pytest.param(
            Backoff(duration=4.0, factor=2.0, steps=9, cap=6.0),
            Backoff(duration=6.0, factor=2.0, steps=0, cap=6.0),
            id="capped-steps-zero",
        ),
        pytest.param(Backoff(duration=1.0, steps=-3), Backoff(duration=1.0, steps=0), id="negative-steps-become-0"),
    ],
)
def test_step_returns_the_stepped_backoff_and_leaves_the_original(backoff: Backoff, after: Backoff) -> None:
    before = Backoff(**{f: getattr(backoff, f) for f in ("duration", "factor", "jitter", "steps", "cap")})
    _, stepped = backoff.step()
    assert stepped == after
    assert backoff == before


def test_default_constants_are_client_gos() -> None:
    assert (DEFAULT_RETRY.steps, DEFAULT_RETRY.duration, DEFAULT_RETRY.factor, DEFAULT_RETRY.jitter) == (
        5,
        0.010,
        1.0,
        0.1,
    )
    assert (DEFAULT_BACKOFF.steps, DEFAULT_BACKOFF.duration, DEFAULT_BACKOFF.factor, DEFAULT_BACKOFF.jitter) == (
        4,
        0.010,
        5.0,
        0.1,
    )
    assert DEFAULT_RETRY.cap == DEFAULT_BACKOFF.cap == 0.0


@pytest.mark.parametrize(
    "backoff",
    [pytest.param(DEFAULT_RETRY, id="default-retry"), pytest.param(DEFAULT_BACKOFF, id="default-backoff")],
)
def test_jitter_is_one_draw_per_step_from_the_given_rng(backoff: Backoff) -> None:
    rng, twin = random.Random(7), random.Random(7)
    plain = Backoff(duration=backoff.duration, factor=backoff.factor, steps=backoff.steps)
    bare = list(itertools.islice(plain.delays(), 8))
    got = list(itertools.islice(backoff.delays(rng), 8))
    assert got == [d + twin.random() * backoff.jitter * d for d in bare]
    assert rng.getstate() == twin.getstate()
    assert all(d <= g <= d * (1 + backoff.jitter) for d, g in zip(bare, got, strict=True))


def test_no_jitter_draws_nothing_and_jitter_needs_an_rng() -> None:
    rng = random.Random(3)
    state = rng.getstate()
    list(itertools.islice(Backoff(duration=1.0, factor=2.0, steps=5).delays(rng), 6))
    assert rng.getstate() == state
    with pytest.raises(ValueError, match=r"has jitter: pass the seeded random\.Random"):
        DEFAULT_RETRY.step()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("duration", -1.0, id="negative-duration"),
        pytest.param("factor", math.nan, id="nan-factor"),
        pytest.param("jitter", -0.1, id="negative-jitter"),
        pytest.param("cap", math.inf, id="infinite-cap"),
    ],
)
def test_backoff_refuses_bad_numbers(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=rf"Backoff\.{field} must be a finite number >= 0"):
        Backoff(**{field: value})  # type: ignore[arg-type]


# --- the retry loops, on virtual time ----------------------------------------------------------


class Script:
    """An ``fn`` that raises the scripted errors in turn, then returns ``result``; it notes
    the clock time of every call."""

    def __init__(self, clock: LoopClock, errors: list[Exception], result: str = "done") -> None:
        self.clock = clock
        self.errors = list(errors)
        self.result = result
        self.times: list[float] = []

    async def __call__(self) -> str:
        self.times.append(self.clock.now())
        if self.errors:
            raise self.errors.pop(0)
        return self.result


def _clock() -> LoopClock:
    return LoopClock(asyncio.get_running_loop(), virtual=True)


def _times(waits: list[float]) -> list[float]:
    """Clock times of successive tries after ``waits``, summed as the loop does."""
    t, out = 0.0, [0.0]
    for w in waits:
        t += w
        out.append(t)
    return out


@pytest.mark.asyncio
async def test_conflict_is_retried_then_success() -> None:
    clock = _clock()
    fn = Script(clock, [Conflict("c1"), Conflict("c2")])
    backoff = Backoff(duration=1.0, factor=3.0, steps=5)
    assert await retry_on_conflict(backoff, fn, clock=clock) == "done"
    assert fn.times == [0.0, 1.0, 4.0]
    assert clock.now() == 4.0


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(InternalError("boom"), id="internal-error"),
        pytest.param(NotFound("gone"), id="not-found"),
        pytest.param(AlreadyExists("there"), id="already-exists-is-not-a-conflict"),
        pytest.param(RuntimeError("bug"), id="not-an-api-error"),
    ],
)
@pytest.mark.asyncio
async def test_non_conflict_is_raised_at_once(error: Exception) -> None:
    clock = _clock()
    fn = Script(clock, [error])
    with pytest.raises(type(error)) as info:
        await retry_on_conflict(Backoff(duration=1.0, steps=5), fn, clock=clock)
    assert info.value is error
    assert fn.times == [0.0]
    assert clock.now() == 0.0


@pytest.mark.parametrize(
    ("backoff", "times", "end"),
    [
        pytest.param(Backoff(duration=1.0, factor=2.0, steps=4), [0.0, 1.0, 3.0, 7.0], 7.0, id="steps-tries"),
        # client-go: the wait after which the duration reached the cap ends the loop, untried
        pytest.param(Backoff(duration=1.0, factor=2.0, steps=10, cap=3.0), [0.0, 1.0], 3.0, id="cap-ends-after-wait"),
        pytest.param(Backoff(duration=0.5, steps=1), [0.0], 0.0, id="one-try"),
        pytest.param(Backoff(steps=3), [0.0, 0.0, 0.0], 0.0, id="back-to-back"),
    ],
)
@pytest.mark.asyncio
async def test_exhausted_steps_raise_the_last_error(backoff: Backoff, times: list[float], end: float) -> None:
    clock = _clock()
    errors: list[Exception] = [Conflict(f"c{i}") for i in range(20)]
    fn = Script(clock, errors)
    with pytest.raises(Conflict) as info:
        await retry_on_conflict(backoff, fn, clock=clock)
    assert fn.times == times
    assert str(info.value) == f"c{len(times) - 1}"
    assert clock.now() == end


@pytest.mark.asyncio
async def test_on_error_retries_what_the_predicate_accepts() -> None:
    clock = _clock()
    fn = Script(clock, [InternalError("a"), InternalError("b"), NotFound("c")])
    seen: list[str] = []

    def retriable(err: Exception) -> bool:
        seen.append(type(err).__name__)
        return isinstance(err, InternalError)

    with pytest.raises(NotFound, match="c"):
        await on_error(Backoff(duration=0.25, steps=5), retriable, fn, clock=clock)
    assert seen == ["InternalError", "InternalError", "NotFound"]
    assert fn.times == [0.0, 0.25, 0.5]


@pytest.mark.asyncio
async def test_jittered_waits_come_from_the_rng_and_move_the_clock_exactly() -> None:
    clock = _clock()
    fn = Script(clock, [Conflict("x")] * 3)
    twin = random.Random(11)
    expected = list(itertools.islice(DEFAULT_BACKOFF.delays(twin), 3))
    assert await retry_on_conflict(DEFAULT_BACKOFF, fn, clock=clock, rng=random.Random(11)) == "done"
    assert fn.times == _times(expected)


@pytest.mark.parametrize(
    ("backoff", "attempts", "failures", "waits"),
    [
        pytest.param(
            Backoff(duration=0.5, factor=2.0, cap=10.0, steps=10),
            10,
            20,
            [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0],
            id="runner-ten-tries",
        ),
        pytest.param(
            Backoff(duration=0.5, factor=2.0, cap=30.0, steps=UNLIMITED),
            UNLIMITED,
            9,
            [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0],
            id="kubelet-until-done",
        ),
        pytest.param(Backoff(duration=1.0, steps=2), 4, 20, [1.0, 1.0, 1.0], id="more-tries-than-steps"),
    ],
)
@pytest.mark.asyncio
async def test_attempts_fixes_the_number_of_tries(
    backoff: Backoff, attempts: int, failures: int, waits: list[float]
) -> None:
    clock = _clock()
    fn = Script(clock, [InternalError(f"e{i}") for i in range(failures)])
    call = on_error(backoff, lambda e: isinstance(e, InternalError), fn, clock=clock, attempts=attempts)
    if failures >= len(waits) + 1:
        with pytest.raises(InternalError, match=f"e{len(waits)}"):
            await call
    else:
        assert await call == "done"
    assert fn.times == _times(waits)


@pytest.mark.asyncio
async def test_zero_waits_do_not_yield_to_other_tasks() -> None:
    clock = _clock()
    ran: list[str] = []

    async def note() -> None:
        ran.append("other")

    other = asyncio.create_task(note(), name="other")
    fn = Script(clock, [Conflict("1"), Conflict("2")])
    await retry_on_conflict(Backoff(steps=5), fn, clock=clock)
    assert len(fn.times) == 3
    assert ran == []
    await other


@pytest.mark.asyncio
async def test_cancellation_during_a_backoff_wait_propagates() -> None:
    clock = _clock()
    fn = Script(clock, [Conflict("c")] * 5)
    task = asyncio.create_task(retry_on_conflict(Backoff(duration=10.0, steps=5), fn, clock=clock), name="retrier")
    await clock.sleep(4.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fn.times == [0.0]
    assert clock.now() == 4.0


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(Backoff(duration=1.0), id="no-steps"),
        pytest.param(Backoff(duration=1.0, steps=-1), id="negative-steps"),
    ],
)
@pytest.mark.asyncio
async def test_no_steps_means_no_try(bad: Backoff) -> None:
    clock = _clock()
    fn = Script(clock, [])
    with pytest.raises(WaitTimeout, match="timed out waiting for the condition"):
        await retry_on_conflict(bad, fn, clock=clock)
    assert fn.times == []


@pytest.mark.asyncio
async def test_attempts_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="attempts must be >= 1"):
        await on_error(Backoff(steps=1), lambda e: True, Script(_clock(), []), clock=_clock(), attempts=0)


# --- ExponentialBackoff -------------------------------------------------------------------------


def _condition(clock: LoopClock, answers: list[bool | Exception]) -> tuple[Callable[[], Awaitable[bool]], list[float]]:
    times: list[float] = []

    async def condition() -> bool:
        times.append(clock.now())
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return condition, times


@pytest.mark.asyncio
async def test_exponential_backoff_until_the_condition_holds() -> None:
    clock = _clock()
    condition, times = _condition(clock, [False, False, True])
    await exponential_backoff(Backoff(duration=1.0, factor=2.0, steps=5), condition, clock=clock)
    assert times == [0.0, 1.0, 3.0]


@pytest.mark.asyncio
async def test_exponential_backoff_times_out_and_passes_errors_through() -> None:
    clock = _clock()
    condition, times = _condition(clock, [False] * 3)
    with pytest.raises(WaitTimeout):
        await exponential_backoff(Backoff(duration=1.0, steps=3), condition, clock=clock)
    assert times == [0.0, 1.0, 2.0]
    condition, times = _condition(clock, [False, InternalError("boom")])
    with pytest.raises(InternalError, match="boom"):
        await exponential_backoff(Backoff(duration=1.0, steps=3), condition, clock=clock)
    assert len(times) == 2


# --- property: the loop's waits are the backoff's steps -------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    duration=st.sampled_from([0.0, 0.001, 0.25, 1.0, 3.0]),
    factor=st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0]),
    jitter=st.sampled_from([0.0, 0.1, 1.0]),
    steps=st.integers(-1, 8),
    cap=st.sampled_from([0.0, 0.5, 2.0, 100.0]),
    failures=st.integers(0, 12),
    seed=st.integers(0, 2**32),
)
def test_tries_and_waits_follow_the_backoff(
    duration: float, factor: float, jitter: float, steps: int, cap: float, failures: int, seed: int
) -> None:
    backoff = Backoff(duration=duration, factor=factor, jitter=jitter, steps=steps, cap=cap)

    async def main() -> tuple[list[float], BaseException | None]:
        clock = _clock()
        fn = Script(clock, [Conflict(str(i)) for i in range(failures)])
        try:
            await retry_on_conflict(backoff, fn, clock=clock, rng=random.Random(seed))
        except (ApiError, WaitTimeout) as err:
            return fn.times, err
        return fn.times, None

    times, err = run(main)
    # client-go's count of tries: ``steps``, fewer when a capped wait ended the steps
    limit, b = 0, backoff
    waits: list[float] = []
    rng = random.Random(seed)
    while b.steps > 0:
        limit += 1
        if b.steps == 1:
            break
        wait, b = b.step(rng)
        waits.append(wait)
    tries = min(failures + 1, limit)
    assert len(times) == tries
    assert times == pytest.approx(_times(waits)[:tries], abs=1e-9)
    if failures < limit:
        assert err is None
    else:
        assert isinstance(err, WaitTimeout if limit == 0 else Conflict)
