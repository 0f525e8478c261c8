"""``NodeReporter``: the kubelet's writes about its node: status and Lease.

This module owns *when and how* the node's status is written and *when* its heartbeat Lease
is renewed; *what* the status says comes from ``nodestatus.py``, and *how* the Lease is
created and renewed (the object last written, the retried update, the fast path) from
``leasewriter.py``. The node's status has a single
writer task per kubelet, so the kubelet never conflicts with itself; a write that meets
a ``Conflict`` (someone else wrote the node) is redone on a fresh ``get``; any other
failed write is retried until it lands, after ``podapi.API_RETRY``'s waits.

==================  =========================================================================
write               when
==================  =========================================================================
node status         at start (``write_status``, before the kubelet is ready); after image
                    pulls (coalesced: one write for every pull finished meanwhile); on a
                    heartbeat (every ``heartbeat_interval``) only if the status changed
                    (heartbeat times aside) or ``node_status_report_frequency`` has passed
                    since the last write (refreshes ``lastHeartbeatTime``)
Lease               ``kube-node-lease/<node>``: created once (owned by the Node), then
                    ``spec.renewTime`` updated every ``heartbeat_interval``
==================  =========================================================================

Upstream's kubelet renews the Lease every 10 s (a quarter of its 40 s duration) and
posts the node status when something changed, checked every 10 s, and at least every
``nodeStatusReportFrequency`` (default 5 min); so does this one: ``tryUpdateNodeStatus``
patches when ``nodeStatusHasChanged`` (conditions sorted by type and compared without
``lastHeartbeatTime``, the rest of the status as a whole) or when
``clock.Since(lastStatusReportTime) >= nodeStatusReportFrequency``. Between two posts the
node's conditions keep their old ``lastHeartbeatTime``: node health is read from the Lease
(the node lifecycle controller's probes, as upstream's). ``node_status_report_frequency
== 0`` posts on every heartbeat. Not modelled: upstream's one-time random
``delayAfterNodeStatusChange`` added to the frequency after a real change.
``heartbeat_interval == 0`` turns both periodic writes off (large runs).

Quiet heartbeats: ``node_status`` is a pure function of the node object, the heartbeat time,
the system info (fixed) and the images (only after pulls); heartbeat times aside, the time
only enters a condition's ``lastTransitionTime`` when that condition is missing, changes
status or has no transition time, each of which is itself a change. So once a heartbeat
found no change for one node object, later heartbeats on the *same* object (the kubelet's
informer saw no write since) find none either until the report frequency is due: they skip
building and comparing the status (``_quiet``, keyed by the node object's identity; any
write to the node gives a new one).
``NodeReporter.memo = False`` turns this off (the property test compares both).

Lease renewals (100 a simulated second on 1,000 nodes) go through the client's synchronous
fast path first (``LeaseWriter.renew_now`` → ``Client.renew_lease_now`` → ``ApiServer.renew_lease``):
the same write ``LeaseWriter.renew`` would make, without its coroutine, retry wrapper and the
generic update's no-op steps; a ticked beat adds it to its ticker's ``LeaseBatch`` instead,
written with the other renewals of the instant in one pass (``LeaseWriter.renewed`` answers). When the
fast path does not apply (no Lease yet, latency or faults on the client, someone else wrote
the Lease) the batch is flushed and ``LeaseWriter.renew`` runs as before.

Timers: ``run_heartbeats`` renews the Lease at once and then every ``heartbeat_interval``.
Alone it sleeps on a timer of its own (the reference); given a ``Ticker`` (``ticker.py``,
one for all the kubelets of a run) it hands each later beat to it as ``tick``, run from the
ticker's heap at the same instant and in the same order as the sleeping task would have run
it, while the task waits without a timer. A ticked beat whose Lease write suspends (API
latency, an error's retry wait) is handed back to the task, which finishes it and goes on
by itself until the ticker can take a beat again (``Ticker.accepts``). The status loop is
woken on every beat of the reference loop; a ticked beat decides at once whether it is
quiet (the status loop idle, posting allowed, ``_quiet`` holding) and then does not wake
the status loop at all. The one difference: a node object delivered later in the same
simulated instant as a quiet ticked beat is looked at on the next beat, where the reference
might look at it in this one (whether it does depends on the order of steps within the
instant; upstream's status loop reads its node when it runs, the same race). A quiet beat
of the reference returns before ``write_status``.

Standing renewals (``ApiServer.stand_lease``, ``emulator/base/apiserver/standing.py``): a
ticked beat that finds the status quiet, on a kubelet without fault hooks whose client calls
would not suspend, asks the API server to hold its renewals from that beat on (each due by
repeated addition of the interval, as ``due += interval``) and writes none. It then needs a
beat only where its status may have to be posted: the next beat is pushed at the first due
of its grid at which the report frequency has passed (``_report_beat``), and moved earlier to
the next due when its node object changes or an image is pulled (``_rearm``: onto the ticker,
or to the heartbeat task when the ticker sleeps past it; a ticker entry due at another time
than ``_next_due`` is a stale one and does nothing). A reader of Leases ends the standing
renewal (``_standing_ended``: the kubelet writes from its next due on, and may ask again once
quiet); the heartbeat task's end ends it at that instant. The writes other than the renewals
are the same, at the same instants, in the same order (``tests/kubelet/test_standing_heartbeats.py``,
``tests/scenarios/test_standing_renewals.py``: every scenario both ways), but for one thing:
kubelets beating at the very same instant (nodes created together) may post in another order
once one of them was looked at apart, since its beat is pushed when needed rather than kept in
its place in the ticker's bucket (the writes of each instant are the same; upstream's kubelets
race there anyway). Held renewals are not counted in ``lease_writes`` or the client's calls.

Fault injection (``KubeletSettings.faults``): while ``heartbeat_enabled`` says no, neither
the Lease nor the status is written (image changes wait for the next allowed write), as
if the kubelet could not reach the API server; everything else keeps working.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from operator import attrgetter
from typing import Any, Final

from msgspec.structs import replace

from agents.kubelet.images import ImageStore
from agents.kubelet.leasewriter import LEASE_NAMESPACE, LeaseWriter
from agents.kubelet.nodestatus import node_status, system_info
from agents.kubelet.podapi import API_RETRY
from agents.kubelet.settings import KubeletSettings
from agents.kubelet.ticker import Ticker, run_inline
from emulator.base.api.core import Node, NodeCondition, NodeStatus, NodeSystemInfo
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.scheduling import Lease
from emulator.base.client.client import Client
from emulator.base.client.retry import UNLIMITED, on_error
from emulator.base.runtime.clock import Clock

__all__ = ["LEASE_NAMESPACE", "NodeReporter", "newer", "status_changed"]


def newer(a: Any, b: Any) -> Any:
    """Of two versions of one object, the one with the higher resourceVersion."""
    if a is b or b is None:  # the same object: a kubelet's own write coming back by watch
        return a
    if a is None:
        return b
    rv_a, rv_b = int(a.metadata.resource_version or 0), int(b.metadata.resource_version or 0)
    return b if rv_b > rv_a else a


_type = attrgetter("type")


def _without_heartbeats(conditions: list[NodeCondition]) -> list[NodeCondition]:
    """The conditions stably sorted by type, heartbeat times cleared (``nodeConditionsHaveChanged``)."""
    ordered = sorted(conditions, key=_type)
    return [replace(c, last_heartbeat_time=None) if c.last_heartbeat_time is not None else c for c in ordered]


def status_changed(old: NodeStatus, new: NodeStatus) -> bool:
    """Upstream ``nodeStatusHasChanged``: any difference but the conditions' heartbeat times
    (and their order: both lists are compared sorted by type)."""
    if len(old.conditions) != len(new.conditions):
        return True
    if _without_heartbeats(old.conditions) != _without_heartbeats(new.conditions):
        return True
    return replace(old, conditions=[]) != replace(new, conditions=[])


class NodeReporter:
    """Writes one node's status and renews its Lease, for the kubelet of that node."""

    memo: bool = True
    """Skip quiet heartbeats on an unchanged node object (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        node_name: str,
        settings: KubeletSettings,
        images: ImageStore,
        ids: tuple[str, str, str],
    ) -> None:
        self._client = client
        self._clock = clock
        self._name = node_name
        self._settings = settings
        self._images = images
        self._ids = ids
        self.node: Node | None = None
        """The newest version of the node seen (watch or own write)."""
        self._info: NodeSystemInfo | None = None
        self._images_dirty = False
        self._wake = asyncio.Event()
        self._leases = LeaseWriter(client, clock, node_name, settings, lambda: self.node)
        self._reported_at: float | None = None  # clock time of the last status write
        self._quiet: Node | None = None  # the node object a heartbeat last found unchanged
        self._ticker: Ticker | None = None  # while ``run_heartbeats`` hands its beats to one
        self._handback = asyncio.Event()
        self._idle = True  # the status loop is not in the middle of a write
        self._handed: tuple[float, Coroutine[Any, Any, None] | None] = (0.0, None)
        self._standing = False
        """The API server holds this node's Lease renewals (``ApiServer.stand_lease``)."""
        self._next_due = -1.0
        """The due of this reporter's live ticker entry (-1: none); an entry due at another
        time is a stale one, left behind when the beat was moved earlier (``_rearm``)."""
        self._beat_due = 0.0
        """The due of its last beat (the grid every later beat is on)."""
        self._late_due: float | None = None
        """A beat ``_rearm`` hands to the heartbeat task (the ticker sleeps past it)."""
        self.status_writes = 0
        self._status_conflicts = 0
        self._status_errors = 0

    def __repr__(self) -> str:
        return f"<NodeReporter {self._name} status_writes={self.status_writes} lease_writes={self.lease_writes}>"

    @property
    def lease_writes(self) -> int:
        return self._leases.writes

    @property
    def conflicts(self) -> int:
        """Conflicts met by the status and the Lease writes."""
        return self._status_conflicts + self._leases.conflicts

    @property
    def api_errors(self) -> int:
        """Other API errors met (and retried) by the status and the Lease writes."""
        return self._status_errors + self._leases.api_errors

    def observe(self, node: Node | None) -> None:
        """The node as the kubelet's informer sees it (``None``: deleted)."""
        self.node = None if node is None else newer(self.node, node)
        if self._standing and self.node is not self._quiet:
            self._rearm()  # the next beat looks at it, as the next of every 10 s would

    def images_changed(self) -> None:
        """An image was pulled: write ``status.images`` soon."""
        self._images_dirty = True
        self._wake.set()
        if self._standing:
            self._rearm()

    def request(self) -> None:
        """Write the status soon (a heartbeat)."""
        self._wake.set()

    def posting(self) -> bool:
        """Whether the node's status and Lease may be written now (a fault may say no)."""
        faults = self._settings.faults
        return faults is None or faults.heartbeat_enabled(self._name, self._clock.now())

    async def run_status_loop(self) -> None:
        """The single writer of the node's status; runs until cancelled."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.posting() and not self._quiet_beat():  # the skip ``write_status`` makes first
                self._idle = False
                try:
                    await self.write_status(periodic=True)
                finally:
                    self._idle = True

    def _quiet_beat(self) -> bool:
        """A heartbeat ``write_status`` would skip at once: no image change, the same node
        object a heartbeat already found unchanged, the report frequency not yet due."""
        node = self.node
        return (
            self.memo
            and not self._images_dirty
            and node is not None
            and node is self._quiet
            and not self._frequency_due()
        )

    async def run_heartbeats(self, ticker: Ticker | None = None) -> None:
        """Renew the Lease now and every interval, asking for a status post on each beat.

        With ``ticker``, each later beat is the ticker's ``tick`` as soon as the ticker can
        take it, and this task waits without a timer; a ticked beat whose Lease write had
        to wait (API latency, a retried error) comes back here and goes on from there."""
        interval = self._settings.heartbeat_interval
        due = self._clock.now()
        renewal: Coroutine[Any, Any, None] | None = None
        self._ticker = ticker
        try:
            while True:
                if renewal is not None:
                    await renewal
                elif not self._standing and self.posting() and not self._leases.renew_now():
                    await self._leases.renew()
                renewal = None
                self._beat_due = due
                due += interval
                if ticker is not None and ticker.accepts(due):
                    self._next_due = due
                    ticker.push_member(due, _BEATS, self)
                    await self._handback.wait()
                    self._handback.clear()
                    due, renewal = self._handed
                    self._handed = (0.0, None)
                    if self._late_due is not None:  # ``_rearm``: a beat the ticker could not take
                        due, renewal = self._late_due, self._late_beat(self._late_due)
                        self._late_due = None
                    continue
                await self._clock.sleep_until(due)
                self.request()
        finally:
            self._ticker = None
            self._next_due = -1.0
            if self._standing:  # no renewal after now (the server writes nothing)
                self._standing = False
                self._client.end_standing(LEASE_NAMESPACE, self._name)

    def _rearm(self) -> None:
        """A standing reporter whose next beat is far (its status was quiet) must look at its
        node or images at the next due of its grid: move its beat there (onto the ticker, or,
        where the ticker sleeps past it, into its own task)."""
        ticker = self._ticker
        if ticker is None:
            return
        now, step = self._clock.now(), self._settings.heartbeat_interval
        due = self._beat_due + step
        while due <= now:
            due += step
        if self._next_due < 0 or self._next_due <= due:
            return  # the heartbeat task has the beat, or it is due by then anyway
        if ticker.accepts(due):
            self._next_due = due
            ticker.push_member(due, _BEATS, self)
            return
        self._next_due = -1.0
        self._late_due = due
        self._handback.set()

    async def _late_beat(self, due: float) -> None:
        """A beat the ticker could not take in time, run by the heartbeat task at ``due``."""
        await self._clock.sleep_until(due)
        self._beat_due = due
        self.request()
        if not self._standing and self.posting() and not self._leases.renew_now():
            await self._leases.renew()

    def _stand(self, due: float) -> bool:
        """Ask the server to hold this node's renewals from the beat at ``due`` on."""
        lease, settings = self._leases.lease, self._settings
        if lease is None or settings.faults is not None:
            return False
        spec = self._leases.renew_spec(lease)
        if not self._client.stand_lease(lease, spec, due, settings.heartbeat_interval, self._standing_ended):
            return False
        self._standing = True
        return True

    def _standing_ended(self, lease: Lease | None) -> None:
        """The server ended this node's standing renewal (a reader of Leases): write them
        again, from the next beat."""
        self._standing = False
        self._leases.lease = lease
        self._rearm()

    def _report_beat(self, due: float) -> float:
        """The first beat of the grid from ``due`` at which the report frequency has passed."""
        last, frequency, step = (
            self._reported_at,
            self._settings.node_status_report_frequency,
            self._settings.heartbeat_interval,
        )
        if last is None:
            return due
        while due - last < frequency:
            due += step
        return due

    def tick(self, due: float) -> None:
        """A beat the ticker fires at ``due``: what one turn of ``run_heartbeats`` does,
        without a task; the next beat is pushed, unless the Lease write has to wait."""
        NodeReporter.beats(due, [self])

    @staticmethod
    def beats(due: float, reporters: list[NodeReporter]) -> None:
        """``tick(due)`` of each reporter, in order, in one pass: the ticker's group call for
        the heartbeats of one instant (1,000 kubelets beating together), with ``request``,
        ``posting``, ``_quiet_beat`` and ``LeaseWriter.renew_spec`` inlined; the next beats are pushed
        together, in order, at the end (only heartbeats push onto the ticker)."""
        again: list[NodeReporter] = []
        again_due = 0.0
        again_ticker: Ticker | None = None
        for r in reporters:
            ticker = r._ticker
            if ticker is None or due != r._next_due:  # the kubelet stopped, or a stale entry
                continue
            r._beat_due = due
            settings, clock = r._settings, r._clock
            faults = settings.faults
            posting = faults is None or faults.heartbeat_enabled(r._name, clock.now())
            node = r.node
            quiet = (  # a quiet beat (``_quiet_beat``), decided now rather than in the status loop
                posting
                and r._idle
                and r.memo
                and not r._images_dirty
                and node is not None
                and node is r._quiet
                and (last := r._reported_at) is not None
                and clock.now() - last < settings.node_status_report_frequency
            )
            if not quiet:
                r._wake.set()
            if posting and (r._standing or (quiet and r._stand(due))):
                pass  # the server holds the renewal
            elif posting:
                writer = r._leases
                lease = writer.lease
                batch = ticker.leases
                if lease is None or not batch.add(
                    r._client,
                    lease,
                    replace(
                        lease.spec,
                        holder_identity=r._name,
                        lease_duration_seconds=settings.lease_duration_seconds,
                        renew_time=clock.timestamp(),
                    ),
                    writer.renewed,
                ):
                    batch.flush()  # the renewals added before this one are written first
                    rest = run_inline(writer.renew())
                    if rest is not None:
                        r._next_due = -1.0
                        r._handed = (due, rest)
                        r._handback.set()
                        continue
            next_due = due + settings.heartbeat_interval
            if quiet and r._standing:
                next_due = r._report_beat(next_due)  # nothing to do before: no beat
            r._next_due = next_due
            if next_due != again_due or ticker is not again_ticker:
                if again_ticker is not None:
                    again_ticker.push_members(again_due, _BEATS, again)
                again, again_due, again_ticker = [], next_due, ticker
            again.append(r)
        if again_ticker is not None:
            again_ticker.push_members(again_due, _BEATS, again)

    def _transient(self, err: Exception) -> bool:
        """Retried after an ``API_RETRY`` wait (and counted): an ApiError but a Conflict
        (re-read at once); NotFound only where the caller lets it through."""
        if isinstance(err, ApiError) and not isinstance(err, Conflict):
            self._status_errors += 1
            return True
        return False

    def _frequency_due(self) -> bool:
        """``clock.Since(lastStatusReportTime) >= nodeStatusReportFrequency`` (never posted: due)."""
        last = self._reported_at
        return last is None or self._clock.now() - last >= self._settings.node_status_report_frequency

    def _report_due(self, node: Node, status: NodeStatus) -> bool:
        """Upstream's ``shouldPatchNodeStatus``: changed, or the report frequency passed."""
        return self._frequency_due() or status_changed(node.status, status)

    async def write_status(self, *, periodic: bool = False) -> bool:
        """Post the node's status (conditions, nodeInfo, addresses, images if changed);
        False if the node no longer exists. ``periodic``: a heartbeat, skipped (True) when
        nothing changed and the report frequency has not passed."""
        include_images = self._images_dirty
        self._images_dirty = False
        node = self.node

        async def attempt() -> bool:
            nonlocal node
            while True:  # a Conflict re-reads at once, without a backoff wait
                try:
                    if node is None:
                        node = await self._client.get("Node", self._name)
                    assert node is not None
                    quiet = periodic and not include_images
                    if quiet and self.memo and node is self._quiet and not self._frequency_due():
                        return True  # the same node object a heartbeat already found unchanged
                    if self._info is None:
                        self._info = system_info(node, kubelet_version=self._settings.kubelet_version, ids=self._ids)
                    status = node_status(
                        node,
                        now=self._clock.timestamp(),
                        info=self._info,
                        images=self._images.report() if include_images else None,
                    )
                    if quiet and not self._report_due(node, status):
                        self._quiet = node
                        return True
                    written = await self._client.update_status(replace(node, status=status))
                except Conflict:
                    self._status_conflicts += 1
                    node = None
                    continue
                except ApiError:  # NotFound ends the write; others are retried after a wait
                    node = None
                    raise
                self.status_writes += 1
                self._reported_at = self._clock.now()
                self._quiet = None
                self.observe(written)
                return True

        def transient(err: Exception) -> bool:
            return not isinstance(err, NotFound) and self._transient(err)

        try:
            return await on_error(API_RETRY, transient, attempt, clock=self._clock, attempts=UNLIMITED)
        except NotFound:
            self._images_dirty |= include_images
            return False


_BEATS: Final = NodeReporter.beats
"""The ticker's group of heartbeats (one function object: ``Ticker.push_member``)."""
