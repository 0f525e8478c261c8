"""The store of the API server: objects, revision, history window, watch hub, listeners.

One global revision: every successful write increments it and stamps the written object's
``metadata.resourceVersion`` with it (``_commit``, the one place that writes). The store is
synchronous and in memory; latency and faults belong to the ``Client`` (``emulator.base.client``).
It knows no kind's rules: the verbs (``emulator.base.apiserver.server``) ask each kind's strategy
(``emulator.base.apiserver.registry``) and commit what it returns; of the strategies the store reads
only the scope (``namespaced``), which kind expires (``ttl``) and whose memo a write empties
(``invalidated_by``). Its settings and the records it hands its listeners are value types of
``records`` (``ServerSettings``, ``WriteRecord``, ``Verb``).

=============  =================================================================
what           semantics
=============  =================================================================
get / list     NotFound; list returns the revision it reflects, in (namespace, name)
               order; a field selector on ``metadata.name`` is a lookup
watch          from a revision (replays the history window; older → Gone)
(commit)       revision, table, history, watchers, then the write listeners
(unchanged)    an update whose object equals the stored one is not written (no
               revision, no watch event, no listener call): the stored object is
               returned and counted in ``unchanged``, as upstream's
               ``GuaranteedUpdate`` skips it
(expiry)       an object of the ``ttl`` kind (Event) ``eventTTL`` after its last
               write: a delete by the server, at that deadline (the run's timer,
               ``expire_events_on_time``) or by the first write past it (``eventttl``)
=============  =================================================================

The history window (``_history``, one deque for all kinds) is bounded as upstream's watch
cache bounds its per-resource window: events older than ``EVENT_FRESH_DURATION`` (75 s) are
dropped once it holds more than ``HISTORY_LOWER_BOUND`` (100), and it never holds more than
``ServerSettings.history_size``; so it grows with the write rate, not with simulated time.
Upstream resizes a ring buffer by powers of two to approximate the same rule (it may keep up
to twice the fresh window); this one trims back to exactly the fresh window once a second
(``HISTORY_TRIM_SLACK``), which keeps at least what upstream promises and less memory. The
store's tables hold live objects only (a delete removes the key); Events leave after
``eventTTL`` (``eventttl``), terminated pods by pod GC.

Every write is also handed to the write listeners (trace, invariant checker, metrics)
with its verb and the object before and after (``WriteRecord``). A batch of writes of one
kind and verb at one instant (``_commit_batch``: the Lease renewals of an instant) is handed
whole to a listener with a ``write_many(verb, kind, time, agent, writes)`` method (``writes``:
(old, new, revision) in order; ``WriteMany``), one ``WriteRecord`` at a time to the others:
each listener sees the same writes in the same order, only not interleaved with the other
listeners' calls (listeners keep state of their own and do not read the store). A *direct*
listener (the run's bookkeeping, ``add_write_listener(fn, direct=True)``) is called with the
record's fields as arguments, no ``WriteRecord`` built, before the others.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import itertools
import math
import random
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from types import FunctionType, MappingProxyType, MethodType
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.errors import Gone, NotFound, Timeout
from emulator.base.apiserver.eventttl import EventExpiry
from emulator.base.apiserver.records import (
    HISTORY_LOWER_BOUND,
    HISTORY_TRIM_SLACK,
    ServerSettings,
    Verb,
    WriteMany,
    WriteRecord,
)
from emulator.base.apiserver.registry import Strategy
from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import Watcher, WatchEvent, transition
from emulator.base.runtime.channel import settle_each
from emulator.base.runtime.clock import Clock

__all__ = ["Store"]

_NAME_CHARS: Final = "bcdfghjklmnpqrstvwxz2456789"


def _key(namespace: str, name: str) -> tuple[str, str]:
    return (namespace, name)


class Store:
    """The objects by kind, the revision, the history window and the watch hub; one
    ``Strategy`` per kind (``strategies``: the classes, made here with this store)."""

    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        settings: ServerSettings | None,
        strategies: Mapping[str, type[Strategy]],
    ) -> None:
        self.clock = clock
        self.settings = settings or ServerSettings()
        self._feature_gates: Mapping[str, bool] = MappingProxyType(dict(self.settings.feature_gates))
        self._rng = rng
        self._revision = 0
        self._strategies: dict[str, Strategy] = {k: strategies[k](self) for k in sorted(strategies)}
        self._objects: dict[str, dict[tuple[str, str], Any]] = {k: {} for k in sorted(strategies)}
        self._cluster_scoped = frozenset(k for k, s in self._strategies.items() if not s.namespaced)
        self._invalidates: dict[str, list[Callable[[], None]]] = {}
        self._read_hooks: dict[str, Callable[[str | None, str | None], None]] = {}
        """kind → called with (namespace, name or None) before a get or list of it reads the
        table (the API server's standing Lease renewals materialise there)."""
        for strategy in self._strategies.values():
            for kind in strategy.invalidated_by:
                self._invalidates.setdefault(kind, []).append(strategy.invalidate)
        expiring = [k for k, s in self._strategies.items() if s.ttl]
        assert len(expiring) <= 1, f"one kind at most expires (eventttl keeps one queue): {expiring}"
        self._ttl_kind = expiring[0] if expiring else None
        self._history: deque[tuple[str, Any, Any, int, float]] = deque(maxlen=self.settings.history_size)
        self._fresh = self.settings.event_fresh_duration
        self._hub = WatchHub()
        self._listeners: list[Callable[[WriteRecord], None]] = []
        self._calls: list[Callable[[WriteRecord], None]] = []
        """``_listeners`` as ``_commit`` calls them: an instance's bound ``__call__`` (calling
        the instance looks the method up on every call), any other callable as it is."""
        self._direct: list[Callable[[int, float, Verb, str, Any, Any, str], None]] = []
        self._direct_many: list[WriteMany] = []
        self.writes = 0
        self.unchanged: dict[tuple[str, str], int] = {}
        """(verb, kind) -> writes skipped because they changed nothing (upstream's store skips
        them too: no new revision, no watch event, the stored object as the answer)."""
        self._event_expiry = EventExpiry(self.settings.event_ttl)
        self._expiring = False
        self.agent = ""
        """Set by ``acting_as`` around the HTTP door's calls (the store is synchronous, so no
        other write can interleave) and copied into ``WriteRecord.agent``; empty otherwise."""

    @contextlib.contextmanager
    def acting_as(self, agent: str) -> Iterator[None]:
        """Within the block, writes are recorded as ``agent``'s (``WriteRecord.agent``)."""
        previous, self.agent = self.agent, agent
        try:
            yield
        finally:
            self.agent = previous

    # --- introspection ------------------------------------------------------------------

    @property
    def revision(self) -> int:
        return self._revision

    def add_write_listener(self, fn: Callable[..., None], *, direct: bool = False) -> None:
        """``direct``: ``fn(revision, time, verb, kind, old, new, agent)``, no ``WriteRecord``
        built for it, and its ``write_many`` takes the batches. The direct listeners are called
        before the others, whenever added (listeners do not read each other's state). Any other
        is called with a ``WriteRecord``: an instance through its bound ``__call__``."""
        if direct:
            many: WriteMany | None = getattr(fn, "write_many", None)
            assert many is not None, "a direct write listener takes batches whole"
            self._direct.append(fn)
            self._direct_many.append(many)
            return
        self._listeners.append(fn)
        call = next((vars(c)["__call__"] for c in type(fn).__mro__ if "__call__" in vars(c)), None)
        self._calls.append(MethodType(call, fn) if isinstance(call, FunctionType) else fn)

    def watchers(self) -> list[Watcher]:
        return self._hub.watchers()

    def __repr__(self) -> str:
        counts = " ".join(f"{k.lower()}s={len(v)}" for k, v in self._objects.items() if v)
        return f"<ApiServer rev={self._revision} {counts} watchers={len(self._hub.watchers())}>"

    # --- internals ----------------------------------------------------------------------

    def _table(self, kind: str) -> dict[tuple[str, str], Any]:
        try:
            return self._objects[kind]
        except KeyError:
            raise NotFound(f'the server could not find the requested resource (kind "{kind}")') from None

    def _commit(self, verb: Verb, kind: str, old: Any, new: Any, *, stamped: bool = False) -> Any:
        """Stamp ``new`` with the next revision, store it, publish it. Never raises.
        ``stamped``: ``new`` already carries the next revision (``create`` sets it with the
        uid and timestamps, saving two copies)."""
        self._revision += 1
        rev = self._revision
        table = self._objects[kind]
        invalidates = self._invalidates.get(kind)
        if invalidates is not None:
            for invalidate in invalidates:  # a strategy's memo reads this kind (pods: classes)
                invalidate()
        if new is not None:
            if not stamped:
                new = replace(new, metadata=replace(new.metadata, resource_version=str(rev)))
            meta = new.metadata
            table[(meta.namespace, meta.name)] = new
        else:
            meta = old.metadata
            del table[(meta.namespace, meta.name)]
            old = replace(old, metadata=replace(old.metadata, resource_version=str(rev)))
        now = self.clock.now()
        history = self._history
        history.append((kind, old, new, rev, now))
        if history[0][4] < now - self._fresh - HISTORY_TRIM_SLACK and len(history) > HISTORY_LOWER_BOUND:
            self._trim_history(now)
        hub = self._hub
        hub.publish(kind, old, new, rev, now)
        self.writes += 1
        agent = self.agent
        for direct in self._direct:
            direct(rev, now, verb, kind, old, new, agent)
        calls = self._calls
        if calls:
            rec = WriteRecord(rev, now, verb, kind, old, new, agent)
            for fn in calls:
                fn(rec)
        expiry = self._event_expiry
        if kind == self._ttl_kind and new is not None:
            expiry.written(now, rev, new.metadata.namespace, new.metadata.name)
        if not self._expiring:
            if expiry.deadline <= now:
                self._expire_events(now)
            owed = hub.owed
            if owed and not hub.settling:  # ``WatchHub.settle``, inlined
                # the write is complete: informers waiting get it in place
                hub.settling = True
                try:
                    settle_each(owed)
                finally:
                    hub.settling = False
        return new if new is not None else old

    def _commit_batch(self, verb: Verb, kind: str, pairs: list[tuple[Any, Any]]) -> list[Any]:
        """``_commit(verb, kind, old, new, stamped=True)`` for each (old, new) in order, in one
        pass: each ``new`` carries the revision it gets (the current one plus its position,
        plus one) and replaces ``old`` in the table. The same revisions, table, history
        and write records in the same order; the watchers get their events at the end, one
        ``put_many`` each (``WatchHub.publish_many``: the order of the events and of the
        wake-ups is kept). While an Event's TTL has run out (its delete would come between
        two of the writes), and for the expiring kind, it is ``_commit`` one by one."""
        if kind == self._ttl_kind or (self._event_expiry.deadline <= self.clock.now() and not self._expiring):
            return [self._commit(verb, kind, old, new, stamped=True) for old, new in pairs]
        table = self._objects[kind]
        invalidates = self._invalidates.get(kind)
        now = self.clock.now()
        history = self._history
        listeners = self._listeners
        horizon = now - self._fresh - HISTORY_TRIM_SLACK
        published: list[tuple[Any, Any, int]] = []
        for old, new in pairs:
            self._revision += 1
            rev = self._revision
            if invalidates is not None:
                for invalidate in invalidates:
                    invalidate()
            meta = new.metadata
            table[(meta.namespace, meta.name)] = new
            history.append((kind, old, new, rev, now))
            if history[0][4] < horizon and len(history) > HISTORY_LOWER_BOUND:
                self._trim_history(now)
            published.append((old, new, rev))
        self.writes += len(pairs)
        agent = self.agent
        for direct_many in self._direct_many:
            direct_many(verb, kind, now, agent, published)
        for fn in listeners:
            many: WriteMany | None = getattr(fn, "write_many", None)
            if many is not None:
                many(verb, kind, now, agent, published)
            else:
                for old, new, rev in published:
                    fn(WriteRecord(rev, now, verb, kind, old, new, agent))
        self._hub.publish_many(kind, published, now)
        if self._hub.owed:
            self._hub.settle()
        return [new for _, new in pairs]

    def _unchanged(self, verb: Verb, kind: str, current: Any) -> Any:
        """A write that changes nothing: not committed (upstream's ``GuaranteedUpdate`` does not
        write an object equal to the stored one), counted, answered with the stored object."""
        key = (verb, kind)
        self.unchanged[key] = self.unchanged.get(key, 0) + 1
        return current

    def _trim_history(self, now: float) -> None:
        """Drop the events older than the fresh duration, keeping at least the lower bound."""
        history, horizon = self._history, now - self._fresh
        n = 0  # the entries to drop, counted first (the times only grow), then dropped
        for entry in itertools.islice(history, max(0, len(history) - HISTORY_LOWER_BOUND)):
            if entry[4] >= horizon:
                break
            n += 1
        pop = history.popleft
        for _ in itertools.repeat(None, n):
            pop()

    async def expire_events_on_time(self) -> None:
        """Expire the Events at their deadlines, as etcd's lease does, also when nothing else is
        written then (with the kubelets' renewals held, ``standing``, minutes may pass without
        a write); a write at or past a deadline still expires them first. Runs until cancelled."""
        expiry, clock = self._event_expiry, self.clock
        wake = asyncio.Event()
        expiry.on_deadline = wake.set
        try:
            while True:
                deadline = expiry.deadline
                if deadline == math.inf:
                    await wake.wait()
                    wake.clear()
                    continue
                await clock.sleep_until(deadline)
                if expiry.deadline <= clock.now() and not self._expiring:
                    self._expire_events(clock.now())
        finally:
            expiry.on_deadline = None

    def _expire_events(self, now: float) -> None:
        """Delete the objects of the ``ttl`` kind (Events) whose TTL ran out (checked after every
        write: see ``eventttl``)."""
        kind = self._ttl_kind
        if kind is None:
            return
        table = self._objects[kind]
        due = self._event_expiry.due(now, lambda ns, name: table.get(_key(ns, name)))
        if not due:
            return
        self._expiring = True
        try:
            with self.acting_as(""):  # the server's own write, whoever's request ran
                for event in due:
                    self._commit("delete", kind, event, None)
        finally:
            self._expiring = False
        if self._hub.owed:
            self._hub.settle()

    def feature_gates(self) -> Mapping[str, bool]:
        """The gates set in ``ServerSettings.feature_gates`` (the others keep v1.34's defaults);
        read-only, built once: the resource strategies ask on every write."""
        return self._feature_gates

    def name_suffix(self) -> str:
        """Five random characters for ``generateName`` (the seeded rng)."""
        return "".join(self._rng.choice(_NAME_CHARS) for _ in range(5))

    def table(self, kind: str) -> Mapping[tuple[str, str], Any]:
        """The stored objects of ``kind`` by (namespace, name): a strategy's read of the store."""
        return self._objects[kind]

    # --- reads --------------------------------------------------------------------------

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        if kind not in self._cluster_scoped and not namespace:
            namespace = "default"
        hook = self._read_hooks.get(kind)
        if hook is not None:
            hook(namespace, name)
        try:
            return self._table(kind)[_key("" if kind in self._cluster_scoped else namespace, name)]
        except KeyError:
            raise NotFound.of(kind, name) from None

    def list(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
        predicate: Callable[[Any], bool] | None = None,
    ) -> tuple[list[Any], int]:
        """Matching objects in (namespace, name) order, and the revision they reflect.
        ``predicate``: any further test on the whole object (``Watcher.predicate``)."""
        hook = self._read_hooks.get(kind)
        if hook is not None:
            hook(namespace, None)
        probe = Watcher(
            kind,
            name="list",
            namespace=namespace,
            fields=fields or {},
            label_match=label_match,
            maxsize=1,
            allow_bookmarks=False,
            predicate=predicate,
        )
        table = self._table(kind)
        name = (fields or {}).get("metadata.name")
        if name is not None:  # a field selector on the name: a lookup, not a scan
            if kind in self._cluster_scoped or namespace is not None:
                key = ("", name) if kind in self._cluster_scoped else (namespace or "", name)
                keys = [key] if key in table else []
            else:
                keys = sorted(k for k in table if k[1] == name)
            items = [table[k] for k in keys]
        else:
            items = [table[k] for k in sorted(table)]
        if namespace is not None or fields or label_match is not None or predicate is not None:
            items = [o for o in items if probe.matches(o)]
        return items, self._revision

    # --- watch --------------------------------------------------------------------------

    def watch(
        self,
        kind: str,
        *,
        name: str = "watch",
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
        resource_version: int | None = None,
        allow_bookmarks: bool = False,
        buffer: int | None = None,
        predicate: Callable[[Any], bool] | None = None,
        lazy_bookmarks: bool = False,
    ) -> Watcher:
        """Open a watch. ``resource_version`` None: new events only (a convenience of this
        in-process API); 0: the current objects first as synthetic ADDED events (upstream's
        "any"); a revision: the events after it are replayed (``Gone`` if compacted,
        ``Timeout`` if it is in the future); then every new event. ``buffer`` bounds the events
        a watcher may leave undelivered; the synthetic ADDED events come on top of it, as
        upstream's cacheWatcher sends its initial events apart from its result channel."""
        self._table(kind)
        initial: list[Any] = []
        if resource_version == 0:
            initial, _ = self.list(
                kind, namespace=namespace, label_match=label_match, fields=fields, predicate=predicate
            )
        w = Watcher(
            kind,
            name=name,
            namespace=namespace,
            fields=fields or {},
            label_match=label_match,
            maxsize=(buffer or self.settings.watch_buffer) + len(initial),
            allow_bookmarks=allow_bookmarks,
            predicate=predicate,
            lazy_bookmarks=lazy_bookmarks,
        )
        if resource_version is None:
            pass  # this in-process API's convenience: new events only
        elif resource_version == 0:
            # upstream "0" (any): the current state as synthetic ADDED events, then live events.
            for obj in initial:
                w.channel.put(WatchEvent("ADDED", obj, self._revision, self.clock.now()))
        elif resource_version > self._revision:
            raise Timeout(f"Too large resource version: {resource_version}, current: {self._revision}")
        elif resource_version < self._revision:
            oldest = self._history[0][3] if self._history else self._revision + 1
            if resource_version < oldest - 1:
                raise Gone(f"too old resource version: {resource_version} ({oldest - 1})")
            for k, old, new, rev, t in self._history:
                if rev > resource_version and k == kind:
                    ev = transition(w, old, new, rev, t)
                    if ev is not None:
                        w.channel.put(ev)
        if not w.channel.closed:
            self._hub.add(w)
        return w

    def deliver_in_place(self, w: Watcher, drain: Callable[[builtins.list[WatchEvent]], bool]) -> None:
        """Hand ``w``'s waiting consumer its events by calling ``drain(batch)`` once each write
        is complete, in the writer's code, instead of waking it (``WatchHub.settle``;
        ``Channel.set_drain``: a drain that declines has the consumer woken as usual)."""
        w.channel.set_drain(drain, self._hub.owed)

    def stop_watch(self, w: Watcher) -> None:
        self._hub.remove(w)
        w.channel.close()

    def bookmark(self) -> None:
        """Send a BOOKMARK with the current revision to watchers that asked for them."""
        self._hub.bookmark(self._revision, self.clock.now())
