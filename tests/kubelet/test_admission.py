"""Kubelet admission (``agents.kubelet.admission``): upstream's reasons and exact messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.kubelet import admission
from agents.kubelet.admission import AdmissionResult, NodeUsage, admission_failures, admit, is_scalar_resource
from emulator.base.api.core import (
    Affinity,
    Container,
    ContainerPort,
    Node,
    Pod,
    Taint,
    Toleration,
)
from emulator.base.api.resources import node_allocatable, pod_requests
from tests import builders

NODE = "node-1"
GPU = "example.com/gpu"


def make_node(
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str | None = "110",
    extra: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
) -> Node:
    return builders.node(
        NODE, cpu=cpu, memory=memory, pods=pods, extra=extra, labels=labels, taints=taints, allocatable_only=True
    )


def container(
    name: str = "c",
    ports: Sequence[ContainerPort] = (),
    restart: str | None = None,
    extra: Mapping[str, str] | None = None,
    **req: str,
) -> Container:
    """A container (image ``img``) requesting ``req`` (``ephemeral_storage`` for
    ephemeral-storage) and ``extra`` (resources whose names are not identifiers)."""
    requests = {k.replace("_", "-"): v for k, v in {**req, **(extra or {})}.items()}
    return builders.container(name, image="img", requests=requests, ports=ports, restart_policy=restart)


_uids = iter(range(1_000_000))


def make_pod(
    *containers: Container,
    name: str = "p",
    node_name: str = NODE,
    init: Sequence[Container] = (),
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: Affinity | None = None,
    tolerations: Sequence[Toleration] = (),
    overhead: Mapping[str, str] | None = None,
    phase: str = "Running",
) -> Pod:
    """A Running pod on the node with these containers (one ``container()`` if none), a fresh uid."""
    return builders.pod(
        name,
        uid=f"uid-{next(_uids)}",
        labels=labels,
        annotations=annotations,
        containers=list(containers) or [container()],
        init_containers=init,
        node=node_name,
        node_selector=node_selector,
        affinity=affinity,
        tolerations=tolerations,
        overhead=overhead,
        phase=phase,
    )


def cpu_pod(cpu: str, **kw: object) -> Pod:
    return make_pod(container(cpu=cpu), **kw)  # type: ignore[arg-type]


def port(host_port: int, ip: str = "", protocol: str = "TCP") -> ContainerPort:
    return ContainerPort(container_port=80, host_port=host_port, host_ip=ip, protocol=protocol)


def required_affinity(key: str, op: str, *values: str) -> Affinity:
    return builders.affinity(required_nodes=[builders.node_term((key, op, values))])


def resources_msg(name: str, requested: int, used: int, capacity: int) -> str:
    return f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"


AFFINITY_MSG = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
NODE_NAME_MSG = "Predicate NodeName failed: node(s) didn't match the requested node name"
PORTS_MSG = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
TAINT_MSG = "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"
NO_EXECUTE = Taint(key="dedicated", value="db", effect="NoExecute")
NO_SCHEDULE = Taint(key="dedicated", value="db", effect="NoSchedule")
Mi, Gi = 2**20, 2**30

CASES = [
    # --- resources (NodeResourcesFit.Fits) -----------------------------------------------
    pytest.param(cpu_pod("500m"), make_node(), [cpu_pod("3500m")], None, id="cpu-fits-exactly"),
    pytest.param(
        cpu_pod("500m"),
        make_node(),
        [cpu_pod("3"), cpu_pod("700m")],
        ("OutOfcpu", resources_msg("cpu", 500, 3700, 4000)),
        id="OutOfcpu",
    ),
    pytest.param(
        make_pod(container(memory="512Mi")),
        make_node(memory="1Gi"),
        [make_pod(container(memory="768Mi"))],
        ("OutOfmemory", resources_msg("memory", 512 * Mi, 768 * Mi, Gi)),
        id="OutOfmemory",
    ),
    pytest.param(
        make_pod(container(ephemeral_storage="11Gi")),
        make_node(extra={"ephemeral-storage": "10Gi"}),
        [],
        ("OutOfephemeral-storage", resources_msg("ephemeral-storage", 11 * Gi, 0, 10 * Gi)),
        id="OutOfephemeral-storage",
    ),
    pytest.param(
        cpu_pod("100m"),
        make_node(pods="2"),
        [cpu_pod("100m"), cpu_pod("100m")],
        ("OutOfpods", resources_msg("pods", 1, 2, 2)),
        id="OutOfpods",
    ),
    pytest.param(
        make_pod(container()),
        make_node(pods=None),
        [],
        ("OutOfpods", resources_msg("pods", 1, 0, 0)),
        id="OutOfpods-node-without-pods-allocatable",
    ),
    pytest.param(
        make_pod(container(extra={"example.com/gpu": "2"})),
        make_node(extra={GPU: "2"}),
        [make_pod(container(extra={"example.com/gpu": "1"}))],
        (f"OutOf{GPU}", resources_msg(GPU, 2, 1, 2)),
        id="OutOf-extended-resource",
    ),
    pytest.param(
        make_pod(container(extra={"example.com/gpu": "8"})),
        make_node(),
        [],
        None,
        id="extended-resource-unknown-to-node-is-ignored",
    ),
    pytest.param(
        make_pod(container(extra={"hugepages-2Mi": "4Mi"})),
        make_node(),
        [],
        ("OutOfhugepages-2Mi", resources_msg("hugepages-2Mi", 4 * Mi, 0, 0)),
        id="hugepages-unknown-to-node-is-not-ignored",
    ),
    pytest.param(
        make_pod(container(cpu="0")),
        make_node(),
        [cpu_pod("4")],
        None,
        id="zero-request-pod-fits-a-full-node",
    ),
    pytest.param(
        make_pod(container(cpu="5", memory="9Gi")),
        make_node(pods="1"),
        [cpu_pod("100m")],
        ("OutOfpods", resources_msg("pods", 1, 1, 1)),
        id="first-failure-pods-before-cpu-and-memory",
    ),
    pytest.param(
        make_pod(container(cpu="5", memory="9Gi")),
        make_node(),
        [],
        ("OutOfcpu", resources_msg("cpu", 5000, 0, 4000)),
        id="first-failure-cpu-before-memory",
    ),
    pytest.param(
        make_pod(container(cpu="500m"), init=[container("init", cpu="2")]),
        make_node(),
        [cpu_pod("2500m")],
        ("OutOfcpu", resources_msg("cpu", 2000, 2500, 4000)),
        id="init-container-raises-effective-request",
    ),
    pytest.param(
        make_pod(container(cpu="1"), init=[container("sidecar", cpu="500m", restart="Always")]),
        make_node(),
        [cpu_pod("3")],
        ("OutOfcpu", resources_msg("cpu", 1500, 3000, 4000)),
        id="sidecar-init-container-adds-to-request",
    ),
    pytest.param(
        make_pod(container(cpu="1"), overhead={"cpu": "250m"}),
        make_node(),
        [cpu_pod("3")],
        ("OutOfcpu", resources_msg("cpu", 1250, 3000, 4000)),
        id="overhead-adds-to-request",
    ),
    pytest.param(
        cpu_pod("4"),
        make_node(pods="1"),
        [cpu_pod("4", phase="Succeeded"), cpu_pod("4", phase="Failed")],
        None,
        id="terminal-pods-do-not-count",
    ),
    # --- node affinity, node name -------------------------------------------------------
    pytest.param(
        cpu_pod("1", node_selector={"disk": "ssd"}),
        make_node(labels={"disk": "hdd"}),
        [],
        ("NodeAffinity", AFFINITY_MSG),
        id="NodeAffinity-nodeSelector",
    ),
    pytest.param(
        cpu_pod("1", affinity=required_affinity("zone", "In", "a", "b")),
        make_node(labels={"zone": "c"}),
        [],
        ("NodeAffinity", AFFINITY_MSG),
        id="NodeAffinity-required-affinity",
    ),
    pytest.param(
        cpu_pod("1", node_selector={"disk": "ssd"}, affinity=required_affinity("zone", "In", "a")),
        make_node(labels={"disk": "ssd", "zone": "a"}),
        [],
        None,
        id="NodeAffinity-matches",
    ),
    pytest.param(
        cpu_pod("1", node_name="node-2"),
        make_node(),
        [],
        ("NodeName", NODE_NAME_MSG),
        id="NodeName",
    ),
    # --- host ports -----------------------------------------------------------------------
    pytest.param(
        make_pod(container(ports=[port(8080)])),
        make_node(),
        [make_pod(container(ports=[port(8080)]))],
        ("NodePorts", PORTS_MSG),
        id="NodePorts-same-port",
    ),
    pytest.param(
        make_pod(container(ports=[port(8080)])),
        make_node(),
        [make_pod(container(ports=[port(8080, ip="10.0.0.1")]))],
        ("NodePorts", PORTS_MSG),
        id="NodePorts-any-ip-vs-specific-ip",
    ),
    pytest.param(
        make_pod(container(ports=[port(8080, ip="10.0.0.1")])),
        make_node(),
        [make_pod(container(ports=[port(8080, ip="0.0.0.0")]))],
        ("NodePorts", PORTS_MSG),
        id="NodePorts-specific-ip-vs-any-ip",
    ),
    pytest.param(
        make_pod(container(ports=[port(8080, ip="10.0.0.2")])),
        make_node(),
        [make_pod(container(ports=[port(8080, ip="10.0.0.1")]))],
        None,
        id="NodePorts-different-specific-ips-fit",
    ),
    pytest.param(
        make_pod(container(ports=[port(53, protocol="UDP")])),
        make_node(),
        [make_pod(container(ports=[port(53, protocol="TCP")]))],
        None,
        id="NodePorts-different-protocols-fit",
    ),
    pytest.param(
        make_pod(container(ports=[port(8081)])),
        make_node(),
        [make_pod(container(ports=[port(8080)]))],
        None,
        id="NodePorts-different-ports-fit",
    ),
    pytest.param(
        make_pod(container(ports=[ContainerPort(container_port=8080)])),
        make_node(),
        [make_pod(container(ports=[ContainerPort(container_port=8080)]))],
        None,
        id="NodePorts-container-ports-without-host-port-never-conflict",
    ),
    # Upstream v1.34 GetHostPorts: a sidecar (restartPolicy Always) init container's host ports
    # count, on the new pod and on the admitted ones; a plain init container's do not.
    pytest.param(
        make_pod(container(), init=[container("sidecar", ports=[port(8080)], restart="Always")]),
        make_node(),
        [make_pod(container(ports=[port(8080)]))],
        ("NodePorts", PORTS_MSG),
        id="NodePorts-sidecar-port-conflicts",
    ),
    pytest.param(
        make_pod(container(ports=[port(8080)])),
        make_node(),
        [make_pod(container(), init=[container("sidecar", ports=[port(8080)], restart="Always")])],
        ("NodePorts", PORTS_MSG),
        id="NodePorts-admitted-sidecar-port-conflicts",
    ),
    pytest.param(
        make_pod(container(), init=[container("init", ports=[port(8080)])]),
        make_node(),
        [make_pod(container(ports=[port(8080)]))],
        None,
        id="NodePorts-plain-init-container-port-ignored",
    ),
    pytest.param(
        make_pod(container(ports=[port(8080)])),
        make_node(),
        [make_pod(container(ports=[port(8080)]), phase="Succeeded")],
        None,
        id="NodePorts-terminal-pod-frees-its-port",
    ),
    # --- taints: only NoExecute -------------------------------------------------------------
    pytest.param(cpu_pod("1"), make_node(taints=[NO_EXECUTE]), [], ("TaintToleration", TAINT_MSG), id="NoExecute"),
    pytest.param(cpu_pod("1"), make_node(taints=[NO_SCHEDULE]), [], None, id="NoSchedule-is-not-checked"),
    pytest.param(
        cpu_pod("1", tolerations=[Toleration(key="dedicated", operator="Equal", value="db", effect="NoExecute")]),
        make_node(taints=[NO_EXECUTE]),
        [],
        None,
        id="NoExecute-tolerated",
    ),
    pytest.param(
        cpu_pod("1", annotations={"kubernetes.io/config.source": "file"}),
        make_node(taints=[NO_EXECUTE]),
        [],
        None,
        id="NoExecute-not-checked-for-static-pods",
    ),
    # --- order of the checks ----------------------------------------------------------------
    pytest.param(
        cpu_pod("5", node_selector={"disk": "ssd"}),
        make_node(),
        [],
        ("OutOfcpu", resources_msg("cpu", 5000, 0, 4000)),
        id="order-resources-before-affinity",
    ),
    pytest.param(
        cpu_pod("1", node_selector={"disk": "ssd"}, node_name="node-2"),
        make_node(),
        [],
        ("NodeAffinity", AFFINITY_MSG),
        id="order-affinity-before-node-name",
    ),
    pytest.param(
        make_pod(container(ports=[port(80)]), node_name="node-2"),
        make_node(),
        [make_pod(container(ports=[port(80)]))],
        ("NodeName", NODE_NAME_MSG),
        id="order-node-name-before-ports",
    ),
    pytest.param(
        make_pod(container(ports=[port(80)])),
        make_node(taints=[NO_EXECUTE]),
        [make_pod(container(ports=[port(80)]))],
        ("NodePorts", PORTS_MSG),
        id="order-ports-before-taints",
    ),
    pytest.param(
        cpu_pod("5", labels={"kubernetes.io/os": "windows"}),
        make_node(),
        [],
        (
            "PodOSSelectorNodeLabelDoesNotMatch",
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
        ),
        id="os-label-checked-first",
    ),
    pytest.param(cpu_pod("1", labels={"kubernetes.io/os": "linux"}), make_node(), [], None, id="os-label-linux"),
]


@pytest.mark.parametrize(("pod", "node", "admitted", "expected"), CASES)
def test_admit(pod: Pod, node: Node, admitted: list[Pod], expected: tuple[str, str] | None) -> None:
    result = admit(pod, node, admitted)
    if expected is None:
        assert result is None
    else:
        assert result == AdmissionResult(*expected)


def test_all_failures_are_listed_in_upstream_order() -> None:
    pod = make_pod(
        container(cpu="5", memory="9Gi", ports=[port(80)]),
        node_selector={"disk": "ssd"},
        node_name="node-2",
    )
    node = make_node(pods="1", taints=[NO_EXECUTE])
    usage = NodeUsage.of([make_pod(container(ports=[port(80)]))])
    reasons = [f.reason for f in admission_failures(pod, node, usage)]
    assert reasons == [
        "OutOfpods",
        "OutOfcpu",
        "OutOfmemory",
        "NodeAffinity",
        "NodeName",
        "NodePorts",
        "TaintToleration",
    ]


def test_scalar_resources_are_checked_in_name_order() -> None:
    pod = make_pod(container(extra={"example.com/z": "1", "example.com/a": "1"}))
    node = make_node(extra={"example.com/z": "0", "example.com/a": "0"})
    assert [f.reason for f in admission_failures(pod, node, NodeUsage())] == [
        "OutOfexample.com/a",
        "OutOfexample.com/z",
    ]


def test_an_unexpected_error_is_a_rejection(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(pod: Pod, node: Node) -> bool:
        raise ValueError("boom")

    monkeypatch.setattr(admission, "pod_matches_node_selector_and_affinity", broken)
    assert admit(cpu_pod("1"), make_node(), []) == AdmissionResult(
        "UnexpectedAdmissionError", "Update plugin resources failed due to boom, which is unexpected."
    )


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        pytest.param("cpu", False, id="cpu"),
        pytest.param("memory", False, id="memory"),
        pytest.param("ephemeral-storage", False, id="ephemeral-storage"),
        pytest.param("pods", False, id="pods"),
        pytest.param("example.com/gpu", True, id="extended"),
        pytest.param("hugepages-1Gi", True, id="hugepages"),
        pytest.param("attachable-volumes-aws-ebs", True, id="attachable-volumes"),
        pytest.param("kubernetes.io/batteries", True, id="prefixed-native"),
    ],
)
def test_is_scalar_resource(name: str, scalar: bool) -> None:
    assert is_scalar_resource(name) is scalar


# --- NodeUsage: the kubelet's incremental accounting ------------------------------------------

_pod_strategy = st.builds(
    lambda cpu, mem, hp, ip: make_pod(
        container(
            cpu=f"{cpu}m",
            memory=f"{mem}Mi",
            ports=[port(hp, ip=ip)] if hp else [],
        )
    ),
    st.integers(0, 4000),
    st.integers(0, 4096),
    st.sampled_from([0, 80, 443]),
    st.sampled_from(["", "10.0.0.1"]),
)


@given(st.lists(_pod_strategy, max_size=8), st.randoms(use_true_random=False))
def test_node_usage_adds_and_removes_exactly(pods: list[Pod], rnd: object) -> None:
    usage = NodeUsage()
    for p in pods:
        usage.add(p.metadata.uid, p)
    expected: dict[str, int] = {}
    for p in pods:
        for name, v in pod_requests(p).items():
            expected[name] = expected.get(name, 0) + v
    assert {k: v for k, v in usage.requested.items() if v} == {k: v for k, v in expected.items() if v}
    assert usage.pods == len(pods)
    order = list(pods)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    for p in order:
        assert usage.remove(p.metadata.uid)
    assert usage.pods == 0
    assert usage.requested == {}
    assert not usage.ports_conflict([("0.0.0.0", "TCP", 80), ("0.0.0.0", "TCP", 443)])
    assert not usage.remove("never-added")


def test_node_usage_rejects_a_pod_counted_twice() -> None:
    usage = NodeUsage()
    p = cpu_pod("1")
    usage.add("u", p)
    with pytest.raises(ValueError, match="already counted"):
        usage.add("u", p)


@given(
    cpu=st.sampled_from(["1", "4", "250m", None]),
    memory=st.sampled_from(["1Gi", "32Gi", None]),
    pods=st.sampled_from(["0", "110", None]),
    extra=st.sampled_from([{}, {"nvidia.com/gpu": "2"}, {"example.com/foo": "3"}]),
    capacity_only=st.booleans(),
)
def test_a_nodes_allocatable_is_kept_per_node_object(
    cpu: str | None, memory: str | None, pods: str | None, extra: dict[str, str], capacity_only: bool
) -> None:
    """``_allocatable`` gives ``node_allocatable``'s answer on a miss and on a hit, and a new
    version of the node (another object, as a status write makes) is read afresh."""
    admission._ALLOCATABLE.clear()
    node = builders.node("n", cpu=cpu, memory=memory, pods=pods, extra=extra, capacity_only=capacity_only)
    assert admission._allocatable(node) == node_allocatable(node)
    assert admission._allocatable(node) == node_allocatable(node)
    bigger = builders.node("n", cpu="64", memory="256Gi", pods="250", capacity_only=capacity_only)
    assert admission._allocatable(bigger) == node_allocatable(bigger)
    assert admission._allocatable(node) == node_allocatable(node)


def test_the_allocatable_memo_is_bounded() -> None:
    admission._ALLOCATABLE.clear()
    nodes = [builders.node(f"n{i}") for i in range(admission._ALLOCATABLE_SIZE + 3)]
    for node in nodes:
        assert admission._allocatable(node) == node_allocatable(node)
    assert len(admission._ALLOCATABLE) <= admission._ALLOCATABLE_SIZE
