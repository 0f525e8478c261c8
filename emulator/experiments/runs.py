"""Many independent runs on one executor, each outcome kept by its key: the engine under
``compare``.

What it owns: ``run_all`` (submit ``fn(*args)`` for every key, at most ``pool.width`` in flight,
outcomes as they land to ``progress``, a broken local pool survived) and ``Outcome``. It does not
own what a run does (the caller's ``fn``, a top-level function so that it pickles) nor the
executor (``executors``). ``hunt`` keeps its own sweep (``commands.hunt_sweep``: stop at the first
failure, suspects); this is the same rule without them.

=========================================  ===================================================
a future ends with                         the run's outcome
=========================================  ===================================================
a value                                    ``Outcome(value=...)``
an exception raised by the run             ``Outcome(error="TypeName: message")``: a finding
                                           (runs are deterministic: never retried)
Dask's ``KilledWorker``                    Dask restarted the workers that died and gave up; it
                                           counts a death against every task the worker held,
                                           so the run is re-run alone, and if it comes back so
                                           alone, ``Outcome(error=..., crashed=True)``
``BrokenExecutor`` (a local worker died)   the pool is replaced (``pool.replace``); the runs
                                           that were in flight are re-run one at a time; one
                                           that breaks the pool again alone is crashed
=========================================  ===================================================

Ctrl-C (``KeyboardInterrupt``) cancels what has not started and propagates, with
``pool.interrupted`` set so the executor's shutdown does not wait.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, wait
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from emulator.experiments.executors import Pool, worker_lost

__all__ = ["Outcome", "run_all"]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Outcome:
    value: Any = None
    error: str | None = None
    crashed: bool = False
    """The run's worker process died (twice alone, or past Dask's allowed failures)."""


def _describe(err: BaseException) -> str:
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return f"{type(err).__name__}: {err}"


class _Runs(Generic[K]):
    def __init__(self, pool: Pool, fn: Callable[..., Any], calls: Sequence[tuple[K, tuple[Any, ...]]]) -> None:
        self.pool = pool
        self.fn = fn
        self.args = dict(calls)
        self.todo: deque[K] = deque(k for k, _ in calls)
        self.suspects: deque[K] = deque()
        self.deaths: dict[K, int] = {}
        self.flight: dict[Future[Any], K] = {}
        self.alone = False
        self.done: dict[K, Outcome] = {}

    def run(self, progress: Callable[[K, Outcome], None] | None) -> dict[K, Outcome]:
        while self.todo or self.suspects or self.flight:
            self._fill()
            finished, _ = wait(self.flight, return_when=FIRST_COMPLETED)
            broken: list[K] = []
            for fut in finished:
                key = self.flight.pop(fut)
                outcome = self._settle(fut, key, broken)
                if outcome is not None:
                    self.done[key] = outcome
                    if progress is not None:
                        progress(key, outcome)
            if broken:
                self._recover(broken, progress)
        return self.done

    def _fill(self) -> None:
        queue = self.suspects if self.suspects else self.todo
        width = 1 if queue is self.suspects else self.pool.width
        if queue is self.suspects and self.flight:
            return
        self.alone = queue is self.suspects or width == 1
        while queue and len(self.flight) < width:
            key = queue[0]
            try:
                fut = self.pool.executor.submit(self.fn, *self.args[key])
            except BrokenExecutor:
                if not self.flight:
                    self._replace()
                return
            queue.popleft()
            self.flight[fut] = key

    def _settle(self, fut: Future[Any], key: K, broken: list[K]) -> Outcome | None:
        err = fut.exception()
        if err is None:
            return Outcome(value=fut.result())
        if isinstance(err, BrokenExecutor):
            broken.append(key)
            return None
        if isinstance(err, KeyboardInterrupt):
            raise err
        if worker_lost(err) and not self.alone:  # maybe charged for another task's deaths
            self.suspects.append(key)
            return None
        return Outcome(error=_describe(err), crashed=worker_lost(err))

    def _recover(self, broken: list[K], progress: Callable[[K, Outcome], None] | None) -> None:
        if self.flight:  # every other future of a broken pool fails too
            wait(self.flight)
            for fut, key in list(self.flight.items()):
                outcome = self._settle(fut, key, broken)
                if outcome is not None:
                    self.done[key] = outcome
                    if progress is not None:
                        progress(key, outcome)
            self.flight.clear()
        if self.alone and len(broken) == 1:
            key = broken[0]
            self.deaths[key] = self.deaths.get(key, 0) + 1
            if self.deaths[key] >= 2:
                self.done[key] = Outcome(error="the worker process died twice running it alone", crashed=True)
                if progress is not None:
                    progress(key, self.done[key])
            else:
                self.suspects.appendleft(key)
        else:
            self.suspects.extend(broken)
        self._replace()

    def _replace(self) -> None:
        if self.pool.replace is None:
            raise BrokenExecutor("the executor broke and cannot be replaced")
        self.pool.executor.shutdown(wait=False, cancel_futures=True)
        self.pool.executor = self.pool.replace()

    def cancel(self) -> None:
        for fut in self.flight:
            fut.cancel()


def run_all(
    pool: Pool,
    fn: Callable[..., Any],
    calls: Sequence[tuple[K, tuple[Any, ...]]],
    progress: Callable[[K, Outcome], None] | None = None,
) -> dict[K, Outcome]:
    """``fn(*args)`` for every ``(key, args)`` of ``calls`` on ``pool``; the outcome of each key
    (keys must be distinct). Order of completion is free: callers read the dict by key."""
    runs = _Runs(pool, fn, calls)
    try:
        return runs.run(progress)
    except KeyboardInterrupt:
        pool.interrupted = True
        runs.cancel()
        raise
