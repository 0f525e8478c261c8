"""Namespace deletion as upstream: the registry (``pkg/registry/core/namespace/storage``: a
delete marks it ``Terminating`` while the ``kubernetes`` spec finalizer remains; the finalize
write that removes the last one removes it), the NamespaceLifecycle admission
(``plugin/pkg/admission/namespace/lifecycle/admission.go``: creates into a terminating
namespace are Forbidden) and the namespace controller (``pkg/controller/namespace``,
``deletion/namespaced_resources_deleter.go``), end to end in ``scenarios/workloads/
namespace-deletion.yaml``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers.namespace import CONTENT
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.config import ConfigMap
from emulator.base.api.core import Namespace, NamespaceSpec
from emulator.base.api.errors import Forbidden, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.registry import STRATEGIES
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock

ROOT = Path(__file__).resolve().parents[2]


def _api() -> ApiServer:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="team")))
    return api


def test_content_covers_every_namespaced_stored_kind() -> None:
    namespaced = {k for k, s in STRATEGIES.items() if s.namespaced and s.create_refusal is None}
    assert set(CONTENT) == namespaced


def test_a_namespace_is_created_active_with_the_kubernetes_finalizer() -> None:
    ns = _api().get("Namespace", "team")
    assert (ns.status.phase, ns.spec.finalizers) == ("Active", ["kubernetes"])


def test_delete_marks_terminating_and_refuses_creates_until_finalized() -> None:
    api = _api()
    api.create(ConfigMap(metadata=ObjectMeta(name="a", namespace="team")))
    marked = api.delete("Namespace", "team")
    assert marked.status.phase == "Terminating"
    ns = api.get("Namespace", "team")
    assert ns.metadata.deletion_timestamp is not None
    assert ns.status.phase == "Terminating"
    assert api.delete("Namespace", "team") == ns  # a second delete writes nothing
    with pytest.raises(Forbidden) as err:
        api.create(ConfigMap(metadata=ObjectMeta(name="b", namespace="team")))
    assert err.value.code == 403
    assert err.value.message == (
        'configmaps "b" is forbidden: unable to create new content in namespace team because it is being terminated'
    )
    api.update(replace(ns, spec=NamespaceSpec(finalizers=[])))  # an update cannot finalize
    assert api.get("Namespace", "team").spec.finalizers == ["kubernetes"]
    api.update_status(replace(ns, spec=NamespaceSpec(finalizers=[])))  # the finalize write
    with pytest.raises(NotFound):
        api.get("Namespace", "team")


def test_a_namespace_without_spec_finalizers_goes_at_once() -> None:
    api = _api()
    ns = api.get("Namespace", "team")
    api.update_status(replace(ns, spec=NamespaceSpec(finalizers=[])))
    api.delete("Namespace", "team")
    with pytest.raises(NotFound):
        api.get("Namespace", "team")


def test_the_scenario_terminates_the_pods_then_removes_the_namespace() -> None:
    writes: list[Any] = []
    scenario = load_scenario(ROOT / "scenarios" / "workloads" / "namespace-deletion.yaml")
    result = run_scenario(scenario, RunOptions(on_write=writes.append))
    ns_writes = [(w.time, w.verb, w.new) for w in writes if w.kind == "Namespace" and w.obj.metadata.name == "team"]
    (t_marked, _, marked), (t_gone, _, gone) = ns_writes[1:]
    assert t_marked == 60.0
    assert marked.status.phase == "Terminating"
    assert gone is None
    pods_gone = [w.time for w in writes if w.kind == "Pod" and w.verb == "delete" and w.new is None]
    assert len(pods_gone) == 3
    assert t_marked + 5 <= max(pods_gone) < t_gone  # first sync 5 s later; the namespace last
    assert t_gone == 65 + 20 // 2 + 1  # requeued after estimate/2 + 1 (the pods' 20 s grace)
    left = [w for w in writes if w.new is not None and w.new.metadata.namespace == "team" and w.time > t_gone]
    assert left == []
    assert result.passed
