"""Tasks for the sweep engine's tests (``test_sweep``, ``tests/hunt``): runs that kill their own
worker process, raise, or come back as Dask's ``KilledWorker``, as marker files in a directory say.

Markers: ``once-<n>`` (the first run dies, the marker is consumed: atomic, only one run dies),
``always-<n>`` (every run dies), ``raise-<n>`` (the run raises). Each run appends its key to
``runs.log``. Workers import this module by name to unpickle the tasks (the repository root is on
``sys.path`` under ``python -m pytest`` and the README's commands).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from emulator.app.experiments.hunt import SeedOutcome

LOST: set[int] = set()
"""Seeds a ``killed_worker_task`` already lost once (thread pools: one process)."""


def marked(tmp_path: Path, **names: tuple[int, ...]) -> str:
    """``tmp_path`` with a marker file per ``kind=(n, ...)``; its path, for the tasks."""
    for kind, ns in names.items():
        for n in ns:
            (tmp_path / f"{kind}-{n}").touch()
    return str(tmp_path)


def runs(tmp_path: Path) -> Counter[int]:
    """How many times each key ran."""
    log = tmp_path / "runs.log"
    return Counter(int(line) for line in log.read_text().split()) if log.exists() else Counter()


def _log(here: Path, n: int) -> None:
    with (here / "runs.log").open("a") as log:
        log.write(f"{n}\n")


def _die_once(here: Path, n: int) -> None:
    try:
        (here / f"once-{n}").rename(here / f"died-{n}")
    except FileNotFoundError:
        pass
    else:
        os._exit(1)


def task(directory: str, n: int) -> int:
    """``n * n``; dies or raises first as the markers say (``always`` by ``os._exit``)."""
    here = Path(directory)
    _log(here, n)
    if (here / f"always-{n}").exists():
        os._exit(1)
    _die_once(here, n)
    if (here / f"raise-{n}").exists():
        raise ValueError(f"run {n} is wrong")
    return n * n


def killing_task(path: str, seed: int) -> SeedOutcome:
    """A hunt's task: pass for odd seeds, fail for even ones; die first as the markers in
    ``path`` say (``always`` by SIGKILL)."""
    here = Path(path)
    _log(here, seed)
    if (here / f"always-{seed}").exists():
        os.kill(os.getpid(), signal.SIGKILL)
    _die_once(here, seed)
    time.sleep(0.05)  # long enough for the flight to hold several seeds when one dies
    return SeedOutcome(seed, seed % 2 == 1, "" if seed % 2 else "expectation x: y", 1.0)


def killed_worker_task(path: str, seed: int) -> SeedOutcome:
    """Raise as Dask's future would for a seed whose workers Dask gave up on: seed 1 every time,
    seed 2 the first time only (charged for another task's deaths)."""
    from distributed.scheduler import KilledWorker

    if seed == 1 or (seed == 2 and seed not in LOST):
        LOST.add(seed)
        raise KilledWorker(f"run_seed-{seed}", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)
    return SeedOutcome(seed, True)
