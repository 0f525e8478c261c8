"""``metrics.k8s.io/v1beta1`` through the HTTP door: what ``kubectl top pod`` and ``kubectl top
node`` read (upstream serves it from metrics-server, an aggregated API).

Read-only: ``pods`` (PodMetrics, namespaced) and ``nodes`` (NodeMetrics), get and list, with
``labelSelector``; computed at request time by ``ApiServer.metrics`` (the load model), never
stored, so they are not in ``resources.RESOURCES`` (no strategy, no watch, no Table, no
protobuf: metrics-server answers JSON). This module owns their routing, their discovery
entries (``group_doc``, ``resources_doc``, ``aggregated_group``, at kube-aggregator's lowest
priority, after the built-in groups) and their answers.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from emulator.base.api.codec import to_builtins
from emulator.base.api.errors import BadRequest, MethodNotAllowed, NotFound
from emulator.base.api.labelparse import parse_label_selector
from emulator.base.api.labelselector import EVERYTHING, Selector, SelectorError, compile_selector
from emulator.base.apiserver.metrics import ResourceMetrics

__all__ = ["GROUP", "VERSION", "aggregated_group", "answer", "group_doc", "match", "resources_doc", "respond"]

GROUP: Final = "metrics.k8s.io"
VERSION: Final = "v1beta1"
_RESOURCES: Final = (("nodes", "NodeMetrics", False), ("pods", "PodMetrics", True))


def match(path: str) -> tuple[str, str | None, str] | None:
    """``(resource, namespace, name)`` of a metrics object path, or None for any other path."""
    parts = [p for p in path.split("/") if p]
    if parts[:3] != ["apis", GROUP, VERSION] or len(parts) == 3:
        return None
    rest = parts[3:]
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    if rest[0] not in ("pods", "nodes") or len(rest) > 2 or (rest[0] == "nodes" and namespace is not None):
        raise NotFound("the server could not find the requested resource")
    return rest[0], namespace, rest[1] if len(rest) == 2 else ""


def _selector(text: str) -> Selector:
    if not text:
        return EVERYTHING
    try:
        return compile_selector(parse_label_selector(text))
    except (ValueError, SelectorError) as err:
        raise BadRequest(f"unable to parse requirement: {err}") from None


def answer(metrics: ResourceMetrics, method: str, route: tuple[str, str | None, str], query: dict[str, str]) -> bytes:
    """The JSON answer to a GET of a metrics path (``match``'s route)."""
    if method != "GET":
        raise MethodNotAllowed("the server does not allow this method on the requested resource")
    resource, namespace, name = route
    selector = _selector(query.get("labelSelector", ""))
    items: list[Any]
    if resource == "pods":
        items = metrics.pod_metrics(namespace or "", selector, name)
        kind = "PodMetrics"
    else:
        items = metrics.node_metrics(name, selector)
        kind = "NodeMetrics"
    if name:
        if not items:
            raise NotFound(f'{kind.lower()}.{GROUP} "{name}" not found')
        return msgspec.json.encode(to_builtins(items[0]))
    doc = {
        "kind": f"{kind}List",
        "apiVersion": f"{GROUP}/{VERSION}",
        "metadata": {},
        "items": [to_builtins(i) for i in items],
    }
    return msgspec.json.encode(doc)


def respond(metrics: ResourceMetrics, method: str, path: str, query: dict[str, str]) -> bytes | None:
    """The answer to a request for a metrics path, or None for any other path."""
    route = match(path)
    return None if route is None else answer(metrics, method, route, query)


def group_doc() -> dict[str, Any]:
    version = {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    return {"name": GROUP, "versions": [version], "preferredVersion": version}


def resources_doc() -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{GROUP}/{VERSION}",
        "resources": [
            {
                "name": name,
                "singularName": name.removesuffix("s"),
                "namespaced": namespaced,
                "kind": kind,
                "verbs": ["get", "list"],
            }
            for name, kind, namespaced in _RESOURCES
        ],
    }


def aggregated_group() -> dict[str, Any]:
    return {
        "metadata": {"name": GROUP, "creationTimestamp": None},
        "versions": [
            {
                "version": VERSION,
                "resources": [
                    {
                        "resource": name,
                        "responseKind": {"group": GROUP, "version": VERSION, "kind": kind},
                        "scope": "Namespaced" if namespaced else "Cluster",
                        "singularResource": name.removesuffix("s"),
                        "verbs": ["get", "list"],
                    }
                    for name, kind, namespaced in _RESOURCES
                ],
                "freshness": "Current",
            }
        ],
    }
