"""The Pod and Node Tables as the real kubectl prints them.

A tiny aiohttp app of the test's own (127.0.0.1, port 0) serves just what ``kubectl get``
needs: ``/version``, legacy discovery (``/api``, ``/apis``, ``/api/v1`` with pods and nodes)
and ``emulator.base.http.tables.table`` for the pods and nodes lists, so these tests check the
Tables alone, not the server around them. kubectl runs with ``HOME`` and ``KUBECACHEDIR`` in
a temp dir and a timeout; without ``/usr/bin/kubectl`` the tests are skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from emulator.base.api.codec import convert
from emulator.base.http import resources
from emulator.base.http.tables import table
from emulator.base.runtime.clock import format_timestamp

KUBECTL = Path("/usr/bin/kubectl")
NOW = 2_000_000.0

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason="needs the real kubectl at /usr/bin/kubectl"),
    pytest.mark.real_time,
    pytest.mark.asyncio,
]


def _res(name: str) -> resources.Resource:
    return next(r for r in resources.RESOURCES if r.name == name)


def _ago(seconds: float) -> str:
    return format_timestamp(NOW - seconds)


_RUNNING: dict[str, Any] = {"running": {"startedAt": _ago(290)}}

PODS = [
    {
        "metadata": {"name": "web-1", "namespace": "default", "uid": "u1", "creationTimestamp": _ago(300)},
        "spec": {"containers": [{"name": "web"}], "nodeName": "kind-worker"},
        "status": {
            "phase": "Running",
            "podIP": "10.244.1.5",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "web",
                    "ready": True,
                    "restartCount": 2,
                    "state": _RUNNING,
                    "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": _ago(60)}},
                }
            ],
        },
    },
    {
        "metadata": {"name": "gated", "namespace": "default", "uid": "u2", "creationTimestamp": _ago(10)},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "schedulingGates": [{"name": "wait"}]},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
        },
    },
    {
        "metadata": {"name": "victim", "namespace": "default", "uid": "u3", "creationTimestamp": _ago(3 * 86400)},
        "spec": {"containers": [{"name": "c"}], "nodeName": "kind-worker2"},
        "status": {"phase": "Pending", "nominatedNodeName": "kind-worker2"},
    },
]

NODES = [
    {
        "metadata": {
            "name": "kind-control-plane",
            "uid": "n0",
            "creationTimestamp": _ago(2 * 86400 + 5 * 3600),
            "labels": {"node-role.kubernetes.io/control-plane": ""},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
            "nodeInfo": {
                "kubeletVersion": "v1.34.0",
                "osImage": "Debian 12",
                "kernelVersion": "6.8.0",
                "containerRuntimeVersion": "containerd://2.1",
            },
        },
    },
    {
        "metadata": {"name": "kind-worker", "uid": "n1", "creationTimestamp": _ago(200)},
        "status": {"conditions": [{"type": "Ready", "status": "False"}], "nodeInfo": {"kubeletVersion": "v1.34.0"}},
    },
]

WATCH_EVENTS: list[tuple[str, dict[str, Any]]] = [
    (
        "ADDED",
        {
            "metadata": {"name": "web-2", "namespace": "default", "uid": "u4", "resourceVersion": "8"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Pending"},
        },
    ),
    (
        "MODIFIED",
        {
            "metadata": {"name": "web-2", "namespace": "default", "uid": "u4", "resourceVersion": "9"},
            "spec": {"containers": [{"name": "web"}], "nodeName": "kind-worker"},
            "status": {
                "phase": "Pending",
                "containerStatuses": [{"name": "web", "state": {"waiting": {"reason": "ContainerCreating"}}}],
            },
        },
    ),
]

_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-emu",
    "gitCommit": "0" * 40,
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


_TEMPLATE: dict[str, Any] = {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}


def _meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "uid": f"uid-{name}", "creationTimestamp": _ago(300), **extra}


OTHERS: dict[str, list[dict[str, Any]]] = {
    "deployments": [
        {
            "metadata": _meta("web"),
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE},
            "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        }
    ],
    "replicasets": [
        {
            "metadata": _meta("web-5d4f"),
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE},
            "status": {"replicas": 3, "readyReplicas": 2},
        }
    ],
    "statefulsets": [
        {"metadata": _meta("db"), "spec": {"replicas": 3, "template": _TEMPLATE}, "status": {"readyReplicas": 1}}
    ],
    "daemonsets": [
        {
            "metadata": _meta("agent"),
            "spec": {
                "template": {"spec": {"containers": [{"name": "a"}], "nodeSelector": {"kubernetes.io/os": "linux"}}}
            },
            "status": {
                "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 3,
                "numberAvailable": 2,
            },
        }
    ],
    "jobs": [
        {
            "metadata": _meta("pi"),
            "spec": {"completions": 1, "template": _TEMPLATE},
            "status": {
                "succeeded": 1,
                "startTime": _ago(200),
                "completionTime": _ago(170),
                "conditions": [{"type": "Complete", "status": "True"}],
            },
        }
    ],
    "cronjobs": [
        {
            "metadata": _meta("nightly"),
            "spec": {"schedule": "0 3 * * *", "suspend": False, "jobTemplate": {"spec": {"template": _TEMPLATE}}},
        }
    ],
    "services": [
        {
            "metadata": _meta("web"),
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.20", "ports": [{"port": 80, "protocol": "TCP"}]},
        }
    ],
    "poddisruptionbudgets": [
        {"metadata": _meta("web"), "spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 0}}
    ],
    "priorityclasses": [
        {
            "metadata": {"name": "high", "creationTimestamp": _ago(300)},
            "value": 1000,
            "preemptionPolicy": "PreemptLowerPriority",
        }
    ],
    "leases": [{"metadata": _meta("kind-worker"), "spec": {"holderIdentity": "kind-worker"}}],
    "events": [
        {
            "metadata": _meta("web-1.17f0"),
            "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default"},
            "reason": "Scheduled",
            "message": "Successfully assigned default/web-1 to kind-worker",
            "type": "Normal",
            "source": {"component": "default-scheduler"},
            "firstTimestamp": _ago(30),
            "lastTimestamp": _ago(30),
        }
    ],
    "namespaces": [{"metadata": {"name": "default", "creationTimestamp": _ago(300)}, "status": {"phase": "Active"}}],
}


def _resource_entry(r: resources.Resource) -> dict[str, Any]:
    return {
        "name": r.name,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": list(r.verbs),
        "shortNames": list(r.short_names),
    }


def _app(agents: list[str]) -> web.Application:
    """Legacy discovery of every served resource; a Table list of each one's objects above."""
    docs = {"pods": PODS, "nodes": NODES, **OTHERS}
    objects = {name: [convert(d, _res(name).struct) for d in items] for name, items in docs.items()}
    groups = [(g, v) for g, v in resources.group_versions() if g]

    async def version(_: web.Request) -> web.Response:
        return web.json_response(_VERSION)

    async def api(request: web.Request) -> web.Response:
        host = request.host
        return web.json_response(
            {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
            }
        )

    async def apis(_: web.Request) -> web.Response:
        entries = [
            {
                "name": g,
                "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v},
            }
            for g, v in groups
        ]
        return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": entries})

    async def group_version(request: web.Request) -> web.Response:
        g, v = request.match_info.get("group", ""), request.match_info.get("version", "v1")
        served = resources.by_group_version(g, v)
        if not served:
            raise web.HTTPNotFound
        return web.json_response(
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{g}/{v}" if g else v,
                "resources": [_resource_entry(r) for r in served],
            }
        )

    async def watch(request: web.Request, resource: resources.Resource) -> web.StreamResponse:
        """Two events as upstream streams them to a Table watcher (a one-row Table each,
        columns only in the first), then the end of the stream, which ends ``kubectl get -w``."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        events = [(kind, convert(doc, resource.struct)) for kind, doc in WATCH_EVENTS]
        for i, (kind, obj) in enumerate(events):
            row = table(resource, [obj], now=NOW, headers=i == 0, resource_version=obj.metadata.resource_version)
            await response.write(json.dumps({"type": kind, "object": row}).encode() + b"\n")
        await response.write_eof()
        return response

    async def list_objects(request: web.Request) -> web.StreamResponse:
        g, v = request.match_info.get("group", ""), request.match_info.get("version", "v1")
        resource = resources.find(g, v, request.match_info["resource"])
        if resource is None or resource.name not in objects:
            raise web.HTTPNotFound
        if "as=Table" not in request.headers.get("Accept", ""):
            raise web.HTTPNotAcceptable
        if request.query.get("watch") in ("true", "1"):
            return await watch(request, resource)
        if resource.name == "pods":
            agents.append(request.headers.get("User-Agent", ""))
        body = table(
            resource,
            objects[resource.name],
            now=NOW,
            include_object=request.query.get("includeObject", "Metadata"),
            resource_version="7",
        )
        return web.Response(body=json.dumps(body), content_type="application/json")

    app = web.Application()
    app.router.add_get("/version", version)
    app.router.add_get("/api", api)
    app.router.add_get("/apis", apis)
    app.router.add_get("/api/v1", group_version)
    app.router.add_get("/apis/{group}/{version}", group_version)
    app.router.add_get("/api/v1/namespaces/{namespace}/{resource}", list_objects)
    app.router.add_get("/api/v1/{resource}", list_objects)
    app.router.add_get("/apis/{group}/{version}/namespaces/{namespace}/{resource}", list_objects)
    app.router.add_get("/apis/{group}/{version}/{resource}", list_objects)
    return app


@pytest.fixture
def agents() -> list[str]:
    """The User-Agent of each pods list request the app answered."""
    return []


@pytest_asyncio.fixture
async def kubeconfig(tmp_path: Path, agents: list[str]) -> AsyncIterator[Path]:
    runner = web.AppRunner(_app(agents))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        host, port = runner.addresses[0][:2]
        config = tmp_path / "kubeconfig"
        config.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: t\n  cluster:\n    server: http://{host}:{port}\n"
            "users:\n- name: t\n  user:\n    token: t\n"
            "contexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n    namespace: default\n"
            "current-context: t\n"
        )
        yield config
    finally:
        await runner.cleanup()


async def _kubectl(config: Path, *args: str) -> str:
    home = config.parent
    env = {**os.environ, "HOME": str(home), "KUBECACHEDIR": str(home / "cache"), "KUBECONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(
        str(KUBECTL),
        "--kubeconfig",
        str(config),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0, err.decode()
    return out.decode()


GET_PODS = """\
NAME     READY   STATUS            RESTARTS      AGE
web-1    1/1     Running           2 (60s ago)   5m
gated    0/2     SchedulingGated   0             10s
victim   0/1     Pending           0             3d
"""

GET_PODS_WIDE = """\
NAME     READY   STATUS            RESTARTS      AGE   IP           NODE           NOMINATED NODE   READINESS GATES
web-1    1/1     Running           2 (60s ago)   5m    10.244.1.5   kind-worker    <none>           <none>
gated    0/2     SchedulingGated   0             10s   <none>       <none>         <none>           <none>
victim   0/1     Pending           0             3d    <none>       kind-worker2   kind-worker2     <none>
"""

GET_NODES = """\
NAME                 STATUS                     ROLES           AGE     VERSION
kind-control-plane   Ready,SchedulingDisabled   control-plane   2d5h    v1.34.0
kind-worker          NotReady                   <none>          3m20s   v1.34.0
"""

GET_NODES_WIDE = """\
NAME                 STATUS                     ROLES           AGE     VERSION   INTERNAL-IP   EXTERNAL-IP   \
OS-IMAGE    KERNEL-VERSION   CONTAINER-RUNTIME
kind-control-plane   Ready,SchedulingDisabled   control-plane   2d5h    v1.34.0   172.18.0.2    <none>        \
Debian 12   6.8.0            containerd://2.1
kind-worker          NotReady                   <none>          3m20s   v1.34.0   <none>        <none>        \
<unknown>   <unknown>        <unknown>
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("get", "pods"), GET_PODS, id="get-pods"),
        pytest.param(("get", "pods", "-o", "wide"), GET_PODS_WIDE, id="get-pods-wide"),
        pytest.param(("get", "nodes"), GET_NODES, id="get-nodes"),
        pytest.param(("get", "nodes", "-o", "wide"), GET_NODES_WIDE, id="get-nodes-wide"),
    ],
)
async def test_kubectl_prints_the_table(kubeconfig: Path, args: tuple[str, ...], expected: str) -> None:
    assert await _kubectl(kubeconfig, *args) == expected


