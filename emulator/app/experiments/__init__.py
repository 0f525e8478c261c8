"""Experiments over many runs: one sweep engine (``sweep``: runs on an executor, workers that die
survived) under comparing scheduler configurations across seeds (``compare``) and hunting for the
seeds that fail (``hunt``); the executors sweeps run on (``executors``: the local process pool,
Dask), exceptions as one line (``errors``), the metrics' aggregation (``metrics``) and the results
tables (``results``). Below ``emulator.app.commands``, above the scenario layer."""
