"""The scheduler_perf-style benchmark library behind ``python -m emulator bench``.

- ``workloads``: ``bench/workloads.yaml`` → resolved ``Workload`` s (path-precise errors).
- ``harness``: one workload on a fresh uvloop cluster (API server, scheduler, optional kubelets).
- ``instruments``: the scheduler under test (``default`` / ``noop`` profile), the binding
  tracker, the Filter/Score timers.
- ``metrics``: throughput samples (upstream's collector), percentiles, peak RSS.

The command itself (``add_parser`` / ``run``) is ``emulator.commands.bench``.
"""
