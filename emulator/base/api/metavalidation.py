"""Validation of ``ObjectMeta``, as upstream's ``ValidateObjectMeta`` does on every write:
names (``generateName`` allowed), namespaces, labels and annotations (keys, 256 KiB in all),
and the kubelet's lifecycle annotations on pods (``podvalidation``).

The checks of what a run writes over and over (every pod of a template carries the same label
and annotation maps, every node status write the same labels) are memoised by the maps' items
(``metadata_labels_problem``, ``annotations_problem``, ``kubelet_annotation_problem``; large maps
are checked afresh, so a memo never holds more than ``MEMO_ANNOTATIONS_MAX_B`` a map);
``tests/api/test_validation_memo.py`` compares them with the problems computed afresh.
``check_meta`` raises the first problem. It does not validate specs or statuses
(``validation``, which calls it).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from emulator.base.api.errors import Invalid
from emulator.base.api.labels import (
    DNS1123_SUBDOMAIN_MAX_LEN,
    DNS1123_SUBDOMAIN_RE,
    go_quote,
    is_dns1123_label,
    is_label_key,
    qualified_name_errors,
)
from emulator.base.api.labelselector import label_problems
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.podvalidation import kubelet_annotation_problems

__all__ = [
    "MEMO_ANNOTATIONS_MAX_B",
    "TOTAL_ANNOTATION_SIZE_LIMIT_B",
    "annotations_problem",
    "annotations_problem_reference",
    "check_meta",
    "kubelet_annotation_problem",
    "kubelet_annotations_problem",
    "metadata_labels_problem",
]


@lru_cache(maxsize=4096)
def metadata_labels_problem(items: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The first ``label_problems`` of ``metadata.labels`` given as its items, memoised: a run
    writes the same few label maps over and over (every pod of a template, every node status
    write). ``tests/api/test_validation_memo.py`` checks it against ``label_problems``."""
    return next(label_problems(dict(items), "metadata.labels"), None)


TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024
"""Upstream's ``TotalAnnotationSizeLimitB``: the bytes of every annotation key and value together."""


@lru_cache(maxsize=1024)
def _annotation_keys_problem(keys: tuple[str, ...]) -> tuple[str, str] | None:
    for key in sorted(keys):  # upstream: IsQualifiedName of the lower-cased key, the key as given
        if not is_label_key(key.lower()):
            msg = qualified_name_errors(key.lower())[0]
            return "metadata.annotations", f"Invalid value: {go_quote(key)}: {msg}"
    return None


def annotations_problem(annotations: Mapping[str, str]) -> tuple[str, str] | None:
    """``ValidateAnnotations``: every key a qualified name (any case), 256 KiB in all;
    memoised by the annotations' items when they are small (every pod of a template carries
    the same ones; a large map, such as kubectl's last-applied-configuration, is checked
    afresh so that the memo never holds more than ``MEMO_ANNOTATIONS_MAX_B`` a map)."""
    if _small(annotations):
        return _annotations_problem(tuple(annotations.items()))
    return annotations_problem_reference(annotations)


#: The largest annotations map (keys and values, in characters) the validation memos keep.
MEMO_ANNOTATIONS_MAX_B = 4096


def _small(annotations: Mapping[str, str]) -> bool:
    if len(annotations) > 16:
        return False
    total = 0
    for k, v in annotations.items():
        total += len(k) + len(v)
    return total <= MEMO_ANNOTATIONS_MAX_B


@lru_cache(maxsize=1024)
def _annotations_problem(items: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """``annotations_problem`` of the annotations given as items (the answer does not depend
    on their order, though a hit needs the same order: neither the keys' check nor the size
    depends on it). ``tests/api/test_validation_memo.py`` checks it
    against ``annotations_problem_reference``."""
    return annotations_problem_reference(dict(items))


def annotations_problem_reference(annotations: Mapping[str, str]) -> tuple[str, str] | None:
    """``annotations_problem`` computed afresh."""
    if problem := _annotation_keys_problem(tuple(annotations)):
        return problem
    size = sum(len(k) + (len(v) if v.isascii() else len(v.encode())) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        return "metadata.annotations", f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes"
    return None


def kubelet_annotations_problem(annotations: Mapping[str, str]) -> tuple[str, str] | None:
    """The first ``kubelet_annotation_problems``; memoised for small maps (as
    ``annotations_problem``), afresh for large ones."""
    if _small(annotations):
        return kubelet_annotation_problem(tuple(annotations.items()))
    return next(kubelet_annotation_problems(annotations), None)


@lru_cache(maxsize=1024)
def kubelet_annotation_problem(items: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The first ``kubelet_annotation_problems`` of annotations given as items, memoised (the
    lifecycle annotations are read by name, so the items' order does not matter; every pod of
    a template carries the same ones). ``tests/api/test_validation_memo.py`` checks it."""
    return next(kubelet_annotation_problems(dict(items)), None)


@lru_cache(maxsize=256)
def _valid_namespace(namespace: str) -> bool:
    """``is_dns1123_label`` of a namespace, memoised: a run writes into a few namespaces."""
    return is_dns1123_label(namespace)


def check_meta(kind: str, meta: ObjectMeta, namespaced: bool) -> None:
    """``ValidateObjectMeta``'s checks the emulator makes: a name (or ``generateName``), a
    DNS-1123 subdomain (a label for a Namespace), the namespace, labels and annotations;
    raises ``Invalid`` naming the first bad field."""
    name = meta.name
    if not name:
        if meta.generate_name:
            return
        raise Invalid.at(kind, name, "metadata.name", "Required value: name or generateName is required")
    if kind == "Namespace":
        if not is_dns1123_label(name):
            raise Invalid.at(
                kind,
                name,
                "metadata.name",
                f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower case alphanumeric '
                "characters or '-', and must start and end with an alphanumeric character",
            )
    elif len(name) > DNS1123_SUBDOMAIN_MAX_LEN or not DNS1123_SUBDOMAIN_RE.fullmatch(name):
        raise Invalid.at(
            kind,
            name,
            "metadata.name",
            f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        )
    if namespaced and meta.namespace and not _valid_namespace(meta.namespace):
        raise Invalid.at(kind, name, "metadata.namespace", f'Invalid value: "{meta.namespace}"')
    if meta.labels and (problem := metadata_labels_problem(tuple(meta.labels.items()))):
        raise Invalid.at(kind, name, *problem)
    if meta.annotations and (problem := annotations_problem(meta.annotations)):
        raise Invalid.at(kind, name, *problem)
