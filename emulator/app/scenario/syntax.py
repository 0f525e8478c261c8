"""The scenario's own syntax: steps, expectations and faults, and the checks across fields.

What this module owns: ``ScenarioWalker``, the schema walk (``walker``) taught the scenario's
one-key mappings: steps (one verb each, ``at`` never going backwards; verbs whose YAML body is
one field of the Struct), expectations, faults (their kinds; one-of fields; time windows), and
the checks made once a Struct is built: generated names valid for their whole count,
``labelValues``, ``delete``'s name-or-selector and namespace, the kinds ``scale``, ``update``,
``waitFor`` and ``workloadsReady`` take, the fields of a merge patch that name the object, the
kubelet's ``nodeStatusReportFrequency`` default, and each ``scheduler`` fault's configuration
(decoded after the walk). It does not read files (``readers``) nor replay the run's writes.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from emulator.app.scenario.instancetypes import instance_types_entry
from emulator.app.scenario.readers import ScenarioError
from emulator.app.scenario.replay import load_node_file, load_replay
from emulator.app.scenario.schema import (
    SCALABLE_KINDS,
    CreatePods,
    Delete,
    Drain,
    Expectation,
    FaultSpec,
    GroupDevices,
    ImagePullSlow,
    InstanceTypesFile,
    JobsComplete,
    KubeletConfig,
    MaxPodsPerNode,
    NodeFile,
    NodeGroup,
    NodeHeartbeatStop,
    NodePartition,
    NoOvercommit,
    ObjectCount,
    PodCount,
    PodOnNode,
    PodsOnNodes,
    Replay,
    Scale,
    Scenario,
    SchedulerConfig,
    SchedulerInstances,
    Step,
    TopologySpread,
    Update,
    WaitFor,
    WatchCut,
    WorkloadsReady,
    autoscaling_problems,
    autoscaling_warnings,
    device_problems,
    generated_name,
    load_problems,
    storage_problems,
)
from emulator.app.scenario.syntaxtables import (
    API_KINDS,
    BODY_FIELD,
    DELETABLE,
    EXPECTATIONS,
    FAULT_EXAMPLE,
    FAULTS,
    IMMUTABLE_PATCH,
    POD_COUNTS,
    UPDATABLE,
    VERBS,
    WORKLOAD_FIELDS,
)
from emulator.app.scenario.totals import limit_errors
from emulator.app.scenario.trace_gpus import gpu_sharing_problems, gpu_sharing_warnings
from emulator.app.scenario.walker import Hook, Reader, SchemaWalker
from emulator.app.scenario.workload_status import READY_KINDS
from emulator.base.api.core import LabelSelector, Node
from emulator.base.api.errors import Invalid
from emulator.base.api.labels import dns1123_label_errors, qualified_name_errors
from emulator.base.api.labelselector import validate_label_selector
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.validation import validate
from emulator.base.apiserver.server import CLUSTER_SCOPED
from emulator.base.inputs import join_path, show
from emulator.base.runtime.clock import format_duration

__all__ = ["ScenarioWalker"]


class ScenarioWalker(SchemaWalker):
    """The walk of one scenario file (``file``; its references are relative to ``base_dir``)."""

    def __init__(self, file: str, base_dir: Path) -> None:
        super().__init__(file, base_dir)
        after: dict[type[Any], Hook] = {
            NodeGroup: self._node_group,
            CreatePods: self._create_pods,
            KubeletConfig: self._kubelet,
            Delete: self._delete,
            Scale: self._scale,
            Update: self._update,
            WaitFor: self._wait_for,
            Drain: self._drain,
            Replay: self._replay,
            WorkloadsReady: self._workloads_ready,
            TopologySpread: self._topology_spread,
            ObjectCount: self._object_count,
            **dict.fromkeys(FAULTS.values(), self._fault),
        }
        readers: dict[Any, Reader] = {
            list[Step]: self.steps,
            list[NodeGroup | NodeFile]: self.node_entries,
            list[Expectation]: self.expectations,
            FaultSpec: self.fault,
            list[GroupDevices]: self.devices,
            InstanceTypesFile: lambda value, path: instance_types_entry(self, value, path),
        }
        self.after.update(after)
        self.readers.update(readers)
        self.scheduler_faults: list[tuple[str, SchedulerConfig]] = []  # (path, its own configuration)

    def scenario(self, doc: Any) -> Scenario:
        """The Scenario of the document ``doc``; the run's writes are not replayed here."""
        if not isinstance(doc, dict):
            self.fail("", f"expected a scenario (a mapping with name, nodes, steps, ...), got {show(doc)}")
        scenario: Scenario = self.struct(Scenario, doc, "")
        for path, detail in limit_errors(scenario):  # totals and the horizon: see totals.py
            self.fail(path, detail)
        for path, detail in (*storage_problems(scenario.storage), *load_problems(scenario.load)):
            self.fail(path, detail)
        for path, detail in gpu_sharing_problems(scenario):  # a trace's nodes and pods agree
            self.fail(path, detail)
        self.warnings.extend(gpu_sharing_warnings(scenario, self.file))
        for path, detail in autoscaling_problems(scenario, "autoscaling"):  # node groups, expanders
            self.fail(path, detail)
        self.warnings.extend(f"{self.file}: {path}: {text}" for path, text in autoscaling_warnings(scenario))
        return scenario

    def steps(self, value: Any, path: str) -> list[Step]:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of steps, got {show(value)}")
        out: list[Step] = []
        last: tuple[float, str] | None = None
        for i, raw in enumerate(value):
            p = join_path(path, i)
            if not isinstance(raw, dict):
                self.fail(p, f"expected a step (a mapping like {{sleep: 5s}}), got {show(raw)}")
            for key in raw:
                if key != "at" and key not in VERBS:
                    self.fail(p, f"unknown step verb {show(key)}; expected one of: {', '.join(VERBS)}")
            verbs = [v for v in VERBS if v in raw]
            if len(verbs) != 1:
                got = f"{len(verbs)}: {', '.join(verbs)}" if verbs else f"none; expected one of: {', '.join(VERBS)}"
                self.fail(p, f"a step has exactly one verb, got {got}")
            at = self.duration(raw["at"], join_path(p, "at")) if raw.get("at") is not None else None
            if at is not None:
                if last is not None and at < last[0]:
                    self.fail(
                        join_path(p, "at"),
                        f"{format_duration(at)} is before {last[1]} ({format_duration(last[0])}); "
                        "step times must not go backwards",
                    )
                last = (at, join_path(p, "at"))
            verb = verbs[0]
            cls, body_path = VERBS[verb], join_path(p, verb)
            if verb in BODY_FIELD:
                field = next(f for f in msgspec.structs.fields(cls) if f.name == BODY_FIELD[verb])
                body = self.value(field.type, raw[verb], body_path)
                out.append(cls(at=at, **{field.name: body}))
            else:
                filled: dict[str, Any] = {"pods": [], "priority_classes": {}, "objects": []}  # from the file
                preset: dict[str, Any] = {"at": at, **(filled if cls is Replay else {})}
                out.append(self.struct(cls, raw[verb], body_path, preset))
        return out

    def node_entries(self, value: Any, path: str) -> list[NodeGroup | NodeFile]:
        """``nodes``: groups from a template, or ``{fromFile, format}`` node lists of a trace."""
        if not isinstance(value, list):
            self.fail(path, f"expected a list, got {show(value)}")
        out: list[NodeGroup | NodeFile] = []
        for i, raw in enumerate(value):
            p = join_path(path, i)
            if isinstance(raw, dict) and "fromFile" in raw:
                entry: NodeFile = self.struct(NodeFile, raw, p, {"items": [], "gpus": {}})  # items: from its file
                out.append(load_node_file(entry, self.base_dir, p, self.file))
            else:
                out.append(self.struct(NodeGroup, raw, p))
        return out

    def devices(self, value: Any, path: str) -> list[GroupDevices]:
        """A node group's ``devices``: one driver's mapping, or a list of them."""
        if isinstance(value, dict):
            return [self.struct(GroupDevices, value, path)]
        if not isinstance(value, list):
            self.fail(path, f"expected a mapping (driver, count, attributes, ...) or a list of them, got {show(value)}")
        return [self.struct(GroupDevices, v, join_path(path, i)) for i, v in enumerate(value)]

    def expectations(self, value: Any, path: str) -> list[Expectation]:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of expectations, got {show(value)}")
        out: list[Expectation] = []
        for i, raw in enumerate(value):
            p = join_path(path, i)
            if not isinstance(raw, dict) or not raw:
                self.fail(p, f"expected a one-key mapping like {{podsRunning: {{count: 3}}}}, got {show(raw)}")
            if len(raw) != 1:
                self.fail(p, f"an expectation has exactly one key, got {len(raw)}: {', '.join(map(str, raw))}")
            ((key, body),) = raw.items()
            bp = join_path(p, key)
            if key in POD_COUNTS:
                out.append(self.struct(PodCount, body, bp, {"condition": key}))
            elif key == "maxPodsPerNode":
                out.append(self.struct(MaxPodsPerNode, body, bp))
            elif key == "topologySpread":
                out.append(self.struct(TopologySpread, body, bp))
            elif key == "podsOnNodes":
                out.append(self.struct(PodsOnNodes, body, bp))
            elif key == "podOnNode":
                m = self.mapping(body, bp, ["pod", "node"], ["pod", "node"])
                pod: str = self.value(str, m["pod"], join_path(bp, "pod"))
                node: str = self.value(str, m["node"], join_path(bp, "node"))
                ns, sep, name = pod.rpartition("/")
                if not name or "/" in ns or (sep and not ns):
                    self.fail(join_path(bp, "pod"), f'expected "namespace/name" or "name", got {show(pod)}')
                out.append(PodOnNode(name=name, node=node, namespace=ns or "default"))
            elif key == "workloadsReady":
                out.append(self.struct(WorkloadsReady, {} if body is None else body, bp))
            elif key == "jobsComplete":
                out.append(self.struct(JobsComplete, {} if body is None else body, bp))
            elif key == "objectCount":
                out.append(self.struct(ObjectCount, body, bp))
            elif key == "noOvercommit":
                if body is not True:
                    self.fail(bp, f"expected true, got {show(body)}")
                out.append(NoOvercommit())
            else:
                self.fail(p, f"unknown expectation {show(key)}; expected one of: {', '.join(EXPECTATIONS)}")
        return out

    def fault(self, value: Any, path: str) -> FaultSpec:
        if not isinstance(value, dict) or not value:
            self.fail(path, f"expected a one-key mapping like {FAULT_EXAMPLE}, got {show(value)}")
        if len(value) != 1:
            self.fail(path, f"a fault has exactly one key, got {len(value)}: {', '.join(map(str, value))}")
        ((key, body),) = value.items()
        cls = FAULTS.get(key)
        if cls is None:
            self.fail(path, f"unknown fault {show(key)}; expected one of: {', '.join(FAULTS)}")
        fault: FaultSpec = self.struct(cls, {} if body is None else body, join_path(path, key))
        return fault

    # checks after a Struct is built ---------------------------------------------------

    def _check_prefix(self, prefix: str, count: int, path: str) -> None:
        last = generated_name(prefix, count - 1)
        try:
            validate(Node(metadata=ObjectMeta(name=last)))
        except Invalid as err:
            reason = re.sub(r'^.*?Invalid value: "[^"]*": ', "", err.message)
            self.fail(
                join_path(path, "namePrefix"),
                f"names made from {show(prefix)} (like {show(last)}) are invalid: {reason}",
            )

    def _node_group(self, group: NodeGroup, raw: dict[str, Any], path: str) -> NodeGroup:
        self._check_prefix(group.name_prefix, group.count, path)
        listed = isinstance(raw.get("devices"), list)
        for where, detail in device_problems(group.devices, join_path(path, "devices"), listed=listed):
            self.fail(where, detail)
        for key, values in group.label_values.items():
            p = join_path(join_path(path, "labelValues"), key)
            for j, (k, v) in enumerate([(key, ""), *(("k", v) for v in values)]):
                try:
                    validate_label_selector(LabelSelector(match_labels={k: v}), "")
                except ValueError as err:
                    what = "label key" if j == 0 else "label value"
                    reason = str(err).split(": Invalid value: ", 1)[-1]
                    self.fail(p if j == 0 else join_path(p, j - 1), f"invalid {what} {reason}")
        return group

    def _kubelet(self, config: KubeletConfig, raw: dict[str, Any], path: str) -> KubeletConfig:
        """Upstream's defaulting of ``nodeStatusReportFrequency`` (kubelet v1beta1 defaults):
        unset, it is ``nodeStatusUpdateFrequency`` (here ``heartbeatInterval``) when that is
        set explicitly, else 5m (``KubeletSettings``' default, left as ``None`` here)."""
        if config.node_status_report_frequency is None and "heartbeatInterval" in raw:
            return replace(config, node_status_report_frequency=config.heartbeat_interval)
        return config

    def _create_pods(self, step: CreatePods, raw: dict[str, Any], path: str) -> CreatePods:
        self._check_prefix(step.name_prefix, step.count, path)
        namespace = step.namespace or step.template.metadata.namespace or "default"
        if step.namespace and (errors := dns1123_label_errors(step.namespace)):
            # the runner creates this namespace first: refuse it here, as the API server would
            self.fail(join_path(path, "namespace"), f"Invalid value: {show(step.namespace)}: {'; '.join(errors)}")
        return replace(step, namespace=namespace)

    def _replay(self, step: Replay, raw: dict[str, Any], path: str) -> Replay:
        if "gpuSharing" in raw and step.format != "alibaba-gpu-2023":
            self.fail(join_path(path, "gpuSharing"), f"only format alibaba-gpu-2023 has it, got format {step.format}")
        if step.namespace and (errors := dns1123_label_errors(step.namespace)):
            self.fail(join_path(path, "namespace"), f"Invalid value: {show(step.namespace)}: {'; '.join(errors)}")
        return load_replay(step, self.base_dir, path, self.file)

    def _topology_spread(self, expect: TopologySpread, raw: dict[str, Any], path: str) -> TopologySpread:
        """The expectation's ``topologyKey`` is a label key (an empty one matched no node)."""
        if errors := qualified_name_errors(expect.topology_key):
            detail = f"Invalid value: {show(expect.topology_key)}: {'; '.join(errors)}"
            self.fail(join_path(path, "topologyKey"), detail)
        return expect

    def _object_count(self, expect: ObjectCount, raw: dict[str, Any], path: str) -> ObjectCount:
        if expect.kind not in DELETABLE:
            self.fail(
                join_path(path, "kind"),
                f"unsupported kind {show(expect.kind)}; expected one of: {', '.join(DELETABLE)}",
            )
        if expect.namespace and expect.kind in CLUSTER_SCOPED:
            self.fail(join_path(path, "namespace"), f"{expect.kind} is cluster-scoped: remove namespace")
        return expect

    def _delete(self, step: Delete, raw: dict[str, Any], path: str) -> Delete:
        if step.kind not in DELETABLE:
            self.fail(
                join_path(path, "kind"), f"unsupported kind {show(step.kind)}; expected one of: {', '.join(DELETABLE)}"
            )
        if ("name" in raw) == ("selector" in raw):
            self.fail(path, "expected either name or selector (exactly one of them)")
        if step.kind in CLUSTER_SCOPED:
            if step.namespace:
                self.fail(join_path(path, "namespace"), f"{step.kind} is cluster-scoped: remove namespace")
            return step
        return replace(step, namespace=step.namespace or "default")

    def _scale(self, step: Scale, raw: dict[str, Any], path: str) -> Scale:
        if step.kind not in SCALABLE_KINDS:
            hint = (
                "; a Job has no scale subresource: change spec.parallelism with an update step"
                if step.kind == "Job"
                else ""
            )
            self.fail(
                join_path(path, "kind"),
                f"unsupported kind {show(step.kind)}; expected one of: {', '.join(SCALABLE_KINDS)}{hint}",
            )
        return replace(step, namespace=step.namespace or "default")

    def _update(self, step: Update, raw: dict[str, Any], path: str) -> Update:
        if step.kind not in UPDATABLE:
            self.fail(
                join_path(path, "kind"), f"unsupported kind {show(step.kind)}; expected one of: {', '.join(UPDATABLE)}"
            )
        if not step.patch:
            self.fail(join_path(path, "patch"), "expected a non-empty merge patch like {spec: {replicas: 3}}")
        for keys in IMMUTABLE_PATCH:
            value: Any = step.patch
            for k in keys:
                value = value.get(k) if isinstance(value, dict) else None
            if value is not None:
                where = join_path(path, "patch")
                for k in keys:
                    where = join_path(where, k)
                self.fail(where, f"{'.'.join(keys)} cannot be changed by a patch (name the object with kind and name)")
        if step.kind in CLUSTER_SCOPED:
            if step.namespace:
                self.fail(join_path(path, "namespace"), f"{step.kind} is cluster-scoped: remove namespace")
            return step
        return replace(step, namespace=step.namespace or "default")

    def _wait_for(self, step: WaitFor, raw: dict[str, Any], path: str) -> WaitFor:
        if step.condition != "workloadsReady":
            for key in WORKLOAD_FIELDS:
                if key in raw:
                    self.fail(join_path(path, key), "only with condition workloadsReady")
        elif step.kind and step.kind not in READY_KINDS:
            self.fail(
                join_path(path, "kind"),
                f"unsupported kind {show(step.kind)}; expected one of: {', '.join(READY_KINDS)}",
            )
        if step.condition == "workloadsReady" and "count" in raw:
            self.fail(join_path(path, "count"), "not with workloadsReady (every selected object must be ready)")
        return step

    def _workloads_ready(self, expect: WorkloadsReady, raw: dict[str, Any], path: str) -> WorkloadsReady:
        if expect.kind and expect.kind not in READY_KINDS:
            self.fail(
                join_path(path, "kind"),
                f"unsupported kind {show(expect.kind)}; expected one of: {', '.join(READY_KINDS)}",
            )
        return expect

    def _drain(self, step: Drain, raw: dict[str, Any], path: str) -> Drain:
        if not step.node:
            self.fail(join_path(path, "node"), 'expected a node name, got ""')
        return step

    def _fault(self, fault: Any, raw: dict[str, Any], path: str) -> Any:
        """Cross-field checks of one fault (``path`` is ``...<kind>``)."""
        kind = getattr(fault, "kind", None)
        if kind is not None and kind not in API_KINDS:
            self.fail(
                join_path(path, "kind"), f"unsupported kind {show(kind)}; expected one of: {', '.join(API_KINDS)}"
            )
        start, stop = getattr(fault, "start", None), getattr(fault, "stop", None)
        if start is not None and stop is not None and stop <= start:
            self.fail(join_path(path, "stop"), f"{format_duration(stop)} is not after start ({format_duration(start)})")
        match fault:
            case WatchCut():
                if (fault.at is None) == (fault.every is None):
                    self.fail(path, "expected either at or every (exactly one of them)")
                if fault.at is not None and (start is not None or stop is not None):
                    which = "start" if start is not None else "stop"
                    self.fail(join_path(path, which), "only with every (at is a single cut)")
            case ImagePullSlow():
                if (fault.factor is None) == (fault.bandwidth is None):
                    self.fail(path, "expected either factor or bandwidth (exactly one of them)")
                if fault.bandwidth == 0:
                    self.fail(
                        join_path(path, "bandwidth"),
                        f"expected a quantity per second > 0, got {show(raw['bandwidth'])}",
                    )
            case NodeHeartbeatStop() | NodePartition():
                if not fault.node:
                    self.fail(join_path(path, "node"), 'expected a node name, got ""')
            case SchedulerInstances():
                if fault.config is not None:
                    self.scheduler_faults.append((join_path(path, "config"), fault.config))
        return fault

    def check_scheduler_faults(self, scenario: Scenario) -> None:
        """Decode the configuration of each ``scheduler`` fault now, so that a bad one is bad
        input rather than a failure in the middle of a run."""
        if not self.scheduler_faults or importlib.util.find_spec("agents.scheduler") is None:
            return
        from agents.scheduler import ConfigError, build_registry, load_config

        try:
            registry = build_registry(scenario.scheduler_options.plugins)
        except (ConfigError, ImportError):
            return  # the scenario's own scheduler check reports it
        for _, config in self.scheduler_faults:
            try:
                load_config(config.document, registry)
            except ConfigError as err:
                raise ScenarioError(
                    config.file, ".".join(p for p in (config.path, err.path) if p), err.detail
                ) from None
