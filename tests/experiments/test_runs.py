"""``experiments.runs`` and ``experiments.executors``: the ``--executor`` flag, the local pool
surviving a worker's death, exceptions kept as findings (never retried), a poison run crashed,
and Dask: a dead worker's task rerun by Dask, a poison task ``KilledWorker`` → crashed.

The task kills its own worker process as marker files in its directory say: ``once-<n>`` (the
first run dies; the marker is consumed) and ``always-<n>``; ``raise-<n>`` raises. Each run
appends its key to ``runs.log``. Workers import this module by name to unpickle the task.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from emulator.experiments.executors import (
    ExecutorError,
    ExecutorSpec,
    Pool,
    open_executor,
    parse_executor,
    worker_lost,
    workers_for,
)
from emulator.experiments.hunt import SeedOutcome, hunt_seeds
from emulator.experiments.sweep import Outcome, run_all


def task(directory: str, n: int) -> int:
    here = Path(directory)
    with (here / "runs.log").open("a") as log:
        log.write(f"{n}\n")
    if (here / f"always-{n}").exists():
        os._exit(1)
    try:
        (here / f"once-{n}").rename(here / f"died-{n}")
    except FileNotFoundError:
        pass
    else:
        os._exit(1)
    if (here / f"raise-{n}").exists():
        raise ValueError(f"run {n} is wrong")
    return n * n


def marked(tmp_path: Path, **names: tuple[int, ...]) -> str:
    for kind, ns in names.items():
        for n in ns:
            (tmp_path / f"{kind}-{n}").touch()
    return str(tmp_path)


def runs(tmp_path: Path) -> Counter[int]:
    return Counter(int(x) for x in (tmp_path / "runs.log").read_text().split())


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("local", ExecutorSpec("local"), id="local"),
        pytest.param("dask", ExecutorSpec("dask"), id="dask"),
        pytest.param("dask=tcp://10.0.0.5:8786", ExecutorSpec("dask", "tcp://10.0.0.5:8786"), id="dask-address"),
        pytest.param("dask=head:8786", ExecutorSpec("dask", "head:8786"), id="dask-bare-address"),
    ],
)
def test_parse_executor(text: str, want: ExecutorSpec) -> None:
    assert parse_executor(text) == want
    assert str(want) == text


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("ray", id="unknown"),
        pytest.param("local=x", id="local-address"),
        pytest.param("dask=", id="empty-address"),
        pytest.param("", id="empty"),
    ],
)
def test_parse_executor_refuses(text: str) -> None:
    with pytest.raises(ExecutorError, match=r"^--executor: expected local, dask or dask=ADDRESS"):
        parse_executor(text)


def test_worker_lost() -> None:
    scheduler = pytest.importorskip("distributed.scheduler")
    assert worker_lost(scheduler.KilledWorker("key", "addr", "why"))
    assert not worker_lost(ValueError("no"))
    assert not worker_lost(None)


@pytest.mark.parametrize(
    ("jobs", "tasks", "want"),
    [
        pytest.param(4, 2, 2, id="never-more-than-tasks"),
        pytest.param(2, 9, 2, id="jobs"),
        pytest.param(3, 0, 1, id="one"),
    ],
)
def test_workers_for(jobs: int, tasks: int, want: int) -> None:
    assert workers_for(jobs, tasks) == want


def test_results_by_key_and_exceptions_kept(tmp_path: Path) -> None:
    directory = marked(tmp_path, **{"raise": (2,)})
    with ThreadPoolExecutor(2) as ex:
        got = run_all(Pool(ex, 2, None), task, [(n, (directory, n)) for n in range(4)])
    assert got == {0: Outcome(0), 1: Outcome(1), 2: Outcome(error="ValueError: run 2 is wrong"), 3: Outcome(9)}
    assert runs(tmp_path) == Counter(range(4))  # never retried


def test_local_pool_survives_a_death_and_crashes_a_poison_run(tmp_path: Path) -> None:
    directory = marked(tmp_path, once=(1,), always=(4,))
    seen: list[int] = []
    with open_executor(ExecutorSpec("local"), 2, 6) as pool:
        got = run_all(pool, task, [(n, (directory, n)) for n in range(6)], lambda k, _o: seen.append(k))
    assert {k: o.value for k, o in got.items() if o.error is None} == {0: 0, 1: 1, 2: 4, 3: 9, 5: 25}
    assert got[4] == Outcome(error="the worker process died twice running it alone", crashed=True)
    assert sorted(seen) == list(range(6))
    assert runs(tmp_path)[4] >= 2


@pytest.mark.slow
def test_dask_reruns_a_dead_workers_task_and_crashes_a_poison_one(tmp_path: Path) -> None:
    """Two sweeps on one cluster that tolerates one death per task: run 1 dies once and is rerun;
    then the poison run 3, alone (Dask may hold two tasks on a one-thread worker, and a death
    counts against both: alone, no innocent run is charged), dies twice: ``KilledWorker``."""
    dask = pytest.importorskip("dask")
    directory = marked(tmp_path, once=(1,), always=(3,))
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        open_executor(ExecutorSpec("dask"), 2, 4) as pool,
    ):
        assert pool.width == 2
        assert pool.replace is None
        got = run_all(pool, task, [(n, (directory, n)) for n in range(3)])
        poison = run_all(pool, task, [(3, (directory, 3))])
    assert [got[n] for n in range(3)] == [Outcome(0), Outcome(1), Outcome(4)]
    assert runs(tmp_path)[1] == 2
    assert poison[3].crashed
    assert poison[3].error is not None
    assert poison[3].error.startswith("KilledWorker: ")


LOST: set[int] = set()
"""Seeds a ``killed_worker_task`` already lost once (thread pools: one process)."""


def killed_worker_task(path: str, seed: int) -> SeedOutcome:
    """Raise as Dask's future would for a seed whose workers Dask gave up on: seed 1 every time,
    seed 2 the first time only (charged for another task's deaths)."""
    from distributed.scheduler import KilledWorker

    if seed == 1 or (seed == 2 and seed not in LOST):
        LOST.add(seed)
        raise KilledWorker(f"run_seed-{seed}", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)
    return SeedOutcome(seed, True)


def killed_worker_run(n: int) -> int:
    killed_worker_task("", n)
    return n


@pytest.fixture
def lost() -> None:
    LOST.clear()


@pytest.mark.usefixtures("lost")
def test_hunt_retries_a_killed_worker_alone_then_crashes_it() -> None:
    pytest.importorskip("distributed")
    with ThreadPoolExecutor(2) as ex:
        report = hunt_seeds("s.yaml", range(4), ex, task=killed_worker_task, jobs=2)
    assert report.crashed == [1]
    assert [o.seed for o in report.outcomes] == [0, 2, 3]
    assert report.exit_status() == 3


@pytest.mark.usefixtures("lost")
def test_runs_retry_a_killed_worker_alone_then_crash_it() -> None:
    pytest.importorskip("distributed")
    with ThreadPoolExecutor(2) as ex:
        got = run_all(Pool(ex, 2, None), killed_worker_run, [(n, (n,)) for n in range(4)])
    assert {k: o.value for k, o in got.items() if o.error is None} == {0: 0, 2: 2, 3: 3}
    assert got[1].crashed
    assert got[1].error is not None
    assert got[1].error.startswith("KilledWorker: Attempted to run task 'run_seed-1' on 4 different workers")


def square(n: int) -> int:
    return n * n


def test_dask_address_connects_to_an_existing_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
    )
    try:
        with open_executor(ExecutorSpec("dask", cluster.scheduler_address), None, 5) as pool:
            assert pool.width == 2  # the cluster's threads
            got = run_all(pool, square, [(n, (n,)) for n in range(5)])
    finally:
        cluster.close()
    assert {k: o.value for k, o in got.items()} == {n: n * n for n in range(5)}


def test_dask_address_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("Timed out trying to connect to tcp://10.9.9.9:8786 after 10 s")

    monkeypatch.setattr(distributed, "Client", refuse)
    with (
        pytest.raises(
            ExecutorError,
            match=r"^--executor dask=tcp://10\.9\.9\.9:8786: cannot connect to the Dask scheduler: Timed out",
        ),
        open_executor(ExecutorSpec("dask", "tcp://10.9.9.9:8786"), None, 1),
    ):
        pass
