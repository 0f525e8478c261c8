"""``default_pod_update``: a bare pod manifest replacing a stored pod is defaulted as upstream's
apiserver decodes and admits an update (container and spec defaults, DefaultTolerationSeconds,
the Priority plugin keeping the stored priority), so that the update validates as upstream's
does: an update removing a scheduling gate from a pod created from the same manifest passes."""

from __future__ import annotations

import random
from typing import Any

from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Pod
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.apiserver import ApiServer
from emulator.base.apiserver.defaults import default_pod_update
from emulator.base.runtime.clock import StoppedClock


def _pod(spec: dict[str, Any]) -> Pod:
    return convert({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}, Pod)


def test_a_bare_manifest_update_validates_and_keeps_what_admission_set() -> None:
    server = ApiServer(StoppedClock(), random.Random(1))
    server.create(Namespace(metadata=ObjectMeta(name="ns")))
    server.create(PriorityClass(metadata=ObjectMeta(name="high"), value=7))
    container = {"name": "c", "image": "pause"}
    stored = server.create(
        _pod({"containers": [container], "priorityClassName": "high", "schedulingGates": [{"name": "g"}]})
    )
    body = default_pod_update(_pod({"containers": [container]}), stored)
    assert body.spec.priority == 7
    assert body.spec.priority_class_name == "high"
    assert body.spec.preemption_policy == stored.spec.preemption_policy
    assert body.spec.tolerations == stored.spec.tolerations  # not-ready/unreachable, 300 s
    assert body.spec.containers == stored.spec.containers  # terminationMessagePath, pull policy...
    updated = server.update(body)
    assert updated.spec.scheduling_gates == []
    assert updated.metadata.resource_version != stored.metadata.resource_version


def test_a_priority_the_body_sets_is_its_own() -> None:
    stored = replace(
        _pod({"containers": [{"name": "c", "image": "pause"}]}),
        spec=replace(_pod({"containers": [{"name": "c", "image": "pause"}]}).spec, priority=3),
    )
    body = default_pod_update(_pod({"containers": [{"name": "c", "image": "pause"}], "priority": 9}), stored)
    assert body.spec.priority == 9
