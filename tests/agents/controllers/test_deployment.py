"""The Deployment controller on virtual time, with the ReplicaSet controller and a fake
kubelet: the new ReplicaSet and its pods, scaling, conditions, revisions and cleanup."""

from __future__ import annotations

import re

import pytest
from msgspec.structs import replace

from agents.controllers.deployment.util import POD_TEMPLATE_HASH, REVISION, compute_hash
from emulator.api.apps import Deployment
from tests.agents.controllers.appsworld import AppsWorld, apps_world, deployment

pytestmark = pytest.mark.asyncio


def update(w: AppsWorld, name: str, **spec: object) -> Deployment:
    d: Deployment = w.get("Deployment", name)
    return w.cluster.server.update(replace(d, spec=replace(d.spec, **spec)))


def new_image(w: AppsWorld, name: str, image: str) -> Deployment:
    d: Deployment = w.get("Deployment", name)
    c = d.spec.template.spec.containers[0]
    tmpl = replace(d.spec.template, spec=replace(d.spec.template.spec, containers=[replace(c, image=image)]))
    return update(w, name, template=tmpl)


def conditions(d: Deployment) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in d.status.conditions}


async def test_a_deployment_creates_its_replicaset_and_pods() -> None:
    async with apps_world() as w:
        await w.readiness(delay=2.0)
        created = w.cluster.server.create(deployment("web", 3))
        await w.cluster.at(10.0)
        d: Deployment = w.get("Deployment", "web")
        h = compute_hash(created.spec.template, None)
        assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", h)
        rs = w.get("ReplicaSet", f"web-{h}")
        assert rs.spec.replicas == 3
        assert rs.metadata.labels == {"app": "web", POD_TEMPLATE_HASH: h}
        assert rs.spec.selector.match_labels == {"app": "web", POD_TEMPLATE_HASH: h}
        assert rs.metadata.annotations == {
            REVISION: "1",
            "deployment.kubernetes.io/desired-replicas": "3",
            "deployment.kubernetes.io/max-replicas": "4",
        }
        assert rs.metadata.owner_references[0].uid == d.metadata.uid
        pods = w.pods("web-")
        assert len(pods) == 3
        assert all(re.fullmatch(rf"web-{h}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", p.metadata.name) for p in pods)
        s = d.status
        assert (s.replicas, s.updated_replicas, s.ready_replicas, s.available_replicas) == (3, 3, 3, 3)
        assert s.unavailable_replicas == 0
        assert s.observed_generation == d.metadata.generation
        assert d.metadata.annotations[REVISION] == "1"
        assert conditions(d) == {
            "Available": ("True", "MinimumReplicasAvailable"),
            "Progressing": ("True", "NewReplicaSetAvailable"),
        }
        assert w.events("ScalingReplicaSet") == [
            ("ScalingReplicaSet", f"Scaled up replica set web-{h} from 0 to 3")
        ]
