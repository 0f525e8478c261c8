"""Scenario files in, a validated ``Scenario`` out, or one ``ScenarioError`` with an exact path.

This module owns reading and checking a scenario: YAML parsing (a key written twice in
one mapping is an error), ``{file: path}`` references (relative to the scenario file's
directory), and every check that can be made before the run starts, so that nothing fails
half-applied later: types and units, unknown and missing fields, label selectors,
manifests (decoded and validated by ``emulator.api.codec``; no ``Binding``; a valid
``emulator.k8s.io/run-duration``), generated names, step verbs and ``at`` order,
``delete``'s name-or-selector, faults (one-key mappings like steps; their kinds, one-of
fields and time windows). It does not run anything, nor validate the scenario's own
scheduler configuration (kept raw, see ``SchedulerConfig``; the CLI builds it before
running); the configuration of a ``scheduler`` fault is checked here, after the walk,
when the scheduler agent is installed.

The walk is driven by the Structs in ``schema.py``: field names, required fields,
defaults and constraints (``msgspec.Meta`` ``ge``/``gt``/``min_length``/``pattern``, and
``le``, ``extra={"format": "duration" | "quantity" | "rate"}``) come from there, so the loader and the schema
cannot drift. Types with their own syntax (selectors, manifests, templates, steps and
expectations, which are one-key maps in YAML) have their own readers.

After the walk, ``_Timeline`` replays what the runner will create and delete, in the
runner's order (namespaces it makes for the scenario, ``objects`` with Namespaces and
PriorityClasses first, ``nodes``, then the steps), and rejects what the API server would
refuse: an object that already exists (generated names are compared arithmetically, never
listed), a namespace that does not exist yet, an unknown ``priorityClassName``, a
``spec.priority`` its class disagrees with, a second ``globalDefault``, and steps that name
a missing object (``delete`` by name of a kind only the scenario creates, ``cordon``,
``uncordon``) or a node the scenario never defines (faults' ``node`` and ``kubelet:<node>``).
What it cannot foresee (an object the controllers deleted, a pod still terminating when its
name is reused, injected faults) the runner reports as a ``StepError``.

Every error is ``<file>: <path>: <detail>``; the path is the YAML path
(``steps[3].createPods.template.spec.containers[0].resources.requests.cpu``), and
``<file>`` is the referenced file when the problem is inside one.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn, Union, get_args, get_origin

import msgspec
import yaml
from msgspec.structs import replace

from emulator.api.codec import KINDS, ApiObject, ManifestError, YamlLoader, object_from_dict
from emulator.api.core import LabelSelector, Namespace, Node, Pod
from emulator.api.errors import Invalid
from emulator.api.meta import ObjectMeta
from emulator.api.quantity import MAX_VALUE, fits_int64_milli, parse_quantity
from emulator.api.scheduling import PriorityClass
from emulator.api.selectors import label_selector_matches, parse_label_selector, validate_label_selector
from emulator.api.validation import validate
from emulator.apiserver.server import CLUSTER_SCOPED
from emulator.runtime.clock import format_duration, parse_duration
from emulator.scenario.limits import MAX_SECONDS
from emulator.scenario.schema import (
    RUN_DURATION_ANNOTATION,
    ApiError,
    ApiLatency,
    ContainerStartFailure,
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    Delete,
    Expectation,
    Fault,
    FaultSpec,
    ImagePullSlow,
    KubeletConfig,
    MaxPodsPerNode,
    NodeGroup,
    NodeHeartbeatStop,
    NoOvercommit,
    PodCount,
    PodOnNode,
    PodsOnNodes,
    Scenario,
    SchedulerConfig,
    SchedulerInstances,
    Sleep,
    Step,
    TopologySpread,
    Uncordon,
    WaitFor,
    WatchCut,
    WatchDelay,
    WatchReorder,
    auto_namespaces,
    creation_order,
    generated_name,
)
from emulator.scenario.totals import limit_errors

__all__ = ["ScenarioError", "load_scenario", "load_scenario_text"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_VERBS: dict[str, type[Any]] = {
    "create": Create,
    "createPods": CreatePods,
    "createNodes": CreateNodes,
    "delete": Delete,
    "cordon": Cordon,
    "uncordon": Uncordon,
    "sleep": Sleep,
    "waitFor": WaitFor,
    "fault": Fault,
}
_BODY_FIELD = {"create": "objects", "createNodes": "nodes", "sleep": "duration", "fault": "fault"}
"""Verbs whose YAML body is one field of the Struct rather than a mapping of its fields."""
_POD_COUNTS: tuple[str, ...] = get_args(next(f.type for f in msgspec.structs.fields(PodCount) if f.name == "condition"))
_EXPECTATIONS = (*_POD_COUNTS, "podOnNode", "maxPodsPerNode", "topologySpread", "podsOnNodes", "noOvercommit")
_SCHEDULER_API = ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")
_DELETABLE = tuple(dict.fromkeys(k for _, k in KINDS if k != "Binding"))
_API_KINDS = tuple(dict.fromkeys(k for _, k in KINDS))
_FAULTS: dict[str, type[Any]] = {
    str(cls.__struct_config__.tag): cls
    for cls in (
        ApiError,
        ApiLatency,
        WatchDelay,
        WatchCut,
        WatchReorder,
        NodeHeartbeatStop,
        ImagePullSlow,
        ContainerStartFailure,
        SchedulerInstances,
    )
}
_FAULT_EXAMPLE = "{apiError: {verb: bind, probability: 0.1}}"
_DURATION = "a duration like 5ms, 1.5s, 2m or 1h30m"
_QUANTITY = "a quantity like 100Mi, 1Gi or 500M"
_RATE = "a quantity per second like 50Mi or 50Mi/s"
_UNION = (Union, types.UnionType)


class ScenarioError(Exception):
    """A bad scenario: ``<file>: <path>: <detail>`` (no path when the whole file is at fault)."""

    def __init__(self, file: str, path: str, detail: str) -> None:
        self.file = file
        self.path = path
        self.detail = detail
        super().__init__(f"{file}: {path}: {detail}" if path else f"{file}: {detail}")


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate the scenario file at ``path``; its references are relative to it."""
    p = Path(path)
    return load_scenario_text(_read(p, str(p), ""), source=str(p), base_dir=p.parent)


