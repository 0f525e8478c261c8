"""List and watch options from a query string: selectors, paging, resourceVersion.

Owns the pure parsing and checking of ``labelSelector``, ``fieldSelector`` (parsed by
``emulator.base.api.fields``, ``=``/``==``/``!=``, checked against the store's selectable fields
per kind, ``emulator.base.apiserver.watcher.field_getter``), ``limit``/``continue`` tokens,
``resourceVersion``/``resourceVersionMatch``, ``watch``, ``timeoutSeconds``,
``allowWatchBookmarks`` and ``sendInitialEvents``. It does not read the store or write
anything: the server turns a ``ListOptions`` into an ``ApiServer.list``/``watch`` call.

Paging consistency: a ``continue`` token holds the list's resourceVersion and the last
(namespace, name) key served. The next page is the *current* state after that key (the
store keeps no snapshots), and carries the original resourceVersion — what upstream gives
when it must serve an inconsistent continuation. Objects created or deleted between pages
behind the key are not seen; none is served twice.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from emulator.base.api.errors import BadRequest, Gone, Invalid, Timeout
from emulator.base.api.fields import parse_field_requirements
from emulator.base.api.labelparse import compares, parse_label_query
from emulator.base.api.labels import parse_int64
from emulator.base.api.labelselector import SelectorError, compile_selector
from emulator.base.apiserver.watcher import field_getter

__all__ = [
    "FieldRequirement",
    "ListOptions",
    "check_list_version",
    "decode_continue",
    "encode_continue",
    "page",
    "parse_field_selector",
    "parse_list_options",
]


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    label: str
    op: str
    """``=`` (also for ``==``) or ``!=``."""
    value: str


def parse_field_selector(kind: str, text: str) -> list[FieldRequirement]:
    """``a=b,c!=d`` as requirements (``emulator.base.api.fields``' parser, upstream's escapes
    included); BadRequest on bad syntax or a field ``kind`` does not expose (upstream: ``field
    label not supported: <label>``; the store's table of selectable fields decides)."""
    try:
        terms = parse_field_requirements(text)
    except ValueError as err:
        raise BadRequest(str(err)) from None
    out: list[FieldRequirement] = []
    for label, op, value in terms:
        label = label.strip()
        if field_getter(kind, label) is None:
            raise BadRequest(f"field label not supported: {label}")
        out.append(FieldRequirement(label, op, value.strip()))
    return out


def _field_predicate(kind: str, reqs: list[FieldRequirement]) -> Callable[[Any], bool] | None:
    tests = [(field_getter(kind, r.label), r.op == "=", r.value) for r in reqs]
    if not tests:
        return None

    def predicate(obj: Any) -> bool:
        for get, equal, want in tests:
            assert get is not None
            if (get(obj) == want) != equal:
                return False
        return True

    return predicate


class _Token(msgspec.Struct, frozen=True):
    rv: int
    ns: str
    name: str


def encode_continue(rv: int, namespace: str, name: str) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode(_Token(rv, namespace, name))).decode()


