"""``BaseController``, the workload controllers' skeleton: the names it derives, the owners
a dependent's controller reference resolves to, and the dependents' informer with the
controller-UID index (pure: no event loop, the informers are fed by hand)."""

from __future__ import annotations

import asyncio
from types import ModuleType, SimpleNamespace
from typing import Any, cast

import pytest
from msgspec.structs import replace

from agents.controllers import cronjob, replicaset
from agents.controllers.base import BaseController
from agents.controllers.context import ControllerContext, SharedInformers
from agents.controllers.daemonset import controller as daemonset
from agents.controllers.deployment import controller as deployment
from agents.controllers.job import controller as job
from agents.controllers.statefulset import controller as statefulset
from emulator.base.api.meta import OwnerReference
from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.client.client import Client
from emulator.base.runtime.clock import Clock
from tests.builders import pod


@pytest.mark.parametrize(
    ("module", "cls"),
    [
        pytest.param(daemonset, daemonset.DaemonSetController, id="daemonset"),
        pytest.param(statefulset, statefulset.StatefulSetController, id="statefulset"),
        pytest.param(job, job.JobController, id="job"),
        pytest.param(cronjob, cronjob.CronJobController, id="cronjob"),
        pytest.param(replicaset, replicaset.ReplicaSetController, id="replicaset"),
        pytest.param(deployment, deployment.DeploymentController, id="deployment"),
    ],
)
def test_every_workload_controller_is_a_base_controller_named_as_upstream(module: ModuleType, cls: type) -> None:
    assert issubclass(cls, BaseController)
    assert cls.NAME == module.NAME
    assert f"{cls.NAME}-controller" == module.COMPONENT


class _Sets(BaseController):
    NAME = "test"
    KIND = "ReplicaSet"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.seen: list[tuple[str, str]] = []

    def on_dependent_add(self, obj: Any) -> None:
        self.seen.append(("add", obj.metadata.name))


def _owned(name: str, uid: str, *, kind: str = "ReplicaSet", owner: str = "web") -> Any:
    p = pod(name, resource_version="1")
    ref = OwnerReference(api_version="apps/v1", kind=kind, name=owner, uid=uid, controller=True)
    return replace(p, metadata=replace(p.metadata, owner_references=[ref]))


class _NoTasks:
    """A task group that runs nothing: the informers here are fed by hand."""

    def create_task(self, coro: Any, *, name: str = "") -> None:
        coro.close()


def _controller() -> _Sets:
    informers = SharedInformers(cast(Client, SimpleNamespace(name="controller:shared-informers")))
    informers.start(cast(asyncio.TaskGroup, _NoTasks()))
    clock = cast(Clock, SimpleNamespace(now=lambda: 0.0))
    controller = _Sets(ControllerContext(clock, lambda name: cast(Client, SimpleNamespace(name=name)), informers))
    controller.primary = informers.informer("ReplicaSet")
    informers.informer("Pod")._apply([WatchEvent("ADDED", _owned("b", "u1"), 1)])
    return controller


def test_dependents_are_found_by_their_controllers_uid_in_name_order() -> None:
    c = _controller()
    assert c.statistics() == {}  # nothing of its kind seen yet
    pods = c.watch_dependents()
    assert c.seen == [("add", "b")]  # the cached pod replayed, already in the index
    pods._apply([WatchEvent("ADDED", _owned("a", "u1"), 2), WatchEvent("ADDED", _owned("c", "u2"), 3)])
    owner = SimpleNamespace(metadata=SimpleNamespace(uid="u1"))
    assert [p.metadata.name for p in c.owned(pods, owner)] == ["a", "b"]
    assert c.statistics() == {"syncs": 0, "errors": 0, "queue": 0, "retries": 0}


def test_owner_refs_and_resolve() -> None:
    c = _controller()
    a, moved, job_pod = _owned("a", "u1"), _owned("a", "u2", owner="api"), _owned("j", "u3", kind="Job")
    assert [r.uid for r in c.owner_refs(a, a)] == ["u1"]
    assert [r.uid for r in c.owner_refs(a, moved)] == ["u1", "u2"]
    assert c.owner_refs(job_pod, job_pod) == []
    assert c.owner_key(a) == ("default", "web")
    assert c.owner_key(job_pod) is None
    assert c.primary is not None
    rs = replace(a, kind="ReplicaSet", metadata=replace(a.metadata, name="web", uid="u1", owner_references=[]))
    c.primary._apply([WatchEvent("ADDED", rs, 4)])
    assert c.resolve(a.metadata.owner_references[0], "default") == ("default", "web")
    assert c.resolve(moved.metadata.owner_references[0], "default") is None  # another name
    stale = replace(a.metadata.owner_references[0], uid="old")
    assert c.resolve(stale, "default") is None  # the same name, another object
