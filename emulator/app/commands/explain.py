"""``python -m emulator explain FILE... [--pod NS/NAME] [--config FILE] [--output text|json]``.

What this module owns: turning plain Kubernetes manifests into one scheduling cycle's input
and printing the answer of ``agents.scheduler``'s ``explain_objects`` (which wires the profile's
framework over these objects).

Input rules:

* Files are multi-document YAML/JSON, ``kind: List`` allowed. Nodes, Pods, PriorityClasses,
  Namespaces, and the PodDisruptionBudgets, Services, ReplicaSets and StatefulSets the
  scheduler reads (preemption, default spreading) are used (other known kinds are ignored);
  a ``KubeSchedulerConfiguration`` document (at most one, in the files or given with
  ``--config``) selects the profile by the pod's ``schedulerName``; without one, upstream's
  default profile.
* Every object is created in an in-memory ``ApiServer`` (clock fixed at 0, seed 0), so pods get
  the apiserver's defaulting and validation and their priority from ``priorityClassName``
  (or the global default PriorityClass) exactly as in a run; namespaces are created as needed.
* The pod to explain is ``--pod`` (``ns/name``, or ``name`` in ``default``) — even with a
  ``spec.nodeName``: it is then the pod being scheduled (NodeName filtering applies), not a
  running one — else the only pod without ``spec.nodeName``. The other pods with a nodeName
  (not Succeeded/Failed) are running there; other pods without one but with
  ``status.nominatedNodeName`` are nominated pods, as the scheduler's nominator would hold them.
* A pod's ``metadata.deletionTimestamp`` (and ``deletionGracePeriodSeconds``) is kept: a
  terminating pod still occupies its node, and plugins that skip terminating pods (upstream's
  PodTopologySpread) skip it here too.

Output: ``--output json`` prints ``Explanation.to_json()`` (shape in the README: ``pod``,
``profile``, ``nodes`` best first {``filter``, ``feasible``, and for feasible nodes ``score``
{raw, normalized, weighted} and ``total``}, ``selected``, ``message``, ``preemption``); text
prints a table (one row per node, best first; a column per plugin) and the outcome lines.

Bad input raises ``ExplainError``: one line naming the file (and the path inside it) or the
option; the command line maps it to exit status 2. An explanation, fitting or not, exits 0.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec
from msgspec.structs import replace
from rich.console import Console
from rich.table import Table

from agents.scheduler import (
    WORKLOAD_KINDS,
    Code,
    ConfigError,
    Explanation,
    PluginFactory,
    ProfileError,
    explain_objects,
    load_config,
)
from emulator.base.api.codec import ManifestError, object_from_dict
from emulator.base.api.core import Namespace, Node, Pod
from emulator.base.api.errors import ApiError
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import ApiServer
from emulator.base.inputs import (
    InputError,
    ReadError,
    YamlDocuments,
    YamlError,
    flatten_list,
    join_paths,
    load_documents,
    read_text,
)
from emulator.base.runtime.clock import StoppedClock

__all__ = ["ExplainError", "load_inputs", "run"]

CONFIG_API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
CONFIG_KIND: Final = "KubeSchedulerConfiguration"
_ORDER: Final = {"Namespace": 0, "PriorityClass": 1, "Node": 2, "Pod": 3, **dict.fromkeys(WORKLOAD_KINDS, 4)}


class ExplainError(InputError):
    """Bad input for ``explain``: ``<file>[:<line>:<column>]: <path>: <detail>``, or only a
    detail that names the option (``--pod ...``)."""


def _plain(message: str) -> ExplainError:
    return ExplainError("", "", message)


@dataclass(slots=True)
class Inputs:
    """What the manifests give: the pod to explain, the cluster, the configuration."""

    pod: Pod
    nodes: list[Node]
    running: list[Pod]
    nominated: list[Pod]
    config: Mapping[str, Any] | None
    config_source: str
    server: ApiServer = field(repr=False)
    config_file: str = ""
    """The file of the KubeSchedulerConfiguration ("" for the default one)..."""
    config_path: str = ""
    """... and its path in that file (``documents[2]``; "" when it is the whole file)."""
    sources: dict[str, YamlDocuments] = field(default_factory=dict, repr=False)
    """Each file read, for the ``line:column`` of errors found later (in the configuration)."""


def _is_config(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == CONFIG_KIND and doc.get("apiVersion") == CONFIG_API_VERSION


def _read(path: Path, sources: dict[str, YamlDocuments]) -> list[Any]:
    """The documents of one file (bounded reader and YAML loader), remembered in ``sources``."""
    try:
        text = read_text(path)
    except ReadError as err:
        raise ExplainError(str(path), "", err.detail) from None
    try:
        docs = load_documents(text, source=str(path))
    except YamlError as err:
        raise ExplainError(str(path), "", f"not valid YAML: {err.text}") from None
    sources[str(path)] = docs
    return docs.docs


def load_inputs(files: list[Path], pod_ref: str | None, config_file: Path | None) -> Inputs:
    """Decode, admit (defaulting, validation, priority) and sort the objects of ``files``."""
    sources: dict[str, YamlDocuments] = {}
    try:
        inputs = _load_inputs(files, pod_ref, config_file, sources)
    except ExplainError as err:
        raise _located(err, sources) from None
    inputs.sources = sources
    return inputs


def _located(err: ExplainError, sources: Mapping[str, YamlDocuments]) -> ExplainError:
    docs = sources.get(err.file)
    where = docs.locate(err.path) if docs is not None and err.path else None
    if where is not None:
        err.locate(*where)
    return err


def _load_inputs(
    files: list[Path], pod_ref: str | None, config_file: Path | None, sources: dict[str, YamlDocuments]
) -> Inputs:
    objects: list[tuple[Any, str, str]] = []  # (object, source, path)
    config: tuple[Any, str, str, str] | None = None  # (document, label, file, path)
    config_docs = [(d, str(config_file), "") for d in _read(config_file, sources)] if config_file is not None else []
    if config_file is not None and len(config_docs) != 1:
        raise ExplainError(str(config_file), "", f"expected one {CONFIG_KIND} document, got {len(config_docs)}")
    for doc, source, _ in config_docs:
        if not _is_config(doc):
            raise ExplainError(source, "", f"expected apiVersion {CONFIG_API_VERSION} and kind {CONFIG_KIND}")
        config = (doc, source, source, "")
    for f in files:
        docs = _read(f, sources)
        for i, raw in enumerate(docs):
            prefix = f"documents[{i}]" if len(docs) > 1 else ""
            for path, doc in flatten_list(raw, source=str(f), path=prefix, error=ExplainError):
                if _is_config(doc):
                    if config is not None:
                        raise ExplainError(str(f), path, f"a second {CONFIG_KIND} (the first is in {config[1]})")
                    config = (doc, f"{f}: {path}" if path else str(f), str(f), path)
                    continue
                try:
                    obj = object_from_dict(doc, source=str(f), path=path)
                except ManifestError as err:
                    raise ExplainError(err.file, err.path, err.detail) from None
                if obj.kind in _ORDER:
                    objects.append((obj, str(f), path))
    server, created = _admit(objects)
    return _select(server, created, pod_ref, files, config)


def _admit(objects: list[tuple[Any, str, str]]) -> tuple[ApiServer, list[Any]]:
    """Create everything (namespaces, priority classes, nodes, pods; file order within a kind)."""
    server = ApiServer(StoppedClock(), random.Random(0))
    wanted = {o.metadata.namespace or "default" for o, _, _ in objects if o.kind in ("Pod", *WORKLOAD_KINDS)}
    explicit = {o.metadata.name for o, _, _ in objects if o.kind == "Namespace"}
    for name in sorted(wanted - explicit):
        server.create(Namespace(metadata=ObjectMeta(name=name)))
    created: list[Any] = []
    for obj, source, path in sorted(objects, key=lambda t: _ORDER[t[0].kind]):  # stable: file order kept
        try:
            made = server.create(obj, restore=True)  # the given state, status included
        except ApiError as err:
            raise ExplainError(source, path, f"{obj.kind} {obj.metadata.name!r}: {err.message}") from None
        if isinstance(made, Pod) and obj.metadata.deletion_timestamp is not None:
            # A terminating pod stays terminating: plugins read it (PodTopologySpread skips it).
            meta = replace(
                made.metadata,
                deletion_timestamp=obj.metadata.deletion_timestamp,
                deletion_grace_period_seconds=obj.metadata.deletion_grace_period_seconds,
            )
            made = replace(made, metadata=meta)
        created.append(made)
    return server, created


def _select(
    server: ApiServer,
    created: list[Any],
    pod_ref: str | None,
    files: list[Path],
    config: tuple[Any, str, str, str] | None,
) -> Inputs:
    pods: list[Pod] = [o for o in created if isinstance(o, Pod)]
    nodes: list[Node] = [o for o in created if isinstance(o, Node)]
    names = ", ".join(str(f) for f in files)
    if pod_ref is not None:
        ns, _, name = pod_ref.rpartition("/")
        ns = ns or "default"
        target = next((p for p in pods if (p.metadata.namespace, p.metadata.name) == (ns, name)), None)
        if target is None:
            raise _plain(f"--pod {pod_ref}: no pod {ns}/{name} in {names}")
    else:
        pending = [p for p in pods if not p.spec.node_name]
        if not pending:
            raise _plain(f"{names}: no pod to explain: every pod has a spec.nodeName (choose one with --pod)")
        if len(pending) > 1:
            listed = ", ".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in pending)
            raise _plain(f"{names}: {len(pending)} pods without spec.nodeName ({listed}): choose one with --pod")
        target = pending[0]
    uid = target.metadata.uid
    others = [p for p in pods if p.metadata.uid != uid]
    running = [p for p in others if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    nominated = [p for p in others if not p.spec.node_name and p.status.nominated_node_name]
    return Inputs(
        target,
        nodes,
        running,
        nominated,
        config[0] if config else None,
        config[1] if config else "",
        server,
        config[2] if config else "",
        config[3] if config else "",
    )


def explain(inputs: Inputs, registry: Mapping[str, PluginFactory] | None = None) -> Explanation:
    """Build the pod's profile and explain one scheduling cycle."""
    if registry is None:
        from agents.scheduler import build_registry

        try:
            registry = build_registry()
        except ConfigError as err:
            raise _plain(f"plugins: {err}") from None
    try:
        cfg = load_config(inputs.config, registry)
    except ConfigError as err:
        if not inputs.config_file:
            raise _plain(f"configuration: {err}") from None
        path = join_paths(inputs.config_path, err.path)
        raise _located(ExplainError(inputs.config_file, path, err.detail), inputs.sources) from None
    pod = inputs.pod
    profile = cfg.profile(pod.spec.scheduler_name)
    if profile is None:
        known = ", ".join(p.scheduler_name for p in cfg.profiles)
        where = inputs.config_source or "the default configuration"
        raise _plain(
            f'{where}: no profile for schedulerName "{pod.spec.scheduler_name}" of pod '
            f"{pod.metadata.namespace}/{pod.metadata.name} (profiles: {known})"
        )
    # PDBs (preemption) and Services/ReplicaSets/StatefulSets (default spreading) as in a run.
    try:
        return explain_objects(
            pod,
            config=cfg,
            profile=profile,
            registry=registry,
            nodes=inputs.nodes,
            running=inputs.running,
            nominated=inputs.nominated,
            namespaces=inputs.server.list("Namespace")[0],
            workloads=[o for kind in WORKLOAD_KINDS for o in inputs.server.list(kind)[0]],
        )
    except ProfileError as err:
        raise _plain(f"{inputs.config_source or 'configuration'}: {err}") from None


