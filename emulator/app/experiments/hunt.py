"""One scenario under many seeds: the runs under ``python -m emulator hunt`` and their report.

What it owns: ``hunt_seeds`` (every seed through ``task(path, seed)`` on the sweep engine,
``sweep``, stopping at the first failure when asked), the per-seed task (``run_seed``, a
top-level function so a process pool or Dask can pickle it), the one-line failure reason of a run
(``failure_of``), the report (``SeedOutcome``, ``HuntReport``: outcomes, crashed seeds, JSON,
exit status) and the replay line (``replay_command``). It does not own running a scenario (the
runner), surviving workers that die (``sweep``: its docstring gives the rule), the executors
(``executors``) nor the command line and the text report (``commands.hunt``).

The executor is any ``concurrent.futures.Executor``: a thread pool in tests, a process pool by
default, Dask. A seed's outcome depends only on the scenario and the seed, so the failures found
do not depend on the executor.

Failure reason of one run, the first that applies: the violated invariant whose first violation
came earliest (``t`` = that time); the first failed expectation; the first timed-out ``waitFor``
(``t`` = the run's end); an exception out of the run (``crash: TypeName: message``, ``t``
unknown, ``null``). A seed whose worker process died twice alone (or past Dask's allowed
failures) is *crashed*: it has no outcome, and never trips ``stop_on_first``.

JSON: ``{"scenario", "seeds" (seeds completed), "failures": [{"seed", "reason", "t",
"replay"}], "crashed": [{"seed", "replay"}]}`` (by seed), plus ``"workersLost": n`` when the
executor broke, ``"stoppedEarly": true`` when seeds were left unrun at the first failure and
``"interrupted": true`` after Ctrl-C. Every requested seed is completed, crashed, or not run
(``stoppedEarly``/``interrupted``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator.app.experiments.errors import describe
from emulator.app.experiments.executors import Pool, workers_for
from emulator.app.experiments.sweep import Outcome, sweep

__all__ = [
    "HuntReport",
    "SeedOutcome",
    "Task",
    "failure_of",
    "hunt_seeds",
    "replay_command",
    "run_seed",
]

Task = Callable[[str, int], "SeedOutcome"]


@dataclass(frozen=True, slots=True)
class SeedOutcome:
    seed: int
    passed: bool
    reason: str = ""
    t: float | None = None


@dataclass(slots=True)
class HuntReport:
    scenario: str
    file: str
    requested: int
    outcomes: list[SeedOutcome] = field(default_factory=list)
    """Completed seeds, in seed order."""
    crashed: list[int] = field(default_factory=list)
    """Seeds whose worker process died twice while running them alone, in seed order."""
    stopped_early: bool = False
    interrupted: bool = False
    workers_lost: int = 0
    """How many times the executor broke (a worker process died) and was replaced."""

    @property
    def failures(self) -> list[SeedOutcome]:
        return [o for o in self.outcomes if not o.passed]

    @property
    def not_run(self) -> int:
        return self.requested - len(self.outcomes) - len(self.crashed)

    def exit_status(self) -> int:
        """130 interrupted, else 3 a seed crashed, else 1 a seed failed, else 0."""
        if self.interrupted:
            return 130
        if self.crashed:
            return 3
        return 1 if self.failures else 0

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "scenario": self.scenario,
            "seeds": len(self.outcomes),
            "failures": [
                {"seed": o.seed, "reason": o.reason, "t": o.t, "replay": replay_command(self.file, o.seed)}
                for o in self.failures
            ],
            "crashed": [{"seed": s, "replay": replay_command(self.file, s)} for s in self.crashed],
        }
        if self.workers_lost:
            doc["workersLost"] = self.workers_lost
        if self.stopped_early:
            doc["stoppedEarly"] = True
        if self.interrupted:
            doc["interrupted"] = True
        return doc


def replay_command(file: str, seed: int) -> str:
    return f"python -m emulator run {shlex.quote(file)} --seed {seed} --trace out.jsonl"


# --- one seed -------------------------------------------------------------------------------


def _violations(items: Iterable[Any]) -> list[tuple[float, int, str]]:
    """(first time, position, "invariant <name>: <detail>") of each violated invariant; items are
    ``InvariantResult``s or their JSON form."""
    out: list[tuple[float, int, str]] = []
    for i, inv in enumerate(items):
        doc = inv if isinstance(inv, Mapping) else inv.to_json()
        if not doc.get("violations"):
            continue
        first = doc.get("first") or {}
        detail = first.get("detail", "")
        t = first.get("time")
        out.append((float("inf") if t is None else float(t), i, f"invariant {doc['name']}: {detail}".rstrip(": ")))
    return sorted(out)


def failure_of(result: Any) -> tuple[str, float] | None:
    """``(reason, t)`` of a failed ``RunResult``, or None if it passed (see the docstring)."""
    found = _violations(result.extra.get("invariants", ()))
    if found:
        t, _, reason = found[0]
        return reason, (result.simulated_seconds if t == float("inf") else t)
    for e in result.expectations:
        if not e.passed:
            return f"expectation {e.name} failed ({e.detail})", result.simulated_seconds
    if result.waits_timed_out:
        return result.waits_timed_out[0], result.simulated_seconds
    if not result.passed:
        return "failed", result.simulated_seconds
    return None


def run_seed(path: str, seed: int) -> SeedOutcome:
    """Run the scenario at ``path`` with ``seed`` (in whatever process calls this)."""
    from emulator.app.scenario.loader import load_scenario
    from emulator.app.scenario.runner import RunOptions, run_scenario

    try:
        result = run_scenario(load_scenario(path), RunOptions(seed=seed))
    except Exception as err:
        return SeedOutcome(seed, False, f"crash: {describe(err)}", None)
    failure = failure_of(result)
    if failure is None:
        return SeedOutcome(seed, True)
    return SeedOutcome(seed, False, failure[0], round(failure[1], 6))


# --- the seeds ------------------------------------------------------------------------------


def _seed_outcome(seed: int, outcome: Outcome) -> SeedOutcome:
    """A completed seed's outcome: the task's, or ``crash: ...`` when it raised."""
    if outcome.error is None:
        value: SeedOutcome = outcome.value
        return value
    return SeedOutcome(seed, False, f"crash: {outcome.error}")


def _failed(outcome: Outcome) -> bool:
    """The stop of ``--stop-on-first``: a seed completed and failed (a crashed one did not)."""
    return not outcome.crashed and not _seed_outcome(0, outcome).passed


def hunt_seeds(
    path: str | Path,
    seeds: Iterable[int],
    executor: Executor,
    stop_on_first: bool = False,
    progress: Callable[[SeedOutcome], None] | None = None,
    *,
    scenario: str = "",
    task: Task = run_seed,
    jobs: int | None = None,
    replace: Callable[[], Executor] | None = None,
) -> HuntReport:
    """Run ``task(path, seed)`` for every seed on ``executor``, at most ``jobs`` (default: one per
    core) at a time; ``task`` must pickle (a top-level function) for a process pool. Completed
    seeds go to ``progress`` as they are settled. The caller owns (and shuts down) ``executor``;
    ``replace`` makes a fresh one each time an executor breaks (those are the sweep's to shut
    down); without it a broken executor raises ``BrokenExecutor``. Ctrl-C
    (``KeyboardInterrupt``) ends the hunt with ``interrupted`` set on the report."""
    seed_list = list(seeds)
    file = str(path)
    report = HuntReport(scenario or Path(file).stem, file, len(seed_list))

    def completed(seed: int, outcome: Outcome) -> None:
        if progress is not None and not outcome.crashed:
            progress(_seed_outcome(seed, outcome))

    swept = sweep(
        Pool(executor, workers_for(jobs, len(seed_list)), replace),
        task,
        [(s, (file, s)) for s in seed_list],
        stop=_failed if stop_on_first else None,
        progress=completed,
    )
    by_seed = sorted(swept.outcomes.items())
    report.outcomes = [_seed_outcome(s, o) for s, o in by_seed if not o.crashed]
    report.crashed = [s for s, o in by_seed if o.crashed]
    report.stopped_early = swept.counters.stopped_early
    report.interrupted = swept.counters.interrupted
    report.workers_lost = swept.counters.workers_lost
    return report
