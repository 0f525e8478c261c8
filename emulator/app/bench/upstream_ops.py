"""The op half of reading upstream's scheduler_perf configs (``upstream.py`` owns the test cases
and workloads): one op of a ``workloadTemplate`` checked against upstream's op struct
(``upstream_fields.OP_FIELDS``) and rewritten into ``spec.py``'s shape, its template files read
once and registered by their path relative to the config file (``templates`` for Nodes and Pods,
``anyTemplates`` for the text of ``createAny``/``updateAny``/volume templates, ``indexedTemplates``
for templates with Go-template actions), with the reason a workload using it cannot run ("" when
it can). Upstream's defaults for ops without a template: ``DEFAULT_NODE``, ``DEFAULT_POD``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from emulator.app.bench.gotemplate import TemplateError, has_actions, parse
from emulator.app.bench.upstream_fields import (
    KINDS_LACKING,
    LACKING,
    OP_FIELDS,
    PLAYED,
    TEMPLATE_KINDS,
    unplayable,
)
from emulator.base.api.codec import KINDS
from emulator.base.api.resourceconvert import BETA_VERSIONS, CONVERTED_KINDS
from emulator.base.inputs import InputError, ReadError, YamlError, load_documents, read_text

__all__ = ["DEFAULT_NODE", "DEFAULT_POD", "OpTranslator", "PerfConfigError", "probe"]


class PerfConfigError(InputError):
    """Bad upstream-format input: ``<file>[:<line>:<column>]: <path>: <detail>``."""


DEFAULT_NODE: Final[dict[str, Any]] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "conditions": [{"status": "True", "type": "Ready"}],
    },
}
"""The node of an op without ``nodeTemplatePath`` (upstream's base node: 4 CPUs, 32Gi, 110 pods)."""

DEFAULT_POD: Final[dict[str, Any]] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {
        "containers": [
            {
                "image": "registry.k8s.io/pause:3.10.1",
                "name": "pause",
                "ports": [{"containerPort": 80}],
                "resources": {
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ]
    },
}
"""The pod of a test case without ``defaultPodTemplatePath`` and an op without ``podTemplatePath``."""

_PATH_KEYS: Final = ("podTemplatePath", "nodeTemplatePath")
_PV: Final = "PersistentVolume"
_VOLUME_KEYS: Final = (("persistentVolumeTemplatePath", _PV), ("persistentVolumeClaimTemplatePath", _PV + "Claim"))


class OpTranslator:
    """The template registry and the per-op translation of one upstream file."""

    def __init__(self, source: str, base: Path) -> None:
        self.source, self.base = source, base
        self.templates: dict[str, dict[str, Any]] = {"node-default": DEFAULT_NODE, "pod-default": DEFAULT_POD}
        self.indexed: dict[str, str] = {}
        self.any_texts: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.problems: dict[str, str] = {}  # template name → why a workload using it cannot run
        self.lenient = False

    def fail(self, path: str, detail: str) -> PerfConfigError:
        return PerfConfigError(self.source, path, detail)

    def op(self, op: Any, path: str, default_pod: str) -> tuple[dict[str, Any], str]:
        """The op in ``workloads.py``'s shape, and why it cannot run ("" when it can)."""
        if not isinstance(op, dict):
            raise self.fail(path, f"expected an op (a mapping), got {type(op).__name__}")
        code = op.get("opcode")
        if not isinstance(code, str):
            raise self.fail(f"{path}.opcode", "expected a string")
        if code in LACKING:
            return op, f"opcode {code} needs {LACKING[code]}, which the emulator does not have"
        if code not in PLAYED:
            known = ", ".join(sorted(PLAYED | set(LACKING)))
            raise self.fail(f"{path}.opcode", f'unknown opcode "{code}" (known: {known})')
        for key in op:
            if key not in OP_FIELDS[code]:
                raise self.fail(
                    f"{path}.{key}", f"unknown field (a {code} op has {', '.join(sorted(OP_FIELDS[code]))})"
                )
        why = unplayable(code, op)
        if why:
            return op, why
        new = dict(op)
        if code == "createPodSets":
            inner = new.get("createPodsOp")
            if not isinstance(inner, dict) or inner.get("opcode") != "createPods":
                raise self.fail(f"{path}.createPodsOp", "expected a createPods op")
            new["createPodsOp"], why = self.op(inner, f"{path}.createPodsOp", default_pod)
            new["createPodsOp"].pop("opcode")
        if code == "createNamespaces" and "namespaceTemplatePath" in new:
            rel = new.pop("namespaceTemplatePath")
            new["labels"] = self.namespace_labels(rel, f"{path}.namespaceTemplatePath")
        expected = ""
        if code == "createResourceClaims":  # upstream's createResourceClaimsOp: createAny of claims, namespace set
            if not isinstance(new.get("namespace"), str) or not new["namespace"]:
                raise self.fail(f"{path}.namespace", "expected a namespace (upstream: Namespace must be set)")
            new["opcode"], code, expected = "createAny", "createAny", "ResourceClaim"
        if code in ("createAny", "updateAny"):
            rel = new.pop("templatePath", None)
            new["template"], problem = self.any_template(rel, f"{path}.templatePath", expected)
            why = why or problem
        for key, kind in _VOLUME_KEYS:
            if key in new:  # the harness writes them (volumes.py), as upstream's test driver does
                new[key.removesuffix("Path")], problem = self.any_template(new.pop(key), f"{path}.{key}", kind)
                why = why or problem
        for key in _PATH_KEYS:
            if key in new:
                name = self.template(new.pop(key), f"{path}.{key}", "Pod" if key == "podTemplatePath" else "Node")
                why = why or self.problems.get(name, "")
                new[key.removesuffix("Path")] = name
        if code == "createPods" and "podTemplate" not in new:
            new["podTemplate"] = default_pod
            why = why or self.problems.get(default_pod, "")
        if code == "churn":
            paths = new.pop("templatePaths", None)
            if not isinstance(paths, list) or not paths:
                raise self.fail(f"{path}.templatePaths", "expected a non-empty list of template paths")
            new["templates"] = []
            for t, rel in enumerate(paths):
                name = self.template(rel, f"{path}.templatePaths[{t}]")
                problem = self.problems.get(name, "")
                if self.kinds.get(name) not in (None, *TEMPLATE_KINDS, *KINDS_LACKING):
                    name, problem = self.any_template(rel, f"{path}.templatePaths[{t}]")  # e.g. a Service
                new["templates"].append(name)
                why = why or problem
        if code == "barrier":
            stage = new.get("stageRequirement", "Scheduled")
            if stage not in ("Scheduled", "Attempted"):
                raise self.fail(f"{path}.stageRequirement", f'expected "Scheduled" or "Attempted", got {stage!r}')
        return new, why

    def any_template(self, rel: Any, path: str, expected: str = "") -> tuple[str, str]:
        """``createAny``'s template (or one of kind ``expected``): its name, why it cannot be made."""
        file, text = self._template_text(rel, path)
        try:
            doc = probe(text, str(file))
        except TemplateError as err:
            return rel, f'template "{rel}": {err}'
        except YamlError as err:
            raise PerfConfigError(str(file), "", f"not valid YAML: {err.text}") from None
        kind = (doc.get("apiVersion"), doc.get("kind"))
        if expected and kind[1] != expected:
            raise self.fail(path, f'template "{rel}" is a {kind[1]}, expected a {expected}')
        if kind not in KINDS and not (kind[0] in BETA_VERSIONS and kind[1] in CONVERTED_KINDS):  # those: as v1
            return rel, f'template "{rel}" is a {kind[1]} ({kind[0]}), which the emulator does not have'
        lacking = KINDS_LACKING.get(str(kind[1]))
        if lacking and not expected:  # the kind is served, what upstream does with it is not yet
            return rel, f'template "{rel}" is a {kind[1]}: needs {lacking}, which the emulator lacks'
        self.any_texts[rel] = text
        return rel, ""

    def namespace_labels(self, rel: Any, path: str) -> dict[str, str]:
        """The labels of the Namespace template at ``rel``."""
        doc = self.read(rel, path)
        if doc.get("kind") != "Namespace":
            raise self.fail(path, f'template "{rel}" is a {doc.get("kind")}, expected a Namespace')
        labels = (doc.get("metadata") or {}).get("labels") or {}
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            raise PerfConfigError(str(self.base / rel), "metadata.labels", "expected a mapping of strings")
        return {str(k): v for k, v in labels.items()}

    def _template_text(self, rel: Any, path: str) -> tuple[Path, str]:
        """The file a template path names (relative to the config file) and its text."""
        if not isinstance(rel, str) or not rel:
            raise self.fail(path, "expected a template file path (relative to the config file)")
        file = self.base / rel
        try:
            return file, read_text(file)
        except ReadError as err:
            raise self.fail(path, f'cannot read template "{rel}": {err.reason}') from None

    def read(self, rel: Any, path: str) -> dict[str, Any]:
        file, text = self._template_text(rel, path)
        try:
            docs = load_documents(text, source=str(file)).docs
        except YamlError as err:
            raise PerfConfigError(str(file), "", f"not valid YAML: {err.text}") from None
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise PerfConfigError(str(file), "", "expected one YAML document holding one object")
        return docs[0]

    def template(self, rel: Any, path: str, expected: str = "") -> str:
        """Register the template file at ``rel`` under that name; of a kind other than
        ``expected`` it is an error, unless the emulator lacks the kind (then: skipped)."""
        name = self.register(rel, path)
        kind = self.kinds.get(name, "")
        if expected and kind and kind != expected and kind not in KINDS_LACKING:
            raise self.fail(path, f'template "{rel}" is a {kind}, expected a {expected}')
        return name

    def register(self, rel: Any, path: str) -> str:
        if not isinstance(rel, str) or not rel:
            raise self.fail(path, "expected a template file path (relative to the config file)")
        if rel in self.templates:
            return rel
        file = self.base / rel
        try:
            text = read_text(file)
        except ReadError as err:
            if not self.lenient:  # else every workload using it is skipped for its gates
                raise self.fail(path, f'cannot read template "{rel}": {err.reason}') from None
            self.problems[rel], self.templates[rel] = f'cannot read template "{rel}": {err.reason}', DEFAULT_POD
            return rel
        try:
            doc = probe(text, str(file))
        except TemplateError as err:
            self.problems[rel] = f'template "{rel}": {err}'
            self.templates[rel] = DEFAULT_POD
            return rel
        except YamlError as err:
            raise PerfConfigError(str(file), "", f"not valid YAML: {err.text}") from None
        if not doc:
            raise PerfConfigError(str(file), "", "expected one YAML document holding one object")
        docs = [doc]
        kind = self.kinds[rel] = str(doc.get("kind"))
        if kind in KINDS_LACKING:
            self.problems[rel] = f'template "{rel}" is a {kind}: needs {KINDS_LACKING[kind]}, which the emulator lacks'
            self.templates[rel] = DEFAULT_POD
        elif kind not in TEMPLATE_KINDS:
            self.problems[rel] = f'template "{rel}" is a {kind}, which the emulator\'s bench does not create'
            self.templates[rel] = DEFAULT_POD
        else:
            if has_actions(text):
                self.indexed[rel] = text  # rendered per op and object (resolve.py), not kept here
            volumes = (docs[0].get("spec") or {}).get("volumes") or []
            if any(isinstance(v, dict) and "ephemeral" in v for v in volumes):  # claims are mounted as they are
                self.problems[rel] = f'template "{rel}" mounts an ephemeral volume, no bench controller makes its claim'
            if not has_actions(text):
                self.templates[rel] = docs[0]
        return rel


def probe(text: str, source: str) -> dict[str, Any]:
    """The one object of a template file, its Go-template actions probed (``Template.probe``:
    to see its kind and volumes; the real values come per op and object); {} if the file is
    not one mapping. ``TemplateError`` for an action ``gotemplate.py`` does not understand."""
    if has_actions(text):
        text = parse(text).probe()
    docs = load_documents(text, source=source).docs
    return docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else {}
