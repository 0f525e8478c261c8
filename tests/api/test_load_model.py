"""The load model (``emulator.base.api.load``) and the metrics it feeds
(``emulator.base.apiserver.metrics``): curves, the even spread over Running and Ready pods, the
annotation, and PodMetrics/NodeMetrics as metrics-server shapes them."""

from __future__ import annotations

import random

import pytest

from emulator.base.api.core import (
    Container,
    Namespace,
    Node,
    NodeStatus,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    ResourceRequirements,
)
from emulator.base.api.labelselector import Selector
from emulator.base.api.load import DAY_SECONDS, USAGE_ANNOTATION, LoadCurve, LoadModel, LoadRule, parse_usage
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import Quantity
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock


def _pod(name: str, *, ready: bool = True, phase: str = "Running", usage: str | None = None, node: str = "n1") -> Pod:
    notes = {USAGE_ANNOTATION: usage} if usage is not None else {}
    res = ResourceRequirements(requests={"cpu": Quantity.from_milli(500)})
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", labels={"app": "web"}, annotations=notes),
        spec=PodSpec(node_name=node, containers=[Container(name="a", image="i", resources=res)]),
        status=PodStatus(phase=phase, conditions=[PodCondition(type="Ready", status="True" if ready else "False")]),
    )


@pytest.mark.parametrize(
    ("curve", "t", "rps"),
    [
        pytest.param(LoadCurve(constant=7.0), 123.0, 7.0, id="constant"),
        pytest.param(LoadCurve(steps=((60.0, 10.0), (120.0, 40.0))), 30.0, 0.0, id="before-the-first-step"),
        pytest.param(LoadCurve(steps=((60.0, 10.0), (120.0, 40.0))), 120.0, 40.0, id="at-a-step"),
        pytest.param(LoadCurve(daily=(0.0, 100.0)), DAY_SECONDS / 4, 50.0, id="day-interpolated"),
        pytest.param(LoadCurve(daily=(0.0, 100.0)), DAY_SECONDS * 3 / 4, 50.0, id="day-wraps-at-midnight"),
        pytest.param(LoadCurve(daily=(0.0, 100.0), day_offset=DAY_SECONDS / 2), 0.0, 100.0, id="day-start"),
    ],
)
def test_curves(curve: LoadCurve, t: float, rps: float) -> None:
    assert curve.at(t) == pytest.approx(rps)


def test_traffic_is_spread_over_running_and_ready_pods() -> None:
    rule = LoadRule(
        selector=Selector.from_set({"app": "web"}), curve=LoadCurve(constant=100.0), per_request={"cpu": 3.0},
        base={"cpu": 10},
    )  # fmt: skip
    pods = [_pod("a"), _pod("b"), _pod("c", ready=False), _pod("d", phase="Pending"), _pod("e", usage='{"cpu": "1"}')]
    usage = LoadModel([rule]).usage(pods, 0.0)
    share = round(300 / 3)  # a, b and e are Running and Ready
    assert usage[("default", "a")] == {"cpu": 10 + share}
    assert usage[("default", "c")] == {"cpu": 10}  # not Ready: its base only
    assert ("default", "d") not in usage  # not Running: no metrics
    assert usage[("default", "e")] == {"cpu": 1000 + share}  # its annotation instead of the base


def test_parse_usage() -> None:
    assert parse_usage('{"cpu": "250m", "memory": "1Ki"}') == {"cpu": 250, "memory": 1_024_000}
    with pytest.raises(ValueError, match="expected a JSON object of quantities"):
        parse_usage("cpu=1")


def test_pod_and_node_metrics() -> None:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    api.create(Node(metadata=ObjectMeta(name="n1"), status=NodeStatus(capacity={"cpu": Quantity.from_value(4)})))
    pod = _pod("a", usage='{"cpu": "300m", "memory": "1Mi"}')
    pod = pod.__class__(
        metadata=pod.metadata,
        spec=PodSpec(
            node_name="n1",
            containers=[
                Container(
                    name="a", image="i", resources=ResourceRequirements(requests={"cpu": Quantity.from_milli(100)})
                ),
                Container(
                    name="b", image="i", resources=ResourceRequirements(requests={"cpu": Quantity.from_milli(200)})
                ),
            ],
        ),
        status=pod.status,
    )
    api.create(pod, restore=True)
    (pm,) = api.metrics.pod_metrics("default")
    assert [(c.name, c.usage["cpu"].text) for c in pm.containers] == [("a", "100m"), ("b", "200m")]
    assert sum(c.usage["memory"].milli for c in pm.containers) == 1024 * 1024 * 1000
    assert pm.window == "15s"
    (nm,) = api.metrics.node_metrics()
    assert (nm.metadata.name, nm.usage["cpu"].text, nm.usage["memory"].text) == ("n1", "300m", "1048576")


