"""NodePorts: upstream's node_ports_test.go tables (``TestNodePorts``, ``TestPreFilterDisabled``,
``Test_isSchedulableAfterPodDeleted``), v1.34's sidecar (restartable init container) host ports
(PR #132040), and the registered events."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.nodeports import ERR_REASON, NAME, PRE_FILTER_STATE_KEY, NodePorts, fits
from emulator.base.api.core import ContainerPort, Pod
from emulator.base.api.resources import pod_host_ports
from tests import builders

_seq = iter(range(10**6))


def port(spec: str) -> ContainerPort:
    """``"UDP/127.0.0.1/8080"`` → a container port with that protocol, hostIP and hostPort."""
    protocol, ip, host_port = spec.split("/")
    return ContainerPort(
        container_port=int(host_port), host_port=int(host_port), host_ip=ip, protocol=protocol or "TCP"
    )


def make_pod(
    *ports: str, node: str = "", nominated: str = "", sidecar: list[str] | None = None, init: list[str] | None = None
) -> Pod:
    """A pod ``p<n>`` (uid ``uid-<n>``, n counting up) whose container ``c`` asks for ``ports``;
    ``sidecar``/``init`` add a restartable / a plain init container with those ports."""
    n = next(_seq)
    inits = []
    if sidecar:
        inits.append(builders.container("side", image="", restart_policy="Always", ports=[port(p) for p in sidecar]))
    if init:
        inits.append(builders.container("init", image="", ports=[port(p) for p in init]))
    containers = [builders.container(image="", ports=[port(p) for p in ports])]
    return builders.pod(
        f"p{n}", uid=f"uid-{n}", containers=containers, init_containers=inits, node=node, nominated=nominated
    )


def node_info(*pods: Pod) -> NodeInfo:
    ni = NodeInfo(builders.node("m1", cpu=None, memory=None, pods=None))
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


_FAIL = Status(Code.Unschedulable, ERR_REASON)
_OK = Status()


@pytest.mark.parametrize(
    ("p", "existing", "want"),
    [
        pytest.param(make_pod("UDP/127.0.0.1/8080"), make_pod("UDP/127.0.0.1/9090", node="m1"), _OK, id="other port"),
        pytest.param(
            make_pod("UDP/127.0.0.1/8080"), make_pod("UDP/127.0.0.1/8080", node="m1"), _FAIL, id="same udp port"
        ),
        pytest.param(
            make_pod("TCP/127.0.0.1/8080"), make_pod("TCP/127.0.0.1/8080", node="m1"), _FAIL, id="same tcp port"
        ),
        pytest.param(
            make_pod("TCP/127.0.0.1/8080"), make_pod("TCP/127.0.0.2/8080", node="m1"), _OK, id="different host ip"
        ),
        pytest.param(
            make_pod("UDP/127.0.0.1/8080"), make_pod("TCP/127.0.0.1/8080", node="m1"), _OK, id="different protocol"
        ),
        pytest.param(
            make_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            make_pod("UDP/127.0.0.1/8080", node="m1"),
            _FAIL,
            id="second udp port conflict",
        ),
        pytest.param(
            make_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            make_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081", node="m1"),
            _FAIL,
            id="first tcp port conflict",
        ),
        pytest.param(
            make_pod("TCP/0.0.0.0/8001"),
            make_pod("TCP/127.0.0.1/8001", node="m1"),
            _FAIL,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            make_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            make_pod("TCP/127.0.0.1/8001", node="m1"),
            _FAIL,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            make_pod("TCP/127.0.0.1/8001"),
            make_pod("TCP/0.0.0.0/8001", node="m1"),
            _FAIL,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            make_pod("UDP/127.0.0.1/8001"),
            make_pod("TCP/0.0.0.0/8001", node="m1"),
            _OK,
            id="second different protocol",
        ),
        pytest.param(
            make_pod("UDP/127.0.0.1/8001"),
            make_pod("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001", node="m1"),
            _FAIL,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            make_pod("//8001"),
            make_pod("TCP/0.0.0.0/8001", node="m1"),
            _FAIL,
            id="empty hostIP and protocol default to 0.0.0.0 and TCP",
        ),
        pytest.param(
            make_pod(sidecar=["TCP/0.0.0.0/8081"]),
            make_pod("TCP/0.0.0.0/8081", node="m1"),
            _FAIL,
            id="sidecar (restartable init container) port wanted conflicts",
        ),
        pytest.param(
            make_pod("TCP/0.0.0.0/8081"),
            make_pod(sidecar=["TCP/0.0.0.0/8081"], node="m1"),
            _FAIL,
            id="sidecar port used on the node conflicts",
        ),
        pytest.param(
            make_pod("TCP/0.0.0.0/8081"),
            make_pod("TCP/0.0.0.0/9000", init=["TCP/0.0.0.0/8081"], node="m1"),
            _OK,
            id="plain init container ports are not held",
        ),
    ],
)
def test_pre_filter_and_filter(p: Pod, existing: Pod, want: Status) -> None:
    pl = NodePorts(None, None)
    state = CycleState()
    result, status = pl.pre_filter(state, p, [])
    assert result is None
    assert status.is_success()
    got = pl.filter(state, p, node_info(existing))
    assert (got.code, got.reasons) == (want.code, want.reasons)
    assert fits(p, node_info(existing)) is want.is_success()


@pytest.mark.parametrize(
    "p",
    [
        pytest.param(builders.pod("p", namespace="", containers=[]), id="skip filter"),
        pytest.param(make_pod(init=["TCP/0.0.0.0/80"]), id="skip when only a plain init container has a host port"),
    ],
)
def test_pre_filter_skips_without_host_ports(p: Pod) -> None:
    state = CycleState()
    _, status = NodePorts(None, None).pre_filter(state, p, [])
    assert status.code is Code.Skip
    assert PRE_FILTER_STATE_KEY not in list(state)


def test_filter_without_pre_filter_is_an_error() -> None:
    got = NodePorts(None, None).filter(CycleState(), make_pod("TCP//80"), node_info())
    assert got.code is Code.Error
    assert PRE_FILTER_STATE_KEY in got.message()


def test_host_ports_order_sidecars_first_and_ignore_zero() -> None:
    p = make_pod("TCP/1.2.3.4/81", sidecar=["UDP//53"], init=["TCP//99"])
    p_zero = builders.pod(
        "z", namespace="", containers=[builders.container(image="", ports=[ContainerPort(container_port=80)])]
    )
    assert pod_host_ports(p) == [("0.0.0.0", "UDP", 53), ("1.2.3.4", "TCP", 81)]
    assert pod_host_ports(p_zero) == []


_P8080 = make_pod("TCP//8080")


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(make_pod(), QueueingHint.QueueSkip, id="skip-queue-on-unscheduled"),
        pytest.param(make_pod(node="fake-node"), QueueingHint.QueueSkip, id="skip-queue-on-non-hostport"),
        pytest.param(
            make_pod("TCP//8081", node="fake-node"), QueueingHint.QueueSkip, id="skip-queue-on-unrelated-hostport"
        ),
        pytest.param(make_pod("TCP//8080", node="fake-node"), QueueingHint.Queue, id="queue-on-released-hostport"),
        pytest.param(
            make_pod("TCP//8080", nominated="fake-node"),
            QueueingHint.Queue,
            id="queue-on-nominated-pod-released-hostport",
        ),
        pytest.param(make_pod("TCP//8080"), QueueingHint.QueueSkip, id="skip-unscheduled-pod-with-same-port"),
        pytest.param(
            make_pod(sidecar=["TCP//8080"], node="fake-node"),
            QueueingHint.Queue,
            id="queue-on-released-sidecar-hostport",
        ),
        pytest.param(
            make_pod("UDP//8080", node="fake-node"), QueueingHint.QueueSkip, id="skip-same-port-other-protocol"
        ),
    ],
)
def test_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    assert NodePorts(None, None).is_schedulable_after_pod_deleted(_P8080, deleted, None) is want


def test_events_to_register() -> None:
    pl = NodePorts(None, None)
    assert [(e.event, e.hint) for e in pl.events_to_register()] == [
        (ClusterEvent(EventResource.Pod, ActionType.Delete), pl.is_schedulable_after_pod_deleted),
        (ClusterEvent(EventResource.Node, ActionType.Add), None),
    ]
    assert pl.name == NAME == "NodePorts"
