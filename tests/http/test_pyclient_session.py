"""The official ``kubernetes`` Python client (37.x), unchanged, against ``python -m emulator serve``.

One server for the module (``conftest.server``) at a high ``SERVE_SPEED``, so that the watch
history's 75 simulated seconds pass in a few wall seconds (the 410 test). The client is
configured from the kubeconfig serve writes, as a user would
(``kubernetes.config.load_kube_config(config_file=...)``), into a private ``Configuration``
rather than the process-wide default. What the client accepts is the surface doc's §7: strict
pydantic models, a Status for the binding (§7.3: ``_preload_content=False``), a watch that
re-raises an in-band 410 as ``ApiException(410)`` when ``timeout_seconds`` is given.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from tests.http.conftest import Server

pytestmark = [pytest.mark.real_time, pytest.mark.slow]

SERVE_SPEED = 20.0
"""Twenty simulated seconds per wall second: the watch window (75 s) passes in about 4 s."""
NS = "default"
NODES = ["worker-0", "worker-1", "worker-2", "worker-3"]
HISTORY_WINDOW = 75.0
"""``emulator.base.apiserver.server.EVENT_FRESH_DURATION``: simulated seconds of watch history kept
once it holds more than ``HISTORY_LOWER_BOUND`` (100) events."""
LEASE_RENEWAL = 10.0
"""The session scenario's ``kubelet.heartbeatInterval``."""
POLL_INTERVAL = 0.05


def pod_body(name: str, *, labels: dict[str, str] | None = None, scheduler: str | None = None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {"app": name}),
        spec=client.V1PodSpec(
            scheduler_name=scheduler,
            containers=[
                client.V1Container(
                    name="app",
                    image="registry.example.com/web:1.0",
                    image_pull_policy="IfNotPresent",
                    resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "64Mi"}),
                )
            ],
        ),
    )


def status_of(error: ApiException) -> dict[str, Any]:
    body = json.loads(error.body)
    assert isinstance(body, dict)
    assert (body["kind"], body["apiVersion"], body["status"]) == ("Status", "v1", "Failure")
    return body


