"""Fields the emulator does not model: kept per object from the last HTTP write, served back.

The stored Structs hold only what scheduling and the controllers read (a container has a
name, an image, resources, ports). A manifest carries more (``env``, ``command``, probes,
``imagePullPolicy``, ``volumes``...); upstream keeps every field, so ``kubectl get -o yaml``
shows them, a second ``kubectl apply`` of the same file is ``unchanged`` and ``kubectl describe
pod`` lists the env. ``UnmodelledFields`` keeps, per object uid, the part of the JSON written
through HTTP that the stored Struct dropped, and grafts it back onto every served wire dict.

Owns: the extras of each uid, computing them (``remember``), grafting them (``merge``, and
``merge_table`` for Tables with the object, ``preview`` for a dry run), the template
propagation to controller-made children, ``wants`` (whether a stored struct needs the dict
path at all), ``generation`` (for caches of encoded objects), and the write listener that
forgets a deleted object's extras. Does not own: decoding, validation, the store,
``managedFields`` (``apply``), nor calling these at the right moments (the server's verbs do).

=============================  =================================================================
situation                      rule
=============================  =================================================================
key in written, not in stored  an extra: its written value is served where the served dict has
                               no such key (a value the emulator serves always wins)
map in both                    compared key by key, recursively
list in both, with merge key   items matched by ``patch.SCHEMAS``' merge key (containers by name,
                               ports by containerPort, env by name...), never by position, so a
                               later reordering controller write grafts nothing onto a wrong item;
                               an item the served list no longer has gets nothing
list in both, no merge key     items matched by position, only while both lists have the written
                               length (otherwise nothing is grafted)
``status``                     never an extra of a write of the main resource; a ``status``
                               subresource write replaces only the status extras and keeps the
                               spec's
server-set metadata            never an extra (uid, resourceVersion, generation, timestamps,
                               managedFields, selfLink)
a later HTTP write             replaces the object's extras (a field the user removed disappears)
in-process writes              leave extras alone; objects written only in-process have none
delete (``new is None``)       forgets the uid (``write_listener``); a deleted template owner's
                               template extras stay resolvable for its children (the last
                               ``RETIRED_OWNERS`` owners), which the garbage collector removes next
controller reference removed   the child keeps what it inherited (``freeze``), as upstream's copy
                               of the template would (``--cascade=orphan``)
=============================  =================================================================

**Templates propagate**, resolved at serve time through the controller owner reference: a Pod of
a ReplicaSet, StatefulSet, DaemonSet or Job gets the extras of its owner's ``spec.template`` in
its own ``metadata``/``spec``; a ReplicaSet of a Deployment gets the Deployment's in its
``spec.template``; a Job of a CronJob gets ``spec.jobTemplate``'s in its ``metadata``/``spec``.
Chains (Deployment → ReplicaSet → Pod, CronJob → Job → Pod) are followed through the links the
write listener records for template-owning kinds (a served Pod names its ReplicaSet, not the
Deployment). Resolved template extras are cached per owner uid; any change of extras or links
clears the cache (owners are few; a list of 10,000 pods of one template resolves it once).

Cost: an object without extras and without a templated controller costs two dict lookups and a
scan of its owner references. Grafting copies only the dicts and lists on the way to an extra;
the extra values themselves are shared between served dicts, so callers treat merged dicts as
read-only below the level they change (the server only encodes them).

Pod specs are not here: their unmodelled fields are stored in the spec itself
(``PodSpec.unmodelled``, ``emulator.base.api.unmodelled``), so that the template hashes and
comparisons cover them and a pod keeps its own template's copy. ``merge`` lifts them first;
``remember`` is given the lifted dict, so none of them becomes an extra here, and what templates
still propagate is only what lies outside their pod spec (template metadata, a CronJob's
``jobTemplate`` Job fields).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from emulator.base.api.unmodelled import has_unmodelled, lift
from emulator.base.apiserver.server import WriteRecord
from emulator.base.http.apply import SERVER_METADATA
from emulator.base.http.patch import SCHEMAS

__all__ = ["TEMPLATES", "TEMPLATE_CHILDREN", "UnmodelledFields", "write_listener"]

Path = tuple[str, ...]

TEMPLATES: Final[dict[str, Path]] = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate"),
}
"""Owner kind → where its template for children lives."""

TEMPLATE_CHILDREN: Final[dict[tuple[str, str], Path]] = {
    ("Deployment", "ReplicaSet"): ("spec", "template"),
    ("ReplicaSet", "Pod"): (),
    ("StatefulSet", "Pod"): (),
    ("DaemonSet", "Pod"): (),
    ("Job", "Pod"): (),
    ("CronJob", "Job"): (),
}
"""(owner kind, child kind) → where in the child the owner's template extras are grafted."""

