"""Upstream's own scheduler_perf configs (kubernetes/kubernetes
``test/integration/scheduler_perf/*/performance-config.yaml``), read as they are, translated into
the shape ``resolve.py`` resolves (``spec.py``'s schema) (``templates`` + ``testCases``).

Upstream's file is a YAML list of test cases whose ops name their manifests by path, relative
to the config file (``podTemplatePath``, ``nodeTemplatePath``, ``defaultPodTemplatePath``,
``templatePaths``, ``namespaceTemplatePath``). ``translate`` reads each template file once,
registers it under its relative path as a template name and rewrites the op to refer to it;
ops without a template get upstream's defaults (``DEFAULT_NODE``, ``DEFAULT_POD``). A
Namespace template gives its labels to the namespaces ``createNamespaces`` makes. Which
fields and opcodes upstream's format has, which are played and which a workload cannot run
without: ``upstream_fields.py`` (an unknown field is refused: upstream decodes strictly). The
``persistentVolume(Claim)TemplatePath`` files are kept as text (``volumes.py`` writes them).

A workload is never run differently from upstream's: when it needs what the emulator lacks or
what this reader does not play yet, it is kept as a ``Skipped`` entry with the reason (an
opcode in ``LACKING``, a field ``unplayable`` names, a createAny of a kind in ``KINDS_LACKING``,
a Go-template action ``gotemplate.py`` does not understand, a feature gate
``gates.skip_reason`` names; a test case skipped for its gates may name a missing template,
as upstream reads templates only when it runs a workload). Templates with actions
(``{{.Index}}``, ``{{.Count}}``, ``templateParams`` fields, upstream's ``AddInt``/``Mod``/...)
are passed on as text (``indexedTemplates``) and rendered per op and object by
``resolve.render``. ``featureGates`` (the test case's merged with the workload's) are passed
along: the DRA ones are honoured (``dra.py``), the report says which others it did not honour.

It owns the test cases' and workloads' translation and ``load_upstream`` (translate, resolve
with ``resolve.Resolver``, errors pointed back at the upstream file or template); one op and its
template files are ``upstream_ops.py``'s, resolving counts is ``resolve.py``'s.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from dataclasses import replace as with_fields
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from emulator.app.bench.gates import skip_reason
from emulator.app.bench.resolve import Resolver
from emulator.app.bench.spec import WorkloadError, WorkloadFile
from emulator.app.bench.steps import Workload
from emulator.app.bench.upstream_fields import (
    CASE_FIELDS,
    WORKLOAD_FIELDS,
    FieldError,
    check_selector,
    client_limits,
    metrics_config,
    threshold,
)
from emulator.app.bench.upstream_ops import DEFAULT_NODE, DEFAULT_POD, OpTranslator, PerfConfigError
from emulator.base.inputs import ReadError, YamlError, load_documents, msgspec_error, read_text

__all__ = ["DEFAULT_NODE", "DEFAULT_POD", "PerfConfigError", "Skipped", "Translation", "load_upstream", "translate"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Skipped:
    name: str
    """``<testCase>/<workload>``."""
    labels: tuple[str, ...]
    reason: str


@dataclass(slots=True)
class Translation:
    document: dict[str, Any]
    """``{templates, testCases}``: the workloads that can run, in ``spec.py``'s shape."""
    skipped: list[Skipped] = field(default_factory=list)
    feature_gates: dict[str, dict[str, bool]] = field(default_factory=dict)
    """``<testCase>/<workload>`` → the gates it sets (test case's, then workload's), skipped too."""
    metrics: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    """``<testCase>/<workload>`` → ``metricsCollectorConfig`` reduced (absent: upstream's default)."""
    client: dict[str, tuple[float, int]] = field(default_factory=dict)
    """``<testCase>/<workload>`` → ``schedulerApiClientQPS``/``Burst`` (``ratelimit.py``); absent: unlimited."""
    where: dict[str, str] = field(default_factory=dict)
    """A path in ``document`` (``testCases[k]``) → the path in the upstream file (``[i]``)."""


