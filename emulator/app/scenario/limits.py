"""The largest (and smallest) numbers a scenario may hold, so that every accepted run finishes.

This module owns the numbers only: ``schema`` puts them on its types (``msgspec.Meta``
``le``/``ge``, read by the loader's schema walk), ``totals.py`` checks the limits that span
several fields (totals over entries and steps, the timeline's horizon), and the ``run``
command applies ``MAX_SECONDS`` to ``--until``. The README's "Limits" table lists them; keep
the two in step.

=============================  ==============  ===============================================
limit                          value           applies to
=============================  ==============  ===============================================
``MAX_SECONDS``                1 day (24h)     every duration and instant: ``at``, ``sleep``,
                                               ``settle``, ``until``, ``waitFor.timeout``,
                                               latencies, kubelet delays, ``cycleCost``, fault
                                               windows and delays, ``runDuration`` and the
                                               ``emulator.k8s.io/run-duration`` annotation;
                                               ``run --until``; and the earliest time a step
                                               can start (sleeps and paced ``createPods``
                                               added up), unless ``until`` ends the run first
``MIN_PERIOD_SECONDS``         1 s             ``kubelet.heartbeatInterval`` and
                                               ``nodeStatusReportFrequency`` (0 still means
                                               off / every heartbeat), ``watchCut.every``
``MIN_RATE_PER_SECOND``        1 a day         ``createPods.ratePerSecond``
``MAX_SCHEDULER_INSTANCES``    100             scheduler instances in all: ``schedulerOptions
                                               .instances`` plus every ``scheduler`` fault's
``MAX_GROUP_NODES``            100,000         nodes of one ``nodes`` entry or ``createNodes``
``MAX_TOTAL_NODES``            100,000         nodes in all (entries, steps and manifests)
``MAX_CREATE_PODS``            1,000,000       pods of one ``createPods`` step
``MAX_TOTAL_PODS``             10,000,000      pods of every ``createPods`` step together
``MAX_FACTOR``                 1,000,000       ``imagePullSlow.factor``
=============================  ==============  ===============================================

Why these: a virtual-time run does work per event, not per simulated second, so what makes a
run hang is an unbounded number of events: a period of 1 ns, a rate that spaces pods a
lifetime apart, a million scheduler instances. Time itself is not free either: an idle
cluster still ticks (the scheduling queue flushes its backoff queue every second, as
upstream's; the watch cache bookmarks every minute), and one simulated day of an idle
one-node scenario took 4 s of wall time here (14 s with its kubelet's 10 s heartbeats). A
year would take half an hour before any node is added, so the horizon is one day, which
is far beyond what scheduling experiments need. A period of at least one second keeps a day
of heartbeats countable. Floats must also be finite: NaN passes every ``<``/``>`` check, so
the loader refuses NaN and infinities in every float field before it compares.
"""

from __future__ import annotations

from typing import Final

from emulator.base.runtime.clock import format_duration, parse_duration

__all__ = [
    "MAX_CREATE_PODS",
    "MAX_FACTOR",
    "MAX_GROUP_NODES",
    "MAX_SCHEDULER_INSTANCES",
    "MAX_SECONDS",
    "MAX_TOTAL_NODES",
    "MAX_TOTAL_PODS",
    "MIN_PERIOD_SECONDS",
    "MIN_RATE_PER_SECOND",
    "parse_simulated_duration",
]

MAX_SECONDS: Final = 24 * 3600
"""One day, in seconds: the longest duration and the latest instant."""
MIN_PERIOD_SECONDS: Final = 1
"""The shortest heartbeat, status report or watch-cut period (0 = off where allowed)."""
MIN_RATE_PER_SECOND: Final = 1 / 86400
"""One pod a day: the slowest ``createPods`` rate."""
MAX_SCHEDULER_INSTANCES: Final = 100
"""Scheduler instances in all (``schedulerOptions.instances`` plus ``scheduler`` faults)."""
MAX_GROUP_NODES: Final = 100_000
"""The most nodes one ``nodes`` entry or ``createNodes`` step may make."""
MAX_TOTAL_NODES: Final = 100_000
"""The most nodes a scenario may make in all."""
MAX_CREATE_PODS: Final = 1_000_000
"""The most pods one ``createPods`` step may make."""
MAX_TOTAL_PODS: Final = 10_000_000
"""The most pods all ``createPods`` steps together may make."""
MAX_FACTOR: Final = 1_000_000
"""The largest ``imagePullSlow.factor``."""


def parse_simulated_duration(text: str | int | float) -> float:
    """``parse_duration``, refusing more than ``MAX_SECONDS`` with a ``ValueError`` that names
    the maximum and ends with ``repr(text)`` (as ``parse_duration``'s own errors do): the one
    check behind every duration of a scenario and ``--until``."""
    seconds = parse_duration(text)
    if seconds > MAX_SECONDS:
        raise ValueError(f"expected a duration of at most {format_duration(MAX_SECONDS)}, got {text!r}")
    return seconds
