"""The NodeClaim lifecycle of kubernetes-sigs/karpenter v1.9.1 (``pkg/controllers/nodeclaim/
lifecycle``: launch.go, registration.go, initialization.go, liveness.go), cluster state's taints
(``pkg/controllers/state/statenode.go`` ``Taints``) and awslabs/operatorpkg's condition set
(``status/condition_set.go``, cases ported from ``status/condition_set_test.go``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.conditions import ConditionSet, nodeclaim_conditions
from agents.autoscaler.karpenter.lifecycle import (
    INITIALIZED_LABEL,
    REGISTERED_LABEL,
    UNREGISTERED_TAINT,
    _not_initialized,
    reconcile,
    state_taints,
    sync_node,
)
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.core import Node, NodeCondition, NodeSpec, NodeStatus, Taint
from emulator.base.api.karpenter import NodeClaim, NodeClaimResources, NodeClaimSpec, NodeClaimStatus
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.apiserver.server import WriteRecord
from emulator.base.runtime.clock import format_timestamp, parse_timestamp

ROOT = Path(__file__).resolve().parents[2]
CREATED = format_timestamp(100.0)


class Ticking:
    """A clock whose every reading is one second later (the upstream test sleeps between sets)."""

    def __init__(self, t: float = 200.0) -> None:
        self.t = t

    def __call__(self) -> str:
        self.t += 1
        return format_timestamp(self.t)


def _set(generation: int = 1, deleting: bool = False, now: Ticking | None = None, items: Any = ()) -> ConditionSet:
    return ConditionSet(
        list(items), root="Ready", dependents=("Foo", "Bar"), generation=generation, created=CREATED,
        deleting=deleting, now=now or Ticking(),
    )  # fmt: skip


def _status(cs: ConditionSet, t: str) -> str:
    c = cs.get(t)
    assert c is not None
    return c.status


# --- operatorpkg's condition set ---------------------------------------------------------------


def test_for_initialises_root_and_dependents_at_creation() -> None:
    cs = _set()
    assert [c.type for c in cs.items] == ["Foo", "Bar", "Ready"]
    assert all(c.status == "Unknown" and c.last_transition_time == CREATED for c in cs.items)
    ready = cs.get("Ready")
    assert ready is not None
    assert (ready.reason, ready.message) == ("ReconcilingDependents", "Foo=Unknown, Bar=Unknown")
    assert cs.get("Foo").reason == "AwaitingReconciliation"  # type: ignore[union-attr]


def test_toggle_conditions() -> None:
    """``should correctly toggle conditions``."""
    cs = _set()
    assert cs.set_unknown("Foo", "reason", "message")
    foo = cs.get("Foo")
    assert foo is not None
    assert (foo.reason, foo.message, foo.observed_generation) == ("reason", "message", 1)
    assert foo.last_transition_time == CREATED  # Unknown to Unknown: no transition
    assert cs.set_true("Foo")
    foo = cs.get("Foo")
    assert foo is not None
    assert (foo.status, foo.reason, foo.message) == ("True", "Foo", "")
    assert _status(cs, "Ready") == "Unknown"
    assert cs.set("Bar", "False", "reason", "message")
    assert _status(cs, "Ready") == "False"
    assert cs.get("Ready").reason == "UnhealthyDependents"  # type: ignore[union-attr]
    bar_false = cs.get("Bar")
    assert cs.set("Bar", "True", "reason", "message")
    bar = cs.get("Bar")
    assert bar is not None
    assert bar_false is not None
    assert parse_timestamp(bar.last_transition_time or "") > parse_timestamp(foo.last_transition_time or "")
    assert _status(cs, "Ready") == "True"
    assert cs.set("Bar", "False", "another-reason", "another-message")
    assert cs.get("Bar").last_transition_time != bar_false.last_transition_time  # type: ignore[union-attr]
    # no transition when nothing differs
    assert not cs.set_true("Foo")
    assert not cs.set("Bar", "False", "another-reason", "another-message")
    # a condition outside the set, first set: the clock's time
    assert cs.set_true("Baz")
    assert cs.get("Baz").last_transition_time != CREATED  # type: ignore[union-attr]
    # a new generation: same status keeps its time, the generation moves
    before = cs.get("Bar")
    cs.generation = 2
    assert cs.set("Bar", "False", "another-reason", "another-message")
    after = cs.get("Bar")
    assert after is not None
    assert before is not None
    assert (after.last_transition_time, after.observed_generation) == (before.last_transition_time, 2)
    assert (_status(cs, "Ready"), cs.get("Ready").reason) == ("False", "UnhealthyDependents")  # type: ignore[union-attr]
    assert cs.set_true("Bar")
    assert (_status(cs, "Ready"), cs.get("Ready").reason) == ("Unknown", "ReconcilingDependents")  # type: ignore[union-attr]
    assert cs.set_true("Foo")
    assert _status(cs, "Ready") == "True"


def test_sorted_by_transition_root_last() -> None:
    """``should sort status conditions``."""
    cs = _set()
    assert cs.items[-1].type == "Ready"
    cs.set_true("Foo")
    assert [c.type for c in cs.items][-2:] == ["Foo", "Ready"]
    cs.set_true("Bar")
    assert [c.type for c in cs.items][-3:] == ["Foo", "Bar", "Ready"]
    cs.set_true("Baz")
    assert [c.type for c in cs.items] == ["Foo", "Bar", "Baz", "Ready"]


def test_deletion_bumps_every_generation() -> None:
    """``should bump generation of all conditions when deleting``."""
    cs = _set()
    cs.set_true("Foo")
    cs.set_true("Bar")
    cs.deleting, cs.generation = True, 2
    assert cs.set_true("Foo")
    assert [c.observed_generation for c in cs.items] == [2, 2, 2]
    assert _status(cs, "Ready") == "True"


def test_clear_sorts_by_type_and_refuses_dependents() -> None:
    cs = _set()
    cs.set_true("Zed")
    cs.set_true("Foo")
    assert cs.clear("Zed")
    assert [c.type for c in cs.items] == ["Bar", "Foo", "Ready"]
    assert not cs.clear("Zed")
    for t in ("Ready", "Foo"):
        with pytest.raises(ValueError, match="not implemented"):
            cs.clear(t)


# --- the lifecycle's pieces --------------------------------------------------------------------

GPU = "example.com/gpu"
NOT_READY = Taint(key="node.kubernetes.io/not-ready", effect="NoSchedule")
STARTUP = Taint(key="example.com/agent", effect="NoSchedule", value="starting")
POOL = Taint(key="team", effect="NoSchedule", value="a")


def _claim(**spec: Any) -> NodeClaim:
    return NodeClaim(
        metadata=ObjectMeta(name="c", creation_timestamp=CREATED, generation=1, labels={"karpenter.sh/nodepool": "p"},
                            annotations={"a": "1"}),
        spec=NodeClaimSpec(**spec),
        status=NodeClaimStatus(provider_id="kwok://c"),
    )  # fmt: skip


def _requests(**amounts: str) -> dict[str, Any]:
    names = {"cpu": "cpu", "gpu": GPU}
    return {"resources": NodeClaimResources(requests={names[k]: parse_quantity(v) for k, v in amounts.items()})}


def _node(taints: list[Taint], ready: bool = True, labels: dict[str, str] | None = None, **alloc: str) -> Node:
    return Node(
        metadata=ObjectMeta(name="c", labels=labels or {}),
        spec=NodeSpec(taints=taints),
        status=NodeStatus(
            conditions=[NodeCondition(type="Ready", status="True" if ready else "False")],
            allocatable={k: parse_quantity(v) for k, v in alloc.items()},
        ),
    )


@pytest.mark.parametrize(
    ("node", "spec", "want"),
    [
        (None, {}, ("NodeNotFound", "Node not registered with cluster")),
        (_node([], ready=False), {}, ("NodeNotReady", "Node status is NotReady")),
        (_node([STARTUP]), {"startup_taints": [STARTUP]},
         ("StartupTaintsExist", 'StartupTaint "example.com/agent=starting:NoSchedule" still exists')),
        (_node([NOT_READY]), {},
         ("KnownEphemeralTaintsExist", 'KnownEphemeralTaint "node.kubernetes.io/not-ready:NoSchedule" still exists')),
        (_node([UNREGISTERED_TAINT]), {},
         ("KnownEphemeralTaintsExist", 'KnownEphemeralTaint "karpenter.sh/unregistered:NoExecute" still exists')),
        (_node([], cpu="2"), _requests(cpu="1", gpu="1"),
         ("ResourceNotRegistered", 'Resource "example.com/gpu" was requested but not registered')),
        (_node([], cpu="2", **{GPU: "0"}), _requests(gpu="1"),
         ("ResourceNotRegistered", 'Resource "example.com/gpu" was requested but not registered')),
        (_node([], cpu="2"), _requests(cpu="1", gpu="0"), None),
        (_node([POOL], cpu="2"), {"taints": [POOL], "startup_taints": [replace(STARTUP, effect="NoExecute")]}, None),
    ],
)  # fmt: skip
def test_initialization_waits_as_upstream_says(node: Node | None, spec: dict[str, Any], want: Any) -> None:
    assert _not_initialized(_claim(**spec), node) == want


def test_sync_node() -> None:
    claim = _claim(taints=[POOL], startup_taints=[STARTUP])
    node = _node([UNREGISTERED_TAINT, replace(POOL, value="other")], labels={"x": "y"})
    synced = sync_node(claim, node)
    # Merge: a taint matching by key and effect is kept as the node has it
    assert synced.spec.taints == [replace(POOL, value="other"), STARTUP]
    assert synced.metadata.labels == {"x": "y", "karpenter.sh/nodepool": "p", REGISTERED_LABEL: "true"}
    assert synced.metadata.annotations == {"a": "1"}
    no_sync = sync_node(claim, _node([UNREGISTERED_TAINT], labels={"karpenter.sh/do-not-sync-taints": "true"}))
    assert no_sync.spec.taints == []


@pytest.mark.parametrize(
    ("taints", "labels", "want"),
    [
        ([UNREGISTERED_TAINT], {}, [POOL]),  # not registered: the NodeClaim's taints
        ([POOL, STARTUP, NOT_READY], {REGISTERED_LABEL: "true"}, [POOL]),  # not initialized
        ([POOL, STARTUP, NOT_READY], {REGISTERED_LABEL: "true", INITIALIZED_LABEL: "true"}, [POOL, STARTUP, NOT_READY]),
    ],
)  # fmt: skip
def test_state_taints(taints: list[Taint], labels: dict[str, str], want: list[Taint]) -> None:
    claim = _claim(taints=[POOL], startup_taints=[STARTUP])
    assert state_taints(_node(taints, labels=labels), claim) == want


class _Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def timestamp(self) -> str:
        return format_timestamp(self.t)


class _Agent:
    """What ``reconcile`` reads of the agent, with the NodeClaim's writes and deletion kept."""

    def __init__(self, t: float) -> None:
        self.clock = _Clock(t)
        self.nodes = {}  # type: ignore[var-annotated]
        self.written: list[NodeClaim] = []
        self.deleted: list[str] = []
        self.disrupted: list[str] = []
        agent = self

        class _Client:
            async def delete(self, kind: str, name: str, ns: str) -> None:
                agent.deleted.append(name)

        class _Disruption:
            def count_disrupted(self, reason: str) -> None:
                agent.disrupted.append(reason)

        self.client, self.disruption = _Client(), _Disruption()
        self.nodes = _Nodes()

    async def write_status(self, claim: NodeClaim) -> bool:
        self.written.append(claim)
        return True