# --- output -------------------------------------------------------------------------------


_SHORT: Final = {Code.Unschedulable: "U", Code.UnschedulableAndUnresolvable: "UU"}
_LEGEND: Final = "✗ U: Unschedulable, UU: UnschedulableAndUnresolvable; score cells: weighted (raw→normalized×weight)"


def _cell(exp: Explanation, node: str, plugin: str) -> str:
    ne = exp.node(node)
    s = ne.filter.get(plugin)
    parts: list[str] = []
    if s is not None and s.code is not Code.Success:
        if s.code is Code.Skip:
            parts.append("skip")
        else:
            parts.append(f"✗ {_SHORT.get(s.code, s.code.name)} {s.message()}".rstrip())
    score = next((p for p in ne.scores or [] if p.name == plugin), None)
    if score is not None:
        parts.append(f"{score.score} ({score.raw_score}→{score.normalized_score}×{score.weight})")
    elif s is not None and s.code is Code.Success:
        parts.append("✓")
    return " ".join(parts) if parts else "—"


def _all_skipped(exp: Explanation, plugin: str) -> bool:
    """Every node's cell of ``plugin`` is a PreFilter Skip and nothing else (no score)."""
    return all(_cell(exp, ne.name, plugin) == "skip" for ne in exp.nodes)


