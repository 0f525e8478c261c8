"""The sweep engine: many independent runs on one executor, each outcome kept by its key, workers
that die survived. Under ``compare`` (``run_all``: every run) and ``hunt`` (``hunt.hunt_seeds``:
stop at the first failing seed when asked).

What it owns: ``sweep`` (submit ``fn(*args)`` for every ``(key, args)``, at most ``pool.width`` in
flight), ``Outcome``, the counters (``Counters``), the stop predicate's effect, and ``run_all``.
It does not own what a run does (the caller's ``fn``, a top-level function so that it pickles:
``hunt.run_seed``, ``compare.run_variant``), the executors (``executors``), nor what a caller
makes of the outcomes (a hunt's report, a comparison).

A local worker process killed mid-run (``kill -9``, the OOM killer, a plugin calling
``os._exit``) breaks a ``ProcessPoolExecutor``: every future still pending then fails with a
``BrokenExecutor``, the innocent runs as well as the one whose worker died, and the pool takes no
more work. Dask does not break: it reruns a dead worker's task itself and, after
``allowed-failures`` deaths, fails it with ``KilledWorker``, counting a death against every task
the worker held. Hence one rule, *a death counts against a run only when that run flew alone*:

=======================================  ======================================================
a future ends with                       then
=======================================  ======================================================
a value                                  ``Outcome(value=...)``
an exception raised by the run           ``Outcome(error="TypeName: message")``: a finding
                                         (runs are deterministic: never retried)
``KilledWorker``, others in flight       the run is a *suspect*: re-run alone
``KilledWorker``, alone                  ``Outcome(error=..., crashed=True)``
``BrokenExecutor``, others in flight     the rest of the flight is settled (a finished value is
                                         kept); each unfinished run becomes a suspect; the pool
                                         is replaced (``pool.replace``)
``BrokenExecutor``, alone                that run is charged a death: at its first it is re-run
                                         alone, at its second ``Outcome(crashed=True)``; the
                                         pool is replaced
``KeyboardInterrupt`` (a worker got the  the sweep ends (see below)
terminal's Ctrl-C)
=======================================  ======================================================

Suspects fly one at a time, so a run that kills its worker every time runs three times (once with
others, twice alone) and an innocent run is never reported crashed. A submit refused with
``BrokenExecutor`` is a break too; a *fresh* executor (just made by ``replace``, none of its
futures finished yet) that refuses work ends the sweep with ``BrokenExecutor`` instead of
replacing it forever, and so does a break without ``replace`` (Dask, or an executor handed in).

Order. Futures that finish together, and the suspects of one break, are settled in call order
(seed order for a hunt): which run trips ``stop`` and the order ``progress`` sees do not depend
on the executor. ``stop(outcome)`` true ends the sweep once the futures finished with it are
settled: nothing more is submitted, runs still in flight are cancelled or left to finish in their
workers, ``stopped_early`` says whether any run was left. Ctrl-C (``KeyboardInterrupt`` here, or
from a worker) ends the sweep with ``interrupted`` set, and ``pool.interrupted`` so that the
executor's shutdown does not wait. The executors ``replace`` made are the sweep's to shut down;
``pool.executor`` is the caller's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, wait
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from emulator.app.experiments.errors import describe
from emulator.app.experiments.executors import Pool, worker_lost

__all__ = ["DIED_TWICE", "Counters", "Outcome", "Swept", "run_all", "sweep"]

K = TypeVar("K", bound=Hashable)

DIED_TWICE = "the worker process died twice running it alone"


@dataclass(frozen=True, slots=True)
class Outcome:
    value: Any = None
    error: str | None = None
    crashed: bool = False
    """The run's worker process died (twice alone, or past Dask's allowed failures)."""


@dataclass(slots=True)
class Counters:
    """What a sweep did, beyond its outcomes."""

    runs: int = 0
    """Runs submitted, re-runs included."""
    reruns: int = 0
    """Runs of a suspect, alone."""
    workers_lost: int = 0
    """How many times the executor broke (a worker process died) and was replaced."""
    stopped_early: bool = False
    """``stop`` ended the sweep with runs left unrun."""
    interrupted: bool = False
    """Ctrl-C ended the sweep."""


@dataclass(frozen=True, slots=True)
class Swept(Generic[K]):
    outcomes: dict[K, Outcome]
    """The runs that ended, in call order (a crashed run included, with ``crashed``)."""
    counters: Counters = field(default_factory=Counters)


class _Sweep(Generic[K]):
    """One sweep in progress: runs not yet submitted (``todo``), runs waiting to fly alone
    (``suspects``), the flight, the outcomes, and each run's attributable deaths."""

    def __init__(
        self,
        pool: Pool,
        fn: Callable[..., Any],
        calls: Sequence[tuple[K, tuple[Any, ...]]],
        stop: Callable[[Outcome], bool] | None,
        progress: Callable[[K, Outcome], None] | None,
    ) -> None:
        self.pool = pool
        self.fn = fn
        self.stop = stop
        self.progress = progress
        self.args = dict(calls)
        self.order = {k: i for i, (k, _) in enumerate(calls)}
        self.todo: deque[K] = deque(k for k, _ in calls)
        self.suspects: deque[K] = deque()
        self.deaths: dict[K, int] = {}
        self.done: dict[K, Outcome] = {}
        self.executor = pool.executor
        self.owned: list[Executor] = []
        self.flight: dict[Future[Any], K] = {}
        self.counters = Counters()
        self.alone = False
        """The flight is one run on its own: a death in it is that run's."""
        self.fresh = False
        """The executor was just replaced and no future of it has finished yet."""
        self.stopping = False
        """``stop`` held for an outcome."""

    def run(self) -> None:
        while self.todo or self.suspects or self.flight:
            broken: list[K] = []
            if not self._fill():
                if self.fresh and not self.flight:
                    raise BrokenExecutor("the executor broke, and a fresh one refused work too")
                self._recover(broken)
            else:
                finished, _ = wait(self.flight, return_when=FIRST_COMPLETED)
                for fut in self._in_order(finished):
                    self._settle(fut, self.flight.pop(fut), broken)
                if broken and not self.stopping:
                    self._recover(broken)
            if self.stopping:
                self.counters.stopped_early = bool(self.todo or self.suspects or self.flight or broken)
                return

    def _in_order(self, futures: Iterable[Future[Any]]) -> list[Future[Any]]:
        return sorted(futures, key=lambda fut: self.order[self.flight[fut]])

    def _fill(self) -> bool:
        """Top the flight up: a suspect flies alone, other runs ``width`` at a time. False if
        the executor turned out to be broken (the run goes back where it came from)."""
        if self.suspects:
            if self.flight:
                return True
            queue, width, self.alone = self.suspects, 1, True
        else:
            queue, width, self.alone = self.todo, self.pool.width, self.pool.width == 1
        while queue and len(self.flight) < width:
            key = queue.popleft()
            try:
                self.flight[self.executor.submit(self.fn, *self.args[key])] = key
            except BrokenExecutor:
                queue.appendleft(key)
                return False
            self.counters.runs += 1
            self.counters.reruns += queue is self.suspects
        return True

    def _settle(self, fut: Future[Any], key: K, broken: list[K]) -> None:
        """Record one finished future (its key in ``broken`` if its executor broke)."""
        self.fresh = False
        err = fut.exception()
        if isinstance(err, BrokenExecutor):
            broken.append(key)
        elif isinstance(err, KeyboardInterrupt):  # a worker got the terminal's Ctrl-C
            raise err
        elif worker_lost(err) and not self.alone:  # maybe charged for another task's deaths
            self.suspects.append(key)
        elif err is None:
            self._record(key, Outcome(value=fut.result()))
        else:
            self._record(key, Outcome(error=describe(err), crashed=worker_lost(err)))

    def _record(self, key: K, outcome: Outcome) -> None:
        self.done[key] = outcome
        self.stopping |= self.stop is not None and self.stop(outcome)
        if self.progress is not None:
            self.progress(key, outcome)

    def _recover(self, broken: list[K]) -> None:
        """The executor broke: settle the rest of the flight (every future of a broken pool
        fails), charge the death to a run that flew alone, queue the others to fly alone, and
        carry on with a fresh executor."""
        if self.flight:
            wait(self.flight)
            for fut in self._in_order(self.flight):
                self._settle(fut, self.flight[fut], broken)  # a finished value is kept
            self.flight.clear()
        self.counters.workers_lost += 1
        if self.alone and len(broken) == 1:
            key = broken[0]
            self.deaths[key] = self.deaths.get(key, 0) + 1
            if self.deaths[key] >= 2:
                self._record(key, Outcome(error=DIED_TWICE, crashed=True))
            else:
                self.suspects.appendleft(key)
        else:
            self.suspects.extend(sorted(broken, key=self.order.__getitem__))
        if self.pool.replace is None:
            raise BrokenExecutor(f"the executor broke and cannot be replaced (runs {broken})")
        if self.executor in self.owned:
            self.executor.shutdown(wait=False, cancel_futures=True)
        self.executor = self.pool.replace()
        self.owned.append(self.executor)
        self.fresh = True

    def close(self, *, interrupted: bool) -> None:
        for fut in self.flight:
            fut.cancel()
        for executor in self.owned:
            executor.shutdown(wait=not interrupted, cancel_futures=True)