def test_pod_usage_is_pod_metrics_summed_over_containers() -> None:
    """``pod_usage`` (the HPA's read) gives what the PodMetrics give, container shares summed;
    a resource the model does not give is reported missing (``None``), as a PodMetrics
    without it."""
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    api.create(Node(metadata=ObjectMeta(name="n1"), status=NodeStatus(capacity={"cpu": Quantity.from_value(4)})))
    api.create(_pod("a", usage='{"cpu": "301m", "memory": "1Mi", "ephemeral-storage": "1Gi"}'), restore=True)
    api.create(_pod("b", usage='{"cpu": "7m"}'), restore=True)
    api.create(_pod("c", phase="Pending"), restore=True)
    everything = Selector.from_set({"app": "web"})
    for resource in ("cpu", "memory", "ephemeral-storage"):
        stamp, usage = api.metrics.pod_usage("default", everything, resource)
        want = {}
        for pm in api.metrics.pod_metrics("default", everything):
            amounts = [c.usage.get(resource) for c in pm.containers]
            want[pm.metadata.name] = None if None in amounts else sum(q.milli for q in amounts if q is not None)
            assert pm.timestamp == stamp
        assert usage == want
    assert api.metrics.pod_usage("default", everything, "ephemeral-storage")[1] == {"a": 1024**3 * 1000, "b": None}
    # asked again (the pods unchanged: the selection kept), then after a pod changed
    assert api.metrics.pod_usage("default", everything, "cpu")[1] == {"a": 301, "b": 7}
    assert api.metrics.pod_usage("default", Selector.from_set({"app": "db"}), "cpu")[1] == {}
    api.update_status(_pod("c"))
    assert api.metrics.pod_usage("default", everything, "cpu")[1] == {"a": 301, "b": 7, "c": 0}
    assert api.metrics.pod_usage("default", everything, "ephemeral-storage")[1] == {
        "a": 1024**3 * 1000,
        "b": None,
        "c": None,
    }


def test_a_model_across_calls_gives_what_a_fresh_one_gives() -> None:
    """``LoadModel.usage`` keeps each pod object's rule matches, readiness and annotation from
    one call to the next and computes a usage once per combination: the figures are a fresh
    model's, whatever pods are replaced, added or dropped between calls, and no two pods share
    a dict."""
    rules = [
        LoadRule(
            selector=Selector.from_set({"app": "web"}), curve=LoadCurve(daily=(10.0, 70.0, 30.0)),
            per_request={"cpu": 3.0, "memory": 1.5}, base={"cpu": 10},
        ),
        LoadRule(curve=LoadCurve(constant=9.0), per_request={"cpu": 0.7}),
    ]  # fmt: skip
    rng = random.Random(7)
    kept = LoadModel(rules)
    pods = {f"p{i}": _pod(f"p{i}") for i in range(12)}
    for step in range(40):
        for _ in range(3):
            name = f"p{rng.randrange(16)}"
            pods[name] = _pod(
                name,
                ready=rng.random() < 0.7,
                phase=rng.choice(["Running", "Running", "Pending"]),
                usage=rng.choice([None, None, '{"cpu": "1"}', "not json"]),
            )
        if rng.random() < 0.2:
            pods.pop(rng.choice(sorted(pods)))
        listed = [pods[k] for k in sorted(pods)]
        t = step * 977.0
        got = kept.usage(listed, t)
        assert got == LoadModel(rules).usage(listed, t)
        assert list(got) == [("default", p.metadata.name) for p in listed if p.status.phase == "Running"]
        assert len({id(u) for u in got.values()}) == len(got)
        version = kept.version
        later = kept.usage(list(listed), t + 311.0)  # the same objects again: the rates alone
        assert kept.version == version
        assert later == LoadModel(rules).usage(listed, t + 311.0)
