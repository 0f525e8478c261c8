"""The scenario's readers: files, manifests, templates and ``file:`` references.

What this module owns: ``ScenarioError``; reading every file a scenario names through the
bounded reader and the bounded YAML loader of ``emulator.base.inputs`` (the scenario itself,
``objects: [{file: ...}]``, ``scheduler: {file: ...}``; references are relative to the
scenario file's directory), keeping each file's YAML node marks so that an error can say
``file:line:column`` (``Readers.locate``); decoding manifests (``objects``, ``create``
steps: ``kind: List`` flattened with ``emulator.base.inputs.flatten_list``, each object decoded
and validated by ``emulator.base.api.codec``; no ``Binding``; a valid
``emulator.k8s.io/run-duration``), Pod and Node templates (no name: ``namePrefix`` makes
them), and a KubeSchedulerConfiguration kept raw (``SchedulerConfig``; the CLI builds it).
It does not walk the scenario's own fields (``walker``, ``verbs``) nor replay its writes
(``timeline``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from msgspec.structs import replace

from emulator.app.scenario.limits import parse_simulated_duration
from emulator.app.scenario.schema import RUN_DURATION_ANNOTATION, SchedulerConfig
from emulator.base.api.codec import ApiObject, ManifestError, object_from_dict
from emulator.base.api.core import Node, Pod
from emulator.base.inputs import (
    MAX_FILE_BYTES,
    InputError,
    ReadError,
    YamlDocuments,
    YamlError,
    flatten_list,
    join_path,
    load_documents,
    show,
)
from emulator.base.inputs import read_text as read_file

__all__ = ["Origin", "Readers", "ScenarioError", "check_run_duration"]

_SCHEDULER_API = ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")
MAX_REFERENCED_BYTES = MAX_FILE_BYTES
"""All the files one scenario references, together (a file named 1,000 times is read 1,000
times: each read is bounded by the reader, the sum by this)."""


class ScenarioError(InputError):
    """A bad scenario: ``<file>[:<line>:<column>]: <path>: <detail>`` (no path when the whole
    file is at fault); ``file`` is the referenced file when the problem is inside one."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a manifest is written: ``file`` and ``path`` to report, ``label`` to cite."""

    file: str
    path: str
    label: str


