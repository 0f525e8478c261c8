"""Experiments over many runs: comparing scheduler configurations across seeds (``compare``),
the executors sweeps run on (``executors``: the local process pool, Dask), running many
independent runs (``runs``), the metrics' aggregation (``metrics``) and the results tables
(``results``). Below ``emulator.commands``, above the scenario layer."""
