"""An exact fast path for ``DefaultPreemption.select_victims_on_node`` during the dry run.

Why: the reference (``select_victims_on_node``, upstream ``SelectVictimsOnNode``) clones the
NodeInfo and the CycleState per node, removes every lower-priority pod, then runs the whole
Filter chain (with nominated pods: a clone more and two passes) once plus once per reprieve
candidate. The dry run visits ~100 nodes per attempt, more when nodes are nominated, and that
was most of PreemptionBasic's time.

When it applies (``VictimSearch.prepare``, once per dry run; otherwise the reference runs):

* the plugin's ``select_victims_on_node`` is DefaultPreemption's own (no override);
* every PreFilter plugin not skipped this cycle has no PreFilter extensions, so the reference's
  AddPod/RemovePod calls are no-ops and leave the CycleState unchanged;
* every Filter plugin not skipped this cycle is one of the known pod-independent plugins
  (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity: they read only the pod, the
  CycleState and ``node_info.node``) or NodeResourcesFit (it reads only ``allocatable``,
  ``requested`` and ``len(pods)``). Plugins are recognised by their defining module and class
  name (scheduler plugins may not import each other), so subclasses or look-alikes do not count.
  None of them writes to the CycleState in Filter.

Then, per node (``VictimSearch.select_victims``): the pod-independent plugins are run once on
the original NodeInfo; if one of them fails, the reference handles the node. Otherwise the
outcome of ``run_filter_plugins_with_nominated_pods`` on the node with some pods removed depends
only on the allocatable, the remaining pods' summed requests and count, and the summed requests
and count of the ≥-priority pods nominated to the node. That outcome (the Status object the
runner returns) is memoised, for the duration of one dry run (pod and CycleState fixed), under
``(allocatable, remaining requests (cpu, memory, ephemeral, pods, scalar items), remaining count,
(nominated requests, nominated count) or None)``, the remaining sums kept incrementally with
``Resource.add_resource``'s arithmetic. A miss computes it with the real runner on a real clone
of the NodeInfo with the same pods removed, as the reference would, given the cycle's CycleState
(the reference's copy of it would be equal: no extension runs, no filter writes). The victim
selection around it (lower-priority
pods in NodeInfo order, ``importance_key`` sort with one ``clock.now()`` per node, PDB split,
violating-first reprieve, final sort) is the reference's, so victims, violation counts and
statuses are identical. The original NodeInfo is never modified; nothing survives the dry run.

Differences that are not results: fewer NodeInfo generations are drawn from the global counter
(clones the reference would have made and mutated), and equal statuses of different nodes may be
the same Status object. ``tests/scheduler/test_preemption_fastpath.py`` checks equality with
the reference on random clusters; with ``VictimSearch.verify`` set it also recomputes every memo
hit on a real copy and checks the incremental key against the copy's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from agents.scheduler.framework.interface import ExtensionPoint, Handle
from agents.scheduler.framework.types import SUCCESS, Code, CycleState, NodeInfo, PodInfo, Resource, Status
from agents.scheduler.preemption import (
    PodDisruptionBudget,
    filter_pods_with_pdb_violation,
    importance_key,
    pod_priority,
)
from emulator.base.api.core import Pod

__all__ = ["NO_VICTIMS", "POD_INDEPENDENT_FILTERS", "RESOURCE_FILTERS", "VictimSearch"]

NO_VICTIMS: Final = "No preemption victims found for incoming pod"

_PLUGINS: Final = "agents.scheduler.plugins."
POD_INDEPENDENT_FILTERS: Final = frozenset(
    {
        (_PLUGINS + "nodeunschedulable", "NodeUnschedulable"),
        (_PLUGINS + "nodename", "NodeName"),
        (_PLUGINS + "tainttoleration", "TaintToleration"),
        (_PLUGINS + "nodeaffinity", "NodeAffinity"),
    }
)
"""(module, class) of Filter plugins whose result reads only the pod, CycleState and node."""
RESOURCE_FILTERS: Final = frozenset({(_PLUGINS + "noderesources_fit.fit", "NodeResourcesFit")})
"""(module, class) of Filter plugins reading only allocatable, requested and the pod count."""

_Key = tuple[Any, ...]
_Result = tuple[list[Pod], int, Status]


def _class_id(obj: object) -> tuple[str, str]:
    t = type(obj)
    return t.__module__, t.__qualname__


def _resource_key(r: Resource) -> _Key:
    return r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, tuple(r.scalar_resources.items())


def _add_scalars(into: dict[str, int] | None, scalars: dict[str, int], sign: int) -> dict[str, int]:
    """``Resource.add_resource`` on the scalar map (entries kept even when they reach 0)."""
    out = into if into is not None else {}
    for name, v in scalars.items():
        out[name] = out.get(name, 0) + sign * v
    return out


class _Remaining:
    """The summed requests (``Resource.add_resource``'s arithmetic) and count of the pods left
    on a node as the dry run removes and re-adds them: the node part of the memo key."""

    __slots__ = ("count", "cpu", "eph", "mem", "npods", "scalars")

    def __init__(self, node_info: NodeInfo) -> None:
        req = node_info.requested
        self.cpu, self.mem, self.eph, self.npods = (
            req.milli_cpu,
            req.memory,
            req.ephemeral_storage,
            req.allowed_pod_number,
        )
        self.scalars = dict(req.scalar_resources) if req.scalar_resources else None
        self.count = len(node_info.pods)

    def shift(self, r: Resource, sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) a pod with requests ``r``."""
        self.cpu += sign * r.milli_cpu
        self.mem += sign * r.memory
        self.eph += sign * r.ephemeral_storage
        self.npods += sign * r.allowed_pod_number
        if r.scalar_resources:
            self.scalars = _add_scalars(self.scalars, r.scalar_resources, sign)
        self.count += sign

    def key(self, node_key: _Key, nominated_key: _Key | None) -> _Key:
        scalars = tuple(self.scalars.items()) if self.scalars else ()
        return (node_key, self.cpu, self.mem, self.eph, self.npods, scalars, self.count, nominated_key)


class VictimSearch:
    """The fast victim search of one dry run (one pod, one CycleState); see the module doc."""

    __slots__ = ("_handle", "_independent", "_memo", "_pdbs", "_pod", "_priority", "_state")

    verify: bool = False
    """Tests set it: every lookup then also runs the filters on a real copy and asserts that the
    incremental key equals the copy's and that an existing memo entry equals the new status."""

    def __init__(
        self,
        handle: Handle,
        state: CycleState,
        pod: Pod,
        pdbs: Sequence[PodDisruptionBudget],
        independent: list[Any],
    ) -> None:
        self._handle = handle
        self._state = state
        self._pod = pod
        self._pdbs = pdbs
        self._priority = pod_priority(pod)
        self._independent = independent
        self._memo: dict[_Key, Status] = {}

    @classmethod
    def prepare(
        cls, handle: Handle, state: CycleState, pod: Pod, pdbs: Sequence[PodDisruptionBudget]
    ) -> VictimSearch | None:
        """A search when the profile's plugins allow it this cycle, else None (the reference)."""
        list_plugins = getattr(handle, "list_plugins", None)
        get_plugin = getattr(handle, "plugin", None)
        if list_plugins is None or get_plugin is None:
            return None
        points: dict[ExtensionPoint, list[str]] = list_plugins()
        skip = state.skip_filter_plugins
        for name in points.get(ExtensionPoint.PreFilter, []):
            if name in skip:
                continue
            extensions = getattr(get_plugin(name), "pre_filter_extensions", None)
            if extensions is None or extensions() is not None:
                return None
        independent: list[Any] = []
        for name in points.get(ExtensionPoint.Filter, []):
            if name in skip:
                continue
            plugin = get_plugin(name)
            cid = _class_id(plugin)
            if cid in POD_INDEPENDENT_FILTERS:
                independent.append(plugin)
            elif cid not in RESOURCE_FILTERS:
                return None
        return cls(handle, state, pod, pdbs, independent)

    def select_victims(self, node_info: NodeInfo) -> _Result | None:
        """``select_victims_on_node`` on a copy of ``node_info``, or None: use the reference."""
        priority = self._priority
        potential = [pi for pi in node_info.pods if (pi.pod.spec.priority or 0) < priority]
        if not potential:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)
        state, pod = self._state, self._pod
        for plugin in self._independent:
            if not plugin.filter(state, pod, node_info).is_success():
                return None
        uid = pod.metadata.uid
        nominated_key: _Key | None = None
        nominated = self._handle.nominated_pods_for_node(node_info.name)
        if nominated:
            nominated = [pi for pi in nominated if (pi.pod.spec.priority or 0) >= priority and pi.uid != uid]
            if len(nominated) == 1:  # Resource() plus one pod's requests: that pod's requests
                nominated_key = (_resource_key(nominated[0].resource), 1)
            elif nominated:
                total = Resource()
                for pi in nominated:
                    total.add_resource(pi.resource)
                nominated_key = (_resource_key(total), len(nominated))
        node_key = _resource_key(node_info.allocatable)
        remaining = _Remaining(node_info)
        for pi in potential:
            remaining.shift(pi.resource, -1)
        memo, verify = self._memo, self.verify
        reprieved: set[int] = set()
        key = remaining.key(node_key, nominated_key)
        status = memo.get(key)
        if status is None or verify:
            status = self._miss(key, node_info, potential, None, reprieved, nominated_key)
        if not status.is_success():
            return [], 0, status
        now = self._handle.clock.now()
        potential.sort(key=lambda pi: importance_key(pi.pod, now))
        if self._pdbs:
            violating, non_violating = filter_pods_with_pdb_violation(potential, self._pdbs)
        else:
            violating, non_violating = [], potential
        victims: list[PodInfo] = []
        num_violating = 0
        for group, is_violating in ((violating, True), (non_violating, False)):
            for pi in group:
                remaining.shift(pi.resource, 1)
                key = remaining.key(node_key, nominated_key)
                status = memo.get(key)
                if status is None or verify:
                    status = self._miss(key, node_info, potential, pi, reprieved, nominated_key)
                if status.is_success():
                    reprieved.add(id(pi))
                    continue
                remaining.shift(pi.resource, -1)
                victims.append(pi)
                num_violating += is_violating
        if violating and non_violating:
            victims.sort(key=lambda pi: importance_key(pi.pod, now))
        return [pi.pod for pi in victims], num_violating, SUCCESS

    def _miss(
        self,
        key: _Key,
        node_info: NodeInfo,
        potential: list[PodInfo],
        adding: PodInfo | None,
        reprieved: set[int],
        nominated_key: _Key | None,
    ) -> Status:
        """The runner's status on a copy of the node without the pods of ``potential`` that are
        neither ``adding`` nor reprieved (as the reference's copy), memoised under ``key``."""
        copy = node_info.clone()
        for pi in potential:
            if pi is not adding and id(pi) not in reprieved:
                copy.remove_pod(pi.pod)
        status = self._handle.run_filter_plugins_with_nominated_pods(self._state, self._pod, copy)
        if self.verify:
            actual = (_resource_key(copy.allocatable), *_resource_key(copy.requested), len(copy.pods), nominated_key)
            assert actual == key, f"incremental key {key} != the copy's {actual}"
            seen = self._memo.get(key)
            if seen is not None:
                assert (seen.code, seen.reasons, seen.plugin) == (status.code, status.reasons, status.plugin), key
        self._memo[key] = status
        return status