class _Nodes:
    def get(self, name: str, ns: str) -> None:
        return None


@pytest.mark.asyncio
async def test_liveness_deletes_a_nodeclaim_never_registered() -> None:
    """liveness.go: 15 minutes after ``Registered`` last changed status (its creation)."""
    claim = _claim()
    claim = replace(claim, status=replace(claim.status, conditions=nodeclaim_conditions(claim, lambda: CREATED).items))
    early = _Agent(100.0 + 899)
    assert not await reconcile(early, claim)
    assert early.deleted == []
    assert len(early.written) == 1
    reg = next(c for c in early.written[0].status.conditions if c.type == "Registered")
    assert (reg.status, reg.reason, reg.last_transition_time) == ("Unknown", "NodeNotFound", CREATED)
    late = _Agent(100.0 + 900)
    assert not await reconcile(late, early.written[0])
    assert late.deleted == ["c"]
    assert late.disrupted == ["registration_timeout"]
    assert late.written == []


def _true(claim: NodeClaim, t: str) -> bool:
    return any(c.type == t and c.status == "True" for c in claim.status.conditions)


# --- end to end --------------------------------------------------------------------------------


def test_nodeclaims_and_nodes_move_as_upstream() -> None:
    """A NodeClaim launched with its Node absent, registered (the Node synced), initialized
    (labelled) once Ready without ephemeral taints; the Node created with only the unregistered
    taint."""
    claims: dict[str, list[NodeClaim]] = {}
    nodes: dict[str, list[tuple[str, Node]]] = {}

    def on_write(rec: WriteRecord) -> None:
        if rec.new is None:
            return
        if rec.kind == "NodeClaim" and rec.verb == "updateStatus":
            claims.setdefault(rec.new.metadata.name, []).append(rec.new)
        elif rec.kind == "Node" and rec.verb in ("create", "update"):
            nodes.setdefault(rec.new.metadata.name, []).append((rec.verb, rec.new))

    result = run_scenario(load_scenario(ROOT / "scenarios" / "karpenter-burst.yaml"), RunOptions(on_write=on_write))
    assert result.passed
    assert len(claims) == 5
    for name, writes in claims.items():
        first = {c.type: c for c in writes[0].status.conditions}
        created = writes[0].metadata.creation_timestamp
        assert (first["Launched"].status, first["Registered"].reason, first["Initialized"].reason) == (
            "True", "NodeNotFound", "AwaitingReconciliation",
        )  # fmt: skip
        # Registered, set again (NodeNotFound), moved behind Initialized (same time, stable sort)
        assert (first["Ready"].status, first["Ready"].reason, first["Ready"].message) == (
            "Unknown", "ReconcilingDependents", "Initialized=Unknown, Registered=Unknown",
        )  # fmt: skip
        assert {first[t].last_transition_time for t in ("Registered", "Initialized", "Ready")} == {created}
        assert writes[0].status.conditions[-1].type == "Ready"
        registered = next(w for w in writes if _true(w, "Registered"))
        assert registered.status.node_name == name
        initialized = next(w for w in writes if _true(w, "Initialized"))
        assert {c.type: c.status for c in initialized.status.conditions}["Ready"] == "True"
        verbs = nodes[name]
        assert verbs[0][0] == "create"
        assert verbs[0][1].spec.taints == [UNREGISTERED_TAINT]
        sync = next(n for v, n in verbs if v == "update" and n.metadata.labels.get(REGISTERED_LABEL) == "true")
        assert UNREGISTERED_TAINT not in sync.spec.taints
        assert sync.metadata.labels["karpenter.sh/nodepool"] == registered.metadata.labels["karpenter.sh/nodepool"]
        assert any(v == "update" and n.metadata.labels.get(INITIALIZED_LABEL) == "true" for v, n in verbs)
