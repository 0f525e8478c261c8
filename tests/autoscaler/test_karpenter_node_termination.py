"""A deleted NodeClaim's termination after the drain: kubernetes-sigs/karpenter v1.9.1
pkg/controllers/node/termination/controller.go ``finalize`` (the ``Drained``,
``VolumesDetached`` and ``InstanceTerminating`` conditions, written only when changed),
``awaitVolumeDetachment`` / ``pendingVolumeAttachments`` / ``filterVolumeAttachments``,
terminator/events/events.go (``NodeAwaitingVolumeDetachmentEvent``), and awslabs/operatorpkg
status/condition_set.go (the condition rules). Cases after termination/suite_test.go: "should
not delete nodes until all pods are deleted", the "VolumeAttachments" context's three, and
nodeclaim/lifecycle/termination_test.go's InstanceTerminating. ``terminate`` runs here pass by
pass against a real API server, as the agent's loop runs it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from agents.autoscaler.karpenter.conditions import ConditionSet
from agents.autoscaler.karpenter.events import Recorder, pretty_slice
from agents.autoscaler.karpenter.termination import TERMINATION_TIMESTAMP, terminate
from emulator.base.api.codec import object_from_dict
from emulator.base.api.errors import NotFound
from emulator.base.api.meta import Condition
from emulator.base.runtime.clock import format_timestamp
from tests.autoscaler.karpenter_disruption_helpers import run, scenario
from tests.cluster import Cluster, open_cluster

FINALIZER = "karpenter.sh/termination"
CONDITIONS = ("Drained", "VolumesDetached", "InstanceTerminating")


def _obj(doc: dict[str, Any]) -> Any:
    return object_from_dict(doc, source="t")


def _claim(annotations: dict[str, str] | None = None) -> Any:
    cond = [
        {"type": t, "status": "True", "reason": t, "message": "", "observedGeneration": 1,
         "lastTransitionTime": "2026-01-01T00:00:00Z"}
        for t in ("Launched", "Registered", "Initialized", "Ready")
    ]  # fmt: skip
    return _obj(
        {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
         "metadata": {"name": "n", "finalizers": [FINALIZER], "annotations": annotations or {}},
         "spec": {"nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "d"},
                  "requirements": []},
         "status": {"nodeName": "n", "providerID": "kwok://n", "conditions": cond}}
    )  # fmt: skip


def _va(name: str, pv: str) -> Any:
    return _obj(
        {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name},
         "spec": {"attacher": "d", "nodeName": "n", "source": {"persistentVolumeName": pv}}}
    )  # fmt: skip


def _pod(name: str, **spec: Any) -> Any:
    return _obj(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}], **spec}}
    )  # fmt: skip


class _World:
    """The agent and ``Disruption`` pieces ``terminate`` uses, over a real API server: the
    informers read the server's store; the cloud deletes the Node."""

    def __init__(self, c: Cluster) -> None:
        self.c = c
        client = c.client("karpenter")
        server = c.server
        self.deleted: list[str] = []

        def get_node(name: str, _ns: str) -> Any:
            try:
                return server.get("Node", name)
            except NotFound:
                return None

        async def delete(name: str) -> None:
            self.deleted.append(name)
            server.delete("Node", name)

        async def set_taint(name: str, on: bool) -> bool:
            return True

        self.agent = SimpleNamespace(
            client=client,
            clock=c.clock,
            recorder=Recorder(client, c.clock),
            nodes=SimpleNamespace(get=get_node),
            pods=SimpleNamespace(objects=lambda: server.list("Pod")[0]),
            cloud=SimpleNamespace(delete=delete),
            counters={"podsDisrupted": 0},
        )
        self.d = SimpleNamespace(
            agent=self.agent,
            terminating={},
            marked={},
            pod_sets={},
            set_taint=set_taint,
            pods_on=lambda node: [p for p in server.list("Pod")[0] if p.spec.node_name == node],
        )
        server.create(_obj({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))

    def start(self, claim: Any) -> None:
        self.c.server.create(claim, restore=True)
        self.c.server.delete("NodeClaim", "n")

    async def step(self) -> Any:
        """One pass; the NodeClaim as stored after it (None once gone)."""
        await terminate(self.d, self.c.server.get("NodeClaim", "n"))
        try:
            return self.c.server.get("NodeClaim", "n")
        except NotFound:
            return None

    def status_writes(self) -> int:
        return len([w for w in self.c.writes if w.kind == "NodeClaim" and w.verb == "updateStatus"])

    def events(self, reason: str) -> list[str]:
        return [w.new.message for w in self.c.writes if w.kind == "Event" and w.new.reason == reason]


def _cond(claim: Any, type_: str) -> tuple[str, str] | None:
    c = next((c for c in claim.status.conditions if c.type == type_), None)
    return None if c is None else (c.status, c.reason)


@pytest.mark.asyncio
async def test_drained_condition_waits_for_pods() -> None:
    """suite_test.go "should not delete nodes until all pods are deleted": Drained is Unknown
    ``Draining`` while pods wait, written once (DeepEqual: no write while nothing changes);
    once they are gone Drained, VolumesDetached and InstanceTerminating go True in one status
    write, then the instance and the finalizer go."""
    async with open_cluster() as c:
        w = _World(c)
        c.server.create(_pod("a"))
        w.start(_claim())
        claim = await w.step()
        assert _cond(claim, "Drained") == ("Unknown", "Draining")
        assert _cond(claim, "VolumesDetached") is None
        writes = w.status_writes()
        await c.at(1.0)
        claim = await w.step()
        assert w.status_writes() == writes  # unchanged: no write
        assert w.deleted == []
        # the deletion bumped the generation: every condition is observed at it (operatorpkg Set)
        assert {k.observed_generation for k in claim.status.conditions} == {claim.metadata.generation}
        c.server.delete("Pod", "a", "default", grace_period_seconds=0)
        await c.at(2.0)
        assert await w.step() is None
        assert w.deleted == ["n"]
        last = next(r.new for r in reversed(c.writes) if r.kind == "NodeClaim" and r.verb == "updateStatus")
        assert [_cond(last, t) for t in CONDITIONS] == [("True", t) for t in CONDITIONS]
        assert w.status_writes() == writes + 1


@pytest.mark.asyncio
async def test_conflicting_status_write_is_retried() -> None:
    """Race: the pass reads a NodeClaim the informer has not yet seen written (its Drained
    Unknown write). Its status update conflicts (upstream's optimistic lock, a requeue): the
    instance stays; the next pass, on the stored NodeClaim, finishes with all three conditions."""
    async with open_cluster() as c:
        w = _World(c)
        c.server.create(_pod("a"))
        w.start(_claim())
        stale = c.server.get("NodeClaim", "n")
        await w.step()
        c.server.delete("Pod", "a", "default", grace_period_seconds=0)
        await terminate(w.d, stale)
        assert w.deleted == []
        assert "n" in w.d.terminating
        assert await w.step() is None
        assert w.deleted == ["n"]
        last = next(r.new for r in reversed(c.writes) if r.kind == "NodeClaim" and r.verb == "updateStatus")
        assert [_cond(last, t) for t in CONDITIONS] == [("True", t) for t in CONDITIONS]


@pytest.mark.asyncio
async def test_waits_for_volume_attachments() -> None:
    """suite_test.go "should wait for volume attachments": VolumesDetached Unknown
    ``AwaitingVolumeDetachment`` and the node's ``AwaitingVolumeDetachment`` Event while the
    attachment exists; True once it is deleted, then the instance goes."""
    async with open_cluster() as c:
        w = _World(c)
        c.server.create(_va("va-1", "foo"))
        w.start(_claim())
        claim = await w.step()
        assert _cond(claim, "Drained") == ("True", "Drained")
        assert _cond(claim, "VolumesDetached") == ("Unknown", "AwaitingVolumeDetachment")
        assert w.deleted == []
        assert w.events("AwaitingVolumeDetachment") == ["Awaiting deletion of bound volumeattachments (va-1)"]
        c.server.delete("VolumeAttachment", "va-1")
        await c.at(1.0)
        assert await w.step() is None
        last = next(r.new for r in reversed(c.writes) if r.kind == "NodeClaim" and r.verb == "updateStatus")
        assert _cond(last, "VolumesDetached") == ("True", "VolumesDetached")
        assert _cond(last, "InstanceTerminating") == ("True", "InstanceTerminating")
        assert w.deleted == ["n"]


@pytest.mark.asyncio
async def test_waits_only_for_drainable_pods_attachments() -> None:
    """suite_test.go "should only wait for volume attachments associated with drainable pods":
    the attachment of a PV whose claim a pod tolerating the disrupted taint uses does not wait
    (filterVolumeAttachments); the other does until deleted."""
    async with open_cluster() as c:
        w = _World(c)
        c.server.create(_va("va-foo", "foo"))
        c.server.create(_va("va-bar", "bar"))
        c.server.create(
            _obj({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "data", "namespace": "default"},
                  "spec": {"volumeName": "bar", "accessModes": ["ReadWriteOnce"],
                           "resources": {"requests": {"storage": "1Gi"}}}})
        )  # fmt: skip
        c.server.create(
            _pod("keeper", tolerations=[{"key": "karpenter.sh/disrupted", "operator": "Exists"}],
                 volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}])
        )  # fmt: skip
        w.start(_claim())
        claim = await w.step()
        assert _cond(claim, "VolumesDetached") == ("Unknown", "AwaitingVolumeDetachment")
        assert w.events("AwaitingVolumeDetachment") == ["Awaiting deletion of bound volumeattachments (va-foo)"]
        c.server.delete("VolumeAttachment", "va-foo")
        await c.at(1.0)
        assert await w.step() is None
        assert w.deleted == ["n"]


