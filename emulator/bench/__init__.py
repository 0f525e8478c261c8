"""``python -m emulator bench``: scheduler_perf-style workloads on the real clock.

- ``workloads``: ``bench/workloads.yaml`` → resolved ``Workload`` s (path-precise errors).
- ``harness``: one workload on a fresh uvloop cluster (API server, scheduler, optional kubelets).
- ``instruments``: the scheduler under test (``default`` / ``noop`` profile), the binding
  tracker, the Filter/Score timers.
- ``metrics``: throughput samples (upstream's collector), percentiles, peak RSS.
- ``command``: ``add_parser(subparsers)`` and ``run(args) -> int`` for the command line.
"""

from emulator.bench.command import add_parser, run

__all__ = ["add_parser", "run"]
