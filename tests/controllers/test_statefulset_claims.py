"""StatefulSet ``volumeClaimTemplates`` on the virtual clock: each replica's claim
``<template>-<set>-<ordinal>`` is created before its pod with the selector's labels, the pod's
volume names it (replacing a same-named template volume), claims are kept on scale-down and
set deletion by default and owned per ``persistentVolumeClaimRetentionPolicy`` otherwise, so the
garbage collector deletes them (upstream ``stateful_set_utils.go``, ``stateful_pod_control.go``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from msgspec.structs import replace

from agents.controllers.statefulset.claims import claim_owner_up_to_date, owner_refs_for
from emulator.base.api.apps import StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import PersistentVolumeClaim
from emulator.base.api.validation import default_object
from emulator.base.api.volumes import (
    PersistentVolumeClaimSpec,
    Volume,
    VolumeResourceRequirements,
)
from emulator.base.api.workloadvalidation import workload_problems
from tests.builders import pod
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers, make_ready, statefulset

CLAIM = PersistentVolumeClaim(
    metadata=ObjectMeta(name="data", labels={"tier": "db"}),
    spec=PersistentVolumeClaimSpec(
        access_modes=["ReadWriteOnce"],
        resources=VolumeResourceRequirements(requests={"storage": parse_quantity("1Gi")}),
    ),
)


def db(
    replicas: int = 2, *, when_deleted: str = "", when_scaled: str = "", volumes: list[Volume] | None = None
) -> StatefulSet:
    s = statefulset("db", replicas, policy="Parallel")
    retention = StatefulSetPersistentVolumeClaimRetentionPolicy(when_deleted=when_deleted, when_scaled=when_scaled)
    template = s.spec.template
    if volumes is not None:
        template = replace(template, spec=replace(template.spec, volumes=volumes))
    return replace(
        s,
        spec=replace(
            s.spec,
            volume_claim_templates=[CLAIM],
            persistent_volume_claim_retention_policy=retention,
            template=template,
        ),
    )


@asynccontextmanager
async def world(*sets: StatefulSet) -> AsyncIterator[Cluster]:
    async with open_cluster(namespaces=("default",)) as c:
        await c.start(Controllers(c, ["statefulset", "garbagecollector", "pvc-protection"]), "controllers")
        for s in sets:
            c.server.create(s)
        await c.at(1.0)
        yield c


def claims(c: Cluster) -> dict[str, PersistentVolumeClaim]:
    return {p.metadata.name: p for p in c.server.list("PersistentVolumeClaim")[0]}


async def scale(c: Cluster, replicas: int, t: float) -> None:
    s = c.server.get("StatefulSet", "db", "default")
    c.server.update(replace(s, spec=replace(s.spec, replicas=replicas)))
    await c.at(t)


@pytest.mark.asyncio
async def test_claims_are_created_before_the_pods_with_upstream_names_and_labels() -> None:
    async with world(db(2, volumes=[Volume(name="data"), Volume(name="scratch")])) as c:
        got = claims(c)
        assert sorted(got) == ["data-db-0", "data-db-1"]
        assert got["data-db-0"].metadata.labels == {"tier": "db", "app": "db"}
        assert got["data-db-0"].spec.volume_mode == "Filesystem"
        assert got["data-db-0"].metadata.owner_references == [], "Retain/Retain: no owner"
        order = [(w.kind, w.obj.metadata.name) for w in c.writes if w.verb == "create" and w.kind != "Event"]
        assert order.index(("PersistentVolumeClaim", "data-db-0")) < order.index(("Pod", "db-0"))
        p = c.pod("db-1", "default")
        assert [v.name for v in p.spec.volumes] == ["data", "scratch"]
        claim_volume = p.spec.volumes[0].persistent_volume_claim
        assert claim_volume is not None
        assert claim_volume.claim_name == "data-db-1"
        reasons = [(e.reason, e.message) for e in c.server.list("Event")[0] if "Claim" in e.message]
        assert ("SuccessfulCreate", "create Claim data-db-0 Pod db-0 in StatefulSet db success") in reasons


@pytest.mark.asyncio
async def test_claims_are_kept_on_scale_down_and_set_deletion_by_default() -> None:
    async with world(db(3)) as c:
        for i in range(3):
            make_ready(c, f"db-{i}")
        await scale(c, 1, 20.0)
        assert sorted(p.metadata.name for p in c.pods()) == ["db-0"]
        assert sorted(claims(c)) == ["data-db-0", "data-db-1", "data-db-2"]
        c.server.delete("StatefulSet", "db", "default")
        await c.at(60.0)
        assert sorted(claims(c)) == ["data-db-0", "data-db-1", "data-db-2"]


@pytest.mark.asyncio
async def test_when_scaled_delete_hands_the_claim_to_its_pod_and_the_gc_deletes_it() -> None:
    async with world(db(3, when_scaled="Delete")) as c:
        for i in range(3):
            make_ready(c, f"db-{i}")
        await c.at(5.0)
        await scale(c, 1, 30.0)
        assert sorted(claims(c)) == ["data-db-0"]
        owners = claims(c)["data-db-0"].metadata.owner_references
        assert owners == [], "in range: whenDeleted Retain, so no owner"


@pytest.mark.asyncio
async def test_when_deleted_delete_makes_the_set_the_claims_controller() -> None:
    async with world(db(2, when_deleted="Delete")) as c:
        await c.at(5.0)
        s = c.server.get("StatefulSet", "db", "default")
        for claim in claims(c).values():
            (ref,) = claim.metadata.owner_references
            assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
                "StatefulSet",
                "db",
                s.metadata.uid,
                True,
                True,
            )
        c.server.delete("StatefulSet", "db", "default")
        await c.at(60.0)
        assert claims(c) == {}


def _ref(obj: object, *, controller: bool = True) -> OwnerReference:
    meta = obj.metadata  # type: ignore[attr-defined]
    return OwnerReference(
        api_version=obj.api_version,  # type: ignore[attr-defined]
        kind=obj.kind,  # type: ignore[attr-defined]
        name=meta.name,
        uid=meta.uid,
        controller=controller or None,
        block_owner_deletion=controller or None,
    )


# upstream TestUpdateClaimOwnerRefForSetAndPod's shape: (scaled, deleted, pod scaled down) ->
# owners wanted
CASES = [
    ("Retain", "Retain", False, []),
    ("Retain", "Retain", True, []),
    ("Retain", "Delete", False, ["set"]),
    ("Retain", "Delete", True, ["set"]),
    ("Delete", "Retain", False, []),
    ("Delete", "Retain", True, ["pod"]),
    ("Delete", "Delete", False, ["set"]),
    ("Delete", "Delete", True, ["pod"]),
]


@pytest.mark.parametrize(("scaled", "deleted", "down", "want"), CASES)
def test_owner_refs_per_retention_policy(scaled: str, deleted: str, down: bool, want: list[str]) -> None:
    s = db(1 if down else 3, when_scaled=scaled, when_deleted=deleted)
    s = replace(s, metadata=replace(s.metadata, uid="set-uid"))
    p = pod("db-2", uid="pod-uid")
    claim = PersistentVolumeClaim(metadata=ObjectMeta(name="data-db-2", namespace="default"))
    refs = owner_refs_for(claim, s, p)
    assert [("set" if r.kind == "StatefulSet" else "pod") for r in refs] == want
    assert all(r.controller and r.block_owner_deletion for r in refs)
    done = replace(claim, metadata=replace(claim.metadata, owner_references=refs))
    assert claim_owner_up_to_date(done, s, p)
    assert claim_owner_up_to_date(claim, s, p) == (want == [])
    # a non-controller reference to the set is always brought up to date
    loose = replace(claim, metadata=replace(claim.metadata, owner_references=[_ref(s, controller=False)]))
    assert not claim_owner_up_to_date(loose, s, p)


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("whenDeleted", 'Unsupported value: "Keep": supported values: "Retain", "Delete"'),
        ("whenScaled", 'Unsupported value: "Keep": supported values: "Retain", "Delete"'),
    ],
)
def test_retention_policy_values_are_validated(when: str, message: str) -> None:
    s = db(1, **{"when_deleted" if when == "whenDeleted" else "when_scaled": "Keep"})
    problems = list(workload_problems(default_object(s), lambda _t: None))
    assert (f"spec.persistentVolumeClaimRetentionPolicy.{when}", message) in problems


def test_claim_templates_are_validated_as_claims() -> None:
    bad = replace(CLAIM, spec=replace(CLAIM.spec, access_modes=[]))
    s = db(1)
    s = replace(s, spec=replace(s.spec, volume_claim_templates=[bad]))
    problems = list(workload_problems(default_object(s), lambda _t: None))
    assert (
        "spec.volumeClaimTemplates[0].spec.accessModes",
        "Required value: at least 1 access mode is required",
    ) in problems