def render_text(exp: Explanation, console: Console) -> None:
    """One row per node, one column per plugin; a plugin that skipped on every node (a pod
    without host ports, claims...) gets no column (the JSON output keeps every verdict)."""
    plugins: list[str] = []
    for ne in exp.nodes:
        for name in [*ne.filter, *(p.name for p in ne.scores or [])]:
            if name not in plugins:
                plugins.append(name)
    plugins = [p for p in plugins if not _all_skipped(exp, p)]
    table = Table(title=f"{exp.pod} (profile {exp.profile})", title_justify="left")
    table.add_column("NODE", no_wrap=True)
    table.add_column("FEASIBLE")
    for name in plugins:
        table.add_column(name)
    table.add_column("TOTAL", justify="right")
    for ne in exp.ranked():
        mark = "*" if ne.name == exp.selected else ""
        total = "" if ne.total is None else str(ne.total)
        table.add_row(ne.name + mark, "yes" if ne.feasible else "no", *(_cell(exp, ne.name, p) for p in plugins), total)
    console.print(table)
    console.print(_LEGEND)
    console.print(f"selected: {exp.selected or '(none)'}")
    if exp.message:
        console.print(f"message: {exp.message}")
    if exp.preemption is not None:
        victims = ", ".join(exp.preemption.victims) or "(none)"
        console.print(f"preemption: nominated node {exp.preemption.nominated_node}; victims: {victims}")


# --- command line ---------------------------------------------------------------------------


def run(args: argparse.Namespace, *, registry: Mapping[str, PluginFactory] | None = None) -> int:
    """Explain and print; ``ExplainError`` on bad input. Returns the exit status (0)."""
    inputs = load_inputs(list(args.files), args.pod, args.config)
    exp = explain(inputs, registry)
    if args.output == "json":
        sys.stdout.write(msgspec.json.encode(exp.to_json()).decode() + "\n")
    else:
        tty = sys.stdout.isatty()
        render_text(exp, Console(highlight=False, soft_wrap=False, width=None if tty else 250))
    return 0
