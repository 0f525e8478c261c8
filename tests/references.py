"""Test oracles: the plain versions of production fast paths, written the obvious way, that
the differential tests compare those fast paths with. Nothing in ``emulator`` or ``agents``
uses them; they live here so that production modules hold only what runs.

- ``new_uid``: a UID as ``uuid.UUID(int=rng.getrandbits(128), version=4)`` makes it
  (``emulator.base.apiserver.uids.fast_uid``; ``tests/apiserver/test_uids.py``).
- ``trace_line``: one trace line as a dict, key by key as ``emulator.app.scenario.event_trace``'s
  docstring defines them (``fast_trace_line``; ``tests/scenario/test_trace_buffer.py``).
- ``candidates_reference``: the watchers ``WatchHub.publish`` offers a write, found by filtering
  every watcher (no indexes, no pins); ``routed_candidates``: the same found as ``publish``
  finds them, from the hub's ``_routes`` (its routing steps as a function of their own, so the
  tests can compare the tables ``publish`` reads with the plain answer);
  ``publish_reference``: ``WatchHub.publish`` through ``candidates_reference`` and
  ``transition`` for every watcher (no shared event)
  (``tests/apiserver/test_watch_fastpath.py``, ``test_watch_pinned.py``,
  ``test_watch_shared_events.py``). They read the hub's private state on purpose.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from emulator.base.apiserver.server import WriteRecord
from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import METADATA_NAME, NODE_NAME, Watcher, field_getter, transition

__all__ = ["candidates_reference", "new_uid", "publish_reference", "routed_candidates", "trace_line"]


def new_uid(rng: random.Random) -> str:
    """A UUID4 string (as Kubernetes assigns to metadata.uid) made from ``rng``'s bits."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _field(obj: Any, key: str) -> str | None:
    """``object_fields(obj).get(key)`` without building the mapping."""
    get = field_getter(obj.kind, key)
    return None if get is None else get(obj)


def candidates_reference(hub: WatchHub, kind: str, old: Any, new: Any) -> list[Watcher]:
    """The watchers ``WatchHub.publish`` offers a write, in its order. It filters every
    unindexed watcher by its pinned field instead of looking the pins up."""
    out = []
    for w in hub.watchers():
        if w.kind != kind or hub._index_key(w) is not None:
            continue
        pin = hub._pin_key(w)
        if pin is None or any(obj is not None and _field(obj, pin[1]) == pin[2] for obj in (old, new)):
            out.append(w)
    if not hub._indexed:
        return out
    seen: set[tuple[str, str, str]] = set()
    for obj in (old, new):
        if obj is None:
            continue
        keys = [(kind, METADATA_NAME, obj.metadata.name)]
        if kind == "Pod":
            keys.append((kind, NODE_NAME, obj.spec.node_name))
        for key in keys:
            if key not in seen:
                seen.add(key)
                group = hub._indexed.get(key)
                if group:
                    out.extend(group.values())
    return out


def _name(obj: Any) -> str:
    return str(obj.metadata.name)


def _node(obj: Any) -> str:
    return str(obj.spec.node_name)


def routed_candidates(hub: WatchHub, kind: str, old: Any, new: Any) -> list[Watcher]:
    """The watchers a write may concern, found from ``hub._routes`` as ``WatchHub.publish``
    finds them: the unindexed ones of ``kind`` (the pinned ones among them in watcher order),
    then those indexed under ``old``'s name and node, then under ``new``'s (each group once)."""
    route = hub._routes.get(kind)
    if route is None:
        return []
    plain, pins, names, nodes = route
    if pins is not None:
        pinned: list[Watcher] = []
        for get, groups in pins:
            was = None if old is None else get(old)
            now = None if new is None else get(new)
            for value in (was, now if now != was else None):
                if value is not None and value in groups:
                    pinned += groups[value][0]
        if pinned:
            plain = sorted(plain + pinned, key=lambda w: w.id)
    out = list(plain)
    for index, read in ((names, _name), (nodes, _node)):
        if index is None:
            continue
        was = None if old is None else read(old)
        if was is not None:
            out += index.get(was, [])
    for index, read in ((names, _name), (nodes, _node)):
        if index is None or new is None:
            continue
        now = read(new)
        if old is None or now != read(old):
            out += index.get(now, [])
    return out


def publish_reference(hub: WatchHub, kind: str, old: Any, new: Any, revision: int, time: float) -> None:
    """``WatchHub.publish`` through ``candidates_reference`` and ``transition`` for every
    watcher (no shared event)."""
    for w in candidates_reference(hub, kind, old, new):
        ev = transition(w, old, new, revision, time)
        if ev is not None:
            w.channel.put(ev)
            if w.channel.closed:
                hub.remove(w)


def _scheduled_condition(pod: Any) -> Any:
    if pod is None:
        return None
    return next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)


def trace_line(rec: WriteRecord) -> dict[str, Any]:
    """The trace entry of one write (``emulator.app.scenario.event_trace``'s docstring gives the keys)."""
    obj = rec.obj
    meta = obj.metadata
    line: dict[str, Any] = {
        "rv": rec.revision,
        "t": round(rec.time, 6),
        "verb": rec.verb,
        "kind": rec.kind,
        "ns": meta.namespace,
        "name": meta.name,
    }
    if rec.kind == "Pod" and rec.new is not None:
        old, new = rec.old, rec.new
        if new.spec.node_name and (old is None or old.spec.node_name != new.spec.node_name):
            line["nodeName"] = new.spec.node_name
        if old is None or old.status.phase != new.status.phase:
            line["phase"] = new.status.phase
        reason, message = new.status.reason, new.status.message
        changed = old is None or old.status.reason != reason or old.status.message != message
        cond_new, cond_old = _scheduled_condition(new), _scheduled_condition(old)
        if (
            cond_new is not None
            and (cond_new.reason or cond_new.message)
            and (
                cond_old is None
                or (cond_old.status, cond_old.reason, cond_old.message)
                != (cond_new.status, cond_new.reason, cond_new.message)
            )
        ):
            reason, message, changed = cond_new.reason, cond_new.message, True
        if changed and (reason or message):
            line["reason"] = reason
            line["message"] = message
    if rec.agent:
        line["agent"] = rec.agent
    return line
