"""The per-request work budget: no request holds the event loop past it.

Owns ``limited`` (a budget for the synchronous handling of one request), ``spend`` (what the
merge, apply and JSON patch loops call per item) and ``RequestTimeout``. Does not own which
loops spend (``patch``, ``apply``, ``fieldpaths``, ``jsonpatch``) nor the HTTP settings
(``HttpSettings.request_budget``, ``server``).

Upstream runs each request in its own goroutine under ``--request-timeout`` (60 s): past it
the timeout filter answers 504 ``Timeout`` (``errors.NewTimeoutError``) while the work may go
on. Here every request runs on the one event loop that also drives the other clients, the
watches and the simulated clock, so a long synchronous merge would hold them all. The loops
count the items they visit; every ``CHECK_EVERY`` items the budget reads its clock, and past
the deadline raises ``RequestTimeout`` (upstream's Status), before anything is stored.
Outside ``limited`` (scenarios, unit tests of the merges) ``spend`` does nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

from emulator.base.api.errors import Timeout

__all__ = ["CHECK_EVERY", "TIMEOUT_MESSAGE", "BodyTimeout", "RequestTimeout", "limited", "spend"]

CHECK_EVERY: Final = 512
"""Items between two reads of the clock (a few hundred microseconds of merge work)."""
TIMEOUT_MESSAGE: Final = "Timeout: request did not complete within requested timeout - context deadline exceeded"
"""Upstream's ``NewTimeoutError`` message from the timeout filter (``context.DeadlineExceeded``)."""


class RequestTimeout(Timeout):
    """504 ``Timeout``: the request's work went past its budget; nothing was stored."""

    def __init__(self) -> None:
        super().__init__(TIMEOUT_MESSAGE)


class BodyTimeout(RequestTimeout):
    """A request body that did not arrive within the server's request timeout: the same 504,
    after which the server drops the connection (upstream's HTTP server closes one whose body
    was not read)."""


@dataclass(slots=True)
class _Budget:
    deadline: float
    clock: Callable[[], float]
    left: int = CHECK_EVERY


_current: ContextVar[_Budget | None] = ContextVar("request_budget", default=None)


def spend(items: int = 1) -> None:
    """Count ``items`` of work against the current request's budget; raises ``RequestTimeout``
    once the clock is past its deadline (read every ``CHECK_EVERY`` items)."""
    budget = _current.get()
    if budget is None:
        return
    budget.left -= items
    if budget.left > 0:
        return
    budget.left = CHECK_EVERY
    if budget.clock() >= budget.deadline:
        raise RequestTimeout


@contextmanager
def limited(seconds: float, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Run the block under a budget of ``seconds`` by ``clock`` (``inf``: no limit)."""
    token = _current.set(_Budget(clock() + seconds, clock))
    try:
        yield
    finally:
        _current.reset(token)
