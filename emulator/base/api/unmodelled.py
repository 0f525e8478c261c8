"""The fields of a pod spec the structs do not model, kept in the spec itself.

A manifest's pod spec carries far more than scheduling and the controllers read (``env``,
``command``, probes, ``volumes``, ``securityContext``...). Upstream stores every field, and its
controllers hash and compare the whole template (``controller.ComputeHash`` in
``pkg/controller/controller_utils.go``, ``EqualIgnoreHash`` in ``pkg/controller/deployment/util``,
``history.HashControllerRevision``), so changing only ``env`` starts a rollout, and a pod made from
a template keeps that template's copy of every field.

Here ``PodSpec.unmodelled`` (wire name ``$unmodelled``, never served) holds what the written spec
had and the decoded struct dropped, as an overlay (below). Being a field of the spec, it is part
of everything that reads the spec as a value: the template hashes (``pod-template-hash``,
``controller-revision-hash``), ``==`` between templates, the API server's "spec changed, bump
``generation``" check, and the copy a controller makes when it creates a pod from a template.

Owns: ``capture`` (decode side: the overlay of a written object's pod spec) and ``lift`` (serve
side: the wire dict with the overlay grafted back, verbatim). Does not own decoding, nor the
HTTP layer's per-object extras of fields outside pod specs (``emulator.base.http.extras``).

The overlay is JSON (deterministic under a sorted encoder, the same in every process):
``{"set": {key: value}, "in": {key: overlay}, "by": {key: {"key": K, "n": N, "items": {id: overlay}}}}``
— ``set``: keys the struct lacks, with their written value; ``in``: maps present in both;
``by``: lists present in both, items matched by the merge key ``K`` of upstream's
``patchMergeKey`` tags (containers by name, env by name, ports by containerPort...; ``id`` is the
key's JSON), or by position (``K`` empty, only while the list has its written length ``N``).
A value the struct holds is always served as the struct holds it (a controller's write wins).
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec

from emulator.base.api.quantity import Quantity

__all__ = ["FIELD", "POD_SPEC_PATHS", "capture", "capture_spec", "has_unmodelled", "lift", "lift_spec"]

FIELD: Final = "$unmodelled"
"""The wire name of ``PodSpec.unmodelled`` (no Kubernetes field starts with ``$``)."""

POD_SPEC_PATHS: Final[dict[str, tuple[str, ...]]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
"""Kind → where its pod spec lives in the wire dict."""

_CONTAINER_KEYS: Final = {
    "ports": "containerPort",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
}
_CONTAINER_LISTS: Final = ("initContainers", "containers", "ephemeralContainers")
_MERGE_KEYS: Final[dict[str, str]] = {
    "volumes": "name",
    "initContainers": "name",
    "containers": "name",
    "ephemeralContainers": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "schedulingGates": "name",
    "resourceClaims": "name",
    **{
        f"{c}.*.{k}": v
        for c in ("initContainers", "containers", "ephemeralContainers")
        for k, v in _CONTAINER_KEYS.items()
    },
}
"""Path inside a pod spec → the list's merge key (``k8s.io/api`` core/v1 ``patchMergeKey`` tags)."""


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return obj.text
    raise NotImplementedError(f"cannot encode {type(obj)!r}")


