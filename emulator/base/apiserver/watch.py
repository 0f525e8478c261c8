"""The watch hub: routes every write to the watchers that want it (``WatchHub``).

The watchers themselves, their events and what one watcher sees of one write (``Watcher``,
``WatchEvent``, ``transition``) are ``emulator.base.apiserver.watcher``'s. Delivery never
blocks the writer: a watcher whose buffer is full is ended with ``Overflow`` (its informer
relists), as upstream's watch cache ends a slow watcher.

Routing costs O(interested watchers), not O(all watchers): pod watchers whose field
selector pins ``spec.nodeName`` (every kubelet) are indexed by that value, and watchers that
pin ``metadata.name`` (a kubelet's own Node) by the name, so a write to a pod reaches only
the kubelets of its old and new node, and a node's heartbeat only its own kubelet, plus the
unindexed watchers. Watchers whose field selector pins any other field (podgc's two
``status.phase`` pod watchers) are *pinned*: indexed by (kind, first field, value), offered a
write only when the old or the new object has that value, and then in their place among the
unindexed watchers (by watcher id), so the order of delivery is the same as if they were
offered every write.

Fast path (every write goes through it): the unindexed watchers of each kind are kept as a
list, and the indexed and pinned ones as lists per kind and value (``_by_name``, ``_by_node``,
``_pins``), all rebuilt (never mutated) when a watcher is added or removed, and gathered per
kind in ``_routes`` (the plain list, the pins, each pinned group also merged with the plain
list in watcher order, and the name and node indexes), so ``publish`` finds a write's routes
with one lookup, looks each group up by its value alone and copies nothing when no indexed
watcher is concerned; the index keys of ``old`` and ``new`` are compared directly instead of
through a set. ``publish`` is the one routing (one frame a write): the tests hold its plain
versions (``tests/references.py``: ``candidates_reference`` filters every watcher,
``routed_candidates`` reads ``_routes`` as ``publish`` does, ``publish_reference`` delivers
through ``transition`` per watcher; ``tests/apiserver/test_watch_fastpath.py``,
``test_watch_pinned.py``, ``test_watch_shared_events.py`` require the same watchers in the
same order and the same events). ``publish`` reads a watcher that selects one field
(``field_only``: the kubelets', podgc's) through its getter and asks ``Channel.put`` whether
the channel is still open; it makes one event per write for all the watchers without a
selector (``Watcher.unfiltered``: the scheduler's, the controllers') and shares it. A
one-field watcher that sees a write as MODIFIED or a removal as DELETED shares that same
event too.

Delivery in place: a watcher's channel may be given a drain (``Store.deliver_in_place``: an
in-process informer on a direct stream). Its waiting consumer is then not woken by ``put``:
the channel is appended to the hub's ``owed`` list, and the store, once the write is
complete (stored, recorded, listeners called, expired Events deleted), calls ``settle``,
which hands each owed channel's batch to its drain in the order their first event reached
them, in the writer's code. A drain that writes adds to the list the running ``settle``
goes on with; a channel whose drain is running only queues
(``emulator.base.runtime.channel``).

Events of one object are delivered in revision order (each watcher sees writes in the
order they were made).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.apiserver.watcher import METADATA_NAME, NODE_NAME, Watcher, WatchEvent, field_reader, transition
from emulator.base.runtime.channel import Channel, settle_each

__all__ = ["WatchHub"]

_NONE: Final[list[Any]] = []
"""No watchers (shared: never changed)."""


def _watcher_id(w: Watcher) -> int:
    return w.id


_Pins = list[tuple[Callable[[Any], "str | None"], dict["str | None", tuple[list["Watcher"], list["Watcher"]]]]]
"""Per pinned field of a kind: (read the field, value → (the watchers pinned to it, the kind's
unindexed watchers and them in watcher order)): ``WatchHub._routes``' second part."""


