"""The scheduler cache's pod bookkeeping: which pods it holds on which node, assumed or added,
and the assumed-pod expiry (upstream ``podStates``, ``assumedPods`` and the ``AssumePod`` ..
``RemovePod``, ``cleanupAssumedPods`` of ``backend/cache/cache.go``, v1.34).

What this module owns: ``PodStates``, the base of ``Cache`` with the pod state machine below,
filing each pod's PodInfo on its node's NodeInfo (every change moves the node to the MRU end of
the cache's node dict, so the next ``update_snapshot`` re-clones it), and ``CacheError``.

Pod states (key = pod UID, as upstream ``GetPodKey``)::

    state      | event                           | next     | effect on the node's NodeInfo
    -----------+---------------------------------+----------+--------------------------------------
    (unknown)  | assume_pod (spec.nodeName set)  | assumed  | pod added (requests, ports, affinity)
    (unknown)  | add_pod (informer)              | added    | pod added
    assumed    | finish_binding                  | assumed  | none; starts the TTL clock if ttl > 0
    assumed    | add_pod (informer confirms)     | added    | assumed copy replaced by the real pod,
               |                                 |          | moved if it landed on another node
    assumed    | forget_pod (same node)          | (gone)   | pod removed; totals back to before
    assumed    | remove_pod                      | (gone)   | pod removed
    assumed    | TTL expiry (ttl > 0, bound)     | (gone)   | pod removed (cleanup_assumed_pods)
    added      | update_pod (same node)          | added    | old removed, new added
    added      | remove_pod                      | (gone)   | pod removed
    any other  | the calls above                 | same     | raises CacheError (a caller bug)

A rejected call changes nothing. Messages are upstream's (``pod <uid>(<ns>/<name>) wasn't assumed
so cannot be forgotten`` ...). Where upstream exits the process (a known pod updated or removed
on another node: "scheduler cache is corrupted") this raises ``CacheError`` too; a pod without
``spec.nodeName`` is rejected rather than filed under the node "".

Assumed pods never expire in v1.30–v1.34 (kube-scheduler passes ttl 0; issue #106361);
``assumed_ttl`` > 0 restores the old behaviour for experiments.

PodInfo reuse: each pod's state keeps the PodInfo filed on its NodeInfo. When a newer version of
the pod replaces it (``update_pod``, or ``add_pod`` confirming an assumed pod) and the spec is
equal, the new PodInfo copies the derived data from the old one instead of recomputing it
(``reuse_pod_info``): a PodInfo is a function of ``pod.spec`` without ``nodeName`` and of the
resize state of its status (``resources.resize_state``; ``resources.same_requests``: states
that give the spec's requests count as equal) only, so
``assume_pod`` also reuses the queue's PodInfo of the pod it assumes. The NodeInfo then replaces the
entry in one step (``NodeInfo.replace_pod``: the lists and their order the remove-then-add would
leave, the same amounts, one new generation instead of two) when the pod stays on a real node and
has no host ports (their bookkeeping is re-done by remove-then-add, as before).

In-place swap (``_swap``): when nothing of the node changes but the Pod object — a status
write (same spec object, same requests) or the confirmation of an assumed pod (an equal spec),
the same labels and deletion timestamp, and the pod last in its NodeInfo's lists (where
remove-then-add would leave it) — the filed PodInfo's ``pod`` is replaced in place: no new
PodInfo, no generation, and the node is not re-cloned (every snapshot clone listing that PodInfo
shows the new version at once, which is what its next re-clone would show). Generations are
not observable; the per-generation memos (PodTopologySpread's, InterPodAffinity's counts) read
a pod's labels, namespace and deletion timestamp only, none of which a swap changes.

What it does not own: the nodes, image states and snapshots (``cache.py``: ``Cache``, which
builds the state declared here), nor NodeInfo arithmetic (``framework/node_info.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from agents.scheduler.framework.types import NodeInfo, PodInfo, pod_info_alike, reuse_pod_info
from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

__all__ = ["CacheError", "PodStates"]


class CacheError(Exception):
    """A call the cache's state machine does not allow: a bug in the caller, or lost events."""


@dataclass(slots=True)
class _PodState:
    pod: Pod
    info: PodInfo | None = None
    """The PodInfo filed on the pod's NodeInfo (reused while the spec stays equal)."""
    binding_finished: bool = False
    deadline: float | None = None


def _pod_ref(pod: Pod) -> str:
    """``<uid>(<namespace>/<name>)``, as upstream's messages print ``key, klog.KObj(pod)``."""
    meta = pod.metadata
    return f"{meta.uid}({meta.namespace}/{meta.name})"


def _require_node_name(pod: Pod) -> None:
    if not pod.spec.node_name:
        raise CacheError(f"pod {_pod_ref(pod)} has no spec.nodeName")


