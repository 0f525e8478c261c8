"""``LeaseBatch``: Lease renewals due at one instant, from many clients, committed together.

This module owns the hand-off between the kubelets' heartbeats (``agents/kubelet/ticker.py``
fires every beat due at an instant in one loop) and the API server's batch of Lease updates
(``ApiServer.renew_leases``, ``Store._commit_batch``): each renewal that would go through the
client's fast path (``Client.renew_lease_now``: the client would not suspend, the Lease is
``renewable``) is ``add``-ed instead of written; ``flush`` writes every added renewal in the
order they were added, in one pass, and hands each caller its new Lease (``done``).

The contract that keeps it exactly the writes of the one-by-one fast path: between an ``add``
and the ``flush``, nothing else writes to the API server or opens a watch. The ticker
guarantees it (it flushes before any callback that is not a heartbeat, and after the last one
of an instant, before it sleeps); a heartbeat that must write otherwise (a Lease to create, a
Conflict to resolve, a client with latency) flushes first. So the revisions, write records,
watch events and the order the watchers wake in are those of the writes made one by one
(``tests/kubelet/test_lease_batch.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.client.client import Client

__all__ = ["LeaseBatch"]

Done = Callable[[Lease], None]
"""``done(new)``: the caller's answer, the Lease as written (or as stored, when unchanged)."""


class LeaseBatch:
    """Renewals added at one instant; ``flush`` commits them in one pass."""

    def __init__(self) -> None:
        self._renewals: list[tuple[Lease, LeaseSpec]] = []
        self._answers: list[tuple[Client, Done]] = []
        self.flushes = 0
        self.renewals = 0

    def __len__(self) -> int:
        return len(self._renewals)

    def __repr__(self) -> str:
        return f"<LeaseBatch pending={len(self._renewals)} renewals={self.renewals} flushes={self.flushes}>"

    def add(self, client: Client, lease: Lease, spec: LeaseSpec, done: Done) -> bool:
        """Queue ``update(replace(lease, spec=spec))`` through ``client`` if the fast path
        applies (True); False with nothing queued otherwise (flush, then write it yourself)."""
        server = client.server
        if not client.can_renew_now() or not server.renewable(lease, spec):
            return False
        answers = self._answers
        if answers and answers[0][0].server is not server:
            self.flush()
        self._renewals.append((lease, spec))
        answers.append((client, done))
        return True

    def flush(self) -> None:
        """Write every queued renewal, in order, and answer each caller."""
        renewals = self._renewals
        if not renewals:
            return
        answers = self._answers
        self._renewals, self._answers = [], []
        self.flushes += 1
        self.renewals += len(renewals)
        written = answers[0][0].server.renew_leases(renewals)
        for (client, done), new in zip(answers, written, strict=True):
            calls = client.stats.calls
            calls["update"] = calls.get("update", 0) + 1
            done(new)
