"""The scheduler_perf-style benchmark library behind ``python -m emulator bench``.

- ``workloads``: a workload file (ours, ``bench/workloads.yaml``, or upstream's own
  ``performance-config.yaml`` through ``upstream``) → resolved ``Workload`` s (path-precise
  errors), over ``spec`` (the file's schema), ``resolve`` (checks and parameters),
  ``gotemplate``/``gotemplate_funcs`` (upstream's Go-template templates), ``upstream_fields``
  (upstream's format: fields, opcodes, skip reasons) and ``steps`` (the resolved steps).
- ``update_any``: upstream's ``updateAny`` op against the API server.
- ``tally``, ``gates``: the per-directory tally of ``bench --file DIR`` and 1.34's gate defaults.
- ``harness``: one workload on a fresh uvloop cluster (API server, scheduler, optional kubelets),
  given ``result.BenchOptions`` and giving ``result.WorkloadResult``; ``stages``: the barrier's
  scheduled/attempted counts.
- ``instruments``: the scheduler under test (``default`` / ``noop`` profile), the binding
  tracker, the Filter/Score timers.
- ``metrics``: throughput samples (upstream's collector), percentiles, peak RSS.

The command itself is ``emulator.app.commands.bench`` (its options: ``emulator.app.commands.arguments``).
"""
