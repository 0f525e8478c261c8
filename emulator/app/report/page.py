"""The HTML document around the sections: the light theme (CSS), the one inline script
(tooltips, the values under the pointer on time charts, the heat maps), section and table
helpers, and the colours, one per phase, queue and attempt result, used by every chart.

Why hand-made SVG and a small script, not matplotlib or an inlined chart library:
matplotlib's SVG is one path per artist with its own fonts and no hover at all, costs a
60 MB dependency for a feature that is otherwise plain string building, and renders a 1,000
× 240 heat map as a raster anyway; an inlined JS library (uPlot ~50 KB, Chart.js ~200 KB,
Plotly ~3.5 MB) brings interactivity but adds its weight to every file, its licence to the
repository and a vendored copy to keep current. Our charts are few and simple: SVG strings
from Python are small (a 1-hour series is decimated to two points per pixel column), hover
needs ~150 lines of script, and the heat map's canvas draws straight from the series'
base64 rows. Nothing is fetched: the file opens from disk.
"""

from __future__ import annotations

from importlib import resources

from emulator.app.report.fmt import esc

__all__ = ["PHASE_COLORS", "QUEUE_COLORS", "RESULT_COLORS", "VARIANT_COLORS", "document", "note", "section", "table"]

PHASE_COLORS = {"Pending": "#f59e0b", "Running": "#2563eb", "Succeeded": "#16a34a", "Failed": "#dc2626"}
QUEUE_COLORS = {"activeQ": "#2563eb", "backoffQ": "#9333ea", "unschedulablePods": "#ea580c"}
RESULT_COLORS = {"scheduled": "#16a34a", "unschedulable": "#f59e0b", "error": "#dc2626"}
GANTT_COLORS = {**PHASE_COLORS, "Deleted": "#6b7280"}
VARIANT_COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#db2777")

CSS = (resources.files(__package__) / "assets" / "report.css").read_text(encoding="utf-8")
"""The light theme."""
SCRIPT = (resources.files(__package__) / "assets" / "report.js").read_text(encoding="utf-8")
"""Tooltips (any element with ``data-tip``), the values under the pointer on a time chart
(``rect.hover[data-chart]`` + its ``data-<id>`` JSON), the heat maps (``canvas.heat`` + its
JSON: decodes the base64 rows, paints one pixel per cell on an offscreen canvas scaled up
without smoothing, hatches the notReady intervals, answers hover, switches resource)."""


def document(title: str, body: str) -> str:
    """One complete HTML document: the CSS in the head, the script at the end of the body."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}<footer>kube-emulator report · self-contained, no network</footer></main>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def section(anchor: str, title: str, caption: str, body: str) -> str:
    """A titled section with its one-line "how to read it" caption."""
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2><p class="caption">{esc(caption)}</p>{body}</section>'


def note(text: str) -> str:
    """Why a plot is absent (or what it leaves out)."""
    return f'<p class="note">{esc(text)}</p>'


def table(
    head: list[str],
    rows: list[list[str]],
    *,
    numeric: frozenset[int] = frozenset(),
    wrap: frozenset[int] = frozenset(),
    classes: list[str] | None = None,
) -> str:
    """A table of pre-escaped cells; ``numeric`` columns are right-aligned, only ``wrap``
    columns (long text: messages, details) wrap."""
    th = "".join(f'<th class="num">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(head))
    body = []
    for r, row in enumerate(rows):
        cls = f' class="{classes[r]}"' if classes and classes[r] else ""
        tds = "".join(_cell(c, "num" if i in numeric else "wrap" if i in wrap else "") for i, c in enumerate(row))
        body.append(f"<tr{cls}>{tds}</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _cell(text: str, cls: str) -> str:
    return f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>"
