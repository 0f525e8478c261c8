"""PATCH bodies: strategic merge, JSON merge (RFC 7386) and JSON patch (RFC 6902), over wire dicts.

Owns: ``apply_patch`` (the three ``PATCH`` content types upstream's apiserver accepts besides
server-side apply), re-exporting the merge-key table (``SCHEMAS``: kind → JSON path → list/map
strategy, kept in ``patchschema``, which ``apply`` reads too). Does not own: decoding the result
into a struct, validation, admission or the store (the server does that, so a patch that
produces an invalid object is the caller's 422), nor server-side apply (``apply``).

Strategic merge follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` as the apiserver runs
it (``MergeParallelList`` and ``IgnoreUnmatchedNulls`` on):

=================================  ===============================================================
patch element                      effect
=================================  ===============================================================
``key: null``                      removes ``key``
map under a map                    merged recursively (replaced when the field's strategy is replace)
list, strategy ``merge``, maps     items merged by the patch merge key; new items first (upstream's
                                   order: patch items, then server-only items by their live order)
list, strategy ``merge``, scalars  union, deduplicated
other lists                        replaced (atomic)
``$patch: replace`` in a map       the map replaces the live one
``$patch: delete`` in a map        the map becomes ``{}``; in a list item: that item is removed
``$patch: replace`` in a list      the list (without the marker) replaces the live one
``$setElementOrder/<list>``        the merged list takes that order (server-only items interleave)
``$deleteFromPrimitiveList/<l>``   those scalars are removed from the live list
``$retainKeys: [...]``             live keys missing from the list are dropped
=================================  ===============================================================

Errors are upstream's: a body that is not JSON, and the mergepatch format errors, are 400
``BadRequest``; lists of lists and ``$retainKeys`` mismatches are 422; any other merge failure
(a list item without its merge key, an unknown ``$patch``) is a 500 with upstream's message and
no reason (``MergeFailed``), as ``interpretStrategicMergePatchError`` leaves it. JSON patch operations
that do not apply (a failed ``test``, a missing path) are 422 with upstream's generic message and
the evanphx/json-patch text as the detail.

Approximated: Go's ``%v`` map printing in messages; a ``$deleteFromPrimitiveList`` for a list
the live object lacks is ignored (upstream copies it in; the typed decode then drops it).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final

from emulator.base.api.errors import BadRequest, InternalError, Invalid, UnsupportedMediaType
from emulator.base.api.mergepatch import merge_patch
from emulator.base.http.budget import spend
from emulator.base.http.jsonpatch import GO_MAP, decode_patch, go_repr, json_kind, json_patch
from emulator.base.http.patchschema import SCHEMAS, FieldSchema, field_schema
from emulator.base.http.resources import Resource

__all__ = [
    "JSON_PATCH",
    "MERGE_PATCH",
    "PATCH_TYPES",
    "SCHEMAS",
    "STRATEGIC_MERGE_PATCH",
    "FieldSchema",
    "MergeFailed",
    "apply_patch",
    "field_schema",
    "strategic_merge",
]

JSON_PATCH: Final = "application/json-patch+json"
MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"
PATCH_TYPES: Final = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)


class MergeFailed(InternalError):
    """500 with reason ``""`` (``StatusReasonUnknown``): a merge failure upstream's handler
    passes on as a plain Go error (kubectl prints ``Error from server: map: ...``)."""

    reason = ""


_UNKNOWN_FORMAT: Final = "the body of the request was in an unknown format - accepted media types include: "


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------- entry point


def apply_patch(resource: Resource, current: dict[str, Any], body: bytes, content_type: str) -> dict[str, Any]:
    """``current`` with the PATCH ``body`` applied; ``current`` itself is left unchanged."""
    if content_type == JSON_PATCH:
        return json_patch(current, decode_patch(body))
    if content_type == MERGE_PATCH:
        patch = decode_patch(body, bad="Invalid JSON Patch")
        if not isinstance(patch, dict):
            raise BadRequest("Invalid JSON Patch")
        merged: dict[str, Any] = merge_patch(current, patch)
        return merged
    if content_type == STRATEGIC_MERGE_PATCH:
        patch = decode_patch(body)
        if not isinstance(patch, dict):
            raise BadRequest(f"json: cannot unmarshal {json_kind(patch)} into {GO_MAP}")
        return strategic_merge(resource.kind, current, patch)
    accepted = ", ".join(PATCH_TYPES)
    raise UnsupportedMediaType(
        f"the body of the request was in an unknown format - accepted media types include: {accepted}"
    )


# --------------------------------------------------------------------------- strategic merge

_MARKER: Final = "$patch"
_RETAIN: Final = "$retainKeys"
_ORDER: Final = "$setElementOrder/"
_DELETE_PRIMITIVES: Final = "$deleteFromPrimitiveList/"


def strategic_merge(kind: str, original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``StrategicMergeMapPatch`` of ``patch`` onto ``original`` (neither is changed)."""
    return _merge_map(kind, "", copy.deepcopy(original), copy.deepcopy(patch))


