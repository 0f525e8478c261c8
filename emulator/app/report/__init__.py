"""The self-contained HTML report of a run (``render_run``) and of a comparison
(``render_compare``): one file, hand-made SVG and a canvas heat map with a small inline
script, nothing fetched (``page`` says why this approach). ``BETTER`` is the one rule of
which direction of each metric is better, shared with ``compare``'s text table.

Layer: beside ``emulator.app.scenario`` and ``emulator.app.bench``; imports only ``emulator.base.inputs``
and ``emulator.base.runtime`` of ours.
"""

from emulator.app.report.compare_page import render_compare
from emulator.app.report.fmt import BETTER, best_index
from emulator.app.report.load import ReportError, load_report, read_explain, read_trace
from emulator.app.report.run_page import render_run

__all__ = [
    "BETTER",
    "ReportError",
    "best_index",
    "load_report",
    "read_explain",
    "read_trace",
    "render_compare",
    "render_run",
]
