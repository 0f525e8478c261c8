"""Resolving a checked ``WorkloadFile`` (``spec.py``) into ``Workload`` s of plain steps
(``steps.py``): every op checked once per test case (template names and kinds, parameters used
and defined, measured phases that do not overlap, durations, namespace names), then each workload's parameters
scaled and filled in. The per-object rendering of ``{{.Index}}`` templates (``render``,
``render_any``, re-exported here) is ``render.py``'s.

``scale`` multiplies every parameter (rounded, at least 1 unless 0): ``--scale 0.01`` runs a
workload at a hundredth of its size; a scaled parameter past ``MAX_SCALED_PARAM`` is refused.
It does not read files (``workloads.py``, ``upstream.py``) or run anything (``harness.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from agents.scheduler import ConfigError, build_registry, load_config_file
from emulator.app.bench.gotemplate import TemplateError, parse
from emulator.app.bench.gotemplate_funcs import filled_params
from emulator.app.bench.render import PRIORITY_CLASS_PREFIX, render, render_any, with_priority_class
from emulator.app.bench.spec import (
    MAX_SCALED_PARAM,
    AllocResourceClaimsOp,
    BarrierOp,
    ChurnOp,
    CreateAnyOp,
    CreateNamespacesOp,
    CreateNodesOp,
    CreatePodSetsOp,
    CreatePodsOp,
    CreateResourceDriverOp,
    DeletePodsOp,
    Op,
    SleepOp,
    StartCollectingMetricsOp,
    StopCollectingMetricsOp,
    TestCase,
    UpdateAnyOp,
    WorkloadError,
    WorkloadFile,
)
from emulator.app.bench.stages import selector
from emulator.app.bench.steps import (
    AllocClaimsStep,
    AnyStep,
    BarrierStep,
    ChurnStep,
    DeletePodsStep,
    DriverStep,
    MetricsStep,
    NamespacesStep,
    NodesStep,
    Params,
    PodsStep,
    SleepStep,
    Step,
    UpdateStep,
    Workload,
)
from emulator.app.bench.volumes import node_allocatable, volume_templates
from emulator.base.api.codec import ApiObject, ManifestError, object_from_dict
from emulator.base.api.core import Node, Pod
from emulator.base.api.labels import is_dns1123_label
from emulator.base.inputs import YamlError, load_documents
from emulator.base.runtime.clock import parse_duration

__all__ = ["PRIORITY_CLASS_PREFIX", "Resolver", "render", "render_any"]


def _is_duration(text: str) -> bool:
    try:
        parse_duration(text)
    except ValueError:
        return False
    return True


def _priority_classes(steps: Sequence[Step]) -> tuple[tuple[str, int], ...]:
    out: dict[str, int] = {}
    for step in steps:
        templates = step.templates if isinstance(step, ChurnStep) else (getattr(step, "template", None),)
        for t in templates:
            if isinstance(t, Pod) and t.spec.priority is not None and t.spec.priority_class_name:
                out.setdefault(t.spec.priority_class_name, t.spec.priority)
    return tuple(sorted(out.items()))


class Resolver:
    def __init__(self, source: str, spec: WorkloadFile, scale: float, *, upstream: bool = False) -> None:
        """``upstream``: a createAny object is only decoded here; the API server validates it
        when the op runs (upstream's file fails that workload, not the whole file)."""
        self.source, self.spec, self.scale, self.upstream = source, spec, scale, upstream
        self.templates: dict[str, Node | Pod] = {}
        for name, doc in spec.templates.items():
            try:
                obj = object_from_dict(doc, source=source, path=f"templates.{name}")
            except ManifestError as err:
                raise WorkloadError(source, err.path, err.detail) from None
            if not isinstance(obj, Node | Pod):
                raise WorkloadError(source, f"templates.{name}.kind", f"expected a Node or a Pod, got {obj.kind}")
            self.templates[name] = with_priority_class(obj)

    def fail(self, path: str, detail: str) -> WorkloadError:
        return WorkloadError(self.source, path, detail)

    def workloads(self) -> list[Workload]:
        out: list[Workload] = []
        seen: set[str] = set()
        for i, tc in enumerate(self.spec.test_cases):
            if tc.name in seen:
                raise self.fail(f"testCases[{i}].name", f'duplicate test case "{tc.name}"')
            seen.add(tc.name)
            out += self.test_case(tc, f"testCases[{i}]")
        return out

    def test_case(self, tc: TestCase, path: str) -> list[Workload]:
        used = self.check_template(tc, path)
        config = self.scheduler_config(tc, path)
        names: set[str] = set()
        out: list[Workload] = []
        for k, wl in enumerate(tc.workloads):
            wpath = f"{path}.workloads[{k}]"
            if wl.name in names:
                raise self.fail(f"{wpath}.name", f'duplicate workload "{wl.name}"')
            names.add(wl.name)
            for param, where in used.items():
                if param not in wl.params:
                    raise self.fail(f"{wpath}.params", f'missing "{param}" (used by {where})')
            for param, value in wl.params.items():
                if param in self.durations:
                    try:
                        parse_duration(value if isinstance(value, str) else "")
                    except ValueError:
                        raise self.fail(f"{wpath}.params.{param}", f"expected a duration, got {value!r}") from None
                elif param not in self.counted | self.integers:
                    pass  # read by a template only: any value
                elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise self.fail(f"{wpath}.params.{param}", f"expected an integer >= 0, got {value!r}")
                if param not in used:
                    uses = ", ".join(used) or "none"
                    raise self.fail(f"{wpath}.params.{param}", f"not used by the workload template (it uses: {uses})")
            params = {
                p: v if v == 0 or p not in self.counted else max(1, round(v * self.scale)) for p, v in wl.params.items()
            }
            for param, value in params.items():
                if param in self.counted and value > MAX_SCALED_PARAM:
                    raise self.fail(
                        f"{wpath}.params.{param}",
                        f"{wl.params[param]} at scale {self.scale:g} is {value}; "
                        f"at most {MAX_SCALED_PARAM} are allowed",
                    )
            steps = tuple(
                s
                for j, op in enumerate(tc.workload_template)
                for s in self.steps(op, j, tc, params, f"{path}.workloadTemplate[{j}]")
            )
            classes = _priority_classes(steps)
            name = f"{tc.name}/{wl.name}"
            out.append(
                Workload(name, tuple(wl.labels), wl.threshold, steps, self.scale, classes, scheduler_config=config)
            )
        return out

    def scheduler_config(self, tc: TestCase, path: str) -> str:
        """The test case's KubeSchedulerConfiguration file, checked (``load_config_file``); ""."""
        if tc.scheduler_config_path is None:
            return ""
        file = Path(self.source).parent / tc.scheduler_config_path
        try:
            load_config_file(file, build_registry())
        except ConfigError as err:
            if err.source:
                raise WorkloadError(err.source, err.path, err.detail) from None
            raise self.fail(f"{path}.schedulerConfigPath", err.detail) from None
        return str(file)

    def check_template(self, tc: TestCase, path: str) -> dict[str, str]:
        """Check the ops once; the parameters they use → where the first use is (those used
        as counts also in ``self.counted``)."""
        used: dict[str, str] = {}
        self.counted: set[str] = set()
        self.integers: set[str] = set()
        """Parameters read as integers but not scaled (a count multiplier, a batch size)."""
        self.durations: set[str] = set()
        measured = 0
        window = False
        for j, op in enumerate(tc.workload_template):
            opath = f"{path}.workloadTemplate[{j}]"
            if isinstance(op, CreatePodSetsOp):
                inner = op.create_pods_op
                if inner.collect_metrics:
                    raise self.fail(f"{opath}.createPodsOp.collectMetrics", "a pod set cannot be the measured phase")
                if inner.namespace is not None:
                    raise self.fail(f"{opath}.createPodsOp.namespace", "set by namespacePrefix")
                self.check_count(inner, f"{opath}.createPodsOp", f"workloadTemplate[{j}].createPodsOp", used)
                self.template(inner.pod_template or tc.default_pod_template, Pod, f"{opath}.createPodsOp.podTemplate")
                self.namespace(op.namespace_prefix + "-0", f"{opath}.namespacePrefix")
            if isinstance(op, CreateAnyOp | UpdateAnyOp) and op.count is None and op.count_param is None:
                pass  # one object, as upstream's default
            elif isinstance(
                op, CreateNodesOp | CreateNamespacesOp | CreatePodsOp | CreatePodSetsOp | CreateAnyOp | UpdateAnyOp
            ):
                if (op.count is None) == (op.count_param is None):
                    raise self.fail(opath, "exactly one of count and countParam is required")
                if op.count_param is not None:
                    if not re.fullmatch(r"\$[A-Za-z_]\w*", op.count_param):
                        raise self.fail(f"{opath}.countParam", f'expected "$name", got "{op.count_param}"')
                    used.setdefault(op.count_param[1:], f"workloadTemplate[{j}].countParam")
                    self.counted.add(op.count_param[1:])
            if isinstance(op, CreateNodesOp | CreatePodsOp | CreateAnyOp):
                for key, value in op.template_params.items():
                    if isinstance(value, str) and value.startswith("$"):
                        used.setdefault(value[1:], f"workloadTemplate[{j}].templateParams.{key}")
            match op:
                case CreateNodesOp():
                    self.template(op.node_template, Node, f"{opath}.nodeTemplate")
                    if op.label_node_prepare_strategy and op.unique_node_label_strategy:
                        raise self.fail(opath, "at most one of labelNodePrepareStrategy, uniqueNodeLabelStrategy")
                case CreateNamespacesOp():
                    self.namespace(op.prefix + "-0", f"{opath}.prefix")
                case CreatePodsOp():
                    self.template(op.pod_template or tc.default_pod_template, Pod, f"{opath}.podTemplate")
                    for key, param in (
                        ("countMultiplierParam", op.count_multiplier_param),
                        ("signatureBatchSizeParam", op.signature_batch_size_param),
                    ):
                        self.param(param, opath, key, j, used, self.integers)
                    self.param(op.steady_state_param, opath, "steadyStateParam", j, used, set())
                    self.param(op.duration_param, opath, "durationParam", j, used, self.durations)
                    if op.duration_param is None and not _is_duration(op.duration):
                        raise self.fail(f"{opath}.duration", f"expected a duration, got {op.duration!r}")
                    if op.namespace is not None:
                        self.namespace(op.namespace, f"{opath}.namespace")
                    if op.collect_metrics:
                        if op.skip_wait_to_completion:
                            raise self.fail(
                                opath, "collectMetrics and skipWaitToCompletion cannot be true at the same time"
                            )
                        measured = self.measure(measured, window, f"{opath}.collectMetrics")
                case ChurnOp():
                    for t, name in enumerate(op.templates):
                        if name in self.spec.any_templates:
                            self.any_template(name, f"{opath}.templates[{t}]")
                        else:
                            self.template(name, None, f"{opath}.templates[{t}]")
                    if op.mode == "recreate" and op.number == 0:
                        raise self.fail(f"{opath}.number", "recreate needs number >= 1 (the objects kept per template)")
                    if op.namespace is not None:
                        self.namespace(op.namespace, f"{opath}.namespace")
                case BarrierOp():
                    for n, ns in enumerate(op.namespaces):
                        self.namespace(ns, f"{opath}.namespaces[{n}]")
                case DeletePodsOp():
                    self.namespace(op.namespace, f"{opath}.namespace")
                case CreateAnyOp() | UpdateAnyOp():
                    self.any_template(op.template, f"{opath}.template")
                    if op.namespace is not None:
                        self.namespace(op.namespace, f"{opath}.namespace")
                case SleepOp():
                    self.param(op.duration_param, opath, "durationParam", j, used, self.durations)
                    if op.duration_param is None and not _is_duration(op.duration):
                        raise self.fail(f"{opath}.duration", f"expected a duration, got {op.duration!r}")
                    try:
                        parse_duration(op.duration)
                    except ValueError as err:
                        raise self.fail(f"{opath}.duration", str(err)) from None
                case StartCollectingMetricsOp():
                    measured = self.measure(measured, window, opath)
                    window = True
                    for n, ns in enumerate(op.namespaces):
                        self.namespace(ns, f"{opath}.namespaces[{n}]")
                case CreateResourceDriverOp():
                    self.param(op.max_claims_per_node_param, opath, "maxClaimsPerNodeParam", j, used, self.integers)
                    if (op.max_claims_per_node is None) == (op.max_claims_per_node_param is None):
                        raise self.fail(opath, "exactly one of maxClaimsPerNode and maxClaimsPerNodeParam is required")
                case StopCollectingMetricsOp():
                    if not window:
                        raise self.fail(opath, "missing startCollectingMetrics operation before stopping")
                    window = False
        if measured == 0:
            raise self.fail(
                f"{path}.workloadTemplate",
                "no op collects metrics (a createPods op with collectMetrics: true, or startCollectingMetrics)",
            )
        return used

    def param(self, param: str | None, opath: str, key: str, j: int, used: dict[str, str], kind: set[str]) -> None:
        """An op's ``<key>: $name`` (None: not given): checked, noted as used and of ``kind``."""
        if param is None:
            return
        if not re.fullmatch(r"\$[A-Za-z_]\w*", param):
            raise self.fail(f"{opath}.{key}", f'expected "$name", got "{param}"')
        used.setdefault(param[1:], f"workloadTemplate[{j}].{key}")
        kind.add(param[1:])

    def measure(self, measured: int, window: bool, path: str) -> int:
        """One more measured phase at ``path`` (each is reported on its own, ``phases.py``);
        upstream refuses a phase opened while a ``startCollectingMetrics`` window is open."""
        if window:
            raise self.fail(path, "metrics collection is overlapping (a startCollectingMetrics window is open)")
        return measured + 1

    def template(self, name: str, kind: type[Node] | type[Pod] | None, path: str) -> Node | Pod | None:
        """The template ``name``, checked to be of ``kind``; None for a Go-template one (checked
        when an op renders it, with its parameters: ``instance``)."""
        obj = self.templates.get(name)
        if obj is None and name in self.spec.indexed_templates:
            return None
        if obj is None:
            known = ", ".join(self.templates) or "none"
            raise self.fail(path, f'unknown template "{name}" (templates: {known})')
        if kind is not None and not isinstance(obj, kind):
            raise self.fail(path, f'template "{name}" is a {obj.kind}, expected a {kind.__name__}')
        return obj

    def any_template(self, name: str, path: str) -> None:
        text = self.spec.any_templates.get(name)
        if text is None:
            raise self.fail(path, f'unknown createAny template "{name}"')
        try:
            parse(text)
        except TemplateError as err:
            raise self.fail(path, f'template "{name}": {err}') from None

    def rendered(
        self, name: str, text: str, path: str, count: int, params: Params, *, validated: bool = True
    ) -> ApiObject:
        """Index 0 of the template ``name`` (its ``text``) for an op at ``path``."""
        try:
            return render_any(text, 0, count=count, params=params, source=self.source, validated=validated)
        except TemplateError as err:
            raise self.fail(path, f'template "{name}": {err}') from None
        except ManifestError as err:
            raise self.fail(f"templates.{name}" + (f".{err.path}" if err.path else ""), err.detail) from None
        except YamlError as err:
            raise self.fail(f"templates.{name}", f"not valid YAML: {err.text}") from None

    def typed(self, name: str, kind: type[Any], path: str, made: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
        """The createAny-style template ``name`` (no actions) as an object of ``kind``, its
        document first ``made`` into object 0 (e.g. a PersistentVolume, named per object)."""
        self.any_template(name, path)
        try:
            docs = load_documents(self.spec.any_templates[name], source=self.source).docs
            doc = docs[0] if len(docs) == 1 else None
            if isinstance(doc, dict):
                doc = made(doc)
            obj = object_from_dict(doc, source=self.source)
        except ManifestError as err:
            raise self.fail(f"templates.{name}" + (f".{err.path}" if err.path else ""), err.detail) from None
        except YamlError as err:
            raise self.fail(f"templates.{name}", f"not valid YAML: {err.text}") from None
        if not isinstance(obj, kind):
            raise self.fail(path, f'template "{name}" is a {obj.kind}, expected a {kind.__name__}')
        return obj

    def namespace(self, name: str, path: str) -> None:
        if not is_dns1123_label(name):
            raise self.fail(path, f'"{name}" is not a valid namespace name (a DNS-1123 label)')

    def check_count(self, op: CreatePodsOp, opath: str, where: str, used: dict[str, str]) -> None:
        if (op.count is None) == (op.count_param is None):
            raise self.fail(opath, "exactly one of count and countParam is required")
        if op.count_param is not None:
            if not re.fullmatch(r"\$[A-Za-z_]\w*", op.count_param):
                raise self.fail(f"{opath}.countParam", f'expected "$name", got "{op.count_param}"')
            used.setdefault(op.count_param[1:], f"{where}.countParam")
            self.counted.add(op.count_param[1:])
        for key, value in op.template_params.items():
            if isinstance(value, str) and value.startswith("$"):
                used.setdefault(value[1:], f"{where}.templateParams.{key}")

    def steps(self, op: Op, j: int, tc: TestCase, params: dict[str, Any], path: str) -> tuple[Step, ...]:
        if not isinstance(op, CreatePodSetsOp):
            return (self.step(op, j, tc, params, path),)
        n = op.count if op.count is not None else params[(op.count_param or "$")[1:]]
        inner = f"{path}.createPodsOp"
        return tuple(
            self.step(replace(op.create_pods_op, namespace=f"{op.namespace_prefix}-{k}"), j, tc, params, inner)
            for k in range(n)
        )

    def instance(
        self, name: str, kind: type[Node] | type[Pod] | None, path: str, count: int, params: Params
    ) -> Node | Pod:
        """The object at index 0 of an op's template ``name`` (checked: it renders with the op's
        ``templateParams`` and is a Node or Pod, of ``kind`` when given)."""
        text = self.spec.indexed_templates.get(name)
        if text is None:
            obj = self.template(name, kind, path)
            assert obj is not None
            return obj
        got = self.rendered(name, text, path, count, params)
        if not isinstance(got, kind or (Node | Pod)):
            expected = kind.__name__ if kind else "Node or a Pod"
            raise self.fail(path, f'template "{name}" is a {got.kind}, expected a {expected}')
        return with_priority_class(got)

    def step(self, op: Op, j: int, tc: TestCase, params: dict[str, Any], path: str) -> Step:
        def count(c: int | None, param: str | None) -> int:
            return c if c is not None else params[(param or "$")[1:]]

        default_ns = f"namespace-{j}"
        match op:
            case CreateNodesOp():
                n = count(op.count, op.count_param)
                tp = filled_params(op.template_params, params)
                node = self.instance(op.node_template, Node, f"{path}.nodeTemplate", n, tp)
                assert isinstance(node, Node)
                lab, uniq = op.label_node_prepare_strategy, op.unique_node_label_strategy
                return NodesStep(
                    n,
                    node,
                    lab.label_key if lab else "",
                    tuple(lab.label_values) if lab else (),
                    uniq.label_key if uniq else "",
                    self.spec.indexed_templates.get(op.node_template, ""),
                    tp,
                    node_allocatable(op.node_allocatable_strategy, self.fail, f"{path}.nodeAllocatableStrategy"),
                )
            case CreateNamespacesOp():
                n = count(op.count, op.count_param)
                return NamespacesStep(tuple(f"{op.prefix}-{i}" for i in range(n)), tuple(sorted(op.labels.items())))
            case CreatePodsOp():
                n = count(op.count, op.count_param)
                if op.count_multiplier_param is not None:
                    n *= params[op.count_multiplier_param[1:]]
                name = op.pod_template or tc.default_pod_template
                tp = filled_params(op.template_params, params)
                pod = self.instance(name, Pod, f"{path}.podTemplate", n, tp)
                assert isinstance(pod, Pod)
                indexed = self.spec.indexed_templates.get(name, "")
                wait = not op.skip_wait_to_completion
                batch = (
                    count(op.signature_batch_size or None, op.signature_batch_size_param)
                    if (op.signature_batch_size or op.signature_batch_size_param)
                    else 0
                )
                ns = op.namespace or default_ns
                pv, pvc = volume_templates(op, self.typed, self.fail, path)
                steady = params[op.steady_state_param[1:]] if op.steady_state_param else op.steady_state
                if not isinstance(steady, bool):
                    raise self.fail(f"{path}.steadyStateParam", f"expected true or false, got {steady!r}")
                seconds = parse_duration(params[op.duration_param[1:]] if op.duration_param else op.duration)
                steady_for = seconds if steady else None
                return PodsStep(n, pod, ns, op.collect_metrics, wait, indexed, tp, batch, pv, pvc, steady_for)
            case ChurnOp():
                objs = tuple(
                    render_any(self.spec.any_templates[t], 0)
                    if t in self.spec.any_templates
                    else self.instance(t, None, f"{path}.templates", 1, ())
                    for t in op.templates
                )
                return ChurnStep(op.mode, objs, op.interval_milliseconds / 1000, op.number, op.namespace or default_ns)
            case BarrierOp():
                return BarrierStep(
                    tuple(op.namespaces), op.stage_requirement == "Attempted", selector(op.label_selector)
                )
            case SleepOp():
                return SleepStep(parse_duration(params[op.duration_param[1:]] if op.duration_param else op.duration))
            case StartCollectingMetricsOp():
                return MetricsStep(True, tuple(op.namespaces), selector(op.label_selector))
            case StopCollectingMetricsOp():
                return MetricsStep(False)
            case DeletePodsOp():
                wait = not op.skip_wait_to_completion
                return DeletePodsStep(op.namespace, op.delete_pods_per_second, wait, selector(op.label_selector))
            case CreateAnyOp():
                n = 1 if op.count is None and op.count_param is None else count(op.count, op.count_param)
                tp = filled_params(op.template_params, params)
                text = self.spec.any_templates[op.template]
                self.rendered(op.template, text, f"{path}.template", n, tp, validated=not self.upstream)
                return AnyStep(n, self.spec.any_templates[op.template], op.namespace or "", tp)
            case UpdateAnyOp():
                n = 1 if op.count is None and op.count_param is None else count(op.count, op.count_param)
                resize = "resize" in op.subresources
                text = self.spec.any_templates[op.template]
                self.rendered(op.template, text, f"{path}.template", n, (), validated=not resize)
                return UpdateStep(
                    n,
                    text,
                    op.namespace or "",
                    op.update_per_second,
                    "status" in op.subresources,
                    resize,
                )
            case CreateResourceDriverOp():
                return DriverStep(op.driver_name, op.nodes, count(op.max_claims_per_node, op.max_claims_per_node_param))
            case AllocResourceClaimsOp():
                return AllocClaimsStep(op.namespace)
            case CreatePodSetsOp():
                raise AssertionError("expanded by steps()")
