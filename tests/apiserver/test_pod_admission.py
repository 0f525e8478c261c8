"""``PodAdmission`` (pod defaulting + validation on create, memoised per spec) equals its
reference, ``default_pod`` then ``validate``, for every pod of a sequence: the same stored pod,
or the same error with the same message. The sequences mix a few specs (valid and not, with
and without a PriorityClass), metadata good and bad, and PriorityClass writes between pods.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Pod
from emulator.base.api.errors import ApiError, Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.api.validation import validate
from emulator.base.apiserver import ApiServer
from emulator.base.apiserver.defaults import PodAdmission, default_pod
from emulator.base.runtime.clock import StoppedClock

_CONTAINER: dict[str, Any] = {"name": "c", "image": "pause"}
SPECS: dict[str, dict[str, Any]] = {
    "plain": {"containers": [_CONTAINER]},
    "limits-only": {"containers": [{**_CONTAINER, "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
    "requests": {"containers": [{**_CONTAINER, "resources": {"requests": {"cpu": "100m"}}}]},
    "bad-quantity": {"containers": [{**_CONTAINER, "resources": {"requests": {"cpu": "abc"}}}]},
    "class-high": {"containers": [_CONTAINER], "priorityClassName": "high"},
    "priority-5": {"containers": [_CONTAINER], "priority": 5},
    "bad-toleration": {"containers": [_CONTAINER], "tolerations": [{"key": "k", "operator": "In"}]},
    "no-containers": {"containers": []},
    "gated": {"containers": [_CONTAINER], "schedulingGates": [{"name": "g"}], "preemptionPolicy": "Never"},
}
METAS: dict[str, dict[str, Any]] = {
    "ok": {"name": "p"},
    "generated": {"generateName": "p-"},
    "bad-name": {"name": "Bad_Name"},
    "bad-label": {"name": "p", "labels": {"a b": "x"}},
    "bad-exit-code": {"name": "p", "annotations": {"emulator.k8s.io/exit-code": "300"}},
    "bad-namespace": {"name": "p", "namespace": "Not_A_Label"},
}
CLASSES: dict[str, PriorityClass] = {
    "high": PriorityClass(metadata=ObjectMeta(name="high"), value=1000),
    "default": PriorityClass(metadata=ObjectMeta(name="default"), value=7, global_default=True),
}


def pod(spec: str, meta: str, n: int) -> Pod:
    metadata = {"namespace": "default", **METAS[meta]}
    if metadata.get("name") == "p":
        metadata["name"] = f"p-{n}"
    return convert({"metadata": metadata, "spec": SPECS[spec]}, Pod)


def outcome(fn: Callable[[], Pod]) -> Pod | tuple[type[ApiError], str]:
    try:
        return fn()
    except ApiError as err:
        return type(err), str(err)


def reference(p: Pod, classes: Mapping[str, PriorityClass]) -> Pod:
    out = default_pod(p, classes=classes, name_suffix=lambda: "abcde")
    validate(out)
    return out


STEPS = st.one_of(
    st.tuples(st.just("pod"), st.sampled_from(sorted(SPECS)), st.sampled_from(sorted(METAS))),
    st.tuples(st.just("class"), st.sampled_from(sorted(CLASSES)), st.booleans()),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(STEPS, min_size=1, max_size=25))
def test_admission_equals_default_then_validate(steps: list[tuple[str, str, Any]]) -> None:
    admission = PodAdmission()
    classes: dict[str, PriorityClass] = {}
    for n, (what, a, b) in enumerate(steps):
        if what == "class":
            if b:
                classes[a] = CLASSES[a]
            else:
                classes.pop(a, None)
            admission.clear()  # what the server does on every PriorityClass write
            continue
        p = pod(a, b, n)
        got = outcome(lambda p=p: admission.admit(p, classes=lambda: dict(classes), name_suffix=lambda: "abcde"))
        assert got == outcome(lambda p=p: reference(p, classes))


def test_a_spec_seen_before_is_a_hit_and_only_its_metadata_is_checked() -> None:
    admission = PodAdmission()

    def admit(p: Pod) -> Pod:
        return admission.admit(p, classes=dict, name_suffix=lambda: "abcde")

    first = admit(pod("limits-only", "ok", 1))
    second = admit(pod("limits-only", "ok", 2))
    assert admission.hits == 1
    assert second.spec is first.spec  # one stored spec for both
    assert second == reference(pod("limits-only", "ok", 2), {})
    with pytest.raises(Invalid, match=r"metadata\.annotations\[emulator\.k8s\.io/exit-code\]: Invalid value"):
        admit(pod("limits-only", "bad-exit-code", 3))
    assert admission.hits == 2


@pytest.mark.parametrize(
    ("classes_between", "priority"),
    [
        pytest.param([], 0, id="no-class"),
        pytest.param(["default"], 7, id="global-default-created-between"),
    ],
)
def test_server_sees_priority_class_writes_between_equal_pods(classes_between: list[str], priority: int) -> None:
    srv = ApiServer(StoppedClock(), random.Random(1))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    first = srv.create(pod("plain", "ok", 1))
    for name in classes_between:
        srv.create(CLASSES[name])
    second = srv.create(pod("plain", "ok", 2))
    assert (first.spec.priority, second.spec.priority) == (0, priority)
    assert replace(second, metadata=first.metadata) == replace(
        reference(pod("plain", "ok", 1), {c: CLASSES[c] for c in classes_between}),
        metadata=first.metadata,
    )
