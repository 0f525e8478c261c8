"""Where a sweep's runs execute: ``--executor local|dask|dask=ADDRESS`` and ``--jobs J`` as one
``concurrent.futures.Executor``, for ``hunt`` and ``compare``.

What it owns: parsing the flag (``parse_executor``), the local process pool
(``default_executor``, ``workers_for``), the Dask adapter (``open_executor`` starts a
``LocalCluster`` on 127.0.0.1 or connects to a scheduler's address, and closes what it started),
and recognising a Dask worker loss (``worker_lost``). It does not own what a run does (the tasks
are ``hunt.run_seed`` and ``compare.run_variant``) nor how a sweep survives a broken local pool
(``sweep``).

=====================  ===========================================  ============================
``--executor``         executor                                     a worker process that dies
=====================  ===========================================  ============================
``local`` (default)    ``ProcessPoolExecutor``, ``--jobs`` workers  the pool breaks; the sweep
                       (default one per core), forkserver or spawn  replaces it (``replace``)
``dask``               ``distributed.LocalCluster`` of ``--jobs``   Dask's nanny restarts it and
                       processes (default one per core), one thread  the scheduler reruns the
                       each, 127.0.0.1, no dashboard                 task; after
``dask=ADDRESS``       ``Client(ADDRESS)``: an existing cluster      ``distributed.scheduler.
                       (``tcp://host:8786``; its workers' threads     allowed-failures`` deaths
                       are the width unless ``--jobs``)              ``KilledWorker``: *crashed*
=====================  ===========================================  ============================

Dask never retries an exception (``retries`` stays 0): a run is deterministic, so an exception
out of it is a finding, not a fluke. The Dask executor is ``Client.get_executor(pure=False)``: its
futures are ``concurrent.futures`` futures, so the sweeps read them as they read the pool's.
Without the ``dask`` extra, ``--executor dask`` is bad input naming the extra.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from emulator.base.inputs import PlainInputError

__all__ = [
    "DASK_EXTRA",
    "ExecutorError",
    "ExecutorSpec",
    "Pool",
    "default_executor",
    "open_executor",
    "parse_executor",
    "worker_lost",
    "workers_for",
]

DASK_EXTRA = "pip install 'kube-emulator[dask]'"


class ExecutorError(PlainInputError):
    """A bad ``--executor`` (or one that cannot start): the CLI prints ``error: ...``, exit 2."""


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    kind: Literal["local", "dask"] = "local"
    address: str | None = None
    """``dask=ADDRESS``: the scheduler to connect to; None starts a LocalCluster."""

    def __str__(self) -> str:
        return self.kind if self.address is None else f"{self.kind}={self.address}"


def parse_executor(text: str) -> ExecutorSpec:
    """``local``, ``dask`` or ``dask=ADDRESS`` (``tcp://host:8786``, ``host:8786``, ``tls://...``)."""
    kind, sep, address = text.partition("=")
    if kind == "local" and not sep:
        return ExecutorSpec()
    if kind == "dask" and not sep:
        return ExecutorSpec("dask")
    if kind == "dask" and address.strip():
        return ExecutorSpec("dask", address.strip())
    raise ExecutorError(f"--executor: expected local, dask or dask=ADDRESS (e.g. dask=tcp://host:8786), got {text!r}")


def workers_for(jobs: int | None, tasks: int) -> int:
    """``--jobs``, else one per core; never more than there are tasks."""
    return max(1, min(jobs or os.cpu_count() or 1, tasks))


def default_executor(jobs: int | None, tasks: int) -> ProcessPoolExecutor:
    """A process pool (forkserver where available, else spawn: safe under pytest and threads)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=workers_for(jobs, tasks), mp_context=ctx)


def worker_lost(err: BaseException | None) -> bool:
    """True for Dask's ``KilledWorker``: the task's workers died ``allowed-failures`` times.
    Recognised by class, without importing ``distributed`` (absent without the extra)."""
    if err is None:
        return False
    return any(cls.__name__ == "KilledWorker" and cls.__module__.startswith("distributed") for cls in type(err).__mro__)


@dataclass(slots=True)
class Pool:
    """An open executor: ``executor`` to submit to, ``width`` tasks to keep in flight, and
    ``replace`` (local only) to make a fresh pool when a worker's death broke it."""

    executor: Executor
    width: int
    replace: Callable[[], Executor] | None
    interrupted: bool = False
    """Set by the caller after Ctrl-C: the shutdown then does not wait for running tasks."""


class _DaskExecutor(Executor):
    """``Client.get_executor``'s executor with the stdlib's ``shutdown`` signature."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = self._inner.submit(fn, *args, **kwargs)
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait and not cancel_futures)


@contextlib.contextmanager
def open_executor(spec: ExecutorSpec, jobs: int | None, tasks: int) -> Iterator[Pool]:
    """The executor ``spec`` names, for ``tasks`` tasks, closed (cluster included) on exit."""
    if spec.kind == "local":
        pool = Pool(default_executor(jobs, tasks), workers_for(jobs, tasks), lambda: default_executor(jobs, tasks))
        try:
            yield pool
        finally:
            pool.executor.shutdown(wait=not pool.interrupted, cancel_futures=True)
        return
    with _dask(spec, jobs, tasks) as pool:
        yield pool


def _close_local_cluster(cluster: Any) -> None:
    """Close a LocalCluster we started, once every result is in. Dask's own teardown can fail
    while a nanny restarts a worker that just died (``AssertionError: can only join a started
    process``, seen under load after a poison run): nothing is lost then (the results are in and
    the worker processes are ours, ended with us), so that is not turned into a traceback."""
    try:
        cluster.close()
    except AssertionError:
        logging.getLogger(__name__).debug("the local Dask cluster failed to close", exc_info=True)


@contextlib.contextmanager
def _dask(spec: ExecutorSpec, jobs: int | None, tasks: int) -> Iterator[Pool]:
    try:
        import distributed
    except ImportError:
        raise ExecutorError(f"--executor {spec}: Dask is not installed; install the dask extra: {DASK_EXTRA}") from None
    # Dask logs harmless CommClosedError tracebacks while a cluster shuts down.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    dd: Any = distributed  # partly typed: its constructors are not
    with contextlib.ExitStack() as stack:
        if spec.address is None:
            try:
                cluster = dd.LocalCluster(
                    n_workers=workers_for(jobs, tasks),
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # no dashboard, and its HTTP server (health, metrics) on a free port: with
                    # None it tries 8787 and warns when another cluster holds it
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                    silence_logs=logging.ERROR,
                )
            except Exception as err:
                raise ExecutorError(f"--executor dask: the local Dask cluster did not start: {err}") from None
            stack.callback(_close_local_cluster, cluster)
            client: Any = dd.Client(cluster)
        else:
            try:
                client = dd.Client(spec.address, timeout="10s")
            except Exception as err:
                raise ExecutorError(f"--executor {spec}: cannot connect to the Dask scheduler: {err}") from None
        stack.callback(client.close)
        threads = sum(client.nthreads().values()) or 1
        executor = _DaskExecutor(client.get_executor(pure=False))
        pool = Pool(executor, max(1, min(jobs or threads, tasks)), None)
        try:
            yield pool
        finally:
            executor.shutdown(wait=not pool.interrupted, cancel_futures=pool.interrupted)
