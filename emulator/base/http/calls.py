"""One HTTP call as the verbs see it, and its answer: the request model under ``verbs``.

Owns ``Call`` (a method on a routed ``Target`` with its query, body and caller) and
``Answer`` (status code, body, content type), which Kubernetes verb a method on a target
is (``verb_of``) and whether the resource serves it (``check_verb``, 405 otherwise), and the
``dryRun`` query parameter (``dry_run``). It does not answer anything: ``verbs`` (the main
resources) and ``subresources`` (binding, eviction, scale) do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from emulator.base.api.errors import Invalid, MethodNotAllowed
from emulator.base.http.routing import Target

__all__ = [
    "APPLY",
    "METHOD_NOT_ALLOWED",
    "Answer",
    "Call",
    "check_dry_run",
    "check_field_manager",
    "check_managed_fields",
    "check_verb",
    "dry_run",
    "verb_of",
]

METHOD_NOT_ALLOWED: Final = "the server does not allow this method on the requested resource"
APPLY: Final = "application/apply-patch+yaml"
"""The content type of a server-side apply patch."""


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    target: Target
    query: Mapping[str, str]
    body: bytes = b""
    content_type: str = ""
    agent: str = ""
    as_table: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    code: int
    body: bytes
    content_type: str = "application/json"
    warnings: tuple[str, ...] = ()
    """``Warning`` header texts (``unknown field "spec.x"``), in order, each once."""


def verb_of(method: str, target: Target, watch: bool) -> str:
    """The Kubernetes verb of an HTTP method on a target (for the verbs check)."""
    if method == "GET":
        if target.name:
            return "get"
        return "watch" if watch else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if target.name else "deletecollection"
    raise MethodNotAllowed(METHOD_NOT_ALLOWED)


def check_verb(target: Target, verb: str) -> None:
    res = target.resource
    if target.sub:
        sub = res.subresource(target.sub)
        allowed = sub.verbs if sub is not None else ()
    else:
        allowed = res.verbs
    if verb not in allowed:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)
    if verb in ("create", "deletecollection") and res.namespaced and target.namespace is None:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)  # upstream serves both only under a namespace
    if verb in ("update", "patch") and not target.name:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)
    if verb == "create" and target.name and not target.sub:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)


_OPTIONS: Final = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def dry_run(query: Mapping[str, str], method: str = "POST") -> bool:
    """``dryRun=All``; any other value is upstream's ``ValidateDryRun`` 422 on the verb's options."""
    value = query.get("dryRun")
    if value is None:
        return False
    check_dry_run([value], method)
    return True


def check_dry_run(values: list[Any], method: str) -> None:
    """``ValidateDryRun``: every value ``All`` (``Unsupported value: []string{"x"}`` otherwise)."""
    if all(v == "All" for v in values):
        return
    shown = ", ".join(json.dumps(v) if isinstance(v, str) else json.dumps(str(v)) for v in values)
    detail = f'Unsupported value: []string{{{shown}}}: supported values: "All"'
    kind = _OPTIONS.get(method, "CreateOptions")
    raise Invalid(f'{kind}.meta.k8s.io "" is invalid: dryRun: {detail}', field="dryRun", kind=kind, detail=detail)


FIELD_MANAGER_MAX_LENGTH: Final = 128


def _field_manager_error(manager: str) -> str:
    """``ValidateFieldManager``'s complaint about ``manager`` (at most 128 bytes, every character
    printable), or ``""``."""
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        return f"Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            position = len(manager[:i].encode())
            return f"Invalid value: {json.dumps(manager)}: invalid character U+{ord(ch):04X} (at position {position})"
    return ""


def check_field_manager(manager: str, method: str) -> None:
    """``ValidateFieldManager``: at most 128 bytes, every character printable (422 on the options)."""
    kind = _OPTIONS.get(method, "CreateOptions")
    detail = _field_manager_error(manager)
    if detail:
        raise Invalid(
            f'{kind}.meta.k8s.io "" is invalid: fieldManager: {detail}', field="fieldManager", kind=kind, detail=detail
        )


MAX_SUBRESOURCE_NAME_LENGTH: Final = 256


def check_managed_fields(entries: Any, kind: str, name: str) -> None:
    """Upstream's ``ValidateManagedFields`` on the ``metadata.managedFields`` a write carries:
    each entry's ``operation`` is ``Apply`` or ``Update``, its ``fieldsType`` empty or
    ``FieldsV1``, its ``manager`` a valid field manager, its ``subresource`` at most 256
    characters. 422 naming every bad entry, as upstream's aggregated field errors."""
    if not isinstance(entries, list):
        return
    errors: list[tuple[str, str]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        at = f"metadata.managedFields[{i}]"
        operation = entry.get("operation")
        if operation not in ("Apply", "Update"):
            shown = json.dumps(operation if isinstance(operation, str) else "")
            errors.append((f"{at}.operation", f"Invalid value: {shown}: must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType")
        if fields_type and fields_type != "FieldsV1":
            errors.append((f"{at}.fieldsType", f"Invalid value: {json.dumps(str(fields_type))}: must be `FieldsV1`"))
        manager = entry.get("manager")
        detail = _field_manager_error(manager) if isinstance(manager, str) else ""
        if detail:
            errors.append((f"{at}.manager", detail))
        subresource = entry.get("subresource")
        if isinstance(subresource, str) and len(subresource) > MAX_SUBRESOURCE_NAME_LENGTH:
            detail = f"Too long: may not be more than {MAX_SUBRESOURCE_NAME_LENGTH} bytes"
            errors.append((f"{at}.subresource", detail))
    if not errors:
        return
    if len(errors) == 1:
        raise Invalid.at(kind, name, *errors[0])
    listed = ", ".join(f"{path}: {detail}" for path, detail in errors)
    field, detail = errors[0]
    raise Invalid(f'{kind} "{name}" is invalid: [{listed}]', field=field, kind=kind, name=name, detail=detail)