def load_scenario_text(text: str, source: str, base_dir: Path) -> Scenario:
    """Validate scenario ``text``; ``source`` names it in errors, ``base_dir`` anchors ``file``s."""
    docs = _yaml_documents(text, source)
    if len(docs) != 1:
        raise ScenarioError(source, "", f"expected one YAML document (the scenario), got {len(docs)}")
    return _Loader(source, Path(base_dir)).scenario(docs[0])


# --- helpers -----------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A value as an error message shows it: JSON scalars, or what kind of thing it is."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None or isinstance(value, str | int | float | bool):
        return json.dumps(value, ensure_ascii=False)
    return type(value).__name__


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    k = key if isinstance(key, str) and _IDENT.match(key) else f"[{json.dumps(str(key))}]"
    if not path or k.startswith("["):
        return path + k
    return f"{path}.{k}"


def _read(file: Path, source: str, path: str) -> str:
    which = "" if str(file) == source else f": {file}"
    try:
        return file.read_text(encoding="utf-8")
    except OSError as err:
        raise ScenarioError(source, path, f"cannot read file: {err.strerror or err}{which}") from None
    except UnicodeDecodeError:
        raise ScenarioError(source, path, f"cannot read file: not UTF-8 text{which}") from None


def _yaml_documents(text: str, source: str) -> list[Any]:
    try:
        return [d for d in yaml.load_all(text, Loader=YamlLoader) if d is not None]
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ScenarioError(source, "", f"invalid YAML{where}: {problem}") from None
    except yaml.YAMLError as err:
        raise ScenarioError(source, "", f"invalid YAML: {' '.join(str(err).split())}") from None


def _list_items(doc: Any, path: str, source: str) -> Iterator[tuple[str, Any]]:
    """The objects of one manifest document with their paths: a ``List``'s ``items``
    (``documents[1].items[0]``), else the document itself (as ``codec.load_manifests``)."""
    if isinstance(doc, dict) and (
        doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and "items" in doc)
    ):
        items = doc.get("items")
        if not isinstance(items, list):
            raise ScenarioError(source, _join(path, "items"), "expected a list of objects")
        for i, item in enumerate(items):
            yield from _list_items(item, f"{path}.items[{i}]" if path else f"items[{i}]", source)
        return
    yield path, doc


def _check_run_duration(pod: Pod, file: str, path: str) -> None:
    """The kubelet reads ``emulator.k8s.io/run-duration``: it must be a duration."""
    text = pod.metadata.annotations.get(RUN_DURATION_ANNOTATION)
    if text is None:
        return
    try:
        if parse_duration(text) > MAX_SECONDS:
            raise ValueError(f"expected a duration of at most {format_duration(MAX_SECONDS)}, got {text!r}")
    except ValueError as err:
        detail = str(err)
        if detail.endswith(repr(text)):
            detail = detail[: -len(repr(text))] + _show(text)
        at = _join(_join(_join(path, "metadata"), "annotations"), RUN_DURATION_ANNOTATION)
        raise ScenarioError(file, at, detail) from None


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def _meta(tp: Any) -> tuple[Any, msgspec.Meta | None]:
    if get_origin(tp) is Annotated:
        base, *extras = get_args(tp)
        return base, next((m for m in extras if isinstance(m, msgspec.Meta)), None)
    return tp, None


def _describe(tp: Any) -> str:
    """What a value of type ``tp`` looks like, for "expected ..." messages."""
    base, meta = _meta(tp)
    extra = (meta.extra if meta is not None else None) or {}
    if "expected" in extra:
        return str(extra["expected"])
    if extra.get("format") == "duration":
        return _DURATION
    if extra.get("format") == "quantity":
        return _QUANTITY
    if extra.get("format") == "rate":
        return _RATE
    if get_origin(base) in _UNION:
        return " or ".join(_describe(a) for a in get_args(base) if a is not type(None))
    if get_origin(base) is Literal:
        options = [json.dumps(a) for a in get_args(base)]
        return options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
    what = {str: "a string", bool: "true or false", int: "an integer", float: "a number"}.get(base)
    if what is None:
        return "a list" if get_origin(base) is list else "a mapping"
    if meta is not None and meta.ge is not None:
        what += f" >= {meta.ge}"
    if meta is not None and meta.gt is not None:
        what += f" > {meta.gt}"
    if meta is not None and meta.le is not None:
        what += f" and <= {meta.le}" if meta.ge is not None or meta.gt is not None else f" <= {meta.le}"
    return what


