"""JSON patch (RFC 6902) over wire dicts, as upstream's apiserver runs it.

Owns: ``json_patch``, the decoding of every patch body (``decode_patch``: Go's JSON, so
``NaN``/``Infinity`` are 400, not null) and the Go-flavoured message helpers the patch modules
share (``go_repr``, ``json_kind``). Does not own: content types and strategic merge (``patch``),
JSON merge patch (RFC 7386: ``emulator.base.api.mergepatch``, shared with the scenario's
``update`` steps), decoding into structs or validation (the server).

Upstream (``apiserver/pkg/endpoints/handlers/patch.go`` with evanphx/json-patch v4):

==========================================  ===================================================
input                                       answer
==========================================  ===================================================
merge patch that is not JSON                400 ``Invalid JSON Patch``
``NaN``, ``Infinity``, ``-Infinity``        400, as any body that is not JSON (Go's decoder
                                            refuses them; Python's would read them)
JSON patch body that is not a list of ops   400 ``json: cannot unmarshal ... jsonpatch.Patch``
more than 10,000 operations                 413 RequestEntityTooLarge ``Request entity too large: The
                                            allowed maximum operations in a JSON patch is 10000, got N``
``copy``s adding up to more than 3 MiB      422 Invalid, detail ``Unable to complete the copy, the
(``JSONPatchMaxCopyBytes``)                 accumulated size increase of copy is N, exceeding the
                                            limit 3145728`` (checked before copying: no patch bomb)
an operation that does not apply            422 Invalid, message ``the server rejected our request
(failed ``test``, missing path, bad index)  due to an error in our request``, the evanphx text as
                                            the detail (``testing value /x failed: test failed``)
==========================================  ===================================================

Operations apply in order to a copy; a failure leaves the input unchanged. ``test`` compares
as JSON does (``true`` is not ``1``). Pointers unescape ``~1`` then ``~0``; ``-`` appends.
Approximated: the exact evanphx wording for rarer failures (undecodable ``path``/``from``).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final

from emulator.base.api.errors import BadRequest, Invalid, RequestEntityTooLarge
from emulator.base.http.budget import spend

__all__ = ["GO_MAP", "decode_patch", "go_repr", "json_kind", "json_patch"]

GO_MAP: Final = "Go value of type map[string]interface {}"
_REJECTED: Final = "the server rejected our request due to an error in our request"
MAX_OPERATIONS: Final = 10_000  # upstream's maxJSONPatchOperations (endpoints/handlers/patch.go)
MAX_COPY_BYTES: Final = 3 * 1024 * 1024  # upstream's JSONPatchMaxCopyBytes (server/config.go)


def json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return "number"


def go_repr(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (``map[name:c]``, ``[a b]``), for upstream's messages."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_repr(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_repr(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --------------------------------------------------------------------------- JSON patch (RFC 6902)


class _PatchFailed(Exception):
    """An operation that does not apply: upstream's 422 (the evanphx/json-patch message)."""


def json_patch(document: dict[str, Any], operations: Any) -> dict[str, Any]:
    """RFC 6902 ``operations`` applied in order to a copy of ``document``; all or nothing."""
    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        what = json_kind(operations) if not isinstance(operations, dict) else "object"
        raise BadRequest(f"json: cannot unmarshal {what} into Go value of type jsonpatch.Patch")
    if len(operations) > MAX_OPERATIONS:
        raise RequestEntityTooLarge(
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_OPERATIONS}, got {len(operations)}"
        )
    doc: Any = copy.deepcopy(document)
    copied = [0]  # bytes the ``copy`` operations added so far (evanphx's accumulatedCopySize)
    try:
        for op in operations:
            spend()
            doc = _operation(doc, op, copied)
    except _PatchFailed as exc:
        raise Invalid(_REJECTED, detail=str(exc)) from exc
    if not isinstance(doc, dict):
        raise Invalid(_REJECTED, detail=f"json: cannot unmarshal {json_kind(doc)} into {GO_MAP}")
    return doc


