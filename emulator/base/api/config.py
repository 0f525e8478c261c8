"""core/v1 ConfigMap and Secret, and their validation (upstream ``pkg/apis/core/validation``
``ValidateConfigMap``/``ValidateConfigMapUpdate``, ``ValidateSecret``/``ValidateSecretUpdate``).

A Secret's ``data`` values are kept as they travel, base64 text; its ``stringData`` is merged
into ``data`` on write (upstream's v1 conversion, ``Convert_v1_Secret_To_core_Secret``) and never
stored. Sizes are counted in decoded bytes, as upstream counts the ``[]byte`` values.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from typing import Final

from msgspec.structs import replace

from emulator.base.api.labels import config_key_errors, go_quote
from emulator.base.api.meta import K8s, ObjectMeta

__all__ = [
    "MAX_SECRET_SIZE",
    "ConfigMap",
    "ConfigMapEnvSource",
    "ConfigMapVolumeSource",
    "EnvFromSource",
    "EnvVar",
    "EnvVarSource",
    "KeySelector",
    "KeyToPath",
    "Secret",
    "SecretEnvSource",
    "SecretVolumeSource",
    "config_map_problems",
    "config_map_update_problems",
    "merge_string_data",
    "secret_data_text",
    "secret_problems",
    "secret_update_problems",
]

MAX_SECRET_SIZE: Final = 1 * 1024 * 1024
"""Upstream ``core.MaxSecretSize``: the bound on a Secret's and a ConfigMap's total data."""

_TOO_LONG: Final = f"Too long: may not be more than {MAX_SECRET_SIZE} bytes"
_IMMUTABLE: Final = "Forbidden: field is immutable when `immutable` is set"
_REDACTED: Final = "<secret contents redacted>"

Problem = tuple[str, str]


class ConfigMap(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "ConfigMap"
    metadata: ObjectMeta = ObjectMeta()
    immutable: bool | None = None
    data: dict[str, str] = {}
    binary_data: dict[str, str] = {}


class Secret(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "Secret"
    metadata: ObjectMeta = ObjectMeta()
    immutable: bool | None = None
    data: dict[str, str] = {}
    string_data: dict[str, str] = {}
    type: str = ""


# --- what a pod reads of them (the kubelet acts on these: ``agents/kubelet/configrefs.py``) --


class KeySelector(K8s, frozen=True):
    """``ConfigMapKeySelector`` / ``SecretKeySelector``."""

    key: str = ""
    name: str = ""
    optional: bool | None = None


class EnvVarSource(K8s, frozen=True):
    """The modelled sources of an env var's value (``fieldRef`` and others: kept by the HTTP
    door as unmodelled fields)."""

    config_map_key_ref: KeySelector | None = None
    secret_key_ref: KeySelector | None = None


class EnvVar(K8s, frozen=True):
    name: str = ""
    value: str = ""
    value_from: EnvVarSource | None = None


class ConfigMapEnvSource(K8s, frozen=True):
    name: str = ""
    optional: bool | None = None


class SecretEnvSource(K8s, frozen=True):
    name: str = ""
    optional: bool | None = None


class EnvFromSource(K8s, frozen=True):
    prefix: str = ""
    config_map_ref: ConfigMapEnvSource | None = None
    secret_ref: SecretEnvSource | None = None


class KeyToPath(K8s, frozen=True):
    key: str = ""
    path: str = ""


class ConfigMapVolumeSource(K8s, frozen=True):
    name: str = ""
    items: list[KeyToPath] = []
    optional: bool | None = None


class SecretVolumeSource(K8s, frozen=True):
    secret_name: str = ""
    items: list[KeyToPath] = []
    optional: bool | None = None


def _decoded(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def secret_data_text(secret: Secret, key: str) -> str:
    """The decoded value of ``data[key]`` as text (what an env var would receive)."""
    raw = _decoded(secret.data.get(key, "")) or b""
    return raw.decode(errors="replace")


def merge_string_data(secret: Secret) -> Secret:
    """``stringData`` written into ``data`` (base64, overriding equal keys) and dropped; the
    type defaulted to ``Opaque`` (``SetDefaults_Secret``)."""
    if not secret.string_data and secret.type:
        return secret
    data = dict(secret.data)
    for key, value in secret.string_data.items():
        data[key] = base64.b64encode(value.encode()).decode()
    return replace(secret, data=data, string_data={}, type=secret.type or "Opaque")


def _key_problems(field: str, data: Mapping[str, str], other: Mapping[str, str], other_field: str) -> Iterator[Problem]:
    for key in data:
        for msg in config_key_errors(key):
            yield f"{field}[{key}]", f"Invalid value: {go_quote(key)}: {msg}"
        if key in other:
            yield f"{field}[{key}]", f"Invalid value: {go_quote(key)}: duplicate of key present in {other_field}"


def config_map_problems(cm: ConfigMap) -> Iterator[Problem]:
    """``ValidateConfigMap`` (metadata aside): keys, a key in both maps, total size."""
    yield from _key_problems("data", cm.data, cm.binary_data, "binaryData")
    yield from _key_problems("binaryData", cm.binary_data, cm.data, "data")
    size = sum(len(v.encode()) for v in cm.data.values())
    for key, value in cm.binary_data.items():
        raw = _decoded(value)
        if raw is None:
            yield f"binaryData[{key}]", "Invalid value: illegal base64 data"
            return
        size += len(raw)
    if size > MAX_SECRET_SIZE:
        # upstream: field.TooLong(field.NewPath(""), ...): the whole object, printed "[]"
        yield "[]", _TOO_LONG


def _secret_type_problems(secret: Secret, data: Mapping[str, bytes]) -> Iterator[Problem]:
    kind = secret.type
    if kind == "kubernetes.io/service-account-token":
        if not secret.metadata.annotations.get("kubernetes.io/service-account.name"):
            yield "metadata.annotations[kubernetes.io/service-account.name]", "Required value"
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            yield f"data[{key}]", "Required value"
            return
        try:
            json.loads(data[key])
        except ValueError as err:
            yield f"data[{key}]", f'Invalid value: "{_REDACTED}": {err}'
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            yield "data[username]", "Required value"
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            yield "data[ssh-privatekey]", "Required value"
    elif kind == "kubernetes.io/tls":
        for key in ("tls.crt", "tls.key"):
            if key not in data:
                yield f"data[{key}]", "Required value"


def secret_problems(secret: Secret) -> Iterator[Problem]:
    """``ValidateSecret`` (metadata aside) of a Secret whose ``stringData`` is merged."""
    yield from _key_problems("data", secret.data, {}, "")
    data: dict[str, bytes] = {}
    for key, value in secret.data.items():
        raw = _decoded(value)
        if raw is None:
            yield f"data[{key}]", "Invalid value: illegal base64 data"
            return
        data[key] = raw
    if sum(len(v) for v in data.values()) > MAX_SECRET_SIZE:
        yield "data", _TOO_LONG
    yield from _secret_type_problems(secret, data)


def config_map_update_problems(current: ConfigMap, candidate: ConfigMap) -> Iterator[Problem]:
    """``ValidateConfigMapUpdate``: an immutable ConfigMap stays immutable and keeps its data."""
    if current.immutable:
        if not candidate.immutable:
            yield "immutable", _IMMUTABLE
        if candidate.data != current.data:
            yield "data", _IMMUTABLE
        if candidate.binary_data != current.binary_data:
            yield "binaryData", _IMMUTABLE


def secret_update_problems(current: Secret, candidate: Secret) -> Iterator[Problem]:
    """``ValidateSecretUpdate``: the type never changes; an immutable Secret keeps its data."""
    if candidate.type != current.type:
        yield "type", f"Invalid value: {go_quote(candidate.type)}: field is immutable"
    if current.immutable:
        if not candidate.immutable:
            yield "immutable", _IMMUTABLE
        if candidate.data != current.data:
            yield "data", _IMMUTABLE