def poll(check: Callable[[], bool], *, timeout: float = 30.0, what: str) -> None:
    """Re-run ``check`` (an API call, so it paces itself) until true or the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(POLL_INTERVAL)  # the poll's pace, not a wait for an outcome
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def gone(v1: client.CoreV1Api, name: str) -> bool:
    try:
        v1.read_namespaced_pod(name, NS)
    except ApiException as error:
        if error.status == 404:
            return True
        raise
    return False


@pytest.fixture(scope="module")
def api(server: Server) -> Iterator[client.ApiClient]:
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(server.kubeconfig), client_configuration=configuration)
    assert configuration.host == server.url
    with client.ApiClient(configuration) as api_client:
        yield api_client


@pytest.fixture(scope="module")
def v1(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


# --- reads ----------------------------------------------------------------------------------


def test_list_node_parses_into_strict_models(v1: client.CoreV1Api) -> None:
    nodes = v1.list_node()
    assert isinstance(nodes, client.V1NodeList)
    assert [n.metadata.name for n in nodes.items] == NODES
    for node in nodes.items:
        assert node.status.capacity["cpu"] == "4"
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
        assert node.status.node_info.kubelet_version == "v1.34.0-emulated"
        assert node.metadata.labels["topology.kubernetes.io/zone"] in ("zone-a", "zone-b")
    assert nodes.metadata.resource_version


def test_list_pods_in_all_namespaces(v1: client.CoreV1Api) -> None:
    pods = v1.list_pod_for_all_namespaces(label_selector="app=log-agent")
    assert len(pods.items) == len(NODES)
    assert {p.metadata.namespace for p in pods.items} == {"kube-system"}
    on = v1.list_pod_for_all_namespaces(field_selector="spec.nodeName=worker-1")
    assert [p.spec.node_name for p in on.items] == ["worker-1"] * len(on.items)
    assert on.items


# --- create, read, patch, replace, delete ---------------------------------------------------


def test_create_read_patch_replace_delete(v1: client.CoreV1Api) -> None:
    # No scheduler takes it: nothing but this test writes the pod, so "fresh" stays fresh.
    created = v1.create_namespaced_pod(NS, pod_body("crud", scheduler="nobody"))
    assert isinstance(created, client.V1Pod)
    assert created.metadata.uid
    assert created.metadata.resource_version
    assert created.metadata.creation_timestamp is not None
    assert created.spec.containers[0].image_pull_policy == "IfNotPresent"

    read = v1.read_namespaced_pod("crud", NS)
    assert read.metadata.uid == created.metadata.uid

    strategic = v1.patch_namespaced_pod("crud", NS, {"metadata": {"labels": {"patched": "strategic"}}})
    assert strategic.metadata.labels == {"app": "crud", "patched": "strategic"}
    as_list = [{"op": "add", "path": "/metadata/annotations", "value": {"flavour": "json-patch"}}]
    json_patched = v1.patch_namespaced_pod("crud", NS, as_list)
    assert json_patched.metadata.annotations["flavour"] == "json-patch"
    merged = v1.patch_namespaced_pod(
        "crud",
        NS,
        {"metadata": {"labels": {"patched": None, "merge": "yes"}}},
        _content_type="application/merge-patch+json",
    )
    assert merged.metadata.labels == {"app": "crud", "merge": "yes"}

    stale = read  # the resourceVersion before three patches
    stale.metadata.labels = {"app": "crud", "stale": "write"}
    with pytest.raises(ApiException) as conflict:
        v1.replace_namespaced_pod("crud", NS, stale)
    assert conflict.value.status == 409
    status = status_of(conflict.value)
    assert (status["reason"], status["code"]) == ("Conflict", 409)
    assert status["message"] == (
        'Operation cannot be fulfilled on pods "crud": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )

    fresh = v1.read_namespaced_pod("crud", NS)
    fresh.metadata.labels = {**fresh.metadata.labels, "replaced": "yes"}
    replaced = v1.replace_namespaced_pod("crud", NS, fresh)
    assert replaced.metadata.labels["replaced"] == "yes"
    assert int(replaced.metadata.resource_version) > int(fresh.metadata.resource_version)

    deleted = v1.delete_namespaced_pod("crud", NS)
    assert deleted.metadata.name == "crud"
    poll(lambda: gone(v1, "crud"), what="pod crud gone")
    with pytest.raises(ApiException) as missing:
        v1.read_namespaced_pod("crud", NS)
    assert missing.value.status == 404
    assert status_of(missing.value)["message"] == 'pods "crud" not found'


def test_create_a_duplicate_is_409_already_exists(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod(NS, pod_body("twin"))
    with pytest.raises(ApiException) as duplicate:
        v1.create_namespaced_pod(NS, pod_body("twin"))
    status = status_of(duplicate.value)
    assert (duplicate.value.status, status["reason"]) == (409, "AlreadyExists")
    assert status["message"] == 'pods "twin" already exists'
    assert status["details"] == {"name": "twin", "kind": "pods"}
    v1.delete_namespaced_pod("twin", NS, grace_period_seconds=0)


def test_a_bad_quantity_is_400_and_nothing_is_created(v1: client.CoreV1Api) -> None:
    body = pod_body("badqty").to_dict()
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    with pytest.raises(ApiException) as refused:
        v1.create_namespaced_pod(NS, body)
    status = status_of(refused.value)
    assert (refused.value.status, status["reason"]) == (400, "BadRequest")
    assert status["message"].startswith('Pod in version "v1" cannot be handled as a Pod: quantities must match')
    assert gone(v1, "badqty")


# --- watch ----------------------------------------------------------------------------------


def test_watch_sees_added_modified_deleted(v1: client.CoreV1Api) -> None:
    start = v1.list_namespaced_pod(NS, label_selector="app=watched").metadata.resource_version
    v1.create_namespaced_pod(NS, pod_body("watched"))
    v1.patch_namespaced_pod("watched", NS, {"metadata": {"labels": {"seen": "yes"}}})
    v1.delete_namespaced_pod("watched", NS)

    w = watch.Watch()
    types: list[str] = []
    labelled = False
    for event in w.stream(
        v1.list_namespaced_pod, NS, label_selector="app=watched", resource_version=start, timeout_seconds=60
    ):
        pod = event["object"]
        assert isinstance(pod, client.V1Pod)
        assert pod.metadata.name == "watched"
        types.append(event["type"])
        labelled = labelled or (pod.metadata.labels or {}).get("seen") == "yes"
        if event["type"] == "DELETED":
            w.stop()
    assert types[0] == "ADDED"
    assert types[-1] == "DELETED"
    assert set(types[1:-1]) == {"MODIFIED"}
    assert labelled


def simulated_now(v1: client.CoreV1Api) -> float:
    """The server's clock as seen from outside: the newest node Lease renewal (kubelets renew
    every 10 simulated seconds, so this lags the clock by at most that)."""
    leases = client.CoordinationV1Api(v1.api_client).list_namespaced_lease("kube-node-lease")
    renewals = [lease.spec.renew_time for lease in leases.items if lease.spec.renew_time]
    assert renewals, "no node Lease renewed"
    return max(r.timestamp() for r in renewals)


def test_watch_from_a_compacted_version_is_410_then_relist(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod(NS, pod_body("churn", scheduler="nobody"))  # stays Pending: only our writes
    old = v1.list_namespaced_pod(NS, label_selector="app=churn").metadata.resource_version
    began = simulated_now(v1)
    for i in range(120):  # more than the 100 events the history always keeps
        v1.patch_namespaced_pod("churn", NS, {"metadata": {"labels": {"round": str(i)}}})
    poll(
        lambda: simulated_now(v1) > began + HISTORY_WINDOW + LEASE_RENEWAL + 5,
        timeout=60,
        what="the watch window to move past the old resourceVersion",
    )

    w = watch.Watch()
    with pytest.raises(ApiException) as expired:
        for _ in w.stream(
            v1.list_namespaced_pod, NS, label_selector="app=churn", resource_version=old, timeout_seconds=30
        ):
            pass
    assert expired.value.status == 410
    assert expired.value.reason.startswith(f"Expired: too old resource version: {old} (")

    relisted = v1.list_namespaced_pod(NS, label_selector="app=churn")
    assert relisted.items[0].metadata.labels["round"] == "119"
    v1.patch_namespaced_pod("churn", NS, {"metadata": {"labels": {"round": "after"}}})
    for event in w.stream(
        v1.list_namespaced_pod,
        NS,
        label_selector="app=churn",
        resource_version=relisted.metadata.resource_version,
        timeout_seconds=30,
    ):
        assert event["type"] == "MODIFIED"
        assert event["object"].metadata.labels["round"] == "after"
        w.stop()
    v1.delete_namespaced_pod("churn", NS, grace_period_seconds=0)


# --- subresources ---------------------------------------------------------------------------


def test_binding_with_preload_content_off(v1: client.CoreV1Api) -> None:
    v1.create_namespaced_pod(NS, pod_body("bindme", scheduler="my-scheduler"))
    binding = client.V1Binding(
        metadata=client.V1ObjectMeta(name="bindme"),
        target=client.V1ObjectReference(api_version="v1", kind="Node", name="worker-2"),
    )
    response = v1.create_namespaced_pod_binding("bindme", NS, binding, _preload_content=False)
    assert response.status == 201
    body = json.loads(response.data)
    assert (body["kind"], body["status"], body["code"]) == ("Status", "Success", 201)
    pod = v1.read_namespaced_pod("bindme", NS)
    assert pod.spec.node_name == "worker-2"
    assert {c.type: c.status for c in pod.status.conditions}["PodScheduled"] == "True"

    with pytest.raises(ApiException) as again:
        v1.create_namespaced_pod_binding("bindme", NS, binding, _preload_content=False)
    status = status_of(again.value)
    assert (again.value.status, status["reason"]) == (409, "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on pods/binding "bindme": pod bindme is already assigned to node "worker-2"'
    )
    v1.delete_namespaced_pod("bindme", NS, grace_period_seconds=0)


def test_eviction_against_a_budget_is_429_until_relaxed(v1: client.CoreV1Api, api: client.ApiClient) -> None:
    policy = client.PolicyV1Api(api)
    for name in ("guarded-0", "guarded-1"):
        v1.create_namespaced_pod(NS, pod_body(name, labels={"app": "guarded"}))
    poll(
        lambda: all(
            p.status.phase == "Running" for p in v1.list_namespaced_pod(NS, label_selector="app=guarded").items
        ),
        what="the guarded pods running",
    )
    policy.create_namespaced_pod_disruption_budget(
        NS,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "guarded"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}},
        },
    )
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="guarded-0", namespace=NS))
    with pytest.raises(ApiException) as blocked:
        v1.create_namespaced_pod_eviction("guarded-0", NS, eviction)
    status = status_of(blocked.value)
    assert (blocked.value.status, status["reason"], status["code"]) == (429, "TooManyRequests", 429)
    assert status["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert not gone(v1, "guarded-0")

    policy.patch_namespaced_pod_disruption_budget("guarded", NS, {"spec": {"minAvailable": 1}})

    def evicted() -> bool:
        try:
            v1.create_namespaced_pod_eviction("guarded-0", NS, eviction)
        except ApiException as error:
            if error.status == 429:
                return False  # the disruption controller has not caught up yet
            raise
        return True

    poll(evicted, what="the eviction to be allowed")
    poll(lambda: gone(v1, "guarded-0"), what="guarded-0 gone")
    budget = policy.read_namespaced_pod_disruption_budget("guarded", NS)
    assert budget.spec.min_available == 1
    policy.delete_namespaced_pod_disruption_budget("guarded", NS)
    v1.delete_namespaced_pod("guarded-1", NS, grace_period_seconds=0)


def test_deployment_scale_subresource(api: client.ApiClient) -> None:
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment(
        NS,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "scaled"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "scaled"}},
                "template": {
                    "metadata": {"labels": {"app": "scaled"}},
                    "spec": {"containers": [{"name": "app", "image": "registry.example.com/web:1.0"}]},
                },
            },
        },
    )
    scale = apps.read_namespaced_deployment_scale("scaled", NS)
    assert isinstance(scale, client.V1Scale)
    assert (scale.kind, scale.api_version, scale.spec.replicas) == ("Scale", "autoscaling/v1", 1)
    patched = apps.patch_namespaced_deployment_scale("scaled", NS, {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3
    assert apps.read_namespaced_deployment("scaled", NS).spec.replicas == 3
    poll(
        lambda: (
            apps.read_namespaced_deployment_scale("scaled", NS).status.replicas == 3
            and apps.read_namespaced_deployment("scaled", NS).status.ready_replicas == 3
        ),
        what="three ready replicas",
    )
    assert apps.read_namespaced_deployment_scale("scaled", NS).status.selector == "app=scaled"
    apps.delete_namespaced_deployment("scaled", NS)


# --- the asyncio client ---------------------------------------------------------------------


@pytest.mark.asyncio
async def test_asyncio_client_lists_and_watches(server: Server) -> None:
    aclient = pytest.importorskip("kubernetes.aio.client", reason="kubernetes.aio is not installed")
    aconfig = pytest.importorskip("kubernetes.aio.config", reason="kubernetes.aio is not installed")
    awatch = pytest.importorskip("kubernetes.aio.watch", reason="kubernetes.aio is not installed")
    configuration = aclient.Configuration()
    await aconfig.load_kube_config(config_file=str(server.kubeconfig), client_configuration=configuration)
    async with aclient.ApiClient(configuration) as api_client:
        v1 = aclient.CoreV1Api(api_client)
        nodes = await v1.list_node()
        assert [n.metadata.name for n in nodes.items] == NODES
        listed = await v1.list_namespaced_pod(NS, label_selector="app=aio")
        await v1.create_namespaced_pod(NS, pod_body("aio").to_dict())
        w = awatch.Watch()
        async with w:
            async for event in w.stream(
                v1.list_namespaced_pod,
                NS,
                label_selector="app=aio",
                resource_version=listed.metadata.resource_version,
                timeout_seconds=30,
            ):
                assert event["type"] == "ADDED"
                assert event["object"].metadata.name == "aio"
                w.stop()
        await v1.delete_namespaced_pod("aio", NS, grace_period_seconds=0)


# --- every served kind parses into the client's strict models --------------------------------

TEMPLATE = {
    "metadata": {"labels": {"app": "zoo"}},
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {"name": "app", "image": "registry.example.com/web:1.0", "resources": {"requests": {"cpu": "10m"}}}
        ],
    },
}
ALWAYS = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Always"}}
SELECTOR = {"matchLabels": {"app": "zoo"}}


def raw(server: Server, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """One request without the client's models: (Content-Type, decoded JSON body)."""
    headers = {"Accept": "application/json"}
    if server.token is not None:
        headers["Authorization"] = f"Bearer {server.token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(server.url + path, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30, context=server.ssl_context()) as response:
        return str(response.headers["Content-Type"]), json.loads(response.read())


