"""``Status`` bodies: how an ``ApiError`` is written on the wire (upstream ``errors.go``).

Owns the mapping from the typed error tree (``emulator.base.api.errors``) to a ``v1 Status``:
``status: Failure``, upstream's ``reason`` and ``code``, the message, and ``details``
(``name``, ``group``, ``kind`` — the resource plural for most reasons, the Kind for
``Invalid`` — and ``causes``). Also the success Statuses some verbs answer with (a
binding, an eviction, a delete whose registry does not return the object). It does not own
which error a request gets (the server's verbs) nor how it is sent.

=====================  ====  ==========================================================
reason                 code  details
=====================  ====  ==========================================================
NotFound/AlreadyExists  404/409  name, group, kind = resource plural
Conflict               409   name, group, kind = resource plural; for server-side apply
                             only causes [{reason: FieldManagerConflict, message, field}]
Invalid                422   name, group, kind = Kind, causes [{reason, message, field}]
TooManyRequests        429   causes [{reason: DisruptionBudget, message}] for evictions;
                             retryAfterSeconds when set
Expired (Gone)         410   none
others                       none
=====================  ====  ==========================================================
"""

from __future__ import annotations

import re
from typing import Any, Final

from emulator.base.api.errors import ApiError, Conflict, Invalid, TooManyRequests

__all__ = ["cause_type", "error_status", "success_status"]

_CAUSE_TYPES: Final = (
    ("Required value", "FieldValueRequired"),
    ("Invalid value", "FieldValueInvalid"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Forbidden", "FieldValueForbidden"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
    ("Not found", "FieldValueNotFound"),
)
"""The ``field.ErrorType`` string a validation detail starts with, and its cause type."""

_WITH_RESOURCE: Final = frozenset({"NotFound", "AlreadyExists", "Conflict"})
_ABOUT: Final = re.compile(r'^(?P<resource>[a-z0-9.]+) "(?P<name>[^"]*)" (?:not found|already exists)$')
"""``pods "x" not found``, ``deployments.apps "d" already exists``: upstream's messages name the
resource (qualified by its group) and the object, which is what ``details`` carries."""


def cause_type(detail: str) -> str:
    """``metav1.CauseType`` of a field error from its detail (``Required value`` →
    ``FieldValueRequired``); ``FieldValueInvalid`` when it says nothing else."""
    for prefix, kind in _CAUSE_TYPES:
        if detail.startswith(prefix):
            return kind
    return "FieldValueInvalid"


def error_status(err: ApiError, *, name: str = "", group: str = "", resource: str = "") -> dict[str, Any]:
    """The ``Status`` for ``err`` about the object ``name`` of ``resource`` (plural) in
    ``group``, as upstream's ``StatusError`` carries it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": err.message,
        "reason": err.reason,
    }
    details: dict[str, Any] = {}
    if isinstance(err, Invalid):
        details = {"name": err.name or name}
        if group:
            details["group"] = group
        kind, _, kind_group = (err.kind or resource).partition(".")  # "Deployment.apps" names the group
        if kind_group and not group:
            details["group"] = kind_group
        details["kind"] = kind  # upstream's NewInvalid: the bare Kind, the group beside it
        if err.field:
            details["causes"] = [{"reason": cause_type(err.detail), "message": err.detail, "field": err.field}]
        elif err.detail != err.message:  # upstream's NewGenericServerResponse(422, ...): a JSON patch's failure
            details["causes"] = [{"reason": "UnexpectedServerResponse", "message": err.detail}]
    elif isinstance(err, TooManyRequests):
        if err.causes:
            details["causes"] = [{"reason": "DisruptionBudget", "message": m} for m in err.causes]
        if err.retry_after_seconds:
            details["retryAfterSeconds"] = err.retry_after_seconds
    elif isinstance(err, Conflict) and (conflicts := getattr(err, "causes", None)):
        # server-side apply's ``ApplyConflict``: (field path, message) per conflicting field;
        # upstream's ``NewApplyConflict`` names no object, only the causes
        details["causes"] = [
            {"reason": "FieldManagerConflict", "message": message, "field": path} for path, message in conflicts
        ]
    elif err.reason in _WITH_RESOURCE and (name or resource):
        said = _ABOUT.match(err.message)
        if said is not None and err.reason != "Conflict":  # the store names what it did not find
            qualified, name = said["resource"], said["name"]
            resource, _, group = qualified.partition(".")
        details = {"name": name}
        if group:
            details["group"] = group
        details["kind"] = resource
    if details:
        body["details"] = {k: v for k, v in details.items() if v != ""}
    body["code"] = err.code
    return body


def success_status(*, code: int = 0, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"kind":"Status","status":"Success"}`` with an optional ``code`` and ``details``."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        body["details"] = details
    if code:
        body["code"] = code
    return body