@pytest.mark.asyncio
async def test_volume_wait_ends_at_termination_time() -> None:
    """suite_test.go "should wait for volume attachments until the nodeclaim's termination grace
    period expires": past the termination time VolumesDetached is False
    ``TerminationGracePeriodElapsed`` and the instance goes with the attachment still there."""
    async with open_cluster() as c:
        w = _World(c)
        c.server.create(_va("va-1", "foo"))
        w.start(_claim({TERMINATION_TIMESTAMP: format_timestamp(60.0)}))
        claim = await w.step()
        assert _cond(claim, "VolumesDetached") == ("Unknown", "AwaitingVolumeDetachment")
        await c.at(60.0)
        claim = await w.step()
        assert _cond(claim, "VolumesDetached") == ("Unknown", "AwaitingVolumeDetachment")  # not after it yet
        await c.at(300.0)
        assert await w.step() is None
        last = next(r.new for r in reversed(c.writes) if r.kind == "NodeClaim" and r.verb == "updateStatus")
        assert _cond(last, "VolumesDetached") == ("False", "TerminationGracePeriodElapsed")
        assert _cond(last, "InstanceTerminating") == ("True", "InstanceTerminating")
        assert w.deleted == ["n"]


@pytest.mark.asyncio
async def test_instance_terminating_without_node() -> None:
    """nodeclaim/lifecycle/controller.go finalize: a NodeClaim whose node never registered
    still has its instance deleted: InstanceTerminating True (a providerID), then the finalizer."""
    async with open_cluster() as c:
        w = _World(c)
        c.server.delete("Node", "n")
        w.start(_claim())
        assert await w.step() is None
        last = next(r.new for r in reversed(c.writes) if r.kind == "NodeClaim" and r.verb == "updateStatus")
        assert _cond(last, "InstanceTerminating") == ("True", "InstanceTerminating")
        assert _cond(last, "Drained") is None


