"""One HTTP call as the verbs see it, and its answer: the request model under ``verbs``.

Owns ``Call`` (a method on a routed ``Target`` with its query, body and caller) and
``Answer`` (status code, body, content type), which Kubernetes verb a method on a target
is (``verb_of``) and whether the resource serves it (``check_verb``, 405 otherwise), and the
``dryRun`` query parameter (``dry_run``). It does not answer anything: ``verbs`` (the main
resources) and ``subresources`` (binding, eviction, scale) do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from emulator.base.api.errors import BadRequest, MethodNotAllowed
from emulator.base.http.routing import Target

__all__ = ["APPLY", "METHOD_NOT_ALLOWED", "Answer", "Call", "check_verb", "dry_run", "verb_of"]

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
    if verb == "create" and res.namespaced and target.namespace is None:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)
    if verb in ("update", "patch") and not target.name:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)
    if verb == "create" and target.name and not target.sub:
        raise MethodNotAllowed(METHOD_NOT_ALLOWED)


def dry_run(query: Mapping[str, str]) -> bool:
    value = query.get("dryRun", "")
    if value and value != "All":
        raise BadRequest(f'invalid dryRun "{value}": supported values: "All"')
    return value == "All"
