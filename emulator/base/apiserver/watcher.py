"""A watch stream and what it sees: ``Watcher`` (one stream's kind, namespace, field and label
selector, and its bounded ``Channel`` of events), ``WatchEvent``, the selectable fields of an
object (``field_getter``, ``object_fields``) and ``transition``, the event one watcher sees for
one write.

A ``Watcher`` selects a kind, an optional namespace, label selector and field selector (any
of the kind's selectable fields: ``field_getter``). ``Watcher.matches`` reads the selected
fields straight from the object, through getters resolved once per watcher (``field_reader``),
instead of building ``object_fields``; ``Watcher.matches_reference`` is its plain version (and
its path for an object of another kind). A watcher's flags (``unfiltered``, ``namespace_only``,
``node_only``, ``field_only``) tell the hub's fast paths what ``matches`` would answer without
asking it.

Selector transitions follow Kubernetes (``transition``): an object that starts matching is
delivered as ADDED, one that stops matching as DELETED (its previous content stamped with the
write's revision), one that matches before and after as MODIFIED.

This module does not route writes to watchers, share events or settle channels: that is the
hub's (``emulator.base.apiserver.watch``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, Final, Literal

import msgspec
from msgspec.structs import replace

from emulator.base.apiserver.registry import selectable_fields
from emulator.base.runtime.channel import Channel

__all__ = [
    "METADATA_NAME",
    "NODE_NAME",
    "EventType",
    "WatchEvent",
    "Watcher",
    "field_getter",
    "field_reader",
    "object_fields",
    "transition",
]

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]
NODE_NAME: Final = "spec.nodeName"
METADATA_NAME: Final = "metadata.name"


class WatchEvent(msgspec.Struct, frozen=True, gc=False):
    """One watch event: ``object`` is the object after the write (the last state for DELETED)."""

    type: EventType
    object: Any
    revision: int
    time: float = 0.0
    """Simulated time of the write (the client adds its delivery delay to it)."""


_FIELDS: Final[dict[str, Callable[[Any], str]]] = {
    METADATA_NAME: attrgetter("metadata.name"),
    "metadata.namespace": attrgetter("metadata.namespace"),
}
"""The selectable fields of every kind, as upstream's field selectors see them; each kind's
others are its strategy's ``fields`` (``emulator.base.apiserver.registry``, upstream's ``GetAttrs``)."""


def field_getter(kind: str, key: str) -> Callable[[Any], str] | None:
    """How to read the selectable field ``key`` of a ``kind`` object; None: not selectable."""
    get = _FIELDS.get(key)
    if get is None:
        get = selectable_fields(kind).get(key)
    return get


def object_fields(obj: Any) -> dict[str, str]:
    """The selectable fields of an object, as upstream's field selectors see them."""
    fields = {key: get(obj) for key, get in _FIELDS.items()}
    fields.update((key, get(obj)) for key, get in selectable_fields(obj.kind).items())
    return fields


def _no_such_field(obj: Any) -> None:
    return None


def field_reader(kind: str, key: str) -> Callable[[Any], str | None]:
    """How to read ``key`` from an object of ``kind``, resolved once (``_no_such_field`` if not selectable)."""
    get = field_getter(kind, key)
    return _no_such_field if get is None else get


_ids = itertools.count(1)