def test_pretty_slice() -> None:
    """pkg/utils/pretty Slice, as the AwaitingVolumeDetachment message uses it (5 names)."""
    names = [f"va-{i}" for i in range(7)]
    assert pretty_slice(names[:1], 5) == "va-0"
    assert pretty_slice(names[:5], 5) == "va-0, va-1, va-2, va-3, va-4"
    assert pretty_slice(names, 5) == "va-0, va-1, va-2, va-3, va-4 and 2 other(s)"


def _set(deleting: bool = False) -> ConditionSet:
    times = iter(format_timestamp(t) for t in range(100, 200))
    conds = [Condition(type="Ready", status="True", reason="Ready", observed_generation=1,
                       last_transition_time=format_timestamp(5))]  # fmt: skip
    return ConditionSet(conds, root="Ready", dependents=("A",), generation=2, created=format_timestamp(1),
                        deleting=deleting, now=lambda: next(times))  # fmt: skip


def test_condition_set_rules() -> None:
    """operatorpkg condition_set.go: For sets a missing dependent Unknown at the creation time
    and recomputes the root; Set keeps lastTransitionTime while the status holds, is a no-op when
    nothing changes, orders by transition with the root last."""
    cs = _set()
    a = cs.get("A")
    assert a is not None
    assert (a.status, a.reason, a.last_transition_time) == ("Unknown", "AwaitingReconciliation", format_timestamp(1))
    ready = cs.get("Ready")
    assert ready is not None
    assert (ready.status, ready.reason, ready.message) == ("Unknown", "ReconcilingDependents", "A=Unknown")
    assert cs.set("Drained", "Unknown", "Draining", "Draining")
    assert not cs.set("Drained", "Unknown", "Draining", "Draining")
    drained = cs.get("Drained")
    assert drained is not None
    when = drained.last_transition_time
    assert cs.set("Drained", "Unknown", "Other", "Other")
    drained = cs.get("Drained")
    assert drained is not None
    assert drained.last_transition_time == when
    assert cs.set_true("Drained")
    drained = cs.get("Drained")
    assert drained is not None
    assert drained.last_transition_time != when
    assert cs.set_true("A")
    ready = cs.get("Ready")
    assert ready is not None
    assert (ready.status, ready.reason) == ("True", "Ready")
    assert [c.type for c in cs.items][-1] == "Ready"
    assert [c.type for c in cs.items] == ["Drained", "A", "Ready"]