_MAX_CHAIN: Final = 4
RETIRED_OWNERS: Final = 1024
"""Deleted template owners whose template extras stay resolvable for their children (the
garbage collector removes those moments later; an orphaned child froze them already)."""
_CHILD_KINDS: Final = frozenset(child for _, child in TEMPLATE_CHILDREN)


# --------------------------------------------------------------------------- the extras tree


@dataclass(slots=True)
class _List:
    """Extras inside a list present in both: per item, by merge key (or by position)."""

    key: str
    """The merge key; ``""``: by position."""
    length: int
    items: dict[Any, _Node]


@dataclass(slots=True)
class _Node:
    """Extras inside one map: whole values of absent keys, and nested maps and lists."""

    values: dict[str, Any] = field(default_factory=dict)
    maps: dict[str, _Node] = field(default_factory=dict)
    lists: dict[str, _List] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.values or self.maps or self.lists)


def _ident(value: Any) -> Any:
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return (type(value) is bool, value)


def _diff(kind: str, path: str, written: dict[str, Any], stored: dict[str, Any], skip: frozenset[str]) -> _Node:
    node = _Node()
    for key, value in written.items():
        if key in skip:
            continue
        if key not in stored:
            node.values[key] = value
            continue
        have = stored[key]
        sub = f"{path}.{key}" if path else key
        if isinstance(value, dict) and isinstance(have, dict):
            skip_sub = SERVER_METADATA if sub == "metadata" else frozenset()
            child = _diff(kind, sub, value, have, skip_sub)
            if child:
                node.maps[key] = child
        elif isinstance(value, list) and isinstance(have, list):
            items = _diff_list(kind, sub, value, have)
            if items is not None:
                node.lists[key] = items
    return node


def _diff_list(kind: str, path: str, written: list[Any], stored: list[Any]) -> _List | None:
    schema = SCHEMAS.get(kind, {}).get(path)
    key = schema.merge_key if schema is not None and schema.strategy == "merge" else ""
    sub = f"{path}.*"
    items: dict[Any, _Node] = {}
    if key:
        by_key = {_ident(item[key]): item for item in stored if isinstance(item, dict) and key in item}
        for item in written:
            if not isinstance(item, dict) or key not in item:
                continue
            ident = _ident(item[key])
            have = by_key.get(ident)
            if have is not None and (child := _diff(kind, sub, item, have, frozenset())):
                items[ident] = child
    elif len(written) == len(stored):
        for i, (item, have) in enumerate(zip(written, stored, strict=True)):
            if (
                isinstance(item, dict)
                and isinstance(have, dict)
                and (child := _diff(kind, sub, item, have, frozenset()))
            ):
                items[i] = child
    return _List(key, len(written), items) if items else None


def _graft(obj: dict[str, Any], node: _Node) -> dict[str, Any]:
    out = dict(obj)
    for key, value in node.values.items():
        if key not in out:
            out[key] = value
    for key, child in node.maps.items():
        have = out.get(key)
        if have is None:
            out[key] = _graft({}, child)
        elif isinstance(have, dict):
            out[key] = _graft(have, child)
    for key, extras in node.lists.items():
        have = out.get(key)
        if isinstance(have, list):
            out[key] = _graft_list(have, extras)
    return out


def _graft_list(items: list[Any], extras: _List) -> list[Any]:
    if not extras.key and len(items) != extras.length:
        return items
    out = list(items)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        if extras.key:
            if extras.key not in item:
                continue
            child = extras.items.get(_ident(item[extras.key]))
        else:
            child = extras.items.get(i)
        if child is not None:
            out[i] = _graft(item, child)
    return out


def _descend(node: _Node | None, path: Path) -> _Node | None:
    for step in path:
        if node is None:
            return None
        node = node.maps.get(step)
    return node


def _wrap(node: _Node, path: Path) -> _Node:
    for step in reversed(path):
        node = _Node(maps={step: node})
    return node


def _controller(refs: Iterable[Any]) -> tuple[str, str] | None:
    """(kind, uid) of the controller owner reference in wire dicts."""
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("kind", "")), str(ref.get("uid", ""))
    return None


# --------------------------------------------------------------------------- the store