def _merge_map(kind: str, path: str, original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    spend(1 + len(patch))
    if _MARKER in patch:
        directive = patch[_MARKER]
        if directive == "replace":
            del patch[_MARKER]
            replaced: dict[str, Any] = _clean(kind, path, patch)
            return replaced
        if directive == "delete":
            return {}
        raise MergeFailed(f"unknown patch type: {go_repr(directive)} in map: {go_repr(patch)}")
    _retain_keys(original, patch)
    _merge_ordered_lists(kind, path, original, patch)
    deletions = [k for k in patch if k.startswith(_DELETE_PRIMITIVES)]
    for key in deletions:
        values = patch.pop(key)
        name = key[len(_DELETE_PRIMITIVES) :]
        if not name:
            raise BadRequest("invalid patch format of primitive list")
        if not isinstance(values, list):
            raise BadRequest("invalid patch format of primitive list")
        live = original.get(name)
        if isinstance(live, list):
            drop = {_hashable(v) for v in values}
            original[name] = [v for v in live if _hashable(v) not in drop]
    for key, value in patch.items():
        if key.startswith("$"):
            raise BadRequest("strategic merge patch format is not supported")
        child = _join(path, key)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original:
            original[key] = _clean(kind, child, value)
            continue
        live = original[key]
        schema = field_schema(kind, child)
        if isinstance(live, dict) and isinstance(value, dict):
            original[key] = value if schema.strategy == "replace" else _merge_map(kind, child, live, value)
        elif isinstance(live, list) and isinstance(value, list):
            original[key] = _merge_list(kind, child, schema, live, value)
        else:
            original[key] = _clean(kind, child, value)
    return original


def _clean(kind: str, path: str, value: Any) -> Any:
    """A value the live object lacks: the patch with its directives applied to nothing."""
    if isinstance(value, dict):
        return _merge_map(kind, path, {}, value)
    if isinstance(value, list):
        return _merge_list(kind, path, field_schema(kind, path), [], value)
    return value


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN not in patch:
        return
    keep = patch.pop(_RETAIN)
    if not isinstance(keep, list):
        raise BadRequest("invalid patch format of retainKeys")
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_PRIMITIVES, _ORDER)):
            continue
        if key not in keep:
            raise BadRequest("invalid patch format of retainKeys")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _merge_ordered_lists(kind: str, path: str, original: dict[str, Any], patch: dict[str, Any]) -> None:
    for key in [k for k in patch if k.startswith(_ORDER)]:
        order = patch.pop(key)
        name = key[len(_ORDER) :]
        if not name or not isinstance(order, list):
            raise BadRequest("invalid patch format of setElementOrder list")
        child = _join(path, name)
        schema = field_schema(kind, child)
        live, given = original.get(name), patch.get(name)
        if given is not None and not isinstance(given, list):
            raise BadRequest("invalid patch format of setElementOrder list")
        if live is not None and not isinstance(live, list):
            raise MergeFailed(f"expected a []interface {{}}, but received a {_go_type(live)}")
        _check_order(given or [], order, schema.merge_key)
        if live is None and given is None:
            continue
        if given is None:
            merged = live or []
        elif live is None:
            merged = _clean(kind, child, given)
        else:
            merged = _merge_list(kind, child, schema, live, given)
        patch_items, server_only = _partition(merged, order, schema.merge_key)
        original[name] = _normalize(patch_items, server_only, order, live or [], schema.merge_key)
        patch.pop(name, None)


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return {str: "string", bool: "bool", float: "float64", int: "int64"}.get(type(value), "<nil>")


