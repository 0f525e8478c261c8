"""``LeaseRenewals``: the node lifecycle controller's view of the node Leases' renewals.

This module owns what the controller has seen of each node's Lease: which nodes have one
(only those are monitored), the last ``renewTime`` seen (a Lease's text, or a held renewal's
due as a float, formatted only when compared), and the standing renewals the API server holds
for quiet kubelets (``ApiServer.stand_lease``): at each monitor pass ``mark`` takes the
renewals held and due before it, in due order, as their watch events would have been applied
before the pass (a renewal due at the pass's own instant is the next pass's). Every renewal
newer than the one seen is handed to ``Probes.renewed`` (``nodehealth.py``).

It does not own the Lease informer (the controller's, which gives it ``on_lease`` and
``on_lease_update`` as handlers), the probes' stamps or when a node is overdue
(``nodehealth.Probes``), nor anything the controller writes (``nodelifecycle.py``)."""

from __future__ import annotations

import math
import operator
from typing import Final

from agents.controllers.nodehealth import Probes
from emulator.base.api.scheduling import Lease
from emulator.base.apiserver.standing import StandingRenewal
from emulator.base.client.client import Client
from emulator.base.runtime.clock import Clock

__all__ = ["LEASE_NAMESPACE", "LeaseRenewals"]

LEASE_NAMESPACE: Final = "kube-node-lease"

_due = operator.itemgetter(0)
"""A fresh mark's due (the sort key of ``mark``; C: no frame a mark)."""


class LeaseRenewals:
    """The renewals of the node Leases seen by one controller, handed to ``probes``."""

    def __init__(self, client: Client, clock: Clock, probes: Probes) -> None:
        self._client = client
        self._clock = clock
        self._probes = probes
        self.has_lease: set[str] = set()
        """The nodes that have posted a Lease (the only ones monitored)."""
        self._standing: list[StandingRenewal] = []
        """The standing renewals (``ApiServer.stand_lease``) of node Leases it follows, until
        their last due is marked."""
        self._granted = 0
        """How many of the server's granted renewals it has taken (a cursor)."""
        self._marked: dict[int, float] = {}
        """id of a followed renewal → its last due marked."""
        self._renew_seen: dict[str, str | float | None] = {}
        """Node -> the last ``renewTime`` seen: a Lease's, or a held renewal's due (a float,
        formatted only when compared with a Lease's: ``_seen_text``)."""

    def __repr__(self) -> str:
        return f"<LeaseRenewals leases={len(self.has_lease)} standing={len(self._standing)}>"

    def on_lease(self, lease: Lease) -> None:
        """A Lease added (the informer's handler)."""
        name = lease.metadata.name
        self.has_lease.add(name)
        renew = lease.spec.renew_time
        if self._seen_text(name) != renew:
            self._renew_seen[name] = renew
            self._probes.renewed(name)

    def _seen_text(self, name: str) -> str | None:
        seen = self._renew_seen.get(name, "")
        return self._clock.timestamp(seen) if isinstance(seen, float) else seen

    def on_lease_update(self, old: Lease, new: Lease) -> None:
        """``on_lease(new)`` for a Lease already added (so in ``has_lease``), in one call: a
        renewal, 100 a simulated second on 1,000 nodes."""
        renew = new.spec.renew_time
        name = new.metadata.name
        if self._seen_text(name) != renew:
            self._renew_seen[name] = renew
            self._probes.renewed(name)

    def mark(self, now: float) -> None:
        """The renewals the API server holds (standing) due before ``now`` and not yet seen,
        marked in due order as their watch events would have been before this pass (a
        renewal at the pass's own instant is seen by the next one, as an eagerly woken
        informer applies it after the pass). A node's last renewal before its kubelet stopped
        is its last mark. A due is formatted only to compare it with a Lease's ``renewTime``."""
        renewals = self._client.standing_renewals()
        granted = renewals.granted
        if self._granted < len(granted):  # every grant, even one that ended since the last pass
            self._standing.extend(e for e in granted[self._granted :] if e.key[0] == LEASE_NAMESPACE)
            self._granted = len(granted)
        if not self._standing:
            return
        bound = math.nextafter(now, -math.inf)
        fresh: list[tuple[float, str]] = []
        kept: list[StandingRenewal] = []
        marked = self._marked
        for entry in self._standing:
            due = entry.last_due(bound)
            if due is not None and marked.get(id(entry)) != due:
                marked[id(entry)] = due
                fresh.append((due, entry.key[1]))
            if entry.end is not None and entry.end < bound:
                marked.pop(id(entry), None)  # its last renewal is marked now, if it was not
            else:
                kept.append(entry)
        self._standing = kept
        fresh.sort(key=_due)
        seen, has_lease = self._renew_seen, self.has_lease
        for due, name in fresh:
            old = seen.get(name)
            if name in has_lease and (old is None or self._newer(due, old)):  # newer than any seen
                seen[name] = due
                self._probes.renewed(name)

    def _newer(self, due: float, old: str | float) -> bool:
        """Whether the renewal at ``due`` is newer than the ``renewTime`` seen, as their texts
        compare (microseconds): far apart, the floats say the same."""
        if isinstance(old, float):
            if abs(due - old) >= 1e-3:
                return due > old
            old = self._clock.timestamp(old)
        return self._clock.timestamp(due) > old