async def test_kubectl_show_labels_reads_the_row_metadata(kubeconfig: Path) -> None:
    out = await _kubectl(kubeconfig, "get", "nodes", "--show-labels")
    assert out.splitlines()[1].split()[-1] == "node-role.kubernetes.io/control-plane="
    assert out.splitlines()[2].split()[-1] == "<none>"


async def test_kubectl_sort_by_uses_the_full_object(kubeconfig: Path) -> None:
    out = await _kubectl(kubeconfig, "get", "pods", "--sort-by=.metadata.creationTimestamp")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["victim", "web-1", "gated"]


async def test_the_dispatcher_runs_kubectl_1_32(kubeconfig: Path, agents: list[str]) -> None:
    """``/version`` says minor 32, so the gcloud dispatcher execs kubectl 1.32: the client the
    expected texts above were written for."""
    await _kubectl(kubeconfig, "get", "pods")
    assert len(agents) == 1
    assert agents[0].startswith("kubectl/v1.32."), agents


def _columns(text: str) -> list[list[str]]:
    """kubectl's printed table as cells: each column starts where its header does."""
    header, *lines = text.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    return [[line[a:b].strip() for a, b in bounds] for line in [header, *lines]]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ("get", "deployments"),
            [["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], ["web", "2/3", "3", "2", "5m"]],
            id="deployments",
        ),
        pytest.param(
            ("get", "deploy", "-o", "wide"),
            [
                ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
                ["web", "2/3", "3", "2", "5m", "web", "nginx:1.27", "app=web"],
            ],
            id="deployments-wide",
        ),
        pytest.param(
            ("get", "rs"),
            [["NAME", "DESIRED", "CURRENT", "READY", "AGE"], ["web-5d4f", "3", "3", "2", "5m"]],
            id="replicasets",
        ),
        pytest.param(("get", "sts"), [["NAME", "READY", "AGE"], ["db", "1/3", "5m"]], id="statefulsets"),
        pytest.param(
            ("get", "ds"),
            [
                ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
                ["agent", "3", "3", "2", "3", "2", "kubernetes.io/os=linux", "5m"],
            ],
            id="daemonsets",
        ),
        pytest.param(
            ("get", "jobs"),
            [["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], ["pi", "Complete", "1/1", "30s", "5m"]],
            id="jobs",
        ),
        pytest.param(
            ("get", "cj"),
            [
                ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
                ["nightly", "0 3 * * *", "<none>", "False", "0", "<none>", "5m"],
            ],
            id="cronjobs",
        ),
        pytest.param(
            ("get", "svc"),
            [
                ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
                ["web", "ClusterIP", "10.96.0.20", "<none>", "80/TCP", "5m"],
            ],
            id="services",
        ),
        pytest.param(
            ("get", "pdb"),
            [
                ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"],
                ["web", "2", "N/A", "0", "5m"],
            ],
            id="poddisruptionbudgets",
        ),
        pytest.param(
            ("get", "pc"),
            [
                ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
                ["high", "1000", "false", "5m", "PreemptLowerPriority"],
            ],
            id="priorityclasses",
        ),
        pytest.param(("get", "leases"), [["NAME", "HOLDER", "AGE"], ["kind-worker", "kind-worker", "5m"]], id="leases"),
        pytest.param(
            ("get", "events"),
            [
                ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
                ["30s", "Normal", "Scheduled", "pod/web-1", "Successfully assigned default/web-1 to kind-worker"],
            ],
            id="events",
        ),
        pytest.param(("get", "ns"), [["NAME", "STATUS", "AGE"], ["default", "Active", "5m"]], id="namespaces"),
    ],
)
async def test_kubectl_prints_every_kind(kubeconfig: Path, args: tuple[str, ...], expected: list[list[str]]) -> None:
    assert _columns(await _kubectl(kubeconfig, *args)) == expected


async def test_kubectl_get_watch_prints_one_row_per_event(kubeconfig: Path) -> None:
    """``kubectl get pods -w``: the list's Table, then one row per watch event Table (headers
    only in the first event, none printed again); the stream's end ends kubectl (rc 0)."""
    out = await _kubectl(kubeconfig, "get", "pods", "-w")
    lines = out.splitlines()
    assert lines[: len(GET_PODS.splitlines())] == GET_PODS.splitlines()
    assert [line.split() for line in lines[len(GET_PODS.splitlines()) :]] == [
        ["web-2", "0/1", "Pending", "0", "<unknown>"],
        ["web-2", "0/1", "ContainerCreating", "0", "<unknown>"],
    ]