class PodStates:
    """The pod state machine of the ``Cache`` (a base class: ``Cache.__init__`` builds the state
    declared here)."""

    _clock: Clock | None
    assumed_ttl: float
    _pods: dict[str, _PodState]
    _assumed: dict[str, None]
    _nodes: OrderedDict[str, NodeInfo]
    hold_swaps: bool

    def assume_pod(self, pod: Pod, prev: PodInfo | None = None) -> None:
        """Count ``pod`` (``spec.nodeName`` = the chosen node) on its node before it is bound;
        ``prev``: a PodInfo of the pod before ``nodeName`` was set (reused, see ``reuse_pod_info``)."""
        key = pod.metadata.uid or self._key(pod)  # ``_key`` raises on an empty UID
        if key in self._pods:
            raise CacheError(f"pod {_pod_ref(pod)} is in the cache, so can't be assumed")
        if not pod.spec.node_name:
            _require_node_name(pod)
        self._add(pod, assumed=True, prev=prev)

    def finish_binding(self, pod: Pod) -> None:
        """The binding cycle ended (successfully or not); starts the TTL if there is one."""
        key = pod.metadata.uid or self._key(pod)  # ``_key`` raises on an empty UID
        state = self._pods.get(key)
        if state is None or key not in self._assumed:
            return
        state.binding_finished = True
        state.deadline = self._clock.now() + self.assumed_ttl if self.assumed_ttl and self._clock else None

    def forget_pod(self, pod: Pod) -> None:
        """Undo ``assume_pod`` (Reserve/Permit/bind failed)."""
        key = pod.metadata.uid or self._key(pod)  # ``_key`` raises on an empty UID
        state = self._pods.get(key)
        if state is not None and state.pod.spec.node_name != pod.spec.node_name:
            raise CacheError(
                f"pod {_pod_ref(pod)} was assumed on {pod.spec.node_name} but assigned to {state.pod.spec.node_name}"
            )
        if state is None or key not in self._assumed:
            raise CacheError(f"pod {_pod_ref(pod)} wasn't assumed so cannot be forgotten")
        self._remove(state.pod)

    def add_pod(self, pod: Pod) -> None:
        """The informer saw an assigned pod: confirm it if assumed, else add it."""
        key = pod.metadata.uid or self._key(pod)  # ``_key`` raises on an empty UID
        if not pod.spec.node_name:
            _require_node_name(pod)
        state = self._pods.get(key)
        if state is None:
            self._add(pod, assumed=False)
        elif key in self._assumed:
            # Confirmed: replace the assumed copy with the real pod, on the node it really got.
            info = state.info
            if info is not None and pod_info_alike(info, pod) and self._swap(state, info, pod):
                self._assumed.pop(key, None)
                return
            if not self._replace(state, pod):
                self._remove(state.pod)
                self._add(pod, assumed=False, prev=state.info)
        else:
            raise CacheError(f"pod {_pod_ref(pod)} was already in added state")

    def update_pod(self, old: Pod, new: Pod, *, alike: bool = False) -> None:
        """``alike``: ``new`` has ``old``'s spec object and ``same_requests(old, new)`` (the
        caller checked: a status write); the PodInfo filed for ``old`` is then reused unchecked."""
        key = old.metadata.uid or self._key(old)  # ``_key`` raises on an empty UID
        state = self._pods.get(key)
        if state is None:
            raise CacheError(f"pod {_pod_ref(old)} is not added to scheduler cache, so cannot be updated")
        if key in self._assumed:
            raise CacheError(f"assumed pod {_pod_ref(old)} should not be updated")
        if state.pod.spec.node_name != new.spec.node_name:
            raise CacheError(
                f"pod {_pod_ref(old)} updated on a different node than previously added to "
                f"({state.pod.spec.node_name} -> {new.spec.node_name}); scheduler cache is corrupted"
            )
        info = state.info
        if alike and info is not None and info.pod is old and self._swap(state, info, new):
            return
        if not self._replace(state, new, old if alike else None):
            self._remove(state.pod)
            self._add(new, assumed=False, prev=state.info)

    def remove_pod(self, pod: Pod) -> None:
        key = pod.metadata.uid or self._key(pod)  # ``_key`` raises on an empty UID
        state = self._pods.get(key)
        if state is None:
            raise CacheError(f"pod {_pod_ref(pod)} is not found in scheduler cache, so cannot be removed from it")
        # An empty nodeName is the informer's last known state after a missed delete: fine.
        if pod.spec.node_name and state.pod.spec.node_name != pod.spec.node_name:
            raise CacheError(
                f"pod {_pod_ref(pod)} was added to node {state.pod.spec.node_name} but removed from "
                f"{pod.spec.node_name}; scheduler cache is corrupted"
            )
        self._remove(state.pod)

    def is_assumed_pod(self, pod: Pod) -> bool:
        return (pod.metadata.uid or self._key(pod)) in self._assumed

    def get_pod(self, pod: Pod) -> Pod | None:
        """The cached copy of the pod with this UID (it may sit on a ghost node), or None."""
        state = self._pods.get(self._key(pod))
        return state.pod if state is not None else None

    def cleanup_assumed_pods(self) -> list[Pod]:
        """Expire assumed pods whose binding finished more than ``assumed_ttl`` ago (ttl > 0 only)."""
        if not self.assumed_ttl or self._clock is None:
            return []
        now = self._clock.now()
        expired = [
            state.pod
            for key in self._assumed
            if (state := self._pods[key]).binding_finished and state.deadline is not None and now > state.deadline
        ]
        for pod in expired:
            self._remove(pod)
        return expired

    def _key(self, pod: Pod) -> str:
        uid = pod.metadata.uid
        if not uid:
            raise CacheError(
                f"cannot get cache key for pod {pod.metadata.namespace}/{pod.metadata.name} with empty UID"
            )
        return uid

    def _add(self, pod: Pod, *, assumed: bool, prev: PodInfo | None = None) -> None:
        """File ``pod`` on its node; ``prev`` is the PodInfo of the version it replaces."""
        name = pod.spec.node_name
        info = self._nodes.get(name)
        if info is None:
            info = self._nodes[name] = NodeInfo()
        pi = reuse_pod_info(prev, pod) or PodInfo(pod)
        info.add_pod(pi)
        self._nodes.move_to_end(name)
        key = pod.metadata.uid
        self._pods[key] = _PodState(pod, pi)
        if assumed:
            self._assumed[key] = None

    def _replace(self, state: _PodState, pod: Pod, alike: Pod | None = None) -> bool:
        """``_remove(state.pod)`` then ``_add(pod, prev=state.info)`` (the pod added, not
        assumed) in one step, when ``pod`` has the filed PodInfo's spec, on the same node, a
        real one, and no host ports; False (nothing changed) otherwise. ``alike``: as
        ``reuse_pod_info``'s."""
        name = pod.spec.node_name
        if state.pod.spec.node_name != name:
            return False
        info = self._nodes.get(name)
        if info is None or info.node is None:
            return False
        pi = reuse_pod_info(state.info, pod, alike)
        if pi is None or pi.host_ports or not info.replace_pod(pi):
            return False
        self._nodes.move_to_end(name)
        key = pod.metadata.uid
        if self._pods.get(key) is state:  # the state as ``_add(pod, assumed=False)`` files it, in place
            state.pod, state.info, state.binding_finished, state.deadline = pod, pi, False, None
        else:
            self._pods[key] = _PodState(pod, pi)
        self._assumed.pop(key, None)
        return True

    def _swap(self, state: _PodState, pi: PodInfo, pod: Pod) -> bool:
        """``_replace`` without a new PodInfo or generation, when nothing of the node changes but
        the Pod object: ``pi`` (the PodInfo filed for the pod, whose derived data the caller
        found valid for ``pod``) is the last entry of its NodeInfo's lists (where the removal
        then addition would leave it: the same order), on a real node, without host ports, and
        ``pod`` has the filed version's labels and deletion timestamp (the other things of a
        pod on a node that the plugins' per-generation memos read: PodTopologySpread's and
        InterPodAffinity's counts). ``pi.pod`` then becomes ``pod`` in place: the NodeInfo and
        every snapshot clone that lists ``pi`` show the new version, as the next snapshot would
        after a replace; the node keeps its generation (its amounts, lists and order are what
        the replace would leave), so the snapshot need not re-clone it. False: nothing changed.

        Between cycles this is what ``update_snapshot`` would give; during one, only the pod's
        status, resourceVersion and metadata but labels and deletion timestamp can differ from
        the version the cycle started with, and no decision reads them after the Filter, Score
        and PostFilter steps, which run before the cycle yields (``_cycle_cost``); a cycle that
        yields sets ``hold_swaps`` first."""
        filed = pi.pod
        name = pod.spec.node_name
        if filed.spec.node_name != name or pi.host_ports or self.hold_swaps:
            return False
        fm, nm = filed.metadata, pod.metadata
        if fm.deletion_timestamp != nm.deletion_timestamp or (fm.labels is not nm.labels and fm.labels != nm.labels):
            return False
        info = self._nodes.get(name)
        if info is None or info.node is None:
            return False
        pods = info.pods
        if not pods or pods[-1] is not pi:
            return False
        if pi.required_anti_affinity_terms:
            lst = info.pods_with_required_anti_affinity
            if not lst or lst[-1] is not pi:
                return False
        if (
            pi.required_affinity_terms
            or pi.required_anti_affinity_terms
            or pi.preferred_affinity_terms
            or pi.preferred_anti_affinity_terms
        ):  # ``pi.has_affinity()`` inline
            lst = info.pods_with_affinity
            if not lst or lst[-1] is not pi:
                return False
        pi.pod = pod
        state.pod, state.binding_finished, state.deadline = pod, False, None
        return True

    def _remove(self, pod: Pod) -> None:
        """Remove the cached ``pod`` from its node; a ghost node goes with its last pod."""
        name = pod.spec.node_name
        info = self._nodes.get(name)
        if info is not None:
            if not info.remove_pod(pod):
                raise CacheError(f"no corresponding pod {pod.metadata.name} in pods of node {name}")
            if not info.pods and info.node is None:
                del self._nodes[name]
            else:
                self._nodes.move_to_end(name)
        key = pod.metadata.uid
        del self._pods[key]
        self._assumed.pop(key, None)
