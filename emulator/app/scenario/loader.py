"""Scenario files in, a validated ``Scenario`` out, or one ``ScenarioError`` with an exact path.

This package part owns reading and checking a scenario: every check that can be made before
the run starts, so that nothing fails half-applied later. It is five modules; this one is
the entry point (``load_scenario``, ``load_scenario_text``, ``ScenarioError``: import them
from here) and runs the others in order:

==============  ===========================================================================
module          owns
==============  ===========================================================================
``readers``     files (bounded, UTF-8, YAML with duplicate keys refused and aliases
                bounded: ``emulator.base.inputs``), ``{file: path}`` references (relative to
                the scenario file's directory), manifests, templates, the scheduler
                configuration (kept raw: the CLI builds it), node marks for ``line:col``
``walker``      the schema-driven walk: types, units, unknown and missing fields, label
                selectors, constraints, all read from the Structs of ``schema``
``verbs``       steps, expectations and faults (one-key mappings), the checks across
                fields, the configuration of ``scheduler`` faults
``timeline``    the replay of the run's creates and deletes, refusing the writes the API
                server would refuse (duplicates, missing namespaces and PriorityClasses, ...)
``replay``      trace files named by ``replay`` steps and ``nodes: [{fromFile}]`` entries,
                read through ``traces`` (errors at the trace's ``line:column``)
==============  ===========================================================================

``load_scenario_patched`` reads a scenario with an RFC 7386 JSON merge patch (a YAML file)
applied to its document before any check (``compare --variant``): an error at a path the patch
wrote names the patch file and its ``line:column``, any other the scenario's; ``{file}``
references in the patch are relative to the scenario's directory, as the scenario's own.

It does not run anything, nor validate the scenario's own scheduler configuration (the CLI
builds it before running, ``emulator.app.commands.common.check_scheduler``).

Every error is ``<file>[:<line>:<column>]: <path>: <detail>`` (``emulator.base.inputs.InputError``);
the path is the YAML path (``steps[3].createPods.template.spec.containers[0].resources.requests.cpu``),
``<file>`` is the referenced file when the problem is inside one, and ``line:column`` is
where that path is in that file, when it is there (a missing field points at its mapping).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emulator.app.scenario.readers import ScenarioError
from emulator.app.scenario.schema import Scenario
from emulator.app.scenario.syntax import ScenarioWalker
from emulator.app.scenario.timeline import Timeline
from emulator.base.api.mergepatch import merge_patch
from emulator.base.inputs import ReadError, read_text
from emulator.base.inputs.errors import split_path

__all__ = ["ScenarioError", "load_scenario", "load_scenario_patched", "load_scenario_text"]


def load_scenario(path: str | Path, warnings: list[str] | None = None) -> Scenario:
    """Read and validate the scenario file at ``path``; its references are relative to it.
    ``warnings`` gets one line per unknown field of its manifests (see ``load_scenario_text``)."""
    p = Path(path)
    try:
        text = read_text(p)
    except ReadError as err:
        raise ScenarioError(str(p), "", err.detail) from None
    return load_scenario_text(text, source=str(p), base_dir=p.parent, warnings=warnings)


def load_scenario_text(text: str, source: str, base_dir: Path, warnings: list[str] | None = None) -> Scenario:
    """Validate scenario ``text``; ``source`` names it in errors, ``base_dir`` anchors ``file``s.
    ``warnings`` gets ``<file>: <path>: unknown field "<field>"`` for each field of a manifest
    upstream's schema does not have: dropped, as upstream's API server drops it under
    ``fieldValidation=Warn``, and not an error."""
    walker = ScenarioWalker(source, Path(base_dir))
    try:
        docs = walker.documents(text, source)
    except ScenarioError as err:
        walker.locate(err)
        raise
    if len(docs) != 1:
        raise ScenarioError(source, "", f"expected one YAML document (the scenario), got {len(docs)}")
    return _walk(walker, docs[0], source, warnings)


def _walk(walker: ScenarioWalker, doc: Any, source: str, warnings: list[str] | None) -> Scenario:
    try:
        scenario = walker.scenario(doc)
        Timeline(source, walker.origins, scenario).check()
        walker.check_scheduler_faults(scenario)
    except ScenarioError as err:
        walker.locate(err)
        raise
    if warnings is not None:
        warnings.extend(walker.warnings)
    return scenario


def _read(path: Path) -> str:
    try:
        return read_text(path)
    except ReadError as err:
        raise ScenarioError(str(path), "", err.detail) from None


def _written_by(patch: Any, path: str) -> bool:
    """Whether the value at ``path`` of the patched document comes from ``patch``."""
    node = patch
    for key in split_path(path):
        if not isinstance(node, dict):
            return True  # the patch replaced this whole value
        if key not in node:
            return False
        node = node[key]
    return True


def load_scenario_patched(path: str | Path, patch_path: str | Path, warnings: list[str] | None = None) -> Scenario:
    """The scenario at ``path`` with the merge patch at ``patch_path`` applied (see above)."""
    p, pp = Path(path), Path(patch_path)
    text, patch_text = _read(p), _read(pp)
    walker = ScenarioWalker(str(p), p.parent)
    try:
        docs = walker.documents(text, str(p))
        patches = walker.documents(patch_text, str(pp))
    except ScenarioError as err:
        walker.locate(err)
        raise
    if len(docs) != 1:
        raise ScenarioError(str(p), "", f"expected one YAML document (the scenario), got {len(docs)}")
    if len(patches) != 1 or not isinstance(patches[0], dict):
        raise ScenarioError(str(pp), "", "expected one YAML mapping: a JSON merge patch of the scenario")
    try:
        return _walk(walker, merge_patch(docs[0], patches[0]), str(p), warnings)
    except ScenarioError as err:
        if err.file == str(p) and err.path and _written_by(patches[0], err.path):
            err.file, err.line, err.column = str(pp), None, None
            walker.locate(err)
        raise