def sweep(
    pool: Pool,
    fn: Callable[..., Any],
    calls: Sequence[tuple[K, tuple[Any, ...]]],
    *,
    stop: Callable[[Outcome], bool] | None = None,
    progress: Callable[[K, Outcome], None] | None = None,
) -> Swept[K]:
    """``fn(*args)`` for every ``(key, args)`` of ``calls`` (keys distinct) on ``pool``; each
    outcome goes to ``progress`` as it is settled. Ends early when ``stop(outcome)`` holds or on
    Ctrl-C (see the module docstring); raises ``BrokenExecutor`` when the executor broke and
    cannot be replaced."""
    state = _Sweep(pool, fn, calls, stop, progress)
    try:
        state.run()
    except KeyboardInterrupt:
        state.counters.interrupted = pool.interrupted = True
    finally:
        state.close(interrupted=state.counters.interrupted)
    outcomes = {k: state.done[k] for k, _ in calls if k in state.done}
    return Swept(outcomes, state.counters)


def run_all(
    pool: Pool,
    fn: Callable[..., Any],
    calls: Sequence[tuple[K, tuple[Any, ...]]],
    progress: Callable[[K, Outcome], None] | None = None,
) -> dict[K, Outcome]:
    """Every run of ``calls`` (``sweep`` without a stop); Ctrl-C propagates as
    ``KeyboardInterrupt`` once the sweep is closed."""
    swept = sweep(pool, fn, calls, progress=progress)
    if swept.counters.interrupted:
        raise KeyboardInterrupt
    return swept.outcomes