def decode_continue(token: str) -> tuple[int, str, str]:
    try:
        t = msgspec.json.decode(base64.urlsafe_b64decode(token.encode()), type=_Token)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise BadRequest(f"continue key is not valid: {token!r}") from None
    if parse_int64(str(t.rv)) is None:
        raise BadRequest(f"invalid continue token: continue key is not valid: {token!r}")
    if t.rv == 0:
        # upstream's storage.ErrInvalidStartRV
        raise BadRequest(
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    return t.rv, t.ns, t.name


@dataclass(frozen=True, slots=True)
class ListOptions:
    label_match: Callable[[Mapping[str, str]], bool] | None = None
    name: str | None = None
    """A ``metadata.name=`` requirement (the store looks it up instead of scanning)."""
    predicate: Callable[[Any], bool] | None = None
    """The other field requirements."""
    limit: int = 0
    continue_from: tuple[int, str, str] | None = None
    resource_version: str = ""
    resource_version_match: str = ""
    watch: bool = False
    timeout_seconds: float | None = None
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    include_object: str = "Metadata"
    extra: dict[str, str] = field(default_factory=dict)


def _bool(value: str | None) -> bool:
    return value in ("true", "1", "True")


def _int(query: Mapping[str, str], key: str) -> int | None:
    value = query.get(key)
    if value is None or value == "":
        return None
    n = parse_int64(value)  # Go's strconv.ParseInt: no "_", no spaces, int64
    if n is None:
        raise BadRequest(f'invalid {key} "{value}": must be an integer')
    return n


def parse_list_options(kind: str, query: Mapping[str, str]) -> ListOptions:
    """Every list/watch option of ``query``; BadRequest for what upstream refuses."""
    label_match = None
    text = query.get("labelSelector", "")
    if text:
        try:
            selector, compare = parse_label_query(text)
            label_match = compile_selector(selector).matches
        except (ValueError, SelectorError) as err:
            raise BadRequest(str(err)) from None
        if compare:
            label_match = _with_compare(label_match, compare)
    reqs = parse_field_selector(kind, query.get("fieldSelector", ""))
    name = None
    rest: list[FieldRequirement] = []
    for r in reqs:
        if r.label == "metadata.name" and r.op == "=" and name is None:
            name = r.value
        else:
            rest.append(r)
    limit = _int(query, "limit") or 0
    token = query.get("continue", "")
    continue_from = decode_continue(token) if token else None
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    if match and match not in ("Exact", "NotOlderThan"):
        raise BadRequest(f'unsupported resourceVersionMatch "{match}": supported values: "Exact", "NotOlderThan"')
    sie = query.get("sendInitialEvents")
    if match and not rv and sie is None:
        raise BadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
    if rv and rv != "0" and (not rv.isascii() or not rv.isdigit() or int(rv) >= 1 << 64):
        # Go's strconv.ParseUint: decimal digits only, uint64
        raise BadRequest(f'invalid resource version "{rv}"')
    timeout = _int(query, "timeoutSeconds")
    include = query.get("includeObject", "Metadata") or "Metadata"
    if include not in ("None", "Metadata", "Object"):
        raise BadRequest(f'invalid includeObject "{include}"')
    return ListOptions(
        label_match=label_match,
        name=name,
        predicate=_field_predicate(kind, rest),
        limit=max(limit, 0),
        continue_from=continue_from,
        resource_version=rv,
        resource_version_match=match,
        watch=_bool(query.get("watch")),
        timeout_seconds=float(timeout) if timeout is not None and timeout > 0 else None,
        allow_bookmarks=_bool(query.get("allowWatchBookmarks")),
        send_initial_events=None if sie is None else _bool(sie),
        include_object=include,
    )


def _with_compare(
    match: Callable[[Mapping[str, str]], bool], compare: list[tuple[str, bool, int]]
) -> Callable[[Mapping[str, str]], bool]:
    def label_match(labels: Mapping[str, str]) -> bool:
        return match(labels) and compares(labels, compare)

    return label_match


def _forbidden(path: str, detail: str) -> Invalid:
    """What upstream's ``ValidateListOptions`` answers: 422 on the ListOptions."""
    detail = f"Forbidden: {detail}"
    return Invalid(
        f'ListOptions.meta.k8s.io "" is invalid: {path}: {detail}', field=path, kind="ListOptions", detail=detail
    )


def check_list_version(opts: ListOptions, current: int) -> None:
    """Upstream's answer for a list (not a watch) with these options: ``sendInitialEvents``
    and ``resourceVersionMatch`` with ``continue`` are forbidden (422), ``continue`` with a
    ``resourceVersion`` other than 0 is 400; the store serves only its current state, so a
    future version (asked for or in a continue token) is 504 ``Too large resource version``,
    and an ``Exact`` older one is 410 Expired."""
    if opts.send_initial_events is not None:
        raise _forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
    rv = opts.resource_version
    if opts.continue_from is not None:
        if opts.resource_version_match:
            raise _forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
        if rv and rv != "0":
            raise BadRequest("specifying resource version is not allowed when using continue")
        n = opts.continue_from[0]
        if n > current:
            raise Timeout(f"Too large resource version: {n}, current: {current}")
    if not rv or rv == "0":
        return
    n = int(rv)
    if n > current:
        raise Timeout(f"Too large resource version: {n}, current: {current}")
    if opts.resource_version_match == "Exact" and n != current:
        raise Gone("The resourceVersion for the provided list is too old.")


def page(items: list[Any], opts: ListOptions, rv: int) -> tuple[list[Any], str, int | None, int]:
    """The page of ``items`` (sorted by key) to serve: (items, continue token, remaining
    count or None, the list's resourceVersion)."""
    if opts.continue_from is not None:
        at, ns, name = opts.continue_from
        if at > 0:  # a negative one (upstream: a consistent continuation) is served at the current
            rv = at
        key = (ns, name)
        items = [o for o in items if (o.metadata.namespace, o.metadata.name) > key]
    if opts.limit and len(items) > opts.limit:
        last = items[opts.limit - 1]
        token = encode_continue(rv, last.metadata.namespace, last.metadata.name)
        return items[: opts.limit], token, len(items) - opts.limit, rv
    return items, "", None, rv