class WatchHub:
    """Keeps the live watchers and hands each write to those it concerns.

    Watchers whose field selector pins an indexed field — ``metadata.name`` for every kind,
    ``spec.nodeName`` for pods — are indexed by (kind, field, value); a write is offered only
    to the unindexed watchers of its kind and to those indexed under its old or new values.
    The other watchers with a field selector are pinned by their first field (see the module
    docstring)."""

    def __init__(self) -> None:
        self._plain: dict[str, dict[int, Watcher]] = {}
        self._plain_lists: dict[str, list[Watcher]] = {}
        """``list(self._plain[kind].values())``, replaced (never mutated) on add/remove."""
        self._indexed: dict[tuple[str, str, str], dict[int, Watcher]] = {}
        self._indexed_kinds: dict[str, int] = {}
        """kind → how many watchers are indexed (``publish_many`` takes its short path at 0)."""
        self._pinned: dict[tuple[str, str, str], dict[int, Watcher]] = {}
        self._pinned_fields: dict[str, dict[str, int]] = {}
        """kind → pinned field → how many watchers are pinned by it."""
        self._getters: dict[tuple[str, str], Callable[[Any], str | None]] = {}
        """(kind, pinned field) → how its value is read (``field_reader``, resolved once)."""
        self._by_name: dict[str, dict[str, list[Watcher]]] = {}
        self._by_node: dict[str, dict[str, list[Watcher]]] = {}
        """kind → indexed value → the watchers of ``_indexed[(kind, field, value)]`` as a list
        (``metadata.name``; ``spec.nodeName`` for pods): what ``publish`` looks up, rebuilt
        (never mutated) on add/remove."""
        self._pins: dict[str, list[tuple[Callable[[Any], str | None], dict[str | None, list[Watcher]]]]] = {}
        """kind → (read the pinned field, value → the watchers of ``_pinned[(kind, field, value)]``)
        per pinned field, in ``_pinned_fields`` order; rebuilt on add/remove."""
        self._routes: dict[
            str,
            tuple[list[Watcher], _Pins | None, dict[str, list[Watcher]] | None, dict[str, list[Watcher]] | None],
        ] = {}
        """kind → (``_plain_lists``, ``_pins`` with each group also merged into the plain list,
        ``_by_name``, ``_by_node`` of it): the routes of a write found with one lookup
        (``_reroute``, after every change of the four)."""
        self.owed: list[Channel[WatchEvent]] = []
        """Channels whose consumer is to be handed its events in place (``settle``), in the
        order their first event reached them (appended by ``Channel.put``: ``set_drain``)."""
        self.settling = False
        """A ``settle`` is running (the store's ``_commit`` settles in place when it is not)."""

    def _reroute(self, kind: str) -> None:
        """``_routes[kind]`` after a change of ``kind``'s watchers."""
        plain = self._plain_lists.get(kind, _NONE)
        pins = self._pins.get(kind)
        route = (
            plain,
            None
            if pins is None
            else [
                (get, {value: (group, sorted(plain + group, key=_watcher_id)) for value, group in groups.items()})
                for get, groups in pins
            ],
            self._by_name.get(kind),
            self._by_node.get(kind),
        )
        if route[0] or route[1] is not None or route[2] is not None or route[3] is not None:
            self._routes[kind] = route
        else:
            self._routes.pop(kind, None)

    def settle(self) -> None:
        """Hand the owed channels' consumers their events, in order, in the writer's code (the
        store calls it once a write, with its record and listeners, is complete; ``Store._commit``
        holds a written-out copy of this method: keep the two alike). A drain
        that writes only adds to the list, which this call goes on with; a channel still
        draining only queues (its drain is handed the events after)."""
        if self.settling:
            return  # a drain's own write: the settle running goes on with what it owed
        self.settling = True
        try:
            settle_each(self.owed)  # visits what is appended meanwhile too, then empties the list
        finally:
            self.settling = False

    @staticmethod
    def _index_key(w: Watcher) -> tuple[str, str, str] | None:
        if w.kind == "Pod" and NODE_NAME in w.fields:
            return (w.kind, NODE_NAME, w.fields[NODE_NAME])
        if METADATA_NAME in w.fields:
            return (w.kind, METADATA_NAME, w.fields[METADATA_NAME])
        return None

    @staticmethod
    def _pin_key(w: Watcher) -> tuple[str, str, str] | None:
        """(kind, field, value) of an unindexed watcher's first selected field, if any."""
        if not w.fields:
            return None
        field = min(w.fields)
        return (w.kind, field, w.fields[field])

    def _reindex(self, key: tuple[str, str, str]) -> None:
        """``_by_name``/``_by_node`` after a change of ``_indexed[key]``."""
        kind, field, value = key
        table = (self._by_node if field == NODE_NAME else self._by_name).setdefault(kind, {})
        group = self._indexed.get(key)
        if group:
            table[value] = list(group.values())
        else:
            table.pop(value, None)
            if not table:
                del (self._by_node if field == NODE_NAME else self._by_name)[kind]

    def _repin(self, kind: str) -> None:
        """``_pins[kind]`` after a change of ``kind``'s pinned watchers."""
        pins = []
        for field in self._pinned_fields.get(kind, {}):
            get = self._getters.get((kind, field))
            if get is None:
                get = self._getters[(kind, field)] = field_reader(kind, field)
            groups: dict[str | None, list[Watcher]] = {
                value: list(group.values())
                for (k, f, value), group in self._pinned.items()
                if k == kind and f == field and group
            }
            pins.append((get, groups))
        if pins:
            self._pins[kind] = pins
        else:
            self._pins.pop(kind, None)

    def add(self, w: Watcher) -> None:
        key = self._index_key(w)
        if key is not None:
            group = self._indexed.setdefault(key, {})
            if w.id not in group:
                group[w.id] = w
                self._indexed_kinds[w.kind] = self._indexed_kinds.get(w.kind, 0) + 1
                self._reindex(key)
                self._reroute(w.kind)
            return
        pin = self._pin_key(w)
        if pin is not None:
            self._pinned.setdefault(pin, {})[w.id] = w
            counts = self._pinned_fields.setdefault(w.kind, {})
            counts[pin[1]] = counts.get(pin[1], 0) + 1
            self._repin(w.kind)
            self._reroute(w.kind)
            return
        group = self._plain.setdefault(w.kind, {})
        group[w.id] = w
        self._plain_lists[w.kind] = list(group.values())
        self._reroute(w.kind)

    def remove(self, w: Watcher) -> None:
        key = self._index_key(w)
        if key is not None:
            if self._indexed.get(key, {}).pop(w.id, None) is not None:
                self._indexed_kinds[w.kind] -= 1
                self._reindex(key)
                self._reroute(w.kind)
            return
        pin = self._pin_key(w)
        if pin is not None:
            group = self._pinned.get(pin, {})
            if group.pop(w.id, None) is not None:
                counts = self._pinned_fields[w.kind]
                counts[pin[1]] -= 1
                if not counts[pin[1]]:
                    del counts[pin[1]]
                self._repin(w.kind)
                self._reroute(w.kind)
            return
        if w.kind in self._plain:
            group = self._plain[w.kind]
            group.pop(w.id, None)
            self._plain_lists[w.kind] = list(group.values())
            self._reroute(w.kind)

    def watchers(self) -> list[Watcher]:
        out = [w for g in self._plain.values() for w in g.values()]
        out += [w for g in self._pinned.values() for w in g.values()]
        out += [w for g in self._indexed.values() for w in g.values()]
        return sorted(out, key=_watcher_id)

    def publish(self, kind: str, old: Any, new: Any, revision: int, time: float) -> None:
        """Deliver one write: ``old`` is None for a create, ``new`` None for a removal.

        The watchers offered the write, in order: the unindexed ones of ``kind`` (the pinned
        ones concerned among them in watcher order), then those indexed under ``old``'s name
        and node, then under ``new``'s (each group once); the tests' ``candidates_reference``
        finds the same ones by filtering every watcher (``tests/references.py``). Every
        unfiltered watcher gets the same event (``transition`` for a watcher matching
        everything: MODIFIED, ADDED, or DELETED with ``old`` as it was), made once per write
        and shared (events are frozen), and so does a watcher with a field selector
        (``field_only``: a kubelet's, podgc's) that sees an update as MODIFIED or a removal
        as DELETED (the same event); it reads its one field directly where ``transition``
        would ask ``matches``. The tests' ``publish_reference`` asks ``transition`` each time."""
        route = self._routes.get(kind)
        if route is None:
            return
        # --- the watchers the write may concern (the cached lists themselves: never changed)
        plain, pins, names, nodes = route
        if pins is not None:  # the pinned watchers concerned, merged in watcher order
            pinned: list[Watcher] | None = None
            merged: list[Watcher] | None = None  # made in advance when one group is concerned
            for get, groups in pins:
                was = None if old is None else get(old)
                if was is not None:
                    hit = groups.get(was)
                    if hit is not None:
                        if pinned is None:
                            pinned, merged = hit
                        else:
                            pinned, merged = pinned + hit[0], None
                if new is not None:
                    now = get(new)
                    if now is not None and now != was:
                        hit = groups.get(now)
                        if hit is not None:
                            if pinned is None:
                                pinned, merged = hit
                            else:
                                pinned, merged = pinned + hit[0], None
            if pinned is not None:
                plain = merged if merged is not None else sorted(plain + pinned, key=_watcher_id)
        candidates = plain
        if names is not None or nodes is not None:
            extra: list[Watcher] | None = None
            old_name = old_node = None
            if old is not None:
                if names is not None:
                    old_name = old.metadata.name
                    group = names.get(old_name)
                    if group:
                        extra = group
                if nodes is not None:
                    old_node = old.spec.node_name
                    group = nodes.get(old_node)
                    if group:
                        extra = group if extra is None else extra + group
            if new is not None:
                if names is not None:
                    name = new.metadata.name
                    if old is None or name != old_name:
                        group = names.get(name)
                        if group:
                            extra = group if extra is None else extra + group
                if nodes is not None:
                    node = new.spec.node_name
                    if old is None or node != old_node:
                        group = nodes.get(node)
                        if group:
                            extra = group if extra is None else extra + group
            if extra is not None:
                candidates = plain + extra
        # --- the events
        shared: WatchEvent | None = None
        for w in candidates:
            if w.unfiltered:
                if shared is None:
                    if new is None:
                        shared = WatchEvent("DELETED", old, revision, time)
                    else:
                        shared = WatchEvent("ADDED" if old is None else "MODIFIED", new, revision, time)
                ev: WatchEvent = shared
            elif w.field_only is not None:  # ``transition`` with ``matches`` read directly
                get_field, want = w.field_only
                if new is not None and get_field(new) == want:
                    if old is not None and get_field(old) == want:  # MODIFIED: as an unfiltered watcher's
                        if shared is None:
                            shared = WatchEvent("MODIFIED", new, revision, time)
                        ev = shared
                    else:
                        ev = WatchEvent("ADDED", new, revision, time)
                elif old is not None and get_field(old) == want:
                    if new is None:  # DELETED of the object as it was: as an unfiltered watcher's
                        if shared is None:
                            shared = WatchEvent("DELETED", old, revision, time)
                        ev = shared
                    else:  # leaving the view: the previous content, stamped with this revision
                        gone = replace(old, metadata=replace(old.metadata, resource_version=str(revision)))
                        ev = WatchEvent("DELETED", gone, revision, time)
                else:
                    continue
            else:
                seen = transition(w, old, new, revision, time)
                if seen is None:
                    continue
                ev = seen
            if not w.channel.put(ev):
                self.remove(w)  # ended (overflow, or closed by its consumer)

    def publish_many(self, kind: str, writes: list[tuple[Any, Any, int]], time: float) -> None:
        """``publish`` each write (old, new, revision) of ``kind`` at ``time``, in order, with
        one ``put_many`` per watcher: each watcher gets the same events in the same order,
        and the watchers are handed theirs in the order their first event would have reached
        them (so their consumers wake in the same order). Writes that indexed or pinned
        watchers may see go through ``publish`` one by one."""
        if self._indexed_kinds.get(kind) or self._pinned_fields.get(kind):
            for old, new, revision in writes:
                self.publish(kind, old, new, revision, time)
            return
        shared: list[WatchEvent] | None = None
        handed: list[tuple[int, int, Watcher, list[WatchEvent]]] = []
        space: str | None = _one_namespace(writes)
        for position, w in enumerate(self._plain_lists.get(kind, [])):
            if w.unfiltered or (w.namespace_only and w.namespace == space):
                # every write concerns it, as a MODIFIED/ADDED/DELETED event anyone unfiltered gets
                if shared is None:
                    shared = [
                        WatchEvent("DELETED", old, revision, time)
                        if new is None
                        else WatchEvent("ADDED" if old is None else "MODIFIED", new, revision, time)
                        for old, new, revision in writes
                    ]
                if shared:
                    handed.append((0, position, w, shared))
                continue
            if w.namespace_only and space is not None:
                continue  # all the writes are in another namespace
            events: list[WatchEvent] = []
            first = -1
            for i, (old, new, revision) in enumerate(writes):
                ev = transition(w, old, new, revision, time)
                if ev is not None:
                    if first < 0:
                        first = i
                    events.append(ev)
            if events:
                handed.append((first, position, w, events))
        handed.sort(key=_first_event)
        for _, _, w, events in handed:
            w.channel.put_many(events)
            if w.channel.closed:
                self.remove(w)

    def bookmark(self, revision: int, time: float) -> None:
        ev = WatchEvent("BOOKMARK", None, revision, time)  # frozen: one for all
        for w in self.watchers():
            if w.allow_bookmarks and not w.channel.closed:
                if w.lazy_bookmarks:
                    w.channel.put_lazy(ev)
                else:
                    w.channel.put(ev)


def _one_namespace(writes: list[tuple[Any, Any, int]]) -> str | None:
    """The namespace of every object of the writes (old and new), None if there are several."""
    if len(writes) == 1:  # a renewal at an instant of its own: an update within one namespace
        old, new, _ = writes[0]
        if old is not None and new is not None:
            space: str = new.metadata.namespace
            if old.metadata.namespace == space:
                return space
    spaces = {new.metadata.namespace for _, new, _ in writes if new is not None}
    spaces.update([old.metadata.namespace for old, _, _ in writes if old is not None])
    return spaces.pop() if len(spaces) == 1 else None


def _first_event(entry: tuple[int, int, Watcher, list[WatchEvent]]) -> tuple[int, int]:
    return entry[0], entry[1]