class Readers:
    """Reading the scenario's files and manifests; the base of the scenario walker."""

    def __init__(self, file: str, base_dir: Path) -> None:
        self.file = file
        self.base_dir = base_dir
        self.origins: dict[int, Origin] = {}
        """Where each manifest came from, by ``id`` of its object (the Scenario keeps them alive)."""
        self.bytes_read = 0
        self.warnings: list[str] = []
        """``<file>: <path>: unknown field "<field>"`` for each field of a manifest that
        upstream's schema does not have (dropped, as upstream drops it; not an error)."""
        """Bytes of the referenced files read so far (``MAX_REFERENCED_BYTES`` at most)."""
        self.sources: dict[str, YamlDocuments] = {}
        """Each file read, by the name errors give it: its documents and their node marks."""

    def fail(self, path: str, detail: str) -> NoReturn:
        raise ScenarioError(self.file, path, detail)

    def mapping(self, value: Any, path: str, allowed: Iterable[str], required: Iterable[str] = ()) -> dict[str, Any]:
        allowed = list(allowed)
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping with {', '.join(allowed)}, got {show(value)}")
        for key in value:
            if key not in allowed:
                self.fail(join_path(path, str(key)), f"unknown field; expected one of: {', '.join(allowed)}")
        for key in required:
            if key not in value:
                self.fail(join_path(path, key), "required field missing")
        return value

    # files -------------------------------------------------------------------------------

    def documents(self, text: str, source: str) -> list[Any]:
        """The non-empty YAML documents of ``text``, remembered as ``source``'s."""
        try:
            docs = load_documents(text, source=source)
        except YamlError as err:
            raise ScenarioError(source, "", err.detail) from None
        self.sources[source] = docs
        return docs.docs

    def read(self, file: Path, path: str) -> list[Any]:
        """The documents of a file named at ``path`` of the scenario."""
        try:
            text = read_file(file)
        except ReadError as err:
            raise ScenarioError(self.file, path, f"cannot read file: {err.reason}: {file}") from None
        self.bytes_read += len(text.encode())
        if self.bytes_read > MAX_REFERENCED_BYTES:
            n = MAX_REFERENCED_BYTES
            limit = f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"
            self.fail(path, f"cannot read file: the files this scenario references pass {limit} in all: {file}")
        return self.documents(text, str(file))

    def locate(self, err: InputError) -> None:
        """Add ``line:column`` to an error whose path is in a file read here."""
        docs = self.sources.get(err.file)
        if docs is not None and err.path:
            where = docs.locate(err.path)
            if where is not None:
                err.locate(*where)

    def file_ref(self, value: Any, path: str) -> Path:
        raw = self.mapping(value, path, ["file"], ["file"])
        name = raw["file"]
        if not isinstance(name, str):
            self.fail(join_path(path, "file"), f"expected a string, got {show(name)}")
        return self.base_dir / name

    # manifests ---------------------------------------------------------------------------

    def manifest_error(self, err: ManifestError) -> NoReturn:
        raise ScenarioError(err.source, err.path, err.detail) from None

    def manifests(self, value: Any, path: str) -> list[ApiObject]:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of manifests or {{file: path}} entries, got {show(value)}")
        out: list[ApiObject] = []
        for i, entry in enumerate(value):
            p = join_path(path, i)
            if isinstance(entry, dict) and "file" in entry and not {"apiVersion", "kind"} & entry.keys():
                file = self.file_ref(entry, p)
                docs = self.read(file, p)
                items = [
                    (str(file), doc_path, f"{p} ({' '.join(filter(None, (entry['file'], doc_path)))})", doc)
                    for k, d in enumerate(docs)
                    for doc_path, doc in flatten_list(
                        d, source=str(file), path=f"documents[{k}]" if len(docs) > 1 else "", error=ScenarioError
                    )
                ]
            else:
                items = [(self.file, p, p, entry)]
            for source, doc_path, label, doc in items:
                try:
                    obj = object_from_dict(doc, source=source, path=doc_path, warn=self.warnings.append)
                except ManifestError as err:
                    self.manifest_error(err)
                if obj.kind == "Binding":
                    raise ScenarioError(
                        source,
                        join_path(doc_path, "kind"),
                        "a Binding cannot be created by a scenario: the scheduler binds pods "
                        "(to place a pod yourself, set its spec.nodeName)",
                    )
                if isinstance(obj, Pod):
                    check_run_duration(obj, source, doc_path)
                self.origins[id(obj)] = Origin(source, doc_path, label)
                out.append(obj)
        return out

    def template(self, kind: type[Pod] | type[Node], value: Any, path: str) -> Any:
        name = kind.__name__
        if not isinstance(value, dict):
            self.fail(path, f"expected a {name} manifest (a mapping), got {show(value)}")
        doc = {"apiVersion": "v1", "kind": name, **value}
        if (doc["apiVersion"], doc["kind"]) != ("v1", name):
            self.fail(path, f'expected a v1 {name} template, got "{doc["apiVersion"]}/{doc["kind"]}"')
        meta = doc.get("metadata") or {}
        if isinstance(meta, dict):
            if meta.get("name"):
                self.fail(
                    join_path(join_path(path, "metadata"), "name"),
                    "must not be set in a template: names come from namePrefix",
                )
            doc["metadata"] = {**meta, "name": "template"}
        try:
            obj = object_from_dict(doc, source=self.file, path=path, warn=self.warnings.append)
        except ManifestError as err:
            self.manifest_error(err)
        if isinstance(obj, Pod):
            check_run_duration(obj, self.file, path)
        return replace(obj, metadata=replace(obj.metadata, name=""))

    def scheduler(self, value: Any, path: str) -> SchedulerConfig:
        if isinstance(value, dict) and "file" in value and not {"apiVersion", "kind"} & value.keys():
            file = self.file_ref(value, path)
            docs = self.read(file, path)
            if len(docs) != 1:
                raise ScenarioError(str(file), "", f"expected one KubeSchedulerConfiguration document, got {len(docs)}")
            source, doc, doc_path = str(file), docs[0], ""
        else:
            source, doc, doc_path = self.file, value, path
        if not isinstance(doc, dict):
            raise ScenarioError(
                source,
                doc_path,
                f"expected a KubeSchedulerConfiguration (a mapping) or {{file: path}}, got {show(doc)}",
            )
        for key, want in zip(("apiVersion", "kind"), _SCHEDULER_API, strict=True):
            if doc.get(key) != want:
                raise ScenarioError(source, join_path(doc_path, key), f"expected {want}, got {show(doc.get(key))}")
        return SchedulerConfig(document=doc, file=source, path=doc_path)


def check_run_duration(pod: Pod, file: str, path: str) -> None:
    """The kubelet reads ``emulator.k8s.io/run-duration``: it must be a duration."""
    text = pod.metadata.annotations.get(RUN_DURATION_ANNOTATION)
    if text is None:
        return
    try:
        parse_simulated_duration(text)
    except ValueError as err:
        detail = str(err)
        if detail.endswith(repr(text)):
            detail = detail[: -len(repr(text))] + show(text)
        at = join_path(join_path(join_path(path, "metadata"), "annotations"), RUN_DURATION_ANNOTATION)
        raise ScenarioError(file, at, detail) from None
