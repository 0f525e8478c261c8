"""The progress bar of a sweep (``hunt``, ``compare``): on stderr, and only when stderr is a
terminal, so that stdout stays a clean report.

What it owns: ``progress_bar`` (a transient ``rich`` bar: ``<name>: <status>``, the bar, done of
total, elapsed time). It does not own what a step is (the caller advances it per outcome) nor the
report.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

__all__ = ["Advance", "progress_bar"]

Advance = Callable[[str | None], None]
"""One more step done; a new status when not None."""


@contextlib.contextmanager
def progress_bar(total: int, name: str, status: str) -> Iterator[Advance | None]:
    """A bar of ``total`` steps headed ``<name>: <status>`` while the block runs; yields its
    ``advance``, or None when stderr is no terminal (no bar)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    head = escape(name)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{head}: {status}", total=total)

        def advance(new_status: str | None = None) -> None:
            bar.update(task, advance=1, description=None if new_status is None else f"{head}: {new_status}")

        yield advance