# --- the walk ----------------------------------------------------------------------------


class _Loader:
    def __init__(self, file: str, base_dir: Path) -> None:
        self.file = file
        self.base_dir = base_dir
        self.origins: dict[int, _Origin] = {}
        """Where each manifest came from, by ``id`` of its object (the Scenario keeps them alive)."""
        self.after: dict[type[Any], Callable[[Any, dict[str, Any], str], Any]] = {
            NodeGroup: self._node_group,
            CreatePods: self._create_pods,
            KubeletConfig: self._kubelet,
            Delete: self._delete,
            **dict.fromkeys(_FAULTS.values(), self._fault),
        }
        self.scheduler_faults: list[tuple[str, SchedulerConfig]] = []
        """(path, config) of each ``scheduler`` fault that names its own configuration."""

    def fail(self, path: str, detail: str) -> NoReturn:
        raise ScenarioError(self.file, path, detail)

    def scenario(self, doc: Any) -> Scenario:
        if not isinstance(doc, dict):
            self.fail("", f"expected a scenario (a mapping with name, nodes, steps, ...), got {_show(doc)}")
        scenario: Scenario = self.struct(Scenario, doc, "")
        for path, detail in limit_errors(scenario):  # totals and the horizon: see totals.py
            self.fail(path, detail)
        _Timeline(self, scenario).check()
        self._check_scheduler_faults(scenario)
        return scenario

    # generic, schema-driven ------------------------------------------------------------

    def mapping(self, value: Any, path: str, allowed: Iterable[str], required: Iterable[str] = ()) -> dict[str, Any]:
        allowed = list(allowed)
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping with {', '.join(allowed)}, got {_show(value)}")
        for key in value:
            if key not in allowed:
                self.fail(_join(path, str(key)), f"unknown field; expected one of: {', '.join(allowed)}")
        for key in required:
            if key not in value:
                self.fail(_join(path, key), "required field missing")
        return value

    def struct(self, cls: type[Any], value: Any, path: str, preset: dict[str, Any] | None = None) -> Any:
        preset = preset or {}
        fields = [f for f in msgspec.structs.fields(cls) if f.name not in preset]
        raw = self.mapping(value, path, [f.encode_name for f in fields], [f.encode_name for f in fields if f.required])
        kwargs = dict(preset)
        for f in fields:
            if f.encode_name in raw:
                kwargs[f.name] = self.value(f.type, raw[f.encode_name], _join(path, f.encode_name))
        obj = cls(**kwargs)
        hook = self.after.get(cls)
        return obj if hook is None else hook(obj, raw, path)

    def value(self, tp: Any, value: Any, path: str) -> Any:
        base, meta = _meta(tp)
        fmt = ((meta.extra if meta is not None else None) or {}).get("format")
        origin = get_origin(base)
        if fmt == "duration":
            seconds = self.duration(value, path)
            if meta is not None and meta.gt is not None and seconds <= meta.gt:
                self.fail(path, f"expected a duration > {format_duration(meta.gt)}, got {_show(value)}")
            return seconds
        if fmt in ("quantity", "rate"):
            return self.quantity(value, path, rate=fmt == "rate")
        if base is Any:
            return value
        if base is LabelSelector:
            return self.selector(value, path)
        if base in (Pod, Node):
            return self.template(base, value, path)
        if base is SchedulerConfig:
            return self.scheduler(value, path)
        if base == list[ApiObject]:
            return self.manifests(value, path)
        if base == list[Step]:
            return self.steps(value, path)
        if base == list[Expectation]:
            return self.expectations(value, path)
        if base == FaultSpec:
            return self.fault(value, path)
        if isinstance(base, type) and issubclass(base, msgspec.Struct):
            return self.struct(base, value, path)
        if origin in _UNION:
            return self.union(tp, value, path)
        if origin is Literal:
            if value not in get_args(base) or not isinstance(value, str):
                self.fail(path, f"expected {_describe(tp)}, got {_show(value)}")
            return value
        if origin is list:
            if not isinstance(value, list):
                self.fail(path, f"expected a list, got {_show(value)}")
            if meta is not None and meta.min_length and len(value) < meta.min_length:
                self.fail(path, "expected a non-empty list")
            (item,) = get_args(base)
            return [self.value(item, v, _join(path, i)) for i, v in enumerate(value)]
        if origin is dict:
            if not isinstance(value, dict):
                self.fail(path, f"expected a mapping, got {_show(value)}")
            _, item = get_args(base)
            for k in value:
                if not isinstance(k, str):
                    self.fail(_join(path, str(k)), f"keys must be strings, got {_show(k)}")
            return {k: self.value(item, v, _join(path, k)) for k, v in value.items()}
        return self.scalar(base, meta, tp, value, path)

    def scalar(self, base: Any, meta: msgspec.Meta | None, tp: Any, value: Any, path: str) -> Any:
        ok = {
            str: isinstance(value, str),
            bool: isinstance(value, bool),
            int: isinstance(value, int) and not isinstance(value, bool),
            float: isinstance(value, int | float) and not isinstance(value, bool),
        }.get(base)
        if ok is None:
            raise TypeError(f"the scenario schema uses an unsupported type {tp!r} at {path}")
        if not ok:
            self.fail(path, f"expected {_describe(tp)}, got {_show(value)}")
        if base is float and not _finite(value):  # NaN would pass every comparison below
            self.fail(path, f"expected a finite number, got {_show(value)}")
        if meta is not None and (
            (meta.ge is not None and value < meta.ge)
            or (meta.gt is not None and value <= meta.gt)
            or (meta.le is not None and value > meta.le)
            or (meta.pattern is not None and not re.search(meta.pattern, value))
        ):
            self.fail(path, f"expected {_describe(tp)}, got {_show(value)}")
        return float(value) if base is float else value

    def union(self, tp: Any, value: Any, path: str) -> Any:
        options = [a for a in get_args(_meta(tp)[0]) if a is not type(None)]
        if value is None and len(options) < len(get_args(_meta(tp)[0])):
            return None
        if len(options) == 1:
            return self.value(options[0], value, path)
        for option in options:
            try:
                return self.value(option, value, path)
            except ScenarioError:
                continue
        return self.fail(path, f"expected {_describe(tp)}, got {_show(value)}")

    # values with their own syntax ------------------------------------------------------

    def duration(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.fail(path, f"expected {_DURATION}, got {_show(value)}")
        try:
            seconds = parse_duration(value)
        except ValueError as err:
            detail = str(err)
            if detail.endswith(repr(value)):
                detail = detail[: -len(repr(value))] + _show(value)
            self.fail(path, detail)
        if seconds > MAX_SECONDS:  # every duration of a scenario is simulated time: see limits.py
            self.fail(path, f"expected a duration of at most {format_duration(MAX_SECONDS)}, got {_show(value)}")
        return seconds

    def quantity(self, value: Any, path: str, *, rate: bool = False) -> int:
        text = value.removesuffix("/s") if rate and isinstance(value, str) else value
        try:
            q = parse_quantity(text)
        except ValueError:
            self.fail(path, f"expected {_RATE if rate else _QUANTITY}, got {_show(value)}")
        if q.milli < 0:
            self.fail(path, f"expected a quantity >= 0, got {_show(value)}")
        if not fits_int64_milli(q):  # image sizes reach the scheduler's int64 columns: see limits.py
            self.fail(path, f"expected a quantity of at most {MAX_VALUE} (resource.MaxMilliValue), got {_show(value)}")
        return q.value

    def selector(self, value: Any, path: str) -> LabelSelector:
        if not isinstance(value, str):
            self.fail(path, f'expected a label selector string like "app=web,tier in (a,b)", got {_show(value)}')
        try:
            return parse_label_selector(value)
        except ValueError as err:
            self.fail(path, f"invalid label selector: {err}")

    def manifest_error(self, err: ManifestError) -> NoReturn:
        raise ScenarioError(err.source, err.path, err.detail) from None

    def manifests(self, value: Any, path: str) -> list[ApiObject]:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of manifests or {{file: path}} entries, got {_show(value)}")
        out: list[ApiObject] = []
        for i, entry in enumerate(value):
            p = _join(path, i)
            if isinstance(entry, dict) and "file" in entry and not {"apiVersion", "kind"} & entry.keys():
                file = self.file_ref(entry, p)
                docs = _yaml_documents(_read(file, self.file, p), str(file))
                items = [
                    (str(file), doc_path, f"{p} ({' '.join(filter(None, (entry['file'], doc_path)))})", doc)
                    for k, d in enumerate(docs)
                    for doc_path, doc in _list_items(d, f"documents[{k}]" if len(docs) > 1 else "", str(file))
                ]
            else:
                items = [(self.file, p, p, entry)]
            for source, doc_path, label, doc in items:
                try:
                    obj = object_from_dict(doc, source=source, path=doc_path)
                except ManifestError as err:
                    self.manifest_error(err)
                if obj.kind == "Binding":
                    raise ScenarioError(
                        source,
                        _join(doc_path, "kind"),
                        "a Binding cannot be created by a scenario: the scheduler binds pods "
                        "(to place a pod yourself, set its spec.nodeName)",
                    )
                if isinstance(obj, Pod):
                    _check_run_duration(obj, source, doc_path)
                self.origins[id(obj)] = _Origin(source, doc_path, label)
                out.append(obj)
        return out

    def file_ref(self, value: Any, path: str) -> Path:
        raw = self.mapping(value, path, ["file"], ["file"])
        name: str = self.value(str, raw["file"], _join(path, "file"))
        return self.base_dir / name

    def template(self, kind: type[Pod] | type[Node], value: Any, path: str) -> Any:
        name = kind.__name__
        if not isinstance(value, dict):
            self.fail(path, f"expected a {name} manifest (a mapping), got {_show(value)}")
        doc = {"apiVersion": "v1", "kind": name, **value}
        if (doc["apiVersion"], doc["kind"]) != ("v1", name):
            self.fail(path, f'expected a v1 {name} template, got "{doc["apiVersion"]}/{doc["kind"]}"')
        meta = doc.get("metadata") or {}
        if isinstance(meta, dict):
            if meta.get("name"):
                self.fail(
                    _join(_join(path, "metadata"), "name"), "must not be set in a template: names come from namePrefix"
                )
            doc["metadata"] = {**meta, "name": "template"}
        try:
            obj = object_from_dict(doc, source=self.file, path=path)
        except ManifestError as err:
            self.manifest_error(err)
        if isinstance(obj, Pod):
            _check_run_duration(obj, self.file, path)
        return replace(obj, metadata=replace(obj.metadata, name=""))

    def scheduler(self, value: Any, path: str) -> SchedulerConfig:
        if isinstance(value, dict) and "file" in value and not {"apiVersion", "kind"} & value.keys():
            file = self.file_ref(value, path)
            docs = _yaml_documents(_read(file, self.file, path), str(file))
            if len(docs) != 1:
                raise ScenarioError(str(file), "", f"expected one KubeSchedulerConfiguration document, got {len(docs)}")
            source, doc, doc_path = str(file), docs[0], ""
        else:
            source, doc, doc_path = self.file, value, path
        if not isinstance(doc, dict):
            raise ScenarioError(
                source,
                doc_path,
                f"expected a KubeSchedulerConfiguration (a mapping) or {{file: path}}, got {_show(doc)}",
            )
        for key, want in zip(("apiVersion", "kind"), _SCHEDULER_API, strict=True):
            if doc.get(key) != want:
                raise ScenarioError(source, _join(doc_path, key), f"expected {want}, got {_show(doc.get(key))}")
        return SchedulerConfig(document=doc, file=source, path=doc_path)

    # steps and expectations -----------------------------------------------------------

    def steps(self, value: Any, path: str) -> list[Step]:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of steps, got {_show(value)}")
        out: list[Step] = []
        last: tuple[float, str] | None = None
        for i, raw in enumerate(value):
            p = _join(path, i)
            if not isinstance(raw, dict):
                self.fail(p, f"expected a step (a mapping like {{sleep: 5s}}), got {_show(raw)}")
            for key in raw:
                if key != "at" and key not in _VERBS:
                    self.fail(p, f"unknown step verb {_show(key)}; expected one of: {', '.join(_VERBS)}")
            verbs = [v for v in _VERBS if v in raw]
            if len(verbs) != 1:
                got = f"{len(verbs)}: {', '.join(verbs)}" if verbs else f"none; expected one of: {', '.join(_VERBS)}"
                self.fail(p, f"a step has exactly one verb, got {got}")
            at = self.duration(raw["at"], _join(p, "at")) if raw.get("at") is not None else None
            if at is not None:
                if last is not None and at < last[0]:
                    self.fail(
                        _join(p, "at"),
                        f"{format_duration(at)} is before {last[1]} ({format_duration(last[0])}); "
                        "step times must not go backwards",
                    )
                last = (at, _join(p, "at"))
            verb = verbs[0]
            cls, body_path = _VERBS[verb], _join(p, verb)
            if verb in _BODY_FIELD:
                field = next(f for f in msgspec.structs.fields(cls) if f.name == _BODY_FIELD[verb])
                body = self.value(field.type, raw[verb], body_path)
                out.append(cls(at=at, **{field.name: body}))
            else:
                out.append(self.struct(cls, raw[verb], body_path, {"at": at}))
        return out

    def expectations(self, value: Any, path: str) -> list[Expectation]:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of expectations, got {_show(value)}")
        out: list[Expectation] = []
        for i, raw in enumerate(value):
            p = _join(path, i)
            if not isinstance(raw, dict) or not raw:
                self.fail(p, f"expected a one-key mapping like {{podsRunning: {{count: 3}}}}, got {_show(raw)}")
            if len(raw) != 1:
                self.fail(p, f"an expectation has exactly one key, got {len(raw)}: {', '.join(map(str, raw))}")
            ((key, body),) = raw.items()
            bp = _join(p, key)
            if key in _POD_COUNTS:
                out.append(self.struct(PodCount, body, bp, {"condition": key}))
            elif key == "maxPodsPerNode":
                out.append(self.struct(MaxPodsPerNode, body, bp))
            elif key == "topologySpread":
                out.append(self.struct(TopologySpread, body, bp))
            elif key == "podsOnNodes":
                out.append(self.struct(PodsOnNodes, body, bp))
            elif key == "podOnNode":
                m = self.mapping(body, bp, ["pod", "node"], ["pod", "node"])
                pod: str = self.value(str, m["pod"], _join(bp, "pod"))
                node: str = self.value(str, m["node"], _join(bp, "node"))
                ns, sep, name = pod.rpartition("/")
                if not name or "/" in ns or (sep and not ns):
                    self.fail(_join(bp, "pod"), f'expected "namespace/name" or "name", got {_show(pod)}')
                out.append(PodOnNode(name=name, node=node, namespace=ns or "default"))
            elif key == "noOvercommit":
                if body is not True:
                    self.fail(bp, f"expected true, got {_show(body)}")
                out.append(NoOvercommit())
            else:
                self.fail(p, f"unknown expectation {_show(key)}; expected one of: {', '.join(_EXPECTATIONS)}")
        return out

    def fault(self, value: Any, path: str) -> FaultSpec:
        if not isinstance(value, dict) or not value:
            self.fail(path, f"expected a one-key mapping like {_FAULT_EXAMPLE}, got {_show(value)}")
        if len(value) != 1:
            self.fail(path, f"a fault has exactly one key, got {len(value)}: {', '.join(map(str, value))}")
        ((key, body),) = value.items()
        cls = _FAULTS.get(key)
        if cls is None:
            self.fail(path, f"unknown fault {_show(key)}; expected one of: {', '.join(_FAULTS)}")
        fault: FaultSpec = self.struct(cls, {} if body is None else body, _join(path, key))
        return fault

    # checks after a Struct is built ---------------------------------------------------

    def _check_prefix(self, prefix: str, count: int, path: str) -> None:
        last = generated_name(prefix, count - 1)
        try:
            validate(Node(metadata=ObjectMeta(name=last)))
        except Invalid as err:
            reason = re.sub(r'^.*?Invalid value: "[^"]*": ', "", err.message)
            self.fail(
                _join(path, "namePrefix"), f"names made from {_show(prefix)} (like {_show(last)}) are invalid: {reason}"
            )

    def _node_group(self, group: NodeGroup, raw: dict[str, Any], path: str) -> NodeGroup:
        self._check_prefix(group.name_prefix, group.count, path)
        for key, values in group.label_values.items():
            p = _join(_join(path, "labelValues"), key)
            for j, (k, v) in enumerate([(key, ""), *(("k", v) for v in values)]):
                try:
                    validate_label_selector(LabelSelector(match_labels={k: v}), "")
                except ValueError as err:
                    what = "label key" if j == 0 else "label value"
                    reason = str(err).split(": Invalid value: ", 1)[-1]
                    self.fail(p if j == 0 else _join(p, j - 1), f"invalid {what} {reason}")
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
        return replace(step, namespace=namespace)

    def _delete(self, step: Delete, raw: dict[str, Any], path: str) -> Delete:
        if step.kind not in _DELETABLE:
            self.fail(
                _join(path, "kind"), f"unsupported kind {_show(step.kind)}; expected one of: {', '.join(_DELETABLE)}"
            )
        if ("name" in raw) == ("selector" in raw):
            self.fail(path, "expected either name or selector (exactly one of them)")
        if step.kind in CLUSTER_SCOPED:
            if step.namespace:
                self.fail(_join(path, "namespace"), f"{step.kind} is cluster-scoped: remove namespace")
            return step
        return replace(step, namespace=step.namespace or "default")

    def _fault(self, fault: Any, raw: dict[str, Any], path: str) -> Any:
        """Cross-field checks of one fault (``path`` is ``...<kind>``)."""
        kind = getattr(fault, "kind", None)
        if kind is not None and kind not in _API_KINDS:
            self.fail(_join(path, "kind"), f"unsupported kind {_show(kind)}; expected one of: {', '.join(_API_KINDS)}")
        start, stop = getattr(fault, "start", None), getattr(fault, "stop", None)
        if start is not None and stop is not None and stop <= start:
            self.fail(_join(path, "stop"), f"{format_duration(stop)} is not after start ({format_duration(start)})")
        match fault:
            case WatchCut():
                if (fault.at is None) == (fault.every is None):
                    self.fail(path, "expected either at or every (exactly one of them)")
                if fault.at is not None and (start is not None or stop is not None):
                    which = "start" if start is not None else "stop"
                    self.fail(_join(path, which), "only with every (at is a single cut)")
            case ImagePullSlow():
                if (fault.factor is None) == (fault.bandwidth is None):
                    self.fail(path, "expected either factor or bandwidth (exactly one of them)")
                if fault.bandwidth == 0:
                    self.fail(
                        _join(path, "bandwidth"), f"expected a quantity per second > 0, got {_show(raw['bandwidth'])}"
                    )
            case NodeHeartbeatStop():
                if not fault.node:
                    self.fail(_join(path, "node"), 'expected a node name, got ""')
            case SchedulerInstances():
                if fault.config is not None:
                    self.scheduler_faults.append((_join(path, "config"), fault.config))
        return fault

    def _check_scheduler_faults(self, scenario: Scenario) -> None:
        """Decode the configuration of each ``scheduler`` fault now, so that a bad one is bad
        input rather than a failure in the middle of a run."""
        if not self.scheduler_faults or importlib.util.find_spec("agents.scheduler.config") is None:
            return
        from agents.scheduler.args import ConfigError
        from agents.scheduler.config import load_config
        from agents.scheduler.registry import build_registry

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


# --- the timeline ------------------------------------------------------------------------

_SCENARIO_ONLY = ("Pod", "Node", "Namespace", "PriorityClass")
"""Kinds only the runner creates: a step naming a missing one is an error at load."""
_IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
"""Namespaces upstream's NamespaceLifecycle admission refuses to delete."""
_NAMESPACE_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True)
class _Origin:
    """Where a manifest is written: ``file`` and ``path`` to report, ``label`` to cite."""

    file: str
    path: str
    label: str


