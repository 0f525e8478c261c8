"""Decoding real Kubernetes manifests into API structs, and encoding them back.

``load_manifests`` accepts what ``kubectl apply -f`` accepts for our kinds: multi-document
YAML (or JSON), ``kind: List`` with ``items``, camelCase fields, unknown fields ignored,
types checked. Every problem is a ``ManifestError`` naming the source, the path inside it
(``documents[1].spec.containers[0].resources.requests.cpu``) and what was expected.
Decoders are built once; YAML is parsed with libyaml when available (YAML is ~100x slower
than JSON: only at the edges, never on a hot path). A key repeated in one mapping is an
error, as kubectl's (``mapping key "name" already defined at line 3``), not a silent
overwrite: ``YamlLoader`` (also the scenario loader's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec
import yaml

from emulator.api.core import Binding, Event, Namespace, Node, Pod
from emulator.api.errors import Invalid
from emulator.api.quantity import Quantity, decode_quantity
from emulator.api.scheduling import Lease, PriorityClass
from emulator.api.validation import validate

__all__ = [
    "KINDS",
    "ApiObject",
    "ManifestError",
    "YamlLoader",
    "convert",
    "dec_hook",
    "enc_hook",
    "load_manifest_file",
    "load_manifests",
    "object_from_dict",
    "to_builtins",
    "yaml_documents",
]

ApiObject = Pod | Node | Binding | Event | Namespace | PriorityClass | Lease
T = TypeVar("T")

KINDS: Final[dict[tuple[str, str], type[Any]]] = {
    ("v1", "Pod"): Pod,
    ("v1", "Node"): Node,
    ("v1", "Binding"): Binding,
    ("v1", "Event"): Event,
    ("v1", "Namespace"): Namespace,
    ("scheduling.k8s.io/v1", "PriorityClass"): PriorityClass,
    ("coordination.k8s.io/v1", "Lease"): Lease,
}

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


class YamlLoader(_BaseLoader):  # type: ignore[misc]
    """libyaml's safe loader (the pure-Python one without libyaml) that rejects a key
    written twice in one mapping; ``<<`` merges may still be overridden, as YAML allows."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue  # an unhashable key: the base constructor reports it
                if first is not key_node:
                    shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key)
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f'mapping key "{shown}" already defined at line {first.start_mark.line + 1}',
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


_AT_PATH = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


class ManifestError(Exception):
    """Bad input in a manifest: ``<source>: <path>: <detail>``."""

    def __init__(self, source: str, path: str, detail: str) -> None:
        self.source = source
        self.path = path
        self.detail = detail
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {detail}")


def dec_hook(tp: type[Any], obj: Any) -> Any:
    if tp is Quantity:
        return decode_quantity(obj)
    raise NotImplementedError(f"cannot decode {tp!r}")


def enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return obj.text
    raise NotImplementedError(f"cannot encode {type(obj)!r}")


def convert(data: Any, tp: type[T]) -> T:
    """``msgspec.convert`` with the Quantity hook (raises ``msgspec.ValidationError``)."""
    return msgspec.convert(data, tp, dec_hook=dec_hook)


def to_builtins(obj: Any) -> Any:
    """The object as plain JSON-able builtins with its wire (camelCase) names. A top-level
    API object always carries ``apiVersion`` and ``kind`` (``omit_defaults`` would drop them
    for objects built in code, whose defaults are the very same strings)."""
    out = msgspec.to_builtins(obj, enc_hook=enc_hook)
    if isinstance(out, dict) and hasattr(obj, "api_version") and hasattr(obj, "kind"):
        return {"apiVersion": obj.api_version, "kind": obj.kind, **out}
    return out


def _join(prefix: str, sub: str) -> str:
    sub = sub.lstrip(".")
    if not prefix:
        return sub
    if not sub:
        return prefix
    return prefix + sub if sub.startswith("[") else f"{prefix}.{sub}"


def object_from_dict(doc: Any, *, source: str, path: str = "") -> ApiObject:
    """Decode and validate one manifest document (a mapping with apiVersion and kind)."""
    if not isinstance(doc, dict):
        raise ManifestError(source, path, f"expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise ManifestError(source, _join(path, "apiVersion"), "required field missing (e.g. apiVersion: v1)")
    if not isinstance(kind, str) or not kind:
        raise ManifestError(source, _join(path, "kind"), "required field missing (e.g. kind: Pod)")
    tp = KINDS.get((api_version, kind))
    if tp is None:
        known = ", ".join(f"{k} ({v})" for v, k in KINDS)
        raise ManifestError(
            source, path, f'unsupported apiVersion/kind "{api_version}/{kind}"; expected one of: {known}'
        )
    try:
        obj: ApiObject = convert(doc, tp)
    except msgspec.ValidationError as err:
        m = _AT_PATH.match(str(err))
        assert m is not None
        raise ManifestError(source, _join(path, m["path"] or ""), m["msg"]) from None
    try:
        validate(obj)
    except Invalid as err:
        raise ManifestError(source, _join(path, err.field), err.detail) from None
    return obj


def _flatten(doc: Any, *, source: str, path: str) -> Iterable[ApiObject]:
    if (isinstance(doc, dict) and doc.get("kind") == "List") or (
        isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc
    ):
        items = doc.get("items")
        if not isinstance(items, list):
            raise ManifestError(source, _join(path, "items"), "expected a list of objects")
        for i, item in enumerate(items):
            yield from _flatten(item, source=source, path=_join(path, f"items[{i}]"))
        return
    yield object_from_dict(doc, source=source, path=path)


def yaml_documents(text: str, *, source: str) -> list[Any]:
    """Every non-empty document of a (multi-document) YAML or JSON text."""
    try:
        return [d for d in yaml.load_all(text, Loader=YamlLoader) if d is not None]
    except yaml.YAMLError as err:
        detail = " ".join(str(err).split())
        raise ManifestError(source, "", f"not valid YAML: {detail}") from None


def load_manifests(text: str, *, source: str) -> list[ApiObject]:
    """All objects in a manifest text; paths are ``documents[i]...`` when there are several."""
    docs = yaml_documents(text, source=source)
    out: list[ApiObject] = []
    for i, doc in enumerate(docs):
        prefix = f"documents[{i}]" if len(docs) > 1 else ""
        out.extend(_flatten(doc, source=source, path=prefix))
    return out


def load_manifest_file(path: str | Path) -> list[ApiObject]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ManifestError(str(path), "", f"cannot read file: {err.strerror or err}") from None
    return load_manifests(text, source=str(path))
