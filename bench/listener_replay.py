"""What each of the run's own write listeners costs a write, by replaying a run's writes
through fresh listeners (issue 27, session 39, helper churn2).

    python bench/listener_replay.py [SCENARIO] [SECONDS]

Runs SCENARIO (default the churn bench) for SECONDS of simulated time (default 120) with a
listener that keeps every ``WriteRecord``, then feeds the records, in order, to a fresh trace
recorder, report observer (no scheduler to sample), invariant checker, pod activity and cost
meter, each on its own, and prints the CPU microseconds a write of each (best of three, the
cyclic GC off while timing) beside a listener that returns at once; then the five in turn (a
call each, as ``RunOptions(plain_listeners=True)`` installs them) and the five fed as one by
``bookkeeping.RunBook`` (what a run installs; the record's fields passed as the store passes
them, the lambda's call included). Run it from a tree's own
directory (``cd TREE && PYTHONPATH=$PWD python bench/listener_replay.py``).
"""

from __future__ import annotations

import collections
import gc
import sys
import time
from collections.abc import Callable

from emulator.app.scenario.bookkeeping import RunBook
from emulator.app.scenario.cost import CostMeter
from emulator.app.scenario.event_trace import TraceRecorder
from emulator.app.scenario.invariants import InvariantChecker
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.monitor import PodActivity
from emulator.app.scenario.observe import Observer
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.records import WriteRecord

Listener = Callable[[WriteRecord], None]


def _ignore(_rec: WriteRecord) -> None:
    return None


def _per_write(records: list[WriteRecord], make: Callable[[], Listener], repeats: int = 3) -> float:
    """The fastest of ``repeats`` replays, in CPU microseconds a write."""
    best = float("inf")
    for _ in range(repeats):
        listener = make()
        gc.disable()
        try:
            start = time.process_time()
            for rec in records:
                listener(rec)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best * 1e6 / len(records)


def _five() -> Listener:
    """The runner's five listeners, each called with the record (``plain_listeners``)."""
    observer, cost = Observer(list), CostMeter({})
    observer.samplers.append(cost)
    five: list[Listener] = [InvariantChecker(), TraceRecorder(), PodActivity(), observer, cost]

    def call(rec: WriteRecord) -> None:
        for fn in five:
            fn(rec)

    return call


def _book() -> Listener:
    """The same five fed by one ``RunBook`` (its direct entry, the record's fields as arguments)."""
    observer, cost = Observer(list), CostMeter({})
    observer.samplers.append(cost)
    book = RunBook(InvariantChecker(), TraceRecorder(), PodActivity(), observer, cost)
    return lambda rec: book(rec.revision, rec.time, rec.verb, rec.kind, rec.old, rec.new, rec.agent)


def main(path: str, seconds: float) -> None:
    records: list[WriteRecord] = []
    run_scenario(load_scenario(path), RunOptions(until=seconds, on_write=records.append))
    kinds = collections.Counter((r.verb, r.kind) for r in records)
    print(f"{len(records)} writes: " + ", ".join(f"{v} {k} {n}" for (v, k), n in kinds.most_common(8)))
    listeners: list[tuple[str, Callable[[], Listener]]] = [
        ("trace recorder", TraceRecorder),
        ("report observer", lambda: Observer(list)),
        ("invariant checker", InvariantChecker),
        ("pod activity", PodActivity),
        ("cost meter", lambda: CostMeter({})),
        ("(returns at once)", lambda: _ignore),
        ("the five in turn", _five),
        ("the five as one", _book),
    ]
    for name, make in listeners:
        print(f"{name:18s} {_per_write(records, make):6.2f} us a write")


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else "bench/scenarios/churn-1000nodes-1h.yaml",
        float(sys.argv[2]) if len(sys.argv) > 2 else 120.0,
    )
