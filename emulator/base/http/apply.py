"""Server-side apply and field ownership (``metadata.managedFields``), over wire dicts.

Owns: ``FieldManagers``, the per-object record of which manager owns which fields, in
upstream's ``FieldsV1`` shape, and the apply merge (``apply``) with its conflicts
(``ApplyConflict``, 409). Does not own: decoding, validation, the store, or the merge-key table
(``patch.SCHEMAS``, read here for ``listType``/``listMapKey``).

What structured-merge-diff does, and what this module does for the served kinds:

=====================================  =========================================================
upstream                               here
=====================================  =========================================================
a manager is (name, operation,         the same key; its ``time`` moves when its write changes
apiVersion, subresource)               the object (or the entry is new)
Apply set: every leaf of the applied   the same; ``k:{...}`` for items of ``listType=map`` lists
config, every list item                (``patch.SCHEMAS``), ``v:`` for sets, atomic lists and
                                       ``structType=atomic`` maps (label selectors) are leaves
Update set: the fields a write added   leaves that changed or appeared, list items that appeared,
or changed                             and the granular maps in ``_DOTTED`` that appeared
field owned by another manager, and    ``ApplyConflict`` with one (field, message) cause each,
the applied value differs              unless ``force``, which takes the fields over
fields this manager applied before     removed from the object unless another manager owns them,
and no longer applies                  or it (or they) still own a field below
an Update takes its fields from        the same; fields a write removed leave every set
every other manager
``managedFields`` order                by operation, time, manager, apiVersion, subresource
at most ten Update entries             the same: the oldest merged into ``ancient-changes``
                                       (one per apiVersion) after every Update
=====================================  =========================================================

Approximated (documented bounds): list merge order for ``listType=map`` lists (live items in
live order, then new items in applied order); ``null`` in an applied config drops the field;
the only key-field default is ``protocol: TCP`` (ports); ``.`` markers for pointer structs are approximated by the
``_DOTTED`` field names; the record is per process (not persisted with the object).

``managedFields`` a write carries (kubectl's client-side → server-side apply migration sends them
by JSON patch) replace the record when the server passes them to ``update(managed_fields=...)``.

An apply that creates its object does not know the uid yet: ``apply(current=None)`` keeps the
applied set under (kind, namespace, name), and the server hands it over after the create with
``update(resource, None, created, manager=..., operation="Apply", time=...)``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Final

from emulator.base.api.errors import Conflict
from emulator.base.http.budget import spend
from emulator.base.http.fieldpaths import Path, decode_tree, fields_v1, key_step, path_string, remove_all, value_step
from emulator.base.http.patch import FieldSchema, field_schema
from emulator.base.http.resources import Resource

__all__ = ["SERVER_METADATA", "ApplyConflict", "FieldManagers", "fields_v1", "path_string"]

_LEAF: Final = "leaf"
_ITEM: Final = "item"
_MAP: Final = "map"

SERVER_METADATA: Final = frozenset(
    {
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
"""The ``metadata`` fields the server sets: never a manager's (nor a client's extra field)."""
_UNOWNED_META: Final = SERVER_METADATA | {"name", "namespace"}
_MAX_PENDING: Final = 1024
_DOTTED: Final = frozenset(
    {"labels", "annotations", "nodeSelector", "limits", "requests", "rollingUpdate", "capacity", "allocatable"}
)
"""Map-typed (or pointer) fields an Update records as a whole, rendered with ``.``."""
_ATOMIC_MAPS: Final = frozenset({"selector", "labelSelector", "namespaceSelector"})
"""``structType=atomic`` label selectors (a Service's ``selector`` is a plain map: see ``_is_atomic_map``)."""


class ApplyConflict(Conflict):
    """409: the applied config sets fields another manager owns, to other values."""

    def __init__(self, message: str, causes: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.causes = causes or []
        """(field path, message): ``(".spec.replicas", 'conflict with "kubectl-client-side-apply" using apps/v1')``."""


@dataclass(frozen=True, slots=True, order=True)
class _Manager:
    manager: str
    operation: str
    api_version: str
    subresource: str = ""

    def describe(self) -> str:
        """Upstream's ``printManager`` (the identity has no time, so none is printed)."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


@dataclass(slots=True)
class _Entry:
    fields: set[Path] = field(default_factory=set)
    time: str = ""


# --------------------------------------------------------------------------- paths


def _is_atomic_map(kind: str, spath: str, name: str) -> bool:
    return name in _ATOMIC_MAPS and not (kind == "Service" and spath == "spec.selector")


def _paths(resource: Resource, obj: dict[str, Any] | None, subresource: str) -> dict[Path, tuple[str, Any]]:
    """Every owned-able path of ``obj``: leaves, list items, maps; with its kind and value."""
    out: dict[Path, tuple[str, Any]] = {}
    if not obj:
        return out
    has_status = resource.subresource("status") is not None
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or value is None:
            continue
        if has_status and (key == "status") != (subresource == "status"):
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in _UNOWNED_META}
            if meta and subresource != "status":
                _walk(resource.kind, "metadata", ("f:metadata",), meta, out)
            continue
        _walk(resource.kind, key, (f"f:{key}",), value, out)
    return out


def _walk(kind: str, spath: str, fpath: Path, value: Any, out: dict[Path, tuple[str, Any]]) -> None:
    spend()
    name = spath.rsplit(".", 1)[-1]
    if isinstance(value, dict) and value and not _is_atomic_map(kind, spath, name):
        out[fpath] = (_MAP, value)
        for key, child in value.items():
            if child is not None:
                _walk(kind, f"{spath}.{key}", (*fpath, f"f:{key}"), child, out)
        return
    schema = field_schema(kind, spath)
    if isinstance(value, list) and schema.list_type == "map":
        for item in value:
            if not isinstance(item, dict):
                continue
            ipath = (*fpath, key_step(item, schema.keys))
            out[ipath] = (_ITEM, item)
            for key, child in item.items():
                if child is not None:
                    _walk(kind, f"{spath}.*.{key}", (*ipath, f"f:{key}"), child, out)
        return
    if isinstance(value, list) and schema.list_type == "set":
        for item in value:
            out[(*fpath, value_step(item))] = (_ITEM, item)
        return
    out[fpath] = (_LEAF, value)


def _apply_set(paths: dict[Path, tuple[str, Any]]) -> set[Path]:
    return {p for p, (what, _) in paths.items() if what != _MAP}


# --------------------------------------------------------------------------- merge


def _merge(kind: str, spath: str, live: Any, applied: Any) -> Any:
    spend()
    name = spath.rsplit(".", 1)[-1]
    if isinstance(live, dict) and isinstance(applied, dict) and not _is_atomic_map(kind, spath, name):
        out = dict(live)
        for key, value in applied.items():
            child = f"{spath}.{key}" if spath else key
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(kind, child, out.get(key), value)
        return out
    schema: FieldSchema = field_schema(kind, spath)
    if isinstance(live, list) and isinstance(applied, list) and schema.list_type == "map":
        if not all(isinstance(item, dict) for item in applied):
            return copy.deepcopy(applied)
        merged = list(live)
        first: dict[str, int] = {}  # key step → index of the first item with it (steps computed once)
        for index, existing in enumerate(merged):
            if isinstance(existing, dict):
                first.setdefault(key_step(existing, schema.keys), index)
        for item in applied:
            step = key_step(item, schema.keys)
            found = first.get(step)
            if found is not None:
                merged[found] = _merge(kind, f"{spath}.*", merged[found], item)
            else:
                first[step] = len(merged)
                merged.append(_merge(kind, f"{spath}.*", {}, item))
        return merged
    if isinstance(live, list) and isinstance(applied, list) and schema.list_type == "set":
        have = {value_step(v) for v in live}
        return [*live, *(v for v in applied if value_step(v) not in have)]
    if isinstance(applied, dict) and not _is_atomic_map(kind, spath, name):
        return _merge(kind, spath, {}, applied)
    return copy.deepcopy(applied)


# --------------------------------------------------------------------------- the managers


class FieldManagers:
    """Who owns which fields of each object (by uid), and server-side apply over them."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[_Manager, _Entry]] = {}
        self._pending: dict[tuple[str, str, str], tuple[_Manager, _Entry]] = {}
        self._rendered: dict[str, list[dict[str, Any]]] = {}
        """``managed_fields`` answers, kept until the object's record changes (lists read it per item)."""

    def __repr__(self) -> str:
        return f"<FieldManagers objects={len(self._objects)} pending={len(self._pending)}>"

    def apply(
        self,
        resource: Resource,
        current: dict[str, Any] | None,
        applied: dict[str, Any],
        *,
        manager: str,
        force: bool,
        time: str,
        subresource: str = "",
    ) -> dict[str, Any]:
        """The object after applying ``applied`` as ``manager``; raises ``ApplyConflict``."""
        me = _Manager(manager, "Apply", resource.group_version, subresource)
        config = dict(applied)
        config["metadata"] = {k: v for k, v in (applied.get("metadata") or {}).items() if k != "managedFields"}
        new_paths = _paths(resource, config, subresource)
        new_set = _apply_set(new_paths)
        if current is None:
            result: dict[str, Any] = _merge(resource.kind, "", {}, config)
            meta = result.get("metadata") or {}
            key = (resource.kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            self._pending.pop(key, None)
            self._pending[key] = (me, _Entry(new_set, time))
            while len(self._pending) > _MAX_PENDING:  # creates that failed after apply(); oldest first
                del self._pending[next(iter(self._pending))]
            return result
        uid = str((current.get("metadata") or {}).get("uid") or "")
        self._rendered.pop(uid, None)
        entries = self._objects.setdefault(uid, {})
        live = _paths(resource, current, subresource)
        conflicts: list[tuple[_Manager, Path]] = []
        for other, entry in entries.items():
            if other == me:
                continue
            for path in sorted(entry.fields & new_set):
                if new_paths[path][0] == _LEAF and path in live and live[path][1] != new_paths[path][1]:
                    conflicts.append((other, path))
        if conflicts and not force:
            raise _conflict_error(conflicts)
        for other, path in conflicts:
            entries[other].fields.discard(path)
        result = _merge(resource.kind, "", copy.deepcopy(current), config)
        previous = entries[me].fields if me in entries else set()
        kept = new_set.union(*(e.fields for m, e in entries.items() if m != me))
        kept_or_above = {p[:i] for p in kept for i in range(1, len(p) + 1)}
        remove_all(result, previous - kept_or_above)
        self._record(entries, me, new_set, time, touched=result != current)
        return result

    def update(
        self,
        resource: Resource,
        old: dict[str, Any] | None,
        new: dict[str, Any],
        *,
        manager: str,
        operation: str,
        time: str,
        subresource: str = "",
        managed_fields: list[dict[str, Any]] | None = None,
    ) -> None:
        """Record a non-apply write (or hand a created object its pending apply set); ``old`` is unchanged.

        ``managed_fields``: the ``metadata.managedFields`` the request carried (after its
        patch), if any. As upstream, a non-empty list that differs from the record replaces
        it first (kubectl's client-side → server-side apply migration sends one by JSON
        patch); ``[{}]`` clears it; ``[]`` or None leaves it.
        """
        meta = new.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if not uid:
            return
        self._rendered.pop(uid, None)
        if managed_fields and managed_fields != self.managed_fields(uid):
            self._objects[uid] = _decode_entries(managed_fields)
            self._rendered.pop(uid, None)
        if operation == "Apply":
            pending = self._pending.pop(
                (resource.kind, str(meta.get("namespace") or ""), str(meta.get("name") or "")), None
            )
            if pending is not None:
                self._objects.setdefault(uid, {})[pending[0]] = pending[1]
            return
        me = _Manager(manager, "Update", resource.group_version, subresource)
        before = _paths(resource, old, subresource)
        after = _paths(resource, new, subresource)
        changed = set()
        for path, (what, value) in after.items():
            if what == _MAP and path[-1][2:] not in _DOTTED:
                continue
            if path not in before or (what == _LEAF and before[path][1] != value):
                changed.add(path)
        gone = set(before) - set(after)
        entries = self._objects.setdefault(uid, {})
        for other, entry in list(entries.items()):
            if other != me and entry.fields & (changed | gone):
                entry.fields -= changed | gone
                if not entry.fields:
                    del entries[other]
        mine = entries[me].fields if me in entries else set()
        if changed or me in entries:
            self._record(entries, me, (mine - gone) | changed, time, touched=bool(changed))
        _cap_update_managers(entries)
        if not entries:
            del self._objects[uid]
        self._rendered.pop(uid, None)

    @staticmethod
    def _record(entries: dict[_Manager, _Entry], me: _Manager, fields: set[Path], time: str, *, touched: bool) -> None:
        """Set ``me``'s fields; its time moves when it changed the object (or is new)."""
        entry = entries.get(me)
        if not fields:
            entries.pop(me, None)
        elif entry is None:
            entries[me] = _Entry(fields, time)
        else:
            entry.fields = fields
            if touched:
                entry.time = time

    def managed_fields(self, uid: str) -> list[dict[str, Any]]:
        """``metadata.managedFields`` of the object ``uid``, in upstream's order."""
        cached = self._rendered.get(uid)
        if cached is not None:
            return cached
        entries = self._objects.get(uid, {})
        order = sorted(
            entries.items(), key=lambda e: (e[0].operation, e[1].time, e[0].manager, e[0].api_version, e[0].subresource)
        )
        out = []
        for who, entry in order:
            row: dict[str, Any] = {"manager": who.manager, "operation": who.operation, "apiVersion": who.api_version}
            if entry.time:
                row["time"] = entry.time
            row["fieldsType"] = "FieldsV1"
            row["fieldsV1"] = fields_v1(entry.fields)
            if who.subresource:
                row["subresource"] = who.subresource
            out.append(row)
        if out:
            self._rendered[uid] = out
        return out

    def forget(self, uid: str) -> None:
        """The object is gone: drop its record."""
        self._objects.pop(uid, None)
        self._rendered.pop(uid, None)


MAX_UPDATE_MANAGERS: Final = 10
"""Upstream's ``DefaultMaxUpdateManagers``: Update entries beyond it are merged, oldest first."""
ANCIENT_CHANGES: Final = "ancient-changes"


def _cap_update_managers(entries: dict[_Manager, _Entry]) -> None:
    """Upstream's ``capUpdateManagers``: while there are more than ten Update entries, the oldest
    (by time, then identity) are merged into one ``ancient-changes`` entry per apiVersion, which
    takes the time of the last entry merged into it. Apply entries are never merged."""
    updaters = [m for m in entries if m.operation == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: (entries[m].time, m.manager, m.api_version, m.subresource))
    first_of: dict[str, _Manager] = {}
    length = len(updaters)
    for who in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        bucket = _Manager(ANCIENT_CHANGES, "Update", who.api_version)
        first = first_of.get(who.api_version)
        if first is None:
            first_of[who.api_version] = who
            continue
        if who == bucket:
            continue
        if bucket not in entries:
            entries[bucket] = entries.pop(first)
        entry = entries.pop(who)
        entries[bucket].fields |= entry.fields
        entries[bucket].time = entry.time
        length -= 1


def _decode_entries(rows: list[dict[str, Any]]) -> dict[_Manager, _Entry]:
    entries: dict[_Manager, _Entry] = {}
    for row in rows:
        if not isinstance(row, dict) or not row.get("manager") or row.get("operation") not in ("Apply", "Update"):
            continue
        who = _Manager(
            str(row["manager"]),
            str(row["operation"]),
            str(row.get("apiVersion") or ""),
            str(row.get("subresource") or ""),
        )
        fields = decode_tree(row.get("fieldsV1") or {}, ())
        if fields:
            entries[who] = _Entry(fields, str(row.get("time") or ""))
    return entries


def _conflict_error(conflicts: list[tuple[_Manager, Path]]) -> ApplyConflict:
    causes = [(path_string(path), f"conflict with {who.describe()}") for who, path in conflicts]
    if len(conflicts) == 1:
        who, path = conflicts[0]
        return ApplyConflict(
            f"Apply failed with 1 conflict: conflict with {who.describe()}: {path_string(path)}", causes
        )
    lines: list[str] = []
    for who in sorted({w for w, _ in conflicts}):
        lines.append(f"conflicts with {who.describe()}:")
        lines.extend(f"- {path_string(p)}" for w, p in conflicts if w == who)
    return ApplyConflict(f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines), causes)