def test_condition_set_bumps_generation_when_deleting() -> None:
    """operatorpkg Set: on an object being deleted, the other conditions' observedGeneration is
    bumped to the object's (only when something is set)."""
    cs = _set(deleting=True)
    assert {c.observed_generation for c in cs.items} == {2}
    cs = _set(deleting=False)
    ready = cs.get("Ready")
    assert ready is not None
    assert ready.observed_generation == 2
    cs.set_true("X")
    assert {c.type: c.observed_generation for c in cs.items}["A"] == 2


def _pvc_scenario(tmp: Path) -> Path:
    """The disruption helpers' scenario (4 replicas scaled to 1: consolidation) with storage: a
    DaemonSet whose pod on every node mounts a generic ephemeral volume of an attach-required
    CSI driver, so each node has a VolumeAttachment (DaemonSet pods are drained, not
    rescheduled). With the DaemonSet's overhead counted on new NodeClaims, the four web pods
    of 800m share one large node, replaced by a 1-CPU type once one is left."""
    path = scenario(tmp)
    doc = yaml.safe_load(path.read_text())
    doc["storage"] = {"drivers": [{"name": "ebs.csi.aws.com", "provisionDelay": {"mean": "1s"},
                                   "attachDelay": {"mean": "1s"}}]}  # fmt: skip
    volume = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}  # fmt: skip
    web = doc["objects"][0]["spec"]["template"]["spec"]["containers"][0]
    web["resources"]["requests"]["cpu"] = "800m"  # one web pod and the agent fit a 1-CPU type
    doc["objects"] += [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "gp3",
         "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "Immediate"},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {
             "metadata": {"labels": {"app": "agent"}},
             "spec": {"volumes": [volume], "containers": [{"name": "a", "image": "agent",
                      "resources": {"requests": {"cpu": "10m"}},
                      "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}]}}}},
    ]  # fmt: skip
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_consolidation_with_volumes_finishes(tmp_path: Path) -> None:
    """A Karpenter node whose pods use CSI volumes is consolidated all the same: its
    VolumeAttachments go with the pods (attach/detach controller), termination waits for them
    (VolumesDetached True) and the node is removed."""
    r = run(_pvc_scenario(tmp_path))
    assert r.autoscaler["nodesRemoved"] >= 1
    assert r.messages("AwaitingVolumeDetachment")  # the pod's attachment outlived the drain a moment
    deleted = [c for c in r.kind("NodeClaim").values() if c.metadata.deletion_timestamp is not None]
    assert deleted
    for claim in deleted:
        assert _cond(claim, "VolumesDetached") == ("True", "VolumesDetached")
        assert _cond(claim, "InstanceTerminating") == ("True", "InstanceTerminating")
    web = [p for n, p in r.kind("Pod").items() if n.startswith("web-") and p.metadata.deletion_timestamp is None]
    assert web
    assert all(p.status.phase == "Running" for p in web)


def test_nodeclaim_status_json_names() -> None:
    """pkg/apis/v1/nodeclaim_status.go: ``providerID`` and ``imageID`` (json tags), which the
    termination reads (a NodeClaim with a providerID gets InstanceTerminating)."""
    from emulator.base.api.codec import to_builtins
    from emulator.base.api.karpenter import NodeClaimStatus

    doc = to_builtins(NodeClaimStatus(provider_id="kwok://n", image_id="i"))
    assert (doc["providerID"], doc["imageID"]) == ("kwok://n", "i")
    assert _claim().status.provider_id == "kwok://n"
