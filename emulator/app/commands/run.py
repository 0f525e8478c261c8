"""``python -m emulator run FILE``: play a scenario and report.

Exit status: 0 every expectation met; 1 an expectation failed (or a waitFor timed out, or
the simulation deadlocked); 2 bad input. ``run`` also exits 2, with one ``error:`` line,
when the API server refuses one of the runner's own writes that the loader could not
foresee (``StepError``: the run is aborted at that step, no report; the trace written so
far stays), or when the trace, explanations or ``--html`` file cannot be written (``--trace
/dev/full``: the run completes, then the error is reported instead of the report).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import msgspec
from rich.console import Console

from agents.scheduler import ExplainRecorder
from emulator.app.commands.common import UsageError, check_scheduler
from emulator.app.commands.report import write_html
from emulator.app.report import read_explain, read_trace, render_run
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.summary import print_summary, to_json
from emulator.base.apiserver.server import WriteRecord
from emulator.base.runtime.loop import DeadlockError

__all__ = ["run"]


class _Progress:
    """A live one-line status on a TTY, refreshed at most 4 times a wall second."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.writes = 0
        self.last = 0.0
        self.status = console.status("starting", spinner="dots")

    def __call__(self, rec: WriteRecord) -> None:
        self.writes += 1
        if self.writes % 256:
            return
        now = time.perf_counter()
        if now - self.last >= 0.25:
            self.last = now
            self.status.update(f"t={rec.time:,.1f}s simulated  {self.writes:,} API writes")


class _Sink:
    """A binary output file that keeps the first ``OSError`` (a full disk, ``/dev/full``)
    instead of raising it inside the run, where it would crash whichever agent wrote."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        if self.error is None:
            try:
                return self.file.write(data)
            except OSError as err:
                self.error = err
        return len(data)

    def close(self) -> None:
        try:
            self.file.close()
        except OSError as err:
            self.error = self.error or err


@contextlib.contextmanager
def _output(path: Path | None, what: str) -> Iterator[IO[bytes] | None]:
    """``path`` opened for the run; an error writing or closing it is a ``UsageError`` after."""
    if path is None:
        yield None
        return
    try:
        sink = _Sink(path.open("wb"))
    except OSError as err:
        raise UsageError(f"{path}: cannot write the {what}: {err.strerror or err}") from None
    try:
        yield cast(IO[bytes], sink)  # write() is all the recorders use
    finally:
        sink.close()
    if sink.error is not None:
        raise UsageError(f"{path}: cannot write the {what}: {sink.error.strerror or sink.error}")


def _explain_recorder(out: IO[bytes] | None) -> ExplainRecorder | None:
    return None if out is None else ExplainRecorder(out)


def _trace_of(path: Path | None) -> Iterator[dict[str, Any]] | None:
    """The trace just written, for the HTML page's pod histories, when it is a regular file
    that can be read back (not ``/dev/stdout``, say)."""
    return read_trace(path) if path is not None and path.is_file() else None


def run(args: argparse.Namespace) -> int:
    out = Console(highlight=False, soft_wrap=True)
    warnings: list[str] = []
    scenario = load_scenario(args.file, warnings)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    check_scheduler(scenario, args.file)
    tty = args.output == "text" and sys.stdout.isatty()
    progress = _Progress(out) if tty else None
    with _output(args.trace, "trace") as trace, _output(args.explain, "explanations") as explain:
        recorder = _explain_recorder(explain)
        options = RunOptions(
            seed=args.seed,
            until=args.until,
            real_time=args.real_time,
            trace=trace,
            on_write=progress,
            explain=recorder.record if recorder is not None else None,
            source=str(args.file),
        )
        ctx = progress.status if progress is not None else contextlib.nullcontext()
        with ctx:
            try:
                result = run_scenario(scenario, options)
            except DeadlockError as err:
                print(f"{args.file}: the simulation deadlocked: {err}", file=sys.stderr)
                return 1
    doc = to_json(result)
    if warnings:
        doc["warnings"] = warnings  # unknown fields of the scenario's manifests, as on stderr
    if args.html is not None:
        explained = read_explain(args.explain) if args.explain is not None and args.explain.is_file() else None
        write_html(args.html, render_run(doc, trace=_trace_of(args.trace), explain=explained))
    if args.output == "json":
        sys.stdout.write(msgspec.json.encode(doc).decode() + "\n")
    else:
        print_summary(result, out)
    return 0 if result.passed else 1
