"""Kubernetes v1.34's default values of the feature gates upstream's scheduler_perf configs
name, from the versioned specs of ``pkg/features`` (``defaultVersionedKubernetesFeatureGates``:
each gate's list of ``{Version, Default, PreRelease}``; the entry in force at 1.34 is the last
one at or before it). The emulator runs 1.34's behaviour and has no gate switches but the DRA
ones (``IMPLEMENTED``, and those at their 1.34 default): the ``bench --file DIR`` tally says, for
each gate a skipped workload sets, whether 1.34 has it on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["EMULATED", "IMPLEMENTED", "NEEDED", "at_1_34", "describe", "skip_reason"]

EMULATED: Final = "1.34"

Spec = tuple[str, bool, str]
"""(version, default, pre-release)."""

_SPECS: Final[Mapping[str, tuple[Spec, ...]]] = {
    "CompositePodGroup": (("1.37", False, "Alpha"),),
    "DRAAdminAccess": (("1.32", False, "Alpha"), ("1.34", True, "Beta"), ("1.36", True, "GA")),
    "DRAConsumableCapacity": (("1.34", False, "Alpha"), ("1.36", True, "Beta")),
    "DRADeviceBindingConditions": (("1.34", False, "Alpha"), ("1.36", True, "Beta")),
    "DRADeviceCompatibilityGroups": (("1.37", False, "Alpha"),),
    "DRADeviceTaintRules": (("1.35", False, "Alpha"), ("1.36", False, "Beta"), ("1.37", True, "GA")),
    "DRADeviceTaints": (("1.33", False, "Alpha"), ("1.36", True, "Beta"), ("1.37", True, "GA")),
    "DRAExtendedResource": (("1.34", False, "Alpha"), ("1.36", True, "Beta"), ("1.37", True, "GA")),
    "DRAListTypeAttributes": (("1.36", False, "Alpha"),),
    "DRAPartitionableDevices": (("1.33", False, "Alpha"), ("1.36", True, "Beta")),
    "DRAPrioritizedList": (("1.33", False, "Alpha"), ("1.34", True, "Beta"), ("1.36", True, "GA")),
    "DRAResourceClaimDeviceStatus": (("1.32", False, "Alpha"), ("1.33", True, "Beta"), ("1.37", True, "GA")),
    "DRASchedulerFilterTimeout": (("1.34", True, "Beta"),),
    "DRAWorkloadResourceClaims": (("1.36", False, "Alpha"), ("1.37", False, "Beta")),
    "DynamicResourceAllocation": (("1.26", False, "Alpha"), ("1.32", False, "Beta"), ("1.34", True, "GA")),
    "GenericWorkload": (("1.35", False, "Alpha"), ("1.37", False, "Beta")),
    "InPlacePodVerticalScaling": (("1.27", False, "Alpha"), ("1.33", True, "Beta"), ("1.35", True, "GA")),
    "InPlacePodVerticalScalingSchedulerPreemption": (("1.37", False, "Alpha"),),
    "MatchLabelKeysInPodTopologySpread": (("1.25", False, "Alpha"), ("1.27", True, "Beta")),
    "NodeDeclaredFeatures": (("1.35", False, "Alpha"), ("1.36", True, "Beta"), ("1.37", True, "GA")),
    "NodeInclusionPolicyInPodTopologySpread": (("1.25", False, "Alpha"), ("1.26", True, "Beta"), ("1.33", True, "GA")),
    "NominatedNodeNameForExpectation": (("1.34", False, "Alpha"), ("1.35", True, "Beta")),
    "OpportunisticBatching": (("1.35", True, "Beta"),),
    "PodGroupPreemptionPolicy": (("1.37", False, "Alpha"),),
    "PodLevelResources": (("1.32", False, "Alpha"), ("1.34", True, "Beta")),
    "SchedulerAsyncAPICalls": (("1.34", False, "Beta"),),
    "SchedulerAsyncPreemption": (("1.32", False, "Alpha"), ("1.33", True, "Beta")),
    "SchedulerPopFromBackoffQ": (("1.33", True, "Beta"),),
    "SchedulerQueueingHints": (("1.28", False, "Beta"), ("1.32", True, "Beta"), ("1.34", True, "GA")),
    "StorageCapacityScoring": (("1.33", False, "Alpha"), ("1.37", True, "Beta")),
    "TopologyAwareWorkloadScheduling": (("1.36", False, "Alpha"),),
    "VolumeAttributesClass": (("1.29", False, "Alpha"), ("1.31", False, "Beta"), ("1.34", True, "GA")),
}


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def at_1_34(gate: str) -> tuple[bool, str] | None:
    """(default, pre-release) of ``gate`` in 1.34; None when 1.34 does not have the gate (or
    this table does not know it)."""
    specs = [s for s in _SPECS.get(gate, ()) if _version(s[0]) <= _version(EMULATED)]
    return (specs[-1][1], specs[-1][2]) if specs else None


def describe(gate: str) -> str:
    """``on (Beta)``, ``off (Alpha)``, ``not in 1.34`` or ``unknown``."""
    if gate not in _SPECS:
        return "unknown"
    got = at_1_34(gate)
    if got is None:
        return f"not in {EMULATED} (from {_SPECS[gate][0][0]})"
    return f"{'on' if got[0] else 'off'} ({got[1]})"


NEEDED: Final[Mapping[str, str]] = {
    "InPlacePodVerticalScalingSchedulerPreemption": "the scheduler's preemption for deferred in-place resizes",
    "NodeDeclaredFeatures": "the NodeDeclaredFeatures filter over nodes' status.declaredFeatures",
    "OpportunisticBatching": "the scheduler's opportunistic batching of pods with one signature",
}
"""Gates without which a workload setting them on measures something else than upstream's:
set to true and not in 1.34, the workload is skipped (``skip_reason``), never run without."""


IMPLEMENTED: Final[Mapping[str, str]] = {
    "DRAConsumableCapacity": "consumable capacity: devices shared by several allocations",
    "DRAPartitionableDevices": "partitionable devices: shared counters, per-device nodes",
}
"""DRA gates off in 1.34 whose behaviour the emulator has (the allocator's ``Features``, the API
server's ``feature_gates``): a workload turning them on runs with them on, and its result says so
(``featureGatesHonoured``)."""


def skip_reason(gates: Mapping[str, bool]) -> str:
    """Why a workload setting ``gates`` is not run ("" when it is): a gate of ``NEEDED`` on
    that 1.34 does not have, or a DRA gate on that 1.34 lacks or has off, unless ``IMPLEMENTED``
    (a DRA workload measures what its gate turns on: run without it, it measures something else)."""
    for gate in sorted(gates):
        if not gates[gate]:
            continue
        if gate in NEEDED and at_1_34(gate) is None:
            return f"feature gate {gate} ({NEEDED[gate]}; {describe(gate)}), which the emulator does not have"
        got = at_1_34(gate)
        if gate.startswith("DRA") and gate not in IMPLEMENTED and (got is None or not got[0]):
            return f"feature gate {gate} ({describe(gate)}; what it turns on), which the emulator does not have"
    return ""