ZOO = [
    (
        "/apis/apps/v1/namespaces/default/statefulsets",
        {"metadata": {"name": "zoo-sts"}, "spec": {"serviceName": "zoo", "selector": SELECTOR, "template": ALWAYS}},
    ),
    (
        "/apis/apps/v1/namespaces/default/deployments",
        {"metadata": {"name": "zoo-deploy"}, "spec": {"selector": SELECTOR, "template": ALWAYS}},
    ),
    ("/apis/batch/v1/namespaces/default/jobs", {"metadata": {"name": "zoo-job"}, "spec": {"template": TEMPLATE}}),
    (
        "/apis/batch/v1/namespaces/default/cronjobs",
        {
            "metadata": {"name": "zoo-cron"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}},
        },
    ),
    ("/api/v1/namespaces", {"metadata": {"name": "zoo"}}),
    (
        "/api/v1/namespaces/default/services",
        {"metadata": {"name": "zoo"}, "spec": {"selector": {"app": "zoo"}, "ports": [{"port": 80}]}},
    ),
    (
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {"metadata": {"name": "zoo"}, "spec": {"maxUnavailable": 1, "selector": SELECTOR}},
    ),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", {"metadata": {"name": "zoo-high"}, "value": 1000}),
]


@pytest.fixture(scope="module")
def zoo(server: Server) -> None:
    """One object of every kind users create (posted as plain JSON, so that one kind the models
    refuse does not hide the others), left for the conformance lists below."""
    for path, body in ZOO:
        raw(server, "POST", path, body)

    def some_zoo_pods() -> bool:
        return bool(raw(server, "GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dzoo")[1]["items"])

    poll(some_zoo_pods, what="the zoo's pods")