def _display(kind: str, namespace: str, name: str) -> str:
    return f'{kind} "{namespace}/{name}"' if namespace else f'{kind} "{name}"'


def _split_generated(name: str) -> tuple[str, int]:
    """``(prefix, i)`` when ``name`` is generated object ``i`` of a group whose names start
    with ``prefix`` (which ends with ``-``); ``("", -1)`` when no group makes it."""
    tail = len(name) - len(name.rstrip("0123456789"))
    prefix, digits = name[: len(name) - tail], name[len(name) - tail :]
    if not digits or not prefix.endswith("-") or (len(digits) > 1 and digits[0] == "0"):
        return "", -1
    return prefix, int(digits)


@dataclass(slots=True)
class _Group:
    """Generated objects ``prefix + str(i)`` for ``i < count``, and which were deleted."""

    kind: str
    namespace: str
    prefix: str
    count: int
    label: str
    labels: Callable[[int], Mapping[str, str]]
    period: int
    """``labels(i) == labels(i % period)``."""
    gone: dict[int, str] = field(default_factory=dict)
    """Index -> the step that deleted it."""
    gone_by: str = ""
    """The step that deleted every member."""

    def alive(self, i: int) -> bool:
        return not self.gone_by and 0 <= i < self.count and i not in self.gone

    def deleted_by(self, i: int) -> str:
        return (self.gone.get(i) or self.gone_by) if 0 <= i < self.count else ""

    def first_alive(self, below: int) -> int | None:
        """The smallest live index under ``below``: ``len(gone) + 1`` probes at most."""
        n = min(below, self.count)
        i = 0
        while i < n and i in self.gone:
            i += 1
        return None if self.gone_by or i >= n else i

    def delete_matching(self, selector: LabelSelector, where: str) -> None:
        if self.gone_by:
            return
        n = min(self.count, self.period)
        hits = {i for i in range(n) if label_selector_matches(selector, self.labels(i))}
        if len(hits) == n:
            self.gone_by = where
        elif hits:
            for i in range(self.count):
                if i % self.period in hits:
                    self.gone.setdefault(i, where)