def load_upstream(doc: list[Any], *, source: str, scale: float) -> list[Workload]:
    """Upstream's own performance-config.yaml (a list of test cases; ``upstream.py``)."""
    try:
        tr = translate(doc, source=source, base=Path(source).parent)
    except PerfConfigError as err:
        raise WorkloadError(err.file, err.path, err.detail) from None
    try:
        spec = msgspec.convert(tr.document, WorkloadFile)
    except msgspec.ValidationError as err:
        msg, at = msgspec_error(err)
        raise _upstream_path(WorkloadError(source, at, msg), tr, source) from None
    try:
        resolved = Resolver(source, spec, scale, upstream=True).workloads()
    except WorkloadError as err:
        raise _upstream_path(err, tr, source) from None
    gates = {name: tuple(sorted(g.items())) for name, g in tr.feature_gates.items()}
    out = [
        with_fields(
            w, feature_gates=gates.get(w.name, ()), metrics=tr.metrics.get(w.name), client=tr.client.get(w.name)
        )
        for w in resolved
    ]
    out += [
        Workload(s.name, s.labels, None, (), scale, skipped=s.reason, feature_gates=gates.get(s.name, ()))
        for s in tr.skipped
    ]
    return out


def _upstream_path(err: WorkloadError, tr: Translation, source: str) -> WorkloadError:
    """``err`` pointed into the upstream file (``testCases[k]`` → ``[i]``) or a template file
    (``templates.<relative path>``), with the line and column there."""
    m = re.match(r"testCases\[\d+\]", err.path)
    if m and m.group(0) in tr.where:
        # The template fields were renamed from upstream's paths: point at those.
        rest = re.sub(r"\.(podTemplate|nodeTemplate|template)(?=$|\.)", r".\1Path", err.path[m.end() :])
        rest = re.sub(r"\.templates(?=\[)", ".templatePaths", rest)
        return WorkloadError(source, tr.where[m.group(0)] + rest, err.detail)
    names = sorted([*tr.document["templates"], *tr.document["anyTemplates"]], key=len, reverse=True)
    rel = next((n for n in names if err.path.startswith(f"templates.{n}")), None)
    if rel is None:
        return err
    rest = err.path.removeprefix(f"templates.{rel}").removeprefix(".")
    file = Path(source).parent / rel
    out = WorkloadError(str(file), rest, err.detail)
    with contextlib.suppress(ReadError, YamlError):
        where = load_documents(read_text(file), source=str(file)).locate(rest) if rest else None
        if where is not None:
            out.locate(*where)
    return out


def translate(doc: list[Any], *, source: str, base: Path) -> Translation:
    """The upstream file ``doc`` (test cases) read from ``source``, template paths under ``base``."""
    return _Translator(source, base).run(doc)


