"""``experiments.executors``: the ``--executor`` flag, the width of a sweep, recognising Dask's
``KilledWorker``, and connecting to an existing Dask cluster (or failing to). How a sweep survives
the deaths of its workers is ``test_sweep``'s."""

from __future__ import annotations

import pytest

from emulator.app.experiments.executors import (
    ExecutorError,
    ExecutorSpec,
    open_executor,
    parse_executor,
    worker_lost,
    workers_for,
)
from emulator.app.experiments.sweep import run_all


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
