"""``emulator.base.http.tables``: upstream's columns and cells per resource, HumanDuration, the Table
envelope and its ``includeObject`` shapes. Expected cells are upstream's printers' text
(``pkg/printers/internalversion/printers.go``) for the same object."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.api.codec import KINDS, convert, to_builtins
from emulator.base.api.errors import BadRequest
from emulator.base.http import resources
from emulator.base.http.cells import human_duration
from emulator.base.http.tables import columns, row_cells, table
from emulator.base.runtime.clock import format_timestamp

NOW = 1_000_000.0
T0 = format_timestamp(NOW - 300)  # five minutes before NOW


def _ago(seconds: float) -> str:
    return format_timestamp(NOW - seconds)


def _obj(resource: resources.Resource, doc: dict[str, Any]) -> Any:
    meta = {"name": "x", "creationTimestamp": T0, **doc.pop("metadata", {})}
    return convert({"metadata": meta, **doc}, resource.struct)


def _res(name: str) -> resources.Resource:
    for r in resources.RESOURCES:
        if r.name == name:
            return r
    raise AssertionError(name)


POD = _res("pods")
NODE = _res("nodes")


# --- HumanDuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(-2.5, "<invalid>", id="future-beyond-1s"),
        pytest.param(-1.5, "0s", id="future-within-1s"),
        pytest.param(0, "0s", id="zero"),
        pytest.param(5.9, "5s", id="truncated"),
        pytest.param(119, "119s", id="below-2m"),
        pytest.param(120, "2m", id="2m"),
        pytest.param(200, "3m20s", id="3m20s"),
        pytest.param(599, "9m59s", id="below-10m"),
        pytest.param(600, "10m", id="10m"),
        pytest.param(3 * 3600 - 1, "179m", id="below-3h"),
        pytest.param(3 * 3600, "3h", id="3h"),
        pytest.param(5 * 3600 + 3 * 60 + 59, "5h3m", id="5h3m"),
        pytest.param(8 * 3600, "8h", id="8h"),
        pytest.param(48 * 3600 - 1, "47h", id="below-2d"),
        pytest.param(2 * 86400 + 5 * 3600, "2d5h", id="2d5h"),
        pytest.param(3 * 86400, "3d", id="3d"),
        pytest.param(8 * 86400, "8d", id="8d"),
        pytest.param(2 * 365 * 86400 - 1, "729d", id="below-2y"),
        pytest.param(2 * 365 * 86400, "2y", id="2y"),
        pytest.param(2 * 365 * 86400 + 40 * 86400, "2y40d", id="2y40d"),
        pytest.param(9 * 365 * 86400 + 40 * 86400, "9y", id="9y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


# --- pods ----------------------------------------------------------------------------------


def _cs(name: str = "c", *, ready: bool = False, restarts: int = 0, **state: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "ready": ready, "restartCount": restarts, "state": state}
    return out


_RUNNING: dict[str, Any] = {"running": {"startedAt": T0}}
_READY_COND = [{"type": "Ready", "status": "True"}]


@pytest.mark.parametrize(
    ("doc", "ready", "status", "restarts"),
    [
        pytest.param({"status": {"phase": "Pending"}}, "0/1", "Pending", "0", id="pending-unscheduled"),
        pytest.param(
            {
                "status": {
                    "phase": "Pending",
                    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
                }
            },
            "0/1",
            "SchedulingGated",
            "0",
            id="scheduling-gated",
        ),
        pytest.param(
            {"status": {"phase": "Pending", "containerStatuses": [_cs(waiting={"reason": "ContainerCreating"})]}},
            "0/1",
            "ContainerCreating",
            "0",
            id="container-creating",
        ),
        pytest.param(
            {
                "status": {
                    "phase": "Running",
                    "conditions": _READY_COND,
                    "containerStatuses": [_cs(ready=True, **_RUNNING)],
                }
            },
            "1/1",
            "Running",
            "0",
            id="running",
        ),
        pytest.param(
            {
                "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
                "status": {
                    "phase": "Running",
                    "containerStatuses": [_cs("a", ready=True, **_RUNNING), _cs("b", **_RUNNING)],
                },
            },
            "1/2",
            "Running",
            "0",
            id="one-of-two-ready",
        ),
        pytest.param(
            {
                "status": {
                    "phase": "Succeeded",
                    "containerStatuses": [_cs(terminated={"exitCode": 0, "reason": "Completed"})],
                }
            },
            "0/1",
            "Completed",
            "0",
            id="completed",
        ),
        pytest.param(
            {"status": {"phase": "Failed", "containerStatuses": [_cs(terminated={"exitCode": 2})]}},
            "0/1",
            "ExitCode:2",
            "0",
            id="exit-code-without-reason",
        ),
        pytest.param(
            {"status": {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}},
            "0/1",
            "Evicted",
            "0",
            id="status-reason",
        ),
        pytest.param(
            {
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            **_cs(restarts=2, waiting={"reason": "CrashLoopBackOff"}),
                            "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": _ago(300)}},
                        }
                    ],
                }
            },
            "0/1",
            "CrashLoopBackOff",
            "2 (5m ago)",
            id="crashloop-with-last-restart",
        ),
        pytest.param(
            {
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            **_cs(ready=True, restarts=1, **_RUNNING),
                            "lastState": {"terminated": {"exitCode": 137, "finishedAt": _ago(NOW)}},
                        }
                    ],
                }
            },
            "1/1",
            "Running",
            "1 (11d ago)",
            id="last-restart-at-clock-zero",
        ),
        pytest.param(
            {"status": {"phase": "Running", "containerStatuses": [_cs(ready=True, restarts=3, **_RUNNING)]}},
            "1/1",
            "Running",
            "3",
            id="restarts-without-last-state",
        ),
        pytest.param(
            {
                "spec": {"initContainers": [{"name": "init"}], "containers": [{"name": "c"}]},
                "status": {
                    "phase": "Pending",
                    "initContainerStatuses": [_cs("init", **_RUNNING)],
                    "containerStatuses": [_cs(waiting={"reason": "PodInitializing"})],
                },
            },
            "0/1",
            "Init:0/1",
            "0",
            id="init-running",
        ),
        pytest.param(
            {
                "spec": {"initContainers": [{"name": "init"}], "containers": [{"name": "c"}]},
                "status": {
                    "phase": "Pending",
                    "initContainerStatuses": [_cs("init", terminated={"exitCode": 1, "reason": "Error"})],
                },
            },
            "0/1",
            "Init:Error",
            "0",
            id="init-failed",
        ),
        pytest.param(
            {
                "spec": {"initContainers": [{"name": "init"}], "containers": [{"name": "c"}]},
                "status": {
                    "phase": "Pending",
                    "initContainerStatuses": [_cs("init", waiting={"reason": "ImagePullBackOff"})],
                },
            },
            "0/1",
            "Init:ImagePullBackOff",
            "0",
            id="init-waiting",
        ),
        pytest.param(
            {
                "spec": {
                    "initContainers": [{"name": "side", "restartPolicy": "Always"}],
                    "containers": [{"name": "c"}],
                },
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Initialized", "status": "True"}, *_READY_COND],
                    "initContainerStatuses": [{**_cs("side", ready=True, **_RUNNING), "started": True}],
                    "containerStatuses": [_cs(ready=True, **_RUNNING)],
                },
            },
            "2/2",
            "Running",
            "0",
            id="sidecar-counts",
        ),
        pytest.param(
            {
                "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        _cs("a", ready=True, **_RUNNING),
                        _cs("b", terminated={"exitCode": 0, "reason": "Completed"}),
                    ],
                },
            },
            "1/2",
            "NotReady",
            "0",
            id="completed-with-running-not-ready",
        ),
        pytest.param(
            {
                "metadata": {"deletionTimestamp": _ago(1)},
                "status": {"phase": "Running", "containerStatuses": [_cs(ready=True, **_RUNNING)]},
            },
            "1/1",
            "Terminating",
            "0",
            id="terminating",
        ),
        pytest.param(
            {"metadata": {"deletionTimestamp": _ago(1)}, "status": {"phase": "Running", "reason": "NodeLost"}},
            "0/1",
            "Unknown",
            "0",
            id="node-lost",
        ),
        pytest.param(
            {"metadata": {"deletionTimestamp": _ago(1)}, "status": {"phase": "Succeeded"}},
            "0/1",
            "Succeeded",
            "0",
            id="terminal-not-terminating",
        ),
    ],
)
def test_pod_status_cells(doc: dict[str, Any], ready: str, status: str, restarts: str) -> None:
    doc.setdefault("spec", {"containers": [{"name": "c"}]})
    cells = row_cells(POD, _obj(POD, doc), now=NOW)
    assert cells[1:4] == [ready, status, restarts]


def test_pod_wide_cells() -> None:
    pod = _obj(
        POD,
        {
            "spec": {"containers": [{"name": "c"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIP": "10.0.0.7", "nominatedNodeName": "n2"},
        },
    )
    assert row_cells(POD, pod, now=NOW) == ["x", "0/1", "Running", "0", "5m", "10.0.0.7", "n1", "n2", "<none>"]
    bare = _obj(POD, {"spec": {"containers": [{"name": "c"}]}})
    assert row_cells(POD, bare, now=NOW)[5:] == ["<none>"] * 4


# --- nodes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "status", "roles"),
    [
        pytest.param({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, "Ready", "<none>", id="ready"),
        pytest.param(
            {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}, "NotReady", "<none>", id="not-ready"
        ),
        pytest.param(
            {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}},
            "NotReady",
            "<none>",
            id="ready-unknown",
        ),
        pytest.param({}, "Unknown", "<none>", id="no-conditions"),
        pytest.param(
            {"spec": {"unschedulable": True}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            "Ready,SchedulingDisabled",
            "<none>",
            id="cordoned",
        ),
        pytest.param({"spec": {"unschedulable": True}}, "Unknown,SchedulingDisabled", "<none>", id="cordoned-unknown"),
        pytest.param(
            {
                "metadata": {
                    "labels": {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": ""}
                }
            },
            "Unknown",
            "control-plane,worker",
            id="roles-sorted",
        ),
        pytest.param(
            {"metadata": {"labels": {"kubernetes.io/role": "infra", "node-role.kubernetes.io/": "x"}}},
            "Unknown",
            "infra",
            id="legacy-role-label",
        ),
    ],
)
def test_node_status_and_roles(doc: dict[str, Any], status: str, roles: str) -> None:
    cells = row_cells(NODE, _obj(NODE, doc), now=NOW)
    assert cells[1:3] == [status, roles]


def test_node_wide_cells() -> None:
    node = _obj(
        NODE,
        {
            "status": {
                "addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.1.0.1"}],
                "nodeInfo": {
                    "kubeletVersion": "v1.34.0",
                    "osImage": "Ubuntu",
                    "containerRuntimeVersion": "containerd://2.0",
                },
            }
        },
    )
    assert row_cells(NODE, node, now=NOW) == [
        "x",
        "Unknown",
        "<none>",
        "5m",
        "v1.34.0",
        "10.1.0.1",
        "<none>",
        "Ubuntu",
        "<unknown>",
        "containerd://2.0",
    ]


# --- every other kind ----------------------------------------------------------------------

_TEMPLATE = {"spec": {"containers": [{"name": "web", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]}}
_SEL = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]}


@pytest.mark.parametrize(
    ("name", "doc", "cells"),
    [
        pytest.param("namespaces", {"status": {"phase": "Active"}}, ["x", "Active", "5m"], id="namespace"),
        pytest.param(
            "deployments",
            {
                "spec": {"replicas": 3, "selector": _SEL, "template": _TEMPLATE},
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
            },
            ["x", "2/3", 3, 2, "5m", "web,log", "nginx:1,busybox", "app=web,tier in (a,b)"],
            id="deployment",
        ),
        pytest.param(
            "replicasets",
            {
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE},
                "status": {"replicas": 2, "readyReplicas": 1},
            },
            ["x", 2, 2, 1, "5m", "web,log", "nginx:1,busybox", "app=web"],
            id="replicaset",
        ),
        pytest.param(
            "statefulsets",
            {"spec": {"replicas": 3, "template": _TEMPLATE}, "status": {"readyReplicas": 1}},
            ["x", "1/3", "5m", "web,log", "nginx:1,busybox"],
            id="statefulset",
        ),
        pytest.param(
            "daemonsets",
            {
                "spec": {
                    "selector": {"matchLabels": {"app": "d"}},
                    "template": {
                        "spec": {
                            "containers": [{"name": "d", "image": "i"}],
                            "nodeSelector": {"zone": "a", "os": "linux"},
                        }
                    },
                },
                "status": {
                    "desiredNumberScheduled": 3,
                    "currentNumberScheduled": 3,
                    "numberReady": 2,
                    "updatedNumberScheduled": 3,
                    "numberAvailable": 2,
                },
            },
            ["x", 3, 3, 2, 3, 2, "os=linux,zone=a", "5m", "d", "i", "app=d"],
            id="daemonset",
        ),
        pytest.param(
            "daemonsets",
            {"spec": {"template": {"spec": {"containers": [{"name": "d", "image": "i"}]}}}},
            ["x", 0, 0, 0, 0, 0, "<none>", "5m", "d", "i", "<none>"],
            id="daemonset-no-node-selector",
        ),
        pytest.param(
            "jobs",
            {
                "spec": {
                    "completions": 3,
                    "template": _TEMPLATE,
                    "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
                },
                "status": {"succeeded": 1, "startTime": _ago(200)},
            },
            [
                "x",
                "Running",
                "1/3",
                "3m20s",
                "5m",
                "web,log",
                "nginx:1,busybox",
                "batch.kubernetes.io/controller-uid=u",
            ],
            id="job-running",
        ),
        pytest.param(
            "jobs",
            {
                "spec": {"parallelism": 2, "template": _TEMPLATE},
                "status": {
                    "succeeded": 1,
                    "startTime": _ago(200),
                    "completionTime": _ago(170),
                    "conditions": [{"type": "Complete", "status": "True"}],
                },
            },
            ["x", "Complete", "1/1 of 2", "30s", "5m", "web,log", "nginx:1,busybox", "<none>"],
            id="job-complete",
        ),
        pytest.param(
            "jobs",
            {"spec": {"template": _TEMPLATE}, "status": {"conditions": [{"type": "Failed", "status": "True"}]}},
            ["x", "Failed", "0/1", "", "5m", "web,log", "nginx:1,busybox", "<none>"],
            id="job-failed",
        ),
        pytest.param(
            "jobs",
            {
                "spec": {"suspend": True, "template": _TEMPLATE},
                "status": {"conditions": [{"type": "Suspended", "status": "True"}]},
            },
            ["x", "Suspended", "0/1", "", "5m", "web,log", "nginx:1,busybox", "<none>"],
            id="job-suspended",
        ),
        pytest.param(
            "cronjobs",
            {
                "spec": {"schedule": "*/5 * * * *", "suspend": False, "jobTemplate": {"spec": {"template": _TEMPLATE}}},
                "status": {"active": [{"name": "j1"}], "lastScheduleTime": _ago(60)},
            },
            ["x", "*/5 * * * *", "<none>", "False", 1, "60s", "5m", "web,log", "nginx:1,busybox", "<none>"],
            id="cronjob",
        ),
        pytest.param(
            "cronjobs",
            {"spec": {"schedule": "@daily", "timeZone": "Etc/UTC", "jobTemplate": {"spec": {"template": _TEMPLATE}}}},
            ["x", "@daily", "Etc/UTC", "<unset>", 0, "<none>", "5m", "web,log", "nginx:1,busybox", "<none>"],
            id="cronjob-never-scheduled",
        ),
        pytest.param(
            "services",
            {
                "spec": {
                    "type": "ClusterIP",
                    "clusterIP": "10.96.0.10",
                    "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
                    "selector": {"k8s-app": "dns"},
                }
            },
            ["x", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "5m", "k8s-app=dns"],
            id="service-clusterip",
        ),
        pytest.param(
            "services",
            {
                "spec": {
                    "type": "NodePort",
                    "clusterIP": "10.96.0.11",
                    "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
                }
            },
            ["x", "NodePort", "10.96.0.11", "<none>", "80:30080/TCP", "5m", "<none>"],
            id="service-nodeport",
        ),
        pytest.param(
            "services",
            {
                "spec": {
                    "type": "LoadBalancer",
                    "clusterIP": "10.96.0.12",
                    "ports": [{"port": 443, "nodePort": 31443, "protocol": "TCP"}],
                }
            },
            ["x", "LoadBalancer", "10.96.0.12", "<pending>", "443:31443/TCP", "5m", "<none>"],
            id="service-loadbalancer",
        ),
        pytest.param(
            "services",
            {"spec": {"type": "ExternalName", "externalName": "db.example.com"}},
            ["x", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"],
            id="service-externalname",
        ),
        pytest.param(
            "services",
            {"spec": {"clusterIP": "None", "selector": {"app": "db"}}},
            ["x", "ClusterIP", "None", "<none>", "<none>", "5m", "app=db"],
            id="service-headless",
        ),
        pytest.param(
            "poddisruptionbudgets",
            {"spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 1}},
            ["x", "2", "N/A", 1, "5m"],
            id="pdb-min-available",
        ),
        pytest.param(
            "poddisruptionbudgets",
            {"spec": {"maxUnavailable": "25%"}},
            ["x", "N/A", "25%", 0, "5m"],
            id="pdb-max-unavailable",
        ),
        pytest.param(
            "priorityclasses",
            {"value": 1000, "globalDefault": True, "preemptionPolicy": "Never"},
            ["x", 1000, True, "5m", "Never"],
            id="priorityclass",
        ),
        pytest.param("priorityclasses", {"value": -5}, ["x", -5, False, "5m", ""], id="priorityclass-defaults"),
        pytest.param(
            "leases", {"spec": {"holderIdentity": "kube-scheduler-1"}}, ["x", "kube-scheduler-1", "5m"], id="lease"
        ),
        pytest.param("leases", {}, ["x", "", "5m"], id="lease-unheld"),
    ],
)
def test_cells(name: str, doc: dict[str, Any], cells: list[Any]) -> None:
    resource = _res(name)
    assert row_cells(resource, _obj(resource, doc), now=NOW) == cells


_EVENT = _res("events")


@pytest.mark.parametrize(
    ("doc", "cells"),
    [
        pytest.param(
            {
                "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{web}"},
                "reason": "Pulled",
                "message": " Container image pulled \n",
                "type": "Normal",
                "source": {"component": "kubelet", "host": "n1"},
                "firstTimestamp": _ago(600),
                "lastTimestamp": _ago(30),
                "count": 4,
            },
            [
                "30s",
                "Normal",
                "Pulled",
                "pod/web-1",
                "spec.containers{web}",
                "kubelet, n1",
                "Container image pulled",
                "10m",
                4,
                "x",
            ],
            id="classic",
        ),
        pytest.param(
            {
                "involvedObject": {"kind": "Node"},
                "reason": "Scheduled",
                "type": "Normal",
                "reportingComponent": "default-scheduler",
                "eventTime": _ago(5),
                "count": 0,
            },
            ["5s", "Normal", "Scheduled", "node", "", "default-scheduler", "", "5s", 1, "x"],
            id="new-api-singleton",
        ),
        pytest.param(
            {
                "involvedObject": {"kind": "Pod", "name": "p"},
                "type": "Warning",
                "reason": "FailedScheduling",
                "reportingComponent": "default-scheduler",
                "reportingInstance": "sched-1",
                "eventTime": _ago(900),
                "series": {"count": 7, "lastObservedTime": _ago(12)},
            },
            ["12s", "Warning", "FailedScheduling", "pod/p", "", "default-scheduler, sched-1", "", "15m", 7, "x"],
            id="series",
        ),
        pytest.param(
            {"involvedObject": {"kind": "Pod", "name": "p"}},
            ["<unknown>", "Normal", "", "pod/p", "", "", "", "<unknown>", 1, "x"],
            id="no-timestamps",
        ),
    ],
)
def test_event_cells(doc: dict[str, Any], cells: list[Any]) -> None:
    assert row_cells(_EVENT, _obj(_EVENT, doc), now=NOW) == cells


@pytest.mark.parametrize("resource", [r for r in resources.RESOURCES if r.stored], ids=lambda r: r.name)
def test_every_served_kind_has_one_cell_per_column(resource: resources.Resource) -> None:
    """Upstream's printer for every stored kind (no kind falls back to Name/Created At), and
    a zero-valued object still fills every column."""
    struct = KINDS[(resource.group_version, resource.kind)]
    required: dict[str, Any] = {"Event": {"involvedObject": {}}, "PriorityClass": {"value": 0}}
    obj = convert({"metadata": {"name": "z"}, **required.get(resource.kind, {})}, struct)
    cols = columns(resource)
    assert [c["name"] for c in cols][:1] != ["Created At"]
    out = table(resource, [obj], now=NOW)
    assert len(out["rows"][0]["cells"]) == len(cols) == len(out["columnDefinitions"])
    for col in cols:
        assert set(col) == {"name", "type", "format", "description", "priority"}
        assert col["priority"] in (0, 1)


@pytest.mark.parametrize(
    ("name", "wide"),
    [
        pytest.param("pods", ["IP", "Node", "Nominated Node", "Readiness Gates"], id="pods"),
        pytest.param(
            "nodes", ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"], id="nodes"
        ),
        pytest.param("deployments", ["Containers", "Images", "Selector"], id="deployments"),
        pytest.param("events", ["Subobject", "Source", "First Seen", "Count", "Name"], id="events"),
        pytest.param("priorityclasses", [], id="priorityclasses"),
    ],
)
def test_wide_columns_have_priority_1(name: str, wide: list[str]) -> None:
    assert [c["name"] for c in columns(_res(name)) if c["priority"] == 1] == wide


# --- the Table envelope --------------------------------------------------------------------


def _pod(name: str, **meta: Any) -> Any:
    return _obj(
        POD,
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}", **meta},
            "spec": {"containers": [{"name": "c"}]},
        },
    )


def test_table_envelope() -> None:
    out = table(POD, [_pod("a"), _pod("b")], now=NOW, resource_version="42", continue_token="tok")
    assert out["kind"] == "Table"
    assert out["apiVersion"] == "meta.k8s.io/v1"
    assert out["metadata"] == {"resourceVersion": "42", "continue": "tok"}
    assert [c["name"] for c in out["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert out["columnDefinitions"][0] == {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": out["columnDefinitions"][0]["description"],
        "priority": 0,
    }
    assert [r["cells"][0] for r in out["rows"]] == ["a", "b"]


def test_table_without_headers_or_metadata() -> None:
    out = table(POD, [_pod("a")], now=NOW, headers=False)
    assert "columnDefinitions" not in out
    assert out["metadata"] == {}
    assert len(out["rows"]) == 1


def test_empty_table_keeps_columns() -> None:
    out = table(POD, [], now=NOW, resource_version="7")
    assert out["rows"] == []
    assert len(out["columnDefinitions"]) == 9


def test_include_object_metadata_is_partial_object_metadata() -> None:
    pod = _pod("a", labels={"app": "web"})
    (row,) = table(POD, [pod], now=NOW)["rows"]
    assert row["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {
            "name": "a",
            "namespace": "default",
            "uid": "u-a",
            "creationTimestamp": T0,
            "labels": {"app": "web"},
        },
    }


def test_include_object_object_is_the_full_object() -> None:
    pod = _pod("a")
    (row,) = table(POD, [pod], now=NOW, include_object="Object")["rows"]
    assert row["object"] == to_builtins(pod)
    assert row["object"]["apiVersion"] == "v1"
    assert row["object"]["kind"] == "Pod"


def test_include_object_none() -> None:
    (row,) = table(POD, [_pod("a")], now=NOW, include_object="None")["rows"]
    assert row["object"] is None


def test_include_object_rejects_unknown() -> None:
    with pytest.raises(
        BadRequest,
        match=r"^Unable to convert to Table as requested: includeObject: Invalid value: \"Everything\": "
        r"must be 'Metadata', 'Object', 'None', or empty$",
    ):
        table(POD, [], now=NOW, include_object="Everything")


def test_include_object_empty_is_metadata() -> None:
    (row,) = table(POD, [_pod("a")], now=NOW, include_object="")["rows"]
    assert row["object"]["kind"] == "PartialObjectMetadata"


def test_managed_fields_are_added_by_uid() -> None:
    entry = {"manager": "kubectl", "operation": "Update", "apiVersion": "v1"}
    seen: list[str] = []

    def managed(uid: str) -> list[dict[str, Any]]:
        seen.append(uid)
        return [entry] if uid == "u-a" else []

    rows = table(POD, [_pod("a"), _pod("b")], now=NOW, managed_fields=managed)["rows"]
    assert rows[0]["object"]["metadata"]["managedFields"] == [entry]
    assert "managedFields" not in rows[1]["object"]["metadata"]
    full = table(POD, [_pod("a")], now=NOW, include_object="Object", managed_fields=managed)["rows"][0]
    assert full["object"]["metadata"]["managedFields"] == [entry]
    assert seen == ["u-a", "u-b", "u-a"]


@pytest.mark.parametrize(
    ("phase", "conditions"),
    [
        pytest.param(
            "Succeeded",
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "The pod has completed successfully.",
                }
            ],
            id="succeeded",
        ),
        pytest.param(
            "Failed",
            [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
            id="failed",
        ),
        pytest.param("Running", None, id="running"),
    ],
)
def test_pod_row_conditions(phase: str, conditions: list[dict[str, str]] | None) -> None:
    pod = _obj(POD, {"spec": {"containers": [{"name": "c"}]}, "status": {"phase": phase}})
    (row,) = table(POD, [pod], now=NOW)["rows"]
    assert row.get("conditions") == conditions


# --- any pod the store may hold ------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c"])
_reasons = st.sampled_from(["", "Completed", "Error", "CrashLoopBackOff", "PodInitializing", "OOMKilled"])
_stamps = st.integers(min_value=-(10**6), max_value=10**6).map(lambda s: _ago(s))
_states = st.one_of(
    st.just({}),
    st.builds(lambda at: {"running": {"startedAt": at}}, _stamps),
    st.builds(lambda r: {"waiting": {"reason": r}}, _reasons),
    st.builds(
        lambda code, r, at: {"terminated": {"exitCode": code, "reason": r, "finishedAt": at}},
        st.integers(0, 255),
        _reasons,
        _stamps,
    ),
)
_statuses = st.lists(
    st.fixed_dictionaries(
        {
            "name": _names,
            "ready": st.booleans(),
            "restartCount": st.integers(0, 50),
            "state": _states,
            "lastState": _states,
        },
        optional={"started": st.booleans()},
    ),
    max_size=3,
)
_pods = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({}, optional={"deletionTimestamp": _stamps}),
        "spec": st.fixed_dictionaries(
            {
                "containers": st.lists(st.builds(lambda n: {"name": n}, _names), min_size=1, max_size=3),
                "initContainers": st.lists(
                    st.fixed_dictionaries({"name": _names}, optional={"restartPolicy": st.just("Always")}), max_size=2
                ),
            }
        ),
        "status": st.fixed_dictionaries(
            {
                "phase": st.sampled_from(["", "Pending", "Running", "Succeeded", "Failed", "Unknown"]),
                "conditions": st.lists(
                    st.fixed_dictionaries(
                        {
                            "type": st.sampled_from(["Ready", "Initialized", "PodScheduled"]),
                            "status": st.sampled_from(["True", "False"]),
                            "reason": st.sampled_from(["", "SchedulingGated"]),
                        }
                    ),
                    max_size=3,
                ),
                "initContainerStatuses": _statuses,
                "containerStatuses": _statuses,
            },
            optional={"reason": st.sampled_from(["Evicted", "NodeLost"])},
        ),
    }
)


@settings(max_examples=100, deadline=None)
@given(doc=_pods)
def test_any_pod_prints_a_full_row(doc: dict[str, Any]) -> None:
    """printPod never fails on what the store may hold: one cell per column, READY ``n/m``
    (upstream's counts, not clamped: statuses the spec does not name count too), RESTARTS a
    count optionally with its age, AGE from the creation timestamp."""
    pod = _obj(POD, doc)
    cells = row_cells(POD, pod, now=NOW)
    assert len(cells) == len(columns(POD))
    assert re.fullmatch(r"\d+/\d+", cells[1])
    assert re.fullmatch(r"\d+( \((\d+[smhdy])+ ago\)| \(<invalid> ago\))?", cells[3])
    assert cells[4] == "5m"


def test_tables_share_nothing_between_calls() -> None:
    pod = _obj(POD, {"spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Succeeded"}})
    first = table(POD, [pod], now=NOW)
    first["columnDefinitions"][0]["name"] = "changed"
    first["rows"][0]["conditions"][0]["reason"] = "changed"
    second = table(POD, [pod], now=NOW)
    assert second["columnDefinitions"][0]["name"] == "Name"
    assert second["rows"][0]["conditions"][0]["reason"] == "Succeeded"
