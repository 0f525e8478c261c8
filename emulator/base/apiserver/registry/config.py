"""ConfigMaps and Secrets (upstream ``pkg/registry/core/configmap`` and ``.../secret``): no
status, no generation; upstream's update rules (``ValidateConfigMapUpdate``,
``ValidateSecretUpdate``: immutable data, a Secret's type). A Secret's ``stringData`` is merged
into ``data`` before it is stored (upstream does it in the v1 conversion)."""

from __future__ import annotations

from typing import Any

from emulator.base.api.config import (
    config_map_update_problems,
    merge_string_data,
    secret_update_problems,
)
from emulator.base.api.errors import Invalid
from emulator.base.api.validation import validate_update
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = ["ConfigMapStrategy", "SecretStrategy"]


class ConfigMapStrategy(Strategy):
    kind = "ConfigMap"

    def validate_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)
        if problem := next(config_map_update_problems(current, candidate), None):
            raise Invalid.at(self.kind, candidate.metadata.name, *problem)


class SecretStrategy(Strategy):
    kind = "Secret"
    fields = {"type": lambda secret: secret.type}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        return merge_string_data(obj)

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return merge_string_data(candidate)

    def validate_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)
        if problem := next(secret_update_problems(current, candidate), None):
            raise Invalid.at(self.kind, candidate.metadata.name, *problem)
