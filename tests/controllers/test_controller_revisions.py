"""ControllerRevisions as the StatefulSet and DaemonSet controllers keep them (upstream
``pkg/controller/history``; DaemonSet ``constructHistory``/``cleanupHistory`` in
pkg/controller/daemon/update.go, StatefulSet ``getStatefulSetRevisions``/``truncateHistory`` in
pkg/controller/statefulset/stateful_set_control.go): one per template, named ``<owner>-<hash>``,
numbered in order, an old template coming back renumbered as the newest, the oldest unused ones
past ``revisionHistoryLimit`` deleted; ``data`` restores the whole template, unmodelled fields
included."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers.history import CONTROLLER_REVISION_HASH, revision_data, revision_template
from emulator.base.api.apps import ControllerRevision
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import Container
from tests.builders import node
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers, daemonset, statefulset, update_spec

pytestmark = pytest.mark.asyncio


@asynccontextmanager
async def world(obj: Any) -> AsyncIterator[Cluster]:
    async with open_cluster(namespaces=("default",)) as c:
        c.server.create(node("n-0"))
        await c.start(Controllers(c, ["statefulset", "daemonset"]), "controllers")
        c.server.create(obj)
        await c.at(1.0)
        yield c


def _all(c: Cluster) -> list[ControllerRevision]:
    items, _ = c.server.list("ControllerRevision")
    return list(items)


def revisions(c: Cluster) -> list[tuple[int, str]]:
    return sorted((r.revision, _image(r)) for r in _all(c))


def _image(rev: ControllerRevision) -> str:
    template = revision_template(rev)
    assert template is not None
    return template.spec.containers[0].image


async def _set_image(c: Cluster, kind: str, name: str, image: str, t: float) -> None:
    obj = c.server.get(kind, name, "default")
    template = obj.spec.template
    spec = replace(template.spec, containers=[Container(name="c", image=image)])
    update_spec(c, kind, name, template=replace(template, spec=spec))
    await c.at(t)


@pytest.mark.parametrize(("kind", "obj"), [("StatefulSet", statefulset(replicas=1)), ("DaemonSet", daemonset("ds"))])
async def test_revisions_are_numbered_renumbered_and_truncated(kind: str, obj: Any) -> None:
    name = obj.metadata.name
    obj = replace(obj, spec=replace(obj.spec, revision_history_limit=1))
    async with world(obj) as c:
        first = _image(_all(c)[0])
        assert revisions(c) == [(1, first)]
        rev = _all(c)[0]
        assert rev.metadata.name == f"{name}-{rev.metadata.labels[CONTROLLER_REVISION_HASH]}"
        (ref,) = rev.metadata.owner_references
        assert (ref.kind, ref.name, ref.controller) == (kind, name, True)
        await _set_image(c, kind, name, "v2", 10.0)
        assert revisions(c)[-1] == (2, "v2")
        await _set_image(c, kind, name, first, 20.0)  # back: the old revision becomes the newest
        assert revisions(c)[-1] == (3, first)
        await _set_image(c, kind, name, "v4", 30.0)
        await _set_image(c, kind, name, "v5", 40.0)
        numbers = [n for n, _ in revisions(c)]
        assert numbers[-1] == 5
        assert len(numbers) <= 3  # the newest, at most one kept by the limit, and one a pod still runs


async def test_revision_data_restores_the_whole_template() -> None:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "x", "env": [{"name": "A", "value": "1"}]}]},
            },
        },
    }
    ds = object_from_dict(doc, source="d.yaml")
    data = revision_data(ds.spec.template)
    assert data["spec"]["template"]["$patch"] == "replace"
    assert data["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    back = revision_template(ControllerRevision(data=data))
    assert back == ds.spec.template
