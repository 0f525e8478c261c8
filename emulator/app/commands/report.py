"""``python -m emulator report RUN.json [TRACE.jsonl] --html PATH [--explain PATH.jsonl]``: the
HTML page of a finished run, from the JSON report ``run --output json`` printed (and its
trace, when given: the page then shows the write history of the slowest pods; and its
``--explain`` file: the per-plugin table of their last attempts).

Exit status 0, or 2 on bad input (one line: a missing file, a JSON file that is not a run
report, a report made before runs collected their series, a trace line that is not JSON, an
HTML file that cannot be written).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from emulator.app.commands.common import UsageError
from emulator.app.report import ReportError, load_report, read_explain, read_trace, render_run

__all__ = ["run", "write_html"]


def write_html(path: Path, html: str) -> None:
    """Write ``html`` to ``path``; a failure is a ``UsageError`` naming the file."""
    try:
        path.write_text(html, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"{path}: cannot write the HTML report: {err.strerror or err}") from None


def run(args: argparse.Namespace) -> int:
    report = load_report(args.report)
    trace = read_trace(args.trace) if args.trace is not None else None
    explain = read_explain(args.explain) if args.explain is not None else None
    try:
        html = render_run(report, trace=trace, explain=explain)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
        # load_report checked the keys the page is built on; a hand-edited value deeper
        # down (a count that is a string, a row that is not base64) ends here.
        raise ReportError(
            str(args.report), "series", f"not in the shape of series version 1 ({type(err).__name__}: {err})"
        ) from None
    write_html(args.html, html)
    return 0
