"""Hand-made SVG charts: time-series lines or stacked areas with labelled markers on the
time axis, histograms and a Gantt of pods on nodes.

Each chart is a string of SVG drawn from Python, plus (for the time series) its data as an
embedded JSON block that the page's script reads to show the values under the pointer
(``page.SCRIPT``). Elements with a ``data-tip`` attribute get a tooltip. Owns geometry only:
colours come from the caller, text is escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from emulator.app.report.fmt import esc, fmt_duration, fmt_number, nice_ticks, script_json, time_ticks

__all__ = ["Bar", "Frame", "Marker", "Series", "gantt", "histogram", "marker_list", "time_chart"]

WIDTH = 960
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 30, 34


@dataclass(frozen=True, kw_only=True)
class Series:
    """One line (or one band of a stack): its values at times ``t``."""

    name: str
    color: str
    t: Sequence[float]
    values: Sequence[float]
    dash: str = ""


@dataclass(frozen=True, kw_only=True)
class Marker:
    """A step or fault on the time axis; ``n`` its number in the page's marker list."""

    n: int
    t: float
    kind: str
    label: str


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One bar of a Gantt: ``row`` is the node's index, ``end`` None = to the chart's end."""

    row: int
    start: float
    end: float | None
    color: str
    tip: str


@dataclass(kw_only=True)
class Frame:
    """The plot area inside an SVG and the scales of both axes."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int = WIDTH
    height: int = 220
    left: int = LEFT
    top: int = TOP
    bottom: int = BOTTOM
    parts: list[str] = field(default_factory=list)

    @property
    def plot_w(self) -> float:
        return self.width - self.left - RIGHT

    @property
    def plot_h(self) -> float:
        return self.height - self.top - self.bottom

    def x(self, t: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return round(self.left + (t - self.x0) / span * self.plot_w, 1)

    def y(self, v: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return round(self.top + self.plot_h - (v - self.y0) / span * self.plot_h, 1)

    def open(self, cls: str, label: str) -> None:
        self.parts.append(
            f'<svg class="{cls}" viewBox="0 0 {self.width} {self.height}" width="{self.width}" '
            f'height="{self.height}" role="img" aria-label="{esc(label)}">'
        )

    def time_axis(self) -> None:
        base = self.top + self.plot_h
        self.parts.append(
            f'<line class="axis" x1="{self.left}" y1="{base}" x2="{self.left + self.plot_w}" y2="{base}"/>'
        )
        for tick in time_ticks(self.x0, self.x1):
            x = self.x(tick)
            self.parts.append(f'<line class="tick" x1="{x}" y1="{base}" x2="{x}" y2="{base + 4}"/>')
            self.parts.append(
                f'<text class="tl" x="{x}" y="{base + 16}" text-anchor="middle">{fmt_duration(tick)}</text>'
            )
        self.parts.append(
            f'<text class="unit" x="{self.left + self.plot_w}" y="{self.height - 2}" text-anchor="end">'
            "simulated time</text>"
        )

    def value_axis(self, unit: str, *, percent: bool = False, integer: bool = False) -> None:
        for tick in nice_ticks(self.y0, self.y1, integer=integer):
            y = self.y(tick)
            text = f"{tick:g}%" if percent else fmt_number(tick)
            self.parts.append(f'<line class="grid" x1="{self.left}" y1="{y}" x2="{self.left + self.plot_w}" y2="{y}"/>')
            self.parts.append(f'<text class="tl" x="{self.left - 6}" y="{y + 4}" text-anchor="end">{text}</text>')
        mid = self.top + self.plot_h / 2
        self.parts.append(
            f'<text class="unit" x="12" y="{mid}" text-anchor="middle" transform="rotate(-90 12 {mid})">'
            f"{esc(unit)}</text>"
        )

    def markers(self, markers: Sequence[Marker]) -> None:
        """A dashed line per marker across the plot (hover: its time and label) and its number
        above the plot; markers closer than 14 px share one label (``2–4``). The numbers refer
        to the list ``marker_list`` writes under the chart."""
        bottom = self.top + self.plot_h
        groups: list[tuple[float, int, int]] = []
        for m in markers:
            if not self.x0 <= m.t <= self.x1:
                continue
            x = self.x(m.t)
            tip = f"{m.n}. {fmt_duration(m.t)} {m.label}"
            self.parts.append(
                f'<line class="marker {esc(m.kind)}" x1="{x}" y1="{self.top}" x2="{x}" y2="{bottom}" '
                f'data-tip="{esc(tip)}"/>'
            )
            self.parts.append(
                f'<line class="hit" x1="{x}" y1="{self.top}" x2="{x}" y2="{bottom}" data-tip="{esc(tip)}"/>'
            )
            if groups and x - groups[-1][0] < 14:
                groups[-1] = (groups[-1][0], groups[-1][1], m.n)
            else:
                groups.append((x, m.n, m.n))
        for x, first, last in groups:
            text = str(first) if first == last else f"{first}–{last}"
            self.parts.append(f'<text class="ml" x="{x}" y="{self.top - 4}" text-anchor="middle">{text}</text>')

    def close(self) -> str:
        self.parts.append("</svg>")
        return "".join(self.parts)


def _keep(xs: Sequence[float], ys: Sequence[float], width: float) -> list[int]:
    """The indexes worth drawing of a line with pixel x ``xs`` and values ``ys``: all of them
    when there are few, else at most two per pixel column (the column's lowest and highest
    value, in time order; one when the column is flat), so a 1-hour series stays small
    without losing its spikes."""
    if len(xs) <= 2 * width:
        return list(range(len(xs)))
    keep: list[int] = []
    column: list[int] = []
    for i, x in enumerate(xs):
        if column and int(x) != int(xs[column[0]]):
            keep.extend(_extremes(column, ys))
            column = []
        column.append(i)
    keep.extend(_extremes(column, ys))
    return keep


def _extremes(column: list[int], ys: Sequence[float]) -> list[int]:
    lo = min(column, key=lambda i: ys[i])
    hi = max(column, key=lambda i: ys[i])
    return sorted({lo, hi})


def _points(frame: Frame, t: Sequence[float], values: Sequence[float]) -> list[tuple[float, float]]:
    """The pixel points of a line, decimated by ``_keep``."""
    n = min(len(t), len(values))
    xs = [frame.x(a) for a in t[:n]]
    return [(xs[i], frame.y(values[i])) for i in _keep(xs, values[:n], frame.plot_w)]


def _path(pts: Sequence[tuple[float, float]]) -> str:
    """SVG path data through ``pts``, leaving out the inner points of level runs."""
    kept = [p for i, p in enumerate(pts) if i in (0, len(pts) - 1) or not (pts[i - 1][1] == p[1] == pts[i + 1][1])]
    return "M" + "L".join(f"{x:g},{y:g}" for x, y in kept)


def time_chart(
    chart_id: str,
    series: Sequence[Series],
    *,
    end: float,
    unit: str,
    stacked: bool = False,
    markers: Sequence[Marker] = (),
    percent: bool = False,
    integer: bool = True,
    height: int = 220,
    money: bool = False,
) -> str:
    """Lines (or a stack of areas, first series at the bottom) over simulated time 0..end;
    ``money``: the values are dollars per hour (the hover shows ``$0.576/h``)."""
    if stacked:
        totals = [0.0] * max((len(s.values) for s in series), default=0)
        bands: list[tuple[Series, list[float], list[float]]] = []
        for s in series:
            low = totals[: len(s.values)]
            high = [a + b for a, b in zip(low, s.values, strict=True)]
            bands.append((s, low, high))
            totals = high + totals[len(high) :]
        top = max(totals, default=0.0)
    else:
        top = max((max(s.values, default=0.0) for s in series), default=0.0)
    top = min(top, 100.0) if percent else top  # a percentage axis scales to its data, up to 100 %
    ticks = nice_ticks(0, top or 1.0, integer=integer)
    y1 = ticks[-1] if ticks[-1] >= top else ticks[-1] + (ticks[1] - ticks[0] if len(ticks) > 1 else 1)
    frame = Frame(x0=0.0, x1=end or 1.0, y0=0.0, y1=y1 or 1.0, height=height)
    frame.open("chart", unit)
    frame.value_axis(unit, percent=percent, integer=integer)
    if stacked:
        n = min(len(series[0].t), len(totals)) if series else 0
        xs = [frame.x(a) for a in series[0].t[:n]] if series else []
        keep = _keep(xs, totals[:n], frame.plot_w)
        for s, low, high in bands:
            if not any(s.values):
                continue  # an empty band would only draw its outline over the stack
            upper = [(xs[i], frame.y(high[i])) for i in keep if i < len(high)]
            lower = [(xs[i], frame.y(low[i])) for i in keep if i < len(low)][::-1]
            frame.parts.append(f'<path class="area" fill="{s.color}" stroke="{s.color}" d="{_path(upper + lower)}Z"/>')
    else:
        for s in series:
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            frame.parts.append(
                f'<path class="line" stroke="{s.color}"{dash} d="{_path(_points(frame, s.t, s.values))}"/>'
            )
    frame.time_axis()
    frame.markers(markers)
    frame.parts.append(
        f'<rect class="hover" x="{frame.left}" y="{frame.top}" width="{frame.plot_w}" height="{frame.plot_h}" '
        f'data-chart="{esc(chart_id)}"/>'
    )
    data: dict[str, Any] = {
        "x0": frame.x0,
        "x1": frame.x1,
        "left": frame.left,
        "w": frame.plot_w,
        "pct": percent,
        "money": money,
        "ts": [],
        "series": [],
    }
    times: list[list[float]] = []
    for s in series:
        t = list(s.t)
        if t not in times:
            times.append(t)
        data["series"].append({"name": s.name, "color": s.color, "ti": times.index(t), "v": list(s.values)})
    data["ts"] = times
    svg = frame.close()
    legend = "".join(f'<span class="key"><i style="background:{s.color}"></i>{esc(s.name)}</span>' for s in series)
    return (
        f'<div class="legend">{legend}</div>{svg}'
        f'<script type="application/json" id="data-{esc(chart_id)}">{script_json(data)}</script>'
    )


def histogram(edges: Sequence[float], counts: Sequence[int], *, color: str, unit: str) -> str:
    """Equal-width bars, one per bin (the bins are often log-spaced), edges labelled as
    durations below; each bar's tooltip gives its range and count."""
    n = len(counts)
    top = max(counts, default=0)
    ticks = nice_ticks(0, top or 1, integer=True)
    frame = Frame(x0=0.0, x1=float(max(n, 1)), y0=0.0, y1=float(ticks[-1] if ticks[-1] >= top else top), height=200)
    frame.open("chart hist", unit)
    frame.value_axis("pods", integer=True)
    base = frame.top + frame.plot_h
    bw = frame.plot_w / max(n, 1)
    for i, c in enumerate(counts):
        lo, hi = edges[i], edges[i + 1]
        x, y = frame.x(i), frame.y(c)
        tip = f"{fmt_duration(lo)} – {fmt_duration(hi)}: {c:,} pods"
        frame.parts.append(
            f'<rect class="bar" x="{x + 0.5:g}" y="{y}" width="{max(bw - 1, 0.5):.1f}" height="{round(base - y, 1)}" '
            f'fill="{color}" data-tip="{esc(tip)}"/>'
        )
        frame.parts.append(
            f'<rect class="hit" x="{x}" y="{frame.top}" width="{bw:.1f}" height="{frame.plot_h}" '
            f'data-tip="{esc(tip)}"/>'
        )
    frame.parts.append(
        f'<line class="axis" x1="{frame.left}" y1="{base}" x2="{frame.left + frame.plot_w}" y2="{base}"/>'
    )
    every = max(1, -(-(n + 1) // 10))
    for i in range(0, n + 1, every):
        x = frame.x(i)
        frame.parts.append(
            f'<text class="tl" x="{x}" y="{base + 16}" text-anchor="middle">{fmt_duration(edges[i])}</text>'
        )
    frame.parts.append(
        f'<text class="unit" x="{frame.left + frame.plot_w}" y="{frame.height - 2}" text-anchor="end">'
        f"{esc(unit)}</text>"
    )
    return frame.close()


def gantt(rows: Sequence[str], bars: Sequence[Bar], *, end: float, markers: Sequence[Marker] = ()) -> str:
    """Pods on nodes: one row per node, its bars packed into lanes so overlapping pods stay
    visible (first fit in start order); row names on the left when they fit."""
    lanes_of: list[list[float]] = [[] for _ in rows]
    placed: list[tuple[Bar, int]] = []
    for bar in sorted(bars, key=lambda b: (b.row, b.start)):
        ends = lanes_of[bar.row]
        stop = end if bar.end is None else bar.end
        lane = next((i for i, e in enumerate(ends) if e <= bar.start), len(ends))
        if lane == len(ends):
            ends.append(stop)
        else:
            ends[lane] = stop
        placed.append((bar, lane))
    lanes = [max(1, len(e)) for e in lanes_of]
    total = sum(lanes)
    gap = 2 if 900 / max(total, 1) >= 6 else 0  # between node rows, when lanes are tall enough
    lane_h = min(10.0, (900 - gap * len(rows)) / max(total, 1))  # at most ~900 px in all
    row_top = []
    y = 0.0
    for n in lanes:
        row_top.append(y)
        y += n * lane_h + gap
    left = 110 if lane_h * min(lanes, default=1) >= 9 else 24
    frame = Frame(x0=0.0, x1=end or 1.0, y0=0.0, y1=1.0, left=left, height=int(y + TOP + BOTTOM))
    frame.open("chart gantt", "pods on nodes")
    for i, name in enumerate(rows):
        top = frame.top + row_top[i]
        if i % 2:
            frame.parts.append(
                f'<rect class="band" x="{frame.left}" y="{top:.1f}" width="{frame.plot_w}" '
                f'height="{lanes[i] * lane_h:.1f}"/>'
            )
        if left > 24:
            frame.parts.append(
                f'<text class="tl" x="{left - 6}" y="{top + lanes[i] * lane_h / 2 + 4:.1f}" text-anchor="end">'
                f"{esc(name)}</text>"
            )
    for bar, lane in placed:
        x = frame.x(bar.start)
        x_end = frame.x(end if bar.end is None else bar.end)
        top = frame.top + row_top[bar.row] + lane * lane_h
        frame.parts.append(
            f'<rect class="pod" x="{x}" y="{top:.2f}" width="{max(x_end - x, 1.0):.1f}" '
            f'height="{lane_h - 1 if lane_h >= 3 else lane_h:.2f}" '
            f'fill="{bar.color}" data-tip="{esc(bar.tip)}"/>'
        )
    frame.time_axis()
    frame.markers(markers)
    return frame.close()


def marker_list(markers: Sequence[Marker], most: int = 40) -> str:
    """The numbered list of markers under a chart: number, time, label (the first ``most``)."""
    if not markers:
        return ""
    items = "".join(
        f'<li class="{esc(m.kind)}"><b>{m.n}</b> {esc(fmt_duration(m.t))} {esc(m.label)}</li>' for m in markers[:most]
    )
    more = f'<li class="more">… and {len(markers) - most:,} more (hover the lines)</li>' if len(markers) > most else ""
    return f'<ol class="markers">{items}{more}</ol>'
