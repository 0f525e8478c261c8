"""Anonymous requests, as upstream's API server treats them with anonymous auth on and RBAC.

A request without a bearer token (no ``Authorization`` header, another scheme, an empty
token) is not refused with 401: upstream's anonymous authenticator makes it
``system:anonymous``, and RBAC, which grants that user only ``system:public-info-viewer``
(GET ``/healthz``, ``/livez``, ``/readyz``, ``/version``), answers everything else with 403
``Forbidden``. A wrong token is still 401: that authenticator fails, and anonymous is only
tried when none did.

Owns the request attributes RBAC names in its message (upstream's ``RequestInfoFactory``:
verb, API group, resource, subresource, namespace, name, or the non-resource path), read
from the URL alone, before routing (an unknown resource is forbidden, not 404), and the
``Forbidden`` Status built from them (``responsewriters.Forbidden``, ``errors.NewForbidden``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["ANONYMOUS", "Attributes", "attributes", "forbidden_status"]

ANONYMOUS: Final = "system:anonymous"

_VERBS: Final = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES: Final = frozenset({"status", "finalize"})


@dataclass(frozen=True, slots=True)
class Attributes:
    verb: str
    path: str
    resource_request: bool = False
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


def _name_from_selector(selector: str) -> str:
    """``metadata.name=x`` (or ``==``) in a field selector: upstream's list/watch name."""
    for term in selector.split(","):
        key, sep, value = term.strip().partition("==")
        if not sep:
            key, sep, value = term.strip().partition("=")
        if sep and key.strip() == "metadata.name":
            return value.strip()
    return ""


def attributes(method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """What RBAC is asked about for this request (upstream's ``NewRequestInfo``)."""
    plain = Attributes(verb=method.lower(), path=path)
    parts = [p for p in path.strip("/").split("/") if p] if path.strip("/") else []
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return plain
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return plain
        group, rest = rest[0], rest[1:]
    rest = rest[1:]  # the version
    verb = _VERBS.get(method, "")
    if rest and rest[0] == "watch":
        if len(rest) < 2:
            return plain  # upstream fails such a request; refusing it as a path is as good
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) >= 2 else ""
    sub = rest[2] if len(rest) >= 3 else ""
    if len(rest) < 2 and verb == "get":
        verb = "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
    if verb in ("list", "watch") and "fieldSelector" in query:
        name = _name_from_selector(query["fieldSelector"])
    if verb == "delete" and not name:
        verb = "deletecollection"
    return Attributes(verb, path, True, group, resource, sub, namespace, name)


def forbidden_status(a: Attributes, user: str = ANONYMOUS) -> dict[str, Any]:
    """The 403 Status RBAC's refusal gets (upstream's ``forbiddenMessage`` in ``NewForbidden``)."""
    if not a.resource_request:
        said = f'User "{user}" cannot {a.verb} path "{a.path}"'
    else:
        resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
        said = f'User "{user}" cannot {a.verb} resource "{resource}" in API group "{a.group}" {where}'
    qualified = f"{a.resource}.{a.group}" if a.group else a.resource
    if not qualified:
        message = f"forbidden: {said}"
    elif not a.name:
        message = f"{qualified} is forbidden: {said}"
    else:
        message = f'{qualified} "{a.name}" is forbidden: {said}'
    details = {k: v for k, v in (("name", a.name), ("group", a.group), ("kind", a.resource)) if v}
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }
