"""The job controller (upstream ``pkg/controller/job``): ``JobController`` in ``controller``;
pure parts beside it: completion indexes (``indexes``), pod recreation backoff
(``backoff``), ``podFailurePolicy`` (``failurepolicy``), conditions (``conditions``)."""

from agents.controllers.job.controller import JobController

__all__ = ["JobController"]