class UnmodelledFields:
    """Per object uid: the parts of the last JSON written through HTTP that the stored Struct
    does not hold; merged back into what is served (see the module docstring for the rules)."""

    def __init__(self) -> None:
        self._own: dict[str, _Node] = {}
        self._status: dict[str, _Node] = {}
        self._links: dict[str, tuple[str, str]] = {}
        """Template-owning object uid → its controller (kind, uid), from the write listener."""
        self._kinds: dict[str, str] = {}
        """uid → kind, for template-owning objects with extras or links."""
        self._frozen: dict[str, tuple[_Node, ...]] = {}
        """Child uid → the inherited extras it had when its controller reference went away."""
        self._retired: OrderedDict[str, tuple[_Node | None, tuple[str, str] | None, tuple[_Node, ...]]] = OrderedDict()
        """Deleted template owner uid → (own extras, controller, frozen), the last RETIRED_OWNERS."""
        self._templates: dict[str, tuple[_Node, ...]] = {}
        self._wrapped: dict[tuple[str, Path], tuple[_Node, ...]] = {}
        self.generation = 0
        """Bumped whenever what ``merge`` returns for some object may have changed: a cache
        of encoded objects (the watch streams') keys on it."""

    def __repr__(self) -> str:
        return (
            f"<UnmodelledFields objects={len(self._own)} status={len(self._status)} "
            f"links={len(self._links)} frozen={len(self._frozen)} retired={len(self._retired)} "
            f"templates cached={len(self._templates)} generation={self.generation}>"
        )

    def remember(self, uid: str, written: dict[str, Any], stored: dict[str, Any], *, subresource: str = "") -> None:
        """Keep what ``written`` (the object as the client sent it, after patch or apply) has
        and ``stored`` (the stored Struct's wire dict) lacks. A write of the main resource
        replaces the object's non-status extras; a ``status`` write replaces its status extras."""
        kind = str(stored.get("kind", ""))
        if subresource == "status":
            w, s = written.get("status"), stored.get("status", {})
            node = _diff(kind, "status", w, s, frozenset()) if isinstance(w, dict) and isinstance(s, dict) else _Node()
            _put(self._status, uid, _wrap(node, ("status",)) if node else None)
        else:
            _put(self._own, uid, _diff(kind, "", written, stored, frozenset({"status"})) or None)
            self._frozen.pop(uid, None)  # the write started from the served object, frozen extras included
        self.generation += 1
        if kind in TEMPLATES:
            self._kinds[uid] = kind
            self._clear()
            meta = stored.get("metadata")
            refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
            self.link(uid, kind, _controller(refs) if isinstance(refs, list) else None)

    def preview(self, written: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
        """``stored`` with ``written``'s extras grafted, remembering nothing: the answer to a
        dry-run write (a new dict)."""
        node = _diff(str(stored.get("kind", "")), "", written, stored, frozenset({"status"}))
        return _graft(stored, node) if node else stored

    def merge(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The served wire dict plus its remembered and inherited extras (a new dict; ``obj`` is
        not modified); ``obj`` itself when there are none."""
        obj = lift(obj)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            return obj
        uid = meta.get("uid", "")
        out = obj
        own = self._own.get(uid)
        if own is not None:
            out = _graft(out, own)
        status = self._status.get(uid)
        if status is not None:
            out = _graft(out, status)
        for node in self._frozen.get(uid, ()):
            out = _graft(out, node)
        refs = meta.get("ownerReferences")
        if refs:
            owner = _controller(refs)
            if owner is not None:
                at = TEMPLATE_CHILDREN.get((owner[0], str(obj.get("kind", ""))))
                if at is not None:
                    for node in self._inherited(owner[0], owner[1], at):
                        out = _graft(out, node)
        return out

    def merge_table(self, table: dict[str, Any]) -> dict[str, Any]:
        """A ``meta.k8s.io/v1`` Table built with ``includeObject=Object``: each row's object
        merged in place (the table is the caller's fresh dict); returns ``table``."""
        for row in table.get("rows", ()):
            obj = row.get("object")
            if isinstance(obj, dict):
                row["object"] = self.merge(obj)
        return table

    def forget(self, uid: str) -> None:
        """Drop the uid's extras and links (the object was deleted)."""
        own, link, frozen = self._own.pop(uid, None), self._links.pop(uid, None), self._frozen.pop(uid, ())
        found = self._status.pop(uid, None) is not None
        if self._kinds.pop(uid, None) is not None and (own is not None or link is not None or frozen):
            self._retired[uid] = (own, link, frozen)
            if len(self._retired) > RETIRED_OWNERS:
                self._retired.popitem(last=False)
        if found or own is not None or link is not None or frozen:
            self._clear()

    def freeze(self, uid: str, kind: str, controller: tuple[str, str]) -> None:
        """A child's controller reference to ``controller`` went away (orphaned, adopted
        elsewhere): it keeps the template extras it inherited, as upstream's copy would."""
        at = TEMPLATE_CHILDREN.get((controller[0], kind))
        nodes = self._inherited(controller[0], controller[1], at) if at is not None else ()
        if nodes:
            self._frozen[uid] = nodes
            self._clear()

    def link(self, uid: str, kind: str, controller: tuple[str, str] | None) -> None:
        """Record (or clear) the controller of a template-owning object, for template chains."""
        if kind not in TEMPLATES:
            return
        if controller is None or controller[0] not in TEMPLATES:
            if self._links.pop(uid, None) is not None:
                self._clear()
            return
        if self._links.get(uid) != controller or self._kinds.get(uid) != kind:
            self._links[uid] = controller
            self._kinds[uid] = kind
            self._clear()

    def _clear(self) -> None:
        self.generation += 1
        self._templates.clear()
        self._wrapped.clear()

    def has(self, uid: str) -> bool:
        """Whether the uid has extras of its own (inherited ones aside)."""
        return uid in self._own or uid in self._status

    def wants(self, obj: Any) -> bool:
        """Whether ``merge`` would add anything to the stored struct ``obj``'s wire dict: the
        check a fast encoder makes before taking the dict path (a dict lookup and a scan of the
        owner references when there is nothing)."""
        if has_unmodelled(obj):
            return True
        meta = obj.metadata
        if meta.uid in self._own or meta.uid in self._status or meta.uid in self._frozen:
            return True
        for ref in meta.owner_references:
            if ref.controller:
                at = TEMPLATE_CHILDREN.get((ref.kind, obj.kind))
                return at is not None and bool(self._template(ref.kind, ref.uid, 0))
        return False

    def _inherited(self, kind: str, uid: str, at: Path) -> tuple[_Node, ...]:
        """Owner ``uid``'s template extras wrapped to graft at ``at`` of a child, cached."""
        key = (uid, at)
        cached = self._wrapped.get(key)
        if cached is None:
            cached = self._wrapped[key] = tuple(_wrap(node, at) for node in self._template(kind, uid, 0))
        return cached

    def _template(self, kind: str, uid: str, depth: int) -> tuple[_Node, ...]:
        """The extras of owner ``uid``'s template (own first, then inherited), cached."""
        cached = self._templates.get(uid)
        if cached is not None:
            return cached
        path = TEMPLATES.get(kind, ())
        own_extras, parent, frozen = self._own.get(uid), self._links.get(uid), self._frozen.get(uid, ())
        if own_extras is None and parent is None and not frozen and uid in self._retired:
            own_extras, parent, frozen = self._retired[uid]
        nodes: list[_Node] = []
        for node in (own_extras, *frozen):
            if (found := _descend(node, path)) is not None and found:
                nodes.append(found)
        if parent is not None and depth < _MAX_CHAIN:
            at = TEMPLATE_CHILDREN.get((parent[0], kind))
            if at is not None and path[: len(at)] == at:
                for node in self._template(parent[0], parent[1], depth + 1):
                    inherited = _descend(node, path[len(at) :])
                    if inherited:
                        nodes.append(inherited)
        result = tuple(nodes)
        self._templates[uid] = result
        return result


def _put(table: dict[str, _Node], uid: str, node: _Node | None) -> None:
    if node is None:
        table.pop(uid, None)
    else:
        table[uid] = node


def write_listener(extras: UnmodelledFields) -> Callable[[WriteRecord], None]:
    """An ``ApiServer.add_write_listener`` callback: forgets a deleted object's extras and
    records the controller of template-owning objects (ReplicaSets of Deployments, Jobs of
    CronJobs) for template chains."""

    def on_write(record: WriteRecord) -> None:
        if record.new is None:
            if record.verb == "delete":
                extras.forget(record.old.metadata.uid)
            return
        if record.kind in _CHILD_KINDS and record.old is not None:
            before = record.old.metadata.owner_references
            if before is not record.new.metadata.owner_references:
                was = _struct_controller(before)
                if was is not None and was != _struct_controller(record.new.metadata.owner_references):
                    extras.freeze(record.new.metadata.uid, record.kind, was)
        if record.kind in TEMPLATES:
            meta = record.new.metadata
            extras.link(meta.uid, record.kind, _struct_controller(meta.owner_references))

    return on_write


def _struct_controller(refs: Iterable[Any]) -> tuple[str, str] | None:
    """(kind, uid) of the controller owner reference among ``OwnerReference`` structs."""
    return next(((r.kind, r.uid) for r in refs if r.controller), None)