def _ident(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _diff(written: dict[str, Any], stored: dict[str, Any], path: str) -> dict[str, Any]:
    put: dict[str, Any] = {}
    inside: dict[str, Any] = {}
    by: dict[str, Any] = {}
    for key, value in written.items():
        if key == FIELD:
            continue
        if key not in stored:
            put[key] = value
            continue
        have = stored[key]
        sub = f"{path}.{key}" if path else key
        if isinstance(value, dict) and isinstance(have, dict):
            if child := _diff(value, have, sub):
                inside[key] = child
        elif isinstance(value, list) and isinstance(have, list) and (items := _diff_list(value, have, sub)):
            by[key] = items
    out: dict[str, Any] = {}
    if put:
        out["set"] = put
    if inside:
        out["in"] = inside
    if by:
        out["by"] = by
    return out


def _diff_list(written: list[Any], stored: list[Any], path: str) -> dict[str, Any] | None:
    key = _MERGE_KEYS.get(path, "")
    sub = f"{path}.*"
    items: dict[str, Any] = {}
    if key:
        by_key = {_ident(item[key]): item for item in stored if isinstance(item, dict) and key in item}
        for item in written:
            if isinstance(item, dict) and key in item:
                have = by_key.get(_ident(item[key]))
                if isinstance(have, dict) and (child := _diff(item, have, sub)):
                    items[_ident(item[key])] = child
    elif len(written) == len(stored):
        for i, (item, have) in enumerate(zip(written, stored, strict=True)):
            if isinstance(item, dict) and isinstance(have, dict) and (child := _diff(item, have, sub)):
                items[str(i)] = child
    return {"key": key, "n": len(written), "items": items} if items else None


def _graft(obj: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    for key, value in node.get("set", {}).items():
        if key not in out:
            out[key] = value
    for key, child in node.get("in", {}).items():
        have = out.get(key)
        if have is None:
            out[key] = _graft({}, child)
        elif isinstance(have, dict):
            out[key] = _graft(have, child)
    for key, extras in node.get("by", {}).items():
        have = out.get(key)
        if isinstance(have, list):
            out[key] = _graft_list(have, extras)
    return out


def _graft_list(items: list[Any], extras: dict[str, Any]) -> list[Any]:
    key: str = extras["key"]
    if not key and len(items) != extras["n"]:
        return items
    children: dict[str, Any] = extras["items"]
    out = list(items)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        if key:
            child = children.get(_ident(item[key])) if key in item else None
        else:
            child = children.get(str(i))
        if child is not None:
            out[i] = _graft(item, child)
    return out


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(step)
    return doc


def _struct_at(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = getattr(obj, "job_template" if step == "jobTemplate" else step, None)
        if obj is None:
            return None
    return obj


def _replace_at(obj: Any, path: tuple[str, ...], value: Any) -> Any:
    if not path:
        return value
    name = "job_template" if path[0] == "jobTemplate" else path[0]
    return msgspec.structs.replace(obj, **{name: _replace_at(getattr(obj, name), path[1:], value)})


def capture_spec(spec: Any, written: Any) -> Any:
    """The ``PodSpec`` ``spec`` (decoded from ``written``) with its overlay set from ``written``."""
    if not isinstance(written, dict):
        return spec
    stored = msgspec.to_builtins(msgspec.structs.replace(spec, unmodelled={}), enc_hook=_enc_hook)
    overlay = _diff(written, stored, "")
    return spec if overlay == spec.unmodelled else msgspec.structs.replace(spec, unmodelled=overlay)


def capture(obj: Any, doc: Any) -> Any:
    """``obj`` (decoded from ``doc``) with its pod spec's ``unmodelled`` overlay set from what
    ``doc``'s pod spec has and the struct dropped; ``obj`` itself for kinds without a pod spec,
    or when nothing changes."""
    path = POD_SPEC_PATHS.get(getattr(obj, "kind", ""))
    if path is None:
        return obj
    spec = _struct_at(obj, path)
    if spec is None:
        return obj
    captured = capture_spec(spec, _at(doc, path))
    return obj if captured is spec else _replace_at(obj, path, captured)


def has_unmodelled(obj: Any) -> bool:
    """Whether the stored struct ``obj``'s pod spec carries an overlay (its wire dict needs
    ``lift``)."""
    path = POD_SPEC_PATHS.get(getattr(obj, "kind", ""))
    if path is None:
        return False
    spec = _struct_at(obj, path)
    return spec is not None and bool(spec.unmodelled)


def lift_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A pod spec's wire dict with its overlay grafted back and the ``$unmodelled`` key gone
    (``spec`` itself when it has none)."""
    overlay = spec.get(FIELD)
    if overlay is None:
        return spec
    rest = {k: v for k, v in spec.items() if k != FIELD}
    return _graft(rest, overlay) if isinstance(overlay, dict) else rest


def lift(out: dict[str, Any]) -> dict[str, Any]:
    """An object's wire dict as served: its pod spec's unmodelled fields grafted back verbatim
    (copies only the dicts on the way; ``out`` itself when there is nothing to lift)."""
    path = POD_SPEC_PATHS.get(str(out.get("kind", "")))
    if path is None:
        return out
    spec = _at(out, path)
    if not isinstance(spec, dict) or FIELD not in spec:
        return out
    return _set_at(out, path, lift_spec(spec))


def _set_at(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    if len(path) == 1:
        return {**doc, path[0]: value}
    return {**doc, path[0]: _set_at(doc[path[0]], path[1:], value)}
