"""The timeline replay: what ``validate`` foresees of the run's creates and deletes.

What this module owns: ``Timeline``, which replays what the runner will create and delete,
in the runner's order (namespaces it makes for the scenario, ``objects`` with Namespaces and
PriorityClasses first, ``nodes``, then the steps), and refuses what the API server would:
an object that already exists (generated names are compared arithmetically, never listed:
a million-pod step costs a few probes), a namespace that does not exist yet, an unknown
``priorityClassName``, a ``spec.priority`` its class disagrees with, a second
``globalDefault``, deleting an immortal namespace, and steps that name a missing object
(``delete``, ``scale`` and ``update`` by name of a kind only the scenario creates,
``cordon``, ``uncordon``, ``drain``), an ``update`` whose merge patch makes the scenario's
own manifest invalid (the object as the controllers left it is not known here), or a node
the scenario never defines (faults' ``node`` and ``kubelet:<node>``). What it cannot
foresee (an object the controllers deleted, a pod still terminating when its name is
reused, injected faults) the runner reports as a ``StepError``. It reads no file and walks
no YAML: its input is the loaded ``Scenario`` and where each manifest came from.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from emulator.app.scenario.patch import patched
from emulator.app.scenario.readers import Origin, ScenarioError
from emulator.app.scenario.schema import (
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    Delete,
    Drain,
    Fault,
    NodeFile,
    NodeGroup,
    Replay,
    Scale,
    Scenario,
    Uncordon,
    Update,
    auto_namespaces,
    creation_order,
    generated_name,
)
from emulator.app.scenario.timelinesteps import (
    EnsureClass,
    GeneratedGroup,
    Make,
    MakeGroup,
    Remove,
    TimelineEvent,
    UseNode,
    UseObject,
    constant_labels,
    split_generated,
)
from emulator.base.api.core import LabelSelector, Namespace, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.api.validation import validate
from emulator.base.api.workloaddefaults import default_object
from emulator.base.apiserver.server import CLUSTER_SCOPED
from emulator.base.inputs import join_path

__all__ = ["Timeline"]

_SCENARIO_ONLY = (
    "Pod",
    "Node",
    "Namespace",
    "PriorityClass",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "CronJob",
    "Service",
    "PodDisruptionBudget",
    "ConfigMap",
    "Secret",
    "StorageClass",
    "DeviceClass",
    "ResourceClaimTemplate",
    "HorizontalPodAutoscaler",
)
"""Kinds only the runner creates: a step naming a missing one is an error at load. Not
ReplicaSets and Jobs, which the deployment and cronjob controllers create, nor the other volume
kinds (provisioners make PersistentVolumes, StatefulSets claims, the storage section drivers),
nor ResourceClaims and ResourceSlices (the resourceclaim controller and DRA drivers make them)."""
_IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
"""Namespaces upstream's NamespaceLifecycle admission refuses to delete."""
_NAMESPACE_LABEL = "kubernetes.io/metadata.name"


def _display(kind: str, namespace: str, name: str) -> str:
    return f'{kind} "{namespace}/{name}"' if namespace else f'{kind} "{name}"'


def _tag(obj: Any) -> str:
    return str(obj.__struct_config__.tag)


