"""Containers referencing missing ConfigMaps/Secrets, as upstream's kubelet handles them:
``makeEnvironmentVariables`` (``pkg/kubelet/kubelet_pods.go``) fails the container config
(``CreateContainerConfigError``, retried at the pod worker's ``wait.Jitter(backOffPeriod, 0.5)``,
``pkg/kubelet/pod_workers.go``), and a missing ConfigMap/Secret volume fails ``SetUp``
(``pkg/volume/configmap``, ``pkg/volume/secret``: ``FailedMount``, retried on
``pkg/util/goroutinemap/exponentialbackoff``'s 0.5 s doubling cadence)."""

from __future__ import annotations

import base64

import pytest

from emulator.base.api.codec import convert
from emulator.base.api.config import ConfigMap, Secret
from emulator.base.api.core import Event, Pod
from emulator.base.api.meta import ObjectMeta
from tests.kubelet.test_kubelet import NODE, PULLING, world


def _pod(name: str, container: dict[str, object], **spec: object) -> Pod:
    return convert(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "nginx:1.27", **container}], **spec},
        },
        Pod,
    )


def _waiting(pod: Pod) -> list[tuple[str, str]]:
    return [
        (cs.state.waiting.reason, cs.state.waiting.message)
        for cs in pod.status.container_statuses
        if cs.state.waiting is not None
    ]


def _events(w: object, reason: str) -> list[tuple[float, str]]:
    return [
        (r.time, r.new.message)
        for r in w.cluster.writes  # type: ignore[attr-defined]
        if r.kind == "Event" and r.verb == "create" and isinstance(r.new, Event) and r.new.reason == reason
    ]


def _cm(name: str, **data: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace="default"), data=data)


@pytest.mark.parametrize(
    ("container", "message"),
    [
        pytest.param(
            {"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "a"}}}]},
            'configmap "cfg" not found',
            id="configMapKeyRef-missing-object",
        ),
        pytest.param(
            {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "pw", "key": "a"}}}]},
            'secret "pw" not found',
            id="secretKeyRef-missing-object",
        ),
        pytest.param(
            {"envFrom": [{"configMapRef": {"name": "cfg"}}]},
            'configmap "cfg" not found',
            id="envFrom-configMapRef",
        ),
        pytest.param(
            {"envFrom": [{"secretRef": {"name": "pw"}}]},
            'secret "pw" not found',
            id="envFrom-secretRef",
        ),
    ],
)
@pytest.mark.asyncio
async def test_a_missing_env_source_is_create_container_config_error_until_it_exists(
    container: dict[str, object], message: str
) -> None:
    async with world(PULLING, seed=3) as w:
        w.server.create(_pod("web", container))
        await w.at(20)
        pod = w.pod("web")
        assert pod.status.phase == "Pending"
        assert _waiting(pod) == [("CreateContainerConfigError", message)]
        fails = _events(w, "Failed")
        assert fails[0][1] == f"Error: {message}"
        assert fails[0][0] == 5.0  # after the 5 s pull, as upstream builds the config after pulling
        w.server.create(_cm("cfg", a="1"))
        w.server.create(Secret(metadata=ObjectMeta(name="pw", namespace="default"), data={"a": "MQ=="}))
        await w.at(60)
        assert w.pod("web").status.phase == "Running"
        started = w.when("web", "Running")
        assert 20 < started <= 20 + 15 + 1  # the next try (10-15 s after the last) then the 1 s start


@pytest.mark.asyncio
async def test_a_missing_key_names_the_namespace_and_object() -> None:
    async with world(PULLING) as w:
        w.server.create(_cm("cfg", other="1"))
        ref = {"configMapKeyRef": {"name": "cfg", "key": "a"}}
        w.server.create(_pod("web", {"env": [{"name": "A", "valueFrom": ref}]}))
        await w.at(8)
        missing = "couldn't find key a in ConfigMap default/cfg"
        assert _waiting(w.pod("web")) == [("CreateContainerConfigError", missing)]


@pytest.mark.asyncio
async def test_optional_references_do_not_wait() -> None:
    async with world(PULLING) as w:
        container = {
            "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "pw", "key": "a", "optional": True}}}],
            "envFrom": [{"configMapRef": {"name": "cfg", "optional": True}}],
        }
        volumes = [{"name": "v", "configMap": {"name": "cfg", "optional": True}}]
        w.server.create(_pod("web", container, volumes=volumes))
        await w.at(10)
        assert w.when("web", "Running") == 6.0  # as a pod without references
        assert _events(w, "Failed") == _events(w, "FailedMount") == []


@pytest.mark.asyncio
async def test_a_missing_volume_source_keeps_the_pod_container_creating() -> None:
    async with world(PULLING) as w:
        volumes = [{"name": "config", "configMap": {"name": "cfg"}}]
        w.server.create(_pod("web", {}, volumes=volumes))
        await w.at(4)
        pod = w.pod("web")
        assert pod.status.phase == "Pending"
        assert _waiting(pod) == [("ContainerCreating", "")]
        mounts = _events(w, "FailedMount")
        assert mounts[0] == (0.0, 'MountVolume.SetUp failed for volume "config" : configmap "cfg" not found')
        assert [t for t, _ in mounts] == [0.0, 0.5, 1.5, 3.5]  # 0.5 s doubling
        w.server.create(_cm("cfg", a="1"))
        await w.at(30)
        # the next try at 7.5 s mounts; then the 5 s pull and the 1 s start
        assert w.when("web", "Running") == 13.5


@pytest.mark.asyncio
async def test_a_secret_volume_item_key_missing() -> None:
    async with world(PULLING) as w:
        w.server.create(
            Secret(metadata=ObjectMeta(name="tls", namespace="default"), data={"a": base64.b64encode(b"x").decode()})
        )
        volumes = [{"name": "certs", "secret": {"secretName": "tls", "items": [{"key": "tls.crt", "path": "c"}]}}]
        w.server.create(_pod("web", {}, volumes=volumes))
        await w.at(1)
        assert _events(w, "FailedMount")[0][1] == (
            'MountVolume.SetUp failed for volume "certs" : secret references non-existent secret key: tls.crt'
        )


@pytest.mark.asyncio
async def test_a_pod_without_references_reads_nothing() -> None:
    async with world(PULLING) as w:
        w.server.create(_pod("web", {"env": [{"name": "A", "value": "1"}]}))
        await w.at(10)
        assert w.when("web", "Running") == 6.0
        assert w.kubelet._refs.mount_failures == w.kubelet._refs.config_errors == 0
