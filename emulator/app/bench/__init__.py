"""The scheduler_perf-style benchmark library behind ``python -m emulator bench``.

- ``workloads``: a workload file (ours, ``bench/workloads.yaml``, or upstream's own
  ``performance-config.yaml`` through ``upstream``) → resolved ``Workload`` s (path-precise
  errors), over ``spec`` (the file's schema), ``resolve`` (checks and parameters),
  ``gotemplate``/``gotemplate_funcs`` (upstream's Go-template templates), ``render`` (per-object
  rendering), ``upstream_fields`` (upstream's format: fields, opcodes, skip reasons),
  ``upstream_ops`` (one upstream op and its template files) and ``steps`` (the resolved steps).
- ``update_any``: upstream's ``createAny`` and ``updateAny`` ops against the API server; ``dra``:
  its DRA ops (``createResourceDriver``, ``allocResourceClaims``) and the DRA gates; ``steady``:
  ``createPods`` in steady state.
- ``tally``, ``gates``: the per-directory tally of ``bench --file DIR`` and 1.34's gate defaults.
- ``harness``: one workload on a fresh uvloop cluster (API server, scheduler, optional kubelets),
  given ``result.BenchOptions`` and giving ``result.WorkloadResult``; ``stages``: the barrier's
  scheduled/attempted counts.
- ``instruments``: the scheduler under test (``default`` / ``noop`` profile), the binding
  tracker, the Filter/Score timers.
- ``metrics``: throughput samples (upstream's collector), percentiles, peak RSS.

The command itself is ``emulator.app.commands.bench`` (its options: ``emulator.app.commands.arguments``).
"""
