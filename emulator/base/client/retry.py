"""Retrying an API call: client-go's ``wait.Backoff``, ``RetryOnConflict`` and ``OnError``.

This module owns how long a client waits between tries and when it stops trying. It does
not decide *which* errors a caller retries (each call site says, as in client-go) nor what a
retried call does (re-read, rebuild): the caller's ``fn`` does that on every try.

``Backoff`` is client-go's ``wait.Backoff`` (``apimachinery/pkg/util/wait/backoff.go``),
with durations in seconds. ``step()`` is its ``Step()``, pure (it returns the stepped
backoff instead of mutating one):

=====================  ==================================================================
state                  ``step()`` returns
=====================  ==================================================================
``steps < 1``          ``duration`` (jittered); nothing changes any more
``steps >= 1``         ``duration`` (jittered); next ``duration *= factor`` (unless the
                       factor is 0); ``steps -= 1``; a next duration above ``cap`` (when
                       ``cap > 0``) becomes ``cap`` and ``steps`` becomes 0
=====================  ==================================================================

Jitter is ``duration + rng.random() * jitter * duration`` (``wait.Jitter``), one draw per
step, only when ``jitter > 0`` and only from the seeded ``random.Random`` the caller
passes: a backoff without jitter needs no rng, and one with jitter refuses to run without.
Waits are floats, not Go's whole nanoseconds.

``on_error`` is ``retry.OnError`` over ``wait.ExponentialBackoff``: ``fn`` runs at most
``steps`` times with ``step()`` waits between; it stops early after the wait at which the
next duration reached the cap (client-go's rule: the try after that wait never runs). A
non-retriable error is raised at once; when the tries run out the last retriable error is
raised (client-go returns it). ``retry_on_conflict`` retries ``Conflict`` only. With
``steps < 1`` ``fn`` never runs and ``WaitTimeout`` is raised (client-go returns nil).

Two more departures, both needed by this project's callers and both opt-in:

* ``attempts=n`` runs ``fn`` up to exactly ``n`` times, sleeping successive ``step()``
  waits between (which stay at the capped duration once the steps are used up, as a loop
  over client-go's ``BackoffManager`` does); ``attempts=UNLIMITED`` retries until success
  (the kubelet's writes, which upstream's sync loops redo until they land).
* A wait of zero does not sleep at all, so ``Backoff(steps=5)`` is "five tries, back to
  back" without yielding to other tasks between them.

Waits run on the injected ``Clock`` (virtual time in simulations and tests); a cancellation
during a wait propagates as ``CancelledError``.
"""

from __future__ import annotations

import dataclasses
import math
import random
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Final, TypeVar

from emulator.base.api.errors import Conflict
from emulator.base.runtime.clock import Clock

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "UNLIMITED",
    "Backoff",
    "WaitTimeout",
    "exponential_backoff",
    "is_conflict",
    "on_error",
    "retry_on_conflict",
]

T = TypeVar("T")

UNLIMITED: Final = sys.maxsize
"""``attempts=UNLIMITED``: retry until ``fn`` succeeds or raises a non-retriable error."""


class WaitTimeout(Exception):
    """``wait.ErrWaitTimeout``: the backoff ran out before the condition held."""

    def __init__(self) -> None:
        super().__init__("timed out waiting for the condition")