@dataclass(frozen=True, slots=True)
class _Make:
    obj: Any
    origin: _Origin


@dataclass(frozen=True, slots=True)
class _MakeGroup:
    group: _Group
    path: str
    template: Pod | None


@dataclass(frozen=True, slots=True)
class _Remove:
    step: Delete
    path: str


@dataclass(frozen=True, slots=True)
class _UseNode:
    node: str
    path: str


_Event = _Make | _MakeGroup | _Remove | _UseNode


def _constant(labels: Mapping[str, str]) -> Callable[[int], Mapping[str, str]]:
    return lambda _: labels


def _tag(obj: Any) -> str:
    return str(obj.__struct_config__.tag)


class _Timeline:
    """The objects the run will create and delete, replayed in the runner's order, to find
    the writes the API server would refuse before anything runs."""

    def __init__(self, loader: _Loader, scenario: Scenario) -> None:
        self.loader = loader
        self.scenario = scenario
        self.events: list[_Event] = list(self._events())
        self.pos = 0
        self.singles: dict[tuple[str, str, str], tuple[Any, str]] = {}
        """(kind, namespace, name) -> (object, label) of each live object written by name."""
        self.generated: dict[tuple[str, str, str], set[str]] = {}
        """(kind, namespace, prefix) -> names among ``singles`` a group with that prefix makes."""
        self.groups: dict[tuple[str, str, str], list[_Group]] = {}
        self.gone: dict[tuple[str, str, str], str] = {}
        self.classes: dict[str, PriorityClass] = {}

    def fail(self, file: str, path: str, detail: str) -> NoReturn:
        raise ScenarioError(file, path, detail)

    # the runner's order ------------------------------------------------------------------

    def _events(self) -> Iterator[_Event]:
        file, origins = self.loader.file, self.loader.origins
        for ns in auto_namespaces(self.scenario):
            yield _Make(Namespace(metadata=ObjectMeta(name=ns)), _Origin(file, "", "the runner"))
        for obj in creation_order(self.scenario.objects):
            yield _Make(obj, origins[id(obj)])
        for i, group in enumerate(self.scenario.nodes):
            yield _MakeGroup(self._node_group(group, f"nodes[{i}]"), f"nodes[{i}]", None)
        for i, step in enumerate(self.scenario.steps):
            path = f"steps[{i}].{_tag(step)}"
            match step:
                case Create():
                    yield from (_Make(obj, origins[id(obj)]) for obj in step.objects)
                case CreatePods():
                    prefix = generated_name(step.name_prefix, 0)[:-1]
                    labels = _constant(step.template.metadata.labels)
                    yield _MakeGroup(
                        _Group("Pod", step.namespace, prefix, step.count, path, labels, 1), path, step.template
                    )
                case CreateNodes():
                    yield _MakeGroup(self._node_group(step.nodes, path), path, None)
                case Delete():
                    yield _Remove(step, path)
                case Cordon() | Uncordon():
                    yield _UseNode(step.node, _join(path, "node"))

    @staticmethod
    def _node_group(group: NodeGroup, label: str) -> _Group:
        values, base = group.label_values, group.template.metadata.labels
        period = math.lcm(*(len(v) for v in values.values())) if values else 1

        def labels(i: int) -> Mapping[str, str]:
            return {**base, **{k: v[i % len(v)] for k, v in values.items()}}

        prefix = generated_name(group.name_prefix, 0)[:-1]
        return _Group("Node", "", prefix, group.count, label, labels, period)

    def check(self) -> None:
        for pos, event in enumerate(self.events):
            self.pos = pos
            match event:
                case _Make():
                    self._make(event.obj, event.origin)
                case _MakeGroup():
                    self._make_group(event)
                case _Remove():
                    self._remove(event.step, event.path)
                case _UseNode():
                    if self._owner("Node", "", event.node) is None:
                        self._missing("Node", "", event.node, self.loader.file, event.path)
        self._check_fault_nodes()

    # what exists -------------------------------------------------------------------------

    def _owner(self, kind: str, ns: str, name: str) -> str | None:
        """The label of what created the live object, None when there is none."""
        single = self.singles.get((kind, ns, name))
        if single is not None:
            return single[1]
        prefix, i = _split_generated(name)
        return next((g.label for g in self.groups.get((kind, ns, prefix), ()) if g.alive(i)), None)

    def _creates(self, event: _Event, kind: str, ns: str, name: str) -> str | None:
        if isinstance(event, _Make):
            obj = event.obj
            obj_ns = "" if obj.kind in CLUSTER_SCOPED else obj.metadata.namespace or "default"
            return event.origin.label if (obj.kind, obj_ns, obj.metadata.name) == (kind, ns, name) else None
        if isinstance(event, _MakeGroup):
            g = event.group
            prefix, i = _split_generated(name)
            return g.label if (g.kind, g.namespace, g.prefix) == (kind, ns, prefix) and i < g.count else None
        return None

    def _later(self, kind: str, ns: str, name: str) -> str | None:
        """The label of the first event after this one that creates the object."""
        return next(filter(None, (self._creates(e, kind, ns, name) for e in self.events[self.pos + 1 :])), None)

    def _missing(self, kind: str, ns: str, name: str, file: str, path: str) -> NoReturn:
        prefix, i = _split_generated(name)
        deleted = self.gone.get((kind, ns, name)) or next(
            (w for g in reversed(self.groups.get((kind, ns, prefix), [])) if (w := g.deleted_by(i))), ""
        )
        later = self._later(kind, ns, name)
        hint = f" (deleted by {deleted})" if deleted else f" (it is created later, by {later})" if later else ""
        self.fail(file, path, f"{_display(kind, ns, name)} does not exist at this point{hint}")

    # writes ------------------------------------------------------------------------------

    def _make(self, obj: Any, origin: _Origin) -> None:
        kind, meta = obj.kind, obj.metadata
        ns = "" if kind in CLUSTER_SCOPED else meta.namespace or "default"
        meta_path = _join(origin.path, "metadata")
        if ns:
            self._need_namespace(ns, origin.file, _join(meta_path, "namespace"))
        if isinstance(obj, Pod):
            self._check_priority(obj, origin.file, origin.path)
        if isinstance(obj, PriorityClass) and obj.global_default:
            other = next((c for c in self.classes.values() if c.global_default), None)
            if other is not None:
                self.fail(
                    origin.file,
                    _join(origin.path, "globalDefault"),
                    f"PriorityClass {other.metadata.name} is already marked as default "
                    f"(created by {self._owner('PriorityClass', '', other.metadata.name)})",
                )
        if not meta.name:
            return  # generateName: the server makes a unique name
        first = self._owner(kind, ns, meta.name)
        if first is not None:
            self.fail(
                origin.file,
                _join(meta_path, "name"),
                f"{_display(kind, ns, meta.name)} already exists (created by {first})",
            )
        self.singles[(kind, ns, meta.name)] = (obj, origin.label)
        prefix, _ = _split_generated(meta.name)
        if prefix:
            self.generated.setdefault((kind, ns, prefix), set()).add(meta.name)
        if isinstance(obj, PriorityClass):
            self.classes[meta.name] = obj

    def _make_group(self, event: _MakeGroup) -> None:
        g, file = event.group, self.loader.file
        if event.template is not None:
            self._need_namespace(g.namespace, file, _join(event.path, "namespace"))
            self._check_priority(event.template, file, _join(event.path, "template"))
        key = (g.kind, g.namespace, g.prefix)
        at = _join(event.path, "namePrefix")
        clashes = sorted((i, n) for n in self.generated.get(key, ()) if (i := _split_generated(n)[1]) < g.count)
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
        spec, spec_path = pod.spec, _join(path, "spec")
        if spec.priority_class_name:
            pc = self.classes.get(spec.priority_class_name)
            if pc is None:
                self._missing_class(spec.priority_class_name, file, _join(spec_path, "priorityClassName"))
            value = pc.value
        else:
            default = next((c for c in self.classes.values() if c.global_default), None)
            value = default.value if default is not None else 0
        if spec.priority is not None and spec.priority != value:
            self.fail(
                file,
                _join(spec_path, "priority"),
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
        kind, ns, file = step.kind, step.namespace, self.loader.file
        if step.name:
            at = _join(path, "name")
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
                    _join(path, "selector"),
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
        prefix, i = _split_generated(name)
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

    # references ------------------------------------------------------------------------

    def _check_fault_nodes(self) -> None:
        """Faults aimed at a node (``node``, ``agent: kubelet:<node>``) name one the scenario defines."""
        faults = [(f"faults[{i}]", f) for i, f in enumerate(self.scenario.faults)]
        faults += [(f"steps[{i}].fault", s.fault) for i, s in enumerate(self.scenario.steps) if isinstance(s, Fault)]
        for base, fault in faults:
            path = _join(base, _tag(fault))
            node: str | None = getattr(fault, "node", None)
            agent: str | None = getattr(fault, "agent", None)
            if agent is not None and agent.startswith("kubelet:") and "*" not in agent:
                node, path = agent.removeprefix("kubelet:"), _join(path, "agent")
            elif node:
                path = _join(path, "node")
            else:
                continue
            if not any(self._creates(e, "Node", "", node) for e in self.events):
                self.fail(
                    self.loader.file,
                    path,
                    f'no node "{node}" in the scenario (nodes, objects, create and createNodes steps make them)',
                )
