"""The roof over the agents: everything that reads a user's files or prints for a user.

``scenario`` (the scenario format, the runner, faults, expectations, invariants, the event
trace), ``bench`` (the scheduler_perf-style benchmark library), ``report`` (the HTML report),
``experiments`` (sweeps over many runs: ``compare`` and ``hunt``'s engine, executors, results)
and ``commands`` (one module per subcommand). These import the agents only through their
package surfaces (``agents.scheduler``, ``agents.kubelet``, ``agents.controllers``) and start
them; import-linter checks both.
"""
