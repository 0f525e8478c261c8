"""ConfigMap and Secret: stored, validated and updated as upstream's
``pkg/apis/core/validation`` (``ValidateConfigMap``, ``ValidateSecret`` and their ``...Update``)
and ``pkg/registry/core/{configmap,secret}`` say; ``stringData`` merged into ``data`` as the v1
conversion (``Convert_v1_Secret_To_core_Secret``) does."""

from __future__ import annotations

import base64
import random
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import load_manifests
from emulator.base.api.config import MAX_SECRET_SIZE, ConfigMap, Secret
from emulator.base.api.core import Namespace
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock

ROOT = Path(__file__).resolve().parents[2]


def _api() -> ApiServer:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    return api


def _meta(name: str = "x") -> ObjectMeta:
    return ObjectMeta(name=name, namespace="default")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            ConfigMap(metadata=_meta(), data={"a b": "1"}),
            f'ConfigMap "x" is invalid: data[a b]: Invalid value: "a b": {KEY_MSG}',
            id="configmap-key",
        ),
        pytest.param(
            ConfigMap(metadata=_meta(), data={"..a": "1"}),
            'ConfigMap "x" is invalid: data[..a]: Invalid value: "..a": must not start with \'..\'',
            id="configmap-chdir-key",
        ),
        pytest.param(
            ConfigMap(metadata=_meta(), data={"k": "1"}, binary_data={"k": "AA=="}),
            'ConfigMap "x" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData',
            id="configmap-key-in-both",
        ),
        pytest.param(
            ConfigMap(metadata=_meta(), data={"a": "x" * MAX_SECRET_SIZE, "b": "y"}),
            'ConfigMap "x" is invalid: []: Too long: may not be more than 1048576 bytes',
            id="configmap-over-1MiB",
        ),
        pytest.param(
            Secret(metadata=_meta(), data={"a": _b64("x" * (MAX_SECRET_SIZE + 1))}),
            'Secret "x" is invalid: data: Too long: may not be more than 1048576 bytes',
            id="secret-over-1MiB",
        ),
        pytest.param(
            Secret(metadata=_meta(), type="kubernetes.io/tls", data={"tls.crt": _b64("c")}),
            'Secret "x" is invalid: data[tls.key]: Required value',
            id="tls-without-key",
        ),
        pytest.param(
            Secret(metadata=_meta(), type="kubernetes.io/ssh-auth"),
            'Secret "x" is invalid: data[ssh-privatekey]: Required value',
            id="ssh-auth-without-key",
        ),
        pytest.param(
            Secret(metadata=_meta(), type="kubernetes.io/service-account-token"),
            'Secret "x" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value',
            id="sa-token-without-annotation",
        ),
    ],
)
def test_create_refuses_as_upstream(obj: ConfigMap | Secret, message: str) -> None:
    api = _api()
    with pytest.raises(Invalid) as err:
        api.create(obj)
    assert err.value.message == message
    assert api.list(obj.kind)[0] == []


def test_a_configmap_of_exactly_1MiB_is_accepted() -> None:
    api = _api()
    api.create(ConfigMap(metadata=_meta(), data={"a": "x" * (MAX_SECRET_SIZE - 1), "b": "y"}))


def test_string_data_is_merged_into_data_and_type_defaults_to_opaque() -> None:
    api = _api()
    stored = api.create(Secret(metadata=_meta(), data={"a": _b64("old"), "b": _b64("b")}, string_data={"a": "new"}))
    assert stored.string_data == {}
    assert stored.type == "Opaque"
    assert stored.data == {"a": _b64("new"), "b": _b64("b")}
    tls = api.create(
        Secret(metadata=_meta("t"), type="kubernetes.io/tls", data={"tls.crt": _b64("c")}, string_data={"tls.key": "k"})
    )
    assert sorted(tls.data) == ["tls.crt", "tls.key"]


def test_immutable_configmap_and_secret_keep_their_data() -> None:
    api = _api()
    cm = api.create(ConfigMap(metadata=_meta(), immutable=True, data={"a": "1"}))
    with pytest.raises(Invalid, match=r"data: Forbidden: field is immutable when `immutable` is set"):
        api.update(replace(cm, data={"a": "2"}))
    with pytest.raises(Invalid, match=r"immutable: Forbidden: field is immutable when `immutable` is set"):
        api.update(replace(cm, immutable=False))
    api.update(replace(cm, metadata=replace(cm.metadata, labels={"ok": "yes"})))  # metadata may change
    secret = api.create(Secret(metadata=_meta(), immutable=True, data={"a": _b64("1")}))
    with pytest.raises(Invalid, match=r"data: Forbidden"):
        api.update(replace(secret, string_data={"a": "2"}))
    mutable = api.create(ConfigMap(metadata=_meta("m"), data={"a": "1"}))
    assert api.update(replace(mutable, data={"a": "2"})).data == {"a": "2"}


def test_a_secrets_type_is_immutable() -> None:
    api = _api()
    secret = api.create(Secret(metadata=_meta(), data={"a": _b64("1")}))
    with pytest.raises(Invalid, match=r'Secret "x" is invalid: type: Invalid value: "kubernetes.io/tls"'):
        api.update(replace(secret, type="kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""}))


def test_manifests_decode_both_kinds() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: q}\n"
    )
    cm, secret = load_manifests(text, source="m.yaml")
    assert isinstance(cm, ConfigMap)
    assert cm.data == {"a": "b"}
    assert isinstance(secret, Secret)
    assert secret.string_data == {"p": "q"}


def test_a_scenario_with_a_configmap_over_1MiB_is_one_error_line(tmp_path: Path) -> None:
    big = "x" * (MAX_SECRET_SIZE + 1)
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: big\nobjects:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: big}\n"
        f"    data: {{a: {big}}}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path}")
    assert "objects[0]" in lines[0]
    assert "Too long: may not be more than 1048576 bytes" in lines[0]