def _operation(doc: Any, op: dict[str, Any], copied: list[int]) -> Any:
    kind = op.get("op")
    if kind not in ("add", "remove", "replace", "move", "copy", "test"):
        raise _PatchFailed(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    path = op.get("path")
    if not isinstance(path, str):
        raise _PatchFailed(f"{kind} operation failed to decode path: missing value")
    if kind in ("add", "replace", "test") and "value" not in op:
        raise _PatchFailed(f"{kind} operation failed to decode value: missing value")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op["value"]))
    if kind == "remove":
        return _remove(doc, path, "remove")[0]
    if kind == "replace":
        parent, last = _parent(doc, path, f"replace operation does not apply: doc is missing path: {path}")
        if parent is None:
            return copy.deepcopy(op["value"])
        _get(parent, last, f"replace operation does not apply: doc is missing key: {path}")
        _set(parent, last, copy.deepcopy(op["value"]))
        return doc
    if kind == "test":
        if _lookup(doc, path, f"test operation does not apply: is missing path: {path}") != op[
            "value"
        ] or not _same_types(_lookup(doc, path, ""), op["value"]):
            raise _PatchFailed(f"testing value {path} failed: test failed")
        return doc
    source = op.get("from")
    if not isinstance(source, str):
        raise _PatchFailed(f"{kind} operation failed to decode from: missing value")
    if kind == "move":
        if path.startswith(source + "/"):
            raise _PatchFailed(f"move operation does not apply: cannot move {source} into its own child {path}")
        doc, value = _remove(doc, source, "move")
        return _add(doc, path, value)
    value = _lookup(doc, source, f"copy operation does not apply: doc is missing from path: {source}")
    size = _encoded_size(value, MAX_COPY_BYTES - copied[0])
    spend(size // 256)  # the copy's work grows with its size
    copied[0] += size
    if copied[0] > MAX_COPY_BYTES:
        raise _PatchFailed(
            "Unable to complete the copy, the accumulated size increase of copy is "
            f"{copied[0]}, exceeding the limit {MAX_COPY_BYTES}"
        )
    return _add(doc, path, copy.deepcopy(value))


def _encoded_size(value: Any, budget: int) -> int:
    """The compact JSON size of ``value`` (what evanphx counts), computed at most about ``budget``
    bytes far: past it the running count is answered, already enough to refuse the copy."""
    size = 0
    for chunk in json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).iterencode(value):
        size += len(chunk.encode())
        if size > budget:
            break
    return size


def _same_types(a: Any, b: Any) -> bool:
    """JSON equality, not Python's (``1 == True``, ``1 == 1.0`` hold in Python only partly in JSON)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return isinstance(a, bool) == isinstance(b, bool)


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _PatchFailed(f'JSON pointer must be empty or start with a "/": {path}')
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _parent(doc: Any, path: str, missing: str) -> tuple[Any, str]:
    tokens = _tokens(path)
    if not tokens:
        return None, ""
    node = doc
    for token in tokens[:-1]:
        node = _get(node, token, missing)
    if not isinstance(node, dict | list):
        raise _PatchFailed(missing)
    return node, tokens[-1]


def _lookup(doc: Any, path: str, missing: str) -> Any:
    node = doc
    for token in _tokens(path):
        node = _get(node, token, missing)
    return node


def _index(items: list[Any], token: str, *, insert: bool = False) -> int:
    if token == "-" and insert:
        return len(items)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise _PatchFailed(f"Unable to access invalid index: {token}: invalid index referenced")
    index = int(token)
    if index > len(items) or (index == len(items) and not insert):
        raise _PatchFailed(f"Unable to access invalid index: {index}: invalid index referenced")
    return index


def _get(node: Any, token: str, missing: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise _PatchFailed(f"{missing}: missing value")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token)]
    raise _PatchFailed(f"{missing}: missing value")


def _set(node: Any, token: str, value: Any) -> None:
    if isinstance(node, dict):
        node[token] = value
    else:
        node[_index(node, token)] = value


def _add(doc: Any, path: str, value: Any) -> Any:
    parent, last = _parent(doc, path, f'add operation does not apply: doc is missing path: "{path}"')
    if parent is None:
        return value
    if isinstance(parent, dict):
        parent[last] = value
    else:
        parent.insert(_index(parent, last, insert=True), value)
    return doc


def _remove(doc: Any, path: str, kind: str) -> tuple[Any, Any]:
    missing = f'{kind} operation does not apply: doc is missing {"from " if kind == "move" else ""}path: "{path}"'
    parent, last = _parent(doc, path, missing)
    if parent is None:
        return None, doc
    if isinstance(parent, dict):
        if last not in parent:
            raise _PatchFailed(f"Unable to remove nonexistent key: {last}: missing value")
        return doc, parent.pop(last)
    return doc, parent.pop(_index(parent, last))


_GO_CONSTANT_ERRORS: Final = {
    "NaN": "invalid character 'N' looking for beginning of value",
    "Infinity": "invalid character 'I' looking for beginning of value",
    "-Infinity": "invalid character 'I' in numeric literal",
}
"""What Go's ``encoding/json`` says where Python's decoder would accept a non-JSON constant."""


def _no_constant(name: str) -> Any:
    raise ValueError(_GO_CONSTANT_ERRORS[name])


def decode_patch(body: bytes, *, bad: str = "") -> Any:
    """The patch body as JSON; ``NaN``/``Infinity``/``-Infinity`` are not JSON (Go's decoder
    refuses them), so they are 400 as any other syntax error, never stored as null."""
    try:
        return json.loads(body, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(bad or f"error decoding patch: {exc}") from exc
    except RecursionError:
        raise BadRequest(bad or "error decoding patch: exceeded max depth of 10000") from None