@pytest.mark.parametrize(
    ("path", "model"),
    [
        pytest.param("/api/v1/nodes", "V1NodeList", id="nodes"),
        pytest.param("/api/v1/pods", "V1PodList", id="pods"),
        pytest.param("/api/v1/events", "CoreV1EventList", id="events"),
        pytest.param("/api/v1/namespaces", "V1NamespaceList", id="namespaces"),
        pytest.param("/api/v1/services", "V1ServiceList", id="services"),
        pytest.param("/apis/apps/v1/deployments", "V1DeploymentList", id="deployments"),
        pytest.param("/apis/apps/v1/replicasets", "V1ReplicaSetList", id="replicasets"),
        pytest.param("/apis/apps/v1/statefulsets", "V1StatefulSetList", id="statefulsets"),
        pytest.param("/apis/apps/v1/daemonsets", "V1DaemonSetList", id="daemonsets"),
        pytest.param("/apis/batch/v1/jobs", "V1JobList", id="jobs"),
        pytest.param("/apis/batch/v1/cronjobs", "V1CronJobList", id="cronjobs"),
        pytest.param("/apis/coordination.k8s.io/v1/leases", "V1LeaseList", id="leases"),
        pytest.param("/apis/policy/v1/poddisruptionbudgets", "V1PodDisruptionBudgetList", id="pdbs"),
        pytest.param("/apis/scheduling.k8s.io/v1/priorityclasses", "V1PriorityClassList", id="priorityclasses"),
    ],
)
def test_every_served_list_parses_into_the_client_models(
    server: Server, api: client.ApiClient, zoo: None, path: str, model: str
) -> None:
    content_type, listed = raw(server, "GET", path)
    assert content_type.startswith("application/json")
    assert listed["kind"] == model.removeprefix("CoreV1").removeprefix("V1")
    assert listed["items"], f"nothing to parse at {path}"
    parsed = api.deserialize(json.dumps(listed), model, "application/json")
    assert len(parsed.items) == len(listed["items"])


def test_a_request_without_the_token_is_403(server: Server) -> None:
    """Anonymous (no token): upstream's RBAC answers 403 for system:anonymous (was 401)."""
    if server.token is None:
        pytest.skip("served with --token none")
    configuration = client.Configuration(host=server.url)
    configuration.ssl_ca_cert = str(server.ca_file())
    with client.ApiClient(configuration) as anonymous, pytest.raises(ApiException) as refused:
        client.CoreV1Api(anonymous).list_node()
    status = status_of(refused.value)
    assert (refused.value.status, status["reason"], status["code"]) == (403, "Forbidden", 403)
    assert status["message"] == (
        'nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope'
    )