class Watcher:
    """One watch stream; ``matches`` decides whether an object is in its view."""

    __slots__ = (
        "_getters",
        "allow_bookmarks",
        "channel",
        "field_only",
        "fields",
        "id",
        "kind",
        "label_match",
        "lazy_bookmarks",
        "name",
        "namespace",
        "namespace_only",
        "node_only",
        "predicate",
        "unfiltered",
    )

    def __init__(
        self,
        kind: str,
        *,
        name: str,
        namespace: str | None,
        fields: Mapping[str, str],
        label_match: Callable[[Mapping[str, str]], bool] | None,
        maxsize: int,
        allow_bookmarks: bool,
        predicate: Callable[[Any], bool] | None = None,
        lazy_bookmarks: bool = False,
    ) -> None:
        self.id = next(_ids)
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.fields = dict(fields)
        self.label_match = label_match
        self.allow_bookmarks = allow_bookmarks
        self.lazy_bookmarks = lazy_bookmarks
        """Its BOOKMARKs go in lazily (``Channel.put_lazy``): an in-process informer, which
        only keeps the latest one's revision, is not woken for one (``Client.watch``)."""
        self.channel: Channel[WatchEvent] = Channel(maxsize=maxsize)
        self.predicate = predicate
        """Any further test on the whole object (the HTTP door's field selectors: ``!=``, and
        fields the hub does not index); checked last, after the label selector."""
        self.unfiltered = namespace is None and not self.fields and label_match is None and predicate is None
        """Sees every object of its kind (``matches`` is always True): see ``WatchHub.publish``."""
        self.namespace_only = namespace is not None and not self.fields and label_match is None and predicate is None
        """Sees every object of its kind in ``namespace`` (an informer of one namespace: the
        node lifecycle controller's of ``kube-node-lease``): see ``WatchHub.publish_many``."""
        self.node_only: str | None = (
            self.fields[NODE_NAME]
            if kind == "Pod"
            and namespace is None
            and label_match is None
            and predicate is None
            and len(self.fields) == 1
            and NODE_NAME in self.fields
            else None
        )
        """The node of a pod watcher that selects exactly ``spec.nodeName`` (a kubelet's):
        ``matches`` is then ``obj.spec.node_name == node_only``, which ``transition`` reads
        directly (≈ 5 events a churn pod, two ``matches`` each)."""
        self._getters = tuple((field_reader(kind, key), want) for key, want in self.fields.items())
        """(read the field from an object of ``kind``, wanted value) per selected field."""
        self.field_only: tuple[Callable[[Any], str | None], str] | None = (
            self._getters[0]
            if len(self._getters) == 1 and namespace is None and label_match is None and predicate is None
            else None
        )
        """(read the field, wanted value) of a watcher that selects exactly one field (a
        kubelet's ``spec.nodeName``, podgc's ``status.phase``): ``matches`` of an object of its
        kind is then ``read(obj) == wanted``, which ``WatchHub.publish`` reads directly."""

    def matches(self, obj: Any) -> bool:
        meta = obj.metadata
        if self.namespace is not None and meta.namespace != self.namespace:
            return False
        getters = self._getters
        if getters:
            if obj.kind != self.kind:  # never from the hub, which routes by kind
                return self.matches_reference(obj)
            for get, want in getters:
                if get(obj) != want:
                    return False
        if self.label_match is not None and not self.label_match(meta.labels):
            return False
        return self.predicate is None or self.predicate(obj)

    def matches_reference(self, obj: Any) -> bool:
        """``matches`` through ``object_fields`` (the reference for the fast path)."""
        meta = obj.metadata
        if self.namespace is not None and meta.namespace != self.namespace:
            return False
        if self.fields:
            have = object_fields(obj)
            for key, want in self.fields.items():
                if have.get(key) != want:
                    return False
        if self.label_match is not None and not self.label_match(meta.labels):
            return False
        return self.predicate is None or self.predicate(obj)

    def __repr__(self) -> str:
        sel = ",".join(f"{k}={v}" for k, v in self.fields.items())
        return f"<Watcher {self.name!r} {self.kind} fields={sel!r} {self.channel!r}>"


def transition(w: Watcher, old: Any, new: Any, revision: int, time: float) -> WatchEvent | None:
    """The event watcher ``w`` sees for a write from ``old`` to ``new`` (or None)."""
    node = w.node_only
    if node is not None:  # ``matches`` of a kubelet's watcher, read directly
        was = old is not None and old.spec.node_name == node
        now = new is not None and new.spec.node_name == node
    else:
        was = old is not None and w.matches(old)
        now = new is not None and w.matches(new)
    if was and now:
        return WatchEvent("MODIFIED", new, revision, time)
    if now:
        return WatchEvent("ADDED", new, revision, time)
    if was:
        # Leaving the view (or removed): the previous content, stamped with this revision.
        gone = old if new is None else replace(old, metadata=replace(old.metadata, resource_version=str(revision)))
        return WatchEvent("DELETED", gone, revision, time)
    return None
