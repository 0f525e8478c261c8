"""The drainability rules, one row per rule of upstream's ``rules.Default``
(``cluster-autoscaler/simulator/drainability/rules/*/rule.go`` and their tests, and
``simulator/drain.go`` ``GetPodsToMove``, 1.34): which pods a node's removal moves, which it
leaves (DaemonSet, mirror, long-terminating), and the blocking pod's reason and message."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.drain import RemainingPdbs, pods_to_move
from emulator.base.api.codec import load_manifests
from emulator.base.api.core import Pod
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus
from emulator.base.runtime.clock import format_timestamp
from tests.builders import label_selector, pod

RS = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="rs-uid", controller=True)
DS = OwnerReference(api_version="apps/v1", kind="DaemonSet", name="ds", uid="ds-uid", controller=True)
NOW = 1000.0


def _pod(
    name: str,
    *,
    ns: str = "default",
    owner: OwnerReference | None = RS,
    annotations: dict[str, str] | None = None,
    **kw: object,
) -> Pod:
    p = pod(name, namespace=ns, uid=name, labels={"app": "a"}, annotations=annotations, **kw)  # type: ignore[arg-type]
    refs = [owner] if owner is not None else []
    return replace(p, metadata=replace(p.metadata, owner_references=refs))


def _with_volume(p: Pod, volume: str) -> Pod:
    (template,) = load_manifests(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
        f"  containers: [{{name: c, image: busybox}}]\n  volumes: [{volume}]\n",
        source="t",
    )
    return replace(p, spec=replace(p.spec, volumes=template.spec.volumes, unmodelled=template.spec.unmodelled))


def _pdb(ns: str, allowed: int) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name="pdb", namespace=ns),
        spec=PodDisruptionBudgetSpec(selector=label_selector({"app": "a"})),
        status=PodDisruptionBudgetStatus(disruptions_allowed=allowed),
    )


SAFE = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
UNSAFE = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
CASES = [
    pytest.param(_pod("rep"), [], "move", "", id="replicated: moved"),
    pytest.param(_pod("ds", owner=DS), [], "daemon", "", id="daemonset: drainable, not moved"),
    pytest.param(
        _pod("mirror", owner=None, annotations={"kubernetes.io/config.mirror": "x"}),
        [],
        "skip",
        "",
        id="mirror: skipped",
    ),
    pytest.param(
        _pod("old", owner=None, deletion_timestamp=format_timestamp(NOW - 61), grace_seconds=30),
        [],
        "skip",
        "",
        id="long terminating: skipped",
    ),
    pytest.param(
        _pod("bare", owner=None), [], "block", "NotReplicated: default/bare is not replicated", id="no controller"
    ),
    pytest.param(
        _pod("bare-safe", owner=None, annotations=SAFE), [], "move", "", id="safe-to-evict overrides NotReplicated"
    ),
    pytest.param(_pod("done", owner=None, phase="Failed"), [], "move", "", id="terminal pod: drainable"),
    pytest.param(
        _pod("sys", ns="kube-system"),
        [],
        "block",
        "UnmovableKubeSystemPod: non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: sys",
        id="kube-system without PDB",
    ),
    pytest.param(_pod("sys", ns="kube-system"), [_pdb("kube-system", 1)], "move", "", id="kube-system with a PDB"),
    pytest.param(
        _pod("unsafe", annotations=UNSAFE),
        [],
        "block",
        "NotSafeToEvictAnnotation: pod annotated as not safe to evict present: unsafe",
        id="not safe to evict",
    ),
    pytest.param(
        _with_volume(_pod("local"), "{name: data, emptyDir: {}}"),
        [],
        "block",
        "LocalStorageRequested: pod with local storage present: local",
        id="emptyDir",
    ),
    pytest.param(
        _with_volume(_pod("host"), "{name: h, hostPath: {path: /x}}"),
        [],
        "block",
        "LocalStorageRequested: pod with local storage present: host",
        id="hostPath",
    ),
    pytest.param(
        _with_volume(_pod("mem"), "{name: m, emptyDir: {medium: Memory}}"), [], "move", "", id="emptyDir in memory"
    ),
    pytest.param(
        _with_volume(
            _pod("listed", annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "data"}),
            "{name: data, emptyDir: {}}",
        ),
        [],
        "move",
        "",
        id="local volume listed as safe",
    ),
    pytest.param(
        _pod("pdb"),
        [_pdb("default", 0)],
        "block",
        "NotEnoughPdb: not enough pod disruption budget to move default/pdb",
        id="PDB allows none",
    ),
    pytest.param(_pod("pdb"), [_pdb("default", 1)], "move", "", id="PDB allows one"),
]


@pytest.mark.parametrize(("p", "pdbs", "outcome", "blocking"), CASES)
def test_drainability_rules(p: Pod, pdbs: list[PodDisruptionBudget], outcome: str, blocking: str) -> None:
    move, daemons, blocked = pods_to_move([p], RemainingPdbs(pdbs), NOW)
    got = "block" if blocked else "move" if move else "daemon" if daemons else "skip"
    assert got == outcome
    assert (f"{blocked.reason}: {blocked.message}" if blocked else "") == blocking


def test_system_and_local_storage_rules_follow_their_flags() -> None:
    sys_pod = _pod("sys", ns="kube-system")
    local = _with_volume(_pod("local"), "{name: data, emptyDir: {}}")
    move, _, blocked = pods_to_move([sys_pod, local], RemainingPdbs([]), NOW, system=False, local=False)
    assert blocked is None
    assert move == [sys_pod, local]


def test_remaining_pdbs_are_charged_across_nodes() -> None:
    """``RemainingPdbTracker``: a budget of one covers one move, not two."""
    pdbs = RemainingPdbs([_pdb("default", 1)])
    a, b = _pod("a"), _pod("b")
    move, _, blocked = pods_to_move([a], pdbs, NOW)
    assert blocked is None
    pdbs.take(move)
    _, _, blocked = pods_to_move([b], pdbs, NOW)
    assert blocked is not None
    assert blocked.reason == "NotEnoughPdb"
