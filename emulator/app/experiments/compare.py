"""One scenario under several KubeSchedulerConfigurations and seeds: the runs and the comparison.

What it owns: the variants (``Variant``, ``variants_for``: which configurations a ``--config``
list means), reading a ``--config`` file (``read_config``), the task of one run
(``run_variant``, top-level so that a process pool or Dask pickles it), and the comparison
document (``compare_doc``, contract section 2). It does not own the executor (``executors``),
running the tasks (``sweep``), the metrics' arithmetic (``metrics``) nor printing
(``commands.compare``).

Variants. Each ``--config`` file replaces the scenario's KubeSchedulerConfiguration (its
``schedulerOptions`` stay); the variant is named by the path as given. With a single
``--config``, the scenario's own configuration (upstream's defaults when it has none) is the
baseline, variant ``"scenario"``, listed first: a comparison needs two sides. No ``--config`` is
bad input, and so is the same file twice.

``--gpu-sharing MODE`` (repeatable: ``device-plugin``, ``dra``) is a second axis: every
configuration variant runs once per mode, with the scenario's ``alibaba-gpu-2023`` node lists
and replays read again in that mode (``replay.with_gpu_sharing``); the variant is headed by the
mode alone when there is one configuration (the scenario's, with no ``--config``: two modes
then make the comparison), else ``<stem> <mode>``, and its document entry carries
``gpuSharing``.

``--variant NAME=PATCH.yaml`` (repeatable) is a variant of its own, named ``NAME``: the scenario
with the YAML file ``PATCH.yaml`` applied to it as an RFC 7386 JSON merge patch (``null``
deletes a key, a list is replaced whole) before it is checked (``load_scenario_patched``), under
the scenario's own configuration unless the patch changes it. Variants are the ``--config`` files
then the ``--variant`` patches, in the order given; when there is only one of them, the
scenario as written is the baseline listed first. Its document entry carries ``variant`` (the
name) and ``patch`` (the path); two variants may not share a name, nor a name be ``scenario``.

The document: ``{"scenario", "seeds", "variants": [{"config", "variant"?, "patch"?, "gpuSharing"?,
"runs", "metrics", "spread", "perSeed": [{"seed", "metrics", "traceHash", "passed"}]}]}``, variants
in ``--config`` order, ``perSeed`` by seed, whatever order the runs finished in. ``runs`` counts the
runs that produced metrics; a run that raised (or whose worker died) has ``"error"`` in its
``perSeed`` entry, null ``metrics`` and ``traceHash``, ``passed`` false, and is left out of the
means. With ``series``, each variant also carries its lowest seed's ``series`` (for the HTML report
only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as with_fields
from pathlib import Path
from typing import Any, Final, cast, get_args

from msgspec.structs import replace

from emulator.app.experiments.metrics import aggregate
from emulator.app.experiments.sweep import Outcome
from emulator.app.scenario.readers import Readers, ScenarioError
from emulator.app.scenario.schema import GpuSharing, Scenario, SchedulerConfig
from emulator.base.inputs import PlainInputError, ReadError, read_text

__all__ = [
    "GPU_SHARING_MODES",
    "SCENARIO_VARIANT",
    "CompareError",
    "Variant",
    "compare_doc",
    "load_variant",
    "parse_variant",
    "read_config",
    "run_variant",
    "variant_scenario",
    "variant_traces",
    "variants_for",
]

SCENARIO_VARIANT: Final = "scenario"
"""The name of the variant that keeps the scenario's own configuration."""
GPU_SHARING_MODES: Final = get_args(GpuSharing)


class CompareError(PlainInputError):
    """Bad input to ``compare`` (``error: ...``, exit 2)."""


@dataclass(frozen=True, slots=True)
class Variant:
    config: str
    """The ``--config`` path as given, or ``"scenario"``."""
    header: str
    """Its column in the table: the file's stem (the path when two stems collide)."""
    gpu_sharing: GpuSharing | None = None
    """``--gpu-sharing``: the scenario's ``alibaba-gpu-2023`` traces read in this mode (None: as written)."""
    patch: str | None = None
    """``--variant``: the merge patch applied to the scenario (None: none)."""
    name: str | None = None
    """``--variant``: its name."""

    @property
    def path(self) -> str | None:
        return None if self.config == SCENARIO_VARIANT else self.config


def _twice(values: Sequence[str], option: str) -> None:
    seen: set[str] = set()
    for c in values:
        if c in seen:
            raise CompareError(f"{option}: {c} is given twice")
        seen.add(c)


def parse_variant(spec: str) -> tuple[str, str]:
    """``NAME=PATCH.yaml`` → ``(name, path)``."""
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise CompareError(f"--variant: expected NAME=PATCH.yaml, got {spec!r}")
    if name == SCENARIO_VARIANT:
        raise CompareError(f"--variant: {SCENARIO_VARIANT!r} names the scenario as written; choose another name")
    return name, path