class _Translator(OpTranslator):
    def named(self, entry: Any, path: str, what: str, keys: frozenset[str]) -> str:
        """``entry``'s name, checking it is a mapping of ``keys`` with a ``name`` (a case, a workload)."""
        if not isinstance(entry, dict):
            raise self.fail(path, f"expected {what} (a mapping), got {type(entry).__name__}")
        for key in entry:
            if key not in keys:
                raise self.fail(f"{path}.{key}", "unknown field")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{path}.name", "expected a non-empty string")
        return name

    def run(self, doc: list[Any]) -> Translation:
        out = Translation(
            {
                "templates": self.templates,
                "indexedTemplates": self.indexed,
                "anyTemplates": self.any_texts,
                "testCases": [],
            }
        )
        for i, case in enumerate(doc):
            path = f"[{i}]"
            name = self.named(case, path, "a test case", CASE_FIELDS)
            ops = case.get("workloadTemplate")
            workloads = case.get("workloads")
            if not isinstance(ops, list) or not ops:
                raise self.fail(f"{path}.workloadTemplate", "expected a non-empty list of ops")
            if not isinstance(workloads, list) or not workloads:
                raise self.fail(f"{path}.workloads", "expected a non-empty list of workloads")
            case_gates = self.gates(case.get("featureGates", {}), f"{path}.featureGates")
            self.lenient = bool(skip_reason(case_gates))  # its templates are never rendered
            metrics = None
            if case.get("metricsCollectorConfig") is not None:
                metrics = self.check(metrics_config, case["metricsCollectorConfig"], f"{path}.metricsCollectorConfig")
            self.check(
                check_selector, case.get("defaultThresholdMetricSelector"), f"{path}.defaultThresholdMetricSelector"
            )
            default_pod = "pod-default"
            if "defaultPodTemplatePath" in case:
                default_pod = self.template(case["defaultPodTemplatePath"], f"{path}.defaultPodTemplatePath", "Pod")
            reason = ""
            client = self.check(client_limits, case, path)
            new_ops: list[dict[str, Any]] = []
            used: set[str] = set()
            for j, op in enumerate(ops):
                new_op, why = self.op(op, f"{path}.workloadTemplate[{j}]", default_pod)
                reason = reason or why
                new_ops.append(new_op)
                for counted in (new_op, new_op.get("createPodsOp") or {}):
                    for key in (
                        "countParam",
                        "countMultiplierParam",
                        "signatureBatchSizeParam",
                        "durationParam",
                        "maxClaimsPerNodeParam",
                        "steadyStateParam",
                    ):
                        if isinstance(counted.get(key), str):
                            used.add(counted[key].lstrip("$"))
                    template_params = counted.get("templateParams")
                    if isinstance(template_params, dict):
                        used |= {v[1:] for v in template_params.values() if isinstance(v, str) and v.startswith("$")}
            config_path = case.get("schedulerConfigPath")
            if config_path is not None and (not isinstance(config_path, str) or not config_path):
                raise self.fail(f"{path}.schedulerConfigPath", "expected a file path (relative to the config file)")
            kept: list[dict[str, Any]] = []
            for k, wl in enumerate(workloads):
                wpath = f"{path}.workloads[{k}]"
                wname = self.named(wl, wpath, "a workload", WORKLOAD_FIELDS)
                labels = wl.get("labels", [])
                if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
                    raise self.fail(f"{wpath}.labels", "expected a list of strings")
                full = f"{name}/{wname}"
                gates = case_gates | self.gates(wl.get("featureGates", {}), f"{wpath}.featureGates")
                self.check(check_selector, wl.get("thresholdMetricSelector"), f"{wpath}.thresholdMetricSelector")
                out.feature_gates[full] = gates
                if metrics is not None:
                    out.metrics[full] = metrics
                if client is not None:
                    out.client[full] = client
                if why := skip_reason(gates) or reason:
                    out.skipped.append(Skipped(full, tuple(labels), why))
                    continue
                params = wl.get("params", {})
                if not isinstance(params, dict):
                    raise self.fail(f"{wpath}.params", "expected a mapping of parameter names to values")
                kept.append(
                    {
                        "name": wname,
                        "labels": labels,
                        "params": {p: v for p, v in params.items() if p in used},
                        **(
                            {"threshold": self.check(threshold, wl["threshold"], f"{wpath}.threshold")}
                            if "threshold" in wl
                            else {}
                        ),
                    }
                )
            if kept:
                out.where[f"testCases[{len(out.document['testCases'])}]"] = path
                out.document["testCases"].append(
                    {
                        "name": name,
                        "workloadTemplate": new_ops,
                        "workloads": kept,
                        "defaultPodTemplate": default_pod,
                        **({"schedulerConfigPath": config_path} if config_path else {}),
                    }
                )
        return out

    def check(self, fn: Callable[[Any], T], value: Any, path: str) -> T:
        """``fn(value)``, its ``FieldError`` turned into this file's error at ``path``."""
        try:
            return fn(value)
        except FieldError as err:
            raise self.fail(path + err.path, err.detail) from None

    def gates(self, value: Any, path: str) -> dict[str, bool]:
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in value.items()):
            raise self.fail(path, "expected a mapping of feature gate names to true or false")
        return dict(value)