def _check_order(given: list[Any], order: list[Any], merge_key: str) -> None:
    """Upstream's ``validatePatchWithSetOrderList``: patch items appear in the order's order."""
    items = [v for v in given if not (isinstance(v, dict) and v.get(_MARKER) == "delete")] if merge_key else given
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and _MARKER in items[i]:
            i += 1
            continue
        if _ident(items[i], merge_key) == _ident(order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise MergeFailed(
            f"The order in patch list:\n{go_repr(given)}\n doesn't match $setElementOrder list:\n{go_repr(order)}\n"
        )


def _ident(item: Any, merge_key: str) -> Any:
    if not merge_key:
        return _hashable(item)
    if not isinstance(item, dict):
        raise MergeFailed(f"expected a map[string]interface {{}}, but received a {_go_type(item)}")
    if merge_key not in item:
        raise MergeFailed(f"map: {go_repr(item)} does not contain declared merge key: {merge_key}")
    return _hashable(item[merge_key])


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else (type(value) is bool, value)


def _merge_list(kind: str, path: str, schema: FieldSchema, live: list[Any], patch: list[Any]) -> list[Any]:
    spend(1 + len(live) + len(patch))
    if schema.strategy != "merge":
        return [_clean(kind, f"{path}.*", v) for v in patch]
    if not live and not patch:
        return live
    _element_kind(live, patch)
    if not any(isinstance(v, dict) for v in (*live, *patch)):
        merged: list[Any] = []
        seen: set[Any] = set()
        for value in (*live, *patch):
            if _hashable(value) not in seen:
                seen.add(_hashable(value))
                merged.append(value)
        patch_items, server_only = _partition(merged, patch, "")
        return _normalize(patch_items, server_only, patch, live, "")
    key = schema.merge_key
    if not key:
        raise MergeFailed("cannot merge lists without merge key for type map")
    live, plain = _special_elements(live, patch, key)
    server_order = list(live)
    first: dict[Any, int] = {}  # merge key → index of the first live item carrying it
    for index, existing in enumerate(live):
        if key in existing:
            first.setdefault(_hashable(existing[key]), index)
    for item in plain:
        ident = _ident(item, key)
        found = first.get(ident)
        if found is not None:
            live[found] = _merge_map(kind, f"{path}.*", live[found], item)
        else:
            first[ident] = len(live)
            live.append(_clean(kind, f"{path}.*", item))
    patch_items, server_only = _partition(live, plain, key)
    return _normalize(patch_items, server_only, plain, server_order, key)


def _element_kind(*lists: list[Any]) -> None:
    seen: type | None = None
    for items in lists:
        for value in items:
            if isinstance(value, list):
                raise Invalid("lists of lists are not supported")
            kind = dict if isinstance(value, dict) else type(value)
            if seen is not None and kind is not seen:
                raise MergeFailed(f"list element types are not identical: {go_repr(list(lists))}")
            seen = kind


def _special_elements(live: list[Any], patch: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    plain: list[Any] = []
    deleted: set[Any] = set()
    replace = False
    for item in patch:
        if not isinstance(item, dict) or _MARKER not in item:
            plain.append(item)
            continue
        directive = item[_MARKER]
        if directive == "delete":
            if key not in item:
                raise MergeFailed(f"map: {go_repr(item)} does not contain declared merge key: {key}")
            deleted.add(_hashable(item[key]))
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise MergeFailed("merging lists cannot yet be specified in the patch")
        else:
            raise MergeFailed(f"unknown patch type: {go_repr(directive)} in map: {go_repr(item)}")
    if replace:
        return plain, []
    if deleted:
        live = [v for v in live if not (isinstance(v, dict) and _hashable(v.get(key)) in deleted)]
    return live, plain


def _partition(merged: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    present = {_ident(v, key) for v in by if not (key and isinstance(v, dict) and key not in v)}
    inside = [v for v in merged if _ident(v, key) in present]
    outside = [v for v in merged if _ident(v, key) not in present]
    return inside, outside


def _normalize(
    patch_items: list[Any], server_only: list[Any], patch_order: list[Any], server_order: list[Any], key: str
) -> list[Any]:
    """Upstream's ``normalizeElementOrder``: each side sorted by its order, then interleaved."""

    def position(order: list[Any]) -> dict[Any, int]:
        found: dict[Any, int] = {}
        for index, value in enumerate(order):
            if not (key and (not isinstance(value, dict) or key not in value)):
                found.setdefault(_ident(value, key), index)
        return found

    in_patch, in_server = position(patch_order), position(server_order)
    left = sorted(server_only, key=lambda v: in_server.get(_ident(v, key), -1))
    right = sorted(patch_items, key=lambda v: in_patch.get(_ident(v, key), -1))
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = in_server.get(_ident(left[i], key), -1), in_server.get(_ident(right[j], key), -1)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