class Timeline:
    """The objects the run will create and delete, replayed in the runner's order, to find
    the writes the API server would refuse before anything runs."""

    def __init__(self, file: str, origins: Mapping[int, Origin], scenario: Scenario) -> None:
        self.file = file
        self.origins = origins
        self.scenario = scenario
        self.events: list[TimelineEvent] = list(self._events())
        self.pos = 0
        self.singles: dict[tuple[str, str, str], tuple[Any, str]] = {}
        """(kind, namespace, name) -> (object, label) of each live object written by name."""
        self.generated: dict[tuple[str, str, str], set[str]] = {}
        """(kind, namespace, prefix) -> names among ``singles`` a group with that prefix makes."""
        self.groups: dict[tuple[str, str, str], list[GeneratedGroup]] = {}
        self.gone: dict[tuple[str, str, str], str] = {}
        self.classes: dict[str, PriorityClass] = {}

    def fail(self, file: str, path: str, detail: str) -> NoReturn:
        raise ScenarioError(file, path, detail)

    # the runner's order ------------------------------------------------------------------

    def _events(self) -> Iterator[TimelineEvent]:
        file, origins = self.file, self.origins
        for ns in auto_namespaces(self.scenario):
            yield Make(Namespace(metadata=ObjectMeta(name=ns)), Origin(file, "", "the runner"))
        for obj in creation_order(self.scenario.objects):
            yield Make(obj, origins[id(obj)])
        for i, group in enumerate(self.scenario.nodes):
            if isinstance(group, NodeFile):
                source = str(Path(file).parent / group.from_file)
                for node in group.items:
                    yield Make(node, Origin(source, "", f"nodes[{i}] ({source})"))
            else:
                yield MakeGroup(self._node_group(group, f"nodes[{i}]"), f"nodes[{i}]", None)
        for i, step in enumerate(self.scenario.steps):
            path = f"steps[{i}].{_tag(step)}"
            match step:
                case Create():
                    yield from (Make(obj, origins[id(obj)]) for obj in step.objects)
                case CreatePods():
                    prefix = generated_name(step.name_prefix, 0)[:-1]
                    labels = constant_labels(step.template.metadata.labels)
                    yield MakeGroup(
                        GeneratedGroup("Pod", step.namespace, prefix, step.count, path, labels, 1), path, step.template
                    )
                case CreateNodes():
                    yield MakeGroup(self._node_group(step.nodes, path), path, None)
                case Replay():
                    for name, value in step.priority_classes.items():
                        pc = PriorityClass(metadata=ObjectMeta(name=name), value=value)
                        yield EnsureClass(pc, Origin(file, path, path))
                    trace = str(Path(file).parent / step.file)
                    for timed in step.pods:
                        where = f"{trace}:{timed.line}"  # the row: no line:column of a YAML path
                        yield Make(timed.pod, Origin(where, "", f"{path} ({where})"))
                case Delete():
                    yield Remove(step, path)
                case Cordon() | Uncordon() | Drain():
                    yield UseNode(step.node, join_path(path, "node"))
                case Scale() | Update():
                    yield UseObject(step, path)

    @staticmethod
    def _node_group(group: NodeGroup, label: str) -> GeneratedGroup:
        values, base = group.label_values, group.template.metadata.labels
        period = math.lcm(*(len(v) for v in values.values())) if values else 1

        def labels(i: int) -> Mapping[str, str]:
            return {**base, **{k: v[i % len(v)] for k, v in values.items()}}

        prefix = generated_name(group.name_prefix, 0)[:-1]
        return GeneratedGroup("Node", "", prefix, group.count, label, labels, period)

    def check(self) -> None:
        for pos, event in enumerate(self.events):
            self.pos = pos
            match event:
                case Make():
                    self._make(event.obj, event.origin)
                case EnsureClass():
                    if event.obj.metadata.name not in self.classes:
                        self._make(event.obj, event.origin)
                case MakeGroup():
                    self._make_group(event)
                case Remove():
                    self._remove(event.step, event.path)
                case UseNode():
                    if self._owner("Node", "", event.node) is None:
                        self._missing("Node", "", event.node, self.file, event.path)
                case UseObject():
                    self._use(event.step, event.path)
        self._check_fault_nodes()

    # what exists -------------------------------------------------------------------------

    def _owner(self, kind: str, ns: str, name: str) -> str | None:
        """The label of what created the live object, None when there is none."""
        single = self.singles.get((kind, ns, name))
        if single is not None:
            return single[1]
        prefix, i = split_generated(name)
        return next((g.label for g in self.groups.get((kind, ns, prefix), ()) if g.alive(i)), None)

    def _creates(self, event: TimelineEvent, kind: str, ns: str, name: str) -> str | None:
        if isinstance(event, Make):
            obj = event.obj
            obj_ns = "" if obj.kind in CLUSTER_SCOPED else obj.metadata.namespace or "default"
            return event.origin.label if (obj.kind, obj_ns, obj.metadata.name) == (kind, ns, name) else None
        if isinstance(event, MakeGroup):
            g = event.group
            prefix, i = split_generated(name)
            return g.label if (g.kind, g.namespace, g.prefix) == (kind, ns, prefix) and i < g.count else None
        return None

    def _later(self, kind: str, ns: str, name: str) -> str | None:
        """The label of the first event after this one that creates the object."""
        return next(filter(None, (self._creates(e, kind, ns, name) for e in self.events[self.pos + 1 :])), None)

    def _missing(self, kind: str, ns: str, name: str, file: str, path: str) -> NoReturn:
        prefix, i = split_generated(name)
        deleted = self.gone.get((kind, ns, name)) or next(
            (w for g in reversed(self.groups.get((kind, ns, prefix), [])) if (w := g.deleted_by(i))), ""
        )
        later = self._later(kind, ns, name)
        hint = f" (deleted by {deleted})" if deleted else f" (it is created later, by {later})" if later else ""
        self.fail(file, path, f"{_display(kind, ns, name)} does not exist at this point{hint}")

    # writes ------------------------------------------------------------------------------

    def _make(self, obj: Any, origin: Origin) -> None:
        kind, meta = obj.kind, obj.metadata
        ns = "" if kind in CLUSTER_SCOPED else meta.namespace or "default"
        meta_path = join_path(origin.path, "metadata")
        if ns:
            self._need_namespace(ns, origin.file, join_path(meta_path, "namespace"))
        if isinstance(obj, Pod):
            self._check_priority(obj, origin.file, origin.path)
        if isinstance(obj, PriorityClass) and obj.global_default:
            other = next((c for c in self.classes.values() if c.global_default), None)
            if other is not None:
                self.fail(
                    origin.file,
                    join_path(origin.path, "globalDefault"),
                    f"PriorityClass {other.metadata.name} is already marked as default "
                    f"(created by {self._owner('PriorityClass', '', other.metadata.name)})",
                )
        if not meta.name:
            return  # generateName: the server makes a unique name
        first = self._owner(kind, ns, meta.name)
        if first is not None:
            self.fail(
                origin.file,
                join_path(meta_path, "name"),
                f"{_display(kind, ns, meta.name)} already exists (created by {first})",
            )
        self.singles[(kind, ns, meta.name)] = (obj, origin.label)
        prefix, _ = split_generated(meta.name)
        if prefix:
            self.generated.setdefault((kind, ns, prefix), set()).add(meta.name)
        if isinstance(obj, PriorityClass):
            self.classes[meta.name] = obj

    def _make_group(self, event: MakeGroup) -> None:
        g, file = event.group, self.file
        if event.template is not None:
            self._need_namespace(g.namespace, file, join_path(event.path, "namespace"))
            self._check_priority(event.template, file, join_path(event.path, "template"))
        key = (g.kind, g.namespace, g.prefix)
        at = join_path(event.path, "namePrefix")
        clashes = sorted((i, n) for n in self.generated.get(key, ()) if (i := split_generated(n)[1]) < g.count)
        if clashes:
            name = clashes[0][1]
            first = self._owner(g.kind, g.namespace, name)
            self.fail(file, at, f"{_display(g.kind, g.namespace, name)} already exists (created by {first})")
        for other in self.groups.get(key, ()):
            live = other.first_alive(g.count)
            if live is not None:
                name = g.prefix + str(live)
                self.fail(file, at, f"{_display(g.kind, g.namespace, name)} already exists (created by {other.label})")
        self.groups.setdefault(key, []).append(g)

    def _need_namespace(self, ns: str, file: str, path: str) -> None:
        if self._owner("Namespace", "", ns) is None:
            self._missing("Namespace", "", ns, file, path)

    def _check_priority(self, pod: Pod, file: str, path: str) -> None:
        """The Priority admission plugin's checks, against the classes that exist by then."""
        spec, spec_path = pod.spec, join_path(path, "spec")
        if spec.priority_class_name:
            pc = self.classes.get(spec.priority_class_name)
            if pc is None:
                self._missing_class(spec.priority_class_name, file, join_path(spec_path, "priorityClassName"))
            value = pc.value
        else:
            default = next((c for c in self.classes.values() if c.global_default), None)
            value = default.value if default is not None else 0
        if spec.priority is not None and spec.priority != value:
            self.fail(
                file,
                join_path(spec_path, "priority"),
                f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                f"priority admission controller computed {value} from the given PriorityClass name",
            )

    def _missing_class(self, name: str, file: str, path: str) -> NoReturn:
        deleted = self.gone.get(("PriorityClass", "", name))
        later = self._later("PriorityClass", "", name)
        hint = (
            f"deleted by {deleted}"
            if deleted
            else f"it is created later, by {later}"
            if later
            else "define it in objects or an earlier create step"
        )
        self.fail(file, path, f"no PriorityClass with name {name} was found ({hint})")

    def _remove(self, step: Delete, path: str) -> None:
        kind, ns, file = step.kind, step.namespace, self.file
        if step.name:
            at = join_path(path, "name")
            if kind == "Namespace" and step.name in _IMMORTAL_NAMESPACES:
                self.fail(file, at, f'namespaces "{step.name}" is forbidden: this namespace may not be deleted')
            if not self._discard((kind, ns, step.name), path) and kind in _SCENARIO_ONLY:
                self._missing(kind, ns, step.name, file, at)
            return
        selector = step.selector or LabelSelector()
        matching = [
            key
            for key, (obj, _) in self.singles.items()
            if key[0] == kind and (not ns or key[1] == ns) and label_selector_matches(selector, self._labels(obj))
        ]
        for key in matching:
            if kind == "Namespace" and key[2] in _IMMORTAL_NAMESPACES:
                self.fail(
                    file,
                    join_path(path, "selector"),
                    f'namespaces "{key[2]}" is forbidden: this namespace may not be deleted',
                )
        for key in matching:
            self._discard(key, path)
        for (k, group_ns, _), groups in self.groups.items():
            if k == kind and (not ns or group_ns == ns):
                for g in groups:
                    g.delete_matching(selector, path)

    @staticmethod
    def _labels(obj: Any) -> Mapping[str, str]:
        labels: Mapping[str, str] = obj.metadata.labels
        if obj.kind == "Namespace":  # the API server adds it to every namespace
            return {**labels, _NAMESPACE_LABEL: obj.metadata.name}
        return labels

    def _discard(self, key: tuple[str, str, str], where: str) -> bool:
        """Delete one live object by name; False when there is none."""
        kind, ns, name = key
        prefix, i = split_generated(name)
        if self.singles.pop(key, None) is not None:
            self.generated.get((kind, ns, prefix), set()).discard(name)
            if kind == "PriorityClass":
                del self.classes[name]
            self.gone[key] = where
            return True
        group = next((g for g in self.groups.get((kind, ns, prefix), ()) if g.alive(i)), None)
        if group is None:
            return False
        group.gone[i] = where
        return True

    def _use(self, step: Scale | Update, path: str) -> None:
        """``scale``/``update`` of an object: it exists (for the kinds only the scenario
        makes); a patch keeps the scenario's own manifest of it valid."""
        key = (step.kind, step.namespace, step.name)
        if self._owner(*key) is None:
            if step.kind in _SCENARIO_ONLY:
                self._missing(*key, self.file, join_path(path, "name"))
            return
        single = self.singles.get(key)
        if not isinstance(step, Update) or single is None:
            return
        try:
            validate(default_object(patched(single[0], step.patch)))
        except Invalid as err:
            self.fail(
                self.file, join_path(path, "patch"), f"the patched {step.kind} is invalid: {err.field}: {err.detail}"
            )

    # references ------------------------------------------------------------------------

    def _check_fault_nodes(self) -> None:
        """Faults aimed at a node (``node``, ``agent: kubelet:<node>``) name one the scenario defines."""
        faults = [(f"faults[{i}]", f) for i, f in enumerate(self.scenario.faults)]
        faults += [(f"steps[{i}].fault", s.fault) for i, s in enumerate(self.scenario.steps) if isinstance(s, Fault)]
        for base, fault in faults:
            path = join_path(base, _tag(fault))
            node: str | None = getattr(fault, "node", None)
            agent: str | None = getattr(fault, "agent", None)
            if agent is not None and agent.startswith("kubelet:") and "*" not in agent:
                node, path = agent.removeprefix("kubelet:"), join_path(path, "agent")
            elif node:
                path = join_path(path, "node")
            else:
                continue
            if not any(self._creates(e, "Node", "", node) for e in self.events):
                self.fail(
                    self.file,
                    path,
                    f'no node "{node}" in the scenario (nodes, objects, create and createNodes steps make them)',
                )