@dataclass(frozen=True, slots=True, kw_only=True)
class Backoff:
    """client-go's ``wait.Backoff``; seconds instead of ``time.Duration``."""

    duration: float = 0.0
    """The first wait (seconds)."""
    factor: float = 0.0
    """Each step multiplies the duration by this (0: the duration never changes)."""
    jitter: float = 0.0
    """Each wait is the duration plus up to ``jitter * duration`` more, drawn from the rng."""
    steps: int = 0
    """Steps left in which the duration may change; ``on_error`` tries at most this often."""
    cap: float = 0.0
    """Upper bound of the duration (0: none); reaching it ends the steps."""

    def __post_init__(self) -> None:
        for name in ("duration", "factor", "jitter", "cap"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"Backoff.{name} must be a finite number >= 0, got {value!r}")

    def step(self, rng: random.Random | None = None) -> tuple[float, Backoff]:
        """client-go's ``Step()``: the next wait, and the backoff after it."""
        if self.steps < 1:
            return self._jittered(rng), self if self.steps == 0 else dataclasses.replace(self, steps=0)
        steps = self.steps - 1
        following = self.duration
        if self.factor != 0:
            following = self.duration * self.factor
            if self.cap > 0 and following > self.cap:
                following, steps = self.cap, 0
        return self._jittered(rng), dataclasses.replace(self, duration=following, steps=steps)

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """Successive ``step()`` waits, without end (client-go's ``DelayFunc``)."""
        backoff = self
        while True:
            wait, backoff = backoff.step(rng)
            yield wait

    def _jittered(self, rng: random.Random | None) -> float:
        if self.jitter <= 0:
            return self.duration
        if rng is None:
            raise ValueError(f"{self!r} has jitter: pass the seeded random.Random to draw it from")
        return self.duration + rng.random() * self.jitter * self.duration


DEFAULT_RETRY: Final = Backoff(steps=5, duration=0.010, factor=1.0, jitter=0.1)
"""client-go ``retry.DefaultRetry``: for conflicts from a competing writer."""

DEFAULT_BACKOFF: Final = Backoff(steps=4, duration=0.010, factor=5.0, jitter=0.1)
"""client-go ``retry.DefaultBackoff``: for errors that take a while to clear."""


async def _wait(clock: Clock, seconds: float) -> None:
    if seconds > 0:
        await clock.sleep(seconds)


async def exponential_backoff(
    backoff: Backoff,
    condition: Callable[[], Awaitable[bool]],
    *,
    clock: Clock,
    rng: random.Random | None = None,
) -> None:
    """``wait.ExponentialBackoff``: await ``condition()`` until it is true, with ``step()``
    waits between; ``WaitTimeout`` once ``steps`` checks failed or a capped wait passed.
    An exception from ``condition`` propagates at once."""
    while backoff.steps > 0:
        if await condition():
            return
        if backoff.steps == 1:
            break
        wait, backoff = backoff.step(rng)
        await _wait(clock, wait)
    raise WaitTimeout


def is_conflict(err: Exception) -> bool:
    """``errors.IsConflict``: a 409 ``Conflict`` (``AlreadyExists`` is not one)."""
    return isinstance(err, Conflict)


async def on_error(
    backoff: Backoff,
    retriable: Callable[[Exception], bool],
    fn: Callable[[], Awaitable[T]],
    *,
    clock: Clock,
    rng: random.Random | None = None,
    attempts: int | None = None,
) -> T:
    """``retry.OnError``: ``await fn()``, again after a wait while it raises an error that
    ``retriable`` accepts; its result, or the first non-retriable error, or the last
    retriable one when the tries run out. ``attempts`` (see the module docstring) replaces
    client-go's stopping rule by a fixed number of tries."""
    if attempts is not None and attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    last: Exception | None = None
    tried = 0
    while attempts is not None or backoff.steps > 0:
        try:
            return await fn()
        except Exception as err:
            if not retriable(err):
                raise
            last = err
        tried += 1
        if (tried >= attempts) if attempts is not None else backoff.steps == 1:
            break
        wait, backoff = backoff.step(rng)
        await _wait(clock, wait)
    if last is None:
        raise WaitTimeout  # client-go returns nil here: fn never ran (steps < 1)
    raise last


async def retry_on_conflict(
    backoff: Backoff,
    fn: Callable[[], Awaitable[T]],
    *,
    clock: Clock,
    rng: random.Random | None = None,
    attempts: int | None = None,
) -> T:
    """``retry.RetryOnConflict``: ``on_error`` retrying ``Conflict`` only."""
    return await on_error(backoff, is_conflict, fn, clock=clock, rng=rng, attempts=attempts)