def variants_for(configs: Sequence[str], gpu_sharing: Sequence[str] = (), patches: Sequence[str] = ()) -> list[Variant]:
    """The variants of a ``--config`` list and a ``--variant`` list, times a ``--gpu-sharing``
    list (see the module docstring)."""
    if not configs and not gpu_sharing and not patches:
        raise CompareError(
            "--config: give at least one KubeSchedulerConfiguration file (or a --variant NAME=PATCH.yaml) to compare"
        )
    if not configs and not patches and len(gpu_sharing) < 2:
        raise CompareError("--gpu-sharing: give two modes to compare (device-plugin, dra), or a --config")
    _twice(configs, "--config")
    _twice(gpu_sharing, "--gpu-sharing")
    named = [parse_variant(p) for p in patches]
    _twice([n for n, _ in named], "--variant")
    for mode in gpu_sharing:
        if mode not in GPU_SHARING_MODES:
            raise CompareError(f"--gpu-sharing: expected one of {', '.join(GPU_SHARING_MODES)}, got {mode!r}")
    names = ([SCENARIO_VARIANT] if len(configs) + len(named) <= 1 else []) + list(configs)
    stems = [n if n == SCENARIO_VARIANT else Path(n).stem for n in names]
    base = [Variant(n, s if stems.count(s) == 1 else n) for n, s in zip(names, stems, strict=True)]
    headers = {v.header for v in base}
    for name, _ in named:
        if name in headers:
            raise CompareError(f"--variant: {name!r} is also a --config's column; choose another name")
    base += [Variant(SCENARIO_VARIANT, name, patch=path, name=name) for name, path in named]
    if not gpu_sharing:
        return base
    return [
        with_fields(v, header=m if len(base) == 1 else f"{v.header} {m}", gpu_sharing=cast(GpuSharing, m))
        for v in base
        for m in gpu_sharing
    ]


def read_config(path: str) -> SchedulerConfig:
    """The KubeSchedulerConfiguration in the file at ``path`` (one YAML document; its plugins
    are checked later, when the scheduler is built)."""
    file = Path(path)
    try:
        text = read_text(file)
    except ReadError as err:
        raise CompareError(f"--config {path}: cannot read file: {err.reason}") from None
    readers = Readers(path, file.parent)
    try:
        docs = readers.documents(text, path)
        if len(docs) != 1:
            raise ScenarioError(path, "", f"expected one KubeSchedulerConfiguration document, got {len(docs)}")
        return readers.scheduler(docs[0], "")
    except ScenarioError as err:
        readers.locate(err)
        raise


def variant_scenario(scenario: Scenario, config: SchedulerConfig | None) -> Scenario:
    """``scenario`` with its KubeSchedulerConfiguration replaced (``None``: kept)."""
    return scenario if config is None else replace(scenario, scheduler=config)


def variant_traces(scenario: Scenario, gpu_sharing: str | None, path: str) -> Scenario:
    """``scenario`` (read from ``path``) with its GPU traces in ``gpu_sharing`` (None: kept)."""
    if gpu_sharing is None:
        return scenario
    from emulator.app.scenario.replay import with_gpu_sharing

    return with_gpu_sharing(scenario, cast(GpuSharing, gpu_sharing), path)


def load_variant(path: str, patch: str | None) -> Scenario:
    """The scenario at ``path``, with the ``--variant`` merge patch at ``patch`` applied (None: none)."""
    from emulator.app.scenario.loader import load_scenario, load_scenario_patched

    return load_scenario(path) if patch is None else load_scenario_patched(path, patch)


def run_variant(
    path: str,
    config_path: str | None,
    seed: int,
    series: bool = False,
    gpu_sharing: str | None = None,
    patch: str | None = None,
) -> dict[str, Any]:
    """Run the scenario at ``path`` under the configuration at ``config_path`` (None: its own)
    and ``gpu_sharing`` (None: as written) with ``seed``, in whatever process calls this; the
    run's metrics, trace hash and verdict."""
    from emulator.app.scenario.runner import RunOptions, run_scenario

    scenario = variant_traces(load_variant(path, patch), gpu_sharing, path)
    config = None if config_path is None else read_config(config_path)
    result = run_scenario(variant_scenario(scenario, config), RunOptions(seed=seed, source=path))
    out: dict[str, Any] = {
        "metrics": result.extra.get("metrics"),
        "traceHash": result.trace_hash,
        "passed": result.passed,
    }
    if series:
        out["series"] = result.extra.get("series")
    return out


def _per_seed(seed: int, outcome: Outcome) -> dict[str, Any]:
    if outcome.error is not None or not isinstance(outcome.value, Mapping):
        entry: dict[str, Any] = {"seed": seed, "metrics": None, "traceHash": None, "passed": False}
        entry["error"] = outcome.error or "the run returned nothing"
        if outcome.crashed:
            entry["crashed"] = True
        return entry
    value = outcome.value
    return {"seed": seed, "metrics": value.get("metrics"), "traceHash": value["traceHash"], "passed": value["passed"]}


def compare_doc(
    scenario: str,
    seeds: Sequence[int],
    variants: Sequence[Variant],
    outcomes: Mapping[tuple[int, int], Outcome],
    *,
    series: bool = False,
) -> dict[str, Any]:
    """The comparison of ``outcomes`` (by ``(variant index, seed)``); see the module docstring."""
    out: list[dict[str, Any]] = []
    for i, variant in enumerate(variants):
        per_seed = [_per_seed(s, outcomes[i, s]) for s in sorted(seeds)]
        metrics = [e["metrics"] for e in per_seed if e["metrics"] is not None]
        means, spreads = aggregate(metrics)
        doc: dict[str, Any] = {
            "config": variant.config,
            **({"variant": variant.name, "patch": variant.patch} if variant.patch else {}),
            **({"gpuSharing": variant.gpu_sharing} if variant.gpu_sharing else {}),
            "runs": len(metrics),
            "metrics": means,
            "spread": spreads,
            "perSeed": per_seed,
        }
        if series:
            first = outcomes[i, min(seeds)].value
            doc["series"] = first.get("series") if isinstance(first, Mapping) else None
        out.append(doc)
    return {"scenario": scenario, "seeds": sorted(seeds), "variants": out}
