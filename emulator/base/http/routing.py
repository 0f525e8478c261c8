"""URL → what is asked: a pure parser of the API's paths (no sockets, no store).

Owns the path grammar upstream's API server installs:

=========================================================  ================================
path                                                       target
=========================================================  ================================
``/version``, ``/api``, ``/apis``, ``/api/v1``,             ``Discovery`` (what, group,
``/apis/<g>``, ``/apis/<g>/<v>``, ``/openapi/v3[/<p>]``    version, path)
``/healthz``, ``/livez``, ``/readyz`` ``[/<check>]``        ``Discovery("health")``
``/apis/authorization.k8s.io/v1/selfsubject*reviews``,     ``Discovery("review")``
``/apis/authentication.k8s.io/v1/selfsubjectreviews``
``/api/v1/<res>[/<name>[/<sub>]]``                          cluster-scoped ``Target``, or a
                                                           namespaced list of all namespaces
``/api/v1/namespaces/<ns>/<res>[/<name>[/<sub>]]``          namespaced ``Target``
``/api/v1/namespaces/<name>[/status]``                      the Namespace object itself
``/apis/<g>/<v>/...``                                       the same, in group ``g``
``.../watch/...`` after the version                         legacy watch prefix
=========================================================  ================================

Anything else is ``NotFound`` with upstream's ``the server could not find the requested
resource``. It does not own verbs (which methods a target allows is ``verbs``' business).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from emulator.base.api.errors import NotFound
from emulator.base.http import resources, reviews
from emulator.base.http.resources import Resource

__all__ = ["NOT_FOUND", "Discovery", "Target", "route"]

NOT_FOUND: Final = "the server could not find the requested resource"


@dataclass(frozen=True, slots=True)
class Discovery:
    what: str
    """``version``, ``api``, ``apis``, ``group``, ``resources``, ``openapi``, ``openapi_doc``,
    ``health`` (``group`` is the endpoint, ``path`` the check), ``review`` (``path`` is the
    resource of a ``reviews.ENDPOINTS`` entry)."""
    group: str = ""
    version: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    resource: Resource
    namespace: str | None
    """The namespace in the URL; None for cluster-scoped resources and all-namespace lists."""
    name: str = ""
    sub: str = ""
    watch: bool = False
    """The legacy ``/watch/`` prefix was used."""


def _missing() -> NotFound:
    return NotFound(NOT_FOUND)


def route(path: str) -> Discovery | Target:
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise _missing()
    head = parts[0]
    if head == "version" and len(parts) == 1:
        return Discovery("version")
    if head in ("healthz", "livez", "readyz") and len(parts) <= 2:
        return Discovery("health", group=head, path=parts[1] if len(parts) == 2 else "")
    if head == "openapi" and len(parts) >= 2 and parts[1] == "v3":
        if len(parts) == 2:
            return Discovery("openapi")
        return Discovery("openapi_doc", path="/".join(parts[2:]))
    if head == "api":
        if len(parts) == 1:
            return Discovery("api")
        if parts[1] != "v1":
            raise _missing()
        group, version, rest = "", "v1", parts[2:]
    elif head == "apis":
        if len(parts) == 1:
            return Discovery("apis")
        if len(parts) == 2:
            return Discovery("group", group=parts[1])
        group, version, rest = parts[1], parts[2], parts[3:]
        if len(rest) == 1 and (group, version, rest[0]) in reviews.ENDPOINTS:
            return Discovery("review", group=group, version=version, path=rest[0])
    else:
        raise _missing()
    if not rest:
        return Discovery("resources", group=group, version=version)
    return _resource_target(group, version, rest)


def _resource_target(group: str, version: str, rest: list[str]) -> Target:
    watch = False
    if rest[0] == "watch":
        watch, rest = True, rest[1:]
        if not rest:
            raise _missing()
    if rest[0] == "namespaces" and group == "" and (len(rest) <= 2 or (len(rest) == 3 and rest[2] in ("status",))):
        res = resources.find("", version, "namespaces")
        if res is None:  # pragma: no cover - the table serves namespaces
            raise _missing()
        name = rest[1] if len(rest) >= 2 else ""
        sub = rest[2] if len(rest) == 3 else ""
        return _checked(Target(res, None, name, sub, watch))
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise _missing()
    res = resources.find(group, version, rest[0])
    if res is None:
        raise _missing()
    if namespace is not None and not res.namespaced:
        raise _missing()
    name = rest[1] if len(rest) >= 2 else ""
    sub = rest[2] if len(rest) == 3 else ""
    if res.namespaced and namespace is None and name:
        raise _missing()
    return _checked(Target(res, namespace, name, sub, watch))


def _checked(t: Target) -> Target:
    if t.sub and t.resource.subresource(t.sub) is None:
        raise _missing()
    return t
