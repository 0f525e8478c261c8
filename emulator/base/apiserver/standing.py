"""Standing Lease renewals: a kubelet's renewals every ``interval`` held by the API server as a
function of time instead of written one by one (issues 27 and 28: 100 renewals a simulated
second on 1,000 nodes were the largest cost of an autoscaler's day).

This module owns the bookkeeping; the verbs that use it are ``leases.LeaseStore``'s, the base
of ``ApiServer`` (``stand_lease``, ``end_standing``, and the reads that materialise).

A kubelet whose heartbeats would only renew its Lease (no faults, no latency, its node
status quiet) asks for a *standing renewal* at one of its beats, ``first``: from then on its
Lease is renewed at ``first``, ``first + interval``, ... (each due the previous one plus the
interval, by repeated addition, as the kubelet's own ``due += interval``), and nothing is
written. The stored Lease keeps the ``renewTime`` of its last real write until someone reads
it:

=====================  ======================================================================
what happens           what the server does
=====================  ======================================================================
get / list / watch of  the Lease is *materialised* first: one update with the ``renewTime``
a Lease (or a write)   of its last due by now (a revision, history, watch events, trace
                       line, as a renewal through the fast path), so no reader ever sees a
                       Lease whose content changed without its ``resourceVersion``
a watch of Leases by   every standing renewal is materialised and ended, the kubelets told
a watcher that is not  (``on_end``: they beat and write every renewal again), and none is
``standing_aware``     granted after: such a watcher sees every renewal, as upstream's
``end_standing``       materialised and ended (the kubelet stops, or leaves the quiet state)
=====================  ======================================================================

The node lifecycle controller (the one ``standing_aware`` watcher) takes every grant from
``StandingRenewals.granted`` and asks each for its ``last_due`` before a monitor pass, so its
probes are stamped at the pass that would have seen each renewal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

__all__ = ["StandingRenewal", "StandingRenewals"]

Key = tuple[str, str]


class StandingRenewal:
    """One Lease renewed every ``interval`` from ``first`` without writes."""

    __slots__ = ("_cur", "_next", "_prev", "end", "first", "interval", "key", "on_end", "spec")

    def __init__(self, key: Key, spec: Any, first: float, interval: float, on_end: Callable[[Any], None]) -> None:
        self.key = key
        self.spec = spec
        """The spec each renewal writes, but its ``renewTime``."""
        self.first = first
        self.interval = interval
        self.on_end = on_end
        """Called with the stored Lease when the server ends it (a watcher that is not aware)."""
        self.end: float | None = None
        """Set when the kubelet stopped (``end_standing``): no renewal after it."""
        self._prev = first
        self._cur = first
        self._next = first + interval

    def __repr__(self) -> str:
        return f"<StandingRenewal {self.key[0]}/{self.key[1]} first={self.first!r} every {self.interval!r}s>"

    def last_due(self, t: float) -> float | None:
        """The last due at or before ``t`` (None before ``first``). Dues are found by repeated
        addition from the last one asked for; asking for an earlier time restarts."""
        if self.end is not None and t > self.end:
            t = self.end
        if t < self.first:
            return None
        if t < self._cur:
            if self._prev <= t:  # one step back (a pass asking just before a read's instant)
                return self._prev
            self._prev, self._cur, self._next = self.first, self.first, self.first + self.interval
        prev, cur, nxt, step = self._prev, self._cur, self._next, self.interval
        while nxt <= t:
            prev, cur, nxt = cur, nxt, nxt + step
        self._prev, self._cur, self._next = prev, cur, nxt
        return cur


class StandingRenewals:
    """The standing renewals of a server, by Lease key, in the order they were granted."""

    def __init__(self) -> None:
        self.entries: dict[Key, StandingRenewal] = {}
        """The renewals held now."""
        self.ended: dict[Key, StandingRenewal] = {}
        """Those whose kubelet stopped (``end`` set), kept until a reader materialises them."""
        self.allowed = False
        """Granted only while True (the scenario runner's ``run`` sets it; never through
        ``serve``), and never again once a watcher that is not aware has watched Leases."""
        self.granted: list[StandingRenewal] = []
        """Every renewal granted, in order (a reader keeps a cursor: ``NodeLifecycleController``
        takes each one, even one that ended before it looked)."""

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"<StandingRenewals {len(self.entries)} allowed={self.allowed}>"


def materialise(server: Any, entry: StandingRenewal) -> None:
    """Write ``entry``'s Lease with the ``renewTime`` of its last due by now, if it is not
    that already (one renewal through ``ApiServer.renew_leases``)."""
    due = entry.last_due(server.clock.now())
    stored = server.table("Lease").get(entry.key)
    if due is None or stored is None:
        return
    text = server.clock.timestamp(due)
    if stored.spec.renew_time == text:
        return
    server.renew_leases([(stored, replace(entry.spec, renew_time=text))])


def end(server: Any, keys: list[Key], *, notify: bool) -> None:
    """Materialise and forget the standing renewals of ``keys``; ``notify``: tell each kubelet
    still renewing (``on_end`` with the stored Lease) that it must write its renewals again."""
    renewals: StandingRenewals = server.standing
    for key in keys:
        entry = renewals.entries.pop(key, None) or renewals.ended.pop(key, None)
        if entry is None:
            continue
        materialise(server, entry)
        if entry.end is None:  # no held renewal after now: its kubelet writes them again
            entry.end = server.clock.now()
            if notify:
                entry.on_end(server.table("Lease").get(key))
