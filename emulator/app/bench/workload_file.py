"""Benchmark workload definitions: ``bench/workloads.yaml`` in, resolved ``Workload`` s out, or one
``WorkloadError`` naming the file, the path inside it and what was expected. The entry point
of every workload file: ours (a mapping, ``spec.py``'s schema) and upstream's own
``performance-config.yaml`` (a YAML list, translated by ``upstream.py``), told apart by shape.

The file has upstream scheduler_perf's shape: ``templates`` (name → a Node or Pod manifest) and
``testCases``, each a ``workloadTemplate`` (ops tagged by ``opcode``) instantiated by its
``workloads`` (``params`` fill the ops' ``countParam: $name``). ``load_workloads`` checks
everything that can be checked before a run — unknown fields and op shapes (``spec.py``),
template names and kinds, parameters used and defined, measured phases that do not overlap,
durations, namespace names (``resolve.py``) — and resolves every workload into plain steps
(``steps.py``) with counts, templates and namespaces filled in:

================  ===============================================================================
opcode            step
================  ===============================================================================
createNodes       ``NodesStep``: ``count`` nodes from a template; labels round-robin from
                  ``labelNodePrepareStrategy`` or unique per node (``uniqueNodeLabelStrategy``);
                  ``templateParams`` for a Go-template template (also on createPods, createAny)
createNamespaces  ``NamespacesStep``: ``<prefix>-0`` … ``<prefix>-<count-1>``
createPods        ``PodsStep``: ``count`` pods in ``namespace`` (default ``namespace-<op index>``);
                  ``collectMetrics`` marks the measured phase
churn             ``ChurnStep``: every ``intervalMilliseconds``, per template: create (``create``,
                  at most ``number`` times, 0 = forever) or alternately create/delete one of
                  ``number`` slots (``recreate``)
barrier           ``BarrierStep``: upstream's barrier over ``namespaces`` (all when empty),
                  ``labelSelector`` and ``stageRequirement`` (``stages.py``, ``harness.py``)
sleep             ``SleepStep``: wait ``duration``
createPodSets     one ``PodsStep`` per namespace ``<namespacePrefix>-<k>``, k < ``count``, each
                  from ``createPodsOp``
deletePods        ``DeletePodsStep``: delete ``namespace``'s pods (matching ``labelSelector``),
                  ``deletePodsPerSecond``
createAny         ``AnyStep``: ``count`` objects of any kind the API server has
updateAny         ``UpdateStep``: replace ``count`` objects (then their status), ``updatePerSecond``
startCollecting-  ``MetricsStep``: the measured window opens (``namespaces``, ``labelSelector``)
Metrics           and closes (``stopCollectingMetrics``)
================  ===============================================================================

Upstream's own files (a YAML list of test cases, templates by path) are translated first by
``upstream.py``; their workloads that cannot run here come back with ``skipped`` set.

A test case's ``schedulerConfigPath`` names a KubeSchedulerConfiguration for its workloads.
``scale`` multiplies every parameter used as a count (``resolve.py``). Choosing workloads by name, glob or
label is ``select_workloads``. It does not own running a workload (``harness.py``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence
from pathlib import Path

import msgspec

from emulator.app.bench.resolve import Resolver
from emulator.app.bench.spec import WorkloadError, WorkloadFile
from emulator.app.bench.steps import Workload
from emulator.app.bench.upstream import load_upstream
from emulator.base.inputs import ReadError, YamlError, load_documents, msgspec_error, read_text

__all__ = ["load_workloads", "load_workloads_text", "select_workloads"]


# --- loading ----------------------------------------------------------------------------------


def load_workloads(path: str | Path, *, scale: float = 1.0) -> list[Workload]:
    """Every workload of the file at ``path``, resolved at ``scale``."""
    source = str(path)
    try:
        text = read_text(path)
    except ReadError as err:
        raise WorkloadError(source, "", f"cannot read the file: {err.reason}") from None
    return load_workloads_text(text, source=source, scale=scale)


def load_workloads_text(text: str, *, source: str, scale: float = 1.0) -> list[Workload]:
    if not (scale > 0 and math.isfinite(scale)):
        raise WorkloadError(source, "", f"scale must be finite and > 0, got {scale!r}")
    try:
        yaml_docs = load_documents(text, source=source)
    except YamlError as err:
        raise WorkloadError(source, "", f"not valid YAML: {err.text}") from None
    docs = yaml_docs.docs
    if len(docs) != 1:
        raise WorkloadError(source, "", f"expected one YAML document, got {len(docs)}")
    try:
        if isinstance(docs[0], list):
            return load_upstream(docs[0], source=source, scale=scale)
        try:
            spec = msgspec.convert(docs[0], WorkloadFile)
        except msgspec.ValidationError as err:
            msg, at = msgspec_error(err)
            raise WorkloadError(source, at, msg) from None
        return Resolver(source, spec, scale).workloads()
    except WorkloadError as err:
        where = yaml_docs.locate(err.path) if err.file == source and err.path else None
        if where is not None:
            err.locate(*where)
        raise


def select_workloads(
    workloads: Sequence[Workload], patterns: Sequence[str], *, source: str, labels: Sequence[str] = ()
) -> list[Workload]:
    """Workloads named by ``patterns`` (exact, a test case name, or a glob), in file order;
    with ``labels``, only those carrying every one of them (upstream's label filter); with
    neither, those labelled ``short``."""
    if labels:
        workloads = [w for w in workloads if all(label in w.labels for label in labels)]
        if not patterns:
            return list(workloads)
    if not patterns:
        return [w for w in workloads if "short" in w.labels]
    chosen: list[Workload] = []
    for pattern in patterns:
        hits = [w for w in workloads if _matches(w.name, pattern)]
        if not hits:
            known = ", ".join(w.name for w in workloads)
            raise WorkloadError(source, "", f'no workload matches "{pattern}"; known: {known}')
        chosen += [w for w in hits if w not in chosen]
    return chosen


def _matches(name: str, pattern: str) -> bool:
    return name == pattern or name.split("/", 1)[0] == pattern or fnmatch.fnmatchcase(name, pattern)
