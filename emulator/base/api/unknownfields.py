"""Fields a manifest carries that upstream's schema for its kind does not have.

Upstream's API server, under kubectl's default ``fieldValidation=Warn``, accepts such an object,
drops the field and answers with one ``Warning: unknown field "<path>"`` header per field
(the strict decoder's errors turned into warnings: ``addStrictDecodingWarnings`` in
staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go). The emulator keeps what it does
not model (``emulator.base.api.unmodelled``), so the only fields it can drop silently are the
ones no Kubernetes release knows: those are dropped as upstream drops them (``prune_unknown``) and
reported, by ``serve``'s ``Warning`` header (``fieldValidation=Strict``: a 400, ``Ignore``:
nothing) and by ``validate``/``run`` (a warning line per field, the run unchanged).

The schema is ``data/upstream_fields.json``: every field name of every type our kinds reach, as
the official Python client's models (generated from upstream's OpenAPI) list them
(``tests/api/upstream_fields.py`` regenerates it). Maps (``labels``) and free-form values
(``fieldsV1``, int-or-strings, quantities) are not looked into.

Bounded: at most ``MAX_UNKNOWN`` paths are reported per object, then one ``and N more`` line
(upstream's recorder only truncates each warning to 256 runes past 4 KiB of warnings,
``filters.WithWarningRecorder``; 10,000 unknown fields must not be 10,000 lines here).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Final

__all__ = [
    "CRD_FIELDS",
    "CRD_KINDS",
    "MAX_UNKNOWN",
    "UnknownFields",
    "prune_unknown",
    "unknown_fields",
    "warning_texts",
]

MAX_UNKNOWN: Final = 100
"""Unknown field paths reported per object; the rest are counted."""


class UnknownFields:
    """The first ``MAX_UNKNOWN`` unknown paths of one object (``spec.containers[0].x``), and how
    many there were in all."""

    __slots__ = ("paths", "total")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.total = 0

    def __repr__(self) -> str:
        return f"<UnknownFields total={self.total}>"

    def __bool__(self) -> bool:
        return self.total > 0

    def add(self, path: str) -> None:
        self.total += 1
        if len(self.paths) < MAX_UNKNOWN:
            self.paths.append(path)


_REQ: Final = "[KarpenterV1NodeSelectorRequirementWithMinValues"
CRD_KINDS: Final = {"NodePool": "KarpenterV1NodePool", "NodeClaim": "KarpenterV1NodeClaim"}
"""Custom resources (no Python client model): kind -> type, in the same table format."""
CRD_FIELDS: Final[dict[str, dict[str, str]]] = {
    # kubernetes-sigs/karpenter v1.9.1 pkg/apis/crds/karpenter.sh_nodepools.yaml, _nodeclaims.yaml:
    # a CRD's structural schema prunes unknown fields and warns about them as a built-in kind's
    "KarpenterV1NodePool": {
        "apiVersion": "",
        "kind": "",
        "metadata": "V1ObjectMeta",
        "spec": "KarpenterV1NodePoolSpec",
        "status": "KarpenterV1NodePoolStatus",
    },
    "KarpenterV1NodePoolSpec": {
        "template": "KarpenterV1NodeClaimTemplate",
        "disruption": "KarpenterV1Disruption",
        "limits": "",
        "weight": "",
        "replicas": "",
    },
    "KarpenterV1NodeClaimTemplate": {"metadata": "KarpenterV1ObjectMeta", "spec": "KarpenterV1NodeClaimTemplateSpec"},
    "KarpenterV1ObjectMeta": {"labels": "", "annotations": ""},
    "KarpenterV1NodeClaimTemplateSpec": {
        "taints": "[V1Taint",
        "startupTaints": "[V1Taint",
        "requirements": _REQ,
        "nodeClassRef": "KarpenterV1NodeClassReference",
        "terminationGracePeriod": "",
        "expireAfter": "",
    },
    "KarpenterV1NodeSelectorRequirementWithMinValues": {"key": "", "operator": "", "values": "", "minValues": ""},
    "KarpenterV1NodeClassReference": {"kind": "", "name": "", "group": ""},
    "KarpenterV1Disruption": {"consolidateAfter": "", "consolidationPolicy": "", "budgets": "[KarpenterV1Budget"},
    "KarpenterV1Budget": {"reasons": "", "nodes": "", "schedule": "", "duration": ""},
    "KarpenterV1NodePoolStatus": {
        "resources": "",
        "nodes": "",
        "nodeClassObservedGeneration": "",
        "conditions": "[V1Condition",
    },
    "KarpenterV1NodeClaim": {
        "apiVersion": "",
        "kind": "",
        "metadata": "V1ObjectMeta",
        "spec": "KarpenterV1NodeClaimSpec",
        "status": "KarpenterV1NodeClaimStatus",
    },
    "KarpenterV1NodeClaimSpec": {
        "taints": "[V1Taint",
        "startupTaints": "[V1Taint",
        "requirements": _REQ,
        "resources": "KarpenterV1ResourceRequirements",
        "nodeClassRef": "KarpenterV1NodeClassReference",
        "terminationGracePeriod": "",
        "expireAfter": "",
    },
    "KarpenterV1ResourceRequirements": {"requests": ""},
    "KarpenterV1NodeClaimStatus": {
        "nodeName": "",
        "providerID": "",
        "imageID": "",
        "capacity": "",
        "allocatable": "",
        "conditions": "[V1Condition",
        "lastPodEventTime": "",
    },
}
"""The custom resources' field tables (their CRDs' schemas)."""


@functools.cache
def _schema() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    text = resources.files("emulator.base.api").joinpath("data", "upstream_fields.json").read_text("utf-8")
    data = json.loads(text)
    return {**data["kinds"], **CRD_KINDS}, {**data["types"], **CRD_FIELDS}


def _walk(value: Any, tp: str, path: str, out: UnknownFields, types: dict[str, dict[str, str]]) -> Any:
    """``value`` without its unknown fields (``value`` itself when it has none; copies only
    along the way to one), recording their paths in ``out``."""
    if not tp:
        return value
    if tp[0] == "[":
        if not isinstance(value, list):
            return value
        items = [_walk(item, tp[1:], f"{path}[{i}]", out, types) for i, item in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if tp[0] == "{":
        if not isinstance(value, dict):
            return value
        entries = {key: _walk(item, tp[1:], f"{path}.{key}", out, types) for key, item in value.items()}
        return value if all(entries[k] is v for k, v in value.items()) else entries
    fields = types.get(tp)
    if fields is None or not isinstance(value, dict):
        return value
    kept: dict[str, Any] = {}
    changed = False
    for key, item in value.items():
        sub = f"{path}.{key}" if path else str(key)
        child = fields.get(key)
        if child is None and (path or key not in ("apiVersion", "kind")):
            out.add(sub)
            changed = True
            continue
        kept[key] = new = _walk(item, child or "", sub, out, types)
        changed = changed or new is not item
    return kept if changed else value


def prune_unknown(doc: Any) -> tuple[Any, UnknownFields]:
    """``doc`` (an object of one of our kinds) without the fields upstream's schema does not
    have — dropped, as upstream's decoder drops them — and their paths."""
    out = UnknownFields()
    if isinstance(doc, dict):
        kinds, types = _schema()
        model = kinds.get(str(doc.get("kind", "")))
        if model is not None:
            doc = _walk(doc, model, "", out, types)
    return doc, out


def unknown_fields(doc: Any) -> UnknownFields:
    """The unknown fields of ``doc``, an object of one of our kinds (nothing for other kinds)."""
    return prune_unknown(doc)[1]


def warning_texts(found: UnknownFields) -> list[str]:
    """Upstream's warning texts, ``unknown field "spec.x"``, and ``and N more unknown fields``
    past ``MAX_UNKNOWN``."""
    texts = [f'unknown field "{path}"' for path in found.paths]
    if found.total > len(found.paths):
        texts.append(f"and {found.total - len(found.paths)} more unknown fields")
    return texts
