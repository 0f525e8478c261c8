"""``OwnerGraph``: the garbage collector's dependency graph (upstream's ``GraphBuilder``
``uidToNode`` and ``processGraphChanges``), pure and synchronous.

Owns: one ``GraphNode`` per object the collector watches (kind, name, owners, whether it is
being deleted and with which garbage-collection finalizer), the owner-uid → dependents
index, and what each observed change asks the collector to do. Does not own: reading the
live state or writing (``garbagecollector``), and the kinds watched.

Each change returns the work it makes, as ``(verb, uid)`` pairs in a deterministic order
(dependents sorted by namespace, name), ``verb`` being ``delete`` (upstream's
``attemptToDelete`` queue: check the item's owners and collect it if none is left) or
``orphan`` (``attemptToOrphan``: strip the owner from its dependents, then its ``orphan``
finalizer):

=============================  ===============================================================
change                         work
=============================  ===============================================================
added / updated with an owner  ``delete`` the object (its owner may be gone: a live read
uid not in the graph, or not   decides, as upstream does for a virtual owner node or an
the object it names, or one    owner whose identity does not match the reference)
deleting its dependents
starts being deleted with      ``orphan`` the object
``orphan``
starts being deleted with      the object's dependents, then the object, to ``delete``
``foregroundDeletion``
owner references changed       owners losing it (or its ``blockOwnerDeletion``) that wait in
                               foreground deletion, to ``delete`` (they may be unblocked)
deleted                        its dependents to ``delete``; its owners waiting in foreground
                               deletion to ``delete``
=============================  ===============================================================

Unlike upstream, an absent owner gets no virtual node: the dependents index is keyed by
owner uid whether the owner is in the graph or not, and the dependent itself is checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from emulator.base.api.meta import OwnerReference

__all__ = ["FOREGROUND", "ORPHAN", "GraphNode", "OwnerGraph", "Work"]

ORPHAN: Final = "orphan"
FOREGROUND: Final = "foregroundDeletion"

Work = tuple[Literal["delete", "orphan"], str]


@dataclass(slots=True)
class GraphNode:
    uid: str
    kind: str
    namespace: str
    name: str
    owners: tuple[OwnerReference, ...]
    deleting: bool = False
    """``deletionTimestamp`` is set."""
    deleting_dependents: bool = False
    """Being deleted with ``foregroundDeletion``: waits for its blocking dependents."""
    orphaning: bool = False
    """Being deleted with ``orphan``."""

    @property
    def sort_key(self) -> tuple[str, str, str]:
        return (self.namespace, self.name, self.kind)


def _node_of(obj: Any) -> GraphNode:
    meta = obj.metadata
    deleting = meta.deletion_timestamp is not None
    return GraphNode(
        uid=meta.uid,
        kind=obj.kind,
        namespace=meta.namespace,
        name=meta.name,
        owners=tuple(meta.owner_references),
        deleting=deleting,
        deleting_dependents=deleting and FOREGROUND in meta.finalizers,
        orphaning=deleting and ORPHAN in meta.finalizers,
    )


@dataclass(slots=True)
class OwnerGraph:
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    dependents: dict[str, dict[str, None]] = field(default_factory=dict)
    """Owner uid → the uids of the objects naming it (insertion-ordered; sorted on use)."""

    def __repr__(self) -> str:
        return f"<OwnerGraph nodes={len(self.nodes)} owners={len(self.dependents)}>"

    # --- reading --------------------------------------------------------------------------

    def dependents_of(self, uid: str) -> list[GraphNode]:
        """The observed dependents of ``uid``, by namespace, name."""
        deps = self.dependents.get(uid)
        if not deps:
            return []
        nodes = self.nodes
        return sorted((nodes[d] for d in deps if d in nodes), key=lambda n: n.sort_key)

    def has_dependents(self, uid: str) -> bool:
        deps = self.dependents.get(uid)
        return deps is not None and any(d in self.nodes for d in deps)

    def blocking_dependents(self, uid: str) -> list[GraphNode]:
        """Upstream ``blockingDependents``: dependents whose reference to ``uid`` has
        ``blockOwnerDeletion: true``."""
        return [d for d in self.dependents_of(uid) if any(r.uid == uid and r.block_owner_deletion for r in d.owners)]

    # --- changes --------------------------------------------------------------------------

    def upsert(self, obj: Any) -> list[Work]:
        """An object was added or updated."""
        new = _node_of(obj)
        old = self.nodes.get(new.uid)
        self.nodes[new.uid] = new
        work: list[Work] = []
        if old is None or old.owners != new.owners:
            old_owners = old.owners if old is not None else ()
            old_uids = {r.uid: r for r in old_owners}
            new_uids = {r.uid: r for r in new.owners}
            for r in old_owners:
                if r.uid not in new_uids:
                    self._unlink(r.uid, new.uid)
                if new_uids.get(r.uid) != r:  # gone, or its blockOwnerDeletion changed
                    owner = self.nodes.get(r.uid)
                    if owner is not None and owner.deleting_dependents:
                        work.append(("delete", r.uid))
            verify = False
            for r in new.owners:
                if r.uid not in old_uids:
                    self.dependents.setdefault(r.uid, {})[new.uid] = None
                owner = self.nodes.get(r.uid)
                if owner is None or (owner.kind, owner.name) != (r.kind, r.name):
                    verify = True  # absent, or not the object the reference names
                elif owner.namespace and owner.namespace != new.namespace:
                    verify = True  # an owner in another namespace is no owner
                elif owner.deleting_dependents and r.uid not in old_uids:
                    verify = True  # a new dependent of an owner deleting its dependents goes too
            if verify:
                work.append(("delete", new.uid))
        if new.orphaning and (old is None or not old.orphaning):
            work.append(("orphan", new.uid))
        if new.deleting_dependents and (old is None or not old.deleting_dependents):
            work.extend(("delete", d.uid) for d in self.dependents_of(new.uid))
            work.append(("delete", new.uid))
        return work

    def remove(self, obj: Any) -> list[Work]:
        """An object was deleted."""
        uid = obj.metadata.uid
        node = self.nodes.pop(uid, None)
        if node is None:
            return []
        work: list[Work] = []
        for r in node.owners:
            self._unlink(r.uid, uid)
            owner = self.nodes.get(r.uid)
            if owner is not None and owner.deleting_dependents:
                work.append(("delete", r.uid))
        work.extend(("delete", d.uid) for d in self.dependents_of(uid))
        return work

    def _unlink(self, owner: str, dependent: str) -> None:
        deps = self.dependents.get(owner)
        if deps is not None:
            deps.pop(dependent, None)
            if not deps:
                del self.dependents[owner]
